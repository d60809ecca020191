/* sweep.c - the parent's measurement loop (see sweep.h). */
#define _GNU_SOURCE
#include "driver/sweep.h"
#include "driver/early.h"
#include "common/nvml.h"
#include "driver/spawn.h"
#include "driver/counters_pass.h"
#include "driver/worker_job.h"
#include "common/tb.h"
#include "common/wire.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void tb_sweep_opts_default(tb_sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timeout_s = 10.0;
    o->watchdog_factor = 50.0;
    o->max_time_s = 1.0;
    o->target_rse = 0.005;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->warmup = 3;
    o->trials = 3;
    snprintf(o->layout, sizeof o->layout, "tn");
    o->seed = 20261123;
    snprintf(o->init, sizeof o->init, "uniform");
    o->alpha = 1.0;
    o->beta = 0.0;
    o->device = 0;
    snprintf(o->stop, sizeof o->stop, "stdrel");
    snprintf(o->method, sizeof o->method, "auto");
    snprintf(o->l2, sizeof o->l2, "cold");
}

void tb_sweep_problem(const tb_shape *s, const tb_sweep_opts *o, tb_problem_info *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->op, sizeof p->op, "gemm");
    p->m = s->m; p->n = s->n; p->k = s->k; p->batch = s->batch;
    snprintf(p->dtypes, sizeof p->dtypes, "bf16,bf16,bf16,bf16,f32");
    snprintf(p->layouts, sizeof p->layouts, "%s", o->layout);
    int a_row = o->layout[0] == 't', b_col = o->layout[1] == 'n';
    p->lda = (a_row ? s->k : s->m) + o->pad;
    p->ldb = (b_col ? s->k : s->n) + o->pad;
    p->ldc = p->ldd = s->n + o->pad;
    p->alpha = o->alpha;
    p->beta = o->beta;
    snprintf(p->label, sizeof p->label, "%s", s->label);
}

static void problem_gemm(const tb_problem_info *p, tb_gemm *g)
{
    memset(g, 0, sizeof *g);
    g->m = p->m; g->n = p->n; g->k = p->k; g->batch = p->batch;
    g->a_type = g->b_type = g->c_type = g->d_type = TB_DTYPE_BF16;
    g->acc_type = TB_DTYPE_F32;
    g->a_layout = p->layouts[0] == 't' ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    g->b_layout = p->layouts[1] == 'n' ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    g->c_layout = g->d_layout = TB_LAYOUT_ROW;
    g->lda = p->lda; g->ldb = p->ldb; g->ldc = p->ldc; g->ldd = p->ldd;
    g->stride_a = (g->a_layout == TB_LAYOUT_ROW ? p->m : p->k) * p->lda;
    g->stride_b = (g->b_layout == TB_LAYOUT_COL ? p->n : p->k) * p->ldb;
    g->stride_c = p->m * p->ldc;
    g->stride_d = p->m * p->ldd;
    g->alpha = p->alpha;
    g->beta = p->beta;
}

int tb_sweep_probe_env(const char *worker, const char *device, tb_environment *env, char *msg,
                       size_t len)
{
    char dev[80];
    snprintf(dev, sizeof dev, "%s", device);
    char *argv[] = { (char *)"tilebench-worker", (char *)"env", (char *)"--device", dev, NULL };
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    if (rc) return rc;
    tb_proc_close_input(&p);
    rc = tb_fail(msg, len, TB_ENOGPU, "no GPU: the worker reported nothing");
    char *line = NULL;
    while (tb_proc_next(&p, tb_now() + 120.0, NULL, &line) == 1) {
        cJSON *o = cJSON_Parse(line);
        free(line);
        if (!o) continue;
        const char *type = tb_json_str(o, "type", "");
        if (strcmp(type, "env") == 0) rc = tb_wire_env_from_json(o, env, msg, len);
        else if (strcmp(type, "fatal") == 0)
            rc = tb_fail(msg, len, TB_ENOGPU, "%s", tb_json_str(o, "error", "no GPU"));
        cJSON_Delete(o);
    }
    tb_proc_wait(&p, 10.0);
    if (rc != TB_OK && p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 127) {
        char last[256];
        tb_proc_last_log_line(&p, last, sizeof last);
        rc = tb_fail(msg, len, TB_EWORKER, "%s", last[0] ? last : "cannot run the worker");
    }
    tb_proc_free(&p);
    return rc;
}

