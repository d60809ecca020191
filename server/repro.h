/* repro.h - "reproduced by others": which figures of a GPU model's leaderboard another submitter
 * has measured too, and agreed with. Pure C over figures the caller gathers (rank.c reads them
 * from the store); nothing here knows HTTP, SQL or HTML. Unit-tested by tests/test_repro.c.
 *
 * The rule (docs/server.md, "Reproduced by others"): figure B reproduces figure A when
 *   - they name the same library file (the same SHA-256; "unknown" names none), the same
 *     variant inside it, and the same shape (its canonical token, which names the op: an
 *     attention shape is never the same as a GEMM's; m, n, k, batch, layouts, dtypes);
 *   - they come from different submitters (different tokens; a token's name is unique);
 *   - each median lies inside the other's 95 % interval widened by TBS_REPRO_DRIFT on both
 *     sides: A.median in [B.lo * (1 - d), B.hi * (1 + d)] and the same with A and B swapped.
 * A figure is "reproduced by N" when N other submitters each posted at least one figure that
 * reproduces it (several submissions of one submitter count once: they are one witness). */
#ifndef TBS_REPRO_H
#define TBS_REPRO_H
#include <stddef.h>
#include <stdint.h>

/* The drift allowance. One H100 moved the same binary's median 7-9 % between two rounds a
 * minute apart (docs/method.md, "Gating"); two cards of one model, on two hosts, differ at
 * least as much. An allowance below that drift would call honest re-measurements
 * disagreements; 10 % covers the worst drift measured on one card and still refuses a figure
 * that is off by more than a tenth of itself. */
#define TBS_REPRO_DRIFT 0.10

typedef struct tbs_figure {
    const char *submitter;   /* who posted it: a token's name */
    const char *sha256;      /* the library file's SHA-256 (hex), or "unknown" */
    const char *variant;     /* the variant's name inside that library */
    int64_t m, n, k, batch;
    const char *layouts, *dtypes;
    double median_ms, lo_ms, hi_ms;   /* the median and its 95 % interval */
    const char *token;       /* the shape's canonical text (NULL reads as ""): attention's sizes
                                are not in m, n, k */
} tbs_figure;

/* 1 when a and b are the same library, variant and shape (and the library is known). */
int tbs_repro_same(const tbs_figure *a, const tbs_figure *b);
/* 1 when b reproduces a under drift allowance `drift` (a fraction: 0.10 is 10 %): the same
 * (tbs_repro_same), other submitters, each median inside the other's widened interval. A
 * figure with a time that is not finite and positive agrees with nothing. Symmetric. */
int tbs_repro_agree(const tbs_figure *a, const tbs_figure *b, double drift);
/* counts[i] = how many submitters other than f[i]'s posted a figure that reproduces f[i]
 * (tbs_repro_agree), for every i < n. O(n log n) plus the square of the largest group of one
 * library, variant and shape. 0, or -1 with msg (out of memory; counts then unchanged). */
int tbs_repro_count(const tbs_figure *f, size_t n, double drift, size_t *counts, char *msg, size_t len);
#endif
