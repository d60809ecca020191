/* stats.c - median, mean, standard deviation and relative standard error (see stats.h). */
#include "common/stats.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tb_stats_median(const double *x, int n)
{
    if (n <= 0) return NAN;
    double *c = malloc(sizeof *c * (size_t)n);
    if (!c) return NAN;
    memcpy(c, x, sizeof *c * (size_t)n);
    qsort(c, (size_t)n, sizeof *c, tb_cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

int tb_stats_summarise(const double *x, int n, tb_stats *o)
{
    o->n = n;
    o->median = o->mean = o->stdev = o->min = o->max = o->rse = NAN;
    if (n <= 0) return 0;
    double sum = 0, mn = x[0], mx = x[0];
    for (int i = 0; i < n; i++) {
        sum += x[i];
        if (x[i] < mn) mn = x[i];
        if (x[i] > mx) mx = x[i];
    }
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    o->mean = mean;
    o->min = mn;
    o->max = mx;
    o->stdev = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    o->rse = n > 1 && mean > 0 ? o->stdev / sqrt((double)n) / mean : NAN;
    o->median = tb_stats_median(x, n);
    return isnan(o->median) ? -1 : 0;
}
