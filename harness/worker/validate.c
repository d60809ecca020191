/* validate.c - the validation rules and the steps of one trial (see validate.h). */
#include "worker/validate.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The rule per type of A and B (docs/method.md, "The rule" and "FP8 problems"). BF16 and E4M3
 * operands get the same constants: their products are exact in FP32 (8 and 4 significant bits
 * a factor), so what a correct variant adds to the exact product of the values A and B stand
 * for is FP32 accumulation and D's one rounding to BF16, the same in both; an E4M3 element
 * stands for scale * decode(bits), drawn as x / scale rounded to E4M3, whose rms is x's to
 * within 0.1 % (the rounding's relative error is at most 2^-4). Any other type falls back to
 * the same constants: the harness draws only these two (tb_validate_types). */
void tb_validate_free(tb_val_bufs *b)
{
    void *own[] = { b->a, b->b, b->c, b->d_base, b->d_ref, b->d_ref2, b->cmp_dev, b->scratch,
                    b->lse_base, b->lse_ref, b->lse_ref2, b->ref_ws, b->rule_ws, b->norm_dev };
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i]) cudaFree(own[i]);
    memset(b, 0, sizeof *b);
}

void tb_validate_tolerance(const tb_gemm *g, tb_init_dist dist, double *atol, double *rtol)
{
    double rms = dist == TB_INIT_NORMAL ? 1.0 : 1.0 / sqrt(3.0);   /* of the values drawn */
    switch (g->a_type) {
    case TB_DTYPE_E4M3:   /* FP32 accumulation, BF16 D: the BF16 rule's derivation holds */
    case TB_DTYPE_BF16:
    default:
        *rtol = ldexp(1.0, -7);
        *atol = ldexp(1.0, -8) * fabs(g->alpha) * rms * rms * sqrt((double)g->k);
        break;
    }
    if (*atol == 0.0) *atol = ldexp(1.0, -24);
}

int tb_validate_types(tb_val_bufs *b, const tb_gemm *g, const tb_gemm_scales *scales,
                      char *msg, size_t len)
{
    const tb_dtype t[3] = { g->a_type, g->b_type, g->c_type };
    for (int i = 0; i < 3; i++) {
        if (t[i] != TB_DTYPE_BF16 && !(i < 2 && t[i] == TB_DTYPE_E4M3))
            return tb_fail(msg, len, TB_EUSAGE, "cannot draw inputs of type %d for %c", (int)t[i],
                           "ABC"[i]);
        b->in_type[i] = t[i];
        b->esz[i] = t[i] == TB_DTYPE_E4M3 ? 1 : 2;
    }
    b->scale[0] = t[0] == TB_DTYPE_E4M3 ? scales->scale_a : 1.0f;
    b->scale[1] = t[1] == TB_DTYPE_E4M3 ? scales->scale_b : 1.0f;
    return TB_OK;
}

int tb_validate_fill(const tb_val_bufs *b, int which, void *dst, size_t n, uint64_t seed,
                     tb_init_dist dist, cudaStream_t s)
{
    if (which < 2 && b->in_type[which] == TB_DTYPE_E4M3)   /* C is never 8-bit */
        return tbdev_fill_e4m3(dst, n, seed, dist, b->scale[which], s);
    return tbdev_fill_bf16(dst, n, seed, dist, s);
}

