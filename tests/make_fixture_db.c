/* make_fixture_db.c - writes a small database through the store API, for the CLI tests of
 * show and export on a machine without a GPU. Its figures are invented test data (the GPU
 * is named "fixture GPU"), never measurements; nothing outside tests/ reads it.
 * cublaslt's measurement has DRAM counters (8 MiB at 256 FLOP/byte) and the GPU a calibration
 * (2500 GB/s, 700 TFLOP/s), so show --metrics and export derive a memory-bound roofline
 * position: attainable 640 TFLOP/s, achieved 211.6, position 33.1 %.
 *   make_fixture_db FILE
 *   make_fixture_db FILE --schema N     an empty database as tilebench schema N left it */
#include "store/store.h"
#include "common/tb.h"
#include "common/wire.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *m) { fprintf(stderr, "make_fixture_db: %s\n", m); return 1; }

int main(int argc, char **argv)
{
    char msg[TB_MSG_LEN];
    tb_store *st;
    if (argc == 4 && !strcmp(argv[2], "--schema")) {
        if (tb_store_create_at_version(argv[1], atoi(argv[3]), msg, sizeof msg)) return die(msg);
        return 0;
    }
    if (argc != 2) return die("usage: make_fixture_db FILE [--schema N]");
    if (tb_store_open(argv[1], 1, 0, &st, msg, sizeof msg)) return die(msg);
    static tb_run_info run;
    snprintf(run.started_at, sizeof run.started_at, "2026-11-23T00:00:00Z");
    snprintf(run.command_line, sizeof run.command_line, "tilebench sweep --shapes fixture");
    snprintf(run.version, sizeof run.version, "%s", TB_VERSION);
    snprintf(run.status, sizeof run.status, "running");
    snprintf(run.options_json, sizeof run.options_json, "{}");
    if (tb_store_run_begin(st, &run, msg, sizeof msg)) return die(msg);
    tb_environment env;
    memset(&env, 0, sizeof env);
    snprintf(env.gpu_name, sizeof env.gpu_name, "fixture GPU");
    snprintf(env.gpu_uuid, sizeof env.gpu_uuid, "GPU-f1f1f1f1-0000-0000-0000-000000000000");
    env.cc_major = 9; env.cc_minor = 0; env.sm_count = 132; env.l2_bytes = 50 << 20;
    snprintf(env.extra_json, sizeof env.extra_json, "{}");
    if (tb_store_put_environment(st, run.id, &env, msg, sizeof msg)) return die(msg);
    tb_variant_info v[3];
    const char *names[3] = { "cublaslt", "fixture_fast", "fixture_broken" };
    for (int i = 0; i < 3; i++) {
        memset(&v[i], 0, sizeof v[i]);
        snprintf(v[i].name, sizeof v[i].name, "%s", names[i]);
        snprintf(v[i].family, sizeof v[i].family, "fixture");
        snprintf(v[i].params_json, sizeof v[i].params_json, i == 1 ? "{\"tile_m\":128,\"stages\":3}" : "{}");
        snprintf(v[i].sass, sizeof v[i].sass, "any");
        snprintf(v[i].file, sizeof v[i].file, "/fixture/%s.so", names[i]);
        snprintf(v[i].sha256, sizeof v[i].sha256, "%064d", i);
        if (tb_store_put_variant(st, run.id, &v[i], msg, sizeof msg)) return die(msg);
    }
    tb_problem_info p;
    memset(&p, 0, sizeof p);
    snprintf(p.op, sizeof p.op, "gemm");
    p.m = p.n = p.k = 1024; p.batch = 1; p.lda = p.ldb = p.ldc = p.ldd = 1024; p.alpha = 1;
    snprintf(p.dtypes, sizeof p.dtypes, "bf16,bf16,bf16,bf16,f32");
    snprintf(p.layouts, sizeof p.layouts, "tn");
    if (tb_store_put_problem(st, &p, msg, sizeof msg)) return die(msg);
    double samples[2][4] = { { 0.0100, 0.0102, 0.0101, 0.0103 }, { 0.0080, 0.0081, 0.0080, 0.0082 } };
    for (int i = 0; i < 3; i++) {
        tb_measurement m;
        tb_measurement_init(&m);
        m.run_id = run.id; m.variant_id = v[i].id; m.problem_id = p.id;
        if (i < 2) {
            m.disposition = TB_DISP_PASSED;
            snprintf(m.method, sizeof m.method, "cold");
            snprintf(m.stop_reason, sizeof m.stop_reason, "stdrel: noise 0.40%% <= 0.50%% after 4 samples");
            m.n_samples = 4;
            m.samples_ms = samples[i];
            m.median_ms = samples[i][0] + samples[i][2] > 0 ? (i ? 0.00805 : 0.01015) : 0;
            m.mean_ms = m.median_ms; m.stdev_ms = 0.0001; m.min_ms = samples[i][0]; m.max_ms = samples[i][3];
            m.rse = 0.004;
            m.tflops = 2.0 * 1024 * 1024 * 1024 / (m.median_ms * 1e-3) / 1e12;
            m.clock_mhz = 1980;
            m.max_abs_err = 0.01; m.rel_fro_err = 0.002; m.n_bad = 0; m.n_nonfinite = 0;
            m.trials = 2;
        } else {
            m.status = TB_STATUS_CRASHED;
            snprintf(m.reason, sizeof m.reason, "worker killed by signal 11 (Segmentation fault), \"planted\"");
        }
        if (tb_store_put_measurement(st, &m, msg, sizeof msg)) return die(msg);
        if (i == 0) {   /* invented DRAM counters: 6 MiB read, 2 MiB written */
            tb_metric mt[2];
            memset(mt, 0, sizeof mt);
            snprintf(mt[0].name, sizeof mt[0].name, "dram__bytes_read.sum");
            mt[0].value = 6291456; mt[0].available = 1;
            snprintf(mt[0].unit, sizeof mt[0].unit, "bytes");
            snprintf(mt[1].name, sizeof mt[1].name, "dram__bytes_write.sum");
            mt[1].value = 2097152; mt[1].available = 1;
            snprintf(mt[1].unit, sizeof mt[1].unit, "bytes");
            if (tb_store_put_metrics(st, m.id, mt, 2, msg, sizeof msg)) return die(msg);
        }
        if (i == 1) {   /* invented counters for show --metrics */
            tb_metric mt[2];
            memset(mt, 0, sizeof mt);
            snprintf(mt[0].name, sizeof mt[0].name, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
            mt[0].value = 1990000; mt[0].available = 1;
            snprintf(mt[1].name, sizeof mt[1].name, "dram__bytes_read.sum");
            mt[1].value = NAN; mt[1].available = 0;
            snprintf(mt[1].reason, sizeof mt[1].reason, "fixture: another profiler is attached");
            if (tb_store_put_metrics(st, m.id, mt, 2, msg, sizeof msg)) return die(msg);
        }
    }
    if (tb_store_run_end(st, run.id, "complete", msg, sizeof msg)) return die(msg);
    tb_calibration cal;   /* invented ceilings of the fixture GPU */
    memset(&cal, 0, sizeof cal);
    snprintf(cal.created_at, sizeof cal.created_at, "2026-11-22T12:00:00Z");
    snprintf(cal.gpu_uuid, sizeof cal.gpu_uuid, "%s", env.gpu_uuid);
    snprintf(cal.gpu_name, sizeof cal.gpu_name, "fixture GPU");
    cal.dram_gbps = 2500; cal.copy_bytes = 2147483648LL; cal.gemm_tflops = 700;
    snprintf(cal.gemm_shape, sizeof cal.gemm_shape, "8192x8192x8192");
    cal.sm_clock_mhz = 1980;
    snprintf(cal.method, sizeof cal.method, "fixture: invented ceilings");
    if (tb_store_put_calibration(st, &cal, msg, sizeof msg)) return die(msg);
    tb_store_close(st);
    printf("%lld\n", (long long)run.id);
    return 0;
}
