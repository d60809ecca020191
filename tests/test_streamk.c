/* test_streamk.c - variants/wgmma/streamk_rules.cuh, the deal of a stream-K point's tiles over its
 * persistent grid, walked on the CPU as the kernel walks it (wgmma_kernel.cuh: next_unit() for
 * each CTA's units, then a partial left in slot cid when a unit starts inside a tile, and the
 * tile's owner adding the partials of the CTAs after it in range order). For every grid size,
 * tile count and k from small to large: every k-block of every tile is computed exactly once;
 * a CTA leaves at most one partial, and it is its first stream-K unit (written before it owns
 * anything, so no wait is circular); each owner reads exactly the partials of its tile, each
 * partial is read once, and an owner only waits for CTAs after it; the grid never exceeds the
 * CTAs that fit at once. Then the rule's cases: the tail (the last wave's tiles in aligned
 * pieces when it is at most half full), split-K up to its fraction of a wave (a half as
 * shipped), whole tiles above it. CTest runs it twice: test_streamk with the
 * shipped fraction, test_streamk_any with TB_SK_FILL_NUM = TB_SK_FILL_DEN = 1 (every deal under
 * a wave split: the widest rule the protocol must survive). No GPU. */
#include "tb_test.h"
#include "streamk_rules.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's next_unit(), for a grid of ncl CTAs (stream-K points are never clustered). */
static int next_unit(int first, int k_iters, int ncl, int *t, int *s, int e, int *tile, int *kb0,
                     int *kb1)
{
    if (*t < first) {
        *tile = *t;
        *kb0 = 0;
        *kb1 = k_iters;
        *t += ncl;
        return 1;
    }
    if (*s < e) {
        *tile = first + *s / k_iters;
        *kb0 = *s % k_iters;
        *kb1 = *kb0 + (e - *s) < k_iters ? *kb0 + (e - *s) : k_iters;
        *s += *kb1 - *kb0;
        return 1;
    }
    return 0;
}

typedef struct { int tile, kb0, kb1; } piece;

/* One deal walked whole; 0 when every invariant holds, else a line in why. */
static int walk(int tiles, int cap, int k_iters, char *why, size_t len)
{
    const int g = tb_sk_grid(tiles, cap, k_iters);
    int first, per, total;
    tb_sk_split(tiles, g, k_iters, 1, &first, &per, &total);
    if (g < 1 || g > cap) { snprintf(why, len, "grid %d of cap %d", g, cap); return 1; }
    /* FP8's units-only kernel (wgmma_host.cuh) runs one CTA a range: its grid must fit the
     * partial slots and flags, and be resident at once, as the g CTAs are */
    if (total > 0 && (total + per - 1) / per > g) {
        snprintf(why, len, "the units' kernel needs %d CTAs, the grid has %d", (total + per - 1) / per, g);
        return 1;
    }
    unsigned char *cover = calloc((size_t)tiles * k_iters, 1);
    piece *partial = calloc((size_t)g, sizeof *partial);   /* slot c's partial, tile -1: none */
    int *read = calloc((size_t)g, sizeof *read);
    int rc = 0;
    for (int c = 0; c < g; c++) partial[c].tile = -1;
    /* every CTA's units, as the kernel's producer and consumers take them */
    for (int c = 0; c < g && !rc; c++) {
        int t = c, s = c * per, tile, kb0, kb1, sk_units = 0;
        const int e = s + per < total ? s + per : total;
        while (!rc && next_unit(first, k_iters, g, &t, &s, e, &tile, &kb0, &kb1)) {
            if (tile < first) {
                if (kb0 != 0 || kb1 != k_iters) rc = snprintf(why, len, "whole tile %d cut", tile);
            } else {
                sk_units++;
                if (kb0 != 0) {   /* a partial: only the first stream-K unit of a CTA */
                    if (sk_units != 1 || partial[c].tile >= 0)
                        rc = snprintf(why, len, "cta %d leaves a second partial (tile %d)", c, tile);
                    partial[c] = (piece){ tile, kb0, kb1 };
                }
            }
            for (int kb = kb0; kb < kb1 && !rc; kb++)
                if (tile >= tiles || cover[(size_t)tile * k_iters + kb]++)
                    rc = snprintf(why, len, "tile %d k-block %d computed twice or out of range", tile, kb);
        }
    }
    /* every k-block of every tile once */
    for (size_t i = 0; i < (size_t)tiles * k_iters && !rc; i++)
        if (cover[i] != 1) rc = snprintf(why, len, "tile %zu k-block %zu never computed", i / k_iters, i % k_iters);
    /* the owners: a unit from k-block 0 that ends before k_iters adds the partials after it */
    for (int c = 0; c < g && !rc; c++) {
        int t = c, s = c * per, tile, kb0, kb1;
        const int e = s + per < total ? s + per : total;
        while (!rc && next_unit(first, k_iters, g, &t, &s, e, &tile, &kb0, &kb1)) {
            if (tile < first || kb0 != 0) continue;
            for (int have = kb1, c2 = c + 1; have < k_iters && !rc; c2++) {
                if (c2 >= g || partial[c2].tile != tile || partial[c2].kb0 != have) {
                    rc = snprintf(why, len, "owner %d of tile %d waits for cta %d, which leaves no partial "
                                  "of it from k-block %d", c, tile, c2, have);
                    break;
                }
                read[c2]++;
                const int s2 = c2 * per, e2 = s2 + per < total ? s2 + per : total;
                have += k_iters - have < e2 - s2 ? k_iters - have : e2 - s2;
                if (have != partial[c2].kb1)
                    rc = snprintf(why, len, "owner %d's count of tile %d is off at cta %d", c, tile, c2);
            }
        }
    }
    for (int c = 0; c < g && !rc; c++)
        if ((partial[c].tile >= 0) != (read[c] == 1))
            rc = snprintf(why, len, "cta %d's partial read %d times", c, read[c]);
    free(cover);
    free(partial);
    free(read);
    return rc != 0;
}

