/* test_export.c - tests of harness/report/export.c.
 *
 * Focus: the JSON reads back through cJSON with every sample, NaN as null; the CSV has its
 * fixed header, the parameter columns in first-seen order, empty (never 0) time and rate
 * cells for a row that was not timed, and RFC 4180 quoting; refusals (unknown format,
 * unknown run, unwritable stream) write nothing or report TB_EIO. A store in a mkdtemp
 * directory supplies the data; output is captured with open_memstream.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* mkdtemp, open_memstream, strtok_r */
#endif
#include "report/export.h"
#include "store/store.h"
#include "common/tb.h"
#include "tb_test.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char g_dir[256];
static char g_db[512];

/* ---- a small RFC 4180 reader, to check the CSV the other way round ---- */
#define MAX_REC 16
#define MAX_FLD 48
#define FLD_LEN 256
static char g_csv[MAX_REC][MAX_FLD][FLD_LEN];
static int g_nfld[MAX_REC];

/* Returns the number of records, or -1 on a malformed text. */
static int csv_read(const char *t)
{
    int r = 0, f = 0;
    size_t k = 0;
    memset(g_nfld, 0, sizeof g_nfld);
    while (*t) {
        if (r >= MAX_REC || f >= MAX_FLD) return -1;
        char *dst = g_csv[r][f];
        k = 0;
        if (*t == '"') {
            t++;
            for (;;) {
                if (!*t) return -1;
                if (*t == '"' && t[1] == '"') t++;
                else if (*t == '"') { t++; break; }
                if (k + 1 < FLD_LEN) dst[k++] = *t;
                t++;
            }
        } else {
            while (*t && *t != ',' && *t != '\n') {
                if (*t == '"' || *t == '\r') return -1;
                if (k + 1 < FLD_LEN) dst[k++] = *t;
                t++;
            }
        }
        dst[k] = '\0';
        f++;
        if (*t == ',') { t++; continue; }
        if (*t == '\n') t++;
        else if (*t) return -1;
        g_nfld[r++] = f;
        f = 0;
    }
    return r;
}

static int col(int rec, const char *name)
{
    for (int i = 0; i < g_nfld[0]; i++)
        if (strcmp(g_csv[0][i], name) == 0) return i;
    (void)rec;
    return -1;
}

static const char *cell(int rec, const char *name)
{
    int c = col(rec, name);
    return c < 0 || c >= g_nfld[rec] ? "(no such column)" : g_csv[rec][c];
}

/* ---- fixtures ---- */

static double g_ms[5] = {0.51, 0.5, 0.52, 0.49, 0.5};
static double g_clk[5] = {1980, 1975, NAN, 1980, 1970};
static const char *g_reason = "launch failed: \"illegal address\", at block 3";

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

static int64_t put_variant(tb_store *s, int64_t run, const char *name, const char *params)
{
    tb_variant_info v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "%s", name);
    snprintf(v.family, sizeof v.family, "wgmma");
    snprintf(v.params_json, sizeof v.params_json, "%s", params);
    snprintf(v.sass, sizeof v.sass, "sm_90a");
    snprintf(v.sha256, sizeof v.sha256, "%064d", 1);
    char msg[TB_MSG_LEN];
    if (tb_store_put_variant(s, run, &v, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }
    return v.id;
}

