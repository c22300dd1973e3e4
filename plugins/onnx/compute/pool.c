/*
 * onnx/compute/pool.c - MaxPool (with Indices from version 8),
 * AveragePool, GlobalMaxPool, GlobalAveragePool over 1 to 3 spatial axes
 * (a missing axis is an extent of 1). Every float dtype, accumulated in
 * double. See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum pkind { PL_MAX, PL_AVG, PL_GMAX, PL_GAVG, PL_LP, PL_GLP } pkind;
typedef enum apad { AP_NOTSET, AP_SAME_UPPER, AP_SAME_LOWER, AP_VALID } apad;

typedef struct prow {
    pkind kind;
} prow;

typedef struct pstate {
    int64_t kernel[3], strides[3], dil[3], pads[6];
    int64_t nk, nstrides, ndil, npads;
    apad auto_pad;
    int32_t ceil_mode, count_pad, col_major;
    double p; /* LpPool */
} pstate;

static prt_status pl_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const modes[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    const prow *r = n->def->row;
    pstate *s = PRT__ONNX_STATE(n, pstate);
    prt_status st;
    int64_t i;
    int m = prt__onnx_str_enum(n, fc, "auto_pad", modes, 4, AP_NOTSET, err);
    if (m < 0) return PRT_STATUS_INVALID_FIELD;
    s->auto_pad = (apad)m;
    s->ceil_mode = prt_fields_i64(fc, "ceil_mode", 0, 0) != 0;
    s->count_pad = prt_fields_i64(fc, "count_include_pad", 0, 0) != 0;
    s->col_major = prt_fields_i64(fc, "storage_order", 0, 0) != 0;
    s->p = prt_fields_f64(fc, "p", 0, 2.0);
    if (n->def->nb_out == 2) { /* MaxPool 8+: Indices only when asked for */
        const int64_t no = prt_fields_i64(fc, "num_outputs", 0, 2);
        if (no != 1 && no != 2) {
            prt_msg_set(err, "%s v%s: num_outputs must be 1 (Y) or 2 (Y, Indices), got %lld", n->def->name,
                        n->def->version, (long long)no);
            return PRT_STATUS_INVALID_FIELD;
        }
        n->nb_out = (int32_t)no;
    }
    if ((r->kind == PL_LP || r->kind == PL_GLP) && !(s->p > 0)) {
        prt_msg_set(err, "%s v%s: p must be > 0, got %g", n->def->name, n->def->version, s->p);
        return PRT_STATUS_INVALID_FIELD;
    }
    if ((st = prt__onnx_field_ints(n, fc, "kernel_shape", s->kernel, 3, &s->nk, err)) ||
        (st = prt__onnx_field_ints(n, fc, "strides", s->strides, 3, &s->nstrides, err)) ||
        (st = prt__onnx_field_ints(n, fc, "dilations", s->dil, 3, &s->ndil, err)) ||
        (st = prt__onnx_field_ints(n, fc, "pads", s->pads, 6, &s->npads, err)))
        return st;
    if (r->kind == PL_GMAX || r->kind == PL_GAVG || r->kind == PL_GLP) return PRT_OK;
    if (s->nk < 1) {
        prt_msg_set(err, "%s v%s: kernel_shape is required", n->def->name, n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    if ((s->nstrides >= 0 && s->nstrides != s->nk) || (s->ndil >= 0 && s->ndil != s->nk) ||
        (s->npads >= 0 && s->npads != 2 * s->nk)) {
        prt_msg_set(err, "%s v%s: strides and dilations need %lld values and pads %lld (one per kernel axis)",
                    n->def->name, n->def->version, (long long)s->nk, (long long)(2 * s->nk));
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < s->nk; i++) {
        if (s->nstrides < 0) s->strides[i] = 1;
        if (s->ndil < 0) s->dil[i] = 1;
        if (s->npads < 0) s->pads[i] = s->pads[i + s->nk] = 0;
        if (s->kernel[i] < 1 || s->strides[i] < 1 || s->dil[i] < 1 || s->pads[i] < 0 || s->pads[i + s->nk] < 0) {
            prt_msg_set(err, "%s v%s: kernel, strides and dilations must be >= 1 and pads >= 0 (axis %lld)",
                        n->def->name, n->def->version, (long long)i);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    return PRT_OK;
}

static prt_status pl_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    (void)nb_in; (void)err;
    out[0] = in[0];
    if (n->nb_out > 1) out[1] = PRT_DTYPE_I64;
    return PRT_OK;
}

/* Output extent and begin pad of spatial axis i for input extent d. */
static int64_t pl_axis(const pstate *s, int32_t i, int64_t d, int64_t *pb)
{
    int64_t ext = s->dil[i] * (s->kernel[i] - 1) + 1, o, num, tot;
    switch (s->auto_pad) {
    case AP_SAME_UPPER: case AP_SAME_LOWER:
        o = (d + s->strides[i] - 1) / s->strides[i];
        tot = (o - 1) * s->strides[i] + ext - d;
        if (tot < 0) tot = 0;
        *pb = s->auto_pad == AP_SAME_UPPER ? tot / 2 : tot - tot / 2;
        return o;
    case AP_VALID:
        *pb = 0;
        return d >= ext ? (d - ext) / s->strides[i] + 1 : 0;
    default:
        *pb = s->pads[i];
        num = d + s->pads[i] + s->pads[i + s->nk] - ext;
        if (num < 0) return 0;
        o = (s->ceil_mode ? (num + s->strides[i] - 1) / s->strides[i] : num / s->strides[i]) + 1;
        if (s->ceil_mode && (o - 1) * s->strides[i] >= d + s->pads[i]) o--; /* last window starts in the end pad */
        return o;
    }
}

static const prt_expr *pl_axis_expr(const pstate *s, int32_t i, const prt_expr *x, prt_expr_builder *eb)
{
#define K(v) eb->constant(eb, v)
#define OP(o_, a, b) eb->operation(eb, PRT_EXPR_##o_, a, b)
    int64_t ext = s->dil[i] * (s->kernel[i] - 1) + 1;
    const prt_expr *o, *num;
    switch (s->auto_pad) {
    case AP_SAME_UPPER: case AP_SAME_LOWER: return OP(CEIL_DIV, x, K(s->strides[i]));
    case AP_VALID: return OP(SUM, OP(FLOOR_DIV, OP(SUB, x, K(ext)), K(s->strides[i])), K(1));
    default:
        num = OP(SUB, OP(SUM, x, K(s->pads[i] + s->pads[i + s->nk])), K(ext));
        if (!s->ceil_mode) return OP(SUM, OP(FLOOR_DIV, num, K(s->strides[i])), K(1));
        o = OP(SUM, OP(CEIL_DIV, num, K(s->strides[i])), K(1));
        /* one less when the last window would start in the end pad */
        return OP(SUB, o, OP(SUB, K(1), OP(LESS, OP(PROD, OP(SUB, o, K(1)), K(s->strides[i])),
                                             OP(SUM, x, K(s->pads[i])))));
    }
#undef K
#undef OP
}

static prt_status pl_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const prow *r = n->def->row;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    int32_t i, sp = in[0].nb - 2;
    (void)nb_in;
    if (sp < 1 || sp > 3) {
        prt_msg_set(err, "X must be [N, C, D1 .. Dk] with 1 to 3 spatial axes, got rank %d", (int)in[0].nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out[0] = in[0];
    if (r->kind == PL_GMAX || r->kind == PL_GAVG || r->kind == PL_GLP) {
        for (i = 2; i < in[0].nb; i++) out->d[i] = eb->constant(eb, 1);
        return PRT_OK;
    }
    if (s->nk != sp) {
        prt_msg_set(err, "kernel_shape has %lld values for %d spatial axes", (long long)s->nk, (int)sp);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 0; i < sp; i++) {
        int64_t d = prt__onnx_known(eb, in[0].d[2 + i]), pb, o;
        if (d < 0) { /* a dynamic extent: pl_axis's rule as an expression */
            out->d[2 + i] = pl_axis_expr(s, i, in[0].d[2 + i], eb);
            continue;
        }
        o = pl_axis(s, i, d, &pb);
        if (o <= 0) {
            prt_msg_set(err, "spatial axis %d: extent %lld is too small for the window", (int)i, (long long)d);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out->d[2 + i] = eb->constant(eb, o);
    }
    if (n->nb_out > 1) out[1] = out[0];
    return PRT_OK;
}

typedef struct pjob {
    const prt__onnx_node *n;
    const void *x;
    void *y;
    int64_t *idx;
    prt_dtype t;
    int64_t id[3], od[3], k[3], st[3], dl[3], pb[3], pe[3]; /* padded to 3 axes */
} pjob;

/* Output `o` of plane `plane` (plane = n * C + c), any dtype, every kind:
 * the window walked tap by tap with its bounds checked, in double. */
static void pl_out(const pjob *j, int64_t plane, int64_t o)
{
    const prt__onnx_node *n = j->n;
    const pkind kind = ((const prow *)n->def->row)->kind;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    const int64_t ivol = j->id[0] * j->id[1] * j->id[2], ovol = j->od[0] * j->od[1] * j->od[2];
    int64_t oc[3] = {o / (j->od[1] * j->od[2]), (o / j->od[2]) % j->od[1], o % j->od[2]}, a, b, c;
    double acc = kind == PL_MAX || kind == PL_GMAX ? -INFINITY : 0, cnt = 0;
    int64_t best = -1;
    for (a = 0; a < j->k[0]; a++) {
        int64_t z = oc[0] * j->st[0] - j->pb[0] + a * j->dl[0];
        for (b = 0; b < j->k[1]; b++) {
            int64_t yy = oc[1] * j->st[1] - j->pb[1] + b * j->dl[1];
            for (c = 0; c < j->k[2]; c++) {
                int64_t xx = oc[2] * j->st[2] - j->pb[2] + c * j->dl[2], at;
                int inside = z >= 0 && z < j->id[0] && yy >= 0 && yy < j->id[1] && xx >= 0 && xx < j->id[2];
                double v;
                if (!inside) {
                    if (s->count_pad && z < j->id[0] + j->pe[0] && yy < j->id[1] + j->pe[1] &&
                        xx < j->id[2] + j->pe[2])
                        cnt += 1;
                    continue;
                }
                at = (z * j->id[1] + yy) * j->id[2] + xx;
                v = j->t == PRT_DTYPE_F32 ? (double)((const float *)j->x)[plane * ivol + at]
                                          : prt__onnx_get_f64(j->x, j->t, plane * ivol + at);
                if (kind == PL_MAX || kind == PL_GMAX) {
                    if (best < 0 || v > acc) {
                        acc = v;
                        best = s->col_major ? (xx * j->id[1] + yy) * j->id[0] + z : at;
                    }
                } else if (kind == PL_LP || kind == PL_GLP) {
                    acc += pow(fabs(v), s->p);
                } else {
                    acc += v;
                    cnt += 1;
                }
            }
        }
    }
    if (kind == PL_AVG || kind == PL_GAVG) acc = cnt > 0 ? acc / cnt : 0;
    if (kind == PL_LP || kind == PL_GLP) acc = pow(acc, 1.0 / s->p);
    if (j->t == PRT_DTYPE_F32) ((float *)j->y)[plane * ovol + o] = (float)acc;
    else prt__onnx_scatter_f64(j->y, j->t, plane * ovol + o, &acc, 1);
    if (j->idx) j->idx[plane * ovol + o] = best < 0 ? -1 : plane * ivol + best;
}

static void pl_range(void *arg, int64_t begin, int64_t end)
{
    const pjob *j = arg;
    const int64_t ovol = j->od[0] * j->od[1] * j->od[2];
    int64_t plane, o;
    for (plane = begin; plane < end; plane++)
        for (o = 0; o < ovol; o++) pl_out(j, plane, o);
}

/* GlobalAveragePool and GlobalMaxPool on f32 planes: one contiguous pass
 * each. The mean sums in double over eight interleaved partial sums (not
 * pl_range's one, so not always its last bit); the max compares as pl_range
 * does (a NaN first stays, later NaNs are passed over). Compiled for the
 * baseline and for AVX-512 (the same additions in the same order). */
static inline __attribute__((always_inline)) void pl_global_body(const pjob *j, int64_t begin, int64_t end)
{
    const int64_t len = j->id[0] * j->id[1] * j->id[2];
    const int avg = ((const prow *)j->n->def->row)->kind == PL_GAVG;
    int64_t plane, i, k;
    for (plane = begin; plane < end; plane++) {
        const float *xp = (const float *)j->x + plane * len;
        float *yp = (float *)j->y + plane;
        if (avg) {
            double part[8] = {0, 0, 0, 0, 0, 0, 0, 0}, acc;
            for (i = 0; i + 8 <= len; i += 8)
                for (k = 0; k < 8; k++) part[k] += xp[i + k];
            acc = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
            for (; i < len; i++) acc += xp[i];
            *yp = (float)(acc / (double)len);
        } else {
            float best = xp[0];
            for (i = 1; i < len; i++)
                if (xp[i] > best) best = xp[i];
            *yp = best;
        }
    }
}

static void pl_global_base(const pjob *j, int64_t begin, int64_t end)
{
    pl_global_body(j, begin, end);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
__attribute__((target("avx512f,prefer-vector-width=512"))) static void pl_global_512(const pjob *j, int64_t begin,
                                                                                     int64_t end)
{
    pl_global_body(j, begin, end);
}
#endif

static void pl_global_f32(void *arg, int64_t begin, int64_t end)
{
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
    if (__builtin_cpu_supports("avx512f")) {
        pl_global_512(arg, begin, end);
        return;
    }
#endif
    pl_global_base(arg, begin, end);
}

/* MaxPool (and its Indices) and AveragePool on f32 planes: a 2-D window
 * that lies inside the input is read with no checks, in pl_out's order of
 * taps (so with its bits: comparisons in float, the sum in double); every
 * other window goes through pl_out. Without Indices, the inside windows of
 * an output row are computed a piece of the row at a time, tap by tap over
 * the piece (loops that vectorize): the same taps in the same order per
 * output, so the same bits. */
#define PL_PIECE 512

/* n outputs of one row (yr) from the windows at p0, p0 + sx, ...: tap by tap
 * over the piece (max: into yr; mean: in double into acc, then yr). SX is a
 * constant where inlined (1 and 2), so the loops vectorize. */
static inline __attribute__((always_inline)) void pl_piece(float *yr, const float *p0, int64_t n, int64_t SX,
                                                         const pjob *j, int is_max)
{
    double acc[PL_PIECE];
    float m[PL_PIECE];
    int64_t bb, cc, t;
    for (bb = 0; bb < j->k[1]; bb++)
        for (cc = 0; cc < j->k[2]; cc++) {
            const float *p = p0 + bb * j->dl[1] * j->id[2] + cc * j->dl[2];
            if (is_max) {
                if (bb == 0 && cc == 0)
                    for (t = 0; t < n; t++) m[t] = p[t * SX];
                else
                    for (t = 0; t < n; t++) {
                        const float v = p[t * SX];
                        m[t] = v > m[t] ? v : m[t];
                    }
            } else if (bb == 0 && cc == 0) {
                for (t = 0; t < n; t++) acc[t] = 0.0 + p[t * SX]; /* -0 sums to +0, as in pl_out */
            } else {
                for (t = 0; t < n; t++) acc[t] += p[t * SX];
            }
        }
    if (is_max) {
        for (t = 0; t < n; t++) yr[t] = m[t];
    } else {
        const double cnt = (double)(j->k[1] * j->k[2]);
        for (t = 0; t < n; t++) yr[t] = (float)(acc[t] / cnt);
    }
}

#define PL_PIECES(suffix, attr)                                                                                  \
    static attr void pl_piece##suffix(float *yr, const float *p0, int64_t n, const pjob *j, int is_max)          \
    {                                                                                                            \
        if (j->st[2] == 1)                                                                                       \
            pl_piece(yr, p0, n, 1, j, is_max);                                                                   \
        else if (j->st[2] == 2)                                                                                  \
            pl_piece(yr, p0, n, 2, j, is_max);                                                                   \
        else                                                                                                     \
            pl_piece(yr, p0, n, j->st[2], j, is_max);                                                            \
    }
PL_PIECES(_base, )
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
PL_PIECES(_512, __attribute__((target("avx512f,prefer-vector-width=512"))))
#endif

/* Output (oz, oy, ox) of plane `plane`: a window inside the input read with
 * no checks, in pl_out's order of taps (with its Indices), any other through
 * pl_out. */
static void pl_window_one(const pjob *j, int64_t plane, int64_t oz, int64_t oy, int64_t ox, int is_max)
{
    const pstate *s = PRT__ONNX_STATE(j->n, pstate);
    const int64_t ivol = j->id[0] * j->id[1] * j->id[2], ovol = j->od[0] * j->od[1] * j->od[2];
    const int64_t z0 = oz * j->st[0] - j->pb[0], y0 = oy * j->st[1] - j->pb[1], x0 = ox * j->st[2] - j->pb[2];
    const int64_t o = (oz * j->od[1] + oy) * j->od[2] + ox, dx = j->dl[2], span = (j->k[2] - 1) * dx;
    const float *p0;
    float *y = (float *)j->y + plane * ovol;
    int64_t at = 0, bb, cc;
    double acc = 0;
    if (j->k[0] != 1 || z0 < 0 || z0 >= j->id[0] || y0 < 0 || x0 < 0 || y0 + (j->k[1] - 1) * j->dl[1] >= j->id[1] ||
        x0 + span >= j->id[2]) {
        pl_out(j, plane, o);
        return;
    }
    p0 = (const float *)j->x + plane * ivol + (z0 * j->id[1] + y0) * j->id[2] + x0;
    if (!is_max) {
        for (bb = 0; bb < j->k[1]; bb++)
            for (cc = 0; cc < j->k[2]; cc++) acc += p0[bb * j->dl[1] * j->id[2] + cc * dx];
        y[o] = (float)(acc / (double)(j->k[1] * j->k[2]));
        return;
    }
    for (bb = 0; bb < j->k[1]; bb++)
        for (cc = 0; cc < j->k[2]; cc++) {
            const int64_t off = bb * j->dl[1] * j->id[2] + cc * dx;
            if (p0[off] > p0[at]) at = off;
        }
    y[o] = p0[at];
    if (j->idx) {
        const int64_t w = (z0 * j->id[1] + y0) * j->id[2] + x0 + at;
        const int64_t yy = w / j->id[2] % j->id[1], xx = w % j->id[2];
        j->idx[plane * ovol + o] = plane * ivol + (s->col_major ? (xx * j->id[1] + yy) * j->id[0] + z0 : w);
    }
}

static void pl_window_f32(void *arg, int64_t begin, int64_t end)
{
    const pjob *j = arg;
    const int is_max = ((const prow *)j->n->def->row)->kind == PL_MAX;
    const int64_t ivol = j->id[0] * j->id[1] * j->id[2], ovol = j->od[0] * j->od[1] * j->od[2];
    const int64_t sx = j->st[2], span = (j->k[2] - 1) * j->dl[2];
    /* output columns whose window is inside the row: ox * sx - pb >= 0 and ox * sx - pb + span < width */
    int64_t in_lo = (j->pb[2] + sx - 1) / sx, in_hi = j->id[2] - 1 - span + j->pb[2] >= 0
                                                         ? (j->id[2] - 1 - span + j->pb[2]) / sx + 1 : 0;
    int64_t plane, oz, oy, ox;
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
    const int avx512 = __builtin_cpu_supports("avx512f");
#endif
    if (in_hi > j->od[2]) in_hi = j->od[2];
    if (in_lo > in_hi || j->idx || j->k[0] != 1) in_lo = in_hi = 0; /* rows output by output */
    for (plane = begin; plane < end; plane++) {
        const float *x = (const float *)j->x + plane * ivol;
        float *y = (float *)j->y + plane * ovol;
        for (oz = 0; oz < j->od[0]; oz++)
            for (oy = 0; oy < j->od[1]; oy++) {
                const int64_t z0 = oz * j->st[0] - j->pb[0], y0 = oy * j->st[1] - j->pb[1];
                const int rows_in = j->k[0] == 1 && z0 >= 0 && z0 < j->id[0] && y0 >= 0 &&
                                    y0 + (j->k[1] - 1) * j->dl[1] < j->id[1];
                const int64_t lo = rows_in ? in_lo : 0, hi = rows_in ? in_hi : 0;
                float *yr = y + (oz * j->od[1] + oy) * j->od[2];
                for (ox = lo; ox < hi; ox += PL_PIECE) { /* the inside windows, a piece at a time */
                    const int64_t n = hi - ox < PL_PIECE ? hi - ox : PL_PIECE;
                    const float *p0 = x + (z0 * j->id[1] + y0) * j->id[2] + ox * sx - j->pb[2];
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
                    if (avx512) {
                        pl_piece_512(yr + ox, p0, n, j, is_max);
                        continue;
                    }
#endif
                    pl_piece_base(yr + ox, p0, n, j, is_max);
                }
                /* the others, output by output */
                for (ox = 0; ox < lo; ox++) pl_window_one(j, plane, oz, oy, ox, is_max);
                for (ox = hi; ox < j->od[2]; ox++) pl_window_one(j, plane, oz, oy, ox, is_max); /* hi >= lo */
            }
    }
}

static prt_status pl_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const prow *r = n->def->row;
    const pstate *s = PRT__ONNX_STATE(n, pstate);
    const prt_dims *d = &in[0].dims;
    int32_t sp = d->nb - 2, i;
    int64_t planes, work;
    pjob j;
    (void)nb_in; (void)ws; (void)err;
    memset(&j, 0, sizeof j);
    j.n = n;
    j.x = x[0];
    j.y = y[0];
    j.idx = n->nb_out > 1 ? y[1] : NULL;
    j.t = in[0].dtype;
    for (i = 0; i < 3; i++) {
        j.id[i] = j.od[i] = j.k[i] = j.st[i] = j.dl[i] = 1;
    }
    for (i = 0; i < sp; i++) {
        int32_t a = 3 - sp + i;
        j.id[a] = d->d[2 + i];
        if (r->kind == PL_GMAX || r->kind == PL_GAVG || r->kind == PL_GLP) {
            j.k[a] = d->d[2 + i];
            continue;
        }
        j.od[a] = pl_axis(s, i, d->d[2 + i], &j.pb[a]);
        j.k[a] = s->kernel[i];
        j.st[a] = s->strides[i];
        j.dl[a] = s->dil[i];
        j.pe[a] = s->auto_pad == AP_NOTSET ? s->pads[i + s->nk] : 0;
        if (j.od[a] != out[0].dims.d[2 + i]) {
            prt_msg_set(err, "internal error: output extents disagree with the shape inference");
            return PRT_STATUS_INTERNAL;
        }
    }
    planes = d->d[0] * d->d[1];
    work = prt_dims_volume(&out[0].dims) * j.k[0] * j.k[1] * j.k[2];
    if (planes <= 0 || prt_dims_volume(&out[0].dims) <= 0) return PRT_OK;
    if ((r->kind == PL_GAVG || r->kind == PL_GMAX) && j.t == PRT_DTYPE_F32 && work > 0) {
        if (work <= 65536) pl_global_f32(&j, 0, planes);
        else ex->parallel_for(ex, planes, 1 + 16384 / (work / planes), pl_global_f32, &j);
        return PRT_OK;
    }
    if ((r->kind == PL_MAX || r->kind == PL_AVG) && j.t == PRT_DTYPE_F32) {
        if (work <= 65536) pl_window_f32(&j, 0, planes);
        else ex->parallel_for(ex, planes, 1, pl_window_f32, &j);
        return PRT_OK;
    }
    if (work <= 65536) pl_range(&j, 0, planes);
    else ex->parallel_for(ex, planes, 1, pl_range, &j);
    return PRT_OK;
}

static const prow r_max = {PL_MAX}, r_avg = {PL_AVG}, r_gmax = {PL_GMAX}, r_gavg = {PL_GAVG};
static const prow r_lp = {PL_LP}, r_glp = {PL_GLP};

/* Fields in order of appearance across versions; each version takes a prefix.
 * MaxPool 8 and later also declare num_outputs: the importer sets it to the
 * count of outputs the node lists (docs/onnx.md), so that Indices, when
 * nobody asks for it, is neither an output nor computed. */
#define PL_MAXPOOL_FIELDS                                                                                     \
    PRT__ONNX_STR("auto_pad", "NOTSET", "NOTSET (use pads), SAME_UPPER, SAME_LOWER or VALID"),                 \
    PRT__ONNX_OPT("kernel_shape", PRT_FIELD_INT64, "window per spatial axis (required)"),                     \
    PRT__ONNX_OPT("pads", PRT_FIELD_INT64, "begins then ends; absent: 0"),                                    \
    PRT__ONNX_OPT("strides", PRT_FIELD_INT64, "absent: 1")
#define PL_NUM_OUTPUTS PRT__ONNX_I64("num_outputs", 2, "1: Y only; 2: Y and Indices (not an ONNX attribute)")
static const prt_field_schema s_maxpool[] = {
    PL_MAXPOOL_FIELDS,
    PRT__ONNX_I64("storage_order", 0, "Indices: 0 row major, 1 column major (version 8)"),
    PRT__ONNX_I64("ceil_mode", 0, "1: ceil for the output extent (version 10)"),
    PRT__ONNX_OPT("dilations", PRT_FIELD_INT64, "absent: 1 (version 10)"),
    PL_NUM_OUTPUTS,
};
static const prt_field_schema s_maxpool8[] = {
    PL_MAXPOOL_FIELDS,
    PRT__ONNX_I64("storage_order", 0, "Indices: 0 row major, 1 column major (version 8)"),
    PL_NUM_OUTPUTS,
};
static const prt_field_schema s_avgpool[] = {
    PRT__ONNX_STR("auto_pad", "NOTSET", "NOTSET (use pads), SAME_UPPER, SAME_LOWER or VALID"),
    PRT__ONNX_OPT("kernel_shape", PRT_FIELD_INT64, "window per spatial axis (required)"),
    PRT__ONNX_OPT("pads", PRT_FIELD_INT64, "begins then ends; absent: 0"),
    PRT__ONNX_OPT("strides", PRT_FIELD_INT64, "absent: 1"),
    PRT__ONNX_I64("count_include_pad", 0, "1: padded positions count in the divisor (version 7)"),
    PRT__ONNX_I64("ceil_mode", 0, "1: ceil for the output extent (version 10)"),
    PRT__ONNX_OPT("dilations", PRT_FIELD_INT64, "absent: 1 (version 19)"),
};

static const prt_field_schema s_lppool[] = {
    PRT__ONNX_STR("auto_pad", "NOTSET", "NOTSET (use pads), SAME_UPPER, SAME_LOWER or VALID"),
    PRT__ONNX_OPT("kernel_shape", PRT_FIELD_INT64, "window per spatial axis (required)"),
    PRT__ONNX_OPT("pads", PRT_FIELD_INT64, "begins then ends; absent: 0"),
    PRT__ONNX_OPT("strides", PRT_FIELD_INT64, "absent: 1"),
    PRT__ONNX_I64("p", 2, "the norm's order"),
    PRT__ONNX_I64("ceil_mode", 0, "1: ceil for the output extent (version 18)"),
    PRT__ONNX_OPT("dilations", PRT_FIELD_INT64, "absent: 1 (version 18)"),
};
static const prt_field_schema s_glp[] = {PRT__ONNX_I64("p", 2, "the norm's order")};

#define PL(nm, ver, rw, sch, nf, nout) PRT__ONNX_DEF(nm, ver, rw, sch, nf, 1, 1, nout, PRT__ONNX_FLOATS, pstate, pl)
/* MaxPool 12 added i8 and u8 (exact through double) */
#define PLI(nm, ver, rw, sch, nf, nout)                                                            \
    PRT__ONNX_DEF(nm, ver, rw, sch, nf, 1, 1, nout,                                                \
                  PRT__ONNX_FLOATS | PRT__ONNX_T(PRT_DTYPE_I8) | PRT__ONNX_T(PRT_DTYPE_U8), pstate, pl)

static const prt__onnx_def pool_defs[] = {
    PLI("MaxPool", "1", r_max, s_maxpool, 4, 1),
    PLI("MaxPool", "8", r_max, s_maxpool8, 6, 2),
    PLI("MaxPool", "10", r_max, s_maxpool, 8, 2),
    PL("AveragePool", "1", r_avg, s_avgpool, 4, 1),
    PL("AveragePool", "7", r_avg, s_avgpool, 5, 1),
    PL("AveragePool", "10", r_avg, s_avgpool, 6, 1),
    PL("AveragePool", "19", r_avg, s_avgpool, 7, 1),
    PL("LpPool", "2", r_lp, s_lppool, 5, 1),
    PL("LpPool", "18", r_lp, s_lppool, 7, 1),
    PL("GlobalLpPool", "2", r_glp, s_glp, 1, 1),
    PL("GlobalMaxPool", "1", r_gmax, NULL, 0, 1),
    PL("GlobalAveragePool", "1", r_gavg, NULL, 0, 1),
};
PRT__ONNX_REGISTER_TABLE(pool_defs)
