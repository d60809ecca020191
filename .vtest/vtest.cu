// vtest.cu - throwaway: load variant .so files, list them, check them against an FP64 GPU
// reference on edge-case problems, and time the fast ones.
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>
#include "tilebench/variant.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1);} } while (0)

struct lib { std::string path; const tb_variant *v; };

static int64_t extent(int64_t rows, int64_t cols, tb_layout l, int64_t ld) {
    return l == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}
static int64_t idx(int64_t i, int64_t j, tb_layout l, int64_t ld) {
    return l == TB_LAYOUT_ROW ? i * ld + j : j * ld + i;
}

__global__ void ref_kernel(tb_gemm g, const __nv_bfloat16 *A, const __nv_bfloat16 *B,
                           const __nv_bfloat16 *C, double *R, double *S) {
    for (int64_t b = blockIdx.z; b < g.batch; b += gridDim.z) {
    int64_t i = blockIdx.y * (int64_t)blockDim.y + threadIdx.y;
    int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= g.m || j >= g.n) continue;
    double acc = 0, sa = 0;
    for (int64_t p = 0; p < g.k; p++) {
        double a = __bfloat162float(A[b * g.stride_a + (g.a_layout == TB_LAYOUT_ROW ? i * g.lda + p : p * g.lda + i)]);
        double bb = __bfloat162float(B[b * g.stride_b + (g.b_layout == TB_LAYOUT_ROW ? p * g.ldb + j : j * g.ldb + p)]);
        acc += a * bb; sa += fabs(a * bb);
    }
    double r = g.alpha * acc, s = fabs(g.alpha) * sa;
    if (g.beta != 0) {
        double c = __bfloat162float(C[b * g.stride_c + (g.c_layout == TB_LAYOUT_ROW ? i * g.ldc + j : j * g.ldc + i)]);
        r += g.beta * c; s += fabs(g.beta * c);
    }
    R[(b * g.m + i) * g.n + j] = r;
    S[(b * g.m + i) * g.n + j] = s;
    }
}

static uint32_t rng = 12345;
static float frand() { rng = rng * 1664525u + 1013904223u; return ((rng >> 8) / 16777216.0f) * 2.f - 1.f; }

struct spec { int64_t m, n, k, batch; int la, lb, lc, ld; int pa, pb, pc, pd; int sx; double alpha, beta; const char *tag; };

static int g_fail = 0;

