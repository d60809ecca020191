/* zoo_host_bound.cu - zoo member: a launch() slow on the host (issue 19, hole 1). Each call
 * first spends host_ms milliseconds on the host (a busy loop on CLOCK_MONOTONIC, standing for
 * a slow host-side path: a library's heuristics, a synchronous allocation, a Python layer),
 * then enqueues zoo_fast's kernel, which is correct and as fast as zoo_fast's. Queued behind
 * the blocking kernel, a stream sample of many such launches outlasts the kernel's timeout
 * (500 ms) unless it has few enough launches; its GPU figure must be zoo_fast's all the same,
 * and its host time stored beside it (tests/zoo/README.md).
 * host_ms is TB_ZOO_HOST_MS from the environment (a number from 0 to 10000; default 2), read
 * in setup(); a bad value fails setup() with a message naming it. describe() reports
 * "host_ms=H". */
#include <stdlib.h>
#include <time.h>
#include "zoo_gemm.cuh"

#define ZOO_HOST_MS_DEFAULT 2.0

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int hb_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                    size_t msg_len)
{
    (void)p; (void)stream;
    double ms = ZOO_HOST_MS_DEFAULT;
    const char *env = getenv("TB_ZOO_HOST_MS");
    if (env && *env) {
        char *end = NULL;
        ms = strtod(env, &end);
        if (end == env || *end || !(ms >= 0.0 && ms <= 10000.0)) {
            snprintf(msg, msg_len, "TB_ZOO_HOST_MS must be a number from 0 to 10000, not '%s'",
                     env);
            return 1;
        }
    }
    double *s = (double *)malloc(sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    *s = ms;
    *state = s;
    return 0;
}

static void hb_teardown(void *state)
{
    free(state);
}

static int hb_describe(void *state, char *buf, size_t buf_len)
{
    if (!state) return 1;
    snprintf(buf, buf_len, "host_ms=%g", *(const double *)state);
    return 0;
}

static int hb_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                     size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    double until = now_ms() + *(const double *)state;
    while (now_ms() < until) {
    }
    return zoo_launch_gemm<ZOO_CORRECT>(p, io, stream);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_host_bound", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, hb_launch, hb_setup, hb_teardown, hb_describe, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
