/* result.c - the result record of one variant, its release, and the worker's end on a lost
 * context, in tilebench-worker's measure mode (see result.h). */
#define _GNU_SOURCE
#include "worker/result.h"
#include "common/tb.h"
#include "common/op.h"
#include "common/stats.h"
#include "common/stop.h"
#include "common/wire.h"
#include "worker/out.h"
#include "worker/trials.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The work counted for the problem the variant was offered: the op table's (common/op.h). */
static double problem_flops(const tb_problem *p)
{
    const tb_op_desc *d = tb_op_find(p->op);
    return d && d->flops ? d->flops(p) : NAN;
}

/* to the nanosecond: the host times need no 17 digits in a 2 KiB extra_json */
static double round6(double ms)
{
    return round(ms * 1e6) / 1e6;
}

/* Host time of one launch() call: the median over the kept samples (cold, stream), else over
 * the captured launches (graph), else the warm-up's; NaN when none was measured. */
static double host_launch_ms(const vstate *vs)
{
    double *v = malloc(sizeof *v * (size_t)(vs->n ? vs->n : 1));
    int k = 0;
    for (int i = 0; v && i < vs->n; i++)
        if (isfinite(vs->host[i])) v[k++] = vs->host[i];
    double r = k ? tb_stats_median(v, k) : vs->host_capture_ms > 0 ? vs->host_capture_ms
             : vs->host_est_ms > 0 ? vs->host_est_ms : NAN;
    free(v);
    return r;
}

