/* submission_parse.c - the strict reader of a submission document (see submission_parse.h), of
 * version 1 (GEMM rows) and 2 (attention rows too, read through the op seam, common/op.h):
 * the raw text is scanned first (valid UTF-8, no NUL, no raw control character in a string,
 * nothing after the value), cJSON parses, no object may repeat a member, then every member is
 * checked against the schema's rules in the same order the writer (report/submission.c) writes
 * them, and the first failure is named by its path. */
#define _GNU_SOURCE
#include "format/submission_parse.h"
#include "common/tb.h"
#include "common/op_attention.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the check's state: the first failure of the grammar (failed, in msg), and the first failure
 * of the rules beyond it (rule, in rule_msg), reported only when the grammar holds */
typedef struct ck { char *msg; size_t len; int failed, rule; char rule_msg[TB_MSG_LEN]; int version; } ck;

static int bad(ck *c, const char *path, const char *fmt, const char *what)
{
    if (!c->failed) {
        char shown[200];
        tb_text_escape(path, shown, sizeof shown, 0);
        snprintf(c->msg, c->len, "%s: %s%s", shown, fmt, what ? what : "");
    }
    c->failed = 1;
    return -1;
}

/* a failure of one of the rules a schema cannot state (tb_submission_parse_rules): noted, and
 * the check goes on, so that a failure of the grammar anywhere in the document still wins */
static void bad_rule(ck *c, const char *path, const char *what)
{
    if (c->rule) return;
    char shown[200];
    tb_text_escape(path, shown, sizeof shown, 0);
    snprintf(c->rule_msg, sizeof c->rule_msg, "%s: %s", shown, what);
    c->rule = 1;
}

/* The length of the UTF-8 character at p (p < end), or 0 when it is not valid there (overlong,
 * a surrogate, above U+10FFFF, cut by end). */
static size_t utf8_at(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!n || (size_t)(end - p) < n) return 0;
    for (size_t i = 1; i < n; i++) if ((p[i] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0))) return 0;
    if (n == 4 && ((c == 0xF0 && p[1] < 0x90) || (c == 0xF4 && p[1] >= 0x90))) return 0;
    return n;
}

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

static int digit(const unsigned char *p, const unsigned char *end) { return p < end && *p >= '0' && *p <= '9'; }

/* The length of the JSON number at p (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?),
 * or 0 when what starts there is not one: cJSON reads numbers with strtod, which also takes
 * 01, 1., -.5 and 1.e5, and a stricter reader of the stored text would not. */
static size_t json_number(const unsigned char *p, const unsigned char *end)
{
    const unsigned char *q = p + (*p == '-');
    if (!digit(q, end)) return 0;
    if (*q == '0') q++;
    else while (digit(q, end)) q++;
    if (q < end && *q == '.') {
        if (!digit(++q, end)) return 0;
        while (digit(q, end)) q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (!digit(q, end)) return 0;
        while (digit(q, end)) q++;
    }
    if (q < end && *q && strchr("0123456789+-.eE", *q)) return 0;   /* 01, 1.5.3, 1e5e5 */
    return (size_t)(q - p);
}

/* What cJSON lets through and a C reader of the stored text must not meet: bytes that are not
 * UTF-8 (a JSON answer must be valid UTF-8), a NUL byte, a raw control character inside a
 * string (JSON forbids them), the escape \u0000 (a C string would end there, so the text a
 * check saw and the text stored would differ), a number JSON does not allow. 0, or -1 with msg
 * saying what and where. */
