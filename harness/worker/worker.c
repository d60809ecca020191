/* worker.c - tilebench-worker: the process that touches the GPU and runs variant code. This
 * file owns main (the modes' dispatch, and where the records go) and the modes `probe` and
 * `env`; the other modes live in their own files.
 *
 * Modes (argv[1]):
 *   probe FILE...   load each library, report its variants (no CUDA initialisation: works
 *                   on a machine without a GPU). Emits {"type":"loading","file"} before and
 *                   {"type":"file",...} after each file, so a crash names its file.
 *   env [--device N] report the GPU and software environment ({"type":"env"}; env.c).
 *   measure         read one job (a JSON line) on stdin and measure its variants on its one
 *                   problem (a job with "more": true is followed by more jobs for the same
 *                   problem on the same context, each answered with its own "done": job.h),
 *                   in phases (docs/method.md; the job and its loop: job.c):
 *                   A. per variant: supports, setup, the trials before timing
 *                      (tbw_validate_before_timing, trials.c), the stream-discipline check
 *                      (discipline.c); then each valid variant's method chosen and warmed
 *                      up (tbw_prepare_timing, timing.c; the input sets: buffers.c);
 *                   B. the valid variants' samples in interleaved rounds (A B C A B C ...),
 *                      each variant stopped by its own criterion (job.c; one sample:
 *                      tbw_take_sample, timing.c);
 *                   D. the best few again, interleaved: the winner confirmed or not (job.c);
 *                   C. per variant: input and hidden-work checks, energy, the trial after
 *                      timing (tbw_check_after_timing, after_timing.c), teardown, the result
 *                      record (result.c).
 *                   Every step that runs variant code is announced ({"type":"begin"}, step.c),
 *                   so the parent knows whom to blame. Each job ends with {"type":"done"}.
 *                   The steps share state.h; each returns 0, or 1 (the variant's result is
 *                   final) or 2 (the context is lost).
 *   counters        counters/worker_counters.h;  calibrate  worker_calibrate.h.
 * Records go to fd 3 when it is open (the parent's result pipe), else to stdout: a variant
 * that prints cannot forge or corrupt a record by writing to stdout (out.c).
 * A CUDA error that leaves the context unusable ends the worker after its result is sent
 * (tbw_lost_exit, result.c); the parent starts a new one for the variants left.
 */
#define _GNU_SOURCE
#include "common/op.h"
#include "common/tb.h"
#include "common/wire.h"
#include "worker/env.h"
#include "worker/job.h"
#include "worker/loader.h"
#include "worker/out.h"
#include "worker/counters/worker_counters.h"
#include "worker/worker_calibrate.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- probe ------------------------------------------------------------------------------ */

static int cmd_probe(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        char msg[TB_MSG_LEN];
        tbw_log_mark();   /* what is printed from here on is this library's */
        tbw_out_simple("loading", "file", argv[i]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "file");
        cJSON_AddStringToObject(o, "file", argv[i]);
        tb_lib *lib = NULL;
        int rc = tb_lib_open(argv[i], &lib, msg, sizeof msg);
        if (rc) {
            cJSON_AddStringToObject(o, "error", msg);
            tbw_out_obj(o);
            continue;
        }
        cJSON *vs = cJSON_AddArrayToObject(o, "variants");
        cJSON *refused = cJSON_AddArrayToObject(o, "refused");
        for (uint32_t idx = 0;; idx++) {
            const tb_variant *v = NULL;
            rc = tb_lib_variant(lib, idx, &v, msg, sizeof msg);
            if (rc) { cJSON_AddItemToArray(refused, cJSON_CreateString(msg)); continue; }
            if (!v) break;
            char pj[8192];   /* larger than the parent's limit, so it sees what is too long */
            cJSON *vo = cJSON_CreateObject();
            cJSON_AddNumberToObject(vo, "index", idx);
            cJSON_AddStringToObject(vo, "name", v->name);
            cJSON_AddStringToObject(vo, "family", v->family);
            cJSON_AddStringToObject(vo, "sass", v->sass ? v->sass : "");
            if (tb_params_json(v->params, pj, sizeof pj) >= (int)sizeof pj)
                memset(pj, '?', sizeof pj - 1);   /* far over the limit: refused as too long */
            cJSON_AddStringToObject(vo, "params", pj);
            cJSON *ops = cJSON_AddArrayToObject(vo, "ops");   /* the operations it computes */
            for (size_t k = 0; k < tb_op_count(); k++)
                if (tb_variant_computes(v, tb_op_at(k)->op))
                    cJSON_AddItemToArray(ops, cJSON_CreateString(tb_op_at(k)->name));
            cJSON_AddItemToArray(vs, vo);
        }
        tb_lib_free(lib);
        tbw_out_obj(o);
    }
    tbw_out_simple("done", NULL, NULL);
    return 0;
}

/* ---- environment ------------------------------------------------------------------------ */

static int cmd_env(int device)
{
    char msg[TB_MSG_LEN];
    tb_environment e;
    int rc = tbw_collect_env(device, &e, msg, sizeof msg);
    if (rc) { tbw_out_simple("fatal", "error", msg); return 2; }
    cJSON *o = tb_wire_env_to_json(&e);
    cJSON_AddStringToObject(o, "type", "env");
    tbw_out_obj(o);
    return 0;
}

int main(int argc, char **argv)
{
    if (fcntl(3, F_GETFD) != -1) {
        tbw_out_fd = 3;
        fcntl(3, F_SETFD, FD_CLOEXEC);
    }
    if (argc < 2) {
        fprintf(stderr, "usage: tilebench-worker probe FILE... | env [--device N] | measure [--device N] | counters | calibrate\n"
                        "(started by tilebench; not meant to be run by hand)\n");
        return 2;
    }
    if (strcmp(argv[1], "probe") == 0) return cmd_probe(argc - 2, argv + 2);
    if (strcmp(argv[1], "env") == 0) {
        int dev = 0;
        char msg[TB_MSG_LEN];
        if (argc > 3 && strcmp(argv[2], "--device") == 0 &&
            tbw_resolve_device(argv[3], &dev, msg, sizeof msg) != TB_OK) {
            tbw_out_simple("fatal", "error", msg);
            return 2;
        }
        return cmd_env(dev);
    }
    if (strcmp(argv[1], "measure") == 0)
        return tbw_cmd_measure(argc > 3 && strcmp(argv[2], "--device") == 0 ? argv[3] : NULL);
    if (strcmp(argv[1], "counters") == 0) return tb_worker_counters(tbw_out_fd);
    if (strcmp(argv[1], "calibrate") == 0) return tb_worker_calibrate(tbw_out_fd);
    if (strcmp(argv[1], "--version") == 0) { printf("tilebench-worker %s\n", TB_VERSION); return 0; }
    fprintf(stderr, "tilebench-worker: unknown mode '%s'\n", argv[1]);
    return 2;
}
