/* cmd_check.c - tilebench check: is a database whole (store/store_check.c)? Prints each
 * problem on one line and exits 0 (whole), 1 (problems found) or 2 (cannot be read at all).
 * Reads only; no GPU needed. docs/schema.md says what to do with a damaged file. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "common/text.h"
#include "store/store.h"
#include "common/tb.h"
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench check [--db FILE]\n"
           "\n"
           "Check that a database is whole: SQLite's integrity check and foreign keys, and\n"
           "tilebench's own invariants (every timed measurement has all its samples, every run a\n"
           "known status). Prints one line per problem. Reads only. docs/schema.md (\"A damaged\n"
           "file\") says what to do with what it finds.\n"
           "\n"
           "  --db FILE   database (default " TB_DEFAULT_DB ")\n"
           "\n"
           "exit status: 0 whole, 1 problems found, 2 the file cannot be read as a database.\n");
}

static void report(void *ctx, const char *line)
{
    const char *db = ctx;
    char clean[4096];
    printf("%s: %s\n", db, tb_text_escape(line, clean, sizeof clean, 0));
}

int cmd_check(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    const char *db = TB_DEFAULT_DB;
    int rc0 = tb_cli_db_only(argc, argv, "check", help, &db);
    if (rc0) return rc0 < 0 ? 0 : rc0;
    char msg[TB_MSG_LEN];
    tb_store *st;
    if (tb_store_open(db, 0, 1, &st, msg, sizeof msg)) return tb_cli_error("%s", msg);
    size_t found = 0;
    int rc = tb_store_check(st, report, (void *)db, &found, msg, sizeof msg);
    tb_store_close(st);
    if (rc) return tb_cli_error("%s", msg);
    if (found) {
        fprintf(stderr, "tilebench: '%s' has %zu problem%s (see docs/schema.md, \"A damaged file\")\n",
                db, found, found == 1 ? "" : "s");
        return TB_EXIT_FAIL;
    }
    printf("%s: whole (integrity, foreign keys, samples, run status)\n", db);
    return 0;
}
