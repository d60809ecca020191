/* submission.c - a run as a leaderboard submission document (see submission.h and
 * docs/submission.md): the environment with the GPU's UUID hashed, the options that shape a
 * figure, and per (variant, shape) the library, the shape (a GEMM's m, n, k, batch; an attention
 * problem's op, token and fields, which make the document version 2), the validation and the
 * median with its interval. Built with cJSON, written as valid UTF-8. */
#define _GNU_SOURCE
#include "report/submission.h"
#include "report/rank.h"
#include "common/problem.h"
#include "common/sha256.h"
#include "common/stats.h"
#include "common/tb.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static double extra_num(const char *extra, const char *key)
{
    cJSON *x = cJSON_Parse(extra);
    const cJSON *v = x ? cJSON_GetObjectItemCaseSensitive(x, key) : NULL;
    double d = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    cJSON_Delete(x);
    return d;
}

/* The 95 % percentile-bootstrap interval of the median of ms[0..n) (sorted here), 1000
 * resamples from a stream keyed by seed: deterministic for one measurement. */
static int median_interval(double *ms, size_t n, uint64_t seed, double *lo, double *hi)
{
    enum { ITERS = 1000 };
    qsort(ms, n, sizeof *ms, tb_cmp_double);
    int *cnt = calloc(n, sizeof *cnt);
    double *r = malloc(ITERS * sizeof *r);
    if (!cnt || !r) { free(cnt); free(r); return -1; }
    tb_rng g = tb_rng_stream(seed, 0x5b);
    for (int i = 0; i < ITERS; i++) r[i] = tb_rank_resample_median(ms, (int)n, cnt, &g);
    qsort(r, ITERS, sizeof *r, tb_cmp_double);
    *lo = r[(int)floor(0.025 * (ITERS - 1))];
    *hi = r[(int)ceil(0.975 * (ITERS - 1))];
    free(cnt);
    free(r);
    return 0;
}

static cJSON *environment(const tb_environment *e, char *msg, size_t len)
{
    char h[65] = "";
    if (e->gpu_uuid[0] && tb_sha256_hex(TB_SUBMISSION_UUID_SALT, strlen(TB_SUBMISSION_UUID_SALT),
                                        e->gpu_uuid, strlen(e->gpu_uuid), h)) {
        tb_fail(msg, len, TB_ENOMEM, "cannot hash the GPU's UUID");
        return NULL;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "gpu_name", e->gpu_name);
    cJSON_AddStringToObject(o, "gpu_uuid_sha256", h);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", e->cc_major, e->cc_minor);
    cJSON_AddStringToObject(o, "compute_capability", cc);
    cJSON_AddNumberToObject(o, "sm_count", e->sm_count);
    cJSON_AddStringToObject(o, "driver_version", e->driver_version);
    cJSON_AddNumberToObject(o, "cuda_runtime_version", e->cuda_runtime_version);
    cJSON_AddNumberToObject(o, "cublas_version", e->cublas_version);
    add_num(o, "power_limit_w", e->power_limit_mw > 0 ? e->power_limit_mw / 1000.0 : NAN);
    add_num(o, "sm_clock_max_mhz", e->sm_clock_max_mhz > 0 ? e->sm_clock_max_mhz : NAN);
    return o;
}

