/* op_worker_gemm.c - the worker's table entry for TB_OP_GEMM (op_worker.h): the GEMM's problem,
 * its buffers (worker/buffers.c's tbw_alloc_gemm_bufs), the launch's A, B, C and D, and the
 * trial's steps and rule (worker/validate.c). Also the lookup over every entry. */
#include "worker/op_worker.h"
#include "common/tb.h"
#include "worker/buffers.h"
#include "worker/validate.h"
#include <stdio.h>

static int take(worker *w, const tb_problem *p, char *msg, size_t len)
{
    (void)msg; (void)len;
    w->g = p->gemm;
    w->scales = p->gemm_scales;
    return TB_OK;
}

static void launch_args(const worker *w, tb_problem *p, tb_buffers *io)
{
    p->struct_size = sizeof *p;
    p->op = TB_OP_GEMM;
    p->gemm = w->g;
    p->gemm_scales = w->scales;
    io->struct_size = sizeof *io;
    io->in[0] = w->vb.a;
    io->in[1] = w->vb.b;
    io->in[2] = w->g.beta != 0.0 ? w->vb.c : NULL;
    io->out[0] = w->vb.d;
}

static int prepare(worker *w, const vstate *vs, int t, uint64_t seed, int crosscheck,
                   char *msg, size_t len)
{
    (void)t;
    return tb_validate_prepare(w->ref, &w->g, &w->vb, seed, w->dist, vs->use_naive, crosscheck,
                               w->s, msg, len);
}

static int check(worker *w, tb_val_result *vr, char *msg, size_t len)
{
    return tb_validate_check(&w->g, &w->vb, w->dist, w->s, vr, msg, len);
}

static void shape_text(const worker *w, char *buf, size_t len)
{
    snprintf(buf, len, "%lldx%lldx%lld", (long long)w->g.m, (long long)w->g.n, (long long)w->g.k);
}

const tbw_op tbw_op_gemm = {
    TB_OP_GEMM, take, tbw_alloc_gemm_bufs, launch_args, prepare, check, shape_text
};

const tbw_op *tbw_op_for(uint32_t op)
{
    static const tbw_op *const all[] = { &tbw_op_gemm, &tbw_op_attention };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->op == op) return all[i];
    return NULL;
}
