/* wgmma_kernel.cuh - the device side of the Hopper TMA + wgmma GEMM, one skeleton for every
 * operand type: variants/wgmma/wgmma.cu (BF16, four layouts) and variants/wgmma_fp8/wgmma_fp8.cu
 * (E4M3, tn) include it; the design (ring, warp specialisation, clusters, raster, epilogue,
 * stream-K) is described at the top of wgmma.cu, the FP8 differences at the top of wgmma_fp8.cu.
 *
 * Owns: the kernel's parameter (kparams), the raster (cluster_tile), the producer's loads, and
 * the kernel body (gemm_body) that the family files wrap in their __global__ kernels. Included
 * here, each owning its part: wgmma_config.cuh (the point's configuration, config and cfg:
 * shared-memory layout, register split, static checks; an operand's stage layout and TMA boxes
 * in either major order, operand), wgmma_epilogue.cuh (TMA-store or predicated) and
 * wgmma_streamk.cuh (the stream-K units and hand-off).
 * No host code (wgmma_host.cuh) and no state; everything is in an anonymous namespace, one
 * copy per translation unit.
 *
 * The including file defines, before including it: TB_WGMMA_OP, its operand traits, a struct
 * with ELEM_BYTES (1 or 2: a k-block BK is 128 / ELEM_BYTES elements, one 128-byte swizzled
 * row), K_INSTR (the k of one wgmma: 16 BF16, 32 E4M3), MN_OK (whether MN-major operands are
 * allowed: wgmma transposes only 16-bit types), WHOLE_TILES (the consumer's schedule: false,
 * next_unit()'s units with stream-K; true, whole tiles with optional promotion, TB_PROMOTE),
 * TMA_TYPE and SCALED (host: wgmma_host.cuh), and mma<AMN, BMN>(acc, da, db, scale_d), one
 * k-step of one m64 block (the accumulator count picks the instruction's n); and the point's
 * knobs TB_TILE_M ... TB_SWIZZLE (CMake), with TB_EPI_CONFLICT, TB_STREAMK, TB_PROMOTE and the
 * TB_EXP_* experiments 0 or their defaults when not defined.
 */
#ifndef TB_VARIANTS_WGMMA_KERNEL_CUH
#define TB_VARIANTS_WGMMA_KERNEL_CUH

#include <cuda.h>           /* CUtensorMap: types only, libcuda is not linked */
#include <cuda_bf16.h>
#include <stdint.h>

#if !defined(TB_TILE_M) || !defined(TB_TILE_N) || !defined(TB_STAGES) ||                  \
    !defined(TB_CLUSTER_M) || !defined(TB_CLUSTER_N) || !defined(TB_PINGPONG) ||          \
    !defined(TB_RASTER_N) || !defined(TB_SWIZZLE) || !defined(TB_WGMMA_OP)
#error "wgmma_kernel.cuh needs TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG, TB_RASTER_N, TB_SWIZZLE and TB_WGMMA_OP"
#endif
#ifndef TB_EPI_CONFLICT
#define TB_EPI_CONFLICT 0
#endif
#ifndef TB_STREAMK
#define TB_STREAMK 0
#endif
#ifndef TB_PROMOTE
#define TB_PROMOTE 0
#endif
/* promotion staggered between the two cooperative consumers (FP8, PROMOTE >= 2): consumer 1's
 * first group is PROMOTE / 2 k-blocks, so the consumers' drains (wgmma.wait_group 0 and the
 * adds) fall on different k-blocks and one's MMAs keep the tensor pipe busy while the other
 * drains; 0: both drain on the same k-blocks (docs/wgmma-notes.md, "FP8") */
#ifndef TB_PROMOTE_STAGGER
#define TB_PROMOTE_STAGGER 0
#endif
/* Experiments (docs/wgmma-notes.md; no shipped point sets them, each adds an "exp" param):
 * TB_EXP_WAIT0 waits for each k-block's MMAs before releasing its slot (no group in flight);
 * TB_EXP_L2PROMO is the TMA loads' L2 promotion (0 none, 128, 256: the default);
 * TB_EXP_MAXCTAS caps the persistent grid; TB_EXP_SUSPEND gives mbarrier waits a suspend hint;
 * (TB_EXP_PD_UNROLL, the predicated epilogue's rows unrolled, is shipped since the
 * twenty-first session. TB_EXP_SK_PLAIN, the bisection
 * of the FP8 stream-K build: docs/wgmma-notes.md.) */
