/* side.h - one side of a comparison: the (variant, shape) results of a stored run, of one
 * namespace of a run ("base", "head" in a gate), or of a baseline file, with their samples.
 * Owns the baseline file format (a compact versioned JSON, docs/schema.md "Baseline files")
 * and the environment fingerprint a baseline must match. Reads the store; never prints. */
#ifndef TB_SIDE_H
#define TB_SIDE_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "common/record.h"
#include "store/store.h"

#define TB_BASELINE_FORMAT "tilebench-baseline"
#define TB_BASELINE_VERSION 1
#define TB_BASELINE_MAX_SAMPLES 256   /* samples kept per entry (quantiles beyond) */

typedef struct tb_side_entry {
    char    variant[TB_NAME_LEN];   /* the library's own name (namespace removed) */
    char    shape[96];              /* "4096x4096x4096 tn" ("MxNxKxB tn" when batched); an
                                       attention problem: "1x32x4096x4096x128:causal bhsd" */
    int64_t m, n, k, batch;
    char    layouts[8];
    tb_status status;
    tb_disposition disposition;
    char    rule[64];
    char    reason[256];
    char    describe[256];          /* what the variant's setup chose, as it describe()d it */
    double  median_ms, clock_mhz;
    size_t  n_total;                /* samples the measurement took */
    double *ms;                     /* the samples kept (n_ms of them), malloc'd */
    size_t  n_ms;
} tb_side_entry;

typedef struct tb_side {
    char    what[TB_PATH_LEN + 64]; /* "run 3 of results/x.db", "baseline base.json" */
    int     have_env;
    tb_environment env;
    char    git_sha[48];
    tb_side_entry *e;
    size_t  n;
} tb_side;

/* The results of run_id in st whose namespace is ns (NULL: every variant, names as stored;
 * "": only variants without a namespace). Samples read for every timed, valid entry. */
int tb_side_from_run(tb_store *st, int64_t run_id, const char *ns, const char *db_label,
                     tb_side *out, char *msg, size_t len);
/* A baseline file written by tb_side_save_baseline. TB_EUSAGE naming the file and what is
 * wrong (not JSON, another format, a newer version, a bad entry). */
int tb_side_from_baseline(const char *path, tb_side *out, char *msg, size_t len);
/* Write s as a baseline (JSON text, one document) to f. TB_OK or TB_EIO. */
int tb_side_write_baseline(const tb_side *s, FILE *f, char *msg, size_t len);
void tb_side_free(tb_side *s);
/* The entry of (variant, shape), or NULL. */
const tb_side_entry *tb_side_find(const tb_side *s, const char *variant, const char *shape);
/* 0 when a and b are the same GPU model, driver, CUDA runtime, cuBLAS and power limit; else
 * 1 with why = the first difference ("GPU 'NVIDIA H100 80GB HBM3' vs 'NVIDIA A100...'"). */
int tb_side_env_differs(const tb_environment *a, const tb_environment *b, char *why, size_t len);
/* The shape key of a problem. */
void tb_side_shape_key(const tb_problem_info *p, char *buf, size_t len);
#endif
