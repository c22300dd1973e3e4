/*
 * registry/fieldser.c - a field collection on the wire (layout in fieldser.h).
 *
 * Every element goes through the little-endian writer and reader one value
 * at a time; nothing is copied as a struct. Reading makes two passes over the
 * bytes: the first checks every count and length and sizes the owned copy,
 * the second decodes into it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "registry/fieldser.h"
#include "registry/fieldval.h"
#include "registry/schema.h"

#define DIMS_WIRE (4 + 4 + 8 * PRT_MAX_DIMS)

/* Bytes per element on the wire (DIMS: i32 nb, i32 0, 8 x i64); for the
 * compound types the least an element takes (STRINGS: u32 length; TENSOR:
 * u32 dtype, u32 0, dims, u64 byte count; GRAPH: str name, u32 format, u32 0,
 * u64 size). */
static size_t wire_size(uint32_t type)
{
    switch (type) {
    case PRT_FIELD_DIMS: return DIMS_WIRE;
    case PRT_FIELD_STRINGS: return 4;
    case PRT_FIELD_TENSOR: return 4 + 4 + DIMS_WIRE + 8;
    case PRT_FIELD_GRAPH: return 4 + 4 + 4 + 8;
    default: return type < PRT_FIELD_TYPE_COUNT_ ? prt_field_type_size((prt_field_type)type) : 0;
    }
}

static void write_dims(prt_writer *w, const prt_dims *d)
{
    int k;
    prt_write_i32(w, d->nb);
    prt_write_i32(w, 0);
    for (k = 0; k < PRT_MAX_DIMS; k++) prt_write_i64(w, k < d->nb ? d->d[k] : 0);
}

/* Reads dims written by write_dims; non-zero if malformed (nb, reserved,
 * extents < -1, non-zero unused extents). */
static int read_dims(prt_reader *r, prt_dims *out)
{
    int32_t d, nb = prt_read_i32(r), res = prt_read_i32(r);
    int bad = nb < 0 || nb > PRT_MAX_DIMS || res != 0;
    memset(out, 0, sizeof *out);
    for (d = 0; d < PRT_MAX_DIMS; d++) {
        int64_t e = prt_read_i64(r);
        if (!bad && ((d < nb && e < PRT_DIM_DYNAMIC) || (d >= nb && e != 0))) bad = 1;
        if (d < PRT_MAX_DIMS) out->d[d] = e;
    }
    out->nb = bad ? 0 : nb;
    return bad;
}

static void write_compound(prt_writer *w, prt_field_type type, const void *data, int64_t i)
{
    if (type == PRT_FIELD_STRINGS) {
        prt_write_str(w, ((const char *const *)data)[i]);
    } else if (type == PRT_FIELD_TENSOR) {
        const prt_field_tensor *x = &((const prt_field_tensor *)data)[i];
        int64_t n = prt__fieldval_tensor_bytes(x);
        prt_write_u32(w, (uint32_t)x->dtype);
        prt_write_u32(w, 0);
        write_dims(w, &x->dims);
        prt_write_u64(w, (uint64_t)n);
        if (n > 0) prt_write_bytes(w, x->data, (size_t)n); /* little-endian hosts only */
    } else {
        const prt_field_graph *g = &((const prt_field_graph *)data)[i];
        prt_write_str(w, g->name);
        prt_write_u32(w, (uint32_t)g->format);
        prt_write_u32(w, 0);
        prt_write_u64(w, (uint64_t)g->size);
        if (g->size > 0) prt_write_bytes(w, g->data, (size_t)g->size);
    }
}

static void write_elem(prt_writer *w, prt_field_type type, const void *data, int64_t i)
{
    const char *p = (const char *)data;
    switch (type) {
    case PRT_FIELD_INT8: case PRT_FIELD_CHAR: case PRT_FIELD_BYTES:
        prt_write_u8(w, (uint8_t)p[i]);
        break;
    case PRT_FIELD_BOOL:
        prt_write_u8(w, p[i] != 0);
        break;
    case PRT_FIELD_INT16: case PRT_FIELD_FLOAT16: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        prt_write_u16(w, v);
        break;
    }
    case PRT_FIELD_INT32: case PRT_FIELD_FLOAT32: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        prt_write_u32(w, v);
        break;
    }
    case PRT_FIELD_INT64: case PRT_FIELD_FLOAT64: {
        uint64_t v;
        memcpy(&v, p + 8 * i, 8);
        prt_write_u64(w, v);
        break;
    }
    case PRT_FIELD_DIMS: {
        prt_dims d;
        memcpy(&d, p + (size_t)i * sizeof(prt_dims), sizeof d);
        write_dims(w, &d);
        break;
    }
    case PRT_FIELD_STRINGS: case PRT_FIELD_TENSOR: case PRT_FIELD_GRAPH:
        write_compound(w, type, data, i);
        break;
    default:
        w->failed = 1;
        break;
    }
}

