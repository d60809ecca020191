/* mma_sync.cu - mma_sync: the Ampere-style tensor-core GEMM, one source for the whole grid.
 *
 * D = alpha * A * B + beta * C with A row-major (k contiguous), B column-major (k
 * contiguous), BF16 in, FP32 accumulation, BF16 out. One CTA computes a BM x BN tile of D
 * with WM x WN warps, each warp a (BM/WM) x (BN/WN) sub-tile built of
 * mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 instructions. K is walked BK at a
 * time through a STAGES-deep shared-memory ring filled by cp.async.cg (16 bytes, L2 only):
 * commit_group after each tile, wait_group STAGES-2 before each use, one __syncthreads per
 * k-tile. Fragments come from shared memory by ldmatrix.x4 (A: one 16x16 block; B: two n8
 * blocks). Shared rows of BK bf16 are stored in 16-byte chunks whose index is XOR-swizzled
 * with the row (see swz()), so the 8 rows an ldmatrix phase reads, and the chunks a
 * cp.async phase writes, fall in 8 different bank groups.
 *
 * Edges: loads outside m, n or k are predicated off by cp.async's src-size 0, which fills
 * the chunk with zeros (k % 8 == 0 keeps every chunk wholly in or out); stores outside m or
 * n are skipped. The epilogue reads C and writes D through general (row, column) strides,
 * pairs of columns as one bf16x2 access when the pair is contiguous and 4-byte aligned,
 * so any C/D layout, leading dimension and batch stride works.
 *
 * The build instantiates one library per grid point from this file: CMake defines TB_BM,
 * TB_BN, TB_BK, TB_WM, TB_WN, TB_STAGES and TB_MINB (minimum resident CTAs per SM, which
 * caps the registers through __launch_bounds__). The warp layout is not part of the name:
 * the grid must not hold two points that differ only in WM x WN.
 */
#include "../common/gemm_common.cuh"

#include <limits.h>

#if !defined(TB_BM) || !defined(TB_BN) || !defined(TB_BK) || !defined(TB_WM) || \
    !defined(TB_WN) || !defined(TB_STAGES)
#error "mma_sync.cu needs TB_BM, TB_BN, TB_BK, TB_WM, TB_WN and TB_STAGES (see CMakeLists.txt)"
#endif
#ifndef TB_MINB
#define TB_MINB 1
#endif

namespace {

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MINB_>
struct config {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_;
    static constexpr int STAGES = STAGES_, MINB = MINB_;
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int WTM = BM / WM, WTN = BN / WN;  /* warp tile */
    static constexpr int MI = WTM / 16, NI = WTN / 8;   /* mma tiles per warp */
    static constexpr int CPR = BK / 8;                  /* 16-byte chunks per shared row */
    /* Swizzle: rows per 128-byte line, and the chunk bits the row XORs in. */
    static constexpr int RPL = CPR >= 8 ? 1 : 8 / CPR;
    static constexpr int XMASK = CPR >= 8 ? 7 : CPR - 1;
    static constexpr int ROWS_PER_PASS = THREADS / CPR; /* rows one loader pass covers */
    static constexpr int A_PASSES = BM / ROWS_PER_PASS, B_PASSES = BN / ROWS_PER_PASS;
    static constexpr int A_STAGE = BM * BK * 2, B_STAGE = BN * BK * 2;   /* bytes */
    static constexpr int SMEM = STAGES * (A_STAGE + B_STAGE);
    static constexpr int GROUP_M = 8;                   /* tile rows per raster group */

