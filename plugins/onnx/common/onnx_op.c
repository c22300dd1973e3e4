/*
 * onnx/common/onnx_op.c - the one field-style plugin behind every ONNX op
 * creator (see onnx_op.h): lifecycle, field copy, registration, and the
 * shape helpers the families share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugin_alloc.h"
#include "onnx_op.h"

static const prt_field_plugin_ops node_ops;

/* ---- registration ---------------------------------------------------------- */

#define MAX_TABLES 64
static struct {
    const prt__onnx_def *defs;
    int32_t nb;
} tables[MAX_TABLES];
static int32_t nb_tables;

static prt_status node_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                              prt_field_plugin **out, prt_msg *err);

void prt__onnx_register(const prt__onnx_def *defs, int32_t nb, prt_plugin_creator *creators,
                        prt_static_creator *nodes)
{
    int32_t i;
    /* Constructors run one at a time at load, before any thread exists. */
    if (nb_tables < MAX_TABLES) {
        tables[nb_tables].defs = defs;
        tables[nb_tables].nb = nb;
        nb_tables++;
    }
    for (i = 0; i < nb; i++) {
        creators[i] = (prt_plugin_creator){
            .struct_size = sizeof(prt_plugin_creator),
            .abi_version = PRT_ABI_VERSION,
            .name = defs[i].name,
            .version = defs[i].version,
            .plugin_namespace = defs[i].ns ? defs[i].ns : "",
            .style = PRT_STYLE_FIELD,
            .nb_fields = defs[i].nb_fields,
            .fields = defs[i].schema,
            .field_schema_size = sizeof(prt_field_schema),
            .create_field = node_create,
            .doc = defs[i].doc,
            .user = (void *)&defs[i],
        };
        nodes[i] = (prt_static_creator){&creators[i], NULL};
        prt_static_creator_push(&nodes[i]);
    }
}

int32_t prt__onnx_def_count(void)
{
    int32_t i, n = 0;
    for (i = 0; i < nb_tables; i++) n += tables[i].nb;
    return n;
}

const prt__onnx_def *prt__onnx_def_at(int32_t at)
{
    int32_t i;
    for (i = 0; i < nb_tables && at >= 0; i++) {
        if (at < tables[i].nb) return &tables[i].defs[at];
        at -= tables[i].nb;
    }
    return NULL;
}

/* ---- the plugin object ---------------------------------------------------- */

static void node_free(prt__onnx_node *n)
{
    if (!n) return;
    prt_plugin_free(n->state);
    prt_plugin_free(n->fc_mem);
    prt_plugin_free(n);
}

static size_t align8(size_t v)
{
    return (v + 7u) & ~(size_t)7u;
}

/* Bytes of the elements a TENSOR field's entry points at. */
static size_t tensor_bytes(const prt_field *f, int64_t k)
{
    const prt_field_tensor *t = &((const prt_field_tensor *)f->data)[k];
    int64_t vol = prt_dims_volume(&t->dims);
    return vol > 0 ? (size_t)vol * prt_dtype_size(t->dtype) : 0;
}

/* One allocation: the field array, then each name and data block (a TENSOR
 * field's element data after its entries). */
