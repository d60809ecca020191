/* skinny.cuh - skinny: the memory-bound BF16 GEMM for small m (m <= 64, aimed at m <= 16), in
 * every layout, as a header that several translation units may include (wgmma_auto's
 * dispatcher, and skinny.cu, which makes it variants of their own). This file holds the kernel
 * for a column-major B (layouts tn and nn: B k-contiguous) and the entry points
 * skinny_supports() / skinny_launch(), which send a row-major B (nt, tt) to skinny_rowb.cuh.
 *
 * The column-major-B kernel: D = alpha * A * B^T + beta * C: A is m x k row-major (lda; or
 * column-major, nn, below), B is stored n x k (ldb), C and
 * D are m x n row-major (ldc, ldd); BF16 in, FP32 accumulation, BF16 out. Every n-row of B
 * is read once, so the time is the bytes of B over the DRAM bandwidth; A (m x k, small) is
 * read by every CTA through the caches.
 *
 * Owns: the column-major-B kernel, its launch policy, and skinny_supports() / skinny_launch()
 * for all four layouts (a row-major B: skinny_rowb.cuh's kernel and sr_launch()). Everything
 * is static, inline or in an anonymous namespace, so each including library has its own copy.
 *
 * The product runs on the tensor cores, transposed: D^T (n x m) = B (n x k) * A^T, so the
 * streamed operand B is the mma's A operand (16 n-rows) and the m rows of A are its 8-wide
 * n dimension: mma.sync.m16n8k16 covers 16 columns of D by 8 rows. The k order inside an
 * mma is free (a dot product), so each lane loads 16 contiguous bytes (8 k) of a row of B and
 * of a row of A and feeds two mmas from them: elements 0-3 to the first, 4-7 to the second;
 * the fragment positions of A and B then name the same physical k.
 *  - CTA: 8 warps (256 threads). Warp w is column warp w % CW and k warp w / CW (CW in 1, 2,
 *    4, 8, chosen per launch; KW = 8 / CW k warps split k inside the CTA).
 *  - warp: 32 columns (two 16-row tiles of B) x MT * 8 rows of D (MT = 1, 2 or 4 for m <= 8,
 *    <= 16, <= 32; larger m takes grid.y row blocks of 32, each streaming B again).
 *  - k: iterations of U * 32; lane q of the 4 lanes of a row loads k = it*U*32 + u*32 + q*8
 *    .. +7 (u < U), so each load instruction reads 64 contiguous bytes of 8 rows; iteration
 *    it goes to k warp it % KW, so a CTA streams KW * U * 64 contiguous bytes of each of its
 *    rows at a time. All loads of an iteration are issued before its mmas: per lane 4 * U
 *    16-byte loads of B (ld.global.nc.L1::no_allocate: U * 2 KiB per warp) and U * MT of A
 *    (ld.global.nc, cached in L1: the CW column warps read the same A), then 2 * U * 2 * MT
 *    mmas. U = 4 at MT = 1 (128 registers, 2 CTAs/SM: 16 warps x 8 KiB in flight per SM);
 *    MT = 2: U = 2 (2 CTAs/SM, 16 x 4 KiB), or U = 4 (168 registers, 1 CTA/SM, 8 x 8 KiB)
 *    when the grid has at most SK_DEEP_CTAS CTAs and an SM would hold one CTA anyway;
 *    MT = 4: U = 1.
 *  - the k warps' partial sums meet in shared memory; the epilogue walks the CTA's
 *    MT*8 x 32*CW block column-fastest: alpha * sum (+ beta * C, read only when beta != 0).
 * Layout nn (A column-major, ACOL; twelfth session, not yet run on a GPU: wgmma_auto does not
 * dispatch to it until it is): the same kernel, but each lane reads its 8 k of a row of A
 * element by element, lda apart (A is m <= 64 columns of k, read by every CTA through L1).
 * Edges: B rows past n and A rows past m are clamped to the last row (loaded, never stored);
 * the last, partial k iteration goes 32 k at a time, element by element where a lane's 8
 * cross k, zero past it. Unaligned operands (A or B not 16-byte aligned, lda or ldb not a
 * multiple of 8) take the VEC = false kernels: 2-byte loads, 32 k at a time, every chunk
 * checked; the host picks per launch.
 * Launch policy: CW = the largest of 8, 4, 2, 1 that still leaves >= SK_MIN_CTAS CTAs
 * (ceil(n / (32 * CW))): the llm n of 4096-57344 give 128-224 CTAs, one wave on 132 SMs at 2
 * CTAs per SM, and the widest tiles (A is read from L2 once per CTA: m / (32 * CW) of the
 * bytes of B) that still reach every SM. No split of k over CTAs (launch has no workspace).
 */
