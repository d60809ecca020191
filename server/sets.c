/* sets.c - the leaderboard's shape sets, read once at start (see sets.h): one shape per line,
 * '#' starts a comment, a label may follow the shape; a token is read by its op's parser
 * (common/op.h: GEMM's sizes up to 2^20, attention's bounds of docs/cli.md), and a line longer
 * than 4096 bytes, a token its op refuses or a set of two operations makes the file unreadable,
 * and the server says which. */
#define _GNU_SOURCE
#include "sets.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tbs_shape_same(const tbs_shape *a, const tbs_shape *b)
{
    const tb_attn_shape *x = &a->attn, *y = &b->attn;
    return (a->op ? a->op : TB_OP_GEMM) == (b->op ? b->op : TB_OP_GEMM) && a->m == b->m && a->n == b->n &&
           a->k == b->k && a->batch == b->batch && x->batch == y->batch && x->heads == y->heads &&
           x->heads_kv == y->heads_kv && x->seq_q == y->seq_q && x->seq_k == y->seq_k &&
           x->head_dim == y->head_dim && !x->causal == !y->causal;
}

int tbs_shape_text(const tbs_shape *s, char *buf, size_t len)
{
    const tb_op_desc *d = tb_op_of_shape(s);
    return d ? d->shape_text(s, buf, len) : snprintf(buf, len, "?");
}

const char *tbs_set_op_name(const tbs_set *set)
{
    const tb_op_desc *d = tb_op_find(set->op);
    return d ? d->name : "gemm";
}

static int load_one(const char *path, tbs_set *set, char *msg, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) { snprintf(msg, len, "cannot read shape set '%s'", path); return -1; }
    char line[4098];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) { snprintf(msg, len, "%s:%d: line too long", path, lineno); fclose(f); return -1; }
        char *h = strchr(line, '#');
        if (h) *h = 0;
        char *tok = strtok(line, " \t\r\n");
        if (!tok) continue;
        tbs_shape s;
        char why[256];
        const tb_op_desc *d = tb_op_for_token(tok);
        if (d->shape_parse(tok, &s, why, sizeof why)) {
            snprintf(msg, len, "%s:%d: not a shape: %s", path, lineno, why);
            fclose(f);
            return -1;
        }
        if (!s.op) s.op = TB_OP_GEMM;
        char *label = strtok(NULL, " \t\r\n");
        if (label) snprintf(s.label, sizeof s.label, "%s", label);
        if (set->n && s.op != set->op) {
            snprintf(msg, len, "%s:%d: a %s shape in a set of %s shapes (a set holds one operation)", path,
                     lineno, d->name, tbs_set_op_name(set));
            fclose(f);
            return -1;
        }
        set->op = s.op;
        tbs_shape *nv = realloc(set->s, (set->n + 1) * sizeof *nv);
        if (!nv) { fclose(f); snprintf(msg, len, "out of memory"); return -1; }
        set->s = nv;
        set->s[set->n++] = s;
    }
    fclose(f);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const tbs_set *)a)->name, ((const tbs_set *)b)->name);
}

int tbs_sets_load(const char *dir, tbs_sets *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) { snprintf(msg, len, "cannot read the shape sets in '%s'", dir); return -1; }
    struct dirent *e;
    int rc = 0;
    while (!rc && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l <= 4 || l - 4 >= sizeof out->v[0].name || strcmp(e->d_name + l - 4, ".txt")) continue;
        if (strspn(e->d_name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != l - 4) continue;
        tbs_set *nv = realloc(out->v, (out->n + 1) * sizeof *nv);
        if (!nv) { rc = -1; snprintf(msg, len, "out of memory"); break; }
        out->v = nv;
        tbs_set *s = &out->v[out->n++];
        memset(s, 0, sizeof *s);
        s->op = TB_OP_GEMM;
        snprintf(s->name, sizeof s->name, "%.*s", (int)(l - 4), e->d_name);
        char *path = NULL;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) { rc = -1; break; }
        rc = load_one(path, s, msg, len);
        free(path);
    }
    closedir(d);
    if (rc) tbs_sets_free(out);
    else qsort(out->v, out->n, sizeof *out->v, by_name);   /* the pages list them in this order */
    return rc;
}

const tbs_set *tbs_sets_find(const tbs_sets *sets, const char *name)
{
    for (size_t i = 0; i < sets->n; i++) if (!strcmp(sets->v[i].name, name)) return &sets->v[i];
    return NULL;
}

void tbs_sets_free(tbs_sets *sets)
{
    for (size_t i = 0; i < sets->n; i++) free(sets->v[i].s);
    free(sets->v);
    memset(sets, 0, sizeof *sets);
}
