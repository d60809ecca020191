/* zoo_ctor_hang.c - zoo member: a library whose constructor never returns, as a variant that
 * blocks on a lock or a device at load time would. Built into the zoo's ctor_hang/ folder (a
 * sweep of the whole zoo must not wait for it). The probe must give up after its limit
 * (TILEBENCH_PROBE_TIMEOUT, default 60 s) and say it timed out, not "killed by signal 9". */
#include <stddef.h>
#include <unistd.h>
#include <tilebench/variant.h>

__attribute__((constructor)) static void zoo_hang_at_load(void)
{
    for (;;) pause();
}

static const tb_param plain[] = { TB_PARAM_STR("naming", "plain"), TB_PARAM_END };

static int never_launched(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    return 1;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_ctor_hang", "zoo", plain, "any",
    NULL, NULL, never_launched, NULL, NULL, NULL, NULL
};

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
