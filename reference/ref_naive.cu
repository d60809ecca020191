/* ref_naive.cu - the independent reference: a plain shared-memory tiled GEMM with FP64
 * accumulation, general layouts, alpha/beta, batch. Written for obviousness, not speed; no
 * code shared with cuBLASLt or with any variant. */
#include "ref.h"
#include <cuda_bf16.h>
#include <stdio.h>

namespace {

constexpr int T = 16;

__device__ __forceinline__ float ld_bf16(const __nv_bfloat16 *p, int col_layout, int64_t ld,
                                         int64_t i, int64_t j)
{
    return __bfloat162float(p[col_layout ? j * ld + i : i * ld + j]);
}

__global__ void naive_gemm(const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                           const __nv_bfloat16 *C, float *D, int64_t m, int64_t n, int64_t k,
                           int a_col, int b_col, int c_col, int64_t lda, int64_t ldb,
                           int64_t ldc, int64_t sa, int64_t sb, int64_t sc, double alpha,
                           double beta)
{
    __shared__ double As[T][T + 1], Bs[T][T + 1];
    int64_t bz = blockIdx.z;
    A += bz * sa; B += bz * sb;
    if (C) C += bz * sc;
    D += bz * m * n;
    int64_t i = (int64_t)blockIdx.y * T + threadIdx.y;
    int64_t j = (int64_t)blockIdx.x * T + threadIdx.x;
    double acc = 0.0;
    for (int64_t k0 = 0; k0 < k; k0 += T) {
        int64_t ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (i < m && ka < k) ? ld_bf16(A, a_col, lda, i, ka) : 0.0;
        Bs[threadIdx.y][threadIdx.x] = (kb < k && j < n) ? ld_bf16(B, b_col, ldb, kb, j) : 0.0;
        __syncthreads();
        for (int t = 0; t < T; t++) acc += As[threadIdx.y][t] * Bs[t][threadIdx.x];
        __syncthreads();
    }
    if (i < m && j < n) {
        double v = alpha * acc;
        if (beta != 0.0) v += beta * (double)ld_bf16(C, c_col, ldc, i, j);
        D[i * n + j] = (float)v;
    }
}

} // namespace

extern "C" int tb_ref_gemm_naive(const tb_gemm *g, const void *a, const void *b, const void *c,
                                 float *d_ref, cudaStream_t s, char *msg, size_t len)
{
    if (g->batch > 65535) {
        snprintf(msg, len, "naive reference: batch %lld over 65535", (long long)g->batch);
        return 1;
    }
    dim3 block(T, T);
    dim3 grid((unsigned)((g->n + T - 1) / T), (unsigned)((g->m + T - 1) / T), (unsigned)g->batch);
    naive_gemm<<<grid, block, 0, s>>>((const __nv_bfloat16 *)a, (const __nv_bfloat16 *)b,
        g->beta != 0.0 ? (const __nv_bfloat16 *)c : nullptr, d_ref, g->m, g->n, g->k,
        g->a_layout == TB_LAYOUT_COL, g->b_layout == TB_LAYOUT_COL, g->c_layout == TB_LAYOUT_COL,
        g->lda, g->ldb, g->ldc, g->stride_a, g->stride_b, g->stride_c, g->alpha, g->beta);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(msg, len, "naive reference launch failed: %s", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
