/*
 * registry/fieldser.h - a field collection on the wire.
 *
 * Layout: u32 count, then per field: str name, u32 type, u64 element count,
 * payload (each element little-endian at its type's width; DIMS as i32 nb,
 * i32 0, 8 x i64; BOOL one byte 0/1). Used by plugin records and plans.
 */
#ifndef PLUGRT_REGISTRY_FIELDSER_H
#define PLUGRT_REGISTRY_FIELDSER_H

#include "plugrt/registry.h"

/* Fails (returns non-OK, w->failed set) only on writer overflow or an invalid
 * field (unknown type, negative count, NULL data with count > 0). */
prt_status prt__fields_write(prt_writer *w, const prt_fields *fc, char *err, size_t cap);
/* Reads one collection into a new owned copy; every count and length is
 * checked against what is left in the reader. */
prt_status prt__fields_read(prt_reader *r, prt_owned_fields **out, char *err, size_t cap);

#endif
