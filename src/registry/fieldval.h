/*
 * registry/fieldval.h - element rules of field values, and deep copies.
 *
 * The compound field types (STRINGS, TENSOR, GRAPH) hold pointers to more
 * data. Everything that checks or copies a field goes through here, so the
 * schema validator, the owned collections and the field decoder agree on
 * what a well-formed element is and how much a copy takes.
 */
#ifndef PLUGRT_REGISTRY_FIELDVAL_H
#define PLUGRT_REGISTRY_FIELDVAL_H

#include "core/core.h"
#include "plugrt/field.h"

/* Non-zero for STRINGS, TENSOR and GRAPH. */
int prt__fieldval_is_compound(prt_field_type type);

/* Largest tensor payload or sub-graph body a field element may hold. */
#define PRT__FIELDVAL_MAX_BYTES ((int64_t)1 << 40)

/* Bytes of a tensor element's data: volume(dims) x dtype size; -1 when the
 * dtype is unknown, a dim is negative or the product exceeds
 * PRT__FIELDVAL_MAX_BYTES. */
int64_t prt__fieldval_tensor_bytes(const prt_field_tensor *t);

/* Check the elements of a compound field (other types pass). On failure
 * writes "<label>: <what> \"<name>\" ..." to `t` and returns non-zero. */
int prt__fieldval_check(prt__text *t, const char *label, const char *what, const char *name,
                        prt_field_type type, const void *data, int64_t count);

/* Bytes a deep copy of `count` checked elements takes (a multiple of 8;
 * SIZE_MAX on overflow). */
size_t prt__fieldval_copy_size(prt_field_type type, const void *data, int64_t count);

/* Deep-copy `count` checked elements into dst (prt__fieldval_copy_size bytes,
 * 8-aligned); the copy's element array starts at dst. */
void prt__fieldval_copy(prt_field_type type, const void *data, int64_t count, uint8_t *dst);

#endif
