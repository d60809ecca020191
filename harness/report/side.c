/* side.c - one side of a comparison, from a run or a baseline file, and the baseline file
 * itself (see side.h). */
#define _GNU_SOURCE
#include "report/side.h"
#include "common/stats.h"
#include "common/problem.h"
#include "common/tb.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tb_side_shape_key(const tb_problem_info *p, char *buf, size_t len)
{
    if (tb_problem_info_is_attention(p)) {   /* its token and layout: "1x32x4096x4096x128 bhsd" */
        char shape[128];
        tb_problem_info_text(p, shape, sizeof shape);
        snprintf(buf, len, "%s %s", shape, p->layouts);
        return;
    }
    char lay[3] = { p->layouts[0], p->layouts[1] ? p->layouts[1] : 0, 0 };
    if (p->batch > 1)
        snprintf(buf, len, "%lldx%lldx%lldx%lld %s", (long long)p->m, (long long)p->n,
                 (long long)p->k, (long long)p->batch, lay);
    else
        snprintf(buf, len, "%lldx%lldx%lld %s", (long long)p->m, (long long)p->n, (long long)p->k, lay);
}

void tb_side_free(tb_side *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) free(s->e[i].ms);
    free(s->e);
    memset(s, 0, sizeof *s);
}

static tb_side_entry *push(tb_side *s)
{
    tb_side_entry *e = realloc(s->e, (s->n + 1) * sizeof *e);
    if (!e) return NULL;
    s->e = e;
    memset(&s->e[s->n], 0, sizeof s->e[s->n]);
    return &s->e[s->n++];
}

const tb_side_entry *tb_side_find(const tb_side *s, const char *variant, const char *shape)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->e[i].variant, variant) && !strcmp(s->e[i].shape, shape)) return &s->e[i];
    return NULL;
}

/* The namespace of a stored name ("base" of "base:cublaslt"; "" for none) and the rest. */
static const char *split_ns(const char *name, char *ns, size_t nl)
{
    const char *colon = strchr(name, ':');
    size_t l = colon ? (size_t)(colon - name) : 0;
    if (!colon || l >= nl) { ns[0] = 0; return name; }
    memcpy(ns, name, l);
    ns[l] = 0;
    return colon + 1;
}

int tb_side_from_run(tb_store *st, int64_t run_id, const char *ns, const char *db_label,
                     tb_side *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    snprintf(out->what, sizeof out->what, "run %lld of %s", (long long)run_id, db_label);
    tb_run_info *run = calloc(1, sizeof *run);
    if (!run) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    int rc = tb_store_run_get(st, run_id, run, msg, len);
    if (rc == TB_OK) snprintf(out->git_sha, sizeof out->git_sha, "%s", run->git_sha);
    free(run);
    if (rc == TB_OK) rc = tb_store_find_environment(st, run_id, &out->env, &out->have_env, msg, len);
    tb_result_row *rows = NULL;
    size_t nrows = 0;
    if (rc == TB_OK) rc = tb_store_results(st, run_id, &rows, &nrows, msg, len);
    for (size_t i = 0; rc == TB_OK && i < nrows; i++) {
        char rns[16];
        const char *own = split_ns(rows[i].v.name, rns, sizeof rns);
        if (ns && strcmp(ns, rns)) continue;
        tb_side_entry *e = push(out);
        if (!e) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); break; }
        const tb_measurement *m = &rows[i].m;
        snprintf(e->variant, sizeof e->variant, "%s", ns ? own : rows[i].v.name);
        tb_side_shape_key(&rows[i].p, e->shape, sizeof e->shape);
        e->m = rows[i].p.m; e->n = rows[i].p.n; e->k = rows[i].p.k; e->batch = rows[i].p.batch;
        snprintf(e->layouts, sizeof e->layouts, "%.*s",
                 tb_problem_info_is_attention(&rows[i].p) ? 4 : 2, rows[i].p.layouts);
        e->status = m->status;
        e->disposition = m->disposition;
        snprintf(e->rule, sizeof e->rule, "%s", m->rule);
        snprintf(e->reason, sizeof e->reason, "%s", m->reason);
        snprintf(e->describe, sizeof e->describe, "%s", m->describe);
        e->median_ms = m->median_ms;
        e->clock_mhz = m->clock_mhz;
        e->n_total = m->n_samples > 0 ? (size_t)m->n_samples : 0;
        if (m->status == TB_STATUS_OK && m->disposition == TB_DISP_PASSED) {
            double *clk = NULL;
            rc = tb_store_measurement_samples(st, m, &e->ms, &clk, &e->n_ms, msg, len);
            free(clk);
        }
    }
    free(rows);
    if (rc) tb_side_free(out);
    return rc;
}

