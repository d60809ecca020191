/* sweep_worker.c - the life of one worker over a shape's variants (see sweep_int.h): its job,
 * the watchdog, each result stored as it arrives (with the sanitizer's verdict and, with several
 * GPUs, the GPU's UUID), a crash or hang recorded for the variant it was on, and a worker that
 * never became ready told apart as a GPU's failure when there are several GPUs. With a session
 * (o->session: search) the worker is kept alive across the jobs of one problem
 * (driver/session.h): taken when it serves the job, given back when it finished it. */
#define _GNU_SOURCE
#include "driver/sweep_int.h"
#include "driver/early.h"
#include "driver/spawn.h"
#include "driver/worker_job.h"
#include "driver/session.h"
#include "common/wire.h"
#include "common/op.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* extra_json gains key: value (a string) */
static void extra_add(tb_measurement *m, const char *key, const char *value)
{
    cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
    if (!x) x = cJSON_CreateObject();
    cJSON_AddStringToObject(x, key, value);
    char *t = cJSON_PrintUnformatted(x);
    if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
    cJSON_free(t);
    cJSON_Delete(x);
}

/* Add the sanitizer's verdict to a measurement: into extra_json, and as the disposition when
 * it found errors in a variant that otherwise passed. */
static void merge_sanitize(shape_ctx *sc, int vi, tb_measurement *m)
{
    if (!sc->san || !sc->san[vi][0]) return;
    extra_add(m, "sanitize", sc->san[vi]);
    if (sc->san_bad[vi] && m->disposition != TB_DISP_INCORRECT) {
        m->disposition = TB_DISP_INCORRECT;
        snprintf(m->rule, sizeof m->rule, "sanitize");
        snprintf(m->reason, sizeof m->reason, "compute-sanitizer: %s", sc->san[vi]);
    }
}

static int store_result(shape_ctx *sc, int vi, tb_measurement *m, char *msg, size_t len)
{
    merge_sanitize(sc, vi, m);
    if (sc->sh->multi && sc->gpu_uuid && sc->gpu_uuid[0]) extra_add(m, "gpu_uuid", sc->gpu_uuid);
    m->run_id = sc->run_id;
    m->variant_id = sc->cat->v[vi].id;
    m->problem_id = sc->problem_id;
    lk(sc->sh);
    const double t0 = tb_now();
    int rc = tb_store_put_measurement(sc->st, m, msg, len);
    if (sc->rep->phases) sc->rep->phases->s[TB_PH_STORE] += tb_now() - t0;
    if (rc) { ulk(sc->sh); return rc; }
    if (sc->mid) sc->mid[vi] = m->id;
    sc->todo[vi] = 0;
    sc->left--;
    sc->stored++;
    sc->sh->done++;
    if (sc->rep->result) sc->rep->result(sc->rep->ctx, &sc->cat->v[vi], sc->shape, m, sc->sh->done,
                                         sc->sh->total);
    ulk(sc->sh);
    return TB_OK;
}

int tb_sweep_fail_rest(shape_ctx *sc, tb_status status, const char *why, char *msg, size_t len)
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

/* The worker never got as far as measuring (it could not start, or ended or hung before it was
 * ready): whatever stopped it stops every variant. On one GPU they are recorded as errors; with
 * several the GPU is suspect, not the variants: the slot says so and the shape moves on. */
static int gpu_failed(shape_ctx *sc, const char *why, char *msg, size_t len)
{
    if (!sc->sh->multi) return tb_sweep_fail_rest(sc, TB_STATUS_ERROR, why, msg, len);
    sc->device_failed = 1;
    snprintf(sc->fail_why, sizeof sc->fail_why, "%s", why);
    return TB_OK;
}

/* One worker's life over one job: the variants still to do on this shape. With a session
 * (o->session, one GPU) the job carries "more", the worker is the session's when it serves the
 * same job (reused), and one that finished is given back alive; *again is set when a reused
 * worker ended before it was ready (it had exited between two jobs): the caller tries once more
 * with a new one. Returns as tb_sweep_one_worker. */
