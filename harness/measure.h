/* measure.h - a timing method, written as a recipe of named steps (nvbench's measure_cold).
 *
 * The method here is "cold_events": before each sample the L2 is flushed by reading a
 * buffer of at least twice its size; the sample is the CUDA-event time of one launch on the
 * worker's stream; the whole device is synchronised between samples; samples are taken until
 * the relative standard error of the mean falls under the target (after min_samples), or the
 * time budget or max_samples ends it. Every sample is kept; the median is reported. The SM
 * clock is measured with a %globaltimer/clock64 probe kernel after the samples. Each sample
 * also keeps the host wall time up to the device synchronisation; against the same figure for
 * a no-op kernel it shows work the events did not see (docs/method.md, hidden-work).
 * Knows nothing of SQLite or of validation.
 */
#ifndef TB_MEASURE_H
#define TB_MEASURE_H

#include <stddef.h>
#include <cuda_runtime_api.h>

/* Enqueue one launch of the thing being timed on stream s; 0 or a non-zero code. */
typedef int (*tb_launch_fn)(void *ctx, cudaStream_t s);
/* Called now and then so the parent's watchdog sees progress. */
typedef void (*tb_heartbeat_fn)(void *ctx, int n_samples);

typedef struct tb_measure_opts {
    int    warmup;        /* launches before the first sample (default 3) */
    int    min_samples;   /* default 10 */
    int    max_samples;   /* default 1000 */
    double max_time_s;    /* time budget for the samples, wall clock (default 1.0) */
    double target_rse;    /* stop when rse <= this (default 0.005) */
    int    flush_l2;      /* 1: flush before every sample (default) */
} tb_measure_opts;

void tb_measure_opts_default(tb_measure_opts *o);

typedef struct tb_measure_dev {
    cudaStream_t        s;
    const void         *flush_buf;     /* >= 2 x L2 bytes */
    size_t              flush_bytes;
    unsigned           *sink;          /* device word for the flush kernel */
    unsigned long long *clk_dev;       /* 2 device words for the clock probe */
} tb_measure_dev;

typedef struct tb_measure_out {
    double *samples_ms;                /* malloc'd, n entries; caller frees */
    double *wall_ms;                   /* malloc'd, n entries: host time from before the flush
                                          to after the device synchronisation; caller frees */
    double  gap_baseline_ms;           /* median(wall - event) of a no-op kernel, same recipe */
    double  hidden_ms;                 /* median(wall - event) - gap_baseline_ms: work the
                                          events did not see (another stream?) */
    int     n;
    int     warmup;
    char    stop_reason[64];           /* "rse", "time budget", "max samples" */
    double  clock_mhz;                 /* NaN if the probe failed */
    double  wall_s;
} tb_measure_out;

/* Run the method. TB_OK with out filled; TB_ECUDA when a CUDA call failed (msg has the
 * error; out->samples_ms holds what was taken); TB_EWORKER when launch returned non-zero. */
int tb_measure_cold(const tb_measure_dev *dev, const tb_measure_opts *opts, tb_launch_fn launch,
                    void *ctx, tb_heartbeat_fn hb, void *hb_ctx, tb_measure_out *out,
                    char *msg, size_t len);

/* Measure the SM clock in MHz with the probe kernel (synchronises s). NaN on failure. */
double tb_measure_clock_mhz(const tb_measure_dev *dev);
#endif
