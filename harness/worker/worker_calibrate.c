/* worker_calibrate.c - the worker mode `tilebench-worker calibrate` (see worker_calibrate.h).
 *
 * Owns the measurement of the roofline ceilings of one GPU: the DRAM bandwidth a plain
 * device-to-device copy reaches, and the tensor throughput a large cuBLASLt GEMM reaches, BF16
 * and (compute capability 8.9 and 9.0, where the tensor cores take FP8) FP8, each with the SM
 * clock seen during it. It measures and reports; the parent (cmd_doctor.c) prints and stores,
 * and show/export (roofline.c) use the figures (the FP8 ceiling for FP8 problems).
 *
 * The job (one JSON line on stdin): {"device": N} or {"device": 0, "device_uuid": "GPU-..."}.
 * The records (to out_fd):
 *   {"type":"ready","gpu_name","gpu_uuid","device"} once the GPU is set up;
 *   {"type":"begin","phase":"copy"|"gemm"|"gemm_fp8"} before each measurement;
 *   {"type":"calibration","dram_gbps","copy_bytes","gemm_tflops","gemm_shape":"8192x8192x8192",
 *    "sm_clock_mhz","fp8_tflops","fp8_shape","fp8_sm_clock_mhz" (null, and "fp8_skipped" the
 *    reason, on a GPU without FP8 tensor cores),"gpu_uuid","gpu_name","method", and for the
 *    record "copy_ms","gemm_ms","gemm_algo","fp8_ms","fp8_algo","reps","copy_warmup",
 *    "gemm_warmup","fp8_warmup"};
 *   {"type":"done"} at the end; {"type":"fatal","error"} instead when anything fails.
 *
 * The method (each a recipe: set up, warm up, time, summarise):
 *   copy: two buffers of 1 GiB (less when free memory is short, never under 8 x L2), one
 *     cudaMemcpyAsync device to device per launch; it reads and writes the buffer size, so
 *     copy_bytes = 2 x buffer and dram_gbps = copy_bytes / median time. Warm-up: copies for
 *     about 200 ms; then WCAL_REPS copies back to back, each between two CUDA events.
 *   gemm: cuBLASLt, 8192^3, A^T B (tn), BF16 A, B and D, FP32 compute and scale, the first
 *     heuristic algorithm with a 64 MiB workspace, inputs uniform on [-1, 1) (zeros would
 *     draw less power and flatter the clock). Warm-up: launches for about 500 ms; then
 *     WCAL_REPS launches, each between two events and between two SM clock stamps of tbdev.h
 *     (outside the events), each alone: the host waits for it and then lets the
 *     GPU rest as long as it took (as `sweep --pace 1` does). Back to back, the H100 holds
 *     a GEMM at its 700 W cap near 1.65 GHz (732-739 TFLOP/s on 2026-11-23), below what the
 *     sweep's own cold samples of cuBLASLt reach at 1.9-2.0 GHz (790 at 4096^3), which would
 *     put measurements above 100 % of their roof. gemm_tflops = 2mnk / the fastest launch;
 *     sm_clock_mhz = median over the launches of the stamps' clock.
 *   gemm_fp8: the same recipe and shape with FP8 operands, as `sweep --dtype e4m3` and the
 *     cuBLASLt reference run them (docs/method.md, "FP8 problems"): E4M3 A and B (tn, the
 *     only form Hopper's FP8 kernels take), per-tensor FP32 scales through A_SCALE_POINTER and
 *     B_SCALE_POINTER (the sweep's 2^-6 and 2^-5, inputs uniform [-1, 1) / scale rounded to
 *     E4M3 by tbdev_fill_e4m3), BF16 C and D, FP32 compute, fast accumulation off
 *     (CUBLASLT_MATMUL_DESC_FAST_ACCUM 0: partial sums promoted to FP32, as the reference).
 *     fp8_tflops = 2mnk / the fastest launch. Skipped (null) below compute capability 8.9,
 *     which has no FP8 tensor cores; where it has them a failure is fatal, as for BF16.
 * Nothing flushes the L2 here: every buffer is many times its size.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/worker_calibrate.h"
#include "worker/worker_common.h"
#include "common/stats.h"
#include "common/tb.h"
#include "common/wire.h"
#include "device/tbdev.h"
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define WCAL_REPS 20                      /* timed launches of each measurement */
#define WCAL_COPY_WANT ((size_t)1 << 30)  /* bytes per copy buffer, when memory allows */
#define WCAL_COPY_WARM_MS 200.0
#define WCAL_GEMM_WARM_MS 500.0
#define WCAL_GEMM_N 8192                  /* m = n = k */
#define WCAL_WS_BYTES ((size_t)64 << 20)  /* cuBLASLt workspace */
/* the FP8 scales of A and B: the sweep's (TB_FP8_SCALE_A/B, driver/sweep.h, which the worker
 * may not include: tests/arrows.sh), so the GEMM sees the values an FP8 sweep does */
