/*
 * onnx/compute/resize.c - Resize (10, 11, 13, 18, 19) and Upsample (7, 9):
 * nearest (four rounding modes), linear and cubic along every axis, with the
 * coordinate transformation modes of ONNX. Per axis a table of up to four
 * (input index, weight) taps per output coordinate; every output element
 * sums the product of its axes' taps. Every float dtype, in double.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum rmode { RM_NEAREST, RM_LINEAR, RM_CUBIC } rmode;
typedef enum rcoord { RC_HALF_PIXEL, RC_HALF_PIXEL_SYM, RC_PYTORCH_HALF, RC_ALIGN_CORNERS, RC_ASYMMETRIC,
                      RC_TF_CROP } rcoord;
typedef enum rnear { RN_PREFER_FLOOR, RN_PREFER_CEIL, RN_FLOOR, RN_CEIL } rnear;

typedef struct rrow {
    const char *scales_field, *sizes_field, *roi_field; /* interim fields; NULL: absent in this version */
    int upsample;
} rrow;

typedef struct rstate {
    double scales[PRT_MAX_DIMS], roi[2 * PRT_MAX_DIMS];
    int64_t sizes[PRT_MAX_DIMS], axes[PRT_MAX_DIMS];
    int64_t nscales, nsizes, nroi, naxes;
    rmode mode;
    rcoord coord;
    rnear nearest;
    double cubic_a, extrapolation;
    int32_t exclude_outside;
    int32_t aspect; /* keep_aspect_ratio_policy: 0 stretch, 1 not_larger, 2 not_smaller */
} rstate;

static prt_status floats(const prt__onnx_node *n, const prt_fields *fc, const char *name, double *out, int64_t cap,
                         int64_t *count, prt_msg *err)
{
    const prt_field *f = name ? prt_fields_find(fc, name) : NULL;
    int64_t i;
    *count = -1;
    if (!f || f->count == 0) return PRT_OK;
    if (f->count > cap) {
        prt_msg_set(err, "%s v%s: field \"%s\" has %lld values, at most %lld", n->def->name, n->def->version, name,
                    (long long)f->count, (long long)cap);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < f->count; i++) prt_field_get_f64(f, i, &out[i]);
    *count = f->count;
    return PRT_OK;
}

static prt_status rs_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                                         "asymmetric", "tf_crop_and_resize"};
    static const char *const nears[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const rrow *r = n->def->row;
    rstate *s = PRT__ONNX_STATE(n, rstate);
    prt_status st;
    int m, c, k;
    int64_t i;
    if ((m = prt__onnx_str_enum(n, fc, "mode", modes, 3, RM_NEAREST, err)) < 0 ||
        (c = prt__onnx_str_enum(n, fc, "coordinate_transformation_mode", coords, 6,
                                r->upsample || !strcmp(n->def->version, "10") ? RC_ASYMMETRIC : RC_HALF_PIXEL, err)) < 0 ||
        (k = prt__onnx_str_enum(n, fc, "nearest_mode", nears, 4, RN_PREFER_FLOOR, err)) < 0)
        return PRT_STATUS_INVALID_FIELD;
    /* Resize 10 and Upsample spell linear "linear" and also "bilinear" (Upsample 7) */
    if (m < 0) return PRT_STATUS_INVALID_FIELD;
    s->mode = (rmode)m;
    s->coord = (rcoord)c;
    s->nearest = (rnear)k;
    if ((r->upsample || !strcmp(n->def->version, "10")) && s->mode == RM_NEAREST) s->nearest = RN_FLOOR;
    s->cubic_a = prt_fields_f64(fc, "cubic_coeff_a", 0, -0.75);
    s->extrapolation = prt_fields_f64(fc, "extrapolation_value", 0, 0.0);
    s->exclude_outside = prt_fields_i64(fc, "exclude_outside", 0, 0) != 0;
    if (prt_fields_i64(fc, "antialias", 0, 0)) {
        prt_msg_set(err, "%s v%s: antialias=1 is not supported", n->def->name, n->def->version);
        return PRT_STATUS_UNSUPPORTED;
    }
    {
        static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
        int pol = prt__onnx_str_enum(n, fc, "keep_aspect_ratio_policy", policies, 3, 0, err);
        if (pol < 0) return PRT_STATUS_INVALID_FIELD;
        s->aspect = pol;
    }
    if ((st = floats(n, fc, r->upsample && !r->scales_field ? "scales" : r->scales_field, s->scales, PRT_MAX_DIMS,
                     &s->nscales, err)) != PRT_OK ||
        (st = floats(n, fc, r->roi_field, s->roi, 2 * PRT_MAX_DIMS, &s->nroi, err)) != PRT_OK ||
        (st = prt__onnx_field_ints(n, fc, r->sizes_field ? r->sizes_field : "", s->sizes, PRT_MAX_DIMS, &s->nsizes,
                                   err)) != PRT_OK ||
        (st = prt__onnx_field_ints(n, fc, "axes", s->axes, PRT_MAX_DIMS, &s->naxes, err)) != PRT_OK)
        return st;
    if (s->nscales < 0 && s->nsizes < 0) {
        prt_msg_set(err, "%s v%s: give scales or sizes as constants (fields \"%s\"%s%s%s)", n->def->name,
                    n->def->version, r->scales_field ? r->scales_field : "scales", r->sizes_field ? " or \"" : "",
                    r->sizes_field ? r->sizes_field : "", r->sizes_field ? "\"" : "");
        return PRT_STATUS_UNSUPPORTED;
    }
    if (s->nscales >= 0 && s->nsizes >= 0) {
        prt_msg_set(err, "%s v%s: give scales or sizes, not both", n->def->name, n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < s->nscales; i++)
        if (!(s->scales[i] > 0)) {
            prt_msg_set(err, "%s v%s: scales[%lld] is %g; scales are > 0", n->def->name, n->def->version, (long long)i,
                        s->scales[i]);
            return PRT_STATUS_INVALID_FIELD;
        }
    return PRT_OK;
}

static prt_status rs_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    (void)n;
    if (nb_in > 1) {
        prt_msg_set(err, "roi, scales and sizes must be constants (fields \"input:k\"); run-time values are not "
                    "supported");
        return PRT_STATUS_UNSUPPORTED;
    }
    out[0] = in[0];
    return PRT_OK;
}

