/* search_replay.c - search's points and its replayed timings (see search_replay.h).
 *
 * Owns the point list of a search (from the probed libraries, or from a recorded database),
 * reading a recorded exhaustive sweep as an oracle (every ok/passed BF16 tn measurement of the
 * family, a point's first measurement on a shape), the replay's noise (--replay-noise: the
 * recorded median times a per-shape and a per-point lognormal factor, drawn from the seed,
 * the shape and the point's name, so that a point's noisy time does not depend on the order in
 * which the search asks for it; with a fourth field also a per-round factor, the point's draw
 * keyed on the shape's round count, so that a re-timed point draws anew; with a fifth, a
 * per-timing sigma that grows with the kernel's time) and the two costs of
 * a replayed round: each measurement's share
 * of its recorded run (the sweep's own accounting, comparable with the sweep's total), and the
 * round as a search round on the GPU costs (TB_REPLAY_*, fitted on the fourteenth session's).
 */
#define _GNU_SOURCE
#include "cli/search_replay.h"
#include "store/store.h"
#include "common/peak.h"
#include "common/phases.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_replay_free(tb_replay *rp)
{
    free(rp->pts);
    free(rp->names);
    free(rp->specs);
    free(rp->r);
    rp->pts = NULL; rp->names = NULL; rp->specs = NULL; rp->r = NULL;
    rp->n_pts = 0;
    rp->n_r = 0;
}

static int find_point(const tb_replay *rp, const char *name)
{
    for (int i = 0; i < rp->n_pts; i++)
        if (!strcmp(rp->names[i], name)) return i;
    return -1;
}

const tb_replay_rec *tb_replay_lookup(const tb_replay *rp, int p, int64_t m, int64_t n, int64_t k)
{
    for (size_t i = 0; i < rp->n_r; i++)
        if (rp->r[i].point == p && rp->r[i].m == m && rp->r[i].n == n && rp->r[i].k == k) return &rp->r[i];
    return NULL;
}

/* the per-timing sigma of a kernel whose recorded median is ms (search_replay.h) */
static double point_sigma(const tb_replay *rp, double ms)
{
    if (rp->sigma_long < 0 || !(ms > TB_REPLAY_LONG_FROM_MS)) return rp->sigma_point;
    double f = log2(ms / TB_REPLAY_LONG_FROM_MS) / log2(TB_REPLAY_LONG_AT_MS / TB_REPLAY_LONG_FROM_MS);
    if (f > 1) f = 1;
    return rp->sigma_point + (rp->sigma_long - rp->sigma_point) * f;
}

int tb_replay_time(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                   int64_t nn, int64_t k, double *ms, double *clk, double *cost_s, char *msg,
                   size_t len)
{
    (void)msg; (void)len;
    tb_replay *rp = ctx;
    const int noisy = rp->sigma_point > 0 || rp->sigma_shape > 0 || rp->sigma_round > 0 || rp->sigma_long > 0;
    if (rp->last_shape[0] != m || rp->last_shape[1] != nn || rp->last_shape[2] != k) {
        rp->round_cost_s += TB_REPLAY_SHAPE_S;      /* a new shape: a new worker */
        rp->round_cost_kept_s += TB_REPLAY_KEPT_SHAPE_S;    /* ... or the kept one's new problem */
        rp->last_shape[0] = m; rp->last_shape[1] = nn; rp->last_shape[2] = k;
        rp->round = 0;
    }
    rp->round++;
    for (int i = 0; i < n; i++) {
        const tb_replay_rec *r = tb_replay_lookup(rp, idx[i], m, nn, k);
        ms[i] = r ? r->ms : NAN;
        if (r && noisy) {
            const double sp = point_sigma(rp, r->ms);
            ms[i] *= rp->sigma_round < 0
                         ? tb_search_noise(rp->seed, m, nn, k, pts[idx[i]].name, sp, rp->sigma_shape)
                         : tb_search_noise_round(rp->seed, m, nn, k, pts[idx[i]].name, rp->round, sp,
                                                 rp->sigma_round, rp->sigma_shape);
        }
        clk[i] = r ? r->clock : NAN;
        if (r) *cost_s += r->cost_s;
        rp->round_cost_s += TB_REPLAY_POINT_S + (r ? TB_REPLAY_KERNEL_X * ms[i] / 1e3 : 0);
        rp->round_cost_kept_s += TB_REPLAY_KEPT_POINT_S + (r ? TB_REPLAY_KEPT_KERNEL_X * ms[i] / 1e3 : 0);
    }
    return TB_OK;
}

