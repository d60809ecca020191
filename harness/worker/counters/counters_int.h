/* counters_int.h - what the two halves of the range-profiler module share (counters.c opens
 * and closes, counters_collect.c collects): the tb_counters object and the range profiler's
 * enable/disable. Private to worker/counters/; the interface is counters.h. */
#ifndef TB_COUNTERS_INT_H
#define TB_COUNTERS_INT_H
#include "worker/counters/counters.h"
#include "worker/counters/pmsampling.h"
#include <cuda.h>
#include <cupti_result.h>
#include <cupti_range_profiler.h>
#include <cupti_profiler_host.h>
#include <stdint.h>

#define DURATION_METRIC "gpu__time_duration.sum"
#define PM_PREFIX "pm:"
#define MAX_PASSES 256

struct tb_counters {
    int device;
    CUcontext ctx;
    char chip[64];
    int n;                                        /* metrics as given */
    char *given[TB_COUNTERS_MAX_METRICS];
    char name[TB_COUNTERS_MAX_METRICS][160];      /* resolved alternative, or as given */
    int slot[TB_COUNTERS_MAX_METRICS];            /* index into coll, -1 unavailable */
    char why[TB_COUNTERS_MAX_METRICS][512];
    const char *coll[TB_COUNTERS_MAX_METRICS + 1];   /* collected names (+ the duration) */
    int ncoll, dur_slot;
    uint8_t *avail_img;
    uint8_t *config;
    size_t config_size;
    CUpti_Profiler_Host_Object *host;
    int passes_needed;
    int user_range;
    int kernels;
    int initialized;                              /* cuptiProfilerInitialize succeeded */
    uint8_t *cdata;
    size_t cdata_size;
    double *rvals;                                /* per range values, ncoll each */
    /* "pm:" metrics, sampled in time over the kernels' window (pmsampling.c) */
    int npm;
    int pm_of[TB_COUNTERS_MAX_METRICS];           /* index among the pm: metrics, -1 none */
    const char *pm_names[TB_COUNTERS_MAX_METRICS];
    tb_pms *pms;
    double pm_vals[TB_COUNTERS_MAX_METRICS];
    tb_pms_info pm_info;
};

/* The range profiler on ctx: enabled into *obj (NULL on failure), and disabled (obj may be NULL). */
CUptiResult tb__rp_enable(CUcontext ctx, CUpti_RangeProfiler_Object **obj);
void tb__rp_disable(CUpti_RangeProfiler_Object *obj);
#endif
