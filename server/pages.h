/* pages.h - the leaderboard's HTML pages (pages.c), rendered by the server, readable without
 * JavaScript (there is none), every stored string escaped (html.h):
 *   /                          the leaderboards: each shape set x GPU model with submissions
 *   /leaderboards/{set}/{gpu}  one board: ranking, per-shape bests with "reproduced by",
 *                              an inline SVG chart of its history
 *   /submissions/{id}          one submission: environment, options, every result with the
 *                              command that measures it again
 * The HTTP side (api.c) sends a page with its status and security headers; the pages read the
 * store only through store.h and rank.h. */
#ifndef TBS_PAGES_H
#define TBS_PAGES_H
#include <stddef.h>
#include "sets.h"
#include "store.h"

/* 1 when url (decoded, as libmicrohttpd hands it over) is a page's route, else 0. */
int tbs_pages_route(const char *url);
/* Render the page of url: *status is its HTTP status (200; 400 for a malformed id; 404 for an
 * unknown set, GPU model, submission or route, with an error page saying which) and *html the
 * page, malloc'd (the caller frees it). 0, or -1 with msg when no page could be made (the store
 * failed, out of memory): then *html is NULL and the caller answers 500; TBS_STORE_UNAVAILABLE
 * (store.h) when the database could not be reached: the caller answers 503. */
int tbs_page(tbs_store *st, const tbs_sets *sets, const char *url, unsigned *status, char **html,
             char *msg, size_t len);
/* A page for an error: status and why (escaped). malloc'd, or NULL when out of memory. */
char *tbs_page_error(unsigned status, const char *why);
#endif
