/* roofline.c - arithmetic intensity, achieved bandwidth and roofline position (see roofline.h).
 *
 * Owns the formulas and nothing else: its callers read the store and print.
 *   intensity  = flops / (read + write bytes)                        FLOP/byte
 *   bandwidth  = (read + write bytes) / median time                  GB/s
 *   achieved   = flops / median time                                 TFLOP/s
 *   attainable = min(gemm ceiling, intensity * dram ceiling / 1000)  TFLOP/s
 *   position   = achieved / attainable; memory-bound when the second term is the smaller.
 *   compulsory = (m*k*|A| + k*n*|B| + m*n*|D| (+ m*n*|C| when beta != 0)) * batch   bytes
 *                (an attention problem: its op's FLOP and compulsory bytes, op_attention.h)
 *                with |X| the width of X's type (bf16 2, e4m3 1); its intensity flops / it
 *                is the most any kernel can have, and below the ridge every kernel is
 *                memory-bound.
 * The gemm ceiling is the calibration's FP8 one for a problem with E4M3 A and B.
 * Worked example (tests/test_roofline.c, roofline-1.1): 1e9 FLOP over 1e8 bytes is 10
 * FLOP/byte; against 3000 GB/s and 700 TFLOP/s the roof there is 30 TFLOP/s (memory-bound);
 * at 0.05 ms the kernel reaches 20 TFLOP/s and 2000 GB/s: position 0.667.
 */
#include "report/roofline.h"
#include "common/peak.h"
#include "common/problem.h"
#include "common/op_attention.h"
#include "common/tb.h"
#include <math.h>
#include <string.h>

static double metric(const tb_metric *m, size_t nm, const char *name)
{
    for (size_t i = 0; i < nm; i++)
        if (strcmp(m[i].name, name) == 0)
            return m[i].available && isfinite(m[i].value) ? m[i].value : NAN;
    return NAN;
}

void tb_roofline_inputs(const tb_result_row *r, const tb_metric *m, size_t nm,
                        const tb_calibration *cal, tb_roofline_in *in)
{
    const tb_problem_info *p = &r->p;
    in->flops = 2.0 * (double)p->m * (double)p->n * (double)p->k * (double)(p->batch > 0 ? p->batch : 1);
    if (tb_problem_info_is_attention(p)) {   /* the op's own counts (common/op_attention.c) */
        tb_problem ap;
        char why[TB_MSG_LEN];
        double rd = NAN, wr = NAN;
        int ok = tb_problem_info_attention_abi(p, &ap, why, sizeof why) == TB_OK;
        in->flops = ok ? tb_op_attention_fwd.flops(&ap) : NAN;
        in->min_bytes = ok && tb_op_attention_fwd.bytes(&ap, &rd, &wr) == TB_OK ? rd + wr : NAN;
    }
    in->read_bytes = metric(m, nm, TB_ROOFLINE_READ);
    in->write_bytes = metric(m, nm, TB_ROOFLINE_WRITE);
    in->median_ms = r->m.median_ms;
    in->fp8 = tb_dtypes_fp8(p->dtypes);
    in->ceil_tflops = !cal ? NAN : !in->fp8 ? cal->gemm_tflops
                      : cal->fp8_tflops > 0 ? cal->fp8_tflops : NAN;
    in->ceil_dram_gbps = cal ? cal->dram_gbps : NAN;
    if (tb_problem_info_is_attention(p)) return;
    const double a = tb_dtypes_elem_bytes(p->dtypes, 0), b = tb_dtypes_elem_bytes(p->dtypes, 1);
    const double c = tb_dtypes_elem_bytes(p->dtypes, 2), d = tb_dtypes_elem_bytes(p->dtypes, 3);
    const double mm = (double)p->m, nn = (double)p->n, kk = (double)p->k;
    double per = mm * kk * a + kk * nn * b + mm * nn * d + (p->beta != 0 ? mm * nn * c : 0);
    in->min_bytes = a > 0 && b > 0 && d > 0 && (p->beta == 0 || c > 0)
                    ? per * (double)(p->batch > 0 ? p->batch : 1) : NAN;
}

static int known(double v)
{
    return isfinite(v) && v >= 0;
}

int tb_roofline_compute(const tb_roofline_in *in, tb_roofline *out, char *msg, size_t len)
{
    out->bytes = out->intensity = out->dram_gbps = out->tflops = NAN;
    out->attainable_tflops = out->position = out->ridge = NAN;
    out->have_roof = 0;
    out->bound = out->min_bound = "";
    out->min_bytes = out->min_intensity = NAN;
    int ceilings = isfinite(in->ceil_tflops) && in->ceil_tflops > 0 &&
                   isfinite(in->ceil_dram_gbps) && in->ceil_dram_gbps > 0;
    if (isfinite(in->min_bytes) && in->min_bytes > 0 && isfinite(in->flops) && in->flops > 0) {
        out->min_bytes = in->min_bytes;
        out->min_intensity = in->flops / in->min_bytes;
        if (ceilings)
            out->min_bound = out->min_intensity * in->ceil_dram_gbps / 1000.0 < in->ceil_tflops
                             ? "memory" : "compute";
    }
    if (!known(in->read_bytes) && !known(in->write_bytes))
        return tb_fail(msg, len, TB_EUSAGE, "no DRAM traffic: %s and %s were not collected",
                       TB_ROOFLINE_READ, TB_ROOFLINE_WRITE);
    if (!known(in->read_bytes))
        return tb_fail(msg, len, TB_EUSAGE, "no DRAM traffic: %s was not collected", TB_ROOFLINE_READ);
    if (!known(in->write_bytes))
        return tb_fail(msg, len, TB_EUSAGE, "no DRAM traffic: %s was not collected", TB_ROOFLINE_WRITE);
    double bytes = in->read_bytes + in->write_bytes;
    if (!(bytes > 0))
        return tb_fail(msg, len, TB_EUSAGE, "no DRAM traffic: the counters read 0 bytes");
    if (!(isfinite(in->flops) && in->flops > 0))
        return tb_fail(msg, len, TB_EUSAGE, "no FLOP count: the problem has no size");
    out->bytes = bytes;
    out->intensity = in->flops / bytes;
    if (isfinite(in->median_ms) && in->median_ms > 0) {
        double s = in->median_ms * 1e-3;
        out->dram_gbps = bytes / s / 1e9;
        out->tflops = in->flops / s / 1e12;
    }
    if (ceilings && isfinite(out->tflops)) {
        double mem = out->intensity * in->ceil_dram_gbps / 1000.0;
        out->have_roof = 1;
        out->bound = mem < in->ceil_tflops ? "memory" : "compute";
        out->attainable_tflops = mem < in->ceil_tflops ? mem : in->ceil_tflops;
        out->position = out->tflops / out->attainable_tflops;
        out->ridge = in->ceil_tflops * 1000.0 / in->ceil_dram_gbps;
    }
    return TB_OK;
}
