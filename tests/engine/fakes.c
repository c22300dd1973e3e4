/* fakes.c - see fakes.h. */
#include <stdlib.h>
#include <string.h>

#include "fakes.h"
#include "prt_test.h"

char fake_log[8192];
const char *fake_fail_call;
int fake_fail_silent;
int fake_res_created, fake_res_destroyed;
int fake_live_objects;

void fake_reset(void)
{
    fake_log[0] = 0;
    fake_fail_call = NULL;
    fake_fail_silent = 0;
    fake_res_created = fake_res_destroyed = 0;
    fake_live_objects = 0;
}

/* Record the call; non-zero when it is the one to fail. */
static int note(char tag, const char *call)
{
    size_t n = strlen(fake_log);
    if (n + strlen(call) + 4 < sizeof fake_log) {
        fake_log[n++] = tag;
        fake_log[n++] = ':';
        strcpy(fake_log + n, call);
        strcat(fake_log, " ");
    }
    return fake_fail_call && strcmp(fake_fail_call, call) == 0;
}

static prt_status fail(prt_msg *err, const char *call)
{
    if (!fake_fail_silent) prt_msg_set(err, "fake failure in %s", call);
    return PRT_STATUS_PLUGIN_ERROR;
}

#define NOTE_OR_FAIL(tag, call, err)                 \
    do {                                             \
        if (note(tag, call)) return fail(err, call); \
    } while (0)

/* ---- resources --------------------------------------------------------- */

static prt_status res_create(void *user, prt_device dev, void **out, prt_msg *err)
{
    int *r;
    (void)user; (void)dev;
    if (fake_fail_call && strcmp(fake_fail_call, "res_create") == 0) {
        prt_msg_set(err, "resource refused");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    r = malloc(sizeof *r);
    *r = 1234;
    fake_res_created++;
    *out = r;
    return PRT_OK;
}

static void res_destroy(void *user, void *res)
{
    (void)user;
    CHECK(*(int *)res == 1234);
    fake_res_destroyed++;
    free(res);
}

/* ---- common compute ---------------------------------------------------- */

static int64_t vol(const prt_dims *d)
{
    return prt_dims_volume(d);
}

static void scale_range(float *y, const float *x, float s, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) y[i] = s * x[i];
}

/* ==== FakeBlob ========================================================== */

typedef struct fake_blob {
    prt_blob_plugin base;
    float scale;
    prt_plugin_context *ctx;
    void *res;
    int configured, initialized;
} fake_blob;

static const prt_blob_plugin_ops fake_blob_ops;

static prt_blob_plugin *fb_new(float scale)
{
    fake_blob *b = calloc(1, sizeof *b);
    b->base.ops = &fake_blob_ops;
    b->scale = scale;
    fake_live_objects++;
    return &b->base;
}

static int32_t fb_nb_outputs(const prt_blob_plugin *p)
{
    (void)p;
    note('B', "get_nb_outputs");
    return 1;
}

static prt_status fb_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p;
    NOTE_OR_FAIL('B', "get_output_data_types", err);
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "expected 1 input and 1 output, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status fb_dims(prt_blob_plugin *p, int32_t idx, const prt_dims_expr *in, int32_t nb_in,
                          prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)eb; (void)nb_in; (void)idx;
    NOTE_OR_FAIL('B', "get_output_dims", err);
    *out = in[0];
    return PRT_OK;
}

static int fb_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    note('B', "supports_format_combination");
    if (io[pos].format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].dtype == PRT_DTYPE_F32;
    return io[pos].dtype == io[0].dtype;
}

static prt_status fb_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    NOTE_OR_FAIL('B', "configure_plugin", err);
    ((fake_blob *)p)->configured = 1;
    return PRT_OK;
}

static size_t fb_workspace(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out, int32_t nb_out)
{
    (void)p; (void)nb_in; (void)out; (void)nb_out;
    note('B', "get_workspace_size");
    return (size_t)vol(&in[0].dims) * sizeof(float);
}

static prt_status fb_initialize(prt_blob_plugin *p, prt_msg *err)
{
    NOTE_OR_FAIL('B', "initialize", err);
    ((fake_blob *)p)->initialized = 1;
    return PRT_OK;
}

static void fb_terminate(prt_blob_plugin *p)
{
    note('B', "terminate");
    ((fake_blob *)p)->initialized = 0;
}

