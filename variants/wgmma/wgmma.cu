/* wgmma.cu - wgmma: the Hopper GEMM family (sm_90a), one templated source for the whole grid.
 *
 * D = alpha * A * B + beta * C, BF16 in, FP32 accumulation, BF16 out, batch 1, C and D
 * row-major (ldc, ldd), A and B in either major order, read in place (no copy): one library
 * per grid point exports four variants, one per layout (BLAS letters, A then B):
 *   tn  A m x k row-major (k contiguous, lda >= k), B k x n column-major (k contiguous, ldb >= k)
 *   nn  A m x k column-major (m contiguous, lda >= m), B column-major as in tn
 *   nt  A column-major as in nn, B k x n row-major (n contiguous, ldb >= n)
 *   tt  A row-major as in tn, B row-major as in nt
 * A K-major operand (A in t, B in n) is loaded and read as it always was. An MN-major one (A
 * in n, B in t) is loaded by TMA in its own order, a box of 64 MN elements (128 bytes, the
 * 128-byte swizzle's row) by 64 k-rows per 64-wide MN block, the blocks 8 KB apart, and
 * wgmma reads it with imm-trans = 1 and a descriptor whose LBO is 8192 (from one 64-wide MN
 * block to the next) and SBO 1024 (from one group of 8 k-rows to the next); a k16 step moves
 * the start address by 16 rows = 2048 bytes (docs/wgmma-notes.md, "MN-major operands").
 * The kernel and the host functions are templates on the two majors (AMN, BMN).
 *
 * One CTA = three warpgroups (384 threads) and a persistent loop over output tiles:
 *  - warpgroup 0, the producer, gives registers back (setmaxnreg.dec to 40) and one thread
 *    streams k-blocks of 64 through a STAGES-deep shared-memory ring with TMA
 *    (cp.async.bulk.tensor, 128-byte swizzle). Each slot has a "full" mbarrier (the producer
 *    arms it with the slot's byte count; the copy engine completes it) and an "empty"
 *    mbarrier (the consumers arrive when their MMAs no longer read the slot).
 *  - warpgroups 1 and 2, the consumers, take registers (setmaxnreg.inc to 232) and issue
 *    wgmma.mma_async straight from the swizzled slots, one commit group per k-block with one
 *    group left in flight (the slot of k-block kb-1 is released once kb's MMAs are queued).
 *    Schedule "cooperative": both consumers work on one TILE_M x TILE_N tile, each on its
 *    own TILE_M/2 rows. Schedule "pingpong": the consumers take alternate tiles (each a
 *    whole TILE_M x TILE_N tile) and an ordered pair of named barriers lets only one of them
 *    run its main loop at a time, so that one's epilogue overlaps the other's MMAs.
 *  - the epilogue: accumulators * alpha (+ beta * C, read from global memory when beta != 0)
 *    are packed to BF16 and written with stmatrix into a staging buffer per consumer, 64
 *    columns (128 bytes) wide, in the same 128-byte swizzle the TMA store reads (so the eight
 *    16-byte rows of each stmatrix phase land in eight different bank groups), then one thread
 *    stores the chunk with a TMA store (which clips at m and n). Two buffers per consumer when
 *    they fit (64-row consumers), so a chunk's stmatrix overlaps the previous chunk's store.
 *    The bank-conflict control (TB_EPI_CONFLICT=1) keeps the buffer unswizzled: its 128-byte
 *    row pitch sends all eight rows of a phase to the same four banks (8-way conflicts).
 *    Where ldd is not a multiple of 8 (D's rows not 16-byte aligned: no tensor map can
 *    describe them) the predicated epilogue stores D instead: the same staging, then the
 *    consumer's warps copy each staged row out with plain stores, 128 contiguous bytes a warp
 *    (4-byte stores where a row is 4-byte aligned, else 2-byte), every element checked against
 *    m and n. It is a kernel of its own, wgmma_gemm_pd (the body is one template, PD), chosen
 *    in setup() from ldd, so the TMA-store kernel's code is what it was (PTX of each layout's
 *    kernel byte-identical before and after, cubin .text too: docs/wgmma-notes.md).
 *  - clusters of 2 CTAs (2x1: along m, sharing the B tile; 1x2: along n, sharing the A tile):
 *    each CTA loads half of the shared operand and multicasts it to both (.multicast::cluster),
 *    and every consumer releases a slot in both CTAs (remote mbarrier arrive), because the
 *    peer's next multicast writes into this CTA's slot too.
 *  - the tile scheduler: static, cluster tile t = cluster id, + number of clusters, ... .
 *    Raster "m": consecutive tiles step down m inside a band of SWIZZLE tile rows, the band's
 *    columns are taken left to right, and the bands follow one another down m. Raster "n":
 *    the same with m and n exchanged. SWIZZLE counts tiles (cluster tiles are CM x CN).
 *    Raster "h": the cluster tiles in the order of a Hilbert curve over the smallest
 *    power-of-two square that holds the grid, cells outside it skipped (SWIZZLE unused, 1):
 *    setup() writes the order to a device table of num_ctiles entries, one load per tile.
 *
 * Edges: TMA loads fill out-of-bounds rows and k-columns with zeros (so any m, n, k works),
 * TMA stores clip. What TMA cannot load from, a pitch of A or B that is not a multiple of 16
 * bytes (lda or ldb not a multiple of 8, whichever dimension it is the pitch of), is refused in
 * supports(); any ldd is accepted (the predicated epilogue where it is not a multiple of 8).
 *
 * Host side: setup() finds cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion
 * (no libcuda link), sets the kernel's shared memory and sizes the persistent grid. The
 * tensor maps hold the buffers' addresses, which only launch() sees: launch() encodes them
 * (host-only arithmetic, no allocation, no synchronisation) when the pointers differ from the
 * last launch's, and passes them as a __grid_constant__ kernel parameter.
 *
 * CMake defines, one library per grid point (see CMakeLists.txt): TB_TILE_M, TB_TILE_N,
 * TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG (0 cooperative, 1 pingpong),
 * TB_RASTER_N (0 raster m, 1 raster n, 2 Hilbert order), TB_SWIZZLE, TB_EPI_CONFLICT (0, or 1 for the control),
 * TB_STREAMK (0, or 1: a stream-K tail; cooperative, no cluster). The library's query returns
 * the point's variants in the order tn, nn, nt, tt (indices 0-3). CMake builds a point from two
 * translation units of this file, TB_WGMMA_PART=1 (the tn kernel and the query) and 2 (the nn,
 * nt and tt kernels), so that the tn kernel is compiled alone, to the same SASS as before the
 * other layouts existed (in one module with them the compiler's choices for it moved in one
 * point), and the parts compile in parallel; TB_WGMMA_PART=0 (the default, a build by hand)
 * puts all four in one. With TB_AUTO_ENTRY=fn the file exports no query:
 * fn() returns the point's tn variant to wgmma_auto's dispatcher (auto.cu), and only the tn
 * kernel is instantiated.
 *
 * Stream-K tail (TB_STREAMK): when the tiles do not fill whole waves of the persistent grid
 * (G CTAs, T tiles, T > G, T % G != 0), the first (T/G - 1) * G tiles stay data-parallel and
 * the last R = T - that (G < R < 2G) are split by k-blocks: the R * k_iters block-iterations
 * are dealt out in G contiguous ranges of ceil(R * k_iters / G), one per CTA, so every CTA
 * ends together instead of the last wave running half empty (8192^3 at 128x256: 15.5 waves
 * of 132 CTAs, the 16th half full: 3 % of the time). A range that starts inside a tile
 * computes a partial sum and leaves it, FP32, in the workspace (slot cid; each CTA leaves at
 * most one) with a flag; the CTA whose range holds the tile's first k-block owns the tile: it
 * waits for the flags of the CTAs after it whose ranges start inside the tile, adds their
 * partials and runs the epilogue. The owner's segment comes last in its range and the
 * partials first in theirs, so the wait is short; every CTA is resident (one per SM, grid <=
 * SMs), so it ends. launch() zeroes the flags (G ints) before each launch.
 * Split-K, the same machinery (eleventh session, issue 22; written, not yet run on a GPU): when
 * the tiles fill at most half of the grid (T <= G/2) and k has at least WG_SK_MIN_K_ITERS blocks,
 * the grid is every SM and ALL tiles are split: T * k_iters block-iterations in G ranges of
 * ceil(T * k_iters / G) (at least WG_SK_MIN_PER), so a tile's k is summed by several CTAs (llm
 * M = 128, N = 4096: 16 tiles of 128x256 on 132 SMs, 8 CTAs a tile). A range is then shorter
 * than a tile's k, so an owner may wait for several partials, in range order; each CTA still
 * leaves at most one partial and writes it before it owns anything, so no wait is circular.
 */
