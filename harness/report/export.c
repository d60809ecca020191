/* export.c - a run's results as JSON (through cJSON) or CSV (see export.h).
 *
 * Owns the JSON document's layout (a problem's object per op: a GEMM's as it always was, an
 * attention problem's own fields) and the entry; the CSV's columns are export_csv.c's. Reads
 * everything through store.h (never SQL) and writes to the caller's FILE*; it neither opens
 * nor closes files and never prints anywhere else.
 *
 * One rule runs through both formats: a value that does not apply (NaN double, -1 integer,
 * "" string in the records) is JSON null and an empty CSV cell, never 0.
 */
#include "report/export.h"
#include "report/export_int.h"
#include "common/problem.h"
#include "report/roofline.h"
#include "common/tb.h"
#include "common/text.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON --------------------------------------------------------------------------------
 * Builders record an allocation failure in the context and carry on, so the document code
 * reads as its layout; the failure is reported once at the end. */
typedef struct jctx {
    int oom;
} jctx;

static void jadd(jctx *j, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !obj || !cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        j->oom = 1;
    }
}

/* A double as the shortest text that reads back bit for bit; null when not finite.
 * (cJSON's own printer accepts a 1-ulp difference, so the number goes in as raw text.) */
static cJSON *jnum(double v)
{
    char buf[64];
    if (!isfinite(v)) return cJSON_CreateNull();
    tbx_fmt_real(buf, sizeof buf, v);
    return cJSON_CreateRaw(buf);
}

static void jreal(jctx *j, cJSON *o, const char *key, double v)
{
    jadd(j, o, key, jnum(v));
}

static void jint(jctx *j, cJSON *o, const char *key, int64_t v)
{
    jadd(j, o, key, cJSON_CreateNumber((double)v));
}

static void jopt_int(jctx *j, cJSON *o, const char *key, int64_t v)
{
    jadd(j, o, key, v == -1 ? cJSON_CreateNull() : cJSON_CreateNumber((double)v));
}

static void jstr(jctx *j, cJSON *o, const char *key, const char *s)
{
    jadd(j, o, key, s[0] ? cJSON_CreateString(s) : cJSON_CreateNull());
}

/* A stored JSON text, embedded parsed; kept as a string if it does not parse. */
static void jtext(jctx *j, cJSON *o, const char *key, const char *text)
{
    if (!text[0]) {
        jadd(j, o, key, cJSON_CreateNull());
        return;
    }
    cJSON *v = cJSON_Parse(text);
    jadd(j, o, key, v ? v : cJSON_CreateString(text));
}

static cJSON *json_run(jctx *j, const tb_run_info *r)
{
    cJSON *o = cJSON_CreateObject();
    jint(j, o, "id", r->id);
    jstr(j, o, "started_at", r->started_at);
    jstr(j, o, "ended_at", r->ended_at);
    jstr(j, o, "command_line", r->command_line);
    jstr(j, o, "git_sha", r->git_sha);
    jstr(j, o, "version", r->version);
    jstr(j, o, "status", r->status);
    jtext(j, o, "options", r->options_json);
    return o;
}

static cJSON *json_environment(jctx *j, const tb_environment *e)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < tb_env_nfields; i++) {
        const tb_env_field *f = &tb_env_fields[i];
        if (f->kind == 's') jstr(j, o, f->key, tb_env_str(e, f));
        else jopt_int(j, o, f->key, tb_env_num(e, f));
    }
    jtext(j, o, "extra", e->extra_json);
    return o;
}

static cJSON *json_array(jctx *j, const double *v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++) {
        cJSON *x = jnum(v[i]);
        if (!x || !cJSON_AddItemToArray(a, x)) {
            cJSON_Delete(x);
            j->oom = 1;
        }
    }
    if (!a) j->oom = 1;
    return a;
}

static int any_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) return 1;
    return 0;
}

/* A GEMM problem (record.h), as every export before attention wrote it. */
static cJSON *json_gemm(jctx *j, const tb_problem_info *q)
{
    cJSON *p = cJSON_CreateObject();
    jint(j, p, "id", q->id);
    jstr(j, p, "op", q->op);
    jint(j, p, "m", q->m);
    jint(j, p, "n", q->n);
    jint(j, p, "k", q->k);
    jint(j, p, "batch", q->batch);
    jstr(j, p, "dtypes", q->dtypes);
    jstr(j, p, "layouts", q->layouts);
    jint(j, p, "lda", q->lda);
    jint(j, p, "ldb", q->ldb);
    jint(j, p, "ldc", q->ldc);
    jint(j, p, "ldd", q->ldd);
    jreal(j, p, "alpha", q->alpha);
    jreal(j, p, "beta", q->beta);
    if (q->scale_a > 0 || q->scale_b > 0) {   /* FP8 problems only (variant.h, growth 1) */
        jreal(j, p, "scale_a", q->scale_a);
        jreal(j, p, "scale_b", q->scale_b);
    }
    jstr(j, p, "label", q->label);
    return p;
}