#define WCAL_FP8_SCALE_A 0.015625         /* 2^-6 */
#define WCAL_FP8_SCALE_B 0.03125          /* 2^-5 */

static int wcal_fd = 1;

static void wcal_send(cJSON *o) { tbw_send(wcal_fd, o); }
static void wcal_simple(const char *type, const char *key, const char *val)
{
    tbw_send_simple(wcal_fd, type, key, val);
}

static int cuda_fail(char *msg, size_t len, const char *what, cudaError_t e)
{
    return tb_fail(msg, len, TB_ECUDA, "%s: %s", what, cudaGetErrorString(e));
}

/* ---- timing ------------------------------------------------------------------------------ */

/* Enqueue one launch of the measured operation on s. TB_OK or a code with the message. */
typedef int (*wcal_launch_fn)(void *ctx, cudaStream_t s, char *msg, size_t len);

/* Time one launch alone (synchronises). */
static int time_one(wcal_launch_fn fn, void *ctx, cudaStream_t s, double *ms, char *msg, size_t len)
{
    cudaEvent_t a = NULL, b = NULL;
    cudaError_t e = cudaEventCreate(&a);
    if (e == cudaSuccess) e = cudaEventCreate(&b);
    int rc = e == cudaSuccess ? TB_OK : cuda_fail(msg, len, "cannot create events", e);
    if (rc == TB_OK && (e = cudaEventRecord(a, s)) != cudaSuccess) rc = cuda_fail(msg, len, "cannot record an event", e);
    if (rc == TB_OK) rc = fn(ctx, s, msg, len);
    if (rc == TB_OK && (e = cudaEventRecord(b, s)) != cudaSuccess) rc = cuda_fail(msg, len, "cannot record an event", e);
    if (rc == TB_OK && (e = cudaEventSynchronize(b)) != cudaSuccess) rc = cuda_fail(msg, len, "the launch failed", e);
    float f = 0;
    if (rc == TB_OK && (e = cudaEventElapsedTime(&f, a, b)) != cudaSuccess) rc = cuda_fail(msg, len, "cannot read the events", e);
    *ms = f;
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return rc;
}

/* Launch for about target_ms of GPU time (at least min_n launches), then synchronise.
 * *n gets the number of warm-up launches, the first (timed alone) included. */
static int warm_up(wcal_launch_fn fn, void *ctx, cudaStream_t s, double target_ms, int min_n,
                   int *n, char *msg, size_t len)
{
    double t = 0;
    int rc = time_one(fn, ctx, s, &t, msg, len);
    if (rc) return rc;
    double want = t > 0 ? ceil(target_ms / t) : min_n;
    int count = want < min_n ? min_n : want > 2000 ? 2000 : (int)want;
    for (int i = 1; i < count && rc == TB_OK; i++) rc = fn(ctx, s, msg, len);
    cudaError_t e = cudaStreamSynchronize(s);
    if (rc == TB_OK && e != cudaSuccess) rc = cuda_fail(msg, len, "a warm-up launch failed", e);
    *n = count;
    return rc;
}

