/* test_auto.c - wgmma_auto (variants/wgmma/auto.cu) on the host side: it says yes to every
 * shape of the square, llm and odd sets in layout tn, with leading dimensions as the sweep
 * makes them and padded by 1 and 3 elements (pitches TMA cannot describe), asks workspace for
 * the padded copies of A and B exactly when their pitch is not a multiple of 8 on its wgmma
 * path (D is never copied: the points store it at any ldd), and refuses other layouts and
 * batches with a reason; its nn, nt and tt variants likewise in their own layouts (issue 31);
 * and which path each odd shape takes (auto-1.7: skinny, the small kernel, a point with or
 * without copies of A and B; the rule is auto_rules.cuh's, which the library compiles too). No
 * GPU needed: supports() and workspace_size() are host arithmetic.
 * argv[1] = wgmma_auto's .so, argv[2] = the shape sets directory, argv[3] auto-table.json,
 * argv[4] skinny's .so. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "tb_gemm_problem.h"
#include "worker/loader.h"
#include "driver/shapes.h"
#include "common/tb.h"
#include "auto_rules.cuh"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t up256(size_t x) { return (x + 255) / 256 * 256; }
static int64_t pitch(int64_t cols, long align) { return (cols + align - 1) / align * align; }

/* The table's pitch_align (elements; 8 when the file says none, as CMake reads it) from
 * auto-table.json; -1 when the file cannot be read or parsed. */
static long table_align(const char *path)
{
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f) return -1;
    char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    cJSON *t = cJSON_Parse(buf);
    if (!t) return -1;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(t, "pitch_align");
    const long align = cJSON_IsNumber(a) ? (long)a->valuedouble : 8;
    cJSON_Delete(t);
    return align;
}

static tb_problem gemm(int64_t m, int64_t n, int64_t k, int pad)
{
    return tb_test_gemm("tn", m, n, k, pad);
}

/* gemm() in layout l (0 tn, 1 nn, 2 nt, 3 tt): A column-major for nn and nt (lda = m + pad),
 * B row-major for nt and tt (ldb = n + pad). */
static tb_problem gemm_l(int64_t m, int64_t n, int64_t k, int pad, int l)
{
    static const char *const lay[4] = { "tn", "nn", "nt", "tt" };
    return tb_test_gemm(lay[l], m, n, k, pad);
}

