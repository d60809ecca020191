/* discipline.h - the rules on what a variant's launch may do besides computing D: keep all
 * its work on the stream it is given, in order ("off-stream": one launch on a poisoned D
 * behind the held blocking kernel, D counted from a second stream), and leave no
 * persisting-L2 carve-out, which would survive the L2 flush ("persisting-l2", checked after
 * every step that runs it). */
#ifndef TB_WORKER_DISCIPLINE_H
#define TB_WORKER_DISCIPLINE_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "worker/state.h"

/* A persisting-L2 carve-out (device limit, or an access-policy window on s): describe it in
 * why and undo it. Returns 1 when one was found. */
int tbw_persisting_l2_found(cudaStream_t s, char *why, size_t n);
/* The rule "off-stream" for one validated variant; skipped without the blocking kernel.
 * Returns 0, or 1/2 (state.h). */
int tbw_stream_check(worker *w, vstate *vs);

#endif
