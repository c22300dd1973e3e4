/*
 * onnx/compute/conv.c - Conv and ConvTranspose (1-D and 2-D; groups,
 * dilations, pads, auto_pad), fp32. Conv runs on the engines of conv.h:
 * a direct kernel for depthwise convolutions and few output channels per
 * group (conv_dw.c), otherwise blocks of output columns through im2col +
 * GEMM or the pixel tiles (conv_blk.c). ConvTranspose: the
 * GEMM of W^T and X into the workspace, then col2im adds it into Y.
 * ConvInteger: a direct loop with exact integer accumulation.
 */
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "../common/ew_prog.h"
#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"
#include "conv.h"

typedef enum apad { AP_NOTSET, AP_SAME_UPPER, AP_SAME_LOWER, AP_VALID } apad;

typedef struct cstate {
    int64_t kernel[2], strides[2], dil[2], pads[4], out_pad[2], out_shape[2];
    int64_t nk, nstrides, ndil, npads, nout_pad, nout_shape;
    int64_t group;
    apad auto_pad;
} cstate;

static prt_status cv_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    cstate *s = PRT__ONNX_STATE(n, cstate);
    prt_status st;
    int64_t i;
    static const char *const modes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    int m = prt__onnx_str_enum(n, fc, "auto_pad", modes, 4, AP_NOTSET, err);
    if (m < 0) return PRT_STATUS_INVALID_FIELD;
    s->auto_pad = (apad)m;
    if ((st = prt__onnx_field_ints(n, fc, "kernel_shape", s->kernel, 2, &s->nk, err)) ||
        (st = prt__onnx_field_ints(n, fc, "strides", s->strides, 2, &s->nstrides, err)) ||
        (st = prt__onnx_field_ints(n, fc, "dilations", s->dil, 2, &s->ndil, err)) ||
        (st = prt__onnx_field_ints(n, fc, "pads", s->pads, 4, &s->npads, err)) ||
        (st = prt__onnx_field_ints(n, fc, "output_padding", s->out_pad, 2, &s->nout_pad, err)) ||
        (st = prt__onnx_field_ints(n, fc, "output_shape", s->out_shape, 2, &s->nout_shape, err)))
        return st;
    for (i = s->nout_pad > 0 ? s->nout_pad : 0; i < 2; i++) s->out_pad[i] = 0;
    s->group = prt_fields_i64(fc, "group", 0, 1);
    if (s->group < 1) {
        prt_msg_set(err, "%s v%s: group must be >= 1, got %lld", n->def->name, n->def->version, (long long)s->group);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < 2; i++) {
        if (s->nstrides <= i) s->strides[i] = 1;
        if (s->ndil <= i) s->dil[i] = 1;
        if (s->strides[i] < 1 || s->dil[i] < 1) {
            prt_msg_set(err, "%s v%s: strides and dilations must be >= 1", n->def->name, n->def->version);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    for (i = s->npads > 0 ? s->npads : 0; i < 4; i++) s->pads[i] = 0;
    for (i = 0; i < 4; i++)
        if (s->pads[i] < 0) {
            prt_msg_set(err, "%s v%s: pads must be >= 0", n->def->name, n->def->version);
            return PRT_STATUS_INVALID_FIELD;
        }
    return PRT_OK;
}

static prt_status cv_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    return prt__onnx_types_same(n, in, nb_in, out, err);
}

