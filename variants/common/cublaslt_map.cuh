/* cublaslt_map.cuh - a tilebench GEMM described to cuBLASLt, shared by the cuBLASLt variants.
 *
 * Owns the mapping of a tilebench GEMM onto cuBLASLt's column-major world (the same one
 * variants/cublaslt/cublaslt.cu writes out): cuBLASLt computes D = op(X) op(Y) + C on
 * column-major matrices. A row-major D (m x n, ldd) is a column-major n x m matrix holding
 * D^T, so for D ROW it computes D^T = B^T A^T (X = B, Y = A); for D COL it computes D = A B
 * (X = A, Y = B). Each operand gets the transpose its storage needs (see operand()). C must
 * share D's layout: cuBLASLt cannot transpose C; with beta == 0 C is described (and passed)
 * as D. Also here: one line describing a chosen algorithm. Everything is static or inline;
 * it includes only gemm_common.cuh and cublasLt.h.
 *
 * FP8 (variant.h, growth 1): E4M3 A and B with per-tensor scales, BF16 C and D, FP32
 * accumulation. cuBLASLt's FP8 kernels on Hopper take only its "TN" form (our tn, D
 * row-major) and 16-byte aligned operands (lt_fp8_supports); the scales are device scalars
 * (lt_map_set_scales, from setup()), cuBLASLt's A being our B. A variant that maps FP8 answers
 * extension(TB_EXT_PROBLEM_SIZE) with lt_problem_size_ext, else the host never offers it FP8.
 */
#ifndef TB_VARIANTS_CUBLASLT_MAP_CUH
#define TB_VARIANTS_CUBLASLT_MAP_CUH

#include "gemm_common.cuh"

#include <cublasLt.h>

namespace tbv {

/* The matmul descriptor and the four layouts of one problem. Zero-initialise, fill with
 * lt_map_create(), release with lt_map_destroy() (which accepts a partly built map). */
struct lt_map {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lx, ly, lc, ld;
    bool d_row;     /* X = B, Y = A (computing D^T) */
};

/* Describe stored matrix S (rows x cols in our terms, layout l) as the column-major operand
 * op(S') of cuBLASLt that equals S when want_t is 0 and S^T when it is 1. A ROW matrix is
 * S^T in column-major storage, a COL matrix S itself. */
static inline void lt_operand(tb_layout l, int64_t rows, int64_t cols, int want_t,
                              uint64_t *lrows, uint64_t *lcols, cublasOperation_t *op)
{
    const int stored_t = l == TB_LAYOUT_ROW;   /* column-major storage holds S^T */
    if (stored_t) { *lrows = (uint64_t)cols; *lcols = (uint64_t)rows; }
    else { *lrows = (uint64_t)rows; *lcols = (uint64_t)cols; }
    *op = stored_t != want_t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/* The tb_problem layout these variants are built against: what extension(TB_EXT_PROBLEM_SIZE)
 * answers (the host offers FP8 problems only to a variant whose answer covers gemm_scales). */
static const uint32_t lt_problem_size = sizeof(tb_problem);
static inline const void *lt_problem_size_ext(const char *key)
{
    const char *a = key, *b = TB_EXT_PROBLEM_SIZE;
    while (*a && *a == *b) { a++; b++; }
    return *a == 0 && *b == 0 ? &lt_problem_size : NULL;
}

/* 1 when p is an FP8 problem (E4M3 A and B): its scales are read, so the struct must cover
 * them (the host never offers FP8 to one that does not). */
static inline int lt_is_fp8(const tb_problem *p)
{
    return p->gemm.a_type == TB_DTYPE_E4M3 && p->gemm.b_type == TB_DTYPE_E4M3;
}

/* What cuBLASLt's FP8 kernels take on Hopper (the cuBLAS documentation's FP8 requirements:
 * "TN" form, 16-byte alignment; m, n and k multiples of 16 as torch._scaled_mm requires):
 * E4M3 A and B, BF16 C and D, FP32 accumulation, layout tn with D (and C) row-major, m, n, k,
 * lda, ldb multiples of 16, ldc and ldd multiples of 8, scales finite and positive. */
static inline int lt_fp8_supports(const tb_problem *p, char *why, size_t len)
{
    if (!p || p->struct_size < TB_PROBLEM_G1_SIZE) return no(why, len, "problem struct too small for fp8 scales");
    if (p->op != TB_OP_GEMM) return no(why, len, "op is not gemm");
    const tb_gemm *g = &p->gemm;
    if (g->c_type != TB_DTYPE_BF16 || g->d_type != TB_DTYPE_BF16 || g->acc_type != TB_DTYPE_F32)
        return no(why, len, "fp8: c and d must be bf16, accumulation f32");
    if (g->a_layout != TB_LAYOUT_ROW || g->b_layout != TB_LAYOUT_COL || g->d_layout != TB_LAYOUT_ROW ||
        (g->beta != 0.0 && g->c_layout != TB_LAYOUT_ROW))
        return no(why, len, "fp8 needs layout tn (cublaslt's fp8 kernels read k-major operands only)");
    if (g->m % 16 || g->n % 16 || g->k % 16 || g->lda % 16 || g->ldb % 16)
        return no(why, len, "fp8 needs m, n, k, lda and ldb multiples of 16");
    if (g->ldd % 8 || (g->beta != 0.0 && g->ldc % 8)) return no(why, len, "fp8 needs ldc and ldd multiples of 8");
    if (g->lda < g->k || g->ldb < g->k || g->ldd < g->n || (g->beta != 0.0 && g->ldc < g->n))
        return no(why, len, "leading dimension too small");
    const float sa = p->gemm_scales.scale_a, sb = p->gemm_scales.scale_b;
    if (!(sa > 0.0f && sb > 0.0f && sa < 3.0e38f && sb < 3.0e38f))
        return no(why, len, "fp8 scales must be finite and positive");
    return 1;
}

/* The problems the mapping covers (beyond bf16_gemm_ok): C in D's layout, batch < 2^31. */
static inline int lt_map_supports(const tb_gemm *g, char *why, size_t len)
{
    if (g->beta != 0.0 && g->c_layout != g->d_layout)
        return no(why, len, "c and d must share one layout (cublaslt cannot transpose c)");
    if (g->batch > INT32_MAX) return no(why, len, "batch above 2^31-1");
    return 1;
}

static inline void lt_map_destroy(lt_map *m)
{
    if (m->ld) cublasLtMatrixLayoutDestroy(m->ld);
    if (m->lc) cublasLtMatrixLayoutDestroy(m->lc);
    if (m->ly) cublasLtMatrixLayoutDestroy(m->ly);
    if (m->lx) cublasLtMatrixLayoutDestroy(m->lx);
    if (m->op) cublasLtMatmulDescDestroy(m->op);
    m->ld = m->lc = m->ly = m->lx = NULL;
    m->op = NULL;
}

static inline cublasStatus_t lt_set_batch(cublasLtMatrixLayout_t l, int32_t count, int64_t stride)
{
    cublasStatus_t st = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &count, sizeof count);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &stride, sizeof stride);
}

