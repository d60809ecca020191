/* pages.c - the leaderboard's HTML pages (see pages.h): routing a page URL, the frame every page
 * shares, the list of leaderboards, one board with its chart, and error pages. A submission's
 * detail page is in pages_submission.c. Every string that came from a document, the store or
 * the URL goes out through tbs_html_text or tbs_html_url, never through a format. */
#define _GNU_SOURCE
#include "pages.h"
#include "pages_int.h"
#include "html.h"
#include "rank.h"
#include "repro.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *reason(unsigned status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    default: return "Internal Server Error";
    }
}

void tbs_page_head(tbs_html *h, const char *title)
{
    tbs_html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    tbs_html_text(h, title);
    tbs_html_raw(h, " - tilebench leaderboard</title>\n<style>\n"
        "body{font:15px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:74em;padding:0 1em;color:#222}\n"
        "table{border-collapse:collapse;margin:.6em 0 1.4em}td,th{padding:.25em .6em;border-bottom:1px solid #ddd;"
        "text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
        "code{font-size:90%;word-break:break-all}.nr{color:#a40}.rp{color:#070}.muted{color:#666}\n"
        "header a{font-weight:600;text-decoration:none}footer{margin-top:2em;color:#666;font-size:90%}\n"
        "svg.chart{max-width:100%;height:auto;background:#fafafa}svg .axis{stroke:#444}svg .grid{stroke:#e4e4e4}\n"
        "svg .line{fill:none;stroke:#36c;stroke-width:2}svg circle{fill:#36c}svg text{font-size:11px;fill:#333}\n"
        "svg text.v{fill:#036}\n"
        "</style></head><body>\n<header><a href=\"/\">tilebench leaderboard</a></header>\n<main>\n");
}

void tbs_page_foot(tbs_html *h)
{
    tbs_html_fmt(h, "</main>\n<footer>Rates are the server's own: the shape's work (a GEMM's 2&middot;m&middot;n&middot;k"
                 "&middot;batch, an attention problem's 4&middot;B&middot;H&middot;D&middot;pairs the mask leaves) over the "
                 "median time; a board ranks the shapes of one operation, never GEMM and attention together; a shape counts only where a result ran, passed validation and was timed. A figure is "
                 "<em>reproduced by N</em> when N other submitters posted the same library (SHA-256), variant and "
                 "shape on the same GPU model with medians inside each other's 95&nbsp;%% intervals widened by "
                 "%.0f&nbsp;%% (the drift one card shows between runs).</footer>\n</body></html>\n",
                 100 * TBS_REPRO_DRIFT);
}

void tbs_page_repro(tbs_html *h, size_t n)
{
    if (n == SIZE_MAX) tbs_html_raw(h, "<span class=\"muted\">&mdash;</span>");
    else if (n) tbs_html_fmt(h, "<span class=\"rp\">reproduced by %zu</span>", n);
    else tbs_html_raw(h, "<span class=\"nr\">not reproduced</span>");
}

/* a shape as a page shows it: a GEMM's m&times;n&times;k[&times;batch], an attention
 * problem's canonical token (its op's text: 4x32x4096x4096x128:causal:hkv=8) */
static void shape_html(tbs_html *h, const tbs_shape *s)
{
    if (s->op == TB_OP_ATTENTION_FWD) {
        char tok[96];
        tbs_shape_text(s, tok, sizeof tok);
        tbs_html_raw(h, "<code class=\"attn\">");
        tbs_html_text(h, tok);
        tbs_html_raw(h, "</code>");
        return;
    }
    tbs_html_fmt(h, "%lld&times;%lld&times;%lld", (long long)s->m, (long long)s->n, (long long)s->k);
    if (s->batch > 1) tbs_html_fmt(h, "&times;%lld", (long long)s->batch);
}

void tbs_page_shape(tbs_html *h, const tb_sub_result *r)
{
    tbs_shape s;
    tb_sub_result_shape(r, &s);
    shape_html(h, &s);
}

void tbs_page_sub_link(tbs_html *h, int64_t id)
{
    tbs_html_fmt(h, "<a href=\"/submissions/%lld\">#%lld</a>", (long long)id, (long long)id);
}

