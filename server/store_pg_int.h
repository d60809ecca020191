/* store_pg_int.h - what store_pg.c (the PostgreSQL engine) shares with store_pg_import.c
 * (copy-db's target): the store's and a pooled connection's types, and the helpers both use.
 * Private to those two files; everything else reaches the engine through store.h. */
#ifndef TBS_STORE_PG_INT_H
#define TBS_STORE_PG_INT_H
#include "store_int.h"
#include <libpq-fe.h>
#include <pthread.h>

#define POOL_MAX 16        /* connections per process (two processes: 32 of PostgreSQL's default 100) */

typedef struct pgconn { PGconn *c; uint32_t prepared; } pgconn;   /* prepared: a bit per q[] */

typedef struct pg_store {
    tbs_store base;
    const char *kw[8], *val[8];   /* PQconnectdbParams' arrays */
    char *uri, *password, *secret;/* secret: the password to keep out of messages (ours or PGPASSWORD) */
    pthread_mutex_t lock;         /* guards idle[], n_idle, n_open */
    pthread_cond_t freed;
    pgconn *idle[POOL_MAX];
    size_t n_idle, n_open;        /* n_open: idle and borrowed */
    pgconn *imp;                  /* a copy's connection, inside its transaction */
} pg_store;

/* msg = "WHAT: ERR" on one line, the password (if known) replaced by *** */
void pg_say(const pg_store *s, char *msg, size_t len, const char *what, const char *err);
/* 1 when r failed because the server is going away or the connection broke */
int pg_transient(const PGresult *r);
int pg_broken(PGconn *c, const PGresult *r);
/* a pooled connection (fresh_only: a new one), NULL with msg when none can be had */
pgconn *pg_borrow(pg_store *s, int fresh_only, int *fresh, char *msg, size_t len);
/* back to the pool, or closed (lost_too: also when it still works) */
void pg_give(pg_store *s, pgconn *c, int lost_too);
/* one unprepared statement on c; 0, or -1 / TBS_STORE_UNAVAILABLE with msg */
int pg_exec_on(pg_store *s, PGconn *c, const char *sql, int nv, const char *const *vals, PGresult **res,
               const char *what, char *msg, size_t len);
int64_t pg_int_at(const PGresult *r, int row, int col);

/* copy-db's target (store_pg_import.c) */
int pg_import_begin(tbs_store *base, char *msg, size_t len);
int pg_import_token(tbs_store *base, const tbs_token_row *t, char *msg, size_t len);
int pg_import_sub(tbs_store *base, const tbs_sub_row *r, char *msg, size_t len);
int pg_import_end(tbs_store *base, int commit, char *msg, size_t len);
#endif
