/* worker.c - tilebench-worker: the process that touches the GPU and runs variant code.
 *
 * Modes (argv[1]):
 *   probe FILE...   load each library, report its variants (no CUDA initialisation: works
 *                   on a machine without a GPU). Emits {"type":"loading","file"} before and
 *                   {"type":"file",...} after each file, so a crash names its file.
 *   env [--device N] report the GPU and software environment ({"type":"env"}).
 *   measure         read one job (a JSON line) on stdin, then for each variant: begin,
 *                   supports, setup, first launch (estimate), validation, timing, validation
 *                   after timing, result. Ends with {"type":"done"}.
 * Records go to fd 3 when it is open (the parent's result pipe), else to stdout: a variant
 * that prints cannot forge or corrupt a record by writing to stdout.
 * A CUDA error that leaves the context unusable ends the worker after its result is sent;
 * the parent starts a new one for the variants left.
 */
#define _GNU_SOURCE
#include "tb.h"
#include "wire.h"
#include "loader.h"
#include "measure.h"
#include "stats.h"
#include "validate.h"
#include "nvml.h"
#include "device/tbdev.h"
#include "../reference/ref.h"
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static int out_fd = 1;

static void send_obj(cJSON *o)
{
    if (tb_wire_send(out_fd, o) != TB_OK) _exit(70);   /* the parent is gone */
    cJSON_Delete(o);
}

static void send_simple(const char *type, const char *key, const char *val)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", type);
    if (key) cJSON_AddStringToObject(o, key, val ? val : "");
    send_obj(o);
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
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(e->gpu_uuid, sizeof e->gpu_uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
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
        snprintf(e->extra_json, sizeof e->extra_json, "{\"nvml\":true,\"cuda_clock_rate_khz\":%d}",
                 max_clk_attr);
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
} launch_ctx;