    static_assert(BK % 16 == 0 && BK <= 128, "BK must be 16, 32, 48, 64, ... 128");
    static_assert(CPR <= 8 || CPR % 8 == 0, "swizzle needs BK <= 64 or a multiple of 64");
    static_assert(WTM % 16 == 0 && BM % WM == 0, "warp tile rows must be a multiple of 16");
    static_assert(WTN % 16 == 0 && BN % WN == 0, "warp tile columns must be a multiple of 16");
    static_assert(THREADS % CPR == 0, "loader shape");
    static_assert(BM % ROWS_PER_PASS == 0 && BN % ROWS_PER_PASS == 0, "loader shape");
    static_assert(ROWS_PER_PASS % 8 == 0, "loader passes must keep the swizzle phase");
    static_assert(A_PASSES <= 32 && B_PASSES <= 32, "row masks are 32 bits");
    static_assert(STAGES >= 2, "the pipeline needs at least 2 stages");
    static_assert(SMEM <= 227 * 1024, "shared memory above the 227 KB a CTA may have");
};

using cfg = config<TB_BM, TB_BN, TB_BK, TB_WM, TB_WN, TB_STAGES, TB_MINB>;

struct args {
    const __nv_bfloat16 *a, *b, *c;     /* c is NULL when beta == 0 */
    __nv_bfloat16 *d;
    int m, n, k;
    int tiles_m, tiles_n;
    int64_t batch;
    int64_t lda, ldb;
    tbv::strides sc, sd;
    int64_t stride_a, stride_b, stride_c, stride_d;
    float alpha, beta;
};

/* ---- PTX wrappers --------------------------------------------------------------------- */

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int N>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t &r0, uint32_t &r1, uint32_t &r2,
                                            uint32_t &r3, uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4],
                                         const uint32_t (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* Byte offset of 16-byte chunk `chunk` of shared row `row` in a stage: rows are BK bf16
 * (CPR chunks) long and the chunk index is XORed with the row's position in its 128-byte
 * line, so 8 consecutive rows at one chunk index land in 8 different 16-byte bank groups. */
__device__ __forceinline__ uint32_t swz(int row, int chunk)
{
    return (uint32_t)(row * cfg::CPR + (chunk ^ ((row / cfg::RPL) & cfg::XMASK))) * 16u;
}

/* ---- the epilogue ------------------------------------------------------------------- */

/* D(row, col..col+1) = alpha * (v0, v1) + beta * C(row, col..col+1); row < m, col < n. */
__device__ __forceinline__ void store_pair(const args &g, int64_t b, int row, int col,
                                           float v0, float v1)
{
    const bool two = col + 1 < g.n;
    v0 *= g.alpha;
    v1 *= g.alpha;
    if (g.beta != 0.f) {
        const int64_t co = b * g.stride_c + (int64_t)row * g.sc.rs + (int64_t)col * g.sc.cs;
        if (two && g.sc.cs == 1 && (co & 1) == 0) {
            const float2 cv = __bfloat1622float2(
                *reinterpret_cast<const __nv_bfloat162 *>(g.c + co));
            v0 = fmaf(g.beta, cv.x, v0);
            v1 = fmaf(g.beta, cv.y, v1);
        } else {
            v0 = fmaf(g.beta, __bfloat162float(g.c[co]), v0);
            if (two) v1 = fmaf(g.beta, __bfloat162float(g.c[co + g.sc.cs]), v1);
        }
    }
    const int64_t dof = b * g.stride_d + (int64_t)row * g.sd.rs + (int64_t)col * g.sd.cs;
    if (two && g.sd.cs == 1 && (dof & 1) == 0) {
        *reinterpret_cast<__nv_bfloat162 *>(g.d + dof) = __floats2bfloat162_rn(v0, v1);
    } else {
        g.d[dof] = __float2bfloat16(v0);
        if (two) g.d[dof + g.sd.cs] = __float2bfloat16(v1);
    }
}

/* ---- the kernel ------------------------------------------------------------------------ */

__global__ void __launch_bounds__(cfg::THREADS, cfg::MINB) mma_sync_kernel(const args g)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t sA = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sB = sA + cfg::STAGES * cfg::A_STAGE;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / cfg::WN, wn = warp % cfg::WN;

    /* Grouped rasterisation: consecutive CTAs walk GROUP_M tile rows down one tile column
     * before moving right, so neighbours share A and B tiles in L2. */
    int tm, tn;
    {
        const int bid = blockIdx.x, width = cfg::GROUP_M * g.tiles_n;
        const int first_m = (bid / width) * cfg::GROUP_M;
        const int rows = min(g.tiles_m - first_m, cfg::GROUP_M);
        tm = first_m + (bid % width) % rows;
        tn = (bid % width) / rows;
    }
    const int m0 = tm * cfg::BM, n0 = tn * cfg::BN;

    /* Loader: this thread copies chunk `lc` of rows lr + i * ROWS_PER_PASS of each tile. */
    const int lr = tid / cfg::CPR, lc = tid % cfg::CPR;
    const uint32_t ld_dst = swz(lr, lc);    /* + i * ROWS_PER_PASS * BK * 2 for pass i */
    uint32_t a_rows_ok = 0, b_rows_ok = 0;  /* bit i: pass i's row is inside m (n) */
#pragma unroll
    for (int i = 0; i < cfg::A_PASSES; i++)
        a_rows_ok |= (m0 + lr + i * cfg::ROWS_PER_PASS < g.m ? 1u : 0u) << i;
#pragma unroll
    for (int i = 0; i < cfg::B_PASSES; i++)
        b_rows_ok |= (n0 + lr + i * cfg::ROWS_PER_PASS < g.n ? 1u : 0u) << i;

    /* ldmatrix: lane l addresses row (l % 16) of an A 16x16 block, chunk l / 16; and row
     * (l % 8) + 8 (l / 16) of a B 16-row block, chunk (l / 8) % 2; these are the offsets
     * in a stage for k-step 0. Both rows have the same position in their 128-byte line,
     * hence one XOR term xsw. For k-step ks the chunk is (2 ks + half) ^ xsw, which is
     * (half ^ xsw) ^ 2 ks: the offset for ks is the one for 0 XOR 32 ks (the row part is a
     * multiple of BK * 2 bytes, above every chunk bit). */
    const int xsw = ((lane & 7) / cfg::RPL) & cfg::XMASK;
    const uint32_t a_lm = (uint32_t)((wm * cfg::WTM + (lane & 15)) * cfg::BK * 2 +
                                     (((lane >> 4) ^ xsw) * 16));
    const uint32_t b_lm = (uint32_t)((wn * cfg::WTN + (lane & 7) + ((lane >> 4) << 3)) * cfg::BK * 2 +
                                     ((((lane >> 3) & 1) ^ xsw) * 16));

    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
        /* The next k-tile to load: this thread's first A and B rows at its chunk, and
         * that chunk's first k. Tiles are loaded strictly in order, so load_next() walks
         * them forward. A predicated-off copy reads nothing, but still gets a valid
         * source address: the start of A or B. */
        const __nv_bfloat16 *a_src = g.a + b * g.stride_a + (int64_t)(m0 + lr) * g.lda + lc * 8;
        const __nv_bfloat16 *b_src = g.b + b * g.stride_b + (int64_t)(n0 + lr) * g.ldb + lc * 8;
        const int64_t a_pass = (int64_t)cfg::ROWS_PER_PASS * g.lda;
        const int64_t b_pass = (int64_t)cfg::ROWS_PER_PASS * g.ldb;
        int k_load = 0;     /* first k of the next tile to load */

        auto load_next = [&](int stage) {
            const bool k_ok = k_load + lc * 8 < g.k;
#pragma unroll
            for (int i = 0; i < cfg::A_PASSES; i++) {
                const bool ok = k_ok && ((a_rows_ok >> i) & 1u);
                cp_async16(sA + stage * cfg::A_STAGE + ld_dst + i * cfg::ROWS_PER_PASS * cfg::BK * 2,
                           ok ? (const void *)(a_src + i * a_pass) : (const void *)g.a,
                           ok ? 16 : 0);
            }
#pragma unroll
            for (int i = 0; i < cfg::B_PASSES; i++) {
                const bool ok = k_ok && ((b_rows_ok >> i) & 1u);
                cp_async16(sB + stage * cfg::B_STAGE + ld_dst + i * cfg::ROWS_PER_PASS * cfg::BK * 2,
                           ok ? (const void *)(b_src + i * b_pass) : (const void *)g.b,
                           ok ? 16 : 0);
            }
            a_src += cfg::BK;
            b_src += cfg::BK;
            k_load += cfg::BK;
        };

        float acc[cfg::MI][cfg::NI][4];
#pragma unroll
        for (int i = 0; i < cfg::MI; i++)
#pragma unroll
            for (int j = 0; j < cfg::NI; j++)
#pragma unroll
                for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;

        /* Prologue: tiles 0 .. STAGES-2 in flight, one commit group each (empty groups
         * past the last tile keep the group count that wait_group relies on). */
#pragma unroll
        for (int s = 0; s < cfg::STAGES - 1; s++) {
            if (k_load < g.k) load_next(s);
            cp_async_commit();
        }

        /* Tile kt (the one at k0) is read from stage kt % STAGES; tile kt+STAGES-1 is
         * loaded into the stage before it. */
        int stage = 0;
        for (int k0 = 0; k0 < g.k; k0 += cfg::BK) {
            /* Groups committed so far: STAGES-1+kt. Leaving STAGES-2 pending means tile kt
             * has landed (for this thread); the barrier makes it everyone's, and also says
             * every warp has finished reading the stage before (tile kt-1). */
            cp_async_wait<cfg::STAGES - 2>();
            __syncthreads();
            if (k_load < g.k) load_next(stage == 0 ? cfg::STAGES - 1 : stage - 1);
            cp_async_commit();

            const uint32_t a_stage = sA + stage * cfg::A_STAGE;
            const uint32_t b_stage = sB + stage * cfg::B_STAGE;
#pragma unroll
            for (int ks = 0; ks < cfg::BK / 16; ks++) {
                uint32_t af[cfg::MI][4], bf[cfg::NI][2];
                const uint32_t a_addr = a_stage + (a_lm ^ (uint32_t)(ks * 32));
                const uint32_t b_addr = b_stage + (b_lm ^ (uint32_t)(ks * 32));
#pragma unroll
                for (int i = 0; i < cfg::MI; i++)
                    ldmatrix_x4(af[i][0], af[i][1], af[i][2], af[i][3],
                                a_addr + i * 16 * cfg::BK * 2);
#pragma unroll
                for (int j = 0; j < cfg::NI; j += 2)
                    ldmatrix_x4(bf[j][0], bf[j][1], bf[j + 1][0], bf[j + 1][1],
                                b_addr + j * 8 * cfg::BK * 2);
#pragma unroll
                for (int i = 0; i < cfg::MI; i++)
#pragma unroll
                    for (int j = 0; j < cfg::NI; j++) mma_bf16(acc[i][j], af[i], bf[j]);
            }
            stage = stage == cfg::STAGES - 1 ? 0 : stage + 1;
        }
        /* Drain (the trailing groups are empty) and let every warp finish with shared
         * memory before the next batch's prologue overwrites it. */
        cp_async_wait<0>();
        __syncthreads();

        /* Epilogue straight from the accumulators: c0,c1 at (row g, cols 2t, 2t+1) and
         * c2,c3 at row g+8, g = lane / 4, t = lane % 4. */
        const int gr = lane >> 2, tc = (lane & 3) * 2;
#pragma unroll
        for (int i = 0; i < cfg::MI; i++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int row = m0 + wm * cfg::WTM + i * 16 + gr + h * 8;
                if (row >= g.m) continue;
#pragma unroll
                for (int j = 0; j < cfg::NI; j++) {
                    const int col = n0 + wn * cfg::WTN + j * 8 + tc;
                    if (col < g.n) store_pair(g, b, row, col, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                }
            }
        }
    }
}

