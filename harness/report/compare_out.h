/* compare_out.h - a comparison written where people look: a terminal table, Markdown for a
 * pull-request comment or $GITHUB_STEP_SUMMARY, JUnit XML (one testcase per variant x shape,
 * a failure element for each row that fails the gate), and JSON. Text that came from a
 * variant or a database (names, reasons) is escaped for each format. Each returns TB_OK, or
 * TB_EIO when a write failed. */
#ifndef TB_COMPARE_OUT_H
#define TB_COMPARE_OUT_H
#include <stdio.h>
#include "report/compare.h"

/* What the report calls itself ("gate", "compare") and the one-line cost, or "". The Markdown
 * also points to the before/after chart (--chart) when one was drawn: as an image when
 * chart_link is set (a path relative to the Markdown file, percent-encoded here), else by its
 * file name when chart_file is (standard output, $GITHUB_STEP_SUMMARY). */
typedef struct tb_compare_label {
    const char *command;
    const char *cost;
    const char *chart_link, *chart_file;
} tb_compare_label;

int tb_compare_write_table(const tb_comparison *c, const tb_compare_label *l, FILE *f);
int tb_compare_write_markdown(const tb_comparison *c, const tb_compare_label *l, FILE *f);
int tb_compare_write_junit(const tb_comparison *c, const tb_compare_label *l, FILE *f);
int tb_compare_write_json(const tb_comparison *c, const tb_compare_label *l, FILE *f);
/* "table", "markdown", "junit", "json" -> the writer, or NULL. */
typedef int (*tb_compare_writer)(const tb_comparison *, const tb_compare_label *, FILE *);
tb_compare_writer tb_compare_writer_for(const char *format);
#endif
