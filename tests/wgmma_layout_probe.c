/* wgmma_layout_probe.c - a quick look at the wgmma family's layouts (issue 31), outside the
 * harness: loads wgmma point libraries with dlopen, and for each of a library's four variants
 * (tn, nn, nt, tt) and each shape builds the problem in the variant's own layout (as tilebench
 * sweep does: A row-major lda = k or column-major lda = m, B column-major ldb = k or row-major
 * ldb = n, D row-major ldd = n), fills A and B with small integers (exact in BF16 and in FP32
 * sums), runs setup/launch/teardown on its own buffers and compares D with a CPU product in
 * double. A failure prints where: the first wrong element and, over D's first 128 x 128, a map
 * of 16 x 16 blocks ('.' right, '#' any element wrong), which tells a k-group, an MN-block or a
 * swizzle slip apart at a glance. Also beta != 0 (C row-major) on the last shape. The CPU
 * product runs k outer over a row of B (cache-friendly), so large shapes cost little.
 * --pads adds P elements to every leading dimension (each P in turn, default 0 only: odd
 * pitches take a variant's unaligned path), with A and B allocated to their exact extent, as
 * the harness does, and C and D at their own pitch ldc = ldd. For each P, every shape runs
 * again with ldd = n + 1 (and the last with ldd = n + 3, beta != 0), A and B still at least +
 * P: a D pitch that is not a multiple of 8, which the points store with their predicated
 * epilogue (wgmma.cu) and wgmma_auto's small kernel straight from registers (a run that
 * would repeat one with ldd = n + P is left out). D is poisoned (0xffff, NaN) before every
 * launch and its padding columns (n .. ldd - 1) must keep the poison; A's and B's padding
 * is NaN too, which a read of it would spread into D. A wgmma_auto library (family
 * "wgmma_auto") also runs issue 22's odd shapes (127x129x136, 777x1234x552 in every layout,
 * 1023x1025x1032 and 1000^3 in tn: its small kernel in tn where ldd is odd, a point at
 * 1000^3 and after copies in the other layouts; then 127x129x136 with beta != 0) once, every
 * leading dimension least (ldd = n).
 * Also for the skinny library (any layout, m <= 64; CTest's gpu_skinny_probe).
 * Multi-tile cases (a point's and wgmma_auto's variants, every layout; any library's with
 * --tiles): the shapes above stop where k / 64 <= 5 < STAGES (the ring never wraps) and at ~15
 * tiles for 132 CTAs (no CTA runs a second tile: pingpong's second consumer and its cross-tile
 * handoff, the predicated epilogue's re-staging, the stream-K tail never run). So, after the
 * cases above, each --tiles shape (default 4096x4096x1000: 16 k-blocks, 512 tiles of 128x256
 * or 256x128, 1024 of 64x256, copies of A or B in wgmma_auto; 2504x3848x4096: 64 k-blocks, 320
 * and 310 tiles, partial tiles on both edges, a stream-K tail; 1792x1280x1032: 70 tiles of
 * 128x256 or 256x128, 17 k-blocks, the last partial: whole tiles under a wave at the shipped
 * split-K fraction, split when streamk_rules.cuh's fraction is widened past 70/132) runs
 * twice: one operand one-hot
 * (probe_common.h: B one non-zero per column at a column's own k, or A one per row, each
 * 64-wide k-block hot once in every run of k / 64 columns or rows, the other operand dense
 * +-1..8), once at
 * ldd = n (TMA stores) and once, the other operand one-hot, at ldd = n + 1 (the predicated
 * epilogue); then the last shape with alpha 0.5 and beta -0.75: B one-hot at ldd = n, A at
 * n + 3; wgmma_auto also 2304x2560x4096 (its table's 128x128 pingpong point, 360 tiles) at n
 * and n + 1. Each element of D is one product, exact in BF16, so the check is exact (any
 * difference wrong) and the CPU reference O(m n): a stale ring slot, a wrong k-block, tile or
 * cluster half reads as a product missing, doubled or another element's. The case's line says
 * which operand is one-hot, the tile count and the k-blocks; a failure prints the first wrong
 * element with its hot k, a map of the whole of D by 128 x 128 blocks and the wrong elements
 * by the k-block of their hot k (blocks >= STAGES only: the ring's wrap). "--tiles none" skips.
 *   wgmma_layout_probe [--shapes MxNxK,...] [--pads P,...] [--tiles MxNxK,...|none] LIB.so...
 * Exit 0 all right, 1 a wrong result or a failed call, 77 no GPU of compute capability 9.0. */
