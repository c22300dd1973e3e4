/*
 * tests/onnx/onnxtoy.c - test-only plugins for the ONNX importer tests, built
 * as a plugin library (libprt_onnxtoy.so). Not ONNX op implementations: just
 * enough float32 behaviour to see that the importer wires nodes, fields and
 * constants correctly.
 *   Relu v6 / v14 (""): y = max(x, 0); v6 adds 1000 so a test can tell
 *                        which version the lookup chose
 *   Add v7 (""):        y = a + b, equal dims
 *   Reshape v5 (""):    data input only; the target shape arrives as field
 *                        "input:1" (int64 list, one -1 allowed)
 *   Identity v1 (""):   y = x
 *   Shape v1 (""):      the input's extents as int64
 *   ToyScale v1 ("toy"): y = x * alpha * times; alpha float64, times int32
 */
#include <plugrt/plugin.h>
#include <stdlib.h>
#include <string.h>

enum { TOY_RELU, TOY_RELU6, TOY_ADD, TOY_RESHAPE, TOY_IDENTITY, TOY_SCALE, TOY_SHAPE };

typedef struct toy {
    prt_blob_plugin base;
    int32_t kind;
    int32_t times;
    double alpha;
    prt_dims shape; /* Reshape */
} toy;

static const prt_blob_plugin_ops toy_ops;

static int32_t nb_out(const prt_blob_plugin *p) { (void)p; return 1; }

static prt_status types(const prt_blob_plugin *p, const prt_dtype *in, int32_t ni, prt_dtype *out, int32_t no,
                        prt_msg *e)
{
    (void)ni; (void)no; (void)e;
    out[0] = ((const toy *)p)->kind == TOY_SHAPE ? PRT_DTYPE_I64 : in[0];
    return PRT_OK;
}

static prt_status dims(prt_blob_plugin *pp, int32_t i, const prt_dims_expr *in, int32_t ni, prt_expr_builder *eb,
                       prt_dims_expr *out, prt_msg *e)
{
    const toy *p = (const toy *)pp;
    int32_t k, neg = -1;
    const prt_expr *vol, *known;
    (void)i; (void)ni;
    if (p->kind == TOY_SHAPE) {
        memset(out, 0, sizeof *out);
        out->nb = 1;
        out->d[0] = eb->constant(eb, in[0].nb);
        return PRT_OK;
    }
    if (p->kind != TOY_RESHAPE) {
        *out = in[0];
        return PRT_OK;
    }
    vol = eb->constant(eb, 1);
    for (k = 0; k < in[0].nb; k++) vol = eb->operation(eb, PRT_EXPR_PROD, vol, in[0].d[k]);
    known = eb->constant(eb, 1);
    memset(out, 0, sizeof *out);
    out->nb = p->shape.nb;
    for (k = 0; k < p->shape.nb; k++) {
        if (p->shape.d[k] == -1) {
            neg = k;
            continue;
        }
        out->d[k] = eb->constant(eb, p->shape.d[k]);
        known = eb->operation(eb, PRT_EXPR_PROD, known, out->d[k]);
    }
    if (neg >= 0) out->d[neg] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, vol, known);
    (void)e;
    return PRT_OK;
}

static int formats(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t ni, int32_t no)
{
    (void)ni; (void)no;
    if (((const toy *)p)->kind == TOY_SHAPE && pos == 1)
        return io[pos].dtype == PRT_DTYPE_I64 && io[pos].format == PRT_FORMAT_LINEAR;
    return io[pos].dtype == PRT_DTYPE_F32 && io[pos].format == PRT_FORMAT_LINEAR;
}

static prt_status run(prt_blob_plugin *pp, const prt_tensor_desc *id, const prt_tensor_desc *od,
                      const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    const toy *p = (const toy *)pp;
    const float *x = in[0];
    float *y = out[0];
    int64_t n = prt_dims_volume(&id[0].dims), i;
    (void)od; (void)ws; (void)ex;
    if (p->kind == TOY_SHAPE) {
        memcpy(out[0], id[0].dims.d, (size_t)id[0].dims.nb * sizeof(int64_t));
        return PRT_OK;
    }
    for (i = 0; i < n; i++) {
        switch (p->kind) {
        case TOY_RELU: y[i] = x[i] > 0 ? x[i] : 0; break;
        case TOY_RELU6: y[i] = (x[i] > 0 ? x[i] : 0) + 1000; break;
        case TOY_ADD: y[i] = x[i] + ((const float *)in[1])[i]; break;
        case TOY_SCALE: y[i] = (float)(x[i] * p->alpha * p->times); break;
        default: y[i] = x[i]; break;
        }
    }
    return PRT_OK;
}

static size_t ser_size(const prt_blob_plugin *p) { (void)p; return sizeof(toy) - offsetof(toy, kind); }

