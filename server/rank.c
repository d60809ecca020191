/* rank.c - ranking one (shape set, GPU model) leaderboard (see rank.h): a GPU model's stored
 * submissions read and parsed, each one's best figure per shape of the set, the ranking, the
 * board's history, and the JSON view of it. A shape counts for a submission only when one of
 * its results on that shape ran, passed validation and was timed; the submission's figure is
 * the geometric mean over the shapes that count, and how many did is shown beside it, so a
 * partial submission cannot pass for a complete one. Each figure's "reproduced by" comes from
 * repro.c over every timed result of the GPU model. A set holds one operation (sets.h) and a
 * result counts on a shape only when its op and every size match (tbs_on), so a board never
 * mixes GEMM and attention; a rate is the result's op's FLOP count over its median. The store
 * is read only through store.h. */
#define _GNU_SOURCE
#include "rank.h"
#include "repro.h"
#include "common/tb.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double tbs_tflops(const tb_sub_result *r)
{
    return tb_sub_result_flops(r) / (r->median_ms * 1e-3) / 1e12;
}

int tbs_on(const tb_sub_result *r, const tbs_shape *sh)
{
    tbs_shape x;
    tb_sub_result_shape(r, &x);
    return tbs_shape_same(&x, sh);
}

typedef struct cap_subs { tbs_subs *out; size_t cap; int oom; } cap_subs;

static int one(void *c_, int64_t id, const char *who, const char *at, const char *doc)
{
    cap_subs *c = c_;
    tbs_subs *o = c->out;
    if (o->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        tbs_sub *nv = realloc(o->v, cap * sizeof *nv);
        if (!nv) { c->oom = 1; return 1; }   /* stops the walk */
        o->v = nv;
        c->cap = cap;
    }
    tbs_sub *s = &o->v[o->n];
    memset(s, 0, sizeof *s);
    char msg[TB_MSG_LEN];
    if (tb_submission_parse(doc, strlen(doc), &s->s, msg, sizeof msg)) return 0;   /* stored, so valid */
    s->id = id;
    snprintf(s->who, sizeof s->who, "%s", who ? who : "");
    snprintf(s->at, sizeof s->at, "%s", at ? at : "");
    o->n++;
    return 0;
}

int tbs_subs_load(tbs_store *st, const char *gpu, tbs_subs *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    cap_subs c = { out, 0, 0 };
    int rc = tbs_submissions_of_gpu(st, gpu, one, &c, msg, len);
    if (!rc && c.oom) { snprintf(msg, len, "out of memory"); rc = -1; }
    if (rc) { tbs_subs_free(out); return rc; }   /* the store's code: TBS_STORE_UNAVAILABLE too */
    return 0;
}

void tbs_subs_free(tbs_subs *subs)
{
    for (size_t i = 0; i < subs->n; i++) tb_submission_free(&subs->v[i].s);
    free(subs->v);
    memset(subs, 0, sizeof *subs);
}

int tbs_subs_repro(const tbs_subs *subs, size_t **rep, char *msg, size_t len)
{
    size_t total = 0, nf = 0;
    for (size_t i = 0; i < subs->n; i++) total += subs->v[i].s.n;
    *rep = malloc((total ? total : 1) * sizeof **rep);
    tbs_figure *f = calloc(total ? total : 1, sizeof *f);   /* calloc: gcc cannot see that only f[0..nf) is read */
    size_t *where = malloc((total ? total : 1) * sizeof *where), *cnt = malloc((total ? total : 1) * sizeof *cnt);
    int rc = *rep && f && where && cnt ? 0 : -1;
    if (rc) snprintf(msg, len, "out of memory");
    for (size_t i = 0, at = 0; !rc && i < subs->n; i++)
        for (size_t j = 0; j < subs->v[i].s.n; j++, at++) {
            const tb_sub_result *r = &subs->v[i].s.r[j];
            (*rep)[at] = SIZE_MAX;
            if (!r->timed) continue;
            f[nf] = (tbs_figure){ subs->v[i].who, r->sha256, r->name, r->m, r->n, r->k, r->batch, r->layouts,
                                  r->dtypes, r->median_ms, r->lo_ms, r->hi_ms, r->token };
            where[nf++] = at;
        }
    if (!rc) rc = tbs_repro_count(f, nf, TBS_REPRO_DRIFT, cnt, msg, len);
    for (size_t i = 0; !rc && i < nf; i++) (*rep)[where[i]] = cnt[i];
    free(f); free(where); free(cnt);
    if (rc) { free(*rep); *rep = NULL; }
    return rc;
}