/* Send a variant's result (and mark it sent). */
void tbw_send_result(worker *w, vstate *vs)
{
    tb_measurement *m = &vs->m;
    if (vs->n > 0 && m->status == TB_STATUS_OK) {
        tb_stats st;
        tb_stats_summarise(vs->ms, vs->n, &st);
        snprintf(m->method, sizeof m->method, "%s", vs->method);
        snprintf(m->stop_reason, sizeof m->stop_reason, "%s", vs->stop_why);
        m->n_samples = vs->n;
        m->warmup = w->warmup;
        m->median_ms = st.median;
        m->mean_ms = st.mean;
        m->stdev_ms = st.stdev;
        m->min_ms = st.min;
        m->max_ms = st.max;
        m->rse = st.rse;
        m->tflops = problem_flops(&vs->lc.prob) / (st.median * 1e-3) / 1e12;
        m->clock_mhz = tb_stats_median(vs->clk, vs->n);
        m->samples_ms = vs->ms;
        m->samples_clock_mhz = vs->clk;
    }
    int low = 0;
    double thr = w->env.sm_clock_max_mhz > 0 ? TB_LOW_CLOCK_FRAC * w->env.sm_clock_max_mhz : 0;
    for (int i = 0; i < vs->n; i++) low += thr > 0 && vs->clk[i] < thr;
    char stopspec[400] = "";
    if (vs->stop) tb_stop_spec(vs->stop, stopspec, sizeof stopspec);
    cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
    if (!x) x = cJSON_CreateObject();
    double seeds[3] = { (double)vs->seeds[0], (double)vs->seeds[1], (double)vs->seeds[2] };
    cJSON_AddItemToObject(x, "seeds", cJSON_CreateDoubleArray(seeds, 3));
    cJSON_AddNumberToObject(x, "hidden_seed", (double)vs->hseed);
    cJSON_AddNumberToObject(x, "worker_pid", (double)getpid());   /* never the counters' one */
    cJSON_AddStringToObject(x, "reference", vs->use_naive ? "naive-fp64" : "cublaslt-fp32");
    if (vs->n > 0) {
        cJSON_AddStringToObject(x, "stop", stopspec);
        cJSON_AddBoolToObject(x, "blocking_kernel", w->md.use_block);
        if (w->profiler[0]) cJSON_AddStringToObject(x, "no_blocking_because", w->profiler);
        int timeouts = 0;   /* of the kept samples (the confirming pass's are not kept) */
        for (int i = 0; i < vs->n; i++) timeouts += vs->timed_out[i];
        cJSON_AddNumberToObject(x, "block_timeouts", timeouts);
        cJSON_AddStringToObject(x, "l2", w->l2_hot ? "hot" : "cold");
        if (!vs->reps && isfinite(w->event_ms)) cJSON_AddNumberToObject(x, "event_overhead_ms", w->event_ms);
        if (isfinite(w->noop_ms)) cJSON_AddNumberToObject(x, "noop_event_ms", w->noop_ms);
        if (vs->reps) {   /* graph or stream: launches per sample, input sets rotated */
            cJSON_AddNumberToObject(x, "graph_reps", vs->reps);
            cJSON_AddNumberToObject(x, "graph_sets", vs->sets_used);
            if (vs->reps < vs->reps_wanted)   /* the host's time or the sets' memory cut it */
                cJSON_AddNumberToObject(x, "reps_wanted", vs->reps_wanted);
        }
        /* fresh inputs (docs/method.md): distinct input sets a sample reads, refreshes (one
         * before every sample, retakes and the confirming pass included), mean host time of
         * one refresh (fill, flush, synchronisation) */
        cJSON_AddNumberToObject(x, "input_sets", vs->reps ? vs->sets_used : 1);
        cJSON_AddNumberToObject(x, "input_refreshes", (double)vs->refreshes);
        if (vs->refreshes) cJSON_AddNumberToObject(x, "refresh_ms", round6(vs->refresh_ms / (double)vs->refreshes));
        /* the host's time of one launch() call, and what the blocking kernel's timeouts did */
        double host = host_launch_ms(vs);
        if (isfinite(host)) cJSON_AddNumberToObject(x, "host_launch_ms", round6(host));
        if (vs->host_cap) cJSON_AddNumberToObject(x, "host_reps_cap", vs->host_cap);
        if (vs->retakes) cJSON_AddNumberToObject(x, "retaken_samples", vs->retakes);
        if (timeouts) cJSON_AddBoolToObject(x, "host_bound", 1);
        if (vs->method_note[0]) cJSON_AddStringToObject(x, "method_note", vs->method_note);
        cJSON_AddNumberToObject(x, "estimate_ms", tbw_estimate_ms(vs));   /* auto chose from it */
        cJSON_AddNumberToObject(x, "low_clock_samples", low);
        cJSON_AddNumberToObject(x, "low_clock_mhz", thr);
        if (vs->confirmed >= 0) {
            cJSON_AddNumberToObject(x, "confirm_median_ms", vs->confirm_median);
            cJSON_AddBoolToObject(x, "confirmed_best", vs->confirmed == 1);
        }
        if (!isnan(vs->energy_j)) {
            cJSON_AddNumberToObject(x, "energy_j_per_launch", vs->energy_j);
            cJSON_AddNumberToObject(x, "power_w", vs->power_w);
            cJSON_AddNumberToObject(x, "energy_launches", vs->energy_launches);
        }
    }
    char *t = cJSON_PrintUnformatted(x);
    if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
    cJSON_free(t);
    cJSON_Delete(x);
    cJSON *o = tb_wire_measurement_to_json(m);
    cJSON_AddStringToObject(o, "type", "result");
    cJSON_AddStringToObject(o, "variant", vs->jv->name);
    tbw_out_obj(o);
    m->samples_ms = m->samples_clock_mhz = NULL;
    vs->sent = 1;
}

void tbw_release_variant(worker *w, vstate *vs, int lost)
{
    (void)w;
    if (vs->graph && !lost) cudaGraphExecDestroy(vs->graph);
    vs->graph = NULL;
    if (!lost && vs->lc.state && vs->jv->v && vs->jv->v->teardown) vs->jv->v->teardown(vs->lc.state);
    vs->lc.state = NULL;
    if (vs->lc.ws && !lost) cudaFree(vs->lc.ws);
    vs->lc.ws = NULL;
    if (vs->stop) tb_stop_free(vs->stop);
    vs->stop = NULL;
    free(vs->ms); free(vs->wall); free(vs->clk); free(vs->host); free(vs->timed_out);
    vs->ms = vs->wall = vs->clk = vs->host = NULL;
    vs->timed_out = NULL;
}

/* End the worker after a lost context: the variant's result first, then exit. */
void tbw_lost_exit(worker *w, vstate *vs)
{
    tbw_send_result(w, vs);
    tbw_out_simple("lost", "error", vs->m.reason);
    _exit(3);
}
