/* skinny_rowb.cuh - skinny for a row-major B: the memory-bound BF16 GEMM for small m (m <= 64,
 * aimed at m <= 16) in layouts nt and tt, where B is stored k rows of n (n contiguous, ldb >= n)
 * and A is m x k row-major (tt, k contiguous) or column-major (nt, m contiguous). A header
 * included by skinny.cuh, whose skinny_supports() / skinny_launch() dispatch here when B is
 * row-major (so wgmma_auto and skinny.cu's variants get it through skinny.cuh).
 *
 * Owns: the row-major-B kernel (sr_kernel), its launch policy and sr_launch(). Everything is
 * static, inline or in an anonymous namespace, so each including library has its own copy.
 *
 * D = alpha * A * B + beta * C, C and D m x n row-major; FP32 accumulation, one BF16 rounding.
 * Every element of B is read once, so the time is B's bytes over the DRAM bandwidth.
 *
 * The product runs on the tensor cores transposed, as skinny.cuh's: D^T (n x m) = B^T (n x k)
 * * A^T, with B^T as the mma's 16-row A operand and 8 rows of A as its n = 8 operand
 * (mma.sync.m16n8k16, FP32 accumulators). The mma wants pairs along k; row-major B gives pairs
 * along n, so each 32-bit register of B is transposed in registers by movmatrix.m8n8.trans
 * (no shared memory): a warp's 16-byte load of 8 rows x 32 columns (4 lanes a row, 64
 * contiguous bytes of each row) is four 8 x 8 matrices (register j of lane (r, q) holds row r,
 * columns 8q + 2j, +1); transposed, lane (r', q') holds column 8(r'/2) + 2j + r'%2 at the two
 * rows 2q', 2q' + 1 of the load: an mma fragment whose 8 rows (n) are a fixed permutation of
 * columns, which the epilogue undoes.
 *  - k order: the mma's k order is free (a dot product), so the rows are assigned to match A's
 *    16-byte loads: a k iteration of 32 rows kb..kb+31 is four loads (groups G = 0..3); lane
 *    (r, q) of group G reads row kb + 8(r/2) + 2G + r%2, so after the transpose lane q' holds
 *    rows kb + 8q' + 2G, +1: exactly register G of its 16-byte load of A's row at kb + 8q'
 *    (tt: one load; nt: 8 elements lda apart, as skinny.cuh's nn). Groups 0,1 and 2,3 make
 *    the mma's two k halves; registers 0,1 and 2,3 its 16 rows: two 16-column tiles a warp.
 *  - CTA: 8 warps, warp w is column warp w % CW and k warp w / CW (CW in 1, 2, 4, 8; KW = 8 /
 *    CW k warps split k inside the CTA and meet in shared memory), as skinny.cuh: a CTA covers
 *    32 * CW columns (64 * CW bytes of each row); m > 32 takes grid.y row blocks of 32.
 *  - depth: U k iterations (U * 32 rows) a warp step, all loads (4 * U of B, 16 bytes each,
 *    ld.global.nc.L1::no_allocate; U * MT of A, cached in L1 for the CW column warps) issued
 *    before the transposes and mmas: U = 4 at MT = 1 (2 KiB of B a load group, 8 KiB a warp
 *    in flight), MT = 2 U = 2 or, at most SK_DEEP_CTAS CTAs, U = 4 (1 CTA per SM), MT = 4 U = 1.
 * Edges: k is per row here (a lane's 16 bytes are one row), so the last partial iteration
 * loads whole rows and zeros those past k (A's 8 k element by element past k); columns: a
 * lane wholly past n reads the last 8-aligned full columns instead, and the one lane whose 8
 * cross n reads element by element at min(column, n - 1) (neither is stored; the warp holding
 * such a lane, found with __all_sync, runs per-lane loads at U = 1, every other warp 16-byte
 * loads with no test); rows of A past m are clamped to m - 1. Unaligned B or A (pointer not 16-byte aligned, ldb
 * or a row-major A's lda not a multiple of 8) take the VEC = false kernel: 2-byte loads of B,
 * 32 k a step, every row checked. No split of k over CTAs (no workspace): at the llm n of
 * 4096-57344 the CW rule leaves 128-224 CTAs, which is every SM.
 */
#ifndef TB_VARIANTS_WGMMA_SKINNY_ROWB_CUH
#define TB_VARIANTS_WGMMA_SKINNY_ROWB_CUH

#include "../common/gemm_common.cuh"
#include "skinny_epilogue.cuh"

