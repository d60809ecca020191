/* cmd_baseline.c - tilebench baseline save: a stored run as a compact, versioned JSON file
 * (the environment's fingerprint, and per (variant, shape) status, median and up to 256
 * samples) that a later `tilebench gate --baseline` or `compare` reads back, when the base
 * cannot be rebuilt. No GPU needed. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "report/side.h"
#include "store/store.h"
#include "common/tb.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf(
"usage: tilebench baseline save [--db FILE] [--run ID] [--ns NAME] --output FILE\n"
"\n"
"Write a run as a baseline file: the GPU, driver, CUDA, cuBLAS and power limit it ran under,\n"
"and per (variant, shape) the status, the median, the sample count and the samples (at most\n"
"256; beyond, evenly spaced order statistics). `tilebench gate --baseline FILE` measures a\n"
"head and compares it with the file, each variant's time taken relative to a control\n"
"(cublaslt) measured in both runs (docs/method.md, \"Gating\").\n"
"\n"
"  --db FILE      database (default " TB_DEFAULT_DB ")\n"
"  --run ID       run (default: the newest)\n"
"  --ns NAME      only the variants of namespace NAME (e.g. head of a gate run), names\n"
"                 without it\n"
"  --output FILE  the baseline file ('-' standard output); required\n"
"\n"
"examples:\n"
"  tilebench sweep --shapes 4096x4096x4096,8192x8192x8192 --db main.db\n"
"  tilebench baseline save --db main.db --output baseline.json\n");
}

int cmd_baseline(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) { help(); return 0; }
    if (argc < 2 || strcmp(argv[1], "save"))
        return tb_cli_error("baseline takes the action 'save' (see 'tilebench baseline --help')");
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "run", required_argument, 0, 'r' },
        { "ns", required_argument, 0, 'n' }, { "output", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB, *out = NULL, *ns = NULL;
    long long run = 0;
    int c;
    opterr = 0;
    optind = 2;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'r': if (tb_cli_int("--run", optarg, 1, INT64_MAX, &run)) return 2; break;
        case 'n': ns = optarg; break;
        case 'o': out = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("baseline save", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'baseline save'", argv[optind]);
    if (!out) return tb_cli_error("baseline save needs --output FILE");
    tb_store *st;
    int64_t id;
    int rc = tb_cli_open_run(db, run, &st, &id);
    if (rc) return rc;
    char msg[TB_MSG_LEN];
    tb_side side;
    rc = tb_side_from_run(st, id, ns, db, &side, msg, sizeof msg);
    tb_store_close(st);
    if (rc) return tb_cli_error("%s", msg);
    if (!side.n) {
        tb_side_free(&side);
        return tb_cli_error("run %lld of '%s' has no results%s%s", (long long)id, db,
                            ns ? " in namespace " : "", ns ? ns : "");
    }
    if (!side.have_env)
        tb_cli_warn("run %lld of '%s' has no environment: the baseline cannot be checked against "
                    "the GPU that reads it", (long long)id, db);
    tb_out o;
    rc = tb_out_open(&o, out, db, msg, sizeof msg);
    if (!rc) {
        rc = tb_side_write_baseline(&side, o.f, msg, sizeof msg);
        if (rc) tb_out_abort(&o);
        else rc = tb_out_commit(&o, msg, sizeof msg);
    }
    size_t n = side.n;
    tb_side_free(&side);
    if (rc) return tb_cli_fail(rc, msg);
    fprintf(stderr, "baseline of run %lld (%zu results) written to %s\n", (long long)id, n, out);
    return 0;
}
