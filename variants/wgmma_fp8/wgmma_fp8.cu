/* wgmma_fp8.cu - wgmma_e4m3: the Hopper FP8 GEMM family (sm_90a), one templated source for the
 * whole grid (issue 23), on the skeleton of the BF16 family (variants/wgmma/wgmma.cu).
 *
 * D = alpha * (scale_a * A) (scale_b * B) + beta * C: A m x k E4M3 row-major (k contiguous,
 * lda >= k), B k x n E4M3 column-major (k contiguous, ldb >= k) - "tn", the one layout FP8
 * wgmma reads (it has no transpose: both operands K-major in shared memory) - C and D BF16
 * row-major, FP32 accumulators, batch 1. The per-tensor scales (tb_problem.gemm_scales, growth
 * 1) are applied once, in the epilogue, as alpha * scale_a * scale_b; beta * C is unscaled.
 *
 * The kernel is the BF16 family's tn kernel with a k-block of 128 FP8 elements = 128 bytes:
 *  - the same 128-byte swizzled rows, so the ring's stages (TILE x 128 bytes per operand), the
 *    TMA boxes (128 x rows, CU_TENSOR_MAP_DATA_TYPE_UINT8), the shared-memory descriptors and
 *    their steps (+32 bytes per instruction along k) carry over unchanged;
 *  - each k-block issues 4 wgmma.mma_async m64nNk32.f32.e4m3.e4m3 per m64 block (k = 32 per
 *    instruction) instead of 4 m64nNk16.bf16;
 *  - one CTA = three warpgroups (producer: one thread streams k-blocks through a STAGES-deep
 *    ring with TMA, full/empty mbarriers; two consumers: cooperative, each its TILE_M/2 rows of
 *    one tile, or pingpong, alternate whole tiles with an ordered pair of named barriers),
 *    persistent over a static tile schedule rastered along m or n in bands of SWIZZLE tiles;
 *    clusters of 2 CTAs along m (2x1) or n (1x2) multicast the shared operand; the epilogue
 *    (alpha, beta * C, BF16, stmatrix into a swizzled staging buffer, TMA store) is
 *    wgmma_shared.cuh's.
 *
 * Accumulation precision (TB_PROMOTE). Hopper's FP8 tensor cores are reported to keep about 14
 * bits in the accumulator they add products into (DeepSeek-V3 report, section 3.3.2), not
 * FP32's 24. TB_PROMOTE = 0 accumulates all of k in the wgmma accumulators ("fast accumulation").
 * TB_PROMOTE = P >= 1 gives every group of P k-blocks (P * 128 of k; DeepSeek-V3 promotes every
 * 128) fresh wgmma accumulators (the temporaries) and, at the group's end, waits for its MMAs
 * (wgmma.wait_group 0) and adds them into FP32 registers. The wait drains this consumer's
 * MMAs once per group (the other consumer's, in flight, keep the tensor pipe busy meanwhile,
 * in the cooperative schedule). Two alternating sets of temporaries, read under wait_group 1
 * while the next group's MMAs run, would not drain, but ptxas serializes every wgmma when
 * registers of one are read while another is in flight (warning C7514; tried). Two accumulator
 * sets per consumer thread: only consumers of 64 rows and n <= 128 (2 x 64 registers) fit.
 *
 * Edges: TMA loads fill rows and k-columns outside A and B with zeros (any m, n, k), TMA stores
 * clip at m and n. supports() refuses what TMA cannot describe: lda or ldb not a multiple of 16
 * (16-byte rows of E4M3), ldd not a multiple of 8 (16-byte rows of BF16).
 *
 * Host side as wgmma.cu's: setup() finds the tensor-map encoder, sets the kernel's shared
 * memory and sizes the persistent grid (clusters: cudaOccupancyMaxActiveClusters); launch()
 * encodes the tensor maps when the buffer pointers differ from the last launch's (host
 * arithmetic only) and passes them in a __grid_constant__ parameter. The variant answers
 * extension(TB_EXT_PROBLEM_SIZE) with sizeof(tb_problem): it reads gemm_scales.
 *
 * CMake defines, one library per grid point (variants/wgmma_fp8/CMakeLists.txt): TB_TILE_M,
 * TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG (0 cooperative, 1 pingpong),
 * TB_RASTER_N (0 raster m, 1 raster n), TB_SWIZZLE, TB_PROMOTE (0, or k-blocks per promotion).
 * The library exports one variant, named by tb_variant_make_name():
 *   wgmma_e4m3_<TM>x<TN>x128_c<CM>x<CN>_s<STAGES>_<schedule>_raster<r>_sw<SW>_promote-<P>_tn
 */