static int scan_text(ck *c, const char *text, size_t len)
{
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    const char *why = NULL;
    int in_string = 0;
    while (p < end && !why) {
        if (in_string)   /* the common case, fast: printable ASCII that neither ends nor escapes */
            while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\') p++;
        else   /* white space, punctuation, the letters of true, false and null */
            while (p < end && *p && *p < 0x80 && *p != '"' && *p != '-' && !(*p >= '0' && *p <= '9')) p++;
        if (p == end) break;
        size_t n = utf8_at(p, end);
        if (!n) why = "not valid UTF-8";
        else if (!*p) why = "a NUL byte";
        else if (in_string && *p < 0x20) why = "a control character inside a string";
        else if (*p == '"') in_string = !in_string;
        else if (!in_string && (*p == '-' || digit(p, end)) && !(n = json_number(p, end))) why = "not a JSON number";
        else if (in_string && *p == '\\' && p + 1 < end) {
            if (p[1] == 'u' && end - p >= 6 && !hexval(p[2]) && !hexval(p[3]) && !hexval(p[4]) && !hexval(p[5]))
                why = "\\u0000 in a string";
            else if (!(n = utf8_at(++p, end)))   /* the escaped character: never a closing quote */
                why = "not valid UTF-8";
        }
        if (!why) p += n;
    }
    if (!why) return 0;
    char where[64];
    snprintf(where, sizeof where, "document: byte %zu", (size_t)(p - (const unsigned char *)text));
    return bad(c, where, why, NULL);
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

/* No object anywhere in v repeats a member: readers disagree about which of two copies counts
 * (cJSON takes the first, Python's json the last), so a repeated member could carry past these
 * checks what another reader of the stored document then shows. Sorted, so a huge object costs
 * n log n. Depth is bounded by cJSON's nesting limit. */
static int unique_members(ck *c, const cJSON *v)
{
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return 0;
    size_t n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) n++;
    if (cJSON_IsObject(v) && n > 1 && n <= 16) {   /* small: pairwise, no allocation */
        for (const cJSON *a = v->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (!strcmp(a->string, b->string)) {
                    char shown[120];
                    tb_text_escape(a->string, shown, sizeof shown, 0);
                    return bad(c, "document", "a member repeated in one object: ", shown);
                }
    } else if (cJSON_IsObject(v) && n > 1) {
        const cJSON **m = malloc(n * sizeof *m);
        if (!m) return bad(c, "document", "out of memory", NULL);
        size_t i = 0;
        cJSON_ArrayForEach(it, v) m[i++] = it;
        qsort(m, n, sizeof *m, by_name);
        for (i = 1; i < n && strcmp(m[i - 1]->string, m[i]->string); i++) {}
        if (i < n) {
            char shown[120];
            tb_text_escape(m[i]->string, shown, sizeof shown, 0);
            free(m);
            return bad(c, "document", "a member repeated in one object: ", shown);
        }
        free(m);
    }
    cJSON_ArrayForEach(it, v) if (unique_members(c, it)) return -1;
    return 0;
}

/* the object's members must be exactly `keys` (NULL-terminated) */
static int exact_keys(ck *c, const cJSON *o, const char *path, const char *const *keys, int optional_last)
{
    if (!cJSON_IsObject(o)) return bad(c, path, "want an object", NULL);
    /* the usual case, cheaply: exactly the keys, in their order (as the writer writes them) */
    const cJSON *it = o->child;
    const char *const *want = keys;
    while (it && *want && it->string && !strcmp(it->string, *want)) { it = it->next; want++; }
    if (!it && (!*want || (optional_last && !want[1]))) return 0;
    cJSON_ArrayForEach(it, o) {
        int known = 0;
        for (const char *const *k = keys; *k && !known; k++) known = it->string && !strcmp(it->string, *k);
        if (!known) {
            char p[300];
            snprintf(p, sizeof p, "%s.%.100s", path, it->string ? it->string : "?");
            return bad(c, p, "unknown member", NULL);
        }
    }
    int nk = 0;
    while (keys[nk]) nk++;
    for (int i = 0; i < nk - (optional_last ? 1 : 0); i++)
        if (!cJSON_GetObjectItemCaseSensitive(o, keys[i])) {
            char p[300];
            snprintf(p, sizeof p, "%s.%s", path, keys[i]);
            return bad(c, p, "missing", NULL);
        }
    return 0;
}

static const cJSON *member(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static void sub(char *p, size_t cap, const char *path, const char *k) { snprintf(p, cap, "%s.%s", path, k); }

/* bad() at path.k (the path is formatted only on failure: the checks run on every stored
 * document each time a leaderboard is ranked) */
static int bad_at(ck *c, const char *path, const char *k, const char *why)
{
    char p[300];
    sub(p, sizeof p, path, k);
    return bad(c, p, why, NULL);
}

/* a string of at most cap - 1 bytes, valid UTF-8, no control characters; copied to out */
static int str(ck *c, const cJSON *o, const char *path, const char *k, char *out, size_t cap, int min)
{
    const cJSON *v = member(o, k);
    if (!cJSON_IsString(v)) return bad_at(c, path, k, "want a string");
    size_t l = strlen(v->valuestring);
    if (l >= cap || (int)l < min) return bad_at(c, path, k, "a string of the wrong length");
    if (!tb_text_utf8_valid(v->valuestring) || tb_text_has_control(v->valuestring))
        return bad_at(c, path, k, "not valid UTF-8 text");
    if (out) memcpy(out, v->valuestring, l + 1);
    return 0;
}

static int matches(const char *s, const char *allowed)
{
    return strspn(s, allowed) == strlen(s);
}

/* a number in [lo, hi] (strictly above lo when open), an integer when integral; or null
 * (NaN) when nullable */
static int num(ck *c, const cJSON *o, const char *path, const char *k, double lo, double hi, int open,
               int integral, int nullable, double *out)
{
    const cJSON *v = member(o, k);
    if (nullable && cJSON_IsNull(v)) { *out = NAN; return 0; }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad_at(c, path, k, "want a number");
    double x = v->valuedouble;
    if (x < lo || x > hi || (open && x <= lo) || (integral && x != floor(x)))
        return bad_at(c, path, k, "out of range");
    *out = x;
    return 0;
}

static int inum(ck *c, const cJSON *o, const char *path, const char *k, double lo, double hi, int64_t *out)
{
    double d = 0;
    if (num(c, o, path, k, lo, hi, 0, 1, 0, &d)) return -1;
    *out = (int64_t)d;
    return 0;
}

static int one_of(ck *c, const cJSON *o, const char *path, const char *k, const char *const *set,
                  char *out, size_t cap)
{
    if (str(c, o, path, k, out, cap, 1)) return -1;
    for (const char *const *s = set; *s; s++) if (!strcmp(out, *s)) return 0;
    char p[300];
    sub(p, sizeof p, path, k);
    return bad(c, p, "not one of the allowed values", NULL);
}

static int environment(ck *c, const cJSON *e, tb_submission *s)
{
    static const char *const keys[] = { "gpu_name", "gpu_uuid_sha256", "compute_capability", "sm_count",
        "driver_version", "cuda_runtime_version", "cublas_version", "power_limit_w", "sm_clock_max_mhz", NULL };
    const char *P = "environment";
    if (exact_keys(c, e, P, keys, 0)) return -1;
    if (str(c, e, P, "gpu_name", s->gpu_name, sizeof s->gpu_name, 1) ||
        str(c, e, P, "gpu_uuid_sha256", s->gpu_uuid_sha256, sizeof s->gpu_uuid_sha256, 0) ||
        str(c, e, P, "compute_capability", s->compute_capability, sizeof s->compute_capability, 3) ||
        str(c, e, P, "driver_version", s->driver_version, sizeof s->driver_version, 0))
        return -1;
    if ((s->gpu_uuid_sha256[0] && (strlen(s->gpu_uuid_sha256) != 64 || !matches(s->gpu_uuid_sha256, "0123456789abcdef"))))
        return bad(c, "environment.gpu_uuid_sha256", "want 64 lowercase hex digits or \"\"", NULL);
    const char *dot = strchr(s->compute_capability, '.');
    if (!matches(s->compute_capability, "0123456789.") || !dot || dot == s->compute_capability || !dot[1] ||
        strchr(dot + 1, '.'))
        return bad(c, "environment.compute_capability", "want MAJOR.MINOR", NULL);
    if (inum(c, e, P, "sm_count", 0, 10000, &s->sm_count) ||
        inum(c, e, P, "cuda_runtime_version", -1, 1e9, &s->cuda_runtime_version) ||
        inum(c, e, P, "cublas_version", -1, 1e9, &s->cublas_version) ||
        num(c, e, P, "power_limit_w", 0, 1e5, 1, 0, 1, &s->power_limit_w) ||
        num(c, e, P, "sm_clock_max_mhz", 0, 1e5, 1, 0, 1, &s->sm_clock_max_mhz))
        return -1;
    return 0;
}

/* Five comma-separated operand types (Q, K, V, O, accumulate), each a name the harness knows. */
static int attn_dtypes(const char *d)
{
    static const char *const names[] = { "bf16", "f16", "f32", "e4m3", "e5m2", NULL };
    int n = 0;
    for (const char *at = d;; n++) {
        size_t k = strcspn(at, ",");
        int known = 0;
        for (const char *const *x = names; *x && !known; x++) known = strlen(*x) == k && !memcmp(*x, at, k);
        if (!known) return 0;
        if (!at[k]) break;
        at += k + 1;
    }
    return n == 4;
}

/* An attention row's shape (version 2): exactly op, token, its fields, layouts, dtypes and an
 * optional label. The token is read by the op's own parser (common/op_attention.c: its syntax
 * and bounds, hkv dividing heads, causal only with Sq <= Sk, the size of one tensor) and must be
 * the canonical text of the fields, so that a reader of either says the same shape. */
static int attention_shape(ck *c, const cJSON *sh, const char *p, tb_sub_result *r)
{
    static const char *const akeys[] = { "op", "token", "batch", "heads", "heads_kv", "seq_q", "seq_k",
                                         "head_dim", "causal", "scale", "layouts", "dtypes", "label", NULL };
    char op[16], why[TB_MSG_LEN], want[96];
    tb_shape t;
    tb_attn_shape *a = &r->attn;
    if (str(c, sh, p, "op", op, sizeof op, 1)) return -1;
    if (strcmp(op, tb_op_attention_fwd.name))
        return bad_at(c, p, "op", "want \"attention_fwd\" (a GEMM shape has no op)");
    if (c->version < 2) return bad_at(c, p, "op", "an attention row needs version 2");
    if (exact_keys(c, sh, p, akeys, 1) || str(c, sh, p, "token", r->token, sizeof r->token, 1) ||
        inum(c, sh, p, "batch", 1, TB_ATTN_MAX_BATCH, &a->batch) ||
        inum(c, sh, p, "heads", 1, TB_ATTN_MAX_HEADS, &a->heads) ||
        inum(c, sh, p, "heads_kv", 1, TB_ATTN_MAX_HEADS, &a->heads_kv) ||
        inum(c, sh, p, "seq_q", 1, TB_ATTN_MAX_SEQ, &a->seq_q) ||
        inum(c, sh, p, "seq_k", 1, TB_ATTN_MAX_SEQ, &a->seq_k) ||
        inum(c, sh, p, "head_dim", 1, TB_ATTN_MAX_HEAD_DIM, &a->head_dim))
        return -1;
    if (!cJSON_IsBool(member(sh, "causal"))) return bad_at(c, p, "causal", "want true or false");
    a->causal = cJSON_IsTrue(member(sh, "causal"));
    if (num(c, sh, p, "scale", 0, 1e3, 1, 0, 0, &r->scale) ||
        str(c, sh, p, "layouts", r->layouts, sizeof r->layouts, 1) ||
        str(c, sh, p, "dtypes", r->dtypes, sizeof r->dtypes, 1) ||
        (member(sh, "label") && str(c, sh, p, "label", r->label, sizeof r->label, 0)))
        return -1;
    if (strcmp(r->layouts, "bhsd") && strcmp(r->layouts, "bshd"))
        return bad_at(c, p, "layouts", "want bhsd or bshd");
    if (!attn_dtypes(r->dtypes))
        return bad_at(c, p, "dtypes", "want five of bf16, f16, f32, e4m3, e5m2 (Q,K,V,O,accumulate)");
    r->op = TB_OP_ATTENTION_FWD;
    r->batch = a->batch;
    if (!matches(r->token, "0123456789x:causlhkv="))
        return bad_at(c, p, "token", "not an attention token (BxHxSqxSkxD[:causal][:hkv=N])");
    if (tb_op_attention_fwd.shape_parse(r->token, &t, why, sizeof why) != TB_OK)
        return bad_at(c, p, "token", why);
    tb_sub_result_shape(r, &t);   /* the fields' own shape: their canonical text */
    tb_op_attention_fwd.shape_text(&t, want, sizeof want);
    if (strcmp(want, r->token)) {
        char shown[200];
        tb_text_escape(want, shown, sizeof shown, 0);
        return bad(c, strcat(strcpy(why, p), ".token"), "disagrees with the shape's fields, which say ", shown);
    }
    return 0;
}

static int result(ck *c, const cJSON *o, size_t i, tb_sub_result *r)
{
    static const char *const keys[] = { "variant", "shape", "status", "validation", "timing", NULL };
    static const char *const vkeys[] = { "name", "family", "params", "sha256", NULL };
    static const char *const skeys[] = { "m", "n", "k", "batch", "layouts", "dtypes", "label", NULL };
    static const char *const valkeys[] = { "disposition", "rule", NULL };
    static const char *const tkeys[] = { "method", "median_ms", "median_lo_ms", "median_hi_ms", "n_samples",
                                         "sm_clock_mhz", "energy_j_per_launch", NULL };
    static const char *const statuses[] = { "ok", "crashed", "timeout", "unsupported", "error", "skipped", NULL };
    static const char *const disps[] = { "not_verified", "passed", "incorrect", NULL };
    static const char *const methods[] = { "cold", "stream", "graph", NULL };
    char P[64], p[96];
    snprintf(P, sizeof P, "results[%zu]", i);
    if (exact_keys(c, o, P, keys, 0)) return -1;
    const cJSON *v = member(o, "variant"), *sh = member(o, "shape"), *val = member(o, "validation"),
                *t = member(o, "timing");
    snprintf(p, sizeof p, "%s.variant", P);
    if (exact_keys(c, v, p, vkeys, 0) || str(c, v, p, "name", r->name, sizeof r->name, 1) ||
        str(c, v, p, "family", r->family, sizeof r->family, 0) ||
        str(c, v, p, "sha256", r->sha256, sizeof r->sha256, 1))
        return -1;
    /* ^([A-Za-z0-9_-]{1,15}:)?[A-Za-z0-9_.-]{1,127}$ */
    static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
    const char *colon = strchr(r->name, ':'), *base = colon ? colon + 1 : r->name;
    size_t ns = colon ? (size_t)(colon - r->name) : 0;
    if (!*base || strlen(base) > 127 ||
        !matches(base, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ||
        (colon && (ns < 1 || ns > 15 || strspn(r->name, name_chars) != ns)))
        return bad(c, strcat(p, ".name"), "not a variant name", NULL);
    if (strcmp(r->sha256, "unknown") && (strlen(r->sha256) != 64 || !matches(r->sha256, "0123456789abcdef")))
        return bad(c, strcat(p, ".sha256"), "want 64 lowercase hex digits", NULL);
    if (!cJSON_IsObject(member(v, "params"))) return bad(c, strcat(p, ".params"), "want an object", NULL);
    r->params_json = cJSON_PrintUnformatted(member(v, "params"));
    if (!r->params_json) return bad(c, strcat(p, ".params"), "out of memory", NULL);
    snprintf(p, sizeof p, "%s.shape", P);
    if (cJSON_IsObject(sh) && member(sh, "op")) {   /* version 2: an attention row */
        if (attention_shape(c, sh, p, r)) return -1;
    } else {
        r->op = TB_OP_GEMM;
        if (exact_keys(c, sh, p, skeys, 1) || inum(c, sh, p, "m", 1, 1 << 20, &r->m) ||
            inum(c, sh, p, "n", 1, 1 << 20, &r->n) || inum(c, sh, p, "k", 1, 1 << 20, &r->k) ||
            inum(c, sh, p, "batch", 1, 1 << 20, &r->batch) ||
            str(c, sh, p, "layouts", r->layouts, 3, 2) ||
            str(c, sh, p, "dtypes", r->dtypes, sizeof r->dtypes, 1) ||
            (member(sh, "label") && str(c, sh, p, "label", r->label, sizeof r->label, 0)))
            return -1;
        if (!matches(r->layouts, "nt")) return bad(c, strcat(p, ".layouts"), "want two of n, t", NULL);
        tb_shape g;
        tb_sub_result_shape(r, &g);
        tb_op_gemm.shape_text(&g, r->token, sizeof r->token);
    }
    if (one_of(c, o, P, "status", statuses, r->status, sizeof r->status)) return -1;
    snprintf(p, sizeof p, "%s.validation", P);
    if (exact_keys(c, val, p, valkeys, 0) ||
        one_of(c, val, p, "disposition", disps, r->disposition, sizeof r->disposition) ||
        str(c, val, p, "rule", r->rule, sizeof r->rule, 0))
        return -1;
    int should = !strcmp(r->status, "ok") && !strcmp(r->disposition, "passed");
    snprintf(p, sizeof p, "%s.timing", P);
    if (cJSON_IsNull(t)) {
        if (should) bad_rule(c, p, "null for a result that ran and passed");
        r->timed = 0;
        r->median_ms = r->lo_ms = r->hi_ms = r->clock_mhz = r->energy_j = NAN;
        return 0;
    }
    r->timed = 1;
    if (exact_keys(c, t, p, tkeys, 0) || one_of(c, t, p, "method", methods, r->method, sizeof r->method) ||
        num(c, t, p, "median_ms", 0, 1e9, 1, 0, 0, &r->median_ms) ||
        num(c, t, p, "median_lo_ms", 0, 1e9, 1, 0, 0, &r->lo_ms) ||
        num(c, t, p, "median_hi_ms", 0, 1e9, 1, 0, 0, &r->hi_ms) ||
        inum(c, t, p, "n_samples", 1, 1e9, &r->n_samples) ||
        num(c, t, p, "sm_clock_mhz", 0, 1e5, 1, 0, 1, &r->clock_mhz) ||
        num(c, t, p, "energy_j_per_launch", 0, 1e9, 1, 0, 1, &r->energy_j))
        return -1;
    if (!should) bad_rule(c, p, "present for a result that was not timed");
    else if (!(r->lo_ms <= r->median_ms && r->median_ms <= r->hi_ms))
        bad_rule(c, strcat(p, ".median_ms"), "outside its own interval");
    return 0;
}

void tb_sub_result_shape(const tb_sub_result *r, tb_shape *out)
{
    memset(out, 0, sizeof *out);
    out->op = r->op;
    snprintf(out->label, sizeof out->label, "%s", r->label);
    if (r->op == TB_OP_ATTENTION_FWD) out->attn = r->attn;
    else { out->m = r->m; out->n = r->n; out->k = r->k; out->batch = r->batch; }
}

double tb_sub_result_flops(const tb_sub_result *r)
{
    tb_shape s;
    tb_sub_result_shape(r, &s);
    const tb_op_desc *d = tb_op_of_shape(&s);
    return d ? d->shape_flops(&s) : NAN;
}

void tb_submission_free(tb_submission *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->r[i].params_json);
    free(s->r);
    free(s->options_json);
    memset(s, 0, sizeof *s);
}

/* the options object: only the keys the schema names, each of its type; all optional */
static int options(ck *c, const cJSON *o)
{
    static const struct { const char *key; char type; } known[] = {   /* s string, n number, b number or boolean */
        { "method", 's' }, { "l2", 's' }, { "stop", 's' }, { "trials", 'n' }, { "seed", 'n' }, { "init", 's' },
        { "layout", 's' }, { "pad", 'n' }, { "alpha", 'n' }, { "beta", 'n' }, { "warmup", 'n' },
        { "no_energy", 'b' }, { "pace", 'n' } };
    if (!cJSON_IsObject(o)) return bad(c, "options", "want an object", NULL);
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char p[300];
        snprintf(p, sizeof p, "options.%.100s", it->string ? it->string : "?");
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(known[k].key, it->string ? it->string : "")) k++;
        if (k == sizeof known / sizeof known[0]) return bad(c, p, "unknown member", NULL);
        if (known[k].type == 's') {
            if (!cJSON_IsString(it)) return bad(c, p, "want a string", NULL);
            if (strlen(it->valuestring) > 1024) return bad(c, p, "a string of the wrong length", NULL);
            if (tb_text_has_control(it->valuestring)) return bad(c, p, "not valid UTF-8 text", NULL);
        } else if (!(cJSON_IsNumber(it) && isfinite(it->valuedouble)) && !(known[k].type == 'b' && cJSON_IsBool(it))) {
            return bad(c, p, known[k].type == 'b' ? "want a number or a boolean" : "want a number", NULL);
        }
    }
    return 0;
}

