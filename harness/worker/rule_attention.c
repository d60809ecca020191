/* rule_attention.c - the attention forward rule (see rule_attention.h; derived in
 * docs/method.md, "Attention: the rule"): O elementwise against the rms of its reference row,
 * O per head in the Frobenius norm, LSE elementwise against the scores' magnitude. A pure host
 * function: no CUDA, no I/O; tests/test_attn_rule.c holds it to CPU models of a correct kernel
 * and of the zoo members it must catch. */
#include "worker/rule_attention.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NONE (~(uint64_t)0)

tb_attn_trial_kind tb_attn_trial_kind_of(int t)
{
    return t > 0 && t % 2 == 0 ? TB_ATTN_TRIAL_BIG : TB_ATTN_TRIAL_NORMAL;
}

double tb_attn_big_mu_k(const tb_attention *a)
{
    return TB_ATTN_BIG_LOGIT / (a->scale * (double)a->head_dim);
}

static float bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The problem the rule covers, and its sizes; TB_EUSAGE otherwise. */
static int shape_ok(const tb_attention *a, char *msg, size_t len)
{
    if (!a) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no problem");
    const int64_t lim = (int64_t)1 << 31;
    if (a->batch < 1 || a->heads < 1 || a->heads_kv < 1 || a->seq_q < 1 || a->seq_k < 1 ||
        a->head_dim < 1 || a->batch >= lim || a->heads >= lim || a->seq_q >= lim ||
        a->seq_k >= lim || a->head_dim >= lim || a->heads % a->heads_kv)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: bad problem %lldx%lldx%lldx%lldx%lld "
                       "hkv=%lld", (long long)a->batch, (long long)a->heads, (long long)a->seq_q,
                       (long long)a->seq_k, (long long)a->head_dim, (long long)a->heads_kv);
    if (!(a->scale > 0) || !isfinite(a->scale))
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: scale %g is not positive", a->scale);
    if (a->causal && a->seq_q > a->seq_k)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: causal with seq_q %lld > seq_k %lld "
                       "(rows without a key)", (long long)a->seq_q, (long long)a->seq_k);
    if (a->o_type != TB_DTYPE_BF16 || a->lse_type != TB_DTYPE_F32 || a->acc_type != TB_DTYPE_F32)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: derived for BF16 O, FP32 LSE and FP32 "
                       "accumulation (types %d, %d, %d)", (int)a->o_type, (int)a->lse_type,
                       (int)a->acc_type);
    double n = (double)a->batch * (double)a->heads * (double)a->seq_q * (double)a->head_dim;
    double nk = (double)a->batch * (double)a->heads_kv * (double)a->seq_k * (double)a->head_dim;
    if (n > 0x1p52 || nk > 0x1p52)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: problem too large");
    return TB_OK;
}

/* The largest ||row||_2 among n rows of d BF16 elements. */
static double max_row_norm(const uint16_t *x, uint64_t n, uint64_t d)
{
    double best = 0;
    for (uint64_t r = 0; r < n; r++) {
        double s = 0;
        for (uint64_t c = 0; c < d; c++) {
            double v = bf16_to_f32(x[r * d + c]);
            s += v * v;
        }
        if (s > best) best = s;
    }
    return sqrt(best);
}

int tb_attn_rule_qk_bound(const tb_attention *a, const uint16_t *q, const uint16_t *k,
                          double *s, char *msg, size_t len)
{
    int rc = shape_ok(a, msg, len);
    if (rc) return rc;
    if (!q || !k || !s) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no Q or K");
    const uint64_t d = (uint64_t)a->head_dim;
    double nq = max_row_norm(q, (uint64_t)(a->batch * a->heads * a->seq_q), d);
    double nk = max_row_norm(k, (uint64_t)(a->batch * a->heads_kv * a->seq_k), d);
    *s = a->scale * nq * nk;
    if (!isfinite(*s)) return tb_fail(msg, len, TB_EUSAGE, "attention rule: Q or K not finite");
    return TB_OK;
}

/* (batch, head, row, col) of index x of O (cols = D) or of LSE (cols = 1) */
static void coords(const tb_attention *a, uint64_t x, uint64_t cols, long long c[4])
{
    c[3] = (long long)(x % cols);
    x /= cols;
    c[2] = (long long)(x % (uint64_t)a->seq_q);
    x /= (uint64_t)a->seq_q;
    c[1] = (long long)(x % (uint64_t)a->heads);
    c[0] = (long long)(x / (uint64_t)a->heads);
}

