/* store.c - the SQLite store: schema, migrations, transactions (see store.h, docs/schema.md).
 *
 * Owns the database file: the only file that includes sqlite3.h, the only writer. Owns the
 * schema (the migrations[] array below is its whole history), the checks that run before
 * anything is written, and the mapping between records and rows. Leaves to its callers what
 * a run means (sweep), how results are shown (show, export).
 *
 * Invariants:
 *  - nothing is written to a file until it has been read back as a tilebench database of a
 *    version this build knows (or as an empty one, when creating); WAL is enabled only then,
 *    so a refused file keeps its bytes and gets no -wal/-shm beside it;
 *  - every SQL text is a constant; values travel only as bound parameters;
 *  - "not applicable" is NULL on disk: NaN doubles, -1 integers and "" strings of records
 *    are stored as NULL and read back as NaN, -1 and "" (the problem's key columns excepted,
 *    see docs/schema.md);
 *  - a measurement and its samples go in one transaction, so a SIGKILL loses at most it.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* gmtime_r, strnlen, strcasecmp, mkdir */
#endif
#include "store/store.h"
#include "common/tb.h"

#include <sqlite3.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* PRAGMA application_id of a tilebench database: "tilb" in ASCII. */
#define TB_APPLICATION_ID 0x74696C62

#define BUSY_TIMEOUT_MS 10000

/* ---- schema -------------------------------------------------------------------------------
 * migrations[i] takes user_version i to i + 1 and ends by setting it; each runs in its own
 * transaction. Only ever append: a step, once released, is never edited (a database made by
 * it exists somewhere). TB_SCHEMA_VERSION must equal the number of steps. */
