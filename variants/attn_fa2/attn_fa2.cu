/* attn_fa2.cu - attn_fa2: FlashAttention-2-style attention forward on mma.sync (issue 33), one
 * source for the whole grid.
 *
 * Owns the kernel, its host side (supports, setup, launch) and the variant of one grid point.
 * One CTA takes BQ query rows of one (batch, head) with W warps, each warp MW = BQ / W rows
 * (MI = MW / 16 m16 tiles: 1 or 2). The CTA walks the key/value sequence BKV keys at a time:
 *   S = Q K^T  by mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (FP32 scores), Q and K
 *              fragments by ldmatrix (Q kept in registers when MI == 1 and D <= 128);
 *   online softmax in FP32 per row: running max m (raw scores), p = 2^(s*c - m*c) with
 *              c = scale * log2(e) folded in (one FMA and ex2.approx), the running sum l of the
 *              FP32 p (each thread its columns; the quad's partial sums are added at the end),
 *              the accumulator and l rescaled by 2^((m_old - m_new) c);
 *   O += P V   with P rounded to BF16 straight from the S accumulators into A fragments (the
 *              C layout of two n8 tiles is the A layout of one k16 step) and V by ldmatrix.trans.
 * At the end O = acc / l rounded once to BF16 and LSE = m * scale + ln l (natural log, FP32):
 * the definition of variant.h (growth 2) and reference/ref_attention.cu.
 *
 * Memory: Q (BQ x D), and STAGES buffers each of K and V (BKV x D), in shared memory as rows of
 * D bf16 whose 16-byte chunks are XOR-swizzled with (row % 8), so the 8 rows of an ldmatrix
 * phase (plain for Q and K, .trans for V) and the chunks of a cp.async phase hit 8 different
 * bank groups. Loads are cp.async.cg 16 bytes from global; rows past seq_q / seq_k are
 * zero-filled (src-size 0). Pipelines:
 *   STAGES 1 (FlashAttention-2's own): one K and one V buffer; V_t is loaded while S_t is
 *            computed, K_{t+1} while P_t V_t is: two barriers a tile.
 *   STAGES 2: double-buffered K and V; tile t+1 is loaded during tile t (K_{t+1} issued before
 *            S_t, V_{t+1} after it, which keeps fewer addresses live beside S): one barrier.
 * Causal (bottom-right, as variant.h: row i sees keys j <= i + seq_k - seq_q): the CTA stops at
 * the last tile its last row sees (fully masked tiles are never loaded), masks elementwise only
 * in the tiles that cross the diagonal or seq_k, and CTAs take q tiles from the last (the
 * longest) first. Grouped-query heads: query head h reads K/V head h / (heads / heads_kv).
 *
 * Addressing is through the problem's strides (BHSD, BSHD, padded), which must be multiples of
 * 8 elements for Q, K and V (16-byte cp.async) and of 2 for O (bf16x2 stores); LSE takes any.
 * Head dims: 64 and 128 at every point, 256 at the points with one m16 tile a warp (MI == 1)
 * whose shared memory fits (227 KB), others declined in supports() with the reason.
 *
 * The build instantiates one library per grid point (CMakeLists.txt): TB_BQ, TB_BKV, TB_WARPS,
 * TB_STAGES and TB_SPLIT_S (S one m16 tile at a time, for registers; not in the name); the
 * variant is named attn_fa2_bf16_<BQ>x<BKV>_s<STAGES>_w<WARPS>. Registers and shared memory per
 * point (ptxas -v, sm_90 and sm_80, no spills) are listed in CMakeLists.txt.
 */
#include "../common/attn_common.cuh"
#include "../common/gemm_common.cuh"

#include <math.h>

#if !defined(TB_BQ) || !defined(TB_BKV) || !defined(TB_WARPS) || !defined(TB_STAGES)
#error "attn_fa2.cu needs TB_BQ, TB_BKV, TB_WARPS and TB_STAGES (see CMakeLists.txt)"
#endif
#ifndef TB_SPLIT_S
#define TB_SPLIT_S 0
#endif