/* Six significant digits: the samples' own resolution is coarser (events: 0.5 us). */
static double round6(double v)
{
    char b[32];
    snprintf(b, sizeof b, "%.6g", v);
    return strtod(b, NULL);
}

static cJSON *env_json(const tb_environment *e)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "gpu_name", e->gpu_name);
    cJSON_AddStringToObject(o, "gpu_uuid", e->gpu_uuid);
    cJSON_AddNumberToObject(o, "cc_major", e->cc_major);
    cJSON_AddNumberToObject(o, "cc_minor", e->cc_minor);
    cJSON_AddNumberToObject(o, "sm_count", e->sm_count);
    cJSON_AddStringToObject(o, "driver_version", e->driver_version);
    cJSON_AddNumberToObject(o, "cuda_driver_version", e->cuda_driver_version);
    cJSON_AddNumberToObject(o, "cuda_runtime_version", e->cuda_runtime_version);
    cJSON_AddNumberToObject(o, "cublas_version", e->cublas_version);
    cJSON_AddNumberToObject(o, "power_limit_mw", e->power_limit_mw);
    cJSON_AddNumberToObject(o, "sm_clock_max_mhz", e->sm_clock_max_mhz);
    cJSON_AddStringToObject(o, "hostname", e->hostname);
    return o;
}

int tb_side_write_baseline(const tb_side *s, FILE *f, char *msg, size_t len)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", TB_BASELINE_FORMAT);
    cJSON_AddNumberToObject(root, "version", TB_BASELINE_VERSION);
    cJSON_AddStringToObject(root, "tilebench", TB_VERSION);
    cJSON_AddStringToObject(root, "source", s->what);
    cJSON_AddStringToObject(root, "git_sha", s->git_sha);
    if (s->have_env) cJSON_AddItemToObject(root, "environment", env_json(&s->env));
    else cJSON_AddNullToObject(root, "environment");
    cJSON *rs = cJSON_AddArrayToObject(root, "results");
    for (size_t i = 0; i < s->n; i++) {
        const tb_side_entry *e = &s->e[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "variant", e->variant);
        cJSON_AddStringToObject(o, "shape", e->shape);
        cJSON_AddNumberToObject(o, "m", (double)e->m);
        cJSON_AddNumberToObject(o, "n", (double)e->n);
        cJSON_AddNumberToObject(o, "k", (double)e->k);
        cJSON_AddNumberToObject(o, "batch", (double)e->batch);
        cJSON_AddStringToObject(o, "layouts", e->layouts);
        cJSON_AddStringToObject(o, "status", tb_status_name(e->status));
        cJSON_AddStringToObject(o, "disposition", tb_disposition_name(e->disposition));
        cJSON_AddStringToObject(o, "rule", e->rule);
        cJSON_AddStringToObject(o, "reason", e->reason);
        cJSON_AddStringToObject(o, "describe", e->describe);
        if (isfinite(e->median_ms)) cJSON_AddNumberToObject(o, "median_ms", round6(e->median_ms));
        else cJSON_AddNullToObject(o, "median_ms");
        if (isfinite(e->clock_mhz)) cJSON_AddNumberToObject(o, "clock_mhz", round6(e->clock_mhz));
        else cJSON_AddNullToObject(o, "clock_mhz");
        cJSON_AddNumberToObject(o, "n_samples", (double)e->n_total);
        /* at most TB_BASELINE_MAX_SAMPLES: beyond, evenly spaced order statistics, which keep
         * the distribution's shape and bootstrap as a smaller sample (a wider interval) */
        cJSON *a = cJSON_AddArrayToObject(o, "samples_ms");
        if (e->n_ms) {
            double *c = malloc(e->n_ms * sizeof *c);
            if (!c) { cJSON_Delete(root); return tb_fail(msg, len, TB_ENOMEM, "out of memory"); }
            memcpy(c, e->ms, e->n_ms * sizeof *c);
            size_t keep = e->n_ms;
            if (keep > TB_BASELINE_MAX_SAMPLES) {
                qsort(c, e->n_ms, sizeof *c, tb_cmp_double);
                keep = TB_BASELINE_MAX_SAMPLES;
            }
            for (size_t j = 0; j < keep; j++) {
                size_t at = keep == e->n_ms ? j : (size_t)llround((double)j * (double)(e->n_ms - 1) / (double)(keep - 1));
                cJSON_AddItemToArray(a, cJSON_CreateNumber(round6(c[at])));
            }
            free(c);
        }
        cJSON_AddItemToArray(rs, o);
    }
    char *txt = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!txt) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    size_t cap = strlen(txt) * 3 + 1;
    char *clean = malloc(cap);   /* a reason may carry bytes that are not UTF-8 */
    int bad = !clean || fputs(tb_text_utf8_clean(txt, clean, cap), f) < 0 || fputc('\n', f) == EOF;
    free(clean);
    cJSON_free(txt);
    return bad ? tb_fail(msg, len, TB_EIO, "cannot write the baseline: %s", strerror(errno)) : TB_OK;
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
static double jnum(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static void env_from_json(const cJSON *o, tb_environment *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->gpu_name, sizeof e->gpu_name, "%s", jstr(o, "gpu_name") ? jstr(o, "gpu_name") : "");
    snprintf(e->gpu_uuid, sizeof e->gpu_uuid, "%s", jstr(o, "gpu_uuid") ? jstr(o, "gpu_uuid") : "");
    snprintf(e->driver_version, sizeof e->driver_version, "%s",
             jstr(o, "driver_version") ? jstr(o, "driver_version") : "");
    snprintf(e->hostname, sizeof e->hostname, "%s", jstr(o, "hostname") ? jstr(o, "hostname") : "");
    e->cc_major = (int)jnum(o, "cc_major", -1);
    e->cc_minor = (int)jnum(o, "cc_minor", -1);
    e->sm_count = (int)jnum(o, "sm_count", -1);
    e->cuda_driver_version = (int)jnum(o, "cuda_driver_version", -1);
    e->cuda_runtime_version = (int)jnum(o, "cuda_runtime_version", -1);
    e->cublas_version = (int)jnum(o, "cublas_version", -1);
    e->power_limit_mw = (int)jnum(o, "power_limit_mw", -1);
    e->sm_clock_max_mhz = (int)jnum(o, "sm_clock_max_mhz", -1);
}

