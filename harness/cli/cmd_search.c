/* cmd_search.c - tilebench search: model-guided search over a family's points (issue 25).
 *
 * Owns the command: its arguments, where the timings come from, and what it prints. The loop
 * is driver/search.c's, the model driver/model.c's. Timings come from a recorded database
 * (--replay DB, search_replay.c: every measurement of the family there is an oracle, with
 * --replay-noise the measured run-to-run noise on it; GPU seconds are each measurement's share
 * of its run's wall time, and also what the rounds would cost as GPU search rounds), so that a
 * search can be judged against the exhaustive sweep it replays, by that sweep's own medians:
 * which winner it finds, at what fraction of the cost; or from the GPU, through the sweep's own
 * steps (search_gpu.c: one run per round in --db, the round's points interleaved on one shape,
 * one worker per shape kept across its rounds), so a search's timings are sweeps like any other
 * and `show` reads them. --final and --incumbent (fifteenth session) re-time points already
 * timed: a shape's final round, the incumbent beside every round (driver/search.c).
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/search_gpu.h"
#include "cli/search_replay.h"
#include "driver/catalog.h"
#include "driver/search.h"
#include "driver/shapes.h"
#include "driver/sweep.h"
#include "store/store.h"
#include "common/peak.h"
#include "common/tb.h"
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
    printf("usage: tilebench search [--replay DB | --db FILE [--variants PATH]...] [--family NAME]\n"
           "                        [--shapes SPEC] [--per-round N]\n"
           "                        [--budget S] [--quantile Q] [--explore N] [--dram-gbps G]\n"
           "                        [--max-samples N] [--replay-noise POINT[,SHAPE[,SEED]]]\n"
           "                        [--refit both|last] [--incumbent on|off] [--final N]\n"
           "                        [--siblings N] [--siblings-below MS] [--final-below MS]\n"
           "                        [--model FILE] [--explain] [--table FILE]\n"
           "\n"
           "For each shape (layout tn), predict the time of every point of a tiled family (tile,\n"
           "stages, schedule, cluster, raster and tail, read from each variant's parameters) with a\n"
           "model of the GPU, time only the points that can still win, refit the model's constants on\n"
           "what was timed, and stop when no untimed point's prediction, less the model's own\n"
           "measured error, beats the best time (docs/search.md).\n"
           "\n"
           "  --replay DB     take every timing from DB, a database of an exhaustive sweep (ok and\n"
           "                  passed measurements of the family; a point DB lacks counts as failed),\n"
           "                  and compare what the search finds with the sweep's own winner\n"
           "  --replay-noise POINT[,SHAPE[,SEED[,ROUND[,LONG]]]]\n"
           "                  replaying: each time is the recorded median x a per-point and a\n"
           "                  per-shape lognormal factor with these sigmas of the log (SHAPE\n"
           "                  defaults to POINT, SEED to 1; the same seed, the same noise). The\n"
           "                  sweep's own medians still judge the winners. The fourteenth\n"
           "                  session measured 0.035,0.035 (docs/search.md). With ROUND, each\n"
           "                  round (one worker job) has an offset of that sigma common to its\n"
           "                  points, and a point gets a fresh POINT draw each time it is timed:\n"
           "                  0.0055,0.035,SEED,0.035 is the fifteenth session's assumption.\n"
           "                  With LONG, the per-timing sigma grows from POINT at 0.25 ms to LONG\n"
           "                  at 4 ms and more, linear in log time (a comparison's repeatability\n"
           "                  on the H100, docs/search.md, twenty-first session)\n"
           "  --db FILE       without --replay: time on the GPU, each round a run stored in FILE\n"
           "                  (default results/tilebench.db; validated as a sweep validates, no\n"
           "                  energy; the GPU and the libraries are probed once per search,\n"
           "                  and one worker per shape serves all of the shape's rounds)\n"
           "  --model FILE    start from the newest model FILE holds (a search's database, --db's\n"
           "                  included) fitted on this GPU model (replaying: the recording's) for\n"
           "                  the family, instead of the default constants. Replayed on two\n"
           "                  H100 recordings, a stored model was the worse start: it found fewer\n"
           "                  winners (docs/search.md, eighteenth session)\n"
           "  --keep-worker   without --replay: one worker for the whole search, not one per\n"
           "                  shape (as sweep --keep-worker: the problem taken anew per shape)\n"
           "  --max-samples N without --replay: samples per timed point at most, under the sweep's\n"
           "                  stopping rule (stdrel); 0, the default, keeps that rule's own bound\n"
           "  --variants PATH without --replay: the libraries (repeatable; default the shipped\n"
           "                  variants and variants-grid beside them)\n"
           "  --family NAME   the family searched (default wgmma)\n"
           "  --shapes SPEC   shapes, sets or files as in sweep (default: every shape of the\n"
           "                  replayed DB; on the GPU: square)\n"
           "  --per-round N   points timed per round (default 2)\n"
           "  --budget S      GPU seconds the whole search may spend (default: no limit)\n"
           "  --quantile Q    the margin: this quantile of the model's within-shape errors\n"
           "                  (default 0.8; lower times fewer points and risks more misses)\n"
           "  --explore N     until N timings are known, a shape's first round also times the\n"
           "                  best point of every tile class (default 100)\n"
           "  --refit both|last\n"
           "                  each refit starts from the last fit and from the starting model,\n"
           "                  keeping the better (both, the default), or from the last fit only\n"
           "                  (last: the search before the fourteenth session, which drifts on\n"
           "                  noisy timings; docs/search.md)\n"
           "  --incumbent on|off\n"
           "                  on: every round after a shape's first also re-times the shape's\n"
           "                  best so far, interleaved with the round's points, and judges them\n"
           "                  against it as measured side by side; off (the default): each round\n"
           "                  alone (docs/search.md, fifteenth session)\n"
           "  --final N       a shape ends with a round that re-times its best N measured points\n"
           "                  within the margin of the best, together; the fastest there wins\n"
           "                  (default 3; 0: no final round)\n"
           "  --siblings N    before it, a round that times at most N untimed points of the\n"
           "                  winner's tile class whose closed form (the model less its knob\n"
           "                  effects) is within the margin of the winner's, beside the winner\n"
           "                  (default 0: none; docs/search.md, twentieth session)\n"
           "  --siblings-below MS\n"
           "                  the sibling round only on shapes whose best time is under MS ms, where\n"
           "                  one comparison side by side is precise (default 0.25; 0: every shape;\n"
           "                  docs/search.md, twenty-first session)\n"
           "  --final-below MS\n"
           "                  the same for the final round (default 0: every shape)\n"
           "  --dram-gbps G   the DRAM ceiling when DB holds no doctor --calibrate (default 3000)\n"
           "  --explain       per shape, every timed point's prediction beside its time, and the\n"
           "                  model's rank correlation with the whole sweep\n"
           "  --table FILE    write the winners as a dispatch table (variants/wgmma/auto-table.json's\n"
           "                  format; written whole, never half)\n"
           "\n"
           "Exit 0, 1 when a shape found no winner (replaying: or a winner more than 1 %% slower\n"
           "than the sweep's), 2 on bad input or no GPU.\n"
           "\n"
           "examples:\n"
           "  tilebench search --replay tests/data/h100-grid-search.db --explain\n"
           "  tilebench search --shapes llm --db results/search.db --table auto-table.json\n");
}

/* the winners as auto-table.json: the winning points, then [m, n, k, index] per shape */
static int write_table(const char *path, const tb_replay *rp, const tb_search_result *res, char *msg, size_t len)
{
    int *used = calloc((size_t)rp->n_pts + 1, sizeof *used), *map = calloc((size_t)rp->n_pts + 1, sizeof *map);
    if (!used || !map) { free(used); free(map); return tb_fail(msg, len, TB_ENOMEM, "out of memory"); }
    for (size_t s = 0; s < res->n_shapes; s++)
        if (res->shapes[s].winner >= 0) used[res->shapes[s].winner] = 1;
    int nu = 0;
    for (int p = 0; p < rp->n_pts; p++)     /* numbered in the order "points" is written */
        if (used[p]) map[p] = nu++;
    char tmp[TB_PATH_LEN + 8];
    if (!nu || (size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        free(used); free(map);
        return tb_fail(msg, len, nu ? TB_EUSAGE : TB_EINTERNAL, nu ? "--table path too long: '%s'"
                       : "no shape found a winner: no table written to '%s'", path);
    }
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(used); free(map);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s'", tmp);
    }
    fprintf(f, "{\n \"comment\": \"made by tilebench search (model-guided; docs/search.md)\",\n"
               " \"gpu\": \"\",\n \"sweep\": [],\n \"tuning_seconds\": %.1f,\n \"skinny_max_m\": 16,\n"
               " \"points\": [", res->cost_s);
    int first = 1;
    for (int p = 0; p < rp->n_pts; p++)
        if (used[p]) { fprintf(f, "%s\n  \"%s\"", first ? "" : ",", rp->specs[p]); first = 0; }
    fprintf(f, "\n ],\n \"shapes\": [");
    first = 1;
    for (size_t s = 0; s < res->n_shapes; s++) {
        const tb_search_shape *sh = &res->shapes[s];
        if (sh->winner < 0) continue;
        fprintf(f, "%s\n  [%lld, %lld, %lld, %d]", first ? "" : ",", (long long)sh->m, (long long)sh->n,
                (long long)sh->k, map[sh->winner]);
        first = 0;
    }
    fprintf(f, "\n ]\n}\n");
    free(used);
    free(map);
    const int werr = ferror(f);
    if (fclose(f) || werr || rename(tmp, path)) {
        remove(tmp);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s'", path);
    }
    return TB_OK;
}

