/* run.c - the steps a measuring command shares (run.h): the GPU, the variants for it, a new
 * run in the store, the measurement with its progress reporter and signal handling. Written
 * once for sweep and gate, so both check, store and measure the same way. */
#define _GNU_SOURCE
#include "cli/run.h"
#include "cli/git_sha.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "common/op.h"
#include "common/tb.h"
#include "driver/early.h"
#include "driver/sass.h"
#include "driver/sweep.h"
#include "common/nvml.h"
#include <cjson/cJSON.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


/* Other processes on the GPU env describes: refused with --exclusive (TB_EXIT_USAGE), else a
 * warning. 0 or the exit code, printed. */
static int check_others(const tb_sweep_opts *o, const tb_environment *env)
{
    cJSON *x = cJSON_Parse(env->extra_json);
    const cJSON *op = x ? cJSON_GetObjectItemCaseSensitive(x, "other_processes") : NULL;
    int others = cJSON_IsNumber(op) ? op->valueint : 0;
    char *pids = x ? cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(x, "other_pids")) : NULL;
    int rc = 0;
    if (others > 0 && o->exclusive)
        rc = tb_cli_error("%d other process%s use%s %s (pids %s); --exclusive refuses to measure",
                          others, others == 1 ? "" : "es", others == 1 ? "s" : "", env->gpu_name,
                          pids ? pids : "?");
    else if (others > 0)
        tb_cli_warn("%d other process%s use%s the GPU %s (pids %s): figures may be disturbed "
                    "(--exclusive refuses)", others, others == 1 ? "" : "es",
                    others == 1 ? "s" : "", env->gpu_uuid, pids ? pids : "?");
    cJSON_free(pids);
    cJSON_Delete(x);
    return rc;
}

int tb_cli_gpu(const tb_paths *paths, const tb_sweep_opts *o, const char *what,
               tb_environment *env)
{
    char devspec[80], msg[TB_MSG_LEN];
    if (o->device_uuid[0]) snprintf(devspec, sizeof devspec, "%s", o->device_uuid);
    else snprintf(devspec, sizeof devspec, "%d", o->device);
    /* the measuring worker itself, started now: its report is the check (driver/early.h) */
    int rc = tb_early_worker_start(paths->worker, devspec, env, msg, sizeof msg);
    if (rc) return tb_cli_error("%s needs an NVIDIA GPU: %s (list, show, export and doctor "
                                "work without one)", what, msg);
    return check_others(o, env) ? TB_EXIT_USAGE : 0;
}

/* one item of --devices: an index 0..63 or a UUID (GPU-...), as the worker takes them */
static int device_item(const char *it, char *out, size_t n)
{
    if (!strncmp(it, "GPU-", 4) && strlen(it) > 4 && strlen(it) < n) {
        for (const char *p = it + 4; *p; p++)
            if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F') || *p == '-'))
                return -1;
        snprintf(out, n, "%s", it);
        return 0;
    }
    char *end;
    long v = strtol(it, &end, 10);
    if (!*it || *end || it[0] == '-' || it[0] == '+' || v < 0 || v > 63) return -1;
    snprintf(out, n, "%ld", v);
    return 0;
}

/* "all": the GPUs a worker can see. Where CUDA_VISIBLE_DEVICES is set, its entries are all
 * the worker sees, as indices 0..k-1; else every GPU NVML lists, by UUID (the parent has no
 * CUDA to count them with). */
static int all_devices(tb_sweep_opts *o, char *msg, size_t len)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
        int k = 1;
        for (const char *p = vis; *p; p++) k += *p == ',';
        for (int i = 0; i < k && o->ndev < TB_MAX_DEVICES; i++) snprintf(o->dev[o->ndev++], sizeof o->dev[0], "%d", i);
        return 0;
    }
    unsigned n = 0;
    if (tb_nvml_open(msg, len) != TB_OK || tb_nvml_device_count(&n, msg, len) != TB_OK)
        return -1;
    for (unsigned i = 0; i < n && o->ndev < TB_MAX_DEVICES; i++) {
        tb_nvml_dev *d;
        if (tb_nvml_device_by_index(i, &d, msg, len) != TB_OK ||
            tb_nvml_uuid(d, o->dev[o->ndev], sizeof o->dev[0]) != TB_OK) return -1;
        o->ndev++;
    }
    return n ? 0 : tb_fail(msg, len, TB_ENOGPU, "NVML sees no GPU");
}

