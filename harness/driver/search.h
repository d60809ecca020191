/* search.h - model-guided search (issue 25): per shape, predict every point with the model,
 * time only the few that can win, refit the model on what was timed, and stop when no untimed
 * point's prediction, discounted by the model's own measured error, beats the best time.
 * The timing is a callback (the GPU through a sweep, or a recorded database replayed), so
 * the loop itself is pure and testable. See docs/search.md. */
#ifndef TB_SEARCH_H
#define TB_SEARCH_H
#include "driver/model.h"
#include <stddef.h>
#include <stdint.h>

typedef struct tb_search_point {
    const char *name;
    tb_knobs k;
} tb_search_point;

/* Time points idx[0..n) on shape (m, n, k), together (interleaved, in one worker job): fill
 * ms[i] (a median; NAN: it did not run or failed) and clock_mhz[i], and add the GPU seconds
 * spent to *cost_s. A point may be asked again on the same shape (the incumbent, the final
 * round): it is measured again. TB_OK or an error with msg (the search stops). */
typedef int (*tb_search_time_fn)(void *ctx, const tb_search_point *pts, const int *idx, int n,
                                 int64_t m, int64_t nn, int64_t k, double *ms, double *clock_mhz,
                                 double *cost_s, char *msg, size_t len);

typedef struct tb_search_opts {
    int per_round;          /* points timed per round (default 2) */
    double budget_s;        /* GPU seconds for the whole search; 0: none */
    double min_margin;      /* the least error margin, as a log ratio (default 0.03) */
    double quantile;        /* the margin is this quantile of the model's errors (default 0.8) */
    int explore;            /* while fewer timings than this are known, a shape's first round
                               also times the best point of every tile class (default 100) */
    double clock_mhz;       /* the clock predictions assume before anything is timed */
    int refit_last;         /* 1: each refit continues from the last fit only (before the
                               fourteenth session); 0: also from the starting model, the
                               better kept (tb_model_refit; default) */
    int incumbent;          /* 1: every round after a shape's first also re-times the
                               shape's best so far, interleaved with the round's points, and the
                               round's times are put on the footing of the shape's first round
                               by the incumbent's (its stored time / this round's): each decision
                               compares points measured side by side. 0 (default): each round
                               alone, as before the fifteenth session (on, the replay found one
                               shape more for 8 points more GPU time: docs/search.md) */
    int final_top;          /* a shape's final round: its best this many measured points, those
                               within the margin of the best, re-timed together; the fastest
                               there wins. 0: none (before the fifteenth session); default 3 */
    int siblings;           /* a shape's sibling round, before the final one: at most this many
                               untimed points of the winner's tile class whose closed form (the
                               model less its knob effects) is within the margin of the
                               winner's, timed beside the winner (search.c). 0: none (default) */
    double siblings_below_ms;   /* the sibling round only on shapes whose best time is under
                               this many ms: there one comparison side by side repeats to
                               0.3-0.6 % on the H100, from 1 ms to 2-5 %, past the 1 % a winner
                               is judged by (docs/search.md, twenty-first session). 0: every
                               shape (before it); default 0.25 */
    double final_below_ms;  /* the same for the final round; default 0: every shape */
} tb_search_opts;

/* What the search found on one shape. */
typedef struct tb_search_shape {
    int64_t m, n, k;
    int winner;             /* index into the points; -1 when nothing valid was timed */
    double winner_ms;
    int timed, skipped, rounds;
    int retimed;            /* re-timings of points timed before (incumbents, the final round) */
    int final_n;            /* points in the final round (0: none, one candidate or budget) */
    int final_changed;      /* 1 when the final round's fastest was not the best before it */
    int sibling_n;          /* points of the sibling round, the winner left out (0: none) */
    int sibling_changed;    /* 1 when one of them became the winner */
    double cost_s;
    double margin;          /* the margin it stopped with (log ratio) */
    int stopped_by_budget;
} tb_search_shape;

typedef struct tb_search_result {
    tb_search_shape *shapes;        /* one per shape, in the order given */
    size_t n_shapes;
    tb_obs *obs;                    /* every timing, in order (shape = the shape's index) */
    size_t n_obs, cap_obs;
    int *obs_point;                 /* the point of each observation */
    double *obs_pred_ms;            /* the prediction each had just before it was timed */
    tb_model model;                 /* the constants after the last refit */
    double error_before, error_after;   /* the default and the fitted model on every timing */
    double cost_s;
} tb_search_result;

void tb_search_opts_default(tb_search_opts *o);

/* Search shapes[0..n_shapes) (m, n, k triples) over points[0..n_points). md holds the starting
 * constants. TB_OK with *out filled (free with tb_search_result_free), or an error. */
int tb_search_run(const tb_search_point *points, int n_points, const int64_t (*shapes)[3],
                  size_t n_shapes, const tb_machine *mc, const tb_model *md,
                  const tb_search_opts *o, tb_search_time_fn time_fn, void *ctx,
                  tb_search_result *out, char *msg, size_t len);

void tb_search_result_free(tb_search_result *r);

/* A replayed timing's noise factor: exp(sigma_shape * z_s + sigma_point * z_p), z_s and z_p
 * standard normal, drawn from (seed, m, n, k) and (seed, m, n, k, name): the same shape gets
 * the same z_s for every point, the same point on the same shape the same z_p whenever it is
 * asked, whatever else was asked before (docs/search.md: the noise of a replay). */
double tb_search_noise(uint64_t seed, int64_t m, int64_t n, int64_t k, const char *name,
                       double sigma_point, double sigma_shape);

/* The same with rounds (docs/search.md, fifteenth session): exp(sigma_shape * z_s +
 * sigma_round * z_r + sigma_point * z_p), z_r drawn from (seed, m, n, k, round), common to the
 * points of one round (one worker job), and z_p from (seed, m, n, k, name, round): a point
 * re-timed in another round gets a fresh draw. The measurement model of a search whose rounds
 * interleave their points: their ratios as precise as the exhaustive sweep's (sigma_point),
 * each round off by its own offset (sigma_round). */
double tb_search_noise_round(uint64_t seed, int64_t m, int64_t n, int64_t k, const char *name, int round,
                             double sigma_point, double sigma_round, double sigma_shape);
#endif
