/* model.h - a performance model of the wgmma family's points (issue 25): the time of a point
 * on a shape, predicted from the point's knobs, the shape and the machine, before anything is
 * timed; its constants fitted to measured medians; and how wrong it is (median absolute error,
 * rank correlation per shape). Pure arithmetic, no GPU, no I/O (docs/search.md). */
#ifndef TB_MODEL_H
#define TB_MODEL_H
#include <stddef.h>
#include <stdint.h>

/* A point's knobs, read from the parameters a variant declares (tb_knobs_parse). */
typedef struct tb_knobs {
    int tile_m, tile_n, tile_k, stages, cluster_m, cluster_n;
    int pingpong;                   /* schedule: 0 cooperative, 1 pingpong */
    int raster;                     /* 0 m, 1 n, 2 Hilbert */
    int swizzle, streamk;
    int conflict;                   /* epilogue: the bank-conflict control */
} tb_knobs;

/* The machine: SMs, tensor FLOP per clock per SM (common/peak.c) and DRAM bytes per second. */
typedef struct tb_machine {
    int sms;
    double flop_per_clk_sm;
    double dram_bytes_s;
} tb_machine;

/* The constants the model fits (docs/search.md says what each stands for). */
enum { TB_MC_EFF, TB_MC_PINGPONG, TB_MC_STAGES, TB_MC_TILE_US, TB_MC_LAUNCH_US, TB_MC_DRAM,
       TB_MC_SPLIT, TB_MC_N };
/* Besides the constants, the knob effects: a factor per value of each knob (tile class,
 * stages, cluster, raster and band, stream-K tail, epilogue), fitted on the within-shape
 * errors the constants leave (docs/search.md): what the closed form does not see. */
enum { TB_MF_TILE, TB_MF_STAGES, TB_MF_CLUSTER, TB_MF_RASTER, TB_MF_TAIL, TB_MF_EPI, TB_MF_N };
#define TB_MF_VALUES 16
typedef struct tb_model {
    double c[TB_MC_N];
    double fx[TB_MF_N][TB_MF_VALUES];   /* log factors; 0: no effect */
    int tile_keys[TB_MF_VALUES];        /* the tile classes seen (tile_m, tile_n, schedule) */
    int n_tile_keys;
} tb_model;

/* One measured point: its knobs, the shape, the SM clock of the measurement and its median. */
typedef struct tb_obs {
    tb_knobs k;
    int64_t m, n, kk;
    double clock_mhz, ms;
    int shape;                      /* an index grouping observations by shape */
} tb_obs;

/* The family's knobs from a variant's parameters as JSON ({"tile_m":128,...}). TB_OK, or
 * TB_EUSAGE with msg naming the missing knob (a variant that does not declare them). */
int tb_knobs_parse(const char *params_json, tb_knobs *k, char *msg, size_t len);

/* The model as JSON ({"c":[...],"fx":[[...],...],"tile_keys":[...]}, what the store keeps per GPU
 * and family: schema 6, search_models) and back. to_json: TB_OK, or TB_EUSAGE when buf is too
 * small; from_json: TB_OK, or TB_EUSAGE naming what is wrong (md unchanged then). */
int tb_model_to_json(const tb_model *md, char *buf, size_t cap);
int tb_model_from_json(const char *json, tb_model *md, char *msg, size_t len);

/* The constants before any fit: what the H100 measurements of docs/perf.md suggest. */
void tb_model_default(tb_model *md);

/* Predicted milliseconds of point k on m x n x kk at clock_mhz. */
double tb_model_predict_ms(const tb_model *md, const tb_machine *mc, const tb_knobs *k, int64_t m,
                           int64_t n, int64_t kk, double clock_mhz);

/* The median over obs of |ln(predicted / measured)|: 0.05 is about 5 %. */
double tb_model_error(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n);

/* The q-quantile (0..1) of the same absolute log errors: the margin a search allows. */
double tb_model_error_q(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                        double q);

/* The q-quantile of the within-shape errors: ln(predicted / measured) less its mean over the
 * observations of the same shape, so the error in how the model orders and spaces a shape's
 * points, its absolute scale there (clock, launch) taken out. What a search's margin uses. */
double tb_model_rel_error_q(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                            double q);

/* Spearman's rank correlation of predicted and measured times among the observations of one
 * shape (ties by average rank); NaN with fewer than 3. */
double tb_model_rank_corr(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                          int shape);

/* Refit md's constants to obs (Nelder-Mead on the sum of squared within-shape log errors, as
 * tb_model_rel_error_q, the constants kept within a factor of 20 of the defaults); md is the
 * starting point. Returns the median within-shape error after the fit. */
double tb_model_fit(tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n);

/* What a search refits with: tb_model_fit twice, from md (the last fit) and from start (the
 * model the search began with), keeping in md the one with the smaller sum of squared
 * within-shape errors (knob effects included). A fit that only ever continues from the last
 * one can drift, on noisy timings, into constants that fit what was timed and mislead the
 * search everywhere else; a fresh start each time bounds that (docs/search.md, fourteenth
 * session). Returns the median within-shape error after the refit. */
double tb_model_refit(tb_model *md, const tb_model *start, const tb_machine *mc, const tb_obs *obs,
                      size_t n);
#endif
