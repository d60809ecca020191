/* store_check.c - tilebench check: is a database whole? SQLite's own integrity check, its
 * foreign keys, and tilebench's invariants (every timed measurement has all its samples; every
 * run's status is one tilebench writes). Reads only; reports each problem through a callback
 * (the store never prints). See store.h and docs/schema.md ("A damaged file"). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* as in every file of the store */
#endif
#include "store/store_int.h"
#include "store/store.h"
#include "common/tb.h"
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* Run sql (no parameters); each row's columns joined by ' ' (with prefix) is one problem,
 * except a single row "ok" (integrity_check's all-clear). */
static int problems_of(tb_store *s, const char *sql, const char *prefix, tb_store_check_fn fn,
                       void *ctx, size_t *found, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, "run a check");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        char line[1024];
        size_t at = (size_t)snprintf(line, sizeof line, "%s", prefix);
        for (int c = 0; c < sqlite3_column_count(st) && at < sizeof line; c++) {
            const unsigned char *v = sqlite3_column_text(st, c);
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%s", c ? " " : "",
                                   v ? (const char *)v : "NULL");
        }
        if (!strcmp(line + strlen(prefix), "ok")) continue;
        /* integrity_check puts several findings in one row, a line each */
        for (char *save = NULL, *l = strtok_r(line + strlen(prefix), "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
            char one[1100];
            snprintf(one, sizeof one, "%s%s", prefix, l);
            (*found)++;
            fn(ctx, one);
        }
    }
    /* a check that cannot finish on a damaged file is itself a finding, not the end */
    if (step != SQLITE_DONE) {
        char one[600];
        snprintf(one, sizeof one, "%s(could not finish: %s)", prefix, sqlite3_errmsg(s->db));
        (*found)++;
        fn(ctx, one);
    }
    sqlite3_finalize(st);
    (void)msg; (void)len;
    return TB_OK;
}

int tb_store_check(tb_store *s, tb_store_check_fn fn, void *ctx, size_t *found, char *msg,
                   size_t len)
{
    *found = 0;
    int rc = problems_of(s, "PRAGMA integrity_check(100)", "integrity: ", fn, ctx, found, msg, len);
    if (rc == TB_OK)
        rc = problems_of(s, "PRAGMA foreign_key_check", "foreign key: table ", fn, ctx, found, msg, len);
    if (rc == TB_OK)
        rc = problems_of(s,
            "SELECT 'measurement', m.id, 'has', (SELECT count(*) FROM samples x WHERE "
            "x.measurement_id = m.id), 'of its', m.n_samples, 'samples' FROM measurements m "
            "WHERE m.status = 'ok' AND m.disposition = 'passed' AND coalesce(m.n_samples, 0) != "
            "(SELECT count(*) FROM samples x WHERE x.measurement_id = m.id)",
            "tilebench: ", fn, ctx, found, msg, len);
    if (rc == TB_OK)
        rc = problems_of(s,
            "SELECT 'run', id, 'has the status', quote(status) FROM runs WHERE status NOT IN "
            "('running', 'complete', 'interrupted', 'failed')",
            "tilebench: ", fn, ctx, found, msg, len);
    return rc;
}
