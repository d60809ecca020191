/* show.c - the results table (see show.h): a block per problem (a GEMM's MxNxK line as ever,
 * an attention problem's token, layout, types and scale), its variants ranked. */
#include "report/show.h"
#include "common/phases.h"
#include "common/peak.h"
#include "common/problem.h"
#include "report/rank.h"
#include "report/roofline.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double extra_num(const char *extra, const char *key, double dflt)
{
    cJSON *x = cJSON_Parse(extra && extra[0] ? extra : "{}");
    const cJSON *v = x ? cJSON_GetObjectItemCaseSensitive(x, key) : NULL;
    double r = cJSON_IsNumber(v) ? v->valuedouble : cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : dflt;
    cJSON_Delete(x);
    return r;
}

int tb_show_host_bound(const tb_result_row *r)
{
    return extra_num(r->m.extra_json, "host_bound", 0) != 0;
}

/* ran, passed and has a figure (ranked or not) */
static int timed(const tb_result_row *r)
{
    return r->m.status == TB_STATUS_OK && r->m.disposition == TB_DISP_PASSED && r->m.median_ms > 0;
}

int tb_show_ranked(const tb_result_row *r)
{
    return timed(r) && !tb_show_host_bound(r);
}

/* ranked first (by median), then the host-bound figures, then the rest; by name within */
static int rank_class(const tb_result_row *r)
{
    return tb_show_ranked(r) ? 0 : timed(r) ? 1 : 2;
}

int tb_show_cmp_rank(const void *a, const void *b)
{
    const tb_result_row *x = *(const tb_result_row *const *)a, *y = *(const tb_result_row *const *)b;
    int cx = rank_class(x), cy = rank_class(y);
    if (cx != cy) return cx - cy;
    if (cx == 0) return (x->m.median_ms > y->m.median_ms) - (x->m.median_ms < y->m.median_ms);
    return strcmp(x->v.name, y->v.name);
}

static const char *opt_str(const cJSON *o, const char *k, const char *d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : d;
}

static double opt_num(const cJSON *o, const char *k, double d)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : d;
}

/* The command that measures this (variant, shape) again, and the ncu line that profiles
 * exactly its timed launches (NVTX: tb / variant / shape / timed). */
static void reproduce(FILE *out, const tb_result_row *r, const cJSON *opts)
{
    const tb_problem_info *p = &r->p;
    char shape[128], common[2048];
    if (tb_problem_info_is_attention(p)) {
        /* its token, and the layout and the scale where they are not the sweep's defaults */
        tb_problem_info_text(p, shape, sizeof shape);
        char extra[96] = "";
        int x = 0;
        if (!strcmp(p->layouts, "bshd")) x = snprintf(extra, sizeof extra, " --attn-layout bshd");
        if (p->head_dim > 0 && fabs(p->softmax_scale * sqrt((double)p->head_dim) - 1.0) > 1e-12)
            snprintf(extra + x, sizeof extra - (size_t)x, " --softmax-scale %.17g", p->softmax_scale);
        snprintf(common, sizeof common, "--variants '%s' --filter '%s' --shapes %s%s --seed %.0f "
                 "--init %s", r->v.file, r->v.name, shape, extra, opt_num(opts, "seed", 20261123),
                 opt_str(opts, "init", "uniform"));
    } else {
        int n = snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)p->m, (long long)p->n,
                         (long long)p->k);
        if (p->batch > 1) snprintf(shape + n, sizeof shape - (size_t)n, "x%lld", (long long)p->batch);
        snprintf(common, sizeof common, "--variants '%s' --filter '%s' --shapes %s --layout %s "
                 "--pad %lld --alpha %g --beta %g --seed %.0f --init %s", r->v.file, r->v.name, shape,
                 p->layouts, (long long)((p->layouts[0] == 't' ? p->lda - p->k : p->lda - p->m)),
                 p->alpha, p->beta, opt_num(opts, "seed", 20261123), opt_str(opts, "init", "uniform"));
    }
    char pace[48] = "";
    if (opt_num(opts, "pace", 0) > 0) snprintf(pace, sizeof pace, " --pace %g", opt_num(opts, "pace", 0));
    fprintf(out, "        re-measure: tilebench sweep %s --method %s --stop '%s'%s --db remeasure.db\n",
            common, r->m.method[0] ? r->m.method : "auto", opt_str(opts, "stop", "stdrel"), pace);
    char nvtx[512];   /* the worker's names (step.c): a GEMM's m x n x k, an attention token */
    if (tb_problem_info_is_attention(p))
        snprintf(nvtx, sizeof nvtx, "tb/%s/%s/timed/", r->v.name, shape);
    else
        snprintf(nvtx, sizeof nvtx, "tb/%s/%lldx%lldx%lld/timed/", r->v.name, (long long)p->m,
                 (long long)p->n, (long long)p->k);
    fprintf(out, "        profile:    ncu --nvtx --nvtx-include '%s' --clock-control none "
            "--cache-control all --metrics gpu__time_duration.sum tilebench sweep %s --method cold "
            "--profile --stop fixed:samples=5 --max-time 600 --timeout 600 --db profile.db\n", nvtx, common);
}

