/* cache.c - rendered leaderboards kept between requests, invalidated by generation (see
 * cache.h). A fixed table of entries searched linearly (64 of them: a scan costs less than one
 * hash of a URL), least recently used evicted first; one mutex over everything. Knows nothing
 * of HTTP, SQL or HTML: keys and texts are opaque. */
#define _GNU_SOURCE
#include "cache.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GEN_SLOTS 256   /* GPU model names hashed into this many generations */

typedef struct entry {
    char *key;            /* NULL: the slot is free */
    int all;              /* made from every model's submissions (else gslot's) */
    size_t gslot;
    uint64_t gen, used;   /* the generation it was made at; the tick of its last use */
    char *text;
    size_t n;
} entry;

struct tbs_cache {
    pthread_mutex_t lock;
    uint64_t gens[GEN_SLOTS], all, tick;
    entry e[TBS_CACHE_SLOTS];
    size_t bytes;         /* text and keys held */
};

static size_t gen_slot(const char *gpu)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)gpu; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % GEN_SLOTS);
}

/* the current generation an entry of gpu is checked against; under the lock */
static uint64_t current(const tbs_cache *c, const char *gpu)
{
    return gpu ? c->gens[gen_slot(gpu)] : c->all;
}

static int stale(const tbs_cache *c, const entry *e)
{
    return e->gen != (e->all ? c->all : c->gens[e->gslot]);
}

/* empties e; under the lock */
static void drop(tbs_cache *c, entry *e)
{
    c->bytes -= e->n + strlen(e->key) + 1;
    free(e->key);
    free(e->text);
    memset(e, 0, sizeof *e);
}

tbs_cache *tbs_cache_new(void)
{
    tbs_cache *c = calloc(1, sizeof *c);
    if (c) pthread_mutex_init(&c->lock, NULL);
    return c;
}

void tbs_cache_free(tbs_cache *c)
{
    if (!c) return;
    for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) if (c->e[i].key) drop(c, &c->e[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

uint64_t tbs_cache_generation(tbs_cache *c, const char *gpu)
{
    pthread_mutex_lock(&c->lock);
    uint64_t g = current(c, gpu);
    pthread_mutex_unlock(&c->lock);
    return g;
}

void tbs_cache_bump(tbs_cache *c, const char *gpu)
{
    pthread_mutex_lock(&c->lock);
    c->gens[gen_slot(gpu)]++;
    c->all++;
    pthread_mutex_unlock(&c->lock);
}

char *tbs_cache_get(tbs_cache *c, const char *key, const char *gpu, size_t *n)
{
    (void)gpu;   /* the entry knows which generation it was made at, and of which model */
    char *out = NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) {
        entry *e = &c->e[i];
        if (!e->key || strcmp(e->key, key)) continue;
        if (stale(c, e)) { drop(c, e); break; }
        if ((out = malloc(e->n + 1))) {
            memcpy(out, e->text, e->n + 1);
            *n = e->n;
            e->used = ++c->tick;
        }
        break;
    }
    pthread_mutex_unlock(&c->lock);
    return out;
}

void tbs_cache_put(tbs_cache *c, const char *key, const char *gpu, uint64_t gen, const char *text, size_t n)
{
    size_t need = n + strlen(key) + 1;
    if (need > TBS_CACHE_BYTES / 4) return;
    char *k = strdup(key), *t = malloc(n + 1);
    if (!k || !t) { free(k); free(t); return; }
    memcpy(t, text, n);
    t[n] = 0;
    pthread_mutex_lock(&c->lock);
    if (gen != current(c, gpu)) {   /* a submission of gpu was stored since the store was read */
        pthread_mutex_unlock(&c->lock);
        free(k); free(t);
        return;
    }
    entry *slot = NULL;
    for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) {   /* the key's own slot goes first: no duplicates */
        entry *e = &c->e[i];
        if (e->key && (!strcmp(e->key, key) || stale(c, e))) drop(c, e);
    }
    for (;;) {   /* a free slot and room for the text: evict the least recently used until both */
        entry *lru = NULL;
        slot = NULL;
        for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) {
            entry *e = &c->e[i];
            if (!e->key) { if (!slot) slot = e; }
            else if (!lru || e->used < lru->used) lru = e;
        }
        if (slot && c->bytes + need <= TBS_CACHE_BYTES) break;
        drop(c, lru);   /* not NULL: a full table, or bytes held, means an entry exists */
    }
    *slot = (entry){ k, !gpu, gpu ? gen_slot(gpu) : 0, gen, ++c->tick, t, n };
    c->bytes += need;
    pthread_mutex_unlock(&c->lock);
}
