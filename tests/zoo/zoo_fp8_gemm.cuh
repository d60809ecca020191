/* zoo_fp8_gemm.cuh - the one small, correct FP8 GEMM the FP8 members of the zoo share.
 *
 * Owns: zoo_fp8_kernel<Flaw>, a naive GEMM (one thread per element of D, grid-stride in every
 * dimension) of E4M3 A and B with their per-tensor scales (variant.h, growth 1), BF16 C and D,
 * FP32 accumulation: every layout, leading dimension, batch stride, alpha and beta. Each E4M3
 * element is decoded in registers and multiplied by its scale (exact: a power of two times 4
 * significant bits), the products summed in FP32 in k order, D rounded once to BF16. Each
 * member plants one flaw by picking Flaw; zoo_fp8_ok plants none (the control). Also
 * zoo_fp8_supports() (E4M3 A and B, BF16 C and D, FP32 accumulation, a problem struct that
 * covers the scales, m*n*k <= 2048^3) and zoo_fp8_problem_size_ext, the answer to
 * extension(TB_EXT_PROBLEM_SIZE) without which the host never offers these members FP8.
 * Includes only the public ABI header and CUDA headers, as every variant must.
 */
#ifndef TB_ZOO_FP8_GEMM_CUH
#define TB_ZOO_FP8_GEMM_CUH

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <tilebench/variant.h>

enum zoo_fp8_flaw {
    ZOO_FP8_CORRECT = 0,
    ZOO_FP8_SKIP_K_TILE,   /* the last whole 32-wide K tile (products K-32 .. K-1) dropped */
    ZOO_FP8_FP16_ACC       /* the running sum kept in FP16 (__hfma: one FP16 rounding a step) */
};

static const tb_param zoo_fp8_params[] = { TB_PARAM_STR("naming", "plain"),
                                           TB_PARAM_STR("dtype", "e4m3"), TB_PARAM_END };

static const uint32_t zoo_fp8_problem_size = sizeof(tb_problem);
static inline const void *zoo_fp8_problem_size_ext(const char *key)
{
    return strcmp(key, TB_EXT_PROBLEM_SIZE) == 0 ? &zoo_fp8_problem_size : NULL;
}

__device__ __forceinline__ int64_t zoo_fp8_at(int layout, int64_t i, int64_t j, int64_t ld)
{
    return layout == TB_LAYOUT_ROW ? i * ld + j : j * ld + i;
}

template <int Flaw>
__global__ void zoo_fp8_kernel(tb_gemm g, float sa, float sb, const __nv_fp8_e4m3 *A,
                               const __nv_fp8_e4m3 *B, const __nv_bfloat16 *C, __nv_bfloat16 *D)
{
    const int64_t kend = Flaw == ZOO_FP8_SKIP_K_TILE ? (g.k >= 32 ? g.k - 32 : 0) : g.k;
    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
        const __nv_fp8_e4m3 *a = A + b * g.stride_a, *bm = B + b * g.stride_b;
        for (int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; i < g.m;
             i += (int64_t)gridDim.y * blockDim.y)
            for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < g.n;
                 j += (int64_t)gridDim.x * blockDim.x) {
                float acc = 0.0f;
                __half hacc = __float2half(0.0f);
                for (int64_t kk = 0; kk < kend; kk++) {
                    const float x = (float)a[zoo_fp8_at(g.a_layout, i, kk, g.lda)] * sa;
                    const float y = (float)bm[zoo_fp8_at(g.b_layout, kk, j, g.ldb)] * sb;
                    if (Flaw == ZOO_FP8_FP16_ACC)
                        hacc = __hfma(__float2half(x), __float2half(y), hacc);   /* x, y exact */
                    else
                        acc += x * y;
                }
                if (Flaw == ZOO_FP8_FP16_ACC) acc = __half2float(hacc);
                float d = (float)g.alpha * acc;
                if (g.beta != 0.0)
                    d += (float)g.beta * __bfloat162float(C[b * g.stride_c + zoo_fp8_at(g.c_layout, i, j, g.ldc)]);
                D[b * g.stride_d + zoo_fp8_at(g.d_layout, i, j, g.ldd)] = __float2bfloat16_rn(d);
            }
    }
}

static inline int zoo_fp8_supports(const tb_problem *p, char *why, size_t why_len)
{
    const char *reason = NULL;
    const tb_gemm *g = &p->gemm;
    if (p->op != TB_OP_GEMM)
        reason = "zoo members compute GEMM only";
    else if (p->struct_size < TB_PROBLEM_G1_SIZE)
        reason = "fp8 zoo members need a problem with scales (growth 1)";
    else if (g->a_type != TB_DTYPE_E4M3 || g->b_type != TB_DTYPE_E4M3 ||
             g->c_type != TB_DTYPE_BF16 || g->d_type != TB_DTYPE_BF16)
        reason = "fp8 zoo members take e4m3 A and B, bf16 C and D";
    else if (g->acc_type != TB_DTYPE_F32)
        reason = "zoo members accumulate in f32";
    else if ((double)g->m * (double)g->n * (double)g->k > 2048.0 * 2048.0 * 2048.0)
        reason = "zoo members are limited to m*n*k <= 2048^3";
    if (!reason) return 1;
    if (why && why_len) snprintf(why, why_len, "%s", reason);
    return 0;
}

static inline unsigned zoo_fp8_grid(int64_t extent, int64_t per_block, unsigned cap)
{
    int64_t blocks = (extent + per_block - 1) / per_block;
    return blocks > (int64_t)cap ? cap : (unsigned)blocks;
}

template <int Flaw>
static int zoo_fp8_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    const tb_gemm *g = &p->gemm;
    dim3 block(16, 16);
    dim3 grid(zoo_fp8_grid(g->n, 16, 65535), zoo_fp8_grid(g->m, 16, 65535),
              zoo_fp8_grid(g->batch, 1, 65535));
    zoo_fp8_kernel<Flaw><<<grid, block, 0, (cudaStream_t)stream>>>(
        *g, p->gemm_scales.scale_a, p->gemm_scales.scale_b, (const __nv_fp8_e4m3 *)io->in[0],
        (const __nv_fp8_e4m3 *)io->in[1], (const __nv_bfloat16 *)io->in[2],
        (__nv_bfloat16 *)io->out[0]);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

/* One member: its name and flaw. */
#define ZOO_FP8_MEMBER(NAME, FLAW)                                                            \
    static const tb_variant zoo_v = {                                                         \
        TB_VARIANT_ABI_VERSION, sizeof(tb_variant), NAME, "zoo", zoo_fp8_params, TB_SASS,     \
        zoo_fp8_supports, NULL, zoo_fp8_launch<FLAW>, NULL, NULL, NULL,                       \
        zoo_fp8_problem_size_ext };                                                           \
    extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi,         \
                                                                   uint32_t index)            \
    {                                                                                         \
        (void)host_abi;                                                                       \
        return index == 0 ? &zoo_v : NULL;                                                    \
    }

#endif /* TB_ZOO_FP8_GEMM_CUH */
