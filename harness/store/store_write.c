/* store_write.c - every writer of the store (see store.h; the invariants of the whole store
 * are in store_int.h): runs, the environment, variants and problems, a measurement with its
 * samples, deleting a problem's measurements, metrics, calibrations. Maps records to rows:
 * "not applicable" (NaN, -1, "") is bound as NULL.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* gmtime_r, strnlen */
#endif
#include "store/store_int.h"
#include "store/store.h"
#include "common/tb.h"
#include "common/problem.h"

#include <sqlite3.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- small helpers ------------------------------------------------------------------------ */

/* Record text, which may fill its buffer without a terminator: "" becomes NULL. */
static int bind_text(sqlite3_stmt *st, int i, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n == 0) return sqlite3_bind_null(st, i);
    return sqlite3_bind_text(st, i, s, (int)n, SQLITE_TRANSIENT);
}

/* Text that is part of a key: stored as is, "" included. */
static int bind_key_text(sqlite3_stmt *st, int i, const char *s, size_t cap)
{
    return sqlite3_bind_text(st, i, s, (int)strnlen(s, cap), SQLITE_TRANSIENT);
}

static int bind_opt_int(sqlite3_stmt *st, int i, int64_t v)
{
    return v == -1 ? sqlite3_bind_null(st, i) : sqlite3_bind_int64(st, i, v);
}

static int bind_real(sqlite3_stmt *st, int i, double v)
{
    return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

#define BIND_TEXT(st, i, field) bind_text((st), (i), (field), sizeof(field))
#define BIND_KEY_TEXT(st, i, field) bind_key_text((st), (i), (field), sizeof(field))

static void utc_now(char *buf, size_t cap)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, cap, "%s", "");
}

static int check_writable(tb_store *s, char *msg, size_t len)
{
    if (s->read_only)
        return tb_fail(msg, len, TB_EDB, "cannot write to '%s': opened read-only", s->path);
    return TB_OK;
}

static int valid_run_status(const char *st)
{
    static const char *const ok[] = {"running", "complete", "interrupted", "failed", "planned"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (st && strcmp(st, ok[i]) == 0) return 1;
    return 0;
}

static int bad_run_status(const char *st, char *msg, size_t len)
{
    return tb_fail(msg, len, TB_EINTERNAL,
                   "unknown run status '%s' (running, complete, interrupted, failed)",
                   st ? st : "(null)");
}

/* ---- runs --------------------------------------------------------------------------------- */

int tb_store_run_begin(tb_store *s, tb_run_info *run, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!run->started_at[0]) utc_now(run->started_at, sizeof run->started_at);
    if (!run->status[0]) snprintf(run->status, sizeof run->status, "%s", "running");
    if (!valid_run_status(run->status)) return bad_run_status(run->status, msg, len);

    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, Q_RUN_INSERT, &st, msg, len))) return rc;
    int i = 1, b = 0;
    b |= BIND_KEY_TEXT(st, i++, run->started_at);
    b |= BIND_TEXT(st, i++, run->ended_at);
    b |= BIND_TEXT(st, i++, run->command_line);
    b |= BIND_TEXT(st, i++, run->git_sha);
    b |= BIND_TEXT(st, i++, run->version);
    b |= BIND_KEY_TEXT(st, i++, run->status);
    b |= BIND_TEXT(st, i++, run->options_json);
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "record a run");
    else run->id = sqlite3_last_insert_rowid(s->db);
    tbs_done(st);
    return rc;
}

static int run_update(tb_store *s, int which, int64_t run_id, const char *status, char *msg,
                      size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!valid_run_status(status)) return bad_run_status(status, msg, len);
    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, which, &st, msg, len))) return rc;
    char now[32];
    utc_now(now, sizeof now);
    int i = 1, b = 0;
    b |= sqlite3_bind_text(st, i++, status, -1, SQLITE_TRANSIENT);
    if (which == Q_RUN_END) b |= BIND_TEXT(st, i++, now);
    b |= sqlite3_bind_int64(st, i++, run_id);
    if (b || sqlite3_step(st) != SQLITE_DONE)
        rc = tbs_db_fail(s, msg, len, "update a run");
    else if (sqlite3_changes(s->db) == 0)
        rc = tb_fail(msg, len, TB_EDB, "no run %lld in '%s'", (long long)run_id, s->path);
    tbs_done(st);
    return rc;
}

