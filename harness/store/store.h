/* store.h - the SQLite store: schema, migrations, transactions. Only the files of
 * harness/store/ include sqlite3.h (store_int.h lists them); nothing else writes the database.
 *
 * Every function returns TB_OK or a TB_E* code and fills msg (see tb.h). On failure nothing
 * was committed by that call. The store never prints.
 */
#ifndef TB_STORE_H
#define TB_STORE_H

#include "common/record.h"
#include "common/phases.h"
#include <stddef.h>

#define TB_SCHEMA_VERSION 9   /* PRAGMA user_version this build writes */

typedef struct tb_store tb_store;

/* Open (create = 1: create the file and its directory if missing) and migrate to
 * TB_SCHEMA_VERSION. Refuses, with TB_EDB, a file that is not an SQLite database, one
 * whose user_version is newer than TB_SCHEMA_VERSION, and (create = 0) one that does not
 * exist. read_only = 1 opens without writing anything (no migration: a file with an older
 * schema is refused with a message telling to run a writing command). WAL mode.
 * Refuses too a database with tables of another program, and (create = 0 or read_only) an
 * empty one. Nothing is written to a refused file. On disk, NaN doubles, -1 integers and ""
 * strings of the records are NULL and read back as such (docs/schema.md). */
int tb_store_open(const char *path, int create, int read_only, tb_store **out,
                  char *msg, size_t len);
void tb_store_close(tb_store *s);

/* Is the file whole? SQLite's integrity check and foreign keys, and tilebench's invariants
 * (every timed measurement has all its samples, every run a known status); each problem found
 * is handed to fn as one line and counted in *found. TB_OK when the checks ran (whatever they
 * found); TB_EDB with msg when they could not run (the file unreadable). */
typedef void (*tb_store_check_fn)(void *ctx, const char *line);
int tb_store_check(tb_store *s, tb_store_check_fn fn, void *ctx, size_t *found, char *msg,
                   size_t len);
/* The path the store was opened with. */
const char *tb_store_path(const tb_store *s);
/* Schema version found on disk when opened (before migrating). */
int tb_store_found_version(const tb_store *s);

int tb_store_run_begin(tb_store *s, tb_run_info *run, char *msg, size_t len);  /* sets run->id */
int tb_store_run_end(tb_store *s, int64_t run_id, const char *status, char *msg, size_t len);
int tb_store_run_get(tb_store *s, int64_t run_id, tb_run_info *out, char *msg, size_t len);
/* The newest run's id, or TB_EDB with "no runs in 'x'" when empty. */
int tb_store_run_latest(tb_store *s, int64_t *run_id, char *msg, size_t len);
int tb_store_run_set_status(tb_store *s, int64_t run_id, const char *status, char *msg, size_t len);
/* Where the run's wall time went (common/phases.h), stored as JSON with the run (replacing
 * what a resumed run had); tb_store_run_get reads it back into phases_json. */
int tb_store_run_set_phases(tb_store *s, int64_t run_id, const tb_phases *ph, char *msg, size_t len);

int tb_store_put_environment(tb_store *s, int64_t run_id, const tb_environment *env,
                             char *msg, size_t len);
int tb_store_get_environment(tb_store *s, int64_t run_id, tb_environment *out,
                             char *msg, size_t len);   /* TB_EDB if none */
/* Like tb_store_get_environment, but a run without one is not an error: TB_OK, *found = 0
 * and *out untouched (export writes "environment": null for it). */
int tb_store_find_environment(tb_store *s, int64_t run_id, tb_environment *out, int *found,
                              char *msg, size_t len);

/* Insert (or find, same run+name) a variant / problem; sets ->id. */
int tb_store_put_variant(tb_store *s, int64_t run_id, tb_variant_info *v, char *msg, size_t len);
int tb_store_put_problem(tb_store *s, tb_problem_info *p, char *msg, size_t len);

/* One measurement and its samples in one transaction (a SIGKILL loses at most this one).
 * Sets m->id. */
int tb_store_put_measurement(tb_store *s, tb_measurement *m, char *msg, size_t len);

/* Delete every measurement (and its samples) of run_id on problem_id, in one transaction:
 * --resume measures such a shape again whole. */
int tb_store_delete_problem_measurements(tb_store *s, int64_t run_id, int64_t problem_id,
                                         char *msg, size_t len);

/* A joined row for show/export. */
typedef struct tb_result_row {
    tb_measurement  m;         /* samples_ms left NULL */
    tb_variant_info v;
    tb_problem_info p;
} tb_result_row;

/* All results of a run, ordered by problem id then variant id. *rows is malloc'd; free it
 * with free(). */
int tb_store_results(tb_store *s, int64_t run_id, tb_result_row **rows, size_t *n,
                     char *msg, size_t len);

/* The samples of one measurement, malloc'd (free()); *n = 0 and NULL when none. */
int tb_store_samples(tb_store *s, int64_t measurement_id, double **ms, double **clock_mhz,
                     size_t *n, char *msg, size_t len);

/* The samples of measurement m, as tb_store_samples, checked against the count m records:
 * a damaged page can make SQLite return fewer rows without an error, and a reader must fail
 * (TB_EDB "'FILE' is damaged: measurement N has X of its Y samples (see 'tilebench check')")
 * rather than work on a quietly different measurement. */
