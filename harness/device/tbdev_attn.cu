/* tbdev_attn.cu - the attention rule's sums on the GPU (see tbdev_attn.h): O walked one warp per
 * run of rows of one head, LSE one thread per element, the largest row norm of Q or K one warp
 * per row; each warp reduces its lanes with shuffles and adds its share to the workspace with
 * one set of atomics. Arithmetic in double, as rule_attention.c's; only the order of the sums
 * differs (a tree over lanes instead of a running sum), which moves an allowance by a few
 * units in the 16th digit, and the largest error / allowance is found by comparing products
 * (e1 tol2 > e2 tol1) and divided once, so two ratios within a rounding of each other may
 * swap (the value differs by an ulp). Without a division in the loops no kernel spills
 * (ptxas -v, sm_90: 12-78 registers, 0 bytes of stack). */
#include "tbdev_attn.h"

#include <cuda_runtime.h>
#include <math.h>

namespace {

constexpr int RULE_THREADS = 256;
constexpr int ROWS_PER_WARP = 16;   /* rows of one head a warp walks before its atomics */
constexpr unsigned FULL = 0xffffffffu;

struct ws_layout {
    tbdev_attn_sums *sums;
    double *h_err, *h_ref;
    unsigned *h_flags;
};

__host__ __device__ inline size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

__host__ __device__ inline ws_layout layout(void *ws, uint64_t heads)
{
    char *p = (char *)ws;
    ws_layout l;
    l.sums = (tbdev_attn_sums *)p;
    p += align256(sizeof(tbdev_attn_sums));
    l.h_err = (double *)p;
    p += align256(heads * sizeof(double));
    l.h_ref = (double *)p;
    p += align256(heads * sizeof(double));
    l.h_flags = (unsigned *)p;
    return l;
}

__device__ inline float bf16_bits_to_f32(uint16_t h) { return __uint_as_float((unsigned)h << 16); }

__device__ inline double warp_sum(double v)
{
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
__device__ inline double warp_max(double v)
{
    for (int o = 16; o; o >>= 1) v = fmax(v, __shfl_xor_sync(FULL, v, o));
    return v;
}
__device__ inline unsigned long long warp_min(unsigned long long v)
{
    for (int o = 16; o; o >>= 1) {
        unsigned long long w = __shfl_xor_sync(FULL, v, o);
        v = w < v ? w : v;
    }
    return v;
}
__device__ inline unsigned long long warp_sum_u(unsigned long long v)
{
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(FULL, v, o);
    return v;
}
/* atomic max of a non-negative double (its bit pattern orders as an unsigned integer) */
__device__ inline void atomic_max_pos(double *p, double v)
{
    if (v > 0) atomicMax((unsigned long long *)p, (unsigned long long)__double_as_longlong(v));
}

/* One thread's (then one warp's) share of a tensor's figures. */
struct part {
    unsigned long long n_bad = 0, n_nf = 0, first_bad = TBDEV_ATTN_NONE, first_nf = TBDEV_ATTN_NONE,
                       ref_first = TBDEV_ATTN_NONE;
    double max_e = 0, max_r = 0;
    double re = 0, rt = 1;   /* the element of largest e / tol so far: its e and tol */

    __device__ void ref_bad(unsigned long long x) { if (x < ref_first) ref_first = x; }
    __device__ void nonfinite(unsigned long long x)
    {
        n_nf++;
        n_bad++;
        if (x < first_nf) first_nf = x;
        if (x < first_bad) first_bad = x;
    }
    /* a finite element x off by e against its allowance tol; true when it is bad */
    __device__ bool off(unsigned long long x, double e, double tol)
    {
        max_e = fmax(max_e, e);
        if (e * rt > re * tol) {   /* e / tol > re / rt, compared without dividing */
            re = e;
            rt = tol;
        }
        if (!(e > tol)) return false;
        n_bad++;
        if (x < first_bad) first_bad = x;
        return true;
    }
    /* the warp's lanes reduced in place (every lane then holds the warp's figures), lane 0
     * adding them to dst; every lane must call this */
    __device__ void flush(tbdev_attn_part *dst)
    {
        n_bad = warp_sum_u(n_bad);
        n_nf = warp_sum_u(n_nf);
        first_bad = warp_min(first_bad);
        first_nf = warp_min(first_nf);
        ref_first = warp_min(ref_first);
        max_e = warp_max(max_e);
        max_r = warp_max(re / rt);   /* one division a lane, the largest ratio's own */
        if ((threadIdx.x & 31) != 0) return;
        if (n_bad) atomicAdd(&dst->n_bad, n_bad);
        if (n_nf) atomicAdd(&dst->n_nonfinite, n_nf);
        if (first_bad != TBDEV_ATTN_NONE) atomicMin(&dst->first_bad, first_bad);
        if (first_nf != TBDEV_ATTN_NONE) atomicMin(&dst->first_nonfinite, first_nf);
        if (ref_first != TBDEV_ATTN_NONE) atomicMin(&dst->ref_first, ref_first);
        atomic_max_pos(&dst->max_abs_err, max_e);
        atomic_max_pos(&dst->max_ratio, max_r);
    }
};

__global__ void reset_kernel(ws_layout l, uint64_t heads)
{
    const uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i0 == 0) {
        tbdev_attn_part z = {};
        z.first_bad = z.first_nonfinite = z.ref_first = TBDEV_ATTN_NONE;
        l.sums->o = z;
        l.sums->lse = z;
    }
    for (uint64_t i = i0; i < heads; i += (uint64_t)gridDim.x * blockDim.x) {   /* the grid is capped */
        l.h_err[i] = 0;
        l.h_ref[i] = 0;
        l.h_flags[i] = 0;
    }
}

/* One warp per (head, run of ROWS_PER_WARP rows); lane c takes columns c, c + 32, ... */
__global__ void __launch_bounds__(RULE_THREADS) o_kernel(const float *__restrict__ ref,
                                                         const uint16_t *__restrict__ o,
                                                         int64_t os0, int64_t os1, int64_t os2,
                                                         int64_t H, int64_t Sq, int64_t D,
                                                         double o_atol, double o_rtol,
                                                         uint64_t tasks, ws_layout l)
{
    const int lane = threadIdx.x & 31;
    const uint64_t runs = (uint64_t)((Sq + ROWS_PER_WARP - 1) / ROWS_PER_WARP);
    const uint64_t warps = (uint64_t)gridDim.x * (RULE_THREADS / 32);
    for (uint64_t t = (uint64_t)blockIdx.x * (RULE_THREADS / 32) + (threadIdx.x >> 5); t < tasks;
         t += warps) {
        const uint64_t head = t / runs;                 /* b * H + h */
        const int64_t b = (int64_t)(head / (uint64_t)H), h = (int64_t)(head % (uint64_t)H);
        const int64_t i0 = (int64_t)(t % runs) * ROWS_PER_WARP;
        const int64_t i1 = i0 + ROWS_PER_WARP < Sq ? i0 + ROWS_PER_WARP : Sq;
        part p;
        double h_err = 0, h_ref = 0;
        for (int64_t i = i0; i < i1; i++) {
            const uint64_t base = ((uint64_t)head * (uint64_t)Sq + (uint64_t)i) * (uint64_t)D;
            const float *r_row = ref + base;
            const uint16_t *o_row = o + b * os0 + h * os1 + i * os2;
            double ss = 0;
            for (int64_t c = lane; c < D; c += 32) {
                const double r = r_row[c];
                if (!isfinite(r)) p.ref_bad(base + (uint64_t)c);
                ss += r * r;
            }
            ss = warp_sum(ss);
            const double atol = ss > 0 ? o_atol * sqrt(ss / (double)D) : 0x1p-24;
            for (int64_t c = lane; c < D; c += 32) {
                const uint64_t x = base + (uint64_t)c;
                const double r = r_row[c], d = bf16_bits_to_f32(o_row[c]);
                if (!isfinite(d)) {
                    p.nonfinite(x);
                    continue;
                }
                const double e = fabs(d - r);
                p.off(x, e, atol + o_rtol * fabs(r));
                h_err += e * e;
                h_ref += r * r;
            }
        }
        p.flush(&l.sums->o);   /* leaves every lane holding the warp's totals */
        h_err = warp_sum(h_err);
        h_ref = warp_sum(h_ref);
        if (lane == 0) {
            atomicAdd(&l.h_err[head], h_err);
            atomicAdd(&l.h_ref[head], h_ref);
            const unsigned f = (p.n_bad ? 1u : 0u) | (p.n_nf ? 2u : 0u);
            if (f) atomicOr(&l.h_flags[head], f);
        }
    }
}

__global__ void __launch_bounds__(RULE_THREADS) lse_kernel(const float *__restrict__ ref,
                                                           const float *__restrict__ lse,
                                                           int64_t ls0, int64_t ls1, int64_t H,
                                                           int64_t Sq, uint64_t n, double atol,
                                                           double rtol, ws_layout l)
{
    part p;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t x = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; x < n; x += stride) {
        const int64_t i = (int64_t)(x % (uint64_t)Sq), bh = (int64_t)(x / (uint64_t)Sq);
        const int64_t b = bh / H, h = bh % H;
        const double r = ref[x], d = lse[b * ls0 + h * ls1 + i];
        if (!isfinite(r)) {
            p.ref_bad(x);
            continue;
        }
        if (!isfinite(d)) {
            p.nonfinite(x);
            continue;
        }
        p.off(x, fabs(d - r), atol + rtol * fabs(r));
    }
    p.flush(&l.sums->lse);
}

