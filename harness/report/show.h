/* show.h - the human-readable results table of a run, read from the store. Owns ranking
 * (only status ok + disposition passed are ranked, by median time, and not a host-bound
 * figure), "% of cublaslt", "% of peak at the measured clock" and the host time of a launch.
 * Writes to the FILE* it is given. */
#ifndef TB_SHOW_H
#define TB_SHOW_H
#include <stdio.h>
#include "store/store.h"

/* Print run_id (verbose: also reasons of every failure, describe strings, file hashes;
 * metrics: each measurement's hardware counters and kernel resources, and what its DRAM
 * counters give: arithmetic intensity, bandwidth and, under the newest calibration of the
 * run's GPU, the roofline position, roofline.c). */
/* A row show ranks: ran, passed validation, timed, and not host-bound. */
int tb_show_ranked(const tb_result_row *r);
/* A row whose figure is the host's pace, not the GPU's: the blocking kernel timed out in
 * samples it kept (extra_json "host_bound": docs/method.md, "Host time of a launch"). Shown
 * with its figure and marked, never ranked. */
int tb_show_host_bound(const tb_result_row *r);
/* qsort order of const tb_result_row *: the ranked first, fastest median first; then the
 * host-bound ones, then the rest, each by name. The report's ranking uses it too, so its
 * ranks are show's. */
int tb_show_cmp_rank(const void *a, const void *b);

int tb_show_run(tb_store *s, int64_t run_id, FILE *out, int verbose, int metrics, char *msg,
                size_t len);
#endif
