/* counters_kernels.cuh - planted kernels for tests/test_counters.cu, whose counter values are
 * known exactly by construction.
 *
 * Shared-memory accesses are 32-bit and go through a volatile pointer, so each source access
 * is exactly one LDS/STS instruction per warp. Lane l of a warp accesses word
 * l * stride + (i & 31) on access i: with stride 32 all 32 lanes hit one bank at 32 distinct
 * addresses (32 wavefronts, 31 of them extra: the bank conflicts), with stride 1 or 33 every
 * lane has a bank of its own (1 wavefront, no conflict). Per warp, tbk_lds_stride issues
 * n conflicted-or-not loads (its initial stores are consecutive words: conflict-free) and
 * tbk_sts_stride n stores (its one final load is consecutive: conflict-free).
 */
#ifndef TB_TESTS_COUNTERS_KERNELS_CUH
#define TB_TESTS_COUNTERS_KERNELS_CUH

#define TBK_SMEM_WORDS 2048   /* > 31 * 33 + 31 */

__global__ void tbk_lds_stride(int stride, int n, int *out)
{
    __shared__ int s[TBK_SMEM_WORDS];
    for (int j = threadIdx.x; j < TBK_SMEM_WORDS; j += blockDim.x) s[j] = j;
    __syncthreads();
    const volatile int *vs = s;
    int lane = threadIdx.x & 31, acc = 0;
    for (int i = 0; i < n; i++) acc += vs[lane * stride + (i & 31)];
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

__global__ void tbk_sts_stride(int stride, int n, int *out)
{
    __shared__ int s[TBK_SMEM_WORDS];
    volatile int *vs = s;
    int lane = threadIdx.x & 31;
    for (int i = 0; i < n; i++) vs[lane * stride + (i & 31)] = i;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = vs[threadIdx.x % TBK_SMEM_WORDS];
}

/* Known resources: 4000 bytes of static shared memory, dynamic shared memory as launched,
 * and local memory (a per-thread array indexed at run time). Registers: whatever ptxas chose,
 * which cudaFuncGetAttributes reports. Expects blockDim.x * blockDim.y <= 256 and
 * 256 floats of dynamic shared memory. */
__global__ void tbk_resources(float *out, int n)
{
    __shared__ float buf[1000];
    extern __shared__ float dyn[];
    float loc[64];
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    for (int i = 0; i < 64; i++) loc[i] = out[(t + i * 3) % n];
    int idx = (t * 7 + n) & 63;
    buf[t % 1000] = loc[idx];
    dyn[t & 255] = loc[(idx + 5) & 63];
    __syncthreads();
    out[(blockIdx.y * gridDim.x + blockIdx.x) * 256 % n + t % n] = buf[(t + 1) % 1000] + dyn[(t + 1) & 255] + loc[(idx + 3) & 63];
}

/* Reads n ints (a multiple of 4 per thread-stride) and folds them into out: DRAM read bytes
 * are n * 4 when the L2 starts cold. */
__global__ void tbk_read(const int4 *p, size_t n4, int *out)
{
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7fffffff) out[0] = acc;   /* never true for the data written; keeps the loads */
}

/* Write n4 int4 of p (leaves its lines dirty in the L2). */
__global__ void tbk_write(int4 *p, size_t n4)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
        p[i] = make_int4((int)i, 1, 2, 3);
}

#endif
