/* cublaslt_tuned.cu - cublaslt-tuned: cuBLASLt's fastest of its top heuristic algorithms.
 *
 * The baseline reviewers ask for beside a hand-written kernel: rather than cuBLASLt's first
 * heuristic choice (the "cublaslt" variant), setup() asks for up to TOP heuristic results
 * (32 MiB workspace, the layout mapping of common/cublaslt_map.cuh), times each candidate
 * on the host's stream with CUDA events, and keeps the fastest; launch() is then one
 * cublasLtMatmul with it, exactly as "cublaslt" launches. Timing needs operands, and setup()
 * sees no buffers, so it allocates its own for the problem's extents (random BF16 in
 * [-1, 1), never zeros, which run faster than real data) and frees them before returning.
 * Each candidate gets one warm-up launch and then REPS launches, each between two events;
 * its time is the median. A candidate whose warm-up is over 3x the best so far is not
 * repeated, and timing stops once TIME_BUDGET_S of wall time has passed (the rest count as
 * untried). Split-k candidates that reduce in BF16 are skipped (see lossy_split_k()). If
 * the operands cannot be allocated it keeps the first heuristic and says so.
 * describe() reports the chosen algorithm, its rank, and how many were tried. No kernels of
 * its own: sass "any".
 */
#include "../common/cublaslt_map.cuh"

#include <stdlib.h>
#include <string.h>
#include <time.h>

namespace {

constexpr size_t WORKSPACE = 32u << 20;    /* 32 MiB: the heuristic's limit and ours */
constexpr int TOP = 16;                     /* heuristic results asked for */
constexpr int REPS = 5;                     /* timed launches per candidate */
constexpr double TIME_BUDGET_S = 4.0;       /* wall time for timing all candidates */

struct tuned_state {
    cublasLtHandle_t lt;
    tbv::lt_map map;
    cublasLtMatmulHeuristicResult_t heur;   /* the one kept */
    int rank;                               /* its place in the heuristic's list */
    int found, tried, lossy;                /* lossy: split-k candidates skipped */
    float best_ms, first_ms;                /* the kept one's and heuristic #0's median */
    char note[96];                          /* why timing was skipped, if it was */
};

int tuned_supports(const tb_problem *p, char *why, size_t len)
{
    return tbv::lt_variant_supports(p, why, len);
}

size_t tuned_workspace(const tb_problem *p)
{
    (void)p;
    return WORKSPACE;
}

void tuned_teardown(void *state)
{
    tuned_state *s = (tuned_state *)state;
    if (!s) return;
    tbv::lt_map_destroy(&s->map);
    if (s->lt) cublasLtDestroy(s->lt);
    free(s);
}

/* Elements a matrix of rows x cols spans in layout l with leading dimension ld, over
 * batch matrices stride elements apart. */
size_t span(tb_layout l, int64_t rows, int64_t cols, int64_t ld, int64_t batch, int64_t stride)
{
    const int64_t one = l == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)(one + (batch - 1) * (stride > 0 ? stride : 0));
}

/* Fill n BF16 elements at d with uniform values in [-1, 1): a host-made block of random
 * values, then doubling device-to-device copies on the stream. */
