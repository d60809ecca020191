/* zoo_dup_other.cu - zoo member: a second file whose one variant is also named "zoo_wrong",
 * a duplicate across files. The loader refuses whichever of the two it meets second. This
 * copy carries zoo_wrong's flaw too (+1.0 on the first 128 x 128 tile), so results for the
 * name "zoo_wrong" are the same whichever file wins; only the refusal tells them apart. */
#include "zoo_gemm.cuh"

static int dup_other_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                            size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_WRONG_TILE>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_wrong", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, dup_other_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
