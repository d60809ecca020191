/* shapes.c - shape lists: tokens (each parsed by its operation's entry in the op seam,
 * common/op.h), shape files, named sets (see shapes.h). Reads a file a character at a time
 * under stated bounds (shapes.h), so no line is split, no line number is wrong, and no endless
 * file (/dev/zero) hangs it; drops duplicates through a hash set. */
#define _GNU_SOURCE
#include "driver/shapes.h"
#include "common/tb.h"
#include "common/text.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tb_shape_parse(const char *tok, tb_shape *out, char *msg, size_t len)
{
    return tb_op_for_token(tok)->shape_parse(tok, out, msg, len);
}

int tb_shapes_any_attention(const tb_shape_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (tb_op_of_shape(&l->v[i]) != &tb_op_gemm) return 1;
    return 0;
}

int tb_shapes_gemm_only(const tb_shape_list *l, const char *cmd, char *msg, size_t len)
{
    if (tb_shapes_any_attention(l))
        return tb_fail(msg, len, TB_EUSAGE, "attention shapes: `%s` measures GEMM only for now "
                       "(issue 33)", cmd);
    return TB_OK;
}

/* ---- the list and its duplicate set ------------------------------------------------------- */

/* a shape's key: its operation (0 read as GEMM) and every size; the label is not part of it */
#define KEY_N 12
static void key(const tb_shape *s, int64_t k[KEY_N])
{
    const tb_attn_shape *a = &s->attn;
    const int64_t v[KEY_N] = { s->op ? s->op : TB_OP_GEMM, s->m, s->n, s->k, s->batch, a->batch,
                               a->heads, a->heads_kv, a->seq_q, a->seq_k, a->head_dim, a->causal };
    memcpy(k, v, sizeof v);
}

