/* tbdev_attn.h - the attention rule's sums on the GPU, behind a C interface (tbdev_attn.cu).
 *
 * Owns: the kernels that walk a variant's O and LSE beside the FP32 reference where they lie
 * (no copy to the host) and reduce them to what worker/rule_attention.c needs to name a
 * verdict: the elementwise counts, first indices and maxima, and per (batch, head) the squared
 * error and reference norms and whether the head holds a bad or non-finite element; and the
 * largest squared row norm of a strided Q or K (the rule's bound on the scores). The rule's
 * arithmetic is rule_attention.c's (the host function stays its specification, and
 * tests/test_attn_rule_device.cu holds the two to each other); these only move it to where
 * the data is, which made the check the largest part of an attention sweep (docs/perf.md,
 * sixteenth session: 96 % of the sweep's time was validation and checks).
 * Every function enqueues on the given stream and returns a cudaError_t as int (0 = success);
 * only tbdev_attn_rule_read synchronises.
 */
#ifndef TB_DEVICE_TBDEV_ATTN_H
#define TB_DEVICE_TBDEV_ATTN_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TBDEV_ATTN_NONE (~(unsigned long long)0)   /* "no such index" */

/* What the kernels reduce one tensor to (indices as rule_attention.h's: O [B][H][Sq][D], LSE
 * [B][H][Sq], contiguous numbering whatever the strides): bad elements (the non-finite ones
 * included), non-finite ones, the first of each, the first non-finite element of the
 * reference (TBDEV_ATTN_NONE when none), the largest error and error / allowance over the
 * finite elements. */
typedef struct tbdev_attn_part {
    unsigned long long n_bad, n_nonfinite, first_bad, first_nonfinite, ref_first;
    double max_abs_err, max_ratio;
} tbdev_attn_part;

typedef struct tbdev_attn_sums {
    tbdev_attn_part o, lse;
} tbdev_attn_sums;

/* Bytes of device workspace the rule needs for `heads` (batch x heads) heads. */
size_t tbdev_attn_rule_ws_bytes(uint64_t heads);

/* Zero the workspace's sums (the first indices to TBDEV_ATTN_NONE). */
int tbdev_attn_rule_reset(void *ws, uint64_t heads, cudaStream_t s);

/* O: o_ref FP32 contiguous [B][H][Sq][D]; o BF16 bits with strides o_stride (batch, head, row;
 * elements, D contiguous). Per row i of head h: atol = o_atol * rms(o_ref row) (2^-24 for an
 * all-zero row), an element is bad when non-finite or |o - ref| > atol + o_rtol * |ref|; the
 * head's squared error and reference sums take its finite elements (rule_attention.c). */
int tbdev_attn_rule_o(const float *o_ref, const uint16_t *o, const int64_t o_stride[3],
                      int64_t batch, int64_t heads, int64_t seq_q, int64_t head_dim,
                      double o_atol, double o_rtol, void *ws, cudaStream_t s);

/* LSE: lse_ref FP32 contiguous [B][H][Sq]; lse FP32 with strides lse_stride (batch, head; rows
 * contiguous). Bad when non-finite or |lse - ref| > lse_atol + lse_rtol * |ref|. */
int tbdev_attn_rule_lse(const float *lse_ref, const float *lse, const int64_t lse_stride[2],
                        int64_t batch, int64_t heads, int64_t seq_q, double lse_atol,
                        double lse_rtol, void *ws, cudaStream_t s);

/* Copy the sums back and synchronise: *sums, and per head (heads of them) the squared error
 * and reference sums and flags (bit 0: a bad element, bit 1: a non-finite one). Any of the
 * three arrays may be NULL. */
int tbdev_attn_rule_read(const void *ws, uint64_t heads, tbdev_attn_sums *sums, double *h_err,
                         double *h_ref, uint32_t *h_flags, cudaStream_t s);

/* The largest squared L2 norm over the rows of x, BF16 bits laid out [n0][n1][n2][d] with
 * strides st (elements; d contiguous), in double, into *out (device memory, one double);
 * a non-finite element makes it +Inf. */
int tbdev_row_norm2_max(const uint16_t *x, const int64_t st[3], int64_t n0, int64_t n1,
                        int64_t n2, int64_t d, double *out, cudaStream_t s);

#ifdef __cplusplus
}
#endif
#endif
