/* counters.c - hardware counters through the CUPTI range profiler (see counters.h).
 *
 * Owns every CUPTI profiling call of tilebench: cuptiProfilerInitialize, the chip's metric
 * list and counter availability, the profiler host object (config image, evaluation) and the
 * range profiler object (counter-data image, passes, decode). Nothing here launches work of
 * its own: the caller's prep() and launch() do, once per pass.
 *
 * The sequence (seen working from C on the H100, ../shared/device-notes.md):
 *   open:    cuptiProfilerInitialize -> cuptiProfilerDeviceSupported -> cuptiDeviceGetChipName
 *            -> cuptiProfilerGetCounterAvailability (size, then data) -> cuptiProfilerHost-
 *            Initialize -> per metric cuptiProfilerHostGetMetricProperties (does the chip have
 *            it?) -> cuptiProfilerHostConfigAddMetrics -> config image -> GetNumOfPasses ->
 *            a trial cuptiRangeProfilerEnable/Disable (permissions show up there)
 *   collect: Enable -> counter-data size and image -> SetConfig(auto or user range,
 *            CUPTI_UserReplay) -> per pass { prep, sync, Start, [PushRange], launch, sync,
 *            [PopRange], Stop } until Stop says every pass was submitted -> DecodeData ->
 *            per range EvaluateToGpuValues -> Disable.
 * cupti_profiler_host.h includes <string>; this file is C11 and is compiled with
 * harness/cupti_c/ on the include path, which holds an empty file named `string`.
 *
 * Invariant: between two calls the range profiler is disabled, so a failed collect leaves
 * nothing behind, and the counter availability image is only read while it is.
 */
#define _POSIX_C_SOURCE 200809L
#include "counters.h"
#include "cupti_err.h"
#include "cupti_host.h"
#include "pmsampling.h"
#include "tb.h"
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_profiler_host.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the range profiler object ----------------------------------------------------------- */

static CUptiResult rp_enable(CUcontext ctx, CUpti_RangeProfiler_Object **obj)
{
    CUpti_RangeProfiler_Enable_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    p.ctx = ctx;
    CUptiResult r = cuptiRangeProfilerEnable(&p);
    *obj = r == CUPTI_SUCCESS ? p.pRangeProfilerObject : NULL;
    return r;
}

static void rp_disable(CUpti_RangeProfiler_Object *obj)
{
    if (!obj) return;
    CUpti_RangeProfiler_Disable_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    p.pRangeProfilerObject = obj;
    cuptiRangeProfilerDisable(&p);
}

/* ---- open -------------------------------------------------------------------------------- */

/* The current context and its device, through the runtime's driver entry points: linking
 * libcuda itself would keep the program from starting on a machine without a driver. */
typedef CUresult (CUDAAPI *ctx_get_current_fn)(CUcontext *);
typedef CUresult (CUDAAPI *ctx_get_device_fn)(CUdevice *);

static int current_context(CUcontext *ctx, CUdevice *dev)
{
    void *f1 = NULL, *f2 = NULL;
    enum cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound, q2 = q1;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &f1, 12000, cudaEnableDefault, &q1) != cudaSuccess ||
        cudaGetDriverEntryPointByVersion("cuCtxGetDevice", &f2, 12000, cudaEnableDefault, &q2) != cudaSuccess ||
        q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || !f1 || !f2)
        return TB_ECUDA;
    ctx_get_current_fn get_ctx;
    ctx_get_device_fn get_dev;
    memcpy(&get_ctx, &f1, sizeof f1);   /* object to function pointer, without a cast warning */
    memcpy(&get_dev, &f2, sizeof f2);
    return get_ctx(ctx) == CUDA_SUCCESS && get_dev(dev) == CUDA_SUCCESS ? TB_OK : TB_ECUDA;
}

/* Build c->config from the available metrics (c->coll); a metric CUPTI will not schedule is
 * found by trying each alone, marked unavailable, and the rest tried again. */
