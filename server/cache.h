/* cache.h - rendered leaderboards kept between requests (cache.c): the JSON ranking and the HTML
 * board of a (shape set, GPU model), and the list of leaderboards, each ranked once and then
 * served as text until a submission of its GPU model is stored. Without it every read parses
 * every stored submission of the model again (a read's cost grows with the board).
 *
 * Invalidation is by generation: each GPU model has a generation, and all of them together one
 * more (for pages that read every model, as the list does); storing a submission bumps its
 * model's (tbs_cache_bump). An entry remembers the generation it was made at and is served only
 * while that is still the current one. A reader takes the generation BEFORE it reads the store
 * and hands it to tbs_cache_put with the text: when a submission was stored meanwhile, the text
 * may predate it and is not kept. Generations are per model name hashed into a fixed table, so
 * two models may share one (a submission of one then also drops the other's entries: wasted
 * work, never a stale page).
 *
 * Bounded: at most TBS_CACHE_SLOTS entries and TBS_CACHE_BYTES of text, the least recently
 * used evicted first; a text larger than a quarter of the budget is not kept. Thread-safe (one
 * mutex; a hit is one copy of the text). The generations live in this process only: a second
 * server writing the same database would not bump them (one server per database file). */
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

/* The current generation of gpu's pages, or of every model's together when gpu is NULL. */
uint64_t tbs_cache_generation(tbs_cache *c, const char *gpu);
/* A submission of gpu was stored: its generation and the all-models one move on, so every
 * entry that read gpu's submissions is stale. */
void tbs_cache_bump(tbs_cache *c, const char *gpu);
/* The text kept under key, as a malloc'd copy (NUL-terminated; *n its length without the NUL)
 * that the caller frees, when it was made at gpu's current generation (gpu NULL: every
 * model's); else NULL (a miss, or out of memory). */
char *tbs_cache_get(tbs_cache *c, const char *key, const char *gpu, size_t *n);
/* Keep text[0..n) under key, made from the store as it was at generation gen of gpu (read with
 * tbs_cache_generation before reading the store; gpu NULL: every model). Nothing is kept when
 * that generation has moved on since, or when memory runs out: a cache may always say no. */
void tbs_cache_put(tbs_cache *c, const char *key, const char *gpu, uint64_t gen, const char *text, size_t n);
#endif
