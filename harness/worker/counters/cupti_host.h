/* cupti_host.h - the CUPTI profiler host object, shared by the range profiler (counters.c)
 * and PM sampling (pmsampling.c).
 *
 * Owns the host-side calls of cupti_profiler_host.h that both need: create and free the
 * object for a profiler type and chip, look a metric up, add metrics, take the config
 * image and evaluate a range of counter data. Each returns CUPTI's result; cupti_err.h turns it into a message.
 */
#ifndef TB_CUPTI_HOST_H
#define TB_CUPTI_HOST_H
#include <cupti_result.h>
#include <cupti_profiler_host.h>
#include <stddef.h>
#include <stdint.h>

/* A host object for `type` on chip `chip` with its counter availability image (may be NULL);
 * *out is NULL unless CUPTI_SUCCESS. */
CUptiResult tb_host_new(CUpti_ProfilerType type, const char *chip, const uint8_t *avail,
                        CUpti_Profiler_Host_Object **out);
/* Free h; NULL is fine. */
void tb_host_free(CUpti_Profiler_Host_Object *h);
/* Add n metrics to h's configuration. */
CUptiResult tb_host_add(CUpti_Profiler_Host_Object *h, const char **names, size_t n);
/* The config image of the metrics added to h, malloc'd into *img (the caller frees it). */
CUptiResult tb_host_config(CUpti_Profiler_Host_Object *h, uint8_t **img, size_t *size);
/* Does the chip know this metric? CUPTI_SUCCESS when it does,
 * CUPTI_ERROR_INVALID_METRIC_NAME when it does not, another result when the lookup failed. */
CUptiResult tb_host_metric(CUpti_Profiler_Host_Object *h, const char *name);
/* Evaluate range (or PM sample) `index` of a counter-data image: n metrics into out[0..n). */
CUptiResult tb_host_eval(CUpti_Profiler_Host_Object *h, const uint8_t *img, size_t size,
                         size_t index, const char **names, size_t n, double *out);
#endif
