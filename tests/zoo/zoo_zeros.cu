/* zoo_zeros.cu - zoo member: writes 0 to every element of D (so it overwrites the poison and
 * leaves no NaN behind). Status ok, disposition incorrect; it would pass only on a problem
 * whose true D is zero (alpha == 0 and beta == 0). */
#include "zoo_gemm.cuh"

static int zeros_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_ZEROS>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_zeros", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, zeros_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
