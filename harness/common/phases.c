/* phases.c - where a sweep's wall time went (see phases.h). */
#include "common/phases.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const keys[TB_PH_COUNT] = {
    "startup", "probe", "worker_start", "validation", "warmup", "timing", "checks", "energy",
    "counters", "store" };
static const char *const labels[TB_PH_COUNT] = {
    "start-up", "probe", "worker start", "validation", "warm-up", "timing", "checks", "energy",
    "counters", "store" };

const char *tb_phase_key(tb_phase p)
{
    return (unsigned)p < TB_PH_COUNT ? keys[p] : "?";
}

const char *tb_phase_label(tb_phase p)
{
    return (unsigned)p < TB_PH_COUNT ? labels[p] : "?";
}

void tb_phases_add(tb_phases *into, const tb_phases *x)
{
    for (int i = 0; i < TB_PH_COUNT; i++) into->s[i] += x->s[i];
    into->total_s += x->total_s;
}

int tb_phases_to_json(const tb_phases *p, char *buf, size_t len)
{
    size_t l = 0;
    int n = snprintf(buf, len, "{");
    for (int i = 0; n >= 0 && (size_t)n < len - l && i <= TB_PH_COUNT; i++) {
        l += (size_t)n;
        if (i < TB_PH_COUNT)
            n = snprintf(buf + l, len - l, "\"%s_s\":%.4f,", keys[i], p->s[i]);
        else
            n = snprintf(buf + l, len - l, "\"total_s\":%.4f}", p->total_s);
    }
    if (n < 0 || (size_t)n >= len - l) {
        if (len) buf[0] = 0;
        return TB_EUSAGE;
    }
    return TB_OK;
}

int tb_phases_from_json(const char *json, tb_phases *p, char *msg, size_t len)
{
    memset(p, 0, sizeof *p);
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return tb_fail(msg, len, TB_EUSAGE, "phases: not a JSON object");
    }
    int rc = TB_OK;
    for (int i = 0; i <= TB_PH_COUNT && rc == TB_OK; i++) {
        char k[32];
        snprintf(k, sizeof k, "%s_s", i < TB_PH_COUNT ? keys[i] : "total");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
        if (!v) continue;
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
            rc = tb_fail(msg, len, TB_EUSAGE, "phases: '%s' is not a time in seconds", k);
        else if (i < TB_PH_COUNT) p->s[i] = v->valuedouble;
        else p->total_s = v->valuedouble;
    }
    cJSON_Delete(o);
    return rc;
}

const char *tb_phases_format(const tb_phases *p, char *buf, size_t len)
{
    int order[TB_PH_COUNT];
    double sum = 0;
    for (int i = 0; i < TB_PH_COUNT; i++) { order[i] = i; sum += p->s[i]; }
    for (int i = 1; i < TB_PH_COUNT; i++)   /* insertion sort, longest first; ties in order */
        for (int j = i; j > 0 && p->s[order[j]] > p->s[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    const double total = p->total_s > 0 ? p->total_s : sum;
    size_t l = 0;
    int n = snprintf(buf, len, "%.1f s:", total);
    const char *sep = " ";
    for (int k = 0; k < TB_PH_COUNT && n >= 0 && (size_t)n < len - l; k++) {
        const double v = p->s[order[k]];
        if (v < 0.05) continue;
        l += (size_t)n;
        n = snprintf(buf + l, len - l, "%s%s %.1f s (%.0f %%)", sep, labels[order[k]], v,
                     total > 0 ? 100.0 * v / total : 0.0);
        sep = ", ";
    }
    if (n >= 0 && (size_t)n < len - l && p->total_s > 0) {
        l += (size_t)n;
        double other = p->total_s - sum;
        n = snprintf(buf + l, len - l, "%sother %.1f s", sep, other > 0 ? other : 0.0);
    }
    return buf;
}
