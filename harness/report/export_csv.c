/* export_csv.c - a run's results as CSV (see export.h; export.c has the JSON and the entry).
 *
 * Owns the CSV's columns: the fixed ones, the attention problem's when the run has one (an
 * export of GEMM rows only is what it was before attention existed), one per variant
 * parameter. A value that does not apply (NaN, -1, "", another op's size) is an empty cell,
 * never 0. Reads nothing from the store: export.c hands it the rows.
 */
#include "report/export_int.h"
#include "common/problem.h"
#include "common/tb.h"
#include "common/text.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const csv_fixed[] = {
    "run_id", "variant", "family", "m", "n", "k", "batch", "dtypes", "layouts", "status",
    "disposition", "reason", "rule", "median_ms", "mean_ms", "stdev_ms", "min_ms", "max_ms",
    "rse", "n_samples", "tflops", "clock_mhz", "max_abs_err", "rel_fro_err", "method",
    "stop_reason", "sha256", "host_launch_ms", "host_bound",
};
#define N_FIXED (sizeof csv_fixed / sizeof csv_fixed[0])

/* after the fixed columns when the run has an attention problem (and only then, so that the
 * export of a GEMM run stays what it was); in a GEMM row they are empty but op and shape */
static const char *const csv_attn[] = {
    "op", "shape", "heads", "heads_kv", "seq_q", "seq_k", "head_dim", "causal", "softmax_scale",
};
#define N_ATTN (sizeof csv_attn / sizeof csv_attn[0])

/* One cell, with its separator; RFC 4180: quoted when it holds a comma, quote, CR or LF,
 * quotes doubled inside. */
static void csv_cell(FILE *out, const char *s, int first)
{
    char clean[4096];
    if (!tb_text_utf8_valid(s)) s = tb_text_utf8_clean(s, clean, sizeof clean);
    if (!first) fputc(',', out);
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* Shortest of %.15g / %.17g that reads back the same double; "" when not finite. Assumes
 * the C locale for LC_NUMERIC (nothing in tilebench calls setlocale). */
void tbx_fmt_real(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, cap, "%.15g", v);
    if (strtod(buf, NULL) != v) snprintf(buf, cap, "%.17g", v);
}

static void fmt_int(char *buf, size_t cap, int64_t v)
{
    snprintf(buf, cap, "%lld", (long long)v);
}

/* A parameter value as a cell: strings raw, numbers as numbers, null empty. */
static void csv_param(FILE *out, const cJSON *v)
{
    char buf[64];
    if (!v || cJSON_IsNull(v)) {
        csv_cell(out, "", 0);
    } else if (cJSON_IsString(v)) {
        csv_cell(out, v->valuestring, 0);
    } else if (cJSON_IsNumber(v)) {
        tbx_fmt_real(buf, sizeof buf, v->valuedouble);
        csv_cell(out, buf, 0);
    } else if (cJSON_IsBool(v)) {
        csv_cell(out, cJSON_IsTrue(v) ? "true" : "false", 0);
    } else {
        char *t = cJSON_PrintUnformatted(v);
        csv_cell(out, t ? t : "", 0);
        cJSON_free(t);
    }
}

static int is_fixed(const char *key, int attn)
{
    for (size_t i = 0; i < N_FIXED; i++)
        if (strcmp(key, csv_fixed[i]) == 0) return 1;
    for (size_t i = 0; attn && i < N_ATTN; i++)
        if (strcmp(key, csv_attn[i]) == 0) return 1;
    return 0;
}

/* An integer cell of the problem: empty where it does not apply (another op's size). */
static void csv_size(FILE *out, int64_t v, int applies)
{
    char b[32] = "";
    if (applies) snprintf(b, sizeof b, "%lld", (long long)v);
    csv_cell(out, b, 0);
}

/* The attention columns of one row (csv_attn). */
static void csv_attn_cells(FILE *out, const tb_problem_info *p)
{
    char b[128];
    const int at = tb_problem_info_is_attention(p);
    csv_cell(out, p->op, 0);
    tb_problem_info_text(p, b, sizeof b);
    csv_cell(out, b, 0);
    csv_size(out, p->heads, at);
    csv_size(out, p->heads_kv, at);
    csv_size(out, p->seq_q, at);
    csv_size(out, p->seq_k, at);
    csv_size(out, p->head_dim, at);
    csv_cell(out, !at ? "" : p->causal ? "true" : "false", 0);
    tbx_fmt_real(b, sizeof b, at ? p->softmax_scale : NAN);
    csv_cell(out, b, 0);
}

