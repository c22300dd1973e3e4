/*
 * onnx/layout/constant.c - tensors made from fields alone: Constant (12)
 * from its value_float, value_floats, value_int or value_ints attribute, and
 * the windows HannWindow, HammingWindow, BlackmanWindow (17) of a constant
 * size, and Range (11) from constant start, limit and delta. (A Constant
 * node's TENSOR `value` is taken by the importer itself; this creator
 * serves the list forms.)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
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

/* ---- Range ------------------------------------------------------------------------- */

/* start, limit and delta arrive as TENSOR fields "input:0..2" (scalars of
 * one numeric dtype); the output has max(ceil((limit - start) / delta), 0)
 * elements start + i * delta. */
typedef struct rstate {
    prt_dtype t;
    int64_t n;
    double f0, fd;   /* float types */
    int64_t i0, id;  /* integer types */
} rstate;

static const char *const range_names[] = {"start", "limit", "delta"};

static prt_status r_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    rstate *s = PRT__ONNX_STATE(n, rstate);
    double fv[3];
    int64_t iv[3], cnt;
    int k;
    for (k = 0; k < 3; k++) {
        char nm[16];
        const prt_field *f;
        const prt_field_tensor *t;
        snprintf(nm, sizeof nm, "input:%d", k);
        f = prt_fields_find(fc, nm);
        if (!f || f->type != PRT_FIELD_TENSOR || f->count != 1) {
            prt_msg_set(err, "%s v%s: %s must be a constant (TENSOR field \"%s\")", n->def->name, n->def->version,
                        range_names[k], nm);
            return PRT_STATUS_UNSUPPORTED;
        }
        t = f->data;
        if (prt_dims_volume(&t->dims) != 1 || t->dtype == PRT_DTYPE_BOOL || (k && t->dtype != s->t)) {
            prt_msg_set(err, "%s v%s: %s must be a numeric scalar%s%s, got %s with %lld elements", n->def->name,
                        n->def->version, range_names[k], k ? " of start's dtype " : "",
                        k ? prt_dtype_name(s->t) : "", prt_dtype_name(t->dtype),
                        (long long)prt_dims_volume(&t->dims));
            return PRT_STATUS_INVALID_FIELD;
        }
        s->t = t->dtype;
        prt__onnx_gather_f64(&fv[k], t->data, t->dtype, 0, 1, 1);
        prt__onnx_gather_i64(&iv[k], t->data, t->dtype, 0, 1, 1);
    }
    if (prt__onnx_is_float(s->t)) {
        double c = fv[2] != 0 ? ceil((fv[1] - fv[0]) / fv[2]) : NAN;
        if (!(c == c) || c > (double)INT32_MAX) {
            prt_msg_set(err, "%s v%s: start %g, limit %g, delta %g give %g elements (0 to %d allowed)", n->def->name,
                        n->def->version, fv[0], fv[1], fv[2], c, INT32_MAX);
            return PRT_STATUS_INVALID_FIELD;
        }
        cnt = c > 0 ? (int64_t)c : 0;
    } else {
        int64_t diff;
        if (iv[2] == 0 || __builtin_sub_overflow(iv[1], iv[0], &diff)) {
            prt_msg_set(err, "%s v%s: start %lld, limit %lld, delta %lld: %s", n->def->name, n->def->version,
                        (long long)iv[0], (long long)iv[1], (long long)iv[2],
                        iv[2] == 0 ? "delta must not be 0" : "limit - start overflows");
            return PRT_STATUS_INVALID_FIELD;
        }
        cnt = diff / iv[2] + (diff % iv[2] != 0 && (diff > 0) == (iv[2] > 0));
        if (cnt < 0) cnt = 0;
        if (cnt > INT32_MAX) {
            prt_msg_set(err, "%s v%s: %lld elements (at most %d)", n->def->name, n->def->version, (long long)cnt,
                        INT32_MAX);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    s->n = cnt;
    s->f0 = fv[0];
    s->fd = fv[2];
    s->i0 = iv[0];
    s->id = iv[2];
    return PRT_OK;
}

static prt_status r_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    (void)in; (void)nb_in; (void)err;
    out[0] = PRT__ONNX_STATE(n, rstate)->t;
    return PRT_OK;
}

static prt_status r_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    (void)in; (void)nb_in; (void)err;
    out->nb = 1;
    out->d[0] = eb->constant(eb, PRT__ONNX_STATE(n, rstate)->n);
    return PRT_OK;
}

static prt_status r_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const rstate *s = PRT__ONNX_STATE(n, rstate);
    int64_t i;
    (void)in; (void)nb_in; (void)x; (void)ws; (void)ex; (void)err;
    for (i = 0; i < s->n; i++) {
        if (prt__onnx_is_float(s->t)) {
            double v = s->f0 + (double)i * s->fd;
            prt__onnx_scatter_f64(y[0], out[0].dtype, i, &v, 1);
        } else {
            int64_t v = (int64_t)((uint64_t)s->i0 + (uint64_t)i * (uint64_t)s->id);
            prt__onnx_scatter_i64(y[0], out[0].dtype, i, &v, 1);
        }
    }
    return PRT_OK;
}

#define RANGE_FIELD(nm, text)                                                                      \
    {.name = (nm), .type = PRT_FIELD_TENSOR, .required = 1, .min_count = 1, .max_count = 1, .doc = (text)}
static const prt_field_schema s_range[] = {
    RANGE_FIELD("input:0", "start: a numeric scalar"),
    RANGE_FIELD("input:1", "limit (exclusive): a scalar of start's dtype"),
    RANGE_FIELD("input:2", "delta: a non-zero scalar of start's dtype"),
};
static const int range_row_ = 0;

static const prt__onnx_def constant_defs[] = {
    PRT__ONNX_DEF("Constant", "12", constant_row_, s_constant, 4, 0, 0, 1, PRT__ONNX_ALL, kstate, k),
    PRT__ONNX_DEF("HannWindow", "17", r_hann, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
    PRT__ONNX_DEF("HammingWindow", "17", r_hamming, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
    PRT__ONNX_DEF("BlackmanWindow", "17", r_blackman, s_window, 3, 0, 1, 1, PRT__ONNX_ALL, wstate, w),
    PRT__ONNX_DEF("Range", "11", range_row_, s_range, 3, 0, 0, 1, PRT__ONNX_NUMERIC, rstate, r),
};
PRT__ONNX_REGISTER_TABLE(constant_defs)
