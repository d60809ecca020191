/* small.cuh - small: the one-launch BF16 GEMM for shapes of at most one wave of 64-row tiles
 * whose operands TMA would read slowly or not at all, layout tn (A m x k row-major, B k x n
 * column-major: both k-contiguous), as a header that wgmma_auto's dispatcher (auto.cu)
 * includes. Issue 22's two small fallback shapes (127x129x136, 1023x1025x1032): rows of A
 * and B 16-byte but not 128-byte aligned, D's rows not even 16-byte aligned.
 *
 * D = alpha * A * B + beta * C, BF16 in, FP32 accumulation, BF16 out, C and D row-major at any
 * pitch (ldc, ldd), A and B at pitches that are multiples of 8 elements (16 bytes: cp.async's
 * unit), their base addresses 16-byte aligned.
 *
 * Owns: the kernel, its launch policy (the tile width) and small_supports() / small_setup() /
 * small_launch(). Everything is static, inline or in an anonymous namespace.
 *
 * Why not the TMA kernel (wgmma.cu): its fixed costs (a 384-thread CTA, setmaxnreg, mbarriers,
 * tensor-map descriptors fetched by the copy engine) are most of a 127x129x136 product, and
 * its 128-byte-swizzled TMA boxes ran at 0.54x on rows that straddle 128-byte lines (8192^3,
 * docs/perf.md), the case of every pitch of 1032 or 136 elements; the copy to a 64-element
 * pitch that avoids it is a launch of its own. Here nothing is copied, nothing is encoded at
 * launch, and there is one kernel.
 *
 * The kernel: one warpgroup (128 threads) per CTA, one 64 x BN tile of D per CTA (BN = 136 or
 * 72: 136 covers n = 1025 in 8 tiles and n = 129 in one; grid = tiles of m x tiles of n, at
 * most one wave, which the dispatcher's rule sees to), k in blocks of 64 through a STAGES-deep
 * ring in shared memory:
 *  - loads: every thread copies 16-byte chunks with cp.async.cg (L2 only) straight into the
 *    128-byte-swizzled layout wgmma reads (the layout TMA's SWIZZLE_128B writes: row r of a
 *    stage at r * 128, its 16-byte chunk c at ((c ^ (r & 7)) * 16)); a chunk past m, n or k
 *    asks for 0 source bytes (the chunk is written as zeros, nothing is read) and one that
 *    crosses k for the bytes before k: the edges cost no branch in the MMA loop and any m, n,
 *    k works;
 *  - k-block kb: wait for this thread's copies of kb (cp.async.wait_group), fence them to the
 *    async proxy (wgmma reads through it), __syncthreads (everyone's copies of kb are in, and
 *    every warp has waited for the MMAs of kb - 2), queue the copies of kb + STAGES - 2 into
 *    kb - 2's slot, then four wgmma m64nBNk16 from the slot, one commit group, and wait until
 *    only this group is in flight (so one group of MMAs overlaps the next block's wait and
 *    STAGES - 2 blocks of copies are in flight);
 *  - epilogue: alpha * acc (+ beta * C) straight from the accumulators, each lane's two
 *    adjacent columns stored as one 4-byte store where the address allows, else two 2-byte
 *    ones, every element checked against m and n (no staging: the pitch of D may be odd).
 */
#ifndef TB_VARIANTS_WGMMA_SMALL_CUH
#define TB_VARIANTS_WGMMA_SMALL_CUH

#include "../common/gemm_common.cuh"

#include <cuda.h>           /* CUtensorMap, named by wgmma_ptx.cuh's wrappers */
#include <limits.h>

#ifndef TB_EXP_SUSPEND
#define TB_EXP_SUSPEND 0    /* wgmma_ptx.cuh's mbarrier hint; no mbarrier is used here */
#endif
#include "wgmma_ptx.cuh"    /* wgmma fence/commit/wait, fence.proxy.async, desc_lo, DESC_HI */
#include "cp_async.cuh"     /* cp.async with zero-fill, wgmma m64n136k16 / m64n72k16 */

