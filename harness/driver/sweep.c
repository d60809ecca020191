/* sweep.c - the parent's measurement loop (see sweep.h). */
#define _GNU_SOURCE
#include "driver/sweep.h"
#include "driver/shard.h"
#include "driver/sweep_int.h"
#include "driver/sanitize.h"
#include "driver/early.h"
#include "driver/session.h"
#include "common/nvml.h"
#include "driver/spawn.h"
#include "driver/counters_pass.h"
#include "driver/worker_job.h"
#include "common/tb.h"
#include "common/op.h"
#include "common/wire.h"
#include "common/problem.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void tb_sweep_opts_default(tb_sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->timeout_s = 10.0;
    o->watchdog_factor = 50.0;
    o->max_time_s = 1.0;
    o->target_rse = 0.005;
    o->min_samples = 10;
    o->max_samples = 1000;
    o->warmup = 3;
    o->trials = 3;
    snprintf(o->layout, sizeof o->layout, "tn");
    snprintf(o->dtype, sizeof o->dtype, "bf16");
    snprintf(o->attn_layout, sizeof o->attn_layout, "bhsd");
    o->seed = 20261123;
    snprintf(o->init, sizeof o->init, "uniform");
    o->alpha = 1.0;
    o->beta = 0.0;
    o->device = 0;
    snprintf(o->stop, sizeof o->stop, "stdrel");
    snprintf(o->method, sizeof o->method, "auto");
    snprintf(o->l2, sizeof o->l2, "cold");
}

int tb_sweep_opts_for_shapes(const tb_sweep_opts *o, const tb_shape_list *l, char *msg, size_t len)
{
    if (!tb_shapes_any_attention(l)) {
        const char *opt = o->attn_layout[0] && strcmp(o->attn_layout, "bhsd") ? "--attn-layout"
                        : o->softmax_scale != 0.0 ? "--softmax-scale" : NULL;
        if (opt)
            return tb_fail(msg, len, TB_EUSAGE, "%s applies to attention shapes only (issue 33)", opt);
        return TB_OK;
    }
    const char *opt = o->metrics[0] ? "--metrics" : strcmp(o->dtype, "bf16") ? "--dtype"
                    : strcmp(o->layout, "tn") ? "--layout" : o->pad ? "--pad"
                    : o->alpha != 1.0 ? "--alpha" : o->beta != 0.0 ? "--beta" : NULL;
    if (opt)
        return tb_fail(msg, len, TB_EUSAGE, "attention shapes: %s applies to GEMM only (issue 33)",
                       opt);
    return TB_OK;
}

void tb_sweep_problem(const tb_shape *s, const tb_sweep_opts *o, tb_problem_info *p)
{
    if (s->op == TB_OP_ATTENTION_FWD) {   /* packed in --attn-layout, --softmax-scale or 1/sqrt(D) */
        tb_problem_info_attention(s, strcmp(o->attn_layout, "bshd") ? TB_ATTN_BHSD : TB_ATTN_BSHD,
                                  o->softmax_scale, p);
        return;
    }
    memset(p, 0, sizeof *p);
    snprintf(p->op, sizeof p->op, "gemm");
    p->m = s->m; p->n = s->n; p->k = s->k; p->batch = s->batch;
    const int fp8 = strcmp(o->dtype, "e4m3") == 0;
    snprintf(p->dtypes, sizeof p->dtypes, "%s", fp8 ? "e4m3,e4m3,bf16,bf16,f32"
                                                    : "bf16,bf16,bf16,bf16,f32");
    p->scale_a = fp8 ? TB_FP8_SCALE_A : 0.0;   /* 0: none (record.h) */
    p->scale_b = fp8 ? TB_FP8_SCALE_B : 0.0;
    snprintf(p->layouts, sizeof p->layouts, "%s", o->layout);
    int a_row = o->layout[0] == 't', b_col = o->layout[1] == 'n';
    p->lda = (a_row ? s->k : s->m) + o->pad;
    p->ldb = (b_col ? s->k : s->n) + o->pad;
    p->ldc = p->ldd = s->n + o->pad;
    p->alpha = o->alpha;
    p->beta = o->beta;
    snprintf(p->label, sizeof p->label, "%s", s->label);
}

