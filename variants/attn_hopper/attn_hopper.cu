/* attn_hopper.cu - attn_hopper: FlashAttention-3-style attention forward on Hopper (issue 33):
 * TMA, mbarriers, a producer warpgroup and two wgmma consumer warpgroups; one source for the
 * whole grid. Written without a GPU; first run on an H100 in the sixteenth session (every point
 * ok/passed on all 26 shapes of the `attn` set, 646-707 TFLOP/s non-causal at head dim 128:
 * docs/perf.md), since when its best point (128x128, two stages, cooperative) ships in the
 * default folder and the others in the grid's.
 *
 * Owns the kernel, its host side (supports, setup, launch, the 4-D tensor maps) and the variant
 * of one grid point. Reuses variants/wgmma/wgmma_ptx.cuh (mbarriers, TMA prefetch, named
 * barriers, setmaxnreg, wgmma fence/commit/wait, the 128-byte-swizzle descriptor, m64n128k16
 * from shared memory); attn_wgmma.cuh adds m64n64k16 from shared memory and the register-A
 * forms m64n64k16 / m64n128k16 with an MN-major B.
 *
 * One CTA per (128-row q tile, head, batch), q tiles taken from the last (the longest under
 * the causal mask) first; 384 threads, one CTA per SM:
 *   warpgroup 0, the producer (setmaxnreg.dec 40): one thread loads Q once (D/64 boxes of 64 x
 *     128 through a 4-D tensor map over (d, seq, head, batch): rows past seq_q are zero-filled
 *     by TMA, never the next head's), then streams K and V tiles of BKV keys (D/64 boxes of
 *     64 x BKV each, head h / (heads / heads_kv)) into a STAGES-deep ring, K and V each with a
 *     full and an empty mbarrier per slot (K_t can be consumed before V_t lands);
 *   warpgroups 1 and 2, the consumers (setmaxnreg.inc 232), 64 query rows each, both walking
 *     the same K/V tiles. Per kv tile t, with the P V product deferred by one tile (FA3's
 *     intra-warpgroup overlap):
 *       issue S_t = Q K_t^T (D/16 x wgmma m64n<BKV>k16, Q and K K-major from shared memory) and
 *             O += P_{t-1} V_{t-1} (BKV/16 x wgmma m64n<D>k16, P from registers, V MN-major);
 *       wait for S_t only (wgmma.wait_group 1), give K_t's slot back;
 *       mask (only tiles crossing seq_k or the diagonal), online softmax in FP32: running max m
 *             (raw scores), p = 2^(s c - m c) with c = scale log2(e) (one FMA, ex2.approx),
 *             alpha = 2^((m_old - m_new) c), l = l alpha + rowsum(p) (each thread its columns,
 *             the quad added at the end) -- all while P_{t-1} V_{t-1} runs on the tensor cores;
 *       wait for P_{t-1} V_{t-1} (wait_group 0), give V_{t-1}'s slot back, O *= alpha, pack p
 *             into P_t (BF16 A fragments, see below).
 *     pingpong 1 (FA3's inter-warpgroup schedule): two named barriers order the consumers'
 *     GEMM issues, so one warpgroup's softmax runs while the other's GEMMs do: consumer c waits
 *     for its turn (bar.sync 1 + c), issues S_t and P_{t-1} V_{t-1}, hands the turn over
 *     (bar.arrive 2 - c). Consumer 1 arrives once up front and skips its last hand-over, so
 *     every bar.sync has exactly one matching bar.arrive (no barrier left half-arrived).
 *     pingpong 0: the consumers issue whenever their data is there.
 *   Epilogue: O / l rounded once to BF16, stored straight from the accumulators (bf16x2, rows
 *     past seq_q skipped: any O stride that is even), LSE = m scale + ln l (natural log, FP32),
 *     as variant.h (growth 2) and reference/ref_attention.cu define it.
 *
 * Fragment mapping (checked on the CPU by tests/attn_hopper_model.py): the m64nNk16 FP32
 * accumulator gives thread (warp w, lane l) rows 16w + l/4 (+8) and, per n8 column block j,
 * d[4j + {0,1}] = row g, columns 8j + 2(l%4) + {0,1}; d[4j + {2,3}] = row g + 8. The A fragment
 * of a k16 step (register form) is the mma.sync m16n8k16 one per warp: a0 = (g, 2(l%4)), a1 =
 * (g + 8, 2(l%4)), a2 = (g, 8 + 2(l%4)), a3 = (g + 8, 8 + 2(l%4)), each two consecutive k. So
 * k16 step kk of P is pack(d[8kk + 0..1]), pack(d[8kk + 2..3]), pack(d[8kk + 4..5]),
 * pack(d[8kk + 6..7]): no shuffle, as in FA3 and attn_fa2.
 *
 * Shared memory (the 128-byte-swizzle layout of wgmma_kernel.cuh: rows of 128 bytes, 8-row
 * atoms of 1024, every block 1024-aligned): Q as D/64 blocks of 128 rows x 64 d (K-major A,
 * consumer c at + c 64 rows, a k16 step + 32 bytes); each K and V slot as D/64 blocks of BKV
 * keys x 64 d. K is K-major B for S (a k16 step + 32 bytes in its block, the next 64 d the next
 * block); V is MN-major B for P V (N = d: LBO = the block pitch BKV x 128 bytes between 64-wide
 * d blocks, SBO 1024 between 8-key groups, a k16 step + 16 keys = 2048 bytes). Bytes: 1024
 * alignment slack + Q (128 D 2) + STAGES x 2 x (BKV D 2) + (1 + 4 STAGES) mbarriers of 8:
 *   D = 128, BKV 128: s2 164936, s3 230504 (227 KB is 232448); D = 64, BKV 128: s2 83016.
 * Registers (consumer, D = 128, BKV = 128): O 64 + S 64 + P 32 = 160 live FP32/b32 through the
 * loop, + m, l, addresses; setmaxnreg gives the consumers 232 (the producer 40: the GEMM
 * family's split; FA3 uses 24 / 240). ptxas -v of every point (docs/wgmma-notes.md,
 * "Attention"): 168 registers at entry (__launch_bounds__(384, 1)), 0 spills, no warning.
 *
 * Causal (bottom-right: row i sees keys j <= i + seq_k - seq_q): the CTA stops at the last tile
 * its last real row sees (fully masked tiles are never loaded nor multiplied); each consumer
 * masks elementwise from the first tile that crosses its own first row's diagonal or seq_k.
 * Both consumers walk the same tiles (the producer's ring needs both releases), so consumer 0
 * may multiply one tile that is fully masked for its rows (p = 0 there, m and l unchanged).
 *
 * supports(): BF16 Q/K/V/O, FP32 LSE and accumulation, BHSD or BSHD through strides, head_dim
 * 64 or 128 (256 declined: O alone would be 128 FP32 a consumer thread beside S and P, and a
 * K/V pair 128 KB a stage), heads_kv dividing heads, Q/K/V strides positive (for dimensions
 * longer than 1) multiples of 8 elements (a TMA global stride is a multiple of 16 bytes), O
 * strides even, causal only with seq_q <= seq_k. Base addresses must be 16-byte aligned (TMA):
 * as in the wgmma family that is the host's (cudaMalloc'd buffers); launch() returns the
 * driver's error (1000 + CUresult) if a map cannot be encoded.
 *
 * Known risks (to check first on the GPU; docs/wgmma-notes.md, "Attention"): the V descriptor
 * (MN-major, LBO = the d-block pitch BKV x 128: 16384 at BKV 128, where the GEMM's MN-major B
 * had 8192); the 4-D tensor maps with non-monotonic strides (BSHD: head stride < seq stride);
 * the register-A wgmma form and its accumulator/A-fragment mapping (never run in this
 * repository before); the pingpong barrier accounting; ptxas serialising wgmma (C7510-C7520
 * warnings: none at the built points).
 *
 * The build instantiates one library per grid point (CMakeLists.txt): TB_BKV (kv tile, 64 or
 * 128), TB_STAGES (2..), TB_PINGPONG (0/1); BQ is 128 (two consumers of 64 rows). The variant is
 * named attn_hopper_bf16_128x<BKV>_s<STAGES>_<cooperative|pingpong>.
 */
