/* worker_counters.c - the worker mode `tilebench-worker counters` (see worker_counters.h).
 *
 * Owns the counter pass of a sweep: one job, one problem, its variants one after another;
 * for each, the kernel resources of one launch (resources.c) and the hardware counters of the
 * measured launch replayed with an L2 flush before every pass (counters.c). It never times
 * anything: timing workers run in other processes and never enable CUPTI.
 *
 * The job (one JSON line on stdin; the measure mode's fields, the timing ones ignored):
 *   {"problem": {...}, "variants": [{"name","file","index"}...], "device": 0,
 *    "device_uuid": "GPU-...", "seed": 1, "init": "uniform"|"normal",
 *    "metrics": ["raw__metric.sum", "a|b", "banks", ...]}     (set names are expanded)
 * The records (to out_fd), in two phases:
 *   {"type":"ready"} once the GPU and the buffers are set up;
 *   phase 1, per variant: {"type":"begin","variant":NAME,"phase":"resources"}: load, supports,
 *     setup, workspace, one launch with the activity API recording its kernels;
 *   {"type":"counters","available":true|false,"chip":"GH100","passes_needed":N | "reason"}:
 *     the profiler initialised (only now: the activity API and the profiler are kept apart);
 *   phase 2, per variant still standing: {"type":"begin","variant":NAME,"phase":"counters"},
 *     the counter passes, teardown;
 *   per variant, at the end of its last phase:
 *   {"type":"metrics","variant":NAME,"status":"ok"|"unsupported"|"error"|"crashed",
 *    "reason":"..." (unless ok), "passes":N, "kernels":K, "range":"auto", "chip":"GH100",
 *    "metrics":[{"name","value","unit","available":true} |
 *               {"name","unit","available":false,"reason"}...],
 *    "resources":[{"name","grid":[3],"block":[3],"cluster":[3],"regs","static_smem",
 *                  "dynamic_smem","local_per_thread","count"}...],
 *    "resources_error":"..." (only when they could not be read)}
 *   {"type":"done"} at the end; {"type":"fatal","error"} when the job cannot run;
 *   {"type":"lost","error"} before exiting when the CUDA context is lost.
 * Every variant set up in phase 1 stays set up (workspace allocated) until its phase 2.
 * A metric's name is the alternative the chip has ("a|b" resolved); in the records of
 * variants that never reached phase 2 it is the name as the job gave it.
 * Counters that are unavailable (another profiler such as ncu, no permission, a metric the
 * chip lacks) never end the job: every metric is reported "available": false with the reason.
 *
 * The launch: inputs filled once from the seed (tbdev_fill_bf16), D zeroed; the measured
 * launch sits inside the NVTX ranges tb / <variant> / <MxNxK> / counters, both for the
 * resources launch and for each counter pass, so that
 *   ncu --nvtx --nvtx-include "tb/<variant>/<MxNxK>/counters/" ...
 * selects this launch (under ncu our own counters are off and only the resources launch runs).
 * Before each pass, and before the resources launch: persisting-L2 lines reset, then the L2
 * flushed by reading a buffer of max(2 x L2, 32 MiB) (tbdev_l2_flush), outside the profiled
 * range.
 */
#define _POSIX_C_SOURCE 200809L
#include "worker/counters/worker_counters.h"
#include "worker/worker_common.h"
#include "worker/counters/counters.h"
#include "worker/counters/resources.h"
#include "worker/loader.h"
#include "common/tb.h"
#include "common/wire.h"
#include "device/tbdev.h"
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define WC_MAX_KERNELS 32

typedef struct wc_variant {
    char name[TB_NAME_LEN];
    char file[TB_PATH_LEN];
    int index;
} wc_variant;

typedef struct wc_job {
    tb_gemm g;
    tb_gemm_scales scales;   /* growth 1: A's and B's scales (1 for bf16) */
    int device;
    uint64_t seed;
    tb_init_dist dist;
    wc_variant *vs;
    int nv;
    char *metrics[TB_COUNTERS_MAX_METRICS + 1];
    int nm;
} wc_job;

