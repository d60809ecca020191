/* verdict.h - did a variant get slower? The statistics of one (variant, shape) compared
 * between a base and a head: pure C, no store, unit-tested (tests/test_verdict.c).
 *
 * The statistic, in words: ratio = median(head samples) / median(base samples), and its
 * interval is the [(1-conf)/2, (1+conf)/2] percentiles of the same ratio over `iters`
 * independent resamples with replacement of each side (a percentile bootstrap, as show's ties;
 * report/rank.h). With a control measured on both sides (a baseline from another run), the
 * ratio is that of the two sides' ratios to their control on the same shape:
 * (median(head)/median(head control)) / (median(base)/median(base control)), each of the four
 * sample sets resampled independently; it cancels what moved the whole GPU between the runs
 * (clock, power, temperature: docs/method.md, "Gating").
 *
 * The verdict: slower when the whole interval lies beyond 1 + threshold (lo > 1 + t), faster
 * when it lies below 1 - threshold (hi < 1 - t), unchanged otherwise. A gate fails on slower
 * and on newly invalid; nothing present on one side only ever fails it. */
#ifndef TB_VERDICT_H
#define TB_VERDICT_H
#include <stddef.h>
#include <stdint.h>
#include "common/record.h"

/* What one side says of a (variant, shape). */
typedef enum tb_side_state {
    TB_SIDE_ABSENT = 0,      /* not measured there (variant or shape not on that side) */
    TB_SIDE_VALID,           /* ran, passed validation, timed */
    TB_SIDE_UNSUPPORTED,     /* the variant declined the shape */
    TB_SIDE_INVALID          /* incorrect, crashed, hung, error, or never verified */
} tb_side_state;

typedef enum tb_change {
    TB_CHANGE_UNCHANGED = 0,
    TB_CHANGE_FASTER,
    TB_CHANGE_SLOWER,             /* fails a gate */
    TB_CHANGE_NEW,                /* head only */
    TB_CHANGE_REMOVED,            /* base only */
    TB_CHANGE_NEWLY_INVALID,      /* valid in base, not in head: fails a gate */
    TB_CHANGE_NEWLY_UNSUPPORTED,  /* valid in base, declined in head: reported, not gated */
    TB_CHANGE_NEWLY_VALID,        /* invalid or unsupported in base, valid in head */
    TB_CHANGE_NOT_TIMED,          /* neither side has a timed, valid figure */
    TB_CHANGE_CONTROL             /* the control itself: its ratio is the drift it cancels */
} tb_change;

/* The side state of a stored status and disposition. */
tb_side_state tb_verdict_state(tb_status s, tb_disposition d);
const char *tb_side_state_name(tb_side_state s);   /* "absent", "valid", ... */
/* "unchanged", "faster", "slower", "new", "removed", "newly invalid", "newly unsupported",
 * "newly valid", "not timed", "control". */
const char *tb_change_name(tb_change c);
/* 1 for the changes that fail a gate (slower, newly invalid). */
int tb_change_fails(tb_change c);

/* The class of a (variant, shape) from its two sides; lo and hi (the ratio's interval) are
 * read only when both are valid. threshold: a fraction (0.02 for 2 %). */
tb_change tb_verdict_classify(tb_side_state base, tb_side_state head, double lo, double hi,
                              double threshold);

/* The ratio and its bootstrap interval. base[0..nb) and head[0..nh) are times (finite, > 0;
 * nb, nh >= 1); bctrl/hctrl (both NULL, or both with >= 1 sample) the control's times on
 * the same shape on each side. conf in (0, 1), iters >= 10. Deterministic given seed.
 * Cost: O(iters x (nb + nh + nbc + nhc)) time, O(max n) memory. TB_OK; TB_EUSAGE (bad
 * input) or TB_ENOMEM with msg. */
int tb_verdict_ratio(const double *base, size_t nb, const double *head, size_t nh,
                     const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                     double conf, int iters, uint64_t seed, double *ratio, double *lo,
                     double *hi, char *msg, size_t len);

/* The same question asked of samples taken in rounds: sample i of every set was taken in
 * round i of one interleaved run (A B A B ...), so a change of the GPU's pace during the run
 * touches sample i of each alike. Same-run (bctrl, hctrl NULL): ratio = the median over the
 * rounds both sides sampled, i < min(nb, nh), of head[i] / base[i]; its interval from
 * resampling those rounds. With a control (each side one run, its control interleaved in it):
 * ratio = median_i(head[i] / hctrl[i]) / median_j(base[j] / bctrl[j]), each side's rounds
 * resampled independently (the sides are two runs). Pairing cancels what the GPU did between
 * two rounds; an unpaired statistic over windows of different length does not (a variant
 * that stopped early sampled a different stretch of the card's power state: docs/method.md,
 * "Gating"). Arguments, result and errors as tb_verdict_ratio. */
int tb_verdict_ratio_paired(const double *base, size_t nb, const double *head, size_t nh,
                            const double *bctrl, size_t nbc, const double *hctrl, size_t nhc,
                            double conf, int iters, uint64_t seed, double *ratio, double *lo,
                            double *hi, char *msg, size_t len);

/* A seed for the bootstrap of one (variant, shape): FNV-1a of the two strings, so a row's
 * interval never depends on the other rows. */
uint64_t tb_verdict_seed(const char *variant, const char *shape);
#endif