int cmd_search(int argc, char **argv, const tb_paths *paths)
{
    static const struct option opts[] = {
        { "replay", required_argument, 0, 'r' }, { "family", required_argument, 0, 'f' },
        { "shapes", required_argument, 0, 's' }, { "per-round", required_argument, 0, 'p' },
        { "budget", required_argument, 0, 'b' }, { "dram-gbps", required_argument, 0, 'd' },
        { "explain", no_argument, 0, 'e' }, { "table", required_argument, 0, 't' },
        { "quantile", required_argument, 0, 'q' }, { "explore", required_argument, 0, 'x' },
        { "db", required_argument, 0, 'D' }, { "variants", required_argument, 0, 'V' },
        { "max-samples", required_argument, 0, 'M' }, { "replay-noise", required_argument, 0, 'N' },
        { "refit", required_argument, 0, 'R' }, { "incumbent", required_argument, 0, 'I' },
        { "final", required_argument, 0, 'F' }, { "model", required_argument, 0, 'm' },
        { "keep-worker", no_argument, 0, 'K' }, { "siblings", required_argument, 0, 'S' },
        { "siblings-below", required_argument, 0, 'B' }, { "final-below", required_argument, 0, 'G' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = NULL, *noise = NULL, *family = "wgmma", *shapes_spec = NULL, *table = NULL, *out_db = NULL;
    const char *model_db = NULL;
    char *vpaths[TB_CLI_MAX_REPEAT];
    size_t nv = 0;
    long long per_round = 2, explore = -1, max_samples = 0, final_top = 3, siblings = 0;
    double budget = 0, dram = 3000, quantile = 0.8, sib_below = 0.25, final_below = 0;
    int explain = 0, refit_last = 0, incumbent = 0, keep_worker = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': db = optarg; break;
        case 'f': family = optarg; break;
        case 's': shapes_spec = optarg; break;
        case 'p': if (tb_cli_int("--per-round", optarg, 1, 64, &per_round)) return TB_EXIT_USAGE; break;
        case 'b': if (tb_cli_double("--budget", optarg, 0, 1e7, &budget)) return TB_EXIT_USAGE; break;
        case 'd': if (tb_cli_double("--dram-gbps", optarg, 1, 1e6, &dram)) return TB_EXIT_USAGE; break;
        case 'e': explain = 1; break;
        case 'x': if (tb_cli_int("--explore", optarg, 0, 1000000, &explore)) return TB_EXIT_USAGE; break;
        case 'q': if (tb_cli_double("--quantile", optarg, 0, 1, &quantile)) return TB_EXIT_USAGE; break;
        case 't': table = optarg; break;
        case 'D': out_db = optarg; break;
        case 'M': if (tb_cli_int("--max-samples", optarg, 0, 100000, &max_samples)) return TB_EXIT_USAGE; break;
        case 'N': noise = optarg; break;
        case 'R':
            if (strcmp(optarg, "both") && strcmp(optarg, "last"))
                return tb_cli_error("--refit: 'both' or 'last', not '%s'", optarg);
            refit_last = !strcmp(optarg, "last");
            break;
        case 'I':
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return tb_cli_error("--incumbent: 'on' or 'off', not '%s'", optarg);
            incumbent = !strcmp(optarg, "on");
            break;
        case 'F': if (tb_cli_int("--final", optarg, 0, 16, &final_top)) return TB_EXIT_USAGE; break;
        case 'S': if (tb_cli_int("--siblings", optarg, 0, 16, &siblings)) return TB_EXIT_USAGE; break;
        case 'B': if (tb_cli_double("--siblings-below", optarg, 0, 1e6, &sib_below)) return TB_EXIT_USAGE; break;
        case 'G': if (tb_cli_double("--final-below", optarg, 0, 1e6, &final_below)) return TB_EXIT_USAGE; break;
        case 'm': model_db = optarg; break;
        case 'K': keep_worker = 1; break;
        case 'V': if (tb_cli_push(vpaths, &nv, TB_CLI_MAX_REPEAT, optarg, "--variants")) return TB_EXIT_USAGE; break;
        case 'h': help(); return TB_EXIT_OK;
        default: return tb_cli_bad_option("search", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("search takes no operand ('%s'; see 'tilebench search --help')", argv[optind]);
    if (db && (out_db || nv || keep_worker))
        return tb_cli_error("--replay takes its timings from DB: --db, --variants and --keep-worker "
                            "are for timing on the GPU");
    char msg[TB_MSG_LEN];
    if (shapes_spec) {   /* an attention shape is refused before the GPU is opened or a file written */
        tb_shape_list early = { 0 };
        int erc = tb_shapes_add(&early, shapes_spec, paths->shapes_dir, msg, sizeof msg);
        if (erc == TB_OK) erc = tb_shapes_gemm_only(&early, "search", msg, sizeof msg);
        tb_shapes_free(&early);
        if (erc) return tb_cli_error("%s", msg);
    }
    tb_replay rp;
    memset(&rp, 0, sizeof rp);
    rp.sigma_round = -1;
    rp.sigma_long = -1;
    int rc;
    tb_environment env;
    memset(&env, 0, sizeof env);
    tb_search_gpu gc;
    memset(&gc, 0, sizeof gc);
    gc.db = out_db ? out_db : TB_DEFAULT_DB;
    int gpu_open = 0;
    char grid[sizeof paths->variants_dir + 16];
    if (noise && !db) return tb_cli_error("--replay-noise is for --replay: the GPU's noise is its own");
    if (model_db) {                 /* before the GPU is opened or a file written */
        FILE *mf = fopen(model_db, "r");
        if (!mf) return tb_cli_error("--model '%s': cannot read it", model_db);
        fclose(mf);
    }
    if (noise && tb_replay_parse_noise(noise, &rp, msg, sizeof msg) != TB_OK) return tb_cli_error("%s", msg);
    if (db) {
        rc = tb_replay_load(db, family, dram, &rp, msg, sizeof msg);
    } else {
        if (!nv) {                  /* the shipped variants and the grid beside them */
            vpaths[nv++] = (char *)paths->variants_dir;
            snprintf(grid, sizeof grid, "%s-grid", paths->variants_dir);
            FILE *f = fopen(grid, "r");
            if (f) { fclose(f); vpaths[nv++] = grid; }
        }
        if (!shapes_spec) shapes_spec = "square";
        rc = tb_search_gpu_open(&gc, paths, vpaths, nv, gc.db, (int)max_samples, keep_worker, argc,
                                argv, msg, sizeof msg);
        gpu_open = rc == TB_OK;
        if (rc == TB_OK) rc = tb_replay_load_points(&gc.cat, family, &rp, msg, sizeof msg);
        env = gc.env;
        if (rc == TB_OK) {
            rp.mc.sms = env.sm_count;
            rp.mc.flop_per_clk_sm = tb_peak_flop_per_clk_sm(env.cc_major, env.cc_minor);
            rp.mc.dram_bytes_s = dram * 1e9;
            if (rp.mc.sms < 1 || !(rp.mc.flop_per_clk_sm > 0))
                rc = tb_fail(msg, sizeof msg, TB_ENOGPU, "the GPU (%s, sm_%d%d) has no tensor peak tilebench knows",
                             env.gpu_name, env.cc_major, env.cc_minor);
        }
    }
    if (rc) {
        char m2[TB_MSG_LEN];
        if (gpu_open) tb_search_gpu_close(&gc, NULL, m2, sizeof m2);
        tb_replay_free(&rp);
        return tb_cli_fail(rc, msg);
    }
    /* the shapes: as given, else every shape the file measured the family on */
    tb_shape_list sl = { 0 };
    size_t ns = 0;
    int64_t (*shapes)[3] = NULL;
    if (shapes_spec) {
        rc = tb_shapes_add(&sl, shapes_spec, paths->shapes_dir, msg, sizeof msg);
        if (rc == TB_OK) rc = tb_shapes_gemm_only(&sl, "search", msg, sizeof msg);
        if (rc == TB_OK && (shapes = calloc(sl.n ? sl.n : 1, sizeof *shapes)))
            for (size_t i = 0; i < sl.n; i++) { shapes[ns][0] = sl.v[i].m; shapes[ns][1] = sl.v[i].n; shapes[ns++][2] = sl.v[i].k; }
        tb_shapes_free(&sl);
    } else if ((shapes = calloc(rp.n_r, sizeof *shapes))) {
        for (size_t i = 0; i < rp.n_r; i++) {
            size_t j = 0;
            while (j < ns && !(shapes[j][0] == rp.r[i].m && shapes[j][1] == rp.r[i].n && shapes[j][2] == rp.r[i].k)) j++;
            if (j == ns) { shapes[ns][0] = rp.r[i].m; shapes[ns][1] = rp.r[i].n; shapes[ns++][2] = rp.r[i].k; }
        }
    }
    if (rc == TB_OK && !shapes) rc = tb_fail(msg, sizeof msg, TB_ENOMEM, "out of memory");
    tb_search_opts o;
    tb_search_opts_default(&o);
    o.per_round = (int)per_round;
    o.budget_s = budget;
    o.quantile = quantile;
    o.refit_last = refit_last;
    o.incumbent = incumbent;
    o.final_top = (int)final_top;
    o.siblings = (int)siblings;
    o.siblings_below_ms = sib_below;
    o.final_below_ms = final_below;
    if (explore >= 0) o.explore = (int)explore;
    tb_model md;
    tb_model_default(&md);
    char start[TB_MSG_LEN] = "";
    /* the starting model: the default constants, or --model's newest fitted on this GPU model
     * (replaying: the recording's). Until the eighteenth session the GPU path started from
     * --db's by itself; replayed, that start found fewer winners (docs/search.md). */
    if (rc == TB_OK && model_db) {
        const char *gname = db ? rp.gpu_name : env.gpu_name;
        tb_store *st = NULL;
        char js[8192], when[32] = "";
        int nobs = 0, mfound = 0;
        rc = tb_store_open(model_db, 0, 1, &st, msg, sizeof msg);
        if (rc == TB_OK) {
            rc = tb_store_latest_search_model(st, gname, family, js, sizeof js, &nobs, when, sizeof when,
                                              &mfound, msg, sizeof msg);
            if (rc == TB_OK && !mfound)
                rc = tb_fail(msg, sizeof msg, TB_EUSAGE, "--model '%s' holds no model fitted on %s for family %s",
                             model_db, gname[0] ? gname : "this GPU", family);
            if (rc == TB_OK) rc = tb_model_from_json(js, &md, msg, sizeof msg);
            if (rc == TB_OK)
                snprintf(start, sizeof start, "starting from the model fitted on %d timings on %s (%s, %s)",
                         nobs, gname, when, model_db);
            tb_store_close(st);
        }
    }
    tb_search_result res;
    memset(&res, 0, sizeof res);
    if (rc == TB_OK)
        rc = tb_search_run(rp.pts, rp.n_pts, (const int64_t (*)[3])shapes, ns, &rp.mc, &md, &o,
                           db ? tb_replay_time : tb_search_gpu_time, db ? (void *)&rp : (void *)&gc, &res, msg, sizeof msg);
    if (gpu_open) {   /* the last shape's worker ends: its exit is charged to the search */
        char m2[TB_MSG_LEN];
        const int crc = tb_search_gpu_close(&gc, rc == TB_OK ? &res.cost_s : NULL, m2, sizeof m2);
        if (rc == TB_OK && crc != TB_OK) {
            tb_search_result_free(&res);
            rc = crc;
            snprintf(msg, sizeof msg, "%s", m2);
        }
    }
    if (rc) {
        free(shapes); tb_replay_free(&rp);
        return tb_cli_fail(rc, msg);
    }
    /* against the exhaustive sweep: its winner and cost on the same shapes */
    double full_cost = 0;
    int found = 0, missed = 0, covered = 0;
    size_t full_n = 0;
    if (db)
        printf("search over %d %s points on %zu shapes, replaying '%s' (%d SMs, DRAM %.0f GB/s)%s%s\n",
               rp.n_pts, family, ns, db, rp.mc.sms, rp.mc.dram_bytes_s / 1e9, start[0] ? "; " : "", start);
    else
        printf("search over %d %s points on %zu shapes on the GPU, each round a sweep run in '%s' "
               "(%d SMs, DRAM %.0f GB/s)%s%s\n", rp.n_pts, family, ns, gc.db, rp.mc.sms,
               rp.mc.dram_bytes_s / 1e9, start[0] ? "; " : "", start);
    printf("%-22s %-58s %8s %6s %6s %-9s\n", "shape", "winner (search)", "ms", "timed", "of", "sweep's");
    for (size_t s = 0; s < ns; s++) {
        const tb_search_shape *sh = &res.shapes[s];
        double best = INFINITY;
        int bp = -1, avail = 0;
        for (size_t i = 0; i < rp.n_r; i++) {
            const tb_replay_rec *r = &rp.r[i];
            if (r->m != sh->m || r->n != sh->n || r->k != sh->k) continue;
            avail++;
            full_n++;
            full_cost += r->cost_s;
            if (r->ms < best) { best = r->ms; bp = r->point; }
        }
        /* judged by the recording: the search's winner as the sweep measured it (with
         * --replay-noise the search saw other times; the sweep's medians judge both, as
         * scripts/search-gpu.sh --compare judges a GPU search) */
        const tb_replay_rec *wr = db && sh->winner >= 0 ? tb_replay_lookup(&rp, sh->winner, sh->m, sh->n, sh->k) : NULL;
        const double ratio = wr && bp >= 0 ? wr->ms / best : NAN;
        const int ok = sh->winner >= 0 && !sh->stopped_by_budget && (!db || ratio <= 1.01);
        for (size_t i = 0; db && bp >= 0 && i < res.n_obs; i++) {    /* was a point within 1 % timed? */
            const tb_replay_rec *tr = res.obs[i].shape == (int)s ? tb_replay_lookup(&rp, res.obs_point[i], sh->m, sh->n, sh->k) : NULL;
            if (tr && tr->ms <= 1.01 * best) { covered++; break; }
        }
        if (!db) avail = rp.n_pts;
        found += ok;
        missed += !ok;
        char shp[40];
        snprintf(shp, sizeof shp, "%lldx%lldx%lld", (long long)sh->m, (long long)sh->n, (long long)sh->k);
        printf("%-22s %-58s %8.4f %6d %6d %s\n", shp, sh->winner >= 0 ? rp.names[sh->winner] : "(none)",
               sh->winner_ms, sh->timed, avail,
               sh->stopped_by_budget ? "budget" : sh->winner < 0 || !db ? "-" : sh->winner == bp ? "same"
               : ok ? "tied (<=1%)" : "MISSED");
        if (!ok && bp >= 0 && sh->winner >= 0)
            printf("%-22s   the sweep's winner: %s %.4f ms (the search's is %.1f %% slower)\n", "",
                   rp.names[bp], best, 100 * (ratio - 1));
        if (explain) {
            for (size_t i = 0; i < res.n_obs; i++)
                if (res.obs[i].shape == (int)s)
                    printf("%-22s   %-58s predicted %.4f measured %.4f (%+.1f %%)\n", "",
                           rp.names[res.obs_point[i]], res.obs_pred_ms[i], res.obs[i].ms,
                           100 * (res.obs_pred_ms[i] / res.obs[i].ms - 1));
            /* the fitted model against every recorded point of the shape */
            tb_obs *all = calloc(avail ? avail : 1, sizeof *all);
            size_t na = 0;
            for (size_t i = 0; all && i < rp.n_r; i++) {
                const tb_replay_rec *r = &rp.r[i];
                if (r->m != sh->m || r->n != sh->n || r->k != sh->k) continue;
                all[na++] = (tb_obs){ rp.pts[r->point].k, r->m, r->n, r->k,
                                      r->clock > 0 ? r->clock : 1755.0, r->ms, 0 };
            }
            if (all && db)
                printf("%-22s   the fitted model on all %zu points of the sweep: rank correlation %.3f, "
                       "within-shape median error %.1f %%\n", "", na, tb_model_rank_corr(&res.model, &rp.mc, all, na, 0),
                       100 * (exp(tb_model_rel_error_q(&res.model, &rp.mc, all, na, 0.5)) - 1));
            free(all);
        }
    }
    if (db)
        printf("found the sweep's winner or a point within 1 %% on %d of %zu shapes; timed %zu of %zu "
               "measurements; GPU time %.1f s of the sweep's %.1f s (%.0f %%)\n", found, ns, res.n_obs,
               full_n, res.cost_s, full_cost, full_cost > 0 ? 100 * res.cost_s / full_cost : 0.0);
    if (db) {
        printf("as search rounds on the GPU (%.2f s a shape, %.3f s a point, %.1f times its median: docs/search.md): "
               "%.1f s, %.0f %% of the sweep's\n", TB_REPLAY_SHAPE_S, TB_REPLAY_POINT_S, TB_REPLAY_KERNEL_X,
               rp.round_cost_s, full_cost > 0 ? 100 * rp.round_cost_s / full_cost : 0.0);
        printf("as search rounds with --keep-worker (%.3f s a shape, %.3f s a point, %.1f times its median: "
               "docs/search.md, twenty-first session): %.1f s, %.0f %% of the sweep's\n", TB_REPLAY_KEPT_SHAPE_S,
               TB_REPLAY_KEPT_POINT_S, TB_REPLAY_KEPT_KERNEL_X, rp.round_cost_kept_s,
               full_cost > 0 ? 100 * rp.round_cost_kept_s / full_cost : 0.0);
        printf("timed the sweep's winner or a point within 1 %% of it on %d of %zu shapes (the rest: never "
               "timed; found less than that: the search's own times picked another)\n", covered, ns);
        if ((rp.sigma_point > 0 || rp.sigma_shape > 0) && rp.sigma_round < 0)
            printf("replayed with noise: each time the recorded median x a per-shape factor (sigma %.3f) x a "
                   "per-point factor (sigma %.3f), lognormal, seed %llu\n", rp.sigma_shape, rp.sigma_point,
                   (unsigned long long)rp.seed);
        else if (rp.sigma_round >= 0)
        {
            char lg[96] = "";
            if (rp.sigma_long >= 0)
                snprintf(lg, sizeof lg, ", growing to %.4f from %g to %g ms", rp.sigma_long,
                         TB_REPLAY_LONG_FROM_MS, TB_REPLAY_LONG_AT_MS);
            printf("replayed with noise: each time the recorded median x a per-shape factor (sigma %.3f) x a "
                   "per-round factor (sigma %.4f) x a per-timing factor (sigma %.4f%s), lognormal, seed %llu\n",
                   rp.sigma_shape, rp.sigma_round, rp.sigma_point, lg, (unsigned long long)rp.seed);
        }
    }
    else
    {
        printf("a winner on %d of %zu shapes; timed %zu of %zu points x shapes; GPU time %.1f s "
               "(the sweeps' wall time)\n", found, ns, res.n_obs, (size_t)rp.n_pts * ns, res.cost_s);
        printf("%d round%s, %d worker%s started (%s; a crash starts another)\n", gc.rounds,
               gc.rounds == 1 ? "" : "s", gc.sess.starts, gc.sess.starts == 1 ? "" : "s",
               keep_worker ? "one for every shape, --keep-worker" : "one per shape, kept across its rounds");
    }
    int retimed = 0, finals = 0, changed = 0, sibs = 0, sib_changed = 0;
    for (size_t s = 0; s < ns; s++) {
        retimed += res.shapes[s].retimed;
        finals += res.shapes[s].final_n > 0;
        changed += res.shapes[s].final_changed;
        sibs += res.shapes[s].sibling_n > 0;
        sib_changed += res.shapes[s].sibling_changed;
    }
    char fb[64] = "", sb[64] = "";
    if (final_below > 0 && final_top >= 2) snprintf(fb, sizeof fb, ", on shapes whose best is under %g ms", final_below);
    if (sib_below > 0) snprintf(sb, sizeof sb, ", on shapes whose best is under %g ms", sib_below);
    printf("re-timed %d points beside the new ones (the incumbent %s, final rounds of up to %d on %d "
           "shapes, which changed the winner on %d%s)\n", retimed, incumbent ? "in every round after a shape's first"
           : "off", (int)final_top, finals, changed, fb);
    if (siblings)
        printf("sibling rounds of up to %d on %d shapes, which changed the winner on %d%s\n", (int)siblings,
               sibs, sib_changed, sb);
    printf("model error (within-shape median) on the timed points: %.1f %% with the default constants, "
           "%.1f %% refitted\n", 100 * (exp(res.error_before) - 1), 100 * (exp(res.error_after) - 1));
    if (!db && res.n_obs) {         /* the fitted model, kept for the next search on this GPU */
        tb_store *st = NULL;
        char js[8192];
        rc = tb_model_to_json(&res.model, js, sizeof js) == TB_OK
                 ? tb_store_open(gc.db, 0, 0, &st, msg, sizeof msg)
                 : tb_fail(msg, sizeof msg, TB_EINTERNAL, "the fitted model does not fit its buffer");
        if (rc == TB_OK)
            rc = tb_store_put_search_model(st, env.gpu_name, family, (int)res.n_obs, res.error_after, js,
                                           msg, sizeof msg);
        if (st) tb_store_close(st);
        if (rc == TB_OK) printf("the fitted model stored in '%s' for %s (%s)\n", gc.db, env.gpu_name, family);
    }
    if (rc == TB_OK && table) rc = write_table(table, &rp, &res, msg, sizeof msg);
    tb_search_result_free(&res);
    free(shapes); tb_replay_free(&rp);
    if (rc) return tb_cli_fail(rc, msg);
    return missed ? TB_EXIT_FAIL : TB_EXIT_OK;
}