#include "../common/gemm_common.cuh"

#include <cuda.h>           /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>   /* PFN_cuTensorMapEncodeTiled */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#if !defined(TB_TILE_M) || !defined(TB_TILE_N) || !defined(TB_STAGES) ||                  \
    !defined(TB_CLUSTER_M) || !defined(TB_CLUSTER_N) || !defined(TB_PINGPONG) ||          \
    !defined(TB_RASTER_N) || !defined(TB_SWIZZLE)
#error "wgmma.cu needs TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG, TB_RASTER_N and TB_SWIZZLE"
#endif
#ifndef TB_EPI_CONFLICT
#define TB_EPI_CONFLICT 0
#endif
/* Which of the point's kernels this translation unit holds (see the top of the file): 0 all
 * four and the query; 1 tn and the query; 2 nn, nt and tt. */
#ifndef TB_WGMMA_PART
#define TB_WGMMA_PART 0
#endif
#ifndef TB_STREAMK
#define TB_STREAMK 0
#endif
/* split-K (stream-K points, under half a wave): only from 8 k-blocks, ranges of at least 4 */
#define WG_SK_MIN_K_ITERS 8
#define WG_SK_MIN_PER 4
/* Experiments (docs/wgmma-notes.md; no shipped point sets them, each adds an "exp" param):
 * TB_EXP_WAIT0 waits for each k-block's MMAs before releasing its slot (no group in flight);
 * TB_EXP_L2PROMO is the TMA loads' L2 promotion (0 none, 128, 256: the default);
 * TB_EXP_MAXCTAS caps the persistent grid; TB_EXP_SUSPEND gives mbarrier waits a suspend hint. */
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

template <int TM_, int TN_, int STAGES_, int CM_, int CN_, int PP_, int RN_, int SW_, int EC_,
          int SK_>
struct config {
    static constexpr int TILE_M = TM_, TILE_N = TN_, BK = 64, STAGES = STAGES_;
    static constexpr int CM = CM_, CN = CN_, CSIZE = CM_ * CN_;
    static constexpr bool PINGPONG = PP_ != 0, RASTER_N = RN_ == 1, CONFLICT = EC_ != 0;
    static constexpr bool RASTER_H = RN_ == 2;
    static constexpr bool STREAMK = SK_ != 0;
    static constexpr int SWIZZLE = SW_;
    static constexpr int THREADS = 384;                 /* producer + 2 consumer warpgroups */
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static constexpr int WG_M = PINGPONG ? TILE_M : TILE_M / 2;  /* rows one consumer owns */
    static constexpr int MI = WG_M / 64;                /* m64 wgmmas per k16 step */
    static constexpr int ACC = TILE_N / 2;              /* f32 accumulators per m64 block */
    static constexpr int ROW_BYTES = BK * 2;            /* one 128-byte swizzled row */
    static constexpr int STAGE_A = TILE_M * ROW_BYTES, STAGE_B = TILE_N * ROW_BYTES;
    static constexpr int STAGE_BYTES = STAGE_A + STAGE_B;
    /* Rows of the shared operand each CTA of a cluster loads and multicasts. */
    static constexpr int A_LOAD_ROWS = TILE_M / CN, B_LOAD_ROWS = TILE_N / CM;
    static constexpr int CHUNKS = TILE_N / 64;          /* 64-column epilogue chunks */
    static constexpr int EPI_BUF = WG_M * 128;          /* one chunk of one consumer */
    static constexpr int EPI_BUFS = WG_M == 64 ? 2 : 1; /* per consumer */
    static constexpr int EPI_BYTES = 2 * EPI_BUFS * EPI_BUF;
    static constexpr int EMPTY_ARRIVALS = (PINGPONG ? 1 : 2) * CSIZE;
    /* 1024 bytes of slack to align the ring to the 1024-byte swizzle atom, then the ring,
     * the epilogue buffers and the mbarriers. */
    static constexpr int SMEM = 1024 + STAGES * STAGE_BYTES + EPI_BYTES + 16 * STAGES;

