/* auto.cu - wgmma_auto: the Hopper family as one variant, any shape, layout tn.
 *
 * Owns the choice, per problem, of what computes it, made once in setup() from a table a
 * sweep measured (auto-table.json, turned into auto_table.cuh by CMake), and the forwarding of
 * launch() to it:
 *  - m <= the table's skinny_max_m: the skinny kernel (skinny.cuh), memory-bound, any pitch;
 *  - otherwise the wgmma point (wgmma.cu, built into this library once per point of the
 *    table) that won the measured shape nearest to this one: the same shape when the table
 *    has it, else the least sum of |log2| distances over m, n and k (ties: the first row);
 *  - an operand whose row pitch TMA cannot describe (lda, ldb or ldd not a multiple of 8
 *    elements, 16 bytes; for A and B, of the table's pitch_align) is copied into the workspace
 *    at a pitch rounded up to it
 *    (cudaMemcpy2DAsync: A and B before the point's kernel, D after it), so every m, n, k and
 *    leading dimension runs on the TMA kernel; the copies are enqueued by launch(), inside
 *    the timed region, as part of the cost. C (beta != 0) is read by the epilogue at any pitch.
 * Nothing here allocates or queries in launch(): the choice, the padded problem and the
 * point's own setup() happen in setup().
 */
#include "../common/gemm_common.cuh"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "auto_table.cuh"
#include "skinny.cuh"

