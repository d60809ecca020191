/* cublaslt.cu - cublaslt: the vendor baseline, cuBLASLt's first heuristic choice.
 *
 * Owns the mapping of a tilebench GEMM onto cuBLASLt's column-major world. cuBLASLt
 * computes D = op(X) op(Y) + C on column-major matrices. A row-major D (m x n, ldd) is a
 * column-major n x m matrix holding D^T, so for D ROW it computes D^T = B^T A^T (X = B,
 * Y = A); for D COL it computes D = A B directly (X = A, Y = B). Each operand gets the
 * transpose its storage needs (see operand()). C must share D's layout: cuBLASLt cannot
 * transpose C. Everything that allocates or asks the heuristic happens in setup(); launch()
 * is one cublasLtMatmul on the host's stream and workspace. It has no kernels of its own,
 * so its sass is "any".
 */
#include "../common/gemm_common.cuh"

#include <cublasLt.h>
#include <stdlib.h>

namespace {

constexpr size_t WORKSPACE = 32u << 20;    /* 32 MiB: the heuristic's limit and ours */

struct lt_state {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lx, ly, lc, ld;
    cublasLtMatmulHeuristicResult_t heur;
    bool d_row;     /* X = B, Y = A (computing D^T) */
};

/* Describe stored matrix S (rows x cols in our terms, layout l, leading dimension ld) as
 * the column-major operand op(S') of cuBLASLt that equals S when want_t is 0 and S^T when
 * it is 1. A ROW matrix is S^T in column-major storage, a COL matrix S itself. */
void operand(tb_layout l, int64_t rows, int64_t cols, int want_t, uint64_t *lrows,
             uint64_t *lcols, cublasOperation_t *op)
{
    const int stored_t = l == TB_LAYOUT_ROW;   /* column-major storage holds S^T */
    if (stored_t) { *lrows = (uint64_t)cols; *lcols = (uint64_t)rows; }
    else { *lrows = (uint64_t)rows; *lcols = (uint64_t)cols; }
    *op = stored_t != want_t ? CUBLAS_OP_T : CUBLAS_OP_N;
}

int lt_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_ok(p, why, len)) return 0;
    const tb_gemm *g = &p->gemm;
    if (g->beta != 0.0 && g->c_layout != g->d_layout)
        return tbv::no(why, len, "c and d must share one layout (cublaslt cannot transpose c)");
    if (g->batch > INT32_MAX) return tbv::no(why, len, "batch above 2^31-1");
    return 1;
}

size_t lt_workspace(const tb_problem *p)
{
    (void)p;
    return WORKSPACE;
}

void lt_teardown(void *state)
{
    lt_state *s = (lt_state *)state;
    if (!s) return;
    if (s->ld) cublasLtMatrixLayoutDestroy(s->ld);
    if (s->lc) cublasLtMatrixLayoutDestroy(s->lc);
    if (s->ly) cublasLtMatrixLayoutDestroy(s->ly);
    if (s->lx) cublasLtMatrixLayoutDestroy(s->lx);
    if (s->op) cublasLtMatmulDescDestroy(s->op);
    if (s->lt) cublasLtDestroy(s->lt);
    free(s);
}

cublasStatus_t set_batch(cublasLtMatrixLayout_t l, int32_t count, int64_t stride)
{
    cublasStatus_t st = cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                         &count, sizeof count);
    if (st != CUBLAS_STATUS_SUCCESS) return st;
    return cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &stride, sizeof stride);
}

#define LT_TRY(call) do { st = (call); if (st != CUBLAS_STATUS_SUCCESS) { \
    snprintf(msg, len, "%s failed: %s", #call, cublasLtGetStatusString(st)); goto fail; } \
    } while (0)

