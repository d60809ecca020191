/* pmsampling.c - counters sampled in time, cut to the kernels' window (see pmsampling.h).
 *
 * The sequence:
 *   open:    cuptiPmSamplingGetCounterAvailability (size, then data) -> cuptiProfilerHost-
 *            Initialize(PM_SAMPLING) -> per metric GetMetricProperties (alternatives) ->
 *            ConfigAddMetrics (the metrics and the busy metric) -> config image -> a trial
 *            cuptiPmSamplingEnable/Disable (permissions show up there)
 *   collect: prep, sync -> Enable -> SetConfig (interval in ns, GPU time trigger; a longer
 *            interval or the sysclk trigger when refused) -> counter-data size and image ->
 *            Start -> launch -> sync -> idle tail -> Stop -> DecodeData until the end of the
 *            records (evaluating and re-initialising the image whenever it fills) -> per
 *            sample GetSampleInfo and EvaluateToGpuValues -> Disable.
 * cupti_profiler_host.h includes <string>: compiled with harness/cupti_c/ on the include path.
 *
 * Invariant: between two calls PM sampling is disabled on the device.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/counters/pmsampling.h"
#include "worker/counters/cupti_err.h"
#include "worker/counters/cupti_host.h"
#include "common/tb.h"
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PMS_MAX 64
#define BUSY_METRIC "sm__cycles_active.sum|sm__cycles_active.avg|gr__cycles_active.sum"
#define FIRST_INTERVAL_NS 1000u       /* for launches up to 2 ms; longer ones: duration / 2000 */
#define KERNEL_SAMPLES 2000.0
#define RECORD_BYTES 16384.0          /* hardware buffer per sample: 64 MiB held ~6 700 on the H100,
                                         overflowed at ~17 600 */
#define LAST_INTERVAL_NS 128000u
#define TAIL_NS 200000L          /* idle time sampled after the launch has finished */

struct tb_pms {
    int device;
    char chip[64];
    int n;
    char name[PMS_MAX][160];
    char why[PMS_MAX][400];
    int slot[PMS_MAX];                  /* index into coll, -1 unavailable */
    const char *coll[PMS_MAX + 1];      /* sampled names; the busy metric last */
    int ncoll, busy_slot;
    char busy_name[64];
    uint8_t *avail;
    size_t avail_size;
    uint8_t *config;
    size_t config_size;
    CUpti_Profiler_Host_Object *host;
    /* the last collect */
    int ns, cap;
    uint64_t *t0, *t1;
    double *vals;                       /* ns x ncoll */
    double interval_ns;
};

static CUpti_Profiler_Host_Object *host_new(const tb_pms *p, CUptiResult *r)
{
    CUpti_Profiler_Host_Object *h = NULL;
    *r = tb_host_new(CUPTI_PROFILER_TYPE_PM_SAMPLING, p->chip, p->avail, &h);
    return h;
}

static int metric_known(CUpti_Profiler_Host_Object *h, const char *name)
{
    return tb_host_metric(h, name) != CUPTI_ERROR_INVALID_METRIC_NAME;
}

/* the first alternative of `given` the chip knows into out; 0 when none */
static int resolve(CUpti_Profiler_Host_Object *h, const char *given, char *out, size_t n)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", given);
    char *save = NULL;
    for (char *a = strtok_r(buf, "|", &save); a; a = strtok_r(NULL, "|", &save))
        if (metric_known(h, a)) { snprintf(out, n, "%s", a); return 1; }
    return 0;
}

/* A host object with `names` added, and its config image; CUPTI's result. */
static CUptiResult configure(tb_pms *p, const char **names, size_t n, CUpti_Profiler_Host_Object **hout,
                             uint8_t **img, size_t *size)
{
    CUptiResult r;
    CUpti_Profiler_Host_Object *h = host_new(p, &r);
    if (!h) return r;
    if ((r = tb_host_add(h, names, n)) == CUPTI_SUCCESS && img) r = tb_host_config(h, img, size);
    if (r != CUPTI_SUCCESS) { tb_host_free(h); return r; }
    *hout = h;
    return CUPTI_SUCCESS;
}

static CUpti_PmSampling_Object *enable(int device, CUptiResult *r)
{
    CUpti_PmSampling_Enable_Params ep;
    memset(&ep, 0, sizeof ep);
    ep.structSize = CUpti_PmSampling_Enable_Params_STRUCT_SIZE;
    ep.deviceIndex = (size_t)device;
    *r = cuptiPmSamplingEnable(&ep);
    return *r == CUPTI_SUCCESS ? ep.pPmSamplingObject : NULL;
}