namespace {

template <int BQ_, int BKV_, int W_, int STAGES_>
struct config {
    static constexpr int BQ = BQ_, BKV = BKV_, W = W_, STAGES = STAGES_;
    static constexpr int THREADS = 32 * W;
    static constexpr int MW = BQ / W;           /* query rows per warp */
    static constexpr int MI = MW / 16;          /* m16 tiles per warp */
    static constexpr int NT = BKV / 8;          /* n8 tiles of S */
    static constexpr int KK = BKV / 16;         /* k16 steps of P V */
    static_assert(BQ % W == 0 && MW % 16 == 0 && (MI == 1 || MI == 2), "a warp takes 16 or 32 rows");
    static_assert(BKV % 16 == 0 && BKV <= 128, "BKV must be a multiple of 16, at most 128");
    static_assert(STAGES == 1 || STAGES == 2, "STAGES is 1 or 2");
};
using cfg = config<TB_BQ, TB_BKV, TB_WARPS, TB_STAGES>;

/* Shared memory bytes for head dimension d (Q, then STAGES K and V tiles), and whether the
 * kernel for d is built: 64 and 128 always; 256 only where one warp holds one m16 tile (the
 * accumulator of O is then 128 floats a thread) and the buffers fit a CTA's 227 KB. */
constexpr int smem_bytes(int d) { return (cfg::BQ + 2 * cfg::STAGES * cfg::BKV) * d * 2; }
constexpr bool built(int d)
{
    return d == 64 || d == 128 || (d == 256 && cfg::MI == 1 && smem_bytes(256) <= 227 * 1024);
}

/* What depends on the head dimension D. */
template <int D>
struct dims {
    static constexpr int RB = D * 2;            /* bytes of a shared row */
    static constexpr int CPR = D / 8;           /* 16-byte chunks of a row */
    static constexpr int KS = D / 16;           /* k16 steps of Q K^T */
    static constexpr int DT = D / 8;            /* n8 tiles of O */
    static constexpr bool Q_REGS = cfg::MI == 1 && D <= 128;
    static constexpr int Q_BYTES = cfg::BQ * RB, KV_BYTES = cfg::BKV * RB;
    static constexpr int SMEM = smem_bytes(D);
    /* m16 tiles whose S is computed at once: all of the warp's, or with TB_SPLIT_S one at a
     * time (fewer registers beside O's accumulator; K's fragments are read once per m16 tile) */
    static constexpr int IG = TB_SPLIT_S ? 1 : cfg::MI;
};

struct args {
    const __nv_bfloat16 *q, *k, *v;
    __nv_bfloat16 *o;
    float *lse;
    int heads, group, seq_q, seq_k, n_qtiles, causal;
    int64_t qs[3], ks[3], vs[3], os[3], ls[2];
    float scale, scale_log2;
};

/* ---- PTX wrappers ------------------------------------------------------------------------ */

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void cp_async_wait_all()
{
    asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}
/* c += a * b for one m16n8k16 tile: a four bf16x2 registers, b two */
__device__ __forceinline__ void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t *>(&h);
}

/* Byte offset of chunk c of shared row r: rows of RB bytes, the chunk's low 3 bits XOR r % 8. */
template <int D>
__device__ __forceinline__ uint32_t swz(int r, int c)
{
    return (uint32_t)(r * dims<D>::RB + ((c ^ (r & 7)) << 4));
}

/* This thread's share of a ROWS x D tile copy: rows r0 + i * RPP (i < ROWS / RPP), chunk c.
 * src is the tile's first row advanced by r0 rows and c chunks, step RPP rows of global memory;
 * rows at or past `valid` are zero-filled (src-size 0, reading nothing at base). */
