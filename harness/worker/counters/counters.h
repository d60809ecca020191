/* counters.h - hardware counters of one measured launch, through the CUPTI range profiler.
 *
 * Owns every call into CUPTI's profiling side (cupti_range_profiler.h, cupti_profiler_host.h,
 * cupti_target.h): the chip's metric list, the config image, the counter-data image, the
 * passes and the evaluation. Leaves to the caller what runs on the GPU: the launch itself and
 * what must happen before each pass (the L2 flush). Activity records (kernel resources) are
 * resources.c's; NVTX ranges and the wire records are worker_counters.c's.
 *
 * Replay is the caller's (CUPTI_UserReplay): tb_counters_collect() calls prep() and then
 * launch() once per pass, as many passes as the metrics need, so every pass starts from the
 * cache state prep() leaves. The range is, by default, CUPTI's auto range: one range per
 * kernel, exactly the kernel, as ncu measures; count metrics (names ending in ".sum") are
 * summed over the kernels of a launch, the others are averaged over them, weighted by each
 * kernel's gpu__time_duration. tb_counters_user_range() switches to one user range around the
 * whole launch instead (a range also holds the gaps between its kernels).
 *
 * A metric named "pm:<name>" (a count metric) is not range-profiled: it is PM-sampled in one
 * more pass and summed over the samples in which the SMs were active (pmsampling.c), so that
 * it holds what the kernels moved while they ran, the window Nsight Compute counts in; the
 * range profiler's own figure also holds what the L2 writes back after them
 * (docs/counters.md). Where PM sampling is unavailable those metrics are, with the reason.
 *
 * A metric name may list alternatives, "a|b|c": the first that the chip has is collected
 * (tb_counters_name() says which). A metric the chip lacks is not an error: it is marked
 * unavailable with the reason (tb_counters_available()) and its value is NaN.
 *
 * One tb_counters per process at a time. tb_counters_open() makes `device` current
 * (cudaSetDevice, cudaFree(0)) and profiles its primary context, where the caller's launches
 * must go. Keep the activity API (resources.c) apart in time: the worker reads resources
 * before it opens the counters. No libcuda link is needed (driver entry points come through
 * the runtime), so a program using this starts on a machine without a driver.
 */
#ifndef TB_COUNTERS_H
#define TB_COUNTERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_counters tb_counters;

/* Most metrics one tb_counters collects, and most kernels one launch may hold in auto range
 * mode (a launch with more is refused by tb_counters_collect, with a message). */
#define TB_COUNTERS_MAX_METRICS 64
#define TB_COUNTERS_MAX_KERNELS 64

/* Prepare collection of metrics (a NULL-terminated list of raw metric names, e.g.
 * "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") on CUDA device `device`.
 * TB_OK and *out set when at least one metric can be collected. Otherwise *out is NULL and:
 *   TB_ENOGPU  counters are unavailable here, msg says why and names the CUPTI error:
 *              another subscriber (ncu: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
 *              no permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), a device the profiler does
 *              not support (vGPU, MIG, confidential computing, ...: what
 *              cuptiProfilerDeviceSupported says is appended), or a chip that has none of the
 *              metrics (each named);
 *   TB_EUSAGE  the list is empty or longer than TB_COUNTERS_MAX_METRICS;
 *   TB_ECUDA   any other CUDA or CUPTI failure (msg names the call). */
int tb_counters_open(int device, const char *const *metrics, tb_counters **out, char *msg,
                     size_t len);

/* Enqueue the measured launch(es) on the caller's stream and return 0, or non-zero when
 * nothing could be enqueued. Must enqueue the same kernels every time it is called. */
typedef int (*tb_counters_launch_fn)(void *ctx);
/* Before each pass, outside the profiled range: flush the L2 (the caller's kernel). */
typedef void (*tb_counters_prepare_fn)(void *ctx);

/* Collect every available metric over the launch: per pass, prep(ctx) (may be NULL), a device
 * synchronisation, then launch(ctx) inside the profiled range and another synchronisation.
 * values[i] is metrics[i]'s value (NaN when unavailable); *passes is the passes used.
 * TB_OK; TB_EWORKER when launch() returned non-zero (msg has the code); TB_ENOGPU when the
 * counters became unavailable (msg as for open; the caller should not try again); TB_ECUDA
 * when a CUDA call or kernel failed (msg has the error; the context may be lost) or CUPTI
 * failed otherwise, e.g. a launch with more than TB_COUNTERS_MAX_KERNELS kernels. On failure
 * values are all NaN and the profiler is left disabled (the next collect starts afresh). */
int tb_counters_collect(tb_counters *c, tb_counters_launch_fn launch, tb_counters_prepare_fn prep,
                        void *ctx, double *values, int *passes, char *msg, size_t len);

/* Switch c to one user range around the whole launch (on != 0) or back to auto ranges, one
 * per kernel (0, the default). Takes effect at the next collect. Can't fail. */
void tb_counters_user_range(tb_counters *c, int on);

/* Number of metrics c was opened with (the length of the list). */
int tb_counters_count(const tb_counters *c);
/* The name collected for metrics[i]: the first alternative the chip has, or, when it has
 * none, the name as given. Valid until tb_counters_close. */
const char *tb_counters_name(const tb_counters *c, int i);
/* 1 when metrics[i] is collected; 0 with the reason in why (may be NULL) when not. */
int tb_counters_available(const tb_counters *c, int i, char *why, size_t len);
/* The chip's name from CUPTI ("GH100"). */
const char *tb_counters_chip(const tb_counters *c);
/* Passes the configuration needs, from CUPTI (the last collect's actual count comes back
 * from tb_counters_collect). */
int tb_counters_passes_needed(const tb_counters *c);
/* Kernels (auto ranges) the last successful collect saw; 1 in user range mode. */
int tb_counters_kernels(const tb_counters *c);

/* Disable the profiler and free c. NULL is fine. */
void tb_counters_close(tb_counters *c);
/* The sampler behind c's "pm:" metrics (NULL when it has none, or after it failed), and in
 * *info (may be NULL) what its last collect saw (pmsampling.h has both types). */
struct tb_pms;
struct tb_pms_info;
const struct tb_pms *tb_counters_pms(const tb_counters *c, struct tb_pms_info *info);

/* The named metric sets: "banks", "memory", "compute" and "all" (their union); NULL for any
 * other name. Entries may hold alternatives ("a|b"). Static storage; never freed. */
const char *const *tb_counters_set(const char *name);

/* The unit of a metric, from its name: "%", "bytes", "wavefronts", "sectors", "inst",
 * "cycles", "ns", or "" (a plain count). For alternatives, the first one's. Never NULL. */
const char *tb_counters_unit(const char *metric);

#ifdef __cplusplus
}
#endif
#endif
