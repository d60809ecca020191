/* sweep.h - the parent's loop: for each shape, a worker measures the selected variants;
 * the watchdog turns a hang into `timeout`, a dead worker into `crashed` for the variant it
 * was on, and the sweep goes on with a new worker for the rest. Each result goes to the
 * store as it arrives (one transaction each). Never touches CUDA; prints nothing (it
 * reports through tb_sweep_report, which cmd_sweep.c implements). */
#ifndef TB_SWEEP_H
#define TB_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include "common/record.h"
#include "driver/shapes.h"
#include "store/store.h"
#include "driver/catalog.h"

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
    int    pad;               /* extra elements on every leading dimension (default 0) */
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
    double pace;              /* after each sample the worker rests pace x that sample's wall
                                 time (default 0: back to back) */
    char   metrics[512];      /* --metrics: sets (banks, memory, compute, all) or raw names,
                                 comma separated; "" for none */
} tb_sweep_opts;

void tb_sweep_opts_default(tb_sweep_opts *o);

typedef struct tb_sweep_report {
    void *ctx;
    void (*warning)(void *ctx, const char *line);
    /* after each stored result; done/total count measurements */
    void (*result)(void *ctx, const tb_variant_info *v, const tb_shape *s,
                   const tb_measurement *m, size_t done, size_t total);
    void (*status)(void *ctx, const tb_variant_info *v, const tb_shape *s, size_t done, size_t total);
} tb_sweep_report;

/* Set by the SIGINT/SIGTERM handler the caller installs; the sweep stops at the next
 * message, kills its worker and returns TB_EINTR. */
extern volatile sig_atomic_t tb_sweep_stop;

/* Ask a worker for the GPU environment. TB_ENOGPU with the reason when there is none. */
int tb_sweep_probe_env(const char *worker, const char *device, tb_environment *env, char *msg,
                       size_t len);

/* Fill a problem description for a shape: the layout and padding of o, C and D row-major,
 * leading dimensions = contiguous extent + pad, batches packed one after another. */
void tb_sweep_problem(const tb_shape *s, const tb_sweep_opts *o, tb_problem_info *p);

/* Measure variants x shapes into run_id. skip[i] (may be NULL) marks shapes already
 * complete (--resume). TB_OK, TB_EINTR, or TB_EDB when the store failed. */
int tb_sweep_run(tb_store *st, int64_t run_id, const char *worker, const tb_sweep_opts *o,
                 const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                 const tb_sweep_report *rep, char *msg, size_t len);
#endif
