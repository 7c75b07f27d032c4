/*
 * A hash table from strings to pointers: lookups by a job's id (SLURM's or
 * taotop's) in constant time, where a list of thousands would be scanned.
 * Keys are copied; values are the caller's. Open addressing with linear
 * probing, deletion by shifting back (no tombstones, so a table that sees
 * jobs come and go for hours does not fill up with them).
 */
#ifndef TAOTOP_UTIL_STRMAP_H
#define TAOTOP_UTIL_STRMAP_H

#include <stddef.h>

struct strmap;

struct strmap *strmap_new(void);
void strmap_free(struct strmap *m);
/* Forget every key (the table keeps its size). */
void strmap_clear(struct strmap *m);
size_t strmap_count(const struct strmap *m);
/* Room for n keys without growing again (a table about to be filled
 * with a known number: each growth rehashes every key). */
void strmap_reserve(struct strmap *m, size_t n);
/* Set key to value (replacing what it had). */
void strmap_put(struct strmap *m, const char *key, void *value);
/* The value of key, or NULL. */
void *strmap_get(const struct strmap *m, const char *key);
/* Remove key; returns its value, or NULL when it had none. */
void *strmap_del(struct strmap *m, const char *key);

#endif
