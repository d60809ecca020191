/* counters_collect.c - one collect of the range profiler (see counters.h): enable, the
 * counter-data image, the passes of user replay around the caller's prep() and launch(), the
 * decode, the evaluation per range and the combination over ranges (sums, maxima, minima,
 * duration-weighted ratios), then the "pm:" metrics in one more pass (pmsampling.c). The
 * object is opened and closed by counters.c. */
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
        tb__rp_disable(obj);
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
    if ((r = tb__rp_enable(c->ctx, &obj)) != CUPTI_SUCCESS)
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
    tb__rp_disable(obj);

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
