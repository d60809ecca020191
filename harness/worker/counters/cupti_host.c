/* cupti_host.c - the CUPTI profiler host object (see cupti_host.h). Compiled with
 * harness/cupti_c/ on the include path (cupti_profiler_host.h includes <string>). */
#include "worker/counters/cupti_host.h"
#include <stdlib.h>
#include <string.h>

CUptiResult tb_host_new(CUpti_ProfilerType type, const char *chip, const uint8_t *avail,
                        CUpti_Profiler_Host_Object **out)
{
    CUpti_Profiler_Host_Initialize_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    p.profilerType = type;
    p.pChipName = chip;
    p.pCounterAvailabilityImage = avail;
    CUptiResult r = cuptiProfilerHostInitialize(&p);
    *out = r == CUPTI_SUCCESS ? p.pHostObject : NULL;
    return r;
}

void tb_host_free(CUpti_Profiler_Host_Object *h)
{
    if (!h) return;
    CUpti_Profiler_Host_Deinitialize_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = h;
    cuptiProfilerHostDeinitialize(&p);
}

CUptiResult tb_host_add(CUpti_Profiler_Host_Object *h, const char **names, size_t n)
{
    CUpti_Profiler_Host_ConfigAddMetrics_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
    p.pHostObject = h;
    p.ppMetricNames = names;
    p.numMetrics = n;
    return cuptiProfilerHostConfigAddMetrics(&p);
}

CUptiResult tb_host_config(CUpti_Profiler_Host_Object *h, uint8_t **img, size_t *size)
{
    CUpti_Profiler_Host_GetConfigImageSize_Params s;
    memset(&s, 0, sizeof s);
    s.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
    s.pHostObject = h;
    CUptiResult r = cuptiProfilerHostGetConfigImageSize(&s);
    if (r != CUPTI_SUCCESS) return r;
    uint8_t *b = calloc(s.configImageSize ? s.configImageSize : 1, 1);
    if (!b) return CUPTI_ERROR_OUT_OF_MEMORY;
    CUpti_Profiler_Host_GetConfigImage_Params g;
    memset(&g, 0, sizeof g);
    g.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
    g.pHostObject = h;
    g.configImageSize = s.configImageSize;
    g.pConfigImage = b;
    r = cuptiProfilerHostGetConfigImage(&g);
    if (r != CUPTI_SUCCESS) { free(b); return r; }
    *img = b;
    *size = s.configImageSize;
    return CUPTI_SUCCESS;
}

CUptiResult tb_host_metric(CUpti_Profiler_Host_Object *h, const char *name)
{
    CUpti_Profiler_Host_GetMetricProperties_Params p;
    memset(&p, 0, sizeof p);
    p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
    p.pHostObject = h;
    p.pMetricName = name;
    return cuptiProfilerHostGetMetricProperties(&p);
}

CUptiResult tb_host_eval(CUpti_Profiler_Host_Object *h, const uint8_t *img, size_t size,
                         size_t index, const char **names, size_t n, double *out)
{
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev;
    memset(&ev, 0, sizeof ev);
    ev.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    ev.pHostObject = h;
    ev.pCounterDataImage = img;
    ev.counterDataImageSize = size;
    ev.rangeIndex = index;
    ev.ppMetricNames = names;
    ev.numMetrics = n;
    ev.pMetricValues = out;
    return cuptiProfilerHostEvaluateToGpuValues(&ev);
}
