/* cmd_merge.c - tilebench merge OUT.db IN.db...: the databases of independent sweep jobs
 * (shards) combined into one. Owns the command: its arguments, checking every input before
 * OUT is touched, one line per input and a total. The copy itself (identity by runs.uid, one
 * transaction per input, ids remapped) is the store's: store/store_merge.c. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "store/store.h"
#include "common/tb.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench merge OUT.db IN.db...\n"
           "\n"
           "Copy into OUT.db every run of each IN.db that OUT.db does not hold yet: the run, its\n"
           "environment, variants, measurements and every sample and metric, the problems they\n"
           "use (one row per problem), and calibration rows OUT.db has no equal of. A run is\n"
           "known by its uid (schema 5), so merging a file twice, or a file into itself,\n"
           "changes nothing. Runs get new ids in OUT.db. No GPU needed.\n"
           "\n"
           "OUT.db is created if missing and migrated if older. Every IN.db is checked before\n"
           "anything is written: it must be a tilebench database at schema version %d (an older\n"
           "one: run 'tilebench migrate --db IN.db' first; a newer one is refused). Inputs are\n"
           "opened read-only and never changed. Each input is merged in one transaction: a\n"
           "failure (exit 1) leaves nothing of that input, and inputs merged before it stay.\n"
           "Merge shards after their sweeps ended: a run already merged is not merged again,\n"
           "so one merged while it was still running stays as it was then.\n"
           "\n"
           "examples:\n"
           "  tilebench merge results/all.db shard-*.db\n"
           "  tilebench merge results/tilebench.db /scratch/job-42/tilebench.db\n",
           TB_SCHEMA_VERSION);
}

static const char *plural(long long n) { return n == 1 ? "" : "s"; }

/* "R runs (P already present), M measurements, S samples, K metrics, C calibrations" */
static void print_counts(const tb_merge_counts *c)
{
    printf("%lld run%s (%lld already present), %lld measurement%s, %lld sample%s, %lld metric%s, "
           "%lld calibration%s", c->runs, plural(c->runs), c->runs_present, c->measurements,
           plural(c->measurements), c->samples, plural(c->samples), c->metrics,
           plural(c->metrics), c->calibrations, plural(c->calibrations));
}

int cmd_merge(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    static const struct option opts[] = { { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') {
            help();
            return TB_EXIT_OK;
        }
        return tb_cli_bad_option("merge", argv, optind, optopt);
    }
    if (argc - optind < 2)
        return tb_cli_error("merge needs an output database and at least one input "
                            "(see 'tilebench merge --help')");
    const char *out = argv[optind];
    char **in = argv + optind + 1;
    int n = argc - optind - 1;

    /* every input first: a refused one leaves OUT as it was (not even created) */
    char msg[TB_MSG_LEN];
    for (int i = 0; i < n; i++) {
        int self;
        int rc = tb_store_merge_check(in[i], out, &self, msg, sizeof msg);
        if (rc) {
            tb_cli_error("%s", msg);
            return TB_EXIT_USAGE;
        }
    }
    tb_store *st;
    int rc = tb_store_open(out, 1, 0, &st, msg, sizeof msg);
    if (rc) {
        tb_cli_error("%s", msg);
        return tb_cli_exit_for(rc);
    }
    tb_merge_counts total = { 0 };
    int merged = 0;
    for (int i = 0; i < n; i++) {
        tb_merge_counts k;
        rc = tb_store_merge(st, in[i], &k, msg, sizeof msg);
        if (rc) {
            tb_cli_error("cannot merge '%s' (nothing of it was written; %d input%s before it "
                         "merged): %s", in[i], merged, merged == 1 ? "" : "s", msg);
            tb_store_close(st);
            return TB_EXIT_FAIL;
        }
        if (k.is_target) {
            printf("skipped %s: it is %s itself\n", in[i], out);
            continue;
        }
        printf("merged %s: ", in[i]);
        print_counts(&k);
        printf("\n");
        merged++;
        total.runs += k.runs;
        total.runs_present += k.runs_present;
        total.measurements += k.measurements;
        total.samples += k.samples;
        total.metrics += k.metrics;
        total.calibrations += k.calibrations;
    }
    tb_store_close(st);
    printf("total into %s from %d input%s: ", out, merged, merged == 1 ? "" : "s");
    print_counts(&total);
    printf("\n");
    return TB_EXIT_OK;
}
