/* test_op.c - harness/common/op.c, op_gemm.c, op_attention.c: the op seam's table, its lookups,
 * and each operation's counts. The causal pair count is checked against a loop over the
 * element-level mask (docs/method.md, "Attention: the work counted"); the packed strides of
 * both layouts against the index they must give. No GPU. */
#include "tb_test.h"
#include "common/op.h"
#include "common/op_attention.h"
#include "common/tb.h"
#include <math.h>
#include <stdlib.h>

/* the mask, element by element: row i sees key j when j <= i + seq_k - seq_q */
static int64_t pairs_by_loop(int64_t sq, int64_t sk, int causal)
{
    int64_t n = 0;
    for (int64_t i = 0; i < sq; i++)
        for (int64_t j = 0; j < sk; j++)
            n += !causal || j <= i + sk - sq;
    return n;
}

/* every (b, h, s, d) of a tensor maps to a distinct offset in [0, count): a packed layout */
static int packed_bijection(const int64_t st[3], int64_t b, int64_t h, int64_t s, int64_t d)
{
    const int64_t n = b * h * s * d;
    unsigned char *seen = calloc((size_t)n, 1);
    int ok = seen != NULL;
    for (int64_t ib = 0; ok && ib < b; ib++)
        for (int64_t ih = 0; ok && ih < h; ih++)
            for (int64_t is = 0; ok && is < s; is++)
                for (int64_t id = 0; ok && id < d; id++) {
                    int64_t at = ib * st[0] + ih * st[1] + is * st[2] + id;
                    ok = at >= 0 && at < n && !seen[at];
                    if (ok) seen[at] = 1;
                }
    free(seen);
    return ok;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    TB_CASE("op-1.1", "the table: both operations, found by op, by name, by token") {
        TB_CHECK(tb_op_count() == 2 && tb_op_at(0) == &tb_op_gemm && tb_op_at(1) == &tb_op_attention_fwd);
        TB_CHECK(tb_op_at(2) == NULL);
        TB_CHECK(tb_op_find(TB_OP_GEMM) == &tb_op_gemm && tb_op_find(TB_OP_ATTENTION_FWD) == &tb_op_attention_fwd);
        TB_CHECK(tb_op_find(0) == NULL && tb_op_find(99) == NULL);
        TB_CHECK(tb_op_named("gemm") == &tb_op_gemm && tb_op_named("attention_fwd") == &tb_op_attention_fwd);
        TB_CHECK(tb_op_named("conv") == NULL && tb_op_named(NULL) == NULL);
        TB_CHECK(tb_op_for_token("4096x4096x4096") == &tb_op_gemm);
        TB_CHECK(tb_op_for_token("8x16x32x4") == &tb_op_gemm);
        TB_CHECK(tb_op_for_token("1x32x4096x4096x128") == &tb_op_attention_fwd);
        TB_CHECK(tb_op_for_token("1x2x3:causal") == &tb_op_attention_fwd);
        TB_CHECK(tb_op_for_token("1x2x3x4x5x6") == &tb_op_gemm);   /* GEMM's message names both */
        for (size_t i = 0; i < tb_op_count(); i++) {   /* every entry complete */
            const tb_op_desc *d = tb_op_at(i);
            TB_CHECK(d->name && d->shape_syntax && d->shape_claims && d->shape_parse && d->shape_text &&
                     d->shape_flops && d->flops && d->bytes && d->problem_size >= TB_PROBLEM_V1_SIZE);
        }
        TB_CHECK(tb_op_gemm.problem_size == TB_PROBLEM_V1_SIZE);
        TB_CHECK(tb_op_attention_fwd.problem_size == TB_PROBLEM_G2_SIZE);
    }
    TB_CASE("op-1.2", "tb_op_dims: sizes, signs, malformed, too large") {
        int64_t v[5];
        TB_CHECK(tb_op_dims("1x22x333", 8, v, 5, 1000) == 3 && v[0] == 1 && v[1] == 22 && v[2] == 333);
        TB_CHECK(tb_op_dims("1X-2", 4, v, 5, 1000) == 2 && v[1] == -2);
        TB_CHECK(tb_op_dims("1x22x333", 4, v, 5, 1000) == 2);   /* only n bytes read */
        const char *bad[] = { "", "x1", "1x", "1xx2", "a", "1x2y", "-", "1 " };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
            TB_CHECK(tb_op_dims(bad[i], strlen(bad[i]), v, 5, 1000) == -1);
        TB_CHECK(tb_op_dims("1x2x3x4x5x6", 11, v, 5, 1000) == -1);   /* more than cap */
        TB_CHECK(tb_op_dims("99999999", 8, v, 5, 1000) == -2);
        TB_CHECK(tb_dtype_size(TB_DTYPE_BF16) == 2 && tb_dtype_size(TB_DTYPE_F32) == 4 &&
                 tb_dtype_size(TB_DTYPE_E4M3) == 1 && tb_dtype_size(TB_DTYPE_F64) == 8 && tb_dtype_size(0) == 0);
    }
    TB_CASE("op-2.1", "GEMM: 2mnk·batch, and the compulsory bytes of A, B, (C), D") {
        tb_shape s;
        TB_CHECK(tb_op_gemm.shape_parse("4096x2048x512x3", &s, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_shape_flops(&s) == 2.0 * 4096 * 2048 * 512 * 3);
        tb_shape hand = { .m = 2, .n = 3, .k = 4, .batch = 1 };   /* op 0: read as GEMM */
        TB_CHECK(tb_shape_flops(&hand) == 48.0);
        tb_problem p;
        memset(&p, 0, sizeof p);
        p.struct_size = sizeof p;
        p.op = TB_OP_GEMM;
        p.gemm.m = 64; p.gemm.n = 32; p.gemm.k = 16; p.gemm.batch = 2;
        p.gemm.a_type = p.gemm.b_type = p.gemm.c_type = p.gemm.d_type = TB_DTYPE_BF16;
        TB_CHECK(tb_op_gemm.flops(&p) == 2.0 * 64 * 32 * 16 * 2);
        double r = 0, w = 0;
        TB_CHECK(tb_op_gemm.bytes(&p, &r, &w) == TB_OK);
        TB_CHECK(r == 2.0 * (64 * 16 * 2 + 16 * 32 * 2) && w == 2.0 * 64 * 32 * 2);
        p.gemm.beta = 1.0;   /* C read too */
        TB_CHECK(tb_op_gemm.bytes(&p, &r, &w) == TB_OK && r == 2.0 * (64 * 16 * 2 + 16 * 32 * 2 + 64 * 32 * 2));
        p.gemm.a_type = p.gemm.b_type = TB_DTYPE_E4M3;
        p.gemm.beta = 0;
        TB_CHECK(tb_op_gemm.bytes(&p, &r, &w) == TB_OK && r == 2.0 * (64 * 16 + 16 * 32));
        TB_CHECK(isnan(tb_op_attention_fwd.flops(&p)));   /* not attention's problem */
        TB_CHECK(tb_op_attention_fwd.bytes(&p, &r, &w) == TB_EUSAGE);
    }
    TB_CASE("op-3.1", "causal pairs: the closed form equals the loop over the element-level mask") {
        int bad = 0;
        for (int64_t sq = 1; sq <= 40; sq++)
            for (int64_t sk = 1; sk <= 40; sk++)
                for (int c = 0; c < 2; c++)
                    if (tb_attn_pairs(sq, sk, c) != pairs_by_loop(sq, sk, c)) {
                        if (bad++ < 5) printf("  sq %lld sk %lld causal %d: %lld, the loop %lld\n",
                                              (long long)sq, (long long)sk, c, (long long)tb_attn_pairs(sq, sk, c),
                                              (long long)pairs_by_loop(sq, sk, c));
                    }
        TB_CHECK(bad == 0);
        TB_CHECK(pairs_by_loop(1000, 1000, 1) == tb_attn_pairs(1000, 1000, 1));
        TB_CHECK(pairs_by_loop(333, 1000, 1) == tb_attn_pairs(333, 1000, 1));
        TB_CHECK(tb_attn_pairs(0, 5, 0) == 0 && tb_attn_pairs(5, 0, 1) == 0);
    }
    TB_CASE("op-3.2", "causal pairs, the cases docs/method.md states") {
        const int64_t s = 4096;
        TB_CHECK(tb_attn_pairs(s, s, 1) == s * (s + 1) / 2);           /* half plus the diagonal */
        TB_CHECK(tb_attn_pairs(s, s, 0) == s * s);
        TB_CHECK(tb_attn_pairs(1, 16384, 1) == 16384);                 /* decode: every key */
        TB_CHECK(tb_attn_pairs(512, 8192, 1) == 4063488);   /* docs/method.md's figure */
        TB_CHECK(tb_attn_pairs(16384, 16384, 1) == 134225920);         /* 2^27 + 2^13 */
    }
    TB_CASE("op-3.3", "attention FLOPs: 4·B·H·D·pairs, through the shape and the problem alike") {
        struct { const char *tok; double want; } c[] = {
            { "4x32x4096x4096x128:hkv=8", 4.0 * 4 * 32 * 128 * 4096.0 * 4096 },          /* 1.0995e13 */
            { "4x32x4096x4096x128:causal:hkv=8", 4.0 * 4 * 32 * 128 * (4096.0 * 4097 / 2) },
            { "1x64x16384x16384x128:causal:hkv=8", 4.0 * 64 * 128 * 134225920.0 },
            { "4x32x512x8192x128:causal:hkv=8", 4.0 * 4 * 32 * 128 * (512.0 * 8192 - 512 * 511 / 2) },
            { "2x8x1x16384x64:hkv=1", 4.0 * 2 * 8 * 64 * 16384 },
        };
        for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
            tb_shape s;
            tb_problem p;
            TB_CHECK(tb_op_attention_fwd.shape_parse(c[i].tok, &s, msg, sizeof msg) == TB_OK);
            TB_CHECK(tb_shape_flops(&s) == c[i].want);
            tb_attn_problem(&s.attn, TB_ATTN_BHSD, 0, &p);
            TB_CHECK(tb_op_attention_fwd.flops(&p) == c[i].want);
            TB_CHECK(tb_op_find(p.op)->flops(&p) == c[i].want);
        }
        /* causal over non-causal: (S + 1) / (2 S), "half plus the diagonal" */
        tb_shape a, b;
        TB_CHECK(tb_op_attention_fwd.shape_parse("1x1x4096x4096x128:causal", &a, msg, sizeof msg) == TB_OK);
        TB_CHECK(tb_op_attention_fwd.shape_parse("1x1x4096x4096x128", &b, msg, sizeof msg) == TB_OK);
        TB_CHECK(fabs(tb_shape_flops(&a) / tb_shape_flops(&b) - 4097.0 / 8192.0) < 1e-15);
    }
    TB_CASE("op-3.4", "attention bytes: Q once, K and V at heads_kv, O and the FP32 LSE once") {
        tb_shape s;
        tb_problem p;
        double r = 0, w = 0;
        TB_CHECK(tb_op_attention_fwd.shape_parse("2x32x1024x2048x128:hkv=8", &s, msg, sizeof msg) == TB_OK);
        tb_attn_problem(&s.attn, TB_ATTN_BHSD, 0, &p);
        TB_CHECK(tb_op_attention_fwd.bytes(&p, &r, &w) == TB_OK);
        TB_CHECK(r == 2.0 * 32 * 1024 * 128 * 2 + 2.0 * 8 * 2048 * 128 * 2 * 2);
        TB_CHECK(w == 2.0 * 32 * 1024 * 128 * 2 + 2.0 * 32 * 1024 * 4);
        TB_CHECK(tb_op_gemm.bytes(&p, &r, &w) == TB_EUSAGE && isnan(tb_op_gemm.flops(&p)));
        p.struct_size = TB_PROBLEM_G1_SIZE;   /* a problem that does not reach attention */
        TB_CHECK(isnan(tb_op_attention_fwd.flops(&p)) && tb_op_attention_fwd.bytes(&p, &r, &w) == TB_EUSAGE);
    }
    TB_CASE("op-3.5", "the problem of a shape: types, scale, causal, packed strides in both layouts") {
        tb_shape s;
        tb_problem p;
        TB_CHECK(tb_op_attention_fwd.shape_parse("2x6x5x7x8:causal:hkv=3", &s, msg, sizeof msg) == TB_OK);
        tb_attn_problem(&s.attn, TB_ATTN_BHSD, 0, &p);
        const tb_attention *a = &p.attention;
        TB_CHECK(p.struct_size == TB_PROBLEM_G2_SIZE && p.op == TB_OP_ATTENTION_FWD);
        TB_CHECK(a->batch == 2 && a->heads == 6 && a->heads_kv == 3 && a->seq_q == 5 && a->seq_k == 7 &&
                 a->head_dim == 8 && a->causal == 1 && a->layout == TB_ATTN_BHSD);
        TB_CHECK(a->q_type == TB_DTYPE_BF16 && a->k_type == TB_DTYPE_BF16 && a->v_type == TB_DTYPE_BF16 &&
                 a->o_type == TB_DTYPE_BF16 && a->acc_type == TB_DTYPE_F32 && a->lse_type == TB_DTYPE_F32);
        TB_CHECK(fabs(a->scale - 1.0 / sqrt(8.0)) < 1e-15);
        TB_CHECK(a->q_stride[2] == 8 && a->q_stride[1] == 5 * 8 && a->q_stride[0] == 6 * 5 * 8);
        TB_CHECK(a->k_stride[2] == 8 && a->k_stride[1] == 7 * 8 && a->k_stride[0] == 3 * 7 * 8);
        TB_CHECK(a->lse_stride[1] == 5 && a->lse_stride[0] == 6 * 5);
        TB_CHECK(packed_bijection(a->q_stride, 2, 6, 5, 8) && packed_bijection(a->o_stride, 2, 6, 5, 8));
        TB_CHECK(packed_bijection(a->k_stride, 2, 3, 7, 8) && packed_bijection(a->v_stride, 2, 3, 7, 8));
        tb_attn_problem(&s.attn, TB_ATTN_BSHD, 0.25, &p);
        TB_CHECK(a->layout == TB_ATTN_BSHD && a->scale == 0.25);
        TB_CHECK(a->q_stride[1] == 8 && a->q_stride[2] == 6 * 8 && a->q_stride[0] == 5 * 6 * 8);
        TB_CHECK(a->k_stride[1] == 8 && a->k_stride[2] == 3 * 8 && a->k_stride[0] == 7 * 3 * 8);
        TB_CHECK(packed_bijection(a->q_stride, 2, 6, 5, 8) && packed_bijection(a->o_stride, 2, 6, 5, 8));
        TB_CHECK(packed_bijection(a->k_stride, 2, 3, 7, 8) && packed_bijection(a->v_stride, 2, 3, 7, 8));
        /* the layouts' orders, as variant.h states them */
        TB_CHECK(a->q_stride[0] >= a->q_stride[2] && a->q_stride[2] >= a->q_stride[1]);
        tb_attn_problem(&s.attn, TB_ATTN_BHSD, 0, &p);
        TB_CHECK(a->q_stride[0] >= a->q_stride[1] && a->q_stride[1] >= a->q_stride[2]);
        TB_CHECK(a->reserved[0] == 0 && a->reserved[3] == 0);
    }
    return tb_test_done();
}
