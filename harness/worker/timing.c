/* timing.c - the timing of one variant in tilebench-worker's measure mode: its method, its
 * launches per sample and its warm-up; one sample by that method, with new inputs drawn and
 * the L2 flushed before it (outside the timed region), taken again when its blocking kernel
 * timed out; the host time of every launch() call; the samples kept (see timing.h). The
 * methods themselves are measure_cold.c and measure_graph.c; the input sets and their
 * refresh, buffers.c. Invariant: every kept sample of a variant had the same launches per
 * sample (vs->reps), which after_timing.c's hidden-work rule relies on. */
#define _GNU_SOURCE
#include "worker/timing.h"
#include "common/tb.h"
#include "common/stats.h"
#include "common/stop.h"
#include "device/tbdev.h"
#include "worker/buffers.h"
#include "worker/discipline.h"
#include "worker/step.h"
#include "worker/trials.h"
#include "worker/worker_common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The variant's launch (tb_launch_fn, tb_launch_set_fn; ctx is its vstate), with the host's
 * wall time of the launch() call added to vs->host_acc_ms: nvbench's CPU time, kept beside
 * the GPU time so that a launch slow on the host is a fact in the table, not a distortion of
 * the GPU figure. */
static int timed_launch(void *c, cudaStream_t s)
{
    vstate *vs = c;
    double t0 = now_ms();
    int rc = tbw_do_launch(&vs->lc, s);
    vs->host_acc_ms += now_ms() - t0;
    vs->host_calls++;
    return rc;
}

static int timed_launch_set(void *c, int set, cudaStream_t s)
{
    vstate *vs = c;
    double t0 = now_ms();
    int rc = tbw_do_launch_set(&vs->lc, set, s);
    vs->host_acc_ms += now_ms() - t0;
    vs->host_calls++;
    return rc;
}

/* Launches per stream sample the host can queue in TB_QUEUE_FRAC of the blocking kernel's
 * timeout at host_ms per launch() call: e.g. 62 at 2 ms and the default 500 ms. Without the
 * blocking kernel, or with no host time measured, no bound (INT_MAX). */
static int host_cap(const worker *w, double host_ms)
{
    if (!w->md.use_block || !(host_ms > 0)) return 0x7fffffff;
    double n = floor(TB_QUEUE_FRAC * w->md.block_timeout_ms / host_ms);
    return n < 1 ? 1 : n > 1e9 ? 0x7fffffff : (int)n;
}

/* Is the variant a short kernel for --method auto? Without the held launch, only if its
 * device-synchronised wall time is short too: work hidden on another stream would not be
 * captured into a graph, nor timed. */
int tbw_is_short(const vstate *vs)
{
    double est = tbw_estimate_ms(vs);
    if (isfinite(vs->held_event_ms)) return est < TB_GRAPH_BELOW_MS;
    return est < TB_GRAPH_BELOW_MS && vs->first_wall_ms < TB_GRAPH_BELOW_MS + 0.1;
}

/* w->warmup launches, unflushed: of the captured graph g, or plain ones on the main buffers,
 * whose median host time becomes vs->host_est_ms. Returns 0, or 1/2 (state.h). */
static int warm_up(worker *w, vstate *vs, cudaGraphExec_t g)
{
    double host[64];
    int nh = 0, lrc = 0;
    tbw_send_begin(vs, "warm-up");
    tbw_nvtx_push(w, vs, "warm-up");
    for (int i = 0; i < w->warmup && !lrc; i++) {
        if (g) {
            lrc = (int)cudaGraphLaunch(g, w->s);
            continue;
        }
        vs->host_acc_ms = 0;
        vs->host_calls = 0;
        lrc = timed_launch(vs, w->s);
        if (nh < 64) host[nh++] = vs->host_acc_ms;
    }
    tbw_nvtx_pop();
    if (nh) vs->host_est_ms = tb_stats_median(host, nh);
    cudaError_t e = cudaDeviceSynchronize();
    if (lrc || e != cudaSuccess) {
        if (e == cudaSuccess) {
            vs->m.status = TB_STATUS_CRASHED;
            snprintf(vs->m.reason, sizeof vs->m.reason, "launch returned %d during warm-up", lrc);
            return tbw_context_ok() ? 1 : 2;
        }
        return tbw_cuda_crash(&vs->m, "kernel failed during warm-up", cudaGetErrorString(e)) ? 2 : 1;
    }
    return 0;
}

/* Choose and prepare the variant's method; warm it up. shape_short: under --method auto, a
 * variant of this shape is short, and every variant of it is timed by the stream method, so
 * that a shape's figures come from one method. Returns 0, or 1/2 (state.h). */