static const char *const migrations[] = {
    /* 1: the base tables */
    "PRAGMA application_id = 1953066082;\n" /* TB_APPLICATION_ID */
    "CREATE TABLE runs (\n"
    "  id            INTEGER PRIMARY KEY,\n"
    "  started_at    TEXT NOT NULL,\n"
    "  ended_at      TEXT,\n"
    "  command_line  TEXT,\n"
    "  git_sha       TEXT,\n"
    "  version       TEXT,\n"
    "  status        TEXT NOT NULL,\n"
    "  options_json  TEXT\n"
    ");\n"
    "CREATE TABLE environment (\n"
    "  run_id               INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  gpu_name             TEXT,\n"
    "  gpu_uuid             TEXT,\n"
    "  pci_bus_id           TEXT,\n"
    "  cc_major             INTEGER,\n"
    "  cc_minor             INTEGER,\n"
    "  sm_count             INTEGER,\n"
    "  l2_bytes             INTEGER,\n"
    "  mem_bytes            INTEGER,\n"
    "  sm_clock_max_mhz     INTEGER,\n"
    "  sm_clock_mhz         INTEGER,\n"
    "  mem_clock_mhz        INTEGER,\n"
    "  power_limit_mw       INTEGER,\n"
    "  driver_version       TEXT,\n"
    "  cuda_driver_version  INTEGER,\n"
    "  cuda_runtime_version INTEGER,\n"
    "  cublas_version       INTEGER,\n"
    "  cupti_version        INTEGER,\n"
    "  hostname             TEXT,\n"
    "  os                   TEXT,\n"
    "  extra_json           TEXT\n"
    ");\n"
    "CREATE TABLE variants (\n"
    "  id             INTEGER PRIMARY KEY,\n"
    "  run_id         INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  name           TEXT NOT NULL,\n"
    "  family         TEXT,\n"
    "  params_json    TEXT,\n"
    "  sass           TEXT,\n"
    "  file           TEXT,\n"
    "  sha256         TEXT,\n"
    "  variant_index  INTEGER,\n"
    "  UNIQUE (run_id, name)\n"
    ");\n"
    "CREATE TABLE problems (\n"
    "  id       INTEGER PRIMARY KEY,\n"
    "  op       TEXT NOT NULL,\n"
    "  m        INTEGER NOT NULL,\n"
    "  n        INTEGER NOT NULL,\n"
    "  k        INTEGER NOT NULL,\n"
    "  batch    INTEGER NOT NULL,\n"
    "  dtypes   TEXT NOT NULL,\n"
    "  layouts  TEXT NOT NULL,\n"
    "  lda      INTEGER NOT NULL,\n"
    "  ldb      INTEGER NOT NULL,\n"
    "  ldc      INTEGER NOT NULL,\n"
    "  ldd      INTEGER NOT NULL,\n"
    "  alpha    REAL NOT NULL,\n"
    "  beta     REAL NOT NULL,\n"
    "  label    TEXT,\n"
    "  UNIQUE (op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta)\n"
    ");\n"
    "CREATE TABLE measurements (\n"
    "  id               INTEGER PRIMARY KEY,\n"
    "  run_id           INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"
    "  variant_id       INTEGER NOT NULL REFERENCES variants(id) ON DELETE CASCADE,\n"
    "  problem_id       INTEGER NOT NULL REFERENCES problems(id),\n"
    "  status           TEXT NOT NULL,\n"
    "  disposition      TEXT NOT NULL,\n"
    "  reason           TEXT,\n"
    "  rule             TEXT,\n"
    "  trials           INTEGER,\n"
    "  max_abs_err      REAL,\n"
    "  rel_fro_err      REAL,\n"
    "  n_bad            INTEGER,\n"
    "  n_nonfinite      INTEGER,\n"
    "  atol             REAL,\n"
    "  rtol             REAL,\n"
    "  method           TEXT,\n"
    "  stop_reason      TEXT,\n"
    "  n_samples        INTEGER,\n"
    "  warmup           INTEGER,\n"
    "  median_ms        REAL,\n"
    "  mean_ms          REAL,\n"
    "  stdev_ms         REAL,\n"
    "  min_ms           REAL,\n"
    "  max_ms           REAL,\n"
    "  rse              REAL,\n"
    "  tflops           REAL,\n"
    "  clock_mhz        REAL,\n"
    "  first_launch_ms  REAL,\n"
    "  workspace_bytes  INTEGER,\n"
    "  describe         TEXT,\n"
    "  extra_json       TEXT\n"
    ");\n"
    "CREATE INDEX measurements_run_problem ON measurements (run_id, problem_id);\n"
    "CREATE INDEX measurements_variant ON measurements (variant_id);\n"
    "CREATE TABLE samples (\n"
    "  measurement_id  INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,\n"
    "  idx             INTEGER NOT NULL,\n"
    "  ms              REAL,\n"
    "  clock_mhz       REAL,\n"
    "  PRIMARY KEY (measurement_id, idx)\n"
    ") WITHOUT ROWID;\n"
    "PRAGMA user_version = 1;\n",

    /* 2: hardware counters (CUPTI) per measurement */
    "CREATE TABLE metrics (\n"
    "  id              INTEGER PRIMARY KEY,\n"
    "  measurement_id  INTEGER NOT NULL REFERENCES measurements(id) ON DELETE CASCADE,\n"
    "  name            TEXT NOT NULL,\n"
    "  value           REAL,\n"
    "  unit            TEXT,\n"
    "  available       INTEGER NOT NULL DEFAULT 1 CHECK (available IN (0, 1)),\n"
    "  reason          TEXT,\n"
    "  UNIQUE (measurement_id, name)\n"
    ");\n"
    "PRAGMA user_version = 2;\n",

    /* 3: the roofline ceilings measured by doctor --calibrate, per GPU */
    "CREATE TABLE calibration (\n"
    "  id            INTEGER PRIMARY KEY,\n"
    "  created_at    TEXT NOT NULL,\n"
    "  gpu_uuid      TEXT NOT NULL,\n"
    "  gpu_name      TEXT,\n"
    "  dram_gbps     REAL,\n"
    "  copy_bytes    INTEGER,\n"
    "  gemm_tflops   REAL,\n"
    "  gemm_shape    TEXT,\n"
    "  sm_clock_mhz  REAL,\n"
    "  method        TEXT\n"
    ");\n"
    "CREATE INDEX calibration_gpu ON calibration (gpu_uuid COLLATE NOCASE, id);\n"
    "PRAGMA user_version = 3;\n",
};

_Static_assert(sizeof migrations / sizeof migrations[0] == TB_SCHEMA_VERSION,
               "TB_SCHEMA_VERSION must equal the number of migration steps");

/* The tables that a database of version v must have: tables[i] appears at version i + 1. */
static const char *const tables_v1[] = {"runs", "environment", "variants", "problems",
                                        "measurements", "samples", NULL};
static const char *const tables_v2[] = {"metrics", NULL};
static const char *const tables_v3[] = {"calibration", NULL};
static const char *const *const tables_at[] = {tables_v1, tables_v2, tables_v3};
_Static_assert(sizeof tables_at / sizeof tables_at[0] == TB_SCHEMA_VERSION,
               "one table list per schema version");

/* ---- statements ---------------------------------------------------------------------------
 * Column lists are written once and shared by INSERT and SELECT, so their order cannot drift
 * from the bind/read functions below, which walk them left to right. */
