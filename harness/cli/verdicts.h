/* verdicts.h - what gate and compare share on the command line: reading a side (a run id in
 * --db, a database file, FILE:ID, or a baseline file), the report options (--format,
 * --markdown, --junit, --json, --chart, --threshold) and writing the reports, with the Markdown also
 * appended to $GITHUB_STEP_SUMMARY when it is set. Exit codes: 0 pass, 1 a regression or a
 * newly invalid variant, 2 usage or environment error (docs/cli.md). */
#ifndef TB_VERDICTS_H
#define TB_VERDICTS_H
#include "report/compare.h"
#include "report/compare_out.h"
#include "report/side.h"
#include "driver/paths.h"

typedef struct tb_cli_reports {
    const char *format;      /* stdout: table (default), markdown, junit, json */
    const char *markdown, *junit, *json;   /* extra files ("-" = stdout), or NULL */
    const char *chart;       /* the before/after chart, an SVG drawn by the report script
                                (cli/report_script.c), or NULL; the Markdown links to it */
    const tb_paths *paths;   /* where the script is (needed with chart) */
} tb_cli_reports;

/* Parse a --threshold value in percent ("2", "2%", "0.5") into a fraction; -1 and the error
 * printed when bad. */
int tb_cli_threshold(const char *s, double *out);
/* Check the report options before any work (formats known, files not the same path twice;
 * a chart ends in .svg, its folder exists, and the script and matplotlib are there to draw it):
 * 0 or 2 with the error printed. */
int tb_cli_reports_check(const tb_cli_reports *r);
/* Read a side: spec is a baseline file (JSON), "ID" (a run in db), "FILE" (a database: its
 * newest run) or "FILE:ID". ns as tb_side_from_run. 0 or 2 with the error printed. */
int tb_cli_side(const char *spec, const char *db, const char *ns, tb_side *out);
/* Write every report asked for (cli/output.h; never over guard, the database read), the chart
 * first so that the Markdown can link to it; 0, or 1 when one could not be written (printed;
 * the others are still written). */
int tb_cli_reports_write(const tb_comparison *c, const tb_compare_label *l, const tb_cli_reports *r,
                         const char *guard);
#endif
