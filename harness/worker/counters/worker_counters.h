/* worker_counters.h - the worker mode `tilebench-worker counters`: hardware counters and
 * kernel resources of each variant on one problem, in a process of their own (timing
 * workers never enable CUPTI). See worker_counters.c for the job and the records. */
#ifndef TB_WORKER_COUNTERS_H
#define TB_WORKER_COUNTERS_H

/* Read one job line on stdin, write records to out_fd, end with {"type":"done"}.
 * Returns the worker's exit status: 0 when the job ran (counters being unavailable is not a
 * failure: the records say so), 2 when the job was unusable or the GPU could not be set up
 * (a {"type":"fatal"} record says why). Ends the process itself (status 3, after a
 * {"type":"lost"} record) when a variant leaves the CUDA context unusable. */
int tb_worker_counters(int out_fd);

#endif
