/* test_cache.c - server/cache.c: a rendered board is served while its GPU model's generation
 * stands and never after a submission of that model; a text made from a store read before a
 * submission is not kept; the list of boards (every model) goes stale with any submission;
 * the bounds (slots, bytes) hold with the least recently used evicted first; concurrent
 * readers and writers never see a text older than the last bump they saw. */
#define _GNU_SOURCE
#include "tb_test.h"
#include "../server/cache.h"
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the text of key, or NULL; *n checked against strlen */
static char *get(tbs_cache *c, const char *key, const char *gpu)
{
    size_t n = 0;
    char *t = tbs_cache_get(c, key, gpu, &n);
    if (t && n != strlen(t)) { free(t); return strdup("(length differs)"); }
    return t;
}

static int is(char *t, const char *want)
{
    int ok = t ? want && !strcmp(t, want) : !want;
    free(t);
    return ok;
}

/* shared by the threads of cache-4.1: the "store" is a version number of one model; acked is
 * the newest version whose POST has answered (stored, then bumped) */
typedef struct world { tbs_cache *c; int version, acked, stale, stop, hits; pthread_mutex_t lock; } world;

static void *writer(void *w_)
{
    world *w = w_;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&w->lock);
        int v = ++w->version;   /* the store takes a submission of "H100" ... */
        pthread_mutex_unlock(&w->lock);
        tbs_cache_bump(w->c, "H100");   /* ... then the POST path bumps, then answers */
        pthread_mutex_lock(&w->lock);
        w->acked = v;
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void *reader(void *w_)
{
    world *w = w_;
    for (int stop = 0; !stop;) {
        uint64_t gen = tbs_cache_generation(w->c, "H100");   /* before the store is read */
        pthread_mutex_lock(&w->lock);
        int seen = w->version, acked = w->acked;   /* the store as read; the last POST answered */
        stop = w->stop;
        pthread_mutex_unlock(&w->lock);
        size_t n;
        char *t = tbs_cache_get(w->c, "/board", "H100", &n);
        if (t) {   /* a hit holds every submission whose POST had answered before the read */
            pthread_mutex_lock(&w->lock);
            if (atoi(t) < acked) w->stale = 1;
            w->hits++;
            pthread_mutex_unlock(&w->lock);
            free(t);
        } else {
            char text[32];
            snprintf(text, sizeof text, "%d", seen);
            tbs_cache_put(w->c, "/board", "H100", gen, text, strlen(text));
        }
    }
    return NULL;
}

