/* skinny.cu - skinny: the memory-bound small-m BF16 GEMM of skinny.cuh as variants of their
 * own (family "skinny", m <= 64), one per layout: skinny_bf16_max_m-64_tn and _nn (B
 * column-major: skinny.cuh's kernel; _nn since the twelfth session), _nt and _tt (B row-major:
 * skinny_rowb.cuh's kernel, thirteenth session), so that the kernels can be measured apart
 * from the wgmma_auto dispatcher that also uses them. _nn, _nt and _tt had not run on a GPU
 * when they were written.
 *
 * Owns only the variant declarations: supports() (the variant's own layout, then
 * skinny_supports()) and launch() forward to skinny.cuh; no setup, no state, no workspace.
 */
#include "skinny.cuh"

namespace {

/* L: the layout index of wgmma.cu and wgmma_auto: 0 tn, 1 nn, 2 nt, 3 tt (A column-major in nn
 * and nt, B row-major in nt and tt). */
constexpr const char *SK_LAYOUT[4] = { "tn", "nn", "nt", "tt" };

template <int L>
int sk_supports(const tb_problem *p, char *why, size_t len)
{
    const tb_layout a = L == 1 || L == 2 ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    const tb_layout b = L >= 2 ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    if (!tbv::bf16_gemm_layout_ok(p, a, b, why, len)) return 0;
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
    TB_PARAM_STR("layout", SK_LAYOUT[L]),
    TB_PARAM_END
};

char sk_name[4][96];

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

/* index 0: skinny_bf16_max_m-64_tn, 1: _nn, 2: _nt, 3: _tt, NULL after; named on the first
 * call (C++ makes the one-time initialisation thread-safe). */
extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    static const size_t named_ = sk_named<0>() + sk_named<1>() + sk_named<2>() + sk_named<3>();
    (void)named_;
    return index == 0 ? &sk_variant<0> : index == 1 ? &sk_variant<1>
         : index == 2 ? &sk_variant<2> : index == 3 ? &sk_variant<3> : NULL;
}