#define _GNU_SOURCE
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tilebench/variant.h"
#include "tb_gemm_problem.h"
#include "probe_common.h"

static uint16_t to_bf16(float f)   /* exact for the small integers used here */
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t rng = 88172645463325252ull;
static int small_int(void)   /* -3 .. 3 */
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (int)(rng % 7) - 3;
}

/* Elements a matrix of rows x cols spans at pitch ld in layout lay, as the harness allocates. */
static size_t extent(tb_layout lay, int64_t rows, int64_t cols, int64_t ld)
{
    return (size_t)(lay == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows);
}

/* The operands of a case: DENSE small integers everywhere (the CPU product O(m n k)); B_HOT and
 * A_HOT the multi-tile cases' one-hot B (columns) or A (rows) against a dense +-1..8 operand
 * (probe_common.h; the CPU product O(m n), exact). */
enum { DENSE = 0, B_HOT = 1, A_HOT = 2 };
static int n_sms;   /* the GPU's, for the multi-tile cases' notes */

/* A multi-tile case's operands (probe_common.h): one operand one-hot, its value +-1..8 at hot[]
 * (hot[j] for B's column j, hot[i] for A's row i), the other dense +-1..8 (pc_hash of its
 * logical row and column), both written in storage order (each row or column of the pitch,
 * padding left NaN); C -3..3; ref[i * n + j] = alpha * the one product + beta * C, O(m n):
 * |A B| <= 64, and alpha 0.5 times that plus -0.75 C is a multiple of 1/4 below 64 (8 bits),
 * exact in BF16. */
static void fill_one_hot(const tb_gemm *g, int mode, uint16_t *ha, uint16_t *hb, uint16_t *hc,
                         size_t nd, double *ref, int64_t *hot)
{
    static uint64_t cases;   /* its own sequence: the dense cases' small_int() stream is as it was */
    const int64_t m = g->m, n = g->n, k = g->k;
    const uint64_t seed = pc_mix(0x74696c65ull + ++cases);
    const uint64_t sa = pc_mix(seed + 1), sb = pc_mix(seed + 2), sh = pc_mix(seed + 3), sc = pc_mix(seed + 4);
    pc_hot_k(hot, mode == B_HOT ? n : m, k, 64, seed);
    const int arow = g->a_layout == TB_LAYOUT_ROW, bcol = g->b_layout == TB_LAYOUT_COL;
    for (int64_t o = 0; o < (arow ? m : k); o++)          /* A: m rows or k columns of lda */
        for (int64_t x = 0; x < (arow ? k : m); x++) {
            const int64_t i = arow ? o : x, kk = arow ? x : o;
            const int val = mode == B_HOT ? pc_nonzero(pc_hash(sa, i, kk), 8)
                          : kk == hot[i] ? pc_nonzero(pc_mix(sh ^ (uint64_t)i), 8) : 0;
            ha[o * g->lda + x] = to_bf16((float)val);
        }
    for (int64_t o = 0; o < (bcol ? n : k); o++)          /* B: n columns or k rows of ldb */
        for (int64_t x = 0; x < (bcol ? k : n); x++) {
            const int64_t kk = bcol ? x : o, j = bcol ? o : x;
            const int val = mode == A_HOT ? pc_nonzero(pc_hash(sb, kk, j), 8)
                          : kk == hot[j] ? pc_nonzero(pc_mix(sh ^ (uint64_t)j), 8) : 0;
            hb[o * g->ldb + x] = to_bf16((float)val);
        }
    for (size_t e = 0; e < nd; e++) hc[e] = to_bf16((float)((int)(pc_mix(sc + e) % 7) - 3));
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const double p = mode == B_HOT
                ? (double)pc_nonzero(pc_hash(sa, i, hot[j]), 8) * pc_nonzero(pc_mix(sh ^ (uint64_t)j), 8)
                : (double)pc_nonzero(pc_mix(sh ^ (uint64_t)i), 8) * pc_nonzero(pc_hash(sb, hot[i], j), 8);
            ref[i * n + j] = g->alpha * p + g->beta * from_bf16(hc[i * g->ldc + j]);
        }
}

