/* rule_attention.h - the attention forward rule (docs/method.md, "Attention: the rule"): is a
 * variant's O (BF16) and LSE (FP32) what a correct FP32-accumulating kernel may write, given
 * the FP32 reference of the same inputs. Owns the rule's constants, the check itself (a pure
 * host function: no CUDA, no I/O), its verdict and one-line reason, and the two input
 * distributions of the trials (their parameters; the drawing is the worker's). The worker
 * gathers O and LSE into the contiguous layouts below before calling it (wiring: not here).
 *
 * Per element of O (BF16), with rho = the rms of the reference's row (its D elements):
 *     finite, and |o - ref| <= TB_ATTN_O_ATOL * rho + TB_ATTN_O_RTOL * |ref|
 * per (batch, head) of O:
 *     ||o - ref||_F <= TB_ATTN_HEAD_RTOL * ||ref||_F
 * per element of LSE (FP32):
 *     finite, and |lse - ref| <= TB_ATTN_LSE_ATOL + 2^-23 * D * S + TB_ATTN_LSE_RTOL * |ref|
 *     S = scale * max_i ||q_i||_2 * max_j ||k_j||_2   (tb_attn_rule_qk_bound)
 * Rules, in the order they are reported (the first that fails names the verdict):
 *   nonfinite      an element of O is NaN/Inf or was never written (the poison is NaN)
 *   lse-nonfinite  an element of LSE is NaN/Inf or was never written
 *   elementwise    an element of O outside its allowance
 *   head           a (batch, head) of O whose Frobenius error passes its bound
 *   lse            an element of LSE outside its allowance
 */
#ifndef TB_RULE_ATTENTION_H
#define TB_RULE_ATTENTION_H

#include <stddef.h>
#include <stdint.h>
#include "tilebench/variant.h"

#define TB_ATTN_O_ATOL    0.015625        /* 2^-6: four half-ulps of BF16 of the row's rms */
#define TB_ATTN_O_RTOL    0.0078125       /* 2^-7: one BF16 ulp, as the GEMM rule */
#define TB_ATTN_HEAD_RTOL 0.0078125       /* 2^-7 of a head's norm */
#define TB_ATTN_LSE_ATOL  2.44140625e-4   /* 2^-12 */
#define TB_ATTN_LSE_RTOL  9.5367431640625e-7 /* 2^-20 */

/* The large-logits trial: Q = x + TB_ATTN_BIG_MU_Q, K = x + mu_k, V = x (x from --init), with
 * mu_k = TB_ATTN_BIG_LOGIT / (scale * D): every score is about TB_ATTN_BIG_LOGIT plus a
 * spread of a few units, so exp(s) overflows FP32 (past 88.7) in any kernel that does not
 * subtract the row's maximum, while the softmax itself is as spread as in the normal trial. */
#define TB_ATTN_BIG_LOGIT 96.0
#define TB_ATTN_BIG_MU_Q  1.0

typedef enum tb_attn_trial_kind {
    TB_ATTN_TRIAL_NORMAL = 0,   /* Q, K, V from --init (uniform [-1, 1) or standard normal) */
    TB_ATTN_TRIAL_BIG = 1       /* the large-logits trial above */
} tb_attn_trial_kind;

/* Which distribution trial number t (1-based) draws: even trials draw large logits, so the
 * default three (1, 2, after timing) are normal, large logits, normal. */
tb_attn_trial_kind tb_attn_trial_kind_of(int t);

/* K's mean in the large-logits trial for problem a: TB_ATTN_BIG_LOGIT / (scale * D). */
double tb_attn_big_mu_k(const tb_attention *a);

typedef struct tb_attn_verdict {
    int      passed;
    char     rule[64];             /* see above; "" when passed (sizes as tb_val_result's) */
    char     reason[256];          /* one line; the worker prefixes "trial N: " */
    /* O, elementwise (indices into [B][H][Sq][D]; first_* is ~0 when none; n_bad counts the
     * non-finite elements too, as tb_cmp_result's does) */
    uint64_t n, n_bad, n_nonfinite, first_bad, first_nonfinite;
    uint64_t heads, heads_with_bad;     /* (batch, head) pairs, and those holding a bad element */
    double   max_abs_err;               /* over finite elements */
    double   max_ratio;                 /* max |o - ref| / allowance over finite elements */
    double   rel_fro_err;               /* ||o - ref||_F / ||ref||_F over all of O */
    /* O, per head */
    uint64_t heads_norm_bad, first_head_bad;   /* b * H + h */
    double   head_max_rel, head_max_ratio;     /* the worst head's ||o - ref|| / ||ref||, / bound */
    /* LSE (indices into [B][H][Sq]; lse_bad counts the non-finite ones too) */
    uint64_t lse_n, lse_bad, lse_nonfinite, lse_first_bad, lse_first_nonfinite;
    double   lse_max_abs_err, lse_max_ratio;
    /* the constants applied */
    double   o_atol, o_rtol, head_rtol, lse_atol, lse_rtol;
} tb_attn_verdict;

