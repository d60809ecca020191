/* attn_naive.cu - attn_naive_bf16: the attention forward floor (issue 33).
 *
 * Owns one kernel and its host side: one warp per query row, the lanes splitting the head
 * dimension (lane l holds elements l, l + 32, ... : up to 8 each, so D <= 256). For each key
 * the warp forms the FP32 score by a shuffle sum, then updates an online softmax (running
 * max m, sum l, FP32 accumulator rescaled by exp(m_old - m_new)); O = acc / l rounded once to
 * BF16, LSE = m + ln l in FP32. Every tensor is addressed through its strides, so BHSD, BSHD
 * and padded strides all work; grouped-query heads (K/V head h / (H / Hkv)) and the
 * bottom-right causal mask (Sq <= Sk) are handled. A baseline and a correctness anchor, not
 * a candidate: keys are walked one at a time from global memory, and supports() refuses
 * problems above 2^34 B*H*Sq*Sk*D so that a sweep stays short.
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tilebench/variant.h"
#include "../common/attn_common.cuh"
#include "../common/gemm_common.cuh"   /* tbv::no */

namespace {

constexpr int kWarps = 4;           /* warps (query rows) per block */
constexpr int kPerLane = 8;         /* head-dim elements per lane: D <= 256 */
constexpr int64_t kMaxDim = 32 * kPerLane;

using tbv::no;   /* the one-line reason writer the variants share (gemm_common.cuh) */

struct args {
    const __nv_bfloat16 *q, *k, *v;
    __nv_bfloat16 *o;
    float *lse;
    int64_t batch, heads, group, seq_q, seq_k, dim;
    int64_t qs[3], ks[3], vs[3], os[3], ls[2];
    float scale;
    int causal;
};

__global__ void __launch_bounds__(32 * kWarps) attn_naive_kernel(const args g)
{
    const int lane = (int)(threadIdx.x & 31);
    const int64_t rows = g.batch * g.heads * g.seq_q;
    const int64_t step = (int64_t)gridDim.x * kWarps;
    for (int64_t r = (int64_t)blockIdx.x * kWarps + (threadIdx.x >> 5); r < rows; r += step) {
        const int64_t i = r % g.seq_q;
        const int64_t bh = r / g.seq_q;
        const int64_t h = bh % g.heads, b = bh / g.heads;
        const int64_t hk = h / g.group;
        const __nv_bfloat16 *qp = g.q + b * g.qs[0] + h * g.qs[1] + i * g.qs[2];
        const __nv_bfloat16 *kp = g.k + b * g.ks[0] + hk * g.ks[1];
        const __nv_bfloat16 *vp = g.v + b * g.vs[0] + hk * g.vs[1];
        const int64_t nk = g.causal ? min(g.seq_k, i + 1 + g.seq_k - g.seq_q) : g.seq_k;

        float qr[kPerLane], acc[kPerLane];
#pragma unroll
        for (int t = 0; t < kPerLane; t++) {
            const int64_t d = lane + 32 * t;
            qr[t] = d < g.dim ? __bfloat162float(qp[d]) : 0.f;
            acc[t] = 0.f;
        }
        float m = -INFINITY, l = 0.f;
        for (int64_t j = 0; j < nk; j++) {
            const __nv_bfloat16 *kj = kp + j * g.ks[2];
            float s = 0.f;
#pragma unroll
            for (int t = 0; t < kPerLane; t++) {
                const int64_t d = lane + 32 * t;
                if (d < g.dim) s = fmaf(qr[t], __bfloat162float(kj[d]), s);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
            s *= g.scale;
            const float mn = fmaxf(m, s);
            const float alpha = expf(m - mn);   /* 0 on the first key: m = -inf */
            const float p = expf(s - mn);
            l = fmaf(l, alpha, p);
            const __nv_bfloat16 *vj = vp + j * g.vs[2];
#pragma unroll
            for (int t = 0; t < kPerLane; t++) {
                const int64_t d = lane + 32 * t;
                if (d < g.dim) acc[t] = fmaf(acc[t], alpha, p * __bfloat162float(vj[d]));
            }
            m = mn;
        }
        __nv_bfloat16 *op = g.o + b * g.os[0] + h * g.os[1] + i * g.os[2];
        const float inv = 1.f / l;
#pragma unroll
        for (int t = 0; t < kPerLane; t++) {
            const int64_t d = lane + 32 * t;
            if (d < g.dim) op[d] = __float2bfloat16(acc[t] * inv);
        }
        if (lane == 0) g.lse[b * g.ls[0] + h * g.ls[1] + i] = m + logf(l);
    }
}

int attn_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::attention_basics(p, why, len)) return 0;
    const tb_attention *a = &p->attention;
    if (a->head_dim > kMaxDim)
        return no(why, len, "head_dim above %lld (8 elements per lane)", (long long)kMaxDim);
    if (a->causal > 1) return no(why, len, "causal must be 0 or 1");
    if (a->causal && a->seq_q > a->seq_k) return no(why, len, "causal needs seq_q <= seq_k");
    if (!(a->scale > 0.0) || !isfinite(a->scale)) return no(why, len, "scale must be finite and > 0");
    for (int t = 0; t < 3; t++)
        if (a->q_stride[t] < 0 || a->k_stride[t] < 0 || a->v_stride[t] < 0 || a->o_stride[t] < 0)
            return no(why, len, "negative strides");
    if (a->lse_stride[0] < 0 || a->lse_stride[1] < 0) return no(why, len, "negative lse strides");
    const double work = (double)a->batch * (double)a->heads * (double)a->seq_q *
                        (double)a->seq_k * (double)a->head_dim;
    if (work > 17179869184.0)
        return no(why, len, "B*H*Sq*Sk*D above 2^34 (naive baseline limit)");
    return 1;
}

