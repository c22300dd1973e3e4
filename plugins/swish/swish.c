/*
 * plugins/swish/swish.c - Swish, y = x * sigmoid(beta * x), in two versions
 * registered side by side (see README.md):
 *
 *   "Swish" "1"  blob style:  field beta; blob = u8 layout version (1), f32 beta.
 *   "Swish" "2"  field style: fields beta and optional per-channel weights,
 *                             y = w[c] * x * sigmoid(beta * x), c = dim 1.
 *   "Swish" "24" field style: ONNX's Swish (since opset 24), field alpha,
 *                             y = x * sigmoid(alpha * x); the version-2
 *                             plugin object under another name for beta.
 *
 * f32 and f16 tensors (f16 computed in f32), CPU (parallel_for) and CUDA.
 * Only plugrt/plugin.h is needed; nothing here links against the host.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin_alloc.h"
#include "plugrt/plugin.h"
#ifdef PLUGRT_HAVE_CUDA
#include "swish_cuda.h"
#endif

#define SWISH_BLOB_LAYOUT 1u
#define SWISH_BLOB_SIZE 5u

/* ---- shared compute ------------------------------------------------------ */

typedef struct swish_params {
    float beta;
    const float *weights; /* NULL: none */
    int64_t nb_weights;
} swish_params;

typedef struct swish_job {
    const void *x;
    void *y;
    int half;
    float beta;
    const float *w;
    int64_t channels, inner;
} swish_job;

static float swish1(float x, float beta)
{
    return x / (1.0f + expf(-beta * x));
}

static void swish_range(void *arg, int64_t b, int64_t e)
{
    const swish_job *j = arg;
    int64_t i;
    for (i = b; i < e; i++) {
        float x = j->half ? prt_f16_to_f32(((const uint16_t *)j->x)[i]) : ((const float *)j->x)[i];
        float v = swish1(x, j->beta);
        if (j->w) v *= j->w[(i / j->inner) % j->channels];
        if (j->half) ((uint16_t *)j->y)[i] = prt_f32_to_f16(v);
        else ((float *)j->y)[i] = v;
    }
}

/* Channel layout of the input for per-channel weights: channels = dim 1,
 * inner = product of the dims after it. */
static int channel_layout(const prt_dims *d, int64_t *channels, int64_t *inner)
{
    int32_t k;
    int64_t in = 1;
    if (d->nb < 2) return -1;
    for (k = 2; k < d->nb; k++) in *= d->d[k];
    *channels = d->d[1];
    *inner = in;
    return 0;
}

