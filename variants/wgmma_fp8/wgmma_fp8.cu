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
 *    (alpha, beta * C, BF16, stmatrix into a swizzled staging buffer, TMA store) is the BF16
 *    family's TMA-store one.
 *  - the code is the BF16 family's: ../wgmma/wgmma_kernel.cuh's kernel body (with e4m3_op
 *    below as its operand traits: 1-byte elements, k32 wgmmas, K-major only, the whole-tile
 *    loop with promotion) and ../wgmma/wgmma_host.cuh's setup, launch and describe; this file
 *    holds the traits, the kernel's name, supports() and the variant.
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
 * Host side (wgmma_host.cuh), as wgmma.cu's: setup() finds the tensor-map encoder, sets the kernel's shared
 * memory and sizes the persistent grid (clusters: cudaOccupancyMaxActiveClusters); launch()
 * encodes the tensor maps when the buffer pointers differ from the last launch's (host
 * arithmetic only) and passes them in a __grid_constant__ parameter. The variant answers
 * extension(TB_EXT_PROBLEM_SIZE) with sizeof(tb_problem): it reads gemm_scales.
 *
 * CMake defines, one library per grid point (variants/wgmma_fp8/CMakeLists.txt): TB_TILE_M,
 * TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N, TB_PINGPONG (0 cooperative, 1 pingpong),
 * TB_RASTER_N (0 raster m, 1 raster n), TB_SWIZZLE, TB_PROMOTE (0, or k-blocks per promotion).
 * TB_PROMOTE_STAGGER (1: the two cooperative consumers promote on alternate k-blocks,
 * wgmma_kernel.cuh; in the name as _stagger-1 only where set). TB_STREAMK (1: the BF16
 * family's stream-K tail and split-K, ../wgmma/wgmma.cu's opening comment, on the whole-tile
 * loop: a unit's k-blocks are promoted in groups counted from its first, and a partial is the
 * FP32 sum after promotion; cooperative, no cluster; in the name as _tail-streamk where set).
 * At 8192^3 the 128x128 tiles are 31.03 waves of 132 CTAs: without a tail, 3 % of the time is
 * the last wave's 4 tiles (docs/perf.md, eighteenth session).
 * The library exports one variant, named by tb_variant_make_name():
 *   wgmma_e4m3_<TM>x<TN>x128_c<CM>x<CN>_s<STAGES>_<schedule>_raster<r>_sw<SW>_promote-<P>[_stagger-1][_tail-streamk]_tn
 */
#include "../common/gemm_common.cuh"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef TB_PROMOTE
#error "wgmma_fp8.cu needs TB_PROMOTE (and the knobs of ../wgmma/wgmma_kernel.cuh)"
#endif
#define TB_EXP_SUSPEND 0            /* wgmma_ptx.cuh's mbarrier wait: no suspend hint */

#include <cuda.h>                    /* CU_TENSOR_MAP_DATA_TYPE_UINT8 */

#include "../wgmma/wgmma_ptx.cuh"    /* wgmma_e4m3_n256, wgmma_e4m3_n128 (e4m3_op) */

namespace {

/* The E4M3 operands' traits (../wgmma/wgmma_kernel.cuh): 128-element k-blocks (128 bytes, the
 * BF16 family's row), k32 wgmmas, K-major only (FP8 wgmma has no transpose), the whole-tile
 * loop (promotion, TB_PROMOTE), alpha times the per-tensor scales. */
struct e4m3_op {
    static constexpr int ELEM_BYTES = 1, K_INSTR = 32;
    static constexpr bool MN_OK = false, WHOLE_TILES = true, SCALED = true;
    static constexpr CUtensorMapDataType TMA_TYPE = CU_TENSOR_MAP_DATA_TYPE_UINT8;
    /* One k32 step of one m64 block: the accumulator count picks the instruction's n. */
    template <bool AMN, bool BMN, int N>
    static __device__ __forceinline__ void mma(float (&acc)[N], uint32_t da, uint32_t db, int scale_d)
    {
        static_assert(!AMN && !BMN, "e4m3 wgmma reads K-major operands only");
        if constexpr (N == 128) wgmma_e4m3_n256(acc, da, db, scale_d);
        else wgmma_e4m3_n128(acc, da, db, scale_d);
    }
};

} // namespace

#define TB_WGMMA_OP e4m3_op
#include "../wgmma/wgmma_kernel.cuh"  /* config, kparams, the kernel body */