int tb_store_run_end(tb_store *s, int64_t run_id, const char *status, char *msg, size_t len)
{
    return run_update(s, Q_RUN_END, run_id, status, msg, len);
}

int tb_store_run_set_status(tb_store *s, int64_t run_id, const char *status, char *msg,
                            size_t len)
{
    return run_update(s, Q_RUN_STATUS, run_id, status, msg, len);
}

int tb_store_run_set_phases(tb_store *s, int64_t run_id, const tb_phases *ph, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    char j[1024];
    if (tb_phases_to_json(ph, j, sizeof j) != TB_OK) return tb_fail(msg, len, TB_EUSAGE, "phases do not fit");
    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, Q_RUN_PHASES, &st, msg, len))) return rc;
    int b = BIND_TEXT(st, 1, j) | sqlite3_bind_int64(st, 2, run_id);
    if (b || sqlite3_step(st) != SQLITE_DONE)
        rc = tbs_db_fail(s, msg, len, "store a run's phases");
    else if (sqlite3_changes(s->db) == 0)
        rc = tb_fail(msg, len, TB_EDB, "no run %lld in '%s'", (long long)run_id, s->path);
    tbs_done(st);
    return rc;
}

/* ---- environment -------------------------------------------------------------------------- */

int tb_store_put_environment(tb_store *s, int64_t run_id, const tb_environment *e, char *msg,
                             size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, Q_ENV_PUT, &st, msg, len))) return rc;
    int i = 1, b = 0;
    b |= sqlite3_bind_int64(st, i++, run_id);
    b |= BIND_TEXT(st, i++, e->gpu_name);
    b |= BIND_TEXT(st, i++, e->gpu_uuid);
    b |= BIND_TEXT(st, i++, e->pci_bus_id);
    b |= bind_opt_int(st, i++, e->cc_major);
    b |= bind_opt_int(st, i++, e->cc_minor);
    b |= bind_opt_int(st, i++, e->sm_count);
    b |= bind_opt_int(st, i++, e->l2_bytes);
    b |= bind_opt_int(st, i++, e->mem_bytes);
    b |= bind_opt_int(st, i++, e->sm_clock_max_mhz);
    b |= bind_opt_int(st, i++, e->sm_clock_mhz);
    b |= bind_opt_int(st, i++, e->mem_clock_mhz);
    b |= bind_opt_int(st, i++, e->power_limit_mw);
    b |= BIND_TEXT(st, i++, e->driver_version);
    b |= bind_opt_int(st, i++, e->cuda_driver_version);
    b |= bind_opt_int(st, i++, e->cuda_runtime_version);
    b |= bind_opt_int(st, i++, e->cublas_version);
    b |= bind_opt_int(st, i++, e->cupti_version);
    b |= BIND_TEXT(st, i++, e->hostname);
    b |= BIND_TEXT(st, i++, e->os);
    b |= BIND_TEXT(st, i++, e->extra_json);
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "record the environment");
    tbs_done(st);
    return rc;
}

/* ---- variants and problems ---------------------------------------------------------------- */

/* Runs an "INSERT ... ON CONFLICT DO NOTHING" already bound, then, when it inserted nothing,
 * the matching find (bound by bind_find) to learn the existing row's id. */
static int insert_or_find(tb_store *s, sqlite3_stmt *ins, sqlite3_stmt *find, int64_t *id,
                          const char *what, char *msg, size_t len)
{
    int rc = TB_OK;
    if (sqlite3_step(ins) != SQLITE_DONE) {
        rc = tbs_db_fail(s, msg, len, what);
    } else if (sqlite3_changes(s->db) == 1) {
        *id = sqlite3_last_insert_rowid(s->db);
    } else {
        int step = sqlite3_step(find);
        if (step == SQLITE_ROW) *id = sqlite3_column_int64(find, 0);
        else if (step == SQLITE_DONE)
            rc = tb_fail(msg, len, TB_EDB, "cannot %s in '%s': conflicting row not found",
                         what, s->path);
        else rc = tbs_db_fail(s, msg, len, what);
    }
    tbs_done(ins);
    tbs_done(find);
    return rc;
}