static void board_link(tbs_html *h, const char *set, const char *gpu)
{
    tbs_html_raw(h, "<a href=\"/leaderboards/");
    tbs_html_url(h, set);
    tbs_html_raw(h, "/");
    tbs_html_url(h, gpu);
    tbs_html_raw(h, "\">");
    tbs_html_text(h, set);
    tbs_html_raw(h, " on ");
    tbs_html_text(h, gpu);
    tbs_html_raw(h, "</a>");
}

char *tbs_page_error(unsigned status, const char *why)
{
    tbs_html h = { 0 };
    char title[64], msg[64];
    snprintf(title, sizeof title, "%u %s", status, reason(status));
    tbs_page_head(&h, title);
    tbs_html_fmt(&h, "<h1>%s</h1>\n<p id=\"error\">", title);
    tbs_html_text(&h, why);
    tbs_html_raw(&h, "</p>\n<p><a href=\"/\">All leaderboards</a></p>\n");
    tbs_page_foot(&h);
    return tbs_html_take(&h, msg, sizeof msg);
}

/* an error page with code and why into h */
static int error_page(tbs_html *h, unsigned *status, unsigned code, const char *why)
{
    *status = code;
    char *p = tbs_page_error(code, why);
    if (!p) return -1;
    tbs_html_raw(h, p);
    free(p);
    return 0;
}

/* ---- / : the leaderboards ---------------------------------------------------------------- */

typedef struct index_ctx {
    tbs_store *st;
    const tbs_sets *sets;
    tbs_html *h;
    size_t *counts, rows;
    int rc;
    char *msg;
    size_t len;
} index_ctx;

static int index_gpu(void *c_, const char *gpu, int64_t submissions)
{
    index_ctx *c = c_;
    if ((c->rc = tbs_rank_counts(c->st, c->sets, gpu, c->counts, c->msg, c->len))) return 1;
    size_t any = 0;
    for (size_t k = 0; k < c->sets->n; k++) {
        if (!c->counts[k]) continue;
        any++;
        c->rows++;
        tbs_html_raw(c->h, "<tr><td>");
        board_link(c->h, c->sets->v[k].name, gpu);
        tbs_html_raw(c->h, "</td><td>");
        tbs_html_text(c->h, c->sets->v[k].name);
        tbs_html_raw(c->h, "</td><td>");
        tbs_html_text(c->h, gpu);
        tbs_html_fmt(c->h, "</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n", c->counts[k],
                     c->sets->v[k].n);
    }
    if (!any) {   /* stored, but on no set loaded now */
        tbs_html_raw(c->h, "<tr><td class=\"muted\">(no set)</td><td>&mdash;</td><td>");
        tbs_html_text(c->h, gpu);
        tbs_html_fmt(c->h, "</td><td class=\"n\">0 of %lld</td><td></td></tr>\n", (long long)submissions);
    }
    return 0;
}

static int page_index(tbs_store *st, const tbs_sets *sets, tbs_html *h, char *msg, size_t len)
{
    tbs_page_head(h, "Leaderboards");
    tbs_html_raw(h, "<h1>Leaderboards</h1>\n<p>One board per shape set and GPU model; each ranks that model's "
                    "submissions by the geometric mean of their best validated rate per shape of the set.</p>\n"
                    "<table id=\"leaderboards\"><thead><tr><th>board</th><th>shape set</th><th>GPU model</th>"
                    "<th>ranked submissions</th><th>shapes in set</th></tr></thead><tbody>\n");
    index_ctx c = { st, sets, h, calloc(sets->n ? sets->n : 1, sizeof(size_t)), 0, 0, msg, len };
    if (!c.counts) { snprintf(msg, len, "out of memory"); return -1; }
    int rc = tbs_gpu_models(st, index_gpu, &c, msg, len);
    if (rc) c.rc = rc;
    free(c.counts);
    if (c.rc) return c.rc;
    tbs_html_raw(h, "</tbody></table>\n");
    if (!c.rows) tbs_html_raw(h, "<p id=\"empty\">No submissions yet.</p>\n");
    tbs_page_foot(h);
    return 0;
}

/* ---- /leaderboards/{set}/{gpu} ----------------------------------------------------------- */

static double epoch(const char *at)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = strptime(at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return end && !*end ? (double)timegm(&tm) : 0;
}