    static_assert(TILE_N == 128 || TILE_N == 256, "tile_n must be 128 or 256");
    static_assert(WG_M == 64 || WG_M == 128, "a consumer owns 64 or 128 rows");
    static_assert(MI * ACC <= 128, "at most 128 accumulators per consumer thread");
    static_assert(STAGES >= 2, "the ring needs at least 2 stages");
    static_assert(CSIZE == 1 || CSIZE == 2, "clusters of 1 or 2 CTAs (1x1, 2x1, 1x2)");
    static_assert(A_LOAD_ROWS % 8 == 0 && B_LOAD_ROWS % 8 == 0 && A_LOAD_ROWS <= 256 &&
                  B_LOAD_ROWS <= 256, "TMA boxes of 8..256 whole swizzle rows");
    static_assert(SWIZZLE >= 1, "swizzle is a group width in tiles");
    static_assert(RN_ >= 0 && RN_ <= 2 && (!RASTER_H || SWIZZLE == 1), "raster m, n, or h (swizzle 1)");
    static_assert(!STREAMK || (CSIZE == 1 && !PINGPONG), "stream-K: cooperative, no cluster");
    static_assert(SMEM <= 227 * 1024, "shared memory above the 227 KB a CTA may have");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536, "register file");
};

using cfg = config<TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG,
                   TB_RASTER_N, TB_SWIZZLE, TB_EPI_CONFLICT, TB_STREAMK>;

/* One operand (A: TILE = TILE_M, shared by the CN CTAs of a 1x2 cluster; B: TILE = TILE_N,
 * shared by the CM CTAs of a 2x1 cluster) in its major order. Either way a stage holds TILE x
 * 64 BF16 in 128-byte swizzled rows, TILE * 128 bytes:
 *  - K-major (MN = false): row r (MN index r, its 64 k) at r * 128; one TMA box of 64 k x TILE
 *    rows, or of 64 k x TILE / SHARE rows from each CTA of a cluster sharing the operand.
 *  - MN-major (MN = true): TILE / 64 blocks of 64 MN elements, block b at b * 8192, k-row r of
 *    a block (its 64 MN elements, 128 bytes) at r * 128 in it; one TMA box of 64 MN x 64 k per
 *    block. A CTA sharing the operand loads BLOCKS / SHARE whole blocks, or, when the blocks do
 *    not divide (64-wide tile, two CTAs), 64 / SHARE k-rows of every block (SPLIT_K). */
template <bool MN, int TILE, int SHARE>
struct operand {
    static constexpr int BLOCKS = TILE / 64;            /* MN-major: 64-wide MN blocks */
    static constexpr int BLOCK_BYTES = 64 * cfg::ROW_BYTES;   /* 8192: one block of a stage */
    static constexpr bool SPLIT_K = MN && SHARE > 1 && BLOCKS % SHARE != 0;
    static constexpr int LOAD_ROWS = TILE / SHARE;      /* K-major: rows each CTA loads */
    static constexpr int LOAD_BLOCKS = SPLIT_K ? BLOCKS : BLOCKS / SHARE;   /* MN-major */
    static constexpr int BOX_OUTER = MN ? (SPLIT_K ? cfg::BK / SHARE : cfg::BK) : LOAD_ROWS;
    /* descriptor: leading byte offset >> 4 (K-major swizzled: unused, 1; MN-major: from one
     * 64-wide MN block to the next) and the bytes one k16 step moves the start address (K-major:
     * 16 elements along the row; MN-major: 16 k-rows) */
    static constexpr uint32_t LBO = MN ? (uint32_t)BLOCK_BYTES >> 4 : 1u;
    static constexpr int KSTEP = MN ? 16 * cfg::ROW_BYTES : 16 * 2;
    static_assert(!MN || (TILE % 64 == 0 && LOAD_BLOCKS * (SPLIT_K ? 1 : SHARE) == BLOCKS),
                  "an MN-major tile is made of 64-wide blocks, each loaded once");
    static_assert(BOX_OUTER % 8 == 0 && BOX_OUTER <= 256, "TMA boxes of 8..256 whole swizzle rows");
};

template <bool AMN> using opA = operand<AMN, cfg::TILE_M, cfg::CN>;
template <bool BMN> using opB = operand<BMN, cfg::TILE_N, cfg::CM>;

/* The layout's name and index: A's letter then B's (BLAS: t = A row-major / B column-major is
 * K-major, n = A column-major, t = B row-major is MN-major); the query's order tn, nn, nt, tt. */
template <bool AMN, bool BMN>
constexpr const char *layout_name() { return AMN ? (BMN ? "nt" : "nn") : (BMN ? "tt" : "tn"); }
template <bool AMN, bool BMN>
constexpr int layout_index() { return AMN ? (BMN ? 2 : 1) : (BMN ? 3 : 0); }

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

/* v0, v1 (D at row, col and col + 1) += beta * C there; outside m or n adds nothing. */
__device__ __forceinline__ void add_c(const kparams &p, int row, int col, float &v0, float &v1)
{
    if (row >= p.m || col >= p.n) return;
    const __nv_bfloat16 *c = p.c + (int64_t)row * p.ldc + col;
    if (col + 1 < p.n && ((uintptr_t)c & 3u) == 0) {
        const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(c));
        v0 = fmaf(p.beta, f.x, v0);
        v1 = fmaf(p.beta, f.y, v1);
    } else {
        v0 = fmaf(p.beta, __bfloat162float(c[0]), v0);
        if (col + 1 < p.n) v1 = fmaf(p.beta, __bfloat162float(c[1]), v1);
    }
}

