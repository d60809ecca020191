/* env.h - the GPU and software environment as tilebench-worker sees it: the `env` mode's
 * record, and the first record of every measurement (GPU, clocks, power limit, driver, CUDA,
 * cuBLAS and CUPTI versions, other processes on the GPU, host); and a GPU named by its index
 * or its UUID resolved to a CUDA device (--device, a job's device_uuid). */
#ifndef TB_WORKER_ENV_H
#define TB_WORKER_ENV_H

#include <stddef.h>
#include "common/record.h"

/* Fill e for CUDA device `device`. TB_OK, or TB_ENOGPU with "no usable GPU N: ...". */
int tbw_collect_env(int device, tb_environment *e, char *msg, size_t len);
/* --device: an index, or a UUID ("GPU-...") matched against every CUDA device's. TB_OK, or
 * TB_ENOGPU naming the UUID. */
int tbw_resolve_device(const char *spec, int *dev, char *msg, size_t len);

#endif
