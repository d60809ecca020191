/* zoo_attn_ok.cu - zoo member (issue 33): the plain correct attention forward: the control, which must pass wherever the others are caught (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_ok", ZOO_ATTN_CORRECT)
