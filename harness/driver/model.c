/* model.c - the wgmma family's performance model (see model.h; the derivation is in
 * docs/search.md).
 *
 * Owns the prediction, the fit and the error measures. A point on a shape is a persistent
 * grid of G CTAs (one per SM, whole clusters) over T output tiles of TM x TN, each tile a loop
 * over ceil(k / 64) k-blocks. A k-block of a tile costs 2 TM TN 64 FLOP at the SM's tensor rate
 * times an efficiency (c[EFF], x c[PINGPONG] for the pingpong schedule, x stages / c[STAGES]
 * when the ring is shallower than the latency it must hide); a tile adds a fixed c[TILE_US]
 * (prologue, epilogue). The CTAs run ceil(T / G) waves of tiles (the last one partial: the wave
 * quantisation that makes small shapes slow), or, for a stream-K point, T / G tiles' worth
 * balanced, or, under half a wave, its split-K share plus c[SPLIT] per partial its owner reads.
 * Memory bounds it from below: the compulsory bytes of A, B and D over the DRAM rate times
 * c[DRAM] (re-reads the raster cannot avoid). A launch adds c[LAUNCH_US].
 */
#include "driver/model.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double defaults[TB_MC_N] = {
    [TB_MC_EFF] = 0.9, [TB_MC_PINGPONG] = 0.97, [TB_MC_STAGES] = 3.0, [TB_MC_TILE_US] = 1.5,
    [TB_MC_LAUNCH_US] = 4.0, [TB_MC_DRAM] = 1.2, [TB_MC_SPLIT] = 1.0,
};

void tb_model_default(tb_model *md)
{
    memset(md, 0, sizeof *md);
    memcpy(md->c, defaults, sizeof md->c);
}

/* the value index of knob feature f for k (-1: a tile class the model has not seen, and no
 * room to add it) */
static int feature(const tb_model *md, const tb_knobs *k, int f)
{
    switch (f) {
    case TB_MF_TILE: {
        const int key = k->tile_m * 4096 + k->tile_n * 2 + k->pingpong;
        for (int i = 0; i < md->n_tile_keys; i++)
            if (md->tile_keys[i] == key) return i;
        return -1;
    }
    case TB_MF_STAGES: return k->stages < TB_MF_VALUES ? k->stages : TB_MF_VALUES - 1;
    case TB_MF_CLUSTER: return k->cluster_m > 1 ? 1 : k->cluster_n > 1 ? 2 : 0;
    case TB_MF_RASTER: {
        const int sw = k->swizzle >= 32 ? 3 : k->swizzle >= 16 ? 2 : k->swizzle >= 8 ? 1 : 0;
        return k->raster * 4 + sw;
    }
    case TB_MF_TAIL: return k->streamk != 0;
    default: return k->conflict != 0;
    }
}

static double effects(const tb_model *md, const tb_knobs *k)
{
    double e = 0;
    for (int f = 0; f < TB_MF_N; f++) {
        const int v = feature(md, k, f);
        if (v >= 0) e += md->fx[f][v];
    }
    return e;
}

int tb_model_to_json(const tb_model *md, char *buf, size_t cap)
{
    size_t at = 0;
#define PUT(...) do { \
        const int w_ = snprintf(at < cap ? buf + at : NULL, at < cap ? cap - at : 0, __VA_ARGS__); \
        if (w_ < 0) return TB_EUSAGE; \
        at += (size_t)w_; \
    } while (0)
    PUT("{\"c\":[");
    for (int i = 0; i < TB_MC_N; i++) PUT("%s%.17g", i ? "," : "", md->c[i]);
    PUT("],\"fx\":[");
    for (int f = 0; f < TB_MF_N; f++) {
        PUT("%s[", f ? "," : "");
        for (int v = 0; v < TB_MF_VALUES; v++) PUT("%s%.17g", v ? "," : "", md->fx[f][v]);
        PUT("]");
    }
    PUT("],\"tile_keys\":[");
    for (int i = 0; i < md->n_tile_keys; i++) PUT("%s%d", i ? "," : "", md->tile_keys[i]);
    PUT("]}");
#undef PUT
    return at < cap ? TB_OK : TB_EUSAGE;
}