/* An attention problem (record.h): its op's fields only, its shape as its token. */
static cJSON *json_attention(jctx *j, const tb_problem_info *q)
{
    char shape[128];
    tb_problem_info_text(q, shape, sizeof shape);
    cJSON *p = cJSON_CreateObject();
    jint(j, p, "id", q->id);
    jstr(j, p, "op", q->op);
    jstr(j, p, "shape", shape);
    jint(j, p, "batch", q->batch);
    jint(j, p, "heads", q->heads);
    jint(j, p, "heads_kv", q->heads_kv);
    jint(j, p, "seq_q", q->seq_q);
    jint(j, p, "seq_k", q->seq_k);
    jint(j, p, "head_dim", q->head_dim);
    jadd(j, p, "causal", cJSON_CreateBool(q->causal != 0));
    jreal(j, p, "softmax_scale", q->softmax_scale);
    jstr(j, p, "dtypes", q->dtypes);
    jstr(j, p, "layout", q->layouts);
    jstr(j, p, "label", q->label);
    return p;
}

static cJSON *json_result(jctx *j, const tb_result_row *r, const double *ms,
                          const double *clk, size_t n)
{
    const tb_measurement *m = &r->m;
    cJSON *o = cJSON_CreateObject();
    jint(j, o, "id", m->id);

    cJSON *v = cJSON_CreateObject();
    jstr(j, v, "name", r->v.name);
    jstr(j, v, "family", r->v.family);
    jtext(j, v, "params", r->v.params_json);
    jstr(j, v, "sass", r->v.sass);
    jstr(j, v, "file", r->v.file);
    jstr(j, v, "sha256", r->v.sha256);
    jadd(j, o, "variant", v);

    jadd(j, o, "problem", tb_problem_info_is_attention(&r->p) ? json_attention(j, &r->p)
                                                               : json_gemm(j, &r->p));

    jadd(j, o, "status", cJSON_CreateString(tb_status_name(m->status)));
    jadd(j, o, "disposition", cJSON_CreateString(tb_disposition_name(m->disposition)));
    jstr(j, o, "reason", m->reason);
    jstr(j, o, "rule", m->rule);

    cJSON *val = cJSON_CreateObject();
    jopt_int(j, val, "trials", m->trials);
    jreal(j, val, "max_abs_err", m->max_abs_err);
    jreal(j, val, "rel_fro_err", m->rel_fro_err);
    jopt_int(j, val, "n_bad", m->n_bad);
    jopt_int(j, val, "n_nonfinite", m->n_nonfinite);
    jreal(j, val, "atol", m->atol);
    jreal(j, val, "rtol", m->rtol);
    jadd(j, o, "validation", val);

    cJSON *t = cJSON_CreateObject();
    jstr(j, t, "method", m->method);
    jstr(j, t, "stop_reason", m->stop_reason);
    jopt_int(j, t, "n_samples", m->n_samples);
    jopt_int(j, t, "warmup", m->warmup);
    jreal(j, t, "median_ms", m->median_ms);
    jreal(j, t, "mean_ms", m->mean_ms);
    jreal(j, t, "stdev_ms", m->stdev_ms);
    jreal(j, t, "min_ms", m->min_ms);
    jreal(j, t, "max_ms", m->max_ms);
    jreal(j, t, "rse", m->rse);
    jreal(j, t, "clock_mhz", m->clock_mhz);
    jreal(j, t, "first_launch_ms", m->first_launch_ms);
    jadd(j, t, "samples_ms", json_array(j, ms, n));
    jadd(j, t, "samples_clock_mhz",
         any_finite(clk, n) ? json_array(j, clk, n) : cJSON_CreateNull());
    jadd(j, o, "timing", t);

    jreal(j, o, "tflops", m->tflops);
    jopt_int(j, o, "workspace_bytes", m->workspace_bytes);
    jstr(j, o, "describe", m->describe);
    jtext(j, o, "extra", m->extra_json);
    return o;
}

/* The figures derived from a result's DRAM counters (roofline.c), or null when its metrics
 * hold no DRAM counter. cal: the newest calibration of the run's GPU, NULL when none. */
