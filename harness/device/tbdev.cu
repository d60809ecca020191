/* tbdev.cu - the harness's own kernels (see tbdev.h for the contract of each). */
#include "tbdev.h"
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

namespace {

__device__ __forceinline__ uint64_t mix64(uint64_t z)
{   /* splitmix64 finaliser: a counter-based generator, element i = f(seed, i) */
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float u01(uint64_t bits)   /* (0, 1] */
{
    return ((float)(bits >> 40) + 1.0f) * (1.0f / 16777216.0f);
}

/* Element i of the stream (key, dist): uniform on [-1, 1) or standard normal. */
__device__ __forceinline__ float draw(uint64_t key, size_t i, int dist)
{
    uint64_t h = mix64(key + i);
    if (dist == TB_INIT_NORMAL) {
        uint64_t h2 = mix64(h ^ 0x5851F42D4C957F2Dull);
        return sqrtf(-2.0f * logf(u01(h))) * cospif(2.0f * u01(h2));
    }
    return 2.0f * u01(h) - 1.0f;
}

__global__ void fill_bf16_kernel(__nv_bfloat16 *dst, size_t n, uint64_t seed, int dist)
{
    uint64_t key = mix64(seed ^ 0xA5A5A5A5DEADBEEFull);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(draw(key, i, dist));
}

/* x + offset rounded once to bf16: the attention rule's large-logits trial (Q = x + 1,
 * K = x + mu_k); x is the value fill_bf16_kernel draws for (seed, i, dist) */
__global__ void fill_bf16_offset_kernel(__nv_bfloat16 *dst, size_t n, uint64_t seed, int dist,
                                        float offset)
{
    uint64_t key = mix64(seed ^ 0xA5A5A5A5DEADBEEFull);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __float2bfloat16_rn(draw(key, i, dist) + offset);
}

/* x / scale rounded to the nearest E4M3, saturating at +-448 (never NaN): the bits stand for
 * scale * decode(bits), about x */
__global__ void fill_e4m3_kernel(__nv_fp8_storage_t *dst, size_t n, uint64_t seed, int dist,
                                 float inv_scale)
{
    uint64_t key = mix64(seed ^ 0xA5A5A5A5DEADBEEFull);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __nv_cvt_float_to_fp8(draw(key, i, dist) * inv_scale, __NV_SATFINITE, __NV_E4M3);
}

__global__ void fill_u16_kernel(uint16_t *dst, size_t n, uint16_t bits)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = bits;
}

__global__ void bf16_to_f32_kernel(float *dst, const __nv_bfloat16 *src, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = __bfloat162float(src[i]);
}

__global__ void l2_flush_kernel(const uint4 *buf, size_t n16, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16;
         i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = __ldcg(buf + i);      /* cache in L2 only: evicts what was there */
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u) *sink = acc;   /* practically never; keeps the loads alive */
}

__device__ __forceinline__ void atomic_max_double(double *addr, double v)
{   /* non-negative doubles order like their bit patterns */
    atomicMax((unsigned long long *)addr, (unsigned long long)__double_as_longlong(v));
}

__global__ void compare_kernel(const __nv_bfloat16 *d, const float *ref, int64_t m, int64_t n,
                               int64_t batch, int d_col, int64_t ldd, int64_t stride_d,
                               int ref_col, int64_t ld_ref, int64_t stride_ref,
                               double atol, double rtol, tb_cmp_result *out)
{
    __shared__ double s_sq_err[256], s_sq_ref[256], s_max[256];
    __shared__ unsigned long long s_bad[256], s_nf[256];
    double sq_err = 0, sq_ref = 0, mx = 0;
    unsigned long long bad = 0, nf = 0, first = ~0ull;
    const int64_t total = m * n * batch;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < total;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t b = idx / (m * n), rem = idx % (m * n), i = rem / n, j = rem % n;
        float dv = __bfloat162float(d[b * stride_d + (d_col ? j * ldd + i : i * ldd + j)]);
        float rv = ref[b * stride_ref + (ref_col ? j * ld_ref + i : i * ld_ref + j)];
        double rd = (double)rv;
        sq_ref += rd * rd;
        if (!isfinite(dv)) {
            nf++; bad++;
            if ((unsigned long long)idx < first) first = (unsigned long long)idx;
            continue;
        }
        double e = fabs((double)dv - rd);
        sq_err += e * e;
        if (e > mx) mx = e;
        if (!(e <= atol + rtol * fabs(rd))) {
            bad++;
            if ((unsigned long long)idx < first) first = (unsigned long long)idx;
        }
    }
    if (first != ~0ull) atomicMin(&out->first_bad, first);
    int t = threadIdx.x;
    s_sq_err[t] = sq_err; s_sq_ref[t] = sq_ref; s_max[t] = mx; s_bad[t] = bad; s_nf[t] = nf;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (t < w) {
            s_sq_err[t] += s_sq_err[t + w]; s_sq_ref[t] += s_sq_ref[t + w];
            s_max[t] = fmax(s_max[t], s_max[t + w]);
            s_bad[t] += s_bad[t + w]; s_nf[t] += s_nf[t + w];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(&out->sum_sq_err, s_sq_err[0]);
        atomicAdd(&out->sum_sq_ref, s_sq_ref[0]);
        atomic_max_double(&out->max_abs_err, s_max[0]);
        atomicAdd(&out->n_bad, s_bad[0]);
        atomicAdd(&out->n_nonfinite, s_nf[0]);
    }
}

