/* make_gate_fixture.c - writes, through the store API, the runs the CLI tests of compare,
 * baseline and the gate's reports read on a machine without a GPU. Invented test data (the GPU
 * is "fixture GPU"); the samples come from a fixed generator, so every report is the same on
 * every machine (tests/expected/ holds them).
 *   run 1 "base":  cublaslt, steady, slow5, breaks, declines, gone on 4096^3 and 8192^3
 *   run 2 "head":  the same GPU 8 % slower throughout (a drift: cublaslt too); slow5 a further
 *                  5 % slower, breaks incorrect, declines unsupported at 8192^3, gone absent,
 *                  newone new
 *   run 3 a gate:  base:X and head:X in one run, no drift; head:slow5 5 % slower (its setup
 *                  described differently from the base's), head:breaks incorrect
 *   run 4 (--attention, alone in FILE): attention rows (issue 33) beside a GEMM row, for the
 *                  submission and the leaderboard, on a GPU of 132 SMs (its rates checkable): flash_fwd on two shapes of the attn set
 *                  (passed), on a third (incorrect); cublaslt on 4096^3
 *   make_gate_fixture [--attention] FILE */
#include "store/store.h"
#include "common/tb.h"
#include "common/problem.h"
#include "common/wire.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *m) { fprintf(stderr, "make_gate_fixture: %s\n", m); exit(1); }

