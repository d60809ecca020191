/* wgmma_config.cuh - a wgmma point's compile-time configuration, for wgmma_kernel.cuh: config
 * (the operand type's traits and the CMake knobs, the shared-memory layout, the register split
 * and the static checks a point must pass), cfg (this translation unit's point) and operand
 * (one operand's stage layout, TMA boxes and descriptor strides in either major order; opA,
 * opB). No code, no state. Included by wgmma_kernel.cuh only, inside its anonymous namespace,
 * after the family file has defined TB_WGMMA_OP and the point's knobs; not a header of its own
 * to include.
 */
/* A point's configuration: the operand type's traits (Op, the family file's) and the CMake
 * knobs. BK is one k-block, 128 bytes of a row of either operand type. */
template <class Op_, int TM_, int TN_, int STAGES_, int CM_, int CN_, int PP_, int RN_, int SW_,
          int EC_, int SK_, int PR_>
struct config {
    using Op = Op_;
    static constexpr int TILE_M = TM_, TILE_N = TN_, BK = 128 / Op::ELEM_BYTES, STAGES = STAGES_;
    static constexpr int CM = CM_, CN = CN_, CSIZE = CM_ * CN_;
    static constexpr bool PINGPONG = PP_ != 0, RASTER_N = RN_ == 1, CONFLICT = EC_ != 0;
    static constexpr bool RASTER_H = RN_ == 2;
    static constexpr bool STREAMK = SK_ != 0;
    static constexpr int SWIZZLE = SW_;
    static constexpr int PROMOTE = PR_;                 /* k-blocks per promotion, 0: none */
    static constexpr int GROUP = PR_ > 0 ? PR_ : 1;     /* PROMOTE as a divisor */
    static constexpr int THREADS = 384;                 /* producer + 2 consumer warpgroups */
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static constexpr int WG_M = PINGPONG ? TILE_M : TILE_M / 2;  /* rows one consumer owns */
    static constexpr int MI = WG_M / 64;                /* m64 wgmmas per k step */
    static constexpr int ACC = TILE_N / 2;              /* f32 accumulators per m64 block */
    static constexpr int ROW_BYTES = BK * Op::ELEM_BYTES;   /* one 128-byte swizzled row */
    static constexpr int STAGE_A = TILE_M * ROW_BYTES, STAGE_B = TILE_N * ROW_BYTES;
    static constexpr int STAGE_BYTES = STAGE_A + STAGE_B;
    /* Rows of the shared operand each CTA of a cluster loads and multicasts. */
    static constexpr int A_LOAD_ROWS = TILE_M / CN, B_LOAD_ROWS = TILE_N / CM;
    static constexpr int CHUNKS = TILE_N / 64;          /* 64-column epilogue chunks */
    static constexpr int EPI_BUF = WG_M * 128;          /* one chunk of one consumer */
    static constexpr int EPI_BUFS = WG_M == 64 ? 2 : 1; /* per consumer */
    static constexpr int EPI_BYTES = 2 * EPI_BUFS * EPI_BUF;
    static constexpr int EMPTY_ARRIVALS = (PINGPONG ? 1 : 2) * CSIZE;
    /* 1024 bytes of slack to align the ring to the 1024-byte swizzle atom, then the ring,
     * the epilogue buffers and the mbarriers. */
    static constexpr int SMEM = 1024 + STAGES * STAGE_BYTES + EPI_BYTES + 16 * STAGES;

    static_assert(TILE_N == 128 || TILE_N == 256, "tile_n must be 128 or 256");
    static_assert(WG_M == 64 || WG_M == 128, "a consumer owns 64 or 128 rows");
    static_assert(MI * ACC <= 128, "at most 128 accumulators per consumer thread");
    static_assert(PROMOTE >= 0 && (PROMOTE == 0 || (Op::WHOLE_TILES && MI * ACC <= 64)),
                  "promotion (the whole-tile loop) keeps 2 accumulator sets: a consumer of 64 "
                  "rows and n <= 128");
    static_assert(STAGES >= 2, "the ring needs at least 2 stages");
    static_assert(CSIZE == 1 || CSIZE == 2, "clusters of 1 or 2 CTAs (1x1, 2x1, 1x2)");
    static_assert(A_LOAD_ROWS % 8 == 0 && B_LOAD_ROWS % 8 == 0 && A_LOAD_ROWS <= 256 &&
                  B_LOAD_ROWS <= 256, "TMA boxes of 8..256 whole swizzle rows");
    static_assert(SWIZZLE >= 1, "swizzle is a group width in tiles");
    static_assert(RN_ >= 0 && RN_ <= 2 && (!RASTER_H || SWIZZLE == 1), "raster m, n, or h (swizzle 1)");
    static_assert(!STREAMK || (CSIZE == 1 && !PINGPONG), "stream-K: cooperative, no cluster");
    static_assert(SMEM <= 227 * 1024, "shared memory above the 227 KB a CTA may have");
    static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 256 <= 65536, "register file");
};