/* Fill m for g (BF16 or E4M3 A and B, BF16 C and D, FP32 compute). Returns
 * CUBLAS_STATUS_SUCCESS, or the first failure with the failing call's name in *what; m is
 * then partly built (destroy it). */
static inline cublasStatus_t lt_map_create(const tb_gemm *g, lt_map *m, const char **what)
{
    uint64_t xr, xc, yr, yc;
    cublasOperation_t opx, opy;
    int64_t xld, yld, xs, ys;
    const int32_t batch = (int32_t)g->batch;
    cublasStatus_t st;
    m->d_row = g->d_layout == TB_LAYOUT_ROW;
    /* D ROW: n x m column-major result = B^T (n x k) * A^T (k x m).
     * D COL: m x n column-major result = A (m x k) * B (k x n). */
    if (m->d_row) {
        lt_operand(g->b_layout, g->k, g->n, 1, &xr, &xc, &opx);
        lt_operand(g->a_layout, g->m, g->k, 1, &yr, &yc, &opy);
        xld = g->ldb; yld = g->lda; xs = g->stride_b; ys = g->stride_a;
    } else {
        lt_operand(g->a_layout, g->m, g->k, 0, &xr, &xc, &opx);
        lt_operand(g->b_layout, g->k, g->n, 0, &yr, &yc, &opy);
        xld = g->lda; yld = g->ldb; xs = g->stride_a; ys = g->stride_b;
    }
    const uint64_t dr = (uint64_t)(m->d_row ? g->n : g->m);
    const uint64_t dc = (uint64_t)(m->d_row ? g->m : g->n);
#define TBV_LT_TRY(call) do { st = (call); if (st != CUBLAS_STATUS_SUCCESS) { \
        if (what) *what = #call; return st; } } while (0)
    TBV_LT_TRY(cublasLtMatmulDescCreate(&m->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    TBV_LT_TRY(cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof opx));
    TBV_LT_TRY(cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof opy));
    const cudaDataType_t in_t = g->a_type == TB_DTYPE_E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    TBV_LT_TRY(cublasLtMatrixLayoutCreate(&m->lx, in_t, xr, xc, xld));
    TBV_LT_TRY(cublasLtMatrixLayoutCreate(&m->ly, in_t, yr, yc, yld));
    TBV_LT_TRY(cublasLtMatrixLayoutCreate(&m->ld, CUDA_R_16BF, dr, dc, g->ldd));
    TBV_LT_TRY(cublasLtMatrixLayoutCreate(&m->lc, CUDA_R_16BF, dr, dc,
                                          g->beta != 0.0 ? g->ldc : g->ldd));
    if (batch > 1) {
        TBV_LT_TRY(lt_set_batch(m->lx, batch, xs));
        TBV_LT_TRY(lt_set_batch(m->ly, batch, ys));
        TBV_LT_TRY(lt_set_batch(m->lc, batch, g->beta != 0.0 ? g->stride_c : g->stride_d));
        TBV_LT_TRY(lt_set_batch(m->ld, batch, g->stride_d));
    }
#undef TBV_LT_TRY
    return CUBLAS_STATUS_SUCCESS;
}

