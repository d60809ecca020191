/* measure_cold.c - the "cold" method and what every method shares: the device context
 * (events, the mapped words of the blocking kernel and the clock stamps, the flush buffer),
 * one flushed sample behind the blocking kernel, the clock stamps, the hidden-work baseline,
 * the held launch of the stream-discipline check. */
#define _POSIX_C_SOURCE 200809L
#include "worker/measure.h"
#include "common/stats.h"
#include "common/tb.h"
#include "device/tbdev.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tb__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

#define CU(call) do { cudaError_t e_ = (cudaError_t)(call); if (e_ != cudaSuccess) \
    return tb_fail(msg, len, TB_ECUDA, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)

int tb_measure_dev_init(tb_measure_dev *d, cudaStream_t s, size_t l2_bytes, int use_block,
                        char *msg, size_t len)
{
    memset(d, 0, sizeof *d);
    d->s = s;
    d->use_block = use_block;
    d->block_timeout_ms = 500;
    const char *bt = getenv("TILEBENCH_BLOCK_TIMEOUT_MS");   /* tests force the timeout path */
    if (bt && atof(bt) > 0) d->block_timeout_ms = atof(bt);
    d->stamp_blocks = tbdev_clock_stamp_blocks();
    size_t fb = l2_bytes * 2;
    if (fb < (32u << 20)) fb = 32u << 20;
    fb = (fb + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
    d->flush_bytes = fb;
    void *p;
    CU(cudaMalloc(&p, fb));
    CU(cudaMemset(p, 0x5a, fb));
    d->flush_buf = p;
    CU(cudaMalloc((void **)&d->sink, 256));
    CU(cudaHostAlloc((void **)&d->host_words, 64, cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&d->dev_words, (void *)d->host_words, 0));
    CU(cudaHostAlloc((void **)&d->stamp_host, sizeof(unsigned long long) * 6 * (size_t)d->stamp_blocks,
                     cudaHostAllocMapped));
    CU(cudaHostGetDevicePointer((void **)&d->stamp_dev, (void *)d->stamp_host, 0));
    CU(cudaEventCreate(&d->e0));
    CU(cudaEventCreate(&d->e1));
    return TB_OK;
}

void tb_measure_dev_free(tb_measure_dev *d)
{
    if (d->e0) cudaEventDestroy(d->e0);
    if (d->e1) cudaEventDestroy(d->e1);
    if (d->flush_buf) cudaFree(d->flush_buf);
    if (d->sink) cudaFree(d->sink);
    if (d->host_words) cudaFreeHost((void *)d->host_words);
    if (d->stamp_host) cudaFreeHost(d->stamp_host);
    memset(d, 0, sizeof *d);
}

/* the parts before and after the timed region and the host clock (ms, monotonic), shared
 * with the graph and stream methods */
double tb__now_ms(void);
int tb__sample_open(tb_measure_dev *d, int flush, char *msg, size_t len);
int tb__sample_close(tb_measure_dev *d, double t0, tb_sample *out, char *msg, size_t len);

int tb__sample_open(tb_measure_dev *d, int flush, char *msg, size_t len)
{
    if (flush) CU(tbdev_l2_flush(d->flush_buf, d->flush_bytes, d->sink, d->s));
    if (d->use_block) {
        d->host_words[0] = 0;
        d->host_words[1] = 0;
        __sync_synchronize();
        CU(tbdev_block(d->dev_words, (unsigned long long)(d->block_timeout_ms * 1e6),
                       d->dev_words + 1, d->s));
    }
    CU(tbdev_clock_stamp(d->stamp_dev, d->stamp_blocks, d->s));
    CU(cudaEventRecord(d->e0, d->s));
    return TB_OK;
}

int tb__sample_close(tb_measure_dev *d, double t0, tb_sample *out, char *msg, size_t len)
{
    float f = 0;
    CU(cudaEventRecord(d->e1, d->s));
    CU(tbdev_clock_stamp(d->stamp_dev + 3 * d->stamp_blocks, d->stamp_blocks, d->s));
    if (d->use_block) {
        /* the wall clock starts at the release: the host's own launch cost (a library's
         * heuristics, say) is not work on the GPU, and must not count as hidden work */
        t0 = tb__now_ms();
        __sync_synchronize();
        d->host_words[0] = 1;     /* release: everything queued runs back to back */
        __sync_synchronize();
    }
    /* the whole device: work a variant left on another stream ends before the next sample */
    CU(cudaDeviceSynchronize());
    out->wall_ms = tb__now_ms() - t0;
    CU(cudaEventElapsedTime(&f, d->e0, d->e1));
    out->ms = f;
    out->clock_mhz = tbdev_stamps_mhz(d->stamp_host, d->stamp_host + 3 * d->stamp_blocks,
                                      d->stamp_blocks, NULL);
    out->block_timeout = d->use_block ? d->host_words[1] != 0 : 0;
    out->host_ms = NAN;
    return TB_OK;
}

int tb_sample_cold(tb_measure_dev *d, int flush, tb_launch_fn launch, void *ctx, tb_sample *out,
                   char *msg, size_t len)
{
    double t0 = tb__now_ms();
    int rc = tb__sample_open(d, flush, msg, len);
    if (rc) return rc;
    if (d->around) d->around(d->around_ctx, 1);
    int lrc = launch(ctx, d->s);
    if (d->around) d->around(d->around_ctx, 0);
    if (lrc) {
        if (d->use_block) d->host_words[0] = 1;   /* never leave the stream blocked */
        cudaDeviceSynchronize();
        return tb_fail(msg, len, TB_EWORKER, "launch returned %d", lrc);
    }
    return tb__sample_close(d, t0, out, msg, len);
}

int tb_run_held(tb_measure_dev *d, tb_launch_fn enqueue, void *ctx, double hold_ms,
                cudaStream_t side, tb_launch_fn probe, void *pctx, int *held, char *msg, size_t len)
{
    *held = 0;
    if (!d->use_block) return tb_fail(msg, len, TB_EUSAGE, "no blocking kernel to hold the stream");
    if (hold_ms * 2 > d->block_timeout_ms) hold_ms = d->block_timeout_ms / 2;
    d->host_words[0] = 0;
    d->host_words[1] = 0;
    __sync_synchronize();
    CU(tbdev_block(d->dev_words, (unsigned long long)(d->block_timeout_ms * 1e6), d->dev_words + 1,
                   d->s));
    int lrc = enqueue(ctx, d->s);
    if (!lrc) {
        struct timespec ts = { (time_t)(hold_ms / 1e3), (long)(fmod(hold_ms, 1e3) * 1e6) };
        nanosleep(&ts, NULL);
        lrc = probe(pctx, side);
        cudaError_t e = lrc ? cudaSuccess : cudaStreamSynchronize(side);
        __sync_synchronize();
        *held = !lrc && e == cudaSuccess && d->host_words[1] == 0;
        if (e != cudaSuccess) lrc = (int)e;
    }
    d->host_words[0] = 1;    /* never leave the stream blocked */
    __sync_synchronize();
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) return tb_fail(msg, len, TB_ECUDA, "held launch: %s", cudaGetErrorString(e));
    return lrc ? tb_fail(msg, len, TB_EWORKER, "held launch: launch or probe returned %d", lrc) : TB_OK;
}