/* e's cells, geomean, ratio to cublaslt and best variant from its submission; 0 when nothing
 * of it counts on the set, -1 when out of memory */
static int build(tbs_entry *e, const tbs_sub *sub, const size_t *rep, const tbs_set *set)
{
    const tb_submission *s = &sub->s;
    e->sub = sub;
    e->cell = calloc(set->n ? set->n : 1, sizeof *e->cell);
    size_t *wins = calloc(s->n ? s->n : 1, sizeof *wins);
    if (!e->cell || !wins) { free(wins); return -1; }
    double logsum = 0, logratio = 0;
    size_t nratio = 0;
    for (size_t k = 0; k < set->n; k++) {
        tbs_cell *c = &e->cell[k];
        double cublaslt = 0;
        size_t bi = 0;
        for (size_t i = 0; i < s->n; i++) {
            const tb_sub_result *r = &s->r[i];
            if (!r->timed || !tbs_on(r, &set->s[k])) continue;
            double tf = tbs_tflops(r);
            if (!strcmp(r->name, "cublaslt") && tf > cublaslt) cublaslt = tf;
            if (tf > c->tflops) { c->tflops = tf; bi = i; }
        }
        if (!(c->tflops > 0)) { c->tflops = 0; continue; }
        c->have = 1;
        c->r = &s->r[bi];
        c->reproduced_by = rep[bi];
        logsum += log(c->tflops);
        e->counted++;
        wins[bi]++;
        if (cublaslt > 0) { logratio += log(c->tflops / cublaslt); nratio++; }
    }
    if (e->counted) {
        e->geomean = exp(logsum / (double)e->counted);
        e->vs_cublaslt = nratio ? exp(logratio / (double)nratio) : NAN;
        size_t top = 0;
        for (size_t i = 0; i < s->n; i++) if (wins[i] > wins[top]) top = i;
        e->best = s->r[top].name;
    }
    free(wins);
    return e->counted ? 1 : 0;
}

static int by_geomean(const void *a, const void *b)
{
    const tbs_entry *x = a, *y = b;
    return x->geomean > y->geomean ? -1 : x->geomean < y->geomean ? 1 : (x->sub->id > y->sub->id) - (x->sub->id < y->sub->id);
}

static int by_id(const void *a, const void *b)
{
    const tbs_point *x = a, *y = b;
    return (x->e->sub->id > y->e->sub->id) - (x->e->sub->id < y->e->sub->id);
}

int tbs_board_load(tbs_store *st, const tbs_set *set, const char *gpu, tbs_board *out, char *msg, size_t len)
{
    memset(out, 0, sizeof *out);
    out->set = set;
    size_t *rep = NULL;
    int rc = tbs_subs_load(st, gpu, &out->subs, msg, len);
    if (rc) return rc;
    if (tbs_subs_repro(&out->subs, &rep, msg, len)) return -1;
    out->e = calloc(out->subs.n ? out->subs.n : 1, sizeof *out->e);
    if (!out->e) { free(rep); snprintf(msg, len, "out of memory"); return -1; }
    size_t at = 0;
    for (size_t i = 0; i < out->subs.n; at += out->subs.v[i].s.n, i++) {
        int got = build(&out->e[out->n], &out->subs.v[i], rep + at, set);
        if (got < 0) { free(rep); snprintf(msg, len, "out of memory"); out->n++; return -1; }
        if (got) { out->n++; continue; }
        free(out->e[out->n].cell);
        memset(&out->e[out->n], 0, sizeof out->e[out->n]);
    }
    free(rep);
    qsort(out->e, out->n, sizeof *out->e, by_geomean);
    out->hist = calloc(out->n ? out->n : 1, sizeof *out->hist);
    if (!out->hist) { snprintf(msg, len, "out of memory"); return -1; }
    for (size_t i = 0; i < out->n; i++) out->hist[i].e = &out->e[i];
    qsort(out->hist, out->n, sizeof *out->hist, by_id);
    for (size_t i = 0; i < out->n; i++)
        out->hist[i].best = fmax(out->hist[i].e->geomean, i ? out->hist[i - 1].best : 0);
    out->nhist = out->n;
    return 0;
}

void tbs_board_free(tbs_board *b)
{
    for (size_t i = 0; b->e && i < b->n; i++) free(b->e[i].cell);
    free(b->e);
    free(b->hist);
    tbs_subs_free(&b->subs);
    memset(b, 0, sizeof *b);
}

