/* zoo_hang.cu - zoo member: the kernel computes D, then one thread waits forever for a device
 * variable nobody writes (a volatile load in a loop, which the compiler must keep). launch()
 * returns 0 at once; the first synchronisation never returns. The harness's watchdog kills
 * the worker and reports status timeout. */
#include "zoo_gemm.cuh"

static int hang_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                       size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_SPIN>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_hang", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, hang_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
