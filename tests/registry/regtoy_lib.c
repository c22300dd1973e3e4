/*
 * regtoy_lib.c - plugin libraries for the library-loading tests. The file is
 * built several times as a MODULE that includes only plugrt/plugin.h and
 * never links against libplugrt; one macro picks the variant:
 *
 *   REGTOY_GOOD        "regtoy": RegToyScale v1 (blob style) and v2 (field
 *                      style), both y = x * scale (+ bias in v2)
 *   REGTOY_NEWABI      describes itself with PRT_ABI_VERSION + 1
 *   REGTOY_NOENTRY     exports a function, but not the entry point
 *   REGTOY_FAILENTRY   its entry point fails with a message
 *   REGTOY_BADCREATOR  a good creator and one with a broken schema
 */
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"

/* ---- the toy plugin: y = x * scale + bias over f32 ------------------------ */

typedef struct toy_field {
    prt_field_plugin base;
    float scale, bias;
    prt_field ser[2];
} toy_field;

typedef struct toy_blob {
    prt_blob_plugin base;
    float scale;
} toy_blob;

static void toy_run(const float *x, float *y, int64_t n, float scale, float bias)
{
    int64_t i;
    for (i = 0; i < n; i++) y[i] = x[i] * scale + bias;
}

static const char *toy_name(const prt_field_plugin *p) { (void)p; return "RegToyScale"; }
static const char *toy_version(const prt_field_plugin *p) { (void)p; return "2"; }
static const char *toy_namespace(const prt_field_plugin *p) { (void)p; return "regtoy"; }
static int32_t toy_field_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status toy_field_enqueue(prt_field_plugin *p, const prt_tensor_desc *in_desc,
                                    const prt_tensor_desc *out_desc, const void *const *inputs,
                                    void *const *outputs, void *workspace, prt_exec *ex)
{
    toy_field *t = (toy_field *)p;
    int64_t n = prt_dims_volume(&in_desc[0].dims);
    (void)out_desc; (void)workspace; (void)ex;
    if (n < 0 || in_desc[0].dtype != PRT_DTYPE_F32) return PRT_STATUS_TYPE_MISMATCH;
    toy_run((const float *)inputs[0], (float *)outputs[0], n, t->scale, t->bias);
    return PRT_OK;
}

static prt_status toy_field_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    toy_field *t = (toy_field *)p;
    (void)err;
    memset(t->ser, 0, sizeof t->ser);
    t->ser[0].name = "scale"; t->ser[0].data = &t->scale; t->ser[0].type = PRT_FIELD_FLOAT32; t->ser[0].count = 1;
    t->ser[1].name = "bias"; t->ser[1].data = &t->bias; t->ser[1].type = PRT_FIELD_FLOAT32; t->ser[1].count = 1;
    out->fields = t->ser;
    out->nb = 2;
    out->reserved_ = 0;
    return PRT_OK;
}

static void toy_field_destroy(prt_field_plugin *p) { free(p); }

/* Shape and type rules shared by both styles: one f32 output shaped as the input. */
static prt_status toy_types(const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "RegToyScale takes 1 input and gives 1 output, got %d and %d", (int)nb_in, (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static int toy_supports(const prt_tensor_desc *d)
{
    return d->dtype == PRT_DTYPE_F32 && d->format == PRT_FORMAT_LINEAR;
}

static prt_status toy_field_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                  int32_t nb_out, prt_msg *err)
{
    (void)p;
    return toy_types(in, nb_in, out, nb_out, err);
}

static prt_status toy_field_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                                   int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)eb; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

static int toy_field_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                              int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return toy_supports(&io[pos].desc);
}

static prt_status toy_field_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    toy_field *t = malloc(sizeof *t);
    if (!t) {
        prt_msg_set(err, "RegToyScale v2: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    memcpy(t, p, sizeof *t);
    *out = &t->base;
    return PRT_OK;
}

static prt_status toy_field_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out,
                                   prt_msg *err)
{
    (void)ctx;
    return toy_field_clone(p, out, err);
}

static const prt_plugin_core_ops toy_core = {sizeof(prt_plugin_core_ops), PRT_ABI_VERSION, toy_name,
                                             toy_version, toy_namespace};
