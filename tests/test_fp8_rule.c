/* test_fp8_rule.c - the FP8 rule of docs/method.md ("FP8 problems") against CPU models of
 * the variants it must pass and fail, on the harness's input distribution: x uniform or
 * normal, stored as x / scale rounded to E4M3 (scales 2^-6, 2^-5), values scale * decode.
 * Per element: the exact sum (double), and D as a correct FP32 sum, a sum missing its last
 * 32-wide K tile (zoo_fp8_skip_k_tile), an FP16 running sum (zoo_fp8_fp16_acc), each rounded
 * to BF16, checked by |d - ref| <= atol + rtol |ref| with the constants of
 * tb_validate_tolerance (worker/validate.c; written out here: this test links no CUDA).
 * Also prints a model of Hopper's un-promoted FP8 accumulation (13 fraction bits below the
 * largest exponent per 32-product step, truncated): information, not asserted. No GPU. */
#define _GNU_SOURCE   /* M_PI */
#include "tb_test.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 88172645463325252ull;
static double u01(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
static double draw(int normal)
{
    if (!normal) return 2 * u01() - 1;
    return sqrt(-2 * log(u01())) * cos(2 * M_PI * u01());
}
static double e4m3(double x)   /* round to nearest E4M3, saturating at 448 */
{
    double a = fabs(x);
    if (a == 0) return 0;
    int e = (int)floor(log2(a));
    if (e < -6) e = -6;
    double q = nearbyint(x / ldexp(1, e - 3)) * ldexp(1, e - 3);
    return q > 448 ? 448 : q < -448 ? -448 : q;
}
static double bf16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = ((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef struct { double ok, skip, f16, fast, worst_fast; } fails;

static fails run(int normal, int K, int E)
{
    const double sa = ldexp(1, -6), sb = ldexp(1, -5), rms = normal ? 1 : 1 / sqrt(3.0);
    const double atol = ldexp(1, -8) * rms * rms * sqrt((double)K), rtol = ldexp(1, -7);
    fails f = { 0, 0, 0, 0, 0 };
    double *p = malloc(sizeof *p * (size_t)K);
    for (int e = 0; e < E; e++) {
        double ref = 0;
        for (int k = 0; k < K; k++) {
            p[k] = e4m3(draw(normal) / sa) * sa * (e4m3(draw(normal) / sb) * sb);
            ref += p[k];
        }
        const double tol = atol + rtol * fabs(ref);
        float acc = 0;
        for (int k = 0; k < K; k++) acc += (float)p[k];
        f.ok += fabs(bf16(acc) - ref) > tol;
        double sk = 0;
        for (int k = 0; k < K - 32; k++) sk += p[k];
        f.skip += fabs(bf16((float)sk) - ref) > tol;
        _Float16 h = 0;
        for (int k = 0; k < K; k++) h = (_Float16)(p[k] + (double)h);   /* one rounding a step */
        f.f16 += fabs(bf16((float)h) - ref) > tol;
        double fa = 0;
        for (int k0 = 0; k0 < K; k0 += 32) {
            double mx = fabs(fa);
            for (int k = k0; k < k0 + 32 && k < K; k++) if (fabs(p[k]) > mx) mx = fabs(p[k]);
            double q = ldexp(1, (int)floor(log2(mx)) - 13), sum = trunc(fa / q) * q;
            for (int k = k0; k < k0 + 32 && k < K; k++) sum += trunc(p[k] / q) * q;
            fa = sum;
        }
        double r = fabs(bf16((float)fa) - ref) / tol;
        f.fast += r > 1;
        if (r > f.worst_fast) f.worst_fast = r;
    }
    free(p);
    f.ok /= E; f.skip /= E; f.f16 /= E; f.fast /= E;
    return f;
}

int main(void)
{
    const int Ks[] = { 512, 4096, 28672 };
    for (int normal = 0; normal < 2; normal++)
        for (int i = 0; i < 3; i++) {
            char id[32], what[96];
            snprintf(id, sizeof id, "fp8rule-%d.%d", normal + 1, i + 1);
            snprintf(what, sizeof what, "%s inputs, K = %d", normal ? "normal" : "uniform", Ks[i]);
            TB_CASE(id, what) {
                fails f = run(normal, Ks[i], 400);
                printf("  failing elements: correct %.1f %%, skip-k-tile %.1f %%, fp16-acc %.1f %%, "
                       "fast-accum model %.1f %% (worst %.2f x the allowance)\n", 100 * f.ok,
                       100 * f.skip, 100 * f.f16, 100 * f.fast, f.worst_fast);
                TB_CHECK(f.ok == 0);             /* a correct FP32 sum always passes */
                TB_CHECK(f.skip > 0.5);          /* most elements of a dropped tile fail */
                TB_CHECK(f.f16 > 0.001);         /* an FP16 sum fails some elements */
            }
        }
    return tb_test_done();
}
