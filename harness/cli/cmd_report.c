/* cmd_report.c - tilebench report: a run as one self-contained HTML page of plots, written by
 * the plotting script (scripts/report/, matplotlib, docs/report.md) into a directory.
 *
 * Owns: the arguments and their one-line errors; the checks made before anything is written
 * (the database opens read-only at the run, --compare names another run of it, --shape is one
 * of the run's shapes, the output is a new path or a directory holding only what a report
 * writes); the ranking handed to the script (report/rank.c with show's seed, so the page's
 * ranks, ties and intervals are show's to the bit); running the script (cli/report_script.c);
 * and the directory's life (cli/report_dir.c): the script writes into a temporary
 * directory beside it, which replaces the old one only once the script succeeded, so a reader
 * sees the old report or the new one, never half of one. SIGINT, SIGTERM and SIGHUP stop the script and remove the
 * temporary directory (exit 130, 143, 129).
 * Leaves to the script: every plot, table and the page (it reads the database itself,
 * read-only). Exit codes as docs/cli.md: 0, 1 the script failed while writing, 2 bad input or a
 * missing requirement (python3, matplotlib, the script), nothing written. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/report_dir.h"
#include "cli/report_script.h"
#include "report/rank.h"
#include "report/show.h"
#include "store/store.h"
#include "common/op.h"
#include "common/peak.h"
#include "common/problem.h"
#include "driver/shapes.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define RANKS_FILE ".tilebench-ranks.json"   /* the ranking handed to the script, removed after */

static void help(void)
{
    printf("usage: tilebench report --output DIR [--db FILE] [--run ID] [--compare RUN]\n"
           "                        [--control NAME] [--shape SHAPE]\n"
           "\n"
           "Write a run as one HTML page with its plots (DIR/index.html, the SVG figures inline\n"
           "and beside it as files; no network and no JavaScript needed to read it): per-shape\n"
           "rankings with their intervals, a heat map of variants x shapes coloured by %% of the\n"
           "better of cublaslt and cublaslt-tuned, a roofline, each family's design space one knob\n"
           "at a time around its best point, the SM clock (and NVML power) of every sample of one\n"
           "shape, and with --compare a before/after chart; under each plot its numbers as a\n"
           "table. Plots are drawn by matplotlib (Debian: python3-matplotlib), docs/report.md.\n"
           "\n"
           "  --output DIR     write here: a new directory, or one a report wrote before (it may\n"
           "                   hold only index.html and *.svg), replaced whole once the new\n"
           "                   report is complete\n"
           "  --db FILE        database (default " TB_DEFAULT_DB "), opened read-only\n"
           "  --run ID         run (default: the newest)\n"
           "  --compare RUN    the run before (a run id in the same database): the report's\n"
           "                   run against it, ratios and intervals by 'tilebench compare'\n"
           "  --control NAME   with --compare: divide each ratio by NAME's on the same shape\n"
           "                   (as compare --control), cancelling the drift between two runs\n"
           "  --shape SHAPE    MxNxK[xB] or BxHxSqxSkxD[:causal][:hkv=N]: the shape of the\n"
           "                   clock and power plot (default: the run's\n"
           "                   largest shape with clock samples)\n"
           "\n"
           "environment: TILEBENCH_PYTHON, the python3 to run (default /usr/bin/python3, else\n"
           "python3 on PATH).\n"
           "exit status: 0 written, 1 the report could not be written, 2 bad input or a missing\n"
           "requirement (nothing written).\n"
           "\n"
           "examples:\n"
           "  tilebench report --output results/report\n"
           "  tilebench report --db a.db --run 4 --compare 3 --control cublaslt --output pr-report\n");
}

/* ---- signals: stop the script, remove the temporary directory ------------------------------ */

static struct sigaction saved[3];
static const int caught[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
    tb_script_forward(sig);   /* remembered, and passed on to the script if it runs */
}

static void guard_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) {
        sigaction(caught[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN)   /* an ignored signal (nohup) stays ignored */
            sigaction(caught[i], &sa, NULL);
    }
}

static void unguard_signals(void)
{
    for (int i = 0; i < 3; i++) sigaction(caught[i], &saved[i], NULL);
}

/* ---- the ranking, as show computes it -------------------------------------------------------- */

static cJSON *num_or_null(double v)
{
    return v == v ? cJSON_CreateNumber(v) : cJSON_CreateNull();
}

