/* cmd_sweep.c - tilebench sweep: check every input, find the GPU, load and select the
 * variants, open the store, run the sweep with a progress bar, print the table.
 * Nothing is written before every input has been checked and a GPU found. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "cli/sweep_cli.h"
#include "common/op.h"
#include "cli/progress.h"
#include "driver/catalog.h"
#include "driver/shard.h"
#include "common/stop.h"
#include "report/show.h"
#include "store/store.h"
#include "driver/sweep.h"
#include "common/tb.h"
#include "common/wire.h"
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void help(void)
{
    printf(
"usage: tilebench sweep [options]\n"
"\n"
"Validate each selected variant against cuBLASLt on fresh seeded inputs (poisoned output),\n"
"time it (L2 flushed, CUDA events, every sample kept), validate again on new inputs, and\n"
"store everything in the database. Each shape runs in its own worker process: a crash or\n"
"hang is recorded for that variant and the sweep goes on. Needs an NVIDIA GPU.\n"
"\n"
"selection:\n"
"  --variants PATH     variant .so or directory (repeatable; default: shipped variants)\n"
"  --filter GLOB       keep names matching GLOB (repeatable)\n"
"  --exclude GLOB      drop names matching GLOB (repeatable)\n"
"  --shapes SPEC       MxNxK[xB] list, shape file, or set: square, llm, odd, smoke\n"
"                      (comma separated, repeatable; default: square); attention:\n"
"                      BxHxSqxSkxD[:causal][:hkv=N] or the set attn\n"
"problem:\n"
"  --alpha X --beta Y  scalars (default 1, 0); beta != 0 reads C\n"
"  --init DIST         input distribution: uniform (default, [-1,1)) or normal\n"
"  --seed N            base seed of the inputs (default 20261123); every validation also\n"
"                      runs one trial on a seed drawn at run time (stored afterwards)\n"
"  --layout L          tn (default), nn, nt or tt: A then B in BLAS letters (t = A\n"
"                      row-major / B row-major, n = column-major); C and D row-major\n"
"  --pad N             add N elements to every leading dimension (default 0)\n"
"  --dtype T           bf16 (default) or e4m3: the type of A and B (e4m3: FP8 with fixed\n"
"                      per-tensor scales 2^-6 and 2^-5, layout tn only); C and D bf16,\n"
"                      f32 accumulation (docs/method.md, \"FP8 problems\")\n"
"  --attn-layout L     attention shapes: bhsd (default) or bshd, Q, K, V and O packed\n"
"  --softmax-scale S   attention shapes: the scale of QK^T (default 1/sqrt(head_dim))\n"
"measurement (docs/method.md):\n"
"  --method M          auto (default: stream below 0.1 ms per launch, else cold), cold,\n"
"                      stream or graph; the figure records which method produced it\n"
"  --l2 cold|hot       cold (default): flush / rotate inputs; hot: reuse one set, no flush\n"
"  --stop SPEC         stopping criterion: stdrel (default) or fixed, with parameters, e.g.\n"
"                      stdrel:max-noise=0.005,min-time=0.05 or fixed:samples=200\n"
"  --max-time S        timing budget per variant in seconds (default 1.0)\n"
"  --target-rse X      stdrel's max-noise (default 0.005)\n"
"  --min-samples N     (default 10)   --max-samples N (default 1000)\n"
"  --warmup N          launches before sampling (default 3)\n"
"  --profile           no blocking kernel (use under ncu/nsys; found automatically too)\n"
"  --pace R            after each sample rest R x its wall time, so the GPU runs below its\n"
"                      power cap as isolated launches do (default 0: back to back)\n"
"  --no-energy         skip the 1 s energy burst per measurement (joules per launch)\n"
"  --metrics SET       after timing a shape, collect hardware counters in a process of their\n"
"                      own (CUPTI, user replay, L2 flushed before each pass): banks, memory,\n"
"                      compute, all, or metric names, comma separated; pm:NAME samples a\n"
"                      count over the kernel's own time window (docs/counters.md)\n"
"  --trials N          validation trials, the last after timing (default 3, at least 2)\n"
"  --timeout S         watchdog: seconds without progress before a variant is called hung;\n"
"                      after the first launch the limit is max(S, F x its time) (default 10)\n"
"  --watchdog-factor F (default 50)\n"
"  --device N|UUID     CUDA device index (default 0) or UUID (GPU-...)\n"
"  --devices all|LIST  several GPUs of one model (LIST: indices and UUIDs, comma separated):\n"
"                      a worker each, drawing shapes from one queue; a shape's variants are\n"
"                      measured together on one GPU, each result records its GPU's UUID, and\n"
"                      a shape whose worker fails before measuring goes to another GPU (a\n"
"                      GPU that fails so on two shapes in a row is taken out)\n"
"  --exclusive         refuse to measure when other processes use the GPU (default: warn)\n"
"  --keep-worker       one worker process for every shape (one GPU; not with --sanitize or\n"
"                      --metrics): no new process, CUDA context, reference or timing buffers\n"
"                      per shape (about 0.4 s a shape on the H100); a crash still costs only\n"
"                      its own worker, and the next shape starts a new one (docs/method.md)\n"
"  --sanitize[=TOOL]   also validate each variant once under compute-sanitizer (memcheck,\n"
"                      the default, or racecheck); errors make it invalid (rule sanitize)\n"
"storage and output:\n"
"  --db FILE           database (default " TB_DEFAULT_DB ")\n"
"  --resume RUN        finish run RUN (a killed, interrupted or planned sweep) with its own\n"
"                      options\n"
"scale out (README, \"Sweeping on a cluster\"):\n"
"  --shard I/N         measure only shard I (0 .. N-1) of the shapes: N jobs with the same\n"
"                      options cover every shape exactly once; combine their databases with\n"
"                      tilebench merge\n"
"  --plan-only         no GPU needed: record every item (variant x shape) with status\n"
"                      'planned' and stop; 'tilebench sweep --resume RUN' measures them\n"
"  --quiet             no table at the end      --no-progress  plain lines, no bar\n"
"\n"
"examples:\n"
"  tilebench sweep --shapes square\n"
"  tilebench sweep --filter 'mma_sync*' --filter cublaslt --shapes 4096x4096x4096\n"
"  tilebench sweep --variants ./my_gemm.so --shapes smoke,1000x1000x1000\n"
"  tilebench sweep --shapes square,llm --shard 3/8 --db shard-3.db\n");
}

enum { O_VARIANTS = 256, O_FILTER, O_EXCLUDE, O_SHAPES, O_DB, O_RESUME, O_TIMEOUT, O_WFACTOR,
       O_MAXTIME, O_RSE, O_MINS, O_MAXS, O_WARMUP, O_TRIALS, O_SEED, O_INIT, O_ALPHA, O_BETA,
       O_LAYOUT, O_PAD, O_DTYPE, O_ATTNLAYOUT, O_SMSCALE, O_STOP, O_METHOD, O_L2, O_PROFILE, O_NOENERGY, O_PACE, O_METRICS, O_DEVICE, O_EXCLUSIVE, O_SANITIZE, O_KEEPWORKER, O_DEVICES, O_SHARD, O_PLAN, O_QUIET, O_NOPROG, O_HELP };


static int parse_args(int argc, char **argv, sweep_cli *c)
{
    static const struct option opts[] = {
        { "variants", required_argument, 0, O_VARIANTS }, { "filter", required_argument, 0, O_FILTER },
        { "exclude", required_argument, 0, O_EXCLUDE }, { "shapes", required_argument, 0, O_SHAPES },
        { "db", required_argument, 0, O_DB }, { "resume", required_argument, 0, O_RESUME },
        { "timeout", required_argument, 0, O_TIMEOUT },
        { "watchdog-factor", required_argument, 0, O_WFACTOR },
        { "max-time", required_argument, 0, O_MAXTIME }, { "target-rse", required_argument, 0, O_RSE },
        { "min-samples", required_argument, 0, O_MINS }, { "max-samples", required_argument, 0, O_MAXS },
        { "warmup", required_argument, 0, O_WARMUP }, { "trials", required_argument, 0, O_TRIALS },
        { "seed", required_argument, 0, O_SEED }, { "init", required_argument, 0, O_INIT },
        { "alpha", required_argument, 0, O_ALPHA }, { "beta", required_argument, 0, O_BETA },
        { "layout", required_argument, 0, O_LAYOUT }, { "pad", required_argument, 0, O_PAD },
        { "dtype", required_argument, 0, O_DTYPE }, { "attn-layout", required_argument, 0, O_ATTNLAYOUT },
        { "softmax-scale", required_argument, 0, O_SMSCALE },
        { "device", required_argument, 0, O_DEVICE }, { "exclusive", no_argument, 0, O_EXCLUSIVE },
        { "sanitize", optional_argument, 0, O_SANITIZE }, { "shard", required_argument, 0, O_SHARD },
        { "devices", required_argument, 0, O_DEVICES },
        { "keep-worker", no_argument, 0, O_KEEPWORKER },
        { "plan-only", no_argument, 0, O_PLAN },
        { "stop", required_argument, 0, O_STOP }, { "method", required_argument, 0, O_METHOD },
        { "l2", required_argument, 0, O_L2 }, { "profile", no_argument, 0, O_PROFILE },
        { "no-energy", no_argument, 0, O_NOENERGY }, { "pace", required_argument, 0, O_PACE }, { "metrics", required_argument, 0, O_METRICS }, { "quiet", no_argument, 0, O_QUIET },
        { "no-progress", no_argument, 0, O_NOPROG }, { "help", no_argument, 0, O_HELP },
        { 0, 0, 0, 0 } };
    int ch;
    long long ll;
    double d;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (ch >= O_TIMEOUT && ch <= O_PLAN) c->explicit_opts = 1;
        if (ch == O_VARIANTS || ch == O_FILTER || ch == O_EXCLUDE || ch == O_SHAPES) c->explicit_opts = 1;
        switch (ch) {
        case O_VARIANTS: if (tb_cli_push(c->vp, &c->nvp, TB_CLI_MAX_REPEAT, strdup(optarg), "--variants")) return 2; break;
        case O_FILTER: if (tb_cli_push(c->inc, &c->ninc, TB_CLI_MAX_REPEAT, strdup(optarg), "--filter")) return 2; break;
        case O_EXCLUDE: if (tb_cli_push(c->exc, &c->nexc, TB_CLI_MAX_REPEAT, strdup(optarg), "--exclude")) return 2; break;
        case O_SHAPES: if (tb_cli_push(c->shp, &c->nshp, TB_CLI_MAX_REPEAT, strdup(optarg), "--shapes")) return 2; break;
        case O_DB: c->db = optarg; break;
        case O_RESUME: if (tb_cli_int("--resume", optarg, 1, INT64_MAX, &c->resume)) return 2; break;
        case O_TIMEOUT: if (tb_cli_double("--timeout", optarg, 0.1, 86400, &c->o.timeout_s)) return 2; break;
        case O_WFACTOR: if (tb_cli_double("--watchdog-factor", optarg, 1, 1e6, &c->o.watchdog_factor)) return 2; break;
        case O_MAXTIME: if (tb_cli_double("--max-time", optarg, 0.001, 3600, &c->o.max_time_s)) return 2; break;
        case O_RSE: if (tb_cli_double("--target-rse", optarg, 0, 1, &c->o.target_rse)) return 2; break;
        case O_MINS: if (tb_cli_int("--min-samples", optarg, 1, 1000000, &ll)) return 2; c->o.min_samples = (int)ll; break;
        case O_MAXS: if (tb_cli_int("--max-samples", optarg, 1, 1000000, &ll)) return 2; c->o.max_samples = (int)ll; break;
        case O_WARMUP: if (tb_cli_int("--warmup", optarg, 0, 100000, &ll)) return 2; c->o.warmup = (int)ll; break;
        case O_TRIALS: if (tb_cli_int("--trials", optarg, 2, 100, &ll)) return 2; c->o.trials = (int)ll; break;
        case O_SEED: if (tb_cli_int("--seed", optarg, 0, (1ll << 52) - 1, &ll)) return 2; c->o.seed = (uint64_t)ll; break;
        case O_INIT:
            if (strcmp(optarg, "uniform") && strcmp(optarg, "normal"))
                return tb_cli_error("invalid value '%s' for --init (uniform, normal)", optarg);
            snprintf(c->o.init, sizeof c->o.init, "%s", optarg);
            break;
        case O_ALPHA: if (tb_cli_double("--alpha", optarg, -1e6, 1e6, &d)) return 2; c->o.alpha = d; break;
        case O_BETA: if (tb_cli_double("--beta", optarg, -1e6, 1e6, &d)) return 2; c->o.beta = d; break;
        case O_LAYOUT:
            if (strcmp(optarg, "tn") && strcmp(optarg, "nn") && strcmp(optarg, "nt") && strcmp(optarg, "tt"))
                return tb_cli_error("invalid value '%s' for --layout (tn, nn, nt, tt)", optarg);
            snprintf(c->o.layout, sizeof c->o.layout, "%s", optarg);
            break;
        case O_PAD: if (tb_cli_int("--pad", optarg, 0, 1 << 20, &ll)) return 2; c->o.pad = (int)ll; break;
        case O_DTYPE:
            if (tb_cli_dtype(optarg, c->o.dtype, sizeof c->o.dtype)) return 2;
            break;
        case O_ATTNLAYOUT:
            if (strcmp(optarg, "bhsd") && strcmp(optarg, "bshd"))
                return tb_cli_error("invalid value '%s' for --attn-layout (bhsd, bshd)", optarg);
            snprintf(c->o.attn_layout, sizeof c->o.attn_layout, "%s", optarg);
            break;
        case O_SMSCALE: if (tb_cli_double("--softmax-scale", optarg, 1e-6, 1e6, &c->o.softmax_scale)) return 2; break;
        case O_DEVICES:
            if (strlen(optarg) >= sizeof c->devices || !optarg[0])
                return tb_cli_error("invalid value '%.64s' for --devices (all, or GPU indices 0-63 "
                                    "and UUIDs GPU-..., comma separated)", optarg);
            snprintf(c->devices, sizeof c->devices, "%s", optarg);
            break;
        case O_DEVICE:
            c->device_given = 1;
            if (strncmp(optarg, "GPU-", 4) == 0) snprintf(c->o.device_uuid, sizeof c->o.device_uuid, "%s", optarg);
            else if (tb_cli_int("--device", optarg, 0, 63, &ll)) return 2;
            else c->o.device = (int)ll;
            break;
        case O_EXCLUSIVE: c->o.exclusive = 1; break;
        case O_KEEPWORKER: c->o.keep_worker = 1; break;
        case O_STOP: snprintf(c->stop_user, sizeof c->stop_user, "%s", optarg); break;
        case O_METHOD:
            if (strcmp(optarg, "auto") && strcmp(optarg, "cold") && strcmp(optarg, "graph") &&
                strcmp(optarg, "stream"))
                return tb_cli_error("invalid value '%s' for --method (auto, cold, stream, graph)",
                                    optarg);
            snprintf(c->o.method, sizeof c->o.method, "%s", optarg);
            break;
        case O_L2:
            if (strcmp(optarg, "cold") && strcmp(optarg, "hot"))
                return tb_cli_error("invalid value '%s' for --l2 (cold, hot)", optarg);
            snprintf(c->o.l2, sizeof c->o.l2, "%s", optarg);
            break;
        case O_PROFILE: c->o.profile = 1; break;
        case O_NOENERGY: c->o.no_energy = 1; break;
        case O_PACE: if (tb_cli_double("--pace", optarg, 0, 100, &c->o.pace)) return 2; break;
        case O_METRICS:
            for (const char *q = optarg; *q; q++)
                if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
                      *q == '_' || *q == '.' || *q == ',' || *q == '|' || *q == ':'))
                    return tb_cli_error("invalid value '%s' for --metrics (sets banks, memory, compute, "
                                        "all, or metric names, comma separated)", optarg);
            if (!optarg[0]) return tb_cli_error("empty value for --metrics");
            snprintf(c->o.metrics, sizeof c->o.metrics, "%s", optarg);
            break;
        case O_SANITIZE:
            if (optarg && strcmp(optarg, "memcheck") && strcmp(optarg, "racecheck"))
                return tb_cli_error("invalid value '%s' for --sanitize (memcheck, racecheck)", optarg);
            snprintf(c->o.sanitize, sizeof c->o.sanitize, "%s", optarg ? optarg : "memcheck");
            break;
        case O_SHARD: {
            char m2[TB_MSG_LEN];
            if (tb_shard_parse(optarg, &c->shard_i, &c->shard_n, m2, sizeof m2)) return tb_cli_error("%s", m2);
            break;
        }
        case O_PLAN: c->plan_only = 1; break;
        case O_QUIET: c->quiet = 1; break;
        case O_NOPROG: c->progress = 0; break;
        case O_HELP: case 'h': help(); return -1;
        default: return tb_cli_bad_option("sweep", argv, optind, optopt);
        }
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'sweep'", argv[optind]);
    if (tb_cli_dtype_layout(c->o.dtype, c->o.layout)) return 2;
    if (c->o.min_samples > c->o.max_samples)
        return tb_cli_error("--min-samples %d is more than --max-samples %d", c->o.min_samples,
                            c->o.max_samples);
    if (!c->resume) {
        tb_sweep_cli_stop_spec(c);
        tb_stop *st;
        char m2[TB_MSG_LEN];
        if (tb_stop_create(c->o.stop, &st, m2, sizeof m2) != TB_OK) return tb_cli_error("%s", m2);
        tb_stop_free(st);
    }
    if (c->devices[0] && c->device_given)
        return tb_cli_error("--device and --devices are one or the other");
    if (c->o.keep_worker && c->devices[0])
        return tb_cli_error("--keep-worker is for one GPU: not with --devices");
    if (c->o.keep_worker && c->o.sanitize[0])
        return tb_cli_error("--keep-worker and --sanitize are one or the other (no context of "
                            "ours beside the sanitizer's)");
    if (c->o.keep_worker && c->o.metrics[0])
        return tb_cli_error("--keep-worker and --metrics are one or the other (the kept worker "
                            "would hold its buffers beside the counters' worker)");
    if (c->devices[0] && c->plan_only) {   /* kept for the run's --resume; checked here */
        tb_sweep_opts t = c->o;
        if (tb_cli_devices_parse(c->devices, &t)) return 2;
    }
    if (c->resume && c->explicit_opts)
        return tb_cli_error("--resume takes the run's own options; give only --db, --quiet, --no-progress");
    return 0;
}

