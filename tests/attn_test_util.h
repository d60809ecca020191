/* attn_test_util.h - what the attention families' host-side tests (test_attn_fa2.c,
 * test_attn_hopper.c) read the same way: a variant's parameters, a packed attention problem,
 * and supports() with its reason. Static and inline: each test keeps its own copy. */
#ifndef TB_ATTN_TEST_UTIL_H
#define TB_ATTN_TEST_UTIL_H
#include "common/op_attention.h"
#include "tilebench/variant.h"
#include <stddef.h>
#include <stdint.h>

/* an integer parameter of v, -1 when it has none */
static inline int64_t param_int(const tb_variant *v, const char *key)
{
    const tb_param *p = tb_param_find(v->params, key);
    return p && p->type == TB_PARAM_TYPE_INT ? p->i : -1;
}

/* a string parameter of v, "" when it has none */
static inline const char *param_str(const tb_variant *v, const char *key)
{
    const tb_param *p = tb_param_find(v->params, key);
    return p && p->type == TB_PARAM_TYPE_STR && p->s ? p->s : "";
}

/* the attention problem of these sizes, packed in layout, scale 1/sqrt(d) */
static inline tb_problem attn(int64_t b, int64_t h, int64_t hkv, int64_t sq, int64_t sk,
                              int64_t d, int causal, tb_attn_layout layout)
{
    tb_attn_shape s = { b, h, hkv, sq, sk, d, causal };
    tb_problem p;
    tb_attn_problem(&s, layout, 0.0, &p);
    return p;
}

/* supports() of v on p: 1 or 0, the reason in why */
static inline int asks(const tb_variant *v, const tb_problem *p, char *why, size_t len)
{
    why[0] = 0;
    return v->supports(p, why, len) != 0;
}

#endif /* TB_ATTN_TEST_UTIL_H */
