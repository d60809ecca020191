/* sets.c - the leaderboard's shape sets, read once at start (see sets.h): one shape per line,
 * '#' starts a comment, a label may follow the shape; lines longer than 4096 bytes or sizes
 * beyond 2^20 make the file unreadable, and the server says which. */
#define _GNU_SOURCE
#include "sets.h"
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_shape(const char *t, tbs_shape *s)
{
    long long v[4] = { 0, 0, 0, 1 };
    int n = sscanf(t, "%lldx%lldx%lldx%lld", &v[0], &v[1], &v[2], &v[3]);
    if (n < 3) return -1;
    for (int i = 0; i < 4; i++) if (v[i] < 1 || v[i] > (1 << 20)) return -1;
    s->m = v[0]; s->n = v[1]; s->k = v[2]; s->batch = v[3];
    return 0;
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
        if (parse_shape(tok, &s)) { snprintf(msg, len, "%s:%d: not a shape", path, lineno); fclose(f); return -1; }
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
