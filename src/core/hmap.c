/* core/hmap.c - open-addressing hash map with linear probing (hmap.h). */
#include <string.h>

#include "core/core.h"
#include "core/hmap.h"

static uint64_t hash_of(const prt__hmap *m, const void *key)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (m->kind == PRT__HMAP_POINTER) {
        uint64_t v = (uint64_t)(uintptr_t)key;
        v ^= v >> 33;
        v *= 0xff51afd7ed558ccdull;
        v ^= v >> 33;
        v *= 0xc4ceb9fe1a85ec53ull;
        return v ^ (v >> 33);
    }
    for (const unsigned char *s = key; *s; s++) {
        h ^= *s;
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

static int same(const prt__hmap *m, const void *a, const void *b)
{
    return m->kind == PRT__HMAP_POINTER ? a == b : strcmp(a, b) == 0;
}

void prt__hmap_init(prt__hmap *m, int kind)
{
    memset(m, 0, sizeof *m);
    m->kind = kind;
}

void prt__hmap_free(prt__hmap *m)
{
    if (!m) return;
    prt__free(m->slots);
    m->slots = NULL;
    m->cap = m->nb = 0;
}

int32_t prt__hmap_get(const prt__hmap *m, const void *key)
{
    size_t i;
    if (!m->cap || !key) return -1;
    for (i = (size_t)hash_of(m, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const prt__hmap_slot *s = &m->slots[i];
        if (!s->key) return -1;
        if (same(m, s->key, key)) return s->val;
    }
}

static void place(prt__hmap *m, const void *key, int32_t val)
{
    size_t i = (size_t)hash_of(m, key) & (m->cap - 1);
    while (m->slots[i].key) i = (i + 1) & (m->cap - 1);
    m->slots[i].key = key;
    m->slots[i].val = val;
    m->nb++;
}

int prt__hmap_reserve(prt__hmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16, i, old_cap = m->cap;
    prt__hmap_slot *old = m->slots, *ns;
    /* At most half full. */
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 2 / sizeof *ns) return -1;
        cap *= 2;
    }
    if (cap == m->cap) return 0;
    ns = prt__calloc(cap, sizeof *ns);
    if (!ns) return -1;
    m->slots = ns;
    m->cap = cap;
    m->nb = 0;
    for (i = 0; i < old_cap; i++)
        if (old[i].key) place(m, old[i].key, old[i].val);
    prt__free(old);
    return 0;
}

int prt__hmap_put(prt__hmap *m, const void *key, int32_t val)
{
    if (!key) return -1;
    if (prt__hmap_get(m, key) >= 0) return 1;
    if (prt__hmap_reserve(m, m->nb + 1) != 0) return -1;
    place(m, key, val);
    return 0;
}

void prt__hmap_remove(prt__hmap *m, const void *key)
{
    size_t mask = m->cap - 1, i, j;
    if (!m->cap || !key) return;
    for (i = (size_t)hash_of(m, key) & mask;; i = (i + 1) & mask) {
        if (!m->slots[i].key) return;
        if (same(m, m->slots[i].key, key)) break;
    }
    /* Backward shift: move later entries of the probe run into the hole
     * when their home slot does not lie between the hole and them. */
    m->slots[i].key = NULL;
    m->nb--;
    for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
        size_t k = (size_t)hash_of(m, m->slots[j].key) & mask;
        int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (stays) continue;
        m->slots[i] = m->slots[j];
        m->slots[j].key = NULL;
        i = j;
    }
}
