/* submission_parse.h - reading a submission document (docs/submission.md) back, strictly: the
 * one parser that tilebench's tests and tilebench-server share (the server links this folder
 * and the op seam's table, common/op*.c, of the harness). Mirrors
 * schemas/submission-v1.schema.json and -v2 (attention rows, read by common/op_attention.c's
 * parser and checked against their own fields): every key
 * present, no other key, every type, bound and pattern; and the rules a schema cannot say
 * (timing present exactly when a result ran and passed; a median inside its own interval).
 * Pure C on cJSON; fuzzed (tests/fuzz/). */
#ifndef TB_SUBMISSION_PARSE_H
#define TB_SUBMISSION_PARSE_H
#include "common/op.h"
#include <stddef.h>
#include <stdint.h>

#define TB_SUB_MAX_BYTES (16u << 20)   /* a document larger than this is refused unread */
#define TB_SUB_MAX_RESULTS 100000
#define TB_SUB_VERSION_MAX 2           /* 1: GEMM rows only; 2: attention rows too (issue 33) */

typedef struct tb_sub_result {
    char    name[144], family[64], sha256[65];
    char   *params_json;           /* the params object as compact JSON, malloc'd */
    uint32_t op;                   /* a tb_op: TB_OP_GEMM, or TB_OP_ATTENTION_FWD (version 2) */
    int64_t m, n, k, batch;        /* GEMM; batch is the attention shape's batch too */
    tb_attn_shape attn;            /* attention: its sizes (batch as above); zero in a GEMM row */
    double  scale;                 /* attention: the softmax scale; 0 in a GEMM row */
    char    token[96];             /* the shape's canonical text, as its op writes it */
    char    layouts[8], dtypes[32], label[64];
    char    status[16], disposition[16], rule[64];
    int     timed;                 /* 0: timing was null */
    char    method[8];
    double  median_ms, lo_ms, hi_ms, clock_mhz, energy_j;   /* NaN when null */
    int64_t n_samples;
} tb_sub_result;

typedef struct tb_submission {
    int     version;
    char    tilebench_version[32], git_sha[41], started_at[21];
    char    gpu_name[128], gpu_uuid_sha256[65], compute_capability[16], driver_version[32];
    int64_t sm_count, cuda_runtime_version, cublas_version;
    double  power_limit_w, sm_clock_max_mhz;   /* NaN when null */
    char   *options_json;          /* malloc'd */
    tb_sub_result *r;
    size_t  n;
} tb_submission;

/* Parse and check text[0..len). TB_OK, or TB_EUSAGE with msg naming the first bad field by its
 * path ("results[3].timing.median_ms: want a number > 0"), or TB_ENOMEM. On failure *out is
 * empty (nothing to free). Beyond the schema it refuses what would make two readers of the
 * text disagree: bytes that are not UTF-8, NUL (raw or \u0000), a raw control character in a
 * string, anything but white space after the document, a member repeated in any object. */
int tb_submission_parse(const char *text, size_t len, tb_submission *out, char *msg, size_t msglen);
/* The same, and *rule says which kind of refusal it was: 1 when the document has the schema's
 * grammar but breaks one of the rules a schema cannot state (timing present exactly when a
 * result ran and passed; a median inside its own interval), 0 otherwise (a server answers the
 * first 422, the second 400). *rule is 0 on success. */
int tb_submission_parse_rules(const char *text, size_t len, tb_submission *out, int *rule, char *msg, size_t msglen);
void tb_submission_free(tb_submission *s);
/* The shape of a result (its op and sizes, its label) as the op seam's tb_shape. */
void tb_sub_result_shape(const tb_sub_result *r, tb_shape *out);
/* The work a result's shape counts, in FLOP, through its op's entry (op.h's shape_flops:
 * 2*m*n*k*batch for GEMM, 4*B*H*D*pairs for attention); NaN for an op this build lacks. */
double tb_sub_result_flops(const tb_sub_result *r);
/* What a leaderboard checks beyond the grammar: no timed result whose rate, recomputed from
 * its shape and median (tb_sub_result_flops / median; a client's rate is never trusted), is above
 * the GPU's dense peak of the result's operand types (its shape's dtypes: "e4m3,e4m3,..."
 * FP8, twice BF16 on sm_89 and sm_90; BF16 otherwise, and for FP8 on a GPU without FP8 tensor
 * cores) at the SM clock the result itself reports (common/peak.h; 2 % allowed for the
 * clock's own resolution), and every timed result reports that clock. The
 * peak scales with the document's own SM count and clock, so neither may exceed what any GPU
 * of its compute capability has (the full die's SMs, the highest boost clock with a margin).
 * A GPU whose peak cannot be known (a compute capability the table lacks, or an SM count of 0)
 * is refused unless allow_unknown, which takes its rates unchecked (the SM count and clock
 * bounds of a known generation hold either way). 0, or -1 with msg naming the result or field
 * ("results[4]: 1203.4 TFLOP/s ... is above the GPU's dense BF16 peak ...", "no known peak for GPU 'X' (...)"). */
int tb_submission_plausible(const tb_submission *s, int allow_unknown, char *msg, size_t msglen);
#endif
