/* counters_pass.c - the counter pass of a shape (--metrics): one `tilebench-worker counters`
 * process after the timing workers, its records stored as the metrics of the measurements
 * they describe (counters_pass.h). */
#define _GNU_SOURCE
#include "driver/counters_pass.h"
#include "driver/spawn.h"
#include "driver/worker_job.h"
#include "common/tb.h"
#include "common/wire.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Metrics and kernel resources of one variant's record from the counters worker. */
static int store_metrics(tb_store *st, int64_t mid, const cJSON *rec, char *msg, size_t len)
{
    const cJSON *ms = cJSON_GetObjectItemCaseSensitive(rec, "metrics"), *it;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(rec, "resources");
    size_t n = (size_t)cJSON_GetArraySize(ms) + 8 * (size_t)cJSON_GetArraySize(rs) + 1, k = 0;
    tb_metric *m = calloc(n, sizeof *m);
    if (!m) return TB_ENOMEM;
    /* provenance: the counters came from this process, never the one that timed */
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(rec, "pid"))) {
        tb_metric *x = &m[k++];
        snprintf(x->name, sizeof x->name, "tb.counters_pid");
        snprintf(x->unit, sizeof x->unit, "pid");
        x->value = tb_json_num(rec, "pid", NAN);
        x->available = 1;
    }
    cJSON_ArrayForEach(it, ms) {
        tb_metric *x = &m[k++];
        snprintf(x->name, sizeof x->name, "%s", tb_json_str(it, "name", "?"));
        snprintf(x->unit, sizeof x->unit, "%s", tb_json_str(it, "unit", ""));
        x->available = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it, "available"));
        x->value = x->available ? tb_json_num(it, "value", NAN) : NAN;
        snprintf(x->reason, sizeof x->reason, "%s", tb_json_str(it, "reason", ""));
    }
    /* kernel resources as metrics "kernelI.<what>"; the kernel's name is in the reason of
     * its "kernelI.registers_per_thread" row */
    int ki = 0;
    cJSON_ArrayForEach(it, rs) {
        struct { const char *what, *key, *unit; } f[] = {
            { "registers_per_thread", "regs", "registers" }, { "static_smem", "static_smem", "bytes" },
            { "dynamic_smem", "dynamic_smem", "bytes" }, { "local_per_thread", "local_per_thread", "bytes" },
            { "launches", "count", "" } };
        for (size_t q = 0; q < sizeof f / sizeof f[0] && k < n; q++) {
            tb_metric *x = &m[k++];
            snprintf(x->name, sizeof x->name, "kernel%d.%s", ki, f[q].what);
            snprintf(x->unit, sizeof x->unit, "%s", f[q].unit);
            x->value = tb_json_num(it, f[q].key, NAN);
            x->available = !isnan(x->value);
            if (q == 0) snprintf(x->reason, sizeof x->reason, "%s", tb_json_str(it, "name", ""));
        }
        ki++;
    }
    int rc = tb_store_put_metrics(st, mid, m, k, msg, len);
    free(m);
    return rc;
}

/* The counter pass of a shape (--metrics): one `tilebench-worker counters` process, never
 * the timing ones, for every variant that was measured; its records go to the metrics of
 * those measurements. A counter worker that dies costs only the metrics. */
int tb_sweep_counters_pass(tb_store *st, const char *worker, const tb_sweep_opts *o,
                         const tb_problem *prob, const tb_catalog *cat, const int64_t *mid,
                         uint64_t seed, const tb_sweep_report *rep, char *msg, size_t len)
{
    int *all = calloc(cat->n ? cat->n : 1, sizeof *all);
    for (size_t i = 0; i < cat->n; i++) all[i] = mid[i] > 0;
    cJSON *job = tb_worker_job_json(o, prob, cat, all, cat->n, seed);
    free(all);
    cJSON *ma = cJSON_AddArrayToObject(job, "metrics");
    char *copy = strdup(o->metrics), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        cJSON_AddItemToArray(ma, cJSON_CreateString(t));
    free(copy);
    char *argv[] = { (char *)"tilebench-worker", (char *)"counters", NULL };
    tb_proc p;
    int rc = tb_proc_start(&p, worker, argv, msg, len);
    if (rc) { cJSON_Delete(job); return TB_OK; }
    tb_wire_send(p.in_fd, job);
    cJSON_Delete(job);
    tb_proc_close_input(&p);
    char *line;
    int r, done_ok = 0;
    while ((r = tb_proc_next(&p, tb_now() + 300.0, &tb_sweep_stop, &line)) == 1) {
        cJSON *rec = cJSON_Parse(line);
        free(line);
        if (!rec) continue;
        const char *type = tb_json_str(rec, "type", "");
        if (!strcmp(type, "metrics")) {
            int vi = tb_worker_job_find_variant(cat, tb_json_str(rec, "variant", ""));
            if (vi >= 0 && mid[vi] > 0) {
                char m2[TB_MSG_LEN];
                if (rep->lock) rep->lock(rep->ctx, 1);
                int bad = store_metrics(st, mid[vi], rec, m2, sizeof m2) != TB_OK;
                if (rep->lock) rep->lock(rep->ctx, 0);
                if (bad && rep->warning) rep->warning(rep->ctx, m2);
            }
        } else if (!strcmp(type, "done")) {
            done_ok = 1;
        } else if (!strcmp(type, "fatal") && rep->warning) {
            char w[TB_MSG_LEN];
            snprintf(w, sizeof w, "counters: %s", tb_json_str(rec, "error", "?"));
            rep->warning(rep->ctx, w);
        }
        cJSON_Delete(rec);
    }
    if (r != 0) tb_proc_kill(&p);
    tb_proc_wait(&p, 30.0);
    if (!done_ok && rep->warning) {
        char how[128], w[256];
        tb_proc_describe_exit(&p, how, sizeof how);
        snprintf(w, sizeof w, "the counter pass of %lldx%lldx%lld ended early (%s): some metrics "
                 "are missing", (long long)prob->gemm.m, (long long)prob->gemm.n, (long long)prob->gemm.k, how);
        rep->warning(rep->ctx, w);
        tb_worker_wait_context_gone(p.pid, rep);
    }
    tb_proc_free(&p);
    return r == -2 ? TB_EINTR : TB_OK;
}
