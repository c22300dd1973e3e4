/*
 * plugins/template/template.c - a field-style plugin to copy: y = alpha * x.
 *
 * Registered as "Scale" version "1" in namespace "template", so it stays out
 * of the default namespace. Every member a new plugin usually fills is here,
 * in the order the host calls it; search for "EDIT" for the places to change.
 * Only plugrt/plugin.h is included: a plugin never needs anything else.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"
#include "../plugin_alloc.h"

/* EDIT: the plugin's state - its fields, plus anything computed from them. */
typedef struct scale_plugin {
    prt_field_plugin base; /* first member: the host sees a prt_field_plugin */
    float alpha;
    prt_field ser[1]; /* what get_fields_to_serialize hands out */
} scale_plugin;

static const prt_field_plugin_ops scale_ops;

static prt_field_plugin *scale_new(float alpha)
{
    scale_plugin *s = prt_plugin_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base.ops = &scale_ops;
    s->alpha = alpha;
    return &s->base;
}

/* ---- core: who am I ------------------------------------------------------ */
static const char *scale_name(const prt_field_plugin *p) { (void)p; return "Scale"; }
static const char *scale_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *scale_namespace(const prt_field_plugin *p) { (void)p; return "template"; }

/* ---- build: types, shapes, formats, configuration ------------------------- */
static int32_t scale_nb_outputs(const prt_field_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status scale_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                              int32_t nb_out, prt_msg *err)
{
    (void)p;
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "Scale takes 1 input and gives 1 output; got %d and %d", (int)nb_in, (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

/* EDIT: output shapes as expressions of the input extents (eb builds them). */
static prt_status scale_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                               int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)eb; (void)nb_in; (void)nb_out; (void)err;
    out[0] = in[0]; /* same shape as the input */
    return PRT_OK;
}

/* EDIT: which types and layouts are accepted; io[0..pos-1] are already fixed. */
static int scale_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                          int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return io[pos].desc.format == PRT_FORMAT_LINEAR && io[pos].desc.dtype == PRT_DTYPE_F32;
}

static prt_status scale_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                  const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)err;
    return PRT_OK; /* EDIT: check shapes against the fields here (see Swish v2) */
}

/* ---- runtime: execution and serialization ---------------------------------- */
typedef struct scale_job {
    const float *x;
    float *y;
    float alpha;
} scale_job;

static void scale_range(void *arg, int64_t b, int64_t e)
{
    const scale_job *j = arg;
    int64_t i;
    for (i = b; i < e; i++) j->y[i] = j->alpha * j->x[i]; /* EDIT: the computation */
}

static prt_status scale_enqueue(prt_field_plugin *p, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                                const void *const *inputs, void *const *outputs, void *workspace, prt_exec *ex)
{
    scale_job j;
    (void)workspace;
    /* Check the capacity of what it writes: a host may hand any buffer. */
    if (!prt_dims_equal(&in_desc[0].dims, &out_desc[0].dims) || out_desc[0].dtype != PRT_DTYPE_F32 ||
        prt_dims_volume(&in_desc[0].dims) < 0) {
        ex->set_error(ex, "Scale: the output must be f32 with the input's shape");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (ex->device != PRT_DEVICE_CPU) {
        /* EDIT: call a CUDA launcher here (#ifdef PLUGRT_HAVE_CUDA), see Swish. */
        ex->set_error(ex, "Scale: only the CPU is implemented");
        return PRT_STATUS_UNSUPPORTED;
    }
    j.x = inputs[0];
    j.y = outputs[0];
    j.alpha = ((scale_plugin *)p)->alpha;
    ex->parallel_for(ex, prt_dims_volume(&in_desc[0].dims), 4096, scale_range, &j);
    return PRT_OK;
}

static prt_status scale_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    prt_field_plugin *c = scale_new(((const scale_plugin *)p)->alpha);
    if (!c) {
        prt_msg_set(err, "Scale: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = c;
    return PRT_OK;
}

static prt_status scale_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out,
                               prt_msg *err)
{
    (void)ctx; /* EDIT: ctx->acquire shared per-context resources here */
    return scale_clone(p, out, err);
}

static prt_status scale_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    scale_plugin *s = (scale_plugin *)p;
    (void)err;
    memset(s->ser, 0, sizeof s->ser);
    s->ser[0].name = "alpha";
    s->ser[0].data = &s->alpha;
    s->ser[0].type = PRT_FIELD_FLOAT32;
    s->ser[0].count = 1;
    out->fields = s->ser;
    out->nb = 1;
    out->reserved_ = 0;
    return PRT_OK;
}

static void scale_destroy(prt_field_plugin *p)
{
    prt_plugin_free(p);
}

/* Members left out (get_workspace_size: 0 bytes, get_valid_tactics: none,
 * set_tactic, on_shape_change: nothing to do) are optional: the host uses
 * its default. Designated initializers keep this right when members are
 * appended. */
static const prt_plugin_core_ops scale_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION, .get_name = scale_name,
    .get_version = scale_version, .get_namespace = scale_namespace,
};
static const prt_plugin_build_ops scale_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = scale_nb_outputs, .get_output_data_types = scale_types, .get_output_shapes = scale_shapes,
    .supports_format_combination = scale_supports, .configure = scale_configure,
};
static const prt_plugin_runtime_ops scale_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION, .enqueue = scale_enqueue,
    .attach_to_context = scale_attach, .get_fields_to_serialize = scale_fields,
};
static const prt_field_plugin_ops scale_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION, .core = &scale_core,
    .build = &scale_build, .runtime = &scale_runtime, .clone = scale_clone, .destroy = scale_destroy,
};

/* ---- the creator: schema and create ---------------------------------------- */
static prt_status scale_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                               prt_field_plugin **out, prt_msg *err)
{
    /* fc is validated and normalized: alpha is present (default filled in). */
    double alpha = prt_fields_f64(fc, "alpha", 0, 1.0);
    prt_field_plugin *p;
    (void)c; (void)phase;
    if (!isfinite(alpha)) {
        prt_msg_set(err, "Scale: field \"alpha\" must be finite, got %g", alpha);
        return PRT_STATUS_INVALID_FIELD;
    }
    p = scale_new((float)alpha);
    if (!p) {
        prt_msg_set(err, "Scale: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static const float scale_alpha_default = 1.0f;

/* EDIT: one entry per field: name, type, required, min/max count, default,
 * bounds, doc. The host checks every collection against it. */
static const prt_field_schema scale_schema[] = {
    {.name = "alpha", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1,
     .default_data = &scale_alpha_default, .default_count = 1, .doc = "the factor: y = alpha * x"},
};

static const prt_plugin_creator scale_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "Scale", .version = "1",
    .plugin_namespace = "template", .style = PRT_STYLE_FIELD, .nb_fields = 1, .fields = scale_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = scale_create,
    .doc = "template plugin: y = alpha * x (f32, CPU)",
};
PRT_REGISTER_CREATOR(scale_creator)