/* WCAL_REPS launches back to back, each between its own pair of events; with clk_dev
 * (device memory, 2 x WCAL_REPS stamps of `blocks` x 3 words) a clock stamp runs before
 * each start event and after each stop event. */

static int time_reps(wcal_launch_fn fn, void *ctx, cudaStream_t s, unsigned long long *clk_dev,
                     int blocks, int rest, double *ms, char *msg, size_t len)
{
    cudaEvent_t ev[2 * WCAL_REPS];
    memset(ev, 0, sizeof ev);
    int rc = TB_OK;
    cudaError_t e = cudaSuccess;
    for (int i = 0; i < 2 * WCAL_REPS && e == cudaSuccess; i++) e = cudaEventCreate(&ev[i]);
    if (e != cudaSuccess) rc = cuda_fail(msg, len, "cannot create events", e);
    for (int i = 0; i < WCAL_REPS && rc == TB_OK; i++) {
        unsigned long long *st = clk_dev ? clk_dev + (size_t)3 * blocks * (2 * i) : NULL;
        if (st && (e = (cudaError_t)tbdev_clock_stamp(st, blocks, s)) != cudaSuccess) {
            rc = cuda_fail(msg, len, "cannot launch the clock stamp", e);
            break;
        }
        if ((e = cudaEventRecord(ev[2 * i], s)) != cudaSuccess) { rc = cuda_fail(msg, len, "cannot record an event", e); break; }
        if ((rc = fn(ctx, s, msg, len)) != TB_OK) break;
        if ((e = cudaEventRecord(ev[2 * i + 1], s)) != cudaSuccess) { rc = cuda_fail(msg, len, "cannot record an event", e); break; }
        if (st && (e = (cudaError_t)tbdev_clock_stamp(st + (size_t)3 * blocks, blocks, s)) != cudaSuccess)
            rc = cuda_fail(msg, len, "cannot launch the clock stamp", e);
        if (rc == TB_OK && rest) {   /* alone, then as long a rest */
            float f = 0;
            if ((e = cudaStreamSynchronize(s)) != cudaSuccess) { rc = cuda_fail(msg, len, "a timed launch failed", e); break; }
            if (cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1]) == cudaSuccess) tbw_rest_ms(f);
        }
    }
    if (rc == TB_OK && (e = cudaStreamSynchronize(s)) != cudaSuccess) rc = cuda_fail(msg, len, "a timed launch failed", e);
    for (int i = 0; i < WCAL_REPS && rc == TB_OK; i++) {
        float f = 0;
        if ((e = cudaEventElapsedTime(&f, ev[2 * i], ev[2 * i + 1])) != cudaSuccess)
            rc = cuda_fail(msg, len, "cannot read the events", e);
        ms[i] = f;
    }
    for (int i = 0; i < 2 * WCAL_REPS; i++) if (ev[i]) cudaEventDestroy(ev[i]);
    return rc;
}

/* ---- the copy ---------------------------------------------------------------------------- */

typedef struct wcal_copy {
    void *src, *dst;
    size_t bytes;           /* per buffer */
} wcal_copy;

static int copy_launch(void *ctx, cudaStream_t s, char *msg, size_t len)
{
    wcal_copy *c = ctx;
    cudaError_t e = cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, s);
    return e == cudaSuccess ? TB_OK : cuda_fail(msg, len, "cudaMemcpyAsync failed", e);
}

/* One tensor ceiling: the fastest launch, its throughput and the median SM clock. */
typedef struct wcal_tensor {
    double ms, tflops, sm_clock_mhz;
    int warm;
    char algo[64];
} wcal_tensor;