#include "../common/gemm_common.cuh"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(TB_TILE_M) || !defined(TB_TILE_N) || !defined(TB_STAGES) ||                  \
    !defined(TB_CLUSTER_M) || !defined(TB_CLUSTER_N) || !defined(TB_PINGPONG) ||          \
    !defined(TB_RASTER_N) || !defined(TB_SWIZZLE) || !defined(TB_PROMOTE)
#error "wgmma_fp8.cu needs TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG, TB_RASTER_N, TB_SWIZZLE and TB_PROMOTE"
#endif
#define TB_EXP_SUSPEND 0            /* wgmma_ptx.cuh's mbarrier wait: no suspend hint */

#include <cuda.h>                    /* CUtensorMap: types only, libcuda is not linked */

#include "../wgmma/wgmma_ptx.cuh"    /* mbarriers, TMA, wgmma (bf16 and e4m3), stmatrix */
#include "../wgmma/wgmma_shared.cuh" /* tensor-map encoding, raster, epilogue */

namespace {

template <int TM_, int TN_, int STAGES_, int CM_, int CN_, int PP_, int RN_, int SW_, int PR_>
struct config {
    static constexpr int TILE_M = TM_, TILE_N = TN_, BK = 128, STAGES = STAGES_;
    static constexpr int CM = CM_, CN = CN_, CSIZE = CM_ * CN_;
    static constexpr bool PINGPONG = PP_ != 0, RASTER_N = RN_ != 0, CONFLICT = false;
    static constexpr int SWIZZLE = SW_;
    static constexpr int PROMOTE = PR_;                 /* k-blocks per promotion, 0: none */
    static constexpr int GROUP = PR_ > 0 ? PR_ : 1;     /* PROMOTE as a divisor */
    static constexpr int THREADS = 384;                 /* producer + 2 consumer warpgroups */
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static constexpr int WG_M = PINGPONG ? TILE_M : TILE_M / 2;  /* rows one consumer owns */
    static constexpr int MI = WG_M / 64;                /* m64 wgmmas per k32 step */
    static constexpr int ACC = TILE_N / 2;              /* f32 accumulators per m64 block */
    static constexpr int ROW_BYTES = BK;                /* one 128-byte swizzled row: 128 E4M3 */
    static constexpr int KSTEP = 32;                    /* bytes along the row per k32 wgmma */
    static constexpr int STAGE_A = TILE_M * ROW_BYTES, STAGE_B = TILE_N * ROW_BYTES;
    static constexpr int STAGE_BYTES = STAGE_A + STAGE_B;
    /* Rows of the shared operand each CTA of a cluster loads and multicasts. */
    static constexpr int A_LOAD_ROWS = TILE_M / CN, B_LOAD_ROWS = TILE_N / CM;
    static constexpr int CHUNKS = TILE_N / 64;          /* 64-column epilogue chunks */
    static constexpr int EPI_BUF = WG_M * 128;          /* one BF16 chunk of one consumer */
    static constexpr int EPI_BUFS = WG_M == 64 ? 2 : 1; /* per consumer */
    static constexpr int EPI_BYTES = 2 * EPI_BUFS * EPI_BUF;
    static constexpr int EMPTY_ARRIVALS = (PINGPONG ? 1 : 2) * CSIZE;
    /* 1024 bytes of slack to align the ring to the 1024-byte swizzle atom, then the ring,
     * the epilogue buffers and the mbarriers. */
    static constexpr int SMEM = 1024 + STAGES * STAGE_BYTES + EPI_BYTES + 16 * STAGES;