namespace {

constexpr int SM_BM = 64, SM_BK = 64, SM_THREADS = 128, SM_STAGES = 6;
/* The most tiles small() takes: one wave on the H100 (132 SMs, one CTA each), the GPU the
 * dispatcher's table was measured on. */
constexpr int64_t SM_MAX_TILES = 132;

template <int BN>
struct sm_cfg {
    static constexpr int ACC = BN / 2;                  /* f32 accumulators per thread */
    static constexpr int STAGE_A = SM_BM * 128, STAGE_B = BN * 128;
    static constexpr int STAGE = STAGE_A + STAGE_B;     /* a multiple of 1024 (BN % 8 == 0) */
    static constexpr int SMEM = 1024 + SM_STAGES * STAGE;
    static constexpr int CHUNKS_A = SM_BM * 8, CHUNKS_B = BN * 8;   /* 16-byte chunks a stage */
    static_assert(BN % 8 == 0 && STAGE % 1024 == 0, "whole 8-row swizzle atoms");
    static_assert(SMEM <= 227 * 1024, "shared memory");
    static_assert(SM_STAGES >= 3, "a slot in flight, one read, one or more loading");
};

struct sm_params {
    const __nv_bfloat16 *a, *b, *c;     /* c NULL when beta == 0 */
    __nv_bfloat16 *d;
    int m, n, k, k_iters;
    int64_t lda, ldb, ldc, ldd;
    float alpha, beta;
};

/* A thread's share of every stage's copies, fixed for the tile: stage chunk i = j * 128 + tid
 * (round j) is row j * 16 + tid / 8 of A (rounds j < SM_RA) or of B (the rest), 16-byte column
 * tid % 8 of the 128-byte k-block, so the column, the row's swizzle (row & 7 = (tid / 8) & 7)
 * and hence the shared offset within a round (tid-dependent part dst0, plus j * 2048) never
 * change; the rows advance 16 a round. Computed once, before the k loop: the per-block
 * address arithmetic of the first version (about 490 instructions a warp a k-block for
 * BN = 136, from the chunk index alone) made the 4-warp CTA issue-bound at 2,300 cycles a
 * block (ncu, 1000^3, H100, 2026-11-27: docs/perf.md, fourteenth session). */
template <int BN>
struct sm_thread {
    static constexpr int RA = SM_BM / 16;                      /* A's rounds */
    static constexpr int ROUNDS = (SM_BM + BN) * 8 / SM_THREADS + (((SM_BM + BN) * 8) % SM_THREADS ? 1 : 0);
    const __nv_bfloat16 *pa, *pb;   /* this thread's first A row / B row, at its column */
    int64_t step_a, step_b;         /* 16 rows of A, of B, in elements */
    uint32_t dst0;                  /* the shared offset within round 0 */
    uint32_t ok;                    /* bit j: round j's row is inside m (A) or n (B), and the
                                     * round exists for this thread (the last may be partial) */
    uint32_t all;                   /* bit j: round j exists for this thread */
    int kc;                         /* this thread's first k within a k-block (column * 8) */
};

template <int BN>
__device__ __forceinline__ sm_thread<BN> sm_thread_init(const sm_params &p, int m0, int n0)
{
    using T = sm_thread<BN>;
    static_assert(sm_cfg<BN>::CHUNKS_A == T::RA * SM_THREADS, "A's chunks: whole rounds of the CTA");
    static_assert(T::ROUNDS <= 32, "the round mask is 32 bits");
    T t;
    const int r = (int)threadIdx.x >> 3, c = (int)threadIdx.x & 7;
    t.kc = c * 8;
    t.dst0 = (uint32_t)(r * 128 + ((c ^ (r & 7)) << 4));
    t.step_a = 16 * p.lda;
    t.step_b = 16 * p.ldb;
    t.pa = p.a + (int64_t)(m0 + r) * p.lda + t.kc;
    t.pb = p.b + (int64_t)(n0 + r) * p.ldb + t.kc;
    t.ok = t.all = 0;
#pragma unroll
    for (int j = 0; j < T::ROUNDS; j++) {
        const int i = j * SM_THREADS + (int)threadIdx.x;
        const bool is_a = j < T::RA;
        const int row = is_a ? m0 + j * 16 + r : n0 + (j - T::RA) * 16 + r;
        if (i < sm_cfg<BN>::CHUNKS_A + sm_cfg<BN>::CHUNKS_B) {
            t.all |= 1u << j;
            if (row < (is_a ? p.m : p.n)) t.ok |= 1u << j;
        }
    }
    return t;
}

/* The copies of k-block kb into the stage at dst: A's 64 rows, then B's BN, 8 chunks of 16
 * bytes a row. A chunk outside m or n asks for 0 bytes (written as zeros, nothing read); in
 * the last k-block, a chunk that reaches past k asks for the bytes before k. */
template <int BN>
__device__ __forceinline__ void sm_load(const sm_params &p, const sm_thread<BN> &t, uint32_t dst, int kb)
{
    using T = sm_thread<BN>;
    const int k0 = kb * SM_BK;
    const int left = p.k - (k0 + t.kc);          /* k elements from this thread's column on */
    constexpr int TOTAL = sm_cfg<BN>::CHUNKS_A + sm_cfg<BN>::CHUNKS_B;
    if (left >= 8 && t.ok == t.all) {            /* every row inside, 16 bytes each: no edge */
#pragma unroll
        for (int j = 0; j < T::ROUNDS; j++) {
            if (j == T::ROUNDS - 1 && j * SM_THREADS + (int)threadIdx.x >= TOTAL) break;
            const __nv_bfloat16 *row = j < T::RA ? t.pa + j * t.step_a : t.pb + (j - T::RA) * t.step_b;
            cp_async_16(dst + t.dst0 + (uint32_t)(j * 2048), row + k0, 16u);
        }
        return;
    }
    const uint32_t kbytes = left >= 8 ? 16u : left > 0 ? (uint32_t)left * 2u : 0u;
#pragma unroll
    for (int j = 0; j < T::ROUNDS; j++) {
        /* the last round may be partial: past TOTAL there is no chunk (and the offset would be
         * the next stage's) */
        if (j == T::ROUNDS - 1 && j * SM_THREADS + (int)threadIdx.x >= TOTAL) break;
        const bool is_a = j < T::RA;
        const __nv_bfloat16 *row = is_a ? t.pa + j * t.step_a : t.pb + (j - T::RA) * t.step_b;
        const bool in = ((t.ok >> j) & 1u) && kbytes;
        cp_async_16(dst + t.dst0 + (uint32_t)(j * 2048), in ? (const void *)(row + k0) : (const void *)p.a,
                    in ? kbytes : 0u);
    }
}

/* D(row, col), D(row, col + 1) = v0, v1 (alpha applied; + beta * C here), each only inside
 * m and n. */
__device__ __forceinline__ void sm_store2(const sm_params &p, int row, int col, float v0, float v1)
{
    if (row >= p.m || col >= p.n) return;
    const bool two = col + 1 < p.n;
    if (p.c) {
        const __nv_bfloat16 *c = p.c + (int64_t)row * p.ldc + col;
        v0 = fmaf(p.beta, __bfloat162float(c[0]), v0);
        if (two) v1 = fmaf(p.beta, __bfloat162float(c[1]), v1);
    }
    __nv_bfloat16 *d = p.d + (int64_t)row * p.ldd + col;
    if (two && ((uintptr_t)d & 3u) == 0) {
        *reinterpret_cast<__nv_bfloat162 *>(d) = __floats2bfloat162_rn(v0, v1);
    } else {
        d[0] = __float2bfloat16_rn(v0);
        if (two) d[1] = __float2bfloat16_rn(v1);
    }
}

template <int BN>
__device__ __forceinline__ void sm_mma(float (&acc)[BN / 2], uint32_t da, uint32_t db, int scale_d)
{
    if constexpr (BN == 136) wgmma_n136_kk(acc, da, db, scale_d);
    else wgmma_n72_kk(acc, da, db, scale_d);
}

template <int BN>
__global__ void __launch_bounds__(SM_THREADS, 1) small_gemm(const __grid_constant__ sm_params p)
{
    using C = sm_cfg<BN>;
    extern __shared__ __align__(1024) unsigned char sm_smem[];
    const uint32_t base = (smem_u32(sm_smem) + 1023u) & ~1023u;
    const int m0 = (int)blockIdx.x * SM_BM, n0 = (int)blockIdx.y * BN;
    const int kt = p.k_iters;
    const sm_thread<BN> t = sm_thread_init<BN>(p, m0, n0);

#pragma unroll
    for (int s = 0; s < SM_STAGES - 2; s++) {
        if (s < kt) sm_load<BN>(p, t, base + (uint32_t)(s * C::STAGE), s);
        cp_async_commit();              /* one group per k-block, empty ones too */
    }
    float acc[C::ACC];
#pragma unroll
    for (int i = 0; i < C::ACC; i++) acc[i] = 0.f;

    for (int kb = 0; kb < kt; kb++) {
        cp_async_wait<SM_STAGES - 3>();  /* this thread's copies of kb are in */
        fence_proxy_async();            /* ... and visible to wgmma's (async) proxy */
        __syncthreads();                /* everyone's; every warp is past kb - 2's MMAs */
        const int nk = kb + SM_STAGES - 2;
        if (nk < kt) sm_load<BN>(p, t, base + (uint32_t)((nk % SM_STAGES) * C::STAGE), nk);
        cp_async_commit();
        const uint32_t st = base + (uint32_t)((kb % SM_STAGES) * C::STAGE);
        const uint32_t da = desc_lo<1>(st), db = desc_lo<1>(st + C::STAGE_A);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++)  /* k16 steps: +32 bytes along the swizzled rows */
            sm_mma<BN>(acc, da + (uint32_t)(kk * 2), db + (uint32_t)(kk * 2), kb > 0 || kk > 0);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();

    /* accumulator j * 4 + {0, 1}: row warp * 16 + lane / 4, columns j * 8 + 2 * (lane % 4) + {0,
     * 1}; j * 4 + {2, 3}: the same 8 rows further down */
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int row = m0 + warp * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        const int col = n0 + j * 8 + 2 * (lane & 3);
        sm_store2(p, row, col, acc[j * 4] * p.alpha, acc[j * 4 + 1] * p.alpha);
        sm_store2(p, row + 8, col, acc[j * 4 + 2] * p.alpha, acc[j * 4 + 3] * p.alpha);
    }
}

