/* resources.c - kernel resources from CUPTI activity records (see resources.h).
 *
 * Owns the activity API: the buffer callbacks (CUPTI hands full buffers back, possibly on its
 * own thread, so the table of kernels seen is guarded by a mutex), enabling and disabling
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (which, unlike ..._KERNEL, does not serialise
 * kernels), and turning records into distinct tb_kernel_res entries with launch counts.
 * The callbacks are registered once per process, on the first start.
 *
 * Local memory per thread does not come from the activity record (CUPTI 13's
 * localMemoryPerThread read 0 on the H100 for a kernel using 256 bytes): a callback on the
 * launch APIs (runtime cudaLaunchKernel*, driver cuLaunchKernel*) asks the launched function
 * itself (cudaFuncGetAttributes / cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)),
 * by kernel name. The callback subscriber exists only between start and stop, so it never
 * meets the range profiler.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/counters/resources.h"
#include "common/tb.h"
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <cupti_result.h>
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RES_MAX 256                  /* distinct kernels kept per collection */
#define RES_BUF_BYTES (4u << 20)     /* one activity buffer */

static pthread_mutex_t res_lock = PTHREAD_MUTEX_INITIALIZER;
static tb_kernel_res res_tab[RES_MAX];
static int res_n;                    /* distinct kernels seen (may pass RES_MAX) */
static size_t res_dropped;           /* records CUPTI could not store */
static int res_registered, res_active;

/* local memory per thread by kernel name, from the launch callback */
#define LOC_MAX 64
static struct { char name[256]; int bytes; } loc_tab[LOC_MAX];
static int loc_n;
static CUpti_SubscriberHandle loc_sub;
static int loc_subscribed;
typedef CUresult (*func_attr_fn)(int *, CUfunction_attribute, CUfunction);
/* The leading fields of the launch APIs' parameter blocks, as CUPTI's generated_cuda_meta.h
 * and generated_cuda_runtime_api_meta.h lay them out (those headers do not compile as C):
 * cuLaunchKernel(_ptsz) and cuLaunchCooperativeKernel(_ptsz) begin with the CUfunction,
 * cuLaunchKernelEx(_ptsz) with the config and then the CUfunction; likewise the runtime's
 * cudaLaunchKernel / cudaLaunchCooperativeKernel (func first) and cudaLaunchKernelExC
 * (config, then func). */
typedef struct { CUfunction f; } drv_launch_params;
typedef struct { const void *config; CUfunction f; } drv_launch_ex_params;
typedef struct { const void *func; } rt_launch_params;
typedef struct { const void *config; const void *func; } rt_launch_ex_params;
static func_attr_fn p_cuFuncGetAttribute;

static void loc_put(const char *name, int bytes)
{
    pthread_mutex_lock(&res_lock);
    int i = 0;
    while (i < loc_n && strcmp(loc_tab[i].name, name)) i++;
    if (i == loc_n && loc_n < LOC_MAX) snprintf(loc_tab[loc_n++].name, sizeof loc_tab[0].name, "%s", name);
    if (i < loc_n) loc_tab[i].bytes = bytes;
    pthread_mutex_unlock(&res_lock);
}

static void CUPTIAPI launch_cb(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId id,
                               const void *data)
{
    (void)ud;
    const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
    if (!cb || cb->callbackSite != CUPTI_API_ENTER || !cb->symbolName || !cb->functionParams) return;
    int bytes = -1;
    if (dom == CUPTI_CB_DOMAIN_DRIVER_API) {
        CUfunction f = NULL;
        switch (id) {
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
            f = ((const drv_launch_params *)cb->functionParams)->f; break;
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
            f = ((const drv_launch_params *)cb->functionParams)->f; break;
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
            f = ((const drv_launch_ex_params *)cb->functionParams)->f; break;
        default: return;
        }
        int v = 0;
        if (f && p_cuFuncGetAttribute &&
            p_cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS)
            bytes = v;
    } else if (dom == CUPTI_CB_DOMAIN_RUNTIME_API) {
        const void *fn = NULL;
        switch (id) {
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
            fn = ((const rt_launch_params *)cb->functionParams)->func; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
            fn = ((const rt_launch_params *)cb->functionParams)->func; break;
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
        case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
            fn = ((const rt_launch_ex_params *)cb->functionParams)->func; break;
        default: return;
        }
        struct cudaFuncAttributes a;
        if (fn && cudaFuncGetAttributes(&a, fn) == cudaSuccess) bytes = (int)a.localSizeBytes;
    }
    if (bytes >= 0) loc_put(cb->symbolName, bytes);
}

/* Subscribe the launch callback (best effort: without it local memory stays as the activity
 * record has it). */
static void loc_start(void)
{
    loc_n = 0;
    if (!p_cuFuncGetAttribute) {
        void *p = NULL;
        enum cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuFuncGetAttribute", &p, 12000, cudaEnableDefault, &q) ==
                cudaSuccess && q == cudaDriverEntryPointSuccess)
            p_cuFuncGetAttribute = (func_attr_fn)p;
    }
    if (cuptiSubscribe(&loc_sub, (CUpti_CallbackFunc)launch_cb, NULL) != CUPTI_SUCCESS) return;
    loc_subscribed = 1;
    cuptiEnableDomain(1, loc_sub, CUPTI_CB_DOMAIN_DRIVER_API);
    cuptiEnableDomain(1, loc_sub, CUPTI_CB_DOMAIN_RUNTIME_API);
}

