/* store.h - the server's storage seam: tokens and submissions, behind one interface so that the
 * SQLite file (store_sqlite.c, one machine) and, later, PostgreSQL (issue 30) are two engines
 * of it. The HTTP handlers include this header, never sqlite3.h or libpq-fe.h. Every function
 * returns 0 or -1 with msg filled; a submission is stored whole or not at all.
 *
 * Thread safety, the contract every engine keeps: the server runs a thread per connection, and
 * any function below but open and close may be called by any thread at any time on one
 * tbs_store, each call at the same time as any other. What a call returns (an id, whether a key
 * existed, a count, msg) is that call's own, never another thread's: an engine must not read
 * back per-connection state a concurrent call may have changed (SQLite's last insert id, its
 * rows changed, its last error message on a shared connection). A walk's callback (fn) runs on
 * the calling thread and may call the store again. Reads see every write that returned before
 * they began. tbs_store_close is called once, after every other call has returned. */
#ifndef TBS_STORE_H
#define TBS_STORE_H
#include <stddef.h>
#include <stdint.h>

typedef struct tbs_store tbs_store;

/* Open (creating and migrating when needed) the store at path: a file (each connection of the
 * SQLite engine opens it again, so ":memory:" would give each its own empty database). */
int tbs_store_open(const char *path, tbs_store **out, char *msg, size_t len);
void tbs_store_close(tbs_store *s);

/* Tokens are stored as SHA-256 hex only. Add returns the new token's id. */
int tbs_token_add(tbs_store *s, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len);
/* The id of the live (not revoked) token with this hash, or 0. */
int tbs_token_find(tbs_store *s, const char *hash_hex, int64_t *id, char *msg, size_t len);
int tbs_token_revoke(tbs_store *s, const char *name, int *revoked, char *msg, size_t len);
/* One line per token ("id name created [revoked]") through fn. */
int tbs_token_list(tbs_store *s, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len);

/* Store a submission of token_id under its idempotency key; *id = its id and *existed = 1 when
 * that key of that token was stored before (the document is not stored again). */
int tbs_submission_put(tbs_store *s, int64_t token_id, const char *key, const char *gpu_name,
                       const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len);
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
#endif
