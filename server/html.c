/* html.c - the page buffer, HTML text escaping, link encoding and the SVG history chart of the
 * leaderboard pages (see html.h). Escaping decodes UTF-8 itself, so a byte that is not part of
 * a valid character, or a control character, never reaches a page as it came. */
#define _GNU_SOURCE
#include "html.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int grow(tbs_html *h, size_t more)
{
    if (h->oom) return -1;
    if (h->n + more + 1 <= h->cap) return 0;
    size_t cap = h->cap ? h->cap : 4096;
    while (cap < h->n + more + 1) cap *= 2;
    char *p = realloc(h->p, cap);
    if (!p) { h->oom = 1; return -1; }
    h->p = p;
    h->cap = cap;
    return 0;
}

static void put(tbs_html *h, const char *s, size_t n)
{
    if (grow(h, n)) return;
    memcpy(h->p + h->n, s, n);
    h->n += n;
    h->p[h->n] = 0;
}

void tbs_html_raw(tbs_html *h, const char *markup) { put(h, markup, strlen(markup)); }

void tbs_html_fmt(tbs_html *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0) { h->oom = 1; return; }
    put(h, s, (size_t)n);
    free(s);
}

/* the length of the valid UTF-8 character at s (1 to 4), or 0 when s does not start one */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char b = s[0];
    if (b < 0x80) return 1;
    if (b >= 0xC2 && b <= 0xDF) return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (b >= 0xE0 && b <= 0xEF) {
        unsigned char lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 ? 3 : 0;
    }
    if (b >= 0xF0 && b <= 0xF4) {
        unsigned char lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80 ? 4 : 0;
    }
    return 0;
}

void tbs_html_text(tbs_html *h, const char *s)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    if (!s) return;
    const unsigned char *u = (const unsigned char *)s;
    while (*u && !h->oom) {
        size_t run = 0;   /* plain bytes go out in one piece */
        while (u[run] >= 0x20 && u[run] < 0x7F && !strchr("&<>\"'", u[run])) run++;
        if (run) { put(h, (const char *)u, run); u += run; continue; }
        unsigned char b = *u;
        size_t l = utf8_len(u);
        switch (b) {
        case '&': tbs_html_raw(h, "&amp;"); break;
        case '<': tbs_html_raw(h, "&lt;"); break;
        case '>': tbs_html_raw(h, "&gt;"); break;
        case '"': tbs_html_raw(h, "&quot;"); break;
        case '\'': tbs_html_raw(h, "&#39;"); break;
        case '\t': case '\n': put(h, (const char *)u, 1); break;
        default:
            if (!l || b < 0x20 || b == 0x7F || (b == 0xC2 && u[1] < 0xA0)) put(h, fffd, 3);   /* C1: C2 80..9F */
            else put(h, (const char *)u, l);
        }
        u += l ? l : 1;
    }
}

void tbs_html_url(tbs_html *h, const char *s)
{
    for (const unsigned char *u = (const unsigned char *)s; u && *u; u++) {
        char e[4];
        if ((*u >= 'A' && *u <= 'Z') || (*u >= 'a' && *u <= 'z') || (*u >= '0' && *u <= '9') || strchr("-._~", *u))
            put(h, (const char *)u, 1);
        else { snprintf(e, sizeof e, "%%%02X", *u); put(h, e, 3); }
    }
}

char *tbs_html_take(tbs_html *h, char *msg, size_t len)
{
    char *p = h->oom ? NULL : h->p;
    if (!p && !h->oom) p = strdup("");
    if (!p) { snprintf(msg, len, "out of memory while writing a page"); tbs_html_free(h); return NULL; }
    memset(h, 0, sizeof *h);
    return p;
}

void tbs_html_free(tbs_html *h)
{
    free(h->p);
    memset(h, 0, sizeof *h);
}

