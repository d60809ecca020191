/* sweep_cli.c - sweep_cli.h: the stopping spec made of `tilebench sweep`'s flags, and its
 * options to and from the JSON stored with the run (for --resume). */
#define _GNU_SOURCE
#include "cli/sweep_cli.h"
#include "common/tb.h"
#include "common/wire.h"
#include "driver/shard.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_sweep_cli_stop_spec(sweep_cli *c)
{
    char *s = c->o.stop;
    size_t n = sizeof c->o.stop;
    snprintf(s, n, "%s", c->stop_user[0] ? c->stop_user : "stdrel");
    int stdrel = strncmp(s, "stdrel", 6) == 0;
    struct { const char *key; double v; int only_stdrel; } add[] = {
        { "max-noise", c->o.target_rse, 1 }, { "min-samples", c->o.min_samples, 1 },
        { "max-time", c->o.max_time_s, 0 }, { "max-samples", c->o.max_samples, 0 } };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) {
        char k[32];
        snprintf(k, sizeof k, "%s=", add[i].key);
        if (strstr(s, k) || (add[i].only_stdrel && !stdrel)) continue;
        size_t l = strlen(s);
        snprintf(s + l, n - l, "%c%s=%g", strchr(s, ':') ? ',' : ':', add[i].key, add[i].v);
    }
}

char *tb_sweep_cli_options_json(const sweep_cli *c, char **vp, size_t nvp)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "variants", cJSON_CreateStringArray((const char *const *)vp, (int)nvp));
    cJSON_AddItemToObject(o, "filter", cJSON_CreateStringArray((const char *const *)c->inc, (int)c->ninc));
    cJSON_AddItemToObject(o, "exclude", cJSON_CreateStringArray((const char *const *)c->exc, (int)c->nexc));
    cJSON_AddItemToObject(o, "shapes", cJSON_CreateStringArray((const char *const *)c->shp, (int)c->nshp));
    const tb_sweep_opts *s = &c->o;
    cJSON_AddNumberToObject(o, "timeout_s", s->timeout_s);
    cJSON_AddNumberToObject(o, "watchdog_factor", s->watchdog_factor);
    cJSON_AddNumberToObject(o, "max_time_s", s->max_time_s);
    cJSON_AddNumberToObject(o, "target_rse", s->target_rse);
    cJSON_AddNumberToObject(o, "min_samples", s->min_samples);
    cJSON_AddNumberToObject(o, "max_samples", s->max_samples);
    cJSON_AddNumberToObject(o, "warmup", s->warmup);
    cJSON_AddNumberToObject(o, "trials", s->trials);
    cJSON_AddNumberToObject(o, "seed", (double)s->seed);
    cJSON_AddStringToObject(o, "init", s->init);
    cJSON_AddNumberToObject(o, "alpha", s->alpha);
    cJSON_AddNumberToObject(o, "beta", s->beta);
    cJSON_AddNumberToObject(o, "device", s->device);
    cJSON_AddStringToObject(o, "device_uuid", s->device_uuid);
    cJSON_AddStringToObject(o, "layout", s->layout);
    cJSON_AddStringToObject(o, "dtype", s->dtype);
    cJSON_AddStringToObject(o, "sanitize", s->sanitize);
    cJSON_AddStringToObject(o, "stop", s->stop);
    cJSON_AddStringToObject(o, "method", s->method);
    cJSON_AddStringToObject(o, "l2", s->l2);
    cJSON_AddNumberToObject(o, "profile", s->profile);
    cJSON_AddNumberToObject(o, "no_energy", s->no_energy);
    cJSON_AddNumberToObject(o, "pace", s->pace);
    cJSON_AddStringToObject(o, "metrics", s->metrics);
    if (s->keep_worker) cJSON_AddNumberToObject(o, "keep_worker", 1);
    cJSON_AddNumberToObject(o, "pad", s->pad);
    cJSON_AddStringToObject(o, "attn_layout", s->attn_layout);
    cJSON_AddNumberToObject(o, "softmax_scale", s->softmax_scale);
    if (c->devices[0]) cJSON_AddStringToObject(o, "devices", c->devices);
    if (c->shard_n) {   /* a resumed shard measures its own shapes, never the whole set */
        char sh[32];
        snprintf(sh, sizeof sh, "%d/%d", c->shard_i, c->shard_n);
        cJSON_AddStringToObject(o, "shard", sh);
    }
    char *r = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return r;
}

