/* cmd_compare.c - tilebench compare A B: two stored runs (or baseline files) set against each
 * other, every (variant, shape) classified faster / slower / unchanged / new / removed /
 * newly invalid / newly unsupported. No GPU needed. */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/verdicts.h"
#include "common/tb.h"
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(void)
{
    printf(
"usage: tilebench compare A B [options]\n"
"\n"
"Compare run B (the head) against run A (the base), (variant, shape) by (variant, shape):\n"
"the ratio of median times B/A with a 95 %% bootstrap interval, classified slower (the whole\n"
"interval above 1 + threshold), faster (below 1 - threshold), unchanged, new, removed, newly\n"
"invalid, newly unsupported, newly valid or not timed. A and B are each a run id in --db, a\n"
"database file (its newest run), FILE:ID, or a baseline file (tilebench baseline save).\n"
"Two runs were made at different times: the GPU's clock and power state differ between them\n"
"(docs/method.md, \"Gating\"). Name a variant both runs measured with --control to divide it\n"
"out; tilebench gate measures both sides in one interleaved run instead.\n"
"\n"
"  --db FILE          database for run ids (default " TB_DEFAULT_DB ")\n"
"  --threshold PCT    slower/faster only beyond this many percent (default 2)\n"
"  --control NAME     compare each variant's ratio to NAME on the same shape (e.g. cublaslt)\n"
"  --format F         standard output as table (default), markdown, junit or json\n"
"  --markdown FILE    also write Markdown (a pull-request comment) to FILE ('-' stdout)\n"
"  --junit FILE       also write JUnit XML: one testcase per variant x shape\n"
"  --json FILE        also write JSON\n"
"  --chart FILE.svg   also draw the before/after chart (matplotlib), linked from the Markdown\n"
"\n"
"Markdown is appended to $GITHUB_STEP_SUMMARY when it is set.\n"
"exit status: 0 nothing slower or newly invalid, 1 something is, 2 usage or input error.\n"
"\n"
"examples:\n"
"  tilebench compare 3 4\n"
"  tilebench compare before.db after.db --control cublaslt --markdown diff.md\n"
"  tilebench compare baseline.json 7 --control cublaslt --junit results.xml\n");
}

int cmd_compare(int argc, char **argv, const tb_paths *paths)
{
    enum { O_DB = 256, O_THR, O_CTL, O_FMT, O_MD, O_JUNIT, O_JSON, O_CHART };
    static const struct option opts[] = {
        { "db", required_argument, 0, O_DB }, { "threshold", required_argument, 0, O_THR },
        { "control", required_argument, 0, O_CTL }, { "format", required_argument, 0, O_FMT },
        { "markdown", required_argument, 0, O_MD }, { "junit", required_argument, 0, O_JUNIT },
        { "json", required_argument, 0, O_JSON }, { "chart", required_argument, 0, O_CHART },
        { "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 } };
    const char *db = TB_DEFAULT_DB;
    tb_compare_opts co;
    tb_compare_opts_default(&co);
    tb_cli_reports rep = { 0 };
    rep.paths = paths;
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case O_DB: db = optarg; break;
        case O_THR: if (tb_cli_threshold(optarg, &co.threshold)) return 2; break;
        case O_CTL:
            if (strlen(optarg) >= sizeof co.control || !*optarg)
                return tb_cli_error("invalid value '%s' for --control (a variant name)", optarg);
            snprintf(co.control, sizeof co.control, "%s", optarg);
            break;
        case O_FMT: rep.format = optarg; break;
        case O_MD: rep.markdown = optarg; break;
        case O_JUNIT: rep.junit = optarg; break;
        case O_JSON: rep.json = optarg; break;
        case O_CHART: rep.chart = optarg; break;
        case 'h': help(); return 0;
        default: return tb_cli_bad_option("compare", argv, optind, optopt);
        }
    }
    if (argc - optind != 2)
        return tb_cli_error("compare takes two runs, A and B (see 'tilebench compare --help')");
    int rc = tb_cli_reports_check(&rep);
    if (rc) return rc;
    tb_side a, b;
    if ((rc = tb_cli_side(argv[optind], db, NULL, &a))) return rc;
    if ((rc = tb_cli_side(argv[optind + 1], db, NULL, &b))) { tb_side_free(&a); return rc; }
    tb_comparison cmp;
    char msg[TB_MSG_LEN];
    rc = tb_compare(&a, &b, &co, &cmp, msg, sizeof msg);
    tb_side_free(&a);
    tb_side_free(&b);
    if (rc) return tb_cli_error("%s", msg);
    tb_compare_label l = { "compare", "", NULL, NULL };
    rc = tb_cli_reports_write(&cmp, &l, &rep, db);
    int fail = cmp.failures > 0;
    tb_comparison_free(&cmp);
    return rc ? rc : fail ? TB_EXIT_FAIL : 0;   /* rc: 1 a report not written, 141 a closed pipe */
}
