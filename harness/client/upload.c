/* upload.c - one submission sent to a leaderboard server (see upload.h): libcurl does the
 * HTTP and the TLS; this file decides what is retried and what a refusal says. */
#define _GNU_SOURCE
#include "client/upload.h"
#include "common/sha256.h"
#include "common/tb.h"
#include "common/text.h"
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BODY_MAX (64 * 1024)   /* what is kept of an answer */

void tb_upload_opts_default(tb_upload_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timeout_s = 30;
    o->retries = 3;
    o->backoff_s = 1;
}

typedef struct body { char buf[BODY_MAX + 1]; size_t n; } body;

static size_t on_data(char *p, size_t size, size_t nmemb, void *ctx)
{
    body *b = ctx;
    size_t n = size * nmemb, room = BODY_MAX - b->n;
    memcpy(b->buf + b->n, p, n < room ? n : room);
    b->n += n < room ? n : room;
    b->buf[b->n] = 0;
    return n;
}

static void sleep_s(double s)
{
    struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) != 0) {}
}

/* The server's reason: the "error" member of a JSON answer, else the text itself. */
static void reason_of(const body *b, char *out, size_t cap)
{
    char raw[1024];
    cJSON *j = cJSON_Parse(b->buf);
    const cJSON *e = j ? cJSON_GetObjectItemCaseSensitive(j, "error") : NULL;
    snprintf(raw, sizeof raw, "%s", cJSON_IsString(e) ? e->valuestring : b->buf);
    cJSON_Delete(j);
    tb_text_escape(raw, out, cap, 0);
}

static int plain_http_allowed(const char *url)
{
    return !strncmp(url, "http://127.0.0.1", 16) || !strncmp(url, "http://localhost", 16) ||
           !strncmp(url, "http://[::1]", 12);
}

int tb_upload(const tb_upload_opts *o, const char *doc, size_t n, tb_upload_result *r,
              char *msg, size_t len)
{
    memset(r, 0, sizeof *r);
    if (!o->server || !o->token || !*o->token)
        return tb_fail(msg, len, TB_EUSAGE, "no server or no token");
    if (strncmp(o->server, "https://", 8) && !plain_http_allowed(o->server))
        return tb_fail(msg, len, TB_EUSAGE, "server '%s' is not https:// (plain http only on "
                       "127.0.0.1 or localhost)", o->server);
    if (tb_sha256_hex(doc, n, NULL, 0, r->key)) return tb_fail(msg, len, TB_ENOMEM, "cannot hash the document");
    char *url = NULL, *auth = NULL, *idem = NULL;
    size_t sl = strlen(o->server);
    if (asprintf(&url, "%.*s/api/v1/submissions", (int)(sl && o->server[sl - 1] == '/' ? sl - 1 : sl),
                 o->server) < 0 ||
        asprintf(&auth, "Authorization: Bearer %s", o->token) < 0 ||
        asprintf(&idem, "Idempotency-Key: %s", r->key) < 0)
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    static body b;
    int rc = TB_EIO;
    char last[512] = "no attempt made";
    double pause = o->backoff_s;
    for (int a = 0; a <= o->retries; a++) {
        if (a) { sleep_s(pause); pause *= 2; }
        CURL *c = curl_easy_init();
        if (!c) { rc = tb_fail(msg, len, TB_ENOMEM, "cannot start libcurl"); break; }
        struct curl_slist *h = NULL;
        h = curl_slist_append(h, "Content-Type: application/json");
        h = curl_slist_append(h, auth);
        h = curl_slist_append(h, idem);
        char errbuf[CURL_ERROR_SIZE] = "";
        b.n = 0;
        b.buf[0] = 0;
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, doc);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->timeout_s * 1000));
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
        if (o->ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, o->ca_file);
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);   /* a redirect would drop the POST */
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_USERAGENT, "tilebench/" TB_VERSION);
        CURLcode cr = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(h);
        curl_easy_cleanup(c);
        r->attempts = a + 1;
        r->status = status;
        if (cr != CURLE_OK) {
            snprintf(last, sizeof last, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cr));
            /* a certificate the client cannot verify will not verify on a retry either */
            if (cr == CURLE_PEER_FAILED_VERIFICATION || cr == CURLE_SSL_CACERT_BADFILE ||
                cr == CURLE_SSL_CONNECT_ERROR || cr == CURLE_URL_MALFORMAT ||
                cr == CURLE_UNSUPPORTED_PROTOCOL)
                break;
            continue;
        }
        if (status >= 200 && status < 300) {
            cJSON *j = cJSON_Parse(b.buf);
            const cJSON *id = j ? cJSON_GetObjectItemCaseSensitive(j, "id") : NULL;
            if (cJSON_IsNumber(id)) snprintf(r->id, sizeof r->id, "%.0f", id->valuedouble);
            else if (cJSON_IsString(id)) tb_text_escape(id->valuestring, r->id, sizeof r->id, 0);
            cJSON_Delete(j);
            rc = TB_OK;
            break;
        }
        char why[600];
        reason_of(&b, why, sizeof why);
        if (status >= 400 && status < 500) {
            rc = tb_fail(msg, len, TB_EUSAGE, "the server refused the submission (HTTP %ld): %s",
                         status, why[0] ? why : "no reason given");
            break;
        }
        snprintf(last, sizeof last, "HTTP %ld: %s", status, why[0] ? why : "no reason given");
    }
    if (rc == TB_EIO)
        tb_fail(msg, len, TB_EIO, "could not submit to '%s' after %d attempt%s: %s", o->server,
                r->attempts, r->attempts == 1 ? "" : "s", last);
    free(url);
    free(auth);
    free(idem);
    return rc;
}