using cfg = config<TB_WGMMA_OP, TB_TILE_M, TB_TILE_N, TB_STAGES, TB_CLUSTER_M, TB_CLUSTER_N,
                   TB_PINGPONG, TB_RASTER_N, TB_SWIZZLE, TB_EPI_CONFLICT, TB_STREAMK, TB_PROMOTE>;

/* One operand (A: TILE = TILE_M, shared by the CN CTAs of a 1x2 cluster; B: TILE = TILE_N,
 * shared by the CM CTAs of a 2x1 cluster) in its major order. Either way a stage holds TILE x
 * BK elements (64 BF16, 128 E4M3) in 128-byte swizzled rows, TILE * 128 bytes:
 *  - K-major (MN = false): row r (MN index r, its BK k) at r * 128; one TMA box of BK k x TILE
 *    rows, or of BK k x TILE / SHARE rows from each CTA of a cluster sharing the operand.
 *  - MN-major (MN = true; BF16 only, Op::MN_OK): TILE / 64 blocks of 64 MN elements, block b at b * 8192, k-row r of
 *    a block (its 64 MN elements, 128 bytes) at r * 128 in it; one TMA box of 64 MN x 64 k per
 *    block. A CTA sharing the operand loads BLOCKS / SHARE whole blocks, or, when the blocks do
 *    not divide (64-wide tile, two CTAs), 64 / SHARE k-rows of every block (SPLIT_K). */
template <bool MN, int TILE, int SHARE>
struct operand {
    static constexpr int BLOCKS = TILE / 64;            /* MN-major: 64-wide MN blocks */
    static constexpr int BLOCK_BYTES = 64 * cfg::ROW_BYTES;   /* 8192: one block of a stage */
    static constexpr bool SPLIT_K = MN && SHARE > 1 && BLOCKS % SHARE != 0;
    static constexpr int LOAD_ROWS = TILE / SHARE;      /* K-major: rows each CTA loads */
    static constexpr int LOAD_BLOCKS = SPLIT_K ? BLOCKS : BLOCKS / SHARE;   /* MN-major */
    static constexpr int BOX_OUTER = MN ? (SPLIT_K ? cfg::BK / SHARE : cfg::BK) : LOAD_ROWS;
    /* descriptor: leading byte offset >> 4 (K-major swizzled: unused, 1; MN-major: from one
     * 64-wide MN block to the next) and the bytes one wgmma's k (Op::K_INSTR: 16 BF16, 32 E4M3)
     * moves the start address (K-major: along the row, 32 bytes; MN-major: 16 k-rows) */
    static constexpr uint32_t LBO = MN ? (uint32_t)BLOCK_BYTES >> 4 : 1u;
    static constexpr int KSTEP = MN ? cfg::Op::K_INSTR * cfg::ROW_BYTES : cfg::Op::K_INSTR * cfg::Op::ELEM_BYTES;
    static_assert(!MN || cfg::Op::MN_OK, "this operand type has no MN-major wgmma");
    static_assert(!MN || (TILE % 64 == 0 && LOAD_BLOCKS * (SPLIT_K ? 1 : SHARE) == BLOCKS),
                  "an MN-major tile is made of 64-wide blocks, each loaded once");
    static_assert(BOX_OUTER % 8 == 0 && BOX_OUTER <= 256, "TMA boxes of 8..256 whole swizzle rows");
};

template <bool AMN> using opA = operand<AMN, cfg::TILE_M, cfg::CN>;
template <bool BMN> using opB = operand<BMN, cfg::TILE_N, cfg::CM>;
