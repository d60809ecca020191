/* test_text.c - harness/common/text.c: control characters shown escaped (C0, DEL, C1, bytes
 * that are not UTF-8), UTF-8 validated and repaired, cut only at character boundaries, and the
 * streaming form that keeps an unfinished character for the next call. */
#include "tb_test.h"
#include "common/text.h"
#include <string.h>

int main(void)
{
    char out[256];
    TB_CASE("text-1.1", "C0 (but tab), DEL and C1 escaped; newline kept only when asked") {
        TB_CHECK(!strcmp(tb_text_escape("a\x1b[2Jb\tc\x7f", out, sizeof out, 0), "a\\x1b[2Jb\tc\\x7f"));
        TB_CHECK(!strcmp(tb_text_escape("l1\nl2", out, sizeof out, 0), "l1\\x0al2"));
        TB_CHECK(!strcmp(tb_text_escape("l1\nl2", out, sizeof out, 1), "l1\nl2"));
        TB_CHECK(!strcmp(tb_text_escape("x\xc2\x9b" "31m", out, sizeof out, 0), "x\\x9b31m"));   /* C1 CSI */
        TB_CHECK(!strcmp(tb_text_escape("caf\xc3\xa9 \xe2\x82\xac", out, sizeof out, 0), "caf\xc3\xa9 \xe2\x82\xac"));
        TB_CHECK(!strcmp(tb_text_escape("bad\xff\xfe", out, sizeof out, 0), "bad\\xff\\xfe"));
        TB_CHECK(!strcmp(tb_text_escape("\xe2\x82", out, sizeof out, 0), "\\xe2\\x82"));   /* truncated */
    }
    TB_CASE("text-1.2", "cut never mid-escape, never mid-character") {
        char small[6];
        tb_text_escape("ab\x1b", small, sizeof small, 0);
        TB_CHECK(!strcmp(small, "ab"));
        tb_text_escape("a\xe2\x82\xac", small, 4, 0);
        TB_CHECK(!strcmp(small, "a"));
    }
    TB_CASE("text-2.1", "UTF-8 validity: overlong, surrogates, above U+10FFFF refused") {
        TB_CHECK(tb_text_utf8_valid("plain \xc3\xa9 \xf0\x9f\x98\x80"));
        TB_CHECK(!tb_text_utf8_valid("\xc0\xaf"));          /* overlong '/' */
        TB_CHECK(!tb_text_utf8_valid("\xed\xa0\x80"));      /* a surrogate */
        TB_CHECK(!tb_text_utf8_valid("\xf4\x90\x80\x80"));  /* above U+10FFFF */
        TB_CHECK(!tb_text_utf8_valid("\xff"));
    }
    TB_CASE("text-2.2", "repair: each bad byte becomes U+FFFD, the result valid") {
        tb_text_utf8_clean("a\xff" "b\xc3", out, sizeof out);
        TB_CHECK(!strcmp(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd"));
        TB_CHECK(tb_text_utf8_valid(out));
    }
    TB_CASE("text-3.1", "streaming: an unfinished character waits; NUL shown as \\x00") {
        size_t used = 0;
        size_t n = tb_text_escape_bytes("ok\xe2\x82", 4, out, sizeof out, 1, 0, &used);
        TB_CHECK(n == 2 && used == 2 && !strcmp(out, "ok"));
        n = tb_text_escape_bytes("\xe2\x82\xac!", 4, out, sizeof out, 1, 0, &used);
        TB_CHECK(used == 4 && !strcmp(out, "\xe2\x82\xac!"));
        n = tb_text_escape_bytes("ab\xe2\n", 4, out, sizeof out, 1, 0, &used);   /* not a start: shown */
        TB_CHECK(used == 4 && !strcmp(out, "ab\\xe2\n"));
        n = tb_text_escape_bytes("a\0b", 3, out, sizeof out, 1, 1, &used);
        TB_CHECK(!strcmp(out, "a\\x00b"));
        TB_CHECK(tb_text_has_control("a\x1b") && tb_text_has_control("\xc2\x85") && !tb_text_has_control("a\tb"));
    }
    return tb_test_done();
}
