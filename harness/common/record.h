/* record.h - the plain records that flow worker -> sweep -> store -> show/export.
 *
 * Owns nothing but the layouts. The worker writes these as JSON lines (wire.c converts);
 * the parent fills them from the pipe and hands them to the store, which is their only
 * writer to disk. Strings are fixed-size so records copy by value; a field that does not
 * apply is empty ("") or NaN (doubles) or -1 (integers).
 */
#ifndef TB_RECORD_H
#define TB_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define TB_NAME_LEN 128
#define TB_TEXT_LEN 512
#define TB_PATH_LEN 1024

/* What a run was asked to do; stored in runs so that --resume can finish it. */
typedef struct tb_run_info {
    int64_t id;                 /* filled by the store */
    char    started_at[32];     /* ISO 8601 UTC */
    char    ended_at[32];
    char    command_line[2048];
    char    git_sha[48];        /* of the tilebench build, "" if unknown */
    char    version[32];
    char    status[16];         /* running | complete | interrupted | failed */
    char    options_json[8192]; /* the plan's options, enough to resume */
    char    phases_json[1024];  /* where its wall time went (common/phases.h); "" unknown */
} tb_run_info;

/* The machine a run measured on, reported once by the first worker. */
typedef struct tb_environment {
    char    gpu_name[TB_NAME_LEN];
    char    gpu_uuid[64];
    char    pci_bus_id[32];
    int     cc_major, cc_minor;
    int     sm_count;
    int64_t l2_bytes;
    int64_t mem_bytes;
    int     sm_clock_max_mhz;   /* NVML max SM clock, -1 unknown */
    int     sm_clock_mhz;       /* NVML current SM clock at start, -1 unknown */
    int     mem_clock_mhz;
    int     power_limit_mw;
    char    driver_version[32];
    int     cuda_driver_version;  /* e.g. 13000 */
    int     cuda_runtime_version;
    int     cublas_version;       /* cublasLtGetVersion() */
    int     cupti_version;        /* -1 unknown */
    char    hostname[128];
    char    os[128];
    char    extra_json[2048];     /* anything else, as a JSON object */
} tb_environment;

/* The fields of tb_environment but extra_json, in order, for the writers that list them all
 * (the wire protocol, export), so a field is named once: kind 's' a string of size bytes, 'i'
 * an int, 'l' an int64_t; for the numbers -1 is "unknown". extra_json is left to each writer
 * (the wire passes it as text, export as the object it holds). */
typedef struct tb_env_field {
    const char *key;
    char        kind;
    size_t      off, size;
} tb_env_field;
extern const tb_env_field tb_env_fields[];
extern const size_t tb_env_nfields;
const char *tb_env_str(const tb_environment *e, const tb_env_field *f);
char *tb_env_str_mut(tb_environment *e, const tb_env_field *f);
int64_t tb_env_num(const tb_environment *e, const tb_env_field *f);
void tb_env_set_num(tb_environment *e, const tb_env_field *f, int64_t v);

/* One variant as the loader saw it in a library file. */
typedef struct tb_variant_info {
    int64_t id;                 /* filled by the store */
    char    name[TB_NAME_LEN];
    char    family[64];
    char    params_json[1024];  /* {"tile_m":128,"schedule":"pingpong",...} in declared order */
    char    sass[64];
    char    file[TB_PATH_LEN];
    char    sha256[65];         /* hex of the library file */
    int     index;              /* index passed to the entry symbol */
    char    ns[16];             /* the library set it came from ("base", "head" in a gate), or
                                   "": name is then "ns:" + the library's own name */
    uint32_t ops;               /* bit 1 << op for each tb_op it computes (the worker's list;
                                   GEMM alone when the list names none); not stored */
} tb_variant_info;

/* One problem (the sweep's "shape") of one operation, as stored in the table problems. Which
 * fields apply depends on op (common/op.h, common/problem.h); a field of the other operation
 * is 0 (numbers) or "" (text), never left over, so two problems are the same exactly when
 * every field but id and label is:
 *   both ops    id, op, batch, dtypes, layouts, label (dtypes and layouts read per op)
 *   "gemm"      m, n, k, lda, ldb, ldc, ldd, alpha, beta, scale_a, scale_b
 *   "attention_fwd" (variant.h, growth 2)
 *               heads, heads_kv, seq_q, seq_k, head_dim, causal, softmax_scale
 * An attention problem's strides are not stored: its tensors are packed in its layout
 * (common/op_attention.h, tb_attn_problem). */