/* One consumer's epilogue: its WG_M x TILE_N block at (m0, n0), 64 columns at a time,
 * through its staging buffers (ebuf) and TMA stores issued by its thread 0. echunk counts
 * the chunks this consumer has staged, to pick the buffer and keep the bulk groups paired
 * with it. PD (the predicated epilogue, wgmma_gemm_pd: ldd not a multiple of 8, a pitch TMA
 * cannot describe): the same staging, then the consumer's 128 threads copy the chunk out
 * themselves, one row of 64 columns (128 bytes) per warp at a time, each lane 2 columns with
 * one 4-byte store where the address is 4-byte aligned, else two 2-byte ones, every element
 * checked against m and n; the bar_sync that opens the next chunk keeps a buffer from being
 * restaged before every warp has read it out (no bulk groups). */
template <bool PD>
__device__ __forceinline__ void epilogue(const kparams &p, const float (&acc)[cfg::MI][cfg::ACC],
                                         uint32_t ebuf, int m0, int n0, int cw, int wtid,
                                         uint32_t &echunk)
{
    if (m0 >= p.m) return;                  /* a cluster's padding tile: nothing to store */
    const int warp = wtid >> 5, lane = wtid & 31;
    const int q = lane >> 3;                /* the 8x8 matrix this lane addresses */
    const int srow = warp * 16 + (q & 1) * 8 + (lane & 7);   /* its row, m64 block 0 */
    const int frow = m0 + warp * 16 + (lane >> 2);           /* fragment row, for C */
    const bool has_c = p.beta != 0.f;
#pragma unroll
    for (int ch = 0; ch < cfg::CHUNKS; ch++) {
        if (n0 + ch * 64 >= p.n) break;     /* uniform over the warpgroup */
        const uint32_t buf = ebuf + (echunk % cfg::EPI_BUFS) * cfg::EPI_BUF;
        /* The store that last read this buffer must be done reading it. */
        if (!PD && wtid == 0) bulk_wait_read<cfg::EPI_BUFS - 1>();
        bar_sync(BAR_WG + cw, 128);
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++) {
#pragma unroll
            for (int gp = 0; gp < 4; gp++) {
                const int g = ch * 8 + gp * 2;  /* the first of two 8-column groups */
                float v[8];
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    v[r] = acc[mi][g * 4 + r] * p.alpha;
                    v[4 + r] = acc[mi][(g + 1) * 4 + r] * p.alpha;
                }
                if (has_c) {
                    const int col = n0 + g * 8 + 2 * (lane & 3);
                    const int row = frow + mi * 64;
                    add_c(p, row, col, v[0], v[1]);
                    add_c(p, row + 8, col, v[2], v[3]);
                    add_c(p, row, col + 8, v[4], v[5]);
                    add_c(p, row + 8, col + 8, v[6], v[7]);
                }
                const int row = mi * 64 + srow;
                const int cidx = gp * 2 + (q >> 1);     /* 16-byte column chunk, 0..7 */
                const int phys = cfg::CONFLICT ? cidx : (cidx ^ (row & 7));
                stmatrix_x4(buf + (uint32_t)(row * 128 + phys * 16), pack_bf16(v[0], v[1]),
                            pack_bf16(v[2], v[3]), pack_bf16(v[4], v[5]), pack_bf16(v[6], v[7]));
            }
        }
        if constexpr (!PD) {
            fence_proxy_async();            /* make the stmatrix writes visible to TMA */
            bar_sync(BAR_WG + cw, 128);
            if (wtid == 0) {
                tma_store(&p.d, buf, n0 + ch * 64, m0);
                bulk_commit();
            }
        } else {
            bar_sync(BAR_WG + cw, 128);     /* the chunk is staged: every warp reads it out */
            const int col = n0 + ch * 64 + 2 * lane;
            const int cidx = lane >> 2;     /* the lane's 16-byte unit of the staged row */
            const bool in0 = col < p.n, in1 = col + 1 < p.n;
            for (int r = warp; r < cfg::WG_M && m0 + r < p.m; r += 4) {
                const int phys = cfg::CONFLICT ? cidx : (cidx ^ (r & 7));
                const uint32_t v = ld_shared_b32(buf + (uint32_t)(r * 128 + phys * 16 + (lane & 3) * 4));
                __nv_bfloat16 *d = p.dptr + (int64_t)(m0 + r) * p.ldd + col;
                if (in1 && ((uintptr_t)d & 3u) == 0) {
                    *reinterpret_cast<uint32_t *>(d) = v;
                } else {
                    if (in0) *reinterpret_cast<uint16_t *>(d) = (uint16_t)(v & 0xffffu);
                    if (in1) *reinterpret_cast<uint16_t *>(d + 1) = (uint16_t)(v >> 16);
                }
            }
        }
        echunk++;
    }
}

/* One k16 step of one m64 block: the accumulator count picks the instruction's n, the
 * operands' majors its transpose flags. */
template <bool AMN, bool BMN, int N>
__device__ __forceinline__ void mma_k16(float (&acc)[N], uint32_t da, uint32_t db, int scale_d)
{
    if constexpr (N == 128) wgmma_n256<AMN ? 1 : 0, BMN ? 1 : 0>(acc, da, db, scale_d);
    else wgmma_n128<AMN ? 1 : 0, BMN ? 1 : 0>(acc, da, db, scale_d);
}

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

/* This CTA's next unit of work: whole data-parallel tiles (t, stride ncl) while below
 * sk_first, then the k-block segments of its stream-K range [s, e). 0 when none is left. */
__device__ __forceinline__ bool next_unit(const kparams &p, int ncl, int &t, int &s, int e,
                                          int &tile, int &kb0, int &kb1)
{
    if (t < p.sk_first) {
        tile = t;
        kb0 = 0;
        kb1 = p.k_iters;
        t += ncl;
        return true;
    }
    if (cfg::STREAMK && s < e) {
        tile = p.sk_first + s / p.k_iters;
        kb0 = s % p.k_iters;
        kb1 = min(p.k_iters, kb0 + (e - s));
        s += kb1 - kb0;
        return true;
    }
    return false;
}

