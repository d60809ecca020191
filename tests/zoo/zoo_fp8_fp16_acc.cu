/* zoo_fp8_fp16_acc.cu - zoo member: an FP8 GEMM that keeps its running sum in FP16 (11
 * significant bits, one rounding per product: __hfma) instead of FP32, as an FP8 kernel with
 * an FP16 accumulator would. The products are exact; the sum's rounding error grows as
 * 2^-11 * |partial sum| per step, past the rule's allowance on some elements from K = 512 on
 * (docs/method.md, "FP8 problems"); validation must fail it (rule elementwise, trial 1). */
#include "zoo_fp8_gemm.cuh"

ZOO_FP8_MEMBER("zoo_fp8_fp16_acc", ZOO_FP8_FP16_ACC)
