/* stop.c - stopping criteria (see stop.h): the spec parser, the running statistics every
 * criterion shares, and one table entry per criterion (name, parameter table, rule).
 *
 * Adding a criterion: write its parameter table (its own parameters, then COMMON_PARAMS), its
 * rule (met) and optionally an init (checks across parameters, its own state), and append it
 * to CRITERIA. Nothing else changes. The running mean and variance are Welford's, O(1) per
 * sample; nothing keeps the samples themselves (the caller does).
 */
#define _POSIX_C_SOURCE 200809L   /* strdup */
#include "common/stop.h"
#include "common/tb.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARAMS 8
#define MAX_WINDOW 4096

typedef struct param_def {
    const char *key;
    int integer;            /* 1: a whole number */
    double def;
    double lo, hi;          /* valid range, inclusive, unless lo_open */
    int lo_open;            /* 1: lo itself is not valid */
    const char *want;       /* for the message: "a number > 0" */
} param_def;

typedef struct crit_ops crit_ops;

struct tb_stop {
    const crit_ops *ops;
    double v[MAX_PARAMS];   /* parameter values, in the order of ops->params */
    long n_added;           /* every tb_stop_add, finite or not */
    long n;                 /* finite, non-negative samples in the statistics */
    double mean, m2;        /* Welford */
    double total_ms;        /* GPU time spent timing (a batch counts whole) */
    double *ring;           /* stdrel: spread after each of the last window+1 additions */
    int ring_cap, ring_count, ring_head;
};

struct crit_ops {
    const char *name;
    const param_def *params;
    int nparams;            /* including the common two, which come last */
    /* once everything is parsed: cross-parameter checks and the criterion's own state;
     * TB_OK, or TB_EUSAGE / TB_ENOMEM with msg (tb_stop_free cleans up) */
    int (*init)(tb_stop *c, char *msg, size_t len);
    /* the criterion's own rule: 1 and why filled when met */
    int (*met)(tb_stop *c, char *why, size_t len);
};

/* max-time and max-samples: every criterion's last two parameters */
#define COMMON_PARAMS \
    { "max-time", 0, 1.0, 0, 1e9, 1, "a number of seconds > 0" }, \
    { "max-samples", 1, 1000, 1, 1e9, 0, "a whole number >= 1" }

static double val(const tb_stop *c, int i) { return c->v[i]; }
static double max_time(const tb_stop *c) { return c->v[c->ops->nparams - 2]; }
static long max_samples(const tb_stop *c) { return (long)c->v[c->ops->nparams - 1]; }

static double spread(const tb_stop *c)  /* relative stdev of the samples */
{
    if (c->n < 2 || !(c->mean > 0)) return NAN;
    return sqrt(c->m2 / (double)(c->n - 1)) / c->mean;
}

static double noise(const tb_stop *c)   /* relative standard error of the mean */
{
    return spread(c) / sqrt((double)c->n);
}

/* ---- stdrel ---------------------------------------------------------------------------- */

enum { SR_MAX_NOISE, SR_MIN_TIME, SR_MIN_SAMPLES, SR_WINDOW, SR_SETTLE };

static const param_def stdrel_params[] = {
    { "max-noise", 0, 0.005, 0, 1e9, 1, "a number > 0" },
    { "min-time", 0, 0.05, 0, 1e9, 0, "a number of seconds >= 0" },
    { "min-samples", 1, 10, 1, 1e9, 0, "a whole number >= 1" },
    { "window", 1, 16, 2, MAX_WINDOW, 0, "a whole number from 2 to 4096" },
    { "settle", 0, 0.1, 0, 1, 1, "a number > 0 and <= 1" },
    COMMON_PARAMS
};

static int stdrel_init(tb_stop *c, char *msg, size_t len)
{
    if ((long)val(c, SR_MIN_SAMPLES) > max_samples(c))
        return tb_fail(msg, len, TB_EUSAGE, "min-samples %ld exceeds max-samples %ld for stdrel",
                       (long)val(c, SR_MIN_SAMPLES), max_samples(c));
    c->ring_cap = (int)val(c, SR_WINDOW) + 1;   /* window additions span window+1 values */
    c->ring = malloc(sizeof *c->ring * (size_t)c->ring_cap);
    return c->ring ? TB_OK : tb_fail(msg, len, TB_ENOMEM, "out of memory");
}

/* The spread has settled when, over the last `window` additions, it moved by less than
 * `settle` of its current value. */
