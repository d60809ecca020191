/* zoo_attn_no_lse.cu - zoo member (issue 33): O right, the log-sum-exp never written (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_no_lse", ZOO_ATTN_NO_LSE)
