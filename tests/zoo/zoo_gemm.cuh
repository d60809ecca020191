/* zoo_gemm.cuh - the one small, correct GEMM every CUDA member of the zoo shares.
 *
 * Owns: zoo_gemm_kernel<Flaw>, a naive GEMM (one thread per element of D, grid-stride in
 * every dimension) that honours every field of tb_gemm the default problem uses: all four
 * layouts, lda..ldd, batch strides, alpha, and beta (C is not read when beta == 0). BF16 A, B,
 * C, D; FP32 accumulation. Each member plants exactly one flaw by picking Flaw, so the members
 * that are "good except for one thing" really are GEMMs, and a member whose loader refusal
 * the harness forgets to apply still computes the right answer. Flaws that live outside the
 * kernel (a side stream, a cache, a persisting-L2 window, a write to A) are in the members'
 * own files, around an unflawed launch; a cache decided on the device needs the kernel to step
 * aside on a hit, without the host knowing (ZOO_SKIP_ON_FLAG).
 *
 * Also: zoo_supports() (BF16 in and out, FP32 accumulate, m*n*k <= 2048^3),
 * zoo_launch_gemm<Flaw>(), which enqueue on the given stream and return 0, or 1 when the
 * launch failed (cudaGetLastError, so a sticky error from an earlier launch also reads 1),
 * and zoo_d_extent() (elements from D's first to its last, batch strides included).
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
    ZOO_SPIN,           /* after the GEMM, one thread spins forever */
    ZOO_SKIP_LAST_K,    /* only the first floor(K/32)*32 products: the partial K tile dropped */
    ZOO_IGNORE_BETA,    /* D = alpha*A*B; C is never read */
    ZOO_NAN_ONE,        /* D[0][0] of batch 0 is NaN (0x7FC0, not the harness's poison) */
    ZOO_ROW_UNWRITTEN,  /* row m/2 of every batch is never stored */
    ZOO_OOB_ROW,        /* also stores one line past the last batch's D (see the kernel) */
    ZOO_SLOW,           /* also recomputes the first slow_k products of every element */
    ZOO_SKIP_ON_FLAG,   /* computes nothing when the device int at `wild` is >= 0 (a cached
                           answer is there: zoo_content_cache) */
    ZOO_LDB_AS_K        /* reads a row-major B (layouts nt, tt) with pitch k instead of ldb */
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

/* Where B(kk, j) is read. ZOO_LDB_AS_K takes the pitch of a row-major B (k x n, n contiguous)
 * to be k, as a kernel written for the column-major B of tn (k contiguous, ldb = k unpadded)
 * would: right exactly when k == ldb (a square shape, no padding). The offset is wrapped into
 * B's extent, so that it never reads outside B (which takes a wrap only when k > ldb). */
template <int Flaw>
__device__ __forceinline__ int64_t zoo_b_at(const tb_gemm &g, int64_t kk, int64_t j)
{
    if (Flaw == ZOO_LDB_AS_K && g.b_layout == TB_LAYOUT_ROW)
        return (kk * g.k + j) % ((g.k - 1) * g.ldb + g.n);
    return zoo_at(g.b_layout, kk, j, g.ldb);
}

