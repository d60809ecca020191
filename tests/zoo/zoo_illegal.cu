/* zoo_illegal.cu - zoo member: the kernel computes D, then one thread stores through a wild
 * device pointer. The launch enqueues fine; the next synchronisation returns
 * cudaErrorIllegalAddress, which is sticky: the worker's context is lost, so the harness
 * reports status crashed and must use a fresh worker for whatever comes next. */
#include "zoo_gemm.cuh"

static int illegal_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_WILD_WRITE>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_illegal", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, illegal_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
