/* test_cache.c - server/cache.c: a rendered board is served at the generation it was made at
 * and never once the store's generation has moved on (a submission stored, by this process or
 * another: the generation is the store's); a text made from a store read before a submission
 * is never served to a reader who saw that submission's generation; an entry made at a newer
 * generation is not replaced by an older reader's text; the bounds (slots, bytes) hold with the
 * least recently used evicted first; concurrent readers and writers never see a text older
 * than the last generation they read. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "../server/cache.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the text of key at gen, or NULL; *n checked against strlen */
static char *get(tbs_cache *c, const char *key, uint64_t gen)
{
    size_t n = 0;
    char *t = tbs_cache_get(c, key, gen, &n);
    if (t && n != strlen(t)) { free(t); return strdup("(length differs)"); }
    return t;
}

static int is(char *t, const char *want)
{
    int ok = t ? want && !strcmp(t, want) : !want;
    free(t);
    return ok;
}

/* shared by the threads of cache-4.1: the "store" is a version number of one model and its
 * generation (as store.h's: moved on with every submission stored, never back); acked is the
 * newest version whose POST has answered. Two caches: two server processes on one database. */
typedef struct world { tbs_cache *c[2]; int version, acked, stale, stop, hits; uint64_t gen; pthread_mutex_t lock; } world;

static void *writer(void *w_)
{
    world *w = w_;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&w->lock);
        int v = ++w->version;   /* the store takes a submission of "H100" and its generation moves, */
        w->gen++;               /* in one transaction */
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_lock(&w->lock);
        w->acked = v;           /* then the POST answers */
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

typedef struct rarg { world *w; int which; } rarg;

static void *reader(void *a_)
{
    rarg *a = a_;
    world *w = a->w;
    tbs_cache *c = w->c[a->which];
    for (int stop = 0; !stop;) {
        pthread_mutex_lock(&w->lock);
        uint64_t gen = w->gen;    /* the generation, before the store is read */
        int acked = w->acked;     /* the last POST answered before this read began */
        pthread_mutex_unlock(&w->lock);
        pthread_mutex_lock(&w->lock);
        int seen = w->version;    /* the store as read (at least what gen says) */
        stop = w->stop;
        pthread_mutex_unlock(&w->lock);
        size_t n;
        char *t = tbs_cache_get(c, "/board", gen, &n);
        if (t) {   /* a hit holds every submission whose POST had answered before the read */
            pthread_mutex_lock(&w->lock);
            if (atoi(t) < acked) w->stale = 1;
            w->hits++;
            pthread_mutex_unlock(&w->lock);
            free(t);
        } else {
            char text[32];
            snprintf(text, sizeof text, "%d", seen);
            tbs_cache_put(c, "/board", gen, text, strlen(text));
        }
    }
    return NULL;
}