static void run_problem(std::vector<lib> &libs, const spec &s, const char *only) {
    tb_problem p; memset(&p, 0, sizeof p);
    p.struct_size = sizeof p; p.op = TB_OP_GEMM;
    tb_gemm &g = p.gemm;
    g.m = s.m; g.n = s.n; g.k = s.k; g.batch = s.batch;
    g.a_type = g.b_type = g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
    g.a_layout = (tb_layout)s.la; g.b_layout = (tb_layout)s.lb; g.c_layout = (tb_layout)s.lc; g.d_layout = (tb_layout)s.ld;
    g.lda = (s.la == TB_LAYOUT_ROW ? s.k : s.m) + s.pa;
    g.ldb = (s.lb == TB_LAYOUT_ROW ? s.n : s.k) + s.pb;
    g.ldc = (s.lc == TB_LAYOUT_ROW ? s.n : s.m) + s.pc;
    g.ldd = (s.ld == TB_LAYOUT_ROW ? s.n : s.m) + s.pd;
    int64_t ea = extent(s.m, s.k, g.a_layout, g.lda), eb = extent(s.k, s.n, g.b_layout, g.ldb);
    int64_t ec = extent(s.m, s.n, g.c_layout, g.ldc), ed = extent(s.m, s.n, g.d_layout, g.ldd);
    g.stride_a = ea + s.sx; g.stride_b = eb + s.sx; g.stride_c = ec + s.sx + 1; g.stride_d = ed + s.sx + 3;
    g.alpha = s.alpha; g.beta = s.beta;
    int64_t na = (s.batch - 1) * g.stride_a + ea, nb = (s.batch - 1) * g.stride_b + eb;
    int64_t nc = (s.batch - 1) * g.stride_c + ec, nd = (s.batch - 1) * g.stride_d + ed + 64;
    std::vector<__nv_bfloat16> ha(na), hb(nb), hc(nc);
    for (auto &x : ha) x = __float2bfloat16(frand());
    for (auto &x : hb) x = __float2bfloat16(frand());
    for (auto &x : hc) x = __float2bfloat16(frand());
    __nv_bfloat16 *da, *db, *dc = NULL, *dd; double *dr, *ds; void *ws = NULL;
    CK(cudaMalloc(&da, na * 2)); CK(cudaMalloc(&db, nb * 2)); CK(cudaMalloc(&dd, nd * 2));
    CK(cudaMemcpy(da, ha.data(), na * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, hb.data(), nb * 2, cudaMemcpyHostToDevice));
    if (s.beta != 0) { CK(cudaMalloc(&dc, nc * 2)); CK(cudaMemcpy(dc, hc.data(), nc * 2, cudaMemcpyHostToDevice)); }
    int64_t nr = s.batch * s.m * s.n;
    CK(cudaMalloc(&dr, nr * 8)); CK(cudaMalloc(&ds, nr * 8));
    dim3 rb(32, 8), rg((unsigned)((s.n + 31) / 32), (unsigned)((s.m + 7) / 8), (unsigned)std::min<int64_t>(s.batch, 65535));
    ref_kernel<<<rg, rb>>>(g, da, db, dc, dr, ds);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<double> hr(nr), hs(nr);
    CK(cudaMemcpy(hr.data(), dr, nr * 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hs.data(), ds, nr * 8, cudaMemcpyDeviceToHost));
    std::vector<uint16_t> hd(nd);
    std::vector<char> logical(nd, 0);
    for (int64_t b = 0; b < s.batch; b++)
        for (int64_t i = 0; i < s.m; i++)
            for (int64_t j = 0; j < s.n; j++) logical[b * g.stride_d + idx(i, j, g.d_layout, g.ldd)] = 1;
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    printf("-- %s: m=%lld n=%lld k=%lld batch=%lld layouts a%c b%c c%c d%c ld=%lld,%lld,%lld,%lld alpha=%g beta=%g\n",
           s.tag, (long long)s.m, (long long)s.n, (long long)s.k, (long long)s.batch, "rc"[s.la], "rc"[s.lb], "rc"[s.lc], "rc"[s.ld],
           (long long)g.lda, (long long)g.ldb, (long long)g.ldc, (long long)g.ldd, s.alpha, s.beta);
    for (auto &L : libs) {
        const tb_variant *v = L.v;
        if (only && !strstr(v->name, only)) continue;
        char why[256] = "";
        if (v->supports && !v->supports(&p, why, sizeof why)) { printf("   %-40s skip: %s\n", v->name, why); continue; }
        size_t wsz = v->workspace_size ? v->workspace_size(&p) : 0;
        if (wsz) CK(cudaMalloc(&ws, wsz));
        void *state = NULL; char msg[256] = "";
        if (v->setup && v->setup(&p, st, &state, msg, sizeof msg)) { printf("   %-40s SETUP FAIL %s\n", v->name, msg); g_fail++; if (ws) cudaFree(ws); ws = NULL; continue; }
        CK(cudaMemset(dd, 0xFF, nd * 2));
        tb_buffers io; memset(&io, 0, sizeof io); io.struct_size = sizeof io;
        io.in[0] = da; io.in[1] = db; io.in[2] = dc; io.out[0] = dd;
        int rc = v->launch(state, &p, &io, ws, wsz, st);
        cudaError_t e = cudaStreamSynchronize(st);
        if (rc || e != cudaSuccess) { printf("   %-40s LAUNCH FAIL rc=%d %s\n", v->name, rc, cudaGetErrorString(e)); g_fail++; exit(1); }
        CK(cudaMemcpy(hd.data(), dd, nd * 2, cudaMemcpyDeviceToHost));
        double worst = 0; int64_t bad = 0, guard_bad = 0, first_bad = -1;
        for (int64_t b = 0; b < s.batch; b++)
            for (int64_t i = 0; i < s.m; i++)
                for (int64_t j = 0; j < s.n; j++) {
                    uint16_t raw = hd[b * g.stride_d + idx(i, j, g.d_layout, g.ldd)];
                    __nv_bfloat16_raw rr; rr.x = raw;
                    double d = __bfloat162float(__nv_bfloat16(rr));
                    double r = hr[(b * s.m + i) * s.n + j], sa = hs[(b * s.m + i) * s.n + j];
                    double tol = fabs(r) * (1.0 / 256) + sa * 2e-5 + 1e-30;
                    double err = fabs(d - r) / tol;
                    if (!(err <= 1.0)) { bad++; if (first_bad < 0) first_bad = (b * s.m + i) * s.n + j; }
                    if (err > worst || err != err) worst = err;
                }
        for (int64_t x = 0; x < nd; x++) if (!logical[x] && hd[x] != 0xFFFF) guard_bad++;
        char desc[256] = "";
        if (v->describe && state) v->describe(state, desc, sizeof desc);
        if (bad || guard_bad) {
            g_fail++;
            printf("   %-40s FAIL bad=%lld guard=%lld worst=%.3g first=(b%lld,i%lld,j%lld) %s\n", v->name, (long long)bad, (long long)guard_bad, worst,
                   (long long)(first_bad / (s.m * s.n)), (long long)(first_bad / s.n % s.m), (long long)(first_bad % s.n), desc);
        } else printf("   %-40s ok worst=%.3f %s\n", v->name, worst, desc);
        if (v->teardown) v->teardown(state);
        if (ws) { cudaFree(ws); ws = NULL; }
    }
    cudaStreamDestroy(st);
    cudaFree(da); cudaFree(db); if (dc) cudaFree(dc); cudaFree(dd); cudaFree(dr); cudaFree(ds);
}