/* S = scale * max ||q_i|| * max ||k_j|| over the whole problem (each row's D elements, BF16
 * bits, contiguous: q [B][H][Sq][D], k [B][Hkv][Sk][D]): a bound on every |s_ij| and on
 * scale * sum_d |q_id k_jd|, the magnitude FP32 rounds the scores at. TB_EUSAGE on a bad
 * problem, NULL arrays, or a Q or K holding NaN or Inf (no bound then). */
int tb_attn_rule_qk_bound(const tb_attention *a, const uint16_t *q, const uint16_t *k,
                          double *s, char *msg, size_t len);

/* The same S from the largest squared row norms of Q and K, found elsewhere (the device:
 * tbdev_row_norm2_max): scale * sqrt(q2) * sqrt(k2). TB_EUSAGE when not finite. */
int tb_attn_rule_qk_bound_norms(const tb_attention *a, double q2, double k2, double *s,
                                char *msg, size_t len);

/* The rule. o_ref [B][H][Sq][D] and lse_ref [B][H][Sq]: the reference, FP32 (computed in FP32
 * or better); o: the variant's O as BF16 bits and lse its LSE, contiguous in the same shapes;
 * qk_bound: S above. Fills out (every count, whichever rule fails first) and returns TB_OK,
 * TB_EUSAGE for a problem the rule does not cover (not BF16 O, FP32 LSE; a causal problem with
 * seq_q > seq_k) or NULL arrays, TB_EINTERNAL for a non-finite reference. */
int tb_attn_rule_check(const tb_attention *a, const float *o_ref, const float *lse_ref,
                       const uint16_t *o, const float *lse, double qk_bound,
                       tb_attn_verdict *out, char *msg, size_t len);

/* The same rule in two halves around sums made where the data lies (device/tbdev_attn.h; the
 * worker's check): tb_attn_rule_begin clears out and sets its sizes, constants (lse_atol from
 * qk_bound, as above) and "none" markers (TB_ATTN_NONE), with tb_attn_rule_check's refusals;
 * the caller then fills O's and LSE's counts, first indices and maxima (n_bad ... max_ratio,
 * lse_bad ... lse_max_ratio) by the definitions above, from the constants begin set;
 * tb_attn_rule_finish takes, per (batch, head), the squared error and reference sums over its
 * finite elements and flags (bit 0: a bad element, bit 1: a non-finite one), computes the
 * per-head figures and names the verdict exactly as tb_attn_rule_check does. ref_first and
 * lse_ref_first: the first non-finite element of the reference O / LSE (TB_ATTN_NONE when
 * none), TB_EINTERNAL naming it as tb_attn_rule_check would. tb_attn_rule_check is begin, the
 * host walk, finish. */
#define TB_ATTN_NONE (~(uint64_t)0)
int tb_attn_rule_begin(const tb_attention *a, double qk_bound, tb_attn_verdict *out,
                       char *msg, size_t len);
/* Between begin and finish: one tensor's figures (lse 0: O, 1: LSE) into v: bad elements (the
 * non-finite ones included), non-finite ones, the first of each, the largest error and error /
 * allowance over the finite elements. */
void tb_attn_rule_take(tb_attn_verdict *v, int lse, uint64_t n_bad, uint64_t n_nonfinite,
                       uint64_t first_bad, uint64_t first_nonfinite, double max_abs_err,
                       double max_ratio);
int tb_attn_rule_finish(const tb_attention *a, uint64_t ref_first, uint64_t lse_ref_first,
                        const double *h_err, const double *h_ref, const uint32_t *h_flags,
                        tb_attn_verdict *v, char *msg, size_t len);
#endif
