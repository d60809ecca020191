/* test_roofline.c - tests of harness/report/roofline.c: the arithmetic of intensity, bandwidth and
 * roofline position, a memory-bound and a compute-bound case worked by hand, and every
 * missing input (no counters, one counter, zero bytes, no time, no calibration); and FP8
 * problems (issue 23): their tensor ceiling, their compulsory bytes at one byte an E4M3
 * element, and which ceiling binds them (common/peak.h's dtype widths and peaks). */
#include "report/roofline.h"
#include "common/peak.h"
#include "common/tb.h"
#include "common/wire.h"
#include "tb_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

static tb_roofline_in in_of(double flops, double rd, double wr, double ms, double tf, double gbps)
{
    tb_roofline_in in;
    memset(&in, 0, sizeof in);   /* no compulsory bytes (0: unknown), not FP8 */
    in.flops = flops, in.read_bytes = rd, in.write_bytes = wr, in.median_ms = ms;
    in.ceil_tflops = tf, in.ceil_dram_gbps = gbps;
    return in;
}

static tb_metric metric(const char *name, double v, int available)
{
    tb_metric m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "%s", name);
    m.value = v;
    m.available = available;
    return m;
}

int main(void)
{
    char msg[TB_MSG_LEN];
    tb_roofline r;

    TB_CASE("roofline-1.1", "memory-bound: 10 FLOP/byte under 3000 GB/s and 700 TFLOP/s") {
        tb_roofline_in in = in_of(1e9, 6e7, 4e7, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.bytes, 1e8) && near(r.intensity, 10));
        TB_CHECK(near(r.dram_gbps, 2000) && near(r.tflops, 20));
        TB_CHECK(r.have_roof == 1);
        TB_CHECK(near(r.attainable_tflops, 30) && near(r.position, 20.0 / 30.0));
        TB_CHECK(strcmp(r.bound, "memory") == 0);
        TB_CHECK(near(r.ridge, 700.0 * 1000 / 3000));
    }

    TB_CASE("roofline-1.2", "compute-bound: a 4096^3 GEMM moving 200 MB, 0.2 ms") {
        double flops = 2.0 * 4096 * 4096 * 4096;
        tb_roofline_in in = in_of(flops, 1.5e8, 0.5e8, 0.2, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.intensity, flops / 2e8));
        TB_CHECK(near(r.tflops, flops / 0.2e-3 / 1e12));
        TB_CHECK(near(r.dram_gbps, 2e8 / 0.2e-3 / 1e9));
        TB_CHECK(r.have_roof && strcmp(r.bound, "compute") == 0);
        TB_CHECK(near(r.attainable_tflops, 700) && near(r.position, r.tflops / 700));
        TB_CHECK(r.intensity > r.ridge);
    }

    TB_CASE("roofline-1.3", "exactly at the ridge the compute ceiling binds") {
        /* ridge = 700 * 1000 / 2500 = 280 FLOP/byte */
        tb_roofline_in in = in_of(280e6, 1e6, 0, 1.0, 700, 2500);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.intensity, 280) && r.have_roof && !strcmp(r.bound, "compute"));
        TB_CHECK(near(r.attainable_tflops, 700));
    }

    TB_CASE("roofline-2.1", "no DRAM counters at all: no figures, a message naming both") {
        tb_roofline_in in = in_of(1e9, NAN, NAN, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "dram__bytes_read.sum and dram__bytes_write.sum were not collected");
        TB_CHECK(isnan(r.intensity) && isnan(r.dram_gbps) && !r.have_roof && !strcmp(r.bound, ""));
    }

    TB_CASE("roofline-2.2", "only one of the two counters: no figures, the missing one named") {
        tb_roofline_in in = in_of(1e9, 1e8, NAN, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "dram__bytes_write.sum was not collected");
        in = in_of(1e9, -1, 1e8, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "dram__bytes_read.sum was not collected");
        TB_CHECK(isnan(r.intensity));
    }

    TB_CASE("roofline-2.3", "zero bytes or no FLOPs: no intensity (no division by zero)") {
        tb_roofline_in in = in_of(1e9, 0, 0, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "read 0 bytes");
        in = in_of(0, 1e8, 1e8, 0.05, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "no FLOP count");
        TB_CHECK(isnan(r.intensity) && isnan(r.bytes));
    }

    TB_CASE("roofline-2.4", "no calibration: intensity and bandwidth, no roof") {
        tb_roofline_in in = in_of(1e9, 6e7, 4e7, 0.05, NAN, NAN);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.intensity, 10) && near(r.dram_gbps, 2000) && near(r.tflops, 20));
        TB_CHECK(!r.have_roof && isnan(r.attainable_tflops) && isnan(r.position) && !strcmp(r.bound, ""));
        in = in_of(1e9, 6e7, 4e7, 0.05, 700, 0);   /* half a calibration is none */
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK && !r.have_roof);
    }

    TB_CASE("roofline-2.5", "not timed (NaN or 0 median): intensity only") {
        tb_roofline_in in = in_of(1e9, 6e7, 4e7, NAN, 700, 3000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.intensity, 10) && isnan(r.dram_gbps) && isnan(r.tflops) && !r.have_roof);
        in.median_ms = 0;
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK && isnan(r.dram_gbps));
    }

    TB_CASE("roofline-3.1", "inputs from a stored row: FLOPs with batch, available counters only") {
        tb_result_row row;
        memset(&row, 0, sizeof row);
        tb_measurement_init(&row.m);
        row.p.m = 128, row.p.n = 256, row.p.k = 64, row.p.batch = 3;
        row.m.median_ms = 0.25;
        tb_metric m[3] = { metric("dram__bytes_write.sum", 1000, 1),
                           metric("lts__t_sector_hit_rate.pct", 80, 1),
                           metric("dram__bytes_read.sum", 3000, 1) };
        tb_calibration cal;
        memset(&cal, 0, sizeof cal);
        cal.dram_gbps = 3000, cal.gemm_tflops = 700;
        tb_roofline_in in;
        tb_roofline_inputs(&row, m, 3, &cal, &in);
        TB_CHECK(near(in.flops, 2.0 * 128 * 256 * 64 * 3));
        TB_CHECK(in.read_bytes == 3000 && in.write_bytes == 1000 && in.median_ms == 0.25);
        TB_CHECK(in.ceil_tflops == 700 && in.ceil_dram_gbps == 3000);
        tb_roofline_inputs(&row, m, 3, NULL, &in);
        TB_CHECK(isnan(in.ceil_tflops) && isnan(in.ceil_dram_gbps));
        m[2].available = 0;   /* unavailable: its value is not used */
        tb_roofline_inputs(&row, m, 3, &cal, &in);
        TB_CHECK(isnan(in.read_bytes) && in.write_bytes == 1000);
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_EUSAGE);
        tb_roofline_inputs(&row, NULL, 0, NULL, &in);
        TB_CHECK(isnan(in.read_bytes) && isnan(in.write_bytes));
    }

    TB_CASE("roofline-4.1", "dtype widths and peaks: E4M3 one byte, FP8 twice BF16 on sm_90 only") {
        const char *f8 = "e4m3,e4m3,bf16,bf16,f32", *b16 = "bf16,bf16,bf16,bf16,f32";
        TB_CHECK(tb_dtypes_elem_bytes(f8, 0) == 1 && tb_dtypes_elem_bytes(f8, 1) == 1);
        TB_CHECK(tb_dtypes_elem_bytes(f8, 2) == 2 && tb_dtypes_elem_bytes(f8, 3) == 2);
        TB_CHECK(tb_dtypes_elem_bytes(f8, 4) == 4 && tb_dtypes_elem_bytes(f8, 5) == 0);
        TB_CHECK(tb_dtypes_elem_bytes(b16, 0) == 2 && tb_dtypes_elem_bytes("int4,bf16", 0) == 0);
        TB_CHECK(tb_dtypes_elem_bytes("e4m3x,e4m3", 0) == 0 && tb_dtypes_elem_bytes(NULL, 0) == 0);
        TB_CHECK(tb_dtypes_elem_bytes("", 0) == 0 && tb_dtypes_elem_bytes(f8, -1) == 0);
        TB_CHECK(tb_dtypes_fp8(f8) && !tb_dtypes_fp8(b16) && !tb_dtypes_fp8("e4m3,bf16,bf16,bf16,f32"));
        TB_CHECK(tb_peak_flop_per_clk_sm_dtypes(9, 0, f8) == 2 * tb_peak_flop_per_clk_sm(9, 0));
        TB_CHECK(tb_peak_flop_per_clk_sm_dtypes(9, 0, b16) == tb_peak_flop_per_clk_sm(9, 0));
        TB_CHECK(tb_peak_flop_per_clk_sm_dtypes(8, 0, f8) == 0);   /* A100: no FP8 tensor cores */
    }

    /* a decode-like FP8 GEMM: 192 x 8192 x 8192, E4M3 A and B, BF16 D; ceilings DRAM 3000 GB/s,
     * BF16 700 and FP8 1300 TFLOP/s (invented): ridges 233.3 and 433.3 FLOP/byte */
    tb_result_row row;
    memset(&row, 0, sizeof row);
    tb_measurement_init(&row.m);
    row.p.m = 192, row.p.n = 8192, row.p.k = 8192, row.p.batch = 1;
    snprintf(row.p.dtypes, sizeof row.p.dtypes, "e4m3,e4m3,bf16,bf16,f32");
    const double flops8 = 2.0 * 192 * 8192 * 8192;
    const double min8 = 192.0 * 8192 * 1 + 8192.0 * 8192 * 1 + 192.0 * 8192 * 2;
    tb_calibration cal8;
    memset(&cal8, 0, sizeof cal8);
    cal8.dram_gbps = 3000, cal8.gemm_tflops = 700, cal8.fp8_tflops = 1300;

    TB_CASE("roofline-4.2", "an FP8 problem: the FP8 ceiling, compulsory bytes at 1 byte per A and B element") {
        row.m.median_ms = NAN;
        tb_roofline_in in;
        tb_roofline_inputs(&row, NULL, 0, &cal8, &in);
        TB_CHECK(in.fp8 == 1 && in.ceil_tflops == 1300 && in.ceil_dram_gbps == 3000);
        TB_CHECK(near(in.flops, flops8) && near(in.min_bytes, min8));
        /* the same shape in BF16: the BF16 ceiling, twice the A and B bytes */
        snprintf(row.p.dtypes, sizeof row.p.dtypes, "bf16,bf16,bf16,bf16,f32");
        tb_roofline_inputs(&row, NULL, 0, &cal8, &in);
        TB_CHECK(in.fp8 == 0 && in.ceil_tflops == 700);
        TB_CHECK(near(in.min_bytes, 2.0 * (192.0 * 8192 + 8192.0 * 8192 + 192.0 * 8192)));
        /* beta != 0 reads C too (BF16: 2 bytes); an unknown type: no compulsory bytes */
        snprintf(row.p.dtypes, sizeof row.p.dtypes, "e4m3,e4m3,bf16,bf16,f32");
        row.p.beta = 1;
        tb_roofline_inputs(&row, NULL, 0, &cal8, &in);
        TB_CHECK(near(in.min_bytes, min8 + 192.0 * 8192 * 2));
        row.p.beta = 0;
        snprintf(row.p.dtypes, sizeof row.p.dtypes, "e4m3,int4,bf16,bf16,f32");
        tb_roofline_inputs(&row, NULL, 0, &cal8, &in);
        TB_CHECK(isnan(in.min_bytes));
        snprintf(row.p.dtypes, sizeof row.p.dtypes, "e4m3,e4m3,bf16,bf16,f32");
    }

    TB_CASE("roofline-4.3", "an FP8 problem below the FP8 ridge is memory-bound (the BF16 ceiling would say compute)") {
        tb_roofline_in in;
        tb_roofline_inputs(&row, NULL, 0, &cal8, &in);
        in.read_bytes = min8 * 1.2, in.write_bytes = 0;   /* measured: 20 % over the compulsory */
        in.median_ms = flops8 / 250e12 * 1e3;             /* 250 TFLOP/s achieved */
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.min_bytes, min8) && near(r.min_intensity, flops8 / min8));
        TB_CHECK(r.min_intensity > 700.0 * 1000 / 3000 && r.min_intensity < 1300.0 * 1000 / 3000);
        TB_CHECK(strcmp(r.min_bound, "memory") == 0);
        TB_CHECK(near(r.intensity, flops8 / (min8 * 1.2)) && near(r.tflops, 250));
        TB_CHECK(r.have_roof && strcmp(r.bound, "memory") == 0);
        TB_CHECK(near(r.ridge, 1300.0 * 1000 / 3000));
        TB_CHECK(near(r.attainable_tflops, r.intensity * 3));
        TB_CHECK(near(r.position, 250 / (r.intensity * 3)));
        /* under the BF16 ceiling (what a dtype-blind roofline did) it would read compute-bound */
        in.ceil_tflops = 700;
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK && !strcmp(r.min_bound, "compute"));
    }

    TB_CASE("roofline-4.4", "an FP8 problem at 4096^3 is compute-bound under the FP8 ceiling") {
        tb_result_row sq = row;
        sq.p.m = sq.p.n = sq.p.k = 4096;
        tb_roofline_in in;
        tb_roofline_inputs(&sq, NULL, 0, &cal8, &in);
        in.read_bytes = 1.5e8, in.write_bytes = 0.5e8, in.median_ms = 0.12;
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(near(r.min_intensity, 2.0 * 4096 / 4));   /* 2n^3 / (n^2 (1 + 1 + 2)) */
        TB_CHECK(!strcmp(r.min_bound, "compute") && !strcmp(r.bound, "compute"));
        TB_CHECK(near(r.attainable_tflops, 1300) && near(r.position, r.tflops / 1300));
        TB_CHECK(r.tflops > 700);   /* above the BF16 ceiling, under the FP8 one */
    }

    TB_CASE("roofline-4.5", "an FP8 problem and a calibration without an FP8 ceiling: no roof, never the BF16 one") {
        tb_calibration old = cal8;
        old.fp8_tflops = NAN;
        tb_roofline_in in;
        tb_roofline_inputs(&row, NULL, 0, &old, &in);
        TB_CHECK(in.fp8 && isnan(in.ceil_tflops));
        in.read_bytes = min8, in.write_bytes = 0, in.median_ms = 0.1;
        TB_CHECK(tb_roofline_compute(&in, &r, msg, sizeof msg) == TB_OK);
        TB_CHECK(!r.have_roof && !strcmp(r.bound, "") && !strcmp(r.min_bound, ""));
        TB_CHECK(near(r.min_intensity, flops8 / min8));   /* the problem's own figure stays */
        old.fp8_tflops = 0;   /* 0 is none too */
        tb_roofline_inputs(&row, NULL, 0, &old, &in);
        TB_CHECK(isnan(in.ceil_tflops));
    }

    return tb_test_done();
}