static int strv_from_json(const cJSON *a, char **out, size_t *n)
{
    *n = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, a) if (cJSON_IsString(it) && *n < TB_CLI_MAX_REPEAT) out[(*n)++] = strdup(it->valuestring);
    return 0;
}

int tb_sweep_cli_options_from_json(const char *js, sweep_cli *c)
{
    cJSON *o = cJSON_Parse(js);
    if (!o) return -1;
    strv_from_json(cJSON_GetObjectItem(o, "variants"), c->vp, &c->nvp);
    strv_from_json(cJSON_GetObjectItem(o, "filter"), c->inc, &c->ninc);
    strv_from_json(cJSON_GetObjectItem(o, "exclude"), c->exc, &c->nexc);
    strv_from_json(cJSON_GetObjectItem(o, "shapes"), c->shp, &c->nshp);
    tb_sweep_opts *s = &c->o;
    s->timeout_s = tb_json_num(o, "timeout_s", s->timeout_s);
    s->watchdog_factor = tb_json_num(o, "watchdog_factor", s->watchdog_factor);
    s->max_time_s = tb_json_num(o, "max_time_s", s->max_time_s);
    s->target_rse = tb_json_num(o, "target_rse", s->target_rse);
    s->min_samples = (int)tb_json_num(o, "min_samples", s->min_samples);
    s->max_samples = (int)tb_json_num(o, "max_samples", s->max_samples);
    s->warmup = (int)tb_json_num(o, "warmup", s->warmup);
    s->trials = (int)tb_json_num(o, "trials", s->trials);
    s->seed = (uint64_t)tb_json_num(o, "seed", (double)s->seed);
    snprintf(s->init, sizeof s->init, "%s", tb_json_str(o, "init", s->init));
    s->alpha = tb_json_num(o, "alpha", s->alpha);
    s->beta = tb_json_num(o, "beta", s->beta);
    s->device = (int)tb_json_num(o, "device", s->device);
    snprintf(s->device_uuid, sizeof s->device_uuid, "%s", tb_json_str(o, "device_uuid", ""));
    snprintf(s->layout, sizeof s->layout, "%s", tb_json_str(o, "layout", s->layout));
    snprintf(s->dtype, sizeof s->dtype, "%s", tb_json_str(o, "dtype", "bf16"));
    s->pad = (int)tb_json_num(o, "pad", s->pad);
    snprintf(s->attn_layout, sizeof s->attn_layout, "%s", tb_json_str(o, "attn_layout", "bhsd"));
    s->softmax_scale = tb_json_num(o, "softmax_scale", 0);
    snprintf(s->sanitize, sizeof s->sanitize, "%s", tb_json_str(o, "sanitize", ""));
    snprintf(s->stop, sizeof s->stop, "%s", tb_json_str(o, "stop", "stdrel"));
    snprintf(s->method, sizeof s->method, "%s", tb_json_str(o, "method", "auto"));
    snprintf(s->l2, sizeof s->l2, "%s", tb_json_str(o, "l2", "cold"));
    s->profile = (int)tb_json_num(o, "profile", 0);
    s->no_energy = (int)tb_json_num(o, "no_energy", 0);
    s->pace = tb_json_num(o, "pace", 0);
    s->keep_worker = (int)tb_json_num(o, "keep_worker", 0);
    snprintf(s->metrics, sizeof s->metrics, "%s", tb_json_str(o, "metrics", ""));
    snprintf(c->devices, sizeof c->devices, "%s", tb_json_str(o, "devices", ""));
    const char *sh = tb_json_str(o, "shard", "");
    char m2[TB_MSG_LEN];
    int bad = sh[0] && tb_shard_parse(sh, &c->shard_i, &c->shard_n, m2, sizeof m2) != TB_OK;
    cJSON_Delete(o);
    return bad ? -1 : 0;
}
