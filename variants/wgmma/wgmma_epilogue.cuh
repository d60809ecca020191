/* wgmma_epilogue.cuh - the epilogue of wgmma_kernel.cuh's kernels (BF16 and FP8 families):
 * one consumer's FP32 accumulators times alpha, + beta * C read from global memory, packed to
 * BF16 and staged with stmatrix in the 128-byte swizzle, then stored by TMA or, for a pitch TMA
 * cannot describe, by the consumer's own stores (PD: pd_store_chunk()'s 16-byte stores for a
 * chunk inside n, 2- and 4-byte predicated ones for the chunk that crosses it). Owns add_c(),
 * pd_store_chunk() and epilogue(); no state. Included by wgmma_kernel.cuh only, inside its
 * anonymous namespace, after cfg, kparams and the named barriers (it uses them); not a header
 * of its own to include.
 */
/* v0, v1 (D at row, col and col + 1) += beta * C there; outside m or n adds nothing. */
__device__ __forceinline__ void add_c(const kparams &p, int row, int col, float &v0, float &v1)
{
    if (row >= p.m || col >= p.n) return;
    const __nv_bfloat16 *c = p.c + (int64_t)row * p.ldc + col;
    if (col + 1 < p.n && ((uintptr_t)c & 3u) == 0) {
        const float2 f = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(c));
        v0 = fmaf(p.beta, f.x, v0);
        v1 = fmaf(p.beta, f.y, v1);
    } else {
        v0 = fmaf(p.beta, __bfloat162float(c[0]), v0);
        if (col + 1 < p.n) v1 = fmaf(p.beta, __bfloat162float(c[1]), v1);
    }
}

/* The predicated epilogue's store of one staged chunk of 64 columns, all inside n (c0 + 64 <=
 * n), with 16-byte stores. A row of the chunk is 128 bytes of D at any 2-byte alignment (ldd
 * odd: every row its own): o (1..8) elements before its first 16-byte boundary, then 7 whole
 * 16-byte units, then 8 - o elements. Eight lanes take a row, four rows a warp instruction:
 * lane l < 7 stores the 16-byte unit at element 8l + o, made of the staged 16-byte units
 * holding elements 8l + o .. 8l + o + 7 (two shared-memory reads, a word select by o / 2 and a
 * funnel shift by o mod 2 halves), and every lane stores the one element of the row's ragged
 * ends that is its own (l < o: element l; else 56 + l), so the 8 lanes store the 8 ragged
 * elements with one 2-byte store each (o = 8, a 16-byte aligned row: the first unit as 8
 * elements). Each warp reads out its own WG_M / 4 rows, a batch's shared-memory reads before
 * its first store (below); rows outside m read and store nothing. Against the per-row 4- or
 * 2-byte stores this replaced (still the path of the chunk that crosses n): about a quarter of
 * the store instructions, and 5-6.5 % at 1023x1025x1032 on an H200 (docs/perf.md,
 * twenty-second session). */
