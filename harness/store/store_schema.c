/* store_schema.c - the life of a connection (see store.h, docs/schema.md; the invariants of
 * the whole store are in store_int.h). Owns opening a file: the checks that run before
 * anything is written (inspect, against the tables each version must have), migrating (the
 * steps of store_migrations.c, in one transaction), the pragmas, closing.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* strcasecmp, mkdir */
#endif
#include "store/store_int.h"
#include "store/store.h"
#include "common/tb.h"

#include <sqlite3.h>

#include <errno.h>
#include <libgen.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>

/* PRAGMA application_id of a tilebench database: "tilb" in ASCII. */
#define TB_APPLICATION_ID 0x74696C62

#define BUSY_TIMEOUT_MS 10000

/* One integer from a constant PRAGMA. Returns the sqlite code; *v set on SQLITE_OK. */
static int pragma_int(sqlite3 *db, const char *pragma, int *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, pragma, -1, &st, NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
            *v = sqlite3_column_int(st, 0);
            rc = SQLITE_OK;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- open, check, migrate ----------------------------------------------------------------- */

/* create = 1: make the parent directory of path if it is missing (one level, like results/). */
static int make_parent(const char *path, char *msg, size_t len)
{
    char dir[TB_PATH_LEN];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return TB_OK;
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return tb_fail(msg, len, TB_EIO, "cannot create '%s': '%s' is not a directory",
                           path, dir);
        return TB_OK;
    }
    if (errno != ENOENT || (mkdir(dir, 0777) != 0 && errno != EEXIST))
        return tb_fail(msg, len, TB_EIO, "cannot create directory '%s': %s", dir,
                       strerror(errno));
    return TB_OK;
}

/* Reads (never writes) what is on disk and decides whether this build may use it.
 * Sets *version to the file's user_version. */
static int inspect(tb_store *s, int create, int target, int *version, char *msg, size_t len)
{
    /* Reading the schema reads page 1 and sqlite_master: a file that is not a database, or
     * is damaged at the root, fails here and not at the first write. */
    sqlite3_stmt *st = NULL;
    char foreign[TB_NAME_LEN] = "";
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT name FROM sqlite_master WHERE type = 'table' "
                                "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
                                -1, &st, NULL);
    int n_tables = 0;
    if (rc == SQLITE_OK) {
        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
            if (n_tables++ == 0) COL_TEXT(st, 0, foreign);
        if (rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        int code = sqlite3_errcode(s->db);
        int r;
        if (code == SQLITE_NOTADB)
            r = tb_fail(msg, len, TB_EDB, "'%s' is not a tilebench database: %s", s->path,
                        sqlite3_errmsg(s->db));
        else if (code == SQLITE_CORRUPT)
            r = tb_fail(msg, len, TB_EDB, "'%s' is damaged: %s", s->path,
                        sqlite3_errmsg(s->db));
        else
            r = tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                        sqlite3_errmsg(s->db));
        sqlite3_finalize(st);
        return r;
    }
    sqlite3_finalize(st);

    int uv = 0, app = 0;
    if (pragma_int(s->db, "PRAGMA user_version", &uv) != SQLITE_OK ||
        pragma_int(s->db, "PRAGMA application_id", &app) != SQLITE_OK)
        return tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                       sqlite3_errmsg(s->db));
    *version = uv;

    if (uv > TB_SCHEMA_VERSION)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' has schema version %d, newer than this tilebench (%d): "
                       "upgrade tilebench", s->path, uv, TB_SCHEMA_VERSION);
    if (uv < 0)
        return tb_fail(msg, len, TB_EDB, "'%s' is not a tilebench database: schema version %d",
                       s->path, uv);
    if (uv == 0) {
        /* Never write into someone else's database. */
        if (n_tables > 0)
            return tb_fail(msg, len, TB_EDB,
                           "'%s' is not a tilebench database: it has a table '%s' and no "
                           "tilebench schema", s->path, foreign);
        if (app != 0 && app != TB_APPLICATION_ID)
            return tb_fail(msg, len, TB_EDB,
                           "'%s' is not a tilebench database: application id 0x%08x",
                           s->path, (unsigned)app);
        if (!create || s->read_only)
            return tb_fail(msg, len, TB_EDB, "'%s' is empty: no tilebench database in it yet",
                           s->path);
        return TB_OK;
    }
    if (app != TB_APPLICATION_ID)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' is not a tilebench database: application id 0x%08x", s->path,
                       (unsigned)app);
    /* A tilebench file of version uv must have every table of versions 1..uv. */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
                           "AND name = ?", -1, &st, NULL) != SQLITE_OK)
        return tb_fail(msg, len, TB_EDB, "cannot read '%s': %s", s->path,
                       sqlite3_errmsg(s->db));
    for (int v = 1; v <= uv; v++) {
        for (const char *const *t = tbs_tables_at[v - 1]; *t; t++) {
            sqlite3_bind_text(st, 1, *t, -1, SQLITE_STATIC);
            int found = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1;
            sqlite3_reset(st);
            if (!found) {
                sqlite3_finalize(st);
                return tb_fail(msg, len, TB_EDB,
                               "'%s' is not a valid tilebench database: table '%s' of schema "
                               "version %d is missing", s->path, *t, v);
            }
        }
    }
    sqlite3_finalize(st);
    if (uv < target && s->read_only)
        return tb_fail(msg, len, TB_EDB,
                       "'%s' was written by an older tilebench (schema version %d; this one "
                       "reads %d): run 'tilebench migrate --db %s' first (commands that only "
                       "read never change a database)", s->path, uv, target, s->path);
    return TB_OK;
}

