/* worker.c - tilebench-worker: the process that touches the GPU and runs variant code.
 *
 * Modes (argv[1]):
 *   probe FILE...   load each library, report its variants (no CUDA initialisation: works
 *                   on a machine without a GPU). Emits {"type":"loading","file"} before and
 *                   {"type":"file",...} after each file, so a crash names its file.
 *   env [--device N] report the GPU and software environment ({"type":"env"}).
 *   measure         read one job (a JSON line) on stdin and measure its variants on its one
 *                   problem, in phases (docs/method.md):
 *                   A. per variant: supports, setup, the trials before timing;
 *                   B. the valid variants' samples in interleaved rounds (A B C A B C ...),
 *                      each variant stopped by its own criterion;
 *                   D. the best few again, interleaved: the winner confirmed or not;
 *                   C. per variant: input and hidden-work checks, energy, the trial after
 *                      timing, teardown, the result record.
 *                   Every step that runs variant code is announced ({"type":"begin"}), so the
 *                   parent knows whom to blame. Ends with {"type":"done"}.
 * Records go to fd 3 when it is open (the parent's result pipe), else to stdout: a variant
 * that prints cannot forge or corrupt a record by writing to stdout.
 * A CUDA error that leaves the context unusable ends the worker after its result is sent;
 * the parent starts a new one for the variants left.
 */
#define _GNU_SOURCE
#include "common/tb.h"
#include "common/wire.h"
#include "worker/loader.h"
#include "worker/measure.h"
#include "common/stats.h"
#include "worker/validate.h"
#include "common/nvml.h"
#include "device/tbdev.h"
#include "reference/ref.h"
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <nvtx3/nvToolsExt.h>
#include "common/stop.h"
#include "worker/nvml_sampler.h"
#include "worker/counters/worker_counters.h"
#include "worker/worker_calibrate.h"
#include "worker/worker_common.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int out_fd = 1;

static void send_obj(cJSON *o) { tbw_send(out_fd, o); }
static void send_simple(const char *type, const char *key, const char *val)
{
    tbw_send_simple(out_fd, type, key, val);
}

/* ---- probe ------------------------------------------------------------------------------ */

static int cmd_probe(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char msg[TB_MSG_LEN];
        send_simple("loading", "file", argv[i]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "file");
        cJSON_AddStringToObject(o, "file", argv[i]);
        tb_lib *lib = NULL;
        int rc = tb_lib_open(argv[i], &lib, msg, sizeof msg);
        if (rc) {
            cJSON_AddStringToObject(o, "error", msg);
            send_obj(o);
            continue;
        }
        cJSON *vs = cJSON_AddArrayToObject(o, "variants");
        cJSON *refused = cJSON_AddArrayToObject(o, "refused");
        for (uint32_t idx = 0;; idx++) {
            const tb_variant *v = NULL;
            rc = tb_lib_variant(lib, idx, &v, msg, sizeof msg);
            if (rc) { cJSON_AddItemToArray(refused, cJSON_CreateString(msg)); continue; }
            if (!v) break;
            char pj[1024];
            cJSON *vo = cJSON_CreateObject();
            cJSON_AddNumberToObject(vo, "index", idx);
            cJSON_AddStringToObject(vo, "name", v->name);
            cJSON_AddStringToObject(vo, "family", v->family);
            cJSON_AddStringToObject(vo, "sass", v->sass ? v->sass : "");
            tb_params_json(v->params, pj, sizeof pj);
            cJSON_AddStringToObject(vo, "params", pj);
            cJSON_AddItemToArray(vs, vo);
        }
        tb_lib_free(lib);
        send_obj(o);
    }
    send_simple("done", NULL, NULL);
    return 0;
}

/* ---- environment ------------------------------------------------------------------------ */

static int collect_env(int device, tb_environment *e, char *msg, size_t len)
{
    struct cudaDeviceProp p;
    memset(e, 0, sizeof *e);
    cudaError_t ce = cudaGetDeviceProperties(&p, device);
    if (ce != cudaSuccess)
        return tb_fail(msg, len, TB_ENOGPU, "no usable GPU %d: %s", device, cudaGetErrorString(ce));
    snprintf(e->gpu_name, sizeof e->gpu_name, "%s", p.name);
    tbw_uuid(&p, e->gpu_uuid, sizeof e->gpu_uuid);
    snprintf(e->pci_bus_id, sizeof e->pci_bus_id, "%08X:%02X:%02X.0", p.pciDomainID, p.pciBusID,
             p.pciDeviceID);
    e->cc_major = p.major;
    e->cc_minor = p.minor;
    e->sm_count = p.multiProcessorCount;
    e->l2_bytes = p.l2CacheSize;
    e->mem_bytes = (int64_t)p.totalGlobalMem;
    cudaDriverGetVersion(&e->cuda_driver_version);
    cudaRuntimeGetVersion(&e->cuda_runtime_version);
    e->cublas_version = (int)tb_ref_cublas_version();
    uint32_t cv = 0;
    e->cupti_version = cuptiGetVersion(&cv) == CUPTI_SUCCESS ? (int)cv : -1;
    e->sm_clock_max_mhz = e->sm_clock_mhz = e->mem_clock_mhz = e->power_limit_mw = -1;
    char nm[TB_MSG_LEN];
    tb_nvml_dev *nd;
    int max_clk_attr = 0;
    cudaDeviceGetAttribute(&max_clk_attr, cudaDevAttrClockRate, device);
    if (tb_nvml_open(nm, sizeof nm) == TB_OK &&
        tb_nvml_device_by_pci(e->pci_bus_id, &nd, nm, sizeof nm) == TB_OK) {
        tb_nvml_clocks(nd, &e->sm_clock_mhz, &e->sm_clock_max_mhz, &e->mem_clock_mhz);
        tb_nvml_power_limit_mw(nd, &e->power_limit_mw);
        tb_nvml_driver_version(e->driver_version, sizeof e->driver_version);
        int pids[64];
        unsigned np = 0, others = 0;
        char plist[256] = "";
        size_t at = 0;
        if (tb_nvml_compute_pids(nd, pids, 64, &np) == TB_OK)
            for (unsigned i = 0; i < np && i < 64; i++)
                if (pids[i] != (int)getpid()) {
                    others++;
                    if (at < sizeof plist - 16)
                        at += (size_t)snprintf(plist + at, sizeof plist - at, "%s%d", at ? "," : "", pids[i]);
                }
        unsigned long long reasons = 0;
        tb_nvml_throttle_reasons(nd, &reasons);
        snprintf(e->extra_json, sizeof e->extra_json, "{\"nvml\":true,\"cuda_clock_rate_khz\":%d,"
                 "\"other_processes\":%u,\"other_pids\":[%s],\"clock_event_reasons\":%llu}",
                 max_clk_attr, others, plist, reasons);
    } else {
        snprintf(e->extra_json, sizeof e->extra_json, "{\"nvml\":false,\"cuda_clock_rate_khz\":%d}",
                 max_clk_attr);
        if (max_clk_attr > 0) e->sm_clock_max_mhz = max_clk_attr / 1000;
    }
    gethostname(e->hostname, sizeof e->hostname - 1);
    struct utsname un;
    if (uname(&un) == 0) snprintf(e->os, sizeof e->os, "%s %s %s", un.sysname, un.release, un.machine);
    return TB_OK;
}

/* --device: an index, or a UUID ("GPU-...") matched against every CUDA device's. */
static int resolve_device(const char *spec, int *dev, char *msg, size_t len)
{
    if (strncmp(spec, "GPU-", 4) != 0) { *dev = atoi(spec); return TB_OK; }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    for (int i = 0; i < n; i++) {
        tb_environment e;
        char m2[TB_MSG_LEN];
        if (collect_env(i, &e, m2, sizeof m2) == TB_OK && strcasecmp(e.gpu_uuid, spec) == 0) {
            *dev = i;
            return TB_OK;
        }
    }
    return tb_fail(msg, len, TB_ENOGPU, "no GPU with UUID %s (%d devices)", spec, n);
}

static int cmd_env(int device)
{
    char msg[TB_MSG_LEN];
    tb_environment e;
    int rc = collect_env(device, &e, msg, sizeof msg);
    if (rc) { send_simple("fatal", "error", msg); return 2; }
    cJSON *o = tb_wire_env_to_json(&e);
    cJSON_AddStringToObject(o, "type", "env");
    send_obj(o);
    return 0;
}

