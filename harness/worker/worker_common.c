/* worker_common.c - records to the parent and GPU UUIDs for every worker mode (see
 * worker_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "worker/worker_common.h"
#include "common/tb.h"
#include "common/wire.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

char *tbw_read_job(tb_linebuf *lb)
{
    for (;;) {
        char *line = tb_linebuf_next(lb);
        if (line) return line;
        if (tb_linebuf_fill(lb, 0) <= 0) return NULL;
    }
}

void tbw_send(int fd, cJSON *o)
{
    if (tb_wire_send(fd, o) != TB_OK) _exit(70);   /* the parent is gone */
    cJSON_Delete(o);
}

void tbw_send_simple(int fd, const char *type, const char *key, const char *val)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    if (key) cJSON_AddStringToObject(o, key, val ? val : "");
    tbw_send(fd, o);
}

int tbw_open_device(int device, char *msg, size_t len)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaFree(0);
    if (e != cudaSuccess)
        return tb_fail(msg, len, TB_ENOGPU, "cannot use GPU %d: %s", device, cudaGetErrorString(e));
    /* no persisting-L2 carve-out may survive from anything before us */
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    cudaGetLastError();
    return TB_OK;
}

void tbw_rest_ms(double ms)
{
    if (!(ms > 0)) return;
    if (ms > 1000) ms = 1000;
    struct timespec ts = { (time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6) };
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

void tbw_uuid(const struct cudaDeviceProp *p, char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(s, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
}

int tbw_find_device_uuid(const char *uuid, int *dev, char *msg, size_t len)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    for (int i = 0; i < n; i++) {
        struct cudaDeviceProp p;
        char s[64];
        if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
        tbw_uuid(&p, s, sizeof s);
        if (strcasecmp(s, uuid) == 0) { *dev = i; return TB_OK; }
    }
    return tb_fail(msg, len, TB_ENOGPU, "no GPU with UUID %s (%d devices)", uuid, n);
}
