/* stop.h - stopping criteria for a measurement loop: named, pluggable objects with named
 * parameters (nvbench's "stdrel", written here). Pure C, no CUDA, unit-tested.
 *
 * The caller's loop:
 *
 *     tb_stop *c;
 *     if ((rc = tb_stop_create("stdrel:max-noise=0.01", &c, msg, sizeof msg))) return rc;
 *     do { tb_stop_add(c, one_sample_ms()); } while (!tb_stop_done(c, wall_s(), why, sizeof why));
 *     ... store why ...
 *     tb_stop_free(c);
 *
 * Criteria and parameters (defaults in parentheses):
 *   stdrel  max-noise (0.005)  stop when the noise, the relative standard error of the mean
 *                              (stdev / sqrt(n) / mean), is <= this;
 *           min-time (0.05)    seconds of GPU time spent timing before it may stop at all
 *                              (a batched sample counts its whole batch: tb_stop_add_timed);
 *           min-samples (10)   samples before it may stop at all;
 *           window (16), settle (0.1)
 *                              also stop when the spread has settled: over the last `window`
 *                              additions the relative stdev of the samples (stdev / mean) moved
 *                              by less than `settle` of its current value (max - min < settle *
 *                              current), so a noisy kernel stops instead of running to the
 *                              timeout. The spread, not the noise, is what settles: the noise
 *                              is spread / sqrt(n) and keeps falling by 1/sqrt(n), so "noise
 *                              settled" would only be a sample count in disguise (~85 samples
 *                              at window 16, settle 0.1, whatever the spread).
 *   fixed   samples (100)      exactly that many (tests, reproduction).
 * Every criterion also takes
 *           max-time (1.0)     seconds of wall clock (passed in by the caller) -> "timeout";
 *           max-samples (1000) -> "max samples".
 * The criterion's own rule is checked first, then max-samples, then max-time, so a run that
 * met its target on its last sample says so rather than "timeout".
 *
 * Non-finite or negative samples count towards max-samples but are left out of the
 * statistics (and of min-samples / min-time).
 */
#ifndef TB_STOP_H
#define TB_STOP_H
#include <stddef.h>

typedef struct tb_stop tb_stop;

/* Parse spec ("NAME" or "NAME:key=value,key=value") into a new criterion in *out.
 * Returns TB_OK; TB_EUSAGE with a message naming the bad name, key or value:
 *   "unknown stopping criterion 'x' (stdrel, fixed)"
 *   "unknown parameter 'y' for stdrel (max-noise, min-time, ...)"
 *   "invalid value 'z' for stdrel:max-noise (want a number > 0)"
 *   "invalid parameter 'y' for stdrel (want key=value)", "parameter 'y' given twice for stdrel",
 *   "min-samples 2000 exceeds max-samples 1000 for stdrel"
 * or TB_ENOMEM. On failure *out is NULL. Free with tb_stop_free. */
int tb_stop_create(const char *spec, tb_stop **out, char *msg, size_t len);

/* One more sample, in milliseconds. O(1) (Welford) plus O(1) bookkeeping; cannot fail. */
void tb_stop_add(tb_stop *c, double sample_ms);
/* The same for a sample that stands for gpu_ms of GPU time spent timing: a batch of launches
 * (the stream and graph methods) whose sample is one launch's share. min-time counts gpu_ms,
 * the time actually spent, so a 7.5 us share of a 3.8 ms batch does not need 6,600 samples
 * to reach 0.05 s (tb_stop_add(c, ms) is tb_stop_add_timed(c, ms, ms)). */
void tb_stop_add_timed(tb_stop *c, double sample_ms, double gpu_ms);

/* 1 when finished, with why filled (if why and why_len), e.g.
 *   "stdrel: noise 0.31% <= 0.50% after 23 samples"
 *   "stdrel: noise settled at 0.82% (spread 6.6%) after 64 samples"
 *   "timeout: 1.00 s after 523 samples, noise 1.20%"      (elapsed wall time; noise if stdrel)
 *   "max samples: 1000"
 *   "fixed: 100 samples"
 * else 0 and why untouched. wall_elapsed_s is the wall-clock time since the loop began.
 * O(window) for stdrel's settle check, O(1) otherwise. */
int tb_stop_done(tb_stop *c, double wall_elapsed_s, char *why, size_t why_len);

/* "stdrel" or "fixed"; static storage. */
const char *tb_stop_name(const tb_stop *c);

/* The canonical spec with every parameter, e.g.
 *   "stdrel:max-noise=0.005,min-time=0.05,min-samples=10,window=16,settle=0.1,max-time=1,max-samples=1000"
 * tb_stop_create accepts it and gives back an equal criterion. Truncated to fit len. */
void tb_stop_spec(const tb_stop *c, char *buf, size_t len);

/* Frees c; NULL is fine. */
void tb_stop_free(tb_stop *c);
#endif