/* ---- the variant ------------------------------------------------------------------------ */

int mma_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_ok(p, why, len)) return 0;
    const tb_gemm *g = &p->gemm;
    if (g->a_layout != TB_LAYOUT_ROW || g->b_layout != TB_LAYOUT_COL)
        return tbv::no(why, len, "needs a row-major and b column-major (k contiguous, tn)");
    if (g->k % 8 != 0) return tbv::no(why, len, "k must be a multiple of 8");
    if (g->lda % 8 != 0 || g->ldb % 8 != 0)
        return tbv::no(why, len, "lda and ldb must be multiples of 8");
    if (g->batch > 1 && (g->stride_a % 8 != 0 || g->stride_b % 8 != 0))
        return tbv::no(why, len, "batch strides of a and b must be multiples of 8");
    /* Kernel indices are 32-bit; 2^30 leaves room for a tile past the end. */
    if (g->m > (1 << 30) || g->n > (1 << 30) || g->k > (1 << 30))
        return tbv::no(why, len, "m, n and k must be at most 2^30");
    const int64_t tiles = ((g->m + cfg::BM - 1) / cfg::BM) * ((g->n + cfg::BN - 1) / cfg::BN);
    if (tiles + (int64_t)cfg::GROUP_M * ((g->n + cfg::BN - 1) / cfg::BN) > INT_MAX)
        return tbv::no(why, len, "too many tiles for one grid");
    return 1;
}

