/* op_worker_attention.c - the worker's table entry for TB_OP_ATTENTION_FWD (op_worker.h; issue
 * 33, docs/method.md, "Attention: the references" and "Attention: the rule"). Owns: the
 * problem into the worker, Q, K, V, O and LSE sized from their strides (O and LSE between
 * guard bands), the trial's inputs by kind (odd trials normal, even trials large logits:
 * Q = x + 1, K = x + mu_k, V = x), O and LSE poisoned, the inputs checksummed, the cuBLASLt
 * reference (cross-checked on small shapes by the naive one, held to the rule itself), and the
 * check: guards, inputs, then the attention rule on O and LSE where they lie: the device sums
 * them (device/tbdev_attn.h, from tb_attn_rule_begin's constants) and tb_attn_rule_finish names
 * the verdict (until the sixteenth session the host gathered O, LSE, Q and K every trial and ran
 * tb_attn_rule_check: 96 % of an attention sweep's time), into the tb_val_result the GEMM rule
 * fills.
 * In tb_val_bufs: a, b, c are Q, K, V (BF16), d is O (BF16), lse the FP32 LSE; d_ref and
 * lse_ref the reference (FP32, contiguous [B][H][Sq][D] and [B][H][Sq]). */
#include "worker/op_worker.h"
#include "common/tb.h"
#include "device/tbdev.h"
#include "device/tbdev_attn.h"
#include "reference/ref_attention.h"
#include "worker/buffers.h"
#include "worker/rule_attention.h"
#include "worker/validate.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* problems up to this many B*H*Sq*Sk*D get the naive reference too, on the first trial (it
 * walks a row's keys serially: about a second at this size on an H100, an estimate) */
#define TB_ATTN_CROSSCHECK_MAX (1024.0 * 1024.0 * 1024.0)

#define CU(call) do { cudaError_t e_ = (cudaError_t)(call); if (e_ != cudaSuccess) \
    return tb_fail(msg, len, TB_ECUDA, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)

/* Elements spanned by a [n0][n1][n2][d] tensor with strides st (batch, head, row). */
static size_t extent(const int64_t st[3], int64_t n0, int64_t n1, int64_t n2, int64_t d)
{
    return (size_t)((n0 - 1) * st[0] + (n1 - 1) * st[1] + (n2 - 1) * st[2] + d);
}

static double work_of(const tb_attention *a)
{
    return (double)a->batch * (double)a->heads * (double)a->seq_q * (double)a->seq_k *
           (double)a->head_dim;
}

static int take(worker *w, const tb_problem *p, char *msg, size_t len)
{
    if (p->struct_size < TB_PROBLEM_G2_SIZE)
        return tb_fail(msg, len, TB_EWORKER, "attention problem without its member");
    memset(&w->g, 0, sizeof w->g);
    w->scales.scale_a = w->scales.scale_b = 1.0f;
    w->attn = p->attention;
    return TB_OK;
}