/* ---- measure ---------------------------------------------------------------------------- */

typedef struct job_variant {
    const tb_variant *v;
    char name[TB_NAME_LEN];
    char file[TB_PATH_LEN];
    int index;
} job_variant;

typedef struct launch_ctx {
    const tb_variant *v;
    void *state;
    tb_problem prob;
    tb_buffers io;
    void *ws;
    size_t ws_bytes;
    tb_buffers *sets;      /* the graph method's input sets, or NULL */
} launch_ctx;

static int do_launch(void *c, cudaStream_t s)
{
    launch_ctx *l = c;
    return l->v->launch(l->state, &l->prob, &l->io, l->ws, l->ws_bytes, (tb_stream)s);
}

static int do_launch_set(void *c, int set, cudaStream_t s)
{
    launch_ctx *l = c;
    return l->v->launch(l->state, &l->prob, &l->sets[set], l->ws, l->ws_bytes, (tb_stream)s);
}

static void heartbeat(void *ctx, int n)
{
    (void)ctx;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "progress");
    cJSON_AddNumberToObject(o, "n", n);
    send_obj(o);
}

static size_t extent(tb_layout lay, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t stride)
{
    int64_t one = lay == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)((batch - 1) * stride + one);
}

/* Is the context still usable after an error? A sticky error (illegal address, launch
 * failure) poisons it for good. */
static int context_ok(void)
{
    if (cudaDeviceSynchronize() != cudaSuccess) return 0;
    void *p = NULL;
    if (cudaMalloc(&p, 256) != cudaSuccess) return 0;
    cudaFree(p);
    return cudaGetLastError() == cudaSuccess;
}

static uint64_t hash_str(const char *s, uint64_t h)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001B3ull;
    return h;
}

#define TB_GRAPH_BELOW_MS 0.1    /* auto: kernels under this use a batched method */
#define TB_GRAPH_TARGET_MS 2.0   /* a graph or stream sample lasts about this long */
#define TB_STREAM_MAX_REPS 512   /* a stream sample queues at most this many launches behind
                                    the blocking kernel (the launch queue must not fill) */
#define TB_CONFIRM_TOP 3         /* the confirming pass takes the best this many */
/* a sample under this x the max SM clock is "low clock": nvbench's default fraction. Not 0.90:
 * measured over the sample (clock stamps), a big GEMM on the H100 runs at 0.76-0.81 x the
 * maximum with no throttle reason set, and every one of its samples would be flagged */
#define TB_LOW_CLOCK_FRAC 0.75

typedef struct worker {
    int device;
    cudaStream_t s;
    tb_ref *ref;
    tb_gemm g;
    tb_val_bufs vb;
    tb_measure_dev md;
    tb_init_dist dist;
    uint64_t seed;
    int trials;
    int validate_only;   /* one trial, no timing: the --sanitize pass */
    int warmup;
    char stop_spec[512];
    char method[8];      /* auto | cold | graph | stream */
    int l2_hot;          /* --l2 hot: no flush, one input set */
    int profile;         /* --profile: no blocking kernel */
    int energy;          /* measure joules per launch (default 1) */
    double pace;         /* rest pace x each sample's wall time after it (default 0) */
    char profiler[128];  /* why the blocking kernel is off, "" when on */
    tb_environment env;
    tb_buffers *sets;    /* graph input sets, allocated on first use */
    int nsets;
    double base_cold, base_graph;   /* hidden-work baselines */
    double event_ms;     /* what an empty event pair reads (stored, not removed: docs/method.md) */
    double noop_ms;      /* what events around one empty kernel read (stored, information) */
    tb_nvml_dev *nvml;
    cudaStream_t side;   /* the stream-discipline check's second stream, made on first use */
    unsigned long long *held_words;   /* its three counts */
} worker;

typedef struct vstate {
    job_variant *jv;
    launch_ctx lc;
    tb_measurement m;
    int use_naive;
    uint64_t seeds[3], hseed;
    int ntr;
    int active;          /* validated and being timed */
    int sampling;        /* still taking samples in the current pass */
    int sent;            /* its result went out */
    char method[8];
    char method_note[160];
    cudaGraphExec_t graph;
    int reps;            /* launches per sample of the graph or stream method; 0: cold */
    tb_stop *stop;
    double *ms, *wall, *clk;
    int n, cap, block_timeouts;
    double elapsed_s;
    char stop_why[96];
    double confirm_median;
    int confirmed;       /* -1 not in the confirming pass, 0 lost it, 1 kept it */
    double energy_j, power_w;
    int energy_launches;
    double first_wall_ms;   /* device-synchronised wall time of the last validated launch */
    double est_wall_ms;     /* ... of the first one */
    double last_event_ms;   /* event time of the last validated launch */
    double held_event_ms;   /* event time of the stream-discipline launch (no host gap); NaN */
    int short_kernel;       /* its estimate is under TB_GRAPH_BELOW_MS */
} vstate;

static double gemm_flops(const tb_gemm *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
}

static void send_begin(const vstate *vs, const char *phase)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "begin");
    cJSON_AddStringToObject(o, "variant", vs->jv->name);
    cJSON_AddStringToObject(o, "phase", phase);
    send_obj(o);
}

/* NVTX: variant -> shape -> phase, so `ncu --nvtx --nvtx-include "tb/<variant>/<shape>/timed/"`
 * selects exactly one variant's timed launches on one shape. */
static void nvtx_push(const worker *w, const vstate *vs, const char *phase)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)w->g.m, (long long)w->g.n,
             (long long)w->g.k);
    nvtxRangePushA("tb");
    nvtxRangePushA(vs->jv->name);
    nvtxRangePushA(shape);
    nvtxRangePushA(phase);
}

static void nvtx_pop(void)
{
    for (int i = 0; i < 4; i++) nvtxRangePop();
}

/* Record a CUDA failure as a crash; returns 1 if the worker must end (context lost). */
static int cuda_crash(tb_measurement *m, const char *what, const char *err)
{
    m->status = TB_STATUS_CRASHED;
    snprintf(m->reason, sizeof m->reason, "%s: %s", what, err);
    return !context_ok();
}

/* A persisting-L2 carve-out survives the flush: find one (device limit or an access-policy
 * window on our stream), describe it, and undo it. Returns 1 when one was found. */
static int persisting_l2_found(cudaStream_t s, char *why, size_t n)
{
    size_t lim = 0;
    cudaStreamAttrValue v;
    memset(&v, 0, sizeof v);
    cudaDeviceGetLimit(&lim, cudaLimitPersistingL2CacheSize);
    cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
    size_t win = v.accessPolicyWindow.num_bytes;
    cudaGetLastError();
    if (lim == 0 && win == 0) return 0;
    snprintf(why, n, "a persisting-L2 carve-out was set (limit %zu bytes, access-policy window "
             "%zu bytes on the harness's stream); it survives the L2 flush", lim, win);
    memset(&v, 0, sizeof v);
    cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    cudaGetLastError();
    return 1;
}

static uint64_t hidden_seed(void)
{
    uint64_t x = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd >= 0) {
        if (read(fd, &x, sizeof x) != (ssize_t)sizeof x) x = 0;
        close(fd);
    }
    if (!x) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
    }
    return x & ((1ull << 52) - 1);   /* exact in a JSON number */
}

/* The hidden-work rule (docs/method.md). */
#define TB_HIDDEN_MIN_MS 0.015
#define TB_HIDDEN_FRAC 0.25

/* One validated launch: the launch, a device sync, the check. Returns 0 ok (vr filled),
 * 1 failed (m filled), 2 context lost (m filled). */
static double wall_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int validated_launch(worker *w, vstate *vs, int trial, tb_val_result *vr, double *launch_ms)
{
    char msg[TB_MSG_LEN];
    tb_measurement *m = &vs->m;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    nvtx_push(w, vs, "validation");
    double t0 = wall_now_ms();
    cudaEventRecord(e0, w->s);
    int lrc = do_launch(&vs->lc, w->s);
    cudaEventRecord(e1, w->s);
    nvtx_pop();
    if (lrc) {
        m->status = TB_STATUS_CRASHED;
        snprintf(m->reason, sizeof m->reason, "launch returned %d (trial %d)", lrc, trial + 1);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        return context_ok() ? 1 : 2;
    }
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) {
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        return cuda_crash(m, "kernel failed", cudaGetErrorString(e)) ? 2 : 1;
    }
    vs->first_wall_ms = wall_now_ms() - t0;   /* to the device synchronisation */
    float f = 0;
    cudaEventElapsedTime(&f, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *launch_ms = f;
    vs->last_event_ms = f;
    if (tb_validate_check(&w->g, &w->vb, w->dist, w->s, vr, msg, sizeof msg) != TB_OK)
        return cuda_crash(m, "validation failed to run", msg) ? 2 : 1;
    return 0;
}

