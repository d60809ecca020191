/* buffers.c - the device buffers of tilebench-worker's measure mode: the problem's A, B, C
 * and D with D's guard bands, the references, and the input sets the graph and stream
 * methods rotate over (see buffers.h). */
#define _GNU_SOURCE
#include "worker/buffers.h"
#include "common/tb.h"
#include "device/tbdev.h"
#include "worker/measure.h"
#include "worker/validate.h"
#include <stdint.h>
#include <stdlib.h>

static size_t extent(tb_layout lay, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t stride)
{
    int64_t one = lay == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)((batch - 1) * stride + one);
}

/* The graph method's input sets: enough copies of A, B, C, D that their total passes 2 x L2
 * (one with --l2 hot), each filled with its own random inputs. */
int tbw_ensure_sets(worker *w, char *msg, size_t len)
{
    if (w->sets) return TB_OK;
    tb_val_bufs *b = &w->vb;
    size_t bytes = (b->na + b->nb + b->nc + b->nd) * 2;
    int n = w->l2_hot ? 1 : (int)((2.0 * (double)w->env.l2_bytes) / (double)bytes) + 2;
    if (n > 256) n = 256;
    if (n < 1) n = 1;
    w->sets = calloc((size_t)n, sizeof *w->sets);
    for (int i = 0; i < n; i++) {
        tb_buffers *io = &w->sets[i];
        io->struct_size = sizeof *io;
        if (i == 0) {   /* the main buffers are set 0 */
            io->in[0] = b->a; io->in[1] = b->b; io->in[2] = w->g.beta != 0.0 ? b->c : NULL;
            io->out[0] = b->d;
            continue;
        }
        void *a, *bb, *c = NULL, *d;
        if (cudaMalloc(&a, b->na * 2 + 8) || cudaMalloc(&bb, b->nb * 2 + 8) ||
            (b->nc && cudaMalloc(&c, b->nc * 2 + 8)) || cudaMalloc(&d, b->nd * 2 + 8)) {
            cudaGetLastError();
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate graph input set %d of %d", i, n);
        }
        tbdev_fill_bf16(a, b->na, w->seed * 31 + (uint64_t)i * 4 + 1, w->dist, w->s);
        tbdev_fill_bf16(bb, b->nb, w->seed * 31 + (uint64_t)i * 4 + 2, w->dist, w->s);
        if (c) tbdev_fill_bf16(c, b->nc, w->seed * 31 + (uint64_t)i * 4 + 3, w->dist, w->s);
        io->in[0] = a; io->in[1] = bb; io->in[2] = w->g.beta != 0.0 ? c : NULL; io->out[0] = d;
    }
    w->nsets = n;
    return cudaStreamSynchronize(w->s) == cudaSuccess ? TB_OK
        : tb_fail(msg, len, TB_ECUDA, "cannot fill the graph input sets");
}

int tbw_alloc_bufs(worker *w, char *msg, size_t len)
{
    tb_gemm *g = &w->g;
    tb_val_bufs *b = &w->vb;
    b->na = extent(g->a_layout, g->m, g->k, g->lda, g->batch, g->stride_a);
    b->nb = extent(g->b_layout, g->k, g->n, g->ldb, g->batch, g->stride_b);
    b->nc = g->beta != 0.0 ? extent(g->c_layout, g->m, g->n, g->ldc, g->batch, g->stride_c) : 0;
    b->nd = extent(g->d_layout, g->m, g->n, g->ldd, g->batch, g->stride_d);
    /* guard bands: at least two of D's rows (or columns) and 64 Ki elements on each side */
    size_t span = (size_t)g->ldd * 2;
    b->guard = span > 65536 ? span : 65536;
    /* under compute-sanitizer D gets no guard bands: a write past D must leave the
     * allocation for memcheck to see it */
    if (w->validate_only) b->guard = 0;
    size_t nref = (size_t)(g->m * g->n * g->batch);
    double mnk = (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
    struct { void **p; size_t bytes; const char *what; } a[] = {
        { &b->a, (b->na * 2 + 7) / 8 * 8, "A" }, { &b->b, (b->nb * 2 + 7) / 8 * 8, "B" },
        { (void **)&b->c, b->nc ? (b->nc * 2 + 7) / 8 * 8 : 0, "C" },
        { &b->d_base, (b->nd + 2 * b->guard) * 2, "D and its guard bands" },
        { (void **)&b->d_ref, nref * 4, "D_ref" },
        { (void **)&b->d_ref2, mnk <= TB_CROSSCHECK_MAX_MNK ? nref * 4 : 0, "the second D_ref" },
        { (void **)&b->cmp_dev, sizeof(tb_cmp_result), "comparison result" },
        { (void **)&b->scratch, 4 * sizeof(unsigned long long), "scratch" },
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        *a[i].p = NULL;
        if (!a[i].bytes) continue;
        cudaError_t e = cudaMalloc(a[i].p, a[i].bytes);
        if (e == cudaSuccess) e = cudaMemset(*a[i].p, 0, a[i].bytes);
        if (e != cudaSuccess)
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate %s (%zu bytes): %s", a[i].what,
                           a[i].bytes, cudaGetErrorString(e));
    }
    b->d = (uint16_t *)b->d_base + b->guard;
    return tb_measure_dev_init(&w->md, w->s, (size_t)w->env.l2_bytes, !w->profiler[0] && !w->profile,
                               msg, len);
}
