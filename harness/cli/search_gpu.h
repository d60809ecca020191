/* search_gpu.h - search's timing on the GPU (cmd_search.c): the GPU asked and the variant
 * libraries probed once for the whole search, one worker per shape kept across the shape's
 * rounds (driver/session.h), each round measured as a run of its own in the database (the
 * round's points on one shape), as a sweep would measure it. */
#ifndef TB_SEARCH_GPU_H
#define TB_SEARCH_GPU_H
#include <stddef.h>
#include <stdint.h>
#include "common/record.h"
#include "driver/catalog.h"
#include "driver/paths.h"
#include "common/phases.h"
#include "driver/search.h"
#include "driver/session.h"
#include "driver/sweep_opts.h"

typedef struct tb_search_gpu {
    const tb_paths *paths;
    tb_catalog cat;             /* every variant of the libraries given, refusals removed */
    tb_environment env;
    tb_sweep_opts o;            /* the sweep's defaults, no energy, max_samples as asked */
    const char *db;
    int argc;                   /* the search's command line, stored with each round's run */
    char **argv;
    double open_s;              /* the probes' wall time, charged to the first round */
    tb_shape_session sess;      /* one worker per shape, kept across its rounds (o.session) */
    int64_t shape[3];           /* the shape the session's worker serves */
    int64_t last_run;           /* the last round's run and phases: the last worker's exit is */
    tb_phases last_ph;          /* charged to it when the search closes */
    int rounds;
} tb_search_gpu;

/* Ask the GPU (device 0) and probe the libraries of vpaths once. max_samples 0: the sweep's
 * default stop rule; keep_worker 1: one worker for every shape, not one per shape. TB_OK, or a
 * TB_E* code with msg. */
int tb_search_gpu_open(tb_search_gpu *g, const tb_paths *paths, char **vpaths, size_t nv,
                       const char *db, int max_samples, int keep_worker, int argc, char **argv,
                       char *msg, size_t len);
/* A tb_search_time_fn (ctx: a tb_search_gpu): the points idx[0..n) on one shape, as one run,
 * measured by the shape's worker (started with the shape's first round, kept across its rounds;
 * the previous shape's worker ended first, in this round's time). */
int tb_search_gpu_time(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                       int64_t nn, int64_t k, double *ms, double *clk, double *cost_s, char *msg,
                       size_t len);
/* End the last shape's worker and free g. Its exit's wall time is added to the last round's
 * stored phases (total_s) and to *cost_s (may be NULL), so that the search's cost stays the
 * wall time of everything it ran. TB_OK, or the store's error with msg (g freed all the same). */
int tb_search_gpu_close(tb_search_gpu *g, double *cost_s, char *msg, size_t len);
#endif
