/* store_int.h - private to harness/store/: what the store's files share (see store.h,
 * docs/schema.md). Owns struct tb_store, the names of the prepared statements, and the small
 * helpers that more than one of the store's files uses (tbs_ prefix).
 *
 * The store is eight files, one module with store.h and this header:
 *   store_migrations.c  the schema's whole history: tbs_migrations[], tbs_tables_at[]
 *   store_schema.c  open, inspect, migrate, close
 *   store_sql.c     the SQL text of every statement, and the helpers declared below
 *   store_write.c   every writer: records to rows
 *   store_read.c    every reader: rows to records
 *   store_check.c   tilebench check: the file's integrity
 *   store_merge.c   tilebench merge: the runs of another file copied in, each once (runs.uid)
 *   store_model.c   the fitted models of tilebench search (search_models)
 *
 * The store owns the database file: only its files include sqlite3.h, and it is the only
 * writer. It owns the schema, the checks that run before anything is written, and the
 * mapping between records and rows. It leaves to its callers what a run means (sweep), how
 * results are shown (show, export).
 *
 * Invariants:
 *  - nothing is written to a file until it has been read back as a tilebench database of a
 *    version this build knows (or as an empty one, when creating); WAL is enabled only then,
 *    so a refused file keeps its bytes and gets no -wal/-shm beside it;
 *  - every SQL text is a constant; values travel only as bound parameters;
 *  - "not applicable" is NULL on disk: NaN doubles, -1 integers and "" strings of records
 *    are stored as NULL and read back as NaN, -1 and "" (the problem's key columns excepted,
 *    see docs/schema.md);
 *  - a measurement and its samples go in one transaction, so a SIGKILL loses at most it.
 */
#ifndef TB_STORE_INT_H
#define TB_STORE_INT_H

#include "store/store.h"
#include "common/record.h"

#include <sqlite3.h>

#include <stddef.h>

/* The prepared statements; their SQL texts are in store_sql.c. */
enum {
    Q_RUN_INSERT, Q_RUN_END, Q_RUN_STATUS, Q_RUN_GET, Q_RUN_LATEST, Q_RUN_PHASES,
    Q_ENV_PUT, Q_ENV_GET,
    Q_VAR_INSERT, Q_VAR_FIND, Q_VARIANTS,
    Q_PROB_INSERT, Q_PROB_FIND,
    Q_MEAS_INSERT, Q_SAMPLE_INSERT, Q_MEAS_DELETE, Q_RESULTS, Q_SAMPLES,
    Q_METRIC_PUT, Q_METRICS,
    Q_CAL_INSERT, Q_CAL_LATEST,
    Q_HISTORY,
    Q_COUNT
};

struct tb_store {
    sqlite3 *db;
    int read_only;
    int found_version;
    sqlite3_stmt *stmt[Q_COUNT];   /* prepared on first use, finalized by close */
    char path[TB_PATH_LEN];
};

/* ---- the schema's history (store_migrations.c) ------------------------------------------
 * tbs_migrations[v - 1] takes user_version v - 1 to v and ends by setting it;
 * tbs_tables_at[v - 1] lists (NULL-ended) the tables that appear at version v. */
extern const char *const tbs_migrations[TB_SCHEMA_VERSION];
extern const char *const *const tbs_tables_at[TB_SCHEMA_VERSION];

/* ---- small helpers (store_sql.c) ---------------------------------------------------------- */

/* The failure of the last call on s->db: "cannot <what> in 'x.db': <sqlite's message>".
 * Call before any ROLLBACK, which replaces sqlite's message. */
int tbs_db_fail(tb_store *s, char *msg, size_t len, const char *what);

/* The statement which (a Q_* above), prepared on first use and cached in s->stmt. */
int tbs_prep(tb_store *s, int which, sqlite3_stmt **out, char *msg, size_t len);

/* Leave a cached statement ready for its next use (ends any read it held open). */
void tbs_done(sqlite3_stmt *st);

/* Column i as text into dst (cap bytes); NULL reads as "". */
void tbs_col_text(sqlite3_stmt *st, int i, char *dst, size_t cap);
#define COL_TEXT(st, i, field) tbs_col_text((st), (i), (field), sizeof(field))

/* BEGIN IMMEDIATE: takes the write lock now (waiting up to the busy timeout), so a
 * transaction never fails half-way for want of it. */
int tbs_tx_begin(tb_store *s, char *msg, size_t len, const char *what);
void tbs_tx_rollback(tb_store *s);
int tbs_tx_commit(tb_store *s, char *msg, size_t len, const char *what);

#endif