void tb_sweep_problem_abi(const tb_problem_info *p, tb_problem *out)
{
    if (tb_problem_info_is_attention(p)) {
        char msg[TB_MSG_LEN];
        if (tb_problem_info_attention_abi(p, out, msg, sizeof msg) != TB_OK) {
            memset(out, 0, sizeof *out);   /* no sizes: the wire refuses it */
            out->struct_size = sizeof *out;
            out->op = TB_OP_ATTENTION_FWD;
        }
        return;
    }
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->op = TB_OP_GEMM;
    tb_gemm *g = &out->gemm;
    g->m = p->m; g->n = p->n; g->k = p->k; g->batch = p->batch;
    g->a_type = g->b_type = g->c_type = g->d_type = TB_DTYPE_BF16;
    if (strncmp(p->dtypes, "e4m3,e4m3,", 10) == 0) g->a_type = g->b_type = TB_DTYPE_E4M3;
    out->gemm_scales.scale_a = p->scale_a > 0 ? (float)p->scale_a : 1.0f;   /* variant.h: 1 */
    out->gemm_scales.scale_b = p->scale_b > 0 ? (float)p->scale_b : 1.0f;
    g->acc_type = TB_DTYPE_F32;
    g->a_layout = p->layouts[0] == 't' ? TB_LAYOUT_ROW : TB_LAYOUT_COL;
    g->b_layout = p->layouts[1] == 'n' ? TB_LAYOUT_COL : TB_LAYOUT_ROW;
    g->c_layout = g->d_layout = TB_LAYOUT_ROW;
    g->lda = p->lda; g->ldb = p->ldb; g->ldc = p->ldc; g->ldd = p->ldd;
    g->stride_a = (g->a_layout == TB_LAYOUT_ROW ? p->m : p->k) * p->lda;
    g->stride_b = (g->b_layout == TB_LAYOUT_COL ? p->n : p->k) * p->ldb;
    g->stride_c = p->m * p->ldc;
    g->stride_d = p->m * p->ldd;
    g->alpha = p->alpha;
    g->beta = p->beta;
}

int tb_sweep_probe_env(const char *worker, const char *device, tb_environment *env, char *msg,
                       size_t len)
{
    char dev[80];
    snprintf(dev, sizeof dev, "%s", device);
    char *argv[] = { (char *)"tilebench-worker", (char *)"env", (char *)"--device", dev, NULL };
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    if (rc) return rc;
    tb_proc_close_input(&p);
    rc = tb_fail(msg, len, TB_ENOGPU, "no GPU: the worker reported nothing");
    char *line = NULL;
    while (tb_proc_next(&p, tb_now() + 120.0, NULL, &line) == 1) {
        cJSON *o = cJSON_Parse(line);
        free(line);
        if (!o) continue;
        const char *type = tb_json_str(o, "type", "");
        if (strcmp(type, "env") == 0) rc = tb_wire_env_from_json(o, env, msg, len);
        else if (strcmp(type, "fatal") == 0)
            rc = tb_fail(msg, len, TB_ENOGPU, "%s", tb_json_str(o, "error", "no GPU"));
        cJSON_Delete(o);
    }
    tb_proc_wait(&p, 10.0);
    if (rc != TB_OK && p.exited && WIFEXITED(p.wstatus) && WEXITSTATUS(p.wstatus) == 127) {
        char last[256];
        tb_proc_last_log_line(&p, last, sizeof last);
        rc = tb_fail(msg, len, TB_EWORKER, "%s", last[0] ? last : "cannot run the worker");
    }
    tb_proc_free(&p);
    return rc;
}

/* ---- slots: one per GPU of the sweep, each a worker at a time over the shapes --------------- */

typedef struct rep_wrap {
    sweep_shared *sh;
    const tb_sweep_report *orig;
} rep_wrap;