static int build_config(tb_counters *c, char *msg, size_t len)
{
    char t[200];
    for (int attempt = 0; attempt < 2; attempt++) {
        CUpti_Profiler_Host_Object *h = NULL;
        CUptiResult r = tb_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, c->chip, c->avail_img, &h);
        if (r != CUPTI_SUCCESS) return tb_cupti_fail(msg, len, "cuptiProfilerHostInitialize", r);
        r = tb_host_add(h, c->coll, (size_t)c->ncoll);
        if (r == CUPTI_SUCCESS) r = tb_host_config(h, &c->config, &c->config_size);
        if (r == CUPTI_SUCCESS) { c->host = h; return TB_OK; }
        tb_host_free(h);
        if (attempt == 1) return tb_cupti_fail(msg, len, "cuptiProfilerHostConfigAddMetrics", r);
        /* find the culprits one at a time */
        int dropped[TB_COUNTERS_MAX_METRICS + 1], bad = 0;
        for (int j = 0; j < c->ncoll; j++) {
            CUpti_Profiler_Host_Object *h1 = NULL;
            CUptiResult r1 = tb_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, c->chip, c->avail_img, &h1);
            if (r1 == CUPTI_SUCCESS) r1 = tb_host_add(h1, &c->coll[j], 1);
            tb_host_free(h1);
            dropped[j] = r1 != CUPTI_SUCCESS;
            if (!dropped[j]) continue;
            bad++;
            for (int i = 0; i < c->n; i++)
                if (c->slot[i] == j)
                    snprintf(c->why[i], sizeof c->why[i], "'%s' cannot be collected on %s: %s",
                             c->coll[j], c->chip, tb_cupti_text(r1, t, sizeof t));
        }
        if (!bad) return tb_cupti_fail(msg, len, "cuptiProfilerHostConfigAddMetrics", r);
        int map[TB_COUNTERS_MAX_METRICS + 1], nk = 0;
        for (int j = 0; j < c->ncoll; j++) {
            map[j] = dropped[j] ? -1 : nk;
            if (!dropped[j]) c->coll[nk++] = c->coll[j];
        }
        for (int i = 0; i < c->n; i++) c->slot[i] = c->slot[i] >= 0 ? map[c->slot[i]] : -1;
        c->dur_slot = c->dur_slot >= 0 ? map[c->dur_slot] : -1;
        c->ncoll = nk;
        int left = 0;
        for (int i = 0; i < c->n; i++) left += c->slot[i] >= 0;
        if (!left) {
            size_t at = (size_t)snprintf(msg, len, "no metric can be collected on %s:", c->chip);
            for (int i = 0; i < c->n && at < len; i++)
                at += (size_t)snprintf(msg + at, len - at, " %s;", c->why[i]);
            return TB_ENOGPU;
        }
    }
    return tb_fail(msg, len, TB_EINTERNAL, "unreachable");
}

static const char *support_word(CUpti_Profiler_Support_Level s)
{
    return s == CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED ? "unsupported"
         : s == CUPTI_PROFILER_CONFIGURATION_DISABLED ? "disabled" : "unknown";
}

static int check_device(tb_counters *c, CUdevice dev, char *msg, size_t len)
{
    CUpti_Profiler_DeviceSupported_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
    p.cuDevice = dev;
    p.api = CUPTI_PROFILER_RANGE_PROFILING;
    CUptiResult r = cuptiProfilerDeviceSupported(&p);
    if (r != CUPTI_SUCCESS) return tb_cupti_fail(msg, len, "cuptiProfilerDeviceSupported", r);
    if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return TB_OK;
    struct { CUpti_Profiler_Support_Level s; const char *what; } f[] = {
        { p.architecture, "architecture (needs compute capability 7.0 or later)" },
        { p.sli, "SLI" }, { p.vGpu, "vGPU (profiling must be enabled for the VM)" },
        { p.confidentialCompute, "confidential computing" }, { p.cmp, "CMP device" },
        { p.wsl, "WSL" } };
    char list[256] = "";
    size_t at = 0;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].s != CUPTI_PROFILER_CONFIGURATION_SUPPORTED && at < sizeof list)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s: %s", at ? ", " : "",
                                   f[i].what, support_word(f[i].s));
    return tb_fail(msg, len, TB_ENOGPU, "the range profiler does not support GPU %d (%s)",
                   c->device, at ? list : "no reason given");
}

