/* auto.cu - wgmma_auto: the Hopper family as one variant per layout, any shape.
 *
 * The library exports four variants, wgmma_auto_bf16_tn, _nn, _nt and _tt (the query's index
 * is the layout index of wgmma.cu: 0 tn, 1 nn, 2 nt, 3 tt); each accepts its own layout.
 * Owns the choice, per problem, of what computes it, made once in setup() from a table a
 * sweep measured (auto-table.json, turned into auto_table.cuh by CMake), and the forwarding of
 * launch() to it:
 *  - m <= the table's skinny_max_m, any layout: the skinny kernel (skinny.cuh for B
 *    column-major, skinny_rowb.cuh for B row-major), memory-bound, any pitch, no workspace;
 *  - tn, lda and ldb multiples of 8 but not both of 64 (rows 16- but not 128-byte aligned,
 *    which TMA reads at about half rate), copying them not paying (realign_pays() false) and
 *    at most 32 tiles of 64 x 136 (small_pays(); the rule is auto_rules.cuh's): the small
 *    kernel (small.cuh), one launch of cp.async loads at the pitch as it is, wgmma, and
 *    predicated stores of D at any ldd: no copy, no tensor map (issue 22's 127x129x136,
 *    where the point's fixed costs are most of the time);
 *  - otherwise the wgmma point (wgmma.cu, built into this library once per point of the
 *    table, in all four layouts) that won the measured shape nearest to this one in this
 *    layout: the same shape when the table has it, else the least sum of |log2| distances over
 *    m, n and k (ties: the first row). A table row names the layout it was measured in (tn
 *    when it names none); a layout's own rows override tn's at the shapes they measured, and
 *    elsewhere the tn rows decide too (the same point in the other layout: it moves the same
 *    bytes through the same MMAs, the operands' order aside): tb_auto_nearest_row();
 *  - an A or B whose pitch TMA cannot describe (lda or ldb not a multiple of 8 elements, 16
 *    bytes; or one not a multiple of the table's pitch_align where the shape is large enough
 *    for that to pay, realign_pays()) is copied into the workspace, in its own major order
 *    (A: m rows of k, or k rows of m when column-major; B: n rows of k, or k rows of n when
 *    row-major), at a pitch rounded up to it (pad_copy below, A and B in one launch before the
 *    point's kernel), so every m, n, k and leading dimension runs on the TMA kernel; the copy
 *    is enqueued by launch(), inside the timed region, as part of the cost. D is not copied
 *    (since the predicated epilogue, issue 22): a point stores it at any ldd, by TMA where ldd
 *    is a multiple of 8, else with its predicated stores (wgmma.cu); C (beta != 0) is read by
 *    the epilogue at any pitch.
 *    Why not cudaMemcpy2DAsync: on rows that are only 2-byte aligned it moved 33 MB in about
 *    55 us on the H100 (4095x4097x4093: 357 us against the point's 178 us at 4096^3), a
 *    third of the DRAM rate; pad_copy's accesses are 2-byte but coalesced on both sides.
 * Nothing here allocates or queries in launch(): the choice, the padded problem and the
 * point's own setup() happen in setup().
 */
#include "../common/gemm_common.cuh"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "auto_rules.cuh"
#include "auto_table.cuh"
#include "skinny.cuh"
#include "small.cuh"

static_assert(TB_AUTO_SMALL_MAX_TILES <= SM_MAX_TILES && SM_BM == TB_AUTO_SMALL_BM &&
              TB_AUTO_SMALL_BN == 136, "auto_rules.cuh's small tiles are small.cuh's widest, "
              "and no more of them than small.cuh takes");