static const prt_plugin_build_ops toy_build = {sizeof(prt_plugin_build_ops), PRT_ABI_VERSION,
                                               toy_field_nb_outputs, toy_field_types, toy_field_shapes,
                                               toy_field_supports, NULL, NULL, NULL};
static const prt_plugin_runtime_ops toy_runtime = {sizeof(prt_plugin_runtime_ops), PRT_ABI_VERSION, NULL,
                                                   NULL, toy_field_enqueue, toy_field_attach, toy_field_fields};
static const prt_field_plugin_ops toy_field_ops = {sizeof(prt_field_plugin_ops), PRT_ABI_VERSION, &toy_core,
                                                   &toy_build, &toy_runtime, toy_field_clone, toy_field_destroy};

static prt_status toy_create_field(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                                   prt_field_plugin **out, prt_msg *err)
{
    toy_field *t = calloc(1, sizeof *t);
    (void)c; (void)phase;
    if (!t) {
        prt_msg_set(err, "RegToyScale v2: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    t->base.ops = &toy_field_ops;
    t->scale = (float)prt_fields_f64(fc, "scale", 0, 1.0);
    t->bias = (float)prt_fields_f64(fc, "bias", 0, 0.0);
    *out = &t->base;
    return PRT_OK;
}

static int32_t toy_blob_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }

static prt_status toy_blob_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in_desc,
                                   const prt_tensor_desc *out_desc, const void *const *inputs,
                                   void *const *outputs, void *workspace, prt_exec *ex)
{
    toy_blob *t = (toy_blob *)p;
    int64_t n = prt_dims_volume(&in_desc[0].dims);
    (void)out_desc; (void)workspace; (void)ex;
    if (n < 0 || in_desc[0].dtype != PRT_DTYPE_F32) return PRT_STATUS_TYPE_MISMATCH;
    toy_run((const float *)inputs[0], (float *)outputs[0], n, t->scale, 0.0f);
    return PRT_OK;
}

static size_t toy_blob_size(const prt_blob_plugin *p) { (void)p; return 4; }

static prt_status toy_blob_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    prt_write_f32(&w, ((const toy_blob *)p)->scale);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

static void toy_blob_destroy(prt_blob_plugin *p) { free(p); }

static prt_status toy_blob_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                 int32_t nb_out, prt_msg *err)
{
    (void)p;
    return toy_types(in, nb_in, out, nb_out, err);
}

static prt_status toy_blob_dims(prt_blob_plugin *p, int32_t oi, const prt_dims_expr *in, int32_t nb_in,
                                prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)oi; (void)nb_in; (void)eb; (void)err;
    *out = in[0];
    return PRT_OK;
}

static int toy_blob_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in,
                             int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return toy_supports(&io[pos]);
}

static prt_status toy_blob_new(float scale, prt_blob_plugin **out, prt_msg *err);

static prt_status toy_blob_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    return toy_blob_new(((const toy_blob *)p)->scale, out, err);
}

static const prt_blob_plugin_ops toy_blob_ops = {
    sizeof(prt_blob_plugin_ops), PRT_ABI_VERSION, toy_blob_nb_outputs, toy_blob_types, toy_blob_dims,
    toy_blob_supports, NULL, NULL, NULL, NULL, toy_blob_enqueue, toy_blob_size, toy_blob_serialize,
    toy_blob_clone, toy_blob_destroy, NULL, NULL};

