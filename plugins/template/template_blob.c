/*
 * plugins/template/template_blob.c - a blob-style plugin to copy, which also
 * keeps its weights on the device: y[n, c, ...] = x[n, c, ...] + bias[c].
 *
 * Registered as "Bias" version "1" in namespace "template". Blob style is
 * TensorRT's IPluginV2DynamicExt shape: the plugin writes its own bytes
 * (serialize) and its creator reads them back (deserialize_blob). Search for
 * "EDIT" for the places to change.
 *
 * Device-resident state: the build-phase object holds the bias in host
 * memory only. Each execution context gets its own instance (clone, then
 * attach_to_context, then initialize); attach_to_context learns the device
 * from the context, takes memory there with prt_host_device_alloc and copies
 * the bias in once (on CUDA with template_cuda.cu's upload); enqueue reads it
 * from there; destroy frees it. Only plugrt/plugin.h is included, so this file
 * builds into libplugrt or, unchanged, into a plugin library.
 *
 * Blob layout (little-endian), version 1:
 *   u8 layout (1), u8 0, u8 0, u8 0, u32 n, n x f32 bias.
 */
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"
#ifdef PLUGRT_HAVE_CUDA
#include "template_cuda.h"
#endif

#define BIAS_LAYOUT 1u
#define BIAS_MAX 65536 /* EDIT: the schema's and the blob's limit */

/* EDIT: the plugin's state. */
typedef struct bias_plugin {
    prt_blob_plugin base; /* first member: the host sees a prt_blob_plugin */
    int64_t n;
    float *bias;          /* host copy (prt_host_alloc) */
    prt_device device;    /* where dev_bias lives; per-context instances only */
    int32_t device_index;
    void *dev_bias;       /* n floats on `device`, or NULL before attach */
} bias_plugin;

static const prt_blob_plugin_ops bias_ops;

static prt_status bias_new(const float *b, int64_t n, prt_blob_plugin **out, prt_msg *err)
{
    bias_plugin *s = prt_host_alloc(sizeof *s);
    if (s) {
        memset(s, 0, sizeof *s);
        s->bias = prt_host_alloc((size_t)n * sizeof(float));
    }
    if (!s || !s->bias) {
        if (s) prt_host_free(s);
        prt_msg_set(err, "Bias: out of memory for %lld values", (long long)n);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    s->base.ops = &bias_ops;
    s->n = n;
    memcpy(s->bias, b, (size_t)n * sizeof(float));
    *out = &s->base;
    return PRT_OK;
}

/* ---- build: types, shapes, formats ----------------------------------------- */
static int32_t bias_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }

static prt_status bias_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                             int32_t nb_out, prt_msg *err)
{
    (void)p;
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "Bias takes 1 input and gives 1 output; got %d and %d", (int)nb_in, (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status bias_dims(prt_blob_plugin *p, int32_t index, const prt_dims_expr *in, int32_t nb_in,
                            prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)index; (void)nb_in; (void)eb; (void)err;
    *out = in[0];
    return PRT_OK;
}

static int bias_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return io[pos].format == PRT_FORMAT_LINEAR && io[pos].dtype == PRT_DTYPE_F32;
}

/* EDIT: check shapes against the fields; dim 1 holds the channels. */
static prt_status bias_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    const bias_plugin *s = (const bias_plugin *)p;
    char b[128];
    (void)nb_in; (void)out; (void)nb_out;
    if (in[0].desc.dims.nb < 2 || (in[0].max.d[1] != s->n || in[0].min.d[1] != s->n)) {
        prt_msg_set(err, "Bias: input needs rank >= 2 with %lld channels in dim 1, got %s", (long long)s->n,
                    prt_host_dims_str(&in[0].max, b, sizeof b));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

/* ---- per-context instance: the bias goes to the context's device ----------- */
static prt_status bias_attach(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err)
{
    bias_plugin *s = (bias_plugin *)p;
    size_t bytes = (size_t)s->n * sizeof(float);
    prt_status st = prt_host_device_alloc(ctx->device, ctx->cuda_device, bytes, &s->dev_bias, err);
    if (st != PRT_OK) return st;
    s->device = ctx->device;
    s->device_index = ctx->cuda_device;
    if (ctx->device == PRT_DEVICE_CPU) {
        memcpy(s->dev_bias, s->bias, bytes);
        return PRT_OK;
    }
#ifdef PLUGRT_HAVE_CUDA
    if (prt__template_upload(s->dev_bias, s->bias, bytes) == 0) return PRT_OK;
    prt_msg_set(err, "Bias: copying %zu bytes to CUDA device %d failed", bytes, (int)ctx->cuda_device);
#else
    prt_msg_set(err, "Bias: built without CUDA");
#endif
    prt_host_device_free(s->device, s->device_index, s->dev_bias);
    s->dev_bias = NULL;
    return PRT_STATUS_UNSUPPORTED;
}

static void bias_detach(prt_blob_plugin *p)
{
    bias_plugin *s = (bias_plugin *)p;
    prt_host_device_free(s->device, s->device_index, s->dev_bias);
    s->dev_bias = NULL;
}

static prt_status bias_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                               const void *const *inputs, void *const *outputs, void *workspace, prt_exec *ex)
{
    const bias_plugin *s = (const bias_plugin *)p;
    const prt_dims *d = &in_desc[0].dims;
    int64_t total = prt_dims_volume(d), inner = 1, i;
    int32_t k;
    (void)out_desc; (void)workspace;
    for (k = 2; k < d->nb; k++) inner *= d->d[k]; /* elements per channel */
    if (!s->dev_bias || ex->device != s->device) {
        ex->set_error(ex, "Bias: enqueue without attach_to_context on this device");
        return PRT_STATUS_INTERNAL;
    }
    if (ex->device == PRT_DEVICE_CUDA) {
#ifdef PLUGRT_HAVE_CUDA
        if (prt__template_bias_cuda(inputs[0], outputs[0], s->dev_bias, total, s->n, inner, ex->cuda_stream) == 0)
            return PRT_OK;
#endif
        ex->set_error(ex, "Bias: CUDA launch failed or CUDA not built");
        return PRT_STATUS_CUDA_ERROR;
    }
    for (i = 0; i < total; i++) /* EDIT: the computation (split it with ex->parallel_for) */
        ((float *)outputs[0])[i] =
            ((const float *)inputs[0])[i] + ((const float *)s->dev_bias)[inner ? (i / inner) % s->n : 0];
    return PRT_OK;
}

