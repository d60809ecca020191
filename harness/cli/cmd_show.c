/* cmd_show.c - tilebench show: a run's table from the database (no GPU needed). */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "report/export.h"
#include "report/show.h"
#include "store/store.h"
#include "common/tb.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench show [--db FILE] [--run ID|all] [--detail] [--metrics] [--format F]\n"
           "\n"
           "Print per shape: rank, variant, TFLOP/s, median time and its relative standard\n"
           "error, %% of cublaslt, %% of the GPU's peak at the measured SM clock, and status.\n"
           "Only variants that ran and passed validation are ranked.\n"
           "\n"
           "  --db FILE   database (default " TB_DEFAULT_DB ")\n"
           "  --run ID    run to show (default: the newest); 'all': every run of the file, oldest\n"
           "              first (the shards of a sweep after tilebench merge; table only)\n"
           "  --format F  table (default), json or csv: the run as export writes it, for scripts\n"
           "  --detail    full reasons, what each variant's setup chose, the file and its hash,\n"
           "              the extra figures (seeds, clocks, NVML, energy, hidden work), the\n"
           "              command that re-measures it and the ncu line that profiles exactly it\n"
           "              (--verbose is the same)\n"
           "  --metrics   each measurement's hardware counters and kernel resources (sweep --metrics);\n"
           "              with the DRAM counters (--metrics memory) also its arithmetic intensity,\n"
           "              DRAM bandwidth and position under the roofline measured by doctor --calibrate\n");
}

/* shared by show and export: open read-only and resolve --run (0 = newest) */
int cmd_show(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "run", required_argument, 0, 'r' },
        { "verbose", no_argument, 0, 'v' }, { "detail", no_argument, 0, 'v' },
        { "metrics", no_argument, 0, 'm' }, { "format", required_argument, 0, 'f' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB;
    long long run = 0;
    const char *format = "table";
    int verbose = 0, metrics = 0, all = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hv", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'r':
            if (!strcmp(optarg, "all")) { all = 1; break; }
            if (tb_cli_int("--run", optarg, 1, INT64_MAX, &run)) return 2;
            all = 0;
            break;
        case 'v': verbose = 1; break;
        case 'm': metrics = 1; break;
        case 'f': format = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("show", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'show'", argv[optind]);
    if (strcmp(format, "table") && strcmp(format, "json") && strcmp(format, "csv"))
        return tb_cli_error("unknown --format '%s' for 'show' (table, json, csv)", format);
    if (all && strcmp(format, "table"))
        return tb_cli_error("--run all prints the table; for --format %s export each run", format);
    tb_store *st;
    int64_t id;
    int rc = tb_cli_open_run(db, run, &st, &id);   /* the newest, with --run all */
    if (rc) return rc;
    char msg[TB_MSG_LEN];
    if (strcmp(format, "table")) rc = tb_export(st, id, format, stdout, msg, sizeof msg);
    else if (!all) rc = tb_show_run(st, id, stdout, verbose, metrics, msg, sizeof msg);
    else   /* ids of deleted or never-written runs are passed over */
        for (int64_t r = 1, shown = 0; rc == TB_OK && r <= id; r++) {
            tb_run_info *info = calloc(1, sizeof *info);
            int have = info && tb_store_run_get(st, r, info, msg, sizeof msg) == TB_OK;
            free(info);
            if (!have) continue;
            if (shown++) fputc('\n', stdout);
            rc = tb_show_run(st, r, stdout, verbose, metrics, msg, sizeof msg);
        }
    tb_store_close(st);
    if (rc) return tb_cli_fail(rc, msg);
    return 0;
}
