/* shapes.c - shape parsing: tokens, shape files, named sets (see shapes.h). */
#define _POSIX_C_SOURCE 200809L
#include "driver/shapes.h"
#include "common/tb.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TB_MAX_DIM (1ll << 20)   /* 1M: anything larger is a typo, not a GEMM */

int tb_shape_parse(const char *tok, tb_shape *out, char *msg, size_t len)
{
    int64_t v[4] = { 0, 0, 0, 1 };
    int nv = 0;
    const char *p = tok;
    memset(out, 0, sizeof *out);
    while (*p) {
        if (nv == 4) goto bad;
        int neg = 0;
        if (*p == '-') { neg = 1; p++; }
        if (!isdigit((unsigned char)*p)) goto bad;
        int64_t x = 0;
        while (isdigit((unsigned char)*p)) {
            if (x > TB_MAX_DIM * 10) return tb_fail(msg, len, TB_EUSAGE, "shape '%s' is too large", tok);
            x = x * 10 + (*p++ - '0');
        }
        v[nv++] = neg ? -x : x;
        if (*p == 'x' || *p == 'X') {
            p++;
            if (!*p) goto bad;
        } else if (*p) goto bad;
    }
    if (nv < 3) goto bad;
    for (int i = 0; i < 4; i++)
        if (v[i] <= 0)
            return tb_fail(msg, len, TB_EUSAGE, "shape '%s' has a non-positive size", tok);
    for (int i = 0; i < 4; i++)
        if (v[i] > TB_MAX_DIM)
            return tb_fail(msg, len, TB_EUSAGE, "shape '%s' is too large (each size at most %lld)",
                           tok, (long long)TB_MAX_DIM);
    out->m = v[0]; out->n = v[1]; out->k = v[2]; out->batch = v[3];
    return TB_OK;
bad:
    return tb_fail(msg, len, TB_EUSAGE, "malformed shape '%s' (want MxNxK or MxNxKxB)", tok);
}

static int push(tb_shape_list *l, const tb_shape *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].m == s->m && l->v[i].n == s->n && l->v[i].k == s->k && l->v[i].batch == s->batch)
            return TB_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        tb_shape *nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return TB_ENOMEM;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = *s;
    return TB_OK;
}

static int add_file(tb_shape_list *l, const char *path, const char *shown, char *msg, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) return tb_fail(msg, len, TB_EUSAGE, "cannot read shape file '%s': %s", shown, strerror(errno));
    char line[512];
    int lineno = 0, rc = TB_OK, count = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char tok[128] = "", label[128] = "";
        int n = sscanf(line, "%127s %127s", tok, label);
        if (n < 1) continue;
        tb_shape s;
        char m2[TB_MSG_LEN];
        if (tb_shape_parse(tok, &s, m2, sizeof m2) != TB_OK) {
            rc = tb_fail(msg, len, TB_EUSAGE, "%s:%d: %s", shown, lineno, m2);
            break;
        }
        if (n == 2) snprintf(s.label, sizeof s.label, "%s", label);
        if ((rc = push(l, &s)) != TB_OK) break;
        count++;
    }
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

int tb_shapes_add(tb_shape_list *l, const char *spec, const char *sets_dir, char *msg, size_t len)
{
    if (!spec || !*spec) return tb_fail(msg, len, TB_EUSAGE, "empty shape list");
    char *copy = strdup(spec), *save = NULL;
    int rc = TB_OK;
    if (!copy) return TB_ENOMEM;
    for (char *tok = strtok_r(copy, ",", &save); tok && rc == TB_OK; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        struct stat st;
        if (isdigit((unsigned char)*tok) || *tok == '-') {
            tb_shape s;
            rc = tb_shape_parse(tok, &s, msg, len);
            if (rc == TB_OK) rc = push(l, &s);
        } else if (strchr(tok, '/') || stat(tok, &st) == 0) {
            rc = add_file(l, tok, tok, msg, len);
        } else {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s.txt", sets_dir ? sets_dir : ".", tok);
            if (sets_dir && stat(path, &st) == 0) {
                rc = add_file(l, path, path, msg, len);
            } else {
                char sets[512];
                list_sets(sets_dir, sets, sizeof sets);
                rc = tb_fail(msg, len, TB_EUSAGE, "unknown shape set or file '%s' (sets: %s)", tok,
                             sets[0] ? sets : "none found");
            }
        }
    }
    free(copy);
    return rc;
}

void tb_shapes_free(tb_shape_list *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