static int do_launch(void *c, cudaStream_t s)
{
    launch_ctx *l = c;
    return l->v->launch(l->state, &l->prob, &l->io, l->ws, l->ws_bytes, (tb_stream)s);
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

typedef struct worker {
    int device;
    cudaStream_t s;
    tb_ref *ref;
    tb_gemm g;
    tb_val_bufs vb;
    tb_measure_dev md;
    tb_measure_opts mo;
    tb_init_dist dist;
    uint64_t seed;
    int trials;
    int validate_only;   /* one trial, no timing: the --sanitize pass */
} worker;

static double gemm_flops(const tb_gemm *g)
{
    return 2.0 * (double)g->m * (double)g->n * (double)g->k * (double)g->batch;
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

/* The hidden-work rule: work the events did not see shows as device-synchronised wall time
 * beyond the events. Flagged when the median excess over the no-op baseline passes
 * max(TB_HIDDEN_MIN_MS, TB_HIDDEN_FRAC x the median event time) (docs/method.md). */
#define TB_HIDDEN_MIN_MS 0.015
#define TB_HIDDEN_FRAC 0.25

/* One validated launch: prepared inputs, the launch, a device sync, the check. Returns
 * 0 ok (vr filled), 1 failed (m filled), 2 context lost (m filled). */
static int validated_launch(worker *w, launch_ctx *lc, tb_measurement *m, int trial,
                            tb_val_result *vr, double *launch_ms)
{
    char msg[TB_MSG_LEN];
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, w->s);
    int lrc = do_launch(lc, w->s);
    cudaEventRecord(e1, w->s);
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
    float f = 0;
    cudaEventElapsedTime(&f, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *launch_ms = f;
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

/* One variant, start to end: supports, setup, trials before timing (the first is also the
 * watchdog's estimate, the second uses a seed nobody could know in advance), timing, one
 * trial after timing on new inputs at the same pointers, teardown. Returns 1 if the context
 * is lost and the worker must exit. */
static int run_variant(worker *w, job_variant *jv, tb_measurement *m)
{
    char msg[TB_MSG_LEN], why[TB_TEXT_LEN];
    const tb_variant *v = jv->v;
    launch_ctx lc;
    memset(&lc, 0, sizeof lc);
    lc.v = v;
    lc.prob.struct_size = sizeof lc.prob;
    lc.prob.op = TB_OP_GEMM;
    lc.prob.gemm = w->g;
    lc.io.struct_size = sizeof lc.io;
    lc.io.in[0] = w->vb.a;
    lc.io.in[1] = w->vb.b;
    lc.io.in[2] = w->g.beta != 0.0 ? w->vb.c : NULL;
    lc.io.out[0] = w->vb.d;
    int lost = 0, r;
    int use_naive = strcmp(v->family, "cublaslt") == 0;   /* not validated against itself */
    uint64_t vseed = hash_str(v->name, w->seed ^ 0xcbf29ce484222325ull) & ((1ull << 50) - 1);
    uint64_t hseed = hidden_seed();
    uint64_t seeds[3] = { vseed, hseed, vseed + 7919 };
    double hidden_ms = NAN, gap_base = NAN, launch_ms = 0;
    tb_val_result vr;
    int ntr = w->trials < 2 ? 2 : w->trials;   /* the last one always runs after timing */

    if (v->supports) {
        char sw[256] = "";
        if (!v->supports(&lc.prob, sw, sizeof sw)) {
            m->status = TB_STATUS_UNSUPPORTED;
            snprintf(m->reason, sizeof m->reason, "%s", sw[0] ? sw : "not supported");
            return 0;
        }
    }
    if (v->setup) {
        char sm[256] = "";
        if (v->setup(&lc.prob, (tb_stream)w->s, &lc.state, sm, sizeof sm) != 0) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "setup failed: %s", sm[0] ? sm : "(no message)");
            lc.state = NULL;
            return !context_ok();
        }
    }
    if (v->describe && v->describe(lc.state, m->describe, sizeof m->describe) != 0)
        m->describe[0] = 0;
    lc.ws_bytes = v->workspace_size ? v->workspace_size(&lc.prob) : 0;
    m->workspace_bytes = (int64_t)lc.ws_bytes;
    if (lc.ws_bytes) {
        cudaError_t e = cudaMalloc(&lc.ws, lc.ws_bytes);
        if (e != cudaSuccess) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "cannot allocate %zu workspace bytes: %s",
                     lc.ws_bytes, cudaGetErrorString(e));
            cudaGetLastError();
            lc.ws = NULL;
            goto out;
        }
    }
    if (persisting_l2_found(w->s, why, sizeof why)) {
        flag(m, "persisting-l2", why);
        goto out;
    }

    /* trials before timing */
    for (int t = 0; t < ntr - 1; t++) {
        uint64_t seed = t < 2 ? seeds[t] : vseed + 104729ull * (uint64_t)t;
        if (tb_validate_prepare(w->ref, &w->g, &w->vb, seed, w->dist, use_naive, t == 0, w->s,
                                msg, sizeof msg)) {
            m->status = TB_STATUS_ERROR;
            snprintf(m->reason, sizeof m->reason, "%s", msg);
            lost = !context_ok();
            goto out;
        }
        r = validated_launch(w, &lc, m, t, &vr, &launch_ms);
        if (r) { lost = r == 2; goto out; }
        if (t == 0) {
            m->first_launch_ms = launch_ms;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", "estimate");
            cJSON_AddNumberToObject(o, "first_launch_ms", launch_ms);
            send_obj(o);
        } else {
            heartbeat(NULL, 0);
        }
        if (record_trial(m, &vr, t, 0)) goto out;   /* invalid: never timed, never ranked */
        if (w->validate_only) { m->disposition = TB_DISP_PASSED; goto out; }
        if (persisting_l2_found(w->s, why, sizeof why)) { flag(m, "persisting-l2", why); goto out; }
    }

    /* timing, on the last trial's inputs */
    {
        tb_measure_out mo;
        heartbeat(NULL, 0);
        int rc = tb_measure_cold(&w->md, &w->mo, do_launch, &lc, heartbeat, NULL, &mo, msg,
                                 sizeof msg);
        if (rc) {
            free(mo.samples_ms);
            free(mo.wall_ms);
            if (rc == TB_EWORKER) {
                m->status = TB_STATUS_CRASHED;
                snprintf(m->reason, sizeof m->reason, "%s", msg);
                lost = !context_ok();
            } else {
                lost = cuda_crash(m, "failed while timing", msg);
            }
            goto out;
        }
        tb_stats st;
        tb_stats_summarise(mo.samples_ms, mo.n, &st);
        snprintf(m->method, sizeof m->method, "cold_events");
        snprintf(m->stop_reason, sizeof m->stop_reason, "%s", mo.stop_reason);
        m->n_samples = mo.n;
        m->warmup = mo.warmup;
        m->median_ms = st.median;
        m->mean_ms = st.mean;
        m->stdev_ms = st.stdev;
        m->min_ms = st.min;
        m->max_ms = st.max;
        m->rse = st.rse;
        m->tflops = gemm_flops(&w->g) / (st.median * 1e-3) / 1e12;
        m->clock_mhz = mo.clock_mhz;
        m->samples_ms = mo.samples_ms;
        free(mo.wall_ms);
        hidden_ms = mo.hidden_ms;
        gap_base = mo.gap_baseline_ms;
    }
    if (persisting_l2_found(w->s, why, sizeof why)) { flag(m, "persisting-l2", why); goto out; }
    {
        unsigned long long sums[3];
        if (tb_validate_checksums(&w->vb, w->s, sums, msg, sizeof msg) == TB_OK)
            for (int k = 0; k < 3; k++)
                if (sums[k] != w->vb.sum_in[k]) {
                    snprintf(why, sizeof why, "an input (%s) changed during the timed launches",
                             k == 0 ? "A" : k == 1 ? "B" : "C");
                    flag(m, "inputs", why);
                    goto out;
                }
    }
    if (!isnan(hidden_ms) && hidden_ms > TB_HIDDEN_MIN_MS &&
        hidden_ms > TB_HIDDEN_FRAC * m->median_ms) {
        snprintf(why, sizeof why, "hidden work: the device-synchronised wall time exceeds the "
                 "event time by %.3f ms per launch (baseline removed) against an event median of "
                 "%.4f ms: work ran outside the timed stream", hidden_ms, m->median_ms);
        flag(m, "hidden-work", why);
        goto out;
    }

    /* the trial after timing: new inputs at the same pointers, D poisoned again */
    if (tb_validate_prepare(w->ref, &w->g, &w->vb, seeds[2], w->dist, use_naive, 0, w->s,
                            msg, sizeof msg)) {
        m->status = TB_STATUS_ERROR;
        snprintf(m->reason, sizeof m->reason, "%s", msg);
        lost = !context_ok();
        goto out;
    }
    r = validated_launch(w, &lc, m, ntr - 1, &vr, &launch_ms);
    if (r) { lost = r == 2; goto out; }
    if (record_trial(m, &vr, ntr - 1, 1)) goto out;
    m->disposition = TB_DISP_PASSED;
