/*
 * onnx/index/select.c - TopK (k largest or smallest along an axis, values
 * and i64 indices) and NonZero (data-dependent output). See README.md.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum skind { SK_TOPK, SK_NONZERO } skind;

typedef struct srow {
    skind kind;
    const char *k_field; /* "k" (1) or "input:1" (10) */
} srow;

typedef struct sstate {
    int64_t axis, k;
    int32_t largest, has_k;
} sstate;

static prt_status t_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const srow *r = n->def->row;
    sstate *s = PRT__ONNX_STATE(n, sstate);
    s->axis = prt_fields_i64(fc, "axis", 0, -1);
    s->largest = prt_fields_i64(fc, "largest", 0, 1) != 0;
    if (r->kind != SK_TOPK) return PRT_OK;
    if (!prt_fields_find(fc, r->k_field)) {
        prt_msg_set(err, "%s v%s: k must be a constant (field \"%s\")", n->def->name, n->def->version, r->k_field);
        return PRT_STATUS_UNSUPPORTED;
    }
    s->k = prt_fields_i64(fc, r->k_field, 0, -1);
    if (s->k < 0 || prt_fields_find(fc, r->k_field)->count != 1) {
        prt_msg_set(err, "%s v%s: k must be one value >= 0, got %lld", n->def->name, n->def->version, (long long)s->k);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status t_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    if (nb_in > 1) {
        prt_msg_set(err, "k must be a constant (field \"input:1\"); a run-time k is not supported");
        return PRT_STATUS_UNSUPPORTED;
    }
    if (((const srow *)n->def->row)->kind == SK_NONZERO) {
        out[0] = PRT_DTYPE_I64;
        return PRT_OK;
    }
    out[0] = in[0];
    out[1] = PRT_DTYPE_I64;
    return PRT_OK;
}

static prt_status t_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    int32_t a, i;
    int64_t d;
    prt_status st;
    (void)nb_in;
    if (((const srow *)n->def->row)->kind == SK_NONZERO) {
        const prt_expr *vol = eb->constant(eb, 1);
        if (!eb->data_dependent) {
            prt_msg_set(err, "the host offers no data-dependent extents");
            return PRT_STATUS_UNSUPPORTED;
        }
        for (i = 0; i < in[0].nb; i++) vol = eb->operation(eb, PRT_EXPR_PROD, vol, in[0].d[i]);
        out->nb = 2;
        out->d[0] = eb->constant(eb, in[0].nb);
        out->d[1] = eb->data_dependent(eb, vol);
        return PRT_OK;
    }
    if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
    d = prt__onnx_known(eb, in[0].d[a]);
    if (d >= 0 && s->k > d) {
        prt_msg_set(err, "k = %lld exceeds axis %d's extent %lld", (long long)s->k, (int)a, (long long)d);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out[0] = in[0];
    out[0].d[a] = eb->constant(eb, s->k);
    out[1] = out[0];
    return PRT_OK;
}

static size_t t_workspace(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                          const prt_tensor_desc *out)
{
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    int64_t a = s->axis < 0 ? s->axis + in[0].dims.nb : s->axis, len;
    (void)nb_in; (void)out;
    if (((const srow *)n->def->row)->kind != SK_TOPK || a < 0 || a >= in[0].dims.nb) return 0;
    len = in[0].dims.d[a];
    return (size_t)(len > 0 ? len : 1) * (2 * sizeof(int64_t) + sizeof(double));
}

/* Does element i come before j? Larger (or smaller) first, NaN as the
 * largest, ties by lower index. */
static int before(const double *v, int64_t i, int64_t j, int largest)
{
    double a = v[i], b = v[j];
    int an = a != a, bn = b != b;
    if (an || bn) {
        if (an && bn) return i < j;
        return largest ? an : bn;
    }
    if (a != b) return largest ? a > b : a < b;
    return i < j;
}

/* Stable merge sort of idx[0..n) by `before`, using tmp. */
static void msort(int64_t *idx, int64_t *tmp, int64_t n, const double *v, int largest)
{
    int64_t w, lo;
    for (w = 1; w < n; w *= 2) {
        for (lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;
            while (a < mid && b < hi) tmp[o++] = before(v, idx[b], idx[a], largest) ? idx[b++] : idx[a++];
            while (a < mid) tmp[o++] = idx[a++];
            while (b < hi) tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, (size_t)n * sizeof *idx);
    }
}

