/* trials.h - the validation trials of one variant and phase A of a measurement: a validated
 * launch (the launch, a device synchronisation, the comparison with the reference), one
 * trial's verdict folded into the measurement, and, per variant before any timing,
 * supports, setup, workspace, the trials with their seeds (one of them hidden from the
 * variant) and the stream-discipline check; then the variant's first time estimate. */
#ifndef TB_WORKER_TRIALS_H
#define TB_WORKER_TRIALS_H

#include "common/record.h"
#include "worker/state.h"
#include "worker/validate.h"

/* One validated launch. Returns 0 ok (vr and *launch_ms filled), 1 failed, 2 context lost
 * (vs->m filled). */
int tbw_validated_launch(worker *w, vstate *vs, int trial, tb_val_result *vr, double *launch_ms);
/* Fold one trial's verdict into m; returns 1 if it failed. */
int tbw_record_trial(tb_measurement *m, const tb_val_result *vr, int trial, int after_timing);
/* Phase A for one variant. Returns 0 when it is valid and may be timed; 1/2 (state.h). */
int tbw_validate_before_timing(worker *w, vstate *vs);
/* The variant's first estimate of one launch's time (ms), from phase A's launches. */
double tbw_estimate_ms(const vstate *vs);

#endif