int tb_store_put_variant(tb_store *s, int64_t run_id, tb_variant_info *v, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!v->name[0]) return tb_fail(msg, len, TB_EINTERNAL, "cannot record a variant: no name");
    sqlite3_stmt *ins = NULL, *find = NULL;
    if ((rc = tbs_prep(s, Q_VAR_INSERT, &ins, msg, len))) return rc;
    if ((rc = tbs_prep(s, Q_VAR_FIND, &find, msg, len))) return rc;
    int i = 1, b = 0;
    b |= sqlite3_bind_int64(ins, i++, run_id);
    b |= BIND_KEY_TEXT(ins, i++, v->name);
    b |= BIND_TEXT(ins, i++, v->family);
    b |= BIND_TEXT(ins, i++, v->params_json);
    b |= BIND_TEXT(ins, i++, v->sass);
    b |= BIND_TEXT(ins, i++, v->file);
    b |= BIND_TEXT(ins, i++, v->sha256);
    b |= bind_opt_int(ins, i++, v->index);
    b |= sqlite3_bind_int64(find, 1, run_id);
    b |= BIND_KEY_TEXT(find, 2, v->name);
    if (b) {
        tbs_done(ins);
        tbs_done(find);
        return tbs_db_fail(s, msg, len, "record a variant");
    }
    return insert_or_find(s, ins, find, &v->id, "record a variant", msg, len);
}

static int bind_problem_key(sqlite3_stmt *st, const tb_problem_info *p)
{
    int i = 1, b = 0;
    b |= BIND_KEY_TEXT(st, i++, p->op);
    b |= sqlite3_bind_int64(st, i++, p->m);
    b |= sqlite3_bind_int64(st, i++, p->n);
    b |= sqlite3_bind_int64(st, i++, p->k);
    b |= sqlite3_bind_int64(st, i++, p->batch);
    b |= BIND_KEY_TEXT(st, i++, p->dtypes);
    b |= BIND_KEY_TEXT(st, i++, p->layouts);
    b |= sqlite3_bind_int64(st, i++, p->lda);
    b |= sqlite3_bind_int64(st, i++, p->ldb);
    b |= sqlite3_bind_int64(st, i++, p->ldc);
    b |= sqlite3_bind_int64(st, i++, p->ldd);
    b |= sqlite3_bind_double(st, i++, p->alpha);
    b |= sqlite3_bind_double(st, i++, p->beta);
    b |= sqlite3_bind_double(st, i++, p->scale_a);
    b |= sqlite3_bind_double(st, i++, p->scale_b);
    b |= sqlite3_bind_int64(st, i++, p->heads);
    b |= sqlite3_bind_int64(st, i++, p->heads_kv);
    b |= sqlite3_bind_int64(st, i++, p->seq_q);
    b |= sqlite3_bind_int64(st, i++, p->seq_k);
    b |= sqlite3_bind_int64(st, i++, p->head_dim);
    b |= sqlite3_bind_int(st, i++, p->causal);
    b |= sqlite3_bind_double(st, i++, p->softmax_scale);
    return b;
}
#define PROB_LABEL_PARAM 23   /* after the 22 key columns of PROB_COLS (store_sql.c) */

/* The fields of the other operation are 0 (record.h), so that the key says what a problem is:
 * NULL when p is whole, else what is wrong with it. */
static const char *problem_wrong(const tb_problem_info *p, char *buf, size_t cap)
{
    if (!tb_problem_info_is_attention(p)) {
        if (p->heads || p->heads_kv || p->seq_q || p->seq_k || p->head_dim || p->causal ||
            p->softmax_scale != 0)
            return "a GEMM problem with attention sizes";
        return NULL;
    }
    tb_attn_layout layout;
    if (p->m || p->n || p->k || p->lda || p->ldb || p->ldc || p->ldd || p->alpha != 0 ||
        p->beta != 0 || p->scale_a != 0 || p->scale_b != 0)
        return "an attention problem with GEMM sizes";
    if (p->batch < 1 || p->heads < 1 || p->heads_kv < 1 || p->seq_q < 1 || p->seq_k < 1 ||
        p->head_dim < 1 || p->heads % p->heads_kv)
        return "an attention problem with a non-positive size, or heads_kv not dividing heads";
    if ((p->causal != 0 && p->causal != 1) || !isfinite(p->softmax_scale) || !(p->softmax_scale > 0))
        return "an attention problem whose causal is not 0 or 1 or whose scale is not positive";
    if (tb_attn_layout_parse(p->layouts, &layout) != TB_OK) {
        snprintf(buf, cap, "an attention problem of layout '%.8s' (bhsd or bshd)", p->layouts);
        return buf;
    }
    return NULL;
}