namespace {

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
/* The pitch, in elements, an operand's rows are copied to: TMA needs 16 bytes (8); the table's
 * pitch_align asks for more (64: 128-byte rows, which the TMA loads need for their full rate). */
constexpr int64_t ALIGN = TB_AUTO_PITCH_ALIGN < 8 ? 8 : TB_AUTO_PITCH_ALIGN;
int64_t pitch_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* The layout index of wgmma.cu's query: A column-major (MN-major) and B row-major (MN-major). */
int layout_of(const tb_gemm *g)
{
    const bool amn = g->a_layout == TB_LAYOUT_COL, bmn = g->b_layout == TB_LAYOUT_ROW;
    return amn ? (bmn ? 2 : 1) : (bmn ? 3 : 0);
}
constexpr const char *LAYOUT_NAME[4] = { "tn", "nn", "nt", "tt" };

/* The point's variant in layout l (the table's entries: tn, and nn/nt/tt). */
const tb_variant *point_variant(int point, int l)
{
    return l == 0 ? tb_auto_points[point]() : tb_auto_points_mn[point]((uint32_t)(l - 1));
}

bool realign_pays(const tb_gemm *g);
bool small_pays(const tb_problem *p);

/* choose()'s answers besides a point index */
constexpr int PATH_SKINNY = -1, PATH_SMALL = -2;

/* What computes problem p: PATH_SKINNY, PATH_SMALL, else a point index; row is the table row
 * it came from (-1: none, the first point). */
int choose(const tb_problem *p, int *row)
{
    const tb_gemm *g = &p->gemm;
    const int l = layout_of(g);
    *row = -1;
    if (g->m <= TB_AUTO_SKINNY_MAX_M && skinny_supports(p, NULL, 0)) return PATH_SKINNY;
    if (small_pays(p)) return PATH_SMALL;
    *row = tb_auto_nearest_row(tb_auto_rows, g->m, g->n, g->k, l);
    return *row >= 0 ? tb_auto_rows[*row].point : 0;
}

/* Whether copying A and B to ALIGN-element rows pays, when TMA could read them as they are
 * (16-byte but not ALIGN-aligned rows). Measured on the H100 (docs/perf.md, twelfth session):
 * the 128x256 point at 8192^3 ran 1.78x slower on 16-byte-aligned rows than on 128-byte ones,
 * and the 64x128 point at 1000^3 1.7x slower than at 1024^3: the loss is about 0.75 of the
 * kernel's time, which is its FLOPs at ~700 TFLOP/s plus a floor of ~4 us (launch, pipeline
 * fill, epilogue: 1024^3 runs in 8 us, not 3). The copy reads and writes both operands at the
 * DRAM rate (~3 TB/s) and costs a launch (~4 us). Every decision this makes on the odd set
 * matches what was measured both ways (2049x2047x1000 and 3000x5000x7000 copy; 1000^3,
 * 777x1234x552 and 1023x1025x1032 do not). The arithmetic is auto_rules.cuh's (shared with
 * tests/test_auto.c). */
bool realign_pays(const tb_gemm *g)
{
    return tb_auto_realign_pays(g) != 0;
}

/* Whether the small kernel (small.cuh: one launch, cp.async loads at any 16-byte pitch, no
 * copy, no tensor map, D stored at any pitch) computes p rather than a point. Where all of
 * these hold (auto_rules.cuh's tb_auto_small_pays(), then small.cuh's own supports()):
 *  - layout tn (small.cuh reads k-contiguous A and B), lda and ldb multiples of 8 (cp.async's
 *    16-byte rows: other pitches are copied for the TMA kernel anyway);
 *  - lda or ldb not a multiple of 64 (128-byte rows), so the point would read rows that
 *    straddle 128-byte lines at about half rate (measured: 0.54x at 8192^3), and copying them
 *    to a pitch of 64 does not pay either (realign_pays() false: a launch of its own, which
 *    is most of a small product's time);
 *  - D's rows not 16-byte aligned (ldd not a multiple of 8);
 *  - at most 32 of its 64 x 136 tiles (a quarter wave), where the TMA point's fixed costs are
 *    most of its time; with a wave of them the TMA point is faster now that it stores D at
 *    any ldd itself.
 * Estimated before the GPU ran it: 127x129x136 about 3 us, 1023x1025x1032 about 9-11 us.
 * Measured on the H100 (docs/perf.md, fourteenth session): 5.4 and 17.6 us (1.66x and 2.34x
 * the better cuBLAS), 777x1234x552 11.4 us (1.33x); at 1000^3, 15.9 us against the
 * 128x128 TMA point's 11.3 (twelfth session), hence the ldd condition. On two H200s
 * (fifteenth session, two sweeps), against TMA points with the predicated epilogue:
 * 127x129x136 5.25 us against 6.64 (small wins), 1023x1025x1032 17.4 against 13.9 and
 * 777x1234x552 10.7 against 9.8 (the point wins), hence the tile limit. Of the odd set it
 * takes 127x129x136. */
bool small_pays(const tb_problem *p)
{
    return tb_auto_small_pays(&p->gemm, ALIGN) && small_supports(p, NULL, 0);
}

/* The problem the point computes: p with A's or B's pitch TMA cannot describe (not a multiple
 * of 8) rounded up to ALIGN, and a pitch of 8 that is not a multiple of ALIGN where
 * realign_pays(). D is never copied: the point stores it at any ldd (wgmma.cu's predicated
 * epilogue where ldd is not a multiple of 8). */
tb_problem padded(const tb_problem *p, int *pad_a, int *pad_b)
{
    tb_problem q = tbv::problem_copy(p);
    tb_gemm *g = &q.gemm;
    const bool realign = ALIGN > 8 && realign_pays(g);
    *pad_a = g->lda % 8 != 0 || (realign && g->lda % ALIGN != 0);
    *pad_b = g->ldb % 8 != 0 || (realign && g->ldb % ALIGN != 0);
    if (*pad_a) g->lda = pitch_up(g->a_layout == TB_LAYOUT_ROW ? g->k : g->m);
    if (*pad_b) g->ldb = pitch_up(g->b_layout == TB_LAYOUT_COL ? g->k : g->n);
    return q;
}

/* An operand as the copy sees it: rows of contiguous elements (A row-major: m rows of k;
 * column-major: k rows of m; B column-major: n rows of k; row-major: k rows of n). */
struct rows_t { int64_t rows, cols; };
rows_t a_rows(const tb_gemm *g) { return g->a_layout == TB_LAYOUT_ROW ? rows_t{ g->m, g->k } : rows_t{ g->k, g->m }; }
rows_t b_rows(const tb_gemm *g) { return g->b_layout == TB_LAYOUT_COL ? rows_t{ g->n, g->k } : rows_t{ g->k, g->n }; }

/* One row-pitch copy of up to two BF16 matrices (rows x cols, src pitch sp, dst pitch dp, in
 * elements): blockIdx.y picks the matrix, each block copies PAD_COLS consecutive columns of one
 * row, thread t the columns t, t + PAD_THREADS, ... (each warp access 64 contiguous bytes on
 * both sides, PAD_PER loads in flight a thread). Columns past cols are left as they are: the
 * point's tensor maps end at k. */
constexpr int PAD_THREADS = 256, PAD_PER = 8, PAD_COLS = PAD_THREADS * PAD_PER;
struct pad_job { const uint16_t *src; uint16_t *dst; int64_t rows, cols, sp, dp; };
struct pad_jobs { pad_job j[2]; };

__global__ void __launch_bounds__(PAD_THREADS) pad_copy(const __grid_constant__ pad_jobs jobs)
{
    const pad_job &j = jobs.j[blockIdx.y];
    const int64_t per_row = (j.cols + PAD_COLS - 1) / PAD_COLS;
    if ((int64_t)blockIdx.x >= j.rows * per_row) return;
    const int64_t r = blockIdx.x / per_row, c0 = (blockIdx.x % per_row) * PAD_COLS + threadIdx.x;
    const uint16_t *src = j.src + r * j.sp;
    uint16_t *dst = j.dst + r * j.dp;
    uint16_t v[PAD_PER];
#pragma unroll
    for (int i = 0; i < PAD_PER; i++) {
        const int64_t c = c0 + (int64_t)i * PAD_THREADS;
        v[i] = c < j.cols ? src[c] : 0;
    }
#pragma unroll
    for (int i = 0; i < PAD_PER; i++) {
        const int64_t c = c0 + (int64_t)i * PAD_THREADS;
        if (c < j.cols) dst[c] = v[i];
    }
}

/* Queue pad_copy for jobs[0..n): one launch, grid (the larger job's blocks, n). */
cudaError_t launch_pad(const pad_job *jobs, int n, cudaStream_t st)
{
    pad_jobs pj;
    memset(&pj, 0, sizeof pj);
    int64_t blocks = 0;
    for (int i = 0; i < n; i++) {
        pj.j[i] = jobs[i];
        const int64_t b = jobs[i].rows * ((jobs[i].cols + PAD_COLS - 1) / PAD_COLS);
        if (b > blocks) blocks = b;
    }
    if (n == 0 || blocks == 0) return cudaSuccess;
    if (blocks > INT_MAX) return cudaErrorInvalidConfiguration;
    pad_copy<<<dim3((unsigned)blocks, (unsigned)n), PAD_THREADS, 0, st>>>(pj);
    return cudaGetLastError();
}

/* Workspace: the point's own, then A' and B' where padded, each 256-byte aligned. */
struct layout_t { size_t point, a, b, total; };

layout_t ws_layout(const tb_variant *v, const tb_problem *q, int pad_a, int pad_b)
{
    const tb_gemm *g = &q->gemm;
    layout_t l;
    l.point = round_up(v->workspace_size ? v->workspace_size(q) : 0, 256);
    size_t at = l.point;
    l.a = at; if (pad_a) at += round_up((size_t)a_rows(g).rows * g->lda * 2, 256);
    l.b = at; if (pad_b) at += round_up((size_t)b_rows(g).rows * g->ldb * 2, 256);
    l.total = at;
    return l;
}

struct auto_state {
    int point, row;                 /* PATH_SKINNY, PATH_SMALL or a point */
    const tb_variant *v;
    void *inner;                    /* the point's setup() state */
    tb_problem q;                   /* the problem the point computes (padded pitches) */
    int pad_a, pad_b;
    layout_t ws;
};

/* Variant L's problems: its own layout (A and B majors), D and C row-major, batch 1. */
template <int L>
int au_supports(const tb_problem *p, char *why, size_t len)
{
    const tb_layout a = L == 1 || L == 2 ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    const tb_layout b = L == 2 || L == 3 ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    if (!tbv::bf16_gemm_layout_ok(p, a, b, why, len)) return 0;
    int row, pa, pb;
    const int pick = choose(p, &row);
    if (pick < 0) return 1;         /* skinny, small: their rules asked their supports() */
    const tb_problem q = padded(p, &pa, &pb);
    return point_variant(pick, L)->supports(&q, why, len);
}

size_t au_workspace_size(const tb_problem *p)
{
    int row, pa, pb;
    const int pick = choose(p, &row);
    if (pick < 0) return 0;
    const tb_problem q = padded(p, &pa, &pb);
    return ws_layout(point_variant(pick, layout_of(&p->gemm)), &q, pa, pb).total;
}

void au_teardown(void *state)
{
    auto_state *s = (auto_state *)state;
    if (s && s->v && s->v->teardown) s->v->teardown(s->inner);
    free(s);
}

int au_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    *state = NULL;
    auto_state *s = (auto_state *)calloc(1, sizeof *s);
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->point = choose(p, &s->row);
    s->q = tbv::problem_copy(p);
    if (s->point == PATH_SMALL && small_setup(msg, len)) {
        free(s);
        return 1;
    }
    if (s->point >= 0) {
        s->v = point_variant(s->point, layout_of(&p->gemm));
        s->q = padded(p, &s->pad_a, &s->pad_b);
        s->ws = ws_layout(s->v, &s->q, s->pad_a, s->pad_b);
        if (s->v->setup && s->v->setup(&s->q, stream, &s->inner, msg, len)) {
            free(s);
            return 1;
        }
    }
    *state = s;
    return 0;
}