/* FP8: the problem's scales into *dev (two device floats 16 bytes apart, allocated here; the caller frees
 * them with cudaFree after the map), set as the descriptor's scale pointers in the map's
 * operand order (X's scale first). Also CUBLASLT_MATMUL_DESC_FAST_ACCUM = fast (0: partial
 * sums periodically promoted to FP32, cuBLASLt's default). Synchronous: setup() only.
 * 0, or 1 with msg filled. */
static inline int lt_map_set_scales(lt_map *m, const tb_problem *p, int8_t fast, float **dev,
                                    char *msg, size_t len)
{
    const float sa = p->gemm_scales.scale_a, sb = p->gemm_scales.scale_b;
    /* each at its own 16-byte boundary: cuBLASLt 13.1 refused (NOT_SUPPORTED at
     * cublasLtMatmul) a scale pointer 4 bytes after the other on the H100, 2026-11-27 */
    const float h[8] = { m->d_row ? sb : sa, 0, 0, 0, m->d_row ? sa : sb, 0, 0, 0 };
    cudaError_t e = cudaMalloc((void **)dev, sizeof h);
    if (e == cudaSuccess) e = cudaMemcpy(*dev, h, sizeof h, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaGetLastError();
        snprintf(msg, len, "cannot set the fp8 scales: %s", cudaGetErrorString(e));
        return 1;
    }
    const void *xs = *dev, *ys = *dev + 4;
    cublasStatus_t st = cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &xs, sizeof xs);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &ys, sizeof ys);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulDescSetAttribute(m->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cublasLtMatmulDescSetAttribute (fp8 scales) failed: %s",
                 cublasLtGetStatusString(st));
        return 1;
    }
    return 0;
}

/* The heuristic's preference shared by the cuBLASLt variants: at most ws bytes of workspace,
 * and only reduction schemes that keep FP32: none, or split-k partial sums reduced in the
 * compute type. Split-k reduced in the output type (BF16, in place or in a BF16 workspace)
 * rounds every partial sum to BF16; cuBLASLt's first choice on 2049x2047x1000 and
 * 8191x8193x8184 was such an algorithm, and it failed validation there (max error 0.33 and
 * 0.75, H100, CUDA 13.0, 2026-11-23). */
static inline cublasStatus_t lt_pref_create(size_t ws, cublasLtMatmulPreference_t *pref,
                                            const char **what)
{
    const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublasStatus_t st = cublasLtMatmulPreferenceCreate(pref);
    if (st != CUBLAS_STATUS_SUCCESS) { if (what) *what = "cublasLtMatmulPreferenceCreate"; return st; }
    st = cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                              &ws, sizeof ws);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasLtMatmulPreferenceSetAttribute(*pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                  &mask, sizeof mask);
    if (st != CUBLAS_STATUS_SUCCESS && what) *what = "cublasLtMatmulPreferenceSetAttribute";
    return st;
}

/* The X and Y operands of one launch, in the map's order. */
static inline void lt_map_operands(const lt_map *m, const tb_buffers *io, const void **x,
                                   const void **y)
{
    *x = m->d_row ? io->in[1] : io->in[0];
    *y = m->d_row ? io->in[0] : io->in[1];
}

/* cuBLASLt's first heuristic choice for g, as the cublaslt variant keeps it: a handle in *lt,
 * the layout mapping in *m and the algorithm in *heur, for at most ws bytes of workspace (the
 * shared preference). 0, or 1 with msg filled: the call that failed and its status, or that
 * there is no algorithm (named after variant). What it made is left in *lt and *m for the
 * caller's teardown (lt_map_destroy, cublasLtDestroy). */
