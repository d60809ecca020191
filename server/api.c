/* api.c - the JSON API of tilebench-server (see api.h) on libmicrohttpd: POST
 * /api/v1/submissions (bearer token, idempotency key, body limit, the shared strict parser),
 * GET /api/v1/submissions/{id}, GET /api/v1/leaderboards. Every answer is JSON; every error a
 * 4xx naming what is wrong; one log line per request. Storage only through store.h. */
#define _GNU_SOURCE
#include "api.h"
#include "store.h"
#include "rank.h"
#include "format/submission_parse.h"
#include "common/sha256.h"
#include "common/tb.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct req { char *body; size_t n, cap; int too_big; } req;

/* Per-token token buckets (the server runs a thread per connection: one lock). Bounded: a
 * token beyond the table's size shares the last slot, which only makes it stricter. */
#define BUCKETS 1024
static struct { int64_t token; double tokens, at; } bucket[BUCKETS];
static pthread_mutex_t bucket_lock = PTHREAD_MUTEX_INITIALIZER;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 1 when token_id may submit now (and takes its one), 0 when over its rate */
static int allow(int64_t token_id, double per_min)
{
    if (per_min <= 0) return 1;
    pthread_mutex_lock(&bucket_lock);
    size_t i = 0;
    while (i < BUCKETS - 1 && bucket[i].token && bucket[i].token != token_id) i++;
    double t = now_s();
    if (bucket[i].token != token_id) { bucket[i].token = token_id; bucket[i].tokens = per_min; bucket[i].at = t; }
    bucket[i].tokens += (t - bucket[i].at) * per_min / 60.0;
    if (bucket[i].tokens > per_min) bucket[i].tokens = per_min;
    bucket[i].at = t;
    int ok = bucket[i].tokens >= 1.0;
    if (ok) bucket[i].tokens -= 1.0;
    pthread_mutex_unlock(&bucket_lock);
    return ok;
}

void tbs_token_hash(const char *token, char out[65])
{
    tb_sha256_hex(token, strlen(token), NULL, 0, out);
}

static enum MHD_Result answer(tbs_api *a, struct MHD_Connection *c, const char *method, const char *url,
                              unsigned int code, const char *json)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    if (a->log) {
        char shown[256];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        fprintf(a->log, "%lld %s %s %u\n", (long long)ts.tv_sec, method,
                tb_text_escape(url, shown, sizeof shown, 0), code);
        fflush(a->log);
    }
    return ret;
}

static enum MHD_Result error(tbs_api *a, struct MHD_Connection *c, const char *method, const char *url,
                             unsigned int code, const char *why)
{
    cJSON *o = cJSON_CreateObject();
    char clean[1024];
    cJSON_AddStringToObject(o, "error", tb_text_utf8_clean(why, clean, sizeof clean));
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    enum MHD_Result r = answer(a, c, method, url, code, t ? t : "{\"error\":\"out of memory\"}");
    cJSON_free(t);
    return r;
}

/* Does any result of s lie on a shape of one of the sets? */
static int on_some_set(const tbs_sets *sets, const tb_submission *s)
{
    for (size_t i = 0; i < s->n; i++)
        for (size_t k = 0; k < sets->n; k++)
            for (size_t j = 0; j < sets->v[k].n; j++) {
                const tbs_shape *sh = &sets->v[k].s[j];
                if (s->r[i].m == sh->m && s->r[i].n == sh->n && s->r[i].k == sh->k && s->r[i].batch == sh->batch)
                    return 1;
            }
    return 0;
}

static enum MHD_Result post_submission(tbs_api *a, struct MHD_Connection *c, const char *url, req *q)
{
    const char *m = "POST";
    if (q->too_big) return error(a, c, m, url, 413, "body larger than the limit");
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncmp(auth, "Bearer ", 7) || !auth[7]) return error(a, c, m, url, 401, "a bearer token is needed");
    char hash[65], msg[TB_MSG_LEN];
    tbs_token_hash(auth + 7, hash);
    int64_t token_id = 0;
    if (tbs_token_find(a->store, hash, &token_id, msg, sizeof msg)) return error(a, c, m, url, 500, msg);
    if (!token_id) return error(a, c, m, url, 401, "unknown or revoked token");
    if (!allow(token_id, a->rate_per_min)) return error(a, c, m, url, 429, "too many submissions: slow down");
    tb_submission s;
    if (tb_submission_parse(q->body ? q->body : "", q->n, &s, msg, sizeof msg)) return error(a, c, m, url, 400, msg);
    if (tb_submission_plausible(&s, msg, sizeof msg)) {
        tb_submission_free(&s);
        return error(a, c, m, url, 422, msg);
    }
    if (a->sets && a->sets->n && !on_some_set(a->sets, &s)) {
        tb_submission_free(&s);
        return error(a, c, m, url, 422, "no result is on a shape of any leaderboard set");
    }
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    char own[65];
    if (!key || !*key || strlen(key) > 128) { tb_sha256_hex(q->body, q->n, NULL, 0, own); key = own; }
    int64_t id = 0;
    int existed = 0;
    int rc = tbs_submission_put(a->store, token_id, key, s.gpu_name, q->body, q->n, &id, &existed, msg, sizeof msg);
    tb_submission_free(&s);
    if (rc) return error(a, c, m, url, 500, msg);
    char out[96];
    snprintf(out, sizeof out, "{\"id\":%lld,\"replayed\":%s}", (long long)id, existed ? "true" : "false");
    return answer(a, c, m, url, existed ? 200 : 201, out);
}

