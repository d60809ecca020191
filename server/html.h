/* html.h - the bricks of the leaderboard's HTML pages (html.c): a growing page buffer, text
 * escaped for HTML, a path segment percent-encoded for a link, and the inline SVG chart of a
 * board's history. No page knows more about HTML escaping than this header says:
 *   - tbs_html_raw and tbs_html_fmt write markup the server wrote itself (never a stored string);
 *   - tbs_html_text writes any string from outside (a document, the store, the URL) as text
 *     that is safe in element content and in a quoted attribute value alike.
 * A buffer that ran out of memory stays empty-handed: every later call does nothing and
 * tbs_html_take returns NULL, so a page is checked once, at the end. */
#ifndef TBS_HTML_H
#define TBS_HTML_H
#include <stddef.h>
#include <stdint.h>

typedef struct tbs_html { char *p; size_t n, cap; int oom; } tbs_html;

/* markup, as is */
void tbs_html_raw(tbs_html *h, const char *markup);
/* markup through printf: for numbers and the server's own words only */
void tbs_html_fmt(tbs_html *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as HTML text: & < > " ' as character references; bytes that are not valid UTF-8, C0
 * controls other than tab and newline, DEL and C1 controls as U+FFFD. NULL writes nothing. */
void tbs_html_text(tbs_html *h, const char *s);
/* s percent-encoded as one URL path segment (everything but A-Z a-z 0-9 - . _ ~), so that it
 * can stand in an href and come back whole from libmicrohttpd's decoding */
void tbs_html_url(tbs_html *h, const char *s);
/* The page (malloc'd, NUL-terminated; the caller frees it) and an empty buffer, or NULL
 * with msg when memory ran out (the buffer is freed either way). */
char *tbs_html_take(tbs_html *h, char *msg, size_t len);
void tbs_html_free(tbs_html *h);

/* One point of a history chart: x (seconds since the epoch), y, and the words of its title. */
typedef struct tbs_chart_point { double t, y; const char *label; } tbs_chart_point;
/* An inline <svg> (no script, no external resource) of points in time order: a step line
 * through them, a circle per point with its label as <title>, the value beside it as <text>,
 * y ticks, the first and last time under the x axis, both axes titled. x is time when the
 * points span a second or more, else their order. n == 0 writes nothing. */
void tbs_html_chart(tbs_html *h, const tbs_chart_point *p, size_t n, const char *y_title);
#endif
