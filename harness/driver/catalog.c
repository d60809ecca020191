/* catalog.c - variant discovery through a probe worker, hashing, duplicates, selection. */
#define _GNU_SOURCE
#include "driver/catalog.h"
#include "common/op.h"
#include "driver/hash.h"
#include "driver/spawn.h"
#include "common/tb.h"
#include "common/text.h"
#include "common/wire.h"
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

void tb_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

static int strv_push(char ***v, size_t *n, const char *s)
{
    char **nv = realloc(*v, (*n + 1) * sizeof *nv);
    if (!nv) return TB_ENOMEM;
    *v = nv;
    if (!(nv[*n] = strdup(s))) return TB_ENOMEM;
    (*n)++;
    return TB_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int tb_catalog_expand(char **paths, size_t n, char ***files, size_t *nfiles, char *msg, size_t len)
{
    *files = NULL;
    *nfiles = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0)
            return tb_fail(msg, len, TB_EUSAGE, "no such variant path '%s'", paths[i]);
        if (!S_ISDIR(st.st_mode)) {
            char *rp = realpath(paths[i], NULL);
            int rc = strv_push(files, nfiles, rp ? rp : paths[i]);
            free(rp);
            if (rc) return rc;
            continue;
        }
        DIR *d = opendir(paths[i]);
        if (!d) return tb_fail(msg, len, TB_EUSAGE, "cannot read variant directory '%s': %s",
                               paths[i], strerror(errno));
        char **found = NULL;
        size_t nf = 0;
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 3 && strcmp(e->d_name + l - 3, ".so") == 0) {
                char p[2048];
                snprintf(p, sizeof p, "%s/%s", paths[i], e->d_name);
                char *rp = realpath(p, NULL);
                strv_push(&found, &nf, rp ? rp : p);
                free(rp);
            }
        }
        closedir(d);
        if (nf == 0) {
            free(found);
            return tb_fail(msg, len, TB_EUSAGE, "no variant libraries (*.so) in '%s'", paths[i]);
        }
        qsort(found, nf, sizeof *found, cmp_str);
        for (size_t j = 0; j < nf; j++) strv_push(files, nfiles, found[j]);
        tb_strv_free(found, nf);
    }
    return TB_OK;
}

static void add_refusal(tb_catalog *c, const char *fmt, const char *a, const char *b)
{
    char line[TB_MSG_LEN * 2];
    snprintf(line, sizeof line, fmt, a, b);
    strv_push(&c->refusals, &c->n_refusals, line);
}

static int add_variant(tb_catalog *c, const char *file, const cJSON *vo)
{
    tb_variant_info vi;
    memset(&vi, 0, sizeof vi);
    if (c->ns[0]) {
        const char *own = tb_json_str(vo, "name", "");
        snprintf(vi.ns, sizeof vi.ns, "%s", c->ns);
        if ((size_t)snprintf(vi.name, sizeof vi.name, "%s:%s", c->ns, own) >= sizeof vi.name) {
            add_refusal(c, "'%s': variant name too long with its namespace '%s:' (127 bytes at most in all)",
                        file, c->ns);
            return TB_OK;
        }
    } else {
        snprintf(vi.name, sizeof vi.name, "%s", tb_json_str(vo, "name", ""));
    }
    /* what a variant supplies is checked, never cut: the limits of variant.h */
    const struct { const char *what, *v; size_t cap; } text[] = {
        { "family", tb_json_str(vo, "family", ""), sizeof vi.family },
        { "sass", tb_json_str(vo, "sass", ""), sizeof vi.sass },
        { "parameter text", tb_json_str(vo, "params", "{}"), sizeof vi.params_json } };
    for (size_t t = 0; t < sizeof text / sizeof text[0]; t++) {
        const char *why = strlen(text[t].v) >= text[t].cap ? "is longer than the limit"
                          : !tb_text_utf8_valid(text[t].v) ? "is not valid UTF-8"
                          : tb_text_has_control(text[t].v) ? "holds control characters" : NULL;
        if (why) {
            char line[TB_MSG_LEN * 2], shown[256];
            snprintf(line, sizeof line, "'%s': variant '%.127s': its %s (%zu bytes at most) %s: '%s'",
                     file, vi.name, text[t].what, text[t].cap - 1, why,
                     tb_text_escape(text[t].v, shown, sizeof shown, 0));
            strv_push(&c->refusals, &c->n_refusals, line);
            return TB_OK;
        }
    }
    snprintf(vi.family, sizeof vi.family, "%s", text[0].v);
    snprintf(vi.sass, sizeof vi.sass, "%s", text[1].v);
    snprintf(vi.params_json, sizeof vi.params_json, "%s", text[2].v);
    snprintf(vi.file, sizeof vi.file, "%s", file);
    vi.index = (int)tb_json_num(vo, "index", 0);
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(vo, "ops"), *op;
    cJSON_ArrayForEach(op, ops) {
        const tb_op_desc *d = cJSON_IsString(op) ? tb_op_named(op->valuestring) : NULL;
        if (d && d->op < 32) vi.ops |= 1u << d->op;
    }
    if (!cJSON_IsArray(ops)) vi.ops = 1u << TB_OP_GEMM;   /* a worker before the op seam */
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->v[i].name, vi.name) == 0) {
            char why[TB_MSG_LEN * 2];
            snprintf(why, sizeof why, "'%s': duplicate variant name '%s' (already in '%s')", file,
                     vi.name, c->v[i].file);
            strv_push(&c->refusals, &c->n_refusals, why);
            return TB_OK;
        }
    tb_variant_info *nv = realloc(c->v, (c->n + 1) * sizeof *nv);
    if (!nv) return TB_ENOMEM;
    c->v = nv;
    c->v[c->n++] = vi;
    return TB_OK;
}

