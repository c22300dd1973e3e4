/* onnx/model.c - decoding a ModelProto and checking it before import:
 * framing, IR version, opsets, graph inputs, initializers, node order. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "onnx/onnx_impl.h"

extern ProtobufCAllocator prt__onnx_pb_allocator;

#define fail prt__onnx_fail

const char *prt__onnx_node_label(const PrtOnnx__Node *n, int32_t i, char *buf, size_t cap)
{
    if (n->name && n->name[0]) snprintf(buf, cap, "\"%s\" (%s)", n->name, prt__onnx_s(n->op_type));
    else snprintf(buf, cap, "#%d (%s)", (int)i, prt__onnx_s(n->op_type));
    return buf;
}

/* ---- framing ------------------------------------------------------------ */

static int read_varint(const uint8_t *p, size_t len, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    int shift;
    for (shift = 0; shift < 64; shift += 7) {
        uint8_t b;
        if (*pos >= len) return 0;
        b = p[(*pos)++];
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

/* What a scanned message is, to descend into the parts whose errors are
 * worth locating. */
enum { SCAN_MODEL, SCAN_GRAPH, SCAN_NODE, SCAN_FLAT, SCAN_OTHER };

/* Walk the protobuf framing of one message: every tag, varint and length
 * must fit. Reports the absolute byte offset and where it is. */
static prt_status scan(const uint8_t *p, size_t len, size_t base, int kind, const char *where, char *err,
                       size_t cap)
{
    size_t pos = 0;
    int32_t nodes = 0, inits = 0;
    while (pos < len) {
        size_t start = pos;
        uint64_t tag, v;
        uint32_t field, wt;
        if (!read_varint(p, len, &pos, &tag))
            return fail(err, cap, PRT_STATUS_TRUNCATED, "byte %zu (%s): a field tag runs past the end of the data",
                        base + start, where);
        field = (uint32_t)(tag >> 3);
        wt = (uint32_t)(tag & 7);
        if (field == 0 || tag >> 32)
            return fail(err, cap, PRT_STATUS_BAD_FORMAT, "byte %zu (%s): field number %" PRIu64 " is invalid",
                        base + start, where, tag >> 3);
        switch (wt) {
        case 0:
            if (!read_varint(p, len, &pos, &v))
                return fail(err, cap, PRT_STATUS_TRUNCATED, "byte %zu (%s): field %u: a varint runs past the end",
                            base + start, where, field);
            break;
        case 1:
        case 5: {
            size_t n = wt == 1 ? 8 : 4;
            if (len - pos < n)
                return fail(err, cap, PRT_STATUS_TRUNCATED, "byte %zu (%s): field %u needs %zu bytes, %zu are left",
                            base + start, where, field, n, len - pos);
            pos += n;
            break;
        }
        case 2: {
            char sub[160];
            int sub_kind = SCAN_OTHER;
            prt_status s;
            if (!read_varint(p, len, &pos, &v))
                return fail(err, cap, PRT_STATUS_TRUNCATED, "byte %zu (%s): field %u: its length runs past the end",
                            base + start, where, field);
            if (v > len - pos)
                return fail(err, cap, PRT_STATUS_TRUNCATED,
                            "byte %zu (%s): field %u says %" PRIu64 " bytes follow, only %zu are left", base + start,
                            where, field, v, len - pos);
            if (kind == SCAN_MODEL && field == 7) {
                sub_kind = SCAN_GRAPH;
                snprintf(sub, sizeof sub, "graph");
            } else if (kind == SCAN_GRAPH && field == 1) {
                sub_kind = SCAN_NODE;
                snprintf(sub, sizeof sub, "graph node #%d", (int)nodes++);
            } else if (kind == SCAN_GRAPH && field == 5) {
                sub_kind = SCAN_FLAT; /* its own framing, not its fields' */
                snprintf(sub, sizeof sub, "graph initializer #%d", (int)inits++);
            } else if (kind == SCAN_NODE && field == 5) {
                snprintf(sub, sizeof sub, "%s, an attribute", where);
                sub_kind = SCAN_FLAT;
            }
            if (sub_kind != SCAN_OTHER) {
                s = scan(p + pos, (size_t)v, base + pos, sub_kind, sub, err, cap);
                if (s != PRT_OK) return s;
            }
            pos += (size_t)v;
            break;
        }
        default:
            return fail(err, cap, PRT_STATUS_BAD_FORMAT, "byte %zu (%s): field %u has wire type %u, which %s",
                        base + start, where, field, wt, wt == 3 || wt == 4 ? "(groups) ONNX never uses" : "is invalid");
        }
    }
    return PRT_OK;
}

int prt_onnx_sniff(const void *data, size_t len)
{
    const uint8_t *p = data;
    size_t pos = 0;
    uint64_t tag, v;
    if (!p || len < 2) return 0;
    if (!read_varint(p, len, &pos, &tag)) return 0;
    if (tag == (1u << 3 | 0)) return read_varint(p, len, &pos, &v) && v >= 1 && v <= 64; /* ir_version */
    if (tag == (5u << 3 | 0)) return read_varint(p, len, &pos, &v);                     /* model_version */
    /* producer name and version, domain, doc string, graph, opset import, metadata */
    if (tag == (2u << 3 | 2) || tag == (3u << 3 | 2) || tag == (4u << 3 | 2) || tag == (6u << 3 | 2) ||
        tag == (7u << 3 | 2) || tag == (8u << 3 | 2) || tag == (14u << 3 | 2))
        return read_varint(p, len, &pos, &v) && v <= len - pos;
    return 0;
}

/* ---- checks ------------------------------------------------------------- */

static int is_default_domain(const char *d) { return !d || !d[0] || strcmp(d, "ai.onnx") == 0; }

int64_t prt__onnx_model_opset(const prt_onnx_model *m, const char *domain)
{
    size_t i;
    if (is_default_domain(domain)) return m->default_opset;
    for (i = 0; i < m->pb->n_opset_import; i++) {
        const PrtOnnx__OperatorSetId *o = m->pb->opset_import[i];
        if (!is_default_domain(o->domain) && strcmp(o->domain, domain) == 0) return o->version;
    }
    return 0;
}

/* A tiny string -> int map (open addressing) for tensor names. */
typedef struct name_map {
    const char **keys;
    int32_t *vals;
    size_t cap;
} name_map;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static int map_init(name_map *m, size_t n)
{
    m->cap = 16;
    while (m->cap < 2 * n + 2) m->cap *= 2;
    m->keys = prt__calloc(m->cap, sizeof *m->keys);
    m->vals = prt__calloc(m->cap, sizeof *m->vals);
    return m->keys && m->vals;
}

static void map_free(name_map *m)
{
    prt__free(m->keys);
    prt__free(m->vals);
}

/* Returns the stored value or -1; inserts `val` when absent and val != -1. */
static int32_t map_get_put(name_map *m, const char *k, int32_t val)
{
    size_t i = (size_t)hash_str(k) & (m->cap - 1);
    while (m->keys[i]) {
        if (strcmp(m->keys[i], k) == 0) return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    if (val != -1) {
        m->keys[i] = k;
        m->vals[i] = val;
    }
    return -1;
}

static prt_status check_value_info(const PrtOnnx__ValueInfo *vi, const char *what, char *err, size_t cap)
{
    const PrtOnnx__TensorShape *sh;
    size_t i;
    if (!vi->name || !vi->name[0]) return fail(err, cap, PRT_STATUS_BAD_FORMAT, "%s has no name", what);
    if (!vi->type || !vi->type->tensor_type)
        return fail(err, cap, PRT_STATUS_UNSUPPORTED,
                    "%s \"%s\" is not a tensor (sequence, map, optional and sparse values are not supported)", what,
                    vi->name);
    sh = vi->type->tensor_type->shape;
    if (!sh) return PRT_OK;
    if (sh->n_dim > PRT_MAX_DIMS)
        return fail(err, cap, PRT_STATUS_UNSUPPORTED, "%s \"%s\" has rank %zu; plugrt tensors have at most %d dims",
                    what, vi->name, sh->n_dim, PRT_MAX_DIMS);
    for (i = 0; i < sh->n_dim; i++) {
        const PrtOnnx__Dimension *d = sh->dim[i];
        /* some exporters write -1 for a dynamic extent */
        if (d->has_dim_value && (d->dim_value < -1 || d->dim_value > PRT__ONNX_MAX_EXTENT))
            return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                        "%s \"%s\" dim %zu is %" PRId64 "; expected 0 to 2^40 (or -1: dynamic)", what, vi->name, i,
                        d->dim_value);
    }
    return PRT_OK;
}

/* Kahn's algorithm over the nodes; names the nodes of a cycle. */
static prt_status order_nodes(prt_onnx_model *m, char *err, size_t cap)
{
    const PrtOnnx__Graph *g = m->pb->graph;
    size_t nn = g->n_node, i, j, nt = 0;
    name_map producers;
    int32_t *indeg = NULL, *queue = NULL, head = 0, tail = 0;
    int32_t **users = NULL, *nusers = NULL;
    prt_status s = PRT_OK;
    char lab[320], lab2[320];

    for (i = 0; i < nn; i++) nt += g->node[i]->n_output;
    if (!map_init(&producers, nt + g->n_input + g->n_initializer)) {
        map_free(&producers);
        return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory ordering %zu nodes", nn);
    }
    indeg = prt__calloc(nn + 1, sizeof *indeg);
    queue = prt__calloc(nn + 1, sizeof *queue);
    nusers = prt__calloc(nn + 1, sizeof *nusers);
    users = prt__calloc(nn + 1, sizeof *users);
    m->order = prt__calloc(nn + 1, sizeof *m->order);
    if (!indeg || !queue || !nusers || !users || !m->order) {
        s = fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory ordering %zu nodes", nn);
        goto done;
    }
    /* graph inputs and initializers: producer -2 */
    for (i = 0; i < g->n_input; i++) map_get_put(&producers, g->input[i]->name, -2);
    for (i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name;
        if (!nm || !nm[0]) {
            s = fail(err, cap, PRT_STATUS_BAD_FORMAT, "initializer #%zu has no name", i);
            goto done;
        }
        map_get_put(&producers, nm, -2);
    }
    for (i = 0; i < nn; i++) {
        const PrtOnnx__Node *n = g->node[i];
        if (!n->op_type || !n->op_type[0]) {
            s = fail(err, cap, PRT_STATUS_BAD_FORMAT, "node %s has no op_type", prt__onnx_node_label(n, (int32_t)i, lab, sizeof lab));
            goto done;
        }
        for (j = 0; j < n->n_output; j++) {
            int32_t prev;
            if (!n->output[j][0]) continue;
            prev = map_get_put(&producers, n->output[j], (int32_t)i);
            if (prev != -1) {
                s = fail(err, cap, PRT_STATUS_BAD_FORMAT, "node %s: output \"%s\" is already %s",
                         prt__onnx_node_label(n, (int32_t)i, lab, sizeof lab), n->output[j],
                         prev == -2 ? "a graph input or initializer"
                                    : (snprintf(lab2, sizeof lab2, "produced by node %s",
                                                prt__onnx_node_label(g->node[prev], prev, (char[320]){0}, 320)),
                                       lab2));
                goto done;
            }
        }
    }
    /* edges */
    for (i = 0; i < nn; i++) {
        const PrtOnnx__Node *n = g->node[i];
        for (j = 0; j < n->n_input; j++) {
            int32_t p;
            if (!n->input[j][0]) continue;
            p = map_get_put(&producers, n->input[j], -1);
            if (p == -1) {
                s = fail(err, cap, PRT_STATUS_NOT_FOUND,
                         "node %s: input %zu \"%s\" is not a graph input, an initializer or a node output "
                         "(missing initializer?)",
                         prt__onnx_node_label(n, (int32_t)i, lab, sizeof lab), j, n->input[j]);
                goto done;
            }
            if (p >= 0) {
                int32_t *nu = prt__realloc(users[p], (size_t)(nusers[p] + 1) * sizeof *nu);
                if (!nu) {
                    s = fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory ordering nodes");
                    goto done;
                }
                users[p] = nu;
                nu[nusers[p]++] = (int32_t)i;
                indeg[i]++;
            }
        }
    }
    for (i = 0; i < nn; i++)
        if (!indeg[i]) queue[tail++] = (int32_t)i;
    while (head < tail) {
        int32_t k = queue[head++];
        m->order[head - 1] = k;
        for (j = 0; j < (size_t)nusers[k]; j++)
            if (--indeg[users[k][j]] == 0) queue[tail++] = users[k][j];
    }
    if ((size_t)tail != nn) {
        prt__text t = prt__text_init(err, cap);
        int shown = 0;
        prt__text_add(&t, "the graph has a cycle: %zu node(s) wait on each other, among them", nn - (size_t)tail);
        for (i = 0; i < nn && shown < 4; i++)
            if (indeg[i]) {
                prt__text_add(&t, "%s %s", shown ? "," : "", prt__onnx_node_label(g->node[i], (int32_t)i, lab, sizeof lab));
                shown++;
            }
        s = PRT_STATUS_BAD_FORMAT;
    }
done:
    if (users)
        for (i = 0; i < nn; i++) prt__free(users[i]);
    prt__free(users);
    prt__free(nusers);
    prt__free(indeg);
    prt__free(queue);
    map_free(&producers);
    return s;
}

static prt_status check_model(prt_onnx_model *m, char *err, size_t cap)
{
    const PrtOnnx__Model *pb = m->pb;
    const PrtOnnx__Graph *g = pb->graph;
    size_t i, j;
    prt_status s;
    char lab[320];

    if (!pb->has_ir_version)
        return fail(err, cap, PRT_STATUS_BAD_FORMAT, "the model has no ir_version (not an ONNX ModelProto?)");
    if (pb->ir_version < 3 || pb->ir_version > 13)
        return fail(err, cap, PRT_STATUS_VERSION_MISMATCH, "IR version %" PRId64 " is not supported (3 to 13 are)",
                    pb->ir_version);
    if (!pb->n_opset_import)
        return fail(err, cap, PRT_STATUS_BAD_FORMAT, "the model imports no opset (IR version %" PRId64
                    " needs opset_import)", pb->ir_version);
    for (i = 0; i < pb->n_opset_import; i++) {
        const PrtOnnx__OperatorSetId *o = pb->opset_import[i];
        const char *d = is_default_domain(o->domain) ? "" : o->domain;
        if (!o->has_version || o->version < 1 || o->version > 100000)
            return fail(err, cap, PRT_STATUS_BAD_FORMAT, "opset import of domain \"%s\": version %" PRId64
                        " is not a positive opset number", d, o->has_version ? o->version : 0);
        for (j = 0; j < i; j++) {
            const char *d2 = is_default_domain(pb->opset_import[j]->domain) ? "" : pb->opset_import[j]->domain;
            if (strcmp(d, d2) == 0)
                return fail(err, cap, PRT_STATUS_BAD_FORMAT, "domain \"%s\" is imported twice", d);
        }
        if (!d[0]) m->default_opset = o->version;
    }
    if (!g) return fail(err, cap, PRT_STATUS_BAD_FORMAT, "the model has no graph");
    for (i = 0; i < g->n_input; i++)
        if ((s = check_value_info(g->input[i], "graph input", err, cap)) != PRT_OK) return s;
    for (i = 0; i < g->n_output; i++)
        if ((s = check_value_info(g->output[i], "graph output", err, cap)) != PRT_OK) return s;
    if (!g->n_output) return fail(err, cap, PRT_STATUS_BAD_FORMAT, "the graph has no outputs");
    for (i = 0; i < g->n_node; i++) {
        const PrtOnnx__Node *n = g->node[i];
        for (j = 0; j < n->n_attribute; j++) {
            const PrtOnnx__Attribute *a = n->attribute[j];
            if (!a->name || !a->name[0])
                return fail(err, cap, PRT_STATUS_BAD_FORMAT, "node %s: attribute #%zu has no name",
                            prt__onnx_node_label(n, (int32_t)i, lab, sizeof lab), j);
            if (a->ref_attr_name && a->ref_attr_name[0])
                return fail(err, cap, PRT_STATUS_UNSUPPORTED,
                            "node %s: attribute \"%s\" refers to a function attribute (only in functions)",
                            prt__onnx_node_label(n, (int32_t)i, lab, sizeof lab), a->name);
        }
    }
    /* an initializer that is also listed as a graph input must agree with it */
    for (i = 0; i < g->n_initializer; i++) {
        const PrtOnnx__Tensor *t = g->initializer[i];
        for (j = 0; j < g->n_input; j++) {
            const PrtOnnx__ValueInfo *vi = g->input[j];
            const PrtOnnx__TensorShape *sh = vi->type->tensor_type->shape;
            size_t k;
            if (!t->name || strcmp(t->name, vi->name) != 0 || !sh) continue;
            if (sh->n_dim != t->n_dims)
                return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                            "initializer \"%s\" has rank %zu but the graph input of that name has rank %zu", t->name,
                            t->n_dims, sh->n_dim);
            for (k = 0; k < sh->n_dim; k++)
                if (sh->dim[k]->has_dim_value && sh->dim[k]->dim_value != t->dims[k])
                    return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                                "initializer \"%s\" dim %zu is %" PRId64 " but the graph input of that name says %" PRId64,
                                t->name, k, t->dims[k], sh->dim[k]->dim_value);
        }
    }
    return order_nodes(m, err, cap);
}