#define RUN_COLS "started_at, ended_at, command_line, git_sha, version, status, options_json"
#define ENV_COLS                                                                       \
    "gpu_name, gpu_uuid, pci_bus_id, cc_major, cc_minor, sm_count, l2_bytes, "         \
    "mem_bytes, sm_clock_max_mhz, sm_clock_mhz, mem_clock_mhz, power_limit_mw, "       \
    "driver_version, cuda_driver_version, cuda_runtime_version, cublas_version, "      \
    "cupti_version, hostname, os, extra_json"
#define VAR_COLS "name, family, params_json, sass, file, sha256, variant_index"
#define PROB_COLS \
    "op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, label"
/* measurement columns after run_id, variant_id, problem_id (none is a column of variants or
 * problems, so the results join can name them unqualified) */
#define MEAS_TAIL                                                                      \
    "status, disposition, reason, rule, trials, max_abs_err, rel_fro_err, n_bad, "     \
    "n_nonfinite, atol, rtol, method, stop_reason, n_samples, warmup, median_ms, "     \
    "mean_ms, stdev_ms, min_ms, max_ms, rse, tflops, clock_mhz, first_launch_ms, "     \
    "workspace_bytes, describe, extra_json"
#define CAL_COLS                                                                       \
    "created_at, gpu_uuid, gpu_name, dram_gbps, copy_bytes, gemm_tflops, gemm_shape, " \
    "sm_clock_mhz, method"

enum {
    Q_RUN_INSERT, Q_RUN_END, Q_RUN_STATUS, Q_RUN_GET, Q_RUN_LATEST,
    Q_ENV_PUT, Q_ENV_GET,
    Q_VAR_INSERT, Q_VAR_FIND, Q_VARIANTS,
    Q_PROB_INSERT, Q_PROB_FIND,
    Q_MEAS_INSERT, Q_SAMPLE_INSERT, Q_MEAS_DELETE, Q_RESULTS, Q_SAMPLES,
    Q_METRIC_PUT, Q_METRICS,
    Q_CAL_INSERT, Q_CAL_LATEST,
    Q_COUNT
};

static const char *const sql[Q_COUNT] = {
    [Q_RUN_INSERT] = "INSERT INTO runs (" RUN_COLS ") VALUES (?,?,?,?,?,?,?)",
    [Q_RUN_END] = "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?",
    [Q_RUN_STATUS] = "UPDATE runs SET status = ? WHERE id = ?",
    [Q_RUN_GET] = "SELECT id, " RUN_COLS " FROM runs WHERE id = ?",
    [Q_RUN_LATEST] = "SELECT id FROM runs ORDER BY id DESC LIMIT 1",
    [Q_ENV_PUT] = "INSERT OR REPLACE INTO environment (run_id, " ENV_COLS ") "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [Q_ENV_GET] = "SELECT " ENV_COLS " FROM environment WHERE run_id = ?",
    [Q_VAR_INSERT] = "INSERT INTO variants (run_id, " VAR_COLS ") VALUES (?,?,?,?,?,?,?,?) "
                     "ON CONFLICT (run_id, name) DO NOTHING",
    [Q_VAR_FIND] = "SELECT id FROM variants WHERE run_id = ? AND name = ?",
    [Q_VARIANTS] = "SELECT id, " VAR_COLS " FROM variants WHERE run_id = ? ORDER BY id",
    [Q_PROB_INSERT] = "INSERT INTO problems (" PROB_COLS ") "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
                      "ON CONFLICT (op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, "
                      "alpha, beta) DO NOTHING",
    [Q_PROB_FIND] = "SELECT id FROM problems WHERE op = ? AND m = ? AND n = ? AND k = ? "
                    "AND batch = ? AND dtypes = ? AND layouts = ? AND lda = ? AND ldb = ? "
                    "AND ldc = ? AND ldd = ? AND alpha = ? AND beta = ?",
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
    [Q_CAL_INSERT] = "INSERT INTO calibration (" CAL_COLS ") VALUES (?,?,?,?,?,?,?,?,?)",
    [Q_CAL_LATEST] = "SELECT id, " CAL_COLS " FROM calibration "
                     "WHERE gpu_uuid = ? COLLATE NOCASE ORDER BY id DESC LIMIT 1",
};

struct tb_store {
    sqlite3 *db;
    int read_only;
    int found_version;
    sqlite3_stmt *stmt[Q_COUNT];   /* prepared on first use, finalized by close */
    char path[TB_PATH_LEN];
};

/* ---- small helpers ------------------------------------------------------------------------ */

/* The failure of the last call on s->db: "cannot <what> in 'x.db': <sqlite's message>".
 * Call before any ROLLBACK, which replaces sqlite's message. */
