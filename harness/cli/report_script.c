/* report_script.c - finding and running the plotting script (scripts/report) for report, gate
 * and compare (see report_script.h). Owns the one script process a command runs at a time and
 * the signal to pass on to it. */
#define _GNU_SOURCE
#include "cli/report_script.h"
#include "cli/cli.h"
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TB_SOURCE_DIR
#define TB_SOURCE_DIR "."
#endif

extern char **environ;

static volatile sig_atomic_t got_signal;
static volatile pid_t script_pid;

void tb_script_forward(int sig)
{
    got_signal = sig;
    pid_t p = script_pid;
    if (p > 0) kill(p, sig);
}

int tb_script_signal(void)
{
    return got_signal;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int tb_script_find(const tb_paths *paths, char *dir, size_t len)
{
    char probe[1400];
    snprintf(dir, len, "%s/../share/tilebench/report", paths->exe_dir);
    snprintf(probe, sizeof probe, "%s/__main__.py", dir);
    if (is_file(probe)) return 0;
    snprintf(dir, len, "%s/scripts/report", TB_SOURCE_DIR);
    snprintf(probe, sizeof probe, "%s/__main__.py", dir);
    if (is_file(probe)) return 0;
    return tb_cli_error("the report script is missing: neither '%s/../share/tilebench/report' nor "
                        "'%s/scripts/report' holds __main__.py (reinstall tilebench)", paths->exe_dir,
                        TB_SOURCE_DIR);
}

void tb_script_python(char *buf, size_t len)
{
    const char *py = getenv("TILEBENCH_PYTHON");
    if (py && *py) snprintf(buf, len, "%s", py);
    else snprintf(buf, len, "%s", access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
}

int tb_script_run(char *const argv[])
{
    const char *py = argv[0];
    int search = strchr(py, '/') == NULL;
    pid_t pid;   /* caught signals are default again after exec, ignored ones stay ignored */
    int e = search ? posix_spawnp(&pid, py, NULL, NULL, argv, environ)
                   : posix_spawn(&pid, py, NULL, NULL, argv, environ);
    if (e) return tb_cli_error("cannot run python3 '%s': %s (install python3 and python3-matplotlib: "
                               "scripts/setup.sh; TILEBENCH_PYTHON names another)", py, strerror(e));
    script_pid = pid;
    if (got_signal) kill(pid, got_signal);
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR) {
            script_pid = 0;
            return tb_cli_error("cannot wait for the report script: %s", strerror(errno));
        }
    script_pid = 0;
    if (got_signal) return 128 + got_signal;
    if (WIFEXITED(ws)) {
        int c = WEXITSTATUS(ws);
        if (c == 0) return 0;
        if (c == 2) return TB_EXIT_USAGE;        /* the script said what is missing */
        if (c == 1) return TB_EXIT_FAIL;
        if (c == 127) return tb_cli_error("cannot run python3 '%s'", py);
        tb_cli_error("the report script exited with status %d", c);
        return TB_EXIT_FAIL;
    }
    if (WIFSIGNALED(ws)) tb_cli_error("the report script was killed by signal %d (%s)", WTERMSIG(ws),
                                      strsignal(WTERMSIG(ws)));
    return TB_EXIT_FAIL;
}
