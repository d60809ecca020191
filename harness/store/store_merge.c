/* store_merge.c - merging databases (store.h: tb_store_merge_check, tb_store_merge): the runs
 * of one tilebench file copied into another, each run once. Owns the copy: which rows follow
 * a run, how their ids are remapped, and what makes merging idempotent. The command is
 * cli/cmd_merge.c; the invariants of the whole store are in store_int.h.
 *
 * Identity: a run is its runs.uid (schema 5). A run whose uid the target has is skipped
 * whole, so merging a file twice, or into itself, changes nothing. A copied run brings its
 * environment row, its variants, its measurements and every sample and metric of them; the
 * problems its measurements use are found in the target by the problems table's unique key
 * (inserted when missing). A calibration row is copied unless the target has a row equal in
 * every column but id.
 *
 * Ids: the input's ids are never assumed free in the target. runs, variants, measurements and
 * metrics ids move by one offset per table, fixed when the input's transaction begins:
 *     new = old + (max id in the target - min id in the input + 1)
 * e.g. target variants 1..12, input variants 1..6: offset 12, input variant 4 becomes 16.
 * Problems, shared by every run, go through a map (input id -> target id) instead.
 *
 * Columns: those the two tables have in common (pragma_table_info), so a column added to the
 * schema later is copied with no change here. A column that refers to another table's id
 * must be listed in remap[], and a new table in tables[]. SQL texts are built from column
 * names read from the schema (quoted with %w); values still travel only as bound parameters.
 *
 * The input is read through its own read-only connection (tb_store_open read_only: the checks
 * of every reading command, and no -wal or -shm where the file may not be written) inside one
 * read transaction, so it is one snapshot. ATTACH would open a "file:...?mode=ro" URI only on
 * a connection opened with SQLITE_OPEN_URI or a library built with SQLITE_USE_URI; a second
 * connection needs neither. The target is written in one BEGIN IMMEDIATE transaction per
 * input: a failure, or a killed process, leaves nothing of that input.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L   /* as in every file of the store */
#endif
#include "store/store_int.h"
#include "store/store.h"
#include "common/tb.h"

#include <sqlite3.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How a column's value is copied: as is, left to the target (a new id), or remapped. */
enum { M_COPY, M_SKIP, M_RUN, M_VAR, M_MEAS, M_METRIC, M_PROB, M_COUNT };

static const struct { const char *table, *column; int map; } remap[] = {
    { "runs", "id", M_RUN },
    { "environment", "run_id", M_RUN },
    { "variants", "id", M_VAR }, { "variants", "run_id", M_RUN },
    { "problems", "id", M_SKIP },
    { "measurements", "id", M_MEAS }, { "measurements", "run_id", M_RUN },
    { "measurements", "variant_id", M_VAR }, { "measurements", "problem_id", M_PROB },
    { "samples", "measurement_id", M_MEAS },
    { "metrics", "id", M_METRIC }, { "metrics", "measurement_id", M_MEAS },
    { "calibration", "id", M_SKIP },
    { "search_models", "id", M_SKIP },
};

/* The ids of these tables move by an offset (the SQL reads max and min id of a table). */
static const char *const id_range_sql[M_COUNT] = {
    [M_RUN] = "SELECT max(id), min(id) FROM runs",
    [M_VAR] = "SELECT max(id), min(id) FROM variants",
    [M_MEAS] = "SELECT max(id), min(id) FROM measurements",
    [M_METRIC] = "SELECT max(id), min(id) FROM metrics",
};

/* The tables copied, in an order that keeps every foreign key satisfied; rows: which rows of
 * the input follow run ?1 (NULL: every row, not per run). */