static int db_fail(tb_store *s, char *msg, size_t len, const char *what)
{
    return tb_fail(msg, len, TB_EDB, "cannot %s in '%s': %s", what, s->path,
                   sqlite3_errmsg(s->db));
}

static int prep(tb_store *s, int which, sqlite3_stmt **out, char *msg, size_t len)
{
    if (!s->stmt[which] &&
        sqlite3_prepare_v3(s->db, sql[which], -1, SQLITE_PREPARE_PERSISTENT,
                           &s->stmt[which], NULL) != SQLITE_OK)
        return db_fail(s, msg, len, "prepare a query");
    *out = s->stmt[which];
    return TB_OK;
}

/* Leave a cached statement ready for its next use (ends any read it held open). */
static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

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

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t cap)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(dst, cap, "%s", t ? (const char *)t : "");
}
#define COL_TEXT(st, i, field) col_text((st), (i), (field), sizeof(field))

static int64_t col_opt_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

static double col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

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
    static const char *const ok[] = {"running", "complete", "interrupted", "failed"};
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

/* One integer from a constant PRAGMA. Returns the sqlite code; *v set on SQLITE_OK. */
static int pragma_int(sqlite3 *db, const char *pragma, int *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, pragma, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* BEGIN IMMEDIATE: takes the write lock now (waiting up to the busy timeout), so a
 * transaction never fails half-way for want of it. */
static int tx_begin(tb_store *s, char *msg, size_t len, const char *what)
{
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, msg, len, what);
    return TB_OK;
}

static void tx_rollback(tb_store *s)
{
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int tx_commit(tb_store *s, char *msg, size_t len, const char *what)
{
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        int rc = db_fail(s, msg, len, what);
        tx_rollback(s);
        return rc;
    }
    return TB_OK;
}

/* ---- open, check, migrate ----------------------------------------------------------------- */

/* create = 1: make the parent directory of path if it is missing (one level, like results/). */
static int make_parent(const char *path, char *msg, size_t len)
{
    char dir[TB_PATH_LEN];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return TB_OK;
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return tb_fail(msg, len, TB_EIO, "cannot create '%s': '%s' is not a directory",
                           path, dir);
        return TB_OK;
    }
    if (errno != ENOENT || (mkdir(dir, 0777) != 0 && errno != EEXIST))
        return tb_fail(msg, len, TB_EIO, "cannot create directory '%s': %s", dir,
                       strerror(errno));
    return TB_OK;
}

/* Reads (never writes) what is on disk and decides whether this build may use it.
 * Sets *version to the file's user_version. */
static int inspect(tb_store *s, int create, int target, int *version, char *msg, size_t len)
{
    /* Reading the schema reads page 1 and sqlite_master: a file that is not a database, or
     * is damaged at the root, fails here and not at the first write. */
    sqlite3_stmt *st = NULL;
    char foreign[TB_NAME_LEN] = "";
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT name FROM sqlite_master WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                                -1, &st, NULL);
    int n_tables = 0;
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            if (n_tables++ == 0) COL_TEXT(st, 0, foreign);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        int code = sqlite3_errcode(s->db);
        int r;
        if (code == SQLITE_NOTADB)
            r = tb_fail(msg, len, TB_EDB, "'%s' is not a tilebench database: %s", s->path,
                        sqlite3_errmsg(s->db));
        else if (code == SQLITE_CORRUPT)
            r = tb_fail(msg, len, TB_EDB, "'%s' is damaged: %s", s->path,
                        sqlite3_errmsg(s->db));
        else
            r = tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                        sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
        return r;
    }
    sqlite3_finalize(st);

    int uv = 0, app = 0;
    if (pragma_int(s->db, "PRAGMA user_version", &uv) != SQLITE_OK ||
        pragma_int(s->db, "PRAGMA application_id", &app) != SQLITE_OK)
        return tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                       sqlite3_errmsg(s->db));
    *version = uv;

    if (uv > TB_SCHEMA_VERSION)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' has schema version %d, newer than this tilebench (%d): "
                       "upgrade tilebench", s->path, uv, TB_SCHEMA_VERSION);
    if (uv < 0)
        return tb_fail(msg, len, TB_EDB, "'%s' is not a tilebench database: schema version %d",
                       s->path, uv);
    if (uv == 0) {
        /* Never write into someone else's database. */
        if (n_tables > 0)
            return tb_fail(msg, len, TB_EDB,
                           "'%s' is not a tilebench database: it has a table '%s' and no "
                           "tilebench schema", s->path, foreign);
        if (app != 0 && app != TB_APPLICATION_ID)
            return tb_fail(msg, len, TB_EDB,
                           "'%s' is not a tilebench database: application id 0x%08x",
                           s->path, (unsigned)app);
        if (!create || s->read_only)
            return tb_fail(msg, len, TB_EDB, "'%s' is empty: no tilebench database in it yet",
                           s->path);
        return TB_OK;
    }
    if (app != TB_APPLICATION_ID)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' is not a tilebench database: application id 0x%08x", s->path,
                       (unsigned)app);
    /* A tilebench file of version uv must have every table of versions 1..uv. */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                           "AND name = ?", -1, &st, NULL) != SQLITE_OK)
        return tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                       sqlite3_errmsg(s->db));
    for (int v = 1; v <= uv; v++) {
        for (const char *const *t = tables_at[v - 1]; *t; t++) {
            sqlite3_bind_text(st, 1, *t, -1, SQLITE_STATIC);
            int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
            sqlite3_reset(st);
            if (!found) {
                sqlite3_finalize(st);
                return tb_fail(msg, len, TB_EDB,
                               "'%s' is not a valid tilebench database: table '%s' of schema "
                               "version %d is missing", s->path, *t, v);
            }
        }
    }
    sqlite3_finalize(st);
    if (uv < target && s->read_only)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' has schema version %d, older than this tilebench (%d): run a "
                       "command that writes to it (such as sweep) to migrate it first",
                       s->path, uv, target);
    return TB_OK;
}

