/* out.h - where the records of tilebench-worker go: fd 3 when it is open (the parent's
 * result pipe; main decides, worker.c), else stdout, so a variant that prints cannot forge
 * or corrupt a record; and sending one record there (the process exits when the parent is
 * gone: tbw_send, worker_common.h). Every mode and every step sends through it. */
#ifndef TB_WORKER_OUT_H
#define TB_WORKER_OUT_H

#include <cjson/cJSON.h>
#include "common/phases.h"

/* The records' file descriptor: 1, or 3 once main has found fd 3 open. */
extern int tbw_out_fd;

/* Send o as one record on tbw_out_fd and free it. */
void tbw_out_obj(cJSON *o);
/* Send {"type": type} or {"type": type, key: val} on tbw_out_fd. */
void tbw_out_simple(const char *type, const char *key, const char *val);

/* The last record of a job: {"type":"done","phases":{...}} with the worker's own phases
 * (validation, warm-up, timing, checks, energy; the others 0). */
void tbw_out_done(const tb_phases *ph);

/* Flush every stdio stream of the process (a variant's buffered output too), then write
 * TB_LOG_MARK on its own line to stderr: call before announcing an item. */
void tbw_log_mark(void);
#endif
