/* store_sqlite.c - the server's storage on one SQLite file (see store.h), the default engine:
 * its own schema and migrations (PRAGMA user_version, each step in a transaction, as the CLI's
 * store), WAL, a busy timeout; bound parameters only. The only server file that includes
 * sqlite3.h. One server process per file: the per-token rate buckets and the boards'
 * generations live in this process (in the PostgreSQL engine, store_pg.c, in the database).
 *
 * Thread safety (store.h's contract) comes from a pool of connections, not from one shared
 * connection under a lock: every call borrows a connection that no other thread uses until it
 * is given back, so what SQLite keeps per connection (the error message, the rows changed) is
 * that call's own, and readers run side by side (WAL). A walk that calls back (fn) holds its
 * connection meanwhile; a callback that calls the store borrows another. Ids come from
 * INSERT ... RETURNING (SQLite 3.35), never from the connection's last insert id. Writes take
 * one more lock, in this process: SQLite lets one writer in at a time and makes the others
 * wait in its busy handler, which sleeps in steps of up to 100 ms (16 connections submitting at
 * once, wrk -c16, had a p99 of 0.7 s that way, against 40 ms queued here); the busy timeout is
 * left for writers in other processes (`token add`). */
#define _GNU_SOURCE
#include "store_int.h"
#include <sqlite3.h>
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_IDLE 16   /* connections kept open between calls; more are opened on demand, closed after */
#define GEN_SLOTS 256  /* GPU model names hashed into this many generations: two models sharing
                          one only drop each other's cached boards (wasted work, never stale) */
#define BUCKETS 1024   /* per-token rate buckets; a token beyond them shares the last (stricter) */

typedef struct sqlite_store {
    tbs_store base;
    char *path;
    pthread_mutex_t lock;   /* guards idle[] and n_idle */
    pthread_mutex_t write;  /* held around every write of this process */
    sqlite3 *idle[POOL_IDLE];
    size_t n_idle;
    pthread_mutex_t mem;    /* guards what this process keeps: gens, all, bucket */
    uint64_t gens[GEN_SLOTS], all;
    struct { int64_t token; double tokens, at; } bucket[BUCKETS];
} sqlite_store;

static const char *const migrations[] = {
    "CREATE TABLE tokens (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, hash TEXT NOT NULL "
    "UNIQUE, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), revoked_at TEXT);"
    "CREATE TABLE submissions (id INTEGER PRIMARY KEY, token_id INTEGER NOT NULL REFERENCES tokens(id), "
    "idem_key TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "gpu_name TEXT NOT NULL, document TEXT NOT NULL, UNIQUE (token_id, idem_key));"
    "PRAGMA user_version = 1;",
    /* 2: a GPU model's submissions (every leaderboard read, the list of models) without reading
     * every stored document */
    "CREATE INDEX submissions_by_gpu ON submissions (gpu_name, id);"
    "PRAGMA user_version = 2;",
};
#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])

/* the generation slot of a GPU model */
static size_t gen_slot(const char *gpu)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)gpu; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % GEN_SLOTS);
}

/* msg = "cannot WHAT: the connection's last error"; the connection is the caller's alone */
static int fail(sqlite3 *db, char *msg, size_t len, const char *what)
{
    snprintf(msg, len, "cannot %s: %s", what, db ? sqlite3_errmsg(db) : "no database");
    return -1;
}

/* A new connection to path, set up as every one is (busy timeout, foreign keys), or NULL with
 * msg. NOMUTEX: one thread at a time uses a connection (the pool sees to it). */
