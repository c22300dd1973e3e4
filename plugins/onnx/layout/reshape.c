/*
 * onnx/layout/reshape.c - ops that keep the data and change the shape
 * (Reshape, Flatten, Squeeze, Unsqueeze), ops that describe a shape (Shape,
 * Size), and Expand (a broadcast copy). See README.md in this folder.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum lkind { LK_RESHAPE, LK_FLATTEN, LK_SQUEEZE, LK_UNSQUEEZE, LK_SHAPE, LK_SIZE, LK_EXPAND } lkind;

typedef struct lrow {
    lkind kind;
    const char *values; /* field holding the values: "shape", "axes", "input:1" (NULL: none) */
} lrow;

typedef struct lstate {
    int64_t v[PRT_MAX_DIMS + 1];
    int64_t nv;        /* -1: absent */
    int64_t axis;      /* Flatten */
    int64_t start, end;/* Shape 15 */
    int32_t allowzero; /* Reshape 14 */
} lstate;

static prt_status l_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const lrow *r = n->def->row;
    lstate *s = PRT__ONNX_STATE(n, lstate);
    prt_status st;
    s->nv = -1;
    s->axis = prt_fields_i64(fc, "axis", 0, 1);
    s->start = prt_fields_i64(fc, "start", 0, 0);
    s->end = prt_fields_i64(fc, "end", 0, INT64_MAX);
    s->allowzero = prt_fields_i64(fc, "allowzero", 0, 0) != 0;
    if (r->values && (st = prt__onnx_field_ints(n, fc, r->values, s->v, PRT_MAX_DIMS, &s->nv, err)) != PRT_OK)
        return st;
    if (r->kind == LK_UNSQUEEZE && s->nv < 0) {
        prt_msg_set(err, "%s v%s: the axes are required (field \"%s\")", n->def->name, n->def->version, r->values);
        return PRT_STATUS_INVALID_FIELD;
    }
    if ((r->kind == LK_RESHAPE || r->kind == LK_EXPAND) && s->nv < 0) {
        prt_msg_set(err, "%s v%s: the shape must be a constant (field \"%s\"); a run-time shape input is not "
                    "supported", n->def->name, n->def->version, r->values);
        return PRT_STATUS_UNSUPPORTED;
    }
    return PRT_OK;
}

static prt_status l_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const lrow *r = n->def->row;
    if (nb_in > 1) {
        prt_msg_set(err, "input 1 must be a constant (field \"%s\"); a run-time input is not supported",
                    r->values ? r->values : "input:1");
        return PRT_STATUS_UNSUPPORTED;
    }
    out[0] = r->kind == LK_SHAPE || r->kind == LK_SIZE ? PRT_DTYPE_I64 : in[0];
    return PRT_OK;
}

