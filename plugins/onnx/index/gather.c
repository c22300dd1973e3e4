/*
 * onnx/index/gather.c - ops driven by an index tensor: Gather,
 * GatherElements, GatherND, ScatterElements, ScatterND, OneHot. Indices are
 * i32 or i64; a negative index counts from the end; one out of range fails
 * the run naming it. See README.md in this folder.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum gkind { GK_GATHER, GK_ELEMENTS, GK_ND, GK_SCATTER_EL, GK_SCATTER_ND, GK_ONEHOT } gkind;
typedef enum gred { GR_NONE, GR_ADD, GR_MUL, GR_MAX, GR_MIN } gred;

typedef struct grow {
    gkind kind;
} grow;

typedef struct gstate {
    int64_t axis;
    int64_t batch_dims;
    int64_t depth;
    int32_t has_depth;
    gred red;
} gstate;

static const char *const red_names[] = {"none", "add", "mul", "max", "min"};

static prt_status g_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    gstate *s = PRT__ONNX_STATE(n, gstate);
    const prt_field *f;
    int i;
    s->axis = prt_fields_i64(fc, "axis", 0, ((const grow *)n->def->row)->kind == GK_ONEHOT ? -1 : 0);
    s->batch_dims = prt_fields_i64(fc, "batch_dims", 0, 0);
    if ((f = prt_fields_find(fc, "input:1")) && f->count > 0) {
        double v = 0;
        prt_field_get_f64(f, 0, &v);
        if (f->count != 1 || !(v >= 1 && v <= 1e15) || v != (double)(int64_t)v) {
            prt_msg_set(err, "%s v%s: depth must be one integer >= 1, got %g (%lld values)", n->def->name,
                        n->def->version, v, (long long)f->count);
            return PRT_STATUS_INVALID_FIELD;
        }
        s->depth = (int64_t)v;
        s->has_depth = 1;
    }
    if ((i = prt__onnx_str_enum(n, fc, "reduction", red_names, 5, GR_NONE, err)) < 0) return PRT_STATUS_INVALID_FIELD;
    s->red = (gred)i;
    return PRT_OK;
}

static int is_index(prt_dtype t)
{
    return t == PRT_DTYPE_I32 || t == PRT_DTYPE_I64;
}

static prt_status g_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const grow *r = n->def->row;
    if (r->kind == GK_ONEHOT) {
        if (!PRT__ONNX_STATE(n, gstate)->has_depth) {
            prt_msg_set(err, "depth must be a constant (field \"input:1\")");
            return PRT_STATUS_UNSUPPORTED;
        }
        if (nb_in != 2 || in[0] == PRT_DTYPE_BOOL) {
            prt_msg_set(err, "takes numeric indices and values; got %d inputs, indices %s", (int)nb_in,
                        prt_dtype_name(in[0]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = in[1];
        return PRT_OK;
    }
    if (!is_index(in[1])) {
        prt_msg_set(err, "indices (input 1) must be i32 or i64, got %s", prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    if ((r->kind == GK_SCATTER_EL || r->kind == GK_SCATTER_ND) && in[2] != in[0]) {
        prt_msg_set(err, "updates (input 2) must have data's dtype %s, got %s", prt_dtype_name(in[0]),
                    prt_dtype_name(in[2]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status g_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const grow *r = n->def->row;
    const gstate *s = PRT__ONNX_STATE(n, gstate);
    int32_t a, i, w = 0;
    int64_t k;
    prt_status st;
    (void)nb_in;
    switch (r->kind) {
    case GK_GATHER:
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
        if (in[0].nb - 1 + in[1].nb > PRT_MAX_DIMS) {
            prt_msg_set(err, "the output would have rank %d (at most %d)", (int)(in[0].nb - 1 + in[1].nb), PRT_MAX_DIMS);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < a; i++) out->d[w++] = in[0].d[i];
        for (i = 0; i < in[1].nb; i++) out->d[w++] = in[1].d[i];
        for (i = a + 1; i < in[0].nb; i++) out->d[w++] = in[0].d[i];
        out->nb = w;
        return PRT_OK;
    case GK_ELEMENTS: case GK_SCATTER_EL:
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
        if (in[1].nb != in[0].nb) {
            prt_msg_set(err, "indices have rank %d, data has %d; they must match", (int)in[1].nb, (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = r->kind == GK_ELEMENTS ? in[1] : in[0];
        return PRT_OK;
    case GK_ND: case GK_SCATTER_ND:
        if (in[1].nb < 1 || (k = prt__onnx_known(eb, in[1].d[in[1].nb - 1])) < 0) {
            prt_msg_set(err, "indices need rank >= 1 and a last extent known when building");
            return PRT_STATUS_UNSUPPORTED;
        }
        if (s->batch_dims < 0 || s->batch_dims >= in[1].nb || s->batch_dims + k > in[0].nb) {
            prt_msg_set(err, "batch_dims %lld with index length %lld does not fit data of rank %d and indices of "
                        "rank %d", (long long)s->batch_dims, (long long)k, (int)in[0].nb, (int)in[1].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (r->kind == GK_SCATTER_ND) {
            out[0] = in[0];
            return PRT_OK;
        }
        for (i = 0; i < in[1].nb - 1; i++) out->d[w++] = in[1].d[i];
        for (i = (int32_t)(s->batch_dims + k); i < in[0].nb; i++) {
            if (w >= PRT_MAX_DIMS) {
                prt_msg_set(err, "the output would have rank > %d", PRT_MAX_DIMS);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            out->d[w++] = in[0].d[i];
        }
        out->nb = w;
        return PRT_OK;
    case GK_ONEHOT:
        if (in[0].nb + 1 > PRT_MAX_DIMS) {
            prt_msg_set(err, "the output would have rank %d (at most %d)", (int)in[0].nb + 1, PRT_MAX_DIMS);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb + 1, 0, &a, err)) != PRT_OK) return st;
        for (i = 0; i <= in[0].nb; i++)
            out->d[i] = i == a ? eb->constant(eb, s->depth) : in[0].d[i < a ? i : i - 1];
        out->nb = in[0].nb + 1;
        return PRT_OK;
    }
    return PRT_STATUS_INTERNAL;
}

/* Index value i of an index tensor, made non-negative for extent d; -1 when out of range. */
static int64_t idx_at(const void *p, prt_dtype t, int64_t i, int64_t d)
{
    int64_t v = prt__onnx_get_i64(p, t, i); /* OneHot takes any numeric indices (truncated) */
    if (v < 0) v += d;
    return v >= 0 && v < d ? v : -1;
}