out:
    snprintf(m->extra_json, sizeof m->extra_json,
             "{\"seeds\":[%llu,%llu,%llu],\"hidden_seed\":%llu,\"hidden_work_ms\":%.6g,"
             "\"gap_baseline_ms\":%.6g,\"reference\":\"%s\"}",
             (unsigned long long)seeds[0], (unsigned long long)seeds[1],
             (unsigned long long)seeds[2], (unsigned long long)hseed,
             isnan(hidden_ms) ? -1.0 : hidden_ms, isnan(gap_base) ? -1.0 : gap_base,
             use_naive ? "naive-fp64" : "cublaslt-fp32");
    if (!lost) persisting_l2_found(w->s, why, sizeof why);   /* leave nothing for the next */
    if (v->teardown && lc.state && !lost) v->teardown(lc.state);
    if (lc.ws && !lost) cudaFree(lc.ws);
    return lost;
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
    size_t span = (size_t)(g->d_layout == TB_LAYOUT_ROW ? g->ldd : g->ldd) * 2;
    b->guard = span > 65536 ? span : 65536;
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
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, w->device);
    size_t fb = (size_t)l2 * 2;
    if (fb < (32u << 20)) fb = 32u << 20;
    fb = (fb + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
    w->md.flush_bytes = fb;
    void *flush, *sink, *clk;
    if (cudaMalloc(&flush, fb) != cudaSuccess || cudaMalloc(&sink, 256) != cudaSuccess ||
        cudaMalloc(&clk, 256) != cudaSuccess)
        return tb_fail(msg, len, TB_ECUDA, "cannot allocate the L2 flush buffer (%zu bytes)", fb);
    cudaMemset(flush, 0x5a, fb);
    w->md.flush_buf = flush;
    w->md.sink = sink;
    w->md.clk_dev = clk;
    w->md.s = w->s;
    return TB_OK;
}

