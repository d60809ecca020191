/* ref.h - the reference GEMMs validation compares against (C interface).
 *
 * Owns: the cuBLASLt reference (BF16 in, FP32 accumulate, FP32 out) and an independent
 * naive GPU kernel (BF16 in, FP64 accumulate, FP32 out). Both write D_ref as an FP32
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

/* cublasLtGetVersion(), for the environment record. */
size_t tb_ref_cublas_version(void);

#ifdef __cplusplus
}
#endif
#endif