static int alloc(worker *w, char *msg, size_t len)
{
    const tb_attention *a = &w->attn;
    tb_val_bufs *b = &w->vb;
    if (a->q_type != TB_DTYPE_BF16 || a->k_type != TB_DTYPE_BF16 || a->v_type != TB_DTYPE_BF16 ||
        a->o_type != TB_DTYPE_BF16 || a->acc_type != TB_DTYPE_F32 || a->lse_type != TB_DTYPE_F32)
        return tb_fail(msg, len, TB_EUSAGE, "attention: the worker draws BF16 Q, K, V and checks "
                       "BF16 O, FP32 LSE and FP32 accumulation only");
    for (int i = 0; i < 3; i++) {
        b->in_type[i] = TB_DTYPE_BF16;
        b->esz[i] = 2;
    }
    b->scale[0] = b->scale[1] = 1.0f;
    b->na = extent(a->q_stride, a->batch, a->heads, a->seq_q, a->head_dim);
    b->nb = extent(a->k_stride, a->batch, a->heads_kv, a->seq_k, a->head_dim);
    b->nc = extent(a->v_stride, a->batch, a->heads_kv, a->seq_k, a->head_dim);
    b->nd = extent(a->o_stride, a->batch, a->heads, a->seq_q, a->head_dim);
    b->nlse = (size_t)((a->batch - 1) * a->lse_stride[0] + (a->heads - 1) * a->lse_stride[1] +
                       a->seq_q);
    /* guard bands: at least two of O's rows and 64 Ki elements on each side; LSE's at least two
     * heads' rows and 16 Ki floats. None under compute-sanitizer (as the GEMM's D) */
    size_t span = ((size_t)a->o_stride[2] * 2 + 127) / 128 * 128;   /* O stays 256-byte aligned */
    b->guard = span > 65536 ? span : 65536;
    size_t lspan = ((size_t)a->seq_q * 2 + 63) / 64 * 64;   /* LSE too */
    b->lse_guard = lspan > 16384 ? lspan : 16384;
    if (w->validate_only) b->guard = b->lse_guard = 0;
    b->ref_ws_bytes = tb_ref_attention_workspace(a);
    if (!b->ref_ws_bytes)
        return tb_fail(msg, len, TB_EUSAGE, "attention: the reference cannot compute this problem");
    size_t nref = (size_t)(a->batch * a->heads * a->seq_q * a->head_dim);
    size_t nlr = (size_t)(a->batch * a->heads * a->seq_q);
    int cross = work_of(a) <= TB_ATTN_CROSSCHECK_MAX && a->head_dim <= 512;
    const tbw_alloc al[] = {
        { &b->a, (b->na * 2 + 7) / 8 * 8, "Q" },
        { &b->b, (b->nb * 2 + 7) / 8 * 8, "K" },
        { &b->c, (b->nc * 2 + 7) / 8 * 8, "V" },
        { &b->d_base, (b->nd + 2 * b->guard) * 2, "O and its guard bands" },
        { &b->lse_base, (b->nlse + 2 * b->lse_guard) * 4, "LSE and its guard bands" },
        { (void **)&b->d_ref, nref * 4, "O_ref" },
        { (void **)&b->lse_ref, nlr * 4, "LSE_ref" },
        { (void **)&b->d_ref2, cross ? nref * 4 : 0, "the second O_ref" },
        { (void **)&b->lse_ref2, cross ? nlr * 4 : 0, "the second LSE_ref" },
        { &b->ref_ws, b->ref_ws_bytes, "the reference's workspace" },
        { (void **)&b->cmp_dev, sizeof(tb_cmp_result), "comparison result" },
        { (void **)&b->scratch, 4 * sizeof(unsigned long long), "scratch" },
        { &b->rule_ws, tbdev_attn_rule_ws_bytes((uint64_t)(a->batch * a->heads)), "the rule's sums" },
        { (void **)&b->norm_dev, 2 * sizeof(double), "the rule's row norms" },
    };
    int rc = tbw_alloc_table(al, sizeof al / sizeof al[0], msg, len);
    if (rc) return rc;
    b->d = (uint16_t *)b->d_base + b->guard;
    b->lse = (float *)b->lse_base + b->lse_guard;
    return TB_OK;
}

static void launch_args(const worker *w, tb_problem *p, tb_buffers *io)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->op = TB_OP_ATTENTION_FWD;
    p->attention = w->attn;
    memset(io, 0, sizeof *io);
    io->struct_size = sizeof *io;
    io->in[0] = w->vb.a;
    io->in[1] = w->vb.b;
    io->in[2] = w->vb.c;
    io->out[0] = w->vb.d;
    io->out[1] = w->vb.lse;
}

/* n elements of size esz from the device into a new host array (free it), synchronised. */
static void *to_host(const void *dev, size_t n, size_t esz, cudaStream_t s)
{
    void *h = malloc(n * esz + 1);
    if (!h) return NULL;
    if (cudaMemcpyAsync(h, dev, n * esz, cudaMemcpyDeviceToHost, s) != cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess) {
        free(h);
        return NULL;
    }
    return h;
}

/* The rule's S for the inputs now in Q and K: their largest row norms found on the device,
 * S = scale * max ||q_i|| * max ||k_j|| (tb_attn_rule_qk_bound_norms). Synchronises. */
static int qk_bound(worker *w, char *msg, size_t len)
{
    const tb_attention *a = &w->attn;
    tb_val_bufs *b = &w->vb;
    double n2[2];
    CU(tbdev_row_norm2_max(b->a, a->q_stride, a->batch, a->heads, a->seq_q, a->head_dim,
                           b->norm_dev, w->s));
    CU(tbdev_row_norm2_max(b->b, a->k_stride, a->batch, a->heads_kv, a->seq_k, a->head_dim,
                           b->norm_dev + 1, w->s));
    CU(cudaMemcpyAsync(n2, b->norm_dev, sizeof n2, cudaMemcpyDeviceToHost, w->s));
    CU(cudaStreamSynchronize(w->s));
    return tb_attn_rule_qk_bound_norms(a, n2[0], n2[1], &b->qk_bound, msg, len);
}

static uint16_t f32_to_bf16(float f)   /* round to nearest even; NaN stays NaN */
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FC1u;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

/* The naive reference against the cuBLASLt one: the naive O rounded to BF16 and its LSE held to
 * the rule itself (as FP8 GEMM's cross-check is): TB_EINTERNAL "references disagree". */
