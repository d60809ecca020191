/* report_script.h - the plotting script (scripts/report, matplotlib) as tilebench's commands run
 * it: where it is, which python3 runs it, one run of it to completion with a caught signal passed
 * on to it. `report` draws a whole page with it (cmd_report.c); `gate` and `compare` draw their
 * before/after chart with it (--chart, verdicts.c). */
#ifndef TB_CLI_REPORT_SCRIPT_H
#define TB_CLI_REPORT_SCRIPT_H
#include <stddef.h>
#include "driver/paths.h"

/* The script's folder into dir: installed beside the binary (bin/../share/tilebench/report),
 * else the source tree's scripts/report (a build tree). 0, or 2 with the error printed. */
int tb_script_find(const tb_paths *paths, char *dir, size_t len);
/* The python3 to run it: $TILEBENCH_PYTHON, else /usr/bin/python3 when it exists, else
 * "python3" (searched on PATH). */
void tb_script_python(char *buf, size_t len);
/* Run argv (argv[0] the python) to completion. Returns the exit code the command must return:
 * 0 success; 2 the script found bad input or a missing requirement (it printed why); 1 it
 * failed while writing; 128 + N when signal N was passed on (tb_script_forward). Every
 * failure the script did not report itself is printed here, one line. */
int tb_script_run(char *const argv[]);
/* From a signal handler (async-signal-safe): remember sig and pass it on to the script running
 * now, if any; a script started later gets it at once. */
void tb_script_forward(int sig);
/* The signal remembered by tb_script_forward, 0 if none. */
int tb_script_signal(void);

#endif