__device__ __forceinline__ void pd_store_chunk(const kparams &p, uint32_t buf, int m0, int c0, int warp,
                                               int lane)
{
    /* RPW rows a warp, 4 an instruction, in batches of BATCH instructions: each batch's reads
     * before its stores: all of them for 64-row consumers, 2 at a time for 128-row ones (all 8,
     * or 4, spilled in 256x128 cooperative and 128x128 pingpong points: up to 212 bytes) */
    constexpr int RPW = cfg::WG_M / 4, IT = RPW / 4, BATCH = IT <= 4 ? IT : 2;
    static_assert(IT % BATCH == 0, "a warp's rows in whole batches");
    const int q = lane >> 3, l = lane & 7;
#pragma unroll
    for (int b0 = 0; b0 < IT; b0 += BATCH) {
        uint4 lo[BATCH], hi[BATCH];
        uint16_t rag[BATCH];
        int o[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const int r = warp * RPW + (b0 + b) * 4 + q;
            const __nv_bfloat16 *d = p.dptr + (int64_t)(m0 + r) * p.ldd + c0;
            o[b] = 8 - (int)(((uintptr_t)d >> 1) & 7u);
            if (m0 + r >= p.m) continue;                /* (one row of D: 1 x n reads one) */
            const int c1 = (8 * l + o[b]) >> 3;         /* the staged unit holding the first */
            const int c2 = min(c1 + 1, 7);
            const int sw = cfg::CONFLICT ? 0 : (r & 7);
            lo[b] = ld_shared_v4(buf + (uint32_t)(r * 128 + ((c1 ^ sw) << 4)));
            hi[b] = ld_shared_v4(buf + (uint32_t)(r * 128 + ((c2 ^ sw) << 4)));
            const int e = l < o[b] ? l : 56 + l;
            rag[b] = ld_shared_b16(buf + (uint32_t)(r * 128 + (((e >> 3) ^ sw) << 4) +
                                                    ((e & 7) << 1)));
        }
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const int r = warp * RPW + (b0 + b) * 4 + q;
            if (m0 + r >= p.m) continue;
            __nv_bfloat16 *d = p.dptr + (int64_t)(m0 + r) * p.ldd + c0;
            const int oo = o[b];
            const int e = l < oo ? l : 56 + l;
            *reinterpret_cast<uint16_t *>(d + e) = rag[b];
            if (l < 7) {
                /* words k .. k + 4 of lo:hi, k = (o mod 8) / 2, shifted by (o mod 2) halves */
                const int k = (oo & 7) >> 1;
                const uint32_t sh = (uint32_t)(oo & 1) * 16u;
                const uint32_t x[8] = { lo[b].x, lo[b].y, lo[b].z, lo[b].w,
                                        hi[b].x, hi[b].y, hi[b].z, hi[b].w };
                uint32_t y[6], z[5];
#pragma unroll
                for (int i = 0; i < 6; i++) y[i] = (k & 2) ? x[i + 2] : x[i];
#pragma unroll
                for (int i = 0; i < 5; i++) z[i] = (k & 1) ? y[i + 1] : y[i];
                uint4 v;
                v.x = __funnelshift_r(z[0], z[1], sh);
                v.y = __funnelshift_r(z[1], z[2], sh);
                v.z = __funnelshift_r(z[2], z[3], sh);
                v.w = __funnelshift_r(z[3], z[4], sh);
                *reinterpret_cast<uint4 *>(d + 8 * l + oo) = v;
            }
        }
    }
}

/* One consumer's epilogue: its WG_M x TILE_N block at (m0, n0), 64 columns at a time,
 * through its staging buffers (ebuf) and TMA stores issued by its thread 0. echunk counts
 * the chunks this consumer has staged, to pick the buffer and keep the bulk groups paired
 * with it. PD (the predicated epilogue, wgmma_gemm_pd: ldd not a multiple of 8, a pitch TMA
 * cannot describe): the same staging, then the consumer's 128 threads copy the chunk out
 * themselves: pd_store_chunk() when the chunk lies inside n; else (the chunk that crosses n)
 * one row of 64 columns (128 bytes) per warp at a time, each lane 2 columns with one 4-byte
 * store where the address is 4-byte aligned, else two 2-byte ones, every element checked
 * against m and n; the bar_sync that opens the next chunk keeps a buffer from being restaged
 * before every warp has read it out (no bulk groups). */
