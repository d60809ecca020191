/* store_int.h - what store.c (the seam's dispatcher, store.h) and its two engines share: the
 * table of an engine's functions, and the head every engine's store starts with. Not for
 * other modules: store.h is the surface. An engine fills every entry but the copy's, which it
 * fills only for the side of a copy it can be (dump: a source; import_*: a target). */
#ifndef TBS_STORE_INT_H
#define TBS_STORE_INT_H
#include "store.h"

typedef struct tbs_engine {
    const char *name;   /* "SQLite", "PostgreSQL" */
    void (*close)(tbs_store *s);
    int (*token_add)(tbs_store *s, const char *name, const char *hash_hex, int64_t *id, char *msg, size_t len);
    int (*token_find)(tbs_store *s, const char *hash_hex, int64_t *id, char *msg, size_t len);
    int (*token_revoke)(tbs_store *s, const char *name, int *revoked, char *msg, size_t len);
    int (*token_list)(tbs_store *s, void (*fn)(void *ctx, const char *line), void *ctx, char *msg, size_t len);
    int (*rate_take)(tbs_store *s, int64_t token_id, double per_min, int *ok, char *msg, size_t len);
    int (*submission_put)(tbs_store *s, int64_t token_id, const char *key, const char *gpu_name,
                          const char *doc, size_t n, int64_t *id, int *existed, char *msg, size_t len);
    int (*board_generation)(tbs_store *s, const char *gpu, uint64_t *gen, char *msg, size_t len);
    int (*submission_get)(tbs_store *s, int64_t id, char **doc, char *msg, size_t len);
    int (*submissions_of_gpu)(tbs_store *s, const char *gpu,
                              int (*fn)(void *ctx, int64_t id, const char *who, const char *at, const char *doc),
                              void *ctx, char *msg, size_t len);
    int (*gpu_models)(tbs_store *s, int (*fn)(void *ctx, const char *gpu, int64_t submissions), void *ctx,
                      char *msg, size_t len);
    int (*leaderboards_json)(tbs_store *s, char **json, char *msg, size_t len);
    int (*count)(tbs_store *s, tbs_store_counts *n, char *msg, size_t len);
    /* a copy's source: every token, then every submission, each by id, from one snapshot; a
     * callback's non-zero return stops the walk and is returned */
    int (*dump)(tbs_store *s, int (*token)(void *ctx, const tbs_token_row *r),
                int (*sub)(void *ctx, const tbs_sub_row *r), void *ctx, char *msg, size_t len);
    /* a copy's target: begin (one transaction; -1 when not empty), rows, end (commit 1: bring
     * the id sequences and generations past the rows and commit; 0: roll back) */
    int (*import_begin)(tbs_store *s, char *msg, size_t len);
    int (*import_token)(tbs_store *s, const tbs_token_row *r, char *msg, size_t len);
    int (*import_sub)(tbs_store *s, const tbs_sub_row *r, char *msg, size_t len);
    int (*import_end)(tbs_store *s, int commit, char *msg, size_t len);
} tbs_engine;

/* every engine's store begins with this */
struct tbs_store { const tbs_engine *e; };

int tbs_sqlite_open(const char *path, const tbs_store_opts *o, tbs_store **out, char *msg, size_t len);
int tbs_pg_open(const char *uri, const tbs_store_opts *o, tbs_store **out, char *msg, size_t len);
#endif