    static_assert(TILE_N == 128 || TILE_N == 256, "tile_n must be 128 or 256");
    static_assert(WG_M == 64 || WG_M == 128, "a consumer owns 64 or 128 rows");
    static_assert(MI * ACC <= 128, "at most 128 accumulators per consumer thread");
    static_assert(PROMOTE >= 0, "promote: 0 or k-blocks per promotion");
    static_assert(PROMOTE == 0 || MI * ACC <= 64,
                  "promotion keeps 2 accumulator sets: a consumer of 64 rows and n <= 128");
    static_assert(STAGES >= 2, "the ring needs at least 2 stages");
    static_assert(CSIZE == 1 || CSIZE == 2, "clusters of 1 or 2 CTAs (1x1, 2x1, 1x2)");
    static_assert(A_LOAD_ROWS % 8 == 0 && B_LOAD_ROWS % 8 == 0 && A_LOAD_ROWS <= 256 &&
                  B_LOAD_ROWS <= 256, "TMA boxes of 8..256 whole swizzle rows");
    static_assert(SWIZZLE >= 1, "swizzle is a group width in tiles");
    static_assert(SMEM <= 227 * 1024, "shared memory above the 227 KB a CTA may have");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536, "register file");
};

using cfg = config<TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG,
                   TB_RASTER_N, TB_SWIZZLE, TB_PROMOTE>;

/* The kernel's one parameter, passed as __grid_constant__ so the tensor maps stay in
 * parameter space, where TMA reads them. Field names as wgmma_shared.cuh expects them. */
struct kparams {                    /* 64-byte aligned through CUtensorMap */
    CUtensorMap a, b, d;            /* A (k x m boxes), B (k x n), D (n x m) */
    const __nv_bfloat16 *c;         /* NULL when beta == 0 */
    int64_t ldc;
    float alpha, beta;              /* alpha already times scale_a * scale_b */
    int m, n, k_iters;
    int ctiles_m, ctiles_n;         /* the tile grid in cluster tiles (CM x CN tiles each) */
    int num_ctiles;
    int band;                       /* raster band width in cluster tiles */
};

/* ---- the kernel ------------------------------------------------------------------------- */

/* Named barriers: BAR_WG + c (wgmma_shared.cuh), one consumer's 128 threads; BAR_ORDER + c,
 * pingpong's "consumer c may run its main loop" (256 threads: c syncs, the other arrives). */
constexpr int BAR_ORDER = 4;

/* One k32 step of one m64 block: the accumulator count picks the instruction's n. */
template <int N>
__device__ __forceinline__ void mma_k32(float (&acc)[N], uint32_t da, uint32_t db, int scale_d)
{
    if constexpr (N == 128) wgmma_e4m3_n256(acc, da, db, scale_d);
    else wgmma_e4m3_n128(acc, da, db, scale_d);
}

/* One k-block (4 k32 steps) of every m64 block into acc; `fresh` overwrites acc (scale_d = 0 on
 * the first step). da, db: the slot's descriptors (this consumer's first row). */
__device__ __forceinline__ void mma_kblock(float (&acc)[cfg::MI][cfg::ACC], uint32_t da,
                                           uint32_t db, bool fresh)
{
#pragma unroll
    for (int kk = 0; kk < 4; kk++) {
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
            mma_k32(acc[mi], da + (uint32_t)((mi * 64 * cfg::ROW_BYTES + kk * cfg::KSTEP) >> 4),
                    db + (uint32_t)((kk * cfg::KSTEP) >> 4), (!fresh || kk != 0) ? 1 : 0);
    }
}

/* acc += t, every accumulator (promotion into FP32 registers). */
__device__ __forceinline__ void add_acc(float (&acc)[cfg::MI][cfg::ACC],
                                        const float (&t)[cfg::MI][cfg::ACC])
{
#pragma unroll
    for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
        for (int i = 0; i < cfg::ACC; i++) acc[mi][i] += t[mi][i];
}

