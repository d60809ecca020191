/* store_pg_import.c - copy-db's target on PostgreSQL (see store.h, tbs_store_copy): the
 * target's tables locked and checked empty, the rows inserted with their own ids, the id
 * sequences and the boards' generations moved past them, all in one transaction on one
 * connection, so a failed copy leaves the target as it was. */
#define _GNU_SOURCE
#include "store_pg_int.h"
#include <stdio.h>
#include <stdlib.h>

int pg_import_begin(tbs_store *base, char *msg, size_t len)
{
    pg_store *s = (pg_store *)base;
    int fresh;
    if (!(s->imp = pg_borrow(s, 0, &fresh, msg, len))) return TBS_STORE_UNAVAILABLE;
    PGconn *c = s->imp->c;
    PGresult *r = NULL;
    /* SHARE ROW EXCLUSIVE: no one writes a row meanwhile, and a second copy waits for this one */
    int rc = pg_exec_on(s, c, "BEGIN", 0, NULL, NULL, "begin the copy", msg, len);
    if (!rc) rc = pg_exec_on(s, c, "LOCK TABLE tokens, submissions IN SHARE ROW EXCLUSIVE MODE", 0, NULL, NULL,
                          "lock the target's tables", msg, len);
    if (!rc) rc = pg_exec_on(s, c, "SELECT (SELECT count(*) FROM tokens), (SELECT count(*) FROM submissions)", 0, NULL, &r,
                          "count the target's rows", msg, len);
    if (!rc && (pg_int_at(r, 0, 0) || pg_int_at(r, 0, 1))) {
        snprintf(msg, len, "the target database is not empty (%s tokens, %s submissions): copy-db copies into an empty one only",
                 PQgetvalue(r, 0, 0), PQgetvalue(r, 0, 1));
        rc = -1;
    }
    PQclear(r);
    if (!rc) {
        PGresult *p1 = PQprepare(c, "imp_token", "INSERT INTO tokens (id, name, hash, created_at, revoked_at) "
                                                 "VALUES ($1, $2, $3, $4, $5)", 5, NULL);
        PGresult *p2 = PQprepare(c, "imp_sub", "INSERT INTO submissions (id, token_id, idem_key, created_at, gpu_name, document) "
                                               "VALUES ($1, $2, $3, $4, $5, $6)", 6, NULL);
        if (PQresultStatus(p1) != PGRES_COMMAND_OK || PQresultStatus(p2) != PGRES_COMMAND_OK) {
            pg_say(s, msg, len, "prepare the copy", PQresultStatus(p1) != PGRES_COMMAND_OK ? PQresultErrorMessage(p1) : PQresultErrorMessage(p2));
            rc = -1;
        }
        PQclear(p1);
        PQclear(p2);
    }
    if (rc) {
        PQclear(PQexec(c, "ROLLBACK"));
        pg_give(s, s->imp, 1);
        s->imp = NULL;
    }
    return rc;
}

static int import_row(pg_store *s, const char *stmt, int n, const char *const *v, const char *what, char *msg, size_t len)
{
    PGresult *r = PQexecPrepared(s->imp->c, stmt, n, v, NULL, NULL, 0);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) pg_say(s, msg, len, what, PQresultErrorMessage(r)[0] ? PQresultErrorMessage(r) : PQerrorMessage(s->imp->c));
    int again = !ok && (pg_broken(s->imp->c, r) || pg_transient(r));
    PQclear(r);
    return ok ? 0 : again ? TBS_STORE_UNAVAILABLE : -1;
}

int pg_import_token(tbs_store *base, const tbs_token_row *t, char *msg, size_t len)
{
    char id[24], what[96];
    snprintf(id, sizeof id, "%lld", (long long)t->id);
    snprintf(what, sizeof what, "copy token %lld", (long long)t->id);
    const char *v[5] = { id, t->name, t->hash, t->created_at, t->revoked_at && *t->revoked_at ? t->revoked_at : NULL };
    return import_row((pg_store *)base, "imp_token", 5, v, what, msg, len);
}

int pg_import_sub(tbs_store *base, const tbs_sub_row *r, char *msg, size_t len)
{
    char id[24], tok[24], what[96];
    snprintf(id, sizeof id, "%lld", (long long)r->id);
    snprintf(tok, sizeof tok, "%lld", (long long)r->token_id);
    snprintf(what, sizeof what, "copy submission %lld", (long long)r->id);
    const char *v[6] = { id, tok, r->idem_key, r->created_at, r->gpu_name, r->doc };
    return import_row((pg_store *)base, "imp_sub", 6, v, what, msg, len);
}

int pg_import_end(tbs_store *base, int commit, char *msg, size_t len)
{
    pg_store *s = (pg_store *)base;
    if (!s->imp) return 0;
    PGconn *c = s->imp->c;
    int rc = 0;
    if (commit) {
        /* the next ids follow the copied ones; each model's generation moves past its rows */
        rc = pg_exec_on(s, c, "SELECT setval(pg_get_serial_sequence('tokens', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM tokens), false),"
                           " setval(pg_get_serial_sequence('submissions', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM submissions), false)",
                     0, NULL, NULL, "bring the id sequences past the copy", msg, len);
        if (!rc) rc = pg_exec_on(s, c, "INSERT INTO board_generations (gpu_name, generation) SELECT gpu_name, count(*) FROM submissions "
                                    "GROUP BY gpu_name ON CONFLICT (gpu_name) DO UPDATE SET generation = "
                                    "board_generations.generation + excluded.generation", 0, NULL, NULL,
                              "set the boards' generations", msg, len);
        if (!rc) rc = pg_exec_on(s, c, "COMMIT", 0, NULL, NULL, "commit the copy", msg, len);
    }
    if (!commit || rc) PQclear(PQexec(c, "ROLLBACK"));
    pg_give(s, s->imp, 1);   /* closed: its prepared statements go with it */
    s->imp = NULL;
    return rc;
}
