/* store_read.c - every reader of the store (see store.h; the invariants of the whole store
 * are in store_int.h): runs, the environment, variants, the joined results, samples, metrics,
 * the latest calibration. Maps rows to records: NULL reads back as NaN, -1 or "".
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* as in every file of the store */
#endif
#include "store/store_int.h"
#include "store/store.h"
#include "common/tb.h"

#include <sqlite3.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ------------------------------------------------------------------------ */

static int64_t col_opt_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

/* ---- runs --------------------------------------------------------------------------------- */

int tb_store_run_get(tb_store *s, int64_t run_id, tb_run_info *out, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_RUN_GET, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        memset(out, 0, sizeof *out);
        int c = 0;
        out->id = sqlite3_column_int64(st, c++);
        COL_TEXT(st, c++, out->started_at);
        COL_TEXT(st, c++, out->ended_at);
        COL_TEXT(st, c++, out->command_line);
        COL_TEXT(st, c++, out->git_sha);
        COL_TEXT(st, c++, out->version);
        COL_TEXT(st, c++, out->status);
        COL_TEXT(st, c++, out->options_json);
        COL_TEXT(st, c++, out->phases_json);
    } else if (step == SQLITE_DONE) {
        rc = tb_fail(msg, len, TB_EDB, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        rc = tbs_db_fail(s, msg, len, "read a run");
    }
    tbs_done(st);
    return rc;
}

int tb_store_run_latest(tb_store *s, int64_t *run_id, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_RUN_LATEST, &st, msg, len);
    if (rc) return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) *run_id = sqlite3_column_int64(st, 0);
    else if (step == SQLITE_DONE) rc = tb_fail(msg, len, TB_EDB, "no runs in '%s'", s->path);
    else rc = tbs_db_fail(s, msg, len, "read the runs");
    tbs_done(st);
    return rc;
}

/* ---- environment -------------------------------------------------------------------------- */

int tb_store_find_environment(tb_store *s, int64_t run_id, tb_environment *out, int *found,
                              char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_ENV_GET, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int step = sqlite3_step(st);
    *found = 0;
    if (step == SQLITE_ROW) {
        tb_environment *e = out;
        memset(e, 0, sizeof *e);
        int c = 0;
        COL_TEXT(st, c++, e->gpu_name);
        COL_TEXT(st, c++, e->gpu_uuid);
        COL_TEXT(st, c++, e->pci_bus_id);
        e->cc_major = (int)col_opt_int(st, c++);
        e->cc_minor = (int)col_opt_int(st, c++);
        e->sm_count = (int)col_opt_int(st, c++);
        e->l2_bytes = col_opt_int(st, c++);
        e->mem_bytes = col_opt_int(st, c++);
        e->sm_clock_max_mhz = (int)col_opt_int(st, c++);
        e->sm_clock_mhz = (int)col_opt_int(st, c++);
        e->mem_clock_mhz = (int)col_opt_int(st, c++);
        e->power_limit_mw = (int)col_opt_int(st, c++);
        COL_TEXT(st, c++, e->driver_version);
        e->cuda_driver_version = (int)col_opt_int(st, c++);
        e->cuda_runtime_version = (int)col_opt_int(st, c++);
        e->cublas_version = (int)col_opt_int(st, c++);
        e->cupti_version = (int)col_opt_int(st, c++);
        COL_TEXT(st, c++, e->hostname);
        COL_TEXT(st, c++, e->os);
        COL_TEXT(st, c++, e->extra_json);
        *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = tbs_db_fail(s, msg, len, "read the environment");
    }
    tbs_done(st);
    return rc;
}

int tb_store_get_environment(tb_store *s, int64_t run_id, tb_environment *out, char *msg,
                             size_t len)
{
    int found = 0;
    int rc = tb_store_find_environment(s, run_id, out, &found, msg, len);
    if (rc == TB_OK && !found)
        rc = tb_fail(msg, len, TB_EDB, "no environment for run %lld in '%s'",
                     (long long)run_id, s->path);
    return rc;
}