typedef struct wc_launch {
    const tb_variant *v;
    void *state;
    tb_problem prob;
    tb_buffers io;
    void *ws;
    size_t ws_bytes;
    cudaStream_t s;
    const char *vname;
    char shape[96];
    void *flush_buf;
    size_t flush_bytes;
    unsigned *sink;
    int launches;
} wc_launch;

static int wc_fd = 1;

static void wc_send(cJSON *o) { tbw_send(wc_fd, o); }
static void wc_simple(const char *type, const char *key, const char *val)
{
    tbw_send_simple(wc_fd, type, key, val);
}

/* ---- the job ----------------------------------------------------------------------------- */

static int add_metric(wc_job *j, const char *name, char *msg, size_t len)
{
    for (int i = 0; i < j->nm; i++) if (strcmp(j->metrics[i], name) == 0) return TB_OK;
    if (j->nm >= TB_COUNTERS_MAX_METRICS)
        return tb_fail(msg, len, TB_EUSAGE, "too many metrics in job (at most %d)", TB_COUNTERS_MAX_METRICS);
    j->metrics[j->nm] = strdup(name);
    if (!j->metrics[j->nm]) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    j->nm++;
    return TB_OK;
}

static int parse_job(const char *line, wc_job *j, char *msg, size_t len)
{
    cJSON *o = cJSON_Parse(line);
    if (!o) return tb_fail(msg, len, TB_EWORKER, "job is not JSON");
    tb_problem prob;
    int rc = tb_wire_problem_from_json(cJSON_GetObjectItemCaseSensitive(o, "problem"), &prob, msg, len);
    if (rc) goto out;
    if (prob.op != TB_OP_GEMM) {   /* the measure mode takes attention; counters not yet */
        rc = tb_fail(msg, len, TB_EWORKER, "attention problems: the counters mode measures GEMM "
                     "only for now (issue 33)");
        goto out;
    }
    j->g = prob.gemm;
    j->scales = prob.gemm_scales;
    j->device = (int)tb_json_num(o, "device", 0);
    const char *uuid = tb_json_str(o, "device_uuid", "");
    if (uuid[0] && (rc = tbw_find_device_uuid(uuid, &j->device, msg, len)) != TB_OK) goto out;
    j->seed = (uint64_t)tb_json_num(o, "seed", 1);
    j->dist = strcmp(tb_json_str(o, "init", "uniform"), "normal") == 0 ? TB_INIT_NORMAL : TB_INIT_UNIFORM;
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(o, "metrics"), *it;
    cJSON_ArrayForEach(it, ms) {
        if (!cJSON_IsString(it)) { rc = tb_fail(msg, len, TB_EWORKER, "a metric in the job is not a string"); goto out; }
        const char *const *set = tb_counters_set(it->valuestring);
        if (set) {
            for (; *set; set++) if ((rc = add_metric(j, *set, msg, len)) != TB_OK) goto out;
        } else if ((rc = add_metric(j, it->valuestring, msg, len)) != TB_OK) {
            goto out;
        }
    }
    if (j->nm == 0) { rc = tb_fail(msg, len, TB_EWORKER, "job names no metrics"); goto out; }
    const cJSON *vs = cJSON_GetObjectItemCaseSensitive(o, "variants");
    int n = cJSON_GetArraySize(vs);
    j->vs = calloc((size_t)(n ? n : 1), sizeof *j->vs);
    if (!j->vs) { rc = tb_fail(msg, len, TB_ENOMEM, "out of memory"); goto out; }
    cJSON_ArrayForEach(it, vs) {
        wc_variant *v = &j->vs[j->nv++];
        snprintf(v->name, sizeof v->name, "%s", tb_json_str(it, "name", ""));
        snprintf(v->file, sizeof v->file, "%s", tb_json_str(it, "file", ""));
        v->index = (int)tb_json_num(it, "index", 0);
    }
out:
    cJSON_Delete(o);
    return rc;
}