/* One shape's ranked measurements: rank label, ratio to the best and its 95 % interval, the
 * order, seed, confidence and resample count of report/show.c (the same rows in the same order
 * give the same bits). A ranked measurement without its samples fails (a damaged file). */
static int rank_shape(tb_store *st, int64_t run_id, const tb_result_row **order, size_t cnt,
                      cJSON *out, char *msg, size_t len)
{
    qsort(order, cnt, sizeof *order, tb_show_cmp_rank);
    int nr = 0;
    while ((size_t)nr < cnt && tb_show_ranked(order[nr])) nr++;
    size_t m = (size_t)nr + 1;
    double *ratio = calloc(m, sizeof *ratio), *lo = calloc(m, sizeof *lo), *hi = calloc(m, sizeof *hi);
    int *tied = calloc(m, sizeof *tied), *ns = calloc(m, sizeof *ns), best = 0, have_ci = 0;
    double **smp = calloc(m, sizeof *smp);
    int rc = ratio && lo && hi && tied && ns && smp ? TB_OK : tb_fail(msg, len, TB_ENOMEM, "out of memory");
    for (int k = 0; k < nr && rc == TB_OK; k++) {
        size_t n = 0;
        double *clk = NULL;
        rc = tb_store_measurement_samples(st, &order[k]->m, &smp[k], &clk, &n, msg, len);
        ns[k] = (int)n;
        free(clk);
    }
    char why[TB_MSG_LEN];
    if (rc == TB_OK && nr >= 1 &&
        tb_rank_bootstrap((const double *const *)smp, ns, nr, 0.95, 2000,
                          (uint64_t)order[0]->p.id * 7919u + (uint64_t)run_id, ratio, lo, hi, tied,
                          &best, why, sizeof why) == TB_OK)
        have_ci = 1;
    cJSON *shape = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddItemToArray(out, shape);
    cJSON_AddNumberToObject(shape, "problem_id", (double)order[0]->p.id);
    cJSON_AddBoolToObject(shape, "intervals", have_ci);
    cJSON_AddItemToObject(shape, "ranked", rows);
    for (int k = 0; k < nr && rc == TB_OK; k++) {
        cJSON *r = cJSON_CreateObject();
        cJSON_AddItemToArray(rows, r);
        char label[16];
        if (have_ci && tied[k] && k > 0) snprintf(label, sizeof label, "=1");
        else snprintf(label, sizeof label, "%d", k + 1);
        cJSON_AddNumberToObject(r, "measurement_id", (double)order[k]->m.id);
        cJSON_AddNumberToObject(r, "variant_id", (double)order[k]->v.id);
        cJSON_AddStringToObject(r, "rank", label);
        cJSON_AddItemToObject(r, "ratio", num_or_null(have_ci ? ratio[k] : NAN));
        cJSON_AddItemToObject(r, "lo", num_or_null(have_ci ? lo[k] : NAN));
        cJSON_AddItemToObject(r, "hi", num_or_null(have_ci ? hi[k] : NAN));
        cJSON_AddBoolToObject(r, "tied", have_ci && tied[k]);
    }
    for (int k = 0; k < nr; k++) free(smp[k]);
    free(smp); free(ns); free(tied); free(hi); free(lo); free(ratio);
    return rc;
}

/* Write the ranking of every shape of run_id, and what the script needs from this build (the
 * GPU's nominal FLOP per clock per SM, common/peak.c), to path as one JSON document. */