static void disable(CUpti_PmSampling_Object *o)
{
    if (!o) return;
    CUpti_PmSampling_Disable_Params dp;
    memset(&dp, 0, sizeof dp);
    dp.structSize = CUpti_PmSampling_Disable_Params_STRUCT_SIZE;
    dp.pPmSamplingObject = o;
    cuptiPmSamplingDisable(&dp);
}

int tb_pms_open(int device, const char *chip, const char *const *metrics, int n, tb_pms **out,
                char *msg, size_t len)
{
    char t[200];
    *out = NULL;
    if (n <= 0 || n >= PMS_MAX) return tb_fail(msg, len, TB_EUSAGE, "PM sampling: %d metrics", n);
    tb_pms *p = calloc(1, sizeof *p);
    if (!p) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    p->device = device;
    p->n = n;
    p->busy_slot = -1;
    snprintf(p->chip, sizeof p->chip, "%s", chip);
    int rc;
    CUptiResult r;

    CUpti_PmSampling_GetCounterAvailability_Params ap;
    memset(&ap, 0, sizeof ap);
    ap.structSize = CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE;
    ap.deviceIndex = (size_t)device;
    if ((r = cuptiPmSamplingGetCounterAvailability(&ap)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiPmSamplingGetCounterAvailability", r);
        goto err;
    }
    p->avail_size = ap.counterAvailabilityImageSize;
    p->avail = calloc(p->avail_size ? p->avail_size : 1, 1);
    if (!p->avail) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); goto err; }
    ap.pCounterAvailabilityImage = p->avail;
    if ((r = cuptiPmSamplingGetCounterAvailability(&ap)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiPmSamplingGetCounterAvailability", r);
        goto err;
    }

    CUpti_Profiler_Host_Object *h = host_new(p, &r);
    if (!h) { rc = tb_cupti_fail(msg, len, "cuptiProfilerHostInitialize (PM sampling)", r); goto err; }
    int have_busy = resolve(h, BUSY_METRIC, p->busy_name, sizeof p->busy_name);
    for (int i = 0; i < n; i++) {
        p->slot[i] = -1;
        snprintf(p->name[i], sizeof p->name[i], "%.159s", metrics[i]);
        if (!have_busy) {
            snprintf(p->why[i], sizeof p->why[i], "PM sampling on %s has none of '%s' to find the "
                     "kernel's window", p->chip, BUSY_METRIC);
            continue;
        }
        if (!resolve(h, metrics[i], p->name[i], sizeof p->name[i])) {
            snprintf(p->why[i], sizeof p->why[i], "'%s' cannot be PM-sampled on %s", metrics[i], p->chip);
            continue;
        }
        int j;
        for (j = 0; j < p->ncoll; j++) if (!strcmp(p->coll[j], p->name[i])) break;
        if (j == p->ncoll) p->coll[p->ncoll++] = p->name[i];
        p->slot[i] = j;
    }
    tb_host_free(h);
    if (p->ncoll == 0) {
        rc = tb_fail(msg, len, TB_ENOGPU, "nothing to PM-sample on %s: %s", p->chip, p->why[0]);
        goto err;
    }
    /* metrics the sampler refuses, one at a time, are dropped with the reason */
    for (int j = 0; j < p->ncoll; j++) {
        const char *pair[2] = { p->coll[j], p->busy_name };
        CUpti_Profiler_Host_Object *h1 = NULL;
        CUptiResult r1 = configure(p, pair, 2, &h1, NULL, NULL);
        tb_host_free(h1);
        if (r1 == CUPTI_SUCCESS) continue;
        for (int i = 0; i < n; i++)
            if (p->slot[i] == j)
                snprintf(p->why[i], sizeof p->why[i], "'%s' cannot be PM-sampled on %s: %s",
                         p->coll[j], p->chip, tb_cupti_text(r1, t, sizeof t));
        for (int i = 0; i < n; i++) {
            if (p->slot[i] == j) p->slot[i] = -1;
            else if (p->slot[i] > j) p->slot[i]--;
        }
        memmove(&p->coll[j], &p->coll[j + 1], (size_t)(p->ncoll - j - 1) * sizeof p->coll[0]);
        p->ncoll--;
        j--;
    }
    if (p->ncoll == 0) {
        rc = tb_fail(msg, len, TB_ENOGPU, "nothing to PM-sample on %s: %s", p->chip, p->why[0]);
        goto err;
    }
    p->busy_slot = p->ncoll;
    p->coll[p->ncoll++] = p->busy_name;
    if ((r = configure(p, p->coll, (size_t)p->ncoll, &p->host, &p->config, &p->config_size)) != CUPTI_SUCCESS) {
        rc = tb_cupti_fail(msg, len, "cuptiProfilerHostConfigAddMetrics (PM sampling, one pass)", r);
        goto err;
    }
    CUpti_PmSampling_Object *o = enable(device, &r);
    if (!o) { rc = tb_cupti_fail(msg, len, "cuptiPmSamplingEnable", r); goto err; }
    disable(o);
    *out = p;
    return TB_OK;
err:
    tb_pms_close(p);
    return rc;
}

