/* test_wgmma_layouts.c - the wgmma grid's libraries on the host side (issue 31): every point is
 * one library exporting four variants, indices 0-3 in the order tn, nn, nt, tt and NULL after,
 * named after the library with the layout appended and carrying it as their "layout"
 * parameter; each variant accepts exactly its own layout, with leading dimensions as the sweep
 * makes them (harness/driver/sweep.c: A row-major lda = k, column-major lda = m; B column-major
 * ldb = k, row-major ldb = n; C and D row-major, n), and refuses the other three with a reason
 * naming the layout it needs, and any lda or ldb that is not a multiple of 8 elements (16
 * bytes: TMA loads from them) with a reason naming the leading dimension; any ldd is accepted
 * (a pitch TMA cannot store to is stored by the predicated epilogue). No GPU needed: supports() is host arithmetic.
 * argv[1] = the number of grid points, argv[2..] = the directories holding their libraries,
 * argv[last] = the shape sets directory. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "tb_gemm_problem.h"
#include "worker/loader.h"
#include "driver/shapes.h"
#include "common/tb.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const LAYOUTS[4] = { "tn", "nn", "nt", "tt" };   /* the query's order */

/* The problem of shape m x n x k in layout lay ("tn" ...), every leading dimension padded by
 * pad, as tilebench sweep builds it. */
static tb_problem gemm(const char *lay, int64_t m, int64_t n, int64_t k, int pad)
{
    return tb_test_gemm(lay, m, n, k, pad);
}

