/* harness/arena.c - a list of blocks, freed all at once. */
#include <string.h>

#include "core/core.h"
#include "harness/harness.h"

struct prt__arena_block {
    prt__arena_block *next;
    size_t cap, used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK 16384

void *prt__arena_alloc(prt__arena *a, size_t n)
{
    prt__arena_block *b = a->head;
    void *p;
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof *b) return NULL;
        b = prt__malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->cap = cap;
        b->used = 0;
        if (a->head && n > ARENA_BLOCK) { /* keep filling the current block */
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *prt__arena_strndup(prt__arena *a, const char *s, size_t n)
{
    char *d;
    if (n == SIZE_MAX) return NULL;
    d = prt__arena_alloc(a, n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

void prt__arena_free(prt__arena *a)
{
    prt__arena_block *b, *next;
    if (!a) return;
    for (b = a->head; b; b = next) {
        next = b->next;
        prt__free(b);
    }
    a->head = NULL;
}