__global__ void init_cmp_kernel(tb_cmp_result *out)
{
    out->n_bad = 0; out->n_nonfinite = 0; out->first_bad = ~0ull;
    out->max_abs_err = 0; out->sum_sq_err = 0; out->sum_sq_ref = 0;
}

/* A clock stamp: each one-thread block waits for a tick edge of %globaltimer and writes
 * {its SM, the timer value, clock64()} (clock64 read only once that value had arrived, so
 * every stamp is taken alike). */
__global__ void clock_stamp_kernel(unsigned long long *out)
{
    unsigned long long t, t0, c;
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)); } while (t0 == t);
    c = clock64();
    out[3 * blockIdx.x] = sm;
    out[3 * blockIdx.x + 1] = t0;
    out[3 * blockIdx.x + 2] = c;
}

__global__ void count_ne_kernel(const uint16_t *buf, size_t n, uint16_t bits,
                                unsigned long long *count)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        c += buf[i] != bits;
    if (c) atomicAdd(count, c);
}

__global__ void checksum_kernel(const unsigned long long *buf, size_t n, unsigned long long *sum)
{
    unsigned long long acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        acc += mix64(buf[i] ^ (i * 0x9E3779B97F4A7C15ull));   /* position-dependent */
    if (acc) atomicAdd(sum, acc);
}

__global__ void compare_f32_kernel(const float *x, const float *ref, size_t count, double atol,
                                   double rtol, tb_cmp_result *out)
{
    unsigned long long bad = 0, nf = 0, first = ~0ull;
    double mx = 0, se = 0, sr = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        double a = x[i], r = ref[i];
        sr += r * r;
        if (!isfinite(a)) { nf++; bad++; if (i < first) first = i; continue; }
        double e = fabs(a - r);
        se += e * e;
        if (e > mx) mx = e;
        if (!(e <= atol + rtol * fabs(r))) { bad++; if (i < first) first = i; }
    }
    if (bad) { atomicAdd(&out->n_bad, bad); atomicAdd(&out->n_nonfinite, nf); atomicMin(&out->first_bad, first); }
    atomicAdd(&out->sum_sq_err, se);
    atomicAdd(&out->sum_sq_ref, sr);
    atomicMax((unsigned long long *)&out->max_abs_err, (unsigned long long)__double_as_longlong(mx));
}

__global__ void noop_kernel() {}

__global__ void block_kernel(volatile int *flag, unsigned long long timeout_ns, int *timed_out)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*flag == 0) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) { *timed_out = 1; break; }
    }
}

unsigned grid_for(size_t n, unsigned block)
{
    size_t g = (n + block - 1) / block;
    if (g > 65535u * 4) g = 65535u * 4;
    return g ? (unsigned)g : 1u;
}

} // namespace

