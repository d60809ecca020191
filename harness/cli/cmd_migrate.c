/* cmd_migrate.c - tilebench migrate: bring a database written by an older tilebench to this
 * one's schema, all steps in one transaction (whole or not at all). The commands that only
 * read (show, export, compare, baseline) never migrate: they send the user here. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "store/store.h"
#include "common/tb.h"
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench migrate [--db FILE]\n"
           "\n"
           "Bring a database written by an older tilebench to this one's schema (version %d),\n"
           "every step in one transaction: the file is migrated whole or left as it was. A file\n"
           "already at this version is left untouched. No GPU needed.\n"
           "\n"
           "  --db FILE   database (default " TB_DEFAULT_DB ")\n", TB_SCHEMA_VERSION);
}

int cmd_migrate(int argc, char **argv, const tb_paths *paths)
{
    (void)paths;
    const char *db = TB_DEFAULT_DB;
    int rc0 = tb_cli_db_only(argc, argv, "migrate", help, &db);
    if (rc0) return rc0 < 0 ? 0 : rc0;
    char msg[TB_MSG_LEN];
    tb_store *st;
    int rc = tb_store_open(db, 0, 0, &st, msg, sizeof msg);
    if (rc) {
        tb_cli_error("%s", msg);
        return tb_cli_exit_for(rc);
    }
    int from = tb_store_found_version(st);
    tb_store_close(st);
    if (from == TB_SCHEMA_VERSION) printf("'%s' is at schema version %d already\n", db, from);
    else printf("'%s' migrated from schema version %d to %d\n", db, from, TB_SCHEMA_VERSION);
    return 0;
}
