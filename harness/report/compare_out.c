/* compare_out.c - a comparison as a table, Markdown, JUnit XML or JSON (see compare_out.h). */
#include "report/compare_out.h"
#include "common/tb.h"
#include "common/text.h"
#include <stdlib.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

/* ---- text that did not come from us ------------------------------------------------------ */

/* s with control characters shown as \xNN (common/text.h). */
static void put_clean(FILE *f, const char *s)
{
    char buf[2048];
    fputs(tb_text_escape(s, buf, sizeof buf, 0), f);
}

static void put_md(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '|' || *p == '\\' || *p == '`' || *p == '*' || *p == '_' || *p == '<' ||
            *p == '>' || *p == '[' || *p == ']')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fputc(' ', f);
        else fputc(*p, f);
    }
}

/* a path as a Markdown link target: bytes other than letters, digits and ._~/- as %XX */
static void put_url(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '.' || *p == '_' || *p == '~' || *p == '/' || *p == '-')
            fputc(*p, f);
        else fprintf(f, "%%%02X", *p);
    }
}

static void put_xml(FILE *f, const char *in)
{
    char s[2048];
    tb_text_utf8_clean(in, s, sizeof s);   /* an XML parser refuses bytes that are not UTF-8 */
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (*p < 0x20 && *p != '\t' && *p != '\n') fputc(' ', f);   /* not allowed in XML 1.0 */
            else fputc(*p, f);
        }
    }
}

static int done(FILE *f)
{
    return fflush(f) == 0 && !ferror(f) ? TB_OK : TB_EIO;
}

static const char *verdict_word(const tb_comparison *c) { return c->failures ? "FAIL" : "pass"; }

static void summary(const tb_comparison *c, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (int k = 0; k <= TB_CHANGE_CONTROL; k++) {
        if (!c->count[k]) continue;
        l += (size_t)snprintf(buf + l, l < len ? len - l : 0, "%s%zu %s", l ? ", " : "",
                              c->count[k], tb_change_name((tb_change)k));
        if (l >= len) break;
    }
    if (!c->n) snprintf(buf, len, "nothing to compare");
}

static void fmt_ms(char *b, size_t n, double v)
{
    if (isfinite(v)) snprintf(b, n, "%.5g", v);
    else snprintf(b, n, "-");
}

static void fmt_ratio(char *r, size_t rn, char *iv, size_t ivn, const tb_compare_row *x)
{
    if (isfinite(x->ratio)) {
        snprintf(r, rn, "%.4f", x->ratio);
        snprintf(iv, ivn, "[%.4f, %.4f]", x->lo, x->hi);
    } else {
        snprintf(r, rn, "-");
        snprintf(iv, ivn, "-");
    }
}

/* The sides' SM clocks differ by more than TB_CLOCK_MOVED on some rows: one sentence, or "". */
static void clock_sentence(const tb_comparison *c, char *buf, size_t len)
{
    buf[0] = 0;
    if (c->clock_moved)
        snprintf(buf, len, "on %zu row%s the two sides ran at SM clocks more than %g %% apart (at "
                 "most %+.1f %%): there a difference can be the card's pace, not the kernel's; "
                 "measure both in one run (tilebench gate) or compare with --control", c->clock_moved,
                 c->clock_moved == 1 ? "" : "s", TB_CLOCK_MOVED * 100, c->clock_worst * 100);
}

/* ---- the four formats -------------------------------------------------------------------- */

int tb_compare_write_table(const tb_comparison *c, const tb_compare_label *l, FILE *f)
{
    fprintf(f, "%-44s %-22s %10s %10s %9s %-20s %s\n", "variant", "shape", "base ms", "head ms",
            c->o.control[0] ? "ratio/ctl" : "head/base", "interval", "change");
    for (size_t i = 0; i < c->n; i++) {
        const tb_compare_row *x = &c->r[i];
        char bm[24], hm[24], r[24], iv[48];
        fmt_ms(bm, sizeof bm, x->base_ms);
        fmt_ms(hm, sizeof hm, x->head_ms);
        fmt_ratio(r, sizeof r, iv, sizeof iv, x);
        fprintf(f, "%-44.44s %-22.22s %10s %10s %9s %-20s %s%s", x->variant, x->shape, bm, hm, r,
                iv, tb_change_fails(x->change) ? "FAIL " : "", tb_change_name(x->change));
        if (x->note[0] && x->change != TB_CHANGE_UNCHANGED) {
            fputs("  ", f);
            put_clean(f, x->note);
        }
        fputc('\n', f);
    }
    char s[512];
    summary(c, s, sizeof s);
    fprintf(f, "%s: %s: %s (threshold %g %%, %g %% intervals of the median ratio%s%s)\n",
            l->command, verdict_word(c), s, c->o.threshold * 100, c->o.conf * 100,
            c->o.control[0] ? ", each to the control " : "", c->o.control);
    fputs("  base: ", f); put_clean(f, c->base_what);
    fputs("\n  head: ", f); put_clean(f, c->head_what);
    fputc('\n', f);
    if (l->cost && l->cost[0]) fprintf(f, "  cost: %s\n", l->cost);
    char ck[400];
    clock_sentence(c, ck, sizeof ck);
    if (ck[0]) fprintf(f, "  clocks: %s\n", ck);
    return done(f);
}

