/* zoo_ignore_beta.cu - zoo member: D = alpha*A*B, whatever beta says; C is never read. Right
 * on every problem with beta == 0 (the default), wrong on every other one: validation with
 * beta != 0 and C preloaded must fail it (rule elementwise). */
#include "zoo_gemm.cuh"

static int ignore_beta_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                              size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_IGNORE_BETA>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_ignore_beta", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, ignore_beta_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