/* Applies steps from..target, one transaction each. The version is read again under the
 * write lock, so two processes opening one new file do not both run a step. */
static int migrate(tb_store *s, int from, int target, char *msg, size_t len)
{
    for (int v = from + 1; v <= target; v++) {
        int rc = tx_begin(s, msg, len, "begin a migration");
        if (rc) return rc;
        int cur = 0;
        if (pragma_int(s->db, "PRAGMA user_version", &cur) != SQLITE_OK) {
            rc = db_fail(s, msg, len, "read the schema version");
            tx_rollback(s);
            return rc;
        }
        if (cur < v) {
            char *err = NULL;
            if (sqlite3_exec(s->db, migrations[v - 1], NULL, NULL, &err) != SQLITE_OK) {
                rc = tb_fail(msg, len, TB_EDB, "cannot migrate '%s' to schema version %d: %s",
                             s->path, v, err ? err : sqlite3_errmsg(s->db));
                sqlite3_free(err);
                tx_rollback(s);
                return rc;
            }
        }
        rc = tx_commit(s, msg, len, "commit a migration");
        if (rc) return rc;
    }
    return TB_OK;
}

static int set_pragmas(tb_store *s, char *msg, size_t len)
{
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if (sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, msg, len, "enable foreign keys");
    if (s->read_only) {
        if (sqlite3_exec(s->db, "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK)
            return db_fail(s, msg, len, "set query_only");
        return TB_OK;
    }
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) == SQLITE_OK
             && sqlite3_step(st) == SQLITE_ROW;
    char mode[16] = "";
    if (ok) COL_TEXT(st, 0, mode);
    int rc = ok ? TB_OK : db_fail(s, msg, len, "enable WAL");
    sqlite3_finalize(st);
    if (rc) return rc;
    if (strcasecmp(mode, "wal") != 0)
        return tb_fail(msg, len, TB_EDB, "cannot enable WAL in '%s': journal mode stays '%s'",
                       s->path, mode);
    return TB_OK;
}

static int store_open(const char *path, int create, int read_only, int target, tb_store **out,
                      char *msg, size_t len)
{
    *out = NULL;
    if (!path || !*path) return tb_fail(msg, len, TB_EUSAGE, "no database path given");
    if (strlen(path) >= TB_PATH_LEN)
        return tb_fail(msg, len, TB_EUSAGE, "database path too long: '%.64s...'", path);
    if (read_only) create = 0;

    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists) {
        if (errno != ENOENT)
            return tb_fail(msg, len, TB_EDB, "cannot open '%s': %s", path, strerror(errno));
        if (!create) return tb_fail(msg, len, TB_EDB, "cannot open '%s': no such file", path);
        int rc = make_parent(path, msg, len);
        if (rc) return rc;
    } else if (S_ISDIR(st.st_mode)) {
        return tb_fail(msg, len, TB_EDB, "cannot open '%s': is a directory", path);
    }

    tb_store *s = calloc(1, sizeof *s);
    if (!s) return tb_fail(msg, len, TB_ENOMEM, "cannot open '%s': out of memory", path);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->read_only = read_only;

    /* read_only opens read-write too, then sets query_only: a SQLITE_OPEN_READONLY
     * connection to a WAL database cannot remove the -wal and -shm it makes, and would leave
     * them beside a file it refused. (SQLite itself falls back to reading only when the
     * file is write-protected.) */
    int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
    /* This libsqlite3 may read "file:..." as a URI and ":memory:" as no file at all; a
     * name without a slash gets "./" so that SQLite opens the file that stat() saw. */
    char name[TB_PATH_LEN + 2];
    snprintf(name, sizeof name, "%s%s", strchr(path, '/') ? "" : "./", path);
    int rc;
    if (sqlite3_open_v2(name, &s->db, flags, NULL) != SQLITE_OK) {
        rc = tb_fail(msg, len, TB_EDB, "cannot open '%s': %s", path,
                     s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto err;
    }
    sqlite3_extended_result_codes(s->db, 0);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);

    rc = inspect(s, create, target, &s->found_version, msg, len);
    if (rc) goto err;
    /* from here on the file is known to be ours (or empty) and writing is allowed */
    if (!read_only && sqlite3_db_readonly(s->db, "main") == 1) {
        rc = tb_fail(msg, len, TB_EDB, "cannot open '%s' for writing: the file is read-only",
                     path);
        goto err;
    }
    rc = set_pragmas(s, msg, len);
    if (rc) goto err;
    if (!read_only) {
        rc = migrate(s, s->found_version, target, msg, len);
        if (rc) goto err;
    }
    *out = s;
    return TB_OK;
err:
    tb_store_close(s);
    return rc;
}

