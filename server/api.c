/* api.c - the JSON API of tilebench-server (see api.h) on libmicrohttpd: POST
 * /api/v1/submissions (bearer token, idempotency key, body limit, the shared strict parser),
 * GET /api/v1/submissions/{id}, GET /api/v1/leaderboards. Every answer is JSON; every error a
 * 4xx naming what is wrong; one log line per request. Storage only through store.h. The HTML
 * pages (/, /leaderboards/..., /submissions/...) are rendered by pages.c and sent here by
 * answer_html with their security headers. The leaderboards (JSON and HTML) and the list of
 * them are kept rendered in the cache (cache.h) until a submission of their GPU model is stored:
 * a read takes the board's generation from the store (tbs_board_generation: in the process for
 * SQLite, one indexed read for PostgreSQL, where other processes store submissions too) before
 * it asks the cache, and the store moves it on with every submission it takes. A store that
 * cannot reach its database (TBS_STORE_UNAVAILABLE) makes the answer 503 with Retry-After, and
 * every 5xx's log line says why (one line). */
#define _GNU_SOURCE
#include "api.h"
#include "cache.h"
#include "store.h"
#include "rank.h"
#include "pages.h"
#include "format/submission_parse.h"
#include "common/sha256.h"
#include "common/tb.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One POST in progress: its body so far, when its headers arrived, the token they named, and
 * whether it was answered already (from its headers alone: 401, 404, 413, 429). */
typedef struct req { char *body; size_t n, cap; int too_big, answered; double started; int64_t token_id; } req;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the HTTP status of a store failure: 503 when the database could not be reached (retry), else 500 */
static unsigned int store_status(int rc) { return rc == TBS_STORE_UNAVAILABLE ? 503 : 500; }

/* the request's log line: "SECONDS METHOD URL STATUS", and for a 5xx the reason (one line) */
static void log_line(tbs_api *a, const char *method, const char *url, unsigned int code, const char *why)
{
    if (!a->log) return;
    char shown[256], reason[600] = "";
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (code >= 500 && why && *why) {
        reason[0] = ' ';
        tb_text_escape(why, reason + 1, sizeof reason - 1, 0);
    }
    fprintf(a->log, "%lld %s %s %u%s\n", (long long)ts.tv_sec, method, tb_text_escape(url, shown, sizeof shown, 0),
            code, reason);
    fflush(a->log);
}

void tbs_token_hash(const char *token, char out[65])
{
    tb_sha256_hex(token, strlen(token), NULL, 0, out);
}

/* a JSON answer; why: the reason a 5xx's log line gives (NULL for others) */
static enum MHD_Result answer_why(tbs_api *a, struct MHD_Connection *c, const char *method, const char *url,
                                  unsigned int code, const char *json, const char *why)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(r, "Content-Type", "application/json");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (code == 503) MHD_add_response_header(r, "Retry-After", "1");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    log_line(a, method, url, code, why);
    return ret;
}

static enum MHD_Result answer(tbs_api *a, struct MHD_Connection *c, const char *method, const char *url,
                              unsigned int code, const char *json)
{
    return answer_why(a, c, method, url, code, json, NULL);
}

/* An HTML page (malloc'd; taken and freed here; NULL: out of memory) with the headers every
 * page carries: no script may run, nothing may be fetched but inline styles and data: images,
 * and the type is not to be sniffed. */