/* Scale and output extent of every axis of a rank-`rank` input with extents d (-1: unknown). */
static prt_status rs_plan(const prt__onnx_node *n, int32_t rank, const int64_t *d, double *scale, int64_t *out,
                          prt_msg *err)
{
    const rstate *s = PRT__ONNX_STATE(n, rstate);
    int64_t na = s->naxes >= 0 ? s->naxes : rank, cnt = s->nscales >= 0 ? s->nscales : s->nsizes;
    int32_t i, a;
    prt_status st;
    if (cnt != na) {
        prt_msg_set(err, "%s has %lld values for %lld axes", s->nscales >= 0 ? "scales" : "sizes", (long long)cnt,
                    (long long)na);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 0; i < rank; i++) {
        scale[i] = 1;
        out[i] = d[i];
    }
    if (s->aspect && s->nsizes >= 0) { /* one scale for every axis: the smallest or largest size / extent */
        double k = 0;
        for (i = 0; i < na; i++) {
            double r;
            a = i;
            if (s->naxes >= 0 && (st = prt__onnx_axis(n, "axis", s->axes[i], rank, 0, &a, err)) != PRT_OK) return st;
            if (d[a] <= 0) {
                prt_msg_set(err, "keep_aspect_ratio_policy %s needs the extents of the resized axes known and > 0; "
                            "axis %d is %lld", s->aspect == 1 ? "not_larger" : "not_smaller", (int)a, (long long)d[a]);
                return PRT_STATUS_UNSUPPORTED;
            }
            r = (double)s->sizes[i] / (double)d[a];
            if (i == 0 || (s->aspect == 1 ? r < k : r > k)) k = r;
        }
        for (i = 0; i < na; i++) {
            a = i;
            if (s->naxes >= 0) prt__onnx_axis(n, "axis", s->axes[i], rank, 0, &a, err);
            scale[a] = k;
            out[a] = (int64_t)(k * (double)d[a] + 0.5); /* rounded half up */
        }
        return PRT_OK;
    }
    for (i = 0; i < na; i++) {
        a = i;
        if (s->naxes >= 0 && (st = prt__onnx_axis(n, "axis", s->axes[i], rank, 0, &a, err)) != PRT_OK) return st;
        if (s->nsizes >= 0) {
            out[a] = s->sizes[i];
            scale[a] = d[a] > 0 ? (double)s->sizes[i] / (double)d[a] : 1;
        } else {
            scale[a] = s->scales[i];
            out[a] = d[a] < 0 ? -1 : (int64_t)floor((double)d[a] * s->scales[i] + 1e-9);
        }
    }
    return PRT_OK;
}

