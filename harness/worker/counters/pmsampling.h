/* pmsampling.h - counters sampled in time through CUPTI PM sampling, cut to the kernels' own
 * time window.
 *
 * Owns every call into cupti_pmsampling.h. Why it exists: the range profiler (counters.c)
 * closes a kernel's range only after the L2 has written back the lines the kernel left dirty,
 * so its dram__bytes_write is the kernel's whole write traffic; Nsight Compute's window closes
 * with the kernel and misses those lines (docs/counters.md). PM sampling reads the counters
 * every `interval` nanoseconds with GPU timestamps; summing a count metric over the samples in
 * which the SMs were active (sm__cycles_active.sum > 0, from the first such sample to the
 * last) gives what the kernel moved while it ran: the window ncu counts in. counters.c offers
 * it as metric names prefixed "pm:".
 *
 * Only count metrics ("....sum") make sense here, and only those the chip can sample in one
 * pass (CUPTI refuses a configuration that needs more). The caller's prep() and launch() are
 * those of tb_counters_collect: one pass, prep, synchronise, start sampling, launch,
 * synchronise, a short idle tail, stop.
 */
#ifndef TB_PMSAMPLING_H
#define TB_PMSAMPLING_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_pms tb_pms;
/* The caller's launch (non-zero on failure) and its preparation before each pass: the same
 * signatures as counters.h's tb_counters_launch_fn and tb_counters_prepare_fn. */
typedef int (*tb_pms_launch_fn)(void *ctx);
typedef void (*tb_pms_prepare_fn)(void *ctx);

/* What the last collect saw. */
typedef struct tb_pms_info {
    int samples;            /* completed samples decoded */
    int first, last;        /* the window: first and last sample with the SMs active; -1 none */
    double interval_ns;     /* the sampling interval used */
    double window_ns;       /* end of sample `last` minus start of sample `first` */
} tb_pms_info;

/* Prepare sampling of metrics[0..n-1] (raw names, "a|b" alternatives allowed) on CUDA device
 * `device` (current, with cuptiProfilerInitialize already called by the caller) of chip
 * `chip`. TB_OK with *out set when at least one metric can be sampled; a metric that cannot
 * is marked unavailable with the reason. TB_ENOGPU when PM sampling is unavailable here (msg
 * says why); TB_ENOMEM, TB_ECUDA otherwise. */
int tb_pms_open(int device, const char *chip, const char *const *metrics, int n, tb_pms **out,
                char *msg, size_t len);
/* The name sampled for metrics[i] (the alternative the chip has), or as given. */
const char *tb_pms_name(const tb_pms *p, int i);
/* 1 when metrics[i] is sampled; 0 with the reason in why (may be NULL) when not. */
int tb_pms_available(const tb_pms *p, int i, char *why, size_t len);
/* One pass: values[i] = metrics[i] summed over the window (NaN when unavailable). expect_ns, the launch's duration if
 * known (0 if not), sizes the buffers. TB_OK; TB_EWORKER when launch() returned non-zero;
 * TB_ENOGPU when sampling became unavailable; TB_ECUDA otherwise (msg names the call). On
 * failure the values are NaN and sampling is disabled. */
int tb_pms_collect(tb_pms *p, tb_pms_launch_fn launch, tb_pms_prepare_fn prep, void *ctx,
                   double expect_ns, double *values, tb_pms_info *info, char *msg,
                   size_t len);
/* Sample k of the last collect: its GPU timestamps (ns), whether the SMs were active and the
 * metrics' values (n of them, NaN when unavailable). TB_OK, or TB_EUSAGE out of range. */
int tb_pms_sample(const tb_pms *p, int k, uint64_t *start, uint64_t *end, double *busy,
                  double *values);
void tb_pms_close(tb_pms *p);
#ifdef __cplusplus
}
#endif
#endif