/* Fold one trial's verdict into the measurement; returns 1 if it failed. */
static int record_trial(tb_measurement *m, const tb_val_result *vr, int trial, int after_timing)
{
    m->trials = trial + 1;
    m->atol = vr->atol;
    m->rtol = vr->rtol;
    if (isnan(m->max_abs_err) || !vr->passed || vr->max_abs_err > m->max_abs_err) {
        m->max_abs_err = vr->max_abs_err;
        m->rel_fro_err = vr->rel_fro_err;
        m->n_bad = (int64_t)vr->n_bad;
        m->n_nonfinite = (int64_t)vr->n_nonfinite;
    }
    if (vr->passed) return 0;
    m->disposition = TB_DISP_INCORRECT;
    snprintf(m->rule, sizeof m->rule, "%s%s", after_timing ? "after-timing/" : "", vr->rule);
    snprintf(m->reason, sizeof m->reason, "trial %d%s: %s", trial + 1,
             after_timing ? " (after timing, new inputs at the same pointers)" : "", vr->reason);
    return 1;
}

static void flag(tb_measurement *m, const char *rule, const char *why)
{
    m->disposition = TB_DISP_INCORRECT;
    snprintf(m->rule, sizeof m->rule, "%s", rule);
    snprintf(m->reason, sizeof m->reason, "%s", why);
}

/* The rule "off-stream": a launch puts all its work on the stream it is given, in order,
 * so events on that stream bracket it (the ABI's contract). One more launch on a poisoned D,
 * behind the held blocking kernel: D is counted on a second stream while the first is still
 * held (an element written there was written by work off the stream, before any event on it
 * could start), and in stream order right after the launch; after the device synchronisation
 * it is counted once more (what the launch writes in all). Fewer elements in stream order
 * than in all: the stream's work ended while D was still being written elsewhere. The timing
 * methods cannot see such work, and the hidden-work rule (wall time against events) misses
 * it below 15 us a launch; this rule has no threshold. Needs the blocking kernel: skipped
 * under a profiler. Returns 0 or 1/2 as phase_a. */
typedef struct held_ctx { worker *w; vstate *vs; } held_ctx;

static int held_launch(void *c, cudaStream_t s)
{
    held_ctx *h = c;
    cudaEventRecord(h->w->md.e0, s);
    int lrc = do_launch(&h->vs->lc, s);
    cudaEventRecord(h->w->md.e1, s);
    if (lrc) return lrc;
    return tbdev_count_ne_u16(h->w->vb.d, h->w->vb.nd, TB_POISON_BF16, h->w->held_words + 0, s);
}

static int held_probe(void *c, cudaStream_t side)
{
    held_ctx *h = c;
    return tbdev_count_ne_u16(h->w->vb.d, h->w->vb.nd, TB_POISON_BF16, h->w->held_words + 1, side);
}

static int stream_check(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    tb_measurement *m = &vs->m;
    if (!w->md.use_block) return 0;
    if (!w->side && (cudaStreamCreateWithFlags(&w->side, cudaStreamNonBlocking) != cudaSuccess ||
                     cudaMalloc((void **)&w->held_words, 3 * sizeof *w->held_words) != cudaSuccess)) {
        cudaGetLastError();
        return 0;
    }
    if (tb_validate_repoison(&w->vb, w->s, msg, sizeof msg) != TB_OK ||
        cudaStreamSynchronize(w->s) != cudaSuccess)
        return cuda_crash(m, "cannot poison D", msg) ? 2 : 1;
    held_ctx h = { w, vs };
    int held = 0;
    /* long enough for a launch's work to be over wherever it runs */
    double hold = fmin(2.0 * vs->first_wall_ms + 0.5, 100.0);
    nvtx_push(w, vs, "stream-check");
    int rc = tb_run_held(&w->md, held_launch, &h, hold, w->side, held_probe, &h, &held, msg,
                         sizeof msg);
    nvtx_pop();
    if (rc == TB_EWORKER) {
        m->status = TB_STATUS_CRASHED;
        snprintf(m->reason, sizeof m->reason, "%s (the stream-discipline launch)", msg);
        return context_ok() ? 1 : 2;
    }
    if (rc) return cuda_crash(m, "kernel failed", msg) ? 2 : 1;
    float f = 0;
    /* the launch's GPU time with no host gap in it: the estimate auto chooses from */
    if (held && cudaEventElapsedTime(&f, w->md.e0, w->md.e1) == cudaSuccess && f > 0)
        vs->held_event_ms = f;
    cudaGetLastError();
    unsigned long long n[3] = { 0, 0, 0 };
    if (tbdev_count_ne_u16(w->vb.d, w->vb.nd, TB_POISON_BF16, w->held_words + 2, w->s) != 0 ||
        cudaMemcpyAsync(n, w->held_words, sizeof n, cudaMemcpyDeviceToHost, w->s) != cudaSuccess ||
        cudaStreamSynchronize(w->s) != cudaSuccess)
        return cuda_crash(m, "cannot count D", "after the stream-discipline launch") ? 2 : 1;
    if (held && n[1] > 0) {
        snprintf(why, sizeof why, "off-stream work: %llu of the %llu elements of D it writes were "
                 "written while its stream was held, before any work on that stream could run",
                 n[1], n[2]);
        flag(m, "off-stream", why);
        return 1;
    }
    if (n[0] < n[2]) {
        snprintf(why, sizeof why, "off-stream work: when the work on its stream had ended, %llu "
                 "of the %llu elements of D it writes were not yet written", n[2] - n[0], n[2]);
        flag(m, "off-stream", why);
        return 1;
    }
    return 0;
}

/* Phase A for one variant: supports, setup, workspace, the trials before timing. Returns 0
 * when it is valid and may be timed; 1 when its result is final (unsupported, error, crashed,
 * invalid); 2 when the context is lost. */
static int phase_a(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    const tb_variant *v = vs->jv->v;
    launch_ctx *lc = &vs->lc;
    tb_measurement *m = &vs->m;
    lc->v = v;
    lc->prob.struct_size = sizeof lc->prob;
    lc->prob.op = TB_OP_GEMM;
    lc->prob.gemm = w->g;
    lc->io.struct_size = sizeof lc->io;
    lc->io.in[0] = w->vb.a;
    lc->io.in[1] = w->vb.b;
    lc->io.in[2] = w->g.beta != 0.0 ? w->vb.c : NULL;
    lc->io.out[0] = w->vb.d;
    vs->use_naive = strcmp(v->family, "cublaslt") == 0;   /* not validated against itself */
    uint64_t vseed = hash_str(v->name, w->seed ^ 0xcbf29ce484222325ull) & ((1ull << 50) - 1);
    vs->hseed = hidden_seed();
    vs->seeds[0] = vseed;
    vs->seeds[1] = vs->hseed;
    vs->seeds[2] = vseed + 7919;
    vs->ntr = w->trials < 2 ? 2 : w->trials;   /* the last one always runs after timing */
    vs->confirmed = -1;
    double launch_ms = 0;
    tb_val_result vr;
    int r;

    if (v->supports) {
        char sw[256] = "";
        if (!v->supports(&lc->prob, sw, sizeof sw)) {
            m->status = TB_STATUS_UNSUPPORTED;
            snprintf(m->reason, sizeof m->reason, "%s", sw[0] ? sw : "not supported");
            return 1;
        }
    }
    if (v->setup) {
        char sm[256] = "";
        if (v->setup(&lc->prob, (tb_stream)w->s, &lc->state, sm, sizeof sm) != 0) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "setup failed: %s", sm[0] ? sm : "(no message)");
            lc->state = NULL;
            return context_ok() ? 1 : 2;
        }
    }
    if (v->describe && v->describe(lc->state, m->describe, sizeof m->describe) != 0)
        m->describe[0] = 0;
    lc->ws_bytes = v->workspace_size ? v->workspace_size(&lc->prob) : 0;
    m->workspace_bytes = (int64_t)lc->ws_bytes;
    if (lc->ws_bytes) {
        cudaError_t e = cudaMalloc(&lc->ws, lc->ws_bytes);
        if (e != cudaSuccess) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "cannot allocate %zu workspace bytes: %s",
                     lc->ws_bytes, cudaGetErrorString(e));
            cudaGetLastError();
            lc->ws = NULL;
            return 1;
        }
    }
    if (persisting_l2_found(w->s, why, sizeof why)) { flag(m, "persisting-l2", why); return 1; }
    for (int t = 0; t < vs->ntr - 1; t++) {
        uint64_t seed = t < 2 ? vs->seeds[t] : vseed + 104729ull * (uint64_t)t;
        if (tb_validate_prepare(w->ref, &w->g, &w->vb, seed, w->dist, vs->use_naive, t == 0, w->s,
                                msg, sizeof msg)) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "%s", msg);
            return context_ok() ? 1 : 2;
        }
        r = validated_launch(w, vs, t, &vr, &launch_ms);
        if (r) return r;
        if (t == 0) {
            m->first_launch_ms = launch_ms;
            vs->est_wall_ms = vs->first_wall_ms;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", "estimate");
            /* the larger of the two: work on another stream is in the wall time only */
            cJSON_AddNumberToObject(o, "first_launch_ms", fmax(launch_ms, vs->first_wall_ms));
            send_obj(o);
        } else {
            heartbeat(NULL, 0);
        }
        if (record_trial(m, &vr, t, 0)) return 1;   /* invalid: never timed, never ranked */
        if (w->validate_only) { m->disposition = TB_DISP_PASSED; return 1; }
        if (persisting_l2_found(w->s, why, sizeof why)) { flag(m, "persisting-l2", why); return 1; }
    }
    return stream_check(w, vs);
}

