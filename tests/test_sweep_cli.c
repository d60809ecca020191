/* test_sweep_cli.c - cli/sweep_cli.c: the stopping spec made of sweep's shorthand flags, and the
 * options' JSON that a run stores and --resume reads back. No GPU. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "cli/sweep_cli.h"

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void defaults(sweep_cli *c)
{
    memset(c, 0, sizeof *c);
    c->o.target_rse = 0.005;
    c->o.min_samples = 10;
    c->o.max_samples = 1000;
    c->o.max_time_s = 1.0;
}

int main(void)
{
    sweep_cli c;
    TB_CASE("swcli-1.1", "stdrel gets every shorthand the user's spec does not name") {
        defaults(&c);
        tb_sweep_cli_stop_spec(&c);
        TB_CHECK(strcmp(c.o.stop, "stdrel:max-noise=0.005,min-samples=10,max-time=1,max-samples=1000") == 0);
        defaults(&c);
        snprintf(c.stop_user, sizeof c.stop_user, "stdrel:max-noise=0.01,max-time=3");
        c.o.target_rse = 0.02;   /* the spec's own value wins over the flag's */
        tb_sweep_cli_stop_spec(&c);
        TB_CHECK(strcmp(c.o.stop, "stdrel:max-noise=0.01,max-time=3,min-samples=10,max-samples=1000") == 0);
    }
    TB_CASE("swcli-1.2", "another rule gets only the parameters every rule has") {
        defaults(&c);
        snprintf(c.stop_user, sizeof c.stop_user, "fixed:samples=5");
        tb_sweep_cli_stop_spec(&c);
        TB_CHECK(strcmp(c.o.stop, "fixed:samples=5,max-time=1,max-samples=1000") == 0);
        defaults(&c);
        snprintf(c.stop_user, sizeof c.stop_user, "fixed");
        tb_sweep_cli_stop_spec(&c);
        TB_CHECK(strcmp(c.o.stop, "fixed:max-time=1,max-samples=1000") == 0);
    }
    TB_CASE("swcli-2.1", "the options survive the run's JSON, as --resume reads them") {
        sweep_cli a, b;
        defaults(&a);
        char *vp[] = { "/x/lib/a.so", "/x/lib/b.so" };
        a.inc[a.ninc++] = "wgmma*";
        a.exc[a.nexc++] = "*_nt";
        a.shp[a.nshp++] = "odd";
        a.shp[a.nshp++] = "1023x1025x1032";
        a.o.seed = 20261123ull * 1000003ull;   /* above 2^32, below 2^53 */
        a.o.timeout_s = 12.5;
        a.o.warmup = 7;
        a.o.trials = 4;
        a.o.alpha = 0.5;
        a.o.beta = -0.75;
        a.o.pad = 56;
        a.o.keep_worker = 1;
        a.o.pace = 1;
        snprintf(a.o.layout, sizeof a.o.layout, "tt");
        snprintf(a.o.dtype, sizeof a.o.dtype, "e4m3");
        snprintf(a.o.method, sizeof a.o.method, "stream");
        snprintf(a.o.l2, sizeof a.o.l2, "hot");
        snprintf(a.o.stop, sizeof a.o.stop, "fixed:samples=3");
        snprintf(a.o.metrics, sizeof a.o.metrics, "memory");
        snprintf(a.devices, sizeof a.devices, "0,1");
        a.shard_i = 3;
        a.shard_n = 8;
        char *js = tb_sweep_cli_options_json(&a, vp, 2);
        TB_CHECK(js != NULL);
        defaults(&b);
        TB_CHECK(js && tb_sweep_cli_options_from_json(js, &b) == 0);
        TB_CHECK(b.nvp == 2 && strcmp(b.vp[1], "/x/lib/b.so") == 0);
        TB_CHECK(b.ninc == 1 && strcmp(b.inc[0], "wgmma*") == 0 && b.nexc == 1 && strcmp(b.exc[0], "*_nt") == 0);
        TB_CHECK(b.nshp == 2 && strcmp(b.shp[1], "1023x1025x1032") == 0);
        TB_CHECK(b.o.seed == a.o.seed && b.o.timeout_s == 12.5 && b.o.warmup == 7 && b.o.trials == 4);
        TB_CHECK(b.o.alpha == 0.5 && b.o.beta == -0.75 && b.o.pad == 56 && b.o.keep_worker == 1 && b.o.pace == 1);
        TB_CHECK(strcmp(b.o.layout, "tt") == 0 && strcmp(b.o.dtype, "e4m3") == 0);
        TB_CHECK(strcmp(b.o.method, "stream") == 0 && strcmp(b.o.l2, "hot") == 0);
        TB_CHECK(strcmp(b.o.stop, "fixed:samples=3") == 0 && strcmp(b.o.metrics, "memory") == 0);
        TB_CHECK(strcmp(b.devices, "0,1") == 0 && b.shard_i == 3 && b.shard_n == 8);
        cJSON_free(js);
        for (size_t i = 0; i < b.nvp; i++) free(b.vp[i]);
        for (size_t i = 0; i < b.ninc; i++) free(b.inc[i]);
        for (size_t i = 0; i < b.nexc; i++) free(b.exc[i]);
        for (size_t i = 0; i < b.nshp; i++) free(b.shp[i]);
    }
    TB_CASE("swcli-2.2", "what is not a run's options is refused") {
        defaults(&c);
        TB_CHECK(tb_sweep_cli_options_from_json("not json", &c) == -1);
        defaults(&c);
        TB_CHECK(tb_sweep_cli_options_from_json("{\"shard\":\"9/8\"}", &c) == -1);
        defaults(&c);   /* an old run's options without the newer keys: their defaults */
        TB_CHECK(tb_sweep_cli_options_from_json("{\"layout\":\"tn\"}", &c) == 0);
        TB_CHECK(strcmp(c.o.dtype, "bf16") == 0 && strcmp(c.o.method, "auto") == 0 &&
                 strcmp(c.o.l2, "cold") == 0 && c.o.keep_worker == 0 && c.shard_n == 0);
    }
    return tb_test_done();
}
