/*
 * engine/tcache.h - the timing cache (plugrt/engine.h: prt_timing_cache):
 * tactic times keyed by layer, kept in memory and in a file.
 *
 * File format (docs/engine-format.md, "Timing cache", says the same)
 *
 *   Every integer is fixed-width little-endian; strings are a u32 byte count
 *   and the bytes (no NUL, none inside).
 *
 *   Header, 48 bytes:
 *     0  u8[8]  magic "PLUGRTTC"
 *     8  u32    read version: the oldest reader that can load it (1)
 *     12 u32    write version: the format the writer produced (1)
 *     16 u64    total length in bytes, header included
 *     24 u64    checksum: FNV-1a 64 over bytes [48, total length)
 *     32 u32    header size (48)
 *     36 u32    number of entries (at most 1,000,000)
 *     40 u8[8]  reserved, must be zero
 *
 *   Then the entries, in increasing order of their key bytes (shorter
 *   first where one key is a prefix of another), no key twice. Each:
 *     key    str plugin name, str version, str namespace,
 *            u64 FNV-1a 64 of the plugin record's body (its fields or its
 *                blob, exactly as the plan's PLUG record holds them),
 *            str device ("cpu: <model> (N threads)", "cuda: <name>"),
 *            u32 nb inputs (<= 1024), per input u32 dtype (0xffffffff:
 *            absent), u32 format, i32 nb dims (-1 absent, else 0..8),
 *            nb dims i64 extents (the profile's opt shapes, >= 0)
 *     value  u32 nb tactics (1..64), per tactic i32 id (> 0, distinct) and
 *            u64 median time in ns (>= 1; 2^64-1: it failed when timed)
 *
 *   A reader refuses a read version above its own, and checks every byte
 *   before the cache is used.
 */
#ifndef PLUGRT_ENGINE_TCACHE_H
#define PLUGRT_ENGINE_TCACHE_H

#include "plugrt/engine.h"

#define PRT__TCACHE_MAGIC "PLUGRTTC"
#define PRT__TCACHE_VERSION 1u
#define PRT__TCACHE_HEADER_SIZE 48u
#define PRT__TCACHE_MAX_TACTICS 64

/* One entry: the key's bytes (as in the file) and the times. */
typedef struct prt__tentry {
    uint8_t *key;
    size_t len;
    int32_t nb;
    int32_t ids[PRT__TCACHE_MAX_TACTICS];
    uint64_t ns[PRT__TCACHE_MAX_TACTICS];
} prt__tentry;

/* A layer's key bytes into a new buffer (prt__free), *len its size; the
 * inputs' dims are their opt extents. PRT_STATUS_OUT_OF_MEMORY or
 * PRT_STATUS_INVALID_ARGUMENT (too many inputs). */
prt_status prt__tcache_key(const char *name, const char *version, const char *ns, uint64_t body_hash,
                           const char *device, const prt_tensor_desc *in, int32_t nb_in, uint8_t **key, size_t *len);
/* 1 and ns[i] set for each of the nb ids when the entry of `key` times
 * every one of them; 0 otherwise (ns untouched). */
int prt__tcache_lookup(prt_timing_cache *c, const uint8_t *key, size_t len, const int32_t *ids, int32_t nb,
                       uint64_t *ns);
/* A new entry holding a copy of key and the times (NULL when out of memory
 * or nb is not 1..64). */
prt__tentry *prt__tentry_new(const uint8_t *key, size_t len, const int32_t *ids, const uint64_t *ns, int32_t nb);
void prt__tentry_free(prt__tentry *e); /* NULL ok */
/* Insert entries (an entry with the key of an existing one replaces it; of
 * two with one key, the later wins): all or nothing. On success the cache
 * owns them and *nb_new gets how many keys were not there before; on
 * failure (out of memory) nothing changed and the caller still owns them. */
prt_status prt__tcache_commit(prt_timing_cache *c, prt__tentry **entries, int32_t n, int32_t *nb_new);

#endif