const tbs_entry *tbs_board_best(const tbs_board *b, size_t k)
{
    const tbs_entry *best = NULL;
    for (size_t i = 0; i < b->n; i++) {
        const tbs_cell *c = &b->e[i].cell[k];
        if (c->have && (!best || c->tflops > best->cell[k].tflops ||
                        (c->tflops == best->cell[k].tflops && b->e[i].sub->id < best->sub->id)))
            best = &b->e[i];
    }
    return best;
}

int tbs_rank_json(tbs_store *st, const tbs_set *set, const char *gpu, char **json, char *msg, size_t len)
{
    *json = NULL;
    tbs_board b;
    int rc = tbs_board_load(st, set, gpu, &b, msg, len);
    if (rc) { tbs_board_free(&b); return rc; }
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < b.n; i++) {
        const tbs_entry *e = &b.e[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "rank", (double)(i + 1));
        cJSON_AddStringToObject(o, "op", tbs_set_op_name(set));
        cJSON_AddNumberToObject(o, "submission", (double)e->sub->id);
        cJSON_AddStringToObject(o, "submitter", e->sub->who);
        cJSON_AddStringToObject(o, "submitted_at", e->sub->at);
        cJSON_AddNumberToObject(o, "geomean_tflops", e->geomean);
        cJSON_AddNumberToObject(o, "shapes_counted", (double)e->counted);
        cJSON_AddNumberToObject(o, "shapes_in_set", (double)set->n);
        cJSON_AddStringToObject(o, "best_variant", e->best);
        if (isfinite(e->vs_cublaslt)) cJSON_AddNumberToObject(o, "vs_cublaslt", e->vs_cublaslt);
        else cJSON_AddNullToObject(o, "vs_cublaslt");
        cJSON *shapes = cJSON_AddArrayToObject(o, "shapes");
        for (size_t k = 0; k < set->n; k++) {
            const tbs_cell *c = &e->cell[k];
            if (!c->have) continue;
            cJSON *x = cJSON_CreateObject();
            if (set->op == TB_OP_ATTENTION_FWD) {   /* the token and its fields */
                const tb_attn_shape *at = &c->r->attn;
                cJSON_AddStringToObject(x, "shape", c->r->token);
                cJSON_AddNumberToObject(x, "batch", (double)at->batch);
                cJSON_AddNumberToObject(x, "heads", (double)at->heads);
                cJSON_AddNumberToObject(x, "heads_kv", (double)at->heads_kv);
                cJSON_AddNumberToObject(x, "seq_q", (double)at->seq_q);
                cJSON_AddNumberToObject(x, "seq_k", (double)at->seq_k);
                cJSON_AddNumberToObject(x, "head_dim", (double)at->head_dim);
                cJSON_AddBoolToObject(x, "causal", at->causal != 0);
            } else {
                cJSON_AddNumberToObject(x, "m", (double)c->r->m);
                cJSON_AddNumberToObject(x, "n", (double)c->r->n);
                cJSON_AddNumberToObject(x, "k", (double)c->r->k);
                cJSON_AddNumberToObject(x, "batch", (double)c->r->batch);
            }
            cJSON_AddNumberToObject(x, "tflops", c->tflops);
            cJSON_AddStringToObject(x, "variant", c->r->name);
            cJSON_AddNumberToObject(x, "reproduced_by", (double)c->reproduced_by);
            cJSON_AddItemToArray(shapes, x);
        }
        cJSON_AddItemToArray(a, o);
    }
    tbs_board_free(&b);
    *json = cJSON_PrintUnformatted(a);
    cJSON_Delete(a);
    if (!*json) { snprintf(msg, len, "out of memory"); return -1; }
    return 0;
}

int tbs_rank_counts(tbs_store *st, const tbs_sets *sets, const char *gpu, size_t *counts, char *msg, size_t len)
{
    tbs_subs subs;
    int rc = tbs_subs_load(st, gpu, &subs, msg, len);
    if (rc) return rc;
    for (size_t k = 0; k < sets->n; k++) {
        counts[k] = 0;
        for (size_t i = 0; i < subs.n; i++) {
            int hit = 0;
            for (size_t j = 0; !hit && j < subs.v[i].s.n; j++)
                for (size_t q = 0; !hit && q < sets->v[k].n; q++)
                    hit = subs.v[i].s.r[j].timed && tbs_on(&subs.v[i].s.r[j], &sets->v[k].s[q]);
            counts[k] += (size_t)hit;
        }
    }
    tbs_subs_free(&subs);
    return 0;
}
