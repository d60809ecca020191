/* roofline.h - the figures derived from a measurement's DRAM counters: arithmetic intensity,
 * achieved DRAM bandwidth and, against the ceilings measured by `tilebench doctor
 * --calibrate`, the measurement's position under the roofline; and from the problem alone its
 * compulsory DRAM traffic (each operand at its type's width: E4M3 A and B one byte an
 * element) and the intensity that gives.
 *
 * The tensor ceiling is the one of the problem's operand types: an FP8 problem (dtypes
 * "e4m3,e4m3,...") is placed under the calibration's FP8 ceiling, never the BF16 one (FP8 runs
 * at twice the BF16 rate on sm_90, common/peak.h), and gets no roof from a calibration made
 * without an FP8 ceiling.
 *
 * Pure arithmetic: no I/O, no SQL, no CUDA. show.c and export.c call it with what they read
 * from the store, so the two print the same numbers. docs/counters.md ("Roofline") gives the
 * formulas.
 */
#ifndef TB_ROOFLINE_H
#define TB_ROOFLINE_H

#include <stddef.h>
#include "store/store.h"

/* The metric names the derived figures read. */
#define TB_ROOFLINE_READ "dram__bytes_read.sum"
#define TB_ROOFLINE_WRITE "dram__bytes_write.sum"

/* Inputs; NaN (or <= 0) where unknown. */
typedef struct tb_roofline_in {
    double flops;            /* 2 * m * n * k * batch; attention: its op's count */
    double read_bytes;       /* dram__bytes_read.sum */
    double write_bytes;      /* dram__bytes_write.sum */
    double median_ms;        /* the measurement's median time */
    double ceil_tflops;      /* calibration: the GEMM ceiling, TFLOP/s */
    double ceil_dram_gbps;   /* calibration: the DRAM ceiling, GB/s */
    double min_bytes;        /* compulsory DRAM traffic: A and B read once, D written once, C
                                read once when beta != 0, each at its type's width, x batch */
    int    fp8;              /* 1: E4M3 A and B: ceil_tflops is the calibration's FP8 ceiling */
} tb_roofline_in;

typedef struct tb_roofline {
    double bytes;            /* read + write */
    double intensity;        /* FLOP per DRAM byte */
    double dram_gbps;        /* achieved: bytes / median time (NaN without a time) */
    double tflops;           /* achieved: flops / median time (NaN without a time) */
    int    have_roof;        /* 1: the four below are set; 0: NaN and "" */
    double attainable_tflops;/* min(ceil_tflops, intensity * ceil_dram_gbps / 1000) */
    double position;         /* tflops / attainable_tflops (0.8 = 80 % of the roof) */
    double ridge;            /* intensity where the ceilings meet: ceil_tflops * 1000 / ceil_dram_gbps */
    const char *bound;       /* "memory" or "compute": the ceiling that binds at this intensity */
    double min_bytes;        /* in->min_bytes (NaN unknown) */
    double min_intensity;    /* flops / min_bytes: the highest intensity any kernel of the
                                problem can have (NaN unknown) */
    const char *min_bound;   /* "memory" when even that intensity is below the ridge (every
                                kernel of the problem is DRAM-bound), "compute" at or above it,
                                "" without both ceilings or min_intensity */
} tb_roofline;

/* Fill in from a stored measurement: FLOPs and the compulsory bytes from its problem (NaN when
 * an operand's type is unknown, common/peak.h), the DRAM bytes from its metrics (only those
 * available; NaN otherwise), its median time, and the ceilings of cal (NULL: no calibration,
 * ceilings NaN): for an FP8 problem the tensor ceiling is cal's FP8 one, NaN when cal has
 * none. Cannot fail. */
void tb_roofline_inputs(const tb_result_row *r, const tb_metric *m, size_t nm,
                        const tb_calibration *cal, tb_roofline_in *in);

/* Derive the figures of in into out. out->min_bytes, min_intensity and min_bound are set
 * whenever flops, min_bytes and (for min_bound) both ceilings are known, whatever the rest.
 * Returns TB_OK when the intensity could be derived (flops > 0, both byte counts known and
 * their sum > 0); then out->dram_gbps and out->tflops are NaN without a positive median, and
 * out->have_roof is 1 only when a time and both ceilings (> 0) are known. Otherwise
 * TB_EUSAGE with msg naming what is missing, e.g. "no DRAM traffic: dram__bytes_write.sum
 * was not collected", and out's other figures NaN, 0 and "". Never allocates. */
int tb_roofline_compute(const tb_roofline_in *in, tb_roofline *out, char *msg, size_t len);

#endif