static const char *param_str(const tb_variant *v, const char *key)
{
    const tb_param *p = tb_param_find(v->params, key);
    return p && p->type == TB_PARAM_TYPE_STR ? p->s : NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) { printf("usage: test_wgmma_layouts POINTS DIR... SHAPES_DIR\n"); return 2; }
    const int want_points = atoi(argv[1]);
    const char *shapes_dir = argv[argc - 1];
    char msg[TB_MSG_LEN], why[256];
    glob_t gl;
    memset(&gl, 0, sizeof gl);
    for (int i = 2; i < argc - 1; i++) {
        char pat[1100];
        snprintf(pat, sizeof pat, "%s/wgmma_bf16_*.so", argv[i]);
        glob(pat, i > 2 ? GLOB_APPEND : 0, NULL, &gl);
    }
    tb_shape_list shapes = { 0 };
    TB_CASE("layouts-1.1", "one library per grid point, the shape sets read") {
        TB_CHECK((int)gl.gl_pathc == want_points);
        printf("  %zu libraries, %d points in the grid\n", gl.gl_pathc, want_points);
        TB_CHECK(tb_shapes_add(&shapes, "square,llm,odd", shapes_dir, msg, sizeof msg) == TB_OK);
        TB_CHECK(shapes.n >= 60);
    }
    const tb_variant *vs[64][4];
    int nlib = 0;
    TB_CASE("layouts-1.2", "each library: indices 0-3 tn, nn, nt, tt, named library + _layout, NULL at 4") {
        for (size_t f = 0; f < gl.gl_pathc && nlib < 64; f++) {
            tb_lib *lib = NULL;
            if (tb_lib_open(gl.gl_pathv[f], &lib, msg, sizeof msg) != TB_OK) {
                printf("  %s\n", msg);
                TB_CHECK(!"library loads");
                continue;
            }
            const char *base = strrchr(gl.gl_pathv[f], '/');
            base = base ? base + 1 : gl.gl_pathv[f];
            const size_t stem = strlen(base) - 3;   /* without .so */
            int good = 1;
            for (uint32_t i = 0; i < 4; i++) {
                const tb_variant *v = NULL;
                if (tb_lib_variant(lib, i, &v, msg, sizeof msg) != TB_OK || !v) {
                    printf("  %s index %u: %s\n", base, i, v ? "" : msg);
                    good = 0;
                    break;
                }
                const size_t len = strlen(v->name);
                const int named = len == stem + 3 && strncmp(v->name, base, stem) == 0 &&
                                  v->name[stem] == '_' && strcmp(v->name + stem + 1, LAYOUTS[i]) == 0;
                const char *lay = param_str(v, "layout");
                if (!named || !lay || strcmp(lay, LAYOUTS[i]) || strcmp(v->family, "wgmma")) {
                    printf("  %s index %u: name %s, layout %s\n", base, i, v->name, lay ? lay : "none");
                    good = 0;
                }
                vs[nlib][i] = v;
            }
            const tb_variant *v4 = NULL;
            TB_CHECK(tb_lib_variant(lib, 4, &v4, msg, sizeof msg) == TB_OK && v4 == NULL);
            TB_CHECK(good);
            if (good) nlib++;
        }
        TB_CHECK(nlib == want_points);
    }
    TB_CASE("layouts-1.3", "each variant supports exactly its layout, on square, llm and odd, pitches as swept and padded by 1 and 8") {
        int wrong = 0, accepted[4] = { 0 }, problems = 0;
        for (int l = 0; l < nlib; l++)
            for (int vi = 0; vi < 4; vi++) {
                const tb_variant *v = vs[l][vi];
                for (size_t si = 0; si < shapes.n; si++) {
                    const tb_shape *s = &shapes.v[si];
                    if (s->batch != 1) continue;
                    for (int pl = 0; pl < 4; pl++)
                        for (int pad = 0; pad <= 8; pad += pad ? 7 : 1) {
                            tb_problem p = gemm(LAYOUTS[pl], s->m, s->n, s->k, pad);
                            const tb_gemm *g = &p.gemm;
                            problems++;
                            why[0] = 0;
                            const int yes = v->supports(&p, why, sizeof why);
                            char need[32];
                            snprintf(need, sizeof need, "needs layout %s", LAYOUTS[vi]);
                            int ok;
                            if (pl != vi) {
                                ok = !yes && strstr(why, need) != NULL;
                            } else {
                                /* ldd may be anything: the predicated epilogue stores D */
                                const int aligned = g->lda % 8 == 0 && g->ldb % 8 == 0;
                                const char *ld = g->lda % 8 ? "lda" : "ldb";
                                ok = aligned ? yes : !yes && strstr(why, ld) != NULL;
                                accepted[vi] += yes;
                            }
                            if (!ok && wrong++ < 8)
                                printf("  %s on %s %lldx%lldx%lld pad %d: %s (%s)\n", v->name,
                                       LAYOUTS[pl], (long long)s->m, (long long)s->n,
                                       (long long)s->k, pad, yes ? "accepted" : "refused", why);
                        }
                }
            }
        printf("  %d problems, %d answered wrongly; accepted in its own layout: tn %d, nn %d, nt %d, tt %d\n",
               problems, wrong, accepted[0], accepted[1], accepted[2], accepted[3]);
        TB_CHECK(wrong == 0);
        for (int i = 0; i < 4; i++) TB_CHECK(accepted[i] > 0);
    }
    TB_CASE("layouts-1.4", "the layout's own pitch rule: lda is m in nn and nt, ldb is n in nt and tt") {
        if (nlib > 0) {
            /* 1000 x 1004 x 1000: tn's pitches (k) are aligned, nn's lda (m = 1000) too, but
             * nt's and tt's ldb (n = 1004) is not */
            const int want[4] = { 1, 1, 0, 0 };
            for (int vi = 0; vi < 4; vi++) {
                tb_problem p = gemm(LAYOUTS[vi], 1000, 1004, 1000, 0);
                p.gemm.ldc = p.gemm.ldd = 1008;
                p.gemm.stride_c = p.gemm.stride_d = 1000 * 1008;
                why[0] = 0;
                const int yes = vs[0][vi]->supports(&p, why, sizeof why);
                printf("  %s on 1000x1004x1000: %s %s\n", vs[0][vi]->name, yes ? "accepted" : "refused:", why);
                TB_CHECK(yes == want[vi]);
                if (!want[vi]) TB_CHECK_STR_CONTAINS(why, "ldb = 1004");
            }
            tb_problem p = gemm("nn", 1004, 1000, 1000, 0);   /* nn: lda = m = 1004 */
            p.gemm.ldc = p.gemm.ldd = 1000;
            why[0] = 0;
            TB_CHECK(!vs[0][1]->supports(&p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "lda = 1004");
        }
    }
    tb_shapes_free(&shapes);
    globfree(&gl);
    return tb_test_done();
}