namespace {

size_t round_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
/* The pitch, in elements, an operand's rows must have to run uncopied: TMA needs 16 bytes (8);
 * the table's pitch_align may ask for more (64: 128-byte rows, docs/perf.md's hypothesis). */
constexpr int64_t ALIGN = TB_AUTO_PITCH_ALIGN < 8 ? 8 : TB_AUTO_PITCH_ALIGN;
int64_t pitch_up(int64_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* What computes problem p: -1 the skinny kernel, else a point index; row is the table row
 * it came from (-1: none, the first point). */
int choose(const tb_problem *p, int *row)
{
    const tb_gemm *g = &p->gemm;
    *row = -1;
    if (g->m <= TB_AUTO_SKINNY_MAX_M && skinny_supports(p, NULL, 0)) return -1;
    double best = INFINITY;
    int pick = 0;
    for (int i = 0; tb_auto_rows[i].point != -2; i++) {
        const tb_auto_row &r = tb_auto_rows[i];
        if (r.point < 0) continue;   /* a skinny row says nothing about the wgmma points */
        const double d = fabs(log2((double)g->m / r.m)) + fabs(log2((double)g->n / r.n)) +
                         fabs(log2((double)g->k / r.k));
        if (d < best) { best = d; pick = r.point; *row = i; }
    }
    return pick;
}

/* The problem the point computes: p with each pitch TMA cannot describe rounded up to 8. */
tb_problem padded(const tb_problem *p, int *pad_a, int *pad_b, int *pad_d)
{
    tb_problem q = *p;
    tb_gemm *g = &q.gemm;
    *pad_a = g->lda % ALIGN != 0;
    *pad_b = g->ldb % ALIGN != 0;
    *pad_d = g->ldd % 8 != 0;                   /* D is stored, not streamed: 16 bytes do */
    if (*pad_a) g->lda = pitch_up(g->k);
    if (*pad_b) g->ldb = pitch_up(g->k);
    if (*pad_d) g->ldd = (g->n + 7) / 8 * 8;
    return q;
}

/* Workspace: the point's own, then A', B' and D' where padded, each 256-byte aligned. */
struct layout_t { size_t point, a, b, d, total; };

layout_t ws_layout(const tb_variant *v, const tb_problem *q, int pad_a, int pad_b, int pad_d)
{
    const tb_gemm *g = &q->gemm;
    layout_t l;
    l.point = round_up(v->workspace_size ? v->workspace_size(q) : 0, 256);
    size_t at = l.point;
    l.a = at; if (pad_a) at += round_up((size_t)g->m * g->lda * 2, 256);
    l.b = at; if (pad_b) at += round_up((size_t)g->n * g->ldb * 2, 256);
    l.d = at; if (pad_d) at += round_up((size_t)g->m * g->ldd * 2, 256);
    l.total = at;
    return l;
}

struct auto_state {
    int point, row;                 /* -1: skinny */
    const tb_variant *v;
    void *inner;                    /* the point's setup() state */
    tb_problem q;                   /* the problem the point computes (padded pitches) */
    int pad_a, pad_b, pad_d;
    layout_t ws;
};

int au_supports(const tb_problem *p, char *why, size_t len)
{
    if (!tbv::bf16_gemm_tn_ok(p, why, len)) return 0;
    int row, pa, pb, pd;
    const int pick = choose(p, &row);
    if (pick < 0) return 1;
    const tb_problem q = padded(p, &pa, &pb, &pd);
    return tb_auto_points[pick]()->supports(&q, why, len);
}

size_t au_workspace_size(const tb_problem *p)
{
    int row, pa, pb, pd;
    const int pick = choose(p, &row);
    if (pick < 0) return 0;
    const tb_problem q = padded(p, &pa, &pb, &pd);
    return ws_layout(tb_auto_points[pick](), &q, pa, pb, pd).total;
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
    if (s->point >= 0) {
        s->v = tb_auto_points[s->point]();
        s->q = padded(p, &s->pad_a, &s->pad_b, &s->pad_d);
        s->ws = ws_layout(s->v, &s->q, s->pad_a, s->pad_b, s->pad_d);
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
    if (s->point < 0) return skinny_launch(p, io, st);
    const tb_gemm *g = &p->gemm, *h = &s->q.gemm;
    if (workspace_bytes < s->ws.total || (s->ws.total && !workspace)) return (int)cudaErrorInvalidValue;
    char *ws = (char *)workspace;
    tb_buffers b = *io;
    cudaError_t e = cudaSuccess;
    if (s->pad_a) {
        e = cudaMemcpy2DAsync(ws + s->ws.a, (size_t)h->lda * 2, io->in[0], (size_t)g->lda * 2,
                              (size_t)g->k * 2, (size_t)g->m, cudaMemcpyDeviceToDevice, st);
        b.in[0] = ws + s->ws.a;
    }
    if (e == cudaSuccess && s->pad_b) {
        e = cudaMemcpy2DAsync(ws + s->ws.b, (size_t)h->ldb * 2, io->in[1], (size_t)g->ldb * 2,
                              (size_t)g->k * 2, (size_t)g->n, cudaMemcpyDeviceToDevice, st);
        b.in[1] = ws + s->ws.b;
    }
    if (e != cudaSuccess) return (int)e;
    if (s->pad_d) b.out[0] = ws + s->ws.d;
    const int rc = s->v->launch(s->inner, &s->q, &b, s->ws.point ? ws : NULL, s->ws.point, stream);
    if (rc || !s->pad_d) return rc;
    e = cudaMemcpy2DAsync(io->out[0], (size_t)g->ldd * 2, ws + s->ws.d, (size_t)h->ldd * 2,
                          (size_t)g->n * 2, (size_t)g->m, cudaMemcpyDeviceToDevice, st);
    return (int)e;
}

int au_describe(void *state, char *buf, size_t len)
{
    const auto_state *s = (const auto_state *)state;
    if (!s || !buf || !len) return 1;
    if (s->point < 0) {
        snprintf(buf, len, "path=skinny m<=%d", TB_AUTO_SKINNY_MAX_M);
        return 0;
    }
    char inner[256] = "";
    if (s->v->describe) s->v->describe(s->inner, inner, sizeof inner);
    const tb_auto_row *r = s->row >= 0 ? &tb_auto_rows[s->row] : NULL;
    snprintf(buf, len, "path=wgmma point=%s from=%s%lldx%lldx%lld pad=%s%s%s%s %s", s->v->name,
             r ? "" : "none:", r ? r->m : 0LL, r ? r->n : 0LL, r ? r->k : 0LL,
             s->pad_a ? "a" : "", s->pad_b ? "b" : "", s->pad_d ? "d" : "",
             s->pad_a || s->pad_b || s->pad_d ? "" : "none", inner);
    return 0;
}

const tb_param au_params[] = {
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_STR("layout", "tn"),
    TB_PARAM_END
};

char au_name[128];

const tb_variant au_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), au_name, "wgmma_auto", au_params, TB_SASS,
    au_supports, au_workspace_size, au_launch, au_setup, au_teardown, au_describe, NULL
};

} // namespace

TBV_SINGLE_VARIANT_QUERY(au_variant, au_name, "wgmma_auto", au_params)
