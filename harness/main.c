/* main.c - tilebench: argv to a subcommand, and the shared CLI helpers (cli.h). */
#define _GNU_SOURCE
#include "cli.h"
#include "tb.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tilebench: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return TB_EXIT_USAGE;
}

void tb_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("tilebench: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int tb_cli_exit_for(int code)
{
    switch (code) {
    case TB_OK: return TB_EXIT_OK;
    case TB_EUSAGE: case TB_EDB: case TB_ELOAD: case TB_ENOGPU: return TB_EXIT_USAGE;
    case TB_EINTR: return TB_EXIT_INTR;
    default: return TB_EXIT_FAIL;
    }
}

int tb_cli_double(const char *flag, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        tb_cli_error("invalid value '%s' for %s (want a number from %g to %g)", s, flag, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int tb_cli_int(const char *flag, const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        tb_cli_error("invalid value '%s' for %s (want an integer from %lld to %lld)", s, flag, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int tb_cli_bad_option(const char *cmd, char **argv, int optind_, int optopt_)
{
    const char *arg = argv[optind_ - 1];
    if (optopt_ && arg && arg[0] == '-' && arg[1] != '-')
        return tb_cli_error("unknown or incomplete option '-%c' for '%s' (see 'tilebench %s --help')",
                            optopt_, cmd, cmd);
    return tb_cli_error("unknown or incomplete option '%s' for '%s' (see 'tilebench %s --help')",
                        arg ? arg : "?", cmd, cmd);
}

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
        "  doctor   report the GPU, driver, NVML, CUPTI access, clocks and what is missing\n"
        "\n"
        "options:\n"
        "  -h, --help     this help; 'tilebench <command> --help' for a command's\n"
        "  --version      print the version\n"
        "\n"
        "examples:\n"
        "  tilebench sweep --shapes square\n"
        "  tilebench sweep --variants ./my_gemm.so --shapes 4096x4096x4096,smoke\n"
        "  tilebench show\n"
        "  tilebench export --format csv --output results.csv\n");
}

int main(int argc, char **argv)
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
        printf("tilebench %s (variant ABI %u)\n", TB_VERSION, 1u);
        return 0;
    }
    if (!strcmp(c, "list")) return cmd_list(argc - 1, argv + 1, &paths);
    if (!strcmp(c, "sweep")) return cmd_sweep(argc - 1, argv + 1, &paths);
    if (!strcmp(c, "show")) return cmd_show(argc - 1, argv + 1, &paths);
    if (!strcmp(c, "export")) return cmd_export(argc - 1, argv + 1, &paths);
    if (!strcmp(c, "doctor")) return cmd_doctor(argc - 1, argv + 1, &paths);
    if (c[0] == '-') return tb_cli_error("unknown option '%s' (see 'tilebench --help')", c);
    return tb_cli_error("unknown command '%s' (commands: list, sweep, show, export, doctor)", c);
}
