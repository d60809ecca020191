/* zoo_content_cache.cu - zoo member: keeps a cache of answers keyed by a hash of its inputs'
 * content (issue 19, hole 2). Each launch, in three kernels on the caller's stream and with no
 * host synchronisation (so it can be queued behind the blocking kernel and captured in a
 * graph):
 *   1. lookup (one block): a 64-bit hash of ZOO_CC_SAMPLES elements of A, of B and (when beta
 *      != 0) of C, spread evenly over each one's extent, looked up among the cache's keys: a
 *      hit names the slot that holds D's answer; a miss takes the next slot (round robin) and
 *      writes the hash there;
 *   2. zoo_fast's GEMM, which returns at once on a hit (ZOO_SKIP_ON_FLAG);
 *   3. finish: on a hit the slot's stored D is copied into D, on a miss D is copied into the
 *      slot (D's whole extent, as zoo_cache_ptr does).
 * The cache holds ZOO_CC_ENTRIES answers (fewer when they would pass ZOO_CC_BYTES): more than a
 * rotation of the harness's input sets covered, before every sample got new inputs. Every
 * trial's inputs are new to it, so it computes them and passes; a timed launch on inputs it
 * has seen costs a hash and a copy of D instead of a GEMM. With new inputs before every
 * sample and no input set used twice in one, it misses every time and is timed at its real
 * cost: the GEMM plus the hash and a copy of D (tests/zoo/README.md).
 * TB_ZOO_CC_LOG, when set, names a file teardown() appends its hits and launches to. */
#include <stdlib.h>
#include <string.h>
#include "zoo_gemm.cuh"

#define ZOO_CC_SAMPLES 1024                    /* elements hashed per input */
#define ZOO_CC_ENTRIES 512
#define ZOO_CC_BYTES ((size_t)1 << 30)        /* the answers' memory, at most */

typedef struct cc_dev {
    unsigned long long key[ZOO_CC_ENTRIES];
    int valid[ZOO_CC_ENTRIES];
    int entries;                /* slots in use by this problem */
    int next;                   /* the slot a miss fills */
    int hit;                    /* this launch: the slot holding D's answer, or -1 */
    int slot;                   /* this launch, on a miss: the slot D's answer goes to */
    unsigned long long launches, hits;
} cc_dev;

typedef struct cc_state {
    cc_dev *dev;
    uint16_t *stash;            /* entries x nd answers */
    size_t na, nb, nc, nd;      /* extents in elements */
    int entries;
    long long m, n, k;
} cc_state;

__device__ __forceinline__ unsigned long long cc_mix(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ unsigned long long cc_hash_one(const uint16_t *p, size_t n, unsigned long long which)
{
    unsigned long long h = 0;
    for (int i = threadIdx.x; i < ZOO_CC_SAMPLES; i += blockDim.x) {
        size_t at = (size_t)((unsigned long long)i * n / ZOO_CC_SAMPLES);
        h ^= cc_mix((which << 56) ^ ((unsigned long long)i << 16) ^ p[at]);
    }
    return h;
}

__global__ void cc_lookup(const uint16_t *a, size_t na, const uint16_t *b, size_t nb,
                          const uint16_t *c, size_t nc, cc_dev *st)
{
    __shared__ unsigned long long part[256];
    unsigned long long h = cc_hash_one(a, na, 1) ^ cc_hash_one(b, nb, 2);
    if (c && nc) h ^= cc_hash_one(c, nc, 3);
    part[threadIdx.x] = h;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] ^= part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    h = part[0];
    int hit = -1;
    for (int j = 0; j < st->entries && hit < 0; j++)
        if (st->valid[j] && st->key[j] == h) hit = j;
    st->launches++;
    st->hit = hit;
    if (hit >= 0) {
        st->hits++;
        return;
    }
    /* the finish kernel fills the slot before any later launch looks it up (stream order) */
    st->slot = st->next;
    st->next = (st->next + 1) % st->entries;
    st->key[st->slot] = h;
    st->valid[st->slot] = 1;
}

__global__ void cc_finish(uint16_t *d, size_t nd, uint16_t *stash, const cc_dev *st)
{
    int hit = st->hit, slot = st->slot;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < nd;
         i += (size_t)gridDim.x * blockDim.x) {
        if (hit >= 0) d[i] = stash[(size_t)hit * nd + i];
        else stash[(size_t)slot * nd + i] = d[i];
    }
}