static prt_status ser(const prt_blob_plugin *p, void *b, size_t c)
{
    if (c < ser_size(p)) return PRT_STATUS_INVALID_ARGUMENT;
    memcpy(b, &((const toy *)p)->kind, ser_size(p));
    return PRT_OK;
}

static void destroy(prt_blob_plugin *p) { free(p); }

static prt_status make(const toy *from, prt_blob_plugin **o)
{
    toy *t = calloc(1, sizeof *t);
    if (!t) return PRT_STATUS_OUT_OF_MEMORY;
    *t = *from;
    t->base.ops = &toy_ops;
    *o = &t->base;
    return PRT_OK;
}

static prt_status clone(const prt_blob_plugin *p, prt_blob_plugin **o, prt_msg *e)
{
    (void)e;
    return make((const toy *)p, o);
}

static const prt_blob_plugin_ops toy_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = nb_out,
    .get_output_data_types = types,
    .get_output_dims = dims,
    .supports_format_combination = formats,
    .enqueue = run,
    .get_serialization_size = ser_size,
    .serialize = ser,
    .clone = clone,
    .destroy = destroy,
};

static prt_status create(const prt_plugin_creator *c, const prt_fields *f, prt_blob_plugin **o, prt_msg *e)
{
    toy t;
    const prt_field *shape = prt_fields_find(f, "input:1");
    int64_t k;
    memset(&t, 0, sizeof t);
    t.kind = (int32_t)(intptr_t)c->user;
    t.alpha = prt_fields_f64(f, "alpha", 0, 1.0);
    t.times = (int32_t)prt_fields_i64(f, "times", 0, 1);
    if (t.kind == TOY_RESHAPE) {
        if (!shape || shape->count > PRT_MAX_DIMS) {
            prt_msg_set(e, "Reshape (test): field \"input:1\" needs 0 to 8 extents");
            return PRT_STATUS_INVALID_FIELD;
        }
        t.shape.nb = (int32_t)shape->count;
        for (k = 0; k < shape->count; k++) prt_field_get_i64(shape, k, &t.shape.d[k]);
    }
    return make(&t, o);
}

static prt_status load(const prt_plugin_creator *c, const void *b, size_t n, prt_blob_plugin **o, prt_msg *e)
{
    toy t;
    (void)c;
    memset(&t, 0, sizeof t);
    if (n != ser_size(NULL)) {
        prt_msg_set(e, "onnxtoy: blob of %zu bytes, expected %zu", n, ser_size(NULL));
        return PRT_STATUS_BAD_FORMAT;
    }
    memcpy(&t.kind, b, n);
    return make(&t, o);
}

static const prt_field_schema reshape_schema[] = {
    {.name = "input:1", .type = PRT_FIELD_INT64, .required = 1, .min_count = 0, .max_count = PRT_MAX_DIMS,
     .doc = "target shape (from the node's constant second input)"},
};
static const double one_f64 = 1.0;
static const int32_t one_i32 = 1;
static const prt_field_schema scale_schema[] = {
    {.name = "alpha", .type = PRT_FIELD_FLOAT64, .required = 1, .min_count = 1, .max_count = 1, .doc = "factor"},
    {.name = "times", .type = PRT_FIELD_INT32, .required = 0, .min_count = 1, .max_count = 1,
     .default_data = &one_i32, .default_count = 1, .doc = "integer factor"},
};

#define TOY_CREATOR(var, nm, ver, ns, kind_, nf, schema)                                                \
    static const prt_plugin_creator var = {                                                            \
        .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = nm,           \
        .version = ver, .plugin_namespace = ns, .style = PRT_STYLE_BLOB, .nb_fields = nf,               \
        .fields = schema, .field_schema_size = sizeof(prt_field_schema), .create_blob = create,         \
        .deserialize_blob = load, .doc = "ONNX importer test plugin", .user = (void *)(intptr_t)kind_}

TOY_CREATOR(relu6, "Relu", "6", "", TOY_RELU6, 0, NULL);
TOY_CREATOR(relu14, "Relu", "14", "", TOY_RELU, 0, NULL);
TOY_CREATOR(add7, "Add", "7", "", TOY_ADD, 0, NULL);
TOY_CREATOR(reshape5, "Reshape", "5", "", TOY_RESHAPE, 1, reshape_schema);
TOY_CREATOR(identity1, "Identity", "1", "", TOY_IDENTITY, 0, NULL);
TOY_CREATOR(scale1, "ToyScale", "1", "toy", TOY_SCALE, 2, scale_schema);
TOY_CREATOR(shape1, "Shape", "1", "", TOY_SHAPE, 0, NULL);

static const prt_plugin_creator *const all[] = {&relu6, &relu14, &add7, &reshape5, &identity1, &scale1, &shape1};
PRT_PLUGIN_LIBRARY("onnxtoy", all, 7)