static prt_status copy_fields(prt__onnx_node *n, const prt_fields *fc)
{
    size_t bytes;
    int32_t i, nb = fc ? fc->nb : 0;
    int64_t k;
    prt_field *f;
    char *p;
    bytes = align8(sizeof(prt_field) * (size_t)(nb > 0 ? nb : 1));
    for (i = 0; i < nb; i++) {
        bytes += align8(strlen(fc->fields[i].name) + 1);
        bytes += align8((size_t)fc->fields[i].count * prt_field_type_size(fc->fields[i].type));
        if (fc->fields[i].type == PRT_FIELD_TENSOR)
            for (k = 0; k < fc->fields[i].count; k++) bytes += align8(tensor_bytes(&fc->fields[i], k));
    }
    n->fc_mem = prt_plugin_calloc(1, bytes);
    if (!n->fc_mem) return PRT_STATUS_OUT_OF_MEMORY;
    f = n->fc_mem;
    p = (char *)n->fc_mem + align8(sizeof(prt_field) * (size_t)(nb > 0 ? nb : 1));
    for (i = 0; i < nb; i++) {
        size_t ln = strlen(fc->fields[i].name) + 1;
        size_t ld = (size_t)fc->fields[i].count * prt_field_type_size(fc->fields[i].type);
        f[i] = fc->fields[i];
        memcpy(p, fc->fields[i].name, ln);
        f[i].name = p;
        p += align8(ln);
        if (ld) memcpy(p, fc->fields[i].data, ld);
        f[i].data = ld ? p : NULL;
        p += align8(ld);
        if (f[i].type == PRT_FIELD_TENSOR)
            for (k = 0; k < f[i].count; k++) {
                prt_field_tensor *t = &((prt_field_tensor *)(void *)f[i].data)[k];
                size_t tb = tensor_bytes(&f[i], k);
                if (tb) memcpy(p, t->data, tb);
                t->data = tb ? p : NULL;
                p += align8(tb);
            }
    }
    n->fc.fields = f;
    n->fc.nb = nb;
    n->fc.reserved_ = 0;
    return PRT_OK;
}

static prt_status node_make(const prt__onnx_def *def, const prt_fields *fc, prt_field_plugin **out,
                            prt_msg *err)
{
    prt__onnx_node *n = prt_plugin_calloc(1, sizeof *n);
    prt_status st = PRT_STATUS_OUT_OF_MEMORY;
    if (!n) goto oom;
    n->base.ops = &node_ops;
    n->def = def;
    n->nb_in = -1;
    n->nb_out = def->nb_out;
    if (def->state_size && !(n->state = prt_plugin_calloc(1, def->state_size))) goto oom;
    if (copy_fields(n, fc) != PRT_OK) goto oom;
    if (def->init && (st = def->init(n, &n->fc, err)) != PRT_OK) goto fail;
    *out = &n->base;
    return PRT_OK;
oom:
    prt_msg_set(err, "%s v%s: out of memory", def->name, def->version);
fail:
    node_free(n);
    return st;
}

static prt_status node_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                              prt_field_plugin **out, prt_msg *err)
{
    (void)phase;
    return node_make((const prt__onnx_def *)c->user, fc, out, err);
}

#define NODE(p) ((prt__onnx_node *)(p))
#define CNODE(p) ((const prt__onnx_node *)(p))

static const char *node_name(const prt_field_plugin *p) { return CNODE(p)->def->name; }
static const char *node_version(const prt_field_plugin *p) { return CNODE(p)->def->version; }
static const char *node_namespace(const prt_field_plugin *p)
{
    const prt__onnx_node *n = (const prt__onnx_node *)p;
    return n->def->ns ? n->def->ns : "";
}
static int32_t node_nb_outputs(const prt_field_plugin *p) { return CNODE(p)->nb_out; }

