/* zoo_attn.cuh - the attention zoo members' common body (issue 33): a naive but correct
 * attention forward (one warp per query row, online softmax with the running max, FP32, every
 * stride, GQA, the bottom-right causal mask; the kernel of variants/attn_naive) with one flaw
 * chosen at compile time, as the CPU models of tests/test_attn_rule.c plant them:
 *   ZOO_ATTN_CORRECT       none: the control
 *   ZOO_ATTN_NO_MAX        p = exp(scale * s), no running max: overflows on large logits
 *   ZOO_ATTN_MASK_PLUS1    a causal row sees one key more than the mask allows
 *   ZOO_ATTN_WRONG_SCALE   1 / head_dim instead of the problem's scale
 *   ZOO_ATTN_NO_LSE        O right, LSE never written
 *   ZOO_ATTN_GQA_MOD       query head h reads K/V head h % heads_kv instead of h / group
 * Each member answers extension() as an attention variant (TB_EXT_OPS, TB_EXT_PROBLEM_SIZE)
 * and supports BF16 Q, K, V, O, FP32 accumulation and LSE, D <= 256 and B*H*Sq*Sk*D <= 2^30
 * (else `unsupported`: `attention zoo members take bf16 q, k, v and o`, `... are limited to
 * B*H*Sq*Sk*D <= 2^30`). README.md beside this file says what the harness must report.
 * Includes only the public ABI header and CUDA headers, as every variant must.
 */
#ifndef TB_ZOO_ATTN_CUH
#define TB_ZOO_ATTN_CUH

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <tilebench/variant.h>

enum { ZOO_ATTN_CORRECT, ZOO_ATTN_NO_MAX, ZOO_ATTN_MASK_PLUS1, ZOO_ATTN_WRONG_SCALE,
       ZOO_ATTN_NO_LSE, ZOO_ATTN_GQA_MOD };

static const tb_param zoo_attn_params[] = { TB_PARAM_STR("naming", "plain"),
                                            TB_PARAM_STR("dtype", "bf16"), TB_PARAM_END };

static inline const void *zoo_attn_ext(const char *key)
{
    static const uint32_t ops[] = { TB_OP_ATTENTION_FWD, 0 };
    static const uint32_t size = sizeof(tb_problem);
    if (!key) return NULL;
    if (strcmp(key, TB_EXT_OPS) == 0) return ops;
    if (strcmp(key, TB_EXT_PROBLEM_SIZE) == 0) return &size;
    return NULL;
}

struct zoo_attn_args {
    const __nv_bfloat16 *q, *k, *v;
    __nv_bfloat16 *o;
    float *lse;
    int64_t batch, heads, heads_kv, group, seq_q, seq_k, dim;
    int64_t qs[3], ks[3], vs[3], os[3], ls[2];
    float scale;
    int causal;
};

