/* record.c - names of the status and disposition enums (see record.h).
 *
 * Owns the one table of spellings per enum: the store, the wire format and export all
 * spell a status through tb_status_name() and read one back through tb_status_parse(), so
 * a name is never typed twice. Appending a value means appending its name here.
 */
#include "common/record.h"

#include <string.h>

static const char *const status_names[] = {
    [TB_STATUS_OK] = "ok",
    [TB_STATUS_CRASHED] = "crashed",
    [TB_STATUS_TIMEOUT] = "timeout",
    [TB_STATUS_UNSUPPORTED] = "unsupported",
    [TB_STATUS_ERROR] = "error",
    [TB_STATUS_SKIPPED] = "skipped",
};

static const char *const disposition_names[] = {
    [TB_DISP_NOT_VERIFIED] = "not_verified",
    [TB_DISP_PASSED] = "passed",
    [TB_DISP_INCORRECT] = "incorrect",
};

#define N_STATUS (sizeof status_names / sizeof status_names[0])
#define N_DISP (sizeof disposition_names / sizeof disposition_names[0])

/* Never NULL: an out-of-range value reads "invalid", so a corrupted record still prints. */
const char *tb_status_name(tb_status s)
{
    if ((unsigned)s < N_STATUS && status_names[s]) return status_names[s];
    return "invalid";
}

const char *tb_disposition_name(tb_disposition d)
{
    if ((unsigned)d < N_DISP && disposition_names[d]) return disposition_names[d];
    return "invalid";
}

/* 0 and *out set on an exact (case-sensitive) match; -1 and *out unchanged otherwise. */
int tb_status_parse(const char *s, tb_status *out)
{
    if (!s) return -1;
    for (unsigned i = 0; i < N_STATUS; i++) {
        if (status_names[i] && strcmp(s, status_names[i]) == 0) {
            *out = (tb_status)i;
            return 0;
        }
    }
    return -1;
}

int tb_disposition_parse(const char *s, tb_disposition *out)
{
    if (!s) return -1;
    for (unsigned i = 0; i < N_DISP; i++) {
        if (disposition_names[i] && strcmp(s, disposition_names[i]) == 0) {
            *out = (tb_disposition)i;
            return 0;
        }
    }
    return -1;
}