extern "C" int tbdev_fill_bf16(void *dst, size_t n, uint64_t seed, tb_init_dist dist,
                               cudaStream_t s)
{
    fill_bf16_kernel<<<grid_for(n, 256), 256, 0, s>>>((__nv_bfloat16 *)dst, n, seed, (int)dist);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_fill_bf16_offset(void *dst, size_t n, uint64_t seed, tb_init_dist dist,
                                      float offset, cudaStream_t s)
{
    fill_bf16_offset_kernel<<<grid_for(n, 256), 256, 0, s>>>((__nv_bfloat16 *)dst, n, seed,
                                                            (int)dist, offset);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_fill_e4m3(void *dst, size_t n, uint64_t seed, tb_init_dist dist,
                               float scale, cudaStream_t s)
{
    if (!(scale > 0.0f)) return (int)cudaErrorInvalidValue;
    fill_e4m3_kernel<<<grid_for(n, 256), 256, 0, s>>>((__nv_fp8_storage_t *)dst, n, seed, (int)dist,
                                                      1.0f / scale);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_fill_u16(void *dst, size_t n, uint16_t bits, cudaStream_t s)
{
    fill_u16_kernel<<<grid_for(n, 256), 256, 0, s>>>((uint16_t *)dst, n, bits);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_bf16_to_f32(float *dst, const void *src, size_t n, cudaStream_t s)
{
    bf16_to_f32_kernel<<<grid_for(n, 256), 256, 0, s>>>(dst, (const __nv_bfloat16 *)src, n);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_l2_flush(void *buf, size_t bytes, unsigned *sink, cudaStream_t s)
{
    size_t n16 = bytes / 16;
    l2_flush_kernel<<<grid_for(n16, 512), 512, 0, s>>>((const uint4 *)buf, n16, sink);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_compare_bf16_f32(const void *d, const float *ref, int64_t m, int64_t n,
                                      int64_t batch, int d_col, int64_t ldd, int64_t stride_d,
                                      int ref_col, int64_t ld_ref, int64_t stride_ref,
                                      double atol, double rtol, tb_cmp_result *out_dev,
                                      cudaStream_t s)
{
    init_cmp_kernel<<<1, 1, 0, s>>>(out_dev);
    size_t total = (size_t)(m * n * batch);
    unsigned g = grid_for(total, 256);
    if (g > 4096) g = 4096;
    compare_kernel<<<g, 256, 0, s>>>((const __nv_bfloat16 *)d, ref, m, n, batch, d_col, ldd,
                                     stride_d, ref_col, ld_ref, stride_ref, atol, rtol, out_dev);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_clock_stamp(unsigned long long *out_dev, int blocks, cudaStream_t s)
{
    clock_stamp_kernel<<<blocks, 1, 0, s>>>(out_dev);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_clock_stamp_blocks(void)
{
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
        sms = 1;
    return 2 * sms;
}

extern "C" double tbdev_stamps_mhz(const unsigned long long *a, const unsigned long long *b,
                                   int blocks, int *n_sm)
{
    /* the first stamp of each SM in a and in b; the clock of every SM found in both */
    std::vector<int> first_a(1024, -1), first_b(1024, -1);
    for (int i = 0; i < blocks; i++) {
        if (a[3 * i] < 1024 && first_a[a[3 * i]] < 0) first_a[a[3 * i]] = i;
        if (b[3 * i] < 1024 && first_b[b[3 * i]] < 0) first_b[b[3 * i]] = i;
    }
    std::vector<double> mhz;
    for (int sm = 0; sm < 1024; sm++) {
        int i = first_a[sm], j = first_b[sm];
        if (i < 0 || j < 0 || b[3 * j + 1] <= a[3 * i + 1] || b[3 * j + 2] <= a[3 * i + 2]) continue;
        mhz.push_back((double)(b[3 * j + 2] - a[3 * i + 2]) * 1000.0 / (double)(b[3 * j + 1] - a[3 * i + 1]));
    }
    if (n_sm) *n_sm = (int)mhz.size();
    if (mhz.empty()) return NAN;
    std::sort(mhz.begin(), mhz.end());
    size_t n = mhz.size();
    return n % 2 ? mhz[n / 2] : 0.5 * (mhz[n / 2 - 1] + mhz[n / 2]);
}

extern "C" int tbdev_count_ne_u16(const void *buf, size_t n, uint16_t bits,
                                  unsigned long long *count_dev, cudaStream_t s)
{
    cudaMemsetAsync(count_dev, 0, sizeof *count_dev, s);
    count_ne_kernel<<<grid_for(n, 256) > 1024 ? 1024 : grid_for(n, 256), 256, 0, s>>>(
        (const uint16_t *)buf, n, bits, count_dev);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_checksum(const void *buf, size_t bytes, unsigned long long *sum_dev,
                              cudaStream_t s)
{
    size_t n = bytes / 8;
    cudaMemsetAsync(sum_dev, 0, sizeof *sum_dev, s);
    checksum_kernel<<<grid_for(n, 256) > 2048 ? 2048 : grid_for(n, 256), 256, 0, s>>>(
        (const unsigned long long *)buf, n, sum_dev);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_compare_f32_f32(const float *x, const float *ref, size_t count, double atol,
                                     double rtol, tb_cmp_result *out_dev, cudaStream_t s)
{
    init_cmp_kernel<<<1, 1, 0, s>>>(out_dev);
    unsigned g = grid_for(count, 256);
    compare_f32_kernel<<<g > 2048 ? 2048 : g, 256, 0, s>>>(x, ref, count, atol, rtol, out_dev);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_noop(cudaStream_t s)
{
    noop_kernel<<<1, 32, 0, s>>>();
    return (int)cudaGetLastError();
}

extern "C" int tbdev_block(volatile int *flag, unsigned long long timeout_ns, int *timed_out,
                           cudaStream_t s)
{
    block_kernel<<<1, 1, 0, s>>>(flag, timeout_ns, timed_out);
    return (int)cudaGetLastError();
}
