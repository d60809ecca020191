/* cmd_doctor.c - tilebench doctor: what this machine has for tilebench and what is
 * missing. Works without a GPU; asks a worker for the CUDA side.
 * doctor --calibrate: the GPU's roofline ceilings (DRAM, BF16 and FP8 tensor), measured by a worker
 * (`tilebench-worker calibrate`, worker_calibrate.c), printed and stored (table calibration);
 * it needs a GPU and writes nothing when the measurement fails. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "common/nvml.h"
#include "driver/spawn.h"
#include "store/store.h"
#include "driver/sweep.h"
#include "common/tb.h"
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: tilebench doctor [--db FILE] [--device N]\n"
           "       tilebench doctor --calibrate [--db FILE] [--device N|GPU-UUID]\n"
           "\n"
           "Report the worker, shipped variants and shape sets, the NVIDIA driver and NVML,\n"
           "the GPU (through a worker), clocks, power limit, CUPTI counter access and the\n"
           "database, and say what is missing and how to fix it. Exit 0 even without a GPU.\n"
           "\n"
           "  --db FILE     database (default " TB_DEFAULT_DB ")\n"
           "  --device N    the GPU to ask about (default 0)\n"
           "  --calibrate   measure this GPU's roofline ceilings instead of the report: DRAM\n"
           "                bandwidth (a device-to-device copy of 1 GiB, median of 20) and tensor\n"
           "                throughput (cuBLASLt 8192^3 GEMMs, the fastest of 20: BF16, and FP8\n"
           "                E4M3 on GPUs with FP8 tensor cores), print them and store them in the\n"
           "                database (table calibration); show --metrics and export then place\n"
           "                each measurement under this measured roofline (FP8 problems under\n"
           "                the FP8 ceiling).\n"
           "                Needs a GPU (a few seconds); fails, writing nothing, without one\n");
}

/* ---- --calibrate ---------------------------------------------------------------------------- */

/* The calibration record of the worker into c. TB_OK, or TB_EWORKER naming the bad field. */
static int calibration_from_json(const cJSON *o, tb_calibration *c, char *msg, size_t len)
{
    memset(c, 0, sizeof *c);
    snprintf(c->gpu_uuid, sizeof c->gpu_uuid, "%s", tb_json_str(o, "gpu_uuid", ""));
    snprintf(c->gpu_name, sizeof c->gpu_name, "%s", tb_json_str(o, "gpu_name", ""));
    snprintf(c->gemm_shape, sizeof c->gemm_shape, "%s", tb_json_str(o, "gemm_shape", ""));
    snprintf(c->method, sizeof c->method, "%s", tb_json_str(o, "method", ""));
    c->dram_gbps = tb_json_num(o, "dram_gbps", NAN);
    c->copy_bytes = (int64_t)tb_json_num(o, "copy_bytes", -1);
    c->gemm_tflops = tb_json_num(o, "gemm_tflops", NAN);
    c->sm_clock_mhz = tb_json_num(o, "sm_clock_mhz", NAN);
    c->fp8_tflops = tb_json_num(o, "fp8_tflops", NAN);
    c->fp8_sm_clock_mhz = tb_json_num(o, "fp8_sm_clock_mhz", NAN);
    snprintf(c->fp8_shape, sizeof c->fp8_shape, "%s", tb_json_str(o, "fp8_shape", ""));
    if (!c->gpu_uuid[0]) return tb_fail(msg, len, TB_EWORKER, "the calibration names no GPU UUID");
    if (!(c->dram_gbps > 0 && isfinite(c->dram_gbps)))
        return tb_fail(msg, len, TB_EWORKER, "the calibration has no DRAM bandwidth");
    if (!(c->gemm_tflops > 0 && isfinite(c->gemm_tflops)))
        return tb_fail(msg, len, TB_EWORKER, "the calibration has no GEMM throughput");
    if (!(c->fp8_tflops > 0 && isfinite(c->fp8_tflops))) {
        c->fp8_tflops = c->fp8_sm_clock_mhz = NAN;   /* not measured: why is in the record */
        c->fp8_shape[0] = 0;
        const char *why = tb_json_str(o, "fp8_skipped", "");
        if (!why[0]) return tb_fail(msg, len, TB_EWORKER, "the calibration has no FP8 GEMM throughput");
    }
    return TB_OK;
}

