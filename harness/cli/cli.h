/* cli.h - what the subcommands share (cli.c): error printing (one line, "tilebench: error:
 * ..."), number parsing with the flag named in the message, opening a run. Only
 * the cmd_*.c files and main.c print or choose exit codes. Exit codes: 0 success, 1 the
 * work ran but something failed (e.g. a sweep that could not store), 2 bad input or
 * missing requirement (nothing written), 130 interrupted. */
#ifndef TB_CLI_H
#define TB_CLI_H
#include <stddef.h>
#include <stdint.h>

#define TB_EXIT_OK 0
#define TB_EXIT_FAIL 1
#define TB_EXIT_USAGE 2
#define TB_EXIT_INTR 130

#define TB_DEFAULT_DB "results/tilebench.db"

int tb_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* returns 2 */
void tb_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print the count of a warning repeated since it was printed (main() calls it at the end). */
void tb_cli_warn_flush(void);
/* After a library call failed with rc and msg: a write into a pipe whose reader went away
 * (errno EPIPE) is a quiet TB_EXIT_PIPE (141, as the shell reports a SIGPIPE death); anything
 * else is printed as one line and mapped by tb_cli_exit_for. */
int tb_cli_fail(int rc, const char *msg);
/* Map a library error code to an exit code: usage/db/load/nogpu -> 2, intr -> 130, else 1. */
int tb_cli_exit_for(int code);
/* Parse a number for flag; on failure prints "invalid value 'x' for --flag: ..." and
 * returns -1. */
int tb_cli_double(const char *flag, const char *s, double lo, double hi, double *out);
int tb_cli_int(const char *flag, const char *s, long long lo, long long hi, long long *out);
/* --dtype: "bf16" or "e4m3" into out; otherwise prints "invalid value 'x' for --dtype (bf16,
 * e4m3)" and returns 2. */
int tb_cli_dtype(const char *s, char *out, size_t len);
/* An FP8 problem needs layout tn (both operands K-major: what Hopper's FP8 tensor cores and
 * cuBLASLt's FP8 kernels read); 0, or 2 with the error printed. */
int tb_cli_dtype_layout(const char *dtype, const char *layout);
/* Append s to v (n of cap used) for a repeatable flag; past cap, "more than CAP FLAG flags
 * ..." is printed and 2 returned (the flag's values are never dropped silently). */
#define TB_CLI_MAX_REPEAT 64
int tb_cli_push(char **v, size_t *n, size_t cap, char *s, const char *flag);
/* The options of a command whose only option is --db FILE (check, migrate): *db set when
 * given; returns 0 to go on, -1 after printing help(), or 2 after a usage error. */
int tb_cli_db_only(int argc, char **argv, const char *cmd, void (*help)(void), const char **db);
/* "unknown option '--x' for 'sweep' (see 'tilebench sweep --help')"; returns 2. */
int tb_cli_bad_option(const char *cmd, char **argv, int optind_, int optopt_);
struct tb_store;
/* Open db read-only at run `want` (0: the newest); on failure prints the error, leaves *st
 * NULL and returns 2. */
int tb_cli_open_run(const char *db, long long want, struct tb_store **st, int64_t *run_id);
#endif