#define CU(call) do { cudaError_t e_ = (cudaError_t)(call); if (e_ != cudaSuccess) \
    return tb_fail(msg, len, TB_ECUDA, "%s: %s", #call, cudaGetErrorString(e_)); } while (0)

int tb_validate_checksums(const tb_val_bufs *b, cudaStream_t s, unsigned long long out[3],
                          char *msg, size_t len)
{
    const void *p[3] = { b->a, b->b, b->c };
    size_t n[3] = { b->na, b->nb, b->nc };
    for (int i = 0; i < 3; i++) {
        out[i] = 0;
        if (!p[i] || !n[i]) continue;
        /* the buffers are allocated rounded up to 8 bytes, the tail zeroed */
        CU(tbdev_checksum(p[i], (n[i] * b->esz[i] + 7) / 8 * 8, b->scratch + i, s));
    }
    unsigned long long h[3];
    CU(cudaMemcpyAsync(h, b->scratch, sizeof h, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    for (int i = 0; i < 3; i++) if (p[i] && n[i]) out[i] = h[i];
    return TB_OK;
}

int tb_validate_repoison(const tb_val_bufs *b, cudaStream_t s, char *msg, size_t len)
{
    CU(tbdev_fill_u16(b->d_base, b->guard, TB_CANARY_BF16, s));
    CU(tbdev_fill_u16(b->d, b->nd, TB_POISON_BF16, s));
    CU(tbdev_fill_u16((uint16_t *)b->d + b->nd, b->guard, TB_CANARY_BF16, s));
    if (b->lse) {   /* attention's LSE: FP32, each float two 16-bit patterns */
        CU(tbdev_fill_u16(b->lse_base, 2 * b->lse_guard, TB_CANARY_BF16, s));
        CU(tbdev_fill_u16(b->lse, 2 * b->nlse, TB_POISON_BF16, s));
        CU(tbdev_fill_u16((float *)b->lse + b->nlse, 2 * b->lse_guard, TB_CANARY_BF16, s));
    }
    return TB_OK;
}

int tb_validate_prepare(tb_ref *ref, const tb_gemm *g, tb_val_bufs *b, uint64_t seed,
                        tb_init_dist dist, int use_naive, int crosscheck, cudaStream_t s,
                        char *msg, size_t len)
{
    char m2[TB_MSG_LEN];
    CU(tb_validate_fill(b, 0, b->a, b->na, seed * 4 + 1, dist, s));
    CU(tb_validate_fill(b, 1, b->b, b->nb, seed * 4 + 2, dist, s));
    if (b->c && b->nc) CU(tb_validate_fill(b, 2, b->c, b->nc, seed * 4 + 3, dist, s));
    int rc = tb_validate_repoison(b, s, msg, len);
    if (rc) return rc;
    /* what cuBLASLt cannot compute (FP8 outside tn, or dimensions not multiples of 16) has the
     * naive kernel as its only reference, never cross-checked */
    const float sa = b->scale[0], sb = b->scale[1];
    const int lt_ok = tb_ref_cublaslt_supports(g);
    /* FP8: the naive kernel (exact products, FP64 sum) is always the reference. cuBLASLt's FP8
     * kernels promote their tensor-core partial sums to FP32 only every few MMAs (about 14 bits
     * kept in between, docs/method.md, "FP8 problems"): a correct FP32-semantics result, but not
     * one to hold at 1/16 of the rule; it is the cross-check, held to the rule itself */
    const int fp8 = tb_dtype_is_fp8(g->a_type) || tb_dtype_is_fp8(g->b_type);
    if (!lt_ok || fp8) use_naive = 1;
    rc = use_naive ? tb_ref_gemm_naive_scaled(g, sa, sb, b->a, b->b, b->c, b->d_ref, s, m2, sizeof m2)
                   : tb_ref_gemm_cublaslt_scaled(ref, g, sa, sb, b->a, b->b, b->c, b->d_ref, s,
                                                 NULL, 0, m2, sizeof m2);
    if (rc) return tb_fail(msg, len, TB_ECUDA, "reference failed: %s", m2);
    double mnk = (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
    if (crosscheck && lt_ok && b->d_ref2 && mnk <= TB_CROSSCHECK_MAX_MNK) {
        rc = use_naive ? tb_ref_gemm_cublaslt_scaled(ref, g, sa, sb, b->a, b->b, b->c, b->d_ref2, s,
                                                     NULL, 0, m2, sizeof m2)
                       : tb_ref_gemm_naive_scaled(g, sa, sb, b->a, b->b, b->c, b->d_ref2, s, m2,
                                                  sizeof m2);
        if (rc) return tb_fail(msg, len, TB_ECUDA, "second reference failed: %s", m2);
        /* both are FP32 results of FP32-or-better accumulation: far tighter than the rule
         * (FP8: the rule itself, above) */
        double atol, rtol;
        tb_validate_tolerance(g, dist, &atol, &rtol);
        tb_cmp_result h;
        const double div = fp8 ? 1.0 : 16.0;
        CU(tbdev_compare_f32_f32(b->d_ref2, b->d_ref, (size_t)(g->m * g->n * g->batch),
                                 atol / div, rtol / div, b->cmp_dev, s));
        CU(cudaMemcpyAsync(&h, b->cmp_dev, sizeof h, cudaMemcpyDeviceToHost, s));
        CU(cudaStreamSynchronize(s));
        if (h.n_bad)
            return tb_fail(msg, len, TB_EINTERNAL, "references disagree: cuBLASLt and the naive "
                           "kernel differ on %llu elements (max %.4g)", h.n_bad, h.max_abs_err);
    }
    rc = tb_validate_checksums(b, s, b->sum_in, msg, len);
    if (rc) return rc;
    CU(cudaStreamSynchronize(s));
    return TB_OK;
}

int tb_validate_check(const tb_gemm *g, const tb_val_bufs *b, tb_init_dist dist,
                      cudaStream_t s, tb_val_result *out, char *msg, size_t len)
{
    tb_cmp_result h;
    unsigned long long guards[2], sums[3];
    memset(out, 0, sizeof *out);
    tb_validate_tolerance(g, dist, &out->atol, &out->rtol);
    CU(tbdev_count_ne_u16(b->d_base, b->guard, TB_CANARY_BF16, b->scratch + 0, s));
    CU(tbdev_count_ne_u16((uint16_t *)b->d + b->nd, b->guard, TB_CANARY_BF16, b->scratch + 1, s));
    CU(cudaMemcpyAsync(guards, b->scratch, sizeof guards, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    int rc = tb_validate_checksums(b, s, sums, msg, len);
    if (rc) return rc;
    CU(tbdev_compare_bf16_f32(b->d, b->d_ref, g->m, g->n, g->batch,
                              g->d_layout == TB_LAYOUT_COL, g->ldd, g->stride_d,
                              0, g->n, g->m * g->n, out->atol, out->rtol, b->cmp_dev, s));
    CU(cudaMemcpyAsync(&h, b->cmp_dev, sizeof h, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    out->n_bad = h.n_bad;
    out->n_nonfinite = h.n_nonfinite;
    out->first_bad = h.first_bad;
    out->guard_bad = guards[0] + guards[1];
    out->max_abs_err = h.max_abs_err;
    out->rel_fro_err = h.sum_sq_ref > 0 ? sqrt(h.sum_sq_err / h.sum_sq_ref) : NAN;
    uint64_t f = h.first_bad, mn = (uint64_t)(g->m * g->n);
    long long bi = (long long)(f / mn), i = (long long)(f % mn / (uint64_t)g->n),
              j = (long long)(f % (uint64_t)g->n);
    const char *which[3] = { "A", "B", "C" };
    out->passed = 0;
    if (out->guard_bad) {
        snprintf(out->rule, sizeof out->rule, "guard");
        snprintf(out->reason, sizeof out->reason, "wrote outside D: %llu elements of the guard "
                 "bands changed (%llu before D, %llu after)", guards[0] + guards[1], guards[0],
                 guards[1]);
        return TB_OK;
    }
    for (int k = 0; k < 3; k++)
        if (sums[k] != b->sum_in[k]) {
            snprintf(out->rule, sizeof out->rule, "inputs");
            snprintf(out->reason, sizeof out->reason, "modified its input %s (checksum "
                     "%016llx before the launch, %016llx after)", which[k], b->sum_in[k], sums[k]);
            return TB_OK;
        }
    if (h.n_nonfinite) {
        snprintf(out->rule, sizeof out->rule, "nonfinite");
        snprintf(out->reason, sizeof out->reason, "%llu of %llu elements NaN/Inf or never "
                 "written (first at batch %lld row %lld col %lld)", h.n_nonfinite,
                 (unsigned long long)(mn * (uint64_t)g->batch), bi, i, j);
        return TB_OK;
    }
    if (h.n_bad) {
        snprintf(out->rule, sizeof out->rule, "elementwise");
        snprintf(out->reason, sizeof out->reason, "%llu elements off by more than %.3g + "
                 "%.3g*|ref| (max abs err %.4g, first at batch %lld row %lld col %lld)",
                 h.n_bad, out->atol, out->rtol, h.max_abs_err, bi, i, j);
        return TB_OK;
    }
    out->passed = 1;
    return TB_OK;
}
