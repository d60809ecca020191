/* job.h - the `measure` mode of tilebench-worker: one job read on stdin, the worker set up
 * for it, its variants taken through the phases (worker.c says which) in its loop, every
 * result sent.
 *
 * The protocol on stdin (job_line.h), one JSON line a job:
 *   {"problem":..,"seed":..,options..,"variants":[..]}       a sweep's job: measured, then
 *       {"type":"done"}, and the worker exits (0);
 *   {..same problem, seed and options..,"variants":[..],"more":true}   a session's job (search,
 *       issue 25: one worker per shape across its rounds): after its "done" the worker reads
 *       the next line, which must equal the first job in everything but "variants" and "more"
 *       (else a fatal record, exit 2), sends {"type":"ready"} and measures the new variants
 *       on the same context, buffers and reference library (validation and timing as for any
 *       job, the new variants interleaved among themselves), then "done" again; it exits 0
 *       when stdin ends, or after a job without "more".
 * Records out: env (once, when the device is opened), ready (once per job), begin / estimate /
 * progress / result per variant, done per job (with that job's phases), fatal, lost. */
#ifndef TB_WORKER_JOB_H
#define TB_WORKER_JOB_H

/* Returns the worker's exit status: 0; 2 when there is no job, it is unusable, or the set-up
 * failed (a {"type":"fatal","error"} record says why). A lost context ends the process with
 * status 3 (tbw_lost_exit). early_device (measure --device D; NULL: none): open D and report
 * its environment before reading the job, which must then be for D. */
int tbw_cmd_measure(const char *early_device);

#endif
