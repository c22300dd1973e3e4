/*
 * registry/schema.c - field schemas.
 *
 * prt__schema_check looks at the schema a creator publishes (once, when the
 * creator is registered); prt_fields_validate checks a caller's collection
 * against it and builds the normalized collection the creator receives: one
 * field per schema entry that has a value, in schema order, each converted to
 * the schema type, absent optional fields filled with their default.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "registry/fieldval.h"
#include "registry/schema.h"

/* sizeof(prt_field_schema) at abi_version 1: the smallest entry we accept. */
#define SCHEMA_V1_SIZE (offsetof(prt_field_schema, doc) + sizeof(const char *))
/* Values shown in a message before "...". */
#define SHOW_VALUES 8
#define ALL_BOUNDS (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL | PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)

/* ---- small helpers --------------------------------------------------------- */

static int type_valid(int t)
{
    return t >= 0 && t < PRT_FIELD_TYPE_COUNT_;
}

static int is_int(prt_field_type t)
{
    return t == PRT_FIELD_INT8 || t == PRT_FIELD_INT16 || t == PRT_FIELD_INT32 ||
           t == PRT_FIELD_INT64;
}

static int is_float(prt_field_type t)
{
    return t == PRT_FIELD_FLOAT16 || t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT64;
}

static int is_numeric(prt_field_type t)
{
    return is_int(t) || is_float(t);
}

/* Lossless conversions: the same type, or a wider one of the same family. */
static int widens_to(prt_field_type given, prt_field_type want)
{
    if (given == want) return 1;
    if (is_int(given) && is_int(want)) return given < want;
    if (is_float(given) && is_float(want)) return given < want;
    return 0;
}

static int64_t elem_i64(const void *data, prt_field_type t, int64_t i)
{
    const char *p = (const char *)data;
    switch (t) {
    case PRT_FIELD_INT8: { int8_t v; memcpy(&v, p + i, 1); return v; }
    case PRT_FIELD_INT16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case PRT_FIELD_INT32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case PRT_FIELD_INT64: { int64_t v; memcpy(&v, p + 8 * i, 8); return v; }
    case PRT_FIELD_BOOL: case PRT_FIELD_CHAR: case PRT_FIELD_BYTES: return (uint8_t)p[i];
    default: return 0;
    }
}

static double elem_f64(const void *data, prt_field_type t, int64_t i)
{
    const char *p = (const char *)data;
    switch (t) {
    case PRT_FIELD_FLOAT16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return prt_f16_to_f32(v); }
    case PRT_FIELD_FLOAT32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case PRT_FIELD_FLOAT64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    default: return (double)elem_i64(data, t, i);
    }
}

/* Exact three-way comparison of an int64 with a (non-NaN) double. */
static int cmp_i64_f64(int64_t v, double b)
{
    double fb;
    int64_t ib;
    if (b >= 9223372036854775808.0) return -1;
    if (b < -9223372036854775808.0) return 1;
    fb = floor(b);
    ib = (int64_t)fb;
    if (v < ib) return -1;
    if (v > ib) return 1;
    return fb == b ? 0 : -1;
}

static int cmp_f64(double v, double b)
{
    return v < b ? -1 : v > b ? 1 : 0;
}

/* Does element i satisfy the entry's bounds? NaN never does. */
static int in_bounds(const prt_field_schema *s, const void *data, prt_field_type t, int64_t i)
{
    int lo, hi;
    if (is_int(t)) {
        int64_t v = elem_i64(data, t, i);
        lo = (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL)) ? cmp_i64_f64(v, s->min) : 1;
        hi = (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)) ? cmp_i64_f64(v, s->max) : -1;
    } else {
        double v = elem_f64(data, t, i);
        if (v != v) return 0;
        lo = (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL)) ? cmp_f64(v, s->min) : 1;
        hi = (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)) ? cmp_f64(v, s->max) : -1;
    }
    if (lo < 0 || (lo == 0 && (s->bounds & PRT_BOUND_MIN_EXCL))) return 0;
    if (hi > 0 || (hi == 0 && (s->bounds & PRT_BOUND_MAX_EXCL))) return 0;
    return 1;
}