enum { T_RUNS, T_ENV, T_VAR, T_PROB, T_MEAS, T_SAMPLES, T_METRICS, T_CAL, T_MODELS, T_COUNT };
#define OF_RUN_MEASUREMENTS "measurement_id IN (SELECT id FROM measurements WHERE run_id = ?1)"
static const struct { const char *table, *rows; } tables[T_COUNT] = {
    [T_RUNS] = { "runs", "id = ?1" },
    [T_ENV] = { "environment", "run_id = ?1" },
    [T_VAR] = { "variants", "run_id = ?1" },
    [T_PROB] = { "problems", "id IN (SELECT problem_id FROM measurements WHERE run_id = ?1)" },
    [T_MEAS] = { "measurements", "run_id = ?1" },
    [T_SAMPLES] = { "samples", OF_RUN_MEASUREMENTS },
    [T_METRICS] = { "metrics", OF_RUN_MEASUREMENTS },
    [T_CAL] = { "calibration", NULL },
    [T_MODELS] = { "search_models", NULL },
};

/* One table's copy: get reads the common columns from the input; put inserts a row into the
 * target, its parameter ?i being get's column i - 1 (skipped columns are left out); find
 * (problems, calibration) looks the row up in the target the same way. */
typedef struct copier {
    sqlite3_stmt *get, *put, *find;
    int n;        /* columns of get */
    int *map;     /* M_* of each */
    int id_col;   /* get's column "id", or -1 */
} copier;

typedef struct pmap { int64_t src, dst; } pmap;

typedef struct merge {
    tb_store *out, *in;
    int64_t off[M_COUNT];
    copier c[T_COUNT];
    pmap *pm;                /* problems mapped so far, sorted by src */
    size_t npm, cap;
    char *msg;
    size_t len;
} merge;

/* ---- building the statements -------------------------------------------------------------- */

static int remap_of(const char *table, const char *column)
{
    for (size_t i = 0; i < sizeof remap / sizeof remap[0]; i++)
        if (!strcmp(remap[i].table, table) && !strcmp(remap[i].column, column)) return remap[i].map;
    return M_COPY;
}

/* sqlite3_str_finish of s into *out (sqlite3_free it; NULL for an empty text, which
 * SQLite's %s prints as ""); returns 1 when building it ran out of memory. */
static int finish(sqlite3_str *s, char **out)
{
    int bad = sqlite3_str_errcode(s) != SQLITE_OK;
    *out = sqlite3_str_finish(s);
    return bad;
}

static int prepare(tb_store *s, const char *sql, sqlite3_stmt **st, merge *m)
{
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
        return tbs_db_fail(s, m->msg, m->len, "prepare a query of the merge");
    return TB_OK;
}

/* For problems: " WHERE k1 IS ?i AND ..." over the columns of the table's unique key (from the
 * target's schema), ?i being the key column's place in get. */
static int key_clause(merge *m, const char *const *names, int n, sqlite3_str *find)
{
    sqlite3_stmt *idx = NULL, *cols = NULL;
    int rc = prepare(m->out, "SELECT name FROM pragma_index_list(?1) "
                             "WHERE \"unique\" AND origin = 'u' ORDER BY seq", &idx, m);
    if (rc) return rc;
    sqlite3_bind_text(idx, 1, tables[T_PROB].table, -1, SQLITE_STATIC);
    if (sqlite3_step(idx) != SQLITE_ROW) {
        sqlite3_finalize(idx);
        return tb_fail(m->msg, m->len, TB_EDB, "cannot merge into '%s': table problems has no "
                       "unique key", m->out->path);
    }
    rc = prepare(m->out, "SELECT name FROM pragma_index_info(?1) ORDER BY seqno", &cols, m);
    if (!rc) sqlite3_bind_value(cols, 1, sqlite3_column_value(idx, 0));
    int nkey = 0;
    while (!rc && sqlite3_step(cols) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(cols, 0);
        int at = -1;
        for (int i = 0; k && i < n; i++)
            if (!strcmp(names[i], k)) at = i;
        if (at < 0)
            rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': the problems' key column "
                         "'%s' is not in it", m->in->path, k ? k : "?");
        else
            sqlite3_str_appendf(find, "%s\"%w\" IS ?%d", nkey++ ? " AND " : " WHERE ", k, at + 1);
    }
    if (!rc && nkey == 0)
        rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge into '%s': the problems' unique key "
                     "has no columns", m->out->path);
    sqlite3_finalize(cols);
    sqlite3_finalize(idx);
    return rc;
}