/* --detail: the host's side of the figure and what the inputs were (docs/method.md, "Host
 * time of a launch", "Fresh inputs for every timed launch"); nothing for a row stored before
 * these were recorded. */
static void host_detail(FILE *out, const tb_result_row *r)
{
    const char *x = r->m.extra_json;
    double host = extra_num(x, "host_launch_ms", NAN), reps = extra_num(x, "graph_reps", 0),
           wanted = extra_num(x, "reps_wanted", 0), cap = extra_num(x, "host_reps_cap", 0),
           sets = extra_num(x, "input_sets", 0), refreshes = extra_num(x, "input_refreshes", 0),
           each = extra_num(x, "refresh_ms", NAN);
    if (isfinite(host)) {
        fprintf(out, "        host: launch() takes %.4f ms on the host (median of a call)", host);
        if (reps > 0) fprintf(out, "; %.0f launches a sample", reps);
        if (wanted > reps && cap > 0 && cap <= reps)
            fprintf(out, " (cut from %.0f by the host's time: queueing a sample's launches takes at "
                    "most a quarter of the blocking kernel's timeout)", wanted);
        else if (wanted > reps)
            fprintf(out, " (%.0f wanted: no more input sets fit in memory)", wanted);
        fprintf(out, "; blocking-kernel timeouts: %.0f in the kept samples, %.0f samples retaken%s\n",
                extra_num(x, "block_timeouts", 0), extra_num(x, "retaken_samples", 0),
                tb_show_host_bound(r) ? " (HOST-BOUND: not ranked)" : "");
    }
    if (sets > 0)
        fprintf(out, "        inputs: %.0f distinct set%s a sample, new values before every "
                "sample: %.0f refreshes (%.3f ms each, on the host)\n", sets, sets == 1 ? "" : "s",
                refreshes, each);
}

/* The spread of this measurement's median with those of the same library, variant, problem and
 * GPU model in the file's other complete runs (issue 28: an interval covers one run's samples;
 * history shows what a rerun delivered). 0 with *runs set when there are at least two others;
 * -1 when fewer (nothing to say) or the store failed. */
#define HISTORY_MAX 50
static int history(tb_store *s, const tb_result_row *r, const char *gpu, int64_t run_id,
                   double *spread, double *lo_ms, double *hi_ms, double *clk_spread, size_t *runs)
{
    double ms[HISTORY_MAX + 1], clk[HISTORY_MAX + 1];
    size_t n = 0;
    char msg[TB_MSG_LEN];
    if (!gpu[0] || tb_store_history(s, r->v.sha256, r->v.name, r->p.id, gpu, run_id, ms, clk,
                                    HISTORY_MAX, &n, msg, sizeof msg) != TB_OK || n < 2)
        return -1;
    ms[n] = r->m.median_ms;
    clk[n] = r->m.clock_mhz;
    double lo = ms[n], hi = ms[n], clo = INFINITY, chi = -INFINITY;
    for (size_t i = 0; i <= n; i++) {
        if (ms[i] < lo) lo = ms[i];
        if (ms[i] > hi) hi = ms[i];
        if (isfinite(clk[i]) && clk[i] > 0) { clo = fmin(clo, clk[i]); chi = fmax(chi, clk[i]); }
    }
    *spread = hi / lo - 1;
    *lo_ms = lo;
    *hi_ms = hi;
    *clk_spread = isfinite(clo) && clo > 0 ? chi / clo - 1 : NAN;
    *runs = n;
    return 0;
}

static int has_metric(const tb_metric *m, size_t nm, const char *name)
{
    for (size_t i = 0; i < nm; i++)
        if (strcmp(m[i].name, name) == 0) return 1;
    return 0;
}

/* Under a row's metrics: what its DRAM counters give (roofline.c). Nothing for a row whose
 * metric set had no DRAM counters. */