template <int D>
struct loader {
    static constexpr int CPR = dims<D>::CPR, RPP = cfg::THREADS / CPR;
    static_assert(cfg::THREADS % CPR == 0, "a pass covers whole rows");
    int r0, c;
    __device__ __forceinline__ explicit loader(int tid) : r0(tid / CPR), c(tid % CPR) {}
    template <int ROWS>
    __device__ __forceinline__ void tile(uint32_t dst, const __nv_bfloat16 *base,
                                         const __nv_bfloat16 *src, int64_t step, int valid) const
    {
        static_assert(ROWS % RPP == 0, "a tile is whole passes of the CTA's threads (a point "
                      "whose tile has fewer rows than a pass would load none of some rows)");
#pragma unroll
        for (int i = 0; i < ROWS / RPP; i++) {
            const int r = r0 + i * RPP;
            const bool ok = r < valid;
            cp_async16(dst + swz<D>(r, c), ok ? (const void *)src : (const void *)base, ok ? 16 : 0);
            src += step;
        }
    }
};

/* ---- the kernel -------------------------------------------------------------------------- */

template <int D>
__global__ void __launch_bounds__(cfg::THREADS, 1) fa2_kernel(const args g)
{
    using dd = dims<D>;
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sQ = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sK = sQ + dd::Q_BYTES;
    const uint32_t sV = sK + cfg::STAGES * dd::KV_BYTES;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int qt = g.n_qtiles - 1 - (int)blockIdx.x;    /* the longest (causal) tiles first */
    const int h = (int)blockIdx.y, b = (int)blockIdx.z, hk = h / g.group;
    const int q0 = qt * cfg::BQ;
    const int diag = g.seq_k - g.seq_q;                   /* row i sees keys j <= i + diag */

    const __nv_bfloat16 *qp = g.q + b * g.qs[0] + h * g.qs[1] + (int64_t)q0 * g.qs[2];
    const __nv_bfloat16 *kp = g.k + b * g.ks[0] + hk * g.ks[1];
    const __nv_bfloat16 *vp = g.v + b * g.vs[0] + hk * g.vs[1];

    /* Key tiles this CTA walks: up to the last key its last real row sees. */
    int n_tiles = (g.seq_k + cfg::BKV - 1) / cfg::BKV;
    if (g.causal) n_tiles = min(n_tiles, (min(q0 + cfg::BQ, g.seq_q) - 1 + diag) / cfg::BKV + 1);
    /* Tiles from here on need the elementwise mask: they reach past seq_k, or (causal) past
     * the diagonal of the CTA's first row. */
    int first_masked = g.seq_k / cfg::BKV;
    if (g.causal) first_masked = min(first_masked, (q0 + diag + 1) / cfg::BKV);

    /* ldmatrix lane offsets (k-step 0; step ks is the offset XOR 32 ks: see mma_sync.cu):
     * Q (A, x4): row lane % 16, chunk lane / 16; K (B, x4 = two n8 tiles): row lane % 8 +
     * 8 (lane / 16), chunk (lane / 8) % 2; V (B, x4.trans = two d8 tiles of one k16 step):
     * row lane % 8 + 8 ((lane / 8) % 2), chunk lane / 16. Every row here is = lane (mod 8). */
    const int x = lane & 7;
    const uint32_t q_lm = (uint32_t)((warp * cfg::MW + (lane & 15)) * dd::RB + (((lane >> 4) ^ x) << 4));
    const uint32_t k_lm = (uint32_t)((x + ((lane >> 4) << 3)) * dd::RB + ((((lane >> 3) & 1) ^ x) << 4));
    const uint32_t v_lm = (uint32_t)((x + (((lane >> 3) & 1) << 3)) * dd::RB + (((lane >> 4) ^ x) << 4));

    /* Prologue: Q and tile 0's K (and V with two stages) as one group. */
    const loader<D> ld(tid);
    const int64_t rpp = loader<D>::RPP;
    const __nv_bfloat16 *kt = kp + ld.r0 * g.ks[2] + ld.c * 8;    /* this thread's key tile 0 */
    const __nv_bfloat16 *vt = vp + ld.r0 * g.vs[2] + ld.c * 8;
    ld.template tile<cfg::BQ>(sQ, g.q, qp + ld.r0 * g.qs[2] + ld.c * 8, rpp * g.qs[2], g.seq_q - q0);
    ld.template tile<cfg::BKV>(sK, g.k, kt, rpp * g.ks[2], g.seq_k);
    if (cfg::STAGES == 2) ld.template tile<cfg::BKV>(sV, g.v, vt, rpp * g.vs[2], g.seq_k);
    cp_async_commit();

    float acc[cfg::MI][dd::DT][4];
#pragma unroll
    for (int i = 0; i < cfg::MI; i++)
#pragma unroll
        for (int j = 0; j < dd::DT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;
    float m_run[cfg::MI][2], l_run[cfg::MI][2];
#pragma unroll
    for (int i = 0; i < cfg::MI; i++) {
        m_run[i][0] = m_run[i][1] = -INFINITY;
        l_run[i][0] = l_run[i][1] = 0.f;
    }

    uint32_t qf[dd::Q_REGS ? dd::KS : 1][4];
    if (dd::Q_REGS) {
        cp_async_wait_all();
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < (dd::Q_REGS ? dd::KS : 1); ks++) ldsm_x4(qf[ks], sQ + (q_lm ^ (uint32_t)(ks * 32)));
    }

    constexpr int IG = dd::IG;
    const float c = g.scale_log2;
    const int row_g = q0 + warp * cfg::MW + (lane >> 2);   /* this thread's first row */
    for (int t = 0; t < n_tiles; t++) {
        const int kv0 = t * cfg::BKV;
        const int buf = cfg::STAGES == 2 ? (t & 1) : 0;
        const uint32_t kb = sK + buf * dd::KV_BYTES, vb = sV + buf * dd::KV_BYTES;
        /* K_t (and V_t with two stages) landed for this thread; the barrier makes it everyone's
         * and says every warp is done with tile t-1's buffers. */
        cp_async_wait_all();
        __syncthreads();
        if (cfg::STAGES == 1) {
            ld.template tile<cfg::BKV>(sV, g.v, vt + kv0 * g.vs[2], rpp * g.vs[2], g.seq_k - kv0);
        } else if (t + 1 < n_tiles) {
            const int nk = kv0 + cfg::BKV, nb = (t + 1) & 1;
            ld.template tile<cfg::BKV>(sK + nb * dd::KV_BYTES, g.k, kt + nk * g.ks[2], rpp * g.ks[2], g.seq_k - nk);
        }
        cp_async_commit();

        /* S = Q K_t^T, IG m16 tiles at a time, each turned into P (BF16, in pa) before the next */
        uint32_t pa[cfg::MI][cfg::KK][4];
#pragma unroll
        for (int i0 = 0; i0 < cfg::MI; i0 += IG) {
            float s[IG][cfg::NT][4];
#pragma unroll
            for (int i = 0; i < IG; i++)
#pragma unroll
                for (int j = 0; j < cfg::NT; j++)
#pragma unroll
                    for (int r = 0; r < 4; r++) s[i][j][r] = 0.f;
#pragma unroll
            for (int ks = 0; ks < dd::KS; ks++) {
                uint32_t a[IG][4];
#pragma unroll
                for (int i = 0; i < IG; i++) {
                    if (dd::Q_REGS) {
#pragma unroll
                        for (int r = 0; r < 4; r++) a[i][r] = qf[dd::Q_REGS ? ks : 0][r];
                    } else {
                        ldsm_x4(a[i], sQ + ((q_lm + (i0 + i) * 16 * dd::RB) ^ (uint32_t)(ks * 32)));
                    }
                }
#pragma unroll
                for (int np = 0; np < cfg::NT / 2; np++) {
                    uint32_t bk[4];
                    ldsm_x4(bk, kb + ((k_lm + np * 16 * dd::RB) ^ (uint32_t)(ks * 32)));
#pragma unroll
                    for (int i = 0; i < IG; i++) {
                        mma(s[i][2 * np], a[i], bk[0], bk[1]);
                        mma(s[i][2 * np + 1], a[i], bk[2], bk[3]);
                    }
                }
            }

            /* mask: keys at or past `lim` in a row, as a column j * 8 + e of this thread */
            if (t >= first_masked) {
                const int key0 = kv0 + (lane & 3) * 2;
#pragma unroll
                for (int i = 0; i < IG; i++)
#pragma unroll
                    for (int hf = 0; hf < 2; hf++) {
                        int lim = g.seq_k;
                        if (g.causal) lim = min(lim, row_g + (i0 + i) * 16 + hf * 8 + diag + 1);
                        lim -= key0;
#pragma unroll
                        for (int j = 0; j < cfg::NT; j++)
#pragma unroll
                            for (int e = 0; e < 2; e++)
                                if (j * 8 + e >= lim) s[i][j][2 * hf + e] = -INFINITY;
                    }
            }
            /* the online softmax: s becomes p */
#pragma unroll
            for (int i = 0; i < IG; i++)
#pragma unroll
                for (int hf = 0; hf < 2; hf++) {
                    float &m = m_run[i0 + i][hf];
                    float mx = m;
#pragma unroll
                    for (int j = 0; j < cfg::NT; j++) mx = fmaxf(mx, fmaxf(s[i][j][2 * hf], s[i][j][2 * hf + 1]));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                    /* a row that has seen no key yet keeps m = -inf: subtract 0 instead */
                    const float mu = mx == -INFINITY ? 0.f : mx;
                    const float alpha = ex2((m - mu) * c);   /* 0 on the first key */
                    const float mc = mu * c;
                    float sum = 0.f;
#pragma unroll
                    for (int j = 0; j < cfg::NT; j++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const float p = ex2(fmaf(s[i][j][2 * hf + e], c, -mc));
                            s[i][j][2 * hf + e] = p;
                            sum += p;
                        }
                    l_run[i0 + i][hf] = fmaf(l_run[i0 + i][hf], alpha, sum);
                    m = mx;
#pragma unroll
                    for (int j = 0; j < dd::DT; j++) {
                        acc[i0 + i][j][2 * hf] *= alpha;
                        acc[i0 + i][j][2 * hf + 1] *= alpha;
                    }
                }
            /* P in BF16: tiles 2kk and 2kk+1 of S are the A fragment of k16 step kk of P V */
#pragma unroll
            for (int i = 0; i < IG; i++)
#pragma unroll
                for (int kk = 0; kk < cfg::KK; kk++) {
                    pa[i0 + i][kk][0] = pack_bf16(s[i][2 * kk][0], s[i][2 * kk][1]);
                    pa[i0 + i][kk][1] = pack_bf16(s[i][2 * kk][2], s[i][2 * kk][3]);
                    pa[i0 + i][kk][2] = pack_bf16(s[i][2 * kk + 1][0], s[i][2 * kk + 1][1]);
                    pa[i0 + i][kk][3] = pack_bf16(s[i][2 * kk + 1][2], s[i][2 * kk + 1][3]);
                }
        }

        if (cfg::STAGES == 2 && t + 1 < n_tiles) {
            /* V_{t+1}: issued here rather than with K_{t+1}, which keeps fewer addresses live
             * beside S */
            const int nk = kv0 + cfg::BKV, nb = (t + 1) & 1;
            ld.template tile<cfg::BKV>(sV + nb * dd::KV_BYTES, g.v, vt + nk * g.vs[2], rpp * g.vs[2], g.seq_k - nk);
            cp_async_commit();
        }
        if (cfg::STAGES == 1) {
            /* V_t landed; every warp is done with K_t: load K_{t+1} over it */
            cp_async_wait_all();
            __syncthreads();
            if (t + 1 < n_tiles) {
                const int nk = kv0 + cfg::BKV;
                ld.template tile<cfg::BKV>(sK, g.k, kt + nk * g.ks[2], rpp * g.ks[2], g.seq_k - nk);
            }
            cp_async_commit();
        }

        /* O += P V_t */
#pragma unroll
        for (int kk = 0; kk < cfg::KK; kk++) {
#pragma unroll
            for (int dp = 0; dp < dd::DT / 2; dp++) {
                uint32_t bv[4];
                ldsm_x4_t(bv, vb + kk * 16 * dd::RB + (v_lm ^ (uint32_t)(dp * 32)));
#pragma unroll
                for (int i = 0; i < cfg::MI; i++) {
                    mma(acc[i][2 * dp], pa[i][kk], bv[0], bv[1]);
                    mma(acc[i][2 * dp + 1], pa[i][kk], bv[2], bv[3]);
                }
            }
        }
    }
    cp_async_wait_all();   /* nothing is pending but empty groups; leave none behind */

    /* Epilogue: O = acc / l (the quad's partial sums added), LSE = m scale + ln l. */
    const int col = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < cfg::MI; i++)
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            float l = l_run[i][hf];
            l += __shfl_xor_sync(0xffffffffu, l, 1);
            l += __shfl_xor_sync(0xffffffffu, l, 2);
            const int row = row_g + i * 16 + hf * 8;
            if (row >= g.seq_q) continue;
            const float inv = 1.f / l;
            __nv_bfloat16 *op = g.o + b * g.os[0] + h * g.os[1] + (int64_t)row * g.os[2] + col;