static prt_status rs_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const rstate *s = PRT__ONNX_STATE(n, rstate);
    int64_t d[PRT_MAX_DIMS], o[PRT_MAX_DIMS];
    double sc[PRT_MAX_DIMS];
    int32_t i;
    prt_status st;
    (void)nb_in;
    for (i = 0; i < in[0].nb; i++) d[i] = prt__onnx_known(eb, in[0].d[i]);
    if ((st = rs_plan(n, in[0].nb, d, sc, o, err)) != PRT_OK) return st;
    out[0] = in[0];
    for (i = 0; i < in[0].nb; i++) {
        if (o[i] >= 0 && (d[i] < 0 || o[i] != d[i] || sc[i] != 1)) {
            out->d[i] = eb->constant(eb, o[i]);
        } else if (o[i] < 0) {
            if (s->nscales >= 0 && sc[i] == floor(sc[i]) && sc[i] < 1e9) {
                out->d[i] = eb->operation(eb, PRT_EXPR_PROD, in[0].d[i], eb->constant(eb, (int64_t)sc[i]));
            } else if (sc[i] != 1) {
                prt_msg_set(err, "axis %d: a non-integer scale needs the extent known when building", (int)i);
                return PRT_STATUS_UNSUPPORTED;
            }
        }
    }
    return PRT_OK;
}

/* Taps of output coordinate o on an axis: up to 4 (index, weight); count; or -1 when outside (extrapolate). */
static int rs_taps(const rstate *s, const double *roi, int64_t o, int64_t in_len, int64_t out_len, double scale,
                   int64_t *idx, double *w)
{
    double x, t, len_f = (double)in_len * scale; /* the resized length before flooring */
    int64_t i0, k;
    int cnt = 0;
    (void)out_len;
    switch (s->coord) {
    case RC_HALF_PIXEL: x = (o + 0.5) / scale - 0.5; break;
    case RC_HALF_PIXEL_SYM: {
        double adj = floor(len_f + 1e-9) / len_f, center = (double)in_len / 2;
        x = center * (1 - adj) + (o + 0.5) / scale - 0.5;
        break;
    }
    case RC_PYTORCH_HALF: x = len_f > 1 ? (o + 0.5) / scale - 0.5 : 0; break;
    case RC_ALIGN_CORNERS: x = len_f > 1 ? (double)o * (double)(in_len - 1) / (len_f - 1) : 0; break;
    case RC_TF_CROP: {
        double st = roi[0], en = roi[1];
        x = len_f > 1 ? st * (in_len - 1) + o * (en - st) * (in_len - 1) / (len_f - 1) : 0.5 * (st + en) * (in_len - 1);
        if (x < 0 || x > in_len - 1) return -1;
        break;
    }
    default: x = o / scale; break;
    }
    if (s->mode == RM_NEAREST) {
        double f = floor(x), fr = x - f;
        switch (s->nearest) {
        case RN_FLOOR: i0 = (int64_t)f; break;
        case RN_CEIL: i0 = (int64_t)ceil(x); break;
        case RN_PREFER_CEIL: i0 = (int64_t)(fr >= 0.5 ? f + 1 : f); break;
        default: i0 = (int64_t)(fr > 0.5 ? f + 1 : f); break;
        }
        idx[0] = i0 < 0 ? 0 : i0 >= in_len ? in_len - 1 : i0;
        w[0] = 1;
        return 1;
    }
    if (s->mode == RM_LINEAR) {
        if (x < 0) x = 0;
        if (x > in_len - 1) x = (double)(in_len - 1);
        i0 = (int64_t)floor(x);
        t = x - (double)i0;
        idx[0] = i0;
        w[0] = 1 - t;
        idx[1] = i0 + 1 < in_len ? i0 + 1 : in_len - 1;
        w[1] = t;
        return 2;
    }
    /* cubic */
    {
        double a = s->cubic_a, sum = 0;
        i0 = (int64_t)floor(x);
        t = x - (double)i0;
        for (k = -1; k <= 2; k++) {
            double dd = fabs(t - (double)k), c;
            int64_t j = i0 + k;
            if (dd <= 1) c = ((a + 2) * dd - (a + 3)) * dd * dd + 1;
            else if (dd < 2) c = ((a * dd - 5 * a) * dd + 8 * a) * dd - 4 * a;
            else c = 0;
            if (j < 0 || j >= in_len) {
                if (s->exclude_outside) c = 0;
                j = j < 0 ? 0 : in_len - 1;
            }
            idx[cnt] = j;
            w[cnt++] = c;
            sum += c;
        }
        if (s->exclude_outside && sum != 0)
            for (k = 0; k < cnt; k++) w[k] /= sum;
        return cnt;
    }
}