int tb_store_measurement_samples(tb_store *s, const tb_measurement *m, double **ms,
                                 double **clock_mhz, size_t *n, char *msg, size_t len);

/* Hardware counters of one measurement (table metrics, schema version 2). */
typedef struct tb_metric {
    char   name[128];
    double value;          /* NaN when not available */
    char   unit[24];
    int    available;      /* 0: the counter could not be read; reason says why */
    char   reason[256];
} tb_metric;

/* Store n metrics of a measurement in one transaction (a name already there is replaced). */
int tb_store_put_metrics(tb_store *s, int64_t measurement_id, const tb_metric *m, size_t n,
                         char *msg, size_t len);
/* The metrics of a measurement, by name, malloc'd (free()); *n = 0 and NULL when none. */
int tb_store_metrics(tb_store *s, int64_t measurement_id, tb_metric **out, size_t *n,
                     char *msg, size_t len);

/* Variants of a run (for --resume and show), malloc'd. */
int tb_store_variants(tb_store *s, int64_t run_id, tb_variant_info **out, size_t *n,
                      char *msg, size_t len);

/* Roofline ceilings measured by doctor --calibrate (table calibration, schema version 3). */
/* Store one calibration (one statement, so one transaction). Fills c->created_at when it is
 * "" and sets c->id. TB_EINTERNAL, nothing written, when c->gpu_uuid is "". */
int tb_store_put_calibration(tb_store *s, tb_calibration *c, char *msg, size_t len);
/* The newest calibration of the GPU gpu_uuid (compared ignoring case). None is not an error:
 * TB_OK, *found = 0 and *out untouched (also for gpu_uuid NULL or ""). */
int tb_store_latest_calibration(tb_store *s, const char *gpu_uuid, tb_calibration *out,
                                int *found, char *msg, size_t len);

/* The medians (and median SM clocks, NaN when not recorded) of variant `name` from the library
 * whose SHA-256 is sha256 on problem_id, measured on a GPU named gpu_name in other complete runs
 * of this file than run_id, newest first, at most cap. *n set (0: none). TB_OK or TB_EDB. */
int tb_store_history(tb_store *s, const char *sha256, const char *name, int64_t problem_id,
                     const char *gpu_name, int64_t run_id, double *median_ms, double *clock_mhz,
                     size_t cap, size_t *n, char *msg, size_t len);

/* Merging databases (store_merge.c; tilebench merge): the runs of one file copied into
 * another, each run once, recognised by runs.uid (schema 5). What one merge of an input did. */
typedef struct tb_merge_counts {
    long long runs;           /* runs copied */
    long long runs_present;   /* runs skipped: the target has their uid already */
    long long measurements, samples, metrics;   /* rows copied with those runs */
    long long calibrations;   /* calibration rows copied (equal rows are not copied twice) */
    long long search_models;  /* search_models rows copied (likewise) */
    int is_target;            /* 1: the input is the target file itself; nothing was done */
} tb_merge_counts;

/* May the file in be merged into the database at target_path (which need not exist yet)?
 * Reads in, writes nothing anywhere. TB_OK when it is a tilebench database at this build's
 * schema version whose every run has a uid, and also (with *is_target = 1, in not opened)
 * when in is the file at target_path under any name (same device and inode). Otherwise
 * TB_EDB or TB_EUSAGE and msg names the file: no such file, a directory, not a tilebench
 * database, a newer schema (both versions named), an older one (run 'tilebench migrate
 * --db IN' first: without uids a later merge could not recognise its runs). */
int tb_store_merge_check(const char *in, const char *target_path, int *is_target, char *msg,
                         size_t len);

/* Copy into out (opened writable) every run of the file in whose uid out lacks, with its
 * environment, variants, measurements and all their samples and metrics; the problems they
 * use (found by their unique key, inserted when missing); and in's calibration rows that
 * out has no equal of. New ids are given in out; in is opened read-only and read as one
 * snapshot. All of it in one transaction of out: on failure (TB_EDB, TB_EIO, TB_ENOMEM,
 * TB_EINTERNAL, msg set) nothing of in was written and out is as it was. Fills *counts
 * (zeroed first); in being out's own file is TB_OK with counts->is_target = 1 and nothing
 * done. Merging the same file again copies nothing. */
int tb_store_merge(tb_store *out, const char *in, tb_merge_counts *counts, char *msg,
                   size_t len);

/* For tests only: create a new database at path (which must not exist) by applying the
 * migration steps 1..version and no further, as an older tilebench would have left it.
 * TB_EUSAGE if version is not in 1..TB_SCHEMA_VERSION or path exists. */
int tb_store_create_at_version(const char *path, int version, char *msg, size_t len);

/* The constants tilebench search fitted (schema 6, store_model.c): one row per fit, for a GPU
 * model (environment.gpu_name) and a family; model_json as driver/model.c writes it, error the
 * within-shape median error after the fit (log ratio). The newest row for a GPU and family:
 * *found 0 when none. TB_OK or TB_EDB. */
int tb_store_put_search_model(tb_store *s, const char *gpu_name, const char *family, int n_obs,
                              double error, const char *model_json, char *msg, size_t len);
int tb_store_latest_search_model(tb_store *s, const char *gpu_name, const char *family,
                                 char *model_json, size_t json_cap, int *n_obs, char *created_at,
                                 size_t created_cap, int *found, char *msg, size_t len);

#endif
