/* step.c - the launch, the announcements and the failures every step of `tilebench-worker
 * measure` shares (see step.h). */
#define _GNU_SOURCE
#include "worker/step.h"
#include "worker/out.h"
#include "worker/op_worker.h"
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>

int tbw_do_launch(void *c, cudaStream_t s)
{
    launch_ctx *l = c;
    return l->v->launch(l->state, &l->prob, &l->io, l->ws, l->ws_bytes, (tb_stream)s);
}

int tbw_do_launch_set(void *c, int set, cudaStream_t s)
{
    launch_ctx *l = c;
    return l->v->launch(l->state, &l->prob, &l->sets[set], l->ws, l->ws_bytes, (tb_stream)s);
}

/* Is the context still usable after an error? A sticky error (illegal address, launch
 * failure) poisons it for good. */
int tbw_context_ok(void)
{
    if (cudaDeviceSynchronize() != cudaSuccess) return 0;
    void *p = NULL;
    if (cudaMalloc(&p, 256) != cudaSuccess) return 0;
    cudaFree(p);
    return cudaGetLastError() == cudaSuccess;
}

void tbw_send_begin(const vstate *vs, const char *phase)
{
    /* what is printed from here on is this variant's: marked when the variant changes (in
     * interleaved rounds, at every sample; a lone variant's steps need one mark) */
    static const vstate *marked;
    if (vs != marked) { tbw_log_mark(); marked = vs; }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "begin");
    cJSON_AddStringToObject(o, "variant", vs->jv->name);
    cJSON_AddStringToObject(o, "phase", phase);
    tbw_out_obj(o);
}

/* NVTX: variant -> shape -> phase, so `ncu --nvtx --nvtx-include "tb/<variant>/<shape>/timed/"`
 * selects exactly one variant's timed launches on one shape. */
void tbw_nvtx_push(const worker *w, const vstate *vs, const char *phase)
{
    char shape[96];
    w->opw->shape_text(w, shape, sizeof shape);
    nvtxRangePushA("tb");
    nvtxRangePushA(vs->jv->name);
    nvtxRangePushA(shape);
    nvtxRangePushA(phase);
}

void tbw_nvtx_pop(void)
{
    for (int i = 0; i < 4; i++) nvtxRangePop();
}

/* Record a CUDA failure as a crash; returns 1 if the worker must end (context lost). */
int tbw_cuda_crash(tb_measurement *m, const char *what, const char *err)
{
    m->status = TB_STATUS_CRASHED;
    snprintf(m->reason, sizeof m->reason, "%s: %s", what, err);
    return !tbw_context_ok();
}

void tbw_flag(tb_measurement *m, const char *rule, const char *why)
{
    m->disposition = TB_DISP_INCORRECT;
    snprintf(m->rule, sizeof m->rule, "%s", rule);
    snprintf(m->reason, sizeof m->reason, "%s", why);
}