/* ---- buffers ----------------------------------------------------------------------------- */

static size_t extent(tb_layout lay, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                     int64_t stride)
{
    int64_t one = lay == TB_LAYOUT_ROW ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
    return (size_t)((batch - 1) * stride + one);
}

typedef struct wc_bufs {
    void *a, *b, *c, *d, *flush;
    unsigned *sink;
    size_t flush_bytes;
} wc_bufs;

static int alloc_bufs(const wc_job *j, cudaStream_t s, wc_bufs *b, char *msg, size_t len)
{
    const tb_gemm *g = &j->g;
    size_t na = extent(g->a_layout, g->m, g->k, g->lda, g->batch, g->stride_a);
    size_t nb = extent(g->b_layout, g->k, g->n, g->ldb, g->batch, g->stride_b);
    size_t nc = g->beta != 0.0 ? extent(g->c_layout, g->m, g->n, g->ldc, g->batch, g->stride_c) : 0;
    size_t nd = extent(g->d_layout, g->m, g->n, g->ldd, g->batch, g->stride_d);
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, j->device);
    size_t fb = (size_t)l2 * 2;
    if (fb < (32u << 20)) fb = 32u << 20;
    fb = (fb + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
    const size_t ea = g->a_type == TB_DTYPE_E4M3 ? 1 : 2, eb = g->b_type == TB_DTYPE_E4M3 ? 1 : 2;
    struct { void **p; size_t bytes; const char *what; } a[] = {
        { &b->a, (na * ea + 7) / 8 * 8, "A" }, { &b->b, (nb * eb + 7) / 8 * 8, "B" },
        { &b->c, nc ? (nc * 2 + 7) / 8 * 8 : 0, "C" }, { &b->d, (nd * 2 + 7) / 8 * 8, "D" },
        { &b->flush, fb, "the L2 flush buffer" }, { (void **)&b->sink, 256, "the flush sink" } };
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        *a[i].p = NULL;
        if (!a[i].bytes) continue;
        cudaError_t e = cudaMalloc(a[i].p, a[i].bytes);
        if (e == cudaSuccess) e = cudaMemsetAsync(*a[i].p, i == 4 ? 0x5a : 0, a[i].bytes, s);
        if (e != cudaSuccess)
            return tb_fail(msg, len, TB_ECUDA, "cannot allocate %s (%zu bytes): %s", a[i].what,
                           a[i].bytes, cudaGetErrorString(e));
    }
    b->flush_bytes = fb;
    /* as the measuring worker draws them (worker/validate.c, tb_validate_fill) */
    int e = ea == 1 ? tbdev_fill_e4m3(b->a, na, j->seed * 31 + 1, j->dist, j->scales.scale_a, s)
                    : tbdev_fill_bf16(b->a, na, j->seed * 31 + 1, j->dist, s);
    if (!e) e = eb == 1 ? tbdev_fill_e4m3(b->b, nb, j->seed * 31 + 2, j->dist, j->scales.scale_b, s)
                        : tbdev_fill_bf16(b->b, nb, j->seed * 31 + 2, j->dist, s);
    if (!e && nc) e = tbdev_fill_bf16(b->c, nc, j->seed * 31 + 3, j->dist, s);
    cudaError_t ce = e ? (cudaError_t)e : cudaStreamSynchronize(s);
    if (ce != cudaSuccess)
        return tb_fail(msg, len, TB_ECUDA, "cannot fill the inputs: %s", cudaGetErrorString(ce));
    return TB_OK;
}

static void free_bufs(wc_bufs *b)
{
    void *p[] = { b->a, b->b, b->c, b->d, b->flush, b->sink };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) if (p[i]) cudaFree(p[i]);
    memset(b, 0, sizeof *b);
}

/* ---- the launch and the flush ------------------------------------------------------------ */