/* Run the worker. TB_OK with *c filled (and fp8_why why the FP8 ceiling was not measured, ""
 * when it was); TB_ENOGPU when it found no usable GPU (before its
 * "ready"); TB_EWORKER when it failed or died after that. */
static int run_calibration(const char *worker, long long dev, const char *uuid,
                           tb_calibration *c, char *fp8_why, size_t fp8_len, char *msg, size_t len)
{
    char *argv[] = { (char *)"tilebench-worker", (char *)"calibrate", NULL };
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    if (rc) return rc;
    cJSON *job = cJSON_CreateObject();
    cJSON_AddNumberToObject(job, "device", (double)dev);
    if (uuid) cJSON_AddStringToObject(job, "device_uuid", uuid);
    /* a worker that could not start has closed its end: EPIPE, not a SIGPIPE that kills us
     * (the worker, already forked, keeps the default disposition) */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    tb_wire_send(p.in_fd, job);
    signal(SIGPIPE, old_pipe);
    cJSON_Delete(job);
    tb_proc_close_input(&p);
    int ready = 0, have = 0, done = 0, r;
    char *line = NULL;
    rc = TB_OK;
    msg[0] = 0;
    while ((r = tb_proc_next(&p, tb_now() + 600.0, NULL, &line)) == 1) {
        cJSON *o = cJSON_Parse(line);
        free(line);
        if (!o) continue;
        const char *type = tb_json_str(o, "type", "");
        if (!strcmp(type, "ready")) {
            ready = 1;
            printf("calibrating %s (%s): a DRAM copy and cuBLASLt GEMMs (BF16, FP8), a few seconds\n",
                   tb_json_str(o, "gpu_name", "?"), tb_json_str(o, "gpu_uuid", "?"));
            fflush(stdout);
        } else if (!strcmp(type, "calibration") && rc == TB_OK) {
            rc = calibration_from_json(o, c, msg, len);
            have = rc == TB_OK;
            snprintf(fp8_why, fp8_len, "%s", tb_json_str(o, "fp8_skipped", ""));
        } else if (!strcmp(type, "fatal") && rc == TB_OK) {
            rc = tb_fail(msg, len, ready ? TB_EWORKER : TB_ENOGPU, "%s", tb_json_str(o, "error", "?"));
        } else if (!strcmp(type, "done")) {
            done = 1;
        }
        cJSON_Delete(o);
    }
    if (r != 0) tb_proc_kill(&p);
    tb_proc_wait(&p, 30.0);
    if (rc == TB_OK && !(have && done)) {
        char how[128], last[256];
        tb_proc_describe_exit(&p, how, sizeof how);
        tb_proc_last_log_line(&p, last, sizeof last);
        if (r == -1)
            rc = tb_fail(msg, len, TB_EWORKER, "the calibration worker hung (no record for 600 s; killed)");
        else if (p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 127)
            rc = tb_fail(msg, len, TB_EWORKER, "%s", last[0] ? last : "cannot run the worker");
        else
            rc = tb_fail(msg, len, TB_EWORKER, "the calibration worker %s%s%s", how,
                         last[0] ? ": " : "", last);
    }
    tb_proc_free(&p);
    return rc;
}

