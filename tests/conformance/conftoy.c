/*
 * conftoy.c - test-only plugins for the conformance runner, as a plugin
 * library (only plugrt/plugin.h; nothing of plugrt is linked).
 *
 *   ConfAffine (blob style), inputs x [N, C] float32 and optional b [C]:
 *     y = alpha * x + beta (+ b[c]); fields alpha (float32, required,
 *     0 < alpha <= 100) and beta (float32, optional, default 0). The
 *     output shape is x's; b must have C values (refused when the shape
 *     is built and at configure).
 *   The versions are the same plugin, right or deliberately wrong:
 *     "1"  right
 *     "2"  ignores beta
 *     "3"  output element 5 one ulp above the right value
 *     "4"  output element 5 two ulps above (one ulp more than the tests allow)
 *     "5"  no bounds on alpha (accepts values outside its range)
 *     "6"  does not check b's length against x (computes with the shorter)
 *     "7"  writes one element past the end of y
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"

enum { TOY_RIGHT = 1, TOY_NO_BETA = 2, TOY_ULP1 = 3, TOY_ULP2 = 4, TOY_NO_BOUNDS = 5, TOY_NO_CONSTRAINT = 6,
       TOY_OVERRUN = 7 };

typedef struct toy {
    prt_blob_plugin base;
    int mode;
    float alpha, beta;
} toy;

static const prt_blob_plugin_ops toy_ops;

static prt_blob_plugin *toy_new(int mode, float alpha, float beta)
{
    toy *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->base.ops = &toy_ops;
    t->mode = mode;
    t->alpha = alpha;
    t->beta = beta;
    return &t->base;
}

static int32_t toy_nb_outputs(const prt_blob_plugin *p)
{
    (void)p;
    return 1;
}

static prt_status toy_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                            int32_t nb_out, prt_msg *err)
{
    (void)p;
    if (nb_in < 1 || nb_in > 2 || nb_out != 1) {
        prt_msg_set(err, "ConfAffine takes x and an optional b and gives y; got %d inputs, %d outputs", (int)nb_in,
                    (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status toy_dims(prt_blob_plugin *p, int32_t idx, const prt_dims_expr *in, int32_t nb_in,
                           prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    const toy *t = (const toy *)p;
    int64_t c, bc;
    (void)idx;
    if (in[0].nb != 2 || (nb_in == 2 && in[1].nb != 1)) {
        prt_msg_set(err, "ConfAffine: x must be 2-D and b 1-D");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (nb_in == 2 && t->mode != TOY_NO_CONSTRAINT && eb->get_constant(eb, in[0].d[1], &c) &&
        eb->get_constant(eb, in[1].d[0], &bc) && c != bc) {
        prt_msg_set(err, "ConfAffine: b has %lld values; expected one per column of x (%lld)", (long long)bc,
                    (long long)c);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    *out = in[0];
    return PRT_OK;
}

static int toy_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return io[pos].format == PRT_FORMAT_LINEAR && io[pos].dtype == PRT_DTYPE_F32;
}

static prt_status toy_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    const toy *t = (const toy *)p;
    (void)out; (void)nb_out;
    if (nb_in == 2 && t->mode != TOY_NO_CONSTRAINT && in[1].desc.dims.d[0] != in[0].desc.dims.d[1]) {
        prt_msg_set(err, "ConfAffine: b has %lld values; expected one per column of x (%lld)",
                    (long long)in[1].desc.dims.d[0], (long long)in[0].desc.dims.d[1]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status toy_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                              const void *const *inputs, void *const *outputs, void *workspace, prt_exec *ex)
{
    const toy *t = (const toy *)p;
    const float *x = inputs[0];
    const float *b = in_desc[1].dims.nb == 1 && inputs[1] ? inputs[1] : NULL;
    float *y = outputs[0];
    int64_t n = in_desc[0].dims.d[0], c = in_desc[0].dims.d[1], i, j;
    int64_t nb = b ? in_desc[1].dims.d[0] : 0;
    (void)out_desc; (void)workspace;
    if (ex->device != PRT_DEVICE_CPU) {
        ex->set_error(ex, "ConfAffine runs on the CPU only");
        return PRT_STATUS_UNSUPPORTED;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < c; j++) {
            float v = t->alpha * x[i * c + j] + (t->mode == TOY_NO_BETA ? 0.0f : t->beta);
            if (b && j < nb) v += b[j];
            if (i * c + j == 5 && (t->mode == TOY_ULP1 || t->mode == TOY_ULP2)) {
                v = nextafterf(v, INFINITY);
                if (t->mode == TOY_ULP2) v = nextafterf(v, INFINITY);
            }
            y[i * c + j] = v;
        }
    if (t->mode == TOY_OVERRUN) y[n * c] = 1.0f;
    return PRT_OK;
}

static size_t toy_ser_size(const prt_blob_plugin *p)
{
    (void)p;
    return 8;
}

static prt_status toy_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    const toy *t = (const toy *)p;
    if (cap < 8) return PRT_STATUS_INVALID_ARGUMENT;
    memcpy(buf, &t->alpha, 4);
    memcpy((char *)buf + 4, &t->beta, 4);
    return PRT_OK;
}

static prt_status toy_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    const toy *t = (const toy *)p;
    prt_blob_plugin *c = toy_new(t->mode, t->alpha, t->beta);
    if (!c) {
        prt_msg_set(err, "ConfAffine: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = c;
    return PRT_OK;
}

static void toy_destroy(prt_blob_plugin *p)
{
    free(p);
}

static const prt_blob_plugin_ops toy_ops = {
    sizeof(prt_blob_plugin_ops), PRT_ABI_VERSION, toy_nb_outputs, toy_types, toy_dims, toy_supports,
    toy_configure, NULL, NULL, NULL, toy_enqueue, toy_ser_size, toy_serialize, toy_clone, toy_destroy,
    NULL, NULL,
};

static int mode_of(const prt_plugin_creator *c)
{
    return *(const int *)c->user;
}

static prt_status toy_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out, prt_msg *err)
{
    double alpha = prt_fields_f64(fc, "alpha", 0, NAN), beta = prt_fields_f64(fc, "beta", 0, 0.0);
    prt_blob_plugin *p;
    if (!isfinite(alpha) || !isfinite(beta)) {
        prt_msg_set(err, "ConfAffine: alpha and beta must be finite, got %g and %g", alpha, beta);
        return PRT_STATUS_INVALID_FIELD;
    }
    p = toy_new(mode_of(c), (float)alpha, (float)beta);
    if (!p) {
        prt_msg_set(err, "ConfAffine: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

static prt_status toy_deserialize(const prt_plugin_creator *c, const void *blob, size_t len, prt_blob_plugin **out,
                                  prt_msg *err)
{
    float a, b;
    prt_blob_plugin *p;
    if (len != 8) {
        prt_msg_set(err, "ConfAffine: blob must be 8 bytes, got %zu", len);
        return PRT_STATUS_BAD_FORMAT;
    }
    memcpy(&a, blob, 4);
    memcpy(&b, (const char *)blob + 4, 4);
    p = toy_new(mode_of(c), a, b);
    if (!p) {
        prt_msg_set(err, "ConfAffine: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

/* The float64 reference, registered with the creators (plugin ABI 2):
 * y = alpha * x + beta (+ b[c]). */