/* ---- the host side ---------------------------------------------------------------------- */

int64_t small_tiles(const tb_gemm *g, int bn)
{
    return ((g->m + SM_BM - 1) / SM_BM) * ((g->n + bn - 1) / bn);
}

/* The tile width: 72 where its tiles still fit one wave (more CTAs, fewer bytes each: the
 * small shapes, where each CTA's load time is the kernel's), else 136. */
int small_bn(const tb_gemm *g)
{
    return small_tiles(g, 72) <= SM_MAX_TILES ? 72 : 136;
}

/* tn, batch 1, lda and ldb multiples of 8 (16-byte rows for cp.async), at most one wave of
 * 64 x 136 tiles. */
int small_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_layout_ok(p, TB_LAYOUT_ROW, TB_LAYOUT_COL, why, len)) return 0;
    const tb_gemm *g = &p->gemm;
    if (g->lda % 8 != 0 || g->ldb % 8 != 0)
        return tbv::no(why, len, "small: lda and ldb must be multiples of 8 (16-byte rows)");
    if (g->m > INT_MAX - 256 || g->n > INT_MAX - 256 || g->k > INT_MAX - 64)
        return tbv::no(why, len, "m, n and k must be below 2^31 - 256");
    if (small_tiles(g, 136) > SM_MAX_TILES)
        return tbv::no(why, len, "small: more than %lld tiles of 64 x 136", (long long)SM_MAX_TILES);
    return 1;
}

