/* job_line.c - the job lines of tilebench-worker's measure mode (job_line.h): splitting a line
 * into its variants and the rest, the "more" flag, and the check that a follow-up job of a
 * session is for the first job's problem (or, with "keep_worker", only its problem and seed
 * differ). No CUDA: tests/test_job_line.c runs it on the CPU. */
#include "worker/job_line.h"
#include "common/tb.h"
#include <string.h>

int tbw_job_split(const char *line, cJSON **rest, cJSON **variants, int *more, char *msg,
                  size_t len)
{
    *rest = *variants = NULL;
    *more = 0;
    cJSON *j = cJSON_Parse(line);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return tb_fail(msg, len, TB_EWORKER, "job is not a JSON object");
    }
    cJSON *vs = cJSON_DetachItemFromObjectCaseSensitive(j, "variants");
    if (vs && !cJSON_IsArray(vs)) {
        cJSON_Delete(vs);
        cJSON_Delete(j);
        return tb_fail(msg, len, TB_EWORKER, "job's \"variants\" is not an array");
    }
    cJSON *mo = cJSON_DetachItemFromObjectCaseSensitive(j, "more");
    *more = cJSON_IsTrue(mo) || (cJSON_IsNumber(mo) && mo->valuedouble != 0);
    cJSON_Delete(mo);
    if (!vs) vs = cJSON_CreateArray();
    if (!vs) {
        cJSON_Delete(j);
        return tb_fail(msg, len, TB_ENOMEM, "out of memory");
    }
    *rest = j;
    *variants = vs;
    return TB_OK;
}

int tbw_job_same(const cJSON *first, const cJSON *rest, char *msg, size_t len)
{
    if (cJSON_Compare(first, rest, 1)) return TB_OK;
    const char *key = "?";
    const cJSON *it;
    cJSON_ArrayForEach(it, first) {     /* the first key that differs, or is missing */
        const cJSON *o = cJSON_GetObjectItemCaseSensitive(rest, it->string);
        if (!o || !cJSON_Compare(it, o, 1)) { key = it->string; break; }
    }
    if (!strcmp(key, "?"))
        cJSON_ArrayForEach(it, rest)
            if (!cJSON_GetObjectItemCaseSensitive(first, it->string)) { key = it->string; break; }
    return tb_fail(msg, len, TB_EUSAGE, "a follow-up job (after \"more\") must be for the first "
                   "job's problem, seeds and options, only its variants may differ: \"%s\" differs",
                   key);
}

/* j less "problem" and "seed" (a copy; NULL out of memory) */
static cJSON *without_problem(const cJSON *j)
{
    cJSON *c = cJSON_Duplicate(j, 1);
    if (!c) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(c, "problem");
    cJSON_DeleteItemFromObjectCaseSensitive(c, "seed");
    return c;
}

int tbw_job_follow(const cJSON *first, const cJSON *prev, const cJSON *rest, int *retake,
                   char *msg, size_t len)
{
    *retake = 0;
    if (cJSON_Compare(prev, rest, 1)) return TB_OK;
    const cJSON *kw = cJSON_GetObjectItemCaseSensitive(first, "keep_worker");
    if (!(cJSON_IsTrue(kw) || (cJSON_IsNumber(kw) && kw->valuedouble != 0)))
        return tbw_job_same(prev, rest, msg, len);
    cJSON *a = without_problem(prev), *b = without_problem(rest);
    int rc = !a || !b ? tb_fail(msg, len, TB_ENOMEM, "out of memory") : tbw_job_same(a, b, msg, len);
    cJSON_Delete(a);
    cJSON_Delete(b);
    if (rc == TB_OK) *retake = 1;
    return rc;
}
