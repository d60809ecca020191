/* test_abi.c - harness/include/tilebench/variant.h: the tb_problem layouts pinned byte by byte.
 * v1 (160 bytes), growth 1 (176: gemm_scales) and growth 2 (392: attention) never move a field
 * a variant built against an earlier layout reads; the compiler checks it (_Static_assert, on
 * LP64, the only targets the harness builds for) and so does the running program, which prints
 * each offset a check disagrees with. Also compiles the header as plain C11 with -Wall -Wextra,
 * and checks the enum values a built variant already holds. No GPU, no harness library. */
#include "tb_test.h"
#include "tilebench/variant.h"
#include <stddef.h>
#include <stdint.h>

#if UINTPTR_MAX == 0xffffffffffffffffu
#define PIN(type, field, at) _Static_assert(offsetof(type, field) == (at), #type "." #field " moved")
/* v1 */
PIN(tb_problem, struct_size, 0);
PIN(tb_problem, op, 4);
PIN(tb_problem, gemm, 8);
PIN(tb_gemm, m, 0);
PIN(tb_gemm, batch, 24);
PIN(tb_gemm, a_type, 32);
PIN(tb_gemm, acc_type, 48);
PIN(tb_gemm, a_layout, 52);
PIN(tb_gemm, lda, 72);
PIN(tb_gemm, stride_a, 104);
PIN(tb_gemm, alpha, 136);
PIN(tb_gemm, beta, 144);
_Static_assert(sizeof(tb_gemm) == 152, "tb_gemm's size changed");
_Static_assert(TB_PROBLEM_V1_SIZE == 160, "the v1 problem is 160 bytes");
/* growth 1 */
PIN(tb_problem, gemm_scales, 160);
_Static_assert(sizeof(tb_gemm_scales) == 16, "tb_gemm_scales's size changed");
_Static_assert(TB_PROBLEM_G1_SIZE == 176, "the growth-1 problem is 176 bytes");
/* growth 2 */
PIN(tb_problem, attention, 176);
PIN(tb_attention, batch, 0);
PIN(tb_attention, heads, 8);
PIN(tb_attention, heads_kv, 16);
PIN(tb_attention, seq_q, 24);
PIN(tb_attention, seq_k, 32);
PIN(tb_attention, head_dim, 40);
PIN(tb_attention, q_type, 48);
PIN(tb_attention, k_type, 52);
PIN(tb_attention, v_type, 56);
PIN(tb_attention, o_type, 60);
PIN(tb_attention, acc_type, 64);
PIN(tb_attention, lse_type, 68);
PIN(tb_attention, layout, 72);
PIN(tb_attention, causal, 76);
PIN(tb_attention, scale, 80);
PIN(tb_attention, q_stride, 88);
PIN(tb_attention, k_stride, 112);
PIN(tb_attention, v_stride, 136);
PIN(tb_attention, o_stride, 160);
PIN(tb_attention, lse_stride, 184);
PIN(tb_attention, reserved, 200);
_Static_assert(sizeof(tb_attention) == 216, "tb_attention's size changed");
_Static_assert(TB_PROBLEM_G2_SIZE == 392, "the growth-2 problem is 392 bytes");
_Static_assert(sizeof(tb_problem) == TB_PROBLEM_G2_SIZE, "tb_problem ends with growth 2");
_Static_assert(sizeof(tb_dtype) == 4 && sizeof(tb_layout) == 4 && sizeof(tb_attn_layout) == 4,
               "the ABI's enums are 4 bytes");
#endif

/* one runtime check of an offset, printing both figures when they differ */
static int at(const char *what, size_t got, size_t want)
{
    if (got == want) return 1;
    printf("  %s at %zu, want %zu\n", what, got, want);
    return 0;
}

int main(void)
{
    TB_CASE("abi-1.1", "the v1 problem: gemm at 8, 160 bytes") {
        TB_CHECK(at("tb_problem.op", offsetof(tb_problem, op), 4));
        TB_CHECK(at("tb_problem.gemm", offsetof(tb_problem, gemm), 8));
        TB_CHECK(at("sizeof(tb_gemm)", sizeof(tb_gemm), 152));
        TB_CHECK(at("TB_PROBLEM_V1_SIZE", TB_PROBLEM_V1_SIZE, 160));
    }
    TB_CASE("abi-1.2", "growth 1: gemm_scales at 160, 176 bytes") {
        TB_CHECK(at("tb_problem.gemm_scales", offsetof(tb_problem, gemm_scales), 160));
        TB_CHECK(at("TB_PROBLEM_G1_SIZE", TB_PROBLEM_G1_SIZE, 176));
        TB_CHECK(TB_PROBLEM_G1_SIZE == TB_PROBLEM_V1_SIZE + sizeof(tb_gemm_scales));
    }
    TB_CASE("abi-1.3", "growth 2: attention at 176 (right after growth 1), 392 bytes") {
        TB_CHECK(at("tb_problem.attention", offsetof(tb_problem, attention), TB_PROBLEM_G1_SIZE));
        TB_CHECK(at("sizeof(tb_attention)", sizeof(tb_attention), 216));
        TB_CHECK(at("TB_PROBLEM_G2_SIZE", TB_PROBLEM_G2_SIZE, 392));
        TB_CHECK(at("sizeof(tb_problem)", sizeof(tb_problem), TB_PROBLEM_G2_SIZE));
        TB_CHECK(at("attention.scale", offsetof(tb_attention, scale), 80));
        TB_CHECK(at("attention.q_stride", offsetof(tb_attention, q_stride), 88));
        TB_CHECK(at("attention.lse_stride", offsetof(tb_attention, lse_stride), 184));
        TB_CHECK(at("attention.reserved", offsetof(tb_attention, reserved), 200));
    }
    TB_CASE("abi-1.4", "every layout's size is ordered: v1 < growth 1 < growth 2") {
        TB_CHECK(TB_PROBLEM_V1_SIZE < TB_PROBLEM_G1_SIZE && TB_PROBLEM_G1_SIZE < TB_PROBLEM_G2_SIZE);
        /* a field of growth 2 lies wholly past the growth-1 size a variant built then knows */
        TB_CHECK(offsetof(tb_problem, attention) >= TB_PROBLEM_G1_SIZE);
    }
    TB_CASE("abi-2.1", "enum values are appended, never renumbered") {
        TB_CHECK(TB_OP_GEMM == 1 && TB_OP_ATTENTION_FWD == 2);
        TB_CHECK(TB_ATTN_BHSD == 0 && TB_ATTN_BSHD == 1);
        TB_CHECK(TB_DTYPE_BF16 == 1 && TB_DTYPE_F32 == 3 && TB_DTYPE_E4M3 == 5 && TB_DTYPE_I32 == 8);
        TB_CHECK(TB_LAYOUT_ROW == 0 && TB_LAYOUT_COL == 1);
        TB_CHECK(!strcmp(TB_EXT_PROBLEM_SIZE, "tb.problem_size") && !strcmp(TB_EXT_OPS, "tb.ops"));
    }
    TB_CASE("abi-2.2", "a problem zeroed and sized by the host: an attention member reads 0") {
        tb_problem p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.op = TB_OP_ATTENTION_FWD;
        p.attention.heads = 32;
        p.attention.heads_kv = 8;
        TB_CHECK(p.struct_size >= TB_PROBLEM_G2_SIZE);
        TB_CHECK(p.attention.causal == 0 && p.attention.layout == TB_ATTN_BHSD);
        TB_CHECK(p.attention.heads % p.attention.heads_kv == 0);
    }
    return tb_test_done();
}
