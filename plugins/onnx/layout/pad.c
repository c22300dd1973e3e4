/*
 * onnx/layout/pad.c - Pad (versions 2, 11, 18; modes constant, reflect,
 * edge, wrap) and the generators ConstantOfShape, EyeLike, Trilu. See
 * README.md in this folder.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum pkind { PK_PAD, PK_CONST_OF_SHAPE, PK_EYELIKE, PK_TRILU, PK_CENTER_CROP } pkind;
typedef enum pmode { PM_CONSTANT, PM_REFLECT, PM_EDGE, PM_WRAP } pmode;

typedef struct prow {
    pkind kind;
    const char *pads_field; /* "pads" (2) or "input:1" (11) */
} prow;

typedef struct pstate {
    int64_t pads[2 * PRT_MAX_DIMS];
    int64_t npads;
    int64_t axes[PRT_MAX_DIMS];
    int64_t naxes;
    pmode mode;
    double value;
    int64_t k;
    int32_t k_field;
    int32_t upper;
    int32_t dtype; /* EyeLike: -1 = the input's; ConstantOfShape: the value's */
    uint8_t fill[8]; /* ConstantOfShape: the value's one element */
} pstate;

static const char *const mode_names[] = {"constant", "reflect", "edge", "wrap"};

static prt_status p_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const prow *r = n->def->row;
    pstate *s = PRT__ONNX_STATE(n, pstate);
    prt_status st;
    int m = prt__onnx_str_enum(n, fc, "mode", mode_names, 4, PM_CONSTANT, err);
    if (m < 0) return PRT_STATUS_INVALID_FIELD;
    s->mode = (pmode)m;
    s->value = prt_fields_f64(fc, "value", 0, 0.0);
    if (r->kind == PK_PAD && prt_fields_find(fc, "input:2") && prt_fields_find(fc, "input:2")->count > 0)
        s->value = prt_fields_f64(fc, "input:2", 0, 0.0); /* constant_value given as a constant */
    s->k = prt_fields_i64(fc, "k", 0, 0);
    s->upper = prt_fields_i64(fc, "upper", 0, 1) != 0;
    s->dtype = -1;
    if (r->kind == PK_EYELIKE && prt_fields_find(fc, "dtype")) {
        int64_t t = prt_fields_i64(fc, "dtype", 0, 0);
        if ((s->dtype = prt__onnx_dtype_from_onnx(t)) < 0) {
            prt_msg_set(err, "%s v%s: field \"dtype\" = %lld (%s) is not a type plugrt has; expected one of "
                        PRT__ONNX_DTYPES_TEXT, n->def->name, n->def->version, (long long)t,
                        prt__onnx_dtype_onnx_name(t));
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    if (r->kind == PK_CONST_OF_SHAPE) {
        const prt_field *v = prt_fields_find(fc, "value");
        s->dtype = PRT_DTYPE_F32;
        if (v) {
            const prt_field_tensor *t = v->data;
            if (v->type != PRT_FIELD_TENSOR || v->count != 1 || prt_dims_volume(&t->dims) != 1) {
                prt_msg_set(err, "%s v%s: field \"value\" needs one tensor of one element, got %lld %s value(s)%s",
                            n->def->name, n->def->version, (long long)v->count, prt_field_type_name(v->type),
                            v->type == PRT_FIELD_TENSOR && v->count == 1 ? " whose volume is not 1" : "");
                return PRT_STATUS_INVALID_FIELD;
            }
            s->dtype = t->dtype;
            memcpy(s->fill, t->data, prt_dtype_size(t->dtype));
        }
    }
    if (r->kind == PK_TRILU && prt_fields_find(fc, "input:1")) {
        s->k = prt_fields_i64(fc, "input:1", 0, 0);
        s->k_field = 1;
    }
    if (r->pads_field) {
        if ((st = prt__onnx_field_ints(n, fc, r->pads_field, s->pads, 2 * PRT_MAX_DIMS, &s->npads, err)) != PRT_OK ||
            (st = prt__onnx_field_ints(n, fc, r->kind == PK_CENTER_CROP ? "axes" : "input:3", s->axes, PRT_MAX_DIMS,
                                       &s->naxes, err)) != PRT_OK)
            return st;
        if (s->npads < 0) {
            prt_msg_set(err, "%s v%s: %s must be a constant (field \"%s\")", n->def->name, n->def->version,
                        r->kind == PK_PAD ? "pads" : "the shape", r->pads_field);
            return PRT_STATUS_UNSUPPORTED;
        }
        if (r->kind == PK_PAD && s->npads % 2) {
            prt_msg_set(err, "%s v%s: pads has %lld values; it needs 2 per axis", n->def->name, n->def->version,
                        (long long)s->npads);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    return PRT_OK;
}

static prt_status p_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const prow *r = n->def->row;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    if (r->kind == PK_CONST_OF_SHAPE) {
        if (nb_in > 0) {
            prt_msg_set(err, "the shape must be a constant (field \"input:0\"); a run-time shape is not supported");
            return PRT_STATUS_UNSUPPORTED;
        }
        out[0] = (prt_dtype)s->dtype;
        return PRT_OK;
    }
    if (r->kind == PK_PAD && nb_in > 1 && in[1] != in[0]) {
        prt_msg_set(err, "constant_value (input 1) must have the data's dtype %s, got %s", prt_dtype_name(in[0]),
                    prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    if (r->kind == PK_TRILU && nb_in > 1 && in[1] != PRT_DTYPE_I64) {
        prt_msg_set(err, "k (input 1) must be i64, got %s", prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = s->dtype >= 0 ? (prt_dtype)s->dtype : in[0];
    return PRT_OK;
}

/* The begin / end pad of every axis of a rank-`rank` input. */
static prt_status p_pads(const prt__onnx_node *n, int32_t rank, int64_t *b, int64_t *e, prt_msg *err)
{
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    int64_t na = s->naxes >= 0 ? s->naxes : rank;
    int32_t i, a;
    prt_status st;
    memset(b, 0, sizeof(int64_t) * PRT_MAX_DIMS);
    memset(e, 0, sizeof(int64_t) * PRT_MAX_DIMS);
    if (s->npads != 2 * na) {
        prt_msg_set(err, "pads has %lld values, %lld expected (2 per %s)", (long long)s->npads, (long long)(2 * na),
                    s->naxes >= 0 ? "axis in axes" : "input axis");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 0; i < na; i++) {
        a = i;
        if (s->naxes >= 0 && (st = prt__onnx_axis(n, "axis", s->axes[i], rank, 0, &a, err)) != PRT_OK) return st;
        b[a] = s->pads[i];
        e[a] = s->pads[i + na];
    }
    return PRT_OK;
}

static prt_status p_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const prow *r = n->def->row;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    int64_t b[PRT_MAX_DIMS], e[PRT_MAX_DIMS];
    int32_t i;
    prt_status st;
    (void)nb_in;
    switch (r->kind) {
    case PK_PAD:
        if ((st = p_pads(n, in[0].nb, b, e, err)) != PRT_OK) return st;
        out[0] = in[0];
        for (i = 0; i < in[0].nb; i++) {
            int64_t d = prt__onnx_known(eb, in[0].d[i]);
            if (d >= 0 && d + b[i] + e[i] < 0) {
                prt_msg_set(err, "axis %d: extent %lld with pads %lld, %lld leaves a negative extent", (int)i,
                            (long long)d, (long long)b[i], (long long)e[i]);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            out->d[i] = eb->operation(eb, PRT_EXPR_SUM, in[0].d[i], eb->constant(eb, b[i] + e[i]));
        }
        return PRT_OK;
    case PK_CONST_OF_SHAPE:
        if (s->npads > PRT_MAX_DIMS) {
            prt_msg_set(err, "the shape has %lld extents (at most %d)", (long long)s->npads, PRT_MAX_DIMS);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out->nb = (int32_t)s->npads;
        for (i = 0; i < out->nb; i++) {
            if (s->pads[i] < 0) {
                prt_msg_set(err, "shape[%d] is %lld; extents are >= 0", (int)i, (long long)s->pads[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
            out->d[i] = eb->constant(eb, s->pads[i]);
        }
        return PRT_OK;
    case PK_EYELIKE:
        if (in[0].nb != 2) {
            prt_msg_set(err, "input must be 2-D, got rank %d", (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        return PRT_OK;
    case PK_CENTER_CROP: {
        int64_t na = s->naxes >= 0 ? s->naxes : in[0].nb;
        int32_t a;
        if (s->npads != na) {
            prt_msg_set(err, "shape has %lld values for %lld axes", (long long)s->npads, (long long)na);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        for (i = 0; i < na; i++) {
            a = i;
            if (s->naxes >= 0 && (st = prt__onnx_axis(n, "axis", s->axes[i], in[0].nb, 0, &a, err)) != PRT_OK) return st;
            if (s->pads[i] < 0) {
                prt_msg_set(err, "shape[%d] is %lld; extents are >= 0", (int)i, (long long)s->pads[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
            out->d[a] = eb->constant(eb, s->pads[i]);
        }
        return PRT_OK;
    }
    case PK_TRILU:
        if (in[0].nb < 2) {
            prt_msg_set(err, "input must have rank >= 2, got %d", (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        return PRT_OK;
    }
    return PRT_STATUS_INTERNAL;
}

typedef struct pjob {
    const char *x;
    char *y;
    size_t es;
    int32_t rank;
    const int64_t *id, *od;
    int64_t b[PRT_MAX_DIMS], is[PRT_MAX_DIMS];
    pmode mode;
    const char *fill; /* one element */
} pjob;

/* Input coordinate for output coordinate c on an axis of extent d; -1: fill. */
static int64_t p_coord(pmode m, int64_t c, int64_t d)
{
    if (c >= 0 && c < d) return c;
    switch (m) {
    case PM_EDGE: return c < 0 ? 0 : d - 1;
    case PM_WRAP: return ((c % d) + d) % d;
    case PM_REFLECT: {
        int64_t p;
        if (d == 1) return 0;
        p = 2 * (d - 1);
        c = ((c % p) + p) % p;
        return c < d ? c : p - c;
    }
    default: return -1;
    }
}

static void p_range(void *arg, int64_t begin, int64_t end)
{
    const pjob *j = arg;
    int64_t o;
    for (o = begin; o < end; o++) {
        int64_t rem = o, off = 0;
        int32_t i;
        for (i = j->rank - 1; i >= 0 && off >= 0; i--) {
            int64_t c = p_coord(j->mode, rem % j->od[i] - j->b[i], j->id[i]);
            rem /= j->od[i];
            if (c < 0) off = -1;
            else off += c * j->is[i];
        }
        memcpy(j->y + (size_t)o * j->es, off < 0 ? j->fill : j->x + (size_t)off * j->es, j->es);
    }
}

static prt_status p_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const prow *r = n->def->row;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    int64_t vout = prt_dims_volume(&out[0].dims), i, e[PRT_MAX_DIMS];
    size_t es = prt_dtype_size(out[0].dtype);
    char fill[8] = {0};
    pjob j;
    prt_status st;
    (void)ws;
    if (vout <= 0) return PRT_OK;
    switch (r->kind) {
    case PK_CONST_OF_SHAPE:
        for (i = 0; i < vout; i++) memcpy((char *)y[0] + (size_t)i * es, s->fill, es);
        return PRT_OK;
    case PK_EYELIKE: case PK_TRILU: {
        const prt_dims *d = &out[0].dims;
        int64_t rows = d->d[d->nb - 2], cols = d->d[d->nb - 1], k = s->k, m;
        double one = 1;
        if (r->kind == PK_TRILU && !s->k_field && nb_in > 1) {
            if (prt_dims_volume(&in[1].dims) != 1) {
                prt_msg_set(err, "k (input 1) must hold one value, got %lld", (long long)prt_dims_volume(&in[1].dims));
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            k = *(const int64_t *)x[1];
        }
        if (r->kind == PK_EYELIKE) memset(y[0], 0, (size_t)vout * es);
        for (m = 0; m < vout / (rows * cols); m++) {
            int64_t base = m * rows * cols, rr, cc;
            for (rr = 0; rr < rows; rr++)
                for (cc = 0; cc < cols; cc++) {
                    int64_t o = base + rr * cols + cc;
                    if (r->kind == PK_EYELIKE) {
                        if (cc - rr == k) prt__onnx_scatter_f64(y[0], out[0].dtype, o, &one, 1);
                    } else {
                        int keep = s->upper ? cc - rr >= k : cc - rr <= k;
                        if (keep) memcpy((char *)y[0] + (size_t)o * es, (const char *)x[0] + (size_t)o * es, es);
                        else memset((char *)y[0] + (size_t)o * es, 0, es);
                    }
                }
        }
        return PRT_OK;
    }
    case PK_PAD: case PK_CENTER_CROP: break;
    }
    memset(&j, 0, sizeof j);
    if (r->kind == PK_CENTER_CROP) { /* centered: pad (out - in) / 2 before, or crop (in - out) / 2 */
        for (i = 0; i < in[0].dims.nb; i++) {
            int64_t di = in[0].dims.d[i], dout = out[0].dims.d[i];
            j.b[i] = dout >= di ? (dout - di) / 2 : -((di - dout) / 2);
        }
    } else if ((st = p_pads(n, in[0].dims.nb, j.b, e, err)) != PRT_OK) {
        return st;
    }
    for (i = 0; i < in[0].dims.nb; i++)
        if (s->mode != PM_CONSTANT && in[0].dims.d[i] == 0 && out[0].dims.d[i] > 0) {
            prt_msg_set(err, "mode %s cannot pad axis %d of extent 0", mode_names[s->mode], (int)i);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    if (nb_in > 1 && prt_dims_volume(&in[1].dims) >= 1)
        memcpy(fill, x[1], es);
    else if (prt__onnx_is_float(out[0].dtype))
        prt__onnx_scatter_f64(fill, out[0].dtype, 0, &s->value, 1);
    else {
        int64_t v = (int64_t)s->value;
        prt__onnx_scatter_i64(fill, out[0].dtype, 0, &v, 1);
    }
    j.x = x[0];
    j.y = y[0];
    j.es = es;
    j.rank = in[0].dims.nb;
    j.id = in[0].dims.d;
    j.od = out[0].dims.d;
    j.mode = s->mode;
    j.fill = fill;
    prt__onnx_strides(&in[0].dims, j.is);
    if (vout <= 16384) p_range(&j, 0, vout);
    else ex->parallel_for(ex, vout, 16384, p_range, &j);
    return PRT_OK;
}

static const prow r_pad2 = {PK_PAD, "pads"}, r_pad11 = {PK_PAD, "input:1"};
static const prow r_cos = {PK_CONST_OF_SHAPE, "input:0"}, r_eyelike = {PK_EYELIKE, NULL}, r_trilu = {PK_TRILU, NULL};
static const prow r_center = {PK_CENTER_CROP, "input:1"};

static const prt_field_schema s_pad2[] = {
    {.name = "pads", .type = PRT_FIELD_INT64, .required = 1, .min_count = 0, .max_count = 2 * PRT_MAX_DIMS,
     .doc = "begin pads of every axis, then end pads (negative crops)"},
    PRT__ONNX_STR("mode", "constant", "constant, reflect, edge (wrap from version 19)"),
    PRT__ONNX_F32("value", 0.0f, "the fill of mode constant"),
};
static const prt_field_schema s_pad11[] = {
    PRT__ONNX_STR("mode", "constant", "constant, reflect, edge, wrap (19)"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "pads (interim shape-value form)"),
    PRT__ONNX_OPT("input:2", PRT_FIELD_FLOAT64, "constant_value as a constant (else input 1 of the layer, else 0)"),
    PRT__ONNX_OPT("input:3", PRT_FIELD_INT64, "axes the pads apply to (version 18)"),
};
static const prt_field_schema s_cos[] = {
    PRT__ONNX_OPT("input:0", PRT_FIELD_INT64, "the output shape (interim shape-value form)"),
    {.name = "value", .type = PRT_FIELD_TENSOR, .min_count = 1, .max_count = 1,
     .doc = "one element: the fill and the output's dtype; absent: float32 0"},
};
static const prt_field_schema s_eyelike[] = {
    PRT__ONNX_OPT("dtype", PRT_FIELD_INT64, "ONNX TensorProto.DataType of the output; absent: the input's"),
    PRT__ONNX_I64("k", 0, "the diagonal: 0 main, > 0 above, < 0 below"),
};
static const prt_field_schema s_trilu[] = {
    PRT__ONNX_I64("upper", 1, "1: keep the upper triangle, 0: the lower"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "k as a constant (else input 1, else 0)"),
};

static const prt_field_schema s_center[] = {
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "the output extents (interim shape-value form)"),
    PRT__ONNX_OPT("axes", PRT_FIELD_INT64, "the axes shape applies to; absent: all"),
};

#define P(nm, ver, rw, sch, nf, minin, maxin) PRT__ONNX_ROW(nm, ver, rw, sch, nf, minin, maxin, pstate, p)

static const prt__onnx_def pad_defs[] = {
    P("Pad", "2", r_pad2, s_pad2, 3, 1, 1),
    P("Pad", "11", r_pad11, s_pad11, 3, 1, 2),
    P("Pad", "18", r_pad11, s_pad11, 4, 1, 2),
    P("ConstantOfShape", "9", r_cos, s_cos, 2, 0, 1),
    P("EyeLike", "9", r_eyelike, s_eyelike, 2, 1, 1),
    P("Trilu", "14", r_trilu, s_trilu, 2, 1, 2),
    P("CenterCropPad", "18", r_center, s_center, 2, 1, 1),
};
PRT__ONNX_REGISTER_TABLE(pad_defs)
