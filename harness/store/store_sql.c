/* store_sql.c - the SQL text of every prepared statement of the store, and the small helpers
 * that the store's files share: preparing and resetting statements, reading a text column,
 * reporting a failure of sqlite, transactions (declared in store_int.h, which holds the
 * invariants of the whole store).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* as in every file of the store */
#endif
#include "store/store_int.h"
#include "common/tb.h"

#include <sqlite3.h>
#include <errno.h>

#include <stdio.h>

/* ---- statements ---------------------------------------------------------------------------
 * Column lists are written once and shared by INSERT and SELECT, so their order cannot drift
 * from the bind/read functions of store_write.c and store_read.c, which walk them left to
 * right. */
#define RUN_COLS "started_at, ended_at, command_line, git_sha, version, status, options_json"
#define ENV_COLS                                                                       \
    "gpu_name, gpu_uuid, pci_bus_id, cc_major, cc_minor, sm_count, l2_bytes, "         \
    "mem_bytes, sm_clock_max_mhz, sm_clock_mhz, mem_clock_mhz, power_limit_mw, "       \
    "driver_version, cuda_driver_version, cuda_runtime_version, cublas_version, "      \
    "cupti_version, hostname, os, extra_json"
#define VAR_COLS "name, family, params_json, sass, file, sha256, variant_index"
/* the problem's key (the table's UNIQUE constraint, schema 9), then its label */
#define PROB_KEY                                                                       \
    "op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, scale_a, "  \
    "scale_b, heads, heads_kv, seq_q, seq_k, head_dim, causal, softmax_scale"
#define PROB_COLS PROB_KEY ", label"
/* measurement columns after run_id, variant_id, problem_id (none is a column of variants or
 * problems, so the results join can name them unqualified) */
#define MEAS_TAIL                                                                      \
    "status, disposition, reason, rule, trials, max_abs_err, rel_fro_err, n_bad, "     \
    "n_nonfinite, atol, rtol, method, stop_reason, n_samples, warmup, median_ms, "     \
    "mean_ms, stdev_ms, min_ms, max_ms, rse, tflops, clock_mhz, first_launch_ms, "     \
    "workspace_bytes, describe, extra_json"
#define CAL_COLS                                                                       \
    "created_at, gpu_uuid, gpu_name, dram_gbps, copy_bytes, gemm_tflops, gemm_shape, " \
    "sm_clock_mhz, method, fp8_tflops, fp8_shape, fp8_sm_clock_mhz"

