/* test_clock.cu - the clocks every timing rests on, checked against the host's monotonic
 * clock on the GPU itself (a GPU test: exit 77 without a GPU).
 *
 *   clock-1  CUDA events and %globaltimer keep host time: over a spin of about 0.5 s, each
 *            reads within 0.2 % of CLOCK_MONOTONIC around the launch (a sample's
 *            milliseconds are event milliseconds; the clock per sample divides by
 *            %globaltimer nanoseconds).
 *   clock-2  %globaltimer's step: the smallest non-zero difference of back-to-back reads
 *            (printed; checked to be at most 1 us, or the 5 us probe could not resolve a clock).
 *   clock-3  tbdev_clock_probe, the per-sample clock (5 us and 20 us spins), against the SM
 *            clock of a host-timed clock64 spin of about 0.13 s just before it: the median of
 *            the probes within 1 %, and no probe more than 3 % above it (a clock above the
 *            one the SM ran at would shorten nothing but flatter every % of peak).
 *   clock-4  the same under load: 1024^3 cuBLASLt GEMMs back to back for about 0.5 s (a graph
 *            of 100, replayed), with a witness thread on a stream of its own taking
 *            {%globaltimer, clock64} at the start and end of the load: %globaltimer and the
 *            events against host time, and the probes inside the load against the witness's
 *            SM clock by host time (where the sixth session saw 5 us probes read 2041-2066 MHz
 *            while NVML held 1980).
 */
#include "tb_test.h"
#include "ref.h"
#include "device/tbdev.h"
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <algorithm>
#include <vector>

/* one thread spins `cycles` of clock64 and writes {cycles, globaltimer ns} */
__global__ void spin_cycles_kernel(unsigned long long cycles, unsigned long long *out)
{
    unsigned long long t0, t1, c0, c1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
    do { c1 = clock64(); } while (c1 - c0 < cycles);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    out[0] = c1 - c0;
    out[1] = t1 - t0;
}

/* one thread reads %globaltimer n times and writes the smallest non-zero step and the
 * number of distinct values seen */
__global__ void timer_step_kernel(int n, unsigned long long *out)
{
    unsigned long long prev, t, step = ~0ull, distinct = 1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
    for (int i = 0; i < n; i++) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t != prev) { distinct++; if (t - prev < step) step = t - prev; prev = t; }
    }
    out[0] = step;
    out[1] = distinct;
}

/* The witness: one thread on its own stream waits for *start (host-mapped), takes
 * {globaltimer, clock64} at a tick edge, says so in w[4], spins until *done, takes them
 * again: w = {gt0, c0, gt1, c1, started, ended}. */
__device__ static void edge(volatile unsigned long long *t_out, volatile unsigned long long *c_out)
{
    unsigned long long t, t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); } while (t0 == t);
    *c_out = clock64();
    *t_out = t0;
}

__global__ void witness_kernel(volatile int *start, volatile int *done, volatile unsigned long long *w)
{
    while (!*start) { }
    edge(&w[0], &w[1]);
    __threadfence_system();
    w[4] = 1;
    while (!*done) { }
    edge(&w[2], &w[3]);
    __threadfence_system();
    w[5] = 1;
}

static double host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : NAN;
}

