/*
 * onnx/reduce/reduce.c - Reduce* and ArgMax / ArgMin as rows of one table
 * over one kernel: every output element folds the input elements that share
 * its kept coordinates. See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum rkind {
    RK_SUM, RK_MEAN, RK_MAX, RK_MIN, RK_PROD, RK_L1, RK_L2, RK_LOGSUM, RK_LOGSUMEXP, RK_SUMSQUARE,
    RK_ARGMAX, RK_ARGMIN
} rkind;

typedef struct rrow {
    rkind kind;
    int axes_input; /* axes come as input 1 (field "input:1"), with noop_with_empty_axes */
    int arg;        /* ArgMax / ArgMin: one axis, i64 output */
} rrow;

typedef struct rstate {
    int64_t axes[PRT_MAX_DIMS];
    int32_t nb_axes;  /* -1: all axes */
    int32_t keepdims;
    int32_t noop;     /* noop_with_empty_axes and no axes: output = input */
    int32_t last;     /* select_last_index */
} rstate;

static prt_status r_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const rrow *r = n->def->row;
    rstate *s = PRT__ONNX_STATE(n, rstate);
    const prt_field *f;
    int64_t i;
    s->keepdims = prt_fields_i64(fc, "keepdims", 0, 1) != 0;
    s->last = prt_fields_i64(fc, "select_last_index", 0, 0) != 0;
    if (r->arg) {
        s->axes[0] = prt_fields_i64(fc, "axis", 0, 0);
        s->nb_axes = 1;
        return PRT_OK;
    }
    f = prt_fields_find(fc, r->axes_input ? "input:1" : "axes");
    s->nb_axes = -1;
    if (f && f->count > 0) {
        if (f->count > PRT_MAX_DIMS) {
            prt_msg_set(err, "%s v%s: %lld axes, at most %d", n->def->name, n->def->version, (long long)f->count,
                        PRT_MAX_DIMS);
            return PRT_STATUS_INVALID_FIELD;
        }
        for (i = 0; i < f->count; i++) prt_field_get_i64(f, i, &s->axes[i]);
        s->nb_axes = (int32_t)f->count;
    } else if (r->axes_input && prt_fields_i64(fc, "noop_with_empty_axes", 0, 0)) {
        s->noop = 1;
    }
    return PRT_OK;
}

/* Which axes of a rank-`rank` input are reduced (mask[i] != 0). */
static prt_status r_mask(const prt__onnx_node *n, int32_t rank, int32_t *mask, prt_msg *err)
{
    const rstate *s = PRT__ONNX_STATE(n, rstate);
    int32_t i, a;
    prt_status st;
    for (i = 0; i < rank; i++) mask[i] = s->nb_axes < 0 && !s->noop;
    for (i = 0; i < s->nb_axes; i++) {
        if ((st = prt__onnx_axis(n, ((const rrow *)n->def->row)->arg ? "axis" : "axis in axes", s->axes[i],
                                 rank, 0, &a, err)) != PRT_OK)
            return st;
        if (mask[a]) {
            prt_msg_set(err, "axes name axis %d twice", (int)a);
            return PRT_STATUS_INVALID_FIELD;
        }
        mask[a] = 1;
    }
    return PRT_OK;
}

static prt_status r_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const rrow *r = n->def->row;
    if (nb_in > 1) {
        prt_msg_set(err, "axes must be a constant (field \"input:1\"); a run-time axes input is not supported");
        return PRT_STATUS_UNSUPPORTED;
    }
    out[0] = r->arg ? PRT_DTYPE_I64 : in[0];
    (void)err;
    return PRT_OK;
}

