/* record.c - names of the status and disposition enums, and the table of the environment's
 * fields (see record.h).
 *
 * Owns the one table of spellings per enum: the store, the wire format and export all
 * spell a status through tb_status_name() and read one back through tb_status_parse(), so
 * a name is never typed twice. Appending a value means appending its name here.
 */
#include "common/record.h"

#include <stddef.h>
#include <string.h>

#define ENV_S(f) { #f, 's', offsetof(tb_environment, f), sizeof(((tb_environment *)0)->f) }
#define ENV_I(f) { #f, 'i', offsetof(tb_environment, f), sizeof(int) }
#define ENV_L(f) { #f, 'l', offsetof(tb_environment, f), sizeof(int64_t) }
const tb_env_field tb_env_fields[] = {
    ENV_S(gpu_name), ENV_S(gpu_uuid), ENV_S(pci_bus_id), ENV_I(cc_major), ENV_I(cc_minor),
    ENV_I(sm_count), ENV_L(l2_bytes), ENV_L(mem_bytes), ENV_I(sm_clock_max_mhz),
    ENV_I(sm_clock_mhz), ENV_I(mem_clock_mhz), ENV_I(power_limit_mw), ENV_S(driver_version),
    ENV_I(cuda_driver_version), ENV_I(cuda_runtime_version), ENV_I(cublas_version),
    ENV_I(cupti_version), ENV_S(hostname), ENV_S(os),
};
const size_t tb_env_nfields = sizeof tb_env_fields / sizeof tb_env_fields[0];

const char *tb_env_str(const tb_environment *e, const tb_env_field *f)
{
    return (const char *)e + f->off;
}

char *tb_env_str_mut(tb_environment *e, const tb_env_field *f)
{
    return (char *)e + f->off;
}

int64_t tb_env_num(const tb_environment *e, const tb_env_field *f)
{
    int64_t l;
    int i;
    if (f->kind == 'l') { memcpy(&l, (const char *)e + f->off, sizeof l); return l; }
    memcpy(&i, (const char *)e + f->off, sizeof i);
    return i;
}

void tb_env_set_num(tb_environment *e, const tb_env_field *f, int64_t v)
{
    if (f->kind == 'l') { memcpy((char *)e + f->off, &v, sizeof v); return; }
    int i = (int)v;
    memcpy((char *)e + f->off, &i, sizeof i);
}

static const char *const status_names[] = {
    [TB_STATUS_OK] = "ok",
    [TB_STATUS_CRASHED] = "crashed",
    [TB_STATUS_TIMEOUT] = "timeout",
    [TB_STATUS_UNSUPPORTED] = "unsupported",
    [TB_STATUS_ERROR] = "error",
    [TB_STATUS_SKIPPED] = "skipped",
    [TB_STATUS_PLANNED] = "planned",
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
