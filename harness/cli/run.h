/* run.h - the steps a measuring command shares (sweep, gate): find the GPU, load and select
 * the variants for it, begin a run in the store, measure with the progress reporter. Each
 * prints its own errors (one line) and returns 0 or the exit code (cli.h), except where it
 * says it returns a TB_E* code. */
#ifndef TB_RUN_H
#define TB_RUN_H
#include <stddef.h>
#include <stdint.h>
#include "common/record.h"
#include "driver/catalog.h"
#include "driver/paths.h"
#include "driver/shapes.h"
#include "driver/sweep_opts.h"
#include "store/store.h"

/* Ask a worker for the GPU o names; warn about (or, with o->exclusive, refuse) other
 * processes on it. what names the command in the error ("sweep", "gate"). */
int tb_cli_gpu(const tb_paths *paths, const tb_sweep_opts *o, const char *what,
               tb_environment *env);
/* --devices SPEC ("all": every GPU NVML lists; else indices and GPU-UUIDs, comma separated):
 * o->ndev and o->dev, each GPU checked (the first as tb_cli_gpu, whose environment lands in
 * env), all of one model (name, compute capability, SM count), their UUIDs in o->dev_uuid. A
 * GPU listed twice gets two slots, with a warning. 0, or the exit code with the error printed. */
int tb_cli_devices(const tb_paths *paths, const char *spec, tb_sweep_opts *o, const char *what,
                   tb_environment *env);
/* The syntax of --devices alone (no GPU asked): o->ndev and o->dev ("all": none yet). 0, or 2
 * with the error printed. */
int tb_cli_devices_parse(const char *spec, tb_sweep_opts *o);
/* Add the variants of files (expanded paths; freed here) to cat under namespace ns ("" none). */
int tb_cli_catalog_add(const tb_paths *paths, tb_catalog *cat, char **files, size_t nfiles,
                       const char *ns);
/* Refuse what cannot run on env's GPU (SASS; env NULL: no GPU, nothing refused), print every
 * refusal as a warning, keep what the globs select, then keep only the variants that compute
 * one of the run's operations (ops: bit 1 << op of each; a variant of another operation only,
 * such as attn_naive in a GEMM sweep of the default folder, is left out of the run, not
 * recorded as unsupported on every shape). On failure cat is freed. */
int tb_cli_catalog_finish(tb_catalog *cat, const tb_environment *env, char **inc, size_t ninc,
                          char **exc, size_t nexc, uint32_t ops);
/* A new run in st: its command line (argv), options (JSON text) and variants. TB_OK or a TB_E*
 * code with msg. */
int tb_cli_run_begin(tb_store *st, int argc, char **argv, const char *options_json,
                     tb_catalog *cat, int64_t *run_id, char *msg, size_t len);
/* Measure cat x shapes into run_id (skip[i] marks shapes done; may be NULL), drawing progress
 * on stderr (a bar when it is a terminal and progress is set; a line per result unless
 * quiet); SIGINT/SIGTERM stop it. Returns what tb_sweep_run returns (TB_OK, TB_EINTR, ...),
 * msg filled on failure; *seconds (may be NULL) = its wall time; phases (may be NULL) is
 * added to: the workers' start and phases, the counters pass, the store. */
int tb_cli_run_measure(tb_store *st, int64_t run_id, const tb_paths *paths, const tb_sweep_opts *o,
                       const tb_catalog *cat, const tb_shape_list *shapes, const int *skip,
                       int progress, int quiet, const char *gpu_name, double *seconds,
                       tb_phases *phases, char *msg, size_t len);
#endif
