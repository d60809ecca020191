/* paths.c - locating the worker, the shipped variants and the shape sets (see paths.h). */
#define _GNU_SOURCE
#include "driver/paths.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef TB_SOURCE_DIR
#define TB_SOURCE_DIR "."
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

void tb_paths_init(tb_paths *p)
{
    memset(p, 0, sizeof *p);
    ssize_t n = readlink("/proc/self/exe", p->exe_dir, sizeof p->exe_dir - 1);
    if (n <= 0) snprintf(p->exe_dir, sizeof p->exe_dir, ".");
    else {
        p->exe_dir[n] = 0;
        char *s = strrchr(p->exe_dir, '/');
        if (s) *s = 0;
    }
    const char *e;
    if ((e = getenv("TILEBENCH_WORKER")) && *e) snprintf(p->worker, sizeof p->worker, "%s", e);
    else snprintf(p->worker, sizeof p->worker, "%s/tilebench-worker", p->exe_dir);
    if ((e = getenv("TILEBENCH_VARIANTS")) && *e) snprintf(p->variants_dir, sizeof p->variants_dir, "%s", e);
    else snprintf(p->variants_dir, sizeof p->variants_dir, "%s/../lib/tilebench/variants", p->exe_dir);
    if ((e = getenv("TILEBENCH_SHAPES")) && *e) snprintf(p->shapes_dir, sizeof p->shapes_dir, "%s", e);
    else {
        snprintf(p->shapes_dir, sizeof p->shapes_dir, "%s/../share/tilebench/shapes", p->exe_dir);
        if (!is_dir(p->shapes_dir))
            snprintf(p->shapes_dir, sizeof p->shapes_dir, "%s/results/shapes", TB_SOURCE_DIR);
    }
}
