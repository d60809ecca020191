/* op.h - the op seam: one table entry per operation the harness measures (issue 33).
 *
 * Everything that differs between operations and that both processes, or any reader of the
 * store, need is reached through a tb_op_desc: the operation's name, its shape syntax and its
 * parser, the work counted (FLOPs, docs/method.md) and the compulsory traffic (bytes). An
 * operation is a file of its own (common/op_gemm.c, common/op_attention.c) holding its entry;
 * this module holds the table and the lookups. The shape a command line or a shape file names
 * (tb_shape) lives here too, because the op's parser fills it: driver/shapes.c owns the lists,
 * files and sets, and asks the table which operation a token belongs to.
 *
 * A stored problem (record.h) reaches its entry through common/problem.h. What is not behind
 * the table yet (docs/architecture.md, "The op seam"): the worker's buffers and input
 * generation, the references, the validation rule. Those sides cannot live in common/ (CUDA);
 * each will hold a table of its own keyed by the same tb_op, with an entry in the op's files.
 *
 * Pure C: no CUDA, no SQLite, no allocation.
 */
#ifndef TB_OP_H
#define TB_OP_H
#include "tilebench/variant.h"
#include <stddef.h>
#include <stdint.h>

/* An attention shape: BxHxSqxSkxD[:causal][:hkv=N]. */
typedef struct tb_attn_shape {
    int64_t batch, heads, heads_kv, seq_q, seq_k, head_dim;
    int     causal;
} tb_attn_shape;

/* One shape of a sweep: an operation and its sizes. op is a tb_op; 0 (a GEMM shape written
 * with positional initialisers, { m, n, k, batch, label }) reads as TB_OP_GEMM. The members
 * of the other operations are zero in a GEMM shape, and m, n, k, batch are zero in the
 * others', so two shapes are the same exactly when every member but the label is. */
typedef struct tb_shape {
    int64_t m, n, k, batch;     /* TB_OP_GEMM */
    char    label[64];
    uint32_t op;
    tb_attn_shape attn;         /* TB_OP_ATTENTION_FWD */
} tb_shape;

typedef struct tb_op_desc {
    uint32_t    op;             /* a tb_op */
    const char *name;           /* "gemm", "attention_fwd": the store's problems.op */
    const char *shape_syntax;   /* "MxNxK[xB]": for messages and help */
    uint32_t    problem_size;   /* the least tb_problem layout holding this op's member: a
                                   variant built against a smaller one is never offered it */
    /* 1 when tok has this operation's form (a shape token of no operation is GEMM's) */
    int    (*shape_claims)(const char *tok);
    /* tok into *out (zeroed first, op set): TB_OK or TB_EUSAGE with a one-line message
       naming tok */
    int    (*shape_parse)(const char *tok, tb_shape *out, char *msg, size_t len);
    /* the canonical token of s ("4096x4096x4096", "1x32x4096x4096x128:causal:hkv=8"); the
       length it needs, as snprintf */
    int    (*shape_text)(const tb_shape *s, char *buf, size_t len);
    double (*shape_flops)(const tb_shape *s);   /* the work counted, in FLOP */
    /* the work counted for a problem of this op (docs/method.md); NaN when p is not one */
    double (*flops)(const tb_problem *p);
    /* compulsory DRAM traffic: every input read once, every output written once, in bytes;
       TB_OK, or TB_EUSAGE when p is not this op's problem or names an unknown type */
    int    (*bytes)(const tb_problem *p, double *read, double *written);
    /* the shipped variant `gate` measures on both sides against a baseline, to cancel the
       clock between runs, unless --control names another (docs/gating.md) */
    const char *gate_control;
} tb_op_desc;

/* The entries, one per file (op_gemm.c, op_attention.c). */
extern const tb_op_desc tb_op_gemm;
extern const tb_op_desc tb_op_attention_fwd;

size_t tb_op_count(void);
const tb_op_desc *tb_op_at(size_t i);               /* table order; NULL past the end */
const tb_op_desc *tb_op_find(uint32_t op);          /* NULL for an op the harness lacks */
const tb_op_desc *tb_op_named(const char *name);    /* NULL for an unknown name */
const tb_op_desc *tb_op_of_shape(const tb_shape *s);   /* op 0 reads as GEMM; NULL unknown */
/* The operation whose form tok has: the first entry after GEMM that claims it, else GEMM. */
const tb_op_desc *tb_op_for_token(const char *tok);

/* For the operations' parsers: the 'x'-separated integers of s[0, n) ("4096x4096x512") into
 * v[0, cap). Returns how many, -1 when malformed (not digits, an empty field, a trailing 'x',
 * more than cap), -2 when one is past limit * 10 (too large to read). A '-' sign is read, so
 * a parser can say "non-positive" rather than "malformed". */
int tb_op_dims(const char *s, size_t n, int64_t *v, int cap, int64_t limit);

/* Bytes of one element of t (1, 2, 4 or 8); 0 for a value no tb_dtype has. */
size_t tb_dtype_size(uint32_t t);
/* The work counted for s, through its op's entry; NaN for an unknown op. */
double tb_shape_flops(const tb_shape *s);
#endif
