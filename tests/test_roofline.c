/* test_roofline.c - tests of harness/report/roofline.c: the arithmetic of intensity, bandwidth and
 * roofline position, a memory-bound and a compute-bound case worked by hand, and every
 * missing input (no counters, one counter, zero bytes, no time, no calibration). */
#include "report/roofline.h"
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
    tb_roofline_in in = { flops, rd, wr, ms, tf, gbps };
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

    return tb_test_done();
}
