/* test_nvml_sampler.c - harness/worker/nvml_sampler.c and the NVML queries it uses (harness/common/nvml.c).
 *
 *   test_nvml_sampler                  no NVML needed: failure paths, constants, PCI ids
 *   test_nvml_sampler --fake LIB       the scripted GPU of tests/fake_nvml.c (LIB is its path,
 *                                      libnvidia-ml.so.1): exact summaries, timing, signals
 *   test_nvml_sampler --gpu            a real GPU through the real NVML; exit 77 without one
 */
#define _POSIX_C_SOURCE 200809L
#include "tb_test.h"
#include "common/nvml.h"
#include "worker/nvml_sampler.h"
#include "common/tb.h"
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&t, &t) != 0) {}
}

static int empty_summary(const tb_nvml_summary *s)
{
    return s->n == 0 && isnan(s->sm_mhz_min) && isnan(s->sm_mhz_mean) && isnan(s->sm_mhz_max) &&
           isnan(s->power_w_mean) && isnan(s->power_w_max) && s->temp_c_max == -1 &&
           s->reasons_or == 0 && s->n_throttled == 0 && s->n_power_capped == 0 &&
           isnan(s->energy_j) && isnan(s->seconds) && isnan(s->violation_power_ms) &&
           isnan(s->violation_thermal_ms);
}

static void print_summary(const char *what, const tb_nvml_summary *s)
{
    printf("  %s: n %d, sm %.0f/%.1f/%.0f MHz, power %.1f/%.1f W, temp %d C, reasons 0x%llx "
           "(%d throttled, %d capped), %.3f J in %.3f s, violations %.3f/%.3f ms\n", what, s->n,
           s->sm_mhz_min, s->sm_mhz_mean, s->sm_mhz_max, s->power_w_mean, s->power_w_max,
           s->temp_c_max, s->reasons_or, s->n_throttled, s->n_power_capped, s->energy_j,
           s->seconds, s->violation_power_ms, s->violation_thermal_ms);
}

/* ---- 1: nothing needed ---------------------------------------------------------------- */