__global__ void __launch_bounds__(RULE_THREADS) row_norm_kernel(const uint16_t *__restrict__ x,
                                                                int64_t s0, int64_t s1, int64_t s2,
                                                                int64_t n1, int64_t n2, int64_t d,
                                                                uint64_t rows, double *out)
{
    const int lane = threadIdx.x & 31;
    const uint64_t warps = (uint64_t)gridDim.x * (RULE_THREADS / 32);
    double best = 0;
    for (uint64_t r = (uint64_t)blockIdx.x * (RULE_THREADS / 32) + (threadIdx.x >> 5); r < rows;
         r += warps) {
        const int64_t k = (int64_t)(r % (uint64_t)n2), j = (int64_t)((r / (uint64_t)n2) % (uint64_t)n1),
                      i = (int64_t)(r / ((uint64_t)n2 * (uint64_t)n1));
        const uint16_t *row = x + i * s0 + j * s1 + k * s2;
        double ss = 0;
        for (int64_t c = lane; c < d; c += 32) {
            const double v = bf16_bits_to_f32(row[c]);
            ss += v * v;
        }
        ss = warp_sum(ss);
        if (!isfinite(ss)) ss = INFINITY;   /* NaN too: the bound refuses it */
        best = fmax(best, ss);
    }
    if (lane == 0) atomic_max_pos(out, best);
}