static sqlite3 *open_connection(const char *path, char *msg, size_t len)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        fail(db, msg, len, "open the database");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, 10000);
    if (sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK) {
        fail(db, msg, len, "set up the database connection");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* A connection for this call alone: an idle one, else a new one. NULL with msg. */
static sqlite3 *borrow(sqlite_store *s, char *msg, size_t len)
{
    sqlite3 *db = NULL;
    pthread_mutex_lock(&s->lock);
    if (s->n_idle) db = s->idle[--s->n_idle];
    pthread_mutex_unlock(&s->lock);
    return db ? db : open_connection(s->path, msg, len);
}

/* db back to the pool (closed when the pool is full) */
static void give(sqlite_store *s, sqlite3 *db)
{
    if (!db) return;
    pthread_mutex_lock(&s->lock);
    if (s->n_idle < POOL_IDLE) { s->idle[s->n_idle++] = db; db = NULL; }
    pthread_mutex_unlock(&s->lock);
    sqlite3_close(db);
}

/* the schema brought to N_MIGRATIONS on db; 0, or -1 with msg */
static int migrate(sqlite3 *db, const char *path, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (v < 0 || v > (int)N_MIGRATIONS) {
        snprintf(msg, len, "'%s' is not a tilebench-server database of a version this server knows", path);
        return -1;
    }
    if (v == (int)N_MIGRATIONS) return 0;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return fail(db, msg, len, "migrate");
    for (int i = v; i < (int)N_MIGRATIONS; i++)
        if (sqlite3_exec(db, migrations[i], NULL, NULL, NULL) != SQLITE_OK) {
            fail(db, msg, len, "migrate");
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
            return -1;
        }
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : fail(db, msg, len, "migrate");
}

static const tbs_engine engine;

int tbs_sqlite_open(const char *path, const tbs_store_opts *o, tbs_store **out, char *msg, size_t len)
{
    (void)o;
    *out = NULL;
    if (sqlite3_libversion_number() < 3035000) {   /* INSERT ... RETURNING */
        snprintf(msg, len, "SQLite 3.35 or newer is needed (this is %s)", sqlite3_libversion());
        return -1;
    }
    sqlite_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) { free(s); snprintf(msg, len, "out of memory"); return -1; }
    s->base.e = &engine;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->write, NULL);
    pthread_mutex_init(&s->mem, NULL);
    sqlite3 *db = open_connection(path, msg, len);
    if (!db) { s->base.e->close(&s->base); return -1; }
    sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    if (migrate(db, path, msg, len)) { sqlite3_close(db); s->base.e->close(&s->base); return -1; }
    give(s, db);
    *out = &s->base;
    return 0;
}

static void store_close(tbs_store *base)
{
    sqlite_store *s = (sqlite_store *)base;
    if (!s) return;
    for (size_t i = 0; i < s->n_idle; i++) sqlite3_close(s->idle[i]);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->write);
    pthread_mutex_destroy(&s->mem);
    free(s->path);
    free(s);
}

static int token_add(tbs_store *base, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->write);
    int ok = sqlite3_prepare_v2(db, "INSERT INTO tokens (name, hash) VALUES (?, ?) RETURNING id", -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, hash_hex, -1, SQLITE_TRANSIENT);
        ok = sqlite3_step(st) == SQLITE_ROW;
        if (ok) *id = sqlite3_column_int64(st, 0);
        ok = ok && sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write);
    int rc = ok ? 0 : fail(db, msg, len, "add the token (is the name taken?)");
    give(s, db);
    return rc;
}