/* The graph method's input sets: enough copies of A, B, C, D that their total passes 2 x L2
 * (one with --l2 hot), each filled with its own random inputs. */
static int ensure_sets(worker *w, char *msg, size_t len)
{
    if (w->sets) return TB_OK;
    tb_val_bufs *b = &w->vb;
    size_t bytes = (b->na + b->nb + b->nc + b->nd) * 2;
    int n = w->l2_hot ? 1 : (int)((2.0 * (double)w->env.l2_bytes) / (double)bytes) + 2;
    if (n > 256) n = 256;
    if (n < 1) n = 1;
    w->sets = calloc((size_t)n, sizeof *w->sets);
    for (int i = 0; i < n; i++) {
        tb_buffers *io = &w->sets[i];
        io->struct_size = sizeof *io;
        if (i == 0) {   /* the main buffers are set 0 */
            io->in[0] = b->a; io->in[1] = b->b; io->in[2] = w->g.beta != 0.0 ? b->c : NULL;
            io->out[0] = b->d;
            continue;
        }
        void *a, *bb, *c = NULL, *d;
        if (cudaMalloc(&a, b->na * 2 + 8) || cudaMalloc(&bb, b->nb * 2 + 8) ||
            (b->nc && cudaMalloc(&c, b->nc * 2 + 8)) || cudaMalloc(&d, b->nd * 2 + 8)) {
            cudaGetLastError();
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate graph input set %d of %d", i, n);
        }
        tbdev_fill_bf16(a, b->na, w->seed * 31 + (uint64_t)i * 4 + 1, w->dist, w->s);
        tbdev_fill_bf16(bb, b->nb, w->seed * 31 + (uint64_t)i * 4 + 2, w->dist, w->s);
        if (c) tbdev_fill_bf16(c, b->nc, w->seed * 31 + (uint64_t)i * 4 + 3, w->dist, w->s);
        io->in[0] = a; io->in[1] = bb; io->in[2] = w->g.beta != 0.0 ? c : NULL; io->out[0] = d;
    }
    w->nsets = n;
    return cudaStreamSynchronize(w->s) == cudaSuccess ? TB_OK
        : tb_fail(msg, len, TB_ECUDA, "cannot fill the graph input sets");
}

/* The variant's first estimate: the held launch's event time (GPU time only, the launch
 * queued before its stream ran), else the validated launches' (those hold the host's launch
 * time too: the first one pays for lazy module loading, so the lesser of the first and the
 * last). */
static double estimate_ms(const vstate *vs)
{
    if (isfinite(vs->held_event_ms)) return vs->held_event_ms;
    return fmin(vs->m.first_launch_ms, vs->last_event_ms);
}

/* Is the variant a short kernel for --method auto? Without the held launch, only if its
 * device-synchronised wall time is short too: work hidden on another stream would not be
 * captured into a graph, nor timed. */
static int is_short(const vstate *vs)
{
    double est = estimate_ms(vs);
    if (isfinite(vs->held_event_ms)) return est < TB_GRAPH_BELOW_MS;
    return est < TB_GRAPH_BELOW_MS && vs->first_wall_ms < TB_GRAPH_BELOW_MS + 0.1;
}

/* Choose and prepare the variant's method; warm it up. shape_short: under --method auto, a
 * variant of this shape is short, and every variant of it is timed by the stream method, so
 * that a shape's figures come from one method. Returns 0, or 1/2 as phase_a. */
static int prepare_timing(worker *w, vstate *vs, int shape_short)
{
    char msg[TB_MSG_LEN];
    double est = estimate_ms(vs);
    int graph = !strcmp(w->method, "graph");
    /* without the blocking kernel (under a profiler) stream launches would be timed at the
     * host's pace: there the stream method falls back to the graph */
    int stream = !strcmp(w->method, "stream") || (!strcmp(w->method, "auto") && shape_short);
    if (stream && !strcmp(w->method, "auto") && !vs->short_kernel)
        snprintf(vs->method_note, sizeof vs->method_note, "stream, as the shorter variants of "
                 "this shape (estimate %.4f ms)", est);
    if (stream && !w->md.use_block) {
        snprintf(vs->method_note, sizeof vs->method_note, "graph instead of stream: no "
                 "blocking kernel (%s)", w->profiler[0] ? w->profiler : "--profile");
        stream = 0;
        graph = 1;
    }
    snprintf(vs->method, sizeof vs->method, "cold");
    if ((graph || stream) && ensure_sets(w, msg, sizeof msg) != TB_OK) {
        snprintf(vs->method_note, sizeof vs->method_note, "%s method unavailable: %s",
                 stream ? "stream" : "graph", msg);
        graph = stream = 0;
    }
    if (graph || stream) {
        /* launches for a sample of about TB_GRAPH_TARGET_MS, a whole number of rotations */
        int most = stream ? TB_STREAM_MAX_REPS : 4000;
        int reps = est > 0 ? (int)ceil(TB_GRAPH_TARGET_MS / est) : 100;
        if (reps > most) reps = most;
        if (reps < w->nsets) reps = w->nsets;
        reps = (reps + w->nsets - 1) / w->nsets * w->nsets;
        if (reps > most && reps > w->nsets) reps -= w->nsets;
        vs->lc.sets = w->sets;
        vs->reps = reps;
        if (stream) snprintf(vs->method, sizeof vs->method, "stream");
    }
    if (graph) {
        int reps = vs->reps;
        vs->reps = 0;
        int cap = tb_graph_capture(&w->md, do_launch_set, &vs->lc, reps, w->nsets, &vs->graph,
                                   msg, sizeof msg);
        if (cap == TB_OK && w->md.last_graph_kernels == 0) {
            /* nothing was captured: the work went elsewhere; time it cold, where the
             * hidden-work rule sees it */
            cudaGraphExecDestroy(vs->graph);
            vs->graph = NULL;
            cap = TB_EWORKER;
            snprintf(msg, sizeof msg, "the captured graph has no kernel: the launches did not "
                     "run on the given stream");
        }
        if (cap == TB_OK) {
            vs->reps = reps;
            snprintf(vs->method, sizeof vs->method, "graph");
        } else {
            snprintf(vs->method_note, sizeof vs->method_note, "cold events instead of a "
                     "graph: %s", msg);
            if (!context_ok()) { cuda_crash(&vs->m, "graph capture", msg); return 2; }
        }
    }
    if (tb_stop_create(w->stop_spec, &vs->stop, msg, sizeof msg) != TB_OK) {
        vs->m.status = TB_STATUS_ERROR;
        snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
        return 1;
    }
    vs->cap = 256;
    vs->ms = malloc(sizeof(double) * (size_t)vs->cap);
    vs->wall = malloc(sizeof(double) * (size_t)vs->cap);
    vs->clk = malloc(sizeof(double) * (size_t)vs->cap);
    /* warm-up, unflushed */
    send_begin(vs, "warm-up");
    nvtx_push(w, vs, "warm-up");
    int lrc = 0;
    for (int i = 0; i < w->warmup && !lrc; i++)
        lrc = vs->graph ? (int)cudaGraphLaunch(vs->graph, w->s) : do_launch(&vs->lc, w->s);
    nvtx_pop();
    cudaError_t e = cudaDeviceSynchronize();
    if (lrc || e != cudaSuccess) {
        if (e == cudaSuccess) {
            vs->m.status = TB_STATUS_CRASHED;
            snprintf(vs->m.reason, sizeof vs->m.reason, "launch returned %d during warm-up", lrc);
            return context_ok() ? 1 : 2;
        }
        return cuda_crash(&vs->m, "kernel failed during warm-up", cudaGetErrorString(e)) ? 2 : 1;
    }
    return 0;
}

