/*
 * onnx/layout/constant.c - tensors made from fields alone: Constant (12)
 * from its value_float, value_floats, value_int or value_ints attribute, and
 * the windows HannWindow, HammingWindow, BlackmanWindow (17) of a constant
 * size. The TENSOR-typed `value` (and sparse_value, the string forms) need
 * field types the core does not have yet; a Constant using them is refused.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct kstate {
    const prt_field *f; /* the one value field, inside the node's own field copy */
    prt_dtype t;
    int32_t scalar;
} kstate;

static prt_status k_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const names[] = {"value_float", "value_floats", "value_int", "value_ints"};
    kstate *s = PRT__ONNX_STATE(n, kstate);
    int i, found = 0;
    for (i = 0; i < 4; i++) {
        const prt_field *f = prt_fields_find(fc, names[i]);
        if (!f) continue;
        found++;
        s->f = f;
        s->t = i < 2 ? PRT_DTYPE_F32 : PRT_DTYPE_I64;
        s->scalar = i % 2 == 0;
    }
    if (found != 1) {
        prt_msg_set(err, "%s v%s: give exactly one of value_float, value_floats, value_int, value_ints (got %d); the "
                    "TENSOR attribute \"value\" is not supported yet", n->def->name, n->def->version, found);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status k_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    (void)in; (void)nb_in; (void)err;
    out[0] = PRT__ONNX_STATE(n, kstate)->t;
    return PRT_OK;
}

static prt_status k_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const kstate *s = PRT__ONNX_STATE(n, kstate);
    (void)in; (void)nb_in; (void)err;
    out->nb = s->scalar ? 0 : 1;
    if (!s->scalar) out->d[0] = eb->constant(eb, s->f->count);
    return PRT_OK;
}

static prt_status k_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const kstate *s = PRT__ONNX_STATE(n, kstate);
    (void)in; (void)nb_in; (void)out; (void)x; (void)ws; (void)ex; (void)err;
    if (s->f->count > 0) memcpy(y[0], s->f->data, (size_t)s->f->count * prt_dtype_size(s->t));
    return PRT_OK;
}

static const prt_field_schema s_constant[] = {
    {.name = "value_float", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1, .doc = "a float32 scalar"},
    PRT__ONNX_OPT("value_floats", PRT_FIELD_FLOAT32, "a 1-D float32 tensor"),
    {.name = "value_int", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .doc = "an int64 scalar"},
    PRT__ONNX_OPT("value_ints", PRT_FIELD_INT64, "a 1-D int64 tensor"),
};
static const int constant_row_ = 0;

/* ---- windows ------------------------------------------------------------------------ */

typedef enum wkind { WK_HANN, WK_HAMMING, WK_BLACKMAN } wkind;

typedef struct wstate {
    int64_t size;
    prt_dtype t;
    int32_t periodic;
} wstate;

static prt_status w_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    wstate *s = PRT__ONNX_STATE(n, wstate);
    int64_t ot = prt_fields_i64(fc, "output_datatype", 0, 1);
    int t = prt__onnx_dtype_from_onnx(ot);
    s->periodic = prt_fields_i64(fc, "periodic", 0, 1) != 0;
    s->size = prt_fields_i64(fc, "input:0", 0, -1);
    if (!prt_fields_find(fc, "input:0") || s->size < 0) {
        prt_msg_set(err, "%s v%s: size must be a constant >= 0 (field \"input:0\")", n->def->name, n->def->version);
        return PRT_STATUS_UNSUPPORTED;
    }
    if (t < 0 || t == PRT_DTYPE_BOOL) {
        prt_msg_set(err, "%s v%s: output_datatype %lld (%s) is not a numeric type plugrt has", n->def->name,
                    n->def->version, (long long)ot, prt__onnx_dtype_onnx_name(ot));
        return PRT_STATUS_INVALID_FIELD;
    }
    s->t = (prt_dtype)t;
    return PRT_OK;
}

static prt_status w_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    (void)in; (void)err;
    if (nb_in > 0) {
        prt_msg_set(err, "size must be a constant (field \"input:0\")");
        return PRT_STATUS_UNSUPPORTED;
    }
    out[0] = PRT__ONNX_STATE(n, wstate)->t;
    return PRT_OK;
}

static prt_status w_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    (void)in; (void)nb_in; (void)err;
    out->nb = 1;
    out->d[0] = eb->constant(eb, PRT__ONNX_STATE(n, wstate)->size);
    return PRT_OK;
}

static prt_status w_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const wstate *s = PRT__ONNX_STATE(n, wstate);
    const wkind kind = *(const wkind *)n->def->row;
    const double pi = 3.14159265358979323846, N = (double)(s->periodic ? s->size : s->size - 1);
    int64_t i;
    (void)in; (void)nb_in; (void)x; (void)ws; (void)ex; (void)err;
    for (i = 0; i < s->size; i++) {
        double a = N > 0 ? 2 * pi * (double)i / N : 0, v;
        switch (kind) {
        case WK_HANN: v = 0.5 - 0.5 * cos(a); break;
        case WK_HAMMING: v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * cos(a); break;
        default: v = 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a); break;
        }
        prt__onnx_scatter_f64(y[0], out[0].dtype, i, &v, 1);
    }
    return PRT_OK;
}

static const wkind r_hann = WK_HANN, r_hamming = WK_HAMMING, r_blackman = WK_BLACKMAN;
static const prt_field_schema s_window[] = {
    PRT__ONNX_OPT("input:0", PRT_FIELD_INT64, "size (interim shape-value form)"),
    PRT__ONNX_I64("output_datatype", 1, "TensorProto.DataType of the output"),
    PRT__ONNX_I64("periodic", 1, "1: periodic (N = size), 0: symmetric (N = size - 1)"),
};

static const prt__onnx_def constant_defs[] = {
    PRT__ONNX_DEF("Constant", "12", constant_row_, s_constant, 4, 0, 0, 1, PRT__ONNX_ALL, kstate, k),
    PRT__ONNX_DEF("HannWindow", "17", r_hann, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
    PRT__ONNX_DEF("HammingWindow", "17", r_hamming, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
    PRT__ONNX_DEF("BlackmanWindow", "17", r_blackman, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
};
PRT__ONNX_REGISTER_TABLE(constant_defs)