static uint64_t shape_hash(const tb_shape *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    int64_t k[KEY_N];
    key(s, k);
    for (int i = 0; i < KEY_N; i++) h = (h ^ (uint64_t)k[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

static int same(const tb_shape *a, const tb_shape *b)
{
    int64_t x[KEY_N], y[KEY_N];
    key(a, x);
    key(b, y);
    return memcmp(x, y, sizeof x) == 0;
}

/* rebuild the open-addressing set (indices + 1 into v; 0 empty) at twice the list's capacity */
static int rehash(tb_shape_list *l, size_t slots)
{
    size_t *t = calloc(slots, sizeof *t);
    if (!t) return TB_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        size_t at = shape_hash(&l->v[i]) & (slots - 1);
        while (t[at]) at = (at + 1) & (slots - 1);
        t[at] = i + 1;
    }
    free(l->set);
    l->set = t;
    l->set_slots = slots;
    return TB_OK;
}

static int push(tb_shape_list *l, const tb_shape *s, char *msg, size_t len)
{
    if (l->set_slots < 2 * (l->n + 1)) {
        size_t slots = l->set_slots ? l->set_slots * 2 : 64;
        while (slots < 2 * (l->n + 1)) slots *= 2;
        if (rehash(l, slots)) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    size_t at = shape_hash(s) & (l->set_slots - 1);
    for (; l->set[at]; at = (at + 1) & (l->set_slots - 1))
        if (same(&l->v[l->set[at] - 1], s)) return TB_OK;   /* a duplicate: the first kept */
    if (l->n >= TB_SHAPES_MAX)
        return tb_fail(msg, len, TB_EUSAGE, "more than %d shapes in one sweep", TB_SHAPES_MAX);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        tb_shape *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *s;
    l->set[at] = l->n;
    return TB_OK;
}

/* ---- shape files ---------------------------------------------------------------------------- */

/* One line of f into buf (at most cap - 1 bytes kept, '\n' dropped): 1 a line, 0 the end,
 * -1 a line longer than cap - 1 (the rest of it is consumed), -2 a NUL byte in it. *total
 * counts the bytes read. */
static int read_line(FILE *f, char *buf, size_t cap, size_t *total)
{
    size_t n = 0;
    int c, over = 0, nul = 0, any = 0;
    while ((c = getc(f)) != EOF) {
        any = 1;
        (*total)++;
        if (c == '\n') break;
        if (c == 0) nul = 1;
        if (n + 1 < cap) buf[n++] = (char)c;
        else over = 1;
        if (*total > TB_SHAPES_MAX_BYTES) break;
    }
    buf[n] = 0;
    if (!any) return 0;
    return nul ? -2 : over ? -1 : 1;
}

static int add_file(tb_shape_list *l, const char *path, const char *shown, char *msg, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return tb_fail(msg, len, TB_EUSAGE, "shape file '%s' is a directory", shown);
    FILE *f = fopen(path, "r");
    if (!f) return tb_fail(msg, len, TB_EUSAGE, "cannot read shape file '%s': %s", shown, strerror(errno));
    char line[TB_SHAPES_MAX_LINE + 1];   /* read_line keeps cap - 1 bytes: the bound itself */
    size_t total = 0;
    long lineno = 0;
    int rc = TB_OK, count = 0, r;
    while ((r = read_line(f, line, sizeof line, &total)) != 0) {
        lineno++;
        if (total > TB_SHAPES_MAX_BYTES) {
            rc = tb_fail(msg, len, TB_EUSAGE, "shape file '%s' is longer than %d bytes: not a shape "
                         "file", shown, TB_SHAPES_MAX_BYTES);
            break;
        }
        if (r == -1) {
            rc = tb_fail(msg, len, TB_EUSAGE, "%s:%ld: line longer than %d bytes", shown, lineno,
                         TB_SHAPES_MAX_LINE);
            break;
        }
        if (r == -2) {
            rc = tb_fail(msg, len, TB_EUSAGE, "%s:%ld: a NUL byte: not a text file", shown, lineno);
            break;
        }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *save = NULL, *tok = strtok_r(line, " \t\r", &save);
        if (!tok) continue;
        char *label = strtok_r(NULL, " \t\r", &save), *extra = strtok_r(NULL, " \t\r", &save);
        tb_shape s;
        char m2[TB_MSG_LEN];
        if (tb_shape_parse(tok, &s, m2, sizeof m2) != TB_OK) {
            rc = tb_fail(msg, len, TB_EUSAGE, "%s:%ld: %s", shown, lineno, m2);
            break;
        }
        if (extra) {
            rc = tb_fail(msg, len, TB_EUSAGE, "%s:%ld: more than a shape and a label", shown, lineno);
            break;
        }
        if (label) {
            int bad = strlen(label) >= sizeof s.label || !tb_text_utf8_valid(label) ||
                      tb_text_has_control(label);
            if (bad) {
                rc = tb_fail(msg, len, TB_EUSAGE, "%s:%ld: a label longer than %zu bytes, not "
                             "UTF-8 or with control characters", shown, lineno, sizeof s.label - 1);
                break;
            }
            snprintf(s.label, sizeof s.label, "%s", label);
        }
        if ((rc = push(l, &s, msg, len)) != TB_OK) break;
        count++;
    }
    if (rc == TB_OK && ferror(f))
        rc = tb_fail(msg, len, TB_EUSAGE, "cannot read shape file '%s': %s", shown, strerror(errno));
    fclose(f);
    if (rc == TB_OK && count == 0) rc = tb_fail(msg, len, TB_EUSAGE, "shape file '%s' has no shapes", shown);
    return rc;
}

static void list_sets(const char *dir, char *buf, size_t len)
{
    buf[0] = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return;
    struct dirent *e;
    size_t at = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 4 && strcmp(e->d_name + n - 4, ".txt") == 0 && at + n < len) {
            at += (size_t)snprintf(buf + at, len - at, "%s%.*s", at ? ", " : "", (int)(n - 4), e->d_name);
        }
    }
    closedir(d);
}

/* One item of a --shapes list: a shape, a path (it holds a '/' or a '.'), or a set's name. */
static int add_item(tb_shape_list *l, const char *tok, const char *sets_dir, char *msg, size_t len)
{
    struct stat st;
    if (strchr(tok, '/') || strchr(tok, '.')) return add_file(l, tok, tok, msg, len);
    if (isdigit((unsigned char)*tok) || *tok == '-') {
        tb_shape s;
        int rc = tb_shape_parse(tok, &s, msg, len);
        return rc ? rc : push(l, &s, msg, len);
    }
    char *path = NULL;
    if (asprintf(&path, "%s/%s.txt", sets_dir ? sets_dir : ".", tok) < 0)
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    int is_set = sets_dir && stat(path, &st) == 0, is_file = stat(tok, &st) == 0;
    int rc;
    if (is_set && is_file)
        rc = tb_fail(msg, len, TB_EUSAGE, "'%s' names both a shipped shape set and a file here: "
                     "write ./%s for the file (a name always means the set)", tok, tok);
    else if (is_set)
        rc = add_file(l, path, path, msg, len);
    else {
        char sets[512];
        list_sets(sets_dir, sets, sizeof sets);
        rc = tb_fail(msg, len, TB_EUSAGE, "unknown shape set '%s' (sets: %s)%s%s", tok,
                     sets[0] ? sets : "none found", is_file ? "; for the file here, write ./" : "",
                     is_file ? tok : "");
    }
    free(path);
    return rc;
}

int tb_shapes_add(tb_shape_list *l, const char *spec, const char *sets_dir, char *msg, size_t len)
{
    if (!spec || !*spec) return tb_fail(msg, len, TB_EUSAGE, "empty shape list");
    char *copy = strdup(spec);
    if (!copy) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    int rc = TB_OK, item = 0;
    for (char *tok = copy, *next; tok && rc == TB_OK; tok = next) {
        next = strchr(tok, ',');
        if (next) *next++ = 0;
        item++;
        while (*tok == ' ' || *tok == '\t') tok++;
        char *end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t')) *--end = 0;
        if (!*tok) {
            rc = tb_fail(msg, len, TB_EUSAGE, "empty item %d in the shape list '%.64s'", item, spec);
            break;
        }
        rc = add_item(l, tok, sets_dir, msg, len);
    }
    free(copy);
    return rc;
}

void tb_shapes_free(tb_shape_list *l)
{
    free(l->v);
    free(l->set);
    memset(l, 0, sizeof *l);
}
