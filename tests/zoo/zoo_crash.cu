/* zoo_crash.cu - zoo member: launch() dereferences NULL on the host before enqueueing.
 * The worker dies of SIGSEGV; the harness reports status crashed and carries on. */
#include "zoo_gemm.cuh"

/* NULL, but read at run time: the compiler cannot prove the store below is undefined and
 * replace it with a trap (which would be SIGILL, not SIGSEGV). */
static int *volatile zoo_null_pointer = NULL;

static int crash_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    *zoo_null_pointer = 1;
    return zoo_launch_correct(state, p, io, ws, ws_bytes, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_crash", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, crash_launch, NULL, NULL, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
