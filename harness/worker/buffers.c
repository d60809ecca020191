/* buffers.c - the device buffers of tilebench-worker's measure mode: a GEMM's A, B, C
 * and D with D's guard bands (an attention problem's: worker/op_worker_attention.c), the references, the input sets the graph and stream methods
 * rotate over, and the refresh of the inputs before every sample (see buffers.h). */
#define _GNU_SOURCE
#include "worker/buffers.h"
#include "common/tb.h"
#include "device/tbdev.h"
#include "worker/measure.h"
#include "worker/validate.h"
#include "worker/op_worker.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t extent(tb_layout lay, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t stride)
{
    int64_t one = lay == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)((batch - 1) * stride + one);
}

/* A set's A, B, C and D start on 256-byte boundaries inside a slab, as cudaMalloc's would. */
#define SET_ALIGN 256   /* bytes */
static size_t aligned(size_t bytes)
{
    return (bytes + SET_ALIGN - 1) / SET_ALIGN * SET_ALIGN;
}

/* Set 0 is the main buffers (what the trials validated on; the only set with --l2 hot). The
 * others come in slabs: slab k holds sets slab_first[k] .. + slab_count[k] - 1 as four
 * regions, all their A back to back (set_bytes[0] each), then all their B, C and D. A
 * refresh of the first n sets is then one fill per input region of a slab, whatever n, each
 * of the region's own type (FP8 A and B are one byte an element, C is bf16). */
int tbw_ensure_sets(worker *w, int want, char *msg, size_t len)
{
    tb_val_bufs *b = &w->vb;
    if (want > TB_SETS_MAX) want = TB_SETS_MAX;
    if (!w->sets) {
        w->sets = calloc(TB_SETS_MAX, sizeof *w->sets);
        if (!w->sets) return tb_fail(msg, len, TB_ENOMEM, "out of host memory for the input sets");
        tb_buffers *io = &w->sets[0];
        io->struct_size = sizeof *io;
        /* C is allocated only when it is read (beta != 0); V always */
        io->in[0] = b->a; io->in[1] = b->b; io->in[2] = b->nc ? b->c : NULL;
        io->out[0] = b->d;
        io->out[1] = b->lse;   /* attention's LSE; NULL for a GEMM */
        w->nsets = 1;
        w->set_bytes[0] = aligned(b->na * b->esz[0]);
        w->set_bytes[1] = aligned(b->nb * b->esz[1]);
        w->set_bytes[2] = b->nc ? aligned(b->nc * b->esz[2]) : 0;
        /* the outputs' region: D (O), then attention's LSE on its own 256-byte boundary */
        w->set_bytes[3] = aligned(b->nd * 2) + (b->nlse ? aligned(b->nlse * 4) : 0);
    }
    if (w->nsets >= want || w->nslabs == TB_SETS_SLABS) return TB_OK;
    const size_t *sb = w->set_bytes, per = sb[0] + sb[1] + sb[2] + sb[3];
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
        cudaGetLastError();
        free_b = 0;
    }
    size_t room = TB_SETS_MAX_BYTES > w->sets_bytes ? TB_SETS_MAX_BYTES - w->sets_bytes : 0;
    if (room > free_b / 2) room = free_b / 2;
    size_t n = (size_t)(want - w->nsets);
    if (n > room / per) n = room / per;
    void *slab = NULL;
    while (n > 0 && cudaMalloc(&slab, n * per) != cudaSuccess) {   /* fragmented: ask less */
        cudaGetLastError();
        slab = NULL;
        n /= 2;
    }
    if (!n) return TB_OK;   /* no room for more: samples get fewer launches */
    int first = w->nsets, k = w->nslabs;
    unsigned char *base = slab, *region[4];
    region[0] = base;
    for (int r = 1; r < 4; r++) region[r] = region[r - 1] + n * sb[r - 1];
    for (size_t j = 0; j < n; j++) {
        tb_buffers *io = &w->sets[first + (int)j];
        io->struct_size = sizeof *io;
        io->in[0] = region[0] + j * sb[0];
        io->in[1] = region[1] + j * sb[1];
        io->in[2] = sb[2] ? region[2] + j * sb[2] : NULL;
        io->out[0] = region[3] + j * sb[3];
        io->out[1] = b->nlse ? region[3] + j * sb[3] + aligned(b->nd * 2) : NULL;
    }
    /* values from the run's seed until the first refresh (warm-up, a graph's capture) */
    int e = 0;
    for (int r = 0; e == 0 && r < 3; r++)
        if (sb[r])
            e = tb_validate_fill(b, r, region[r], n * sb[r] / b->esz[r],
                                 w->seed * 31 + 0x5E75ull + (uint64_t)k + 0x1000ull * (uint64_t)r,
                                 w->dist, w->s);
    if (e == 0) e = (int)cudaStreamSynchronize(w->s);
    if (e != 0) {
        cudaFree(slab);
        return tb_fail(msg, len, TB_ECUDA, "cannot fill %zu input sets: %s", n,
                       cudaGetErrorString((cudaError_t)e));
    }
    w->slab[k] = slab;
    w->slab_first[k] = first;
    w->slab_count[k] = (int)n;
    w->nslabs = k + 1;
    w->nsets = first + (int)n;
    w->sets_bytes += n * per;
    return TB_OK;
}