static int settled(const tb_stop *c, double now)
{
    if (c->ring_count < c->ring_cap || !(now > 0)) return 0;
    double lo = c->ring[0], hi = c->ring[0];
    for (int i = 1; i < c->ring_cap; i++) {
        if (c->ring[i] < lo) lo = c->ring[i];
        if (c->ring[i] > hi) hi = c->ring[i];
    }
    return hi - lo < val(c, SR_SETTLE) * now;
}

static int stdrel_met(tb_stop *c, char *why, size_t len)
{
    if (c->n < (long)val(c, SR_MIN_SAMPLES) || c->total_ms < 1e3 * val(c, SR_MIN_TIME))
        return 0;
    double nz = noise(c), sp = spread(c);
    if (nz <= val(c, SR_MAX_NOISE)) {     /* false for NaN */
        tb_fail(why, len, 0, "stdrel: noise %.2f%% <= %.2f%% after %ld samples", 100 * nz,
                100 * val(c, SR_MAX_NOISE), c->n_added);
        return 1;
    }
    if (settled(c, sp)) {
        tb_fail(why, len, 0, "stdrel: noise settled at %.2f%% (spread %.1f%%) after %ld samples",
                100 * nz, 100 * sp, c->n_added);
        return 1;
    }
    return 0;
}

/* ---- fixed ----------------------------------------------------------------------------- */

enum { FX_SAMPLES };

static const param_def fixed_params[] = {
    { "samples", 1, 100, 1, 1e9, 0, "a whole number >= 1" },
    COMMON_PARAMS
};

static int fixed_init(tb_stop *c, char *msg, size_t len)
{
    if ((long)val(c, FX_SAMPLES) > max_samples(c))
        return tb_fail(msg, len, TB_EUSAGE, "samples %ld exceeds max-samples %ld for fixed",
                       (long)val(c, FX_SAMPLES), max_samples(c));
    return TB_OK;
}

static int fixed_met(tb_stop *c, char *why, size_t len)
{
    if (c->n_added < (long)val(c, FX_SAMPLES)) return 0;
    tb_fail(why, len, 0, "fixed: %ld samples", c->n_added);
    return 1;
}

/* ---- the table ------------------------------------------------------------------------- */

#define NPARAMS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const crit_ops CRITERIA[] = {
    { "stdrel", stdrel_params, NPARAMS(stdrel_params), stdrel_init, stdrel_met },
    { "fixed", fixed_params, NPARAMS(fixed_params), fixed_init, fixed_met },
};
#define NCRITERIA NPARAMS(CRITERIA)

/* ---- parsing --------------------------------------------------------------------------- */

static void list_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < NCRITERIA && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", CRITERIA[i].name);
}

static void list_keys(const crit_ops *o, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < o->nparams && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", o->params[i].key);
}

/* Shortest text that reads back as the same double. */
static void fmt_num(double x, int integer, char *buf, size_t len)
{
    if (integer) {
        snprintf(buf, len, "%.0f", x);
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) return;
    }
}

static int parse_value(const crit_ops *o, const param_def *p, const char *text, double *out,
                       char *msg, size_t len)
{
    char *end;
    double x = *text && !isspace((unsigned char)*text) ? strtod(text, &end) : NAN;
    int ok = !isnan(x) && *end == 0 && isfinite(x) && (p->lo_open ? x > p->lo : x >= p->lo) &&
             x <= p->hi && (!p->integer || x == floor(x));
    if (!ok)
        return tb_fail(msg, len, TB_EUSAGE, "invalid value '%s' for %s:%s (want %s)", text,
                       o->name, p->key, p->want);
    *out = x;
    return TB_OK;
}

static int parse_params(tb_stop *c, char *list, char *msg, size_t len)
{
    const crit_ops *o = c->ops;
    int seen[MAX_PARAMS] = { 0 };
    char *save = NULL;
    /* strtok_r would skip empty items; walk the commas by hand so "a=1,,b=2" is an error */
    for (char *item = list; item; item = save) {
        char *comma = strchr(item, ',');
        save = comma ? comma + 1 : NULL;
        if (comma) *comma = 0;
        char *eq = strchr(item, '=');
        if (!eq || eq == item)
            return tb_fail(msg, len, TB_EUSAGE, "invalid parameter '%s' for %s (want key=value)",
                           item, o->name);
        *eq = 0;
        int k = -1;
        for (int i = 0; i < o->nparams; i++)
            if (strcmp(o->params[i].key, item) == 0) k = i;
        if (k < 0) {
            char keys[256];
            list_keys(o, keys, sizeof keys);
            return tb_fail(msg, len, TB_EUSAGE, "unknown parameter '%s' for %s (%s)", item,
                           o->name, keys);
        }
        if (seen[k]++)
            return tb_fail(msg, len, TB_EUSAGE, "parameter '%s' given twice for %s", item, o->name);
        int rc = parse_value(o, &o->params[k], eq + 1, &c->v[k], msg, len);
        if (rc) return rc;
    }
    return TB_OK;
}