/* The copier of table t over the columns the input and the target have in common. */
static int copier_make(merge *m, int t)
{
    const char *table = tables[t].table;
    copier *c = &m->c[t];
    c->id_col = -1;
    sqlite3_stmt *oc = NULL, *ic = NULL;
    int rc = prepare(m->out, "SELECT name FROM pragma_table_info(?1) ORDER BY cid", &oc, m);
    if (!rc) rc = prepare(m->in, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", &ic, m);
    char **names = NULL;
    int cap = 0;
    sqlite3_str *get = sqlite3_str_new(NULL), *cols = sqlite3_str_new(NULL),
                *vals = sqlite3_str_new(NULL), *find = sqlite3_str_new(NULL);
    if (!rc) {
        sqlite3_bind_text(oc, 1, table, -1, SQLITE_STATIC);
        sqlite3_bind_text(ic, 1, table, -1, SQLITE_STATIC);
    }
    int nput = 0;
    while (!rc && sqlite3_step(oc) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(oc, 0);
        if (!name) continue;
        sqlite3_bind_text(ic, 2, name, -1, SQLITE_TRANSIENT);
        int common = sqlite3_step(ic) == SQLITE_ROW;
        sqlite3_reset(ic);
        if (!common) continue;   /* a column the input lacks: the target's default */
        if (c->n == cap) {
            cap = cap ? 2 * cap : 32;
            int *map = realloc(c->map, (size_t)cap * sizeof *map);
            char **nn = map ? realloc(names, (size_t)cap * sizeof *nn) : NULL;
            if (map) c->map = map;
            if (nn) names = nn;
            if (!map || !nn) {
                rc = tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory",
                             m->in->path);
                break;
            }
        }
        names[c->n] = sqlite3_mprintf("%s", name);
        if (!names[c->n]) {
            rc = tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory",
                         m->in->path);
            break;
        }
        int map = remap_of(table, name);
        if (!strcmp(name, "id")) c->id_col = c->n;
        sqlite3_str_appendf(get, "%s\"%w\"", c->n ? ", " : "SELECT ", name);
        if (map != M_SKIP) {
            sqlite3_str_appendf(cols, "%s\"%w\"", nput ? ", " : "", name);
            sqlite3_str_appendf(vals, "%s?%d", nput ? ", " : "", c->n + 1);
            if (t == T_CAL || t == T_MODELS)
                sqlite3_str_appendf(find, "%s\"%w\" IS ?%d", nput ? " AND " : " WHERE ", name,
                                    c->n + 1);
            nput++;
        }
        c->map[c->n++] = map;
    }
    if (!rc && nput == 0)
        rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': its table %s has no column "
                     "in common with '%s'", m->in->path, table, m->out->path);
    if (!rc && t == T_PROB && c->id_col < 0)
        rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': its problems have no id",
                     m->in->path);
    if (!rc && t == T_PROB) rc = key_clause(m, (const char *const *)names, c->n, find);
    sqlite3_str_appendf(get, " FROM \"%w\"", table);
    if (tables[t].rows) sqlite3_str_appendf(get, " WHERE %s", tables[t].rows);
    sqlite3_finalize(oc);
    sqlite3_finalize(ic);
    for (int i = 0; names && i < c->n; i++) sqlite3_free(names[i]);
    free(names);

    char *sget = NULL, *scols = NULL, *svals = NULL, *sfind = NULL, *sput = NULL;
    int oom = finish(get, &sget) | finish(cols, &scols) | finish(vals, &svals) |
              finish(find, &sfind);
    if (!rc && oom)
        rc = tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory", m->in->path);
    if (!rc) {
        sput = sqlite3_mprintf("INSERT %s INTO \"%w\" (%s) VALUES (%s)",
                               t == T_PROB ? "OR IGNORE" : "", table, scols, svals);
        if (!sput) rc = tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory",
                                m->in->path);
    }
    if (!rc) rc = prepare(m->in, sget, &c->get, m);
    if (!rc) rc = prepare(m->out, sput, &c->put, m);
    if (!rc && (t == T_PROB || t == T_CAL || t == T_MODELS)) {
        char *q = sqlite3_mprintf("SELECT %s FROM \"%w\"%s LIMIT 1",
                                  t == T_PROB ? "id" : "1", table, sfind);
        rc = q ? prepare(m->out, q, &c->find, m)
               : tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory",
                         m->in->path);
        sqlite3_free(q);
    }
    sqlite3_free(sget); sqlite3_free(scols); sqlite3_free(svals); sqlite3_free(sfind);
    sqlite3_free(sput);
    return rc;
}