namespace {

constexpr int SR_THREADS = 256;   /* 8 warps */
constexpr int SR_WARPS = SR_THREADS / 32;
constexpr int SR_MIN_CTAS = 128;  /* the fewest CTAs CW may leave (132 SMs) */
constexpr int SR_DEEP_CTAS = 132; /* grids up to this many CTAs: U = 4 at MT = 2 */

struct sr_args {
    const __nv_bfloat16 *a, *b, *c;   /* c NULL when beta == 0 */
    __nv_bfloat16 *d;
    int m, n, k, cw;
    int64_t lda, ldb, ldc, ldd;
    float alpha, beta;
};

/* 16 bytes of B, streamed: read once, kept out of L1. */
__device__ __forceinline__ uint4 sr_ld_stream(const void *p)
{
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

__device__ __forceinline__ unsigned sr_pack(unsigned lo, unsigned hi) { return lo | hi << 16; }

/* Eight bf16 from p on, element e at p + e * step (step 1: a row; lda: a column-major A's
 * row), zero where e >= rem (EDGE). */
template <bool EDGE>
__device__ __forceinline__ uint4 sr_ld8_elems(const __nv_bfloat16 *p, int64_t step, int rem)
{
    const unsigned short *s = (const unsigned short *)p;
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = !EDGE || i < rem ? (unsigned)__ldg(s + i * step) : 0u;
    return make_uint4(sr_pack(e[0], e[1]), sr_pack(e[2], e[3]), sr_pack(e[4], e[5]), sr_pack(e[6], e[7]));
}

/* The lane's 8 columns of one row of B from row (the row's element at the lane's first column,
 * clamped to n - 1). BM 0: one 16-byte load (every lane of the warp full); 1: that where the
 * lane's 8 are inside n (full), else element by element at min(column, n - 1) (last = the
 * last offset inside n, 0..7); 2: element by element always (unaligned B). Zero when the row
 * is past k (live false). */
template <int BM>
__device__ __forceinline__ uint4 sr_ld_b(const __nv_bfloat16 *row, bool full, int last, bool live)
{
    if (!live) return make_uint4(0u, 0u, 0u, 0u);
    if (BM == 0 || (BM == 1 && full)) return sr_ld_stream(row);
    const unsigned short *s = (const unsigned short *)row;
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; i++) e[i] = (unsigned)__ldg(s + min(i, last));
    return make_uint4(sr_pack(e[0], e[1]), sr_pack(e[2], e[3]), sr_pack(e[4], e[5]), sr_pack(e[6], e[7]));
}

/* The transpose of the warp's 8 x 8 BF16 matrix, one register a lane (movmatrix). */
__device__ __forceinline__ unsigned sr_trans(unsigned x)
{
    unsigned y;
    asm("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    return y;
}

/* acc (16 n x 8 m, FP32) += a (16 n x 16 k of B^T) * b (16 k x 8 m of A^T) */
__device__ __forceinline__ void sr_mma(float (&c)[4], unsigned a0, unsigned a1, unsigned a2,
                                       unsigned a3, unsigned b0, unsigned b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/* UU iterations of 32 k of a warp from kb: all loads, then the transposes and mmas.
 * brow: the lane's B element at row 8(r/2) + r%2 (relative to kb = 0) and its first column;
 * arow[i]: its A element of tile row i at k = q * 8 (ACOL: q * 8 * lda); rlo = 8(r/2) + r%2.
 * BM: sr_ld_b's mode; VA: 16-byte loads of a row-major A; EDGE: rows checked against k. */
template <int MT, int UU, int BM, bool VA, bool EDGE, bool ACOL>
__device__ __forceinline__ void sr_step(float (&acc)[2][MT][4], const __nv_bfloat16 *brow,
                                        const __nv_bfloat16 *const (&arow)[MT], int kb, int k,
                                        int rlo, int q, int64_t ldb, int64_t lda, bool full,
                                        int last)
{
    uint4 bv[UU][4], av[UU][MT];
#pragma unroll
    for (int u = 0; u < UU; u++)
#pragma unroll
        for (int G = 0; G < 4; G++) {
            const int row = kb + u * 32 + 2 * G;   /* + rlo: the lane's row */
            bv[u][G] = sr_ld_b<BM>(brow + (int64_t)row * ldb, full, last, !EDGE || row + rlo < k);
        }
#pragma unroll
    for (int u = 0; u < UU; u++)
#pragma unroll
        for (int i = 0; i < MT; i++) {
            const int k0 = kb + u * 32, rem = k - k0 - q * 8;
            if (ACOL)
                av[u][i] = sr_ld8_elems<EDGE>(arow[i] + (int64_t)k0 * lda, lda, rem);
            else if (VA && (!EDGE || rem >= 8))
                av[u][i] = __ldg((const uint4 *)(arow[i] + k0));
            else
                av[u][i] = sr_ld8_elems<EDGE>(arow[i] + k0, 1, rem);
        }
#pragma unroll
    for (int u = 0; u < UU; u++) {
        unsigned t[4][4];   /* t[G][j]: register j of group G, transposed */
#pragma unroll
        for (int G = 0; G < 4; G++) {
            t[G][0] = sr_trans(bv[u][G].x);
            t[G][1] = sr_trans(bv[u][G].y);
            t[G][2] = sr_trans(bv[u][G].z);
            t[G][3] = sr_trans(bv[u][G].w);
        }
#pragma unroll
        for (int i = 0; i < MT; i++) {
            const uint4 &z = av[u][i];
#pragma unroll
            for (int c = 0; c < 2; c++) {   /* column tile c: registers 2c (rows 0-7), 2c + 1 */
                sr_mma(acc[c][i], t[0][2 * c], t[0][2 * c + 1], t[1][2 * c], t[1][2 * c + 1], z.x, z.y);
                sr_mma(acc[c][i], t[2][2 * c], t[2][2 * c + 1], t[3][2 * c], t[3][2 * c + 1], z.z, z.w);
            }
        }
    }
}

/* A warp's share of k: steps s = kw, kw + kws, ... of U * 32 rows, then the last, partial step
 * (32 rows at a time, rows checked) by the k warp whose turn it is. BM and VA as sr_step. */
template <int MT, int U, int BM, bool VA, bool ACOL>
__device__ __forceinline__ void sr_run(float (&acc)[2][MT][4], const sr_args &g,
                                       const __nv_bfloat16 *brow,
                                       const __nv_bfloat16 *const (&arow)[MT], int kw, int kws,
                                       int rlo, int q, bool full, int last)
{
    constexpr int KI = U * 32;
    const int steps = g.k / KI;
#pragma unroll 1
    for (int s = kw; s < steps; s += kws)
        sr_step<MT, U, BM, VA, false, ACOL>(acc, brow, arow, s * KI, g.k, rlo, q, g.ldb, g.lda, full, last);
    if (steps % kws == kw)
#pragma unroll 1
        for (int kb = steps * KI; kb < g.k; kb += 32)
            sr_step<MT, 1, BM, VA, true, ACOL>(acc, brow, arow, kb, g.k, rlo, q, g.ldb, g.lda, full, last);
}

/* MT: 8-row tiles of D a warp; U: 32-k iterations a warp step (VEC only). MT * U > 4 takes up
 * to 255 registers (1 CTA per SM), else 128 (2 CTAs per SM). */
template <int MT, int U, bool VEC, bool ACOL>
__global__ void __launch_bounds__(SR_THREADS, MT * U > 4 ? 1 : 2) sr_kernel(const sr_args g)
{
    constexpr int E = 2 * MT * 4;   /* accumulators a lane */
    __shared__ float red[SR_WARPS * E * 32];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, q = lane & 3;
    const int cw = warp % g.cw, kw = warp / g.cw, kws = SR_WARPS / g.cw;
    const int n_cta = (int)blockIdx.x * 32 * g.cw, m0 = (int)blockIdx.y * MT * 8;
    const int rlo = 8 * (r >> 1) + (r & 1);             /* the lane's row in each load group */
    /* The lane's first column of B; a lane wholly past n reads the last full 8 instead (VEC:
     * 16-byte aligned, inside the row; never stored), so that only a lane whose 8 cross n
     * reads element by element. */
    int col = n_cta + cw * 32 + q * 8;
    bool full = col + 8 <= g.n;
    if (VEC && col >= g.n && g.n >= 8) { col = g.n / 8 * 8 - 8; full = true; }
    const int last = max(min(g.n - col, 8), 1) - 1;
    const __nv_bfloat16 *brow = g.b + (int64_t)rlo * g.ldb + min(col, g.n - 1);

    const __nv_bfloat16 *arow[MT];
#pragma unroll
    for (int i = 0; i < MT; i++) {
        const int64_t ar = min(m0 + i * 8 + r, g.m - 1);
        arow[i] = ACOL ? g.a + ar + (int64_t)(q * 8) * g.lda : g.a + ar * g.lda + q * 8;
    }

    float acc[2][MT][4];
#pragma unroll
    for (int c = 0; c < 2; c++)
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[c][i][j] = 0.f;

    if constexpr (VEC) {
        if (__all_sync(0xffffffffu, full))   /* warp-uniform: every lane's 8 inside n */
            sr_run<MT, U, 0, true, ACOL>(acc, g, brow, arow, kw, kws, rlo, q, full, last);
        else                                 /* the warp at n's edge */
            sr_run<MT, 1, 1, true, ACOL>(acc, g, brow, arow, kw, kws, rlo, q, full, last);
    } else {                                 /* 2-byte loads, 32 k a step, every row checked */
        const int chunks = (g.k + 31) / 32;
#pragma unroll 1
        for (int ch = kw; ch < chunks; ch += kws)
            sr_step<MT, 1, 2, false, true, ACOL>(acc, brow, arow, ch * 32, g.k, rlo, q, g.ldb, g.lda, full, last);
    }

    /* red[warp][e][lane], e = (c * MT + i) * 4 + j */
#pragma unroll
    for (int c = 0; c < 2; c++)
#pragma unroll
        for (int i = 0; i < MT; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
                red[(warp * E + (c * MT + i) * 4 + j) * 32 + lane] = acc[c][i][j];
    __syncthreads();

    /* Accumulator j of tile (c, i) of lane (r, q) is D(m0 + 8i + 2q + j % 2, column
     * 8(r / 2) + 4c + 2(j / 2) + r % 2 of the warp's 32); inverted: column x of the warp's 32
     * and row y of the block sit in lane (2(x / 8) + x % 2) * 4 + y % 8 / 2, accumulator
     * ((x / 4 % 2) * MT + y / 8) * 4 + (x / 2 % 2) * 2 + y % 2. */
    skinny_store<MT, E, SR_THREADS>(g, red, m0, n_cta, kws, [](int row, int x, int &e, int &ln) {
        const int y = row & 7;
        e = (((x >> 2) & 1) * MT + (row >> 3)) * 4 + ((x >> 1) & 1) * 2 + (y & 1);
        ln = ((x >> 3) * 2 + (x & 1)) * 4 + (y >> 1);
    });
}

template <int MT, int U, bool VEC, bool ACOL>
int sr_go(const sr_args &a, unsigned ctas, cudaStream_t stream)
{
    sr_kernel<MT, U, VEC, ACOL><<<dim3(ctas, (unsigned)((a.m + MT * 8 - 1) / (MT * 8))), SR_THREADS,
                                  0, stream>>>(a);
    return tbv::last_launch_error();
}

/* The kernel for a's shape and alignment. */
template <bool ACOL>
int sr_pick(const sr_args &a, bool vec, int64_t ctas, cudaStream_t stream)
{
    const unsigned c = (unsigned)ctas;
    if (!vec) {
        if (a.m <= 8) return sr_go<1, 1, false, ACOL>(a, c, stream);
        return a.m <= 16 ? sr_go<2, 1, false, ACOL>(a, c, stream) : sr_go<4, 1, false, ACOL>(a, c, stream);
    }
    if (a.m <= 8) return sr_go<1, 4, true, ACOL>(a, c, stream);
    if (a.m <= 16)
        return ctas <= SR_DEEP_CTAS ? sr_go<2, 4, true, ACOL>(a, c, stream)
                                    : sr_go<2, 2, true, ACOL>(a, c, stream);
    return sr_go<4, 1, true, ACOL>(a, c, stream);
}

/* Column warps a CTA (CW): the largest of 8, 4, 2, 1 that leaves at least SR_MIN_CTAS CTAs;
 * host arithmetic. */
static inline int sr_column_warps(int64_t n)
{
    int cw = SR_WARPS;
    while (cw > 1 && (n + 32 * cw - 1) / (32 * cw) < SR_MIN_CTAS) cw /= 2;
    return cw;
}

} // namespace

/* Enqueue the row-major-B kernel for p (layout nt or tt, m <= 64, n and k below 2^31 - 1024:
 * what skinny_supports() checks) on stream: one launch. Returns 0 or a cudaError_t. */
static inline int sr_launch(const tb_problem *p, const tb_buffers *io, cudaStream_t stream)
{
    const tb_gemm *g = &p->gemm;
    sr_args a;
    a.a = (const __nv_bfloat16 *)io->in[0];
    a.b = (const __nv_bfloat16 *)io->in[1];
    a.c = g->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    a.d = (__nv_bfloat16 *)io->out[0];
    if (!a.a || !a.b || !a.d || (g->beta != 0.0 && !a.c)) return (int)cudaErrorInvalidValue;
    a.m = (int)g->m; a.n = (int)g->n; a.k = (int)g->k;
    a.lda = g->lda; a.ldb = g->ldb; a.ldc = g->ldc; a.ldd = g->ldd;
    a.alpha = (float)g->alpha;
    a.beta = (float)g->beta;
    a.cw = sr_column_warps(g->n);
    const bool acol = g->a_layout == TB_LAYOUT_COL;
    const bool vec = (uintptr_t)a.b % 16 == 0 && g->ldb % 8 == 0 &&
                     (acol || ((uintptr_t)a.a % 16 == 0 && g->lda % 8 == 0));
    const int64_t ctas = (g->n + 32 * a.cw - 1) / (32 * a.cw);
    return acol ? sr_pick<true>(a, vec, ctas, stream) : sr_pick<false>(a, vec, ctas, stream);
}

#endif /* TB_VARIANTS_WGMMA_SKINNY_ROWB_CUH */
