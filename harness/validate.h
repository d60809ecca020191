/* validate.h - is a variant's output right. Owns the rule, its constants, and the steps of
 * one validation trial: fresh seeded inputs, poisoned output, the reference, the launch,
 * the comparison. Knows nothing of SQLite or of timing.
 *
 * The rule (derived in docs/method.md): an element of D passes when it is finite and
 *     |d - ref| <= atol + rtol * |ref|,   rtol = 2^-7,
 *     atol = 2^-8 * |alpha| * rms(A) * rms(B) * sqrt(K)
 * i.e. one bf16 ulp relative, plus half an ulp of a typical output element in absolute
 * terms for elements near zero. Any NaN or Inf fails (the poison is NaN: an element never
 * written fails as non-finite).
 */
#ifndef TB_VALIDATE_H
#define TB_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "tilebench/variant.h"
#include "device/tbdev.h"
#include "../reference/ref.h"

#define TB_POISON_BF16 0x7FC1u   /* a quiet NaN */

typedef struct tb_val_bufs {
    void   *a, *b, *c, *d;        /* device buffers of the problem */
    size_t  na, nb, nc, nd;       /* their sizes in elements */
    float  *d_ref;                /* m * n * batch floats, row-major */
    tb_cmp_result *cmp_dev;       /* one device tb_cmp_result */
} tb_val_bufs;

typedef struct tb_val_result {
    int      passed;
    char     rule[64];            /* "nonfinite" | "elementwise" | "" when passed */
    char     reason[256];
    uint64_t n_bad, n_nonfinite, first_bad;
    double   max_abs_err, rel_fro_err, atol, rtol;
} tb_val_result;

/* The rule's constants for a problem whose inputs come from dist. */
void tb_validate_tolerance(const tb_gemm *g, tb_init_dist dist, double *atol, double *rtol);

/* Step 1 of a trial: fresh inputs from seed, D poisoned, reference computed into d_ref
 * (cuBLASLt, or the naive kernel when use_naive). Enqueued on s; synchronises at the end so
 * a reference failure is not blamed on the variant. */
int tb_validate_prepare(tb_ref *ref, const tb_gemm *g, const tb_val_bufs *b, uint64_t seed,
                        tb_init_dist dist, int use_naive, cudaStream_t s, char *msg, size_t len);

/* Step 3 (after the caller launched the variant and synchronised): compare D to d_ref. */
int tb_validate_check(const tb_gemm *g, const tb_val_bufs *b, tb_init_dist dist,
                      cudaStream_t s, tb_val_result *out, char *msg, size_t len);
#endif
