/* zoo_modify_inputs.cu - zoo member: a correct GEMM that, after it, changes the first element
 * of A (batch 0's A[0][0]): a second one-thread kernel on the same stream adds 1 to its
 * mantissa's low 7 bits, modulo 128 (a different finite value on every call, of the same
 * sign and binade, never Inf or NaN). D is right, since the GEMM read A before the change;
 * inputs are const by contract, and the harness's checksum of A must catch it (rule inputs). */
#include "zoo_gemm.cuh"

__global__ void zoo_scribble_kernel(uint16_t *a)
{
    const unsigned v = a[0];
    a[0] = (uint16_t)((v & 0xFF80u) | ((v + 1u) & 0x7Fu));
}

static int modify_inputs_launch(void *state, const tb_problem *p, const tb_buffers *io,
                                void *ws, size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    if (zoo_launch_gemm<ZOO_CORRECT>(p, io, stream))
        return 1;
    zoo_scribble_kernel<<<1, 1, 0, (cudaStream_t)stream>>>((uint16_t *)io->in[0]);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_modify_inputs", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, modify_inputs_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