/* A value as short as reads back exactly: 9 significant digits for a value
 * that came from float16/float32 (`single`), up to 17 for a double. */
static void add_num(prt__text *t, double v, int single)
{
    if (v != v)
        prt__text_add(t, "NaN");
    else if (isinf(v))
        prt__text_add(t, v < 0 ? "-inf" : "inf");
    else if (v == floor(v) && fabs(v) < 1e18)
        prt__text_add(t, "%.0f", v);
    else {
        /* The shortest of 9 or 17 digits that reads back as v. */
        char b[40];
        snprintf(b, sizeof b, "%.9g", v);
        if (!single && strtod(b, NULL) != v) snprintf(b, sizeof b, "%.17g", v);
        prt__text_add(t, "%s", b);
    }
}

static void add_f64(prt__text *t, double v)
{
    add_num(t, v, 0);
}

static void add_elem(prt__text *t, const void *data, prt_field_type type, int64_t i)
{
    if (is_float(type)) {
        add_num(t, elem_f64(data, type, i), type != PRT_FIELD_FLOAT64);
    } else if (type == PRT_FIELD_DIMS) {
        prt_dims d;
        char b[256];
        memcpy(&d, (const char *)data + (size_t)i * sizeof(prt_dims), sizeof d);
        prt__text_add(t, "%s", prt_dims_str(&d, b, sizeof b));
    } else if (type == PRT_FIELD_STRINGS) {
        prt__text_add(t, "\"%.64s\"", ((const char *const *)data)[i]);
    } else if (type == PRT_FIELD_TENSOR) {
        const prt_field_tensor *x = &((const prt_field_tensor *)data)[i];
        char b[256];
        prt__text_add(t, "%s %s", prt_dtype_name(x->dtype), prt_dims_str(&x->dims, b, sizeof b));
    } else if (type == PRT_FIELD_GRAPH) {
        const prt_field_graph *g = &((const prt_field_graph *)data)[i];
        prt__text_add(t, "graph \"%.64s\"", g->name);
    } else {
        prt__text_add(t, "%" PRId64, elem_i64(data, type, i));
    }
}

/* The values of a field as "v" (one value) or "[a, b, ...]". */
static void add_values(prt__text *t, const void *data, prt_field_type type, int64_t count)
{
    int64_t i;
    if (type == PRT_FIELD_CHAR) {
        int n = count > 64 ? 64 : (int)count;
        prt__text_add(t, "\"%.*s%s\"", n, (const char *)data, count > 64 ? "..." : "");
        return;
    }
    if (count == 1) {
        add_elem(t, data, type, 0);
        return;
    }
    prt__text_add(t, "[");
    for (i = 0; i < count && i < SHOW_VALUES; i++) {
        if (i) prt__text_add(t, ", ");
        add_elem(t, data, type, i);
    }
    if (count > SHOW_VALUES) prt__text_add(t, ", ... (%" PRId64 " values)", count);
    prt__text_add(t, "]");
}

static void add_count(prt__text *t, int64_t min, int64_t max)
{
    if (max == min)
        prt__text_add(t, "%" PRId64 " value%s", min, min == 1 ? "" : "s");
    else if (max == PRT_COUNT_UNBOUNDED && min == 0)
        prt__text_add(t, "any number of values");
    else if (max == PRT_COUNT_UNBOUNDED)
        prt__text_add(t, "at least %" PRId64 " value%s", min, min == 1 ? "" : "s");
    else if (min == 0)
        prt__text_add(t, "at most %" PRId64 " value%s", max, max == 1 ? "" : "s");
    else
        prt__text_add(t, "%" PRId64 " to %" PRId64 " values", min, max);
}