typedef struct rjob {
    const rstate *s;
    const void *x;
    void *y;
    prt_dtype t;
    int32_t rank;
    int64_t id[PRT_MAX_DIMS], od[PRT_MAX_DIMS], is[PRT_MAX_DIMS];
    double scale[PRT_MAX_DIMS];
    double roi[PRT_MAX_DIMS][2]; /* tf_crop_and_resize start, end per data axis */
} rjob;

static void rs_range(void *arg, int64_t begin, int64_t end)
{
    const rjob *j = arg;
    int64_t o;
    for (o = begin; o < end; o++) {
        int64_t idx[PRT_MAX_DIMS][4], rem = o, pos[PRT_MAX_DIMS] = {0};
        double w[PRT_MAX_DIMS][4], acc = 0;
        int cnt[PRT_MAX_DIMS], outside = 0;
        int32_t i;
        for (i = j->rank - 1; i >= 0; i--) {
            int64_t c = rem % j->od[i];
            rem /= j->od[i];
            if (j->id[i] == j->od[i] && j->scale[i] == 1 && j->s->coord != RC_TF_CROP) {
                idx[i][0] = c;
                w[i][0] = 1;
                cnt[i] = 1;
            } else {
                cnt[i] = rs_taps(j->s, j->roi[i], c, j->id[i], j->od[i], j->scale[i], idx[i], w[i]);
                if (cnt[i] < 0) outside = 1;
            }
        }
        if (outside) {
            prt__onnx_scatter_f64(j->y, j->t, o, &j->s->extrapolation, 1);
            continue;
        }
        for (;;) { /* odometer over the taps of every axis */
            double wt = 1;
            int64_t off = 0;
            for (i = 0; i < j->rank; i++) {
                wt *= w[i][pos[i]];
                off += idx[i][pos[i]] * j->is[i];
            }
            if (wt != 0) acc += wt * prt__onnx_get_f64(j->x, j->t, off);
            for (i = j->rank - 1; i >= 0; i--) {
                if (++pos[i] < cnt[i]) break;
                pos[i] = 0;
            }
            if (i < 0) break;
        }
        prt__onnx_scatter_f64(j->y, j->t, o, &acc, 1);
    }
}

/* ---- f32 fast path: nearest and linear over the last two axes ---------------------- *
 *
 * When only the last two axes change (every other one keeps its extent with
 * scale 1), the taps of each output row and column are tabled once per run
 * in the workspace with rs_taps itself, and rows are filled from the tables
 * with no per-element coordinate arithmetic. Linear sums the same products
 * in the same order, in double, as rs_range (so the results are the same
 * bits); nearest copies the input value (rs_range's double round trip turns
 * a -0 into +0; here it stays -0), and an output row that reads the same
 * input row as the one above it is a copy of that row. */

typedef struct rs_tap2 {
    int64_t i0, i1, cnt; /* input indices; cnt 1: i0 alone */
    double w0, w1;
} rs_tap2;

typedef struct rs_fast {
    const float *x;
    float *y;
    int64_t ih, iw, oh, ow;
    const rs_tap2 *ty, *tx;
    int linear;
} rs_fast;

static size_t rs_fast_ws(int64_t oh, int64_t ow) { return (size_t)(oh + ow) * sizeof(rs_tap2); }

static size_t rs_workspace(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out)
{
    const prt_dims *d = &out[0].dims;
    (void)n; (void)in; (void)nb_in;
    return d->nb >= 2 ? rs_fast_ws(d->d[d->nb - 2], d->d[d->nb - 1]) : 0;
}

