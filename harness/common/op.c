/* op.c - the op seam's table and its lookups (see op.h). Adding an operation is a file of its
 * own holding its tb_op_desc, and one line here. */
#include "common/op.h"
#include <math.h>
#include <string.h>

static const tb_op_desc *const table[] = { &tb_op_gemm, &tb_op_attention_fwd };
#define NOPS (sizeof table / sizeof *table)

size_t tb_op_count(void) { return NOPS; }

const tb_op_desc *tb_op_at(size_t i) { return i < NOPS ? table[i] : NULL; }

const tb_op_desc *tb_op_find(uint32_t op)
{
    for (size_t i = 0; i < NOPS; i++)
        if (table[i]->op == op) return table[i];
    return NULL;
}

const tb_op_desc *tb_op_named(const char *name)
{
    for (size_t i = 0; name && i < NOPS; i++)
        if (strcmp(table[i]->name, name) == 0) return table[i];
    return NULL;
}

const tb_op_desc *tb_op_of_shape(const tb_shape *s)
{
    return tb_op_find(s->op ? s->op : TB_OP_GEMM);
}

const tb_op_desc *tb_op_for_token(const char *tok)
{
    for (size_t i = 0; i < NOPS; i++)
        if (table[i] != &tb_op_gemm && table[i]->shape_claims(tok)) return table[i];
    return &tb_op_gemm;
}

int tb_op_dims(const char *s, size_t n, int64_t *v, int cap, int64_t limit)
{
    size_t i = 0;
    int nv = 0;
    if (n == 0) return -1;
    while (i < n) {
        if (nv == cap) return -1;
        int neg = 0;
        if (s[i] == '-') { neg = 1; i++; }
        if (i == n || s[i] < '0' || s[i] > '9') return -1;
        int64_t x = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (x > limit * 10) return -2;
            x = x * 10 + (s[i++] - '0');
        }
        v[nv++] = neg ? -x : x;
        if (i < n && (s[i] == 'x' || s[i] == 'X')) {
            if (++i == n) return -1;
        } else if (i < n) return -1;
    }
    return nv;
}

size_t tb_dtype_size(uint32_t t)
{
    switch (t) {
    case TB_DTYPE_E4M3: case TB_DTYPE_E5M2: case TB_DTYPE_I8: return 1;
    case TB_DTYPE_BF16: case TB_DTYPE_F16: return 2;
    case TB_DTYPE_F32: case TB_DTYPE_I32: return 4;
    case TB_DTYPE_F64: return 8;
    default: return 0;
    }
}

double tb_shape_flops(const tb_shape *s)
{
    const tb_op_desc *d = tb_op_of_shape(s);
    return d ? d->shape_flops(s) : NAN;
}
