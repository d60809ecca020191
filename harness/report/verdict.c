/* verdict.c - the ratio of medians with its bootstrap interval, unpaired or paired by round,
 * and the class of a change (see verdict.h). */
#include "report/verdict.h"
#include "report/rank.h"
#include "common/stats.h"
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

static int check_set(const double *x, size_t n, const char *what, char *msg, size_t len)
{
    if (!x || n == 0) return tb_fail(msg, len, TB_EUSAGE, "no %s samples", what);
    for (size_t i = 0; i < n; i++)
        if (!(x[i] > 0) || !isfinite(x[i]))
            return tb_fail(msg, len, TB_EUSAGE, "%s sample %zu is not a positive time", what, i);
    return TB_OK;
}

/* The arguments both ratios take, checked alike: every set present holds positive times, the
 * controls both or neither, the confidence in (0, 1), at least 10 resamples. */
static int check_inputs(const double *base, size_t nb, const double *head, size_t nh,
                        const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                        double conf, int iters, char *msg, size_t len)
{
    int rc;
    if ((rc = check_set(base, nb, "base", msg, len)) || (rc = check_set(head, nh, "head", msg, len)))
        return rc;
    if ((bctrl || hctrl) && ((rc = check_set(bctrl, nbc, "base control", msg, len)) ||
                             (rc = check_set(hctrl, nhc, "head control", msg, len))))
        return rc;
    if (!(conf > 0 && conf < 1) || iters < 10)
        return tb_fail(msg, len, TB_EUSAGE, "confidence %g or %d resamples out of range", conf, iters);
    return TB_OK;
}

/* The percentile interval of conf of the iters resampled ratios r (sorted here). */
static void interval(double *r, int iters, double conf, double *lo, double *hi)
{
    qsort(r, (size_t)iters, sizeof *r, tb_cmp_double);
    const double a = (1 - conf) / 2;
    *lo = r[(size_t)floor(a * (iters - 1))];
    *hi = r[(size_t)ceil((1 - a) * (iters - 1))];
}

int tb_verdict_ratio(const double *base, size_t nb, const double *head, size_t nh,
                     const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                     double conf, int iters, uint64_t seed, double *ratio, double *lo,
                     double *hi, char *msg, size_t len)
{
    const int ctrl = bctrl || hctrl;
    int rc = check_inputs(base, nb, head, nh, bctrl, nbc, hctrl, nhc, conf, iters, msg, len);
    if (rc) return rc;
    const double *set[4] = { base, head, bctrl, hctrl };
    size_t n[4] = { nb, nh, nbc, nhc }, total = 0, mx = 0;
    int ns = ctrl ? 4 : 2;
    for (int s = 0; s < ns; s++) {
        if (n[s] > INT32_MAX) return tb_fail(msg, len, TB_EUSAGE, "too many samples");
        total += n[s];
        if (n[s] > mx) mx = n[s];
    }
    double *sorted = malloc(total * sizeof *sorted), *r = malloc((size_t)iters * sizeof *r);
    int *cnt = calloc(mx, sizeof *cnt);
    if (!sorted || !r || !cnt) {
        free(sorted); free(r); free(cnt);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    /* each set sorted once; its median exact, its resamples' medians by counting (rank.h) */
    double *sv[4] = { NULL, NULL, NULL, NULL }, med[4] = { 1, 1, 1, 1 };
    size_t off = 0;
    for (int s = 0; s < ns; s++) {
        sv[s] = sorted + off;
        off += n[s];
        memcpy(sv[s], set[s], n[s] * sizeof *sorted);
        qsort(sv[s], n[s], sizeof *sorted, tb_cmp_double);
        med[s] = n[s] % 2 ? sv[s][n[s] / 2] : 0.5 * (sv[s][n[s] / 2 - 1] + sv[s][n[s] / 2]);
    }
    *ratio = (med[1] / med[3]) / (med[0] / med[2]);
    tb_rng rs[4];
    for (int s = 0; s < ns; s++) rs[s] = tb_rng_stream(seed, (uint64_t)s);
    for (int it = 0; it < iters; it++) {
        double m[4] = { 1, 1, 1, 1 };
        for (int s = 0; s < ns; s++) m[s] = tb_rank_resample_median(sv[s], (int)n[s], cnt, &rs[s]);
        r[it] = (m[1] / m[3]) / (m[0] / m[2]);
    }
    interval(r, iters, conf, lo, hi);
    free(sorted);
    free(r);
    free(cnt);
    return TB_OK;
}

/* out[i] = x[i] / y[i] for i < n, sorted; its exact median */
static double ratios_sorted(const double *x, const double *y, size_t n, double *out)
{
    for (size_t i = 0; i < n; i++) out[i] = x[i] / y[i];
    qsort(out, n, sizeof *out, tb_cmp_double);
    return n % 2 ? out[n / 2] : 0.5 * (out[n / 2 - 1] + out[n / 2]);
}

int tb_verdict_ratio_paired(const double *base, size_t nb, const double *head, size_t nh,
                            const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                            double conf, int iters, uint64_t seed, double *ratio, double *lo,
                            double *hi, char *msg, size_t len)
{
    const int ctrl = bctrl || hctrl;
    int rc = check_inputs(base, nb, head, nh, bctrl, nbc, hctrl, nhc, conf, iters, msg, len);
    if (rc) return rc;
    /* the sets of per-round ratios: one (head/base) same-run, two (head/hctrl, base/bctrl) */
    size_t n0 = ctrl ? (nh < nhc ? nh : nhc) : (nh < nb ? nh : nb);
    size_t n1 = ctrl ? (nb < nbc ? nb : nbc) : 0;
    if (n0 > INT32_MAX || n1 > INT32_MAX) return tb_fail(msg, len, TB_EUSAGE, "too many samples");
    size_t mx = n0 > n1 ? n0 : n1;
    double *q = malloc((n0 + n1) * sizeof *q), *r = malloc((size_t)iters * sizeof *r);
    int *cnt = calloc(mx, sizeof *cnt);
    if (!q || !r || !cnt) {
        free(q); free(r); free(cnt);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    double m0 = ratios_sorted(head, ctrl ? hctrl : base, n0, q), m1 = 1;
    if (ctrl) m1 = ratios_sorted(base, bctrl, n1, q + n0);
    *ratio = m0 / m1;
    tb_rng r0 = tb_rng_stream(seed, 0), r1 = tb_rng_stream(seed, 1);
    for (int it = 0; it < iters; it++) {
        double a = tb_rank_resample_median(q, (int)n0, cnt, &r0);
        double b = ctrl ? tb_rank_resample_median(q + n0, (int)n1, cnt, &r1) : 1.0;
        r[it] = a / b;
    }
    interval(r, iters, conf, lo, hi);
    free(q);
    free(r);
    free(cnt);
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
