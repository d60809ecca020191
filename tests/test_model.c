/* test_model.c - driver/model.c and driver/search.c: knobs read from a variant's parameters,
 * what the prediction must do (more k costs more, one tile past a full wave costs a wave,
 * a shallower ring costs more), a fit that recovers constants from data made with other ones
 * (its error falls), rank correlation, and the search loop against a synthetic oracle (it
 * finds the oracle's best point while timing few; the incumbent and the final round of the
 * fifteenth session; the sibling round of the twentieth and twenty-first). No GPU. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "driver/model.h"
#include "driver/search.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static const tb_machine H100 = { 132, 4096.0, 3.0e12 };

static tb_knobs knobs(int tm, int tn, int st, int pp, int cm, int sk)
{
    tb_knobs k;
    memset(&k, 0, sizeof k);
    k.tile_m = tm; k.tile_n = tn; k.tile_k = 64; k.stages = st; k.pingpong = pp;
    k.cluster_m = cm; k.cluster_n = 1; k.swizzle = 16; k.streamk = sk;
    return k;
}

/* the oracle of the search test: times from a model with other constants and knob effects */
static tb_model truth;
static int oracle(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                  int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    (void)ctx; (void)msg; (void)len;
    for (int i = 0; i < n; i++) {
        ms[i] = tb_model_predict_ms(&truth, &H100, &pts[idx[i]].k, m, nn, k, 1700);
        clk[i] = 1700;
        *cost += 0.5;
    }
    return TB_OK;
}

/* the oracle again, each time times tb_search_noise (ctx: {sigma_point, sigma_shape}, seed 7) */
static int noisy_oracle(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                        int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    const double *sg = ctx;
    const int rc = oracle(NULL, pts, idx, n, m, nn, k, ms, clk, cost, msg, len);
    for (int i = 0; i < n; i++) ms[i] *= tb_search_noise(7, m, nn, k, pts[idx[i]].name, sg[0], sg[1]);
    return rc;
}

/* the oracle again, every call (a round) off by its own factor, common to its points: 1.2, 0.85,
 * 1.1, 0.9, ... (ctx: the call count) */
static int round_oracle(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                        int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    static const double f[4] = { 1.2, 0.85, 1.1, 0.9 };
    int *calls = ctx;
    const int rc = oracle(NULL, pts, idx, n, m, nn, k, ms, clk, cost, msg, len);
    for (int i = 0; i < n; i++) ms[i] *= f[*calls % 4];
    ++*calls;
    return rc;
}

/* two points whose true times are 1.00 and 0.98 ms; the second comes out 4 % slow in a round
 * without the first (as a round's own offset can make it), truly beside it (ctx: the call count) */
static int biased_alone(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                        int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    (void)pts; (void)m; (void)nn; (void)k; (void)msg; (void)len;
    int *calls = ctx, with_a = 0;
    for (int i = 0; i < n; i++) with_a |= idx[i] == 0;
    for (int i = 0; i < n; i++) {
        ms[i] = idx[i] == 0 ? 1.00 : 0.98 * (with_a ? 1.0 : 1.04);
        clk[i] = 1700;
        *cost += 0.1;
    }
    ++*calls;
    return TB_OK;
}

/* search-2.5's timings: each point a fixed factor of the first point's prediction by the
 * default model (ctx: the factors, by point index) */
static int by_factor(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                     int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    (void)msg; (void)len;
    const double *f = ctx;
    tb_model d;
    tb_model_default(&d);
    const double base = tb_model_predict_ms(&d, &H100, &pts[0].k, m, nn, k, 1700);
    for (int i = 0; i < n; i++) {
        ms[i] = base * f[idx[i]];
        clk[i] = 1700;
        *cost += 0.1;
    }
    return TB_OK;
}

/* search-2.6's timings: by_factor's, one row of factors per shape (ctx: double[2][5]; row 1 for
 * M = 1, row 0 otherwise) */
static int by_shape_factor(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                           int64_t nn, int64_t k, double *ms, double *clk, double *cost, char *msg, size_t len)
{
    const double (*f)[5] = ctx;
    return by_factor((void *)f[m == 1], pts, idx, n, m, nn, k, ms, clk, cost, msg, len);
}

