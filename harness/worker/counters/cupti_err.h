/* cupti_err.h - CUPTI results into tilebench's error codes and one-line messages.
 *
 * Owns the wording of every CUPTI failure tilebench reports (the counters, PM sampling) and
 * the split between "no counters in this process" (TB_ENOGPU: another profiler, permissions,
 * an unsupported device) and any other failure (TB_ECUDA).
 */
#ifndef TB_CUPTI_ERR_H
#define TB_CUPTI_ERR_H
#include <cupti_result.h>
#include <stddef.h>

/* "CUPTI_ERROR_X (description)" into buf; returns buf. */
const char *tb_cupti_text(CUptiResult r, char *buf, size_t n);
/* 1 for the results that mean "no counters in this process", whichever call returned them. */
int tb_cupti_systemic(CUptiResult r);
/* msg = "<call> failed: <text><hint>", with a hint for what a user can act on (another
 * profiler, permissions); returns TB_ENOGPU for systemic results, TB_ECUDA otherwise. */
int tb_cupti_fail(char *msg, size_t len, const char *call, CUptiResult r);
#endif
