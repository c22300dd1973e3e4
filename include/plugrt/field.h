/*
 * plugrt/field.h - typed named fields, field collections, field schemas.
 *
 * Contract
 *   A field is a name, a type and `count` elements stored contiguously in
 *   host byte order. A collection is a borrowed array of fields: whoever
 *   builds it owns the memory, and a callee that receives one may read it only
 *   during the call unless its documentation says otherwise.
 *
 *   Element layout per type: INT8..INT64 and FLOAT32/FLOAT64 as the C types;
 *   FLOAT16 as uint16_t half bits; CHAR as bytes (no terminating NUL counted);
 *   BOOL as one uint8_t each (0 or 1); BYTES as raw uint8_t; DIMS as prt_dims;
 *   STRINGS as const char * (one per string); TENSOR as prt_field_tensor;
 *   GRAPH as prt_field_graph. The last three point at more data, which the
 *   host copies with the field wherever it copies fields.
 *
 *   A creator publishes a schema (an array of prt_field_schema). The host
 *   validates every collection against it before the creator sees it, and
 *   hands the creator a normalized collection: each field converted to its
 *   schema type (lossless widening int8 -> int16 -> int32 -> int64 and
 *   float16 -> float32 -> float64 is accepted), and every absent optional
 *   field that has a default filled in with that default.
 */
#ifndef PLUGRT_FIELD_H
#define PLUGRT_FIELD_H

#include <stdarg.h>
#include <stdio.h>

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prt_field_type {
    PRT_FIELD_INT8 = 0,
    PRT_FIELD_INT16 = 1,
    PRT_FIELD_INT32 = 2,
    PRT_FIELD_INT64 = 3,
    PRT_FIELD_FLOAT16 = 4,
    PRT_FIELD_FLOAT32 = 5,
    PRT_FIELD_FLOAT64 = 6,
    PRT_FIELD_CHAR = 7,
    PRT_FIELD_DIMS = 8,
    PRT_FIELD_BOOL = 9,
    PRT_FIELD_BYTES = 10,
    /* Appended in abi_version 2: compound types whose elements point at more
     * data (see the element structs below). They never widen or convert. */
    PRT_FIELD_STRINGS = 11, /* data: const char *const *, count strings (each non-NULL, NUL-terminated) */
    PRT_FIELD_TENSOR = 12,  /* data: `count` prt_field_tensor */
    PRT_FIELD_GRAPH = 13,   /* data: `count` prt_field_graph */
    PRT_FIELD_TYPE_COUNT_
} prt_field_type;

/* One element of a PRT_FIELD_TENSOR field: a constant tensor (initializer-like
 * attributes, constant values). `dims` are concrete (no -1); `data` holds
 * volume(dims) elements of `dtype`, densely packed, row-major, in host byte
 * order (NULL allowed when the volume is 0). */
typedef struct prt_field_tensor {
    prt_dtype dtype;
    int32_t reserved; /* must be 0 */
    prt_dims dims;
    const void *data;
} prt_field_tensor;

/* Formats of a sub-graph's body. */
typedef enum prt_graph_format {
    PRT_GRAPH_NETWORK_JSON = 1, /* a network in the JSON syntax of docs/network-json.md (UTF-8 text) */
    PRT_GRAPH_ONNX = 2          /* a serialized ONNX GraphProto */
} prt_graph_format;

/* One element of a PRT_FIELD_GRAPH field: a sub-network (the bodies of If,
 * Loop, Scan), carried by value so that it is saved and loaded with the
 * plugin's other fields. The field only holds it; the plugin has the host
 * build and run it (prt_host_subnet_build / _run in plugin.h, ABI 3). `name` is non-NULL and non-empty; `data` holds `size` bytes
 * (NULL allowed when size is 0). */
typedef struct prt_field_graph {
    const char *name;
    prt_graph_format format;
    int32_t reserved; /* must be 0 */
    const void *data;
    int64_t size;
} prt_field_graph;

