/* ref_attention.cu - the two attention forward references (ref_attention.h): cuBLASLt with an
 * FP32 softmax kernel, and a naive FP64 kernel. Written for obviousness first; no code shared
 * with each other or with any variant (the cuBLASLt handle and its workspace are ref.h's).
 *
 * The cuBLASLt reference, per batch b and key/value head hk: V[b, hk] widened to FP32 into the
 * workspace (once for the heads_kv / heads query heads that share it); then per query head h of
 * that group and chunk of query rows [c0, c0 + n):
 *   S^T (seq_k x n, col-major, ld seq_k) = scale * K (col-major D x seq_k, ld k_stride[2])^T
 *                                                * Q_chunk (col-major D x n, ld q_stride[2])
 * that is S = scale * Q K^T row-major n x seq_k ("TN": BF16 in, FP32 compute and out); then a
 * block a row masks (keys j > i + seq_k - seq_q when causal), takes the row max, exp(s - max)
 * (expf), their sum, LSE = max + logf(sum), and writes P = exp(s - max) / sum in place (0 where
 * masked); then
 *   O^T (D x n, ld D) = V32^T (col-major D x seq_k, ld D) * P^T (col-major seq_k x n, ld seq_k)
 * in FP32 (FP32 in, CUBLAS_COMPUTE_32F: a true SGEMM, no TF32) straight into O_ref. cuBLASLt
 * assumes 256-byte aligned pointers unless told: each operand's least alignment over every
 * (batch, head, chunk) offset it will be given is passed as the heuristic's MIN_ALIGNMENT, so
 * one algorithm (chosen once per chunk height: the full one and the last, partial one) serves
 * every call.
 *
 * The naive reference: one warp a query row; the lanes split the head dimension (q in FP64
 * registers), so each score is a warp-wide FP64 sum; a first pass over the visible keys takes
 * the max, a second sums e_j = exp(s_j - max) and e_j * v_j in FP64; O = sum / l and
 * LSE = max + log(l) are rounded once to FP32.
 */
#include "ref_attention.h"
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <initializer_list>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

