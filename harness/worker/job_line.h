/* job_line.h - the job lines of tilebench-worker's measure mode, without CUDA: a line split
 * into its variants and the rest (the problem, the seeds, the options), its "more" flag, and
 * the check that a follow-up job is for the problem of the first. The protocol (job.h):
 *   a job without "more" (a sweep's): the worker measures its variants, sends "done", exits;
 *   "more": true: after its "done" the worker reads another job line, which must equal the
 *   first in everything but "variants" and "more" (same problem, seeds and options, so the
 *   buffers, the reference and the context stay valid), sends "ready", measures the new
 *   variants, and so on until stdin ends (exit 0) or a job without "more" was measured;
 *   "keep_worker": 1 in the first job (sweep and search --keep-worker): a follow-up job may
 *   also carry another "problem" and "seed" (everything else equal); the worker then frees the
 *   problem's buffers and takes the new problem before it measures (job.c). */
#ifndef TB_WORKER_JOB_LINE_H
#define TB_WORKER_JOB_LINE_H
#include <stddef.h>
#include <cjson/cJSON.h>

/* Parse line: *rest the job less "variants" and "more" (free with cJSON_Delete), *variants its
 * "variants" array (an empty one when it has none; free it too), *more 1 when "more" is true
 * (or a non-zero number). TB_OK, or TB_EWORKER with msg (nothing to free). */
int tbw_job_split(const char *line, cJSON **rest, cJSON **variants, int *more, char *msg,
                  size_t len);

/* A follow-up job's rest against the first job's: TB_OK when equal (key order aside), else
 * TB_EUSAGE with msg naming the first key that differs. */
int tbw_job_same(const cJSON *first, const cJSON *rest, char *msg, size_t len);

/* A follow-up job's rest against the first job's and the one before it (prev: the job the
 * worker measured last; first itself after the first job): TB_OK with *retake 0 when rest
 * equals prev; with *retake 1 when first has "keep_worker" and rest differs from prev only in
 * "problem" and "seed" (the worker takes the new problem). Else TB_EUSAGE with msg naming the
 * first key that differs (tbw_job_same's message), or TB_ENOMEM. */
int tbw_job_follow(const cJSON *first, const cJSON *prev, const cJSON *rest, int *retake,
                   char *msg, size_t len);
#endif
