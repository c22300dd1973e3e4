/*
 * harness/refs.c - float64 references of the bundled plugins, used by
 * `plugrt golden make` to compute golden outputs (see plugrun.h).
 *
 *   Swish (1, 2): y = w[c] * x / (1 + exp(-beta * x)) in double; beta
 *                 defaults to 1, w[c] = 1 without "weights", c = dim 1.
 *   ModulatedDeformConv2d (1, 2): prt__deform_conv_cpu_ref_f64, the
 *                 plain-loop double reference of plugins/deform_conv.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/deform_conv/deform_conv.h"
#include "harness/plugrun.h"

static int find_input(const prt__inputs *in, const char *name)
{
    int i;
    for (i = 0; i < in->nb; i++)
        if (strcmp(in->names[i], name) == 0) return i;
    return -1;
}

static prt_status swish_ref(const prt__inputs *in, double *const *in_f64, const prt__attrset *attrs,
                            prt__arena *ar, int nb_out, double **out, prt_dims *out_dims, char *err, size_t cap)
{
    int ix = find_input(in, "x");
    const prt__attrval *w = prt__attrset_get(attrs, "weights"), *b = prt__attrset_get(attrs, "beta");
    double beta;
    if (!b) b = prt__attrset_get(attrs, "alpha"); /* version 24 (ONNX's Swish) calls the slope alpha */
    beta = b && !b->is_text && b->count == 1 ? b->v[0] : 1.0;
    int64_t n, i, c = 1, inner = 1;
    int k;
    if (ix < 0 || nb_out != 1) {
        snprintf(err, cap, "Swish reference: needs input \"x\" and one output");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    n = prt_dims_volume(&in->desc[ix].dims);
    if (w) {
        const prt_dims *d = &in->desc[ix].dims;
        if (d->nb < 2 || d->d[1] != w->count) {
            snprintf(err, cap, "Swish reference: \"weights\" has %lld values; expected dim 1 of x",
                     (long long)w->count);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        c = d->d[1];
        for (k = 2; k < d->nb; k++) inner *= d->d[k];
    }
    out[0] = prt__arena_alloc(ar, sizeof(double) * (size_t)(n ? n : 1));
    if (!out[0]) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) {
        double x = in_f64[ix][i];
        double y = x / (1.0 + exp(-beta * x));
        if (w && inner > 0 && c > 0) y *= w->v[(i / inner) % c];
        out[0][i] = y;
    }
    out_dims[0] = in->desc[ix].dims;
    return PRT_OK;
}

static int attr_ints(const prt__attrset *a, const char *name, int64_t *v, int n)
{
    const prt__attrval *x = prt__attrset_get(a, name);
    int i;
    if (!x || x->is_text || x->count != n) return -1;
    for (i = 0; i < n; i++) {
        if (x->v[i] != floor(x->v[i]) || fabs(x->v[i]) > 1e9) return -1;
        v[i] = (int64_t)x->v[i];
    }
    return 0;
}

static prt_status dcn_ref(const prt__inputs *in, double *const *in_f64, const prt__attrset *attrs,
                          prt__arena *ar, int nb_out, double **out, prt_dims *out_dims, char *err, size_t cap)
{
    int ix = find_input(in, "x"), io = find_input(in, "offset"), im = find_input(in, "mask");
    int iw = find_input(in, "weight"), ib = find_input(in, "bias");
    prt__dcn_params p;
    prt__dcn_shape s;
    const prt_dims *x, *w, *o;
    int64_t vol;
    memset(&p, 0, sizeof p);
    memset(&s, 0, sizeof s);
    if (ix < 0 || io < 0 || im < 0 || iw < 0 || nb_out != 1) {
        snprintf(err, cap, "ModulatedDeformConv2d reference: needs x, offset, mask, weight and one output");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (attr_ints(attrs, "stride", p.stride, 2) || attr_ints(attrs, "padding", p.padding, 2) ||
        attr_ints(attrs, "dilation", p.dilation, 2) || attr_ints(attrs, "group", &p.group, 1) ||
        attr_ints(attrs, "deformable_group", &p.deformable_group, 1)) {
        snprintf(err, cap, "ModulatedDeformConv2d reference: needs integer attributes stride[2], padding[2], "
                           "dilation[2], group, deformable_group");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    x = &in->desc[ix].dims;
    w = &in->desc[iw].dims;
    o = &in->desc[io].dims;
    if (x->nb != 4 || w->nb != 4 || o->nb != 4 || p.group < 1 || p.deformable_group < 1 || p.stride[0] < 1 ||
        p.stride[1] < 1) {
        snprintf(err, cap, "ModulatedDeformConv2d reference: x, offset and weight must be 4-D, group, "
                           "deformable_group and stride >= 1");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    s.n = x->d[0];
    s.cin = x->d[1];
    s.h = x->d[2];
    s.w = x->d[3];
    s.cout = w->d[0];
    s.kh = w->d[2];
    s.kw = w->d[3];
    s.hout = prt__dcn_out_extent(s.h, p.padding[0], p.dilation[0], s.kh, p.stride[0]);
    s.wout = prt__dcn_out_extent(s.w, p.padding[1], p.dilation[1], s.kw, p.stride[1]);
    s.has_bias = ib >= 0;
    if (s.hout < 1 || s.wout < 1 || o->d[2] != s.hout || o->d[3] != s.wout ||
        o->d[1] != 2 * p.deformable_group * s.kh * s.kw || s.cin % p.group || s.cin % p.deformable_group ||
        w->d[1] * p.group != s.cin || s.cout % p.group) {
        snprintf(err, cap, "ModulatedDeformConv2d reference: the shapes do not fit the attributes");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out_dims[0].nb = 4;
    out_dims[0].reserved_ = 0;
    out_dims[0].d[0] = s.n;
    out_dims[0].d[1] = s.cout;
    out_dims[0].d[2] = s.hout;
    out_dims[0].d[3] = s.wout;
    vol = prt_dims_volume(&out_dims[0]);
    out[0] = prt__arena_alloc(ar, sizeof(double) * (size_t)(vol ? vol : 1));
    if (!out[0]) return PRT_STATUS_OUT_OF_MEMORY;
    prt__deform_conv_cpu_ref_f64(&p, &s, in_f64[ix], in_f64[io], in_f64[im], in_f64[iw], ib >= 0 ? in_f64[ib] : NULL,
                                 out[0]);
    return PRT_OK;
}

static const prt__ref refs[] = {
    {"Swish", NULL, swish_ref,
     "float64: y = w[c] * x / (1 + exp(-beta * x)), alpha for beta in version 24 (src/harness/refs.c)"},
    {"ModulatedDeformConv2d", NULL, dcn_ref,
     "float64: prt__deform_conv_cpu_ref_f64 (plugins/deform_conv/deform_conv_cpu.c)"},
};

const prt__ref *prt__ref_find(const char *name, const char *version)
{
    size_t i;
    for (i = 0; i < sizeof refs / sizeof refs[0]; i++)
        if (name && strcmp(refs[i].name, name) == 0 &&
            (!refs[i].version || (version && strcmp(refs[i].version, version) == 0)))
            return &refs[i];
    return NULL;
}