static prt_status fb_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, prt_exec *ex)
{
    fake_blob *b = (fake_blob *)p;
    int64_t n = vol(&in_desc[0].dims);
    (void)out_desc;
    if (note('B', "enqueue")) {
        if (!fake_fail_silent) ex->set_error(ex, "fake failure in enqueue");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    CHECK(b->initialized);
    CHECK(workspace != NULL || n == 0);
    CHECK(ex->device == PRT_DEVICE_CPU);
    /* go through the workspace to prove it is big enough */
    scale_range(workspace, inputs[0], b->scale, n);
    memcpy(outputs[0], workspace, (size_t)n * sizeof(float));
    return PRT_OK;
}

static size_t fb_ser_size(const prt_blob_plugin *p)
{
    (void)p;
    note('B', "get_serialization_size");
    return 8;
}

static prt_status fb_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    note('B', "serialize");
    prt_write_bytes(&w, "FKB1", 4);
    prt_write_f32(&w, ((const fake_blob *)p)->scale);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

static prt_status fb_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    NOTE_OR_FAIL('B', "clone", err);
    *out = fb_new(((const fake_blob *)p)->scale);
    return PRT_OK;
}

static void fb_destroy(prt_blob_plugin *p)
{
    fake_blob *b = (fake_blob *)p;
    note('B', "destroy");
    CHECK(b->res == NULL); /* detached first */
    CHECK(!b->initialized); /* terminated first */
    fake_live_objects--;
    free(b);
}

static prt_status fb_attach(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err)
{
    fake_blob *b = (fake_blob *)p;
    prt_status s;
    NOTE_OR_FAIL('B', "attach_to_context", err);
    s = ctx->acquire(ctx, "fake.counter", res_create, res_destroy, NULL, &b->res, err);
    if (s != PRT_OK) return s;
    b->ctx = ctx;
    return PRT_OK;
}

static void fb_detach(prt_blob_plugin *p)
{
    fake_blob *b = (fake_blob *)p;
    note('B', "detach_from_context");
    if (b->ctx) b->ctx->release(b->ctx, "fake.counter");
    b->ctx = NULL;
    b->res = NULL;
}

static const prt_blob_plugin_ops fake_blob_ops = {
    sizeof(prt_blob_plugin_ops), PRT_ABI_VERSION, fb_nb_outputs, fb_types, fb_dims, fb_supports,
    fb_configure, fb_workspace, fb_initialize, fb_terminate, fb_enqueue, fb_ser_size, fb_serialize,
    fb_clone, fb_destroy, fb_attach, fb_detach};

static prt_status fbc_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                             prt_msg *err)
{
    (void)c;
    NOTE_OR_FAIL('B', "create_blob", err);
    *out = fb_new((float)prt_fields_f64(fc, "scale", 0, -1.0));
    return PRT_OK;
}

static prt_status fbc_deserialize(const prt_plugin_creator *c, const void *blob, size_t len,
                                  prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    const uint8_t *magic;
    float s;
    (void)c;
    NOTE_OR_FAIL('B', "deserialize_blob", err);
    magic = prt_read_bytes(&r, 4);
    s = prt_read_f32(&r);
    /* Lenient on purpose: trailing bytes are left for the host to catch. */
    if (r.failed || memcmp(magic, "FKB1", 4) != 0) {
        prt_msg_set(err, "expected 8 bytes starting with FKB1, got %zu", len);
        return PRT_STATUS_BAD_FORMAT;
    }
    *out = fb_new(s);
    return PRT_OK;
}

static const float two = 2.0f, three = 3.0f;
static const int32_t zero_i32 = 0;

static const prt_field_schema fake_blob_fields[] = {
    {"scale", PRT_FIELD_FLOAT32, 0, 1, 1, &two, 1, PRT_BOUND_NONE, 0, 0, 0, "multiplier"},
};

const prt_plugin_creator fake_blob_creator = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "FakeBlob", "1", "test", PRT_STYLE_BLOB,
    1, fake_blob_fields, sizeof(prt_field_schema), 0, fbc_create, fbc_deserialize, NULL,
    "test blob plugin", NULL};

/* ---- the same blob plugin with short ops ------------------------------- */

static prt_status trap_attach(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err)
{
    (void)p; (void)ctx; (void)err;
    CHECK_MSG(0, "attach_to_context beyond struct_size was called");
    return PRT_OK;
}

static void trap_detach(prt_blob_plugin *p)
{
    (void)p;
    CHECK_MSG(0, "detach_from_context beyond struct_size was called");
}