int main(void)
{
    char why[256] = "";
    TB_CASE("sk-1.1", "every deal walked as the kernel walks it: each k-block once, one partial a CTA, "
                      "owners read exactly their tile's partials, from CTAs after them") {
        static const int caps[] = { 1, 2, 7, 8, 114, 132 };
        long deals = 0, split = 0;
        int bad = 0;
        for (size_t ci = 0; ci < sizeof caps / sizeof caps[0] && !bad; ci++)
            for (int tiles = 1; tiles <= 3 * caps[ci] + 5 && !bad; tiles++)
                for (int ki = 1; ki <= 42 && !bad; ki++) {
                    const int k = ki <= 40 ? ki : ki == 41 ? 64 : 128;   /* and llm's long k */
                    int f, p, tot;
                    tb_sk_split(tiles, tb_sk_grid(tiles, caps[ci], k), k, 1, &f, &p, &tot);
                    split += tot > 0;
                    deals++;
                    if (walk(tiles, caps[ci], k, why, sizeof why)) {
                        printf("  cap %d, %d tiles, k_iters %d: %s\n", caps[ci], tiles, k, why);
                        bad = 1;
                    }
                }
        printf("  %ld deals walked, %ld of them split\n", deals, split);
        TB_CHECK(!bad);
    }
    TB_CASE("sk-1.2", "the rule's cases on 132 SMs") {
        int f, p, tot;
        /* the largest tile count split-K takes on 132 SMs (66 at the shipped half), and one more */
        const int tmax = 132 * TB_SK_FILL_NUM / TB_SK_FILL_DEN - (TB_SK_FILL_NUM == TB_SK_FILL_DEN);
        TB_CHECK(tb_sk_grid(tmax, 132, 17) == 132);
        tb_sk_split(tmax, 132, 17, 1, &f, &p, &tot);
        TB_CHECK(f == 0 && tot == tmax * 17 && p == (tmax * 17 + 131) / 132);
        if (tmax + 1 < 132) {
            TB_CHECK(tb_sk_grid(tmax + 1, 132, 17) == tmax + 1);
            tb_sk_split(tmax + 1, tmax + 1, 17, 1, &f, &p, &tot);
            TB_CHECK(f == tmax + 1 && tot == 0);
        }
        /* issue 22's 1023x1025x1032 at 128x128: 72 tiles, 17 k-blocks; split from a fraction of
         * 72/132 on (each CTA then 10 of a tile's 17), whole tiles at the shipped half */
        TB_CHECK(tb_sk_grid(72, 132, 17) == (72 <= tmax ? 132 : 72));
        /* under half a wave, as before: llm M = 128, N = 4096 at 128x256 (16 tiles, 64 k-blocks) */
        tb_sk_split(16, 132, 64, 1, &f, &p, &tot);
        TB_CHECK(f == 0 && p == 8);
        /* too short a k: no split */
        TB_CHECK(tb_sk_grid(72, 132, 7) == 72);
        /* the tail: 8192^3 at 128x128 (FP8: 64 k-blocks of 128), 4096 tiles = 31 waves and 4:
         * the 4 split in 8 pieces of 8 k-blocks on 32 CTAs, each piece at the same k offset in
         * every tile; BF16 (128 k-blocks of 64): pieces of 16 */
        TB_CHECK(tb_sk_tail_pieces(4, 132, 64) == WG_SK_TAIL_MAX);
        tb_sk_split(4096, 132, 64, 1, &f, &p, &tot);
        TB_CHECK(f == 31 * 132 && tot == 4 * 64 && p == 64 / WG_SK_TAIL_MAX);
        tb_sk_split(4096, 132, 128, 1, &f, &p, &tot);
        TB_CHECK(f == 31 * 132 && tot == 4 * 128 && p == 128 / WG_SK_TAIL_MAX);
        /* pieces: a power of two with R * S <= G (66 tiles: 2; 33: 4; 34: 2), and at least 8
         * k-blocks (16 k-blocks: 2 at most; 15: none) */
        TB_CHECK(tb_sk_tail_pieces(66, 132, 64) == 2 && tb_sk_tail_pieces(33, 132, 64) == 4 &&
                 tb_sk_tail_pieces(34, 132, 64) == 2 && tb_sk_tail_pieces(1, 132, 16) == 2 &&
                 tb_sk_tail_pieces(1, 132, 15) == 1);
        /* a last wave more than half full is not split: 8192^3 at 128x256, 2048 tiles = 15 waves
         * and 68 (the eighteenth session's rule split the last 1.5 waves there and lost) */
        tb_sk_split(2048, 132, 128, 1, &f, &p, &tot);
        TB_CHECK(f == 2048 && tot == 0);
        tb_sk_split(132 + 67, 132, 64, 1, &f, &p, &tot);
        TB_CHECK(f == 132 + 67 && tot == 0);
        tb_sk_split(132 + 66, 132, 64, 1, &f, &p, &tot);
        TB_CHECK(f == 132 && tot == 66 * 64 && p == 32);
        /* whole waves, and points without stream-K: no split */
        tb_sk_split(264, 132, 64, 1, &f, &p, &tot);
        TB_CHECK(f == 264 && tot == 0);
        tb_sk_split(72, 132, 17, 0, &f, &p, &tot);
        TB_CHECK(f == 72 && tot == 0);
    }
    return tb_test_done();
}
