/* rank.c - the bootstrap behind tied rankings (see rank.h).
 *
 * Each variant's samples are sorted once. A resample with replacement is then n indices drawn
 * uniformly into the sorted array, and its median is the sorted value at the middle drawn
 * index: counting how often each index was drawn and walking the counts finds it in O(n),
 * with no comparisons of doubles and no copy of the values (cheaper than a quickselect on
 * the resampled values, and exactly the same median).
 *
 * Random numbers: splitmix64, one stream per variant keyed by (seed, variant index), plus one
 * for the best's second, independent resample.
 */
#include "report/rank.h"
#include "common/stats.h"
#include "common/tb.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

typedef tb_rng rng;

tb_rng tb_rng_stream(uint64_t seed, uint64_t key)
{
    rng r = { mix64(seed ^ mix64(key + 0x632BE59BD9B4E019ull)) };
    return r;
}

static uint64_t rng_next(rng *r)
{
    return mix64(r->s += 0x9E3779B97F4A7C15ull);
}

/* uniform in [0, n) for n < 2^32 (multiply-shift; bias below n / 2^32) */
static uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static double median_sorted(const double *x, int n)
{
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Median of one resample with replacement of sorted[0..n); cnt has n zeroed ints and is left
 * zeroed (rank.h). */
double tb_rank_resample_median(const double *sorted, int n, int *cnt, tb_rng *r)
{
    for (int j = 0; j < n; j++) cnt[rng_below(r, (uint32_t)n)]++;
    int k1 = (n - 1) / 2, k2 = n / 2;   /* 0-based ranks of the middle one or two */
    int seen = 0, i = 0;
    double a = 0, b = 0;
    for (; i < n; i++) {                /* find rank k1 */
        seen += cnt[i];
        if (seen > k1) break;
    }
    a = sorted[i];
    if (seen > k2) b = a;
    else {
        for (i++; i < n; i++) {         /* rank k2 lies further on */
            seen += cnt[i];
            if (seen > k2) break;
        }
        b = sorted[i];
    }
    memset(cnt, 0, sizeof *cnt * (size_t)n);
    return k1 == k2 ? a : 0.5 * (a + b);
}

/* p-quantile of sorted x[0..m) (linear interpolation between order statistics). */
static double quantile(const double *x, int m, double p)
{
    double h = p * (m - 1);
    int k = (int)floor(h);
    if (k >= m - 1) return x[m - 1];
    return x[k] + (h - k) * (x[k + 1] - x[k]);
}

int tb_rank_bootstrap(const double *const *samples, const int *n, int nv, double conf, int iters,
                      uint64_t seed, double *ratio, double *lo, double *hi, int *tied,
                      int *best_out, char *msg, size_t len)
{
    if (nv < 1 || !samples || !n) return tb_fail(msg, len, TB_EUSAGE, "no variants to rank");
    if (!(conf > 0 && conf < 1))
        return tb_fail(msg, len, TB_EUSAGE, "invalid confidence %g (want 0 < conf < 1)", conf);
    if (iters < 1) return tb_fail(msg, len, TB_EUSAGE, "invalid resample count %d (want >= 1)", iters);
    int nmax = 0;
    size_t total = 0;
    for (int i = 0; i < nv; i++) {
        if (n[i] < 1 || !samples[i])
            return tb_fail(msg, len, TB_EUSAGE, "variant %d has no samples", i);
        for (int j = 0; j < n[i]; j++)
            if (!(isfinite(samples[i][j]) && samples[i][j] > 0))
                return tb_fail(msg, len, TB_EUSAGE,
                               "sample %d of variant %d is %g (want a positive time)", j, i,
                               samples[i][j]);
        if (n[i] > nmax) nmax = n[i];
        total += (size_t)n[i];
    }

    int rc = TB_OK;
    double *sorted = malloc(sizeof *sorted * total);          /* every variant, sorted */
    double *boot = malloc(sizeof *boot * (size_t)(nv + 1) * (size_t)iters);
    double *tmp = malloc(sizeof *tmp * (size_t)iters);
    int *cnt = calloc((size_t)nmax, sizeof *cnt);
    size_t *off = malloc(sizeof *off * (size_t)nv);
    if (!sorted || !boot || !tmp || !cnt || !off) {
        rc = tb_fail(msg, len, TB_ENOMEM, "out of memory ranking %d variants", nv);
        goto out;
    }

    /* point medians (in ratio[] for now) and the best */
    int best = 0;
    for (size_t i = 0, o = 0; i < (size_t)nv; o += (size_t)n[i], i++) {
        off[i] = o;
        memcpy(sorted + o, samples[i], sizeof *sorted * (size_t)n[i]);
        qsort(sorted + o, (size_t)n[i], sizeof *sorted, tb_cmp_double);
        ratio[i] = median_sorted(sorted + o, n[i]);
        if (ratio[i] < ratio[best]) best = (int)i;
    }
    double mbest = ratio[best];
    for (int i = 0; i < nv; i++) ratio[i] /= mbest;
    ratio[best] = 1.0;

    /* resampled medians: row i for variant i, row nv for the best's second resample */
    for (int i = 0; i <= nv; i++) {
        int v = i < nv ? i : best;
        rng r = tb_rng_stream(seed, i < nv ? (uint64_t)i : UINT64_MAX);
        for (int b = 0; b < iters; b++)
            boot[(size_t)i * iters + b] = tb_rank_resample_median(sorted + off[v], n[v], cnt, &r);
    }

    double a = (1 - conf) / 2;
    const double *bb = boot + (size_t)best * iters;
    for (int i = 0; i < nv; i++) {
        const double *bi = i == best ? boot + (size_t)nv * iters : boot + (size_t)i * iters;
        for (int b = 0; b < iters; b++) tmp[b] = bi[b] / bb[b];
        qsort(tmp, (size_t)iters, sizeof *tmp, tb_cmp_double);
        lo[i] = quantile(tmp, iters, a);
        hi[i] = quantile(tmp, iters, 1 - a);
        tied[i] = i == best || lo[i] <= 1.0;
    }
    if (best_out) *best_out = best;
out:
    free(sorted);
    free(boot);
    free(tmp);
    free(cnt);
    free(off);
    return rc;
}
