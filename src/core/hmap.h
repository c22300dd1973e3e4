/*
 * core/hmap.h - an open-addressing hash map from a key to an int32 value
 * (hmap.c), so that name and pointer lookups in plans, networks and builds
 * take constant time and loading or building stays linear in their size.
 *
 * Keys are borrowed: a string key (PRT__HMAP_STRING) must stay valid and
 * unchanged while it is in the map; a pointer key (PRT__HMAP_POINTER) is
 * compared by address only. Values are >= 0. Not thread-safe.
 */
#ifndef PLUGRT_CORE_HMAP_H
#define PLUGRT_CORE_HMAP_H

#include <stddef.h>
#include <stdint.h>

enum { PRT__HMAP_STRING = 0, PRT__HMAP_POINTER = 1 };

typedef struct prt__hmap_slot {
    const void *key; /* NULL: empty */
    int32_t val;
} prt__hmap_slot;

typedef struct prt__hmap {
    prt__hmap_slot *slots;
    size_t cap; /* 0 or a power of two */
    size_t nb;
    int kind;
} prt__hmap;

/* An empty map (no allocation until the first put). */
void prt__hmap_init(prt__hmap *m, int kind);
void prt__hmap_free(prt__hmap *m);
/* The value of key, or -1. */
int32_t prt__hmap_get(const prt__hmap *m, const void *key);
/* Insert key -> val unless key is present: 0 inserted, 1 present (its
 * value is left as it was), -1 out of memory (the map is unchanged). */
int prt__hmap_put(prt__hmap *m, const void *key, int32_t val);
/* Remove key if present (never allocates; a put after a remove of the
 * same number of keys cannot fail). */
void prt__hmap_remove(prt__hmap *m, const void *key);
/* Room for n keys without growing: 0, or -1 out of memory. */
int prt__hmap_reserve(prt__hmap *m, size_t n);

#endif