int tb_replay_parse_noise(const char *spec, tb_replay *rp, char *msg, size_t len)
{
    double v[4] = { 0, -1, -1, -1 };
    unsigned long long seed = 1;
    const char *p = spec;
    for (int i = 0; i < 5; i++) {
        char *end = NULL;
        errno = 0;
        const int sig = i != 2;             /* fields 0, 1, 3 and 4 are sigmas, 2 the seed */
        double *vi = &v[i < 2 ? i : i - 1];
        if (sig) *vi = strtod(p, &end);
        else seed = strtoull(p, &end, 10);
        if (end == p || errno || (sig && !(*vi >= 0 && *vi <= 1)) || (*end && (*end != ',' || i == 4)))
            return tb_fail(msg, len, TB_EUSAGE, "--replay-noise '%s': expected POINT[,SHAPE[,SEED[,ROUND[,LONG]]]], "
                           "sigmas of the log in [0, 1] and a seed (e.g. 0.035,0.035,1)", spec);
        if (!*end) break;
        p = end + 1;
    }
    rp->sigma_point = v[0];
    rp->sigma_shape = v[1] >= 0 ? v[1] : v[0];
    rp->sigma_round = v[2];
    rp->sigma_long = v[3];
    rp->seed = seed;
    return TB_OK;
}

/* the grid's point line (TM TN STAGES CM CN SCHEDULE RASTER SWIZZLE [EPILOGUE]) of knobs k */
static void spec_of(const tb_knobs *k, char *out, size_t len)
{
    snprintf(out, len, "%d %d %d %d %d %s %s %d%s", k->tile_m, k->tile_n, k->stages, k->cluster_m,
             k->cluster_n, k->pingpong ? "pingpong" : "cooperative",
             k->raster == 2 ? "h" : k->raster == 1 ? "n" : "m", k->swizzle,
             k->streamk ? " streamk" : k->conflict ? " conflict" : "");
}

/* Append a point (its name, knobs and grid line) to rp, growing the arrays 32 at a time; its
 * index, or -1 out of memory. */
static int add_point(tb_replay *rp, const char *name, const tb_knobs *k)
{
    if (rp->n_pts % 32 == 0) {
        const size_t c = (size_t)rp->n_pts + 32;
        void *a = realloc(rp->pts, c * sizeof *rp->pts), *b = realloc(rp->names, c * sizeof *rp->names),
             *d = realloc(rp->specs, c * sizeof *rp->specs);
        if (a) rp->pts = a;
        if (b) rp->names = b;
        if (d) rp->specs = d;
        if (!a || !b || !d) return -1;
    }
    const int p = rp->n_pts++;
    snprintf(rp->names[p], sizeof rp->names[p], "%s", name);
    spec_of(k, rp->specs[p], sizeof rp->specs[p]);
    rp->pts[p].k = *k;
    return p;
}

/* 1 when a variant is not searched: its parameters name a layout other than tn (the layout
 * every search sweeps and replays: a family that exports one variant per layout, wgmma since
 * issue 31, is searched among its tn points) or an FP8 dtype (the model's machine is BF16's:
 * its peak and 2-byte operands; the fourteenth session's GPU search timed the FP8 points of the
 * grid on BF16 problems, where each answered "unsupported" in a round's slot) */
static int not_searched(const char *params_json)
{
    cJSON *o = params_json ? cJSON_Parse(params_json) : NULL;
    const cJSON *l = o ? cJSON_GetObjectItemCaseSensitive(o, "layout") : NULL,
                *d = o ? cJSON_GetObjectItemCaseSensitive(o, "dtype") : NULL;
    const int other = (cJSON_IsString(l) && strcmp(l->valuestring, "tn") != 0) ||
                      (cJSON_IsString(d) && (!strcmp(d->valuestring, "e4m3") || !strcmp(d->valuestring, "e5m2")));
    cJSON_Delete(o);
    return other;
}

