/* search.c - the model-guided search loop (see search.h, docs/search.md).
 *
 * Owns the rounds on one shape and the bookkeeping across shapes. A round predicts every
 * untimed point with the current model, scaled to the shape by what was timed there, times the
 * per_round most promising, and refits the model on every timing so far (all shapes: the
 * constants are the GPU's, not the shape's), from the last fit and from the starting model,
 * keeping the better (tb_model_refit: a fit that only continues from the last one drifts on
 * noisy timings). While fewer than `explore` timings are known, the first round on a shape
 * times the most promising point of every tile class (tile and schedule) as well. The error
 * margin is the larger of min_margin and the refitted model's `quantile` of its within-shape
 * errors; a point is skipped for good when its prediction divided by e^margin is still slower
 * than the best median timed on the shape. The budget, when set, ends the search where it is:
 * the shapes not reached keep winner -1. Also the replay's noise (tb_search_noise): a pure
 * function of a seed, the shape and the point's name (and, with rounds, the round).
 * Since the fifteenth session a round after a shape's first re-times the shape's incumbent
 * (its best so far) beside its new points, and scales their times by the incumbent's stored
 * time over its time in this round, so that a point is judged against the incumbent as
 * measured side by side (--incumbent on; off by default: its cost); and a shape ends with a
 * final round that re-times its best few measured points together (those within the margin of
 * the best and never timed in one round with it), the fastest there the winner. So the winner is the fastest point of the shape's last round whenever that round
 * re-timed a point (a final round, or a round with the incumbent), else the fastest of all its
 * rounds (what scripts/search-gpu.sh --compare reads without the search's table).
 * Since the twenty-first session the sibling round runs only on shapes whose best time is
 * under siblings_below_ms (a comparison's noise grows with the kernel's time; the final round
 * likewise under final_below_ms when set), and a sibling's reach is judged by the closed form,
 * the knob effects left out.
 */
#include "driver/search.h"
#include "common/tb.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tb_search_opts_default(tb_search_opts *o)
{
    memset(o, 0, sizeof *o);
    o->per_round = 2;
    o->min_margin = 0.03;
    o->quantile = 0.8;
    o->explore = 100;
    o->clock_mhz = 1755.0;      /* H100 SXM boost; a refit absorbs the difference */
    o->incumbent = 0;           /* on: +8 points of GPU time for +1 shape (docs/search.md) */
    o->final_top = 3;
    o->siblings_below_ms = 0.25;    /* docs/search.md, twenty-first session */
}

void tb_search_result_free(tb_search_result *r)
{
    free(r->shapes);
    free(r->obs);
    free(r->obs_point);
    free(r->obs_pred_ms);
    memset(r, 0, sizeof *r);
}