/* The offset of each table whose ids move (see the top of the file). */
static int offsets(merge *m)
{
    for (int k = 0; k < M_COUNT; k++) {
        if (!id_range_sql[k]) continue;
        sqlite3_stmt *o = NULL, *i = NULL;
        int rc = prepare(m->out, id_range_sql[k], &o, m);
        if (!rc) rc = prepare(m->in, id_range_sql[k], &i, m);
        if (!rc && sqlite3_step(o) != SQLITE_ROW) rc = tbs_db_fail(m->out, m->msg, m->len, "read the ids");
        if (!rc && sqlite3_step(i) != SQLITE_ROW) rc = tbs_db_fail(m->in, m->msg, m->len, "read the ids");
        if (!rc && sqlite3_column_type(i, 0) != SQLITE_NULL) {
            int64_t out_max = sqlite3_column_int64(o, 0);   /* NULL (empty) reads as 0 */
            int64_t in_max = sqlite3_column_int64(i, 0), in_min = sqlite3_column_int64(i, 1);
            int64_t off, top;
            if (__builtin_sub_overflow(out_max, in_min, &off) ||
                __builtin_add_overflow(off, 1, &off) ||
                __builtin_add_overflow(in_max, off, &top))
                rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s' into '%s': its ids "
                             "would pass the largest id SQLite allows", m->in->path,
                             m->out->path);
            else m->off[k] = off;
        }
        sqlite3_finalize(o);
        sqlite3_finalize(i);
        if (rc) return rc;
    }
    return TB_OK;
}

/* ---- copying ------------------------------------------------------------------------------ */

static int pmap_cmp(const void *a, const void *b)
{
    int64_t x = ((const pmap *)a)->src, y = ((const pmap *)b)->src;
    return (x > y) - (x < y);
}

static pmap *pmap_find(merge *m, int64_t src)
{
    pmap key = { src, 0 };
    return m->npm ? bsearch(&key, m->pm, m->npm, sizeof *m->pm, pmap_cmp) : NULL;
}

static int pmap_add(merge *m, int64_t src, int64_t dst)
{
    if (m->npm == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        pmap *p = realloc(m->pm, cap * sizeof *p);
        if (!p) return tb_fail(m->msg, m->len, TB_ENOMEM, "cannot merge '%s': out of memory",
                               m->in->path);
        m->pm = p;
        m->cap = cap;
    }
    size_t at = m->npm;
    while (at > 0 && m->pm[at - 1].src > src) at--;
    memmove(m->pm + at + 1, m->pm + at, (m->npm - at) * sizeof *m->pm);
    m->pm[at] = (pmap){ src, dst };
    m->npm++;
    return TB_OK;
}

/* Bind the row get of copier c stands on to st, each value remapped by its column's rule;
 * only the parameters st has (?i for get's column i - 1). */
static int bind_row(merge *m, const copier *c, sqlite3_stmt *st)
{
    int np = sqlite3_bind_parameter_count(st);
    for (int i = 0; i < c->n && i < np; i++) {
        sqlite3_value *v = sqlite3_column_value(c->get, i);
        int map = c->map[i], brc;
        if (map == M_COPY || map == M_SKIP || sqlite3_value_type(v) == SQLITE_NULL) {
            brc = sqlite3_bind_value(st, i + 1, v);
        } else if (map == M_PROB) {
            const pmap *p = pmap_find(m, sqlite3_value_int64(v));
            if (!p)
                return tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': a measurement refers "
                               "to problem %lld, which it does not hold (see 'tilebench check')",
                               m->in->path, (long long)sqlite3_value_int64(v));
            brc = sqlite3_bind_int64(st, i + 1, p->dst);
        } else {
            brc = sqlite3_bind_int64(st, i + 1, sqlite3_value_int64(v) + m->off[map]);
        }
        if (brc != SQLITE_OK) return tbs_db_fail(m->out, m->msg, m->len, "bind a value");
    }
    return TB_OK;
}