static int cmd_calibrate(const tb_paths *paths, const char *db, long long dev, const char *uuid)
{
    char msg[TB_MSG_LEN];
    tb_calibration c;
    char fp8_why[256] = "";
    int rc = run_calibration(paths->worker, dev, uuid, &c, fp8_why, sizeof fp8_why, msg, sizeof msg);
    if (rc == TB_ENOGPU)
        return tb_cli_error("doctor --calibrate needs an NVIDIA GPU: %s", msg);
    if (rc) {
        tb_cli_error("calibration failed: %s", msg);
        return TB_EXIT_FAIL;
    }
    char clk[48] = "";
    if (isfinite(c.sm_clock_mhz)) snprintf(clk, sizeof clk, ", SM clock %.0f MHz", c.sm_clock_mhz);
    printf("gpu         %s %s\n", c.gpu_name, c.gpu_uuid);
    printf("dram        %.1f GB/s   device-to-device copy, %lld bytes moved per copy (read + write)\n",
           c.dram_gbps, (long long)c.copy_bytes);
    printf("tensor      %.1f TFLOP/s   cuBLASLt BF16 %s, FP32 compute%s\n", c.gemm_tflops,
           c.gemm_shape, clk);
    if (c.fp8_tflops > 0) {
        char clk8[48] = "";
        if (isfinite(c.fp8_sm_clock_mhz)) snprintf(clk8, sizeof clk8, ", SM clock %.0f MHz", c.fp8_sm_clock_mhz);
        printf("fp8         %.1f TFLOP/s   cuBLASLt E4M3 %s, BF16 D, FP32 compute, no fast "
               "accumulation%s: %.2f x BF16, the ceiling of FP8 problems (ridge %.1f FLOP/byte)\n",
               c.fp8_tflops, c.fp8_shape, clk8, c.fp8_tflops / c.gemm_tflops,
               c.fp8_tflops * 1000.0 / c.dram_gbps);
    } else {
        printf("fp8         not measured: %s\n", fp8_why[0] ? fp8_why : "?");
    }
    printf("ridge       %.1f FLOP/byte: a kernel of lower arithmetic intensity is bound by DRAM\n",
           c.gemm_tflops * 1000.0 / c.dram_gbps);
    printf("method      %s\n", c.method);
    tb_store *st = NULL;
    rc = tb_store_open(db, 1, 0, &st, msg, sizeof msg);
    if (rc == TB_OK) rc = tb_store_put_calibration(st, &c, msg, sizeof msg);
    tb_store_close(st);
    if (rc) {
        tb_cli_error("cannot store the calibration: %s", msg);
        return tb_cli_exit_for(rc);
    }
    printf("stored      calibration %lld in %s (%s): show --metrics and export place measurements "
           "on this GPU under these ceilings\n", (long long)c.id, db, c.created_at);
    return TB_EXIT_OK;
}

/* ---- the report ----------------------------------------------------------------------------- */

