/* upload.h - the leaderboard client's one request: a submission document (report/submission.h)
 * POSTed to SERVER/api/v1/submissions through libcurl, with TLS verification on, a bearer
 * token, an idempotency key (so a retried upload never counts twice), a timeout, and bounded
 * retries with exponential backoff on network errors and 5xx answers. Never prints. */
#ifndef TB_UPLOAD_H
#define TB_UPLOAD_H
#include <stddef.h>

typedef struct tb_upload_opts {
    const char *server;           /* https://host[:port] (http:// only for 127.0.0.1/localhost) */
    const char *token;            /* the bearer token */
    const char *ca_file;          /* a CA bundle to trust instead of the system's, or NULL */
    double timeout_s;             /* per attempt (default 30) */
    int retries;                  /* attempts after the first (default 3) */
    double backoff_s;             /* first pause; doubled after each attempt (default 1) */
} tb_upload_opts;

void tb_upload_opts_default(tb_upload_opts *o);

typedef struct tb_upload_result {
    long status;                  /* the last HTTP status, 0 when no answer came */
    int attempts;
    char id[64];                  /* the submission's id on success */
    char key[65];                 /* the idempotency key sent: SHA-256 of the document */
} tb_upload_result;

/* Upload doc (n bytes of JSON). TB_OK (2xx) with r->id; TB_EUSAGE when the server refused it
 * (4xx; msg holds the server's reason, escaped); TB_EIO when no attempt succeeded (network,
 * TLS, 5xx; msg says the last failure); TB_ENOMEM. */
int tb_upload(const tb_upload_opts *o, const char *doc, size_t n, tb_upload_result *r,
              char *msg, size_t len);
#endif
