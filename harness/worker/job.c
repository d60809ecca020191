/* job.c - the `measure` mode of tilebench-worker: the job line parsed, the device opened and
 * the profiler detected, the environment record, the set-up; then the job's loop over its
 * variants, phase after phase: A one variant after another (trials.c), each method chosen
 * (timing.c), B the interleaved rounds of samples, each variant stopped by its own criterion,
 * D the confirming pass over the best few, C one variant after another (after_timing.c),
 * the NVML summary of phase B added to each result, and the results (result.c). See job.h;
 * the phases: worker.c and docs/method.md. */
#define _GNU_SOURCE
#include "worker/job.h"
#include "common/tb.h"
#include "common/wire.h"
#include "common/nvml.h"
#include "common/stats.h"
#include "common/stop.h"
#include "reference/ref.h"
#include "worker/op_worker.h"
#include "worker/after_timing.h"
#include "worker/buffers.h"
#include "worker/env.h"
#include "worker/job_line.h"
#include "worker/loader.h"
#include "worker/measure.h"
#include "worker/nvml_sampler.h"
#include "worker/out.h"
#include "worker/result.h"
#include "worker/state.h"
#include "worker/step.h"
#include "worker/timing.h"
#include "worker/trials.h"
#include "worker/worker_common.h"
#include <time.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ms(const void *a, const void *b)
{
    const vstate *x = *(vstate *const *)a, *y = *(vstate *const *)b;
    double mx = tb_stats_median(x->ms, x->n), my = tb_stats_median(y->ms, y->n);
    return (mx > my) - (mx < my);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Lockstep: a and b are copies of one library name under two namespaces ("base:X", "head:X") */
static int same_group(const vstate *a, const vstate *b)
{
    return a != b && a->jv->bare && b->jv->bare && !strcmp(a->jv->name + a->jv->bare, b->jv->name + b->jv->bare);
}

/* vs's stopping rule said stop: stop it, or under lockstep keep it sampling until every copy
 * of its library name still sampling has said stop too, then stop them all in one round, so
 * that sample i of each was taken in round i (the gate pairs them: report/verdict.h). A copy
 * stopped otherwise (a lost sample, a full buffer) no longer holds the others. Returns how
 * many stopped. */
static int stop_satisfied(const worker *w, vstate **act, int na, vstate *vs)
{
    vs->satisfied = 1;
    if (w->lockstep)
        for (int k = 0; k < na; k++)
            if (act[k]->sampling && !act[k]->satisfied && same_group(vs, act[k])) return 0;
    int stopped = 0;
    for (int k = 0; k < na; k++)
        if (act[k]->sampling && (act[k] == vs || (w->lockstep && same_group(vs, act[k])))) {
            act[k]->sampling = 0;
            stopped++;
        }
    return stopped;
}

/* Phase B (and D): interleaved rounds over the variants still sampling. */
static void interleave(worker *w, vstate **act, int na, int confirm_samples)
{
    int left = 0;
    for (int i = 0; i < na; i++) left += act[i]->sampling;
    int *order = malloc(sizeof *order * (size_t)(na ? na : 1));
    uint64_t rng = w->seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < na; i++) order[i] = i;
    while (left > 0) {
        /* a new order every round: no variant always follows the same one */
        for (int i = na - 1; i > 0; i--) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            int j = (int)((rng >> 33) % (uint64_t)(i + 1));
            int t = order[i]; order[i] = order[j]; order[j] = t;
        }
        for (int oi = 0; oi < na; oi++) {
            int i = order[oi];
            vstate *vs = act[i];
            if (!vs->sampling) continue;
            tb_sample smp;
            int r = tbw_take_sample(w, vs, &smp);
            if (r == 2) tbw_lost_exit(w, vs);
            if (r == 1) { vs->sampling = 0; vs->active = 0; left--; continue; }
            if (confirm_samples) {
                if (tbw_push_sample(vs, &smp)) { vs->sampling = 0; left--; continue; }
                if (vs->n >= confirm_samples) { vs->sampling = 0; left--; }
                continue;
            }
            if (tbw_push_sample(vs, &smp)) { vs->sampling = 0; left--; continue; }
            vs->elapsed_s += smp.wall_ms * 1e-3;
            /* a stream or graph sample is one launch's share of a batch of vs->reps launches:
             * min-time counts the batch, the GPU time actually spent (issue 28) */
            tb_stop_add_timed(vs->stop, smp.ms, smp.ms * (vs->reps > 1 ? vs->reps : 1));
            if (vs->satisfied || tb_stop_done(vs->stop, vs->elapsed_s, vs->stop_why, sizeof vs->stop_why))
                left -= stop_satisfied(w, act, na, vs);
        }
    }
    free(order);
}