static int wc_launch_fn(void *c)
{
    wc_launch *l = c;
    nvtxRangePushA("tb");
    nvtxRangePushA(l->vname);
    nvtxRangePushA(l->shape);
    nvtxRangePushA("counters");
    int rc = l->v->launch(l->state, &l->prob, &l->io, l->ws, l->ws_bytes, (tb_stream)l->s);
    for (int i = 0; i < 4; i++) nvtxRangePop();
    l->launches++;
    return rc;
}

static void wc_prepare_fn(void *c)
{
    wc_launch *l = c;
    cudaCtxResetPersistingL2Cache();   /* a carve-out would survive the flush */
    cudaGetLastError();
    tbdev_l2_flush(l->flush_buf, l->flush_bytes, l->sink, l->s);
}

/* Is the context still usable after an error? */
static int context_ok(void)
{
    if (cudaDeviceSynchronize() != cudaSuccess) return 0;
    void *p = NULL;
    if (cudaMalloc(&p, 256) != cudaSuccess) return 0;
    cudaFree(p);
    return cudaGetLastError() == cudaSuccess;
}

/* ---- the record -------------------------------------------------------------------------- */

/* One variant through both phases. */
typedef struct wc_state {
    const wc_variant *jv;
    wc_launch l;
    const char *status;          /* ok | unsupported | error | crashed */
    char reason[TB_TEXT_LEN];
    int alive;                   /* set up, launched once, waiting for its counters */
    double values[TB_COUNTERS_MAX_METRICS];
    int have_values;
    char metrics_why[TB_TEXT_LEN];   /* why no metric has a value, when none has */
    int passes, kernels;
    tb_kernel_res res[WC_MAX_KERNELS];
    int nres;
    char res_why[TB_TEXT_LEN];   /* why the resources are missing, "" when read */
} wc_state;

static cJSON *json_int3(const int *v)
{
    return cJSON_CreateIntArray(v, 3);
}

static void send_metrics(const wc_job *j, const tb_counters *c, const wc_state *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "metrics");
    cJSON_AddNumberToObject(o, "pid", (double)getpid());
    cJSON_AddStringToObject(o, "variant", r->jv->name);
    cJSON_AddStringToObject(o, "status", r->status);
    if (strcmp(r->status, "ok") != 0) cJSON_AddStringToObject(o, "reason", r->reason);
    cJSON_AddNumberToObject(o, "passes", r->passes);
    cJSON_AddNumberToObject(o, "kernels", r->kernels);
    cJSON_AddStringToObject(o, "range", "auto");
    if (c) cJSON_AddStringToObject(o, "chip", tb_counters_chip(c));
    cJSON *ma = cJSON_AddArrayToObject(o, "metrics");
    for (int i = 0; i < j->nm; i++) {
        cJSON *m = cJSON_CreateObject();
        char why[TB_TEXT_LEN] = "";
        const char *name = c ? tb_counters_name(c, i) : j->metrics[i];
        int avail = c && tb_counters_available(c, i, why, sizeof why);
        int have = avail && r->have_values && !isnan(r->values[i]);
        cJSON_AddStringToObject(m, "name", name);
        if (have) cJSON_AddNumberToObject(m, "value", r->values[i]);
        cJSON_AddStringToObject(m, "unit", tb_counters_unit(name));
        cJSON_AddBoolToObject(m, "available", have);
        if (!have)
            cJSON_AddStringToObject(m, "reason", !avail && why[0] ? why
                                    : r->metrics_why[0] ? r->metrics_why : "not collected");
        cJSON_AddItemToArray(ma, m);
    }
    cJSON *ra = cJSON_AddArrayToObject(o, "resources");
    for (int i = 0; i < r->nres && i < WC_MAX_KERNELS; i++) {
        const tb_kernel_res *k = &r->res[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", k->name);
        cJSON_AddItemToObject(e, "grid", json_int3(k->grid));
        cJSON_AddItemToObject(e, "block", json_int3(k->block));
        cJSON_AddItemToObject(e, "cluster", json_int3(k->cluster));
        cJSON_AddNumberToObject(e, "regs", k->regs);
        cJSON_AddNumberToObject(e, "static_smem", k->static_smem);
        cJSON_AddNumberToObject(e, "dynamic_smem", k->dynamic_smem);
        cJSON_AddNumberToObject(e, "local_per_thread", k->local_per_thread);
        cJSON_AddNumberToObject(e, "count", k->count);
        cJSON_AddItemToArray(ra, e);
    }
    if (r->res_why[0]) cJSON_AddStringToObject(o, "resources_error", r->res_why);
    wc_send(o);
}