int attn_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
                size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    const tb_attention *a = &p->attention;
    args g;
    g.q = (const __nv_bfloat16 *)io->in[0];
    g.k = (const __nv_bfloat16 *)io->in[1];
    g.v = (const __nv_bfloat16 *)io->in[2];
    g.o = (__nv_bfloat16 *)io->out[0];
    g.lse = (float *)io->out[1];
    g.batch = a->batch; g.heads = a->heads; g.group = a->heads / a->heads_kv;
    g.seq_q = a->seq_q; g.seq_k = a->seq_k; g.dim = a->head_dim;
    for (int t = 0; t < 3; t++) {
        g.qs[t] = a->q_stride[t]; g.ks[t] = a->k_stride[t];
        g.vs[t] = a->v_stride[t]; g.os[t] = a->o_stride[t];
    }
    g.ls[0] = a->lse_stride[0]; g.ls[1] = a->lse_stride[1];
    g.scale = (float)a->scale;
    g.causal = a->causal ? 1 : 0;
    const int64_t rows = a->batch * a->heads * a->seq_q;
    const int64_t blocks = (rows + kWarps - 1) / kWarps;
    const unsigned grid = (unsigned)(blocks < 1048576 ? blocks : 1048576);
    attn_naive_kernel<<<grid, 32 * kWarps, 0, (cudaStream_t)stream>>>(g);
    const cudaError_t e = cudaPeekAtLastError();
    return e == cudaSuccess ? 0 : (int)e;
}


const tb_param attn_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_END
};

char attn_name[64];

const tb_variant attn_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), attn_name, "attn_naive", attn_params,
    TB_SASS, attn_supports, NULL, attn_launch, NULL, NULL, NULL, tbv::attention_extension
};

} // namespace

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    static const size_t named = tb_variant_make_name("attn_naive", attn_params, attn_name,
                                                     sizeof(attn_name));
    (void)named;
    return index == 0 ? &attn_variant : NULL;
}