const char *tb_pms_name(const tb_pms *p, int i) { return p && i >= 0 && i < p->n ? p->name[i] : ""; }

int tb_pms_available(const tb_pms *p, int i, char *why, size_t len)
{
    if (!p || i < 0 || i >= p->n) { if (why && len) snprintf(why, len, "no such metric"); return 0; }
    if (p->slot[i] >= 0) return 1;
    if (why && len) snprintf(why, len, "%s", p->why[i]);
    return 0;
}

/* Room for `need` samples in the last-collect arrays. */
static int grow(tb_pms *p, int need)
{
    if (need <= p->cap) return TB_OK;
    int cap = p->cap ? p->cap : 1024;
    while (cap < need) cap *= 2;
    uint64_t *a = realloc(p->t0, (size_t)cap * sizeof *a);
    if (a) p->t0 = a;
    uint64_t *b = realloc(p->t1, (size_t)cap * sizeof *b);
    if (b) p->t1 = b;
    double *v = realloc(p->vals, (size_t)cap * (size_t)p->ncoll * sizeof *v);
    if (v) p->vals = v;
    if (!a || !b || !v) return TB_ENOMEM;
    p->cap = cap;
    return TB_OK;
}

/* Evaluate the completed samples of one decoded image into the arrays. */
static int take_samples(tb_pms *p, CUpti_PmSampling_Object *o, uint8_t *img, size_t size, char *msg,
                        size_t len)
{
    CUptiResult r;
    CUpti_PmSampling_GetCounterDataInfo_Params ip;
    memset(&ip, 0, sizeof ip);
    ip.structSize = CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE;
    ip.pCounterDataImage = img;
    ip.counterDataImageSize = size;
    if ((r = cuptiPmSamplingGetCounterDataInfo(&ip)) != CUPTI_SUCCESS)
        return tb_cupti_fail(msg, len, "cuptiPmSamplingGetCounterDataInfo", r);
    int got = (int)ip.numCompletedSamples;
    if (grow(p, p->ns + got) != TB_OK) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    for (int k = 0; k < got; k++) {
        CUpti_PmSampling_CounterData_GetSampleInfo_Params sp;
        memset(&sp, 0, sizeof sp);
        sp.structSize = CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE;
        sp.pPmSamplingObject = o;
        sp.pCounterDataImage = img;
        sp.counterDataImageSize = size;
        sp.sampleIndex = (size_t)k;
        if ((r = cuptiPmSamplingCounterDataGetSampleInfo(&sp)) != CUPTI_SUCCESS)
            return tb_cupti_fail(msg, len, "cuptiPmSamplingCounterDataGetSampleInfo", r);
        if ((r = tb_host_eval(p->host, img, size, (size_t)k, p->coll, (size_t)p->ncoll,
                              p->vals + (size_t)p->ns * (size_t)p->ncoll)) != CUPTI_SUCCESS)
            return tb_cupti_fail(msg, len, "cuptiProfilerHostEvaluateToGpuValues (PM sample)", r);
        p->t0[p->ns] = sp.startTimestamp;
        p->t1[p->ns] = sp.endTimestamp;
        p->ns++;
    }
    return TB_OK;
}

static int image_init(CUpti_PmSampling_Object *o, uint8_t *img, size_t size)
{
    memset(img, 0, size);
    CUpti_PmSampling_CounterDataImage_Initialize_Params ci;
    memset(&ci, 0, sizeof ci);
    ci.structSize = CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE;
    ci.pPmSamplingObject = o;
    ci.counterDataSize = size;
    ci.pCounterData = img;
    return cuptiPmSamplingCounterDataImageInitialize(&ci);
}

static int fail_off(CUpti_PmSampling_Object *o, int started, uint8_t *img, int rc)
{
    if (started) {
        CUpti_PmSampling_Stop_Params st;
        memset(&st, 0, sizeof st);
        st.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
        st.pPmSamplingObject = o;
        cuptiPmSamplingStop(&st);
    }
    disable(o);
    free(img);
    return rc;
}

