/* cmd_gate.c - tilebench gate: fail a pull request that makes a kernel slower or wrong.
 *
 * Same-run A/B (the default): the base's and the head's libraries are loaded in one sweep under
 * the namespaces base: and head:, so every shape's samples of base:X and head:X interleave in
 * one worker (A B A B ...), and the GPU's drift between two runs never enters the verdict.
 * Stored baseline (--baseline FILE): the head and a control (cublaslt) are measured now and
 * each variant's time to the control compared with the file's. The suspects are measured again
 * in a second interleaved pass, whose verdict decides (on by default; --no-confirm: the first
 * pass decides). Reports: compare_out.h. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "cli/verdicts.h"
#include "common/op.h"
#include "common/tb.h"
#include "driver/sweep.h"
#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GATE_DEFAULT_DB "results/gate.db"
#define GATE_MAX_PATHS TB_CLI_MAX_REPEAT

static void help(void)
{
    printf(
"usage: tilebench gate --base PATH --head PATH [options]\n"
"       tilebench gate --baseline FILE --head PATH [options]\n"
"\n"
"Measure the base's and the head's variants in one interleaved sweep (each variant twice, as\n"
"base:NAME and head:NAME, their samples alternating on every shape) and fail when a head\n"
"variant is slower than its base with the whole 95 %% interval of the ratio of medians beyond\n"
"the threshold, or invalid where its base was valid. Variants on one side only are reported\n"
"as new or removed, never gated. PATH is a variant .so or a directory of them (repeatable).\n"
"With --baseline, the head and a control are measured now and each variant's time to the\n"
"control is compared with the baseline's (tilebench baseline save). Needs an NVIDIA GPU.\n"
"\n"
"  --base PATH        the target branch's variants\n"
"  --head PATH        the pull request's variants (required)\n"
"  --baseline FILE    compare with a stored baseline instead of a base build\n"
"  --control NAME     with --baseline: the variant that cancels the GPU's drift (default\n"
"                     cublaslt for GEMM shapes, attn_fa2_bf16_128x64_s2_w4 for attention\n"
"                     shapes; taken\n"
"                     from the head, else from the shipped variants)\n"
"  --allow-env-mismatch  compare with a baseline from another GPU, driver, CUDA, cuBLAS or\n"
"                     power limit (refused by default: its figures do not compare)\n"
"  --shapes SPEC      shapes as for sweep, GEMM or attention (default: the set 'gate',\n"
"                     4096^3, 8192^3 and a Llama-3 8B MLP projection)\n"
"  --filter GLOB      keep variants whose name matches (repeatable)\n"
"  --exclude GLOB     drop variants whose name matches (repeatable)\n"
"  --threshold PCT    fail only beyond this many percent (default 2)\n"
"  --confirm          measure the suspects again in a second interleaved pass before deciding\n"
"                     (the default: a first pass among many variants cried wolf in 3 of 10\n"
"                     same-code gates on an H100, docs/perf.md)\n"
"  --no-confirm       let the first pass decide (cheaper; more false alarms)\n"
"  --max-time S       timing budget per variant and shape (default 0.5)\n"
"  --energy           also measure joules per launch (off by default in a gate)\n"
"  --device N|UUID    CUDA device (default 0)\n"
"  --db FILE          where the gate's runs are stored (default " GATE_DEFAULT_DB ")\n"
"  --format F         standard output as table (default), markdown, junit or json\n"
"  --markdown FILE    also write Markdown for a pull-request comment ('-' stdout)\n"
"  --junit FILE       also write JUnit XML (one testcase per variant x shape)\n"
"  --json FILE        also write JSON\n"
"  --chart FILE.svg   also draw the before/after chart (matplotlib), linked from the Markdown\n"
"  --no-progress      plain lines, no bar   --quiet  no line per measurement\n"
"\n"
"Markdown is appended to $GITHUB_STEP_SUMMARY when it is set.\n"
"exit status: 0 pass, 1 a regression or a newly invalid variant, 2 usage or environment\n"
"error (nothing measured), 130 interrupted.\n"
"\n"
"examples:\n"
"  tilebench gate --base base/lib/tilebench/variants --head head/lib/tilebench/variants\n"
"  tilebench gate --base main.so --head pr.so --shapes 4096x4096x4096 --junit gate.xml\n"
"  tilebench gate --base base.so --head pr.so --markdown out/gate.md --chart out/gate.svg\n"
"  tilebench gate --baseline baseline.json --head build/lib/tilebench/variants\n");
}

typedef struct gate_cli {
    char *base[GATE_MAX_PATHS], *head[GATE_MAX_PATHS], *inc[GATE_MAX_PATHS + 1],
         *exc[GATE_MAX_PATHS], *shp[GATE_MAX_PATHS];
    size_t nbase, nhead, ninc, nexc, nshp;
    const char *baseline, *db;
    int confirm, allow_env, progress, quiet;
    tb_compare_opts co;
    tb_cli_reports rep;
    tb_sweep_opts o;
} gate_cli;

static int push(char **v, size_t *n, const char *s, const char *flag)
{
    return tb_cli_push(v, n, GATE_MAX_PATHS, (char *)s, flag);
}

static int parse(int argc, char **argv, gate_cli *g)
{
    enum { O_BASE = 256, O_HEAD, O_BASELINE, O_CTL, O_ALLOW, O_SHAPES, O_FILTER, O_EXCLUDE,
           O_THR, O_CONFIRM, O_NOCONFIRM, O_MAXTIME, O_ENERGY, O_DEVICE, O_DB, O_FMT, O_MD, O_JUNIT, O_JSON,
           O_CHART, O_NOPROG, O_QUIET };
    static const struct option opts[] = {
        { "base", required_argument, 0, O_BASE }, { "head", required_argument, 0, O_HEAD },
        { "baseline", required_argument, 0, O_BASELINE }, { "control", required_argument, 0, O_CTL },
        { "allow-env-mismatch", no_argument, 0, O_ALLOW }, { "shapes", required_argument, 0, O_SHAPES },
        { "filter", required_argument, 0, O_FILTER }, { "exclude", required_argument, 0, O_EXCLUDE },
        { "threshold", required_argument, 0, O_THR }, { "confirm", no_argument, 0, O_CONFIRM },
        { "no-confirm", no_argument, 0, O_NOCONFIRM },
        { "max-time", required_argument, 0, O_MAXTIME }, { "energy", no_argument, 0, O_ENERGY },
        { "device", required_argument, 0, O_DEVICE }, { "db", required_argument, 0, O_DB },
        { "format", required_argument, 0, O_FMT }, { "markdown", required_argument, 0, O_MD },
        { "junit", required_argument, 0, O_JUNIT }, { "json", required_argument, 0, O_JSON },
        { "chart", required_argument, 0, O_CHART }, { "no-progress", no_argument, 0, O_NOPROG }, { "quiet", no_argument, 0, O_QUIET },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        int rc = 0;
        long long ll;
        switch (c) {
        case O_BASE: rc = push(g->base, &g->nbase, optarg, "--base"); break;
        case O_HEAD: rc = push(g->head, &g->nhead, optarg, "--head"); break;
        case O_BASELINE: g->baseline = optarg; break;
        case O_CTL:
            if (!*optarg || strlen(optarg) >= sizeof g->co.control)
                return tb_cli_error("invalid value '%s' for --control (a variant name)", optarg);
            snprintf(g->co.control, sizeof g->co.control, "%s", optarg);
            break;
        case O_ALLOW: g->allow_env = 1; break;
        case O_SHAPES: rc = push(g->shp, &g->nshp, optarg, "--shapes"); break;
        case O_FILTER: rc = push(g->inc, &g->ninc, optarg, "--filter"); break;
        case O_EXCLUDE: rc = push(g->exc, &g->nexc, optarg, "--exclude"); break;
        case O_THR: if (tb_cli_threshold(optarg, &g->co.threshold)) return 2; break;
        case O_CONFIRM: g->confirm = 1; break;
        case O_NOCONFIRM: g->confirm = 0; break;
        case O_MAXTIME: if (tb_cli_double("--max-time", optarg, 0.01, 60, &g->o.max_time_s)) return 2; break;
        case O_ENERGY: g->o.no_energy = 0; break;
        case O_DEVICE:
            if (!strncmp(optarg, "GPU-", 4)) snprintf(g->o.device_uuid, sizeof g->o.device_uuid, "%s", optarg);
            else if (tb_cli_int("--device", optarg, 0, 1023, &ll)) return 2;
            else g->o.device = (int)ll;
            break;
        case O_DB: g->db = optarg; break;
        case O_FMT: g->rep.format = optarg; break;
        case O_MD: g->rep.markdown = optarg; break;
        case O_JUNIT: g->rep.junit = optarg; break;
        case O_JSON: g->rep.json = optarg; break;
        case O_CHART: g->rep.chart = optarg; break;
        case O_NOPROG: g->progress = 0; break;
        case O_QUIET: g->quiet = 1; break;
        case 'h': help(); return -1;
        default: return tb_cli_bad_option("gate", argv, optind, optopt);
        }
        if (rc) return rc;
    }
    if (optind < argc) return tb_cli_error("unexpected argument '%s' for 'gate'", argv[optind]);
    if (!g->nhead) return tb_cli_error("gate needs --head PATH (the pull request's variants)");
    if (!g->nbase == !g->baseline)
        return tb_cli_error("gate needs either --base PATH or --baseline FILE (not both)");
    return tb_cli_reports_check(&g->rep);
}

/* Move src's entries to the end of dst. */
static int side_append(tb_side *dst, tb_side *src)
{
    tb_side_entry *e = realloc(dst->e, (dst->n + src->n + 1) * sizeof *e);
    if (!e) return -1;
    memcpy(e + dst->n, src->e, src->n * sizeof *e);
    dst->e = e;
    dst->n += src->n;
    free(src->e);
    src->e = NULL;
    src->n = 0;
    return 0;
}