static int crosscheck(worker *w, char *msg, size_t len)
{
    const tb_attention *a = &w->attn;
    tb_val_bufs *b = &w->vb;
    char m2[TB_MSG_LEN];
    if (tb_ref_attention_naive(a, b->a, b->b, b->c, b->d_ref2, b->lse_ref2, w->s, m2, sizeof m2))
        return tb_fail(msg, len, TB_ECUDA, "second reference failed: %s", m2);
    size_t no = (size_t)(a->batch * a->heads * a->seq_q * a->head_dim);
    size_t nl = (size_t)(a->batch * a->heads * a->seq_q);
    float *o2 = to_host(b->d_ref2, no, 4, w->s), *l2 = to_host(b->lse_ref2, nl, 4, w->s);
    float *o1 = to_host(b->d_ref, no, 4, w->s), *l1 = to_host(b->lse_ref, nl, 4, w->s);
    uint16_t *o2b = malloc(no * 2 + 2);
    int rc = TB_OK;
    if (!o2 || !l2 || !o1 || !l1 || !o2b) {
        rc = tb_fail(msg, len, TB_ENOMEM, "attention: cannot read the references back");
    } else {
        for (size_t i = 0; i < no; i++) o2b[i] = f32_to_bf16(o2[i]);
        tb_attn_verdict v;
        rc = tb_attn_rule_check(a, o1, l1, o2b, l2, b->qk_bound, &v, m2, sizeof m2);
        if (rc) rc = tb_fail(msg, len, rc, "%s", m2);
        else if (!v.passed)
            rc = tb_fail(msg, len, TB_EINTERNAL, "references disagree: the naive attention "
                         "reference fails the rule against cuBLASLt's (%s: %s)", v.rule, v.reason);
    }
    free(o2); free(l2); free(o1); free(l1); free(o2b);
    return rc;
}

static int prepare(worker *w, const vstate *vs, int t, uint64_t seed, int cross,
                   char *msg, size_t len)
{
    (void)vs;
    const tb_attention *a = &w->attn;
    tb_val_bufs *b = &w->vb;
    char m2[TB_MSG_LEN];
    const int big = tb_attn_trial_kind_of(t + 1) == TB_ATTN_TRIAL_BIG;
    const float mu_q = big ? (float)TB_ATTN_BIG_MU_Q : 0.0f;
    const float mu_k = big ? (float)tb_attn_big_mu_k(a) : 0.0f;
    CU(tbdev_fill_bf16_offset(b->a, b->na, seed * 4 + 1, w->dist, mu_q, w->s));
    CU(tbdev_fill_bf16_offset(b->b, b->nb, seed * 4 + 2, w->dist, mu_k, w->s));
    CU(tbdev_fill_bf16(b->c, b->nc, seed * 4 + 3, w->dist, w->s));
    int rc = tb_validate_repoison(b, w->s, msg, len);
    if (rc) return rc;
    if (tb_ref_attention_cublaslt(w->ref, a, b->a, b->b, b->c, b->d_ref, b->lse_ref, b->ref_ws,
                                  b->ref_ws_bytes, w->s, m2, sizeof m2))
        return tb_fail(msg, len, TB_ECUDA, "reference failed: %s", m2);
    rc = qk_bound(w, msg, len);   /* synchronises */
    if (rc) return rc;
    if (cross && b->d_ref2 && b->lse_ref2) {
        rc = crosscheck(w, msg, len);
        if (rc) return rc;
    }
    rc = tb_validate_checksums(b, w->s, b->sum_in, msg, len);
    if (rc) return rc;
    CU(cudaStreamSynchronize(w->s));
    return TB_OK;
}

