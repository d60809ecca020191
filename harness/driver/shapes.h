/* shapes.h - the sweep's shapes: lists of shape tokens ("MxNxK[xB]" for GEMM,
 * "BxHxSqxSkxD[:causal][:hkv=N]" for attention), shape files, and named sets
 * (results/shapes/NAME.txt). Pure parsing; no GPU. A token's syntax is its operation's
 * (common/op.h, the op seam); this module owns the lists, the files and the sets. */
#ifndef TB_SHAPES_H
#define TB_SHAPES_H
#include "common/op.h"   /* tb_shape */
#include <stddef.h>
#include <stdint.h>

typedef struct tb_shape_list {
    tb_shape *v;
    size_t n, cap;
    size_t *set, set_slots;   /* the duplicate set (private to shapes.c) */
} tb_shape_list;

/* The bounds on what is read (docs/cli.md): a shape file of at most TB_SHAPES_MAX_BYTES, lines
 * of at most TB_SHAPES_MAX_LINE bytes, at most TB_SHAPES_MAX distinct shapes in a list. */
#define TB_SHAPES_MAX_BYTES (16 << 20)
#define TB_SHAPES_MAX_LINE 4096
#define TB_SHAPES_MAX 100000

/* Parse one token: GEMM's "MxNxK" or "MxNxKxB", or attention's "BxHxSqxSkxD" with options
 * ":causal" and ":hkv=N" (a token with a ':' or five sizes is attention's). Sets out->op.
 * TB_OK or TB_EUSAGE with one line naming the token ("malformed shape 'x' (want ...)", "shape
 * 'x' has a non-positive size", "shape 'x' is too large", "attention shape 'x': hkv=3 does not
 * divide the 32 query heads", ...). */
int tb_shape_parse(const char *tok, tb_shape *out, char *msg, size_t len);

/* TB_OK when every shape of l is a GEMM's; else TB_EUSAGE and "attention shapes: `CMD`
 * measures GEMM only for now (issue 33)". The measuring commands that do not take attention
 * yet (gate, search) ask it before anything runs or is written. */
int tb_shapes_gemm_only(const tb_shape_list *l, const char *cmd, char *msg, size_t len);
/* Non-zero when some shape of l is not a GEMM's (sweep refuses the GEMM-only options then). */
int tb_shapes_any_attention(const tb_shape_list *l);

/* Append the shapes of spec: a comma-separated list whose items are shapes, names of sets
 * in sets_dir, or paths of shape files (one shape per line, an optional label after it,
 * '#' starts a comment). A path must look like one (hold a '/' or a '.': ./square); a bare
 * name is a set, and a name that is both a set and a file here is refused. An empty item, a
 * file over the bounds, a NUL byte or a bad line is an error naming the file and the line.
 * Duplicates (the same operation and sizes, the label aside) are dropped, first kept, in O(1)
 * each. */
int tb_shapes_add(tb_shape_list *l, const char *spec, const char *sets_dir, char *msg, size_t len);

void tb_shapes_free(tb_shape_list *l);
#endif