/* The sides of a gate run: (base, head) from its namespaces, or (baseline, head + control). */
static int sides(const gate_cli *g, tb_store *st, int64_t run, tb_side *base, tb_side *head)
{
    char msg[TB_MSG_LEN];
    const char *db = g->db;
    if (tb_side_from_run(st, run, "head", db, head, msg, sizeof msg)) return tb_cli_error("%s", msg);
    if (g->baseline) {
        tb_side ctl;
        if (tb_side_from_run(st, run, "control", db, &ctl, msg, sizeof msg)) {
            tb_side_free(head);
            return tb_cli_error("%s", msg);
        }
        if (side_append(head, &ctl)) { tb_side_free(&ctl); tb_side_free(head); return tb_cli_error("out of memory"); }
        tb_side_free(&ctl);
        if (tb_side_from_baseline(g->baseline, base, msg, sizeof msg)) {
            tb_side_free(head);
            return tb_cli_error("%s", msg);
        }
        return 0;
    }
    if (tb_side_from_run(st, run, "base", db, base, msg, sizeof msg)) {
        tb_side_free(head);
        return tb_cli_error("%s", msg);
    }
    return 0;
}

/* One measured pass: a new run of cat x shapes. 0, or the exit code (printed). */
static int measure(const gate_cli *g, int argc, char **argv, const tb_paths *paths, tb_store *st,
                   tb_catalog *cat, const tb_shape_list *shapes, const tb_environment *env,
                   const char *pass, int64_t *run, double *secs)
{
    char msg[TB_MSG_LEN];
    cJSON *oj = cJSON_CreateObject();
    cJSON_AddStringToObject(oj, "command", "gate");
    cJSON_AddStringToObject(oj, "pass", pass);
    cJSON_AddNumberToObject(oj, "threshold", g->co.threshold);
    cJSON_AddStringToObject(oj, "stop", g->o.stop);
    char *ojs = cJSON_PrintUnformatted(oj);
    cJSON_Delete(oj);
    int rc = tb_cli_run_begin(st, argc, argv, ojs, cat, run, msg, sizeof msg);
    cJSON_free(ojs);
    if (rc) return tb_cli_error("%s", msg);
    rc = tb_cli_run_measure(st, *run, paths, &g->o, cat, shapes, NULL, g->progress, g->quiet,
                            env->gpu_name, secs, NULL, msg, sizeof msg);
    if (rc == TB_EINTR) {
        tb_store_run_end(st, *run, "interrupted", msg, sizeof msg);
        fprintf(stderr, "tilebench: gate interrupted\n");
        return TB_EXIT_INTR;
    }
    if (rc) {
        char m2[TB_MSG_LEN];
        tb_store_run_end(st, *run, "failed", m2, sizeof m2);
        tb_cli_error("%s", msg);
        return tb_cli_exit_for(rc);
    }
    if ((rc = tb_store_run_end(st, *run, "complete", msg, sizeof msg))) {
        tb_cli_error("%s", msg);
        return tb_cli_exit_for(rc);
    }
    return 0;
}

