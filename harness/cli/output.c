/* output.c - writing a file the user named without destroying what it should write into,
 * and standard output checked at exit and escaped on a terminal (see output.h): in place for devices, FIFOs and /dev, /proc paths; through a temporary file
 * and a rename for regular files; never over the database being read; cleaned up on a signal. */
#define _GNU_SOURCE
#include "cli/output.h"
#include "common/tb.h"
#include "common/text.h"
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary file a signal must remove (one output is written at a time). */
static char *volatile pending_tmp;
static struct sigaction saved[3];
static const int caught[3] = { SIGINT, SIGTERM, SIGHUP };

static void on_signal(int sig)
{
    char *t = pending_tmp;
    if (t) unlink(t);                       /* async-signal-safe */
    _exit(128 + sig);
}

static void guard_signals(char *tmp)
{
    pending_tmp = tmp;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) {
        sigaction(caught[i], NULL, &saved[i]);
        if (saved[i].sa_handler != SIG_IGN)   /* an ignored signal (nohup) stays ignored */
            sigaction(caught[i], &sa, NULL);
    }
}

static void unguard_signals(void)
{
    if (!pending_tmp) return;
    for (int i = 0; i < 3; i++) sigaction(caught[i], &saved[i], NULL);
    pending_tmp = NULL;
}

static int same_file(const char *a, const char *b);

/* The descriptor a path names, for /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N;
 * else -1. */
static int fd_of_path(const char *p)
{
    if (!strcmp(p, "/dev/stdout")) return 1;
    if (!strcmp(p, "/dev/stderr")) return 2;
    const char *n = !strncmp(p, "/dev/fd/", 8) ? p + 8 : !strncmp(p, "/proc/self/fd/", 14) ? p + 14 : NULL;
    if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 6) return -1;
    return atoi(n);
}

