/* search_gpu.c - search's timing on the GPU (see search_gpu.h). Owns the one probe of the GPU
 * and of the libraries for a whole search, the shape's worker session (one worker per shape,
 * kept across its rounds: driver/session.h, through the sweep's own worker loop), and the
 * measurement of one round: the round's variants (a sub-catalog of the probed one) on one
 * shape, as a run of its own in the database through the sweep's own steps (tb_cli_run_begin,
 * tb_cli_run_measure), its results read back.
 * Why not `tilebench sweep` per round, as the first version did: each such run asked a worker
 * for the GPU and probed every library again, 0.6-0.8 s a round, 193 s of a 490 s search on
 * the H100; and why not a worker per round, as the second did: 0.35 s a round for its start
 * (the CUDA context, the buffers), 58.5 s of 194.9 s (docs/search.md). With --keep-worker one
 * worker serves every shape (driver/session.h). */
#define _GNU_SOURCE
#include "cli/search_gpu.h"
#include "cli/cli.h"
#include "cli/run.h"
#include "common/phases.h"
#include "common/stop.h"
#include "common/tb.h"
#include "driver/sass.h"
#include "driver/spawn.h"
#include "driver/sweep.h"
#include "store/store.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tb_search_gpu_open(tb_search_gpu *g, const tb_paths *paths, char **vpaths, size_t nv,
                       const char *db, int max_samples, int keep_worker, int argc, char **argv,
                       char *msg, size_t len)
{
    memset(g, 0, sizeof *g);
    const double t0 = tb_now();
    g->paths = paths;
    g->db = db;
    g->argc = argc;
    g->argv = argv;
    tb_sweep_opts_default(&g->o);
    g->o.no_energy = 1;
    g->o.no_confirm = 1;     /* a round ranks a few points: no confirming pass (docs/search.md) */
    g->o.keep_worker = keep_worker;   /* one worker for every shape (driver/session.h) */
    if (max_samples > 0) {   /* the bound goes into the stop spec the worker applies */
        g->o.max_samples = max_samples;
        if (g->o.min_samples > max_samples) g->o.min_samples = max_samples;
        snprintf(g->o.stop, sizeof g->o.stop, "stdrel:min-samples=%d,max-samples=%d",
                 max_samples < 10 ? max_samples : 10, max_samples);
        tb_stop *chk = NULL;
        const int src = tb_stop_create(g->o.stop, &chk, msg, len);
        tb_stop_free(chk);
        if (src) return src;
    }
    tb_shape_session_open(&g->sess);
    g->o.session = &g->sess;
    int rc = tb_sweep_probe_env(paths->worker, "0", &g->env, msg, len);
    char **files = NULL;
    size_t nfiles = 0;
    if (rc == TB_OK) rc = tb_catalog_expand(vpaths, nv, &files, &nfiles, msg, len);
    if (rc == TB_OK) rc = tb_catalog_load(&g->cat, paths->worker, files, nfiles, msg, len);
    tb_strv_free(files, nfiles);
    for (size_t i = 0; rc == TB_OK && i < g->cat.n;) {   /* what cannot run on this GPU */
        char why[256];
        if (!tb_sass_runs_on(g->cat.v[i].sass, g->env.cc_major, g->env.cc_minor, why, sizeof why))
            tb_catalog_refuse(&g->cat, i, why);
        else i++;
    }
    if (rc != TB_OK) tb_catalog_free(&g->cat);
    g->open_s = tb_now() - t0;
    return rc;
}

int tb_search_gpu_close(tb_search_gpu *g, double *cost_s, char *msg, size_t len)
{
    const double s = tb_shape_session_close(&g->sess);
    tb_catalog_free(&g->cat);
    if (cost_s) *cost_s += s;
    if (!(s > 0) || !g->last_run) return TB_OK;
    tb_store *st = NULL;
    g->last_ph.total_s += s;
    int rc = tb_store_open(g->db, 1, 0, &st, msg, len);
    if (rc == TB_OK) rc = tb_store_run_set_phases(st, g->last_run, &g->last_ph, msg, len);
    if (st) tb_store_close(st);
    return rc;
}

