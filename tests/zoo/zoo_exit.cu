/* zoo_exit.cu - zoo member: launch() calls exit(3), as a library that "handles" an error by
 * ending the process would. The worker exits with status 3 in the middle of a work item; the
 * harness reports status crashed (not a clean end of the worker). */
#include <stdlib.h>
#include "zoo_gemm.cuh"

static int exit_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                       size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    exit(3);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_exit", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, exit_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