__global__ void __launch_bounds__(cfg::THREADS, 1) wgmma_fp8_gemm(const __grid_constant__ kparams p)
{
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t sA = base;
    const uint32_t sB = sA + cfg::STAGES * cfg::STAGE_A;
    const uint32_t sE = sB + cfg::STAGES * cfg::STAGE_B;
    const uint32_t full = sE + cfg::EPI_BYTES;      /* STAGES mbarriers of 8 bytes */
    const uint32_t empty = full + 8 * cfg::STAGES;

    const int wg = threadIdx.x >> 7, wtid = threadIdx.x & 127;
    const uint32_t crank = cfg::CSIZE > 1 ? cluster_ctarank() : 0;
    const int rank_m = cfg::CM > 1 ? (int)crank : 0, rank_n = cfg::CN > 1 ? (int)crank : 0;
    const int cid = blockIdx.x / cfg::CSIZE, ncl = gridDim.x / cfg::CSIZE;
    constexpr uint16_t mask = (uint16_t)((1u << cfg::CSIZE) - 1);

    if (threadIdx.x == 0) {
        for (int s = 0; s < cfg::STAGES; s++) {
            mbar_init(full + 8 * s, 1);
            mbar_init(empty + 8 * s, cfg::EMPTY_ARRIVALS);
        }
        fence_mbar_init();
    }
    if (cfg::CSIZE > 1) cluster_sync_all();
    else __syncthreads();

    if (wg == 0) {
        /* ---- producer ---- */
        setmaxnreg_dec<cfg::PRODUCER_REGS>();
        if (wtid == 0) {
            tma_prefetch(&p.a);
            tma_prefetch(&p.b);
            uint32_t slot = 0, phase = 0;
            for (int t = cid; t < p.num_ctiles; t += ncl) {
                int ctm, ctn;
                cluster_tile<cfg>(p, t, ctm, ctn);
                const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M;
                const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
                for (int kb = 0; kb < p.k_iters; kb++) {
                    mbar_wait(empty + 8 * slot, phase ^ 1u);
                    const uint32_t fb = full + 8 * slot;
                    mbar_expect_tx(fb, cfg::STAGE_BYTES);
                    const uint32_t a_dst = sA + slot * cfg::STAGE_A;
                    const uint32_t b_dst = sB + slot * cfg::STAGE_B;
                    if (cfg::CN > 1)
                        tma_load_multicast(a_dst + rank_n * cfg::A_LOAD_ROWS * cfg::ROW_BYTES, &p.a,
                                           fb, kb * cfg::BK, m0 + rank_n * cfg::A_LOAD_ROWS, mask);
                    else
                        tma_load(a_dst, &p.a, fb, kb * cfg::BK, m0);
                    if (cfg::CM > 1)
                        tma_load_multicast(b_dst + rank_m * cfg::B_LOAD_ROWS * cfg::ROW_BYTES, &p.b,
                                           fb, kb * cfg::BK, n0 + rank_m * cfg::B_LOAD_ROWS, mask);
                    else
                        tma_load(b_dst, &p.b, fb, kb * cfg::BK, n0);
                    if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
                }
            }
        }
    } else {
        /* ---- consumers ---- */
        setmaxnreg_inc<cfg::CONSUMER_REGS>();
        const int cw = wg - 1;
        const uint32_t da0 = desc_lo<1>(sA + (cfg::PINGPONG ? 0 : cw * cfg::WG_M * cfg::ROW_BYTES));
        const uint32_t db0 = desc_lo<1>(sB);
        const uint32_t ebuf = sE + cw * cfg::EPI_BUFS * cfg::EPI_BUF;
        float acc[cfg::MI][cfg::ACC];
        /* promotion's temporaries (a group of PROMOTE k-blocks); unused and removed by the
         * compiler without promotion */
        float tmp[cfg::MI][cfg::ACC];
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
            for (int i = 0; i < cfg::ACC; i++) acc[mi][i] = tmp[mi][i] = 0.f;

        /* Give slot s back to the producers of every CTA in the cluster. */
        auto release = [&](uint32_t s) {
            if (cfg::CSIZE == 1) {
                if (wtid == 0) mbar_arrive(empty + 8 * s);
            } else {
                if (wtid < cfg::CSIZE) mbar_arrive_cluster(empty + 8 * s, (uint32_t)wtid);
            }
        };

        uint32_t echunk = 0;
        const int my_tiles = (p.num_ctiles - cid + ncl - 1) / ncl;
        int j = 0;                          /* this CTA's tile count */
        for (int t = cid; t < p.num_ctiles; t += ncl, j++) {
            if (cfg::PINGPONG && (j & 1) != cw) continue;
            int ctm, ctn;
            cluster_tile<cfg>(p, t, ctm, ctn);
            const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M + (cfg::PINGPONG ? 0 : cw * cfg::WG_M);
            const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
            const uint32_t it0 = (uint32_t)j * (uint32_t)p.k_iters;  /* k-blocks loaded before */
            uint32_t slot = it0 % cfg::STAGES, phase = (it0 / cfg::STAGES) & 1u, prev = 0;
            if (cfg::PROMOTE) {
#pragma unroll
                for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
                    for (int i = 0; i < cfg::ACC; i++) acc[mi][i] = 0.f;
            }
            if (cfg::PINGPONG && j > 0) bar_sync(BAR_ORDER + cw, 256);
            /* One k-block: its MMAs into `into` (fresh: overwritten), committed; then k-block
             * kb-1's are waited for and its slot released. With promotion, the last k-block of
             * a group waits for its own MMAs too (wgmma.wait_group 0), adds the temporaries
             * into acc and releases its slot at once; ptxas serializes every wgmma if registers
             * of one are read while another is in flight (C7514), so the temporaries can only
             * be read with none in flight (two sets read under wait_group 1 were tried). */
            auto step = [&](float (&into)[cfg::MI][cfg::ACC], bool fresh, bool last) {
                mbar_wait(full + 8 * slot, phase);
                const uint32_t da = da0 + slot * (cfg::STAGE_A >> 4);
                const uint32_t db = db0 + slot * (cfg::STAGE_B >> 4);
                wgmma_fence();
                mma_kblock(into, da, db, fresh);
                wgmma_commit();
                /* prev holds an unreleased slot unless this k-block starts the tile (or, with
                 * promotion, a group): the condition is `!fresh` either way */
                if (cfg::PROMOTE != 0 && last) {
                    wgmma_wait<0>();
                    add_acc(acc, into);
                    if (!fresh) release(prev);
                    release(slot);
                } else if (!fresh) {
                    wgmma_wait<1>();        /* k-block kb-1's MMAs are done with prev */
                    release(prev);
                }
                prev = slot;
                if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
            };
            if constexpr (cfg::PROMOTE == 0) {
                for (int kb = 0; kb < p.k_iters; kb++) step(acc, kb == 0, false);
            } else {
                /* whole groups of GROUP k-blocks into the temporaries tmp, each added at its
                 * end (which also releases every slot of the group), then the k-blocks left
                 * over one group each. The group is unrolled so that each step's waits are
                 * known at compile time: a run-time choice between wait_group 0, 1 and none
                 * makes ptxas serialize the wgmmas (C7518, seen with promote 4). */
                int kb = 0;
                for (; kb + cfg::GROUP <= p.k_iters; kb += cfg::GROUP) {
#pragma unroll
                    for (int r = 0; r < cfg::GROUP; r++) step(tmp, r == 0, r == cfg::GROUP - 1);
                }
                for (; kb < p.k_iters; kb++) step(tmp, true, true);
            }
            /* Pingpong: the other consumer's main loop may start behind these MMAs. */
            if (cfg::PINGPONG && j + 1 < my_tiles) bar_arrive(BAR_ORDER + (cw ^ 1), 256);
            if constexpr (cfg::PROMOTE == 0) {
                wgmma_wait<0>();
                release(prev);
            }
            epilogue<cfg>(p, acc, ebuf, m0, n0, cw, wtid, echunk);
        }
        if (wtid == 0) bulk_wait_all();
    }
    /* No CTA may leave while its peer can still arrive on its barriers. */
    if (cfg::CSIZE > 1) cluster_sync_all();
}

