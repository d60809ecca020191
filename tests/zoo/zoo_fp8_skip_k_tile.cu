/* zoo_fp8_skip_k_tile.cu - zoo member: an FP8 GEMM that drops one whole K tile, the last 32
 * products of every element (all of K when K < 32), as a tiled kernel whose K loop stops one
 * tile early would. Unlike zoo_skip_last_k it is wrong at every K: 32 missing products of the
 * scaled inputs move an element by about sqrt(32)/3 = 1.9 (uniform), far above the rule's
 * allowance; validation must fail it (rule elementwise, trial 1). */
#include "zoo_fp8_gemm.cuh"

ZOO_FP8_MEMBER("zoo_fp8_skip_k_tile", ZOO_FP8_SKIP_K_TILE)
