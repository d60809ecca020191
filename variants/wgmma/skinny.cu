/* skinny.cu - skinny: the memory-bound small-m BF16 GEMM of skinny.cuh as variants of their
 * own (family "skinny", m <= 64): skinny_bf16_max_m-64_tn and, since the twelfth session,
 * _nn (A column-major; not yet run on a GPU when it was written), so that the kernel can be
 * measured apart from the wgmma_auto dispatcher that also uses it.
 *
 * Owns only the variant declarations: supports() (skinny_supports() and the variant's own
 * layout) and launch() forward to skinny.cuh; no setup, no state, no workspace.
 */
#include "skinny.cuh"

namespace {

/* L: 0 tn (A row-major), 1 nn (A column-major); B column-major in both. */
template <int L>
int sk_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_layout_ok(p, L ? TB_LAYOUT_COL : TB_LAYOUT_ROW, TB_LAYOUT_COL, why, len))
        return 0;
    return skinny_supports(p, why, len);
}

int sk_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    return skinny_launch(p, io, (cudaStream_t)stream);
}

template <int L>
const tb_param sk_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("max_m", SK_MAX_M),
    TB_PARAM_STR("layout", L ? "nn" : "tn"),
    TB_PARAM_END
};

char sk_name[2][96];

template <int L>
const tb_variant sk_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), sk_name[L], "skinny", sk_params<L>, TB_SASS,
    sk_supports<L>, NULL, sk_launch, NULL, NULL, NULL, NULL
};

template <int L>
size_t sk_named()
{
    return tb_variant_make_name("skinny", sk_params<L>, sk_name[L], sizeof sk_name[L]);
}

} // namespace

/* index 0: skinny_bf16_max_m-64_tn, 1: _nn, NULL after; named on the first call. */
extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    static const size_t named_ = sk_named<0>() + sk_named<1>();
    (void)named_;
    return index == 0 ? &sk_variant<0> : index == 1 ? &sk_variant<1> : NULL;
}