#pragma unroll
            for (int j = 0; j < dd::DT; j++)
                *reinterpret_cast<__nv_bfloat162 *>(op + j * 8) =
                    __floats2bfloat162_rn(acc[i][j][2 * hf] * inv, acc[i][j][2 * hf + 1] * inv);
            if ((lane & 3) == 0)
                g.lse[b * g.ls[0] + h * g.ls[1] + row] = m_run[i][hf] * g.scale + logf(l);
        }
}

/* ---- the variant --------------------------------------------------------------------------- */

/* Shared memory of the kernel for head dimension d, 0 where it is not built. */
int smem_for(int64_t d)
{
    return (d == 64 || d == 128 || d == 256) && built((int)d) ? smem_bytes((int)d) : 0;
}

using tbv::no;

int fa2_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::attention_basics(p, why, len)) return 0;
    const tb_attention *a = &p->attention;
    if (a->head_dim != 64 && a->head_dim != 128 && a->head_dim != 256)
        return no(why, len, "head_dim must be 64, 128 or 256");
    if (smem_for(a->head_dim) == 0) {
        if (cfg::MI != 1)
            return no(why, len, "head_dim 256 not built at this point: %d rows a warp would need "
                      "256 accumulator floats a thread (the 16-rows-a-warp points take it)", cfg::MW);
        return no(why, len, "head_dim 256 not built at this point: its buffers need %d KB of "
                  "shared memory, above 227 KB", smem_bytes(256) / 1024);
    }
    if (a->causal > 1) return no(why, len, "causal must be 0 or 1");
    if (a->causal && a->seq_q > a->seq_k) return no(why, len, "causal needs seq_q <= seq_k");
    if (!(a->scale > 0.0) || !isfinite(a->scale)) return no(why, len, "scale must be finite and > 0");
    if (a->seq_q > (1 << 30) || a->seq_k > (1 << 30)) return no(why, len, "seq_q and seq_k must be at most 2^30");
    if (a->batch > 65535 || a->heads > 65535) return no(why, len, "batch and heads must be at most 65535");
    for (int t = 0; t < 3; t++) {
        if (a->q_stride[t] < 0 || a->k_stride[t] < 0 || a->v_stride[t] < 0 || a->o_stride[t] < 0)
            return no(why, len, "negative strides");
        if (a->q_stride[t] % 8 || a->k_stride[t] % 8 || a->v_stride[t] % 8)
            return no(why, len, "q, k and v strides must be multiples of 8 elements (16-byte cp.async)");
        if (a->o_stride[t] % 2) return no(why, len, "o strides must be even (bf16x2 stores)");
    }
    if (a->lse_stride[0] < 0 || a->lse_stride[1] < 0) return no(why, len, "negative lse strides");
    return 1;
}