typedef struct slot {
    sweep_shared *sh;
    int index;               /* its GPU: o->dev[index] (several GPUs) */
    tb_sweep_opts o;         /* the sweep's options, on this slot's GPU */
    rep_wrap wrap;
    tb_sweep_report rep;     /* the reporter's callbacks, called under the lock */
    char msg[TB_MSG_LEN];
} slot;

static void w_warning(void *c, const char *line)
{
    rep_wrap *w = c;
    lk(w->sh);
    if (w->orig->warning) w->orig->warning(w->orig->ctx, line);
    ulk(w->sh);
}

static void w_result(void *c, const tb_variant_info *v, const tb_shape *s, const tb_measurement *m,
                     size_t done, size_t total)
{
    rep_wrap *w = c;
    lk(w->sh);
    if (w->orig->result) w->orig->result(w->orig->ctx, v, s, m, done, total);
    ulk(w->sh);
}

static void w_status(void *c, const tb_variant_info *v, const tb_shape *s, size_t done, size_t total)
{
    rep_wrap *w = c;
    lk(w->sh);
    if (w->orig->status) w->orig->status(w->orig->ctx, v, s, done, total);
    ulk(w->sh);
}

static void w_lock(void *c, int on)
{
    rep_wrap *w = c;
    if (on) lk(w->sh);
    else ulk(w->sh);
}

static void slot_warn(slot *sl, const char *fmt, const char *a, const char *b)
{
    char w[TB_MSG_LEN + 256];
    snprintf(w, sizeof w, fmt, a, b);
    if (sl->rep.warning) sl->rep.warning(sl->rep.ctx, w);
}

/* One shape on one slot: its problem, the sanitizer pass, workers until every variant has a
 * result, the counters pass. When the slot's worker failed before measuring with several GPUs
 * (*failed), what it stored of the shape is deleted, for another slot to measure it whole. */
static int one_shape(slot *sl, size_t s, int *failed, char *why, size_t wlen)
{
    sweep_shared *sh = sl->sh;
    const tb_catalog *cat = sh->cat;
    const tb_sweep_opts *o = &sl->o;
    char *msg = sl->msg;
    size_t len = sizeof sl->msg, nv = cat->n ? cat->n : 1;
    tb_problem_info pi;
    tb_sweep_problem(&sh->shapes->v[s], o, &pi);
    lk(sh);
    int rc = tb_store_put_problem(sh->st, &pi, msg, len);
    ulk(sh);
    if (rc) return rc;
    tb_problem prob;
    tb_sweep_problem_abi(&pi, &prob);
    int *todo = calloc(nv, sizeof *todo), *san_bad = calloc(nv, sizeof *san_bad);
    char (*san)[256] = o->sanitize[0] ? calloc(nv, sizeof *san) : NULL;
    int64_t *mid = calloc(nv, sizeof *mid);
    if (!todo || !san_bad || !mid || (o->sanitize[0] && !san)) {
        free(todo); free(san_bad); free(san); free(mid);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < cat->n; i++) todo[i] = 1;
    uint64_t seed = o->seed * 1000003ull + (uint64_t)s;   /* the shape's place in the whole list */
    for (size_t i = 0; san && i < cat->n && !tb_sweep_stop; i++) {
        lk(sh);
        if (sl->rep.status) sl->rep.status(sl->rep.ctx, &cat->v[i], &sh->shapes->v[s], sh->done, sh->total);
        ulk(sh);
        tb_sweep_sanitize_one(sh->worker, o, &prob, cat, i, seed, san[i], sizeof san[i], &san_bad[i]);
    }
    if (tb_sweep_stop) rc = TB_EINTR;
    shape_ctx sc = { .sh = sh, .gpu_uuid = sh->multi ? o->dev_uuid[sl->index] : NULL, .mid = mid,
                     .san = san, .san_bad = san_bad, .st = sh->st, .run_id = sh->run_id,
                     .problem_id = pi.id, .cat = cat, .shape = &sh->shapes->v[s], .rep = &sl->rep,
                     .todo = todo, .left = cat->n };
    int attempts = 0;
    while (rc == TB_OK && sc.left && !sc.device_failed) {
        size_t before = sc.left;
        rc = tb_sweep_one_worker(&sc, sh->worker, o, &prob, seed, msg, len);
        if (rc == TB_OK && !sc.device_failed && sc.left == before && ++attempts >= 3)
            rc = tb_sweep_fail_rest(&sc, TB_STATUS_ERROR, "worker made no progress three times", msg, len);
    }
    if (rc == TB_OK && sc.device_failed) {
        lk(sh);
        rc = tb_store_delete_problem_measurements(sh->st, sh->run_id, pi.id, msg, len);
        sh->done -= sc.stored;
        ulk(sh);
        *failed = 1;
        snprintf(why, wlen, "%s", sc.fail_why);
    } else if (rc == TB_OK && o->metrics[0]) {
        /* its store writes take the lock themselves (rep.lock): holding it for the whole pass
         * would stall the other GPUs' workers past their watchdogs */
        const double t0 = tb_now();
        rc = tb_sweep_counters_pass(sh->st, sh->worker, o, &prob, cat, mid, seed, &sl->rep, msg, len);
        lk(sh);
        if (sl->rep.phases) sl->rep.phases->s[TB_PH_COUNTERS] += tb_now() - t0;
        ulk(sh);
    }
    free(todo); free(san_bad); free(san); free(mid);
    return rc;
}