#include "../common/attn_common.cuh"
#include "../common/gemm_common.cuh"

#include <cuda.h>           /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>   /* PFN_cuTensorMapEncodeTiled */
#include <math.h>
#include <stdlib.h>

#if !defined(TB_BKV) || !defined(TB_STAGES) || !defined(TB_PINGPONG)
#error "attn_hopper.cu needs TB_BKV, TB_STAGES and TB_PINGPONG (see CMakeLists.txt)"
#endif
#define TB_EXP_SUSPEND 0    /* wgmma_ptx.cuh's mbarrier wait: no suspend hint */
#include "../wgmma/wgmma_ptx.cuh"
#include "../wgmma/tma_encode.cuh"   /* g_encode, find_encode() */
#include "attn_wgmma.cuh"

namespace {

template <int BKV_, int STAGES_, int PP_>
struct config {
    static constexpr int BQ = 128, BKV = BKV_, STAGES = STAGES_;
    static constexpr bool PINGPONG = PP_ != 0;
    static constexpr int THREADS = 384;                 /* producer + 2 consumer warpgroups */
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;   /* the GEMM family's split */
    static_assert(BKV == 64 || BKV == 128, "kv tile 64 or 128");
    static_assert(STAGES >= 2, "the ring needs at least 2 stages");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536, "register file");
};
using cfg = config<TB_BKV, TB_STAGES, TB_PINGPONG>;

