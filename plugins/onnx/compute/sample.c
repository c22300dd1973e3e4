/*
 * onnx/compute/sample.c - sampling at computed coordinates: GridSample
 * (16, 20; 2-D: bilinear / nearest / bicubic, padding zeros / border /
 * reflection, align_corners), RoiAlign (10, 16; avg / max) and AffineGrid
 * (20; 2-D and 3-D). Every float
 * dtype, in double. See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum skind { SK_GRID, SK_ROI } skind;
typedef enum smode { SM_LINEAR, SM_NEAREST, SM_CUBIC } smode;
typedef enum spad { SP_ZEROS, SP_BORDER, SP_REFLECTION } spad;

typedef struct srow {
    skind kind;
    int roi_half_pixel_default; /* RoiAlign 16 */
} srow;

typedef struct sstate {
    smode mode;
    spad pad;
    int32_t align, roi_max, half_pixel;
    int64_t oh, ow, ratio;
    double scale;
} sstate;

static prt_status sm_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const modes[] = {"bilinear", "nearest", "bicubic", "linear", "cubic"};
    static const char *const pads[] = {"zeros", "border", "reflection"};
    static const char *const roi_modes[] = {"avg", "max"};
    static const char *const ctm[] = {"output_half_pixel", "half_pixel"};
    const srow *r = n->def->row;
    sstate *s = PRT__ONNX_STATE(n, sstate);
    int m = prt__onnx_str_enum(n, fc, "mode", r->kind == SK_ROI ? roi_modes : modes, r->kind == SK_ROI ? 2 : 5, 0, err);
    int p = prt__onnx_str_enum(n, fc, "padding_mode", pads, 3, SP_ZEROS, err);
    int c = prt__onnx_str_enum(n, fc, "coordinate_transformation_mode", ctm, 2, r->roi_half_pixel_default, err);
    if (m < 0 || p < 0 || c < 0) return PRT_STATUS_INVALID_FIELD;
    s->mode = m == 3 ? SM_LINEAR : m == 4 ? SM_CUBIC : (smode)m;
    s->roi_max = r->kind == SK_ROI && m == 1;
    s->pad = (spad)p;
    s->half_pixel = c;
    s->align = prt_fields_i64(fc, "align_corners", 0, 0) != 0;
    s->oh = prt_fields_i64(fc, "output_height", 0, 1);
    s->ow = prt_fields_i64(fc, "output_width", 0, 1);
    s->ratio = prt_fields_i64(fc, "sampling_ratio", 0, 0);
    s->scale = prt_fields_f64(fc, "spatial_scale", 0, 1.0);
    if (s->oh < 1 || s->ow < 1 || s->ratio < 0) {
        prt_msg_set(err, "%s v%s: output_height and output_width must be >= 1 and sampling_ratio >= 0", n->def->name,
                    n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status sm_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    const srow *r = n->def->row;
    (void)nb_in;
    if (!prt__onnx_is_float(in[0]) || !prt__onnx_is_float(in[1]) ||
        (r->kind == SK_ROI && in[2] != PRT_DTYPE_I64 && in[2] != PRT_DTYPE_I32)) {
        prt_msg_set(err, "%s", r->kind == SK_ROI ? "X and rois must be float and batch_indices integer"
                                                  : "X and grid must be float");
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status sm_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const srow *r = n->def->row;
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    (void)nb_in;
    if (in[0].nb != 4) {
        prt_msg_set(err, "X must be [N, C, H, W], got rank %d (only 2-D sampling is implemented)", (int)in[0].nb);
        return in[0].nb > 4 ? PRT_STATUS_UNSUPPORTED : PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = 4;
    if (r->kind == SK_GRID) {
        if (in[1].nb != 4 || prt__onnx_known(eb, in[1].d[3]) > 2 || prt__onnx_known(eb, in[1].d[3]) == 1) {
            prt_msg_set(err, "grid must be [N, H_out, W_out, 2], got rank %d", (int)in[1].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out->d[0] = in[0].d[0];
        out->d[1] = in[0].d[1];
        out->d[2] = in[1].d[1];
        out->d[3] = in[1].d[2];
        return PRT_OK;
    }
    if (in[1].nb != 2 || in[2].nb != 1) {
        prt_msg_set(err, "rois must be [num_rois, 4] and batch_indices [num_rois], got ranks %d and %d", (int)in[1].nb,
                    (int)in[2].nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->d[0] = in[1].d[0];
    out->d[1] = in[0].d[1];
    out->d[2] = eb->constant(eb, s->oh);
    out->d[3] = eb->constant(eb, s->ow);
    return PRT_OK;
}

/* Reflect x into [lo, hi]. */
static double reflect(double x, double lo, double hi)
{
    double span = hi - lo, d;
    if (span <= 0) return lo;
    d = fmod(fabs(x - lo), 2 * span);
    return lo + (d <= span ? d : 2 * span - d);
}

typedef struct gctx {
    const sstate *s;
    const void *x;
    prt_dtype t;
    int64_t h, w;
} gctx;

/* Pixel (iy, ix) of plane base, with the padding mode applied to the index. */
static double pixel(const gctx *g, int64_t base, int64_t iy, int64_t ix)
{
    if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) {
        if (g->s->pad == SP_ZEROS) return 0;
        if (g->s->pad == SP_REFLECTION) {
            iy = (int64_t)reflect((double)iy, g->s->align ? 0 : -0.5, g->s->align ? (double)g->h - 1 : g->h - 0.5);
            ix = (int64_t)reflect((double)ix, g->s->align ? 0 : -0.5, g->s->align ? (double)g->w - 1 : g->w - 0.5);
        }
        iy = iy < 0 ? 0 : iy >= g->h ? g->h - 1 : iy;
        ix = ix < 0 ? 0 : ix >= g->w ? g->w - 1 : ix;
    }
    return prt__onnx_get_f64(g->x, g->t, base + iy * g->w + ix);
}

static void cubic_w(double t, double *w)
{
    const double a = -0.75;
    double d[4] = {t + 1, t, 1 - t, 2 - t};
    int k;
    for (k = 0; k < 4; k++) {
        double x = d[k];
        w[k] = x <= 1 ? ((a + 2) * x - (a + 3)) * x * x + 1 : ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    }
}

/* A coordinate outside [lo, hi] (the padded border) is clamped (border mode)
 * or reflected (reflection mode); inside it is kept, and the taps' indices
 * are padded one by one (pixel). */
static double pad_coord(const sstate *s, double v, int64_t d)
{
    double lo = s->align ? 0 : -0.5, hi = s->align ? (double)d - 1 : d - 0.5;
    if (v >= lo && v <= hi) return v;
    if (s->pad == SP_BORDER) return v < 0 ? 0 : v > d - 1 ? (double)(d - 1) : v;
    if (s->pad == SP_REFLECTION) return reflect(v, lo, hi);
    return v;
}

static double grid_one(const gctx *g, int64_t base, double gx, double gy)
{
    const sstate *s = g->s;
    double x = s->align ? (gx + 1) / 2 * (double)(g->w - 1) : ((gx + 1) * (double)g->w - 1) / 2;
    double y = s->align ? (gy + 1) / 2 * (double)(g->h - 1) : ((gy + 1) * (double)g->h - 1) / 2;
    double x0, y0, tx, ty;
    if (s->mode == SM_NEAREST) { /* round half to even, as PyTorch */
        x = nearbyint(x);
        y = nearbyint(y);
    }
    x = pad_coord(s, x, g->w);
    y = pad_coord(s, y, g->h);
    if (s->mode == SM_NEAREST) return pixel(g, base, (int64_t)y, (int64_t)x);
    x0 = floor(x);
    y0 = floor(y);
    tx = x - x0;
    ty = y - y0;
    if (s->mode == SM_LINEAR) {
        int64_t ix = (int64_t)x0, iy = (int64_t)y0;
        return (1 - ty) * ((1 - tx) * pixel(g, base, iy, ix) + tx * pixel(g, base, iy, ix + 1)) +
               ty * ((1 - tx) * pixel(g, base, iy + 1, ix) + tx * pixel(g, base, iy + 1, ix + 1));
    }
    {
        double wx[4], wy[4], acc = 0;
        int a, b;
        cubic_w(tx, wx);
        cubic_w(ty, wy);
        for (a = 0; a < 4; a++)
            for (b = 0; b < 4; b++)
                acc += wy[a] * wx[b] * pixel(g, base, (int64_t)y0 - 1 + a, (int64_t)x0 - 1 + b);
        return acc;
    }
}

/* RoiAlign's bilinear sample: outside [-1, h] x [-1, w] is 0, else clamped;
 * in max mode the largest of the four weighted corners (as onnxruntime and the
 * onnx reference define it). */
static double roi_sample(const gctx *g, int64_t base, double y, double x, int max_mode)
{
    double c[4];
    int64_t y0, x0, y1, x1;
    double ly, lx;
    if (y < -1.0 || y > (double)g->h || x < -1.0 || x > (double)g->w) return 0;
    (void)c;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    y0 = (int64_t)y;
    x0 = (int64_t)x;
    if (y0 >= g->h - 1) y0 = y1 = g->h - 1, y = (double)y0;
    else y1 = y0 + 1;
    if (x0 >= g->w - 1) x0 = x1 = g->w - 1, x = (double)x0;
    else x1 = x0 + 1;
    ly = y - (double)y0;
    lx = x - (double)x0;
    c[0] = (1 - ly) * (1 - lx) * prt__onnx_get_f64(g->x, g->t, base + y0 * g->w + x0);
    c[1] = (1 - ly) * lx * prt__onnx_get_f64(g->x, g->t, base + y0 * g->w + x1);
    c[2] = ly * (1 - lx) * prt__onnx_get_f64(g->x, g->t, base + y1 * g->w + x0);
    c[3] = ly * lx * prt__onnx_get_f64(g->x, g->t, base + y1 * g->w + x1);
    if (max_mode) return fmax(fmax(c[0], c[1]), fmax(c[2], c[3]));
    return c[0] + c[1] + c[2] + c[3];
}

static prt_status sm_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const srow *r = n->def->row;
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    const prt_dims *d = &in[0].dims;
    gctx g = {s, x[0], in[0].dtype, d->d[2], d->d[3]};
    int64_t C = d->d[1], oh = out[0].dims.d[2], ow = out[0].dims.d[3], i, c, py, px;
    (void)nb_in; (void)ws; (void)ex;
    if (r->kind == SK_GRID) {
        const prt_dims *gd = &in[1].dims;
        if (gd->d[0] != d->d[0] || gd->d[3] != 2) {
            prt_msg_set(err, "grid [%lld, .., .., %lld] does not fit X's batch %lld (last extent must be 2)",
                        (long long)gd->d[0], (long long)gd->d[3], (long long)d->d[0]);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < d->d[0]; i++)
            for (py = 0; py < oh; py++)
                for (px = 0; px < ow; px++) {
                    int64_t gi = ((i * oh + py) * ow + px) * 2;
                    double gx = prt__onnx_get_f64(x[1], in[1].dtype, gi), gy = prt__onnx_get_f64(x[1], in[1].dtype, gi + 1);
                    for (c = 0; c < C; c++) {
                        double v = g.h > 0 && g.w > 0 ? grid_one(&g, (i * C + c) * g.h * g.w, gx, gy) : 0;
                        prt__onnx_scatter_f64(y[0], out[0].dtype, ((i * C + c) * oh + py) * ow + px, &v, 1);
                    }
                }
        return PRT_OK;
    }
    {
        int64_t nr = in[1].dims.d[0];
        double off = s->half_pixel ? 0.5 : 0;
        if (in[1].dims.d[1] != 4 || in[2].dims.d[0] != nr) {
            prt_msg_set(err, "rois must be [num_rois, 4] with one batch index each");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < nr; i++) {
            int64_t b = prt__onnx_get_i64(x[2], in[2].dtype, i);
            double x1 = prt__onnx_get_f64(x[1], in[1].dtype, i * 4) * s->scale - off;
            double y1 = prt__onnx_get_f64(x[1], in[1].dtype, i * 4 + 1) * s->scale - off;
            double x2 = prt__onnx_get_f64(x[1], in[1].dtype, i * 4 + 2) * s->scale - off;
            double y2 = prt__onnx_get_f64(x[1], in[1].dtype, i * 4 + 3) * s->scale - off;
            double rw = x2 - x1, rh = y2 - y1, bh, bw;
            int64_t gh, gw;
            if (b < 0 || b >= d->d[0]) {
                prt_msg_set(err, "batch_indices[%lld] = %lld is outside [0, %lld)", (long long)i, (long long)b,
                            (long long)d->d[0]);
                return PRT_STATUS_INVALID_ARGUMENT;
            }
            if (!s->half_pixel) {
                rw = rw > 1 ? rw : 1;
                rh = rh > 1 ? rh : 1;
            }
            bh = rh / (double)oh;
            bw = rw / (double)ow;
            gh = s->ratio > 0 ? s->ratio : (int64_t)ceil(rh / (double)oh);
            gw = s->ratio > 0 ? s->ratio : (int64_t)ceil(rw / (double)ow);
            if (gh < 1) gh = 1;
            if (gw < 1) gw = 1;
            for (c = 0; c < C; c++)
                for (py = 0; py < oh; py++)
                    for (px = 0; px < ow; px++) {
                        double acc = s->roi_max ? -INFINITY : 0, v;
                        int64_t iy, ix;
                        for (iy = 0; iy < gh; iy++)
                            for (ix = 0; ix < gw; ix++) {
                                double yy = y1 + (double)py * bh + ((double)iy + 0.5) * bh / (double)gh;
                                double xx = x1 + (double)px * bw + ((double)ix + 0.5) * bw / (double)gw;
                                v = g.h > 0 && g.w > 0 ? roi_sample(&g, (b * C + c) * g.h * g.w, yy, xx, s->roi_max) : 0;
                                if (s->roi_max) acc = v > acc ? v : acc;
                                else acc += v;
                            }
                        v = s->roi_max ? acc : acc / (double)(gh * gw);
                        prt__onnx_scatter_f64(y[0], out[0].dtype, ((i * C + c) * oh + py) * ow + px, &v, 1);
                    }
        }
        return PRT_OK;
    }
}

static const srow r_grid = {SK_GRID, 0}, r_roi10 = {SK_ROI, 0}, r_roi16 = {SK_ROI, 1};

static const prt_field_schema s_grid[] = {
    PRT__ONNX_I64("align_corners", 0, "1: -1 and 1 are the centers of the corner pixels"),
    PRT__ONNX_STR("mode", "bilinear", "bilinear, nearest, bicubic (20: linear, nearest, cubic)"),
    PRT__ONNX_STR("padding_mode", "zeros", "zeros, border, reflection"),
};
static const prt_field_schema s_grid20[] = {
    PRT__ONNX_I64("align_corners", 0, "1: -1 and 1 are the centers of the corner pixels"),
    PRT__ONNX_STR("mode", "linear", "linear, nearest, cubic"),
    PRT__ONNX_STR("padding_mode", "zeros", "zeros, border, reflection"),
};
static const prt_field_schema s_roi[] = {
    PRT__ONNX_STR("mode", "avg", "avg or max"),
    PRT__ONNX_I64("output_height", 1, "pooled height"),
    PRT__ONNX_I64("output_width", 1, "pooled width"),
    PRT__ONNX_I64("sampling_ratio", 0, "samples per bin edge; 0: ceil(roi extent / output extent)"),
    PRT__ONNX_F32("spatial_scale", 1.0f, "roi coordinates to X's scale"),
    PRT__ONNX_STR("coordinate_transformation_mode", "half_pixel", "half_pixel or output_half_pixel (16)"),
};

/* ---- AffineGrid ------------------------------------------------------------------- */

/* theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D); size [N, C, H, W] or
 * [N, C, D, H, W] as the field "input:1"; the grid [N, (D,) H, W, 2 or 3]
 * holds theta x (x, y[, z], 1) over normalized base coordinates. */
typedef struct astate {
    int64_t size[5];
    int64_t nsize;
    int32_t align;
} astate;

static prt_status ag_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    astate *a = PRT__ONNX_STATE(n, astate);
    prt_status st;
    int64_t i;
    a->align = prt_fields_i64(fc, "align_corners", 0, 0) != 0;
    if ((st = prt__onnx_field_ints(n, fc, "input:1", a->size, 5, &a->nsize, err)) != PRT_OK) return st;
    if (a->nsize != 4 && a->nsize != 5) {
        prt_msg_set(err, "%s v%s: size must be a constant of 4 or 5 values (field \"input:1\"), got %lld",
                    n->def->name, n->def->version, (long long)a->nsize);
        return a->nsize < 0 ? PRT_STATUS_UNSUPPORTED : PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < a->nsize; i++)
        if (a->size[i] < 0 || a->size[i] > ((int64_t)1 << 24)) {
            prt_msg_set(err, "%s v%s: size[%lld] = %lld is out of range (0 to 2^24)", n->def->name, n->def->version,
                        (long long)i, (long long)a->size[i]);
            return PRT_STATUS_INVALID_FIELD;
        }
    return PRT_OK;
}

static prt_status ag_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    (void)n; (void)nb_in;
    if (!prt__onnx_is_float(in[0])) {
        prt_msg_set(err, "theta must be a float type, got %s", prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = in[0];
    return PRT_OK;
}

static prt_status ag_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const astate *a = PRT__ONNX_STATE(n, astate);
    int32_t sd = (int32_t)a->nsize - 2, i; /* spatial dims */
    int64_t r0 = prt__onnx_known(eb, in[0].d[1]), r1 = in[0].nb == 3 ? prt__onnx_known(eb, in[0].d[2]) : -1;
    (void)nb_in;
    if (in[0].nb != 3 || r0 != sd || r1 != sd + 1) {
        prt_msg_set(err, "theta must be [N, %d, %d] for a size of %d values", (int)sd, (int)sd + 1, (int)a->nsize);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = sd + 2;
    out->d[0] = in[0].d[0];
    for (i = 0; i < sd; i++) out->d[1 + i] = eb->constant(eb, a->size[2 + i]);
    out->d[sd + 1] = eb->constant(eb, sd);
    return PRT_OK;
}

/* Normalized base coordinate of index i of an extent e. */
static double ag_base(int64_t i, int64_t e, int align)
{
    if (align) return e > 1 ? -1.0 + 2.0 * (double)i / (double)(e - 1) : 0.0;
    return (2.0 * (double)i + 1.0) / (double)e - 1.0;
}

static prt_status ag_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const astate *a = PRT__ONNX_STATE(n, astate);
    int32_t sd = (int32_t)a->nsize - 2, r, c;
    int64_t N = in[0].dims.d[0], D = sd == 3 ? a->size[2] : 1, H = a->size[sd == 3 ? 3 : 2],
            W = a->size[sd == 3 ? 4 : 3], b, z, h, w, o = 0;
    (void)nb_in; (void)ws; (void)ex;
    if (N != a->size[0]) {
        prt_msg_set(err, "theta has %lld matrices, size says N = %lld", (long long)N, (long long)a->size[0]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (b = 0; b < N; b++)
        for (z = 0; z < D; z++)
            for (h = 0; h < H; h++)
                for (w = 0; w < W; w++) {
                    double p[4] = {ag_base(w, W, a->align), ag_base(h, H, a->align), 0, 1}, v;
                    if (sd == 3) p[2] = ag_base(z, D, a->align);
                    else p[2] = 1;
                    for (r = 0; r < sd; r++, o++) {
                        v = 0;
                        for (c = 0; c <= sd; c++)
                            v += prt__onnx_get_f64(x[0], in[0].dtype, (b * sd + r) * (sd + 1) + c) * p[c];
                        prt__onnx_scatter_f64(y[0], out[0].dtype, o, &v, 1);
                    }
                }
    return PRT_OK;
}

static const prt_field_schema s_affine[] = {
    PRT__ONNX_I64("align_corners", 0, "1: -1 and 1 are the centers of the corner elements"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "size (interim shape-value form)"),
};
static const int affine_row_ = 0;

#define S(nm, ver, rw, sch, nf, nin) PRT__ONNX_DEF(nm, ver, rw, sch, nf, nin, nin, 1, PRT__ONNX_ALL, sstate, sm)

static const prt__onnx_def sample_defs[] = {
    S("GridSample", "16", r_grid, s_grid, 3, 2),
    S("GridSample", "20", r_grid, s_grid20, 3, 2),
    S("RoiAlign", "10", r_roi10, s_roi, 5, 3),
    S("RoiAlign", "16", r_roi16, s_roi, 6, 3),
    PRT__ONNX_DEF("AffineGrid", "20", affine_row_, s_affine, 2, 1, 1, 1, PRT__ONNX_FLOATS, astate, ag),
};
PRT__ONNX_REGISTER_TABLE(sample_defs)
