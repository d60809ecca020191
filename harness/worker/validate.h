/* validate.h - is a variant's output right. Owns the rules, their constants, and the steps of
 * one validation trial: fresh seeded inputs, poisoned output inside canary guard bands, the
 * reference (cross-checked by the second reference on small shapes), the comparison, the
 * guard bands, the input checksums; and the list of its device buffers (tb_validate_free).
 * Knows nothing of SQLite or of timing.
 *
 * Rules, in the order they are reported (the first that fails names the verdict):
 *   guard        a write outside D: the guard bands before and after D changed
 *   inputs       A, B or C changed across the launch (inputs are const)
 *   nonfinite    an element of D is NaN/Inf, or was never written (the poison is NaN)
 *   elementwise  |d - ref| > atol + rtol * |ref|, with (derived in docs/method.md)
 *                rtol = 2^-7, atol = 2^-8 * |alpha| * rms(A) * rms(B) * sqrt(K), the rms of
 *                the values A and B stand for (an FP8 element: scale * decode(bits)); the
 *                same constants for BF16 and E4M3 operands ("The rule" and "FP8 problems")
 * The worker prefixes "after-timing/" when the trial that failed ran after the timing.
 */
#ifndef TB_VALIDATE_H
#define TB_VALIDATE_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>
#include "tilebench/variant.h"
#include "device/tbdev.h"
#include "reference/ref.h"

#define TB_POISON_BF16 0x7FC1u   /* a quiet NaN */
#define TB_CANARY_BF16 0x5A5Au   /* a finite value no GEMM of these inputs writes by chance */
/* shapes up to this many multiply-adds get both references, cross-checked */
#define TB_CROSSCHECK_MAX_MNK (2048.0 * 2048.0 * 2048.0)

typedef struct tb_val_bufs {
    void   *a, *b, *c, *d;        /* device buffers of the problem; d sits inside d_base */
    size_t  na, nb, nc, nd;       /* their sizes in elements */
    tb_dtype in_type[3];          /* A, B, C: TB_DTYPE_BF16, or TB_DTYPE_E4M3 for A and B */
    size_t  esz[3];               /* their bytes per element (2 or 1) */
    float   scale[2];             /* A's and B's per-tensor scales (variant.h, growth 1); 1 for
                                     bf16 */
    void   *d_base;               /* guard | d | guard */
    size_t  guard;                /* elements in each guard band */
    float  *d_ref, *d_ref2;       /* m * n * batch floats each, row-major; d_ref2 may be NULL */
    tb_cmp_result *cmp_dev;       /* one device tb_cmp_result */
    unsigned long long *scratch;  /* 4 device words */
    unsigned long long sum_in[3]; /* checksums of A, B, C taken by prepare */
    /* attention (worker/op_worker_attention.c): a, b, c, d are Q, K, V, O; the rest is NULL
     * and 0 for a GEMM. LSE sits between guard bands of lse_guard floats in lse_base (the
     * canary's 16-bit pattern twice a float); d_ref holds O_ref [B][H][Sq][D], d_ref2 the
     * second reference's O (small shapes) */
    void   *lse, *lse_base;       /* FP32 */
    size_t  nlse, lse_guard;      /* in floats */
    float  *lse_ref, *lse_ref2;   /* [B][H][Sq] */
    void   *ref_ws;               /* the cuBLASLt attention reference's workspace */
    size_t  ref_ws_bytes;
    double  qk_bound;             /* the rule's S for the inputs prepare drew */
    void   *rule_ws;              /* the attention rule's sums on the device (device/tbdev_attn.h) */
    double *norm_dev;             /* two device doubles: Q's and K's largest squared row norms */
} tb_val_bufs;

typedef struct tb_val_result {
    int      passed;
    char     rule[64];            /* see above; "" when passed */
    char     reason[256];
    uint64_t n_bad, n_nonfinite, first_bad, guard_bad;
    double   max_abs_err, rel_fro_err, atol, rtol;
} tb_val_result;

/* Free every device buffer of b (the GEMM's and attention's alike: the list lives here, beside
 * the struct, so that a buffer added to it is freed where it is declared) and zero b. The
 * caller synchronises first; a NULL pointer is skipped. */
void tb_validate_free(tb_val_bufs *b);

/* The rule's constants for a problem whose inputs come from dist. */
void tb_validate_tolerance(const tb_gemm *g, tb_init_dist dist, double *atol, double *rtol);

/* The input types and scales of b for the problem (g, scales): in_type, esz, scale. TB_OK, or
 * TB_EUSAGE when A or B is of a type the harness cannot draw (only bf16 and e4m3 are; C is
 * bf16). Touches no device memory. */
int tb_validate_types(tb_val_bufs *b, const tb_gemm *g, const tb_gemm_scales *scales,
                      char *msg, size_t len);

/* Fill n elements of input `which` (0 A, 1 B, 2 C, typed as b says) at dst from (seed, dist):
 * a bf16 input gets tbdev_fill_bf16's values, an e4m3 one x / scale rounded to E4M3
 * (tbdev_fill_e4m3), so that it stands for about x. Returns a cudaError_t as int. */
int tb_validate_fill(const tb_val_bufs *b, int which, void *dst, size_t n, uint64_t seed,
                     tb_init_dist dist, cudaStream_t s);

/* Step 1 of a trial: fresh inputs from seed, D poisoned and its guard bands set, the inputs
 * checksummed, the reference computed into d_ref (cuBLASLt, or the naive kernel when
 * use_naive); on shapes up to TB_CROSSCHECK_MAX_MNK with d_ref2 present, the other reference
 * too, and the two compared: TB_EINTERNAL "references disagree" if they do (a harness or
 * library fault, never blamed on the variant). Synchronises at the end. */
int tb_validate_prepare(tb_ref *ref, const tb_gemm *g, tb_val_bufs *b, uint64_t seed,
                        tb_init_dist dist, int use_naive, int crosscheck, cudaStream_t s,
                        char *msg, size_t len);

/* Re-poison D (and LSE, for attention) and reset the guards without touching the inputs or
 * the reference. */
int tb_validate_repoison(const tb_val_bufs *b, cudaStream_t s, char *msg, size_t len);

/* Step 3 (after the caller launched the variant and synchronised): guards, input checksums,
 * then D against d_ref. */
int tb_validate_check(const tb_gemm *g, const tb_val_bufs *b, tb_init_dist dist,
                      cudaStream_t s, tb_val_result *out, char *msg, size_t len);

/* The inputs' checksums now (A, B, C; C's is 0 when there is no C). */
int tb_validate_checksums(const tb_val_bufs *b, cudaStream_t s, unsigned long long out[3],
                          char *msg, size_t len);
#endif
