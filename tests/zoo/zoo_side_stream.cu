/* zoo_side_stream.cu - zoo member: a correct GEMM enqueued on a stream of its own. setup()
 * creates a non-blocking stream (setup may allocate); launch() puts the GEMM there and never
 * makes the caller's stream wait for it (no event, no cudaStreamWaitEvent), so events recorded
 * on the caller's stream around launch() measure nothing. The harness synchronises the whole
 * device after every launch it validates or times, so D is right; it must see the work in the
 * device-synchronised wall time that the events miss (rule hidden-work).
 *
 * Under graph capture the side stream is not captured: the GEMM runs once, at capture time,
 * and the graph holds nothing of it. A harness that picks the graph method from the first
 * launch's event time (about zero here) meets exactly that case. */
#include "zoo_gemm.cuh"

static int side_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                      size_t msg_len)
{
    (void)p; (void)stream;
    cudaStream_t side = NULL;
    cudaError_t e = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        snprintf(msg, msg_len, "cannot create the side stream: %s", cudaGetErrorString(e));
        return 1;
    }
    *state = side;
    return 0;
}

static void side_teardown(void *state)
{
    if (state)
        cudaStreamDestroy((cudaStream_t)state);
}

static int side_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                       size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes; (void)stream;
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, (tb_stream)state);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_side_stream", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, side_launch, side_setup, side_teardown, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
