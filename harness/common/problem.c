/* problem.c - the op seam's record side (see problem.h): a stored problem's op, shape and
 * text, the record of an attention shape and the ABI problem of an attention record. */
#include "common/problem.h"
#include "common/op_attention.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

const tb_op_desc *tb_problem_info_op(const tb_problem_info *p)
{
    return tb_op_named(p->op);
}

int tb_problem_info_is_attention(const tb_problem_info *p)
{
    return strcmp(p->op, tb_op_attention_fwd.name) == 0;
}

const char *tb_attn_layout_name(uint32_t layout)
{
    return layout == TB_ATTN_BHSD ? "bhsd" : layout == TB_ATTN_BSHD ? "bshd" : NULL;
}

int tb_attn_layout_parse(const char *name, tb_attn_layout *out)
{
    if (strcmp(name, "bhsd") == 0) *out = TB_ATTN_BHSD;
    else if (strcmp(name, "bshd") == 0) *out = TB_ATTN_BSHD;
    else return TB_EUSAGE;
    return TB_OK;
}

uint32_t tb_dtype_named(const char *name, size_t n)
{
    static const struct { const char *name; uint32_t t; } types[] = {
        { "bf16", TB_DTYPE_BF16 }, { "f16", TB_DTYPE_F16 }, { "f32", TB_DTYPE_F32 },
        { "f64", TB_DTYPE_F64 }, { "e4m3", TB_DTYPE_E4M3 }, { "e5m2", TB_DTYPE_E5M2 },
        { "i8", TB_DTYPE_I8 }, { "i32", TB_DTYPE_I32 } };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strlen(types[i].name) == n && memcmp(types[i].name, name, n) == 0) return types[i].t;
    return 0;
}

void tb_problem_info_attention(const tb_shape *s, tb_attn_layout layout, double scale,
                               tb_problem_info *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->op, sizeof out->op, "%s", tb_op_attention_fwd.name);
    const tb_attn_shape *a = &s->attn;
    out->batch = a->batch;
    out->heads = a->heads;
    out->heads_kv = a->heads_kv;
    out->seq_q = a->seq_q;
    out->seq_k = a->seq_k;
    out->head_dim = a->head_dim;
    out->causal = a->causal ? 1 : 0;
    /* the expression of tb_attn_problem's default, so the record and the job hold one double */
    out->softmax_scale = scale > 0 ? scale : 1.0 / sqrt((double)a->head_dim);
    snprintf(out->dtypes, sizeof out->dtypes, "%s", TB_ATTN_DTYPES);
    const char *ln = tb_attn_layout_name(layout);
    snprintf(out->layouts, sizeof out->layouts, "%s", ln ? ln : "");
    snprintf(out->label, sizeof out->label, "%s", s->label);
}

int tb_problem_info_shape(const tb_problem_info *p, tb_shape *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    const tb_op_desc *d = tb_problem_info_op(p);
    if (!d)
        return tb_fail(msg, len, TB_EUSAGE, "problem %lld: unknown operation '%.16s'",
                       (long long)p->id, p->op);
    out->op = d->op;
    snprintf(out->label, sizeof out->label, "%s", p->label);
    if (d->op == TB_OP_ATTENTION_FWD) {
        tb_attn_shape *a = &out->attn;
        a->batch = p->batch; a->heads = p->heads; a->heads_kv = p->heads_kv;
        a->seq_q = p->seq_q; a->seq_k = p->seq_k; a->head_dim = p->head_dim;
        a->causal = p->causal ? 1 : 0;
    } else {
        out->m = p->m; out->n = p->n; out->k = p->k; out->batch = p->batch;
    }
    return TB_OK;
}

int tb_problem_info_text(const tb_problem_info *p, char *buf, size_t len)
{
    tb_shape s;
    char msg[8];
    if (tb_problem_info_shape(p, &s, msg, sizeof msg) != TB_OK)
        return snprintf(buf, len, "op:%.16s", p->op);
    return tb_op_of_shape(&s)->shape_text(&s, buf, len);
}

/* The types of a dtypes text, n of them comma-separated, into t; 0, or -1 when malformed. */
static int dtypes_of(const char *dtypes, uint32_t *t, int n)
{
    const char *at = dtypes;
    for (int i = 0; i < n; i++) {
        const char *end = strchr(at, ',');
        size_t k = end ? (size_t)(end - at) : strlen(at);
        if (!(t[i] = tb_dtype_named(at, k))) return -1;
        if ((i + 1 < n) != (end != NULL)) return -1;
        at = end ? end + 1 : at + k;
    }
    return 0;
}

int tb_problem_info_attention_abi(const tb_problem_info *p, tb_problem *out, char *msg,
                                  size_t len)
{
    tb_shape s;
    tb_attn_layout layout;
    uint32_t t[5];
    if (!tb_problem_info_is_attention(p))
        return tb_fail(msg, len, TB_EUSAGE, "problem %lld is not an attention problem ('%.16s')",
                       (long long)p->id, p->op);
    if (tb_attn_layout_parse(p->layouts, &layout) != TB_OK)
        return tb_fail(msg, len, TB_EUSAGE, "attention problem %lld: unknown layout '%.8s' (bhsd "
                       "or bshd)", (long long)p->id, p->layouts);
    if (dtypes_of(p->dtypes, t, 5) != 0)
        return tb_fail(msg, len, TB_EUSAGE, "attention problem %lld: dtypes '%.32s' are not five "
                       "known types (Q,K,V,O,accumulate)", (long long)p->id, p->dtypes);
    int rc = tb_problem_info_shape(p, &s, msg, len);
    if (rc) return rc;
    tb_attn_problem(&s.attn, layout, p->softmax_scale, out);
    tb_attention *a = &out->attention;
    a->q_type = t[0]; a->k_type = t[1]; a->v_type = t[2]; a->o_type = t[3]; a->acc_type = t[4];
    return TB_OK;
}