static void add_bounds(prt__text *t, const prt_field_schema *s)
{
    int has_min = (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL)) != 0;
    int has_max = (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)) != 0;
    if (has_min && has_max) {
        prt__text_add(t, "in %s", (s->bounds & PRT_BOUND_MIN_EXCL) ? "(" : "[");
        add_f64(t, s->min);
        prt__text_add(t, ", ");
        add_f64(t, s->max);
        prt__text_add(t, "%s", (s->bounds & PRT_BOUND_MAX_EXCL) ? ")" : "]");
    } else if (has_min) {
        prt__text_add(t, "%s ", (s->bounds & PRT_BOUND_MIN_EXCL) ? ">" : ">=");
        add_f64(t, s->min);
    } else if (has_max) {
        prt__text_add(t, "%s ", (s->bounds & PRT_BOUND_MAX_EXCL) ? "<" : "<=");
        add_f64(t, s->max);
    }
}

/* "needs 2 values >= 1" / "needs 1 float32 value" */
static void add_needs(prt__text *t, const prt_field_schema *s)
{
    prt__text_add(t, "needs ");
    add_count(t, s->min_count, s->max_count);
    if (s->bounds & ALL_BOUNDS) {
        prt__text_add(t, " ");
        add_bounds(t, s);
    }
}

const char *prt__schema_label(const prt_plugin_creator *c, char *buf, size_t cap)
{
    prt__text t = prt__text_init(buf, cap);
    if (!c) {
        prt__text_add(&t, "(no creator)");
        return buf;
    }
    if (c->plugin_namespace && c->plugin_namespace[0]) prt__text_add(&t, "%s::", c->plugin_namespace);
    prt__text_add(&t, "%s v%s", c->name ? c->name : "(unnamed)", c->version ? c->version : "?");
    return buf;
}

/* Checks of element values that do not depend on the schema type: bool is 0
 * or 1, dims are well formed; then the bounds of the entry. `type` is the
 * type the data is in. Writes the message and returns non-zero on failure. */
static int check_values(prt__text *t, const char *label, const char *what, const prt_field_schema *s,
                        const void *data, prt_field_type type, int64_t count)
{
    int64_t i;
    if (prt__fieldval_check(t, label, what, s->name, type, data, count)) return 1;
    if (type == PRT_FIELD_BOOL) {
        for (i = 0; i < count; i++) {
            uint8_t v = ((const uint8_t *)data)[i];
            if (v > 1) {
                prt__text_add(t, "%s: %s \"%s\" needs bool values 0 or 1, got %u at element %" PRId64,
                              label, what, s->name, v, i);
                return 1;
            }
        }
    }
    if (type == PRT_FIELD_DIMS) {
        for (i = 0; i < count; i++) {
            prt_dims d;
            int32_t k;
            memcpy(&d, (const char *)data + (size_t)i * sizeof(prt_dims), sizeof d);
            if (d.nb < 0 || d.nb > PRT_MAX_DIMS || d.reserved_ != 0) {
                prt__text_add(t, "%s: %s \"%s\" needs dims with 0 to %d extents and reserved_ 0, got nb %d, "
                              "reserved_ %d at element %" PRId64, label, what, s->name, PRT_MAX_DIMS,
                              (int)d.nb, (int)d.reserved_, i);
                return 1;
            }
            for (k = 0; k < d.nb; k++) {
                if (d.d[k] < PRT_DIM_DYNAMIC) {
                    prt__text_add(t, "%s: %s \"%s\" needs extents >= 0 (or -1 for dynamic), got %" PRId64
                                  " in dimension %d of element %" PRId64, label, what, s->name, d.d[k],
                                  (int)k, i);
                    return 1;
                }
            }
        }
    }
    if ((s->bounds & ALL_BOUNDS) && is_numeric(type)) {
        for (i = 0; i < count; i++) {
            if (in_bounds(s, data, type, i)) continue;
            prt__text_add(t, "%s: %s \"%s\" ", label, what, s->name);
            add_needs(t, s);
            prt__text_add(t, ", got ");
            add_values(t, data, type, count);
            if (count != 1) {
                prt__text_add(t, " (element %" PRId64 " is ", i);
                add_elem(t, data, type, i);
                prt__text_add(t, ")");
            }
            return 1;
        }
    }
    return 0;
}