template <int Flaw>
__global__ void __launch_bounds__(128) zoo_attn_kernel(const zoo_attn_args g)
{
    const int lane = (int)(threadIdx.x & 31);
    const int64_t rows = g.batch * g.heads * g.seq_q;
    const int64_t step = (int64_t)gridDim.x * 4;
    const float scale = Flaw == ZOO_ATTN_WRONG_SCALE ? 1.f / (float)g.dim : g.scale;
    for (int64_t r = (int64_t)blockIdx.x * 4 + (threadIdx.x >> 5); r < rows; r += step) {
        const int64_t i = r % g.seq_q, bh = r / g.seq_q, h = bh % g.heads, b = bh / g.heads;
        const int64_t hk = Flaw == ZOO_ATTN_GQA_MOD ? h % g.heads_kv : h / g.group;
        const __nv_bfloat16 *qp = g.q + b * g.qs[0] + h * g.qs[1] + i * g.qs[2];
        const __nv_bfloat16 *kp = g.k + b * g.ks[0] + hk * g.ks[1];
        const __nv_bfloat16 *vp = g.v + b * g.vs[0] + hk * g.vs[1];
        int64_t nk = g.seq_k;
        if (g.causal) {
            nk = i + 1 + g.seq_k - g.seq_q + (Flaw == ZOO_ATTN_MASK_PLUS1 ? 1 : 0);
            if (nk > g.seq_k) nk = g.seq_k;
        }
        float qr[8], acc[8];
#pragma unroll
        for (int t = 0; t < 8; t++) {
            const int64_t d = lane + 32 * t;
            qr[t] = d < g.dim ? __bfloat162float(qp[d]) : 0.f;
            acc[t] = 0.f;
        }
        float m = Flaw == ZOO_ATTN_NO_MAX ? 0.f : -INFINITY, l = 0.f;
        for (int64_t j = 0; j < nk; j++) {
            const __nv_bfloat16 *kj = kp + j * g.ks[2];
            float s = 0.f;
#pragma unroll
            for (int t = 0; t < 8; t++) {
                const int64_t d = lane + 32 * t;
                if (d < g.dim) s = fmaf(qr[t], __bfloat162float(kj[d]), s);
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
            s *= scale;
            float alpha = 1.f, p;
            if (Flaw == ZOO_ATTN_NO_MAX) {
                p = expf(s);   /* no max subtracted: inf beyond a logit of about 88 */
            } else {
                const float mn = fmaxf(m, s);
                alpha = expf(m - mn);
                p = expf(s - mn);
                m = mn;
            }
            l = fmaf(l, alpha, p);
            const __nv_bfloat16 *vj = vp + j * g.vs[2];
#pragma unroll
            for (int t = 0; t < 8; t++) {
                const int64_t d = lane + 32 * t;
                if (d < g.dim) acc[t] = fmaf(acc[t], alpha, p * __bfloat162float(vj[d]));
            }
        }
        __nv_bfloat16 *op = g.o + b * g.os[0] + h * g.os[1] + i * g.os[2];
#pragma unroll
        for (int t = 0; t < 8; t++) {
            const int64_t d = lane + 32 * t;
            if (d < g.dim) op[d] = __float2bfloat16(acc[t] / l);
        }
        if (Flaw != ZOO_ATTN_NO_LSE && lane == 0)
            g.lse[b * g.ls[0] + h * g.ls[1] + i] = m + logf(l);
    }
}

static inline int zoo_attn_supports(const tb_problem *p, char *why, size_t why_len)
{
    const char *reason = NULL;
    const tb_attention *a = &p->attention;
    if (p->struct_size < TB_PROBLEM_G2_SIZE || p->op != TB_OP_ATTENTION_FWD)
        reason = "attention zoo members compute attention forward only";
    else if (a->q_type != TB_DTYPE_BF16 || a->k_type != TB_DTYPE_BF16 ||
             a->v_type != TB_DTYPE_BF16 || a->o_type != TB_DTYPE_BF16 ||
             a->acc_type != TB_DTYPE_F32 || a->lse_type != TB_DTYPE_F32)
        reason = "attention zoo members take bf16 q, k, v and o, f32 accumulation and lse";
    else if (a->head_dim < 1 || a->head_dim > 256 || a->heads_kv < 1 || a->heads % a->heads_kv ||
             (a->causal && a->seq_q > a->seq_k))
        reason = "attention zoo members take head_dim <= 256, heads_kv dividing heads, causal "
                 "with seq_q <= seq_k";
    else if ((double)a->batch * (double)a->heads * (double)a->seq_q * (double)a->seq_k *
             (double)a->head_dim > 1073741824.0)
        reason = "attention zoo members are limited to B*H*Sq*Sk*D <= 2^30";
    if (!reason) return 1;
    if (why && why_len) snprintf(why, why_len, "%s", reason);
    return 0;
}

template <int Flaw>
static int zoo_attn_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                           size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    const tb_attention *a = &p->attention;
    zoo_attn_args g;
    g.q = (const __nv_bfloat16 *)io->in[0];
    g.k = (const __nv_bfloat16 *)io->in[1];
    g.v = (const __nv_bfloat16 *)io->in[2];
    g.o = (__nv_bfloat16 *)io->out[0];
    g.lse = (float *)io->out[1];
    g.batch = a->batch; g.heads = a->heads; g.heads_kv = a->heads_kv;
    g.group = a->heads / a->heads_kv;
    g.seq_q = a->seq_q; g.seq_k = a->seq_k; g.dim = a->head_dim;
    for (int t = 0; t < 3; t++) {
        g.qs[t] = a->q_stride[t]; g.ks[t] = a->k_stride[t];
        g.vs[t] = a->v_stride[t]; g.os[t] = a->o_stride[t];
    }
    g.ls[0] = a->lse_stride[0]; g.ls[1] = a->lse_stride[1];
    g.scale = (float)a->scale;
    g.causal = a->causal ? 1 : 0;
    const int64_t blocks = (a->batch * a->heads * a->seq_q + 3) / 4;
    zoo_attn_kernel<Flaw><<<(unsigned)(blocks < 1048576 ? blocks : 1048576), 128, 0,
                            (cudaStream_t)stream>>>(g);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

/* One member: its name and flaw. */
#define ZOO_ATTN_MEMBER(NAME, FLAW)                                                           \
    static const tb_variant zoo_v = {                                                         \
        TB_VARIANT_ABI_VERSION, sizeof(tb_variant), NAME, "zoo", zoo_attn_params, TB_SASS,    \
        zoo_attn_supports, NULL, zoo_attn_launch<FLAW>, NULL, NULL, NULL, zoo_attn_ext };     \
    extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi,         \
                                                                   uint32_t index)            \
    {                                                                                         \
        (void)host_abi;                                                                       \
        return index == 0 ? &zoo_v : NULL;                                                    \
    }

#endif /* TB_ZOO_ATTN_CUH */