/* One variant on one shape, A's and B's leading dimensions their least + pad, C's and D's
 * pitch n + dpad, operands by mode; 0 right, 1 wrong or failed. */
static int probe(const tb_variant *v, int64_t m, int64_t n, int64_t k, int64_t pad, int64_t dpad,
                 double alpha, double beta, int mode)
{
    const tb_param *lp = tb_param_find(v->params, "layout");
    const char *lay = lp && lp->s ? lp->s : "tn";
    tb_problem p = tb_test_gemm(lay, m, n, k, pad);
    tb_gemm *g = &p.gemm;
    g->alpha = alpha; g->beta = beta;
    g->ldc = g->ldd = n + dpad;
    g->stride_c = g->stride_d = m * g->ldd;
    printf("%-64s %-2s %5lldx%5lldx%5lld pad %lld ldd %5lld beta %4.2f", v->name, lay,
           (long long)m, (long long)n, (long long)k, (long long)pad, (long long)g->ldd, beta);
    if (mode != DENSE) {   /* which multi-tile case: the one-hot operand, the tiles, the ring */
        char note[160];
        pc_tile_note(v, m, n, k, 64, n_sms, note, sizeof note);
        printf(" [multi-tile, %s one-hot, alpha %.2f: %s]", mode == B_HOT ? "B" : "A", alpha, note);
    }
    printf(": ");
    char why[256] = "";
    if (v->supports && !v->supports(&p, why, sizeof why)) {
        printf("not supported: %s\n", why);
        return 1;
    }
    const size_t na = extent(g->a_layout, m, k, g->lda), nb = extent(g->b_layout, k, n, g->ldb);
    const size_t nd = (size_t)(m * g->ldd);   /* C and D: m rows at pitch ldd (= ldc) */
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hc = malloc(nd * 2), *hd = malloc(nd * 2);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    float *af = mode == DENSE ? malloc(na * sizeof *af) : NULL;   /* the dense case's A and B */
    float *bf = mode == DENSE ? malloc(nb * sizeof *bf) : NULL;
    const int64_t nhot = mode == B_HOT ? n : mode == A_HOT ? m : 0;   /* B's columns, A's rows */
    int64_t *hot = nhot ? malloc((size_t)nhot * sizeof *hot) : NULL;
    if (!ha || !hb || !hc || !hd || !ref || (mode == DENSE && (!af || !bf)) || (nhot && !hot)) {
        printf("out of memory\n");
        exit(1);
    }
    memset(ha, 0xff, na * 2);   /* A's and B's padding: NaN, which a read of it would spread */
    memset(hb, 0xff, nb * 2);
    if (mode == DENSE) {
        /* logical A(i, kk) and B(kk, j), stored in the layout's order */
        for (int64_t i = 0; i < m; i++)
            for (int64_t kk = 0; kk < k; kk++) {
                const float x = (float)small_int();
                af[i * k + kk] = x;
                ha[g->a_layout == TB_LAYOUT_ROW ? i * g->lda + kk : kk * g->lda + i] = to_bf16(x);
            }
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t j = 0; j < n; j++) {
                const float x = (float)small_int();
                bf[kk * n + j] = x;
                hb[g->b_layout == TB_LAYOUT_COL ? j * g->ldb + kk : kk * g->ldb + j] = to_bf16(x);
            }
        for (size_t e = 0; e < nd; e++) hc[e] = to_bf16((float)small_int());
        for (int64_t i = 0; i < m; i++) {       /* row i of A times B, k outer (cache-friendly) */
            double *r = ref + i * n;
            for (int64_t j = 0; j < n; j++) r[j] = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double a = af[i * k + kk];
                const float *b = bf + kk * n;
                for (int64_t j = 0; j < n; j++) r[j] += a * b[j];
            }
            for (int64_t j = 0; j < n; j++) r[j] = alpha * r[j] + beta * from_bf16(hc[i * g->ldc + j]);
        }
    } else {
        fill_one_hot(g, mode, ha, hb, hc, nd, ref, hot);
    }
    void *da = NULL, *db = NULL, *dc = NULL, *dd = NULL, *ws = NULL, *state = NULL;
    const size_t wsb = v->workspace_size ? v->workspace_size(&p) : 0;
    cudaStream_t st = NULL;
    int bad = 1;
    char msg[512] = "";
    if (cudaMalloc(&da, na * 2) || cudaMalloc(&db, nb * 2) || cudaMalloc(&dc, nd * 2) ||
        cudaMalloc(&dd, nd * 2) || (wsb && cudaMalloc(&ws, wsb)) || cudaStreamCreate(&st) ||
        cudaMemcpy(da, ha, na * 2, cudaMemcpyHostToDevice) ||
        cudaMemcpy(db, hb, nb * 2, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dc, hc, nd * 2, cudaMemcpyHostToDevice) || cudaMemset(dd, 0xff, nd * 2)) {
        printf("CUDA set-up failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto out;
    }
    if (v->setup && v->setup(&p, (tb_stream)st, &state, msg, sizeof msg)) {
        printf("setup failed: %s\n", msg);
        goto out;
    }
    tb_buffers io;
    memset(&io, 0, sizeof io);
    io.struct_size = sizeof io;
    io.in[0] = da; io.in[1] = db; io.in[2] = beta != 0.0 ? dc : NULL; io.out[0] = dd;
    int rc = v->launch(state, &p, &io, ws, wsb, (tb_stream)st);
    cudaError_t e = cudaStreamSynchronize(st);
    if (rc || e != cudaSuccess) {
        printf("launch returned %d, then %s\n", rc, cudaGetErrorString(e));
        if (v->teardown) v->teardown(state);
        goto out;
    }
    char desc[512] = "";
    if (v->describe) v->describe(state, desc, sizeof desc);
    if (v->teardown) v->teardown(state);
    cudaMemcpy(hd, dd, nd * 2, cudaMemcpyDeviceToHost);
    size_t nbad = 0, first = (size_t)-1, touched = 0;
    double maxerr = 0;
    const double rtol = mode == DENSE ? 0x1p-7 : 0, atol = mode == DENSE ? 1e-6 : 0;  /* one-hot: exact */
    pc_diag dg;
    memset(&dg, 0, sizeof dg);
    if (mode != DENSE) pc_diag_init(&dg, m, n, k, 64);
    for (size_t x = 0; x < (size_t)(m * n); x++) {
        const double got = from_bf16(hd[x / (size_t)n * (size_t)g->ldd + x % (size_t)n]);
        const double err = fabs(got - ref[x]);
        const int wrong = !(err <= fabs(ref[x]) * rtol + atol);   /* NaN counts as wrong */
        if (wrong && first == (size_t)-1) first = x;
        nbad += wrong;
        if (err > maxerr || got != got) maxerr = got != got ? INFINITY : err;
        if (wrong && mode != DENSE) {
            const int64_t i = (int64_t)(x / (size_t)n), j = (int64_t)(x % (size_t)n);
            pc_diag_add(&dg, i, j, hot[mode == B_HOT ? j : i]);
        }
    }
    for (int64_t i = 0; i < m; i++)   /* D's padding (columns n .. ldd - 1) keeps its poison */
        for (int64_t j = n; j < g->ldd; j++) touched += hd[i * g->ldd + j] != 0xffff;
    bad = nbad != 0 || touched != 0;
    printf("%s: %zu of %lld wrong, max abs err %g", bad ? "WRONG" : "right", nbad, (long long)(m * n), maxerr);
    if (touched) printf(", %zu padding elements of D written", touched);
    printf("  (%s)\n", desc);
    if (nbad) {
        printf("    first wrong D(%zu, %zu) = %g, want %g", first / (size_t)n, first % (size_t)n,
               from_bf16(hd[first / (size_t)n * (size_t)g->ldd + first % (size_t)n]), ref[first]);
        if (mode != DENSE) {
            const int64_t h = hot[mode == B_HOT ? (int64_t)(first % (size_t)n) : (int64_t)(first / (size_t)n)];
            printf(" (hot k %lld of the %s, k-block %lld of 64)", (long long)h,
                   mode == B_HOT ? "column" : "row", (long long)(h / 64));
        }
        putchar('\n');
    }
    if (nbad && mode != DENSE) pc_diag_print(&dg, mode == B_HOT ? "column" : "row");
    else if (nbad) {
        printf("    D's first 128 x 128 by 16 x 16 blocks (rows down, columns across):\n");
        for (int64_t bi = 0; bi < 8 && bi * 16 < m; bi++) {
            printf("      ");
            for (int64_t bj = 0; bj < 8 && bj * 16 < n; bj++) {
                int any = 0;
                for (int64_t i = bi * 16; i < bi * 16 + 16 && i < m; i++)
                    for (int64_t j = bj * 16; j < bj * 16 + 16 && j < n; j++) {
                        const double got = from_bf16(hd[i * g->ldd + j]);
                        any |= !(fabs(got - ref[i * n + j]) <= fabs(ref[i * n + j]) * 0x1p-7 + 1e-6);
                    }
                putchar(any ? '#' : '.');
            }
            putchar('\n');
        }
    }
    if (mode != DENSE) pc_diag_free(&dg);
out:
    if (st) cudaStreamDestroy(st);
    cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dd); cudaFree(ws);
    free(ha); free(hb); free(hc); free(hd); free(ref); free(af); free(bf); free(hot);
    return bad;
}

