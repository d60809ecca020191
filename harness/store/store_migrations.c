/* store_migrations.c - the schema's whole history (see store_int.h, docs/schema.md): the
 * migration steps, one per version, and the tables a database of each version must have.
 * Nothing here runs anything: store_schema.c applies the steps when it opens a file.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* as in every file of the store */
#endif
#include "store/store_int.h"
#include "store/store.h"

/* tbs_migrations[i] takes user_version i to i + 1 and ends by setting it; each runs in its own
 * transaction. Only ever append: a step, once released, is never edited (a database made by
 * it exists somewhere). TB_SCHEMA_VERSION must equal the number of steps. */
const char *const tbs_migrations[] = {
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

    /* 4: where a run's wall time went (common/phases.h), as JSON; NULL for older runs */
    "ALTER TABLE runs ADD COLUMN phases_json TEXT;\n"
    "PRAGMA user_version = 4;\n",

    /* 5: a run's identity across databases (merge: a run already merged is not merged again);
     * 128 random bits, given to the runs that exist when migrating */
    "ALTER TABLE runs ADD COLUMN uid TEXT;\n"
    "UPDATE runs SET uid = lower(hex(randomblob(16)));\n"
    "CREATE UNIQUE INDEX runs_uid ON runs (uid);\n"
    "PRAGMA user_version = 5;\n",

    /* 6: the constants tilebench search fitted, per GPU model and family (docs/search.md) */
    "CREATE TABLE search_models (\n"
    "  id          INTEGER PRIMARY KEY,\n"
    "  created_at  TEXT NOT NULL,\n"
    "  gpu_name    TEXT NOT NULL,\n"
    "  family      TEXT NOT NULL,\n"
    "  n_obs       INTEGER NOT NULL,\n"
    "  error       REAL,\n"
    "  model_json  TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX search_models_gpu ON search_models (gpu_name, family, id);\n"
    "PRAGMA user_version = 6;\n",

    /* 7: the per-tensor scales of FP8 problems (variant.h, growth 1), in the problems' key.
     * SQLite cannot change a UNIQUE constraint in place: the table is made again with its ids
     * (kept aside in a temporary table). The measurements' references to it are checked at
     * commit (defer_foreign_keys): dropping the old table counts them as broken, inserting
     * each id again into the new one counts them mended. */
    "PRAGMA defer_foreign_keys = ON;\n"
    "CREATE TEMP TABLE problems_v6 AS SELECT * FROM problems;\n"
    "DROP TABLE problems;\n"
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
    "  scale_a  REAL NOT NULL DEFAULT 0,\n"
    "  scale_b  REAL NOT NULL DEFAULT 0,\n"
    "  UNIQUE (op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, scale_a,\n"
    "          scale_b)\n"
    ");\n"
    "INSERT INTO problems (id, op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha,\n"
    "                      beta, label)\n"
    "  SELECT id, op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, label\n"
    "  FROM problems_v6;\n"
    "DROP TABLE problems_v6;\n"
    "PRAGMA user_version = 7;\n",

    /* 8: the FP8 tensor ceiling of doctor --calibrate beside the BF16 one (issue 23); NULL in
     * the calibrations made before */
    "ALTER TABLE calibration ADD COLUMN fp8_tflops REAL;\n"
    "ALTER TABLE calibration ADD COLUMN fp8_shape TEXT;\n"
    "ALTER TABLE calibration ADD COLUMN fp8_sm_clock_mhz REAL;\n"
    "PRAGMA user_version = 8;\n",

    /* 9: attention forward problems (issue 33; variant.h, growth 2): their sizes, causal flag
     * and softmax scale beside GEMM's columns, in the problems' key. A GEMM problem has 0 in
     * them; an attention problem has 0 in GEMM's own columns (m, n, k, the leading dimensions,
     * alpha, beta, the scales) and its layout ("bhsd", "bshd") in layouts. The table is made
     * again as in step 7, every id kept; the problems there get 0. */
    "PRAGMA defer_foreign_keys = ON;\n"
    "CREATE TEMP TABLE problems_v8 AS SELECT * FROM problems;\n"
    "DROP TABLE problems;\n"
    "CREATE TABLE problems (\n"
    "  id             INTEGER PRIMARY KEY,\n"
    "  op             TEXT NOT NULL,\n"
    "  m              INTEGER NOT NULL,\n"
    "  n              INTEGER NOT NULL,\n"
    "  k              INTEGER NOT NULL,\n"
    "  batch          INTEGER NOT NULL,\n"
    "  dtypes         TEXT NOT NULL,\n"
    "  layouts        TEXT NOT NULL,\n"
    "  lda            INTEGER NOT NULL,\n"
    "  ldb            INTEGER NOT NULL,\n"
    "  ldc            INTEGER NOT NULL,\n"
    "  ldd            INTEGER NOT NULL,\n"
    "  alpha          REAL NOT NULL,\n"
    "  beta           REAL NOT NULL,\n"
    "  label          TEXT,\n"
    "  scale_a        REAL NOT NULL DEFAULT 0,\n"
    "  scale_b        REAL NOT NULL DEFAULT 0,\n"
    "  heads          INTEGER NOT NULL DEFAULT 0,\n"
    "  heads_kv       INTEGER NOT NULL DEFAULT 0,\n"
    "  seq_q          INTEGER NOT NULL DEFAULT 0,\n"
    "  seq_k          INTEGER NOT NULL DEFAULT 0,\n"
    "  head_dim       INTEGER NOT NULL DEFAULT 0,\n"
    "  causal         INTEGER NOT NULL DEFAULT 0 CHECK (causal IN (0, 1)),\n"
    "  softmax_scale  REAL NOT NULL DEFAULT 0,\n"
    "  UNIQUE (op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, scale_a,\n"
    "          scale_b, heads, heads_kv, seq_q, seq_k, head_dim, causal, softmax_scale)\n"
    ");\n"
    "INSERT INTO problems (id, op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha,\n"
    "                      beta, label, scale_a, scale_b)\n"
    "  SELECT id, op, m, n, k, batch, dtypes, layouts, lda, ldb, ldc, ldd, alpha, beta, label,\n"
    "         scale_a, scale_b\n"
    "  FROM problems_v8;\n"
    "DROP TABLE problems_v8;\n"
    "PRAGMA user_version = 9;\n",
};

_Static_assert(sizeof tbs_migrations / sizeof tbs_migrations[0] == TB_SCHEMA_VERSION,
               "TB_SCHEMA_VERSION must equal the number of migration steps");

/* The tables that a database of version v must have: tables[i] appears at version i + 1. */
static const char *const tables_v1[] = {"runs", "environment", "variants", "problems",
                                        "measurements", "samples", NULL};
static const char *const tables_v2[] = {"metrics", NULL};
static const char *const tables_v3[] = {"calibration", NULL};
static const char *const tables_v4[] = {NULL};   /* a column of runs, no table */
static const char *const tables_v5[] = {NULL};   /* a column of runs, no table */
static const char *const tables_v6[] = {"search_models", NULL};
static const char *const tables_v7[] = {NULL};   /* columns of problems, no table */
static const char *const tables_v8[] = {NULL};   /* columns of calibration, no table */
static const char *const tables_v9[] = {NULL};   /* columns of problems, no table */
const char *const *const tbs_tables_at[] = {tables_v1, tables_v2, tables_v3, tables_v4, tables_v5,
                                            tables_v6, tables_v7, tables_v8, tables_v9};
_Static_assert(sizeof tbs_tables_at / sizeof tbs_tables_at[0] == TB_SCHEMA_VERSION,
               "one table list per schema version");
