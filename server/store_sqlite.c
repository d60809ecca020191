/* store_sqlite.c - the server's storage on one SQLite file (see store.h): its own schema and
 * migrations (PRAGMA user_version, each step in a transaction, as the CLI's store), WAL, a
 * busy timeout; bound parameters only. The only server file that includes sqlite3.h. */
#define _GNU_SOURCE
#include "store.h"
#include <sqlite3.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tbs_store { sqlite3 *db; };

static const char *const migrations[] = {
    "CREATE TABLE tokens (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, hash TEXT NOT NULL "
    "UNIQUE, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), revoked_at TEXT);"
    "CREATE TABLE submissions (id INTEGER PRIMARY KEY, token_id INTEGER NOT NULL REFERENCES tokens(id), "
    "idem_key TEXT NOT NULL, created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ','now')), "
    "gpu_name TEXT NOT NULL, document TEXT NOT NULL, UNIQUE (token_id, idem_key));"
    "PRAGMA user_version = 1;",
};
#define N_MIGRATIONS (sizeof migrations / sizeof migrations[0])

static int fail(tbs_store *s, char *msg, size_t len, const char *what)
{
    snprintf(msg, len, "cannot %s: %s", what, s && s->db ? sqlite3_errmsg(s->db) : "no database");
    return -1;
}

int tbs_store_open(const char *path, tbs_store **out, char *msg, size_t len)
{
    *out = NULL;
    tbs_store *s = calloc(1, sizeof *s);
    if (!s) { snprintf(msg, len, "out of memory"); return -1; }
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        fail(s, msg, len, "open the database");
        tbs_store_close(s);
        return -1;
    }
    sqlite3_busy_timeout(s->db, 10000);
    sqlite3_exec(s->db, "PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON", NULL, NULL, NULL);
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (v < 0 || v > (int)N_MIGRATIONS) {
        snprintf(msg, len, "'%s' is not a tilebench-server database of a version this server knows", path);
        tbs_store_close(s);
        return -1;
    }
    if (v < (int)N_MIGRATIONS) {
        if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) { fail(s, msg, len, "migrate"); tbs_store_close(s); return -1; }
        for (int i = v; i < (int)N_MIGRATIONS; i++)
            if (sqlite3_exec(s->db, migrations[i], NULL, NULL, NULL) != SQLITE_OK) {
                fail(s, msg, len, "migrate");
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                tbs_store_close(s);
                return -1;
            }
        if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) { fail(s, msg, len, "migrate"); tbs_store_close(s); return -1; }
    }
    *out = s;
    return 0;
}

void tbs_store_close(tbs_store *s)
{
    if (!s) return;
    sqlite3_close(s->db);
    free(s);
}

int tbs_token_add(tbs_store *s, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "INSERT INTO tokens (name, hash) VALUES (?, ?)", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(st, 2, hash_hex, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) return fail(s, msg, len, "add the token (is the name taken?)");
    *id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

int tbs_token_find(tbs_store *s, const char *hash_hex, int64_t *id, char *msg, size_t len)
{
    *id = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM tokens WHERE hash = ? AND revoked_at IS NULL", -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "look the token up");
    sqlite3_bind_text(st, 1, hash_hex, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : fail(s, msg, len, "look the token up");
}

int tbs_token_revoke(tbs_store *s, const char *name, int *revoked, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "UPDATE tokens SET revoked_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') "
                                  "WHERE name = ? AND revoked_at IS NULL", -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "revoke the token");
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok) return fail(s, msg, len, "revoke the token");
    *revoked = sqlite3_changes(s->db);
    return 0;
}

int tbs_token_list(tbs_store *s, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT id, name, created_at, coalesce(revoked_at, '') FROM tokens ORDER BY id",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "list the tokens");
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        char line[512];
        const char *rv = (const char *)sqlite3_column_text(st, 3);
        snprintf(line, sizeof line, "%lld %s %s%s%s", (long long)sqlite3_column_int64(st, 0),
                 (const char *)sqlite3_column_text(st, 1), (const char *)sqlite3_column_text(st, 2),
                 rv && *rv ? " revoked " : "", rv ? rv : "");
        fn(ctx, line);
    }
    sqlite3_finalize(st);
    return step == SQLITE_DONE ? 0 : fail(s, msg, len, "list the tokens");
}