prt_status prt_onnx_model_parse(const void *data, size_t len, const char *base_dir, prt_onnx_model **out,
                                char *err, size_t cap)
{
    prt_onnx_model *m;
    prt_status s;
    if (!out || (!data && len)) return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT, "no model data given");
    if (!len) return fail(err, cap, PRT_STATUS_TRUNCATED, "the model is empty (0 bytes)");
    if ((s = scan(data, len, 0, SCAN_MODEL, "model", err, cap)) != PRT_OK) return s;
    m = prt__calloc(1, sizeof *m);
    if (!m) return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory reading a model");
    m->pb = prt_onnx__model__unpack(&prt__onnx_pb_allocator, len, data);
    if (!m->pb) {
        prt__free(m);
        return fail(err, cap, PRT_STATUS_BAD_FORMAT,
                    "the model's protobuf does not decode: a field holds a value of the wrong kind (corrupt file, "
                    "or not an ONNX model)");
    }
    if (base_dir && !(m->base_dir = prt__strdup(base_dir))) {
        prt_onnx_model_destroy(m);
        return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory reading a model");
    }
    if ((s = check_model(m, err, cap)) != PRT_OK) {
        prt_onnx_model_destroy(m);
        return s;
    }
    *out = m;
    return PRT_OK;
}

