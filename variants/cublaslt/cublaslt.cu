/* cublaslt.cu - cublaslt: the vendor baseline, cuBLASLt's first heuristic choice.
 *
 * The GEMM is described to cuBLASLt by variants/common/cublaslt_map.cuh (row-major D as the
 * column-major D^T, each operand's transpose, C in D's layout). The heuristic is asked with
 * the shared preference (lt_pref_create: 32 MiB of workspace, FP32-keeping reductions only)
 * and its first answer is kept. Everything that allocates or asks the heuristic happens in
 * setup(); launch() is one cublasLtMatmul on the host's stream and workspace. It has no
 * kernels of its own, so its sass is "any".
 *
 * FP8 (variant.h, growth 1): E4M3 A and B with their per-tensor scales, in the forms cuBLASLt's
 * FP8 kernels take (lt_fp8_supports), without fast accumulation (partial sums promoted to
 * FP32). Built with CUBLASLT_FASTACCUM defined it is `cublaslt-fastaccum` instead: FP8 only,
 * CUBLASLT_MATMUL_DESC_FAST_ACCUM set (no promotion: Hopper's FP8 tensor cores keep about 14
 * bits of the running sum), measured and validated like any variant, never exempted from the
 * rule (docs/method.md, "FP8 problems").
 */
#include "../common/cublaslt_map.cuh"

#include <stdlib.h>

#ifdef CUBLASLT_FASTACCUM
#define LT_NAME "cublaslt-fastaccum"
#define LT_FAST 1
#else
#define LT_NAME "cublaslt"
#define LT_FAST 0
#endif

namespace {

constexpr size_t WORKSPACE = 32u << 20;    /* 32 MiB: the heuristic's limit and ours */

struct lt_state {
    cublasLtHandle_t lt;
    tbv::lt_map map;
    cublasLtMatmulHeuristicResult_t heur;
    float *scales;   /* FP8: the two device scales (lt_map_set_scales); NULL for BF16 */
};

int lt_supports(const tb_problem *p, char *why, size_t len)
{
    if (LT_FAST && !(p->op == TB_OP_GEMM && tbv::lt_is_fp8(p)))
        return tbv::no(why, len, "fast accumulation is an fp8 mode: e4m3 a and b only");
    return tbv::lt_variant_supports(p, why, len);
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
    tbv::lt_map_destroy(&s->map);
    if (s->lt) cublasLtDestroy(s->lt);
    if (s->scales) cudaFree(s->scales);
    free(s);
}

int lt_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    lt_state *s = (lt_state *)calloc(1, sizeof *s);
    *state = NULL;
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    if (tbv::lt_first_choice(&p->gemm, WORKSPACE, &s->lt, &s->map, &s->heur, LT_NAME, msg, len,
                             tbv::lt_is_fp8(p) ? p : NULL, (int8_t)LT_FAST, &s->scales)) {
        lt_teardown(s);
        return 1;
    }
    *state = s;
    return 0;
}

int lt_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    lt_state *s = (lt_state *)state;
    if (!s) return (int)CUBLAS_STATUS_NOT_INITIALIZED;
    return tbv::lt_map_launch(s->lt, &s->map, &s->heur.algo, &p->gemm, io, workspace,
                              workspace_bytes, (cudaStream_t)stream);
}

int lt_describe(void *state, char *buf, size_t len)
{
    const lt_state *s = (const lt_state *)state;
    if (!s || !buf || !len) return 1;
    tbv::lt_algo_describe(&s->heur.algo, s->heur.workspaceSize, s->heur.wavesCount, buf, len);
    return 0;
}

const tb_param lt_params[] = {
    TB_PARAM_STR("naming", "plain"),
#if LT_FAST
    TB_PARAM_STR("dtype", "e4m3"),
    TB_PARAM_STR("accumulation", "fast"),
#else
    TB_PARAM_STR("dtype", "bf16,e4m3"),
#endif
    TB_PARAM_END
};

const tb_variant lt_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), LT_NAME, "cublaslt", lt_params, "any",
    lt_supports, lt_workspace, lt_launch, lt_setup, lt_teardown, lt_describe,
    tbv::lt_problem_size_ext   /* growth 1: it reads gemm_scales */
};

} // namespace

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &lt_variant : NULL;
}
