/* sanitize.h - the --sanitize pass of a sweep: one variant validated once by a worker run under
 * compute-sanitizer (memcheck or racecheck), before the variant is measured; the verdict is
 * the tool's error summary, which sweep.c adds to the measurement. */
#ifndef TB_DRIVER_SANITIZE_H
#define TB_DRIVER_SANITIZE_H
#include <stddef.h>
#include <stdint.h>
#include "common/tb.h"
#include "driver/catalog.h"
#include "driver/sweep_opts.h"
#include "tilebench/variant.h"

/* Validate variant vi of cat on problem g under o->sanitizer (o->sanitize's tool), seed as the
 * sweep's. verdict: "memcheck: 0 errors", "memcheck: 3 errors: FIRST LINE", "...: not run: WHY"
 * or "...: timed out after 600 s"; *bad = 1 when the tool found errors. Never fails. */
void tb_sweep_sanitize_one(const char *worker, const tb_sweep_opts *o, const tb_problem *prob,
                           const tb_catalog *cat, size_t vi, uint64_t seed, char *verdict,
                           size_t vlen, int *bad);
#endif