cudaError_t fill_random(void *d, size_t n, cudaStream_t st, uint32_t seed)
{
    const size_t blk = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    uint16_t *h = (uint16_t *)calloc(blk, 2);
    if (!h) return cudaErrorMemoryAllocation;
    uint32_t x = seed * 2654435761u + 12345u;
    for (size_t i = 0; i < blk; i++) {
        x = x * 1664525u + 1013904223u;
        const float f = (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;   /* [-1, 1) */
        uint32_t u;
        memcpy(&u, &f, 4);
        h[i] = (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);    /* round to nearest even */
    }
    cudaError_t e = cudaMemcpyAsync(d, h, blk * 2, cudaMemcpyHostToDevice, st);
    if (e == cudaSuccess) e = cudaStreamSynchronize(st);
    free(h);
    for (size_t have = blk; e == cudaSuccess && have < n; have *= 2) {
        const size_t c = have < n - have ? have : n - have;
        e = cudaMemcpyAsync((char *)d + have * 2, d, c * 2, cudaMemcpyDeviceToDevice, st);
    }
    return e;
}

double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* A split-k algorithm that sums its partial products in the output type (BF16), in place
 * in D or in an output-typed workspace, rounds each partial sum to BF16: it is no longer an
 * FP32-accumulating GEMM, and on k-heavy shapes its error leaves the tolerance every variant
 * is held to (seen: 8191x8193x8184, split-k 4 in place, max error 1.0 at |D| ~ 100). Such
 * candidates are not timed. */
bool lossy_split_k(const cublasLtMatmulAlgo_t *al)
{
    int32_t splitk = 1;
    uint32_t red = CUBLASLT_REDUCTION_SCHEME_NONE;
    size_t w;
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(al, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
    return splitk > 1 && (red == CUBLASLT_REDUCTION_SCHEME_INPLACE ||
                          red == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
}

/* Time the candidates of heur[0..found) on stream st with the operands in io; keep the
 * fastest in s. Returns 0, or non-zero when no candidate ran at all. */
int time_candidates(tuned_state *s, const tb_gemm *g, const cublasLtMatmulHeuristicResult_t *heur,
                    int found, const tb_buffers *io, void *ws, cudaStream_t st)
{
    cudaEvent_t ev[2 * REPS + 2];
    int nev = 0;
    for (; nev < 2 * REPS + 2; nev++)
        if (cudaEventCreate(&ev[nev]) != cudaSuccess) break;
    if (nev < 2 * REPS + 2) {
        for (int i = 0; i < nev; i++) cudaEventDestroy(ev[i]);
        snprintf(s->note, sizeof s->note, "untimed: no events");
        return 1;
    }
    const float alpha = (float)g->alpha, beta = (float)g->beta;
    const void *x, *y;
    tbv::lt_map_operands(&s->map, io, &x, &y);
    void *d = io->out[0];
    const void *c = g->beta != 0.0 ? io->in[2] : d;
    const double t0 = wall_s();
    float best = 0.f;
    int best_i = -1;
    for (int i = 0; i < found; i++) {
        if (heur[i].state != CUBLAS_STATUS_SUCCESS || heur[i].workspaceSize > WORKSPACE) continue;
        if (lossy_split_k(&heur[i].algo)) { s->lossy++; continue; }
        if (i > 0 && wall_s() - t0 > TIME_BUDGET_S) break;
        s->tried++;
        auto run = [&]() {
            return cublasLtMatmul(s->lt, s->map.op, &alpha, x, s->map.lx, y, s->map.ly, &beta, c,
                                  s->map.lc, d, s->map.ld, &heur[i].algo, ws, WORKSPACE, st);
        };
        /* warm-up, timed: a slow candidate stops here */
        cudaEventRecord(ev[0], st);
        if (run() != CUBLAS_STATUS_SUCCESS) { cudaGetLastError(); continue; }
        cudaEventRecord(ev[1], st);
        if (cudaEventSynchronize(ev[1]) != cudaSuccess) { cudaGetLastError(); continue; }
        float warm = 0.f;
        cudaEventElapsedTime(&warm, ev[0], ev[1]);
        float med = warm;
        if (best_i < 0 || warm <= 3.f * best) {
            float t[REPS];
            int ok = 1;
            for (int r = 0; r < REPS && ok; r++) {
                cudaEventRecord(ev[2 + 2 * r], st);
                ok = run() == CUBLAS_STATUS_SUCCESS;
                cudaEventRecord(ev[3 + 2 * r], st);
            }
            if (!ok || cudaEventSynchronize(ev[1 + 2 * REPS]) != cudaSuccess) {
                cudaGetLastError();
                continue;
            }
            for (int r = 0; r < REPS; r++) cudaEventElapsedTime(&t[r], ev[2 + 2 * r], ev[3 + 2 * r]);
            qsort(t, REPS, sizeof t[0], cmp_float);
            med = t[REPS / 2];
        }
        if (i == 0) s->first_ms = med;
        if (best_i < 0 || med < best) { best = med; best_i = i; }
    }
    for (int i = 0; i < nev; i++) cudaEventDestroy(ev[i]);
    if (best_i < 0) {
        snprintf(s->note, sizeof s->note, "untimed: no candidate ran, %d lossy split-k skipped",
                 s->lossy);
        return 1;
    }
    s->heur = heur[best_i];
    s->rank = best_i;
    s->best_ms = best;
    return 0;
}

int tuned_setup(const tb_problem *p, tb_stream stream, void **state, char *msg, size_t len)
{
    const tb_gemm *g = &p->gemm;
    const cudaStream_t st = (cudaStream_t)stream;
    cublasStatus_t cs;
    const char *what = "";
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur[TOP];
    size_t ws = WORKSPACE;
    int found = 0;
    void *buf[4] = { NULL, NULL, NULL, NULL };  /* A, B, C, D */
    void *wsp = NULL;
    tuned_state *s = (tuned_state *)calloc(1, sizeof *s);
    *state = NULL;
    if (!s) { snprintf(msg, len, "out of memory"); return 1; }
    s->first_ms = s->best_ms = -1.f;

    cs = cublasLtCreate(&s->lt);
    if (cs != CUBLAS_STATUS_SUCCESS) { what = "cublasLtCreate"; goto lt_fail; }
    cs = tbv::lt_map_create(g, &s->map, &what);
    if (cs != CUBLAS_STATUS_SUCCESS) goto lt_fail;
    cs = tbv::lt_pref_create(ws, &pref, &what);
    if (cs != CUBLAS_STATUS_SUCCESS) goto lt_fail;
    what = "cublasLtMatmulAlgoGetHeuristic";
    cs = cublasLtMatmulAlgoGetHeuristic(s->lt, s->map.op, s->map.lx, s->map.ly, s->map.lc,
                                        s->map.ld, pref, TOP, heur, &found);
    if (cs != CUBLAS_STATUS_SUCCESS) goto lt_fail;
    cublasLtMatmulPreferenceDestroy(pref);
    pref = NULL;
    if (found < 1 || heur[0].state != CUBLAS_STATUS_SUCCESS) {
        snprintf(msg, len, "cublaslt has no algorithm for %lldx%lldx%lld", (long long)g->m,
                 (long long)g->n, (long long)g->k);
        tuned_teardown(s);
        return 1;
    }
    s->found = found;
    s->heur = heur[0];
    s->rank = 0;

    {
        /* Operands for timing: this problem's extents, random contents. */
        const size_t n[4] = {
            span(g->a_layout, g->m, g->k, g->lda, g->batch, g->stride_a),
            span(g->b_layout, g->k, g->n, g->ldb, g->batch, g->stride_b),
            g->beta != 0.0 ? span(g->c_layout, g->m, g->n, g->ldc, g->batch, g->stride_c) : 0,
            span(g->d_layout, g->m, g->n, g->ldd, g->batch, g->stride_d) };
        cudaError_t e = cudaSuccess;
        for (int i = 0; i < 4 && e == cudaSuccess; i++)
            if (n[i]) e = cudaMalloc(&buf[i], n[i] * 2);
        if (e == cudaSuccess) e = cudaMalloc(&wsp, WORKSPACE);
        for (int i = 0; i < 3 && e == cudaSuccess; i++)
            if (n[i]) e = fill_random(buf[i], n[i], st, 0x5eed0000u + (uint32_t)i);
        if (e == cudaSuccess) e = cudaStreamSynchronize(st);
        if (e != cudaSuccess) {
            cudaGetLastError();
            snprintf(s->note, sizeof s->note, "untimed: %s", cudaGetErrorString(e));
        } else {
            tb_buffers io;
            memset(&io, 0, sizeof io);
            io.struct_size = sizeof io;
            io.in[0] = buf[0];
            io.in[1] = buf[1];
            io.in[2] = buf[2];
            io.out[0] = buf[3];
            time_candidates(s, g, heur, found, &io, wsp, st);
        }
        cudaStreamSynchronize(st);
        for (int i = 0; i < 4; i++)
            if (buf[i]) cudaFree(buf[i]);
        if (wsp) cudaFree(wsp);
        cudaGetLastError();
    }
    *state = s;
    return 0;
lt_fail:
    snprintf(msg, len, "%s failed: %s", what, cublasLtGetStatusString(cs));
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    tuned_teardown(s);
    return 1;
}

int tuned_launch(void *state, const tb_problem *p, const tb_buffers *io, void *workspace,
                 size_t workspace_bytes, tb_stream stream)
{
    tuned_state *s = (tuned_state *)state;
    if (!s) return (int)CUBLAS_STATUS_NOT_INITIALIZED;
    return tbv::lt_map_launch(s->lt, &s->map, &s->heur.algo, &p->gemm, io, workspace,
                              workspace_bytes, (cudaStream_t)stream);
}

int tuned_describe(void *state, char *buf, size_t len)
{
    const tuned_state *s = (const tuned_state *)state;
    if (!s || !buf || !len) return 1;
    char algo[256];
    tbv::lt_algo_describe(&s->heur.algo, s->heur.workspaceSize, s->heur.wavesCount, algo,
                          sizeof algo);
    if (s->note[0])
        snprintf(buf, len, "rank=0 tried=0/%d (%s) %s", s->found, s->note, algo);
    else
        snprintf(buf, len, "rank=%d tried=%d/%d lossy_skipped=%d best_ms=%.4f first_ms=%.4f %s",
                 s->rank, s->tried, s->found, s->lossy, (double)s->best_ms, (double)s->first_ms,
                 algo);
    return 0;
}

const tb_param tuned_params[] = {
    TB_PARAM_STR("naming", "plain"),
    TB_PARAM_STR("dtype", "bf16"),
    TB_PARAM_END
};

const tb_variant tuned_variant = {
    TB_VARIANT_ABI_VERSION, sizeof(tb_variant), "cublaslt-tuned", "cublaslt", tuned_params,
    "any", tuned_supports, tuned_workspace, tuned_launch, tuned_setup, tuned_teardown,
    tuned_describe, NULL
};

} // namespace

extern "C" TB_EXPORT const tb_variant *tilebench_variant_query(uint32_t host_abi, uint32_t index)
{
    (void)host_abi;
    return index == 0 ? &tuned_variant : NULL;
}