static int push_sample(vstate *vs, const tb_sample *smp)
{
    if (vs->n == vs->cap) {
        vs->cap *= 2;
        vs->ms = realloc(vs->ms, sizeof(double) * (size_t)vs->cap);
        vs->wall = realloc(vs->wall, sizeof(double) * (size_t)vs->cap);
        vs->clk = realloc(vs->clk, sizeof(double) * (size_t)vs->cap);
        if (!vs->ms || !vs->wall || !vs->clk) return TB_ENOMEM;
    }
    vs->ms[vs->n] = smp->ms;
    vs->wall[vs->n] = smp->wall_ms;
    vs->clk[vs->n] = smp->clock_mhz;
    vs->n++;
    vs->block_timeouts += smp->block_timeout;
    return TB_OK;
}

typedef struct nvtx_ctx { const worker *w; const vstate *vs; } nvtx_ctx;

static void nvtx_around(void *c, int begin)
{
    nvtx_ctx *n = c;
    if (begin) nvtx_push(n->w, n->vs, "timed");
    else nvtx_pop();
}


/* One sample of one variant. Returns 0, or 1/2 as phase_a (the variant's timing is over). */
static int take_sample(worker *w, vstate *vs, tb_sample *smp)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    nvtx_ctx nc = { w, vs };
    send_begin(vs, "timed");
    w->md.around = nvtx_around;   /* the range holds the variant's launch and nothing else */
    w->md.around_ctx = &nc;
    int rc = vs->graph ? tb_sample_graph(&w->md, vs->graph, vs->reps, smp, msg, sizeof msg)
           : vs->reps ? tb_sample_stream(&w->md, do_launch_set, &vs->lc, vs->reps, w->nsets, smp,
                                         msg, sizeof msg)
           : tb_sample_cold(&w->md, !w->l2_hot, do_launch, &vs->lc, smp, msg, sizeof msg);
    w->md.around = NULL;
    if (rc == TB_EWORKER) {
        vs->m.status = TB_STATUS_CRASHED;
        snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
        return context_ok() ? 1 : 2;
    }
    if (rc) return cuda_crash(&vs->m, "failed while timing", msg) ? 2 : 1;
    if (persisting_l2_found(w->s, why, sizeof why)) { flag(&vs->m, "persisting-l2", why); return 1; }
    if (w->pace > 0) tbw_rest_ms(w->pace * smp->wall_ms);
    return 0;
}

static int cmp_ms(const void *a, const void *b)
{
    const vstate *x = *(vstate *const *)a, *y = *(vstate *const *)b;
    double mx = tb_stats_median(x->ms, x->n), my = tb_stats_median(y->ms, y->n);
    return (mx > my) - (mx < my);
}

/* Send a variant's result (and mark it sent). */
static void send_result(worker *w, vstate *vs)
{
    tb_measurement *m = &vs->m;
    if (vs->n > 0 && m->status == TB_STATUS_OK) {
        tb_stats st;
        tb_stats_summarise(vs->ms, vs->n, &st);
        snprintf(m->method, sizeof m->method, "%s", vs->method);
        snprintf(m->stop_reason, sizeof m->stop_reason, "%s", vs->stop_why);
        m->n_samples = vs->n;
        m->warmup = w->warmup;
        m->median_ms = st.median;
        m->mean_ms = st.mean;
        m->stdev_ms = st.stdev;
        m->min_ms = st.min;
        m->max_ms = st.max;
        m->rse = st.rse;
        m->tflops = gemm_flops(&w->g) / (st.median * 1e-3) / 1e12;
        m->clock_mhz = tb_stats_median(vs->clk, vs->n);
        m->samples_ms = vs->ms;
        m->samples_clock_mhz = vs->clk;
    }
    int low = 0;
    double thr = w->env.sm_clock_max_mhz > 0 ? TB_LOW_CLOCK_FRAC * w->env.sm_clock_max_mhz : 0;
    for (int i = 0; i < vs->n; i++) low += thr > 0 && vs->clk[i] < thr;
    char stopspec[400] = "";
    if (vs->stop) tb_stop_spec(vs->stop, stopspec, sizeof stopspec);
    cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
    if (!x) x = cJSON_CreateObject();
    double seeds[3] = { (double)vs->seeds[0], (double)vs->seeds[1], (double)vs->seeds[2] };
    cJSON_AddItemToObject(x, "seeds", cJSON_CreateDoubleArray(seeds, 3));
    cJSON_AddNumberToObject(x, "hidden_seed", (double)vs->hseed);
    cJSON_AddNumberToObject(x, "worker_pid", (double)getpid());   /* never the counters' one */
    cJSON_AddStringToObject(x, "reference", vs->use_naive ? "naive-fp64" : "cublaslt-fp32");
    if (vs->n > 0) {
        cJSON_AddStringToObject(x, "stop", stopspec);
        cJSON_AddBoolToObject(x, "blocking_kernel", w->md.use_block);
        if (w->profiler[0]) cJSON_AddStringToObject(x, "no_blocking_because", w->profiler);
        cJSON_AddNumberToObject(x, "block_timeouts", vs->block_timeouts);
        cJSON_AddStringToObject(x, "l2", w->l2_hot ? "hot" : "cold");
        if (!vs->reps && isfinite(w->event_ms)) cJSON_AddNumberToObject(x, "event_overhead_ms", w->event_ms);
        if (isfinite(w->noop_ms)) cJSON_AddNumberToObject(x, "noop_event_ms", w->noop_ms);
        if (vs->reps) {   /* graph or stream: launches per sample, input sets rotated */
            cJSON_AddNumberToObject(x, "graph_reps", vs->reps);
            cJSON_AddNumberToObject(x, "graph_sets", w->nsets);
        }
        if (vs->method_note[0]) cJSON_AddStringToObject(x, "method_note", vs->method_note);
        cJSON_AddNumberToObject(x, "estimate_ms", estimate_ms(vs));   /* auto chose from it */
        cJSON_AddNumberToObject(x, "low_clock_samples", low);
        cJSON_AddNumberToObject(x, "low_clock_mhz", thr);
        if (vs->confirmed >= 0) {
            cJSON_AddNumberToObject(x, "confirm_median_ms", vs->confirm_median);
            cJSON_AddBoolToObject(x, "confirmed_best", vs->confirmed == 1);
        }
        if (!isnan(vs->energy_j)) {
            cJSON_AddNumberToObject(x, "energy_j_per_launch", vs->energy_j);
            cJSON_AddNumberToObject(x, "power_w", vs->power_w);
            cJSON_AddNumberToObject(x, "energy_launches", vs->energy_launches);
        }
    }
    char *t = cJSON_PrintUnformatted(x);
    if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
    cJSON_free(t);
    cJSON_Delete(x);
    cJSON *o = tb_wire_measurement_to_json(m);
    cJSON_AddStringToObject(o, "type", "result");
    cJSON_AddStringToObject(o, "variant", vs->jv->name);
    send_obj(o);
    m->samples_ms = m->samples_clock_mhz = NULL;
    vs->sent = 1;
}