/* Copy the rows of table t that follow the input's run (every row: t's rows NULL); *n counts
 * those inserted. Calibration rows equal to one in the target are not. */
static int copy_rows(merge *m, int t, int64_t run, long long *n)
{
    copier *c = &m->c[t];
    char what[96];
    int rc = TB_OK, step = SQLITE_DONE;
    if (tables[t].rows) sqlite3_bind_int64(c->get, 1, run);
    while (rc == TB_OK && (step = sqlite3_step(c->get)) == SQLITE_ROW) {
        if (c->find) {
            rc = bind_row(m, c, c->find);
            int found = rc == TB_OK && sqlite3_step(c->find) == SQLITE_ROW;
            sqlite3_reset(c->find);
            if (rc || found) continue;
        }
        rc = bind_row(m, c, c->put);
        if (rc) break;
        if (sqlite3_step(c->put) != SQLITE_DONE) {
            snprintf(what, sizeof what, "insert into %s", tables[t].table);
            rc = tbs_db_fail(m->out, m->msg, m->len, what);
        } else if (n) {
            (*n)++;
        }
        sqlite3_reset(c->put);
    }
    if (rc == TB_OK && step != SQLITE_DONE) {
        snprintf(what, sizeof what, "read %s", tables[t].table);
        rc = tbs_db_fail(m->in, m->msg, m->len, what);
    }
    sqlite3_reset(c->get);
    return rc;
}

/* Map each problem the run's measurements use to the target's, inserting those missing. */
static int map_problems(merge *m, int64_t run)
{
    copier *c = &m->c[T_PROB];
    int rc = TB_OK, step = SQLITE_DONE;
    sqlite3_bind_int64(c->get, 1, run);
    while (rc == TB_OK && (step = sqlite3_step(c->get)) == SQLITE_ROW) {
        int64_t src = sqlite3_column_int64(c->get, c->id_col);
        if (pmap_find(m, src)) continue;
        rc = bind_row(m, c, c->put);
        if (!rc && sqlite3_step(c->put) != SQLITE_DONE)
            rc = tbs_db_fail(m->out, m->msg, m->len, "insert into problems");
        sqlite3_reset(c->put);
        if (!rc) rc = bind_row(m, c, c->find);
        if (!rc) {
            if (sqlite3_step(c->find) == SQLITE_ROW)
                rc = pmap_add(m, src, sqlite3_column_int64(c->find, 0));
            else
                rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': its problem %lld is "
                             "neither in '%s' nor could be added", m->in->path, (long long)src,
                             m->out->path);
            sqlite3_reset(c->find);
        }
    }
    if (rc == TB_OK && step != SQLITE_DONE)
        rc = tbs_db_fail(m->in, m->msg, m->len, "read problems");
    sqlite3_reset(c->get);
    return rc;
}