int tb_replay_load_points(const tb_catalog *cat, const char *family, tb_replay *rp, char *msg, size_t len)
{
    int rc = TB_OK;
    for (size_t i = 0; i < cat->n; i++) {
        tb_knobs k;
        char m2[TB_MSG_LEN];
        if (strcmp(cat->v[i].family, family) || not_searched(cat->v[i].params_json) ||
            tb_knobs_parse(cat->v[i].params_json, &k, m2, sizeof m2) != TB_OK)
            continue;
        if (add_point(rp, cat->v[i].name, &k) < 0) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); break; }
    }
    for (int i = 0; i < rp->n_pts; i++) rp->pts[i].name = rp->names[i];
    if (rc == TB_OK && !rp->n_pts)
        rc = tb_fail(msg, len, TB_EUSAGE, "no variant of family '%s' with tile parameters among the libraries given", family);
    return rc;
}

int tb_replay_load(const char *db, const char *family, double dram_gbps, tb_replay *rp, char *msg, size_t len)
{
    tb_store *st = NULL;
    int rc = tb_store_open(db, 0, 1, &st, msg, len);
    if (rc) return rc;
    int64_t latest = 0;
    rc = tb_store_run_latest(st, &latest, msg, len);
    size_t cap_r = 0;
    int have_env = 0;
    for (int64_t run = 1; rc == TB_OK && run <= latest; run++) {
        tb_run_info ri;
        char m2[TB_MSG_LEN];
        if (tb_store_run_get(st, run, &ri, m2, sizeof m2) != TB_OK) continue;   /* merged ids skip */
        tb_result_row *rows = NULL;
        size_t n = 0;
        rc = tb_store_results(st, run, &rows, &n, msg, len);
        if (rc) break;
        tb_phases ph;
        double per = 0;
        if (n && tb_phases_from_json(ri.phases_json, &ph, m2, sizeof m2) == TB_OK) per = ph.total_s / (double)n;
        if (!have_env) {
            tb_environment env;
            if (tb_store_get_environment(st, run, &env, m2, sizeof m2) == TB_OK && env.sm_count > 0) {
                snprintf(rp->gpu_name, sizeof rp->gpu_name, "%s", env.gpu_name);
                rp->mc.sms = env.sm_count;
                rp->mc.flop_per_clk_sm = tb_peak_flop_per_clk_sm(env.cc_major, env.cc_minor);
                tb_calibration cal;
                int found = 0;
                rp->mc.dram_bytes_s = dram_gbps * 1e9;
                if (tb_store_latest_calibration(st, env.gpu_uuid, &cal, &found, m2, sizeof m2) == TB_OK &&
                    found && cal.dram_gbps > 0)
                    rp->mc.dram_bytes_s = cal.dram_gbps * 1e9;
                have_env = rp->mc.flop_per_clk_sm > 0;
            }
        }
        for (size_t i = 0; i < n && rc == TB_OK; i++) {
            const tb_result_row *w = &rows[i];
            if (strcmp(w->v.family, family) || w->m.status != TB_STATUS_OK ||
                w->m.disposition != TB_DISP_PASSED || !(w->m.median_ms > 0) || strcmp(w->p.layouts, "tn") ||
                tb_dtypes_fp8(w->p.dtypes))   /* the model's machine is BF16's (peak, 2-byte operands) */
                continue;
            tb_knobs k;
            if (tb_knobs_parse(w->v.params_json, &k, m2, sizeof m2) != TB_OK) continue;
            int p = find_point(rp, w->v.name);
            if (p < 0 && (p = add_point(rp, w->v.name, &k)) < 0) {
                rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
                break;
            }
            if (tb_replay_lookup(rp, p, w->p.m, w->p.n, w->p.k)) continue;   /* the first run's, once */
            if (rp->n_r == cap_r) {
                cap_r = cap_r ? cap_r * 2 : 256;
                tb_replay_rec *r = realloc(rp->r, cap_r * sizeof *r);
                if (!r) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); break; }
                rp->r = r;
            }
            rp->r[rp->n_r++] = (tb_replay_rec){ p, w->p.m, w->p.n, w->p.k, w->m.median_ms,
                                                w->m.clock_mhz > 0 ? w->m.clock_mhz : NAN, per };
        }
        free(rows);
    }
    tb_store_close(st);
    for (int i = 0; i < rp->n_pts; i++) rp->pts[i].name = rp->names[i];
    if (rc == TB_OK && !rp->n_r)
        rc = tb_fail(msg, len, TB_EUSAGE, "'%s' holds no ok/passed measurement of family '%s' with tile parameters", db, family);
    if (rc == TB_OK && !have_env)
        rc = tb_fail(msg, len, TB_EUSAGE, "'%s' names no GPU whose tensor peak tilebench knows (environment)", db);
    return rc;
}