/* How long loading one library may take: 60 s, or TILEBENCH_PROBE_TIMEOUT seconds. */
static double probe_limit_s(void)
{
    const char *e = getenv("TILEBENCH_PROBE_TIMEOUT");
    char *end = NULL;
    double v = e ? strtod(e, &end) : 0;
    return e && end && end != e && !*end && v > 0 && v <= 3600 ? v : 60.0;
}

/* One probe worker over files[from..]; returns the index of the next file to probe (the
 * one after a crash), or nfiles when done. */
static size_t probe_some(tb_catalog *c, const char *worker, char **files, size_t from,
                         size_t nfiles, char *msg, size_t len, int *fatal)
{
    size_t argc = nfiles - from + 2;
    char **argv = calloc(argc + 1, sizeof *argv);
    argv[0] = (char *)"tilebench-worker";
    argv[1] = (char *)"probe";
    for (size_t i = from; i < nfiles; i++) argv[2 + i - from] = files[i];
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    free(argv);
    if (rc) { *fatal = 1; return nfiles; }
    tb_proc_close_input(&p);
    size_t current = from;
    int loading = 0, done = 0, timed_out = 0;
    double limit = probe_limit_s();
    for (;;) {
        char *line = NULL;
        int r = tb_proc_next(&p, tb_now() + limit, NULL, &line);
        if (r == -1) timed_out = 1;
        if (r != 1) break;
        cJSON *o = cJSON_Parse(line);
        free(line);
        if (!o) continue;
        const char *type = tb_json_str(o, "type", "");
        if (strcmp(type, "loading") == 0) {
            loading = 1;
        } else if (strcmp(type, "file") == 0) {
            const char *file = tb_json_str(o, "file", "");
            const char *err = tb_json_str(o, "error", NULL);
            if (err) add_refusal(c, "%s%s", err, "");
            const cJSON *it;
            cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "refused"))
                if (cJSON_IsString(it)) add_refusal(c, "%s%s", it->valuestring, "");
            cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(o, "variants"))
                add_variant(c, file, it);
            loading = 0;
            current++;
        } else if (strcmp(type, "done") == 0) {
            done = 1;
        }
        cJSON_Delete(o);
    }
    if (!done) tb_proc_kill(&p);
    tb_proc_wait(&p, 5.0);
    if (!done && current < nfiles) {
        char how[128], last[256];
        tb_proc_describe_exit(&p, how, sizeof how);
        tb_proc_last_log_line(&p, last, sizeof last);
        if (p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 127 && current == from && !loading) {
            snprintf(msg, len, "cannot run the worker '%s': %s", worker, last[0] ? last : how);
            *fatal = 1;
            tb_proc_free(&p);
            return nfiles;
        }
        char why[TB_MSG_LEN * 2];
        if (timed_out)
            snprintf(why, sizeof why, "cannot load '%s': loading it did not finish within %g s "
                     "(timed out: its constructor or variant query hangs; TILEBENCH_PROBE_TIMEOUT=S "
                     "changes the limit)", files[current], limit);
        else
            snprintf(why, sizeof why, "cannot load '%s': loading it ended the probe (%s%s%s)",
                     files[current], how, last[0] ? ": " : "", last);
        strv_push(&c->refusals, &c->n_refusals, why);
        current++;
    }
    tb_proc_free(&p);
    return current;
}