int tb_counters_open(int device, const char *const *metrics, tb_counters **out, char *msg,
                     size_t len)
{
    char t[200];
    *out = NULL;
    int n = 0;
    while (metrics && metrics[n]) n++;
    if (n == 0) return tb_fail(msg, len, TB_EUSAGE, "no metrics to collect");
    if (n > TB_COUNTERS_MAX_METRICS)
        return tb_fail(msg, len, TB_EUSAGE, "too many metrics (%d, at most %d)", n,
                       TB_COUNTERS_MAX_METRICS);
    tb_counters *c = calloc(1, sizeof *c);
    if (!c) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    char note[400] = "";   /* cuptiProfilerDeviceSupported's view, for failure messages */
    c->device = device;
    c->n = n;
    c->dur_slot = -1;
    int rc;
    for (int i = 0; i < n; i++) {
        c->given[i] = strdup(metrics[i]);
        if (!c->given[i]) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); goto err; }
        c->slot[i] = -1;
    }

    cudaError_t ce = cudaSetDevice(device);
    if (ce == cudaSuccess) ce = cudaFree(0);
    if (ce != cudaSuccess) {
        rc = tb_fail(msg, len, TB_ENOGPU, "cannot use GPU %d: %s", device, cudaGetErrorString(ce));
        goto err;
    }
    CUdevice cudev;
    if (current_context(&c->ctx, &cudev) != TB_OK || !c->ctx) {
        rc = tb_fail(msg, len, TB_ECUDA, "no current CUDA context on GPU %d", device);
        goto err;
    }

    CUpti_Profiler_Initialize_Params ip;
    memset(&ip, 0, sizeof ip);
    ip.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
    CUptiResult r = cuptiProfilerInitialize(&ip);
    if (r != CUPTI_SUCCESS) { rc = tb_cupti_fail(msg, len, "cuptiProfilerInitialize", r); goto err; }
    c->initialized = 1;
    /* advisory: what it says is added to a later failure's message, but a configuration it
     * calls unsupported may still profile (it is not trusted to refuse on its own) */
    check_device(c, cudev, note, sizeof note);

    CUpti_Device_GetChipName_Params cp;
    memset(&cp, 0, sizeof cp);
    cp.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
    cp.deviceIndex = (size_t)device;
    if ((r = cuptiDeviceGetChipName(&cp)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiDeviceGetChipName", r);
        goto err;
    }
    snprintf(c->chip, sizeof c->chip, "%s", cp.pChipName ? cp.pChipName : "?");

    CUpti_Profiler_GetCounterAvailability_Params ap;
    memset(&ap, 0, sizeof ap);
    ap.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    ap.ctx = c->ctx;
    if ((r = cuptiProfilerGetCounterAvailability(&ap)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiProfilerGetCounterAvailability", r);
        goto err;
    }
    c->avail_img = calloc(ap.counterAvailabilityImageSize ? ap.counterAvailabilityImageSize : 1, 1);
    if (!c->avail_img) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); goto err; }
    ap.pCounterAvailabilityImage = c->avail_img;
    if ((r = cuptiProfilerGetCounterAvailability(&ap)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiProfilerGetCounterAvailability", r);
        goto err;
    }

    /* which alternative of each metric does the chip have? */
    CUpti_Profiler_Host_Object *h = NULL;
    if ((r = tb_host_new(CUPTI_PROFILER_TYPE_RANGE_PROFILER, c->chip, c->avail_img, &h)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiProfilerHostInitialize", r);
        goto err;
    }
    int have_dur = 0;
    for (int i = 0; i < n; i++) {
        c->pm_of[i] = -1;
        if (strncmp(c->given[i], PM_PREFIX, strlen(PM_PREFIX)) == 0) {
            c->pm_of[i] = c->npm;
            c->pm_names[c->npm++] = c->given[i] + strlen(PM_PREFIX);
            snprintf(c->name[i], sizeof c->name[i], "%.159s", c->given[i]);
            snprintf(c->why[i], sizeof c->why[i], "PM sampling was not set up");
            continue;
        }
        char buf[512];
        snprintf(buf, sizeof buf, "%s", c->given[i]);
        snprintf(c->name[i], sizeof c->name[i], "%.159s", c->given[i]);
        char *save = NULL;
        CUptiResult last = CUPTI_ERROR_INVALID_METRIC_NAME;
        for (char *alt = strtok_r(buf, "|", &save); alt; alt = strtok_r(NULL, "|", &save)) {
            last = tb_host_metric(h, alt);
            /* only "no such metric" rules one out; other lookup failures are left to
             * cuptiProfilerHostConfigAddMetrics to judge */
            if (last != CUPTI_ERROR_INVALID_METRIC_NAME) last = CUPTI_SUCCESS;
            if (last == CUPTI_SUCCESS) { snprintf(c->name[i], sizeof c->name[i], "%.159s", alt); break; }
        }
        if (last != CUPTI_SUCCESS) {
            if (strchr(c->given[i], '|'))
                snprintf(c->why[i], sizeof c->why[i], "%s has none of '%s'", c->chip, c->given[i]);
            else if (last == CUPTI_ERROR_INVALID_METRIC_NAME)
                snprintf(c->why[i], sizeof c->why[i], "'%s' is not a metric of %s", c->given[i], c->chip);
            else
                snprintf(c->why[i], sizeof c->why[i], "cannot look up '%s' on %s: %s", c->given[i],
                         c->chip, tb_cupti_text(last, t, sizeof t));
            continue;
        }
        int j;   /* the same metric twice is collected once */
        for (j = 0; j < c->ncoll; j++) if (strcmp(c->coll[j], c->name[i]) == 0) break;
        if (j == c->ncoll) c->coll[c->ncoll++] = c->name[i];
        c->slot[i] = j;
        if (strcmp(c->name[i], DURATION_METRIC) == 0) { have_dur = 1; c->dur_slot = j; }
    }
    /* kernels of one launch are averaged by duration: collect it even when not asked for */
    if (!have_dur && (c->ncoll > 0 || c->npm > 0) && tb_host_metric(h, DURATION_METRIC) != CUPTI_ERROR_INVALID_METRIC_NAME) {
        c->dur_slot = c->ncoll;
        c->coll[c->ncoll++] = DURATION_METRIC;
    }
    tb_host_free(h);
    if (c->ncoll == 0) {
        size_t at = (size_t)snprintf(msg, len, "no metric of the list exists on %s:", c->chip);
        for (int i = 0; i < n && at < len; i++)
            at += (size_t)snprintf(msg + at, len - at, " %s;", c->why[i]);
        rc = TB_ENOGPU;
        goto err;
    }
    if ((rc = build_config(c, msg, len)) != TB_OK) goto err;

    CUpti_Profiler_Host_GetNumOfPasses_Params np;
    memset(&np, 0, sizeof np);
    np.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
    np.configImageSize = c->config_size;
    np.pConfigImage = c->config;
    if ((r = cuptiProfilerHostGetNumOfPasses(&np)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiProfilerHostGetNumOfPasses", r);
        goto err;
    }
    c->passes_needed = (int)np.numOfPasses;

    /* permissions show up when the profiler is enabled on the context: try it once */
    CUpti_RangeProfiler_Object *obj = NULL;
    if ((r = rp_enable(c->ctx, &obj)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiRangeProfilerEnable", r);
        goto err;
    }
    rp_disable(obj);
    if (c->npm > 0) {   /* the pm: metrics: unavailable with the reason when the sampler is */
        char pmsg[400] = "";
        int pr = tb_pms_open(device, c->chip, c->pm_names, c->npm, &c->pms, pmsg, sizeof pmsg);
        for (int i = 0; i < n; i++) {
            if (c->pm_of[i] < 0) continue;
            if (pr != TB_OK)
                snprintf(c->why[i], sizeof c->why[i], "PM sampling unavailable: %s", pmsg);
            else if (tb_pms_available(c->pms, c->pm_of[i], c->why[i], sizeof c->why[i]))
                snprintf(c->name[i], sizeof c->name[i], PM_PREFIX "%.150s", tb_pms_name(c->pms, c->pm_of[i]));
        }
    }
    c->rvals = calloc((size_t)TB_COUNTERS_MAX_KERNELS * (size_t)(c->ncoll), sizeof(double));
    if (!c->rvals) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); goto err; }
    *out = c;
    return TB_OK;
err:
    if (note[0] && msg && len) {
        size_t at = strlen(msg);
        if (at + 4 < len) snprintf(msg + at, len - at, " (%s)", note);
    }
    tb_counters_close(c);
    return rc;
}

/* ---- collect ----------------------------------------------------------------------------- */

static int combine_kind(const char *name)
{
    size_t l = strlen(name);
    if (l > 4 && strcmp(name + l - 4, ".sum") == 0) return 's';
    if (l > 4 && strcmp(name + l - 4, ".max") == 0) return 'M';
    if (l > 4 && strcmp(name + l - 4, ".min") == 0) return 'm';
    return 'w';   /* ratios, averages, percentages: weighted by duration */
}

/* End a failed collect: the profiler stopped and disabled, values NaN. */
static int collect_fail(CUpti_RangeProfiler_Object *obj, int started, int pushed, int rc)
{
    if (obj) {
        if (pushed) {
            CUpti_RangeProfiler_PopRange_Params pp;
            memset(&pp, 0, sizeof pp);
            pp.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
            pp.pRangeProfilerObject = obj;
            cuptiRangeProfilerPopRange(&pp);
        }
        if (started) {
            CUpti_RangeProfiler_Stop_Params sp;
            memset(&sp, 0, sizeof sp);
            sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
            sp.pRangeProfilerObject = obj;
            cuptiRangeProfilerStop(&sp);
        }
        rp_disable(obj);
    }
    return rc;
}

int tb_counters_collect(tb_counters *c, tb_counters_launch_fn launch, tb_counters_prepare_fn prep,
                        void *ctx, double *values, int *passes, char *msg, size_t len)
{
    for (int i = 0; c && i < c->n; i++) values[i] = NAN;
    if (passes) *passes = 0;
    if (!c || !launch) return tb_fail(msg, len, TB_EUSAGE, "no counters or no launch");
    CUptiResult r;
    CUpti_RangeProfiler_Object *obj = NULL;
    size_t maxr = c->user_range ? 1 : TB_COUNTERS_MAX_KERNELS;
    if ((r = rp_enable(c->ctx, &obj)) != CUPTI_SUCCESS)
        return tb_cupti_fail(msg, len, "cuptiRangeProfilerEnable", r);

    CUpti_RangeProfiler_GetCounterDataSize_Params ds;
    memset(&ds, 0, sizeof ds);
    ds.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    ds.pRangeProfilerObject = obj;
    ds.pMetricNames = c->coll;
    ds.numMetrics = (size_t)c->ncoll;
    ds.maxNumOfRanges = maxr;
    ds.maxNumRangeTreeNodes = (uint32_t)maxr;
    if ((r = cuptiRangeProfilerGetCounterDataSize(&ds)) != CUPTI_SUCCESS)
        return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerGetCounterDataSize", r));
    if (ds.counterDataSize > c->cdata_size) {
        uint8_t *b = realloc(c->cdata, ds.counterDataSize);
        if (!b) return collect_fail(obj, 0, 0, tb_fail(msg, len, TB_ENOMEM, "out of memory"));
        c->cdata = b;
        c->cdata_size = ds.counterDataSize;
    }
    size_t csize = ds.counterDataSize;
    memset(c->cdata, 0, csize);
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci;
    memset(&ci, 0, sizeof ci);
    ci.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    ci.pRangeProfilerObject = obj;
    ci.counterDataSize = csize;
    ci.pCounterData = c->cdata;
    if ((r = cuptiRangeProfilerCounterDataImageInitialize(&ci)) != CUPTI_SUCCESS)
        return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerCounterDataImageInitialize", r));

    CUpti_RangeProfiler_SetConfig_Params sc;
    memset(&sc, 0, sizeof sc);
    sc.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
    sc.pRangeProfilerObject = obj;
    sc.configSize = c->config_size;
    sc.pConfig = c->config;
    sc.counterDataImageSize = csize;
    sc.pCounterDataImage = c->cdata;
    sc.range = c->user_range ? CUPTI_UserRange : CUPTI_AutoRange;
    sc.replayMode = CUPTI_UserReplay;
    sc.maxRangesPerPass = maxr;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    if ((r = cuptiRangeProfilerSetConfig(&sc)) != CUPTI_SUCCESS)
        return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerSetConfig", r));

    int limit = c->passes_needed + 2;
    if (limit > MAX_PASSES) limit = MAX_PASSES;
    int npass = 0;
    for (;;) {
        if (npass >= limit)
            return collect_fail(obj, 0, 0, tb_fail(msg, len, TB_ECUDA, "CUPTI wanted more than "
                                "%d passes (%d expected)", limit, c->passes_needed));
        if (prep) prep(ctx);
        cudaError_t ce = cudaDeviceSynchronize();
        if (ce != cudaSuccess)
            return collect_fail(obj, 0, 0, tb_fail(msg, len, TB_ECUDA, "before pass %d: %s",
                                                   npass + 1, cudaGetErrorString(ce)));
        CUpti_RangeProfiler_Start_Params st;
        memset(&st, 0, sizeof st);
        st.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
        st.pRangeProfilerObject = obj;
        if ((r = cuptiRangeProfilerStart(&st)) != CUPTI_SUCCESS)
            return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerStart", r));
        int pushed = 0;
        if (c->user_range) {
            CUpti_RangeProfiler_PushRange_Params pr;
            memset(&pr, 0, sizeof pr);
            pr.structSize = CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE;
            pr.pRangeProfilerObject = obj;
            pr.pRangeName = "tb";
            if ((r = cuptiRangeProfilerPushRange(&pr)) != CUPTI_SUCCESS)
                return collect_fail(obj, 1, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerPushRange", r));
            pushed = 1;
        }
        int lrc = launch(ctx);
        ce = cudaDeviceSynchronize();
        if (ce == cudaSuccess) ce = cudaGetLastError();
        if (lrc)
            return collect_fail(obj, 1, pushed, tb_fail(msg, len, TB_EWORKER, "launch returned %d "
                                "in pass %d", lrc, npass + 1));
        if (ce != cudaSuccess)
            return collect_fail(obj, 1, pushed, tb_fail(msg, len, TB_ECUDA, "kernel failed in "
                                "pass %d: %s", npass + 1, cudaGetErrorString(ce)));
        if (pushed) {
            CUpti_RangeProfiler_PopRange_Params pp;
            memset(&pp, 0, sizeof pp);
            pp.structSize = CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE;
            pp.pRangeProfilerObject = obj;
            if ((r = cuptiRangeProfilerPopRange(&pp)) != CUPTI_SUCCESS)
                return collect_fail(obj, 1, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerPopRange", r));
        }
        CUpti_RangeProfiler_Stop_Params sp;
        memset(&sp, 0, sizeof sp);
        sp.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
        sp.pRangeProfilerObject = obj;
        if ((r = cuptiRangeProfilerStop(&sp)) != CUPTI_SUCCESS)
            return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerStop", r));
        npass++;
        if (sp.isAllPassSubmitted) break;
    }

    CUpti_RangeProfiler_DecodeData_Params dd;
    memset(&dd, 0, sizeof dd);
    dd.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
    dd.pRangeProfilerObject = obj;
    if ((r = cuptiRangeProfilerDecodeData(&dd)) != CUPTI_SUCCESS)
        return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerDecodeData", r));
    if (dd.numOfRangeDropped)
        return collect_fail(obj, 0, 0, tb_fail(msg, len, TB_ECUDA, "the launch ran more than %d "
                            "kernels (%zu ranges dropped): use a user range",
                            (int)maxr, dd.numOfRangeDropped));
    CUpti_RangeProfiler_GetCounterDataInfo_Params di;
    memset(&di, 0, sizeof di);
    di.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
    di.pCounterDataImage = c->cdata;
    di.counterDataImageSize = csize;
    if ((r = cuptiRangeProfilerGetCounterDataInfo(&di)) != CUPTI_SUCCESS)
        return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiRangeProfilerGetCounterDataInfo", r));
    size_t nr = di.numTotalRanges;
    if (nr == 0)
        return collect_fail(obj, 0, 0, tb_fail(msg, len, TB_ECUDA, "no kernel ran in the profiled "
                            "range (did the launch use another context?)"));
    if (nr > maxr) nr = maxr;
    for (size_t k = 0; k < nr; k++) {
        if ((r = tb_host_eval(c->host, c->cdata, csize, k, c->coll, (size_t)c->ncoll,
                              c->rvals + k * (size_t)c->ncoll)) != CUPTI_SUCCESS)
            return collect_fail(obj, 0, 0, tb_cupti_fail(msg, len, "cuptiProfilerHostEvaluateToGpuValues", r));
    }
    rp_disable(obj);

    /* the kernels of one launch into one value per metric */
    double tot_dur = 0;
    for (size_t k = 0; k < nr && c->dur_slot >= 0; k++) tot_dur += c->rvals[k * c->ncoll + c->dur_slot];
    for (int i = 0; i < c->n; i++) {
        int j = c->slot[i];
        if (j < 0) continue;
        int kind = combine_kind(c->coll[j]);
        double v = c->rvals[j], wsum = 0, acc = 0;
        for (size_t k = 0; k < nr; k++) {
            double x = c->rvals[k * c->ncoll + j];
            if (kind == 's') acc += x;
            else if (kind == 'M') acc = k ? fmax(acc, x) : x;
            else if (kind == 'm') acc = k ? fmin(acc, x) : x;
            else {
                double w = c->dur_slot >= 0 && tot_dur > 0 ? c->rvals[k * c->ncoll + c->dur_slot] : 1.0;
                acc += w * x;
                wsum += w;
            }
        }
        values[i] = nr == 1 ? v : kind == 'w' ? (wsum > 0 ? acc / wsum : NAN) : acc;
    }
    c->kernels = (int)nr;

    /* the pm: metrics: one more pass, sampled in time and cut to the kernels' window */
    if (c->pms) {
        int pr = tb_pms_collect(c->pms, launch, prep, ctx, c->dur_slot >= 0 ? tot_dur : 0,
                                c->pm_vals, &c->pm_info, msg, len);
        if (pr == TB_OK) {
            npass++;
            for (int i = 0; i < c->n; i++)
                if (c->pm_of[i] >= 0) values[i] = c->pm_vals[c->pm_of[i]];
        } else {
            cudaError_t ce = cudaDeviceSynchronize();
            if (pr == TB_EWORKER || ce != cudaSuccess) {
                for (int i = 0; i < c->n; i++) values[i] = NAN;
                if (ce != cudaSuccess && pr != TB_EWORKER)
                    return tb_fail(msg, len, TB_ECUDA, "in the PM-sampled pass: %s", cudaGetErrorString(ce));
                return pr;
            }
            /* the sampler failed on its own: its metrics are unavailable from now on */
            for (int i = 0; i < c->n; i++)
                if (c->pm_of[i] >= 0)
                    snprintf(c->why[i], sizeof c->why[i], "PM sampling failed: %.360s", msg);
            tb_pms_close(c->pms);
            c->pms = NULL;
            if (msg && len) msg[0] = 0;
        }
    }
    if (passes) *passes = npass;
    return TB_OK;
}

/* ---- the rest ---------------------------------------------------------------------------- */

void tb_counters_user_range(tb_counters *c, int on) { if (c) c->user_range = on != 0; }
int tb_counters_count(const tb_counters *c) { return c ? c->n : 0; }
const char *tb_counters_name(const tb_counters *c, int i)
{
    return c && i >= 0 && i < c->n ? c->name[i] : "";
}
int tb_counters_available(const tb_counters *c, int i, char *why, size_t len)
{
    if (!c || i < 0 || i >= c->n) return tb_fail(why, len, 0, "no such metric");
    if (c->pm_of[i] >= 0 && c->pms && tb_pms_available(c->pms, c->pm_of[i], why, len)) return 1;
    if (c->slot[i] >= 0) { if (why && len) why[0] = 0; return 1; }
    if (why && len) snprintf(why, len, "%s", c->why[i]);
    return 0;
}
const char *tb_counters_chip(const tb_counters *c) { return c ? c->chip : ""; }
int tb_counters_passes_needed(const tb_counters *c) { return c ? c->passes_needed : 0; }
int tb_counters_kernels(const tb_counters *c) { return c ? c->kernels : 0; }

const tb_pms *tb_counters_pms(const tb_counters *c, tb_pms_info *info)
{
    if (c && info) *info = c->pm_info;
    return c ? c->pms : NULL;
}

void tb_counters_close(tb_counters *c)
{
    if (!c) return;
    tb_pms_close(c->pms);
    tb_host_free(c->host);
    if (c->initialized) {
        CUpti_Profiler_DeInitialize_Params p;
        memset(&p, 0, sizeof p);
        p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
        cuptiProfilerDeInitialize(&p);
    }
    for (int i = 0; i < c->n; i++) free(c->given[i]);
    free(c->avail_img);
    free(c->config);
    free(c->cdata);
    free(c->rvals);
    free(c);
}

/* The sets. Names checked against GH100's metric list on the H100 (docs/counters.md); an
 * entry the chip lacks is reported unavailable, not an error. GH100 has no hardware counter
 * for ldmatrix conflicts alone (only sm__sass_..._op_ldsm, which needs SASS patching) and no
 * sm__pipe_tensor_op_gmma_cycles_active: its fp16/bf16/fp8 tensor pipe, mma.sync and wgmma
 * alike, is sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active. */
#define M_LD "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
#define M_ST "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
#define M_GMMA "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum"
#define M_LDGSTS "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"
#define M_WAVES "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
#define M_INST "smsp__inst_executed.sum"
#define M_DRAM_RD "dram__bytes_read.sum"
#define M_DRAM_WR "dram__bytes_write.sum"
#define M_L2HIT "lts__t_sector_hit_rate.pct"
/* the same bytes PM-sampled over the kernel's own window (ncu's): without what the L2 writes
 * back after the kernel, which the range profiler's figures hold */
#define M_PM_RD "pm:dram__bytes_read.sum"
#define M_PM_WR "pm:dram__bytes_write.sum"
#define M_TENSOR_PIPE "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active" \
    "|sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
#define M_GMMA_INST "sm__inst_executed_pipe_tensor_op_gmma.sum"
#define M_HMMA_INST "sm__inst_executed_pipe_tensor_op_hmma.sum"
#define M_SM_TP "sm__throughput.avg.pct_of_peak_sustained_elapsed"
#define M_TIME "gpu__time_duration.sum"

static const char *const set_banks[] = { M_LD, M_ST, M_GMMA, M_LDGSTS, M_WAVES, M_INST, NULL };
static const char *const set_memory[] = { M_DRAM_RD, M_DRAM_WR, M_L2HIT, M_PM_RD, M_PM_WR, NULL };
static const char *const set_compute[] = { M_TENSOR_PIPE, M_GMMA_INST, M_HMMA_INST, M_SM_TP, M_TIME, NULL };
static const char *const set_all[] = { M_LD, M_ST, M_GMMA, M_LDGSTS, M_WAVES, M_INST, M_DRAM_RD,
    M_DRAM_WR, M_L2HIT, M_PM_RD, M_PM_WR, M_TENSOR_PIPE, M_GMMA_INST, M_HMMA_INST, M_SM_TP, M_TIME, NULL };

const char *const *tb_counters_set(const char *name)
{
    if (!name) return NULL;
    if (strcmp(name, "banks") == 0) return set_banks;
    if (strcmp(name, "memory") == 0) return set_memory;
    if (strcmp(name, "compute") == 0) return set_compute;
    if (strcmp(name, "all") == 0) return set_all;
    return NULL;
}

const char *tb_counters_unit(const char *metric)
{
    char first[256];
    if (!metric) return "";
    snprintf(first, sizeof first, "%s", metric);
    char *bar = strchr(first, '|');
    if (bar) *bar = 0;
    int per_s = strstr(first, ".per_second") != NULL;
    if (strstr(first, "pct")) return "%";
    if (strstr(first, "bytes")) return per_s ? "bytes/s" : "bytes";
    if (strstr(first, "bank_conflicts") || strstr(first, "wavefronts")) return "wavefronts";
    if (strstr(first, "sectors")) return per_s ? "sectors/s" : "sectors";
    if (strstr(first, "requests")) return "requests";
    if (strstr(first, "inst_executed") || strstr(first, "inst_issued")) return "inst";
    if (strstr(first, "time_duration")) return "ns";
    if (strstr(first, "cycles")) return "cycles";
    return "";
}