/* Applies steps from..target in one transaction: a migration is whole or not at all, so a
 * command that fails after it never leaves a half-migrated file. The version is read again
 * under the write lock, so two processes opening one new file do not both run a step. */
static int migrate(tb_store *s, int from, int target, char *msg, size_t len)
{
    if (from >= target) return TB_OK;
    int rc = tbs_tx_begin(s, msg, len, "begin a migration");
    if (rc) return rc;
    int cur = 0;
    if (pragma_int(s->db, "PRAGMA user_version", &cur) != SQLITE_OK) {
        rc = tbs_db_fail(s, msg, len, "read the schema version");
        tbs_tx_rollback(s);
        return rc;
    }
    for (int v = cur + 1; v <= target; v++) {
        char *err = NULL;
        if (sqlite3_exec(s->db, tbs_migrations[v - 1], NULL, NULL, &err) != SQLITE_OK) {
            rc = tb_fail(msg, len, TB_EDB, "cannot migrate '%s' to schema version %d: %s",
                         s->path, v, err ? err : sqlite3_errmsg(s->db));
            sqlite3_free(err);
            tbs_tx_rollback(s);
            return rc;
        }
    }
    return tbs_tx_commit(s, msg, len, "commit a migration");
}

static int set_pragmas(tb_store *s, char *msg, size_t len)
{
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if (sqlite3_exec(s->db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL) != SQLITE_OK)
        return tbs_db_fail(s, msg, len, "enable foreign keys");
    if (s->read_only) {
        if (sqlite3_exec(s->db, "PRAGMA query_only = ON", NULL, NULL, NULL) != SQLITE_OK)
            return tbs_db_fail(s, msg, len, "set query_only");
        return TB_OK;
    }
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL) == SQLITE_OK
             && sqlite3_step(st) == SQLITE_ROW;
    char mode[16] = "";
    if (ok) COL_TEXT(st, 0, mode);
    int rc = ok ? TB_OK : tbs_db_fail(s, msg, len, "enable WAL");
    sqlite3_finalize(st);
    if (rc) return rc;
    if (strcasecmp(mode, "wal") != 0)
        return tb_fail(msg, len, TB_EDB, "cannot enable WAL in '%s': journal mode stays '%s'",
                       s->path, mode);
    return TB_OK;
}

/* May this process write path and the folder it is in (where SQLite makes -wal and -shm)? */
static int writable_here(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return 0;
    int ok = access(path, W_OK) == 0 && access(dirname(copy), W_OK) == 0;
    free(copy);
    return ok;
}

/* "file:PATH?mode=ro&immutable=1" with PATH percent-encoded; 0, or -1 when it does not fit. */
static int uri_of(const char *path, char *out, size_t len)
{
    size_t at = (size_t)snprintf(out, len, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && at + 4 < len; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f)
            at += (size_t)snprintf(out + at, len - at, "%%%02X", *p);
        else out[at++] = (char)*p;
    }
    int n = snprintf(out + at, len > at ? len - at : 0, "?mode=ro&immutable=1");
    return n < 0 || at + (size_t)n >= len ? -1 : 0;
}

