/* worker_job.h - the parent's side of one worker job: what the sweep and the counter pass
 * send a `tilebench-worker measure|counters` process, and what they do after one died. */
#ifndef TB_WORKER_JOB_H
#define TB_WORKER_JOB_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "tilebench/variant.h"
#include <signal.h>
#include "driver/catalog.h"
#include "driver/sweep_opts.h"

/* Set by the SIGINT/SIGTERM handler the caller installs; the sweep stops at the next
 * message, kills its worker and returns TB_EINTR. */
extern volatile sig_atomic_t tb_sweep_stop;

/* The job of one problem for the variants of cat whose todo[i] is set (nv of them). */
cJSON *tb_worker_job_json(const tb_sweep_opts *o, const tb_problem *prob, const tb_catalog *cat,
                          const int *todo, size_t nv, uint64_t seed);
/* The index in cat of the variant named name, or -1. */
int tb_worker_job_find_variant(const tb_catalog *cat, const char *name);
/* After a worker was killed or died: wait (at most 30 s, warning through rep) until the
 * driver has torn its context down, so the next measurement does not share the GPU with it. */
void tb_worker_wait_context_gone(pid_t pid, const tb_sweep_report *rep);
#endif