static void ranking(tbs_html *h, const tbs_board *b)
{
    tbs_html_raw(h, "<h2>Ranking</h2>\n<table id=\"ranking\"><thead><tr><th>rank</th><th>submitter</th>"
                    "<th>best variant</th><th>geomean TFLOP/s</th><th>shapes</th><th>% of cublaslt</th>"
                    "<th>submitted (UTC)</th><th>submission</th></tr></thead><tbody>\n");
    for (size_t i = 0; i < b->n; i++) {
        const tbs_entry *e = &b->e[i];
        tbs_html_fmt(h, "<tr class=\"entry\"><td class=\"n\">%zu</td><td class=\"submitter\">", i + 1);
        tbs_html_text(h, e->sub->who);
        tbs_html_raw(h, "</td><td class=\"variant\">");
        tbs_html_text(h, e->best);
        tbs_html_fmt(h, "</td><td class=\"n\">%.1f</td><td class=\"n\">%zu of %zu</td><td class=\"n\">", e->geomean,
                     e->counted, b->set->n);
        if (isfinite(e->vs_cublaslt)) tbs_html_fmt(h, "%.1f&nbsp;%%", 100 * e->vs_cublaslt);
        else tbs_html_raw(h, "&mdash;");
        tbs_html_raw(h, "</td><td><time>");
        tbs_html_text(h, e->sub->at);
        tbs_html_raw(h, "</time></td><td>");
        tbs_page_sub_link(h, e->sub->id);
        tbs_html_raw(h, "</td></tr>\n");
    }
    tbs_html_raw(h, "</tbody></table>\n");
}

static void per_shape(tbs_html *h, const tbs_board *b)
{
    tbs_html_raw(h, "<h2>Best per shape</h2>\n<table id=\"best\"><thead><tr><th>shape</th><th>best TFLOP/s</th>"
                    "<th>variant</th><th>submitter</th><th>submission</th><th>reproduced</th></tr></thead><tbody>\n");
    for (size_t k = 0; k < b->set->n; k++) {
        const tbs_shape *s = &b->set->s[k];
        const tbs_entry *e = tbs_board_best(b, k);
        tbs_html_raw(h, "<tr><td>");
        shape_html(h, s);
        if (!e) { tbs_html_raw(h, "</td><td colspan=\"5\" class=\"muted\">no validated result</td></tr>\n"); continue; }
        const tbs_cell *c = &e->cell[k];
        tbs_html_fmt(h, "</td><td class=\"n\">%.1f</td><td>", c->tflops);
        tbs_html_text(h, c->r->name);
        tbs_html_raw(h, "</td><td>");
        tbs_html_text(h, e->sub->who);
        tbs_html_raw(h, "</td><td>");
        tbs_page_sub_link(h, e->sub->id);
        tbs_html_raw(h, "</td><td class=\"repro\">");
        tbs_page_repro(h, c->reproduced_by);
        tbs_html_raw(h, "</td></tr>\n");
    }
    tbs_html_raw(h, "</tbody></table>\n");
}

static int history(tbs_html *h, const tbs_board *b, char *msg, size_t len)
{
    tbs_chart_point *p = calloc(b->nhist ? b->nhist : 1, sizeof *p);
    char **label = calloc(b->nhist ? b->nhist : 1, sizeof *label);
    int rc = p && label ? 0 : -1;
    for (size_t i = 0; !rc && i < b->nhist; i++) {
        const tbs_point *q = &b->hist[i];
        if (asprintf(&label[i], "submission #%lld by %s, %s: %.1f TFLOP/s (board best %.1f)", (long long)q->e->sub->id,
                     q->e->sub->who, q->e->sub->at, q->e->geomean, q->best) < 0) { label[i] = NULL; rc = -1; break; }
        p[i] = (tbs_chart_point){ epoch(q->e->sub->at), q->best, label[i] };
    }
    if (!rc) {
        tbs_html_raw(h, "<h2>History</h2>\n<figure id=\"history\">\n");
        tbs_html_chart(h, p, b->nhist, "best geomean TFLOP/s");
        tbs_html_raw(h, "<figcaption>The board's best geometric mean after each submission, in the order they came."
                        "</figcaption>\n</figure>\n<table id=\"history-points\"><thead><tr><th>submission</th>"
                        "<th>submitted (UTC)</th><th>its geomean TFLOP/s</th><th>board best</th></tr></thead><tbody>\n");
        for (size_t i = 0; i < b->nhist; i++) {
            tbs_html_raw(h, "<tr><td>");
            tbs_page_sub_link(h, b->hist[i].e->sub->id);
            tbs_html_raw(h, "</td><td>");
            tbs_html_text(h, b->hist[i].e->sub->at);
            tbs_html_fmt(h, "</td><td class=\"n\">%.1f</td><td class=\"n\">%.1f</td></tr>\n", b->hist[i].e->geomean,
                         b->hist[i].best);
        }
        tbs_html_raw(h, "</tbody></table>\n");
    } else snprintf(msg, len, "out of memory");
    for (size_t i = 0; label && i < b->nhist; i++) free(label[i]);
    free(label);
    free(p);
    return rc;
}

