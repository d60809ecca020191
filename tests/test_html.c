/* test_html.c - server/html.c: every string from outside reaches a page as text (markup
 * characters as references, broken UTF-8 and control characters as U+FFFD), a link segment is
 * percent-encoded whole, and the history chart is an <svg> with one escaped point per input. */
#include "tb_test.h"
#include "../server/html.h"
#include <stdlib.h>
#include <string.h>

/* s through tbs_html_text, as a malloc'd string */
static char *text(const char *s)
{
    tbs_html h = { 0 };
    char msg[128];
    tbs_html_text(&h, s);
    return tbs_html_take(&h, msg, sizeof msg);
}

static char *url(const char *s)
{
    tbs_html h = { 0 };
    char msg[128];
    tbs_html_url(&h, s);
    return tbs_html_take(&h, msg, sizeof msg);
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

#define EQ(got, want) do { \
        char *g_ = (got); \
        TB_CHECK(g_ && !strcmp(g_, (want))); \
        if (g_ && strcmp(g_, (want))) printf("     got '%s'\n     want '%s'\n", g_, (want)); \
        free(g_); \
    } while (0)

int main(void)
{
    TB_CASE("html-1.1", "a script element becomes text") {
        EQ(text("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
    }
    TB_CASE("html-1.2", "quotes and ampersands, for attributes as well as text") {
        EQ(text("\"><img src=x onerror='a()'>&amp;"), "&quot;&gt;&lt;img src=x onerror=&#39;a()&#39;&gt;&amp;amp;");
    }
    TB_CASE("html-1.3", "bytes that are not valid UTF-8 become U+FFFD; valid characters stay") {
        EQ(text("a\xff" "b"), "a\xEF\xBF\xBD" "b");
        EQ(text("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  /* overlong '/' */
        EQ(text("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  /* a surrogate */
        EQ(text("x\xE2\x82"), "x\xEF\xBF\xBD\xEF\xBF\xBD");                 /* cut at the end */
        EQ(text("\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80"), "\xC2\xB5s \xE2\x82\xAC \xF0\x9F\x98\x80");
    }
    TB_CASE("html-1.4", "control characters become U+FFFD, tab and newline stay") {
        EQ(text("a\x01" "b\x1b[2J\x7f"), "a\xEF\xBF\xBD" "b\xEF\xBF\xBD[2J\xEF\xBF\xBD");
        EQ(text("\xC2\x85!"), "\xEF\xBF\xBD!");   /* C1 NEL */
        EQ(text("a\tb\nc\r"), "a\tb\nc\xEF\xBF\xBD");
    }
    TB_CASE("html-1.5", "NULL and empty strings write nothing") {
        EQ(text(NULL), "");
        EQ(text(""), "");
    }
    TB_CASE("html-2.1", "a link segment is percent-encoded, slashes and percents too") {
        EQ(url("fixture GPU"), "fixture%20GPU");
        EQ(url("a/b%<\"'"), "a%2Fb%25%3C%22%27");
        EQ(url("H100-SXM_5.0~"), "H100-SXM_5.0~");
        EQ(url("\xC2\xB5"), "%C2%B5");
    }
    TB_CASE("html-3.1", "the chart: one circle and one escaped title per point, no script") {
        tbs_chart_point p[3] = { { 1795000000, 700, "#1 by <script>x</script>" }, { 1795003600, 750, "#2 \"q\"" },
                                 { 1795007200, 750, "#3 & more" } };
        tbs_html h = { 0 };
        char msg[128];
        tbs_html_chart(&h, p, 3, "best geomean TFLOP/s");
        char *s = tbs_html_take(&h, msg, sizeof msg);
        TB_CHECK(s && !strncmp(s, "<svg ", 5) && strstr(s, "</svg>"));
        TB_CHECK(s && count(s, "<circle") == 3);
        TB_CHECK(s && !strstr(s, "<script"));
        TB_CHECK_STR_CONTAINS(s, "<title>#1 by &lt;script&gt;x&lt;/script&gt;</title>");
        TB_CHECK_STR_CONTAINS(s, "<title>#2 &quot;q&quot;</title>");
        TB_CHECK_STR_CONTAINS(s, ">750.0</text>");
        TB_CHECK_STR_CONTAINS(s, ">submitted (UTC)</text>");
        TB_CHECK_STR_CONTAINS(s, ">2026-11-18 ");   /* the first time under the axis */
        free(s);
    }
    TB_CASE("html-3.2", "points within one second are spread in order; no point, no chart") {
        tbs_chart_point p[2] = { { 5, 1, "a" }, { 5, 2, "b" } };
        tbs_html h = { 0 };
        char msg[128];
        tbs_html_chart(&h, p, 2, "y");
        char *s = tbs_html_take(&h, msg, sizeof msg);
        TB_CHECK_STR_CONTAINS(s, "in the order they came");
        TB_CHECK(s && count(s, "<circle") == 2);
        free(s);
        tbs_html_chart(&h, p, 0, "y");
        s = tbs_html_take(&h, msg, sizeof msg);
        TB_CHECK(s && !*s);
        free(s);
    }
    return tb_test_done();
}
