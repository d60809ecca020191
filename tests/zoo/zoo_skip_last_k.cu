/* zoo_skip_last_k.cu - zoo member: a GEMM that computes only the first floor(K/32)*32
 * products of every element, as a tiled kernel that forgets the last, partial K tile would.
 * Exact when K % 32 == 0; with K = 136 or 1000 eight products are missing (about 0.9 for
 * uniform inputs, far above the tolerance), and validation must fail it (rule elementwise). */
#include "zoo_gemm.cuh"

static int skip_last_k_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                              size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_SKIP_LAST_K>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_skip_last_k", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, skip_last_k_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
