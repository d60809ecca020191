/* op_worker.h - the worker's per-operation table (issue 33, "The op seam"): what differs
 * between operations in tilebench-worker's measure mode, keyed by tb_op. Owns the interface
 * only; each operation's entry is in a file of its own (op_worker_gemm.c, op_worker_attention.c).
 * Everything else in worker/ (the trials' order, the stream-discipline check, the timing
 * methods, the input sets and their refresh, the result) is the same for every operation:
 * tb_val_bufs's a, b, c are the op's inputs (A, B, C or Q, K, V) and d its first output.
 * Each function returns TB_OK or an error code with a message in msg. */
#ifndef TB_WORKER_OP_WORKER_H
#define TB_WORKER_OP_WORKER_H

#include <stddef.h>
#include <stdint.h>
#include "worker/state.h"

typedef struct tbw_op {
    uint32_t op;
    /* The problem into w (w->g, w->scales or w->attn) from the job's problem. */
    int (*take)(worker *w, const tb_problem *p, char *msg, size_t len);
    /* w->vb sized from the problem's strides and allocated (zeroed), with D's (O's) guard bands,
     * the references' outputs and workspace; not the timing methods' buffers. */
    int (*alloc)(worker *w, char *msg, size_t len);
    /* The problem a variant is offered and the main buffers it launches on. */
    void (*launch_args)(const worker *w, tb_problem *p, tb_buffers *io);
    /* One trial's inputs (trial t, 0-based, of vs; drawn from seed), the outputs poisoned, the
     * inputs checksummed, the reference (cross-checked when crosscheck, on small shapes). */
    int (*prepare)(worker *w, const vstate *vs, int t, uint64_t seed, int crosscheck,
                   char *msg, size_t len);
    /* After a validated launch: guards, inputs, the rule; the verdict into vr. */
    int (*check)(worker *w, tb_val_result *vr, char *msg, size_t len);
    /* The shape as NVTX names it ("MxNxK", "BxHxSqxSkxD"). */
    void (*shape_text)(const worker *w, char *buf, size_t len);
} tbw_op;

extern const tbw_op tbw_op_gemm;
extern const tbw_op tbw_op_attention;

/* The entry for op; NULL for one the worker cannot measure. */
const tbw_op *tbw_op_for(uint32_t op);

#endif
