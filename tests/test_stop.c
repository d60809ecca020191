/* test_stop.c - harness/common/stop.c: spec parsing and every error message, stdrel's noise and
 * settle rules, min-samples / min-time, timeout and max-samples reasons, fixed. */
#include "tb_test.h"
#include "common/stop.h"
#include "common/tb.h"
#include <math.h>
#include <stdint.h>

/* deterministic data: splitmix64, uniform in (0,1), standard normal (Box-Muller) */
static uint64_t rng_state;
static uint64_t splitmix64(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double uniform(void) { return ((double)(splitmix64() >> 11) + 0.5) / 9007199254740992.0; }
static double normal(void)
{
    return sqrt(-2 * log(uniform())) * cos(6.283185307179586 * uniform());
}

/* create or fail the case */
static tb_stop *make(const char *spec)
{
    tb_stop *c = NULL;
    char msg[TB_MSG_LEN] = "";
    int rc = tb_stop_create(spec, &c, msg, sizeof msg);
    if (rc != TB_OK) printf("  create '%s': %s\n", spec, msg);
    return c;
}

/* feed samples from gen() until done (or limit); returns the samples added */
static long run(tb_stop *c, double (*gen)(void), double ms_per_wall, char *why, size_t len,
                long limit)
{
    double wall = 0;
    for (long i = 1; i <= limit; i++) {
        double x = gen();
        tb_stop_add(c, x);
        wall += x * ms_per_wall / 1e3;
        if (tb_stop_done(c, wall, why, len)) return i;
    }
    return -1;
}

static double g_mean = 1.0, g_rel = 0.0;
static double gen_normal(void) { return g_mean * (1 + g_rel * normal()); }
static double gen_outliers(void)    /* 1 ms, 3% uniform jitter, 5% of samples 2-4x slower */
{
    double x = 1.0 + 0.03 * (uniform() - 0.5);
    return uniform() < 0.05 ? x * (2 + 2 * uniform()) : x;
}

static int expect_error(const char *spec, const char *needle)
{
    tb_stop *c = (tb_stop *)1;
    char msg[TB_MSG_LEN] = "";
    int rc = tb_stop_create(spec, &c, msg, sizeof msg);
    int ok = rc == TB_EUSAGE && c == NULL && strstr(msg, needle) != NULL;
    if (!ok) printf("  spec '%s': rc %d, msg '%s', want '%s'\n", spec, rc, msg, needle);
    return ok;
}

int main(void)
{
    char buf[512], why[256];

    /* ---- 1: parsing and the canonical spec ---- */
    TB_CASE("stop-1.1", "stdrel with its defaults") {
        tb_stop *c = make("stdrel");
        TB_CHECK(c != NULL);
        if (c) {
            TB_CHECK(strcmp(tb_stop_name(c), "stdrel") == 0);
            tb_stop_spec(c, buf, sizeof buf);
            TB_CHECK(strcmp(buf, "stdrel:max-noise=0.005,min-time=0.05,min-samples=10,"
                                 "window=16,settle=0.1,max-time=1,max-samples=1000") == 0);
            tb_stop_free(c);
        }
    }
    TB_CASE("stop-1.2", "fixed with its defaults") {
        tb_stop *c = make("fixed");
        TB_CHECK(c != NULL);
        if (c) {
            TB_CHECK(strcmp(tb_stop_name(c), "fixed") == 0);
            tb_stop_spec(c, buf, sizeof buf);
            TB_CHECK(strcmp(buf, "fixed:samples=100,max-time=1,max-samples=1000") == 0);
            tb_stop_free(c);
        }
    }
    TB_CASE("stop-1.3", "parameters in any order come back in canonical order") {
        tb_stop *c = make("stdrel:max-samples=50,max-noise=0.01,min-samples=5,max-time=2.5");
        TB_CHECK(c != NULL);
        if (c) {
            tb_stop_spec(c, buf, sizeof buf);
            TB_CHECK(strcmp(buf, "stdrel:max-noise=0.01,min-time=0.05,min-samples=5,"
                                 "window=16,settle=0.1,max-time=2.5,max-samples=50") == 0);
            tb_stop_free(c);
        }
    }
    TB_CASE("stop-1.4", "the canonical spec reads back as the same criterion") {
        tb_stop *c = make("stdrel:max-noise=0.0012345678901234,min-time=0,settle=0.3333333333333333");
        TB_CHECK(c != NULL);
        if (c) {
            char again[512];
            tb_stop_spec(c, buf, sizeof buf);
            tb_stop *d = make(buf);
            TB_CHECK(d != NULL);
            if (d) {
                tb_stop_spec(d, again, sizeof again);
                TB_CHECK(strcmp(buf, again) == 0);
                TB_CHECK_STR_CONTAINS(buf, "max-noise=0.0012345678901234,");
                tb_stop_free(d);
            }
            tb_stop_free(c);
        }
    }
    TB_CASE("stop-1.5", "whole numbers may be written 1e3; a short buffer truncates") {
        tb_stop *c = make("fixed:samples=1e3");
        TB_CHECK(c != NULL);
        if (c) {
            tb_stop_spec(c, buf, sizeof buf);
            TB_CHECK_STR_CONTAINS(buf, "samples=1000,");
            char small[8];
            tb_stop_spec(c, small, sizeof small);
            TB_CHECK(strcmp(small, "fixed:s") == 0);
            tb_stop_free(c);
        }
    }

    /* ---- 2: every error message ---- */
    TB_CASE("stop-2.1", "unknown criterion names the name and the choices") {
        TB_CHECK(expect_error("stdev", "unknown stopping criterion 'stdev' (stdrel, fixed)"));
        TB_CHECK(expect_error("STDREL", "unknown stopping criterion 'STDREL'"));
        TB_CHECK(expect_error(":max-noise=1", "unknown stopping criterion ''"));
    }
    TB_CASE("stop-2.2", "empty or missing spec") {
        TB_CHECK(expect_error("", "empty stopping criterion (stdrel, fixed)"));
        TB_CHECK(expect_error(NULL, "empty stopping criterion"));
    }
    TB_CASE("stop-2.3", "unknown parameter names it, the criterion and the choices") {
        TB_CHECK(expect_error("stdrel:noise=0.1", "unknown parameter 'noise' for stdrel (max-noise, "
                              "min-time, min-samples, window, settle, max-time, max-samples)"));
        TB_CHECK(expect_error("fixed:max-noise=0.1",
                              "unknown parameter 'max-noise' for fixed (samples, max-time, max-samples)"));
    }
    TB_CASE("stop-2.4", "invalid values name the value and criterion:key") {
        static const struct { const char *spec, *want; } bad[] = {
            { "stdrel:max-noise=abc", "invalid value 'abc' for stdrel:max-noise (want a number > 0)" },
            { "stdrel:max-noise=0", "invalid value '0' for stdrel:max-noise" },
            { "stdrel:max-noise=-1", "invalid value '-1' for stdrel:max-noise" },
            { "stdrel:max-noise=nan", "invalid value 'nan' for stdrel:max-noise" },
            { "stdrel:max-noise=inf", "invalid value 'inf' for stdrel:max-noise" },
            { "stdrel:max-noise=", "invalid value '' for stdrel:max-noise" },
            { "stdrel:max-noise= 1", "invalid value ' 1' for stdrel:max-noise" },
            { "stdrel:max-noise=0.1x", "invalid value '0.1x' for stdrel:max-noise" },
            { "stdrel:min-time=-0.1", "invalid value '-0.1' for stdrel:min-time" },
            { "stdrel:min-samples=2.5", "invalid value '2.5' for stdrel:min-samples (want a whole number >= 1)" },
            { "stdrel:min-samples=0", "invalid value '0' for stdrel:min-samples" },
            { "stdrel:window=1", "invalid value '1' for stdrel:window (want a whole number from 2 to 4096)" },
            { "stdrel:window=5000", "invalid value '5000' for stdrel:window" },
            { "stdrel:settle=0", "invalid value '0' for stdrel:settle" },
            { "stdrel:settle=1.5", "invalid value '1.5' for stdrel:settle" },
            { "stdrel:max-time=0", "invalid value '0' for stdrel:max-time" },
            { "stdrel:max-samples=0", "invalid value '0' for stdrel:max-samples" },
            { "fixed:samples=0", "invalid value '0' for fixed:samples" },
            { "fixed:samples=-5", "invalid value '-5' for fixed:samples" },
            { "fixed:max-time=1e999", "invalid value '1e999' for fixed:max-time" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            TB_CHECK(expect_error(bad[i].spec, bad[i].want));
    }
    TB_CASE("stop-2.5", "a parameter without '=' or an empty item") {
        TB_CHECK(expect_error("stdrel:max-noise", "invalid parameter 'max-noise' for stdrel (want key=value)"));
        TB_CHECK(expect_error("stdrel:", "invalid parameter '' for stdrel"));
        TB_CHECK(expect_error("stdrel:max-noise=0.1,", "invalid parameter '' for stdrel"));
        TB_CHECK(expect_error("stdrel:=0.1", "invalid parameter '=0.1' for stdrel"));
        TB_CHECK(expect_error("fixed:samples=5,,max-time=1", "invalid parameter '' for fixed"));
    }
    TB_CASE("stop-2.6", "a parameter given twice") {
        TB_CHECK(expect_error("stdrel:settle=0.2,settle=0.3", "parameter 'settle' given twice for stdrel"));
    }
    TB_CASE("stop-2.7", "parameters that contradict each other") {
        TB_CHECK(expect_error("stdrel:min-samples=20,max-samples=10",
                              "min-samples 20 exceeds max-samples 10 for stdrel"));
        TB_CHECK(expect_error("fixed:samples=2000", "samples 2000 exceeds max-samples 1000 for fixed"));
        tb_stop *c = make("fixed:samples=2000,max-samples=2000");
        TB_CHECK(c != NULL);
        tb_stop_free(c);
    }
    TB_CASE("stop-2.8", "a NULL message buffer is fine") {
        tb_stop *c = (tb_stop *)1;
        TB_CHECK(tb_stop_create("nope", &c, NULL, 0) == TB_EUSAGE && c == NULL);
        tb_stop_free(NULL);
    }

    /* ---- 3: stdrel ---- */
    TB_CASE("stop-3.1", "low noise: stops on the noise target once min-time is reached") {
        tb_stop *c = make("stdrel");
        rng_state = 1;
        g_mean = 1.0, g_rel = 0.001;   /* 1 ms samples: min-time 0.05 s needs 50 of them */
        long n = c ? run(c, gen_normal, 1.0, why, sizeof why, 2000) : -1;
        TB_CHECK(n == 50);
        TB_CHECK_STR_CONTAINS(why, "stdrel: noise ");
        TB_CHECK_STR_CONTAINS(why, "% <= 0.50% after 50 samples");
        tb_stop_free(c);
        c = make("stdrel");
        g_mean = 10.0;                 /* 10 ms samples: min-samples (10) comes first */
        n = c ? run(c, gen_normal, 1.0, why, sizeof why, 2000) : -1;
        TB_CHECK(n == 10);
        TB_CHECK_STR_CONTAINS(why, "after 10 samples");
        tb_stop_free(c);
    }
    TB_CASE("stop-3.2", "a constant sequence: noise 0 at min-samples") {
        tb_stop *c = make("stdrel:min-time=0");
        g_mean = 2.0, g_rel = 0;
        long n = c ? run(c, gen_normal, 1.0, why, sizeof why, 2000) : -1;
        TB_CHECK(n == 10);
        TB_CHECK(strcmp(why, "stdrel: noise 0.00% <= 0.50% after 10 samples") == 0);
        tb_stop_free(c);
    }
    TB_CASE("stop-3.3", "a noisy stationary sequence settles long before max-samples") {
        /* 10% relative stdev: the 0.5% target would need ~400 samples; 20% would need ~1600,
         * more than max-samples. Both must settle, well before 1000. */
        double rels[] = { 0.10, 0.20 };
        for (int r = 0; r < 2; r++)
            for (uint64_t seed = 1; seed <= 20; seed++) {
                tb_stop *c = make("stdrel");
                rng_state = seed * 1000003;
                g_mean = 1.0, g_rel = rels[r];
                long n = c ? run(c, gen_normal, 1.0, why, sizeof why, 5000) : -1;
                if (!(n > 16 && n < 400) || !strstr(why, "settled")) {
                    printf("  rel %.2f seed %d: n %ld, %s\n", rels[r], (int)seed, n, why);
                    TB_CHECK(!"settled between 17 and 400 samples");
                }
                if (seed == 1) printf("  rel %.2f seed 1: %s\n", rels[r], why);
                tb_stop_free(c);
            }
    }
    TB_CASE("stop-3.4", "heavy outliers settle too, and say so") {
        tb_stop *c = make("stdrel");
        rng_state = 7;
        long n = c ? run(c, gen_outliers, 1.0, why, sizeof why, 5000) : -1;
        printf("  outliers: %s\n", why);
        TB_CHECK(n > 16 && n < 1000);
        TB_CHECK_STR_CONTAINS(why, "stdrel: noise settled at ");
        TB_CHECK_STR_CONTAINS(why, "(spread ");
        tb_stop_free(c);
    }
    TB_CASE("stop-3.5", "never stops before min-samples") {
        tb_stop *c = make("stdrel:min-samples=30,min-time=0");
        strcpy(why, "untouched");
        for (int i = 1; c && i <= 30; i++) {
            tb_stop_add(c, 5.0);
            int done = tb_stop_done(c, 0.01, why, sizeof why);
            if (i < 30) TB_CHECK(!done);
            else TB_CHECK(done);
            if (i == 29) TB_CHECK(strcmp(why, "untouched") == 0);   /* not done: why untouched */
        }
        TB_CHECK_STR_CONTAINS(why, "after 30 samples");
        tb_stop_free(c);
        /* the settle rule waits for min-samples too */
        c = make("stdrel:min-samples=300");
        rng_state = 3;
        g_mean = 1.0, g_rel = 0.2;
        long n = c ? run(c, gen_normal, 1.0, why, sizeof why, 5000) : -1;
        TB_CHECK(n >= 300);
        tb_stop_free(c);
    }
    TB_CASE("stop-3.6", "never stops before min-time of accumulated sample time") {
        tb_stop *c = make("stdrel:min-time=0.05");   /* 0.125 ms samples: 400 of them */
        for (int i = 1; c && i <= 400; i++) {
            tb_stop_add(c, 0.125);
            int done = tb_stop_done(c, 0.0, why, sizeof why);
            if (i < 400) TB_CHECK(!done);
            else TB_CHECK(done);
        }
        TB_CHECK_STR_CONTAINS(why, "after 400 samples");
        tb_stop_free(c);
    }
    TB_CASE("stop-3.7", "the settle rule looks at the last `window` additions") {
        tb_stop *c = make("stdrel:window=64,min-samples=2,min-time=0");
        rng_state = 11;
        g_mean = 1.0, g_rel = 0.2;
        long n = c ? run(c, gen_normal, 1.0, why, sizeof why, 5000) : -1;
        TB_CHECK(n >= 66);   /* 65 spreads, the first one after the second sample */
        TB_CHECK_STR_CONTAINS(why, "settled");
        tb_stop_free(c);
    }
    TB_CASE("stop-3.8", "non-finite and negative samples stay out of the statistics") {
        tb_stop *c = make("stdrel:min-time=0");
        for (int i = 0; c && i < 10; i++) {
            tb_stop_add(c, 3.0);
            if (i == 4) tb_stop_add(c, NAN), tb_stop_add(c, -1.0), tb_stop_add(c, INFINITY);
            TB_CHECK(tb_stop_done(c, 0, why, sizeof why) == (i == 9));
        }
        TB_CHECK(strcmp(why, "stdrel: noise 0.00% <= 0.50% after 13 samples") == 0);
        tb_stop_free(c);
    }

    /* ---- 4: timeout and max samples ---- */
    TB_CASE("stop-4.1", "timeout names the wall time, the samples and the noise") {
        tb_stop *c = make("stdrel:settle=1e-9,max-time=0.5");
        rng_state = 5;
        g_mean = 1.0, g_rel = 0.2;
        for (int i = 0; c && i < 20; i++) {
            tb_stop_add(c, gen_normal());
            TB_CHECK(!tb_stop_done(c, 0.4, why, sizeof why));
        }
        TB_CHECK(c && tb_stop_done(c, 0.5, why, sizeof why));
        TB_CHECK_STR_CONTAINS(why, "timeout: 0.50 s after 20 samples, noise ");
        tb_stop_free(c);
    }
    TB_CASE("stop-4.2", "timeout wins over min-samples; a fixed timeout has no noise") {
        tb_stop *c = make("stdrel");
        tb_stop_add(c, 1.0);
        TB_CHECK(c && tb_stop_done(c, 1.0, why, sizeof why));
        TB_CHECK(strcmp(why, "timeout: 1.00 s after 1 samples") == 0);
        tb_stop_free(c);
        c = make("fixed:max-time=0.25");
        for (int i = 0; c && i < 10; i++) tb_stop_add(c, 1.0);
        TB_CHECK(c && tb_stop_done(c, 0.3, why, sizeof why));
        TB_CHECK(strcmp(why, "timeout: 0.30 s after 10 samples") == 0);
        tb_stop_free(c);
    }
    TB_CASE("stop-4.3", "a met target is reported even past the timeout") {
        tb_stop *c = make("stdrel:min-time=0");
        for (int i = 0; c && i < 10; i++) tb_stop_add(c, 1.0);
        TB_CHECK(c && tb_stop_done(c, 99.0, why, sizeof why));
        TB_CHECK_STR_CONTAINS(why, "stdrel: noise 0.00%");
        tb_stop_free(c);
    }
    TB_CASE("stop-4.4", "max samples ends an unsettled noisy run") {
        tb_stop *c = make("stdrel:settle=1e-9,max-samples=50");
        rng_state = 9;
        g_mean = 1.0, g_rel = 0.2;
        long n = c ? run(c, gen_normal, 0.0, why, sizeof why, 5000) : -1;
        TB_CHECK(n == 50);
        TB_CHECK(strcmp(why, "max samples: 50") == 0);
        tb_stop_free(c);
        c = make("stdrel:settle=1e-9");
        n = c ? run(c, gen_normal, 0.0, why, sizeof why, 5000) : -1;
        TB_CHECK(n == 1000);
        TB_CHECK(strcmp(why, "max samples: 1000") == 0);
        tb_stop_free(c);
    }

    TB_CASE("stop-4.5", "a batched sample counts its whole batch towards min-time (issue 28): "
                        "7.5 us shares of 512-launch batches stop by noise, not by timeout") {
        /* the default rule, wall time advancing as the batches would take it */
        tb_stop *c = make("stdrel");
        rng_state = 21;
        g_mean = 0.0075, g_rel = 0.0002;
        long n = 0;
        double wall = 0;
        while (c && n < 5000) {
            tb_stop_add_timed(c, gen_normal(), 0.0075 * 512);
            n++;
            wall += 0.0075 * 512 * 1e-3 * 1.05;
            if (tb_stop_done(c, wall, why, sizeof why)) break;
        }
        TB_CHECK(n >= 10 && n <= 20);
        TB_CHECK_STR_CONTAINS(why, "stdrel: noise");
        tb_stop_free(c);
        /* the same shares counted as bare samples need 6,667 of them: the 1 s timeout first */
        c = make("stdrel");
        n = 0;
        wall = 0;
        while (c && n < 5000) {
            tb_stop_add(c, gen_normal());
            n++;
            wall += 0.0075 * 512 * 1e-3 * 1.05;
            if (tb_stop_done(c, wall, why, sizeof why)) break;
        }
        TB_CHECK_STR_CONTAINS(why, "timeout");
        tb_stop_free(c);
    }

    /* ---- 5: fixed ---- */
    TB_CASE("stop-5.1", "fixed stops at exactly its count, whatever the noise or time") {
        tb_stop *c = make("fixed:samples=7");
        rng_state = 13;
        g_mean = 0.001, g_rel = 0.5;
        for (int i = 1; c && i <= 7; i++) {
            tb_stop_add(c, gen_normal());
            TB_CHECK(tb_stop_done(c, 0.0, why, sizeof why) == (i == 7));
        }
        TB_CHECK(strcmp(why, "fixed: 7 samples") == 0);
        tb_stop_free(c);
    }
    TB_CASE("stop-5.2", "fixed defaults to 100 and counts every sample added") {
        tb_stop *c = make("fixed");
        long n = 0;
        while (c && !tb_stop_done(c, 0.0, why, sizeof why) && n < 1000) tb_stop_add(c, n++ % 2 ? NAN : 1.0);
        TB_CHECK(n == 100);
        TB_CHECK(strcmp(why, "fixed: 100 samples") == 0);
        tb_stop_free(c);
    }
    return tb_test_done();
}