/* Axis a's taps for every output coordinate, as rs_range finds them. */
static void rs_fast_table(const rjob *j, int32_t a, rs_tap2 *t)
{
    int64_t o, idx[4];
    double w[4];
    for (o = 0; o < j->od[a]; o++) {
        if (j->id[a] == j->od[a] && j->scale[a] == 1) {
            idx[0] = o;
            w[0] = 1;
            t[o].cnt = 1;
        } else {
            t[o].cnt = rs_taps(j->s, j->roi[a], o, j->id[a], j->od[a], j->scale[a], idx, w);
        }
        t[o].i0 = idx[0];
        t[o].w0 = w[0];
        t[o].i1 = t[o].cnt > 1 ? idx[1] : idx[0];
        t[o].w1 = t[o].cnt > 1 ? w[1] : 0;
    }
}

static void rs_fast_range(void *arg, int64_t begin, int64_t end)
{
    const rs_fast *f = arg;
    int64_t r, ox;
    for (r = begin; r < end; r++) { /* r = plane * oh + oy */
        const int64_t oy = r % f->oh;
        const rs_tap2 *ty = &f->ty[oy];
        const float *xp = f->x + r / f->oh * f->ih * f->iw, *r0 = xp + ty->i0 * f->iw, *r1 = xp + ty->i1 * f->iw;
        float *yr = f->y + r * f->ow;
        if (!f->linear) {
            if (r > begin && oy > 0 && f->ty[oy - 1].i0 == ty->i0) {
                memcpy(yr, yr - f->ow, (size_t)f->ow * sizeof(float));
                continue;
            }
            for (ox = 0; ox < f->ow; ox++) yr[ox] = r0[f->tx[ox].i0];
            continue;
        }
        for (ox = 0; ox < f->ow; ox++) {
            const rs_tap2 *tx = &f->tx[ox];
            double acc = 0, wt = ty->w0 * tx->w0;
            if (wt != 0) acc += wt * r0[tx->i0];
            if (tx->cnt > 1 && (wt = ty->w0 * tx->w1) != 0) acc += wt * r0[tx->i1];
            if (ty->cnt > 1) {
                if ((wt = ty->w1 * tx->w0) != 0) acc += wt * r1[tx->i0];
                if (tx->cnt > 1 && (wt = ty->w1 * tx->w1) != 0) acc += wt * r1[tx->i1];
            }
            yr[ox] = (float)acc;
        }
    }
}

/* The fast path when it applies (1: done). */
static int rs_fast_run(const rjob *j, void *ws, prt_exec *ex)
{
    rs_fast f;
    const int32_t r = j->rank;
    int64_t rows = 1;
    int32_t i;
    if (j->t != PRT_DTYPE_F32 || r < 2 || j->s->coord == RC_TF_CROP || j->s->mode == RM_CUBIC || !ws) return 0;
    for (i = 0; i < r - 2; i++) {
        if (j->id[i] != j->od[i] || j->scale[i] != 1) return 0;
        rows *= j->od[i];
    }
    f.x = j->x;
    f.y = j->y;
    f.ih = j->id[r - 2];
    f.iw = j->id[r - 1];
    f.oh = j->od[r - 2];
    f.ow = j->od[r - 1];
    f.linear = j->s->mode == RM_LINEAR;
    f.ty = ws;
    f.tx = f.ty + f.oh;
    rs_fast_table(j, r - 2, (rs_tap2 *)f.ty);
    rs_fast_table(j, r - 1, (rs_tap2 *)f.tx);
    rows *= f.oh;
    if (rows * f.ow <= 16384) rs_fast_range(&f, 0, rows);
    else ex->parallel_for(ex, rows, (4096 + f.ow - 1) / f.ow, rs_fast_range, &f);
    return 1;
}

