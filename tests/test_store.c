/* test_store.c - tests of harness/store/ (store.h) and of the enum names of harness/common/record.c.
 *
 * Focus: files the store must refuse without touching them (garbage, newer schema, another
 * program's database, missing), migration of an older schema, and round trips of every
 * record field, NaN included. The hostile files are made with sqlite3 directly, as SQLite's
 * own tests make theirs; the store itself is only ever used through store.h.
 * Every case works in a fresh mkdtemp directory, removed at the end.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, getcwd, lstat */
#endif
#include "store/store.h"
#include "common/wire.h"
#include "common/tb.h"
#include "tb_test.h"

#include <sqlite3.h>

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char g_dir[256];

static const char *at(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int exists_suffix(const char *path, const char *suffix)
{
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    return exists(p);
}

static void rm_rf(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", path, e->d_name);
            rm_rf(p);
        }
        if (d) closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* The whole file, malloc'd; *n its size. NULL if unreadable. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static int same_bytes(const char *path, const char *before, size_t n)
{
    size_t m = 0;
    char *now = slurp(path, &m);
    int same = now && m == n && memcmp(now, before, n) == 0;
    free(now);
    return same;
}

static void write_bytes(const char *path, const char *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
}

/* Runs sql on path with a plain sqlite3 connection; returns the sqlite code. */
static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* One integer from a query on path, or -999. */
static long long raw_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -999;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* ---- record builders ---------------------------------------------------------------------- */

static tb_store *open_new(const char *name)
{
    tb_store *s = NULL;
    char msg[TB_MSG_LEN];
    if (tb_store_open(at(name), 1, 0, &s, msg, sizeof msg) != TB_OK) {
        printf("cannot set up %s: %s\n", name, msg);
        exit(2);
    }
    return s;
}

static int64_t new_run(tb_store *s)
{
    tb_run_info r;
    memset(&r, 0, sizeof r);
    snprintf(r.command_line, sizeof r.command_line, "tilebench sweep --shapes x");
    snprintf(r.version, sizeof r.version, "%s", TB_VERSION);
    snprintf(r.options_json, sizeof r.options_json, "{\"shapes\":\"x\"}");
    char msg[TB_MSG_LEN];
    if (tb_store_run_begin(s, &r, msg, sizeof msg) != TB_OK) {
        printf("cannot begin run: %s\n", msg);
        exit(2);
    }
    return r.id;
}

static int64_t new_variant(tb_store *s, int64_t run, const char *name)
{
    tb_variant_info v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "%s", name);
    snprintf(v.family, sizeof v.family, "simt");
    snprintf(v.params_json, sizeof v.params_json, "{\"tile_m\":128,\"schedule\":\"pingpong\"}");
    snprintf(v.sass, sizeof v.sass, "sm_90a");
    snprintf(v.file, sizeof v.file, "lib/tilebench/variants/simt.so");
    snprintf(v.sha256, sizeof v.sha256, "%064d", 7);
    v.index = 3;
    char msg[TB_MSG_LEN];
    if (tb_store_put_variant(s, run, &v, msg, sizeof msg) != TB_OK) {
        printf("cannot put variant: %s\n", msg);
        exit(2);
    }
    return v.id;
}

static tb_problem_info problem(int64_t m, int64_t n, int64_t k)
{
    tb_problem_info p;
    memset(&p, 0, sizeof p);
    snprintf(p.op, sizeof p.op, "gemm");
    p.m = m, p.n = n, p.k = k, p.batch = 1;
    snprintf(p.dtypes, sizeof p.dtypes, "bf16,bf16,bf16,bf16,f32");
    snprintf(p.layouts, sizeof p.layouts, "tnr");
    p.lda = k, p.ldb = k, p.ldc = n, p.ldd = n;
    p.alpha = 1.0, p.beta = 0.0;
    snprintf(p.label, sizeof p.label, "test.%lldx%lld", (long long)m, (long long)n);
    return p;
}

static int64_t new_problem(tb_store *s, int64_t m, int64_t n, int64_t k)
{
    tb_problem_info p = problem(m, n, k);
    char msg[TB_MSG_LEN];
    if (tb_store_put_problem(s, &p, msg, sizeof msg) != TB_OK) {
        printf("cannot put problem: %s\n", msg);
        exit(2);
    }
    return p.id;
}

/* A measurement with nothing known: NaN, -1, "". */
static tb_measurement blank(int64_t run, int64_t var, int64_t prob)
{
    tb_measurement m;
    memset(&m, 0, sizeof m);
    m.run_id = run, m.variant_id = var, m.problem_id = prob;
    m.status = TB_STATUS_CRASHED;
    m.disposition = TB_DISP_NOT_VERIFIED;
    m.trials = -1, m.n_bad = -1, m.n_nonfinite = -1, m.n_samples = -1, m.warmup = -1;
    m.workspace_bytes = -1;
    m.max_abs_err = m.rel_fro_err = m.atol = m.rtol = NAN;
    m.median_ms = m.mean_ms = m.stdev_ms = m.min_ms = m.max_ms = m.rse = NAN;
    m.tflops = m.clock_mhz = m.first_launch_ms = NAN;
    return m;
}

static double g_ms[5] = {0.51, 0.5, 0.52, 0.49, 0.5};
static double g_clk[5] = {1980, 1975, NAN, 1980, 1970};

