/* wire.c - JSON-lines framing and record conversion for the worker pipe (see wire.h): the
 * environment and the measurement; the problem of a job is wire_problem.c's. */
#define _POSIX_C_SOURCE 200809L
#include "common/wire.h"
#include "common/tb.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tb_wire_send(int fd, const cJSON *obj)
{
    char *s = cJSON_PrintUnformatted(obj);
    if (!s) return TB_ENOMEM;
    size_t n = strlen(s);
    s[n] = '\n';            /* replaced the terminator; write n + 1 bytes */
    size_t off = 0;
    int rc = TB_OK;
    while (off < n + 1) {
        ssize_t w = write(fd, s + off, n + 1 - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            rc = TB_EIO;
            break;
        }
        off += (size_t)w;
    }
    s[n] = 0;
    cJSON_free(s);
    return rc;
}

long tb_linebuf_fill(tb_linebuf *lb, int fd)
{
    if (lb->cap - lb->len < 65536) {
        size_t cap = lb->cap ? lb->cap * 2 : 131072;
        if (cap > TB_WIRE_MAX_LINE + 65536) return -2;
        char *nb = realloc(lb->buf, cap);
        if (!nb) return -1;
        lb->buf = nb;
        lb->cap = cap;
    }
    ssize_t r = read(fd, lb->buf + lb->len, lb->cap - lb->len - 1);
    if (r > 0) lb->len += (size_t)r;
    return (long)r;
}

char *tb_linebuf_next(tb_linebuf *lb)
{
    char *nl = lb->len ? memchr(lb->buf, '\n', lb->len) : NULL;
    if (!nl) return NULL;
    size_t n = (size_t)(nl - lb->buf);
    char *line = malloc(n + 1);
    if (!line) return NULL;
    memcpy(line, lb->buf, n);
    line[n] = 0;
    memmove(lb->buf, nl + 1, lb->len - n - 1);
    lb->len -= n + 1;
    return line;
}

void tb_linebuf_free(tb_linebuf *lb)
{
    free(lb->buf);
    lb->buf = NULL;
    lb->len = lb->cap = 0;
}

const char *tb_json_str(const cJSON *o, const char *key, const char *dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : dflt;
}

double tb_json_num(const cJSON *o, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsNull(v)) return NAN;
    return dflt;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

static void copy_str(char *dst, size_t n, const char *src)
{
    snprintf(dst, n, "%s", src ? src : "");
}

cJSON *tb_wire_env_to_json(const tb_environment *e)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < tb_env_nfields; i++) {
        const tb_env_field *f = &tb_env_fields[i];
        if (f->kind == 's') cJSON_AddStringToObject(o, f->key, tb_env_str(e, f));
        else cJSON_AddNumberToObject(o, f->key, (double)tb_env_num(e, f));
    }
    cJSON_AddStringToObject(o, "extra_json", e->extra_json);
    return o;
}

int tb_wire_env_from_json(const cJSON *o, tb_environment *e, char *msg, size_t len)
{
    (void)msg; (void)len;
    memset(e, 0, sizeof *e);
    for (size_t i = 0; i < tb_env_nfields; i++) {
        const tb_env_field *f = &tb_env_fields[i];
        if (f->kind == 's') copy_str(tb_env_str_mut(e, f), f->size, tb_json_str(o, f->key, ""));
        else tb_env_set_num(e, f, (int64_t)tb_json_num(o, f->key, -1));
    }
    copy_str(e->extra_json, sizeof e->extra_json, tb_json_str(o, "extra_json", "{}"));
    return TB_OK;
}

void tb_measurement_init(tb_measurement *m)
{
    memset(m, 0, sizeof *m);
    m->status = TB_STATUS_OK;
    m->disposition = TB_DISP_NOT_VERIFIED;
    m->max_abs_err = m->rel_fro_err = m->atol = m->rtol = NAN;
    m->median_ms = m->mean_ms = m->stdev_ms = m->min_ms = m->max_ms = m->rse = NAN;
    m->tflops = m->clock_mhz = m->first_launch_ms = NAN;
    m->n_bad = m->n_nonfinite = -1;
    m->workspace_bytes = -1;
    snprintf(m->extra_json, sizeof m->extra_json, "{}");
}

void tb_measurement_free_samples(tb_measurement *m)
{
    free(m->samples_ms);
    free(m->samples_clock_mhz);
    m->samples_ms = m->samples_clock_mhz = NULL;
}