int main(int argc, char **argv)
{
    const char *shapes = "128x256x64,256x512x128,200x136x72,384x640x320", *pads = "0";
    const char *tiles = "4096x4096x1000,2504x3848x4096,1792x1280x1032";   /* the multi-tile cases' shapes */
    int first = 1, tiles_given = 0;
    while (first + 1 < argc && (!strcmp(argv[first], "--shapes") || !strcmp(argv[first], "--pads") ||
                                !strcmp(argv[first], "--tiles"))) {
        if (!strcmp(argv[first], "--shapes")) shapes = argv[first + 1];
        else if (!strcmp(argv[first], "--tiles")) { tiles = argv[first + 1]; tiles_given = 1; }
        else pads = argv[first + 1];
        first += 2;
    }
    if (first >= argc) {
        printf("usage: wgmma_layout_probe [--shapes MxNxK,...] [--pads P,...] [--tiles MxNxK,...|none] LIB.so...\n");
        return 2;
    }
    int64_t tl[8][3];
    const int nt = pc_parse_shapes(tiles, tl, 8);
    if (nt < 0) { printf("bad shape list '%s'\n", tiles); return 2; }
    if (!pc_sm90(&n_sms)) {
        printf("SKIP: no GPU of compute capability 9.0 (the wgmma family is sm_90a)\n");
        return 77;
    }
    int64_t sh[32][3];
    const int ns = pc_parse_shapes(shapes, sh, 32);
    if (ns < 0) { printf("bad shape list '%s'\n", shapes); return 2; }
    int64_t pd[8];
    int np = 0;
    for (const char *s = pads; *s && np < 8;) {
        long long a;
        int used = 0;
        if (sscanf(s, "%lld%n", &a, &used) != 1 || a < 0) { printf("bad pad list '%s'\n", pads); return 2; }
        pd[np++] = a;
        s += used;
        if (*s == ',') s++;
    }
    int fails = 0, runs = 0;
    for (int f = first; f < argc; f++) {
        void *h = dlopen(argv[f], RTLD_NOW | RTLD_LOCAL);
        tb_variant_query_fn q = h ? (tb_variant_query_fn)dlsym(h, TB_VARIANT_ENTRY) : NULL;
        if (!q) { printf("%s: %s\n", argv[f], h ? "no query" : dlerror()); fails++; continue; }
        for (uint32_t i = 0; i < 16; i++) {
            const tb_variant *v = q(TB_VARIANT_ABI_VERSION, i);
            if (!v) break;
            char name[128];
            tb_variant_make_name(v->family, v->params, name, sizeof name);   /* the loader's names */
            if (strcmp(name, v->name)) { printf("%s: name %s, want %s\n", argv[f], v->name, name); fails++; }
            for (int x = 0; x < np; x++) {
                for (int s = 0; s < ns; s++) {
                    fails += probe(v, sh[s][0], sh[s][1], sh[s][2], pd[x], pd[x], 1.0, 0.0, DENSE);
                    runs++;
                }
                fails += probe(v, sh[ns - 1][0], sh[ns - 1][1], sh[ns - 1][2], pd[x], pd[x], 0.5, -0.75, DENSE);
                runs++;
                /* D's pitch not a multiple of 8: the predicated stores (unless just run) */
                for (int s = 0; s < ns && pd[x] != 1; s++) {
                    fails += probe(v, sh[s][0], sh[s][1], sh[s][2], pd[x], 1, 1.0, 0.0, DENSE);
                    runs++;
                }
                if (pd[x] != 3) {
                    fails += probe(v, sh[ns - 1][0], sh[ns - 1][1], sh[ns - 1][2], pd[x], 3, 0.5, -0.75, DENSE);
                    runs++;
                }
            }
            if (strcmp(v->family, "wgmma_auto") == 0) {   /* issue 22's odd shapes, every path */
                static const int64_t odd[4][3] = { { 127, 129, 136 }, { 1023, 1025, 1032 },
                                                   { 1000, 1000, 1000 }, { 777, 1234, 552 } };
                for (int s = 0; s < 4; s++) {
                    if (odd[s][0] >= 1000 && i != 0) continue;   /* the two largest in tn (index 0) only */
                    fails += probe(v, odd[s][0], odd[s][1], odd[s][2], 0, 0, 1.0, 0.0, DENSE);
                    runs++;
                }
                fails += probe(v, 127, 129, 136, 0, 0, 0.5, -0.75, DENSE);
                runs++;
            }
            /* the multi-tile cases (the points' and wgmma_auto's, or any library's with --tiles):
             * each shape with one operand one-hot at ldd = n (TMA stores) and the other at
             * n + 1 (the predicated epilogue), which operand where alternating by shape; then
             * the last shape with alpha 0.5, beta -0.75: B one-hot at ldd = n, A at n + 3 */
            const int wauto = strcmp(v->family, "wgmma_auto") == 0;
            if (nt > 0 && (tiles_given || wauto || strcmp(v->family, "wgmma") == 0)) {
                for (int s = 0; s < nt; s++) {
                    const int one = s % 2 ? A_HOT : B_HOT;
                    fails += probe(v, tl[s][0], tl[s][1], tl[s][2], 0, 0, 1.0, 0.0, one);
                    fails += probe(v, tl[s][0], tl[s][1], tl[s][2], 0, 1, 1.0, 0.0, A_HOT + B_HOT - one);
                    runs += 2;
                }
                const int64_t *t = tl[nt - 1];
                fails += probe(v, t[0], t[1], t[2], 0, 0, 0.5, -0.75, B_HOT);
                fails += probe(v, t[0], t[1], t[2], 0, 3, 0.5, -0.75, A_HOT);
                runs += 2;
                if (wauto && !tiles_given) {   /* its table's 128x128 pingpong point, 360 tiles */
                    fails += probe(v, 2304, 2560, 4096, 0, 0, 1.0, 0.0, B_HOT);
                    fails += probe(v, 2304, 2560, 4096, 0, 1, 1.0, 0.0, A_HOT);
                    runs += 2;
                }
            }
        }
    }
    printf("%d runs, %d wrong or failed\n", runs, fails);
    return fails ? 1 : 0;
}
