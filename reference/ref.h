/* ref.h - the reference GEMMs validation compares against (C interface).
 *
 * Owns: the cuBLASLt reference (BF16 or E4M3 in, FP32 accumulate, FP32 out) and an independent
 * naive GPU kernel (BF16 or E4M3 in, decoded exactly, FP64 accumulate, FP32 out). E4M3 A
 * and B come with per-tensor scales (variant.h, growth 1): D = alpha * (scale_a A)(scale_b B)
 * + beta * C; the _scaled entry points take them, the others mean 1 and 1. Both write D_ref as an FP32
 * row-major m x n matrix per batch (ld = n, batch stride m * n), whatever the problem's
 * D layout, so validate compares one layout. Both apply alpha and beta with C read in the
 * problem's own C layout. They enqueue on the stream and do not synchronise.
 */
#ifndef TB_REFERENCE_REF_H
#define TB_REFERENCE_REF_H

#include <stddef.h>
#include <cuda_runtime_api.h>
#include "tilebench/variant.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tb_ref tb_ref;

#define TB_REF_WORKSPACE_BYTES (64u << 20)

/* Create the cuBLASLt handle and a workspace of TB_REF_WORKSPACE_BYTES. */
int tb_ref_open(tb_ref **out, char *msg, size_t len);
void tb_ref_close(tb_ref *r);

/* D_ref = alpha * A * B + beta * C with cuBLASLt (first heuristic algorithm). Writes a
 * description of the algorithm used into algo (may be NULL). */
int tb_ref_gemm_cublaslt(tb_ref *r, const tb_gemm *g, const void *a, const void *b,
                         const void *c, float *d_ref, cudaStream_t s,
                         char *algo, size_t algo_len, char *msg, size_t len);

/* The same with the naive kernel: no library, FP64 accumulation. */
int tb_ref_gemm_naive(const tb_gemm *g, const void *a, const void *b, const void *c,
                      float *d_ref, cudaStream_t s, char *msg, size_t len);

/* 1 when tb_ref_gemm_cublaslt can compute g: every BF16 problem; an E4M3 one only as cuBLASLt's
 * FP8 kernels take it on Hopper: layout tn (both operands K-major, cuBLASLt's "TN"), m, n, k,
 * lda and ldb multiples of 16 (16-byte alignment of one-byte elements). Otherwise 0: the naive
 * kernel is then the only reference. */
int tb_ref_cublaslt_supports(const tb_gemm *g);

/* The two references with A's and B's scales (E4M3 operands; ignored for BF16 ones). */
int tb_ref_gemm_cublaslt_scaled(tb_ref *r, const tb_gemm *g, float scale_a, float scale_b,
                                const void *a, const void *b, const void *c, float *d_ref,
                                cudaStream_t s, char *algo, size_t algo_len, char *msg, size_t len);
int tb_ref_gemm_naive_scaled(const tb_gemm *g, float scale_a, float scale_b, const void *a,
                             const void *b, const void *c, float *d_ref, cudaStream_t s,
                             char *msg, size_t len);

/* r's cuBLASLt handle (a cublasLtHandle_t) and its TB_REF_WORKSPACE_BYTES workspace, for the
 * other references built on the library (ref_attention.cu). Work enqueued with them shares
 * the workspace with r's GEMMs: order it on one stream. */
void *tb_ref_lt_handle(tb_ref *r);
void *tb_ref_lt_workspace(tb_ref *r);

/* cublasLtGetVersion(), for the environment record. */
size_t tb_ref_cublas_version(void);

#ifdef __cplusplus
}
#endif
#endif