static void release_variant(worker *w, vstate *vs, int lost)
{
    (void)w;
    if (vs->graph && !lost) cudaGraphExecDestroy(vs->graph);
    vs->graph = NULL;
    if (!lost && vs->lc.state && vs->jv->v && vs->jv->v->teardown) vs->jv->v->teardown(vs->lc.state);
    vs->lc.state = NULL;
    if (vs->lc.ws && !lost) cudaFree(vs->lc.ws);
    vs->lc.ws = NULL;
    if (vs->stop) tb_stop_free(vs->stop);
    vs->stop = NULL;
    free(vs->ms); free(vs->wall); free(vs->clk);
    vs->ms = vs->wall = vs->clk = NULL;
}

/* End the worker after a lost context: the variant's result first, then exit. */
static void lost_exit(worker *w, vstate *vs)
{
    send_result(w, vs);
    send_simple("lost", "error", vs->m.reason);
    _exit(3);
}

/* Energy of back-to-back launches (no flush) for about 1 s: NVML's total-energy counter is
 * coarse (a 0.25 s window gave 513-976 W averages under a 700 W cap on the H100), so the
 * window is long. Joules per launch and average power. */
#define TB_ENERGY_WINDOW_MS 1000.0
static void measure_energy(worker *w, vstate *vs)
{
    unsigned long long e0, e1;
    vs->energy_j = vs->power_w = NAN;
    if (!w->nvml || tb_nvml_energy_mj(w->nvml, &e0) != TB_OK) return;
    double med = tb_stats_median(vs->ms, vs->n);
    if (!(med > 0)) return;
    int n = (int)ceil(TB_ENERGY_WINDOW_MS / med);
    if (n > 100000) n = 100000;
    if (n < 1) n = 1;
    struct timespec a, b;
    nvtx_push(w, vs, "energy");
    clock_gettime(CLOCK_MONOTONIC, &a);
    int lrc = 0;
    for (int i = 0; i < n && !lrc; i++) lrc = do_launch(&vs->lc, w->s);
    cudaDeviceSynchronize();
    clock_gettime(CLOCK_MONOTONIC, &b);
    nvtx_pop();
    if (lrc || tb_nvml_energy_mj(w->nvml, &e1) != TB_OK || e1 <= e0) return;
    double secs = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
    vs->energy_j = (double)(e1 - e0) * 1e-3 / n;
    vs->power_w = secs > 0 ? (double)(e1 - e0) * 1e-3 / secs : NAN;
    vs->energy_launches = n;
}

/* Phase C for one timed variant: inputs, hidden work, energy, the trial after timing. */
static int phase_c(worker *w, vstate *vs)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    tb_measurement *m = &vs->m;
    tb_val_result vr;
    double launch_ms;
    /* inputs: a few launches of this variant alone between two checksums */
    unsigned long long before[3], after[3];
    if (tb_validate_checksums(&w->vb, w->s, before, msg, sizeof msg) == TB_OK) {
        int lrc = 0;
        for (int i = 0; i < 3 && !lrc; i++) lrc = do_launch(&vs->lc, w->s);
        if (cudaDeviceSynchronize() != cudaSuccess) return cuda_crash(m, "kernel failed", "after timing") ? 2 : 1;
        if (tb_validate_checksums(&w->vb, w->s, after, msg, sizeof msg) == TB_OK)
            for (int k = 0; k < 3; k++)
                if (after[k] != before[k]) {
                    snprintf(why, sizeof why, "modified its input %s on a repeated launch",
                             k == 0 ? "A" : k == 1 ? "B" : "C");
                    flag(m, "inputs", why);
                    return 1;
                }
    }
    /* hidden work: (wall - event) beyond the recipe's own cost */
    if (vs->n > 0) {
        double *gap = malloc(sizeof(double) * (size_t)vs->n);
        int reps = vs->reps ? vs->reps : 1;
        for (int i = 0; i < vs->n; i++) gap[i] = vs->wall[i] - vs->ms[i] * reps;
        double base = vs->reps ? w->base_graph : w->base_cold;   /* neither flushes */
        double hidden = (tb_stats_median(gap, vs->n) - base) / reps;
        double med = tb_stats_median(vs->ms, vs->n);
        free(gap);
        cJSON *x = cJSON_Parse(m->extra_json[0] ? m->extra_json : "{}");
        if (x) {
            cJSON_AddNumberToObject(x, "hidden_work_ms", hidden);
            cJSON_AddNumberToObject(x, "gap_baseline_ms", base);
            char *t = cJSON_PrintUnformatted(x);
            if (t && strlen(t) < sizeof m->extra_json) snprintf(m->extra_json, sizeof m->extra_json, "%s", t);
            cJSON_free(t);
            cJSON_Delete(x);
        }
        if (hidden > TB_HIDDEN_MIN_MS && hidden > TB_HIDDEN_FRAC * med) {
            snprintf(why, sizeof why, "hidden work: the device-synchronised wall time exceeds the "
                     "event time by %.3f ms per launch (baseline removed) against an event median "
                     "of %.4f ms: work ran outside the timed stream", hidden, med);
            flag(m, "hidden-work", why);
            return 1;
        }
    }
    if (w->energy) measure_energy(w, vs);
    /* the trial after timing: new inputs at the same pointers, D poisoned again */
    if (tb_validate_prepare(w->ref, &w->g, &w->vb, vs->seeds[2], w->dist, vs->use_naive, 0, w->s,
                            msg, sizeof msg)) {
        m->status = TB_STATUS_ERROR;
        snprintf(m->reason, sizeof m->reason, "%s", msg);
        return context_ok() ? 1 : 2;
    }
    int r = validated_launch(w, vs, vs->ntr - 1, &vr, &launch_ms);
    if (r) return r;
    if (record_trial(m, &vr, vs->ntr - 1, 1)) return 1;
    if (persisting_l2_found(w->s, why, sizeof why)) { flag(m, "persisting-l2", why); return 1; }
    m->disposition = TB_DISP_PASSED;
    return 0;
}

/* Phase B (and D): interleaved rounds over the variants still sampling. */
static void interleave(worker *w, vstate **act, int na, int confirm_samples)
{
    int left = 0;
    for (int i = 0; i < na; i++) left += act[i]->sampling;
    int *order = malloc(sizeof *order * (size_t)(na ? na : 1));
    uint64_t rng = w->seed * 0x9E3779B97F4A7C15ull + 1;
    for (int i = 0; i < na; i++) order[i] = i;
    while (left > 0) {
        /* a new order every round: no variant always follows the same one */
        for (int i = na - 1; i > 0; i--) {
            rng = rng * 6364136223846793005ull + 1442695040888963407ull;
            int j = (int)((rng >> 33) % (uint64_t)(i + 1));
            int t = order[i]; order[i] = order[j]; order[j] = t;
        }
        for (int oi = 0; oi < na; oi++) {
            int i = order[oi];
            vstate *vs = act[i];
            if (!vs->sampling) continue;
            tb_sample smp;
            int r = take_sample(w, vs, &smp);
            if (r == 2) lost_exit(w, vs);
            if (r == 1) { vs->sampling = 0; vs->active = 0; left--; continue; }
            if (confirm_samples) {
                if (push_sample(vs, &smp)) { vs->sampling = 0; left--; continue; }
                if (vs->n >= confirm_samples) { vs->sampling = 0; left--; }
                continue;
            }
            if (push_sample(vs, &smp)) { vs->sampling = 0; left--; continue; }
            vs->elapsed_s += smp.wall_ms * 1e-3;
            tb_stop_add(vs->stop, smp.ms);
            if (tb_stop_done(vs->stop, vs->elapsed_s, vs->stop_why, sizeof vs->stop_why)) {
                vs->sampling = 0;
                left--;
            }
        }
    }
    free(order);
}