static const prt_blob_plugin_ops short_ops = {
    offsetof(prt_blob_plugin_ops, attach_to_context), PRT_ABI_VERSION, fb_nb_outputs, fb_types, fb_dims,
    fb_supports, fb_configure, fb_workspace, fb_initialize, fb_terminate, fb_enqueue, fb_ser_size,
    fb_serialize, fb_clone, fb_destroy, trap_attach, trap_detach};

static prt_status short_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                               prt_msg *err)
{
    prt_status s = fbc_create(c, fc, out, err);
    if (s == PRT_OK) (*out)->ops = &short_ops;
    return s;
}

static prt_status short_clone_create(const prt_plugin_creator *c, const void *blob, size_t len,
                                     prt_blob_plugin **out, prt_msg *err)
{
    prt_status s = fbc_deserialize(c, blob, len, out, err);
    if (s == PRT_OK) (*out)->ops = &short_ops;
    return s;
}

const prt_plugin_creator fake_short_ops_creator = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "FakeShort", "1", "test", PRT_STYLE_BLOB,
    1, fake_blob_fields, sizeof(prt_field_schema), 0, short_create, short_clone_create, NULL,
    "test blob plugin with short ops", NULL};

/* ==== FakeField ========================================================= */

typedef struct fake_field {
    prt_field_plugin base;
    float scale;
    int32_t ddep;
    prt_plugin_context *ctx;
    void *res;
    prt_field fields[2];
} fake_field;

static const prt_field_plugin_ops fake_field_ops;

static prt_field_plugin *ff_new(float scale, int32_t ddep)
{
    fake_field *f = calloc(1, sizeof *f);
    f->base.ops = &fake_field_ops;
    f->scale = scale;
    f->ddep = ddep;
    fake_live_objects++;
    return &f->base;
}

static const char *ff_name(const prt_field_plugin *p) { (void)p; return "FakeField"; }
static const char *ff_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *ff_ns(const prt_field_plugin *p) { (void)p; return "test"; }

static int32_t ff_nb_outputs(const prt_field_plugin *p)
{
    (void)p;
    note('F', "get_nb_outputs");
    return 1;
}

static prt_status ff_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out;
    NOTE_OR_FAIL('F', "get_output_data_types", err);
    out[0] = in[0];
    return PRT_OK;
}

static prt_status ff_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in,
                            prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    fake_field *f = (fake_field *)p;
    (void)nb_in; (void)nb_out;
    NOTE_OR_FAIL('F', "get_output_shapes", err);
    if (!f->ddep) {
        out[0] = in[0];
        return PRT_OK;
    }
    {
        const prt_expr *v = eb->constant(eb, 1);
        int32_t i;
        for (i = 0; i < in[0].nb; i++) v = eb->operation(eb, PRT_EXPR_PROD, v, in[0].d[i]);
        memset(&out[0], 0, sizeof out[0]);
        out[0].nb = 1;
        out[0].d[0] = eb->data_dependent(eb, v);
    }
    return PRT_OK;
}

static int ff_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    note('F', "supports_format_combination");
    if (io[pos].desc.format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].desc.dtype == PRT_DTYPE_F32;
    return io[pos].desc.dtype == io[0].desc.dtype;
}

static prt_status ff_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out;
    NOTE_OR_FAIL('F', "configure", err);
    CHECK(prt_dims_equal(&in[0].min, &in[0].max));
    return PRT_OK;
}

static size_t ff_workspace(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    (void)p; (void)nb_in; (void)out; (void)nb_out;
    note('F', "get_workspace_size");
    return (size_t)vol(&in[0].max) * sizeof(float);
}

static prt_status ff_on_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                     const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out;
    NOTE_OR_FAIL('F', "on_shape_change", err);
    return PRT_OK;
}

typedef struct ff_job {
    const float *x;
    float *y;
    float s;
} ff_job;

static void ff_range(void *arg, int64_t b, int64_t e)
{
    ff_job *j = arg;
    scale_range(j->y + b, j->x + b, j->s, e - b);
}

