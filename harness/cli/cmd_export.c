/* cmd_export.c - tilebench export: a run as JSON (cJSON) or CSV, to standard output or a
 * file (cli/output.h: never over the database, a temporary file renamed into place, devices
 * and FIFOs written in place, links followed). */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "report/export.h"
#include "report/submission.h"
#include "store/store.h"
#include "common/tb.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


static void help(void)
{
    printf("usage: tilebench export [--format json|csv|submission] [--db FILE] [--run ID] [--output FILE]\n"
           "\n"
           "Write every measurement of a run: variant (name, family, parameters, file SHA-256),\n"
           "problem, status and disposition, validation figures, timing statistics and (JSON)\n"
           "every sample. CSV leaves the time and rate columns of rows that were not timed empty.\n"
           "\n"
           "  --format F     json, csv, or submission (a leaderboard submission: docs/submission.md);\n"
           "                 default: from --output's extension, .json or .csv\n"
           "  --db FILE      database (default " TB_DEFAULT_DB ")\n"
           "  --run ID       run (default: the newest)\n"
           "  --output FILE  write here ('-', the default: standard output); a regular file is\n"
           "                 replaced only once every byte is written, a device or FIFO is\n"
           "                 written in place, a symbolic link is followed; never the database\n");
}

int cmd_export(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "run", required_argument, 0, 'r' },
        { "format", required_argument, 0, 'f' }, { "output", required_argument, 0, 'o' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB, *format = NULL, *output = NULL;
    long long run = 0;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'r': if (tb_cli_int("--run", optarg, 1, INT64_MAX, &run)) return 2; break;
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("export", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'export'", argv[optind]);
    if (!format && output && strcmp(output, "-")) {
        const char *dot = strrchr(output, '.');
        if (dot && !strcmp(dot, ".json")) format = "json";
        else if (dot && !strcmp(dot, ".csv")) format = "csv";
        else return tb_cli_error("cannot tell the format of '%s' from its name: give --format json or "
                                 "--format csv", output);
    }
    if (!format) return tb_cli_error("export needs --format json or --format csv (or an --output "
                                     "ending in .json or .csv)");
    if (strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "submission"))
        return tb_cli_error("unknown export format '%s' (json, csv, submission)", format);
    tb_store *st;
    int64_t id;
    int rc = tb_cli_open_run(db, run, &st, &id);
    if (rc) return rc;
    char msg[TB_MSG_LEN];
    tb_out out;
    if ((rc = tb_out_open(&out, output, db, msg, sizeof msg))) {
        tb_store_close(st);
        return tb_cli_error("%s", msg);
    }
    rc = !strcmp(format, "submission") ? tb_submission_write(st, id, out.f, msg, sizeof msg)
                                       : tb_export(st, id, format, out.f, msg, sizeof msg);
    tb_store_close(st);
    if (rc) {
        tb_out_abort(&out);
        return tb_cli_fail(rc, msg);
    }
    if ((rc = tb_out_commit(&out, msg, sizeof msg))) return tb_cli_fail(rc, msg);
    return 0;
}