typedef struct wcal_result {
    double copy_ms, dram_gbps;
    unsigned long long copy_bytes;     /* moved per copy: read + write */
    size_t buffer_bytes;
    int copy_warm;
    wcal_tensor bf16, fp8;             /* fp8.tflops NaN when skipped */
    char fp8_skipped[160];             /* why, or "" */
} wcal_result;

static int measure_copy(int device, cudaStream_t s, wcal_result *r, char *msg, size_t len)
{
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    size_t floor_bytes = l2 > 0 ? (size_t)l2 * 8 : (size_t)256 << 20;
    floor_bytes = (floor_bytes + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
    size_t free_b = 0, total_b = 0;
    cudaError_t e = cudaMemGetInfo(&free_b, &total_b);
    if (e != cudaSuccess) return cuda_fail(msg, len, "cannot read the free memory", e);
    /* two buffers in at most 80 % of what is free, whole MiB */
    size_t fit = (size_t)((double)free_b * 0.8 / 2) & ~(((size_t)1 << 20) - 1);
    size_t want = WCAL_COPY_WANT > floor_bytes ? WCAL_COPY_WANT : floor_bytes;
    if (want > fit) want = fit;
    if (want < floor_bytes)
        return tb_fail(msg, len, TB_ECUDA, "not enough free GPU memory for the copy: it needs two "
                       "buffers of 8 x L2 (%zu bytes each), %zu bytes are free", floor_bytes, free_b);
    wcal_copy c = { NULL, NULL, want };
    int rc = TB_OK;
    if ((e = cudaMalloc(&c.src, want)) != cudaSuccess || (e = cudaMalloc(&c.dst, want)) != cudaSuccess)
        rc = tb_fail(msg, len, TB_ECUDA, "cannot allocate two copy buffers of %zu bytes: %s", want,
                     cudaGetErrorString(e));
    if (rc == TB_OK && ((e = cudaMemsetAsync(c.src, 0x5a, want, s)) != cudaSuccess ||
                        (e = cudaMemsetAsync(c.dst, 0, want, s)) != cudaSuccess))
        rc = cuda_fail(msg, len, "cannot fill the copy buffers", e);
    double ms[WCAL_REPS];
    if (rc == TB_OK) rc = warm_up(copy_launch, &c, s, WCAL_COPY_WARM_MS, 3, &r->copy_warm, msg, len);
    if (rc == TB_OK) rc = time_reps(copy_launch, &c, s, NULL, 0, 0, ms, msg, len);
    if (rc == TB_OK) {
        r->copy_ms = tb_stats_median(ms, WCAL_REPS);
        r->buffer_bytes = want;
        r->copy_bytes = 2ull * want;
        r->dram_gbps = r->copy_ms > 0 ? (double)r->copy_bytes / (r->copy_ms * 1e-3) / 1e9 : NAN;
        if (!(r->dram_gbps > 0))
            rc = tb_fail(msg, len, TB_ECUDA, "the copy timed %g ms: no bandwidth to report", r->copy_ms);
    }
    if (c.src) cudaFree(c.src);
    if (c.dst) cudaFree(c.dst);
    cudaGetLastError();
    return rc;
}

/* ---- the GEMM ---------------------------------------------------------------------------- */

typedef struct wcal_gemm {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t heur;
    void *a, *b, *d, *ws;
    float *scales;            /* FP8: the scales of A and B on the device */
    unsigned long long *clk;
    int blocks;               /* clock-stamp blocks: 2 x the SM count */
} wcal_gemm;

static int gemm_launch(void *ctx, cudaStream_t s, char *msg, size_t len)
{
    wcal_gemm *g = ctx;
    float alpha = 1.0f, beta = 0.0f;
    cublasStatus_t st = cublasLtMatmul(g->lt, g->op, &alpha, g->a, g->la, g->b, g->lb, &beta,
                                       g->d, g->ld, g->d, g->ld, &g->heur.algo, g->ws,
                                       WCAL_WS_BYTES, s);
    return st == CUBLAS_STATUS_SUCCESS ? TB_OK
           : tb_fail(msg, len, TB_ECUDA, "cublasLtMatmul failed: %s", cublasLtGetStatusString(st));
}

static void gemm_free(wcal_gemm *g)
{
    if (g->pref) cublasLtMatmulPreferenceDestroy(g->pref);
    if (g->ld) cublasLtMatrixLayoutDestroy(g->ld);
    if (g->lb) cublasLtMatrixLayoutDestroy(g->lb);
    if (g->la) cublasLtMatrixLayoutDestroy(g->la);
    if (g->op) cublasLtMatmulDescDestroy(g->op);
    if (g->lt) cublasLtDestroy(g->lt);
    void *p[] = { g->a, g->b, g->d, g->ws, g->scales, g->clk };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) if (p[i]) cudaFree(p[i]);
    cudaGetLastError();
}