/* splitmix64's finaliser: a well-mixed 64-bit value of x */
static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* a standard normal from the key h (Box-Muller on two uniforms in (0, 1)) */
static double normal_of(uint64_t h)
{
    const uint64_t a = mix64(h), b = mix64(a);
    const double u1 = ((double)(a >> 11) + 0.5) / 9007199254740992.0,
                 u2 = ((double)(b >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

double tb_search_noise(uint64_t seed, int64_t m, int64_t n, int64_t k, const char *name,
                       double sigma_point, double sigma_shape)
{
    uint64_t hs = mix64(seed);
    hs = mix64(hs ^ (uint64_t)m);
    hs = mix64(hs ^ (uint64_t)n);
    hs = mix64(hs ^ (uint64_t)k);
    uint64_t hp = hs ^ 0x5bd1e9955bd1e995ull;       /* FNV-1a of the name over the shape's key */
    for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c; c++)
        hp = (hp ^ *c) * 0x100000001b3ull;
    return exp(sigma_shape * normal_of(hs) + sigma_point * normal_of(mix64(hp)));
}

double tb_search_noise_round(uint64_t seed, int64_t m, int64_t n, int64_t k, const char *name, int round,
                             double sigma_point, double sigma_round, double sigma_shape)
{
    uint64_t hs = mix64(seed);
    hs = mix64(hs ^ (uint64_t)m);
    hs = mix64(hs ^ (uint64_t)n);
    hs = mix64(hs ^ (uint64_t)k);
    const uint64_t hr = mix64(hs ^ (0xc2b2ae3d27d4eb4full * (uint64_t)(round + 1)));
    uint64_t hp = hr ^ 0x5bd1e9955bd1e995ull;
    for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c; c++)
        hp = (hp ^ *c) * 0x100000001b3ull;
    return exp(sigma_shape * normal_of(hs) + sigma_round * normal_of(mix64(hr ^ 0x165667b19e3779f9ull)) +
               sigma_point * normal_of(mix64(hp)));
}

static int grow(tb_search_result *r, size_t need)
{
    if (need <= r->cap_obs) return 0;
    size_t c = r->cap_obs ? r->cap_obs * 2 : 64;
    while (c < need) c *= 2;
    tb_obs *o = realloc(r->obs, c * sizeof *o);
    if (o) r->obs = o;
    int *p = realloc(r->obs_point, c * sizeof *p);
    if (p) r->obs_point = p;
    double *d = realloc(r->obs_pred_ms, c * sizeof *d);
    if (d) r->obs_pred_ms = d;
    if (!o || !p || !d) return -1;
    r->cap_obs = c;
    return 0;
}

/* A round's times ms[0..take) of points idx[0..take) on shape s (sh) into out's observations,
 * with the predictions pred they had; tms and the shape's winner follow. A failed or declined
 * point is marked timed but never wins. *clock follows the last valid clock. 0, or -1 out of
 * memory. */
static int record_round(const tb_search_point *points, tb_search_shape *sh, int s, const int *idx,
                        int take, const double *ms, const double *clk, const double *pred, char *timed,
                        double *tms, double *clock, tb_search_result *out)
{
    if (grow(out, out->n_obs + take)) return -1;
    for (int i = 0; i < take; i++) {
        const int p = idx[i];
        timed[p] = 1;
        sh->timed++;
        if (!isfinite(ms[i]) || ms[i] <= 0) continue;   /* failed or declined: never wins */
        if (isfinite(clk[i]) && clk[i] > 0) *clock = clk[i];
        tb_obs *ob = &out->obs[out->n_obs];
        ob->k = points[p].k;
        ob->m = sh->m; ob->n = sh->n; ob->kk = sh->k;
        ob->clock_mhz = isfinite(clk[i]) && clk[i] > 0 ? clk[i] : *clock;
        ob->ms = ms[i];
        ob->shape = s;
        out->obs_point[out->n_obs] = p;
        out->obs_pred_ms[out->n_obs] = pred[p];
        out->n_obs++;
        tms[p] = ms[i];
        if (ms[i] < sh->winner_ms) { sh->winner_ms = ms[i]; sh->winner = p; }
    }
    return 0;
}

/* Two points of one tile class (tile and schedule): the explore round's and the sibling
 * round's unit. */
static int same_class(const tb_knobs *a, const tb_knobs *b)
{
    return a->tile_m == b->tile_m && a->tile_n == b->tile_n && a->pingpong == b->pingpong;
}

/* A shape's sibling round (o->siblings, docs/search.md, twentieth session): when its rounds
 * stop, the untimed points of the winner's tile class within reach of it, the most promising
 * (by pred) first, at most n of them, timed together with the winner, their times put on the
 * shape's footing by the winner's (as the incumbent's); one of them faster than the winner
 * becomes the winner. The points it serves: a memory-bound shape's points of one class, which
 * the closed form predicts alike (one bound for all), and which the rounds stop at after timing
 * one of. Reach is judged by the closed form of md (its knob effects left out: twenty-first
 * session): the effects are one factor per knob value for every shape, learned mostly where
 * compute bounds the time (64x128 with 8 stages is 2.5 times slower at 16384^3, the fastest
 * at M = 1), and they put the class mate out of reach where bandwidth bounds it. TB_OK, or
 * time_fn's error or out of memory. */
static int sibling_round(const tb_search_point *points, int n_points, const tb_model *md,
                         const tb_machine *mc, tb_search_shape *sh, int s, int n, double margin,
                         const double *pred, char *timed, double *tms, uint64_t *rmask, int *idx,
                         double *ms, double *clk, double *clock, tb_search_time_fn time_fn, void *ctx,
                         tb_search_result *out, char *msg, size_t len)
{
    const int w = sh->winner;
    tb_model bare = *md;
    memset(bare.fx, 0, sizeof bare.fx);
    const double reach = tb_model_predict_ms(&bare, mc, &points[w].k, sh->m, sh->n, sh->k, *clock) * exp(margin);
    int nc = 0;
    for (int i = 0; i < n_points; i++)
        if (!timed[i] && same_class(&points[i].k, &points[w].k) &&
            tb_model_predict_ms(&bare, mc, &points[i].k, sh->m, sh->n, sh->k, *clock) <= reach)
            idx[nc++] = i;
    for (int a = 1; a < nc; a++)
        for (int b = a; b > 0 && pred[idx[b]] < pred[idx[b - 1]]; b--) {
            const int t = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = t;
        }
    if (nc > n) nc = n;
    if (nc < 1) return TB_OK;
    idx[nc] = w;
    double cost = 0;
    for (int i = 0; i <= nc; i++) { ms[i] = NAN; clk[i] = NAN; }
    int rc = time_fn(ctx, points, idx, nc + 1, sh->m, sh->n, sh->k, ms, clk, &cost, msg, len);
    if (rc != TB_OK) return rc;
    for (int i = 0; i <= nc && sh->rounds < 64; i++) rmask[idx[i]] |= (uint64_t)1 << sh->rounds;
    sh->rounds++;
    sh->retimed++;
    sh->cost_s += cost;
    out->cost_s += cost;
    if (isfinite(ms[nc]) && ms[nc] > 0 && isfinite(tms[w]) && tms[w] > 0) {
        const double f = tms[w] / ms[nc];
        for (int i = 0; i < nc; i++) ms[i] *= f;
    }
    sh->sibling_n = nc;
    if (record_round(points, sh, s, idx, nc, ms, clk, pred, timed, tms, clock, out))
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    sh->sibling_changed = sh->winner != w;
    return TB_OK;
}

/* A shape's final round: its measured points within the margin of the best (tms: their times
 * on the shape's footing), less those already timed in a round with the best (rmask: the
 * rounds that timed each; such a pair was measured side by side once, and a second look cost
 * 2.5 points of GPU time for 0.3 shapes in the replay: docs/search.md), the best first, at most
 * top of them, re-timed together; the fastest there becomes the winner (its time put on the
 * shape's footing by the best's re-timing). With one candidate there is nothing to decide: no
 * round. TB_OK, or time_fn's error. */
static int final_round(const tb_search_point *points, int n_points, tb_search_shape *sh, int top,
                       double margin, const double *tms, const uint64_t *rmask, int *idx, double *ms,
                       double *clk, tb_search_time_fn time_fn, void *ctx, tb_search_result *out, char *msg,
                       size_t len)
{
    int nc = 0;
    for (int i = 0; i < n_points; i++)
        if (isfinite(tms[i]) && tms[i] <= sh->winner_ms * exp(margin) &&
            (i == sh->winner || !(rmask[i] & rmask[sh->winner]))) idx[nc++] = i;
    for (int a = 1; a < nc; a++)            /* fastest first: idx[0] is the winner */
        for (int b = a; b > 0 && tms[idx[b]] < tms[idx[b - 1]]; b--) {
            const int t = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = t;
        }
    if (nc > top) nc = top;
    if (nc < 2) return TB_OK;
    double cost = 0;
    for (int i = 0; i < nc; i++) { ms[i] = NAN; clk[i] = NAN; }
    const int rc = time_fn(ctx, points, idx, nc, sh->m, sh->n, sh->k, ms, clk, &cost, msg, len);
    if (rc != TB_OK) return rc;
    sh->rounds++;
    sh->retimed += nc;
    sh->final_n = nc;
    sh->cost_s += cost;
    out->cost_s += cost;
    int best = -1;
    for (int i = 0; i < nc; i++)
        if (isfinite(ms[i]) && ms[i] > 0 && (best < 0 || ms[i] < ms[best])) best = i;
    if (best < 0) return TB_OK;             /* nothing valid: the rounds' winner stands */
    const double f = isfinite(ms[0]) && ms[0] > 0 ? tms[idx[0]] / ms[0] : 1.0;
    sh->final_changed = idx[best] != sh->winner;
    sh->winner = idx[best];
    sh->winner_ms = ms[best] * f;
    return TB_OK;
}

int tb_search_run(const tb_search_point *points, int n_points, const int64_t (*shapes)[3],
                  size_t n_shapes, const tb_machine *mc, const tb_model *md,
                  const tb_search_opts *o, tb_search_time_fn time_fn, void *ctx,
                  tb_search_result *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    if (n_points < 1 || !n_shapes) return tb_fail(msg, len, TB_EUSAGE, "nothing to search: no points or no shapes");
    out->shapes = calloc(n_shapes, sizeof *out->shapes);
    double *pred = malloc(n_points * sizeof *pred), *ms = malloc(n_points * sizeof *ms),
           *clk = malloc(n_points * sizeof *clk);
    char *timed = malloc(n_points);
    int *idx = malloc(n_points * sizeof *idx);
    double *tms = malloc(n_points * sizeof *tms);   /* the shape's times, on its first round's footing */
    uint64_t *rmask = malloc(n_points * sizeof *rmask);    /* the shape's rounds (< 64) that timed each */
    if (!out->shapes || !pred || !ms || !clk || !timed || !idx || !tms || !rmask) {
        free(pred); free(ms); free(clk); free(timed); free(idx); free(tms); free(rmask);
        tb_search_result_free(out);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    out->n_shapes = n_shapes;
    out->model = *md;
    int rc = TB_OK, over = 0;
    double clock = o->clock_mhz > 0 ? o->clock_mhz : 1755.0;
    for (size_t s = 0; s < n_shapes && rc == TB_OK; s++) {
        tb_search_shape *sh = &out->shapes[s];
        sh->m = shapes[s][0]; sh->n = shapes[s][1]; sh->k = shapes[s][2];
        sh->winner = -1;
        sh->winner_ms = INFINITY;
        memset(timed, 0, n_points);
        for (int i = 0; i < n_points; i++) { tms[i] = NAN; rmask[i] = 0; }
        double margin = o->min_margin;
        for (;;) {
            if (over) { sh->stopped_by_budget = 1; break; }
            /* the shape's scale: the median of measured / predicted over what it timed */
            double scale = 1.0;
            {
                double lr[256];
                int nl = 0;
                for (size_t i = 0; i < out->n_obs && nl < 256; i++)
                    if (out->obs[i].shape == (int)s)
                        lr[nl++] = log(out->obs[i].ms / tb_model_predict_ms(&out->model, mc, &out->obs[i].k,
                                                                            sh->m, sh->n, sh->k, out->obs[i].clock_mhz));
                for (int a = 1; a < nl; a++)
                    for (int b = a; b > 0 && lr[b] < lr[b - 1]; b--) { const double t = lr[b]; lr[b] = lr[b - 1]; lr[b - 1] = t; }
                if (nl) scale = exp(nl % 2 ? lr[nl / 2] : 0.5 * (lr[nl / 2 - 1] + lr[nl / 2]));
            }
            for (int i = 0; i < n_points; i++)
                pred[i] = scale * tb_model_predict_ms(&out->model, mc, &points[i].k, sh->m, sh->n, sh->k, clock);
            /* the untimed points that can still win, most promising first */
            int nc = 0;
            for (int i = 0; i < n_points; i++)
                if (!timed[i] && pred[i] * exp(-margin) < sh->winner_ms) idx[nc++] = i;
            if (!nc) break;
            for (int a = 1; a < nc; a++)            /* insertion sort by prediction */
                for (int b = a; b > 0 && pred[idx[b]] < pred[idx[b - 1]]; b--) {
                    const int t = idx[b]; idx[b] = idx[b - 1]; idx[b - 1] = t;
                }
            const int pr = o->per_round > 0 ? o->per_round : 2;
            int take = nc < pr ? nc : pr;
            if (sh->rounds == 0 && o->explore && out->n_obs < (size_t)o->explore) {
                /* the first round on a shape: the most promising point of every tile class
                 * (tile and schedule), so that a bias of the model against one class cannot
                 * hide that class's winner while the model has seen little */
                int kept = 0;
                for (int a = 0; a < nc; a++) {
                    const tb_knobs *ka = &points[idx[a]].k;
                    int seen = 0;
                    for (int b = 0; b < kept && !seen; b++) seen = same_class(ka, &points[idx[b]].k);
                    if (!seen) { const int t = idx[kept]; idx[kept] = idx[a]; idx[a] = t; kept++; }
                }
                if (kept > take) take = kept;
            }
            /* the incumbent beside them (it is timed, so not among the take candidates) */
            const int inc = o->incumbent && sh->winner >= 0 ? sh->winner : -1;
            int nt = take;
            if (inc >= 0) idx[nt++] = inc;
            double cost = 0;
            for (int i = 0; i < nt; i++) { ms[i] = NAN; clk[i] = NAN; }
            rc = time_fn(ctx, points, idx, nt, sh->m, sh->n, sh->k, ms, clk, &cost, msg, len);
            if (rc != TB_OK) break;
            for (int i = 0; i < nt && sh->rounds < 64; i++) rmask[idx[i]] |= (uint64_t)1 << sh->rounds;
            sh->rounds++;
            sh->retimed += nt - take;
            sh->cost_s += cost;
            out->cost_s += cost;
            if (inc >= 0 && isfinite(ms[take]) && ms[take] > 0) {
                /* this round's offset: its times onto the footing of the incumbent's */
                const double f = tms[inc] / ms[take];
                for (int i = 0; i < take; i++) ms[i] *= f;
            }
            if (record_round(points, sh, (int)s, idx, take, ms, clk, pred, timed, tms, &clock, out)) {
                rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
                break;
            }
            /* from the last fit and from the starting model: the better of the two (model.h) */
            if (o->refit_last) tb_model_fit(&out->model, mc, out->obs, out->n_obs);
            else tb_model_refit(&out->model, md, mc, out->obs, out->n_obs);
            const double err = tb_model_rel_error_q(&out->model, mc, out->obs, out->n_obs, o->quantile);
            margin = isfinite(err) && err > o->min_margin ? err : o->min_margin;
            if (o->budget_s > 0 && out->cost_s >= o->budget_s) over = 1;
        }
        sh->margin = margin;
        /* the re-timing rounds, where a comparison side by side can decide (search.h) */
        if (rc == TB_OK && !sh->stopped_by_budget && o->siblings > 0 && sh->winner >= 0 &&
            !(o->siblings_below_ms > 0 && sh->winner_ms >= o->siblings_below_ms))
            rc = sibling_round(points, n_points, &out->model, mc, sh, (int)s, o->siblings, margin, pred, timed,
                               tms, rmask, idx, ms, clk, &clock, time_fn, ctx, out, msg, len);
        if (rc == TB_OK && !sh->stopped_by_budget && o->final_top >= 2 && sh->winner >= 0 &&
            !(o->final_below_ms > 0 && sh->winner_ms >= o->final_below_ms))
            rc = final_round(points, n_points, sh, o->final_top, margin, tms, rmask, idx, ms, clk, time_fn,
                             ctx, out, msg, len);
        if (rc == TB_OK && o->budget_s > 0 && out->cost_s >= o->budget_s) over = 1;
        for (int i = 0; i < n_points; i++) sh->skipped += !timed[i];
        if (!isfinite(sh->winner_ms)) sh->winner_ms = NAN;
    }
    if (rc == TB_OK && out->n_obs) {
        tb_model d0 = *md;
        out->error_before = tb_model_rel_error_q(&d0, mc, out->obs, out->n_obs, 0.5);
        out->error_after = tb_model_rel_error_q(&out->model, mc, out->obs, out->n_obs, 0.5);
    }
    free(pred); free(ms); free(clk); free(timed); free(idx); free(tms); free(rmask);
    if (rc != TB_OK) tb_search_result_free(out);
    return rc;
}