int au_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
              size_t workspace_bytes, tb_stream stream)
{
    auto_state *s = (auto_state *)state;
    if (!s) return (int)cudaErrorNotReady;
    cudaStream_t st = (cudaStream_t)stream;
    if (s->point == PATH_SKINNY) return skinny_launch(p, io, st);
    if (s->point == PATH_SMALL) return small_launch(p, io, st);
    const tb_gemm *g = &p->gemm, *h = &s->q.gemm;
    if (workspace_bytes < s->ws.total || (s->ws.total && !workspace)) return (int)cudaErrorInvalidValue;
    char *ws = (char *)workspace;
    tb_buffers b = *io;
    pad_job in[2];
    int n_in = 0;
    if (s->pad_a) {
        b.in[0] = ws + s->ws.a;
        const rows_t r = a_rows(g);
        in[n_in++] = { (const uint16_t *)io->in[0], (uint16_t *)b.in[0], r.rows, r.cols, g->lda, h->lda };
    }
    if (s->pad_b) {
        b.in[1] = ws + s->ws.b;
        const rows_t r = b_rows(g);
        in[n_in++] = { (const uint16_t *)io->in[1], (uint16_t *)b.in[1], r.rows, r.cols, g->ldb, h->ldb };
    }
    const cudaError_t e = launch_pad(in, n_in, st);
    if (e != cudaSuccess) return (int)e;
    return s->v->launch(s->inner, &s->q, &b, s->ws.point ? ws : NULL, s->ws.point, stream);
}

