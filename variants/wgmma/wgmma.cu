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
 * Where the code is: this file holds the BF16 operand traits (bf16_op), the kernels' names
 * (wgmma_gemm, wgmma_gemm_pd), supports() and the variants; the kernel body, the epilogue and
 * the host side are wgmma_kernel.cuh's, wgmma_epilogue.cuh's and wgmma_host.cuh's, shared with
 * the FP8 family (variants/wgmma_fp8/wgmma_fp8.cu).
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
 *    consumer's warps copy each staged chunk out with plain stores: 16-byte ones for the
 *    16-byte units inside each row and one 2-byte store a lane for the row's ragged ends
 *    (wgmma_epilogue.cuh, pd_store_chunk), or, for the chunk that crosses n, 128 contiguous
 *    bytes of a row a warp (4-byte stores where a row is 4-byte aligned, else 2-byte); rows
 *    past m and columns past n are never stored. It is a kernel of its own, wgmma_gemm_pd (the body is one template, PD), chosen
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
 * (G CTAs, T tiles, T > G) and the last wave is at most half full (R = T % G <= G/2), the first
 * T - R tiles stay data-parallel and the last R are split by k-blocks into S pieces each
 * (streamk_rules.cuh: a power of two, R * S <= G, S <= 8, pieces of at least 8 k-blocks),
 * dealt out one range of ceil(k_iters / S) per CTA, so the last wave's R tiles run on R * S
 * CTAs (8192^3 FP8 at 128x128: 31 waves and 4 tiles, the 4 in 8 pieces on 32 CTAs). The pieces
 * start at the same k offsets in every tile, so the tail's CTAs read the same A and B panels
 * together. (The deal before, from the third session to the nineteenth: the last one to two
 * waves in equal ranges over every CTA, each at its own k, likely (not measured) reading all of
 * A and B from DRAM; such points took up to 3.2x the time of whole tiles.) A range that starts
 * inside a tile computes a partial sum and leaves it, FP32, in the workspace (slot cid; each
 * CTA leaves at most one) with a flag; the CTA whose range holds the tile's first k-block owns
 * the tile: it waits for the flags of the CTAs after it whose ranges start inside the tile,
 * adds their partials and runs the epilogue. The owner's segment comes last in its range and the
 * partials first in theirs, so the wait is short; every CTA is resident (one per SM, grid <=
 * SMs), so it ends. launch() zeroes the flags (G ints) before each launch.
 * Split-K, the same machinery (eleventh session, issue 22): when the tiles fill at most half
 * of the grid (T <= G/2; streamk_rules.cuh holds the rule and its fraction) and k has at least
 * WG_SK_MIN_K_ITERS blocks,
 * the grid is every SM and ALL tiles are split: T * k_iters block-iterations in G ranges of
 * ceil(T * k_iters / G) (at least WG_SK_MIN_PER), so a tile's k is summed by several CTAs (llm
 * M = 128, N = 4096: 16 tiles of 128x256 on 132 SMs, 8 CTAs a tile). A range is then shorter
 * than a tile's k, so an owner may wait for several partials, in range order; each CTA still
 * leaves at most one partial and writes it before it owns anything, so no wait is circular.
 */
#include "../common/gemm_common.cuh"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Which of the point's kernels this translation unit holds (see the top of the file): 0 all
 * four and the query; 1 tn and the query; 2 nn, nt and tt. */
#ifndef TB_WGMMA_PART
#define TB_WGMMA_PART 0
#endif

#ifndef TB_EXP_SUSPEND              /* mbarrier try_wait suspend-time hint in ns (0: none) */
#define TB_EXP_SUSPEND 0
#endif
#include <cuda.h>           /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
#include "wgmma_ptx.cuh"    /* wgmma_n256, wgmma_n128 (bf16_op) */

namespace {

/* The BF16 operands' traits (wgmma_kernel.cuh): 64-element k-blocks, k16 wgmmas, either
 * major order (imm-trans), the stream-K-capable unit loop, unscaled. */
struct bf16_op {
    static constexpr int ELEM_BYTES = 2, K_INSTR = 16;
    static constexpr bool MN_OK = true, WHOLE_TILES = false, SCALED = false;
    static constexpr CUtensorMapDataType TMA_TYPE = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    /* One k16 step of one m64 block: the accumulator count picks the instruction's n, the
     * operands' majors its transpose flags. */
    template <bool AMN, bool BMN, int N>
    static __device__ __forceinline__ void mma(float (&acc)[N], uint32_t da, uint32_t db, int scale_d)
    {
        if constexpr (N == 128) wgmma_n256<AMN ? 1 : 0, BMN ? 1 : 0>(acc, da, db, scale_d);
        else wgmma_n128<AMN ? 1 : 0, BMN ? 1 : 0>(acc, da, db, scale_d);
    }
};

} // namespace

#define TB_WGMMA_OP bf16_op
#include "wgmma_kernel.cuh" /* config, kparams, the kernel body */

namespace {

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

#if TB_WGMMA_PART == 2
/* The MN-major TMA-store kernels, named here before the host functions name them and their
 * predicated twins, so that the compiler emits them first and in their old order: their PTX
 * then matches the build before the predicated kernels existed byte for byte, labels and all. */
[[maybe_unused]] void (*const tma_kernels_in_order[])(kparams) = {
    wgmma_gemm<true, false>, wgmma_gemm<true, true>, wgmma_gemm<false, true>
};
#endif

/* The layout's kernel, D's pitch picking the store (wgmma_host.cuh's setup and launch). */
template <bool AMN, bool BMN>
void (*wg_kernel(bool pd))(kparams)
{
    return !pd ? wgmma_gemm<AMN, BMN> : wgmma_gemm_pd<AMN, BMN>;
}

} // namespace

#include "wgmma_host.cuh"   /* setup, launch, describe, teardown, workspace */

namespace {

/* The layout's name and index: A's letter then B's (BLAS: t = A row-major / B column-major is
 * K-major, n = A column-major, t = B row-major is MN-major); the query's order tn, nn, nt, tt. */
template <bool AMN, bool BMN>
constexpr const char *layout_name() { return AMN ? (BMN ? "nt" : "nn") : (BMN ? "tt" : "tn"); }
template <bool AMN, bool BMN>
constexpr int layout_index() { return AMN ? (BMN ? 2 : 1) : (BMN ? 3 : 0); }

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