cJSON *tb_wire_measurement_to_json(const tb_measurement *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "status", tb_status_name(m->status));
    cJSON_AddStringToObject(o, "disposition", tb_disposition_name(m->disposition));
    cJSON_AddStringToObject(o, "reason", m->reason);
    cJSON_AddStringToObject(o, "rule", m->rule);
    cJSON_AddNumberToObject(o, "trials", m->trials);
    add_num(o, "max_abs_err", m->max_abs_err);
    add_num(o, "rel_fro_err", m->rel_fro_err);
    cJSON_AddNumberToObject(o, "n_bad", (double)m->n_bad);
    cJSON_AddNumberToObject(o, "n_nonfinite", (double)m->n_nonfinite);
    add_num(o, "atol", m->atol);
    add_num(o, "rtol", m->rtol);
    cJSON_AddStringToObject(o, "method", m->method);
    cJSON_AddStringToObject(o, "stop_reason", m->stop_reason);
    cJSON_AddNumberToObject(o, "n_samples", m->n_samples);
    cJSON_AddNumberToObject(o, "warmup", m->warmup);
    add_num(o, "median_ms", m->median_ms);
    add_num(o, "mean_ms", m->mean_ms);
    add_num(o, "stdev_ms", m->stdev_ms);
    add_num(o, "min_ms", m->min_ms);
    add_num(o, "max_ms", m->max_ms);
    add_num(o, "rse", m->rse);
    add_num(o, "tflops", m->tflops);
    add_num(o, "clock_mhz", m->clock_mhz);
    add_num(o, "first_launch_ms", m->first_launch_ms);
    cJSON_AddNumberToObject(o, "workspace_bytes", (double)m->workspace_bytes);
    cJSON_AddStringToObject(o, "describe", m->describe);
    cJSON_AddStringToObject(o, "extra_json", m->extra_json);
    if (m->samples_ms && m->n_samples > 0)
        cJSON_AddItemToObject(o, "samples_ms", cJSON_CreateDoubleArray(m->samples_ms, m->n_samples));
    if (m->samples_clock_mhz && m->n_samples > 0)
        cJSON_AddItemToObject(o, "samples_clock_mhz",
                              cJSON_CreateDoubleArray(m->samples_clock_mhz, m->n_samples));
    return o;
}

static double *num_array(const cJSON *a, int n)
{
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n || n <= 0) return NULL;
    double *v = malloc(sizeof *v * (size_t)n);
    if (!v) return NULL;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) v[i++] = cJSON_IsNumber(it) ? it->valuedouble : NAN;
    return v;
}

int tb_wire_measurement_from_json(const cJSON *o, tb_measurement *m, char *msg, size_t len)
{
    tb_measurement_init(m);
    if (tb_status_parse(tb_json_str(o, "status", ""), &m->status) != 0)
        return tb_fail(msg, len, TB_EWORKER, "result with unknown status '%s'",
                       tb_json_str(o, "status", ""));
    if (tb_disposition_parse(tb_json_str(o, "disposition", ""), &m->disposition) != 0)
        return tb_fail(msg, len, TB_EWORKER, "result with unknown disposition '%s'",
                       tb_json_str(o, "disposition", ""));
    copy_str(m->reason, sizeof m->reason, tb_json_str(o, "reason", ""));
    copy_str(m->rule, sizeof m->rule, tb_json_str(o, "rule", ""));
    m->trials = (int)tb_json_num(o, "trials", 0);
    m->max_abs_err = tb_json_num(o, "max_abs_err", NAN);
    m->rel_fro_err = tb_json_num(o, "rel_fro_err", NAN);
    m->n_bad = (int64_t)tb_json_num(o, "n_bad", -1);
    m->n_nonfinite = (int64_t)tb_json_num(o, "n_nonfinite", -1);
    m->atol = tb_json_num(o, "atol", NAN);
    m->rtol = tb_json_num(o, "rtol", NAN);
    copy_str(m->method, sizeof m->method, tb_json_str(o, "method", ""));
    copy_str(m->stop_reason, sizeof m->stop_reason, tb_json_str(o, "stop_reason", ""));
    m->n_samples = (int)tb_json_num(o, "n_samples", 0);
    m->warmup = (int)tb_json_num(o, "warmup", 0);
    m->median_ms = tb_json_num(o, "median_ms", NAN);
    m->mean_ms = tb_json_num(o, "mean_ms", NAN);
    m->stdev_ms = tb_json_num(o, "stdev_ms", NAN);
    m->min_ms = tb_json_num(o, "min_ms", NAN);
    m->max_ms = tb_json_num(o, "max_ms", NAN);
    m->rse = tb_json_num(o, "rse", NAN);
    m->tflops = tb_json_num(o, "tflops", NAN);
    m->clock_mhz = tb_json_num(o, "clock_mhz", NAN);
    m->first_launch_ms = tb_json_num(o, "first_launch_ms", NAN);
    m->workspace_bytes = (int64_t)tb_json_num(o, "workspace_bytes", -1);
    copy_str(m->describe, sizeof m->describe, tb_json_str(o, "describe", ""));
    copy_str(m->extra_json, sizeof m->extra_json, tb_json_str(o, "extra_json", "{}"));
    if (m->n_samples < 0 || m->n_samples > 10000000)
        return tb_fail(msg, len, TB_EWORKER, "result with %d samples", m->n_samples);
    m->samples_ms = num_array(cJSON_GetObjectItemCaseSensitive(o, "samples_ms"), m->n_samples);
    m->samples_clock_mhz = num_array(cJSON_GetObjectItemCaseSensitive(o, "samples_clock_mhz"),
                                     m->n_samples);
    if (m->n_samples > 0 && !m->samples_ms)
        return tb_fail(msg, len, TB_EWORKER, "result claims %d samples but carries none",
                       m->n_samples);
    return TB_OK;
}
