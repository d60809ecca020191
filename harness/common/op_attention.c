/* op_attention.c - attention forward's entry in the op seam (see op_attention.h): its token,
 * its counts and the ABI problem a shape stands for. The counts are derived in docs/method.md,
 * "Attention: the work counted"; tests/test_op.c checks them against a loop over the mask. */
#include "common/op_attention.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define SYNTAX "BxHxSqxSkxD[:causal][:hkv=N]"

int64_t tb_attn_pairs(int64_t seq_q, int64_t seq_k, int causal)
{
    if (seq_q <= 0 || seq_k <= 0) return 0;
    if (!causal) return seq_q * seq_k;
    if (seq_q <= seq_k) return seq_q * seq_k - seq_q * (seq_q - 1) / 2;
    return seq_k * (seq_k + 1) / 2;
}

double tb_attn_flops(const tb_attention *a)
{
    return 4.0 * (double)a->batch * (double)a->heads * (double)a->head_dim *
           (double)tb_attn_pairs(a->seq_q, a->seq_k, a->causal != 0);
}

int tb_attn_bytes(const tb_attention *a, double *read, double *written)
{
    size_t q = tb_dtype_size(a->q_type), k = tb_dtype_size(a->k_type), v = tb_dtype_size(a->v_type),
           o = tb_dtype_size(a->o_type), l = tb_dtype_size(a->lse_type);
    if (!q || !k || !v || !o || !l) return TB_EUSAGE;
    const double rows_q = (double)a->batch * (double)a->heads * (double)a->seq_q,
                 rows_k = (double)a->batch * (double)a->heads_kv * (double)a->seq_k,
                 d = (double)a->head_dim;
    *read = rows_q * d * (double)q + rows_k * d * (double)(k + v);
    *written = rows_q * d * (double)o + rows_q * (double)l;
    return TB_OK;
}

/* the strides of a packed [B][H][S][D] (BHSD) or [B][S][H][D] (BSHD) tensor */
static void packed(tb_attn_layout layout, int64_t heads, int64_t seq, int64_t d, int64_t st[3])
{
    if (layout == TB_ATTN_BSHD) { st[1] = d; st[2] = heads * d; st[0] = seq * heads * d; }
    else { st[2] = d; st[1] = seq * d; st[0] = heads * seq * d; }
}

void tb_attn_problem(const tb_attn_shape *s, tb_attn_layout layout, double scale, tb_problem *out)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->op = TB_OP_ATTENTION_FWD;
    tb_attention *a = &out->attention;
    a->batch = s->batch; a->heads = s->heads; a->heads_kv = s->heads_kv;
    a->seq_q = s->seq_q; a->seq_k = s->seq_k; a->head_dim = s->head_dim;
    a->q_type = a->k_type = a->v_type = a->o_type = TB_DTYPE_BF16;
    a->acc_type = a->lse_type = TB_DTYPE_F32;
    a->layout = layout;
    a->causal = s->causal ? 1u : 0u;
    a->scale = scale > 0 ? scale : 1.0 / sqrt((double)s->head_dim);
    packed(layout, s->heads, s->seq_q, s->head_dim, a->q_stride);
    packed(layout, s->heads_kv, s->seq_k, s->head_dim, a->k_stride);
    packed(layout, s->heads_kv, s->seq_k, s->head_dim, a->v_stride);
    packed(layout, s->heads, s->seq_q, s->head_dim, a->o_stride);
    a->lse_stride[1] = s->seq_q;
    a->lse_stride[0] = s->heads * s->seq_q;
}

/* ---- the token ------------------------------------------------------------------------- */

static int claims(const char *tok)
{
    int xs = 0;
    for (const char *p = tok; *p; p++) {
        if (*p == ':') return 1;
        xs += *p == 'x' || *p == 'X';
    }
    return xs == 4;
}

static int bound(const char *tok, const char *what, int64_t v, int64_t max, char *msg, size_t len)
{
    if (v <= max) return TB_OK;
    return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': %s %lld is more than %lld", tok,
                   what, (long long)v, (long long)max);
}

/* one ":option" (without its colon, n bytes) into *s; seen counts what was given */
static int option(const char *tok, const char *o, size_t n, tb_attn_shape *s, int seen[2],
                  char *msg, size_t len)
{
    if (n == 6 && memcmp(o, "causal", 6) == 0) {
        if (seen[0]++) return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': ':causal' "
                                      "given twice", tok);
        s->causal = 1;
        return TB_OK;
    }
    if (n >= 4 && memcmp(o, "hkv=", 4) == 0) {
        if (seen[1]++) return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': ':hkv' "
                                      "given twice", tok);
        int64_t v;
        int nv = tb_op_dims(o + 4, n - 4, &v, 1, TB_ATTN_MAX_HEADS);
        if (nv != 1 || v <= 0)
            return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': ':%.*s' is not a positive "
                           "count of key/value heads", tok, (int)(n < 32 ? n : 32), o);
        s->heads_kv = v;
        return TB_OK;
    }
    return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': unknown option ':%.*s' (want "
                   ":causal or :hkv=N)", tok, (int)(n < 32 ? n : 32), o);
}

