/* rank.h - one leaderboard: the submissions of one GPU model ranked on one shape set by the
 * geometric mean of their best validated TFLOP/s per shape (the server's own rate, from the
 * shape and the median), each shape's best figure with how many other submitters reproduced
 * it (repro.h), and the board's history. The JSON ranking and the HTML pages (pages.c) are
 * two views of the same tbs_board. */
#ifndef TBS_RANK_H
#define TBS_RANK_H
#include <stddef.h>
#include "format/submission_parse.h"
#include "sets.h"
#include "store.h"

/* Every stored submission of one GPU model, parsed, in the order they came (by id). */
typedef struct tbs_sub {
    int64_t id;
    char who[64], at[24];   /* the submitter (a token's name) and when the server stored it */
    tb_submission s;
} tbs_sub;
typedef struct tbs_subs { tbs_sub *v; size_t n; } tbs_subs;

/* Read the submissions of gpu. 0, or -1 with msg (the store failed, out of memory), or the
 * store's TBS_STORE_UNAVAILABLE (the database cannot be reached now: store.h); every function
 * of this file that reads the store passes that code on the same way. *out is empty on failure. A document that no longer parses is left out. Free with tbs_subs_free. */
int tbs_subs_load(tbs_store *st, const char *gpu, tbs_subs *out, char *msg, size_t len);
void tbs_subs_free(tbs_subs *subs);
/* "reproduced by" of every result of every submission of subs (repro.h's rule and drift):
 * *rep is malloc'd with one slot per result, submission after submission in subs' order
 * (result j of subs->v[i] at the sum of the earlier submissions' result counts plus j); a
 * result without timing gets SIZE_MAX. 0, or -1 with msg. */
int tbs_subs_repro(const tbs_subs *subs, size_t **rep, char *msg, size_t len);

/* rate of a timed result in TFLOP/s, from its shape and median: its op's FLOP count
 * (tb_sub_result_flops: 2*m*n*k*batch for GEMM, 4*B*H*D*pairs for attention) / median */
double tbs_tflops(const tb_sub_result *r);
/* 1 when r is a result on shape sh: the same op and sizes (tbs_shape_same). */
int tbs_on(const tb_sub_result *r, const tbs_shape *sh);

/* One submission's best validated figure on one shape of the set. */
typedef struct tbs_cell {
    int have;                 /* 0: no timed result on this shape */
    double tflops;
    const tb_sub_result *r;   /* the result (points into the board's tbs_subs) */
    size_t reproduced_by;
} tbs_cell;

typedef struct tbs_entry {
    const tbs_sub *sub;       /* points into the board's tbs_subs */
    double geomean;           /* TFLOP/s over the shapes counted */
    double vs_cublaslt;       /* geometric mean over the counted shapes where the submission timed
                                 `cublaslt` too of best / cublaslt; NAN where it has none */
    size_t counted;           /* shapes of the set with a cell */
    const char *best;         /* the variant best on the most shapes */
    tbs_cell *cell;           /* one per shape of the set, in its order */
} tbs_entry;

/* The board's best geomean after each ranked submission, in the order they came. */
typedef struct tbs_point { const tbs_entry *e; double best; } tbs_point;

typedef struct tbs_board {
    const tbs_set *set;
    tbs_subs subs;
    tbs_entry *e; size_t n;        /* ranked, best first (ties: the earlier submission) */
    tbs_point *hist; size_t nhist;
} tbs_board;

/* Build the board of (set, gpu). 0, or -1 with msg; free with tbs_board_free either way. A
 * submission with no validated result on the set is not ranked. */
int tbs_board_load(tbs_store *st, const tbs_set *set, const char *gpu, tbs_board *out, char *msg, size_t len);
void tbs_board_free(tbs_board *b);
/* The entry holding the board's best figure on shape k of the set (NULL: none), and its cell. */
const tbs_entry *tbs_board_best(const tbs_board *b, size_t k);

/* A JSON array, best first, of {"rank", "op" (the set's: "gemm", "attention_fwd"), "submission", "submitter", "submitted_at",
 * "geomean_tflops", "shapes_counted", "shapes_in_set", "best_variant", "vs_cublaslt" (null
 * where none), "shapes": [{"m", "n", "k", "batch", "tflops", "variant", "reproduced_by"}] (the
 * submission's best per counted shape; on an attention set "shape" (the token), "batch",
 * "heads", "heads_kv", "seq_q", "seq_k", "head_dim", "causal" in place of m, n, k)}. 0, or -1 with msg. *json malloc'd. */
int tbs_rank_json(tbs_store *st, const tbs_set *set, const char *gpu, char **json, char *msg, size_t len);
/* counts[i] = the submissions of gpu that rank on sets->v[i] (have a validated result on one
 * of its shapes), for every set. 0, or -1 with msg. */
int tbs_rank_counts(tbs_store *st, const tbs_sets *sets, const char *gpu, size_t *counts, char *msg, size_t len);
#endif
