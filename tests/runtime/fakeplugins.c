/* tests/runtime/fakeplugins.c - see fakeplugins.h. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fakeplugins.h"
#include "plugrt/plugin.h"
#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static atomic_int live_attach;
int fake_live_attachments(void) { return atomic_load(&live_attach); }

static _Atomic size_t ws_need = 64;
void fake_set_workspace_need(size_t bytes) { atomic_store(&ws_need, bytes); }

static int64_t vol(const prt_dims *d)
{
    int64_t v = 1;
    int32_t i;
    for (i = 0; i < d->nb; i++) v *= d->d[i];
    return v;
}

/* ======================================================================== */
/* TestScale (blob style), versions 1 and 2                                 */
/* ======================================================================== */

typedef struct scale_pl {
    prt_blob_plugin base;
    float scale, bias;
    int32_t crop;
    int32_t version;
    int counter_held;
    prt_plugin_context *ctx;
} scale_pl;

typedef struct scale_job {
    const float *x;
    float *y;
    float scale, bias, add;
} scale_job;

static int32_t sc_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }

static prt_status sc_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p;
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "TestScale takes 1 input, got %d", (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status sc_dims(prt_blob_plugin *p, int32_t oi, const prt_dims_expr *in, int32_t nb_in, prt_expr_builder *eb,
                          prt_dims_expr *out, prt_msg *err)
{
    scale_pl *s = (scale_pl *)p;
    (void)oi;
    if (nb_in != 1 || in[0].nb < 1) {
        prt_msg_set(err, "TestScale needs one input of rank >= 1");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    *out = in[0];
    if (s->crop)
        out->d[0] = eb->operation(eb, PRT_EXPR_SUB, in[0].d[0], eb->constant(eb, s->crop));
    return PRT_OK;
}

static int sc_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    if (io[pos].format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].dtype == PRT_DTYPE_F32;
    return io[pos].dtype == io[0].dtype;
}

static prt_status sc_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)out;
    if (nb_in != 1 || nb_out != 1) {
        prt_msg_set(err, "bad io count");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

static size_t sc_ws(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                    int32_t nb_out)
{
    (void)p; (void)nb_in; (void)out; (void)nb_out;
    return (size_t)vol(&in[0].dims) * sizeof(float);
}

static void sc_range(void *arg, int64_t b, int64_t e)
{
    scale_job *j = arg;
    int64_t i;
    for (i = b; i < e; i++) j->y[i] = j->x[i] * j->scale + j->bias + j->add;
}

static prt_status sc_enqueue(prt_blob_plugin *p, const prt_tensor_desc *ind, const prt_tensor_desc *outd,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    scale_pl *s = (scale_pl *)p;
    scale_job j;
    int64_t n = vol(&outd[0].dims);
    if (ex->device != PRT_DEVICE_CPU) {
        ex->set_error(ex, "TestScale runs on the CPU only");
        return PRT_STATUS_UNSUPPORTED;
    }
    if (!s->counter_held) {
        ex->set_error(ex, "TestScale: enqueue before attach_to_context");
        return PRT_STATUS_INTERNAL;
    }
    /* Stage the input in the workspace the host sized for us. */
    memcpy(ws, inputs[0], (size_t)vol(&ind[0].dims) * sizeof(float));
    j.x = ws;
    j.y = outputs[0];
    j.scale = s->scale;
    j.bias = s->bias;
    j.add = s->version == 2 ? 100.0f : 0.0f;
    ex->parallel_for(ex, n, 64, sc_range, &j);
    return PRT_OK;
}

static size_t sc_ser_size(const prt_blob_plugin *p) { (void)p; return 12; }

static prt_status sc_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    const scale_pl *s = (const scale_pl *)p;
    prt_writer w = prt_writer_init(buf, cap);
    prt_write_f32(&w, s->scale);
    prt_write_f32(&w, s->bias);
    prt_write_i32(&w, s->crop);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

static const prt_blob_plugin_ops *sc_ops_for(int32_t version);

static scale_pl *sc_new(float scale, float bias, int32_t crop, int32_t version)
{
    scale_pl *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->base.ops = sc_ops_for(version);
    s->scale = scale;
    s->bias = bias;
    s->crop = crop;
    s->version = version;
    return s;
}

static prt_status sc_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    const scale_pl *s = (const scale_pl *)p;
    scale_pl *c = sc_new(s->scale, s->bias, s->crop, s->version);
    if (!c) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &c->base;
    return PRT_OK;
}

