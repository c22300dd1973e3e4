/*
 * registry/fieldval.c - element rules of field values, and deep copies
 * (see fieldval.h).
 */
#include <inttypes.h>
#include <string.h>

#include "registry/fieldval.h"
#include "registry/schema.h"

int prt__fieldval_is_compound(prt_field_type type)
{
    return type == PRT_FIELD_STRINGS || type == PRT_FIELD_TENSOR || type == PRT_FIELD_GRAPH;
}

int64_t prt__fieldval_tensor_bytes(const prt_field_tensor *t)
{
    int64_t bytes = (int64_t)prt_dtype_size(t->dtype);
    int32_t k;
    if (bytes == 0 || t->dims.nb < 0 || t->dims.nb > PRT_MAX_DIMS) return -1;
    for (k = 0; k < t->dims.nb; k++) {
        int64_t e = t->dims.d[k];
        if (e < 0) return -1;
        if (e > 0 && bytes > PRT__FIELDVAL_MAX_BYTES / e) return -1;
        bytes *= e;
    }
    return bytes;
}

static int check_tensor(prt__text *t, const char *head, int64_t i, const prt_field_tensor *x)
{
    char b[256];
    if ((unsigned)x->dtype >= PRT_DTYPE_COUNT_ || x->reserved != 0) {
        prt__text_add(t, "%s tensor %" PRId64 " has dtype %d and reserved %d, expected a prt_dtype (0 to %d) and 0",
                      head, i, (int)x->dtype, (int)x->reserved, PRT_DTYPE_COUNT_ - 1);
        return 1;
    }
    if (x->dims.nb < 0 || x->dims.nb > PRT_MAX_DIMS || x->dims.reserved_ != 0) {
        prt__text_add(t, "%s tensor %" PRId64 " needs dims with 0 to %d extents and reserved_ 0, got nb %d, "
                      "reserved_ %d", head, i, PRT_MAX_DIMS, (int)x->dims.nb, (int)x->dims.reserved_);
        return 1;
    }
    if (prt__fieldval_tensor_bytes(x) < 0) {
        prt__text_add(t, "%s tensor %" PRId64 " needs concrete extents >= 0 holding at most %" PRId64
                      " bytes, got %s of %s", head, i, PRT__FIELDVAL_MAX_BYTES, prt_dims_str(&x->dims, b, sizeof b),
                      prt_dtype_name(x->dtype));
        return 1;
    }
    if (!x->data && prt__fieldval_tensor_bytes(x) > 0) {
        prt__text_add(t, "%s tensor %" PRId64 " has shape %s but its data pointer is NULL", head, i,
                      prt_dims_str(&x->dims, b, sizeof b));
        return 1;
    }
    return 0;
}

static int check_graph(prt__text *t, const char *head, int64_t i, const prt_field_graph *g)
{
    if (!g->name || !g->name[0]) {
        prt__text_add(t, "%s graph %" PRId64 " needs a non-empty name", head, i);
        return 1;
    }
    if ((g->format != PRT_GRAPH_NETWORK_JSON && g->format != PRT_GRAPH_ONNX) || g->reserved != 0) {
        prt__text_add(t, "%s graph %" PRId64 " (\"%s\") has format %d and reserved %d, expected "
                      "PRT_GRAPH_NETWORK_JSON (1) or PRT_GRAPH_ONNX (2) and 0", head, i, g->name, (int)g->format,
                      (int)g->reserved);
        return 1;
    }
    if (g->size < 0 || g->size > PRT__FIELDVAL_MAX_BYTES || (g->size > 0 && !g->data)) {
        prt__text_add(t, "%s graph %" PRId64 " (\"%s\") has size %" PRId64 " and data %s, expected 0 to %" PRId64
                      " bytes and data set when the size is not 0", head, i, g->name, g->size,
                      g->data ? "set" : "NULL", PRT__FIELDVAL_MAX_BYTES);
        return 1;
    }
    return 0;
}

int prt__fieldval_check(prt__text *t, const char *label, const char *what, const char *name,
                        prt_field_type type, const void *data, int64_t count)
{
    char head[320];
    int64_t i;
    if (!prt__fieldval_is_compound(type) || count <= 0) return 0;
    snprintf(head, sizeof head, "%s: %s \"%s\":", label, what, name);
    for (i = 0; i < count; i++) {
        if (type == PRT_FIELD_STRINGS) {
            if (!((const char *const *)data)[i]) {
                prt__text_add(t, "%s string %" PRId64 " is NULL, expected a NUL-terminated string", head, i);
                return 1;
            }
        } else if (type == PRT_FIELD_TENSOR) {
            if (check_tensor(t, head, i, &((const prt_field_tensor *)data)[i])) return 1;
        } else if (check_graph(t, head, i, &((const prt_field_graph *)data)[i])) {
            return 1;
        }
    }
    return 0;
}

static size_t elem_payload(prt_field_type type, const void *data, int64_t i)
{
    if (type == PRT_FIELD_STRINGS) return strlen(((const char *const *)data)[i]) + 1;
    if (type == PRT_FIELD_TENSOR) return (size_t)prt__fieldval_tensor_bytes(&((const prt_field_tensor *)data)[i]);
    {
        const prt_field_graph *g = &((const prt_field_graph *)data)[i];
        return prt__schema_add(prt__schema_align8(strlen(g->name) + 1), (size_t)g->size);
    }
}

size_t prt__fieldval_copy_size(prt_field_type type, const void *data, int64_t count)
{
    size_t es = prt_field_type_size(type), total;
    int64_t i;
    if (count < 0 || es == 0 || (uint64_t)count > SIZE_MAX / es) return SIZE_MAX;
    total = prt__schema_align8((size_t)count * es);
    if (!prt__fieldval_is_compound(type)) return total;
    for (i = 0; i < count && total != SIZE_MAX; i++)
        total = prt__schema_add(total, prt__schema_align8(elem_payload(type, data, i)));
    return total;
}

void prt__fieldval_copy(prt_field_type type, const void *data, int64_t count, uint8_t *dst)
{
    size_t es = prt_field_type_size(type);
    uint8_t *more = dst + prt__schema_align8((size_t)count * es);
    int64_t i;
    if (count <= 0) return;
    memcpy(dst, data, (size_t)count * es);
    if (!prt__fieldval_is_compound(type)) return;
    for (i = 0; i < count; i++) {
        size_t n = elem_payload(type, data, i);
        if (type == PRT_FIELD_STRINGS) {
            memcpy(more, ((const char *const *)data)[i], n);
            ((const char **)(void *)dst)[i] = (const char *)more;
        } else if (type == PRT_FIELD_TENSOR) {
            prt_field_tensor *x = &((prt_field_tensor *)(void *)dst)[i];
            if (n) memcpy(more, x->data, n);
            x->data = n ? more : NULL;
        } else {
            prt_field_graph *g = &((prt_field_graph *)(void *)dst)[i];
            size_t nl = strlen(g->name) + 1, at = prt__schema_align8(nl);
            memcpy(more, g->name, nl);
            g->name = (const char *)more;
            if (g->size) memcpy(more + at, g->data, (size_t)g->size);
            g->data = g->size ? more + at : NULL;
        }
        more += prt__schema_align8(n);
    }
}
