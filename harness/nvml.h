/* nvml.h - NVML loaded at run time (dlopen "libnvidia-ml.so.1"); the only module that
 * touches NVML. It is not CUDA: the parent may use it (doctor, waiting for a killed worker's
 * context to go). Every function returns TB_OK or a TB_E* code with a message; when NVML
 * is absent, tb_nvml_open fails and callers carry on without it. */
#ifndef TB_NVML_H
#define TB_NVML_H
#include <stddef.h>

typedef struct tb_nvml_dev tb_nvml_dev;   /* an nvmlDevice_t */

int tb_nvml_open(char *msg, size_t len);  /* idempotent */
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
/* *present = 1 when pid runs a compute context on any GPU NVML sees. */
int tb_nvml_pid_on_gpu(int pid, int *present, char *msg, size_t len);
/* Number of compute processes on the device, their pids in pids[0..max). */
int tb_nvml_compute_pids(tb_nvml_dev *d, int *pids, unsigned max, unsigned *n);
#endif