static void sc_destroy(prt_blob_plugin *p) { free(p); }

static prt_status counter_create(void *user, prt_device d, void **out, prt_msg *err)
{
    (void)user; (void)d; (void)err;
    *out = calloc(1, sizeof(int));
    return *out ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}
static void counter_destroy(void *user, void *r) { (void)user; free(r); }

static prt_status sc_attach(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err)
{
    scale_pl *s = (scale_pl *)p;
    void *r = NULL;
    prt_status st = ctx->acquire(ctx, "test.counter", counter_create, counter_destroy, NULL, &r, err);
    if (st != PRT_OK) return st;
    (*(int *)r)++;
    s->counter_held = 1;
    s->ctx = ctx;
    atomic_fetch_add(&live_attach, 1);
    return PRT_OK;
}

static void sc_detach(prt_blob_plugin *p)
{
    scale_pl *s = (scale_pl *)p;
    if (s->counter_held) {
        s->ctx->release(s->ctx, "test.counter");
        s->counter_held = 0;
        atomic_fetch_sub(&live_attach, 1);
    }
}

static prt_status sc_initialize(prt_blob_plugin *p, prt_msg *err) { (void)p; (void)err; return PRT_OK; }
static void sc_terminate(prt_blob_plugin *p) { (void)p; }

#define SCALE_OPS(nm)                                                                                   \
    static const prt_blob_plugin_ops nm = {                                                             \
        sizeof(prt_blob_plugin_ops), PRT_ABI_VERSION, sc_nb_outputs, sc_types, sc_dims, sc_supports,    \
        sc_configure, sc_ws, sc_initialize, sc_terminate, sc_enqueue, sc_ser_size, sc_serialize,        \
        sc_clone, sc_destroy, sc_attach, sc_detach};
SCALE_OPS(scale_ops_v1)
SCALE_OPS(scale_ops_v2)
static const prt_blob_plugin_ops *sc_ops_for(int32_t version) { return version == 2 ? &scale_ops_v2 : &scale_ops_v1; }

static const float zero_f = 0.0f;
static const int32_t zero_i = 0;
static const prt_field_schema scale_schema[] = {
    {"scale", PRT_FIELD_FLOAT32, 1, 1, 1, NULL, 0, PRT_BOUND_NONE, 0, 0, 0, "multiplier"},
    {"bias", PRT_FIELD_FLOAT32, 0, 1, 1, &zero_f, 1, PRT_BOUND_NONE, 0, 0, 0, "offset"},
    {"crop", PRT_FIELD_INT32, 0, 1, 1, &zero_i, 1, PRT_BOUND_MIN, 0, 0, 0, "rows dropped from dim 0"},
};

static prt_status sc_create_common(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                                   prt_msg *err)
{
    scale_pl *s = sc_new((float)prt_fields_f64(fc, "scale", 0, 1.0), (float)prt_fields_f64(fc, "bias", 0, 0.0),
                         (int32_t)prt_fields_i64(fc, "crop", 0, 0), strcmp(c->version, "2") == 0 ? 2 : 1);
    if (!s) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &s->base;
    return PRT_OK;
}

static prt_status sc_deserialize(const prt_plugin_creator *c, const void *blob, size_t len, prt_blob_plugin **out,
                                 prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    float sc = prt_read_f32(&r), b = prt_read_f32(&r);
    int32_t crop = prt_read_i32(&r);
    scale_pl *s;
    if (r.failed || prt_reader_left(&r) != 0) {
        prt_msg_set(err, "TestScale blob must be 12 bytes, got %zu", len);
        return PRT_STATUS_BAD_FORMAT;
    }
    s = sc_new(sc, b, crop, strcmp(c->version, "2") == 0 ? 2 : 1);
    if (!s) return PRT_STATUS_OUT_OF_MEMORY;
    *out = &s->base;
    return PRT_OK;
}

#define SCALE_CREATOR(nm, ver)                                                                          \
    static const prt_plugin_creator nm = {sizeof(prt_plugin_creator), PRT_ABI_VERSION, "TestScale", ver, "", \
                                          PRT_STYLE_BLOB, 3, scale_schema, sizeof(prt_field_schema), 0,  \
                                          sc_create_common, sc_deserialize, NULL, "test scale", NULL};
SCALE_CREATOR(scale_creator_v1, "1")
SCALE_CREATOR(scale_creator_v2, "2")

/* ======================================================================== */
/* Field-style fakes: TestAddBias, TestHalfNeg, TestCompact                 */
/* ======================================================================== */

