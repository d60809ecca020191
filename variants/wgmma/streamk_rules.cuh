/* streamk_rules.cuh - how wgmma's stream-K points deal a problem's tiles out over the persistent
 * grid, as plain host arithmetic in C (and C++), so that wgmma_host.cuh and its CPU test
 * (tests/test_streamk.c, which also walks every range as the kernel's next_unit() does) read the
 * same rule. Owns the rule and its constants, nothing else (no state, no CUDA); wgmma.cu's
 * opening comment says how the kernel sums what it deals.
 *  - tb_sk_grid(): how many CTAs the persistent grid of a stream-K point holds;
 *  - tb_sk_split(): which tiles are split by k-blocks, and the ranges each CTA takes.
 * Three cases, for T tiles, G CTAs (one per SM) and k_iters k-blocks a tile:
 *  - T > G and R = T % G at most G/2, the tail: the first T - R tiles whole (full waves), the
 *    last R split into S aligned pieces of k (tb_sk_tail_pieces), one piece a CTA, so that the
 *    last wave's R tiles run on R * S CTAs instead of R;
 *  - T <= G * TB_SK_FILL_NUM / TB_SK_FILL_DEN (a half) with k_iters >= WG_SK_MIN_K_ITERS,
 *    split-K: the grid is every SM and all tiles are split, so each CTA runs about T/G of a
 *    tile's k;
 *  - otherwise whole tiles, one a CTA.
 */
#ifndef TB_VARIANTS_WGMMA_STREAMK_RULES_CUH
#define TB_VARIANTS_WGMMA_STREAMK_RULES_CUH

/* split-K only from 8 k-blocks, in ranges of at least 4 */
#define WG_SK_MIN_K_ITERS 8
#define WG_SK_MIN_PER 4
/* ... and only while the tiles fill at most this fraction of the grid: half a wave (T <= G/2,
 * 2 or more CTAs a tile), as the eleventh session wrote it. Wider was measured on the H100 and
 * refuted (docs/perf.md, eighteenth session): at three quarters and at a whole wave, 1023x1025x1032
 * (72 tiles of 128x128 on 132 SMs) ran 21.6 us against 15.7 for whole tiles, the hand-off
 * costing more than the shorter ranges save. The deal itself is sound for any T < G
 * (test_streamk_any walks it with the fraction 1). */
#ifndef TB_SK_FILL_NUM
#define TB_SK_FILL_NUM 1
#define TB_SK_FILL_DEN 2
#endif

/* Whether split-K deals all T tiles over a grid of g CTAs. */
static inline int tb_sk_splits_all(int tiles, int g, int k_iters)
{
    return tiles < g && (long long)tiles * TB_SK_FILL_DEN <= (long long)g * TB_SK_FILL_NUM &&
           k_iters >= WG_SK_MIN_K_ITERS;
}

/* The tail's pieces a tile, for the R = T % G tiles left after the full waves: the largest
 * power of two S with R * S <= G (one piece a CTA, all in the one last round), S <= 8 and
 * pieces of at least 8 k-blocks (WG_SK_TAIL_MIN_K). Each piece of a tile but the first leaves a
 * partial that the first's CTA reads, so more pieces mean shorter pieces and a longer fix-up:
 * S <= 8 keeps the fix-up (S - 1 partials of a tile's FP32) near a piece's time at the H100's
 * k-blocks (docs/wgmma-notes.md, "The aligned tail"). A power of two divides the power-of-two
 * k of the square shapes, so the pieces start at the same k offsets in every tile: the CTAs of
 * the tail read the same A and B panels at the same time, as the waves before them do. The
 * rule before (third to nineteenth session: the last one to two waves dealt out as equal
 * ranges over every CTA, each starting at its own k) took up to 3.2x the time of whole tiles,
 * most likely because with the CTAs' k offsets apart the tail reads all of A and B from DRAM
 * (a hypothesis since the third session, never measured). 1 (no split) when R > G/2. */
#ifndef WG_SK_TAIL_MAX       /* (an experiment may set it: docs/perf.md, twentieth session) */
#define WG_SK_TAIL_MAX 8
#endif
#define WG_SK_TAIL_MIN_K 8
static inline int tb_sk_tail_pieces(int r, int g, int k_iters)
{
    int sp = 1;
    if (r <= 0) return 1;
    while (sp * 2 <= WG_SK_TAIL_MAX && (long long)r * sp * 2 <= g &&
           k_iters / (sp * 2) >= WG_SK_TAIL_MIN_K)
        sp *= 2;
    return sp;
}

/* The persistent grid of a stream-K point for T tiles and at most cap CTAs: every SM when
 * split-K deals the tiles out, else one CTA a tile up to cap. */
static inline int tb_sk_grid(int tiles, int cap, int k_iters)
{
    if (tb_sk_splits_all(tiles, cap, k_iters)) return cap;
    return tiles < cap ? tiles : cap;
}

/* The split of T tiles over a grid of g CTAs: tiles from *first on are split by k-blocks,
 * *total block-iterations in ranges of *per (CTA c takes [c * per, min((c + 1) * per, total)));
 * no split (*first = T, 0, 0) when streamk is 0, when the tiles fill whole waves, when the last
 * wave is more than half full (tb_sk_tail_pieces 1), or when fewer than a wave are not
 * split-K's (tb_sk_splits_all). */
static inline void tb_sk_split(int tiles, int g, int k_iters, int streamk, int *first, int *per,
                               int *total)
{
    *first = tiles;
    *per = *total = 0;
    if (!streamk || g < 1 || tiles < 1 || tiles == g || tiles % g == 0) return;
    if (tiles < g) {
        if (!tb_sk_splits_all(tiles, g, k_iters)) return;
        *first = 0;
        *total = tiles * k_iters;
        *per = (*total + g - 1) / g;
        if (*per < WG_SK_MIN_PER) *per = WG_SK_MIN_PER;
        return;
    }
    const int r = tiles % g, sp = tb_sk_tail_pieces(r, g, k_iters);
    if (sp < 2) return;
    *first = tiles - r;
    *total = r * k_iters;
    *per = (k_iters + sp - 1) / sp;
}

#endif /* TB_VARIANTS_WGMMA_STREAMK_RULES_CUH */
