/* after_timing.c - phase C of tilebench-worker's measure mode: the checks after timing (the
 * inputs, hidden work), the energy measurement (energy.c), the trial after timing (see
 * after_timing.h). */
#define _GNU_SOURCE
#include "worker/after_timing.h"
#include "common/tb.h"
#include "common/stats.h"
#include "worker/discipline.h"
#include "worker/energy.h"
#include "worker/op_worker.h"
#include "worker/step.h"
#include "worker/timing.h"
#include "worker/trials.h"
#include "worker/validate.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hidden-work rule (docs/method.md). */
#define TB_HIDDEN_MIN_MS 0.015
#define TB_HIDDEN_FRAC 0.25
/* A flag is confirmed before it stands: the recipe's baseline measured again, then this many
 * samples more, and the rule applied to all the samples against the new baseline. The median
 * gap of a handful of samples carries the host's scheduling jitter (a 16 us median gap over 5
 * samples, 0.1 us over 26, for the same kernel on the H100), and the baseline, measured once
 * when the job's timing starts, carries the state of the GPU then: 13-32 us for the cold
 * recipe between the workers of one sweep (docs/method.md, "Hidden work"). Work hidden on
 * another stream shows in every sample, against any baseline. */
#define TB_HIDDEN_CONFIRM_N 20

/* median(wall - event x reps) - base, per launch. */
static double hidden_ms(const double *wall, const double *ms, int n, int reps, double base)
{
    double *gap = malloc(sizeof(double) * (size_t)n);
    if (!gap) return NAN;   /* no verdict; the caller keeps the one it had */
    for (int i = 0; i < n; i++) gap[i] = wall[i] - ms[i] * reps;
    double h = (tb_stats_median(gap, n) - base) / reps;
    free(gap);
    return h;
}

static int flags_hidden(double hidden, double med)
{
    return hidden > TB_HIDDEN_MIN_MS && hidden > TB_HIDDEN_FRAC * med;
}

/* The confirmation: TB_HIDDEN_CONFIRM_N samples more, by the same method, kept apart from the
 * timing (the figures stay those of the stop rule), and the rule applied to the kept samples
 * and these together. They are taken by tbw_take_sample, so the measurement's counts of input
 * refreshes and retaken samples include them. Returns 0, or 1/2 (state.h) when a sample
 * failed. */
static int confirm_hidden(worker *w, vstate *vs, int reps, double base, double *hidden, int *n_out)
{
    int n = vs->n + TB_HIDDEN_CONFIRM_N;
    double *wall = malloc(sizeof(double) * (size_t)n), *ms = malloc(sizeof(double) * (size_t)n);
    if (!wall || !ms) { free(wall); free(ms); return 0; }   /* keep the first verdict */
    memcpy(wall, vs->wall, sizeof(double) * (size_t)vs->n);
    memcpy(ms, vs->ms, sizeof(double) * (size_t)vs->n);
    int r = 0, have = vs->n;
    for (; have < n && !r; have++) {
        tb_sample smp;
        r = tbw_take_sample(w, vs, &smp);
        wall[have] = smp.wall_ms;
        ms[have] = smp.ms;
    }
    const double h = r ? NAN : hidden_ms(wall, ms, n, reps, base);
    if (!r && isfinite(h)) {
        *hidden = h;
        *n_out = TB_HIDDEN_CONFIRM_N;
    }
    free(wall);
    free(ms);
    return r;
}

/* Phase C for one timed variant: inputs, hidden work, energy, the trial after timing. */
int tbw_check_after_timing(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    tb_measurement *m = &vs->m;
    tb_val_result vr;
    double launch_ms;
    /* inputs: a few launches of this variant alone between two checksums */
    unsigned long long before[3], after[3];
    if (tb_validate_checksums(&w->vb, w->s, before, msg, sizeof msg) == TB_OK) {
        int lrc = 0;
        for (int i = 0; i < 3 && !lrc; i++) lrc = tbw_do_launch(&vs->lc, w->s);
        if (cudaDeviceSynchronize() != cudaSuccess) return tbw_cuda_crash(m, "kernel failed", "after timing") ? 2 : 1;
        if (tb_validate_checksums(&w->vb, w->s, after, msg, sizeof msg) == TB_OK)
            for (int k = 0; k < 3; k++)
                if (after[k] != before[k]) {
                    snprintf(why, sizeof why, "modified its input %s on a repeated launch",
                             k == 0 ? "A" : k == 1 ? "B" : "C");
                    tbw_flag(m, "inputs", why);
                    return 1;
                }
    }
    /* hidden work: (wall - event) beyond the recipe's own cost */
    if (vs->n > 0) {
        int reps = vs->reps ? vs->reps : 1;
        double base = vs->reps ? w->base_graph : w->base_cold;   /* neither flushes */
        double med = tb_stats_median(vs->ms, vs->n);
        double hidden = hidden_ms(vs->wall, vs->ms, vs->n, reps, base);
        if (!isfinite(hidden)) hidden = 0;   /* out of memory: no gap to judge (as before) */
        int confirmed_n = 0;
        double base2 = NAN;   /* the baseline measured again for the confirmation */
        if (flags_hidden(hidden, med)) {
            if (tb_measure_gap_baseline(&w->md, vs->reps ? 0 : !w->l2_hot, &base2, NULL, msg, sizeof msg) != TB_OK ||
                !isfinite(base2))
                base2 = NAN;   /* not measured: the confirmation keeps the first baseline */
            int r = confirm_hidden(w, vs, reps, isfinite(base2) ? base2 : base, &hidden, &confirmed_n);
            if (r) return r;
        }
        cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
        if (x) {
            cJSON_AddNumberToObject(x, "hidden_work_ms", hidden);
            cJSON_AddNumberToObject(x, "gap_baseline_ms", base);
            if (confirmed_n) cJSON_AddNumberToObject(x, "hidden_work_confirm_samples", confirmed_n);
            if (confirmed_n && isfinite(base2)) cJSON_AddNumberToObject(x, "gap_baseline_confirm_ms", base2);
            char *t = cJSON_PrintUnformatted(x);
            if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
            cJSON_free(t);
            cJSON_Delete(x);
        }
        if (flags_hidden(hidden, med)) {
            snprintf(why, sizeof why, "hidden work: the device-synchronised wall time exceeds the "
                     "event time by %.3f ms per launch (baseline removed) against an event median "
                     "of %.4f ms: work ran outside the timed stream", hidden, med);
            tbw_flag(m, "hidden-work", why);
            return 1;
        }
    }
    if (w->energy) tbw_measure_energy(w, vs);
    /* the trial after timing: new inputs at the same pointers, D poisoned again */
    if (w->opw->prepare(w, vs, vs->ntr - 1, vs->seeds[2], 0, msg, sizeof msg)) {
        m->status = TB_STATUS_ERROR;
        snprintf(m->reason, sizeof m->reason, "%s", msg);
        return tbw_context_ok() ? 1 : 2;
    }
    int r = tbw_validated_launch(w, vs, vs->ntr - 1, &vr, &launch_ms);
    if (r) return r;
    if (tbw_record_trial(m, &vr, vs->ntr - 1, 1)) return 1;
    if (tbw_persisting_l2_found(w->s, why, sizeof why)) { tbw_flag(m, "persisting-l2", why); return 1; }
    m->disposition = TB_DISP_PASSED;
    return 0;
}