enum { K_ADDBIAS = 0, K_HALFNEG = 1, K_COMPACT = 2, K_COPY32 = 3, K_COPY16 = 4, K_WSGROW = 5, K_DEVCOUNT = 6 };

typedef struct fk_pl {
    prt_field_plugin base;
    int kind;
    int32_t k;
    int64_t count; /* TestDevCount: the extent of the last enqueue (the source of its copy) */
    prt_phase phase;
    prt_field ser[1];
    const prt_plugin_creator *creator;
} fk_pl;

static const char *fk_name(const prt_field_plugin *p) { return ((const fk_pl *)p)->creator->name; }
static const char *fk_version(const prt_field_plugin *p) { return ((const fk_pl *)p)->creator->version; }
static const char *fk_ns(const prt_field_plugin *p) { (void)p; return ""; }

static int32_t fk_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status fk_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    const fk_pl *f = (const fk_pl *)p;
    int32_t want = f->kind == K_ADDBIAS ? 2 : 1;
    if (nb_in != want || nb_out != 1) {
        prt_msg_set(err, "%s takes %d inputs, got %d", f->creator->name, (int)want, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status fk_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    const fk_pl *f = (const fk_pl *)p;
    (void)nb_out;
    if (f->kind == K_ADDBIAS) {
        int64_t c0, c1;
        if (nb_in != 2 || in[0].nb != 2 || in[1].nb != 1) {
            prt_msg_set(err, "TestAddBias needs x [N, C] and b [C]");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (eb->get_constant(eb, in[0].d[1], &c0) && eb->get_constant(eb, in[1].d[0], &c1) && c0 != c1) {
            prt_msg_set(err, "TestAddBias: x has %lld columns but b has %lld", (long long)c0, (long long)c1);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        return PRT_OK;
    }
    if (f->kind == K_COMPACT || f->kind == K_DEVCOUNT) {
        const prt_expr *n = in[0].nb ? in[0].d[0] : eb->constant(eb, 1);
        int32_t j;
        for (j = 1; j < in[0].nb; j++) n = eb->operation(eb, PRT_EXPR_PROD, n, in[0].d[j]);
        out[0].nb = 1;
        out[0].d[0] = eb->data_dependent(eb, n);
        return PRT_OK;
    }
    out[0] = in[0];
    return PRT_OK;
}

static int fk_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    const fk_pl *f = (const fk_pl *)p;
    (void)nb_in; (void)nb_out;
    if (io[pos].desc.format != PRT_FORMAT_LINEAR) return 0;
    switch (f->kind) {
    case K_HALFNEG: case K_COPY16: return io[pos].desc.dtype == PRT_DTYPE_F16;
    case K_COMPACT: case K_COPY32: case K_WSGROW: case K_DEVCOUNT: return io[pos].desc.dtype == PRT_DTYPE_F32;
    default:
        if (pos == 0) return io[0].desc.dtype == PRT_DTYPE_F32 || io[0].desc.dtype == PRT_DTYPE_F16;
        return io[pos].desc.dtype == io[0].desc.dtype;
    }
}

static prt_status fk_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)err;
    return PRT_OK;
}

static size_t fk_ws(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                    const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    const fk_pl *f = (const fk_pl *)p;
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    if (f->kind == K_WSGROW) return atomic_load(&ws_need);
    if (f->kind == K_DEVCOUNT) return sizeof(int64_t);
    return 0;
}

static prt_status fk_on_shape(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                              int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)err;
    return PRT_OK;
}

static float ld(const void *base, prt_dtype t, int64_t i)
{
    return t == PRT_DTYPE_F16 ? prt_f16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}
static void st(void *base, prt_dtype t, int64_t i, float v)
{
    if (t == PRT_DTYPE_F16) ((uint16_t *)base)[i] = prt_f32_to_f16(v);
    else ((float *)base)[i] = v;
}

