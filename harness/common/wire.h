/* wire.h - the worker <-> parent protocol: one JSON object per line (cJSON).
 *
 * Owns the line framing and the conversion of records to and from JSON. Messages, parent
 * to worker (stdin): one "job" object (built by driver/worker_job.c, read by worker/job.c).
 * Worker to parent (fd 3, never stdout, which a variant may scribble on): {"type": "ready"|"env"|"begin"|"estimate"|"progress"|
 * "result"|"done"|"fatal"|"loading"|"file", ...}.
 */
#ifndef TB_WIRE_H
#define TB_WIRE_H
/* The line the worker writes into its own stdout/stderr (the parent's log pipe) before each
 * item (a library probed, a variant's step begun), after flushing every stdio stream: what a
 * variant prints after it belongs to that item, so a crash's reason quotes the crashing
 * item's output and never an earlier one's (driver/spawn.c, tb_proc_last_log_line). */
#define TB_LOG_MARK "\x1etilebench: next item\x1e"

#include <stddef.h>
#include <cjson/cJSON.h>
#include "common/record.h"
#include "tilebench/variant.h"

#define TB_WIRE_MAX_LINE (64u << 20)

/* Write obj as one line to fd (all of it, retrying short writes). TB_OK or TB_EIO. */
int tb_wire_send(int fd, const cJSON *obj);

/* Accumulates bytes from a pipe and hands out whole lines. */
typedef struct tb_linebuf { char *buf; size_t len, cap; } tb_linebuf;
/* Read what is available (one read()). Returns bytes read, 0 at end of file, -1 on error
 * (errno set; EAGAIN when non-blocking and nothing there), -2 when a line would pass
 * TB_WIRE_MAX_LINE. */
long tb_linebuf_fill(tb_linebuf *lb, int fd);
/* The next complete line without its newline, malloc'd (caller frees), or NULL. */
char *tb_linebuf_next(tb_linebuf *lb);
void tb_linebuf_free(tb_linebuf *lb);

/* Records <-> JSON. The to_json functions return a new object (caller deletes); from_json
 * fill the record and return TB_OK or TB_EWORKER with a message naming the bad field. */
cJSON *tb_wire_gemm_to_json(const tb_gemm *g);
int tb_wire_gemm_from_json(const cJSON *o, tb_gemm *g, char *msg, size_t len);
/* A whole tb_problem (wire_problem.c), with "op": its tb_op_desc name ("gemm",
 * "attention_fwd"); a problem without "op" is a GEMM (a job from before growth 2). A GEMM: the
 * fields above plus "scales": [scale_a, scale_b] (growth 1; a job without them gets 1 and 1,
 * a scale that is not finite and > 0 is refused). An attention problem: "attention", an
 * object of every tb_attention field but reserved (its strides as arrays), each checked:
 * sizes in 1..the bounds of an attention token (op_attention.h), heads_kv dividing heads,
 * known types, layout 0 or 1, causal 0 or 1 and then seq_q <= seq_k, scale finite and > 0,
 * strides in 1..2^40 such that no two rows, heads or batches of a tensor overlap in its
 * layout. Reading fills struct_size = sizeof(tb_problem) and op; anything else is TB_EWORKER
 * "malformed problem in job: FIELD ...", naming the field (attention.heads_kv, ...). */
cJSON *tb_wire_problem_to_json(const tb_problem *p);
int tb_wire_problem_from_json(const cJSON *o, tb_problem *p, char *msg, size_t len);
cJSON *tb_wire_env_to_json(const tb_environment *e);
int tb_wire_env_from_json(const cJSON *o, tb_environment *e, char *msg, size_t len);
/* samples_ms / samples_clock_mhz are included when non-NULL; from_json mallocs them. */
cJSON *tb_wire_measurement_to_json(const tb_measurement *m);
int tb_wire_measurement_from_json(const cJSON *o, tb_measurement *m, char *msg, size_t len);

/* Initialise a measurement: every double NaN, every count -1 or 0, strings empty. */
void tb_measurement_init(tb_measurement *m);
void tb_measurement_free_samples(tb_measurement *m);

/* Helpers for the common fields. */
const char *tb_json_str(const cJSON *o, const char *key, const char *dflt);
double tb_json_num(const cJSON *o, const char *key, double dflt);

#endif
