/* cli.c - what the subcommands share (cli.h): the one-line error and warning, the exit code
 * for a library error code, numbers parsed with the flag named in the message, the unknown-
 * option message, and opening a database at a run. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "common/tb.h"
#include "common/text.h"
#include "store/store.h"
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line on stderr: the message with every control character (newlines too) shown
 * escaped, whatever text from a variant or a database it carries (common/text.h). A warning
 * identical to the one before it is counted, not printed again: a flood (one per shape, one
 * per sample) becomes one line and a count (tb_cli_warn_flush). */
static char last_warning[2048 * 4];
static unsigned long repeats;

void tb_cli_warn_flush(void)
{
    if (repeats)
        fprintf(stderr, "tilebench: warning: (the warning above repeated %lu more time%s)\n", repeats,
                repeats == 1 ? "" : "s");
    repeats = 0;
    last_warning[0] = 0;
}

static void say(const char *what, const char *fmt, va_list ap)
{
    char raw[2048], clean[2048 * 4];
    vsnprintf(raw, sizeof raw, fmt, ap);
    tb_text_escape(raw, clean, sizeof clean, 0);
    int warning = !strcmp(what, "warning");
    if (warning && last_warning[0] && !strcmp(clean, last_warning)) {
        repeats++;
        return;
    }
    tb_cli_warn_flush();
    fprintf(stderr, "tilebench: %s: %s\n", what, clean);
    if (warning) snprintf(last_warning, sizeof last_warning, "%s", clean);
}

int tb_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("error", fmt, ap);
    va_end(ap);
    return TB_EXIT_USAGE;
}

void tb_cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say("warning", fmt, ap);
    va_end(ap);
}

int tb_cli_fail(int rc, const char *msg)
{
    if (rc == TB_EIO && errno == EPIPE) return 141;
    tb_cli_error("%s", msg);
    return tb_cli_exit_for(rc);
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

int tb_cli_dtype(const char *s, char *out, size_t len)
{
    if (strcmp(s, "bf16") && strcmp(s, "e4m3"))
        return tb_cli_error("invalid value '%s' for --dtype (bf16, e4m3)", s);
    snprintf(out, len, "%s", s);
    return 0;
}

int tb_cli_dtype_layout(const char *dtype, const char *layout)
{
    if (strcmp(dtype, "e4m3") == 0 && strcmp(layout, "tn") != 0)
        return tb_cli_error("--dtype e4m3 needs --layout tn (both operands K-major), not '%s'",
                            layout);
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

int tb_cli_push(char **v, size_t *n, size_t cap, char *s, const char *flag)
{
    if (*n >= cap)
        return tb_cli_error("more than %zu %s flags (use a glob, a directory or a shape file for "
                            "more)", cap, flag);
    v[(*n)++] = s;
    return 0;
}

int tb_cli_db_only(int argc, char **argv, const char *cmd, void (*help)(void), const char **db)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': *db = optarg; break;
        case 'h': help(); return -1;
        default: return tb_cli_bad_option(cmd, argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for '%s'", argv[optind], cmd);
    return 0;
}

int tb_cli_bad_option(const char *cmd, char **argv, int optind_, int optopt_)
{
    const char *arg = argv[optind_ - 1];
    /* a short option, alone or in a cluster (-xy, where argv[optind - 1] is still the word
     * before it); a long one is named as written */
    if (optopt_ > ' ' && optopt_ < 0x7f && !(arg && !strncmp(arg, "--", 2)))
        return tb_cli_error("unknown or incomplete option '-%c' for '%s' (see 'tilebench %s --help')",
                            optopt_, cmd, cmd);
    return tb_cli_error("unknown or incomplete option '%s' for '%s' (see 'tilebench %s --help')",
                        arg ? arg : "?", cmd, cmd);
}

int tb_cli_open_run(const char *db, long long want, tb_store **st, int64_t *run_id)
{
    char msg[TB_MSG_LEN];
    int rc = tb_store_open(db, 0, 1, st, msg, sizeof msg);
    if (rc) return tb_cli_error("%s", msg);
    if (want > 0) {
        tb_run_info *run = calloc(1, sizeof *run);
        rc = tb_store_run_get(*st, want, run, msg, sizeof msg);
        free(run);
        *run_id = want;
    } else {
        rc = tb_store_run_latest(*st, run_id, msg, sizeof msg);
    }
    if (rc) {
        tb_store_close(*st);
        *st = NULL;
        return tb_cli_error("%s", msg);
    }
    return 0;
}
