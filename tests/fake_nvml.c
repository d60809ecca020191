/* fake_nvml.c - a stand-in libnvidia-ml.so.1 with one scripted GPU, so harness/common/nvml.c and
 * harness/worker/nvml_sampler.c can be tested on machines without one (tests/test_nvml_sampler.c
 * --fake). Built with soname libnvidia-ml.so.1: once the test has dlopen'ed it by path,
 * nvml.c's dlopen("libnvidia-ml.so.1") gets this library.
 *
 * Each reading is a function of how often it has been called (k = 0, 1, ...), so a test can
 * work out exactly what the sampler saw:
 *   SM clock      1500 MHz when k % 4 == 3, else 1980
 *   reasons       HW_SLOWDOWN when k % 4 == 3, SW_POWER_CAP when k % 5 == 0,
 *                 GPU_IDLE when k % 7 == 6, SW_THERMAL_SLOWDOWN when k % 11 == 10
 *   power         300000 + 1000 * (k % 10) mW
 *   temperature   60 + k % 7 C
 * and the counters follow the clock since nvmlInit: energy 1e12 mJ + 350 W, violation time
 * (power) 1e15 ns + half the time, (thermal) a quarter of the time.
 * fake_nvml_set / fake_nvml_get (not NVML) switch readings off, slow them down and read the
 * call counts.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define OK 0
#define NOT_SUPPORTED 3
#define INVALID_ARGUMENT 2
#define NOT_FOUND 6

#define EXPORT __attribute__((visibility("default")))

static struct { int dummy; } the_gpu;
static struct timespec t_init;
static long no_energy, no_power, fail_name, slow_ms;
static long sm_calls, reason_calls, power_calls, temp_calls, energy_calls;

EXPORT void fake_nvml_set(const char *key, long v)
{
    if (!strcmp(key, "no_energy")) no_energy = v;
    else if (!strcmp(key, "no_power")) no_power = v;
    else if (!strcmp(key, "fail_name")) fail_name = v;
    else if (!strcmp(key, "slow_ms")) slow_ms = v;
    else if (!strcmp(key, "reset")) sm_calls = reason_calls = power_calls = temp_calls = energy_calls = 0;
}

EXPORT long fake_nvml_get(const char *key)
{
    if (!strcmp(key, "sm_calls")) return sm_calls;
    if (!strcmp(key, "reason_calls")) return reason_calls;
    if (!strcmp(key, "power_calls")) return power_calls;
    if (!strcmp(key, "temp_calls")) return temp_calls;
    if (!strcmp(key, "energy_calls")) return energy_calls;
    return -1;
}

static unsigned long long ns_since_init(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (unsigned long long)((t.tv_sec - t_init.tv_sec) * 1000000000LL + (t.tv_nsec - t_init.tv_nsec));
}

static int dev_ok(void *d) { return d == &the_gpu; }

EXPORT int nvmlInit_v2(void) { clock_gettime(CLOCK_MONOTONIC, &t_init); return OK; }
EXPORT int nvmlShutdown(void) { return OK; }
EXPORT const char *nvmlErrorString(int rc)
{
    return rc == NOT_SUPPORTED ? "Not Supported" : rc == NOT_FOUND ? "Not Found" : "fake error";
}
EXPORT int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return OK; }
EXPORT int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    if (i != 0) return INVALID_ARGUMENT;
    *d = &the_gpu;
    return OK;
}
EXPORT int nvmlDeviceGetHandleByPciBusId_v2(const char *id, void **d)
{
    if (strcasecmp(id, "00000000:1B:00.0") && strcasecmp(id, "0000:1b:00.0")) return NOT_FOUND;
    *d = &the_gpu;
    return OK;
}
EXPORT int nvmlDeviceGetHandleByUUID(const char *uuid, void **d)
{
    if (strcmp(uuid, "GPU-fa4e0000-0000-0000-0000-000000000001")) return NOT_FOUND;
    *d = &the_gpu;
    return OK;
}
EXPORT int nvmlDeviceGetName(void *d, char *buf, unsigned n)
{
    if (!dev_ok(d) || fail_name) return NOT_FOUND;
    snprintf(buf, n, "tilebench fake gpu");
    return OK;
}
EXPORT int nvmlDeviceGetUUID(void *d, char *buf, unsigned n)
{
    if (!dev_ok(d)) return NOT_FOUND;
    snprintf(buf, n, "GPU-fa4e0000-0000-0000-0000-000000000001");
    return OK;
}
EXPORT int nvmlSystemGetDriverVersion(char *buf, unsigned n) { snprintf(buf, n, "0.fake"); return OK; }
EXPORT int nvmlDeviceGetClockInfo(void *d, int type, unsigned *mhz)
{
    if (!dev_ok(d)) return NOT_FOUND;
    if (type == 1) {
        long k = sm_calls++;
        *mhz = k % 4 == 3 ? 1500 : 1980;
    } else {
        *mhz = 2619;
    }
    return OK;
}
EXPORT int nvmlDeviceGetMaxClockInfo(void *d, int type, unsigned *mhz)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *mhz = type == 1 ? 1980 : 2619;
    return OK;
}
EXPORT int nvmlDeviceGetApplicationsClock(void *d, int type, unsigned *mhz)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *mhz = type == 1 ? 1755 : 2619;
    return OK;
}
EXPORT int nvmlDeviceGetEnforcedPowerLimit(void *d, unsigned *mw)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *mw = 700000;
    return OK;
}
EXPORT int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *r)
{
    if (!dev_ok(d)) return NOT_FOUND;
    long k = reason_calls++;
    *r = (k % 4 == 3 ? 0x8ull : 0) | (k % 5 == 0 ? 0x4ull : 0) | (k % 7 == 6 ? 0x1ull : 0) |
         (k % 11 == 10 ? 0x20ull : 0);
    return OK;
}
EXPORT int nvmlDeviceGetComputeRunningProcesses_v3(void *d, unsigned *n, void *info)
{
    (void)info;
    if (!dev_ok(d)) return NOT_FOUND;
    *n = 0;
    return OK;
}
EXPORT int nvmlDeviceGetPowerUsage(void *d, unsigned *mw)
{
    if (!dev_ok(d)) return NOT_FOUND;
    if (slow_ms) {
        struct timespec t = { slow_ms / 1000, (slow_ms % 1000) * 1000000L };
        nanosleep(&t, NULL);
    }
    if (no_power) return NOT_SUPPORTED;
    long k = power_calls++;
    *mw = 300000 + 1000 * (unsigned)(k % 10);
    return OK;
}
EXPORT int nvmlDeviceGetTotalEnergyConsumption(void *d, unsigned long long *mj)
{
    if (!dev_ok(d)) return NOT_FOUND;
    if (no_energy) return NOT_SUPPORTED;
    energy_calls++;
    *mj = 1000000000000ull + ns_since_init() * 350 / 1000000;   /* 350 W = 350 mJ/ms */
    return OK;
}
EXPORT int nvmlDeviceGetTemperature(void *d, int sensor, unsigned *c)
{
    if (!dev_ok(d) || sensor != 0) return NOT_FOUND;
    long k = temp_calls++;
    *c = 60 + (unsigned)(k % 7);
    return OK;
}
EXPORT int nvmlDeviceGetEccMode(void *d, int *cur, int *pend)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *cur = 1, *pend = 0;
    return OK;
}
EXPORT int nvmlDeviceGetMigMode(void *d, unsigned *cur, unsigned *pend)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *cur = 0, *pend = 1;
    return OK;
}
EXPORT int nvmlDeviceGetPersistenceMode(void *d, int *on)
{
    if (!dev_ok(d)) return NOT_FOUND;
    *on = 1;
    return OK;
}
typedef struct { unsigned long long referenceTime, violationTime; } viol;
EXPORT int nvmlDeviceGetViolationStatus(void *d, int policy, viol *v)
{
    if (!dev_ok(d)) return NOT_FOUND;
    unsigned long long ns = ns_since_init();
    if (policy == 0) v->violationTime = 1000000000000000ull + ns / 2;
    else if (policy == 1) v->violationTime = ns / 4;
    else return NOT_SUPPORTED;
    v->referenceTime = ns / 1000;
    return OK;
}
/* the v3 layout: busIdLegacy[16], five unsigned, busId[32] */
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} pci;
EXPORT int nvmlDeviceGetPciInfo_v3(void *d, pci *p)
{
    if (!dev_ok(d)) return NOT_FOUND;
    memset(p, 0, sizeof *p);
    snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:1B:00.0");
    p->domain = 0, p->bus = 0x1b, p->device = 0;
    p->pciDeviceId = 0x233010DE, p->pciSubSystemId = 0x16C110DE;
    snprintf(p->busId, sizeof p->busId, "00000000:1B:00.0");
    return OK;
}
