/* zoo_undefined.c - zoo member: references a function that no library defines, as a variant
 * linked against a missing or mismatched library would. The link succeeds (a MODULE library
 * may leave symbols undefined: never build the zoo with -Wl,--no-undefined or -z defs), and
 * dlopen fails with "undefined symbol: zoo_planted_missing_function" under RTLD_NOW and under
 * RTLD_LAZY alike: besides the call (a PLT slot, which RTLD_LAZY would bind late) the library
 * holds the function's address in data, a relocation every dlopen resolves at once. */
#include <stddef.h>
#include <tilebench/variant.h>

/* Declared with default visibility: hidden, the link itself would fail. */
extern __attribute__((visibility("default"))) int zoo_planted_missing_function(void);

static int (*volatile zoo_missing)(void) = zoo_planted_missing_function;

static int undefined_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                            size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    return zoo_missing() + zoo_planted_missing_function();
}

static const tb_param zoo_plain_params[] = { TB_PARAM_STR("naming", "plain"), TB_PARAM_END };

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_undefined", "zoo", zoo_plain_params, "any",
    NULL, NULL, undefined_launch, NULL, NULL, NULL, NULL
};

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