/* ---- the host side ---------------------------------------------------------------------- */

struct fp8_state {
    kparams p;                      /* the kernel parameter, maps included */
    const void *a, *b;              /* the buffers the maps were encoded for */
    void *d;
    int64_t m, n, k, lda, ldb, ldd;
    int grid, clusters, sms, max_clusters;
    float scale_a, scale_b;
};

/* The problem's per-tensor scales (1 when the host's tb_problem has no gemm_scales; supports()
 * refuses such a problem for E4M3 operands anyway). */
void scales_of(const tb_problem *p, float *sa, float *sb)
{
    *sa = *sb = 1.f;
    if (p->struct_size >= TB_PROBLEM_G1_SIZE) {
        *sa = p->gemm_scales.scale_a;
        *sb = p->gemm_scales.scale_b;
    }
}

/* E4M3 A row-major and B column-major (tn), BF16 C (beta != 0) and D row-major, FP32
 * accumulation, batch 1; lda and ldb multiples of 16 (16-byte rows), ldd of 8. */
int fp8_supports(const tb_problem *p, char *why, size_t len)
{
    if (!p || p->struct_size < offsetof(tb_problem, gemm) + sizeof(tb_gemm))
        return tbv::no(why, len, "problem struct too small for a gemm");
    if (p->op != TB_OP_GEMM) return tbv::no(why, len, "op is not gemm");
    if (p->struct_size < TB_PROBLEM_G1_SIZE)
        return tbv::no(why, len, "problem struct has no gemm_scales (growth 1): an E4M3 product needs them");
    const tb_gemm *g = &p->gemm;
    if (g->a_type != TB_DTYPE_E4M3 || g->b_type != TB_DTYPE_E4M3)
        return tbv::no(why, len, "a and b must be e4m3");
    if (g->c_type != TB_DTYPE_BF16 || g->d_type != TB_DTYPE_BF16)
        return tbv::no(why, len, "c and d must be bf16");
    if (g->acc_type != TB_DTYPE_F32) return tbv::no(why, len, "accumulation must be f32");
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1)
        return tbv::no(why, len, "m, n, k and batch must be at least 1");
    if (g->batch != 1) return tbv::no(why, len, "batch 1 only");
    if (g->a_layout != TB_LAYOUT_ROW || g->b_layout != TB_LAYOUT_COL || g->d_layout != TB_LAYOUT_ROW)
        return tbv::no(why, len, "needs layout tn: a row-major, b column-major, d row-major "
                                 "(fp8 wgmma reads only k-major operands)");
    if (g->beta != 0.0 && g->c_layout != TB_LAYOUT_ROW) return tbv::no(why, len, "c must be row-major");
    if (g->lda < g->k) return tbv::no(why, len, "lda too small");
    if (g->ldb < g->k) return tbv::no(why, len, "ldb too small");
    if (g->ldd < g->n) return tbv::no(why, len, "ldd too small");
    if (g->beta != 0.0 && g->ldc < g->n) return tbv::no(why, len, "ldc too small");
    if (g->lda % 16 != 0)
        return tbv::no(why, len, "row pitch of a not a multiple of 16 bytes (lda = %lld must be a "
                       "multiple of 16): TMA cannot describe it", (long long)g->lda);
    if (g->ldb % 16 != 0)
        return tbv::no(why, len, "column pitch of b not a multiple of 16 bytes (ldb = %lld must be a "
                       "multiple of 16): TMA cannot describe it", (long long)g->ldb);
    if (g->ldd % 8 != 0)
        return tbv::no(why, len, "row pitch of d not a multiple of 16 bytes (ldd must be a "
                                 "multiple of 8): TMA cannot describe it");
    const float sa = p->gemm_scales.scale_a, sb = p->gemm_scales.scale_b;
    if (!(sa > 0.f) || !(sb > 0.f) || !isfinite(sa) || !isfinite(sb))
        return tbv::no(why, len, "scale_a and scale_b must be finite and > 0");
    if (g->m > INT_MAX - 512 || g->n > INT_MAX - 512 || g->k > INT_MAX - 128)
        return tbv::no(why, len, "m, n and k must be below 2^31 - 512");
    const int64_t tiles_m = (g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM) * cfg::CM;
    const int64_t tiles_n = (g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN) * cfg::CN;
    const int64_t k_iters = (g->k + cfg::BK - 1) / cfg::BK;
    if (tiles_m * tiles_n * k_iters >= ((int64_t)1 << 31))
        return tbv::no(why, len, "too many tiles times k-blocks for 32-bit ring counters");
    return 1;
}

