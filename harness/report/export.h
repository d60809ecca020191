/* export.h - a run's results as JSON or CSV, read from the store (see export.c).
 *
 * The export reads only; it never changes the database. It writes to the FILE* it is given
 * and does not close it; on failure part of the output may have been written, and the
 * caller decides what to do with it (remove a half-written file, say).
 */
#ifndef TB_EXPORT_H
#define TB_EXPORT_H

#include "store/store.h"
#include <stdint.h>
#include <stdio.h>

/* Writes run run_id of s to out in format "json" or "csv".
 *  json: one object {"tilebench", "run", "environment", "results": [...]}, every result with
 *        its samples; values that do not apply (NaN, -1, "") are null. A result's "problem"
 *        holds its op's fields: a GEMM's {id, op, m, n, k, batch, dtypes, layouts, lda..ldd,
 *        alpha, beta, [scale_a, scale_b,] label}, an attention problem's {id, op, shape,
 *        batch, heads, heads_kv, seq_q, seq_k, head_dim, causal (true/false),
 *        softmax_scale, dtypes, layout, label}.
 *  csv:  a header of fixed columns; when the run has an attention problem, its columns (op,
 *        shape, heads, heads_kv, seq_q, seq_k, head_dim, causal, softmax_scale; m, n and k
 *        empty in its rows, the attention cells empty in a GEMM's); then one column per
 *        variant parameter (the union of the keys of all variants, first seen first); RFC
 *        4180 quoting, "\n" line ends; a row that was not timed leaves its time and rate
 *        columns empty, never 0.
 * Returns TB_OK; TB_EUSAGE for another format ("unknown export format 'x' (json, csv)"),
 * before anything is written; TB_EDB when the run is missing or the store fails; TB_EIO
 * when out cannot be written; TB_ENOMEM. */
int tb_export(tb_store *s, int64_t run_id, const char *format, FILE *out, char *msg,
              size_t len);

#endif
