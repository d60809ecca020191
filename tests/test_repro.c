/* test_repro.c - server/repro.c: when another submitter's figure reproduces one (the same
 * library, variant and shape; medians inside each other's intervals widened by the drift
 * allowance), and how many independent submitters each figure counts; checked against a
 * brute-force count on random figures. */
#include "tb_test.h"
#include "../server/repro.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char *SHA_A = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
static const char *SHA_B = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

static tbs_figure fig(const char *who, double median, double lo, double hi)
{
    tbs_figure f = { who, SHA_A, "mma_sync_128x128", 4096, 4096, 4096, 1, "tn", "bf16,bf16,f32,bf16",
                     median, lo, hi, "4096x4096x4096" };
    return f;
}

/* the count by definition: distinct other submitters with an agreeing figure */
static size_t brute(const tbs_figure *f, size_t n, size_t i, double d)
{
    size_t c = 0;
    for (size_t j = 0; j < n; j++) {
        if (!tbs_repro_agree(&f[i], &f[j], d)) continue;
        int seen = 0;
        for (size_t k = 0; k < j && !seen; k++)
            seen = tbs_repro_agree(&f[i], &f[k], d) && !strcmp(f[k].submitter, f[j].submitter);
        c += !seen;
    }
    return c;
}

int main(void)
{
    const double d = TBS_REPRO_DRIFT;
    TB_CASE("repro-1.1", "another submitter's figure inside the widened interval agrees, both ways") {
        tbs_figure a = fig("alice", 1.00, 0.99, 1.01), b = fig("bob", 1.05, 1.04, 1.06);
        TB_CHECK(tbs_repro_agree(&a, &b, d));
        TB_CHECK(tbs_repro_agree(&b, &a, d));
        TB_CHECK(!tbs_repro_agree(&a, &b, 0.0));   /* without the allowance the intervals miss */
    }
    TB_CASE("repro-1.2", "one submitter never reproduces himself") {
        tbs_figure a = fig("alice", 1.00, 0.99, 1.01), b = fig("alice", 1.00, 0.99, 1.01);
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
    }
    TB_CASE("repro-1.3", "another library, or an unknown one, is not the same figure") {
        tbs_figure a = fig("alice", 1.0, 0.99, 1.01), b = fig("bob", 1.0, 0.99, 1.01);
        b.sha256 = SHA_B;
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        a.sha256 = b.sha256 = "unknown";
        TB_CHECK(!tbs_repro_same(&a, &b));
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
    }
    TB_CASE("repro-1.3b", "attention figures (m, n, k 0): another token is not the same figure (issue 33)") {
        tbs_figure a = fig("alice", 1.0, 0.99, 1.01), b = fig("bob", 1.0, 0.99, 1.01);
        a.m = a.n = a.k = b.m = b.n = b.k = 0;
        a.batch = b.batch = 4;
        a.layouts = b.layouts = "bhsd";
        a.token = "4x32x4096x4096x128:causal:hkv=8";
        b.token = "4x32x4096x4096x128:causal:hkv=8";
        TB_CHECK(tbs_repro_agree(&a, &b, d));
        b.token = "4x32x4096x4096x128:hkv=8";
        TB_CHECK(!tbs_repro_same(&a, &b));
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        size_t cnt[2];
        tbs_figure f[2] = { a, b };
        char msg[128];
        TB_CHECK(tbs_repro_count(f, 2, d, cnt, msg, sizeof msg) == 0 && cnt[0] == 0 && cnt[1] == 0);
    }
    TB_CASE("repro-1.4", "another variant, size, batch, layout or dtype is not the same figure") {
        tbs_figure a = fig("alice", 1.0, 0.99, 1.01), b;
        b = fig("bob", 1.0, 0.99, 1.01); TB_CHECK(tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); b.variant = "mma_sync_128x256"; TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); b.k = 4095; TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); b.batch = 2; TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); b.layouts = "nn"; TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); b.dtypes = "f16,f16,f32,f16"; TB_CHECK(!tbs_repro_agree(&a, &b, d));
    }
    TB_CASE("repro-1.5", "the edges of the widened interval, and one-sided agreement") {
        tbs_figure a = fig("alice", 1.0, 1.0, 1.0), b;
        b = fig("bob", 1.0 * (1 + d) * 0.999, 1.0 * (1 + d) * 0.999, 1.0 * (1 + d) * 0.999);
        TB_CHECK(tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0 * (1 + d) * 1.001, 1.0 * (1 + d) * 1.001, 1.0 * (1 + d) * 1.001);
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 0.95 * (1 - d), 0.95 * (1 - d), 0.95 * (1 - d));   /* 14.5 % faster */
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        /* b's wide interval holds a's median, but a's narrow one (widened) misses b's */
        a = fig("alice", 1.0, 0.999, 1.001);
        b = fig("bob", 1.2, 0.95, 1.5);
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        TB_CHECK(!tbs_repro_agree(&b, &a, d));
    }
    TB_CASE("repro-1.6", "a time that is not finite and positive agrees with nothing") {
        tbs_figure a = fig("alice", 1.0, 0.99, 1.01), b = fig("bob", NAN, 0.99, 1.01);
        TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.0, 1.01); TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, INFINITY); TB_CHECK(!tbs_repro_agree(&a, &b, d));
        b = fig("bob", 1.0, 0.99, 1.01); TB_CHECK(!tbs_repro_agree(&a, &b, NAN));
    }
    TB_CASE("repro-2.1", "a submitter's several agreeing submissions count once") {
        tbs_figure f[5] = { fig("alice", 1.0, 0.99, 1.01), fig("bob", 1.0, 0.99, 1.01),
                            fig("bob", 1.01, 1.0, 1.02), fig("carol", 1.02, 1.0, 1.03),
                            fig("dave", 2.0, 1.99, 2.01) };   /* dave: twice as slow, alone */
        size_t c[5] = { 9, 9, 9, 9, 9 };
        char msg[128];
        TB_CHECK(tbs_repro_count(f, 5, d, c, msg, sizeof msg) == 0);
        TB_CHECK(c[0] == 2);   /* bob (once) and carol */
        TB_CHECK(c[1] == 2 && c[2] == 2);   /* alice and carol */
        TB_CHECK(c[3] == 2);   /* alice and bob */
        TB_CHECK(c[4] == 0);   /* not reproduced */
    }
    TB_CASE("repro-2.2", "no figures: nothing to count, nothing written") {
        size_t c = 7;
        char msg[128];
        TB_CHECK(tbs_repro_count(NULL, 0, d, &c, msg, sizeof msg) == 0 && c == 7);
    }
    TB_CASE("repro-2.3", "3000 random figures: the grouped count equals the brute-force one") {
        enum { N = 3000 };
        static tbs_figure f[N];
        static size_t c[N];
        static const char *who[] = { "a", "b", "c", "d", "e" }, *var[] = { "v1", "v2" };
        srand(2026);
        for (size_t i = 0; i < N; i++) {
            double m = 1.0 + 0.3 * rand() / RAND_MAX, w = 0.05 * rand() / RAND_MAX;
            f[i] = fig(who[rand() % 5], m, m * (1 - w), m * (1 + w));
            f[i].variant = var[rand() % 2];
            f[i].m = 1024 << (rand() % 3);
            if (rand() % 7 == 0) f[i].sha256 = SHA_B;
        }
        char msg[128];
        TB_CHECK(tbs_repro_count(f, N, d, c, msg, sizeof msg) == 0);
        size_t wrong = 0, some = 0;
        for (size_t i = 0; i < N; i += 7) { wrong += c[i] != brute(f, N, i, d); some += c[i] > 0; }
        TB_CHECK(wrong == 0);
        TB_CHECK(some > 0);
    }
    return tb_test_done();
}