static cJSON *json_derived(jctx *j, const tb_result_row *r, const tb_metric *mt, size_t nm,
                           const tb_calibration *cal)
{
    int any = 0;
    for (size_t i = 0; i < nm; i++)
        if (!strcmp(mt[i].name, TB_ROOFLINE_READ) || !strcmp(mt[i].name, TB_ROOFLINE_WRITE)) any = 1;
    if (!any) return cJSON_CreateNull();
    tb_roofline_in in;
    tb_roofline rf;
    char why[TB_MSG_LEN];
    tb_roofline_inputs(r, mt, nm, cal, &in);
    cJSON *o = cJSON_CreateObject();
    if (tb_roofline_compute(&in, &rf, why, sizeof why) != TB_OK) {
        jadd(j, o, "arithmetic_intensity", cJSON_CreateNull());
        jadd(j, o, "why_not", cJSON_CreateString(why));
        return o;
    }
    jreal(j, o, "flops", in.flops);
    jreal(j, o, "dram_bytes", rf.bytes);
    jreal(j, o, "arithmetic_intensity", rf.intensity);   /* FLOP/byte */
    jreal(j, o, "dram_gbps", rf.dram_gbps);              /* achieved, at the median time */
    jreal(j, o, "achieved_tflops", rf.tflops);
    jreal(j, o, "compulsory_bytes", rf.min_bytes);           /* each operand at its type's width */
    jreal(j, o, "compulsory_intensity", rf.min_intensity);   /* the most any kernel can have */
    if (!rf.have_roof) {
        jadd(j, o, "roofline", cJSON_CreateNull());
        jadd(j, o, "why_not", cJSON_CreateString(
            !cal ? "no calibration for this GPU: run tilebench doctor --calibrate"
            : in.fp8 && !(cal->fp8_tflops > 0) ? "the calibration of this GPU has no FP8 tensor "
                                                 "ceiling: run tilebench doctor --calibrate again"
            : "not timed"));
        return o;
    }
    cJSON *roof = cJSON_CreateObject();
    jreal(j, roof, "attainable_tflops", rf.attainable_tflops);
    jreal(j, roof, "position", rf.position);
    jadd(j, roof, "bound", cJSON_CreateString(rf.bound));
    jreal(j, roof, "ridge_intensity", rf.ridge);
    jadd(j, roof, "compulsory_bound", cJSON_CreateString(rf.min_bound));
    jadd(j, roof, "tensor_ceiling", cJSON_CreateString(in.fp8 ? "fp8" : "bf16"));
    cJSON *c = cJSON_CreateObject();
    jadd(j, c, "source", cJSON_CreateString("measured by tilebench doctor --calibrate, not datasheet numbers"));
    jint(j, c, "calibration_id", cal->id);
    jstr(j, c, "created_at", cal->created_at);
    jreal(j, c, "dram_gbps", cal->dram_gbps);
    jreal(j, c, "gemm_tflops", cal->gemm_tflops);
    jstr(j, c, "gemm_shape", cal->gemm_shape);
    jreal(j, c, "sm_clock_mhz", cal->sm_clock_mhz);
    jreal(j, c, "fp8_tflops", cal->fp8_tflops > 0 ? cal->fp8_tflops : NAN);
    jstr(j, c, "fp8_shape", cal->fp8_shape);
    jreal(j, c, "fp8_sm_clock_mhz", cal->fp8_sm_clock_mhz > 0 ? cal->fp8_sm_clock_mhz : NAN);
    jstr(j, c, "method", cal->method);
    jadd(j, roof, "ceilings", c);
    jadd(j, o, "roofline", roof);
    return o;
}

/* Writes text, with any byte that is not valid UTF-8 replaced by U+FFFD: a variant's output
 * or an old database may hold such bytes, and a JSON or CSV file must stay valid UTF-8. In
 * JSON they can only sit inside strings (its syntax is ASCII), so the document stays valid. */
static int write_text(FILE *out, const char *text, const char *what, char *msg, size_t len)
{
    errno = 0;
    char *clean = NULL;
    if (!tb_text_utf8_valid(text)) {
        size_t cap = strlen(text) * 3 + 1;
        if (!(clean = malloc(cap))) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
        text = tb_text_utf8_clean(text, clean, cap);
    }
    int bad = fputs(text, out) == EOF || fflush(out) == EOF || ferror(out);
    free(clean);
    if (bad)
        return tb_fail(msg, len, TB_EIO, "cannot write the %s export: %s", what,
                       errno ? strerror(errno) : "write error");
    return TB_OK;
}

