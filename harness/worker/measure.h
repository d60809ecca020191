/* measure.h - timing methods, one sample at a time; the worker's loop (interleaved over the
 * variants of a shape, stopped by a tb_stop criterion) calls them. Knows nothing of SQLite
 * or of validation.
 *
 *   cold  (measure_cold.c)  the L2 is flushed by reading a buffer of >= 2 x L2, then one
 *         launch between two CUDA events; the launch and its events are queued behind the
 *         blocking kernel, so they start back to back when the host releases it.
 *   graph (measure_graph.c) R launches captured in a CUDA graph, rotating over input sets
 *         (the worker gives each launch a set of its own, new values in them and the L2
 *         flushed before every sample, outside the interval: worker/timing.c), timed as a
 *         whole between two events; the sample is the total / R.
 *   stream (measure_graph.c) the same R launches over the same input sets, queued on the
 *         stream itself behind the blocking kernel instead of in a graph: each launch pays
 *         the stream's own per-launch cost on the GPU (what an application that launches
 *         kernel by kernel sees), the host's launch latency stays out, and the events' own
 *         cost is spread over R (docs/method.md).
 * Clock stamps on the same stream, one right before the start event and one right after the
 * stop event, read %globaltimer and clock64 on every SM: each SM's cycles over the sample,
 * and their median is that sample's SM clock (docs/method.md, "Clock per sample"). After
 * each sample the whole device is synchronised. Each sample also keeps
 * the host wall time from before the flush to after the synchronisation (hidden work).
 */
#ifndef TB_MEASURE_H
#define TB_MEASURE_H

#include <stddef.h>
#include <cuda_runtime_api.h>

/* Enqueue one launch of the thing being timed on stream s; 0 or a non-zero code. */
typedef int (*tb_launch_fn)(void *ctx, cudaStream_t s);
/* The same with input set `set` (graph method). */
typedef int (*tb_launch_set_fn)(void *ctx, int set, cudaStream_t s);

typedef struct tb_measure_dev {
    cudaStream_t s;
    void       *flush_buf;          /* >= 2 x L2 bytes */
    size_t      flush_bytes;
    unsigned   *sink;               /* device word for the flush kernel */
    volatile int *host_words;       /* mapped: [0] block flag, [1] block timed out */
    int        *dev_words;          /* the same words, device side */
    unsigned long long *stamp_host; /* mapped: the stamps before and after the last sample */
    unsigned long long *stamp_dev;  /* (stamp_blocks x 3 words each) */
    int         stamp_blocks;       /* 2 x the SM count */
    int         use_block;          /* 0 under a profiler or with --profile */
    double      block_timeout_ms;   /* default 500 */
    size_t      last_graph_kernels; /* kernel nodes the last capture held (0: none ran there) */
    /* called right before (1) and after (0) the measured launch, inside the events: the
     * worker pushes its NVTX range there, so a profiler filtering on it sees only the
     * variant's kernels, not the flush or the clock stamps. May be NULL. */
    void      (*around)(void *ctx, int begin);
    void       *around_ctx;
    cudaEvent_t e0, e1;
} tb_measure_dev;

/* Allocate what the methods need on stream s: the flush buffer (max(2 x l2_bytes, 32 MiB)),
 * mapped words, events. TB_OK or TB_ECUDA. */
int tb_measure_dev_init(tb_measure_dev *d, cudaStream_t s, size_t l2_bytes, int use_block,
                        char *msg, size_t len);
void tb_measure_dev_free(tb_measure_dev *d);

typedef struct tb_sample {
    double ms;          /* event time of one launch */
    double wall_ms;     /* host time to the synchronisation, of the whole sample: from the
                           release of the blocking kernel (from before the flush without it) */
    double clock_mhz;   /* SM clock over the sample, from the stamps; NaN if it failed */
    int    block_timeout;   /* the blocking kernel timed out (host too slow to queue) */
    double host_ms;     /* host wall time of one launch() call over the sample, when the
                           caller timed its launches (worker/timing.c); NaN here */
} tb_sample;

/* One cold sample. TB_OK; TB_EWORKER when launch returned non-zero; TB_ECUDA on a CUDA error
 * (msg has it). flush = 0 leaves the L2 as it is ("--l2 hot"). */
int tb_sample_cold(tb_measure_dev *d, int flush, tb_launch_fn launch, void *ctx, tb_sample *out,
                   char *msg, size_t len);

/* Capture reps launches (set r % nsets for launch r) into an executable graph. TB_OK, or
 * TB_EWORKER with the reason when the variant cannot be captured (it broke the launch
 * contract: synchronised, allocated, used another stream...). */
int tb_graph_capture(tb_measure_dev *d, tb_launch_set_fn launch, void *ctx, int reps, int nsets,
                     cudaGraphExec_t *out, char *msg, size_t len);
/* One stream sample: reps launches of launch (set r % nsets) queued behind the blocking
 * kernel between two events; ms is per launch, wall_ms the whole sample's. TB_EWORKER when a
 * launch returned non-zero. */
int tb_sample_stream(tb_measure_dev *d, tb_launch_set_fn launch, void *ctx, int reps, int nsets,
                     tb_sample *out, char *msg, size_t len);
/* One graph sample: ms is per launch (total / reps); wall_ms is the whole sample's. */
int tb_sample_graph(tb_measure_dev *d, cudaGraphExec_t g, int reps, tb_sample *out, char *msg,
                    size_t len);

/* The stream-discipline probe: hold the stream with the blocking kernel, call enqueue(ctx, s)
 * (a launch and whatever must follow it in stream order), sleep hold_ms with the stream still
 * held, call probe(pctx, side) on the second stream `side` and wait for that stream alone, then
 * release and synchronise the device. *held is 1 when the blocking kernel was still holding
 * when the probe had finished (so the probe saw only work that ran off the held stream), 0
 * when it had timed out (inconclusive). TB_EWORKER when enqueue returned non-zero, TB_EUSAGE
 * without the blocking kernel. */
int tb_run_held(tb_measure_dev *d, tb_launch_fn enqueue, void *ctx, double hold_ms,
                cudaStream_t side, tb_launch_fn probe, void *pctx, int *held, char *msg, size_t len);

/* median(wall - event) of 15 cold samples of a kernel that does nothing: what the recipe
 * itself costs, removed before hidden work is judged. *noop_ms (may be NULL) gets the same
 * samples' median event time: what an isolated launch costs as the events see it, launch and
 * completion included, stored with each measurement as information (issue 6). */
int tb_measure_gap_baseline(tb_measure_dev *d, int flush, double *base_ms, double *noop_ms,
                            char *msg, size_t len);

/* median elapsed time of 21 event pairs recorded with nothing between them, in the cold
 * recipe (flush, blocking kernel, e0, e1). Stored with each cold measurement as information:
 * it is not removed from the samples, because on the H100 it over-corrects (docs/perf.md). */
int tb_measure_event_overhead(tb_measure_dev *d, int flush, double *ms, char *msg, size_t len);

#endif
