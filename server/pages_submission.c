/* pages_submission.c - /submissions/{id}, one submission as a page (see pages.h): who sent it
 * and when, the environment it ran in, the options that shape its figures, and per result the
 * variant, its shape, validation, median with interval, the server's own TFLOP/s, the SM clock,
 * energy, "reproduced by" and the `tilebench sweep` command that measures the figure again.
 * The command is built only from values the sweep accepts (each flag below exists in
 * harness/cli/cmd_sweep.c); an option outside them is left out and the page says which. */
#define _GNU_SOURCE
#include "pages.h"
#include "pages_int.h"
#include "rank.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s as one shell word: bare when it holds only safe characters, else in single quotes */
static void shell_word(tbs_html *cmd, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:=/+-") == strlen(s)) {
        tbs_html_raw(cmd, s);
        return;
    }
    tbs_html_raw(cmd, "'");
    for (const char *q = s; *q; q++) {
        if (*q == '\'') tbs_html_raw(cmd, "'\\''");
        else { char c[2] = { *q, 0 }; tbs_html_raw(cmd, c); }
    }
    tbs_html_raw(cmd, "'");
}

static const cJSON *opt(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* the number options[k] when it lies in [lo, hi] (and is whole, when whole): 1, else 0 with
 * k noted as left out (when present) */
static int num(const cJSON *o, const char *k, double lo, double hi, int whole, double *v, tbs_html *left)
{
    const cJSON *x = opt(o, k);
    if (!x) return 0;
    if (cJSON_IsNumber(x) && x->valuedouble >= lo && x->valuedouble <= hi && (!whole || x->valuedouble == floor(x->valuedouble))) {
        *v = x->valuedouble;
        return 1;
    }
    tbs_html_fmt(left, "%s%s", left->n ? ", " : "", k);
    return 0;
}

/* options[k] when it is one of the words in `one_of` (space-separated) */
static const char *word(const cJSON *o, const char *k, const char *one_of, tbs_html *left)
{
    const cJSON *x = opt(o, k);
    if (!x) return NULL;
    if (cJSON_IsString(x) && x->valuestring[0] && !strchr(x->valuestring, ' ')) {
        const char *f = strstr(one_of, x->valuestring);
        size_t l = strlen(x->valuestring);
        if (f && (f == one_of || f[-1] == ' ') && (f[l] == ' ' || !f[l])) return x->valuestring;
    }
    tbs_html_fmt(left, "%s%s", left->n ? ", " : "", k);
    return NULL;
}

/* `tilebench sweep ...` measuring r again with the document's options, into cmd (plain text);
 * the options it had to leave out, comma separated, into left */
static void command(const tb_sub_result *r, const cJSON *o, tbs_html *cmd, tbs_html *left)
{
    const char *colon = strchr(r->name, ':');   /* a gate's base:/head: namespace is no name */
    double v;
    const char *w;
    tbs_html_raw(cmd, "tilebench sweep --filter ");
    shell_word(cmd, colon ? colon + 1 : r->name);
    /* the token: MxNxK[xB], or attention's BxHxSqxSkxD[:causal][:hkv=N] (its characters checked
       by the parser: digits, x, ':', "causal", "hkv=") */
    tbs_html_fmt(cmd, " --shapes %s", r->token);
    if (r->op == TB_OP_GEMM) {   /* sweep takes no layout, padding or alpha/beta for attention */
        tbs_html_fmt(cmd, " --layout %s", r->layouts);   /* [nt]{2}: checked by the parser */
        if (num(o, "pad", 0, 1 << 20, 1, &v, left)) tbs_html_fmt(cmd, " --pad %.0f", v);
        if (num(o, "alpha", -1e6, 1e6, 0, &v, left)) tbs_html_fmt(cmd, " --alpha %.17g", v);
        if (num(o, "beta", -1e6, 1e6, 0, &v, left)) tbs_html_fmt(cmd, " --beta %.17g", v);
    }
    if ((w = word(o, "init", "uniform normal", left))) tbs_html_fmt(cmd, " --init %s", w);
    if (num(o, "seed", 0, 4503599627370495.0, 1, &v, left)) tbs_html_fmt(cmd, " --seed %.0f", v);
    if (num(o, "trials", 2, 100, 1, &v, left)) tbs_html_fmt(cmd, " --trials %.0f", v);
    if (num(o, "warmup", 0, 100000, 1, &v, left)) tbs_html_fmt(cmd, " --warmup %.0f", v);
    if (r->timed) tbs_html_fmt(cmd, " --method %s", r->method);   /* cold, stream or graph: checked by the parser */
    else if ((w = word(o, "method", "auto cold stream graph", left))) tbs_html_fmt(cmd, " --method %s", w);
    if ((w = word(o, "l2", "cold hot", left))) tbs_html_fmt(cmd, " --l2 %s", w);
    const cJSON *stop = opt(o, "stop");
    if (cJSON_IsString(stop) && stop->valuestring[0] && strlen(stop->valuestring) < 256) {
        tbs_html_raw(cmd, " --stop ");
        shell_word(cmd, stop->valuestring);
    } else if (stop) tbs_html_fmt(left, "%sstop", left->n ? ", " : "");
    if (num(o, "pace", 0, 100, 0, &v, left) && v > 0) tbs_html_fmt(cmd, " --pace %.17g", v);
    const cJSON *ne = opt(o, "no_energy");
    if (cJSON_IsTrue(ne) || (cJSON_IsNumber(ne) && ne->valuedouble != 0)) tbs_html_raw(cmd, " --no-energy");
    tbs_html_raw(cmd, " --db reproduce.db");
}

static void ms(tbs_html *h, double v)
{
    if (v >= 1) tbs_html_fmt(h, "%.3f&nbsp;ms", v);
    else tbs_html_fmt(h, "%.2f&nbsp;&micro;s", v * 1e3);
}

static void dd(tbs_html *h, const char *term, const char *text)
{
    tbs_html_fmt(h, "<dt>%s</dt><dd>", term);
    tbs_html_text(h, text);
    tbs_html_raw(h, "</dd>\n");
}

static void environment(tbs_html *h, const tbs_sub *sub)
{
    const tb_submission *s = &sub->s;
    char t[64];
    tbs_html_raw(h, "<h2>Environment</h2>\n<dl id=\"environment\">\n");
    dd(h, "submitter", sub->who);
    dd(h, "submitted (UTC)", sub->at);
    dd(h, "run started (UTC)", s->started_at);
    dd(h, "GPU", s->gpu_name);
    dd(h, "compute capability", s->compute_capability);
    snprintf(t, sizeof t, "%lld", (long long)s->sm_count);
    dd(h, "SMs", t);
    dd(h, "driver", s->driver_version);
    snprintf(t, sizeof t, "%lld (%lld.%lld)", (long long)s->cuda_runtime_version, (long long)s->cuda_runtime_version / 1000,
             (long long)s->cuda_runtime_version % 1000 / 10);
    dd(h, "CUDA runtime", t);
    snprintf(t, sizeof t, "%lld", (long long)s->cublas_version);
    dd(h, "cuBLAS", t);
    if (isfinite(s->power_limit_w)) snprintf(t, sizeof t, "%.0f W", s->power_limit_w); else snprintf(t, sizeof t, "not recorded");
    dd(h, "power limit", t);
    if (isfinite(s->sm_clock_max_mhz)) snprintf(t, sizeof t, "%.0f MHz", s->sm_clock_max_mhz); else snprintf(t, sizeof t, "not recorded");
    dd(h, "SM clock, max", t);
    dd(h, "GPU UUID (salted SHA-256)", s->gpu_uuid_sha256[0] ? s->gpu_uuid_sha256 : "not recorded");
    dd(h, "tilebench", s->tilebench_version);
    dd(h, "tilebench commit", s->git_sha);
    tbs_html_raw(h, "</dl>\n");
}

static void options(tbs_html *h, const cJSON *o)
{
    tbs_html_raw(h, "<h2>Options</h2>\n<table id=\"options\"><tbody>\n");
    const cJSON *it;
    cJSON_ArrayForEach(it, o) {
        char *v = cJSON_PrintUnformatted(it);
        tbs_html_raw(h, "<tr><th>");
        tbs_html_text(h, it->string);
        tbs_html_raw(h, "</th><td><code>");
        tbs_html_text(h, cJSON_IsString(it) ? it->valuestring : v ? v : "?");
        tbs_html_raw(h, "</code></td></tr>\n");
        cJSON_free(v);
    }
    tbs_html_raw(h, "</tbody></table>\n");
}

static void result(tbs_html *h, const tb_sub_result *r, size_t rep, const cJSON *o)
{
    tbs_html_raw(h, "<tr class=\"result\"><td class=\"variant\">");
    tbs_html_text(h, r->name);
    tbs_html_raw(h, "<br><code title=\"library SHA-256\">");
    tbs_html_text(h, r->sha256);
    tbs_html_raw(h, "</code></td><td>");
    tbs_html_text(h, r->family);
    tbs_html_raw(h, "</td><td><code>");
    tbs_html_text(h, r->params_json);
    tbs_html_raw(h, "</code></td><td>");
    tbs_page_shape(h, r);
    tbs_html_raw(h, " ");
    tbs_html_text(h, r->layouts);
    tbs_html_raw(h, "<br><span class=\"muted\">");
    tbs_html_text(h, r->dtypes);
    if (r->op == TB_OP_ATTENTION_FWD) tbs_html_fmt(h, " &middot; scale %.6g", r->scale);
    if (r->label[0]) { tbs_html_raw(h, " &middot; "); tbs_html_text(h, r->label); }
    tbs_html_raw(h, "</span></td><td>");
    tbs_html_text(h, r->status);
    tbs_html_raw(h, ", ");
    tbs_html_text(h, r->disposition);
    if (r->rule[0]) { tbs_html_raw(h, " ("); tbs_html_text(h, r->rule); tbs_html_raw(h, ")"); }
    tbs_html_raw(h, "</td>");
    if (r->timed) {
        tbs_html_raw(h, "<td class=\"n\">");
        ms(h, r->median_ms);
        tbs_html_raw(h, "<br><span class=\"muted\">[");
        ms(h, r->lo_ms);
        tbs_html_raw(h, ", ");
        ms(h, r->hi_ms);
        tbs_html_fmt(h, "]</span></td><td class=\"n\">%lld</td><td class=\"n\">%.1f</td><td>", (long long)r->n_samples,
                     tbs_tflops(r));
        tbs_html_text(h, r->method);
        tbs_html_raw(h, "</td><td class=\"n\">");
        if (isfinite(r->clock_mhz)) tbs_html_fmt(h, "%.0f&nbsp;MHz", r->clock_mhz); else tbs_html_raw(h, "&mdash;");
        tbs_html_raw(h, "</td><td class=\"n\">");
        if (isfinite(r->energy_j)) tbs_html_fmt(h, "%.4g&nbsp;J", r->energy_j); else tbs_html_raw(h, "&mdash;");
        tbs_html_raw(h, "</td>");
    } else {
        tbs_html_raw(h, "<td colspan=\"6\" class=\"muted\">not timed</td>");
    }
    tbs_html_raw(h, "<td class=\"repro\">");
    tbs_page_repro(h, rep);
    tbs_html_raw(h, "</td></tr>\n<tr class=\"cmd\"><td colspan=\"12\">measure again: <code class=\"command\">");
    tbs_html cmd = { 0 }, left = { 0 };
    command(r, o, &cmd, &left);
    tbs_html_text(h, cmd.p);
    tbs_html_raw(h, "</code>");
    if (left.n) { tbs_html_raw(h, " <span class=\"muted\">(left out, not values sweep takes: "); tbs_html_text(h, left.p); tbs_html_raw(h, ")</span>"); }
    if (cmd.oom || left.oom) h->oom = 1;
    tbs_html_free(&cmd);
    tbs_html_free(&left);
    tbs_html_raw(h, "</td></tr>\n");
}

int tbs_page_submission(tbs_store *st, int64_t id, tbs_html *h, unsigned *status, char *msg, size_t len)
{
    char *doc = NULL;
    int got = tbs_submission_get(st, id, &doc, msg, len);
    if (got) return got;   /* -1, or TBS_STORE_UNAVAILABLE */
    tb_submission s;
    int have = doc != NULL;
    if (have && tb_submission_parse(doc, strlen(doc), &s, msg, len)) { free(doc); return -1; }
    free(doc);
    tbs_subs subs = { 0 };
    size_t *rep = NULL, at = 0, i = 0;
    int rc = 0;
    if (have) {
        rc = tbs_subs_load(st, s.gpu_name, &subs, msg, len);
        tb_submission_free(&s);
        if (!rc) rc = tbs_subs_repro(&subs, &rep, msg, len);
        for (; !rc && i < subs.n && subs.v[i].id != id; i++) at += subs.v[i].s.n;
    }
    if (!rc && (!have || i == subs.n)) {
        *status = 404;
        char *p = tbs_page_error(404, "no such submission");
        if (p) tbs_html_raw(h, p); else rc = -1;
        free(p);
    } else if (!rc) {
        const tbs_sub *sub = &subs.v[i];
        char title[48];
        snprintf(title, sizeof title, "Submission %lld", (long long)id);
        tbs_page_head(h, title);
        tbs_html_fmt(h, "<h1>%s</h1>\n", title);
        environment(h, sub);
        cJSON *o = cJSON_Parse(sub->s.options_json ? sub->s.options_json : "{}");
        options(h, o);
        tbs_html_fmt(h, "<h2>Results</h2>\n<p>%zu result%s. TFLOP/s is the server's, from the shape and the median. "
                     "The command measures a figure again on this machine's shipped variants; for a library "
                     "tilebench does not ship add <code>--variants PATH</code> (the file whose SHA-256 is shown: "
                     "<code>tilebench list</code> prints it).</p>\n<table id=\"results\"><thead><tr><th>variant</th>"
                     "<th>family</th><th>params</th><th>shape</th><th>validation</th><th>median [95&nbsp;%% "
                     "interval]</th><th>samples</th><th>TFLOP/s</th><th>method</th><th>SM clock</th>"
                     "<th>energy/launch</th><th>reproduced</th></tr></thead><tbody>\n", sub->s.n, sub->s.n == 1 ? "" : "s");
        for (size_t j = 0; j < sub->s.n; j++) result(h, &sub->s.r[j], rep[at + j], o);
        tbs_html_raw(h, "</tbody></table>\n");
        cJSON_Delete(o);
        tbs_page_foot(h);
    }
    free(rep);
    tbs_subs_free(&subs);
    return rc;
}
