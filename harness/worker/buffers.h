/* buffers.h - the device buffers of a measurement: A, B, C and D (D between guard bands),
 * the references D_ref, the comparison's and the timing methods' own (tbw_alloc_bufs, at
 * set-up), and the graph and stream methods' input sets, copies of A, B, C and D whose
 * total passes 2 x L2 (tbw_ensure_sets, on first use). */
#ifndef TB_WORKER_BUFFERS_H
#define TB_WORKER_BUFFERS_H

#include <stddef.h>
#include "worker/state.h"

/* Size and allocate w->vb for w->g (zeroed), then the timing methods' (tb_measure_dev_init).
 * TB_OK, or an error in msg. */
int tbw_alloc_bufs(worker *w, char *msg, size_t len);
/* w->sets and w->nsets, once. TB_OK, or TB_ECUDA. */
int tbw_ensure_sets(worker *w, char *msg, size_t len);

#endif