int main(void)
{
    char msg[TB_MSG_LEN];
    tb_model md;
    tb_model_default(&md);
    TB_CASE("model-1.1", "knobs from a wgmma point's parameters; a point without tiles is refused") {
        tb_knobs k;
        TB_CHECK(tb_knobs_parse("{\"dtype\":\"bf16\",\"tile_m\":128,\"tile_n\":256,\"tile_k\":64,\"cluster_m\":2,"
                                "\"cluster_n\":1,\"stages\":4,\"schedule\":\"cooperative\",\"raster\":\"h\","
                                "\"swizzle\":1,\"tail\":\"streamk\",\"layout\":\"tn\"}", &k, msg, sizeof msg) == TB_OK);
        TB_CHECK(k.tile_m == 128 && k.tile_n == 256 && k.cluster_m == 2 && k.stages == 4 && !k.pingpong &&
                 k.raster == 2 && k.streamk && !k.conflict);
        TB_CHECK(tb_knobs_parse("{\"dtype\":\"bf16\",\"layout\":\"tn\"}", &k, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "tile_m");
        TB_CHECK(tb_knobs_parse("not json", &k, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_knobs_parse("{\"tile_m\":0,\"tile_n\":128,\"stages\":4,\"schedule\":\"pingpong\"}", &k, msg, sizeof msg) == TB_EUSAGE);
    }
    TB_CASE("model-1.2", "more k costs more; one tile past a full wave costs another wave; a shallow ring costs more") {
        const tb_knobs k = knobs(128, 256, 4, 0, 1, 0);
        const double a = tb_model_predict_ms(&md, &H100, &k, 4096, 4096, 4096, 1700);
        const double b = tb_model_predict_ms(&md, &H100, &k, 4096, 4096, 8192, 1700);
        TB_CHECK(b > 1.8 * a && b < 2.2 * a);
        /* 132 tiles of 128x256 (m 128*12, n 256*11) against 133 */
        const double w1 = tb_model_predict_ms(&md, &H100, &k, 128 * 12, 256 * 11, 8192, 1700);
        const double w2 = tb_model_predict_ms(&md, &H100, &k, 128 * 12 + 1, 256 * 11, 8192, 1700);
        printf("  one wave %.4f ms, a wave and one tile %.4f ms\n", w1, w2);
        TB_CHECK(w2 > 1.8 * w1);
        const tb_knobs s2 = knobs(128, 256, 2, 0, 1, 0);
        TB_CHECK(tb_model_predict_ms(&md, &H100, &s2, 4096, 4096, 4096, 1700) > 1.2 * a);
        /* split-K: 16 tiles at m 128 n 4096 on a stream-K point use the whole grid */
        const tb_knobs sk = knobs(128, 256, 4, 0, 1, 1);
        TB_CHECK(tb_model_predict_ms(&md, &H100, &sk, 128, 4096, 8192, 1700) <
                 0.5 * tb_model_predict_ms(&md, &H100, &k, 128, 4096, 8192, 1700));
    }
    /* data made with other constants and a knob effect the closed form lacks */
    tb_model_default(&truth);
    truth.c[TB_MC_EFF] = 0.8; truth.c[TB_MC_STAGES] = 3.6; truth.c[TB_MC_TILE_US] = 3.0;
    truth.c[TB_MC_PINGPONG] = 1.05;
    const tb_knobs pts_k[] = { knobs(128, 256, 4, 0, 1, 0), knobs(128, 256, 3, 0, 1, 0), knobs(128, 256, 2, 0, 1, 0),
                               knobs(256, 128, 4, 0, 1, 0), knobs(128, 128, 6, 1, 1, 0), knobs(128, 128, 4, 0, 1, 0),
                               knobs(64, 256, 4, 1, 1, 0), knobs(128, 256, 4, 0, 2, 0), knobs(128, 256, 4, 0, 1, 1),
                               knobs(256, 128, 4, 0, 2, 0) };
    const int np = (int)(sizeof pts_k / sizeof pts_k[0]);
    const int64_t shp[][3] = { { 128, 4096, 4096 }, { 1024, 8192, 8192 }, { 4096, 4096, 4096 },
                               { 2048, 2048, 2048 }, { 128, 57344, 8192 }, { 8192, 8192, 8192 } };
    const int ns = (int)(sizeof shp / sizeof shp[0]);
    tb_obs obs[64];
    size_t no = 0;
    for (int s = 0; s < ns; s++)
        for (int p = 0; p < np; p++)
            obs[no++] = (tb_obs){ pts_k[p], shp[s][0], shp[s][1], shp[s][2], 1700,
                                  tb_model_predict_ms(&truth, &H100, &pts_k[p], shp[s][0], shp[s][1], shp[s][2], 1700) *
                                      (pts_k[p].cluster_m > 1 ? 0.97 : 1.0), s };
    TB_CASE("model-2.1", "the fit lowers the within-shape error of data made with other constants") {
        tb_model fit;
        tb_model_default(&fit);
        const double before = tb_model_rel_error_q(&fit, &H100, obs, no, 0.5);
        const double after = tb_model_fit(&fit, &H100, obs, no);
        printf("  within-shape median error %.2f %% before, %.2f %% after\n", 100 * before, 100 * after);
        TB_CHECK(isfinite(after) && after < 0.5 * before);
        double rc = 0;
        for (int s = 0; s < ns; s++) rc += tb_model_rank_corr(&fit, &H100, obs, no, s) / ns;
        printf("  mean rank correlation %.3f\n", rc);
        TB_CHECK(rc > 0.9);
    }
    TB_CASE("model-2.2", "rank correlation: 1 for a perfect model, NaN below three points") {
        tb_obs o3[4];
        for (int i = 0; i < 4; i++) {
            o3[i] = obs[i];
            o3[i].ms = tb_model_predict_ms(&md, &H100, &o3[i].k, o3[i].m, o3[i].n, o3[i].kk, 1700);
        }
        TB_CHECK(fabs(tb_model_rank_corr(&md, &H100, o3, 4, 0) - 1.0) < 1e-9);
        TB_CHECK(isnan(tb_model_rank_corr(&md, &H100, o3, 2, 0)));
    }
    TB_CASE("model-2.3", "the model as JSON and back predicts the same; a broken one is refused") {
        tb_model fit, back;
        tb_model_default(&fit);
        tb_model_fit(&fit, &H100, obs, no);
        char js[8192];
        TB_CHECK(tb_model_to_json(&fit, js, sizeof js) == TB_OK);
        TB_CHECK(tb_model_from_json(js, &back, msg, sizeof msg) == TB_OK);
        const double a = tb_model_predict_ms(&fit, &H100, &pts_k[7], 1024, 8192, 8192, 1700),
                     b = tb_model_predict_ms(&back, &H100, &pts_k[7], 1024, 8192, 8192, 1700);
        TB_CHECK(a == b);
        TB_CHECK(tb_model_to_json(&fit, js, 40) == TB_EUSAGE);
        TB_CHECK(tb_model_from_json("{\"c\":[1,2]}", &back, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_model_from_json("nonsense", &back, msg, sizeof msg) == TB_EUSAGE);
    }
    TB_CASE("search-1.1", "the search finds the oracle's best point on every shape, timing fewer than all") {
        tb_search_point pts[16];
        for (int p = 0; p < np; p++) { pts[p].name = "p"; pts[p].k = pts_k[p]; }
        tb_search_opts o;
        tb_search_opts_default(&o);
        tb_search_result r;
        tb_model start;
        tb_model_default(&start);
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &start, &o, oracle, NULL, &r, msg, sizeof msg) == TB_OK);
        int found = 0;
        for (int s = 0; s < ns; s++) {
            int best = 0;
            double bm = INFINITY;
            for (int p = 0; p < np; p++) {
                const double t = tb_model_predict_ms(&truth, &H100, &pts_k[p], shp[s][0], shp[s][1], shp[s][2], 1700);
                if (t < bm) { bm = t; best = p; }
            }
            found += r.shapes[s].winner >= 0 && r.shapes[s].winner_ms <= bm * 1.01;
            (void)best;
        }
        printf("  found %d of %d, timed %zu of %d\n", found, ns, r.n_obs, ns * np);
        TB_CHECK(found == ns);
        TB_CHECK(r.n_obs < (size_t)(ns * np));
        tb_search_result_free(&r);
    }
    TB_CASE("search-1.2", "a budget ends the search where it is") {
        tb_search_point pts[16];
        for (int p = 0; p < np; p++) { pts[p].name = "p"; pts[p].k = pts_k[p]; }
        tb_search_opts o;
        tb_search_opts_default(&o);
        o.budget_s = 2.0;
        tb_search_result r;
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, oracle, NULL, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.cost_s >= 2.0 && r.cost_s < 2.0 + 0.5 * 16);
        TB_CHECK(r.shapes[ns - 1].stopped_by_budget && r.shapes[ns - 1].winner < 0);
        tb_search_result_free(&r);
        TB_CHECK(tb_search_run(pts, 0, shp, ns, &H100, &md, &o, oracle, NULL, &r, msg, sizeof msg) == TB_EUSAGE);
    }
    TB_CASE("model-2.4", "a refit from a drifted model and from the start keeps the better fit") {
        tb_model start, drifted;
        tb_model_default(&start);
        drifted = start;    /* constants a noisy refit could wander to, inside the bounds */
        drifted.c[TB_MC_EFF] *= 0.1; drifted.c[TB_MC_STAGES] *= 8; drifted.c[TB_MC_TILE_US] *= 15;
        drifted.c[TB_MC_PINGPONG] *= 0.2;
        tb_model last = drifted, fresh = start, both = drifted;
        const double e_last = tb_model_fit(&last, &H100, obs, no), e_fresh = tb_model_fit(&fresh, &H100, obs, no);
        const double e_both = tb_model_refit(&both, &start, &H100, obs, no);
        printf("  within-shape median error: from the drifted model %.2f %%, from the start %.2f %%, "
               "refit %.2f %%\n", 100 * e_last, 100 * e_fresh, 100 * e_both);
        TB_CHECK(isfinite(e_both) && (e_both == e_last || e_both == e_fresh));
        TB_CHECK(e_both <= e_last && e_both <= 2 * e_fresh);
        TB_CHECK(isnan(tb_model_refit(&both, &start, &H100, obs, 0)));
    }
    TB_CASE("search-1.3", "replay noise: deterministic per seed, shape and name; a common shape factor; its sigma") {
        const double a = tb_search_noise(1, 128, 4096, 4096, "p1", 0.035, 0.035);
        TB_CHECK(a == tb_search_noise(1, 128, 4096, 4096, "p1", 0.035, 0.035));
        TB_CHECK(a != tb_search_noise(2, 128, 4096, 4096, "p1", 0.035, 0.035));
        TB_CHECK(a != tb_search_noise(1, 128, 4096, 4096, "p2", 0.035, 0.035));
        TB_CHECK(a != tb_search_noise(1, 128, 4096, 8192, "p1", 0.035, 0.035));
        TB_CHECK(tb_search_noise(1, 128, 4096, 4096, "p1", 0, 0) == 1.0);
        /* the shape factor alone: one value for every point of a shape */
        TB_CHECK(tb_search_noise(3, 16, 8192, 8192, "p1", 0, 0.05) == tb_search_noise(3, 16, 8192, 8192, "p2", 0, 0.05));
        TB_CHECK(tb_search_noise(3, 16, 8192, 8192, "p1", 0, 0.05) != tb_search_noise(3, 16, 8192, 4096, "p1", 0, 0.05));
        /* ln of the point factor: mean 0 and sd sigma over many names; the shape's likewise */
        double sp = 0, sp2 = 0, ss = 0, ss2 = 0;
        const int nk = 4000;
        for (int i = 0; i < nk; i++) {
            char name[16];
            snprintf(name, sizeof name, "point%d", i);
            const double lp = log(tb_search_noise(5, 1024, 4096, 4096, name, 0.035, 0));
            const double ls = log(tb_search_noise(5, 1024, 4096, 4096 + 64 * i, "p", 0, 0.035));
            sp += lp; sp2 += lp * lp; ss += ls; ss2 += ls * ls;
        }
        const double mp = sp / nk, sdp = sqrt(sp2 / nk - mp * mp), ms_ = ss / nk, sds = sqrt(ss2 / nk - ms_ * ms_);
        printf("  ln point factor: mean %.4f sd %.4f; ln shape factor: mean %.4f sd %.4f (sigma 0.035)\n",
               mp, sdp, ms_, sds);
        TB_CHECK(fabs(mp) < 0.003 && fabs(sdp - 0.035) < 0.003 && fabs(ms_) < 0.003 && fabs(sds - 0.035) < 0.003);
    }
    TB_CASE("search-1.4", "a common factor per shape changes no decision of the search; per-point noise does") {
        tb_search_point pts[16];
        char names[16][8];
        for (int p = 0; p < np; p++) { snprintf(names[p], sizeof names[p], "p%d", p); pts[p].name = names[p]; pts[p].k = pts_k[p]; }
        tb_search_opts o;
        tb_search_opts_default(&o);
        tb_search_result r0, r1, r2;
        const double none[2] = { 0, 0 }, shape_only[2] = { 0, 0.2 }, point[2] = { 0.05, 0 };
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, noisy_oracle, (void *)none, &r0, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, noisy_oracle, (void *)shape_only, &r1, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, noisy_oracle, (void *)point, &r2, msg, sizeof msg) == TB_OK);
        int same = r0.n_obs == r1.n_obs, differ = r0.n_obs != r2.n_obs;
        for (int s = 0; s < ns; s++) {
            same = same && r0.shapes[s].winner == r1.shapes[s].winner && r0.shapes[s].timed == r1.shapes[s].timed;
            differ = differ || r0.shapes[s].winner != r2.shapes[s].winner || r0.shapes[s].timed != r2.shapes[s].timed;
        }
        for (size_t i = 0; same && i < r0.n_obs; i++) same = r0.obs_point[i] == r1.obs_point[i];
        TB_CHECK(same);
        TB_CHECK(differ);
        tb_search_result_free(&r0);
        tb_search_result_free(&r1);
        tb_search_result_free(&r2);
    }
    TB_CASE("search-2.1", "with the incumbent re-timed, a per-round offset changes no decision; without, it does") {
        tb_search_point pts[16];
        for (int p = 0; p < np; p++) { pts[p].name = "p"; pts[p].k = pts_k[p]; }
        tb_search_opts o;
        tb_search_opts_default(&o);
        o.final_top = 0;
        o.incumbent = 1;
        tb_search_result r0, r1, r2, r3;
        int c1 = 0, c3 = 0;
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, oracle, NULL, &r0, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, round_oracle, &c1, &r1, msg, sizeof msg) == TB_OK);
        o.incumbent = 0;
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, oracle, NULL, &r2, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_search_run(pts, np, shp, ns, &H100, &md, &o, round_oracle, &c3, &r3, msg, sizeof msg) == TB_OK);
        int same = r0.n_obs == r1.n_obs, differ = r2.n_obs != r3.n_obs, retimed = 0;
        for (int s = 0; s < ns; s++) {
            /* the same winner, or one the oracle times alike (an exact tie, which rounding decides) */
            const int w0 = r0.shapes[s].winner, w1 = r1.shapes[s].winner;
            same = same && w0 >= 0 && w1 >= 0 && r0.shapes[s].timed == r1.shapes[s].timed &&
                   (w0 == w1 || tb_model_predict_ms(&truth, &H100, &pts_k[w0], shp[s][0], shp[s][1], shp[s][2], 1700) ==
                                tb_model_predict_ms(&truth, &H100, &pts_k[w1], shp[s][0], shp[s][1], shp[s][2], 1700));
            differ = differ || r2.shapes[s].winner != r3.shapes[s].winner || r2.shapes[s].timed != r3.shapes[s].timed;
            retimed += r0.shapes[s].retimed;
            TB_CHECK(r2.shapes[s].retimed == 0);
        }
        for (size_t i = 0; same && i < r0.n_obs; i++) same = r0.obs_point[i] == r1.obs_point[i];
        printf("  %d rounds' offsets; incumbent re-timed %d times\n", c1, retimed);
        TB_CHECK(same);
        TB_CHECK(differ);
        TB_CHECK(retimed > 0);
        tb_search_result_free(&r0); tb_search_result_free(&r1);
        tb_search_result_free(&r2); tb_search_result_free(&r3);
    }
    TB_CASE("search-2.2", "the final round re-times the close candidates together and its fastest wins") {
        tb_search_point pts2[2] = { { "a", knobs(128, 256, 4, 0, 1, 0) }, { "b", knobs(128, 256, 4, 0, 2, 0) } };
        const int64_t one[1][3] = { { 4096, 4096, 4096 } };
        tb_search_opts o;
        tb_search_opts_default(&o);
        o.per_round = 1;            /* one point a round: each timed in a round of its own */
        o.explore = 0;
        o.min_margin = 0.05;
        tb_search_result r;
        int calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        printf("  final round: winner %d, %d points, %d rounds, %d re-timed, %.1f s\n", r.shapes[0].winner,
               r.shapes[0].final_n, r.shapes[0].rounds, r.shapes[0].retimed, r.shapes[0].cost_s);
        TB_CHECK(r.shapes[0].timed == 2 && r.shapes[0].winner == 1 && r.shapes[0].final_n == 2 && r.shapes[0].final_changed);
        TB_CHECK(r.shapes[0].rounds == 3 && r.shapes[0].retimed == 2 && fabs(r.shapes[0].cost_s - 0.4) < 1e-9);
        tb_search_result_free(&r);
        /* final_below_ms (twenty-first session): the final round only on shapes whose best is
         * under it: above the shape's best it runs as before, below it the rounds decide */
        o.final_below_ms = 1e6;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 1 && r.shapes[0].final_n == 2);
        tb_search_result_free(&r);
        o.final_below_ms = 1e-9;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 0 && r.shapes[0].final_n == 0);
        tb_search_result_free(&r);
        o.final_below_ms = 0;
        /* without it the rounds' times (the second's 4 % off) decide */
        o.final_top = 0;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 0 && r.shapes[0].final_n == 0 && r.shapes[0].rounds == 2);
        tb_search_result_free(&r);
        /* two points timed in one round were compared side by side: no final round for them */
        o.final_top = 3;
        o.per_round = 2;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 1 && r.shapes[0].final_n == 0 && r.shapes[0].rounds == 1 && r.shapes[0].retimed == 0);
        tb_search_result_free(&r);
        /* with the incumbent beside the second point, the round decides, and the final round is moot */
        o.per_round = 1;
        o.incumbent = 1;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 1 && r.shapes[0].final_n == 0 && r.shapes[0].retimed >= 1);
        tb_search_result_free(&r);
        /* a candidate beyond the margin is not re-timed: one candidate, no final round */
        o.incumbent = 0;
        o.min_margin = 0.01;
        o.quantile = 0;
        calls = 0;
        TB_CHECK(tb_search_run(pts2, 2, one, 1, &H100, &md, &o, biased_alone, &calls, &r, msg, sizeof msg) == TB_OK);
        printf("  margin %.3f: %d timed, final round of %d\n", r.shapes[0].margin, r.shapes[0].timed, r.shapes[0].final_n);
        TB_CHECK(r.shapes[0].timed == 2 && r.shapes[0].margin < 0.019 && r.shapes[0].final_n == 0 && r.shapes[0].winner == 0);
        tb_search_result_free(&r);
    }
    TB_CASE("search-2.5", "the sibling round times the winner's untimed class mates predicted within the margin "
            "beside it; one faster wins; without it the rounds stop at the first of the class") {
        /* a memory-bound shape (M = 1): the model predicts the two 64x128 pingpong points alike;
         * the explore round times a, c and d; c and d, 10 % slower than predicted, set the shape's
         * scale, which puts b's prediction out of reach of a's time: the rounds stop there */
        tb_search_point p4[4] = { { "a", knobs(64, 128, 6, 1, 1, 0) }, { "b", knobs(64, 128, 8, 1, 1, 0) },
                                  { "c", knobs(128, 256, 4, 0, 1, 0) }, { "d", knobs(128, 128, 6, 0, 1, 0) } };
        double f[4] = { 1.00, 0.98, 1.10, 1.10 };
        const int64_t one[1][3] = { { 1, 8192, 8192 } };
        tb_model d0;
        tb_model_default(&d0);
        const double pa = tb_model_predict_ms(&d0, &H100, &p4[0].k, 1, 8192, 8192, 1700),
                     pb = tb_model_predict_ms(&d0, &H100, &p4[1].k, 1, 8192, 8192, 1700);
        printf("  predicted a %.4f ms, b %.4f ms\n", pa, pb);
        TB_CHECK(fabs(pb / pa - 1) < 0.01);
        tb_search_opts o;
        tb_search_opts_default(&o);
        o.final_top = 0;
        o.explore = 1000;
        tb_search_result r;
        TB_CHECK(tb_search_run(p4, 4, one, 1, &H100, &md, &o, by_factor, f, &r, msg, sizeof msg) == TB_OK);
        printf("  without: winner %d, %d timed, %d rounds\n", r.shapes[0].winner, r.shapes[0].timed, r.shapes[0].rounds);
        TB_CHECK(r.shapes[0].winner == 0 && r.shapes[0].timed == 3);
        tb_search_result_free(&r);
        o.siblings = 1;
        TB_CHECK(tb_search_run(p4, 4, one, 1, &H100, &md, &o, by_factor, f, &r, msg, sizeof msg) == TB_OK);
        printf("  with: winner %d, %d timed, %d rounds, %d re-timed\n", r.shapes[0].winner, r.shapes[0].timed,
               r.shapes[0].rounds, r.shapes[0].retimed);
        TB_CHECK(r.shapes[0].winner == 1 && r.shapes[0].timed == 4 && r.shapes[0].retimed == 1);
        TB_CHECK(r.shapes[0].sibling_n == 1 && r.shapes[0].sibling_changed == 1);
        TB_CHECK(fabs(r.shapes[0].winner_ms / (f[1] / f[0]) - r.obs[0].ms) < 1e-9 * r.obs[0].ms);
        tb_search_result_free(&r);
        /* a class mate slower than the winner is timed and loses */
        f[1] = 1.02;
        TB_CHECK(tb_search_run(p4, 4, one, 1, &H100, &md, &o, by_factor, f, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[0].winner == 0 && r.shapes[0].timed == 4 && r.shapes[0].sibling_n == 1 &&
                 r.shapes[0].sibling_changed == 0);
        tb_search_result_free(&r);
    }
    TB_CASE("search-2.6", "the sibling round: a class mate's reach by the closed form, the knob effects learned "
            "where compute bounds the time left out; and only on shapes whose best is under siblings_below_ms") {
        /* 4096^3 first, where compute bounds the time: the rounds time a, c, d and g (128x128
         * with 8 stages), which takes twice d's time: the refit learns a slow 8-stage ring. Then
         * M = 1, where bandwidth bounds the time and b (64x128 with 8 stages) is 2 % faster than
         * a: the rounds time a, c and d and stop, and the 8-stage effect puts b's prediction past
         * the margin of a's, where the closed form predicts the two alike */
        tb_search_point p5[5] = { { "a", knobs(64, 128, 6, 1, 1, 0) }, { "b", knobs(64, 128, 8, 1, 1, 0) },
                                  { "c", knobs(128, 256, 4, 0, 1, 0) }, { "d", knobs(128, 128, 6, 0, 1, 0) },
                                  { "g", knobs(128, 128, 8, 0, 1, 0) } };
        double f[2][5] = { { 1.8, 3.6, 1.0, 1.02, 2.0 }, { 1.00, 0.98, 1.10, 1.10, 1.10 } };
        const int64_t two[2][3] = { { 4096, 4096, 4096 }, { 1, 8192, 8192 } };
        tb_search_opts o;
        tb_search_opts_default(&o);
        o.final_top = 0;
        o.explore = 1000;
        o.siblings = 1;
        tb_search_result r;
        TB_CHECK(tb_search_run(p5, 5, two, 2, &H100, &md, &o, by_shape_factor, f, &r, msg, sizeof msg) == TB_OK);
        const tb_search_shape *s1 = &r.shapes[1];
        printf("  M = 1: winner %d, %d timed, sibling round of %d (b predicted %.4f ms, measured %.4f), margin %.3f\n",
               s1->winner, s1->timed, s1->sibling_n, r.obs_pred_ms[r.n_obs - 1], r.obs[r.n_obs - 1].ms, s1->margin);
        TB_CHECK(s1->winner == 1 && s1->sibling_n == 1 && s1->sibling_changed);
        tb_search_result_free(&r);
        /* the same shapes 10 times slower: M = 1's best is 0.5 ms or more, past the default
         * 0.25: no sibling round; with siblings_below_ms 0 (every shape) there is one */
        for (int i = 0; i < 5; i++) { f[0][i] *= 10; f[1][i] *= 10; }
        TB_CHECK(tb_search_run(p5, 5, two, 2, &H100, &md, &o, by_shape_factor, f, &r, msg, sizeof msg) == TB_OK);
        printf("  10 times slower: M = 1's best %.3f ms (point %d), sibling round of %d\n", r.shapes[1].winner_ms,
               r.shapes[1].winner, r.shapes[1].sibling_n);
        TB_CHECK(r.shapes[1].winner_ms >= 0.25 && r.shapes[1].sibling_n == 0 && r.shapes[1].winner == 0);
        tb_search_result_free(&r);
        o.siblings_below_ms = 0;
        TB_CHECK(tb_search_run(p5, 5, two, 2, &H100, &md, &o, by_shape_factor, f, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(r.shapes[1].sibling_n == 1 && r.shapes[1].winner == 1);
        tb_search_result_free(&r);
    }
    TB_CASE("search-2.3", "round noise: a round's offset common to its points, a fresh point draw each round") {
        const double a = tb_search_noise_round(1, 128, 4096, 4096, "p1", 1, 0.01, 0.05, 0);
        TB_CHECK(a == tb_search_noise_round(1, 128, 4096, 4096, "p1", 1, 0.01, 0.05, 0));
        TB_CHECK(a != tb_search_noise_round(1, 128, 4096, 4096, "p1", 2, 0.01, 0.05, 0));
        /* the round factor alone: one value for every point of the round, another next round */
        TB_CHECK(tb_search_noise_round(3, 16, 8192, 8192, "p1", 1, 0, 0.05, 0) ==
                 tb_search_noise_round(3, 16, 8192, 8192, "p2", 1, 0, 0.05, 0));
        TB_CHECK(tb_search_noise_round(3, 16, 8192, 8192, "p1", 1, 0, 0.05, 0) !=
                 tb_search_noise_round(3, 16, 8192, 8192, "p1", 2, 0, 0.05, 0));
        TB_CHECK(tb_search_noise_round(3, 16, 8192, 8192, "p1", 4, 0, 0, 0) == 1.0);
        double s1 = 0, s2 = 0, q1 = 0, q2 = 0;
        const int nk = 4000;
        for (int i = 0; i < nk; i++) {
            const double lr = log(tb_search_noise_round(5, 1024, 4096, 4096, "p", i, 0, 0.035, 0));
            const double lp = log(tb_search_noise_round(5, 1024, 4096, 4096, "p", i, 0.0055, 0, 0));
            s1 += lr; q1 += lr * lr; s2 += lp; q2 += lp * lp;
        }
        const double m1 = s1 / nk, sd1 = sqrt(q1 / nk - m1 * m1), m2 = s2 / nk, sd2 = sqrt(q2 / nk - m2 * m2);
        printf("  ln round factor: mean %.4f sd %.4f (0.035); ln point factor over rounds: mean %.5f sd %.5f (0.0055)\n",
               m1, sd1, m2, sd2);
        TB_CHECK(fabs(m1) < 0.003 && fabs(sd1 - 0.035) < 0.003 && fabs(m2) < 0.0005 && fabs(sd2 - 0.0055) < 0.0005);
    }
    return tb_test_done();
}