static prt_status bad_index(const void *p, prt_dtype t, int64_t i, int64_t d, prt_msg *err)
{
    int64_t v = t == PRT_DTYPE_I32 ? ((const int32_t *)p)[i] : ((const int64_t *)p)[i];
    prt_msg_set(err, "index %lld at position %lld is outside [-%lld, %lld)", (long long)v, (long long)i,
                (long long)d, (long long)d);
    return PRT_STATUS_INVALID_ARGUMENT;
}

/* Combine an update into out[o] (element units) with the reduction. */
static void combine(void *out, const void *upd, prt_dtype t, int64_t o, int64_t u, gred red, size_t es)
{
    if (red == GR_NONE) {
        memcpy((char *)out + (size_t)o * es, (const char *)upd + (size_t)u * es, es);
    } else if (prt__onnx_is_float(t)) {
        double a = prt__onnx_get_f64(out, t, o), b = prt__onnx_get_f64(upd, t, u);
        double v = red == GR_ADD ? a + b : red == GR_MUL ? a * b : red == GR_MAX ? (a > b ? a : b) : (a < b ? a : b);
        prt__onnx_scatter_f64(out, t, o, &v, 1);
    } else {
        int64_t a = prt__onnx_get_i64(out, t, o), b = prt__onnx_get_i64(upd, t, u);
        int64_t v = red == GR_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
                    : red == GR_MUL ? (int64_t)((uint64_t)a * (uint64_t)b)
                    : red == GR_MAX ? (a > b ? a : b) : (a < b ? a : b);
        prt__onnx_scatter_i64(out, t, o, &v, 1);
    }
}