int tb_store_open(const char *path, int create, int read_only, tb_store **out, char *msg,
                  size_t len)
{
    return store_open(path, create, read_only, TB_SCHEMA_VERSION, out, msg, len);
}

int tb_store_create_at_version(const char *path, int version, char *msg, size_t len)
{
    if (version < 1 || version > TB_SCHEMA_VERSION)
        return tb_fail(msg, len, TB_EUSAGE, "schema version %d out of range (1..%d)", version,
                       TB_SCHEMA_VERSION);
    struct stat st;
    if (path && stat(path, &st) == 0)
        return tb_fail(msg, len, TB_EUSAGE, "cannot create '%s': it already exists", path);
    tb_store *s = NULL;
    int rc = store_open(path, 1, 0, version, &s, msg, len);
    tb_store_close(s);
    return rc;
}

void tb_store_close(tb_store *s)
{
    if (!s) return;
    for (int i = 0; i < Q_COUNT; i++) sqlite3_finalize(s->stmt[i]);
    sqlite3_close(s->db);   /* the last connection checkpoints and removes -wal and -shm */
    free(s);
}

int tb_store_found_version(const tb_store *s)
{
    return s ? s->found_version : -1;
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
    if ((rc = prep(s, Q_RUN_INSERT, &st, msg, len))) return rc;
    int i = 1, b = 0;
    b |= BIND_KEY_TEXT(st, i++, run->started_at);
    b |= BIND_TEXT(st, i++, run->ended_at);
    b |= BIND_TEXT(st, i++, run->command_line);
    b |= BIND_TEXT(st, i++, run->git_sha);
    b |= BIND_TEXT(st, i++, run->version);
    b |= BIND_KEY_TEXT(st, i++, run->status);
    b |= BIND_TEXT(st, i++, run->options_json);
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = db_fail(s, msg, len, "record a run");
    else run->id = sqlite3_last_insert_rowid(s->db);
    done(st);
    return rc;
}

static int run_update(tb_store *s, int which, int64_t run_id, const char *status, char *msg,
                      size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!valid_run_status(status)) return bad_run_status(status, msg, len);
    sqlite3_stmt *st = NULL;
    if ((rc = prep(s, which, &st, msg, len))) return rc;
    char now[32];
    utc_now(now, sizeof now);
    int i = 1, b = 0;
    b |= sqlite3_bind_text(st, i++, status, -1, SQLITE_TRANSIENT);
    if (which == Q_RUN_END) b |= BIND_TEXT(st, i++, now);
    b |= sqlite3_bind_int64(st, i++, run_id);
    if (b || sqlite3_step(st) != SQLITE_DONE)
        rc = db_fail(s, msg, len, "update a run");
    else if (sqlite3_changes(s->db) == 0)
        rc = tb_fail(msg, len, TB_EDB, "no run %lld in '%s'", (long long)run_id, s->path);
    done(st);
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

int tb_store_run_get(tb_store *s, int64_t run_id, tb_run_info *out, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_RUN_GET, &st, msg, len);
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
    } else if (step == SQLITE_DONE) {
        rc = tb_fail(msg, len, TB_EDB, "no run %lld in '%s'", (long long)run_id, s->path);
    } else {
        rc = db_fail(s, msg, len, "read a run");
    }
    done(st);
    return rc;
}

