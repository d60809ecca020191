/* test_clock.cu - the clocks every timing rests on, checked against the host's monotonic
 * clock on the GPU itself (a GPU test: exit 77 without a GPU).
 *
 *   clock-1  CUDA events and %globaltimer keep host time: over a spin of about 0.5 s, each
 *            reads within 0.2 % of CLOCK_MONOTONIC around the launch (a sample's
 *            milliseconds are event milliseconds; the clock per sample divides by
 *            %globaltimer nanoseconds).
 *   clock-2  %globaltimer's step: the smallest non-zero difference of back-to-back reads
 *            (printed; checked to be at most 1 us, or the 5 us probe could not resolve a clock).
 *   clock-3  the per-sample clock (tbdev_clock_stamp before and after, every SM's cycles
 *            over the interval) around a host-timed clock64 spin of one thread of about
 *            0.13 s, the other SMs idle: within 1 % of the spinning SM's clock by host time,
 *            from at least 90 % of the SMs (an idle SM whose counter stopped would read low).
 *   clock-4  the same under load: 1024^3 cuBLASLt GEMMs back to back for about 0.5 s (a graph
 *            of 100, replayed), with a witness thread on a stream of its own taking
 *            {%globaltimer, clock64} at the start and end of the load: %globaltimer and the
 *            events within 0.2 % / 0.5 % of host time; stamps around the whole load within
 *            1 % of the witness's clock by host time, stamps around the last graph within 3 %.
 *            Printed beside them: a 5 us probe run after every tenth GEMM, the way the clock
 *            was read before the sixth session (it read 2087 MHz against the witness's 1888).
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

/* the probe the sixth session replaced: spins spin_ns of %globaltimer after the work and
 * divides its own clock64 cycles by them (the clock of a nearly idle GPU) */