static int page_board(tbs_store *st, const tbs_set *set, const char *gpu, tbs_html *h, unsigned *status,
                      char *msg, size_t len)
{
    tbs_board b;
    int rc = tbs_board_load(st, set, gpu, &b, msg, len);
    if (!rc && !b.n) {
        char why[512];
        snprintf(why, sizeof why, "no submission of the GPU model '%s' has a validated result on the shape set '%s'",
                 gpu, set->name);
        rc = error_page(h, status, 404, why);
    } else if (!rc) {
        char title[256];
        snprintf(title, sizeof title, "%s on %s", set->name, gpu);
        tbs_page_head(h, title);
        tbs_html_raw(h, "<h1>");
        tbs_html_text(h, set->name);
        tbs_html_raw(h, " on ");
        tbs_html_text(h, gpu);
        tbs_html_fmt(h, "</h1>\n<p class=\"op\">operation: <code>%s</code></p>\n", tbs_set_op_name(set));
        tbs_html_fmt(h, "<p>%zu submission%s ranked by the geometric mean of each one's best validated "
                     "TFLOP/s over the %zu shapes of the set (a shape it did not time is left out of its mean; "
                     "&ldquo;shapes&rdquo; says how many counted). %% of cublaslt: the same geometric mean of best "
                     "over the submission's own <code>cublaslt</code> rows on the shapes where it has them.</p>\n",
                     b.n, b.n == 1 ? "" : "s", set->n);
        ranking(h, &b);
        per_shape(h, &b);
        rc = history(h, &b, msg, len);
        tbs_page_foot(h);
    }
    tbs_board_free(&b);
    return rc;
}

/* ---- routing ----------------------------------------------------------------------------- */

int tbs_pages_route(const char *url)
{
    return !strcmp(url, "/") || !strcmp(url, "/leaderboards") || !strncmp(url, "/leaderboards/", 14) ||
           !strncmp(url, "/submissions/", 13);
}

int tbs_page(tbs_store *st, const tbs_sets *sets, const char *url, unsigned *status, char **html,
             char *msg, size_t len)
{
    tbs_html h = { 0 };
    int rc = 0;
    *status = 200;
    *html = NULL;
    if (len) msg[0] = 0;
    if (!strcmp(url, "/") || !strcmp(url, "/leaderboards") || !strcmp(url, "/leaderboards/")) {
        rc = page_index(st, sets, &h, msg, len);
    } else if (!strncmp(url, "/leaderboards/", 14)) {
        const char *rest = url + 14, *slash = strchr(rest, '/');
        char set[64];
        size_t sl = slash ? (size_t)(slash - rest) : 0;
        const tbs_set *s = NULL;
        if (slash && sl && sl < sizeof set) {
            memcpy(set, rest, sl);
            set[sl] = 0;
            s = tbs_sets_find(sets, set);
        }
        if (!slash || !slash[1]) rc = error_page(&h, status, 404, "want /leaderboards/SET/GPU");
        else if (!s) rc = error_page(&h, status, 404, "no such shape set");
        else rc = page_board(st, s, slash + 1, &h, status, msg, len);
    } else if (!strncmp(url, "/submissions/", 13)) {
        const char *n = url + 13;
        if (!*n || strlen(n) > 18 || strspn(n, "0123456789") != strlen(n))
            rc = error_page(&h, status, 400, "a submission id is a number");
        else rc = tbs_page_submission(st, strtoll(n, NULL, 10), &h, status, msg, len);
    } else {
        rc = error_page(&h, status, 404, "no such page");
    }
    if (rc) {   /* -1, or the store's TBS_STORE_UNAVAILABLE (the caller answers 503) */
        if (!msg[0] || h.oom) snprintf(msg, len, "out of memory while writing a page");
        tbs_html_free(&h);
        return rc == TBS_STORE_UNAVAILABLE && !h.oom ? rc : -1;
    }
    *html = tbs_html_take(&h, msg, len);
    return *html ? 0 : -1;
}