static void send_begin(const wc_variant *jv, const char *phase)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "begin");
    cJSON_AddStringToObject(o, "variant", jv->name);
    cJSON_AddStringToObject(o, "phase", phase);
    wc_send(o);
}

static void release(wc_state *r)
{
    if (r->l.state && r->l.v && r->l.v->teardown) r->l.v->teardown(r->l.state);
    if (r->l.ws) cudaFree(r->l.ws);
    r->l.state = r->l.ws = NULL;
    r->alive = 0;
}

/* The record of a variant whose counters never come, then the end of the process when the
 * context is gone. */
static void finish_early(const wc_job *j, wc_state *r, int lost)
{
    send_metrics(j, NULL, r);
    if (lost) {
        wc_simple("lost", "error", r->reason);
        _exit(3);
    }
}

/* ---- phase 1: load, set up, one launch with its resources --------------------------------- */

/* Returns 1 when the variant is ready for its counters; 0 when its record is final (sent). */
static int prepare_variant(const wc_job *j, const wc_variant *jv, cudaStream_t s, const wc_bufs *b,
                           wc_state *r)
{
    char msg[TB_MSG_LEN];
    tb_lib *lib = NULL;
    const tb_variant *v = NULL;
    r->jv = jv;
    r->status = "error";
    int rc = tb_lib_open(jv->file, &lib, msg, sizeof msg);
    if (rc == TB_OK) rc = tb_lib_variant(lib, (uint32_t)jv->index, &v, msg, sizeof msg);
    if (rc == TB_OK && (!v || strcmp(v->name, jv->name) != 0)) {
        rc = TB_ELOAD;
        snprintf(msg, sizeof msg, "'%.300s' index %d is no longer '%.127s'", jv->file, jv->index, jv->name);
    }
    tb_lib_free(lib);
    if (rc != TB_OK) {
        snprintf(r->reason, sizeof r->reason, "%s", msg);
        snprintf(r->metrics_why, sizeof r->metrics_why, "the variant could not be loaded");
        finish_early(j, r, 0);
        return 0;
    }

    wc_launch *l = &r->l;
    l->v = v;
    l->prob.struct_size = sizeof l->prob;
    l->prob.op = TB_OP_GEMM;
    l->prob.gemm = j->g;
    l->prob.gemm_scales = j->scales;
    l->io.struct_size = sizeof l->io;
    l->io.in[0] = b->a;
    l->io.in[1] = b->b;
    l->io.in[2] = j->g.beta != 0.0 ? b->c : NULL;
    l->io.out[0] = b->d;
    l->s = s;
    l->vname = jv->name;
    snprintf(l->shape, sizeof l->shape, "%lldx%lldx%lld", (long long)j->g.m, (long long)j->g.n,
             (long long)j->g.k);
    l->flush_buf = b->flush;
    l->flush_bytes = b->flush_bytes;
    l->sink = b->sink;

    char hw[256] = "";
    if (tb_variant_host_refuses(v, &l->prob, hw, sizeof hw)) {   /* before supports: trials.c */
        r->status = "unsupported";
        snprintf(r->reason, sizeof r->reason, "%s", hw);
        snprintf(r->metrics_why, sizeof r->metrics_why, "the variant does not support the problem");
        finish_early(j, r, 0);
        return 0;
    }
    if (v->supports) {
        char why[256] = "";
        if (!v->supports(&l->prob, why, sizeof why)) {
            r->status = "unsupported";
            snprintf(r->reason, sizeof r->reason, "%s", why[0] ? why : "not supported");
            snprintf(r->metrics_why, sizeof r->metrics_why, "the variant does not support the problem");
            finish_early(j, r, 0);
            return 0;
        }
    }
    if (v->setup) {
        char sm[256] = "";
        if (v->setup(&l->prob, (tb_stream)s, &l->state, sm, sizeof sm) != 0) {
            l->state = NULL;
            snprintf(r->reason, sizeof r->reason, "setup failed: %s", sm[0] ? sm : "(no message)");
            snprintf(r->metrics_why, sizeof r->metrics_why, "the variant's setup failed");
            finish_early(j, r, !context_ok());
            return 0;
        }
    }
    l->ws_bytes = v->workspace_size ? v->workspace_size(&l->prob) : 0;
    if (l->ws_bytes && cudaMalloc(&l->ws, l->ws_bytes) != cudaSuccess) {
        cudaGetLastError();
        l->ws = NULL;
        snprintf(r->reason, sizeof r->reason, "cannot allocate %zu workspace bytes", l->ws_bytes);
        snprintf(r->metrics_why, sizeof r->metrics_why, "no workspace");
        release(r);
        finish_early(j, r, 0);
        return 0;
    }

    /* one launch, recorded by the activity API (inside the NVTX range, even when the activity
     * API is unavailable, so that ncu --nvtx-include finds exactly this launch). It starts
     * from the state every counter pass starts from (persisting lines reset, L2 flushed), so
     * that ncu --cache-control none on it sees the cache state of tilebench's own passes. */
    wc_prepare_fn(l);
    cudaDeviceSynchronize();   /* the flush kernel must not land among the activity records */
    cudaGetLastError();
    int res_on = tb_resources_start(r->res_why, sizeof r->res_why) == TB_OK;
    int lrc = wc_launch_fn(l);
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce == cudaSuccess) ce = cudaGetLastError();
    if (res_on) {
        int n = 0;
        int rr = tb_resources_stop(r->res, WC_MAX_KERNELS, &n, r->res_why, sizeof r->res_why);
        r->nres = n < WC_MAX_KERNELS ? n : WC_MAX_KERNELS;
        if (rr == TB_OK) r->res_why[0] = 0;
    }
    if (lrc || ce != cudaSuccess) {
        r->status = "crashed";
        if (lrc) snprintf(r->reason, sizeof r->reason, "launch returned %d", lrc);
        else snprintf(r->reason, sizeof r->reason, "kernel failed: %s", cudaGetErrorString(ce));
        snprintf(r->metrics_why, sizeof r->metrics_why, "the launch failed");
        int lost = !context_ok();
        if (!lost) release(r);
        finish_early(j, r, lost);
        return 0;
    }
    r->status = "ok";
    r->alive = 1;
    return 1;
}

