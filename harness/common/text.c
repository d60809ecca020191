/* text.c - escaping control characters and repairing UTF-8 (see text.h). */
#include "common/text.h"
#include <stdio.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when p does not start one. */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;   /* overlong */
        if (c == 0xED && p[1] > 0x9F) return 0;   /* surrogates */
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if ((p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;   /* overlong */
        if (c == 0xF4 && p[1] > 0x8F) return 0;   /* above U+10FFFF */
        return 4;
    }
    return 0;
}

int tb_text_utf8_valid(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t n = utf8_len(p);
        if (!n) return 0;
        p += n;
    }
    return 1;
}

char *tb_text_utf8_clean(const char *in, char *out, size_t cap)
{
    size_t at = 0;
    if (!cap) return out;
    for (const unsigned char *p = (const unsigned char *)in; *p;) {
        size_t n = utf8_len(p);
        const unsigned char *src = p;
        static const unsigned char fffd[3] = { 0xEF, 0xBF, 0xBD };
        if (!n) { src = fffd; n = 3; p++; }
        else p += n;
        if (at + n + 1 > cap) break;
        memcpy(out + at, src, n);
        at += n;
    }
    out[at] = 0;
    return out;
}

static int is_c1(const unsigned char *p) { return p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F; }

int tb_text_has_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\t') || *p == 0x7F || is_c1(p)) return 1;
    return 0;
}

/* The length a lead byte announces (1-4), or 0 when c cannot start a character. */
static size_t lead_len(unsigned c)
{
    return c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
           : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
}

size_t tb_text_escape_bytes(const char *in, size_t n, char *out, size_t cap, int keep_newline,
                            int final, size_t *consumed)
{
    const unsigned char *p = (const unsigned char *)in;
    size_t i = 0, at = 0;
    while (i < n) {
        size_t want = lead_len(p[i]), len = 0;
        if (want > 1 && i + want > n && !final) {
            /* the rest may come in the next call, but only if all that is here continues it */
            int continues = 1;
            for (size_t q = i + 1; q < n; q++) continues &= (p[q] & 0xC0) == 0x80;
            if (continues) break;
        }
        if (want && i + want <= n) {
            unsigned char seq[5] = { 0 };
            memcpy(seq, p + i, want);
            len = utf8_len(seq) == want ? want : 0;
        }
        int esc = !len || (p[i] < 0x20 && p[i] != '\t' && !(keep_newline && p[i] == '\n')) ||
                  p[i] == 0x7F || p[i] == 0;
        size_t code_at = i, take = len ? len : 1;
        if (len == 2 && is_c1(p + i)) { esc = 1; code_at = i + 1; }   /* C1: its code point */
        if (esc) {
            if (at + 5 > cap) break;
            snprintf(out + at, cap - at, "\\x%02x", p[code_at]);
            at += 4;
        } else {
            if (at + take + 1 > cap) break;
            memcpy(out + at, p + i, take);
            at += take;
        }
        i += take;
    }
    if (cap) out[at < cap ? at : cap - 1] = 0;
    if (consumed) *consumed = i;
    return at;
}

char *tb_text_escape(const char *in, char *out, size_t cap, int keep_newline)
{
    tb_text_escape_bytes(in, strlen(in), out, cap, keep_newline, 1, NULL);
    return out;
}