static void no_nvml_cases(void)
{
    char msg[TB_MSG_LEN];
    tb_nvml_summary sum;
    TB_CASE("sampler-1.1", "start before NVML is loaded fails cleanly") {
        tb_nvml_sampler *s = (tb_nvml_sampler *)1;
        msg[0] = 0;
        int rc = tb_nvml_sampler_start((tb_nvml_dev *)&msg, 10, &s, msg, sizeof msg);
        TB_CHECK(rc == TB_ENOGPU && s == NULL);
        TB_CHECK(strcmp(msg, "nvml not loaded") == 0);
        TB_CHECK(!tb_nvml_loaded());
    }
    TB_CASE("sampler-1.2", "a bad period is refused first") {
        tb_nvml_sampler *s = (tb_nvml_sampler *)1;
        TB_CHECK(tb_nvml_sampler_start(NULL, -1, &s, msg, sizeof msg) == TB_EUSAGE && s == NULL);
        TB_CHECK(strcmp(msg, "invalid nvml sampling period -1 ms (want 1 to 60000)") == 0);
        TB_CHECK(tb_nvml_sampler_start(NULL, 60001, &s, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "invalid nvml sampling period 60001 ms");
    }
    TB_CASE("sampler-1.3", "stopping no sampler gives an empty summary") {
        memset(&sum, 0x5a, sizeof sum);
        tb_nvml_sampler_stop(NULL, &sum);
        TB_CHECK(empty_summary(&sum));
        tb_nvml_sampler_stop(NULL, NULL);
    }
    TB_CASE("sampler-1.4", "the new NVML queries without NVML: TB_ECUDA, outputs unknown") {
        tb_nvml_dev *d = (tb_nvml_dev *)&sum;
        int a = 0, b = 0;
        unsigned long long u = 7;
        char buf[64] = "untouched";
        TB_CHECK(tb_nvml_sm_clock(d, &a) == TB_ECUDA && a == -1);
        TB_CHECK(tb_nvml_power_mw(d, &a) == TB_ECUDA && a == -1);
        TB_CHECK(tb_nvml_energy_mj(d, &u) == TB_ECUDA && u == 7);
        TB_CHECK(tb_nvml_temperature(d, &a) == TB_ECUDA && a == -1);
        TB_CHECK(tb_nvml_ecc_mode(d, &a, &b) == TB_ECUDA && a == -1 && b == -1);
        TB_CHECK(tb_nvml_mig_mode(d, &a, &b) == TB_ECUDA && a == -1 && b == -1);
        TB_CHECK(tb_nvml_persistence_mode(d, &a) == TB_ECUDA && a == -1);
        TB_CHECK(tb_nvml_app_clocks(d, &a, &b) == TB_ECUDA && a == -1 && b == -1);
        TB_CHECK(tb_nvml_violation_ns(d, TB_NVML_POLICY_POWER, &u) == TB_ECUDA && u == 7);
        TB_CHECK(tb_nvml_pci_bus_id(d, buf, sizeof buf) == TB_ECUDA && !strcmp(buf, "untouched"));
        TB_CHECK(tb_nvml_device_by_uuid("GPU-x", &d, msg, sizeof msg) == TB_ENOGPU);
        TB_CHECK(strcmp(msg, "nvml not loaded") == 0);
    }
    TB_CASE("sampler-1.5", "reason bits: throttling is slowdown, thermal, power brake; not the power cap") {
        TB_CHECK(TB_NVML_THROTTLE_MASK == 0xE8ull);
        TB_CHECK(!(TB_NVML_THROTTLE_MASK & TB_NVML_REASON_SW_POWER_CAP));
        TB_CHECK(!(TB_NVML_THROTTLE_MASK & (TB_NVML_REASON_GPU_IDLE | TB_NVML_REASON_SYNC_BOOST |
                   TB_NVML_REASON_APPLICATIONS_CLOCKS_SETTING | TB_NVML_REASON_DISPLAY_CLOCK_SETTING)));
        TB_CHECK(TB_NVML_REASON_DISPLAY_CLOCK_SETTING == 0x100ull);
        TB_CHECK(TB_NVML_POLICY_TOTAL_BASE_CLOCKS == 11 && TB_NVML_POLICY_RELIABILITY == 5);
    }
    TB_CASE("sampler-1.6", "PCI bus ids compare by value, not by spelling") {
        TB_CHECK(tb_nvml_pci_same("00000000:1B:00.0", "0000:1b:00.0"));
        TB_CHECK(tb_nvml_pci_same("0000:1b:00.0", "1b:00"));
        TB_CHECK(tb_nvml_pci_same("00000001:C1:1F.0", "1:c1:1f.0"));
        TB_CHECK(!tb_nvml_pci_same("0000:1b:00.0", "0000:1c:00.0"));
        TB_CHECK(!tb_nvml_pci_same("0001:1b:00.0", "0000:1b:00.0"));
        TB_CHECK(!tb_nvml_pci_same("0000:1b:00.1", "0000:1b:00.0"));
        TB_CHECK(!tb_nvml_pci_same("0000:1b:00.0", "GPU-1b"));
        TB_CHECK(!tb_nvml_pci_same("1b", "1b"));
        TB_CHECK(!tb_nvml_pci_same("0000:1b:00.0 ", "0000:1b:00.0"));
        TB_CHECK(!tb_nvml_pci_same("0:0:1b:00.0", "0000:1b:00.0"));
        TB_CHECK(!tb_nvml_pci_same(NULL, "0000:1b:00.0"));
    }
}

/* ---- 2: the scripted GPU ---------------------------------------------------------------- */

static volatile sig_atomic_t usr1_hits, usr1_elsewhere;
static pthread_t usr1_main;
static void on_usr1(int sig)
{
    (void)sig;
    usr1_hits++;
    if (!pthread_equal(pthread_self(), usr1_main)) usr1_elsewhere++;
}

static void (*fake_set)(const char *, long);
static long (*fake_get)(const char *);

/* what the sampler must have seen over the fake's first n calls */
static void expect_fake(const tb_nvml_summary *s)
{
    int n = s->n, thr = 0, cap = 0;
    double mn = 1e9, mx = 0, sum = 0, pmax = 0, psum = 0;
    int tmax = -1;
    unsigned long long ror = 0;
    for (int k = 0; k < n; k++) {
        double mhz = k % 4 == 3 ? 1500 : 1980;
        unsigned long long r = (k % 4 == 3 ? 0x8ull : 0) | (k % 5 == 0 ? 0x4ull : 0) |
                               (k % 7 == 6 ? 0x1ull : 0) | (k % 11 == 10 ? 0x20ull : 0);
        double w = 300 + (k % 10);
        mn = mhz < mn ? mhz : mn, mx = mhz > mx ? mhz : mx, sum += mhz;
        psum += w, pmax = w > pmax ? w : pmax;
        if (60 + k % 7 > tmax) tmax = 60 + k % 7;
        ror |= r, thr += (r & TB_NVML_THROTTLE_MASK) != 0, cap += (r & 0x4) != 0;
    }
    TB_CHECK(fake_get("sm_calls") == n && fake_get("reason_calls") == n &&
             fake_get("temp_calls") == n);
    TB_CHECK(s->sm_mhz_min == mn && s->sm_mhz_max == mx && fabs(s->sm_mhz_mean - sum / n) < 1e-9);
    TB_CHECK(s->temp_c_max == tmax && s->reasons_or == ror);
    TB_CHECK(s->n_throttled == thr && s->n_power_capped == cap);
    if (!isnan(s->power_w_mean))
        TB_CHECK(fabs(s->power_w_mean - psum / n) < 1e-9 && s->power_w_max == pmax);
}

static void fake_cases(const char *lib)
{
    char msg[TB_MSG_LEN], buf[64];
    tb_nvml_dev *d = NULL, *d2 = NULL;
    tb_nvml_summary sum;
    tb_nvml_sampler *s = NULL;
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    fake_set = h ? (void (*)(const char *, long))dlsym(h, "fake_nvml_set") : NULL;
    fake_get = h ? (long (*)(const char *))dlsym(h, "fake_nvml_get") : NULL;
    TB_CASE("sampler-2.1", "the fake NVML is the one loaded") {
        if (!h) printf("  %s\n", dlerror());
        TB_CHECK(h && fake_set && fake_get);
        TB_CHECK(tb_nvml_open(msg, sizeof msg) == TB_OK && tb_nvml_loaded());
        TB_CHECK(tb_nvml_device_by_index(0, &d, msg, sizeof msg) == TB_OK);
        TB_CHECK(d && tb_nvml_name(d, buf, sizeof buf) == TB_OK && !strcmp(buf, "tilebench fake gpu"));
    }
    if (!fake_set || !fake_get || !d || strcmp(buf, "tilebench fake gpu")) return;

    TB_CASE("sampler-2.2", "the new queries read NVML's values and structs") {
        int a, b;
        unsigned long long u;
        TB_CHECK(tb_nvml_pci_bus_id(d, buf, sizeof buf) == TB_OK && !strcmp(buf, "00000000:1B:00.0"));
        TB_CHECK(tb_nvml_pci_same(buf, "0000:1b:00.0"));
        TB_CHECK(tb_nvml_device_by_uuid("GPU-fa4e0000-0000-0000-0000-000000000001", &d2, msg, sizeof msg) == TB_OK && d2 == d);
        d2 = NULL;
        TB_CHECK(tb_nvml_device_by_uuid("fa4e0000-0000-0000-0000-000000000001", &d2, msg, sizeof msg) == TB_OK && d2 == d);
        TB_CHECK(tb_nvml_device_by_uuid("GPU-nope", &d2, msg, sizeof msg) == TB_ECUDA);
        TB_CHECK(strcmp(msg, "no nvml device with uuid 'GPU-nope': Not Found") == 0);
        TB_CHECK(tb_nvml_device_by_uuid("nope", &d2, msg, sizeof msg) == TB_ECUDA);
        TB_CHECK_STR_CONTAINS(msg, "'GPU-nope'");
        TB_CHECK(tb_nvml_ecc_mode(d, &a, &b) == TB_OK && a == 1 && b == 0);
        TB_CHECK(tb_nvml_mig_mode(d, &a, &b) == TB_OK && a == 0 && b == 1);
        TB_CHECK(tb_nvml_persistence_mode(d, &a) == TB_OK && a == 1);
        TB_CHECK(tb_nvml_app_clocks(d, &a, &b) == TB_OK && a == 1755 && b == 2619);
        TB_CHECK(tb_nvml_energy_mj(d, &u) == TB_OK && u >= 1000000000000ull);
        TB_CHECK(tb_nvml_violation_ns(d, TB_NVML_POLICY_POWER, &u) == TB_OK && u >= 1000000000000000ull);
        TB_CHECK(tb_nvml_violation_ns(d, TB_NVML_POLICY_SYNC_BOOST, &u) == TB_ECUDA);
        fake_set("reset", 0);
        TB_CHECK(tb_nvml_sm_clock(d, &a) == TB_OK && a == 1980);
        TB_CHECK(tb_nvml_power_mw(d, &a) == TB_OK && a == 300000);
        TB_CHECK(tb_nvml_temperature(d, &a) == TB_OK && a == 60);
    }
    TB_CASE("sampler-2.3", "200 ms at 10 ms: every sample counted, reasons split, deltas right") {
        fake_set("reset", 0);
        double t0 = now_s();
        TB_CHECK(tb_nvml_sampler_start(d, 10, &s, msg, sizeof msg) == TB_OK && s);
        double t_start = now_s() - t0;
        sleep_ms(200);
        tb_nvml_sampler_stop(s, &sum);
        print_summary("fake", &sum);
        printf("  start took %.2f ms\n", 1e3 * t_start);
        TB_CHECK(sum.n >= 10 && sum.n <= 20);   /* 20 ticks at most; loaded machines skip some */
        TB_CHECK(sum.seconds >= 0.2 && sum.seconds < 0.5);
        expect_fake(&sum);
        TB_CHECK(sum.n_throttled > 0 && sum.n_power_capped > 0);
        TB_CHECK(sum.reasons_or & TB_NVML_REASON_GPU_IDLE);
        /* 350 W, violations at 1/2 and 1/4 of the time; each reading is a little apart */
        TB_CHECK(fabs(sum.energy_j - 350 * sum.seconds) < 350 * 0.002);
        TB_CHECK(fabs(sum.violation_power_ms - 500 * sum.seconds) < 2);
        TB_CHECK(fabs(sum.violation_thermal_ms - 250 * sum.seconds) < 2);
        TB_CHECK(fake_get("energy_calls") == 2);
    }
    TB_CASE("sampler-2.4", "a window shorter than the period still gets one sample") {
        fake_set("reset", 0);
        TB_CHECK(tb_nvml_sampler_start(d, 1000, &s, msg, sizeof msg) == TB_OK);
        tb_nvml_sampler_stop(s, &sum);
        TB_CHECK(sum.n == 1 && sum.sm_mhz_min == 1980 && sum.reasons_or == 0x4ull && sum.n_power_capped == 1);
        TB_CHECK(sum.seconds >= 0 && sum.seconds < 0.1);
    }
    TB_CASE("sampler-2.5", "readings NVML will not give are unknown, the rest still counted") {
        fake_set("reset", 0);
        fake_set("no_energy", 1);
        fake_set("no_power", 1);
        TB_CHECK(tb_nvml_sampler_start(d, 5, &s, msg, sizeof msg) == TB_OK);
        sleep_ms(50);
        tb_nvml_sampler_stop(s, &sum);
        fake_set("no_energy", 0);
        fake_set("no_power", 0);
        TB_CHECK(sum.n >= 1 && isnan(sum.energy_j) && isnan(sum.power_w_mean) && isnan(sum.power_w_max));
        TB_CHECK(!isnan(sum.violation_power_ms) && sum.temp_c_max >= 60);
        expect_fake(&sum);
    }
    TB_CASE("sampler-2.6", "slow NVML: start and stop do not wait for it; missed ticks skipped") {
        fake_set("reset", 0);
        fake_set("slow_ms", 40);   /* each power reading takes 40 ms, the period is 10 */
        double t0 = now_s();
        TB_CHECK(tb_nvml_sampler_start(d, 10, &s, msg, sizeof msg) == TB_OK);
        double t_start = now_s() - t0;
        sleep_ms(300);
        double t1 = now_s();
        tb_nvml_sampler_stop(s, &sum);
        double t_stop = now_s() - t1;
        fake_set("slow_ms", 0);
        printf("  slow NVML: start %.1f ms, stop %.1f ms, %d samples in %.3f s\n", 1e3 * t_start,
               1e3 * t_stop, sum.n, sum.seconds);
        TB_CHECK(t_start < 0.030);
        TB_CHECK(t_stop < 0.040 + 0.060);    /* at most one reading in flight, plus slack */
        TB_CHECK(sum.n >= 3 && sum.n <= 8);  /* ~50 ms a tick: about 6, not 30 in a burst */
        expect_fake(&sum);
    }
    TB_CASE("sampler-2.7", "period 0 means 10 ms") {
        fake_set("reset", 0);
        TB_CHECK(tb_nvml_sampler_start(d, 0, &s, msg, sizeof msg) == TB_OK);
        sleep_ms(105);
        tb_nvml_sampler_stop(s, &sum);
        TB_CHECK(sum.n >= 5 && sum.n <= 10);
    }
    TB_CASE("sampler-2.8", "no device, or one that does not answer") {
        s = (tb_nvml_sampler *)1;
        TB_CHECK(tb_nvml_sampler_start(NULL, 10, &s, msg, sizeof msg) == TB_EUSAGE && s == NULL);
        TB_CHECK(strcmp(msg, "no nvml device to sample") == 0);
        fake_set("fail_name", 1);
        TB_CHECK(tb_nvml_sampler_start(d, 10, &s, msg, sizeof msg) == TB_ECUDA && s == NULL);
        TB_CHECK(strcmp(msg, "nvml device does not answer (nvmlDeviceGetName)") == 0);
        fake_set("fail_name", 0);
    }
    TB_CASE("sampler-2.9", "signals to the process reach the measuring thread, not the sampler") {
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, &old);
        usr1_main = pthread_self();
        usr1_hits = usr1_elsewhere = 0;
        TB_CHECK(tb_nvml_sampler_start(d, 1, &s, msg, sizeof msg) == TB_OK);
        for (int i = 0; i < 200; i++) {
            kill(getpid(), SIGUSR1);
            sleep_ms(1);
        }
        tb_nvml_sampler_stop(s, &sum);
        sigaction(SIGUSR1, &old, NULL);
        printf("  %d signals, %d on another thread\n", (int)usr1_hits, (int)usr1_elsewhere);
        TB_CHECK(usr1_hits == 200 && usr1_elsewhere == 0);
    }
    tb_nvml_close();
    TB_CHECK(!tb_nvml_loaded());
}

