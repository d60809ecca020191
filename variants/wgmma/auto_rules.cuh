/* auto_rules.cuh - wgmma_auto's two pitch rules as plain host arithmetic, in C (and C++), so that
 * the dispatcher (auto.cu) and its CPU test (tests/test_auto.c) read the same rule:
 *  - tb_auto_realign_pays(): copy A and B to 64-element (128-byte) rows before the TMA point?
 *  - tb_auto_small_pays(): run the small kernel (small.cuh) instead of a point at all?
 *  - tb_auto_nearest_row(): which row of the dispatch table decides a shape in a layout?
 * Owns the rules' constants and the table row's type, nothing else (no state, no CUDA).
 * auto.cu's comments above
 * realign_pays() and small_pays() say where each constant was measured (docs/perf.md, twelfth
 * session and "predicated epilogue and small odd shapes").
 */
#ifndef TB_VARIANTS_WGMMA_AUTO_RULES_CUH
#define TB_VARIANTS_WGMMA_AUTO_RULES_CUH

#include "tilebench/variant.h"

#include <math.h>

/* One row of the dispatch table (auto_table.cuh, generated from auto-table.json): the shape a
 * sweep measured, in layout 0 tn, 1 nn, 2 nt or 3 tt, and the point that won it (-1: skinny;
 * -2 ends the table). */
typedef struct tb_auto_row { long long m, n, k; int point, layout; } tb_auto_row;

/* The row that decides a problem m x n x k in layout l: the nearest wgmma row (least sum of
 * |log2| distances over m, n and k) among the rows measured in layout l and the tn rows, a
 * layout's own row winning a tie (so it overrides tn's at the shapes it measured; elsewhere
 * tn's rows still decide: a point moves the same bytes through the same MMAs in every layout,
 * the operands' order aside). Among equals the first row. -1 when the table has no wgmma row. */
static inline int tb_auto_nearest_row(const tb_auto_row *rows, long long m, long long n,
                                      long long k, int l)
{
    double best = INFINITY;
    int pick = -1;
    for (int i = 0; rows[i].point != -2; i++) {
        const tb_auto_row *r = &rows[i];
        if (r->point < 0 || (r->layout != l && r->layout != 0)) continue;
        const double d = fabs(log2((double)m / (double)r->m)) + fabs(log2((double)n / (double)r->n)) +
                         fabs(log2((double)k / (double)r->k));
        if (d < best || (d == best && pick >= 0 && r->layout == l && rows[pick].layout != l)) {
            best = d;
            pick = i;
        }
    }
    return pick;
}

/* realign_pays: the TMA point loses about TB_AUTO_LOSS of its time (FLOPs at
 * TB_AUTO_KERNEL_FLOPS plus a floor) on rows that are not 128-byte aligned; the copy moves both
 * operands twice at TB_AUTO_DRAM_BYTES per second plus a launch. */
#define TB_AUTO_KERNEL_FLOPS 700e12
#define TB_AUTO_KERNEL_FLOOR_S 4e-6
#define TB_AUTO_DRAM_BYTES 3.0e12
#define TB_AUTO_COPY_LAUNCH_S 4e-6
#define TB_AUTO_LOSS 0.75
/* small_pays: small.cuh's tiles (64 rows by 136 columns at most) and the most it takes: a
 * quarter of a wave on 132 SMs. Measured (docs/perf.md, fifteenth session, two H200s, two
 * sweeps): with 2 small tiles (127x129x136) the small kernel won (5.25 us against the best
 * TMA point's 6.64); with 128 and 130 (1023x1025x1032, 777x1234x552) the TMA points, which
 * no longer copy D at an odd ldd, won (13.9 us against 17.4; 9.8 against 10.7). The
 * crossover lies between 2 and 128 tiles and was not measured: 32 is a guess inside it. Its
 * cp.async rows need pitches of 8 elements (16 bytes); TMA's full rate needs 64 (128 bytes). */
#define TB_AUTO_SMALL_BM 64
#define TB_AUTO_SMALL_BN 136
#define TB_AUTO_SMALL_MAX_TILES 32
#define TB_AUTO_FULL_PITCH 64
/* ... and no longer k than this: a small tile walks its k alone, so few tiles over a long k
 * leave most SMs idle where a stream-K point spreads the work (127x129x65528 would run on 4
 * CTAs). A guard, not a measured crossover: the rule was measured at k <= 1032. */
#define TB_AUTO_SMALL_MAX_K 4096

static inline int tb_auto_realign_pays(const tb_gemm *g)
{
    const double m = (double)g->m, n = (double)g->n, k = (double)g->k;
    const double lost = TB_AUTO_LOSS * (2.0 * m * n * k / TB_AUTO_KERNEL_FLOPS + TB_AUTO_KERNEL_FLOOR_S);
    const double copy = 4.0 * (m + n) * k / TB_AUTO_DRAM_BYTES + TB_AUTO_COPY_LAUNCH_S;
    return lost > copy;
}

/* tn (A row-major, B column-major), lda and ldb multiples of 8 but not both of
 * TB_AUTO_FULL_PITCH, D's rows not 16-byte aligned (ldd not a multiple of 8), the copy not
 * paying (checked only when the table asks for 128-byte rows, pitch_align > 8), at most
 * TB_AUTO_SMALL_MAX_TILES small tiles, k at most TB_AUTO_SMALL_MAX_K.
 * The ldd condition is what the H100 measured (docs/perf.md, fourteenth session): the small
 * kernel beat the path before it on the three odd shapes whose D pitch is odd (127x129x136
 * 5.4 us against 7.0, 777x1234x552 11.4 against 13.6, 1023x1025x1032 17.6 against 22.0) and
 * lost on 1000^3 (15.9 us against the 128x128 TMA point's 11.3, twelfth session, at its
 * pitch of 1000), where D needs nothing. Those wins were against points that still copied
 * D; against the predicated epilogue only the few-tile shape stays (the tile limit above).
 * A rule consistent with four shapes, not a measured crossover. */
static inline int tb_auto_small_pays(const tb_gemm *g, long pitch_align)
{
    if (g->a_layout != TB_LAYOUT_ROW || g->b_layout != TB_LAYOUT_COL) return 0;
    if (g->lda % 8 != 0 || g->ldb % 8 != 0 || g->k > TB_AUTO_SMALL_MAX_K) return 0;
    if (g->ldd % 8 == 0) return 0;
    if (g->lda % TB_AUTO_FULL_PITCH == 0 && g->ldb % TB_AUTO_FULL_PITCH == 0) return 0;
    if (pitch_align > 8 && tb_auto_realign_pays(g)) return 0;
    const long long tiles = (long long)((g->m + TB_AUTO_SMALL_BM - 1) / TB_AUTO_SMALL_BM) *
                            (long long)((g->n + TB_AUTO_SMALL_BN - 1) / TB_AUTO_SMALL_BN);
    return tiles <= TB_AUTO_SMALL_MAX_TILES;
}

#endif /* TB_VARIANTS_WGMMA_AUTO_RULES_CUH */
