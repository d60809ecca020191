/* show.c - the results table (see show.h). */
#include "show.h"
#include "tb.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

double tb_peak_flop_per_clk_sm(int major, int minor)
{
    if (major == 9 && minor == 0) return 4096;     /* H100/H200: 989 TFLOP/s @ 1830 MHz, 132 SMs */
    if (major == 8 && minor == 0) return 2048;     /* A100: 312 TFLOP/s @ 1410 MHz, 108 SMs */
    if (major == 8 && (minor == 9 || minor == 7)) return 1024;
    if (major == 8 && minor == 6) return 512;
    return 0;
}

static int ranked(const tb_result_row *r)
{
    return r->m.status == TB_STATUS_OK && r->m.disposition == TB_DISP_PASSED && r->m.median_ms > 0;
}

static int cmp_rank(const void *a, const void *b)
{
    const tb_result_row *x = *(const tb_result_row *const *)a, *y = *(const tb_result_row *const *)b;
    int rx = ranked(x), ry = ranked(y);
    if (rx != ry) return ry - rx;
    if (rx) return (x->m.median_ms > y->m.median_ms) - (x->m.median_ms < y->m.median_ms);
    return strcmp(x->v.name, y->v.name);
}

int tb_show_run(tb_store *s, int64_t run_id, FILE *out, int verbose, char *msg, size_t len)
{
    tb_run_info run;
    tb_environment env;
    int have_env = 0;
    int rc = tb_store_run_get(s, run_id, &run, msg, len);
    if (rc) return rc;
    rc = tb_store_find_environment(s, run_id, &env, &have_env, msg, len);
    if (rc) return rc;
    tb_result_row *rows = NULL;
    size_t n = 0;
    rc = tb_store_results(s, run_id, &rows, &n, msg, len);
    if (rc) return rc;
    fprintf(out, "run %lld  %s  status %s\n", (long long)run.id, run.started_at, run.status);
    if (have_env)
        fprintf(out, "gpu %s (sm_%d%d, %d SMs, L2 %lld MB)  driver %s  CUDA %d.%d  cuBLASLt %d\n",
                env.gpu_name, env.cc_major, env.cc_minor, env.sm_count,
                (long long)(env.l2_bytes >> 20), env.driver_version,
                env.cuda_runtime_version / 1000, env.cuda_runtime_version % 1000 / 10,
                env.cublas_version);
    double fpc = have_env ? tb_peak_flop_per_clk_sm(env.cc_major, env.cc_minor) : 0;
    fprintf(out, "method: cold_events (L2 flushed by reading before each sample, CUDA events, "
                 "median); %% of peak at the SM clock measured after the samples\n");
    const tb_result_row **order = malloc(sizeof *order * (n ? n : 1));
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && rows[j].p.id == rows[i].p.id) j++;
        const tb_problem_info *p = &rows[i].p;
        fprintf(out, "\nshape %lldx%lldx%lld", (long long)p->m, (long long)p->n, (long long)p->k);
        if (p->batch > 1) fprintf(out, "x%lld", (long long)p->batch);
        if (p->label[0]) fprintf(out, "  %s", p->label);
        fprintf(out, "  (%s, %s", p->layouts, p->dtypes);
        if (p->alpha != 1.0 || p->beta != 0.0) fprintf(out, ", alpha %g beta %g", p->alpha, p->beta);
        fprintf(out, ")\n");
        double ref_ms = NAN;
        for (size_t k = i; k < j; k++)
            if (strcmp(rows[k].v.name, "cublaslt") == 0 && ranked(&rows[k])) ref_ms = rows[k].m.median_ms;
        for (size_t k = i; k < j; k++) order[k - i] = &rows[k];
        qsort(order, j - i, sizeof *order, cmp_rank);
        fprintf(out, "  %4s  %-44s %9s %10s %6s %9s %16s  %s\n", "rank", "variant", "TFLOP/s",
                "median ms", "rse", "%cublaslt", "%peak@clock", "status");
        int rank = 0;
        for (size_t k = 0; k < j - i; k++) {
            const tb_result_row *r = order[k];
            char rk[8] = "-", tf[16] = "-", md[16] = "-", rse[16] = "-", pc[16] = "-", pk[32] = "-";
            if (ranked(r)) {
                snprintf(rk, sizeof rk, "%d", ++rank);
                snprintf(tf, sizeof tf, "%.1f", r->m.tflops);
                snprintf(md, sizeof md, "%.4f", r->m.median_ms);
                snprintf(rse, sizeof rse, "%.1f%%", r->m.rse * 100);
                if (!isnan(ref_ms)) snprintf(pc, sizeof pc, "%.1f%%", 100.0 * ref_ms / r->m.median_ms);
                if (fpc > 0 && r->m.clock_mhz > 0) {
                    double peak = fpc * env.sm_count * r->m.clock_mhz * 1e6 / 1e12;
                    snprintf(pk, sizeof pk, "%.1f%% @%.0fMHz", 100.0 * r->m.tflops / peak, r->m.clock_mhz);
                }
            }
            char st[TB_TEXT_LEN + 64];
            if (r->m.status != TB_STATUS_OK)
                snprintf(st, sizeof st, "%s: %s", tb_status_name(r->m.status), r->m.reason);
            else if (r->m.disposition == TB_DISP_INCORRECT)
                snprintf(st, sizeof st, "invalid (%s): %s", r->m.rule, r->m.reason);
            else
                snprintf(st, sizeof st, "ok/%s", tb_disposition_name(r->m.disposition));
            if (!verbose && strlen(st) > 90) strcpy(st + 87, "...");
            fprintf(out, "  %4s  %-44s %9s %10s %6s %9s %16s  %s\n", rk, r->v.name, tf, md, rse,
                    pc, pk, st);
            if (verbose && r->m.describe[0]) fprintf(out, "        %s\n", r->m.describe);
        }
        i = j;
    }
    if (n == 0) fprintf(out, "\n(no measurements)\n");
    free(order);
    free(rows);
    return TB_OK;
}
