/* text.h - text that came from outside (a variant, a database, a file) made safe for where it
 * goes: a terminal or a one-line message (control characters shown escaped) and JSON (valid
 * UTF-8). Pure C, no allocation, unit-tested (tests/test_text.c). */
#ifndef TB_TEXT_H
#define TB_TEXT_H
#include <stddef.h>

/* out = in with every C0 control but tab (and newline, when keep_newline), DEL, every C1
 * control (U+0080..U+009F, UTF-8 C2 80..C2 9F, shown as its code point) and every byte that
 * is not part of valid UTF-8 written as \xNN; a backslash stays a backslash. Always
 * NUL-terminated; cut (never mid-escape, never mid-character) when out is too small.
 * Returns out. */
char *tb_text_escape(const char *in, char *out, size_t cap, int keep_newline);
/* The same over n bytes that may hold NULs (shown as \x00) and may end inside a character:
 * unless final, an incomplete character at the end is left for the next call. Returns the
 * bytes written to out (NUL-terminated too); *consumed (may be NULL) = the input used. */
size_t tb_text_escape_bytes(const char *in, size_t n, char *out, size_t cap, int keep_newline,
                            int final, size_t *consumed);
/* 1 when s is valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
int tb_text_utf8_valid(const char *s);
/* out = in with every byte that is not part of valid UTF-8 replaced by U+FFFD (EF BF BD).
 * Always NUL-terminated; cut at a character boundary when out is too small. Returns out. */
char *tb_text_utf8_clean(const char *in, char *out, size_t cap);
/* 1 when s holds a control character (C0, DEL or C1) other than tab. */
int tb_text_has_control(const char *s);
#endif