/* one spin of `cycles`, timed three ways; returns 0 on success */
static int timed_spin(unsigned long long cycles, unsigned long long *dev, unsigned long long *host,
                      cudaEvent_t e0, cudaEvent_t e1, double *h_ns, double *ev_ns, double *gt_ns)
{
    float ms = 0;
    double t0 = host_ns();
    cudaEventRecord(e0, 0);
    spin_cycles_kernel<<<1, 1>>>(cycles, dev);
    cudaEventRecord(e1, 0);
    if (cudaStreamSynchronize(0) != cudaSuccess) return 1;
    *h_ns = host_ns() - t0;
    if (cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) return 1;
    if (cudaMemcpy(host, dev, 2 * sizeof *host, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    *ev_ns = ms * 1e6;
    *gt_ns = (double)host[1];
    return host[0] < cycles;
}

/* clock-4's body: returns early (its checks already failed) when a set-up step fails */
static void clock_under_load(cudaEvent_t e0, cudaEvent_t e1)
{
    char msg[256];
    tb_ref *ref = NULL;
    TB_CHECK(tb_ref_open(&ref, msg, sizeof msg) == 0);
    tb_gemm g = {};
    g.m = g.n = g.k = 1024; g.batch = 1;
    g.a_type = g.b_type = g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
    g.a_layout = TB_LAYOUT_ROW; g.b_layout = TB_LAYOUT_COL; g.c_layout = g.d_layout = TB_LAYOUT_ROW;
    g.lda = g.ldb = g.k; g.ldc = g.ldd = g.n;
    g.stride_a = g.m * g.k; g.stride_b = g.n * g.k; g.stride_c = g.stride_d = g.m * g.n;
    g.alpha = 1; g.beta = 0;
    void *a = NULL, *b = NULL; float *d = NULL;
    unsigned long long *pdev = NULL, ph[2 * 10];
    volatile int *flags = NULL; int *flags_dev = NULL;
    volatile unsigned long long *w = NULL; unsigned long long *w_dev = NULL;
    cudaStream_t s1, s2;
    cudaGraph_t graph = NULL; cudaGraphExec_t exec = NULL;
    TB_CHECK(cudaMalloc(&a, 2 << 20) == cudaSuccess && cudaMalloc(&b, 2 << 20) == cudaSuccess &&
             cudaMalloc(&d, 4 << 20) == cudaSuccess && cudaMalloc(&pdev, sizeof ph) == cudaSuccess);
    TB_CHECK(cudaHostAlloc((void **)&flags, 64, cudaHostAllocMapped) == cudaSuccess &&
             cudaHostAlloc((void **)&w, 64, cudaHostAllocMapped) == cudaSuccess);
    if (!ref || !a || !b || !d || !pdev || !flags || !w) return;
    cudaHostGetDevicePointer((void **)&flags_dev, (void *)flags, 0);
    cudaHostGetDevicePointer((void **)&w_dev, (void *)w, 0);
    memset((void *)flags, 0, 64); memset((void *)w, 0, 64);
    tbdev_fill_bf16(a, 1 << 20, 1, TB_INIT_UNIFORM, 0);
    tbdev_fill_bf16(b, 1 << 20, 2, TB_INIT_UNIFORM, 0);
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    TB_CHECK(tb_ref_gemm_cublaslt(ref, &g, a, b, NULL, d, s1, NULL, 0, msg, sizeof msg) == 0);
    cudaStreamSynchronize(s1);
    /* one graph: 100 GEMMs with a 5 us probe after every tenth */
    TB_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    for (int i = 0; i < 100; i++) {
        tb_ref_gemm_cublaslt(ref, &g, a, b, NULL, d, s1, NULL, 0, msg, sizeof msg);
        if (i % 10 == 9) tbdev_clock_probe(pdev + 2 * (i / 10), 5000, s1);
    }
    TB_CHECK(cudaStreamEndCapture(s1, &graph) == cudaSuccess);
    TB_CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    if (!exec) return;
    cudaGraphLaunch(exec, s1);                        /* upload, and a first warm run */
    TB_CHECK(cudaStreamSynchronize(s1) == cudaSuccess);
    witness_kernel<<<1, 1, 0, s2>>>(flags_dev, flags_dev + 1, w_dev);
    flags[0] = 1;
    while (!w[4]) { }
    double h0 = host_ns();
    cudaEventRecord(e0, s1);
    int reps = 0;
    while (host_ns() - h0 < 5e8) {                   /* keep about 0.5 s queued */
        cudaGraphLaunch(exec, s1);
        if (++reps % 20 == 0) cudaStreamSynchronize(s1);
    }
    cudaEventRecord(e1, s1);
    TB_CHECK(cudaStreamSynchronize(s1) == cudaSuccess);
    double hl = host_ns();
    flags[1] = 1;
    while (!w[5]) { }
    double h1 = host_ns();
    TB_CHECK(cudaStreamSynchronize(s2) == cudaSuccess);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    TB_CHECK(cudaMemcpy(ph, pdev, sizeof ph, cudaMemcpyDeviceToHost) == cudaSuccess);
    double hw = h1 - h0, gt = (double)(w[2] - w[0]), cyc = (double)(w[3] - w[1]);
    double truth = cyc * 1e3 / hw;
    std::vector<double> mhz;
    for (int i = 0; i < 10; i++) if (ph[2 * i + 1]) mhz.push_back(ph[2 * i] * 1e3 / ph[2 * i + 1]);
    double md = median(mhz);
    printf("  %d graphs of 100 GEMMs; witness over %.3f ms of host time: globaltimer %+.4f %%, "
           "SM clock %.1f MHz by host time, %.1f MHz by globaltimer\n", reps, hw * 1e-6,
           100 * (gt / hw - 1), truth, cyc * 1e3 / gt);
    printf("  events around the load %.3f ms against %.3f ms of host time (%+.3f %%)\n", ms,
           (hl - h0) * 1e-6, 100 * (ms * 1e6 / (hl - h0) - 1));
    printf("  5 us probes in the last graph: median %.1f MHz (%+.2f %% against the witness)\n",
           md, 100 * (md / truth - 1));
    TB_CHECK(fabs(gt / hw - 1) < 0.002);
    TB_CHECK(fabs(ms * 1e6 / (hl - h0) - 1) < 0.005);
    TB_CHECK(mhz.size() == 10 && fabs(md / truth - 1) < 0.015);
    cudaGraphExecDestroy(exec); cudaGraphDestroy(graph);
    cudaStreamDestroy(s1); cudaStreamDestroy(s2);
    cudaFree(a); cudaFree(b); cudaFree(d); cudaFree(pdev);
    cudaFreeHost((void *)flags); cudaFreeHost((void *)w);
    tb_ref_close(ref);
}

int main()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { printf("SKIP: no GPU\n"); return 77; }
    unsigned long long *dev, host[2];
    cudaEvent_t e0, e1;
    if (cudaMalloc(&dev, 2 * sizeof *dev) != cudaSuccess || cudaEventCreate(&e0) != cudaSuccess ||
        cudaEventCreate(&e1) != cudaSuccess) { printf("FAIL clock-0: CUDA set-up\n"); return 1; }
    spin_cycles_kernel<<<1, 1>>>(1000, dev);          /* module load outside the timings */
    cudaDeviceSynchronize();

    TB_CASE("clock-1", "events and %globaltimer against CLOCK_MONOTONIC over 0.5 s spins") {
        for (int i = 0; i < 3; i++) {
            double h, ev, gt;
            TB_CHECK(timed_spin(1ull << 30, dev, host, e0, e1, &h, &ev, &gt) == 0);
            printf("  spin %d: host %.3f ms, events %.3f ms (%+.4f %%), globaltimer %.3f ms "
                   "(%+.4f %%), SM clock %.1f MHz by host time\n", i, h * 1e-6, ev * 1e-6,
                   100 * (ev / h - 1), gt * 1e-6, 100 * (gt / h - 1), host[0] * 1e3 / h);
            TB_CHECK(fabs(ev / h - 1) < 0.002);
            TB_CHECK(fabs(gt / h - 1) < 0.002);
        }
    }

    TB_CASE("clock-2", "the step of %globaltimer") {
        timer_step_kernel<<<1, 1>>>(1 << 16, dev);
        TB_CHECK(cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost) == cudaSuccess);
        printf("  smallest step %llu ns, %llu distinct values in 65536 reads\n", host[0], host[1]);
        TB_CHECK(host[0] > 0 && host[0] <= 1000);
    }

    TB_CASE("clock-3", "the per-sample clock probe against a host-timed clock64 spin") {
        unsigned long long *pdev, *ph;
        TB_CHECK(cudaMalloc(&pdev, 2 * 64 * sizeof *pdev) == cudaSuccess);
        ph = (unsigned long long *)malloc(2 * 64 * sizeof *ph);
        const unsigned spins[2] = { 5000, 20000 };
        for (int r = 0; r < 3; r++) {
            double h, ev, gt;
            TB_CHECK(timed_spin(1ull << 28, dev, host, e0, e1, &h, &ev, &gt) == 0);
            double ref = host[0] * 1e3 / h;
            for (int s = 0; s < 2; s++) {
                for (int i = 0; i < 64; i++) TB_CHECK(tbdev_clock_probe(pdev + 2 * i, spins[s], 0) == 0);
                TB_CHECK(cudaMemcpy(ph, pdev, 2 * 64 * sizeof *ph, cudaMemcpyDeviceToHost) == cudaSuccess);
                std::vector<double> mhz;
                for (int i = 0; i < 64; i++) if (ph[2 * i + 1]) mhz.push_back(ph[2 * i] * 1e3 / ph[2 * i + 1]);
                TB_CHECK(mhz.size() == 64);
                if (mhz.empty()) continue;
                double md = median(mhz), lo = *std::min_element(mhz.begin(), mhz.end());
                double hi = *std::max_element(mhz.begin(), mhz.end());
                printf("  round %d, %5u ns probes: median %.1f MHz (min %.1f, max %.1f) against "
                       "%.1f MHz by host time: %+.2f %%\n", r, spins[s], md, lo, hi, ref,
                       100 * (md / ref - 1));
                TB_CHECK(fabs(md / ref - 1) < 0.01);
                TB_CHECK(hi < ref * 1.03);
            }
        }
        cudaFree(pdev);
        free(ph);
    }
    TB_CASE("clock-4", "under a GEMM load (1024^3 cuBLASLt back to back, about 0.5 s): "
                       "%globaltimer, events and the probe against host time")
        clock_under_load(e0, e1);
    cudaFree(dev);
    return tb_test_done();
}
