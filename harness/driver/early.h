/* early.h - the measuring worker started before the variants are probed: it opens the GPU and
 * reports its environment while the parent probes the libraries, and that report is the
 * parent's GPU check, so a sweep starts one worker and one CUDA context fewer than an
 * `env` probe followed by a `measure` worker (issue 28: a single-variant sweep spent 0.5 s
 * of its 1.7 s on the probe's CUDA start). The first worker the sweep needs on the same
 * device takes it; one never taken is stopped at exit (it also ends by itself when its stdin
 * closes, having been given no job). */
#ifndef TB_DRIVER_EARLY_H
#define TB_DRIVER_EARLY_H

#include <stddef.h>
#include "common/record.h"
#include "driver/spawn.h"

/* Start `tilebench-worker measure --device DEVICE` and wait for its environment record.
 * TB_OK with *env filled and the worker kept; TB_ENOGPU with the reason when there is no
 * usable GPU; TB_EWORKER when the worker cannot run. */
int tb_early_worker_start(const char *worker, const char *device, tb_environment *env,
                          char *msg, size_t len);

/* Hand over the kept worker when it was started for device: 1 with *p and *env_line (the
 * environment record as it arrived, malloc'd: the taker stores it as its own worker's), or
 * 0 when none is kept for that device. */
int tb_early_worker_take(const char *device, tb_proc *p, char **env_line);

/* Stop a kept worker nobody took (also run at exit). */
void tb_early_worker_drop(void);

#endif
