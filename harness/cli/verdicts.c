/* verdicts.c - the command-line side of gate and compare (see verdicts.h). */
#define _GNU_SOURCE
#include "cli/verdicts.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/report_script.h"
#include "common/tb.h"
#include "store/store.h"
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tb_cli_threshold(const char *s, double *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    size_t l = strlen(buf);
    if (l && buf[l - 1] == '%') buf[l - 1] = 0;
    double pct;
    if (tb_cli_double("--threshold", buf, 0, 50, &pct)) return -1;
    *out = pct / 100.0;
    return 0;
}

/* dirname of path into buf ("." for a bare name) */
static void dir_of(const char *path, char *buf, size_t len)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, len, "%s", dirname(tmp));
}

/* --chart FILE: an SVG in a folder that exists; python3 with matplotlib and the script there */
static int chart_check(const tb_cli_reports *r)
{
    const char *c = r->chart;
    size_t n = strlen(c);
    if (!strcmp(c, "-") || n < 5 || strcasecmp(c + n - 4, ".svg") || c[n - 5] == '/')
        return tb_cli_error("--chart '%s': the chart is an SVG file: name one ending in .svg", c);
    char dir[PATH_MAX];
    struct stat st;
    dir_of(c, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return tb_cli_error("--chart '%s': no folder '%s' to write it in", c, dir);
    if (stat(c, &st) == 0 && !S_ISREG(st.st_mode))
        return tb_cli_error("--chart '%s' exists and is not a file", c);
    char script[1200], python[1100];
    if (!r->paths || tb_script_find(r->paths, script, sizeof script)) return TB_EXIT_USAGE;
    tb_script_python(python, sizeof python);
    char *args[] = { python, "-B", script, "check", NULL };
    return tb_script_run(args) ? TB_EXIT_USAGE : 0;   /* the script said what is missing */
}

int tb_cli_reports_check(const tb_cli_reports *r)
{
    if (r->format && !tb_compare_writer_for(r->format))
        return tb_cli_error("unknown --format '%s' (table, markdown, junit or json)", r->format);
    const char *p[4] = { r->markdown, r->junit, r->json, r->chart };
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (p[i] && p[j] && !strcmp(p[i], p[j]) && strcmp(p[i], "-"))
                return tb_cli_error("two reports name the same file '%s'", p[i]);
    return r->chart ? chart_check(r) : 0;
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++) if (*s < '0' || *s > '9') return 0;
    return 1;
}

static int looks_like_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t') {}
    fclose(f);
    return c == '{';
}

int tb_cli_side(const char *spec, const char *db, const char *ns, tb_side *out)
{
    char msg[TB_MSG_LEN], file[TB_PATH_LEN];
    long long id = 0;
    struct stat sb;
    if (all_digits(spec)) {
        if (tb_cli_int("run", spec, 1, INT64_MAX, &id)) return 2;
        if ((size_t)snprintf(file, sizeof file, "%s", db) >= sizeof file)
            return tb_cli_error("database path too long: '%.64s...'", db);
    } else if (stat(spec, &sb) == 0) {
        if (looks_like_json(spec)) {
            if (tb_side_from_baseline(spec, out, msg, sizeof msg)) return tb_cli_error("%s", msg);
            return 0;
        }
        if ((size_t)snprintf(file, sizeof file, "%s", spec) >= sizeof file)
            return tb_cli_error("database path too long: '%.64s...'", spec);
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || !all_digits(colon + 1) || (size_t)(colon - spec) >= sizeof file)
            return tb_cli_error("'%s' is not a run id, a database, FILE:ID or a baseline file", spec);
        snprintf(file, sizeof file, "%.*s", (int)(colon - spec), spec);
        if (tb_cli_int("run", colon + 1, 1, INT64_MAX, &id)) return 2;
    }
    tb_store *st;
    int64_t run;
    int rc = tb_cli_open_run(file, id, &st, &run);
    if (rc) return rc;
    rc = tb_side_from_run(st, run, ns, file, out, msg, sizeof msg);
    tb_store_close(st);
    return rc ? tb_cli_error("%s", msg) : 0;
}

static int write_one(const tb_comparison *c, const tb_compare_label *l, tb_compare_writer w,
                     const char *path, const char *guard)
{
    char msg[TB_MSG_LEN];
    tb_out o;
    if (tb_out_open(&o, path, guard, msg, sizeof msg)) return tb_cli_error("%s", msg);
    if (w(c, l, o.f)) {
        int e = errno;
        tb_out_abort(&o);
        if (e == EPIPE) return TB_EXIT_PIPE;
        return tb_cli_error("cannot write the report to '%s': %s", path, strerror(e));
    }
    int rc = tb_out_commit(&o, msg, sizeof msg);
    return rc ? tb_cli_fail(rc, msg) : 0;
}