static prt_status r_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const rstate *s = PRT__ONNX_STATE(n, rstate);
    int32_t mask[PRT_MAX_DIMS], i, w = 0;
    prt_status st;
    (void)nb_in;
    if (((const rrow *)n->def->row)->arg && in[0].nb == 0) {
        prt_msg_set(err, "input must have rank >= 1, got a 0-d tensor");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((st = r_mask(n, in[0].nb, mask, err)) != PRT_OK) return st;
    for (i = 0; i < in[0].nb; i++) {
        if (!mask[i])
            out[0].d[w++] = in[0].d[i];
        else if (s->keepdims)
            out[0].d[w++] = eb->constant(eb, 1);
    }
    out[0].nb = w;
    return PRT_OK;
}

typedef struct rjob {
    const prt__onnx_node *n;
    rkind kind;
    const void *x;
    void *y;
    prt_dtype tx, ty;
    int use_int;
    int last;
    /* kept dims (outer index space) and reduced dims, with input strides */
    int32_t nk, nr;
    int64_t kd[PRT_MAX_DIMS], ks[PRT_MAX_DIMS];
    int64_t rd[PRT_MAX_DIMS], rs[PRT_MAX_DIMS];
    int64_t count; /* reduced elements per output */
} rjob;

/* The input offset of the next reduced element (odometer over the reduced dims). */
static int64_t r_next(const rjob *j, int64_t *idx, int64_t off)
{
    int32_t i;
    for (i = j->nr - 1; i >= 0; i--) {
        off += j->rs[i];
        if (++idx[i] < j->rd[i]) break;
        off -= j->rd[i] * j->rs[i];
        idx[i] = 0;
    }
    return off;
}

static double r_fold(const rjob *j, int64_t base, int64_t *arg)
{
    int64_t idx[PRT_MAX_DIMS] = {0}, off = base, k, best_i = 0;
    double acc, best = 0;
    switch (j->kind) {
    case RK_PROD: acc = 1; break;
    case RK_MAX: acc = -INFINITY; break;
    case RK_MIN: acc = INFINITY; break;
    case RK_LOGSUMEXP: acc = -INFINITY; break;
    default: acc = 0; break;
    }
    if (j->kind == RK_LOGSUMEXP) { /* max first, for a stable sum */
        double m = -INFINITY, s = 0;
        for (k = 0; k < j->count; k++) {
            double v = prt__onnx_get_f64(j->x, j->tx, off);
            if (v > m || v != v) m = v;
            off = r_next(j, idx, off);
        }
        if (j->count == 0 || isinf(m)) return m;
        off = base;
        for (k = 0; k < j->count; k++) {
            s += exp(prt__onnx_get_f64(j->x, j->tx, off) - m);
            off = r_next(j, idx, off);
        }
        return m + log(s);
    }
    for (k = 0; k < j->count; k++) {
        double v = prt__onnx_get_f64(j->x, j->tx, off);
        switch (j->kind) {
        case RK_SUM: case RK_MEAN: case RK_LOGSUM: acc += v; break;
        case RK_PROD: acc *= v; break;
        case RK_MAX: if (v > acc || v != v) acc = v; break;
        case RK_MIN: if (v < acc || v != v) acc = v; break;
        case RK_L1: acc += fabs(v); break;
        case RK_L2: case RK_SUMSQUARE: acc += v * v; break;
        case RK_ARGMAX:
            if (k == 0 || v > best || (j->last && v == best)) { best = v; best_i = k; }
            break;
        case RK_ARGMIN:
            if (k == 0 || v < best || (j->last && v == best)) { best = v; best_i = k; }
            break;
        default: break;
        }
        off = r_next(j, idx, off);
    }
    if (arg) *arg = best_i;
    switch (j->kind) {
    case RK_MEAN: return acc / (double)j->count; /* 0 / 0 is NaN for an empty set */
    case RK_L2: return sqrt(acc);
    case RK_LOGSUM: return log(acc);
    default: return acc;
    }
}

