/* env.c - the environment record and the --device spelling of tilebench-worker (see env.h):
 * the CUDA device's properties, NVML's clocks, power limit and other processes, the
 * versions of the driver, CUDA, cuBLAS and CUPTI, the host. */
#define _GNU_SOURCE
#include "worker/env.h"
#include "common/tb.h"
#include "common/nvml.h"
#include "reference/ref.h"
#include "worker/worker_common.h"
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

int tbw_collect_env(int device, tb_environment *e, char *msg, size_t len)
{
    struct cudaDeviceProp p;
    memset(e, 0, sizeof *e);
    cudaError_t ce = cudaGetDeviceProperties(&p, device);
    if (ce != cudaSuccess)
        return tb_fail(msg, len, TB_ENOGPU, "no usable GPU %d: %s", device, cudaGetErrorString(ce));
    snprintf(e->gpu_name, sizeof e->gpu_name, "%s", p.name);
    tbw_uuid(&p, e->gpu_uuid, sizeof e->gpu_uuid);
    snprintf(e->pci_bus_id, sizeof e->pci_bus_id, "%08X:%02X:%02X.0", p.pciDomainID, p.pciBusID,
             p.pciDeviceID);
    e->cc_major = p.major;
    e->cc_minor = p.minor;
    e->sm_count = p.multiProcessorCount;
    e->l2_bytes = p.l2CacheSize;
    e->mem_bytes = (int64_t)p.totalGlobalMem;
    cudaDriverGetVersion(&e->cuda_driver_version);
    cudaRuntimeGetVersion(&e->cuda_runtime_version);
    e->cublas_version = (int)tb_ref_cublas_version();
    uint32_t cv = 0;
    e->cupti_version = cuptiGetVersion(&cv) == CUPTI_SUCCESS ? (int)cv : -1;
    e->sm_clock_max_mhz = e->sm_clock_mhz = e->mem_clock_mhz = e->power_limit_mw = -1;
    char nm[TB_MSG_LEN];
    tb_nvml_dev *nd;
    int max_clk_attr = 0;
    cudaDeviceGetAttribute(&max_clk_attr, cudaDevAttrClockRate, device);
    if (tb_nvml_open(nm, sizeof nm) == TB_OK &&
        tb_nvml_device_by_pci(e->pci_bus_id, &nd, nm, sizeof nm) == TB_OK) {
        tb_nvml_clocks(nd, &e->sm_clock_mhz, &e->sm_clock_max_mhz, &e->mem_clock_mhz);
        tb_nvml_power_limit_mw(nd, &e->power_limit_mw);
        tb_nvml_driver_version(e->driver_version, sizeof e->driver_version);
        int pids[64];
        unsigned np = 0, others = 0;
        char plist[256] = "";
        size_t at = 0;
        if (tb_nvml_compute_pids(nd, pids, 64, &np) == TB_OK)
            for (unsigned i = 0; i < np && i < 64; i++)
                if (pids[i] != (int)getpid()) {
                    others++;
                    if (at < sizeof plist - 16)
                        at += (size_t)snprintf(plist + at, sizeof plist - at, "%s%d", at ? "," : "", pids[i]);
                }
        unsigned long long reasons = 0;
        tb_nvml_throttle_reasons(nd, &reasons);
        snprintf(e->extra_json, sizeof e->extra_json, "{\"nvml\":true,\"cuda_clock_rate_khz\":%d,"
                 "\"other_processes\":%u,\"other_pids\":[%s],\"clock_event_reasons\":%llu}",
                 max_clk_attr, others, plist, reasons);
    } else {
        snprintf(e->extra_json, sizeof e->extra_json, "{\"nvml\":false,\"cuda_clock_rate_khz\":%d}",
                 max_clk_attr);
        if (max_clk_attr > 0) e->sm_clock_max_mhz = max_clk_attr / 1000;
    }
    gethostname(e->hostname, sizeof e->hostname - 1);
    struct utsname un;
    if (uname(&un) == 0) snprintf(e->os, sizeof e->os, "%s %s %s", un.sysname, un.release, un.machine);
    return TB_OK;
}

/* --device: an index, or a UUID ("GPU-...") matched against every CUDA device's. */
int tbw_resolve_device(const char *spec, int *dev, char *msg, size_t len)
{
    if (strncmp(spec, "GPU-", 4) != 0) { *dev = atoi(spec); return TB_OK; }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    for (int i = 0; i < n; i++) {
        tb_environment e;
        char m2[TB_MSG_LEN];
        if (tbw_collect_env(i, &e, m2, sizeof m2) == TB_OK && strcasecmp(e.gpu_uuid, spec) == 0) {
            *dev = i;
            return TB_OK;
        }
    }
    return tb_fail(msg, len, TB_ENOGPU, "no GPU with UUID %s (%d devices)", spec, n);
}