/* The kernels' shared memory (once per process; cudaFuncSetAttribute is host work). */
int small_setup(char *msg, size_t len)
{
    cudaError_t e = cudaFuncSetAttribute(small_gemm<136>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         sm_cfg<136>::SMEM);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(small_gemm<72>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 sm_cfg<72>::SMEM);
    if (e != cudaSuccess) {
        snprintf(msg, len, "small: kernel set-up failed: %s", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

int small_launch(const tb_problem *p, const tb_buffers *io, cudaStream_t st)
{
    const tb_gemm *g = &p->gemm;
    if (((uintptr_t)io->in[0] | (uintptr_t)io->in[1]) & 15u) return (int)cudaErrorMisalignedAddress;
    sm_params a;
    a.a = (const __nv_bfloat16 *)io->in[0];
    a.b = (const __nv_bfloat16 *)io->in[1];
    a.c = g->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    a.d = (__nv_bfloat16 *)io->out[0];
    a.m = (int)g->m; a.n = (int)g->n; a.k = (int)g->k;
    a.k_iters = (int)((g->k + SM_BK - 1) / SM_BK);
    a.lda = g->lda; a.ldb = g->ldb; a.ldc = g->ldc; a.ldd = g->ldd;
    a.alpha = (float)g->alpha;
    a.beta = (float)g->beta;
    const int bn = small_bn(g);
    const dim3 grid((unsigned)((g->m + SM_BM - 1) / SM_BM), (unsigned)((g->n + bn - 1) / bn));
    if (bn == 136) small_gemm<136><<<grid, SM_THREADS, sm_cfg<136>::SMEM, st>>>(a);
    else small_gemm<72><<<grid, SM_THREADS, sm_cfg<72>::SMEM, st>>>(a);
    return tbv::last_launch_error();
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_SMALL_CUH */