static enum MHD_Result answer_html_why(tbs_api *a, struct MHD_Connection *c, const char *url, unsigned int code, char *html,
                                       const char *why)
{
    static const char oom[] = "<!DOCTYPE html><title>500</title><p>out of memory</p>";
    struct MHD_Response *r = html ? MHD_create_response_from_buffer(strlen(html), html, MHD_RESPMEM_MUST_FREE)
                                  : MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
    if (!r) { free(html); return MHD_NO; }
    if (!html) code = 500;
    MHD_add_response_header(r, "Content-Type", "text/html; charset=utf-8");
    MHD_add_response_header(r, "Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    if (code == 503) MHD_add_response_header(r, "Retry-After", "1");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    log_line(a, "GET", url, code, html ? why : "out of memory");
    return ret;
}

static enum MHD_Result answer_html(tbs_api *a, struct MHD_Connection *c, const char *url, unsigned int code, char *html)
{
    return answer_html_why(a, c, url, code, html, NULL);
}

static enum MHD_Result error(tbs_api *a, struct MHD_Connection *c, const char *method, const char *url,
                             unsigned int code, const char *why)
{
    cJSON *o = cJSON_CreateObject();
    char clean[1024];
    cJSON_AddStringToObject(o, "error", tb_text_utf8_clean(why, clean, sizeof clean));
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    enum MHD_Result r = answer_why(a, c, method, url, code, t ? t : "{\"error\":\"out of memory\"}", why);
    cJSON_free(t);
    return r;
}

/* Is every result of s on a shape of one of the sets (issue 18: "any shape outside the set" is
 * refused)? 0, or -1 with msg naming the first result that is not, by its index, variant and
 * shape, and the sets loaded. A submission without results has nothing to rank: -1 too. */
static int on_the_sets(const tbs_sets *sets, const tb_submission *s, char *msg, size_t len)
{
    if (!s->n) { snprintf(msg, len, "results: no result, so nothing to rank"); return -1; }
    for (size_t i = 0; i < s->n; i++) {
        const tb_sub_result *r = &s->r[i];
        int on = 0;
        for (size_t k = 0; !on && k < sets->n; k++)
            for (size_t j = 0; !on && j < sets->v[k].n; j++)
                on = tbs_on(r, &sets->v[k].s[j]);
        if (on) continue;
        char names[512] = "";
        for (size_t k = 0, at = 0; k < sets->n && at < sizeof names; k++)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", k ? ", " : "", sets->v[k].name);
        snprintf(msg, len, "results[%zu] (variant %s, shape %s): the shape is on no leaderboard set (%s)",
                 i, r->name, r->token, names);
        return -1;
    }
    return 0;
}

/* counts, in *(int *)cls, the headers that frame a body */
static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind; (void)value;
    if (key && (!strcasecmp(key, "Content-Length") || !strcasecmp(key, "Transfer-Encoding"))) ++*(int *)cls;
    return MHD_YES;
}

/* What the headers alone decide, before a byte of the body is read: the path (404), the bearer
 * token (401: none, or unknown, or revoked; the scheme is case-insensitive), a Content-Length
 * above the limit (413), the token's rate (429; refused requests count too). 0 when the body is
 * wanted (q->token_id set), else the answer's code with why filled. */
static unsigned int post_headers(tbs_api *a, struct MHD_Connection *c, const char *url, req *q, char *why, size_t len)
{
    if (strcmp(url, "/api/v1/submissions")) { snprintf(why, len, "no such resource"); return 404; }
    const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
    if (!auth || strncasecmp(auth, "Bearer ", 7) || !auth[7]) { snprintf(why, len, "a bearer token is needed"); return 401; }
    char hash[65];
    tbs_token_hash(auth + 7, hash);
    int rc = tbs_token_find(a->store, hash, &q->token_id, why, len);
    if (rc) return store_status(rc);
    if (!q->token_id) { snprintf(why, len, "unknown or revoked token"); return 401; }
    /* two Content-Length headers, or one beside chunked transfer: which one frames the body
     * is ambiguous (a request smuggled past a proxy), so neither is trusted (RFC 9112, 6.3) */
    int framing = 0;
    MHD_get_connection_values(c, MHD_HEADER_KIND, count_length, &framing);
    if (framing > 1) {
        snprintf(why, len, "an ambiguous body length (Content-Length twice, or with Transfer-Encoding)");
        return 400;
    }
    const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > a->max_body) { snprintf(why, len, "body larger than the limit (%zu bytes)", a->max_body); return 413; }
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    if (key && (!*key || strlen(key) > 128 || strspn(key, "!#$%&'*+-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ^_`"
                                                         "abcdefghijklmnopqrstuvwxyz|~:/=") != strlen(key))) {
        snprintf(why, len, "Idempotency-Key: want 1 to 128 letters, digits or -._~:/=!#$%%&'*+^`|");
        return 400;
    }
    int ok = 0;   /* the token's bucket: in this process (SQLite) or shared by every process (PostgreSQL) */
    if ((rc = tbs_rate_take(a->store, q->token_id, a->rate_per_min, &ok, why, len))) return store_status(rc);
    if (!ok) { snprintf(why, len, "too many submissions: slow down"); return 429; }
    return 0;
}