int lt_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    const tb_gemm *g = &p->gemm;
    cublasStatus_t st;
    cublasLtMatmulPreference_t pref = NULL;
    int found = 0;
    size_t ws = WORKSPACE;
    uint64_t xr, xc, yr, yc;
    cublasOperation_t opx, opy;
    int64_t xld, yld, xs, ys;
    const int32_t batch = (int32_t)g->batch;
    lt_state *s = (lt_state *)calloc(1, sizeof *s);
    *state = NULL;
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->d_row = g->d_layout == TB_LAYOUT_ROW;

    /* D ROW: n x m column-major result = B^T (n x k) * A^T (k x m).
     * D COL: m x n column-major result = A (m x k) * B (k x n). */
    if (s->d_row) {
        operand(g->b_layout, g->k, g->n, 1, &xr, &xc, &opx);
        operand(g->a_layout, g->m, g->k, 1, &yr, &yc, &opy);
        xld = g->ldb; yld = g->lda; xs = g->stride_b; ys = g->stride_a;
    } else {
        operand(g->a_layout, g->m, g->k, 0, &xr, &xc, &opx);
        operand(g->b_layout, g->k, g->n, 0, &yr, &yc, &opy);
        xld = g->lda; yld = g->ldb; xs = g->stride_a; ys = g->stride_b;
    }
    {
        const uint64_t dr = (uint64_t)(s->d_row ? g->n : g->m);
        const uint64_t dc = (uint64_t)(s->d_row ? g->m : g->n);
        LT_TRY(cublasLtCreate(&s->lt));
        LT_TRY(cublasLtMatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof opx));
        LT_TRY(cublasLtMatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof opy));
        LT_TRY(cublasLtMatrixLayoutCreate(&s->lx, CUDA_R_16BF, xr, xc, xld));
        LT_TRY(cublasLtMatrixLayoutCreate(&s->ly, CUDA_R_16BF, yr, yc, yld));
        LT_TRY(cublasLtMatrixLayoutCreate(&s->ld, CUDA_R_16BF, dr, dc, g->ldd));
        /* With beta == 0 cuBLASLt reads no C: C is described (and passed) as D. */
        if (g->beta != 0.0)
            LT_TRY(cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_16BF, dr, dc, g->ldc));
        else
            LT_TRY(cublasLtMatrixLayoutCreate(&s->lc, CUDA_R_16BF, dr, dc, g->ldd));
        if (batch > 1) {
            LT_TRY(set_batch(s->lx, batch, xs));
            LT_TRY(set_batch(s->ly, batch, ys));
            LT_TRY(set_batch(s->lc, batch, g->beta != 0.0 ? g->stride_c : g->stride_d));
            LT_TRY(set_batch(s->ld, batch, g->stride_d));
        }
        LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
        LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &ws, sizeof ws));
        LT_TRY(cublasLtMatmulAlgoGetHeuristic(s->lt, s->op, s->lx, s->ly, s->lc, s->ld, pref, 1,
                                              &s->heur, &found));
        if (found < 1 || s->heur.state != CUBLAS_STATUS_SUCCESS) {
            snprintf(msg, len, "cublaslt has no algorithm for %lldx%lldx%lld",
                     (long long)g->m, (long long)g->n, (long long)g->k);
            goto fail;
        }
    }
    cublasLtMatmulPreferenceDestroy(pref);
    *state = s;
    return 0;
fail:
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    lt_teardown(s);
    return 1;
}

int lt_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    lt_state *s = (lt_state *)state;
    if (!s) return (int)CUBLAS_STATUS_NOT_INITIALIZED;
    const tb_gemm *g = &p->gemm;
    const float alpha = (float)g->alpha, beta = (float)g->beta;
    const void *a = io->in[0], *b = io->in[1];
    void *d = io->out[0];
    const void *c = g->beta != 0.0 ? io->in[2] : d;
    const void *x = s->d_row ? b : a, *y = s->d_row ? a : b;
    cublasStatus_t st = cublasLtMatmul(s->lt, s->op, &alpha, x, s->lx, y, s->ly, &beta, c, s->lc,
                                       d, s->ld, &s->heur.algo, workspace, workspace_bytes,
                                       (cudaStream_t)stream);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : (int)st;
}

int lt_describe(void *state, char *buf, size_t len)
{
    const lt_state *s = (const lt_state *)state;
    if (!s || !buf || !len) return 1;
    const cublasLtMatmulAlgo_t *al = &s->heur.algo;
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
             (unsigned)cluster, s->heur.workspaceSize, (double)s->heur.wavesCount);
    return 0;
}

const tb_param lt_params[] = {
    TB_PARAM_STR("naming", "plain"),
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_END
};

const tb_variant lt_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "cublaslt", "cublaslt", lt_params, "any",
    lt_supports, lt_workspace, lt_launch, lt_setup, lt_teardown, lt_describe, NULL
};

} // namespace

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &lt_variant : NULL;
}