static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;   /* a shape changed state */

/* Shape s is not measured: every variant of it recorded as error with why (the lock held, or
 * one thread left). TB_OK or the store's error (msg). */
static int record_failed(sweep_shared *sh, const tb_sweep_report *rep, size_t s, const char *why,
                         char *msg, size_t len)
{
    tb_problem_info pi;
    tb_sweep_problem(&sh->shapes->v[s], sh->o, &pi);
    int rc = tb_store_put_problem(sh->st, &pi, msg, len);
    int *todo = rc ? NULL : calloc(sh->cat->n ? sh->cat->n : 1, sizeof *todo);
    if (!rc && !todo) rc = tb_fail(msg, len, TB_ENOMEM, "out of memory");
    for (size_t i = 0; todo && i < sh->cat->n; i++) todo[i] = 1;
    shape_ctx sc = { .sh = sh, .st = sh->st, .run_id = sh->run_id, .problem_id = pi.id,
                     .cat = sh->cat, .shape = &sh->shapes->v[s], .rep = rep, .todo = todo,
                     .left = sh->cat->n };
    if (!rc) rc = tb_sweep_fail_rest(&sc, TB_STATUS_ERROR, why, msg, len);
    free(todo);
    sh->state[s] = SH_DONE;
    return rc;
}

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1) n++;
    return n;
}

/* A slot's life: take the next shape to do that it has not failed on, measure it, until none
 * is left (waiting while another slot holds one that may come back). A worker that fails
 * before measuring gives the shape back for another GPU; a shape that fails so on two GPUs
 * (or on every GPU still in the sweep) is the shape's fault, and is recorded as failed as on
 * one GPU; a GPU that fails on two shapes in a row is taken out. */
