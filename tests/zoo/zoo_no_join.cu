/* zoo_no_join.cu - zoo member: forks without joining. setup() creates a non-blocking stream and
 * an event; launch() records the event on the caller's stream, makes its own stream wait for
 * it (so the GEMM starts only when the caller's stream reaches the launch, in order), runs the
 * correct GEMM there and never makes the caller's stream wait back. Events on the caller's
 * stream close before the GEMM ends; only a check in stream order right after the launch
 * sees D unfinished (rule off-stream). Unlike zoo_side_stream, nothing runs while the
 * caller's stream is held. */
#include "zoo_gemm.cuh"
#include <stdlib.h>

typedef struct fork_state { cudaStream_t side; cudaEvent_t ev; } fork_state;

static int fork_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                      size_t msg_len)
{
    (void)p; (void)stream;
    fork_state *f = (fork_state *)calloc(1, sizeof *f);
    if (!f || cudaStreamCreateWithFlags(&f->side, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&f->ev, cudaEventDisableTiming) != cudaSuccess) {
        snprintf(msg, msg_len, "cannot create the side stream or its event");
        free(f);
        return 1;
    }
    *state = f;
    return 0;
}

static void fork_teardown(void *state)
{
    fork_state *f = (fork_state *)state;
    if (!f) return;
    cudaEventDestroy(f->ev);
    cudaStreamDestroy(f->side);
    free(f);
}

static int fork_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                       size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    fork_state *f = (fork_state *)state;
    if (cudaEventRecord(f->ev, (cudaStream_t)stream) != cudaSuccess ||
        cudaStreamWaitEvent(f->side, f->ev, 0) != cudaSuccess)
        return 1;
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, (tb_stream)f->side);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_no_join", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, fork_launch, fork_setup, fork_teardown, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
