/* search_replay.h - search's points and its replayed timings (cmd_search.c): the points of a
 * family among the libraries probed (layout tn, BF16), or every point a recorded database
 * measured; the database's medians as an oracle, optionally with noise (a per-shape and a
 * per-point lognormal factor, deterministic for a seed: docs/search.md), and what each replayed
 * round would have cost. */
#ifndef TB_SEARCH_REPLAY_H
#define TB_SEARCH_REPLAY_H
#include <stddef.h>
#include <stdint.h>
#include "common/tb.h"
#include "driver/catalog.h"
#include "driver/search.h"

typedef struct tb_replay_rec {      /* one recorded measurement */
    int point;
    int64_t m, n, k;
    double ms, clock, cost_s;       /* cost_s: its share of its run's wall time */
} tb_replay_rec;

/* What a search round costs on the GPU, modelled from the fourteenth session's 167 GPU rounds
 * (docs/search.md): SHAPE_S for a shape's first round (its worker), POINT_S a point, and
 * KERNEL_X times the point's median (its samples). Residual 0.17 s a round. */
#define TB_REPLAY_SHAPE_S 0.77
#define TB_REPLAY_POINT_S 0.106
#define TB_REPLAY_KERNEL_X 43.8
/* The same with one worker for every shape (--keep-worker), fitted on the 659 GPU rounds of the
 * twentieth and twenty-first sessions' five searches (465.1 s; residual 0.22 s a round). */
#define TB_REPLAY_KEPT_SHAPE_S 0.043
#define TB_REPLAY_KEPT_POINT_S 0.125
#define TB_REPLAY_KEPT_KERNEL_X 44.3
/* --replay-noise's fifth field: the per-timing sigma is POINT up to FROM_MS, LONG from AT_MS,
 * linear in log2 of the kernel's recorded median between (the twenty-first session's pairs:
 * 0.3-0.6 % under 0.25 ms, 2.7-4.8 % above 4 ms) */
#define TB_REPLAY_LONG_FROM_MS 0.25
#define TB_REPLAY_LONG_AT_MS 4.0

typedef struct tb_replay {
    tb_search_point *pts;
    char (*names)[TB_NAME_LEN];
    char (*specs)[160];             /* each point's grid line (auto-table.json's "points") */
    int n_pts;
    tb_replay_rec *r;
    size_t n_r;
    tb_machine mc;
    double sigma_point, sigma_shape;    /* --replay-noise: lognormal sigmas; 0: none */
    double sigma_round;             /* its fourth field: a per-round offset, and then a fresh
                                       point draw each time a point is timed; < 0 (no fourth
                                       field): one draw per point and shape, whatever the round */
    double sigma_long;              /* its fifth field: the per-timing sigma of kernels of
                                       TB_REPLAY_LONG_AT_MS and more, growing from sigma_point
                                       linearly in log time above TB_REPLAY_LONG_FROM_MS (what
                                       one comparison repeats to on the H100: docs/search.md,
                                       twenty-first session); < 0: sigma_point at every time */
    int round;                      /* the rounds timed on the current shape so far */
    uint64_t seed;
    double round_cost_s;            /* what the replayed rounds would have cost (the model above) */
    double round_cost_kept_s;       /* ... with --keep-worker (TB_REPLAY_KEPT_*) */
    int64_t last_shape[3];          /* the shape of the previous round (a new one: a new worker) */
    char gpu_name[TB_NAME_LEN];     /* the recording's GPU (tb_replay_load; "" when none) */
} tb_replay;

/* The points of `family` among the variants of cat (probed by a worker, as list does), in
 * layout tn and not FP8 (the model's machine is BF16's). TB_OK or TB_EUSAGE (none) / TB_ENOMEM. */
int tb_replay_load_points(const tb_catalog *cat, const char *family, tb_replay *rp, char *msg, size_t len);

/* Every ok/passed BF16 tn measurement of `family` in every run of db (a point's first, once);
 * the machine from the first environment (and its newest calibration's DRAM figure, else
 * dram_gbps). TB_OK, or an error with msg. */
int tb_replay_load(const char *db, const char *family, double dram_gbps, tb_replay *rp, char *msg, size_t len);

/* The recorded measurement of point p on m x n x k, or NULL. */
const tb_replay_rec *tb_replay_lookup(const tb_replay *rp, int p, int64_t m, int64_t n, int64_t k);

/* A tb_search_time_fn (ctx: a tb_replay): each point's recorded median times its noise factor
 * (tb_search_noise, or with a round sigma tb_search_noise_round keyed on the shape's round
 * count; 1 without noise); *cost_s gets each point's share of its recorded run, and
 * rp->round_cost_s the round as modelled above (a re-timed point costs as any). */
int tb_replay_time(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                   int64_t nn, int64_t k, double *ms, double *clk, double *cost_s, char *msg,
                   size_t len);

/* --replay-noise SPEC: "POINT[,SHAPE[,SEED[,ROUND]]]" (sigmas of ln, SHAPE defaulting to POINT,
 * SEED to 1, ROUND absent: no round model) into rp. TB_OK or TB_EUSAGE with msg. */
int tb_replay_parse_noise(const char *spec, tb_replay *rp, char *msg, size_t len);

void tb_replay_free(tb_replay *rp);
#endif
