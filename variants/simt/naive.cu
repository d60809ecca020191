/* naive.cu - simt_naive: one thread per output element, FP32 accumulation.
 *
 * The slowest honest GEMM: thread (i, j) walks k and reads A and B straight from global
 * memory through the general element addressing of tb_layout, so every layout, leading
 * dimension and batch stride works and m, n, k can be anything >= 1. It is a baseline and
 * a correctness anchor, not a candidate: supports() refuses problems above 2048^3
 * multiply-adds so that a default sweep stays short.
 */
#include "../common/gemm_common.cuh"

namespace {

struct args {
    const __nv_bfloat16 *a, *b, *c;
    __nv_bfloat16 *d;
    int64_t m, n, k, batch;
    tbv::strides sa, sb, sc, sd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    float alpha, beta;
};

/* Grid-stride in all three dimensions: x walks columns, y rows, z batches, so any m, n
 * and batch fit the grid limits. */
__global__ void naive_kernel(const args g)
{
    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
        const __nv_bfloat16 *A = g.a + b * g.stride_a;
        const __nv_bfloat16 *B = g.b + b * g.stride_b;
        for (int64_t i = (int64_t)blockIdx.y * blockDim.y + threadIdx.y; i < g.m;
             i += (int64_t)gridDim.y * blockDim.y) {
            for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < g.n;
                 j += (int64_t)gridDim.x * blockDim.x) {
                float acc = 0.f;
                const __nv_bfloat16 *pa = A + i * g.sa.rs;
                const __nv_bfloat16 *pb = B + j * g.sb.cs;
                for (int64_t p = 0; p < g.k; p++)
                    acc = fmaf(__bfloat162float(pa[p * g.sa.cs]),
                               __bfloat162float(pb[p * g.sb.rs]), acc);
                float v = g.alpha * acc;
                if (g.beta != 0.f)
                    v = fmaf(g.beta,
                             __bfloat162float(g.c[b * g.stride_c + i * g.sc.rs + j * g.sc.cs]), v);
                g.d[b * g.stride_d + i * g.sd.rs + j * g.sd.cs] = __float2bfloat16(v);
            }
        }
    }
}

int naive_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_ok(p, why, len)) return 0;
    if (tbv::gemm_volume(&p->gemm) > 2048.0 * 2048.0 * 2048.0)
        return tbv::no(why, len, "m*n*k above 2048^3 (naive baseline limit)");
    return 1;
}

int naive_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
                 size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    const tb_gemm *q = &p->gemm;
    args g;
    g.a = (const __nv_bfloat16 *)io->in[0];
    g.b = (const __nv_bfloat16 *)io->in[1];
    g.c = (const __nv_bfloat16 *)io->in[2];
    g.d = (__nv_bfloat16 *)io->out[0];
    g.m = q->m; g.n = q->n; g.k = q->k; g.batch = q->batch;
    g.sa = tbv::strides_of(q->a_layout, q->lda);
    g.sb = tbv::strides_of(q->b_layout, q->ldb);
    g.sc = tbv::strides_of(q->c_layout, q->ldc);
    g.sd = tbv::strides_of(q->d_layout, q->ldd);
    g.stride_a = q->stride_a; g.stride_b = q->stride_b;
    g.stride_c = q->stride_c; g.stride_d = q->stride_d;
    g.alpha = (float)q->alpha;
    g.beta = (float)q->beta;
    if (q->beta == 0.0) g.c = NULL;

    const dim3 block(32, 8);
    const int64_t gx = (q->n + block.x - 1) / block.x, gy = (q->m + block.y - 1) / block.y;
    const dim3 grid((unsigned)(gx < 65535 ? gx : 65535), (unsigned)(gy < 65535 ? gy : 65535),
                    (unsigned)(q->batch < 65535 ? q->batch : 65535));
    naive_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(g);
    return tbv::last_launch_error();
}

const tb_param naive_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("warps", 8),
    TB_PARAM_END
};

char naive_name[64];

const tb_variant naive_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), naive_name, "simt_naive", naive_params,
    TB_SASS, naive_supports, NULL, naive_launch, NULL, NULL, NULL, NULL
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(naive_variant, naive_name, "simt_naive", naive_params)
