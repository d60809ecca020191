/* progress.h - the progress reporter of long commands (sweep): the callbacks of
 * tb_sweep_report (driver/sweep.h), drawn on stderr. The bar is drawn only when tty is set
 * (stderr is a terminal and progress was not turned off). */
#ifndef TB_PROGRESS_H
#define TB_PROGRESS_H
#include <stddef.h>
#include "driver/sweep.h"

typedef struct tb_progress {
    int tty, quiet;
    double t0;           /* tb_progress_now_s() at the start */
    int bar_shown;
} tb_progress;

/* May a bar be drawn on stderr? Only on a terminal, and not when TERM is "dumb" or NO_COLOR
 * is set (no cursor control then: plain lines). */
int tb_progress_can_draw(void);
/* Seconds on the monotonic clock. */
double tb_progress_now_s(void);
/* Erase the bar, if shown, so that a line can be printed. */
void tb_progress_clear(tb_progress *r);
/* The tb_sweep_report callbacks; ctx is a tb_progress. */
void tb_progress_warning(void *ctx, const char *line);
void tb_progress_status(void *ctx, const tb_variant_info *v, const tb_shape *s, size_t done,
                        size_t total);
void tb_progress_result(void *ctx, const tb_variant_info *v, const tb_shape *s,
                        const tb_measurement *m, size_t done, size_t total);
#endif