/* ---- serialization: the plugin's own bytes ---------------------------------- */
static size_t bias_ser_size(const prt_blob_plugin *p)
{
    return 8 + (size_t)((const bias_plugin *)p)->n * sizeof(float);
}

static prt_status bias_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    const bias_plugin *s = (const bias_plugin *)p;
    prt_writer w = prt_writer_init(buf, cap);
    int64_t i;
    prt_write_u8(&w, BIAS_LAYOUT);
    prt_write_u8(&w, 0);
    prt_write_u16(&w, 0);
    prt_write_u32(&w, (uint32_t)s->n);
    for (i = 0; i < s->n; i++) prt_write_f32(&w, s->bias[i]);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

static prt_status bias_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    const bias_plugin *s = (const bias_plugin *)p;
    return bias_new(s->bias, s->n, out, err);
}

static void bias_destroy(prt_blob_plugin *p)
{
    bias_plugin *s = (bias_plugin *)p;
    bias_detach(p);
    prt_host_free(s->bias);
    prt_host_free(s);
}

static const prt_blob_plugin_ops bias_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = bias_nb_outputs, .get_output_data_types = bias_types, .get_output_dims = bias_dims,
    .supports_format_combination = bias_supports, .configure_plugin = bias_configure, .enqueue = bias_enqueue,
    .get_serialization_size = bias_ser_size, .serialize = bias_serialize, .clone = bias_clone,
    .destroy = bias_destroy, .attach_to_context = bias_attach, .detach_from_context = bias_detach,
};

/* ---- the creator ---------------------------------------------------------------- */
static prt_status bias_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                              prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, "bias"); /* required: the host checked it */
    (void)c;
    return bias_new((const float *)f->data, f->count, out, err);
}

static prt_status bias_deserialize(const prt_plugin_creator *c, const void *blob, size_t len, prt_blob_plugin **out,
                                   prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    uint8_t layout = prt_read_u8(&r), pad0 = prt_read_u8(&r);
    uint16_t pad1 = prt_read_u16(&r);
    uint32_t n = prt_read_u32(&r), i;
    float *b;
    prt_status st;
    (void)c;
    if (r.failed || layout != BIAS_LAYOUT || pad0 || pad1 || n == 0 || n > BIAS_MAX ||
        prt_reader_left(&r) != (size_t)n * 4) {
        prt_msg_set(err, "Bias v1: blob needs layout %u, zero padding and 1 to %d values filling it, got %zu bytes "
                    "(layout %u, %u values)", BIAS_LAYOUT, BIAS_MAX, len, (unsigned)layout, (unsigned)n);
        return PRT_STATUS_BAD_FORMAT;
    }
    b = prt_host_alloc((size_t)n * sizeof(float));
    if (!b) {
        prt_msg_set(err, "Bias: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < n; i++) b[i] = prt_read_f32(&r);
    st = bias_new(b, n, out, err);
    prt_host_free(b);
    return st;
}

/* EDIT: one entry per field. */
static const prt_field_schema bias_schema[] = {
    {.name = "bias", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = BIAS_MAX,
     .doc = "one value per channel (dim 1)"},
};

static const prt_plugin_creator bias_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "Bias", .version = "1",
    .plugin_namespace = "template", .style = PRT_STYLE_BLOB, .nb_fields = 1, .fields = bias_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = bias_create, .deserialize_blob = bias_deserialize,
    .doc = "template blob plugin: y = x + bias[c], bias kept on the device (f32, CPU and CUDA)",
};
PRT_REGISTER_CREATOR(bias_creator)