static int export_json(tb_store *s, const tb_run_info *run, const tb_result_row *rows,
                       size_t n, FILE *out, char *msg, size_t len)
{
    jctx j = {0};
    int rc = TB_OK;
    cJSON *root = cJSON_CreateObject();
    cJSON *tool = cJSON_CreateObject();
    jadd(&j, tool, "version", cJSON_CreateString(TB_VERSION));
    jint(&j, tool, "schema", TB_SCHEMA_VERSION);
    jadd(&j, root, "tilebench", tool);
    jadd(&j, root, "run", json_run(&j, run));

    tb_environment env;
    int found = 0;
    if ((rc = tb_store_find_environment(s, run->id, &env, &found, msg, len))) goto out;
    jadd(&j, root, "environment", found ? json_environment(&j, &env) : cJSON_CreateNull());
    tb_calibration cal;
    int have_cal = 0;
    if (found && (rc = tb_store_latest_calibration(s, env.gpu_uuid, &cal, &have_cal, msg, len)))
        goto out;

    cJSON *results = cJSON_CreateArray();
    jadd(&j, root, "results", results);
    for (size_t i = 0; i < n && !j.oom; i++) {
        double *ms = NULL, *clk = NULL;
        size_t ns = 0;
        if ((rc = tb_store_measurement_samples(s, &rows[i].m, &ms, &clk, &ns, msg, len))) goto out;
        cJSON *item = json_result(&j, &rows[i], ms, clk, ns);
        free(ms);
        free(clk);
        tb_metric *mt = NULL;
        size_t nm = 0;
        if ((rc = tb_store_metrics(s, rows[i].m.id, &mt, &nm, msg, len))) { cJSON_Delete(item); goto out; }
        if (item) {
            cJSON *ma = cJSON_CreateArray();
            for (size_t q = 0; q < nm && ma; q++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", mt[q].name);
                if (mt[q].available && !isnan(mt[q].value)) cJSON_AddNumberToObject(e, "value", mt[q].value);
                else cJSON_AddNullToObject(e, "value");
                cJSON_AddStringToObject(e, "unit", mt[q].unit);
                cJSON_AddBoolToObject(e, "available", mt[q].available);
                if (mt[q].reason[0]) cJSON_AddStringToObject(e, "reason", mt[q].reason);
                cJSON_AddItemToArray(ma, e);
            }
            jadd(&j, item, "metrics", ma);
            jadd(&j, item, "derived", json_derived(&j, &rows[i], mt, nm, have_cal ? &cal : NULL));
        }
        free(mt);
        if (!item || !results || !cJSON_AddItemToArray(results, item)) {
            cJSON_Delete(item);
            j.oom = 1;
        }
    }
    if (j.oom) {
        rc = tb_fail(msg, len, TB_ENOMEM, "cannot build the json export: out of memory");
        goto out;
    }
    char *text = cJSON_Print(root);
    if (!text) {
        rc = tb_fail(msg, len, TB_ENOMEM, "cannot print the json export: out of memory");
        goto out;
    }
    rc = write_text(out, text, "json", msg, len);
    if (rc == TB_OK) rc = write_text(out, "\n", "json", msg, len);
    cJSON_free(text);
out:
    cJSON_Delete(root);
    return rc;
}

/* ---- entry -------------------------------------------------------------------------------- */

/* The CSV carries no samples, but must not carry a damaged run either: every measurement's
 * samples are read once to check they are all there (the JSON path checks as it reads them). */
static int samples_whole(tb_store *s, const tb_result_row *rows, size_t n, char *msg, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        double *ms = NULL, *clk = NULL;
        size_t ns = 0;
        int rc = tb_store_measurement_samples(s, &rows[i].m, &ms, &clk, &ns, msg, len);
        free(ms);
        free(clk);
        if (rc) return rc;
    }
    return TB_OK;
}

int tb_export(tb_store *s, int64_t run_id, const char *format, FILE *out, char *msg,
              size_t len)
{
    int json = format && strcmp(format, "json") == 0;
    if (!json && !(format && strcmp(format, "csv") == 0))
        return tb_fail(msg, len, TB_EUSAGE, "unknown export format '%s' (json, csv)",
                       format ? format : "");
    tb_run_info *run = malloc(sizeof *run);
    if (!run) return tb_fail(msg, len, TB_ENOMEM, "cannot export: out of memory");
    tb_result_row *rows = NULL;
    size_t n = 0;
    int rc = tb_store_run_get(s, run_id, run, msg, len);
    if (rc == TB_OK) rc = tb_store_results(s, run_id, &rows, &n, msg, len);
    if (rc == TB_OK && !json) rc = samples_whole(s, rows, n, msg, len);
    if (rc == TB_OK)
        rc = json ? export_json(s, run, rows, n, out, msg, len)
                  : tbx_export_csv(rows, n, out, msg, len);
    free(rows);
    free(run);
    return rc;
}