/* A suspect, for --confirm: a row called slower, or one left unchanged only because its
 * interval straddles the threshold while its ratio lies beyond it (a first pass among many
 * variants can be too wide to resolve a real slowdown: docs/perf.md, seventh session). */
static int suspect(const tb_comparison *cmp, const tb_compare_row *x)
{
    return x->change == TB_CHANGE_SLOWER ||
           (x->change == TB_CHANGE_UNCHANGED && x->ratio > 1.0 + cmp->o.threshold);
}

/* --confirm: the suspects measured again, alone, in a second pass; its verdict replaces the
 * first pass's for them. */
static int confirm(const gate_cli *g, int argc, char **argv, const tb_paths *paths, tb_store *st,
                   const tb_catalog *cat, const tb_shape_list *shapes, const tb_environment *env,
                   tb_comparison *cmp, double *secs, int64_t *run2)
{
    tb_catalog sub = *cat;
    sub.v = malloc((cat->n + 1) * sizeof *sub.v);
    sub.refusals = NULL;
    sub.n_refusals = 0;
    sub.n = 0;
    tb_shape_list sh = { 0 };
    sh.v = malloc((shapes->n + 1) * sizeof *sh.v);
    if (!sub.v || !sh.v) { free(sub.v); free(sh.v); return tb_cli_error("out of memory"); }
    for (size_t i = 0; i < cat->n; i++) {
        const char *bare = tb_catalog_bare_name(&cat->v[i]);
        /* the control, wherever it came from (head: or control:), is measured again too */
        int want = !strcmp(cat->v[i].ns, "control") || (g->co.control[0] && !strcmp(bare, g->co.control));
        for (size_t r = 0; r < cmp->n && !want; r++)
            want = suspect(cmp, &cmp->r[r]) && !strcmp(cmp->r[r].variant, bare);
        if (want) sub.v[sub.n++] = cat->v[i];
    }
    for (size_t s = 0; s < shapes->n; s++) {
        tb_problem_info p;
        char key[96];
        tb_sweep_problem(&shapes->v[s], &g->o, &p);
        tb_side_shape_key(&p, key, sizeof key);
        int want = 0;
        for (size_t r = 0; r < cmp->n && !want; r++)
            want = suspect(cmp, &cmp->r[r]) && !strcmp(cmp->r[r].shape, key);
        if (want) sh.v[sh.n++] = shapes->v[s];
    }
    int rc = measure(g, argc, argv, paths, st, &sub, &sh, env, "confirm", run2, secs);
    free(sub.v);
    free(sh.v);
    if (rc) return rc;
    tb_side b2, h2;
    if ((rc = sides(g, st, *run2, &b2, &h2))) return rc;
    tb_comparison c2;
    char msg[TB_MSG_LEN];
    rc = tb_compare(&b2, &h2, &g->co, &c2, msg, sizeof msg);
    tb_side_free(&b2);
    tb_side_free(&h2);
    if (rc) return tb_cli_error("%s", msg);
    for (size_t r = 0; r < cmp->n; r++) {
        tb_compare_row *x = &cmp->r[r];
        if (!suspect(cmp, x)) continue;
        const int was_slower = x->change == TB_CHANGE_SLOWER;
        const tb_compare_row *y = NULL;
        for (size_t k = 0; k < c2.n && !y; k++)
            if (!strcmp(c2.r[k].variant, x->variant) && !strcmp(c2.r[k].shape, x->shape)) y = &c2.r[k];
        char first[96];
        snprintf(first, sizeof first, "first pass %.4f [%.4f, %.4f]", x->ratio, x->lo, x->hi);
        cmp->count[x->change]--;
        if (tb_change_fails(x->change)) cmp->failures--;
        if (y && y->change == TB_CHANGE_SLOWER) {
            /* the second pass's own setups: if its two copies chose differently, say so */
            const char *setup = strstr(y->note, "setup chose differently");
            snprintf(x->note, sizeof x->note, "%s in run %lld (%s)%s%.200s", was_slower ? "confirmed" :
                     "undecided in the first pass, slower", (long long)*run2, first,
                     setup ? "; there " : "", setup ? setup : "");
            x->ratio = y->ratio; x->lo = y->lo; x->hi = y->hi; x->change = y->change;
        } else if (!y || y->change == TB_CHANGE_NOT_TIMED || y->change == TB_CHANGE_REMOVED ||
                   y->change == TB_CHANGE_NEW) {
            /* a second pass that could not judge it never clears a regression */
            snprintf(x->note, sizeof x->note, "the confirming run %lld could not judge it (%s): the "
                     "first pass stands", (long long)*run2, y ? tb_change_name(y->change) : "not measured");
        } else {
            snprintf(x->note, sizeof x->note, "%s in run %lld: %s there (%s)",
                     was_slower ? "not confirmed" : "undecided in the first pass, measured again",
                     (long long)*run2, y ? tb_change_name(y->change) : "not measured", first);
            x->ratio = y->ratio; x->lo = y->lo; x->hi = y->hi; x->change = y->change;
        }
        cmp->count[x->change]++;
        if (tb_change_fails(x->change)) cmp->failures++;
    }
    tb_comparison_free(&c2);
    return 0;
}