/* Spatial rank (1 or 2) checks shared by shapes and run. */
static prt_status cv_rank(const prt__onnx_node *n, int32_t rx, int32_t rw, prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    int32_t sp = rx - 2;
    if (rx < 3 || rx > 4 || rw != rx) {
        prt_msg_set(err, "X and W must both be 3-D or 4-D (1-D or 2-D convolution), got ranks %d and %d", (int)rx,
                    (int)rw);
        return rx == 5 ? PRT_STATUS_UNSUPPORTED : PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((s->nk >= 0 && s->nk != sp) || (s->nstrides >= 0 && s->nstrides != sp) || (s->ndil >= 0 && s->ndil != sp) ||
        (s->npads >= 0 && s->npads != 2 * sp)) {
        prt_msg_set(err, "kernel_shape, strides, dilations need %d values and pads %d for a %d-D convolution",
                    (int)sp, (int)(2 * sp), (int)sp);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

/* Output extent and begin pad of spatial axis i for input extent d and kernel k. */
static void cv_axis(const cstate *s, int32_t sp, int32_t i, int64_t d, int64_t k, int64_t *out, int64_t *pb)
{
    int64_t ext = s->dil[i] * (k - 1) + 1, o, tot;
    switch (s->auto_pad) {
    case AP_SAME_UPPER: case AP_SAME_LOWER:
        o = (d + s->strides[i] - 1) / s->strides[i];
        tot = (o - 1) * s->strides[i] + ext - d;
        if (tot < 0) tot = 0;
        *pb = s->auto_pad == AP_SAME_UPPER ? tot / 2 : tot - tot / 2;
        *out = o;
        return;
    case AP_VALID:
        *pb = 0;
        *out = d >= ext ? (d - ext) / s->strides[i] + 1 : 0;
        return;
    default:
        *pb = s->pads[i];
        o = d + s->pads[i] + s->pads[i + sp] - ext;
        *out = o >= 0 ? o / s->strides[i] + 1 : 0;
        return;
    }
}

static prt_status cv_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    int32_t sp, i;
    int64_t cin = prt__onnx_known(eb, in[0].d[1]), wc = prt__onnx_known(eb, in[1].d[1]);
    int64_t cout = prt__onnx_known(eb, in[1].d[0]);
    prt_status st;
    if ((st = cv_rank(n, in[0].nb, in[1].nb, err)) != PRT_OK) return st;
    sp = in[0].nb - 2;
    if (cin >= 0 && wc >= 0 && cin != wc * s->group) {
        prt_msg_set(err, "X has %lld channels but W expects %lld x group %lld", (long long)cin, (long long)wc,
                    (long long)s->group);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (cout >= 0 && cout % s->group) {
        prt_msg_set(err, "W's %lld output channels are not a multiple of group %lld", (long long)cout,
                    (long long)s->group);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (nb_in > 2 && in[2].nb != 1 && n->def->types == cv_types) { /* ConvInteger's input 2 is a zero point */
        prt_msg_set(err, "B must be 1-D [M], got rank %d", (int)in[2].nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = in[0].nb;
    out->d[0] = in[0].d[0];
    out->d[1] = in[1].d[0];
    for (i = 0; i < sp; i++) {
        int64_t k = s->nk > 0 ? s->kernel[i] : prt__onnx_known(eb, in[1].d[2 + i]);
        int64_t d = prt__onnx_known(eb, in[0].d[2 + i]), o, pb;
#define K(v) eb->constant(eb, v)
#define OP(o_, a, b) eb->operation(eb, PRT_EXPR_##o_, a, b)
        if (k < 0) {
            prt_msg_set(err, "the kernel extent of spatial axis %d must be known when building", (int)i);
            return PRT_STATUS_UNSUPPORTED;
        }
        if (d >= 0) {
            cv_axis(s, sp, i, d, k, &o, &pb);
            if (o <= 0) {
                prt_msg_set(err, "spatial axis %d: input extent %lld is too small for the kernel (%lld, dilation %lld)",
                            (int)i, (long long)d, (long long)k, (long long)s->dil[i]);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            out->d[2 + i] = K(o);
        } else if (s->auto_pad == AP_SAME_UPPER || s->auto_pad == AP_SAME_LOWER) {
            out->d[2 + i] = OP(CEIL_DIV, in[0].d[2 + i], K(s->strides[i]));
        } else {
            int64_t pads = s->auto_pad == AP_VALID ? 0 : s->pads[i] + s->pads[i + sp];
            const prt_expr *num = OP(SUB, OP(SUM, in[0].d[2 + i], K(pads)), K(s->dil[i] * (k - 1) + 1));
            out->d[2 + i] = OP(SUM, OP(FLOOR_DIV, num, K(s->strides[i])), K(1));
        }
#undef K
#undef OP
    }
    return PRT_OK;
}

typedef prt__conv_geo cgeo;

static prt_status cv_geo(const prt__onnx_node *n, const prt_tensor_desc *in, const prt_tensor_desc *out, cgeo *g,
                         prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    const prt_dims *x = &in[0].dims, *w = &in[1].dims;
    int32_t sp = x->nb - 2;
    int64_t pb, o;
    prt_status st;
    if ((st = cv_rank(n, x->nb, w->nb, err)) != PRT_OK) return st;
    memset(g, 0, sizeof *g);
    g->n = x->d[0];
    g->cin = x->d[1];
    g->h = sp == 2 ? x->d[2] : 1;
    g->w = x->d[sp + 1];
    g->cout = w->d[0];
    g->kh = sp == 2 ? w->d[2] : 1;
    g->kw = w->d[sp + 1];
    g->g = s->group;
    if (g->cin != w->d[1] * g->g || g->cout % g->g) {
        prt_msg_set(err, "X [.., %lld, ..] and W [%lld, %lld, ..] do not fit group %lld", (long long)g->cin,
                    (long long)g->cout, (long long)w->d[1], (long long)g->g);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (s->nk > 0 && (s->kernel[0] != (sp == 2 ? g->kh : g->kw) || (sp == 2 && s->kernel[1] != g->kw))) {
        prt_msg_set(err, "kernel_shape disagrees with W's spatial extents");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    g->cg = g->cin / g->g;
    g->coutg = g->cout / g->g;
    g->kd = g->cg * g->kh * g->kw;
    g->sh = sp == 2 ? s->strides[0] : 1;
    g->sw = s->strides[sp - 1];
    g->dh = sp == 2 ? s->dil[0] : 1;
    g->dw = s->dil[sp - 1];
    if (sp == 2) {
        cv_axis(s, sp, 0, g->h, g->kh, &o, &pb);
        g->oh = o;
        g->ph = pb;
    } else {
        g->oh = 1;
    }
    cv_axis(s, sp, sp - 1, g->w, g->kw, &o, &pb);
    g->ow = o;
    g->pw = pb;
    if (g->oh != (sp == 2 ? out[0].dims.d[2] : 1) || g->ow != out[0].dims.d[sp + 1]) {
        prt_msg_set(err, "internal error: output extents disagree with the shape inference");
        return PRT_STATUS_INTERNAL;
    }
    g->direct_1x1 = g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && g->ph == 0 && g->pw == 0;
    /* the direct kernel: depthwise, or few output channels per group (the first layers of small networks)
     * with a spatial kernel, where the GEMM's 16-row blocks would be mostly padding */
    g->direct = g->kh <= PRT__CONV_DW_MAXKH && (g->cg == 1 || (g->coutg <= 8 && g->kh * g->kw >= 4));
    return PRT_OK;
}

static size_t cv_workspace(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out)
{
    cgeo g;
    char buf[128];
    prt_msg m = {buf, sizeof buf};
    (void)nb_in;
    if (cv_geo(n, in, out, &g, &m) != PRT_OK) return 0;
    /* a direct-kernel shape with several input channels per group may take the blocked run's pixel tiles
     * where the plan is loaded (cv_direct): room for those */
    return g.direct && g.cg == 1 ? prt__conv_dw_workspace(&g) : prt__conv_blk_workspace(&g);
}

/* The direct kernel, or the blocked run: a direct-kernel shape with several input channels per group runs
 * the blocked run's pixel tiles where they apply (AVX-512, stride 1 or 2: they measured faster, e.g. the
 * classifier's first layer, 3 -> 8 channels at stride 2). */
static int cv_direct(const cgeo *g)
{
    return g->direct && (g->cg == 1 || !prt__conv_k1_applies(g));
}

typedef prt_status (*cv_geo_fn)(const prt__onnx_node *n, const prt_tensor_desc *in, const prt_tensor_desc *out,
                                cgeo *g, prt_msg *err);

/* f32 only, the geometry, and B (NULL when absent) holding one value per output channel. */
static prt_status cv_prepare(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, const void *const *x, cv_geo_fn geo, cgeo *g,
                             const float **b, prt_msg *err)
{
    prt_status st;
    *b = nb_in > 2 && prt_dims_volume(&in[2].dims) > 0 ? x[2] : NULL;
    if (in[0].dtype != PRT_DTYPE_F32) {
        prt_msg_set(err, "only f32 is implemented, got %s", prt_dtype_name(in[0].dtype));
        return PRT_STATUS_UNSUPPORTED;
    }
    if ((st = geo(n, in, out, g, err)) != PRT_OK) return st;
    if (*b && prt_dims_volume(&in[2].dims) != g->cout) {
        prt_msg_set(err, "B has %lld values for %lld output channels", (long long)prt_dims_volume(&in[2].dims),
                    (long long)g->cout);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status cv_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    cgeo g;
    const float *b;
    prt_status st;
    if ((st = cv_prepare(n, in, nb_in, out, x, cv_geo, &g, &b, err)) != PRT_OK) return st;
    if (g.n * g.cout * g.oh * g.ow <= 0) return PRT_OK;
    if (cv_direct(&g)) prt__conv_dw_run(&g, x[0], x[1], b, y[0], ws, NULL, ex);
    else prt__conv_blk_run(&g, x[0], x[1], b, y[0], ws, NULL, ex);
    return PRT_OK;
}

/* ---- ConvTranspose ----------------------------------------------------------------- */

/* Output extent and begin pad of spatial axis i (input extent d, kernel k). */
static void ct_axis(const cstate *s, int32_t sp, int32_t i, int64_t d, int64_t k, int64_t *out, int64_t *pb)
{
    int64_t full = s->strides[i] * (d - 1) + s->out_pad[i] + (k - 1) * s->dil[i] + 1, tot;
    if ((s->auto_pad == AP_SAME_UPPER || s->auto_pad == AP_SAME_LOWER) && s->npads < 0) {
        *out = s->nout_shape > 0 ? s->out_shape[i] : d * s->strides[i];
        tot = full - *out;
        *pb = s->auto_pad == AP_SAME_UPPER ? tot / 2 : tot - tot / 2;
        return;
    }
    *pb = s->auto_pad == AP_VALID ? 0 : s->pads[i];
    *out = s->nout_shape > 0 ? s->out_shape[i] : full - *pb - (s->auto_pad == AP_VALID ? 0 : s->pads[i + sp]);
}

static prt_status ct_check(const prt__onnx_node *n, int32_t rx, int32_t rw, prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    int32_t sp = rx - 2;
    prt_status st = cv_rank(n, rx, rw, err);
    if (st != PRT_OK) return st;
    if ((s->nout_pad >= 0 && s->nout_pad != sp) || (s->nout_shape >= 0 && s->nout_shape != sp)) {
        prt_msg_set(err, "output_padding and output_shape need %d values for a %d-D convolution", (int)sp, (int)sp);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status ct_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    int64_t cin = prt__onnx_known(eb, in[0].d[1]), wc = prt__onnx_known(eb, in[1].d[0]);
    int32_t sp, i;
    prt_status st;
    (void)nb_in;
    if ((st = ct_check(n, in[0].nb, in[1].nb, err)) != PRT_OK) return st;
    sp = in[0].nb - 2;
    if (cin >= 0 && wc >= 0 && cin != wc) {
        prt_msg_set(err, "X has %lld channels but W is made for %lld", (long long)cin, (long long)wc);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = in[0].nb;
    out->d[0] = in[0].d[0];
    out->d[1] = eb->operation(eb, PRT_EXPR_PROD, in[1].d[1], eb->constant(eb, s->group));
    for (i = 0; i < sp; i++) {
        int64_t k = s->nk > 0 ? s->kernel[i] : prt__onnx_known(eb, in[1].d[2 + i]);
        int64_t d = prt__onnx_known(eb, in[0].d[2 + i]), o, pb;
        if (k < 0) {
            prt_msg_set(err, "the kernel extent of spatial axis %d must be known when building", (int)i);
            return PRT_STATUS_UNSUPPORTED;
        }
        if (d < 0) { /* a dynamic extent: the same rule as ct_axis, as an expression */
            const prt_expr *x = in[0].d[2 + i];
            if (s->nout_shape > 0) {
                out->d[2 + i] = eb->constant(eb, s->out_shape[i]);
            } else if ((s->auto_pad == AP_SAME_UPPER || s->auto_pad == AP_SAME_LOWER) && s->npads < 0) {
                out->d[2 + i] = eb->operation(eb, PRT_EXPR_PROD, x, eb->constant(eb, s->strides[i]));
            } else {
                int64_t pads = s->auto_pad == AP_VALID ? 0 : s->pads[i] + s->pads[i + sp];
                int64_t c = s->out_pad[i] + (k - 1) * s->dil[i] + 1 - s->strides[i] - pads;
                out->d[2 + i] = eb->operation(eb, PRT_EXPR_SUM,
                                              eb->operation(eb, PRT_EXPR_PROD, x, eb->constant(eb, s->strides[i])),
                                              eb->constant(eb, c));
            }
            continue;
        }
        ct_axis(s, sp, i, d, k, &o, &pb);
        if (o <= 0) {
            prt_msg_set(err, "spatial axis %d: the output extent would be %lld", (int)i, (long long)o);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out->d[2 + i] = eb->constant(eb, o);
    }
    return PRT_OK;
}

static prt_status ct_geo(const prt__onnx_node *n, const prt_tensor_desc *in, const prt_tensor_desc *out, cgeo *g,
                         prt_msg *err)
{
    const cstate *s = PRT__ONNX_STATE(n, cstate);
    const prt_dims *x = &in[0].dims, *w = &in[1].dims;
    int32_t sp = x->nb - 2;
    int64_t o;
    prt_status st;
    if ((st = ct_check(n, x->nb, w->nb, err)) != PRT_OK) return st;
    memset(g, 0, sizeof *g);
    g->n = x->d[0];
    g->cin = x->d[1];
    g->h = sp == 2 ? x->d[2] : 1;
    g->w = x->d[sp + 1];
    g->g = s->group;
    g->coutg = w->d[1];
    g->cout = g->coutg * g->g;
    g->kh = sp == 2 ? w->d[2] : 1;
    g->kw = w->d[sp + 1];
    if (w->d[0] != g->cin || g->cin % g->g) {
        prt_msg_set(err, "X has %lld channels; W [%lld, ..] and group %lld do not fit", (long long)g->cin,
                    (long long)w->d[0], (long long)g->g);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    g->cg = g->cin / g->g;
    g->kd = g->coutg * g->kh * g->kw;
    g->sh = sp == 2 ? s->strides[0] : 1;
    g->sw = s->strides[sp - 1];
    g->dh = sp == 2 ? s->dil[0] : 1;
    g->dw = s->dil[sp - 1];
    g->oh = 1;
    if (sp == 2) ct_axis(s, sp, 0, g->h, g->kh, &g->oh, &g->ph);
    ct_axis(s, sp, sp - 1, g->w, g->kw, &o, &g->pw);
    g->ow = o;
    if (g->oh != (sp == 2 ? out[0].dims.d[2] : 1) || g->ow != out[0].dims.d[sp + 1]) {
        prt_msg_set(err, "internal error: output extents disagree with the shape inference");
        return PRT_STATUS_INTERNAL;
    }
    return PRT_OK;
}

static size_t ct_workspace(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out)
{
    cgeo g;
    char buf[128];
    prt_msg m = {buf, sizeof buf};
    (void)nb_in;
    if (ct_geo(n, in, out, &g, &m) != PRT_OK) return 0;
    if (prt__conv_tr_applies(&g)) return prt__conv_tr_workspace(&g);
    return (size_t)g.kd * (size_t)(g.h * g.w) * sizeof(float);
}

/* y[co][oy][ox] += col[(co * kh + i) * kw + j][y * w + x] where it lands inside. */
static void col2im(const cgeo *g, const float *col, float *y)
{
    int64_t r, iy, ix;
    for (r = 0; r < g->kd; r++) {
        const int64_t co = r / (g->kh * g->kw), i = (r / g->kw) % g->kh, j = r % g->kw;
        const float *src = col + r * g->h * g->w;
        float *yc = y + co * g->oh * g->ow;
        for (iy = 0; iy < g->h; iy++) {
            const int64_t oy = iy * g->sh - g->ph + i * g->dh;
            if (oy < 0 || oy >= g->oh) continue;
            for (ix = 0; ix < g->w; ix++) {
                const int64_t ox = ix * g->sw - g->pw + j * g->dw;
                if (ox >= 0 && ox < g->ow) yc[oy * g->ow + ox] += src[iy * g->w + ix];
            }
        }
    }
}

static prt_status ct_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    cgeo g;
    const float *b;
    int64_t img, grp, hw, ohw, c, i;
    float *yy = y[0];
    prt_status st;
    if ((st = cv_prepare(n, in, nb_in, out, x, ct_geo, &g, &b, err)) != PRT_OK) return st;
    hw = g.h * g.w;
    ohw = g.oh * g.ow;
    if (g.n * g.cout * ohw <= 0) return PRT_OK;
    if (prt__conv_tr_applies(&g) && hw > 0) {
        prt__conv_tr_run(&g, x[0], x[1], b, yy, ws, ex);
        return PRT_OK;
    }
    memset(yy, 0, (size_t)(g.n * g.cout * ohw) * sizeof(float));
    for (img = 0; img < g.n; img++)
        for (grp = 0; grp < g.g; grp++) {
            const float *xg = (const float *)x[0] + (img * g.cin + grp * g.cg) * hw;
            const float *wg = (const float *)x[1] + grp * g.cg * g.kd;
            float *yg = yy + (img * g.cout + grp * g.coutg) * ohw;
            /* col [coutg*kh*kw][hw] = W_g^T [kd][cg] . X_g [cg][hw] */
            prt__sgemm(g.kd, hw, g.cg, 1.0f, wg, 1, g.kd, xg, hw, 1, 0.0f, ws, hw, ex);
            col2im(&g, ws, yg);
            if (b)
                for (c = 0; c < g.coutg; c++)
                    for (i = 0; i < ohw; i++) yg[c * ohw + i] += b[grp * g.coutg + c];
        }
    return PRT_OK;
}

/* ---- ConvInteger --------------------------------------------------------------------- */

static prt_status ci_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    int ok = (in[0] == PRT_DTYPE_U8 || in[0] == PRT_DTYPE_I8) && (in[1] == PRT_DTYPE_U8 || in[1] == PRT_DTYPE_I8) &&
             (nb_in < 3 || in[2] == in[0]) && (nb_in < 4 || in[3] == in[1]);
    (void)n;
    if (!ok) {
        prt_msg_set(err, "x and w must be i8 or u8, with zero points of their types");
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = PRT_DTYPE_I32;
    return PRT_OK;
}

static prt_status ci_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    cgeo g;
    int64_t nzw = nb_in > 3 ? prt_dims_volume(&in[3].dims) : 0, img, co, oy, ox, c, i, j, zx;
    prt_status st;
    (void)ws; (void)ex;
    if ((st = cv_geo(n, in, out, &g, err)) != PRT_OK) return st;
    zx = nb_in > 2 && prt_dims_volume(&in[2].dims) > 0 ? prt__onnx_get_i64(x[2], in[2].dtype, 0) : 0;
    if ((nb_in > 2 && prt_dims_volume(&in[2].dims) > 1) || (nzw > 1 && nzw != g.cout)) {
        prt_msg_set(err, "x_zero_point must hold 1 value and w_zero_point 1 or one per output channel");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (img = 0; img < g.n; img++)
        for (co = 0; co < g.cout; co++) {
            const int64_t grp = co / g.coutg, zw = nzw ? prt__onnx_get_i64(x[3], in[3].dtype, nzw == 1 ? 0 : co) : 0;
            for (oy = 0; oy < g.oh; oy++)
                for (ox = 0; ox < g.ow; ox++) {
                    int64_t acc = 0;
                    for (c = 0; c < g.cg; c++)
                        for (i = 0; i < g.kh; i++) {
                            const int64_t iy = oy * g.sh - g.ph + i * g.dh;
                            if (iy < 0 || iy >= g.h) continue;
                            for (j = 0; j < g.kw; j++) {
                                const int64_t ix = ox * g.sw - g.pw + j * g.dw;
                                if (ix < 0 || ix >= g.w) continue;
                                acc += (prt__onnx_get_i64(x[0], in[0].dtype,
                                                          ((img * g.cin + grp * g.cg + c) * g.h + iy) * g.w + ix) - zx) *
                                       (prt__onnx_get_i64(x[1], in[1].dtype, ((co * g.cg + c) * g.kh + i) * g.kw + j) - zw);
                            }
                        }
                    ((int32_t *)y[0])[((img * g.cout + co) * g.oh + oy) * g.ow + ox] = (int32_t)(uint32_t)(uint64_t)acc;
                }
        }
    return PRT_OK;
}

/* ---- plugrt::FusedConv ------------------------------------------------------------ */

/* Conv's state first (the cv_ callbacks read it), then the epilogue program
 * as decoded for PRT__EW_MAX_IN values (the layer's count is checked in
 * fc_types). */
typedef struct fcstate {
    cstate cv;
    prt__ew_instr ins[PRT__EW_MAX_INS];
    float consts[PRT__EW_MAX_CONSTS];
    prt__ew_prog prog;
} fcstate;

#define FC_FIXED_IN 3 /* X, W, B; the program's value 0 is their convolution, values 1.. the inputs after */

/* The program for a layer of nb_in inputs, checked. */
static prt_status fc_prog(const prt__onnx_node *n, int32_t nb_in, prt__ew_prog *out, prt_msg *err)
{
    *out = PRT__ONNX_STATE(n, fcstate)->prog;
    out->nb_in = nb_in - FC_FIXED_IN + 1;
    return prt__ew_check(out, err);
}

static prt_status fc_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    fcstate *s = PRT__ONNX_STATE(n, fcstate);
    char buf[400];
    prt_msg m = {buf, sizeof buf};
    prt_status st = cv_init(n, fc, err);
    if (st != PRT_OK) return st;
    buf[0] = 0;
    st = prt__ew_decode(fc, PRT__EW_MAX_IN, s->ins, s->consts, &s->prog, &m);
    if (st != PRT_OK) prt_msg_set(err, "%s v%s: %s", n->def->name, n->def->version, buf);
    return st;
}

static prt_status fc_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    prt__ew_prog p;
    prt_status st = cv_types(n, in, nb_in, out, err);
    if (st != PRT_OK) return st;
    return fc_prog(n, nb_in, &p, err);
}

/* Conv's output; each input after B must broadcast to it (extents known now are checked now). */
static prt_status fc_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    prt_status st = cv_shapes(n, in, FC_FIXED_IN, out, eb, err);
    int32_t k, i;
    if (st != PRT_OK) return st;
    for (k = FC_FIXED_IN; k < nb_in; k++) {
        if (in[k].nb > out->nb) {
            prt_msg_set(err, "input %d has rank %d; the epilogue's inputs broadcast to the output (rank %d)", (int)k,
                        (int)in[k].nb, (int)out->nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < in[k].nb; i++) {
            const int64_t e = prt__onnx_known(eb, in[k].d[i]), o = prt__onnx_known(eb, out->d[out->nb - in[k].nb + i]);
            if (e >= 0 && e != 1 && o >= 0 && e != o) {
                prt_msg_set(err, "input %d: extent %lld of axis %d does not broadcast to the output's %lld", (int)k,
                            (long long)e, (int)i, (long long)o);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        }
    }
    return PRT_OK;
}

typedef struct fc_epi {
    prt__ew_prog prog;
    prt__ew_bcast bc;
    const float *xs[PRT__EW_MAX_IN]; /* xs[0]: the output itself (the program runs in place) */
    prt__ew_bound bound;             /* the program bound to xs and the output, once per run */
} fc_epi;

static void fc_epilogue(const void *arg, float *y, int64_t begin, int64_t end)
{
    const fc_epi *e = arg;
    (void)y; /* the output the program is bound to */
    prt__ew_exec(&e->bound, begin, end);
}

static prt_status fc_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    prt_dims dims[PRT__EW_MAX_IN];
    prt__conv_epi epi = {fc_epilogue, NULL};
    fc_epi e;
    cgeo g;
    const float *b;
    int32_t k;
    prt_status st;
    if ((st = cv_prepare(n, in, FC_FIXED_IN, out, x, cv_geo, &g, &b, err)) != PRT_OK ||
        (st = fc_prog(n, nb_in, &e.prog, err)) != PRT_OK)
        return st;
    dims[0] = out[0].dims;
    e.xs[0] = y[0];
    for (k = 1; k < e.prog.nb_in; k++) {
        dims[k] = in[FC_FIXED_IN - 1 + k].dims;
        e.xs[k] = x[FC_FIXED_IN - 1 + k];
    }
    if ((st = prt__ew_plan(&e.bc, e.prog.nb_in, dims, &out[0].dims, err)) != PRT_OK) return st;
    if (g.n * g.cout * g.oh * g.ow <= 0) return PRT_OK;
    prt__ew_bind(&e.bound, &e.prog, &e.bc, e.xs, y[0]);
    epi.arg = &e;
    if (cv_direct(&g)) prt__conv_dw_run(&g, x[0], x[1], b, y[0], ws, e.prog.nb_ins ? &epi : NULL, ex);
    else prt__conv_blk_run(&g, x[0], x[1], b, y[0], ws, e.prog.nb_ins ? &epi : NULL, ex);
    return PRT_OK;
}

#define CONV_FIELDS                                                                                      \
    PRT__ONNX_STR("auto_pad", "NOTSET", "NOTSET (use pads), SAME_UPPER, SAME_LOWER or VALID"),               \
    PRT__ONNX_OPT("dilations", PRT_FIELD_INT64, "per spatial axis; absent: 1"),                               \
    PRT__ONNX_I64("group", 1, "input and output channels split into this many groups"),                     \
    PRT__ONNX_OPT("kernel_shape", PRT_FIELD_INT64, "per spatial axis; absent: W's"),                          \
    PRT__ONNX_OPT("pads", PRT_FIELD_INT64, "begins then ends per spatial axis; absent: 0"),                   \
    PRT__ONNX_OPT("strides", PRT_FIELD_INT64, "per spatial axis; absent: 1")
static const prt_field_schema s_conv[] = {
    CONV_FIELDS,
    PRT__ONNX_OPT("output_padding", PRT_FIELD_INT64, "ConvTranspose: added at the end of each axis"),
    PRT__ONNX_OPT("output_shape", PRT_FIELD_INT64, "ConvTranspose: the spatial output extents"),
};
static const prt_field_schema s_fused_conv[] = {
    CONV_FIELDS,
    PRT__ONNX_REQ_LIST("program", PRT_FIELD_INT64,
                       "the epilogue, 4 entries per instruction (opcode, a, b, p; ew_prog.h): value 0 is the "
                       "convolution with its bias, values 1.. the inputs after B"),
    PRT__ONNX_OPT("consts", PRT_FIELD_FLOAT32, "the epilogue's scalar constants: operand -1 - k is consts[k]"),
};

static const prt__onnx_def conv_defs[] = {
    {.name = "Conv", .version = "1", .min_in = 2, .max_in = 3, .nb_out = 1, .in_mask = PRT__ONNX_T(PRT_DTYPE_F32),
     .schema = s_conv, .nb_fields = PRT__ONNX_NFIELDS(s_conv) - 2, .state_size = sizeof(cstate),
     .init = cv_init, .types = cv_types, .shapes = cv_shapes, .run = cv_run, .workspace = cv_workspace,
     .doc = "ONNX Conv (1-D, 2-D), fp32"},
    {.name = "ConvTranspose", .version = "1", .min_in = 2, .max_in = 3, .nb_out = 1,
     .in_mask = PRT__ONNX_T(PRT_DTYPE_F32), .schema = s_conv, .nb_fields = PRT__ONNX_NFIELDS(s_conv),
     .state_size = sizeof(cstate), .init = cv_init, .types = cv_types, .shapes = ct_shapes, .run = ct_run,
     .workspace = ct_workspace, .doc = "ONNX ConvTranspose (1-D, 2-D), fp32"},
    {.name = "ConvInteger", .version = "10", .min_in = 2, .max_in = 4, .nb_out = 1,
     .in_mask = PRT__ONNX_T(PRT_DTYPE_U8) | PRT__ONNX_T(PRT_DTYPE_I8), .schema = s_conv,
     .nb_fields = PRT__ONNX_NFIELDS(s_conv) - 2, .state_size = sizeof(cstate), .init = cv_init, .types = ci_types,
     .shapes = cv_shapes, .run = ci_run, .doc = "ONNX ConvInteger (1-D, 2-D), exact int32"},
    {.name = "FusedConv", .version = "1", .ns = "plugrt", .min_in = FC_FIXED_IN,
     .max_in = FC_FIXED_IN + PRT__EW_MAX_IN - 1, .nb_out = 1, .in_mask = PRT__ONNX_T(PRT_DTYPE_F32),
     .schema = s_fused_conv, .nb_fields = PRT__ONNX_NFIELDS(s_fused_conv), .state_size = sizeof(fcstate),
     .init = fc_init, .types = fc_types, .shapes = fc_shapes, .run = fc_run, .workspace = cv_workspace,
     .doc = "plugrt FusedConv: Conv (X, W, B) followed by an fp32 elementwise epilogue (\"program\", \"consts\") "
            "over the output and up to 7 more broadcast inputs, applied to each block while in cache"},
};
PRT__ONNX_REGISTER_TABLE(conv_defs)
