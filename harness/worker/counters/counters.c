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
 * harness/worker/counters/cupti_c/ on the include path, which holds an empty file named `string`.
 *
 * Invariant: between two calls the range profiler is disabled, so a failed collect leaves
 * nothing behind, and the counter availability image is only read while it is.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/counters/counters_int.h"
#include "worker/counters/cupti_err.h"
#include "worker/counters/cupti_host.h"
#include "common/tb.h"
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

/* ---- the range profiler object ----------------------------------------------------------- */

CUptiResult tb__rp_enable(CUcontext ctx, CUpti_RangeProfiler_Object **obj)
{
    CUpti_RangeProfiler_Enable_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    p.ctx = ctx;
    CUptiResult r = cuptiRangeProfilerEnable(&p);
    *obj = r == CUPTI_SUCCESS ? p.pRangeProfilerObject : NULL;
    return r;
}

void tb__rp_disable(CUpti_RangeProfiler_Object *obj)
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
    if ((r = tb__rp_enable(c->ctx, &obj)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiRangeProfilerEnable", r);
        goto err;
    }
    tb__rp_disable(obj);
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
