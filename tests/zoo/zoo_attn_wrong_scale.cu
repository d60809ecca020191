/* zoo_attn_wrong_scale.cu - zoo member (issue 33): 1 / head_dim instead of the problem's softmax scale (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_wrong_scale", ZOO_ATTN_WRONG_SCALE)