static prt_status fk_enqueue(prt_field_plugin *p, const prt_tensor_desc *ind, const prt_tensor_desc *outd,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    const fk_pl *f = (const fk_pl *)p;
    int64_t n = vol(&ind[0].dims), i;
    (void)ws;
    if (f->kind == K_COPY32 || f->kind == K_COPY16) {
        size_t bytes = (size_t)n * prt_dtype_size(ind[0].dtype);
        if (ex->device == PRT_DEVICE_CPU) {
            if (bytes) memcpy(outputs[0], inputs[0], bytes);
            return PRT_OK;
        }
#ifdef PLUGRT_HAVE_CUDA
        if (bytes && cudaMemcpyAsync(outputs[0], inputs[0], bytes, cudaMemcpyDeviceToDevice,
                                     (cudaStream_t)ex->cuda_stream) != cudaSuccess) {
            ex->set_error(ex, "TestCopy: cudaMemcpyAsync failed");
            return PRT_STATUS_CUDA_ERROR;
        }
        return PRT_OK;
#endif
    }
    if (f->kind == K_DEVCOUNT) {
        fk_pl *m = (fk_pl *)p;
        int64_t cnt = f->k < n ? f->k : n;
        prt_dims d;
        if (outd[0].dims.d[0] < n) {
            ex->set_error(ex, "TestDevCount: output buffer smaller than the input");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        m->count = cnt;
        if (ex->device == PRT_DEVICE_CPU) {
            if (cnt) memcpy(outputs[0], inputs[0], (size_t)cnt * sizeof(float));
            memset(&d, 0, sizeof d);
            d.nb = 1;
            d.d[0] = cnt;
            return ex->set_output_dims(ex, 0, &d);
        }
#ifdef PLUGRT_HAVE_CUDA
        if (ex->struct_size < sizeof(prt_exec) || !ex->set_output_extent_device) {
            ex->set_error(ex, "TestDevCount: the host offers no set_output_extent_device");
            return PRT_STATUS_UNSUPPORTED;
        }
        /* The count goes to device memory (the workspace) on the stream, as a
         * kernel would write it; the host learns it from there. */
        if ((cnt && cudaMemcpyAsync(outputs[0], inputs[0], (size_t)cnt * sizeof(float), cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)ex->cuda_stream) != cudaSuccess) ||
            cudaMemcpyAsync(ws, &m->count, sizeof(int64_t), cudaMemcpyHostToDevice, (cudaStream_t)ex->cuda_stream) !=
                cudaSuccess) {
            ex->set_error(ex, "TestDevCount: cudaMemcpyAsync failed");
            return PRT_STATUS_CUDA_ERROR;
        }
        return ex->set_output_extent_device(ex, 0, 0, (const int64_t *)ws);
#else
        ex->set_error(ex, "TestDevCount: built without CUDA");
        return PRT_STATUS_UNSUPPORTED;
#endif
    }
    if (ex->device != PRT_DEVICE_CPU) {
        ex->set_error(ex, "fake plugins run on the CPU only");
        return PRT_STATUS_UNSUPPORTED;
    }
    if (f->phase != PRT_PHASE_RUNTIME) {
        ex->set_error(ex, "enqueue on a build-phase plugin");
        return PRT_STATUS_INTERNAL;
    }
    switch (f->kind) {
    case K_ADDBIAS: {
        int64_t c = ind[0].dims.d[1];
        for (i = 0; i < n; i++)
            st(outputs[0], outd[0].dtype, i, ld(inputs[0], ind[0].dtype, i) + ld(inputs[1], ind[1].dtype, i % c));
        return PRT_OK;
    }
    case K_HALFNEG:
        for (i = 0; i < n; i++) st(outputs[0], PRT_DTYPE_F16, i, -(float)f->k * ld(inputs[0], PRT_DTYPE_F16, i));
        return PRT_OK;
    case K_WSGROW: {
        /* Uses every byte of the workspace it asks for now. */
        size_t need = atomic_load(&ws_need);
        if (need) memset(ws, 0x5a, need);
        if (n) memcpy(outputs[0], inputs[0], (size_t)n * sizeof(float));
        return PRT_OK;
    }
    default: {
        int64_t m = 0;
        prt_dims d;
        const float *x = inputs[0];
        float *y = outputs[0];
        if (outd[0].dims.d[0] < n) {
            ex->set_error(ex, "TestCompact: output buffer smaller than the input");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < n; i++)
            if (x[i] > 0) y[m++] = x[i];
        memset(&d, 0, sizeof d);
        d.nb = 1;
        d.d[0] = m;
        return ex->set_output_dims(ex, 0, &d);
    }
    }
}

static prt_field_plugin *fk_new(const prt_plugin_creator *c, int32_t k, prt_phase phase);

static prt_status fk_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    const fk_pl *f = (const fk_pl *)p;
    (void)ctx;
    *out = fk_new(f->creator, f->k, f->phase);
    if (!*out) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    return PRT_OK;
}

