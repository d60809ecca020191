/* zoo_ctor_print.c - zoo member (attribution/): prints a line to stderr when loaded and is
 * otherwise a well-formed variant that is never launched. With zoo_ctor_segv.so probed after
 * it in the same worker, the segv's refusal must not quote this line (issue 19: output of one
 * variant attributed to another). */
#include <stdio.h>
#include <tilebench/variant.h>

__attribute__((constructor)) static void zoo_say_at_load(void)
{
    fprintf(stderr, "zoo_ctor_print: this line belongs to zoo_ctor_print\n");
}

static int never_launched(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    return 1;
}

static const tb_param plain[] = { TB_PARAM_STR("naming", "plain"), TB_PARAM_END };
static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_ctor_print", "zoo", plain, "any",
    NULL, NULL, never_launched, NULL, NULL, NULL, NULL
};

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
