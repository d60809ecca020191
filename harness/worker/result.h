/* result.h - the end of one variant in a measurement: its result record (the statistics of
 * its samples, and in "extra" what the parent needs to judge them), the release of what it
 * holds (graph, state, workspace, samples), and the worker's end when the context is lost
 * (the variant's result first). */
#ifndef TB_WORKER_RESULT_H
#define TB_WORKER_RESULT_H

#include "worker/state.h"

/* Send the variant's result (and mark it sent). */
void tbw_send_result(worker *w, vstate *vs);
/* Release the variant; lost: the context is gone, nothing on the device is freed. */
void tbw_release_variant(worker *w, vstate *vs, int lost);
/* End the worker after a lost context: the variant's result, {"type":"lost"}, _exit(3). */
void tbw_lost_exit(worker *w, vstate *vs);

#endif