static prt_status toy_reference(const prt_plugin_creator *c, const prt_fields *fc, prt_reference_io *io,
                                prt_msg *err)
{
    double alpha = prt_fields_f64(fc, "alpha", 0, 1.0), beta = prt_fields_f64(fc, "beta", 0, 0.0);
    int64_t n, ch, i;
    (void)c;
    if (io->nb_inputs < 1 || io->input_dims[0].nb != 2 || io->nb_outputs != 1) {
        prt_msg_set(err, "ConfAffine reference: needs x [N, C] and one output");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    n = prt_dims_volume(&io->input_dims[0]);
    ch = io->input_dims[0].d[1];
    io->outputs[0] = io->alloc(io, sizeof(double) * (size_t)(n ? n : 1));
    if (!io->outputs[0]) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < n; i++)
        io->outputs[0][i] = alpha * io->inputs[0][i] + beta +
                            (io->nb_inputs > 1 && io->inputs[1] && ch > 0 ? io->inputs[1][i % ch] : 0.0);
    io->output_dims[0] = io->input_dims[0];
    return PRT_OK;
}

static const float toy_beta_default = 0.0f;

static const prt_field_schema toy_fields[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, 1, 1, NULL, 0, PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL | PRT_BOUND_MAX, 0, 0.0,
     100.0, "scale, 0 < alpha <= 100"},
    {"beta", PRT_FIELD_FLOAT32, 0, 1, 1, &toy_beta_default, 1, PRT_BOUND_NONE, 0, 0.0, 0.0, "shift"},
};
static const prt_field_schema toy_fields_unbounded[] = {
    {"alpha", PRT_FIELD_FLOAT32, 1, 1, 1, NULL, 0, PRT_BOUND_NONE, 0, 0.0, 0.0, "scale (bounds missing)"},
    {"beta", PRT_FIELD_FLOAT32, 0, 1, 1, &toy_beta_default, 1, PRT_BOUND_NONE, 0, 0.0, 0.0, "shift"},
};

static const int toy_modes[7] = {TOY_RIGHT,     TOY_NO_BETA,       TOY_ULP1,   TOY_ULP2,
                                 TOY_NO_BOUNDS, TOY_NO_CONSTRAINT, TOY_OVERRUN};

#define TOY_CREATOR(var, ver, idx, schema)                                                               \
    static const prt_plugin_creator var = {                                                              \
        sizeof(prt_plugin_creator), PRT_ABI_VERSION, "ConfAffine", ver, "", PRT_STYLE_BLOB, 2, schema,   \
        sizeof(prt_field_schema), 0, toy_create, toy_deserialize, NULL, "conformance test plugin",       \
        (void *)&toy_modes[idx], toy_reference, "float64: alpha * x + beta (+ b[c]), from conftoy"}

TOY_CREATOR(toy_v1, "1", 0, toy_fields);
TOY_CREATOR(toy_v2, "2", 1, toy_fields);
TOY_CREATOR(toy_v3, "3", 2, toy_fields);
TOY_CREATOR(toy_v4, "4", 3, toy_fields);
TOY_CREATOR(toy_v5, "5", 4, toy_fields_unbounded);
TOY_CREATOR(toy_v6, "6", 5, toy_fields);
TOY_CREATOR(toy_v7, "7", 6, toy_fields);

static const prt_plugin_creator *const toy_creators[] = {&toy_v1, &toy_v2, &toy_v3, &toy_v4,
                                                          &toy_v5, &toy_v6, &toy_v7};
PRT_PLUGIN_LIBRARY("conftoy", toy_creators, 7)
