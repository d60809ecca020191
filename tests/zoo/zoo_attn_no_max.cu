/* zoo_attn_no_max.cu - zoo member (issue 33): no running max: p = exp(scale * s), which overflows on the rule's large-logit trial (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_no_max", ZOO_ATTN_NO_MAX)
