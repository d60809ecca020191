/* tiled.cu - simt_tiled: shared-memory tiled SIMT GEMM, FP32 FMA, FP32 accumulation.
 *
 * A block of 16 x 16 threads computes a 64 x 64 tile of D; each thread owns a 4 x 4
 * micro-tile whose rows are ty + 16 r and columns tx + 16 c (strided, so a warp's reads of
 * a shared row are broadcasts or consecutive words). Each step stages a 64 x 16 slice of A
 * and a 16 x 64 slice of B in shared memory as FP32, k-major, each row padded by one word.
 * The loaders walk the contiguous dimension of each operand fastest, whichever layout it
 * has, so all layouts, leading dimensions and batch strides work and m, n, k can be
 * anything >= 1 (out-of-range elements load as zero). It is the SIMT baseline: supports()
 * refuses problems above 4096^3 multiply-adds so that a default sweep stays short.
 */
#include "../common/gemm_common.cuh"

namespace {

constexpr int BM = 64, BN = 64, BK = 16;
constexpr int TX = 16, TY = 16, THREADS = TX * TY;     /* 8 warps */
constexpr int RM = BM / TY, RN = BN / TX;               /* 4 x 4 micro-tile */
static_assert((BM * BK) % THREADS == 0 && (BN * BK) % THREADS == 0, "loader shape");

struct args {
    const __nv_bfloat16 *a, *b, *c;
    __nv_bfloat16 *d;
    int64_t m, n, k, batch;
    tbv::strides sa, sb, sc, sd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    float alpha, beta;
};

__global__ void __launch_bounds__(THREADS) tiled_kernel(const args g)
{
    __shared__ float As[BK][BM + 1];
    __shared__ float Bs[BK][BN + 1];
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
    const int64_t tiles_m = (g.m + BM - 1) / BM, tiles_n = (g.n + BN - 1) / BN;
    /* Which index varies fastest across threads while loading: the contiguous one. */
    const bool a_k_fast = g.sa.cs == 1, b_k_fast = g.sb.rs == 1;

    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z)
    for (int64_t tm = blockIdx.y; tm < tiles_m; tm += gridDim.y)
    for (int64_t tn = blockIdx.x; tn < tiles_n; tn += gridDim.x) {
        const __nv_bfloat16 *A = g.a + b * g.stride_a;
        const __nv_bfloat16 *B = g.b + b * g.stride_b;
        const int64_t m0 = tm * BM, n0 = tn * BN;
        float acc[RM][RN];
#pragma unroll
        for (int r = 0; r < RM; r++)
#pragma unroll
            for (int c = 0; c < RN; c++) acc[r][c] = 0.f;

        for (int64_t k0 = 0; k0 < g.k; k0 += BK) {
#pragma unroll
            for (int l = 0; l < BM * BK / THREADS; l++) {
                const int e = tid + l * THREADS;
                const int kk = a_k_fast ? e % BK : e / BM, ii = a_k_fast ? e / BK : e % BM;
                const int64_t i = m0 + ii, p = k0 + kk;
                As[kk][ii] = (i < g.m && p < g.k)
                                 ? __bfloat162float(A[i * g.sa.rs + p * g.sa.cs]) : 0.f;
            }
#pragma unroll
            for (int l = 0; l < BN * BK / THREADS; l++) {
                const int e = tid + l * THREADS;
                const int kk = b_k_fast ? e % BK : e / BN, jj = b_k_fast ? e / BK : e % BN;
                const int64_t j = n0 + jj, p = k0 + kk;
                Bs[kk][jj] = (j < g.n && p < g.k)
                                 ? __bfloat162float(B[p * g.sb.rs + j * g.sb.cs]) : 0.f;
            }
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < BK; kk++) {
                float av[RM], bv[RN];
#pragma unroll
                for (int r = 0; r < RM; r++) av[r] = As[kk][ty + TY * r];
#pragma unroll
                for (int c = 0; c < RN; c++) bv[c] = Bs[kk][tx + TX * c];
#pragma unroll
                for (int r = 0; r < RM; r++)
#pragma unroll
                    for (int c = 0; c < RN; c++) acc[r][c] = fmaf(av[r], bv[c], acc[r][c]);
            }
            __syncthreads();
        }

#pragma unroll
        for (int r = 0; r < RM; r++) {
            const int64_t i = m0 + ty + TY * r;
            if (i >= g.m) continue;
#pragma unroll
            for (int c = 0; c < RN; c++) {
                const int64_t j = n0 + tx + TX * c;
                if (j >= g.n) continue;
                float v = g.alpha * acc[r][c];
                if (g.beta != 0.f)
                    v = fmaf(g.beta,
                             __bfloat162float(g.c[b * g.stride_c + i * g.sc.rs + j * g.sc.cs]), v);
                g.d[b * g.stride_d + i * g.sd.rs + j * g.sd.cs] = __float2bfloat16(v);
            }
        }
    }
}

int tiled_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_ok(p, why, len)) return 0;
    if (tbv::gemm_volume(&p->gemm) > 4096.0 * 4096.0 * 4096.0)
        return tbv::no(why, len, "m*n*k above 4096^3 (simt tiled baseline limit)");
    return 1;
}

int tiled_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
                 size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    const tb_gemm *q = &p->gemm;
    args g;
    g.a = (const __nv_bfloat16 *)io->in[0];
    g.b = (const __nv_bfloat16 *)io->in[1];
    g.c = q->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
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

    const int64_t gx = (q->n + BN - 1) / BN, gy = (q->m + BM - 1) / BM;
    const dim3 grid((unsigned)(gx < 65535 ? gx : 65535), (unsigned)(gy < 65535 ? gy : 65535),
                    (unsigned)(q->batch < 65535 ? q->batch : 65535));
    tiled_kernel<<<grid, dim3(TX, TY), 0, (cudaStream_t)stream>>>(g);
    return tbv::last_launch_error();
}

const tb_param tiled_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("tile_m", BM),
    TB_PARAM_INT("tile_n", BN),
    TB_PARAM_INT("tile_k", BK),
    TB_PARAM_INT("warps", THREADS / 32),
    TB_PARAM_END
};

char tiled_name[64];

const tb_variant tiled_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), tiled_name, "simt_tiled", tiled_params,
    TB_SASS, tiled_supports, NULL, tiled_launch, NULL, NULL, NULL, NULL
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(tiled_variant, tiled_name, "simt_tiled", tiled_params)