/* ---- phase 2: the counters ---------------------------------------------------------------- */

/* Collect r's counters (when c is open), release it and send its record. */
static void count_variant(const wc_job *j, wc_state *r, tb_counters **cp, char *cwhy, size_t cwhy_len)
{
    char msg[TB_MSG_LEN];
    int lost = 0, gone = 0;
    if (!*cp) {
        snprintf(r->metrics_why, sizeof r->metrics_why, "%s", cwhy);
    } else {
        int rc = tb_counters_collect(*cp, wc_launch_fn, wc_prepare_fn, &r->l, r->values, &r->passes,
                                     msg, sizeof msg);
        if (rc == TB_OK) {
            r->have_values = 1;
            r->kernels = tb_counters_kernels(*cp);
        } else if (rc == TB_ENOGPU) {
            /* the counters went away (a profiler attached, permissions): not again */
            gone = 1;
            snprintf(cwhy, cwhy_len, "%s", msg);
            snprintf(r->metrics_why, sizeof r->metrics_why, "%s", msg);
        } else if (rc == TB_EWORKER) {
            r->status = "crashed";
            snprintf(r->reason, sizeof r->reason, "%s", msg);
            snprintf(r->metrics_why, sizeof r->metrics_why, "the launch failed during the counter passes");
            lost = !context_ok();
        } else {
            snprintf(r->metrics_why, sizeof r->metrics_why, "%s", msg);
            if (!context_ok()) {
                r->status = "crashed";
                snprintf(r->reason, sizeof r->reason, "%s", msg);
                lost = 1;
            }
        }
    }
    if (!lost) release(r);
    send_metrics(j, *cp, r);
    if (gone) {
        tb_counters_close(*cp);
        *cp = NULL;
    }
    if (lost) {
        wc_simple("lost", "error", r->reason);
        _exit(3);
    }
}