int tb_store_put_problem(tb_store *s, tb_problem_info *p, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (isnan(p->alpha) || isnan(p->beta))
        return tb_fail(msg, len, TB_EINTERNAL, "cannot record a problem: alpha or beta is NaN");
    if (!(p->scale_a >= 0) || !(p->scale_b >= 0) || isinf(p->scale_a) || isinf(p->scale_b))
        return tb_fail(msg, len, TB_EINTERNAL, "cannot record a problem: scale_a %g or scale_b "
                       "%g is neither 0 (none) nor finite and positive", p->scale_a, p->scale_b);
    char why[96];
    const char *wrong = problem_wrong(p, why, sizeof why);
    if (wrong) return tb_fail(msg, len, TB_EINTERNAL, "cannot record a problem: %s", wrong);
    sqlite3_stmt *ins = NULL, *find = NULL;
    if ((rc = tbs_prep(s, Q_PROB_INSERT, &ins, msg, len))) return rc;
    if ((rc = tbs_prep(s, Q_PROB_FIND, &find, msg, len))) return rc;
    int b = bind_problem_key(ins, p);
    b |= BIND_TEXT(ins, PROB_LABEL_PARAM, p->label);
    b |= bind_problem_key(find, p);
    if (b) {
        tbs_done(ins);
        tbs_done(find);
        return tbs_db_fail(s, msg, len, "record a problem");
    }
    return insert_or_find(s, ins, find, &p->id, "record a problem", msg, len);
}

/* ---- measurements ------------------------------------------------------------------------- */

static int bind_measurement(sqlite3_stmt *st, const tb_measurement *m)
{
    int i = 1, b = 0;
    b |= sqlite3_bind_int64(st, i++, m->run_id);
    b |= sqlite3_bind_int64(st, i++, m->variant_id);
    b |= sqlite3_bind_int64(st, i++, m->problem_id);
    b |= sqlite3_bind_text(st, i++, tb_status_name(m->status), -1, SQLITE_STATIC);
    b |= sqlite3_bind_text(st, i++, tb_disposition_name(m->disposition), -1, SQLITE_STATIC);
    b |= BIND_TEXT(st, i++, m->reason);
    b |= BIND_TEXT(st, i++, m->rule);
    b |= bind_opt_int(st, i++, m->trials);
    b |= bind_real(st, i++, m->max_abs_err);
    b |= bind_real(st, i++, m->rel_fro_err);
    b |= bind_opt_int(st, i++, m->n_bad);
    b |= bind_opt_int(st, i++, m->n_nonfinite);
    b |= bind_real(st, i++, m->atol);
    b |= bind_real(st, i++, m->rtol);
    b |= BIND_TEXT(st, i++, m->method);
    b |= BIND_TEXT(st, i++, m->stop_reason);
    b |= bind_opt_int(st, i++, m->n_samples);
    b |= bind_opt_int(st, i++, m->warmup);
    b |= bind_real(st, i++, m->median_ms);
    b |= bind_real(st, i++, m->mean_ms);
    b |= bind_real(st, i++, m->stdev_ms);
    b |= bind_real(st, i++, m->min_ms);
    b |= bind_real(st, i++, m->max_ms);
    b |= bind_real(st, i++, m->rse);
    b |= bind_real(st, i++, m->tflops);
    b |= bind_real(st, i++, m->clock_mhz);
    b |= bind_real(st, i++, m->first_launch_ms);
    b |= bind_opt_int(st, i++, m->workspace_bytes);
    b |= BIND_TEXT(st, i++, m->describe);
    b |= BIND_TEXT(st, i++, m->extra_json);
    return b;
}