int tbw_prepare_timing(worker *w, vstate *vs, int shape_short)
{
    char msg[TB_MSG_LEN];
    double est = tbw_estimate_ms(vs);
    int graph = !strcmp(w->method, "graph");
    /* without the blocking kernel (under a profiler) stream launches would be timed at the
     * host's pace: there the stream method falls back to the graph */
    int stream = !strcmp(w->method, "stream") || (!strcmp(w->method, "auto") && shape_short);
    if (stream && !strcmp(w->method, "auto") && !vs->short_kernel)
        snprintf(vs->method_note, sizeof vs->method_note, "stream, as the shorter variants of "
                 "this shape (estimate %.4f ms)", est);
    if (stream && !w->md.use_block) {
        snprintf(vs->method_note, sizeof vs->method_note, "graph instead of stream: no "
                 "blocking kernel (%s)", w->profiler[0] ? w->profiler : "--profile");
        stream = 0;
        graph = 1;
    }
    snprintf(vs->method, sizeof vs->method, "cold");
    if (tb_stop_create(w->stop_spec, &vs->stop, msg, sizeof msg) != TB_OK) {
        vs->m.status = TB_STATUS_ERROR;
        snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
        return 1;
    }
    vs->cap = 256;
    vs->ms = malloc(sizeof(double) * (size_t)vs->cap);
    vs->wall = malloc(sizeof(double) * (size_t)vs->cap);
    vs->clk = malloc(sizeof(double) * (size_t)vs->cap);
    vs->host = malloc(sizeof(double) * (size_t)vs->cap);
    vs->timed_out = malloc((size_t)vs->cap);
    /* warm-up on the main buffers, whatever the method: its host time bounds the stream
     * method's launches per sample */
    int r = warm_up(w, vs, NULL);
    if (r) return r;
    if (graph || stream) {
        /* launches for a sample of about TB_GRAPH_TARGET_MS, each on an input set of its own
         * (one set, used by every launch, under --l2 hot) */
        int most = stream ? TB_STREAM_MAX_REPS : TB_GRAPH_MAX_REPS;
        int reps = est > 0 ? (int)ceil(TB_GRAPH_TARGET_MS / est) : 100;
        if (reps > most) reps = most;
        if (reps < 1) reps = 1;
        vs->reps_wanted = reps;
        /* queued behind the blocking kernel, a sample's launches must all be queued before it
         * times out: a launch() slow on the host gets fewer (graph: one host call a sample) */
        int cap = stream ? host_cap(w, vs->host_est_ms) : 0x7fffffff;
        if (cap < reps) reps = vs->host_cap = cap;
        if (tbw_ensure_sets(w, w->l2_hot ? 1 : reps, msg, sizeof msg) != TB_OK) {
            snprintf(vs->method_note, sizeof vs->method_note, "%s method unavailable: %s",
                     stream ? "stream" : "graph", msg);
            graph = stream = 0;
        } else {
            if (!w->l2_hot && reps > w->nsets) reps = w->nsets;   /* no set twice in a sample */
            vs->sets_used = w->l2_hot ? 1 : reps;
            vs->lc.sets = w->sets;
            vs->reps = reps;
            if (stream) snprintf(vs->method, sizeof vs->method, "stream");
        }
    }
    if (graph) {
        int reps = vs->reps;
        vs->reps = 0;
        vs->host_acc_ms = 0;
        vs->host_calls = 0;
        int cap = tb_graph_capture(&w->md, timed_launch_set, vs, reps, vs->sets_used, &vs->graph,
                                   msg, sizeof msg);
        if (vs->host_calls) vs->host_capture_ms = vs->host_acc_ms / vs->host_calls;
        if (cap == TB_OK && w->md.last_graph_kernels == 0) {
            /* nothing was captured: the work went elsewhere; time it cold, where the
             * hidden-work rule sees it */
            cudaGraphExecDestroy(vs->graph);
            vs->graph = NULL;
            cap = TB_EWORKER;
            snprintf(msg, sizeof msg, "the captured graph has no kernel: the launches did not "
                     "run on the given stream");
        }
        if (cap == TB_OK) {
            vs->reps = reps;
            snprintf(vs->method, sizeof vs->method, "graph");
            return warm_up(w, vs, vs->graph);
        }
        snprintf(vs->method_note, sizeof vs->method_note, "cold events instead of a "
                 "graph: %s", msg);
        if (!tbw_context_ok()) { tbw_cuda_crash(&vs->m, "graph capture", msg); return 2; }
    }
    return 0;
}