static int parse_job(const char *line, worker *w, job_variant **jvs, int *njv, char *msg, size_t len)
{
    cJSON *j = cJSON_Parse(line);
    if (!j) return tb_fail(msg, len, TB_EWORKER, "job is not JSON");
    int rc = tb_wire_gemm_from_json(cJSON_GetObjectItemCaseSensitive(j, "problem"), &w->g, msg, len);
    if (rc) { cJSON_Delete(j); return rc; }
    w->device = (int)tb_json_num(j, "device", 0);
    w->seed = (uint64_t)tb_json_num(j, "seed", 1);
    w->trials = (int)tb_json_num(j, "trials", 3);
    w->validate_only = (int)tb_json_num(j, "validate_only", 0);
    if (w->trials < 1) w->trials = 1;
    w->dist = strcmp(tb_json_str(j, "init", "uniform"), "normal") == 0 ? TB_INIT_NORMAL
                                                                        : TB_INIT_UNIFORM;
    tb_measure_opts_default(&w->mo);
    const cJSON *mo = cJSON_GetObjectItemCaseSensitive(j, "measure");
    if (mo) {
        w->mo.warmup = (int)tb_json_num(mo, "warmup", w->mo.warmup);
        w->mo.min_samples = (int)tb_json_num(mo, "min_samples", w->mo.min_samples);
        w->mo.max_samples = (int)tb_json_num(mo, "max_samples", w->mo.max_samples);
        w->mo.max_time_s = tb_json_num(mo, "max_time_s", w->mo.max_time_s);
        w->mo.target_rse = tb_json_num(mo, "target_rse", w->mo.target_rse);
        w->mo.flush_l2 = (int)tb_json_num(mo, "flush_l2", w->mo.flush_l2);
    }
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

static int cmd_measure(void)
{
    char msg[TB_MSG_LEN];
    tb_linebuf lb = { 0 };
    char *line = NULL;
    for (;;) {
        line = tb_linebuf_next(&lb);
        if (line) break;
        long r = tb_linebuf_fill(&lb, 0);
        if (r <= 0) { send_simple("fatal", "error", "no job on stdin"); return 2; }
    }
    worker w;
    memset(&w, 0, sizeof w);
    job_variant *jvs = NULL;
    int njv = 0;
    int rc = parse_job(line, &w, &jvs, &njv, msg, sizeof msg);
    free(line);
    tb_linebuf_free(&lb);
    if (rc) { send_simple("fatal", "error", msg); return 2; }

    cudaError_t e = cudaSetDevice(w.device);
    if (e == cudaSuccess) e = cudaFree(0);
    if (e != cudaSuccess) {
        snprintf(msg, sizeof msg, "cannot use GPU %d: %s", w.device, cudaGetErrorString(e));
        send_simple("fatal", "error", msg);
        return 2;
    }
    /* no persisting-L2 carve-out may survive from anything before us */
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    cudaGetLastError();
    tb_environment env;
    if (collect_env(w.device, &env, msg, sizeof msg) == TB_OK) {
        cJSON *o = tb_wire_env_to_json(&env);
        cJSON_AddStringToObject(o, "type", "env");
        send_obj(o);
    }
    if (cudaStreamCreateWithFlags(&w.s, cudaStreamNonBlocking) != cudaSuccess ||
        tb_ref_open(&w.ref, msg, sizeof msg) != 0 || alloc_bufs(&w, msg, sizeof msg) != TB_OK) {
        if (!msg[0]) snprintf(msg, sizeof msg, "cannot set up the worker");
        send_simple("fatal", "error", msg);
        return 2;
    }
    send_simple("ready", NULL, NULL);

    for (int i = 0; i < njv; i++) {
        job_variant *jv = &jvs[i];
        send_simple("begin", "variant", jv->name);
        tb_measurement m;
        tb_measurement_init(&m);
        tb_lib *lib = NULL;
        int lost = 0;
        rc = tb_lib_open(jv->file, &lib, msg, sizeof msg);
        if (rc == TB_OK) rc = tb_lib_variant(lib, (uint32_t)jv->index, &jv->v, msg, sizeof msg);
        if (rc == TB_OK && (!jv->v || strcmp(jv->v->name, jv->name) != 0)) {
            rc = TB_ELOAD;
            snprintf(msg, sizeof msg, "'%s' index %d is no longer '%s'", jv->file, jv->index,
                     jv->name);
        }
        if (rc != TB_OK) {
            m.status = TB_STATUS_ERROR;
            snprintf(m.reason, sizeof m.reason, "%s", msg);
        } else {
            cudaCtxResetPersistingL2Cache();
            cudaGetLastError();
            lost = run_variant(&w, jv, &m);
        }
        tb_lib_free(lib);
        cJSON *o = tb_wire_measurement_to_json(&m);
        cJSON_AddStringToObject(o, "type", "result");
        cJSON_AddStringToObject(o, "variant", jv->name);
        send_obj(o);
        tb_measurement_free_samples(&m);
        if (lost) {
            send_simple("lost", "error", m.reason);
            _exit(3);   /* the context is gone; no cleanup can run on it */
        }
    }
    send_simple("done", NULL, NULL);
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
        fprintf(stderr, "usage: tilebench-worker probe FILE... | env [--device N] | measure\n"
                        "(started by tilebench; not meant to be run by hand)\n");
        return 2;
    }
    if (strcmp(argv[1], "probe") == 0) return cmd_probe(argc - 2, argv + 2);
    if (strcmp(argv[1], "env") == 0)
        return cmd_env(argc > 3 && strcmp(argv[2], "--device") == 0 ? atoi(argv[3]) : 0);
    if (strcmp(argv[1], "measure") == 0) return cmd_measure();
    if (strcmp(argv[1], "--version") == 0) { printf("tilebench-worker %s\n", TB_VERSION); return 0; }
    fprintf(stderr, "tilebench-worker: unknown mode '%s'\n", argv[1]);
    return 2;
}
