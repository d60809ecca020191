/* spawn.h - starting, talking to and ending a worker process. Owns fork/exec, the three
 * pipes (job in on the worker's stdin, records out on its fd 3, its stdout+stderr kept as a
 * log tail) and waiting with a deadline. The parent never touches CUDA; this is how it gets
 * GPU work done. */
#ifndef TB_SPAWN_H
#define TB_SPAWN_H

#include <stddef.h>
#include <sys/types.h>
#include "common/wire.h"

typedef struct tb_proc {
    pid_t pid;
    int in_fd;              /* write: the worker's stdin */
    int rec_fd;             /* read: the worker's fd 3 */
    int log_fd;             /* read: the worker's stdout and stderr */
    tb_linebuf rec;
    char log_tail[2048];    /* the last bytes the worker printed */
    size_t log_len;
    int exited;
    int wstatus;
} tb_proc;

/* Start exe with argv (argv[0] included, NULL-terminated). TB_OK or TB_EWORKER. */
int tb_proc_start(tb_proc *p, const char *exe, char *const argv[], char *msg, size_t len);

/* Wait until a whole record line arrives, the worker closes its record pipe, or deadline
 * (CLOCK_MONOTONIC seconds; <= 0: no deadline) passes; the log pipe is drained meanwhile.
 * Returns 1 with *line (malloc'd), 0 at end of stream, -1 on timeout, -2 if interrupted by
 * a signal whose flag *stop is set. */
int tb_proc_next(tb_proc *p, double deadline, volatile int *stop, char **line);

/* Close the job pipe (the worker sees EOF). */
void tb_proc_close_input(tb_proc *p);

/* SIGKILL the worker's process group and reap it. */
void tb_proc_kill(tb_proc *p);

/* Reap (waits up to timeout_s, then kills). Fills p->wstatus; returns TB_OK. */
int tb_proc_wait(tb_proc *p, double timeout_s);

/* "exited with status 3", "killed by signal 11 (Segmentation fault)". */
void tb_proc_describe_exit(const tb_proc *p, char *buf, size_t len);

/* The last non-empty line of the worker's log, or "". */
void tb_proc_last_log_line(const tb_proc *p, char *buf, size_t len);

void tb_proc_free(tb_proc *p);

double tb_now(void);   /* CLOCK_MONOTONIC seconds */
#endif