/* The whole body has arrived (its headers passed post_headers): parse it strictly (400 naming
 * the field; 422 for a document of the right grammar that breaks a rule beyond it, a result on
 * a shape of no leaderboard set, a GPU whose peak is unknown, or a figure above that peak),
 * then store it whole under its idempotency key (the header, else the body's SHA-256): 201
 * with the new id; the same key with the same body again 200 with the first id, and with
 * another body 422 (the key names another submission; draft-ietf-httpapi-idempotency-key-
 * header, section 2.7). Nothing is written unless the answer is 201; a 201 makes the cached
 * boards of the document's GPU model stale. */
static enum MHD_Result post_submission(tbs_api *a, struct MHD_Connection *c, const char *url, req *q)
{
    const char *m = "POST";
    if (q->too_big) return error(a, c, m, url, 413, "body larger than the limit");
    char msg[TB_MSG_LEN];
    tb_submission s;
    int rule = 0;
    if (tb_submission_parse_rules(q->body ? q->body : "", q->n, &s, &rule, msg, sizeof msg))
        return error(a, c, m, url, rule ? 422 : 400, msg);
    if ((a->sets && a->sets->n && on_the_sets(a->sets, &s, msg, sizeof msg)) ||
        tb_submission_plausible(&s, a->allow_unknown_gpu, msg, sizeof msg)) {
        tb_submission_free(&s);
        return error(a, c, m, url, 422, msg);
    }
    const char *key = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Idempotency-Key");
    char own[65];
    if (!key) { tb_sha256_hex(q->body, q->n, NULL, 0, own); key = own; }
    int64_t id = 0;
    int existed = 0;
    /* the store moves the model's generation on with the row: cached boards are stale from now */
    int rc = tbs_submission_put(a->store, q->token_id, key, s.gpu_name, q->body, q->n, &id, &existed, msg, sizeof msg);
    tb_submission_free(&s);
    if (rc) return error(a, c, m, url, store_status(rc), msg);
    if (existed) {   /* a replay: of this very document, or a key reused for another one? */
        char *first = NULL;
        if ((rc = tbs_submission_get(a->store, id, &first, msg, sizeof msg))) return error(a, c, m, url, store_status(rc), msg);
        int same = first && strlen(first) == q->n && !memcmp(first, q->body, q->n);
        free(first);
        if (!same) {
            snprintf(msg, sizeof msg, "Idempotency-Key already used for another document (submission %lld)", (long long)id);
            return error(a, c, m, url, 422, msg);
        }
    }
    char out[96];
    snprintf(out, sizeof out, "{\"id\":%lld,\"replayed\":%s}", (long long)id, existed ? "true" : "false");
    return answer(a, c, m, url, existed ? 200 : 201, out);
}

/* Is the answer to url kept in the cache, and whose submissions does it read? 1 for a board,
 * /leaderboards/SET/GPU or /api/v1/leaderboards/SET/GPU (*gpu: the model in url), and for the
 * list of boards, / or /leaderboards[/] (*gpu NULL: every model's); 0 for anything else. */