int main(void)
{
    TB_CASE("cache-1.1", "a miss, then a hit at the same generation, as a copy") {
        tbs_cache *c = tbs_cache_new();
        TB_CHECK(c);
        TB_CHECK(is(get(c, "/a", 0), NULL));
        tbs_cache_put(c, "/a", 0, "board one", 9);
        TB_CHECK(is(get(c, "/a", 0), "board one"));
        TB_CHECK(is(get(c, "/a", 0), "board one"));
        TB_CHECK(is(get(c, "/b", 0), NULL));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.2", "a newer generation makes the entry stale, and it is dropped") {
        tbs_cache *c = tbs_cache_new();
        tbs_cache_put(c, "/h100", 7, "h", 1);
        tbs_cache_put(c, "/a100", 3, "a", 1);
        TB_CHECK(is(get(c, "/h100", 8), NULL));   /* a submission of H100: generation 8 */
        TB_CHECK(is(get(c, "/h100", 7), NULL));   /* gone, not just skipped */
        TB_CHECK(is(get(c, "/a100", 3), "a"));    /* another model's generation stood */
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.3", "a text read from the store before a submission is never served after it") {
        tbs_cache *c = tbs_cache_new();
        uint64_t g = 4;                          /* the reader starts at generation 4 */
        /* a submission lands meanwhile (generation 5); the reader's text may predate it */
        tbs_cache_put(c, "/h100", g, "old", 3);
        TB_CHECK(is(get(c, "/h100", 5), NULL));  /* every reader after the submission misses it */
        tbs_cache_put(c, "/h100", 5, "new", 3);
        TB_CHECK(is(get(c, "/h100", 5), "new"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.4", "an older reader's text does not replace a newer entry; the newer one is kept for later readers") {
        tbs_cache *c = tbs_cache_new();
        tbs_cache_put(c, "/h100", 9, "nine", 4);
        tbs_cache_put(c, "/h100", 8, "eight", 5);   /* a slow reader of generation 8 comes back */
        TB_CHECK(is(get(c, "/h100", 8), NULL));      /* it is not served the newer text either */
        TB_CHECK(is(get(c, "/h100", 9), "nine"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.5", "a key put again at one generation holds the newer text, once") {
        tbs_cache *c = tbs_cache_new();
        tbs_cache_put(c, "/a", 2, "one", 3);
        tbs_cache_put(c, "/a", 2, "two", 3);
        TB_CHECK(is(get(c, "/a", 2), "two"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-2.1", "beyond the slots, the least recently used goes first") {
        tbs_cache *c = tbs_cache_new();
        char key[32];
        for (int i = 0; i < TBS_CACHE_SLOTS; i++) {
            snprintf(key, sizeof key, "/k%d", i);
            tbs_cache_put(c, key, 1, key, strlen(key));
        }
        TB_CHECK(is(get(c, "/k0", 1), "/k0"));   /* k0 used: k1 is now the oldest */
        tbs_cache_put(c, "/new", 1, "n", 1);
        TB_CHECK(is(get(c, "/k1", 1), NULL));
        TB_CHECK(is(get(c, "/k0", 1), "/k0"));
        TB_CHECK(is(get(c, "/k2", 1), "/k2"));
        TB_CHECK(is(get(c, "/new", 1), "n"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-2.2", "the byte budget holds; a text over a quarter of it is not kept") {
        tbs_cache *c = tbs_cache_new();
        size_t big = TBS_CACHE_BYTES / 4 - 64;
        char *t = malloc(big + 1);
        TB_CHECK(t);
        if (t) {
            memset(t, 'x', big);
            t[big] = 0;
            char key[32];
            for (int i = 0; i < 5; i++) {   /* four fit, the fifth evicts the first */
                snprintf(key, sizeof key, "/big%d", i);
                tbs_cache_put(c, key, 1, t, big);
            }
            TB_CHECK(is(get(c, "/big0", 1), NULL));
            char *got = get(c, "/big4", 1);
            TB_CHECK(got && strlen(got) == big);
            free(got);
            free(t);
        }
        char *huge = calloc(TBS_CACHE_BYTES / 4 + 2, 1);
        TB_CHECK(huge);
        if (huge) {
            memset(huge, 'y', TBS_CACHE_BYTES / 4 + 1);
            tbs_cache_put(c, "/huge", 1, huge, TBS_CACHE_BYTES / 4 + 1);
            TB_CHECK(is(get(c, "/huge", 1), NULL));
            free(huge);
        }
        tbs_cache_free(c);
    }
    TB_CASE("cache-4.1", "readers of two caches (two processes) beside a writer never get a text older than the store they saw") {
        world w = { .c = { tbs_cache_new(), tbs_cache_new() }, .lock = PTHREAD_MUTEX_INITIALIZER };
        pthread_t t[5];
        rarg ra[4] = { { &w, 0 }, { &w, 1 }, { &w, 0 }, { &w, 1 } };
        pthread_create(&t[0], NULL, writer, &w);
        for (int i = 1; i < 5; i++) pthread_create(&t[i], NULL, reader, &ra[i - 1]);
        for (int i = 0; i < 5; i++) pthread_join(t[i], NULL);
        TB_CHECK(!w.stale);
        TB_CHECK(w.hits > 0);   /* else the case proved nothing */
        printf("  %d hits\n", w.hits);
        tbs_cache_free(w.c[0]);
        tbs_cache_free(w.c[1]);
    }
    return tb_test_done();
}