typedef struct shape_ctx {
    int64_t *mid;          /* per variant: the id of its stored measurement on this shape */
    char (*san)[256];      /* per variant: the sanitizer's verdict, "" when not run */
    int *san_bad;
    tb_store *st;
    int64_t run_id, problem_id;
    const tb_catalog *cat;
    const tb_shape *shape;
    const tb_sweep_report *rep;
    int *todo;
    size_t left, *done, total;
} shape_ctx;

/* Add the sanitizer's verdict to a measurement: into extra_json, and as the disposition when
 * it found errors in a variant that otherwise passed. */
static void merge_sanitize(shape_ctx *sc, int vi, tb_measurement *m)
{
    if (!sc->san || !sc->san[vi][0]) return;
    cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
    if (!x) x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, "sanitize", sc->san[vi]);
    char *t = cJSON_PrintUnformatted(x);
    if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
    cJSON_free(t);
    cJSON_Delete(x);
    if (sc->san_bad[vi] && m->disposition != TB_DISP_INCORRECT) {
        m->disposition = TB_DISP_INCORRECT;
        snprintf(m->rule, sizeof m->rule, "sanitize");
        snprintf(m->reason, sizeof m->reason, "compute-sanitizer: %s", sc->san[vi]);
    }
}

static int store_result(shape_ctx *sc, int vi, tb_measurement *m, char *msg, size_t len)
{
    merge_sanitize(sc, vi, m);
    m->run_id = sc->run_id;
    m->variant_id = sc->cat->v[vi].id;
    m->problem_id = sc->problem_id;
    const double t0 = tb_now();
    int rc = tb_store_put_measurement(sc->st, m, msg, len);
    if (sc->rep->phases) sc->rep->phases->s[TB_PH_STORE] += tb_now() - t0;
    if (rc) return rc;
    if (sc->mid) sc->mid[vi] = m->id;
    sc->todo[vi] = 0;
    sc->left--;
    (*sc->done)++;
    if (sc->rep->result) sc->rep->result(sc->rep->ctx, &sc->cat->v[vi], sc->shape, m, *sc->done, sc->total);
    return TB_OK;
}

static int fail_rest(shape_ctx *sc, tb_status status, const char *why, char *msg, size_t len)
{
    for (size_t i = 0; i < sc->cat->n; i++) {
        if (!sc->todo[i]) continue;
        tb_measurement m;
        tb_measurement_init(&m);
        m.status = status;
        snprintf(m.reason, sizeof m.reason, "%s", why);
        int rc = store_result(sc, (int)i, &m, msg, len);
        if (rc) return rc;
    }
    return TB_OK;
}

/* One worker's life over the variants still to do on this shape. Returns TB_OK when the
 * worker finished or was replaced (the caller loops while sc->left), TB_EINTR, TB_EDB. */