static int noop_launch(void *ctx, cudaStream_t s)
{
    (void)ctx;
    return tbdev_noop(s);
}

static int empty_launch(void *ctx, cudaStream_t s)
{
    (void)ctx; (void)s;
    return 0;
}

/* Over n (<= 32) cold samples of launch: the median event time into *event_ms and the median
 * of wall - event into *gap_ms (either may be NULL). */
static int cold_medians(tb_measure_dev *d, int flush, tb_launch_fn launch, int n,
                        double *event_ms, double *gap_ms, char *msg, size_t len)
{
    double ev[32], gap[32];
    for (int i = 0; i < n; i++) {
        tb_sample smp;
        int rc = tb_sample_cold(d, flush, launch, NULL, &smp, msg, len);
        if (rc) return rc;
        ev[i] = smp.ms;
        gap[i] = smp.wall_ms - smp.ms;
    }
    if (event_ms) *event_ms = tb_stats_median(ev, n);
    if (gap_ms) *gap_ms = tb_stats_median(gap, n);
    return TB_OK;
}

int tb_measure_event_overhead(tb_measure_dev *d, int flush, double *ms, char *msg, size_t len)
{
    return cold_medians(d, flush, empty_launch, 21, ms, NULL, msg, len);
}

int tb_measure_gap_baseline(tb_measure_dev *d, int flush, double *base_ms, double *noop_ms,
                            char *msg, size_t len)
{
    return cold_medians(d, flush, noop_launch, 15, noop_ms, base_ms, msg, len);
}
