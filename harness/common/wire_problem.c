/* wire_problem.c - the problem on the wire (see wire.h): a tb_problem as the "problem" object
 * of a job, for each operation, and every field of it checked on input, so that a worker never
 * sizes buffers or launches from a problem the parent could not have built. Owns the JSON form
 * of tb_gemm (with growth 1's scales) and of tb_attention (growth 2), and the "op" that says
 * which one a problem is (absent: GEMM, as every job written before growth 2). */
#include "common/wire.h"
#include "common/op.h"
#include "common/op_attention.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

#define BAD "malformed problem in job: "
#define TB_WIRE_MAX_STRIDE (1ll << 40)   /* elements; (2^16 - 1) * 2^40 still fits int64 */

/* ---- GEMM (v1 and growth 1) --------------------------------------------------------------- */

cJSON *tb_wire_gemm_to_json(const tb_gemm *g)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "m", (double)g->m);
    cJSON_AddNumberToObject(o, "n", (double)g->n);
    cJSON_AddNumberToObject(o, "k", (double)g->k);
    cJSON_AddNumberToObject(o, "batch", (double)g->batch);
    int types[5] = { g->a_type, g->b_type, g->c_type, g->d_type, g->acc_type };
    cJSON_AddItemToObject(o, "types", cJSON_CreateIntArray(types, 5));
    int lay[4] = { g->a_layout, g->b_layout, g->c_layout, g->d_layout };
    cJSON_AddItemToObject(o, "layouts", cJSON_CreateIntArray(lay, 4));
    double ld[8] = { (double)g->lda, (double)g->ldb, (double)g->ldc, (double)g->ldd,
                     (double)g->stride_a, (double)g->stride_b, (double)g->stride_c,
                     (double)g->stride_d };
    cJSON_AddItemToObject(o, "ld_strides", cJSON_CreateDoubleArray(ld, 8));
    cJSON_AddNumberToObject(o, "alpha", g->alpha);
    cJSON_AddNumberToObject(o, "beta", g->beta);
    return o;
}

int tb_wire_gemm_from_json(const cJSON *o, tb_gemm *g, char *msg, size_t len)
{
    memset(g, 0, sizeof *g);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "types");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(o, "layouts");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "ld_strides");
    if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != 5 || !cJSON_IsArray(l) ||
        cJSON_GetArraySize(l) != 4 || !cJSON_IsArray(s) || cJSON_GetArraySize(s) != 8)
        return tb_fail(msg, len, TB_EWORKER, "malformed problem in job");
    g->m = (int64_t)tb_json_num(o, "m", 0);
    g->n = (int64_t)tb_json_num(o, "n", 0);
    g->k = (int64_t)tb_json_num(o, "k", 0);
    g->batch = (int64_t)tb_json_num(o, "batch", 1);
    g->a_type = cJSON_GetArrayItem(t, 0)->valueint;
    g->b_type = cJSON_GetArrayItem(t, 1)->valueint;
    g->c_type = cJSON_GetArrayItem(t, 2)->valueint;
    g->d_type = cJSON_GetArrayItem(t, 3)->valueint;
    g->acc_type = cJSON_GetArrayItem(t, 4)->valueint;
    g->a_layout = cJSON_GetArrayItem(l, 0)->valueint;
    g->b_layout = cJSON_GetArrayItem(l, 1)->valueint;
    g->c_layout = cJSON_GetArrayItem(l, 2)->valueint;
    g->d_layout = cJSON_GetArrayItem(l, 3)->valueint;
    int64_t *dst[8] = { &g->lda, &g->ldb, &g->ldc, &g->ldd, &g->stride_a, &g->stride_b,
                        &g->stride_c, &g->stride_d };
    for (int i = 0; i < 8; i++) *dst[i] = (int64_t)cJSON_GetArrayItem(s, i)->valuedouble;
    g->alpha = tb_json_num(o, "alpha", 1.0);
    g->beta = tb_json_num(o, "beta", 0.0);
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1)
        return tb_fail(msg, len, TB_EWORKER, "malformed problem in job: non-positive size");
    return TB_OK;
}