int tb_store_run_latest(tb_store *s, int64_t *run_id, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_RUN_LATEST, &st, msg, len);
    if (rc) return rc;
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) *run_id = sqlite3_column_int64(st, 0);
    else if (step == SQLITE_DONE) rc = tb_fail(msg, len, TB_EDB, "no runs in '%s'", s->path);
    else rc = db_fail(s, msg, len, "read the runs");
    done(st);
    return rc;
}

/* ---- environment -------------------------------------------------------------------------- */

int tb_store_put_environment(tb_store *s, int64_t run_id, const tb_environment *e, char *msg,
                             size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = prep(s, Q_ENV_PUT, &st, msg, len))) return rc;
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
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = db_fail(s, msg, len, "record the environment");
    done(st);
    return rc;
}

int tb_store_find_environment(tb_store *s, int64_t run_id, tb_environment *out, int *found,
                              char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_ENV_GET, &st, msg, len);
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
        rc = db_fail(s, msg, len, "read the environment");
    }
    done(st);
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

/* ---- variants and problems ---------------------------------------------------------------- */

/* Runs an "INSERT ... ON CONFLICT DO NOTHING" already bound, then, when it inserted nothing,
 * the matching find (bound by bind_find) to learn the existing row's id. */
static int insert_or_find(tb_store *s, sqlite3_stmt *ins, sqlite3_stmt *find, int64_t *id,
                          const char *what, char *msg, size_t len)
{
    int rc = TB_OK;
    if (sqlite3_step(ins) != SQLITE_DONE) {
        rc = db_fail(s, msg, len, what);
    } else if (sqlite3_changes(s->db) == 1) {
        *id = sqlite3_last_insert_rowid(s->db);
    } else {
        int step = sqlite3_step(find);
        if (step == SQLITE_ROW) *id = sqlite3_column_int64(find, 0);
        else if (step == SQLITE_DONE)
            rc = tb_fail(msg, len, TB_EDB, "cannot %s in '%s': conflicting row not found",
                         what, s->path);
        else rc = db_fail(s, msg, len, what);
    }
    done(ins);
    done(find);
    return rc;
}

int tb_store_put_variant(tb_store *s, int64_t run_id, tb_variant_info *v, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (!v->name[0]) return tb_fail(msg, len, TB_EINTERNAL, "cannot record a variant: no name");
    sqlite3_stmt *ins = NULL, *find = NULL;
    if ((rc = prep(s, Q_VAR_INSERT, &ins, msg, len))) return rc;
    if ((rc = prep(s, Q_VAR_FIND, &find, msg, len))) return rc;
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
        done(ins);
        done(find);
        return db_fail(s, msg, len, "record a variant");
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
    return b;
}

int tb_store_put_problem(tb_store *s, tb_problem_info *p, char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    if (isnan(p->alpha) || isnan(p->beta))
        return tb_fail(msg, len, TB_EINTERNAL, "cannot record a problem: alpha or beta is NaN");
    sqlite3_stmt *ins = NULL, *find = NULL;
    if ((rc = prep(s, Q_PROB_INSERT, &ins, msg, len))) return rc;
    if ((rc = prep(s, Q_PROB_FIND, &find, msg, len))) return rc;
    int b = bind_problem_key(ins, p);
    b |= BIND_TEXT(ins, 14, p->label);
    b |= bind_problem_key(find, p);
    if (b) {
        done(ins);
        done(find);
        return db_fail(s, msg, len, "record a problem");
    }
    return insert_or_find(s, ins, find, &p->id, "record a problem", msg, len);
}

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
    int rc = prep(s, Q_VARIANTS, &st, msg, len);
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
    if (rc == TB_OK && step != SQLITE_DONE) rc = db_fail(s, msg, len, "read the variants");
    done(st);
    if (rc) {
        free(arr);
        return rc;
    }
    *out = arr;
    *n = cnt;
    return TB_OK;
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
    if ((rc = prep(s, Q_MEAS_INSERT, &ins, msg, len))) return rc;
    if ((rc = prep(s, Q_SAMPLE_INSERT, &smp, msg, len))) return rc;
    if ((rc = tx_begin(s, msg, len, "store measurement"))) return rc;

    int64_t id = 0;
    if (bind_measurement(ins, m) || sqlite3_step(ins) != SQLITE_DONE) {
        rc = db_fail(s, msg, len, "store measurement");
        goto fail;
    }
    id = sqlite3_last_insert_rowid(s->db);
    done(ins);
    int n = m->samples_ms && m->n_samples > 0 ? m->n_samples : 0;
    for (int i = 0; i < n; i++) {
        int b = sqlite3_bind_int64(smp, 1, id);
        b |= sqlite3_bind_int(smp, 2, i);
        b |= bind_real(smp, 3, m->samples_ms[i]);
        b |= bind_real(smp, 4, m->samples_clock_mhz ? m->samples_clock_mhz[i] : NAN);
        if (b || sqlite3_step(smp) != SQLITE_DONE) {
            rc = db_fail(s, msg, len, "store the samples of a measurement");
            goto fail;
        }
        sqlite3_reset(smp);
    }
    done(smp);
    if ((rc = tx_commit(s, msg, len, "store measurement"))) return rc;
    m->id = id;
    return TB_OK;
