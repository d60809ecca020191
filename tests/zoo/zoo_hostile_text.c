/* zoo_hostile_text.c - zoo member: four variants whose text is hostile, as an outside audit
 * wrote them (issue 27): a family holding a terminal escape sequence, a parameter that is not
 * UTF-8, parameters longer than variant.h's limit, and one well-formed variant beside them.
 * The three bad ones must be refused when the library is probed, each in one line that shows
 * the offending text escaped; the good one must be listed. No kernel: it is never launched. */
#include <stddef.h>
#include <tilebench/variant.h>

static int hostile_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                          size_t ws_bytes, tb_stream stream)
{
    (void)state; (void)p; (void)io; (void)ws; (void)ws_bytes; (void)stream;
    return 1;
}

static const tb_param plain[] = { TB_PARAM_STR("naming", "plain"), TB_PARAM_END };
static const tb_param not_utf8[] = { TB_PARAM_STR("naming", "plain"),
                                     TB_PARAM_STR("note", "caf\xe9 \xff\xfe"), TB_PARAM_END };
#define L64 "0123456789012345678901234567890123456789012345678901234567890123"
static const tb_param too_long[] = { TB_PARAM_STR("naming", "plain"),
    TB_PARAM_STR("note", L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64 L64),
    TB_PARAM_END };

static const tb_variant zoo_v[] = {
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_hostile_family", "zoo\x1b]0;pwned\x07\x1b[2J",
      plain, "any", NULL, NULL, hostile_launch, NULL, NULL, NULL, NULL },
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_hostile_utf8", "zoo", not_utf8, "any",
      NULL, NULL, hostile_launch, NULL, NULL, NULL, NULL },
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_hostile_long", "zoo", too_long, "any",
      NULL, NULL, hostile_launch, NULL, NULL, NULL, NULL },
    { TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_hostile_ok", "zoo", plain, "any",
      NULL, NULL, hostile_launch, NULL, NULL, NULL, NULL },
};

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index);

TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index < sizeof zoo_v / sizeof zoo_v[0] ? &zoo_v[index] : NULL;
}