static int exists(const char *p, int dir)
{
    struct stat st;
    return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int cmd_doctor(int argc, char **argv, const tb_paths *paths)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "device", required_argument, 0, 'D' },
        { "calibrate", no_argument, 0, 'c' }, { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB;
    const char *uuid = NULL;   /* --device GPU-...: only with --calibrate */
    long long dev = 0;
    int c, missing = 0, calibrate = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'D':
            if (strncmp(optarg, "GPU-", 4) == 0) uuid = optarg;
            else if (tb_cli_int("--device", optarg, 0, 63, &dev)) return 2;
            break;
        case 'c': calibrate = 1; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("doctor", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'doctor'", argv[optind]);
    if (uuid && !calibrate && tb_cli_int("--device", uuid, 0, 63, &dev)) return 2;
    if (calibrate) return cmd_calibrate(paths, db, dev, uuid);
    char msg[TB_MSG_LEN];
    printf("tilebench %s\n", TB_VERSION);
    printf("worker      %s %s\n", paths->worker, access(paths->worker, X_OK) == 0 ? "ok" : "MISSING");
    if (access(paths->worker, X_OK) != 0) missing++;
    printf("variants    %s %s\n", paths->variants_dir, exists(paths->variants_dir, 1) ? "ok" : "MISSING");
    printf("shape sets  %s %s\n", paths->shapes_dir, exists(paths->shapes_dir, 1) ? "ok" : "MISSING");

    int nvml = tb_nvml_open(msg, sizeof msg) == TB_OK;
    if (nvml) {
        char drv[64] = "?";
        unsigned n = 0;
        tb_nvml_driver_version(drv, sizeof drv);
        tb_nvml_device_count(&n, msg, sizeof msg);
        printf("nvml        ok (driver %s, %u GPU%s)\n", drv, n, n == 1 ? "" : "s");
        for (unsigned i = 0; i < n; i++) {
            tb_nvml_dev *d;
            if (tb_nvml_device_by_index(i, &d, msg, sizeof msg) != TB_OK) continue;
            char name[96] = "?", uuid[96] = "?";
            int sm, smax, mem, pl;
            unsigned long long reasons = 0;
            tb_nvml_name(d, name, sizeof name);
            tb_nvml_uuid(d, uuid, sizeof uuid);
            tb_nvml_clocks(d, &sm, &smax, &mem);
            tb_nvml_power_limit_mw(d, &pl);
            tb_nvml_throttle_reasons(d, &reasons);
            printf("  gpu %u     %s %s\n", i, name, uuid);
            printf("            SM clock %d MHz (max %d), memory %d MHz, power limit %.0f W, "
                   "clock-event reasons 0x%llx\n", sm, smax, mem, pl / 1000.0, reasons);
        }
    } else {
        printf("nvml        unavailable: %s\n", msg);
        printf("            (clocks and power will not be recorded; a killed worker's context\n"
               "             is waited for with a fixed pause instead)\n");
    }
    tb_environment env;
    char devspec[32];
    snprintf(devspec, sizeof devspec, "%lld", dev);
    int rc = tb_sweep_probe_env(paths->worker, devspec, &env, msg, sizeof msg);
    if (rc == TB_OK) {
        printf("cuda        ok: %s, sm_%d%d, %d SMs, L2 %lld MB, %lld GB; runtime %d, driver API %d\n",
               env.gpu_name, env.cc_major, env.cc_minor, env.sm_count,
               (long long)(env.l2_bytes >> 20), (long long)(env.mem_bytes >> 30),
               env.cuda_runtime_version, env.cuda_driver_version);
        printf("cublaslt    %d\n", env.cublas_version);
        printf("cupti       %s\n", env.cupti_version >= 0 ? "ok" : "not loadable");
    } else {
        printf("cuda        no GPU: %s\n", msg);
        printf("            sweep needs an NVIDIA GPU and driver; list, show, export and doctor\n"
               "            work without one\n");
        missing++;
    }
    FILE *f = fopen("/proc/driver/nvidia/params", "r");
    if (f) {
        char line[256];
        int restricted = -1;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "RmProfilingAdminOnly: %d", &restricted) == 1) break;
        fclose(f);
        if (restricted == 1 && geteuid() != 0)
            printf("counters    restricted to admin users (RmProfilingAdminOnly=1): run as root, or\n"
                   "            load nvidia with NVreg_RestrictProfilingToAdminUsers=0\n");
        else if (restricted >= 0)
            printf("counters    allowed (RmProfilingAdminOnly=%d%s)\n", restricted,
                   geteuid() == 0 ? ", running as root" : "");
    } else {
        printf("counters    unknown (no /proc/driver/nvidia/params)\n");
    }
    tb_store *st;
    if (access(db, F_OK) != 0) {
        printf("database    %s does not exist yet (a sweep creates it)\n", db);
    } else if (tb_store_open(db, 0, 1, &st, msg, sizeof msg) == TB_OK) {
        int64_t latest = 0;
        char m2[TB_MSG_LEN];
        int have = tb_store_run_latest(st, &latest, m2, sizeof m2) == TB_OK;
        printf("database    %s ok (schema %d", db, tb_store_found_version(st));
        if (have) printf(", newest run %lld", (long long)latest);
        printf(")\n");
        tb_store_close(st);
    } else {
        printf("database    %s\n", msg);
    }
    printf("%s\n", missing ? "some things are missing (see above)" : "everything tilebench needs is here");
    return 0;
}
