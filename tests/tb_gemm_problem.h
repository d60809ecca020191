/* tb_gemm_problem.h - the GEMM problem `tilebench sweep` builds, for the tests that call a
 * variant's supports(), workspace_size() or launch() by hand: BF16 in and out, FP32
 * accumulation, batch 1, layout lay ("tn", "nn", "nt" or "tt": A then B in BLAS letters, t = A
 * row-major / B row-major), every leading dimension its least value + pad, C and D row-major,
 * alpha 1, beta 0. Header-only. */
#ifndef TB_TESTS_GEMM_PROBLEM_H
#define TB_TESTS_GEMM_PROBLEM_H

#include <string.h>

#include "tilebench/variant.h"

static inline tb_problem tb_test_gemm(const char *lay, int64_t m, int64_t n, int64_t k, int64_t pad)
{
    tb_problem p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    p.op = TB_OP_GEMM;
    tb_gemm *g = &p.gemm;
    g->m = m; g->n = n; g->k = k; g->batch = 1;
    g->a_type = g->b_type = g->c_type = g->d_type = TB_DTYPE_BF16;
    g->acc_type = TB_DTYPE_F32;
    g->a_layout = lay[0] == 't' ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    g->b_layout = lay[1] == 'n' ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    g->c_layout = g->d_layout = TB_LAYOUT_ROW;
    g->lda = (g->a_layout == TB_LAYOUT_ROW ? k : m) + pad;
    g->ldb = (g->b_layout == TB_LAYOUT_COL ? k : n) + pad;
    g->ldc = g->ldd = n + pad;
    g->stride_a = (g->a_layout == TB_LAYOUT_ROW ? m : k) * g->lda;
    g->stride_b = (g->b_layout == TB_LAYOUT_COL ? n : k) * g->ldb;
    g->stride_c = g->stride_d = m * g->ldd;
    g->alpha = 1.0; g->beta = 0.0;
    return p;
}

#endif /* TB_TESTS_GEMM_PROBLEM_H */