int tbw_push_sample(vstate *vs, const tb_sample *smp)
{
    if (vs->n == vs->cap) {
        vs->cap *= 2;
        vs->ms = realloc(vs->ms, sizeof(double) * (size_t)vs->cap);
        vs->wall = realloc(vs->wall, sizeof(double) * (size_t)vs->cap);
        vs->clk = realloc(vs->clk, sizeof(double) * (size_t)vs->cap);
        vs->host = realloc(vs->host, sizeof(double) * (size_t)vs->cap);
        vs->timed_out = realloc(vs->timed_out, (size_t)vs->cap);
        if (!vs->ms || !vs->wall || !vs->clk || !vs->host || !vs->timed_out) return TB_ENOMEM;
    }
    vs->ms[vs->n] = smp->ms;
    vs->wall[vs->n] = smp->wall_ms;
    vs->clk[vs->n] = smp->clock_mhz;
    vs->host[vs->n] = smp->host_ms;
    vs->timed_out[vs->n] = (unsigned char)(smp->block_timeout != 0);
    vs->n++;
    vs->block_timeouts += smp->block_timeout;
    return TB_OK;
}

typedef struct nvtx_ctx { const worker *w; const vstate *vs; } nvtx_ctx;

static void nvtx_around(void *c, int begin)
{
    nvtx_ctx *n = c;
    if (begin) tbw_nvtx_push(n->w, n->vs, "timed");
    else tbw_nvtx_pop();
}

/* New values in the inputs the next sample reads (the main buffers for the cold method, the
 * sample's sets for the batched ones), drawn from the variant's hidden seed, so that no two
 * timed launches of it see the same inputs; for the batched methods the L2 is then flushed
 * by reading (they flush nothing inside the sample, and the refresh's writes would otherwise
 * sit in the L2, dirty). Synchronised: outside the timed region and its wall time. Returns 0,
 * or 1/2 (state.h). */
static int refresh(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN];
    double t0 = now_ms();
    uint64_t seed = tbw_input_seed(vs->hseed, ++vs->refreshes);
    int rc = tbw_refresh_inputs(w, vs->reps ? vs->sets_used : 0, seed, msg, sizeof msg);
    int e = 0;
    if (rc == TB_OK && vs->reps && !w->l2_hot)
        e = tbdev_l2_flush(w->md.flush_buf, w->md.flush_bytes, w->md.sink, w->s);
    if (rc == TB_OK && e == 0) e = (int)cudaStreamSynchronize(w->s);
    if (rc == TB_OK && e != 0)
        rc = tb_fail(msg, sizeof msg, TB_ECUDA, "%s", cudaGetErrorString((cudaError_t)e));
    vs->refresh_ms += now_ms() - t0;
    if (rc) return tbw_cuda_crash(&vs->m, "cannot refresh the inputs before a sample", msg) ? 2 : 1;
    return 0;
}

/* One sample of one variant. Returns 0, or 1/2 (state.h: the variant's timing is over). */
int tbw_take_sample(worker *w, vstate *vs, tb_sample *smp)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    nvtx_ctx nc = { w, vs };
    for (;;) {
        int r = refresh(w, vs);
        if (r) return r;
        tbw_send_begin(vs, "timed");
        w->md.around = nvtx_around;   /* the range holds the variant's launch and nothing else */
        w->md.around_ctx = &nc;
        vs->host_acc_ms = 0;
        vs->host_calls = 0;
        int rc = vs->graph ? tb_sample_graph(&w->md, vs->graph, vs->reps, smp, msg, sizeof msg)
               : vs->reps ? tb_sample_stream(&w->md, timed_launch_set, vs, vs->reps, vs->sets_used,
                                             smp, msg, sizeof msg)
               : tb_sample_cold(&w->md, !w->l2_hot, timed_launch, vs, smp, msg, sizeof msg);
        w->md.around = NULL;
        if (rc == TB_EWORKER) {
            vs->m.status = TB_STATUS_CRASHED;
            snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
            return tbw_context_ok() ? 1 : 2;
        }
        if (rc) return tbw_cuda_crash(&vs->m, "failed while timing", msg) ? 2 : 1;
        smp->host_ms = vs->host_calls ? vs->host_acc_ms / vs->host_calls : NAN;
        if (tbw_persisting_l2_found(w->s, why, sizeof why)) { tbw_flag(&vs->m, "persisting-l2", why); return 1; }
        if (w->pace > 0) tbw_rest_ms(w->pace * smp->wall_ms);
        if (!smp->block_timeout || vs->retakes >= TB_RETAKES_MAX) return 0;
        /* The blocking kernel let go while launches were still being queued: the events timed
         * the host's pace, not the GPU. Not a GPU-time sample: take it again; before the first
         * kept sample (so that all kept samples have one number of launches), a stream sample
         * gets as many launches as the host queues in TB_QUEUE_FRAC of the timeout. Past
         * TB_RETAKES_MAX such samples are kept, counted, and mark the measurement host-bound
         * (result.c). */
        vs->retakes++;
        if (!vs->graph && vs->reps > 1 && vs->n == 0) {
            int cap = host_cap(w, smp->host_ms);
            if (cap < vs->reps) {
                vs->reps = vs->host_cap = cap;
                if (!w->l2_hot) vs->sets_used = cap;
            }
        }
    }
}