static int64_t put_problem(tb_store *s, int64_t m)
{
    tb_problem_info p;
    memset(&p, 0, sizeof p);
    snprintf(p.op, sizeof p.op, "gemm");
    p.m = m, p.n = 256, p.k = 512, p.batch = 1;
    snprintf(p.dtypes, sizeof p.dtypes, "bf16,bf16,bf16,bf16,f32");
    snprintf(p.layouts, sizeof p.layouts, "tnr");
    p.lda = 512, p.ldb = 512, p.ldc = 256, p.ldd = 256, p.alpha = 1, p.beta = 0;
    char msg[TB_MSG_LEN];
    if (tb_store_put_problem(s, &p, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }
    return p.id;
}

static void put(tb_store *s, tb_measurement *m)
{
    char msg[TB_MSG_LEN];
    if (tb_store_put_measurement(s, m, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }
}

/* Run 1: environment, two variants (B adds a parameter), two problems, one timed row, one
 * crashed row with a hostile reason, one ok row without a median. Run 2: nothing at all. */
static int64_t g_run, g_empty_run;

static void build(tb_store *s)
{
    char msg[TB_MSG_LEN];
    tb_run_info r;
    memset(&r, 0, sizeof r);
    snprintf(r.command_line, sizeof r.command_line, "tilebench sweep");
    snprintf(r.options_json, sizeof r.options_json, "{\"shapes\":\"square\",\"seed\":1}");
    if (tb_store_run_begin(s, &r, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }
    g_run = r.id;
    tb_environment e;
    memset(&e, 0, sizeof e);
    snprintf(e.gpu_name, sizeof e.gpu_name, "NVIDIA H100 80GB HBM3");
    e.cc_major = 9, e.sm_count = 132, e.sm_clock_mhz = -1, e.cupti_version = -1;
    snprintf(e.extra_json, sizeof e.extra_json, "{\"ecc\":true}");
    if (tb_store_put_environment(s, g_run, &e, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }

    int64_t va = put_variant(s, g_run, "tb_a", "{\"tile_m\":128,\"schedule\":\"pingpong\"}");
    int64_t vb = put_variant(s, g_run, "tb_b",
                             "{\"tile_m\":64,\"stages\":4,\"k\":2,\"note\":\"x,y\"}");
    int64_t p1 = put_problem(s, 1024), p2 = put_problem(s, 2048);

    /* inserted out of order; the export follows problem id then variant id */
    tb_measurement crashed = blank(g_run, vb, p1);
    snprintf(crashed.reason, sizeof crashed.reason, "%s", g_reason);
    put(s, &crashed);

    tb_measurement ok = blank(g_run, va, p1);
    ok.status = TB_STATUS_OK, ok.disposition = TB_DISP_PASSED;
    ok.trials = 1, ok.max_abs_err = 0.0625, ok.rel_fro_err = 2e-4;
    snprintf(ok.method, sizeof ok.method, "cold_events");
    snprintf(ok.stop_reason, sizeof ok.stop_reason, "rse<0.5%%");
    ok.n_samples = 5, ok.warmup = 2;
    ok.median_ms = 0.5, ok.mean_ms = 0.504, ok.stdev_ms = 0.0114, ok.min_ms = 0.49;
    ok.max_ms = 0.52, ok.rse = 0.01, ok.tflops = 0.5368709120000001, ok.clock_mhz = 1976.25;
    ok.samples_ms = g_ms, ok.samples_clock_mhz = g_clk;
    snprintf(ok.extra_json, sizeof ok.extra_json, "{\"host_launch_ms\":2.034,\"host_bound\":true}");
    put(s, &ok);

    tb_measurement untimed = blank(g_run, va, p2);   /* ran, validated, not timed */
    untimed.status = TB_STATUS_OK, untimed.disposition = TB_DISP_INCORRECT;
    untimed.n_samples = 0, untimed.tflops = 0.0;    /* a worker's zeros must not show */
    untimed.max_abs_err = 3.5;
    snprintf(untimed.reason, sizeof untimed.reason, "max error 3.5 over atol\nsee log");
    snprintf(untimed.rule, sizeof untimed.rule, "atol");
    put(s, &untimed);

    memset(&r, 0, sizeof r);
    if (tb_store_run_begin(s, &r, msg, sizeof msg)) { printf("%s\n", msg); exit(2); }
    g_empty_run = r.id;
}

/* Exports into a malloc'd string (*text, free it); returns the code. */
static int export_to(tb_store *s, int64_t run, const char *fmt, char **text, char *msg,
                     size_t len)
{
    size_t n = 0;
    *text = NULL;
    FILE *f = open_memstream(text, &n);
    int rc = tb_export(s, run, fmt, f, msg, len);
    fclose(f);
    return rc;
}

static cJSON *item(const cJSON *o, const char *path)
{
    /* "a.b.c" through nested objects */
    char buf[128];
    snprintf(buf, sizeof buf, "%s", path);
    const cJSON *cur = o;
    for (char *save = NULL, *k = strtok_r(buf, ".", &save); k && cur;
         k = strtok_r(NULL, ".", &save))
        cur = cJSON_GetObjectItemCaseSensitive(cur, k);
    return (cJSON *)cur;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    snprintf(g_dir, sizeof g_dir, "%s/tb_export_XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(g_db, sizeof g_db, "%s/e.db", g_dir);
    tb_store *s = NULL;
    if (tb_store_open(g_db, 1, 0, &s, msg, sizeof msg) != TB_OK) {
        printf("cannot set up: %s\n", msg);
        return 2;
    }
    build(s);
    char *text = NULL;

    /* ---- 1: refusals ---- */
    TB_CASE("export-1.1", "an unknown format is a usage error and writes nothing") {
        TB_CHECK(export_to(s, g_run, "xml", &text, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(strcmp(msg, "unknown export format 'xml' (json, csv)") == 0);
        TB_CHECK(text && text[0] == '\0');
        free(text);
        TB_CHECK(export_to(s, g_run, "JSON", &text, msg, sizeof msg) == TB_EUSAGE);
        free(text);
        TB_CHECK(export_to(s, g_run, NULL, &text, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "unknown export format ''");
        free(text);
    }

    TB_CASE("export-1.2", "an unknown run is TB_EDB and writes nothing") {
        TB_CHECK(export_to(s, 999, "json", &text, msg, sizeof msg) == TB_EDB);
        TB_CHECK_STR_CONTAINS(msg, "no run 999 in '");
        TB_CHECK(text && text[0] == '\0');
        free(text);
        TB_CHECK(export_to(s, 999, "csv", &text, msg, sizeof msg) == TB_EDB);
        TB_CHECK(text && text[0] == '\0');
        free(text);
    }

    TB_CASE("export-1.3", "a stream that cannot be written is TB_EIO") {
        FILE *f = fopen("/dev/null", "r");
        TB_CHECK(f != NULL);
        if (f) {
            TB_CHECK(tb_export(s, g_run, "csv", f, msg, sizeof msg) == TB_EIO);
            TB_CHECK_STR_CONTAINS(msg, "cannot write the csv export");
            clearerr(f);
            TB_CHECK(tb_export(s, g_run, "json", f, msg, sizeof msg) == TB_EIO);
            TB_CHECK_STR_CONTAINS(msg, "cannot write the json export");
            fclose(f);
        }
    }

    /* ---- 2: JSON ---- */
    TB_CASE("export-2.1", "json parses back with cJSON: tool, schema, run, environment") {
        TB_CHECK(export_to(s, g_run, "json", &text, msg, sizeof msg) == TB_OK);
        cJSON *j = cJSON_Parse(text);
        TB_CHECK(j != NULL);
        TB_CHECK(cJSON_IsString(item(j, "tilebench.version")) &&
                 strcmp(item(j, "tilebench.version")->valuestring, TB_VERSION) == 0);
        TB_CHECK(cJSON_IsNumber(item(j, "tilebench.schema")) &&
                 item(j, "tilebench.schema")->valueint == TB_SCHEMA_VERSION);
        TB_CHECK(cJSON_IsNumber(item(j, "run.id")) && item(j, "run.id")->valueint == g_run);
        TB_CHECK(cJSON_IsString(item(j, "run.status")));
        TB_CHECK(cJSON_IsNull(item(j, "run.ended_at")));
        TB_CHECK(cJSON_IsNumber(item(j, "run.options.seed")));
        TB_CHECK(cJSON_IsString(item(j, "environment.gpu_name")));
        TB_CHECK(cJSON_IsNull(item(j, "environment.sm_clock_mhz")));   /* -1 */
        TB_CHECK(cJSON_IsNumber(item(j, "environment.sm_count")));
        TB_CHECK(cJSON_IsTrue(item(j, "environment.extra.ecc")));
        TB_CHECK(cJSON_GetArraySize(item(j, "results")) == 3);
        cJSON_Delete(j);
        free(text);
    }

    TB_CASE("export-2.2", "json: a timed result has its params object and all its samples") {
        TB_CHECK(export_to(s, g_run, "json", &text, msg, sizeof msg) == TB_OK);
        cJSON *j = cJSON_Parse(text);
        cJSON *r = cJSON_GetArrayItem(item(j, "results"), 0);   /* problem 1, variant a */
        TB_CHECK(r != NULL);
        TB_CHECK(strcmp(cJSON_GetStringValue(item(r, "variant.name")), "tb_a") == 0);
        TB_CHECK(cJSON_IsObject(item(r, "variant.params")));
        TB_CHECK(cJSON_IsNumber(item(r, "variant.params.tile_m")) &&
                 item(r, "variant.params.tile_m")->valueint == 128);
        TB_CHECK(strcmp(cJSON_GetStringValue(item(r, "status")), "ok") == 0);
        TB_CHECK(strcmp(cJSON_GetStringValue(item(r, "disposition")), "passed") == 0);
        TB_CHECK(item(r, "problem.m") && item(r, "problem.m")->valueint == 1024);
        TB_CHECK(cJSON_IsNumber(item(r, "tflops")) &&
                 item(r, "tflops")->valuedouble == 0.5368709120000001);
        TB_CHECK(cJSON_IsNumber(item(r, "validation.max_abs_err")));
        cJSON *smp = item(r, "timing.samples_ms");
        TB_CHECK(cJSON_GetArraySize(smp) == 5);
        for (int i = 0; i < 5 && cJSON_GetArraySize(smp) == 5; i++)
            TB_CHECK(cJSON_GetArrayItem(smp, i)->valuedouble == g_ms[i]);
        cJSON *clk = item(r, "timing.samples_clock_mhz");
        TB_CHECK(cJSON_GetArraySize(clk) == 5 && cJSON_IsNull(cJSON_GetArrayItem(clk, 2)));
        TB_CHECK(item(r, "timing.median_ms") && item(r, "timing.median_ms")->valuedouble == 0.5);
        /* the host-bound mark travels in extra, as the worker stored it */
        TB_CHECK(cJSON_IsTrue(item(r, "extra.host_bound")));
        TB_CHECK(cJSON_IsNumber(item(r, "extra.host_launch_ms")));
        cJSON_Delete(j);
        free(text);
    }

    TB_CASE("export-2.3", "json: a crashed result has nulls for NaN, never 0") {
        TB_CHECK(export_to(s, g_run, "json", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(strstr(text, "NaN") == NULL && strstr(text, "nan") == NULL);
        cJSON *j = cJSON_Parse(text);
        cJSON *r = cJSON_GetArrayItem(item(j, "results"), 1);   /* problem 1, variant b */
        TB_CHECK(r && strcmp(cJSON_GetStringValue(item(r, "status")), "crashed") == 0);
        TB_CHECK(cJSON_IsNull(item(r, "timing.median_ms")));
        TB_CHECK(cJSON_IsNull(item(r, "tflops")));
        TB_CHECK(cJSON_IsNull(item(r, "timing.n_samples")));
        TB_CHECK(cJSON_IsNull(item(r, "validation.trials")));
        TB_CHECK(cJSON_IsNull(item(r, "rule")));
        TB_CHECK(cJSON_IsArray(item(r, "timing.samples_ms")) &&
                 cJSON_GetArraySize(item(r, "timing.samples_ms")) == 0);
        TB_CHECK(strcmp(cJSON_GetStringValue(item(r, "reason")), g_reason) == 0);
        TB_CHECK(cJSON_IsString(item(r, "variant.params.note")));
        cJSON_Delete(j);
        free(text);
    }

    TB_CASE("export-2.4", "json: a run without environment or results") {
        TB_CHECK(export_to(s, g_empty_run, "json", &text, msg, sizeof msg) == TB_OK);
        cJSON *j = cJSON_Parse(text);
        TB_CHECK(j && cJSON_IsNull(item(j, "environment")));
        TB_CHECK(cJSON_IsArray(item(j, "results")) &&
                 cJSON_GetArraySize(item(j, "results")) == 0);
        TB_CHECK(cJSON_IsNull(item(j, "run.options")));
        cJSON_Delete(j);
        free(text);
    }

    /* ---- 3: CSV ---- */
    static const char *fixed[] = {
        "run_id", "variant", "family", "m", "n", "k", "batch", "dtypes", "layouts", "status",
        "disposition", "reason", "rule", "median_ms", "mean_ms", "stdev_ms", "min_ms",
        "max_ms", "rse", "n_samples", "tflops", "clock_mhz", "max_abs_err", "rel_fro_err",
        "method", "stop_reason", "sha256", "host_launch_ms", "host_bound"};
    const int nfixed = (int)(sizeof fixed / sizeof fixed[0]);

    TB_CASE("export-3.1", "csv: fixed header, then params in first-seen order") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        int n = csv_read(text);
        TB_CHECK(n == 4);   /* header + 3 rows */
        for (int i = 0; n > 0 && i < nfixed; i++) TB_CHECK(strcmp(g_csv[0][i], fixed[i]) == 0);
        TB_CHECK(g_nfld[0] == nfixed + 5);
        if (g_nfld[0] == nfixed + 5) {
            TB_CHECK(strcmp(g_csv[0][nfixed + 0], "tile_m") == 0);
            TB_CHECK(strcmp(g_csv[0][nfixed + 1], "schedule") == 0);
            TB_CHECK(strcmp(g_csv[0][nfixed + 2], "stages") == 0);
            TB_CHECK(strcmp(g_csv[0][nfixed + 3], "param.k") == 0);   /* clashes with k */
            TB_CHECK(strcmp(g_csv[0][nfixed + 4], "note") == 0);
        }
        for (int i = 1; i < n; i++) TB_CHECK(g_nfld[i] == g_nfld[0]);
        free(text);
    }

    TB_CASE("export-3.2", "csv: a crashed row leaves time and rate cells empty") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(csv_read(text) == 4);
        TB_CHECK(strcmp(cell(2, "status"), "crashed") == 0);
        const char *empty[] = {"median_ms", "mean_ms", "stdev_ms", "min_ms", "max_ms", "rse",
                               "n_samples", "tflops", "clock_mhz", "max_abs_err", "method"};
        for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++)
            TB_CHECK(strcmp(cell(2, empty[i]), "") == 0);
        TB_CHECK(strcmp(cell(2, "m"), "1024") == 0 && strcmp(cell(2, "variant"), "tb_b") == 0);
        free(text);
    }

    TB_CASE("export-3.3", "csv: an ok row that was not timed shows no 0 for time or rate") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(csv_read(text) == 4);
        TB_CHECK(strcmp(cell(3, "disposition"), "incorrect") == 0);
        TB_CHECK(strcmp(cell(3, "tflops"), "") == 0);
        TB_CHECK(strcmp(cell(3, "n_samples"), "") == 0);
        TB_CHECK(strcmp(cell(3, "max_abs_err"), "3.5") == 0);
        TB_CHECK(strcmp(cell(3, "reason"), "max error 3.5 over atol\nsee log") == 0);
        free(text);
    }

    TB_CASE("export-3.4", "csv: a timed row has its figures, its params, blanks for others") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(csv_read(text) == 4);
        TB_CHECK(strcmp(cell(1, "variant"), "tb_a") == 0);
        TB_CHECK(strcmp(cell(1, "median_ms"), "0.5") == 0);
        TB_CHECK(strcmp(cell(1, "n_samples"), "5") == 0);
        TB_CHECK(strtod(cell(1, "tflops"), NULL) == 0.5368709120000001);
        TB_CHECK(strcmp(cell(1, "stop_reason"), "rse<0.5%") == 0);
        TB_CHECK(strcmp(cell(1, "tile_m"), "128") == 0);
        TB_CHECK(strcmp(cell(1, "schedule"), "pingpong") == 0);
        TB_CHECK(strcmp(cell(1, "stages"), "") == 0);   /* variant a has no stages */
        TB_CHECK(strcmp(cell(2, "stages"), "4") == 0);
        TB_CHECK(strcmp(cell(2, "note"), "x,y") == 0);
        free(text);
    }

    TB_CASE("export-3.5", "csv: a reason with a comma and a quote is quoted per RFC 4180") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK_STR_CONTAINS(text, ",\"launch failed: \"\"illegal address\"\", at block 3\",");
        TB_CHECK(csv_read(text) == 4);
        TB_CHECK(strcmp(cell(2, "reason"), g_reason) == 0);
        free(text);
    }

    TB_CASE("export-3.7", "csv: the host's time of a launch and the host-bound mark, from extra") {
        TB_CHECK(export_to(s, g_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(csv_read(text) == 4);
        TB_CHECK(strcmp(cell(1, "host_launch_ms"), "2.034") == 0);
        TB_CHECK(strcmp(cell(1, "host_bound"), "true") == 0);
        /* not timed, or stored before they were recorded: empty, never false or 0 */
        TB_CHECK(strcmp(cell(2, "host_launch_ms"), "") == 0 && strcmp(cell(2, "host_bound"), "") == 0);
        TB_CHECK(strcmp(cell(3, "host_launch_ms"), "") == 0 && strcmp(cell(3, "host_bound"), "") == 0);
        free(text);
    }

    TB_CASE("export-3.6", "csv: a run without results is the header alone") {
        TB_CHECK(export_to(s, g_empty_run, "csv", &text, msg, sizeof msg) == TB_OK);
        TB_CHECK(csv_read(text) == 1 && g_nfld[0] == nfixed);
        TB_CHECK(text && strchr(text, '\n') == text + strlen(text) - 1);
        free(text);
    }

    tb_store_close(s);
    char p[600];
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s%s", g_db, sfx[i]);
        unlink(p);
    }
    rmdir(g_dir);
    return tb_test_done();
}
