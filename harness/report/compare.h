/* compare.h - two sides set against each other, (variant, shape) by (variant, shape): the
 * verdict of each (report/verdict.h) and the count that decides a gate. What gate, compare
 * and baseline checks print comes from here (compare_out.h). Never prints. */
#ifndef TB_COMPARE_H
#define TB_COMPARE_H
#include <stddef.h>
#include "report/side.h"
#include "report/verdict.h"

typedef struct tb_compare_opts {
    double threshold;      /* fraction: 0.02 (the default) = 2 % */
    double conf;           /* interval's confidence (default 0.95) */
    int    iters;          /* bootstrap resamples (default 2000) */
    char   control[TB_NAME_LEN];   /* a variant measured on both sides whose ratio cancels the
                                      GPU's drift between runs; "" none (same-run A/B) */
    int    paired;         /* 1: base and head were interleaved in one run, sample i of each
                              in round i: the verdict pairs them (verdict.h) */
    int    paired_control; /* 1: each side's control was interleaved with it in its run: each
                              side's ratio to its control is paired by round (the default) */
} tb_compare_opts;

void tb_compare_opts_default(tb_compare_opts *o);

/* Two sides whose median SM clocks differ by more than this fraction are flagged: on the H100
 * a run's figures follow its clock (docs/perf.md, the harness-cost tables: median x clock
 * spreads 0.1-0.3 % where the raw medians spread 1-2 %), so such a difference is the card's. */
#define TB_CLOCK_MOVED 0.01

typedef struct tb_compare_row {
    char    variant[TB_NAME_LEN];
    char    shape[96];
    tb_change change;
    tb_side_state base_state, head_state;
    double  ratio, lo, hi;          /* head / base (to the control when there is one); NaN
                                       unless both sides are valid */
    double  base_ms, head_ms;       /* medians, NaN when not timed */
    size_t  base_n, head_n;         /* samples the measurements took */
    double  drift;                  /* the control's head/base ratio on this shape, NaN none */
    double  base_clock, head_clock; /* each side's median SM clock, MHz; NaN when not recorded */
    char    note[320];              /* why a side is not valid, or what was compared */
} tb_compare_row;

typedef struct tb_comparison {
    tb_compare_opts o;
    char    base_what[TB_PATH_LEN + 64], head_what[TB_PATH_LEN + 64];
    tb_compare_row *r;
    size_t  n;
    size_t  count[TB_CHANGE_CONTROL + 1];   /* rows per class */
    size_t  failures;                        /* rows whose class fails a gate */
    size_t  clock_moved;                     /* rows whose two sides' SM clocks differ by more
                                                than TB_CLOCK_MOVED: their difference may be
                                                the card's pace, not the kernel's */
    double  clock_worst;                     /* the largest of those differences (head/base - 1) */
} tb_comparison;

/* Compare head against base. Rows follow base's order, then head's new entries. TB_OK, or
 * TB_EUSAGE / TB_ENOMEM with msg. */
int tb_compare(const tb_side *base, const tb_side *head, const tb_compare_opts *o,
               tb_comparison *out, char *msg, size_t len);
void tb_comparison_free(tb_comparison *c);
#endif