/* The job's problem and seed into w (its buffers are allocated apart: tbw_alloc_bufs). */
static int take_problem(const cJSON *j, worker *w, char *msg, size_t len)
{
    tb_problem prob;
    int rc = tb_wire_problem_from_json(cJSON_GetObjectItemCaseSensitive(j, "problem"), &prob, msg, len);
    if (rc) return rc;
    /* what differs between operations: the worker's table (worker/op_worker.h) */
    w->opw = tbw_op_for(prob.op);
    if (!w->opw)
        return tb_fail(msg, len, TB_EWORKER, "problems of op %u: the worker cannot measure them",
                       (unsigned)prob.op);
    w->op = prob.op;
    rc = w->opw->take(w, &prob, msg, len);
    if (rc) return rc;
    w->seed = (uint64_t)tb_json_num(j, "seed", 1);
    return TB_OK;
}

/* The job's problem, seeds and options (rest: the job less its variants) into w. */
static int parse_options(const cJSON *j, worker *w, char *msg, size_t len)
{
    int rc = take_problem(j, w, msg, len);
    if (rc) return rc;
    w->device = (int)tb_json_num(j, "device", 0);
    w->slot = (int)tb_json_num(j, "slot", -1);
    const char *uuid = tb_json_str(j, "device_uuid", "");
    if (uuid[0] && tbw_resolve_device(uuid, &w->device, msg, len) != TB_OK) return TB_ENOGPU;
    w->trials = (int)tb_json_num(j, "trials", 3);
    w->validate_only = (int)tb_json_num(j, "validate_only", 0);
    w->dist = strcmp(tb_json_str(j, "init", "uniform"), "normal") == 0 ? TB_INIT_NORMAL
                                                                        : TB_INIT_UNIFORM;
    w->warmup = (int)tb_json_num(j, "warmup", 3);
    snprintf(w->stop_spec, sizeof w->stop_spec, "%s", tb_json_str(j, "stop", "stdrel"));
    snprintf(w->method, sizeof w->method, "%s", tb_json_str(j, "method", "auto"));
    w->l2_hot = !strcmp(tb_json_str(j, "l2", "cold"), "hot");
    w->profile = (int)tb_json_num(j, "profile", 0);
    w->energy = (int)tb_json_num(j, "energy", 1);
    w->confirm = (int)tb_json_num(j, "confirm", 1);
    w->pace = tb_json_num(j, "pace", 0);
    w->lockstep = (int)tb_json_num(j, "lockstep", 0);
    return TB_OK;
}

/* The job's variants (its "variants" array) into *jvs (free it). */
static int parse_variants(const cJSON *vs, job_variant **jvs, int *njv, char *msg, size_t len)
{
    int n = cJSON_GetArraySize(vs);
    *jvs = calloc((size_t)(n ? n : 1), sizeof **jvs);
    *njv = 0;
    if (!*jvs) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, vs) {
        job_variant *jv = &(*jvs)[(*njv)++];
        snprintf(jv->name, sizeof jv->name, "%s", tb_json_str(it, "name", ""));
        snprintf(jv->file, sizeof jv->file, "%s", tb_json_str(it, "file", ""));
        jv->index = (int)tb_json_num(it, "index", 0);
        const char *ns = tb_json_str(it, "ns", "");
        size_t nl = strlen(ns);
        if (nl && !strncmp(jv->name, ns, nl) && jv->name[nl] == ':') jv->bare = (int)nl + 1;
    }
    return TB_OK;
}