int tb_store_put_measurement(tb_store *s, tb_measurement *m, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!strcmp(tb_status_name(m->status), "invalid") ||
        !strcmp(tb_disposition_name(m->disposition), "invalid"))
        return tb_fail(msg, len, TB_EINTERNAL,
                       "cannot store measurement: invalid status %d or disposition %d",
                       (int)m->status, (int)m->disposition);
    sqlite3_stmt *ins = NULL, *smp = NULL;
    if ((rc = tbs_prep(s, Q_MEAS_INSERT, &ins, msg, len))) return rc;
    if ((rc = tbs_prep(s, Q_SAMPLE_INSERT, &smp, msg, len))) return rc;
    if ((rc = tbs_tx_begin(s, msg, len, "store measurement"))) return rc;

    int64_t id = 0;
    if (bind_measurement(ins, m) || sqlite3_step(ins) != SQLITE_DONE) {
        rc = tbs_db_fail(s, msg, len, "store measurement");
        goto fail;
    }
    id = sqlite3_last_insert_rowid(s->db);
    tbs_done(ins);
    int n = m->samples_ms && m->n_samples > 0 ? m->n_samples : 0;
    for (int i = 0; i < n; i++) {
        int b = sqlite3_bind_int64(smp, 1, id);
        b |= sqlite3_bind_int(smp, 2, i);
        b |= bind_real(smp, 3, m->samples_ms[i]);
        b |= bind_real(smp, 4, m->samples_clock_mhz ? m->samples_clock_mhz[i] : NAN);
        if (b || sqlite3_step(smp) != SQLITE_DONE) {
            rc = tbs_db_fail(s, msg, len, "store the samples of a measurement");
            goto fail;
        }
        sqlite3_reset(smp);
    }
    tbs_done(smp);
    if ((rc = tbs_tx_commit(s, msg, len, "store measurement"))) return rc;
    m->id = id;
    return TB_OK;
fail:
    tbs_done(ins);
    tbs_done(smp);
    tbs_tx_rollback(s);
    return rc;
}

int tb_store_delete_problem_measurements(tb_store *s, int64_t run_id, int64_t problem_id,
                                         char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, Q_MEAS_DELETE, &st, msg, len))) return rc;
    /* One statement is one transaction: its cascade to samples and metrics is part of it. */
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, problem_id);
    if (sqlite3_step(st) != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "delete measurements");
    tbs_done(st);
    return rc;
}

int tb_store_put_metrics(tb_store *s, int64_t measurement_id, const tb_metric *m, size_t n,
                         char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = tbs_tx_begin(s, msg, len, "begin storing metrics");
    if (rc) return rc;
    rc = tbs_prep(s, Q_METRIC_PUT, &st, msg, len);
    for (size_t i = 0; rc == TB_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, measurement_id);
        bind_text(st, 2, m[i].name, sizeof m[i].name);
        bind_real(st, 3, m[i].value);
        bind_text(st, 4, m[i].unit, sizeof m[i].unit);
        sqlite3_bind_int(st, 5, m[i].available ? 1 : 0);
        bind_text(st, 6, m[i].reason, sizeof m[i].reason);
        if (sqlite3_step(st) != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "store a metric");
        tbs_done(st);
    }
    if (rc) { tbs_tx_rollback(s); return rc; }
    return tbs_tx_commit(s, msg, len, "commit the metrics");
}

/* ---- calibration -------------------------------------------------------------------------- */

int tb_store_put_calibration(tb_store *s, tb_calibration *c, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!c->gpu_uuid[0])
        return tb_fail(msg, len, TB_EINTERNAL, "cannot record a calibration: no GPU UUID");
    if (!c->created_at[0]) utc_now(c->created_at, sizeof c->created_at);
    sqlite3_stmt *st = NULL;
    if ((rc = tbs_prep(s, Q_CAL_INSERT, &st, msg, len))) return rc;
    int i = 1, b = 0;
    b |= BIND_KEY_TEXT(st, i++, c->created_at);
    b |= BIND_KEY_TEXT(st, i++, c->gpu_uuid);
    b |= BIND_TEXT(st, i++, c->gpu_name);
    b |= bind_real(st, i++, c->dram_gbps);
    b |= bind_opt_int(st, i++, c->copy_bytes);
    b |= bind_real(st, i++, c->gemm_tflops);
    b |= BIND_TEXT(st, i++, c->gemm_shape);
    b |= bind_real(st, i++, c->sm_clock_mhz);
    b |= BIND_TEXT(st, i++, c->method);
    b |= bind_real(st, i++, c->fp8_tflops > 0 ? c->fp8_tflops : NAN);
    b |= BIND_TEXT(st, i++, c->fp8_shape);
    b |= bind_real(st, i++, c->fp8_sm_clock_mhz > 0 ? c->fp8_sm_clock_mhz : NAN);
    /* one statement is one transaction */
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = tbs_db_fail(s, msg, len, "record a calibration");
    else c->id = sqlite3_last_insert_rowid(s->db);
    tbs_done(st);
    return rc;
}
