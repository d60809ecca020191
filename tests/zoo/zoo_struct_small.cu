/* zoo_struct_small.cu - zoo member: a correct GEMM whose struct_size says 16 bytes, less than
 * the v1 tb_variant, as a library built against a truncated or foreign header would. The
 * loader refuses it without reading past struct_size (the memory behind it is a whole
 * tb_variant, so a loader that ignores the size reads valid fields and misses the bug). */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, 16u, "zoo_struct_small", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
