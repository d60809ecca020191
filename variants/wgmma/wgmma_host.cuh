/* wgmma_host.cuh - the host side of the Hopper TMA + wgmma GEMM (wgmma_kernel.cuh's kernels),
 * one copy for every operand type: variants/wgmma/wgmma.cu (BF16) and
 * variants/wgmma_fp8/wgmma_fp8.cu (E4M3) include it after wgmma_kernel.cuh.
 *
 * Owns: finding cuTensorMapEncodeTiled in the loaded driver (no libcuda link) and encoding 2-D
 * tensor maps; the variant state (wg_state); the Hilbert order table (raster h); the stream-K
 * split and its workspace; the persistent grid's size (SMs, clusters: cudaOccupancyMax-
 * ActiveClusters); and the variant entry points shared by the families: setup, launch (tensor
 * maps re-encoded when the buffers change, host arithmetic only, then the kernel with its
 * __grid_constant__ parameter), teardown, describe. Not owned: supports() and the parameters,
 * names and query of the variants (the family files).
 *
 * The including file defines, before including it, wg_kernel<AMN, BMN>(pd): the family's kernel
 * for a layout, with TMA stores of D (pd false) or predicated ones (pd true); and, for a family
 * whose consumers run whole tiles (Op::WHOLE_TILES, FP8) built with TB_STREAMK,
 * wg_kernel_sk<AMN, BMN>(): the kernel of the split tiles' units, launched after the plain
 * kernel has run the whole tiles (two kernels: one kernel for both was 2.5-7 % slower where
 * nothing is split; docs/perf.md, twentieth session). Everything is in an anonymous namespace;
 * g_encode is one per translation unit.
 */
#ifndef TB_VARIANTS_WGMMA_HOST_CUH
#define TB_VARIANTS_WGMMA_HOST_CUH

#include <cuda.h>           /* CUtensorMap and its enums: types only, libcuda is not linked */
#include <cudaTypedefs.h>   /* PFN_cuTensorMapEncodeTiled */
#include <stdio.h>
#include <stdlib.h>

#ifndef TB_VARIANTS_WGMMA_KERNEL_CUH
#error "include wgmma_kernel.cuh before wgmma_host.cuh"
#endif

#include "tma_encode.cuh"   /* g_encode, find_encode() */
#include "streamk_rules.cuh"  /* tb_sk_split(), tb_sk_grid() */

