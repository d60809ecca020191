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

#define NONE TB_ATTN_NONE

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
/* the largest squared L2 norm over n rows of d BF16 elements; a row holding NaN or Inf makes it
 * +Inf (so the bound refuses it, as the device's tbdev_row_norm2_max does) */
static double max_row_norm2(const uint16_t *x, uint64_t n, uint64_t d)
{
    double best = 0;
    for (uint64_t r = 0; r < n; r++) {
        double s = 0;
        for (uint64_t c = 0; c < d; c++) {
            double v = bf16_to_f32(x[r * d + c]);
            s += v * v;
        }
        if (!isfinite(s)) s = INFINITY;
        if (s > best) best = s;
    }
    return best;
}

int tb_attn_rule_qk_bound_norms(const tb_attention *a, double q2, double k2, double *s,
                                char *msg, size_t len)
{
    int rc = shape_ok(a, msg, len);
    if (rc) return rc;
    if (!s) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no bound to fill");
    *s = a->scale * sqrt(q2) * sqrt(k2);
    if (!isfinite(*s)) return tb_fail(msg, len, TB_EUSAGE, "attention rule: Q or K not finite");
    return TB_OK;
}

int tb_attn_rule_qk_bound(const tb_attention *a, const uint16_t *q, const uint16_t *k,
                          double *s, char *msg, size_t len)
{
    int rc = shape_ok(a, msg, len);
    if (rc) return rc;
    if (!q || !k || !s) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no Q or K");
    const uint64_t d = (uint64_t)a->head_dim;
    return tb_attn_rule_qk_bound_norms(a, max_row_norm2(q, (uint64_t)(a->batch * a->heads * a->seq_q), d),
                                       max_row_norm2(k, (uint64_t)(a->batch * a->heads_kv * a->seq_k), d),
                                       s, msg, len);
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

/* TB_EINTERNAL naming element x of the reference O (cols = D) or LSE (cols = 1). */
static int ref_not_finite(const tb_attention *a, uint64_t x, int is_lse, char *msg, size_t len)
{
    long long at[4];
    if (!is_lse) {
        coords(a, x, (uint64_t)a->head_dim, at);
        return tb_fail(msg, len, TB_EINTERNAL, "attention rule: the reference O is not finite at "
                       "batch %lld head %lld row %lld col %lld", at[0], at[1], at[2], at[3]);
    }
    coords(a, x, 1, at);
    return tb_fail(msg, len, TB_EINTERNAL, "attention rule: the reference LSE is not finite at "
                   "batch %lld head %lld row %lld", at[0], at[1], at[2]);
}

/* One (batch, head) h of O done: its squared error and reference sums over its finite
 * elements, flags (bit 0 a bad element, bit 1 a non-finite one), into the per-head figures. */
static void head_fold(tb_attn_verdict *v, uint64_t h, double h_err, double h_ref, unsigned flags,
                      double *sum_err, double *sum_ref)
{
    v->heads_with_bad += (uint64_t)((flags & 1u) != 0);
    *sum_err += h_err;
    *sum_ref += h_ref;
    if (flags & 2u) return;   /* its norm means nothing; the nonfinite rule names it */
    const double rel = h_ref > 0 ? sqrt(h_err / h_ref) : (h_err > 0 ? INFINITY : 0);
    if (rel > v->head_max_rel) v->head_max_rel = rel;
    if (rel > v->head_rtol) {
        v->heads_norm_bad++;
        if (v->first_head_bad == NONE) v->first_head_bad = h;
    }
}

static void heads_done(tb_attn_verdict *v, double sum_err, double sum_ref)
{
    v->head_max_ratio = v->head_max_rel / v->head_rtol;
    v->rel_fro_err = sum_ref > 0 ? sqrt(sum_err / sum_ref) : NAN;
}

/* O: elementwise and per head, on the host. TB_EINTERNAL on a non-finite reference. */
static int check_o(const tb_attention *a, const float *o_ref, const uint16_t *o,
                   tb_attn_verdict *v, char *msg, size_t len)
{
    const uint64_t D = (uint64_t)a->head_dim, Sq = (uint64_t)a->seq_q;
    double sum_err = 0, sum_ref = 0;
    for (uint64_t h = 0; h < v->heads; h++) {
        double h_err = 0, h_ref = 0;
        unsigned flags = 0;
        for (uint64_t i = 0; i < Sq; i++) {
            const uint64_t base = (h * Sq + i) * D;
            double ss = 0;
            for (uint64_t c = 0; c < D; c++) {
                double r = o_ref[base + c];
                if (!isfinite(r)) return ref_not_finite(a, base + c, 0, msg, len);
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
                    flags |= 3u;
                    continue;
                }
                const double e = fabs(d - r), tol = atol + v->o_rtol * fabs(r);
                if (e > v->max_abs_err) v->max_abs_err = e;
                if (e / tol > v->max_ratio) v->max_ratio = e / tol;
                if (e > tol) {
                    v->n_bad++;
                    if (v->first_bad == NONE) v->first_bad = x;
                    flags |= 1u;
                }
                h_err += e * e;
                h_ref += r * r;
            }
        }
        head_fold(v, h, h_err, h_ref, flags, &sum_err, &sum_ref);
    }
    heads_done(v, sum_err, sum_ref);
    return TB_OK;
}

