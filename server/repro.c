/* repro.c - "reproduced by others" (see repro.h): the agreement rule between two figures, and
 * the count of independent submitters that agree with each figure of a set. Figures are
 * grouped by (library, variant, shape, submitter) with one sort of pointers (no shared state:
 * the server calls this from a thread per connection), then compared only within a group. */
#include "repro.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(int64_t a, int64_t b) { return (a > b) - (a < b); }

static int same_submitter(const tbs_figure *a, const tbs_figure *b)
{
    return !strcmp(a->submitter ? a->submitter : "", b->submitter ? b->submitter : "");
}

/* the grouping order: library, variant, shape; then submitter, so that one submitter's
 * figures of a group are neighbours */
static int cmp_key(const tbs_figure *a, const tbs_figure *b)
{
    int c;
    if ((c = strcmp(a->sha256, b->sha256))) return c;
    if ((c = strcmp(a->variant, b->variant))) return c;
    if ((c = cmp_i64(a->m, b->m)) || (c = cmp_i64(a->n, b->n)) || (c = cmp_i64(a->k, b->k)) ||
        (c = cmp_i64(a->batch, b->batch)))
        return c;
    if ((c = strcmp(a->layouts, b->layouts))) return c;
    if ((c = strcmp(a->token ? a->token : "", b->token ? b->token : ""))) return c;
    return strcmp(a->dtypes, b->dtypes);
}

static int by_key_then_submitter(const void *x, const void *y)
{
    const tbs_figure *a = *(const tbs_figure *const *)x, *b = *(const tbs_figure *const *)y;
    int c = cmp_key(a, b);
    if (c) return c;
    c = strcmp(a->submitter ? a->submitter : "", b->submitter ? b->submitter : "");
    return c ? c : (a > b) - (a < b);
}

int tbs_repro_same(const tbs_figure *a, const tbs_figure *b)
{
    if (!a->sha256[0] || !strcmp(a->sha256, "unknown")) return 0;
    return cmp_key(a, b) == 0;
}

static int usable(const tbs_figure *f)
{
    return isfinite(f->median_ms) && isfinite(f->lo_ms) && isfinite(f->hi_ms) && f->median_ms > 0 &&
           f->lo_ms > 0 && f->hi_ms >= f->lo_ms;
}

/* x inside [lo, hi] widened by d on both sides */
static int inside(double x, double lo, double hi, double d)
{
    return x >= lo * (1 - d) && x <= hi * (1 + d);
}

int tbs_repro_agree(const tbs_figure *a, const tbs_figure *b, double drift)
{
    if (!(drift >= 0) || !usable(a) || !usable(b) || same_submitter(a, b) || !tbs_repro_same(a, b)) return 0;
    return inside(a->median_ms, b->lo_ms, b->hi_ms, drift) && inside(b->median_ms, a->lo_ms, a->hi_ms, drift);
}

int tbs_repro_count(const tbs_figure *f, size_t n, double drift, size_t *counts, char *msg, size_t len)
{
    if (!n) return 0;
    const tbs_figure **p = malloc(n * sizeof *p);
    if (!p) { snprintf(msg, len, "out of memory"); return -1; }
    for (size_t i = 0; i < n; i++) p[i] = &f[i];
    qsort(p, n, sizeof *p, by_key_then_submitter);
    for (size_t g0 = 0, g1; g0 < n; g0 = g1) {
        for (g1 = g0 + 1; g1 < n && cmp_key(p[g0], p[g1]) == 0; g1++) {}
        for (size_t i = g0; i < g1; i++) {
            size_t c = 0;
            const tbs_figure *last = NULL;   /* the submitter counted last: count each once */
            for (size_t j = g0; j < g1; j++) {
                if (last && same_submitter(last, p[j])) continue;
                if (tbs_repro_agree(p[i], p[j], drift)) { c++; last = p[j]; }
            }
            counts[p[i] - f] = c;
        }
    }
    free(p);
    return 0;
}
