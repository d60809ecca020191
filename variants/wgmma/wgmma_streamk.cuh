/* wgmma_streamk.cuh - how a CTA of wgmma_kernel.cuh's persistent grid walks its work and, with
 * stream-K, hands partial sums over: next_unit() (whole data-parallel tiles, then the k-block
 * segments of the CTA's stream-K range, as streamk_rules.cuh deals them), the flag's acquire
 * and release, and sk_handoff() (a partial left in the workspace, or an owner adding the
 * partials of its tile). No state. Included by wgmma_kernel.cuh only, inside its anonymous
 * namespace, after cfg, kparams and the named barriers (it uses them); not a header of its
 * own to include. wgmma.cu's opening comment says how the kernel sums what it deals.
 */
/* This CTA's next unit of work: whole data-parallel tiles (t, stride ncl) while below
 * sk_first, then the k-block segments of its stream-K range [s, e). 0 when none is left. */
__device__ __forceinline__ bool next_unit(const kparams &p, int ncl, int &t, int &s, int e,
                                          int &tile, int &kb0, int &kb1)
{
    if (t < p.sk_first) {
        tile = t;
        kb0 = 0;
        kb1 = p.k_iters;
        t += ncl;
        return true;
    }
    if (cfg::STREAMK && s < e) {
        tile = p.sk_first + s / p.k_iters;
        kb0 = s % p.k_iters;
        kb1 = min(p.k_iters, kb0 + (e - s));
        s += kb1 - kb0;
        return true;
    }
    return false;
}

__device__ __forceinline__ int ld_acquire(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release(int *p, int v)
{
    asm volatile("st.release.gpu.global.b32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}

/* Stream-K's hand-off after a unit's k-blocks [kb0, kb1) of its tile (both loops; ct: this
 * consumer thread's index in the CTA's 256, each keeping its own fragments: a workspace slot's
 * layout is [i][256 threads]). A unit that starts inside its tile (kb0 != 0) leaves its partial
 * sums, FP32, in its CTA's slot, raises its flag and returns false: no epilogue. The unit that
 * starts the tile is its owner: it adds the partials of the CTAs after it whose ranges start in
 * the tile, in range order, and returns true (its epilogue follows). */
__device__ __forceinline__ bool sk_handoff(const kparams &p, float (&acc)[cfg::MI][cfg::ACC], int cid,
                                           int ct, int kb0, int kb1)
{
    if (kb0 != 0) {             /* a partial: leave it for the tile's owner */
        float *w = p.ws + (size_t)cid * (cfg::TILE_M * cfg::TILE_N);
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
            for (int i = 0; i < cfg::ACC; i++)
                __stcg(w + (mi * cfg::ACC + i) * 256 + ct, acc[mi][i]);
        __threadfence();
        bar_sync(BAR_SK, 256);
        if (ct == 0) st_release(p.flags + cid, 1);
        return false;
    }
    /* the owner: add the partials of the CTAs whose ranges start in this tile */
    for (int have = kb1, c2 = cid + 1; have < p.k_iters; c2++) {
        if (ct == 0)
            while (ld_acquire(p.flags + c2) == 0) { }
        bar_sync(BAR_SK, 256);
        const float *w = p.ws + (size_t)c2 * (cfg::TILE_M * cfg::TILE_N);
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++)
#pragma unroll
            for (int i = 0; i < cfg::ACC; i++)
                acc[mi][i] += __ldcg(w + (mi * cfg::ACC + i) * 256 + ct);
        const int s2 = c2 * p.sk_per, e2 = min(s2 + p.sk_per, p.sk_total);
        have += min(p.k_iters - have, e2 - s2);
    }
    return true;
}
