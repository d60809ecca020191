/* ref_cublaslt.cu - the cuBLASLt reference: BF16 or E4M3 A/B, FP32 compute, FP32 C/D.
 *
 * cuBLASLt is column-major; the reference's D_ref is row-major m x n, which is column-major
 * n x m. So it computes D_ref^T = B^T A^T: cuBLASLt's "A" is our B and its "B" is our A,
 * each with the transpose that its storage needs (see lt_operand()). C (bf16, any layout) is
 * first widened into D_ref by a kernel, then cuBLASLt runs in place with C = D = D_ref.
 * E4M3 A and B (FP8 problems): cuBLASLt's FP8 kernels (Hopper: the "TN" form, which is our tn,
 * and 16-byte aligned dimensions: tb_ref_cublaslt_supports), the per-tensor scales passed as
 * device scalars (A_SCALE_POINTER / B_SCALE_POINTER, cuBLASLt's A being our B), FP32 out, and
 * never fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM left 0: partial sums promoted).
 * Each scale at its own 16-byte boundary: cuBLASLt 13.1 on the H100 answered a B scale pointer
 * 4 bytes after the A one with NOT_SUPPORTED at cublasLtMatmul (after a heuristic that found
 * algorithms), 2026-11-27 (docs/perf.md, fourteenth session).
 */
#include "ref.h"
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <stdio.h>
#include <stdlib.h>

struct tb_ref {
    cublasLtHandle_t lt;
    void *ws;
    float *scales;   /* device: cuBLASLt's A scale (our B's) at [0], its B scale (our A's) at
                      * [TB_REF_SCALE_GAP]: each 16-byte aligned */
};

namespace {

constexpr int TB_REF_SCALE_GAP = 4;   /* floats: 16 bytes */

__global__ void set_scales(float *dst, float x_scale, float y_scale)
{
    dst[0] = x_scale;
    dst[TB_REF_SCALE_GAP] = y_scale;
}

__global__ void load_c(float *D, const __nv_bfloat16 *C, int64_t m, int64_t n, int c_col,
                       int64_t ldc, int64_t sc)
{
    int64_t b = blockIdx.z;
    for (int64_t idx = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; idx < m * n;
         idx += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = idx / n, j = idx % n;
        D[b * m * n + idx] = __bfloat162float(C[b * sc + (c_col ? j * ldc + i : i * ldc + j)]);
    }
}

/* Describe an operand of the column-major product D^T(n x m) = X(n x k) * Y(k x m). */
void lt_operand(int ld_contig_is_k, int64_t outer, int64_t k, int64_t ld, int want_rows_outer,
                uint64_t *rows, uint64_t *cols, cublasOperation_t *op)
{
    (void)ld;
    /* ld_contig_is_k: the stored matrix has k contiguous (col-major k x outer). */
    if (want_rows_outer) {          /* X = B^T: rows are n (outer), cols k */
        if (ld_contig_is_k) { *rows = (uint64_t)k; *cols = (uint64_t)outer; *op = CUBLAS_OP_T; }
        else { *rows = (uint64_t)outer; *cols = (uint64_t)k; *op = CUBLAS_OP_N; }
    } else {                        /* Y = A^T: rows are k, cols m (outer) */
        if (ld_contig_is_k) { *rows = (uint64_t)k; *cols = (uint64_t)outer; *op = CUBLAS_OP_N; }
        else { *rows = (uint64_t)outer; *cols = (uint64_t)k; *op = CUBLAS_OP_T; }
    }
}

#define LT(call) do { cublasStatus_t st_ = (call); if (st_ != CUBLAS_STATUS_SUCCESS) { \
    snprintf(msg, len, "cublaslt reference: %s failed: %s", #call, cublasLtGetStatusString(st_)); \
    goto done; } } while (0)

} // namespace

extern "C" size_t tb_ref_cublas_version(void) { return cublasLtGetVersion(); }

extern "C" int tb_ref_open(tb_ref **out, char *msg, size_t len)
{
    tb_ref *r = (tb_ref *)calloc(1, sizeof *r);
    if (!r) { snprintf(msg, len, "out of memory"); return 1; }
    cublasStatus_t st = cublasLtCreate(&r->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cublasLtCreate failed: %s", cublasLtGetStatusString(st));
        free(r);
        return 1;
    }
    cudaError_t e = cudaMalloc(&r->ws, TB_REF_WORKSPACE_BYTES);
    if (e == cudaSuccess) {
        e = cudaMalloc(&r->scales, 2 * TB_REF_SCALE_GAP * sizeof(float));
        if (e != cudaSuccess) cudaFree(r->ws);
    }
    if (e != cudaSuccess) {
        snprintf(msg, len, "cannot allocate the reference workspace: %s", cudaGetErrorString(e));
        cublasLtDestroy(r->lt);
        free(r);
        return 1;
    }
    *out = r;
    return 0;
}

extern "C" void tb_ref_close(tb_ref *r)
{
    if (!r) return;
    cudaFree(r->scales);
    cudaFree(r->ws);
    cublasLtDestroy(r->lt);
    free(r);
}

extern "C" void *tb_ref_lt_handle(tb_ref *r) { return r->lt; }
extern "C" void *tb_ref_lt_workspace(tb_ref *r) { return r->ws; }

