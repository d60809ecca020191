/* test_verdict.c - harness/report/verdict.c: the ratio of medians and its bootstrap interval
 * (exact medians, determinism, bad input), the class of every pair of side states, and the
 * gate's error rates on synthetic samples: identical distributions never gate (false-alarm
 * rate printed over 1000 trials per noise level), a 5 % slowdown always gates, at the sample
 * counts the default stopping rule gives (stdrel: rse of the mean <= 0.5 %, at least 10
 * samples and 0.05 s of samples, at most 1 s), with the gate's 2000 resamples; and the paired
 * statistic (tb_verdict_ratio_paired) on a card whose pace drifts during the run. */
#include "tb_test.h"
#include "report/verdict.h"
#include "common/tb.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state = 42;
static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform(void) { return ((double)(splitmix64() >> 11) + 0.5) / 9007199254740992.0; }
static double normal(void) { return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform()); }

/* GPU-like samples: a core of relative normal noise `rel` around ms, and a tail: a fraction
 * `tail` of samples slower by 5-20 % (a clock dip, a refresh, another process) */
static void fill(double *x, size_t n, double ms, double rel, double tail)
{
    for (size_t i = 0; i < n; i++) {
        double v = ms * (1 + rel * normal());
        if (uniform() < tail) v *= 1.05 + 0.15 * uniform();
        x[i] = v > 0 ? v : ms * 1e-3;
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double sorted_median(const double *x, size_t n)
{
    double *c = malloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++) c[i] = x[i];
    qsort(c, n, sizeof *c, cmp_d);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

/* the sample count of the default stop rule for a kernel of ms with this spread */
static size_t default_n(double ms, double rel, double tail)
{
    double sd = sqrt(rel * rel + tail * 0.12 * 0.12);   /* the tail's share of the variance */
    size_t n = (size_t)ceil(pow(sd / 0.005, 2));
    size_t by_time = (size_t)ceil(50.0 / (ms * 1000.0) * 1000.0);   /* 0.05 s of samples */
    if (n < by_time) n = by_time;
    if (n < 10) n = 10;
    size_t cap = (size_t)(1000.0 / ms);                              /* 1 s budget */
    if (n > cap) n = cap;
    if (n > 1000) n = 1000;
    return n;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    double r, lo, hi;

    TB_CASE("verdict-1.1", "the point ratio is the ratio of the exact medians (odd and even n)") {
        int bad = 0;
        for (int t = 0; t < 300; t++) {
            size_t nb = 1 + splitmix64() % 40, nh = 1 + splitmix64() % 40;
            double b[40], h[40];
            fill(b, nb, 1.0, 0.1, 0.1);
            fill(h, nh, 1.3, 0.1, 0.1);
            if (tb_verdict_ratio(b, nb, h, nh, NULL, 0, NULL, 0, 0.95, 50, 1, &r, &lo, &hi, msg, sizeof msg)) bad++;
            else if (fabs(r - sorted_median(h, nh) / sorted_median(b, nb)) > 1e-12) bad++;
        }
        TB_CHECK(bad == 0);
        double b[] = { 1, 2, 3, 4 }, h[] = { 2, 4, 6, 8 };
        TB_CHECK(tb_verdict_ratio(b, 4, h, 4, NULL, 0, NULL, 0, 0.95, 100, 1, &r, &lo, &hi, msg, sizeof msg) == TB_OK);
        TB_CHECK(r == 2.0 && lo <= r && hi >= r);
    }
    TB_CASE("verdict-1.2", "with a control: the ratio of the ratios; a uniform drift cancels") {
        double b[200], h[200], bc[200], hc[200];
        fill(b, 200, 1.0, 0.005, 0);
        fill(bc, 200, 2.0, 0.005, 0);
        for (int i = 0; i < 200; i++) { h[i] = b[i] * 1.08; hc[i] = bc[i] * 1.08; }   /* GPU 8 % slower */
        TB_CHECK(tb_verdict_ratio(b, 200, h, 200, bc, 200, hc, 200, 0.95, 500, 7, &r, &lo, &hi, msg, sizeof msg) == TB_OK);
        TB_CHECK(fabs(r - 1.0) < 1e-9);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) == TB_CHANGE_UNCHANGED);
        TB_CHECK(tb_verdict_ratio(b, 200, h, 200, NULL, 0, NULL, 0, 0.95, 500, 7, &r, &lo, &hi, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) == TB_CHANGE_SLOWER);
    }
    TB_CASE("verdict-1.3", "deterministic given the seed; bad input refused") {
        double b[50], h[50], r2, lo2, hi2;
        fill(b, 50, 1.0, 0.02, 0.05);
        fill(h, 50, 1.0, 0.02, 0.05);
        tb_verdict_ratio(b, 50, h, 50, NULL, 0, NULL, 0, 0.95, 300, 99, &r, &lo, &hi, msg, sizeof msg);
        tb_verdict_ratio(b, 50, h, 50, NULL, 0, NULL, 0, 0.95, 300, 99, &r2, &lo2, &hi2, msg, sizeof msg);
        TB_CHECK(r == r2 && lo == lo2 && hi == hi2);
        double z[] = { 1, 0 };
        TB_CHECK(tb_verdict_ratio(z, 2, h, 50, NULL, 0, NULL, 0, 0.95, 300, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "base sample 1");
        TB_CHECK(tb_verdict_ratio(b, 0, h, 50, NULL, 0, NULL, 0, 0.95, 300, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_verdict_ratio(b, 50, h, 50, b, 50, NULL, 0, 0.95, 300, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_verdict_ratio(b, 50, h, 50, NULL, 0, NULL, 0, 1.5, 300, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_verdict_seed("a", "bc") != tb_verdict_seed("ab", "c"));
    }
    TB_CASE("verdict-2.1", "the class of every pair of side states; only slower and newly invalid fail") {
        const tb_side_state S[] = { TB_SIDE_ABSENT, TB_SIDE_VALID, TB_SIDE_UNSUPPORTED, TB_SIDE_INVALID };
        int fails = 0;
        for (int b = 0; b < 4; b++)
            for (int h = 0; h < 4; h++) {
                tb_change c = tb_verdict_classify(S[b], S[h], 2.0, 3.0, 0.02);   /* "slower" figures */
                if (S[b] == TB_SIDE_ABSENT || S[h] == TB_SIDE_ABSENT) TB_CHECK(!tb_change_fails(c));
                fails += tb_change_fails(c);
            }
        TB_CHECK(fails == 2);   /* valid->valid slower, valid->invalid */
        TB_CHECK(tb_verdict_classify(TB_SIDE_ABSENT, TB_SIDE_VALID, 0, 0, 0.02) == TB_CHANGE_NEW);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_ABSENT, 0, 0, 0.02) == TB_CHANGE_REMOVED);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_INVALID, 0, 0, 0.02) == TB_CHANGE_NEWLY_INVALID);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_UNSUPPORTED, 0, 0, 0.02) == TB_CHANGE_NEWLY_UNSUPPORTED);
        TB_CHECK(tb_verdict_classify(TB_SIDE_INVALID, TB_SIDE_VALID, 0, 0, 0.02) == TB_CHANGE_NEWLY_VALID);
        TB_CHECK(tb_verdict_classify(TB_SIDE_UNSUPPORTED, TB_SIDE_UNSUPPORTED, 0, 0, 0.02) == TB_CHANGE_NOT_TIMED);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, 1.019, 1.05, 0.02) == TB_CHANGE_UNCHANGED);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, 1.021, 1.05, 0.02) == TB_CHANGE_SLOWER);
        TB_CHECK(tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, 0.95, 0.979, 0.02) == TB_CHANGE_FASTER);
    }

    /* the error rates: kernels of 0.17 ms and 1.4 ms (4096^3 and 8192^3 on an H100), core noise
     * 0.25-1 %, 3 % of samples in a slow tail; 1000 trials each */
    const double kms[] = { 0.17, 1.4 }, rel[] = { 0.0025, 0.005, 0.01 };
    const int trials = 1000;
    double *b = malloc(1000 * sizeof *b), *h = malloc(1000 * sizeof *h);
    TB_CASE("verdict-3.1", "identical distributions never gate (1000 trials per level, false alarms printed)") {
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < 3; l++) {
                size_t n = default_n(kms[k], rel[l], 0.03);
                int alarms = 0, faster = 0;
                for (int t = 0; t < trials; t++) {
                    fill(b, n, kms[k], rel[l], 0.03);
                    fill(h, n, kms[k], rel[l], 0.03);
                    tb_verdict_ratio(b, n, h, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
                    tb_change c = tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02);
                    alarms += tb_change_fails(c);
                    faster += c == TB_CHANGE_FASTER;
                }
                printf("  %.2f ms, noise %.2f %% + 3 %% tail, n = %zu: false alarms %d/%d (%.2f %%), "
                       "called faster %d\n", kms[k], rel[l] * 100, n, alarms, trials,
                       100.0 * alarms / trials, faster);
                TB_CHECK(alarms == 0 && faster == 0);
            }
    }
    TB_CASE("verdict-3.2", "a 5 % slowdown always gates (1000 trials per level)") {
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < 3; l++) {
                size_t n = default_n(kms[k], rel[l], 0.03);
                int caught = 0;
                double lo_min = 1e9;
                for (int t = 0; t < trials; t++) {
                    fill(b, n, kms[k], rel[l], 0.03);
                    fill(h, n, kms[k] * 1.05, rel[l], 0.03);
                    tb_verdict_ratio(b, n, h, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
                    caught += tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) == TB_CHANGE_SLOWER;
                    if (lo < lo_min) lo_min = lo;
                }
                printf("  %.2f ms, noise %.2f %% + 3 %% tail, n = %zu: 5 %% slowdown caught %d/%d "
                       "(lowest interval bound %.4f)\n", kms[k], rel[l] * 100, n, caught, trials, lo_min);
                TB_CHECK(caught == trials);
            }
    }

    /* Paired by round (tb_verdict_ratio_paired). The card's pace drifts during a run: round i
     * runs every variant at a common factor d[i], a slow walk of +-4 % (the 7-9 % moves between
     * rounds a minute apart, device-notes), and each sample adds its own noise. */
    double *d = malloc(1000 * sizeof *d), *bc = malloc(1000 * sizeof *bc), *hc = malloc(1000 * sizeof *hc);
    #define DRIFT(n) do { double w_ = 0; for (size_t i_ = 0; i_ < (n); i_++) { \
        w_ += 0.004 * normal(); if (w_ > 0.04) w_ = 0.04; if (w_ < -0.04) w_ = -0.04; d[i_] = 1 + w_; } } while (0)
    TB_CASE("verdict-4.1", "paired: the median of per-round ratios, over the rounds both sides sampled") {
        double bb[] = { 1, 2, 4, 8, 100 }, hh[] = { 1.1, 2.2, 4.4, 8.8 };
        TB_CHECK(tb_verdict_ratio_paired(bb, 5, hh, 4, NULL, 0, NULL, 0, 0.95, 500, 1, &r, &lo, &hi, msg, sizeof msg) == TB_OK);
        TB_CHECK(fabs(r - 1.1) < 1e-12 && fabs(lo - 1.1) < 1e-12 && fabs(hi - 1.1) < 1e-12);
        double c1[] = { 2, 4, 8, 16 }, c2[] = { 1, 1, 1, 1, 1 };
        /* head/hctrl: 1.1 2.2 4.4 8.8 (median 3.3); base/bctrl: 0.5 every round; ratio 6.6 */
        TB_CHECK(tb_verdict_ratio_paired(bb, 4, hh, 4, c1, 4, c2, 5, 0.95, 500, 1, &r, &lo, &hi, msg, sizeof msg) == TB_OK);
        TB_CHECK(fabs(r - 6.6) < 1e-12);
        double bad[] = { 1, -1 };
        TB_CHECK(tb_verdict_ratio_paired(bad, 2, hh, 2, NULL, 0, NULL, 0, 0.95, 500, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_verdict_ratio_paired(bb, 2, hh, 2, c1, 2, NULL, 0, 0.95, 500, 1, &r, &lo, &hi, msg, sizeof msg) == TB_EUSAGE);
    }
    TB_CASE("verdict-4.2", "a drifting card, one side stopped early: unpaired cries wolf, paired never (1000 trials)") {
        const size_t n = 300, early = 100;
        int alarms_u = 0, alarms_p = 0;
        for (int t = 0; t < trials; t++) {
            DRIFT(n);
            for (size_t i = 0; i < n; i++) {
                b[i] = 0.6 * d[i] * (1 + 0.003 * normal());
                h[i] = 0.6 * d[i] * (1 + 0.003 * normal());
            }
            tb_verdict_ratio(b, early, h, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
            alarms_u += tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) != TB_CHANGE_UNCHANGED;
            tb_verdict_ratio_paired(b, early, h, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
            alarms_p += tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) != TB_CHANGE_UNCHANGED;
        }
        printf("  0.6 ms, drift +-4 %%, noise 0.3 %%, base stopped after %zu of %zu rounds: false alarms "
               "unpaired %d/%d, paired %d/%d\n", early, n, alarms_u, trials, alarms_p, trials);
        TB_CHECK(alarms_p == 0);
        TB_CHECK(alarms_u > alarms_p);   /* the case the pairing exists for */
    }
    TB_CASE("verdict-4.3", "paired on a drifting card: a 3 % slowdown always gates, identical never (1000 trials)") {
        const size_t n = 150;
        int caught = 0, alarms = 0;
        double lo_min = 1e9;
        for (int t = 0; t < trials; t++) {
            DRIFT(n);
            for (size_t i = 0; i < n; i++) {
                b[i] = 0.18 * d[i] * (1 + 0.004 * normal());
                h[i] = 0.18 * d[i] * 1.03 * (1 + 0.004 * normal());
                hc[i] = 0.18 * d[i] * (1 + 0.004 * normal());
            }
            tb_verdict_ratio_paired(b, n, h, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
            caught += tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) == TB_CHANGE_SLOWER;
            if (lo < lo_min) lo_min = lo;
            tb_verdict_ratio_paired(b, n, hc, n, NULL, 0, NULL, 0, 0.95, 2000, (uint64_t)t + 7, &r, &lo, &hi, msg, sizeof msg);
            alarms += tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02) != TB_CHANGE_UNCHANGED;
        }
        printf("  0.18 ms, drift +-4 %%, noise 0.4 %%, n = %zu: 3 %% slowdown caught %d/%d (lowest bound %.4f); "
               "identical called changed %d/%d\n", n, caught, trials, lo_min, alarms, trials);
        TB_CHECK(caught == trials && alarms == 0);
    }
    TB_CASE("verdict-4.4", "paired with a control, two runs 4 % apart and drifting within: 3 % caught, identical passes") {
        const size_t n = 150;
        int caught = 0, alarms = 0;
        for (int t = 0; t < trials; t++) {
            DRIFT(n);   /* the baseline's run */
            for (size_t i = 0; i < n; i++) {
                b[i] = 0.18 * d[i] * (1 + 0.004 * normal());
                bc[i] = 0.17 * d[i] * (1 + 0.004 * normal());
            }
            DRIFT(n);   /* the head's run, on a card 4 % slower overall */
            double slow = (t % 2) ? 1.03 : 1.0;
            for (size_t i = 0; i < n; i++) {
                h[i] = 0.18 * 1.04 * d[i] * slow * (1 + 0.004 * normal());
                hc[i] = 0.17 * 1.04 * d[i] * (1 + 0.004 * normal());
            }
            tb_verdict_ratio_paired(b, n, h, n, bc, n, hc, n, 0.95, 2000, (uint64_t)t, &r, &lo, &hi, msg, sizeof msg);
            tb_change c = tb_verdict_classify(TB_SIDE_VALID, TB_SIDE_VALID, lo, hi, 0.02);
            if (t % 2) caught += c == TB_CHANGE_SLOWER;
            else alarms += c != TB_CHANGE_UNCHANGED;
        }
        printf("  with a control: 3 %% slowdown caught %d/%d, identical called changed %d/%d\n",
               caught, trials / 2, alarms, trials / 2);
        TB_CHECK(caught == trials / 2 && alarms == 0);
    }
    #undef DRIFT
    free(d);
    free(bc);
    free(hc);
    free(b);
    free(h);
    return tb_test_done();
}
