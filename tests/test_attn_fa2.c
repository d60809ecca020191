/* test_attn_fa2.c - the attn_fa2 grid's libraries on the host side (issue 33): every point is
 * one library exporting one variant (index 0, NULL after), named as tb_variant_make_name()
 * names it from family "attn_fa2" and its parameters, the library file named after it; it
 * computes attention only (TB_EXT_OPS) and was built against growth 2 (TB_EXT_PROBLEM_SIZE);
 * exactly one point (the default) lies in the default folder. supports() accepts head dims 64
 * and 128 at every point, in BHSD and BSHD, causal, grouped-query, odd lengths, padded row
 * strides that stay multiples of 8; head dim 256 exactly where a warp has 16 rows and the
 * buffers (Q + 2 x stages x K/V tiles) fit 227 KB; and declines with a reason: other head
 * dims, Q/K/V strides not multiples of 8 elements, an odd O stride, causal with seq_q > seq_k,
 * a GEMM problem. No GPU needed: supports() is host arithmetic.
 * argv[1] = the number of grid points, argv[2] = the default folder, argv[3] = the grid folder. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "attn_test_util.h"
#include "worker/loader.h"
#include "common/op_attention.h"
#include "common/tb.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) { printf("usage: test_attn_fa2 POINTS DEFAULT_DIR GRID_DIR\n"); return 2; }
    const int want_points = atoi(argv[1]);
    char why[256];
    glob_t gl;
    memset(&gl, 0, sizeof gl);
    int in_default = 0;
    for (int i = 2; i < 4; i++) {
        char pat[1100];
        snprintf(pat, sizeof pat, "%s/attn_fa2_*.so", argv[i]);
        const size_t before = gl.gl_pathc;
        glob(pat, i > 2 ? GLOB_APPEND : 0, NULL, &gl);
        if (i == 2) in_default = (int)(gl.gl_pathc - before);
    }
    TB_CASE("fa2-1.1", "one library per grid point, one of them in the default folder") {
        printf("  %zu libraries (%d in the default folder), %d points in the grid\n",
               gl.gl_pathc, in_default, want_points);
        TB_CHECK((int)gl.gl_pathc == want_points);
        TB_CHECK(in_default == 1);
    }
    const tb_variant *vs[64];
    tb_lib *libs[64];
    int n = 0;
    TB_CASE("fa2-1.2", "each library: one variant named after the file and its parameters, attention only") {
        for (size_t f = 0; f < gl.gl_pathc && n < 64; f++) {
            tb_lib *lib = NULL;
            const tb_variant *v = one_variant(gl.gl_pathv[f], &lib);
            TB_CHECK(v != NULL);
            if (!v) continue;
            const char *base = strrchr(gl.gl_pathv[f], '/');
            base = base ? base + 1 : gl.gl_pathv[f];
            char name[128], file[140];
            tb_variant_make_name("attn_fa2", v->params, name, sizeof name);
            snprintf(file, sizeof file, "%s.so", v->name);
            const int64_t tm = param_int(v, "tile_m"), tn = param_int(v, "tile_n"),
                          st = param_int(v, "stages"), w = param_int(v, "warps");
            const int good = strcmp(v->family, "attn_fa2") == 0 && strcmp(name, v->name) == 0 &&
                             strcmp(file, base) == 0 && tm > 0 && tn > 0 && st > 0 && w > 0 &&
                             tb_variant_computes(v, TB_OP_ATTENTION_FWD) &&
                             !tb_variant_computes(v, TB_OP_GEMM) &&
                             tb_variant_problem_size(v) >= TB_PROBLEM_G2_SIZE &&
                             v->supports != NULL && v->sass && v->sass[0];
            if (!good) printf("  %s: name %s (made %s), family %s\n", base, v->name, name, v->family);
            TB_CHECK(good);
            if (good) { vs[n] = v; libs[n++] = lib; }
            else tb_lib_free(lib);
        }
        TB_CHECK(n == want_points);
    }
    TB_CASE("fa2-1.3", "accepted: head dims 64 and 128, BHSD and BSHD, causal, grouped-query, odd lengths, padded rows") {
        for (int i = 0; i < n; i++) TB_CHECK(refusals_common(vs[i]) == 0);
    }
    TB_CASE("fa2-1.4", "head dim 256 exactly where a warp has 16 rows and the buffers fit 227 KB") {
        int took = 0;
        for (int i = 0; i < n; i++) {
            const tb_variant *v = vs[i];
            const int64_t tm = param_int(v, "tile_m"), tn = param_int(v, "tile_n"),
                          st = param_int(v, "stages"), w = param_int(v, "warps");
            const int want = tm / w == 16 && (tm + 2 * st * tn) * 256 * 2 <= 227 * 1024;
            tb_problem p = attn(1, 4, 1, 128, 128, 256, 1, TB_ATTN_BHSD);
            const int yes = asks(v, &p, why, sizeof why);
            printf("  %s: head dim 256 %s %s\n", v->name, yes ? "accepted" : "declined:", why);
            TB_CHECK(yes == want);
            if (!yes) TB_CHECK_STR_CONTAINS(why, "256");
            took += yes;
        }
        TB_CHECK(n == 0 || took > 0);
    }
    TB_CASE("fa2-1.5", "declined with a reason: other head dims, misaligned strides, causal seq_q > seq_k, gemm") {
        for (int i = 0; i < n; i++) {
            const tb_variant *v = vs[i];
            tb_problem p = attn(1, 2, 2, 64, 64, 96, 0, TB_ATTN_BHSD);
            TB_CHECK(!asks(v, &p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "head_dim");
            p = attn(1, 2, 2, 64, 64, 32, 0, TB_ATTN_BHSD);
            TB_CHECK(!asks(v, &p, why, sizeof why));
            p = attn(1, 2, 2, 64, 64, 128, 0, TB_ATTN_BHSD);
            p.attention.v_stride[2] = 132;                       /* 8-byte aligned rows */
            TB_CHECK(!asks(v, &p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "multiples of 8");
            p = attn(1, 2, 2, 64, 64, 128, 0, TB_ATTN_BHSD);
            p.attention.q_stride[0] = 2 * 64 * 128 + 4;          /* a batch stride of 4 */
            TB_CHECK(!asks(v, &p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "multiples of 8");
            TB_CHECK(wrong_common_answers(v) == 0);
        }
    }
    for (int i = 0; i < n; i++) tb_lib_free(libs[i]);
    globfree(&gl);
    return tb_test_done();
}