static prt_status fk_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    fk_pl *f = (fk_pl *)p;
    (void)err;
    if (f->kind == K_HALFNEG || f->kind == K_DEVCOUNT) {
        f->ser[0].name = "k";
        f->ser[0].data = &f->k;
        f->ser[0].type = PRT_FIELD_INT32;
        f->ser[0].reserved_ = 0;
        f->ser[0].count = 1;
        out->fields = f->ser;
        out->nb = 1;
    } else {
        out->fields = NULL;
        out->nb = 0;
    }
    out->reserved_ = 0;
    return PRT_OK;
}

static prt_status fk_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const fk_pl *f = (const fk_pl *)p;
    *out = fk_new(f->creator, f->k, f->phase);
    if (!*out) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    return PRT_OK;
}

static void fk_destroy(prt_field_plugin *p) { free(p); }

static const prt_plugin_core_ops fk_core = {sizeof(prt_plugin_core_ops), PRT_ABI_VERSION, fk_name, fk_version, fk_ns};
static const prt_plugin_build_ops fk_build = {sizeof(prt_plugin_build_ops), PRT_ABI_VERSION, fk_nb_outputs, fk_types,
                                              fk_shapes, fk_supports, fk_configure, fk_ws, NULL};
static const prt_plugin_runtime_ops fk_runtime = {sizeof(prt_plugin_runtime_ops), PRT_ABI_VERSION, NULL, fk_on_shape,
                                                  fk_enqueue, fk_attach, fk_fields};
static const prt_field_plugin_ops fk_ops = {sizeof(prt_field_plugin_ops), PRT_ABI_VERSION, &fk_core, &fk_build,
                                            &fk_runtime, fk_clone, fk_destroy};

static prt_field_plugin *fk_new(const prt_plugin_creator *c, int32_t k, prt_phase phase)
{
    fk_pl *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->base.ops = &fk_ops;
    f->kind = (int)(intptr_t)c->user;
    f->k = k;
    f->phase = phase;
    f->creator = c;
    return &f->base;
}

static prt_status fk_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase, prt_field_plugin **out,
                            prt_msg *err)
{
    *out = fk_new(c, (int32_t)prt_fields_i64(fc, "k", 0, 1), phase);
    if (!*out) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    return PRT_OK;
}

static const int32_t one_i = 1;
static const prt_field_schema halfneg_schema10[] = {
    {"k", PRT_FIELD_INT32, 0, 1, 1, &one_i, 1, PRT_BOUND_MIN | PRT_BOUND_MAX, 0, 1, 10, "multiplier"}};
static const prt_field_schema halfneg_schema5[] = {
    {"k", PRT_FIELD_INT32, 0, 1, 1, &one_i, 1, PRT_BOUND_MIN | PRT_BOUND_MAX, 0, 1, 5, "multiplier"}};

#define FIELD_CREATOR(nm, name, nf, schema, kind)                                                       \
    static const prt_plugin_creator nm = {sizeof(prt_plugin_creator), PRT_ABI_VERSION, name, "1", "",   \
                                          PRT_STYLE_FIELD, nf, schema, sizeof(prt_field_schema), 0, NULL, \
                                          NULL, fk_create, "test", (void *)(intptr_t)(kind)};
FIELD_CREATOR(addbias_creator, "TestAddBias", 0, NULL, K_ADDBIAS)
FIELD_CREATOR(halfneg_creator10, "TestHalfNeg", 1, halfneg_schema10, K_HALFNEG)
FIELD_CREATOR(halfneg_creator5, "TestHalfNeg", 1, halfneg_schema5, K_HALFNEG)
FIELD_CREATOR(compact_creator, "TestCompact", 0, NULL, K_COMPACT)
FIELD_CREATOR(copy32_creator, "TestCopyF32", 0, NULL, K_COPY32)
FIELD_CREATOR(copy16_creator, "TestCopyF16", 0, NULL, K_COPY16)
FIELD_CREATOR(wsgrow_creator, "TestWsGrow", 0, NULL, K_WSGROW)
static const int32_t three_i = 3;
static const prt_field_schema devcount_schema[] = {
    {"k", PRT_FIELD_INT32, 0, 1, 1, &three_i, 1, PRT_BOUND_MIN, 0, 0, 0, "elements kept"}};
FIELD_CREATOR(devcount_creator, "TestDevCount", 1, devcount_schema, K_DEVCOUNT)

/* ======================================================================== */
/* TestTactic: v1 blob style, v2 field style                                */
/* ======================================================================== */

#define TT_MAX 8
#define TT_COUNTED 16

static atomic_uint_least64_t tt_clock;
static atomic_int tt_enqueues[TT_COUNTED];
static atomic_int tt_set_calls, tt_last_set;

