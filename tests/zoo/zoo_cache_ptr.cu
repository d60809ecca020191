/* zoo_cache_ptr.cu - zoo member: caches its answer by pointer. It remembers the (A, B, C, D)
 * pointers of its last call and keeps a copy of the D it computed (a device buffer of D's
 * extent, allocated in setup()); called again with the same four pointers it computes nothing
 * and copies that old answer back into D (one device-to-device cudaMemcpyAsync on the caller's
 * stream), trusting the inputs behind the pointers to be the same.
 *
 * It restores D rather than launching nothing, so it survives the harness re-poisoning D: only
 * new inputs at the same pointers catch it. The worker's trials share one set of buffers, so
 * the first repeat of the pointers is trial 2 (new seed, same pointers): rule elementwise
 * there. A harness whose trials before timing used other buffers would catch it in the trial
 * after timing instead (after-timing/elementwise). */
#include <stdlib.h>
#include "zoo_gemm.cuh"

typedef struct cache_state {
    const void *a, *b, *c;
    void *d;
    int valid;          /* a, b, c, d and stash hold the last call's pointers and answer */
    void *stash;
    size_t bytes;
} cache_state;

static int cache_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                       size_t msg_len)
{
    (void)stream;
    cache_state *s = (cache_state *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    s->bytes = zoo_d_extent(&p->gemm) * sizeof(__nv_bfloat16);
    cudaError_t e = cudaMalloc(&s->stash, s->bytes);
    if (e != cudaSuccess) {
        snprintf(msg, msg_len, "cannot allocate the %zu-byte cache: %s", s->bytes,
                 cudaGetErrorString(e));
        free(s);
        return 1;
    }
    *state = s;
    return 0;
}

static void cache_teardown(void *state)
{
    cache_state *s = (cache_state *)state;
    if (!s) return;
    cudaFree(s->stash);
    free(s);
}

static int cache_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    cache_state *s = (cache_state *)state;
    cudaStream_t st = (cudaStream_t)stream;
    if (s->valid && s->a == io->in[0] && s->b == io->in[1] && s->c == io->in[2] &&
        s->d == io->out[0])
        return cudaMemcpyAsync(io->out[0], s->stash, s->bytes, cudaMemcpyDeviceToDevice, st) ==
               cudaSuccess ? 0 : 1;
    if (zoo_launch_gemm<ZOO_CORRECT>(p, io, stream))
        return 1;
    if (cudaMemcpyAsync(s->stash, io->out[0], s->bytes, cudaMemcpyDeviceToDevice, st) !=
        cudaSuccess)
        return 1;
    s->a = io->in[0];
    s->b = io->in[1];
    s->c = io->in[2];
    s->d = io->out[0];
    s->valid = 1;
    return 0;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_cache_ptr", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, cache_launch, cache_setup, cache_teardown, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
