/* trials.c - the validation trials and phase A of tilebench-worker's measure mode: the
 * validated launch, the trials' seeds and verdicts, supports/setup/workspace and the trials
 * before timing, the first estimate (see trials.h). The trial after timing is run by
 * after_timing.c with the same functions. */
#define _GNU_SOURCE
#include "worker/trials.h"
#include "common/tb.h"
#include "worker/buffers.h"
#include "worker/discipline.h"
#include "worker/loader.h"
#include "worker/op_worker.h"
#include "worker/out.h"
#include "worker/step.h"
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t hash_str(const char *s, uint64_t h)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

static void heartbeat(void *ctx, int n)
{
    (void)ctx;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "progress");
    cJSON_AddNumberToObject(o, "n", n);
    tbw_out_obj(o);
}

static uint64_t hidden_seed(void)
{
    uint64_t x = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &x, sizeof x) != (ssize_t)sizeof x) x = 0;
        close(fd);
    }
    if (!x) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
    }
    return x & ((1ull << 52) - 1);   /* exact in a JSON number */
}

static double wall_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* One validated launch: the launch, a device sync, the check. Returns 0 ok (vr filled),
 * 1 failed (m filled), 2 context lost (m filled). */
int tbw_validated_launch(worker *w, vstate *vs, int trial, tb_val_result *vr, double *launch_ms)
{
    char msg[TB_MSG_LEN];
    tb_measurement *m = &vs->m;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    tbw_nvtx_push(w, vs, "validation");
    double t0 = wall_now_ms();
    cudaEventRecord(e0, w->s);
    int lrc = tbw_do_launch(&vs->lc, w->s);
    vs->host_est_ms = wall_now_ms() - t0;   /* the host's time of the launch() call */
    cudaEventRecord(e1, w->s);
    tbw_nvtx_pop();
    if (lrc) {
        m->status = TB_STATUS_CRASHED;
        snprintf(m->reason, sizeof m->reason, "launch returned %d (trial %d)", lrc, trial + 1);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        return tbw_context_ok() ? 1 : 2;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        return tbw_cuda_crash(m, "kernel failed", cudaGetErrorString(e)) ? 2 : 1;
    }
    vs->first_wall_ms = wall_now_ms() - t0;   /* to the device synchronisation */
    float f = 0;
    cudaEventElapsedTime(&f, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *launch_ms = f;
    vs->last_event_ms = f;
    if (w->opw->check(w, vr, msg, sizeof msg) != TB_OK)
        return tbw_cuda_crash(m, "validation failed to run", msg) ? 2 : 1;
    return 0;
}

/* Fold one trial's verdict into the measurement; returns 1 if it failed. */
int tbw_record_trial(tb_measurement *m, const tb_val_result *vr, int trial, int after_timing)
{
    m->trials = trial + 1;
    m->atol = vr->atol;
    m->rtol = vr->rtol;
    if (isnan(m->max_abs_err) || !vr->passed || vr->max_abs_err > m->max_abs_err) {
        m->max_abs_err = vr->max_abs_err;
        m->rel_fro_err = vr->rel_fro_err;
        m->n_bad = (int64_t)vr->n_bad;
        m->n_nonfinite = (int64_t)vr->n_nonfinite;
    }
    if (vr->passed) return 0;
    m->disposition = TB_DISP_INCORRECT;
    snprintf(m->rule, sizeof m->rule, "%s%s", after_timing ? "after-timing/" : "", vr->rule);
    snprintf(m->reason, sizeof m->reason, "trial %d%s: %s", trial + 1,
             after_timing ? " (after timing, new inputs at the same pointers)" : "", vr->reason);
    return 1;
}

/* Phase A for one variant: supports, setup, workspace, the trials before timing. Returns 0
 * when it is valid and may be timed; 1 when its result is final (unsupported, error, crashed,
 * invalid); 2 when the context is lost. */
int tbw_validate_before_timing(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    const tb_variant *v = vs->jv->v;
    launch_ctx *lc = &vs->lc;
    tb_measurement *m = &vs->m;
    lc->v = v;
    w->opw->launch_args(w, &lc->prob, &lc->io);   /* the op's problem and main buffers */
    vs->use_naive = strcmp(v->family, "cublaslt") == 0;   /* not validated against itself */
    uint64_t vseed = hash_str(v->name, w->seed ^ 0xcbf29ce484222325ull) & ((1ull << 50) - 1);
    vs->hseed = hidden_seed();
    vs->seeds[0] = vseed;
    vs->seeds[1] = vs->hseed;
    vs->seeds[2] = vseed + 7919;
    vs->ntr = w->trials < 2 ? 2 : w->trials;   /* the last one always runs after timing */
    vs->confirmed = -1;
    double launch_ms = 0;
    tb_val_result vr;
    int r;

    {   /* the host's refusal comes first: a variant that cannot see a member the problem needs
         * (an FP8 problem's scales) must not be asked, whatever its supports() would say */
        char hw[256] = "";
        if (tb_variant_host_refuses(v, &lc->prob, hw, sizeof hw)) {
            m->status = TB_STATUS_UNSUPPORTED;
            snprintf(m->reason, sizeof m->reason, "%s", hw);
            return 1;
        }
    }
    if (v->supports) {
        char sw[256] = "";
        if (!v->supports(&lc->prob, sw, sizeof sw)) {
            m->status = TB_STATUS_UNSUPPORTED;
            snprintf(m->reason, sizeof m->reason, "%s", sw[0] ? sw : "not supported");
            return 1;
        }
    }
    if (v->setup) {
        char sm[256] = "";
        if (v->setup(&lc->prob, (tb_stream)w->s, &lc->state, sm, sizeof sm) != 0) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "setup failed: %s", sm[0] ? sm : "(no message)");
            lc->state = NULL;
            return tbw_context_ok() ? 1 : 2;
        }
    }
    if (v->describe && v->describe(lc->state, m->describe, sizeof m->describe) != 0)
        m->describe[0] = 0;
    lc->ws_bytes = v->workspace_size ? v->workspace_size(&lc->prob) : 0;
    m->workspace_bytes = (int64_t)lc->ws_bytes;
    if (lc->ws_bytes) {
        cudaError_t e = cudaMalloc(&lc->ws, lc->ws_bytes);
        if (e != cudaSuccess) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "cannot allocate %zu workspace bytes: %s",
                     lc->ws_bytes, cudaGetErrorString(e));
            cudaGetLastError();
            lc->ws = NULL;
            return 1;
        }
    }
    if (tbw_persisting_l2_found(w->s, why, sizeof why)) { tbw_flag(m, "persisting-l2", why); return 1; }
    for (int t = 0; t < vs->ntr - 1; t++) {
        uint64_t seed = t < 2 ? vs->seeds[t] : vseed + 104729ull * (uint64_t)t;
        if (w->opw->prepare(w, vs, t, seed, t == 0, msg, sizeof msg)) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "%s", msg);
            return tbw_context_ok() ? 1 : 2;
        }
        r = tbw_validated_launch(w, vs, t, &vr, &launch_ms);
        if (r) return r;
        if (t == 0) {
            m->first_launch_ms = launch_ms;
            vs->est_wall_ms = vs->first_wall_ms;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", "estimate");
            /* the larger of the two: work on another stream is in the wall time only */
            cJSON_AddNumberToObject(o, "first_launch_ms", fmax(launch_ms, vs->first_wall_ms));
            tbw_out_obj(o);
        } else {
            heartbeat(NULL, 0);
        }
        if (tbw_record_trial(m, &vr, t, 0)) return 1;   /* invalid: never timed, never ranked */
        if (w->validate_only) { m->disposition = TB_DISP_PASSED; return 1; }
        if (tbw_persisting_l2_found(w->s, why, sizeof why)) { tbw_flag(m, "persisting-l2", why); return 1; }
    }
    /* the stream-discipline launch gets inputs no trial had: its event time is the estimate
     * --method auto chooses from, and a variant that replays answers stored for inputs it
     * has seen would be estimated at the cost of a copy */
    msg[0] = 0;
    if (tbw_refresh_inputs(w, 0, tbw_input_seed(vs->hseed, 0), msg, sizeof msg) != TB_OK ||
        cudaStreamSynchronize(w->s) != cudaSuccess) {
        if (!msg[0]) snprintf(msg, sizeof msg, "%s", cudaGetErrorString(cudaGetLastError()));
        return tbw_cuda_crash(m, "cannot refresh the inputs", msg) ? 2 : 1;
    }
    return tbw_stream_check(w, vs);
}

/* The variant's first estimate: the held launch's event time (GPU time only, the launch
 * queued before its stream ran), else the validated launches' (those hold the host's launch
 * time too: the first one pays for lazy module loading, so the lesser of the first and the
 * last). */
double tbw_estimate_ms(const vstate *vs)
{
    if (isfinite(vs->held_event_ms)) return vs->held_event_ms;
    return fmin(vs->m.first_launch_ms, vs->last_event_ms);
}