int tb_stop_create(const char *spec, tb_stop **out, char *msg, size_t len)
{
    *out = NULL;
    char names[128];
    list_names(names, sizeof names);
    if (!spec || !*spec)
        return tb_fail(msg, len, TB_EUSAGE, "empty stopping criterion (%s)", names);
    char *copy = strdup(spec);
    tb_stop *c = calloc(1, sizeof *c);
    int rc = TB_OK;
    if (!copy || !c) {
        rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
        goto err;
    }
    char *colon = strchr(copy, ':');
    if (colon) *colon = 0;
    for (int i = 0; i < NCRITERIA; i++)
        if (strcmp(CRITERIA[i].name, copy) == 0) c->ops = &CRITERIA[i];
    if (!c->ops) {
        rc = tb_fail(msg, len, TB_EUSAGE, "unknown stopping criterion '%s' (%s)", copy, names);
        goto err;
    }
    for (int i = 0; i < c->ops->nparams; i++) c->v[i] = c->ops->params[i].def;
    if (colon && (rc = parse_params(c, colon + 1, msg, len)) != TB_OK) goto err;
    if (c->ops->init && (rc = c->ops->init(c, msg, len)) != TB_OK) goto err;
    free(copy);
    *out = c;
    return TB_OK;
err:
    free(copy);
    tb_stop_free(c);
    return rc;
}

/* ---- running ------------------------------------------------------------------------- */

void tb_stop_add(tb_stop *c, double ms)
{
    tb_stop_add_timed(c, ms, ms);
}

void tb_stop_add_timed(tb_stop *c, double ms, double gpu_ms)
{
    c->n_added++;
    if (!isfinite(ms) || ms < 0) return;
    c->n++;
    double d = ms - c->mean;
    c->mean += d / (double)c->n;
    c->m2 += d * (ms - c->mean);
    c->total_ms += isfinite(gpu_ms) && gpu_ms >= ms ? gpu_ms : ms;
    if (c->ring && c->n >= 2) {
        c->ring[c->ring_head] = spread(c);
        c->ring_head = (c->ring_head + 1) % c->ring_cap;
        if (c->ring_count < c->ring_cap) c->ring_count++;
    }
}

int tb_stop_done(tb_stop *c, double wall_s, char *why, size_t why_len)
{
    char buf[160];
    if (c->ops->met(c, buf, sizeof buf)) {
        tb_fail(why, why_len, 0, "%s", buf);
        return 1;
    }
    if (c->n_added >= max_samples(c)) {
        tb_fail(why, why_len, 0, "max samples: %ld", c->n_added);
        return 1;
    }
    if (wall_s >= max_time(c)) {
        double nz = c->ring ? noise(c) : NAN;
        if (isfinite(nz))
            tb_fail(why, why_len, 0, "timeout: %.2f s after %ld samples, noise %.2f%%", wall_s,
                    c->n_added, 100 * nz);
        else
            tb_fail(why, why_len, 0, "timeout: %.2f s after %ld samples", wall_s, c->n_added);
        return 1;
    }
    return 0;
}

const char *tb_stop_name(const tb_stop *c)
{
    return c->ops->name;
}

void tb_stop_spec(const tb_stop *c, char *buf, size_t len)
{
    if (!buf || !len) return;
    size_t used = (size_t)snprintf(buf, len, "%s", c->ops->name);
    for (int i = 0; i < c->ops->nparams && used < len; i++) {
        char num[40];
        fmt_num(c->v[i], c->ops->params[i].integer, num, sizeof num);
        used += (size_t)snprintf(buf + used, len - used, "%c%s=%s", i ? ',' : ':',
                                 c->ops->params[i].key, num);
    }
}

void tb_stop_free(tb_stop *c)
{
    if (!c) return;
    free(c->ring);
    free(c);
}
