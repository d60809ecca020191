/* zoo_gated.cu - zoo members for the gate (tilebench gate): one source built three times under
 * the one variant name "zoo_gated", so a base and a head can be measured side by side as
 * base:zoo_gated and head:zoo_gated. Built into the zoo's gated/ folder (never beside the other
 * members: three libraries with one name in one folder are refused as duplicates).
 *   zoo_gated.so        zoo_slow5's kernel with slow_k = 0: the plain correct GEMM
 *   zoo_gated_slow3.so  the same kernel with slow_k = round(K * 3 / 100): about 3 % slower by
 *                       honest extra work (zoo_slow5.cu says how), D bit for bit the same
 *   zoo_gated_wrong.so  the same GEMM with +1 on D's first 128 x 128 tile: invalid
 * ZOO_GATED_PCT and ZOO_GATED_WRONG choose which (CMakeLists.txt). describe() says which. */
#include <math.h>
#include "zoo_gemm.cuh"

#ifndef ZOO_GATED_PCT
#define ZOO_GATED_PCT 0
#endif

static int gated_describe(void *state, char *buf, size_t buf_len)
{
    (void)state;
#ifdef ZOO_GATED_WRONG
    snprintf(buf, buf_len, "wrong: +1 on D's first 128x128 tile");
#else
    snprintf(buf, buf_len, "slow_pct=%d", ZOO_GATED_PCT);
#endif
    return 0;
}

static int gated_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                        size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)ws; (void)ws_bytes;
#ifdef ZOO_GATED_WRONG
    return zoo_launch_gemm<ZOO_WRONG_TILE>(p, io, stream);
#else
    int64_t slow_k = (int64_t)llround((double)p->gemm.k * ZOO_GATED_PCT / 100.0);
    return zoo_launch_gemm<ZOO_SLOW>(p, io, stream, slow_k);
#endif
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_gated", "zoo", zoo_plain_params, TB_SASS,
    zoo_supports, NULL, gated_launch, NULL, NULL, gated_describe, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