static void show_derived(FILE *out, const tb_result_row *r, const tb_metric *mt, size_t nm,
                         const tb_calibration *cal)
{
    if (!has_metric(mt, nm, TB_ROOFLINE_READ) && !has_metric(mt, nm, TB_ROOFLINE_WRITE)) return;
    tb_roofline_in in;
    tb_roofline rf;
    char why[TB_MSG_LEN];
    tb_roofline_inputs(r, mt, nm, cal, &in);
    if (tb_roofline_compute(&in, &rf, why, sizeof why) != TB_OK) {
        fprintf(out, "        derived: none (%s)\n", why);
        return;
    }
    fprintf(out, "        derived: arithmetic intensity %.1f FLOP/byte (%.1f MB of DRAM traffic)",
            rf.intensity, rf.bytes / 1e6);
    if (isfinite(rf.dram_gbps))
        fprintf(out, ", achieved DRAM bandwidth %.1f GB/s at the median time\n", rf.dram_gbps);
    else
        fprintf(out, "; not timed: no bandwidth\n");
    if (isfinite(rf.min_intensity) && tb_problem_info_is_attention(&r->p))
        fprintf(out, "        compulsory: %.1f MB (Q, K, V read once, O and LSE written once), so at "
                "most %.1f FLOP/byte%s%s\n", rf.min_bytes / 1e6, rf.min_intensity,
                rf.min_bound[0] ? ": " : "", !strcmp(rf.min_bound, "memory") ? "memory-bound even then"
                : rf.min_bound[0] ? "compute-bound when each tensor crosses DRAM once" : "");
    else if (isfinite(rf.min_intensity))
        fprintf(out, "        compulsory: %.1f MB (A %d, B %d, D %d bytes an element), so at most %.1f "
                "FLOP/byte%s%s\n", rf.min_bytes / 1e6, tb_dtypes_elem_bytes(r->p.dtypes, 0),
                tb_dtypes_elem_bytes(r->p.dtypes, 1), tb_dtypes_elem_bytes(r->p.dtypes, 3),
                rf.min_intensity, rf.min_bound[0] ? ": " : "",
                !strcmp(rf.min_bound, "memory") ? "memory-bound even then"
                : rf.min_bound[0] ? "compute-bound when A, B and D cross DRAM once" : "");
    if (rf.have_roof)
        fprintf(out, "        roofline position: %.1f%% of the attainable %.1f TFLOP/s%s (%.1f achieved), "
                "%s-bound (intensity %.1f %s the ridge at %.1f FLOP/byte); ceilings measured by "
                "tilebench doctor --calibrate on %.10s, not datasheet numbers\n",
                100.0 * rf.position, rf.attainable_tflops, in.fp8 ? " under the FP8 ceiling" : "",
                rf.tflops, rf.bound, rf.intensity,
                rf.intensity < rf.ridge ? "below" : "at or above", rf.ridge, cal->created_at);
    else if (!cal)
        fprintf(out, "        roofline position: no calibration for this GPU: run tilebench doctor "
                "--calibrate\n");
    else if (in.fp8 && !(cal->fp8_tflops > 0))
        fprintf(out, "        roofline position: none: calibration %lld has no FP8 tensor ceiling "
                "(made before FP8 was calibrated): run tilebench doctor --calibrate again\n",
                (long long)cal->id);
    else
        fprintf(out, "        roofline position: none (not timed)\n");
}

