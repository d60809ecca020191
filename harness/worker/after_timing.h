/* after_timing.h - phase C of a measurement, for one timed variant: its inputs unchanged by
 * repeated launches, no hidden work (device-synchronised wall time against event time), its
 * energy per launch, and the trial after timing (new inputs at the same pointers). */
#ifndef TB_WORKER_AFTER_TIMING_H
#define TB_WORKER_AFTER_TIMING_H

#include "worker/state.h"

/* Phase C for one timed variant. Returns 0 when it passed (disposition set); 1/2 (state.h). */
int tbw_check_after_timing(worker *w, vstate *vs);

#endif