int tb_compare_write_markdown(const tb_comparison *c, const tb_compare_label *l, FILE *f)
{
    char s[512];
    summary(c, s, sizeof s);
    fprintf(f, "### tilebench %s: %s\n\n", l->command,
            c->failures ? "**FAIL**" : "pass");
    fprintf(f, "%s. Threshold %g %%; %g %% bootstrap intervals of the median ratio%s",
            s, c->o.threshold * 100, c->o.conf * 100, c->o.control[0] ? ", each to the control `" : "");
    if (c->o.control[0]) { put_md(f, c->o.control); fputc('`', f); }
    fputs(".\n\n- base: ", f); put_md(f, c->base_what);
    fputs("\n- head: ", f); put_md(f, c->head_what);
    fputc('\n', f);
    if (l->cost && l->cost[0]) { fputs("- cost: ", f); put_md(f, l->cost); fputc('\n', f); }
    char ck[400];
    clock_sentence(c, ck, sizeof ck);
    if (ck[0]) { fputs("- clocks: ", f); put_md(f, ck); fputc('\n', f); }
    fputs("\n| | variant | shape | base (ms) | head (ms) | ratio | interval | change |\n"
          "|---|---|---|---:|---:|---:|---|---|\n", f);
    /* the rows that fail first, then the rest in order */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < c->n; i++) {
            const tb_compare_row *x = &c->r[i];
            if ((pass == 0) != (tb_change_fails(x->change) != 0)) continue;
            char bm[24], hm[24], r[24], iv[48];
            fmt_ms(bm, sizeof bm, x->base_ms);
            fmt_ms(hm, sizeof hm, x->head_ms);
            fmt_ratio(r, sizeof r, iv, sizeof iv, x);
            fprintf(f, "| %s | ", tb_change_fails(x->change) ? "FAIL" : "");
            put_md(f, x->variant);
            fputs(" | ", f);
            put_md(f, x->shape);
            fprintf(f, " | %s | %s | %s | %s | %s%s%s", bm, hm, r, iv,
                    tb_change_fails(x->change) ? "**" : "", tb_change_name(x->change),
                    tb_change_fails(x->change) ? "**" : "");
            if (x->note[0] && x->change != TB_CHANGE_UNCHANGED) { fputs(": ", f); put_md(f, x->note); }
            fputs(" |\n", f);
        }
    if (l->chart_link && l->chart_link[0]) {
        fputs("\n![Before/after: the head/base ratio of each variant and shape with its interval](", f);
        put_url(f, l->chart_link);
        fputs(")\n", f);
    } else if (l->chart_file && l->chart_file[0]) {
        fputs("\nBefore/after chart: ", f);
        put_md(f, l->chart_file);
        fputs(" (an SVG, kept with this job's other reports).\n", f);
    }
    return done(f);
}

int tb_compare_write_junit(const tb_comparison *c, const tb_compare_label *l, FILE *f)
{
    size_t skipped = c->count[TB_CHANGE_NEW] + c->count[TB_CHANGE_REMOVED] +
                     c->count[TB_CHANGE_NOT_TIMED];
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"tilebench %s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\">\n", l->command, c->n, c->failures, skipped);
    fprintf(f, "  <testsuite name=\"tilebench %s\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\">\n", l->command, c->n, c->failures, skipped);
    fprintf(f, "    <properties>\n");
    fprintf(f, "      <property name=\"threshold\" value=\"%g\"/>\n", c->o.threshold);
    fprintf(f, "      <property name=\"confidence\" value=\"%g\"/>\n", c->o.conf);
    fputs("      <property name=\"base\" value=\"", f); put_xml(f, c->base_what); fputs("\"/>\n", f);
    fputs("      <property name=\"head\" value=\"", f); put_xml(f, c->head_what); fputs("\"/>\n", f);
    if (c->o.control[0]) {
        fputs("      <property name=\"control\" value=\"", f); put_xml(f, c->o.control); fputs("\"/>\n", f);
    }
    fprintf(f, "    </properties>\n");
    for (size_t i = 0; i < c->n; i++) {
        const tb_compare_row *x = &c->r[i];
        double t = isfinite(x->head_ms) ? x->head_ms / 1000.0 : 0;
        fputs("    <testcase classname=\"", f); put_xml(f, x->variant);
        fputs("\" name=\"", f); put_xml(f, x->shape);
        fprintf(f, "\" time=\"%.6f\">\n", t);
        char r[24], iv[48];
        fmt_ratio(r, sizeof r, iv, sizeof iv, x);
        if (tb_change_fails(x->change)) {
            fprintf(f, "      <failure type=\"%s\" message=\"", tb_change_name(x->change));
            if (x->change == TB_CHANGE_SLOWER)
                fprintf(f, "slower: ratio %s, interval %s, whole interval beyond the threshold of %g %%",
                        r, iv, c->o.threshold * 100);
            else { fputs("newly invalid: ", f); put_xml(f, x->note); }
            fputs("\">", f);
            put_xml(f, x->note);
            fputs("</failure>\n", f);
        } else if (x->change == TB_CHANGE_NEW || x->change == TB_CHANGE_REMOVED ||
                   x->change == TB_CHANGE_NOT_TIMED) {
            fprintf(f, "      <skipped message=\"%s", tb_change_name(x->change));
            if (x->note[0]) { fputs(": ", f); put_xml(f, x->note); }
            fputs("\"/>\n", f);
        }
        fprintf(f, "      <system-out>%s ratio %s interval %s</system-out>\n",
                tb_change_name(x->change), r, iv);
        fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return done(f);
}