prt_status prt_onnx_model_load(const char *path, prt_onnx_model **out, char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    char *dir, *slash, e2[PRT_ERR_CAP];
    prt_status s;
    if (!path || !out) return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT, "no model path given");
    if ((s = prt__read_file(path, &data, &len, err, cap)) != PRT_OK) return s;
    dir = prt__strdup(path);
    if (!dir) {
        prt__free(data);
        return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = 0;
    else if (slash) *slash = 0;
    else strcpy(dir, ".");
    s = prt_onnx_model_parse(data, len, dir, out, e2, sizeof e2);
    if (s != PRT_OK) fail(err, cap, s, "%s: %s", path, e2);
    prt__free(dir);
    prt__free(data);
    return s;
}

void prt_onnx_model_destroy(prt_onnx_model *m)
{
    if (!m) return;
    if (m->pb) prt_onnx__model__free_unpacked(m->pb, &prt__onnx_pb_allocator);
    prt__free(m->base_dir);
    prt__free(m->order);
    prt__free(m);
}

/* ---- accessors ---------------------------------------------------------- */

int64_t prt_onnx_model_ir_version(const prt_onnx_model *m) { return m ? m->pb->ir_version : 0; }
const char *prt_onnx_model_producer(const prt_onnx_model *m) { return m ? prt__onnx_s(m->pb->producer_name) : ""; }
int32_t prt_onnx_model_nb_opsets(const prt_onnx_model *m) { return m ? (int32_t)m->pb->n_opset_import : 0; }