/* ---- variants ----------------------------------------------------------------------------- */

/* A variants row (id, name, family, params_json, sass, file, sha256, index) from column c
 * on into v (zeroed by the caller); returns the column after it. */
static int read_variant(sqlite3_stmt *st, int c, tb_variant_info *v)
{
    v->id = sqlite3_column_int64(st, c++);
    COL_TEXT(st, c++, v->name);
    COL_TEXT(st, c++, v->family);
    COL_TEXT(st, c++, v->params_json);
    COL_TEXT(st, c++, v->sass);
    COL_TEXT(st, c++, v->file);
    COL_TEXT(st, c++, v->sha256);
    v->index = (int)col_opt_int(st, c++);
    return c;
}

/* The next element of a growing array of rows (*arr holding cnt of *cap, each size bytes),
 * zeroed; NULL when memory runs out (*arr is then still valid). */
static void *next_row(void **arr, size_t *cap, size_t cnt, size_t size)
{
    if (cnt == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        void *na = realloc(*arr, ncap * size);
        if (!na) return NULL;
        *arr = na;
        *cap = ncap;
    }
    void *r = (char *)*arr + cnt * size;
    memset(r, 0, size);
    return r;
}

int tb_store_variants(tb_store *s, int64_t run_id, tb_variant_info **out, size_t *n, char *msg,
                      size_t len)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_VARIANTS, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    tb_variant_info *arr = NULL;
    size_t cnt = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        tb_variant_info *v = next_row((void **)&arr, &cap, cnt, sizeof *v);
        if (!v) {
            rc = tb_fail(msg, len, TB_ENOMEM, "cannot read the variants of '%s': out of "
                         "memory", s->path);
            break;
        }
        cnt++;
        read_variant(st, 0, v);
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "read the variants");
    tbs_done(st);
    if (rc) {
        free(arr);
        return rc;
    }
    *out = arr;
    *n = cnt;
    return TB_OK;
}

/* ---- measurements ------------------------------------------------------------------------- */

/* Reads the columns "id, run_id, variant_id, problem_id, " MEAS_TAIL from column c0 on.
 * Returns the next column, or -1 when a status or disposition name is unknown. */
static int read_measurement(sqlite3_stmt *st, int c0, tb_measurement *m)
{
    memset(m, 0, sizeof *m);
    int c = c0;
    m->id = sqlite3_column_int64(st, c++);
    m->run_id = sqlite3_column_int64(st, c++);
    m->variant_id = sqlite3_column_int64(st, c++);
    m->problem_id = sqlite3_column_int64(st, c++);
    int bad = tb_status_parse((const char *)sqlite3_column_text(st, c++), &m->status) != 0;
    bad |= tb_disposition_parse((const char *)sqlite3_column_text(st, c++), &m->disposition);
    COL_TEXT(st, c++, m->reason);
    COL_TEXT(st, c++, m->rule);
    m->trials = (int)col_opt_int(st, c++);
    m->max_abs_err = col_real(st, c++);
    m->rel_fro_err = col_real(st, c++);
    m->n_bad = col_opt_int(st, c++);
    m->n_nonfinite = col_opt_int(st, c++);
    m->atol = col_real(st, c++);
    m->rtol = col_real(st, c++);
    COL_TEXT(st, c++, m->method);
    COL_TEXT(st, c++, m->stop_reason);
    m->n_samples = (int)col_opt_int(st, c++);
    m->warmup = (int)col_opt_int(st, c++);
    m->median_ms = col_real(st, c++);
    m->mean_ms = col_real(st, c++);
    m->stdev_ms = col_real(st, c++);
    m->min_ms = col_real(st, c++);
    m->max_ms = col_real(st, c++);
    m->rse = col_real(st, c++);
    m->tflops = col_real(st, c++);
    m->clock_mhz = col_real(st, c++);
    m->first_launch_ms = col_real(st, c++);
    m->workspace_bytes = col_opt_int(st, c++);
    COL_TEXT(st, c++, m->describe);
    COL_TEXT(st, c++, m->extra_json);
    return bad ? -1 : c;
}