/* The run's options that shape a figure, as the sweep stored them. */
static cJSON *options(const tb_run_info *run)
{
    static const char *const keep[] = { "method", "l2", "stop", "trials", "seed", "init", "layout",
                                        "pad", "alpha", "beta", "warmup", "no_energy", "pace" };
    cJSON *all = cJSON_Parse(run->options_json), *o = cJSON_CreateObject();
    for (size_t i = 0; all && i < sizeof keep / sizeof keep[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(all, keep[i]);
        if (v) cJSON_AddItemToObject(o, keep[i], cJSON_Duplicate(v, 1));
    }
    cJSON_Delete(all);
    return o;
}

static cJSON *result(tb_store *s, const tb_result_row *r, int *rc, char *msg, size_t len)
{
    cJSON *o = cJSON_CreateObject(), *v = cJSON_AddObjectToObject(o, "variant");
    cJSON_AddStringToObject(v, "name", r->v.name);
    cJSON_AddStringToObject(v, "family", r->v.family);
    cJSON *params = cJSON_Parse(r->v.params_json);
    cJSON_AddItemToObject(v, "params", params ? params : cJSON_CreateObject());
    cJSON_AddStringToObject(v, "sha256", r->v.sha256);
    cJSON *sh = cJSON_AddObjectToObject(o, "shape");
    if (tb_problem_info_is_attention(&r->p)) {   /* version 2: the op, its token and fields */
        char tok[96];
        tb_problem_info_text(&r->p, tok, sizeof tok);
        cJSON_AddStringToObject(sh, "op", r->p.op);
        cJSON_AddStringToObject(sh, "token", tok);
        cJSON_AddNumberToObject(sh, "batch", (double)r->p.batch);
        cJSON_AddNumberToObject(sh, "heads", (double)r->p.heads);
        cJSON_AddNumberToObject(sh, "heads_kv", (double)r->p.heads_kv);
        cJSON_AddNumberToObject(sh, "seq_q", (double)r->p.seq_q);
        cJSON_AddNumberToObject(sh, "seq_k", (double)r->p.seq_k);
        cJSON_AddNumberToObject(sh, "head_dim", (double)r->p.head_dim);
        cJSON_AddBoolToObject(sh, "causal", r->p.causal != 0);
        cJSON_AddNumberToObject(sh, "scale", r->p.softmax_scale);
    } else {
        cJSON_AddNumberToObject(sh, "m", (double)r->p.m);
        cJSON_AddNumberToObject(sh, "n", (double)r->p.n);
        cJSON_AddNumberToObject(sh, "k", (double)r->p.k);
        cJSON_AddNumberToObject(sh, "batch", (double)r->p.batch);
    }
    cJSON_AddStringToObject(sh, "layouts", r->p.layouts);
    cJSON_AddStringToObject(sh, "dtypes", r->p.dtypes);
    if (r->p.label[0]) cJSON_AddStringToObject(sh, "label", r->p.label);
    cJSON_AddStringToObject(o, "status", tb_status_name(r->m.status));
    cJSON *val = cJSON_AddObjectToObject(o, "validation");
    cJSON_AddStringToObject(val, "disposition", tb_disposition_name(r->m.disposition));
    cJSON_AddStringToObject(val, "rule", r->m.rule);
    if (r->m.status != TB_STATUS_OK || r->m.disposition != TB_DISP_PASSED) {
        cJSON_AddNullToObject(o, "timing");
        return o;
    }
    double *ms = NULL, *clk = NULL, lo = NAN, hi = NAN;
    size_t n = 0;
    *rc = tb_store_measurement_samples(s, &r->m, &ms, &clk, &n, msg, len);
    free(clk);
    if (*rc == TB_OK && n && median_interval(ms, n, (uint64_t)r->m.id, &lo, &hi))
        *rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
    free(ms);
    cJSON *t = cJSON_AddObjectToObject(o, "timing");
    cJSON_AddStringToObject(t, "method", r->m.method);
    add_num(t, "median_ms", r->m.median_ms);
    add_num(t, "median_lo_ms", lo);
    add_num(t, "median_hi_ms", hi);
    cJSON_AddNumberToObject(t, "n_samples", r->m.n_samples);
    add_num(t, "sm_clock_mhz", r->m.clock_mhz);
    add_num(t, "energy_j_per_launch", extra_num(r->m.extra_json, "energy_j_per_launch"));
    return o;
}

int tb_submission_write(tb_store *s, int64_t run_id, FILE *out, char *msg, size_t len)
{
    tb_run_info *run = calloc(1, sizeof *run);
    if (!run) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    tb_environment env;
    int have_env = 0;
    tb_result_row *rows = NULL;
    size_t nrows = 0;
    cJSON *root = NULL;
    int rc = tb_store_run_get(s, run_id, run, msg, len);
    if (rc == TB_OK && !strcmp(run->status, "planned"))   /* sweep --plan-only: nothing measured */
        rc = tb_fail(msg, len, TB_EDB, "run %lld of '%s' is a plan, not a measurement: measure it "
                     "with tilebench sweep --db %s --resume %lld first", (long long)run_id,
                     tb_store_path(s), tb_store_path(s), (long long)run_id);
    if (rc == TB_OK) rc = tb_store_find_environment(s, run_id, &env, &have_env, msg, len);
    if (rc == TB_OK && !have_env)
        rc = tb_fail(msg, len, TB_EDB, "run %lld of '%s' records no environment: a submission needs "
                     "the GPU it ran on", (long long)run_id, tb_store_path(s));
    if (rc == TB_OK) rc = tb_store_results(s, run_id, &rows, &nrows, msg, len);
    if (rc == TB_OK) {
        root = cJSON_CreateObject();
        cJSON_AddStringToObject(root, "format", TB_SUBMISSION_FORMAT);
        int attn = 0;
        for (size_t i = 0; i < nrows; i++) attn |= tb_problem_info_is_attention(&rows[i].p);
        cJSON_AddNumberToObject(root, "version", attn ? TB_SUBMISSION_VERSION_ATTN : TB_SUBMISSION_VERSION);
        cJSON *tb = cJSON_AddObjectToObject(root, "tilebench");
        cJSON_AddStringToObject(tb, "version", run->version);
        cJSON_AddStringToObject(tb, "git_sha", run->git_sha);
        cJSON_AddStringToObject(root, "run_started_at", run->started_at);
        cJSON *e = environment(&env, msg, len);
        if (!e) rc = TB_ENOMEM;
        else cJSON_AddItemToObject(root, "environment", e);
        cJSON_AddItemToObject(root, "options", options(run));
        cJSON *rs = cJSON_AddArrayToObject(root, "results");
        for (size_t i = 0; rc == TB_OK && i < nrows; i++)
            cJSON_AddItemToArray(rs, result(s, &rows[i], &rc, msg, len));
    }
    if (rc == TB_OK) {
        char *txt = cJSON_Print(root);
        size_t cap = txt ? strlen(txt) * 3 + 1 : 0;
        char *clean = txt ? malloc(cap) : NULL;
        if (!clean) rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
        else if (fputs(tb_text_utf8_clean(txt, clean, cap), out) == EOF || fputc('\n', out) == EOF ||
                 fflush(out) == EOF)
            rc = tb_fail(msg, len, TB_EIO, "cannot write the submission: %s", strerror(errno));
        free(clean);
        cJSON_free(txt);
    }
    cJSON_Delete(root);
    free(rows);
    free(run);
    return rc;
}