/* Is a profiler attached? Then the blocking kernel would deadlock against its serialisation:
 * it stays off. Nsight tools inject through CUDA_INJECTION64_PATH; any CUPTI subscriber makes
 * our own subscription fail with MULTIPLE_SUBSCRIBERS. */
static void CUPTIAPI no_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *i)
{
    (void)u; (void)d; (void)c; (void)i;
}

static void detect_profiler(worker *w)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    w->profiler[0] = 0;
    if (inj && *inj) {
        snprintf(w->profiler, sizeof w->profiler, "profiler injected (CUDA_INJECTION64_PATH)");
        return;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult r = cuptiSubscribe(&sub, (CUpti_CallbackFunc)no_callback, NULL);
    if (r == CUPTI_SUCCESS) cuptiUnsubscribe(sub);
    else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(w->profiler, sizeof w->profiler, "another CUPTI subscriber (a profiler)");
}

/* Open the device and report its environment (an {"type":"env"} record): TB_OK, or a
 * fatal record sent and non-zero. Without need_env an environment that cannot be read is
 * left unreported (the parent has its own). */
static int open_and_report(int device, tb_environment *env, int need_env)
{
    char msg[TB_MSG_LEN];
    if (tbw_open_device(device, msg, sizeof msg) != TB_OK) {
        tbw_out_simple("fatal", "error", msg);
        return 2;
    }
    if (tbw_collect_env(device, env, msg, sizeof msg) != TB_OK) {
        if (!need_env) return TB_OK;
        tbw_out_simple("fatal", "error", msg);
        return 2;
    }
    cJSON *o = tb_wire_env_to_json(env);
    cJSON_AddStringToObject(o, "type", "env");
    tbw_out_obj(o);
    return TB_OK;
}

/* One job's variants through the phases (A validation, method and warm-up, B interleaved
 * timing, D the confirming pass, C the checks), each result sent, then {"type":"done"} with the
 * job's own phases. The device, the buffers and the reference library are the session's. */