int blocks_for(uint64_t work_items, int per_block)
{
    uint64_t b = (work_items + (uint64_t)per_block - 1) / (uint64_t)per_block;
    if (b < 1) b = 1;
    return b > 4096 ? 4096 : (int)b;   /* grid-stride loops beyond */
}

} // namespace

extern "C" size_t tbdev_attn_rule_ws_bytes(uint64_t heads)
{
    return align256(sizeof(tbdev_attn_sums)) + 2 * align256(heads * sizeof(double)) +
           align256(heads * sizeof(unsigned));
}

extern "C" int tbdev_attn_rule_reset(void *ws, uint64_t heads, cudaStream_t s)
{
    if (!ws || heads < 1) return (int)cudaErrorInvalidValue;
    reset_kernel<<<blocks_for(heads, RULE_THREADS), RULE_THREADS, 0, s>>>(layout(ws, heads), heads);
    return (int)cudaGetLastError();
}

extern "C" int tbdev_attn_rule_o(const float *o_ref, const uint16_t *o, const int64_t o_stride[3],
                                 int64_t batch, int64_t heads, int64_t seq_q, int64_t head_dim,
                                 double o_atol, double o_rtol, void *ws, cudaStream_t s)
{
    if (!o_ref || !o || !o_stride || !ws || batch < 1 || heads < 1 || seq_q < 1 || head_dim < 1)
        return (int)cudaErrorInvalidValue;
    const uint64_t nh = (uint64_t)batch * (uint64_t)heads;
    const uint64_t tasks = nh * (uint64_t)((seq_q + ROWS_PER_WARP - 1) / ROWS_PER_WARP);
    o_kernel<<<blocks_for(tasks, RULE_THREADS / 32), RULE_THREADS, 0, s>>>(
        o_ref, o, o_stride[0], o_stride[1], o_stride[2], heads, seq_q, head_dim, o_atol, o_rtol,
        tasks, layout(ws, nh));
    return (int)cudaGetLastError();
}