int tb_cli_devices_parse(const char *spec, tb_sweep_opts *o)
{
    o->ndev = 0;
    if (!strcmp(spec, "all")) return 0;
    /* no empty item: strtok_r would pass over it */
    int bad = !spec[0] || spec[0] == ',' || spec[strlen(spec) - 1] == ',' || strstr(spec, ",,");
    char *copy = strdup(spec), *save = NULL;
    for (char *it = copy ? strtok_r(copy, ",", &save) : NULL; it && !bad; it = strtok_r(NULL, ",", &save))
        bad = o->ndev == TB_MAX_DEVICES || device_item(it, o->dev[o->ndev++], sizeof o->dev[0]);
    free(copy);
    if (bad || !o->ndev)
        return tb_cli_error("invalid value '%s' for --devices (all, or GPU indices 0-63 and UUIDs "
                            "GPU-..., comma separated, at most %d)", spec, TB_MAX_DEVICES);
    return 0;
}

int tb_cli_devices(const tb_paths *paths, const char *spec, tb_sweep_opts *o, const char *what,
                   tb_environment *env)
{
    char msg[TB_MSG_LEN];
    int rc = tb_cli_devices_parse(spec, o);
    if (rc) return rc;
    if (!strcmp(spec, "all") && all_devices(o, msg, sizeof msg))
        return tb_cli_error("--devices all needs NVML to list the GPUs (%s): name them, "
                            "e.g. --devices 0,1", msg);
    /* the first GPU through the early worker, as a sweep on one GPU; the others by an env probe,
     * which must find the same model: a shape's variants meet on one GPU, and a run's rankings
     * never mix models */
    if (!strncmp(o->dev[0], "GPU-", 4)) snprintf(o->device_uuid, sizeof o->device_uuid, "%s", o->dev[0]);
    else { o->device_uuid[0] = 0; o->device = atoi(o->dev[0]); }
    rc = tb_cli_gpu(paths, o, what, env);
    if (rc) return rc;
    snprintf(o->dev_uuid[0], sizeof o->dev_uuid[0], "%s", env->gpu_uuid);
    for (int k = 1; k < o->ndev; k++) {
        tb_environment e;
        if (tb_sweep_probe_env(paths->worker, o->dev[k], &e, msg, sizeof msg) != TB_OK)
            return tb_cli_error("--devices: GPU %s: %s", o->dev[k], msg);
        if (check_others(o, &e)) return TB_EXIT_USAGE;
        if (strcmp(e.gpu_name, env->gpu_name) || e.cc_major != env->cc_major ||
            e.cc_minor != env->cc_minor || e.sm_count != env->sm_count)
            return tb_cli_error("--devices mixes GPU models: GPU %s is %s (sm_%d%d, %d SMs), GPU %s "
                                "is %s (sm_%d%d, %d SMs); a sweep compares one model: sweep each on "
                                "its own", o->dev[0], env->gpu_name, env->cc_major, env->cc_minor,
                                env->sm_count, o->dev[k], e.gpu_name, e.cc_major, e.cc_minor, e.sm_count);
        snprintf(o->dev_uuid[k], sizeof o->dev_uuid[k], "%s", e.gpu_uuid);
        for (int j = 0; j < k; j++)
            if (!strcmp(o->dev_uuid[j], o->dev_uuid[k]) && e.gpu_uuid[0]) {
                tb_cli_warn("--devices names GPU %s twice: its two workers share it, and each "
                            "disturbs the other's timing (for tests)", e.gpu_uuid);
                break;
            }
    }
    return 0;
}

