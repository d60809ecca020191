/* zoo_row_unwritten.cu - zoo member: a correct GEMM that never stores row m/2 of D (in every
 * batch), so those n elements per batch keep whatever was there: the harness's NaN poison.
 * Validation must fail it (rule nonfinite, n * batch non-finite elements). */
#include "zoo_gemm.cuh"

static int row_unwritten_launch(void *state, const tb_problem *p, const tb_buffers *io,
                                void *ws, size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_ROW_UNWRITTEN>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_row_unwritten", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, row_unwritten_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
