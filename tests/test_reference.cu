/* test_reference.cu - both references (cuBLASLt FP32 out, the naive FP64 kernel) against a
 * CPU FP64 product on small shapes: every layout, alpha != 1, beta != 0 with C, padded
 * leading dimensions, batch; and FP8 problems (E4M3 A and B with per-tensor scales, BF16 C):
 * the naive kernel in every layout and cuBLASLt's FP8 GEMM where it can (tn, multiples of 16)
 * against the FP64 product of the decoded E4M3 values (decoded here, by the format's
 * definition, not by CUDA's conversions). GPU test: exit 77 without a GPU. */
#include "tb_test.h"
#include "ref.h"
#include "device/tbdev.h"
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <vector>

static double at(const std::vector<__nv_bfloat16> &v, int col, int64_t ld, int64_t i, int64_t j, int64_t off)
{
    return (double)__bfloat162float(v[off + (col ? j * ld + i : i * ld + j)]);
}

/* The value of an E4M3 byte (OCP FP8: bias 7, no infinities, S.1111.111 NaN). */
static double e4m3(uint8_t x)
{
    int s = x >> 7, e = (x >> 3) & 15, m = x & 7;
    if (e == 15 && m == 7) return NAN;
    double v = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return s ? -v : v;
}

static double at8(const std::vector<uint8_t> &v, int col, int64_t ld, int64_t i, int64_t j, int64_t off)
{
    return e4m3(v[off + (col ? j * ld + i : i * ld + j)]);
}

/* FP8 cases: E4M3 A and B at the sweep's scales (2^-6, 2^-5), BF16 C, FP32 references. The naive
 * kernel is exact products summed in FP64: held to 4e-6 of the sum of |terms|, as BF16. cuBLASLt
 * promotes its FP8 tensor-core partial sums (about 14 bits) to FP32 every few MMAs: held to
 * 2^-12 of the sum of |terms|, still 100 x below what a layout, stride or scale bug gives. */
