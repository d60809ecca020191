/* skinny_epilogue.cuh - the store both skinny kernels end with (skinny.cuh: a column-major B;
 * skinny_rowb.cuh: a row-major B). Owns skinny_store() and nothing else: the k warps' partial
 * sums, left in shared memory as red[warp][accumulator][lane], added up per element of the
 * CTA's MT * 8 x 32 * CW block (walked column-fastest), scaled by alpha, beta * C added where
 * C is given, rounded once to BF16 and stored predicated at any ldd. The two kernels differ
 * only in which accumulator of which lane holds an element (their mma fragments are laid out
 * differently), which the caller's map says. Static, in an anonymous namespace, as its
 * includers' code. */
#ifndef TB_VARIANTS_WGMMA_SKINNY_EPILOGUE_CUH
#define TB_VARIANTS_WGMMA_SKINNY_EPILOGUE_CUH

#include <cuda_bf16.h>
#include <stdint.h>

namespace {

/* g: the kernel's arguments (m, n, cw, alpha, beta, c, ldc, d, ldd); E accumulators a lane,
 * THREADS a CTA; map(row, x, e, ln): for row `row` of the block and column x (0..31) of its
 * column warp's 32, the accumulator e and the lane ln that hold it. */
template <int MT, int E, int THREADS, class Args, class Map>
__device__ __forceinline__ void skinny_store(const Args &g, const float *red, int m0, int n_cta,
                                             int kws, Map map)
{
    const int cols = 32 * g.cw, total = MT * 8 * cols;
    for (int idx = threadIdx.x; idx < total; idx += THREADS) {
        const int row = idx / cols, col = idx - row * cols;
        const int gm = m0 + row, gn = n_cta + col;
        if (gm >= g.m || gn >= g.n) continue;
        int e, ln;
        map(row, col & 31, e, ln);
        float s = 0.f;
        for (int j = 0; j < kws; j++) s += red[(((j * g.cw + (col >> 5)) * E) + e) * 32 + ln];
        float v = g.alpha * s;
        if (g.c) v += g.beta * __bfloat162float(g.c[(int64_t)gm * g.ldc + gn]);
        g.d[(int64_t)gm * g.ldd + gn] = __float2bfloat16(v);
    }
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_SKINNY_EPILOGUE_CUH */