static void *slot_main(void *arg)
{
    slot *sl = arg;
    sweep_shared *sh = sl->sh;
    const uint64_t me = 1ull << sl->index;
    int fails = 0;
    lk(sh);
    for (;;) {
        size_t s = SIZE_MAX, taken = 0;
        for (size_t i = 0; i < sh->shapes->n && sh->rc == TB_OK && !tb_sweep_stop; i++) {
            if (sh->state[i] == SH_TAKEN) taken++;
            /* one GPU: the set's order; several: the costliest shape left first (longest
             * processing time first: a large shape drawn last would run alone at the end) */
            if (sh->state[i] == SH_TODO && !(sh->failed_on[i] & me) &&
                (s == SIZE_MAX || (sh->multi && tb_shard_cost(&sh->shapes->v[i]) > tb_shard_cost(&sh->shapes->v[s]))))
                s = i;
        }
        if (s == SIZE_MAX) {
            if (!sh->multi || !taken || sh->rc != TB_OK || tb_sweep_stop) break;
            pthread_cond_wait(&moved, &sh->mu);   /* one may come back */
            continue;
        }
        sh->state[s] = SH_TAKEN;
        ulk(sh);
        int failed = 0;
        char why[TB_MSG_LEN] = "", shape[64];
        int rc = one_shape(sl, s, &failed, why, sizeof why);
        lk(sh);
        {   /* the shape's token through its op's entry ("MxNxK", "BxHxSqxSkxD:causal") */
            const tb_op_desc *od = tb_op_of_shape(&sh->shapes->v[s]);
            if (!od || od == &tb_op_gemm || !od->shape_text ||   /* a GEMM's as it was */
                od->shape_text(&sh->shapes->v[s], shape, sizeof shape) < 0)
                snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)sh->shapes->v[s].m,
                         (long long)sh->shapes->v[s].n, (long long)sh->shapes->v[s].k);
        }
        sh->state[s] = failed ? SH_TODO : SH_DONE;
        if (rc == TB_OK && failed) {
            sh->failed_on[s] |= me;
            snprintf(sh->why, sizeof sh->why, "GPU %s: %s", sl->o.dev[sl->index], why);
            int on = popcount64(sh->failed_on[s]);
            if (on >= 2 || on >= sh->alive) {   /* the shape, not the GPUs */
                char w[TB_MSG_LEN + 128];
                snprintf(w, sizeof w, "the worker failed before measuring on %d GPU%s (last: %s)",
                         on, on == 1 ? "" : "s", sh->why);
                rc = record_failed(sh, &sl->rep, s, w, sl->msg, sizeof sl->msg);
                slot_warn(sl, "shape %s not measured: %s", shape, w);
            } else
                slot_warn(sl, "%s: its worker failed before measuring; shape %s goes to another GPU",
                          sh->why, shape);
        }
        if (sh->multi) pthread_cond_broadcast(&moved);
        if (rc != TB_OK) {
            if (sh->rc == TB_OK) { sh->rc = rc; snprintf(sh->why, sizeof sh->why, "%s", sl->msg); }
            break;
        }
        if (!failed) { fails = 0; continue; }
        if (++fails >= 2) {
            slot_warn(sl, "GPU %s taken out of this sweep: its worker failed on two shapes in a row%s",
                      sl->o.dev[sl->index], "");
            break;
        }
    }
    sh->alive--;
    if (sh->multi) pthread_cond_broadcast(&moved);
    ulk(sh);
    return NULL;
}

