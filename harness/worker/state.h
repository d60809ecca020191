/* state.h - the state the steps of `tilebench-worker measure` share, private to worker/: a
 * job's variant (job_variant), what one launch of a variant needs (launch_ctx), the worker's
 * state over the whole job (worker) and one variant's over its steps (vstate), and the
 * tuning of the method choice, the confirming pass and the low-clock count. No code goes
 * with it, and it includes none of the steps' headers: every step file includes it (the
 * order of the steps: worker.c).
 * A step on one variant returns 0 when the variant goes on, 1 when its result is final
 * (unsupported, error, crashed, invalid: its measurement says why), 2 when the context is
 * lost (the worker sends the result and ends: tbw_lost_exit, result.h). */
#ifndef TB_WORKER_STATE_H
#define TB_WORKER_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "tilebench/variant.h"
#include "common/record.h"
#include "common/nvml.h"
#include "common/stop.h"
#include "device/tbdev.h"
#include "reference/ref.h"
#include "worker/measure.h"
#include "worker/validate.h"

typedef struct job_variant {
    const tb_variant *v;
    char name[TB_NAME_LEN];   /* as the parent names it: "ns:NAME" under a namespace */
    char file[TB_PATH_LEN];
    int index;
    int bare;                 /* name + bare is the library's own name (after "ns:") */
} job_variant;

typedef struct launch_ctx {
    const tb_variant *v;
    void *state;
    tb_problem prob;
    tb_buffers io;
    void *ws;
    size_t ws_bytes;
    tb_buffers *sets;      /* the batched methods' input sets (worker.sets), or NULL */
} launch_ctx;

#define TB_GRAPH_BELOW_MS 0.1    /* auto: kernels under this use a batched method */
#define TB_GRAPH_TARGET_MS 2.0   /* a graph or stream sample lasts about this long */
#define TB_STREAM_MAX_REPS 512   /* a stream sample queues at most this many launches behind
                                    the blocking kernel (the launch queue must not fill) */
#define TB_GRAPH_MAX_REPS 4000   /* a graph sample holds at most this many launches */
/* Input sets of the batched methods: one per launch of a sample (no set is used twice in a
 * sample), refreshed before every sample. At most TB_SETS_MAX of them, in at most
 * TB_SETS_SLABS allocations, taking at most TB_SETS_MAX_BYTES and half the device memory
 * free when they are made: where that is too few, a sample has fewer launches
 * (docs/method.md, "Fresh inputs for every timed launch"). */
#define TB_SETS_MAX TB_GRAPH_MAX_REPS
#define TB_SETS_SLABS 16
#define TB_SETS_MAX_BYTES ((size_t)4 << 30)
/* Queueing one stream sample's launches may take at most this fraction of the blocking
 * kernel's timeout (host time of one launch() x launches per sample); a launch slower on the
 * host gets fewer launches per sample (docs/method.md, "Host time of a launch") */
#define TB_QUEUE_FRAC 0.25
/* A sample whose blocking kernel timed out measured the host's pace, not the GPU: it is
 * dropped and taken again, at most this many times per variant; after that such samples are
 * kept, counted, and the measurement is marked host-bound (never ranked) */
#define TB_RETAKES_MAX 5
#define TB_CONFIRM_TOP 3         /* the confirming pass takes the best this many */
/* a sample under this x the max SM clock is "low clock": nvbench's default fraction. Not 0.90:
 * measured over the sample (clock stamps), a big GEMM on the H100 runs at 0.76-0.81 x the
 * maximum with no throttle reason set, and every one of its samples would be flagged */
#define TB_LOW_CLOCK_FRAC 0.75

