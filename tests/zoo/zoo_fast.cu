/* zoo_fast.cu - zoo member: the plain, correct zoo GEMM under its own name, the yardstick for
 * zoo_slow5 (the same kernel with 5 % more work). A timing test asserts that zoo_slow5 is
 * ranked slower than zoo_fast; both pass validation. */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_fast", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