static void fp8_cases(tb_ref *ref)
{
    const float sa = 0.015625f, sb = 0.03125f;
    const char *lay[4] = { "tn", "nn", "nt", "tt" };
    struct { int64_t m, n, k, b; int pad; double alpha, beta; } shapes[] = {
        { 64, 48, 128, 1, 0, 1.0, 0.0 }, { 128, 64, 256, 2, 16, 0.5, 0.5 },
        { 32, 16, 1024, 1, 0, 2.0, 0.0 }, { 37, 53, 71, 1, 3, 1.0, -1.0 } };   /* the last: naive only */
    char msg[512];
    int id = 0;
    for (auto &sh : shapes)
        for (int L = 0; L < 4; L++) {
            char cid[32], what[160];
            snprintf(cid, sizeof cid, "ref-fp8-%d.%d", id / 4 + 1, L + 1);
            snprintf(what, sizeof what, "E4M3 %lldx%lldx%lldx%lld %s pad %d alpha %g beta %g",
                     (long long)sh.m, (long long)sh.n, (long long)sh.k, (long long)sh.b, lay[L],
                     sh.pad, sh.alpha, sh.beta);
            id++;
            TB_CASE(cid, what) {
                tb_gemm g = {};
                g.m = sh.m; g.n = sh.n; g.k = sh.k; g.batch = sh.b;
                g.a_type = g.b_type = TB_DTYPE_E4M3;
                g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
                g.a_layout = lay[L][0] == 't' ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
                g.b_layout = lay[L][1] == 'n' ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
                g.c_layout = g.d_layout = TB_LAYOUT_ROW;
                g.lda = (g.a_layout == TB_LAYOUT_ROW ? g.k : g.m) + sh.pad;
                g.ldb = (g.b_layout == TB_LAYOUT_COL ? g.k : g.n) + sh.pad;
                g.ldc = g.ldd = g.n + sh.pad;
                g.stride_a = (g.a_layout == TB_LAYOUT_ROW ? g.m : g.k) * g.lda;
                g.stride_b = (g.b_layout == TB_LAYOUT_COL ? g.n : g.k) * g.ldb;
                g.stride_c = g.stride_d = g.m * g.ldc;
                g.alpha = sh.alpha; g.beta = sh.beta;
                const int aligned = L == 0 && sh.m % 16 == 0 && sh.n % 16 == 0 && sh.k % 16 == 0 &&
                                    g.lda % 16 == 0 && g.ldb % 16 == 0;
                TB_CHECK(tb_ref_cublaslt_supports(&g) == aligned);   /* tn and 16-aligned only */
                size_t na = g.stride_a * g.batch, nb = g.stride_b * g.batch, nc = g.stride_c * g.batch;
                size_t nr = g.m * g.n * g.batch;
                void *a, *b, *c; float *r1, *r2;
                cudaMalloc(&a, na); cudaMalloc(&b, nb); cudaMalloc(&c, nc * 2);
                cudaMalloc(&r1, nr * 4); cudaMalloc(&r2, nr * 4);
                TB_CHECK(tbdev_fill_e4m3(a, na, 111 + id, TB_INIT_UNIFORM, sa, 0) == 0);
                TB_CHECK(tbdev_fill_e4m3(b, nb, 222 + id, TB_INIT_UNIFORM, sb, 0) == 0);
                tbdev_fill_bf16(c, nc, 333 + id, TB_INIT_UNIFORM, 0);
                if (aligned)
                    TB_CHECK(tb_ref_gemm_cublaslt_scaled(ref, &g, sa, sb, a, b, c, r1, 0, NULL, 0, msg,
                                                         sizeof msg) == 0);
                TB_CHECK(tb_ref_gemm_naive_scaled(&g, sa, sb, a, b, c, r2, 0, msg, sizeof msg) == 0);
                TB_CHECK(cudaDeviceSynchronize() == cudaSuccess);
                std::vector<uint8_t> ha(na), hb(nb);
                std::vector<__nv_bfloat16> hc(nc);
                std::vector<float> h1(nr), h2(nr);
                cudaMemcpy(ha.data(), a, na, cudaMemcpyDeviceToHost);
                cudaMemcpy(hb.data(), b, nb, cudaMemcpyDeviceToHost);
                cudaMemcpy(hc.data(), c, nc * 2, cudaMemcpyDeviceToHost);
                cudaMemcpy(h1.data(), r1, nr * 4, cudaMemcpyDeviceToHost);
                cudaMemcpy(h2.data(), r2, nr * 4, cudaMemcpyDeviceToHost);
                double worst1 = 0, worst2 = 0, biggest = 0;
                for (int64_t bt = 0; bt < g.batch; bt++)
                    for (int64_t i = 0; i < g.m; i++)
                        for (int64_t j = 0; j < g.n; j++) {
                            double acc = 0, mag = 0;
                            for (int64_t kk = 0; kk < g.k; kk++) {
                                double p = (double)sa * at8(ha, g.a_layout, g.lda, i, kk, bt * g.stride_a) *
                                           (double)sb * at8(hb, g.b_layout, g.ldb, kk, j, bt * g.stride_b);
                                acc += p; mag += fabs(p);
                            }
                            double cv = at(hc, 0, g.ldc, i, j, bt * g.stride_c);
                            double want = g.alpha * acc + g.beta * cv;
                            double tol2 = 4e-6 * (fabs(g.alpha) * mag + fabs(g.beta * cv)) + 1e-30;
                            double tol1 = ldexp(1.0, -12) * fabs(g.alpha) * mag + 4e-6 * fabs(g.beta * cv) + 1e-30;
                            size_t o = bt * g.m * g.n + i * g.n + j;
                            if (aligned) worst1 = fmax(worst1, fabs(h1[o] - want) / tol1);
                            worst2 = fmax(worst2, fabs(h2[o] - want) / tol2);
                            biggest = fmax(biggest, fabs(want));
                        }
                TB_CHECK(worst1 <= 1.0);
                TB_CHECK(worst2 <= 1.0);
                TB_CHECK(biggest > 0);   /* the decoded inputs are not all zero */
                if (worst1 > 1 || worst2 > 1)
                    printf("  worst/tol cublaslt %.3g naive %.3g\n", worst1, worst2);
                cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(r1); cudaFree(r2);
            }
        }
}

