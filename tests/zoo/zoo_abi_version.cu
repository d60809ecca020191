/* zoo_abi_version.cu - zoo member: a correct GEMM that reports abi_version 999. The loader
 * refuses it before reading any other field (a struct of another ABI version may have another
 * layout, so not even its name is trusted). */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v = {
    999u, sizeof(tb_variant), "zoo_abi_version", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
