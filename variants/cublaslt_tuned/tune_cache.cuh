/* tune_cache.cuh - cublaslt-tuned's record of the choices it made: a text file of one line per
 * (GPU, cuBLASLt version, problem) giving the algorithm kept, so that every later setup() of
 * that problem, in this process or another, keeps the same one without timing again.
 *
 * Why: at 8192^3 on the H100 the fastest of cuBLASLt's candidates depends on the card's power
 * state, and no warm-up or tolerance made two tunings agree every time (docs/perf.md, eighth
 * and ninth sessions: ranks 0, 1 and 4 were each kept by some of ten tunings). A variant whose
 * algorithm is a fresh draw at each setup is two different kernels in a gate's base and head.
 * PyTorch's TunableOp and Triton's autotuner answer the same way: tune once, write the result
 * down, reuse it.
 *
 * Where: $TB_TUNE_CACHE if set ("off" turns the record off: every setup tunes), else
 * $XDG_CACHE_HOME/tilebench/cublaslt-tuned.tsv, else $HOME/.cache/tilebench/cublaslt-tuned.tsv.
 * Format, one line each, tab-separated: the key (TUNE_FORMAT, GPU name, SM count, compute
 * capability, cuBLASLt version, the problem's extents, layouts, leading dimensions, batch,
 * strides, whether beta is 0), the rank the heuristic gave the kept algorithm, and the
 * algorithm's 64 bytes in hex. A line is appended with one write(2) on an O_APPEND
 * descriptor; the last line for a key wins. A stored algorithm is used only if it is still
 * one of the heuristic's candidates (byte for byte); otherwise the problem is tuned again.
 * Unreadable or unwritable files are not errors: the variant tunes as if there were none.
 */
#ifndef TB_VARIANTS_TUNE_CACHE_CUH
#define TB_VARIANTS_TUNE_CACHE_CUH

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tilebench/variant.h>

namespace tbv {

/* Bump when the tuning rule changes, so a record made by another rule is not reused. */
constexpr const char *TUNE_FORMAT = "tuned-1";

/* The record's path into out; returns 0 when the record is off or no path can be made. */
static inline int tune_cache_path(char *out, size_t len)
{
    const char *e = getenv("TB_TUNE_CACHE");
    if (e && (!strcmp(e, "off") || !*e)) return 0;
    if (e) return snprintf(out, len, "%s", e) < (int)len;
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    int n;
    if (x && *x) n = snprintf(out, len, "%s/tilebench/cublaslt-tuned.tsv", x);
    else if (h && *h) n = snprintf(out, len, "%s/.cache/tilebench/cublaslt-tuned.tsv", h);
    else return 0;
    return n > 0 && n < (int)len;
}

/* The key of problem g on the current device into out (no tabs or newlines in it). */
static inline void tune_cache_key(const tb_gemm *g, char *out, size_t len)
{
    int dev = 0;
    cudaDeviceProp pr;
    memset(&pr, 0, sizeof pr);
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&pr, dev) != cudaSuccess)
        cudaGetLastError();
    for (char *c = pr.name; *c; c++)
        if (*c == '\t' || *c == '\n') *c = ' ';
    snprintf(out, len,
             "%s|%s|sms=%d|sm_%d%d|lt=%zu|%lldx%lldx%lld|lay=%d%d%d%d|ld=%lld,%lld,%lld,%lld|"
             "batch=%lld|stride=%lld,%lld,%lld,%lld|beta0=%d%s",
             TUNE_FORMAT, pr.name, pr.multiProcessorCount, pr.major, pr.minor,
             (size_t)cublasLtGetVersion(), (long long)g->m, (long long)g->n, (long long)g->k,
             (int)g->a_layout, (int)g->b_layout, (int)g->c_layout, (int)g->d_layout,
             (long long)g->lda, (long long)g->ldb, (long long)g->ldc, (long long)g->ldd,
             (long long)g->batch, (long long)g->stride_a, (long long)g->stride_b,
             (long long)g->stride_c, (long long)g->stride_d, g->beta == 0.0,
             g->a_type == TB_DTYPE_E4M3 ? "|e4m3" : "");   /* a BF16 key is as before */
}

/* The index in heur[0..found) of the algorithm recorded for key, or -1. */
static inline int tune_cache_find(const char *path, const char *key,
                                  const cublasLtMatmulHeuristicResult_t *heur, int found)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    unsigned char want[sizeof(cublasLtMatmulAlgo_t)];
    int have = 0;
    char line[1024];
    const size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) || line[kl] != '\t') continue;
        const char *hex = strchr(line + kl + 1, '\t');
        if (!hex) continue;
        hex++;
        unsigned char b[sizeof want];
        size_t i = 0;
        for (; i < sizeof b; i++) {
            unsigned v;
            if (sscanf(hex + 2 * i, "%2x", &v) != 1) break;
            b[i] = (unsigned char)v;
        }
        if (i == sizeof b) { memcpy(want, b, sizeof b); have = 1; }   /* the last line wins */
    }
    fclose(f);
    if (!have) return -1;
    for (int i = 0; i < found; i++)
        if (heur[i].state == CUBLAS_STATUS_SUCCESS && !memcmp(&heur[i].algo, want, sizeof want))
            return i;
    return -1;
}

/* Append key's choice (rank, algorithm) to the record, making its folder if need be. */
static inline void tune_cache_store(const char *path, const char *key, int rank,
                                    const cublasLtMatmulAlgo_t *algo)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)   /* mkdir -p of the folders above the file */
        if (*p == '/') {
            *p = 0;
            if (mkdir(dir, 0755) != 0 && errno != EEXIST) return;
            *p = '/';
        }
    char line[1024];
    int n = snprintf(line, sizeof line, "%s\t%d\t", key, rank);
    const unsigned char *b = (const unsigned char *)algo;
    for (size_t i = 0; i < sizeof *algo && n > 0 && n + 3 < (int)sizeof line; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, "%02x", b[i]);
    if (n <= 0 || n + 2 > (int)sizeof line) return;
    line[n++] = '\n';
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) != n) { /* a partial line is ignored by tune_cache_find */ }
    close(fd);
}

} // namespace tbv

#endif /* TB_VARIANTS_TUNE_CACHE_CUH */
