/* zoo_slow5.cu - zoo member: zoo_fast's correct GEMM made about 5 % slower by honest extra
 * work, for the timing test "a copy slowed by 5 % is ranked slower". Before its K loop every
 * thread runs the loop's own statement over the first slow_k = round(K * pct / 100) products
 * (the same loads in the same order, into a partial sum that seeds the accumulator times a
 * zero the compiler cannot see), so each element costs (K + slow_k) / K of zoo_fast's loop and
 * D is bit for bit zoo_fast's (up to the sign of an exact zero). The grid is zoo_fast's, so
 * there is no wave quantisation; the extra loop is not unrolled, so both kernels use 40
 * registers (same occupancy). The epilogue is not lengthened (ratio slightly under
 * 1 + slow_k/K) and the extra loop is not unrolled (perhaps slightly over): expect 4-6 % at
 * the default, unmeasured. README.md says more.
 *
 * pct is TB_ZOO_SLOW_PCT from the environment (a number from 0 to 100; default 5), read in
 * setup(); a bad value fails setup() with a message naming it. describe() reports
 * "slow_pct=P slow_k=S of k=K", stored beside the measurement. */
#include <math.h>
#include <stdlib.h>
#include "zoo_gemm.cuh"

#define ZOO_SLOW_PCT_DEFAULT 5.0

typedef struct slow_state {
    double pct;
    int64_t slow_k, k;
} slow_state;

static int slow_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                      size_t msg_len)
{
    (void)stream;
    double pct = ZOO_SLOW_PCT_DEFAULT;
    const char *env = getenv("TB_ZOO_SLOW_PCT");
    if (env && *env) {
        char *end = NULL;
        pct = strtod(env, &end);
        if (end == env || *end || !(pct >= 0.0 && pct <= 100.0)) {
            snprintf(msg, msg_len, "TB_ZOO_SLOW_PCT must be a number from 0 to 100, not '%s'",
                     env);
            return 1;
        }
    }
    slow_state *s = (slow_state *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    s->pct = pct;
    s->k = p->gemm.k;
    s->slow_k = (int64_t)llround((double)p->gemm.k * pct / 100.0);
    if (s->slow_k > s->k) s->slow_k = s->k;
    if (s->slow_k < 0) s->slow_k = 0;
    *state = s;
    return 0;
}

static void slow_teardown(void *state)
{
    free(state);
}

static int slow_describe(void *state, char *buf, size_t buf_len)
{
    const slow_state *s = (const slow_state *)state;
    if (!s) return 1;
    snprintf(buf, buf_len, "slow_pct=%g slow_k=%lld of k=%lld", s->pct, (long long)s->slow_k,
             (long long)s->k);
    return 0;
}

static int slow_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                       size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    return zoo_launch_gemm<ZOO_SLOW>(p, io, stream, ((const slow_state *)state)->slow_k);
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_slow5", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, slow_launch, slow_setup, slow_teardown, slow_describe, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