namespace {

constexpr int SM_THREADS = 256;        /* the softmax kernel: one block a score row */
constexpr int NV_WARPS = 4;            /* the naive kernel: warps (query rows) a block */
constexpr int NV_PER_LANE = 16;        /* head_dim <= 32 * 16 = 512 */

size_t round256(size_t x) { return (x + 255) & ~(size_t)255; }

/* The checks both references make; 0 when a is a problem they compute. */
int check(const tb_attention *a, const char *who, char *msg, size_t len)
{
    const char *bad = NULL;
    if (!a) bad = "no problem";
    else if (a->batch < 1 || a->heads < 1 || a->heads_kv < 1 || a->seq_q < 1 || a->seq_k < 1 ||
             a->head_dim < 1)
        bad = "a non-positive size";
    else if (a->heads % a->heads_kv) bad = "heads_kv does not divide heads";
    else if (a->q_type != TB_DTYPE_BF16 || a->k_type != TB_DTYPE_BF16 || a->v_type != TB_DTYPE_BF16)
        bad = "Q, K and V must be bf16";
    else if (a->causal && a->seq_q > a->seq_k) bad = "causal needs seq_q <= seq_k";
    else if (!(a->scale > 0) || !isfinite(a->scale)) bad = "the scale must be finite and > 0";
    else {
        const int64_t *st[3] = { a->q_stride, a->k_stride, a->v_stride };
        for (int t = 0; t < 3 && !bad; t++)
            for (int i = 0; i < 3; i++)
                if (st[t][i] < 0) bad = "a negative stride";
    }
    if (!bad) return 0;
    if (msg && len) snprintf(msg, len, "%s: %s", who, bad);
    return 1;
}

/* ---- the cuBLASLt reference ------------------------------------------------------------ */

__device__ __forceinline__ float warp_max(float x)
{
    for (int o = 16; o; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

__device__ __forceinline__ float warp_sum(float x)
{
    for (int o = 16; o; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

/* The max (MAX) or the sum of x over the block, returned to every thread. */
template <bool MAX>
__device__ float block_reduce(float x)
{
    __shared__ float part[32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    x = MAX ? warp_max(x) : warp_sum(x);
    __syncthreads();                    /* part[] of an earlier call has been read */
    if (lane == 0) part[w] = x;
    __syncthreads();
    x = lane < nw ? part[lane] : (MAX ? -INFINITY : 0.0f);
    return MAX ? warp_max(x) : warp_sum(x);
}

/* Row r of the n x sk score block S (query row i = row0 + r): mask, softmax in place, LSE. */
__global__ void __launch_bounds__(SM_THREADS)
softmax_rows(float *S, float *lse, int64_t sk, int64_t row0, int64_t diag, int causal)
{
    const int64_t r = blockIdx.x, i = row0 + r;
    float *row = S + r * sk;
    const int64_t n = causal ? (i + 1 + diag < sk ? i + 1 + diag : sk) : sk;   /* >= 1 */
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce<true>(m);
    float l = 0.0f;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const float e = expf(row[j] - m);
        row[j] = e;
        l += e;
    }
    l = block_reduce<false>(l);
    for (int64_t j = threadIdx.x; j < sk; j += blockDim.x) row[j] = j < n ? row[j] / l : 0.0f;
    if (threadIdx.x == 0) lse[r] = m + logf(l);
}

/* dst (sk x d, ld d) = FP32 of one head's V (rows ld apart). */
__global__ void widen_v(float *dst, const __nv_bfloat16 *v, int64_t sk, int64_t d, int64_t ld)
{
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < sk * d;
         idx += (int64_t)gridDim.x * blockDim.x)
        dst[idx] = __bfloat162float(v[(idx / d) * ld + idx % d]);
}

/* The largest power of two up to 256 dividing every value (addresses and byte offsets). */
uint32_t align_of(std::initializer_list<uint64_t> xs)
{
    uint64_t o = 256;
    for (uint64_t x : xs) o |= x;
    return (uint32_t)(o & (~o + 1));
}

struct aligns { uint32_t k, q, s, v, o; };   /* S and P share the block: s */

/* The two products for chunks of n query rows. */
struct lt_plan {
    cublasLtMatmulDesc_t qk = nullptr, pv = nullptr;
    cublasLtMatrixLayout_t kl = nullptr, ql = nullptr, sl = nullptr;   /* QK^T: A, B, C = D */
    cublasLtMatrixLayout_t vl = nullptr, pl = nullptr, ol = nullptr;   /* PV: A, B, C = D */
    cublasLtMatmulAlgo_t qk_algo, pv_algo;
};

void plan_destroy(lt_plan *p)
{
    cublasLtMatrixLayout_t ls[6] = { p->kl, p->ql, p->sl, p->vl, p->pl, p->ol };
    for (cublasLtMatrixLayout_t l : ls)
        if (l) cublasLtMatrixLayoutDestroy(l);
    if (p->qk) cublasLtMatmulDescDestroy(p->qk);
    if (p->pv) cublasLtMatmulDescDestroy(p->pv);
    *p = lt_plan();
}

#define LT(call) do { cublasStatus_t st_ = (call); if (st_ != CUBLAS_STATUS_SUCCESS) { \
    snprintf(msg, len, "cublaslt attention reference: %s failed: %s", #call, \
             cublasLtGetStatusString(st_)); return 1; } } while (0)

/* The first heuristic algorithm for op with A, B and C = D under the given alignments. */
int pick(cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
         cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc, uint32_t aa, uint32_t ab,
         uint32_t ac, const char *what, int64_t n, cublasLtMatmulAlgo_t *algo, char *msg,
         size_t len)
{
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    uint64_t ws = TB_REF_WORKSPACE_BYTES;
    LT(cublasLtMatmulPreferenceCreate(&pref));
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref,
        CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    const cublasLtMatmulPreferenceAttributes_t al[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES };
    const uint32_t av[4] = { aa, ab, ac, ac };
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; i++)
        st = cublasLtMatmulPreferenceSetAttribute(pref, al[i], &av[i], sizeof av[i]);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cublaslt attention reference: the %s heuristic failed: %s", what,
                 cublasLtGetStatusString(st));
        return 1;
    }
    if (found < 1) {
        snprintf(msg, len, "cublaslt attention reference: no %s algorithm for %lld rows "
                 "(alignments %u, %u, %u bytes)", what, (long long)n, aa, ab, ac);
        return 1;
    }
    *algo = heur.algo;
    return 0;
}