static void run_job(worker *w, job_variant *jvs, int njv)
{
    char msg[TB_MSG_LEN] = "", nm[TB_MSG_LEN];
    int rc;
    w->energy_s = 0;
    tb_phases ph;
    memset(&ph, 0, sizeof ph);
    double t = now_s(), t1;
    vstate *vss = calloc((size_t)(njv ? njv : 1), sizeof *vss);
    vstate **act = calloc((size_t)(njv ? njv : 1), sizeof *act);
    int na = 0;
    /* phase A: validation, one variant after another */
    for (int i = 0; i < njv; i++) {
        vstate *vs = &vss[i];
        vs->jv = &jvs[i];
        tb_measurement_init(&vs->m);
        vs->energy_j = vs->power_w = NAN;
        tbw_send_begin(vs, "validation");
        tb_lib *lib = NULL;
        rc = tb_lib_open(vs->jv->file, &lib, msg, sizeof msg);
        if (rc == TB_OK) rc = tb_lib_variant(lib, (uint32_t)vs->jv->index, &vs->jv->v, msg, sizeof msg);
        if (rc == TB_OK && (!vs->jv->v || strcmp(vs->jv->v->name, vs->jv->name + vs->jv->bare) != 0)) {
            rc = TB_ELOAD;
            snprintf(msg, sizeof msg, "'%s' index %d is no longer '%s'", vs->jv->file,
                     vs->jv->index, vs->jv->name + vs->jv->bare);
        }
        tb_lib_free(lib);
        if (rc != TB_OK) {
            vs->m.status = TB_STATUS_ERROR;
            snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
            vs->jv->v = NULL;
            tbw_send_result(w, vs);
            continue;
        }
        cudaCtxResetPersistingL2Cache();
        cudaGetLastError();
        vs->held_event_ms = NAN;
        int r = tbw_validate_before_timing(w, vs);
        if (r == 2) tbw_lost_exit(w, vs);
        if (r == 1) { tbw_release_variant(w, vs, 0); tbw_send_result(w, vs); continue; }
        vs->short_kernel = tbw_is_short(vs);
        act[na++] = vs;
    }
    ph.s[TB_PH_VALIDATION] = (t1 = now_s()) - t;
    t = t1;
    /* each valid variant's method, from its estimate; under auto one method for the shape */
    int shape_short = 0;
    for (int i = 0; i < na; i++) shape_short |= act[i]->short_kernel;
    int nv = na;
    na = 0;
    for (int i = 0; i < nv; i++) {
        vstate *vs = act[i];
        int r = tbw_prepare_timing(w, vs, shape_short);
        if (r == 2) tbw_lost_exit(w, vs);
        if (r == 1) { tbw_release_variant(w, vs, 0); tbw_send_result(w, vs); continue; }
        vs->active = vs->sampling = 1;
        act[na++] = vs;
    }
    ph.s[TB_PH_WARMUP] = (t1 = now_s()) - t;
    t = t1;
    if (na > 0) {
        /* phase B: interleaved rounds, each variant stopped by its own criterion */
        if (tb_measure_gap_baseline(&w->md, !w->l2_hot, &w->base_cold, &w->noop_ms, msg, sizeof msg) != TB_OK ||
            tb_measure_gap_baseline(&w->md, 0, &w->base_graph, NULL, msg, sizeof msg) != TB_OK)
            w->base_cold = w->base_graph = w->noop_ms = NAN;
        if (!(w->noop_ms >= 0) || w->noop_ms > 0.05)
            w->noop_ms = NAN;   /* not measured, or implausible (over 50 us) */
        if (tb_measure_event_overhead(&w->md, !w->l2_hot, &w->event_ms, msg, sizeof msg) != TB_OK ||
            !(w->event_ms >= 0) || w->event_ms > 0.05)
            w->event_ms = NAN;   /* not measured, or implausible (over 50 us) */
        tb_nvml_sampler *smp = NULL;
        if (w->nvml) tb_nvml_sampler_start(w->nvml, 10, &smp, nm, sizeof nm);
        interleave(w, act, na, 0);
        tb_nvml_summary sum;
        memset(&sum, 0, sizeof sum);
        if (smp) tb_nvml_sampler_stop(smp, &sum);
        /* phase D: the best few again, interleaved: is the winner still the winner? */
        vstate *top[TB_CONFIRM_TOP];
        int nt = 0;
        vstate **sorted = malloc(sizeof *sorted * (size_t)na);
        int ns = 0;
        for (int i = 0; i < na; i++) if (act[i]->active && act[i]->n > 0) sorted[ns++] = act[i];
        qsort(sorted, (size_t)ns, sizeof *sorted, cmp_ms);
        for (int i = 0; i < ns && nt < TB_CONFIRM_TOP; i++) top[nt++] = sorted[i];
        if (nt >= 2 && w->confirm) {
            int first_n[TB_CONFIRM_TOP], want = 1 << 30;
            for (int i = 0; i < nt; i++) { first_n[i] = top[i]->n; if (top[i]->n < want) want = top[i]->n; }
            if (want > 50) want = 50;
            if (want < 10) want = 10;
            for (int i = 0; i < nt; i++) top[i]->sampling = 1;
            /* the confirming samples go after the first pass's; counted from there */
            for (int i = 0; i < nt; i++) top[i]->sampling = top[i]->active;
            int target[TB_CONFIRM_TOP];
            for (int i = 0; i < nt; i++) target[i] = first_n[i] + want;
            int left = 0;
            for (int i = 0; i < nt; i++) left += top[i]->sampling;
            while (left > 0) {
                for (int i = 0; i < nt; i++) {
                    vstate *vs = top[i];
                    if (!vs->sampling) continue;
                    tb_sample s2;
                    int r = tbw_take_sample(w, vs, &s2);
                    if (r == 2) tbw_lost_exit(w, vs);
                    if (r == 1 || tbw_push_sample(vs, &s2)) { vs->sampling = 0; vs->active = 0; left--; continue; }
                    if (vs->n >= target[i]) { vs->sampling = 0; left--; }
                }
            }
            double best = INFINITY;
            int bi = -1;
            for (int i = 0; i < nt; i++) {
                if (!top[i]->active) continue;
                top[i]->confirm_median = tb_stats_median(top[i]->ms + first_n[i], top[i]->n - first_n[i]);
                if (top[i]->confirm_median < best) { best = top[i]->confirm_median; bi = i; }
            }
            for (int i = 0; i < nt; i++) {
                if (!top[i]->active) continue;
                top[i]->confirmed = (i == 0) ? (bi == 0) : (bi == i);
                /* keep the first pass's samples as the measurement; the second is a check */
                top[i]->n = first_n[i];
            }
        }
        free(sorted);
        ph.s[TB_PH_TIMING] = (t1 = now_s()) - t;
        t = t1;
        /* phase C: per variant */
        for (int i = 0; i < na; i++) {
            vstate *vs = act[i];
            tbw_send_begin(vs, "checks");
            if (vs->active) {
                int r = tbw_check_after_timing(w, vs);
                if (r == 2) tbw_lost_exit(w, vs);
            }
            if (w->nvml && smp) {
                cJSON *x = cJSON_Parse(vs->m.extra_json[0] ? vs->m.extra_json : "{}");
                if (x) {
                    cJSON *o = cJSON_AddObjectToObject(x, "nvml");
                    cJSON_AddNumberToObject(o, "samples", sum.n);
                    cJSON_AddNumberToObject(o, "sm_mhz_min", sum.sm_mhz_min);
                    cJSON_AddNumberToObject(o, "sm_mhz_mean", sum.sm_mhz_mean);
                    cJSON_AddNumberToObject(o, "sm_mhz_max", sum.sm_mhz_max);
                    cJSON_AddNumberToObject(o, "power_w_mean", sum.power_w_mean);
                    cJSON_AddNumberToObject(o, "power_w_max", sum.power_w_max);
                    cJSON_AddNumberToObject(o, "temp_c_max", sum.temp_c_max);
                    cJSON_AddNumberToObject(o, "reasons_or", (double)sum.reasons_or);
                    cJSON_AddNumberToObject(o, "throttled_samples", sum.n_throttled);
                    cJSON_AddNumberToObject(o, "power_capped_samples", sum.n_power_capped);
                    cJSON_AddNumberToObject(o, "violation_power_ms", sum.violation_power_ms);
                    cJSON_AddNumberToObject(o, "violation_thermal_ms", sum.violation_thermal_ms);
                    char *t = cJSON_PrintUnformatted(x);
                    if (t && strlen(t) < sizeof vs->m.extra_json)
                        snprintf(vs->m.extra_json, sizeof vs->m.extra_json, "%s", t);
                    cJSON_free(t);
                    cJSON_Delete(x);
                }
            }
            tbw_send_result(w, vs);
            tbw_release_variant(w, vs, 0);
        }
    }
    ph.s[TB_PH_ENERGY] = w->energy_s;
    ph.s[TB_PH_CHECKS] = now_s() - t - w->energy_s;
    if (ph.s[TB_PH_CHECKS] < 0) ph.s[TB_PH_CHECKS] = 0;
    tbw_out_done(&ph);
    free(vss);
    free(act);
}