int tb_cli_catalog_add(const tb_paths *paths, tb_catalog *cat, char **files, size_t nfiles,
                       const char *ns)
{
    char msg[TB_MSG_LEN];
    int rc = tb_catalog_load_ns(cat, paths->worker, files, nfiles, ns, msg, sizeof msg);
    tb_strv_free(files, nfiles);
    return rc ? tb_cli_error("%s", msg) : 0;
}

int tb_cli_catalog_finish(tb_catalog *cat, const tb_environment *env, char **inc, size_t ninc,
                          char **exc, size_t nexc, uint32_t ops)
{
    char msg[TB_MSG_LEN];
    for (size_t i = 0; env && i < cat->n;) {
        char why[256];
        if (!tb_sass_runs_on(cat->v[i].sass, env->cc_major, env->cc_minor, why, sizeof why))
            tb_catalog_refuse(cat, i, why);
        else i++;
    }
    for (size_t i = 0; i < cat->n_refusals; i++) tb_cli_warn("refused: %s", cat->refusals[i]);
    if (tb_catalog_select(cat, inc, ninc, exc, nexc, msg, sizeof msg)) {
        tb_catalog_free(cat);
        return tb_cli_error("%s", msg);
    }
    size_t w = 0;
    for (size_t i = 0; i < cat->n; i++)
        if (cat->v[i].ops & ops) cat->v[w++] = cat->v[i];
    if (w == 0) {
        char names[128] = "";
        for (size_t k = 0, at = 0; k < tb_op_count() && at < sizeof names; k++)
            if (ops & (1u << tb_op_at(k)->op))
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", at ? ", " : "", tb_op_at(k)->name);
        const size_t n = cat->n;
        tb_catalog_free(cat);
        return tb_cli_error("none of the %zu selected variants computes %s, the shapes' operation "
                            "(see 'tilebench list')", n, names);
    }
    cat->n = w;
    return 0;
}

static void join_argv(int argc, char **argv, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "tilebench");
    for (int i = 0; i < argc && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, " %s", argv[i]);
}

static void iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int tb_cli_run_begin(tb_store *st, int argc, char **argv, const char *options_json,
                     tb_catalog *cat, int64_t *run_id, char *msg, size_t len)
{
    tb_run_info *run = calloc(1, sizeof *run);
    if (!run) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    iso_now(run->started_at, sizeof run->started_at);
    join_argv(argc, argv, run->command_line, sizeof run->command_line);
    snprintf(run->git_sha, sizeof run->git_sha, "%s", tb_git_sha);
    snprintf(run->version, sizeof run->version, "%s", TB_VERSION);
    snprintf(run->status, sizeof run->status, "running");
    snprintf(run->options_json, sizeof run->options_json, "%s", options_json ? options_json : "{}");
    int rc = tb_store_run_begin(st, run, msg, len);
    if (rc == TB_OK) *run_id = run->id;
    for (size_t i = 0; rc == TB_OK && i < cat->n; i++)
        rc = tb_store_put_variant(st, *run_id, &cat->v[i], msg, len);
    free(run);
    return rc;
}

static void on_signal(int sig)
{
    (void)sig;
    tb_sweep_stop = 1;
}

int tb_cli_run_measure(tb_store *st, int64_t run_id, const tb_paths *paths, const tb_sweep_opts *o,
                       const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                       int progress, int quiet, const char *gpu_name, double *seconds,
                       tb_phases *phases, char *msg, size_t len)
{
    tb_progress r = { progress && tb_progress_can_draw(), quiet, tb_progress_now_s(), 0 };
    tb_sweep_report rep = { &r, tb_progress_warning, tb_progress_result, tb_progress_status, phases, NULL };
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    if (!r.tty && !quiet)
        fprintf(stderr, "run %lld: %zu variants x %zu shapes on %s%s\n", (long long)run_id, cat->n,
                shapes->n, gpu_name, o->ndev > 1 ? " (several GPUs: --devices)" : "");
    int rc = tb_sweep_run(st, run_id, paths->worker, o, cat, shapes, skip, &rep, msg, len);
    tb_progress_clear(&r);
    if (seconds) *seconds = tb_progress_now_s() - r.t0;
    return rc;
}