int tbs_submission_put(tbs_store *s, int64_t token_id, const char *key, const char *gpu_name,
                       const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len)
{
    *existed = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "INSERT INTO submissions (token_id, idem_key, gpu_name, document) "
                                  "VALUES (?, ?, ?, ?) ON CONFLICT (token_id, idem_key) DO NOTHING", -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "store the submission");
    sqlite3_bind_int64(st, 1, token_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, gpu_name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, doc, (int)n, SQLITE_TRANSIENT);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok) return fail(s, msg, len, "store the submission");
    if (sqlite3_changes(s->db) == 1) { *id = sqlite3_last_insert_rowid(s->db); return 0; }
    *existed = 1;   /* a replay: the id stored the first time */
    if (sqlite3_prepare_v2(s->db, "SELECT id FROM submissions WHERE token_id = ? AND idem_key = ?", -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "find the submission");
    sqlite3_bind_int64(st, 1, token_id);
    sqlite3_bind_text(st, 2, key, -1, SQLITE_TRANSIENT);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) *id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return step == SQLITE_ROW ? 0 : fail(s, msg, len, "find the submission");
}

int tbs_submission_get(tbs_store *s, int64_t id, char **doc, char *msg, size_t len)
{
    *doc = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT document FROM submissions WHERE id = ?", -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "read the submission");
    sqlite3_bind_int64(st, 1, id);
    int step = sqlite3_step(st);
    if (step == SQLITE_ROW) *doc = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return step == SQLITE_ROW || step == SQLITE_DONE ? 0 : fail(s, msg, len, "read the submission");
}

int tbs_submissions_of_gpu(tbs_store *s, const char *gpu,
                           int (*fn)(void *ctx, int64_t id, const char *who, const char *at, const char *doc),
                           void *ctx, char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT s.id, t.name, s.created_at, s.document FROM submissions s "
                                  "JOIN tokens t ON t.id = s.token_id WHERE s.gpu_name = ? ORDER BY s.id",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "read the submissions");
    sqlite3_bind_text(st, 1, gpu, -1, SQLITE_TRANSIENT);
    int step, stop = 0;
    while (!stop && (step = sqlite3_step(st)) == SQLITE_ROW)
        stop = fn(ctx, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                  (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
    return stop || step == SQLITE_DONE ? 0 : fail(s, msg, len, "read the submissions");
}

int tbs_gpu_models(tbs_store *s, int (*fn)(void *ctx, const char *gpu, int64_t submissions), void *ctx,
                   char *msg, size_t len)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT gpu_name, count(*) FROM submissions GROUP BY gpu_name ORDER BY gpu_name",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "list the GPU models");
    int step = SQLITE_DONE, stop = 0;
    while (!stop && (step = sqlite3_step(st)) == SQLITE_ROW)
        stop = fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1));
    sqlite3_finalize(st);
    return stop || step == SQLITE_DONE ? 0 : fail(s, msg, len, "list the GPU models");
}

int tbs_leaderboards_json(tbs_store *s, char **json, char *msg, size_t len)
{
    *json = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT gpu_name, count(*) FROM submissions GROUP BY gpu_name ORDER BY gpu_name",
                           -1, &st, NULL) != SQLITE_OK)
        return fail(s, msg, len, "list the leaderboards");
    cJSON *a = cJSON_CreateArray();
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "gpu", (const char *)sqlite3_column_text(st, 0));
        cJSON_AddNumberToObject(o, "submissions", (double)sqlite3_column_int64(st, 1));
        cJSON_AddItemToArray(a, o);
    }
    sqlite3_finalize(st);
    if (step == SQLITE_DONE) *json = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    return step == SQLITE_DONE && *json ? 0 : fail(s, msg, len, "list the leaderboards");
}
