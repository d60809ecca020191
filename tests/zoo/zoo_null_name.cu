/* zoo_null_name.cu - zoo member: a correct GEMM whose name is NULL. The loader refuses it
 * (a variant's name is its identity) and does not pass the NULL to printf or strcmp. */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), NULL, "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