static prt_status toy_blob_new(float scale, prt_blob_plugin **out, prt_msg *err)
{
    toy_blob *t = calloc(1, sizeof *t);
    if (!t) {
        prt_msg_set(err, "RegToyScale v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    t->base.ops = &toy_blob_ops;
    t->scale = scale;
    *out = &t->base;
    return PRT_OK;
}

static prt_status toy_create_blob(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                                  prt_msg *err)
{
    (void)c;
    return toy_blob_new((float)prt_fields_f64(fc, "scale", 0, 1.0), out, err);
}

static prt_status toy_deserialize_blob(const prt_plugin_creator *c, const void *blob, size_t len,
                                       prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    float scale = prt_read_f32(&r);
    (void)c;
    if (r.failed || prt_reader_left(&r) != 0) {
        prt_msg_set(err, "RegToyScale v1: blob needs 4 bytes, got %zu", len);
        return PRT_STATUS_BAD_FORMAT;
    }
    return toy_blob_new(scale, out, err);
}

/* ---- creators ------------------------------------------------------------- */

static const float toy_default_scale = 2.0f;

static const prt_field_schema toy_v1_fields[] = {
    {"scale", PRT_FIELD_FLOAT32, 0, 1, 1, &toy_default_scale, 1, PRT_BOUND_MIN_EXCL, 0, 0.0, 0.0,
     "multiplier, > 0"},
};

static const prt_field_schema toy_v2_fields[] = {
    {"scale", PRT_FIELD_FLOAT32, 1, 1, 1, NULL, 0, PRT_BOUND_MIN_EXCL, 0, 0.0, 0.0, "multiplier, > 0"},
    {"bias", PRT_FIELD_FLOAT32, 0, 1, 1, NULL, 0, PRT_BOUND_NONE, 0, 0.0, 0.0, "added after scaling"},
};

static const prt_plugin_creator toy_v1 = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegToyScale", "1", "regtoy", PRT_STYLE_BLOB, 1,
    toy_v1_fields, sizeof(prt_field_schema), 0, toy_create_blob, toy_deserialize_blob, NULL,
    "y = x * scale (blob style)", NULL};

static const prt_plugin_creator toy_v2 = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegToyScale", "2", "regtoy", PRT_STYLE_FIELD, 2,
    toy_v2_fields, sizeof(prt_field_schema), 0, NULL, NULL, toy_create_field,
    "y = x * scale + bias (field style)", NULL};

/* Not exported: the tests check that dlsym cannot see it. */
int regtoy_internal_symbol(void);
int regtoy_internal_symbol(void) { return 42; }

#if defined(REGTOY_GOOD)

static const prt_plugin_creator *const toy_creators[] = {&toy_v1, &toy_v2};
PRT_PLUGIN_LIBRARY("regtoy", toy_creators, 2)

#elif defined(REGTOY_NEWABI)

static const prt_plugin_creator *const toy_creators[] = {&toy_v1, &toy_v2};
PRT_LIBRARY_EXPORT prt_status prt_plugin_library_init(const prt_host_api *host, prt_library_desc *out,
                                                      prt_msg *err)
{
    (void)host; (void)err;
    out->struct_size = (uint32_t)sizeof(*out);
    out->abi_version = PRT_ABI_VERSION + 1;
    out->name = "regtoy_newabi";
    out->nb_creators = 2;
    out->reserved_ = 0;
    out->creators = toy_creators;
    return PRT_OK;
}

#elif defined(REGTOY_NOENTRY)

PRT_LIBRARY_EXPORT int regtoy_not_the_entry_point(void);
PRT_LIBRARY_EXPORT int regtoy_not_the_entry_point(void) { return toy_v1.nb_fields + toy_v2.nb_fields; }

#elif defined(REGTOY_FAILENTRY)

PRT_LIBRARY_EXPORT prt_status prt_plugin_library_init(const prt_host_api *host, prt_library_desc *out,
                                                      prt_msg *err)
{
    (void)out;
    if (host && host->struct_size >= sizeof(*host) && host->log)
        host->log(PRT_SEVERITY_WARNING, "regtoy_failentry: refusing to load");
    prt_msg_set(err, "regtoy_failentry needs a GPU of compute capability %d, found none", 90);
    return PRT_STATUS_NO_DEVICE;
}

#elif defined(REGTOY_BADCREATOR)

static const prt_field_schema bad_fields[] = {
    {"k", PRT_FIELD_INT32, 0, 3, 1, NULL, 0, PRT_BOUND_NONE, 0, 0.0, 0.0, "min_count > max_count"},
};
static const prt_plugin_creator bad_creator = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "RegToyBroken", "1", "regtoy", PRT_STYLE_FIELD, 1,
    bad_fields, sizeof(prt_field_schema), 0, NULL, NULL, toy_create_field, NULL, NULL};
static const prt_plugin_creator *const toy_creators[] = {&toy_v2, &bad_creator};
PRT_PLUGIN_LIBRARY("regtoy_bad", toy_creators, 2)

#else
#error "define one REGTOY_ variant"
#endif