int tb_model_from_json(const char *json, tb_model *md, char *msg, size_t len)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    const cJSON *c = o ? cJSON_GetObjectItemCaseSensitive(o, "c") : NULL,
                *fx = o ? cJSON_GetObjectItemCaseSensitive(o, "fx") : NULL,
                *tk = o ? cJSON_GetObjectItemCaseSensitive(o, "tile_keys") : NULL;
    tb_model m;
    memset(&m, 0, sizeof m);
    int ok = cJSON_IsArray(c) && cJSON_GetArraySize(c) == TB_MC_N && cJSON_IsArray(fx) &&
             cJSON_GetArraySize(fx) == TB_MF_N && cJSON_IsArray(tk) && cJSON_GetArraySize(tk) <= TB_MF_VALUES;
    for (int i = 0; ok && i < TB_MC_N; i++) {
        const cJSON *x = cJSON_GetArrayItem(c, i);
        ok = cJSON_IsNumber(x) && x->valuedouble > 0 && isfinite(x->valuedouble);
        if (ok) m.c[i] = x->valuedouble;
    }
    for (int f = 0; ok && f < TB_MF_N; f++) {
        const cJSON *row = cJSON_GetArrayItem(fx, f);
        ok = cJSON_IsArray(row) && cJSON_GetArraySize(row) == TB_MF_VALUES;
        for (int v = 0; ok && v < TB_MF_VALUES; v++) {
            const cJSON *x = cJSON_GetArrayItem(row, v);
            ok = cJSON_IsNumber(x) && isfinite(x->valuedouble);
            if (ok) m.fx[f][v] = x->valuedouble;
        }
    }
    for (int i = 0; ok && i < cJSON_GetArraySize(tk); i++) {
        const cJSON *x = cJSON_GetArrayItem(tk, i);
        ok = cJSON_IsNumber(x);
        if (ok) m.tile_keys[m.n_tile_keys++] = x->valueint;
    }
    cJSON_Delete(o);
    if (!ok) return tb_fail(msg, len, TB_EUSAGE, "a stored search model is not one this tilebench reads");
    *md = m;
    return TB_OK;
}

static int get_int(const cJSON *o, const char *key, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) return 0;
    *out = v->valueint;
    return 1;
}