uint64_t fake_tactic_clock(void *user)
{
    (void)user;
    return atomic_load(&tt_clock);
}

int fake_tactic_enqueues(int32_t tactic)
{
    return tactic >= 0 && tactic < TT_COUNTED ? atomic_load(&tt_enqueues[tactic]) : 0;
}

int fake_tactic_set_calls(void) { return atomic_load(&tt_set_calls); }
int32_t fake_tactic_last_set(void) { return atomic_load(&tt_last_set); }

void fake_tactic_reset(void)
{
    int i;
    atomic_store(&tt_clock, 0);
    for (i = 0; i < TT_COUNTED; i++) atomic_store(&tt_enqueues[i], 0);
    atomic_store(&tt_set_calls, 0);
    atomic_store(&tt_last_set, 0);
}

/* What a run of a tactic costs on the fake clock, in ns. */
static uint64_t tt_cost(int32_t tactic)
{
    return tactic == 0 ? 500000u : tactic == 1 ? 1000000u : tactic == 2 ? 1000u : 10000u * (uint64_t)tactic;
}

typedef struct tt_core {
    int32_t nb;
    int32_t ids[TT_MAX];
    int32_t tactic;
    int32_t ser_nb; /* field style: saved fields */
    prt_field ser[1];
} tt_core;

typedef struct tt_blob {
    prt_blob_plugin base;
    tt_core c;
} tt_blob;

typedef struct tt_field {
    prt_field_plugin base;
    tt_core c;
} tt_field;

static prt_status tt_types(const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    if (nb_in != 1 || nb_out != 1 || in[0] != PRT_DTYPE_F32) {
        prt_msg_set(err, "TestTactic takes one f32 input and gives one output, got %d inputs", (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = PRT_DTYPE_F32;
    return PRT_OK;
}

static int32_t tt_list(const tt_core *c, prt_device device, int32_t *tactics, int32_t cap)
{
    int32_t i;
    if (device != PRT_DEVICE_CPU) return 0;
    for (i = 0; i < c->nb && i < cap; i++) tactics[i] = c->ids[i];
    return c->nb;
}

static const char *tt_name(int32_t tactic) { return tactic == 1 ? "slow" : tactic == 2 ? "fast" : NULL; }

static prt_status tt_set(tt_core *c, int32_t tactic, prt_msg *err)
{
    int32_t i;
    for (i = 0; i < c->nb && c->ids[i] != tactic; i++) {}
    if (i == c->nb) {
        prt_msg_set(err, "TestTactic: tactic %d is not one it lists", (int)tactic);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    c->tactic = tactic;
    atomic_fetch_add(&tt_set_calls, 1);
    atomic_store(&tt_last_set, tactic);
    return PRT_OK;
}

static prt_status tt_run(const tt_core *c, const prt_tensor_desc *in, const void *const *inputs, void *const *outputs,
                         prt_exec *ex)
{
    const float *x = inputs[0];
    float *y = outputs[0];
    int64_t n = vol(&in[0].dims), i;
    int rep, reps = c->tactic == 1 ? 256 : 1; /* tactic 1: far more work for the same result */
    if (ex->device != PRT_DEVICE_CPU) {
        ex->set_error(ex, "TestTactic runs on the CPU only");
        return PRT_STATUS_UNSUPPORTED;
    }
    for (rep = 0; rep < reps; rep++)
        for (i = 0; i < n; i++) ((volatile float *)y)[i] = x[i] + 1.0f;
    if (c->tactic >= 0 && c->tactic < TT_COUNTED) atomic_fetch_add(&tt_enqueues[c->tactic], 1);
    atomic_fetch_add(&tt_clock, tt_cost(c->tactic));
    return PRT_OK;
}

static void tt_from_fields(tt_core *c, const prt_fields *fc)
{
    const prt_field *f = prt_fields_find(fc, "tactics");
    int64_t i, v;
    memset(c, 0, sizeof *c);
    for (i = 0; f && i < f->count && i < TT_MAX; i++)
        if (prt_field_get_i64(f, i, &v) == 0) c->ids[c->nb++] = (int32_t)v;
}

/* ---- blob style ---- */

static const prt_blob_plugin_ops ttb_ops;

static tt_blob *ttb_new(const tt_core *c)
{
    tt_blob *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->base.ops = &ttb_ops;
    b->c = *c;
    return b;
}

#define TTB(p) ((tt_blob *)(p))
static int32_t ttb_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }
static prt_status ttb_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                            int32_t nb_out, prt_msg *err)
{
    (void)p;
    return tt_types(in, nb_in, out, nb_out, err);
}
static prt_status ttb_dims(prt_blob_plugin *p, int32_t oi, const prt_dims_expr *in, int32_t nb_in,
                           prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)oi; (void)nb_in; (void)eb; (void)err;
    *out = in[0];
    return PRT_OK;
}
static prt_status ttb_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                              const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    (void)out; (void)ws;
    return tt_run(&TTB(p)->c, in, inputs, outputs, ex);
}
static size_t ttb_ser_size(const prt_blob_plugin *p) { return 4 + 4 * (size_t)TTB(p)->c.nb; }
static prt_status ttb_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    int32_t i;
    prt_write_u32(&w, (uint32_t)TTB(p)->c.nb);
    for (i = 0; i < TTB(p)->c.nb; i++) prt_write_i32(&w, TTB(p)->c.ids[i]);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}
