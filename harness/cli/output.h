/* output.h - where a command writes a file the user named (--output, --markdown, --junit,
 * --json, baseline save), so that it never destroys what it should write into:
 *   - "-" (or no path) is standard output;
 *   - a character device, FIFO or socket is written in place; /dev/stdout, /dev/fd/N and
 *     /proc/self/fd/N through a duplicate of that descriptor (its offset and append flag kept);
 *   - a symbolic link is followed: its target is written, the link stays a link;
 *   - a regular file or a new path gets a temporary file beside it (mkstemp: no fixed-size
 *     name), renamed over it only when every byte was written and the file closed; a new file
 *     gets the process umask, an existing one keeps its mode;
 *   - a path that is the database being read (the same file by any name: a link, a hard link,
 *     another relative path) is refused before anything is written;
 *   - SIGINT, SIGTERM or SIGHUP while writing removes the temporary file and exits 130, 143
 *     or 129, the existing output as it was.
 * Errors are one line naming the path (strerror's words: "No space left on device"). */
#ifndef TB_OUTPUT_H
#define TB_OUTPUT_H
#include <stddef.h>
#include <stdio.h>

typedef struct tb_out {
    FILE *f;          /* write here */
    char *shown;      /* the path as given ("standard output" for -) */
    char *target;     /* the file renamed over (symbolic links resolved), or NULL */
    char *tmp;        /* the temporary file, or NULL when writing in place */
    int   is_stdout;
} tb_out;

/* Open path for writing ("-" or NULL: standard output). guard (may be NULL): a file that
 * must not be the output (the database). TB_OK, or TB_EUSAGE / TB_EIO with msg; nothing is
 * created on failure. */
int tb_out_open(tb_out *o, const char *path, const char *guard, char *msg, size_t len);
/* Finish: flush and close (standard output: flush only), then rename the temporary file over
 * the target. On any failure the temporary file is removed, the target untouched; TB_EIO. */
int tb_out_commit(tb_out *o, char *msg, size_t len);
/* Give up: close and remove the temporary file. Safe after a failed open or a commit. */
void tb_out_abort(tb_out *o);

/* The end of every command (main.c): standard output flushed and closed and its error
 * checked, as coreutils' close_stdout does. 0 when all was written; TB_EXIT_PIPE (quietly)
 * when the reader went away (EPIPE); 1 with one line on stderr for any other write error. */
#define TB_EXIT_PIPE 141
int tb_out_close_stdout(int quiet);   /* quiet: a failure already reported, say nothing more */
/* 1 when a and b name the same existing file (by any name). */
int tb_out_same_file(const char *a, const char *b);
/* When standard output is a terminal, route it through a filter that shows control characters
 * (C0 but newline and tab, DEL, C1) as \xNN: a table may carry text from a variant or a
 * database, and a terminal must get text, never commands. Call first thing in main(). */
void tb_out_guard_terminal(void);
#endif
