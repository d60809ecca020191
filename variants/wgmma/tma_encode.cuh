/* tma_encode.cuh - cuTensorMapEncodeTiled, found at run time in the driver the CUDA runtime
 * already loaded (libcuda is not linked), for every family that builds tensor maps: the wgmma
 * GEMM families (wgmma_host.cuh) and attn_hopper. Owns g_encode and find_encode(); static to
 * each translation unit (an anonymous namespace), as the families' other host code is.
 */
#ifndef TB_VARIANTS_WGMMA_TMA_ENCODE_CUH
#define TB_VARIANTS_WGMMA_TMA_ENCODE_CUH

#include <cuda.h>           /* CUtensorMap and its enums: types only */
#include <cudaTypedefs.h>   /* PFN_cuTensorMapEncodeTiled */
#include <cuda_runtime.h>
#include <stdio.h>

namespace {

PFN_cuTensorMapEncodeTiled_v12000 g_encode;

/* Find cuTensorMapEncodeTiled in the driver the runtime already loaded: 0, or 1 with msg. */
int find_encode(char *msg, size_t len)
{
    if (g_encode) return 0;
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                           cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        snprintf(msg, len, "cuTensorMapEncodeTiled not found in the driver: %s",
                 cudaGetErrorString(e));
        return 1;
    }
    g_encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    return 0;
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_TMA_ENCODE_CUH */