int tb_sweep_run(tb_store *st, int64_t run_id, const char *worker, const tb_sweep_opts *o,
                 const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                 const tb_sweep_report *rep, char *msg, size_t len)
{
    int nslots = o->ndev > 1 ? o->ndev : 1;
    sweep_shared sh = { .multi = nslots > 1, .st = st, .run_id = run_id, .worker = worker,
                        .cat = cat, .shapes = shapes, .o = o, .rep = rep, .alive = nslots };
    sh.state = calloc(shapes->n ? shapes->n : 1, sizeof *sh.state);
    sh.failed_on = calloc(shapes->n ? shapes->n : 1, sizeof *sh.failed_on);
    slot *sl = calloc((size_t)nslots, sizeof *sl);
    pthread_t *th = calloc((size_t)nslots, sizeof *th);
    if (!sh.state || !sh.failed_on || !sl || !th) {
        free(sh.state); free(sh.failed_on); free(sl); free(th);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    for (size_t s = 0; s < shapes->n; s++) {
        if (skip && skip[s]) sh.state[s] = SH_DONE;
        else sh.total += cat->n;
    }
    if (o->sanitize[0]) tb_early_worker_drop();   /* no context of ours beside the sanitizer's */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&sh.mu, &ma);
    pthread_mutexattr_destroy(&ma);
    for (int k = 0; k < nslots; k++) {
        slot *x = &sl[k];
        x->sh = &sh;
        x->index = k;
        x->o = *o;
        x->o.slot = k;
        if (sh.multi) {   /* this slot's GPU; its results are reported under the lock */
            if (!strncmp(o->dev[k], "GPU-", 4)) snprintf(x->o.device_uuid, sizeof x->o.device_uuid, "%s", o->dev[k]);
            else { x->o.device_uuid[0] = 0; x->o.device = atoi(o->dev[k]); }
            x->wrap = (rep_wrap){ &sh, rep };
            x->rep = (tb_sweep_report){ &x->wrap, w_warning, w_result, w_status, rep->phases, w_lock };
        } else x->rep = *rep;
    }
    if (!sh.multi) {
        /* --keep-worker in a sweep: one worker for every shape (a search brings its own
         * session); its exit is counted with the workers' starts */
        tb_shape_session own;
        const int mine = o->keep_worker && !o->session;
        if (mine) {
            tb_shape_session_open(&own);
            sl[0].o.session = &own;
        }
        slot_main(&sl[0]);
        if (mine) {
            const double s = tb_shape_session_close(&own);
            if (rep->phases) rep->phases->s[TB_PH_WORKER_START] += s;
        }
    } else {
        char nm[TB_MSG_LEN];   /* opened once here, not lazily by several threads at once */
        if (tb_nvml_open(nm, sizeof nm) != TB_OK) nm[0] = 0;
        int started = 0;
        for (int k = 0; k < nslots; k++)
            if (pthread_create(&th[k], NULL, slot_main, &sl[k]) == 0) started++;
            else { th[k] = 0; lk(&sh); sh.alive--; ulk(&sh); }
        for (int k = 0; k < nslots; k++) if (th[k]) pthread_join(th[k], NULL);
        if (!started && sh.rc == TB_OK) snprintf(sh.why, sizeof sh.why, "cannot start a thread per GPU");
        /* every GPU taken out, or none left that has not failed on it: what is left to do is
         * recorded as failed, with the last reason */
        for (size_t s = 0; sh.rc == TB_OK && !tb_sweep_stop && s < shapes->n; s++) {
            if (sh.state[s] != SH_TODO) continue;
            char why[TB_MSG_LEN + 96];
            snprintf(why, sizeof why, "%s (%s)", sh.failed_on[s] ? "not measured: its worker failed "
                     "before measuring on every GPU left that tried it" : "no GPU of --devices left "
                     "to measure it", sh.why);
            if ((sh.rc = record_failed(&sh, &sl[0].rep, s, why, sl[0].msg, sizeof sl[0].msg)))
                snprintf(sh.why, sizeof sh.why, "%s", sl[0].msg);
        }
    }
    if (sh.rc == TB_OK && tb_sweep_stop) sh.rc = TB_EINTR;   /* stopped between two shapes */
    int rc = sh.rc;
    if (rc != TB_OK && rc != TB_EINTR) {
        const char *m = sh.why[0] ? sh.why : sl[0].msg;
        snprintf(msg, len, "%s", m);
    }
    pthread_mutex_destroy(&sh.mu);
    free(sh.state);
    free(sh.failed_on);
    free(sl);
    free(th);
    return rc;
}

int tb_sweep_plan(tb_store *st, int64_t run_id, const tb_sweep_opts *o, const tb_catalog *cat,
                  const tb_shape_list *shapes, const int *skip, char *msg, size_t len)
{
    int rc = TB_OK;
    for (size_t s = 0; s < shapes->n && rc == TB_OK; s++) {
        if (skip && skip[s]) continue;
        tb_problem_info pi;
        tb_sweep_problem(&shapes->v[s], o, &pi);
        rc = tb_store_put_problem(st, &pi, msg, len);
        for (size_t i = 0; rc == TB_OK && i < cat->n; i++) {
            tb_measurement m;
            tb_measurement_init(&m);
            m.status = TB_STATUS_PLANNED;
            m.run_id = run_id;
            m.variant_id = cat->v[i].id;
            m.problem_id = pi.id;
            snprintf(m.reason, sizeof m.reason, "to be measured: tilebench sweep --resume %lld",
                     (long long)run_id);
            rc = tb_store_put_measurement(st, &m, msg, len);
        }
    }
    return rc;
}