extern "C" int tbdev_attn_rule_lse(const float *lse_ref, const float *lse,
                                   const int64_t lse_stride[2], int64_t batch, int64_t heads,
                                   int64_t seq_q, double lse_atol, double lse_rtol, void *ws,
                                   cudaStream_t s)
{
    if (!lse_ref || !lse || !lse_stride || !ws || batch < 1 || heads < 1 || seq_q < 1)
        return (int)cudaErrorInvalidValue;
    const uint64_t nh = (uint64_t)batch * (uint64_t)heads, n = nh * (uint64_t)seq_q;
    lse_kernel<<<blocks_for(n, RULE_THREADS), RULE_THREADS, 0, s>>>(
        lse_ref, lse, lse_stride[0], lse_stride[1], heads, seq_q, n, lse_atol, lse_rtol,
        layout(ws, nh));
    return (int)cudaGetLastError();
}

extern "C" int tbdev_attn_rule_read(const void *ws, uint64_t heads, tbdev_attn_sums *sums,
                                    double *h_err, double *h_ref, uint32_t *h_flags, cudaStream_t s)
{
    if (!ws || heads < 1) return (int)cudaErrorInvalidValue;
    const ws_layout l = layout((void *)ws, heads);
    cudaError_t e = cudaSuccess;
    if (sums && e == cudaSuccess)
        e = cudaMemcpyAsync(sums, l.sums, sizeof *sums, cudaMemcpyDeviceToHost, s);
    if (h_err && e == cudaSuccess)
        e = cudaMemcpyAsync(h_err, l.h_err, heads * sizeof(double), cudaMemcpyDeviceToHost, s);
    if (h_ref && e == cudaSuccess)
        e = cudaMemcpyAsync(h_ref, l.h_ref, heads * sizeof(double), cudaMemcpyDeviceToHost, s);
    if (h_flags && e == cudaSuccess)
        e = cudaMemcpyAsync(h_flags, l.h_flags, heads * sizeof(unsigned), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    return (int)e;
}

extern "C" int tbdev_row_norm2_max(const uint16_t *x, const int64_t st[3], int64_t n0, int64_t n1,
                                   int64_t n2, int64_t d, double *out, cudaStream_t s)
{
    if (!x || !st || !out || n0 < 1 || n1 < 1 || n2 < 1 || d < 1) return (int)cudaErrorInvalidValue;
    cudaError_t e = cudaMemsetAsync(out, 0, sizeof *out, s);
    if (e != cudaSuccess) return (int)e;
    const uint64_t rows = (uint64_t)n0 * (uint64_t)n1 * (uint64_t)n2;
    row_norm_kernel<<<blocks_for(rows, RULE_THREADS / 32), RULE_THREADS, 0, s>>>(
        x, st[0], st[1], st[2], n1, n2, d, rows, out);
    return (int)cudaGetLastError();
}
