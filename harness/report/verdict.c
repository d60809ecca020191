/* verdict.c - the ratio of medians with its bootstrap interval, and the class of a change
 * (see verdict.h). */
#include "report/verdict.h"
#include "common/tb.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

tb_side_state tb_verdict_state(tb_status s, tb_disposition d)
{
    if (s == TB_STATUS_UNSUPPORTED) return TB_SIDE_UNSUPPORTED;
    if (s == TB_STATUS_OK && d == TB_DISP_PASSED) return TB_SIDE_VALID;
    return TB_SIDE_INVALID;
}

const char *tb_side_state_name(tb_side_state s)
{
    static const char *const n[] = { "absent", "valid", "unsupported", "invalid" };
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "?";
}

const char *tb_change_name(tb_change c)
{
    static const char *const n[] = { "unchanged", "faster", "slower", "new", "removed",
                                     "newly invalid", "newly unsupported", "newly valid",
                                     "not timed", "control" };
    return (unsigned)c < sizeof n / sizeof n[0] ? n[c] : "?";
}

int tb_change_fails(tb_change c)
{
    return c == TB_CHANGE_SLOWER || c == TB_CHANGE_NEWLY_INVALID;
}

tb_change tb_verdict_classify(tb_side_state base, tb_side_state head, double lo, double hi,
                              double threshold)
{
    if (base == TB_SIDE_ABSENT && head == TB_SIDE_ABSENT) return TB_CHANGE_NOT_TIMED;
    if (base == TB_SIDE_ABSENT) return TB_CHANGE_NEW;
    if (head == TB_SIDE_ABSENT) return TB_CHANGE_REMOVED;
    if (base == TB_SIDE_VALID && head == TB_SIDE_INVALID) return TB_CHANGE_NEWLY_INVALID;
    if (base == TB_SIDE_VALID && head == TB_SIDE_UNSUPPORTED) return TB_CHANGE_NEWLY_UNSUPPORTED;
    if (base != TB_SIDE_VALID && head == TB_SIDE_VALID) return TB_CHANGE_NEWLY_VALID;
    if (base != TB_SIDE_VALID) return TB_CHANGE_NOT_TIMED;
    if (lo > 1.0 + threshold) return TB_CHANGE_SLOWER;
    if (hi < 1.0 - threshold) return TB_CHANGE_FASTER;
    return TB_CHANGE_UNCHANGED;
}

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The k-th smallest of a[0..n) (a is reordered): Hoare's selection. */
static double select_k(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double piv = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < piv) i++;
            while (a[j] > piv) j--;
            if (i <= j) {
                double t = a[i]; a[i] = a[j]; a[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}

static double median_of(double *a, size_t n)
{
    if (n % 2) return select_k(a, n, n / 2);
    double hi = select_k(a, n, n / 2);
    double lo = a[0];
    for (size_t i = 1; i < n / 2; i++) if (a[i] > lo) lo = a[i];   /* max of the lower half */
    return 0.5 * (lo + hi);
}

/* The median of a resample of x[0..n) with replacement, in scratch. */
static double resample_median(const double *x, size_t n, double *scratch, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++) scratch[i] = x[splitmix64(rng) % n];
    return median_of(scratch, n);
}

static int check_set(const double *x, size_t n, const char *what, char *msg, size_t len)
{
    if (!x || n == 0) return tb_fail(msg, len, TB_EUSAGE, "no %s samples", what);
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0) || !isfinite(x[i]))
            return tb_fail(msg, len, TB_EUSAGE, "%s sample %zu is not a positive time", what, i);
    return TB_OK;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int tb_verdict_ratio(const double *base, size_t nb, const double *head, size_t nh,
                     const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                     double conf, int iters, uint64_t seed, double *ratio, double *lo,
                     double *hi, char *msg, size_t len)
{
    int ctrl = bctrl || hctrl;
    int rc;
    if ((rc = check_set(base, nb, "base", msg, len)) || (rc = check_set(head, nh, "head", msg, len)))
        return rc;
    if (ctrl && ((rc = check_set(bctrl, nbc, "base control", msg, len)) ||
                 (rc = check_set(hctrl, nhc, "head control", msg, len))))
        return rc;
    if (!(conf > 0 && conf < 1) || iters < 10)
        return tb_fail(msg, len, TB_EUSAGE, "confidence %g or %d resamples out of range", conf, iters);
    size_t mx = nb > nh ? nb : nh;
    if (ctrl) { if (nbc > mx) mx = nbc; if (nhc > mx) mx = nhc; }
    double *scratch = malloc(mx * sizeof *scratch);
    double *r = malloc((size_t)iters * sizeof *r);
    if (!scratch || !r) { free(scratch); free(r); return tb_fail(msg, len, TB_ENOMEM, "out of memory"); }
    const double *set[4] = { base, head, bctrl, hctrl };
    size_t n[4] = { nb, nh, nbc, nhc };
    double med[4] = { 1, 1, 1, 1 };
    for (int s = 0; s < (ctrl ? 4 : 2); s++) {
        memcpy(scratch, set[s], n[s] * sizeof *scratch);
        med[s] = median_of(scratch, n[s]);
    }
    *ratio = (med[1] / med[3]) / (med[0] / med[2]);
    uint64_t rng = seed ^ 0x5851F42D4C957F2Dull;
    for (int it = 0; it < iters; it++) {
        double m[4] = { 1, 1, 1, 1 };
        for (int s = 0; s < (ctrl ? 4 : 2); s++) m[s] = resample_median(set[s], n[s], scratch, &rng);
        r[it] = (m[1] / m[3]) / (m[0] / m[2]);
    }
    qsort(r, (size_t)iters, sizeof *r, cmp_d);
    double a = (1 - conf) / 2;
    size_t il = (size_t)floor(a * (iters - 1)), ih = (size_t)ceil((1 - a) * (iters - 1));
    *lo = r[il];
    *hi = r[ih];
    free(scratch);
    free(r);
    return TB_OK;
}

uint64_t tb_verdict_seed(const char *variant, const char *shape)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = variant ? variant : ""; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001B3ull;
    h = (h ^ 0xff) * 0x100000001B3ull;
    for (const char *p = shape ? shape : ""; *p; p++) h = (h ^ (unsigned char)*p) * 0x100000001B3ull;
    return h;
}