extern "C" int tb_ref_cublaslt_supports(const tb_gemm *g)
{
    const int fp8 = g->a_type == TB_DTYPE_E4M3 && g->b_type == TB_DTYPE_E4M3;
    if (!fp8) return g->a_type == TB_DTYPE_BF16 && g->b_type == TB_DTYPE_BF16;
    return g->a_layout == TB_LAYOUT_ROW && g->b_layout == TB_LAYOUT_COL && g->m % 16 == 0 &&
           g->n % 16 == 0 && g->k % 16 == 0 && g->lda % 16 == 0 && g->ldb % 16 == 0;
}

extern "C" int tb_ref_gemm_cublaslt(tb_ref *r, const tb_gemm *g, const void *a, const void *b,
                                    const void *c, float *d_ref, cudaStream_t s,
                                    char *algo, size_t algo_len, char *msg, size_t len)
{
    return tb_ref_gemm_cublaslt_scaled(r, g, 1.0f, 1.0f, a, b, c, d_ref, s, algo, algo_len, msg,
                                       len);
}

extern "C" int tb_ref_gemm_cublaslt_scaled(tb_ref *r, const tb_gemm *g, float scale_a,
                                           float scale_b, const void *a, const void *b,
                                           const void *c, float *d_ref, cudaStream_t s,
                                           char *algo, size_t algo_len, char *msg, size_t len)
{
    int rc = 1;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t lx = NULL, ly = NULL, ld = NULL;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur;
    int found = 0;
    uint64_t xr, xc, yr, yc;
    cublasOperation_t opx, opy;
    float alpha = (float)g->alpha, beta = (float)g->beta;
    size_t ws = TB_REF_WORKSPACE_BYTES;
    int64_t batch = g->batch;
    int64_t sd = g->m * g->n;
    const int fp8 = g->a_type == TB_DTYPE_E4M3 && g->b_type == TB_DTYPE_E4M3;
    const cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    const void *xs = r->scales, *ys = r->scales + TB_REF_SCALE_GAP;
    if (!tb_ref_cublaslt_supports(g)) {
        snprintf(msg, len, "cublaslt reference: cannot compute this problem (fp8 needs layout tn "
                 "and m, n, k, lda, ldb multiples of 16)");
        return 1;
    }

    if (g->beta != 0.0) {
        int64_t total = g->m * g->n;
        unsigned grid = (unsigned)((total + 255) / 256 > 4096 ? 4096 : (total + 255) / 256);
        load_c<<<dim3(grid, 1, (unsigned)batch), 256, 0, s>>>(d_ref, (const __nv_bfloat16 *)c,
            g->m, g->n, g->c_layout == TB_LAYOUT_COL, g->ldc, g->stride_c);
    }
    /* X = B^T (n x k): B stored col-major (k contiguous) when b_layout is COL */
    lt_operand(g->b_layout == TB_LAYOUT_COL, g->n, g->k, g->ldb, 1, &xr, &xc, &opx);
    /* Y = A^T (k x m): A has k contiguous when a_layout is ROW */
    lt_operand(g->a_layout == TB_LAYOUT_ROW, g->m, g->k, g->lda, 0, &yr, &yc, &opy);

    LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof opx));
    LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof opy));
    if (fp8) {
        set_scales<<<1, 1, 0, s>>>(r->scales, scale_b, scale_a);   /* X = our B, Y = our A */
        if (cudaGetLastError() != cudaSuccess) {
            snprintf(msg, len, "cublaslt reference: cannot set the scales");
            goto done;
        }
        LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &xs, sizeof xs));
        LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &ys, sizeof ys));
    }
    LT(cublasLtMatrixLayoutCreate(&lx, in_t, xr, xc, g->ldb));
    LT(cublasLtMatrixLayoutCreate(&ly, in_t, yr, yc, g->lda));
    LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, (uint64_t)g->n, (uint64_t)g->m, g->n));
    if (batch > 1) {
        int32_t bc = (int32_t)batch;
        LT(cublasLtMatrixLayoutSetAttribute(lx, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT(cublasLtMatrixLayoutSetAttribute(ly, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
        LT(cublasLtMatrixLayoutSetAttribute(lx, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &g->stride_b, sizeof g->stride_b));
        LT(cublasLtMatrixLayoutSetAttribute(ly, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &g->stride_a, sizeof g->stride_a));
        LT(cublasLtMatrixLayoutSetAttribute(ld, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &sd, sizeof sd));
    }
    LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &ws, sizeof ws));
    LT(cublasLtMatmulAlgoGetHeuristic(r->lt, op, lx, ly, ld, ld, pref, 1, &heur, &found));
    if (found < 1) {
        snprintf(msg, len, "cublaslt reference: no algorithm for %lldx%lldx%lld",
                 (long long)g->m, (long long)g->n, (long long)g->k);
        goto done;
    }
    if (algo && algo_len) {
        int id = -1;
        size_t w = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&heur.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
        snprintf(algo, algo_len, "algo=%d", id);
    }
    LT(cublasLtMatmul(r->lt, op, &alpha, b, lx, a, ly, &beta, d_ref, ld, d_ref, ld,
                      &heur.algo, r->ws, ws, s));
    rc = 0;
done:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (ld) cublasLtMatrixLayoutDestroy(ld);
    if (ly) cublasLtMatrixLayoutDestroy(ly);
    if (lx) cublasLtMatrixLayoutDestroy(lx);
    if (op) cublasLtMatmulDescDestroy(op);
    return rc;
}