static tb_measurement full(int64_t run, int64_t var, int64_t prob)
{
    tb_measurement m = blank(run, var, prob);
    m.status = TB_STATUS_OK;
    m.disposition = TB_DISP_PASSED;
    m.trials = 2, m.max_abs_err = 0.125, m.rel_fro_err = 1e-3, m.n_bad = 0, m.n_nonfinite = 0;
    m.atol = 1e-2, m.rtol = 5e-3;
    snprintf(m.method, sizeof m.method, "cold_events");
    snprintf(m.stop_reason, sizeof m.stop_reason, "rse<0.5%%");
    m.n_samples = 5, m.warmup = 3;
    m.median_ms = 0.5, m.mean_ms = 0.504, m.stdev_ms = 0.011, m.min_ms = 0.49, m.max_ms = 0.52;
    m.rse = 0.004, m.tflops = 274.877906944, m.clock_mhz = 1976.25, m.first_launch_ms = 12.5;
    m.workspace_bytes = 4096;
    snprintf(m.describe, sizeof m.describe, "algo 7 tile 128x256");
    snprintf(m.extra_json, sizeof m.extra_json, "{\"low_clock_samples\":1}");
    m.samples_ms = g_ms;
    m.samples_clock_mhz = g_clk;
    return m;
}

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static int count_rows(tb_store *s, int64_t run)
{
    tb_result_row *rows = NULL;
    size_t n = 0;
    char msg[TB_MSG_LEN];
    if (tb_store_results(s, run, &rows, &n, msg, sizeof msg) != TB_OK) return -1;
    free(rows);
    return (int)n;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    snprintf(g_dir, sizeof g_dir, "%s/tb_store_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }

    /* ---- 1: create, open, reopen ---- */
    TB_CASE("store-1.1", "create makes a missing directory and a current-version database") {
        tb_store *s = NULL;
        const char *p = at("results/a.db");
        TB_CHECK(tb_store_open(p, 1, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(s && tb_store_found_version(s) == 0);
        tb_store_close(s);
        TB_CHECK(exists(p));
        TB_CHECK(!exists_suffix(p, "-wal"));
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        TB_CHECK(raw_int(p, "PRAGMA journal_mode = WAL") != -999);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'calibration'") == 1);
    }

    TB_CASE("store-1.2", "reopen finds the current version and keeps the rows") {
        tb_store *s = open_new("b.db");
        int64_t run = new_run(s);
        tb_store_close(s);
        s = NULL;
        TB_CHECK(tb_store_open(at("b.db"), 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_found_version(s) == TB_SCHEMA_VERSION);
        int64_t latest = 0;
        TB_CHECK(tb_store_run_latest(s, &latest, msg, sizeof msg) == TB_OK && latest == run);
        tb_store_close(s);
    }

    TB_CASE("store-1.3", "an empty (0 byte) file is initialised when creating") {
        write_bytes(at("empty.db"), "", 0);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("empty.db"), 1, 0, &s, msg, sizeof msg) == TB_OK);
        tb_store_close(s);
        TB_CHECK(raw_int(at("empty.db"), "PRAGMA user_version") == TB_SCHEMA_VERSION);
    }

    TB_CASE("store-1.4", "a missing file without create is refused and not created") {
        tb_store *s = (tb_store *)1;
        int rc = tb_store_open(at("none.db"), 0, 0, &s, msg, sizeof msg);
        TB_CHECK(rc == TB_EDB);
        TB_CHECK(s == NULL);
        TB_CHECK_STR_CONTAINS(msg, "cannot open '");
        TB_CHECK_STR_CONTAINS(msg, "none.db': no such file");
        TB_CHECK(!exists(at("none.db")));
    }

    TB_CASE("store-1.5", "read-only open of a missing file is refused, even with create") {
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("none2.db"), 1, 1, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no such file");
        TB_CHECK(!exists(at("none2.db")));
        TB_CHECK(tb_store_open(at("nodir/x.db"), 0, 1, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK(!exists(at("nodir")));
    }

    TB_CASE("store-1.6", "a read-only store reads and refuses every write") {
        tb_store *w = open_new("ro.db");
        int64_t run = new_run(w);
        tb_store_close(w);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("ro.db"), 0, 1, &s, msg, sizeof msg) == TB_OK);
        tb_run_info r;
        TB_CHECK(tb_store_run_get(s, run, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_run_set_status(s, run, "failed", msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "opened read-only");
        tb_measurement m = blank(run, 1, 1);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_EDB);
        tb_problem_info p = problem(8, 8, 8);
        TB_CHECK(tb_store_put_problem(s, &p, msg, sizeof msg) == TB_EDB);
        tb_store_close(s);
        TB_CHECK(!exists_suffix(at("ro.db"), "-wal") && !exists_suffix(at("ro.db"), "-shm"));
    }

    TB_CASE("store-1.6b", "a run's phases (where its time went) round-trip; none on a new run; no such run refused") {
        tb_store *w = open_new("phases.db");
        int64_t run = new_run(w);
        tb_run_info r;
        TB_CHECK(tb_store_run_get(w, run, &r, msg, sizeof msg) == TB_OK && r.phases_json[0] == 0);
        tb_phases ph, back;
        memset(&ph, 0, sizeof ph);
        ph.s[TB_PH_TIMING] = 12.5;
        ph.s[TB_PH_ENERGY] = 3.25;
        ph.total_s = 20;
        TB_CHECK(tb_store_run_set_phases(w, run, &ph, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_run_get(w, run, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_phases_from_json(r.phases_json, &back, msg, sizeof msg) == TB_OK &&
                 back.s[TB_PH_TIMING] == 12.5 && back.s[TB_PH_ENERGY] == 3.25 && back.total_s == 20);
        TB_CHECK(tb_store_run_set_phases(w, run + 100, &ph, msg, sizeof msg) == TB_EDB);
        tb_store_close(w);
    }

    TB_CASE("store-1.7", "a directory is refused") {
        tb_store *s = NULL;
        mkdir(at("adir"), 0777);
        TB_CHECK(tb_store_open(at("adir"), 1, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "is a directory");
    }

    TB_CASE("store-1.8", "an empty file is refused without create and when read-only") {
        write_bytes(at("empty2.db"), "", 0);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("empty2.db"), 0, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "is empty");
        TB_CHECK(tb_store_open(at("empty2.db"), 1, 1, &s, msg, sizeof msg) == TB_EDB);
        size_t n = 0;
        char *b = slurp(at("empty2.db"), &n);
        TB_CHECK(b && n == 0);
        free(b);
    }

    TB_CASE("store-1.9", "two stores on one file see each other's commits (WAL)") {
        tb_store *a = open_new("two.db"), *b = NULL;
        TB_CHECK(tb_store_open(at("two.db"), 0, 0, &b, msg, sizeof msg) == TB_OK);
        int64_t run = new_run(a), latest = 0;
        TB_CHECK(tb_store_run_latest(b, &latest, msg, sizeof msg) == TB_OK && latest == run);
        tb_store_close(a);
        tb_store_close(b);
        TB_CHECK(!exists_suffix(at("two.db"), "-wal"));
    }

    TB_CASE("store-1.10", "odd names are plain files: 'file:x.db', ':memory:'") {
        char cwd[512];
        TB_CHECK(getcwd(cwd, sizeof cwd) != NULL && chdir(g_dir) == 0);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open("file:x.db?mode=memory", 1, 0, &s, msg, sizeof msg) == TB_OK);
        tb_store_close(s);
        TB_CHECK(exists(at("file:x.db?mode=memory")));
        s = NULL;
        TB_CHECK(tb_store_open(":memory:", 1, 0, &s, msg, sizeof msg) == TB_OK);
        tb_store_close(s);
        TB_CHECK(exists(at(":memory:")));
        TB_CHECK(chdir(cwd) == 0);
    }

    /* ---- 2: files that must be refused and left alone ---- */
    TB_CASE("store-2.1", "a garbage file is refused, byte-identical, no -wal/-shm") {
        const char garbage[] = "this is a text file, not a database\n0123456789abcdef"
                               "0123456789abcdef0123456789abcdef0123456789abcdef";
        write_bytes(at("garbage.db"), garbage, sizeof garbage);
        tb_store *s = (tb_store *)1;
        int rc = tb_store_open(at("garbage.db"), 1, 0, &s, msg, sizeof msg);
        TB_CHECK(rc == TB_EDB);
        TB_CHECK(s == NULL);
        TB_CHECK_STR_CONTAINS(msg, "garbage.db' is not a tilebench database: file is not a database");
        TB_CHECK(same_bytes(at("garbage.db"), garbage, sizeof garbage));
        TB_CHECK(!exists_suffix(at("garbage.db"), "-wal"));
        TB_CHECK(!exists_suffix(at("garbage.db"), "-shm"));
        TB_CHECK(!exists_suffix(at("garbage.db"), "-journal"));
    }

    TB_CASE("store-2.2", "a garbage file is refused when read-only, and a short one too") {
        write_bytes(at("short.db"), "xy", 2);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("short.db"), 0, 1, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "is not a tilebench database");
        TB_CHECK(tb_store_open(at("short.db"), 1, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK(same_bytes(at("short.db"), "xy", 2));
        TB_CHECK(!exists_suffix(at("short.db"), "-wal"));
    }

    TB_CASE("store-2.3", "a newer schema is refused and the file left byte-identical") {
        tb_store *s = open_new("newer.db");
        new_run(s);
        tb_store_close(s);
        char newer[64];   /* one past this build's version, whatever it is */
        snprintf(newer, sizeof newer, "PRAGMA user_version = %d", TB_SCHEMA_VERSION + 1);
        TB_CHECK(raw_exec(at("newer.db"), newer) == SQLITE_OK);
        size_t n = 0;
        char *before = slurp(at("newer.db"), &n);
        s = NULL;
        TB_CHECK(tb_store_open(at("newer.db"), 1, 0, &s, msg, sizeof msg) == TB_EDB);
        char want[128];
        snprintf(want, sizeof want, "newer.db' has schema version %d, newer than this tilebench "
                 "(%d): upgrade tilebench", TB_SCHEMA_VERSION + 1, TB_SCHEMA_VERSION);
        TB_CHECK_STR_CONTAINS(msg, want);
        TB_CHECK(tb_store_open(at("newer.db"), 0, 1, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "upgrade tilebench");
        TB_CHECK(before && same_bytes(at("newer.db"), before, n));
        TB_CHECK(!exists_suffix(at("newer.db"), "-wal"));
        TB_CHECK(!exists_suffix(at("newer.db"), "-shm"));
        free(before);
    }

    TB_CASE("store-2.4", "another program's database (version 0, own tables) is refused") {
        TB_CHECK(raw_exec(at("foreign.db"), "CREATE TABLE contacts (name TEXT);"
                                            "INSERT INTO contacts VALUES ('ada')") == SQLITE_OK);
        size_t n = 0;
        char *before = slurp(at("foreign.db"), &n);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("foreign.db"), 1, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "foreign.db' is not a tilebench database: it has a table "
                                   "'contacts'");
        TB_CHECK(before && same_bytes(at("foreign.db"), before, n));
        TB_CHECK(raw_int(at("foreign.db"), "SELECT count(*) FROM sqlite_master") == 1);
        TB_CHECK(!exists_suffix(at("foreign.db"), "-wal"));
        free(before);
    }

    TB_CASE("store-2.5", "a database with a user_version but not our application id is refused") {
        TB_CHECK(raw_exec(at("foreign2.db"), "CREATE TABLE runs (x);"
                                             "PRAGMA user_version = 1") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("foreign2.db"), 1, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "is not a tilebench database: application id");
        TB_CHECK(raw_int(at("foreign2.db"), "PRAGMA user_version") == 1);
    }

    TB_CASE("store-2.6", "read-only open of an older schema is refused, telling to migrate") {
        TB_CHECK(tb_store_create_at_version(at("v1ro.db"), 1, msg, sizeof msg) == TB_OK);
        size_t n = 0;
        char *before = slurp(at("v1ro.db"), &n);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(at("v1ro.db"), 0, 1, &s, msg, sizeof msg) == TB_EDB);
        char want[128];
        snprintf(want, sizeof want, "v1ro.db' was written by an older tilebench (schema version 1; "
                 "this one reads %d)", TB_SCHEMA_VERSION);
        TB_CHECK_STR_CONTAINS(msg, want);
        TB_CHECK_STR_CONTAINS(msg, "run 'tilebench migrate --db ");
        TB_CHECK(before && same_bytes(at("v1ro.db"), before, n));
        TB_CHECK(raw_int(at("v1ro.db"), "PRAGMA user_version") == 1);
        free(before);
    }

    TB_CASE("store-2.7", "a tilebench database missing one of its tables is refused") {
        tb_store *s = open_new("damaged.db");
        tb_store_close(s);
        TB_CHECK(raw_exec(at("damaged.db"), "DROP TABLE metrics") == SQLITE_OK);
        s = NULL;
        TB_CHECK(tb_store_open(at("damaged.db"), 0, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "table 'metrics' of schema version 2 is missing");
    }

    /* ---- 3: migrations ---- */
    TB_CASE("store-3.1", "a v1 database migrates to the current version and keeps its rows") {
        const char *p = at("v1.db");
        TB_CHECK(tb_store_create_at_version(p, 1, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 0);
        TB_CHECK(raw_exec(p, "INSERT INTO runs (id, started_at, status, command_line) "
                             "VALUES (5, '2025-01-01T00:00:00Z', 'complete', 'old one');"
                             "INSERT INTO problems (op,m,n,k,batch,dtypes,layouts,lda,ldb,ldc,"
                             "ldd,alpha,beta) VALUES ('gemm',1,2,3,1,'f32','tnr',3,3,2,2,1,0);"
                             "INSERT INTO variants (run_id, name) VALUES (5, 'v');"
                             "INSERT INTO measurements (run_id, variant_id, problem_id, status,"
                             " disposition, median_ms) VALUES (5, 1, 1, 'ok', 'passed', 0.25);"
                             "INSERT INTO samples VALUES (1, 0, 0.25, NULL)") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_found_version(s) == 1);
        tb_run_info r;
        TB_CHECK(tb_store_run_get(s, 5, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(strcmp(r.command_line, "old one") == 0 && strcmp(r.status, "complete") == 0);
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_results(s, 5, &rows, &n, msg, sizeof msg) == TB_OK && n == 1);
        TB_CHECK(n == 1 && rows[0].m.median_ms == 0.25 && isnan(rows[0].m.mean_ms));
        free(rows);
        tb_store_close(s);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'calibration'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM samples") == 1);
        s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_OK);   /* now readable */
        tb_store_close(s);
    }

    TB_CASE("store-3.2", "the test hook refuses versions out of range and existing files") {
        TB_CHECK(tb_store_create_at_version(at("v0.db"), 0, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "schema version 0 out of range");
        TB_CHECK(tb_store_create_at_version(at("vnext.db"), TB_SCHEMA_VERSION + 1, msg, sizeof msg) ==
                 TB_EUSAGE);
        TB_CHECK(!exists(at("v0.db")) && !exists(at("vnext.db")));
        TB_CHECK(tb_store_create_at_version(at("v1.db"), 1, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "already exists");
    }

    TB_CASE("store-3.3", "a failed migration step leaves the older version in place") {
        const char *p = at("v1clash.db");
        TB_CHECK(tb_store_create_at_version(p, 1, msg, sizeof msg) == TB_OK);
        /* a leftover table of the step's name makes step 2 fail half-way */
        TB_CHECK(raw_exec(p, "CREATE TABLE metrics (x)") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "cannot migrate '");
        TB_CHECK_STR_CONTAINS(msg, "to schema version 2");
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 1);
    }

    TB_CASE("store-3.3b", "a migration over several steps is one transaction: a failing last step "
                          "leaves the first version, not a half-migrated one") {
        const char *p = at("v1clash3.db");
        TB_CHECK(tb_store_create_at_version(p, 1, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(p, "CREATE TABLE calibration (x)") == SQLITE_OK);   /* step 3 fails */
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "to schema version 3");
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 0);
    }

    TB_CASE("store-3.4", "a v2 database migrates to the current version: its rows and metrics kept, calibration and runs.phases_json added") {
        const char *p = at("v2.db");
        TB_CHECK(tb_store_create_at_version(p, 2, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 2);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'metrics'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'calibration'") == 0);
        TB_CHECK(raw_exec(p, "INSERT INTO runs (id, started_at, status) "
                             "VALUES (3, '2026-11-23T00:00:00Z', 'complete');"
                             "INSERT INTO environment (run_id, gpu_uuid) VALUES (3, 'GPU-old');"
                             "INSERT INTO problems (op,m,n,k,batch,dtypes,layouts,lda,ldb,ldc,"
                             "ldd,alpha,beta) VALUES ('gemm',4,4,4,1,'f32','tnr',4,4,4,4,1,0);"
                             "INSERT INTO variants (run_id, name) VALUES (3, 'v');"
                             "INSERT INTO measurements (run_id, variant_id, problem_id, status,"
                             " disposition, median_ms) VALUES (3, 1, 1, 'ok', 'passed', 0.5);"
                             "INSERT INTO metrics (measurement_id, name, value, unit, available)"
                             " VALUES (1, 'dram__bytes_read.sum', 4096, 'bytes', 1)") == SQLITE_OK);
        size_t n0 = 0;
        char *before = slurp(p, &n0);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_EDB);   /* read-only: refused */
        TB_CHECK_STR_CONTAINS(msg, "written by an older tilebench (schema version 2;");
        TB_CHECK(before && same_bytes(p, before, n0));
        free(before);
        s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_found_version(s) == 2);
        tb_metric *mt = NULL;
        size_t nm = 0;
        TB_CHECK(tb_store_metrics(s, 1, &mt, &nm, msg, sizeof msg) == TB_OK && nm == 1);
        TB_CHECK(nm == 1 && mt[0].value == 4096 && !strcmp(mt[0].name, "dram__bytes_read.sum"));
        free(mt);
        tb_environment e;
        TB_CHECK(tb_store_get_environment(s, 3, &e, msg, sizeof msg) == TB_OK &&
                 !strcmp(e.gpu_uuid, "GPU-old"));
        tb_calibration c;
        int found = 1;
        TB_CHECK(tb_store_latest_calibration(s, "GPU-old", &c, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found == 0);
        tb_store_close(s);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'phases_json'") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM calibration") == 0);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM metrics") == 1);
        /* schema 5: the run that was there got a uid of 32 hex digits */
        TB_CHECK(raw_int(p, "SELECT count(*) FROM runs WHERE length(uid) = 32 AND uid GLOB '[0-9a-f]*' "
                            "AND uid NOT GLOB '*[^0-9a-f]*'") == 1);
        s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_OK);   /* now readable */
        tb_store_close(s);
    }

    TB_CASE("store-3.6", "schema 6: a v5 file gains search_models; a model is kept per GPU model and family, newest first") {
        const char *p = at("v5.db");
        TB_CHECK(tb_store_create_at_version(p, 5, msg, sizeof msg) == TB_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        char js[256] = "", when[32] = "";
        int n = 0, found = 1;
        TB_CHECK(tb_store_latest_search_model(s, "GPU A", "wgmma", js, sizeof js, &n, when, sizeof when, &found,
                                              msg, sizeof msg) == TB_OK && found == 0);
        TB_CHECK(tb_store_put_search_model(s, "GPU A", "wgmma", 10, 0.05, "{\"c\":[1]}", msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_put_search_model(s, "GPU A", "wgmma", 20, NAN, "{\"c\":[2]}", msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_put_search_model(s, "GPU B", "wgmma", 30, 0.01, "{\"c\":[3]}", msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_latest_search_model(s, "GPU A", "wgmma", js, sizeof js, &n, when, sizeof when, &found,
                                              msg, sizeof msg) == TB_OK && found == 1);
        TB_CHECK(n == 20 && !strcmp(js, "{\"c\":[2]}") && strlen(when) == 20);
        TB_CHECK(tb_store_latest_search_model(s, "GPU A", "mma_sync", js, sizeof js, &n, when, sizeof when, &found,
                                              msg, sizeof msg) == TB_OK && found == 0);
        TB_CHECK(tb_store_put_search_model(s, "", "wgmma", 1, 0, "{}", msg, sizeof msg) != TB_OK);
        tb_store_close(s);
        s = NULL;
        TB_CHECK(tb_store_open(p, 0, 1, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_put_search_model(s, "GPU A", "wgmma", 1, 0, "{}", msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "read-only");
        tb_store_close(s);
    }

    TB_CASE("store-3.5", "a failed step 3 leaves a v2 database at version 2") {
        const char *p = at("v2clash.db");
        TB_CHECK(tb_store_create_at_version(p, 2, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(p, "CREATE TABLE calibration (x)") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "to schema version 3");
        TB_CHECK(raw_int(p, "PRAGMA user_version") == 2);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM sqlite_master WHERE name = 'calibration_gpu'") == 0);
    }

    /* ---- 4: runs, environment, variants, problems ---- */
    TB_CASE("store-4.1", "runs: begin, get, end, latest; none is an error") {
        tb_store *s = open_new("runs.db");
        int64_t latest = 0;
        TB_CHECK(tb_store_run_latest(s, &latest, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no runs in '");
        int64_t a = new_run(s), b = new_run(s);
        TB_CHECK(b > a);
        TB_CHECK(tb_store_run_latest(s, &latest, msg, sizeof msg) == TB_OK && latest == b);
        tb_run_info r;
        TB_CHECK(tb_store_run_get(s, a, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(strcmp(r.status, "running") == 0 && r.started_at[0] && !r.ended_at[0]);
        TB_CHECK(strcmp(r.options_json, "{\"shapes\":\"x\"}") == 0);
        TB_CHECK(tb_store_run_end(s, a, "complete", msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_run_get(s, a, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(strcmp(r.status, "complete") == 0 && strlen(r.ended_at) == 20);
        TB_CHECK(tb_store_run_set_status(s, a, "interrupted", msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_run_set_status(s, a, "planned", msg, sizeof msg) == TB_OK);
        tb_store_close(s);
        /* every run has its own uid (merge's identity of a run), 32 hex digits, unique */
        const char *p = at("runs.db");
        TB_CHECK(raw_int(p, "SELECT count(DISTINCT uid) FROM runs WHERE length(uid) = 32 AND "
                            "uid NOT GLOB '*[^0-9a-f]*'") == 2);
        TB_CHECK(raw_exec(p, "UPDATE runs SET uid = (SELECT uid FROM runs ORDER BY id LIMIT 1)")
                 != SQLITE_OK);   /* the unique index refuses a duplicate */
    }

    TB_CASE("store-4.2", "runs: unknown id and unknown status are refused") {
        tb_store *s = open_new("runs2.db");
        tb_run_info r;
        TB_CHECK(tb_store_run_get(s, 42, &r, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no run 42 in '");
        TB_CHECK(tb_store_run_end(s, 42, "complete", msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no run 42");
        int64_t run = new_run(s);
        TB_CHECK(tb_store_run_set_status(s, run, "done", msg, sizeof msg) == TB_EINTERNAL);
        TB_CHECK_STR_CONTAINS(msg, "unknown run status 'done'");
        tb_store_close(s);
    }

    TB_CASE("store-4.3", "environment round trip; a run without one is TB_EDB") {
        tb_store *s = open_new("env.db");
        int64_t run = new_run(s);
        tb_environment e, g;
        TB_CHECK(tb_store_get_environment(s, run, &g, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no environment for run");
        int found = 1;
        TB_CHECK(tb_store_find_environment(s, run, &g, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found == 0);
        memset(&e, 0, sizeof e);
        snprintf(e.gpu_name, sizeof e.gpu_name, "NVIDIA H100 80GB HBM3");
        snprintf(e.driver_version, sizeof e.driver_version, "580.65");
        e.cc_major = 9, e.cc_minor = 0, e.sm_count = 132;
        e.l2_bytes = 52428800, e.mem_bytes = 85520809984LL;
        e.sm_clock_max_mhz = 1980, e.sm_clock_mhz = -1, e.mem_clock_mhz = 2619;
        e.power_limit_mw = 700000, e.cuda_driver_version = 13000, e.cuda_runtime_version = 12080;
        e.cublas_version = 120805, e.cupti_version = -1;
        snprintf(e.extra_json, sizeof e.extra_json, "{\"mig\":false}");
        TB_CHECK(tb_store_put_environment(s, run, &e, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_get_environment(s, run, &g, msg, sizeof msg) == TB_OK);
        TB_CHECK(memcmp(&e, &g, sizeof e) == 0);
        TB_CHECK(g.sm_clock_mhz == -1 && g.cupti_version == -1 && g.hostname[0] == '\0');
        e.sm_count = 114;   /* a second report replaces the first */
        TB_CHECK(tb_store_put_environment(s, run, &e, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_get_environment(s, run, &g, msg, sizeof msg) == TB_OK);
        TB_CHECK(g.sm_count == 114);
        TB_CHECK(tb_store_put_environment(s, 999, &e, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "FOREIGN KEY");
        tb_store_close(s);
    }

    TB_CASE("store-4.4", "variants: same run and name is found, another run is new") {
        tb_store *s = open_new("var.db");
        int64_t r1 = new_run(s), r2 = new_run(s);
        int64_t a = new_variant(s, r1, "tb_simt_128x128");
        int64_t b = new_variant(s, r1, "tb_simt_128x128");
        int64_t c = new_variant(s, r2, "tb_simt_128x128");
        int64_t d = new_variant(s, r1, "tb_simt_64x64");
        TB_CHECK(a == b && a != c && d != a);
        tb_variant_info *vs = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_variants(s, r1, &vs, &n, msg, sizeof msg) == TB_OK && n == 2);
        TB_CHECK(n == 2 && vs[0].id == a && strcmp(vs[1].name, "tb_simt_64x64") == 0);
        TB_CHECK(n == 2 && vs[0].index == 3 && strcmp(vs[0].sass, "sm_90a") == 0);
        free(vs);
        tb_variant_info v;
        memset(&v, 0, sizeof v);
        snprintf(v.name, sizeof v.name, "x");
        TB_CHECK(tb_store_put_variant(s, 12345, &v, msg, sizeof msg) == TB_EDB);
        TB_CHECK(tb_store_variants(s, 12345, &vs, &n, msg, sizeof msg) == TB_OK);
        TB_CHECK(n == 0 && vs == NULL);
        tb_store_close(s);
    }

    TB_CASE("store-4.5", "problems: the same description is found, any difference is new") {
        tb_store *s = open_new("prob.db");
        int64_t a = new_problem(s, 4096, 4096, 4096);
        int64_t b = new_problem(s, 4096, 4096, 4096);
        tb_problem_info p = problem(4096, 4096, 4096);
        p.beta = 1.0;
        TB_CHECK(tb_store_put_problem(s, &p, msg, sizeof msg) == TB_OK);
        TB_CHECK(a == b && p.id != a);
        p = problem(4096, 4096, 4096);
        snprintf(p.label, sizeof p.label, "other label");   /* label is not part of the key */
        TB_CHECK(tb_store_put_problem(s, &p, msg, sizeof msg) == TB_OK && p.id == a);
        p.alpha = NAN;
        TB_CHECK(tb_store_put_problem(s, &p, msg, sizeof msg) == TB_EINTERNAL);
        tb_store_close(s);
    }

    /* ---- 5: measurements ---- */
    TB_CASE("store-5.1", "a measurement and its samples round trip field by field") {
        tb_store *s = open_new("meas.db");
        int64_t run = new_run(s), v = new_variant(s, run, "va"), p = new_problem(s, 64, 64, 64);
        tb_measurement m = full(run, v, p);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK && m.id > 0);
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_results(s, run, &rows, &n, msg, sizeof msg) == TB_OK && n == 1);
        if (n == 1) {
            tb_measurement g = rows[0].m;
            TB_CHECK(g.samples_ms == NULL && g.samples_clock_mhz == NULL);
            g.samples_ms = m.samples_ms, g.samples_clock_mhz = m.samples_clock_mhz;
            TB_CHECK(memcmp(&g, &m, sizeof m) == 0);   /* every field, bit for bit */
            TB_CHECK(rows[0].v.id == v && strcmp(rows[0].v.family, "simt") == 0);
            tb_problem_info want = problem(64, 64, 64);
            want.id = p;
            TB_CHECK(memcmp(&rows[0].p, &want, sizeof want) == 0);
        }
        free(rows);
        double *ms = NULL, *clk = NULL;
        TB_CHECK(tb_store_samples(s, m.id, &ms, &clk, &n, msg, sizeof msg) == TB_OK && n == 5);
        for (size_t i = 0; ms && clk && i < n; i++)
            TB_CHECK(ms[i] == g_ms[i] && same_double(clk[i], g_clk[i]));
        free(ms);
        free(clk);
        TB_CHECK(tb_store_samples(s, m.id, &ms, NULL, &n, msg, sizeof msg) == TB_OK && n == 5);
        free(ms);
        tb_store_close(s);
    }

    TB_CASE("store-5.2", "NaN, -1 and empty strings are NULL on disk and come back as such") {
        tb_store *s = open_new("nan.db");
        int64_t run = new_run(s), v = new_variant(s, run, "va"), p = new_problem(s, 8, 8, 8);
        tb_measurement m = blank(run, v, p);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK);
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_results(s, run, &rows, &n, msg, sizeof msg) == TB_OK && n == 1);
        if (n == 1) {
            tb_measurement *g = &rows[0].m;
            TB_CHECK(isnan(g->median_ms) && isnan(g->tflops) && isnan(g->rse));
            TB_CHECK(isnan(g->max_abs_err) && isnan(g->atol) && isnan(g->first_launch_ms));
            TB_CHECK(g->n_samples == -1 && g->trials == -1 && g->workspace_bytes == -1);
            TB_CHECK(g->status == TB_STATUS_CRASHED && g->reason[0] == '\0');
        }
        free(rows);
        tb_store_close(s);
        TB_CHECK(raw_int(at("nan.db"), "SELECT count(*) FROM measurements WHERE median_ms IS "
                                       "NULL AND tflops IS NULL AND reason IS NULL AND "
                                       "n_samples IS NULL") == 1);
        double *ms = NULL;
        s = open_new("nan.db");
        TB_CHECK(tb_store_samples(s, 1, &ms, NULL, &n, msg, sizeof msg) == TB_OK);
        TB_CHECK(n == 0 && ms == NULL);
        tb_store_close(s);
    }

    TB_CASE("store-5.3", "a measurement of an unknown variant is refused, nothing kept") {
        tb_store *s = open_new("fk.db");
        int64_t run = new_run(s), p = new_problem(s, 8, 8, 8);
        tb_measurement m = full(run, 777, p);
        m.id = -5;
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "cannot store measurement in '");
        TB_CHECK_STR_CONTAINS(msg, "FOREIGN KEY constraint failed");
        TB_CHECK(m.id == -5);
        tb_store_close(s);
        TB_CHECK(raw_int(at("fk.db"), "SELECT count(*) FROM samples") == 0);
    }

    TB_CASE("store-5.4", "a sample that fails half-way rolls the whole measurement back") {
        tb_store *s = open_new("half.db");
        int64_t run = new_run(s), v = new_variant(s, run, "va"), p = new_problem(s, 8, 8, 8);
        TB_CHECK(raw_exec(at("half.db"), "CREATE TRIGGER boom BEFORE INSERT ON samples "
                                         "WHEN NEW.idx = 3 BEGIN "
                                         "SELECT RAISE(ABORT, 'disk gremlin'); END") == SQLITE_OK);
        tb_measurement m = full(run, v, p);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "disk gremlin");
        TB_CHECK(count_rows(s, run) == 0);
        /* the store is still usable afterwards: no transaction left open */
        TB_CHECK(raw_exec(at("half.db"), "DROP TRIGGER boom") == SQLITE_OK);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK);
        TB_CHECK(count_rows(s, run) == 1);
        tb_store_close(s);
        TB_CHECK(raw_int(at("half.db"), "SELECT count(*) FROM samples") == 5);
    }

    TB_CASE("store-5.5", "an invalid status value is refused before touching the database") {
        tb_store *s = open_new("badst.db");
        int64_t run = new_run(s), v = new_variant(s, run, "va"), p = new_problem(s, 8, 8, 8);
        tb_measurement m = blank(run, v, p);
        m.status = (tb_status)42;
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_EINTERNAL);
        TB_CHECK(count_rows(s, run) == 0);
        tb_store_close(s);
    }

    TB_CASE("store-5.6", "an unknown status on disk is reported when reading") {
        tb_store *s = open_new("badst2.db");
        int64_t run = new_run(s), v = new_variant(s, run, "va"), p = new_problem(s, 8, 8, 8);
        tb_measurement m = blank(run, v, p);
        TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(at("badst2.db"), "UPDATE measurements SET status = 'exploded'")
                 == SQLITE_OK);
        tb_result_row *rows = (tb_result_row *)1;
        size_t n = 9;
        TB_CHECK(tb_store_results(s, run, &rows, &n, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "unknown status 'exploded'");
        TB_CHECK(rows == NULL && n == 0);
        tb_store_close(s);
    }

    /* ---- 6: delete ---- */
    TB_CASE("store-6.1", "delete_problem_measurements removes one problem of one run only") {
        tb_store *s = open_new("del.db");
        int64_t r1 = new_run(s), r2 = new_run(s);
        int64_t v1 = new_variant(s, r1, "va"), v2 = new_variant(s, r2, "va");
        int64_t p1 = new_problem(s, 8, 8, 8), p2 = new_problem(s, 16, 16, 16);
        tb_measurement m;
        int ok = 1;
        m = full(r1, v1, p1), ok &= tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK;
        m = full(r1, v1, p1), ok &= tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK;
        m = full(r1, v1, p2), ok &= tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK;
        m = full(r2, v2, p1), ok &= tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK;
        TB_CHECK(ok);
        TB_CHECK(tb_store_delete_problem_measurements(s, r1, p1, msg, sizeof msg) == TB_OK);
        TB_CHECK(count_rows(s, r1) == 1 && count_rows(s, r2) == 1);
        TB_CHECK(tb_store_delete_problem_measurements(s, r1, 999, msg, sizeof msg) == TB_OK);
        tb_store_close(s);
        TB_CHECK(raw_int(at("del.db"), "SELECT count(*) FROM samples") == 10);   /* cascade */
    }

    /* ---- 7: results ---- */
    TB_CASE("store-7.1", "results come ordered by problem id, then variant id") {
        tb_store *s = open_new("order.db");
        int64_t run = new_run(s);
        int64_t va = new_variant(s, run, "a"), vb = new_variant(s, run, "b");
        int64_t p1 = new_problem(s, 8, 8, 8), p2 = new_problem(s, 16, 16, 16);
        const int64_t order[4][2] = {{p2, vb}, {p1, vb}, {p2, va}, {p1, va}};
        for (int i = 0; i < 4; i++) {
            tb_measurement m = blank(run, order[i][1], order[i][0]);
            TB_CHECK(tb_store_put_measurement(s, &m, msg, sizeof msg) == TB_OK);
        }
        tb_result_row *rows = NULL;
        size_t n = 0;
        TB_CHECK(tb_store_results(s, run, &rows, &n, msg, sizeof msg) == TB_OK && n == 4);
        if (n == 4) {
            TB_CHECK(rows[0].p.id == p1 && rows[0].v.id == va);
            TB_CHECK(rows[1].p.id == p1 && rows[1].v.id == vb);
            TB_CHECK(rows[2].p.id == p2 && rows[2].v.id == va);
            TB_CHECK(rows[3].p.id == p2 && rows[3].v.id == vb);
            TB_CHECK(strcmp(rows[3].v.name, "b") == 0 && rows[3].p.m == 16);
        }
        free(rows);
        tb_store_close(s);
    }

    TB_CASE("store-7.2", "results of a run with none (or no such run) are empty, not an error") {
        tb_store *s = open_new("order.db");
        tb_result_row *rows = (tb_result_row *)1;
        size_t n = 9;
        TB_CHECK(tb_store_results(s, 31337, &rows, &n, msg, sizeof msg) == TB_OK);
        TB_CHECK(rows == NULL && n == 0);
        tb_store_close(s);
    }

    /* ---- 10: calibrations ---- */
    TB_CASE("store-10.1", "calibration round trip, every field; NaN clock back as NaN") {
        tb_store *s = open_new("cal.db");
        tb_calibration c;
        memset(&c, 0, sizeof c);
        snprintf(c.gpu_uuid, sizeof c.gpu_uuid, "GPU-aaaa");
        snprintf(c.gpu_name, sizeof c.gpu_name, "test GPU");
        c.dram_gbps = 2950.25, c.copy_bytes = 2147483648LL, c.gemm_tflops = 745.5;
        snprintf(c.gemm_shape, sizeof c.gemm_shape, "8192x8192x8192");
        c.sm_clock_mhz = NAN;
        snprintf(c.method, sizeof c.method, "dram: a copy; tensor: a GEMM");
        TB_CHECK(tb_store_put_calibration(s, &c, msg, sizeof msg) == TB_OK);
        TB_CHECK(c.id > 0 && strlen(c.created_at) == 20 && c.created_at[19] == 'Z');
        tb_calibration o;
        int found = 0;
        TB_CHECK(tb_store_latest_calibration(s, "GPU-aaaa", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found == 1);
        TB_CHECK(o.id == c.id && !strcmp(o.created_at, c.created_at));
        TB_CHECK(!strcmp(o.gpu_uuid, "GPU-aaaa") && !strcmp(o.gpu_name, "test GPU"));
        TB_CHECK(o.dram_gbps == 2950.25 && o.copy_bytes == 2147483648LL && o.gemm_tflops == 745.5);
        TB_CHECK(!strcmp(o.gemm_shape, "8192x8192x8192") && isnan(o.sm_clock_mhz));
        TB_CHECK(!strcmp(o.method, "dram: a copy; tensor: a GEMM"));
        TB_CHECK(raw_int(at("cal.db"), "SELECT count(*) FROM calibration WHERE sm_clock_mhz IS NULL") == 1);
        /* no FP8 ceiling (0 from the memset): NULL on disk, NaN back */
        TB_CHECK(isnan(o.fp8_tflops) && isnan(o.fp8_sm_clock_mhz) && o.fp8_shape[0] == 0);
        TB_CHECK(raw_int(at("cal.db"), "SELECT count(*) FROM calibration WHERE fp8_tflops IS NULL "
                                       "AND fp8_sm_clock_mhz IS NULL") == 1);
        /* and with one (schema 8) */
        c.fp8_tflops = 1380.5, c.fp8_sm_clock_mhz = 1755;
        snprintf(c.fp8_shape, sizeof c.fp8_shape, "8192x8192x8192");
        TB_CHECK(tb_store_put_calibration(s, &c, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_store_latest_calibration(s, "GPU-aaaa", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found && o.id == c.id && o.fp8_tflops == 1380.5 && o.fp8_sm_clock_mhz == 1755);
        TB_CHECK(!strcmp(o.fp8_shape, "8192x8192x8192") && o.gemm_tflops == 745.5);
        tb_store_close(s);
    }

    TB_CASE("store-10.2", "the newest calibration of the asked GPU is found, its UUID in any case") {
        tb_store *s = open_new("cal2.db");
        const char *uu[3] = { "GPU-aaaa", "GPU-bbbb", "GPU-aaaa" };
        for (int i = 0; i < 3; i++) {
            tb_calibration c;
            memset(&c, 0, sizeof c);
            snprintf(c.gpu_uuid, sizeof c.gpu_uuid, "%s", uu[i]);
            snprintf(c.created_at, sizeof c.created_at, "2026-11-2%dT00:00:00Z", 3 + i);
            c.dram_gbps = 1000 + i, c.copy_bytes = -1, c.gemm_tflops = 500 + i, c.sm_clock_mhz = 1980;
            TB_CHECK(tb_store_put_calibration(s, &c, msg, sizeof msg) == TB_OK);
        }
        tb_calibration o;
        int found = 0;
        TB_CHECK(tb_store_latest_calibration(s, "GPU-AAAA", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found && o.gemm_tflops == 502 && !strcmp(o.created_at, "2026-11-25T00:00:00Z"));
        TB_CHECK(found && o.copy_bytes == -1 && o.gpu_name[0] == 0 && o.sm_clock_mhz == 1980);
        TB_CHECK(tb_store_latest_calibration(s, "GPU-bbbb", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found && o.dram_gbps == 1001);
        o.dram_gbps = 7;
        TB_CHECK(tb_store_latest_calibration(s, "GPU-cccc", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(!found && o.dram_gbps == 7);   /* none: not an error, out untouched */
        TB_CHECK(tb_store_latest_calibration(s, "", &o, &found, msg, sizeof msg) == TB_OK && !found);
        TB_CHECK(tb_store_latest_calibration(s, NULL, &o, &found, msg, sizeof msg) == TB_OK && !found);
        tb_store_close(s);
    }

    TB_CASE("store-10.3", "a calibration without a UUID, or into a read-only store, is refused") {
        tb_store *s = open_new("cal3.db");
        tb_calibration c;
        memset(&c, 0, sizeof c);
        c.dram_gbps = 1, c.gemm_tflops = 1, c.sm_clock_mhz = NAN;
        TB_CHECK(tb_store_put_calibration(s, &c, msg, sizeof msg) == TB_EINTERNAL);
        TB_CHECK_STR_CONTAINS(msg, "no GPU UUID");
        tb_store_close(s);
        TB_CHECK(raw_int(at("cal3.db"), "SELECT count(*) FROM calibration") == 0);
        s = NULL;
        TB_CHECK(tb_store_open(at("cal3.db"), 0, 1, &s, msg, sizeof msg) == TB_OK);
        snprintf(c.gpu_uuid, sizeof c.gpu_uuid, "GPU-aaaa");
        TB_CHECK(tb_store_put_calibration(s, &c, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "opened read-only");
        tb_store_close(s);
        TB_CHECK(raw_int(at("cal3.db"), "SELECT count(*) FROM calibration") == 0);
    }

    /* ---- record names ---- */
    TB_CASE("record-1.1", "status and disposition names round trip; unknown names fail") {
        for (int i = TB_STATUS_OK; i <= TB_STATUS_SKIPPED; i++) {
            tb_status st = TB_STATUS_OK;
            TB_CHECK(tb_status_parse(tb_status_name((tb_status)i), &st) == 0 && (int)st == i);
        }
        for (int i = TB_DISP_NOT_VERIFIED; i <= TB_DISP_INCORRECT; i++) {
            tb_disposition d = TB_DISP_PASSED;
            TB_CHECK(tb_disposition_parse(tb_disposition_name((tb_disposition)i), &d) == 0 &&
                     (int)d == i);
        }
        tb_status st = TB_STATUS_TIMEOUT;
        TB_CHECK(tb_status_parse("OK", &st) != 0 && st == TB_STATUS_TIMEOUT);
        TB_CHECK(tb_status_parse(NULL, &st) != 0);
        tb_disposition d = TB_DISP_PASSED;
        TB_CHECK(tb_disposition_parse("failed", &d) != 0 && d == TB_DISP_PASSED);
        TB_CHECK(strcmp(tb_status_name((tb_status)99), "invalid") == 0);
        TB_CHECK(strcmp(tb_disposition_name((tb_disposition)-1), "invalid") == 0);
        TB_CHECK(strcmp(tb_disposition_name(TB_DISP_NOT_VERIFIED), "not_verified") == 0);
    }

    rm_rf(g_dir);
    /* metrics: stored in one transaction, read back by name, NaN kept, replaced by name */
    {
        char mdir[] = "/tmp/tb_store_metrics_XXXXXX";
        if (mkdtemp(mdir)) {
            char mpath[256];
            snprintf(mpath, sizeof mpath, "%s/m.db", mdir);
            TB_CASE("store-9.1", "metrics round trip: value, unit, unavailable with reason") {
                char msg[TB_MSG_LEN];
                tb_store *st = NULL;
                TB_CHECK(tb_store_open(mpath, 1, 0, &st, msg, sizeof msg) == TB_OK);
                tb_run_info *run = calloc(1, sizeof *run);
                snprintf(run->status, sizeof run->status, "running");
                snprintf(run->options_json, sizeof run->options_json, "{}");
                TB_CHECK(tb_store_run_begin(st, run, msg, sizeof msg) == TB_OK);
                tb_variant_info v; memset(&v, 0, sizeof v);
                snprintf(v.name, sizeof v.name, "mv");
                TB_CHECK(tb_store_put_variant(st, run->id, &v, msg, sizeof msg) == TB_OK);
                tb_problem_info p; memset(&p, 0, sizeof p);
                snprintf(p.op, sizeof p.op, "gemm"); p.m = p.n = p.k = p.batch = 1; p.alpha = 1;
                TB_CHECK(tb_store_put_problem(st, &p, msg, sizeof msg) == TB_OK);
                tb_measurement m; tb_measurement_init(&m);
                m.run_id = run->id; m.variant_id = v.id; m.problem_id = p.id;
                TB_CHECK(tb_store_put_measurement(st, &m, msg, sizeof msg) == TB_OK);
                tb_metric in[2]; memset(in, 0, sizeof in);
                snprintf(in[0].name, sizeof in[0].name, "smsp__inst_executed.sum");
                in[0].value = 12345; snprintf(in[0].unit, sizeof in[0].unit, "inst"); in[0].available = 1;
                snprintf(in[1].name, sizeof in[1].name, "dram__bytes_read.sum");
                in[1].value = NAN; in[1].available = 0;
                snprintf(in[1].reason, sizeof in[1].reason, "another profiler is attached");
                TB_CHECK(tb_store_put_metrics(st, m.id, in, 2, msg, sizeof msg) == TB_OK);
                in[0].value = 54321;
                TB_CHECK(tb_store_put_metrics(st, m.id, in, 1, msg, sizeof msg) == TB_OK);
                tb_metric *out = NULL; size_t n = 0;
                TB_CHECK(tb_store_metrics(st, m.id, &out, &n, msg, sizeof msg) == TB_OK);
                TB_CHECK(n == 2);
                if (n == 2) {
                    TB_CHECK(!strcmp(out[0].name, "dram__bytes_read.sum") && !out[0].available && isnan(out[0].value));
                    TB_CHECK_STR_CONTAINS(out[0].reason, "another profiler");
                    TB_CHECK(out[1].value == 54321 && !strcmp(out[1].unit, "inst") && out[1].available);
                }
                free(out); free(run);
                tb_store_close(st);
            }
            unlink(mpath);
            char side[300];
            snprintf(side, sizeof side, "%s-wal", mpath); unlink(side);
            snprintf(side, sizeof side, "%s-shm", mpath); unlink(side);
            rmdir(mdir);
        }
    }

    TB_CASE("store-11.1", "a database that cannot be created (a file size limit, as a full disk) "
                          "leaves no file behind, and the error says why") {
        const char *p = at("nospace.db");
        pid_t pid = fork();
        if (pid == 0) {   /* the limit only in a child */
            struct rlimit rl = { 0, 0 };
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &rl);
            tb_store *s = NULL;
            char m[TB_MSG_LEN];
            int rc = tb_store_open(p, 1, 0, &s, m, sizeof m);
            _exit(rc == TB_OK ? 1 : strstr(m, "size limit") || strstr(m, "disk is full") ? 0 : 2);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        TB_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        TB_CHECK(!exists(p));
        TB_CHECK(!exists_suffix(p, "-wal") && !exists_suffix(p, "-shm"));
    }
    TB_CASE("store-3.8", "schema 7: a v6 file's problems keep their ids, get scales 0, and scales are in the key") {
        const char *p = at("v6.db");
        TB_CHECK(tb_store_create_at_version(p, 6, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(p, "INSERT INTO runs (id, started_at, status) VALUES (3, 'x', 'complete');"
                             "INSERT INTO problems (id,op,m,n,k,batch,dtypes,layouts,lda,ldb,ldc,"
                             "ldd,alpha,beta) VALUES (42,'gemm',64,64,64,1,'e4m3,e4m3,bf16,bf16,f32',"
                             "'tn',64,64,64,64,1,0);"
                             "INSERT INTO variants (id, run_id, name) VALUES (1, 3, 'v');"
                             "INSERT INTO measurements (run_id, variant_id, problem_id, status,"
                             " disposition) VALUES (3, 1, 42, 'ok', 'passed')") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM problems WHERE id = 42 AND scale_a = 0 AND scale_b = 0") == 1);
        TB_CHECK(raw_int(p, "SELECT count(*) FROM measurements WHERE problem_id = 42") == 1);
        tb_problem_info q = problem(64, 64, 64);
        snprintf(q.dtypes, sizeof q.dtypes, "e4m3,e4m3,bf16,bf16,f32");
        snprintf(q.layouts, sizeof q.layouts, "tn");   /* problem 42 but for its scales */
        q.scale_a = 0.015625; q.scale_b = 0.03125;
        TB_CHECK(s && tb_store_put_problem(s, &q, msg, sizeof msg) == TB_OK && q.id != 42);
        tb_problem_info again = q;
        again.id = 0;
        TB_CHECK(s && tb_store_put_problem(s, &again, msg, sizeof msg) == TB_OK && again.id == q.id);
        q.scale_a = -1;
        TB_CHECK(s && tb_store_put_problem(s, &q, msg, sizeof msg) == TB_EINTERNAL);
        tb_store_close(s);
    }
    TB_CASE("store-3.9", "schema 8: a v7 file's calibrations keep their figures and get no FP8 ceiling") {
        const char *p = at("v7.db");
        TB_CHECK(tb_store_create_at_version(p, 7, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_exec(p, "INSERT INTO calibration (id, created_at, gpu_uuid, gpu_name, dram_gbps,"
                             " copy_bytes, gemm_tflops, gemm_shape, sm_clock_mhz, method) VALUES (5,"
                             " '2026-11-22T12:00:00Z', 'GPU-cccc', 'g', 3000, 2147483648, 750,"
                             " '8192x8192x8192', 1700, 'm')") == SQLITE_OK);
        tb_store *s = NULL;
        TB_CHECK(tb_store_open(p, 0, 0, &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(raw_int(p, "PRAGMA user_version") == TB_SCHEMA_VERSION);
        tb_calibration o;
        int found = 0;
        TB_CHECK(s && tb_store_latest_calibration(s, "GPU-cccc", &o, &found, msg, sizeof msg) == TB_OK);
        TB_CHECK(found && o.id == 5 && o.gemm_tflops == 750 && o.dram_gbps == 3000 && o.sm_clock_mhz == 1700);
        TB_CHECK(isnan(o.fp8_tflops) && isnan(o.fp8_sm_clock_mhz) && o.fp8_shape[0] == 0);
        tb_store_close(s);
    }
    return tb_test_done();
}