template <bool PD>
__device__ __forceinline__ void epilogue(const kparams &p, const float (&acc)[cfg::MI][cfg::ACC],
                                         uint32_t ebuf, int m0, int n0, int cw, int wtid,
                                         uint32_t &echunk)
{
    if (m0 >= p.m) return;                  /* a cluster's padding tile: nothing to store */
    const int warp = wtid >> 5, lane = wtid & 31;
    const int q = lane >> 3;                /* the 8x8 matrix this lane addresses */
    const int srow = warp * 16 + (q & 1) * 8 + (lane & 7);   /* its row, m64 block 0 */
    const int frow = m0 + warp * 16 + (lane >> 2);           /* fragment row, for C */
    const bool has_c = p.beta != 0.f;
#pragma unroll
    for (int ch = 0; ch < cfg::CHUNKS; ch++) {
        if (n0 + ch * 64 >= p.n) break;     /* uniform over the warpgroup */
        const uint32_t buf = ebuf + (echunk % cfg::EPI_BUFS) * cfg::EPI_BUF;
        /* The store that last read this buffer must be done reading it. */
        if (!PD && wtid == 0) bulk_wait_read<cfg::EPI_BUFS - 1>();
        bar_sync(BAR_WG + cw, 128);
#pragma unroll
        for (int mi = 0; mi < cfg::MI; mi++) {
#pragma unroll
            for (int gp = 0; gp < 4; gp++) {
                const int g = ch * 8 + gp * 2;  /* the first of two 8-column groups */
                float v[8];
#pragma unroll
                for (int r = 0; r < 4; r++) {
                    v[r] = acc[mi][g * 4 + r] * p.alpha;
                    v[4 + r] = acc[mi][(g + 1) * 4 + r] * p.alpha;
                }
                if (has_c) {
                    const int col = n0 + g * 8 + 2 * (lane & 3);
                    const int row = frow + mi * 64;
                    add_c(p, row, col, v[0], v[1]);
                    add_c(p, row + 8, col, v[2], v[3]);
                    add_c(p, row, col + 8, v[4], v[5]);
                    add_c(p, row + 8, col + 8, v[6], v[7]);
                }
                const int row = mi * 64 + srow;
                const int cidx = gp * 2 + (q >> 1);     /* 16-byte column chunk, 0..7 */
                const int phys = cfg::CONFLICT ? cidx : (cidx ^ (row & 7));
                stmatrix_x4(buf + (uint32_t)(row * 128 + phys * 16), pack_bf16(v[0], v[1]),
                            pack_bf16(v[2], v[3]), pack_bf16(v[4], v[5]), pack_bf16(v[6], v[7]));
            }
        }
        if constexpr (!PD) {
            fence_proxy_async();            /* make the stmatrix writes visible to TMA */
            bar_sync(BAR_WG + cw, 128);
            if (wtid == 0) {
                tma_store(&p.d, buf, n0 + ch * 64, m0);
                bulk_commit();
            }
        } else {
            bar_sync(BAR_WG + cw, 128);     /* the chunk is staged: every warp reads it out */
            if (n0 + ch * 64 + 64 <= p.n) {     /* uniform over the warpgroup */
                pd_store_chunk(p, buf, m0, n0 + ch * 64, warp, lane);
                echunk++;
                continue;
            }
            const int col = n0 + ch * 64 + 2 * lane;
            const int cidx = lane >> 2;     /* the lane's 16-byte unit of the staged row */
            const bool in0 = col < p.n, in1 = col + 1 < p.n;
            /* The warp's WG_M / 4 rows unrolled, every shared-memory read before the first
             * store, each row predicated on m: the reads' latency is paid once, not once a row
             * (a loop bounded at run time waited for each row's read; 2 % at 1023x1025x1032,
             * docs/perf.md, twenty-first session). */
            uint32_t vr[cfg::WG_M / 4];
#pragma unroll
            for (int i = 0; i < cfg::WG_M / 4; i++) {
                const int r = warp + 4 * i;
                const int phys = cfg::CONFLICT ? cidx : (cidx ^ (r & 7));
                vr[i] = ld_shared_b32(buf + (uint32_t)(r * 128 + phys * 16 + (lane & 3) * 4));
            }
#pragma unroll
            for (int i = 0; i < cfg::WG_M / 4; i++) {
                const int r = warp + 4 * i;
                if (m0 + r >= p.m) break;
                const uint32_t v = vr[i];
                __nv_bfloat16 *d = p.dptr + (int64_t)(m0 + r) * p.ldd + col;
                if (in1 && ((uintptr_t)d & 3u) == 0) {
                    *reinterpret_cast<uint32_t *>(d) = v;
                } else {
                    if (in0) *reinterpret_cast<uint16_t *>(d) = (uint16_t)(v & 0xffffu);
                    if (in1) *reinterpret_cast<uint16_t *>(d + 1) = (uint16_t)(v >> 16);
                }
            }
        }
        echunk++;
    }
}