prt_status prt__fields_write(prt_writer *w, const prt_fields *fc, char *err, size_t cap)
{
    int32_t i, nb = fc ? fc->nb : 0;
    int64_t k;
    if (!w) {
        if (err && cap) snprintf(err, cap, "no writer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb < 0 || (nb > 0 && !fc->fields)) {
        if (err && cap) snprintf(err, cap, "field collection has %d entries and fields %s", (int)nb,
                                 nb > 0 ? "NULL" : "set");
        w->failed = 1;
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* Check everything before writing anything. */
    for (i = 0; i < nb; i++) {
        const prt_field *f = &fc->fields[i];
        const char *why = NULL;
        if (!f->name)
            why = "has no name";
        else if ((unsigned)f->type >= PRT_FIELD_TYPE_COUNT_)
            why = "has an unknown type";
        else if (f->count < 0)
            why = "has a negative count";
        else if (f->count > 0 && !f->data)
            why = "has values but a NULL data pointer";
        else if (f->type == PRT_FIELD_DIMS) {
            for (k = 0; k < f->count && !why; k++) {
                prt_dims d;
                memcpy(&d, (const char *)f->data + (size_t)k * sizeof d, sizeof d);
                if (d.nb < 0 || d.nb > PRT_MAX_DIMS) why = "has dims with an invalid number of extents";
            }
        } else if (prt__fieldval_is_compound(f->type)) {
            char msg[PRT_ERR_CAP];
            prt__text t = prt__text_init(msg, sizeof msg);
            if (prt__fieldval_check(&t, "field", "value of", f->name, f->type, f->data, f->count)) {
                if (err && cap) snprintf(err, cap, "cannot write field %d: %s", (int)i, msg);
                w->failed = 1;
                return PRT_STATUS_INVALID_ARGUMENT;
            }
        }
        if (why) {
            if (err && cap)
                snprintf(err, cap, "cannot write field %d (\"%s\", type %d, count %" PRId64 "): it %s",
                         (int)i, f->name ? f->name : "", (int)f->type, f->count, why);
            w->failed = 1;
            return PRT_STATUS_INVALID_ARGUMENT;
        }
    }
    prt_write_u32(w, (uint32_t)nb);
    for (i = 0; i < nb && !w->failed; i++) {
        const prt_field *f = &fc->fields[i];
        prt_write_str(w, f->name);
        prt_write_u32(w, (uint32_t)f->type);
        prt_write_u64(w, (uint64_t)f->count);
        for (k = 0; k < f->count && !w->failed; k++) write_elem(w, f->type, f->data, k);
    }
    if (w->failed) {
        if (err && cap)
            snprintf(err, cap, "field collection does not fit in the %zu-byte buffer", w->cap);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

static void read_elem(prt_reader *r, prt_field_type type, void *dst)
{
    switch (type) {
    case PRT_FIELD_INT8: case PRT_FIELD_CHAR: case PRT_FIELD_BYTES: case PRT_FIELD_BOOL: {
        uint8_t v = prt_read_u8(r);
        memcpy(dst, &v, 1);
        break;
    }
    case PRT_FIELD_INT16: case PRT_FIELD_FLOAT16: {
        uint16_t v = prt_read_u16(r);
        memcpy(dst, &v, 2);
        break;
    }
    case PRT_FIELD_INT32: case PRT_FIELD_FLOAT32: {
        uint32_t v = prt_read_u32(r);
        memcpy(dst, &v, 4);
        break;
    }
    case PRT_FIELD_INT64: case PRT_FIELD_FLOAT64: {
        uint64_t v = prt_read_u64(r);
        memcpy(dst, &v, 8);
        break;
    }
    default:
        break;
    }
}

/* The elements of a compound field. With dst == NULL checks them and adds
 * the bytes of their owned copy (elements, then each payload 8-aligned, the
 * layout of prt__fieldval_copy) to *bytes; otherwise decodes into dst
 * (already checked) and sets *bytes to what it used. `head` names the field
 * for messages. */
static prt_status parse_compound(prt_reader *r, prt_field_type type, uint64_t count, uint8_t *dst,
                                 size_t *bytes, const char *head, char *err, size_t cap)
{
    size_t es = prt_field_type_size(type), total = prt__schema_align8((size_t)count * es);
    uint8_t *more = dst ? dst + total : NULL;
    uint64_t k;
    for (k = 0; k < count; k++) {
        size_t eat = r->pos, payload = 0;
        const char *why = NULL;
        if (type == PRT_FIELD_STRINGS) {
            uint32_t len;
            const char *str = prt_read_str(r, &len);
            if (r->failed) why = "runs past the end";
            else if (memchr(str, 0, len)) why = "holds a NUL byte";
            payload = (size_t)len + 1;
            if (!why && dst) {
                memcpy(more, str, len);
                more[len] = 0;
                ((const char **)(void *)dst)[k] = (const char *)more;
            }
        } else if (type == PRT_FIELD_TENSOR) {
            prt_field_tensor x;
            uint64_t n;
            const uint8_t *p;
            memset(&x, 0, sizeof x);
            x.dtype = (prt_dtype)prt_read_u32(r);
            x.reserved = (int32_t)prt_read_u32(r);
            if (read_dims(r, &x.dims) && !r->failed) why = "has malformed dims";
            n = prt_read_u64(r);
            if (!why && !r->failed && (x.reserved != 0 || prt__fieldval_tensor_bytes(&x) < 0))
                why = "has an unknown dtype, a non-zero reserved word or a dynamic or too large shape";
            if (!why && !r->failed && n != (uint64_t)prt__fieldval_tensor_bytes(&x))
                why = "has a byte count that does not match its dtype and shape";
            p = why ? NULL : prt_read_bytes(r, (size_t)n);
            if (r->failed) why = "runs past the end";
            payload = why ? 0 : (size_t)n;
            if (!why && dst) {
                if (n) memcpy(more, p, (size_t)n);
                x.data = n ? more : NULL;
                memcpy(dst + k * es, &x, sizeof x);
            }
        } else {
            prt_field_graph g;
            uint32_t nl;
            uint64_t n;
            const char *name = prt_read_str(r, &nl);
            const uint8_t *p;
            memset(&g, 0, sizeof g);
            g.format = (prt_graph_format)prt_read_u32(r);
            g.reserved = (int32_t)prt_read_u32(r);
            n = prt_read_u64(r);
            if (!r->failed && (nl == 0 || memchr(name, 0, nl))) why = "has an empty or non-text name";
            else if (!r->failed && ((g.format != PRT_GRAPH_NETWORK_JSON && g.format != PRT_GRAPH_ONNX) ||
                                    g.reserved != 0 || n > (uint64_t)PRT__FIELDVAL_MAX_BYTES))
                why = "has an unknown format, a non-zero reserved word or a size over the limit";
            p = why ? NULL : prt_read_bytes(r, (size_t)n);
            if (r->failed) why = "runs past the end";
            payload = why ? 0 : prt__schema_align8((size_t)nl + 1) + (size_t)n;
            if (!why && dst) {
                memcpy(more, name, nl);
                more[nl] = 0;
                g.name = (const char *)more;
                if (n) memcpy(more + prt__schema_align8((size_t)nl + 1), p, (size_t)n);
                g.data = n ? more + prt__schema_align8((size_t)nl + 1) : NULL;
                g.size = (int64_t)n;
                memcpy(dst + k * es, &g, sizeof g);
            }
        }
        if (why) {
            prt_status st = r->failed ? PRT_STATUS_TRUNCATED : PRT_STATUS_BAD_FORMAT;
            if (err && cap)
                snprintf(err, cap, "%s: %s element %" PRIu64 " at byte %zu %s", head,
                         prt_field_type_name(type), k, eat, why);
            r->failed = 1;
            return st;
        }
        total = prt__schema_add(total, prt__schema_align8(payload));
        if (more) more += prt__schema_align8(payload);
    }
    *bytes = dst ? total : prt__schema_add(*bytes, total);
    return PRT_OK;
}

/* Header of a decoded field; its name is copied to `names`. Returns where
 * the next name goes. */
static char *fill_field(prt_field *f, char *names, const char *name, uint32_t name_len, uint32_t type,
                        uint64_t count, uint8_t *data)
{
    memcpy(names, name, name_len);
    names[name_len] = 0;
    f->name = names;
    f->type = (prt_field_type)type;
    f->reserved_ = 0;
    f->count = (int64_t)count;
    f->data = count ? data : NULL;
    return names + name_len + 1;
}

/* One pass over a collection. With fields == NULL only checks and sizes;
 * otherwise decodes into fields[], *data and *names (already checked). */
static prt_status parse(prt_reader *r, int32_t nb, prt_field *fields, uint8_t *data, char *names,
                        size_t *data_bytes, size_t *name_bytes, char *err, size_t cap)
{
    int32_t i;
    for (i = 0; i < nb; i++) {
        size_t at = r->pos, esize, left;
        uint32_t name_len, type;
        uint64_t count, k;
        const char *name = prt_read_str(r, &name_len);
        if (r->failed) {
            if (err && cap) snprintf(err, cap, "field %d: the name at byte %zu runs past the end", (int)i, at);
            return PRT_STATUS_TRUNCATED;
        }
        if (memchr(name, 0, name_len) || name_len == 0) {
            if (err && cap)
                snprintf(err, cap, "field %d: the name at byte %zu is %s", (int)i, at,
                         name_len ? "not text (it holds a NUL byte)" : "empty");
            return PRT_STATUS_BAD_FORMAT;
        }
        type = prt_read_u32(r);
        count = prt_read_u64(r);
        if (r->failed) {
            if (err && cap) snprintf(err, cap, "field %d (\"%.*s\"): the header runs past the end", (int)i,
                                     (int)(name_len > 64 ? 64 : name_len), name);
            return PRT_STATUS_TRUNCATED;
        }
        esize = wire_size(type);
        if (esize == 0) {
            if (err && cap) snprintf(err, cap, "field %d (\"%.*s\"): type %u is not a field type (0 to %d)",
                                     (int)i, (int)(name_len > 64 ? 64 : name_len), name, (unsigned)type,
                                     PRT_FIELD_TYPE_COUNT_ - 1);
            return PRT_STATUS_BAD_FORMAT;
        }
        left = prt_reader_left(r);
        if (count > (uint64_t)(left / esize)) {
            if (err && cap)
                snprintf(err, cap, "field %d (\"%.*s\"): %" PRIu64 " %s values of %zu bytes each do not "
                         "fit in the %zu bytes left", (int)i, (int)(name_len > 64 ? 64 : name_len), name,
                         count, prt_field_type_name((prt_field_type)type), esize, left);
            return count > (uint64_t)INT64_MAX ? PRT_STATUS_BAD_FORMAT : PRT_STATUS_TRUNCATED;
        }
        if (prt__fieldval_is_compound((prt_field_type)type)) {
            char head[128];
            size_t used = 0;
            prt_status st;
            snprintf(head, sizeof head, "field %d (\"%.*s\")", (int)i, (int)(name_len > 64 ? 64 : name_len), name);
            if (fields) names = fill_field(&fields[i], names, name, name_len, type, count, data);
            st = parse_compound(r, (prt_field_type)type, count, fields ? data : NULL, fields ? &used : data_bytes,
                                head, err, cap);
            if (st != PRT_OK) return st;
            if (fields)
                data += used;
            else
                *name_bytes = prt__schema_add(*name_bytes, (size_t)name_len + 1);
        } else if (!fields) {
            /* Check the values that have rules: bool 0/1, dims shape. */
            if (type != PRT_FIELD_BOOL && type != PRT_FIELD_DIMS &&
                !prt_read_bytes(r, (size_t)count * esize))
                return PRT_STATUS_TRUNCATED; /* cannot happen: checked above */
            for (k = 0; (type == PRT_FIELD_BOOL || type == PRT_FIELD_DIMS) && k < count; k++) {
                size_t eat = r->pos;
                if (type == PRT_FIELD_BOOL) {
                    uint8_t v = prt_read_u8(r);
                    if (v > 1) {
                        if (err && cap) snprintf(err, cap, "field %d (\"%.*s\"): bool element %" PRIu64
                                                 " at byte %zu is %u, expected 0 or 1", (int)i,
                                                 (int)(name_len > 64 ? 64 : name_len), name, k, eat,
                                                 (unsigned)v);
                        return PRT_STATUS_BAD_FORMAT;
                    }
                } else if (type == PRT_FIELD_DIMS) {
                    int32_t dnb = prt_read_i32(r), res = prt_read_i32(r), d;
                    int bad = dnb < 0 || dnb > PRT_MAX_DIMS || res != 0;
                    for (d = 0; d < PRT_MAX_DIMS; d++) {
                        int64_t e = prt_read_i64(r);
                        if (!bad && ((d < dnb && e < PRT_DIM_DYNAMIC) || (d >= dnb && e != 0))) bad = 1;
                    }
                    if (bad) {
                        if (err && cap) snprintf(err, cap, "field %d (\"%.*s\"): dims element %" PRIu64
                                                 " at byte %zu is malformed (nb %d, reserved %d; expected "
                                                 "nb 0 to %d, reserved 0, extents >= -1, unused extents 0)",
                                                 (int)i, (int)(name_len > 64 ? 64 : name_len), name, k, eat,
                                                 (int)dnb, (int)res, PRT_MAX_DIMS);
                        return PRT_STATUS_BAD_FORMAT;
                    }
                }
            }
            *data_bytes = prt__schema_add(*data_bytes, prt__schema_align8((size_t)count *
                                                                          prt_field_type_size(type)));
            *name_bytes = prt__schema_add(*name_bytes, (size_t)name_len + 1);
        } else {
            size_t ts = prt_field_type_size((prt_field_type)type);
            names = fill_field(&fields[i], names, name, name_len, type, count, data);
            for (k = 0; k < count; k++) {
                uint8_t *dst = data + k * ts;
                if (type == PRT_FIELD_DIMS) {
                    prt_dims dm;
                    int32_t d;
                    memset(&dm, 0, sizeof dm);
                    dm.nb = prt_read_i32(r);
                    (void)prt_read_i32(r);
                    for (d = 0; d < PRT_MAX_DIMS; d++) dm.d[d] = prt_read_i64(r);
                    memcpy(dst, &dm, sizeof dm);
                } else {
                    read_elem(r, (prt_field_type)type, dst);
                }
            }
            data += prt__schema_align8((size_t)count * ts);
        }
    }
    return PRT_OK;
}

prt_status prt__fields_read(prt_reader *r, prt_owned_fields **out, char *err, size_t cap)
{
    prt_reader probe;
    uint32_t nb;
    size_t data_bytes = 0, name_bytes = 0, at;
    prt_status st;
    prt_owned_fields *of;
    prt_field *fields;
    uint8_t *data;
    char *names;
    if (!r || !out) {
        if (err && cap) snprintf(err, cap, "no %s given", !r ? "reader" : "output pointer");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (r->failed) {
        if (err && cap) snprintf(err, cap, "the reader has already failed");
        return PRT_STATUS_TRUNCATED;
    }
    probe = *r;
    at = probe.pos;
    nb = prt_read_u32(&probe);
    if (probe.failed) {
        if (err && cap) snprintf(err, cap, "field collection at byte %zu: the count runs past the end", at);
        r->failed = 1;
        return PRT_STATUS_TRUNCATED;
    }
    /* Each field takes at least 4 + 4 + 8 bytes (empty name, type, count). */
    if (nb > (uint32_t)INT32_MAX || nb > prt_reader_left(&probe) / 16) {
        if (err && cap)
            snprintf(err, cap, "field collection at byte %zu claims %u fields; %zu bytes are left",
                     at, (unsigned)nb, prt_reader_left(&probe));
        r->failed = 1;
        return nb > (uint32_t)INT32_MAX ? PRT_STATUS_BAD_FORMAT : PRT_STATUS_TRUNCATED;
    }
    st = parse(&probe, (int32_t)nb, NULL, NULL, NULL, &data_bytes, &name_bytes, err, cap);
    if (st != PRT_OK) {
        r->failed = 1;
        return st;
    }
    of = prt__owned_fields_alloc((int32_t)nb, data_bytes, name_bytes, &fields, &data, &names);
    if (!of) {
        if (err && cap) snprintf(err, cap, "out of memory reading %u fields", (unsigned)nb);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    (void)prt_read_u32(r);
    st = parse(r, (int32_t)nb, fields, data, names, NULL, NULL, err, cap);
    if (st != PRT_OK || r->failed) { /* cannot happen: the first pass checked it all */
        prt_owned_fields_free(of);
        if (err && cap) snprintf(err, cap, "field collection changed while it was read");
        r->failed = 1;
        return PRT_STATUS_INTERNAL;
    }
    *out = of;
    return PRT_OK;
}