static int one_worker(shape_ctx *sc, const char *worker, const tb_sweep_opts *o,
                      const tb_gemm *g, uint64_t seed, int *env_seen, char *msg, size_t len)
{
    char *argv[] = { (char *)"tilebench-worker", (char *)"measure", NULL };
    tb_proc p;
    const double spawned = tb_now();
    char dev[80], *env_line = NULL;
    if (o->device_uuid[0]) snprintf(dev, sizeof dev, "%s", o->device_uuid);
    else snprintf(dev, sizeof dev, "%d", o->device);
    int rc = tb_early_worker_take(dev, &p, &env_line) ? TB_OK
                                                      : tb_proc_start(&p, worker, argv, msg, len);
    if (rc) {
        char why[TB_MSG_LEN];
        snprintf(why, sizeof why, "%s", msg);
        return fail_rest(sc, TB_STATUS_ERROR, why, msg, len);
    }
    cJSON *job = tb_worker_job_json(o, g, sc->cat, sc->todo, sc->cat->n, seed);
    tb_wire_send(p.in_fd, job);
    cJSON_Delete(job);
    tb_proc_close_input(&p);

    int current = -1, finished = 0, killed = 0, ready = 0;
    double per_launch_s = o->timeout_s;
    double *est = calloc(sc->cat->n ? sc->cat->n : 1, sizeof *est);   /* first launch, s */
    double deadline = tb_now() + 120.0 + o->timeout_s;   /* CUDA init, allocation */
    char fatal[TB_MSG_LEN] = "";
    rc = TB_OK;
    for (;;) {
        char *line = env_line;   /* the early worker's environment record, as if it came now */
        env_line = NULL;
        int r = line ? 1 : tb_proc_next(&p, deadline, &tb_sweep_stop, &line);
        if (r == -2) {
            tb_proc_kill(&p);
            tb_worker_wait_context_gone(p.pid, sc->rep);
            tb_proc_free(&p);
            return TB_EINTR;
        }
        if (r == -1) {
            tb_proc_kill(&p);
            killed = 1;
            tb_worker_wait_context_gone(p.pid, sc->rep);
            if (current >= 0) {
                tb_measurement m;
                tb_measurement_init(&m);
                m.status = TB_STATUS_TIMEOUT;
                snprintf(m.reason, sizeof m.reason, "no progress for %.1f s (watchdog: the larger "
                         "of --timeout %.1f s and %.0fx the first launch); worker killed",
                         per_launch_s, o->timeout_s, o->watchdog_factor);
                rc = store_result(sc, current, &m, msg, len);
            } else if (!ready) {
                rc = fail_rest(sc, TB_STATUS_ERROR, "worker did not become ready in time", msg, len);
            }   /* else it hung between variants: the caller starts a new one */
            break;
        }
        if (r == 0) break;   /* the worker closed its end: done, crashed or exited */
        cJSON *obj = cJSON_Parse(line);
        free(line);
        if (!obj) continue;
        const char *type = tb_json_str(obj, "type", "");
        if (strcmp(type, "env") == 0) {
            if (!*env_seen) {
                tb_environment env;
                if (tb_wire_env_from_json(obj, &env, msg, len) == TB_OK &&
                    tb_store_put_environment(sc->st, sc->run_id, &env, msg, len) == TB_OK)
                    *env_seen = 1;
            }
        } else if (strcmp(type, "ready") == 0) {
            ready = 1;
            if (sc->rep->phases) sc->rep->phases->s[TB_PH_WORKER_START] += tb_now() - spawned;
            deadline = tb_now() + o->timeout_s;
        } else if (strcmp(type, "begin") == 0) {
            current = tb_worker_job_find_variant(sc->cat, tb_json_str(obj, "variant", ""));
            /* variants take turns: each has its own limit, from its own first launch */
            per_launch_s = current >= 0 && est[current] > 0
                ? fmax(o->timeout_s, o->watchdog_factor * est[current]) : o->timeout_s;
            deadline = tb_now() + per_launch_s;
            if (current >= 0 && sc->rep->status)
                sc->rep->status(sc->rep->ctx, &sc->cat->v[current], sc->shape, *sc->done, sc->total);
        } else if (strcmp(type, "estimate") == 0) {
            double est_s = tb_json_num(obj, "first_launch_ms", 0) * 1e-3;
            if (current >= 0) est[current] = est_s;
            per_launch_s = fmax(o->timeout_s, o->watchdog_factor * est_s);
            deadline = tb_now() + per_launch_s;
        } else if (strcmp(type, "progress") == 0) {
            deadline = tb_now() + per_launch_s;
        } else if (strcmp(type, "result") == 0) {
            int vi = tb_worker_job_find_variant(sc->cat, tb_json_str(obj, "variant", ""));
            tb_measurement m;
            if (vi >= 0 && sc->todo[vi] &&
                tb_wire_measurement_from_json(obj, &m, msg, len) == TB_OK) {
                if (!isnan(m.median_ms) && m.median_ms > 0) {
                    double fl = 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
                    m.tflops = fl / (m.median_ms * 1e-3) / 1e12;   /* the parent's own figure */
                }
                rc = store_result(sc, vi, &m, msg, len);
                tb_measurement_free_samples(&m);
                if (rc) { cJSON_Delete(obj); break; }
            }
            current = -1;
            deadline = tb_now() + o->timeout_s;
        } else if (strcmp(type, "fatal") == 0) {
            snprintf(fatal, sizeof fatal, "worker failed: %s", tb_json_str(obj, "error", "?"));
        } else if (strcmp(type, "done") == 0) {
            finished = 1;
            const cJSON *ph = cJSON_GetObjectItemCaseSensitive(obj, "phases");
            char *pt = ph ? cJSON_PrintUnformatted(ph) : NULL;
            tb_phases wp;
            char pm[128];
            if (pt && sc->rep->phases && tb_phases_from_json(pt, &wp, pm, sizeof pm) == TB_OK)
                for (int i = TB_PH_VALIDATION; i <= TB_PH_ENERGY; i++) sc->rep->phases->s[i] += wp.s[i];
            cJSON_free(pt);
        }
        cJSON_Delete(obj);
    }
    free(est);
    if (!killed) tb_proc_wait(&p, 30.0);
    if (rc == TB_OK && !finished && !killed && sc->left) {
        char how[128], last[300], why[TB_TEXT_LEN];
        tb_proc_describe_exit(&p, how, sizeof how);
        tb_proc_last_log_line(&p, last, sizeof last);
        tb_worker_wait_context_gone(p.pid, sc->rep);
        if (current >= 0) {
            tb_measurement m;
            tb_measurement_init(&m);
            m.status = TB_STATUS_CRASHED;
            snprintf(why, sizeof why, "worker %s%s%s", how, last[0] ? ": " : "", last);
            snprintf(m.reason, sizeof m.reason, "%s", why);
            rc = store_result(sc, current, &m, msg, len);
        } else if (!ready) {
            /* it never got as far as measuring: whatever stopped it stops every variant */
            snprintf(why, sizeof why, "%s", fatal[0] ? fatal : "worker ended before measuring");
            if (!fatal[0]) {
                size_t n = strlen(why);
                snprintf(why + n, sizeof why - n, " (%s%s%s)", how, last[0] ? ": " : "", last);
            }
            rc = fail_rest(sc, TB_STATUS_ERROR, why, msg, len);
        }
        /* else it ended between variants (it exits after a variant left its context
         * unusable): the caller starts a new worker for the rest */
    }
    tb_proc_free(&p);
    return rc;
}

