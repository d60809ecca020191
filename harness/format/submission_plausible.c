/* submission_plausible.c - what a leaderboard checks of a parsed submission beyond its grammar
 * (see submission_parse.h, tb_submission_plausible): no timed result's rate, recomputed from its
 * shape's work (its op's FLOP count, common/op.h) and its median, above the GPU's dense peak of
 * its operand types at the clock it reports, and no SM count or clock beyond what any GPU of its
 * generation has. */
#include "format/submission_parse.h"
#include "common/peak.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most SMs and the highest SM clock of any GPU of a generation: the full die, and the
 * highest boost clock shipped with a margin for factory-overclocked boards. The peak a figure is
 * checked against grows with both, and both come from the document: a claim beyond these would
 * raise its own ceiling. Only generations common/peak.h knows are listed. */
static const struct { int major, minor, max_sms, max_mhz; } generation[] = {
    { 9, 0, 144, 2100 },   /* GH100: 144 SMs on the full die (H100 SXM and H200: 132); boost 1980 MHz */
    { 8, 0, 128, 1600 },   /* GA100: 128 (A100: 108); boost 1410 MHz */
    { 8, 6,  84, 2300 },   /* GA102: 84 (RTX 3090 Ti, A40); boost 1860 MHz, more on overclocked boards */
    { 8, 7,  16, 1500 },   /* GA10B (Jetson AGX Orin): 16; 1300 MHz */
    { 8, 9, 144, 3300 },   /* AD102: 144 (L40S: 142, RTX 4090: 128); boost 2520 MHz, ~3 GHz overclocked */
};

int tb_submission_plausible(const tb_submission *s, int allow_unknown, char *msg, size_t msglen)
{
    /* MAJOR.MINOR (checked by the parser), each clamped: a 15-digit number must not overflow */
    char *dot = NULL;
    long major = strtol(s->compute_capability, &dot, 10), minor = dot && *dot == '.' ? strtol(dot + 1, NULL, 10) : 0;
    if (major < 0 || major > 1000 || minor < 0 || minor > 1000) major = minor = 0;
    double fpc = tb_peak_flop_per_clk_sm((int)major, (int)minor);
    int max_sms = 0, max_mhz = 0;
    for (size_t g = 0; g < sizeof generation / sizeof generation[0]; g++)
        if (generation[g].major == major && generation[g].minor == minor) {
            max_sms = generation[g].max_sms;
            max_mhz = generation[g].max_mhz;
        }
    int known = fpc > 0 && max_sms > 0;
    if (known && s->sm_count > max_sms) {
        snprintf(msg, msglen, "environment.sm_count: %lld SMs, more than any GPU of compute capability %s has (%d)",
                 (long long)s->sm_count, s->compute_capability, max_sms);
        return -1;
    }
    int check = known && s->sm_count > 0;
    if (!check && !allow_unknown) {
        snprintf(msg, msglen, "no known peak for GPU '%s' (compute capability %s, %lld SMs): its rates cannot be "
                 "checked", s->gpu_name, s->compute_capability, (long long)s->sm_count);
        return -1;
    }
    for (size_t i = 0; i < s->n; i++) {
        const tb_sub_result *r = &s->r[i];
        if (!r->timed) continue;
        if (!(r->clock_mhz > 0)) {
            snprintf(msg, msglen, "results[%zu]: a timed result without its SM clock", i);
            return -1;
        }
        if (known && r->clock_mhz > max_mhz) {
            snprintf(msg, msglen, "results[%zu]: an SM clock of %.0f MHz, above what any GPU of compute capability %s "
                     "runs at (%d MHz)", i, r->clock_mhz, s->compute_capability, max_mhz);
            return -1;
        }
        if (!check) continue;
        double tflops = tb_sub_result_flops(r) / (r->median_ms * 1e-3) / 1e12;
        /* the peak of the result's operand types: FP8 (E4M3 A and B) twice BF16 where the
         * tensor cores take FP8; on a GPU without them an FP8 GEMM can at best run at the
         * BF16 rate (its operands widened), so that is its bound */
        const int fp8 = tb_dtypes_fp8(r->dtypes);
        double fpc_r = tb_peak_flop_per_clk_sm_dtypes((int)major, (int)minor, r->dtypes);
        const int widened = !(fpc_r > 0);
        if (widened) fpc_r = fpc;
        double peak = fpc_r * (double)s->sm_count * r->clock_mhz * 1e6 / 1e12;
        if (tflops > peak * 1.02) {
            snprintf(msg, msglen, "results[%zu]: %.1f TFLOP/s (from its shape and median) is above the "
                     "GPU's dense %s peak of %.1f TFLOP/s at the %.0f MHz it reports%s", i, tflops,
                     fp8 && !widened ? "FP8" : "BF16", peak, r->clock_mhz,
                     fp8 && widened ? " (an FP8 result, held to the BF16 peak: this compute "
                                      "capability has no FP8 tensor cores)" : "");
            return -1;
        }
    }
    return 0;
}