int tb_store_results(tb_store *s, int64_t run_id, tb_result_row **rows, size_t *n, char *msg,
                     size_t len)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_RESULTS, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    tb_result_row *arr = NULL;
    size_t cnt = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        tb_result_row *r = next_row((void **)&arr, &cap, cnt, sizeof *r);
        if (!r) {
            rc = tb_fail(msg, len, TB_ENOMEM,
                         "cannot read the results of '%s': out of memory", s->path);
            break;
        }
        cnt++;
        int c = read_measurement(st, 0, &r->m);
        if (c < 0) {
            rc = tb_fail(msg, len, TB_EDB,
                         "unknown status '%s' or disposition '%s' in measurement %lld of '%s'",
                         (const char *)sqlite3_column_text(st, 4),
                         (const char *)sqlite3_column_text(st, 5),
                         (long long)r->m.id, s->path);
            break;
        }
        c = read_variant(st, c, &r->v);
        tb_problem_info *p = &r->p;
        memset(p, 0, sizeof *p);
        p->id = sqlite3_column_int64(st, c++);
        COL_TEXT(st, c++, p->op);
        p->m = sqlite3_column_int64(st, c++);
        p->n = sqlite3_column_int64(st, c++);
        p->k = sqlite3_column_int64(st, c++);
        p->batch = sqlite3_column_int64(st, c++);
        COL_TEXT(st, c++, p->dtypes);
        COL_TEXT(st, c++, p->layouts);
        p->lda = sqlite3_column_int64(st, c++);
        p->ldb = sqlite3_column_int64(st, c++);
        p->ldc = sqlite3_column_int64(st, c++);
        p->ldd = sqlite3_column_int64(st, c++);
        p->alpha = sqlite3_column_double(st, c++);
        p->beta = sqlite3_column_double(st, c++);
        p->scale_a = sqlite3_column_double(st, c++);
        p->scale_b = sqlite3_column_double(st, c++);
        p->heads = sqlite3_column_int64(st, c++);
        p->heads_kv = sqlite3_column_int64(st, c++);
        p->seq_q = sqlite3_column_int64(st, c++);
        p->seq_k = sqlite3_column_int64(st, c++);
        p->head_dim = sqlite3_column_int64(st, c++);
        p->causal = sqlite3_column_int(st, c++);
        p->softmax_scale = sqlite3_column_double(st, c++);
        COL_TEXT(st, c++, p->label);
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "read the results");
    tbs_done(st);
    if (rc) {
        free(arr);
        return rc;
    }
    *rows = arr;
    *n = cnt;
    return TB_OK;
}

int tb_store_samples(tb_store *s, int64_t measurement_id, double **ms, double **clock_mhz,
                     size_t *n, char *msg, size_t len)
{
    *ms = NULL;
    if (clock_mhz) *clock_mhz = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_SAMPLES, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, measurement_id);
    double *a = NULL, *c = NULL;
    size_t cnt = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (cnt == cap) {
            size_t ncap = cap ? 2 * cap : 64;
            double *na = realloc(a, ncap * sizeof *na);
            if (na) a = na;
            double *nc = na ? realloc(c, ncap * sizeof *nc) : NULL;
            if (nc) c = nc;
            if (!na || !nc) {
                rc = tb_fail(msg, len, TB_ENOMEM,
                             "cannot read the samples of '%s': out of memory", s->path);
                break;
            }
            cap = ncap;
        }
        a[cnt] = col_real(st, 0);
        c[cnt] = col_real(st, 1);
        cnt++;
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "read the samples");
    tbs_done(st);
    if (rc || cnt == 0) {
        free(a);
        free(c);
        return rc;
    }
    *ms = a;
    if (clock_mhz) *clock_mhz = c;
    else free(c);
    *n = cnt;
    return TB_OK;
}