static int parse(const char *tok, tb_shape *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    tb_attn_shape *s = &out->attn;
    const char *colon = strchr(tok, ':');
    size_t dims_len = colon ? (size_t)(colon - tok) : strlen(tok);
    int64_t v[5];
    int nv = tb_op_dims(tok, dims_len, v, 5, TB_ATTN_MAX_SEQ);
    if (nv == -2) return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s' is too large", tok);
    if (nv != 5)
        return tb_fail(msg, len, TB_EUSAGE, "malformed attention shape '%.64s' (want " SYNTAX ")", tok);
    for (int i = 0; i < 5; i++)
        if (v[i] <= 0)
            return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s' has a non-positive size", tok);
    s->batch = v[0]; s->heads = v[1]; s->seq_q = v[2]; s->seq_k = v[3]; s->head_dim = v[4];
    s->heads_kv = s->heads;
    int rc, seen[2] = { 0, 0 };
    for (const char *o = colon; o; ) {
        const char *next = strchr(o + 1, ':');
        size_t n = next ? (size_t)(next - o - 1) : strlen(o + 1);
        if (n == 0)
            return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': an empty option", tok);
        if ((rc = option(tok, o + 1, n, s, seen, msg, len))) return rc;
        o = next;
    }
    if ((rc = bound(tok, "batch", s->batch, TB_ATTN_MAX_BATCH, msg, len)) ||
        (rc = bound(tok, "heads", s->heads, TB_ATTN_MAX_HEADS, msg, len)) ||
        (rc = bound(tok, "Sq", s->seq_q, TB_ATTN_MAX_SEQ, msg, len)) ||
        (rc = bound(tok, "Sk", s->seq_k, TB_ATTN_MAX_SEQ, msg, len)) ||
        (rc = bound(tok, "head_dim", s->head_dim, TB_ATTN_MAX_HEAD_DIM, msg, len)))
        return rc;
    if (s->heads_kv > s->heads || s->heads % s->heads_kv)
        return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': hkv=%lld does not divide the "
                       "%lld query heads", tok, (long long)s->heads_kv, (long long)s->heads);
    if (s->causal && s->seq_q > s->seq_k)
        return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s': causal needs Sq <= Sk (the "
                       "mask is aligned to the bottom right: the last query sees every key)", tok);
    /* each factor is bounded above, so these products fit in int64 (2^16 * 2^10 * 2^20 * 2^9) */
    int64_t q = s->batch * s->heads * s->seq_q * s->head_dim,
            k = s->batch * s->heads_kv * s->seq_k * s->head_dim;
    if ((q > k ? q : k) > TB_ATTN_MAX_ELEMS)
        return tb_fail(msg, len, TB_EUSAGE, "attention shape '%.64s' is too large (more than 2^36 "
                       "elements in one tensor)", tok);
    out->op = TB_OP_ATTENTION_FWD;
    return TB_OK;
}

static int text(const tb_shape *sh, char *buf, size_t len)
{
    const tb_attn_shape *s = &sh->attn;
    char hkv[32] = "";
    if (s->heads_kv != s->heads) snprintf(hkv, sizeof hkv, ":hkv=%lld", (long long)s->heads_kv);
    return snprintf(buf, len, "%lldx%lldx%lldx%lldx%lld%s%s", (long long)s->batch,
                    (long long)s->heads, (long long)s->seq_q, (long long)s->seq_k,
                    (long long)s->head_dim, s->causal ? ":causal" : "", hkv);
}

static double shape_flops(const tb_shape *sh)
{
    const tb_attn_shape *s = &sh->attn;
    return 4.0 * (double)s->batch * (double)s->heads * (double)s->head_dim *
           (double)tb_attn_pairs(s->seq_q, s->seq_k, s->causal);
}

static double flops(const tb_problem *p)
{
    if (p->op != TB_OP_ATTENTION_FWD || p->struct_size < TB_PROBLEM_G2_SIZE) return NAN;
    return tb_attn_flops(&p->attention);
}

static int bytes(const tb_problem *p, double *read, double *written)
{
    if (p->op != TB_OP_ATTENTION_FWD || p->struct_size < TB_PROBLEM_G2_SIZE) return TB_EUSAGE;
    return tb_attn_bytes(&p->attention, read, written);
}

const tb_op_desc tb_op_attention_fwd = {
    TB_OP_ATTENTION_FWD, "attention_fwd", SYNTAX, TB_PROBLEM_G2_SIZE,
    claims, parse, text, shape_flops, flops, bytes,
    /* the shipped fast point: attn_naive refuses the attn set's sizes (above 2^34 of work),
       where a control must run */
    "attn_fa2_bf16_128x64_s2_w4"
};