void fp8_teardown(void *state) { free(state); }

int fp8_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    *state = NULL;
    const tb_gemm *g = &p->gemm;
    if (find_encode(msg, len)) return 1;
    cudaError_t e = cudaFuncSetAttribute(wgmma_fp8_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         cfg::SMEM);
    const int sms = e == cudaSuccess ? max_ctas(&e) : 0;   /* one CTA per SM: smem, 384 threads */
    int max_clusters = sms;
    if (e != cudaSuccess) {
        snprintf(msg, len, "kernel set-up failed (%d bytes of shared memory): %s", cfg::SMEM,
                 cudaGetErrorString(e));
        return 1;
    }
    if (cfg::CSIZE > 1) {
        cudaLaunchConfig_t lc = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cfg::CSIZE;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        lc.gridDim = dim3((unsigned)(sms / cfg::CSIZE * cfg::CSIZE), 1, 1);
        lc.blockDim = dim3(cfg::THREADS, 1, 1);
        lc.dynamicSmemBytes = cfg::SMEM;
        lc.attrs = at;
        lc.numAttrs = 1;
        e = cudaOccupancyMaxActiveClusters(&max_clusters, wgmma_fp8_gemm, &lc);
        if (e != cudaSuccess || max_clusters < 1) {
            snprintf(msg, len, "no cluster of %d CTAs fits: %s", cfg::CSIZE,
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 active clusters");
            return 1;
        }
    }
    fp8_state *s = (fp8_state *)calloc(1, sizeof *s);
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->m = g->m; s->n = g->n; s->k = g->k;
    s->lda = g->lda; s->ldb = g->ldb; s->ldd = g->ldd;
    scales_of(p, &s->scale_a, &s->scale_b);
    kparams &k = s->p;
    k.m = (int)g->m;
    k.n = (int)g->n;
    k.k_iters = (int)((g->k + cfg::BK - 1) / cfg::BK);
    k.ctiles_m = (int)((g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM));
    k.ctiles_n = (int)((g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN));
    k.num_ctiles = k.ctiles_m * k.ctiles_n;
    const int per = cfg::RASTER_N ? cfg::CN : cfg::CM;
    k.band = cfg::SWIZZLE / per > 1 ? cfg::SWIZZLE / per : 1;
    k.ldc = g->ldc;
    s->sms = sms;
    s->max_clusters = max_clusters;
    s->clusters = k.num_ctiles < max_clusters ? k.num_ctiles : max_clusters;
    s->grid = s->clusters * cfg::CSIZE;
    *state = s;
    return 0;
}