namespace {

/* The kernel: layout tn, D stored by TMA (supports() refuses an ldd TMA cannot describe); whole
 * tiles only, also in a point with a stream-K tail (its units: wgmma_fp8_gemm_sk below). */
__global__ void __launch_bounds__(cfg::THREADS, 1) wgmma_fp8_gemm(const __grid_constant__ kparams p)
{
    gemm_body<false, false, false, false>(p);
}

/* The kernel for wgmma_host.cuh's setup and launch. */
template <bool AMN, bool BMN>
void (*wg_kernel(bool pd))(kparams)
{
    (void)pd;
    static_assert(!AMN && !BMN, "layout tn only");
    return wgmma_fp8_gemm;
}

#if TB_STREAMK
/* A stream-K tail's second kernel: the split tiles' units, after wgmma_fp8_gemm has run the
 * whole tiles (wgmma_host.cuh's launch) */
__global__ void __launch_bounds__(cfg::THREADS, 1) wgmma_fp8_gemm_sk(const __grid_constant__ kparams p)
{
    gemm_body<false, false, false, true>(p);
}

template <bool AMN, bool BMN>
void (*wg_kernel_sk())(kparams)
{
    static_assert(!AMN && !BMN, "layout tn only");
    return wgmma_fp8_gemm_sk;
}
#endif

} // namespace

/* A stream-K tail's tiles in at most 4 pieces, not the BF16 family's 8 (streamk_rules.cuh):
 * at 8192^3 and 16384^3 on the H100, two sweeps each, S = 4 ran 0.2-2.8 % faster than S = 8
 * and its units' kernel took 16.0 us against 17.5 (docs/perf.md, twentieth session) */
#define WG_SK_TAIL_MAX 4
#include "../wgmma/wgmma_host.cuh"    /* setup, launch, describe, teardown */

namespace {

/* The longest k a promote-0 point takes. On the H100 (docs/perf.md, fourteenth session) every
 * promote-0 point failed the FP8 rule (elementwise) at 4096^3, 8192^3 and 16384^3 (hundreds to
 * a million elements) and at 2048^3 by one or two elements in 7 of 10 measurements over two
 * sweeps; the promoting points passed everywhere. At k = 1024 the unpromoted error is about
 * half 2048's (it grows with k), as cuBLASLt's fast-accumulation mode, which passed at 512^3
 * and 1024^3 and failed from k = 2048 on; the wgmma points themselves were not timed there. */
constexpr int64_t FP8_UNPROMOTED_MAX_K = 1024;

/* E4M3 A row-major and B column-major (tn), BF16 C (beta != 0) and D row-major, FP32
 * accumulation, batch 1; lda and ldb multiples of 16 (16-byte rows), ldd of 8; promote-0
 * points k <= FP8_UNPROMOTED_MAX_K. */
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
    if (cfg::PROMOTE == 0 && g->k > FP8_UNPROMOTED_MAX_K)
        return tbv::no(why, len, "promote-0 accumulates all of k in the tensor core's FP8 "
                       "accumulator, which fails the FP8 rule beyond k = %d (measured on the "
                       "H100: docs/perf.md): a promoting point computes k = %lld",
                       (int)FP8_UNPROMOTED_MAX_K, (long long)g->k);
    const int64_t tiles_m = (g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM) * cfg::CM;
    const int64_t tiles_n = (g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN) * cfg::CN;
    const int64_t k_iters = (g->k + cfg::BK - 1) / cfg::BK;
    if (tiles_m * tiles_n * k_iters >= ((int64_t)1 << 31))
        return tbv::no(why, len, "too many tiles times k-blocks for 32-bit ring counters");
    return 1;
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
#if TB_PROMOTE_STAGGER   /* in the name only where set, so the other points keep theirs */
    TB_PARAM_INT("stagger", 1),
#endif
#if TB_STREAMK           /* the same: a stream-K tail (../wgmma/wgmma.cu's opening comment) */
    TB_PARAM_STR("tail", "streamk"),
#endif
#ifdef TB_EXP_NAME
    TB_PARAM_STR("exp", TB_EXP_NAME),
#endif
    TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

char fp8_name[128];

const tb_variant fp8_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), fp8_name, "wgmma", fp8_params, TB_SASS,
    fp8_supports, wg_workspace_size, wg_launch<false, false>, wg_setup<false, false>, wg_teardown,
    wg_describe, fp8_extension
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(fp8_variant, fp8_name, "wgmma", fp8_params)