static prt_status ttb_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    tt_blob *b = ttb_new(&TTB(p)->c);
    if (!b) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &b->base;
    return PRT_OK;
}
static void ttb_destroy(prt_blob_plugin *p) { free(p); }
static int32_t ttb_tactics(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *tactics,
                           int32_t cap)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return tt_list(&TTB(p)->c, device, tactics, cap);
}
static const char *ttb_tactic_name(const prt_blob_plugin *p, int32_t tactic)
{
    (void)p;
    return tt_name(tactic);
}
static prt_status ttb_set_tactic(prt_blob_plugin *p, int32_t tactic, prt_msg *err)
{
    return tt_set(&TTB(p)->c, tactic, err);
}

static const prt_blob_plugin_ops ttb_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = ttb_nb_outputs, .get_output_data_types = ttb_types, .get_output_dims = ttb_dims,
    .enqueue = ttb_enqueue, .get_serialization_size = ttb_ser_size, .serialize = ttb_serialize,
    .clone = ttb_clone, .destroy = ttb_destroy,
    .get_valid_tactics = ttb_tactics, .get_tactic_name = ttb_tactic_name, .set_tactic = ttb_set_tactic,
};

static prt_status ttb_create(const prt_plugin_creator *cr, const prt_fields *fc, prt_blob_plugin **out, prt_msg *err)
{
    tt_core c;
    tt_blob *b;
    (void)cr;
    tt_from_fields(&c, fc);
    if (!(b = ttb_new(&c))) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &b->base;
    return PRT_OK;
}

static prt_status ttb_deserialize(const prt_plugin_creator *cr, const void *blob, size_t len, prt_blob_plugin **out,
                                  prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    tt_core c;
    tt_blob *b;
    int32_t i;
    (void)cr;
    memset(&c, 0, sizeof c);
    c.nb = (int32_t)prt_read_u32(&r);
    if (r.failed || c.nb < 0 || c.nb > TT_MAX || len != 4 + 4 * (size_t)c.nb) {
        prt_msg_set(err, "TestTactic blob: a count of at most %d and that many ids, got %zu bytes", TT_MAX, len);
        return PRT_STATUS_BAD_FORMAT;
    }
    for (i = 0; i < c.nb; i++) c.ids[i] = prt_read_i32(&r);
    if (!(b = ttb_new(&c))) return PRT_STATUS_OUT_OF_MEMORY;
    *out = &b->base;
    return PRT_OK;
}

/* ---- field style ---- */

static const prt_field_plugin_ops ttf_ops;

static tt_field *ttf_new(const tt_core *c)
{
    tt_field *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->base.ops = &ttf_ops;
    f->c = *c;
    return f;
}