static prt_status t_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    const prt_dims *d = &in[0].dims;
    int64_t vol = prt_dims_volume(d), outer = 1, inner = 1, len, o, i, k;
    int32_t a;
    prt_status st;
    (void)nb_in;
    if (((const srow *)n->def->row)->kind == SK_NONZERO) {
        int64_t st_[PRT_MAX_DIMS], nnz = 0, w = 0;
        prt_dims od;
        prt__onnx_strides(d, st_);
        for (i = 0; i < vol; i++) nnz += prt__onnx_get_f64(x[0], in[0].dtype, i) != 0;
        for (i = 0; i < vol; i++) {
            if (prt__onnx_get_f64(x[0], in[0].dtype, i) == 0) continue;
            for (k = 0; k < d->nb; k++) ((int64_t *)y[0])[k * nnz + w] = (i / st_[k]) % d->d[k];
            w++;
        }
        memset(&od, 0, sizeof od);
        od.nb = 2;
        od.d[0] = d->nb;
        od.d[1] = nnz;
        if (!ex->set_output_dims) {
            prt_msg_set(err, "the host cannot take data-dependent output dims");
            return PRT_STATUS_UNSUPPORTED;
        }
        return ex->set_output_dims(ex, 0, &od);
    }
    if ((st = prt__onnx_axis(n, "axis", s->axis, d->nb, 0, &a, err)) != PRT_OK) return st;
    len = d->d[a];
    if (s->k > len) {
        prt_msg_set(err, "k = %lld exceeds axis %d's extent %lld", (long long)s->k, (int)a, (long long)len);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 0; i < a; i++) outer *= d->d[i];
    for (i = a + 1; i < d->nb; i++) inner *= d->d[i];
    for (o = 0; o < outer * inner && len > 0; o++) {
        int64_t *idx = ws, *tmp = idx + len, base = (o / inner) * len * inner + o % inner;
        int64_t obase = (o / inner) * s->k * inner + o % inner;
        double *v = (double *)(tmp + len);
        for (i = 0; i < len; i++) {
            idx[i] = i;
            v[i] = prt__onnx_get_f64(x[0], in[0].dtype, base + i * inner);
        }
        msort(idx, tmp, len, v, s->largest);
        for (k = 0; k < s->k; k++) {
            size_t es = prt_dtype_size(in[0].dtype);
            memcpy((char *)y[0] + (size_t)(obase + k * inner) * es, (const char *)x[0] + (size_t)(base + idx[k] * inner) * es,
                   es);
            ((int64_t *)y[1])[obase + k * inner] = idx[k];
        }
    }
    (void)out;
    return PRT_OK;
}

static const srow r_topk1 = {SK_TOPK, "k"}, r_topk10 = {SK_TOPK, "input:1"}, r_nonzero = {SK_NONZERO, NULL};

static const prt_field_schema s_topk1[] = {
    PRT__ONNX_I64("axis", -1, "the axis (negative from the end)"),
    {.name = "k", .type = PRT_FIELD_INT64, .required = 1, .min_count = 1, .max_count = 1, .doc = "how many"},
};
static const prt_field_schema s_topk10[] = {
    PRT__ONNX_I64("axis", -1, "the axis (negative from the end)"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "k (interim shape-value form)"),
    PRT__ONNX_I64("largest", 1, "1: the largest, 0: the smallest (version 11)"),
    PRT__ONNX_I64("sorted", 1, "results are always sorted (version 11)"),
};

#define T(nm, ver, rw, sch, nf, nout)                                                              \
    {.name = nm, .version = ver, .min_in = 1, .max_in = 2, .nb_out = nout, .in_mask = PRT__ONNX_NUMERIC | \
     PRT__ONNX_BOOL, .schema = sch, .nb_fields = nf, .state_size = sizeof(sstate), .row = &(rw),    \
     .init = t_init, .types = t_types, .shapes = t_shapes, .run = t_run, .workspace = t_workspace,  \
     .doc = "ONNX " nm}

static const prt__onnx_def select_defs[] = {
    T("TopK", "1", r_topk1, s_topk1, 2, 2),
    T("TopK", "10", r_topk10, s_topk10, 2, 2),
    T("TopK", "11", r_topk10, s_topk10, 4, 2),
    T("NonZero", "9", r_nonzero, NULL, 0, 1),
};
PRT__ONNX_REGISTER_TABLE(select_defs)