/* Every run of the input, by id: skipped when the target has its uid, else copied whole. */
static int copy_runs(merge *m, tb_merge_counts *k)
{
    sqlite3_stmt *runs = NULL, *has = NULL;
    int rc = prepare(m->in, "SELECT id, uid FROM runs ORDER BY id", &runs, m);
    if (!rc) rc = prepare(m->out, "SELECT 1 FROM runs WHERE uid = ?1", &has, m);
    int step = SQLITE_DONE;
    while (!rc && (step = sqlite3_step(runs)) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(runs, 0);
        if (sqlite3_column_type(runs, 1) == SQLITE_NULL) {
            rc = tb_fail(m->msg, m->len, TB_EDB, "cannot merge '%s': its run %lld has no uid",
                         m->in->path, (long long)run);
            break;
        }
        sqlite3_bind_value(has, 1, sqlite3_column_value(runs, 1));
        int present = sqlite3_step(has) == SQLITE_ROW;
        sqlite3_reset(has);
        if (present) {
            k->runs_present++;
            continue;
        }
        rc = copy_rows(m, T_RUNS, run, NULL);
        if (!rc) rc = copy_rows(m, T_ENV, run, NULL);
        if (!rc) rc = copy_rows(m, T_VAR, run, NULL);
        if (!rc) rc = map_problems(m, run);
        if (!rc) rc = copy_rows(m, T_MEAS, run, &k->measurements);
        if (!rc) rc = copy_rows(m, T_SAMPLES, run, &k->samples);
        if (!rc) rc = copy_rows(m, T_METRICS, run, &k->metrics);
        if (!rc) k->runs++;
    }
    if (!rc && step != SQLITE_DONE) rc = tbs_db_fail(m->in, m->msg, m->len, "read the runs");
    sqlite3_finalize(runs);
    sqlite3_finalize(has);
    return rc;
}

/* ---- the two entry points ----------------------------------------------------------------- */

/* 1 when a and b are one existing file (by any name). */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int tb_store_merge_check(const char *in, const char *target_path, int *is_target, char *msg,
                         size_t len)
{
    *is_target = 0;
    if (in && target_path && same_file(in, target_path)) {
        *is_target = 1;
        return TB_OK;
    }
    tb_store *s = NULL;
    int rc = tb_store_open(in, 0, 1, &s, msg, len);   /* refuses newer and older schemas */
    if (rc) return rc;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM runs WHERE uid IS NULL", -1, &st, NULL)
            != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
        rc = tbs_db_fail(s, msg, len, "read the runs");
    else if (sqlite3_column_int64(st, 0) > 0)
        rc = tb_fail(msg, len, TB_EDB, "cannot merge '%s': %lld of its runs have no uid, so a "
                     "later merge could not recognise them", in,
                     (long long)sqlite3_column_int64(st, 0));
    sqlite3_finalize(st);
    tb_store_close(s);
    return rc;
}

int tb_store_merge(tb_store *out, const char *in, tb_merge_counts *counts, char *msg,
                   size_t len)
{
    memset(counts, 0, sizeof *counts);
    if (out->read_only)
        return tb_fail(msg, len, TB_EINTERNAL, "cannot merge into '%s': opened read-only",
                       out->path);
    if (same_file(in, out->path)) {
        counts->is_target = 1;
        return TB_OK;
    }
    merge m = { .out = out, .msg = msg, .len = len };
    int rc = tb_store_open(in, 0, 1, &m.in, msg, len);
    if (rc) return rc;
    int reading = 0, writing = 0;
    if (sqlite3_exec(m.in->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        rc = tbs_db_fail(m.in, msg, len, "begin reading");
    else reading = 1;
    if (!rc) rc = tbs_tx_begin(out, msg, len, "begin a merge");
    if (!rc) writing = 1;
    if (!rc) rc = offsets(&m);
    for (int t = 0; !rc && t < T_COUNT; t++) rc = copier_make(&m, t);
    if (!rc) rc = copy_runs(&m, counts);
    if (!rc) rc = copy_rows(&m, T_CAL, 0, &counts->calibrations);
    if (!rc) rc = copy_rows(&m, T_MODELS, 0, &counts->search_models);
    for (int t = 0; t < T_COUNT; t++) {
        sqlite3_finalize(m.c[t].get);
        sqlite3_finalize(m.c[t].put);
        sqlite3_finalize(m.c[t].find);
        free(m.c[t].map);
    }
    free(m.pm);
    if (!rc) rc = tbs_tx_commit(out, msg, len, "commit a merge");   /* rolls back on failure */
    else if (writing) tbs_tx_rollback(out);
    if (reading) sqlite3_exec(m.in->db, "COMMIT", NULL, NULL, NULL);   /* ends the read */
    tb_store_close(m.in);
    if (rc) {
        int present = counts->is_target;
        memset(counts, 0, sizeof *counts);
        counts->is_target = present;
    }
    return rc;
}
