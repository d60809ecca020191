/* catalog.h - the variants a sweep or list works with. Owns: expanding variant paths
 * (directories to their *.so files), asking a probe worker what each library holds (the
 * parent never dlopens a variant: a crashing constructor must not take it down), the
 * SHA-256 of each file, duplicate names, and --filter/--exclude selection.
 * Refusals are collected as one-line messages; the caller prints them. */
#ifndef TB_CATALOG_H
#define TB_CATALOG_H
#include <stddef.h>
#include "common/record.h"

typedef struct tb_catalog {
    char ns[16];          /* namespace given to the variants loaded next ("" none) */
    tb_variant_info *v;
    size_t n;
    char **refusals;      /* one line each, naming the file and the reason */
    size_t n_refusals;
} tb_catalog;

/* Expand paths (files or directories) into .so files. A path that does not exist is a
 * usage error (TB_EUSAGE, "no such variant path 'x'"); a directory with no .so is one too. */
int tb_catalog_expand(char **paths, size_t n, char ***files, size_t *nfiles, char *msg, size_t len);

/* Probe files with the worker, hash them, refuse duplicates. Returns TB_OK even when some
 * libraries were refused (see refusals); TB_EWORKER if the worker cannot run at all. */
int tb_catalog_load(tb_catalog *c, const char *worker, char **files, size_t nfiles,
                    char *msg, size_t len);
/* The same, adding to c (which tb_catalog_load, or a zeroed struct, began) the variants of
 * files under the namespace ns: each is named "ns:NAME" (ns: letters, digits, '_' and '-',
 * at most 15), so two builds of one library can be measured side by side (tilebench gate).
 * A name is unique within the catalog, so the same library twice in one ns is refused. */
int tb_catalog_load_ns(tb_catalog *c, const char *worker, char **files, size_t nfiles,
                       const char *ns, char *msg, size_t len);
/* name without its "ns:" (the library's own name). */
const char *tb_catalog_bare_name(const tb_variant_info *v);

/* Keep variants whose name matches any include glob (all when n_inc == 0) and no exclude
 * glob (fnmatch); a namespaced variant matches by its full or its bare name. TB_EUSAGE "no variant matches ..." when nothing is left. */
int tb_catalog_select(tb_catalog *c, char **inc, size_t n_inc, char **exc, size_t n_exc,
                      char *msg, size_t len);

/* Remove variant i without a word (a selection the caller made). */
void tb_catalog_drop(tb_catalog *c, size_t i);
/* Remove variant i, adding a refusal line. */
void tb_catalog_refuse(tb_catalog *c, size_t i, const char *why);

void tb_catalog_free(tb_catalog *c);
void tb_strv_free(char **v, size_t n);
#endif
