/* sweep.h - the parent's loop: for each shape, a worker measures the selected variants;
 * the watchdog turns a hang into `timeout`, a dead worker into `crashed` for the variant it
 * was on, and the sweep goes on with a new worker for the rest. Each result goes to the
 * store as it arrives (one transaction each). With several GPUs (o->ndev > 1, --devices) a
 * slot per GPU, each a thread with a worker at a time, draws shapes from one queue: a shape's
 * variants always meet on one GPU, and a slot whose worker fails before measuring gives its
 * shape back (twice in a row: the GPU is taken out). Never touches CUDA; prints nothing (it
 * reports through tb_sweep_report, which cmd_sweep.c implements; several slots call it under
 * one lock). */
#ifndef TB_SWEEP_H
#define TB_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include "common/record.h"
#include "driver/shapes.h"
#include "store/store.h"
#include "driver/catalog.h"
#include "driver/sweep_opts.h"
#include "driver/worker_job.h"

void tb_sweep_opts_default(tb_sweep_opts *o);

/* Ask a worker for the GPU environment. TB_ENOGPU with the reason when there is none. */
int tb_sweep_probe_env(const char *worker, const char *device, tb_environment *env, char *msg,
                       size_t len);

/* The per-tensor scales of an FP8 problem (o->dtype "e4m3"): powers of two, so that applying
 * them is exact, and not 1, so that a variant that ignores one fails validation by a factor
 * of 32 or 64. The inputs are drawn as x / scale rounded to E4M3 with x from --init (uniform
 * [-1, 1) or normal), which puts A's stored values in [-64, 64) and B's in [-32, 32) (normal:
 * 64 and 32 standard deviations, 448, E4M3's largest, at 7 and 14 of them); docs/method.md,
 * "FP8 problems". */
#define TB_FP8_SCALE_A 0.015625   /* 2^-6 */
#define TB_FP8_SCALE_B 0.03125    /* 2^-5 */

/* Fill a problem description for a shape. A GEMM shape: the layout and padding of o, C and D
 * row-major, leading dimensions = contiguous extent + pad, batches packed one after another;
 * A and B of o->dtype (bf16 unless "e4m3"), C and D bf16, f32 accumulation; the scales above
 * for e4m3, 0 (none) for bf16. An attention shape (s->op TB_OP_ATTENTION_FWD): Q, K, V and O
 * bf16 packed in BHSD (o's layout, dtype and pad are GEMM's, and no option names another
 * layout yet), f32 accumulation and LSE, softmax scale 1/sqrt(head_dim); common/problem.h. */
void tb_sweep_problem(const tb_shape *s, const tb_sweep_opts *o, tb_problem_info *p);
/* TB_OK unless l holds an attention shape and o a GEMM-only option (--metrics, --dtype,
 * --layout, --pad, --alpha, --beta: an attention problem is BF16, packed BHSD, scale 1/sqrt(D),
 * and the counters pass measures GEMM only): TB_EUSAGE, "attention shapes: --metrics applies
 * to GEMM only (issue 33)". */
int tb_sweep_opts_for_shapes(const tb_sweep_opts *o, const tb_shape_list *l, char *msg, size_t len);

/* The problem the worker and the variants see for p (what tb_sweep_problem described):
 * struct_size = sizeof(tb_problem); a GEMM and its scales, or an attention problem with the
 * strides of its layout (BHSD: q_stride {H*Sq*D, Sq*D, D}, K and V at heads_kv and Sk, O as Q,
 * lse_stride {H*Sq, Sq}; BSHD: {Sq*H*D, D, H*D}), tb_problem_info_attention_abi. */
void tb_sweep_problem_abi(const tb_problem_info *p, tb_problem *out);

/* Measure variants x shapes into run_id. skip[i] (may be NULL) marks shapes already
 * complete (--resume). TB_OK, TB_EINTR, or TB_EDB when the store failed. */
int tb_sweep_run(tb_store *st, int64_t run_id, const char *worker, const tb_sweep_opts *o,
                 const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                 const tb_sweep_report *rep, char *msg, size_t len);

/* A plan instead of a measurement (sweep --plan-only): one measurement of status planned per
 * variant and shape not skipped, nothing run. TB_OK, or TB_EDB when the store failed. */
int tb_sweep_plan(tb_store *st, int64_t run_id, const tb_sweep_opts *o, const tb_catalog *cat,
                  const tb_shape_list *shapes, const int *skip, char *msg, size_t len);
#endif
