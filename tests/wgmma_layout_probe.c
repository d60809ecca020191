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
 * 1023x1025x1032 and 1000^3 in tn: its small kernel in tn, points after copies in the other
 * layouts; then 127x129x136 with beta != 0) once, every leading dimension least (ldd = n).
 * Also for the skinny library (any layout, m <= 64; CTest's gpu_skinny_probe).
 *   wgmma_layout_probe [--shapes MxNxK,...] [--pads P,...] LIB.so...
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

/* One variant on one shape, A's and B's leading dimensions their least + pad, C's and D's
 * pitch n + dpad; 0 right, 1 wrong or failed. */
static int probe(const tb_variant *v, int64_t m, int64_t n, int64_t k, int64_t pad, int64_t dpad,
                 double alpha, double beta)
{
    const tb_param *lp = tb_param_find(v->params, "layout");
    const char *lay = lp && lp->s ? lp->s : "tn";
    tb_problem p = tb_test_gemm(lay, m, n, k, pad);
    tb_gemm *g = &p.gemm;
    g->alpha = alpha; g->beta = beta;
    g->ldc = g->ldd = n + dpad;
    g->stride_c = g->stride_d = m * g->ldd;
    printf("%-64s %-2s %5lldx%5lldx%5lld pad %lld ldd %5lld beta %4.2f: ", v->name, lay,
           (long long)m, (long long)n, (long long)k, (long long)pad, (long long)g->ldd, beta);
    char why[256] = "";
    if (v->supports && !v->supports(&p, why, sizeof why)) {
        printf("not supported: %s\n", why);
        return 1;
    }
    const size_t na = extent(g->a_layout, m, k, g->lda), nb = extent(g->b_layout, k, n, g->ldb);
    const size_t nd = (size_t)(m * g->ldd);   /* C and D: m rows at pitch ldd (= ldc) */
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hc = malloc(nd * 2), *hd = malloc(nd * 2);
    double *ref = malloc((size_t)(m * n) * sizeof *ref);
    float *af = malloc(na * sizeof *af), *bf = malloc(nb * sizeof *bf);
    if (!ha || !hb || !hc || !hd || !ref || !af || !bf) { printf("out of memory\n"); exit(1); }
    memset(ha, 0xff, na * 2);   /* A's and B's padding: NaN, which a read of it would spread */
    memset(hb, 0xff, nb * 2);
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
    for (size_t x = 0; x < (size_t)(m * n); x++) {
        const double got = from_bf16(hd[x / (size_t)n * (size_t)g->ldd + x % (size_t)n]);
        const double err = fabs(got - ref[x]);
        const int wrong = !(err <= fabs(ref[x]) * 0x1p-7 + 1e-6);   /* NaN counts as wrong */
        if (wrong && first == (size_t)-1) first = x;
        nbad += wrong;
        if (err > maxerr || got != got) maxerr = got != got ? INFINITY : err;
    }
    for (int64_t i = 0; i < m; i++)   /* D's padding (columns n .. ldd - 1) keeps its poison */
        for (int64_t j = n; j < g->ldd; j++) touched += hd[i * g->ldd + j] != 0xffff;
    bad = nbad != 0 || touched != 0;
    printf("%s: %zu of %lld wrong, max abs err %g", bad ? "WRONG" : "right", nbad, (long long)(m * n), maxerr);
    if (touched) printf(", %zu padding elements of D written", touched);
    printf("  (%s)\n", desc);
    if (nbad) {
        printf("    first wrong D(%zu, %zu) = %g, want %g\n", first / (size_t)n, first % (size_t)n,
               from_bf16(hd[first / (size_t)n * (size_t)g->ldd + first % (size_t)n]), ref[first]);
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
out:
    if (st) cudaStreamDestroy(st);
    cudaFree(da); cudaFree(db); cudaFree(dc); cudaFree(dd); cudaFree(ws);
    free(ha); free(hb); free(hc); free(hd); free(ref); free(af); free(bf);
    return bad;
}

int main(int argc, char **argv)
{
    const char *shapes = "128x256x64,256x512x128,200x136x72,384x640x320", *pads = "0";
    int first = 1;
    while (first + 1 < argc && (!strcmp(argv[first], "--shapes") || !strcmp(argv[first], "--pads"))) {
        if (!strcmp(argv[first], "--shapes")) shapes = argv[first + 1];
        else pads = argv[first + 1];
        first += 2;
    }
    if (first >= argc) {
        printf("usage: wgmma_layout_probe [--shapes MxNxK,...] [--pads P,...] LIB.so...\n");
        return 2;
    }
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess ||
        major != 9 || minor != 0) {
        printf("SKIP: no GPU of compute capability 9.0 (the wgmma family is sm_90a)\n");
        return 77;
    }
    int64_t sh[32][3];
    int ns = 0;
    for (const char *s = shapes; *s && ns < 32;) {
        long long a, b, c;
        int used = 0;
        if (sscanf(s, "%lldx%lldx%lld%n", &a, &b, &c, &used) != 3) { printf("bad shape list '%s'\n", shapes); return 2; }
        sh[ns][0] = a; sh[ns][1] = b; sh[ns][2] = c; ns++;
        s += used;
        if (*s == ',') s++;
    }
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
                    fails += probe(v, sh[s][0], sh[s][1], sh[s][2], pd[x], pd[x], 1.0, 0.0);
                    runs++;
                }
                fails += probe(v, sh[ns - 1][0], sh[ns - 1][1], sh[ns - 1][2], pd[x], pd[x], 0.5, -0.75);
                runs++;
                /* D's pitch not a multiple of 8: the predicated stores (unless just run) */
                for (int s = 0; s < ns && pd[x] != 1; s++) {
                    fails += probe(v, sh[s][0], sh[s][1], sh[s][2], pd[x], 1, 1.0, 0.0);
                    runs++;
                }
                if (pd[x] != 3) {
                    fails += probe(v, sh[ns - 1][0], sh[ns - 1][1], sh[ns - 1][2], pd[x], 3, 0.5, -0.75);
                    runs++;
                }
            }
            if (strcmp(v->family, "wgmma_auto") == 0) {   /* issue 22's odd shapes, every path */
                static const int64_t odd[4][3] = { { 127, 129, 136 }, { 1023, 1025, 1032 },
                                                   { 1000, 1000, 1000 }, { 777, 1234, 552 } };
                for (int s = 0; s < 4; s++) {
                    if (odd[s][0] >= 1000 && i != 0) continue;   /* the two largest in tn (index 0) only */
                    fails += probe(v, odd[s][0], odd[s][1], odd[s][2], 0, 0, 1.0, 0.0);
                    runs++;
                }
                fails += probe(v, 127, 129, 136, 0, 0, 0.5, -0.75);
                runs++;
            }
        }
    }
    printf("%d runs, %d wrong or failed\n", runs, fails);
    return fails ? 1 : 0;
}