static int gemm_from_json(const cJSON *o, tb_problem *p, char *msg, size_t len)
{
    int rc = tb_wire_gemm_from_json(o, &p->gemm, msg, len);
    if (rc) return rc;
    p->gemm_scales.scale_a = p->gemm_scales.scale_b = 1.0f;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "scales");
    if (s) {
        if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != 2 ||
            !cJSON_IsNumber(cJSON_GetArrayItem(s, 0)) || !cJSON_IsNumber(cJSON_GetArrayItem(s, 1)))
            return tb_fail(msg, len, TB_EWORKER, "malformed problem in job: scales");
        p->gemm_scales.scale_a = (float)cJSON_GetArrayItem(s, 0)->valuedouble;
        p->gemm_scales.scale_b = (float)cJSON_GetArrayItem(s, 1)->valuedouble;
    }
    const float sa = p->gemm_scales.scale_a, sb = p->gemm_scales.scale_b;
    if (!(isfinite(sa) && sa > 0 && isfinite(sb) && sb > 0))
        return tb_fail(msg, len, TB_EWORKER, "malformed problem in job: scales must be finite "
                       "and positive");
    return TB_OK;
}

/* ---- attention forward (growth 2) --------------------------------------------------------- */

static void add_ints(cJSON *o, const char *key, const int64_t *v, int n)
{
    double d[3];
    for (int i = 0; i < n; i++) d[i] = (double)v[i];
    cJSON_AddItemToObject(o, key, cJSON_CreateDoubleArray(d, n));
}

static cJSON *attention_to_json(const tb_attention *a)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "batch", (double)a->batch);
    cJSON_AddNumberToObject(o, "heads", (double)a->heads);
    cJSON_AddNumberToObject(o, "heads_kv", (double)a->heads_kv);
    cJSON_AddNumberToObject(o, "seq_q", (double)a->seq_q);
    cJSON_AddNumberToObject(o, "seq_k", (double)a->seq_k);
    cJSON_AddNumberToObject(o, "head_dim", (double)a->head_dim);
    cJSON_AddNumberToObject(o, "q_type", a->q_type);
    cJSON_AddNumberToObject(o, "k_type", a->k_type);
    cJSON_AddNumberToObject(o, "v_type", a->v_type);
    cJSON_AddNumberToObject(o, "o_type", a->o_type);
    cJSON_AddNumberToObject(o, "acc_type", a->acc_type);
    cJSON_AddNumberToObject(o, "lse_type", a->lse_type);
    cJSON_AddNumberToObject(o, "layout", a->layout);
    cJSON_AddNumberToObject(o, "causal", a->causal);
    cJSON_AddNumberToObject(o, "scale", a->scale);
    add_ints(o, "q_stride", a->q_stride, 3);
    add_ints(o, "k_stride", a->k_stride, 3);
    add_ints(o, "v_stride", a->v_stride, 3);
    add_ints(o, "o_stride", a->o_stride, 3);
    add_ints(o, "lse_stride", a->lse_stride, 2);
    return o;
}

/* An integer in [lo, hi]: the number v of field name (attention.NAME[i] when i >= 0). */
static int int_in(double v, const char *name, int i, int64_t lo, int64_t hi, int64_t *out,
                  char *msg, size_t len)
{
    char field[48];
    if (i >= 0) snprintf(field, sizeof field, "attention.%s[%d]", name, i);
    else snprintf(field, sizeof field, "attention.%s", name);
    if (!isfinite(v) || v != floor(v))
        return tb_fail(msg, len, TB_EWORKER, BAD "%s is not an integer", field);
    if (v < (double)lo || v > (double)hi)
        return tb_fail(msg, len, TB_EWORKER, BAD "%s %.0f is not in %lld..%lld", field, v,
                       (long long)lo, (long long)hi);
    *out = (int64_t)v;
    return TB_OK;
}

static int get_int(const cJSON *o, const char *name, int64_t lo, int64_t hi, int64_t *out,
                   char *msg, size_t len)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(v))
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.%s is missing or not a number", name);
    return int_in(v->valuedouble, name, -1, lo, hi, out, msg, len);
}

