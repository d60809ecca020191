/* test_shard.c - harness/driver/shard.c: --shard I/N parses or is refused with the value named;
 * for N from 1 to 17 and several shape lists (the shipped sets square, llm and odd, and
 * invented lists of 1 to 200 shapes, some of equal cost), the N shards cover every shape exactly
 * once, the partition is the same when computed again, and no shard's cost passes the LPT
 * bound (the mean plus the largest single shape). */
#define _GNU_SOURCE
#include "tb_test.h"
#include "driver/shard.h"
#include "driver/shapes.h"
#include "common/tb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* every shape in exactly one of the N shards, as the sweep selects them (owner == I) */
static int covers_once(const tb_shape_list *l, int n, char *why, size_t len)
{
    int *owner = malloc((l->n ? l->n : 1) * sizeof *owner), *again = malloc((l->n ? l->n : 1) * sizeof *again);
    int *hits = calloc(l->n ? l->n : 1, sizeof *hits);
    double *load = calloc((size_t)n, sizeof *load), total = 0, biggest = 0;
    if (tb_shard_assign(l, n, owner) != TB_OK || tb_shard_assign(l, n, again) != TB_OK) {
        snprintf(why, len, "tb_shard_assign failed");
        free(owner); free(again); free(hits); free(load);
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < n; i++)                 /* job i of n keeps the shapes it owns */
        for (size_t s = 0; s < l->n; s++)
            if (owner[s] == i) { hits[s]++; load[i] += tb_shard_cost(&l->v[s]); }
    for (size_t s = 0; s < l->n && ok; s++) {
        double c = tb_shard_cost(&l->v[s]);
        total += c;
        if (c > biggest) biggest = c;
        if (hits[s] != 1) { snprintf(why, len, "shape %zu covered %d times (N=%d)", s, hits[s], n); ok = 0; }
        else if (owner[s] != again[s]) { snprintf(why, len, "shape %zu: shard %d, then %d", s, owner[s], again[s]); ok = 0; }
    }
    for (int i = 0; i < n && ok; i++)
        if (load[i] > total / n + biggest + 1e-9) {
            snprintf(why, len, "shard %d of %d costs %.3f, more than mean %.3f + largest %.3f", i, n,
                     load[i], total / n, biggest);
            ok = 0;
        }
    free(owner); free(again); free(hits); free(load);
    return ok;
}

int main(int argc, char **argv)
{
    const char *sets = argc > 1 ? argv[1] : "results/shapes";
    char msg[TB_MSG_LEN], why[256];
    int i, n;
    TB_CASE("shard-1.1", "I/N parses for 0 <= I < N <= 4096") {
        TB_CHECK(tb_shard_parse("0/1", &i, &n, msg, sizeof msg) == TB_OK && i == 0 && n == 1);
        TB_CHECK(tb_shard_parse("16/17", &i, &n, msg, sizeof msg) == TB_OK && i == 16 && n == 17);
        TB_CHECK(tb_shard_parse("4095/4096", &i, &n, msg, sizeof msg) == TB_OK);
    }
    TB_CASE("shard-1.2", "anything else is refused, naming the value") {
        const char *bad[] = { "1/1", "3/2", "-1/4", "1/0", "0/4097", "1", "/4", "1/", "a/b", "1/2/3",
                              " 1/2", "1/2 ", "1.0/2", "0x1/2", "1//2", "99999999/99999999", "" };
        for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
            TB_CHECK(tb_shard_parse(bad[k], &i, &n, msg, sizeof msg) == TB_EUSAGE);
            TB_CHECK_STR_CONTAINS(msg, "for --shard (I/N");
        }
        TB_CHECK(tb_shard_parse("3/2", &i, &n, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "invalid value '3/2'");
    }
    TB_CASE("shard-2.1", "the shipped sets: every shape in exactly one shard, N = 1..17") {
        const char *names[] = { "square", "llm", "odd", "square,llm,odd", "attn", "llm,attn" };
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            tb_shape_list l = { 0 };
            TB_CHECK(tb_shapes_add(&l, names[k], sets, msg, sizeof msg) == TB_OK && l.n > 0);
            for (int nn = 1; nn <= 17; nn++) {
                int ok = covers_once(&l, nn, why, sizeof why);
                if (!ok) fprintf(stderr, "    %s: %s\n", names[k], why);
                TB_CHECK(ok);
            }
            tb_shapes_free(&l);
        }
    }
    TB_CASE("shard-2.2", "invented lists of 1 to 200 shapes, equal costs among them: the same") {
        const int sizes[] = { 1, 2, 3, 5, 16, 17, 18, 64, 200 };
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            tb_shape_list l = { 0 };
            char spec[32];
            for (int s = 0; s < sizes[k]; s++) {
                /* every fourth shape repeats an earlier one's cost (a transposed shape) */
                int a = 64 * (1 + s % 37), b = 64 * (1 + (s * 7) % 23), c = 64 * (1 + s / 4);
                if (s % 4 == 3) snprintf(spec, sizeof spec, "%dx%dx%d", b, a, c);
                else snprintf(spec, sizeof spec, "%dx%dx%d", a, b, c);
                TB_CHECK(tb_shapes_add(&l, spec, sets, msg, sizeof msg) == TB_OK);
            }
            for (int nn = 1; nn <= 17; nn++) {
                int ok = covers_once(&l, nn, why, sizeof why);
                if (!ok) fprintf(stderr, "    %d shapes: %s\n", sizes[k], why);
                TB_CHECK(ok);
            }
            tb_shapes_free(&l);
        }
    }
    TB_CASE("shard-2.3", "more shards than shapes: the spare shards own nothing, the rest one each") {
        tb_shape_list l = { 0 };
        TB_CHECK(tb_shapes_add(&l, "512x512x512,1024x1024x1024,2048x2048x2048", sets, msg, sizeof msg) == TB_OK);
        int owner[3];
        TB_CHECK(tb_shard_assign(&l, 5, owner) == TB_OK);
        TB_CHECK(owner[0] != owner[1] && owner[1] != owner[2] && owner[0] != owner[2]);
        TB_CHECK(owner[2] == 0);   /* the costliest shape goes to shard 0 */
        tb_shapes_free(&l);
    }
    TB_CASE("shard-2.4", "costs: 1 per shape plus 1 per TFLOP") {
        tb_shape s = { .m = 8192, .n = 8192, .k = 8192, .batch = 1, .op = TB_OP_GEMM };
        TB_CHECK(tb_shard_cost(&s) > 2.09 && tb_shard_cost(&s) < 2.1);
        s.batch = 2;
        TB_CHECK(tb_shard_cost(&s) > 3.19 && tb_shard_cost(&s) < 3.2);
    }
    return tb_test_done();
}