#define BASELINE_MAX_BYTES (64u << 20)

static int read_all(const char *path, char **out, char *msg, size_t len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tb_fail(msg, len, TB_EUSAGE, "cannot read baseline '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (b && n + 1 >= cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
        if (!b) { fclose(f); return tb_fail(msg, len, TB_ENOMEM, "out of memory"); }
        size_t r = fread(b + n, 1, cap - n - 1, f);
        if (r == 0) break;
        n += r;
        if (n > BASELINE_MAX_BYTES) {
            free(b);
            fclose(f);
            return tb_fail(msg, len, TB_EUSAGE, "baseline '%s' is over %u MiB: not a baseline",
                           path, BASELINE_MAX_BYTES >> 20);
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) { free(b); return tb_fail(msg, len, TB_EIO, "cannot read baseline '%s'", path); }
    b[n] = 0;
    *out = b;
    return TB_OK;
}

int tb_side_from_baseline(const char *path, tb_side *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    char *txt = NULL;
    int rc = read_all(path, &txt, msg, len);
    if (rc) return rc;
    cJSON *root = cJSON_Parse(txt);
    free(txt);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return tb_fail(msg, len, TB_EUSAGE, "baseline '%s' is not JSON", path);
    }
    const char *fmt = jstr(root, "format");
    double ver = jnum(root, "version", -1);
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(root, "results");
    if (!fmt || strcmp(fmt, TB_BASELINE_FORMAT))
        rc = tb_fail(msg, len, TB_EUSAGE, "'%s' is not a tilebench baseline (format '%s')", path,
                     fmt ? fmt : "missing");
    else if (ver != TB_BASELINE_VERSION)
        rc = tb_fail(msg, len, TB_EUSAGE, "baseline '%s' has version %g; this tilebench reads "
                     "version %d", path, ver, TB_BASELINE_VERSION);
    else if (!cJSON_IsArray(rs))
        rc = tb_fail(msg, len, TB_EUSAGE, "baseline '%s' has no results array", path);
    snprintf(out->what, sizeof out->what, "baseline %s", path);
    const cJSON *env = cJSON_GetObjectItemCaseSensitive(root, "environment");
    if (rc == TB_OK && cJSON_IsObject(env)) { env_from_json(env, &out->env); out->have_env = 1; }
    if (rc == TB_OK && jstr(root, "git_sha"))
        snprintf(out->git_sha, sizeof out->git_sha, "%s", jstr(root, "git_sha"));
    const cJSON *it;
    size_t idx = 0;
    cJSON_ArrayForEach(it, rs) {
        if (rc) break;
        const char *v = jstr(it, "variant"), *sh = jstr(it, "shape"), *st = jstr(it, "status"),
                   *di = jstr(it, "disposition");
        tb_status s;
        tb_disposition d;
        if (!v || !sh || !st || !di || tb_status_parse(st, &s) || tb_disposition_parse(di, &d)) {
            rc = tb_fail(msg, len, TB_EUSAGE, "baseline '%s': result %zu lacks variant, shape, "
                         "status or disposition", path, idx);
            break;
        }
        tb_side_entry *e = push(out);
        if (!e) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); break; }
        snprintf(e->variant, sizeof e->variant, "%s", v);
        snprintf(e->shape, sizeof e->shape, "%s", sh);
        e->m = (int64_t)jnum(it, "m", 0); e->n = (int64_t)jnum(it, "n", 0);
        e->k = (int64_t)jnum(it, "k", 0); e->batch = (int64_t)jnum(it, "batch", 1);
        snprintf(e->layouts, sizeof e->layouts, "%s", jstr(it, "layouts") ? jstr(it, "layouts") : "");
        e->status = s;
        e->disposition = d;
        snprintf(e->rule, sizeof e->rule, "%s", jstr(it, "rule") ? jstr(it, "rule") : "");
        snprintf(e->reason, sizeof e->reason, "%s", jstr(it, "reason") ? jstr(it, "reason") : "");
        snprintf(e->describe, sizeof e->describe, "%s", jstr(it, "describe") ? jstr(it, "describe") : "");
        e->median_ms = jnum(it, "median_ms", NAN);
        e->clock_mhz = jnum(it, "clock_mhz", NAN);
        e->n_total = (size_t)jnum(it, "n_samples", 0);
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(it, "samples_ms");
        int na = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
        if (na > 0) {
            e->ms = malloc((size_t)na * sizeof *e->ms);
            if (!e->ms) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); break; }
            const cJSON *x;
            cJSON_ArrayForEach(x, a) {
                if (!cJSON_IsNumber(x) || !(x->valuedouble > 0) || !isfinite(x->valuedouble)) {
                    rc = tb_fail(msg, len, TB_EUSAGE, "baseline '%s': result %zu has a sample "
                                 "that is not a positive time", path, idx);
                    break;
                }
                e->ms[e->n_ms++] = x->valuedouble;
            }
        }
        idx++;
    }
    cJSON_Delete(root);
    if (rc) tb_side_free(out);
    return rc;
}

int tb_side_env_differs(const tb_environment *a, const tb_environment *b, char *why, size_t len)
{
    if (strcmp(a->gpu_name, b->gpu_name))
        return snprintf(why, len, "GPU '%s' vs '%s'", a->gpu_name, b->gpu_name), 1;
    if (strcmp(a->driver_version, b->driver_version))
        return snprintf(why, len, "driver %s vs %s", a->driver_version, b->driver_version), 1;
    if (a->cuda_runtime_version != b->cuda_runtime_version)
        return snprintf(why, len, "CUDA runtime %d vs %d", a->cuda_runtime_version,
                        b->cuda_runtime_version), 1;
    if (a->cublas_version != b->cublas_version)
        return snprintf(why, len, "cuBLAS %d vs %d", a->cublas_version, b->cublas_version), 1;
    if (a->power_limit_mw != b->power_limit_mw)
        return snprintf(why, len, "power limit %d W vs %d W", a->power_limit_mw / 1000,
                        b->power_limit_mw / 1000), 1;
    if (why && len) why[0] = 0;
    return 0;
}