int tb_pms_collect(tb_pms *p, tb_pms_launch_fn launch, tb_pms_prepare_fn prep, void *ctx,
                   double expect_ns, double *values, tb_pms_info *info, char *msg,
                   size_t len)
{
    for (int i = 0; p && i < p->n; i++) values[i] = NAN;
    if (info) { memset(info, 0, sizeof *info); info->first = info->last = -1; }
    if (!p || !launch) return tb_fail(msg, len, TB_EUSAGE, "no PM sampler or no launch");
    p->ns = 0;
    /* the flush before the sampler is set up: the first sample gathers what the counters saw
     * since they were configured, and its start is not a trigger of ours */
    if (prep) prep(ctx);
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess)
        return tb_fail(msg, len, TB_ECUDA, "before the PM-sampled pass: %s", cudaGetErrorString(ce));
    CUptiResult r;
    CUpti_PmSampling_Object *o = enable(p->device, &r);
    if (!o) return tb_cupti_fail(msg, len, "cuptiPmSamplingEnable", r);

    /* the finest interval the sampler takes, no finer than the launch needs (a window edge is
     * one interval: 1/2000 of the launch); the GPU time trigger first */
    uint32_t interval = FIRST_INTERVAL_NS;
    while (expect_ns > 0 && interval < LAST_INTERVAL_NS && interval * KERNEL_SAMPLES < expect_ns) interval *= 2;
    CUpti_PmSampling_TriggerMode mode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    double span = (expect_ns > 0 ? expect_ns : 1e6) + (double)TAIL_NS + 2e6;   /* + launch, sync */
    for (;;) {
        double nsamp = span / interval + 1024;
        size_t hw = (size_t)(nsamp * RECORD_BYTES);
        if (hw < ((size_t)64 << 20)) hw = (size_t)64 << 20;
        if (hw > ((size_t)1 << 30)) hw = (size_t)1 << 30;
        CUpti_PmSampling_SetConfig_Params sc;
        memset(&sc, 0, sizeof sc);
        sc.structSize = CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE;
        sc.pPmSamplingObject = o;
        sc.configSize = p->config_size;
        sc.pConfig = p->config;
        sc.hardwareBufferSize = hw;
        sc.samplingInterval = interval;
        sc.triggerMode = mode;
        sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
        if ((r = cuptiPmSamplingSetConfig(&sc)) == CUPTI_SUCCESS) break;
        if (tb_cupti_systemic(r) && r != CUPTI_ERROR_NOT_SUPPORTED)
            return fail_off(o, 0, NULL, tb_cupti_fail(msg, len, "cuptiPmSamplingSetConfig", r));
        if (interval < LAST_INTERVAL_NS) { interval *= 2; continue; }
        if (mode == CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL) {
            mode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
            interval = FIRST_INTERVAL_NS;   /* sysclk cycles now */
            continue;
        }
        return fail_off(o, 0, NULL, tb_cupti_fail(msg, len, "cuptiPmSamplingSetConfig", r));
    }
    p->interval_ns = mode == CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL ? interval : NAN;

    double nsamp = span / interval + 1024;
    CUpti_PmSampling_GetCounterDataSize_Params ds;
    memset(&ds, 0, sizeof ds);
    ds.structSize = CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE;
    ds.pPmSamplingObject = o;
    ds.pMetricNames = p->coll;
    ds.numMetrics = (size_t)p->ncoll;
    ds.maxSamples = nsamp > 65536 ? 65536 : (uint32_t)nsamp;
    if ((r = cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS)
        return fail_off(o, 0, NULL, tb_cupti_fail(msg, len, "cuptiPmSamplingGetCounterDataSize", r));
    size_t isize = ds.counterDataSize;
    uint8_t *img = malloc(isize ? isize : 1);
    if (!img) return fail_off(o, 0, NULL, tb_fail(msg, len, TB_ENOMEM, "out of memory"));
    if ((r = image_init(o, img, isize)) != CUPTI_SUCCESS)
        return fail_off(o, 0, img, tb_cupti_fail(msg, len, "cuptiPmSamplingCounterDataImageInitialize", r));

    CUpti_PmSampling_Start_Params sp;
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_PmSampling_Start_Params_STRUCT_SIZE;
    sp.pPmSamplingObject = o;
    if ((r = cuptiPmSamplingStart(&sp)) != CUPTI_SUCCESS)
        return fail_off(o, 0, img, tb_cupti_fail(msg, len, "cuptiPmSamplingStart", r));
    int lrc = launch(ctx);
    ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (lrc)
        return fail_off(o, 1, img, tb_fail(msg, len, TB_EWORKER, "launch returned %d in the "
                                           "PM-sampled pass", lrc));
    if (ce != cudaSuccess)
        return fail_off(o, 1, img, tb_fail(msg, len, TB_ECUDA, "kernel failed in the PM-sampled "
                                           "pass: %s", cudaGetErrorString(ce)));
    struct timespec tail = { 0, TAIL_NS };
    nanosleep(&tail, NULL);
    CUpti_PmSampling_Stop_Params st;
    memset(&st, 0, sizeof st);
    st.structSize = CUpti_PmSampling_Stop_Params_STRUCT_SIZE;
    st.pPmSamplingObject = o;
    if ((r = cuptiPmSamplingStop(&st)) != CUPTI_SUCCESS)
        return fail_off(o, 0, img, tb_cupti_fail(msg, len, "cuptiPmSamplingStop", r));

    for (int round = 0;; round++) {
        CUpti_PmSampling_DecodeData_Params dd;
        memset(&dd, 0, sizeof dd);
        dd.structSize = CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE;
        dd.pPmSamplingObject = o;
        dd.pCounterDataImage = img;
        dd.counterDataImageSize = isize;
        if ((r = cuptiPmSamplingDecodeData(&dd)) != CUPTI_SUCCESS)
            return fail_off(o, 0, img, tb_cupti_fail(msg, len, "cuptiPmSamplingDecodeData", r));
        if (dd.overflow)
            return fail_off(o, 0, img, tb_fail(msg, len, TB_ECUDA, "PM sampling's hardware buffer "
                                               "overflowed (interval %u)", interval));
        int rc = take_samples(p, o, img, isize, msg, len);
        if (rc) return fail_off(o, 0, img, rc);
        if (dd.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) break;
        if (round > 64)
            return fail_off(o, 0, img, tb_fail(msg, len, TB_ECUDA, "PM sampling: more than %d "
                                               "samples", p->ns));
        if ((r = image_init(o, img, isize)) != CUPTI_SUCCESS)
            return fail_off(o, 0, img, tb_cupti_fail(msg, len, "cuptiPmSamplingCounterDataImageInitialize", r));
    }
    disable(o);
    free(img);

    /* The window: first to last sample in which the SMs were active. The first sample runs
     * from whenever the counters were configured (seconds before, on the H100) to the first
     * trigger after Start: unless it is one interval long it is left out. */
    int from = p->ns > 0 && (double)(p->t1[0] - p->t0[0]) > 2.0 * interval ? 1 : 0;
    int first = -1, last = -1;
    for (int k = from; k < p->ns; k++) {
        double b = p->vals[(size_t)k * p->ncoll + p->busy_slot];
        if (b > 0 && !isnan(b)) { if (first < 0) first = k; last = k; }
    }
    if (first < 0)
        return tb_fail(msg, len, TB_ECUDA, "PM sampling saw no SM activity in %d samples "
                       "(interval %u): the launch ran elsewhere or too briefly", p->ns, interval);
    for (int i = 0; i < p->n; i++) {
        int j = p->slot[i];
        if (j < 0) continue;
        double in = 0;
        for (int k = first; k <= last; k++) {
            double x = p->vals[(size_t)k * p->ncoll + j];
            if (!isnan(x)) in += x;
        }
        values[i] = in;
    }
    if (info) {
        info->samples = p->ns;
        info->first = first;
        info->last = last;
        info->interval_ns = p->interval_ns;
        info->window_ns = (double)(p->t1[last] - p->t0[first]);
    }
    return TB_OK;
}

int tb_pms_sample(const tb_pms *p, int k, uint64_t *start, uint64_t *end, double *busy,
                  double *values)
{
    if (!p || k < 0 || k >= p->ns) return TB_EUSAGE;
    const double *v = p->vals + (size_t)k * p->ncoll;
    if (start) *start = p->t0[k];
    if (end) *end = p->t1[k];
    if (busy) *busy = v[p->busy_slot];
    for (int i = 0; values && i < p->n; i++) values[i] = p->slot[i] >= 0 ? v[p->slot[i]] : NAN;
    return TB_OK;
}

void tb_pms_close(tb_pms *p)
{
    if (!p) return;
    tb_host_free(p->host);
    free(p->avail);
    free(p->config);
    free(p->t0);
    free(p->t1);
    free(p->vals);
    free(p);
}
