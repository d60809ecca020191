/* report_dir.c - the folder tilebench report writes (see report_dir.h): what may be replaced,
 * the temporary folder beside it, and the swap that puts a finished report in its place. */
#define _GNU_SOURCE
#include "cli/report_dir.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "common/tb.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A name a report writes: index.html, or NAME.svg with a plain lowercase name. */
static int report_file(const char *name)
{
    if (!strcmp(name, "index.html")) return 1;
    size_t n = strlen(name);
    return n > 4 && !strcmp(name + n - 4, ".svg") && name[0] != '.' &&
           strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

void tb_report_dir_remove(const char *path)
{
    if (path && *path) nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* 1 when path is the -wal, -shm or -journal file of the database db. */
static int db_companion(const char *path, const char *db)
{
    static const char *const suffix[] = { "-wal", "-shm", "-journal" };
    size_t n = strlen(path);
    for (int i = 0; i < 3; i++) {
        size_t k = strlen(suffix[i]);
        if (n > k && !strcmp(path + n - k, suffix[i])) {
            char *base = strndup(path, n - k);
            int same = base && tb_out_same_file(base, db);
            free(base);
            if (same) return 1;
        }
    }
    return 0;
}

/* Check the output path: *target (malloc'd) is the directory to replace or create (a symbolic
 * link to a directory resolved), *exists whether it is there. Refuses a file, a dangling link,
 * a path whose folder is missing, and a directory holding anything a report does not write
 * (or the database). Returns 0, or 2 after printing the error. */
int tb_report_dir_check(const char *given, const char *db, char **target, int *exists, mode_t *mode)
{
    *target = NULL;
    *exists = 0;
    if (!*given) return tb_cli_error("an empty --output path");
    if (!strcmp(given, "-"))
        return tb_cli_error("report writes a directory (index.html and its figures), not standard "
                            "output: give --output DIR");
    char *p = strdup(given);
    if (!p) return tb_cli_error("out of memory");
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') p[--n] = 0;
    struct stat st, lst;
    if (stat(p, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            free(p);
            return tb_cli_error("output '%s' exists and is not a directory: refusing to replace it",
                                given);
        }
        char *real = realpath(p, NULL);
        free(p);
        if (!real) return tb_cli_error("cannot resolve output '%s': %s", given, strerror(errno));
        DIR *d = opendir(real);
        if (!d) {
            int e = errno;
            free(real);
            return tb_cli_error("cannot read output directory '%s': %s", given, strerror(e));
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *path;
            if (asprintf(&path, "%s/%s", real, e->d_name) < 0) path = NULL;
            int ok = path && report_file(e->d_name) && lstat(path, &lst) == 0 && S_ISREG(lst.st_mode);
            int is_db = path && (tb_out_same_file(path, db) || db_companion(path, db));
            free(path);
            if (!ok || is_db) {
                int rc = is_db ? tb_cli_error("output directory '%s' holds the database '%s': "
                                              "refusing to replace it", given, db)
                               : tb_cli_error("output directory '%s' holds '%s', which a report does "
                                              "not write: refusing to replace it (remove it or give "
                                              "another --output)", given, e->d_name);
                closedir(d);
                free(real);
                return rc;
            }
        }
        closedir(d);
        *target = real;
        *exists = 1;
        *mode = st.st_mode & 07777;
        return 0;
    }
    if (lstat(p, &lst) == 0) {
        free(p);
        return tb_cli_error("output '%s' is a symbolic link to nothing", given);
    }
    if (errno != ENOENT) {
        int e = errno;
        free(p);
        return tb_cli_error("cannot use output '%s': %s", given, strerror(e));
    }
    char *dcopy = strdup(p);
    const char *parent = dcopy ? dirname(dcopy) : ".";
    int parent_ok = stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
    int rc = parent_ok ? 0 : tb_cli_error("cannot create output '%s': its folder '%s' does not "
                                          "exist", given, parent);
    free(dcopy);
    if (rc) {
        free(p);
        return rc;
    }
    mode_t mask = umask(0);
    umask(mask);
    *mode = 0777 & ~mask;
    *target = p;
    return 0;
}

/* The temporary directory beside target (same file system, so a rename moves it in), in
 * *out (malloc'd). TB_OK, or TB_EIO / TB_ENOMEM with msg and *out NULL. */
int tb_report_dir_temp(const char *target, char **out, char *msg, size_t len)
{
    char *d = strdup(target), *b = strdup(target), *tmp = NULL;
    if (d && b && asprintf(&tmp, "%s/.%s.tmp.XXXXXX", dirname(d), basename(b)) < 0) tmp = NULL;
    free(d);
    free(b);
    *out = NULL;
    if (!tmp) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    if (!mkdtemp(tmp)) {
        int e = errno;
        free(tmp);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': cannot create a directory beside it: %s",
                       target, strerror(e));
    }
    *out = tmp;
    return TB_OK;
}

/* Move the finished tmp into target's place: exchanged atomically with an old report
 * (renameat2 RENAME_EXCHANGE; two renames where the file system lacks it), the old one then
 * removed. TB_OK or TB_EIO with msg (tmp left for the caller to remove). */
int tb_report_dir_swap(const char *tmp, const char *target, int exists, char *msg, size_t len)
{
    if (!exists) {
        if (rename(tmp, target) != 0)
            return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", target, strerror(errno));
        return TB_OK;
    }
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, target, RENAME_EXCHANGE) == 0) {
        tb_report_dir_remove(tmp);   /* now the old report */
        return TB_OK;
    }
    char *old;
    if (asprintf(&old, "%s.old", tmp) < 0) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    if (rename(target, old) != 0) {
        int e = errno;
        free(old);
        return tb_fail(msg, len, TB_EIO, "cannot replace '%s': %s", target, strerror(e));
    }
    if (rename(tmp, target) != 0) {
        int e = errno;
        rename(old, target);   /* the old report back in place */
        free(old);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", target, strerror(e));
    }
    tb_report_dir_remove(old);
    free(old);
    return TB_OK;
}