/* ---- the mode ----------------------------------------------------------------------------- */

int tb_worker_counters(int out_fd)
{
    char msg[TB_MSG_LEN];
    wc_fd = out_fd;
    tb_linebuf lb = { 0 };
    char *line = tbw_read_job(&lb);
    if (!line) { tb_linebuf_free(&lb); wc_simple("fatal", "error", "no job on stdin"); return 2; }
    wc_job j;
    memset(&j, 0, sizeof j);
    int rc = parse_job(line, &j, msg, sizeof msg);
    free(line);
    tb_linebuf_free(&lb);
    if (rc) { wc_simple("fatal", "error", msg); return 2; }

    cudaStream_t s = NULL;
    cudaError_t e = cudaSuccess;
    if (tbw_open_device(j.device, msg, sizeof msg) == TB_OK &&
        (e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
        snprintf(msg, sizeof msg, "cannot use GPU %d: %s", j.device, cudaGetErrorString(e));
    if (!s) {
        wc_simple("fatal", "error", msg);
        return 2;
    }
    wc_bufs b;
    memset(&b, 0, sizeof b);
    wc_state *st = calloc((size_t)(j.nv ? j.nv : 1), sizeof *st);
    if (!st || alloc_bufs(&j, s, &b, msg, sizeof msg) != TB_OK) {
        wc_simple("fatal", "error", st ? msg : "out of memory");
        return 2;
    }
    wc_simple("ready", NULL, NULL);

    /* phase 1: every variant set up and launched once, its resources read through the
     * activity API, before the profiler is initialised (the two are kept apart in time) */
    for (int i = 0; i < j.nv; i++) {
        send_begin(&j.vs[i], "resources");
        prepare_variant(&j, &j.vs[i], s, &b, &st[i]);
    }

    /* phase 2: the counters. Unavailable counters are not a failure: every metric is then
     * reported unavailable with the reason */
    tb_counters *c = NULL;
    char cwhy[TB_MSG_LEN] = "";
    if (tb_counters_open(j.device, (const char *const *)j.metrics, &c, cwhy, sizeof cwhy) != TB_OK)
        c = NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "counters");
    cJSON_AddStringToObject(o, "chip", c ? tb_counters_chip(c) : "");
    cJSON_AddBoolToObject(o, "available", c != NULL);
    if (c) cJSON_AddNumberToObject(o, "passes_needed", tb_counters_passes_needed(c));
    else cJSON_AddStringToObject(o, "reason", cwhy);
    wc_send(o);
    for (int i = 0; i < j.nv; i++) {
        if (!st[i].alive) continue;
        send_begin(&j.vs[i], "counters");
        count_variant(&j, &st[i], &c, cwhy, sizeof cwhy);
    }
    wc_simple("done", NULL, NULL);
    tb_counters_close(c);
    free(st);
    free_bufs(&b);
    cudaStreamDestroy(s);
    for (int i = 0; i < j.nm; i++) free(j.metrics[i]);
    free(j.vs);
    return 0;
}