int main(void)
{
    TB_CASE("cache-1.1", "a miss, then a hit at the same generation, as a copy") {
        tbs_cache *c = tbs_cache_new();
        TB_CHECK(c);
        TB_CHECK(is(get(c, "/a", "H100"), NULL));
        uint64_t g = tbs_cache_generation(c, "H100");
        tbs_cache_put(c, "/a", "H100", g, "board one", 9);
        TB_CHECK(is(get(c, "/a", "H100"), "board one"));
        TB_CHECK(is(get(c, "/a", "H100"), "board one"));
        TB_CHECK(is(get(c, "/b", "H100"), NULL));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.2", "a submission of the model makes its boards stale, not another model's") {
        tbs_cache *c = tbs_cache_new();
        tbs_cache_put(c, "/h100", "H100", tbs_cache_generation(c, "H100"), "h", 1);
        tbs_cache_put(c, "/a100", "A100", tbs_cache_generation(c, "A100"), "a", 1);
        tbs_cache_bump(c, "H100");
        TB_CHECK(is(get(c, "/h100", "H100"), NULL));
        TB_CHECK(is(get(c, "/a100", "A100"), "a"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.3", "a text read from the store before a submission is not kept") {
        tbs_cache *c = tbs_cache_new();
        uint64_t g = tbs_cache_generation(c, "H100");   /* the reader starts */
        tbs_cache_bump(c, "H100");                        /* a submission lands meanwhile */
        tbs_cache_put(c, "/h100", "H100", g, "old", 3);   /* the reader's text predates it */
        TB_CHECK(is(get(c, "/h100", "H100"), NULL));
        tbs_cache_put(c, "/h100", "H100", tbs_cache_generation(c, "H100"), "new", 3);
        TB_CHECK(is(get(c, "/h100", "H100"), "new"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.4", "the list of boards (every model) goes stale with a submission of any") {
        tbs_cache *c = tbs_cache_new();
        tbs_cache_put(c, "/", NULL, tbs_cache_generation(c, NULL), "list", 4);
        TB_CHECK(is(get(c, "/", NULL), "list"));
        tbs_cache_bump(c, "some other GPU");
        TB_CHECK(is(get(c, "/", NULL), NULL));
        tbs_cache_free(c);
    }
    TB_CASE("cache-1.5", "a key put again holds the newer text, once") {
        tbs_cache *c = tbs_cache_new();
        uint64_t g = tbs_cache_generation(c, "H100");
        tbs_cache_put(c, "/a", "H100", g, "one", 3);
        tbs_cache_put(c, "/a", "H100", g, "two", 3);
        TB_CHECK(is(get(c, "/a", "H100"), "two"));
        tbs_cache_free(c);
    }
    TB_CASE("cache-2.1", "beyond the slots, the least recently used goes first") {
        tbs_cache *c = tbs_cache_new();
        char key[32];
        for (int i = 0; i < TBS_CACHE_SLOTS; i++) {
            snprintf(key, sizeof key, "/k%d", i);
            tbs_cache_put(c, key, "H100", tbs_cache_generation(c, "H100"), key, strlen(key));
        }
        TB_CHECK(is(get(c, "/k0", "H100"), "/k0"));   /* k0 used: k1 is now the oldest */
        tbs_cache_put(c, "/new", "H100", tbs_cache_generation(c, "H100"), "n", 1);
        TB_CHECK(is(get(c, "/k1", "H100"), NULL));
        TB_CHECK(is(get(c, "/k0", "H100"), "/k0"));
        TB_CHECK(is(get(c, "/k2", "H100"), "/k2"));
        TB_CHECK(is(get(c, "/new", "H100"), "n"));
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
                tbs_cache_put(c, key, "H100", tbs_cache_generation(c, "H100"), t, big);
            }
            TB_CHECK(is(get(c, "/big0", "H100"), NULL));
            char *got = get(c, "/big4", "H100");
            TB_CHECK(got && strlen(got) == big);
            free(got);
            free(t);
        }
        char *huge = calloc(TBS_CACHE_BYTES / 4 + 2, 1);
        TB_CHECK(huge);
        if (huge) {
            memset(huge, 'y', TBS_CACHE_BYTES / 4 + 1);
            tbs_cache_put(c, "/huge", "H100", tbs_cache_generation(c, "H100"), huge, TBS_CACHE_BYTES / 4 + 1);
            TB_CHECK(is(get(c, "/huge", "H100"), NULL));
            free(huge);
        }
        tbs_cache_free(c);
    }
    TB_CASE("cache-3.1", "two models in one generation slot: never stale, at worst dropped") {
        tbs_cache *c = tbs_cache_new();
        char gpu[32];
        int dropped = 0;
        for (int i = 0; i < 1000; i++) {   /* 1000 names into 256 slots: some share */
            snprintf(gpu, sizeof gpu, "GPU %d", i);
            tbs_cache_put(c, "/x", gpu, tbs_cache_generation(c, gpu), "x", 1);
            tbs_cache_bump(c, "GPU 0");
            char *t = get(c, "/x", gpu);
            dropped += !t;
            if (!strcmp(gpu, "GPU 0")) TB_CHECK(!t);
            free(t);
        }
        TB_CHECK(dropped >= 1 && dropped < 100);
        tbs_cache_free(c);
    }
    TB_CASE("cache-4.1", "readers beside a writer never get a text older than the store they saw") {
        world w = { .c = tbs_cache_new(), .lock = PTHREAD_MUTEX_INITIALIZER };
        pthread_t t[4];
        pthread_create(&t[0], NULL, writer, &w);
        for (int i = 1; i < 4; i++) pthread_create(&t[i], NULL, reader, &w);
        for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
        TB_CHECK(!w.stale);
        TB_CHECK(w.hits > 0);   /* else the case proved nothing */
        printf("  %d hits\n", w.hits);
        tbs_cache_free(w.c);
    }
    return tb_test_done();
}