static void csv_row(FILE *out, const tb_result_row *r, const cJSON *params,
                    const char *const *keys, size_t nkeys, int attn)
{
    const tb_measurement *m = &r->m;
    char b[64];
    /* Timed means it ran and has a median; otherwise every time and rate cell is empty. */
    int timed = m->status == TB_STATUS_OK && isfinite(m->median_ms);
    const double times[] = {m->median_ms, m->mean_ms, m->stdev_ms, m->min_ms, m->max_ms,
                            m->rse};

    fmt_int(b, sizeof b, m->run_id);
    csv_cell(out, b, 1);
    csv_cell(out, r->v.name, 0);
    csv_cell(out, r->v.family, 0);
    const int gemm = !tb_problem_info_is_attention(&r->p);
    csv_size(out, r->p.m, gemm);
    csv_size(out, r->p.n, gemm);
    csv_size(out, r->p.k, gemm);
    fmt_int(b, sizeof b, r->p.batch);
    csv_cell(out, b, 0);
    csv_cell(out, r->p.dtypes, 0);
    csv_cell(out, r->p.layouts, 0);
    csv_cell(out, tb_status_name(m->status), 0);
    csv_cell(out, tb_disposition_name(m->disposition), 0);
    csv_cell(out, m->reason, 0);
    csv_cell(out, m->rule, 0);
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++) {
        tbx_fmt_real(b, sizeof b, timed ? times[i] : NAN);
        csv_cell(out, b, 0);
    }
    if (timed && m->n_samples >= 0) fmt_int(b, sizeof b, m->n_samples);
    else b[0] = '\0';
    csv_cell(out, b, 0);
    tbx_fmt_real(b, sizeof b, timed ? m->tflops : NAN);
    csv_cell(out, b, 0);
    tbx_fmt_real(b, sizeof b, timed ? m->clock_mhz : NAN);
    csv_cell(out, b, 0);
    tbx_fmt_real(b, sizeof b, m->max_abs_err);
    csv_cell(out, b, 0);
    tbx_fmt_real(b, sizeof b, m->rel_fro_err);
    csv_cell(out, b, 0);
    csv_cell(out, m->method, 0);
    csv_cell(out, m->stop_reason, 0);
    csv_cell(out, r->v.sha256, 0);
    /* from the extra JSON: the host's time of one launch() call, and whether the figure is the
     * host's pace (never ranked by show); empty for a row stored before they were recorded */
    cJSON *x = m->extra_json[0] ? cJSON_Parse(m->extra_json) : NULL;
    const cJSON *host = cJSON_GetObjectItemCaseSensitive(x, "host_launch_ms");
    tbx_fmt_real(b, sizeof b, timed && cJSON_IsNumber(host) ? host->valuedouble : NAN);
    csv_cell(out, b, 0);
    csv_cell(out, !timed || !cJSON_IsNumber(host) ? ""
             : cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "host_bound")) ? "true" : "false", 0);
    cJSON_Delete(x);
    if (attn) csv_attn_cells(out, &r->p);
    for (size_t i = 0; i < nkeys; i++)
        csv_param(out, cJSON_IsObject(params) ? cJSON_GetObjectItemCaseSensitive(params, keys[i])
                                              : NULL);
    fputc('\n', out);
}

int tbx_export_csv(const tb_result_row *rows, size_t n, FILE *out, char *msg, size_t len)
{
    int rc = TB_OK, attn = 0;
    for (size_t i = 0; i < n; i++) attn |= tb_problem_info_is_attention(&rows[i].p);
    cJSON **params = calloc(n ? n : 1, sizeof *params);
    const char **keys = NULL;   /* point into params[], first seen first */
    size_t nkeys = 0, capkeys = 0;
    if (!params) return tb_fail(msg, len, TB_ENOMEM, "cannot build the csv export: out of memory");

    for (size_t i = 0; i < n; i++) {
        params[i] = rows[i].v.params_json[0] ? cJSON_Parse(rows[i].v.params_json) : NULL;
        if (!cJSON_IsObject(params[i])) continue;   /* unparsable params: empty cells */
        for (const cJSON *it = params[i]->child; it; it = it->next) {
            size_t k = 0;
            while (k < nkeys && strcmp(keys[k], it->string) != 0) k++;
            if (k < nkeys) continue;
            if (nkeys == capkeys) {
                size_t nc = capkeys ? 2 * capkeys : 16;
                const char **nk = realloc(keys, nc * sizeof *nk);
                if (!nk) {
                    rc = tb_fail(msg, len, TB_ENOMEM,
                                 "cannot build the csv export: out of memory");
                    goto out;
                }
                keys = nk;
                capkeys = nc;
            }
            keys[nkeys++] = it->string;
        }
    }

    errno = 0;
    for (size_t i = 0; i < N_FIXED; i++) csv_cell(out, csv_fixed[i], i == 0);
    for (size_t i = 0; attn && i < N_ATTN; i++) csv_cell(out, csv_attn[i], 0);
    for (size_t i = 0; i < nkeys; i++) {
        /* a parameter named like a fixed column gets a prefix, so no header is doubled */
        if (is_fixed(keys[i], attn)) {
            char h[TB_NAME_LEN + 8];
            snprintf(h, sizeof h, "param.%s", keys[i]);
            csv_cell(out, h, 0);
        } else {
            csv_cell(out, keys[i], 0);
        }
    }
    fputc('\n', out);
    for (size_t i = 0; i < n && !ferror(out); i++) csv_row(out, &rows[i], params[i], keys, nkeys, attn);
    if (fflush(out) == EOF || ferror(out))
        rc = tb_fail(msg, len, TB_EIO, "cannot write the csv export: %s",
                     errno ? strerror(errno) : "write error");
out:
    for (size_t i = 0; i < n; i++) cJSON_Delete(params[i]);
    free(params);
    free(keys);
    return rc;
}