int plan_make(cublasLtHandle_t lt, const tb_attention *a, int64_t n, const aligns &al,
              lt_plan *p, char *msg, size_t len)
{
    const uint64_t sk = (uint64_t)a->seq_k, d = (uint64_t)a->head_dim, rows = (uint64_t)n;
    const cublasOperation_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
    LT(cublasLtMatmulDescCreate(&p->qk, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(p->qk, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof opt));
    LT(cublasLtMatmulDescSetAttribute(p->qk, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof opn));
    LT(cublasLtMatrixLayoutCreate(&p->kl, CUDA_R_16BF, d, sk, a->k_stride[2]));
    LT(cublasLtMatrixLayoutCreate(&p->ql, CUDA_R_16BF, d, rows, a->q_stride[2]));
    LT(cublasLtMatrixLayoutCreate(&p->sl, CUDA_R_32F, sk, rows, (int64_t)sk));
    LT(cublasLtMatmulDescCreate(&p->pv, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(p->pv, CUBLASLT_MATMUL_DESC_TRANSA, &opn, sizeof opn));
    LT(cublasLtMatmulDescSetAttribute(p->pv, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof opn));
    LT(cublasLtMatrixLayoutCreate(&p->vl, CUDA_R_32F, d, sk, (int64_t)d));
    LT(cublasLtMatrixLayoutCreate(&p->pl, CUDA_R_32F, sk, rows, (int64_t)sk));
    LT(cublasLtMatrixLayoutCreate(&p->ol, CUDA_R_32F, d, rows, (int64_t)d));
    if (pick(lt, p->qk, p->kl, p->ql, p->sl, al.k, al.q, al.s, "Q K^T", n, &p->qk_algo, msg, len) ||
        pick(lt, p->pv, p->vl, p->pl, p->ol, al.v, al.s, al.o, "P V", n, &p->pv_algo, msg, len))
        return 1;
    return 0;
}

/* Enqueue the whole problem with the plans made (full: chunks of rows; tail: the last, shorter
 * one, when seq_q is not a multiple of rows). */
int run(cublasLtHandle_t lt, void *lt_ws, const tb_attention *a, int64_t rows,
        const lt_plan &full, const lt_plan &tail, const __nv_bfloat16 *q, const __nv_bfloat16 *k,
        const __nv_bfloat16 *v, float *o_ref, float *lse_ref, float *sbuf, float *v32,
        cudaStream_t s, char *msg, size_t len)
{
    const int64_t B = a->batch, H = a->heads, G = a->heads / a->heads_kv, Sq = a->seq_q,
                  Sk = a->seq_k, D = a->head_dim;
    const float alpha = (float)a->scale, one = 1.0f, zero = 0.0f;
    const size_t ws = TB_REF_WORKSPACE_BYTES;
    const int64_t nv = Sk * D;
    const unsigned vgrid = (unsigned)((nv + 255) / 256 < 4096 ? (nv + 255) / 256 : 4096);
    for (int64_t b = 0; b < B; b++)
        for (int64_t hk = 0; hk < a->heads_kv; hk++) {
            const __nv_bfloat16 *kh = k + b * a->k_stride[0] + hk * a->k_stride[1];
            widen_v<<<vgrid, 256, 0, s>>>(v32, v + b * a->v_stride[0] + hk * a->v_stride[1], Sk, D,
                                          a->v_stride[2]);
            for (int64_t h = hk * G; h < (hk + 1) * G; h++)
                for (int64_t c0 = 0; c0 < Sq; c0 += rows) {
                    const int64_t n = Sq - c0 < rows ? Sq - c0 : rows;
                    const lt_plan &p = n == rows ? full : tail;
                    const __nv_bfloat16 *qc = q + b * a->q_stride[0] + h * a->q_stride[1] +
                                              c0 * a->q_stride[2];
                    float *oc = o_ref + ((b * H + h) * Sq + c0) * D;
                    LT(cublasLtMatmul(lt, p.qk, &alpha, kh, p.kl, qc, p.ql, &zero, sbuf, p.sl,
                                      sbuf, p.sl, &p.qk_algo, lt_ws, ws, s));
                    softmax_rows<<<(unsigned)n, SM_THREADS, 0, s>>>(sbuf, lse_ref + (b * H + h) * Sq + c0,
                                                                   Sk, c0, Sk - Sq, a->causal != 0);
                    LT(cublasLtMatmul(lt, p.pv, &one, v32, p.vl, sbuf, p.pl, &zero, oc, p.ol,
                                      oc, p.ol, &p.pv_algo, lt_ws, ws, s));
                }
            cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                snprintf(msg, len, "cublaslt attention reference: a launch failed: %s",
                         cudaGetErrorString(e));
                return 1;
            }
        }
    return 0;
}

#undef LT

/* ---- the naive reference --------------------------------------------------------------- */

struct naive_args {
    int64_t B, H, G, Sq, Sk, D;          /* G = heads / heads_kv */
    int64_t qs[3], ks[3], vs[3];
    double scale;
    int causal;
};

/* scale * q . k_j over the warp: each lane's share in order, then a butterfly (every lane ends
 * with the same bits: each step adds the same two values, in either order). */
__device__ __forceinline__ double score(const double (&qd)[NV_PER_LANE], const __nv_bfloat16 *kj,
                                        int64_t D, int lane, double scale)
{
    double acc = 0.0;
#pragma unroll
    for (int t = 0; t < NV_PER_LANE; t++) {
        const int64_t d = lane + 32 * t;
        if (d < D) acc = fma(qd[t], (double)__bfloat162float(kj[d]), acc);
    }
    for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    return scale * acc;
}

__global__ void __launch_bounds__(32 * NV_WARPS)
naive_attention(naive_args p, const __nv_bfloat16 *Q, const __nv_bfloat16 *K,
                const __nv_bfloat16 *V, float *O, float *L)
{
    const int lane = threadIdx.x & 31;
    const int64_t total = p.B * p.H * p.Sq;
    for (int64_t row = (int64_t)blockIdx.x * NV_WARPS + (threadIdx.x >> 5); row < total;
         row += (int64_t)gridDim.x * NV_WARPS) {
        const int64_t i = row % p.Sq, h = (row / p.Sq) % p.H, b = row / (p.Sq * p.H), hk = h / p.G;
        const __nv_bfloat16 *q = Q + b * p.qs[0] + h * p.qs[1] + i * p.qs[2];
        const __nv_bfloat16 *k = K + b * p.ks[0] + hk * p.ks[1];
        const __nv_bfloat16 *v = V + b * p.vs[0] + hk * p.vs[1];
        const int64_t n = p.causal && i + 1 + p.Sk - p.Sq < p.Sk ? i + 1 + p.Sk - p.Sq : p.Sk;   /* seen */
        double qd[NV_PER_LANE], o[NV_PER_LANE];
#pragma unroll
        for (int t = 0; t < NV_PER_LANE; t++) {
            const int64_t d = lane + 32 * t;
            qd[t] = d < p.D ? (double)__bfloat162float(q[d]) : 0.0;
            o[t] = 0.0;
        }
        double m = -INFINITY;
        for (int64_t j = 0; j < n; j++) m = fmax(m, score(qd, k + j * p.ks[2], p.D, lane, p.scale));
        double l = 0.0;
        for (int64_t j = 0; j < n; j++) {
            const double e = exp(score(qd, k + j * p.ks[2], p.D, lane, p.scale) - m);
            const __nv_bfloat16 *vj = v + j * p.vs[2];
            l += e;
#pragma unroll
            for (int t = 0; t < NV_PER_LANE; t++) {
                const int64_t d = lane + 32 * t;
                if (d < p.D) o[t] = fma(e, (double)__bfloat162float(vj[d]), o[t]);
            }
        }
#pragma unroll
        for (int t = 0; t < NV_PER_LANE; t++) {
            const int64_t d = lane + 32 * t;
            if (d < p.D) O[row * p.D + d] = (float)(o[t] / l);
        }
        if (lane == 0) L[row] = (float)(m + log(l));
    }
}

} // namespace