static const prt_expr *prod(prt_expr_builder *eb, const prt_dims_expr *d, int32_t from, int32_t to)
{
    const prt_expr *p = eb->constant(eb, 1);
    int32_t i;
    for (i = from; i < to; i++) p = eb->operation(eb, PRT_EXPR_PROD, p, d->d[i]);
    return p;
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static prt_status l_reshape(const prt__onnx_node *n, const prt_dims_expr *in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const lstate *s = PRT__ONNX_STATE(n, lstate);
    const prt_expr *known = eb->constant(eb, 1);
    int32_t i, infer = -1;
    out->nb = (int32_t)s->nv;
    for (i = 0; i < s->nv; i++) {
        if (s->v[i] == -1) {
            if (infer >= 0) {
                prt_msg_set(err, "shape has -1 at %d and %d; at most one extent is inferred", (int)infer, (int)i);
                return PRT_STATUS_INVALID_FIELD;
            }
            infer = i;
            continue;
        }
        if (s->v[i] < -1) {
            prt_msg_set(err, "shape[%d] is %lld; extents are >= -1", (int)i, (long long)s->v[i]);
            return PRT_STATUS_INVALID_FIELD;
        }
        if (s->v[i] == 0 && !s->allowzero) {
            if (i >= in->nb) {
                prt_msg_set(err, "shape[%d] is 0 (copy the input's extent) but the input has rank %d", (int)i,
                            (int)in->nb);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            out->d[i] = in->d[i];
        } else {
            out->d[i] = eb->constant(eb, s->v[i]);
        }
        known = eb->operation(eb, PRT_EXPR_PROD, known, out->d[i]);
    }
    if (infer >= 0) {
        if (prt__onnx_known(eb, known) == 0) {
            prt_msg_set(err, "shape infers an extent next to a 0 extent");
            return PRT_STATUS_INVALID_FIELD;
        }
        out->d[infer] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, prod(eb, in, 0, in->nb), known);
    } else {
        int64_t a = prt__onnx_known(eb, prod(eb, in, 0, in->nb)), b = prt__onnx_known(eb, known);
        if (a >= 0 && b >= 0 && a != b) {
            prt_msg_set(err, "the input has %lld elements, the shape asks for %lld", (long long)a, (long long)b);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    return PRT_OK;
}

static prt_status l_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const lrow *r = n->def->row;
    const lstate *s = PRT__ONNX_STATE(n, lstate);
    int32_t i, a, w = 0, mask[PRT_MAX_DIMS] = {0};
    int64_t rank = in[0].nb;
    prt_status st;
    (void)nb_in;
    switch (r->kind) {
    case LK_RESHAPE: return l_reshape(n, &in[0], out, eb, err);
    case LK_FLATTEN:
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 1, &a, err)) != PRT_OK) return st;
        out->nb = 2;
        out->d[0] = prod(eb, &in[0], 0, a);
        out->d[1] = prod(eb, &in[0], a, in[0].nb);
        return PRT_OK;
    case LK_SQUEEZE:
        for (i = 0; i < s->nv; i++) {
            if ((st = prt__onnx_axis(n, "axis", s->v[i], in[0].nb, 0, &a, err)) != PRT_OK) return st;
            if (prt__onnx_known(eb, in[0].d[a]) > 1 || prt__onnx_known(eb, in[0].d[a]) == 0) {
                prt_msg_set(err, "axis %d has extent %lld; only extents of 1 can be squeezed", (int)a,
                            (long long)prt__onnx_known(eb, in[0].d[a]));
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            mask[a] = 1;
        }
        for (i = 0; i < in[0].nb; i++) {
            int64_t e = prt__onnx_known(eb, in[0].d[i]);
            if (s->nv <= 0 && e < 0) {
                prt_msg_set(err, "no axes given and extent %d is not known when building; give the axes", (int)i);
                return PRT_STATUS_UNSUPPORTED;
            }
            if (s->nv <= 0 ? e != 1 : !mask[i]) out->d[w++] = in[0].d[i];
        }
        out->nb = w;
        return PRT_OK;
    case LK_UNSQUEEZE:
        if (rank + s->nv > PRT_MAX_DIMS) {
            prt_msg_set(err, "rank %d plus %lld axes exceeds %d", (int)rank, (long long)s->nv, PRT_MAX_DIMS);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < s->nv; i++) {
            if ((st = prt__onnx_axis(n, "axis", s->v[i], (int32_t)(rank + s->nv), 0, &a, err)) != PRT_OK)
                return st;
            if (mask[a]) {
                prt_msg_set(err, "axes name axis %d twice", (int)a);
                return PRT_STATUS_INVALID_FIELD;
            }
            mask[a] = 1;
        }
        out->nb = (int32_t)(rank + s->nv);
        for (i = 0; i < out->nb; i++) out->d[i] = mask[i] ? eb->constant(eb, 1) : in[0].d[w++];
        return PRT_OK;
    case LK_SHAPE: {
        int64_t b = s->start < 0 ? s->start + rank : s->start, e = s->end < 0 ? s->end + rank : s->end;
        b = clampi(b, 0, rank);
        e = clampi(e, 0, rank);
        out->nb = 1;
        out->d[0] = eb->constant(eb, e > b ? e - b : 0);
        return PRT_OK;
    }
    case LK_SIZE: out->nb = 0; return PRT_OK;
    case LK_EXPAND: {
        prt_dims_expr both[2];
        both[0] = in[0];
        memset(&both[1], 0, sizeof both[1]);
        both[1].nb = (int32_t)s->nv;
        for (i = 0; i < s->nv; i++) {
            if (s->v[i] < 0) {
                prt_msg_set(err, "shape[%d] is %lld; extents are >= 0", (int)i, (long long)s->v[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
            both[1].d[i] = eb->constant(eb, s->v[i]);
        }
        return prt__onnx_shapes_bcast(n, both, 2, out, eb, err);
    }
    }
    return PRT_STATUS_INTERNAL;
}

static prt_status l_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const lrow *r = n->def->row;
    const lstate *s = PRT__ONNX_STATE(n, lstate);
    int64_t vin = prt_dims_volume(&in[0].dims), vout = prt_dims_volume(&out[0].dims), i;
    size_t es = prt_dtype_size(in[0].dtype);
    (void)nb_in; (void)ws;
    switch (r->kind) {
    case LK_SHAPE: {
        int64_t rank = in[0].dims.nb, b = s->start < 0 ? s->start + rank : s->start;
        b = clampi(b, 0, rank);
        for (i = 0; i < vout; i++) ((int64_t *)y[0])[i] = in[0].dims.d[b + i];
        return PRT_OK;
    }
    case LK_SIZE: *(int64_t *)y[0] = vin; return PRT_OK;
    case LK_EXPAND: {
        prt__bcast b;
        const prt_dims *d = &in[0].dims;
        prt_status st = prt__bcast_plan(&b, &out[0].dims, &d, 1, err);
        if (st != PRT_OK) return st;
        prt__onnx_strided_copy(ex, y[0], x[0], es, b.rank, b.dims, b.strides[0], 0);
        return PRT_OK;
    }
    default:
        if (vin != vout) {
            char a[128], b[128];
            prt_msg_set(err, "input %s has %lld elements but the output %s has %lld",
                        prt_dims_str(&in[0].dims, a, sizeof a), (long long)vin, prt_dims_str(&out[0].dims, b, sizeof b),
                        (long long)vout);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (vin > 0 && x[0] != y[0]) memcpy(y[0], x[0], (size_t)vin * es);
        return PRT_OK;
    }
}

static const lrow r_reshape = {LK_RESHAPE, "input:1"};
static const lrow r_flatten = {LK_FLATTEN, NULL};
static const lrow r_squeeze1 = {LK_SQUEEZE, "axes"}, r_squeeze13 = {LK_SQUEEZE, "input:1"};
static const lrow r_unsqueeze1 = {LK_UNSQUEEZE, "axes"}, r_unsqueeze13 = {LK_UNSQUEEZE, "input:1"};
static const lrow r_shape = {LK_SHAPE, NULL}, r_size = {LK_SIZE, NULL};
static const lrow r_expand = {LK_EXPAND, "input:1"};

static const prt_field_schema s_reshape[] = {
    PRT__ONNX_REQ_LIST("input:1", PRT_FIELD_INT64, "the shape (interim shape-value form); 0 copies, -1 infers"),
    PRT__ONNX_I64("allowzero", 0, "1: a 0 in the shape is an extent of 0 (version 14)"),
};
static const prt_field_schema s_flatten[] = {PRT__ONNX_I64("axis", 1, "dims before it form the first extent")};
static const prt_field_schema s_axes_attr[] = {PRT__ONNX_OPT("axes", PRT_FIELD_INT64, "the axes")};
static const prt_field_schema s_axes_input[] = {
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "the axes (interim shape-value form)"),
};
static const prt_field_schema s_expand[] = {
    PRT__ONNX_REQ_LIST("input:1", PRT_FIELD_INT64, "the shape to broadcast to (interim shape-value form)"),
};
static const prt_field_schema s_shape15[] = {
    PRT__ONNX_I64("start", 0, "first axis (negative from the end, clamped)"),
    PRT__ONNX_I64("end", INT64_MAX, "one past the last axis (negative from the end, clamped)"),
};

#define L(nm, ver, rw, sch, nf, maxin) PRT__ONNX_ROW(nm, ver, rw, sch, nf, 1, maxin, lstate, l)

static const prt__onnx_def reshape_defs[] = {
    L("Reshape", "5", r_reshape, s_reshape, 1, 2),
    L("Reshape", "14", r_reshape, s_reshape, 2, 2),
    L("Flatten", "1", r_flatten, s_flatten, 1, 1),
    L("Squeeze", "1", r_squeeze1, s_axes_attr, 1, 1),
    L("Squeeze", "13", r_squeeze13, s_axes_input, 1, 2),
    L("Unsqueeze", "1", r_unsqueeze1, s_axes_attr, 1, 1),
    L("Unsqueeze", "13", r_unsqueeze13, s_axes_input, 1, 2),
    L("Shape", "1", r_shape, s_shape15, 0, 1),
    L("Shape", "15", r_shape, s_shape15, 2, 1),
    L("Size", "1", r_size, NULL, 0, 1),
    L("Expand", "8", r_expand, s_expand, 1, 2),
};
PRT__ONNX_REGISTER_TABLE(reshape_defs)