/* Named barriers (0 is __syncthreads): BAR_PP + c, "consumer c may issue its GEMMs". */
constexpr int BAR_PP = 1;

/* Shared memory layout for head dim D (offsets from the 1024-aligned base). */
template <int D>
struct dims {
    static constexpr int KB = D / 64;                   /* 64-wide d blocks */
    static constexpr int Q_BLOCK = cfg::BQ * 128, KV_BLOCK = cfg::BKV * 128;
    static constexpr int Q_BYTES = KB * Q_BLOCK, KV_BYTES = KB * KV_BLOCK;
    static constexpr int OFF_K = Q_BYTES, OFF_V = OFF_K + cfg::STAGES * KV_BYTES;
    static constexpr int OFF_BAR = OFF_V + cfg::STAGES * KV_BYTES;
    static constexpr int N_BARS = 1 + 4 * cfg::STAGES;  /* q, full k/v, empty k/v */
    static constexpr int SMEM = 1024 + OFF_BAR + 8 * N_BARS;
    static constexpr int S_ACC = cfg::BKV / 2, O_ACC = D / 2;
    static constexpr int KS = D / 16, KK = cfg::BKV / 16;   /* k16 steps of S, of P V */
    /* V as MN-major B: leading byte offset = the pitch of the 64-wide d blocks */
    static constexpr uint32_t V_LBO = (uint32_t)KV_BLOCK >> 4;
};
constexpr bool built(int d)
{
    return (d == 64 || d == 128) && (d == 64 ? dims<64>::SMEM : dims<128>::SMEM) <= 227 * 1024;
}

/* The kernel's one parameter (__grid_constant__: the maps stay in parameter space). */
struct kparams {
    CUtensorMap q, k, v;            /* 4-D: (d, seq, head, batch), boxes 64 x rows x 1 x 1 */
    __nv_bfloat16 *o;
    float *lse;
    int64_t os[3], ls[2];
    int seq_q, seq_k, group, n_qtiles, causal;
    float scale, scale_log2;
};

/* ---- attention-specific PTX ------------------------------------------------------------ */

/* Box at (x = d, y = seq row, z = head, w = batch) of a 4-D map into shared dst. */
__device__ __forceinline__ void tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar,
                                            int x, int y, int z, int w)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4, %5, %6}], [%2];\n"
                 :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(x), "r"(y), "r"(z), "r"(w)
                 : "memory");
}

__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

/* One kv tile of S into s: D/16 k16 steps, Q (this consumer's 64 rows, dq) times K (slot at
 * dk), both K-major; the first step overwrites s. */
template <int D>
__device__ __forceinline__ void gemm_s(float (&s)[dims<D>::S_ACC], uint32_t dq, uint32_t dk)
{
    using dd = dims<D>;
#pragma unroll
    for (int ks = 0; ks < dd::KS; ks++) {
        const uint32_t a = dq + (uint32_t)(((ks / 4) * dd::Q_BLOCK + (ks % 4) * 32) >> 4);
        const uint32_t b = dk + (uint32_t)(((ks / 4) * dd::KV_BLOCK + (ks % 4) * 32) >> 4);
        if constexpr (cfg::BKV == 128) wgmma_n128<0, 0>(s, a, b, ks > 0);
        else wgmma_ss_n64(s, a, b, ks > 0);
    }
}

