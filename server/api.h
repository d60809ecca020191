/* api.h - the HTTP side of tilebench-server (api.c): libmicrohttpd's request handler and its
 * completion callback, and the token hash the handler and `token add` share. */
#ifndef TBS_API_H
#define TBS_API_H
#include <stddef.h>
#include <stdio.h>
#include <microhttpd.h>
#include "cache.h"
#include "store.h"
#include "sets.h"

typedef struct tbs_api {
    tbs_store *store;
    size_t max_body;      /* larger bodies get 413 */
    FILE *log;            /* one line per request, or NULL */
    const tbs_sets *sets; /* the shape sets leaderboards rank on */
    double rate_per_min;  /* submissions one token may make per minute (a token bucket of that
                             size refilled continuously); more get 429 */
    double body_timeout_s;/* a request body not complete this long after its headers is cut
                             (the connection closed); 0: no limit */
    tbs_cache *cache;     /* the rendered leaderboards, or NULL: every read ranks again */
    int allow_unknown_gpu;/* 1: a GPU whose peak is unknown is taken with its rates unchecked
                             (--allow-unknown-gpu); 0: refused (422) */
} tbs_api;

/* SHA-256 of a token, hex: what the store keeps instead of the token. */
void tbs_token_hash(const char *token, char out[65]);

enum MHD_Result tbs_api_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls);
void tbs_api_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t);
#endif
