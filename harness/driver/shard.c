/* shard.c - the partition of a sweep's shapes into shards (see shard.h). */
#include "driver/shard.h"
#include "common/tb.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int digits(const char *s, const char *e)
{
    if (s == e) return 0;
    for (; s < e; s++) if (*s < '0' || *s > '9') return 0;
    return 1;
}

int tb_shard_parse(const char *spec, int *index, int *count, char *msg, size_t len)
{
    const char *slash = spec ? strchr(spec, '/') : NULL;
    if (slash && digits(spec, slash) && digits(slash + 1, slash + strlen(slash)) &&
        slash - spec <= 6 && strlen(slash + 1) <= 6) {
        long i = strtol(spec, NULL, 10), n = strtol(slash + 1, NULL, 10);
        if (n >= 1 && n <= TB_SHARD_MAX && i >= 0 && i < n) {
            *index = (int)i;
            *count = (int)n;
            return TB_OK;
        }
    }
    char shown[48];
    snprintf(shown, sizeof shown, "%.40s", spec ? spec : "");
    return tb_fail(msg, len, TB_EUSAGE, "invalid value '%s' for --shard (I/N: 0 <= I < N <= %d)",
                   shown, TB_SHARD_MAX);
}

double tb_shard_cost(const tb_shape *s)
{
    const double f = tb_shape_flops(s);   /* the op seam: 2mnk·batch for a GEMM */
    return 1.0 + (f > 0 ? f : 0.0) / 1e12;
}

static const tb_shape_list *g_list;   /* qsort's context: the list being ordered */

static int by_cost(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double cx = tb_shard_cost(&g_list->v[x]), cy = tb_shard_cost(&g_list->v[y]);
    if (cx != cy) return cx < cy ? 1 : -1;   /* the costliest first */
    return (x > y) - (x < y);                /* then by position: deterministic */
}

int tb_shard_assign(const tb_shape_list *l, int count, int *owner)
{
    if (count <= 1) {
        for (size_t s = 0; s < l->n; s++) owner[s] = 0;
        return TB_OK;
    }
    size_t *order = malloc((l->n ? l->n : 1) * sizeof *order);
    double *load = calloc((size_t)count, sizeof *load);
    if (!order || !load) {   /* never another partition than the other jobs': fail */
        free(order);
        free(load);
        return TB_ENOMEM;
    }
    for (size_t s = 0; s < l->n; s++) order[s] = s;
    g_list = l;
    qsort(order, l->n, sizeof *order, by_cost);
    for (size_t k = 0; k < l->n; k++) {
        int best = 0;
        for (int j = 1; j < count; j++) if (load[j] < load[best]) best = j;
        owner[order[k]] = best;
        load[best] += tb_shard_cost(&l->v[order[k]]);
    }
    free(order);
    free(load);
    return TB_OK;
}