/* O: elementwise and per head. TB_EINTERNAL on a non-finite reference. */
static int check_o(const tb_attention *a, const float *o_ref, const uint16_t *o,
                   tb_attn_verdict *v, char *msg, size_t len)
{
    const uint64_t D = (uint64_t)a->head_dim, Sq = (uint64_t)a->seq_q;
    double sum_err = 0, sum_ref = 0;
    for (uint64_t h = 0; h < v->heads; h++) {
        double h_err = 0, h_ref = 0;
        int h_bad = 0, h_nonfinite = 0;
        for (uint64_t i = 0; i < Sq; i++) {
            const uint64_t base = (h * Sq + i) * D;
            double ss = 0;
            for (uint64_t c = 0; c < D; c++) {
                double r = o_ref[base + c];
                if (!isfinite(r)) {
                    long long at[4];
                    coords(a, base + c, D, at);
                    return tb_fail(msg, len, TB_EINTERNAL, "attention rule: the reference O is "
                                   "not finite at batch %lld head %lld row %lld col %lld", at[0],
                                   at[1], at[2], at[3]);
                }
                ss += r * r;
            }
            const double atol = ss > 0 ? v->o_atol * sqrt(ss / (double)D) : 0x1p-24;
            for (uint64_t c = 0; c < D; c++) {
                const uint64_t x = base + c;
                const double r = o_ref[x], d = bf16_to_f32(o[x]);
                if (!isfinite(d)) {
                    v->n_nonfinite++;
                    v->n_bad++;
                    if (v->first_nonfinite == NONE) v->first_nonfinite = x;
                    if (v->first_bad == NONE) v->first_bad = x;
                    h_bad = h_nonfinite = 1;
                    continue;
                }
                const double e = fabs(d - r), tol = atol + v->o_rtol * fabs(r);
                if (e > v->max_abs_err) v->max_abs_err = e;
                if (e / tol > v->max_ratio) v->max_ratio = e / tol;
                if (e > tol) {
                    v->n_bad++;
                    if (v->first_bad == NONE) v->first_bad = x;
                    h_bad = 1;
                }
                h_err += e * e;
                h_ref += r * r;
            }
        }
        v->heads_with_bad += (uint64_t)h_bad;
        sum_err += h_err;
        sum_ref += h_ref;
        if (h_nonfinite) continue;   /* its norm means nothing; the nonfinite rule names it */
        const double rel = h_ref > 0 ? sqrt(h_err / h_ref) : (h_err > 0 ? INFINITY : 0);
        if (rel > v->head_max_rel) v->head_max_rel = rel;
        if (rel > v->head_rtol) {
            v->heads_norm_bad++;
            if (v->first_head_bad == NONE) v->first_head_bad = h;
        }
    }
    v->head_max_ratio = v->head_max_rel / v->head_rtol;
    v->rel_fro_err = sum_ref > 0 ? sqrt(sum_err / sum_ref) : NAN;
    return TB_OK;
}

static int check_lse(const tb_attention *a, const float *lse_ref, const float *lse,
                     tb_attn_verdict *v, char *msg, size_t len)
{
    for (uint64_t x = 0; x < v->lse_n; x++) {
        const double r = lse_ref[x], d = lse[x];
        if (!isfinite(r)) {
            long long at[4];
            coords(a, x, 1, at);
            return tb_fail(msg, len, TB_EINTERNAL, "attention rule: the reference LSE is not "
                           "finite at batch %lld head %lld row %lld", at[0], at[1], at[2]);
        }
        if (!isfinite(d)) {
            v->lse_nonfinite++;
            v->lse_bad++;
            if (v->lse_first_nonfinite == NONE) v->lse_first_nonfinite = x;
            if (v->lse_first_bad == NONE) v->lse_first_bad = x;
            continue;
        }
        const double e = fabs(d - r), tol = v->lse_atol + v->lse_rtol * fabs(r);
        if (e > v->lse_max_abs_err) v->lse_max_abs_err = e;
        if (e / tol > v->lse_max_ratio) v->lse_max_ratio = e / tol;
        if (e > tol) {
            v->lse_bad++;
            if (v->lse_first_bad == NONE) v->lse_first_bad = x;
        }
    }
    return TB_OK;
}

