/* wgmma_epilogue.cuh - the epilogue of wgmma_kernel.cuh's kernels (BF16 and FP8 families):
 * one consumer's FP32 accumulators times alpha, + beta * C read from global memory, packed to
 * BF16 and staged with stmatrix in the 128-byte swizzle, then stored by TMA or, for a pitch TMA
 * cannot describe, by the consumer's predicated stores (PD). Owns add_c() and epilogue(); no
 * state. Included by wgmma_kernel.cuh only, inside its anonymous namespace, after cfg,
 * kparams and the named barriers (it uses them); not a header of its own to include.
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

/* One consumer's epilogue: its WG_M x TILE_N block at (m0, n0), 64 columns at a time,
 * through its staging buffers (ebuf) and TMA stores issued by its thread 0. echunk counts
 * the chunks this consumer has staged, to pick the buffer and keep the bulk groups paired
 * with it. PD (the predicated epilogue, wgmma_gemm_pd: ldd not a multiple of 8, a pitch TMA
 * cannot describe): the same staging, then the consumer's 128 threads copy the chunk out
 * themselves, one row of 64 columns (128 bytes) per warp at a time, each lane 2 columns with
 * one 4-byte store where the address is 4-byte aligned, else two 2-byte ones, every element
 * checked against m and n; the bar_sync that opens the next chunk keeps a buffer from being
 * restaged before every warp has read it out (no bulk groups). */
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

