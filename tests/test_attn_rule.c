/* test_attn_rule.c - the attention rule (worker/rule_attention.c, docs/method.md "Attention:
 * the rule") against CPU models, no GPU. Inputs drawn as the trials draw them (normal: Q, K, V
 * uniform [-1, 1) or standard normal; large logits: Q = x + 1, K = x + mu_k, scores about 96),
 * rounded to BF16; the reference in double (stored FP32, as the worker's); then a model of a
 * FlashAttention-2 kernel: FP32 scores, online softmax over 64-key blocks (exp2 with the
 * scale folded in), P rounded to BF16 before P V, FP32 accumulation, O rounded once to BF16,
 * LSE = m + log l. The correct model (l summed from FP32 P) must pass every trial; each other
 * model, built from it by one change, must do what the method says:
 *   l-rounded  l summed from the rounded P: O passes; LSE off by up to ~2^-10 (printed)
 *   nomax      no max subtraction: passes normal trials, non-finite on large logits
 *   mask+1     causal mask off by one (sees the next key)
 *   scale      1/D instead of 1/sqrt(D)
 *   lse0, lse- LSE zeros / never written (NaN poison)
 *   gqa        the K/V head h % Hkv instead of h / (H / Hkv): exactly the wrong heads fail
 *   bf16s      scores accumulated in BF16: fails large logits (normal trials: printed)
 *   fp16s      scores accumulated in FP16: fails large logits (normal trials: printed)
 *   skip       the last 64-key block of each row dropped (also judged by a rule with an
 *              absolute term of 2^-8 max|v|, printed: what that looser rule would hide)
 *   p-e4m3     P rounded to E4M3 (FP8) instead of BF16 before P V: refused
 * Plus the rule's own cases: coordinates, reasons, usage errors. TB_ATTN_RULE_SEEDS=N (default
 * 2) runs the correct models on N input sets per shape and kind, for a study of the margins. */