#ifndef TB_VARIANTS_WGMMA_SKINNY_CUH
#define TB_VARIANTS_WGMMA_SKINNY_CUH

#include "../common/gemm_common.cuh"
#include "skinny_rowb.cuh"

#include <limits.h>

namespace {

constexpr int SK_MAX_M = 64;       /* supports() refuses larger m */
constexpr int SK_THREADS = 256;    /* 8 warps */
constexpr int SK_WARPS = SK_THREADS / 32;
constexpr int SK_NT = 2;           /* 16-column tiles per warp: 32 columns */
constexpr int SK_MIN_CTAS = 128;   /* the fewest CTAs CW may leave (132 SMs) */
constexpr int SK_DEEP_CTAS = 132;  /* grids up to this many CTAs: U = 4 at MT = 2 */

struct sk_args {
    const __nv_bfloat16 *a, *b, *c;   /* c NULL when beta == 0 */
    __nv_bfloat16 *d;
    int m, n, k, cw;
    int64_t lda, ldb, ldc, ldd;
    float alpha, beta;
};

/* 16 bytes of B, streamed: read once, kept out of L1. */
__device__ __forceinline__ uint4 sk_ld_stream(const void *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

/* Eight bf16 of a row from p on: one 16-byte load when VEC and all 8 are inside k, else
 * element by element, zero for the elements past k (rem = elements left in the row; EDGE:
 * rem may be < 8). STREAM: B (L1::no_allocate) rather than A (cached). */
template <bool VEC, bool STREAM, bool EDGE>
__device__ __forceinline__ uint4 sk_ld8(const __nv_bfloat16 *p, int rem)
{
    if (VEC && (!EDGE || rem >= 8))
        return STREAM ? sk_ld_stream(p) : __ldg((const uint4 *)p);
    const unsigned short *s = (const unsigned short *)p;
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = !EDGE || i < rem ? (unsigned)__ldg(s + i) : 0u;
    return make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
}

/* Eight bf16 of a column-major A's row from p on, lda apart (ACOL), zero past k (EDGE: rem may
 * be < 8); cached like every read of A. */
template <bool EDGE>
__device__ __forceinline__ uint4 sk_ld8_col(const __nv_bfloat16 *p, int64_t lda, int rem)
{
    const unsigned short *s = (const unsigned short *)p;
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = !EDGE || i < rem ? (unsigned)__ldg(s + i * lda) : 0u;
    return make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
}

/* acc (16 n x 8 m, FP32) += a (16 n x 16 k of B) * b (16 k x 8 m of A^T) */
__device__ __forceinline__ void sk_mma(float (&c)[4], unsigned a0, unsigned a1, unsigned a2,
                                       unsigned a3, unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* UU 32-k chunks of a warp from kb: all loads first, then the mmas. brow[t][h] is the lane's
 * row of B (tile t, half h: n-rows r and r + 8), arow[i] its row of A (tile row i), both
 * already offset by the lane's q * 8 (for ACOL: by q * 8 * lda); rem0 = k - q * 8. */
template <int MT, int UU, bool VEC, bool EDGE, bool ACOL>
__device__ __forceinline__ void sk_step(float (&acc)[SK_NT][MT][4],
                                        const __nv_bfloat16 *const (&brow)[SK_NT][2],
                                        const __nv_bfloat16 *const (&arow)[MT], int kb, int rem0,
                                        int64_t lda)
{
    uint4 bv[UU][SK_NT][2], av[UU][MT];
#pragma unroll
    for (int u = 0; u < UU; u++)
#pragma unroll
        for (int t = 0; t < SK_NT; t++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                bv[u][t][h] = sk_ld8<VEC, true, EDGE>(brow[t][h] + kb + u * 32, rem0 - kb - u * 32);
#pragma unroll
    for (int u = 0; u < UU; u++)
#pragma unroll
        for (int i = 0; i < MT; i++)
            av[u][i] = ACOL ? sk_ld8_col<EDGE>(arow[i] + (int64_t)(kb + u * 32) * lda, lda, rem0 - kb - u * 32)
                            : sk_ld8<VEC, false, EDGE>(arow[i] + kb + u * 32, rem0 - kb - u * 32);
#pragma unroll
    for (int u = 0; u < UU; u++)
#pragma unroll
        for (int t = 0; t < SK_NT; t++)
#pragma unroll
            for (int i = 0; i < MT; i++) {
                const uint4 &x = bv[u][t][0], &y = bv[u][t][1], &z = av[u][i];
                sk_mma(acc[t][i], x.x, y.x, x.y, y.y, z.x, z.y);   /* k elements 0-3 */
                sk_mma(acc[t][i], x.z, y.z, x.w, y.w, z.z, z.w);   /* k elements 4-7 */
            }
}

/* MT: 8-row tiles of D per warp; U: 32-k chunks per lane group and k iteration (VEC only),
 * 16 (B) + 4 (A) 16-byte loads in flight per lane at MT = 1, U = 4. Up to MT * U = 4 fits 128
 * registers (2 CTAs per SM); more takes up to 255 (1 CTA per SM). */
template <int MT, int U, bool VEC, bool ACOL>
__global__ void __launch_bounds__(SK_THREADS, MT * U > 4 ? 1 : 2) sk_kernel(const sk_args g)
{
    constexpr int E = SK_NT * MT * 4;   /* accumulators per lane */
    constexpr int KI = U * 32;          /* k per warp iteration */
    __shared__ float red[SK_WARPS * E * 32];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, q = lane & 3;
    const int cw = warp % g.cw, kw = warp / g.cw, kws = SK_WARPS / g.cw;
    const int n_cta = (int)blockIdx.x * 32 * g.cw, m0 = (int)blockIdx.y * MT * 8;
    const int n0 = n_cta + cw * 32;

    const __nv_bfloat16 *brow[SK_NT][2], *arow[MT];
#pragma unroll
    for (int t = 0; t < SK_NT; t++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            brow[t][h] = g.b + (int64_t)min(n0 + t * 16 + h * 8 + r, g.n - 1) * g.ldb + q * 8;
#pragma unroll
    for (int i = 0; i < MT; i++)
        arow[i] = ACOL ? g.a + min(m0 + i * 8 + r, g.m - 1) + (int64_t)(q * 8) * g.lda
                       : g.a + (int64_t)min(m0 + i * 8 + r, g.m - 1) * g.lda + q * 8;

    float acc[SK_NT][MT][4];
#pragma unroll
    for (int t = 0; t < SK_NT; t++)
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[t][i][j] = 0.f;

    if constexpr (VEC) {
        const int full = g.k / KI, rem0 = g.k - q * 8;
#pragma unroll 1
        for (int it = kw; it < full; it += kws)
            sk_step<MT, U, true, false, ACOL>(acc, brow, arow, it * KI, rem0, g.lda);
        if (full * KI < g.k && full % kws == kw)
#pragma unroll 1
            for (int u = 0; u < U; u++)
                sk_step<MT, 1, true, true, ACOL>(acc, brow, arow, full * KI + u * 32, rem0, g.lda);
    } else {   /* 2-byte loads, 32 k at a time, every chunk checked against k */
        const int chunks = (g.k + 31) / 32, rem0 = g.k - q * 8;
#pragma unroll 1
        for (int ch = kw; ch < chunks; ch += kws)
            sk_step<MT, 1, false, true, ACOL>(acc, brow, arow, ch * 32, rem0, g.lda);
    }

    /* red[warp][e][lane], e = (t * MT + i) * 4 + j */
#pragma unroll
    for (int t = 0; t < SK_NT; t++)
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                red[(warp * E + (t * MT + i) * 4 + j) * 32 + lane] = acc[t][i][j];
    __syncthreads();

    /* Element (row, col) of the CTA's block sits in column warp col / 32, tile t = col % 32
     * / 16, lane (col % 8) * 4 + row % 8 / 2, accumulator (col % 16 / 8) * 2 + row % 2 of
     * tile row i = row / 8 (the m16n8 C fragment, transposed). */
    skinny_store<MT, E, SK_THREADS>(g, red, m0, n_cta, kws, [](int row, int c, int &e, int &ln) {
        const int x = row & 7;
        e = ((c >> 4) * MT + (row >> 3)) * 4 + ((c >> 3) & 1) * 2 + (x & 1);
        ln = (c & 7) * 4 + (x >> 1);
    });
}

template <int MT, int U, bool VEC, bool ACOL>
int sk_go(const sk_args &a, unsigned ctas, cudaStream_t stream)
{
    sk_kernel<MT, U, VEC, ACOL><<<dim3(ctas, (unsigned)((a.m + MT * 8 - 1) / (MT * 8))), SK_THREADS,
                                  0, stream>>>(a);
    return tbv::last_launch_error();
}

/* The kernel for a's shape and alignment (vec: B 16-byte aligned, and A too unless ACOL). */
template <bool ACOL>
int sk_pick(const sk_args &a, bool vec, int64_t ctas, cudaStream_t stream)
{
    const unsigned c = (unsigned)ctas;
    if (!vec) {
        if (a.m <= 8) return sk_go<1, 1, false, ACOL>(a, c, stream);
        return a.m <= 16 ? sk_go<2, 1, false, ACOL>(a, c, stream) : sk_go<4, 1, false, ACOL>(a, c, stream);
    }
    if (a.m <= 8) return sk_go<1, 4, true, ACOL>(a, c, stream);
    if (a.m <= 16)
        return ctas <= SK_DEEP_CTAS ? sk_go<2, 4, true, ACOL>(a, c, stream)
                                    : sk_go<2, 2, true, ACOL>(a, c, stream);
    return sk_go<4, 1, true, ACOL>(a, c, stream);
}

} // namespace

/* Non-zero when the skinny kernels compute p: BF16 GEMM in any of the four layouts (A and B
 * each row- or column-major; D, and C when read, row-major), batch 1, m <= 64; any n, k and
 * leading dimensions. */
static inline int skinny_supports(const tb_problem *p, char *why, size_t len)
{
    const tb_layout a = p->gemm.a_layout == TB_LAYOUT_COL ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    const tb_layout b = p->gemm.b_layout == TB_LAYOUT_ROW ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    if (!tbv::bf16_gemm_layout_ok(p, a, b, why, len)) return 0;
    const tb_gemm *g = &p->gemm;
    if (g->m > SK_MAX_M) return tbv::no(why, len, "m must be at most %d", SK_MAX_M);
    if (g->n > INT_MAX - 1024 || g->k > INT_MAX - 1024)
        return tbv::no(why, len, "n and k must be below 2^31 - 1024");
    return 1;
}

/* Enqueue the skinny kernel for p (skinny_supports(p) must hold) on stream: one launch,
 * nothing else, no workspace. Returns 0 or a cudaError_t. */
static inline int skinny_launch(const tb_problem *p, const tb_buffers *io, cudaStream_t stream)
{
    const tb_gemm *g = &p->gemm;
    if (g->b_layout == TB_LAYOUT_ROW) return sr_launch(p, io, stream);   /* nt, tt */
    sk_args a;
    a.a = (const __nv_bfloat16 *)io->in[0];
    a.b = (const __nv_bfloat16 *)io->in[1];
    a.c = g->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    a.d = (__nv_bfloat16 *)io->out[0];
    if (!a.a || !a.b || !a.d || (g->beta != 0.0 && !a.c)) return (int)cudaErrorInvalidValue;
    a.m = (int)g->m; a.n = (int)g->n; a.k = (int)g->k;
    a.lda = g->lda; a.ldb = g->ldb; a.ldc = g->ldc; a.ldd = g->ldd;
    a.alpha = (float)g->alpha;
    a.beta = (float)g->beta;
    a.cw = SK_WARPS;
    while (a.cw > 1 && (g->n + 32 * a.cw - 1) / (32 * a.cw) < SK_MIN_CTAS) a.cw /= 2;
    const bool acol = g->a_layout == TB_LAYOUT_COL;
    const bool vec = (uintptr_t)a.b % 16 == 0 && g->ldb % 8 == 0 &&
                     (acol || ((uintptr_t)a.a % 16 == 0 && g->lda % 8 == 0));
    const int64_t ctas = (g->n + 32 * a.cw - 1) / (32 * a.cw);
    return acol ? sk_pick<true>(a, vec, ctas, stream) : sk_pick<false>(a, vec, ctas, stream);
}

#endif /* TB_VARIANTS_WGMMA_SKINNY_CUH */