#ifndef TB_EXP_WAIT0
#define TB_EXP_WAIT0 0
#endif
#ifndef TB_EXP_L2PROMO
#define TB_EXP_L2PROMO 256
#endif
#ifndef TB_EXP_MAXCTAS
#define TB_EXP_MAXCTAS 0
#endif
#ifndef TB_EXP_SUSPEND              /* mbarrier try_wait suspend-time hint in ns (0: none) */
#define TB_EXP_SUSPEND 0
#endif

#include "wgmma_ptx.cuh"    /* the PTX wrappers: mbarriers, TMA, wgmma, stmatrix, descriptors */
#include "cp_async.cuh"     /* ld_shared_b32, for the predicated epilogue */

namespace {

#include "wgmma_config.cuh"   /* config, cfg, operand, opA, opB */

/* The kernel's one parameter, passed as __grid_constant__ so the tensor maps stay in
 * parameter space, where TMA reads them. */
struct kparams {                    /* 64-byte aligned through CUtensorMap */
    CUtensorMap a, b, d;            /* A, B (K-major: k x rows boxes; MN-major: 64 x k), D (n x m) */
    const __nv_bfloat16 *c;         /* NULL when beta == 0 */
    int64_t ldc;
    float alpha, beta;
    int m, n, k_iters;
    int ctiles_m, ctiles_n;         /* the tile grid in cluster tiles (CM x CN tiles each) */
    int num_ctiles;
    int band;                       /* raster band width in cluster tiles */
    const uint32_t *order;          /* raster h: cluster tile t at (order[t] >> 16, & 0xffff) */
    /* stream-K tail (cfg::STREAMK; otherwise sk_first = num_ctiles, sk_total = 0): tiles from
     * sk_first on are split by k-blocks, sk_total block-iterations in ranges of sk_per */
    int sk_first, sk_per, sk_total;
    float *ws;                      /* partial sums: slot c holds CTA c's, TILE_M x TILE_N */
    int *flags;                     /* flags[c] = 1 once slot c is written */
    /* the predicated epilogue (wgmma_gemm_pd, ldd not a multiple of 8): D and its row pitch.
     * They sit in the tail padding of the 64-byte-aligned struct (488 bytes of fields before
     * them, 504 with them), so the parameter stays 512 bytes and the TMA-store kernel's PTX
     * is unchanged. */
    __nv_bfloat16 *dptr;
    int64_t ldd;
};
static_assert(sizeof(kparams) == 512, "kparams grew: the TMA-store kernels' parameter changes size");

/* ---- the kernel ------------------------------------------------------------------------- */

/* Named barriers (0 is __syncthreads): 2 + c, one consumer warpgroup's 128 threads; 4 + c,
 * pingpong's "consumer c may run its main loop" (256 threads: c syncs, the other arrives);
 * 6, the two consumers of a stream-K tile (256 threads). */
constexpr int BAR_WG = 2, BAR_ORDER = 4, BAR_SK = 6;   /* 6: both consumers (stream-K) */

/* Cluster tile t -> (row, column) in the grid of cluster tiles: see the raster note above. */
__device__ __forceinline__ void cluster_tile(const kparams &p, int t, int &ctm, int &ctn)
{
    if (cfg::RASTER_H) {
        const uint32_t v = __ldg(p.order + t);
        ctm = (int)(v >> 16);
        ctn = (int)(v & 0xffffu);
    } else if (!cfg::RASTER_N) {
        const int per_band = p.band * p.ctiles_n;
        const int band = t / per_band, first = band * p.band;
        const int rows = min(p.band, p.ctiles_m - first);
        const int w = t - band * per_band;
        ctm = first + w % rows;
        ctn = w / rows;
    } else {
        const int per_band = p.band * p.ctiles_m;
        const int band = t / per_band, first = band * p.band;
        const int cols = min(p.band, p.ctiles_n - first);
        const int w = t - band * per_band;
        ctn = first + w % cols;
        ctm = w / cols;
    }
}

#include "wgmma_epilogue.cuh"  /* add_c(), epilogue<PD>() */

/* The producer's loads of an MN-major operand's k-block kb into the stage at dst (see
 * operand): every 64-wide block of the tile, or, when SHARE CTAs share it, this CTA's part
 * (rank) multicast to all of them. (A K-major operand's one box is loaded in the kernel.) */
template <int TILE, int SHARE>
__device__ __forceinline__ void load_mn(uint32_t dst, const CUtensorMap *map, uint32_t fb, int kb,
                                        int mn0, int rank)
{
    using op = operand<true, TILE, SHARE>;
    constexpr uint16_t mask = (uint16_t)((1u << cfg::CSIZE) - 1);
    if constexpr (SHARE == 1) {
        (void)rank;
#pragma unroll
        for (int b = 0; b < op::BLOCKS; b++)
            tma_load(dst + b * op::BLOCK_BYTES, map, fb, mn0 + b * 64, kb * cfg::BK);
    } else if constexpr (!op::SPLIT_K) {
#pragma unroll
        for (int i = 0; i < op::LOAD_BLOCKS; i++) {
            const int b = rank * op::LOAD_BLOCKS + i;
            tma_load_multicast(dst + b * op::BLOCK_BYTES, map, fb, mn0 + b * 64, kb * cfg::BK, mask);
        }
    } else {
#pragma unroll
        for (int b = 0; b < op::BLOCKS; b++)
            tma_load_multicast(dst + b * op::BLOCK_BYTES + rank * op::BOX_OUTER * cfg::ROW_BYTES, map,
                               fb, mn0 + b * 64, kb * cfg::BK + rank * op::BOX_OUTER, mask);
    }
}

/* The producer's loads of k-block kb of the tile at (m0, n0) into ring slot `slot`, its full
 * mbarrier armed with the stage's bytes first: one box per K-major operand (this CTA's part,
 * multicast, when a cluster shares it), load_mn()'s boxes per MN-major one. A macro, not a
 * function: written as a __forceinline__ function it moved the BF16 producer's PTX (the
 * phase update compiled differently), and both loops of gemm_body() use it. */
#define WG_LOAD_KBLOCK()                                                                        \
    const uint32_t fb = full + 8 * slot;                                                        \
    mbar_expect_tx(fb, cfg::STAGE_BYTES);                                                       \
    const uint32_t a_dst = sA + slot * cfg::STAGE_A;                                            \
    const uint32_t b_dst = sB + slot * cfg::STAGE_B;                                            \
    if constexpr (!AMN) {                                                                       \
        if (cfg::CN > 1)                                                                        \
            tma_load_multicast(a_dst + rank_n * cfg::A_LOAD_ROWS * cfg::ROW_BYTES, &p.a,        \
                               fb, kb * cfg::BK, m0 + rank_n * cfg::A_LOAD_ROWS,                \
                               (uint16_t)((1u << cfg::CSIZE) - 1));                             \
        else                                                                                    \
            tma_load(a_dst, &p.a, fb, kb * cfg::BK, m0);                                        \
    } else {                                                                                    \
        load_mn<cfg::TILE_M, cfg::CN>(a_dst, &p.a, fb, kb, m0, rank_n);                         \
    }                                                                                           \
    if constexpr (!BMN) {                                                                       \
        if (cfg::CM > 1)                                                                        \
            tma_load_multicast(b_dst + rank_m * cfg::B_LOAD_ROWS * cfg::ROW_BYTES, &p.b,        \
                               fb, kb * cfg::BK, n0 + rank_m * cfg::B_LOAD_ROWS,                \
                               (uint16_t)((1u << cfg::CSIZE) - 1));                             \
        else                                                                                    \
            tma_load(b_dst, &p.b, fb, kb * cfg::BK, n0);                                        \
    } else {                                                                                    \
        load_mn<cfg::TILE_N, cfg::CM>(b_dst, &p.b, fb, kb, n0, rank_m);                         \
    }

/* The whole-tile loop's pieces (Op::WHOLE_TILES, the FP8 family): one k-block (BK / K_INSTR
 * wgmma k-steps) of every m64 block into acc, `fresh` overwriting it (scale_d = 0 on the first
 * step; da, db: the slot's descriptors, this consumer's first row); acc += t (promotion into
 * FP32 registers). */
__device__ __forceinline__ void mma_kblock(float (&acc)[cfg::MI][cfg::ACC], uint32_t da,
                                           uint32_t db, bool fresh)
{
    constexpr int KSTEP = opA<false>::KSTEP;
#pragma unroll
    for (int kk = 0; kk < cfg::BK / cfg::Op::K_INSTR; kk++) {
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
            cfg::Op::mma<false, false>(acc[mi], da + (uint32_t)((mi * 64 * cfg::ROW_BYTES + kk * KSTEP) >> 4),
                                       db + (uint32_t)((kk * KSTEP) >> 4), (!fresh || kk != 0) ? 1 : 0);
    }
}

__device__ __forceinline__ void add_acc(float (&acc)[cfg::MI][cfg::ACC],
                                        const float (&t)[cfg::MI][cfg::ACC])
{
#pragma unroll
    for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
        for (int i = 0; i < cfg::ACC; i++) acc[mi][i] += t[mi][i];
}

#include "wgmma_streamk.cuh"  /* next_unit(), sk_handoff() */

/* The kernel's body. AMN, BMN: A, B MN-major (A column-major, B row-major) rather than
 * K-major; PD: the predicated epilogue (see epilogue()). The family files' kernels wrap it
 * (BF16: two per layout, so that the TMA-store kernel, PD false, compiles to the code it had
 * before the predicated one existed). Two schedules of the same ring, MMAs and epilogue:
 *  - the unit loop (BF16): next_unit()'s units, whole tiles then stream-K / split-K segments;
 *  - the whole-tile loop (Op::WHOLE_TILES, FP8): whole tiles only, its k-blocks optionally in
 *    groups of PROMOTE promoted into FP32 registers (wgmma_fp8.cu's top comment). Each loop is
 *    written as its family's kernel had it, so that each kernel's PTX stayed byte for byte. */
template <bool AMN, bool BMN, bool PD, bool SK = cfg::STREAMK>
__device__ __forceinline__ void gemm_body(const kparams &p)
{
    using A = opA<AMN>;
    using B = opB<BMN>;
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
            if constexpr (cfg::Op::WHOLE_TILES && !SK) {
                uint32_t slot = 0, phase = 0;
                for (int t = cid; t < p.num_ctiles; t += ncl) {
                    int ctm, ctn;
                    cluster_tile(p, t, ctm, ctn);
                    const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M;
                    const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
                    for (int kb = 0; kb < p.k_iters; kb++) {
                        mbar_wait(empty + 8 * slot, phase ^ 1u);
                        WG_LOAD_KBLOCK();
                        if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
                    }
                }
            } else {
            uint32_t slot = 0, phase = 0;
            int t = cid, s = cid * p.sk_per, tile, kb0, kb1;
            const int e = min(s + p.sk_per, p.sk_total);
            /* FP8's stream-K kernel: the split tiles' units only (its whole tiles are the plain
             * kernel's, launched before it: wgmma_host.cuh) */
            if constexpr (cfg::Op::WHOLE_TILES) t = p.sk_first;
            while (next_unit(p, ncl, t, s, e, tile, kb0, kb1)) {
                int ctm, ctn;
                cluster_tile(p, tile, ctm, ctn);
                const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M;
                const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
                for (int kb = kb0; kb < kb1; kb++) {
                    mbar_wait(empty + 8 * slot, phase ^ 1u);
                    WG_LOAD_KBLOCK();
                    if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
                }
            }
            }
        }
    } else {
        /* ---- consumers ---- */
        setmaxnreg_inc<cfg::CONSUMER_REGS>();
        const int cw = wg - 1;
        /* consumer cw's rows start WG_M * 128 bytes in: WG_M rows of 128 bytes (K-major) or
         * WG_M / 64 blocks of 8192 (MN-major), the same offset; so is m64 block mi's below */
        const uint32_t da0 = desc_lo<A::LBO>(sA + (cfg::PINGPONG ? 0 : cw * cfg::WG_M * cfg::ROW_BYTES));
        const uint32_t db0 = desc_lo<B::LBO>(sB);
        const uint32_t ebuf = sE + cw * cfg::EPI_BUFS * cfg::EPI_BUF;
        float acc[cfg::MI][cfg::ACC];
        /* promotion's temporaries (a group of PROMOTE k-blocks); unused and removed by the
         * compiler without promotion */
        float tmp[cfg::MI][cfg::ACC];
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
            for (int i = 0; i < cfg::ACC; i++) {
                if constexpr (cfg::Op::WHOLE_TILES) acc[mi][i] = tmp[mi][i] = 0.f;
                else acc[mi][i] = 0.f;
            }

        /* Give slot s back to the producers of every CTA in the cluster. */
        auto release = [&](uint32_t s) {
            if (cfg::CSIZE == 1) {
                if (wtid == 0) mbar_arrive(empty + 8 * s);
            } else {
                if (wtid < cfg::CSIZE) mbar_arrive_cluster(empty + 8 * s, (uint32_t)wtid);
            }
        };

        uint32_t echunk = 0;
        const int my_tiles = (p.num_ctiles - cid + ncl - 1) / ncl;   /* pingpong: no stream-K */
        int j = 0;                          /* this CTA's unit count */
        if constexpr (cfg::Op::WHOLE_TILES && !SK) {
        for (int t = cid; t < p.num_ctiles; t += ncl, j++) {
            if (cfg::PINGPONG && (j & 1) != cw) continue;
            int ctm, ctn;
            cluster_tile(p, t, ctm, ctn);
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
#if TB_PROMOTE_STAGGER
                static_assert(!cfg::PINGPONG && cfg::GROUP >= 2,
                              "a staggered promotion needs the cooperative schedule and promote >= 2");
                /* consumer 1: a first group of half a group, drained before the loop below,
                 * which so starts with nothing in flight, as consumer 0's does */
                if (cw == 1 && p.k_iters >= cfg::GROUP / 2) {
#pragma unroll
                    for (int r = 0; r < cfg::GROUP / 2; r++) step(tmp, r == 0, r == cfg::GROUP / 2 - 1);
                    kb = cfg::GROUP / 2;
                }
#endif
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
            epilogue<PD>(p, acc, ebuf, m0, n0, cw, wtid, echunk);
        }
        } else if constexpr (cfg::Op::WHOLE_TILES) {
        /* FP8's stream-K kernel (wgmma_host.cuh launches it after the plain kernel has run the
         * whole tiles): the split tiles' units, each the loop above with its k-blocks counted
         * per unit (k-blocks [kb0, kb1) of a tile, the ring at it0) and followed by the
         * hand-off. One kernel for both was 2.5-7 % slower where nothing is split and about 22 %
         * where it is (docs/perf.md, twentieth session). */
        auto unit = [&](int t, int kb0, int kb1, uint32_t it0) {
            int ctm, ctn;
            cluster_tile(p, t, ctm, ctn);
            const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M + (cfg::PINGPONG ? 0 : cw * cfg::WG_M);
            const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
            const int nk = kb1 - kb0;
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
                for (int kb = 0; kb < nk; kb++) step(acc, kb == 0, false);
            } else {
                /* whole groups of GROUP k-blocks into the temporaries tmp, each added at its
                 * end (which also releases every slot of the group), then the k-blocks left
                 * over one group each. The group is unrolled so that each step's waits are
                 * known at compile time: a run-time choice between wait_group 0, 1 and none
                 * makes ptxas serialize the wgmmas (C7518, seen with promote 4). A stream-K
                 * unit groups its own k-blocks from its first: a group never spans two units. */
                int kb = 0;
#if TB_PROMOTE_STAGGER
                static_assert(!cfg::PINGPONG && cfg::GROUP >= 2,
                              "a staggered promotion needs the cooperative schedule and promote >= 2");
                /* consumer 1: a first group of half a group, drained before the loop below,
                 * which so starts with nothing in flight, as consumer 0's does */
                if (cw == 1 && nk >= cfg::GROUP / 2) {
#pragma unroll
                    for (int r = 0; r < cfg::GROUP / 2; r++) step(tmp, r == 0, r == cfg::GROUP / 2 - 1);
                    kb = cfg::GROUP / 2;
                }
#endif
                for (; kb + cfg::GROUP <= nk; kb += cfg::GROUP) {
#pragma unroll
                    for (int r = 0; r < cfg::GROUP; r++) step(tmp, r == 0, r == cfg::GROUP - 1);
                }
                for (; kb < nk; kb++) step(tmp, true, true);
            }
            /* Pingpong: the other consumer's main loop may start behind these MMAs. */
            if (cfg::PINGPONG && j + 1 < my_tiles) bar_arrive(BAR_ORDER + (cw ^ 1), 256);
            if constexpr (cfg::PROMOTE == 0) {
                wgmma_wait<0>();
                release(prev);
            }
            if (!sk_handoff(p, acc, cid, cw * 128 + wtid, kb0, kb1)) return;
            epilogue<PD>(p, acc, ebuf, m0, n0, cw, wtid, echunk);
        };
        uint32_t it = 0;                    /* cooperative (config's static_assert) */
        int t = p.sk_first, s = cid * p.sk_per, tile, kb0, kb1;   /* no whole tile here */
        const int e = min(s + p.sk_per, p.sk_total);
        for (; next_unit(p, ncl, t, s, e, tile, kb0, kb1); j++) {
            unit(tile, kb0, kb1, it);
            it += (uint32_t)(kb1 - kb0);
        }
        } else {
        uint32_t it = 0;                    /* ring position: block-iterations loaded before */
        int t = cid, s = cid * p.sk_per, tile, kb0, kb1;
        const int e = min(s + p.sk_per, p.sk_total);
        for (; next_unit(p, ncl, t, s, e, tile, kb0, kb1); j++) {
            const uint32_t it0 = it;
            it += (uint32_t)(kb1 - kb0);
            if (cfg::PINGPONG && (j & 1) != cw) continue;
            int ctm, ctn;
            cluster_tile(p, tile, ctm, ctn);
            const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M + (cfg::PINGPONG ? 0 : cw * cfg::WG_M);
            const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
            uint32_t slot = it0 % cfg::STAGES, phase = (it0 / cfg::STAGES) & 1u, prev = 0;
            if (cfg::PINGPONG && j > 0) bar_sync(BAR_ORDER + cw, 256);
            for (int kb = kb0; kb < kb1; kb++) {
                mbar_wait(full + 8 * slot, phase);
                const uint32_t da = da0 + slot * (cfg::STAGE_A >> 4);
                const uint32_t db = db0 + slot * (cfg::STAGE_B >> 4);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < 4; kk++) {
#pragma unroll
                    for (int mi = 0; mi < cfg::MI; mi++) {
                        cfg::Op::mma<AMN, BMN>(acc[mi], da + (uint32_t)((mi * 64 * cfg::ROW_BYTES + kk * A::KSTEP) >> 4),
                                               db + (uint32_t)((kk * B::KSTEP) >> 4), (kb != kb0) || kk != 0);
                    }
                }
                wgmma_commit();
#if TB_EXP_WAIT0
                wgmma_wait<0>();
                release(slot);
#else
                if (kb > kb0) {
                    wgmma_wait<1>();        /* k-block kb-1's MMAs are done with prev */
                    release(prev);
                }
#endif
                prev = slot;
                if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
            }
            /* Pingpong: the other consumer's main loop may start behind these MMAs. */
            if (cfg::PINGPONG && j + 1 < my_tiles) bar_arrive(BAR_ORDER + (cw ^ 1), 256);
            wgmma_wait<0>();
            if (!TB_EXP_WAIT0) release(prev);
            if (cfg::STREAMK && !sk_handoff(p, acc, cid, cw * 128 + wtid, kb0, kb1)) continue;
            epilogue<PD>(p, acc, ebuf, m0, n0, cw, wtid, echunk);
        }
        }
        if (!PD && wtid == 0) bulk_wait_all();
    }
    /* No CTA may leave while its peer can still arrive on its barriers. */
    if (cfg::CSIZE > 1) cluster_sync_all();
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_KERNEL_CUH */