extern "C" int64_t tb_ref_attention_chunk_rows(const tb_attention *a, size_t s_limit)
{
    if (!a || a->seq_q < 1 || a->seq_k < 1) return 0;
    int64_t rows = (int64_t)(s_limit / ((size_t)a->seq_k * sizeof(float)));
    if (rows < 1) rows = 1;
    return rows < a->seq_q ? rows : a->seq_q;
}

extern "C" size_t tb_ref_attention_workspace_limit(const tb_attention *a, size_t s_limit)
{
    if (check(a, "", NULL, 0)) return 0;
    const int64_t rows = tb_ref_attention_chunk_rows(a, s_limit);
    return round256((size_t)rows * (size_t)a->seq_k * sizeof(float)) +
           round256((size_t)a->seq_k * (size_t)a->head_dim * sizeof(float));
}

extern "C" size_t tb_ref_attention_workspace(const tb_attention *a)
{
    return tb_ref_attention_workspace_limit(a, TB_REF_ATTN_S_LIMIT);
}

extern "C" int tb_ref_attention_cublaslt_limit(tb_ref *r, const tb_attention *a, const void *q,
                                               const void *k, const void *v, float *o_ref,
                                               float *lse_ref, void *work, size_t work_bytes,
                                               size_t s_limit, cudaStream_t s, char *msg,
                                               size_t len)
{
    const char *who = "cublaslt attention reference";
    if (check(a, who, msg, len)) return 1;
    if (a->q_stride[2] < a->head_dim || a->k_stride[2] < a->head_dim) {
        snprintf(msg, len, "%s: Q's and K's row strides must be at least head_dim", who);
        return 1;
    }
    if (!r || !q || !k || !v || !o_ref || !lse_ref) {
        snprintf(msg, len, "%s: a NULL handle or buffer", who);
        return 1;
    }
    const int64_t rows = tb_ref_attention_chunk_rows(a, s_limit);
    const size_t need = tb_ref_attention_workspace_limit(a, s_limit);
    if (!work || work_bytes < need || (uintptr_t)work % 16) {
        snprintf(msg, len, "%s: the workspace (%zu bytes at %p) must be %zu bytes, 16-byte aligned",
                 who, work_bytes, work, need);
        return 1;
    }
    float *sbuf = (float *)work;
    float *v32 = (float *)((char *)work + round256((size_t)rows * (size_t)a->seq_k * sizeof(float)));
    const uint64_t e2 = sizeof(__nv_bfloat16), e4 = sizeof(float);
    aligns al;
    al.k = align_of({ (uintptr_t)k, (uint64_t)a->k_stride[0] * e2, (uint64_t)a->k_stride[1] * e2 });
    al.q = align_of({ (uintptr_t)q, (uint64_t)a->q_stride[0] * e2, (uint64_t)a->q_stride[1] * e2,
                      (uint64_t)(rows * a->q_stride[2]) * e2 });
    al.s = align_of({ (uintptr_t)sbuf });
    al.v = align_of({ (uintptr_t)v32 });
    al.o = align_of({ (uintptr_t)o_ref, (uint64_t)(a->seq_q * a->head_dim) * e4,
                      (uint64_t)(rows * a->head_dim) * e4 });
    cublasLtHandle_t lt = (cublasLtHandle_t)tb_ref_lt_handle(r);
    lt_plan full, tail;
    int rc = plan_make(lt, a, rows, al, &full, msg, len);
    if (!rc && a->seq_q % rows) rc = plan_make(lt, a, a->seq_q % rows, al, &tail, msg, len);
    if (!rc)
        rc = run(lt, tb_ref_lt_workspace(r), a, rows, full, tail, (const __nv_bfloat16 *)q,
                 (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, o_ref, lse_ref, sbuf, v32, s,
                 msg, len);
    plan_destroy(&full);
    plan_destroy(&tail);
    return rc;
}

extern "C" int tb_ref_attention_cublaslt(tb_ref *r, const tb_attention *a, const void *q,
                                         const void *k, const void *v, float *o_ref,
                                         float *lse_ref, void *work, size_t work_bytes,
                                         cudaStream_t s, char *msg, size_t len)
{
    return tb_ref_attention_cublaslt_limit(r, a, q, k, v, o_ref, lse_ref, work, work_bytes,
                                           TB_REF_ATTN_S_LIMIT, s, msg, len);
}

extern "C" int tb_ref_attention_naive(const tb_attention *a, const void *q, const void *k,
                                      const void *v, float *o_ref, float *lse_ref, cudaStream_t s,
                                      char *msg, size_t len)
{
    const char *who = "naive attention reference";
    if (check(a, who, msg, len)) return 1;
    if (a->head_dim > 32 * NV_PER_LANE) {
        snprintf(msg, len, "%s: head_dim %lld over %d", who, (long long)a->head_dim, 32 * NV_PER_LANE);
        return 1;
    }
    if (!q || !k || !v || !o_ref || !lse_ref) {
        snprintf(msg, len, "%s: a NULL buffer", who);
        return 1;
    }
    naive_args p;
    p.B = a->batch; p.H = a->heads; p.G = a->heads / a->heads_kv;
    p.Sq = a->seq_q; p.Sk = a->seq_k; p.D = a->head_dim;
    for (int i = 0; i < 3; i++) {
        p.qs[i] = a->q_stride[i]; p.ks[i] = a->k_stride[i]; p.vs[i] = a->v_stride[i];
    }
    p.scale = a->scale;
    p.causal = a->causal != 0;
    const int64_t blocks = (p.B * p.H * p.Sq + NV_WARPS - 1) / NV_WARPS;
    naive_attention<<<(unsigned)(blocks < (1 << 20) ? blocks : (1 << 20)), 32 * NV_WARPS, 0, s>>>(
        p, (const __nv_bfloat16 *)q, (const __nv_bfloat16 *)k, (const __nv_bfloat16 *)v, o_ref,
        lse_ref);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        snprintf(msg, len, "%s: launch failed: %s", who, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}
