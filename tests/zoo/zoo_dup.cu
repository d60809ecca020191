/* zoo_dup.cu - zoo member: one library returning two variants with the same name "zoo_dup"
 * (indices 0 and 1; both correct GEMMs). Names are identities, so the loader refuses the
 * duplicate. */
#include "zoo_gemm.cuh"

static const tb_variant zoo_v[2] = {
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_dup", "zoo", zoo_plain_params, TB_SASS,
      zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL },
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_dup", "zoo", zoo_plain_params, TB_SASS,
      zoo_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL },
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index < 2 ? &zoo_v[index] : NULL;
}
