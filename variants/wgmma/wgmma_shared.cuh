/* wgmma_shared.cuh - the pieces of a Hopper TMA + wgmma GEMM that do not depend on the operand
 * type, written once as templates on the point's configuration (Cfg) and the kernel parameter
 * (P), so that a family with other operands reuses them instead of copying them.
 *
 * Owns: host side, finding cuTensorMapEncodeTiled in the loaded driver (no libcuda link),
 * encoding a 2-D tensor map of any element type, and the persistent grid's CTA cap (SMs);
 * device side, the cluster-tile raster (bands along m or n), beta * C from global memory, and
 * the epilogue (alpha, beta * C, BF16 pack, stmatrix into a 128-byte-swizzled staging buffer,
 * TMA store of 64-column chunks). No state of its own beyond the encoder pointer; everything is
 * in an anonymous namespace, one copy per translation unit.
 *
 * Today only variants/wgmma_fp8/wgmma_fp8.cu includes it. variants/wgmma/wgmma.cu has the same
 * pieces written out for its cfg and kparams (find_encode, encode_2d with BF16 fixed, max_ctas,
 * cluster_tile with raster h, add_c, epilogue); it could include this header instead (Cfg =
 * cfg, P = kparams: the names below are the ones it uses) once its tn kernel's SASS is checked
 * to be unchanged, as the wgmma_ptx.cuh split was.
 *
 * What Cfg must provide: RASTER_N (bool), MI (m64 blocks per consumer), ACC (accumulators per
 * m64 block), CHUNKS (64-column chunks of a tile), EPI_BUF (bytes of one staging buffer),
 * EPI_BUFS (buffers per consumer), CONFLICT (bool: unswizzled staging, the control). What P
 * must provide: m, n, ctiles_m, ctiles_n, band, c (const __nv_bfloat16 *), ldc, alpha, beta,
 * d (the CUtensorMap of D, n x m, boxes of 64 x consumer rows).
 * Include after wgmma_ptx.cuh (it uses its wrappers).
 */
#ifndef TB_VARIANTS_WGMMA_SHARED_CUH
#define TB_VARIANTS_WGMMA_SHARED_CUH

#include <cuda.h>           /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>   /* PFN_cuTensorMapEncodeTiled */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#ifndef TB_VARIANTS_WGMMA_PTX_CUH
#error "include wgmma_ptx.cuh before wgmma_shared.cuh"
#endif

namespace {

/* ---- device ----------------------------------------------------------------------------- */

/* Named barrier of consumer warpgroup c's 128 threads: BAR_WG + c (0 is __syncthreads). */
constexpr int BAR_WG = 2;

/* Cluster tile t -> (row, column) in the grid of cluster tiles: raster m walks down m inside a
 * band of p.band cluster-tile rows, the band's columns left to right, bands one after another
 * down m; raster n the same with m and n exchanged. */
template <class Cfg, class P>
__device__ __forceinline__ void cluster_tile(const P &p, int t, int &ctm, int &ctn)
{
    if (!Cfg::RASTER_N) {
        const int per_band = p.band * p.ctiles_n;
        const int band = t / per_band, first = band * p.band;
        const int rows = min(p.band, p.ctiles_m - first);
        const int w = t - band * per_band;
        ctm = first + w % rows;
        ctn = w / rows;
    } else {
        const int per_band = p.band * p.ctiles_m;
        const int band = t / per_band, first = band * p.band;
        const int cols = min(p.band, p.ctiles_n - first);
        const int w = t - band * per_band;
        ctn = first + w % cols;
        ctm = w / cols;
    }
}

/* v0, v1 (D at row, col and col + 1) += beta * C there; outside m or n adds nothing. */
template <class P>
__device__ __forceinline__ void add_c(const P &p, int row, int col, float &v0, float &v1)
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

/* One consumer's epilogue: its MI * 64 x CHUNKS * 64 block of accumulators (wgmma's m64nN
 * fragment order) at (m0, n0), times p.alpha, + p.beta * C when p.beta != 0, 64 columns at a
 * time through its staging buffers at ebuf and TMA stores of D issued by its thread 0. echunk
 * counts the chunks this consumer has staged, to pick the buffer and keep the bulk groups
 * paired with it. */
template <class Cfg, class P>
__device__ __forceinline__ void epilogue(const P &p, const float (&acc)[Cfg::MI][Cfg::ACC],
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
    for (int ch = 0; ch < Cfg::CHUNKS; ch++) {
        if (n0 + ch * 64 >= p.n) break;     /* uniform over the warpgroup */
        const uint32_t buf = ebuf + (echunk % Cfg::EPI_BUFS) * Cfg::EPI_BUF;
        /* The store that last read this buffer must be done reading it. */
        if (wtid == 0) bulk_wait_read<Cfg::EPI_BUFS - 1>();
        bar_sync(BAR_WG + cw, 128);
#pragma unroll
        for (int mi = 0; mi < Cfg::MI; mi++) {
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
                const int phys = Cfg::CONFLICT ? cidx : (cidx ^ (row & 7));
                stmatrix_x4(buf + (uint32_t)(row * 128 + phys * 16), pack_bf16(v[0], v[1]),
                            pack_bf16(v[2], v[3]), pack_bf16(v[4], v[5]), pack_bf16(v[6], v[7]));
            }
        }
        fence_proxy_async();                /* make the stmatrix writes visible to TMA */
        bar_sync(BAR_WG + cw, 128);
        if (wtid == 0) {
            tma_store(&p.d, buf, n0 + ch * 64, m0);
            bulk_commit();
        }
        echunk++;
    }
}

/* ---- host ------------------------------------------------------------------------------- */

PFN_cuTensorMapEncodeTiled_v12000 g_encode;

/* Find cuTensorMapEncodeTiled in the driver the runtime already loaded; 0, or 1 with msg. */
int find_encode(char *msg, size_t len)
{
    if (g_encode) return 0;
    void *fn = NULL;
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                           cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) {
        snprintf(msg, len, "cuTensorMapEncodeTiled not found in the driver: %s",
                 cudaGetErrorString(e));
        return 1;
    }
    g_encode = (PFN_cuTensorMapEncodeTiled_v12000)fn;
    return 0;
}

/* A 2-D tensor map of elements of type dt, elem_bytes each: `inner` contiguous elements per
 * row, `outer` rows ld elements apart, boxes of box_inner x box_outer; L2 promotion of 256
 * bytes. Out-of-bounds elements load as zero; stores clip. find_encode() must have succeeded. */
CUresult encode_2d(CUtensorMap *map, CUtensorMapDataType dt, uint32_t elem_bytes, const void *ptr,
                   int64_t inner, int64_t outer, int64_t ld, uint32_t box_inner,
                   uint32_t box_outer, CUtensorMapSwizzle swizzle)
{
    const cuuint64_t dims[2] = { (cuuint64_t)inner, (cuuint64_t)outer };
    const cuuint64_t strides[1] = { (cuuint64_t)ld * elem_bytes };
    const cuuint32_t box[2] = { box_inner, box_outer };
    const cuuint32_t estr[2] = { 1, 1 };
    return g_encode(map, dt, 2, const_cast<void *>(ptr), dims, strides, box, estr,
                    CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

/* CTAs the persistent grid may hold at most without clusters: one per SM of the current
 * device. 0 and the error in *e when the device cannot be read. */
int max_ctas(cudaError_t *e)
{
    int dev = 0, sms = 0;
    *e = cudaGetDevice(&dev);
    if (*e == cudaSuccess) *e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return *e == cudaSuccess ? sms : 0;
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_SHARED_CUH */
