/* ref_attention.h - the reference attention forwards validation compares against (C interface;
 * implemented in ref_attention.cu).
 *
 * Owns: two independent computations of TB_OP_ATTENTION_FWD (variant.h, growth 2: BF16 Q, K, V,
 * FP32 scores and softmax, grouped-query heads, BHSD or BSHD through the strides, the causal
 * mask aligned to the bottom right with seq_q <= seq_k):
 *   - the cuBLASLt reference: per (batch, head, chunk of query rows) S = scale * Q K^T with
 *     cuBLASLt (BF16 in, FP32 compute, FP32 out), the mask and the softmax in FP32 in a kernel
 *     of its own (row max, exp, sum, LSE = max + ln sum, P normalised in place), then O = P V
 *     with cuBLASLt in FP32 (V widened to FP32 first: SGEMM, no TF32);
 *   - the naive reference: one warp a query row, scores, max, exponentials, sum and output in
 *     FP64, rounded once to FP32; no library. For small shapes.
 * Both write O_ref as FP32 contiguous [batch][heads][seq_q][head_dim] and LSE_ref as FP32
 * contiguous [batch][heads][seq_q] (natural log), whatever the problem's layout, strides and
 * lse_stride, as the GEMM references write D_ref row-major. They enqueue on the stream and do
 * not synchronise; they return 0, or 1 with a one-line message in msg.
 */
#ifndef TB_REFERENCE_REF_ATTENTION_H
#define TB_REFERENCE_REF_ATTENTION_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "tilebench/variant.h"
#include "ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bound on the FP32 score block S (query rows x seq_k) the cuBLASLt reference holds at once:
 * the query rows are taken in chunks of floor(limit / (4 seq_k)) (at least 1). At 256 MiB a
 * 16k x 16k head goes in four chunks of 4096 rows. */
#define TB_REF_ATTN_S_LIMIT ((size_t)256 << 20)

/* Bytes of device workspace tb_ref_attention_cublaslt needs for a: the score block (chunk rows
 * x seq_k FP32, at most TB_REF_ATTN_S_LIMIT) and one key/value head's V widened to FP32
 * (seq_k x head_dim), each rounded up to 256 bytes. 0 when a is not a problem it computes. */
size_t tb_ref_attention_workspace(const tb_attention *a);

/* O_ref and LSE_ref with cuBLASLt (r's handle and workspace, ref.h) and the FP32 softmax kernel.
 * work: device memory of at least tb_ref_attention_workspace(a) bytes, 16-byte aligned. */
int tb_ref_attention_cublaslt(tb_ref *r, const tb_attention *a, const void *q, const void *k,
                              const void *v, float *o_ref, float *lse_ref, void *work,
                              size_t work_bytes, cudaStream_t s, char *msg, size_t len);

/* O_ref and LSE_ref with the naive FP64 kernel (head_dim <= 512). */
int tb_ref_attention_naive(const tb_attention *a, const void *q, const void *k, const void *v,
                           float *o_ref, float *lse_ref, cudaStream_t s, char *msg, size_t len);

/* The same with the score block bounded by s_limit bytes instead of TB_REF_ATTN_S_LIMIT
 * (tests/test_ref_attention.cu forces several chunks, and a partial last one, on small
 * shapes with them): the query rows of one chunk, the workspace, the computation. */
int64_t tb_ref_attention_chunk_rows(const tb_attention *a, size_t s_limit);
size_t tb_ref_attention_workspace_limit(const tb_attention *a, size_t s_limit);
int tb_ref_attention_cublaslt_limit(tb_ref *r, const tb_attention *a, const void *q,
                                    const void *k, const void *v, float *o_ref, float *lse_ref,
                                    void *work, size_t work_bytes, size_t s_limit,
                                    cudaStream_t s, char *msg, size_t len);

#ifdef __cplusplus
}
#endif
#endif