int fp8_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
               size_t workspace_bytes, tb_stream stream)
{
    (void)workspace;
    (void)workspace_bytes;
    fp8_state *s = (fp8_state *)state;
    if (!s || !g_encode) return (int)cudaErrorNotReady;
    const tb_gemm *g = &p->gemm;
    if (io->in[0] != s->a || io->in[1] != s->b || io->out[0] != s->d) {
        /* A and B: k inner (128 E4M3 = 128 bytes, the swizzle span), rows outer; D: n inner
         * (64 BF16), m outer (one consumer's rows) */
        CUresult r = encode_2d(&s->p.a, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, io->in[0], s->k, s->m,
                               s->lda, cfg::BK, cfg::A_LOAD_ROWS, CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS)
            r = encode_2d(&s->p.b, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, io->in[1], s->k, s->n,
                          s->ldb, cfg::BK, cfg::B_LOAD_ROWS, CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS)
            r = encode_2d(&s->p.d, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, io->out[0], s->n, s->m,
                          s->ldd, 64, cfg::WG_M, CU_TENSOR_MAP_SWIZZLE_128B);
        if (r != CUDA_SUCCESS) {
            s->a = s->b = NULL;
            s->d = NULL;
            return 1000 + (int)r;   /* a driver error, kept apart from runtime codes */
        }
        s->a = io->in[0];
        s->b = io->in[1];
        s->d = io->out[0];
    }
    s->p.c = g->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    float sa, sb;
    scales_of(p, &sa, &sb);
    s->p.alpha = (float)(g->alpha * (double)sa * (double)sb);
    s->p.beta = (float)g->beta;
    if (cfg::CSIZE == 1) {
        wgmma_fp8_gemm<<<s->grid, cfg::THREADS, cfg::SMEM, (cudaStream_t)stream>>>(s->p);
        return tbv::last_launch_error();
    }
    cudaLaunchConfig_t lc = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cfg::CSIZE;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.gridDim = dim3((unsigned)s->grid, 1, 1);
    lc.blockDim = dim3(cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = cfg::SMEM;
    lc.stream = (cudaStream_t)stream;
    lc.attrs = at;
    lc.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&lc, wgmma_fp8_gemm, s->p);
    return e != cudaSuccess ? (int)e : tbv::last_launch_error();
}

