/* nvml_sampler.c - the NVML sampler thread (see nvml_sampler.h).
 *
 * Sharing: the mutex guards two flags only (ready, stop) and is released before any NVML
 * call. Everything the thread accumulates is written by the thread alone and read by the
 * caller after pthread_join, which orders the two.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/nvml_sampler.h"
#include "common/tb.h"
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_PERIOD_MS 10
#define MAX_PERIOD_MS 60000

typedef struct {
    int ok;
    unsigned long long v;
} counter;

struct tb_nvml_sampler {
    pthread_t th;
    tb_nvml_dev *dev;
    long period_ns;

    pthread_mutex_t mu;
    pthread_cond_t cv;      /* CLOCK_MONOTONIC */
    int ready, stop;        /* under mu */

    /* the thread's alone until joined */
    int n, n_sm, n_power, n_reasons;
    double sm_sum, sm_min, sm_max, power_sum, power_max;
    int temp_max;
    unsigned long long reasons_or;
    int n_throttled, n_capped;
    struct timespec t0, t1;
    counter e0, e1, vp0, vp1, vt0, vt1;
};

static double secs(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns % 1000000000L;
    t->tv_sec += ns / 1000000000L;
    if (t->tv_nsec >= 1000000000L) t->tv_nsec -= 1000000000L, t->tv_sec++;
}

static int before(struct timespec a, struct timespec b)
{
    return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

static void read_energy(tb_nvml_sampler *s, counter *e)
{
    e->ok = tb_nvml_energy_mj(s->dev, &e->v) == TB_OK;
}

static void read_violations(tb_nvml_sampler *s, counter *vp, counter *vt)
{
    vp->ok = tb_nvml_violation_ns(s->dev, TB_NVML_POLICY_POWER, &vp->v) == TB_OK;
    vt->ok = tb_nvml_violation_ns(s->dev, TB_NVML_POLICY_THERMAL, &vt->v) == TB_OK;
}

static void sample(tb_nvml_sampler *s)
{
    int mhz, mw, c;
    unsigned long long r;
    s->n++;
    if (tb_nvml_sm_clock(s->dev, &mhz) == TB_OK) {
        s->sm_sum += mhz;
        if (!s->n_sm || mhz < s->sm_min) s->sm_min = mhz;
        if (!s->n_sm || mhz > s->sm_max) s->sm_max = mhz;
        s->n_sm++;
    }
    if (tb_nvml_power_mw(s->dev, &mw) == TB_OK) {
        s->power_sum += mw * 1e-3;
        if (!s->n_power || mw * 1e-3 > s->power_max) s->power_max = mw * 1e-3;
        s->n_power++;
    }
    if (tb_nvml_temperature(s->dev, &c) == TB_OK && c > s->temp_max) s->temp_max = c;
    if (tb_nvml_throttle_reasons(s->dev, &r) == TB_OK) {
        s->reasons_or |= r;
        s->n_throttled += (r & TB_NVML_THROTTLE_MASK) != 0;
        s->n_capped += (r & TB_NVML_REASON_SW_POWER_CAP) != 0;
        s->n_reasons++;
    }
}

static void *run(void *arg)
{
    tb_nvml_sampler *s = arg;
    /* the energy readings sit next to t0 and t1, so energy / seconds is a mean power */
    read_violations(s, &s->vp0, &s->vt0);
    read_energy(s, &s->e0);
    clock_gettime(CLOCK_MONOTONIC, &s->t0);
    pthread_mutex_lock(&s->mu);
    s->ready = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);

    struct timespec next = s->t0, now;
    for (;;) {
        add_ns(&next, s->period_ns);
        clock_gettime(CLOCK_MONOTONIC, &now);
        while (before(next, now)) add_ns(&next, s->period_ns);   /* skip missed deadlines */
        int stop = 0, rc = 0;
        pthread_mutex_lock(&s->mu);
        while (!s->stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&s->cv, &s->mu, &next);
        stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        sample(s);
    }
    if (s->n == 0) sample(s);
    clock_gettime(CLOCK_MONOTONIC, &s->t1);
    read_energy(s, &s->e1);
    read_violations(s, &s->vp1, &s->vt1);
    return NULL;
}

int tb_nvml_sampler_start(tb_nvml_dev *dev, int period_ms, tb_nvml_sampler **out, char *msg,
                          size_t len)
{
    *out = NULL;
    if (period_ms == 0) period_ms = DEFAULT_PERIOD_MS;
    if (period_ms < 0 || period_ms > MAX_PERIOD_MS)
        return tb_fail(msg, len, TB_EUSAGE, "invalid nvml sampling period %d ms (want 1 to %d)",
                       period_ms, MAX_PERIOD_MS);
    if (!tb_nvml_loaded()) return tb_fail(msg, len, TB_ENOGPU, "nvml not loaded");
    if (!dev) return tb_fail(msg, len, TB_EUSAGE, "no nvml device to sample");
    char name[96];
    if (tb_nvml_name(dev, name, sizeof name) != TB_OK)
        return tb_fail(msg, len, TB_ECUDA, "nvml device does not answer (nvmlDeviceGetName)");

    tb_nvml_sampler *s = calloc(1, sizeof *s);
    if (!s) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    s->dev = dev;
    s->period_ns = period_ms * 1000000L;
    s->temp_max = -1;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);

    /* the thread starts with every signal blocked: they stay the measuring thread's */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->th, NULL, run, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
        return tb_fail(msg, len, TB_EINTERNAL, "cannot start the nvml sampler thread: %s",
                       strerror(rc));
    }
    pthread_mutex_lock(&s->mu);
    while (!s->ready) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    *out = s;
    return TB_OK;
}

static double delta(counter a, counter b, double scale)
{
    return a.ok && b.ok && b.v >= a.v ? (double)(b.v - a.v) * scale : NAN;
}

void tb_nvml_sampler_stop(tb_nvml_sampler *s, tb_nvml_summary *out)
{
    tb_nvml_summary sum = {
        .n = 0, .sm_mhz_min = NAN, .sm_mhz_mean = NAN, .sm_mhz_max = NAN,
        .power_w_mean = NAN, .power_w_max = NAN, .temp_c_max = -1, .energy_j = NAN,
        .seconds = NAN, .violation_power_ms = NAN, .violation_thermal_ms = NAN,
    };
    if (s) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->th, NULL);

        sum.n = s->n;
        if (s->n_sm) {
            sum.sm_mhz_min = s->sm_min;
            sum.sm_mhz_mean = s->sm_sum / s->n_sm;
            sum.sm_mhz_max = s->sm_max;
        }
        if (s->n_power) {
            sum.power_w_mean = s->power_sum / s->n_power;
            sum.power_w_max = s->power_max;
        }
        sum.temp_c_max = s->temp_max;
        sum.reasons_or = s->reasons_or;
        sum.n_throttled = s->n_throttled;
        sum.n_power_capped = s->n_capped;
        sum.energy_j = delta(s->e0, s->e1, 1e-3);
        sum.seconds = secs(s->t0, s->t1);
        sum.violation_power_ms = delta(s->vp0, s->vp1, 1e-6);
        sum.violation_thermal_ms = delta(s->vt0, s->vt1, 1e-6);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
        free(s);
    }
    if (out) *out = sum;
}