prt_status prt_onnx_model_opset(const prt_onnx_model *m, int32_t i, const char **domain, int64_t *version)
{
    if (!m || i < 0 || (size_t)i >= m->pb->n_opset_import) return PRT_STATUS_INVALID_ARGUMENT;
    if (domain) *domain = prt__onnx_s(m->pb->opset_import[i]->domain);
    if (version) *version = m->pb->opset_import[i]->version;
    return PRT_OK;
}

static int is_initializer(const PrtOnnx__Graph *g, const char *name)
{
    size_t i;
    for (i = 0; i < g->n_initializer; i++)
        if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return 1;
    return 0;
}

static const PrtOnnx__ValueInfo *real_input(const prt_onnx_model *m, int32_t i)
{
    const PrtOnnx__Graph *g = m->pb->graph;
    size_t k;
    for (k = 0; k < g->n_input; k++)
        if (!is_initializer(g, g->input[k]->name) && i-- == 0) return g->input[k];
    return NULL;
}

int32_t prt_onnx_model_nb_inputs(const prt_onnx_model *m)
{
    int32_t n = 0;
    while (m && real_input(m, n)) n++;
    return n;
}

int32_t prt_onnx_model_nb_outputs(const prt_onnx_model *m) { return m ? (int32_t)m->pb->graph->n_output : 0; }

