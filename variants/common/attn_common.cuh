/* attn_common.cuh - what every attention forward variant answers alike.
 *
 * Owns: the checks every attention variant's supports() begins with (attention_basics), and
 * extension() for an attention variant (variant.h, growth 2): TB_EXT_OPS, the one
 * operation it computes (TB_OP_ATTENTION_FWD), and TB_EXT_PROBLEM_SIZE, the tb_problem layout
 * it was built against (one holding the attention member), without which the host never
 * offers it an attention problem. Static and inline, as gemm_common.cuh: each library keeps
 * its own copy and exports nothing from here.
 */
#ifndef TB_VARIANTS_ATTN_COMMON_CUH
#define TB_VARIANTS_ATTN_COMMON_CUH

#include <stdint.h>
#include <string.h>

#include "tilebench/variant.h"
#include "gemm_common.cuh"   /* tbv::no */

namespace tbv {

/* The checks every attention variant's supports() starts with: growth 2, the operation, BF16
 * Q, K, V and O with FP32 accumulation and LSE, a known layout, sizes of at least 1,
 * heads_kv dividing heads and a scale an FP32 kernel can hold. 1, or 0 with the first failing one's reason in why. */
static inline int attention_basics(const tb_problem *p, char *why, size_t len)
{
    if (!p || p->struct_size < TB_PROBLEM_G2_SIZE)
        return no(why, len, "problem struct too small for attention (growth 2)");
    if (p->op != TB_OP_ATTENTION_FWD) return no(why, len, "op is not attention_fwd");
    const tb_attention *a = &p->attention;
    if (a->q_type != TB_DTYPE_BF16 || a->k_type != TB_DTYPE_BF16 ||
        a->v_type != TB_DTYPE_BF16 || a->o_type != TB_DTYPE_BF16)
        return no(why, len, "q, k, v and o must all be bf16");
    if (a->acc_type != TB_DTYPE_F32) return no(why, len, "accumulation must be f32");
    if (a->lse_type != TB_DTYPE_F32) return no(why, len, "lse must be f32");
    if (a->layout != TB_ATTN_BHSD && a->layout != TB_ATTN_BSHD)
        return no(why, len, "unknown layout %d", (int)a->layout);
    if (a->batch < 1 || a->heads < 1 || a->heads_kv < 1 || a->seq_q < 1 || a->seq_k < 1 ||
        a->head_dim < 1)
        return no(why, len, "batch, heads, heads_kv, seq_q, seq_k and head_dim must be >= 1");
    if (a->heads % a->heads_kv != 0) return no(why, len, "heads_kv must divide heads");
    /* the kernels scale in FP32, with log2(e) folded in: a scale they can hold as a float */
    if (!(a->scale >= 1e-30 && a->scale <= 1e30))
        return no(why, len, "scale %g outside 1e-30 to 1e30 (FP32 arithmetic)", a->scale);
    return 1;
}

static inline const void *attention_extension(const char *key)
{
    static const uint32_t ops[] = { TB_OP_ATTENTION_FWD, 0 };
    static const uint32_t problem_size = (uint32_t)sizeof(tb_problem);
    if (!key) return NULL;
    if (strcmp(key, TB_EXT_OPS) == 0) return ops;
    if (strcmp(key, TB_EXT_PROBLEM_SIZE) == 0) return &problem_size;
    return NULL;
}

} // namespace tbv

#endif /* TB_VARIANTS_ATTN_COMMON_CUH */