/* rule and reason of the first rule that fails, in the order of rule_attention.h */
static void name_verdict(const tb_attention *a, tb_attn_verdict *v)
{
    long long at[4];
    const unsigned long long D = (unsigned long long)a->head_dim;
    v->passed = 0;
    if (v->n_nonfinite) {
        coords(a, v->first_nonfinite, D, at);
        snprintf(v->rule, sizeof v->rule, "nonfinite");
        snprintf(v->reason, sizeof v->reason, "%llu of %llu elements of O NaN/Inf or never "
                 "written (first at batch %lld head %lld row %lld col %lld)",
                 (unsigned long long)v->n_nonfinite, (unsigned long long)v->n, at[0], at[1],
                 at[2], at[3]);
    } else if (v->lse_nonfinite) {
        coords(a, v->lse_first_nonfinite, 1, at);
        snprintf(v->rule, sizeof v->rule, "lse-nonfinite");
        snprintf(v->reason, sizeof v->reason, "%llu of %llu elements of LSE NaN/Inf or never "
                 "written (first at batch %lld head %lld row %lld)",
                 (unsigned long long)v->lse_nonfinite, (unsigned long long)v->lse_n, at[0],
                 at[1], at[2]);
    } else if (v->n_bad) {
        coords(a, v->first_bad, D, at);
        snprintf(v->rule, sizeof v->rule, "elementwise");
        snprintf(v->reason, sizeof v->reason, "%llu elements of O off by more than %.3g*rms(ref "
                 "row) + %.3g*|ref|, in %llu of %llu heads (max abs err %.4g, %.3g x the "
                 "allowance, first at batch %lld head %lld row %lld col %lld)",
                 (unsigned long long)v->n_bad, v->o_atol, v->o_rtol,
                 (unsigned long long)v->heads_with_bad, (unsigned long long)v->heads,
                 v->max_abs_err, v->max_ratio, at[0], at[1], at[2], at[3]);
    } else if (v->heads_norm_bad) {
        snprintf(v->rule, sizeof v->rule, "head");
        snprintf(v->reason, sizeof v->reason, "%llu of %llu heads of O off by more than %.3g of "
                 "their norm (worst %.4g, first at batch %lld head %lld)",
                 (unsigned long long)v->heads_norm_bad, (unsigned long long)v->heads,
                 v->head_rtol, v->head_max_rel, (long long)(v->first_head_bad / (uint64_t)a->heads),
                 (long long)(v->first_head_bad % (uint64_t)a->heads));
    } else if (v->lse_bad) {
        coords(a, v->lse_first_bad, 1, at);
        snprintf(v->rule, sizeof v->rule, "lse");
        snprintf(v->reason, sizeof v->reason, "%llu of %llu elements of LSE off by more than "
                 "%.3g + %.3g*|ref| (max abs err %.4g, first at batch %lld head %lld row %lld)",
                 (unsigned long long)v->lse_bad, (unsigned long long)v->lse_n, v->lse_atol,
                 v->lse_rtol, v->lse_max_abs_err, at[0], at[1], at[2]);
    } else {
        v->passed = 1;
    }
}

int tb_attn_rule_check(const tb_attention *a, const float *o_ref, const float *lse_ref,
                       const uint16_t *o, const float *lse, double qk_bound,
                       tb_attn_verdict *out, char *msg, size_t len)
{
    if (!out) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no verdict");
    memset(out, 0, sizeof *out);
    int rc = shape_ok(a, msg, len);
    if (rc) return rc;
    if (!o_ref || !lse_ref || !o || !lse)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: missing O, LSE or their reference");
    if (!(qk_bound >= 0) || !isfinite(qk_bound))
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: bound on the scores %g", qk_bound);
    tb_attn_verdict *v = out;
    v->heads = (uint64_t)(a->batch * a->heads);
    v->lse_n = v->heads * (uint64_t)a->seq_q;
    v->n = v->lse_n * (uint64_t)a->head_dim;
    v->first_bad = v->first_nonfinite = v->first_head_bad = NONE;
    v->lse_first_bad = v->lse_first_nonfinite = NONE;
    v->o_atol = TB_ATTN_O_ATOL;
    v->o_rtol = TB_ATTN_O_RTOL;
    v->head_rtol = TB_ATTN_HEAD_RTOL;
    v->lse_atol = TB_ATTN_LSE_ATOL + 0x1p-23 * (double)a->head_dim * qk_bound;
    v->lse_rtol = TB_ATTN_LSE_RTOL;
    rc = check_o(a, o_ref, o, v, msg, len);
    if (rc) return rc;
    rc = check_lse(a, lse_ref, lse, v, msg, len);
    if (rc) return rc;
    name_verdict(a, v);
    return TB_OK;
}