static int token_find(tbs_store *base, const char *hash_hex, int64_t *id, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    *id = 0;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR;
    if (sqlite3_prepare_v2(db, "SELECT id FROM tokens WHERE hash = ? AND revoked_at IS NULL", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, hash_hex, -1, SQLITE_TRANSIENT);
        step = sqlite3_step(st);
        if (step == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    int rc = step == SQLITE_ROW || step == SQLITE_DONE ? 0 : fail(db, msg, len, "look the token up");
    give(s, db);
    return rc;
}

static int token_revoke(tbs_store *base, const char *name, int *revoked, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    *revoked = 0;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    pthread_mutex_lock(&s->write);
    int ok = sqlite3_prepare_v2(db, "UPDATE tokens SET revoked_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') "
                                    "WHERE name = ? AND revoked_at IS NULL RETURNING id", -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        int step;
        while ((step = sqlite3_step(st)) == SQLITE_ROW) ++*revoked;
        ok = step == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write);
    int rc = ok ? 0 : fail(db, msg, len, "revoke the token");
    give(s, db);
    return rc;
}

static int token_list(tbs_store *base, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR;
    if (sqlite3_prepare_v2(db, "SELECT id, name, created_at, coalesce(revoked_at, '') FROM tokens ORDER BY id",
                           -1, &st, NULL) == SQLITE_OK)
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            char line[512];
            const char *rv = (const char *)sqlite3_column_text(st, 3);
            snprintf(line, sizeof line, "%lld %s %s%s%s", (long long)sqlite3_column_int64(st, 0),
                     (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                     rv && *rv ? " revoked " : "", rv ? rv : "");
            fn(ctx, line);
        }
    sqlite3_finalize(st);
    int rc = step == SQLITE_DONE ? 0 : fail(db, msg, len, "list the tokens");
    give(s, db);
    return rc;
}

static int submission_put(tbs_store *base, int64_t token_id, const char *key, const char *gpu_name,
                       const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    *existed = 0;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    /* one statement, autocommit: the row is stored whole or not at all, and RETURNING names the
     * id of this very insert (none when the key was stored before: DO NOTHING) */
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR;
    pthread_mutex_lock(&s->write);
    if (sqlite3_prepare_v2(db, "INSERT INTO submissions (token_id, idem_key, gpu_name, document) VALUES (?, ?, ?, ?) "
                               "ON CONFLICT (token_id, idem_key) DO NOTHING RETURNING id", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, token_id);
        sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 3, gpu_name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 4, doc, (int)n, SQLITE_TRANSIENT);
        step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            *id = sqlite3_column_int64(st, 0);
            step = sqlite3_step(st) == SQLITE_DONE ? SQLITE_ROW : SQLITE_ERROR;
        }
    }
    sqlite3_finalize(st);
    pthread_mutex_unlock(&s->write);
    int rc = 0;
    if (step == SQLITE_DONE) {   /* a replay: the id stored the first time */
        *existed = 1;
        st = NULL;
        step = SQLITE_ERROR;
        if (sqlite3_prepare_v2(db, "SELECT id FROM submissions WHERE token_id = ? AND idem_key = ?", -1, &st, NULL) == SQLITE_OK) {
            sqlite3_bind_int64(st, 1, token_id);
            sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
            step = sqlite3_step(st);
            if (step == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        if (step != SQLITE_ROW) rc = fail(db, msg, len, "find the submission");
    } else if (step != SQLITE_ROW) {
        rc = fail(db, msg, len, "store the submission");
    } else {   /* stored (committed): its model's boards are stale from now on */
        pthread_mutex_lock(&s->mem);
        s->gens[gen_slot(gpu_name)]++;
        s->all++;
        pthread_mutex_unlock(&s->mem);
    }
    give(s, db);
    return rc;
}

static int board_generation(tbs_store *base, const char *gpu, uint64_t *gen, char *msg, size_t len)
{
    (void)msg; (void)len;
    sqlite_store *s = (sqlite_store *)base;
    pthread_mutex_lock(&s->mem);
    *gen = gpu ? s->gens[gen_slot(gpu)] : s->all;
    pthread_mutex_unlock(&s->mem);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* a token bucket per token, in this process: per_min tokens, refilled continuously */
static int rate_take(tbs_store *base, int64_t token_id, double per_min, int *ok, char *msg, size_t len)
{
    (void)msg; (void)len;
    sqlite_store *s = (sqlite_store *)base;
    pthread_mutex_lock(&s->mem);
    size_t i = 0;
    while (i < BUCKETS - 1 && s->bucket[i].token && s->bucket[i].token != token_id) i++;
    double t = now_s();
    if (s->bucket[i].token != token_id) { s->bucket[i].token = token_id; s->bucket[i].tokens = per_min; s->bucket[i].at = t; }
    s->bucket[i].tokens += (t - s->bucket[i].at) * per_min / 60.0;
    if (s->bucket[i].tokens > per_min) s->bucket[i].tokens = per_min;
    s->bucket[i].at = t;
    *ok = s->bucket[i].tokens >= 1.0;
    if (*ok) s->bucket[i].tokens -= 1.0;
    pthread_mutex_unlock(&s->mem);
    return 0;
}

static int submission_get(tbs_store *base, int64_t id, char **doc, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    *doc = NULL;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR, oom = 0;
    if (sqlite3_prepare_v2(db, "SELECT document FROM submissions WHERE id = ?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        step = sqlite3_step(st);
        if (step == SQLITE_ROW) oom = !(*doc = strdup((const char *)sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    int rc = oom ? (snprintf(msg, len, "out of memory"), -1)
                 : step == SQLITE_ROW || step == SQLITE_DONE ? 0 : fail(db, msg, len, "read the submission");
    give(s, db);
    return rc;
}

static int submissions_of_gpu(tbs_store *base, const char *gpu,
                           int (*fn)(void *ctx, int64_t id, const char *who, const char *at, const char *doc),
                           void *ctx, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR, stop = 0;
    if (sqlite3_prepare_v2(db, "SELECT s.id, t.name, s.created_at, s.document FROM submissions s "
                               "JOIN tokens t ON t.id = s.token_id WHERE s.gpu_name = ? ORDER BY s.id",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, gpu, -1, SQLITE_TRANSIENT);
        while (!stop && (step = sqlite3_step(st)) == SQLITE_ROW)
            stop = fn(ctx, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                      (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    int rc = stop || step == SQLITE_DONE ? 0 : fail(db, msg, len, "read the submissions");
    give(s, db);
    return rc;
}

static int gpu_models(tbs_store *base, int (*fn)(void *ctx, const char *gpu, int64_t submissions), void *ctx,
                   char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR, stop = 0;
    if (sqlite3_prepare_v2(db, "SELECT gpu_name, count(*) FROM submissions GROUP BY gpu_name ORDER BY gpu_name",
                           -1, &st, NULL) == SQLITE_OK)
        while (!stop && (step = sqlite3_step(st)) == SQLITE_ROW)
            stop = fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    int rc = stop || step == SQLITE_DONE ? 0 : fail(db, msg, len, "list the GPU models");
    give(s, db);
    return rc;
}

static int leaderboards_json(tbs_store *base, char **json, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    *json = NULL;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR;
    cJSON *a = cJSON_CreateArray();
    if (a && sqlite3_prepare_v2(db, "SELECT gpu_name, count(*) FROM submissions GROUP BY gpu_name ORDER BY gpu_name",
                                -1, &st, NULL) == SQLITE_OK)
        while ((step = sqlite3_step(st)) == SQLITE_ROW) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "gpu", (const char *)sqlite3_column_text(st, 0));
            cJSON_AddNumberToObject(o, "submissions", (double)sqlite3_column_int64(st, 1));
            cJSON_AddItemToArray(a, o);
        }
    sqlite3_finalize(st);
    int rc = step == SQLITE_DONE ? 0 : fail(db, msg, len, "list the leaderboards");
    if (!rc && !(*json = cJSON_PrintUnformatted(a))) { snprintf(msg, len, "out of memory"); rc = -1; }
    cJSON_Delete(a);
    give(s, db);
    return rc;
}

static int count(tbs_store *base, tbs_store_counts *n, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    sqlite3_stmt *st = NULL;
    int step = SQLITE_ERROR;
    if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM tokens), (SELECT count(*) FROM submissions)", -1, &st, NULL) == SQLITE_OK &&
        (step = sqlite3_step(st)) == SQLITE_ROW) {
        n->tokens = sqlite3_column_int64(st, 0);
        n->submissions = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    int rc = step == SQLITE_ROW ? 0 : fail(db, msg, len, "count the rows");
    give(s, db);
    return rc;
}

/* every token, then every submission, by id, in one read transaction (one snapshot: WAL) */
static int dump(tbs_store *base, int (*token)(void *ctx, const tbs_token_row *r),
                int (*sub)(void *ctx, const tbs_sub_row *r), void *ctx, char *msg, size_t len)
{
    sqlite_store *s = (sqlite_store *)base;
    sqlite3 *db = borrow(s, msg, len);
    if (!db) return -1;
    int rc = 0, step = SQLITE_DONE;
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) { rc = fail(db, msg, len, "read the database"); give(s, db); return rc; }
    if (sqlite3_prepare_v2(db, "SELECT id, name, hash, created_at, revoked_at FROM tokens ORDER BY id", -1, &st, NULL) != SQLITE_OK)
        step = SQLITE_ERROR;
    while (!rc && step != SQLITE_ERROR && (step = sqlite3_step(st)) == SQLITE_ROW) {
        tbs_token_row r = { sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                            (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
                            (const char *)sqlite3_column_text(st, 4) };
        rc = token(ctx, &r);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (!rc && step != SQLITE_DONE) rc = fail(db, msg, len, "read the tokens");
    if (!rc && sqlite3_prepare_v2(db, "SELECT id, token_id, idem_key, created_at, gpu_name, document FROM submissions ORDER BY id",
                                  -1, &st, NULL) != SQLITE_OK)
        rc = fail(db, msg, len, "read the submissions");
    while (!rc && (step = sqlite3_step(st)) == SQLITE_ROW) {
        tbs_sub_row r = { sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), (const char *)sqlite3_column_text(st, 2),
                          (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
                          (const char *)sqlite3_column_text(st, 5) };
        rc = sub(ctx, &r);
    }
    if (!rc && step != SQLITE_DONE) rc = fail(db, msg, len, "read the submissions");
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    give(s, db);
    return rc;
}

static const tbs_engine engine = {
    .name = "SQLite", .close = store_close, .token_add = token_add, .token_find = token_find,
    .token_revoke = token_revoke, .token_list = token_list, .rate_take = rate_take,
    .submission_put = submission_put, .board_generation = board_generation, .submission_get = submission_get,
    .submissions_of_gpu = submissions_of_gpu, .gpu_models = gpu_models, .leaderboards_json = leaderboards_json,
    .count = count, .dump = dump,   /* a copy's source only: copy-db goes from SQLite to PostgreSQL */
};