static int alloc_bufs(worker *w, char *msg, size_t len)
{
    tb_gemm *g = &w->g;
    tb_val_bufs *b = &w->vb;
    b->na = extent(g->a_layout, g->m, g->k, g->lda, g->batch, g->stride_a);
    b->nb = extent(g->b_layout, g->k, g->n, g->ldb, g->batch, g->stride_b);
    b->nc = g->beta != 0.0 ? extent(g->c_layout, g->m, g->n, g->ldc, g->batch, g->stride_c) : 0;
    b->nd = extent(g->d_layout, g->m, g->n, g->ldd, g->batch, g->stride_d);
    /* guard bands: at least two of D's rows (or columns) and 64 Ki elements on each side */
    size_t span = (size_t)g->ldd * 2;
    b->guard = span > 65536 ? span : 65536;
    /* under compute-sanitizer D gets no guard bands: a write past D must leave the
     * allocation for memcheck to see it */
    if (w->validate_only) b->guard = 0;
    size_t nref = (size_t)(g->m * g->n * g->batch);
    double mnk = (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
    struct { void **p; size_t bytes; const char *what; } a[] = {
        { &b->a, (b->na * 2 + 7) / 8 * 8, "A" }, { &b->b, (b->nb * 2 + 7) / 8 * 8, "B" },
        { (void **)&b->c, b->nc ? (b->nc * 2 + 7) / 8 * 8 : 0, "C" },
        { &b->d_base, (b->nd + 2 * b->guard) * 2, "D and its guard bands" },
        { (void **)&b->d_ref, nref * 4, "D_ref" },
        { (void **)&b->d_ref2, mnk <= TB_CROSSCHECK_MAX_MNK ? nref * 4 : 0, "the second D_ref" },
        { (void **)&b->cmp_dev, sizeof(tb_cmp_result), "comparison result" },
        { (void **)&b->scratch, 4 * sizeof(unsigned long long), "scratch" },
    };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        *a[i].p = NULL;
        if (!a[i].bytes) continue;
        cudaError_t e = cudaMalloc(a[i].p, a[i].bytes);
        if (e == cudaSuccess) e = cudaMemset(*a[i].p, 0, a[i].bytes);
        if (e != cudaSuccess)
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate %s (%zu bytes): %s", a[i].what,
                           a[i].bytes, cudaGetErrorString(e));
    }
    b->d = (uint16_t *)b->d_base + b->guard;
    return tb_measure_dev_init(&w->md, w->s, (size_t)w->env.l2_bytes, !w->profiler[0] && !w->profile,
                               msg, len);
}

static int parse_job(const char *line, worker *w, job_variant **jvs, int *njv, char *msg, size_t len)
{
    cJSON *j = cJSON_Parse(line);
    if (!j) return tb_fail(msg, len, TB_EWORKER, "job is not JSON");
    int rc = tb_wire_gemm_from_json(cJSON_GetObjectItemCaseSensitive(j, "problem"), &w->g, msg, len);
    if (rc) { cJSON_Delete(j); return rc; }
    w->device = (int)tb_json_num(j, "device", 0);
    const char *uuid = tb_json_str(j, "device_uuid", "");
    if (uuid[0] && resolve_device(uuid, &w->device, msg, len) != TB_OK) { cJSON_Delete(j); return TB_ENOGPU; }
    w->seed = (uint64_t)tb_json_num(j, "seed", 1);
    w->trials = (int)tb_json_num(j, "trials", 3);
    w->validate_only = (int)tb_json_num(j, "validate_only", 0);
    w->dist = strcmp(tb_json_str(j, "init", "uniform"), "normal") == 0 ? TB_INIT_NORMAL
                                                                        : TB_INIT_UNIFORM;
    w->warmup = (int)tb_json_num(j, "warmup", 3);
    snprintf(w->stop_spec, sizeof w->stop_spec, "%s", tb_json_str(j, "stop", "stdrel"));
    snprintf(w->method, sizeof w->method, "%s", tb_json_str(j, "method", "auto"));
    w->l2_hot = !strcmp(tb_json_str(j, "l2", "cold"), "hot");
    w->profile = (int)tb_json_num(j, "profile", 0);
    w->energy = (int)tb_json_num(j, "energy", 1);
    w->pace = tb_json_num(j, "pace", 0);
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(j, "variants");
    int n = cJSON_GetArraySize(vs);
    *jvs = calloc((size_t)(n ? n : 1), sizeof **jvs);
    *njv = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, vs) {
        job_variant *jv = &(*jvs)[(*njv)++];
        snprintf(jv->name, sizeof jv->name, "%s", tb_json_str(it, "name", ""));
        snprintf(jv->file, sizeof jv->file, "%s", tb_json_str(it, "file", ""));
        jv->index = (int)tb_json_num(it, "index", 0);
    }
    cJSON_Delete(j);
    return TB_OK;
}

/* Is a profiler attached? Then the blocking kernel would deadlock against its serialisation:
 * it stays off. Nsight tools inject through CUDA_INJECTION64_PATH; any CUPTI subscriber makes
 * our own subscription fail with MULTIPLE_SUBSCRIBERS. */
static void CUPTIAPI no_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId c, const void *i)
{
    (void)u; (void)d; (void)c; (void)i;
}