__device__ __forceinline__ int ld_acquire(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release(int *p, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

/* The kernel's body. AMN, BMN: A, B MN-major (A column-major, B row-major) rather than
 * K-major; PD: the predicated epilogue (see epilogue()). Two kernels below wrap it, so that
 * the TMA-store kernel (PD false) compiles to the code it had before the predicated one
 * existed. */
template <bool AMN, bool BMN, bool PD>
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
            uint32_t slot = 0, phase = 0;
            int t = cid, s = cid * p.sk_per, tile, kb0, kb1;
            const int e = min(s + p.sk_per, p.sk_total);
            while (next_unit(p, ncl, t, s, e, tile, kb0, kb1)) {
                int ctm, ctn;
                cluster_tile(p, tile, ctm, ctn);
                const int m0 = (ctm * cfg::CM + rank_m) * cfg::TILE_M;
                const int n0 = (ctn * cfg::CN + rank_n) * cfg::TILE_N;
                for (int kb = kb0; kb < kb1; kb++) {
                    mbar_wait(empty + 8 * slot, phase ^ 1u);
                    const uint32_t fb = full + 8 * slot;
                    mbar_expect_tx(fb, cfg::STAGE_BYTES);
                    const uint32_t a_dst = sA + slot * cfg::STAGE_A;
                    const uint32_t b_dst = sB + slot * cfg::STAGE_B;
                    if constexpr (!AMN) {
                        if (cfg::CN > 1)
                            tma_load_multicast(a_dst + rank_n * cfg::A_LOAD_ROWS * cfg::ROW_BYTES, &p.a,
                                               fb, kb * cfg::BK, m0 + rank_n * cfg::A_LOAD_ROWS,
                                               (uint16_t)((1u << cfg::CSIZE) - 1));
                        else
                            tma_load(a_dst, &p.a, fb, kb * cfg::BK, m0);
                    } else {
                        load_mn<cfg::TILE_M, cfg::CN>(a_dst, &p.a, fb, kb, m0, rank_n);
                    }
                    if constexpr (!BMN) {
                        if (cfg::CM > 1)
                            tma_load_multicast(b_dst + rank_m * cfg::B_LOAD_ROWS * cfg::ROW_BYTES, &p.b,
                                               fb, kb * cfg::BK, n0 + rank_m * cfg::B_LOAD_ROWS,
                                               (uint16_t)((1u << cfg::CSIZE) - 1));
                        else
                            tma_load(b_dst, &p.b, fb, kb * cfg::BK, n0);
                    } else {
                        load_mn<cfg::TILE_N, cfg::CM>(b_dst, &p.b, fb, kb, n0, rank_m);
                    }
                    if (++slot == cfg::STAGES) { slot = 0; phase ^= 1u; }
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
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
            for (int i = 0; i < cfg::ACC; i++) acc[mi][i] = 0.f;

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
                        mma_k16<AMN, BMN>(acc[mi], da + (uint32_t)((mi * 64 * cfg::ROW_BYTES + kk * A::KSTEP) >> 4),
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
            if (cfg::STREAMK) {
                /* each consumer thread keeps its own fragments: slot layout [i][256 threads] */
                const int ct = cw * 128 + wtid;
                if (kb0 != 0) {             /* a partial: leave it for the tile's owner */
                    float *w = p.ws + (size_t)cid * (cfg::TILE_M * cfg::TILE_N);
#pragma unroll
                    for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
                        for (int i = 0; i < cfg::ACC; i++)
                            __stcg(w + (mi * cfg::ACC + i) * 256 + ct, acc[mi][i]);
                    __threadfence();
                    bar_sync(BAR_SK, 256);
                    if (ct == 0) st_release(p.flags + cid, 1);
                    continue;
                }
                /* the owner: add the partials of the CTAs whose ranges start in this tile */
                for (int have = kb1, c2 = cid + 1; have < p.k_iters; c2++) {
                    if (ct == 0)
                        while (ld_acquire(p.flags + c2) == 0) { }
                    bar_sync(BAR_SK, 256);
                    const float *w = p.ws + (size_t)c2 * (cfg::TILE_M * cfg::TILE_N);
#pragma unroll
                    for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
                        for (int i = 0; i < cfg::ACC; i++)
                            acc[mi][i] += __ldcg(w + (mi * cfg::ACC + i) * 256 + ct);
                    const int s2 = c2 * p.sk_per, e2 = min(s2 + p.sk_per, p.sk_total);
                    have += min(p.k_iters - have, e2 - s2);
                }
            }
            epilogue<PD>(p, acc, ebuf, m0, n0, cw, wtid, echunk);
        }
        if (!PD && wtid == 0) bulk_wait_all();
    }
    /* No CTA may leave while its peer can still arrive on its barriers. */
    if (cfg::CSIZE > 1) cluster_sync_all();
}

/* D stored by TMA (ldd a multiple of 8). */
template <bool AMN, bool BMN>
__global__ void __launch_bounds__(cfg::THREADS, 1) wgmma_gemm(const __grid_constant__ kparams p)
{
    gemm_body<AMN, BMN, false>(p);
}

/* D stored by the consumers' predicated stores (any ldd; see epilogue()). */
template <bool AMN, bool BMN>
__global__ void __launch_bounds__(cfg::THREADS, 1) wgmma_gemm_pd(const __grid_constant__ kparams p)
{
    gemm_body<AMN, BMN, true>(p);
}

/* ---- the host side ---------------------------------------------------------------------- */

#if TB_WGMMA_PART == 2
/* The MN-major TMA-store kernels, named here before the host functions name them and their
 * predicated twins, so that the compiler emits them first and in their old order: their PTX
 * then matches the build before the predicated kernels existed byte for byte, labels and all. */
[[maybe_unused]] void (*const tma_kernels_in_order[])(kparams) = {
    wgmma_gemm<true, false>, wgmma_gemm<true, true>, wgmma_gemm<false, true>
};
#endif

PFN_cuTensorMapEncodeTiled_v12000 g_encode;

/* Find cuTensorMapEncodeTiled in the driver the runtime already loaded. */
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

/* A 2-D BF16 tensor map: `inner` contiguous elements per row, `outer` rows ld elements
 * apart, boxes of box_inner x box_outer. Out-of-bounds elements load as zero. */
CUresult encode_2d(CUtensorMap *map, const void *ptr, int64_t inner, int64_t outer, int64_t ld,
                   uint32_t box_inner, uint32_t box_outer, CUtensorMapSwizzle swizzle)
{
    const cuuint64_t dims[2] = { (cuuint64_t)inner, (cuuint64_t)outer };
    const cuuint64_t strides[1] = { (cuuint64_t)ld * 2 };
    const cuuint32_t box[2] = { box_inner, box_outer };
    const cuuint32_t estr[2] = { 1, 1 };
    return g_encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims,
                    strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                    TB_EXP_L2PROMO == 0 ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                    : TB_EXP_L2PROMO == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                            : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

struct wg_state {
    kparams p;                      /* the kernel parameter, maps included */
    bool pd;                        /* ldd not a multiple of 8: wgmma_gemm_pd, no map of D */
    const void *a, *b;              /* the buffers the maps were encoded for */
    void *d;
    int64_t m, n, k, lda, ldb, ldd;
    int grid, clusters, sms, max_clusters;
    uint32_t *order;                /* raster h: the device table (kparams::order) */
};

/* (x, y) -> its index along a Hilbert curve over an s x s square, s a power of two. */
uint64_t hilbert_xy2d(uint32_t s, uint32_t x, uint32_t y)
{
    uint64_t d = 0;
    for (uint32_t q = s / 2; q > 0; q /= 2) {
        const uint32_t rx = (x & q) ? 1 : 0, ry = (y & q) ? 1 : 0;
        d += (uint64_t)q * q * ((3 * rx) ^ ry);
        if (ry == 0) {   /* rotate the quadrant */
            if (rx == 1) { x = s - 1 - x; y = s - 1 - y; }
            const uint32_t t = x; x = y; y = t;
        }
    }
    return d;
}

int by_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Raster h: the Hilbert order of the cm x cn cluster tiles into a device table (*out). */
int hilbert_table(int cm, int cn, uint32_t **out, char *msg, size_t len)
{
    *out = NULL;
    if (cm > 65535 || cn > 65535) { snprintf(msg, len, "raster h: %d x %d cluster tiles", cm, cn); return 1; }
    uint32_t side = 1;
    while (side < (uint32_t)cm || side < (uint32_t)cn) side *= 2;
    const size_t cells = (size_t)cm * (size_t)cn;
    uint64_t *key = (uint64_t *)malloc(cells * sizeof *key);   /* Hilbert index << 32 | cell */
    uint32_t *h = (uint32_t *)malloc(cells * sizeof *h);
    if (!key || !h) { free(key); free(h); snprintf(msg, len, "out of memory"); return 1; }
    size_t at = 0;
    for (int x = 0; x < cm; x++)
        for (int y = 0; y < cn; y++)
            key[at++] = hilbert_xy2d(side, (uint32_t)x, (uint32_t)y) << 32 |
                        ((uint64_t)x << 16 | (uint64_t)y);
    qsort(key, cells, sizeof *key, by_key);
    for (size_t i = 0; i < cells; i++) h[i] = (uint32_t)(key[i] & 0xffffffffu);
    free(key);
    cudaError_t e = cudaMalloc((void **)out, at * sizeof *h);
    if (e == cudaSuccess) e = cudaMemcpy(*out, h, at * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    if (e != cudaSuccess) {
        if (*out) cudaFree(*out);
        *out = NULL;
        snprintf(msg, len, "raster h: the order table: %s", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

/* The layout's own problems only: A and B in this variant's majors, C (beta != 0) and D
 * row-major, batch 1; the pitches TMA loads from (lda: A's row or column, ldb: B's column or
 * row) a multiple of 16 bytes; ldd any (not a multiple of 8: the predicated epilogue). */
template <bool AMN, bool BMN>
int wg_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_layout_ok(p, AMN ? TB_LAYOUT_COL : TB_LAYOUT_ROW,
                                  BMN ? TB_LAYOUT_ROW : TB_LAYOUT_COL, why, len))
        return 0;
    const tb_gemm *g = &p->gemm;
    if (g->lda % 8 != 0)
        return tbv::no(why, len, "%s pitch of a not a multiple of 16 bytes (lda = %lld must be a "
                       "multiple of 8): TMA cannot describe it", AMN ? "column" : "row",
                       (long long)g->lda);
    if (g->ldb % 8 != 0)
        return tbv::no(why, len, "%s pitch of b not a multiple of 16 bytes (ldb = %lld must be a "
                       "multiple of 8): TMA cannot describe it", BMN ? "row" : "column",
                       (long long)g->ldb);
    if (g->m > INT_MAX - 512 || g->n > INT_MAX - 512 || g->k > INT_MAX - 64)
        return tbv::no(why, len, "m, n and k must be below 2^31 - 512");
    const int64_t tiles_m = (g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM) * cfg::CM;
    const int64_t tiles_n = (g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN) * cfg::CN;
    const int64_t k_iters = (g->k + 63) / 64;
    if (tiles_m * tiles_n * k_iters >= ((int64_t)1 << 31))
        return tbv::no(why, len, "too many tiles times k-blocks for 32-bit ring counters");
    return 1;
}

/* The stream-K split of num_tiles tiles over a grid of g CTAs (see the top of the file):
 * sk_first, sk_per, sk_total; no split (sk_first = num_tiles, 0, 0) without TB_STREAMK or
 * when the tiles fill whole waves or less than one. */
void streamk_split(int num_tiles, int g, int k_iters, int &first, int &per, int &total)
{
    first = num_tiles;
    per = total = 0;
    if (!cfg::STREAMK || g < 1 || num_tiles == g || num_tiles % g == 0) return;
    if (num_tiles < g) {            /* under half a wave (sk_grid): split-K over the whole grid */
        if (num_tiles * 2 > g || k_iters < WG_SK_MIN_K_ITERS) return;
        first = 0;
        total = num_tiles * k_iters;
        per = (total + g - 1) / g;
        if (per < WG_SK_MIN_PER) per = WG_SK_MIN_PER;
        return;
    }
    first = (num_tiles / g - 1) * g;
    total = (num_tiles - first) * k_iters;
    per = (total + g - 1) / g;
}

/* The persistent grid for num_tiles tiles and cap CTAs: one per tile up to cap, or, for a
 * stream-K point whose tiles fill at most half of the grid with k_iters >= WG_SK_MIN_K_ITERS, the
 * whole grid (streamk_split deals the tiles' k-blocks out over it). */
int sk_grid(int num_tiles, int cap, int k_iters)
{
    if (cfg::STREAMK && num_tiles * 2 <= cap && k_iters >= WG_SK_MIN_K_ITERS) return cap;
    return num_tiles < cap ? num_tiles : cap;
}

/* CTAs the persistent grid may hold at most without clusters: one per SM of the current
 * device (TB_EXP_MAXCTAS caps it). 0 and the error in *e when the device cannot be read. */
int max_ctas(cudaError_t *e)
{
    int dev = 0, sms = 0;
    *e = cudaGetDevice(&dev);
    if (*e == cudaSuccess) *e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (*e != cudaSuccess) return 0;
    return TB_EXP_MAXCTAS > 0 && TB_EXP_MAXCTAS < sms ? TB_EXP_MAXCTAS : sms;
}

size_t wg_workspace_size(const tb_problem *p)
{
    if (!cfg::STREAMK) return 0;
    const tb_gemm *g = &p->gemm;
    const int64_t tiles = ((g->m + cfg::TILE_M - 1) / cfg::TILE_M) * ((g->n + cfg::TILE_N - 1) / cfg::TILE_N);
    cudaError_t e;
    const int cap = max_ctas(&e);   /* stream-K is never clustered: one CTA per cluster */
    const int k_iters = (int)((g->k + 63) / 64);
    const int grid = sk_grid((int)tiles, cap, k_iters);
    int first, per, total;
    streamk_split((int)tiles, grid, k_iters, first, per, total);
    if (!total) return 0;
    return (size_t)grid * cfg::TILE_M * cfg::TILE_N * sizeof(float) + 256 + (size_t)grid * sizeof(int);
}

void wg_teardown(void *state)
{
    wg_state *s = (wg_state *)state;
    if (s && s->order) cudaFree(s->order);
    free(state);
}

template <bool AMN, bool BMN>
int wg_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    *state = NULL;
    const tb_gemm *g = &p->gemm;
    if (find_encode(msg, len)) return 1;
    /* D's pitch picks the kernel: TMA stores where TMA can describe it, else predicated ones */
    const bool pd = g->ldd % 8 != 0;
    void (*const kernel)(kparams) = !pd ? wgmma_gemm<AMN, BMN> : wgmma_gemm_pd<AMN, BMN>;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         cfg::SMEM);
    /* one CTA per SM: the smem and 384 threads see to it (sms: capped by TB_EXP_MAXCTAS) */
    const int sms = e == cudaSuccess ? max_ctas(&e) : 0;
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
        e = cudaOccupancyMaxActiveClusters(&max_clusters, kernel, &lc);
        if (TB_EXP_MAXCTAS > 0 && TB_EXP_MAXCTAS / cfg::CSIZE < max_clusters)
            max_clusters = TB_EXP_MAXCTAS / cfg::CSIZE;
        if (e != cudaSuccess || max_clusters < 1) {
            snprintf(msg, len, "no cluster of %d CTAs fits: %s", cfg::CSIZE,
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 active clusters");
            return 1;
        }
    }
    wg_state *s = (wg_state *)calloc(1, sizeof *s);
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->m = g->m; s->n = g->n; s->k = g->k;
    s->lda = g->lda; s->ldb = g->ldb; s->ldd = g->ldd;
    s->pd = pd;
    kparams &k = s->p;
    k.ldd = g->ldd;
    k.m = (int)g->m;
    k.n = (int)g->n;
    k.k_iters = (int)((g->k + 63) / 64);
    k.ctiles_m = (int)((g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM));
    k.ctiles_n = (int)((g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN));
    k.num_ctiles = k.ctiles_m * k.ctiles_n;
    const int per = cfg::RASTER_N ? cfg::CN : cfg::CM;
    k.band = cfg::SWIZZLE / per > 1 ? cfg::SWIZZLE / per : 1;
    if (cfg::RASTER_H && hilbert_table(k.ctiles_m, k.ctiles_n, &s->order, msg, len)) {
        free(s);
        return 1;
    }
    k.order = s->order;
    k.alpha = (float)g->alpha;
    k.beta = (float)g->beta;
    k.ldc = g->ldc;
    s->sms = sms;
    s->max_clusters = max_clusters;
    s->clusters = cfg::STREAMK ? sk_grid(k.num_ctiles, max_clusters, k.k_iters)
                               : (k.num_ctiles < max_clusters ? k.num_ctiles : max_clusters);
    s->grid = s->clusters * cfg::CSIZE;
    streamk_split(k.num_ctiles, s->grid, k.k_iters, k.sk_first, k.sk_per, k.sk_total);
    *state = s;
    return 0;
}

template <bool AMN, bool BMN>
int wg_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    using A = opA<AMN>;
    using B = opB<BMN>;
    wg_state *s = (wg_state *)state;
    if (!s || !g_encode) return (int)cudaErrorNotReady;
    if (s->p.sk_total) {
        const size_t part = (size_t)s->grid * cfg::TILE_M * cfg::TILE_N * sizeof(float) + 256;
        if (!workspace || workspace_bytes < part + (size_t)s->grid * sizeof(int))
            return (int)cudaErrorInvalidValue;
        s->p.ws = (float *)workspace;
        s->p.flags = (int *)((char *)workspace + part);
        const cudaError_t e = cudaMemsetAsync(s->p.flags, 0, (size_t)s->grid * sizeof(int),
                                              (cudaStream_t)stream);
        if (e != cudaSuccess) return (int)e;
    }
    const tb_gemm *g = &p->gemm;
    if (io->in[0] != s->a || io->in[1] != s->b || io->out[0] != s->d) {
        /* K-major: k inner, rows (m or n) outer; MN-major: m or n inner, k outer. Boxes of 64
         * inner elements (128 bytes, the swizzle span) by BOX_OUTER (see operand). */
        CUresult r = AMN ? encode_2d(&s->p.a, io->in[0], s->m, s->k, s->lda, 64, A::BOX_OUTER,
                                     CU_TENSOR_MAP_SWIZZLE_128B)
                         : encode_2d(&s->p.a, io->in[0], s->k, s->m, s->lda, 64, A::BOX_OUTER,
                                     CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS)
            r = BMN ? encode_2d(&s->p.b, io->in[1], s->n, s->k, s->ldb, 64, B::BOX_OUTER,
                                CU_TENSOR_MAP_SWIZZLE_128B)
                    : encode_2d(&s->p.b, io->in[1], s->k, s->n, s->ldb, 64, B::BOX_OUTER,
                                CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS && !s->pd)
            r = encode_2d(&s->p.d, io->out[0], s->n, s->m, s->ldd, 64, cfg::WG_M,
                          cfg::CONFLICT ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B);
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
    s->p.alpha = (float)g->alpha;
    s->p.beta = (float)g->beta;
    s->p.dptr = (__nv_bfloat16 *)io->out[0];
    void (*const kernel)(kparams) = !s->pd ? wgmma_gemm<AMN, BMN> : wgmma_gemm_pd<AMN, BMN>;
    if (cfg::CSIZE == 1) {
        kernel<<<s->grid, cfg::THREADS, cfg::SMEM, (cudaStream_t)stream>>>(s->p);
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
    const cudaError_t e = cudaLaunchKernelEx(&lc, kernel, s->p);
    return e != cudaSuccess ? (int)e : tbv::last_launch_error();
}

int wg_describe(void *state, char *buf, size_t len)
{
    const wg_state *s = (const wg_state *)state;
    if (!s || !buf || !len) return 1;
    snprintf(buf, len,
             "ctas=%d clusters=%d/%d tiles=%dx%d k_blocks=%d band=%d smem=%d regs=%d/%d "
             "streamk=%s first=%d per=%d total=%d d_store=%s",
             s->grid, s->clusters, s->max_clusters, s->p.ctiles_m * cfg::CM,
             s->p.ctiles_n * cfg::CN, s->p.k_iters, s->p.band, cfg::SMEM, cfg::PRODUCER_REGS,
             cfg::CONSUMER_REGS, s->p.sk_total ? "on" : "off", s->p.sk_first, s->p.sk_per,
             s->p.sk_total, s->pd ? "predicated" : "tma");
    return 0;
}

/* Each layout's parameters and variant; the name is made from them on the first query. */
template <bool AMN, bool BMN>
const tb_param wg_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("tile_m", cfg::TILE_M),
    TB_PARAM_INT("tile_n", cfg::TILE_N),
    TB_PARAM_INT("tile_k", cfg::BK),
    TB_PARAM_INT("cluster_m", cfg::CM),
    TB_PARAM_INT("cluster_n", cfg::CN),
    TB_PARAM_INT("stages", cfg::STAGES),
    TB_PARAM_STR("schedule", cfg::PINGPONG ? "pingpong" : "cooperative"),
    TB_PARAM_STR("raster", cfg::RASTER_H ? "h" : cfg::RASTER_N ? "n" : "m"),
    TB_PARAM_INT("swizzle", cfg::SWIZZLE),
#if TB_EPI_CONFLICT
    TB_PARAM_STR("epilogue", "conflict"),
#endif
#if TB_STREAMK
    TB_PARAM_STR("tail", "streamk"),
#endif
#ifdef TB_EXP_NAME
    TB_PARAM_STR("exp", TB_EXP_NAME),
#endif
    TB_PARAM_STR("layout", (layout_name<AMN, BMN>())),
    TB_PARAM_END
};

char wg_name[4][128];               /* by layout_index() */

template <bool AMN, bool BMN>
const tb_variant wg_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), wg_name[layout_index<AMN, BMN>()], "wgmma",
    wg_params<AMN, BMN>, TB_SASS, wg_supports<AMN, BMN>, wg_workspace_size, wg_launch<AMN, BMN>,
    wg_setup<AMN, BMN>, wg_teardown, wg_describe, NULL
};

template <bool AMN, bool BMN>
size_t name_variant()
{
    return tb_variant_make_name("wgmma", wg_params<AMN, BMN>, wg_name[layout_index<AMN, BMN>()],
                                sizeof wg_name[0]);
}

} // namespace

