/* cmd_doctor.c - tilebench doctor: what this machine has for tilebench and what is
 * missing. Works without a GPU; asks a worker for the CUDA side. */
#define _GNU_SOURCE
#include "cli.h"
#include "nvml.h"
#include "store.h"
#include "sweep.h"
#include "tb.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void help(void)
{
    printf("usage: tilebench doctor [--db FILE] [--device N]\n"
           "\n"
           "Report the worker, shipped variants and shape sets, the NVIDIA driver and NVML,\n"
           "the GPU (through a worker), clocks, power limit, CUPTI counter access and the\n"
           "database, and say what is missing and how to fix it. Exit 0 even without a GPU.\n");
}

static int exists(const char *p, int dir)
{
    struct stat st;
    return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

int cmd_doctor(int argc, char **argv, const tb_paths *paths)
{
    static const struct option opts[] = {
        { "db", required_argument, 0, 'd' }, { "device", required_argument, 0, 'D' },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB;
    long long dev = 0;
    int c, missing = 0;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'D': if (tb_cli_int("--device", optarg, 0, 63, &dev)) return 2; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("doctor", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'doctor'", argv[optind]);
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
