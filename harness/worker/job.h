/* job.h - the `measure` mode of tilebench-worker: one job read on stdin, the worker set up
 * for it, its variants taken through the phases (worker.c says which) in its loop, every
 * result sent. */
#ifndef TB_WORKER_JOB_H
#define TB_WORKER_JOB_H

/* Returns the worker's exit status: 0; 2 when there is no job, it is unusable, or the set-up
 * failed (a {"type":"fatal","error"} record says why). A lost context ends the process with
 * status 3 (tbw_lost_exit). early_device (measure --device D; NULL: none): open D and report
 * its environment before reading the job, which must then be for D. */
int tbw_cmd_measure(const char *early_device);

#endif
