/* resources.h - what each kernel of a launch asked of the GPU, from CUPTI activity records.
 *
 * Owns the CUPTI activity API in tilebench (buffers, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
 * records). Between tb_resources_start() and tb_resources_stop() every kernel launched in the
 * process is recorded: name, grid, block, cluster, registers per thread, static and dynamic
 * shared memory, local memory per thread. No hardware counter is read, so this works where the
 * range profiler does not (no profiling permission), but not under another CUPTI subscriber.
 * Local memory is not the same as spills: a kernel may use local memory on purpose (an array
 * indexed at run time); the spills come from the build log (ptxas -v).
 *
 * One collection at a time per process (the activity API is process-wide).
 */
#ifndef TB_RESOURCES_H
#define TB_RESOURCES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_kernel_res {
    char name[256];         /* the kernel's (mangled) name, truncated to fit */
    int grid[3], block[3];
    int regs;               /* registers per thread */
    int static_smem;        /* bytes per block */
    int dynamic_smem;       /* bytes per block, as launched */
    int local_per_thread;   /* bytes */
    int count;              /* launches with exactly these fields */
    int cluster[3];         /* thread-block cluster dims (0 0 0 when none) */
} tb_kernel_res;

/* Start recording kernel launches. TB_OK; TB_ENOGPU when the activity API is unavailable
 * (another CUPTI subscriber: msg names CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
 * TB_EUSAGE when already started; TB_ECUDA on other CUPTI errors. */
int tb_resources_start(char *msg, size_t len);

/* Synchronise the device, stop recording and copy the distinct kernels seen since start
 * (in order of first launch; a kernel launched with two configurations appears twice) into
 * out[0..max): *n is how many were seen, which may exceed max (only max are written).
 * TB_OK; TB_EUSAGE when not started; TB_ECUDA when the device synchronisation or CUPTI
 * failed (recording is stopped anyway); TB_EIO when records were dropped (out still holds
 * what arrived). */
int tb_resources_stop(tb_kernel_res *out, int max, int *n, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