fail:
    done(ins);
    done(smp);
    tx_rollback(s);
    return rc;
}

int tb_store_delete_problem_measurements(tb_store *s, int64_t run_id, int64_t problem_id,
                                         char *msg, size_t len)
{
    int rc = check_writable(s, msg, len);
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = prep(s, Q_MEAS_DELETE, &st, msg, len))) return rc;
    /* One statement is one transaction: its cascade to samples and metrics is part of it. */
    sqlite3_bind_int64(st, 1, run_id);
    sqlite3_bind_int64(st, 2, problem_id);
    if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(s, msg, len, "delete measurements");
    done(st);
    return rc;
}

int tb_store_results(tb_store *s, int64_t run_id, tb_result_row **rows, size_t *n, char *msg,
                     size_t len)
{
    *rows = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_RESULTS, &st, msg, len);
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
        COL_TEXT(st, c++, p->label);
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = db_fail(s, msg, len, "read the results");
    done(st);
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
    int rc = prep(s, Q_SAMPLES, &st, msg, len);
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
    if (rc == TB_OK && step != SQLITE_DONE) rc = db_fail(s, msg, len, "read the samples");
    done(st);
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

int tb_store_put_metrics(tb_store *s, int64_t measurement_id, const tb_metric *m, size_t n,
                         char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = tx_begin(s, msg, len, "begin storing metrics");
    if (rc) return rc;
    rc = prep(s, Q_METRIC_PUT, &st, msg, len);
    for (size_t i = 0; rc == TB_OK && i < n; i++) {
        sqlite3_bind_int64(st, 1, measurement_id);
        bind_text(st, 2, m[i].name, sizeof m[i].name);
        bind_real(st, 3, m[i].value);
        bind_text(st, 4, m[i].unit, sizeof m[i].unit);
        sqlite3_bind_int(st, 5, m[i].available ? 1 : 0);
        bind_text(st, 6, m[i].reason, sizeof m[i].reason);
        if (sqlite3_step(st) != SQLITE_DONE) rc = db_fail(s, msg, len, "store a metric");
        done(st);
    }
    if (rc) { tx_rollback(s); return rc; }
    return tx_commit(s, msg, len, "commit the metrics");
}

int tb_store_metrics(tb_store *s, int64_t measurement_id, tb_metric **out, size_t *n,
                     char *msg, size_t len)
{
    *out = NULL;
    *n = 0;
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_METRICS, &st, msg, len);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, measurement_id);
    tb_metric *a = NULL;
    size_t cnt = 0, cap = 0;
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        tb_metric *x = next_row((void **)&a, &cap, cnt, sizeof *x);
        if (!x) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory reading metrics"); break; }
        cnt++;
        col_text(st, 0, x->name, sizeof x->name);
        x->value = col_real(st, 1);
        col_text(st, 2, x->unit, sizeof x->unit);
        x->available = sqlite3_column_int(st, 3);
        col_text(st, 4, x->reason, sizeof x->reason);
    }
    if (rc == TB_OK && step != SQLITE_DONE) rc = db_fail(s, msg, len, "read the metrics");
    done(st);
    if (rc || cnt == 0) { free(a); return rc; }
    *out = a;
    *n = cnt;
    return TB_OK;
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
    if ((rc = prep(s, Q_CAL_INSERT, &st, msg, len))) return rc;
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
    /* one statement is one transaction */
    if (b || sqlite3_step(st) != SQLITE_DONE) rc = db_fail(s, msg, len, "record a calibration");
    else c->id = sqlite3_last_insert_rowid(s->db);
    done(st);
    return rc;
}

int tb_store_latest_calibration(tb_store *s, const char *gpu_uuid, tb_calibration *out,
                                int *found, char *msg, size_t len)
{
    *found = 0;
    if (!gpu_uuid || !gpu_uuid[0]) return TB_OK;
    sqlite3_stmt *st = NULL;
    int rc = prep(s, Q_CAL_LATEST, &st, msg, len);
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
        *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = db_fail(s, msg, len, "read the calibrations");
    }
    done(st);
    return rc;
}
