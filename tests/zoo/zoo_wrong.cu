/* zoo_wrong.cu - zoo member: a GEMM that is right everywhere except D's first 128 x 128 tile
 * of batch 0, where each element gets +1.0 before rounding. It runs cleanly (status ok) and
 * validation must catch it (disposition incorrect, min(m,128) * min(n,128) bad elements
 * wherever the tolerance there is below 1). zoo_dup_other.so carries the same name. */
#include "zoo_gemm.cuh"

static int wrong_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_WRONG_TILE>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_wrong", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, wrong_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
