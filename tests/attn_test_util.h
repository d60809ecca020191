/* attn_test_util.h - what the attention families' host-side tests (test_attn_fa2.c,
 * test_attn_hopper.c) read the same way: a grid library's one variant, a variant's parameters,
 * a packed attention problem, and supports() with its reason. Static and inline: each test
 * keeps its own copy. */
#ifndef TB_ATTN_TEST_UTIL_H
#define TB_ATTN_TEST_UTIL_H
#include "common/op_attention.h"
#include "tilebench/variant.h"
#include "common/tb.h"
#include "worker/loader.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The one variant of the grid library at path (its index 0, index 1 answering none), the
 * library left open in *lib; NULL, the reason printed and nothing left open, when it does not
 * load or does not answer so. */
static inline const tb_variant *one_variant(const char *path, tb_lib **lib)
{
    char msg[TB_MSG_LEN];
    const tb_variant *v = NULL, *v1 = NULL;
    *lib = NULL;
    if (tb_lib_open(path, lib, msg, sizeof msg) != TB_OK) {
        printf("  %s\n", msg);
        return NULL;
    }
    if (tb_lib_variant(*lib, 0, &v, msg, sizeof msg) != TB_OK || !v ||
        tb_lib_variant(*lib, 1, &v1, msg, sizeof msg) != TB_OK || v1) {
        printf("  %s: %s\n", path, v1 ? "a second variant at index 1" : msg);
        tb_lib_free(*lib);
        *lib = NULL;
        return NULL;
    }
    return v;
}

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

/* supports() of v on each of the n problems ps: how many it refused, each printed with its
 * reason */
static inline int refusals(const tb_variant *v, const tb_problem *ps, size_t n)
{
    char why[256];
    int no = 0;
    for (size_t k = 0; k < n; k++)
        if (!asks(v, &ps[k], why, sizeof why)) {
            printf("  %s refused problem %zu: %s\n", v->name, k, why);
            no++;
        }
    return no;
}

/* the families' common accepted set (head dims 64 and 128, BHSD and BSHD, causal with
 * seq_q = seq_k and seq_q < seq_k, grouped-query, multi-query, a decode row, odd lengths),
 * then Q and K with padded rows (136 elements, 16-byte aligned) */
static inline int refusals_common(const tb_variant *v)
{
    const tb_problem ps[] = {
        attn(1, 8, 8, 512, 512, 64, 0, TB_ATTN_BHSD),
        attn(1, 8, 8, 512, 512, 64, 1, TB_ATTN_BHSD),
        attn(2, 4, 4, 77, 131, 128, 0, TB_ATTN_BHSD),
        attn(2, 4, 4, 64, 200, 128, 1, TB_ATTN_BHSD),
        attn(1, 8, 2, 256, 256, 64, 0, TB_ATTN_BHSD),
        attn(2, 8, 1, 1, 1000, 128, 1, TB_ATTN_BHSD),
        attn(4, 32, 8, 4096, 4096, 128, 1, TB_ATTN_BSHD),
        attn(1, 3, 3, 33, 17, 64, 0, TB_ATTN_BSHD),
    };
    tb_problem p = attn(1, 2, 2, 100, 100, 128, 0, TB_ATTN_BHSD);
    p.attention.k_stride[2] = p.attention.q_stride[2] = 136;
    p.attention.k_stride[1] = p.attention.q_stride[1] = 136 * 100;
    p.attention.k_stride[0] = p.attention.q_stride[0] = 136 * 100 * 2;
    return refusals(v, ps, sizeof ps / sizeof ps[0]) + refusals(v, &p, 1);
}

/* The checks every attention family shares (variants/common/attn_common.cuh,
 * tbv::attention_basics): an odd O row stride declined ("o strides"), an even one taken (bf16x2
 * stores), causal with seq_q > seq_k declined ("causal"), heads_kv not dividing heads, another
 * dtype, a GEMM problem ("op") and a growth-1 struct declined, the plain problem they all
 * change taken. How many answers were wrong, each printed. */
static inline int wrong_common_answers(const tb_variant *v)
{
    struct { tb_problem p; int yes; const char *why; } c[8];
    for (int i = 0; i < 8; i++) {
        c[i].p = attn(1, 2, 2, 64, 64, 128, 0, TB_ATTN_BHSD);
        c[i].yes = 0;
        c[i].why = "";
    }
    c[0].p.attention.o_stride[2] = 129; c[0].why = "o strides";
    c[1].p.attention.o_stride[2] = 130; c[1].yes = 1;
    c[2].p = attn(1, 2, 2, 65, 64, 128, 1, TB_ATTN_BHSD); c[2].why = "causal";
    c[3].p = attn(1, 6, 4, 64, 64, 128, 0, TB_ATTN_BHSD);
    c[4].p.attention.q_type = TB_DTYPE_F16;
    c[5].p.op = TB_OP_GEMM; c[5].why = "op";
    c[6].p.struct_size = TB_PROBLEM_G1_SIZE;
    c[7].yes = 1;
    int wrong = 0;
    char why[256];
    for (int i = 0; i < 8; i++) {
        const int yes = asks(v, &c[i].p, why, sizeof why);
        if (yes != c[i].yes || (!yes && !strstr(why, c[i].why))) {
            printf("  %s: common case %d answered %s (%s), wanted %s%s%s\n", v->name, i,
                   yes ? "yes" : "no", why, c[i].yes ? "yes" : "no", c[i].why[0] ? ", naming " : "",
                   c[i].why);
            wrong++;
        }
    }
    return wrong;
}

#endif /* TB_ATTN_TEST_UTIL_H */