namespace {

template <bool AMN, bool BMN>
void (*wg_kernel_sk())(kparams);   /* defined by an FP8 family file built with TB_STREAMK */

/* A 2-D tensor map of elements of type dt, elem_bytes each: `inner` contiguous elements per
 * row, `outer` rows ld elements apart, boxes of box_inner x box_outer. Out-of-bounds elements
 * load as zero; stores clip. find_encode() must have succeeded. */
CUresult encode_2d(CUtensorMap *map, CUtensorMapDataType dt, uint32_t elem_bytes, const void *ptr,
                   int64_t inner, int64_t outer, int64_t ld, uint32_t box_inner,
                   uint32_t box_outer, CUtensorMapSwizzle swizzle)
{
    const cuuint64_t dims[2] = { (cuuint64_t)inner, (cuuint64_t)outer };
    const cuuint64_t strides[1] = { (cuuint64_t)ld * elem_bytes };
    const cuuint32_t box[2] = { box_inner, box_outer };
    const cuuint32_t estr[2] = { 1, 1 };
    return g_encode(map, dt, 2, const_cast<void *>(ptr), dims,
                    strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                    TB_EXP_L2PROMO == 0 ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                    : TB_EXP_L2PROMO == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                            : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

struct wg_state {
    kparams p;                      /* the kernel parameter, maps included */
    bool pd;                        /* ldd not a multiple of 8: wgmma_gemm_pd, no map of D */
    const void *a, *b;              /* the buffers the maps were encoded for */
    void *d;
    int64_t m, n, k, lda, ldb, ldd;
    int grid, clusters, sms, max_clusters;
    uint32_t *order;                /* raster h: the device table (kparams::order) */
    float scale_a, scale_b;         /* Op::SCALED: the problem's per-tensor scales */
};

/* The problem's per-tensor scales (1 when the host's tb_problem has no gemm_scales; an E4M3
 * family's supports() refuses such a problem anyway). */
void scales_of(const tb_problem *p, float *sa, float *sb)
{
    *sa = *sb = 1.f;
    if (p->struct_size >= TB_PROBLEM_G1_SIZE) {
        *sa = p->gemm_scales.scale_a;
        *sb = p->gemm_scales.scale_b;
    }
}

/* alpha as the kernel applies it: times scale_a * scale_b for a scaled (FP8) family. */
float kernel_alpha(const tb_problem *p)
{
    if (!cfg::Op::SCALED) return (float)p->gemm.alpha;
    float sa, sb;
    scales_of(p, &sa, &sb);
    return (float)(p->gemm.alpha * (double)sa * (double)sb);
}

/* (x, y) -> its index along a Hilbert curve over an s x s square, s a power of two. */
uint64_t hilbert_xy2d(uint32_t s, uint32_t x, uint32_t y)
{
    uint64_t d = 0;
    for (uint32_t q = s / 2; q > 0; q /= 2) {
        const uint32_t rx = (x & q) ? 1 : 0, ry = (y & q) ? 1 : 0;
        d += (uint64_t)q * q * ((3 * rx) ^ ry);
        if (ry == 0) {   /* rotate the quadrant */
            if (rx == 1) { x = s - 1 - x; y = s - 1 - y; }
            const uint32_t t = x; x = y; y = t;
        }
    }
    return d;
}

int by_key(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Raster h: the Hilbert order of the cm x cn cluster tiles into a device table (*out). */
int hilbert_table(int cm, int cn, uint32_t **out, char *msg, size_t len)
{
    *out = NULL;
    if (cm > 65535 || cn > 65535) { snprintf(msg, len, "raster h: %d x %d cluster tiles", cm, cn); return 1; }
    uint32_t side = 1;
    while (side < (uint32_t)cm || side < (uint32_t)cn) side *= 2;
    const size_t cells = (size_t)cm * (size_t)cn;
    uint64_t *key = (uint64_t *)malloc(cells * sizeof *key);   /* Hilbert index << 32 | cell */
    uint32_t *h = (uint32_t *)malloc(cells * sizeof *h);
    if (!key || !h) { free(key); free(h); snprintf(msg, len, "out of memory"); return 1; }
    size_t at = 0;
    for (int x = 0; x < cm; x++)
        for (int y = 0; y < cn; y++)
            key[at++] = hilbert_xy2d(side, (uint32_t)x, (uint32_t)y) << 32 |
                        ((uint64_t)x << 16 | (uint64_t)y);
    qsort(key, cells, sizeof *key, by_key);
    for (size_t i = 0; i < cells; i++) h[i] = (uint32_t)(key[i] & 0xffffffffu);
    free(key);
    cudaError_t e = cudaMalloc((void **)out, at * sizeof *h);
    if (e == cudaSuccess) e = cudaMemcpy(*out, h, at * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    if (e != cudaSuccess) {
        if (*out) cudaFree(*out);
        *out = NULL;
        snprintf(msg, len, "raster h: the order table: %s", cudaGetErrorString(e));
        return 1;
    }
    return 0;
}


/* The stream-K split of num_tiles tiles over a grid of g CTAs (streamk_rules.cuh; wgmma.cu's
 * opening comment): sk_first, sk_per, sk_total; no split without TB_STREAMK. */
void streamk_split(int num_tiles, int g, int k_iters, int &first, int &per, int &total)
{
    tb_sk_split(num_tiles, g, k_iters, cfg::STREAMK ? 1 : 0, &first, &per, &total);
}

/* The persistent grid for num_tiles tiles and cap CTAs (streamk_rules.cuh for stream-K points:
 * every SM when split-K deals the tiles out), else one CTA a tile up to cap. */
int sk_grid(int num_tiles, int cap, int k_iters)
{
    if (cfg::STREAMK) return tb_sk_grid(num_tiles, cap, k_iters);
    return num_tiles < cap ? num_tiles : cap;
}

/* CTAs the persistent grid may hold at most without clusters: one per SM of the current
 * device (TB_EXP_MAXCTAS caps it). 0 and the error in *e when the device cannot be read. */
int max_ctas(cudaError_t *e)
{
    int dev = 0, sms = 0;
    *e = cudaGetDevice(&dev);
    if (*e == cudaSuccess) *e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (*e != cudaSuccess) return 0;
    return TB_EXP_MAXCTAS > 0 && TB_EXP_MAXCTAS < sms ? TB_EXP_MAXCTAS : sms;
}

size_t wg_workspace_size(const tb_problem *p)
{
    if (!cfg::STREAMK) return 0;
    const tb_gemm *g = &p->gemm;
    const int64_t tiles = ((g->m + cfg::TILE_M - 1) / cfg::TILE_M) * ((g->n + cfg::TILE_N - 1) / cfg::TILE_N);
    cudaError_t e;
    const int cap = max_ctas(&e);   /* stream-K is never clustered: one CTA per cluster */
    const int k_iters = (int)((g->k + cfg::BK - 1) / cfg::BK);
    const int grid = sk_grid((int)tiles, cap, k_iters);
    int first, per, total;
    streamk_split((int)tiles, grid, k_iters, first, per, total);
    if (!total) return 0;
    return (size_t)grid * cfg::TILE_M * cfg::TILE_N * sizeof(float) + 256 + (size_t)grid * sizeof(int);
}

void wg_teardown(void *state)
{
    wg_state *s = (wg_state *)state;
    if (s && s->order) cudaFree(s->order);
    free(state);
}

template <bool AMN, bool BMN>
int wg_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)stream;
    *state = NULL;
    const tb_gemm *g = &p->gemm;
    if (find_encode(msg, len)) return 1;
    /* D's pitch picks the kernel: TMA stores where TMA can describe it, else predicated ones
     * (the family's wg_kernel(); a family whose supports() refuses such an ldd has none) */
    const bool pd = g->ldd % 8 != 0;
    void (*const kernel)(kparams) = wg_kernel<AMN, BMN>(pd);
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         cfg::SMEM);
    if constexpr (cfg::Op::WHOLE_TILES && cfg::STREAMK)
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(wg_kernel_sk<AMN, BMN>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     cfg::SMEM);
    /* one CTA per SM: the smem and 384 threads see to it (sms: capped by TB_EXP_MAXCTAS) */
    const int sms = e == cudaSuccess ? max_ctas(&e) : 0;
    int max_clusters = sms;
    if (e != cudaSuccess) {
        snprintf(msg, len, "kernel set-up failed (%d bytes of shared memory): %s", cfg::SMEM,
                 cudaGetErrorString(e));
        return 1;
    }
    if (cfg::CSIZE > 1) {
        cudaLaunchConfig_t lc = {};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cfg::CSIZE;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = 1;
        lc.gridDim = dim3((unsigned)(sms / cfg::CSIZE * cfg::CSIZE), 1, 1);
        lc.blockDim = dim3(cfg::THREADS, 1, 1);
        lc.dynamicSmemBytes = cfg::SMEM;
        lc.attrs = at;
        lc.numAttrs = 1;
        e = cudaOccupancyMaxActiveClusters(&max_clusters, kernel, &lc);
        if (TB_EXP_MAXCTAS > 0 && TB_EXP_MAXCTAS / cfg::CSIZE < max_clusters)
            max_clusters = TB_EXP_MAXCTAS / cfg::CSIZE;
        if (e != cudaSuccess || max_clusters < 1) {
            snprintf(msg, len, "no cluster of %d CTAs fits: %s", cfg::CSIZE,
                     e != cudaSuccess ? cudaGetErrorString(e) : "0 active clusters");
            return 1;
        }
    }
    wg_state *s = (wg_state *)calloc(1, sizeof *s);
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->m = g->m; s->n = g->n; s->k = g->k;
    s->lda = g->lda; s->ldb = g->ldb; s->ldd = g->ldd;
    s->pd = pd;
    scales_of(p, &s->scale_a, &s->scale_b);
    kparams &k = s->p;
    k.ldd = g->ldd;
    k.m = (int)g->m;
    k.n = (int)g->n;
    k.k_iters = (int)((g->k + cfg::BK - 1) / cfg::BK);
    k.ctiles_m = (int)((g->m + cfg::TILE_M * cfg::CM - 1) / (cfg::TILE_M * cfg::CM));
    k.ctiles_n = (int)((g->n + cfg::TILE_N * cfg::CN - 1) / (cfg::TILE_N * cfg::CN));
    k.num_ctiles = k.ctiles_m * k.ctiles_n;
    const int per = cfg::RASTER_N ? cfg::CN : cfg::CM;
    k.band = cfg::SWIZZLE / per > 1 ? cfg::SWIZZLE / per : 1;
    if (cfg::RASTER_H && hilbert_table(k.ctiles_m, k.ctiles_n, &s->order, msg, len)) {
        free(s);
        return 1;
    }
    k.order = s->order;
    k.alpha = kernel_alpha(p);
    k.beta = (float)g->beta;
    k.ldc = g->ldc;
    s->sms = sms;
    s->max_clusters = max_clusters;
    s->clusters = cfg::STREAMK ? sk_grid(k.num_ctiles, max_clusters, k.k_iters)
                               : (k.num_ctiles < max_clusters ? k.num_ctiles : max_clusters);
    s->grid = s->clusters * cfg::CSIZE;
    streamk_split(k.num_ctiles, s->grid, k.k_iters, k.sk_first, k.sk_per, k.sk_total);
    *state = s;
    return 0;
}

template <bool AMN, bool BMN>
int wg_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    using A = opA<AMN>;
    using B = opB<BMN>;
    wg_state *s = (wg_state *)state;
    if (!s || !g_encode) return (int)cudaErrorNotReady;
    if (s->p.sk_total) {
        const size_t part = (size_t)s->grid * cfg::TILE_M * cfg::TILE_N * sizeof(float) + 256;
        if (!workspace || workspace_bytes < part + (size_t)s->grid * sizeof(int))
            return (int)cudaErrorInvalidValue;
        s->p.ws = (float *)workspace;
        s->p.flags = (int *)((char *)workspace + part);
        const cudaError_t e = cudaMemsetAsync(s->p.flags, 0, (size_t)s->grid * sizeof(int),
                                              (cudaStream_t)stream);
        if (e != cudaSuccess) return (int)e;
    }
    const tb_gemm *g = &p->gemm;
    if (io->in[0] != s->a || io->in[1] != s->b || io->out[0] != s->d) {
        /* K-major: k inner, rows (m or n) outer; MN-major: m or n inner, k outer. Boxes of 128
         * bytes of inner elements (the swizzle span: 64 BF16, 128 E4M3) by BOX_OUTER (see
         * operand). D: BF16, n inner, m outer (one consumer's rows). */
        constexpr CUtensorMapDataType dt = cfg::Op::TMA_TYPE;
        constexpr uint32_t eb = cfg::Op::ELEM_BYTES, inner = 128 / cfg::Op::ELEM_BYTES;
        CUresult r = AMN ? encode_2d(&s->p.a, dt, eb, io->in[0], s->m, s->k, s->lda, inner,
                                     A::BOX_OUTER, CU_TENSOR_MAP_SWIZZLE_128B)
                         : encode_2d(&s->p.a, dt, eb, io->in[0], s->k, s->m, s->lda, inner,
                                     A::BOX_OUTER, CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS)
            r = BMN ? encode_2d(&s->p.b, dt, eb, io->in[1], s->n, s->k, s->ldb, inner,
                                B::BOX_OUTER, CU_TENSOR_MAP_SWIZZLE_128B)
                    : encode_2d(&s->p.b, dt, eb, io->in[1], s->k, s->n, s->ldb, inner,
                                B::BOX_OUTER, CU_TENSOR_MAP_SWIZZLE_128B);
        if (r == CUDA_SUCCESS && !s->pd)
            r = encode_2d(&s->p.d, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, io->out[0], s->n, s->m,
                          s->ldd, 64, cfg::WG_M,
                          cfg::CONFLICT ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B);
        if (r != CUDA_SUCCESS) {
            s->a = s->b = NULL;
            s->d = NULL;
            return 1000 + (int)r;   /* a driver error, kept apart from runtime codes */
        }
        s->a = io->in[0];
        s->b = io->in[1];
        s->d = io->out[0];
    }
    s->p.c = g->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    s->p.alpha = kernel_alpha(p);
    s->p.beta = (float)g->beta;
    s->p.dptr = (__nv_bfloat16 *)io->out[0];
    void (*const kernel)(kparams) = wg_kernel<AMN, BMN>(s->pd);
    if constexpr (cfg::Op::WHOLE_TILES && cfg::STREAMK) {   /* no cluster (CMake refuses one) */
        if (s->p.sk_total) {
            /* the whole tiles [0, sk_first) by the plain kernel, then the units of the split
             * ones by the stream-K kernel, one CTA a range; no tile is in both */
            if (s->p.sk_first > 0) {
                kparams whole = s->p;
                whole.num_ctiles = s->p.sk_first;
                kernel<<<s->p.sk_first < s->grid ? s->p.sk_first : s->grid, cfg::THREADS, cfg::SMEM,
                         (cudaStream_t)stream>>>(whole);
                const int le = tbv::last_launch_error();
                if (le) return le;
            }
            const int ranges = (s->p.sk_total + s->p.sk_per - 1) / s->p.sk_per;
            wg_kernel_sk<AMN, BMN>()<<<ranges, cfg::THREADS, cfg::SMEM, (cudaStream_t)stream>>>(s->p);
            return tbv::last_launch_error();
        }
    }
    if (cfg::CSIZE == 1) {
        kernel<<<s->grid, cfg::THREADS, cfg::SMEM, (cudaStream_t)stream>>>(s->p);
        return tbv::last_launch_error();
    }
    cudaLaunchConfig_t lc = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = cfg::CSIZE;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    lc.gridDim = dim3((unsigned)s->grid, 1, 1);
    lc.blockDim = dim3(cfg::THREADS, 1, 1);
    lc.dynamicSmemBytes = cfg::SMEM;
    lc.stream = (cudaStream_t)stream;
    lc.attrs = at;
    lc.numAttrs = 1;
    const cudaError_t e = cudaLaunchKernelEx(&lc, kernel, s->p);
    return e != cudaSuccess ? (int)e : tbv::last_launch_error();
}

int wg_describe(void *state, char *buf, size_t len)
{
    const wg_state *s = (const wg_state *)state;
    if (!s || !buf || !len) return 1;
    const int n = snprintf(buf, len,
                           "ctas=%d clusters=%d/%d tiles=%dx%d k_blocks=%d band=%d smem=%d regs=%d/%d ",
                           s->grid, s->clusters, s->max_clusters, s->p.ctiles_m * cfg::CM,
                           s->p.ctiles_n * cfg::CN, s->p.k_iters, s->p.band, cfg::SMEM,
                           cfg::PRODUCER_REGS, cfg::CONSUMER_REGS);
    if (n < 0 || (size_t)n >= len) return 0;
    if (cfg::Op::WHOLE_TILES) {     /* the FP8 family: promotion and the scales */
        const int n2 = snprintf(buf + n, len - (size_t)n, "promote=%d scale_a=%g scale_b=%g", cfg::PROMOTE,
                                (double)s->scale_a, (double)s->scale_b);
        if (cfg::STREAMK && n2 >= 0 && (size_t)(n + n2) < len)   /* a tail-streamk point's split */
            snprintf(buf + n + n2, len - (size_t)(n + n2), " streamk=%s first=%d per=%d total=%d",
                     s->p.sk_total ? "on" : "off", s->p.sk_first, s->p.sk_per, s->p.sk_total);
    } else
        snprintf(buf + n, len - (size_t)n, "streamk=%s first=%d per=%d total=%d d_store=%s",
                 s->p.sk_total ? "on" : "off", s->p.sk_first, s->p.sk_per, s->p.sk_total,
                 s->pd ? "predicated" : "tma");
    return 0;
}

} // namespace

#endif /* TB_VARIANTS_WGMMA_HOST_CUH */