static prt_status rs_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    rjob j;
    int64_t o[PRT_MAX_DIMS], vout = prt_dims_volume(&out[0].dims);
    int32_t i;
    prt_status st;
    (void)nb_in;
    memset(&j, 0, sizeof j);
    j.s = PRT__ONNX_STATE(n, rstate);
    j.x = x[0];
    j.y = y[0];
    j.t = in[0].dtype;
    j.rank = in[0].dims.nb;
    if ((st = rs_plan(n, j.rank, in[0].dims.d, j.scale, o, err)) != PRT_OK) return st;
    for (i = 0; i < j.rank; i++) {
        j.id[i] = in[0].dims.d[i];
        j.od[i] = out[0].dims.d[i];
        if (j.id[i] == 0 && j.od[i] > 0) {
            prt_msg_set(err, "cannot resize axis %d of extent 0 to %lld", (int)i, (long long)j.od[i]);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    prt__onnx_strides(&in[0].dims, j.is);
    /* roi holds starts then ends, for every axis or for the listed axes */
    for (i = 0; i < j.rank; i++) {
        j.roi[i][0] = 0;
        j.roi[i][1] = 1;
    }
    {
        const rstate *s = j.s;
        int64_t na = s->naxes >= 0 ? s->naxes : j.rank, q;
        int32_t a;
        if (s->coord == RC_TF_CROP && s->nroi != 2 * na) {
            prt_msg_set(err, "roi has %lld values, %lld expected (starts and ends)", (long long)s->nroi, (long long)(2 * na));
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (q = 0; q < na && s->nroi == 2 * na; q++) {
            a = (int32_t)q;
            if (s->naxes >= 0 && (st = prt__onnx_axis(n, "axis", s->axes[q], j.rank, 0, &a, err)) != PRT_OK) return st;
            j.roi[a][0] = s->roi[q];
            j.roi[a][1] = s->roi[q + na];
        }
    }
    if (vout <= 0 || rs_fast_run(&j, ws, ex)) return PRT_OK;
    if (vout <= 4096) rs_range(&j, 0, vout);
    else ex->parallel_for(ex, vout, 4096, rs_range, &j);
    return PRT_OK;
}

static const rrow r_resize10 = {"input:1", NULL, NULL, 0}, r_resize11 = {"input:2", "input:3", "input:1", 0};
static const rrow r_upsample7 = {NULL, NULL, NULL, 1}, r_upsample9 = {"input:1", NULL, NULL, 1};

/* Fields in order of the versions that added them; each version takes a prefix. */
static const prt_field_schema s_resize[] = {
    PRT__ONNX_STR("mode", "nearest", "nearest, linear or cubic"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_FLOAT32, "10: scales; 11: roi (interim shape-value form)"),
    PRT__ONNX_OPT("input:2", PRT_FIELD_FLOAT32, "scales (11)"),
    PRT__ONNX_OPT("input:3", PRT_FIELD_INT64, "sizes (11)"),
    PRT__ONNX_STR("coordinate_transformation_mode", "half_pixel",
                  "half_pixel, pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize, "
                  "half_pixel_symmetric (19)"),
    PRT__ONNX_F32("cubic_coeff_a", -0.75f, "cubic kernel parameter"),
    PRT__ONNX_I64("exclude_outside", 0, "1: taps outside the input weigh 0 and the rest renormalize"),
    PRT__ONNX_F32("extrapolation_value", 0.0f, "tf_crop_and_resize outside the input"),
    PRT__ONNX_STR("nearest_mode", "round_prefer_floor", "round_prefer_floor, round_prefer_ceil, floor, ceil"),
    PRT__ONNX_I64("antialias", 0, "must be 0 (18)"),
    PRT__ONNX_OPT("axes", PRT_FIELD_INT64, "the axes scales / sizes apply to (18)"),
    PRT__ONNX_STR("keep_aspect_ratio_policy", "stretch", "stretch, not_larger, not_smaller (18; with sizes)"),
};
static const prt_field_schema s_upsample7[] = {
    PRT__ONNX_STR("mode", "nearest", "nearest or linear"),
    PRT__ONNX_OPT("scales", PRT_FIELD_FLOAT32, "per axis (required)"),
};
static const prt_field_schema s_upsample9[] = {
    PRT__ONNX_STR("mode", "nearest", "nearest or linear"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_FLOAT32, "scales (interim shape-value form)"),
};

#define RS(nm, ver, rw, sch, nf, maxin) \
    {.name = nm, .version = ver, .min_in = 1, .max_in = maxin, .nb_out = 1, .in_mask = PRT__ONNX_FLOATS, \
     .schema = sch, .nb_fields = nf, .state_size = sizeof(rstate), .row = &(rw), .init = rs_init, \
     .types = rs_types, .shapes = rs_shapes, .run = rs_run, .workspace = rs_workspace, .doc = "ONNX " nm}

static const prt__onnx_def resize_defs[] = {
    RS("Resize", "10", r_resize10, s_resize, 2, 2),
    RS("Resize", "11", r_resize11, s_resize, 9, 4),
    RS("Resize", "18", r_resize11, s_resize, 12, 4),
    RS("Upsample", "7", r_upsample7, s_upsample7, 2, 1),
    RS("Upsample", "9", r_upsample9, s_upsample9, 2, 2),
};
PRT__ONNX_REGISTER_TABLE(resize_defs)
