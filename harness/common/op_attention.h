/* op_attention.h - attention forward's entry in the op seam (op.h) and the counts behind it:
 * the BxHxSqxSkxD[:causal][:hkv=N] token, the (query, key) pairs a causal mask leaves, the
 * work counted and the compulsory traffic (docs/method.md, "Attention: the work counted"),
 * and the ABI problem a shape stands for (variant.h, growth 2). */
#ifndef TB_OP_ATTENTION_H
#define TB_OP_ATTENTION_H
#include "common/op.h"
#include <stdint.h>

/* The bounds of an attention token: past them it is a typo, not a model (docs/cli.md). */
#define TB_ATTN_MAX_BATCH (1ll << 16)
#define TB_ATTN_MAX_HEADS 1024ll
#define TB_ATTN_MAX_SEQ (1ll << 20)
#define TB_ATTN_MAX_HEAD_DIM 512ll
#define TB_ATTN_MAX_ELEMS (1ll << 36)   /* of one tensor: 128 GiB of BF16 */

/* The (query row, key) pairs the softmax sees in one head: seq_q * seq_k, or with the causal
 * mask (aligned to the bottom right: row i sees keys j <= i + seq_k - seq_q)
 *     sum_{i=0}^{seq_q-1} clamp(i + 1 + seq_k - seq_q, 0, seq_k)
 *   = seq_q * seq_k - seq_q * (seq_q - 1) / 2        when seq_q <= seq_k
 *   = seq_k * (seq_k + 1) / 2                        when seq_q >  seq_k (rows with no key)
 * Exact in int64 for sequences up to 2^31; 0 for a non-positive length. */
int64_t tb_attn_pairs(int64_t seq_q, int64_t seq_k, int causal);

/* 4 * batch * heads * head_dim * tb_attn_pairs(...): two FLOP per multiply-add of S = QK^T
 * and of O = PV over the pairs the mask leaves; the softmax's exponentials are not counted. */
double tb_attn_flops(const tb_attention *a);

/* Compulsory traffic: Q, K and V read once (K and V at heads_kv heads), O and LSE written
 * once; TB_EUSAGE for a type without a size. */
int tb_attn_bytes(const tb_attention *a, double *read, double *written);

/* The problem the worker will build for s (growth 2): BF16 Q, K, V, O; FP32 accumulation and
 * LSE; Q, K, V and O packed in layout (the strides derived from it), LSE [B][H][Sq]; scale
 * as given, or 1/sqrt(head_dim) when scale <= 0. out is zeroed first and sized as the host's
 * tb_problem. */
void tb_attn_problem(const tb_attn_shape *s, tb_attn_layout layout, double scale, tb_problem *out);
#endif
