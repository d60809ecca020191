/* main.c - tilebench: argv to a subcommand (commands.h); --help and --version. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/git_sha.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "common/tb.h"
#include <errno.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: tilebench <command> [options]\n"
        "\n"
        "Find which variant of a GPU kernel is fastest, check it is correct, and keep the\n"
        "evidence in an SQLite file.\n"
        "\n"
        "commands:\n"
        "  list     list the variants the libraries hold (no GPU needed)\n"
        "  sweep    validate and time variants over shapes, into the database (GPU needed)\n"
        "  show     print a run's results table\n"
        "  export   write a run as JSON or CSV\n"
        "  report   write a run as an HTML page of plots (matplotlib): rankings, heat map,\n"
        "           roofline, design space, clocks; before/after with --compare\n"
        "  doctor   report the GPU, driver, NVML, CUPTI access, clocks and what is missing\n"
        "  gate     fail when a pull request's variants are slower or wrong: base and head\n"
        "           measured in one interleaved sweep, or the head against a baseline (GPU)\n"
        "  compare  two runs or baselines, variant by variant: faster, slower, new, invalid...\n"
        "  baseline save a run as a baseline file for a later gate or compare\n"
        "  migrate  bring a database written by an older tilebench to this schema\n"
        "  merge    combine databases (sweep shards) into one: each run once, every sample\n"
        "  search   model-guided search of a family's points: time only those that can win\n"
        "  check    is a database whole (integrity, foreign keys, every sample present)\n"
        "  submit   send a run to a leaderboard server (docs/submission.md)\n"
        "\n"
        "options:\n"
        "  -h, --help     this help; 'tilebench <command> --help' for a command's\n"
        "  --version      print the version\n"
        "\n"
        "examples:\n"
        "  tilebench sweep --shapes square\n"
        "  tilebench sweep --variants ./my_gemm.so --shapes 4096x4096x4096,smoke\n"
        "  tilebench show\n"
        "  tilebench export --format csv --output results.csv\n"
        "  tilebench gate --base base/variants --head head/variants --junit gate.xml\n");
}

/* Every subcommand, in the order --help lists them. */
static const struct {
    const char *name;
    int (*run)(int argc, char **argv, const tb_paths *paths);
} commands[] = {
    { "list", cmd_list }, { "sweep", cmd_sweep }, { "show", cmd_show },
    { "export", cmd_export }, { "report", cmd_report }, { "doctor", cmd_doctor }, { "gate", cmd_gate },
    { "compare", cmd_compare }, { "baseline", cmd_baseline }, { "migrate", cmd_migrate }, { "merge", cmd_merge }, { "search", cmd_search },
    { "check", cmd_check }, { "submit", cmd_submit },
};

/* The command's exit code; then standard output flushed, closed and checked, whatever the
 * command was (cli/output.h): a failed write is never a success. */
static int run(int argc, char **argv)
{
    tb_paths paths;
    tb_paths_init(&paths);
    if (argc < 2) {
        usage(stderr);
        return TB_EXIT_USAGE;
    }
    const char *c = argv[1];
    if (!strcmp(c, "-h") || !strcmp(c, "--help") || !strcmp(c, "help")) { usage(stdout); return 0; }
    if (!strcmp(c, "--version") || !strcmp(c, "version")) {
        printf("tilebench %s (git %s, variant ABI %u)\n", TB_VERSION, tb_git_sha[0] ? tb_git_sha : "unknown", 1u);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(c, commands[i].name)) return commands[i].run(argc - 1, argv + 1, &paths);
    if (c[0] == '-') return tb_cli_error("unknown option '%s' (see 'tilebench --help')", c);
    return tb_cli_error("unknown command '%s' (commands: list, sweep, show, export, report, doctor, gate, "
                        "compare, baseline, migrate, merge, search, check, submit)", c);
}

int main(int argc, char **argv)
{
    tb_out_guard_terminal();
    int rc = run(argc, argv);
    tb_cli_warn_flush();
    if (rc == TB_EXIT_PIPE) _exit(rc);   /* the reader is gone: nothing more to say or flush */
    int out = tb_out_close_stdout(rc != 0);
    if (out == TB_EXIT_PIPE) return TB_EXIT_PIPE;
    return rc ? rc : out;
}
