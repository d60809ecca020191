/* worker_common.h - what every mode of tilebench-worker shares: sending a record to the
 * parent (the process exits when the parent is gone), and naming a GPU by its UUID in the
 * spelling the environment record stores ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"). */
#ifndef TB_WORKER_COMMON_H
#define TB_WORKER_COMMON_H

#include <stddef.h>
#include <cJSON.h>
#include <cuda_runtime_api.h>
#include "common/wire.h"

/* The job: the first line on stdin, kept in lb (free it with tb_linebuf_free); NULL when
 * stdin ends first. */
char *tbw_read_job(tb_linebuf *lb);
/* Send o as one wire line on fd and free it; _exit(70) when the parent is gone. */
void tbw_send(int fd, cJSON *o);
/* Send {"type": type} or {"type": type, key: val}. */
void tbw_send_simple(int fd, const char *type, const char *key, const char *val);
/* Make device current with its context created, and reset any persisting-L2 carve-out
 * something before us left. TB_OK, or TB_ENOGPU with "cannot use GPU N: ...". */
int tbw_open_device(int device, char *msg, size_t len);
/* Sleep ms milliseconds (at most 1 s; nothing for ms <= 0): the GPU rests, so its average
 * power stays under the cap (--pace, docs/method.md; the calibration's GEMM). */
void tbw_rest_ms(double ms);
/* p's UUID as "GPU-...". */
void tbw_uuid(const struct cudaDeviceProp *p, char *s, size_t n);
/* The CUDA device whose UUID is uuid (case-insensitive). TB_OK, or TB_ENOGPU naming it. */
int tbw_find_device_uuid(const char *uuid, int *dev, char *msg, size_t len);

#endif
