/* after_timing.c - phase C of tilebench-worker's measure mode: the checks after timing (the
 * inputs, hidden work), the energy measurement (energy.c), the trial after timing (see
 * after_timing.h). */
#define _GNU_SOURCE
#include "worker/after_timing.h"
#include "common/tb.h"
#include "common/stats.h"
#include "worker/discipline.h"
#include "worker/energy.h"
#include "worker/step.h"
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
        double *gap = malloc(sizeof(double) * (size_t)vs->n);
        int reps = vs->reps ? vs->reps : 1;
        for (int i = 0; i < vs->n; i++) gap[i] = vs->wall[i] - vs->ms[i] * reps;
        double base = vs->reps ? w->base_graph : w->base_cold;   /* neither flushes */
        double hidden = (tb_stats_median(gap, vs->n) - base) / reps;
        double med = tb_stats_median(vs->ms, vs->n);
        free(gap);
        cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
        if (x) {
            cJSON_AddNumberToObject(x, "hidden_work_ms", hidden);
            cJSON_AddNumberToObject(x, "gap_baseline_ms", base);
            char *t = cJSON_PrintUnformatted(x);
            if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
            cJSON_free(t);
            cJSON_Delete(x);
        }
        if (hidden > TB_HIDDEN_MIN_MS && hidden > TB_HIDDEN_FRAC * med) {
            snprintf(why, sizeof why, "hidden work: the device-synchronised wall time exceeds the "
                     "event time by %.3f ms per launch (baseline removed) against an event median "
                     "of %.4f ms: work ran outside the timed stream", hidden, med);
            tbw_flag(m, "hidden-work", why);
            return 1;
        }
    }
    if (w->energy) tbw_measure_energy(w, vs);
    /* the trial after timing: new inputs at the same pointers, D poisoned again */
    if (tb_validate_prepare(w->ref, &w->g, &w->vb, vs->seeds[2], w->dist, vs->use_naive, 0, w->s,
                            msg, sizeof msg)) {
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
