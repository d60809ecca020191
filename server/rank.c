/* rank.c - ranking one (shape set, GPU model) leaderboard (see rank.h). A shape counts for a
 * submission only when one of its results on that shape ran, passed validation and was timed;
 * the submission's figure is the geometric mean over the shapes that count, and how many did
 * is shown beside it, so a partial submission cannot pass for a complete one. */
#define _GNU_SOURCE
#include "rank.h"
#include "format/submission_parse.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    int64_t id;
    char who[64], at[24], best[144];
    double geomean;
    size_t counted;
} entry;

typedef struct ctx { const tbs_set *set; entry *e; size_t n; } ctx;

static int one(void *c_, int64_t id, const char *who, const char *at, const char *doc)
{
    ctx *c = c_;
    tb_submission s;
    char msg[TB_MSG_LEN];
    if (tb_submission_parse(doc, strlen(doc), &s, msg, sizeof msg)) return 0;   /* stored, so valid */
    double logsum = 0;
    size_t counted = 0;
    int *wins = calloc(s.n ? s.n : 1, sizeof *wins);
    for (size_t k = 0; wins && k < c->set->n; k++) {
        const tbs_shape *sh = &c->set->s[k];
        double best = 0;
        size_t bi = 0;
        for (size_t i = 0; i < s.n; i++) {
            const tb_sub_result *r = &s.r[i];
            if (!r->timed || r->m != sh->m || r->n != sh->n || r->k != sh->k || r->batch != sh->batch) continue;
            double tf = 2.0 * (double)r->m * (double)r->n * (double)r->k * (double)r->batch / (r->median_ms * 1e-3) / 1e12;
            if (tf > best) { best = tf; bi = i; }
        }
        if (best > 0) { logsum += log(best); counted++; wins[bi]++; }
    }
    if (wins && counted) {
        entry *ne = realloc(c->e, (c->n + 1) * sizeof *ne);
        if (ne) {
            c->e = ne;
            entry *e = &c->e[c->n++];
            memset(e, 0, sizeof *e);
            e->id = id;
            snprintf(e->who, sizeof e->who, "%s", who ? who : "");
            snprintf(e->at, sizeof e->at, "%s", at ? at : "");
            e->geomean = exp(logsum / (double)counted);
            e->counted = counted;
            size_t top = 0;
            for (size_t i = 0; i < s.n; i++) if (wins[i] > wins[top]) top = i;
            snprintf(e->best, sizeof e->best, "%s", s.r[top].name);
        }
    }
    free(wins);
    tb_submission_free(&s);
    return 0;
}

static int by_geomean(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    return x->geomean > y->geomean ? -1 : x->geomean < y->geomean ? 1 : (x->id > y->id) - (x->id < y->id);
}

int tbs_rank_json(tbs_store *st, const tbs_set *set, const char *gpu, char **json, char *msg, size_t len)
{
    *json = NULL;
    ctx c = { set, NULL, 0 };
    if (tbs_submissions_of_gpu(st, gpu, one, &c, msg, len)) { free(c.e); return -1; }
    qsort(c.e, c.n, sizeof *c.e, by_geomean);
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < c.n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", (double)(i + 1));
        cJSON_AddNumberToObject(o, "submission", (double)c.e[i].id);
        cJSON_AddStringToObject(o, "submitter", c.e[i].who);
        cJSON_AddStringToObject(o, "submitted_at", c.e[i].at);
        cJSON_AddNumberToObject(o, "geomean_tflops", c.e[i].geomean);
        cJSON_AddNumberToObject(o, "shapes_counted", (double)c.e[i].counted);
        cJSON_AddNumberToObject(o, "shapes_in_set", (double)set->n);
        cJSON_AddStringToObject(o, "best_variant", c.e[i].best);
        cJSON_AddItemToArray(a, o);
    }
    free(c.e);
    *json = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    if (!*json) { snprintf(msg, len, "out of memory"); return -1; }
    return 0;
}
