/* export_int.h - private to the export (export.c: JSON and the entry; export_csv.c: CSV):
 * what the two files share. */
#ifndef TB_EXPORT_INT_H
#define TB_EXPORT_INT_H
#include "store/store.h"
#include <stddef.h>
#include <stdio.h>

/* Shortest of %.15g / %.17g that reads back the same double; "" when not finite. */
void tbx_fmt_real(char *buf, size_t cap, double v);

/* The CSV of rows (export.h says its form). TB_OK, TB_EIO, TB_ENOMEM. */
int tbx_export_csv(const tb_result_row *rows, size_t n, FILE *out, char *msg, size_t len);
#endif