static int get_ints(const cJSON *o, const char *name, int n, int64_t *out, char *msg, size_t len)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.%s is not an array of %d numbers",
                       name, n);
    for (int i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(v))
            return tb_fail(msg, len, TB_EWORKER, BAD "attention.%s[%d] is not a number", name, i);
        int rc = int_in(v->valuedouble, name, i, 1, TB_WIRE_MAX_STRIDE, &out[i], msg, len);
        if (rc) return rc;
    }
    return TB_OK;
}

static int get_type(const cJSON *o, const char *name, tb_dtype *out, char *msg, size_t len)
{
    int64_t t = 0;
    int rc = get_int(o, name, 0, 255, &t, msg, len);
    if (rc) return rc;
    if (!tb_dtype_size((uint32_t)t))
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.%s %lld is not a known type", name,
                       (long long)t);
    *out = (tb_dtype)t;
    return TB_OK;
}

/* The strides st of tensor t (attention.NAME, heads x seq rows of head_dim elements a batch):
 * its rows, heads and batches may not overlap in the order its layout names (the head
 * dimension is contiguous). */
static int no_overlap(const tb_attention *a, const char *t, const char *name, const int64_t *st,
                      int64_t heads, int64_t seq, char *msg, size_t len)
{
    const int bshd = a->layout == TB_ATTN_BSHD;
    /* inner to outer: which stride, and the extent of the dimension it steps */
    const int at[3] = { bshd ? 1 : 2, bshd ? 2 : 1, 0 };
    const int64_t ext[2] = { bshd ? heads : seq, bshd ? seq : heads };
    static const char *const what[3] = { "batches", "heads", "rows" };
    int64_t need = a->head_dim;
    for (int i = 0; i < 3; i++) {
        if (st[at[i]] < need)
            return tb_fail(msg, len, TB_EWORKER, BAD "attention.%s[%d] %lld is less than %lld: "
                           "%s's %s would overlap (%s)", name, at[i], (long long)st[at[i]],
                           (long long)need, t, what[at[i]], bshd ? "bshd" : "bhsd");
        if (i < 2) need = st[at[i]] * ext[i];
    }
    return TB_OK;
}

