/* sweep_opts.h - the options of a sweep (what a worker job carries, set by the CLI) and the
 * callbacks through which the sweep reports (the CLI's progress reporter implements them).
 * Types only. */
#ifndef TB_SWEEP_OPTS_H
#define TB_SWEEP_OPTS_H
#include "common/phases.h"
#include <stddef.h>
#include <stdint.h>
#include "common/record.h"
#include "driver/shapes.h"

#define TB_MAX_DEVICES 64   /* GPUs of one --devices sweep */

typedef struct tb_sweep_opts {
    double timeout_s;         /* watchdog floor and first-launch limit (default 10) */
    double watchdog_factor;   /* x first-launch estimate (default 50) */
    double max_time_s;        /* timing budget per measurement (default 1.0) */
    double target_rse;        /* default 0.005 */
    int    min_samples, max_samples, warmup, trials;
    uint64_t seed;
    char   init[16];          /* uniform | normal */
    double alpha, beta;
    char   layout[4];         /* "tn" (default), "nn", "nt", "tt": A then B, BLAS letters */
    char   dtype[8];          /* "bf16" (default) or "e4m3": the type of A and B (C and D
                                 stay bf16, accumulation f32); see tb_sweep_problem */
    int    pad;               /* extra elements on every leading dimension (default 0) */
    char   attn_layout[8];    /* attention shapes: "bhsd" (default) or "bshd", Q K V O packed */
    double softmax_scale;     /* attention shapes: > 0, or 0 for 1/sqrt(head_dim) (default) */
    int    device;
    char   device_uuid[64];   /* --device GPU-...: matched by UUID instead of index */
    int    exclusive;         /* refuse when other processes use the GPU */
    char   sanitize[16];      /* "", "memcheck" or "racecheck": a validation-only pass of each
                                 variant under compute-sanitizer before it is measured */
    char   sanitizer[1024];   /* path of compute-sanitizer when sanitize is set */
    char   stop[512];         /* stopping criterion spec, complete (see stop.h) */
    char   method[8];         /* auto | cold | stream | graph */
    char   l2[8];             /* cold | hot */
    int    profile;           /* 1: no blocking kernel (for profilers) */
    int    no_energy;         /* 1: skip the energy burst */
    int    no_confirm;        /* 1: skip the confirming pass over the best few (search rounds:
                                 a round ranks 2-6 points, and the pass doubled their samples) */
    double pace;              /* after each sample the worker rests pace x that sample's wall
                                 time (default 0: back to back) */
    int    lockstep;          /* 1: variants of one library name under two namespaces (a
                                 gate's base:X and head:X) stop sampling together, so their
                                 samples cover the same rounds (worker/job.c) */
    char   metrics[512];      /* --metrics: sets (banks, memory, compute, all) or raw names,
                                 comma separated; "" for none */
    int    ndev;              /* --devices: several GPUs, one worker slot each, drawing shapes
                                 from one queue (0 or 1: device / device_uuid alone) */
    char   dev[TB_MAX_DEVICES][64];       /* each GPU as the worker takes it: index or GPU-uuid
                                             (one listed twice: two slots share it) */
    char   dev_uuid[TB_MAX_DEVICES][64];  /* each one's UUID, added to its results' extra */
    int    slot;              /* with several GPUs: the slot (index into dev) a job is for; it
                                 travels in the job, for the test hook TILEBENCH_TEST_FAIL_SLOT */
    struct tb_shape_session *session;   /* NULL (a sweep): a worker per shape, one job each;
                                 set (search, one GPU): a worker kept across the jobs of one
                                 problem (driver/session.h); never travels in the job */
    int    keep_worker;       /* --keep-worker (one GPU): one worker kept across shapes too, the
                                 problem taken anew for each (the job's "keep_worker"; a sweep
                                 makes itself a session: driver/session.h) */
} tb_sweep_opts;

typedef struct tb_sweep_report {
    void *ctx;
    void (*warning)(void *ctx, const char *line);
    /* after each stored result; done/total count measurements */
    void (*result)(void *ctx, const tb_variant_info *v, const tb_shape *s,
                   const tb_measurement *m, size_t done, size_t total);
    void (*status)(void *ctx, const tb_variant_info *v, const tb_shape *s, size_t done, size_t total);
    tb_phases *phases;   /* where the time went, added to as the sweep goes (NULL: not kept):
                            the workers' start and own phases, the counters pass, the store */
    /* with several GPUs: lock (on 1) and unlock (0) what the sweep's slots share, around a
     * store write made outside the sweep's own loop (the counters pass); NULL: one GPU */
    void (*lock)(void *ctx, int on);
} tb_sweep_report;
#endif