static int write_ranks(tb_store *st, int64_t run_id, const char *path, char *msg, size_t len)
{
    tb_result_row *rows = NULL;
    size_t n = 0;
    int rc = tb_store_results(st, run_id, &rows, &n, msg, len);
    if (rc) return rc;
    tb_environment env;
    int have_env = 0;
    memset(&env, 0, sizeof env);
    if ((rc = tb_store_find_environment(st, run_id, &env, &have_env, msg, len))) {
        free(rows);
        return rc;
    }
    cJSON *doc = cJSON_CreateObject(), *shapes = cJSON_CreateArray();
    cJSON_AddNumberToObject(doc, "run", (double)run_id);
    double fpc = have_env ? tb_peak_flop_per_clk_sm(env.cc_major, env.cc_minor) : 0;
    cJSON_AddItemToObject(doc, "peak_flop_per_clk_sm", fpc > 0 ? cJSON_CreateNumber(fpc) : cJSON_CreateNull());
    /* the FP8 (E4M3 A and B) peak, for the e4m3 problems' % of peak and ceiling */
    double fpc8 = have_env ? tb_peak_flop_per_clk_sm_dtypes(env.cc_major, env.cc_minor, "e4m3,e4m3,") : 0;
    cJSON_AddItemToObject(doc, "peak_flop_per_clk_sm_fp8", fpc8 > 0 ? cJSON_CreateNumber(fpc8) : cJSON_CreateNull());
    cJSON_AddStringToObject(doc, "ranking", "report/rank.c: 95 % percentile bootstrap of the median "
                            "ratio to the best, 2000 resamples, show's seed");
    cJSON_AddItemToObject(doc, "shapes", shapes);
    const tb_result_row **order = malloc(sizeof *order * (n ? n : 1));
    if (!order) rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && rc == TB_OK && !tb_script_signal();) {
        size_t j = i;
        while (j < n && rows[j].p.id == rows[i].p.id) j++;
        for (size_t k = i; k < j; k++) order[k - i] = &rows[k];
        rc = rank_shape(st, run_id, order, j - i, shapes, msg, len);
        i = j;
    }
    free(order);
    free(rows);
    char *text = rc == TB_OK ? cJSON_PrintUnformatted(doc) : NULL;
    cJSON_Delete(doc);
    if (rc) return rc;
    if (!text) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    FILE *f = fopen(path, "w");
    int bad = !f || fputs(text, f) < 0;
    if (f && fclose(f) != 0) bad = 1;
    free(text);
    if (bad) return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", path, strerror(errno));
    return TB_OK;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The problem of run_id whose shape's canonical text (its op's: "4096x4096x4096",
 * "1x32x4096x4096x128:causal:hkv=8") is want (the first when several layouts share it), or 2
 * after printing an error that lists the run's shapes. */
static int find_shape(tb_store *st, int64_t run_id, const char *given, const char *want,
                      int64_t *problem_id)
{
    tb_result_row *rows = NULL;
    size_t n = 0;
    char msg[TB_MSG_LEN];
    if (tb_store_results(st, run_id, &rows, &n, msg, sizeof msg)) return tb_cli_error("%s", msg);
    char list[512] = "";
    size_t used = 0;
    *problem_id = 0;
    for (size_t i = 0; i < n; i++) {
        char t[160];
        tb_problem_info_text(&rows[i].p, t, sizeof t);
        if (!strcmp(t, want)) {
            *problem_id = rows[i].p.id;
            break;
        }
        if (i == 0 || rows[i - 1].p.id != rows[i].p.id) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", t);
            if (w > 0 && used + (size_t)w < sizeof list) used += (size_t)w;
        }
    }
    free(rows);
    if (*problem_id) return 0;
    return tb_cli_error("shape '%s' is not in run %lld (its shapes: %s)", given, (long long)run_id,
                        used ? list : "none");
}