static void time_problem(std::vector<lib> &libs, int64_t m, int64_t n, int64_t k, const char *only, int iters) {
    tb_problem p; memset(&p, 0, sizeof p);
    p.struct_size = sizeof p; p.op = TB_OP_GEMM;
    tb_gemm &g = p.gemm;
    g.m = m; g.n = n; g.k = k; g.batch = 1;
    g.a_type = g.b_type = g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
    g.a_layout = TB_LAYOUT_ROW; g.b_layout = TB_LAYOUT_COL; g.c_layout = g.d_layout = TB_LAYOUT_ROW;
    g.lda = k; g.ldb = k; g.ldc = n; g.ldd = n; g.stride_a = m * k; g.stride_b = n * k; g.stride_c = g.stride_d = m * n;
    g.alpha = 1; g.beta = 0;
    __nv_bfloat16 *da, *db, *dd;
    CK(cudaMalloc(&da, m * k * 2)); CK(cudaMalloc(&db, n * k * 2)); CK(cudaMalloc(&dd, m * n * 2));
    std::vector<__nv_bfloat16> h(std::max(m, n) * k);
    for (auto &x : h) x = __float2bfloat16(frand());
    CK(cudaMemcpy(da, h.data(), m * k * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(db, h.data(), n * k * 2, cudaMemcpyHostToDevice));
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (auto &L : libs) {
        const tb_variant *v = L.v;
        if (only && !strstr(v->name, only)) continue;
        if (v->supports && !v->supports(&p, NULL, 0)) continue;
        size_t wsz = v->workspace_size ? v->workspace_size(&p) : 0; void *ws = NULL;
        if (wsz) CK(cudaMalloc(&ws, wsz));
        void *state = NULL; char msg[256];
        if (v->setup && v->setup(&p, st, &state, msg, sizeof msg)) { printf("setup fail %s\n", msg); continue; }
        tb_buffers io; memset(&io, 0, sizeof io); io.struct_size = sizeof io;
        io.in[0] = da; io.in[1] = db; io.out[0] = dd;
        for (int i = 0; i < 3; i++) v->launch(state, &p, &io, ws, wsz, st);
        cudaEventRecord(e0, st);
        for (int i = 0; i < iters; i++) v->launch(state, &p, &io, ws, wsz, st);
        cudaEventRecord(e1, st);
        CK(cudaEventSynchronize(e1));
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= iters;
        char desc[256] = ""; if (v->describe && state) v->describe(state, desc, sizeof desc);
        printf("TIME %5lldx%5lldx%5lld %-40s %8.3f ms %7.1f TFLOP/s %s\n", (long long)m, (long long)n, (long long)k, v->name, ms, 2.0 * m * n * k / ms / 1e9, desc);
        if (v->teardown) v->teardown(state);
        if (ws) cudaFree(ws);
    }
    cudaStreamDestroy(st); cudaFree(da); cudaFree(db); cudaFree(dd);
}

int main(int argc, char **argv) {
    std::vector<lib> libs;
    const char *mode = argc > 1 ? argv[1] : "list";
    const char *only = getenv("ONLY");
    for (int a = 2; a < argc; a++) {
        void *h = dlopen(argv[a], RTLD_NOW | RTLD_LOCAL);
        if (!h) { printf("dlopen %s: %s\n", argv[a], dlerror()); return 1; }
        tb_variant_query_fn q = (tb_variant_query_fn)dlsym(h, TB_VARIANT_ENTRY);
        if (!q) { printf("no entry in %s\n", argv[a]); return 1; }
        for (uint32_t i = 0;; i++) {
            const tb_variant *v = q(TB_VARIANT_ABI_VERSION, i);
            if (!v) break;
            libs.push_back({argv[a], v});
            printf("%s: [%u] name=%s family=%s sass=%s abi=%u size=%u params=", strrchr(argv[a], '/') ? strrchr(argv[a], '/') + 1 : argv[a], i, v->name, v->family, v->sass, v->abi_version, v->struct_size);
            for (const tb_param *pp = v->params; pp && pp->key; pp++) {
                if (pp->type == TB_PARAM_TYPE_INT) printf("%s=%lld ", pp->key, (long long)pp->i); else printf("%s=%s ", pp->key, pp->s);
            }
            char buf[128]; tb_variant_make_name(v->family, v->params, buf, sizeof buf);
            printf("%s\n", strcmp(buf, v->name) == 0 || (tb_param_find(v->params, "naming")) ? "" : "(NAME MISMATCH)");
        }
    }
    if (!strcmp(mode, "list")) return 0;
    if (!strcmp(mode, "check")) {
        const int R = TB_LAYOUT_ROW, C = TB_LAYOUT_COL;
        std::vector<spec> specs = {
            {256, 256, 256, 1, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.0, "square tn"},
            {1, 4096, 4096, 1, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.0, "decode m=1"},
            {129, 65, 40, 3, R, C, R, R, 8, 16, 3, 5, 8, 1.5, -0.5, "edges batch alpha beta odd ldc ldd"},
            {1, 1, 8, 1, R, C, R, R, 0, 0, 0, 0, 0, 2.0, 1.0, "1x1x8"},
            {7, 13, 24, 2, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.25, "7x13x24 batch2"},
            {300, 500, 1000, 2, R, C, C, C, 8, 8, 1, 2, 16, 0.5, 2.0, "d col"},
            {333, 257, 776, 1, R, C, R, C, 0, 0, 0, 0, 0, 1.0, 1.0, "c row d col"},
            {511, 1023, 4096, 1, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.0, "511x1023x4096"},
            {2048, 2048, 2048, 1, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.0, "2048 cube"},
            {4096, 4096, 4096, 1, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.5, "4096 cube beta"},
            {384, 384, 64, 70000 / 1000, R, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.0, "batch 70"},
            {33, 47, 19, 2, R, R, R, R, 1, 2, 3, 4, 5, 1.0, 1.0, "nn odd k"},
            {33, 47, 19, 2, C, C, C, C, 1, 2, 3, 4, 5, 1.0, 1.0, "cc odd k"},
            {65, 31, 17, 1, C, R, R, R, 0, 0, 0, 0, 0, -1.0, 0.5, "a col b row"},
            {100, 70, 64, 2, C, R, C, R, 0, 0, 0, 0, 0, 1.0, 0.5, "a col b row c col d row"},
            {100, 70, 64, 2, R, R, C, C, 0, 0, 0, 0, 0, 1.0, 0.5, "a row b row c col d col"},
            {100, 70, 64, 2, C, C, R, R, 0, 0, 0, 0, 0, 1.0, 0.5, "a col b col"},
            {100, 70, 64, 1, C, R, C, C, 0, 0, 0, 0, 0, 1.0, 0.0, "a col b row d col beta0"},
            {9, 17, 16, 70000, R, C, R, R, 0, 0, 0, 0, 8, 1.0, 1.0, "batch 70000"},
            {130, 70, 8, 2, R, C, R, R, 8, 8, 0, 0, 8, 1.0, 1.0, "k=8"},
            {200, 136, 264, 1, R, C, C, C, 0, 0, 0, 0, 0, 1.0, 1.0, "col cd odd ld"},
        };
        if (getenv("BIGBATCH")) { std::vector<spec> sm; for (auto &s : specs) if (s.batch >= 1000) sm.push_back(s); specs = sm; }
        if (getenv("SMALL")) { std::vector<spec> sm; for (auto &s : specs) if ((double)s.m * s.n * s.k * s.batch <= 2e8 && s.batch < 1000) sm.push_back(s); specs = sm; }
        for (auto &s : specs) run_problem(libs, s, only);
        printf("FAILURES %d\n", g_fail);
        return g_fail != 0;
    }
    if (!strcmp(mode, "time")) {
        int64_t shapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {16, 8192, 8192}, {2048, 2048, 2048}, {8192, 8192, 1024}};
        for (auto &sh : shapes) time_problem(libs, sh[0], sh[1], sh[2], only, sh[0] == 8192 && sh[2] == 8192 ? 10 : 30);
    }
    return 0;
}
