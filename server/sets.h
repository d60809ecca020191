/* sets.h - the shape sets a leaderboard ranks on: results/shapes/NAME.txt files read from a
 * directory at start (the same files the CLI's --shapes names), each a list of shapes of one
 * operation: GEMM's MxNxK[xB], or attention's BxHxSqxSkxD[:causal][:hkv=N] (issue 33), read by
 * the op seam's own parsers (common/op.h). A set never mixes operations, so neither does a
 * board ranked on it. */
#ifndef TBS_SETS_H
#define TBS_SETS_H
#include <stddef.h>
#include <stdint.h>
#include "common/op.h"

typedef tb_shape tbs_shape;   /* op, sizes and label, as the CLI reads the token */
typedef struct tbs_set {
    char name[64];
    uint32_t op;              /* the tb_op of every shape of the set (TB_OP_GEMM when empty) */
    tbs_shape *s; size_t n;
} tbs_set;
typedef struct tbs_sets { tbs_set *v; size_t n; } tbs_sets;

/* Read every NAME.txt of dir (names of letters, digits, _ and -), sorted by name. 0, or -1
 * with msg (a line that is not a shape, with the op's own reason; a set of two operations). */
int tbs_sets_load(const char *dir, tbs_sets *out, char *msg, size_t len);
const tbs_set *tbs_sets_find(const tbs_sets *sets, const char *name);
void tbs_sets_free(tbs_sets *sets);
/* 1 when a and b are the same shape: one op, every size equal (the labels aside). */
int tbs_shape_same(const tbs_shape *a, const tbs_shape *b);
/* The canonical token of s ("4096x4096x4096", "4x32x4096x4096x128:causal:hkv=8"), as snprintf. */
int tbs_shape_text(const tbs_shape *s, char *buf, size_t len);
/* The op's name of a set ("gemm", "attention_fwd"). */
const char *tbs_set_op_name(const tbs_set *set);
#endif
