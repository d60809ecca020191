/* zoo_unsupported.cu - zoo member: supports() refuses every problem with the reason
 * "planted: supports nothing". The harness reports status unsupported with that reason and
 * never calls setup() or launch(). */
#include "zoo_gemm.cuh"

static int unsupported_supports(const tb_problem *p, char *why, size_t why_len)
{
    (void)p;
    if (why && why_len)
        snprintf(why, why_len, "planted: supports nothing");
    return 0;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_unsupported", "zoo", zoo_plain_params,
    TB_SASS, unsupported_supports, NULL, zoo_launch_correct, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