#include "tb_test.h"
#include "common/tb.h"
#include "worker/rule_attention.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double u01(void)
{
    rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
static double draw(int normal)
{
    if (!normal) return 2 * u01() - 1;
    return sqrt(-2 * log(u01())) * cos(6.283185307179586 * u01());
}
static uint16_t f2bf(float x)   /* round to nearest even; NaN kept quiet */
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static float bf2f(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static float bf16r(float x) { return bf2f(f2bf(x)); }
static float e4m3r(float x)   /* round a P value (0 <= x <= 1) to the nearest E4M3 */
{
    if (x <= 0) return 0;
    int e = (int)floorf(log2f(x));
    if (e < -6) e = -6;
    return ldexpf(nearbyintf(ldexpf(x, 3 - e)), e - 3);
}

typedef struct { int b, h, hkv, sq, sk, d, causal; } shape;

static tb_attention mk(shape s)
{
    tb_attention a;
    memset(&a, 0, sizeof a);
    a.batch = s.b; a.heads = s.h; a.heads_kv = s.hkv; a.seq_q = s.sq; a.seq_k = s.sk;
    a.head_dim = s.d; a.causal = (uint32_t)s.causal; a.scale = 1 / sqrt((double)s.d);
    a.q_type = a.k_type = a.v_type = a.o_type = TB_DTYPE_BF16;
    a.acc_type = a.lse_type = TB_DTYPE_F32;
    return a;
}

/* one trial's data: inputs (BF16 bits and their float values), reference, model output */
typedef struct {
    tb_attention a;
    size_t nq, nk, no, nl;
    uint16_t *q, *k, *v, *o;
    float *qf, *kf, *vf, *o_ref, *lse_ref, *lse, *vmax;
    double S;
} trial;

static void trial_free(trial *t)
{
    free(t->q); free(t->k); free(t->v); free(t->o); free(t->qf); free(t->kf); free(t->vf);
    free(t->o_ref); free(t->lse_ref); free(t->lse); free(t->vmax);
}

static void fill(uint16_t *h, float *f, size_t n, int normal, double mu)
{
    for (size_t x = 0; x < n; x++) {
        h[x] = f2bf((float)(draw(normal) + mu));
        f[x] = bf2f(h[x]);
    }
}

static int keys_of(const tb_attention *a, int64_t i)   /* keys row i sees */
{
    return (int)(a->causal ? i + 1 + a->seq_k - a->seq_q : a->seq_k);
}

/* the reference: double throughout, stored FP32 */
static void reference(trial *t)
{
    const tb_attention *a = &t->a;
    const int64_t D = a->head_dim, Sq = a->seq_q, Sk = a->seq_k, g = a->heads / a->heads_kv;
    double *s = malloc(sizeof *s * (size_t)Sk), *acc = malloc(sizeof *acc * (size_t)D);
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t h = 0; h < a->heads; h++) {
            const int64_t hk = h / g;
            const float *K = t->kf + ((b * a->heads_kv + hk) * Sk) * D;
            const float *V = t->vf + ((b * a->heads_kv + hk) * Sk) * D;
            for (int64_t i = 0; i < Sq; i++) {
                const float *q = t->qf + ((b * a->heads + h) * Sq + i) * D;
                const int n = keys_of(a, i);
                double m = -INFINITY, l = 0;
                for (int j = 0; j < n; j++) {
                    double d = 0;
                    for (int64_t c = 0; c < D; c++) d += (double)q[c] * K[j * D + c];
                    s[j] = d * a->scale;
                    if (s[j] > m) m = s[j];
                }
                for (int j = 0; j < n; j++) l += exp(s[j] - m);
                const double lse = m + log(l);
                memset(acc, 0, sizeof *acc * (size_t)D);
                for (int j = 0; j < n; j++) {
                    const double p = exp(s[j] - lse);
                    for (int64_t c = 0; c < D; c++) acc[c] += p * V[j * D + c];
                }
                const size_t row = (size_t)((b * a->heads + h) * Sq + i);
                for (int64_t c = 0; c < D; c++) t->o_ref[row * (size_t)D + (size_t)c] = (float)acc[c];
                t->lse_ref[row] = (float)lse;
            }
        }
    free(s);
    free(acc);
}

static void trial_make(trial *t, shape sh, tb_attn_trial_kind kind, int normal)
{
    memset(t, 0, sizeof *t);
    t->a = mk(sh);
    const tb_attention *a = &t->a;
    t->nq = (size_t)(a->batch * a->heads * a->seq_q * a->head_dim);
    t->nk = (size_t)(a->batch * a->heads_kv * a->seq_k * a->head_dim);
    t->no = t->nq;
    t->nl = (size_t)(a->batch * a->heads * a->seq_q);
    t->q = malloc(2 * t->nq); t->k = malloc(2 * t->nk); t->v = malloc(2 * t->nk);
    t->o = malloc(2 * t->no);
    t->qf = malloc(4 * t->nq); t->kf = malloc(4 * t->nk); t->vf = malloc(4 * t->nk);
    t->o_ref = malloc(4 * t->no); t->lse_ref = malloc(4 * t->nl); t->lse = malloc(4 * t->nl);
    const int big = kind == TB_ATTN_TRIAL_BIG;
    fill(t->q, t->qf, t->nq, normal, big ? TB_ATTN_BIG_MU_Q : 0);
    fill(t->k, t->kf, t->nk, normal, big ? tb_attn_big_mu_k(a) : 0);
    fill(t->v, t->vf, t->nk, normal, 0);
    /* max |v| per (batch, kv head, column): the looser rule the skip member is printed against */
    const size_t cols = (size_t)(a->batch * a->heads_kv * a->head_dim);
    t->vmax = calloc(cols, sizeof *t->vmax);
    for (size_t x = 0; x < t->nk; x++) {
        size_t bh = x / (size_t)(a->seq_k * a->head_dim), c = x % (size_t)a->head_dim;
        float m = fabsf(t->vf[x]);
        if (m > t->vmax[bh * (size_t)a->head_dim + c]) t->vmax[bh * (size_t)a->head_dim + c] = m;
    }
    char msg[TB_MSG_LEN];
    if (tb_attn_rule_qk_bound(a, t->q, t->k, &t->S, msg, sizeof msg)) {
        printf("qk bound: %s\n", msg);
        exit(1);
    }
    reference(t);
}

enum { ACC_F32, ACC_BF16, ACC_F16 };
typedef struct {
    const char *name;
    int l_rounded;   /* l summed from the rounded P */
    int p8;          /* P rounded to E4M3 instead of BF16 */
    int no_max, mask_shift, wrong_scale, lse_mode /* 1 zeros, 2 NaN */, gqa_mod, acc, skip;
} model;

static float dot(const float *q, const float *k, int64_t D, int acc)
{
    float s = 0;
    for (int64_t c = 0; c < D; c++) {
        const float p = q[c] * k[c];   /* exact: two 8-bit significands */
        if (acc == ACC_F32) s += p;
        else if (acc == ACC_BF16) s = bf16r(s + p);
        else s = (float)(_Float16)(s + p);
    }
    return s;
}

/* the kernel model: FlashAttention-2's loop, with md's one change */
static void run_model(trial *t, const model *md)
{
    const tb_attention *a = &t->a;
    const int64_t D = a->head_dim, Sq = a->seq_q, Sk = a->seq_k, g = a->heads / a->heads_kv;
    const float scale = md->wrong_scale ? (float)(1.0 / (double)D) : (float)a->scale;
    const float sl2 = (float)((double)scale * 1.4426950408889634);
    float *acc = malloc(sizeof *acc * (size_t)D), s[64], p[64];
    for (int64_t b = 0; b < a->batch; b++)
        for (int64_t h = 0; h < a->heads; h++) {
            const int64_t hk = md->gqa_mod ? h % a->heads_kv : h / g;
            const float *K = t->kf + ((b * a->heads_kv + hk) * Sk) * D;
            const float *V = t->vf + ((b * a->heads_kv + hk) * Sk) * D;
            for (int64_t i = 0; i < Sq; i++) {
                const float *q = t->qf + ((b * a->heads + h) * Sq + i) * D;
                int n = keys_of(a, i) + (a->causal ? md->mask_shift : 0);
                if (n > Sk) n = (int)Sk;
                if (md->skip && n > 64) n = (n - 1) / 64 * 64;
                float m = -INFINITY, l = 0;
                memset(acc, 0, sizeof *acc * (size_t)D);
                for (int j0 = 0; j0 < n; j0 += 64) {
                    const int nb = n - j0 < 64 ? n - j0 : 64;
                    float bm = -INFINITY, ps = 0;
                    for (int j = 0; j < nb; j++) {
                        s[j] = dot(q, K + (j0 + j) * D, D, md->acc);
                        if (s[j] > bm) bm = s[j];
                    }
                    float alpha = 1;
                    if (md->no_max) {
                        for (int j = 0; j < nb; j++) p[j] = expf(s[j] * scale);
                    } else {
                        const float mn = bm > m ? bm : m, mscaled = mn * sl2;
                        alpha = m == -INFINITY ? 0 : exp2f(m * sl2 - mscaled);
                        for (int j = 0; j < nb; j++) p[j] = exp2f(fmaf(s[j], sl2, -mscaled));
                        m = mn;
                    }
                    for (int j = 0; j < nb; j++) {
                        const float pr = md->p8 ? e4m3r(p[j]) : bf16r(p[j]);
                        ps += md->l_rounded ? pr : p[j];
                        p[j] = pr;
                    }
                    l = alpha * l + ps;
                    for (int64_t c = 0; c < D; c++) acc[c] *= alpha;
                    for (int j = 0; j < nb; j++)
                        for (int64_t c = 0; c < D; c++) acc[c] += p[j] * V[(j0 + j) * D + c];
                }
                const size_t row = (size_t)((b * a->heads + h) * Sq + i);
                for (int64_t c = 0; c < D; c++) t->o[row * (size_t)D + (size_t)c] = f2bf(acc[c] / l);
                float lse = md->no_max ? logf(l) : m * scale + logf(l);
                if (md->lse_mode == 1) lse = 0;
                if (md->lse_mode == 2) lse = NAN;
                t->lse[row] = lse;
            }
        }
    free(acc);
}

/* the skip member under |o - ref| <= 2^-8 max|v| + 2^-7 |ref|: how many elements fail */
static uint64_t vmax_rule_bad(const trial *t)
{
    const tb_attention *a = &t->a;
    const int64_t D = a->head_dim, g = a->heads / a->heads_kv;
    uint64_t bad = 0;
    for (size_t x = 0; x < t->no; x++) {
        const int64_t c = (int64_t)(x % (size_t)D), bh = (int64_t)(x / (size_t)(D * a->seq_q));
        const int64_t b = bh / a->heads, hk = bh % a->heads / g;
        const double vm = t->vmax[(size_t)((b * a->heads_kv + hk) * D + c)], r = t->o_ref[x];
        bad += fabs(bf2f(t->o[x]) - r) > ldexp(vm, -8) + ldexp(fabs(r), -7);
    }
    return bad;
}

static const shape shapes[] = {
    { 1, 4, 4, 64, 256, 64, 0 },      /* multi-head */
    { 1, 4, 2, 128, 128, 128, 1 },    /* GQA 2, causal prefill */
    { 2, 4, 1, 16, 1000, 64, 1 },     /* multi-query, a chunk against a cache, Sk % 64 != 0 */
    { 1, 2, 2, 16, 4096, 128, 0 },    /* long Sk (the correct models and skip only) */
    { 1, 8, 2, 1, 3000, 128, 1 },     /* one decode step, GQA 4 */
    { 1, 2, 1, 8, 2048, 256, 1 },     /* D = 256 (the correct models and skip only) */
    { 1, 8, 2, 32, 512, 64, 1 },      /* GQA 4, causal, Sq < Sk */
};
#define NSHAPES ((int)(sizeof shapes / sizeof shapes[0]))

static const model models[] = {
    { "ok", 0, 0, 0, 0, 0, 0, 0, ACC_F32, 0 },
    { "l-rounded", 1, 0, 0, 0, 0, 0, 0, ACC_F32, 0 },
    { "nomax", 0, 0, 1, 0, 0, 0, 0, ACC_F32, 0 },
    { "mask+1", 0, 0, 0, 1, 0, 0, 0, ACC_F32, 0 },
    { "scale", 0, 0, 0, 0, 1, 0, 0, ACC_F32, 0 },
    { "lse0", 0, 0, 0, 0, 0, 1, 0, ACC_F32, 0 },
    { "lse-", 0, 0, 0, 0, 0, 2, 0, ACC_F32, 0 },
    { "gqa", 0, 0, 0, 0, 0, 0, 1, ACC_F32, 0 },
    { "bf16s", 0, 0, 0, 0, 0, 0, 0, ACC_BF16, 0 },
    { "fp16s", 0, 0, 0, 0, 0, 0, 0, ACC_F16, 0 },
    { "skip", 0, 0, 0, 0, 0, 0, 0, ACC_F32, 1 },
    { "p-e4m3", 0, 1, 0, 0, 0, 0, 0, ACC_F32, 0 },
};
#define NMODELS ((int)(sizeof models / sizeof models[0]))

/* per model and trial kind: sets judged, failed, the rules named, the margins */
typedef struct {
    int sets, failed, applicable;
    char rules[128];
    double o_ratio, head_ratio, lse_ratio;   /* correct: the worst; zoo: the least-failing set's */
    double least, least_frac;                /* zoo: min over failed sets of the max ratio / bad share */
    double lse_atol_min, lse_atol_max;       /* the LSE allowance's absolute term, its range */
    uint64_t elems, vmax_bad, skip_bad;
} tally;

static tally tl[NMODELS][2];

/* Does model mi apply to sh (the mask to causal shapes with a row that has a next key, gqa to
 * 1 < Hkv < H)? The two largest shapes run the correct models and skip only (time). */
static int applies(int mi, shape sh)
{
    const model *md = &models[mi];
    if (mi >= 2 && !md->skip && (sh.sk >= 4096 || sh.d >= 256)) return 0;
    if (md->mask_shift) return sh.causal && sh.sq > 1;
    if (md->gqa_mod) return sh.hkv > 1 && sh.hkv < sh.h;
    return 1;
}

static void judge(trial *t, int mi, int kind, int *case_ok)
{
    const model *md = &models[mi];
    tally *y = &tl[mi][kind];
    tb_attn_verdict v;
    char msg[TB_MSG_LEN];
    run_model(t, md);
    int rc = tb_attn_rule_check(&t->a, t->o_ref, t->lse_ref, t->o, t->lse, t->S, &v, msg, sizeof msg);
    if (rc) { printf("  %s: rule returned %d: %s\n", md->name, rc, msg); *case_ok = 0; return; }
    y->sets++;
    y->elems += v.n;
    if (y->sets == 1 || v.lse_atol < y->lse_atol_min) y->lse_atol_min = v.lse_atol;
    if (v.lse_atol > y->lse_atol_max) y->lse_atol_max = v.lse_atol;
    const double worst = fmax(fmax(v.max_ratio, v.head_max_ratio), v.lse_max_ratio);
    if (v.passed) {
        y->o_ratio = fmax(y->o_ratio, v.max_ratio);
        y->head_ratio = fmax(y->head_ratio, v.head_max_ratio);
        y->lse_ratio = fmax(y->lse_ratio, v.lse_max_ratio);
    } else {
        y->failed++;
        if (!strstr(y->rules, v.rule) && strlen(y->rules) + strlen(v.rule) + 2 < sizeof y->rules) {
            if (y->rules[0]) strcat(y->rules, ",");
            strcat(y->rules, v.rule);
        }
        const double frac = (double)(v.n_bad + v.lse_bad) / (double)(v.n + v.lse_n);
        if (!strstr(v.rule, "nonfinite") && (y->least == 0 || worst < y->least)) y->least = worst;
        if (y->failed == 1 || frac < y->least_frac) y->least_frac = frac;
    }
    if (md->skip) {
        const uint64_t vb = vmax_rule_bad(t);
        y->vmax_bad += vb;
        y->skip_bad += v.n_bad;
        if (t->a.seq_k >= 4096)
            printf("  skip at Sk = %lld (%s): elements failing this rule %llu, a 2^-8 max|v| + "
                   "2^-7 |ref| rule %llu, of %llu\n", (long long)t->a.seq_k,
                   kind ? "large logits" : "normal", (unsigned long long)v.n_bad,
                   (unsigned long long)vb, (unsigned long long)v.n);
    }
    /* what each member must do, asserted here (a failure prints the verdict) */
    int ok = 1;
    const int big = kind == TB_ATTN_TRIAL_BIG;
    const char *r = v.rule;
    switch (mi) {
    case 0: ok = v.passed; break;
    case 1: ok = v.n_bad == 0 && v.heads_norm_bad == 0; break;   /* O passes; LSE: printed */
    case 2: ok = big ? !strcmp(r, "nonfinite") : v.passed; break;
    case 3: ok = !v.passed; break;
    case 4: ok = !v.passed && v.n_bad > 0 && v.lse_bad > 0; break;
    case 5: ok = !strcmp(r, "lse") && v.n_bad == 0 && v.heads_norm_bad == 0; break;
    case 6: ok = !strcmp(r, "lse-nonfinite") && v.n_bad == 0 && v.lse_nonfinite == v.lse_n; break;
    case 7: {
        uint64_t wrong = 0;   /* heads whose K/V head the member gets wrong, every batch */
        for (int64_t h = 0; h < t->a.heads; h++)
            wrong += h % t->a.heads_kv != h / (t->a.heads / t->a.heads_kv);
        ok = !v.passed && v.heads_with_bad == wrong * (uint64_t)t->a.batch;
        break;
    }
    case 8: case 9: ok = big ? !v.passed : 1; break;   /* normal trials: printed */
    case 10: case 11: ok = !v.passed; break;
    }
    if (!ok) {
        printf("  UNEXPECTED %s on %lldx%lldx%lldx%lldx%lld hkv=%lld%s (%s): %s %s\n", md->name,
               (long long)t->a.batch, (long long)t->a.heads, (long long)t->a.seq_q,
               (long long)t->a.seq_k, (long long)t->a.head_dim, (long long)t->a.heads_kv,
               t->a.causal ? " causal" : "", big ? "large logits" : "normal",
               v.passed ? "passed" : v.rule, v.reason);
        *case_ok = 0;
    }
}

static void models_on_trials(void)
{
    /* per kind: x uniform, then x normal, alternating; TB_ATTN_RULE_SEEDS=N for a study */
    const char *env = getenv("TB_ATTN_RULE_SEEDS");
    const int seeds = env && atoi(env) > 0 ? atoi(env) : 2;
    int ok[NMODELS];
    for (int mi = 0; mi < NMODELS; mi++) ok[mi] = 1;
    for (int kind = 0; kind < 2; kind++)
        for (int si = 0; si < NSHAPES; si++)
            for (int seed = 0; seed < seeds; seed++) {
                trial t;
                trial_make(&t, shapes[si], (tb_attn_trial_kind)kind, seed % 2);
                for (int mi = 0; mi < NMODELS; mi++) {
                    if (!applies(mi, shapes[si])) continue;
                    if (mi >= 2 && seed > 0) continue;   /* the zoo: one set a shape and kind */
                    tl[mi][kind].applicable = 1;
                    judge(&t, mi, kind, &ok[mi]);
                }
                trial_free(&t);
            }
    for (int mi = 0; mi < NMODELS; mi++) {
        char id[32], what[64];
        snprintf(id, sizeof id, "attnrule-2.%d", mi + 1);
        snprintf(what, sizeof what, "model %s on both trials", models[mi].name);
        TB_CASE(id, what) {
            for (int kind = 0; kind < 2; kind++) {
                const tally *y = &tl[mi][kind];
                const char *kn = kind ? "large logits" : "normal";
                if (y->failed < y->sets)
                    printf("  %-12s %-12s passed %d of %d sets (%llu elements of O): worst O "
                           "%.3f, head %.3f, LSE %.3f of the allowance\n", models[mi].name, kn,
                           y->sets - y->failed, y->sets, (unsigned long long)y->elems,
                           y->o_ratio, y->head_ratio, y->lse_ratio);
                if (mi == 0)
                    printf("  %-12s %-12s LSE allowance's absolute term %.3g to %.3g\n",
                           models[mi].name, kn, y->lse_atol_min, y->lse_atol_max);
                if (y->failed)
                    printf("  %-12s %-12s failed %d of %d sets (rules %s): least %.3g x the "
                           "allowance (0: non-finite), least share of bad elements %.3g\n",
                           models[mi].name, kn, y->failed, y->sets, y->rules, y->least,
                           y->least_frac);
                if (models[mi].skip)
                    printf("  %-12s %-12s elements failing: this rule %llu, a 2^-8 max|v| + "
                           "2^-7 |ref| rule %llu, of %llu\n", models[mi].name, kn,
                           (unsigned long long)y->skip_bad, (unsigned long long)y->vmax_bad,
                           (unsigned long long)y->elems);
            }
            TB_CHECK(tl[mi][0].applicable && tl[mi][1].applicable);
            TB_CHECK(ok[mi]);
        }
    }
}

/* the rule's mechanics on one small problem: exact output, one element off, NaN, usage */
static void mechanics(void)
{
    trial t;
    const shape sh = { 2, 4, 2, 8, 100, 64, 1 };
    trial_make(&t, sh, TB_ATTN_TRIAL_NORMAL, 1);
    tb_attn_verdict v;
    char msg[TB_MSG_LEN];
    for (size_t x = 0; x < t.no; x++) t.o[x] = f2bf(t.o_ref[x]);
    memcpy(t.lse, t.lse_ref, 4 * t.nl);
    TB_CASE("attnrule-1.1", "the reference rounded to BF16 passes") {
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(v.passed && v.rule[0] == 0 && v.n_bad == 0 && v.max_ratio < 0.5);
        TB_CHECK(v.n == t.no && v.lse_n == t.nl && v.heads == 8);
    }
    /* batch 1 head 2 row 3 col 4: index ((1*4 + 2)*8 + 3)*64 + 4 */
    const size_t at = (size_t)(((1 * 4 + 2) * 8 + 3) * 64 + 4);
    TB_CASE("attnrule-1.2", "one element off: elementwise, its coordinates") {
        t.o[at] = f2bf(t.o_ref[at] + 0.5f);
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(!v.passed && !strcmp(v.rule, "elementwise") && v.n_bad == 1 && v.first_bad == at);
        TB_CHECK(v.heads_with_bad == 1);
        TB_CHECK_STR_CONTAINS(v.reason, "1 elements of O off by more than 0.0156*rms(ref row) + "
                              "0.00781*|ref|, in 1 of 8 heads");
        TB_CHECK_STR_CONTAINS(v.reason, "first at batch 1 head 2 row 3 col 4)");
        printf("  %s\n", v.reason);
    }
    TB_CASE("attnrule-1.3", "a NaN in O and in LSE: nonfinite first") {
        t.o[at] = 0x7FC1;
        t.lse[5] = NAN;
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(!strcmp(v.rule, "nonfinite") && v.n_nonfinite == 1 && v.lse_nonfinite == 1);
        TB_CHECK_STR_CONTAINS(v.reason, "1 of 4096 elements of O NaN/Inf or never written (first "
                              "at batch 1 head 2 row 3 col 4)");
        t.o[at] = f2bf(t.o_ref[at]);
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(!strcmp(v.rule, "lse-nonfinite"));
        TB_CHECK_STR_CONTAINS(v.reason, "(first at batch 0 head 0 row 5)");
        t.lse[5] = t.lse_ref[5] + 0.01f;
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(!strcmp(v.rule, "lse") && v.lse_bad == 1 && v.lse_first_bad == 5);
        printf("  %s\n", v.reason);
        t.lse[5] = t.lse_ref[5];
    }
    TB_CASE("attnrule-1.4", "1 % too large everywhere: within each element's allowance, not a head's") {
        for (size_t x = 0; x < t.no; x++) t.o[x] = f2bf(t.o_ref[x] * 1.01f);
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_OK);
        TB_CHECK(!strcmp(v.rule, "head") && v.n_bad == 0 && v.heads_norm_bad == 8);
        printf("  %s\n", v.reason);
        for (size_t x = 0; x < t.no; x++) t.o[x] = f2bf(t.o_ref[x]);
    }
    TB_CASE("attnrule-1.5", "usage and reference errors") {
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, NULL, t.lse, t.S, &v, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, NAN, &v, msg, sizeof msg) == TB_EUSAGE);
        tb_attention bad = t.a;
        bad.seq_q = bad.seq_k + 1;
        TB_CHECK(tb_attn_rule_check(&bad, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_EUSAGE);
        TB_CHECK_STR_CONTAINS(msg, "causal with seq_q");
        bad = t.a;
        bad.heads_kv = 3;
        TB_CHECK(tb_attn_rule_check(&bad, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_EUSAGE);
        bad = t.a;
        bad.o_type = TB_DTYPE_F16;
        TB_CHECK(tb_attn_rule_check(&bad, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_EUSAGE);
        t.o_ref[at] = NAN;
        TB_CHECK(tb_attn_rule_check(&t.a, t.o_ref, t.lse_ref, t.o, t.lse, t.S, &v, msg, sizeof msg) == TB_EINTERNAL);
        TB_CHECK_STR_CONTAINS(msg, "reference O is not finite at batch 1 head 2 row 3 col 4");
    }
    TB_CASE("attnrule-1.6", "trial kinds and the large-logits parameters") {
        TB_CHECK(tb_attn_trial_kind_of(1) == TB_ATTN_TRIAL_NORMAL);
        TB_CHECK(tb_attn_trial_kind_of(2) == TB_ATTN_TRIAL_BIG);
        TB_CHECK(tb_attn_trial_kind_of(3) == TB_ATTN_TRIAL_NORMAL);
        TB_CHECK(fabs(tb_attn_big_mu_k(&t.a) - 12.0) < 1e-12);   /* 96 / (64 / 8) */
    }
    trial_free(&t);
}

int main(void)
{
    mechanics();
    models_on_trials();
    return tb_test_done();
}
