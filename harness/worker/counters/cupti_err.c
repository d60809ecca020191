/* cupti_err.c - CUPTI results into error codes and messages (see cupti_err.h). */
#include "worker/counters/cupti_err.h"
#include "common/tb.h"
#include <stdio.h>
#include <string.h>

static const char *cupti_name(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_INVALID_METRIC_NAME: return "CUPTI_ERROR_INVALID_METRIC_NAME";
    case CUPTI_ERROR_NOT_SUPPORTED: return "CUPTI_ERROR_NOT_SUPPORTED";
    case CUPTI_ERROR_HARDWARE_BUSY: return "CUPTI_ERROR_HARDWARE_BUSY";
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED: return "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        return "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED: return "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED: return "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED: return "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED: return "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_INVALID_CHIP_NAME: return "CUPTI_ERROR_INVALID_CHIP_NAME";
    case CUPTI_ERROR_INVALID_PARAMETER: return "CUPTI_ERROR_INVALID_PARAMETER";
    case CUPTI_ERROR_INVALID_OPERATION: return "CUPTI_ERROR_INVALID_OPERATION";
    case CUPTI_ERROR_INVALID_CONTEXT: return "CUPTI_ERROR_INVALID_CONTEXT";
    case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI_ERROR_NOT_INITIALIZED";
    case CUPTI_ERROR_OUT_OF_MEMORY: return "CUPTI_ERROR_OUT_OF_MEMORY";
    case CUPTI_ERROR_UNKNOWN: return "CUPTI_ERROR_UNKNOWN";
    default: return NULL;
    }
}

/* "CUPTI_ERROR_X (description)" into buf */
const char *tb_cupti_text(CUptiResult r, char *buf, size_t n)
{
    const char *s = NULL, *nm = cupti_name(r);
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS) s = NULL;
    if (nm && s && strcmp(nm, s) != 0) snprintf(buf, n, "%s (%s)", nm, s);
    else if (nm || s) snprintf(buf, n, "%s", nm ? nm : s);
    else snprintf(buf, n, "CUPTI error %d", (int)r);
    return buf;
}

/* Errors that mean "no counters in this process", whichever call returned them. */
int tb_cupti_systemic(CUptiResult r)
{
    switch (r) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
        return 1;
    default:
        return 0;
    }
}

/* The message for a failed CUPTI call, with a hint for the errors a user can do something
 * about; returns TB_ENOGPU for systemic errors, TB_ECUDA otherwise. */
int tb_cupti_fail(char *msg, size_t len, const char *call, CUptiResult r)
{
    char t[200];
    const char *hint = "";
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        hint = ": another profiler (ncu, nsys or a CUPTI client) holds the counters";
    else if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
             r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
        hint = ": no permission to read GPU performance counters; run as root or load the "
               "driver with NVreg_RestrictProfilingToAdminUsers=0 (docs/counters.md)";
    else if (r == CUPTI_ERROR_HARDWARE_BUSY)
        hint = ": the counters are in use by another process";
    return tb_fail(msg, len, tb_cupti_systemic(r) ? TB_ENOGPU : TB_ECUDA, "%s failed: %s%s", call,
                   tb_cupti_text(r, t, sizeof t), hint);
}

