/* store.c - the storage seam's dispatcher (store.h): picks the engine from the --db argument
 * (a postgresql:// or postgres:// URI is PostgreSQL, store_pg.c; anything else an SQLite file,
 * store_sqlite.c) and hands every call to it; and copy-db's copy, which walks one engine's rows
 * into the other's transaction. Knows no SQL. */
#include "store_int.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

int tbs_store_is_postgres(const char *db)
{
    return db && (!strncasecmp(db, "postgresql://", 13) || !strncasecmp(db, "postgres://", 11));
}

int tbs_store_open(const char *db, const tbs_store_opts *opts, tbs_store **out, char *msg, size_t len)
{
    static const tbs_store_opts none = { 0 };
    *out = NULL;
    return tbs_store_is_postgres(db) ? tbs_pg_open(db, opts ? opts : &none, out, msg, len)
                                     : tbs_sqlite_open(db, opts ? opts : &none, out, msg, len);
}

void tbs_store_close(tbs_store *s) { if (s) s->e->close(s); }
const char *tbs_store_engine(const tbs_store *s) { return s->e->name; }

int tbs_token_add(tbs_store *s, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len)
{ return s->e->token_add(s, name, hash_hex, id, msg, len); }
int tbs_token_find(tbs_store *s, const char *hash_hex, int64_t *id, char *msg, size_t len)
{ return s->e->token_find(s, hash_hex, id, msg, len); }
int tbs_token_revoke(tbs_store *s, const char *name, int *revoked, char *msg, size_t len)
{ return s->e->token_revoke(s, name, revoked, msg, len); }
int tbs_token_list(tbs_store *s, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len)
{ return s->e->token_list(s, fn, ctx, msg, len); }
int tbs_rate_take(tbs_store *s, int64_t token_id, double per_min, int *ok, char *msg, size_t len)
{
    if (per_min <= 0) { *ok = 1; return 0; }
    return s->e->rate_take(s, token_id, per_min, ok, msg, len);
}
int tbs_submission_put(tbs_store *s, int64_t token_id, const char *key, const char *gpu_name,
                       const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len)
{ return s->e->submission_put(s, token_id, key, gpu_name, doc, n, id, existed, msg, len); }
int tbs_board_generation(tbs_store *s, const char *gpu, uint64_t *gen, char *msg, size_t len)
{ return s->e->board_generation(s, gpu, gen, msg, len); }
int tbs_submission_get(tbs_store *s, int64_t id, char **doc, char *msg, size_t len)
{ return s->e->submission_get(s, id, doc, msg, len); }
int tbs_submissions_of_gpu(tbs_store *s, const char *gpu,
                           int (*fn)(void *ctx, int64_t id, const char *who, const char *at, const char *doc),
                           void *ctx, char *msg, size_t len)
{ return s->e->submissions_of_gpu(s, gpu, fn, ctx, msg, len); }
int tbs_gpu_models(tbs_store *s, int (*fn)(void *ctx, const char *gpu, int64_t submissions), void *ctx,
                   char *msg, size_t len)
{ return s->e->gpu_models(s, fn, ctx, msg, len); }
int tbs_leaderboards_json(tbs_store *s, char **json, char *msg, size_t len)
{ return s->e->leaderboards_json(s, json, msg, len); }
int tbs_store_count(tbs_store *s, tbs_store_counts *n, char *msg, size_t len)
{ return s->e->count(s, n, msg, len); }

/* ---- copy-db -------------------------------------------------------------------------------- */

typedef struct copy_ctx { tbs_store *to; char *msg; size_t len; } copy_ctx;

static int copy_token(void *c_, const tbs_token_row *r)
{
    copy_ctx *c = c_;
    return c->to->e->import_token(c->to, r, c->msg, c->len);
}

static int copy_sub(void *c_, const tbs_sub_row *r)
{
    copy_ctx *c = c_;
    return c->to->e->import_sub(c->to, r, c->msg, c->len);
}

int tbs_store_copy(tbs_store *from, tbs_store *to, char *msg, size_t len)
{
    if (!from->e->dump || !to->e->import_begin) {
        snprintf(msg, len, "copy-db copies an %s store into a %s one, not %s into %s", "SQLite", "PostgreSQL",
                 from->e->name, to->e->name);
        return -1;
    }
    int rc = to->e->import_begin(to, msg, len);
    if (rc) return rc;
    copy_ctx c = { to, msg, len };
    rc = from->e->dump(from, copy_token, copy_sub, &c, msg, len);
    char end[256];
    int rc2 = to->e->import_end(to, rc == 0, end, sizeof end);
    if (!rc && rc2) { snprintf(msg, len, "%s", end); rc = rc2; }
    return rc;
}