/* Integer Sum / Prod / Max / Min, exact in int64 (wrapping). */
static int64_t r_fold_i(const rjob *j, int64_t base)
{
    int64_t idx[PRT_MAX_DIMS] = {0}, off = base, k;
    int64_t acc = j->kind == RK_PROD ? 1 : j->kind == RK_MAX ? INT64_MIN : j->kind == RK_MIN ? INT64_MAX : 0;
    for (k = 0; k < j->count; k++) {
        int64_t v = prt__onnx_get_i64(j->x, j->tx, off);
        switch (j->kind) {
        case RK_SUM: acc = (int64_t)((uint64_t)acc + (uint64_t)v); break;
        case RK_PROD: acc = (int64_t)((uint64_t)acc * (uint64_t)v); break;
        case RK_MAX: if (v > acc) acc = v; break;
        case RK_MIN: if (v < acc) acc = v; break;
        case RK_SUMSQUARE: acc = (int64_t)((uint64_t)acc + (uint64_t)v * (uint64_t)v); break;
        case RK_L1: acc = (int64_t)((uint64_t)acc + (uint64_t)(v < 0 ? 0 - (uint64_t)v : (uint64_t)v)); break;
        default: break;
        }
        off = r_next(j, idx, off);
    }
    return acc;
}

static void r_range(void *arg, int64_t begin, int64_t end)
{
    const rjob *j = arg;
    int64_t o;
    for (o = begin; o < end; o++) {
        int64_t rem = o, base = 0, a = 0;
        int32_t i;
        for (i = j->nk - 1; i >= 0; i--) {
            base += (rem % j->kd[i]) * j->ks[i];
            rem /= j->kd[i];
        }
        if (j->kind == RK_ARGMAX || j->kind == RK_ARGMIN) {
            r_fold(j, base, &a);
            ((int64_t *)j->y)[o] = a;
        } else if (j->use_int) {
            int64_t v = r_fold_i(j, base);
            prt__onnx_scatter_i64(j->y, j->ty, o, &v, 1);
        } else {
            double v = r_fold(j, base, NULL);
            prt__onnx_scatter_f64(j->y, j->ty, o, &v, 1);
        }
    }
}

static prt_status r_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const rrow *r = n->def->row;
    int32_t mask[PRT_MAX_DIMS], i;
    int64_t strides[PRT_MAX_DIMS], vout = prt_dims_volume(&out[0].dims);
    rjob j;
    prt_status st;
    (void)nb_in; (void)ws;
    if ((st = r_mask(n, in[0].dims.nb, mask, err)) != PRT_OK) return st;
    memset(&j, 0, sizeof j);
    j.n = n;
    j.kind = r->kind;
    j.x = x[0];
    j.y = y[0];
    j.tx = in[0].dtype;
    j.ty = out[0].dtype;
    j.last = PRT__ONNX_STATE(n, rstate)->last;
    j.use_int = !prt__onnx_is_float(in[0].dtype) &&
                (r->kind == RK_SUM || r->kind == RK_PROD || r->kind == RK_MAX || r->kind == RK_MIN ||
                 r->kind == RK_SUMSQUARE || r->kind == RK_L1);
    j.count = 1;
    prt__onnx_strides(&in[0].dims, strides);
    for (i = 0; i < in[0].dims.nb; i++) {
        if (mask[i]) {
            j.rd[j.nr] = in[0].dims.d[i];
            j.rs[j.nr++] = strides[i];
            j.count *= in[0].dims.d[i];
        } else {
            j.kd[j.nk] = in[0].dims.d[i];
            j.ks[j.nk++] = strides[i];
        }
    }
    if (r->arg && j.count == 0 && vout > 0) {
        prt_msg_set(err, "cannot take the arg of an empty axis");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (vout <= 0) return PRT_OK;
    if (vout * (j.count + 1) <= 16384)
        r_range(&j, 0, vout);
    else
        ex->parallel_for(ex, vout, 1 + 16384 / (j.count + 1), r_range, &j);
    return PRT_OK;
}

/* ---- the table ------------------------------------------------------------------- */

