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
#include "registry/schema.h"

/* Bytes per element on the wire (DIMS: i32 nb, i32 0, 8 x i64). */
static size_t wire_size(uint32_t type)
{
    if (type == PRT_FIELD_DIMS) return 4 + 4 + 8 * PRT_MAX_DIMS;
    return type < PRT_FIELD_TYPE_COUNT_ ? prt_field_type_size((prt_field_type)type) : 0;
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
        int k;
        memcpy(&d, p + (size_t)i * sizeof(prt_dims), sizeof d);
        prt_write_i32(w, d.nb);
        prt_write_i32(w, 0);
        for (k = 0; k < PRT_MAX_DIMS; k++) prt_write_i64(w, k < d.nb ? d.d[k] : 0);
        break;
    }
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
        if (!fields) {
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
            prt_field *f = &fields[i];
            size_t ts = prt_field_type_size((prt_field_type)type);
            memcpy(names, name, name_len);
            names[name_len] = 0;
            f->name = names;
            names += name_len + 1;
            f->type = (prt_field_type)type;
            f->reserved_ = 0;
            f->count = (int64_t)count;
            f->data = count ? data : NULL;
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
