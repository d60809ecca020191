/* measure_cold.c - the "cold_events" timing method (see measure.h): check, warm up, take
 * samples until the stopping rule holds, measure the clock. Each step is a function. */
#define _POSIX_C_SOURCE 200809L
#include "measure.h"
#include "stats.h"
#include "tb.h"
#include "device/tbdev.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void tb_measure_opts_default(tb_measure_opts *o)
{
    o->warmup = 3;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->max_time_s = 1.0;
    o->target_rse = 0.005;
    o->flush_l2 = 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CU(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    rc = tb_fail(msg, len, TB_ECUDA, "%s: %s", #call, cudaGetErrorString(e_)); goto done; } } while (0)

double tb_measure_clock_mhz(const tb_measure_dev *dev)
{
    unsigned long long h[2];
    if (tbdev_clock_probe(dev->clk_dev, 20000, dev->s) != 0) return NAN;
    if (cudaMemcpyAsync(h, dev->clk_dev, sizeof h, cudaMemcpyDeviceToHost, dev->s) != cudaSuccess)
        return NAN;
    if (cudaStreamSynchronize(dev->s) != cudaSuccess || h[1] == 0) return NAN;
    return (double)h[0] * 1000.0 / (double)h[1];
}

/* step: warm-up launches, unflushed, then a device synchronisation */
static int warm_up(const tb_measure_dev *dev, const tb_measure_opts *o, tb_launch_fn launch,
                   void *ctx, char *msg, size_t len)
{
    int rc = TB_OK;
    for (int i = 0; i < o->warmup; i++) {
        int lrc = launch(ctx, dev->s);
        if (lrc) return tb_fail(msg, len, TB_EWORKER, "launch returned %d during warm-up", lrc);
    }
    CU(cudaDeviceSynchronize());
done:
    return rc;
}

/* step: one flushed sample: *ms from the events, *wall from the host clock */
static int one_sample(const tb_measure_dev *dev, const tb_measure_opts *o, tb_launch_fn launch,
                      void *ctx, cudaEvent_t e0, cudaEvent_t e1, double *ms, double *wall,
                      char *msg, size_t len)
{
    int rc = TB_OK;
    float f = 0;
    double t0 = now_s();
    if (o->flush_l2) CU((cudaError_t)tbdev_l2_flush(dev->flush_buf, dev->flush_bytes, dev->sink, dev->s));
    CU(cudaEventRecord(e0, dev->s));
    int lrc = launch(ctx, dev->s);
    if (lrc) return tb_fail(msg, len, TB_EWORKER, "launch returned %d", lrc);
    CU(cudaEventRecord(e1, dev->s));
    /* the whole device: work a variant left on another stream finishes before the next */
    CU(cudaDeviceSynchronize());
    *wall = (now_s() - t0) * 1e3;
    CU(cudaEventElapsedTime(&f, e0, e1));
    *ms = f;
done:
    return rc;
}

static int noop_launch(void *ctx, cudaStream_t s)
{
    (void)ctx;
    return tbdev_noop(s);
}

/* step: the hidden-work baseline: the same recipe around a kernel that does nothing */
static int gap_baseline(const tb_measure_dev *dev, const tb_measure_opts *o, cudaEvent_t e0,
                        cudaEvent_t e1, double *base, char *msg, size_t len)
{
    double gaps[15];
    for (int i = 0; i < 15; i++) {
        double ms = 0, wall = 0;
        int rc = one_sample(dev, o, noop_launch, NULL, e0, e1, &ms, &wall, msg, len);
        if (rc) return rc;
        gaps[i] = wall - ms;
    }
    *base = tb_stats_median(gaps, 15);
    return TB_OK;
}

/* step: the stopping rule */
static int finished(const tb_measure_opts *o, const double *x, int n, double elapsed,
                    char *why, size_t why_len)
{
    if (n >= o->max_samples) { snprintf(why, why_len, "max samples"); return 1; }
    if (n >= o->min_samples) {
        tb_stats st;
        tb_stats_summarise(x, n, &st);
        if (st.rse <= o->target_rse) { snprintf(why, why_len, "rse<=%.3g", o->target_rse); return 1; }
        if (elapsed >= o->max_time_s) { snprintf(why, why_len, "time budget"); return 1; }
    } else if (elapsed >= 20.0 * o->max_time_s && n >= 3) {
        snprintf(why, why_len, "time budget (under min samples)");
        return 1;
    }
    return 0;
}

int tb_measure_cold(const tb_measure_dev *dev, const tb_measure_opts *o, tb_launch_fn launch,
                    void *ctx, tb_heartbeat_fn hb, void *hb_ctx, tb_measure_out *out,
                    char *msg, size_t len)
{
    int rc = TB_OK;
    cudaEvent_t e0 = NULL, e1 = NULL;
    memset(out, 0, sizeof *out);
    out->clock_mhz = NAN;
    out->warmup = o->warmup;
    int cap = o->max_samples > 0 ? o->max_samples : 1;
    out->samples_ms = malloc(sizeof(double) * (size_t)cap);
    out->wall_ms = malloc(sizeof(double) * (size_t)cap);
    out->hidden_ms = out->gap_baseline_ms = NAN;
    if (!out->samples_ms || !out->wall_ms) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    rc = gap_baseline(dev, o, e0, e1, &out->gap_baseline_ms, msg, len);
    if (rc) goto done;

    rc = warm_up(dev, o, launch, ctx, msg, len);
    if (rc) goto done;

    double t0 = now_s(), last_hb = t0;
    for (;;) {
        double ms = 0, wall = 0;
        rc = one_sample(dev, o, launch, ctx, e0, e1, &ms, &wall, msg, len);
        if (rc) goto done;
        out->wall_ms[out->n] = wall;
        out->samples_ms[out->n++] = ms;
        double t = now_s();
        if (hb && t - last_hb > 0.25) { hb(hb_ctx, out->n); last_hb = t; }
        if (finished(o, out->samples_ms, out->n, t - t0, out->stop_reason, sizeof out->stop_reason))
            break;
    }
    out->wall_s = now_s() - t0;
    out->clock_mhz = tb_measure_clock_mhz(dev);
    {
        double *gap = malloc(sizeof(double) * (size_t)out->n);
        if (gap) {
            for (int i = 0; i < out->n; i++) gap[i] = out->wall_ms[i] - out->samples_ms[i];
            out->hidden_ms = tb_stats_median(gap, out->n) - out->gap_baseline_ms;
            free(gap);
        }
    }
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return rc;
}