static int attention_from_json(const cJSON *o, tb_attention *a, char *msg, size_t len)
{
    memset(a, 0, sizeof *a);
    if (!cJSON_IsObject(o))
        return tb_fail(msg, len, TB_EWORKER, BAD "op attention_fwd without an \"attention\" object");
    int64_t v = 0;
    int rc;
    if ((rc = get_int(o, "batch", 1, TB_ATTN_MAX_BATCH, &a->batch, msg, len)) ||
        (rc = get_int(o, "heads", 1, TB_ATTN_MAX_HEADS, &a->heads, msg, len)) ||
        (rc = get_int(o, "heads_kv", 1, TB_ATTN_MAX_HEADS, &a->heads_kv, msg, len)) ||
        (rc = get_int(o, "seq_q", 1, TB_ATTN_MAX_SEQ, &a->seq_q, msg, len)) ||
        (rc = get_int(o, "seq_k", 1, TB_ATTN_MAX_SEQ, &a->seq_k, msg, len)) ||
        (rc = get_int(o, "head_dim", 1, TB_ATTN_MAX_HEAD_DIM, &a->head_dim, msg, len)))
        return rc;
    if (a->heads % a->heads_kv)
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.heads_kv %lld does not divide "
                       "attention.heads %lld", (long long)a->heads_kv, (long long)a->heads);
    if ((rc = get_type(o, "q_type", &a->q_type, msg, len)) ||
        (rc = get_type(o, "k_type", &a->k_type, msg, len)) ||
        (rc = get_type(o, "v_type", &a->v_type, msg, len)) ||
        (rc = get_type(o, "o_type", &a->o_type, msg, len)) ||
        (rc = get_type(o, "acc_type", &a->acc_type, msg, len)) ||
        (rc = get_type(o, "lse_type", &a->lse_type, msg, len)))
        return rc;
    if ((rc = get_int(o, "layout", 0, 1, &v, msg, len))) return rc;
    a->layout = (tb_attn_layout)v;
    if ((rc = get_int(o, "causal", 0, 1, &v, msg, len))) return rc;
    a->causal = (uint32_t)v;
    if (a->causal && a->seq_q > a->seq_k)
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.causal with attention.seq_q %lld "
                       "more than attention.seq_k %lld (the mask is aligned to the bottom right)",
                       (long long)a->seq_q, (long long)a->seq_k);
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(o, "scale");
    if (!cJSON_IsNumber(sc) || !isfinite(sc->valuedouble) || !(sc->valuedouble > 0))
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.scale must be finite and positive");
    a->scale = sc->valuedouble;
    if ((rc = get_ints(o, "q_stride", 3, a->q_stride, msg, len)) ||
        (rc = get_ints(o, "k_stride", 3, a->k_stride, msg, len)) ||
        (rc = get_ints(o, "v_stride", 3, a->v_stride, msg, len)) ||
        (rc = get_ints(o, "o_stride", 3, a->o_stride, msg, len)) ||
        (rc = get_ints(o, "lse_stride", 2, a->lse_stride, msg, len)))
        return rc;
    if ((rc = no_overlap(a, "Q", "q_stride", a->q_stride, a->heads, a->seq_q, msg, len)) ||
        (rc = no_overlap(a, "K", "k_stride", a->k_stride, a->heads_kv, a->seq_k, msg, len)) ||
        (rc = no_overlap(a, "V", "v_stride", a->v_stride, a->heads_kv, a->seq_k, msg, len)) ||
        (rc = no_overlap(a, "O", "o_stride", a->o_stride, a->heads, a->seq_q, msg, len)))
        return rc;
    if (a->lse_stride[1] < a->seq_q)
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.lse_stride[1] %lld is less than "
                       "attention.seq_q %lld: the LSE's heads would overlap",
                       (long long)a->lse_stride[1], (long long)a->seq_q);
    if (a->lse_stride[0] < a->heads * a->lse_stride[1])
        return tb_fail(msg, len, TB_EWORKER, BAD "attention.lse_stride[0] %lld is less than "
                       "attention.heads x attention.lse_stride[1] (%lld): the LSE's batches would "
                       "overlap", (long long)a->lse_stride[0],
                       (long long)(a->heads * a->lse_stride[1]));
    return TB_OK;
}

/* ---- a whole tb_problem ------------------------------------------------------------------- */

cJSON *tb_wire_problem_to_json(const tb_problem *p)
{
    const tb_op_desc *d = tb_op_find(p->op);
    cJSON *o;
    if (p->op == TB_OP_ATTENTION_FWD) {
        o = cJSON_CreateObject();
        cJSON_AddItemToObject(o, "attention", attention_to_json(&p->attention));
    } else {
        o = tb_wire_gemm_to_json(&p->gemm);
        double sc[2] = { p->gemm_scales.scale_a, p->gemm_scales.scale_b };
        cJSON_AddItemToObject(o, "scales", cJSON_CreateDoubleArray(sc, 2));
    }
    char unknown[24];
    snprintf(unknown, sizeof unknown, "op %u", (unsigned)p->op);   /* refused by the reader */
    cJSON_AddStringToObject(o, "op", d ? d->name : unknown);
    return o;
}

int tb_wire_problem_from_json(const cJSON *o, tb_problem *p, char *msg, size_t len)
{
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->op = TB_OP_GEMM;
    if (!cJSON_IsObject(o)) return tb_fail(msg, len, TB_EWORKER, "malformed problem in job");
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(o, "op");
    if (!op) return gemm_from_json(o, p, msg, len);   /* a job from before growth 2 */
    const tb_op_desc *d = cJSON_IsString(op) ? tb_op_named(op->valuestring) : NULL;
    if (!d)
        return tb_fail(msg, len, TB_EWORKER, BAD "op '%.32s' is not an operation of this worker",
                       cJSON_IsString(op) ? op->valuestring : "(not a string)");
    p->op = d->op;
    if (d->op == TB_OP_ATTENTION_FWD)
        return attention_from_json(cJSON_GetObjectItemCaseSensitive(o, "attention"),
                                   &p->attention, msg, len);
    return gemm_from_json(o, p, msg, len);
}
