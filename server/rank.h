/* rank.h - one leaderboard: the submissions of one GPU model ranked on one shape set by the
 * geometric mean of their best validated TFLOP/s per shape (the server's own rate, from the
 * shape and the median). */
#ifndef TBS_RANK_H
#define TBS_RANK_H
#include <stddef.h>
#include "sets.h"
#include "store.h"

/* A JSON array, best first, of {"rank", "submission", "submitter", "submitted_at",
 * "geomean_tflops", "shapes_counted", "shapes_in_set", "best_variant"}; a submission with no
 * validated result on the set is left out. 0, or -1 with msg. *json malloc'd. */
int tbs_rank_json(tbs_store *st, const tbs_set *set, const char *gpu, char **json, char *msg, size_t len);
#endif
