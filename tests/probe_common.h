/* probe_common.h - what the wgmma probes' multi-tile cases share (wgmma_layout_probe.c, BF16;
 * wgmma_fp8_probe.c, E4M3): operands whose exact product costs O(m n) on the CPU at any k, and a
 * failure report over the whole of D; and BF16 on the host (pc_bf16, pc_float), which
 * test_attn_rule_device.cu reads too. Header-only, plain C that also compiles as C++.
 *
 * One operand is one-hot: B with one non-zero per column j, at k = hot[j] (D(i, j) = A(i, hot[j])
 * B(hot[j], j)), or A with one per row i, at hot[i] (D(i, j) = A(i, hot[i]) B(hot[i], j)). The
 * other is dense, every element a hash of (seed, row, column) (pc_hash), so the reference
 * recomputes the one element it needs instead of keeping a copy. Each D element is then one
 * product (plus zeros, exact in any accumulator), exact in BF16 for the values the probes use,
 * and a consumer that reads a stale ring slot, the wrong k-block, the wrong tile, the wrong
 * half of a cluster's multicast or the wrong rows of a stream-K partial gets a wrong element:
 * the hot product missing (0), counted twice, or another element's.
 * pc_hot_k() deals the hot k's so that each run of ceil(k / kb) consecutive columns (rows) has
 * exactly one hot k in every kb-wide k-block (the block order shuffled per run, the offset in
 * the block random): a tile at least ceil(k / kb) columns (rows) wide checks every k-block of
 * the ring, and a kernel's k-block of 2 kb is covered at least as well.
 * pc_diag counts the wrong elements of a case by 128 x 128 block of D (a map of the whole of D:
 * a second wave of tiles, a cluster half, one consumer's tiles show as a pattern) and by the
 * k-block their hot k falls in (a slip that starts when the ring wraps shows as blocks >=
 * STAGES). */
#ifndef TB_TESTS_PROBE_COMMON_H
#define TB_TESTS_PROBE_COMMON_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tilebench/variant.h"

static inline uint64_t pc_mix(uint64_t z)   /* splitmix64's finaliser */
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The dense operand's element (r, c): its row and column in the logical matrix (A: i, kk; B:
 * kk, j), independent of layout and pitch. */
static inline uint64_t pc_hash(uint64_t seed, int64_t r, int64_t c)
{
    return pc_mix(seed ^ ((uint64_t)r << 32 | (uint32_t)c));   /* distinct below 2^32 */
}

/* +-1 .. +-max from a hash: never 0, so a missing product always shows. */
static inline int pc_nonzero(uint64_t h, int max)
{
    const int v = (int)((h >> 1) % (uint64_t)max) + 1;
    return (h & 1) ? -v : v;
}

/* BF16 of f, round to nearest even (the epilogues' __floats2bfloat162_rn; a NaN stays a quiet
 * NaN, as the worker's conversion makes it), and back. */
