/* tb.h - error codes and small helpers shared by every module of the driver.
 *
 * Every library function returns an int: TB_OK (0) or one of the TB_E* codes below, and
 * fills a caller-provided message buffer (git style: lowercase first word, no full stop,
 * names its subject). Only main() prints or maps a code to an exit status.
 */
#ifndef TB_TB_H
#define TB_TB_H

#include <stddef.h>
#include <stdarg.h>

#define TB_VERSION "0.1.0"

enum {
    TB_OK = 0,
    TB_EUSAGE = 1,      /* bad input from the user: flag, shape, path, filter */
    TB_EIO = 2,         /* a file or pipe could not be read or written */
    TB_EDB = 3,         /* the database is unreadable, corrupt or from a newer schema */
    TB_ELOAD = 4,       /* a variant library was refused */
    TB_ENOGPU = 5,      /* a GPU is needed and there is none */
    TB_ECUDA = 6,       /* a CUDA or library call failed */
    TB_EWORKER = 7,     /* a worker died, hung or spoke nonsense */
    TB_ENOMEM = 8,
    TB_EINTR = 9,       /* interrupted by the user (SIGINT/SIGTERM) */
    TB_EINTERNAL = 10
};

#define TB_MSG_LEN 512

/* snprintf into msg (if msg and len) and return code; the usual last line of a failure path:
 *     return tb_fail(msg, len, TB_EIO, "cannot open '%s': %s", path, strerror(errno)); */
int tb_fail(char *msg, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Human name of a code ("usage", "database", ...); never NULL. */
const char *tb_strerror(int code);

#endif