__global__ void after_probe_kernel(unsigned long long *out, unsigned spin_ns)
{
    unsigned long long t0, t1, c0, c1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    c0 = clock64();
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)); } while (t1 - t0 < spin_ns);
    c1 = clock64();
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
    unsigned long long *pdev = NULL, ph[2 * 10], *st = NULL;
    const int nb = tbdev_clock_stamp_blocks(), sms = nb / 2;
    volatile int *flags = NULL; int *flags_dev = NULL;
    volatile unsigned long long *w = NULL; unsigned long long *w_dev = NULL;
    cudaStream_t s1, s2;
    cudaGraph_t graph = NULL; cudaGraphExec_t exec = NULL;
    TB_CHECK(cudaMalloc(&a, 2 << 20) == cudaSuccess && cudaMalloc(&b, 2 << 20) == cudaSuccess &&
             cudaMalloc(&d, 4 << 20) == cudaSuccess && cudaMalloc(&pdev, sizeof ph) == cudaSuccess);
    TB_CHECK(cudaHostAlloc((void **)&flags, 64, cudaHostAllocMapped) == cudaSuccess &&
             cudaHostAlloc((void **)&w, 64, cudaHostAllocMapped) == cudaSuccess &&
             cudaHostAlloc((void **)&st, sizeof *st * 12 * nb, cudaHostAllocMapped) == cudaSuccess);
    if (!ref || !a || !b || !d || !pdev || !flags || !w || !st) return;
    unsigned long long *st_dev = NULL;
    cudaHostGetDevicePointer((void **)&st_dev, (void *)st, 0);
    cudaHostGetDevicePointer((void **)&flags_dev, (void *)flags, 0);
    cudaHostGetDevicePointer((void **)&w_dev, (void *)w, 0);
    memset((void *)flags, 0, 64); memset((void *)w, 0, 64);
    tbdev_fill_bf16(a, 1 << 20, 1, TB_INIT_UNIFORM, 0);
    tbdev_fill_bf16(b, 1 << 20, 2, TB_INIT_UNIFORM, 0);
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    TB_CHECK(tb_ref_gemm_cublaslt(ref, &g, a, b, NULL, d, s1, NULL, 0, msg, sizeof msg) == 0);
    cudaStreamSynchronize(s1);
    /* one graph: stamps, 100 GEMMs with the old 5 us probe after every tenth, stamps */
    TB_CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    tbdev_clock_stamp(st_dev + 6 * nb, nb, s1);
    for (int i = 0; i < 100; i++) {
        tb_ref_gemm_cublaslt(ref, &g, a, b, NULL, d, s1, NULL, 0, msg, sizeof msg);
        if (i % 10 == 9) after_probe_kernel<<<1, 1, 0, s1>>>(pdev + 2 * (i / 10), 5000);
    }
    tbdev_clock_stamp(st_dev + 9 * nb, nb, s1);
    TB_CHECK(cudaStreamEndCapture(s1, &graph) == cudaSuccess);
    TB_CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
    if (!exec) return;
    cudaGraphLaunch(exec, s1);                        /* upload, and a first warm run */
    TB_CHECK(cudaStreamSynchronize(s1) == cudaSuccess);
    witness_kernel<<<1, 1, 0, s2>>>(flags_dev, flags_dev + 1, w_dev);
    flags[0] = 1;
    while (!w[4]) { }
    double h0 = host_ns();
    tbdev_clock_stamp(st_dev, nb, s1);
    cudaEventRecord(e0, s1);
    int reps = 0;
    while (host_ns() - h0 < 5e8) {                   /* keep about 0.5 s queued */
        cudaGraphLaunch(exec, s1);
        if (++reps % 20 == 0) cudaStreamSynchronize(s1);
    }
    cudaEventRecord(e1, s1);
    tbdev_clock_stamp(st_dev + 3 * nb, nb, s1);
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
    int n_all = 0, n_last = 0;
    double all = tbdev_stamps_mhz(st, st + 3 * nb, nb, &n_all);
    double last = tbdev_stamps_mhz(st + 6 * nb, st + 9 * nb, nb, &n_last);
    printf("  stamps around the whole load: %.1f MHz from %d SMs (%+.2f %% against the witness); "
           "around the last graph: %.1f MHz from %d SMs (%+.2f %%)\n", all, n_all,
           100 * (all / truth - 1), last, n_last, 100 * (last / truth - 1));
    printf("  old 5 us probes after GEMMs in the last graph: median %.1f MHz (%+.2f %% against "
           "the witness)\n", md, 100 * (md / truth - 1));
    TB_CHECK(fabs(gt / hw - 1) < 0.002);
    TB_CHECK(fabs(ms * 1e6 / (hl - h0) - 1) < 0.005);
    TB_CHECK(n_all >= sms * 9 / 10 && fabs(all / truth - 1) < 0.01);
    TB_CHECK(n_last >= sms * 9 / 10 && fabs(last / truth - 1) < 0.03);
    cudaGraphExecDestroy(exec); cudaGraphDestroy(graph);
    cudaStreamDestroy(s1); cudaStreamDestroy(s2);
    cudaFree(a); cudaFree(b); cudaFree(d); cudaFree(pdev);
    cudaFreeHost((void *)flags); cudaFreeHost((void *)w); cudaFreeHost(st);
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

    TB_CASE("clock-3", "the per-sample clock stamps around a host-timed clock64 spin") {
        const int nb = tbdev_clock_stamp_blocks(), sms = nb / 2;
        unsigned long long *sd = NULL;
        std::vector<unsigned long long> sh(6 * (size_t)nb);
        TB_CHECK(cudaMalloc(&sd, sizeof *sd * 6 * nb) == cudaSuccess);
        for (int r = 0; r < 3 && sd; r++) {
            double h, ev, gt;
            TB_CHECK(tbdev_clock_stamp(sd, nb, 0) == 0);
            TB_CHECK(timed_spin(1ull << 28, dev, host, e0, e1, &h, &ev, &gt) == 0);
            TB_CHECK(tbdev_clock_stamp(sd + 3 * nb, nb, 0) == 0);
            TB_CHECK(cudaMemcpy(sh.data(), sd, sizeof *sd * 6 * nb, cudaMemcpyDeviceToHost) == cudaSuccess);
            double ref = host[0] * 1e3 / h;
            int n_sm = 0;
            double m = tbdev_stamps_mhz(sh.data(), sh.data() + 3 * nb, nb, &n_sm);
            printf("  round %d: stamps %.1f MHz from %d of %d SMs, against %.1f MHz by host time: "
                   "%+.2f %%\n", r, m, n_sm, sms, ref, 100 * (m / ref - 1));
            TB_CHECK(n_sm >= sms * 9 / 10);
            TB_CHECK(fabs(m / ref - 1) < 0.01);
        }
        cudaFree(sd);
    }

    TB_CASE("clock-4", "under a GEMM load (1024^3 cuBLASLt back to back, about 0.5 s): "
                       "%globaltimer, events and the probe against host time")
        clock_under_load(e0, e1);
    cudaFree(dev);
    return tb_test_done();
}
