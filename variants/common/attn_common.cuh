/* attn_common.cuh - what every attention forward variant answers alike.
 *
 * Owns: extension() for an attention variant (variant.h, growth 2): TB_EXT_OPS, the one
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

namespace tbv {

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
