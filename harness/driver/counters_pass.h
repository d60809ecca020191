/* counters_pass.h - the counter pass of one shape (--metrics), run by tb_sweep_run after the
 * timing workers: a worker that dies costs only the metrics. */
#ifndef TB_COUNTERS_PASS_H
#define TB_COUNTERS_PASS_H
#include <stddef.h>
#include <stdint.h>
#include "tilebench/variant.h"
#include "driver/catalog.h"
#include "driver/sweep_opts.h"
#include "store/store.h"

/* Collect the counters of o->metrics for the variants of cat measured on g (mid[i] > 0, the
 * stored measurement's id) and store them. TB_OK (a failed pass is a warning through rep),
 * or TB_EINTR when stopped. */
int tb_sweep_counters_pass(tb_store *st, const char *worker, const tb_sweep_opts *o,
                           const tb_problem *prob, const tb_catalog *cat, const int64_t *mid,
                           uint64_t seed, const tb_sweep_report *rep, char *msg, size_t len);
#endif
