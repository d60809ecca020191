/* timing.c - the timing of one variant in tilebench-worker's measure mode: its method and
 * warm-up, one sample by that method and its checks, the samples kept (see timing.h). The
 * methods themselves are measure_cold.c and measure_graph.c. */
#define _GNU_SOURCE
#include "worker/timing.h"
#include "common/tb.h"
#include "common/stop.h"
#include "worker/buffers.h"
#include "worker/discipline.h"
#include "worker/step.h"
#include "worker/trials.h"
#include "worker/worker_common.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Is the variant a short kernel for --method auto? Without the held launch, only if its
 * device-synchronised wall time is short too: work hidden on another stream would not be
 * captured into a graph, nor timed. */
int tbw_is_short(const vstate *vs)
{
    double est = tbw_estimate_ms(vs);
    if (isfinite(vs->held_event_ms)) return est < TB_GRAPH_BELOW_MS;
    return est < TB_GRAPH_BELOW_MS && vs->first_wall_ms < TB_GRAPH_BELOW_MS + 0.1;
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
    if ((graph || stream) && tbw_ensure_sets(w, msg, sizeof msg) != TB_OK) {
        snprintf(vs->method_note, sizeof vs->method_note, "%s method unavailable: %s",
                 stream ? "stream" : "graph", msg);
        graph = stream = 0;
    }
    if (graph || stream) {
        /* launches for a sample of about TB_GRAPH_TARGET_MS, a whole number of rotations */
        int most = stream ? TB_STREAM_MAX_REPS : 4000;
        int reps = est > 0 ? (int)ceil(TB_GRAPH_TARGET_MS / est) : 100;
        if (reps > most) reps = most;
        if (reps < w->nsets) reps = w->nsets;
        reps = (reps + w->nsets - 1) / w->nsets * w->nsets;
        if (reps > most && reps > w->nsets) reps -= w->nsets;
        vs->lc.sets = w->sets;
        vs->reps = reps;
        if (stream) snprintf(vs->method, sizeof vs->method, "stream");
    }
    if (graph) {
        int reps = vs->reps;
        vs->reps = 0;
        int cap = tb_graph_capture(&w->md, tbw_do_launch_set, &vs->lc, reps, w->nsets, &vs->graph,
                                   msg, sizeof msg);
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
        } else {
            snprintf(vs->method_note, sizeof vs->method_note, "cold events instead of a "
                     "graph: %s", msg);
            if (!tbw_context_ok()) { tbw_cuda_crash(&vs->m, "graph capture", msg); return 2; }
        }
    }
    if (tb_stop_create(w->stop_spec, &vs->stop, msg, sizeof msg) != TB_OK) {
        vs->m.status = TB_STATUS_ERROR;
        snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
        return 1;
    }
    vs->cap = 256;
    vs->ms = malloc(sizeof(double) * (size_t)vs->cap);
    vs->wall = malloc(sizeof(double) * (size_t)vs->cap);
    vs->clk = malloc(sizeof(double) * (size_t)vs->cap);
    /* warm-up, unflushed */
    tbw_send_begin(vs, "warm-up");
    tbw_nvtx_push(w, vs, "warm-up");
    int lrc = 0;
    for (int i = 0; i < w->warmup && !lrc; i++)
        lrc = vs->graph ? (int)cudaGraphLaunch(vs->graph, w->s) : tbw_do_launch(&vs->lc, w->s);
    tbw_nvtx_pop();
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

int tbw_push_sample(vstate *vs, const tb_sample *smp)
{
    if (vs->n == vs->cap) {
        vs->cap *= 2;
        vs->ms = realloc(vs->ms, sizeof(double) * (size_t)vs->cap);
        vs->wall = realloc(vs->wall, sizeof(double) * (size_t)vs->cap);
        vs->clk = realloc(vs->clk, sizeof(double) * (size_t)vs->cap);
        if (!vs->ms || !vs->wall || !vs->clk) return TB_ENOMEM;
    }
    vs->ms[vs->n] = smp->ms;
    vs->wall[vs->n] = smp->wall_ms;
    vs->clk[vs->n] = smp->clock_mhz;
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

/* One sample of one variant. Returns 0, or 1/2 (state.h: the variant's timing is over). */
int tbw_take_sample(worker *w, vstate *vs, tb_sample *smp)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    nvtx_ctx nc = { w, vs };
    tbw_send_begin(vs, "timed");
    w->md.around = nvtx_around;   /* the range holds the variant's launch and nothing else */
    w->md.around_ctx = &nc;
    int rc = vs->graph ? tb_sample_graph(&w->md, vs->graph, vs->reps, smp, msg, sizeof msg)
           : vs->reps ? tb_sample_stream(&w->md, tbw_do_launch_set, &vs->lc, vs->reps, w->nsets, smp,
                                         msg, sizeof msg)
           : tb_sample_cold(&w->md, !w->l2_hot, tbw_do_launch, &vs->lc, smp, msg, sizeof msg);
    w->md.around = NULL;
    if (rc == TB_EWORKER) {
        vs->m.status = TB_STATUS_CRASHED;
        snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
        return tbw_context_ok() ? 1 : 2;
    }
    if (rc) return tbw_cuda_crash(&vs->m, "failed while timing", msg) ? 2 : 1;
    if (tbw_persisting_l2_found(w->s, why, sizeof why)) { tbw_flag(&vs->m, "persisting-l2", why); return 1; }
    if (w->pace > 0) tbw_rest_ms(w->pace * smp->wall_ms);
    return 0;
}