int mma_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    (void)p; (void)stream;
    *state = NULL;
    cudaError_t e = cudaFuncSetAttribute(mma_sync_kernel,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, cfg::SMEM);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(mma_sync_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 (int)cudaSharedmemCarveoutMaxShared);
    if (e != cudaSuccess) {
        snprintf(msg, len, "cannot set the kernel's shared memory (%d bytes): %s", cfg::SMEM,
                 cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

int mma_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
               size_t workspace_bytes, tb_stream stream)
{
    (void)state; (void)workspace; (void)workspace_bytes;
    const tb_gemm *q = &p->gemm;
    args g;
    g.a = (const __nv_bfloat16 *)io->in[0];
    g.b = (const __nv_bfloat16 *)io->in[1];
    g.c = q->beta != 0.0 ? (const __nv_bfloat16 *)io->in[2] : NULL;
    g.d = (__nv_bfloat16 *)io->out[0];
    g.m = (int)q->m; g.n = (int)q->n; g.k = (int)q->k;
    g.tiles_m = (int)((q->m + cfg::BM - 1) / cfg::BM);
    g.tiles_n = (int)((q->n + cfg::BN - 1) / cfg::BN);
    g.batch = q->batch;
    g.lda = q->lda; g.ldb = q->ldb;
    g.sc = tbv::strides_of(q->c_layout, q->ldc);
    g.sd = tbv::strides_of(q->d_layout, q->ldd);
    g.stride_a = q->stride_a; g.stride_b = q->stride_b;
    g.stride_c = q->stride_c; g.stride_d = q->stride_d;
    g.alpha = (float)q->alpha;
    g.beta = (float)q->beta;

    const dim3 grid((unsigned)(g.tiles_m * g.tiles_n), 1,
                    (unsigned)(q->batch < 65535 ? q->batch : 65535));
    mma_sync_kernel<<<grid, cfg::THREADS, cfg::SMEM, (cudaStream_t)stream>>>(g);
    return tbv::last_launch_error();
}

const tb_param mma_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_INT("tile_m", cfg::BM),
    TB_PARAM_INT("tile_n", cfg::BN),
    TB_PARAM_INT("tile_k", cfg::BK),
    TB_PARAM_INT("stages", cfg::STAGES),
    TB_PARAM_INT("warps", cfg::WM * cfg::WN),
    TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

char mma_name[96];

const tb_variant mma_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), mma_name, "mma_sync", mma_params,
    TB_SASS, mma_supports, NULL, mma_launch, mma_setup, NULL, NULL, NULL
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(mma_variant, mma_name, "mma_sync", mma_params)
