/* cache.c - rendered leaderboards kept between requests, each under the store's generation it
 * was made at (see cache.h). A fixed table of entries searched linearly (64 of them: a scan
 * costs less than one hash of a URL), least recently used evicted first; one mutex over
 * everything. Knows nothing of HTTP, SQL or HTML: keys and texts are opaque, generations are
 * numbers the caller reads from the store. */
#define _GNU_SOURCE
#include "cache.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key;            /* NULL: the slot is free */
    uint64_t gen, used;   /* the generation it was made at; the tick of its last use */
    char *text;
    size_t n;
} entry;

struct tbs_cache {
    pthread_mutex_t lock;
    uint64_t tick;
    entry e[TBS_CACHE_SLOTS];
    size_t bytes;         /* text and keys held */
};

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

char *tbs_cache_get(tbs_cache *c, const char *key, uint64_t gen, size_t *n)
{
    char *out = NULL;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) {
        entry *e = &c->e[i];
        if (!e->key || strcmp(e->key, key)) continue;
        if (e->gen < gen) { drop(c, e); break; }   /* stale: a submission came after it */
        if (e->gen > gen) break;                    /* newer than this reader's store: not for it */
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

void tbs_cache_put(tbs_cache *c, const char *key, uint64_t gen, const char *text, size_t n)
{
    size_t need = n + strlen(key) + 1;
    if (need > TBS_CACHE_BYTES / 4) return;
    char *k = strdup(key), *t = malloc(n + 1);
    if (!k || !t) { free(k); free(t); return; }
    memcpy(t, text, n);
    t[n] = 0;
    pthread_mutex_lock(&c->lock);
    entry *slot = NULL;
    for (size_t i = 0; i < TBS_CACHE_SLOTS; i++) {   /* the key's own slot goes first: no duplicates */
        entry *e = &c->e[i];
        if (!e->key || strcmp(e->key, key)) continue;
        if (e->gen > gen) {   /* a newer text of key is kept already */
            pthread_mutex_unlock(&c->lock);
            free(k); free(t);
            return;
        }
        drop(c, e);
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
    *slot = (entry){ k, gen, ++c->tick, t, n };
    c->bytes += need;
    pthread_mutex_unlock(&c->lock);
}
