/* rank.h - ranking variants by median time, with ties: a percentile-bootstrap interval of each
 * variant's median ratio against the best. Pure C, no CUDA, unit-tested.
 *
 * The statistic, in words: best = the variant with the smallest median (lowest index on equal
 * medians). For each variant i, ratio_i = median(i) / median(best), and its interval is the
 * [(1-conf)/2, (1+conf)/2] percentiles of median(resample of i) / median(resample of best) over
 * `iters` independent resamples with replacement. For the best itself the two resamples are
 * independent resamples of the same samples, so its interval shows how far a median ratio
 * moves by chance alone. A variant whose interval reaches down to 1 (lo <= 1) cannot be told
 * apart from the best: it is tied with it.
 *
 * Resamples are independent per variant: the rounds of an interleaved sweep are not paired.
 */
#ifndef TB_RANK_H
#define TB_RANK_H
#include <stddef.h>
#include <stdint.h>

/* Rank nv >= 1 variants; samples[i][0..n[i]) are variant i's times (finite, > 0; n[i] >= 1).
 * conf in (0, 1), e.g. 0.95; iters >= 1 resamples, e.g. 2000.
 * Fills, for each i in [0, nv):
 *   ratio[i]  median(i) / median(best)          (1 for the best)
 *   lo[i], hi[i]  the bootstrap interval of that ratio
 *   tied[i]   1 when lo[i] <= 1 (always 1 for the best), else 0
 * and *best_out (if not NULL) = the index of the best.
 * Deterministic given seed: the same inputs and seed give the same bits on every run; variant
 * i's resamples depend only on seed, i and its own samples, so adding a variant does not move
 * the others' intervals (unless it becomes the best). Uses its own splitmix64, never rand().
 * Cost: O(sum n[i] * iters) time, O(nv * iters + max n[i]) memory; inputs are not modified.
 * Returns TB_OK; TB_EUSAGE (no variants, a variant without samples, a sample that is not a
 * positive finite time, conf or iters out of range) or TB_ENOMEM, with msg; on failure the
 * outputs are unspecified. */
int tb_rank_bootstrap(const double *const *samples, const int *n, int nv, double conf, int iters,
                      uint64_t seed, double *ratio, double *lo, double *hi, int *tied,
                      int *best_out, char *msg, size_t len);

/* The pieces, for other bootstraps of medians (report/verdict.c): a splitmix64 stream keyed by
 * (seed, key), and the median of one resample with replacement of sorted[0..n) (ascending),
 * found in O(n) by counting draws per index; cnt holds n zeroed ints and is left zeroed. */
typedef struct tb_rng { uint64_t s; } tb_rng;
tb_rng tb_rng_stream(uint64_t seed, uint64_t key);
double tb_rank_resample_median(const double *sorted, int n, int *cnt, tb_rng *r);
#endif