#if defined(TB_AUTO_ENTRY)
/* Built into wgmma_auto (auto.cu, two translation units per point of its table, as the grid's
 * libraries are: part 1 the tn kernel, part 2 the MN-major ones): this point's variants, named,
 * for the dispatcher; hidden like every symbol but the library's query. TB_AUTO_ENTRY() is the
 * tn variant (part 1), TB_AUTO_MN_ENTRY(i) the nn, nt, tt ones for i = 0, 1, 2 (part 2). */
#if TB_WGMMA_PART != 2
const tb_variant *TB_AUTO_ENTRY(void)
{
    static const size_t named_ = name_variant<false, false>();
    (void)named_;
    return &wg_variant<false, false>;
}
#endif
#if TB_WGMMA_PART != 1 && defined(TB_AUTO_MN_ENTRY)
const tb_variant *TB_AUTO_MN_ENTRY(uint32_t i)
{
    static const size_t named_ = name_variant<true, false>() + name_variant<true, true>() +
                                 name_variant<false, true>();
    (void)named_;
    return i == 0 ? &wg_variant<true, false> : i == 1 ? &wg_variant<true, true>
         : i == 2 ? &wg_variant<false, true> : NULL;
}
#endif
#else
#if TB_WGMMA_PART != 1
/* The MN-major layouts' variants, i = 0, 1, 2: nn, nt, tt (named on the first call; C++ makes
 * the one-time initialisation thread-safe). Hidden: the query below calls it, from this
 * translation unit (TB_WGMMA_PART 0) or from part 1's. */
const tb_variant *tb_wgmma_mn_variant(uint32_t i)
{
    static const size_t named_ = name_variant<true, false>() + name_variant<true, true>() +
                                 name_variant<false, true>();
    (void)named_;
    return i == 0 ? &wg_variant<true, false> : i == 1 ? &wg_variant<true, true>
         : i == 2 ? &wg_variant<false, true> : NULL;
}
#endif
#if TB_WGMMA_PART != 2
#if TB_WGMMA_PART == 1
const tb_variant *tb_wgmma_mn_variant(uint32_t i);   /* part 2's */
#endif
/* The point's four variants, index 0-3: tn, nn, nt, tt (layout_index()), NULL after. */
extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    static const size_t named_ = name_variant<false, false>();
    (void)named_;
    return index == 0 ? &wg_variant<false, false> : index < 4 ? tb_wgmma_mn_variant(index - 1) : NULL;
}
#endif
#endif
