/* store.h - the server's storage seam: tokens, submissions, the per-token rate and the boards'
 * generations, behind one interface with two engines: an SQLite file (store_sqlite.c, one
 * server process per file, the default) and PostgreSQL (store_pg.c, libpq: several server
 * processes, on several hosts, on one database). store.c picks the engine from the --db
 * argument and dispatches. The HTTP handlers include this header, never sqlite3.h or
 * libpq-fe.h (tests/arrows.sh 1.10).
 *
 * Every function returns 0, -1 with msg filled (a failure: the server answers 500), or
 * TBS_STORE_UNAVAILABLE with msg filled: the database cannot be reached now (PostgreSQL down,
 * restarting, a connection lost, every pooled connection busy for too long); the request may
 * be retried (the server answers 503) and nothing was written by that call, or, when a write's
 * connection was lost after the database took it, all of it was (a write is one transaction).
 * A submission is stored whole or not at all. msg is one line and never holds a password.
 *
 * Thread safety, the contract every engine keeps: the server runs a thread per connection, and
 * any function below but open and close may be called by any thread at any time on one
 * tbs_store, each call at the same time as any other. What a call returns (an id, whether a key
 * existed, a count, msg) is that call's own, never another thread's: an engine must not read
 * back per-connection state a concurrent call may have changed (SQLite's last insert id, its
 * rows changed, its last error message on a shared connection). A walk's callback (fn) runs on
 * the calling thread and may call the store again. Reads see every write that returned before
 * they began (in any process of one PostgreSQL database). tbs_store_close is called once,
 * after every other call has returned. */
#ifndef TBS_STORE_H
#define TBS_STORE_H
#include <stddef.h>
#include <stdint.h>

typedef struct tbs_store tbs_store;

#define TBS_STORE_UNAVAILABLE (-2)

/* How to open a store. Zeroed (or NULL) means the defaults. */
typedef struct tbs_store_opts {
    const char *password;  /* PostgreSQL: the password (from --db-password-file); NULL: libpq's
                              own PGPASSWORD / PGPASSFILE / ~/.pgpass. Never from the URI. */
    double wait_s;         /* PostgreSQL unreachable at open: try again for this long (--wait-db) */
    void (*waiting)(void *ctx, const char *why);   /* called once when open starts to wait, or NULL */
    void *ctx;
} tbs_store_opts;

/* 1 when db names a PostgreSQL database (postgresql://... or postgres://...), else 0 (a file). */
int tbs_store_is_postgres(const char *db);

/* Open (creating and migrating when needed) the store db: a file (SQLite; each connection of
 * that engine opens it again, so ":memory:" would give each its own empty database) or a
 * PostgreSQL URI (store_pg.c: a URI holding a password is refused, sslmode and the rest are
 * passed to libpq as they are). TBS_STORE_UNAVAILABLE when the database cannot be reached
 * (after opts->wait_s); msg names the host, never the password. */
int tbs_store_open(const char *db, const tbs_store_opts *opts, tbs_store **out, char *msg, size_t len);
void tbs_store_close(tbs_store *s);
/* "SQLite" or "PostgreSQL" */
const char *tbs_store_engine(const tbs_store *s);

/* Tokens are stored as SHA-256 hex only. Add returns the new token's id. */
int tbs_token_add(tbs_store *s, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len);
/* The id of the live (not revoked) token with this hash, or 0. */
int tbs_token_find(tbs_store *s, const char *hash_hex, int64_t *id, char *msg, size_t len);
int tbs_token_revoke(tbs_store *s, const char *name, int *revoked, char *msg, size_t len);
/* One line per token ("id name created [revoked]") through fn. */
int tbs_token_list(tbs_store *s, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len);

/* The per-token rate: *ok = 1 when token_id may submit now (and takes one of its per_min a
 * minute: a token bucket of that size refilled continuously), 0 when it is over its rate;
 * per_min <= 0 is no limit. SQLite keeps the buckets in the process (one server per file);
 * PostgreSQL in the database, so that they hold across every process of it. */
int tbs_rate_take(tbs_store *s, int64_t token_id, double per_min, int *ok, char *msg, size_t len);

/* Store a submission of token_id under its idempotency key; *id = its id and *existed = 1 when
 * that key of that token was stored before (the document is not stored again). A new one moves
 * its GPU model's generation on (below) in the same transaction as the row (PostgreSQL), or
 * before returning (SQLite, in the process). */
int tbs_submission_put(tbs_store *s, int64_t token_id, const char *key, const char *gpu_name,
                       const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len);
/* The generation of gpu's boards (gpu NULL: of every model's together): a number that never
 * goes back and moves on with every submission of that model stored, by any process of the
 * store. A board rendered from the store after reading generation g is current while the
 * generation is still g (cache.h). SQLite: a counter in the process; PostgreSQL: one indexed
 * read of the row the submission's transaction bumped. */
int tbs_board_generation(tbs_store *s, const char *gpu, uint64_t *gen, char *msg, size_t len);
/* The stored document of id (malloc'd, *doc NULL when there is none). */
int tbs_submission_get(tbs_store *s, int64_t id, char **doc, char *msg, size_t len);
/* Every submission of a GPU model, in the order they were stored (by id): fn(ctx, id, the
 * submitter token's name, created_at as YYYY-MM-DDTHH:MM:SSZ in UTC, document). A token's name
 * is unique in a store (revoked ones too), so it identifies the submitter. fn returning non-zero
 * stops the walk (the function still returns 0: the caller knows why it stopped). */
int tbs_submissions_of_gpu(tbs_store *s, const char *gpu,
                           int (*fn)(void *ctx, int64_t id, const char *who, const char *at, const char *doc),
                           void *ctx, char *msg, size_t len);
/* The GPU models that have submissions, by name: fn(ctx, gpu, how many), non-zero stops. */
int tbs_gpu_models(tbs_store *s, int (*fn)(void *ctx, const char *gpu, int64_t submissions), void *ctx,
                   char *msg, size_t len);
/* The leaderboards as a JSON array of {"gpu", "submissions"} (malloc'd text). */
int tbs_leaderboards_json(tbs_store *s, char **json, char *msg, size_t len);

/* ---- moving a community: copy-db ------------------------------------------------------------ */
/* The rows as stored, for a copy: times as YYYY-MM-DDTHH:MM:SSZ (UTC), revoked_at NULL when
 * live; hash is the token's SHA-256 hex (tokens stay hashed). */
typedef struct tbs_token_row { int64_t id; const char *name, *hash, *created_at, *revoked_at; } tbs_token_row;
typedef struct tbs_sub_row {
    int64_t id, token_id;
    const char *idem_key, *created_at, *gpu_name, *doc;
} tbs_sub_row;
typedef struct tbs_store_counts { int64_t tokens, submissions; } tbs_store_counts;

/* The rows of s counted. */
int tbs_store_count(tbs_store *s, tbs_store_counts *n, char *msg, size_t len);
/* Copy every token and submission of from into to, with their ids, names, hashes, keys, times
 * and documents as they are, in one transaction of to: all of it or nothing. A target that
 * holds any token or submission is refused (-1, "... is not empty"), so is a pair of engines
 * the copy does not know (today: SQLite into PostgreSQL). The target's id sequences and board
 * generations are brought past what was copied. */
int tbs_store_copy(tbs_store *from, tbs_store *to, char *msg, size_t len);
#endif
