/* zoo_ldb_as_k.cu - zoo member: a GEMM that reads a row-major B (layouts nt and tt: k x n, n
 * contiguous, ldb >= n) as if its pitch were k, the leading dimension of tn's column-major B:
 * the slip of a kernel ported from tn to tt without its pitch. Exact when k == ldb (square
 * shapes, no padding) and in tn and nn (B column-major is read right); wrong on any tt shape
 * whose k differs from n, which validation must fail (rule elementwise). */
#include "zoo_gemm.cuh"

static int ldb_as_k_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                           size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_LDB_AS_K>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_ldb_as_k", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, ldb_as_k_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