template <int Flaw>
__global__ void zoo_gemm_kernel(tb_gemm g, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                                const __nv_bfloat16 *C, __nv_bfloat16 *D, unsigned *wild,
                                int64_t slow_k, float zero)
{
    if (Flaw == ZOO_SKIP_ON_FLAG && *(const volatile int *)wild >= 0)
        return;
    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
        const __nv_bfloat16 *a = A + b * g.stride_a, *bm = B + b * g.stride_b;
        for (int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y; i < g.m;
             i += (int64_t)gridDim.y * blockDim.y) {
            if (Flaw == ZOO_ROW_UNWRITTEN && i == g.m / 2)
                continue;
            for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < g.n;
                 j += (int64_t)gridDim.x * blockDim.x) {
                float acc = 0.0f;
                if (Flaw == ZOO_SLOW) {
                    /* Extra work: the K loop's statement over k < slow_k (<= K), the same
                     * loads in the same order, into a partial sum that seeds acc times zero
                     * (a kernel argument, so the compiler must do the work; 0 * x + the sum
                     * is the sum for finite inputs). Not unrolled: unrolled, it costs 8 more
                     * registers per thread and so one block per SM less than ZOO_CORRECT;
                     * this way both use 40 on sm_80 and sm_90 (nvcc 13.0), same occupancy. */
                    float spare = 0.0f;
#pragma unroll 1
                    for (int64_t kk = 0; kk < slow_k; kk++)
                        spare += __bfloat162float(a[zoo_at(g.a_layout, i, kk, g.lda)]) *
                                 __bfloat162float(bm[zoo_b_at<Flaw>(g, kk, j)]);
                    acc = zero * spare;
                }
                /* ZOO_SKIP_LAST_K drops the last, partial 32-wide K tile (all of K when K < 32) */
                for (int64_t kk = 0; kk < (Flaw == ZOO_SKIP_LAST_K ? g.k / 32 * 32 : g.k); kk++)
                    acc += __bfloat162float(a[zoo_at(g.a_layout, i, kk, g.lda)]) *
                           __bfloat162float(bm[zoo_b_at<Flaw>(g, kk, j)]);
                float d = (float)g.alpha * acc;
                if (Flaw != ZOO_IGNORE_BETA && g.beta != 0.0)
                    d += (float)g.beta *
                         __bfloat162float(C[b * g.stride_c + zoo_at(g.c_layout, i, j, g.ldc)]);
                if (Flaw == ZOO_WRONG_TILE && b == 0 && i < 128 && j < 128)
                    d += 1.0f;
                if (Flaw == ZOO_ZEROS)
                    d = 0.0f;
                if (Flaw == ZOO_NAN_ONE && b == 0 && i == 0 && j == 0)
                    d = __int_as_float(0x7fc00000);
                D[b * g.stride_d + zoo_at(g.d_layout, i, j, g.ldd)] = __float2bfloat16_rn(d);
                /* ZOO_OOB_ROW: one line past the end of the last batch's D, at D's own
                 * stride: row m (columns 0..n-1) of a row-major D, column n (rows 0..m-1) of
                 * a column-major one, so that every store lands after D's last element. */
                if (Flaw == ZOO_OOB_ROW && b == g.batch - 1) {
                    if (g.d_layout == TB_LAYOUT_ROW && i == g.m - 1)
                        D[b * g.stride_d + g.m * g.ldd + j] = __float2bfloat16_rn(d);
                    if (g.d_layout == TB_LAYOUT_COL && j == g.n - 1)
                        D[b * g.stride_d + g.n * g.ldd + i] = __float2bfloat16_rn(d);
                }
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

/* slow_k: ZOO_SLOW's extra products per element (at most K); skip: ZOO_SKIP_ON_FLAG's device
 * int; each ignored by every other flaw. */
template <int Flaw>
static int zoo_launch_gemm(const tb_problem *p, const tb_buffers *io, tb_stream stream,
                           int64_t slow_k = 0, const int *skip = NULL)
{
    const tb_gemm *g = &p->gemm;
    dim3 block(16, 16);
    dim3 grid(zoo_grid_dim(g->n, 16, 65535), zoo_grid_dim(g->m, 16, 65535),
              zoo_grid_dim(g->batch, 1, 65535));
    zoo_gemm_kernel<Flaw><<<grid, block, 0, (cudaStream_t)stream>>>(
        *g, (const __nv_bfloat16 *)io->in[0], (const __nv_bfloat16 *)io->in[1],
        (const __nv_bfloat16 *)io->in[2], (__nv_bfloat16 *)io->out[0],
        Flaw == ZOO_SKIP_ON_FLAG ? (unsigned *)skip : (unsigned *)ZOO_WILD_ADDRESS, slow_k, 0.0f);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

/* Elements from D's first to its last (batch strides and padding included): as many as the
 * harness allocates for D between its guard bands. */
static inline size_t zoo_d_extent(const tb_gemm *g)
{
    int64_t rows = g->d_layout == TB_LAYOUT_ROW ? g->m : g->n;
    int64_t cols = g->d_layout == TB_LAYOUT_ROW ? g->n : g->m;
    return (size_t)((g->batch - 1) * g->stride_d + (rows - 1) * g->ldd + cols);
}

/* A launch() with nothing wrong in it, for the members whose flaw lies elsewhere. */
static inline int zoo_launch_correct(void *state, const tb_problem *p, const tb_buffers *io,
                                     void *workspace, size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, stream);
}

#endif
