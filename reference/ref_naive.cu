/* ref_naive.cu - the independent reference: a plain shared-memory tiled GEMM with FP64
 * accumulation, general layouts, alpha/beta, batch. Written for obviousness first, no code
 * shared with cuBLASLt or with any variant. Each block computes a 64x64 tile of D, each of
 * its 16x16 threads a 4x4 grid of outputs (rows ty + 16r, columns tx + 16c), summing over k
 * in order with one FMA per term, so each output is the same FP64 sum it was when a thread
 * computed one output (16x16 tiles): the register blocking only cuts shared-memory traffic
 * from two loads per FMA to half a load. It validates the cuBLASLt-family variants, three
 * trials a measurement: at 16384^3 the one-output-per-thread kernel took seconds a trial,
 * most of the default sweep's validation time (docs/perf.md, ninth session). E4M3 operands
 * (FP8 problems) are decoded to the exact values they stand for, scale * decode(bits), in
 * double, and summed the same way (naive_gemm<T>, one instantiation per operand type). */
#include "ref.h"
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdio.h>

namespace {

constexpr int BM = 64, BN = 64, BK = 16, TD = 16, R = BM / TD;   /* 16x16 threads, 4x4 each */

__device__ __forceinline__ float ld_bf16(const __nv_bfloat16 *p, int col_layout, int64_t ld,
                                         int64_t i, int64_t j)
{
    return __bfloat162float(p[col_layout ? j * ld + i : i * ld + j]);
}

/* An operand's element as the exact value it stands for: a BF16 one as it is, an E4M3 one
 * decoded (exact in float: 4 significant bits) times its scale, in double. */
__device__ __forceinline__ double ld_val(const __nv_bfloat16 *p, int col, int64_t ld, int64_t i,
                                         int64_t j, double scale)
{
    (void)scale;
    return (double)ld_bf16(p, col, ld, i, j);
}

__device__ __forceinline__ double ld_val(const __nv_fp8_e4m3 *p, int col, int64_t ld, int64_t i,
                                         int64_t j, double scale)
{
    return (double)(float)p[col ? j * ld + i : i * ld + j] * scale;
}

template <typename T>
__global__ void __launch_bounds__(TD * TD)
naive_gemm(const T *A, const T *B, const __nv_bfloat16 *C, float *D,
           int64_t m, int64_t n, int64_t k, int a_col, int b_col, int c_col, int64_t lda,
           int64_t ldb, int64_t ldc, int64_t sa, int64_t sb, int64_t sc, double alpha,
           double beta, double scale_a, double scale_b)
{
    __shared__ double As[BK][BM], Bs[BK][BN];
    const int64_t bz = blockIdx.z;
    A += bz * sa; B += bz * sb;
    if (C) C += bz * sc;
    D += bz * m * n;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TD + tx;
    const int64_t i0 = (int64_t)blockIdx.y * BM, j0 = (int64_t)blockIdx.x * BN;
    double acc[R][R];
    for (int r = 0; r < R; r++)
        for (int c = 0; c < R; c++) acc[r][c] = 0.0;
    for (int64_t k0 = 0; k0 < k; k0 += BK) {
        for (int e = tid; e < BM * BK; e += TD * TD) {   /* A's 64x16 tile, k fastest */
            const int r = e / BK, kk = e % BK;
            const int64_t gi = i0 + r, gk = k0 + kk;
            As[kk][r] = (gi < m && gk < k) ? ld_val(A, a_col, lda, gi, gk, scale_a) : 0.0;
        }
        for (int e = tid; e < BK * BN; e += TD * TD) {   /* B's 16x64 tile, n fastest */
            const int kk = e / BN, c = e % BN;
            const int64_t gk = k0 + kk, gj = j0 + c;
            Bs[kk][c] = (gk < k && gj < n) ? ld_val(B, b_col, ldb, gk, gj, scale_b) : 0.0;
        }
        __syncthreads();
        for (int kk = 0; kk < BK; kk++) {
            double a[R], b[R];
            for (int r = 0; r < R; r++) a[r] = As[kk][ty + TD * r];
            for (int c = 0; c < R; c++) b[c] = Bs[kk][tx + TD * c];
            for (int r = 0; r < R; r++)
                for (int c = 0; c < R; c++) acc[r][c] = fma(a[r], b[c], acc[r][c]);
        }
        __syncthreads();
    }
    for (int r = 0; r < R; r++)
        for (int c = 0; c < R; c++) {
            const int64_t i = i0 + ty + TD * r, j = j0 + tx + TD * c;
            if (i >= m || j >= n) continue;
            double v = alpha * acc[r][c];
            if (beta != 0.0) v += beta * (double)ld_bf16(C, c_col, ldc, i, j);
            D[i * n + j] = (float)v;
        }
}

} // namespace

extern "C" int tb_ref_gemm_naive(const tb_gemm *g, const void *a, const void *b, const void *c,
                                 float *d_ref, cudaStream_t s, char *msg, size_t len)
{
    return tb_ref_gemm_naive_scaled(g, 1.0f, 1.0f, a, b, c, d_ref, s, msg, len);
}

extern "C" int tb_ref_gemm_naive_scaled(const tb_gemm *g, float scale_a, float scale_b,
                                        const void *a, const void *b, const void *c,
                                        float *d_ref, cudaStream_t s, char *msg, size_t len)
{
    const int fp8 = g->a_type == TB_DTYPE_E4M3 && g->b_type == TB_DTYPE_E4M3;
    if (!fp8 && (g->a_type != TB_DTYPE_BF16 || g->b_type != TB_DTYPE_BF16)) {
        snprintf(msg, len, "naive reference: A and B must both be bf16 or both e4m3");
        return 1;
    }
    if (g->batch > 65535) {
        snprintf(msg, len, "naive reference: batch %lld over 65535", (long long)g->batch);
        return 1;
    }
    if ((g->m + BM - 1) / BM > 65535) {
        snprintf(msg, len, "naive reference: m %lld over %d", (long long)g->m, 65535 * BM);
        return 1;
    }
    dim3 block(TD, TD);
    dim3 grid((unsigned)((g->n + BN - 1) / BN), (unsigned)((g->m + BM - 1) / BM), (unsigned)g->batch);
    const __nv_bfloat16 *cc = g->beta != 0.0 ? (const __nv_bfloat16 *)c : nullptr;
    const int ac = g->a_layout == TB_LAYOUT_COL, bc = g->b_layout == TB_LAYOUT_COL,
              ccol = g->c_layout == TB_LAYOUT_COL;
    if (fp8)
        naive_gemm<__nv_fp8_e4m3><<<grid, block, 0, s>>>((const __nv_fp8_e4m3 *)a,
            (const __nv_fp8_e4m3 *)b, cc, d_ref, g->m, g->n, g->k, ac, bc, ccol, g->lda, g->ldb,
            g->ldc, g->stride_a, g->stride_b, g->stride_c, g->alpha, g->beta, scale_a, scale_b);
    else
        naive_gemm<__nv_bfloat16><<<grid, block, 0, s>>>((const __nv_bfloat16 *)a,
            (const __nv_bfloat16 *)b, cc, d_ref, g->m, g->n, g->k, ac, bc, ccol, g->lda, g->ldb,
            g->ldc, g->stride_a, g->stride_b, g->stride_c, g->alpha, g->beta, 1.0, 1.0);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(msg, len, "naive reference launch failed: %s", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