static void detect_profiler(worker *w)
{
    const char *inj = getenv("CUDA_INJECTION64_PATH");
    w->profiler[0] = 0;
    if (inj && *inj) {
        snprintf(w->profiler, sizeof w->profiler, "profiler injected (CUDA_INJECTION64_PATH)");
        return;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult r = cuptiSubscribe(&sub, (CUpti_CallbackFunc)no_callback, NULL);
    if (r == CUPTI_SUCCESS) cuptiUnsubscribe(sub);
    else if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        snprintf(w->profiler, sizeof w->profiler, "another CUPTI subscriber (a profiler)");
}

static int cmd_measure(void)
{
    char msg[TB_MSG_LEN];
    tb_linebuf lb = { 0 };
    char *line = tbw_read_job(&lb);
    if (!line) { tb_linebuf_free(&lb); send_simple("fatal", "error", "no job on stdin"); return 2; }
    worker w;
    memset(&w, 0, sizeof w);
    job_variant *jvs = NULL;
    int njv = 0;
    int rc = parse_job(line, &w, &jvs, &njv, msg, sizeof msg);
    free(line);
    tb_linebuf_free(&lb);
    if (rc) { send_simple("fatal", "error", msg); return 2; }

    if (tbw_open_device(w.device, msg, sizeof msg) != TB_OK) {
        send_simple("fatal", "error", msg);
        return 2;
    }
    detect_profiler(&w);
    if (collect_env(w.device, &w.env, msg, sizeof msg) == TB_OK) {
        cJSON *o = tb_wire_env_to_json(&w.env);
        cJSON_AddStringToObject(o, "type", "env");
        send_obj(o);
    }
    char nm[TB_MSG_LEN];
    if (tb_nvml_open(nm, sizeof nm) != TB_OK ||
        tb_nvml_device_by_pci(w.env.pci_bus_id, &w.nvml, nm, sizeof nm) != TB_OK)
        w.nvml = NULL;
    if (cudaStreamCreateWithFlags(&w.s, cudaStreamNonBlocking) != cudaSuccess ||
        tb_ref_open(&w.ref, msg, sizeof msg) != 0 || alloc_bufs(&w, msg, sizeof msg) != TB_OK) {
        if (!msg[0]) snprintf(msg, sizeof msg, "cannot set up the worker");
        send_simple("fatal", "error", msg);
        return 2;
    }
    send_simple("ready", NULL, NULL);

    vstate *vss = calloc((size_t)(njv ? njv : 1), sizeof *vss);
    vstate **act = calloc((size_t)(njv ? njv : 1), sizeof *act);
    int na = 0;
    /* phase A: validation, one variant after another */
    for (int i = 0; i < njv; i++) {
        vstate *vs = &vss[i];
        vs->jv = &jvs[i];
        tb_measurement_init(&vs->m);
        vs->energy_j = vs->power_w = NAN;
        send_begin(vs, "validation");
        tb_lib *lib = NULL;
        rc = tb_lib_open(vs->jv->file, &lib, msg, sizeof msg);
        if (rc == TB_OK) rc = tb_lib_variant(lib, (uint32_t)vs->jv->index, &vs->jv->v, msg, sizeof msg);
        if (rc == TB_OK && (!vs->jv->v || strcmp(vs->jv->v->name, vs->jv->name) != 0)) {
            rc = TB_ELOAD;
            snprintf(msg, sizeof msg, "'%s' index %d is no longer '%s'", vs->jv->file,
                     vs->jv->index, vs->jv->name);
        }
        tb_lib_free(lib);
        if (rc != TB_OK) {
            vs->m.status = TB_STATUS_ERROR;
            snprintf(vs->m.reason, sizeof vs->m.reason, "%s", msg);
            vs->jv->v = NULL;
            send_result(&w, vs);
            continue;
        }
        cudaCtxResetPersistingL2Cache();
        cudaGetLastError();
        vs->held_event_ms = NAN;
        int r = phase_a(&w, vs);
        if (r == 2) lost_exit(&w, vs);
        if (r == 1) { release_variant(&w, vs, 0); send_result(&w, vs); continue; }
        vs->short_kernel = is_short(vs);
        act[na++] = vs;
    }
    /* each valid variant's method, from its estimate; under auto one method for the shape */
    int shape_short = 0;
    for (int i = 0; i < na; i++) shape_short |= act[i]->short_kernel;
    int nv = na;
    na = 0;
    for (int i = 0; i < nv; i++) {
        vstate *vs = act[i];
        int r = prepare_timing(&w, vs, shape_short);
        if (r == 2) lost_exit(&w, vs);
        if (r == 1) { release_variant(&w, vs, 0); send_result(&w, vs); continue; }
        vs->active = vs->sampling = 1;
        act[na++] = vs;
    }
    if (na > 0) {
        /* phase B: interleaved rounds, each variant stopped by its own criterion */
        if (tb_measure_gap_baseline(&w.md, !w.l2_hot, &w.base_cold, &w.noop_ms, msg, sizeof msg) != TB_OK ||
            tb_measure_gap_baseline(&w.md, 0, &w.base_graph, NULL, msg, sizeof msg) != TB_OK)
            w.base_cold = w.base_graph = w.noop_ms = NAN;
        if (!(w.noop_ms >= 0) || w.noop_ms > 0.05)
            w.noop_ms = NAN;   /* not measured, or implausible (over 50 us) */
        if (tb_measure_event_overhead(&w.md, !w.l2_hot, &w.event_ms, msg, sizeof msg) != TB_OK ||
            !(w.event_ms >= 0) || w.event_ms > 0.05)
            w.event_ms = NAN;   /* not measured, or implausible (over 50 us) */
        tb_nvml_sampler *smp = NULL;
        if (w.nvml) tb_nvml_sampler_start(w.nvml, 10, &smp, nm, sizeof nm);
        interleave(&w, act, na, 0);
        tb_nvml_summary sum;
        memset(&sum, 0, sizeof sum);
        if (smp) tb_nvml_sampler_stop(smp, &sum);
        /* phase D: the best few again, interleaved: is the winner still the winner? */
        vstate *top[TB_CONFIRM_TOP];
        int nt = 0;
        vstate **sorted = malloc(sizeof *sorted * (size_t)na);
        int ns = 0;
        for (int i = 0; i < na; i++) if (act[i]->active && act[i]->n > 0) sorted[ns++] = act[i];
        qsort(sorted, (size_t)ns, sizeof *sorted, cmp_ms);
        for (int i = 0; i < ns && nt < TB_CONFIRM_TOP; i++) top[nt++] = sorted[i];
        if (nt >= 2) {
            int first_n[TB_CONFIRM_TOP], want = 1 << 30;
            for (int i = 0; i < nt; i++) { first_n[i] = top[i]->n; if (top[i]->n < want) want = top[i]->n; }
            if (want > 50) want = 50;
            if (want < 10) want = 10;
            for (int i = 0; i < nt; i++) top[i]->sampling = 1;
            /* the confirming samples go after the first pass's; counted from there */
            for (int i = 0; i < nt; i++) top[i]->sampling = top[i]->active;
            int target[TB_CONFIRM_TOP];
            for (int i = 0; i < nt; i++) target[i] = first_n[i] + want;
            int left = 0;
            for (int i = 0; i < nt; i++) left += top[i]->sampling;
            while (left > 0) {
                for (int i = 0; i < nt; i++) {
                    vstate *vs = top[i];
                    if (!vs->sampling) continue;
                    tb_sample s2;
                    int r = take_sample(&w, vs, &s2);
                    if (r == 2) lost_exit(&w, vs);
                    if (r == 1 || push_sample(vs, &s2)) { vs->sampling = 0; vs->active = 0; left--; continue; }
                    if (vs->n >= target[i]) { vs->sampling = 0; left--; }
                }
            }
            double best = INFINITY;
            int bi = -1;
            for (int i = 0; i < nt; i++) {
                if (!top[i]->active) continue;
                top[i]->confirm_median = tb_stats_median(top[i]->ms + first_n[i], top[i]->n - first_n[i]);
                if (top[i]->confirm_median < best) { best = top[i]->confirm_median; bi = i; }
            }
            for (int i = 0; i < nt; i++) {
                if (!top[i]->active) continue;
                top[i]->confirmed = (i == 0) ? (bi == 0) : (bi == i);
                /* keep the first pass's samples as the measurement; the second is a check */
                top[i]->n = first_n[i];
            }
        }
        free(sorted);
        /* phase C: per variant */
        for (int i = 0; i < na; i++) {
            vstate *vs = act[i];
            send_begin(vs, "checks");
            if (vs->active) {
                int r = phase_c(&w, vs);
                if (r == 2) lost_exit(&w, vs);
            }
            if (w.nvml && smp) {
                cJSON *x = cJSON_Parse(vs->m.extra_json[0] ? vs->m.extra_json : "{}");
                if (x) {
                    cJSON *o = cJSON_AddObjectToObject(x, "nvml");
                    cJSON_AddNumberToObject(o, "samples", sum.n);
                    cJSON_AddNumberToObject(o, "sm_mhz_min", sum.sm_mhz_min);
                    cJSON_AddNumberToObject(o, "sm_mhz_mean", sum.sm_mhz_mean);
                    cJSON_AddNumberToObject(o, "sm_mhz_max", sum.sm_mhz_max);
                    cJSON_AddNumberToObject(o, "power_w_mean", sum.power_w_mean);
                    cJSON_AddNumberToObject(o, "power_w_max", sum.power_w_max);
                    cJSON_AddNumberToObject(o, "temp_c_max", sum.temp_c_max);
                    cJSON_AddNumberToObject(o, "reasons_or", (double)sum.reasons_or);
                    cJSON_AddNumberToObject(o, "throttled_samples", sum.n_throttled);
                    cJSON_AddNumberToObject(o, "power_capped_samples", sum.n_power_capped);
                    cJSON_AddNumberToObject(o, "violation_power_ms", sum.violation_power_ms);
                    cJSON_AddNumberToObject(o, "violation_thermal_ms", sum.violation_thermal_ms);
                    char *t = cJSON_PrintUnformatted(x);
                    if (t && strlen(t) < sizeof vs->m.extra_json)
                        snprintf(vs->m.extra_json, sizeof vs->m.extra_json, "%s", t);
                    cJSON_free(t);
                    cJSON_Delete(x);
                }
            }
            send_result(&w, vs);
            release_variant(&w, vs, 0);
        }
    }
    send_simple("done", NULL, NULL);
    free(vss);
    free(act);
    free(jvs);
    tb_ref_close(w.ref);
    return 0;
}

int main(int argc, char **argv)
{
    if (fcntl(3, F_GETFD) != -1) {
        out_fd = 3;
        fcntl(3, F_SETFD, FD_CLOEXEC);
    }
    if (argc < 2) {
        fprintf(stderr, "usage: tilebench-worker probe FILE... | env [--device N] | measure | counters | calibrate\n"
                        "(started by tilebench; not meant to be run by hand)\n");
        return 2;
    }
    if (strcmp(argv[1], "probe") == 0) return cmd_probe(argc - 2, argv + 2);
    if (strcmp(argv[1], "env") == 0) {
        int dev = 0;
        char msg[TB_MSG_LEN];
        if (argc > 3 && strcmp(argv[2], "--device") == 0 &&
            resolve_device(argv[3], &dev, msg, sizeof msg) != TB_OK) {
            send_simple("fatal", "error", msg);
            return 2;
        }
        return cmd_env(dev);
    }
    if (strcmp(argv[1], "measure") == 0) return cmd_measure();
    if (strcmp(argv[1], "counters") == 0) return tb_worker_counters(out_fd);
    if (strcmp(argv[1], "calibrate") == 0) return tb_worker_calibrate(out_fd);
    if (strcmp(argv[1], "--version") == 0) { printf("tilebench-worker %s\n", TB_VERSION); return 0; }
    fprintf(stderr, "tilebench-worker: unknown mode '%s'\n", argv[1]);
    return 2;
}