static prt_status ff_enqueue(prt_field_plugin *p, const prt_tensor_desc *in_desc,
                             const prt_tensor_desc *out_desc, const void *const *inputs,
                             void *const *outputs, void *workspace, prt_exec *ex)
{
    fake_field *f = (fake_field *)p;
    int64_t n = vol(&in_desc[0].dims), i, k = 0;
    const float *x = inputs[0];
    float *y = outputs[0];
    (void)workspace;
    if (note('F', "enqueue")) {
        if (!fake_fail_silent) ex->set_error(ex, "fake failure in enqueue");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    CHECK(f->res != NULL); /* attached */
    if (!f->ddep) {
        ff_job j = {x, y, f->scale};
        CHECK(prt_dims_equal(&in_desc[0].dims, &out_desc[0].dims));
        ex->parallel_for(ex, n, 16, ff_range, &j);
        return PRT_OK;
    }
    for (i = 0; i < n; i++)
        if (x[i] > 0) y[k++] = f->scale * x[i];
    {
        prt_dims d;
        memset(&d, 0, sizeof d);
        d.nb = 1;
        d.d[0] = k;
        return ex->set_output_dims(ex, 0, &d);
    }
}

static prt_status ff_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out,
                            prt_msg *err)
{
    fake_field *f = (fake_field *)p, *c;
    prt_status s;
    NOTE_OR_FAIL('F', "attach_to_context", err);
    c = (fake_field *)ff_new(f->scale, f->ddep);
    s = ctx->acquire(ctx, "fake.counter", res_create, res_destroy, NULL, &c->res, err);
    if (s != PRT_OK) {
        fake_live_objects--;
        free(c);
        return s;
    }
    c->ctx = ctx;
    *out = &c->base;
    return PRT_OK;
}

static prt_status ff_get_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    fake_field *f = (fake_field *)p;
    NOTE_OR_FAIL('F', "get_fields_to_serialize", err);
    f->fields[0].name = "scale";
    f->fields[0].data = &f->scale;
    f->fields[0].type = PRT_FIELD_FLOAT32;
    f->fields[0].count = 1;
    f->fields[1].name = "ddep";
    f->fields[1].data = &f->ddep;
    f->fields[1].type = PRT_FIELD_INT32;
    f->fields[1].count = 1;
    out->fields = f->fields;
    out->nb = 2;
    return PRT_OK;
}

static prt_status ff_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const fake_field *f = (const fake_field *)p;
    NOTE_OR_FAIL('F', "clone", err);
    *out = ff_new(f->scale, f->ddep);
    return PRT_OK;
}

static void ff_destroy(prt_field_plugin *p)
{
    fake_field *f = (fake_field *)p;
    note('F', "destroy");
    if (f->ctx) f->ctx->release(f->ctx, "fake.counter");
    fake_live_objects--;
    free(f);
}

static const prt_plugin_core_ops ff_core = {sizeof(prt_plugin_core_ops), PRT_ABI_VERSION, ff_name,
                                            ff_version, ff_ns};
static const prt_plugin_build_ops ff_build = {sizeof(prt_plugin_build_ops), PRT_ABI_VERSION, ff_nb_outputs,
                                              ff_types, ff_shapes, ff_supports, ff_configure,
                                              ff_workspace, NULL};
static const prt_plugin_runtime_ops ff_runtime = {sizeof(prt_plugin_runtime_ops), PRT_ABI_VERSION, NULL,
                                                  ff_on_shape_change, ff_enqueue, ff_attach,
                                                  ff_get_fields};
static const prt_field_plugin_ops fake_field_ops = {sizeof(prt_field_plugin_ops), PRT_ABI_VERSION,
                                                    &ff_core, &ff_build, &ff_runtime, ff_clone,
                                                    ff_destroy};

static prt_status ffc_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    (void)c;
    NOTE_OR_FAIL('F', phase == PRT_PHASE_BUILD ? "create_field(build)" : "create_field(runtime)", err);
    *out = ff_new((float)prt_fields_f64(fc, "scale", 0, -1), (int32_t)prt_fields_i64(fc, "ddep", 0, -1));
    return PRT_OK;
}

static const prt_field_schema fake_field_fields[] = {
    {"scale", PRT_FIELD_FLOAT32, 0, 1, 1, &three, 1, PRT_BOUND_NONE, 0, 0, 0, "multiplier"},
    {"ddep", PRT_FIELD_INT32, 0, 1, 1, &zero_i32, 1, PRT_BOUND_MIN | PRT_BOUND_MAX, 0, 0, 1,
     "1: output the positive elements only"},
};

const prt_plugin_creator fake_field_creator = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "FakeField", "1", "test", PRT_STYLE_FIELD,
    2, fake_field_fields, sizeof(prt_field_schema), 0, NULL, NULL, ffc_create,
    "test field plugin", NULL};
