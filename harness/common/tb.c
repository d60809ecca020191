/* tb.c - error codes and the tb_fail() message helper (see tb.h). */
#include "common/tb.h"
#include <stdio.h>

int tb_fail(char *msg, size_t len, int code, const char *fmt, ...)
{
    if (msg && len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, len, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *tb_strerror(int code)
{
    switch (code) {
    case TB_OK: return "ok";
    case TB_EUSAGE: return "usage";
    case TB_EIO: return "i/o";
    case TB_EDB: return "database";
    case TB_ELOAD: return "variant load";
    case TB_ENOGPU: return "no gpu";
    case TB_ECUDA: return "cuda";
    case TB_EWORKER: return "worker";
    case TB_ENOMEM: return "out of memory";
    case TB_EINTR: return "interrupted";
    default: return "internal";
    }
}
