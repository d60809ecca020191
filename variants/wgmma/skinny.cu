/* skinny.cu - skinny: the memory-bound small-m BF16 GEMM of skinny.cuh as a variant of its
 * own (family "skinny", layout tn, m <= 64), so that it can be measured apart from the
 * wgmma_auto dispatcher that also uses it.
 *
 * Owns only the variant declaration: supports() and launch() forward to skinny_supports()
 * and skinny_launch(); no setup, no state, no workspace.
 */
#include "skinny.cuh"

namespace {

int sk_supports(const tb_problem *p, char *why, size_t len)
{
    return skinny_supports(p, why, len);
}

int sk_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    return skinny_launch(p, io, (cudaStream_t)stream);
}

const tb_param sk_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("max_m", SK_MAX_M),
    TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

char sk_name[96];

const tb_variant sk_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), sk_name, "skinny", sk_params, TB_SASS,
    sk_supports, NULL, sk_launch, NULL, NULL, NULL, NULL
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(sk_variant, sk_name, "skinny", sk_params)
