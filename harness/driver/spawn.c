/* spawn.c - worker processes: fork/exec with pipes, poll with a deadline, kill, reap. */
#define _GNU_SOURCE
#include "driver/spawn.h"
#include "common/wire.h"
#include "common/tb.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double tb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tb_proc_start(tb_proc *p, const char *exe, char *const argv[], char *msg, size_t len)
{
    int in[2], rec[2], log[2];
    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->in_fd = p->rec_fd = p->log_fd = -1;
    if (pipe2(in, O_CLOEXEC) || pipe2(rec, O_CLOEXEC) || pipe2(log, O_CLOEXEC))
        return tb_fail(msg, len, TB_EWORKER, "cannot create pipes: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) return tb_fail(msg, len, TB_EWORKER, "cannot fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);   /* its own group: a kill reaches whatever it started */
        dup2(in[0], 0);
        dup2(log[1], 1);
        dup2(log[1], 2);
        dup2(rec[1], 3);  /* dup2 clears FD_CLOEXEC on the new descriptor */
        signal(SIGINT, SIG_IGN);   /* Ctrl-C is the parent's to handle */
        execv(exe, argv);
        dprintf(2, "cannot run worker '%s': %s\n", exe, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(in[0]);
    close(rec[1]);
    close(log[1]);
    p->pid = pid;
    p->in_fd = in[1];
    p->rec_fd = rec[0];
    p->log_fd = log[0];
    fcntl(p->rec_fd, F_SETFL, O_NONBLOCK);
    fcntl(p->log_fd, F_SETFL, O_NONBLOCK);
    return TB_OK;
}

static void drain_log(tb_proc *p)
{
    char buf[4096];
    for (;;) {
        ssize_t r = read(p->log_fd, buf, sizeof buf);
        if (r <= 0) {
            if (r == 0) { close(p->log_fd); p->log_fd = -1; }
            return;
        }
        /* keep the tail */
        size_t cap = sizeof p->log_tail - 1;
        if ((size_t)r >= cap) {
            memcpy(p->log_tail, buf + r - cap, cap);
            p->log_len = cap;
        } else {
            if (p->log_len + (size_t)r > cap) {
                size_t drop = p->log_len + (size_t)r - cap;
                memmove(p->log_tail, p->log_tail + drop, p->log_len - drop);
                p->log_len -= drop;
            }
            memcpy(p->log_tail + p->log_len, buf, (size_t)r);
            p->log_len += (size_t)r;
        }
        p->log_tail[p->log_len] = 0;
    }
}

int tb_proc_next(tb_proc *p, double deadline, volatile int *stop, char **line)
{
    *line = NULL;
    for (;;) {
        char *l = tb_linebuf_next(&p->rec);
        if (l) { *line = l; return 1; }
        if (p->rec_fd < 0) return 0;
        if (stop && *stop) return -2;
        double now = tb_now();
        int ms = 200;
        if (deadline > 0) {
            if (now >= deadline) return -1;
            double left = (deadline - now) * 1000.0;
            if (left < ms) ms = (int)left + 1;
        }
        struct pollfd fds[2] = { { p->rec_fd, POLLIN, 0 }, { p->log_fd, POLLIN, 0 } };
        int nf = p->log_fd >= 0 ? 2 : 1;
        int r = poll(fds, (nfds_t)nf, ms);
        if (r < 0 && errno != EINTR) return 0;
        if (r <= 0) continue;
        if (nf == 2 && (fds[1].revents & (POLLIN | POLLHUP))) drain_log(p);
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            long n = tb_linebuf_fill(&p->rec, p->rec_fd);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                close(p->rec_fd);
                p->rec_fd = -1;
                if (p->log_fd >= 0) drain_log(p);
            }
        }
    }
}

void tb_proc_close_input(tb_proc *p)
{
    if (p->in_fd >= 0) { close(p->in_fd); p->in_fd = -1; }
}

void tb_proc_kill(tb_proc *p)
{
    if (p->pid > 0 && !p->exited) {
        kill(-p->pid, SIGKILL);
        kill(p->pid, SIGKILL);
        if (waitpid(p->pid, &p->wstatus, 0) == p->pid) p->exited = 1;
    }
}

int tb_proc_wait(tb_proc *p, double timeout_s)
{
    double end = tb_now() + timeout_s;
    while (p->pid > 0 && !p->exited) {
        pid_t r = waitpid(p->pid, &p->wstatus, WNOHANG);
        if (r == p->pid) { p->exited = 1; break; }
        if (r < 0) { p->exited = 1; break; }
        if (tb_now() > end) { tb_proc_kill(p); break; }
        if (p->log_fd >= 0) drain_log(p);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return TB_OK;
}

void tb_proc_describe_exit(const tb_proc *p, char *buf, size_t len)
{
    if (!p->exited) snprintf(buf, len, "still running");
    else if (WIFEXITED(p->wstatus)) snprintf(buf, len, "exited with status %d", WEXITSTATUS(p->wstatus));
    else if (WIFSIGNALED(p->wstatus))
        snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(p->wstatus), strsignal(WTERMSIG(p->wstatus)));
    else snprintf(buf, len, "ended");
}

void tb_proc_last_log_line(const tb_proc *p, char *buf, size_t len)
{
    buf[0] = 0;
    size_t n = p->log_len;
    /* only what the current item printed: the text after the worker's last item mark */
    const char *from = p->log_tail, *m;
    for (const char *at = p->log_tail; (m = strstr(at, TB_LOG_MARK)); at = m + 1)
        from = m + strlen(TB_LOG_MARK);
    size_t skip = (size_t)(from - p->log_tail);
    while (n > skip && (p->log_tail[n - 1] == '\n' || p->log_tail[n - 1] == '\r' || p->log_tail[n - 1] == ' ')) n--;
    size_t s = n;
    while (s > skip && p->log_tail[s - 1] != '\n') s--;
    snprintf(buf, len, "%.*s", (int)(n - s), p->log_tail + s);
}

void tb_proc_free(tb_proc *p)
{
    tb_proc_close_input(p);
    if (p->rec_fd >= 0) close(p->rec_fd);
    if (p->log_fd >= 0) close(p->log_fd);
    p->rec_fd = p->log_fd = -1;
    tb_linebuf_free(&p->rec);
}
