/*
 * engine/jsonfield.h - plugin field values in network JSON that are more than
 * numbers: string lists, tensors, sub-graphs, and numeric fields read from
 * .npy files (docs/network-json.md, "Fields").
 */
#ifndef PLUGRT_ENGINE_JSONFIELD_H
#define PLUGRT_ENGINE_JSONFIELD_H

#include <cjson/cJSON.h>

#include "plugrt/field.h"

/* Does prt__jsonfield_value handle a value of `type` written as `v`? STRINGS,
 * TENSOR and GRAPH always; other types when `v` is an object {"file": ...}. */
int prt__jsonfield_handles(prt_field_type type, const cJSON *v);

/* "a string", "an array", ... for messages; "nothing" for NULL. */
const char *prt__jsonfield_jtype(const cJSON *v);

/* Parse `v` as `count` elements of `type`. On success *data is one
 * allocation (freed with prt__free) holding the elements and everything they
 * point at. Relative file names are taken from `base_dir` (NULL: the working
 * directory). On failure the message, prefixed by `what`, goes to err. */
prt_status prt__jsonfield_value(const char *what, prt_field_type type, const cJSON *v, const char *base_dir,
                                void **data, int64_t *count, char *err, size_t cap);

#endif