typedef struct tb_problem_info {
    int64_t id;                 /* filled by the store */
    char    op[16];             /* "gemm" or "attention_fwd": tb_op_desc.name */
    int64_t m, n, k, batch;     /* batch: both ops (independent problems, >= 1) */
    char    dtypes[32];         /* gemm: "bf16,bf16,bf16,bf16,f32" = A,B,C,D,accumulate; FP8:
                                   "e4m3,e4m3,bf16,bf16,f32". attention: the same text meaning
                                   Q,K,V,O,accumulate (LSE is f32) */
    char    layouts[8];         /* gemm: A then B in BLAS letters: "tn" (C and D row-major);
                                   attention: Q, K, V and O's order, "bhsd" or "bshd" */
    int64_t lda, ldb, ldc, ldd;
    double  alpha, beta;
    char    label[64];          /* shape set entry label, e.g. "llama3-8b.qkv", or "" */
    double  scale_a, scale_b;   /* per-tensor scales of 8-bit A and B (variant.h, growth 1);
                                   0 for none (16-bit operands, which the variant sees as
                                   scales of 1). Part of the problem's key */
    /* attention_fwd (schema 9; 0 in a GEMM problem) */
    int64_t heads, heads_kv;    /* query heads; key/value heads, dividing heads */
    int64_t seq_q, seq_k;       /* query and key/value lengths */
    int64_t head_dim;
    int     causal;             /* 0 or 1: the mask aligned to the bottom right */
    double  softmax_scale;      /* > 0; the sweep's is 1/sqrt(head_dim) */
} tb_problem_info;

/* Did it run (status) is kept apart from is it right (disposition), as cutlass_profiler. */
typedef enum tb_status {
    TB_STATUS_OK = 0, TB_STATUS_CRASHED, TB_STATUS_TIMEOUT, TB_STATUS_UNSUPPORTED,
    TB_STATUS_ERROR, TB_STATUS_SKIPPED,
    TB_STATUS_PLANNED   /* recorded by sweep --plan-only: to be measured (sweep --resume) */
} tb_status;

typedef enum tb_disposition {
    TB_DISP_NOT_VERIFIED = 0, TB_DISP_PASSED, TB_DISP_INCORRECT
} tb_disposition;

const char *tb_status_name(tb_status s);        /* "ok", "crashed", ... */
const char *tb_disposition_name(tb_disposition d);  /* "not_verified", "passed", "incorrect" */
int tb_status_parse(const char *s, tb_status *out);         /* 0 on success */
int tb_disposition_parse(const char *s, tb_disposition *out);

/* One (variant, problem) result. Samples are owned by the caller that filled the record. */
typedef struct tb_measurement {
    int64_t id;                 /* filled by the store */
    int64_t run_id, variant_id, problem_id;
    tb_status status;
    tb_disposition disposition;
    char    reason[TB_TEXT_LEN];   /* why not ok / why incorrect, "" when fine */
    char    rule[64];              /* the validation rule that failed, "" when none */
    /* validation figures (NaN when not validated) */
    int     trials;
    double  max_abs_err, rel_fro_err;
    int64_t n_bad, n_nonfinite;
    double  atol, rtol;
    /* timing figures (NaN when not timed) */
    char    method[32];            /* "cold_events" ... */
    char    stop_reason[64];       /* "rse<0.5%", "time budget", "max samples" */
    int     n_samples, warmup;
    double  median_ms, mean_ms, stdev_ms, min_ms, max_ms, rse;
    double  tflops;                /* at the median */
    double  clock_mhz;             /* SM clock measured during the samples */
    double  first_launch_ms;
    int64_t workspace_bytes;
    char    describe[TB_TEXT_LEN]; /* what the variant's setup chose (cuBLASLt algo ...) */
    char    extra_json[2048];
    double *samples_ms;            /* n_samples entries, or NULL */
    double *samples_clock_mhz;     /* n_samples entries, or NULL */
} tb_measurement;

/* The roofline ceilings of one GPU as measured there by `tilebench doctor --calibrate`
 * (worker_calibrate.c says how): what the DRAM and the tensor pipes (BF16, and FP8 where the
 * GPU has it) reached, not datasheet figures. Stored in the table calibration (schema version
 * 3; the FP8 columns since 8). */
typedef struct tb_calibration {
    int64_t id;                 /* filled by the store */
    char    created_at[32];     /* ISO 8601 UTC; the store fills it when "" */
    char    gpu_uuid[64];       /* "GPU-..." as in the environment record; never "" */
    char    gpu_name[TB_NAME_LEN];
    double  dram_gbps;          /* copy_bytes / median copy time, GB/s (10^9 bytes/s) */
    int64_t copy_bytes;         /* bytes moved per timed copy: read + write */
    double  gemm_tflops;        /* 2mnk / median GEMM time, TFLOP/s */
    char    gemm_shape[32];     /* "8192x8192x8192" */
    double  sm_clock_mhz;       /* SM clock during the GEMM (median of probes), NaN unknown */
    char    method[1024];       /* one line describing the measurements */
    /* the FP8 tensor ceiling (schema 8): a cuBLASLt E4M3 GEMM (E4M3 A and B, BF16 D, FP32
     * accumulation, no fast accumulation) of fp8_shape, measured as the BF16 one; NaN (NULL
     * on disk) for a calibration made before it, or on a GPU whose cuBLASLt has no FP8 GEMM */
    double  fp8_tflops;
    char    fp8_shape[32];
    double  fp8_sm_clock_mhz;
} tb_calibration;

#endif