int fp8_describe(void *state, char *buf, size_t len)
{
    const fp8_state *s = (const fp8_state *)state;
    if (!s || !buf || !len) return 1;
    snprintf(buf, len,
             "ctas=%d clusters=%d/%d tiles=%dx%d k_blocks=%d band=%d smem=%d regs=%d/%d "
             "promote=%d scale_a=%g scale_b=%g",
             s->grid, s->clusters, s->max_clusters, s->p.ctiles_m * cfg::CM,
             s->p.ctiles_n * cfg::CN, s->p.k_iters, s->p.band, cfg::SMEM, cfg::PRODUCER_REGS,
             cfg::CONSUMER_REGS, cfg::PROMOTE, (double)s->scale_a, (double)s->scale_b);
    return 0;
}

/* The variant reads tb_problem up to gemm_scales: it says so, or the host offers it no FP8
 * problem (variant.h, TB_EXT_PROBLEM_SIZE). */
const void *fp8_extension(const char *key)
{
    static const uint32_t problem_size = (uint32_t)sizeof(tb_problem);
    return key && strcmp(key, TB_EXT_PROBLEM_SIZE) == 0 ? &problem_size : NULL;
}

const tb_param fp8_params[] = {
    TB_PARAM_STR("dtype", "e4m3"),
    TB_PARAM_INT("tile_m", cfg::TILE_M),
    TB_PARAM_INT("tile_n", cfg::TILE_N),
    TB_PARAM_INT("tile_k", cfg::BK),
    TB_PARAM_INT("cluster_m", cfg::CM),
    TB_PARAM_INT("cluster_n", cfg::CN),
    TB_PARAM_INT("stages", cfg::STAGES),
    TB_PARAM_STR("schedule", cfg::PINGPONG ? "pingpong" : "cooperative"),
    TB_PARAM_STR("raster", cfg::RASTER_N ? "n" : "m"),
    TB_PARAM_INT("swizzle", cfg::SWIZZLE),
    TB_PARAM_INT("promote", cfg::PROMOTE),
    TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

char fp8_name[128];

const tb_variant fp8_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), fp8_name, "wgmma", fp8_params, TB_SASS,
    fp8_supports, NULL, fp8_launch, fp8_setup, fp8_teardown, fp8_describe, fp8_extension
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(fp8_variant, fp8_name, "wgmma", fp8_params)