int tbw_cmd_measure(const char *early_device)
{
    char msg[TB_MSG_LEN] = "";
    worker w;
    memset(&w, 0, sizeof w);
    /* started early (measure --device D): the device is opened and reported before the job
     * arrives, while the parent probes the variants (the parent's GPU check is this record) */
    int early = -1;
    tb_environment env;
    if (early_device) {
        if (tbw_resolve_device(early_device, &early, msg, sizeof msg) != TB_OK) {
            tbw_out_simple("fatal", "error", msg);
            return 2;
        }
        if (open_and_report(early, &env, 1)) return 2;
    }
    tb_linebuf lb = { 0 };
    char *line = tbw_read_job(&lb);
    if (!line) { tb_linebuf_free(&lb); tbw_out_simple("fatal", "error", "no job on stdin"); return 2; }
    job_variant *jvs = NULL;
    int njv = 0, more = 0;
    cJSON *first = NULL, *vars = NULL;   /* the first job less its variants: the session's */
    int rc = tbw_job_split(line, &first, &vars, &more, msg, sizeof msg);
    free(line);
    if (rc == TB_OK) rc = parse_options(first, &w, msg, sizeof msg);
    if (rc == TB_OK) rc = parse_variants(vars, &jvs, &njv, msg, sizeof msg);
    cJSON_Delete(vars);
    if (rc) { cJSON_Delete(first); tb_linebuf_free(&lb); tbw_out_simple("fatal", "error", msg); return 2; }
    /* a test hook (docs/cli.md): the worker of one slot of a --devices sweep fails before it
     * measures anything, as a broken GPU's would, so the others must finish its shapes */
    const char *hook = getenv("TILEBENCH_TEST_FAIL_SLOT");
    if (hook && *hook && w.slot >= 0 && atoi(hook) == w.slot) {
        snprintf(msg, sizeof msg, "planted failure of slot %d (TILEBENCH_TEST_FAIL_SLOT)", w.slot);
        tbw_out_simple("fatal", "error", msg);
        return 3;
    }
    if (early >= 0 && w.device != early) {
        snprintf(msg, sizeof msg, "the job is for GPU %d, this worker opened GPU %d", w.device, early);
        tbw_out_simple("fatal", "error", msg);
        return 2;
    }
    if (early >= 0) w.env = env;
    else if (open_and_report(w.device, &w.env, 0)) return 2;
    detect_profiler(&w);
    char nm[TB_MSG_LEN];
    if (tb_nvml_open(nm, sizeof nm) != TB_OK ||
        tb_nvml_device_by_pci(w.env.pci_bus_id, &w.nvml, nm, sizeof nm) != TB_OK)
        w.nvml = NULL;
    if (cudaStreamCreateWithFlags(&w.s, cudaStreamNonBlocking) != cudaSuccess ||
        tb_ref_open(&w.ref, msg, sizeof msg) != 0 || tbw_alloc_bufs(&w, msg, sizeof msg) != TB_OK) {
        if (!msg[0]) snprintf(msg, sizeof msg, "cannot set up the worker");
        tbw_out_simple("fatal", "error", msg);
        return 2;
    }
    /* the session (job_line.h): after a job with "more", the next job line, for the same
     * problem, seeds and options: its variants on the same context, buffers and reference;
     * with "keep_worker", for another problem and seed too: the problem's buffers are freed
     * and the new problem's allocated (the context, the reference and w->md stay) */
    int status = 0;
    cJSON *prev = NULL;   /* the job measured last, when not the first */
    for (;;) {
        tbw_out_simple("ready", NULL, NULL);
        run_job(&w, jvs, njv);
        free(jvs);
        jvs = NULL;
        if (!more || !(line = tbw_read_job(&lb))) break;   /* stdin ended: the session is over */
        cJSON *rest = NULL;
        int retake = 0;
        rc = tbw_job_split(line, &rest, &vars, &more, msg, sizeof msg);
        free(line);
        if (rc == TB_OK) rc = tbw_job_follow(first, prev ? prev : first, rest, &retake, msg, sizeof msg);
        if (rc == TB_OK && retake) {
            tbw_free_problem(&w);
            rc = take_problem(rest, &w, msg, sizeof msg);
            if (rc == TB_OK) rc = w.opw->alloc(&w, msg, sizeof msg);
        }
        if (rc == TB_OK) rc = parse_variants(vars, &jvs, &njv, msg, sizeof msg);
        cJSON_Delete(prev);
        prev = rest;
        cJSON_Delete(vars);
        if (rc) { tbw_out_simple("fatal", "error", msg); status = 2; break; }
    }
    free(jvs);
    cJSON_Delete(prev);
    cJSON_Delete(first);
    tb_linebuf_free(&lb);
    tb_ref_close(w.ref);
    return status;
}