/* The --sanitize pass of one variant: a worker under compute-sanitizer validates it once
 * (no timing); the verdict is the tool's error summary. */
static void sanitize_one(const char *worker, const tb_sweep_opts *o, const tb_gemm *g,
                         const tb_catalog *cat, size_t vi, uint64_t seed, char *verdict,
                         size_t vlen, int *bad)
{
    char msg[TB_MSG_LEN];
    char tool[32];
    snprintf(tool, sizeof tool, "%s", o->sanitize);
    char *argv[] = { (char *)o->sanitizer, (char *)"--tool", tool, (char *)"--error-exitcode",
                     (char *)"86", (char *)"--print-limit", (char *)"20",
                     (char *)"--target-processes", (char *)"all",
                     /* padding after every allocation: a write just past D must not land in
                      * the next allocation, where memcheck would take it for valid */
                     (char *)"--padding", (char *)"65536", (char *)worker,
                     (char *)"measure", NULL };
    tb_proc p;
    *bad = 0;
    if (tb_proc_start(&p, o->sanitizer, argv, msg, sizeof msg)) {
        snprintf(verdict, vlen, "%s: not run: %s", tool, msg);
        return;
    }
    int *one = calloc(cat->n, sizeof *one);
    one[vi] = 1;
    cJSON *job = tb_worker_job_json(o, g, cat, one, cat->n, seed);
    free(one);
    cJSON_AddNumberToObject(job, "validate_only", 1);
    cJSON_ReplaceItemInObject(job, "trials", cJSON_CreateNumber(2));
    tb_wire_send(p.in_fd, job);
    cJSON_Delete(job);
    tb_proc_close_input(&p);
    char *line;
    double deadline = tb_now() + 600.0;
    int r;
    while ((r = tb_proc_next(&p, deadline, &tb_sweep_stop, &line)) == 1) free(line);
    if (r != 0) tb_proc_kill(&p);
    tb_proc_wait(&p, 30.0);
    /* "========= ERROR SUMMARY: 3 errors" is the last thing the tool prints */
    const char *sum = strstr(p.log_tail, "ERROR SUMMARY:");
    long nerr = sum ? strtol(sum + 14, NULL, 10) : -1;
    const char *first = strstr(p.log_tail, "========= ");
    char firstline[160] = "";
    if (first && nerr > 0) {
        const char *e = strchr(first, '\n');
        snprintf(firstline, sizeof firstline, "%.*s", (int)(e ? e - first - 10 : 120), first + 10);
    }
    if (r == -1) snprintf(verdict, vlen, "%s: timed out after 600 s", tool);
    else if (nerr < 0) {
        char how[96];
        tb_proc_describe_exit(&p, how, sizeof how);
        snprintf(verdict, vlen, "%s: no summary (worker %s)", tool, how);
    } else {
        snprintf(verdict, vlen, "%s: %ld error%s%s%s", tool, nerr, nerr == 1 ? "" : "s",
                 firstline[0] ? ": " : "", firstline);
        *bad = nerr > 0;
    }
    tb_worker_wait_context_gone(p.pid, &(tb_sweep_report){ 0 });
    tb_proc_free(&p);
}

