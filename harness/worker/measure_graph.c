/* measure_graph.c - the methods for short kernels: reps launches, rotating over input sets
 * (set r % nsets for launch r), timed as a whole, either captured in one CUDA graph ("graph")
 * or queued on the stream behind the blocking kernel ("stream"); see measure.h. */
#define _POSIX_C_SOURCE 200809L
#include "worker/measure.h"
#include "common/tb.h"
#include <stdio.h>
#include <stdlib.h>

int tb__sample_open(tb_measure_dev *d, int flush, char *msg, size_t len);
int tb__sample_close(tb_measure_dev *d, double t0, tb_sample *out, char *msg, size_t len);
double tb__now_ms(void);

int tb_graph_capture(tb_measure_dev *d, tb_launch_set_fn launch, void *ctx, int reps, int nsets,
                     cudaGraphExec_t *out, char *msg, size_t len)
{
    cudaGraph_t g = NULL;
    *out = NULL;
    cudaError_t e = cudaStreamBeginCapture(d->s, cudaStreamCaptureModeGlobal);
    if (e != cudaSuccess)
        return tb_fail(msg, len, TB_ECUDA, "cannot begin graph capture: %s", cudaGetErrorString(e));
    int lrc = 0;
    for (int r = 0; r < reps && !lrc; r++) lrc = launch(ctx, r % nsets, d->s);
    e = cudaStreamEndCapture(d->s, &g);
    cudaGetLastError();
    if (lrc || e != cudaSuccess || !g) {
        if (g) cudaGraphDestroy(g);
        return tb_fail(msg, len, TB_EWORKER, "not capturable in a CUDA graph (%s)",
                       lrc ? "launch returned non-zero during capture" : cudaGetErrorString(e));
    }
    size_t nodes = 0, kernels = 0;
    cudaGraphGetNodes(g, NULL, &nodes);
    cudaGraphNode_t *all = nodes ? malloc(nodes * sizeof *all) : NULL;
    if (all && cudaGraphGetNodes(g, all, &nodes) == cudaSuccess)
        for (size_t i = 0; i < nodes; i++) {
            enum cudaGraphNodeType t;
            if (cudaGraphNodeGetType(all[i], &t) == cudaSuccess && t == cudaGraphNodeTypeKernel)
                kernels++;
        }
    free(all);
    e = cudaGraphInstantiate(out, g, 0);
    cudaGraphDestroy(g);
    d->last_graph_kernels = kernels;
    if (e != cudaSuccess) {
        *out = NULL;
        cudaGetLastError();
        return tb_fail(msg, len, TB_EWORKER, "graph did not instantiate: %s", cudaGetErrorString(e));
    }
    return TB_OK;
}

int tb_sample_stream(tb_measure_dev *d, tb_launch_set_fn launch, void *ctx, int reps, int nsets,
                     tb_sample *out, char *msg, size_t len)
{
    double t0 = tb__now_ms();
    /* no flush here, as in the graph: the worker gives each launch an input set of its own
     * and flushes the L2 before the sample, outside the interval (worker/timing.c) */
    int rc = tb__sample_open(d, 0, msg, len);
    if (rc) return rc;
    if (d->around) d->around(d->around_ctx, 1);
    int lrc = 0;
    for (int r = 0; r < reps && !lrc; r++) lrc = launch(ctx, r % nsets, d->s);
    if (d->around) d->around(d->around_ctx, 0);
    if (lrc) {
        if (d->use_block) d->host_words[0] = 1;   /* never leave the stream blocked */
        cudaDeviceSynchronize();
        return tb_fail(msg, len, TB_EWORKER, "launch returned %d", lrc);
    }
    rc = tb__sample_close(d, t0, out, msg, len);
    if (rc) return rc;
    out->ms /= reps;
    return TB_OK;
}

int tb_sample_graph(tb_measure_dev *d, cudaGraphExec_t g, int reps, tb_sample *out, char *msg,
                    size_t len)
{
    double t0 = tb__now_ms();
    /* no flush here: each launch has an input set of its own, and the worker flushed the L2
     * after refreshing them, before the sample (worker/timing.c) */
    int rc = tb__sample_open(d, 0, msg, len);
    if (rc) return rc;
    if (d->around) d->around(d->around_ctx, 1);
    cudaError_t e = cudaGraphLaunch(g, d->s);
    if (d->around) d->around(d->around_ctx, 0);
    if (e != cudaSuccess) {
        if (d->use_block) d->host_words[0] = 1;
        cudaDeviceSynchronize();
        return tb_fail(msg, len, TB_ECUDA, "cudaGraphLaunch: %s", cudaGetErrorString(e));
    }
    rc = tb__sample_close(d, t0, out, msg, len);
    if (rc) return rc;
    out->ms /= reps;   /* per launch; wall_ms stays the whole sample's */
    return TB_OK;
}