/* a tick step of 1, 2 or 5 times a power of ten giving about four ticks up to max */
static double tick_step(double max)
{
    double raw = max / 4, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void date_text(tbs_html *h, double t, double x, double y, const char *anchor)
{
    char d[32];
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(d, sizeof d, "%Y-%m-%d %H:%M", &tm)) snprintf(d, sizeof d, "?");
    tbs_html_fmt(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"ax\">%s</text>\n", x, y, anchor, d);
}

void tbs_html_chart(tbs_html *h, const tbs_chart_point *p, size_t n, const char *y_title)
{
    if (!n) return;
    const double W = 720, H = 260, L = 72, R = 36, T = 16, B = 48, w = W - L - R, hh = H - T - B;
    double ymax = 0, t0 = p[0].t, t1 = p[0].t;
    for (size_t i = 0; i < n; i++) {
        if (isfinite(p[i].y) && p[i].y > ymax) ymax = p[i].y;
        if (p[i].t < t0) t0 = p[i].t;
        if (p[i].t > t1) t1 = p[i].t;
    }
    if (!(ymax > 0)) ymax = 1;
    double step = tick_step(ymax * 1.1), top = ceil(ymax * 1.1 / step) * step;
    int by_time = t1 - t0 >= 1;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    if (!x || !y) { free(x); free(y); h->oom = 1; return; }
    for (size_t i = 0; i < n; i++) {
        x[i] = L + (by_time ? (p[i].t - t0) / (t1 - t0) * w : n == 1 ? w / 2 : (double)i / (double)(n - 1) * w);
        y[i] = T + hh - (isfinite(p[i].y) ? p[i].y : 0) / top * hh;
    }
    tbs_html_fmt(h, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-labelledby=\"chart-title\">\n", W, H, W, H);
    tbs_html_raw(h, "<title id=\"chart-title\">");
    tbs_html_text(h, y_title);
    tbs_html_fmt(h, " over submission time, %zu submission%s</title>\n", n, n == 1 ? "" : "s");
    tbs_html_fmt(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, T, L, T + hh);
    tbs_html_fmt(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, T + hh, L + w, T + hh);
    for (double v = 0; v <= top * (1 + 1e-9); v += step) {
        double yy = T + hh - v / top * hh;
        tbs_html_fmt(h, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
                     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" class=\"ax\">%g</text>\n",
                     L, yy, L + w, yy, L - 6, yy + 4, v);
    }
    tbs_html_fmt(h, "<text x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" text-anchor=\"middle\" "
                 "class=\"ax\">", T + hh / 2, T + hh / 2);
    tbs_html_text(h, y_title);
    tbs_html_raw(h, "</text>\n");
    if (by_time) {
        date_text(h, t0, L, T + hh + 18, "start");
        if (t1 > t0) date_text(h, t1, L + w, T + hh + 18, "end");
    }
    tbs_html_fmt(h, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" class=\"ax\">%s</text>\n", L + w / 2,
                 H - 6, by_time ? "submitted (UTC)" : "submissions in the order they came (all within one second)");
    tbs_html_raw(h, "<polyline class=\"line\" points=\"");
    for (size_t i = 0; i < n; i++) {
        if (i) tbs_html_fmt(h, " %.1f,%.1f", x[i], y[i - 1]);   /* a step: the best holds until beaten */
        tbs_html_fmt(h, "%s%.1f,%.1f", i ? " " : "", x[i], y[i]);
    }
    tbs_html_raw(h, "\"/>\n");
    for (size_t i = 0; i < n; i++) {
        tbs_html_fmt(h, "<g class=\"point\"><circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\"><title>", x[i], y[i]);
        tbs_html_text(h, p[i].label);
        /* the value above its point, kept inside the plot at both ends (clear of the y ticks) */
        const char *anchor = n > 1 && x[i] <= L + 1 ? "start" : n > 1 && x[i] >= L + w - 1 ? "end" : "middle";
        tbs_html_fmt(h, "</title></circle><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"v\">%.1f</text></g>\n",
                     x[i], y[i] - 8, anchor, p[i].y);
    }
    tbs_html_raw(h, "</svg>\n");
    free(x);
    free(y);
}