static inline uint16_t pc_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC1u;
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float pc_float(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* hot[0 .. count-1]: a k in [0, k) per column (row); see the top of the file. */
static inline void pc_hot_k(int64_t *hot, int64_t count, int64_t k, int64_t kb, uint64_t seed)
{
    const int64_t nkb = (k + kb - 1) / kb;
    int64_t *perm = (int64_t *)malloc((size_t)nkb * sizeof *perm);
    if (!perm) { printf("out of memory\n"); exit(1); }
    uint64_t s = seed;
    for (int64_t x = 0; x < count; x++) {
        const int64_t at = x % nkb;
        if (at == 0) {   /* a new run: every k-block once, shuffled (Fisher-Yates) */
            for (int64_t b = 0; b < nkb; b++) perm[b] = b;
            for (int64_t b = nkb - 1; b > 0; b--) {
                const int64_t r = (int64_t)(pc_mix(s++) % (uint64_t)(b + 1)), t = perm[b];
                perm[b] = perm[r]; perm[r] = t;
            }
        }
        const int64_t b = perm[at], w = b == nkb - 1 ? k - b * kb : kb;
        hot[x] = b * kb + (int64_t)(pc_mix(s++) % (uint64_t)w);
    }
    free(perm);
}

/* "T tiles of TMxTN (W per SM), K k-blocks of kb, S stages", from the variant's params when it
 * names its tile (wgmma_auto does not: its describe() says what it chose). */
static inline void pc_tile_note(const tb_variant *v, int64_t m, int64_t n, int64_t k, int64_t kb,
                                int sms, char *buf, size_t len)
{
    const tb_param *tm = tb_param_find(v->params, "tile_m"), *tn = tb_param_find(v->params, "tile_n"),
                   *st = tb_param_find(v->params, "stages");
    int at = 0;
    if (tm && tn && tm->type == TB_PARAM_TYPE_INT && tn->type == TB_PARAM_TYPE_INT && tm->i > 0 && tn->i > 0) {
        const long long t = (long long)((m + tm->i - 1) / tm->i * ((n + tn->i - 1) / tn->i));
        at = snprintf(buf, len, "%lld tiles of %lldx%lld (%.1f per SM), ", t, (long long)tm->i,
                      (long long)tn->i, sms > 0 ? (double)t / sms : 0.0);
    }
    if (at < 0 || (size_t)at >= len) return;
    at += snprintf(buf + at, len - (size_t)at, "%lld k-blocks of %lld", (long long)((k + kb - 1) / kb),
                   (long long)kb);
    if (st && st->type == TB_PARAM_TYPE_INT && at > 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at, ", %lld stages", (long long)st->i);
}

#define PC_BLOCK 128    /* the map's block, rows and columns */
#define PC_MAP_MAX 64   /* blocks printed at most, down and across */

typedef struct pc_diag {
    int64_t m, n, kb, nkb, bm, bn;
    size_t *blk;        /* wrong elements per 128 x 128 block of D */
    size_t *byk;        /* wrong elements per kb-wide k-block of their hot k */
} pc_diag;

static inline void pc_diag_init(pc_diag *d, int64_t m, int64_t n, int64_t k, int64_t kb)
{
    d->m = m; d->n = n; d->kb = kb; d->nkb = (k + kb - 1) / kb;
    d->bm = (m + PC_BLOCK - 1) / PC_BLOCK; d->bn = (n + PC_BLOCK - 1) / PC_BLOCK;
    d->blk = (size_t *)calloc((size_t)(d->bm * d->bn), sizeof *d->blk);
    d->byk = (size_t *)calloc((size_t)d->nkb, sizeof *d->byk);
    if (!d->blk || !d->byk) { printf("out of memory\n"); exit(1); }
}

static inline void pc_diag_add(pc_diag *d, int64_t i, int64_t j, int64_t hotk)
{
    d->blk[i / PC_BLOCK * d->bn + j / PC_BLOCK]++;
    d->byk[hotk / d->kb]++;
}

/* The map of D ('.' right, 'x' some elements wrong, '#' all) and the wrong elements by the
 * k-block of their hot k; called when a case found any wrong element. */
static inline void pc_diag_print(const pc_diag *d, const char *hot_of)
{
    printf("    D by %d x %d blocks (rows down, columns across; '.' right, 'x' some wrong, '#' all)%s:\n",
           PC_BLOCK, PC_BLOCK, d->bm > PC_MAP_MAX || d->bn > PC_MAP_MAX ? ", the first 64 x 64" : "");
    for (int64_t bi = 0; bi < d->bm && bi < PC_MAP_MAX; bi++) {
        printf("      ");
        for (int64_t bj = 0; bj < d->bn && bj < PC_MAP_MAX; bj++) {
            const int64_t r = d->m - bi * PC_BLOCK < PC_BLOCK ? d->m - bi * PC_BLOCK : PC_BLOCK,
                          c = d->n - bj * PC_BLOCK < PC_BLOCK ? d->n - bj * PC_BLOCK : PC_BLOCK;
            const size_t w = d->blk[bi * d->bn + bj];
            putchar(w == 0 ? '.' : w == (size_t)(r * c) ? '#' : 'x');
        }
        putchar('\n');
    }
    int64_t blocks = 0, shown = 0;
    for (int64_t b = 0; b < d->nkb; b++) blocks += d->byk[b] != 0;
    printf("    wrong elements by the %lld-wide k-block holding their %s's hot k (block:count, %lld of %lld blocks):",
           (long long)d->kb, hot_of, (long long)blocks, (long long)d->nkb);
    for (int64_t b = 0; b < d->nkb && shown < 32; b++)
        if (d->byk[b]) { printf(" %lld:%zu", (long long)b, d->byk[b]); shown++; }
    printf("%s\n", blocks > shown ? " ..." : "");
}

static inline void pc_diag_free(pc_diag *d)
{
    free(d->blk); free(d->byk);
    d->blk = d->byk = NULL;
}

/* Parses "MxNxK,..." into sh (at most max); "none" gives 0 shapes. Returns the count, -1 on a
 * malformed list. */
static inline int pc_parse_shapes(const char *list, int64_t (*sh)[3], int max)
{
    int ns = 0;
    if (strcmp(list, "none") == 0) return 0;
    for (const char *s = list; *s && ns < max;) {
        long long a, b, c;
        int used = 0;
        if (sscanf(s, "%lldx%lldx%lld%n", &a, &b, &c, &used) != 3 || a < 1 || b < 1 || c < 1) return -1;
        sh[ns][0] = a; sh[ns][1] = b; sh[ns][2] = c; ns++;
        s += used;
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return ns;
}

/* 1 when the current GPU is compute capability 9.0 (what sm_90a code runs on), its SM count in
 * *sms; 0 otherwise (the probes then report skipped, 77). */
static inline int pc_sm90(int *sms)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        major != 9 || minor != 0)
        return 0;
    cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, dev);
    return 1;
}

#endif /* TB_TESTS_PROBE_COMMON_H */
