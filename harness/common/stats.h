/* stats.h - summary statistics of timing samples. Pure C, no CUDA, unit-tested. */
#ifndef TB_STATS_H
#define TB_STATS_H

typedef struct tb_stats {
    int n;
    double median, mean, stdev, min, max;
    double rse;     /* relative standard error of the mean: stdev / sqrt(n) / mean */
} tb_stats;

/* Summarise x[0..n). n == 0 gives NaNs; n == 1 gives stdev 0 and rse NaN. x is not
 * modified. Returns 0, or -1 when out of memory. */
int tb_stats_summarise(const double *x, int n, tb_stats *out);

/* The median of x[0..n) (a copy is sorted); NaN for n == 0. */
double tb_stats_median(const double *x, int n);
/* qsort comparator of doubles, ascending (NaN-free input). */
int tb_cmp_double(const void *a, const void *b);
#endif