/* O += P V for one kv tile: BKV/16 k16 steps, P from registers, V (slot at dv) MN-major. */
template <int D>
__device__ __forceinline__ void gemm_pv(float (&o)[dims<D>::O_ACC], const uint32_t (&pr)[dims<D>::KK][4],
                                        uint32_t dv)
{
    using dd = dims<D>;
#pragma unroll
    for (int kk = 0; kk < dd::KK; kk++) {
        const uint32_t b = dv + (uint32_t)((kk * 16 * 128) >> 4);
        if constexpr (D == 128) wgmma_rs_n128(o, pr[kk], b);
        else wgmma_rs_n64(o, pr[kk], b);
    }
}

/* ---- the kernel -------------------------------------------------------------------------- */

template <int D>
__global__ void __launch_bounds__(cfg::THREADS, 1) attn_kernel(const __grid_constant__ kparams p)
{
    using dd = dims<D>;
    constexpr int S = cfg::STAGES;
    extern __shared__ __align__(1024) unsigned char smem_raw[];
    const uint32_t base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const uint32_t sQ = base, sK = base + dd::OFF_K, sV = base + dd::OFF_V;
    const uint32_t qbar = base + dd::OFF_BAR;
    const uint32_t fullk = qbar + 8, fullv = fullk + 8 * S;
    const uint32_t emptyk = fullv + 8 * S, emptyv = emptyk + 8 * S;

    const int wg = threadIdx.x >> 7, wtid = threadIdx.x & 127;
    const int qt = p.n_qtiles - 1 - (int)blockIdx.x;    /* the longest (causal) tiles first */
    const int h = (int)blockIdx.y, b = (int)blockIdx.z, hk = h / p.group;
    const int q0 = qt * cfg::BQ;
    const int diag = p.seq_k - p.seq_q;                   /* row i sees keys j <= i + diag */
    /* kv tiles: up to the last key the CTA's last real row sees */
    int n_tiles = (p.seq_k + cfg::BKV - 1) / cfg::BKV;
    if (p.causal) n_tiles = min(n_tiles, (min(q0 + cfg::BQ, p.seq_q) - 1 + diag) / cfg::BKV + 1);

    if (threadIdx.x == 0) {
        mbar_init(qbar, 1);
        for (int s = 0; s < S; s++) {
            mbar_init(fullk + 8 * s, 1);
            mbar_init(fullv + 8 * s, 1);
            mbar_init(emptyk + 8 * s, 2);               /* one arrive per consumer */
            mbar_init(emptyv + 8 * s, 2);
        }
        fence_mbar_init();
    }
    __syncthreads();

    if (wg == 0) {
        /* ---- producer ---- */
        setmaxnreg_dec<cfg::PRODUCER_REGS>();
        if (wtid == 0) {
            tma_prefetch(&p.q);
            tma_prefetch(&p.k);
            tma_prefetch(&p.v);
            mbar_expect_tx(qbar, dd::Q_BYTES);
#pragma unroll
            for (int kb = 0; kb < dd::KB; kb++) tma_load_4d(sQ + kb * dd::Q_BLOCK, &p.q, qbar, kb * 64, q0, h, b);
            int slot = 0;
            uint32_t phase = 0;
            for (int t = 0; t < n_tiles; t++) {
                const int kv0 = t * cfg::BKV;
                mbar_wait(emptyk + 8 * slot, phase ^ 1u);
                mbar_expect_tx(fullk + 8 * slot, dd::KV_BYTES);
#pragma unroll
                for (int kb = 0; kb < dd::KB; kb++)
                    tma_load_4d(sK + slot * dd::KV_BYTES + kb * dd::KV_BLOCK, &p.k, fullk + 8 * slot, kb * 64, kv0, hk, b);
                mbar_wait(emptyv + 8 * slot, phase ^ 1u);
                mbar_expect_tx(fullv + 8 * slot, dd::KV_BYTES);
#pragma unroll
                for (int kb = 0; kb < dd::KB; kb++)
                    tma_load_4d(sV + slot * dd::KV_BYTES + kb * dd::KV_BLOCK, &p.v, fullv + 8 * slot, kb * 64, kv0, hk, b);
                if (++slot == S) { slot = 0; phase ^= 1u; }
            }
        }
        return;
    }

    /* ---- consumers ---- */
    setmaxnreg_inc<cfg::CONSUMER_REGS>();
    const int c = wg - 1;
    const int lane = wtid & 31, warp = wtid >> 5;
    const int row_g = q0 + c * 64 + warp * 16 + (lane >> 2);   /* this thread's rows: +0, +8 */
    int first_masked = p.seq_k / cfg::BKV;
    if (p.causal) first_masked = min(first_masked, (q0 + c * 64 + diag + 1) / cfg::BKV);
    const uint32_t dq = desc_lo<1u>(sQ + c * 64 * 128);
    const float sc = p.scale_log2;

    float o[dd::O_ACC];
#pragma unroll
    for (int i = 0; i < dd::O_ACC; i++) o[i] = 0.f;
    float s[dd::S_ACC];
    uint32_t pr[dd::KK][4];
    float m_run[2] = { -INFINITY, -INFINITY }, l_run[2] = { 0.f, 0.f };

    auto kslot = [&](int t) { return (uint32_t)(t % S); };
    auto kphase = [&](int t) { return (uint32_t)((t / S) & 1); };
    auto desc_k = [&](int t) { return desc_lo<1u>(sK + kslot(t) * dd::KV_BYTES); };
    auto desc_v = [&](int t) { return desc_lo<dd::V_LBO>(sV + kslot(t) * dd::KV_BYTES); };
    auto turn = [&]() { if (cfg::PINGPONG) bar_sync(BAR_PP + c, 256); };
    auto hand_over = [&]() { if (cfg::PINGPONG) bar_arrive(BAR_PP + (1 - c), 256); };
    auto release = [&](uint32_t bar) { if (wtid == 0) mbar_arrive(bar); };

    /* mask and online softmax of tile t: s becomes p (FP32), alpha the rescale of O and l */
    auto softmax = [&](int t, float (&alpha)[2]) {
        if (t >= first_masked) {
            const int key0 = t * cfg::BKV + (lane & 3) * 2;
#pragma unroll
            for (int hf = 0; hf < 2; hf++) {
                int lim = p.seq_k;
                if (p.causal) lim = min(lim, row_g + hf * 8 + diag + 1);
                lim -= key0;
#pragma unroll
                for (int j = 0; j < cfg::BKV / 8; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++)
                        if (j * 8 + e >= lim) s[4 * j + 2 * hf + e] = -INFINITY;
            }
        }
#pragma unroll
        for (int hf = 0; hf < 2; hf++) {
            float mx = m_run[hf];
#pragma unroll
            for (int j = 0; j < cfg::BKV / 8; j++) mx = fmaxf(mx, fmaxf(s[4 * j + 2 * hf], s[4 * j + 2 * hf + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            /* a row that has seen no key yet keeps m = -inf: subtract 0 instead */
            const float mu = mx == -INFINITY ? 0.f : mx;
            alpha[hf] = ex2((m_run[hf] - mu) * sc);      /* 0 on the first key */
            const float mc = mu * sc;
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < cfg::BKV / 8; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float v = ex2(fmaf(s[4 * j + 2 * hf + e], sc, -mc));
                    s[4 * j + 2 * hf + e] = v;
                    sum += v;
                }
            l_run[hf] = fmaf(l_run[hf], alpha[hf], sum);
            m_run[hf] = mx;
        }
    };
    /* O *= alpha (rows g and g + 8), then P = bf16(p) as A fragments (see the top) */
    auto rescale_pack = [&](const float (&alpha)[2]) {
#pragma unroll
        for (int j = 0; j < D / 8; j++) {
            o[4 * j + 0] *= alpha[0];
            o[4 * j + 1] *= alpha[0];
            o[4 * j + 2] *= alpha[1];
            o[4 * j + 3] *= alpha[1];
        }
#pragma unroll
        for (int kk = 0; kk < dd::KK; kk++) {
            pr[kk][0] = pack_bf16(s[8 * kk + 0], s[8 * kk + 1]);
            pr[kk][1] = pack_bf16(s[8 * kk + 2], s[8 * kk + 3]);
            pr[kk][2] = pack_bf16(s[8 * kk + 4], s[8 * kk + 5]);
            pr[kk][3] = pack_bf16(s[8 * kk + 6], s[8 * kk + 7]);
        }
    };

    /* The registers a wgmma reads or writes (O, S, P), pinned next to every issue and wait, as
     * CUTLASS's warpgroup_fence_operand does (fifteenth session's review; not yet run on a
     * GPU): an empty asm that "changes" each one, so the
     * compiler moves none of their arithmetic across the wgmma or the wait (the asm of
     * wgmma_wait has a memory clobber, which orders memory, not registers). */
    auto pin_s = [&]() {
#pragma unroll
        for (int i = 0; i < dd::S_ACC; i++) asm volatile("" : "+f"(s[i]) :: "memory");
    };
    auto pin = [&]() {   /* O, P and S: only where no wgmma is in flight */
#pragma unroll
        for (int i = 0; i < dd::O_ACC; i++) asm volatile("" : "+f"(o[i]) :: "memory");
#pragma unroll
        for (int kk = 0; kk < dd::KK; kk++)
#pragma unroll
            for (int x = 0; x < 4; x++) asm volatile("" : "+r"(pr[kk][x]) :: "memory");
        pin_s();
    };

    if (cfg::PINGPONG && c == 1) bar_arrive(BAR_PP + 0, 256);   /* consumer 0 goes first */
    mbar_wait(qbar, 0);

    /* tile 0: S_0 alone */
    {
        float alpha[2];
        mbar_wait(fullk + 8 * kslot(0), kphase(0));
        turn();
        pin();
        wgmma_fence();
        gemm_s<D>(s, dq, desc_k(0));
        wgmma_commit();
        hand_over();
        wgmma_wait<0>();
        pin();
        release(emptyk + 8 * kslot(0));
        softmax(0, alpha);
        rescale_pack(alpha);
    }
    /* tiles 1 ..: S_t with P_{t-1} V_{t-1} */
    for (int t = 1; t < n_tiles; t++) {
        float alpha[2];
        mbar_wait(fullk + 8 * kslot(t), kphase(t));
        mbar_wait(fullv + 8 * kslot(t - 1), kphase(t - 1));
        turn();
        pin();
        wgmma_fence();
        gemm_s<D>(s, dq, desc_k(t));
        wgmma_commit();
        gemm_pv<D>(o, pr, desc_v(t - 1));
        wgmma_commit();
        hand_over();
        wgmma_wait<1>();                                /* S_t */
        pin_s();                                        /* P V still runs on O and P */
        release(emptyk + 8 * kslot(t));
        softmax(t, alpha);
        wgmma_wait<0>();                                /* P_{t-1} V_{t-1} */
        pin();
        release(emptyv + 8 * kslot(t - 1));
        rescale_pack(alpha);
    }
    /* the last P V */
    {
        const int t = n_tiles - 1;
        mbar_wait(fullv + 8 * kslot(t), kphase(t));
        turn();
        pin();
        wgmma_fence();
        gemm_pv<D>(o, pr, desc_v(t));
        wgmma_commit();
        if (c == 0) hand_over();                        /* consumer 1's last one has no taker */
        wgmma_wait<0>();
        pin();
        release(emptyv + 8 * kslot(t));
    }

    /* Epilogue: O = acc / l (the quad's partial sums added), LSE = m scale + ln l. */
    const int col = (lane & 3) * 2;
#pragma unroll
    for (int hf = 0; hf < 2; hf++) {
        float l = l_run[hf];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const int row = row_g + hf * 8;
        if (row >= p.seq_q) continue;
        const float inv = 1.f / l;
        __nv_bfloat16 *op = p.o + b * p.os[0] + h * p.os[1] + (int64_t)row * p.os[2] + col;
#pragma unroll
        for (int j = 0; j < D / 8; j++)
            *reinterpret_cast<__nv_bfloat162 *>(op + j * 8) =
                __floats2bfloat162_rn(o[4 * j + 2 * hf] * inv, o[4 * j + 2 * hf + 1] * inv);
        if ((lane & 3) == 0) p.lse[b * p.ls[0] + h * p.ls[1] + row] = m_run[hf] * p.scale + logf(l);
    }
}

/* ---- host: tensor maps ------------------------------------------------------------------- */

/* g_encode and find_encode(): ../wgmma/tma_encode.cuh, included above */

/* A 4-D BF16 map over (d, seq, head, batch) from the problem's element strides st[3] in
 * tb_attention's order (batch, head, seq); boxes of 64 d x rows x 1 x 1, 128-byte swizzle,
 * out-of-bounds elements read as zero. A dimension of extent 1 gets a stride TMA accepts
 * (d elements) whatever the problem gave it. */
CUresult encode_4d(CUtensorMap *map, const void *ptr, int64_t d, int64_t seq, int64_t heads,
                   int64_t batch, const int64_t st[3], uint32_t rows)
{
    const int64_t ext[3] = { seq, heads, batch }, el[3] = { st[2], st[1], st[0] };
    const cuuint64_t dims4[4] = { (cuuint64_t)d, (cuuint64_t)seq, (cuuint64_t)heads, (cuuint64_t)batch };
    cuuint64_t strides[3];
    for (int i = 0; i < 3; i++)
        strides[i] = (cuuint64_t)((ext[i] > 1 ? el[i] : d) * 2);
    const cuuint32_t box[4] = { 64, rows, 1, 1 };
    const cuuint32_t estr[4] = { 1, 1, 1, 1 };
    return g_encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4, const_cast<void *>(ptr), dims4, strides,
                    box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* ---- the variant --------------------------------------------------------------------------- */

int smem_for(int64_t d)
{
    return d == 64 && built(64) ? dims<64>::SMEM : d == 128 && built(128) ? dims<128>::SMEM : 0;
}

using tbv::no;

int hop_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::attention_basics(p, why, len)) return 0;
    const tb_attention *a = &p->attention;
    if (a->head_dim == 256)
        return no(why, len, "head_dim 256 not built: O alone would take 128 FP32 registers a "
                  "consumer thread beside S and P (232 here), and a K/V pair 128 KB a stage");
    if (a->head_dim != 64 && a->head_dim != 128) return no(why, len, "head_dim must be 64 or 128");
    if (smem_for(a->head_dim) == 0)
        return no(why, len, "head_dim %d not built at this point: its buffers exceed 227 KB", (int)a->head_dim);
    if (a->causal > 1) return no(why, len, "causal must be 0 or 1");
    if (a->causal && a->seq_q > a->seq_k) return no(why, len, "causal needs seq_q <= seq_k");
    if (!(a->scale > 0.0) || !isfinite(a->scale)) return no(why, len, "scale must be finite and > 0");
    if (a->seq_q > (1 << 30) || a->seq_k > (1 << 30)) return no(why, len, "seq_q and seq_k must be at most 2^30");
    if (a->batch > 65535 || a->heads > 65535) return no(why, len, "batch and heads must be at most 65535");
    if ((a->seq_q + cfg::BQ - 1) / cfg::BQ > 0x7fffffff) return no(why, len, "too many q tiles");
    const int64_t ext[3] = { a->batch, a->heads, a->seq_q }, ext_kv[3] = { a->batch, a->heads_kv, a->seq_k };
    for (int t = 0; t < 3; t++) {
        if (a->q_stride[t] < 0 || a->k_stride[t] < 0 || a->v_stride[t] < 0 || a->o_stride[t] < 0)
            return no(why, len, "negative strides");
        if (a->q_stride[t] % 8 || a->k_stride[t] % 8 || a->v_stride[t] % 8)
            return no(why, len, "q, k and v strides must be multiples of 8 elements (TMA: 16 bytes)");
        if ((ext[t] > 1 && a->q_stride[t] == 0) || (ext_kv[t] > 1 && (a->k_stride[t] == 0 || a->v_stride[t] == 0)))
            return no(why, len, "q, k and v strides must be > 0 along dimensions longer than 1 (TMA)");
        if (a->q_stride[t] >= ((int64_t)1 << 39) || a->k_stride[t] >= ((int64_t)1 << 39) ||
            a->v_stride[t] >= ((int64_t)1 << 39))
            return no(why, len, "q, k and v strides must be below 2^39 elements (TMA: 2^40 bytes)");
        if (a->o_stride[t] % 2) return no(why, len, "o strides must be even (bf16x2 stores)");
    }
    if (a->lse_stride[0] < 0 || a->lse_stride[1] < 0) return no(why, len, "negative lse strides");
    return 1;
}

struct hop_state {
    kparams p;                      /* 64-byte aligned (posix_memalign): the maps inside */
    const void *q, *k, *v;          /* the buffers the maps were encoded for */
};

template <int D>
cudaError_t set_smem()
{
    if constexpr (built(D)) {
        return cudaFuncSetAttribute(attn_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, dims<D>::SMEM);
    } else {
        return cudaErrorInvalidValue;   /* supports() declined it */
    }
}

int hop_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    *state = NULL;
    if (find_encode(msg, len)) return 1;
    const int need = smem_for(p->attention.head_dim);
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess && need > optin) {
        snprintf(msg, len, "needs %d bytes of shared memory a CTA, the device allows %d", need, optin);
        return 1;
    }
    if (e == cudaSuccess) e = p->attention.head_dim == 64 ? set_smem<64>() : set_smem<128>();
    if (e != cudaSuccess) {
        snprintf(msg, len, "cannot set the kernel's shared memory (%d bytes): %s", need, cudaGetErrorString(e));
        return 1;
    }
    void *mem = NULL;
    if (posix_memalign(&mem, 64, sizeof(hop_state)) != 0 || !mem) {
        snprintf(msg, len, "out of memory");
        return 1;
    }
    memset(mem, 0, sizeof(hop_state));
    *state = mem;
    return 0;
}