static prt_status g_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const grow *r = n->def->row;
    const gstate *s = PRT__ONNX_STATE(n, gstate);
    const gkind kind = ((const grow *)n->def->row)->kind;
    /* OneHot's indices are input 0 */
    const prt_dims *dd = &in[0].dims, *id = kind == GK_ONEHOT ? &in[0].dims : &in[1].dims;
    size_t es = prt_dtype_size(out[0].dtype);
    int64_t ds[PRT_MAX_DIMS], is[PRT_MAX_DIMS], os[PRT_MAX_DIMS];
    int64_t ni = prt_dims_volume(id), i, j, outer = 1, inner = 1;
    (void)kind;
    int32_t a = 0, k;
    prt_status st;
    const char *src = x[0];
    char *dst = y[0];
    (void)nb_in; (void)ws; (void)ex;
    prt__onnx_strides(dd, ds);
    prt__onnx_strides(id, is);
    prt__onnx_strides(&out[0].dims, os);
    if (r->kind != GK_ND && r->kind != GK_SCATTER_ND &&
        (st = prt__onnx_axis(n, "axis", s->axis, r->kind == GK_ONEHOT ? id->nb + 1 : dd->nb, 0, &a, err)) != PRT_OK)
        return st;
    switch (r->kind) {
    case GK_GATHER: {
        int64_t d = dd->d[a];
        for (k = 0; k < a; k++) outer *= dd->d[k];
        for (k = a + 1; k < dd->nb; k++) inner *= dd->d[k];
        for (j = 0; j < ni; j++)
            if (idx_at(x[1], in[1].dtype, j, d) < 0) return bad_index(x[1], in[1].dtype, j, d, err);
        for (i = 0; i < outer; i++)
            for (j = 0; j < ni; j++)
                memcpy(dst + (size_t)((i * ni + j) * inner) * es,
                       src + (size_t)((i * d + idx_at(x[1], in[1].dtype, j, d)) * inner) * es, (size_t)inner * es);
        return PRT_OK;
    }
    case GK_ELEMENTS: case GK_SCATTER_EL: {
        const prt_dims *walk = id;
        if (r->kind == GK_SCATTER_EL) {
            if (!prt_dims_equal(&in[2].dims, id)) {
                prt_msg_set(err, "updates must have the indices' shape");
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (prt_dims_volume(dd) > 0) memcpy(dst, src, (size_t)prt_dims_volume(dd) * es);
        }
        for (k = 0; k < id->nb; k++)
            if (id->d[k] > dd->d[k] && k != a) {
                prt_msg_set(err, "indices extent %lld on axis %d exceeds data's %lld", (long long)id->d[k], (int)k,
                            (long long)dd->d[k]);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        for (j = 0; j < ni; j++) {
            int64_t rem = j, off = 0, v = idx_at(x[1], in[1].dtype, j, dd->d[a]);
            if (v < 0) return bad_index(x[1], in[1].dtype, j, dd->d[a], err);
            for (k = walk->nb - 1; k >= 0; k--) {
                int64_t c = rem % walk->d[k];
                rem /= walk->d[k];
                off += (k == a ? v : c) * ds[k];
            }
            if (r->kind == GK_ELEMENTS)
                memcpy(dst + (size_t)j * es, src + (size_t)off * es, es);
            else
                combine(dst, x[2], out[0].dtype, off, j, s->red, es);
        }
        return PRT_OK;
    }
    case GK_ND: case GK_SCATTER_ND: {
        int64_t b = s->batch_dims, kk = id->d[id->nb - 1], nvec = 1, batch = 1, slice = 1;
        for (k = 0; k < id->nb - 1; k++) nvec *= id->d[k];
        for (k = 0; k < b; k++) {
            batch *= dd->d[k];
            if (id->d[k] != dd->d[k]) {
                prt_msg_set(err, "batch dim %d: indices have %lld, data %lld", (int)k, (long long)id->d[k],
                            (long long)dd->d[k]);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        }
        for (k = (int32_t)(b + kk); k < dd->nb; k++) slice *= dd->d[k];
        if (r->kind == GK_SCATTER_ND) {
            int64_t want = nvec * slice, got = prt_dims_volume(&in[2].dims);
            if (want != got) {
                prt_msg_set(err, "updates hold %lld elements, indices and data need %lld", (long long)got,
                            (long long)want);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (prt_dims_volume(dd) > 0) memcpy(dst, src, (size_t)prt_dims_volume(dd) * es);
        }
        for (j = 0; j < nvec; j++) {
            int64_t off = b > 0 ? (j / (nvec / batch)) * ds[b - 1] : 0;
            for (k = 0; k < kk; k++) {
                int64_t v = idx_at(x[1], in[1].dtype, j * kk + k, dd->d[b + k]);
                if (v < 0) return bad_index(x[1], in[1].dtype, j * kk + k, dd->d[b + k], err);
                off += v * ds[b + k];
            }
            if (r->kind == GK_ND) {
                memcpy(dst + (size_t)(j * slice) * es, src + (size_t)off * es, (size_t)slice * es);
            } else {
                for (i = 0; i < slice; i++) combine(dst, x[2], out[0].dtype, off + i, j * slice + i, s->red, es);
            }
        }
        return PRT_OK;
    }
    case GK_ONEHOT: {
        int64_t d = s->depth, nv = prt_dims_volume(&in[1].dims), nout = prt_dims_volume(&out[0].dims);
        if (nv != 2) {
            prt_msg_set(err, "values must hold 2 elements [off, on], got %lld", (long long)nv);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (k = 0; k < a; k++) outer *= id->d[k];
        for (k = a; k < id->nb; k++) inner *= id->d[k];
        (void)dd;
        for (i = 0; i < nout; i++) memcpy(dst + (size_t)i * es, x[1], es);
        for (i = 0; i < outer; i++)
            for (j = 0; j < inner; j++) {
                int64_t v = idx_at(x[0], in[0].dtype, i * inner + j, d);
                if (v >= 0) memcpy(dst + (size_t)((i * d + v) * inner + j) * es, (const char *)x[1] + es, es);
            }
        return PRT_OK;
    }
    }
    return PRT_STATUS_INTERNAL;
}

static const grow r_gather = {GK_GATHER}, r_elements = {GK_ELEMENTS}, r_nd = {GK_ND};
static const grow r_scatter_el = {GK_SCATTER_EL}, r_scatter_nd = {GK_SCATTER_ND}, r_onehot = {GK_ONEHOT};

static const prt_field_schema s_axis0[] = {PRT__ONNX_I64("axis", 0, "the axis (negative from the end)")};
static const prt_field_schema s_nd[] = {PRT__ONNX_I64("batch_dims", 0, "leading dims shared by data and indices")};
static const prt_field_schema s_scatter_el[] = {
    PRT__ONNX_I64("axis", 0, "the axis (negative from the end)"),
    PRT__ONNX_STR("reduction", "none", "none, add, mul (16); max, min (18)"),
};
static const prt_field_schema s_scatter_nd[] = {
    PRT__ONNX_STR("reduction", "none", "none, add, mul (16); max, min (18)"),
};
static const prt_field_schema s_onehot[] = {
    PRT__ONNX_I64("axis", -1, "where the new axis goes (negative from the end of the output)"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "depth (interim shape-value form)"),
};

#define G(nm, ver, rw, sch, nf, nin) PRT__ONNX_ROW(nm, ver, rw, sch, nf, nin, nin, gstate, g)

static const prt__onnx_def gather_defs[] = {
    G("Gather", "1", r_gather, s_axis0, 1, 2),
    G("GatherElements", "11", r_elements, s_axis0, 1, 2),
    G("GatherND", "11", r_nd, s_nd, 0, 2),
    G("GatherND", "12", r_nd, s_nd, 1, 2),
    G("ScatterElements", "11", r_scatter_el, s_scatter_el, 1, 3),
    G("ScatterElements", "16", r_scatter_el, s_scatter_el, 2, 3),
    G("ScatterND", "11", r_scatter_nd, s_scatter_nd, 0, 3),
    G("ScatterND", "16", r_scatter_nd, s_scatter_nd, 1, 3),
    G("OneHot", "9", r_onehot, s_onehot, 2, 2),
};
PRT__ONNX_REGISTER_TABLE(gather_defs)