static int check(worker *w, tb_val_result *out, char *msg, size_t len)
{
    const tb_attention *a = &w->attn;
    const tb_val_bufs *b = &w->vb;
    unsigned long long g[4] = { 0, 0, 0, 0 }, sums[3];
    memset(out, 0, sizeof *out);
    out->atol = TB_ATTN_O_ATOL;
    out->rtol = TB_ATTN_O_RTOL;
    if (b->guard) {
        CU(tbdev_count_ne_u16(b->d_base, b->guard, TB_CANARY_BF16, b->scratch + 0, w->s));
        CU(tbdev_count_ne_u16((uint16_t *)b->d + b->nd, b->guard, TB_CANARY_BF16, b->scratch + 1,
                              w->s));
    }
    if (b->lse_guard) {
        CU(tbdev_count_ne_u16(b->lse_base, 2 * b->lse_guard, TB_CANARY_BF16, b->scratch + 2, w->s));
        CU(tbdev_count_ne_u16((float *)b->lse + b->nlse, 2 * b->lse_guard, TB_CANARY_BF16,
                              b->scratch + 3, w->s));
    }
    if (b->guard || b->lse_guard) {
        CU(cudaMemcpyAsync(g, b->scratch, sizeof g, cudaMemcpyDeviceToHost, w->s));
        CU(cudaStreamSynchronize(w->s));
    }
    int rc = tb_validate_checksums(b, w->s, sums, msg, len);
    if (rc) return rc;
    out->guard_bad = g[0] + g[1] + g[2] + g[3];
    if (out->guard_bad) {
        snprintf(out->rule, sizeof out->rule, "guard");
        snprintf(out->reason, sizeof out->reason, "wrote outside O or LSE: %llu elements of the "
                 "guard bands changed (O: %llu before, %llu after; LSE: %llu 16-bit halves before, "
                 "%llu after)", (unsigned long long)out->guard_bad, g[0], g[1], g[2], g[3]);
        return TB_OK;
    }
    for (int k = 0; k < 3; k++)
        if (sums[k] != b->sum_in[k]) {
            snprintf(out->rule, sizeof out->rule, "inputs");
            snprintf(out->reason, sizeof out->reason, "modified its input %c (checksum %016llx "
                     "before the launch, %016llx after)", "QKV"[k], b->sum_in[k], sums[k]);
            return TB_OK;
        }
    tb_attn_verdict v;
    rc = tb_attn_rule_begin(a, b->qk_bound, &v, msg, len);
    if (rc) return rc;
    CU(tbdev_attn_rule_reset(b->rule_ws, v.heads, w->s));
    CU(tbdev_attn_rule_o(b->d_ref, (const uint16_t *)b->d, a->o_stride, a->batch, a->heads,
                         a->seq_q, a->head_dim, v.o_atol, v.o_rtol, b->rule_ws, w->s));
    CU(tbdev_attn_rule_lse(b->lse_ref, (const float *)b->lse, a->lse_stride, a->batch, a->heads,
                           a->seq_q, v.lse_atol, v.lse_rtol, b->rule_ws, w->s));
    double *h_err = malloc(v.heads * sizeof(double) + 8), *h_ref = malloc(v.heads * sizeof(double) + 8);
    uint32_t *h_flags = malloc(v.heads * sizeof(uint32_t) + 4);
    tbdev_attn_sums sm;
    if (!h_err || !h_ref || !h_flags) {
        rc = tb_fail(msg, len, TB_ENOMEM, "attention: no room for %llu heads' sums",
                     (unsigned long long)v.heads);
    } else {
        cudaError_t e = (cudaError_t)tbdev_attn_rule_read(b->rule_ws, v.heads, &sm, h_err, h_ref,
                                                          h_flags, w->s);
        if (e != cudaSuccess) {
            rc = tb_fail(msg, len, TB_ECUDA, "the attention rule's sums: %s", cudaGetErrorString(e));
        } else {
            tb_attn_rule_take(&v, 0, sm.o.n_bad, sm.o.n_nonfinite, sm.o.first_bad,
                              sm.o.first_nonfinite, sm.o.max_abs_err, sm.o.max_ratio);
            tb_attn_rule_take(&v, 1, sm.lse.n_bad, sm.lse.n_nonfinite, sm.lse.first_bad,
                              sm.lse.first_nonfinite, sm.lse.max_abs_err, sm.lse.max_ratio);
            rc = tb_attn_rule_finish(a, sm.o.ref_first, sm.lse.ref_first, h_err, h_ref, h_flags, &v,
                                     msg, len);
        }
    }
    free(h_err); free(h_ref); free(h_flags);
    if (rc) return rc;
    out->n_bad = v.n_bad + v.lse_bad;
    out->n_nonfinite = v.n_nonfinite + v.lse_nonfinite;
    out->first_bad = v.first_bad;
    out->max_abs_err = v.max_abs_err;
    out->rel_fro_err = v.rel_fro_err;
    out->passed = v.passed;
    snprintf(out->rule, sizeof out->rule, "%s", v.passed ? "" : v.rule);
    snprintf(out->reason, sizeof out->reason, "%s", v.passed ? "" : v.reason);
    return TB_OK;
}

static void shape_text(const worker *w, char *buf, size_t len)
{
    /* the shape's canonical token (op_attention.c), so that show's profile line names it */
    const tb_attention *a = &w->attn;
    char hkv[32] = "";
    if (a->heads_kv != a->heads) snprintf(hkv, sizeof hkv, ":hkv=%lld", (long long)a->heads_kv);
    snprintf(buf, len, "%lldx%lldx%lldx%lldx%lld%s%s", (long long)a->batch, (long long)a->heads,
             (long long)a->seq_q, (long long)a->seq_k, (long long)a->head_dim,
             a->causal ? ":causal" : "", hkv);
}

const tbw_op tbw_op_attention = {
    TB_OP_ATTENTION_FWD, take, alloc, launch_args, prepare, check, shape_text
};
