/* timing.h - the timing of one variant in a measurement: its method chosen (cold, graph or
 * stream; under --method auto one method for the shape) and warmed up, then one sample at a
 * time (phases B and D, whose interleaved rounds are the job's loop: job.c). */
#ifndef TB_WORKER_TIMING_H
#define TB_WORKER_TIMING_H

#include "worker/measure.h"
#include "worker/state.h"

/* Is the variant a short kernel for --method auto? */
int tbw_is_short(const vstate *vs);
/* Choose and prepare the variant's method; warm it up. Returns 0, or 1/2 (state.h). */
int tbw_prepare_timing(worker *w, vstate *vs, int shape_short);
/* Keep one sample (its time, wall time, clock). TB_OK, or TB_ENOMEM. */
int tbw_push_sample(vstate *vs, const tb_sample *smp);
/* One sample of one variant by its method. Returns 0, or 1/2 (state.h): its timing is over. */
int tbw_take_sample(worker *w, vstate *vs, tb_sample *smp);

#endif
