/* tbdev.h - the harness's own kernels, behind a C interface (implemented in tbdev.cu).
 *
 * Owns: input generation (a counter-based hash, so any element is reproducible from
 * (seed, index) alone), output poisoning, the L2 flush by reading, the GEMM output
 * comparison, the SM-clock stamps, and BF16 <-> FP32 conversion. Every function enqueues on
 * the given stream and returns a cudaError_t as int (0 = cudaSuccess); none synchronises
 * unless it says so.
 */
#ifndef TB_DEVICE_TBDEV_H
#define TB_DEVICE_TBDEV_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_init_dist {
    TB_INIT_UNIFORM = 0,    /* uniform on [-1, 1), then rounded to bf16 */
    TB_INIT_NORMAL = 1      /* standard normal (Box-Muller on two hashed uniforms) */
} tb_init_dist;

/* Fill n bf16 elements at dst with values drawn from dist, element i a pure function of
 * (seed, i). Never produces zeros-only data; exact zeros are as rare as the distribution
 * makes them. */
int tbdev_fill_bf16(void *dst, size_t n, uint64_t seed, tb_init_dist dist, cudaStream_t s);

/* Fill n bf16 elements at dst with x_i + offset rounded once to bf16, x_i the value
 * tbdev_fill_bf16 draws for (seed, i, dist): the attention rule's large-logits inputs. */
int tbdev_fill_bf16_offset(void *dst, size_t n, uint64_t seed, tb_init_dist dist, float offset,
                           cudaStream_t s);

/* Fill n E4M3 bytes at dst: element i is x_i / scale rounded to the nearest E4M3 (saturating
 * at +-448, never NaN), x_i the value tbdev_fill_bf16 draws for (seed, i, dist); so the bits
 * stand for scale * decode(bits), x_i to within E4M3's 2^-4 relative rounding (zeros only
 * where |x_i / scale| < 2^-10). scale must be > 0 (else cudaErrorInvalidValue, nothing
 * enqueued). */
int tbdev_fill_e4m3(void *dst, size_t n, uint64_t seed, tb_init_dist dist, float scale,
                    cudaStream_t s);

/* Fill n bf16 elements with the 16-bit pattern `bits` (0x7FC1 is a quiet NaN: the poison). */
int tbdev_fill_u16(void *dst, size_t n, uint16_t bits, cudaStream_t s);

/* dst[i] = float(src[i]) for n bf16 elements (C into the FP32 reference's accumulator). */
int tbdev_bf16_to_f32(float *dst, const void *src, size_t n, cudaStream_t s);

/* Read every byte of buf (bytes >= 2 x L2, a multiple of 16) and fold it into *sink, so
 * the compiler cannot drop the loads: evicts whatever the L2 held; dirty lines are written
 * back during the flush, not during the next kernel (tests/test_counters.cu, counters-6.2). */
int tbdev_l2_flush(void *buf, size_t bytes, unsigned *sink, cudaStream_t s);

/* Compare a bf16 matrix D (m x n, row or col layout with ld, batch with stride) against an
 * FP32 reference laid out the same way with ld_ref/stride_ref. Per element:
 *   bad if !isfinite(d) or |d - r| > atol + rtol * |r|.
 * Accumulates into out (device memory, zeroed by this call): see tb_cmp_result. */
typedef struct tb_cmp_result {
    unsigned long long n_bad;        /* elements failing the rule (non-finite included) */
    unsigned long long n_nonfinite;  /* NaN or Inf in D (the poison is NaN) */
    unsigned long long first_bad;    /* linear index of the smallest failing element, or ~0 */
    double max_abs_err;              /* over finite elements */
    double sum_sq_err;               /* sum (d - r)^2 over finite elements */
    double sum_sq_ref;               /* sum r^2 */
} tb_cmp_result;

int tbdev_compare_bf16_f32(const void *d, const float *ref, int64_t m, int64_t n,
                           int64_t batch, int d_col, int64_t ldd, int64_t stride_d,
                           int ref_col, int64_t ld_ref, int64_t stride_ref,
                           double atol, double rtol, tb_cmp_result *out_dev, cudaStream_t s);

/* Count the 16-bit elements of buf[0..n) that differ from bits into *count_dev (device
 * memory, zeroed by this call): the guard bands around D are checked this way. */
int tbdev_count_ne_u16(const void *buf, size_t n, uint16_t bits, unsigned long long *count_dev,
                       cudaStream_t s);

/* An order-dependent 64-bit checksum of bytes (a multiple of 8) at buf into *sum_dev (device
 * memory, zeroed by this call): inputs are checksummed before and after a launch. */
int tbdev_checksum(const void *buf, size_t bytes, unsigned long long *sum_dev, cudaStream_t s);

/* Compare two FP32 matrices of count elements (the two references against each other):
 * out as for tbdev_compare_bf16_f32, over flat arrays. */
int tbdev_compare_f32_f32(const float *x, const float *ref, size_t count, double atol, double rtol,
                          tb_cmp_result *out_dev, cudaStream_t s);

/* The blocking kernel (nvbench's idea, written here): one thread spins until *flag (host-mapped
 * memory) becomes non-zero or timeout_ns of %globaltimer pass; on a timeout it sets
 * *timed_out (device memory). Work queued behind it on the stream starts back to back when the
 * host releases the flag, so host launch latency stays out of the events around it. */
int tbdev_block(volatile int *flag, unsigned long long timeout_ns, int *timed_out, cudaStream_t s);

/* A kernel that does nothing: the baseline of the hidden-work check. */
int tbdev_noop(cudaStream_t s);

/* SM clock stamps: `blocks` one-thread blocks (twice the SM count covers every SM in
 * practice) each write {smid, %globaltimer ns, clock64} to out_dev[3i..3i+2], the clock read
 * right after a tick edge of the timer. Two stamps around a piece of work give every SM's
 * clock over that work: a probe run after the work instead reads the clock of a nearly idle
 * GPU, which on the H100 ran 10 % faster than during a GEMM load (tests/test_clock.cu). */
int tbdev_clock_stamp(unsigned long long *out_dev, int blocks, cudaStream_t s);

/* The blocks a stamp takes on the current device: twice its SM count (at least 2). */
int tbdev_clock_stamp_blocks(void);

/* Host side: the median over SMs stamped in both a (before) and b (after) of each SM's
 * clock64 cycles per %globaltimer microsecond, in MHz; *n_sm (may be NULL) gets how many SMs
 * it took. NAN when no SM is in both. */
double tbdev_stamps_mhz(const unsigned long long *a, const unsigned long long *b, int blocks,
                        int *n_sm);

#ifdef __cplusplus
}
#endif
#endif
