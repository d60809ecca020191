/* step.h - what every step of `tilebench-worker measure` on one variant shares: one launch
 * of the variant (on the main buffers, or on one of the graph and stream methods' input
 * sets), a step announced to the parent ({"type":"begin"}: it knows whom to blame) and to a
 * profiler (NVTX ranges), and a failure recorded: a CUDA error (is the context still
 * usable?) or a broken rule (the variant is incorrect). */
#ifndef TB_WORKER_STEP_H
#define TB_WORKER_STEP_H

#include <cuda_runtime_api.h>
#include "common/record.h"
#include "worker/state.h"

/* One launch of the variant of launch_ctx c on stream s: on its main buffers, or on input
 * set `set` (tb_launch_fn and tb_launch_set_fn, measure.h). The variant's return code. */
int tbw_do_launch(void *c, cudaStream_t s);
int tbw_do_launch_set(void *c, int set, cudaStream_t s);
/* Is the context still usable after an error? A sticky error poisons it for good. */
int tbw_context_ok(void);
/* {"type":"begin","variant","phase"}: the variant's code runs next. */
void tbw_send_begin(const vstate *vs, const char *phase);
/* Push the NVTX ranges tb/<variant>/<shape>/<phase>; tbw_nvtx_pop pops all four. */
void tbw_nvtx_push(const worker *w, const vstate *vs, const char *phase);
void tbw_nvtx_pop(void);
/* Record a CUDA failure as a crash; returns 1 if the worker must end (context lost). */
int tbw_cuda_crash(tb_measurement *m, const char *what, const char *err);
/* The variant is incorrect: it broke `rule`, for the reason `why`. */
void tbw_flag(tb_measurement *m, const char *rule, const char *why);

#endif