/* $GITHUB_STEP_SUMMARY is appended to, as GitHub expects */
static int append_summary(const tb_comparison *c, const tb_compare_label *l, const char *path,
                          const char *guard)
{
    if (tb_out_same_file(path, guard))
        return tb_cli_error("GITHUB_STEP_SUMMARY '%s' is the database '%s': refusing to write", path, guard);
    FILE *f = fopen(path, "a");
    if (!f) return tb_cli_error("cannot write GITHUB_STEP_SUMMARY '%s': %s", path, strerror(errno));
    int rc = tb_compare_write_markdown(c, l, f);
    if (fclose(f) != 0 || rc)
        return tb_cli_error("cannot write GITHUB_STEP_SUMMARY '%s': %s", path, strerror(errno));
    return 0;
}

/* The chart: the comparison as JSON in a temporary file, drawn by the report script (its
 * figure code is the HTML report's). 0, or the exit code with the error printed. */
static int draw_chart(const tb_comparison *c, const tb_compare_label *l, const tb_cli_reports *r,
                      const char *guard)
{
    if (tb_out_same_file(r->chart, guard))
        return tb_cli_error("--chart '%s' is the database '%s': refusing to write", r->chart, guard);
    const char *td = getenv("TMPDIR");
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s/tilebench-chart-XXXXXX", td && *td ? td : "/tmp");
    int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        if (fd >= 0) { close(fd); unlink(tmp); }
        return tb_cli_error("--chart: cannot make a temporary file in '%s': %s",
                            td && *td ? td : "/tmp", strerror(errno));
    }
    int w = tb_compare_write_json(c, l, f);
    if (fclose(f) != 0 || w) {
        unlink(tmp);
        return tb_cli_error("--chart: cannot write the temporary file '%s'", tmp);
    }
    char script[1200], python[1100], title[600];
    int rc = tb_script_find(r->paths, script, sizeof script);
    if (!rc) {
        tb_script_python(python, sizeof python);
        snprintf(title, sizeof title, "%s, %s against %s", l->command, c->head_what, c->base_what);
        char *args[] = { python, "-B", script, "chart", "--json", tmp, "--output", (char *)r->chart,
                         "--title", title, NULL };
        rc = tb_script_run(args);
    }
    unlink(tmp);
    return rc;
}

/* target as a path relative to the folder of the file `from` (both folders resolved), or NULL */
static char *relative_to(const char *from, const char *target)
{
    char d1[PATH_MAX], d2[PATH_MAX], a[PATH_MAX], b[PATH_MAX], base[PATH_MAX];
    dir_of(from, d1, sizeof d1);
    dir_of(target, d2, sizeof d2);
    snprintf(base, sizeof base, "%s", target);
    if (!realpath(d1, a) || !realpath(d2, b)) return NULL;
    /* the longest common prefix that ends at a component boundary of both */
    size_t i = 0, common = 0;
    for (;; i++) {
        int ea = a[i] == 0 || a[i] == '/', eb = b[i] == 0 || b[i] == '/';
        if (ea && eb) common = i;
        if (!a[i] || !b[i] || a[i] != b[i]) break;
    }
    char *out = calloc(1, PATH_MAX);
    if (!out) return NULL;
    for (const char *p = a + common; *p; p++)       /* one "../" per component of a below it */
        if (*p == '/' && p[1] && p[1] != '/') strncat(out, "../", PATH_MAX - strlen(out) - 1);
    const char *rest = b + common;
    while (*rest == '/') rest++;
    if (*rest) {
        strncat(out, rest, PATH_MAX - strlen(out) - 1);
        strncat(out, "/", PATH_MAX - strlen(out) - 1);
    }
    strncat(out, basename(base), PATH_MAX - strlen(out) - 1);
    return out;
}

int tb_cli_reports_write(const tb_comparison *c, const tb_compare_label *l, const tb_cli_reports *r,
                         const char *guard)
{
    tb_compare_label lc = *l;   /* with the chart, once it is drawn */
    int failed = 0;
    if (r->chart) {
        if (draw_chart(c, l, r, guard)) failed = 1;
        else lc.chart_file = r->chart;
    }
    int rc = write_one(c, &lc, tb_compare_writer_for(r->format ? r->format : "table"), "-", guard);
    if (!rc && r->markdown) {
        tb_compare_label lm = lc;
        char *rel = lc.chart_file && strcmp(r->markdown, "-") ? relative_to(r->markdown, r->chart) : NULL;
        if (rel) lm.chart_link = rel;
        rc = write_one(c, &lm, tb_compare_write_markdown, r->markdown, guard);
        free(rel);
    }
    if (!rc && r->junit) rc = write_one(c, &lc, tb_compare_write_junit, r->junit, guard);
    if (!rc && r->json) rc = write_one(c, &lc, tb_compare_write_json, r->json, guard);
    const char *gh = getenv("GITHUB_STEP_SUMMARY");
    if (!rc && gh && *gh) rc = append_summary(c, &lc, gh, guard);
    if (rc == TB_EXIT_PIPE) return rc;
    return rc || failed ? TB_EXIT_FAIL : 0;
}
