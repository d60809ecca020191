/* pages_int.h - what the two files of the HTML pages share (pages.c, pages_submission.c): the
 * frame of a page and small pieces both write. Not for other modules: pages.h is the surface. */
#ifndef TBS_PAGES_INT_H
#define TBS_PAGES_INT_H
#include <stddef.h>
#include <stdint.h>
#include "html.h"
#include "store.h"
#include "format/submission_parse.h"

/* <!DOCTYPE html> ... <main>, with title (escaped) and the inline style sheet */
void tbs_page_head(tbs_html *h, const char *title);
/* </main>, the footer stating how rates and "reproduced" are made, </html> */
void tbs_page_foot(tbs_html *h);
/* "reproduced by N", "not reproduced" (N == 0) or a dash (SIZE_MAX: not timed) */
void tbs_page_repro(tbs_html *h, size_t n);
/* MxNxK[xB] of a result */
void tbs_page_shape(tbs_html *h, const tb_sub_result *r);
/* a link to /submissions/{id} */
void tbs_page_sub_link(tbs_html *h, int64_t id);
/* /submissions/{id} into h (pages_submission.c); *status 404 for none. 0, or -1 with msg. */
int tbs_page_submission(tbs_store *st, int64_t id, tbs_html *h, unsigned *status, char *msg, size_t len);
#endif
