/* zoo_nan_one.cu - zoo member: a correct GEMM except that D[0][0] of batch 0 is a NaN it
 * writes itself (bf16 0x7FC0, a different NaN from the harness's poison 0x7FC1): one element,
 * as a comparison that treats NaN as "no opinion" would let through. Validation must fail it
 * (rule nonfinite, one non-finite element). */
#include "zoo_gemm.cuh"

static int nan_one_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_NAN_ONE>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_nan_one", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, nan_one_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
