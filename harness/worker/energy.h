/* energy.h - joules per launch for tilebench-worker's measure mode: back-to-back launches of
 * one variant, NVML's total-energy counter read from one of its updates to a later one. */
#ifndef TB_WORKER_ENERGY_H
#define TB_WORKER_ENERGY_H

#include "worker/state.h"

/* Measure vs's energy per launch after its timed rounds: sets vs->energy_j, vs->power_w and
 * vs->energy_launches (NaN / 0 when there is no counter or it did not move), adds
 * energy_unc, energy_window_s and energy_periods to vs->m.extra_json (or energy_note when
 * it could not measure), and adds the wall time spent to w->energy_s. */
void tbw_measure_energy(worker *w, vstate *vs);

#endif
