/* zoo_attn_gqa_mod.cu - zoo member (issue 33): query head h reads K/V head h % heads_kv instead of h / (heads / heads_kv) (zoo_attn.cuh; README.md says what the
 * harness must report). */
#include "zoo_attn.cuh"

ZOO_ATTN_MEMBER("zoo_attn_gqa_mod", ZOO_ATTN_GQA_MOD)