static const char *get_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int tb_knobs_parse(const char *params_json, tb_knobs *k, char *msg, size_t len)
{
    memset(k, 0, sizeof *k);
    cJSON *o = params_json ? cJSON_Parse(params_json) : NULL;
    if (!o) return tb_fail(msg, len, TB_EUSAGE, "parameters are not a JSON object");
    const char *miss = NULL;
    if (!get_int(o, "tile_m", &k->tile_m)) miss = "tile_m";
    else if (!get_int(o, "tile_n", &k->tile_n)) miss = "tile_n";
    else if (!get_int(o, "stages", &k->stages)) miss = "stages";
    if (!get_int(o, "tile_k", &k->tile_k)) k->tile_k = 64;
    if (!get_int(o, "cluster_m", &k->cluster_m)) k->cluster_m = 1;
    if (!get_int(o, "cluster_n", &k->cluster_n)) k->cluster_n = 1;
    if (!get_int(o, "swizzle", &k->swizzle)) k->swizzle = 1;
    const char *sched = get_str(o, "schedule"), *raster = get_str(o, "raster"), *tail = get_str(o, "tail");
    if (!miss && !sched) miss = "schedule";
    if (!miss) {
        k->pingpong = strcmp(sched, "pingpong") == 0;
        const char *epi = get_str(o, "epilogue");
        k->conflict = epi && !strcmp(epi, "conflict");
        k->raster = raster && !strcmp(raster, "h") ? 2 : raster && !strcmp(raster, "n") ? 1 : 0;
        k->streamk = tail && !strcmp(tail, "streamk");
    }
    cJSON_Delete(o);
    if (miss) return tb_fail(msg, len, TB_EUSAGE, "parameters lack '%s': not a point of a tiled family", miss);
    if (k->tile_m < 1 || k->tile_n < 1 || k->tile_m > 1024 || k->tile_n > 1024 || k->tile_k < 1 ||
        k->tile_k > 1024 || k->stages < 1 || k->stages > 64 || k->cluster_m < 1 || k->cluster_n < 1 ||
        k->cluster_m > 16 || k->cluster_n > 16)
        return tb_fail(msg, len, TB_EUSAGE, "parameters out of range (tiles 1..1024, stages 1..64, "
                       "clusters 1..16)");
    return TB_OK;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double tb_model_predict_ms(const tb_model *md, const tb_machine *mc, const tb_knobs *k, int64_t m,
                           int64_t n, int64_t kk, double clock_mhz)
{
    const double *c = md->c;
    const int64_t cs = (int64_t)k->cluster_m * k->cluster_n;
    const int64_t tiles = cdiv(m, (int64_t)k->tile_m * k->cluster_m) * k->cluster_m *
                          cdiv(n, (int64_t)k->tile_n * k->cluster_n) * k->cluster_n;
    const int64_t kb = cdiv(kk, k->tile_k > 0 ? k->tile_k : 64);
    const int64_t cap = mc->sms / cs * cs > 0 ? mc->sms / cs * cs : 1;
    int64_t g = tiles < cap ? tiles : cap;
    const double rate = mc->flop_per_clk_sm * clock_mhz * 1e6;
    double eff = c[TB_MC_EFF] * (k->pingpong ? c[TB_MC_PINGPONG] : 1.0);
    if (k->stages < c[TB_MC_STAGES]) eff *= k->stages / c[TB_MC_STAGES];
    const double block_s = 2.0 * k->tile_m * k->tile_n * (k->tile_k > 0 ? k->tile_k : 64) / (rate * eff);
    const double tile_s = c[TB_MC_TILE_US] * 1e-6;
    double compute;
    if (k->streamk && tiles * 2 <= cap && kb >= 8) {          /* split-K over the whole grid */
        g = cap;
        int64_t per = cdiv(tiles * kb, g);
        if (per < 4) per = 4;
        compute = per * block_s + tile_s + c[TB_MC_SPLIT] * 1e-6 * (double)(cdiv(kb, per) - 1);
    } else if (k->streamk && tiles > g && tiles % g) {        /* stream-K: the tiles balanced */
        compute = (double)tiles * kb / g * block_s + (double)cdiv(tiles, g) * tile_s;
    } else {
        compute = (double)cdiv(tiles, g) * (kb * block_s + tile_s);
    }
    const double bytes = 2.0 * ((double)m * kk + (double)n * kk + (double)m * n);
    const double mem = c[TB_MC_DRAM] * bytes / mc->dram_bytes_s;
    return 1e3 * ((compute > mem ? compute : mem) + c[TB_MC_LAUNCH_US] * 1e-6) * exp(effects(md, k));
}

static double log_err(const tb_model *md, const tb_machine *mc, const tb_obs *o)
{
    const double p = tb_model_predict_ms(md, mc, &o->k, o->m, o->n, o->kk, o->clock_mhz);
    return log(p / o->ms);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double tb_model_error_q(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                        double q)
{
    if (!n) return NAN;
    double *e = malloc(n * sizeof *e);
    if (!e) return NAN;
    for (size_t i = 0; i < n; i++) e[i] = fabs(log_err(md, mc, &obs[i]));
    qsort(e, n, sizeof *e, cmp_double);
    const double at = q * (double)(n - 1);          /* linear between the order statistics */
    const size_t lo = (size_t)at;
    const double r = lo + 1 < n ? e[lo] + (at - lo) * (e[lo + 1] - e[lo]) : e[n - 1];
    free(e);
    return r;
}

double tb_model_error(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n)
{
    return tb_model_error_q(md, mc, obs, n, 0.5);
}

/* r[i] = ln(pred / measured) less the mean of that over obs[i]'s shape: the error in how the
 * model orders and spaces the points of a shape, whatever its absolute scale there */
/* e[i] less the mean of e over obs[i]'s shape, in one pass over the observations (the fit
 * calls it thousands of times); shapes are small indices, >= 0 */
static void demean_by_shape(double *e, const tb_obs *obs, size_t n)
{
    int top = 0;
    for (size_t i = 0; i < n; i++)
        if (obs[i].shape > top) top = obs[i].shape;
    double *sum = calloc((size_t)top + 1, sizeof *sum);
    size_t *cnt = calloc((size_t)top + 1, sizeof *cnt);
    if (sum && cnt) {
        for (size_t i = 0; i < n; i++) { sum[obs[i].shape] += e[i]; cnt[obs[i].shape]++; }
        for (size_t i = 0; i < n; i++) e[i] -= sum[obs[i].shape] / (double)cnt[obs[i].shape];
    }
    free(sum);
    free(cnt);
}

static void rel_resid(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                      double *r)
{
    for (size_t i = 0; i < n; i++) r[i] = log_err(md, mc, &obs[i]);
    demean_by_shape(r, obs, n);
}

double tb_model_rel_error_q(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                            double q)
{
    if (!n) return NAN;
    double *e = malloc(n * sizeof *e);
    if (!e) return NAN;
    rel_resid(md, mc, obs, n, e);
    for (size_t i = 0; i < n; i++) e[i] = fabs(e[i]);
    qsort(e, n, sizeof *e, cmp_double);
    const double at = q * (double)(n - 1);
    const size_t lo = (size_t)at;
    const double r = lo + 1 < n ? e[lo] + (at - lo) * (e[lo + 1] - e[lo]) : e[n - 1];
    free(e);
    return r;
}

/* average ranks (1-based) of v[0..n) into r */
static void ranks(const double *v, double *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t below = 0, equal = 0;
        for (size_t j = 0; j < n; j++) {
            if (v[j] < v[i]) below++;
            else if (v[j] == v[i]) equal++;
        }
        r[i] = below + (equal + 1) / 2.0;
    }
}

double tb_model_rank_corr(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n,
                          int shape)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += obs[i].shape == shape;
    if (k < 3) return NAN;
    double *buf = malloc(4 * k * sizeof *buf);
    if (!buf) return NAN;
    double *p = buf, *q = buf + k, *rp = buf + 2 * k, *rq = buf + 3 * k;
    k = 0;
    for (size_t i = 0; i < n; i++)
        if (obs[i].shape == shape) {
            p[k] = tb_model_predict_ms(md, mc, &obs[i].k, obs[i].m, obs[i].n, obs[i].kk, obs[i].clock_mhz);
            q[k++] = obs[i].ms;
        }
    ranks(p, rp, k);
    ranks(q, rq, k);
    double mp = 0, mq = 0, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < k; i++) { mp += rp[i]; mq += rq[i]; }
    mp /= k; mq /= k;
    for (size_t i = 0; i < k; i++) {
        sxy += (rp[i] - mp) * (rq[i] - mq);
        sxx += (rp[i] - mp) * (rp[i] - mp);
        syy += (rq[i] - mq) * (rq[i] - mq);
    }
    free(buf);
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

