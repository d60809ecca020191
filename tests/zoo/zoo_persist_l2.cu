/* zoo_persist_l2.cu - zoo member: a correct GEMM that reserves a persisting-L2 carve-out for B,
 * so that B survives the harness's L2 flush and every timed launch starts with B warm.
 * setup() raises the device's persisting-L2 limit (cudaLimitPersistingL2CacheSize) to all
 * that cudaDevAttrMaxPersistingL2CacheSize allows. setup() is not given the buffers, so
 * launch() sets the access-policy window on the caller's stream, before enqueueing the GEMM:
 * base B, B's extent in bytes (at most cudaDevAttrMaxAccessPolicyWindowSize), hitRatio 1,
 * hitProp persisting, missProp streaming. teardown() undoes nothing. The harness must find the
 * limit right after setup() (or the window after the first trial, on a GPU whose limit cannot
 * be raised), reset both and flag the variant (rule persisting-l2). Failures of these calls
 * (a GPU without persisting L2) are cleared and ignored: the GEMM is launched either way. */
#include <stdlib.h>
#include <string.h>
#include "zoo_gemm.cuh"

typedef struct persist_state {
    size_t max_window;   /* cudaDevAttrMaxAccessPolicyWindowSize, bytes */
} persist_state;

static int persist_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                         size_t msg_len)
{
    (void)p; (void)stream;
    persist_state *s = (persist_state *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    int dev = 0, max_persist = 0, max_window = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max_persist, cudaDevAttrMaxPersistingL2CacheSize, dev) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, dev) !=
            cudaSuccess) {
        cudaGetLastError();
        max_persist = max_window = 0;
    }
    if (max_persist > 0 &&
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)max_persist) != cudaSuccess)
        cudaGetLastError();
    s->max_window = max_window > 0 ? (size_t)max_window : 0;
    *state = s;
    return 0;
}

static void persist_teardown(void *state)
{
    free(state);   /* the limit and the window stay as they are */
}

static int persist_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    const persist_state *s = (const persist_state *)state;
    const tb_gemm *g = &p->gemm;
    int64_t rows = g->b_layout == TB_LAYOUT_ROW ? g->k : g->n;
    int64_t cols = g->b_layout == TB_LAYOUT_ROW ? g->n : g->k;
    size_t b_bytes = (size_t)((g->batch - 1) * g->stride_b + (rows - 1) * g->ldb + cols) *
                     sizeof(__nv_bfloat16);
    if (s && s->max_window > 0) {
        cudaStreamAttrValue v;
        memset(&v, 0, sizeof v);
        v.accessPolicyWindow.base_ptr = (void *)io->in[1];
        v.accessPolicyWindow.num_bytes = b_bytes < s->max_window ? b_bytes : s->max_window;
        v.accessPolicyWindow.hitRatio = 1.0f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        if (cudaStreamSetAttribute((cudaStream_t)stream, cudaStreamAttributeAccessPolicyWindow,
                                   &v) != cudaSuccess)
            cudaGetLastError();
    }
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_persist_l2", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, persist_launch, persist_setup, persist_teardown, NULL, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
