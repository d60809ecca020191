/* verdicts.c - the command-line side of gate and compare (see verdicts.h). */
#define _GNU_SOURCE
#include "cli/verdicts.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "common/tb.h"
#include "store/store.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

int tb_cli_reports_check(const tb_cli_reports *r)
{
    if (r->format && !tb_compare_writer_for(r->format))
        return tb_cli_error("unknown --format '%s' (table, markdown, junit or json)", r->format);
    const char *p[3] = { r->markdown, r->junit, r->json };
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (p[i] && p[j] && !strcmp(p[i], p[j]) && strcmp(p[i], "-"))
                return tb_cli_error("two reports name the same file '%s'", p[i]);
    return 0;
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

int tb_cli_reports_write(const tb_comparison *c, const tb_compare_label *l, const tb_cli_reports *r,
                         const char *guard)
{
    int rc = write_one(c, l, tb_compare_writer_for(r->format ? r->format : "table"), "-", guard);
    if (!rc && r->markdown) rc = write_one(c, l, tb_compare_write_markdown, r->markdown, guard);
    if (!rc && r->junit) rc = write_one(c, l, tb_compare_write_junit, r->junit, guard);
    if (!rc && r->json) rc = write_one(c, l, tb_compare_write_json, r->json, guard);
    const char *gh = getenv("GITHUB_STEP_SUMMARY");
    if (!rc && gh && *gh) rc = append_summary(c, l, gh, guard);
    return rc == TB_EXIT_PIPE ? rc : rc ? TB_EXIT_FAIL : 0;
}