#define LT(call) do { cublasStatus_t st_ = (call); if (st_ != CUBLAS_STATUS_SUCCESS) { \
    rc = tb_fail(msg, len, TB_ECUDA, "%s failed: %s", #call, cublasLtGetStatusString(st_)); \
    goto out; } } while (0)

/* cuBLASLt is column-major: A is stored k x m (lda = k) and transposed, B k x n (ldb = k),
 * D m x n (ldd = m): D = A^T B, the "tn" of tilebench's default layout. fp8: E4M3 A and B
 * with their scales, BF16 D; else BF16 A, B and D. */
static int measure_gemm(cudaStream_t s, int fp8, wcal_tensor *r, char *msg, size_t len)
{
    const uint64_t n = WCAL_GEMM_N;
    const size_t elems = (size_t)n * n, bytes = elems * 2, in_bytes = elems * (fp8 ? 1 : 2);
    const cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    const char *what = fp8 ? "an FP8 (E4M3)" : "a BF16";
    wcal_gemm g;
    memset(&g, 0, sizeof g);
    int rc = TB_OK;
    cudaError_t e;
    g.blocks = tbdev_clock_stamp_blocks();
    const size_t clk_bytes = sizeof(unsigned long long) * 2 * WCAL_REPS * 3 * (size_t)g.blocks;
    struct { void **p; size_t bytes; const char *what; } al[] = {
        { &g.a, in_bytes, "A" }, { &g.b, in_bytes, "B" }, { &g.d, bytes, "D" },
        { &g.ws, WCAL_WS_BYTES, "the workspace" },
        { (void **)&g.scales, 8 * sizeof(float), "the scales" },
        { (void **)&g.clk, clk_bytes, "the clock stamps" } };
    for (size_t i = 0; i < sizeof al / sizeof al[0]; i++)
        if ((e = cudaMalloc(al[i].p, al[i].bytes)) != cudaSuccess) {
            rc = tb_fail(msg, len, TB_ECUDA, "cannot allocate %s (%zu bytes): %s", al[i].what,
                         al[i].bytes, cudaGetErrorString(e));
            goto out;
        }
    /* A's scale at [0], B's at [4]: each at its own 16-byte boundary (cuBLASLt 13.1 refused a
     * scale pointer 4 bytes after the other: NOT_SUPPORTED at cublasLtMatmul, H100, 2026-11-27) */
    const float scales[8] = { (float)WCAL_FP8_SCALE_A, 0, 0, 0, (float)WCAL_FP8_SCALE_B, 0, 0, 0 };
    if (fp8) {
        e = (cudaError_t)tbdev_fill_e4m3(g.a, elems, 0x7411ull, TB_INIT_UNIFORM, scales[0], s);
        if (e == cudaSuccess) e = (cudaError_t)tbdev_fill_e4m3(g.b, elems, 0x7412ull, TB_INIT_UNIFORM, scales[4], s);
    } else {
        e = (cudaError_t)tbdev_fill_bf16(g.a, elems, 0x7411ull, TB_INIT_UNIFORM, s);
        if (e == cudaSuccess) e = (cudaError_t)tbdev_fill_bf16(g.b, elems, 0x7412ull, TB_INIT_UNIFORM, s);
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(g.scales, scales, sizeof scales, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaMemsetAsync(g.d, 0, bytes, s);
    if (e == cudaSuccess) e = cudaMemsetAsync(g.clk, 0, clk_bytes, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) { rc = cuda_fail(msg, len, "cannot fill the GEMM inputs", e); goto out; }

    cublasOperation_t opa = CUBLAS_OP_T, opb = CUBLAS_OP_N;
    size_t ws = WCAL_WS_BYTES;
    int found = 0;
    LT(cublasLtCreate(&g.lt));
    LT(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
    LT(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
    if (fp8) {
        /* cuBLASLt's A is our A here (D = A^T B, both K-major): A's scale, then B's */
        const void *sa = g.scales, *sb = g.scales + 4;
        const int8_t fast = 0;   /* no fast accumulation: the partial sums promoted to FP32 */
        LT(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
        LT(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
        LT(cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    LT(cublasLtMatrixLayoutCreate(&g.la, in_t, n, n, (int64_t)n));
    LT(cublasLtMatrixLayoutCreate(&g.lb, in_t, n, n, (int64_t)n));
    LT(cublasLtMatrixLayoutCreate(&g.ld, CUDA_R_16BF, n, n, (int64_t)n));
    LT(cublasLtMatmulPreferenceCreate(&g.pref));
    LT(cublasLtMatmulPreferenceSetAttribute(g.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &ws, sizeof ws));
    LT(cublasLtMatmulAlgoGetHeuristic(g.lt, g.op, g.la, g.lb, g.ld, g.ld, g.pref, 1, &g.heur, &found));
    if (found < 1) {
        rc = tb_fail(msg, len, TB_ECUDA, "cuBLASLt has no algorithm for %s %llux%llux%llu GEMM",
                     what, (unsigned long long)n, (unsigned long long)n, (unsigned long long)n);
        goto out;
    }
    {
        int id = -1;
        size_t w = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&g.heur.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
        snprintf(r->algo, sizeof r->algo, "algo=%d", id);
    }
    double ms[WCAL_REPS];
    if ((rc = warm_up(gemm_launch, &g, s, WCAL_GEMM_WARM_MS, 5, &r->warm, msg, len))) goto out;
    tbw_rest_ms(200);   /* the warm-up ran back to back: let the power cap's average settle */
    if ((rc = time_reps(gemm_launch, &g, s, g.clk, g.blocks, 1, ms, msg, len))) goto out;
    unsigned long long *clk = malloc(clk_bytes);
    if (!clk || (e = cudaMemcpy(clk, g.clk, clk_bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
        free(clk);
        rc = clk ? cuda_fail(msg, len, "cannot read the clock stamps", e)
                 : tb_fail(msg, len, TB_ENOMEM, "out of memory");
        goto out;
    }
    double mhz[WCAL_REPS];
    int nm = 0;
    for (int i = 0; i < WCAL_REPS; i++) {
        const unsigned long long *a = clk + (size_t)3 * g.blocks * (2 * i);
        double m = tbdev_stamps_mhz(a, a + (size_t)3 * g.blocks, g.blocks, NULL);
        if (isfinite(m)) mhz[nm++] = m;
    }
    free(clk);
    r->sm_clock_mhz = nm ? tb_stats_median(mhz, nm) : NAN;
    /* a ceiling is what the GPU can do: the fastest of the rested launches (their median
     * moved 3 % between two calibrations a second apart on the H100, 758 and 781 TFLOP/s) */
    r->ms = ms[0];
    for (int i = 1; i < WCAL_REPS; i++) if (ms[i] < r->ms) r->ms = ms[i];
    r->tflops = r->ms > 0 ? 2.0 * (double)n * (double)n * (double)n / (r->ms * 1e-3) / 1e12 : NAN;
    if (!(r->tflops > 0))
        rc = tb_fail(msg, len, TB_ECUDA, "%s GEMM timed %g ms: no throughput to report",
                     fp8 ? "the FP8" : "the BF16", r->ms);
out:
    gemm_free(&g);
    return rc;
}

/* ---- the mode ----------------------------------------------------------------------------- */

static int read_job(int *device, char *msg, size_t len)
{
    tb_linebuf lb = { 0 };
    char *line = tbw_read_job(&lb);
    if (!line) { tb_linebuf_free(&lb); return tb_fail(msg, len, TB_EWORKER, "no job on stdin"); }
    tb_linebuf_free(&lb);
    cJSON *o = cJSON_Parse(line);
    free(line);
    if (!o) return tb_fail(msg, len, TB_EWORKER, "job is not JSON");
    *device = (int)tb_json_num(o, "device", 0);
    char uuid[80];
    snprintf(uuid, sizeof uuid, "%s", tb_json_str(o, "device_uuid", ""));
    cJSON_Delete(o);
    if (uuid[0]) return tbw_find_device_uuid(uuid, device, msg, len);
    return TB_OK;
}

static void send_calibration(const struct cudaDeviceProp *p, const char *uuid, const wcal_result *r)
{
    char shape[64], method[1536], fp8[512];
    snprintf(shape, sizeof shape, "%dx%dx%d", WCAL_GEMM_N, WCAL_GEMM_N, WCAL_GEMM_N);
    if (r->fp8_skipped[0])
        snprintf(fp8, sizeof fp8, "; fp8 tensor: not measured (%s)", r->fp8_skipped);
    else
        snprintf(fp8, sizeof fp8, "; fp8 tensor: the same with E4M3 A and B (scales %g and %g through "
                 "A/B_SCALE_POINTER, inputs uniform / scale rounded to E4M3), BF16 C and D, FP32 "
                 "compute, no fast accumulation (%s), the fastest of %d after %d warm-up launches",
                 WCAL_FP8_SCALE_A, WCAL_FP8_SCALE_B, r->fp8.algo, WCAL_REPS, r->fp8.warm);
    snprintf(method, sizeof method,
             "dram: cudaMemcpyAsync device to device of %zu bytes (read + write = %llu bytes "
             "per copy), CUDA events around each copy, median of %d after %d warm-up copies; "
             "tensor: cuBLASLt %s tn, BF16 in and out, FP32 compute, first heuristic algorithm "
             "(%s), uniform random inputs, CUDA events around each launch, each alone and followed "
             "by as long a rest, the fastest of %d after "
             "%d warm-up launches%s; SM clock: globaltimer/clock64 stamps on every SM before and "
             "after each timed launch, median", r->buffer_bytes, r->copy_bytes, WCAL_REPS, r->copy_warm, shape,
             r->bf16.algo, WCAL_REPS, r->bf16.warm, fp8);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "calibration");
    cJSON_AddNumberToObject(o, "dram_gbps", r->dram_gbps);
    cJSON_AddNumberToObject(o, "copy_bytes", (double)r->copy_bytes);
    cJSON_AddNumberToObject(o, "gemm_tflops", r->bf16.tflops);
    cJSON_AddStringToObject(o, "gemm_shape", shape);
    if (isfinite(r->bf16.sm_clock_mhz)) cJSON_AddNumberToObject(o, "sm_clock_mhz", r->bf16.sm_clock_mhz);
    else cJSON_AddNullToObject(o, "sm_clock_mhz");
    if (r->fp8_skipped[0]) {
        cJSON_AddNullToObject(o, "fp8_tflops");
        cJSON_AddNullToObject(o, "fp8_shape");
        cJSON_AddNullToObject(o, "fp8_sm_clock_mhz");
        cJSON_AddStringToObject(o, "fp8_skipped", r->fp8_skipped);
    } else {
        cJSON_AddNumberToObject(o, "fp8_tflops", r->fp8.tflops);
        cJSON_AddStringToObject(o, "fp8_shape", shape);
        if (isfinite(r->fp8.sm_clock_mhz)) cJSON_AddNumberToObject(o, "fp8_sm_clock_mhz", r->fp8.sm_clock_mhz);
        else cJSON_AddNullToObject(o, "fp8_sm_clock_mhz");
        cJSON_AddNumberToObject(o, "fp8_ms", r->fp8.ms);
        cJSON_AddStringToObject(o, "fp8_algo", r->fp8.algo);
        cJSON_AddNumberToObject(o, "fp8_warmup", r->fp8.warm);
    }
    cJSON_AddStringToObject(o, "gpu_uuid", uuid);
    cJSON_AddStringToObject(o, "gpu_name", p->name);
    cJSON_AddStringToObject(o, "method", method);
    cJSON_AddNumberToObject(o, "copy_ms", r->copy_ms);
    cJSON_AddNumberToObject(o, "gemm_ms", r->bf16.ms);
    cJSON_AddStringToObject(o, "gemm_algo", r->bf16.algo);
    cJSON_AddNumberToObject(o, "reps", WCAL_REPS);
    cJSON_AddNumberToObject(o, "copy_warmup", r->copy_warm);
    cJSON_AddNumberToObject(o, "gemm_warmup", r->bf16.warm);
    wcal_send(o);
}

static void send_begin(const char *phase)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "begin");
    cJSON_AddStringToObject(o, "phase", phase);
    wcal_send(o);
}

int tb_worker_calibrate(int out_fd)
{
    char msg[TB_MSG_LEN];
    wcal_fd = out_fd;
    int device = 0;
    if (read_job(&device, msg, sizeof msg) != TB_OK) { wcal_simple("fatal", "error", msg); return 2; }

    struct cudaDeviceProp p;
    cudaStream_t s = NULL;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaFree(0);
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&p, device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(msg, sizeof msg, "cannot use GPU %d: %s", device, cudaGetErrorString(e));
        wcal_simple("fatal", "error", msg);
        return 2;
    }
    char uuid[64];
    tbw_uuid(&p, uuid, sizeof uuid);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "ready");
    cJSON_AddStringToObject(o, "gpu_name", p.name);
    cJSON_AddStringToObject(o, "gpu_uuid", uuid);
    cJSON_AddNumberToObject(o, "device", device);
    wcal_send(o);

    /* no persisting-L2 carve-out left by someone else may shelter the buffers */
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    cudaGetLastError();

    wcal_result r;
    memset(&r, 0, sizeof r);
    send_begin("copy");
    int rc = measure_copy(device, s, &r, msg, sizeof msg);
    if (rc == TB_OK) {
        send_begin("gemm");
        rc = measure_gemm(s, 0, &r.bf16, msg, sizeof msg);
    }
    r.fp8.tflops = r.fp8.sm_clock_mhz = NAN;
    if (rc == TB_OK && p.major * 10 + p.minor < 89) {   /* FP8 tensor cores: 8.9 (Ada), 9.0 */
        snprintf(r.fp8_skipped, sizeof r.fp8_skipped, "compute capability %d.%d has no FP8 tensor "
                 "cores", p.major, p.minor);
    } else if (rc == TB_OK) {
        send_begin("gemm_fp8");
        tbw_rest_ms(200);   /* as long a rest as the BF16 GEMM had after its warm-up */
        rc = measure_gemm(s, 1, &r.fp8, msg, sizeof msg);
    }
    cudaStreamDestroy(s);
    if (rc != TB_OK) {
        wcal_simple("fatal", "error", msg);
        return 2;
    }
    send_calibration(&p, uuid, &r);
    wcal_simple("done", NULL, NULL);
    return 0;
}