/* ---- the schema a creator publishes --------------------------------------- */

prt_status prt__schema_check(const prt_plugin_creator *c, char *err, size_t cap)
{
    char label[256];
    prt__text t = prt__text_init(err, cap);
    int32_t i, j;
    prt__schema_label(c, label, sizeof label);
    if (c->nb_fields < 0) {
        prt__text_add(&t, "%s: schema has %d entries, expected 0 or more", label, (int)c->nb_fields);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->nb_fields == 0) return PRT_OK;
    if (!c->fields) {
        prt__text_add(&t, "%s: nb_fields is %d but the schema array is NULL", label, (int)c->nb_fields);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->field_schema_size < SCHEMA_V1_SIZE || c->field_schema_size % _Alignof(prt_field_schema)) {
        prt__text_add(&t, "%s: field_schema_size is %u, expected sizeof(prt_field_schema) (%zu or more, "
                      "a multiple of %zu)", label, (unsigned)c->field_schema_size, SCHEMA_V1_SIZE,
                      (size_t)_Alignof(prt_field_schema));
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < c->nb_fields; i++) {
        const prt_field_schema *s = prt__schema_entry(c, i);
        int has_min = (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL)) != 0;
        int has_max = (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)) != 0;
        if (!s->name || !s->name[0]) {
            prt__text_add(&t, "%s: schema entry %d has no name", label, (int)i);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        for (j = 0; j < i; j++) {
            if (strcmp(prt__schema_entry(c, j)->name, s->name) == 0) {
                prt__text_add(&t, "%s: schema names field \"%s\" twice (entries %d and %d)", label, s->name,
                              (int)j, (int)i);
                return PRT_STATUS_INVALID_ARGUMENT;
            }
        }
        if (!type_valid((int)s->type)) {
            prt__text_add(&t, "%s: schema field \"%s\" has type %d, expected a prt_field_type (0 to %d)",
                          label, s->name, (int)s->type, PRT_FIELD_TYPE_COUNT_ - 1);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (s->min_count < 0 || s->max_count < PRT_COUNT_UNBOUNDED ||
            (s->max_count != PRT_COUNT_UNBOUNDED && s->min_count > s->max_count)) {
            prt__text_add(&t, "%s: schema field \"%s\" has count range [%" PRId64 ", %" PRId64 "], expected "
                          "0 <= min_count <= max_count (or max_count PRT_COUNT_UNBOUNDED)", label, s->name,
                          s->min_count, s->max_count);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (s->bounds & ~(uint32_t)ALL_BOUNDS) {
            prt__text_add(&t, "%s: schema field \"%s\" has unknown bound flags 0x%x", label, s->name,
                          (unsigned)(s->bounds & ~(uint32_t)ALL_BOUNDS));
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if ((has_min || has_max) && !is_numeric(s->type)) {
            prt__text_add(&t, "%s: schema field \"%s\" has value bounds but type %s; bounds apply to integer "
                          "and float types only", label, s->name, prt_field_type_name(s->type));
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if ((has_min && s->min != s->min) || (has_max && s->max != s->max)) {
            prt__text_add(&t, "%s: schema field \"%s\" has a NaN bound", label, s->name);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (has_min && has_max &&
            (s->min > s->max ||
             (s->min == s->max && (s->bounds & (PRT_BOUND_MIN_EXCL | PRT_BOUND_MAX_EXCL))))) {
            prt__text_add(&t, "%s: schema field \"%s\" allows no value: ", label, s->name);
            add_bounds(&t, s);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (s->required && s->default_data) {
            prt__text_add(&t, "%s: schema field \"%s\" is required and also has a default; a default is for "
                          "optional fields", label, s->name);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (!s->default_data && s->default_count != 0) {
            prt__text_add(&t, "%s: schema field \"%s\" has default_count %" PRId64 " but no default_data",
                          label, s->name, s->default_count);
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (s->default_data) {
            if (s->default_count < s->min_count ||
                (s->max_count != PRT_COUNT_UNBOUNDED && s->default_count > s->max_count)) {
                prt__text_add(&t, "%s: schema field \"%s\" ", label, s->name);
                add_needs(&t, s);
                prt__text_add(&t, ", but its default has %" PRId64 " value%s", s->default_count,
                              s->default_count == 1 ? "" : "s");
                return PRT_STATUS_INVALID_ARGUMENT;
            }
            if (check_values(&t, label, "the default of schema field", s, s->default_data, s->type,
                             s->default_count))
                return PRT_STATUS_INVALID_ARGUMENT;
        }
    }
    return PRT_OK;
}

/* ---- owned collections ------------------------------------------------------ */

prt_owned_fields *prt__owned_fields_alloc(int32_t nb, size_t data_bytes, size_t name_bytes,
                                          prt_field **fields, uint8_t **data, char **names)
{
    size_t head = prt__schema_align8(sizeof(prt_owned_fields));
    size_t arr, total;
    prt_owned_fields *of;
    if (nb < 0 || (size_t)nb > (SIZE_MAX / 2) / sizeof(prt_field)) return NULL;
    arr = (size_t)nb * sizeof(prt_field);
    total = prt__schema_add(prt__schema_add(prt__schema_add(head, arr), data_bytes), name_bytes);
    if (total == SIZE_MAX) return NULL;
    of = prt__malloc(total);
    if (!of) return NULL;
    memset(of, 0, total);
    *fields = (prt_field *)(void *)((char *)of + head);
    *data = (uint8_t *)of + head + arr;
    *names = (char *)of + head + arr + data_bytes;
    of->fc.fields = nb ? *fields : NULL;
    of->fc.nb = nb;
    of->fc.reserved_ = 0;
    of->total = total;
    return of;
}

const prt_fields *prt_owned_fields_get(const prt_owned_fields *f)
{
    return f ? &f->fc : NULL;
}

void prt_owned_fields_free(prt_owned_fields *f)
{
    prt__free(f);
}

/* ---- validation ---------------------------------------------------------------- */

static int32_t schema_find(const prt_plugin_creator *c, const char *name)
{
    int32_t j;
    for (j = 0; j < c->nb_fields; j++)
        if (strcmp(prt__schema_entry(c, j)->name, name) == 0) return j;
    return -1;
}

static int32_t input_find(const prt_fields *in, const char *name)
{
    int32_t i;
    for (i = 0; in && i < in->nb; i++)
        if (in->fields[i].name && strcmp(in->fields[i].name, name) == 0) return i;
    return -1;
}

static void add_known(prt__text *t, const prt_plugin_creator *c)
{
    int32_t j;
    if (c->nb_fields == 0) {
        prt__text_add(t, " (this plugin takes no fields)");
        return;
    }
    prt__text_add(t, " (known: ");
    for (j = 0; j < c->nb_fields; j++) prt__text_add(t, "%s%s", j ? ", " : "", prt__schema_entry(c, j)->name);
    prt__text_add(t, ")");
}

/* Types a `want` field also accepts, e.g. "int8, int16". */
static void add_narrower(prt__text *t, prt_field_type want)
{
    int k, first = 1;
    for (k = 0; k < (int)want; k++) {
        if (widens_to((prt_field_type)k, want)) {
            prt__text_add(t, "%s%s", first ? "" : ", ", prt_field_type_name((prt_field_type)k));
            first = 0;
        }
    }
}

/* One input field against its schema entry. */
static prt_status check_field(prt__text *t, const char *label, const prt_fields *in, int32_t i,
                              const prt_plugin_creator *c, int32_t *schema_index)
{
    const prt_field *f = &in->fields[i];
    const prt_field_schema *s;
    int32_t j, k;
    if (!f->name) {
        prt__text_add(t, "%s: field entry %d has no name", label, (int)i);
        return PRT_STATUS_INVALID_FIELD;
    }
    j = schema_find(c, f->name);
    if (j < 0) {
        prt__text_add(t, "%s: unknown field \"%s\"", label, f->name);
        add_known(t, c);
        return PRT_STATUS_INVALID_FIELD;
    }
    s = prt__schema_entry(c, j);
    for (k = 0; k < i; k++) {
        if (in->fields[k].name && strcmp(in->fields[k].name, f->name) == 0) {
            prt__text_add(t, "%s: field \"%s\" given twice (entries %d and %d)", label, f->name, (int)k,
                          (int)i);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    if (!type_valid((int)f->type)) {
        prt__text_add(t, "%s: field \"%s\" has type %d, expected %s", label, f->name, (int)f->type,
                      prt_field_type_name(s->type));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (f->reserved_ != 0) {
        prt__text_add(t, "%s: field \"%s\" has reserved_ %d, expected 0", label, f->name, (int)f->reserved_);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (f->count < 0 || f->count > INT64_MAX / (int64_t)sizeof(prt_dims)) {
        prt__text_add(t, "%s: field \"%s\" has count %" PRId64 ", expected 0 or more", label, f->name,
                      f->count);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (f->count > 0 && !f->data) {
        prt__text_add(t, "%s: field \"%s\" has %" PRId64 " values but its data pointer is NULL", label,
                      f->name, f->count);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (!widens_to(f->type, s->type)) {
        prt__text_add(t, "%s: field \"%s\" needs %s", label, f->name, prt_field_type_name(s->type));
        if ((is_int(s->type) && s->type != PRT_FIELD_INT8) ||
            (is_float(s->type) && s->type != PRT_FIELD_FLOAT16)) {
            prt__text_add(t, " (or ");
            add_narrower(t, s->type);
            prt__text_add(t, ", widened)");
        }
        prt__text_add(t, ", got %s", prt_field_type_name(f->type));
        if ((is_int(f->type) && is_int(s->type)) || (is_float(f->type) && is_float(s->type)))
            prt__text_add(t, ", which would narrow: narrowing is refused");
        return PRT_STATUS_INVALID_FIELD;
    }
    if (f->count < s->min_count || (s->max_count != PRT_COUNT_UNBOUNDED && f->count > s->max_count)) {
        prt__text_add(t, "%s: field \"%s\" needs ", label, f->name);
        add_count(t, s->min_count, s->max_count);
        prt__text_add(t, ", got %" PRId64, f->count);
        if (f->count > 0 && f->type != PRT_FIELD_BYTES && !prt__fieldval_is_compound(f->type)) {
            prt__text_add(t, ": ");
            add_values(t, f->data, f->type, f->count);
        }
        return PRT_STATUS_INVALID_FIELD;
    }
    if (check_values(t, label, "field", s, f->data, f->type, f->count)) return PRT_STATUS_INVALID_FIELD;
    *schema_index = j;
    return PRT_OK;
}

/* Write `count` elements of `from` (type `ft`) as type `tt` into dst. */
static void convert(void *dst, prt_field_type tt, const void *from, prt_field_type ft, int64_t count)
{
    int64_t i;
    char *d = (char *)dst;
    if (count <= 0) return;
    if (tt == ft) {
        memcpy(dst, from, (size_t)count * prt_field_type_size(tt));
        return;
    }
    for (i = 0; i < count; i++) {
        if (is_int(tt)) {
            int64_t v = elem_i64(from, ft, i);
            switch (tt) {
            case PRT_FIELD_INT16: { int16_t x = (int16_t)v; memcpy(d + 2 * i, &x, 2); break; }
            case PRT_FIELD_INT32: { int32_t x = (int32_t)v; memcpy(d + 4 * i, &x, 4); break; }
            default: memcpy(d + 8 * i, &v, 8); break;
            }
        } else {
            double v = elem_f64(from, ft, i);
            if (tt == PRT_FIELD_FLOAT32) {
                float x = (float)v;
                memcpy(d + 4 * i, &x, 4);
            } else {
                memcpy(d + 8 * i, &v, 8);
            }
        }
    }
}

prt_status prt_fields_validate(const prt_plugin_creator *c, const prt_fields *in,
                               prt_owned_fields **out, char *err, size_t cap)
{
    char label[256];
    prt__text t = prt__text_init(err, cap);
    prt_status st;
    int32_t i, j, nb_out = 0;
    size_t data_bytes = 0, name_bytes = 0;
    prt_owned_fields *of;
    prt_field *fields;
    uint8_t *data;
    char *names;
    if (!c || !out) {
        prt__text_add(&t, "prt_fields_validate: %s is NULL", !c ? "the creator" : "the output pointer");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt__schema_label(c, label, sizeof label);
    st = prt__schema_check(c, err, cap);
    if (st != PRT_OK) return st;
    if (in && (in->nb < 0 || (in->nb > 0 && !in->fields))) {
        prt__text_add(&t, "%s: the field collection has %d entries and fields %s", label, (int)in->nb,
                      in->fields ? "set" : "NULL");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; in && i < in->nb; i++) {
        st = check_field(&t, label, in, i, c, &j);
        if (st != PRT_OK) return st;
    }
    /* Sizes of the normalized collection, in schema order. */
    for (j = 0; j < c->nb_fields; j++) {
        const prt_field_schema *s = prt__schema_entry(c, j);
        int32_t k = input_find(in, s->name);
        int64_t count;
        if (k >= 0) {
            count = in->fields[k].count;
        } else if (s->required) {
            prt__text_add(&t, "%s: required field \"%s\" is missing (it ", label, s->name);
            add_needs(&t, s);
            prt__text_add(&t, " of type %s)", prt_field_type_name(s->type));
            return PRT_STATUS_INVALID_FIELD;
        } else if (s->default_data) {
            count = s->default_count;
        } else {
            continue;
        }
        nb_out++;
        data_bytes = prt__schema_add(data_bytes,
                                     prt__fieldval_copy_size(s->type, k >= 0 ? in->fields[k].data : s->default_data,
                                                             count));
        name_bytes = prt__schema_add(name_bytes, strlen(s->name) + 1);
    }
    of = prt__owned_fields_alloc(nb_out, data_bytes, name_bytes, &fields, &data, &names);
    if (!of) {
        prt__text_add(&t, "%s: out of memory normalizing %d fields (%zu bytes)", label, (int)nb_out,
                      data_bytes);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    nb_out = 0;
    for (j = 0; j < c->nb_fields; j++) {
        const prt_field_schema *s = prt__schema_entry(c, j);
        int32_t k = input_find(in, s->name);
        prt_field *f;
        size_t n = strlen(s->name) + 1;
        if (k < 0 && !s->default_data) continue;
        f = &fields[nb_out++];
        memcpy(names, s->name, n);
        f->name = names;
        names += n;
        f->type = s->type;
        f->reserved_ = 0;
        const void *from = k >= 0 ? in->fields[k].data : s->default_data;
        f->count = k >= 0 ? in->fields[k].count : s->default_count;
        if (prt__fieldval_is_compound(s->type))
            prt__fieldval_copy(s->type, from, f->count, data);
        else
            convert(data, s->type, from, k >= 0 ? in->fields[k].type : s->type, f->count);
        f->data = f->count ? data : NULL;
        data += prt__fieldval_copy_size(s->type, from, f->count);
    }
    *out = of;
    return PRT_OK;
}
