/* resources.c - kernel resources from CUPTI activity records (see resources.h).
 *
 * Owns the activity API: the buffer callbacks (CUPTI hands full buffers back, possibly on its
 * own thread, so the table of kernels seen is guarded by a mutex), enabling and disabling
 * CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (which, unlike ..._KERNEL, does not serialise
 * kernels), and turning records into distinct tb_kernel_res entries with launch counts.
 * The callbacks are registered once per process, on the first start.
 */
#define _POSIX_C_SOURCE 200809L
#include "resources.h"
#include "tb.h"
#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_result.h>
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
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
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
    pthread_mutex_lock(&res_lock);
    res_active = 0;
    int have = res_n < RES_MAX ? res_n : RES_MAX;
    for (int i = 0; i < have && i < max; i++) out[i] = res_tab[i];
    if (n) *n = res_n;
    size_t dropped = res_dropped;
    pthread_mutex_unlock(&res_lock);
    if (rc == TB_OK && dropped)
        rc = tb_fail(msg, len, TB_EIO, "CUPTI dropped %zu kernel records", dropped);
    return rc;
}