static int store_open(const char *path, int create, int read_only, int target, tb_store **out,
                      char *msg, size_t len)
{
    *out = NULL;
    if (!path || !*path) return tb_fail(msg, len, TB_EUSAGE, "no database path given");
    if (strlen(path) >= TB_PATH_LEN)
        return tb_fail(msg, len, TB_EUSAGE, "database path too long: '%.64s...'", path);
    if (read_only) create = 0;

    struct stat st;
    int exists = stat(path, &st) == 0;
    if (!exists) {
        if (errno != ENOENT)
            return tb_fail(msg, len, TB_EDB, "cannot open '%s': %s", path, strerror(errno));
        if (!create) return tb_fail(msg, len, TB_EDB, "cannot open '%s': no such file", path);
        int rc = make_parent(path, msg, len);
        if (rc) return rc;
    } else if (S_ISDIR(st.st_mode)) {
        return tb_fail(msg, len, TB_EDB, "cannot open '%s': is a directory", path);
    }

    tb_store *s = calloc(1, sizeof *s);
    if (!s) return tb_fail(msg, len, TB_ENOMEM, "cannot open '%s': out of memory", path);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->read_only = read_only;

    /* read_only opens read-write too, then sets query_only: a SQLITE_OPEN_READONLY
     * connection to a WAL database cannot remove the -wal and -shm it makes, and would leave
     * them beside a file it refused. But where this process may not write the file or its
     * folder (a read-only file, folder or medium), it opens the file immutable (a URI with
     * mode=ro&immutable=1): no lock, no -wal or -shm made, nothing written anywhere. An
     * immutable read cannot see a write-ahead log, so a non-empty -wal beside such a file is
     * refused rather than read stale. */
    int flags = SQLITE_OPEN_READWRITE | (exists ? 0 : SQLITE_OPEN_CREATE);
    /* This libsqlite3 may read "file:..." as a URI and ":memory:" as no file at all; a
     * name without a slash gets "./" so that SQLite opens the file that stat() saw. */
    char name[TB_PATH_LEN * 3 + 64];
    snprintf(name, sizeof name, "%s%s", strchr(path, '/') ? "" : "./", path);
    int rc;
    if (read_only && exists && !writable_here(path)) {
        char wal[TB_PATH_LEN + 8];
        struct stat ws;
        snprintf(wal, sizeof wal, "%s-wal", path);
        if (stat(wal, &ws) == 0 && ws.st_size > 0) {
            rc = tb_fail(msg, len, TB_EDB, "cannot read '%s': it may not be written here and its "
                         "write-ahead log '%s' holds data only a writer can fold in", path, wal);
            goto err;
        }
        if (uri_of(path, name, sizeof name)) {
            rc = tb_fail(msg, len, TB_EDB, "cannot open '%s': the path is too long", path);
            goto err;
        }
        flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    }
    if (sqlite3_open_v2(name, &s->db, flags, NULL) != SQLITE_OK) {
        rc = tb_fail(msg, len, TB_EDB, "cannot open '%s': %s", path,
                     s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto err;
    }
    sqlite3_extended_result_codes(s->db, 0);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);

    rc = inspect(s, create, target, &s->found_version, msg, len);
    if (rc) goto err;
    /* from here on the file is known to be ours (or empty) and writing is allowed */
    if (!read_only && sqlite3_db_readonly(s->db, "main") == 1) {
        rc = tb_fail(msg, len, TB_EDB, "cannot open '%s' for writing: the file is read-only",
                     path);
        goto err;
    }
    rc = set_pragmas(s, msg, len);
    if (rc) goto err;
    if (!read_only) {
        rc = migrate(s, s->found_version, target, msg, len);
        if (rc) goto err;
    }
    *out = s;
    return TB_OK;
err:
    tb_store_close(s);
    /* a file this call created and could not make a database (a full disk, a size limit) is
     * removed: a later command must not find it and call the database "empty" */
    if (!exists) {
        const char *suffix[] = { "", "-wal", "-shm", "-journal" };
        for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
            char p[TB_PATH_LEN + 16];
            snprintf(p, sizeof p, "%s%s", path, suffix[i]);
            unlink(p);
        }
    }
    return rc;
}

int tb_store_open(const char *path, int create, int read_only, tb_store **out, char *msg,
                  size_t len)
{
    return store_open(path, create, read_only, TB_SCHEMA_VERSION, out, msg, len);
}

int tb_store_create_at_version(const char *path, int version, char *msg, size_t len)
{
    if (version < 1 || version > TB_SCHEMA_VERSION)
        return tb_fail(msg, len, TB_EUSAGE, "schema version %d out of range (1..%d)", version,
                       TB_SCHEMA_VERSION);
    struct stat st;
    if (path && stat(path, &st) == 0)
        return tb_fail(msg, len, TB_EUSAGE, "cannot create '%s': it already exists", path);
    tb_store *s = NULL;
    int rc = store_open(path, 1, 0, version, &s, msg, len);
    tb_store_close(s);
    return rc;
}

void tb_store_close(tb_store *s)
{
    if (!s) return;
    for (int i = 0; i < Q_COUNT; i++) sqlite3_finalize(s->stmt[i]);
    sqlite3_close(s->db);   /* the last connection checkpoints and removes -wal and -shm */
    free(s);
}

const char *tb_store_path(const tb_store *s)
{
    return s ? s->path : "";
}

int tb_store_found_version(const tb_store *s)
{
    return s ? s->found_version : -1;
}
