/* problem.h - the op seam's record side: a stored problem (record.h's tb_problem_info) and
 * what it stands for, per operation. The shape (op.h's tb_shape, through which its op entry
 * prints and counts it), the record of an attention shape (what driver/sweep.c stores), and the
 * ABI problem of an attention record (variant.h, growth 2: what the job carries). The GEMM
 * record and its ABI problem stay with the sweep (driver/sweep.c), unchanged. show, export
 * and the roofline read records through here, so a record of an op they do not know is said,
 * never read as a GEMM of zeros.
 *
 * Pure C: no CUDA, no SQLite, no allocation.
 */
#ifndef TB_PROBLEM_H
#define TB_PROBLEM_H
#include "common/op.h"
#include "common/record.h"
#include "tilebench/variant.h"
#include <stddef.h>

#define TB_ATTN_DTYPES "bf16,bf16,bf16,bf16,f32"   /* Q,K,V,O,accumulate; LSE is f32 */

/* The op entry of p, by its name; NULL for a name this build lacks. */
const tb_op_desc *tb_problem_info_op(const tb_problem_info *p);
/* 1 when p is an attention forward problem, 0 otherwise. */
int tb_problem_info_is_attention(const tb_problem_info *p);

/* "bhsd" or "bshd" for a tb_attn_layout; NULL for another value. */
const char *tb_attn_layout_name(uint32_t layout);
/* The layout a name stands for: TB_OK, or TB_EUSAGE for a name that is neither. */
int tb_attn_layout_parse(const char *name, tb_attn_layout *out);

/* The record of attention shape s (s->op TB_OP_ATTENTION_FWD): op "attention_fwd", its sizes
 * and causal flag, dtypes TB_ATTN_DTYPES, layouts the layout's name, softmax_scale scale, or
 * 1/sqrt(head_dim) when scale <= 0, the label; every GEMM field 0. out is zeroed first. */
void tb_problem_info_attention(const tb_shape *s, tb_attn_layout layout, double scale,
                               tb_problem_info *out);

/* The shape p stands for: its op and sizes, its label. TB_OK, or TB_EUSAGE with a message
 * for an op this build lacks. */
int tb_problem_info_shape(const tb_problem_info *p, tb_shape *out, char *msg, size_t len);

/* The canonical text of p's shape, as its op writes it ("4096x4096x4096", "4096x4096x512x8",
 * "1x32x4096x4096x128:causal:hkv=8"); "op:NAME" for an op this build lacks. The length it
 * needs, as snprintf. */
int tb_problem_info_text(const tb_problem_info *p, char *buf, size_t len);

/* The ABI problem of an attention record (struct_size sizeof(tb_problem), op
 * TB_OP_ATTENTION_FWD): tb_attn_problem of its shape, layout and scale (Q, K, V and O packed
 * in the layout, LSE [B][H][Sq]), the types its dtypes name. TB_OK, or TB_EUSAGE with a message
 * when p is not an attention problem or names a layout or type this build lacks. */
int tb_problem_info_attention_abi(const tb_problem_info *p, tb_problem *out, char *msg,
                                  size_t len);

/* A dtype by its name in dtypes ("bf16", "f16", "f32", "f64", "e4m3", "e5m2", "i8", "i32"),
 * the n bytes at name; 0 for none. */
uint32_t tb_dtype_named(const char *name, size_t n);
#endif