int tb_sweep_run(tb_store *st, int64_t run_id, const char *worker, const tb_sweep_opts *o,
                 const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                 const tb_sweep_report *rep, char *msg, size_t len)
{
    size_t total = 0, done = 0;
    for (size_t s = 0; s < shapes->n; s++)
        if (!skip || !skip[s]) total += cat->n;
    int *todo = calloc(cat->n ? cat->n : 1, sizeof *todo);
    char (*san)[256] = o->sanitize[0] ? calloc(cat->n ? cat->n : 1, sizeof *san) : NULL;
    int *san_bad = calloc(cat->n ? cat->n : 1, sizeof *san_bad);
    int64_t *mid = calloc(cat->n ? cat->n : 1, sizeof *mid);
    int env_seen = 0, rc = TB_OK;
    if (san) tb_early_worker_drop();   /* no context of ours beside the sanitizer's */
    for (size_t s = 0; s < shapes->n && rc == TB_OK; s++) {
        if (skip && skip[s]) continue;
        tb_problem_info pi;
        tb_sweep_problem(&shapes->v[s], o, &pi);
        rc = tb_store_put_problem(st, &pi, msg, len);
        if (rc) break;
        tb_gemm g;
        problem_gemm(&pi, &g);
        for (size_t i = 0; i < cat->n; i++) todo[i] = 1;
        uint64_t seed = o->seed * 1000003ull + (uint64_t)s;
        for (size_t i = 0; san && i < cat->n && !tb_sweep_stop; i++) {
            if (rep->status) rep->status(rep->ctx, &cat->v[i], &shapes->v[s], done, total);
            sanitize_one(worker, o, &g, cat, i, seed, san[i], sizeof san[i], &san_bad[i]);
        }
        if (tb_sweep_stop) { rc = TB_EINTR; break; }
        for (size_t i = 0; i < cat->n; i++) mid[i] = 0;
        shape_ctx sc = { mid, san, san_bad, st, run_id, pi.id, cat, &shapes->v[s], rep, todo, cat->n,
                         &done, total };
        int attempts = 0;
        while (sc.left && rc == TB_OK) {
            size_t before = sc.left;
            rc = one_worker(&sc, worker, o, &g, seed, &env_seen, msg, len);
            if (rc == TB_OK && sc.left == before && ++attempts >= 3)
                rc = fail_rest(&sc, TB_STATUS_ERROR, "worker made no progress three times", msg, len);
        }
        if (rc == TB_OK && o->metrics[0]) {
            const double t0 = tb_now();
            rc = tb_sweep_counters_pass(st, worker, o, &g, cat, mid, seed, rep, msg, len);
            if (rep->phases) rep->phases->s[TB_PH_COUNTERS] += tb_now() - t0;
        }
    }
    free(todo);
    free(san);
    free(san_bad);
    free(mid);
    return rc;
}

int tb_sweep_plan(tb_store *st, int64_t run_id, const tb_sweep_opts *o, const tb_catalog *cat,
                  const tb_shape_list *shapes, const int *skip, char *msg, size_t len)
{
    int rc = TB_OK;
    for (size_t s = 0; s < shapes->n && rc == TB_OK; s++) {
        if (skip && skip[s]) continue;
        tb_problem_info pi;
        tb_sweep_problem(&shapes->v[s], o, &pi);
        rc = tb_store_put_problem(st, &pi, msg, len);
        for (size_t i = 0; rc == TB_OK && i < cat->n; i++) {
            tb_measurement m;
            tb_measurement_init(&m);
            m.status = TB_STATUS_PLANNED;
            m.run_id = run_id;
            m.variant_id = cat->v[i].id;
            m.problem_id = pi.id;
            snprintf(m.reason, sizeof m.reason, "to be measured: tilebench sweep --resume %lld",
                     (long long)run_id);
            rc = tb_store_put_measurement(st, &m, msg, len);
        }
    }
    return rc;
}