int cmd_report(int argc, char **argv, const tb_paths *paths)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "run", required_argument, 0, 'r' },
        { "compare", required_argument, 0, 'c' }, { "control", required_argument, 0, 'C' },
        { "shape", required_argument, 0, 's' }, { "output", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB, *output = NULL, *control = NULL, *shape = NULL;
    long long run = 0, compare = 0;
    char want[160] = "";
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'r': if (tb_cli_int("--run", optarg, 1, INT64_MAX, &run)) return 2; break;
        case 'c': if (tb_cli_int("--compare", optarg, 1, INT64_MAX, &compare)) return 2; break;
        case 'C': control = optarg; break;
        case 's': shape = optarg; break;
        case 'o': output = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("report", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'report'", argv[optind]);
    if (!output) return tb_cli_error("report needs --output DIR (the directory to write the page and its figures into)");
    if (control && !compare) return tb_cli_error("--control needs --compare RUN (the run to compare against)");
    if (control && !*control) return tb_cli_error("an empty --control name");
    if (shape) {   /* the op's own parser (GEMM or attention), then its canonical text */
        tb_shape sh;
        char why[TB_MSG_LEN];
        if (tb_shape_parse(shape, &sh, why, sizeof why))
            return tb_cli_error("invalid value '%s' for --shape (%s)", shape, why);
        tb_op_of_shape(&sh)->shape_text(&sh, want, sizeof want);
    }

    /* the database, the runs and the shape, before anything is written */
    tb_store *st;
    int64_t run_id, problem_id = 0;
    int rc = tb_cli_open_run(db, run, &st, &run_id);
    if (rc) return rc;
    char msg[TB_MSG_LEN];
    if (compare) {
        if (compare == run_id) {
            tb_store_close(st);
            return tb_cli_error("--compare %lld is the report's own run: name the run before it", compare);
        }
        tb_run_info *ri = calloc(1, sizeof *ri);
        rc = ri ? tb_store_run_get(st, compare, ri, msg, sizeof msg) : tb_fail(msg, sizeof msg, TB_ENOMEM, "out of memory");
        free(ri);
        if (rc) {
            tb_store_close(st);
            return tb_cli_error("--compare: %s", msg);
        }
    }
    if (shape && (rc = find_shape(st, run_id, shape, want, &problem_id))) {
        tb_store_close(st);
        return rc;
    }
    char script[1200], python[1100];
    char *target = NULL;
    int exists = 0;
    mode_t mode = 0755;
    if ((rc = tb_script_find(paths, script, sizeof script)) ||
        (rc = tb_report_dir_check(output, db, &target, &exists, &mode))) {
        tb_store_close(st);
        return rc;
    }
    tb_script_python(python, sizeof python);
    char exe[1100];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) snprintf(exe, sizeof exe, "%s/tilebench", paths->exe_dir);
    else exe[n] = 0;

    /* from here on a signal removes what was made */
    guard_signals();
    char *tmp;
    if ((rc = tb_report_dir_temp(target, &tmp, msg, sizeof msg))) {
        tb_store_close(st);
        unguard_signals();
        free(target);
        return tb_cli_fail(rc, msg);
    }
    char ranks[1400];
    snprintf(ranks, sizeof ranks, "%s/" RANKS_FILE, tmp);
    rc = write_ranks(st, run_id, ranks, msg, sizeof msg);
    tb_store_close(st);
    int code = 0;
    if (rc) code = tb_cli_fail(rc, msg);
    else if (tb_script_signal()) code = 128 + tb_script_signal();
    else {
        char run_s[32], cmp_s[32], pid_s[32];
        snprintf(run_s, sizeof run_s, "%lld", (long long)run_id);
        snprintf(cmp_s, sizeof cmp_s, "%lld", compare);
        snprintf(pid_s, sizeof pid_s, "%lld", (long long)problem_id);
        char *args[24];
        int a = 0;
        args[a++] = python; args[a++] = "-B"; args[a++] = script;
        args[a++] = "--db"; args[a++] = (char *)db;
        args[a++] = "--run"; args[a++] = run_s;
        args[a++] = "--output"; args[a++] = tmp;
        args[a++] = "--ranks"; args[a++] = ranks;
        args[a++] = "--tilebench"; args[a++] = exe;
        if (compare) { args[a++] = "--compare"; args[a++] = cmp_s; }
        if (control) { args[a++] = "--control"; args[a++] = (char *)control; }
        if (problem_id) { args[a++] = "--shape-id"; args[a++] = pid_s; }
        args[a] = NULL;
        code = tb_script_run(args);
    }
    size_t figures = 0;
    if (code == 0) {
        unlink(ranks);
        char index[1400];
        snprintf(index, sizeof index, "%s/index.html", tmp);
        DIR *d = opendir(tmp);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 4 && !strcmp(e->d_name + l - 4, ".svg")) figures++;
        }
        if (d) closedir(d);
        if (!is_file(index)) {
            tb_cli_error("the report script wrote no index.html");
            code = TB_EXIT_FAIL;
        } else if (tb_script_signal()) code = 128 + tb_script_signal();
        else if (chmod(tmp, mode) != 0) {
            tb_cli_error("cannot write '%s': %s", output, strerror(errno));
            code = TB_EXIT_FAIL;
        }
        else if ((rc = tb_report_dir_swap(tmp, target, exists, msg, sizeof msg))) code = tb_cli_fail(rc, msg);
        else tmp[0] = 0;   /* moved into place */
    }
    if (tmp[0]) tb_report_dir_remove(tmp);
    unguard_signals();
    if (code == 0) {
        size_t l = strlen(output);
        while (l > 1 && output[l - 1] == '/') l--;
        printf("report of run %lld: %.*s/index.html and %zu figure%s\n", (long long)run_id, (int)l,
               output, figures, figures == 1 ? "" : "s");
    }
    free(tmp);
    free(target);
    return code;
}
