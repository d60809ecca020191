/* zoo_fp8_ok.cu - zoo member: the plain correct FP8 GEMM (zoo_fp8_gemm.cuh), the control
 * beside the FP8 members that break the rule: it must pass wherever they are caught. */
#include "zoo_fp8_gemm.cuh"

ZOO_FP8_MEMBER("zoo_fp8_ok", ZOO_FP8_CORRECT)