static inline int lt_first_choice(const tb_gemm *g, size_t ws, cublasLtHandle_t *lt, lt_map *m,
                                  cublasLtMatmulHeuristicResult_t *heur, const char *variant,
                                  char *msg, size_t len, const tb_problem *fp8 = NULL,
                                  int8_t fast = 0, float **scales = NULL)
{
    const char *what = "cublasLtCreate";
    cublasLtMatmulPreference_t pref = NULL;
    int found = 0;
    cublasStatus_t st = cublasLtCreate(lt);
    if (st == CUBLAS_STATUS_SUCCESS) st = lt_map_create(g, m, &what);
    /* FP8 (fp8 is the problem): the scales and the accumulation mode are part of the
     * descriptor the heuristic is asked with */
    if (st == CUBLAS_STATUS_SUCCESS && fp8 && lt_map_set_scales(m, fp8, fast, scales, msg, len))
        return 1;
    if (st == CUBLAS_STATUS_SUCCESS) st = lt_pref_create(ws, &pref, &what);
    if (st == CUBLAS_STATUS_SUCCESS) {
        what = "cublasLtMatmulAlgoGetHeuristic";
        st = cublasLtMatmulAlgoGetHeuristic(*lt, m->op, m->lx, m->ly, m->lc, m->ld, pref, 1, heur,
                                            &found);
    }
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "%s failed: %s", what, cublasLtGetStatusString(st));
        return 1;
    }
    if (found < 1 || heur->state != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "%s has no algorithm for %lldx%lldx%lld", variant, (long long)g->m,
                 (long long)g->n, (long long)g->k);
        return 1;
    }
    return 0;
}

/* What a cuBLASLt variant supports: a BF16 GEMM the mapping covers, or an FP8 one that
 * cuBLASLt's FP8 kernels take (lt_fp8_supports). */
static inline int lt_variant_supports(const tb_problem *p, char *why, size_t len)
{
    if (p && p->op == TB_OP_GEMM && p->struct_size >= offsetof(tb_problem, gemm) + sizeof(tb_gemm) &&
        (tb_dtype_is_fp8(p->gemm.a_type) || tb_dtype_is_fp8(p->gemm.b_type))) {
        if (!lt_is_fp8(p)) return no(why, len, "fp8: a and b must both be e4m3");
        if (!lt_fp8_supports(p, why, len)) return 0;
        return lt_map_supports(&p->gemm, why, len);
    }
    if (!bf16_gemm_ok(p, why, len)) return 0;
    return lt_map_supports(&p->gemm, why, len);
}

/* One launch of g with algorithm algo on stream; 0 or the cuBLAS status. */
static inline int lt_map_launch(cublasLtHandle_t lt, const lt_map *m,
                                const cublasLtMatmulAlgo_t *algo, const tb_gemm *g,
                                const tb_buffers *io, void *ws, size_t ws_bytes,
                                cudaStream_t stream)
{
    const float alpha = (float)g->alpha, beta = (float)g->beta;
    const void *x, *y;
    lt_map_operands(m, io, &x, &y);
    void *d = io->out[0];
    const void *c = g->beta != 0.0 ? io->in[2] : d;   /* with beta == 0, C is described as D */
    cublasStatus_t st = cublasLtMatmul(lt, m->op, &alpha, x, m->lx, y, m->ly, &beta, c, m->lc,
                                       d, m->ld, algo, ws, ws_bytes, stream);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : (int)st;
}

/* "algo=.. tile=.. stages=.. ..." for algorithm al (its heuristic's workspace and waves). */
static inline void lt_algo_describe(const cublasLtMatmulAlgo_t *al, size_t workspace,
                                    float waves, char *buf, size_t len)
{
    int32_t id = -1, splitk = 0;
    uint32_t tile = 0, stages = 0, red = 0, swizzle = 0, custom = 0;
    uint16_t inner = 0, cluster = 0;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
    snprintf(buf, len,
             "algo=%d tile=%u stages=%u splitk=%d reduction=%u swizzle=%u custom=%u inner=%u "
             "cluster=%u workspace=%zu waves=%.2f",
             (int)id, tile, stages, (int)splitk, red, swizzle, custom, (unsigned)inner,
             (unsigned)cluster, workspace, (double)waves);
}

} // namespace tbv

#endif /* TB_VARIANTS_CUBLASLT_MAP_CUH */