static void num_or_null(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

int tb_compare_write_json(const tb_comparison *c, const tb_compare_label *l, FILE *f)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "command", l->command);
    cJSON_AddStringToObject(root, "verdict", c->failures ? "fail" : "pass");
    cJSON_AddNumberToObject(root, "failures", (double)c->failures);
    cJSON_AddNumberToObject(root, "threshold", c->o.threshold);
    cJSON_AddNumberToObject(root, "confidence", c->o.conf);
    cJSON_AddNumberToObject(root, "clock_moved", (double)c->clock_moved);
    num_or_null(root, "clock_worst", c->clock_moved ? c->clock_worst : NAN);
    cJSON_AddStringToObject(root, "control", c->o.control);
    cJSON_AddStringToObject(root, "base", c->base_what);
    cJSON_AddStringToObject(root, "head", c->head_what);
    cJSON_AddStringToObject(root, "cost", l->cost ? l->cost : "");
    cJSON *counts = cJSON_AddObjectToObject(root, "counts");
    for (int k = 0; k <= TB_CHANGE_CONTROL; k++)
        cJSON_AddNumberToObject(counts, tb_change_name((tb_change)k), (double)c->count[k]);
    cJSON *rows = cJSON_AddArrayToObject(root, "rows");
    for (size_t i = 0; i < c->n; i++) {
        const tb_compare_row *x = &c->r[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "variant", x->variant);
        cJSON_AddStringToObject(o, "shape", x->shape);
        cJSON_AddStringToObject(o, "change", tb_change_name(x->change));
        cJSON_AddBoolToObject(o, "fails", tb_change_fails(x->change));
        cJSON_AddStringToObject(o, "base_state", tb_side_state_name(x->base_state));
        cJSON_AddStringToObject(o, "head_state", tb_side_state_name(x->head_state));
        num_or_null(o, "base_median_ms", x->base_ms);
        num_or_null(o, "head_median_ms", x->head_ms);
        num_or_null(o, "ratio", x->ratio);
        num_or_null(o, "lo", x->lo);
        num_or_null(o, "hi", x->hi);
        num_or_null(o, "control_drift", x->drift);
        num_or_null(o, "base_clock_mhz", x->base_clock);
        num_or_null(o, "head_clock_mhz", x->head_clock);
        cJSON_AddNumberToObject(o, "base_samples", (double)x->base_n);
        cJSON_AddNumberToObject(o, "head_samples", (double)x->head_n);
        cJSON_AddStringToObject(o, "note", x->note);
        cJSON_AddItemToArray(rows, o);
    }
    char *txt = cJSON_Print(root);
    cJSON_Delete(root);
    if (!txt) return TB_ENOMEM;
    size_t cap = strlen(txt) * 3 + 1;
    char *clean = malloc(cap);   /* reasons may carry bytes that are not UTF-8 */
    fputs(clean ? tb_text_utf8_clean(txt, clean, cap) : txt, f);
    free(clean);
    fputc('\n', f);
    cJSON_free(txt);
    return done(f);
}

tb_compare_writer tb_compare_writer_for(const char *format)
{
    if (!format) return NULL;
    if (!strcmp(format, "table")) return tb_compare_write_table;
    if (!strcmp(format, "markdown") || !strcmp(format, "md")) return tb_compare_write_markdown;
    if (!strcmp(format, "junit")) return tb_compare_write_junit;
    if (!strcmp(format, "json")) return tb_compare_write_json;
    return NULL;
}
