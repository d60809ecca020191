/* worker_job.c - the parent's side of one worker job (worker_job.h): the job line a worker
 * reads (options, problem, variants), finding a variant named in a worker's record, and
 * waiting until a dead worker's GPU context is gone. */
#define _GNU_SOURCE
#include "driver/worker_job.h"
#include "common/nvml.h"
#include "driver/spawn.h"
#include "common/tb.h"
#include "common/wire.h"
#include <stdio.h>
#include <string.h>
#include <time.h>

volatile sig_atomic_t tb_sweep_stop = 0;

/* After a worker was killed or died: wait until the driver has torn its context down, so
 * the next measurement does not share the GPU with a dying one. */
void tb_worker_wait_context_gone(pid_t pid, const tb_sweep_report *rep)
{
    char msg[TB_MSG_LEN];
    if (tb_nvml_open(msg, sizeof msg) != TB_OK) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
        return;
    }
    double end = tb_now() + 30.0;
    for (;;) {
        int present = 0;
        if (tb_nvml_pid_on_gpu((int)pid, &present, msg, sizeof msg) != TB_OK || !present) return;
        if (tb_now() > end) {
            if (rep->warning) {
                char w[256];
                snprintf(w, sizeof w, "worker %d still holds a GPU context 30 s after it was "
                         "killed; going on", (int)pid);
                rep->warning(rep->ctx, w);
            }
            return;
        }
        struct timespec ts = { 0, 100 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

cJSON *tb_worker_job_json(const tb_sweep_opts *o, const tb_problem *prob, const tb_catalog *cat,
                       const int *todo, size_t nv, uint64_t seed)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "device", o->device);
    cJSON_AddStringToObject(j, "device_uuid", o->device_uuid);
    cJSON_AddNumberToObject(j, "seed", (double)(seed & ((1ull << 52) - 1)));
    cJSON_AddNumberToObject(j, "trials", o->trials);
    cJSON_AddStringToObject(j, "init", o->init);
    cJSON_AddNumberToObject(j, "warmup", o->warmup);
    cJSON_AddStringToObject(j, "stop", o->stop);
    cJSON_AddStringToObject(j, "method", o->method);
    cJSON_AddStringToObject(j, "l2", o->l2);
    cJSON_AddNumberToObject(j, "profile", o->profile);
    cJSON_AddNumberToObject(j, "energy", !o->no_energy);
    if (o->no_confirm) cJSON_AddNumberToObject(j, "confirm", 0);
    cJSON_AddNumberToObject(j, "pace", o->pace);
    if (o->lockstep) cJSON_AddNumberToObject(j, "lockstep", 1);
    if (o->ndev > 1) cJSON_AddNumberToObject(j, "slot", o->slot);
    if (o->keep_worker) cJSON_AddNumberToObject(j, "keep_worker", 1);
    cJSON_AddItemToObject(j, "problem", tb_wire_problem_to_json(prob));
    cJSON *vs = cJSON_AddArrayToObject(j, "variants");
    for (size_t i = 0; i < nv; i++) {
        if (!todo[i]) continue;
        cJSON *v = cJSON_CreateObject();
        cJSON_AddStringToObject(v, "name", cat->v[i].name);
        if (cat->v[i].ns[0]) cJSON_AddStringToObject(v, "ns", cat->v[i].ns);
        cJSON_AddStringToObject(v, "file", cat->v[i].file);
        cJSON_AddNumberToObject(v, "index", cat->v[i].index);
        cJSON_AddItemToArray(vs, v);
    }
    return j;
}

int tb_worker_job_find_variant(const tb_catalog *cat, const char *name)
{
    for (size_t i = 0; i < cat->n; i++)
        if (strcmp(cat->v[i].name, name) == 0) return (int)i;
    return -1;
}
