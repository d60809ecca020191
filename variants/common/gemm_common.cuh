/* gemm_common.cuh - small helpers shared by the GEMM variant families.
 *
 * Owns: the checks every BF16 GEMM variant makes in supports() (operation, data types,
 * shape; the layout, for the families that read one layout per variant), the one-line reason
 * writer, element addressing for the two layouts, and the query boilerplate that names a
 * parametric variant on first use. It leaves kernels,
 * tiling and launch policy to each family. Includes only the public ABI header and CUDA
 * headers; everything is static or inline, so each variant library gets its own copy and
 * exports nothing from here.
 */
#ifndef TB_VARIANTS_GEMM_COMMON_CUH
#define TB_VARIANTS_GEMM_COMMON_CUH

#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tilebench/variant.h"

namespace tbv {

/* Write a one-line reason into why (may be NULL or zero length) and return 0, so that a
 * supports() check reads `if (bad) return tbv::no(why, len, "k must be a multiple of 8");`. */
static inline int no(char *why, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline int no(char *why, size_t len, const char *fmt, ...)
{
    if (why && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, len, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* The checks every BF16 GEMM variant shares: a tb_problem large enough to hold the GEMM
 * member, op GEMM, BF16 A/B/C/D with FP32 accumulation, m, n, k, batch >= 1, and leading
 * dimensions that cover a row or column of each matrix in its layout. Returns 1, or 0 with
 * the reason in why. */
static inline int bf16_gemm_ok(const tb_problem *p, char *why, size_t len)
{
    if (!p || p->struct_size < offsetof(tb_problem, gemm) + sizeof(tb_gemm))
        return no(why, len, "problem struct too small for a gemm");
    if (p->op != TB_OP_GEMM) return no(why, len, "op is not gemm");
    const tb_gemm *g = &p->gemm;
    if (g->a_type != TB_DTYPE_BF16 || g->b_type != TB_DTYPE_BF16 ||
        g->c_type != TB_DTYPE_BF16 || g->d_type != TB_DTYPE_BF16)
        return no(why, len, "a, b, c and d must all be bf16");
    if (g->acc_type != TB_DTYPE_F32) return no(why, len, "accumulation must be f32");
    if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1)
        return no(why, len, "m, n, k and batch must be at least 1");
    const tb_layout ls[4] = { g->a_layout, g->b_layout, g->c_layout, g->d_layout };
    for (int i = 0; i < 4; i++)
        if (ls[i] != TB_LAYOUT_ROW && ls[i] != TB_LAYOUT_COL)
            return no(why, len, "unknown layout %d for %c", (int)ls[i], "abcd"[i]);
    /* The extent a leading dimension must cover: the number of columns for ROW, of rows
     * for COL. */
    if (g->lda < (g->a_layout == TB_LAYOUT_ROW ? g->k : g->m)) return no(why, len, "lda too small");
    if (g->ldb < (g->b_layout == TB_LAYOUT_ROW ? g->n : g->k)) return no(why, len, "ldb too small");
    if (g->ldd < (g->d_layout == TB_LAYOUT_ROW ? g->n : g->m)) return no(why, len, "ldd too small");
    if (g->beta != 0.0 && g->ldc < (g->c_layout == TB_LAYOUT_ROW ? g->n : g->m))
        return no(why, len, "ldc too small");
    return 1;
}

/* bf16_gemm_ok and one layout of A and B (BLAS letters, A then B: A ROW is "t", COL "n"; B
 * COL is "n", ROW "t"), D (and C when beta != 0) row-major, batch 1: what the Hopper families
 * read (wgmma: each variant its own layout; wgmma_auto and skinny: tn). */
static inline int bf16_gemm_layout_ok(const tb_problem *p, tb_layout a, tb_layout b, char *why,
                                      size_t len)
{
    if (!bf16_gemm_ok(p, why, len)) return 0;
    const tb_gemm *g = &p->gemm;
    if (g->a_layout != a || g->b_layout != b || g->d_layout != TB_LAYOUT_ROW)
        return no(why, len, "needs layout %c%c: a %s, b %s, d row-major",
                  a == TB_LAYOUT_ROW ? 't' : 'n', b == TB_LAYOUT_COL ? 'n' : 't',
                  a == TB_LAYOUT_ROW ? "row-major" : "column-major",
                  b == TB_LAYOUT_ROW ? "row-major" : "column-major");
    if (g->beta != 0.0 && g->c_layout != TB_LAYOUT_ROW)
        return no(why, len, "c must be row-major");
    if (g->batch != 1) return no(why, len, "batch 1 only");
    return 1;
}

/* bf16_gemm_layout_ok for "tn": A row-major, B column-major (both K-major). */
static inline int bf16_gemm_tn_ok(const tb_problem *p, char *why, size_t len)
{
    return bf16_gemm_layout_ok(p, TB_LAYOUT_ROW, TB_LAYOUT_COL, why, len);
}

/* m * n * k as a double (exact up to 2^53), for the size limits of the slow baselines. */
static inline double gemm_volume(const tb_gemm *g)
{
    return (double)g->m * (double)g->n * (double)g->k;
}

/* Element (i, j) of a matrix is at i * rs + j * cs: rs = ld, cs = 1 for ROW; rs = 1,
 * cs = ld for COL. */
struct strides {
    int64_t rs, cs;
};

static inline strides strides_of(tb_layout l, int64_t ld)
{
    strides s;
    s.rs = l == TB_LAYOUT_ROW ? ld : 1;
    s.cs = l == TB_LAYOUT_ROW ? 1 : ld;
    return s;
}

/* Return the error the launch just queued (or 0), as launch() reports it. */
/* A copy of the host's problem that reads no byte beyond what the host built (its
 * struct_size, the growth rule of variant.h): fields a smaller (older) host did not have take
 * their defaults (scales 1). */
static inline tb_problem problem_copy(const tb_problem *p)
{
    tb_problem q;
    memset(&q, 0, sizeof q);
    const size_t n = p->struct_size < sizeof q ? p->struct_size : sizeof q;
    memcpy(&q, p, n);
    q.struct_size = (uint32_t)sizeof q;
    if (n < TB_PROBLEM_G1_SIZE) q.gemm_scales.scale_a = q.gemm_scales.scale_b = 1.0f;
    return q;
}

static inline int last_launch_error(void)
{
    return (int)cudaGetLastError();
}

} // namespace tbv

/* Define tilebench_variant_query for a library holding one variant, whose name is made
 * from family and params on the first call (C++ guarantees the one-time initialisation
 * is thread-safe). NAME_BUF is the static buffer the variant's name field points at. */
#define TBV_SINGLE_VARIANT_QUERY(VARIANT, NAME_BUF, FAMILY, PARAMS)                        \
    extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi,       \
                                                                   uint32_t index)          \
    {                                                                                       \
        (void)host_abi;                                                                     \
        static const size_t named_ =                                                        \
            tb_variant_make_name((FAMILY), (PARAMS), (NAME_BUF), sizeof(NAME_BUF));         \
        (void)named_;                                                                       \
        return index == 0 ? &(VARIANT) : NULL;                                              \
    }

#endif /* TB_VARIANTS_GEMM_COMMON_CUH */
