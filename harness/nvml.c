/* nvml.c - the few NVML calls tilebench needs, declared here and loaded with dlopen so
 * nothing links against libnvidia-ml (the build machine has neither nvml.h nor the
 * library). Types follow NVML's ABI: handles are opaque pointers, return codes ints. */
#define _GNU_SOURCE
#include "nvml.h"
#include "tb.h"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*fn_void)(void);
typedef int (*fn_count)(unsigned *);
typedef int (*fn_by_index)(unsigned, void **);
typedef int (*fn_by_pci)(const char *, void **);
typedef int (*fn_str)(void *, char *, unsigned);
typedef int (*fn_sys_str)(char *, unsigned);
typedef int (*fn_clock)(void *, int, unsigned *);
typedef int (*fn_uint)(void *, unsigned *);
typedef int (*fn_ull)(void *, unsigned long long *);
typedef const char *(*fn_errstr)(int);
typedef struct { unsigned pid; unsigned long long used; unsigned gi, ci; } proc_info;
typedef int (*fn_procs)(void *, unsigned *, proc_info *);

static struct {
    void *h;
    int ready;
    fn_void shutdown;
    fn_count count;
    fn_by_index by_index;
    fn_by_pci by_pci;
    fn_str name, uuid;
    fn_sys_str driver;
    fn_clock clock, max_clock;
    fn_uint power_limit;
    fn_ull reasons;
    fn_procs procs;
    fn_errstr errstr;
} N;

#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2

static void *sym(const char *a, const char *b)
{
    void *p = dlsym(N.h, a);
    if (!p && b) p = dlsym(N.h, b);
    return p;
}

static const char *err(int rc)
{
    return N.errstr ? N.errstr(rc) : "nvml error";
}

