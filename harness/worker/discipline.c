/* discipline.c - the stream-discipline check (the rule "off-stream") and the persisting-L2
 * check of tilebench-worker's measure mode (see discipline.h). */
#define _GNU_SOURCE
#include "worker/discipline.h"
#include "common/tb.h"
#include "device/tbdev.h"
#include "worker/measure.h"
#include "worker/step.h"
#include "worker/validate.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A persisting-L2 carve-out survives the flush: find one (device limit or an access-policy
 * window on our stream), describe it, and undo it. Returns 1 when one was found. */
int tbw_persisting_l2_found(cudaStream_t s, char *why, size_t n)
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

/* The rule "off-stream": a launch puts all its work on the stream it is given, in order,
 * so events on that stream bracket it (the ABI's contract). One more launch on a poisoned D,
 * behind the held blocking kernel: D is counted on a second stream while the first is still
 * held (an element written there was written by work off the stream, before any event on it
 * could start), and in stream order right after the launch; after the device synchronisation
 * it is counted once more (what the launch writes in all). Fewer elements in stream order
 * than in all: the stream's work ended while D was still being written elsewhere. The timing
 * methods cannot see such work, and the hidden-work rule (wall time against events) misses
 * it below 15 us a launch; this rule has no threshold. Needs the blocking kernel: skipped
 * under a profiler. Returns 0 or 1/2 (state.h). */
typedef struct held_ctx { worker *w; vstate *vs; } held_ctx;

static int held_launch(void *c, cudaStream_t s)
{
    held_ctx *h = c;
    cudaEventRecord(h->w->md.e0, s);
    int lrc = tbw_do_launch(&h->vs->lc, s);
    cudaEventRecord(h->w->md.e1, s);
    if (lrc) return lrc;
    return tbdev_count_ne_u16(h->w->vb.d, h->w->vb.nd, TB_POISON_BF16, h->w->held_words + 0, s);
}

static int held_probe(void *c, cudaStream_t side)
{
    held_ctx *h = c;
    return tbdev_count_ne_u16(h->w->vb.d, h->w->vb.nd, TB_POISON_BF16, h->w->held_words + 1, side);
}

int tbw_stream_check(worker *w, vstate *vs)
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
        return tbw_cuda_crash(m, "cannot poison D", msg) ? 2 : 1;
    held_ctx h = { w, vs };
    int held = 0;
    /* long enough for a launch's work to be over wherever it runs */
    double hold = fmin(2.0 * vs->first_wall_ms + 0.5, 100.0);
    tbw_nvtx_push(w, vs, "stream-check");
    int rc = tb_run_held(&w->md, held_launch, &h, hold, w->side, held_probe, &h, &held, msg,
                         sizeof msg);
    tbw_nvtx_pop();
    if (rc == TB_EWORKER) {
        m->status = TB_STATUS_CRASHED;
        snprintf(m->reason, sizeof m->reason, "%s (the stream-discipline launch)", msg);
        return tbw_context_ok() ? 1 : 2;
    }
    if (rc) return tbw_cuda_crash(m, "kernel failed", msg) ? 2 : 1;
    float f = 0;
    /* the launch's GPU time with no host gap in it: the estimate auto chooses from */
    if (held && cudaEventElapsedTime(&f, w->md.e0, w->md.e1) == cudaSuccess && f > 0)
        vs->held_event_ms = f;
    cudaGetLastError();
    unsigned long long n[3] = { 0, 0, 0 };
    if (tbdev_count_ne_u16(w->vb.d, w->vb.nd, TB_POISON_BF16, w->held_words + 2, w->s) != 0 ||
        cudaMemcpyAsync(n, w->held_words, sizeof n, cudaMemcpyDeviceToHost, w->s) != cudaSuccess ||
        cudaStreamSynchronize(w->s) != cudaSuccess)
        return tbw_cuda_crash(m, "cannot count D", "after the stream-discipline launch") ? 2 : 1;
    if (held && n[1] > 0) {
        snprintf(why, sizeof why, "off-stream work: %llu of the %llu elements of D it writes were "
                 "written while its stream was held, before any work on that stream could run",
                 n[1], n[2]);
        tbw_flag(m, "off-stream", why);
        return 1;
    }
    if (n[0] < n[2]) {
        snprintf(why, sizeof why, "off-stream work: when the work on its stream had ended, %llu "
                 "of the %llu elements of D it writes were not yet written", n[2] - n[0], n[2]);
        tbw_flag(m, "off-stream", why);
        return 1;
    }
    return 0;
}
