/* zoo_nosass.cu - zoo member: a correct GEMM (really built for TB_SASS) that claims its
 * kernels are sm_20 only: a real target no GPU the harness supports can run. The host refuses
 * it for this GPU rather than letting the launch fail with "no kernel image". */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_nosass", "zoo", zoo_plain_params, "sm_20",
    zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
