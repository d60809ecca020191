/* op_gemm.c - GEMM's entry in the op seam (op.h): the MxNxK[xB] token, the work counted
 * (2·M·N·K·batch) and the compulsory traffic of D = alpha·A·B + beta·C. The token parser is
 * the one driver/shapes.c held before the seam, unchanged in what it accepts and says. */
#include "common/op.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define TB_GEMM_MAX_DIM (1ll << 20)   /* 1M: anything larger is a typo, not a GEMM */

static int claims(const char *tok)
{
    (void)tok;
    return 1;   /* the default form: every token no other operation claims */
}

static int parse(const char *tok, tb_shape *out, char *msg, size_t len)
{
    int64_t v[4] = { 0, 0, 0, 1 };
    memset(out, 0, sizeof *out);
    int nv = tb_op_dims(tok, strlen(tok), v, 4, TB_GEMM_MAX_DIM);
    if (nv == -2) return tb_fail(msg, len, TB_EUSAGE, "shape '%.64s' is too large", tok);
    if (nv < 3)
        return tb_fail(msg, len, TB_EUSAGE, "malformed shape '%.64s' (want MxNxK, MxNxKxB or "
                       "BxHxSqxSkxD[:causal][:hkv=N])", tok);
    for (int i = 0; i < 4; i++)
        if (v[i] <= 0)
            return tb_fail(msg, len, TB_EUSAGE, "shape '%.64s' has a non-positive size", tok);
    for (int i = 0; i < 4; i++)
        if (v[i] > TB_GEMM_MAX_DIM)
            return tb_fail(msg, len, TB_EUSAGE, "shape '%.64s' is too large (each size at most %lld)",
                           tok, (long long)TB_GEMM_MAX_DIM);
    out->op = TB_OP_GEMM;
    out->m = v[0]; out->n = v[1]; out->k = v[2]; out->batch = v[3];
    return TB_OK;
}

static int text(const tb_shape *s, char *buf, size_t len)
{
    if (s->batch > 1)
        return snprintf(buf, len, "%lldx%lldx%lldx%lld", (long long)s->m, (long long)s->n,
                        (long long)s->k, (long long)s->batch);
    return snprintf(buf, len, "%lldx%lldx%lld", (long long)s->m, (long long)s->n, (long long)s->k);
}

static double shape_flops(const tb_shape *s)
{
    return 2.0 * (double)s->m * (double)s->n * (double)s->k * (double)(s->batch > 0 ? s->batch : 1);
}

static double flops(const tb_problem *p)
{
    if (p->op != TB_OP_GEMM) return NAN;
    const tb_gemm *g = &p->gemm;
    return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)(g->batch > 0 ? g->batch : 1);
}

static int bytes(const tb_problem *p, double *read, double *written)
{
    if (p->op != TB_OP_GEMM) return TB_EUSAGE;
    const tb_gemm *g = &p->gemm;
    size_t a = tb_dtype_size(g->a_type), b = tb_dtype_size(g->b_type),
           c = tb_dtype_size(g->c_type), d = tb_dtype_size(g->d_type);
    if (!a || !b || !d || (g->beta != 0 && !c)) return TB_EUSAGE;
    const double batch = (double)(g->batch > 0 ? g->batch : 1), mn = (double)g->m * (double)g->n;
    *read = batch * ((double)g->m * (double)g->k * (double)a + (double)g->k * (double)g->n * (double)b +
                     (g->beta != 0 ? mn * (double)c : 0.0));
    *written = batch * mn * (double)d;
    return TB_OK;
}

const tb_op_desc tb_op_gemm = {
    TB_OP_GEMM, "gemm", "MxNxK[xB]", TB_PROBLEM_V1_SIZE,
    claims, parse, text, shape_flops, flops, bytes, "cublaslt"
};
