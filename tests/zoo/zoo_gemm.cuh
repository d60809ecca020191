/* zoo_gemm.cuh - the one small, correct GEMM every CUDA member of the zoo shares.
 *
 * Owns: zoo_gemm_kernel<Flaw>, a naive GEMM (one thread per element of D, grid-stride in
 * every dimension) that honours every field of tb_gemm the default problem uses: all four
 * layouts, lda..ldd, batch strides, alpha, and beta (C is not read when beta == 0). BF16 A, B,
 * C, D; FP32 accumulation. Each member plants exactly one flaw by picking Flaw, so the members
 * that are "good except for one thing" really are GEMMs, and a member whose loader refusal
 * the harness forgets to apply still computes the right answer.
 *
 * Also: zoo_supports() (BF16 in and out, FP32 accumulate, m*n*k <= 2048^3) and
 * zoo_launch_gemm<Flaw>(), which enqueue on the caller's stream and return 0, or 1 when the
 * launch failed (cudaGetLastError, so a sticky error from an earlier launch also reads 1).
 * Includes only the public ABI header and the CUDA runtime, as every variant must.
 */
#ifndef TB_ZOO_GEMM_CUH
#define TB_ZOO_GEMM_CUH

#include <stdint.h>
#include <stdio.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <tilebench/variant.h>

/* The one flaw a member's kernel carries. */
enum zoo_flaw {
    ZOO_CORRECT = 0,
    ZOO_WRONG_TILE,     /* +1.0 on D's first 128 x 128 tile of batch 0, before rounding */
    ZOO_ZEROS,          /* D = 0 everywhere */
    ZOO_WILD_WRITE,     /* after the GEMM, one thread stores through ZOO_WILD_ADDRESS */
    ZOO_SPIN            /* after the GEMM, one thread spins forever */
};

/* Inside the first page, which is mapped neither on the host (mmap_min_addr) nor on the
 * device: a store there is cudaErrorIllegalAddress (700), sticky for the context. It is a
 * kernel argument, so the compiler cannot see the address and turn the store into a trap. */
#define ZOO_WILD_ADDRESS ((uintptr_t)0x1230)

/* Zero, and nothing ever writes it: ZOO_SPIN waits for it through a volatile load, which the
 * compiler must repeat on every iteration and may not delete. */
__device__ int zoo_never_set;

/* Every zoo member that is not about names uses a plain name and says so. */
static const tb_param zoo_plain_params[] = { TB_PARAM_STR("naming", "plain"), TB_PARAM_END };

__device__ __forceinline__ int64_t zoo_at(int layout, int64_t i, int64_t j, int64_t ld)
{
    return layout == TB_LAYOUT_ROW ? i * ld + j : j * ld + i;
}

template <int Flaw>
__global__ void zoo_gemm_kernel(tb_gemm g, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                const __nv_bfloat16 *C, __nv_bfloat16 *D, unsigned *wild)
{
    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
        const __nv_bfloat16 *a = A + b * g.stride_a, *bm = B + b * g.stride_b;
        for (int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; i < g.m;
             i += (int64_t)gridDim.y * blockDim.y) {
            for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < g.n;
                 j += (int64_t)gridDim.x * blockDim.x) {
                float acc = 0.0f;
                for (int64_t kk = 0; kk < g.k; kk++)
                    acc += __bfloat162float(a[zoo_at(g.a_layout, i, kk, g.lda)]) *
                           __bfloat162float(bm[zoo_at(g.b_layout, kk, j, g.ldb)]);
                float d = (float)g.alpha * acc;
                if (g.beta != 0.0)
                    d += (float)g.beta *
                         __bfloat162float(C[b * g.stride_c + zoo_at(g.c_layout, i, j, g.ldc)]);
                if (Flaw == ZOO_WRONG_TILE && b == 0 && i < 128 && j < 128)
                    d += 1.0f;
                if (Flaw == ZOO_ZEROS)
                    d = 0.0f;
                D[b * g.stride_d + zoo_at(g.d_layout, i, j, g.ldd)] = __float2bfloat16_rn(d);
            }
        }
    }
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 &&
                       threadIdx.x == 0 && threadIdx.y == 0;
    if (Flaw == ZOO_WILD_WRITE && first)
        *(volatile unsigned *)wild = 0xdeadbeefu;
    if (Flaw == ZOO_SPIN && first)
        while (*(volatile int *)&zoo_never_set == 0)
            __nanosleep(1000);
}

/* Refuses what the kernel does not compute, and every problem above 2048^3 multiply-adds,
 * so that a large shape set gives the zoo unsupported rows rather than slow ones (2048^3
 * takes this kernel about 8 ms on an H100, 2026-11-23). */
static inline int zoo_supports(const tb_problem *p, char *why, size_t why_len)
{
    const char *reason = NULL;
    const tb_gemm *g = &p->gemm;
    if (p->op != TB_OP_GEMM)
        reason = "zoo members compute GEMM only";
    else if (g->a_type != TB_DTYPE_BF16 || g->b_type != TB_DTYPE_BF16 ||
             g->c_type != TB_DTYPE_BF16 || g->d_type != TB_DTYPE_BF16)
        reason = "zoo members take bf16 A, B, C and D";
    else if (g->acc_type != TB_DTYPE_F32)
        reason = "zoo members accumulate in f32";
    else if ((double)g->m * (double)g->n * (double)g->k > 2048.0 * 2048.0 * 2048.0)
        reason = "zoo members are limited to m*n*k <= 2048^3";
    if (!reason)
        return 1;
    if (why && why_len)
        snprintf(why, why_len, "%s", reason);
    return 0;
}

static inline unsigned zoo_grid_dim(int64_t extent, int64_t per_block, unsigned cap)
{
    int64_t blocks = (extent + per_block - 1) / per_block;
    return blocks > (int64_t)cap ? cap : (unsigned)blocks;
}

template <int Flaw>
static int zoo_launch_gemm(const tb_problem *p, const tb_buffers *io, tb_stream stream)
{
    const tb_gemm *g = &p->gemm;
    dim3 block(16, 16);
    dim3 grid(zoo_grid_dim(g->n, 16, 65535), zoo_grid_dim(g->m, 16, 65535),
              zoo_grid_dim(g->batch, 1, 65535));
    zoo_gemm_kernel<Flaw><<<grid, block, 0, (cudaStream_t)stream>>>(
        *g, (const __nv_bfloat16 *)io->in[0], (const __nv_bfloat16 *)io->in[1],
        (const __nv_bfloat16 *)io->in[2], (__nv_bfloat16 *)io->out[0],
        (unsigned *)ZOO_WILD_ADDRESS);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

/* A launch() with nothing wrong in it, for the members whose flaw lies elsewhere. */
static inline int zoo_launch_correct(void *state, const tb_problem *p, const tb_buffers *io,
                                     void *workspace, size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, stream);
}

#endif