int au_describe(void *state, char *buf, size_t len)
{
    const auto_state *s = (const auto_state *)state;
    if (!s || !buf || !len) return 1;
    if (s->point == PATH_SKINNY) {
        snprintf(buf, len, "path=skinny m<=%d", TB_AUTO_SKINNY_MAX_M);
        return 0;
    }
    if (s->point == PATH_SMALL) {
        const tb_gemm *g = &s->q.gemm;
        const int bn = small_bn(g);
        snprintf(buf, len, "path=small tile=64x%d ctas=%lld k_blocks=%lld", bn,
                 (long long)small_tiles(g, bn), (long long)((g->k + SM_BK - 1) / SM_BK));
        return 0;
    }
    char inner[256] = "";
    if (s->v->describe) s->v->describe(s->inner, inner, sizeof inner);
    const tb_auto_row *r = s->row >= 0 ? &tb_auto_rows[s->row] : NULL;
    snprintf(buf, len, "path=wgmma point=%s from=%s%lldx%lldx%lld%s%s pad=%s%s%s %s", s->v->name,
             r ? "" : "none:", r ? r->m : 0LL, r ? r->n : 0LL, r ? r->k : 0LL,
             r ? ":" : "", r ? LAYOUT_NAME[r->layout] : "",
             s->pad_a ? "a" : "", s->pad_b ? "b" : "", s->pad_a || s->pad_b ? "" : "none", inner);
    return 0;
}

template <int L>
const tb_param au_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_STR("layout", LAYOUT_NAME[L]),
    TB_PARAM_END
};

char au_name[4][128];

template <int L>
const tb_variant au_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), au_name[L], "wgmma_auto", au_params<L>, TB_SASS,
    au_supports<L>, au_workspace_size, au_launch, au_setup, au_teardown, au_describe, NULL
};

template <int L>
size_t au_named()
{
    return tb_variant_make_name("wgmma_auto", au_params<L>, au_name[L], sizeof au_name[L]);
}

} // namespace

/* The four variants, index 0-3: tn, nn, nt, tt (the layout index), NULL after; named on the
 * first call (C++ makes the one-time initialisation thread-safe). */
extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    static const size_t named_ = au_named<0>() + au_named<1>() + au_named<2>() + au_named<3>();
    (void)named_;
    return index == 0 ? &au_variant<0> : index == 1 ? &au_variant<1>
         : index == 2 ? &au_variant<2> : index == 3 ? &au_variant<3> : NULL;
}