static const prt_field_schema s_attr_axes[] = {
    PRT__ONNX_OPT("axes", PRT_FIELD_INT64, "axes to reduce (negative from the end); absent: all"),
    PRT__ONNX_I64("keepdims", 1, "keep reduced axes as extent 1"),
};
static const prt_field_schema s_input_axes[] = {
    PRT__ONNX_I64("keepdims", 1, "keep reduced axes as extent 1"),
    PRT__ONNX_I64("noop_with_empty_axes", 0, "no axes: 1 returns the input, 0 reduces all"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "axes as a constant (interim shape-value form)"),
};
static const prt_field_schema s_arg[] = {
    PRT__ONNX_I64("axis", 0, "the axis (negative from the end)"),
    PRT__ONNX_I64("keepdims", 1, "keep the axis as extent 1"),
    PRT__ONNX_I64("select_last_index", 0, "1: the last index of ties (version 12)"),
};

#define RROWS(id, k)                                                                               \
    static const rrow id##_attr = {.kind = k};                                                     \
    static const rrow id##_input = {.kind = k, .axes_input = 1}
RROWS(r_sum, RK_SUM);
RROWS(r_mean, RK_MEAN);
RROWS(r_max, RK_MAX);
RROWS(r_min, RK_MIN);
RROWS(r_prod, RK_PROD);
RROWS(r_l1, RK_L1);
RROWS(r_l2, RK_L2);
RROWS(r_logsum, RK_LOGSUM);
RROWS(r_logsumexp, RK_LOGSUMEXP);
RROWS(r_sumsquare, RK_SUMSQUARE);
static const rrow r_argmax = {.kind = RK_ARGMAX, .arg = 1};
static const rrow r_argmin = {.kind = RK_ARGMIN, .arg = 1};

#define R_COMMON(nm, ver, rw, mask)                                                                \
    .name = nm, .version = ver, .min_in = 1, .nb_out = 1, .in_mask = (mask),                       \
    .state_size = sizeof(rstate), .row = &(rw), .init = r_init, .types = r_types,                  \
    .shapes = r_shapes, .run = r_run, .doc = "ONNX " nm
/* Attribute axes (versions before the axes input), then the axes-input form. */
#define RED(nm, ver_in, id, mask)                                                                  \
    {R_COMMON(nm, "1", id##_attr, mask), .max_in = 1, .schema = s_attr_axes,                       \
     .nb_fields = PRT__ONNX_NFIELDS(s_attr_axes)},                                                 \
    {R_COMMON(nm, ver_in, id##_input, mask), .max_in = 2, .schema = s_input_axes,                 \
     .nb_fields = PRT__ONNX_NFIELDS(s_input_axes)}
#define ARG(nm, ver, rw, nf)                                                                       \
    {R_COMMON(nm, ver, rw, PRT__ONNX_NUMERIC), .max_in = 1, .schema = s_arg, .nb_fields = nf}

#define NU PRT__ONNX_NUMERIC

static const prt__onnx_def reduce_defs[] = {
    RED("ReduceSum", "13", r_sum, NU),
    RED("ReduceMean", "18", r_mean, NU),
    RED("ReduceMax", "18", r_max, PRT__ONNX_ALL),
    RED("ReduceMin", "18", r_min, PRT__ONNX_ALL),
    RED("ReduceProd", "18", r_prod, NU),
    RED("ReduceL1", "18", r_l1, NU),
    RED("ReduceL2", "18", r_l2, NU),
    RED("ReduceLogSum", "18", r_logsum, NU),
    RED("ReduceLogSumExp", "18", r_logsumexp, NU),
    RED("ReduceSumSquare", "18", r_sumsquare, NU),
    ARG("ArgMax", "1", r_argmax, 2), ARG("ArgMax", "12", r_argmax, 3),
    ARG("ArgMin", "1", r_argmin, 2), ARG("ArgMin", "12", r_argmin, 3),
};
PRT__ONNX_REGISTER_TABLE(reduce_defs)