static const char *const sql[Q_COUNT] = {
    [Q_RUN_INSERT] = "INSERT INTO runs (" RUN_COLS ", uid) VALUES (?,?,?,?,?,?,?, lower(hex(randomblob(16))))",
    [Q_RUN_END] = "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?",
    [Q_RUN_STATUS] = "UPDATE runs SET status = ? WHERE id = ?",
    [Q_RUN_GET] = "SELECT id, " RUN_COLS ", phases_json FROM runs WHERE id = ?",
    [Q_RUN_PHASES] = "UPDATE runs SET phases_json = ? WHERE id = ?",
    [Q_RUN_LATEST] = "SELECT id FROM runs ORDER BY id DESC LIMIT 1",
    [Q_ENV_PUT] = "INSERT OR REPLACE INTO environment (run_id, " ENV_COLS ") "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_ENV_GET] = "SELECT " ENV_COLS " FROM environment WHERE run_id = ?",
    [Q_VAR_INSERT] = "INSERT INTO variants (run_id, " VAR_COLS ") VALUES (?,?,?,?,?,?,?,?) "
                     "ON CONFLICT (run_id, name) DO NOTHING",
    [Q_VAR_FIND] = "SELECT id FROM variants WHERE run_id = ? AND name = ?",
    [Q_VARIANTS] = "SELECT id, " VAR_COLS " FROM variants WHERE run_id = ? ORDER BY id",
    [Q_PROB_INSERT] = "INSERT INTO problems (" PROB_COLS ") "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                      "ON CONFLICT (" PROB_KEY ") DO NOTHING",
    [Q_PROB_FIND] = "SELECT id FROM problems WHERE op = ? AND m = ? AND n = ? AND k = ? "
                    "AND batch = ? AND dtypes = ? AND layouts = ? AND lda = ? AND ldb = ? "
                    "AND ldc = ? AND ldd = ? AND alpha = ? AND beta = ? AND scale_a = ? "
                    "AND scale_b = ? AND heads = ? AND heads_kv = ? AND seq_q = ? AND seq_k = ? "
                    "AND head_dim = ? AND causal = ? AND softmax_scale = ?",
    [Q_MEAS_INSERT] = "INSERT INTO measurements (run_id, variant_id, problem_id, " MEAS_TAIL
                      ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_SAMPLE_INSERT] = "INSERT INTO samples (measurement_id, idx, ms, clock_mhz) "
                        "VALUES (?,?,?,?)",
    [Q_MEAS_DELETE] = "DELETE FROM measurements WHERE run_id = ? AND problem_id = ?",
    [Q_RESULTS] = "SELECT measurements.id, measurements.run_id, measurements.variant_id, "
                  "measurements.problem_id, " MEAS_TAIL ", "
                  "variants.id, " VAR_COLS ", problems.id, " PROB_COLS " "
                  "FROM measurements "
                  "JOIN variants ON variants.id = measurements.variant_id "
                  "JOIN problems ON problems.id = measurements.problem_id "
                  "WHERE measurements.run_id = ? "
                  "ORDER BY problems.id, variants.id, measurements.id",
    [Q_SAMPLES] = "SELECT ms, clock_mhz FROM samples WHERE measurement_id = ? ORDER BY idx",
    [Q_METRIC_PUT] = "INSERT OR REPLACE INTO metrics (measurement_id, name, value, unit, available, "
                     "reason) VALUES (?,?,?,?,?,?)",
    [Q_METRICS] = "SELECT name, value, unit, available, reason FROM metrics WHERE measurement_id = ? "
                  "ORDER BY name",
    [Q_CAL_INSERT] = "INSERT INTO calibration (" CAL_COLS ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    /* the same library (sha256) and variant on the same problem and GPU model in other
     * finished runs of the file: medians and clocks, newest first */
    /* (the variants first, then measurements by their variant index: the plan SQLite picks
     * for a join scans every measurement) */
    [Q_HISTORY] = "SELECT x.median_ms, x.clock_mhz FROM measurements x "
                  "JOIN runs r ON r.id = x.run_id JOIN environment e ON e.run_id = x.run_id "
                  "WHERE x.variant_id IN (SELECT id FROM variants WHERE sha256 = ? AND name = ?) "
                  "AND x.problem_id = ? AND e.gpu_name = ? "
                  "AND x.run_id != ? AND x.status = 'ok' AND x.disposition = 'passed' "
                  "AND x.median_ms > 0 AND r.status = 'complete' ORDER BY x.run_id DESC LIMIT ?",
    [Q_CAL_LATEST] = "SELECT id, " CAL_COLS " FROM calibration "
                     "WHERE gpu_uuid = ? COLLATE NOCASE ORDER BY id DESC LIMIT 1",
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* The failure of the last call on s->db: "cannot <what> in 'x.db': <sqlite's message>".
 * Call before any ROLLBACK, which replaces sqlite's message. */
int tbs_db_fail(tb_store *s, char *msg, size_t len, const char *what)
{
    /* a full disk says so: SQLite reports ENOSPC on some paths as SQLITE_FULL ("database or
     * disk is full") and on others as a generic I/O error */
    int sys = sqlite3_system_errno(s->db), code = sqlite3_errcode(s->db);
    if (sys == ENOSPC || code == SQLITE_FULL)
        return tb_fail(msg, len, TB_EIO, "cannot %s in '%s': the disk is full (SQLITE_FULL)", what,
                       s->path);
    if (sys == EFBIG)
        return tb_fail(msg, len, TB_EIO, "cannot %s in '%s': the file size limit was reached", what,
                       s->path);
    return tb_fail(msg, len, TB_EDB, "cannot %s in '%s': %s", what, s->path,
                   sqlite3_errmsg(s->db));
}

int tbs_prep(tb_store *s, int which, sqlite3_stmt **out, char *msg, size_t len)
{
    if (!s->stmt[which] &&
        sqlite3_prepare_v3(s->db, sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                           &s->stmt[which], NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, "prepare a query");
    *out = s->stmt[which];
    return TB_OK;
}

/* Leave a cached statement ready for its next use (ends any read it held open). */
void tbs_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

void tbs_col_text(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}

/* BEGIN IMMEDIATE: takes the write lock now (waiting up to the busy timeout), so a
 * transaction never fails half-way for want of it. */
int tbs_tx_begin(tb_store *s, char *msg, size_t len, const char *what)
{
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, what);
    return TB_OK;
}

void tbs_tx_rollback(tb_store *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int tbs_tx_commit(tb_store *s, char *msg, size_t len, const char *what)
{
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = tbs_db_fail(s, msg, len, what);
        tbs_tx_rollback(s);
        return rc;
    }
    return TB_OK;
}
