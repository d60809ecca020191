/* submission_parse.c - the strict reader of a submission document (see submission_parse.h):
 * cJSON parses, then every member is checked against the schema's rules in the same order the
 * writer (report/submission.c) writes them, and the first failure is named by its path. */
#define _GNU_SOURCE
#include "format/submission_parse.h"
#include "common/tb.h"
#include "common/peak.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ck { char *msg; size_t len; int failed; } ck;

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

/* the object's members must be exactly `keys` (NULL-terminated) */
static int exact_keys(ck *c, const cJSON *o, const char *path, const char *const *keys, int optional_last)
{
    if (!cJSON_IsObject(o)) return bad(c, path, "want an object", NULL);
    const cJSON *it;
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

/* a string of at most cap - 1 bytes, valid UTF-8, no control characters; copied to out */
static int str(ck *c, const cJSON *o, const char *path, const char *k, char *out, size_t cap, int min)
{
    char p[300];
    sub(p, sizeof p, path, k);
    const cJSON *v = member(o, k);
    if (!cJSON_IsString(v)) return bad(c, p, "want a string", NULL);
    size_t l = strlen(v->valuestring);
    if (l >= cap || (int)l < min) return bad(c, p, "a string of the wrong length", NULL);
    if (!tb_text_utf8_valid(v->valuestring) || tb_text_has_control(v->valuestring))
        return bad(c, p, "not valid UTF-8 text", NULL);
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
    char p[300];
    sub(p, sizeof p, path, k);
    const cJSON *v = member(o, k);
    if (nullable && cJSON_IsNull(v)) { *out = NAN; return 0; }
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return bad(c, p, "want a number", NULL);
    double x = v->valuedouble;
    if (x < lo || x > hi || (open && x <= lo) || (integral && x != floor(x)))
        return bad(c, p, "out of range", NULL);
    *out = x;
    return 0;
}

static int inum(ck *c, const cJSON *o, const char *path, const char *k, double lo, double hi, int64_t *out)
{
    double d;
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
    if (!matches(s->compute_capability, "0123456789.") || !strchr(s->compute_capability, '.'))
        return bad(c, "environment.compute_capability", "want MAJOR.MINOR", NULL);
    if (inum(c, e, P, "sm_count", 0, 10000, &s->sm_count) ||
        inum(c, e, P, "cuda_runtime_version", -1, 1e9, &s->cuda_runtime_version) ||
        inum(c, e, P, "cublas_version", -1, 1e9, &s->cublas_version) ||
        num(c, e, P, "power_limit_w", 0, 1e5, 1, 0, 1, &s->power_limit_w) ||
        num(c, e, P, "sm_clock_max_mhz", 0, 1e5, 1, 0, 1, &s->sm_clock_max_mhz))
        return -1;
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
    const char *colon = strchr(r->name, ':');
    if (!matches(colon ? colon + 1 : r->name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") ||
        (colon && (colon - r->name > 15 || !colon[1])))
        return bad(c, strcat(p, ".name"), "not a variant name", NULL);
    if (strcmp(r->sha256, "unknown") && (strlen(r->sha256) != 64 || !matches(r->sha256, "0123456789abcdef")))
        return bad(c, strcat(p, ".sha256"), "want 64 lowercase hex digits", NULL);
    if (!cJSON_IsObject(member(v, "params"))) return bad(c, strcat(p, ".params"), "want an object", NULL);
    r->params_json = cJSON_PrintUnformatted(member(v, "params"));
    if (!r->params_json) return bad(c, strcat(p, ".params"), "out of memory", NULL);
    snprintf(p, sizeof p, "%s.shape", P);
    if (exact_keys(c, sh, p, skeys, 1) || inum(c, sh, p, "m", 1, 1 << 20, &r->m) ||
        inum(c, sh, p, "n", 1, 1 << 20, &r->n) || inum(c, sh, p, "k", 1, 1 << 20, &r->k) ||
        inum(c, sh, p, "batch", 1, 1 << 20, &r->batch) ||
        str(c, sh, p, "layouts", r->layouts, sizeof r->layouts, 2) ||
        str(c, sh, p, "dtypes", r->dtypes, sizeof r->dtypes, 1) ||
        (member(sh, "label") && str(c, sh, p, "label", r->label, sizeof r->label, 0)))
        return -1;
    if (!matches(r->layouts, "nt")) return bad(c, strcat(p, ".layouts"), "want two of n, t", NULL);
    if (one_of(c, o, P, "status", statuses, r->status, sizeof r->status)) return -1;
    snprintf(p, sizeof p, "%s.validation", P);
    if (exact_keys(c, val, p, valkeys, 0) ||
        one_of(c, val, p, "disposition", disps, r->disposition, sizeof r->disposition) ||
        str(c, val, p, "rule", r->rule, sizeof r->rule, 0))
        return -1;
    int should = !strcmp(r->status, "ok") && !strcmp(r->disposition, "passed");
    snprintf(p, sizeof p, "%s.timing", P);
    if (cJSON_IsNull(t)) {
        if (should) return bad(c, p, "null for a result that ran and passed", NULL);
        r->timed = 0;
        r->median_ms = r->lo_ms = r->hi_ms = r->clock_mhz = r->energy_j = NAN;
        return 0;
    }
    if (!should) return bad(c, p, "present for a result that was not timed", NULL);
    r->timed = 1;
    if (exact_keys(c, t, p, tkeys, 0) || one_of(c, t, p, "method", methods, r->method, sizeof r->method) ||
        num(c, t, p, "median_ms", 0, 1e9, 1, 0, 0, &r->median_ms) ||
        num(c, t, p, "median_lo_ms", 0, 1e9, 1, 0, 0, &r->lo_ms) ||
        num(c, t, p, "median_hi_ms", 0, 1e9, 1, 0, 0, &r->hi_ms) ||
        inum(c, t, p, "n_samples", 1, 1e9, &r->n_samples) ||
        num(c, t, p, "sm_clock_mhz", 0, 1e5, 1, 0, 1, &r->clock_mhz) ||
        num(c, t, p, "energy_j_per_launch", 0, 1e9, 1, 0, 1, &r->energy_j))
        return -1;
    if (!(r->lo_ms <= r->median_ms && r->median_ms <= r->hi_ms))
        return bad(c, strcat(p, ".median_ms"), "outside its own interval", NULL);
    return 0;
}

void tb_submission_free(tb_submission *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->r[i].params_json);
    free(s->r);
    free(s->options_json);
    memset(s, 0, sizeof *s);
}

int tb_submission_parse(const char *text, size_t len, tb_submission *out, char *msg, size_t msglen)
{
    memset(out, 0, sizeof *out);
    ck c = { msg, msglen, 0 };
    if (len > TB_SUB_MAX_BYTES)
        return tb_fail(msg, msglen, TB_EUSAGE, "document: larger than %u bytes", TB_SUB_MAX_BYTES);
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) return tb_fail(msg, msglen, TB_EUSAGE, "document: not JSON");
    static const char *const keys[] = { "format", "version", "tilebench", "run_started_at", "environment",
                                        "options", "results", NULL };
    static const char *const tbkeys[] = { "version", "git_sha", NULL };
    char fmt[32];
    double ver;
    const cJSON *rs = member(root, "results");
    if (exact_keys(&c, root, "document", keys, 0) == 0 &&
        str(&c, root, "document", "format", fmt, sizeof fmt, 1) == 0 &&
        (strcmp(fmt, "tilebench-submission") ? bad(&c, "document.format", "not a tilebench submission", NULL) : 0) == 0 &&
        num(&c, root, "document", "version", 1, 1, 0, 1, 0, &ver) == 0 &&
        exact_keys(&c, member(root, "tilebench"), "tilebench", tbkeys, 0) == 0 &&
        str(&c, member(root, "tilebench"), "tilebench", "version", out->tilebench_version, sizeof out->tilebench_version, 0) == 0 &&
        str(&c, member(root, "tilebench"), "tilebench", "git_sha", out->git_sha, sizeof out->git_sha, 0) == 0 &&
        str(&c, root, "document", "run_started_at", out->started_at, sizeof out->started_at, 20) == 0 &&
        environment(&c, member(root, "environment"), out) == 0) {
        out->version = (int)ver;
        if (!cJSON_IsObject(member(root, "options"))) bad(&c, "options", "want an object", NULL);
        else out->options_json = cJSON_PrintUnformatted(member(root, "options"));
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
    if (c.failed) {
        tb_submission_free(out);
        return TB_EUSAGE;
    }
    return TB_OK;
}

int tb_submission_plausible(const tb_submission *s, char *msg, size_t msglen)
{
    int major = 0, minor = 0;
    if (sscanf(s->compute_capability, "%d.%d", &major, &minor) != 2) major = minor = 0;
    double fpc = tb_peak_flop_per_clk_sm(major, minor);
    for (size_t i = 0; i < s->n; i++) {
        const tb_sub_result *r = &s->r[i];
        if (!r->timed) continue;
        if (!(r->clock_mhz > 0)) {
            snprintf(msg, msglen, "results[%zu]: a timed result without its SM clock", i);
            return -1;
        }
        if (!fpc || s->sm_count <= 0) continue;
        double tflops = 2.0 * (double)r->m * (double)r->n * (double)r->k * (double)r->batch /
                        (r->median_ms * 1e-3) / 1e12;
        double peak = fpc * (double)s->sm_count * r->clock_mhz * 1e6 / 1e12;
        if (tflops > peak * 1.02) {
            snprintf(msg, msglen, "results[%zu]: %.1f TFLOP/s (from its shape and median) is above the "
                     "GPU's dense peak of %.1f TFLOP/s at the %.0f MHz it reports", i, tflops, peak,
                     r->clock_mhz);
            return -1;
        }
    }
    return 0;
}
