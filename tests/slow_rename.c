/* slow_rename.c - a test helper preloaded (LD_PRELOAD) into tilebench by tests/files_cli.sh:
 * rename() first creates the file named by TB_TEST_RENAME_MARK and sleeps 20 s, so a signal
 * can be sent while an output's temporary file exists and is about to be renamed. Without the
 * variable it is plain rename(). Never part of tilebench itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int rename(const char *from, const char *to)
{
    const char *mark = getenv("TB_TEST_RENAME_MARK");
    if (mark) {
        int fd = open(mark, O_CREAT | O_WRONLY, 0644);
        if (fd >= 0) close(fd);
        sleep(20);
    }
    int (*real)(const char *, const char *) = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real ? real(from, to) : -1;
}
