/* zoo_oob_row.cu - zoo member: a correct GEMM that also stores one line past the end of D:
 * for a row-major D, row m of the last batch (d[(batch-1)*stride_d + m*ldd + j], j < n); for a
 * column-major D, column n (d[(batch-1)*stride_d + n*ldd + i], i < m), so that every extra
 * store is past D's last element whatever the layout (row m of a column-major D would mostly
 * land on D's own next column). The n (or m) elements land in the harness's guard band after
 * D, which must catch them (rule guard). They are inside the harness's allocation, so
 * compute-sanitizer memcheck sees them only if D is allocated without guard bands. */
#include "zoo_gemm.cuh"

static int oob_row_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_OOB_ROW>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_oob_row", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, oob_row_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