typedef struct worker {
    int device;
    int slot;            /* the sweep's slot this job is for (--devices), -1 when none */
    cudaStream_t s;
    tb_ref *ref;
    tb_gemm g;
    tb_gemm_scales scales;   /* the problem's growth-1 member: 1 and 1 for 16-bit operands */
    uint32_t op;             /* the problem's tb_op */
    tb_attention attn;       /* the problem when op is TB_OP_ATTENTION_FWD (w->g is then 0) */
    const struct tbw_op *opw;   /* its entry in the worker's table (worker/op_worker.h) */
    tb_val_bufs vb;
    tb_measure_dev md;
    tb_init_dist dist;
    uint64_t seed;
    int trials;
    int validate_only;   /* one trial, no timing: the --sanitize pass */
    int warmup;
    char stop_spec[512];
    char method[8];      /* auto | cold | graph | stream */
    int l2_hot;          /* --l2 hot: no flush, one input set */
    int profile;         /* --profile: no blocking kernel */
    int energy;          /* measure joules per launch (default 1) */
    int confirm;         /* phase D, the confirming pass over the best few (default 1) */
    double pace;         /* rest pace x each sample's wall time after it (default 0) */
    int lockstep;        /* 1: one library name's namespaced copies stop sampling together */
    double energy_s;     /* wall time of the energy bursts so far (the "done" line's phases) */
    char profiler[128];  /* why the blocking kernel is off, "" when on */
    tb_environment env;
    tb_buffers *sets;    /* the batched methods' input sets (TB_SETS_MAX slots), made on first
                            use and grown as variants need more; a set never moves */
    int nsets;           /* sets made so far */
    void *slab[TB_SETS_SLABS];      /* the sets' allocations: slab k holds sets slab_first[k] ..
                                       + slab_count[k] - 1 as four regions, all their A, then
                                       all their B, C and D, each 256-byte aligned */
    int slab_first[TB_SETS_SLABS], slab_count[TB_SETS_SLABS], nslabs;
    size_t set_bytes[4];            /* one set's A, B, C, D in bytes, rounded up to 256 */
    size_t sets_bytes;              /* device bytes of all the sets */
    double base_cold, base_graph;   /* hidden-work baselines */
    double event_ms;     /* what an empty event pair reads (stored, not removed: docs/method.md) */
    double noop_ms;      /* what events around one empty kernel read (stored, information) */
    tb_nvml_dev *nvml;
    cudaStream_t side;   /* the stream-discipline check's second stream, made on first use */
    unsigned long long *held_words;   /* its three counts */
} worker;

typedef struct vstate {
    job_variant *jv;
    launch_ctx lc;
    tb_measurement m;
    int use_naive;
    uint64_t seeds[3], hseed;
    int ntr;
    int active;          /* validated and being timed */
    int sampling;        /* still taking samples in the current pass */
    int satisfied;       /* its stopping rule has said stop (lockstep: it waits for its pair) */
    int sent;            /* its result went out */
    char method[8];
    char method_note[160];
    cudaGraphExec_t graph;
    int reps;            /* launches per sample of the graph or stream method; 0: cold */
    tb_stop *stop;
    double *ms, *wall, *clk;
    double *host;        /* per sample: host wall time of one launch() call, ms (NaN: graph) */
    unsigned char *timed_out;     /* per sample: its blocking kernel timed out */
    int n, cap, block_timeouts;   /* block_timeouts: of every sample pushed (confirming pass
                                     included); result.c counts the kept ones */
    int sets_used;       /* input sets a batched sample rotates over: one per launch (1 with
                            --l2 hot) */
    int reps_wanted;     /* launches per sample its estimate asked for, before the host's cap
                            and the sets' bound */
    int host_cap;        /* launches per sample the host time of a launch() allows; 0: no cut */
    int retakes;         /* samples taken again: their blocking kernel had timed out */
    double host_acc_ms;  /* the timed launch's sums over the sample being taken */
    int host_calls;
    double host_est_ms;  /* host time of one launch() before timing (warm-up, else the last
                            validated launch); NaN when not measured */
    double host_capture_ms;   /* graph: host time of one launch() while it was captured */
    uint64_t refreshes;  /* input refreshes: one before every sample, retakes included */
    double refresh_ms;   /* their host wall time in all (fill, flush, synchronisation) */
    double elapsed_s;
    char stop_why[96];
    double confirm_median;
    int confirmed;       /* -1 not in the confirming pass, 0 lost it, 1 kept it */
    double energy_j, power_w;
    int energy_launches;
    double first_wall_ms;   /* device-synchronised wall time of the last validated launch */
    double est_wall_ms;     /* ... of the first one */
    double last_event_ms;   /* event time of the last validated launch */
    double held_event_ms;   /* event time of the stream-discipline launch (no host gap); NaN */
    int short_kernel;       /* its estimate is under TB_GRAPH_BELOW_MS */
} vstate;

#endif
