/* nvml.h - NVML loaded at run time (dlopen "libnvidia-ml.so.1"); the only module that
 * touches NVML. It is not CUDA: the parent may use it (doctor, waiting for a killed worker's
 * context to go). Every function returns TB_OK or a TB_E* code with a message; when NVML
 * is absent, tb_nvml_open fails and callers carry on without it. */
#ifndef TB_NVML_H
#define TB_NVML_H
#include <stddef.h>

typedef struct tb_nvml_dev tb_nvml_dev;   /* an nvmlDevice_t */

/* Idempotent. Open before starting any thread that uses NVML (a sampler) and close only after
 * such threads have ended: the loaded symbol table is read without locks. */
int tb_nvml_open(char *msg, size_t len);
void tb_nvml_close(void);
int tb_nvml_device_count(unsigned *n, char *msg, size_t len);
int tb_nvml_device_by_index(unsigned i, tb_nvml_dev **d, char *msg, size_t len);
int tb_nvml_device_by_pci(const char *pci_bus_id, tb_nvml_dev **d, char *msg, size_t len);
int tb_nvml_name(tb_nvml_dev *d, char *buf, size_t n);
int tb_nvml_uuid(tb_nvml_dev *d, char *buf, size_t n);
int tb_nvml_driver_version(char *buf, size_t n);
/* Clocks in MHz; -1 where NVML does not say. */
int tb_nvml_clocks(tb_nvml_dev *d, int *sm, int *sm_max, int *mem);
int tb_nvml_power_limit_mw(tb_nvml_dev *d, int *mw);
/* Current clock-event (throttle) reasons bitmask, or TB_ECUDA. */
int tb_nvml_throttle_reasons(tb_nvml_dev *d, unsigned long long *mask);

/* The bits of that mask (NVML's nvmlClocksEventReason*, formerly ...ThrottleReason*). */
#define TB_NVML_REASON_GPU_IDLE                    0x1ull
#define TB_NVML_REASON_APPLICATIONS_CLOCKS_SETTING 0x2ull
#define TB_NVML_REASON_SW_POWER_CAP                0x4ull
#define TB_NVML_REASON_HW_SLOWDOWN                 0x8ull
#define TB_NVML_REASON_SYNC_BOOST                  0x10ull
#define TB_NVML_REASON_SW_THERMAL_SLOWDOWN         0x20ull
#define TB_NVML_REASON_HW_THERMAL_SLOWDOWN         0x40ull
#define TB_NVML_REASON_HW_POWER_BRAKE_SLOWDOWN     0x80ull
#define TB_NVML_REASON_DISPLAY_CLOCK_SETTING       0x100ull
/* "Throttled" means one of these: hardware slowdown, thermal (software or hardware), power
 * brake. The software power cap (SW_POWER_CAP) is recorded but is not throttling: a big GEMM
 * normally runs at its power limit, and that is the clock it is entitled to. */
#define TB_NVML_THROTTLE_MASK (TB_NVML_REASON_HW_SLOWDOWN | TB_NVML_REASON_SW_THERMAL_SLOWDOWN | \
                               TB_NVML_REASON_HW_THERMAL_SLOWDOWN | \
                               TB_NVML_REASON_HW_POWER_BRAKE_SLOWDOWN)

/* Perf policies of tb_nvml_violation_ns (NVML's nvmlPerfPolicyType_t). */
#define TB_NVML_POLICY_POWER             0
#define TB_NVML_POLICY_THERMAL           1
#define TB_NVML_POLICY_SYNC_BOOST        2
#define TB_NVML_POLICY_BOARD_LIMIT       3
#define TB_NVML_POLICY_LOW_UTILIZATION   4
#define TB_NVML_POLICY_RELIABILITY       5
#define TB_NVML_POLICY_TOTAL_APP_CLOCKS  10
#define TB_NVML_POLICY_TOTAL_BASE_CLOCKS 11

/* 1 when tb_nvml_open has succeeded (and tb_nvml_close not been called since). */
int tb_nvml_loaded(void);
/* Device by UUID: NVML's "GPU-xxxxxxxx-..." form; a bare "xxxxxxxx-..." gets "GPU-" put in
 * front. TB_ENOGPU when NVML is not loaded, TB_ECUDA when no device has that UUID. */
int tb_nvml_device_by_uuid(const char *uuid, tb_nvml_dev **d, char *msg, size_t len);
/* NVML's PCI bus id, "00000000:1B:00.0" (8-digit domain; CUDA writes "0000:1b:00.0": compare
 * them with tb_nvml_pci_same, not strcmp). */
int tb_nvml_pci_bus_id(tb_nvml_dev *d, char *buf, size_t n);
/* 1 when two PCI bus ids "[domain:]bus:device[.function]" (hex, any case, any zero padding)
 * name the same device; 0 when they differ or either does not parse. Pure; needs no NVML. */
int tb_nvml_pci_same(const char *a, const char *b);

/* The functions below return TB_OK, or TB_ECUDA when NVML is not loaded, lacks the symbol or
 * the call fails (e.g. not supported on this GPU); outputs are then -1 (or left alone for the
 * unsigned long long ones). Safe to call from a sampler thread while others use NVML too. */
/* Current SM clock in MHz: one NVML call (tb_nvml_clocks makes three). */
int tb_nvml_sm_clock(tb_nvml_dev *d, int *mhz);
/* Power draw in milliwatts (nvmlDeviceGetPowerUsage; on Ampere and newer, except GA100, NVML
 * averages it over one second). */
int tb_nvml_power_mw(tb_nvml_dev *d, int *mw);
/* Energy used since the driver was loaded, millijoules (nvmlDeviceGetTotalEnergyConsumption;
 * Volta and newer). Take deltas over windows long against its update period. */
int tb_nvml_energy_mj(tb_nvml_dev *d, unsigned long long *mj);
/* GPU core temperature in degrees C (sensor 0). */
int tb_nvml_temperature(tb_nvml_dev *d, int *c);
/* ECC mode now and after the next reboot: 1 on, 0 off. */
int tb_nvml_ecc_mode(tb_nvml_dev *d, int *current, int *pending);
/* MIG mode now and after the next reset: 1 on, 0 off. */
int tb_nvml_mig_mode(tb_nvml_dev *d, int *current, int *pending);
/* Persistence mode: 1 on, 0 off. */
int tb_nvml_persistence_mode(tb_nvml_dev *d, int *on);
/* Application clocks (the clocks a kernel gets unless something holds it below), MHz. */
int tb_nvml_app_clocks(tb_nvml_dev *d, int *sm, int *mem);
/* Cumulative time, in nanoseconds, that policy (TB_NVML_POLICY_*) held the clocks down
 * (nvmlDeviceGetViolationStatus); take deltas. */
int tb_nvml_violation_ns(tb_nvml_dev *d, int policy, unsigned long long *ns);
/* *present = 1 when pid runs a compute context on any GPU NVML sees. */
int tb_nvml_pid_on_gpu(int pid, int *present, char *msg, size_t len);
/* Number of compute processes on the device, their pids in pids[0..max). */
int tb_nvml_compute_pids(tb_nvml_dev *d, int *pids, unsigned max, unsigned *n);
#endif