static int cached_route(const char *url, const char **gpu)
{
    *gpu = NULL;
    if (!strcmp(url, "/") || !strcmp(url, "/leaderboards") || !strcmp(url, "/leaderboards/")) return 1;
    const char *rest = !strncmp(url, "/leaderboards/", 14) ? url + 14
                     : !strncmp(url, "/api/v1/leaderboards/", 21) ? url + 21 : NULL;
    const char *slash = rest ? strchr(rest, '/') : NULL;
    if (!slash || slash == rest || !slash[1]) return 0;
    *gpu = slash + 1;
    return 1;
}

static enum MHD_Result get(tbs_api *a, struct MHD_Connection *c, const char *url)
{
    char msg[TB_MSG_LEN];
    const char *gpu = NULL;
    int keep = a->cache && cached_route(url, &gpu);
    int page = tbs_pages_route(url);
    uint64_t gen = 0;
    int rc = keep ? tbs_board_generation(a->store, gpu, &gen, msg, sizeof msg) : 0;   /* before the store is read */
    if (rc) {   /* the generation is unknown, so a kept text may be stale: none is served */
        if (page) return answer_html_why(a, c, url, store_status(rc), tbs_page_error(store_status(rc), msg), msg);
        return error(a, c, "GET", url, store_status(rc), msg);
    }
    if (keep) {
        size_t n = 0;
        char *t = tbs_cache_get(a->cache, url, gen, &n);
        if (t && page) return answer_html(a, c, url, 200, t);
        if (t) {
            enum MHD_Result r = answer(a, c, "GET", url, 200, t);
            free(t);
            return r;
        }
    }
    if (page) {   /* an HTML page; url arrives %-decoded */
        static const tbs_sets none = { NULL, 0 };
        unsigned status = 200;
        char *html = NULL;
        if ((rc = tbs_page(a->store, a->sets ? a->sets : &none, url, &status, &html, msg, sizeof msg))) {
            status = store_status(rc);
            html = tbs_page_error(status, msg);
        }
        if (keep && status == 200 && html) tbs_cache_put(a->cache, url, gen, html, strlen(html));
        return answer_html_why(a, c, url, status, html, rc ? msg : NULL);
    }
    if (!strcmp(url, "/api/v1/leaderboards")) {
        char *j = NULL;
        if ((rc = tbs_leaderboards_json(a->store, &j, msg, sizeof msg))) return error(a, c, "GET", url, store_status(rc), msg);
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
        if ((rc = tbs_rank_json(a->store, st, slash + 1, &j, msg, sizeof msg))) return error(a, c, "GET", url, store_status(rc), msg);
        if (keep && strcmp(j, "[]")) tbs_cache_put(a->cache, url, gen, j, strlen(j));   /* not a model without a board */
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
        if ((rc = tbs_submission_get(a->store, strtoll(n, NULL, 10), &doc, msg, sizeof msg)))
            return error(a, c, "GET", url, store_status(rc), msg);
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
        if (!q) {   /* the first call: headers only; answered now when they decide */
            if (!(q = calloc(1, sizeof *q))) return MHD_NO;
            *con_cls = q;
            q->started = now_s();
            char why[TB_MSG_LEN];
            unsigned int code = post_headers(a, c, url, q, why, sizeof why);
            if (!code) return MHD_YES;
            q->answered = 1;   /* libmicrohttpd then closes the connection without reading the body */
            return error(a, c, method, url, code, why);
        }
        if (q->answered) { *size = 0; return MHD_YES; }
        if (*size) {   /* a piece of the body */
            /* a body still arriving body_timeout s after its headers (a trickle that each byte
             * keeps under the idle timeout) is cut: the connection is closed, unanswered */
            if (a->body_timeout_s > 0 && now_s() - q->started > a->body_timeout_s) return MHD_NO;
            if (q->n + *size > a->max_body) q->too_big = 1;
            if (!q->too_big) {
                if (q->n + *size + 1 > q->cap) {
                    size_t cap = (q->n + *size + 1) * 2;
                    if (cap > a->max_body + 1) cap = a->max_body + 1;
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