static uint64_t rng = 2026;
static double uniform(void)
{
    uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static tb_store *st;
static char msg[TB_MSG_LEN];
static const char *next_describe = "";   /* describe() text of the next measurement */
static int fixture_sms = 0;              /* the GPU's SM count: none, but 132 (an H100's) in run 4 */

static int64_t begin(const char *what)
{
    static tb_run_info run;
    memset(&run, 0, sizeof run);
    snprintf(run.started_at, sizeof run.started_at, "2026-11-25T00:00:00Z");
    snprintf(run.command_line, sizeof run.command_line, "fixture: %s", what);
    snprintf(run.version, sizeof run.version, "%s", TB_VERSION);
    snprintf(run.git_sha, sizeof run.git_sha, "f1x7ure");
    snprintf(run.status, sizeof run.status, "running");
    snprintf(run.options_json, sizeof run.options_json, "{}");
    if (tb_store_run_begin(st, &run, msg, sizeof msg)) die(msg);
    tb_environment env;
    memset(&env, 0, sizeof env);
    snprintf(env.gpu_name, sizeof env.gpu_name, "fixture GPU");
    snprintf(env.driver_version, sizeof env.driver_version, "580.0");
    env.cc_major = 9; env.cuda_runtime_version = 13000; env.cublas_version = 130100;
    env.power_limit_mw = 700000;
    env.sm_count = fixture_sms;
    snprintf(env.extra_json, sizeof env.extra_json, "{}");
    if (tb_store_put_environment(st, run.id, &env, msg, sizeof msg)) die(msg);
    return run.id;
}

static int64_t problem(int64_t s)
{
    tb_problem_info p;
    memset(&p, 0, sizeof p);
    snprintf(p.op, sizeof p.op, "gemm");
    p.m = p.n = p.k = s; p.batch = 1; p.lda = p.ldb = p.ldc = p.ldd = s; p.alpha = 1;
    snprintf(p.dtypes, sizeof p.dtypes, "bf16,bf16,bf16,bf16,f32");
    snprintf(p.layouts, sizeof p.layouts, "tn");
    if (tb_store_put_problem(st, &p, msg, sizeof msg)) die(msg);
    return p.id;
}

static int64_t variant(int64_t run, const char *name)
{
    tb_variant_info v;
    memset(&v, 0, sizeof v);
    snprintf(v.name, sizeof v.name, "%s", name);
    snprintf(v.family, sizeof v.family, "fixture");
    snprintf(v.params_json, sizeof v.params_json, "{}");
    snprintf(v.sass, sizeof v.sass, "any");
    snprintf(v.file, sizeof v.file, "/fixture/%s.so", name);
    snprintf(v.sha256, sizeof v.sha256, "%064d", 0);
    if (tb_store_put_variant(st, run, &v, msg, sizeof msg)) die(msg);
    return v.id;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 60 samples around ms: 0.4 % triangular noise, 2 of them 8 % slow; or a status */
static void measure(int64_t run, int64_t vid, int64_t pid, double ms, tb_status status,
                    tb_disposition disp, const char *rule, const char *reason)
{
    tb_measurement m;
    tb_measurement_init(&m);
    m.run_id = run; m.variant_id = vid; m.problem_id = pid;
    m.status = status;
    m.disposition = disp;
    snprintf(m.rule, sizeof m.rule, "%s", rule);
    snprintf(m.reason, sizeof m.reason, "%s", reason);
    snprintf(m.describe, sizeof m.describe, "%s", next_describe);
    next_describe = "";
    double s[60], c[60];
    if (status == TB_STATUS_OK && disp == TB_DISP_PASSED) {
        for (int i = 0; i < 60; i++) {
            s[i] = ms * (1 + 0.004 * (uniform() + uniform() - 1));
            if (i % 30 == 7) s[i] *= 1.08;
        }
        memcpy(c, s, sizeof c);
        qsort(c, 60, sizeof *c, cmp_d);
        m.n_samples = 60;
        m.samples_ms = s;
        m.median_ms = 0.5 * (c[29] + c[30]);
        m.mean_ms = m.median_ms; m.min_ms = c[0]; m.max_ms = c[59]; m.stdev_ms = 0; m.rse = 0.001;
        m.clock_mhz = 1700;
        snprintf(m.method, sizeof m.method, "cold");
        snprintf(m.stop_reason, sizeof m.stop_reason, "rse");
    }
    if (tb_store_put_measurement(st, &m, msg, sizeof msg)) die(msg);
}

#define OK TB_STATUS_OK, TB_DISP_PASSED, "", ""

/* an attention problem of token tok (BF16, BHSD, scale 1/sqrt(D)), stored */
static int64_t attn_problem(const char *tok, const char *label)
{
    tb_shape s;
    tb_problem_info p;
    if (tb_op_attention_fwd.shape_parse(tok, &s, msg, sizeof msg)) die(msg);
    snprintf(s.label, sizeof s.label, "%s", label);
    tb_problem_info_attention(&s, TB_ATTN_BHSD, 0, &p);
    if (tb_store_put_problem(st, &p, msg, sizeof msg)) die(msg);
    return p.id;
}

static int attention_run(void)
{
    int64_t a1 = attn_problem("4x32x4096x4096x128:causal:hkv=8", "llama3-8b.s4k.causal"),
            a2 = attn_problem("2x16x8192x8192x128", "decoder.d128.s8k"),
            a3 = attn_problem("4x32x512x8192x128:causal:hkv=8", ""),
            p4 = problem(4096);
    fixture_sms = 132;   /* so that the default plausibility check runs (H100 peak at 1700 MHz) */
    int64_t r = begin("attention");
    int64_t fa = variant(r, "flash_fwd"), cl = variant(r, "cublaslt");
    measure(r, fa, a1, 0.9, OK);        /* 5.5e11 FLOP in 0.9 ms: 611 TFLOP/s */
    measure(r, fa, a2, 1.6, OK);
    measure(r, fa, a3, 0, TB_STATUS_OK, TB_DISP_INCORRECT, "attention", "a planted wrong answer");
    measure(r, cl, p4, 0.1745, OK);
    if (tb_store_run_end(st, r, "complete", msg, sizeof msg)) die(msg);
    tb_store_close(st);
    printf("%lld\n", (long long)r);
    return 0;
}

int main(int argc, char **argv)
{
    int attn = argc == 3 && !strcmp(argv[1], "--attention");
    if (argc != 2 + attn) die("usage: make_gate_fixture [--attention] FILE");
    if (tb_store_open(argv[1 + attn], 1, 0, &st, msg, sizeof msg)) die(msg);
    if (attn) return attention_run();
    int64_t p4 = problem(4096), p8 = problem(8192);
    const double t4 = 0.1745, t8 = 1.3572;

    int64_t r1 = begin("base");
    const char *base_names[] = { "cublaslt", "steady", "slow5", "breaks", "declines", "gone" };
    int64_t id[6];
    for (int i = 0; i < 6; i++) id[i] = variant(r1, base_names[i]);
    for (int s = 0; s < 2; s++) {
        int64_t p = s ? p8 : p4;
        double t = s ? t8 : t4;
        for (int i = 0; i < 6; i++) measure(r1, id[i], p, t * (1 + 0.1 * i), OK);
    }
    if (tb_store_run_end(st, r1, "complete", msg, sizeof msg)) die(msg);

    int64_t r2 = begin("head");
    const char *head_names[] = { "cublaslt", "steady", "slow5", "breaks", "declines", "newone" };
    for (int i = 0; i < 6; i++) id[i] = variant(r2, head_names[i]);
    const double drift = 1.08;
    for (int s = 0; s < 2; s++) {
        int64_t p = s ? p8 : p4;
        double t = s ? t8 : t4;
        measure(r2, id[0], p, t * drift, OK);
        measure(r2, id[1], p, t * 1.1 * drift, OK);
        measure(r2, id[2], p, t * 1.2 * drift * 1.05, OK);
        measure(r2, id[3], p, 0, TB_STATUS_OK, TB_DISP_INCORRECT, "tolerance",
                "rel_fro_err 3.1e-01 > 1.0e-02 (a planted wrong answer)");
        if (s) measure(r2, id[4], p, 0, TB_STATUS_UNSUPPORTED, TB_DISP_NOT_VERIFIED, "",
                       "supports() declined 8192x8192x8192");
        else measure(r2, id[4], p, t * 1.4 * drift, OK);
        measure(r2, id[5], p, t * 0.9 * drift, OK);
    }
    if (tb_store_run_end(st, r2, "complete", msg, sizeof msg)) die(msg);

    int64_t r3 = begin("gate");
    const char *gate_names[] = { "base:steady", "base:slow5", "base:breaks", "head:steady",
                                 "head:slow5", "head:breaks" };
    for (int i = 0; i < 6; i++) id[i] = variant(r3, gate_names[i]);
    for (int s = 0; s < 2; s++) {
        int64_t p = s ? p8 : p4;
        double t = s ? t8 : t4;
        measure(r3, id[0], p, t * 1.1, OK);
        next_describe = "algo=1 tile=20";
        measure(r3, id[1], p, t * 1.2, OK);
        measure(r3, id[2], p, t * 1.3, OK);
        measure(r3, id[3], p, t * 1.1, OK);
        next_describe = "algo=1 tile=24";
        measure(r3, id[4], p, t * 1.2 * 1.05, OK);
        measure(r3, id[5], p, 0, TB_STATUS_CRASHED, TB_DISP_NOT_VERIFIED, "",
                "worker killed by signal 11 <Segmentation fault> & \"planted\" "
                "\x1b]0;pwned\x07\x1b[2J \xff\xfe \xc2\x9b" "31m");
    }
    if (tb_store_run_end(st, r3, "complete", msg, sizeof msg)) die(msg);
    tb_store_close(st);
    printf("%lld %lld %lld\n", (long long)r1, (long long)r2, (long long)r3);
    return 0;
}