int main()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { printf("SKIP: no GPU\n"); return 77; }
    char msg[512];
    tb_ref *ref;
    if (tb_ref_open(&ref, msg, sizeof msg)) { printf("FAIL ref-0: %s\n", msg); return 1; }
    const char *lay[4] = { "tn", "nn", "nt", "tt" };
    struct { int64_t m, n, k, b; int pad; double alpha, beta; } shapes[] = {
        { 37, 53, 71, 1, 0, 1.0, 0.0 }, { 64, 48, 136, 2, 8, 0.75, -0.5 }, { 1, 129, 40, 3, 3, 2.0, 1.0 },
        { 200, 131, 83, 2, 5, 1.0, 0.5 } };   /* several 64x64 tiles each way, a partial k tile */
    int id = 0;
    for (auto &sh : shapes)
        for (int L = 0; L < 4; L++) {
            char cid[32], what[128];
            snprintf(cid, sizeof cid, "ref-%d.%d", id / 4 + 1, L + 1);
            snprintf(what, sizeof what, "%lldx%lldx%lldx%lld %s pad %d alpha %g beta %g",
                     (long long)sh.m, (long long)sh.n, (long long)sh.k, (long long)sh.b, lay[L],
                     sh.pad, sh.alpha, sh.beta);
            id++;
            TB_CASE(cid, what) {
                tb_gemm g = {};
                g.m = sh.m; g.n = sh.n; g.k = sh.k; g.batch = sh.b;
                g.a_type = g.b_type = g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
                g.a_layout = lay[L][0] == 't' ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
                g.b_layout = lay[L][1] == 'n' ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
                g.c_layout = g.d_layout = TB_LAYOUT_ROW;
                g.lda = (g.a_layout == TB_LAYOUT_ROW ? g.k : g.m) + sh.pad;
                g.ldb = (g.b_layout == TB_LAYOUT_COL ? g.k : g.n) + sh.pad;
                g.ldc = g.ldd = g.n + sh.pad;
                g.stride_a = (g.a_layout == TB_LAYOUT_ROW ? g.m : g.k) * g.lda;
                g.stride_b = (g.b_layout == TB_LAYOUT_COL ? g.n : g.k) * g.ldb;
                g.stride_c = g.stride_d = g.m * g.ldc;
                g.alpha = sh.alpha; g.beta = sh.beta;
                size_t na = g.stride_a * g.batch, nb = g.stride_b * g.batch, nc = g.stride_c * g.batch;
                size_t nr = g.m * g.n * g.batch;
                void *a, *b, *c; float *r1, *r2;
                cudaMalloc(&a, na * 2); cudaMalloc(&b, nb * 2); cudaMalloc(&c, nc * 2);
                cudaMalloc(&r1, nr * 4); cudaMalloc(&r2, nr * 4);
                tbdev_fill_bf16(a, na, 11 + id, TB_INIT_UNIFORM, 0);
                tbdev_fill_bf16(b, nb, 22 + id, TB_INIT_UNIFORM, 0);
                tbdev_fill_bf16(c, nc, 33 + id, TB_INIT_UNIFORM, 0);
                TB_CHECK(tb_ref_gemm_cublaslt(ref, &g, a, b, c, r1, 0, NULL, 0, msg, sizeof msg) == 0);
                TB_CHECK(tb_ref_gemm_naive(&g, a, b, c, r2, 0, msg, sizeof msg) == 0);
                TB_CHECK(cudaDeviceSynchronize() == cudaSuccess);
                std::vector<__nv_bfloat16> ha(na), hb(nb), hc(nc);
                std::vector<float> h1(nr), h2(nr);
                cudaMemcpy(ha.data(), a, na * 2, cudaMemcpyDeviceToHost);
                cudaMemcpy(hb.data(), b, nb * 2, cudaMemcpyDeviceToHost);
                cudaMemcpy(hc.data(), c, nc * 2, cudaMemcpyDeviceToHost);
                cudaMemcpy(h1.data(), r1, nr * 4, cudaMemcpyDeviceToHost);
                cudaMemcpy(h2.data(), r2, nr * 4, cudaMemcpyDeviceToHost);
                double worst1 = 0, worst2 = 0;
                for (int64_t bt = 0; bt < g.batch; bt++)
                    for (int64_t i = 0; i < g.m; i++)
                        for (int64_t j = 0; j < g.n; j++) {
                            double acc = 0, mag = 0;
                            for (int64_t kk = 0; kk < g.k; kk++) {
                                double p = at(ha, g.a_layout, g.lda, i, kk, bt * g.stride_a) *
                                           at(hb, g.b_layout, g.ldb, kk, j, bt * g.stride_b);
                                acc += p; mag += fabs(p);
                            }
                            double want = g.alpha * acc + g.beta * at(hc, 0, g.ldc, i, j, bt * g.stride_c);
                            double tol = 4e-6 * (fabs(g.alpha) * mag + fabs(g.beta)) + 1e-30;
                            size_t o = bt * g.m * g.n + i * g.n + j;
                            worst1 = fmax(worst1, fabs(h1[o] - want) / tol);
                            worst2 = fmax(worst2, fabs(h2[o] - want) / tol);
                        }
                /* FP32 results: within 4e-6 of the sum of |terms| (about 64 FP32 ulps); a layout or
                 * stride bug is off by O(1) */
                TB_CHECK(worst1 <= 1.0);
                TB_CHECK(worst2 <= 1.0);
                if (worst1 > 1 || worst2 > 1) printf("  worst/tol cublaslt %.3g naive %.3g\n", worst1, worst2);
                cudaFree(a); cudaFree(b); cudaFree(c); cudaFree(r1); cudaFree(r2);
            }
        }
    fp8_cases(ref);
    /* how long the naive reference takes at 8192^3 (it validates the cuBLASLt family three
     * times a measurement): information for docs/perf.md, not a check */
    {
        tb_gemm g = {};
        g.m = g.n = g.k = 8192; g.batch = 1;
        g.a_type = g.b_type = g.c_type = g.d_type = TB_DTYPE_BF16; g.acc_type = TB_DTYPE_F32;
        g.a_layout = TB_LAYOUT_ROW; g.b_layout = TB_LAYOUT_COL; g.c_layout = g.d_layout = TB_LAYOUT_ROW;
        g.lda = g.ldb = g.ldc = g.ldd = 8192;
        g.stride_a = g.stride_b = g.stride_c = g.stride_d = 8192ll * 8192;
        g.alpha = 1.0;
        void *a = NULL, *b = NULL; float *r = NULL;
        if (cudaMalloc(&a, g.stride_a * 2) == cudaSuccess && cudaMalloc(&b, g.stride_b * 2) == cudaSuccess &&
            cudaMalloc(&r, g.stride_d * 4) == cudaSuccess) {
            tbdev_fill_bf16(a, g.stride_a, 5, TB_INIT_UNIFORM, 0);
            tbdev_fill_bf16(b, g.stride_b, 6, TB_INIT_UNIFORM, 0);
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0); cudaEventCreate(&e1);
            tb_ref_gemm_naive(&g, a, b, NULL, r, 0, msg, sizeof msg);   /* untimed first */
            cudaEventRecord(e0, 0);
            tb_ref_gemm_naive(&g, a, b, NULL, r, 0, msg, sizeof msg);
            cudaEventRecord(e1, 0);
            float ms = 0;
            if (cudaEventSynchronize(e1) == cudaSuccess) cudaEventElapsedTime(&ms, e0, e1);
            printf("naive reference 8192^3: %.1f ms (%.2f TFLOP/s FP64)\n", ms, 2.0 * 8192 * 8192 * 8192 / (ms * 1e-3) / 1e12);
            cudaEventDestroy(e0); cudaEventDestroy(e1);
        }
        cudaFree(a); cudaFree(b); cudaFree(r);
        cudaGetLastError();
    }
    tb_ref_close(ref);
    return tb_test_done();
}
