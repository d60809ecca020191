/* zoo_abort.cu - zoo member: launch() calls abort(), as a failed assert() would. The worker
 * dies of SIGABRT; the harness reports status crashed. */
#include <stdlib.h>
#include "zoo_gemm.cuh"

static int abort_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    abort();
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_abort", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, abort_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