static int check_lse(const tb_attention *a, const float *lse_ref, const float *lse,
                     tb_attn_verdict *v, char *msg, size_t len)
{
    for (uint64_t x = 0; x < v->lse_n; x++) {
        const double r = lse_ref[x], d = lse[x];
        if (!isfinite(r)) return ref_not_finite(a, x, 1, msg, len);
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

int tb_attn_rule_begin(const tb_attention *a, double qk_bound, tb_attn_verdict *out,
                       char *msg, size_t len)
{
    if (!out) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no verdict");
    memset(out, 0, sizeof *out);
    int rc = shape_ok(a, msg, len);
    if (rc) return rc;
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
    return TB_OK;
}

int tb_attn_rule_check(const tb_attention *a, const float *o_ref, const float *lse_ref,
                       const uint16_t *o, const float *lse, double qk_bound,
                       tb_attn_verdict *out, char *msg, size_t len)
{
    if (!out) return tb_fail(msg, len, TB_EUSAGE, "attention rule: no verdict");
    memset(out, 0, sizeof *out);
    int rc = shape_ok(a, msg, len);   /* the refusals in their order: the problem, the arrays, */
    if (rc) return rc;                /* then (in begin) the bound */
    if (!o_ref || !lse_ref || !o || !lse)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: missing O, LSE or their reference");
    rc = tb_attn_rule_begin(a, qk_bound, out, msg, len);
    if (rc) return rc;
    rc = check_o(a, o_ref, o, out, msg, len);
    if (rc) return rc;
    rc = check_lse(a, lse_ref, lse, out, msg, len);
    if (rc) return rc;
    name_verdict(a, out);
    return TB_OK;
}

void tb_attn_rule_take(tb_attn_verdict *v, int lse, uint64_t n_bad, uint64_t n_nonfinite,
                       uint64_t first_bad, uint64_t first_nonfinite, double max_abs_err,
                       double max_ratio)
{
    if (!lse) {
        v->n_bad = n_bad;
        v->n_nonfinite = n_nonfinite;
        v->first_bad = first_bad;
        v->first_nonfinite = first_nonfinite;
        v->max_abs_err = max_abs_err;
        v->max_ratio = max_ratio;
    } else {
        v->lse_bad = n_bad;
        v->lse_nonfinite = n_nonfinite;
        v->lse_first_bad = first_bad;
        v->lse_first_nonfinite = first_nonfinite;
        v->lse_max_abs_err = max_abs_err;
        v->lse_max_ratio = max_ratio;
    }
}

int tb_attn_rule_finish(const tb_attention *a, uint64_t ref_first, uint64_t lse_ref_first,
                        const double *h_err, const double *h_ref, const uint32_t *h_flags,
                        tb_attn_verdict *v, char *msg, size_t len)
{
    if (!a || !v || !h_err || !h_ref || !h_flags)
        return tb_fail(msg, len, TB_EUSAGE, "attention rule: missing per-head sums");
    if (ref_first != NONE) return ref_not_finite(a, ref_first, 0, msg, len);
    if (lse_ref_first != NONE) return ref_not_finite(a, lse_ref_first, 1, msg, len);
    double sum_err = 0, sum_ref = 0;
    for (uint64_t h = 0; h < v->heads; h++)
        head_fold(v, h, h_err[h], h_ref[h], h_flags[h], &sum_err, &sum_ref);
    heads_done(v, sum_err, sum_ref);
    name_verdict(a, v);
    return TB_OK;
}