static enum MHD_Result get(tbs_api *a, struct MHD_Connection *c, const char *url)
{
    char msg[TB_MSG_LEN];
    if (!strcmp(url, "/api/v1/leaderboards")) {
        char *j = NULL;
        if (tbs_leaderboards_json(a->store, &j, msg, sizeof msg)) return error(a, c, "GET", url, 500, msg);
        enum MHD_Result r = answer(a, c, "GET", url, 200, j);
        cJSON_free(j);
        return r;
    }
    const char *lb = "/api/v1/leaderboards/";
    if (!strncmp(url, lb, strlen(lb))) {   /* /api/v1/leaderboards/{set}/{gpu model} */
        char set[64], *slash = strchr(url + strlen(lb), '/');
        size_t sl = slash ? (size_t)(slash - url - strlen(lb)) : 0;
        if (!slash || !sl || sl >= sizeof set || !slash[1]) return error(a, c, "GET", url, 400, "want /api/v1/leaderboards/SET/GPU");
        memcpy(set, url + strlen(lb), sl);
        set[sl] = 0;
        const tbs_set *st = a->sets ? tbs_sets_find(a->sets, set) : NULL;
        if (!st) return error(a, c, "GET", url, 404, "no such shape set");
        char *j = NULL;
        if (tbs_rank_json(a->store, st, slash + 1, &j, msg, sizeof msg)) return error(a, c, "GET", url, 500, msg);
        enum MHD_Result r = answer(a, c, "GET", url, 200, j);
        cJSON_free(j);
        return r;
    }
    const char *pre = "/api/v1/submissions/";
    if (!strncmp(url, pre, strlen(pre))) {
        const char *n = url + strlen(pre);
        if (!*n || strlen(n) > 18 || strspn(n, "0123456789") != strlen(n))
            return error(a, c, "GET", url, 400, "a submission id is a number");
        char *doc = NULL;
        if (tbs_submission_get(a->store, strtoll(n, NULL, 10), &doc, msg, sizeof msg)) return error(a, c, "GET", url, 500, msg);
        if (!doc) return error(a, c, "GET", url, 404, "no such submission");
        enum MHD_Result r = answer(a, c, "GET", url, 200, doc);
        free(doc);
        return r;
    }
    return error(a, c, "GET", url, 404, "no such resource");
}

enum MHD_Result tbs_api_handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **con_cls)
{
    (void)version;
    tbs_api *a = cls;
    if (!strcmp(method, "POST")) {
        req *q = *con_cls;
        if (!q) {   /* the first call: headers only */
            if (!(q = calloc(1, sizeof *q))) return MHD_NO;
            *con_cls = q;
            return MHD_YES;
        }
        if (*size) {   /* a piece of the body */
            if (q->n + *size > a->max_body) q->too_big = 1;
            if (!q->too_big) {
                if (q->n + *size + 1 > q->cap) {
                    size_t cap = (q->n + *size + 1) * 2;
                    char *nb = realloc(q->body, cap);
                    if (!nb) return MHD_NO;
                    q->body = nb;
                    q->cap = cap;
                }
                memcpy(q->body + q->n, data, *size);
                q->n += *size;
                q->body[q->n] = 0;
            }
            *size = 0;
            return MHD_YES;
        }
        if (strcmp(url, "/api/v1/submissions")) return error(a, c, method, url, 404, "no such resource");
        return post_submission(a, c, url, q);
    }
    if (!strcmp(method, "GET") || !strcmp(method, "HEAD")) return get(a, c, url);
    return error(a, c, method, url, 405, "method not allowed");
}

void tbs_api_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    (void)cls; (void)c; (void)t;
    req *q = *con_cls;
    if (q) { free(q->body); free(q); }
    *con_cls = NULL;
}