static char *round_options(const tb_search_gpu *g, const char *shape)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "search_round", shape);
    cJSON_AddNumberToObject(o, "max_samples", g->o.max_samples);
    cJSON_AddNumberToObject(o, "min_samples", g->o.min_samples);
    cJSON_AddNumberToObject(o, "target_rse", g->o.target_rse);
    cJSON_AddNumberToObject(o, "max_time_s", g->o.max_time_s);
    cJSON_AddStringToObject(o, "stop", g->o.stop);
    cJSON_AddStringToObject(o, "layout", g->o.layout);
    cJSON_AddNumberToObject(o, "no_energy", 1);
    cJSON_AddNumberToObject(o, "no_confirm", 1);
    if (g->o.keep_worker) cJSON_AddNumberToObject(o, "keep_worker", 1);
    char *t = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return t;
}

int tb_search_gpu_time(void *ctx, const tb_search_point *pts, const int *idx, int n, int64_t m,
                       int64_t nn, int64_t k, double *ms, double *clk, double *cost_s, char *msg,
                       size_t len)
{
    tb_search_gpu *g = ctx;
    const double t0 = tb_now();
    if (g->sess.live && !g->o.keep_worker && (g->shape[0] != m || g->shape[1] != nn || g->shape[2] != k))
        tb_shape_session_close(&g->sess);   /* the last shape's worker: in this round's time */
    g->shape[0] = m; g->shape[1] = nn; g->shape[2] = k;
    g->rounds++;
    tb_catalog sub;
    memset(&sub, 0, sizeof sub);
    sub.v = calloc(n > 0 ? (size_t)n : 1, sizeof *sub.v);
    if (!sub.v) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    for (int i = 0; i < n; i++)
        for (size_t j = 0; j < g->cat.n; j++)
            if (!strcmp(g->cat.v[j].name, pts[idx[i]].name)) { sub.v[sub.n++] = g->cat.v[j]; break; }
    tb_shape sh = { .m = m, .n = nn, .k = k, .batch = 1, .op = TB_OP_GEMM };
    snprintf(sh.label, sizeof sh.label, "%lldx%lldx%lld", (long long)m, (long long)nn, (long long)k);
    tb_shape_list sl = { &sh, 1, 1, NULL, 0 };
    tb_store *st = NULL;
    int64_t run = 0;
    tb_phases ph;
    memset(&ph, 0, sizeof ph);
    double took = 0;
    int rc = tb_store_open(g->db, 1, 0, &st, msg, len);
    char *oj = rc == TB_OK ? round_options(g, sh.label) : NULL;
    if (rc == TB_OK) rc = tb_cli_run_begin(st, g->argc, g->argv, oj, &sub, &run, msg, len);
    cJSON_free(oj);
    if (rc == TB_OK)
        rc = tb_cli_run_measure(st, run, g->paths, &g->o, &sub, &sl, NULL, 0, 1, g->env.gpu_name,
                                &took, &ph, msg, len);
    /* the round's cost: its own wall time, and the probes once, with the first round */
    ph.s[TB_PH_PROBE] += g->open_s;
    ph.total_s = tb_now() - t0 + g->open_s;
    g->open_s = 0;
    char m2[TB_MSG_LEN];
    if (rc == TB_OK) rc = tb_store_run_set_phases(st, run, &ph, msg, len);
    if (rc == TB_OK) { g->last_run = run; g->last_ph = ph; }
    if (rc == TB_OK) rc = tb_store_run_end(st, run, "complete", msg, len);
    else if (run) tb_store_run_end(st, run, rc == TB_EINTR ? "interrupted" : "failed", m2, sizeof m2);
    if (rc == TB_OK) *cost_s += ph.total_s;
    tb_result_row *rows = NULL;
    size_t nr = 0;
    if (rc == TB_OK) rc = tb_store_results(st, run, &rows, &nr, msg, len);
    for (size_t r = 0; rc == TB_OK && r < nr; r++)
        for (int i = 0; i < n; i++)
            if (!strcmp(rows[r].v.name, pts[idx[i]].name) && rows[r].m.status == TB_STATUS_OK &&
                rows[r].m.disposition == TB_DISP_PASSED && rows[r].m.median_ms > 0) {
                ms[i] = rows[r].m.median_ms;
                clk[i] = rows[r].m.clock_mhz;
            }
    free(rows);
    if (st) tb_store_close(st);
    free(sub.v);
    return rc;
}
