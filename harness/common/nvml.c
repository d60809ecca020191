/* nvml.c - the few NVML calls tilebench needs, declared here and loaded with dlopen so
 * nothing links against libnvidia-ml (the build machine has neither nvml.h nor the
 * library). Types follow NVML's ABI: handles are opaque pointers, return codes ints. */
#define _GNU_SOURCE
#include "common/nvml.h"
#include "common/tb.h"
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
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
typedef int (*fn_uint2)(void *, unsigned *, unsigned *);
typedef int (*fn_enable)(void *, int *);            /* nvmlEnableState_t * */
typedef int (*fn_enable2)(void *, int *, int *);
/* nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it (busIdLegacy first; the older layout
 * with busId first and four reserved words belongs to _v1/_v2) */
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci_info;
typedef int (*fn_pci)(void *, pci_info *);
typedef struct { unsigned long long referenceTime, violationTime; } violation_time;
typedef int (*fn_violation)(void *, int, violation_time *);

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
    fn_by_pci by_uuid;
    fn_pci pci;
    fn_uint power;
    fn_ull energy;
    fn_clock temperature, app_clock;
    fn_enable2 ecc;
    fn_uint2 mig;
    fn_enable persistence;
    fn_violation violation;
} N;

#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0

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
    N.by_uuid = (fn_by_pci)sym("nvmlDeviceGetHandleByUUID", NULL);
    N.pci = (fn_pci)sym("nvmlDeviceGetPciInfo_v3", NULL);
    N.power = (fn_uint)sym("nvmlDeviceGetPowerUsage", NULL);
    N.energy = (fn_ull)sym("nvmlDeviceGetTotalEnergyConsumption", NULL);
    N.temperature = (fn_clock)sym("nvmlDeviceGetTemperature", NULL);
    N.app_clock = (fn_clock)sym("nvmlDeviceGetApplicationsClock", NULL);
    N.ecc = (fn_enable2)sym("nvmlDeviceGetEccMode", NULL);
    N.mig = (fn_uint2)sym("nvmlDeviceGetMigMode", NULL);
    N.persistence = (fn_enable)sym("nvmlDeviceGetPersistenceMode", NULL);
    N.violation = (fn_violation)sym("nvmlDeviceGetViolationStatus", NULL);
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

/* ---- environment, power and clock-event queries (the sampler's and the recorder's) ---- */

int tb_nvml_loaded(void)
{
    return N.ready;
}

int tb_nvml_device_by_uuid(const char *uuid, tb_nvml_dev **d, char *msg, size_t len)
{
    if (!N.ready) return tb_fail(msg, len, TB_ENOGPU, "nvml not loaded");
    if (!N.by_uuid)
        return tb_fail(msg, len, TB_ECUDA, "libnvidia-ml.so.1 lacks nvmlDeviceGetHandleByUUID");
    char full[96];
    int bare = strncmp(uuid, "GPU-", 4) != 0 && strncmp(uuid, "MIG-", 4) != 0;
    snprintf(full, sizeof full, "%s%s", bare ? "GPU-" : "", uuid);
    int rc = N.by_uuid(full, (void **)d);
    return rc ? tb_fail(msg, len, TB_ECUDA, "no nvml device with uuid '%s': %s", full, err(rc))
              : TB_OK;
}

int tb_nvml_pci_bus_id(tb_nvml_dev *d, char *buf, size_t n)
{
    pci_info p;
    memset(&p, 0, sizeof p);
    if (!N.ready || !N.pci || N.pci(d, &p) != 0) return TB_ECUDA;
    p.busId[sizeof p.busId - 1] = 0;
    snprintf(buf, n, "%s", p.busId);
    return TB_OK;
}

/* "[domain:]bus:device[.function]" in hex -> 0 and the four numbers, or -1 */
static int parse_pci(const char *s, unsigned long v[4])
{
    unsigned long part[3];
    int np = 0;
    const char *p = s;
    for (;;) {
        char *end;
        if (!isxdigit((unsigned char)*p)) return -1;
        part[np++] = strtoul(p, &end, 16);
        p = end;
        if (*p != ':' || np == 3) break;
        p++;
    }
    if (np < 2) return -1;
    v[0] = np == 3 ? part[0] : 0;
    v[1] = part[np - 2];
    v[2] = part[np - 1];
    v[3] = 0;
    if (*p == '.') {
        char *end;
        if (!isxdigit((unsigned char)p[1])) return -1;
        v[3] = strtoul(p + 1, &end, 16);
        p = end;
    }
    return *p ? -1 : 0;
}

int tb_nvml_pci_same(const char *a, const char *b)
{
    unsigned long x[4], y[4];
    if (!a || !b || parse_pci(a, x) || parse_pci(b, y)) return 0;
    return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

int tb_nvml_sm_clock(tb_nvml_dev *d, int *mhz)
{
    unsigned v;
    *mhz = -1;
    if (!N.ready || !N.clock || N.clock(d, NVML_CLOCK_SM, &v) != 0) return TB_ECUDA;
    *mhz = (int)v;
    return TB_OK;
}

int tb_nvml_power_mw(tb_nvml_dev *d, int *mw)
{
    unsigned v;
    *mw = -1;
    if (!N.ready || !N.power || N.power(d, &v) != 0) return TB_ECUDA;
    *mw = (int)v;
    return TB_OK;
}

int tb_nvml_energy_mj(tb_nvml_dev *d, unsigned long long *mj)
{
    return N.ready && N.energy && N.energy(d, mj) == 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_temperature(tb_nvml_dev *d, int *c)
{
    unsigned v;
    *c = -1;
    if (!N.ready || !N.temperature || N.temperature(d, NVML_TEMPERATURE_GPU, &v) != 0)
        return TB_ECUDA;
    *c = (int)v;
    return TB_OK;
}

int tb_nvml_ecc_mode(tb_nvml_dev *d, int *current, int *pending)
{
    int c, p;
    *current = *pending = -1;
    if (!N.ready || !N.ecc || N.ecc(d, &c, &p) != 0) return TB_ECUDA;
    *current = c != 0;
    *pending = p != 0;
    return TB_OK;
}

int tb_nvml_mig_mode(tb_nvml_dev *d, int *current, int *pending)
{
    unsigned c, p;
    *current = *pending = -1;
    if (!N.ready || !N.mig || N.mig(d, &c, &p) != 0) return TB_ECUDA;
    *current = c != 0;
    *pending = p != 0;
    return TB_OK;
}

int tb_nvml_persistence_mode(tb_nvml_dev *d, int *on)
{
    int v;
    *on = -1;
    if (!N.ready || !N.persistence || N.persistence(d, &v) != 0) return TB_ECUDA;
    *on = v != 0;
    return TB_OK;
}

int tb_nvml_app_clocks(tb_nvml_dev *d, int *sm, int *mem)
{
    unsigned v;
    *sm = *mem = -1;
    if (!N.ready || !N.app_clock) return TB_ECUDA;
    if (N.app_clock(d, NVML_CLOCK_SM, &v) == 0) *sm = (int)v;
    if (N.app_clock(d, NVML_CLOCK_MEM, &v) == 0) *mem = (int)v;
    return *sm >= 0 || *mem >= 0 ? TB_OK : TB_ECUDA;
}

int tb_nvml_violation_ns(tb_nvml_dev *d, int policy, unsigned long long *ns)
{
    violation_time t = { 0, 0 };
    if (!N.ready || !N.violation || N.violation(d, policy, &t) != 0) return TB_ECUDA;
    *ns = t.violationTime;
    return TB_OK;
}