int tb_store_metrics(tb_store *s, int64_t measurement_id, tb_metric **out, size_t *n,
                     char *msg, size_t len)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_METRICS, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, measurement_id);
    tb_metric *a = NULL;
    size_t cnt = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        tb_metric *x = next_row((void **)&a, &cap, cnt, sizeof *x);
        if (!x) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory reading metrics"); break; }
        cnt++;
        tbs_col_text(st, 0, x->name, sizeof x->name);
        x->value = col_real(st, 1);
        tbs_col_text(st, 2, x->unit, sizeof x->unit);
        x->available = sqlite3_column_int(st, 3);
        tbs_col_text(st, 4, x->reason, sizeof x->reason);
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "read the metrics");
    tbs_done(st);
    if (rc || cnt == 0) { free(a); return rc; }
    *out = a;
    *n = cnt;
    return TB_OK;
}

/* ---- history: one variant and problem across runs ------------------------------------------ */

int tb_store_history(tb_store *s, const char *sha256, const char *name, int64_t problem_id,
                     const char *gpu_name, int64_t run_id, double *median_ms, double *clock_mhz,
                     size_t cap, size_t *n, char *msg, size_t len)
{
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_HISTORY, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, sha256, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 3, problem_id);
    sqlite3_bind_text(st, 4, gpu_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, run_id);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)cap);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW && *n < cap) {
        median_ms[*n] = col_real(st, 0);
        clock_mhz[*n] = col_real(st, 1);
        (*n)++;
    }
    if (step != SQLITE_DONE && step != SQLITE_ROW) rc = tbs_db_fail(s, msg, len, "read a variant's history");
    tbs_done(st);
    return rc;
}

/* ---- calibration -------------------------------------------------------------------------- */

int tb_store_latest_calibration(tb_store *s, const char *gpu_uuid, tb_calibration *out,
                                int *found, char *msg, size_t len)
{
    *found = 0;
    if (!gpu_uuid || !gpu_uuid[0]) return TB_OK;
    sqlite3_stmt *st = NULL;
    int rc = tbs_prep(s, Q_CAL_LATEST, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, gpu_uuid, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        tb_calibration *c = out;
        memset(c, 0, sizeof *c);
        int k = 0;
        c->id = sqlite3_column_int64(st, k++);
        COL_TEXT(st, k++, c->created_at);
        COL_TEXT(st, k++, c->gpu_uuid);
        COL_TEXT(st, k++, c->gpu_name);
        c->dram_gbps = col_real(st, k++);
        c->copy_bytes = col_opt_int(st, k++);
        c->gemm_tflops = col_real(st, k++);
        COL_TEXT(st, k++, c->gemm_shape);
        c->sm_clock_mhz = col_real(st, k++);
        COL_TEXT(st, k++, c->method);
        c->fp8_tflops = col_real(st, k++);
        COL_TEXT(st, k++, c->fp8_shape);
        c->fp8_sm_clock_mhz = col_real(st, k++);
        *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = tbs_db_fail(s, msg, len, "read the calibrations");
    }
    tbs_done(st);
    return rc;
}

int tb_store_measurement_samples(tb_store *s, const tb_measurement *m, double **ms,
                                 double **clock_mhz, size_t *n, char *msg, size_t len)
{
    int rc = tb_store_samples(s, m->id, ms, clock_mhz, n, msg, len);
    if (rc == TB_OK && m->n_samples > 0 && (int64_t)*n != m->n_samples) {
        rc = tb_fail(msg, len, TB_EDB, "'%s' is damaged: measurement %lld has %zu of its %d samples "
                     "(see 'tilebench check')", s->path, (long long)m->id, *n, m->n_samples);
        free(*ms);
        free(*clock_mhz);
        *ms = *clock_mhz = NULL;
        *n = 0;
    }
    return rc;
}
