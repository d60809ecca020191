/* test_attn_hopper.c - the attn_hopper grid's libraries on the host side (issue 33): every
 * point is one library exporting one variant (index 0, NULL after), named as
 * tb_variant_make_name() names it from family "attn_hopper" and its parameters (dtype, tile_m
 * 128, tile_n, stages, schedule pingpong|cooperative), the library file named after it; it
 * computes attention only (TB_EXT_OPS), was built against growth 2 (TB_EXT_PROBLEM_SIZE) and
 * for sm_90a; exactly one point, the default (argv[4]), lies in the default folder (since the
 * family passed on an H100, sixteenth session), the rest in the grid folder. supports() accepts head dims 64 and 128, BHSD and BSHD, causal,
 * grouped-query, odd lengths, padded row strides that stay multiples of 8; and declines with a
 * reason: head dim 256 (named), other head dims, Q/K/V strides not multiples of 8 elements (TMA),
 * a zero stride along a dimension longer than 1 (TMA), an odd O stride, causal with seq_q >
 * seq_k, other dtypes, a GEMM problem, a growth-1 struct. No GPU needed: supports() is host
 * arithmetic.
 * argv[1] = the number of grid points, argv[2] = the default folder, argv[3] = the grid folder,
 * argv[4] = the default point's name (variants/attn_hopper/CMakeLists.txt, TB_ATTN_HOPPER_DEFAULT). */
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
    if (argc != 5) { printf("usage: test_attn_hopper POINTS DEFAULT_DIR GRID_DIR DEFAULT_POINT\n"); return 2; }
    const int want_points = atoi(argv[1]);
    char why[256];
    glob_t gl;
    memset(&gl, 0, sizeof gl);
    int in_default = 0, default_found = 0;
    char want_default[1200];
    snprintf(want_default, sizeof want_default, "%s/%s.so", argv[2], argv[4]);
    for (int i = 2; i < 4; i++) {
        char pat[1100];
        snprintf(pat, sizeof pat, "%s/attn_hopper_*.so", argv[i]);
        const size_t before = gl.gl_pathc;
        glob(pat, i > 2 ? GLOB_APPEND : 0, NULL, &gl);
        if (i == 2) {
            in_default = (int)(gl.gl_pathc - before);
            for (size_t f = before; f < gl.gl_pathc; f++)
                default_found |= strcmp(gl.gl_pathv[f], want_default) == 0;
        }
    }
    TB_CASE("hop-1.1", "one library per grid point, the default point alone in the default folder") {
        printf("  %zu libraries (%d in the default folder, %s %s), %d points in the grid\n",
               gl.gl_pathc, in_default, argv[4], default_found ? "among them" : "NOT there", want_points);
        TB_CHECK((int)gl.gl_pathc == want_points);
        TB_CHECK(in_default == 1);
        TB_CHECK(default_found);
        TB_CHECK(want_points >= 2);
    }
    const tb_variant *vs[64];
    tb_lib *libs[64];
    int n = 0;
    TB_CASE("hop-1.2", "each library: one variant named after the file and its parameters, attention only, sm_90a") {
        for (size_t f = 0; f < gl.gl_pathc && n < 64; f++) {
            tb_lib *lib = NULL;
            const tb_variant *v = one_variant(gl.gl_pathv[f], &lib);
            TB_CHECK(v != NULL);
            if (!v) continue;
            const char *base = strrchr(gl.gl_pathv[f], '/');
            base = base ? base + 1 : gl.gl_pathv[f];
            char name[128], file[140], want[128];
            tb_variant_make_name("attn_hopper", v->params, name, sizeof name);
            snprintf(file, sizeof file, "%s.so", v->name);
            const int64_t tm = param_int(v, "tile_m"), tn = param_int(v, "tile_n"),
                          st = param_int(v, "stages");
            const char *sched = param_str(v, "schedule");
            snprintf(want, sizeof want, "attn_hopper_bf16_%lldx%lld_s%lld_%s", (long long)tm,
                     (long long)tn, (long long)st, sched);
            const int good = strcmp(v->family, "attn_hopper") == 0 && strcmp(name, v->name) == 0 &&
                             strcmp(want, v->name) == 0 && strcmp(file, base) == 0 && tm == 128 &&
                             (tn == 64 || tn == 128) && st >= 2 &&
                             (strcmp(sched, "pingpong") == 0 || strcmp(sched, "cooperative") == 0) &&
                             tb_variant_computes(v, TB_OP_ATTENTION_FWD) &&
                             !tb_variant_computes(v, TB_OP_GEMM) &&
                             tb_variant_problem_size(v) >= TB_PROBLEM_G2_SIZE &&
                             v->supports != NULL && v->sass && strcmp(v->sass, "sm_90a") == 0;
            if (!good) printf("  %s: name %s (made %s, want %s), family %s, sass %s\n", base, v->name,
                              name, want, v->family, v->sass ? v->sass : "(null)");
            else printf("  %s\n", v->name);
            TB_CHECK(good);
            if (good) { vs[n] = v; libs[n++] = lib; }
            else tb_lib_free(lib);
        }
        TB_CHECK(n == want_points);
    }
    TB_CASE("hop-1.3", "accepted: head dims 64 and 128, BHSD and BSHD, causal, grouped-query, odd lengths, padded rows") {
        for (int i = 0; i < n; i++) {
            const tb_variant *v = vs[i];
            const tb_problem ps[] = {   /* beyond the common set: a long sequence, one row */
                attn(4, 16, 16, 8192, 8192, 128, 0, TB_ATTN_BHSD),
                attn(1, 1, 1, 1, 1, 64, 0, TB_ATTN_BHSD),
            };
            TB_CHECK(refusals_common(v) == 0);
            TB_CHECK(refusals(v, ps, sizeof ps / sizeof ps[0]) == 0);
            tb_problem p = attn(1, 2, 2, 64, 64, 128, 0, TB_ATTN_BHSD);
            p.attention.q_stride[0] = 0;                         /* batch 1: its stride is unused */
            TB_CHECK(asks(v, &p, why, sizeof why));
        }
    }
    TB_CASE("hop-1.4", "declined with a reason: head dim 256 (named) and others, TMA strides, odd O stride, causal seq_q > seq_k, dtypes, gemm") {
        for (int i = 0; i < n; i++) {
            const tb_variant *v = vs[i];
            tb_problem p = attn(1, 4, 1, 128, 128, 256, 1, TB_ATTN_BHSD);
            TB_CHECK(!asks(v, &p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "256");
            p = attn(1, 2, 2, 64, 64, 96, 0, TB_ATTN_BHSD);
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
            p = attn(2, 2, 2, 64, 64, 128, 0, TB_ATTN_BHSD);
            p.attention.k_stride[0] = 0;                         /* two batches on one K */
            TB_CHECK(!asks(v, &p, why, sizeof why));
            TB_CHECK_STR_CONTAINS(why, "> 0");
            TB_CHECK(wrong_common_answers(v) == 0);
        }
    }
    for (int i = 0; i < n; i++) tb_lib_free(libs[i]);
    globfree(&gl);
    return tb_test_done();
}
