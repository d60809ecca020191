/* validate.c - the validation rule and the steps of one trial (see validate.h). */
#include "validate.h"
#include "tb.h"
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

int tb_validate_prepare(tb_ref *ref, const tb_gemm *g, const tb_val_bufs *b, uint64_t seed,
                        tb_init_dist dist, int use_naive, cudaStream_t s, char *msg, size_t len)
{
    char m2[TB_MSG_LEN];
    CU(tbdev_fill_bf16(b->a, b->na, seed * 4 + 1, dist, s));
    CU(tbdev_fill_bf16(b->b, b->nb, seed * 4 + 2, dist, s));
    if (b->c && b->nc) CU(tbdev_fill_bf16(b->c, b->nc, seed * 4 + 3, dist, s));
    CU(tbdev_fill_u16(b->d, b->nd, TB_POISON_BF16, s));
    int rc = use_naive ? tb_ref_gemm_naive(g, b->a, b->b, b->c, b->d_ref, s, m2, sizeof m2)
                       : tb_ref_gemm_cublaslt(ref, g, b->a, b->b, b->c, b->d_ref, s, NULL, 0,
                                              m2, sizeof m2);
    if (rc) return tb_fail(msg, len, TB_ECUDA, "reference failed: %s", m2);
    CU(cudaStreamSynchronize(s));
    return TB_OK;
}

int tb_validate_check(const tb_gemm *g, const tb_val_bufs *b, tb_init_dist dist,
                      cudaStream_t s, tb_val_result *out, char *msg, size_t len)
{
    tb_cmp_result h;
    memset(out, 0, sizeof *out);
    tb_validate_tolerance(g, dist, &out->atol, &out->rtol);
    CU(tbdev_compare_bf16_f32(b->d, b->d_ref, g->m, g->n, g->batch,
                              g->d_layout == TB_LAYOUT_COL, g->ldd, g->stride_d,
                              0, g->n, g->m * g->n, out->atol, out->rtol, b->cmp_dev, s));
    CU(cudaMemcpyAsync(&h, b->cmp_dev, sizeof h, cudaMemcpyDeviceToHost, s));
    CU(cudaStreamSynchronize(s));
    out->n_bad = h.n_bad;
    out->n_nonfinite = h.n_nonfinite;
    out->first_bad = h.first_bad;
    out->max_abs_err = h.max_abs_err;
    out->rel_fro_err = h.sum_sq_ref > 0 ? sqrt(h.sum_sq_err / h.sum_sq_ref) : NAN;
    out->passed = h.n_bad == 0;
    if (!out->passed) {
        uint64_t f = h.first_bad, mn = (uint64_t)(g->m * g->n);
        long long bi = (long long)(f / mn), i = (long long)(f % mn / (uint64_t)g->n),
                  j = (long long)(f % (uint64_t)g->n);
        if (h.n_nonfinite) {
            snprintf(out->rule, sizeof out->rule, "nonfinite");
            snprintf(out->reason, sizeof out->reason, "%llu of %llu elements NaN/Inf or "
                     "never written (first at batch %lld row %lld col %lld)",
                     (unsigned long long)h.n_nonfinite, (unsigned long long)(mn * (uint64_t)g->batch),
                     bi, i, j);
        } else {
            snprintf(out->rule, sizeof out->rule, "elementwise");
            snprintf(out->reason, sizeof out->reason, "%llu elements off by more than "
                     "%.3g + %.3g*|ref| (max abs err %.4g, first at batch %lld row %lld col %lld)",
                     (unsigned long long)h.n_bad, out->atol, out->rtol, h.max_abs_err, bi, i, j);
        }
    }
    return TB_OK;
}