static prt_status check_counts(const prt__onnx_node *n, int32_t nb_in, int32_t nb_out, prt_msg *err)
{
    const prt__onnx_def *d = n->def;
    if (nb_in < d->min_in || (d->max_in >= 0 && nb_in > d->max_in)) {
        if (d->max_in < 0)
            prt_msg_set(err, "%s v%s: expected at least %d inputs, got %d", d->name, d->version, (int)d->min_in,
                        (int)nb_in);
        else if (d->min_in == d->max_in)
            prt_msg_set(err, "%s v%s: expected %d input%s, got %d", d->name, d->version, (int)d->min_in,
                        d->min_in == 1 ? "" : "s", (int)nb_in);
        else
            prt_msg_set(err, "%s v%s: expected %d to %d inputs, got %d", d->name, d->version, (int)d->min_in,
                        (int)d->max_in, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb_out != n->nb_out) {
        prt_msg_set(err, "%s v%s: gives %d output%s, %d asked for", d->name, d->version, (int)n->nb_out,
                    n->nb_out == 1 ? "" : "s", (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

/* Prefix a callback's message with "Op vN: ". */
static void prefix(const prt__onnx_def *d, prt_msg *err, const char *inner)
{
    prt_msg_set(err, "%s v%s: %s", d->name, d->version, inner);
}

static prt_status node_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                             int32_t nb_out, prt_msg *err)
{
    const prt__onnx_node *n = CNODE(p);
    char buf[512];
    prt_msg m = {buf, sizeof buf};
    prt_status st;
    int32_t i;
    if ((st = check_counts(n, nb_in, nb_out, err)) != PRT_OK) return st;
    for (i = 0; i < nb_in; i++)
        if (in[i] < 0 || in[i] >= PRT_DTYPE_COUNT_ || !(n->def->in_mask & PRT__ONNX_T(in[i]))) {
            prt_msg_set(err, "%s v%s: input %d has dtype %s, which this op does not take", n->def->name,
                        n->def->version, (int)i, prt_dtype_name(in[i]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    buf[0] = 0;
    st = n->def->types(n, in, nb_in, out, &m);
    if (st != PRT_OK) prefix(n->def, err, buf);
    return st;
}

static prt_status node_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                              int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    const prt__onnx_node *n = CNODE(p);
    char buf[512];
    prt_msg m = {buf, sizeof buf};
    prt_status st;
    int32_t i;
    if ((st = check_counts(n, nb_in, nb_out, err)) != PRT_OK) return st;
    for (i = 0; i < nb_out; i++) memset(&out[i], 0, sizeof out[i]);
    buf[0] = 0;
    st = n->def->shapes(n, in, nb_in, out, eb, &m);
    if (st != PRT_OK) {
        prefix(n->def, err, buf);
        return st;
    }
    for (i = 0; i < nb_out; i++) {
        int32_t k;
        for (k = 0; k < out[i].nb; k++)
            if (!out[i].d[k]) {
                prt_msg_set(err, "%s v%s: could not build the shape of output %d", n->def->name,
                            n->def->version, (int)i);
                return PRT_STATUS_INTERNAL;
            }
    }
    return PRT_OK;
}

static int node_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out)
{
    const prt__onnx_node *n = CNODE(p);
    prt_dtype in[64], out[16];
    char buf[256];
    prt_msg m = {buf, sizeof buf};
    int32_t i;
    if (pos < 0 || pos >= nb_in + nb_out || io[pos].desc.format != PRT_FORMAT_LINEAR) return 0;
    if (io[pos].desc.dtype < 0 || io[pos].desc.dtype >= PRT_DTYPE_COUNT_) return 0;
    if (pos < nb_in) return (n->def->in_mask & PRT__ONNX_T(io[pos].desc.dtype)) != 0;
    if (nb_in > 64 || nb_out > 16) return 0;
    for (i = 0; i < nb_in; i++) in[i] = io[i].desc.dtype;
    if (node_types(p, in, nb_in, out, nb_out, &m) != PRT_OK) return 0;
    return out[pos - nb_in] == io[pos].desc.dtype;
}

static prt_status node_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    prt_status st = check_counts(CNODE(p), nb_in, nb_out, err);
    (void)in; (void)out;
    if (st == PRT_OK) NODE(p)->nb_in = nb_in;
    return st;
}

static prt_status node_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                    const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    prt_status st = check_counts(CNODE(p), nb_in, nb_out, err);
    (void)in; (void)out;
    if (st == PRT_OK) NODE(p)->nb_in = nb_in;
    return st;
}

static size_t node_workspace(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                             const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    const prt__onnx_node *n = CNODE(p);
    prt_tensor_desc ti[64], to[16];
    int32_t i;
    if (!n->def->workspace || nb_in > 64 || nb_out > 16) return 0;
    for (i = 0; i < nb_in; i++) {
        ti[i] = in[i].desc;
        ti[i].dims = in[i].max;
    }
    for (i = 0; i < nb_out; i++) {
        to[i] = out[i].desc;
        to[i].dims = out[i].max;
    }
    return n->def->workspace(n, ti, nb_in, to);
}

static prt_status node_enqueue(prt_field_plugin *p, const prt_tensor_desc *in_desc,
                               const prt_tensor_desc *out_desc, const void *const *inputs, void *const *outputs,
                               void *workspace, prt_exec *ex)
{
    const prt__onnx_node *n = CNODE(p);
    char buf[512], full[600];
    prt_msg m = {buf, sizeof buf};
    prt_status st;
    int32_t nb_in = 0;
    if (ex->device != PRT_DEVICE_CPU) {
        snprintf(full, sizeof full, "%s v%s: only the CPU is implemented", n->def->name, n->def->version);
        ex->set_error(ex, full);
        return PRT_STATUS_UNSUPPORTED;
    }
    /* enqueue carries no input count: configure / on_shape_change set it. */
    nb_in = n->nb_in;
    if (nb_in < n->def->min_in) {
        snprintf(full, sizeof full, "%s v%s: enqueue before configure", n->def->name, n->def->version);
        ex->set_error(ex, full);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    buf[0] = 0;
    st = n->def->run(n, in_desc, nb_in, out_desc, inputs, outputs, workspace, ex, &m);
    if (st != PRT_OK) {
        snprintf(full, sizeof full, "%s v%s: %s", n->def->name, n->def->version, buf);
        ex->set_error(ex, full);
    }
    return st;
}

static prt_status node_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    prt_status st = node_make(CNODE(p)->def, &CNODE(p)->fc, out, err);
    if (st == PRT_OK) NODE(*out)->nb_in = CNODE(p)->nb_in;
    return st;
}

static prt_status node_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out,
                              prt_msg *err)
{
    (void)ctx;
    return node_clone(p, out, err);
}

static prt_status node_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    (void)err;
    *out = NODE(p)->fc;
    return PRT_OK;
}

static void node_destroy(prt_field_plugin *p)
{
    node_free(NODE(p));
}

static const prt_plugin_core_ops node_core = {
    .struct_size = sizeof(prt_plugin_core_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_name = node_name,
    .get_version = node_version,
    .get_namespace = node_namespace,
};
static const prt_plugin_build_ops node_build = {
    .struct_size = sizeof(prt_plugin_build_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = node_nb_outputs,
    .get_output_data_types = node_types,
    .get_output_shapes = node_shapes,
    .supports_format_combination = node_supports,
    .configure = node_configure,
    .get_workspace_size = node_workspace,
};
static const prt_plugin_runtime_ops node_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops),
    .abi_version = PRT_ABI_VERSION,
    .on_shape_change = node_shape_change,
    .enqueue = node_enqueue,
    .attach_to_context = node_attach,
    .get_fields_to_serialize = node_fields,
};
static const prt_field_plugin_ops node_ops = {
    .struct_size = sizeof(prt_field_plugin_ops),
    .abi_version = PRT_ABI_VERSION,
    .core = &node_core,
    .build = &node_build,
    .runtime = &node_runtime,
    .clone = node_clone,
    .destroy = node_destroy,
};

/* ---- shared callbacks ------------------------------------------------------ */

prt_status prt__onnx_types_same(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                prt_msg *err)
{
    int32_t i;
    for (i = 1; i < nb_in; i++)
        if (in[i] != in[0]) {
            prt_msg_set(err, "input %d has dtype %s but input 0 has %s; they must match", (int)i,
                        prt_dtype_name(in[i]), prt_dtype_name(in[0]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    for (i = 0; i < n->nb_out; i++) out[i] = in[0];
    return PRT_OK;
}

prt_status prt__onnx_shapes_same(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in,
                                 prt_dims_expr *out, prt_expr_builder *eb, prt_msg *err)
{
    int32_t i;
    (void)nb_in; (void)eb; (void)err;
    for (i = 0; i < n->nb_out; i++) out[i] = in[0];
    return PRT_OK;
}

int64_t prt__onnx_known(prt_expr_builder *eb, const prt_expr *e)
{
    int64_t v;
    return e && eb->get_constant(eb, e, &v) ? v : -1;
}

prt_status prt__onnx_shapes_bcast(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in,
                                  prt_dims_expr *out, prt_expr_builder *eb, prt_msg *err)
{
    int32_t i, k, r = 0;
    const prt_expr *one = eb->constant(eb, 1);
    (void)n;
    for (k = 0; k < nb_in; k++)
        if (in[k].nb > r) r = in[k].nb;
    out->nb = r;
    for (i = 0; i < r; i++) {
        const prt_expr *acc = NULL;
        int64_t acc_v = 1;
        for (k = 0; k < nb_in; k++) {
            int32_t j = i - (r - in[k].nb);
            const prt_expr *e;
            int64_t v;
            if (j < 0) continue;
            e = in[k].d[j];
            v = prt__onnx_known(eb, e);
            if (!acc) {
                acc = e;
                acc_v = v;
                continue;
            }
            if (v == 1) continue;
            if (acc_v == 1) {
                acc = e;
                acc_v = v;
                continue;
            }
            if (v >= 0 && acc_v >= 0) {
                if (v != acc_v) {
                    prt_msg_set(err, "input %d's dim %d (%lld) does not broadcast with %lld (output axis %d)",
                                (int)k, (int)j, (long long)v, (long long)acc_v, (int)i);
                    return PRT_STATUS_SHAPE_MISMATCH;
                }
                continue;
            }
            /* Unknown: acc == 1 ? e : acc, checked again at run time. */
            acc = eb->operation(eb, PRT_EXPR_SUM, acc,
                                eb->operation(eb, PRT_EXPR_PROD, eb->operation(eb, PRT_EXPR_EQUAL, acc, one),
                                              eb->operation(eb, PRT_EXPR_SUB, e, acc)));
            acc_v = prt__onnx_known(eb, acc);
        }
        out->d[i] = acc ? acc : one;
    }
    for (k = 1; k < n->nb_out; k++) out[k] = out[0];
    return PRT_OK;
}

prt_status prt__onnx_axis(const prt__onnx_node *n, const char *what, int64_t axis, int32_t rank, int extra,
                          int32_t *out, prt_msg *err)
{
    int64_t hi = extra ? rank : rank - 1;
    (void)n;
    if (axis < -(int64_t)rank || axis > hi || (!extra && rank == 0)) {
        prt_msg_set(err, "%s %lld is outside [%lld, %lld] for rank %d", what, (long long)axis, (long long)-rank,
                    (long long)hi, (int)rank);
        return PRT_STATUS_INVALID_FIELD;
    }
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return PRT_OK;
}

int prt__onnx_str_is(const prt_fields *fc, const char *name, const char *s, int dflt)
{
    const prt_field *f = prt_fields_find(fc, name);
    size_t n = strlen(s);
    if (!f) return dflt;
    return f->type == PRT_FIELD_CHAR && (size_t)f->count == n && (n == 0 || memcmp(f->data, s, n) == 0);
}

prt_status prt__onnx_field_ints(const prt__onnx_node *n, const prt_fields *fc, const char *name, int64_t *out,
                                int64_t cap, int64_t *count, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, name);
    int64_t i;
    *count = -1;
    if (!f) return PRT_OK;
    if (f->count > cap) {
        prt_msg_set(err, "%s v%s: field \"%s\" has %lld values, at most %lld", n->def->name, n->def->version,
                    name, (long long)f->count, (long long)cap);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < f->count; i++)
        if (prt_field_get_i64(f, i, &out[i]) != 0) {
            prt_msg_set(err, "%s v%s: field \"%s\" must hold integers", n->def->name, n->def->version, name);
            return PRT_STATUS_INVALID_FIELD;
        }
    *count = f->count;
    return PRT_OK;
}

int prt__onnx_str_enum(const prt__onnx_node *n, const prt_fields *fc, const char *name,
                       const char *const *names, int count, int dflt, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, name);
    char list[256];
    size_t used = 0;
    int i;
    if (!f) return dflt;
    for (i = 0; i < count; i++)
        if (prt__onnx_str_is(fc, name, names[i], 0)) return i;
    list[0] = 0;
    for (i = 0; i < count && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s\"%s\"", i ? ", " : "", names[i]);
    prt_msg_set(err, "%s v%s: field \"%s\" must be one of %s; got \"%.*s\"", n->def->name, n->def->version, name,
                list, (int)(f->count > 40 ? 40 : f->count), f->data ? (const char *)f->data : "");
    return -1;
}