static void dims_text(const prt_dims *d, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t k;
    n += (size_t)snprintf(buf, cap, "[");
    for (k = 0; k < d->nb && n < cap; k++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? ", " : "", (long long)d->d[k]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static prt_status weights_fit(const swish_params *p, const prt_dims *d, prt_msg *err)
{
    int64_t c, inner;
    char t[160];
    if (!p->weights) return PRT_OK;
    dims_text(d, t, sizeof t);
    if (channel_layout(d, &c, &inner) != 0) {
        prt_msg_set(err, "Swish v2: field \"weights\" needs an input with a channel dim (dim 1); the input is %s", t);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (c != p->nb_weights) {
        prt_msg_set(err,
                    "Swish v2: field \"weights\" has %lld value%s, but the input %s has %lld channel%s (dim 1); "
                    "expected one weight per channel",
                    (long long)p->nb_weights, p->nb_weights == 1 ? "" : "s", t, (long long)c, c == 1 ? "" : "s");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status swish_enqueue(const swish_params *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                                const void *x, void *y, void *workspace, prt_exec *ex)
{
    swish_job j;
    int64_t n = prt_dims_volume(&in->dims);
    char msg[320];
    prt_msg m = {msg, sizeof msg};
    if (n < 0 || !prt_dims_equal(&in->dims, &out->dims) || in->dtype != out->dtype ||
        (in->dtype != PRT_DTYPE_F32 && in->dtype != PRT_DTYPE_F16)) {
        ex->set_error(ex, "Swish: input and output must be f32 or f16 tensors of the same type and shape");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (weights_fit(p, &in->dims, &m) != PRT_OK) {
        ex->set_error(ex, msg);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    memset(&j, 0, sizeof j);
    j.x = x;
    j.y = y;
    j.half = in->dtype == PRT_DTYPE_F16;
    j.beta = p->beta;
    j.w = p->weights;
    j.channels = 1;
    j.inner = 1;
    if (p->weights) channel_layout(&in->dims, &j.channels, &j.inner);
    if (n == 0) return PRT_OK;
    if (j.w && (j.channels == 0 || j.inner == 0)) return PRT_OK; /* no elements */
    if (ex->device == PRT_DEVICE_CUDA) {
#ifdef PLUGRT_HAVE_CUDA
        int rc = prt__swish_cuda(j.half, x, y, n, j.beta, j.w, (float *)workspace, j.channels, j.inner,
                                 ex->cuda_stream);
        if (rc != 0) {
            snprintf(msg, sizeof msg, "Swish: CUDA kernel launch failed with cudaError %d", rc);
            ex->set_error(ex, msg);
            return PRT_STATUS_CUDA_ERROR;
        }
        return PRT_OK;
#else
        (void)workspace;
        ex->set_error(ex, "Swish: this build has no CUDA kernels");
        return PRT_STATUS_NO_DEVICE;
#endif
    }
    ex->parallel_for(ex, n, 4096, swish_range, &j);
    return PRT_OK;
}

static int swish_supports(int32_t pos, prt_dtype t, prt_format f, prt_dtype t0)
{
    if (f != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return t == PRT_DTYPE_F32 || t == PRT_DTYPE_F16;
    return pos == 1 && t == t0;
}

static prt_status check_io(int32_t nb_in, int32_t nb_out, prt_msg *err)
{
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "Swish takes 1 input and gives 1 output; got %d inputs and %d outputs", (int)nb_in,
                    (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

/* The output has the input's type (both plugin versions). */
static prt_status same_type(const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    prt_status s = check_io(nb_in, nb_out, err);
    if (s != PRT_OK) return s;
    out[0] = in[0];
    return PRT_OK;
}

static prt_status beta_ok(double beta, prt_msg *err)
{
    if (!isfinite(beta)) {
        prt_msg_set(err, "Swish: field \"beta\" must be finite, got %g", beta);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

/* ========================================================================= */
/* Version 1: blob style                                                     */
/* ========================================================================= */

typedef struct swish_v1 {
    prt_blob_plugin base;
    swish_params p;
} swish_v1;

static const prt_blob_plugin_ops swish_v1_ops;

static prt_blob_plugin *v1_new(float beta)
{
    swish_v1 *s = prt_plugin_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base.ops = &swish_v1_ops;
    s->p.beta = beta;
    return &s->base;
}

static int32_t v1_nb_outputs(const prt_blob_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status v1_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p;
    return same_type(in, nb_in, out, nb_out, err);
}

static prt_status v1_dims(prt_blob_plugin *p, int32_t idx, const prt_dims_expr *in, int32_t nb_in,
                          prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)eb;
    if (idx != 0 || nb_in != 1) return check_io(nb_in, idx + 1, err);
    *out = in[0];
    return PRT_OK;
}

static int v1_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)p;
    if (nb_in != 1 || nb_out != 1) return 0;
    return swish_supports(pos, io[pos].dtype, io[pos].format, io[0].dtype);
}

static prt_status v1_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)out;
    return check_io(nb_in, nb_out, err);
}

static prt_status v1_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                             const void *const *inputs, void *const *outputs, void *workspace, prt_exec *ex)
{
    return swish_enqueue(&((swish_v1 *)p)->p, &in_desc[0], &out_desc[0], inputs[0], outputs[0], workspace, ex);
}

static size_t v1_ser_size(const prt_blob_plugin *p)
{
    (void)p;
    return SWISH_BLOB_SIZE;
}

static prt_status v1_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    prt_write_u8(&w, SWISH_BLOB_LAYOUT);
    prt_write_f32(&w, ((const swish_v1 *)p)->p.beta);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

static prt_status v1_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    prt_blob_plugin *c = v1_new(((const swish_v1 *)p)->p.beta);
    if (!c) {
        prt_msg_set(err, "Swish v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = c;
    return PRT_OK;
}

static void v1_destroy(prt_blob_plugin *p)
{
    prt_plugin_free(p);
}

static const prt_blob_plugin_ops swish_v1_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION, .get_nb_outputs = v1_nb_outputs,
    .get_output_data_types = v1_types, .get_output_dims = v1_dims, .supports_format_combination = v1_supports,
    .configure_plugin = v1_configure, .enqueue = v1_enqueue, .get_serialization_size = v1_ser_size,
    .serialize = v1_serialize, .clone = v1_clone, .destroy = v1_destroy,
};

static prt_status v1_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                            prt_msg *err)
{
    double beta = prt_fields_f64(fc, "beta", 0, 1.0);
    prt_blob_plugin *p;
    prt_status s = beta_ok(beta, err);
    (void)c;
    if (s != PRT_OK) return s;
    p = v1_new((float)beta);
    if (!p) {
        prt_msg_set(err, "Swish v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static prt_status v1_deserialize(const prt_plugin_creator *c, const void *blob, size_t len,
                                 prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    uint8_t layout;
    float beta;
    prt_blob_plugin *p;
    prt_status s;
    (void)c;
    if (len != SWISH_BLOB_SIZE) {
        prt_msg_set(err, "Swish v1: blob must be %u bytes (u8 layout 1, f32 beta), got %zu", SWISH_BLOB_SIZE, len);
        return len < SWISH_BLOB_SIZE ? PRT_STATUS_TRUNCATED : PRT_STATUS_BAD_FORMAT;
    }
    layout = prt_read_u8(&r);
    beta = prt_read_f32(&r);
    if (layout != SWISH_BLOB_LAYOUT) {
        prt_msg_set(err, "Swish v1: blob layout %u is unknown; expected %u", layout, SWISH_BLOB_LAYOUT);
        return PRT_STATUS_VERSION_MISMATCH;
    }
    s = beta_ok(beta, err);
    if (s != PRT_OK) return s;
    p = v1_new(beta);
    if (!p) {
        prt_msg_set(err, "Swish v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static const float swish_beta_default = 1.0f;

static const prt_field_schema swish_v1_fields[] = {
    {.name = "beta", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1,
     .default_data = &swish_beta_default, .default_count = 1,
     .doc = "slope inside the sigmoid: y = x * sigmoid(beta * x)"},
};

/* ---- float64 reference (both versions) ------------------------------------ */

/* y = w[c] * x / (1 + exp(-beta * x)) in double; beta defaults to 1, w[c] = 1
 * without "weights", c = dim 1. Version 24 (ONNX's Swish) calls the slope
 * "alpha". */
static prt_status swish_reference(const prt_plugin_creator *c, const prt_fields *fc, prt_reference_io *io,
                                  prt_msg *err)
{
    const prt_field *w = prt_fields_find(fc, "weights");
    double beta = prt_fields_find(fc, "beta") ? prt_fields_f64(fc, "beta", 0, 1.0)
                                              : prt_fields_f64(fc, "alpha", 0, 1.0);
    const prt_dims *d;
    int64_t n, i, ch = 1, inner = 1;
    int32_t k;
    (void)c;
    if (io->nb_inputs < 1 || !io->inputs[0] || io->nb_outputs != 1) {
        prt_msg_set(err, "Swish reference: needs input x and one output, got %d inputs and %d outputs",
                    (int)io->nb_inputs, (int)io->nb_outputs);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    d = &io->input_dims[0];
    n = prt_dims_volume(d);
    if (w && w->count > 0) {
        if (d->nb < 2 || d->d[1] != w->count) {
            prt_msg_set(err, "Swish reference: \"weights\" has %lld values; expected dim 1 of x",
                        (long long)w->count);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        ch = d->d[1];
        for (k = 2; k < d->nb; k++) inner *= d->d[k];
    }
    io->outputs[0] = io->alloc(io, sizeof(double) * (size_t)(n ? n : 1));
    if (!io->outputs[0]) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) {
        double x = io->inputs[0][i], y = x / (1.0 + exp(-beta * x));
        if (w && w->count > 0 && inner > 0) y *= prt_fields_f64(fc, "weights", (i / inner) % ch, 1.0);
        io->outputs[0][i] = y;
    }
    io->output_dims[0] = *d;
    return PRT_OK;
}

#define SWISH_REFERENCE_DOC \
    "float64: y = w[c] * x / (1 + exp(-beta * x)), alpha for beta in version 24 (plugins/swish/swish.c)"

static const prt_plugin_creator swish_v1_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "Swish", .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_BLOB, .nb_fields = 1, .fields = swish_v1_fields,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = v1_create, .deserialize_blob = v1_deserialize,
    .doc = "y = x * sigmoid(beta * x); f32/f16; CPU and CUDA",
    .reference = swish_reference, .reference_doc = SWISH_REFERENCE_DOC,
};
PRT_REGISTER_CREATOR(swish_v1_creator)

/* ========================================================================= */
/* Version 2: field style, optional per-channel weights                      */
/* ========================================================================= */

typedef struct swish_v2 {
    prt_field_plugin base;
    swish_params p;
    int onnx;       /* version "24": the slope is field "alpha", no weights */
    float *weights; /* owned copy, nb_weights */
    prt_field ser[2];
} swish_v2;

static const prt_field_plugin_ops swish_v2_ops;

static prt_field_plugin *v2_new(float beta, const float *w, int64_t nb, int onnx)
{
    swish_v2 *s = prt_plugin_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base.ops = &swish_v2_ops;
    s->p.beta = beta;
    s->onnx = onnx;
    if (w && nb > 0) {
        s->weights = prt_plugin_malloc((size_t)nb * sizeof(float));
        if (!s->weights) {
            prt_plugin_free(s);
            return NULL;
        }
        memcpy(s->weights, w, (size_t)nb * sizeof(float));
        s->p.weights = s->weights;
        s->p.nb_weights = nb;
    }
    return &s->base;
}

static const char *v2_name(const prt_field_plugin *p) { (void)p; return "Swish"; }
static const char *v2_version(const prt_field_plugin *p) { return ((const swish_v2 *)p)->onnx ? "24" : "2"; }
static const char *v2_namespace(const prt_field_plugin *p) { (void)p; return ""; }

static int32_t v2_nb_outputs(const prt_field_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status v2_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p;
    return same_type(in, nb_in, out, nb_out, err);
}

static prt_status v2_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    const swish_params *sp = &((swish_v2 *)p)->p;
    int64_t c;
    prt_status s = check_io(nb_in, nb_out, err);
    if (s != PRT_OK) return s;
    if (sp->weights) {
        if (in[0].nb < 2) {
            prt_msg_set(err, "Swish v2: field \"weights\" needs an input with a channel dim (dim 1); the input "
                             "has %d dim%s", (int)in[0].nb, in[0].nb == 1 ? "" : "s");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        /* Refuse early when the channel count is already known. */
        if (eb->get_constant(eb, in[0].d[1], &c) && c != sp->nb_weights) {
            prt_msg_set(err, "Swish v2: field \"weights\" has %lld value%s, but the input has %lld channel%s "
                             "(dim 1); expected one weight per channel",
                        (long long)sp->nb_weights, sp->nb_weights == 1 ? "" : "s", (long long)c, c == 1 ? "" : "s");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    out[0] = in[0];
    return PRT_OK;
}

static int v2_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p;
    if (nb_in != 1 || nb_out != 1) return 0;
    return swish_supports(pos, io[pos].desc.dtype, io[pos].desc.format, io[0].desc.dtype);
}

static prt_status v2_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    const swish_params *sp = &((swish_v2 *)p)->p;
    prt_status s = check_io(nb_in, nb_out, err);
    (void)out;
    if (s != PRT_OK) return s;
    /* Every shape the profile allows must have the weights' channel count. */
    s = weights_fit(sp, &in[0].min, err);
    if (s == PRT_OK) s = weights_fit(sp, &in[0].max, err);
    return s;
}

/* CUDA needs the weights in device memory: the workspace holds them. */
static size_t v2_workspace(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return (size_t)((const swish_v2 *)p)->p.nb_weights * sizeof(float);
}

static prt_status v2_on_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                     const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    prt_status s = check_io(nb_in, nb_out, err);
    (void)out;
    if (s != PRT_OK) return s;
    return weights_fit(&((swish_v2 *)p)->p, &in[0].dims, err);
}

static prt_status v2_enqueue(prt_field_plugin *p, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                             const void *const *inputs, void *const *outputs, void *workspace, prt_exec *ex)
{
    return swish_enqueue(&((swish_v2 *)p)->p, &in_desc[0], &out_desc[0], inputs[0], outputs[0], workspace, ex);
}

static prt_status v2_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const swish_v2 *s = (const swish_v2 *)p;
    prt_field_plugin *c = v2_new(s->p.beta, s->p.weights, s->p.nb_weights, s->onnx);
    if (!c) {
        prt_msg_set(err, "Swish v2: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = c;
    return PRT_OK;
}

static prt_status v2_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    (void)ctx; /* no per-context resources */
    return v2_clone(p, out, err);
}

static prt_status v2_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    swish_v2 *s = (swish_v2 *)p;
    (void)err;
    memset(s->ser, 0, sizeof s->ser);
    s->ser[0].name = s->onnx ? "alpha" : "beta";
    s->ser[0].data = &s->p.beta;
    s->ser[0].type = PRT_FIELD_FLOAT32;
    s->ser[0].count = 1;
    s->ser[1].name = "weights";
    s->ser[1].data = s->p.weights;
    s->ser[1].type = PRT_FIELD_FLOAT32;
    s->ser[1].count = s->p.nb_weights;
    out->fields = s->ser;
    out->nb = s->p.weights ? 2 : 1;
    out->reserved_ = 0;
    return PRT_OK;
}

static void v2_destroy(prt_field_plugin *p)
{
    swish_v2 *s = (swish_v2 *)p;
    if (!s) return;
    prt_plugin_free(s->weights);
    prt_plugin_free(s);
}

static const prt_plugin_core_ops swish_v2_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION, .get_name = v2_name,
    .get_version = v2_version, .get_namespace = v2_namespace,
};
static const prt_plugin_build_ops swish_v2_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION, .get_nb_outputs = v2_nb_outputs,
    .get_output_data_types = v2_types, .get_output_shapes = v2_shapes, .supports_format_combination = v2_supports,
    .configure = v2_configure, .get_workspace_size = v2_workspace,
};
static const prt_plugin_runtime_ops swish_v2_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
    .on_shape_change = v2_on_shape_change, .enqueue = v2_enqueue, .attach_to_context = v2_attach,
    .get_fields_to_serialize = v2_fields,
};
static const prt_field_plugin_ops swish_v2_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION, .core = &swish_v2_core,
    .build = &swish_v2_build, .runtime = &swish_v2_runtime, .clone = v2_clone, .destroy = v2_destroy,
};

static prt_status v2_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                            prt_field_plugin **out, prt_msg *err)
{
    double beta = prt_fields_f64(fc, "beta", 0, 1.0);
    const prt_field *w = prt_fields_find(fc, "weights");
    prt_field_plugin *p;
    prt_status s = beta_ok(beta, err);
    int64_t i;
    (void)c; (void)phase; /* the same fields at build and at run time */
    if (s != PRT_OK) return s;
    if (w && (w->type != PRT_FIELD_FLOAT32 || w->count < 1 || !w->data)) {
        prt_msg_set(err, "Swish v2: field \"weights\" must be 1 or more float32 values");
        return PRT_STATUS_INVALID_FIELD;
    }
    if (w) {
        for (i = 0; i < w->count; i++) {
            if (!isfinite(((const float *)w->data)[i])) {
                prt_msg_set(err, "Swish v2: field \"weights\" must be finite; value %lld is %g", (long long)i,
                            (double)((const float *)w->data)[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
        }
    }
    p = v2_new((float)beta, w ? (const float *)w->data : NULL, w ? w->count : 0, 0);
    if (!p) {
        prt_msg_set(err, "Swish v2: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static const prt_field_schema swish_v2_fields[] = {
    {.name = "beta", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1,
     .default_data = &swish_beta_default, .default_count = 1,
     .doc = "slope inside the sigmoid: y = w[c] * x * sigmoid(beta * x)"},
    {.name = "weights", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = PRT_COUNT_UNBOUNDED,
     .doc = "optional per-channel scale w[c], one per channel (dim 1 of the input)"},
};

static const prt_plugin_creator swish_v2_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "Swish", .version = "2",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .nb_fields = 2, .fields = swish_v2_fields,
    .field_schema_size = sizeof(prt_field_schema), .create_field = v2_create,
    .doc = "y = w[c] * x * sigmoid(beta * x); f32/f16; CPU and CUDA",
    .reference = swish_reference, .reference_doc = SWISH_REFERENCE_DOC,
};
PRT_REGISTER_CREATOR(swish_v2_creator)

/* ========================================================================= */
/* Version 24: ONNX's Swish (default domain, since opset 24)                 */
/* ========================================================================= */

/* The ONNX importer picks this creator for ONNX Swish nodes (the largest
 * decimal version <= the model's opset), so a node's "alpha" attribute lands
 * here; versions 1 and 2 keep their own fields. */
static prt_status v24_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    double alpha = prt_fields_f64(fc, "alpha", 0, 1.0);
    prt_field_plugin *p;
    (void)c; (void)phase;
    if (!isfinite(alpha)) {
        prt_msg_set(err, "Swish v24: field \"alpha\" must be finite, got %g", alpha);
        return PRT_STATUS_INVALID_FIELD;
    }
    p = v2_new((float)alpha, NULL, 0, 1);
    if (!p) {
        prt_msg_set(err, "Swish v24: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static const prt_field_schema swish_v24_fields[] = {
    {.name = "alpha", .type = PRT_FIELD_FLOAT32, .required = 0, .min_count = 1, .max_count = 1,
     .default_data = &swish_beta_default, .default_count = 1, .bounds = PRT_BOUND_NONE,
     .doc = "ONNX Swish: y = x * sigmoid(alpha * x)"},
};

static const prt_plugin_creator swish_v24_creator = {
    .struct_size = sizeof(prt_plugin_creator),
    .abi_version = PRT_ABI_VERSION,
    .name = "Swish",
    .version = "24",
    .plugin_namespace = "",
    .style = PRT_STYLE_FIELD,
    .nb_fields = 1,
    .fields = swish_v24_fields,
    .field_schema_size = sizeof(prt_field_schema),
    .create_field = v24_create,
    .doc = "ONNX Swish (opset 24): y = x * sigmoid(alpha * x); f32/f16; CPU and CUDA",
    .reference = swish_reference,
    .reference_doc = SWISH_REFERENCE_DOC,
};
PRT_REGISTER_CREATOR(swish_v24_creator)
