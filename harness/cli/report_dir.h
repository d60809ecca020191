/* report_dir.h - the folder `tilebench report --output DIR` writes (report_dir.c): checked
 * before anything runs (a new path, or a folder holding only index.html and plainly named
 * *.svg; never the database), written as a temporary folder beside it, and swapped in whole
 * once the script succeeded, so a reader sees the old report or the new one, never half. */
#ifndef TB_CLI_REPORT_DIR_H
#define TB_CLI_REPORT_DIR_H
#include <stddef.h>
#include <sys/types.h>

/* Check the output path: *target (malloc'd) the folder to replace or create (a symbolic link
 * to a folder resolved), *exists whether it is there, *mode its mode. Refuses a file, a
 * dangling link, a path whose folder is missing, and a folder holding anything a report does
 * not write (or the database db). Returns 0, or 2 after printing the error. */
int tb_report_dir_check(const char *given, const char *db, char **target, int *exists, mode_t *mode);
/* The temporary folder beside target (same file system), in *out (malloc'd). TB_OK, or
 * TB_EIO / TB_ENOMEM with msg and *out NULL. */
int tb_report_dir_temp(const char *target, char **out, char *msg, size_t len);
/* Move the finished tmp into target's place, atomically where the file system allows, the
 * old report then removed. TB_OK or TB_EIO with msg (tmp left for the caller to remove). */
int tb_report_dir_swap(const char *tmp, const char *target, int exists, char *msg, size_t len);
/* Remove a folder and everything under it (links not followed); NULL or "" does nothing. */
void tb_report_dir_remove(const char *path);
#endif