void hop_teardown(void *state) { free(state); }

template <int D>
int launch_d(const kparams &k, const dim3 &grid, cudaStream_t s)
{
    if constexpr (built(D)) {
        attn_kernel<D><<<grid, cfg::THREADS, dims<D>::SMEM, s>>>(k);
        return tbv::last_launch_error();
    } else {
        (void)k; (void)grid; (void)s;
        return (int)cudaErrorInvalidValue;
    }
}

int hop_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
               size_t workspace_bytes, tb_stream stream)
{
    (void)workspace; (void)workspace_bytes;
    hop_state *st = (hop_state *)state;
    if (!st || !g_encode) return (int)cudaErrorNotReady;
    const tb_attention *a = &p->attention;
    kparams &k = st->p;
    if (io->in[0] != st->q || io->in[1] != st->k || io->in[2] != st->v) {
        CUresult r = encode_4d(&k.q, io->in[0], a->head_dim, a->seq_q, a->heads, a->batch, a->q_stride, cfg::BQ);
        if (r == CUDA_SUCCESS)
            r = encode_4d(&k.k, io->in[1], a->head_dim, a->seq_k, a->heads_kv, a->batch, a->k_stride, cfg::BKV);
        if (r == CUDA_SUCCESS)
            r = encode_4d(&k.v, io->in[2], a->head_dim, a->seq_k, a->heads_kv, a->batch, a->v_stride, cfg::BKV);
        if (r != CUDA_SUCCESS) {
            st->q = st->k = st->v = NULL;
            return 1000 + (int)r;   /* a driver error, kept apart from runtime codes */
        }
        st->q = io->in[0];
        st->k = io->in[1];
        st->v = io->in[2];
    }
    k.o = (__nv_bfloat16 *)io->out[0];
    k.lse = (float *)io->out[1];
    for (int t = 0; t < 3; t++) k.os[t] = a->o_stride[t];
    k.ls[0] = a->lse_stride[0];
    k.ls[1] = a->lse_stride[1];
    k.seq_q = (int)a->seq_q;
    k.seq_k = (int)a->seq_k;
    k.group = (int)(a->heads / a->heads_kv);
    k.n_qtiles = (int)((a->seq_q + cfg::BQ - 1) / cfg::BQ);
    k.causal = a->causal ? 1 : 0;
    k.scale = (float)a->scale;
    k.scale_log2 = (float)(a->scale * 1.4426950408889634);
    const dim3 grid((unsigned)k.n_qtiles, (unsigned)a->heads, (unsigned)a->batch);
    const cudaStream_t s = (cudaStream_t)stream;
    switch (a->head_dim) {
    case 64: return launch_d<64>(k, grid, s);
    case 128: return launch_d<128>(k, grid, s);
    default: return (int)cudaErrorInvalidValue;
    }
}

const tb_param hop_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("tile_m", cfg::BQ),
    TB_PARAM_INT("tile_n", cfg::BKV),
    TB_PARAM_INT("stages", cfg::STAGES),
    TB_PARAM_STR("schedule", cfg::PINGPONG ? "pingpong" : "cooperative"),
    TB_PARAM_END
};

char hop_name[96];

const tb_variant hop_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), hop_name, "attn_hopper", hop_params,
    TB_SASS, hop_supports, NULL, hop_launch, hop_setup, hop_teardown, NULL, tbv::attention_extension
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(hop_variant, hop_name, "attn_hopper", hop_params)