int cmd_gate(int argc, char **argv, const tb_paths *paths)
{
    gate_cli g;
    memset(&g, 0, sizeof g);
    g.progress = 1;
    g.confirm = 1;
    g.db = GATE_DEFAULT_DB;
    tb_compare_opts_default(&g.co);
    tb_sweep_opts_default(&g.o);
    g.o.no_energy = 1;
    g.o.max_time_s = 0.5;
    g.rep.paths = paths;
    int rc = parse(argc, argv, &g);
    if (rc) return rc < 0 ? 0 : rc;
    const int control_given = g.co.control[0] != 0;
    if (!g.baseline) g.co.control[0] = 0;   /* same run: nothing to cancel */
    g.co.paired = !g.baseline;              /* same run: base:X and head:X sampled in rounds */
    g.o.lockstep = !g.baseline;             /* ... over the same rounds */
    snprintf(g.o.stop, sizeof g.o.stop, "stdrel:max-noise=%g,min-samples=%d,max-time=%g,max-samples=%d",
             g.o.target_rse, g.o.min_samples, g.o.max_time_s, g.o.max_samples);
    char msg[TB_MSG_LEN];

    /* 1. every input before anything runs */
    tb_shape_list shapes = { 0 };
    if (!g.nshp) g.shp[g.nshp++] = "gate";
    for (size_t i = 0; i < g.nshp; i++)
        if (tb_shapes_add(&shapes, g.shp[i], paths->shapes_dir, msg, sizeof msg))
            return tb_cli_error("%s", msg);
    uint32_t ops = 0;   /* the shapes' operations: variants of none of them are left out */
    for (size_t i = 0; i < shapes.n; i++) {
        const tb_op_desc *d = tb_op_of_shape(&shapes.v[i]);
        if (d && d->op < 32) ops |= 1u << d->op;
    }
    if (g.baseline && !control_given) {   /* the control computes the shapes' operation */
        const tb_op_desc *d = shapes.n ? tb_op_of_shape(&shapes.v[0]) : &tb_op_gemm;
        if (ops & (ops - 1))
            return tb_cli_error("--baseline with shapes of more than one operation: one control "
                                "cannot cancel the clock on both; run a gate per operation, or name "
                                "the control (--control)");
        snprintf(g.co.control, sizeof g.co.control, "%s", d ? d->gate_control : "cublaslt");
    }
    char **hf = NULL, **bf = NULL;
    size_t nhf = 0, nbf = 0;
    if (tb_catalog_expand(g.head, g.nhead, &hf, &nhf, msg, sizeof msg)) return tb_cli_error("%s", msg);
    if (g.nbase && tb_catalog_expand(g.base, g.nbase, &bf, &nbf, msg, sizeof msg)) return tb_cli_error("%s", msg);
    tb_side bl = { 0 };
    if (g.baseline && tb_side_from_baseline(g.baseline, &bl, msg, sizeof msg)) return tb_cli_error("%s", msg);

    /* 2. the GPU, and the baseline's */
    tb_environment env;
    if ((rc = tb_cli_gpu(paths, &g.o, "gate", &env))) return rc;
    if (g.baseline) {
        char why[256];
        if (!bl.have_env)
            tb_cli_warn("baseline '%s' records no environment: it cannot be checked against this GPU",
                        g.baseline);
        else if (tb_side_env_differs(&bl.env, &env, why, sizeof why) && !g.allow_env)
            return tb_cli_error("baseline '%s' was measured elsewhere (%s): its figures do not "
                                "compare (--allow-env-mismatch compares anyway)", g.baseline, why);
        else if (why[0])
            tb_cli_warn("baseline '%s' was measured elsewhere (%s); compared anyway", g.baseline, why);
    }
    tb_side_free(&bl);

    /* 3. the variants: head:, base: (or the control) */
    tb_catalog cat;
    memset(&cat, 0, sizeof cat);
    if ((rc = tb_cli_catalog_add(paths, &cat, hf, nhf, "head"))) return rc;
    if (nbf && (rc = tb_cli_catalog_add(paths, &cat, bf, nbf, "base"))) return rc;
    if (g.baseline) {
        int have = 0;
        for (size_t i = 0; i < cat.n; i++) have |= !strcmp(tb_catalog_bare_name(&cat.v[i]), g.co.control);
        if (!have) {
            char *dir = (char *)paths->variants_dir, **cf = NULL;
            size_t ncf = 0;
            if (tb_catalog_expand(&dir, 1, &cf, &ncf, msg, sizeof msg)) return tb_cli_error("%s", msg);
            size_t before = cat.n;
            if ((rc = tb_cli_catalog_add(paths, &cat, cf, ncf, "control"))) return rc;
            for (size_t i = before; i < cat.n;)
                if (strcmp(tb_catalog_bare_name(&cat.v[i]), g.co.control)) tb_catalog_drop(&cat, i);
                else i++;
            if (cat.n == before)
                return tb_cli_error("the control '%s' is neither in the head nor among the shipped "
                                    "variants (%s)", g.co.control, paths->variants_dir);
        }
        if (g.ninc) g.inc[g.ninc++] = g.co.control;
    }
    if ((rc = tb_cli_catalog_finish(&cat, &env, g.inc, g.ninc, g.exc, g.nexc, ops))) return rc;

    /* 4. measure, compare, maybe confirm */
    tb_store *st;
    if (tb_store_open(g.db, 1, 0, &st, msg, sizeof msg)) {
        tb_catalog_free(&cat);
        return tb_cli_error("%s", msg);
    }
    int64_t run = 0, run2 = 0;
    double secs = 0, secs2 = 0;
    tb_comparison cmp;
    memset(&cmp, 0, sizeof cmp);
    rc = measure(&g, argc, argv, paths, st, &cat, &shapes, &env, "gate", &run, &secs);
    tb_side base = { 0 }, head = { 0 };
    if (!rc) rc = sides(&g, st, run, &base, &head);
    if (!rc) {
        if (tb_compare(&base, &head, &g.co, &cmp, msg, sizeof msg)) rc = tb_cli_error("%s", msg);
        tb_side_free(&base);
        tb_side_free(&head);
    }
    int suspects = 0;
    for (size_t r = 0; r < cmp.n; r++) suspects += suspect(&cmp, &cmp.r[r]);
    if (!rc && g.confirm && suspects)
        rc = confirm(&g, argc, argv, paths, st, &cat, &shapes, &env, &cmp, &secs2, &run2);
    tb_store_close(st);
    size_t nv = cat.n, ns = shapes.n;
    tb_catalog_free(&cat);
    tb_shapes_free(&shapes);
    if (rc) { tb_comparison_free(&cmp); return rc; }

    /* 5. the reports */
    char cost[256];
    int l = snprintf(cost, sizeof cost, "%zu variants x %zu shapes in %.0f s (run %lld of %s)",
                     nv, ns, secs, (long long)run, g.db);
    if (run2 && l > 0 && (size_t)l < sizeof cost)
        snprintf(cost + l, sizeof cost - (size_t)l, "; confirming pass %.0f s (run %lld)", secs2,
                 (long long)run2);
    tb_compare_label lab = { "gate", cost, NULL, NULL };
    rc = tb_cli_reports_write(&cmp, &lab, &g.rep, g.db);
    int fail = cmp.failures > 0;
    tb_comparison_free(&cmp);
    return rc ? rc : fail ? TB_EXIT_FAIL : 0;
}
