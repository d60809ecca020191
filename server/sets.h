/* sets.h - the shape sets a leaderboard ranks on: results/shapes/NAME.txt files read from a
 * directory at start (the same files the CLI's --shapes names), each a list of MxNxK[xB]. */
#ifndef TBS_SETS_H
#define TBS_SETS_H
#include <stddef.h>
#include <stdint.h>

typedef struct tbs_shape { int64_t m, n, k, batch; } tbs_shape;
typedef struct tbs_set { char name[64]; tbs_shape *s; size_t n; } tbs_set;
typedef struct tbs_sets { tbs_set *v; size_t n; } tbs_sets;

/* Read every NAME.txt of dir (names of letters, digits, _ and -), sorted by name. 0, or -1
 * with msg. */
int tbs_sets_load(const char *dir, tbs_sets *out, char *msg, size_t len);
const tbs_set *tbs_sets_find(const tbs_sets *sets, const char *name);
void tbs_sets_free(tbs_sets *sets);
#endif
