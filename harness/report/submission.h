/* submission.h - a run as a leaderboard submission: the versioned JSON document specified in
 * docs/submission.md and schemas/submission-v{1,2}.schema.json, the one format `tilebench export
 * --format submission` writes, `tilebench submit` will send and `tilebench-server` will parse.
 * Reads the store; never prints. */
#ifndef TB_SUBMISSION_H
#define TB_SUBMISSION_H
#include <stdint.h>
#include <stdio.h>
#include "store/store.h"

#define TB_SUBMISSION_FORMAT "tilebench-submission"
#define TB_SUBMISSION_VERSION 1        /* a run of GEMM rows only: version 1, as ever */
#define TB_SUBMISSION_VERSION_ATTN 2   /* a run with an attention row (issue 33) */
/* The salt of the GPU's UUID hash: SHA-256(salt + UUID) identifies one GPU across submissions
 * without publishing its UUID. */
#define TB_SUBMISSION_UUID_SALT "tilebench-submission-v1:"

/* Write run run_id of s as a submission to out. Per (variant, shape): the library's name,
 * family, parameters and SHA-256; the validation disposition and rule; the status; for a
 * timed, valid result its median with a 95 % percentile-bootstrap interval of the median
 * (1000 resamples, deterministic), the sample count, the SM clock and the joules per launch
 * where measured. The document is version 1 when every row is a GEMM's, 2 when any is an
 * attention problem's (docs/submission.md, "Versions"). TB_OK; TB_EDB (the run or its environment missing, the store damaged);
 * TB_EIO (out); TB_ENOMEM. */
int tb_submission_write(tb_store *s, int64_t run_id, FILE *out, char *msg, size_t len);
#endif