/* YYYY-MM-DDTHH:MM:SSZ */
static int utc_stamp(const char *t)
{
    static const char form[] = "dddd-dd-ddTdd:dd:ddZ";
    if (strlen(t) != sizeof form - 1) return 0;
    for (size_t i = 0; form[i]; i++)
        if (form[i] == 'd' ? !(t[i] >= '0' && t[i] <= '9') : t[i] != form[i]) return 0;
    return 1;
}

/* The worker of both entry points: *rule = 1 when the refusal is one of the rules beyond the
 * grammar (see tb_submission_parse_rules). */
static int parse(const char *text, size_t len, tb_submission *out, int *rule, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    *rule = 0;
    ck c = { msg, msglen, 0, 0, "", 0 };
    if (len > TB_SUB_MAX_BYTES)
        return tb_fail(msg, msglen, TB_EUSAGE, "document: larger than %u bytes", TB_SUB_MAX_BYTES);
    if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3))   /* cJSON would skip it, Python's json.loads(str) not */
        return tb_fail(msg, msglen, TB_EUSAGE, "document: a byte-order mark before the document");
    if (scan_text(&c, text, len)) return TB_EUSAGE;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root)   /* end: where cJSON stopped (nesting deeper than CJSON_NESTING_LIMIT stops it too) */
        return tb_fail(msg, msglen, TB_EUSAGE, "document: not JSON (at byte %zu)", end ? (size_t)(end - text) : (size_t)0);
    while (end && end < text + len && strchr(" \t\r\n", *end)) end++;   /* *end is never NUL: scanned */
    if (!end || end != text + len) {
        cJSON_Delete(root);
        return tb_fail(msg, msglen, TB_EUSAGE, "document: not JSON (more after the document's end)");
    }
    if (unique_members(&c, root)) { cJSON_Delete(root); return TB_EUSAGE; }
    static const char *const keys[] = { "format", "version", "tilebench", "run_started_at", "environment",
                                        "options", "results", NULL };
    static const char *const tbkeys[] = { "version", "git_sha", NULL };
    char fmt[32];
    double ver;
    const cJSON *rs = member(root, "results");
    if (exact_keys(&c, root, "document", keys, 0) == 0 &&
        str(&c, root, "document", "format", fmt, sizeof fmt, 1) == 0 &&
        (strcmp(fmt, "tilebench-submission") ? bad(&c, "document.format", "not a tilebench submission", NULL) : 0) == 0 &&
        num(&c, root, "document", "version", 1, TB_SUB_VERSION_MAX, 0, 1, 0, &ver) == 0 &&
        (c.version = (int)ver) > 0 &&
        exact_keys(&c, member(root, "tilebench"), "tilebench", tbkeys, 0) == 0 &&
        str(&c, member(root, "tilebench"), "tilebench", "version", out->tilebench_version, sizeof out->tilebench_version, 0) == 0 &&
        str(&c, member(root, "tilebench"), "tilebench", "git_sha", out->git_sha, sizeof out->git_sha, 0) == 0 &&
        str(&c, root, "document", "run_started_at", out->started_at, sizeof out->started_at, 20) == 0 &&
        (utc_stamp(out->started_at) ? 0 : bad(&c, "document.run_started_at", "want YYYY-MM-DDTHH:MM:SSZ", NULL)) == 0 &&
        environment(&c, member(root, "environment"), out) == 0 &&
        options(&c, member(root, "options")) == 0) {
        out->version = (int)ver;
        out->options_json = cJSON_PrintUnformatted(member(root, "options"));
        if (!out->options_json) bad(&c, "options", "out of memory", NULL);
        if (!c.failed && !cJSON_IsArray(rs)) bad(&c, "results", "want an array", NULL);
        size_t n = c.failed ? 0 : (size_t)cJSON_GetArraySize(rs);
        if (!c.failed && n > TB_SUB_MAX_RESULTS) bad(&c, "results", "too many results", NULL);
        if (!c.failed && n) {
            out->r = calloc(n, sizeof *out->r);
            if (!out->r) bad(&c, "results", "out of memory", NULL);
        }
        const cJSON *it;
        size_t i = 0;
        cJSON_ArrayForEach(it, rs) {
            if (c.failed) break;
            out->n = i + 1;
            result(&c, it, i, &out->r[i]);
            i++;
        }
    }
    cJSON_Delete(root);
    if (!c.failed && c.rule) {   /* the grammar holds, a rule beyond it does not */
        snprintf(msg, msglen, "%s", c.rule_msg);
        *rule = c.failed = 1;
    }
    if (c.failed) {
        tb_submission_free(out);
        return TB_EUSAGE;
    }
    return TB_OK;
}

int tb_submission_parse(const char *text, size_t len, tb_submission *out, char *msg, size_t msglen)
{
    int rule;
    return parse(text, len, out, &rule, msg, msglen);
}

int tb_submission_parse_rules(const char *text, size_t len, tb_submission *out, int *rule, char *msg, size_t msglen)
{
    return parse(text, len, out, rule, msg, msglen);
}