static void fill_io(const PrtOnnx__ValueInfo *vi, prt_onnx_io *out)
{
    const PrtOnnx__TensorType *tt = vi->type->tensor_type;
    size_t i;
    memset(out, 0, sizeof *out);
    out->name = vi->name;
    out->elem_type = prt__onnx_type_name(tt->has_elem_type ? tt->elem_type : 0);
    out->rank = tt->shape ? (int32_t)tt->shape->n_dim : -1;
    for (i = 0; tt->shape && i < tt->shape->n_dim; i++) {
        const PrtOnnx__Dimension *d = tt->shape->dim[i];
        out->dims[i] = d->has_dim_value ? d->dim_value : -1;
        out->dim_params[i] = !d->has_dim_value && d->dim_param && d->dim_param[0] ? d->dim_param : NULL;
    }
}

prt_status prt_onnx_model_input(const prt_onnx_model *m, int32_t i, prt_onnx_io *out)
{
    const PrtOnnx__ValueInfo *vi = m && i >= 0 ? real_input(m, i) : NULL;
    if (!vi || !out) return PRT_STATUS_INVALID_ARGUMENT;
    fill_io(vi, out);
    return PRT_OK;
}

prt_status prt_onnx_model_output(const prt_onnx_model *m, int32_t i, prt_onnx_io *out)
{
    if (!m || !out || i < 0 || (size_t)i >= m->pb->graph->n_output) return PRT_STATUS_INVALID_ARGUMENT;
    fill_io(m->pb->graph->output[i], out);
    return PRT_OK;
}

int32_t prt_onnx_model_nb_nodes(const prt_onnx_model *m) { return m ? (int32_t)m->pb->graph->n_node : 0; }

prt_status prt_onnx_model_node(const prt_onnx_model *m, int32_t i, const char **name, const char **op_type,
                               const char **domain)
{
    const PrtOnnx__Node *n;
    if (!m || i < 0 || (size_t)i >= m->pb->graph->n_node) return PRT_STATUS_INVALID_ARGUMENT;
    n = m->pb->graph->node[m->order[i]];
    if (name) *name = prt__onnx_s(n->name);
    if (op_type) *op_type = prt__onnx_s(n->op_type);
    if (domain) *domain = prt__onnx_s(n->domain);
    return PRT_OK;
}
