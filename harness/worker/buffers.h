/* buffers.h - the device buffers of a measurement: A, B, C and D (D between guard bands),
 * the references D_ref, the comparison's and the timing methods' own (tbw_alloc_bufs, at
 * set-up), the graph and stream methods' input sets, copies of A, B, C and D, one per launch
 * of a sample (tbw_ensure_sets, on first use, grown when a variant needs more), and new values
 * for the inputs a sample is about to read (tbw_refresh_inputs: no two timed launches of a
 * variant see the same inputs; docs/method.md, "Fresh inputs for every timed launch"). */
#ifndef TB_WORKER_BUFFERS_H
#define TB_WORKER_BUFFERS_H

#include <stddef.h>
#include <stdint.h>
#include "worker/state.h"

/* Free what tbw_alloc_bufs's op alloc and tbw_ensure_sets made for the problem (w->vb, the
 * input sets), so that another problem can be taken on the same context (--keep-worker); the
 * timing methods' buffers (w->md) do not depend on the problem and stay. Synchronises w->s
 * first. Can't fail: an error of cudaFree leaves the allocation to the context's end. */
void tbw_free_problem(worker *w);
/* Size and allocate w->vb for the problem (zeroed; w->opw's alloc), then the timing methods'
 * (tb_measure_dev_init). TB_OK, or an error in msg. */
int tbw_alloc_bufs(worker *w, char *msg, size_t len);
/* The GEMM's w->vb for w->g: A, B, C (when beta != 0), D between guard bands, the references.
 * The table entry's alloc (op_worker_gemm.c). */
int tbw_alloc_gemm_bufs(worker *w, char *msg, size_t len);
/* One device allocation of an operation's buffer table: *p gets bytes (zeroed; NULL when
 * bytes is 0); what names it in the error. */
typedef struct tbw_alloc { void **p; size_t bytes; const char *what; } tbw_alloc;
/* Allocate and zero every entry of a[0, n) in order: TB_OK, or TB_ECUDA naming the first
 * that failed (those before it stay allocated: the caller's free releases them). */
int tbw_alloc_table(const tbw_alloc *a, size_t n, char *msg, size_t len);
/* At least `want` input sets in w->sets[0 .. w->nsets), if memory allows: sets are added (in
 * a new allocation, filled with values from the run's seed) and never move, so a captured
 * graph keeps its pointers. Fewer than `want` when TB_SETS_MAX, TB_SETS_SLABS,
 * TB_SETS_MAX_BYTES or half the free device memory would be passed: the caller gives its
 * samples fewer launches. TB_OK with w->nsets >= 1; TB_ECUDA (msg) when there is not even one,
 * nothing changed. Synchronises w->s when it adds sets. */
int tbw_ensure_sets(worker *w, int want, char *msg, size_t len);
/* New values, drawn by the input generator from seed, in the inputs the next sample reads: A,
 * B and C of the main buffers when nsets is 0 (the cold method), else of sets [0, nsets)
 * (nsets <= w->nsets). D is left alone. Enqueued on w->s; nothing synchronised. TB_OK, or
 * TB_ECUDA with the CUDA error in msg. */
int tbw_refresh_inputs(worker *w, int nsets, uint64_t seed, char *msg, size_t len);
/* The seed of the n-th refresh of a variant's inputs, from its hidden seed (trials.h): as
 * unknowable to the variant as that one, and never the seed of a trial. Can't fail. */
uint64_t tbw_input_seed(uint64_t hidden_seed, uint64_t n);

#endif