int main(int argc, char **argv)
{
    if (argc < 3) { printf("usage: test_auto WGMMA_AUTO.so SHAPES_DIR\n"); return 2; }
    char msg[TB_MSG_LEN], why[256];
    tb_lib *lib = NULL;
    const tb_variant *v = NULL;
    const tb_variant *lv[4] = { NULL, NULL, NULL, NULL };
    static const char *const lname[4] = { "tn", "nn", "nt", "tt" };
    TB_CASE("auto-1.1", "the library loads, four variants wgmma_auto_bf16_tn, _nn, _nt, _tt") {
        TB_CHECK(tb_lib_open(argv[1], &lib, msg, sizeof msg) == TB_OK);
        if (!lib) { printf("  %s\n", msg); return tb_test_done(); }
        for (int l = 0; l < 4; l++) {
            char want[64];
            snprintf(want, sizeof want, "wgmma_auto_bf16_%s", lname[l]);
            TB_CHECK(tb_lib_variant(lib, (uint32_t)l, &lv[l], msg, sizeof msg) == TB_OK && lv[l]);
            if (!lv[l]) return tb_test_done();
            TB_CHECK(strcmp(lv[l]->name, want) == 0);
            TB_CHECK(strcmp(lv[l]->family, "wgmma_auto") == 0);
            TB_CHECK(lv[l]->supports && lv[l]->workspace_size && lv[l]->setup && lv[l]->launch &&
                     lv[l]->describe);
        }
        const tb_variant *fifth = NULL;
        tb_lib_variant(lib, 4, &fifth, msg, sizeof msg);
        TB_CHECK(fifth == NULL);
        v = lv[0];
    }
    if (!v) return tb_test_done();
    tb_shape_list shapes = { 0 };
    const long align = table_align(argc > 3 ? argv[3] : NULL);
    TB_CASE("auto-1.2", "every shape of square, llm and odd, pitches as swept and padded by 1 and 3") {
        TB_CHECK(tb_shapes_add(&shapes, "square,llm,odd", argv[2], msg, sizeof msg) == TB_OK);
        TB_CHECK(shapes.n >= 60);
        int refused = 0, ws_wrong = 0, n = 0;
        for (size_t i = 0; i < shapes.n; i++) {
            const tb_shape *s = &shapes.v[i];
            for (int pad = 0; pad <= 3; pad += (pad ? 2 : 1)) {
                tb_problem p = gemm(s->m, s->n, s->k, pad);
                n++;
                why[0] = 0;
                if (!v->supports(&p, why, sizeof why)) {
                    if (refused++ < 5)
                        printf("  refused %lldx%lldx%lld pad %d: %s\n", (long long)s->m,
                               (long long)s->n, (long long)s->k, pad, why);
                    continue;
                }
                /* the skinny path (m <= 16) reads any pitch in place; the wgmma path copies
                 * the A and B that TMA cannot describe into the workspace (D it stores at any
                 * pitch) */
                const tb_gemm *g = &p.gemm;
                const int odd = g->lda % 8 || g->ldb % 8;
                const size_t ws = v->workspace_size(&p);
                const size_t need = g->m > 16 && odd ? (size_t)g->m * 2 : 0;
                if ((need && ws < need) || (g->m <= 16 && ws != 0)) {
                    if (ws_wrong++ < 5)
                        printf("  workspace %zu for %lldx%lldx%lld pad %d\n", ws, (long long)g->m,
                               (long long)g->n, (long long)g->k, pad);
                }
            }
        }
        printf("  %d problems, %d refused, %d with a wrong workspace\n", n, refused, ws_wrong);
        TB_CHECK(refused == 0);
        TB_CHECK(ws_wrong == 0);
    }
    TB_CASE("auto-1.3", "an aligned wgmma-path shape needs no copies") {
        tb_problem p = gemm(4096, 4096, 4096, 0);
        TB_CHECK(v->supports(&p, why, sizeof why));
        TB_CHECK(v->workspace_size(&p) < (size_t)4096 * 4096 * 2);
        /* lda = ldb = 4093: A and B copied (to a pitch of 4096); ldd 4097: D not copied (the
         * point's predicated epilogue stores it) */
        tb_problem q = gemm(4095, 4097, 4093, 0);
        const size_t ab = up256((size_t)4095 * 4096 * 2) + up256((size_t)4097 * 4096 * 2);
        const size_t wq = v->workspace_size(&q);
        printf("  4095x4097x4093: workspace %zu, A and B copied %zu\n", wq, ab);
        TB_CHECK(wq >= ab && wq < ab + (size_t)4095 * 4097 * 2);
    }
    TB_CASE("auto-1.3b", "rows 16-byte but not pitch_align aligned are copied (the table's pitch_align)") {
        /* argv[3]: auto-table.json; its pitch_align (elements) is the pitch A and B need */
        TB_CHECK(align > 0);
        printf("  pitch_align %ld\n", align);
        tb_problem p = gemm(8192, 8192, 8192, 8);   /* lda = ldb = 8200: 16-byte rows */
        TB_CHECK(v->supports(&p, why, sizeof why));
        const size_t copies = (size_t)2 * 8192 * 8192 * 2;   /* repacked at pitch k */
        if (align > 8) TB_CHECK(v->workspace_size(&p) >= copies);
        else TB_CHECK(v->workspace_size(&p) < copies);
        /* ... where that pays: not at 1000^3 (latency-bound: the copy costs more than it
         * saves), yes at 2049x2047x1000 (both measured, docs/perf.md) */
        tb_problem s = gemm(1000, 1000, 1000, 0);
        TB_CHECK(v->supports(&s, why, sizeof why));
        TB_CHECK(v->workspace_size(&s) < (size_t)2 * 1000 * 1000 * 2);
        tb_problem t = gemm(2049, 2047, 1000, 0);
        if (align > 8) TB_CHECK(v->workspace_size(&t) >= (size_t)(2049 + 2047) * 1000 * 2);
    }
    TB_CASE("auto-1.4", "other layouts and batches are refused with a reason") {
        tb_problem p = gemm(256, 256, 256, 0);
        p.gemm.b_layout = TB_LAYOUT_ROW;
        TB_CHECK(!v->supports(&p, why, sizeof why));
        TB_CHECK_STR_CONTAINS(why, "layout tn");
        p = gemm(256, 256, 256, 0);
        p.gemm.batch = 2;
        TB_CHECK(!v->supports(&p, why, sizeof why));
        TB_CHECK_STR_CONTAINS(why, "batch");
        p = gemm(256, 256, 256, 0);
        p.gemm.a_type = TB_DTYPE_F16;
        TB_CHECK(!v->supports(&p, why, sizeof why));
    }
    TB_CASE("auto-1.5", "nn, nt, tt: every shape of square, llm and odd in its own layout, pitches "
                        "padded by 0, 1 and 3; copies exactly when a pitch is not a multiple of 8; "
                        "each variant refuses the other layouts") {
        int refused = 0, ws_wrong = 0, crossed = 0, n = 0;
        for (int l = 1; l < 4; l++) {
            for (size_t i = 0; i < shapes.n; i++) {
                const tb_shape *sh = &shapes.v[i];
                for (int pad = 0; pad <= 3; pad += (pad ? 2 : 1)) {
                    tb_problem p = gemm_l(sh->m, sh->n, sh->k, pad, l);
                    n++;
                    why[0] = 0;
                    if (!lv[l]->supports(&p, why, sizeof why)) {
                        if (refused++ < 5)
                            printf("  %s refused %lldx%lldx%lld pad %d: %s\n", lname[l], (long long)sh->m,
                                   (long long)sh->n, (long long)sh->k, pad, why);
                        continue;
                    }
                    for (int o = 0; o < 4; o++)   /* the other three variants say no */
                        if (o != l && lv[o]->supports(&p, why, sizeof why)) crossed++;
                    /* the copies due (a pitch not a multiple of 8), each in its operand's own
                     * major order, at a pitch rounded up to pitch_align: the workspace holds
                     * at least their sum */
                    const tb_gemm *g = &p.gemm;
                    const int amn = g->a_layout == TB_LAYOUT_COL, bmn = g->b_layout == TB_LAYOUT_ROW;
                    size_t due = 0;
                    if (g->lda % 8) due += up256((size_t)(amn ? g->k : g->m) * (size_t)pitch(amn ? g->m : g->k, align) * 2);
                    if (g->ldb % 8) due += up256((size_t)(bmn ? g->k : g->n) * (size_t)pitch(bmn ? g->n : g->k, align) * 2);
                    const size_t ws = lv[l]->workspace_size(&p);
                    if ((g->m <= 16 ? ws != 0 : ws < due) && ws_wrong++ < 5)   /* skinny: none */
                        printf("  %s workspace %zu < %zu for %lldx%lldx%lld pad %d\n", lname[l], ws, due,
                               (long long)g->m, (long long)g->n, (long long)g->k, pad);
                }
            }
        }
        printf("  %d problems, %d refused, %d accepted by another layout's variant, %d with a wrong workspace\n",
               n, refused, crossed, ws_wrong);
        TB_CHECK(refused == 0);
        TB_CHECK(crossed == 0);
        TB_CHECK(ws_wrong == 0);
        /* an MN-major operand's copy is k rows of m (A) or of n (B), not m (n) rows of k: at
         * 1000x2000x512 nt, pad 1, A is 512 rows of 1024, B 512 of 2048 (a swapped orientation
         * would ask about 1.5 MB more), D not copied; the point's own workspace (flags,
         * partials) is under 64 KB there */
        tb_problem p = gemm_l(1000, 2000, 512, 1, 2);
        const size_t want = up256((size_t)512 * pitch(1000, align) * 2) +
                            up256((size_t)512 * pitch(2000, align) * 2);
        const size_t got = lv[2]->workspace_size(&p);
        printf("  nt 1000x2000x512 pad 1: workspace %zu, the copies %zu\n", got, want);
        TB_CHECK(got >= want && got < want + 65536);
    }
    TB_CASE("auto-1.6", "skinny's library: skinny_bf16_max_m-64_tn, _nn, _nt and _tt, each its own layout, m <= 64") {
        /* argv[4]: skinny's library (nn and nt read a column-major A, lda apart; nt and tt a
         * row-major B through skinny_rowb.cuh) */
        static const char *const lay[4] = { "tn", "nn", "nt", "tt" };
        tb_lib *sl = NULL;
        const tb_variant *sv[5] = { NULL, NULL, NULL, NULL, NULL };
        TB_CHECK(argc > 4 && tb_lib_open(argv[4], &sl, msg, sizeof msg) == TB_OK);
        for (int l = 0; sl && l < 4; l++) {
            TB_CHECK(tb_lib_variant(sl, (uint32_t)l, &sv[l], msg, sizeof msg) == TB_OK && sv[l]);
        }
        if (sl) TB_CHECK(tb_lib_variant(sl, 4, &sv[4], msg, sizeof msg) == TB_OK && !sv[4]);
        if (sv[0] && sv[1] && sv[2] && sv[3]) {
            for (int l = 0; l < 4; l++) {
                char want[64];
                snprintf(want, sizeof want, "skinny_bf16_max_m-64_%s", lay[l]);
                TB_CHECK(strcmp(sv[l]->name, want) == 0);
                TB_CHECK(sv[l]->workspace_size == NULL);   /* launch takes no workspace */
                for (int pad = 0; pad <= 3; pad += 3)
                    for (int o = 0; o < 4; o++) {
                        tb_problem pr = tb_test_gemm(lay[o], 16, 4096, 4096, pad);
                        char need[32];
                        snprintf(need, sizeof need, "layout %s", lay[l]);
                        why[0] = 0;
                        const int yes = sv[l]->supports(&pr, why, sizeof why);
                        TB_CHECK(yes == (o == l));
                        if (o != l) TB_CHECK_STR_CONTAINS(why, need);
                    }
                /* every m up to 64, odd n and k, in the variant's own layout */
                tb_problem one = tb_test_gemm(lay[l], 1, 1, 1, 0), odd = tb_test_gemm(lay[l], 64, 4097, 4093, 1);
                TB_CHECK(sv[l]->supports(&one, why, sizeof why) && sv[l]->supports(&odd, why, sizeof why));
                tb_problem big = tb_test_gemm(lay[l], 65, 512, 512, 0);
                TB_CHECK(!sv[l]->supports(&big, why, sizeof why));
                TB_CHECK_STR_CONTAINS(why, "at most 64");
            }
        }
        if (sl) tb_lib_free(sl);
    }
    TB_CASE("auto-1.7", "the path of each odd shape (tn, pitches as swept): skinny, small, a point with A and B copied or not") {
        /* 's' the small kernel (small.cuh: rows 16- but not 128-byte aligned, copying them
         * does not pay, at most 32 tiles of 64 x 136), 'c' a point after copies of A and B
         * (a pitch not a multiple of 8, or realign_pays()), 'w' a point on the operands as they
         * are, 'k' skinny (m <= 16); docs/perf.md, "predicated epilogue and small odd shapes" */
        static const struct { int64_t m, n, k; char path; } want[] = {
            { 127, 129, 136, 's' }, { 1023, 1025, 1032, 'w' }, { 1000, 1000, 1000, 'w' },
            { 777, 1234, 552, 'w' }, { 4095, 4097, 4093, 'c' }, { 2049, 2047, 1000, 'c' },
            { 3000, 5000, 7000, 'c' }, { 8191, 8193, 8184, 'c' }, { 4095, 4097, 4096, 'w' },
            { 1, 4097, 4096, 'k' }, { 1024, 1024, 1024, 'w' }, { 4096, 4096, 4096, 'w' },
        };
        int wrong = 0;
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            tb_problem p = gemm(want[i].m, want[i].n, want[i].k, 0);
            const tb_gemm *g = &p.gemm;
            const int small = tb_auto_small_pays(g, align);
            const int copy = g->lda % 8 || g->ldb % 8 || (align > 8 && tb_auto_realign_pays(g) &&
                                                          (g->lda % align || g->ldb % align));
            const char got = g->m <= 16 ? 'k' : small ? 's' : copy ? 'c' : 'w';
            const int yes = v->supports(&p, why, sizeof why);
            const size_t ws = v->workspace_size(&p);
            /* what the library shows: small and skinny need no workspace, copies need theirs */
            const int seen = want[i].path == 'c' ? ws >= (size_t)(g->m + g->n) * (size_t)g->k * 2
                                                 : ws == 0;
            printf("  %lldx%lldx%lld: path %c (want %c), supported %d, workspace %zu\n",
                   (long long)g->m, (long long)g->n, (long long)g->k, got, want[i].path, yes, ws);
            if (got != want[i].path || !yes || !seen) wrong++;
        }
        TB_CHECK(wrong == 0);
        /* the small kernel is tn only, and takes no more than 32 tiles of 64 x 136 */
        for (int l = 1; l < 4; l++) {
            tb_problem p = gemm_l(127, 129, 136, 0, l);
            TB_CHECK(!tb_auto_small_pays(&p.gemm, align));
        }
        tb_problem wide = gemm(320, 1025, 1032, 0);    /* 5 x 8 = 40 tiles */
        TB_CHECK(!tb_auto_small_pays(&wide.gemm, align));
        tb_problem edge = gemm(256, 1025, 1032, 0);    /* 4 x 8 = 32 tiles */
        TB_CHECK(tb_auto_small_pays(&edge.gemm, align));
        tb_problem odd_k = gemm(127, 129, 137, 0);      /* lda 137: no 16-byte rows */
        TB_CHECK(!tb_auto_small_pays(&odd_k.gemm, align));
        tb_problem long_k = gemm(127, 129, 65528, 0);   /* 4 tiles walking 65528 of k alone */
        TB_CHECK(!tb_auto_small_pays(&long_k.gemm, align));
        tb_problem edge_k = gemm(127, 129, 4088, 0);    /* within the guard */
        TB_CHECK(tb_auto_small_pays(&edge_k.gemm, align));
        tb_problem even_d = gemm(127, 136, 136, 0);     /* ldd 136: D needs nothing, the point */
        TB_CHECK(!tb_auto_small_pays(&even_d.gemm, align));
    }
    TB_CASE("auto-1.8", "a layout's own table rows override tn's at their shapes; elsewhere tn's decide") {
        static const tb_auto_row rows[] = {
            { 2048, 2048, 2048, 0, 0 },      /* tn */
            { 16, 4096, 4096, -1, 0 },       /* skinny: never a wgmma row */
            { 128, 4096, 4096, 2, 0 },       /* tn */
            { 2048, 2048, 2048, 1, 3 },      /* tt's own */
            { 8192, 8192, 8192, 4, 1 },      /* nn's own */
            { 0, 0, 0, -2, 0 },
        };
        TB_CHECK(tb_auto_nearest_row(rows, 2048, 2048, 2048, 3) == 3);   /* tt: its own row */
        TB_CHECK(tb_auto_nearest_row(rows, 2000, 2000, 2000, 3) == 3);   /* a tie: its own */
        TB_CHECK(tb_auto_nearest_row(rows, 128, 4096, 4096, 3) == 2);    /* tt: tn's row */
        TB_CHECK(tb_auto_nearest_row(rows, 16, 4096, 4096, 3) == 2);     /* not the skinny row */
        TB_CHECK(tb_auto_nearest_row(rows, 2048, 2048, 2048, 0) == 0);   /* tn: never tt's */
        TB_CHECK(tb_auto_nearest_row(rows, 2048, 2048, 2048, 2) == 0);   /* nt: no rows of its own */
        TB_CHECK(tb_auto_nearest_row(rows, 8192, 8192, 8192, 3) == 3);   /* never nn's row in tt */
        TB_CHECK(tb_auto_nearest_row(rows, 8192, 8192, 8192, 1) == 4);
        static const tb_auto_row none[] = { { 16, 16, 16, -1, 0 }, { 0, 0, 0, -2, 0 } };
        TB_CHECK(tb_auto_nearest_row(none, 1024, 1024, 1024, 0) == -1);
    }
    tb_shapes_free(&shapes);
    tb_lib_free(lib);
    return tb_test_done();
}
