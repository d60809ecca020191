/* sweep_int.h - private to driver/sweep.c and driver/sweep_worker.c: what a sweep's slots share
 * (sweep_shared: the store, the counts and the reporter, behind one lock when there are several
 * GPUs), one shape as one slot works through it (shape_ctx), and the life of one worker over a
 * shape's variants (sweep_worker.c). */
#ifndef TB_DRIVER_SWEEP_INT_H
#define TB_DRIVER_SWEEP_INT_H
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "common/record.h"
#include "common/tb.h"
#include "driver/catalog.h"
#include "driver/shapes.h"
#include "driver/sweep_opts.h"
#include "store/store.h"
#include "tilebench/variant.h"

/* What the slots of a sweep share: one slot (one worker at a time) per GPU of --devices, and
 * the one slot of a sweep on one GPU. The lock (recursive) guards the store, the counts, the
 * reporter's callbacks and the early worker; a slot holds it only while it writes or reports. */
typedef struct sweep_shared {
    pthread_mutex_t mu;
    int multi;              /* several slots: lock, and a GPU's failure moves its shape on */
    tb_store *st;
    int64_t run_id;
    const char *worker;
    const tb_catalog *cat;
    const tb_shape_list *shapes;
    const tb_sweep_opts *o;
    const tb_sweep_report *rep;
    int *state;             /* per shape: SH_TODO, SH_TAKEN, SH_DONE (or skipped) */
    uint64_t *failed_on;    /* per shape: the slots whose worker failed on it before measuring */
    size_t done, total;
    int env_seen, rc, alive;
    char why[TB_MSG_LEN];   /* the last GPU failure, for the shapes no slot was left for */
} sweep_shared;

enum { SH_TODO = 0, SH_TAKEN, SH_DONE };

static inline void lk(sweep_shared *sh) { if (sh->multi) pthread_mutex_lock(&sh->mu); }
static inline void ulk(sweep_shared *sh) { if (sh->multi) pthread_mutex_unlock(&sh->mu); }

typedef struct shape_ctx {
    sweep_shared *sh;
    const char *gpu_uuid;  /* the slot's GPU, added to each result's extra (several GPUs) */
    int device_failed;     /* the slot's worker never became ready: its GPU, not a variant */
    char fail_why[TB_MSG_LEN];
    size_t stored;         /* results stored for this shape by this slot */
    int64_t *mid;          /* per variant: the id of its stored measurement on this shape */
    char (*san)[256];      /* per variant: the sanitizer's verdict, "" when not run */
    int *san_bad;
    tb_store *st;
    int64_t run_id, problem_id;
    const tb_catalog *cat;
    const tb_shape *shape;
    const tb_sweep_report *rep;
    int *todo;
    size_t left;
} shape_ctx;

/* Record every variant still to do on this shape with status and reason why. TB_OK or the
 * store's error. */
int tb_sweep_fail_rest(shape_ctx *sc, tb_status status, const char *why, char *msg, size_t len);

/* One worker's life over the variants still to do on this shape (a worker started for the
 * device of o, or the early one for it; with o->session on one GPU, the session's worker when
 * it serves the same job, given back alive when it finished: driver/session.h). Returns TB_OK
 * when the worker finished or was replaced (the caller loops while sc->left; with several
 * GPUs, until sc->device_failed), TB_EINTR, TB_EDB. */
int tb_sweep_one_worker(shape_ctx *sc, const char *worker, const tb_sweep_opts *o, const tb_problem *prob,
                        uint64_t seed, char *msg, size_t len);
#endif
