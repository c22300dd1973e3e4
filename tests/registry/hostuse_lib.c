/*
 * hostuse_lib.c - a plugin library built with plugrt_add_plugin(... LIBRARY)
 * whose only registration is PRT_REGISTER_CREATOR (the entry point is
 * generated) and which uses host services through the host table alone:
 *
 *   "HostUse" v1 (namespace "hostuse", field style): y = x + bias[i % n].
 *   The creator logs through prt_host_log (with prt_host_dims_str); the
 *   bias is copied into memory from prt_host_device_alloc on the context's
 *   device in attach_to_context (device-resident state) and freed in destroy.
 */
#include <string.h>

#include "plugrt/plugin.h"

typedef struct hu {
    prt_field_plugin base;
    float *bias;       /* host copy (prt_host_alloc) */
    int64_t nb_bias;
    void *dev_bias;    /* on `device` (prt_host_device_alloc), per-context clones only */
    prt_device device;
    int32_t device_index;
    prt_field ser[1];
} hu;

static const char *hu_name(const prt_field_plugin *p) { (void)p; return "HostUse"; }
static const char *hu_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *hu_ns(const prt_field_plugin *p) { (void)p; return "hostuse"; }
static int32_t hu_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status hu_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

static prt_status hu_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)eb; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

static int hu_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return io[pos].desc.dtype == PRT_DTYPE_F32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status hu_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    char b[128];
    (void)p; (void)nb_in; (void)out; (void)nb_out; (void)err;
    prt_host_log(PRT_SEVERITY_INFO, "HostUse: configured for %s", prt_host_dims_str(&in[0].max, b, sizeof b));
    return PRT_OK;
}

static prt_status hu_enqueue(prt_field_plugin *p, const prt_tensor_desc *ind, const prt_tensor_desc *outd,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    const hu *h = (const hu *)p;
    const float *x = inputs[0], *b = h->dev_bias;
    float *y = outputs[0];
    int64_t i, n = prt_dims_volume(&ind[0].dims);
    (void)outd; (void)ws;
    if (ex->device != PRT_DEVICE_CPU || !b) {
        ex->set_error(ex, "HostUse runs on the CPU, after attach_to_context");
        return PRT_STATUS_UNSUPPORTED;
    }
    for (i = 0; i < n; i++) y[i] = x[i] + b[i % h->nb_bias];
    return PRT_OK;
}

static prt_status hu_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    hu *h = (hu *)p;
    (void)err;
    memset(h->ser, 0, sizeof h->ser);
    h->ser[0].name = "bias";
    h->ser[0].type = PRT_FIELD_FLOAT32;
    h->ser[0].data = h->bias;
    h->ser[0].count = h->nb_bias;
    out->fields = h->ser;
    out->nb = 1;
    out->reserved_ = 0;
    return PRT_OK;
}

static void hu_destroy(prt_field_plugin *p)
{
    hu *h = (hu *)p;
    prt_host_device_free(h->device, h->device_index, h->dev_bias);
    prt_host_free(h->bias);
    prt_host_free(h);
}

static prt_field_plugin *hu_new(const float *bias, int64_t n);

static prt_status hu_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const hu *h = (const hu *)p;
    *out = hu_new(h->bias, h->nb_bias);
    if (!*out) prt_msg_set(err, "HostUse: out of memory");
    return *out ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}

/* The per-context clone keeps its bias on the context's device. */
static prt_status hu_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    const hu *h = (const hu *)p;
    hu *c;
    prt_status st = hu_clone(p, out, err);
    if (st != PRT_OK) return st;
    c = (hu *)*out;
    c->device = ctx->device;
    c->device_index = ctx->cuda_device;
    st = prt_host_device_alloc(c->device, c->device_index, (size_t)h->nb_bias * sizeof(float), &c->dev_bias, err);
    if (st != PRT_OK || c->device != PRT_DEVICE_CPU) {
        hu_destroy(*out);
        *out = NULL;
        if (st == PRT_OK) prt_msg_set(err, "HostUse keeps its bias in host-visible memory: CPU contexts only");
        return st == PRT_OK ? PRT_STATUS_UNSUPPORTED : st;
    }
    memcpy(c->dev_bias, h->bias, (size_t)h->nb_bias * sizeof(float));
    return PRT_OK;
}

static const prt_plugin_core_ops hu_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION,
    .get_name = hu_name, .get_version = hu_version, .get_namespace = hu_ns};
static const prt_plugin_build_ops hu_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = hu_nb_outputs, .get_output_data_types = hu_types, .get_output_shapes = hu_shapes,
    .supports_format_combination = hu_supports, .configure = hu_configure};
static const prt_plugin_runtime_ops hu_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
    .enqueue = hu_enqueue, .attach_to_context = hu_attach, .get_fields_to_serialize = hu_fields};
static const prt_field_plugin_ops hu_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .core = &hu_core, .build = &hu_build, .runtime = &hu_runtime, .clone = hu_clone, .destroy = hu_destroy};

static prt_field_plugin *hu_new(const float *bias, int64_t n)
{
    hu *h = prt_host_alloc(sizeof *h);
    if (!h) return NULL;
    memset(h, 0, sizeof *h);
    h->base.ops = &hu_ops;
    h->bias = prt_host_alloc((size_t)n * sizeof(float));
    if (!h->bias) {
        prt_host_free(h);
        return NULL;
    }
    memcpy(h->bias, bias, (size_t)n * sizeof(float));
    h->nb_bias = n;
    return &h->base;
}

static prt_status hu_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                            prt_field_plugin **out, prt_msg *err)
{
    const prt_field *b = prt_fields_find(fc, "bias");
    (void)c;
    prt_host_log(PRT_SEVERITY_INFO, "HostUse: creating with %lld bias values (%s phase), host status 2 is \"%s\"",
                 (long long)b->count, phase == PRT_PHASE_BUILD ? "build" : "runtime",
                 prt_host_status_str(PRT_STATUS_NOT_FOUND));
    *out = hu_new((const float *)b->data, b->count);
    if (!*out) prt_msg_set(err, "HostUse: out of memory");
    return *out ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}

static const prt_field_schema hu_schema[] = {
    {.name = "bias", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = PRT_COUNT_UNBOUNDED,
     .doc = "added to x, repeated"},
};

static const prt_plugin_creator hu_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "HostUse",
    .version = "1", .plugin_namespace = "hostuse", .style = PRT_STYLE_FIELD, .nb_fields = 1, .fields = hu_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = hu_create,
    .doc = "y = x + bias, bias kept in device memory from the host table"};

PRT_REGISTER_CREATOR(hu_creator)