int tb_show_run(tb_store *s, int64_t run_id, FILE *out, int verbose, int metrics, char *msg,
                size_t len)
{
    tb_run_info *run = calloc(1, sizeof *run);
    tb_environment env;
    int have_env = 0;
    int rc = tb_store_run_get(s, run_id, run, msg, len);
    if (rc) { free(run); return rc; }
    rc = tb_store_find_environment(s, run_id, &env, &have_env, msg, len);
    if (rc) { free(run); return rc; }
    tb_result_row *rows = NULL;
    size_t n = 0;
    rc = tb_store_results(s, run_id, &rows, &n, msg, len);
    if (rc) { free(run); return rc; }
    tb_calibration cal;
    int have_cal = 0;
    if (metrics && have_env &&
        (rc = tb_store_latest_calibration(s, env.gpu_uuid, &cal, &have_cal, msg, len)) != TB_OK) {
        free(rows);
        free(run);
        return rc;
    }
    cJSON *opts = cJSON_Parse(run->options_json);
    fprintf(out, "run %lld  %s  status %s\n", (long long)run->id, run->started_at, run->status);
    tb_phases ph;
    char pm[128], line[512];
    if (run->phases_json[0] && tb_phases_from_json(run->phases_json, &ph, pm, sizeof pm) == TB_OK)
        fprintf(out, "time: %s\n", tb_phases_format(&ph, line, sizeof line));
    if (have_env)
        fprintf(out, "gpu %s (sm_%d%d, %d SMs, L2 %lld MB)  driver %s  CUDA %d.%d  cuBLASLt %d\n",
                env.gpu_name, env.cc_major, env.cc_minor, env.sm_count,
                (long long)(env.l2_bytes >> 20), env.driver_version,
                env.cuda_runtime_version / 1000, env.cuda_runtime_version % 1000 / 10,
                env.cublas_version);
    double fpc = have_env ? tb_peak_flop_per_clk_sm(env.cc_major, env.cc_minor) : 0;
    fprintf(out, "method: per variant 'cold' (L2 flushed by reading, one launch), 'stream' or 'graph' "
                 "(launches each on inputs of their own, queued on the stream or in a CUDA graph), "
                 "CUDA events behind a blocking kernel, new inputs before every sample, variants "
                 "interleaved; median. 'vs best' is median / best median with a 95%% bootstrap "
                 "interval: 'tied' when it contains 1. %% of peak at each measurement's median SM "
                 "clock. 'host ms': the host's time of one launch() call (median); HOST-BOUND: "
                 "the blocking kernel timed out while launches were still being queued, even after "
                 "retakes, so the figure is the host's pace: shown, never ranked. "
                 "Intervals and rse cover this run's samples only: a separate run on the same card "
                 "can differ by more (the SM clock moves between runs; docs/method.md), so compare "
                 "runs with 'tilebench compare --control', never by their raw figures.\n");
    if (metrics && have_cal) {
        char clk[32] = "";
        if (isfinite(cal.sm_clock_mhz)) snprintf(clk, sizeof clk, " at %.0f MHz", cal.sm_clock_mhz);
        fprintf(out, "roofline ceilings: DRAM %.1f GB/s (device-to-device copy), tensor %.1f TFLOP/s "
                "(cuBLASLt BF16 %s%s), measured on this GPU by tilebench doctor --calibrate at %s "
                "(calibration %lld), not datasheet numbers", cal.dram_gbps, cal.gemm_tflops,
                cal.gemm_shape, clk, cal.created_at, (long long)cal.id);
        if (cal.fp8_tflops > 0) {
            clk[0] = 0;
            if (cal.fp8_sm_clock_mhz > 0) snprintf(clk, sizeof clk, " at %.0f MHz", cal.fp8_sm_clock_mhz);
            fprintf(out, "; FP8 tensor %.1f TFLOP/s (cuBLASLt E4M3 %s%s), the ceiling of e4m3 problems",
                    cal.fp8_tflops, cal.fp8_shape, clk);
        }
        fputc('\n', out);
    }
    const tb_result_row **order = malloc(sizeof *order * (n ? n : 1));
    int fail = TB_OK;   /* a read that failed: the table stops there, and the caller fails */
    for (size_t i = 0; i < n && fail == TB_OK;) {
        size_t j = i;
        while (j < n && rows[j].p.id == rows[i].p.id) j++;
        const tb_problem_info *p = &rows[i].p;
        if (tb_problem_info_is_attention(p)) {   /* its token, layout, types and scale */
            char shape[128];
            tb_problem_info_text(p, shape, sizeof shape);
            fprintf(out, "\nshape %s", shape);
            if (p->label[0]) fprintf(out, "  %s", p->label);
            fprintf(out, "  (attention, %s, %s, scale %g)\n", p->layouts, p->dtypes, p->softmax_scale);
        } else {
            fprintf(out, "\nshape %lldx%lldx%lld", (long long)p->m, (long long)p->n, (long long)p->k);
            if (p->batch > 1) fprintf(out, "x%lld", (long long)p->batch);
            if (p->label[0]) fprintf(out, "  %s", p->label);
            fprintf(out, "  (%s, %s", p->layouts, p->dtypes);
            if (p->alpha != 1.0 || p->beta != 0.0) fprintf(out, ", alpha %g beta %g", p->alpha, p->beta);
            if (p->scale_a > 0 || p->scale_b > 0)
                fprintf(out, ", scales %g %g", p->scale_a, p->scale_b);
            fprintf(out, ")\n");
        }
        double ref_ms = NAN;
        for (size_t k = i; k < j; k++)
            if (strcmp(rows[k].v.name, "cublaslt") == 0 && tb_show_ranked(&rows[k])) ref_ms = rows[k].m.median_ms;
        for (size_t k = i; k < j; k++) order[k - i] = &rows[k];
        qsort(order, j - i, sizeof *order, tb_show_cmp_rank);
        /* ties: bootstrap the median ratio against the best */
        int nr = 0;
        while ((size_t)nr < j - i && tb_show_ranked(order[nr])) nr++;
        double *ratio = calloc((size_t)nr + 1, sizeof *ratio), *lo = calloc((size_t)nr + 1, sizeof *lo),
               *hi = calloc((size_t)nr + 1, sizeof *hi);
        int *tied = calloc((size_t)nr + 1, sizeof *tied), best = 0, have_ci = 0;
        double **smp = calloc((size_t)nr + 1, sizeof *smp);
        int *ns = calloc((size_t)nr + 1, sizeof *ns);
        int ok = nr > 0;
        /* a ranked measurement without its samples is a damaged file, never a quiet table
         * without intervals (where ties would read as wins) */
        for (int k = 0; k < nr && ok; k++) {
            size_t cnt = 0;
            double *clk = NULL;
            fail = tb_store_measurement_samples(s, &order[k]->m, &smp[k], &clk, &cnt, msg, len);
            if (fail) ok = 0;
            ns[k] = (int)cnt;
            free(clk);
        }
        if (ok && nr >= 1 &&
            tb_rank_bootstrap((const double *const *)smp, ns, nr, 0.95, 2000,
                              (uint64_t)p->id * 7919u + (uint64_t)run_id, ratio, lo, hi, tied,
                              &best, msg, len) == TB_OK)
            have_ci = 1;
        int nw = 44;
        for (size_t k = i; k < j; k++)
            if ((int)strlen(rows[k].v.name) > nw) nw = (int)strlen(rows[k].v.name);
        fprintf(out, "  %4s  %-*s %9s %10s %6s %22s %9s %16s %9s  %s\n", "rank", nw, "variant",
                "TFLOP/s", "median ms", "rse", "vs best [95% CI]", "%cublaslt", "%peak@clock",
                "host ms", "status");
        int rank = 0;
        double worst = 0;
        const char *worst_name = NULL;
        for (size_t k = 0; k < j - i; k++) {
            const tb_result_row *r = order[k];
            char rk[8] = "-", tf[16] = "-", md[16] = "-", rse[16] = "-", pc[16] = "-", pk[32] = "-",
                 vb[40] = "-", hm[16] = "-";
            double host = extra_num(r->m.extra_json, "host_launch_ms", NAN);
            if (isfinite(host)) snprintf(hm, sizeof hm, "%.4f", host);
            if (timed(r) && !tb_show_ranked(r)) {   /* host-bound: the figure, never a rank */
                snprintf(tf, sizeof tf, "%.1f", r->m.tflops);
                snprintf(md, sizeof md, "%.4f", r->m.median_ms);
                snprintf(rse, sizeof rse, "%.1f%%", r->m.rse * 100);
            }
            if (tb_show_ranked(r)) {
                ++rank;
                if (have_ci && tied[k] && k > 0) snprintf(rk, sizeof rk, "=1");
                else snprintf(rk, sizeof rk, "%d", rank);
                snprintf(tf, sizeof tf, "%.1f", r->m.tflops);
                snprintf(md, sizeof md, "%.4f", r->m.median_ms);
                snprintf(rse, sizeof rse, "%.1f%%", r->m.rse * 100);
                if (have_ci) {
                    if (k == 0) snprintf(vb, sizeof vb, "best");
                    else snprintf(vb, sizeof vb, "%.3f [%.3f,%.3f]%s", ratio[k], lo[k], hi[k],
                                  tied[k] ? " tied" : "");
                }
                if (!isnan(ref_ms)) snprintf(pc, sizeof pc, "%.1f%%", 100.0 * ref_ms / r->m.median_ms);
                /* at the problem's own peak: FP8 is twice BF16 on sm_90 (common/peak.h) */
                const double fpc_p = have_env ? tb_peak_flop_per_clk_sm_dtypes(env.cc_major,
                                                    env.cc_minor, r->p.dtypes) : 0;
                if (fpc > 0 && fpc_p > 0 && r->m.clock_mhz > 0) {
                    double peak = fpc_p * env.sm_count * r->m.clock_mhz * 1e6 / 1e12;
                    snprintf(pk, sizeof pk, "%.1f%% @%.0fMHz", 100.0 * r->m.tflops / peak, r->m.clock_mhz);
                }
            }
            char st[TB_TEXT_LEN + 96];
            if (r->m.status != TB_STATUS_OK)
                snprintf(st, sizeof st, "%s: %s", tb_status_name(r->m.status), r->m.reason);
            else if (r->m.disposition == TB_DISP_INCORRECT)
                snprintf(st, sizeof st, "invalid (%s): %s", r->m.rule, r->m.reason);
            else {
                double conf = extra_num(r->m.extra_json, "confirmed_best", -1);
                double low = extra_num(r->m.extra_json, "low_clock_samples", 0);
                char hb[96] = "";
                if (tb_show_host_bound(r))
                    snprintf(hb, sizeof hb, " HOST-BOUND: the blocking kernel timed out in %.0f of "
                             "%lld samples", extra_num(r->m.extra_json, "block_timeouts", 0),
                             (long long)r->m.n_samples);
                snprintf(st, sizeof st, "ok/%s %s%s%s%s", tb_disposition_name(r->m.disposition),
                         r->m.method, k == 0 && conf == 1 && tb_show_ranked(r) ? " confirmed" :
                         k == 0 && conf == 0 && tb_show_ranked(r) ?
                         " NOT confirmed by the second pass" : "",
                         low > 0 ? " low-clock samples" : "", hb);
            }
            if (!verbose && strlen(st) > 90) strcpy(st + 87, "...");
            fprintf(out, "  %4s  %-*s %9s %10s %6s %22s %9s %16s %9s  %s\n", rk, nw, r->v.name, tf, md,
                    rse, vb, pc, pk, hm, st);
            if (metrics) {
                tb_metric *mt = NULL;
                size_t nm = 0;
                if ((fail = tb_store_metrics(s, r->m.id, &mt, &nm, msg, len)) != TB_OK) break;
                for (size_t q = 0; q < nm; q++) {
                        if (mt[q].available)
                            fprintf(out, "        %-64s %16.6g %s%s%s\n", mt[q].name, mt[q].value,
                                    mt[q].unit, mt[q].reason[0] ? "  " : "", mt[q].reason);
                        else
                            fprintf(out, "        %-64s %16s  (%s)\n", mt[q].name, "unavailable",
                                    mt[q].reason);
                    }
                show_derived(out, r, mt, nm, have_cal ? &cal : NULL);
                free(mt);
            }
            double hs, hlo, hhi, hclk;
            size_t hn;
            int have_hist = tb_show_ranked(r) && have_env &&
                            history(s, r, env.gpu_name, run_id, &hs, &hlo, &hhi, &hclk, &hn) == 0;
            if (have_hist && hs > worst) { worst = hs; worst_name = r->v.name; }
            if (verbose) {
                if (r->m.describe[0]) fprintf(out, "        setup chose: %s\n", r->m.describe);
                if (timed(r)) host_detail(out, r);
                if (have_hist) {
                    fprintf(out, "        history: with %zu earlier complete runs of this file on %s the "
                            "median ranged %.5g-%.5g ms (spread %.2f %%", hn, env.gpu_name, hlo, hhi, hs * 100);
                    if (isfinite(hclk)) fprintf(out, "; their SM clocks spread %.2f %%", hclk * 100);
                    fprintf(out, "): what a rerun delivered, beside this run's interval\n");
                }
                if (r->m.extra_json[0] && strcmp(r->m.extra_json, "{}"))
                    fprintf(out, "        extra: %s\n", r->m.extra_json);
                fprintf(out, "        file: %s  sha256 %s\n", r->v.file, r->v.sha256);
                if (r->m.status == TB_STATUS_OK) reproduce(out, r, opts);
            }
        }
        if (worst_name && worst > 0.005)
            fprintf(out, "  history: in this file's earlier runs on this GPU model the same libraries' "
                    "medians on this shape moved by up to %.1f %% (%s); the intervals above cover this "
                    "run's samples only (--detail)\n", worst * 100, worst_name);
        for (int k = 0; k < nr; k++) free(smp[k]);
        free(smp); free(ns); free(ratio); free(lo); free(hi); free(tied);
        i = j;
    }
    if (n == 0) fprintf(out, "\n(no measurements)\n");
    cJSON_Delete(opts);
    free(order);
    free(rows);
    free(run);
    return fail;
}