static void loc_stop(void)
{
    if (loc_subscribed) cuptiUnsubscribe(loc_sub);
    loc_subscribed = 0;
}

static void CUPTIAPI buf_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, RES_BUF_BYTES) != 0) p = NULL;
    *buffer = p;
    *size = p ? RES_BUF_BYTES : 0;
    *max_records = 0;   /* as many as fit */
}

static void add_kernel(const CUpti_ActivityKernel10 *k)
{
    tb_kernel_res r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", k->name ? k->name : "?");
    r.grid[0] = k->gridX; r.grid[1] = k->gridY; r.grid[2] = k->gridZ;
    r.block[0] = k->blockX; r.block[1] = k->blockY; r.block[2] = k->blockZ;
    r.cluster[0] = (int)k->clusterX; r.cluster[1] = (int)k->clusterY; r.cluster[2] = (int)k->clusterZ;
    r.regs = k->registersPerThread;
    r.static_smem = k->staticSharedMemory;
    r.dynamic_smem = k->dynamicSharedMemory;
    r.local_per_thread = (int)k->localMemoryPerThread;
    int lim = res_n < RES_MAX ? res_n : RES_MAX;
    for (int i = 0; i < lim; i++) {
        tb_kernel_res *e = &res_tab[i];
        if (strcmp(e->name, r.name) == 0 && !memcmp(e->grid, r.grid, sizeof r.grid) &&
            !memcmp(e->block, r.block, sizeof r.block) && !memcmp(e->cluster, r.cluster, sizeof r.cluster) &&
            e->regs == r.regs && e->static_smem == r.static_smem &&
            e->dynamic_smem == r.dynamic_smem && e->local_per_thread == r.local_per_thread) {
            e->count++;
            return;
        }
    }
    r.count = 1;
    if (res_n < RES_MAX) res_tab[res_n] = r;
    res_n++;
}

static void CUPTIAPI buf_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
                                   size_t valid)
{
    CUpti_Activity *rec = NULL;
    pthread_mutex_lock(&res_lock);
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (res_active && (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
                           rec->kind == CUPTI_ACTIVITY_KIND_KERNEL))
            add_kernel((const CUpti_ActivityKernel10 *)(const void *)rec);
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
        res_dropped += dropped;
    pthread_mutex_unlock(&res_lock);
    (void)size;
    free(buffer);
}

static int res_fail(char *msg, size_t len, const char *call, CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return tb_fail(msg, len, TB_ENOGPU, "%s failed: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED "
                       "(%s): another profiler holds CUPTI", call, s);
    return tb_fail(msg, len, r == CUPTI_ERROR_NOT_SUPPORTED ? TB_ENOGPU : TB_ECUDA,
                   "%s failed: %s (CUPTI error %d)", call, s, (int)r);
}

int tb_resources_start(char *msg, size_t len)
{
    if (res_active) return tb_fail(msg, len, TB_EUSAGE, "kernel resources are already being recorded");
    CUptiResult r;
    if (!res_registered) {
        r = cuptiActivityRegisterCallbacks(buf_requested, buf_completed);
        if (r != CUPTI_SUCCESS) return res_fail(msg, len, "cuptiActivityRegisterCallbacks", r);
        res_registered = 1;
    }
    /* deliver whatever an earlier collection left, before the table is cleared */
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&res_lock);
    res_n = 0;
    res_dropped = 0;
    res_active = 1;
    pthread_mutex_unlock(&res_lock);
    loc_start();
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        loc_stop();
        pthread_mutex_lock(&res_lock);
        res_active = 0;
        pthread_mutex_unlock(&res_lock);
        return res_fail(msg, len, "cuptiActivityEnable(CONCURRENT_KERNEL)", r);
    }
    return TB_OK;
}

int tb_resources_stop(tb_kernel_res *out, int max, int *n, char *msg, size_t len)
{
    if (n) *n = 0;
    if (!res_active) return tb_fail(msg, len, TB_EUSAGE, "kernel resources are not being recorded");
    int rc = TB_OK;
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess)
        rc = tb_fail(msg, len, TB_ECUDA, "cannot synchronise the device: %s", cudaGetErrorString(ce));
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS && rc == TB_OK) rc = res_fail(msg, len, "cuptiActivityFlushAll", r);
    r = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS && rc == TB_OK) rc = res_fail(msg, len, "cuptiActivityDisable", r);
    loc_stop();
    pthread_mutex_lock(&res_lock);
    res_active = 0;
    int have = res_n < RES_MAX ? res_n : RES_MAX;
    for (int i = 0; i < have && i < max; i++) {
        out[i] = res_tab[i];
        for (int j = 0; j < loc_n; j++)
            if (!strcmp(loc_tab[j].name, out[i].name)) out[i].local_per_thread = loc_tab[j].bytes;
    }
    if (n) *n = res_n;
    size_t dropped = res_dropped;
    pthread_mutex_unlock(&res_lock);
    if (rc == TB_OK && dropped)
        rc = tb_fail(msg, len, TB_EIO, "CUPTI dropped %zu kernel records", dropped);
    return rc;
}
