/*
 * registry/schema.h - field schemas: checking a creator's schema, validating
 * and normalizing collections against it, owned collections.
 *
 * An owned collection (prt_owned_fields) is one allocation: the header, the
 * field array, every field's data (8-byte aligned) and every name. It is
 * freed with prt_owned_fields_free.
 */
#ifndef PLUGRT_REGISTRY_SCHEMA_H
#define PLUGRT_REGISTRY_SCHEMA_H

#include "plugrt/registry.h"

struct prt_owned_fields {
    prt_fields fc;
    size_t total; /* bytes of the whole allocation */
};

/* Schema entry i of a creator (entries are field_schema_size bytes apart). */
static inline const prt_field_schema *prt__schema_entry(const prt_plugin_creator *c, int32_t i)
{
    return prt_creator_schema_entry(c, i);
}

/* "Name v1", or "ns::Name v1" outside the default namespace. */
const char *prt__schema_label(const prt_plugin_creator *c, char *buf, size_t cap);

/* Check the schema a creator publishes: entry size, types, counts, bounds,
 * defaults, names (non-NULL, unique). */
prt_status prt__schema_check(const prt_plugin_creator *c, char *err, size_t cap);

/* Storage for an owned collection of `nb` fields with `data_bytes` of data
 * (callers round each field up with prt__schema_align8) and `name_bytes` of
 * names (each with its NUL). Returns NULL when out of memory or when the sizes
 * overflow. The caller fills fields[], data and names. */
prt_owned_fields *prt__owned_fields_alloc(int32_t nb, size_t data_bytes, size_t name_bytes,
                                          prt_field **fields, uint8_t **data, char **names);

/* n rounded up to a multiple of 8; SIZE_MAX when that overflows. */
static inline size_t prt__schema_align8(size_t n)
{
    return n > SIZE_MAX - 7 ? SIZE_MAX : (n + 7) & ~(size_t)7;
}

/* a + b, or SIZE_MAX when that overflows (SIZE_MAX stays SIZE_MAX). */
static inline size_t prt__schema_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

#endif
