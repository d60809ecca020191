/* session.h - one worker kept alive across several jobs for one problem (search, issue 25: a
 * shape's rounds), so that a round costs its validation and timing, not a worker's start (the
 * CUDA context, the buffers, the reference library: 0.35 s a round on the H100). The worker's
 * side of the protocol: worker/job.h ("more": true). The sweep's worker loop (sweep_worker.c)
 * takes the session's worker when it serves the same job (the same problem, seeds and options:
 * the job less its variants), else starts one; after a job it finished it gives the worker back,
 * alive; a worker that crashed, hung, was interrupted or ended is never given back, so the next
 * job starts a new one. A sweep passes no session: one job per worker, as before; with
 * --keep-worker (sweep or search, one GPU) the key leaves out the problem and the seed, so one
 * worker serves every shape, taking each new problem (worker/job_line.h). */
#ifndef TB_SESSION_H
#define TB_SESSION_H
#include <stddef.h>
#include <cjson/cJSON.h>
#include "driver/spawn.h"

typedef struct tb_shape_session {
    tb_proc p;            /* the live worker, when live */
    int live;
    char *key;            /* the job (less its variants) the live worker serves */
    char *env_line;       /* the environment record it sent when it started: replayed for each
                             later job, so every run stores its environment */
    int starts, jobs;     /* workers started, jobs sent (for the caller's report) */
} tb_shape_session;

/* An empty session: no worker until the first job. */
void tb_shape_session_open(tb_shape_session *s);

/* The session key of job (a worker job, tb_worker_job_json): the job less its "variants" and
 * "more" (and its "problem" and "seed" when it has "keep_worker": one worker for every shape),
 * as JSON text (malloc'd), or NULL out of memory. */
char *tb_shape_session_key(const cJSON *job);

/* The live worker, when it serves key: 1, with *p its process (now the caller's) and *env_line
 * a copy of its environment record (malloc'd, or NULL). Else 0, and a live worker for another
 * key is closed first (its exit waited for). */
int tb_shape_session_take(tb_shape_session *s, const char *key, tb_proc *p, char **env_line);

/* After a job the worker finished ("done") and still runs: keep it for the next job of key.
 * Takes p (the caller must not free it). */
void tb_shape_session_keep(tb_shape_session *s, const tb_proc *p, const char *key);

/* The environment record a new worker sent (a copy is kept; "" forgets it). */
void tb_shape_session_env(tb_shape_session *s, const char *line);

/* End the live worker, if any: end of file on its job pipe, then wait for it to exit (30 s,
 * then killed); its key and environment record are forgotten. Returns the seconds that took
 * (0 when none was live). The session may be used again. */
double tb_shape_session_close(tb_shape_session *s);
#endif