/* ---- the fit: Nelder-Mead over the logs of the constants ---------------------------------- */

#define NP TB_MC_N
typedef struct fit_ctx { const tb_machine *mc; const tb_obs *obs; size_t n; double *tmp; } fit_ctx;

static double objective(const double *x, const fit_ctx *f)
{
    tb_model md;
    memset(&md, 0, sizeof md);      /* the constants alone: the effects are fitted after them */
    for (int i = 0; i < NP; i++) {
        const double lo = log(defaults[i] / 20), hi = log(defaults[i] * 20);
        if (x[i] < lo || x[i] > hi) return INFINITY;   /* the bounds: a factor of 20 */
        md.c[i] = exp(x[i]);
    }
    /* squared within-shape residuals: what orders the points of a shape is what a search
     * needs; a shape's absolute scale (its clock, its launch) is taken out per shape */
    double s = 0;
    rel_resid(&md, f->mc, f->obs, f->n, f->tmp);
    for (size_t i = 0; i < f->n; i++) s += f->tmp[i] * f->tmp[i];
    return s;
}

double tb_model_fit(tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n)
{
    if (!n) return NAN;
    double *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return NAN;
    const fit_ctx f = { mc, obs, n, tmp };
    double x[NP + 1][NP], fx[NP + 1];
    for (int v = 0; v <= NP; v++) {
        for (int i = 0; i < NP; i++) x[v][i] = log(md->c[i]) + (v == i + 1 ? 0.3 : 0.0);
        fx[v] = objective(x[v], &f);
    }
    for (int iter = 0; iter < 4000; iter++) {
        int hi = 0, lo = 0;                               /* worst and best vertices */
        for (int v = 1; v <= NP; v++) {
            if (fx[v] > fx[hi]) hi = v;
            if (fx[v] < fx[lo]) lo = v;
        }
        int nh = lo;                                      /* second worst */
        for (int v = 0; v <= NP; v++)
            if (v != hi && fx[v] > fx[nh]) nh = v;
        if (fabs(fx[hi] - fx[lo]) <= 1e-12 * (fabs(fx[lo]) + 1e-12)) break;
        double cen[NP] = { 0 }, xr[NP], xe[NP];
        for (int v = 0; v <= NP; v++)
            if (v != hi)
                for (int i = 0; i < NP; i++) cen[i] += x[v][i] / NP;
        for (int i = 0; i < NP; i++) xr[i] = cen[i] + (cen[i] - x[hi][i]);
        const double fr = objective(xr, &f);
        if (fr < fx[lo]) {                                /* expand */
            for (int i = 0; i < NP; i++) xe[i] = cen[i] + 2 * (cen[i] - x[hi][i]);
            const double fe = objective(xe, &f);
            if (fe < fr) { memcpy(x[hi], xe, sizeof xe); fx[hi] = fe; }
            else { memcpy(x[hi], xr, sizeof xr); fx[hi] = fr; }
        } else if (fr < fx[nh]) {
            memcpy(x[hi], xr, sizeof xr); fx[hi] = fr;
        } else {                                          /* contract, else shrink */
            for (int i = 0; i < NP; i++) xe[i] = cen[i] + 0.5 * (x[hi][i] - cen[i]);
            const double fc = objective(xe, &f);
            if (fc < fx[hi]) { memcpy(x[hi], xe, sizeof xe); fx[hi] = fc; }
            else {
                for (int v = 0; v <= NP; v++) {
                    if (v == lo) continue;
                    for (int i = 0; i < NP; i++) x[v][i] = x[lo][i] + 0.5 * (x[v][i] - x[lo][i]);
                    fx[v] = objective(x[v], &f);
                }
            }
        }
    }
    int best = 0;
    for (int v = 1; v <= NP; v++)
        if (fx[v] < fx[best]) best = v;
    if (isfinite(fx[best]))
        for (int i = 0; i < NP; i++) md->c[i] = exp(x[best][i]);
    /* then the knob effects, on what the constants leave: ridge-shrunk means of the
     * within-shape residuals per knob value, by backfitting (each feature in turn, the others'
     * effects held), a few sweeps */
    memset(md->fx, 0, sizeof md->fx);
    for (size_t i = 0; i < n; i++)
        if (feature(md, &obs[i].k, TB_MF_TILE) < 0 && md->n_tile_keys < TB_MF_VALUES)
            md->tile_keys[md->n_tile_keys++] = obs[i].k.tile_m * 4096 + obs[i].k.tile_n * 2 + obs[i].k.pingpong;
    rel_resid(md, mc, obs, n, tmp);                 /* fx = 0: the constants' residuals */
    const double lambda = 2.0;                      /* shrinkage: an effect of one point is damped */
    for (int sweep = 0; sweep < 8; sweep++)
        for (int f = 0; f < TB_MF_N; f++) {
            double sum[TB_MF_VALUES] = { 0 }, cnt[TB_MF_VALUES] = { 0 };
            for (size_t i = 0; i < n; i++) {
                const int v = feature(md, &obs[i].k, f);
                if (v < 0) continue;
                /* the residual with every other feature's effect taken out */
                const double other = effects(md, &obs[i].k) - md->fx[f][v];
                sum[v] += -(tmp[i] + other);        /* residual = ln(pred/meas): negate */
                cnt[v] += 1;
            }
            for (int v = 0; v < TB_MF_VALUES; v++) md->fx[f][v] = cnt[v] ? sum[v] / (cnt[v] + lambda) : 0;
        }
    free(tmp);
    return tb_model_rel_error_q(md, mc, obs, n, 0.5);
}

/* the sum of squared within-shape errors of md (constants and knob effects) on obs; INFINITY
 * out of memory */
static double within_sse(const tb_model *md, const tb_machine *mc, const tb_obs *obs, size_t n)
{
    double *e = malloc(n * sizeof *e), s = 0;
    if (!e) return INFINITY;
    rel_resid(md, mc, obs, n, e);
    for (size_t i = 0; i < n; i++) s += e[i] * e[i];
    free(e);
    return isfinite(s) ? s : INFINITY;
}

double tb_model_refit(tb_model *md, const tb_model *start, const tb_machine *mc, const tb_obs *obs,
                      size_t n)
{
    if (!n) return NAN;
    tb_model fresh = *start;
    tb_model_fit(md, mc, obs, n);
    tb_model_fit(&fresh, mc, obs, n);
    if (within_sse(&fresh, mc, obs, n) < within_sse(md, mc, obs, n)) *md = fresh;
    return tb_model_rel_error_q(md, mc, obs, n, 0.5);
}