/* ---- 3: a real GPU ---------------------------------------------------------------------- */

static int gpu_cases(void)
{
    char msg[TB_MSG_LEN], buf[96];
    unsigned count = 0;
    tb_nvml_dev *d = NULL, *d2 = NULL;
    if (tb_nvml_open(msg, sizeof msg) != TB_OK) {
        printf("skipped: %s\n", msg);
        return 77;
    }
    if (tb_nvml_device_count(&count, msg, sizeof msg) != TB_OK || count == 0 ||
        tb_nvml_device_by_index(0, &d, msg, sizeof msg) != TB_OK) {
        printf("skipped: no nvml device\n");
        return 77;
    }
    TB_CASE("sampler-3.1", "the new queries on a real GPU") {
        int a, b;
        unsigned long long u;
        char uuid[96];
        TB_CHECK(tb_nvml_name(d, buf, sizeof buf) == TB_OK);
        printf("  name %s\n", buf);
        TB_CHECK(tb_nvml_pci_bus_id(d, buf, sizeof buf) == TB_OK);
        printf("  pci %s\n", buf);
        TB_CHECK(strlen(buf) == 16 && buf[8] == ':' && buf[11] == ':' && buf[14] == '.');
        TB_CHECK(tb_nvml_device_by_pci(buf, &d2, msg, sizeof msg) == TB_OK && d2 == d);
        TB_CHECK(tb_nvml_uuid(d, uuid, sizeof uuid) == TB_OK);
        d2 = NULL;
        TB_CHECK(tb_nvml_device_by_uuid(uuid, &d2, msg, sizeof msg) == TB_OK && d2 == d);
        d2 = NULL;
        TB_CHECK(tb_nvml_device_by_uuid(uuid + 4, &d2, msg, sizeof msg) == TB_OK && d2 == d);
        TB_CHECK(tb_nvml_sm_clock(d, &a) == TB_OK && a > 0);
        printf("  sm clock %d MHz\n", a);
        TB_CHECK(tb_nvml_power_mw(d, &a) == TB_OK && a > 0);
        printf("  power %d mW\n", a);
        TB_CHECK(tb_nvml_temperature(d, &a) == TB_OK && a > 0 && a < 120);
        printf("  temperature %d C\n", a);
        printf("  energy: rc %d, %llu mJ\n", tb_nvml_energy_mj(d, &u), u);
        printf("  ecc: rc %d", tb_nvml_ecc_mode(d, &a, &b));
        printf(" current %d pending %d\n", a, b);
        printf("  mig: rc %d", tb_nvml_mig_mode(d, &a, &b));
        printf(" current %d pending %d\n", a, b);
        printf("  persistence: rc %d", tb_nvml_persistence_mode(d, &a));
        printf(" %d\n", a);
        printf("  app clocks: rc %d", tb_nvml_app_clocks(d, &a, &b));
        printf(" sm %d mem %d\n", a, b);
        int pol[] = { 0, 1, 2, 3, 4, 5, 10, 11 };
        for (int i = 0; i < 8; i++) {
            u = 0;
            int rc = tb_nvml_violation_ns(d, pol[i], &u);
            printf("  violation policy %d: rc %d, %llu ns\n", pol[i], rc, u);
        }
    }
    TB_CASE("sampler-3.2", "half a second of sampling an idle GPU") {
        /* the energy counter (Volta and later) over the window against the mean power times the
         * time, within a factor of two (the counter moves every 100 ms; docs/perf.md). Up to four
         * windows a second apart, passing on the first that agrees: on 2026-11-27 an H100 just
         * lent read a steady 360 W while its counter rose at 125 W in the first window (the card
         * not yet idle after the machine's start); a broken counter fails all four. */
        int agreed = 0;
        for (int w = 0; w < 4 && !agreed; w++) {
            tb_nvml_sampler *s = NULL;
            tb_nvml_summary sum;
            if (w) sleep_ms(1000);
            double t0 = now_s();
            TB_CHECK(tb_nvml_sampler_start(d, 10, &s, msg, sizeof msg) == TB_OK);
            if (!s) break;
            double t_start = now_s() - t0;
            sleep_ms(500);
            double t1 = now_s();
            tb_nvml_sampler_stop(s, &sum);
            double t_stop = now_s() - t1;
            printf("  window %d:\n", w + 1);
            print_summary("gpu", &sum);
            printf("  start %.2f ms, stop %.2f ms\n", 1e3 * t_start, 1e3 * t_stop);
            TB_CHECK(sum.n >= 20 && sum.sm_mhz_min > 0 && sum.power_w_mean > 0 && sum.temp_c_max > 0);
            TB_CHECK(sum.seconds >= 0.5 && sum.seconds < 1.0);
            printf("  energy %.2f J over %.3f s at %.1f W mean\n", sum.energy_j, sum.seconds, sum.power_w_mean);
            agreed = isfinite(sum.energy_j) && sum.energy_j > 0.5 * sum.power_w_mean * sum.seconds &&
                     sum.energy_j < 2.0 * sum.power_w_mean * sum.seconds;
        }
        TB_CHECK(agreed);
    }
    tb_nvml_close();
    return tb_test_done();
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--gpu")) return gpu_cases();
    no_nvml_cases();
    if (argc >= 3 && !strcmp(argv[1], "--fake")) fake_cases(argv[2]);
    else if (argc >= 2) {
        printf("usage: test_nvml_sampler [--fake LIB | --gpu]\n");
        return 2;
    }
    return tb_test_done();
}