typedef struct prt_field {
    const char *name;   /* NUL-terminated */
    const void *data;   /* `count` elements of `type`; may be NULL if count == 0 */
    prt_field_type type;
    int32_t reserved_;  /* must be 0 */
    int64_t count;
} prt_field;

typedef struct prt_fields {
    const prt_field *fields;
    int32_t nb;
    int32_t reserved_;
} prt_fields;

/* Bounds flags of a schema entry. */
enum {
    PRT_BOUND_NONE = 0,
    PRT_BOUND_MIN = 1,      /* value >= min */
    PRT_BOUND_MIN_EXCL = 2, /* value > min (implies MIN) */
    PRT_BOUND_MAX = 4,      /* value <= max */
    PRT_BOUND_MAX_EXCL = 8  /* value < max (implies MAX) */
};

#define PRT_COUNT_UNBOUNDED (-1)

/* One entry of a creator's schema. Frozen at abi_version 1; a creator states
 * sizeof(prt_field_schema) in its `field_schema_size`, and the host strides
 * by that, so entries may grow by appending members. */
typedef struct prt_field_schema {
    const char *name;
    prt_field_type type;
    int32_t required;        /* non-zero: must be present */
    int64_t min_count;       /* elements, inclusive */
    int64_t max_count;       /* inclusive; PRT_COUNT_UNBOUNDED for no limit */
    const void *default_data;/* optional fields: the value used when absent (NULL: none) */
    int64_t default_count;
    uint32_t bounds;         /* PRT_BOUND_* flags, applied to every element of numeric types */
    uint32_t reserved_;
    double min;
    double max;
    const char *doc;         /* one line for `plugrt plugins`; may be NULL */
} prt_field_schema;

static inline const char *prt_field_type_name(prt_field_type t)
{
    switch (t) {
    case PRT_FIELD_INT8: return "int8";
    case PRT_FIELD_INT16: return "int16";
    case PRT_FIELD_INT32: return "int32";
    case PRT_FIELD_INT64: return "int64";
    case PRT_FIELD_FLOAT16: return "float16";
    case PRT_FIELD_FLOAT32: return "float32";
    case PRT_FIELD_FLOAT64: return "float64";
    case PRT_FIELD_CHAR: return "char";
    case PRT_FIELD_DIMS: return "dims";
    case PRT_FIELD_BOOL: return "bool";
    case PRT_FIELD_BYTES: return "bytes";
    case PRT_FIELD_STRINGS: return "strings";
    case PRT_FIELD_TENSOR: return "tensor";
    case PRT_FIELD_GRAPH: return "graph";
    default: return "?";
    }
}

/* Bytes per element of a field type; 0 outside the enum. */
static inline size_t prt_field_type_size(prt_field_type t)
{
    switch (t) {
    case PRT_FIELD_INT8: case PRT_FIELD_CHAR: case PRT_FIELD_BOOL: case PRT_FIELD_BYTES: return 1;
    case PRT_FIELD_INT16: case PRT_FIELD_FLOAT16: return 2;
    case PRT_FIELD_INT32: case PRT_FIELD_FLOAT32: return 4;
    case PRT_FIELD_INT64: case PRT_FIELD_FLOAT64: return 8;
    case PRT_FIELD_DIMS: return sizeof(prt_dims);
    case PRT_FIELD_STRINGS: return sizeof(const char *);
    case PRT_FIELD_TENSOR: return sizeof(prt_field_tensor);
    case PRT_FIELD_GRAPH: return sizeof(prt_field_graph);
    default: return 0;
    }
}

/* A bounded message buffer that hosts hand to plugins and creators so that a
 * failing call can say why. Writing truncates, never overflows. */
typedef struct prt_msg {
    char *buf;
    size_t cap;
} prt_msg;

static inline void prt_msg_vset(prt_msg *m, const char *fmt, va_list ap)
{
    if (m && m->buf && m->cap) vsnprintf(m->buf, m->cap, fmt, ap);
}