static int worker_job(shape_ctx *sc, const char *worker, const tb_sweep_opts *o,
                      const tb_problem *prob, const cJSON *job, tb_shape_session *ses,
                      const char *key, int may_reuse, int *again, char *msg, size_t len)
{
    char *argv[] = { (char *)"tilebench-worker", (char *)"measure", NULL };
    tb_proc p;
    const double spawned = tb_now();
    char dev[80], *env_line = NULL;
    if (o->device_uuid[0]) snprintf(dev, sizeof dev, "%s", o->device_uuid);
    else snprintf(dev, sizeof dev, "%d", o->device);
    const int reused = ses && may_reuse && tb_shape_session_take(ses, key, &p, &env_line);
    int took = 0;
    if (!reused) {
        lk(sc->sh);
        took = tb_early_worker_take(dev, &p, &env_line);
        ulk(sc->sh);
    }
    int rc = reused || took ? TB_OK : tb_proc_start(&p, worker, argv, msg, len);
    if (rc) {
        char why[TB_MSG_LEN];
        snprintf(why, sizeof why, "%s", msg);
        return gpu_failed(sc, why, msg, len);
    }
    if (ses) {
        ses->starts += !reused;
        ses->jobs++;
        /* a worker that ended between two jobs: EPIPE here, not a SIGPIPE that ends us */
        void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
        tb_wire_send(p.in_fd, job);
        signal(SIGPIPE, old_pipe);
    } else {
        tb_wire_send(p.in_fd, job);
        tb_proc_close_input(&p);
    }

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
            free(est);
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
                rc = gpu_failed(sc, "worker did not become ready in time", msg, len);
            }   /* else it hung between variants: the caller starts a new one */
            break;
        }
        if (r == 0) break;   /* the worker closed its end: done, crashed or exited */
        cJSON *obj = cJSON_Parse(line);
        const char *type = obj ? tb_json_str(obj, "type", "") : "";
        if (ses && !reused && strcmp(type, "env") == 0) tb_shape_session_env(ses, line);
        free(line);
        if (!obj) continue;
        if (strcmp(type, "env") == 0) {
            lk(sc->sh);
            if (!sc->sh->env_seen) {
                tb_environment env;
                if (tb_wire_env_from_json(obj, &env, msg, len) == TB_OK &&
                    tb_store_put_environment(sc->st, sc->run_id, &env, msg, len) == TB_OK)
                    sc->sh->env_seen = 1;
            }
            ulk(sc->sh);
        } else if (strcmp(type, "ready") == 0) {
            ready = 1;
            lk(sc->sh);
            if (sc->rep->phases) sc->rep->phases->s[TB_PH_WORKER_START] += tb_now() - spawned;
            ulk(sc->sh);
            deadline = tb_now() + o->timeout_s;
        } else if (strcmp(type, "begin") == 0) {
            current = tb_worker_job_find_variant(sc->cat, tb_json_str(obj, "variant", ""));
            /* variants take turns: each has its own limit, from its own first launch */
            per_launch_s = current >= 0 && est[current] > 0
                ? fmax(o->timeout_s, o->watchdog_factor * est[current]) : o->timeout_s;
            lk(sc->sh);
            if (current >= 0 && sc->rep->status)
                sc->rep->status(sc->rep->ctx, &sc->cat->v[current], sc->shape, sc->sh->done,
                                sc->sh->total);
            ulk(sc->sh);
            deadline = tb_now() + per_launch_s;   /* after any wait for the lock */
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
                    const tb_op_desc *d = tb_op_find(prob->op);   /* the work its op counts */
                    double fl = d ? d->flops(prob) : NAN;
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
            lk(sc->sh);
            if (pt && sc->rep->phases && tb_phases_from_json(pt, &wp, pm, sizeof pm) == TB_OK)
                for (int i = TB_PH_VALIDATION; i <= TB_PH_ENERGY; i++) sc->rep->phases->s[i] += wp.s[i];
            ulk(sc->sh);
            cJSON_free(pt);
            if (ses) { cJSON_Delete(obj); break; }   /* a session's worker waits for more */
        }
        cJSON_Delete(obj);
    }
    free(est);
    if (ses && finished && !killed && rc == TB_OK) {   /* alive: the next job of key is its */
        tb_shape_session_keep(ses, &p, key);
        return TB_OK;
    }
    tb_proc_close_input(&p);   /* a session's worker: it ends at end of file */
    if (!killed) tb_proc_wait(&p, 30.0);
    if (rc == TB_OK && reused && !finished && !killed && !ready && current < 0 && !fatal[0]) {
        *again = 1;   /* it had ended between two jobs: nothing of this job ran */
        tb_proc_free(&p);
        return TB_OK;
    }
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
            rc = gpu_failed(sc, why, msg, len);
        }
        /* else it ended between variants (it exits after a variant left its context
         * unusable): the caller starts a new worker for the rest */
    }
    tb_proc_free(&p);
    return rc;
}

int tb_sweep_one_worker(shape_ctx *sc, const char *worker, const tb_sweep_opts *o,
                        const tb_problem *prob, uint64_t seed, char *msg, size_t len)
{
    tb_shape_session *ses = sc->sh->multi ? NULL : o->session;   /* one GPU only */
    cJSON *job = tb_worker_job_json(o, prob, sc->cat, sc->todo, sc->cat->n, seed);
    char *key = ses ? tb_shape_session_key(job) : NULL;
    if (!job || (ses && !key)) {
        cJSON_Delete(job);
        free(key);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    if (ses) cJSON_AddTrueToObject(job, "more");
    int again = 0;
    int rc = worker_job(sc, worker, o, prob, job, ses, key, 1, &again, msg, len);
    if (rc == TB_OK && again) rc = worker_job(sc, worker, o, prob, job, ses, key, 0, &again, msg, len);
    cJSON_Delete(job);
    free(key);
    return rc;
}