template <int D>
cudaError_t set_smem()
{
    if constexpr (built(D)) {
        cudaError_t e = cudaFuncSetAttribute(fa2_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             dims<D>::SMEM);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(fa2_kernel<D>, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     (int)cudaSharedmemCarveoutMaxShared);
        return e;
    } else {
        return cudaErrorInvalidValue;   /* supports() declined it */
    }
}

int fa2_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    *state = NULL;
    const int need = smem_for(p->attention.head_dim);
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess && need > optin) {
        snprintf(msg, len, "needs %d bytes of shared memory a CTA, the device allows %d", need, optin);
        return 1;
    }
    if (e == cudaSuccess) {
        switch (p->attention.head_dim) {
        case 64: e = set_smem<64>(); break;
        case 128: e = set_smem<128>(); break;
        default: e = set_smem<256>(); break;
        }
    }
    if (e != cudaSuccess) {
        snprintf(msg, len, "cannot set the kernel's shared memory (%d bytes): %s", need,
                 cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

template <int D>
int launch_d(const args &g, const dim3 &grid, cudaStream_t s)
{
    if constexpr (built(D)) {
        fa2_kernel<D><<<grid, cfg::THREADS, dims<D>::SMEM, s>>>(g);
        return tbv::last_launch_error();
    } else {
        (void)g; (void)grid; (void)s;
        return (int)cudaErrorInvalidValue;
    }
}

int fa2_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
               size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    const tb_attention *a = &p->attention;
    args g;
    g.q = (const __nv_bfloat16 *)io->in[0];
    g.k = (const __nv_bfloat16 *)io->in[1];
    g.v = (const __nv_bfloat16 *)io->in[2];
    g.o = (__nv_bfloat16 *)io->out[0];
    g.lse = (float *)io->out[1];
    g.heads = (int)a->heads;
    g.group = (int)(a->heads / a->heads_kv);
    g.seq_q = (int)a->seq_q;
    g.seq_k = (int)a->seq_k;
    g.n_qtiles = (int)((a->seq_q + cfg::BQ - 1) / cfg::BQ);
    g.causal = a->causal ? 1 : 0;
    for (int t = 0; t < 3; t++) {
        g.qs[t] = a->q_stride[t]; g.ks[t] = a->k_stride[t];
        g.vs[t] = a->v_stride[t]; g.os[t] = a->o_stride[t];
    }
    g.ls[0] = a->lse_stride[0]; g.ls[1] = a->lse_stride[1];
    g.scale = (float)a->scale;
    g.scale_log2 = (float)(a->scale * 1.4426950408889634);
    const dim3 grid((unsigned)g.n_qtiles, (unsigned)a->heads, (unsigned)a->batch);
    const cudaStream_t s = (cudaStream_t)stream;
    switch (a->head_dim) {
    case 64: return launch_d<64>(g, grid, s);
    case 128: return launch_d<128>(g, grid, s);
    case 256: return launch_d<256>(g, grid, s);
    default: return (int)cudaErrorInvalidValue;
    }
}


const tb_param fa2_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("tile_m", cfg::BQ),
    TB_PARAM_INT("tile_n", cfg::BKV),
    TB_PARAM_INT("stages", cfg::STAGES),
    TB_PARAM_INT("warps", cfg::W),
    TB_PARAM_END
};

char fa2_name[96];

const tb_variant fa2_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), fa2_name, "attn_fa2", fa2_params,
    TB_SASS, fa2_supports, NULL, fa2_launch, fa2_setup, NULL, NULL, tbv::attention_extension
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(fa2_variant, fa2_name, "attn_fa2", fa2_params)