int tb_catalog_load(tb_catalog *c, const char *worker, char **files, size_t nfiles,
                    char *msg, size_t len)
{
    memset(c, 0, sizeof *c);
    return tb_catalog_load_ns(c, worker, files, nfiles, "", msg, len);
}

int tb_catalog_load_ns(tb_catalog *c, const char *worker, char **files, size_t nfiles,
                       const char *ns, char *msg, size_t len)
{
    if (!ns) ns = "";
    if (strlen(ns) >= sizeof c->ns || strspn(ns, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789_-") != strlen(ns))
        return tb_fail(msg, len, TB_EUSAGE, "invalid variant namespace '%s' (letters, digits, _ "
                       "and -, at most %zu)", ns, sizeof c->ns - 1);
    snprintf(c->ns, sizeof c->ns, "%s", ns);
    size_t first = c->n, at = 0;
    while (at < nfiles) {
        int fatal = 0;
        at = probe_some(c, worker, files, at, nfiles, msg, len, &fatal);
        if (fatal) return TB_EWORKER;
    }
    for (size_t i = first; i < c->n; i++) {
        char m2[TB_MSG_LEN];
        if (tb_sha256_file(c->v[i].file, c->v[i].sha256, m2, sizeof m2) != TB_OK)
            snprintf(c->v[i].sha256, sizeof c->v[i].sha256, "unknown");
    }
    c->ns[0] = 0;
    return TB_OK;
}

const char *tb_catalog_bare_name(const tb_variant_info *v)
{
    size_t l = strlen(v->ns);
    return l && !strncmp(v->name, v->ns, l) && v->name[l] == ':' ? v->name + l + 1 : v->name;
}

void tb_catalog_drop(tb_catalog *c, size_t i)
{
    if (i >= c->n) return;
    memmove(&c->v[i], &c->v[i + 1], (c->n - i - 1) * sizeof c->v[0]);
    c->n--;
}

void tb_catalog_refuse(tb_catalog *c, size_t i, const char *why)
{
    char line[TB_MSG_LEN * 2];
    snprintf(line, sizeof line, "'%s' variant '%s': %s", c->v[i].file, c->v[i].name, why);
    strv_push(&c->refusals, &c->n_refusals, line);
    tb_catalog_drop(c, i);
}

int tb_catalog_select(tb_catalog *c, char **inc, size_t n_inc, char **exc, size_t n_exc,
                      char *msg, size_t len)
{
    size_t before = c->n, w = 0;
    for (size_t i = 0; i < c->n; i++) {
        int keep = n_inc == 0;
        const char *bare = tb_catalog_bare_name(&c->v[i]);
        for (size_t j = 0; j < n_inc && !keep; j++)
            keep = fnmatch(inc[j], c->v[i].name, 0) == 0 || fnmatch(inc[j], bare, 0) == 0;
        for (size_t j = 0; j < n_exc && keep; j++)
            keep = fnmatch(exc[j], c->v[i].name, 0) != 0 && fnmatch(exc[j], bare, 0) != 0;
        if (keep) c->v[w++] = c->v[i];
    }
    c->n = w;
    if (w == 0) {
        if (before == 0) return tb_fail(msg, len, TB_EUSAGE, "no usable variants were loaded");
        return tb_fail(msg, len, TB_EUSAGE, "no variant matches the filters (%zu loaded; "
                       "see 'tilebench list')", before);
    }
    return TB_OK;
}

void tb_catalog_free(tb_catalog *c)
{
    free(c->v);
    tb_strv_free(c->refusals, c->n_refusals);
    memset(c, 0, sizeof *c);
}