int tb_nvml_open(char *msg, size_t len)
{
    if (N.ready) return TB_OK;
    N.h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!N.h) return tb_fail(msg, len, TB_ENOGPU, "cannot load libnvidia-ml.so.1 (no NVIDIA driver?)");
    fn_void init = (fn_void)sym("nvmlInit_v2", "nvmlInit");
    N.shutdown = (fn_void)sym("nvmlShutdown", NULL);
    N.count = (fn_count)sym("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    N.by_index = (fn_by_index)sym("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    N.by_pci = (fn_by_pci)sym("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    N.name = (fn_str)sym("nvmlDeviceGetName", NULL);
    N.uuid = (fn_str)sym("nvmlDeviceGetUUID", NULL);
    N.driver = (fn_sys_str)sym("nvmlSystemGetDriverVersion", NULL);
    N.clock = (fn_clock)sym("nvmlDeviceGetClockInfo", NULL);
    N.max_clock = (fn_clock)sym("nvmlDeviceGetMaxClockInfo", NULL);
    N.power_limit = (fn_uint)sym("nvmlDeviceGetEnforcedPowerLimit", NULL);
    N.reasons = (fn_ull)sym("nvmlDeviceGetCurrentClocksEventReasons",
                            "nvmlDeviceGetCurrentClocksThrottleReasons");
    N.procs = (fn_procs)sym("nvmlDeviceGetComputeRunningProcesses_v3",
                            "nvmlDeviceGetComputeRunningProcesses_v2");
    N.errstr = (fn_errstr)sym("nvmlErrorString", NULL);
    if (!init || !N.count || !N.by_index) {
        dlclose(N.h);
        N.h = NULL;
        return tb_fail(msg, len, TB_ENOGPU, "libnvidia-ml.so.1 lacks nvmlInit/nvmlDeviceGetCount");
    }
    int rc = init();
    if (rc != 0) {
        const char *e = err(rc);
        dlclose(N.h);
        N.h = NULL;
        return tb_fail(msg, len, TB_ENOGPU, "nvmlInit failed: %s", e);
    }
    N.ready = 1;
    return TB_OK;
}

void tb_nvml_close(void)
{
    if (!N.ready) return;
    if (N.shutdown) N.shutdown();
    N.ready = 0;
}

int tb_nvml_device_count(unsigned *n, char *msg, size_t len)
{
    if (!N.ready) return tb_fail(msg, len, TB_ENOGPU, "nvml not loaded");
    int rc = N.count(n);
    return rc ? tb_fail(msg, len, TB_ECUDA, "nvmlDeviceGetCount: %s", err(rc)) : TB_OK;
}

int tb_nvml_device_by_index(unsigned i, tb_nvml_dev **d, char *msg, size_t len)
{
    if (!N.ready) return tb_fail(msg, len, TB_ENOGPU, "nvml not loaded");
    int rc = N.by_index(i, (void **)d);
    return rc ? tb_fail(msg, len, TB_ECUDA, "nvml device %u: %s", i, err(rc)) : TB_OK;
}

int tb_nvml_device_by_pci(const char *pci, tb_nvml_dev **d, char *msg, size_t len)
{
    if (!N.ready || !N.by_pci) return tb_fail(msg, len, TB_ENOGPU, "nvml not loaded");
    int rc = N.by_pci(pci, (void **)d);
    return rc ? tb_fail(msg, len, TB_ECUDA, "nvml device %s: %s", pci, err(rc)) : TB_OK;
}

int tb_nvml_name(tb_nvml_dev *d, char *buf, size_t n)
{
    return N.name && N.name(d, buf, (unsigned)n) == 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_uuid(tb_nvml_dev *d, char *buf, size_t n)
{
    return N.uuid && N.uuid(d, buf, (unsigned)n) == 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_driver_version(char *buf, size_t n)
{
    return N.ready && N.driver && N.driver(buf, (unsigned)n) == 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_clocks(tb_nvml_dev *d, int *sm, int *sm_max, int *mem)
{
    unsigned v;
    *sm = *sm_max = *mem = -1;
    if (!N.ready || !N.clock) return TB_ECUDA;
    if (N.clock(d, NVML_CLOCK_SM, &v) == 0) *sm = (int)v;
    if (N.max_clock && N.max_clock(d, NVML_CLOCK_SM, &v) == 0) *sm_max = (int)v;
    if (N.clock(d, NVML_CLOCK_MEM, &v) == 0) *mem = (int)v;
    return TB_OK;
}

int tb_nvml_power_limit_mw(tb_nvml_dev *d, int *mw)
{
    unsigned v;
    *mw = -1;
    if (!N.ready || !N.power_limit || N.power_limit(d, &v) != 0) return TB_ECUDA;
    *mw = (int)v;
    return TB_OK;
}

int tb_nvml_throttle_reasons(tb_nvml_dev *d, unsigned long long *mask)
{
    return N.ready && N.reasons && N.reasons(d, mask) == 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_compute_pids(tb_nvml_dev *d, int *pids, unsigned max, unsigned *n)
{
    proc_info info[64];
    unsigned cnt = 64;
    *n = 0;
    if (!N.ready || !N.procs) return TB_ECUDA;
    int rc = N.procs(d, &cnt, info);
    if (rc != 0) return TB_ECUDA;
    for (unsigned i = 0; i < cnt && i < 64; i++) {
        if (*n < max) pids[*n] = (int)info[i].pid;
        (*n)++;
    }
    return TB_OK;
}

int tb_nvml_pid_on_gpu(int pid, int *present, char *msg, size_t len)
{
    unsigned count;
    *present = 0;
    int rc = tb_nvml_device_count(&count, msg, len);
    if (rc) return rc;
    for (unsigned i = 0; i < count; i++) {
        tb_nvml_dev *d;
        int pids[64];
        unsigned n;
        if (tb_nvml_device_by_index(i, &d, msg, len) != TB_OK) continue;
        if (tb_nvml_compute_pids(d, pids, 64, &n) != TB_OK) continue;
        for (unsigned j = 0; j < n && j < 64; j++)
            if (pids[j] == pid) *present = 1;
    }
    return TB_OK;
}