#define TTF(p) ((tt_field *)(p))
static int32_t ttf_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }
static prt_status ttf_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                            int32_t nb_out, prt_msg *err)
{
    (void)p;
    return tt_types(in, nb_in, out, nb_out, err);
}
static prt_status ttf_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                             int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)eb; (void)err;
    out[0] = in[0];
    return PRT_OK;
}
static prt_status ttf_enqueue(prt_field_plugin *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                              const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    (void)out; (void)ws;
    return tt_run(&TTF(p)->c, in, inputs, outputs, ex);
}
static prt_status ttf_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    tt_field *f = ttf_new(&TTF(p)->c);
    if (!f) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &f->base;
    return PRT_OK;
}
static prt_status ttf_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    (void)ctx;
    return ttf_clone(p, out, err);
}
static prt_status ttf_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    tt_field *f = TTF(p);
    (void)err;
    f->c.ser[0].name = "tactics";
    f->c.ser[0].data = f->c.ids;
    f->c.ser[0].type = PRT_FIELD_INT32;
    f->c.ser[0].reserved_ = 0;
    f->c.ser[0].count = f->c.nb;
    out->fields = f->c.ser;
    out->nb = 1;
    out->reserved_ = 0;
    return PRT_OK;
}
static void ttf_destroy(prt_field_plugin *p) { free(p); }
static int32_t ttf_tactics(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *tactics,
                           int32_t cap)
{
    (void)in; (void)nb_in; (void)out; (void)nb_out;
    return tt_list(&TTF(p)->c, device, tactics, cap);
}
static const char *ttf_tactic_name(const prt_field_plugin *p, int32_t tactic)
{
    (void)p;
    return tt_name(tactic);
}
static prt_status ttf_set_tactic(prt_field_plugin *p, int32_t tactic, prt_msg *err)
{
    return tt_set(&TTF(p)->c, tactic, err);
}

static const char *ttf_get_name(const prt_field_plugin *p) { (void)p; return "TestTactic"; }
static const char *ttf_get_version(const prt_field_plugin *p) { (void)p; return "2"; }
static const char *ttf_get_ns(const prt_field_plugin *p) { (void)p; return ""; }
static const prt_plugin_core_ops ttf_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION,
    .get_name = ttf_get_name, .get_version = ttf_get_version, .get_namespace = ttf_get_ns,
};
static const prt_plugin_build_ops ttf_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = ttf_nb_outputs, .get_output_data_types = ttf_types, .get_output_shapes = ttf_shapes,
    .get_valid_tactics_v2 = ttf_tactics, .get_tactic_name = ttf_tactic_name,
};
static const prt_plugin_runtime_ops ttf_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
    .set_tactic = ttf_set_tactic, .enqueue = ttf_enqueue, .attach_to_context = ttf_attach,
    .get_fields_to_serialize = ttf_fields,
};
static const prt_field_plugin_ops ttf_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .core = &ttf_core, .build = &ttf_build, .runtime = &ttf_runtime, .clone = ttf_clone, .destroy = ttf_destroy,
};

static prt_status ttf_create(const prt_plugin_creator *cr, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    tt_core c;
    tt_field *f;
    (void)cr; (void)phase;
    tt_from_fields(&c, fc);
    if (!(f = ttf_new(&c))) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &f->base;
    return PRT_OK;
}

static const int32_t tt_default_ids[2] = {1, 2};
static const prt_field_schema tactic_schema[] = {
    {.name = "tactics", .type = PRT_FIELD_INT32, .required = 0, .min_count = 0, .max_count = TT_MAX,
     .default_data = tt_default_ids, .default_count = 2, .bounds = PRT_BOUND_MIN, .min = 1,
     .doc = "the tactic ids it lists"},
};
static const prt_plugin_creator tactic_creator_v1 = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "TestTactic",
    .version = "1", .plugin_namespace = "", .style = PRT_STYLE_BLOB, .nb_fields = 1, .fields = tactic_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = ttb_create, .deserialize_blob = ttb_deserialize,
    .doc = "test tactics, blob style",
};
static const prt_plugin_creator tactic_creator_v2 = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "TestTactic",
    .version = "2", .plugin_namespace = "", .style = PRT_STYLE_FIELD, .nb_fields = 1, .fields = tactic_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = ttf_create, .doc = "test tactics, field style",
};

prt_registry *fake_registry(int with_v1, int with_v2, double halfneg_max_k)
{
    prt_registry *r = NULL;
    if (prt_registry_create(prt_registry_global(), &r) != PRT_OK) return NULL;
    if ((with_v1 && prt_registry_add(r, &scale_creator_v1, "fakes") != PRT_OK) ||
        (with_v2 && prt_registry_add(r, &scale_creator_v2, "fakes") != PRT_OK) ||
        prt_registry_add(r, &addbias_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, halfneg_max_k == 5 ? &halfneg_creator5 : &halfneg_creator10, "fakes") != PRT_OK ||
        prt_registry_add(r, &compact_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, &copy32_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, &copy16_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, &wsgrow_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, &devcount_creator, "fakes") != PRT_OK ||
        prt_registry_add(r, &tactic_creator_v1, "fakes") != PRT_OK ||
        prt_registry_add(r, &tactic_creator_v2, "fakes") != PRT_OK) {
        prt_registry_destroy(r);
        return NULL;
    }
    return r;
}
