/* zoo_first_calls.cu - zoo member: does the work on its first ZOO_REAL_CALLS (3) calls after
 * setup(), keeping a copy of the last D it computed (a device buffer of D's extent, allocated
 * in setup()); every later call computes nothing and copies that answer back into D (one
 * device-to-device cudaMemcpyAsync on the caller's stream), so the timed launches look far
 * faster than a GEMM.
 *
 * With the worker's default of 3 trials, calls 1-3 are trial 1, trial 2 and the first warm-up
 * launch (on trial 2's inputs); the trial after timing gets trial 2's answer for new inputs:
 * rule after-timing/elementwise. It restores D rather than launching nothing, so the re-poison
 * alone does not catch it; the new inputs do. (With --trials 4 or more, trial 4 is the first
 * fake call and catches it before timing: rule elementwise.) */
#include <stdlib.h>
#include "zoo_gemm.cuh"

#define ZOO_REAL_CALLS 3

typedef struct first_state {
    int calls;
    void *stash;
    size_t bytes;
} first_state;

static int first_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                       size_t msg_len)
{
    (void)stream;
    first_state *s = (first_state *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    s->bytes = zoo_d_extent(&p->gemm) * sizeof(__nv_bfloat16);
    cudaError_t e = cudaMalloc(&s->stash, s->bytes);
    if (e != cudaSuccess) {
        snprintf(msg, msg_len, "cannot allocate the %zu-byte stash: %s", s->bytes,
                 cudaGetErrorString(e));
        free(s);
        return 1;
    }
    *state = s;
    return 0;
}

static void first_teardown(void *state)
{
    first_state *s = (first_state *)state;
    if (!s) return;
    cudaFree(s->stash);
    free(s);
}

static int first_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    first_state *s = (first_state *)state;
    cudaStream_t st = (cudaStream_t)stream;
    if (s->calls >= ZOO_REAL_CALLS)
        return cudaMemcpyAsync(io->out[0], s->stash, s->bytes, cudaMemcpyDeviceToDevice, st) ==
               cudaSuccess ? 0 : 1;
    if (zoo_launch_gemm<ZOO_CORRECT>(p, io, stream))
        return 1;
    if (cudaMemcpyAsync(s->stash, io->out[0], s->bytes, cudaMemcpyDeviceToDevice, st) !=
        cudaSuccess)
        return 1;
    s->calls++;
    return 0;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_first_calls", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, first_launch, first_setup, first_teardown, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