static inline void prt_msg_set(prt_msg *m, const char *fmt, ...) PRT_PRINTF(2, 3);
static inline void prt_msg_set(prt_msg *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt_msg_vset(m, fmt, ap);
    va_end(ap);
}

/* ---- reading a normalized collection (what a creator receives) ---------- */

static inline const prt_field *prt_fields_find(const prt_fields *fc, const char *name)
{
    int32_t i;
    if (!fc || !name) return NULL;
    for (i = 0; i < fc->nb; i++)
        if (fc->fields[i].name && strcmp(fc->fields[i].name, name) == 0) return &fc->fields[i];
    return NULL;
}

/* Element `i` of any integer or bool field as int64. Returns 0 on success,
 * -1 if the field is absent, not integral, or shorter than i+1. */
static inline int prt_field_get_i64(const prt_field *f, int64_t i, int64_t *out)
{
    if (!f || i < 0 || i >= f->count || !f->data) return -1;
    switch (f->type) {
    case PRT_FIELD_INT8: *out = ((const int8_t *)f->data)[i]; return 0;
    case PRT_FIELD_INT16: *out = ((const int16_t *)f->data)[i]; return 0;
    case PRT_FIELD_INT32: *out = ((const int32_t *)f->data)[i]; return 0;
    case PRT_FIELD_INT64: *out = ((const int64_t *)f->data)[i]; return 0;
    case PRT_FIELD_BOOL: *out = ((const uint8_t *)f->data)[i] != 0; return 0;
    default: return -1;
    }
}

/* Element `i` of any numeric field as double (integers, floats, bool). */
static inline int prt_field_get_f64(const prt_field *f, int64_t i, double *out)
{
    int64_t v;
    if (!f || i < 0 || i >= f->count || !f->data) return -1;
    switch (f->type) {
    case PRT_FIELD_FLOAT16: *out = prt_f16_to_f32(((const uint16_t *)f->data)[i]); return 0;
    case PRT_FIELD_FLOAT32: *out = ((const float *)f->data)[i]; return 0;
    case PRT_FIELD_FLOAT64: *out = ((const double *)f->data)[i]; return 0;
    default:
        if (prt_field_get_i64(f, i, &v) != 0) return -1;
        *out = (double)v;
        return 0;
    }
}

/* String `i` of a PRT_FIELD_STRINGS field, or NULL. */
static inline const char *prt_field_get_string(const prt_field *f, int64_t i)
{
    if (!f || f->type != PRT_FIELD_STRINGS || i < 0 || i >= f->count || !f->data) return NULL;
    return ((const char *const *)f->data)[i];
}

/* Tensor `i` of a PRT_FIELD_TENSOR field, or NULL. */
static inline const prt_field_tensor *prt_field_get_tensor(const prt_field *f, int64_t i)
{
    if (!f || f->type != PRT_FIELD_TENSOR || i < 0 || i >= f->count || !f->data) return NULL;
    return &((const prt_field_tensor *)f->data)[i];
}

/* Sub-graph `i` of a PRT_FIELD_GRAPH field, or NULL. */
static inline const prt_field_graph *prt_field_get_graph(const prt_field *f, int64_t i)
{
    if (!f || f->type != PRT_FIELD_GRAPH || i < 0 || i >= f->count || !f->data) return NULL;
    return &((const prt_field_graph *)f->data)[i];
}

/* Convenience for creators: the named field's element i, or `dflt` when the
 * field is absent (normalized collections already hold defaults). */
static inline int64_t prt_fields_i64(const prt_fields *fc, const char *name, int64_t i, int64_t dflt)
{
    int64_t v;
    return prt_field_get_i64(prt_fields_find(fc, name), i, &v) == 0 ? v : dflt;
}

static inline double prt_fields_f64(const prt_fields *fc, const char *name, int64_t i, double dflt)
{
    double v;
    return prt_field_get_f64(prt_fields_find(fc, name), i, &v) == 0 ? v : dflt;
}

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_FIELD_H */