int tb_out_same_file(const char *a, const char *b)
{
    return same_file(a, b);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static void clear(tb_out *o)
{
    free(o->shown);
    free(o->target);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

/* o->f written in place through descriptor fd (from dup or open, -1 with errno on failure) */
static int stream_on(tb_out *o, int fd, const char *path, char *msg, size_t len)
{
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        clear(o);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return TB_OK;
}

int tb_out_open(tb_out *o, const char *path, const char *guard, char *msg, size_t len)
{
    memset(o, 0, sizeof *o);
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        o->is_stdout = 1;
        o->shown = strdup("standard output");
        return o->shown ? TB_OK : tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    if (!*path) return tb_fail(msg, len, TB_EUSAGE, "an empty output path");
    if (same_file(path, guard))
        return tb_fail(msg, len, TB_EUSAGE, "output '%s' is the database '%s' itself: refusing to "
                       "write over it", path, guard);
    o->shown = strdup(path);
    if (!o->shown) return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    struct stat st, lst;
    int exists = stat(path, &st) == 0;
    if (!exists && lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        clear(o);
        return tb_fail(msg, len, TB_EUSAGE, "output '%s' is a symbolic link to nothing", path);
    }
    if (exists && S_ISDIR(st.st_mode)) {
        clear(o);
        return tb_fail(msg, len, TB_EUSAGE, "output '%s' is a directory", path);
    }
    /* a descriptor this process already holds (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written
     * through a duplicate, so its offset and its append flag are the shell's */
    int held = fd_of_path(path);
    if (held >= 0) return stream_on(o, dup(held), path, msg, len);
    /* a device, FIFO or socket: written in place, never replaced */
    if (exists && !S_ISREG(st.st_mode))
        return stream_on(o, open(path, O_WRONLY | O_CLOEXEC), path, msg, len);
    /* a regular file or a new path: a temporary file beside the target, renamed over it */
    o->target = exists ? realpath(path, NULL) : strdup(path);
    if (!o->target) {
        int e = errno;
        clear(o);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    char *dcopy = strdup(o->target), *bcopy = strdup(o->target);
    if (!dcopy || !bcopy || asprintf(&o->tmp, "%s/.%s.tmp.XXXXXX", dirname(dcopy), basename(bcopy)) < 0) {
        free(dcopy); free(bcopy);
        o->tmp = NULL;
        clear(o);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    free(dcopy);
    free(bcopy);
    mode_t mask = umask(0);
    umask(mask);
    guard_signals(o->tmp);
    int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        unguard_signals();
        clear(o);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    mode_t mode = exists ? (st.st_mode & 07777) : (0666 & ~mask);
    if (fchmod(fd, mode) != 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        tb_out_abort(o);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", path, strerror(e));
    }
    return TB_OK;
}

int tb_out_commit(tb_out *o, char *msg, size_t len)
{
    if (o->is_stdout) {
        int bad = fflush(stdout) != 0 || ferror(stdout);
        int e = errno;
        clear(o);
        return bad ? tb_fail(msg, len, TB_EIO, "cannot write to standard output: %s", strerror(e)) : TB_OK;
    }
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = errno;
    if (!bad && o->tmp && fsync(fileno(o->f)) != 0 && errno != EINVAL) { bad = 1; e = errno; }
    if (fclose(o->f) != 0 && !bad) { bad = 1; e = errno; }
    o->f = NULL;
    if (!bad && o->tmp && rename(o->tmp, o->target) != 0) { bad = 1; e = errno; }
    if (bad) {
        char shown[512];
        snprintf(shown, sizeof shown, "%s", o->shown ? o->shown : "?");
        tb_out_abort(o);
        return tb_fail(msg, len, TB_EIO, "cannot write '%s': %s", shown, strerror(e));
    }
    unguard_signals();
    clear(o);
    return TB_OK;
}

void tb_out_abort(tb_out *o)
{
    if (o->f && !o->is_stdout) fclose(o->f);
    o->f = NULL;
    if (o->tmp) unlink(o->tmp);
    unguard_signals();
    clear(o);
}

int tb_out_close_stdout(int quiet)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) { bad = 1; e = errno; }
    if (!bad) return 0;
    if (e == EPIPE) return TB_EXIT_PIPE;
    if (!quiet)
        fprintf(stderr, "tilebench: error: cannot write to standard output: %s\n",
                e ? strerror(e) : "write error");
    return 1;
}

/* On a terminal, standard output passes through a filter that shows control characters
 * escaped (common/text.h): a table may carry text from a variant or a database, and a
 * terminal must get text, never commands. Pipes and files get the bytes as they are. */
static char pending[4];        /* the start of a character the last write ended inside */
static size_t npending;

static int write_all(const char *b, size_t n)
{
    for (size_t w = 0; w < n;) {
        ssize_t r = write(1, b + w, n - w);
        if (r < 0) { if (errno == EINTR) continue; return -1; }
        w += (size_t)r;
    }
    return 0;
}

static ssize_t term_write(void *cookie, const char *buf, size_t n)
{
    (void)cookie;
    char in[512 + 4], out[4 * (512 + 4) + 8];
    size_t done = 0;
    while (done < n) {
        size_t take = n - done < 512 ? n - done : 512, used = 0;
        memcpy(in, pending, npending);
        memcpy(in + npending, buf + done, take);
        size_t total = npending + take;
        size_t at = tb_text_escape_bytes(in, total, out, sizeof out, 1, 0, &used);
        npending = total - used;   /* at most 3 bytes of an unfinished character */
        memcpy(pending, in + used, npending);
        if (write_all(out, at)) return -1;
        done += take;
    }
    return (ssize_t)n;
}

static int term_close(void *cookie)
{
    (void)cookie;
    if (!npending) return 0;
    char out[32];   /* an unfinished character at the very end: shown escaped */
    size_t at = tb_text_escape_bytes(pending, npending, out, sizeof out, 1, 1, NULL);
    npending = 0;
    return write_all(out, at);
}

void tb_out_guard_terminal(void)
{
    if (!isatty(1)) return;
    cookie_io_functions_t io = { NULL, term_write, NULL, term_close };
    FILE *f = fopencookie(NULL, "w", io);
    if (f) { setvbuf(f, NULL, _IOLBF, 0); stdout = f; }
}
