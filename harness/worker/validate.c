/* validate.c - the validation rules and the steps of one trial (see validate.h). */
#include "worker/validate.h"
#include "common/tb.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

void tb_validate_tolerance(const tb_gemm *g, tb_init_dist dist, double *atol, double *rtol)
{
    double rms = dist == TB_INIT_NORMAL ? 1.0 : 1.0 / sqrt(3.0);   /* of the inputs */
    *rtol = ldexp(1.0, -7);
    *atol = ldexp(1.0, -8) * fabs(g->alpha) * rms * rms * sqrt((double)g->k);
    if (*atol == 0.0) *atol = ldexp(1.0, -24);
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
        CU(tbdev_checksum(p[i], (n[i] * 2 + 7) / 8 * 8, b->scratch + i, s));
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
    return TB_OK;
}

int tb_validate_prepare(tb_ref *ref, const tb_gemm *g, tb_val_bufs *b, uint64_t seed,
                        tb_init_dist dist, int use_naive, int crosscheck, cudaStream_t s,
                        char *msg, size_t len)
{
    char m2[TB_MSG_LEN];
    CU(tbdev_fill_bf16(b->a, b->na, seed * 4 + 1, dist, s));
    CU(tbdev_fill_bf16(b->b, b->nb, seed * 4 + 2, dist, s));
    if (b->c && b->nc) CU(tbdev_fill_bf16(b->c, b->nc, seed * 4 + 3, dist, s));
    int rc = tb_validate_repoison(b, s, msg, len);
    if (rc) return rc;
    rc = use_naive ? tb_ref_gemm_naive(g, b->a, b->b, b->c, b->d_ref, s, m2, sizeof m2)
                   : tb_ref_gemm_cublaslt(ref, g, b->a, b->b, b->c, b->d_ref, s, NULL, 0,
                                          m2, sizeof m2);
    if (rc) return tb_fail(msg, len, TB_ECUDA, "reference failed: %s", m2);
    double mnk = (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
    if (crosscheck && b->d_ref2 && mnk <= TB_CROSSCHECK_MAX_MNK) {
        rc = use_naive ? tb_ref_gemm_cublaslt(ref, g, b->a, b->b, b->c, b->d_ref2, s, NULL, 0,
                                              m2, sizeof m2)
                       : tb_ref_gemm_naive(g, b->a, b->b, b->c, b->d_ref2, s, m2, sizeof m2);
        if (rc) return tb_fail(msg, len, TB_ECUDA, "second reference failed: %s", m2);
        /* both are FP32 results of FP32-or-better accumulation: far tighter than the rule */
        double atol, rtol;
        tb_validate_tolerance(g, dist, &atol, &rtol);
        tb_cmp_result h;
        CU(tbdev_compare_f32_f32(b->d_ref2, b->d_ref, (size_t)(g->m * g->n * g->batch),
                                 atol / 16, rtol / 16, b->cmp_dev, s));
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