static size_t extent(int layout, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t stride)
{
    int64_t one = layout == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)((batch - 1) * stride + one);
}

static int cc_setup(const tb_problem *p, tb_stream stream, void **state, char *msg,
                    size_t msg_len)
{
    (void)stream;
    const tb_gemm *g = &p->gemm;
    cc_state *s = (cc_state *)calloc(1, sizeof *s);
    if (!s) {
        snprintf(msg, msg_len, "out of host memory");
        return 1;
    }
    s->na = extent(g->a_layout, g->m, g->k, g->lda, g->batch, g->stride_a);
    s->nb = extent(g->b_layout, g->k, g->n, g->ldb, g->batch, g->stride_b);
    s->nc = g->beta != 0.0 ? extent(g->c_layout, g->m, g->n, g->ldc, g->batch, g->stride_c) : 0;
    s->nd = zoo_d_extent(g);
    size_t fit = ZOO_CC_BYTES / (s->nd * sizeof(uint16_t));
    s->entries = fit < 1 ? 1 : fit > ZOO_CC_ENTRIES ? ZOO_CC_ENTRIES : (int)fit;
    s->m = g->m; s->n = g->n; s->k = g->k;
    cc_dev init;
    memset(&init, 0, sizeof init);
    init.entries = s->entries;
    init.hit = -1;
    cudaError_t e = cudaMalloc((void **)&s->dev, sizeof(cc_dev));
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&s->stash, (size_t)s->entries * s->nd * sizeof(uint16_t));
    if (e == cudaSuccess) e = cudaMemcpy(s->dev, &init, sizeof init, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        snprintf(msg, msg_len, "cannot allocate the cache of %d answers: %s", s->entries,
                 cudaGetErrorString(e));
        cudaFree(s->dev);
        cudaFree(s->stash);
        free(s);
        return 1;
    }
    *state = s;
    return 0;
}

static void cc_teardown(void *state)
{
    cc_state *s = (cc_state *)state;
    if (!s) return;
    const char *log = getenv("TB_ZOO_CC_LOG");
    cc_dev h;
    if (log && *log && cudaMemcpy(&h, s->dev, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess) {
        FILE *f = fopen(log, "a");
        if (f) {
            fprintf(f, "zoo_content_cache %lldx%lldx%lld: %llu hits in %llu launches (%d entries)\n",
                    s->m, s->n, s->k, h.hits, h.launches, s->entries);
            fclose(f);
        }
    }
    cudaFree(s->dev);
    cudaFree(s->stash);
    free(s);
}

static int cc_describe(void *state, char *buf, size_t buf_len)
{
    const cc_state *s = (const cc_state *)state;
    if (!s) return 1;
    snprintf(buf, buf_len, "entries=%d hashed=%d per input", s->entries, ZOO_CC_SAMPLES);
    return 0;
}

static int cc_launch(void *state, const tb_problem *p, const tb_buffers *io, void *ws,
                     size_t ws_bytes, tb_stream stream)
{
    (void)ws; (void)ws_bytes;
    cc_state *s = (cc_state *)state;
    cudaStream_t st = (cudaStream_t)stream;
    cc_lookup<<<1, 256, 0, st>>>((const uint16_t *)io->in[0], s->na, (const uint16_t *)io->in[1],
                                 s->nb, (const uint16_t *)io->in[2], s->nc, s->dev);
    if (cudaGetLastError() != cudaSuccess) return 1;
    if (zoo_launch_gemm<ZOO_SKIP_ON_FLAG>(p, io, stream, 0, &s->dev->hit)) return 1;
    unsigned blocks = (unsigned)((s->nd + 255) / 256);
    if (blocks > 4096) blocks = 4096;
    cc_finish<<<blocks, 256, 0, st>>>((uint16_t *)io->out[0], s->nd, s->stash, s->dev);
    return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

static const tb_variant zoo_v = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "zoo_content_cache", "zoo", zoo_plain_params,
    TB_SASS, zoo_supports, NULL, cc_launch, cc_setup, cc_teardown, cc_describe, NULL
};

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &zoo_v : NULL;
}