static int sweep_body(int argc, char **argv, const tb_paths *paths, sweep_cli *c)
{
    const double t_start = tb_progress_now_s();
    c->progress = 1;
    tb_sweep_opts_default(&c->o);
    int rc = parse_args(argc, argv, c);
    if (rc) return rc < 0 ? 0 : rc;
    const char *db = c->db ? c->db : TB_DEFAULT_DB;
    char msg[TB_MSG_LEN];
    tb_store *st = NULL;
    tb_run_info *run = calloc(1, sizeof *run);

    if (c->resume) {
        /* the run's options come from the database, which must exist; read-only, so that a
         * file that cannot be resumed (an older schema, no such run, a complete run) is
         * refused before anything is written to it */
        rc = tb_store_open(db, 0, 1, &st, msg, sizeof msg);
        if (rc) { free(run); return tb_cli_error("%s", msg); }
        rc = tb_store_run_get(st, c->resume, run, msg, sizeof msg);
        tb_store_close(st);
        st = NULL;
        if (rc) { free(run); return tb_cli_error("%s", msg); }
        if (!strcmp(run->status, "complete")) {
            free(run);
            return tb_cli_error("run %lld in '%s' is already complete", c->resume, db);
        }
        if (tb_sweep_cli_options_from_json(run->options_json, c)) {
            free(run);
            return tb_cli_error("run %lld in '%s' has unreadable options", c->resume, db);
        }
    }
    if (c->nshp == 0) c->shp[c->nshp++] = strdup("square");
    if (c->nvp == 0) c->vp[c->nvp++] = strdup(paths->variants_dir);

    /* 1. every input, before anything runs or is written */
    tb_shape_list shapes = { 0 };
    for (size_t i = 0; i < c->nshp; i++)
        if ((rc = tb_shapes_add(&shapes, c->shp[i], paths->shapes_dir, msg, sizeof msg)))
            return tb_cli_error("%s", msg);
    if (tb_sweep_opts_for_shapes(&c->o, &shapes, msg, sizeof msg)) return tb_cli_error("%s", msg);
    char **files = NULL;
    size_t nfiles = 0;
    if ((rc = tb_catalog_expand(c->vp, c->nvp, &files, &nfiles, msg, sizeof msg)))
        return tb_cli_error("%s", msg);

    if (c->o.sanitize[0]) {
        const char *env = getenv("TILEBENCH_SANITIZER");
        const char *cands[] = { env, "/usr/local/cuda/bin/compute-sanitizer",
                                "/usr/local/cuda/compute-sanitizer/compute-sanitizer", NULL };
        c->o.sanitizer[0] = 0;
        for (int i = 0; i < 3; i++)
            if (cands[i] && access(cands[i], X_OK) == 0) {
                snprintf(c->o.sanitizer, sizeof c->o.sanitizer, "%s", cands[i]);
                break;
            }
        if (!c->o.sanitizer[0]) {
            char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL, *save = NULL;
            for (char *d = path ? strtok_r(path, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
                char cand[1024];
                snprintf(cand, sizeof cand, "%s/compute-sanitizer", d);
                if (access(cand, X_OK) == 0) { snprintf(c->o.sanitizer, sizeof c->o.sanitizer, "%s", cand); break; }
            }
            free(path);
        }
        if (!c->o.sanitizer[0])
            return tb_cli_error("--sanitize needs compute-sanitizer (not on PATH nor in "
                                "/usr/local/cuda/bin; set TILEBENCH_SANITIZER)");
    }

    /* 2. a GPU (a plan needs none) */
    tb_environment env;
    memset(&env, 0, sizeof env);
    tb_phases ph;
    memset(&ph, 0, sizeof ph);
    double tp = tb_progress_now_s();
    if (!c->plan_only && c->devices[0] && (rc = tb_cli_devices(paths, c->devices, &c->o, "sweep", &env)))
        return rc;
    if (!c->plan_only && !c->devices[0] && (rc = tb_cli_gpu(paths, &c->o, "sweep", &env))) return rc;

    /* 3. the variants: probe, select, SASS for this GPU (a plan keeps every variant: which
     * run on the GPU is decided when the plan is measured) */
    tb_catalog cat;
    memset(&cat, 0, sizeof cat);
    if ((rc = tb_cli_catalog_add(paths, &cat, files, nfiles, ""))) return rc;
    uint32_t ops = 0;   /* the operations of the shapes: variants of none of them are left out */
    for (size_t i = 0; i < shapes.n; i++) {
        const tb_op_desc *d = tb_op_of_shape(&shapes.v[i]);
        if (d && d->op < 32) ops |= 1u << d->op;
    }
    if ((rc = tb_cli_catalog_finish(&cat, c->plan_only ? NULL : &env, c->inc, c->ninc, c->exc, c->nexc, ops)))
        return rc;
    ph.s[TB_PH_PROBE] = tb_progress_now_s() - tp;

    /* 4. the store: now it may be created */
    if ((rc = tb_store_open(db, 1, 0, &st, msg, sizeof msg))) {
        tb_catalog_free(&cat);
        return tb_cli_error("%s", msg);
    }
    int *skip = calloc(shapes.n ? shapes.n : 1, sizeof *skip);
    size_t mine = shapes.n;   /* the shapes this job measures: its shard's */
    if (c->shard_n) {
        int *owner = calloc(shapes.n ? shapes.n : 1, sizeof *owner);
        if (!owner || tb_shard_assign(&shapes, c->shard_n, owner) != TB_OK) {
            free(owner);
            snprintf(msg, sizeof msg, "out of memory for --shard");
            rc = TB_ENOMEM;
            goto fail;
        }
        mine = 0;
        for (size_t s = 0; s < shapes.n; s++)
            if (owner[s] != c->shard_i) skip[s] = 1;
            else mine++;
        free(owner);
    }
    int64_t run_id;
    if (c->resume) {
        run_id = c->resume;
        tb_variant_info *old = NULL;
        size_t nold = 0;
        rc = tb_store_variants(st, run_id, &old, &nold, msg, sizeof msg);
        for (size_t i = 0; rc == TB_OK && i < cat.n; i++) {
            int found = 0;
            for (size_t j = 0; j < nold; j++)
                if (!strcmp(old[j].name, cat.v[i].name)) {
                    found = 1;
                    if (strcmp(old[j].sha256, cat.v[i].sha256))
                        rc = tb_fail(msg, sizeof msg, TB_EUSAGE, "cannot resume run %lld: '%s' "
                                     "changed since (sha256 %.12s..., was %.12s...)",
                                     (long long)run_id, cat.v[i].file, cat.v[i].sha256, old[j].sha256);
                    cat.v[i].id = old[j].id;
                }
            if (!found && rc == TB_OK)
                rc = tb_fail(msg, sizeof msg, TB_EUSAGE, "cannot resume run %lld: variant '%s' "
                             "was not in it", (long long)run_id, cat.v[i].name);
        }
        free(old);
        tb_result_row *rows = NULL;
        size_t nrows = 0;
        if (rc == TB_OK) rc = tb_store_results(st, run_id, &rows, &nrows, msg, sizeof msg);
        for (size_t s = 0; rc == TB_OK && s < shapes.n; s++) {
            if (skip[s]) continue;   /* another shard's */
            tb_problem_info pi;
            tb_sweep_problem(&shapes.v[s], &c->o, &pi);
            if ((rc = tb_store_put_problem(st, &pi, msg, sizeof msg))) break;
            size_t have = 0, any = 0;   /* measured; measured or planned */
            for (size_t r = 0; r < nrows; r++)
                if (rows[r].p.id == pi.id) { any++; have += rows[r].m.status != TB_STATUS_PLANNED; }
            if (have >= cat.n) skip[s] = 1;
            else if (any) rc = tb_store_delete_problem_measurements(st, run_id, pi.id, msg, sizeof msg);
        }
        free(rows);
        if (rc == TB_OK) rc = tb_store_run_set_status(st, run_id, "running", msg, sizeof msg);
        if (rc) goto fail;
    } else {
        char *oj = tb_sweep_cli_options_json(c, c->vp, c->nvp);
        rc = tb_cli_run_begin(st, argc, argv, oj, &cat, &run_id, msg, sizeof msg);
        cJSON_free(oj);
        if (rc) goto fail;
    }

    /* 5. a plan: every item recorded as planned, nothing measured */
    if (c->plan_only) {
        rc = tb_sweep_plan(st, run_id, &c->o, &cat, &shapes, skip, msg, sizeof msg);
        if (rc == TB_OK) rc = tb_store_run_set_status(st, run_id, "planned", msg, sizeof msg);
        if (rc) goto fail;
        char sh[48] = "";
        if (c->shard_n) snprintf(sh, sizeof sh, " (shard %d/%d: %zu of %zu shapes)", c->shard_i, c->shard_n,
                                mine, shapes.n);
        fprintf(stderr, "run %lld planned in %s: %zu variants x %zu shapes = %zu items%s; measure "
                "them with: tilebench sweep --db %s --resume %lld\n", (long long)run_id, db, cat.n,
                mine, cat.n * mine, sh, db, (long long)run_id);
        goto done;
    }

    /* 6. measure */
    double took = 0;
    ph.s[TB_PH_STARTUP] = tb_progress_now_s() - t_start - ph.s[TB_PH_PROBE];
    rc = tb_cli_run_measure(st, run_id, paths, &c->o, &cat, &shapes, skip, c->progress, c->quiet,
                            env.gpu_name, &took, &ph, msg, sizeof msg);
    if (rc == TB_EINTR) {
        tb_store_run_end(st, run_id, "interrupted", msg, sizeof msg);
        fprintf(stderr, "tilebench: interrupted; finish with: tilebench sweep --db %s --resume %lld\n",
                db, (long long)run_id);
        tb_store_close(st);
        return TB_EXIT_INTR;
    }
    if (rc) goto fail;
    /* where the time went: stored with the run before it is complete, printed last */
    ph.total_s = tb_progress_now_s() - t_start;
    if ((rc = tb_store_run_set_phases(st, run_id, &ph, msg, sizeof msg))) goto fail;
    if ((rc = tb_store_run_end(st, run_id, "complete", msg, sizeof msg))) goto fail;
    if (!c->quiet) tb_show_run(st, run_id, stdout, 0, c->o.metrics[0] != 0, msg, sizeof msg);
    char line[512];
    fprintf(stderr, "run %lld stored in %s (%.0f s)\ntime: %s\n", (long long)run_id, db, took,
            tb_phases_format(&ph, line, sizeof line));
done:
    tb_store_close(st);
    tb_catalog_free(&cat);
    tb_shapes_free(&shapes);
    free(skip);
    free(run);
    return 0;
fail:
    tb_cli_error("%s", msg);
    if (st) tb_store_close(st);
    return tb_cli_exit_for(rc) == TB_EXIT_USAGE ? TB_EXIT_USAGE : TB_EXIT_FAIL;
}

/* sweep_body with its argument strings freed on every way out: search calls sweep once per
 * round in one process (cmd_search.c), so nothing may pile up */
int cmd_sweep(int argc, char **argv, const tb_paths *paths)
{
    sweep_cli c;
    memset(&c, 0, sizeof c);
    const int rc = sweep_body(argc, argv, paths, &c);
    for (size_t i = 0; i < c.nvp; i++) free(c.vp[i]);
    for (size_t i = 0; i < c.ninc; i++) free(c.inc[i]);
    for (size_t i = 0; i < c.nexc; i++) free(c.exc[i]);
    for (size_t i = 0; i < c.nshp; i++) free(c.shp[i]);
    return rc;
}
