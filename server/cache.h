/* cache.h - rendered leaderboards kept between requests (cache.c): the JSON ranking and the HTML
 * board of a (shape set, GPU model), and the list of leaderboards, each ranked once and then
 * served as text until a submission of its GPU model is stored. Without it every read parses
 * every stored submission of the model again (a read's cost grows with the board).
 *
 * Invalidation is by generation, and the generations are the store's (tbs_board_generation in
 * store.h): each GPU model has one, and all of them together one more (for pages that read
 * every model, as the list does); it never goes back and moves on with every submission of the
 * model stored, by this process or (PostgreSQL) by any other server process of the database.
 * An entry remembers the generation it was made at. A reader takes the generation BEFORE it
 * reads the store, asks for the entry at that generation, and on a miss renders from the store
 * and puts the text under that same generation: a text that may predate a submission is thus
 * tagged with a generation older than the one that submission made, and no later reader, who
 * reads the newer generation first, is served it. So several processes, each with its own
 * cache, never serve a board older than the last submission any of them stored before the
 * read began.
 *
 * Bounded: at most TBS_CACHE_SLOTS entries and TBS_CACHE_BYTES of text, the least recently
 * used evicted first; a text larger than a quarter of the budget is not kept. Thread-safe (one
 * mutex; a hit is one copy of the text). */
#ifndef TBS_CACHE_H
#define TBS_CACHE_H
#include <stddef.h>
#include <stdint.h>

#define TBS_CACHE_SLOTS 64
#define TBS_CACHE_BYTES (64u << 20)

typedef struct tbs_cache tbs_cache;

/* A new, empty cache, or NULL when out of memory. Free with tbs_cache_free. */
tbs_cache *tbs_cache_new(void);
void tbs_cache_free(tbs_cache *c);

/* The text kept under key, as a malloc'd copy (NUL-terminated; *n its length without the NUL)
 * that the caller frees, when it was made at generation gen (the one the caller has just read
 * from the store); else NULL (a miss, or out of memory). An entry made at an older generation
 * is stale and dropped; one made at a newer generation than gen (a reader that read the
 * generation before another stored the entry) is kept for the readers that come after. */
char *tbs_cache_get(tbs_cache *c, const char *key, uint64_t gen, size_t *n);
/* Keep text[0..n) under key, made from the store as it was at generation gen or later (gen
 * read before the store). An entry of key made at a newer generation stays instead. Nothing is
 * kept when memory runs out: a cache may always say no. */
void tbs_cache_put(tbs_cache *c, const char *key, uint64_t gen, const char *text, size_t n);
#endif