int tbw_refresh_inputs(worker *w, int nsets, uint64_t seed, char *msg, size_t len)
{
    tb_val_bufs *b = &w->vb;
    /* the main buffers: the cold method's inputs, and set 0 */
    int e = tb_validate_fill(b, 0, b->a, b->na, seed * 4 + 1, w->dist, w->s);
    if (e == 0) e = tb_validate_fill(b, 1, b->b, b->nb, seed * 4 + 2, w->dist, w->s);
    if (e == 0 && b->c && b->nc) e = tb_validate_fill(b, 2, b->c, b->nc, seed * 4 + 3, w->dist, w->s);
    const size_t *sb = w->set_bytes;
    for (int k = 0; e == 0 && k < w->nslabs && w->slab_first[k] < nsets; k++) {
        int m = nsets - w->slab_first[k];
        if (m > w->slab_count[k]) m = w->slab_count[k];
        /* one fill per input region of the slab: element i of it is f(seed of the region, i),
         * so no two sets (nor A and B of one) share their values */
        unsigned char *region = w->slab[k];
        for (int r = 0; e == 0 && r < 3; region += (size_t)w->slab_count[k] * sb[r], r++)
            if (sb[r])
                e = tb_validate_fill(b, r, region, (size_t)m * sb[r] / b->esz[r],
                                     seed ^ (0x632BE59BD9B4E019ull * (uint64_t)(k + 1)) ^
                                     (0x9E3779B97F4A7C15ull * (uint64_t)r), w->dist, w->s);
    }
    return e == 0 ? TB_OK : tb_fail(msg, len, TB_ECUDA, "cannot refresh the inputs: %s",
                                    cudaGetErrorString((cudaError_t)e));
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* splitmix64 of (hidden seed, n): a different 64-bit seed for every refresh, equal to a given
 * trial's seed with probability 2^-64. */
uint64_t tbw_input_seed(uint64_t hidden_seed, uint64_t n)
{
    return mix64(hidden_seed ^ 0xF7E5A5C3B1D9E0A7ull ^ mix64(n));
}

void tbw_free_problem(worker *w)
{
    cudaStreamSynchronize(w->s);
    tb_validate_free(&w->vb);
    for (int k = 0; k < w->nslabs; k++) cudaFree(w->slab[k]);
    cudaGetLastError();
    free(w->sets);   /* set 0 points into the main buffers: made again on first use */
    w->sets = NULL;
    w->nsets = w->nslabs = 0;
    memset(w->set_bytes, 0, sizeof w->set_bytes);
    w->sets_bytes = 0;
}

int tbw_alloc_bufs(worker *w, char *msg, size_t len)
{
    int rc = w->opw->alloc(w, msg, len);
    if (rc) return rc;
    return tb_measure_dev_init(&w->md, w->s, (size_t)w->env.l2_bytes, !w->profiler[0] && !w->profile,
                               msg, len);
}

int tbw_alloc_gemm_bufs(worker *w, char *msg, size_t len)
{
    tb_gemm *g = &w->g;
    tb_val_bufs *b = &w->vb;
    int rc = tb_validate_types(b, g, &w->scales, msg, len);
    if (rc) return rc;
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
    const tbw_alloc a[] = {
        { &b->a, (b->na * b->esz[0] + 7) / 8 * 8, "A" },
        { &b->b, (b->nb * b->esz[1] + 7) / 8 * 8, "B" },
        { (void **)&b->c, b->nc ? (b->nc * b->esz[2] + 7) / 8 * 8 : 0, "C" },
        { &b->d_base, (b->nd + 2 * b->guard) * 2, "D and its guard bands" },
        { (void **)&b->d_ref, nref * 4, "D_ref" },
        { (void **)&b->d_ref2, mnk <= TB_CROSSCHECK_MAX_MNK ? nref * 4 : 0, "the second D_ref" },
        { (void **)&b->cmp_dev, sizeof(tb_cmp_result), "comparison result" },
        { (void **)&b->scratch, 4 * sizeof(unsigned long long), "scratch" },
    };
    if ((rc = tbw_alloc_table(a, sizeof a / sizeof a[0], msg, len))) return rc;
    b->d = (uint16_t *)b->d_base + b->guard;
    return TB_OK;
}

int tbw_alloc_table(const tbw_alloc *a, size_t n, char *msg, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        *a[i].p = NULL;
        if (!a[i].bytes) continue;
        cudaError_t e = cudaMalloc(a[i].p, a[i].bytes);
        if (e == cudaSuccess) e = cudaMemset(*a[i].p, 0, a[i].bytes);
        if (e != cudaSuccess)
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate %s (%zu bytes): %s", a[i].what,
                           a[i].bytes, cudaGetErrorString(e));
    }
    return TB_OK;
}
