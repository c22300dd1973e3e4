/*
 * onnx/compute/norm.c - normalizations in inference form:
 * BatchNormalization, InstanceNormalization, LayerNormalization,
 * GroupNormalization, LpNormalization, LRN. Statistics in double; every
 * float dtype. See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum nkind { NK_BATCH, NK_INSTANCE, NK_LAYER, NK_GROUP, NK_LP, NK_LRN, NK_RMS } nkind;

typedef struct nrow {
    nkind kind;
    int per_channel_affine; /* GroupNormalization 21: scale / bias per channel */
} nrow;

typedef struct nstate {
    double eps, alpha, beta, bias;
    int64_t axis, p, size, groups;
} nstate;

static prt_status nm_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const nrow *r = n->def->row;
    nstate *s = PRT__ONNX_STATE(n, nstate);
    s->eps = prt_fields_f64(fc, "epsilon", 0, 1e-5);
    s->alpha = prt_fields_f64(fc, "alpha", 0, 1e-4);
    s->beta = prt_fields_f64(fc, "beta", 0, 0.75);
    s->bias = prt_fields_f64(fc, "bias", 0, 1.0);
    s->axis = prt_fields_i64(fc, "axis", 0, -1);
    s->p = prt_fields_i64(fc, "p", 0, 2);
    s->size = prt_fields_i64(fc, "size", 0, 1);
    s->groups = prt_fields_i64(fc, "num_groups", 0, 1);
    if (r->kind == NK_BATCH && (prt_fields_i64(fc, "training_mode", 0, 0) || !prt_fields_i64(fc, "spatial", 0, 1))) {
        prt_msg_set(err, "%s v%s: only inference with spatial=1 is supported (training_mode=1 or spatial=0 given)",
                    n->def->name, n->def->version);
        return PRT_STATUS_UNSUPPORTED;
    }
    if (r->kind == NK_LP && s->p != 1 && s->p != 2) {
        prt_msg_set(err, "%s v%s: p must be 1 or 2, got %lld", n->def->name, n->def->version, (long long)s->p);
        return PRT_STATUS_INVALID_FIELD;
    }
    if ((r->kind == NK_LRN && s->size < 1) || (r->kind == NK_GROUP && s->groups < 1)) {
        prt_msg_set(err, "%s v%s: %s must be >= 1", n->def->name, n->def->version, r->kind == NK_LRN ? "size" : "num_groups");
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status nm_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    int32_t i;
    for (i = 0; i < nb_in; i++)
        if (!prt__onnx_is_float(in[i])) {
            prt_msg_set(err, "input %d must be a float type, got %s", (int)i, prt_dtype_name(in[i]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    out[0] = in[0];
    for (i = 1; i < n->nb_out; i++) out[i] = PRT_DTYPE_F32; /* LayerNormalization's Mean, InvStdDev */
    return PRT_OK;
}

static prt_status nm_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const nrow *r = n->def->row;
    const nstate *s = PRT__ONNX_STATE(n, nstate);
    int32_t a, i;
    prt_status st;
    (void)nb_in;
    if (r->kind != NK_LAYER && r->kind != NK_LP && r->kind != NK_RMS && in[0].nb < 2) {
        prt_msg_set(err, "X must be [N, C, ...], got rank %d", (int)in[0].nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out[0] = in[0];
    if (r->kind == NK_LAYER || r->kind == NK_LP || r->kind == NK_RMS) {
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
        for (i = 1; i < n->nb_out; i++) {
            int32_t k;
            out[i] = in[0];
            for (k = a; k < in[0].nb; k++) out[i].d[k] = eb->constant(eb, 1);
        }
    }
    if (r->kind == NK_GROUP) {
        int64_t c = prt__onnx_known(eb, in[0].d[1]);
        if (c >= 0 && c % s->groups) {
            prt_msg_set(err, "C = %lld is not a multiple of num_groups = %lld", (long long)c, (long long)s->groups);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    return PRT_OK;
}

static double gv(const void *p, prt_dtype t, int64_t i) { return prt__onnx_get_f64(p, t, i); }
static void sv(void *p, prt_dtype t, int64_t i, double v) { prt__onnx_scatter_f64(p, t, i, &v, 1); }

/* A per-channel (or per-element) parameter vector must hold `want` values. */
static prt_status need(const prt_tensor_desc *d, int32_t i, const char *what, int64_t want, prt_msg *err)
{
    int64_t v = prt_dims_volume(&d[i].dims);
    if (v != want) {
        prt_msg_set(err, "%s (input %d) holds %lld values, %lld expected", what, (int)i, (long long)v, (long long)want);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

typedef struct njob {
    const prt__onnx_node *n;
    const prt_tensor_desc *in, *out;
    const void *const *x;
    void *const *y;
    int64_t inner, len, groups; /* see nm_run */
    int64_t nscale, nbias;      /* LayerNormalization: values of Scale and B (0: no B) */
} njob;

/* Normalize rows of `len` elements (consecutive) with statistics over the
 * row; affine parameters indexed per element (LayerNorm) or per channel. */
static void norm_rows(void *arg, int64_t begin, int64_t end)
{
    const njob *j = arg;
    const nrow *r = j->n->def->row;
    const nstate *s = PRT__ONNX_STATE(j->n, nstate);
    const prt_dtype t = j->in[0].dtype;
    int64_t row, k;
    for (row = begin; row < end; row++) {
        const int64_t base = row * j->len;
        double mean = 0, var = 0, inv;
        if (r->kind != NK_RMS) { /* RMSNormalization keeps the mean at 0 */
            for (k = 0; k < j->len; k++) mean += gv(j->x[0], t, base + k);
            mean /= (double)(j->len ? j->len : 1);
        }
        for (k = 0; k < j->len; k++) {
            double d = gv(j->x[0], t, base + k) - mean;
            var += d * d;
        }
        var /= (double)(j->len ? j->len : 1);
        inv = 1.0 / sqrt(var + s->eps);
        for (k = 0; k < j->len; k++) {
            double v = (gv(j->x[0], t, base + k) - mean) * inv, sc, b;
            int64_t pi;
            switch (r->kind) {
            case NK_LAYER: case NK_RMS: pi = k; break;
            case NK_INSTANCE: pi = row % j->groups; break;
            default: /* GROUP: channel of this element */
                pi = r->per_channel_affine ? (row % j->groups) * (j->len / j->inner) + k / j->inner : row % j->groups;
                break;
            }
            if (r->kind == NK_LAYER || r->kind == NK_RMS) {
                sc = gv(j->x[1], j->in[1].dtype, j->nscale == j->len ? pi : 0);
                b = j->nbias > 0 ? gv(j->x[2], j->in[2].dtype, j->nbias == j->len ? pi : 0) : 0;
            } else {
                sc = gv(j->x[1], j->in[1].dtype, pi);
                b = gv(j->x[2], j->in[2].dtype, pi);
            }
            sv(j->y[0], j->out[0].dtype, base + k, v * sc + b);
        }
        if (r->kind == NK_LAYER && j->n->nb_out > 1) {
            if (j->y[1]) sv(j->y[1], PRT_DTYPE_F32, row, mean);
            if (j->n->nb_out > 2 && j->y[2]) sv(j->y[2], PRT_DTYPE_F32, row, inv);
        }
    }
}

/* BatchNormalization: per channel c, ws[2c] = scale / sqrt(var + eps) and
 * ws[2c + 1] = B - mean * ws[2c] (double), once per run. */
static void bn_params(const nstate *s, const prt_tensor_desc *in, const void *const *x, int64_t C, double *ws)
{
    int64_t c;
    for (c = 0; c < C; c++) {
        double sc = gv(x[1], in[1].dtype, c) / sqrt(gv(x[4], in[4].dtype, c) + s->eps);
        ws[2 * c] = sc;
        ws[2 * c + 1] = gv(x[2], in[2].dtype, c) - gv(x[3], in[3].dtype, c) * sc;
    }
}

typedef struct bn_job {
    const float *x;
    float *y;
    const double *p; /* bn_params */
    int64_t C, sp;
} bn_job;

/* y[k] = x[k] * sc + b in double (a multiply, then an add), rounded once. */
static void bn_plane(const float *restrict xp, float *restrict yp, int64_t n, double sc, double b)
{
    int64_t k;
    for (k = 0; k < n; k++) yp[k] = (float)((double)xp[k] * sc + b);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
#include <immintrin.h>
/* The same operations eight values at a time: the same bits. */
__attribute__((target("avx512f"))) static void bn_plane_512(const float *restrict xp, float *restrict yp, int64_t n,
                                                            double sc, double b)
{
    const __m512d vs = _mm512_set1_pd(sc), vb = _mm512_set1_pd(b);
    int64_t k;
    for (k = 0; k + 8 <= n; k += 8) {
        const __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(xp + k));
        _mm256_storeu_ps(yp + k, _mm512_cvtpd_ps(_mm512_add_pd(_mm512_mul_pd(v, vs), vb)));
    }
    bn_plane(xp + k, yp + k, n - k, sc, b);
}
#define BN_HAVE_512 1
#endif

/* f32 planes [begin, end) of (image, channel): y = x * scale + shift in double, rounded once. */
static void bn_range(void *arg, int64_t begin, int64_t end)
{
    const bn_job *j = arg;
    int64_t t;
#ifdef BN_HAVE_512
    const int wide = __builtin_cpu_supports("avx512f");
#endif
    for (t = begin; t < end; t++) {
        const double sc = j->p[2 * (t % j->C)], b = j->p[2 * (t % j->C) + 1];
#ifdef BN_HAVE_512
        if (wide) {
            bn_plane_512(j->x + t * j->sp, j->y + t * j->sp, j->sp, sc, b);
            continue;
        }
#endif
        bn_plane(j->x + t * j->sp, j->y + t * j->sp, j->sp, sc, b);
    }
}

static size_t nm_workspace(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out)
{
    const nrow *r = n->def->row;
    (void)nb_in; (void)out;
    if (r->kind != NK_BATCH || in[0].dims.nb < 2) return 0;
    return (size_t)(in[0].dims.d[1] > 0 ? in[0].dims.d[1] : 1) * 2 * sizeof(double);
}

static prt_status nm_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const nrow *r = n->def->row;
    const nstate *s = PRT__ONNX_STATE(n, nstate);
    const prt_dims *d = &in[0].dims;
    const prt_dtype t = in[0].dtype;
    int64_t vol = prt_dims_volume(d), N = d->nb > 0 ? d->d[0] : 1, C = d->nb > 1 ? d->d[1] : 1, sp = 1, i, c, k;
    int32_t a;
    prt_status st;
    njob j = {n, in, out, x, y, 1, 1, 1, 0, 0};
    for (i = 2; i < d->nb; i++) sp *= d->d[i];
    if (vol <= 0) return PRT_OK;
    switch (r->kind) {
    case NK_BATCH: {
        for (i = 1; i < 5; i++)
            if ((st = need(in, (int32_t)i, i == 1 ? "scale" : i == 2 ? "B" : i == 3 ? "mean" : "var", C, err)) != PRT_OK)
                return st;
        bn_params(s, in, x, C, ws);
        if (t == PRT_DTYPE_F32 && out[0].dtype == PRT_DTYPE_F32) {
            bn_job bj = {x[0], y[0], ws, C, sp};
            if (vol <= 65536) bn_range(&bj, 0, N * C);
            else ex->parallel_for(ex, N * C, 1 + 16384 / sp, bn_range, &bj);
            return PRT_OK;
        }
        for (c = 0; c < C; c++) {
            const double sc = ((const double *)ws)[2 * c], b = ((const double *)ws)[2 * c + 1];
            for (i = 0; i < N; i++)
                for (k = 0; k < sp; k++) {
                    int64_t o = (i * C + c) * sp + k;
                    sv(y[0], t, o, gv(x[0], t, o) * sc + b);
                }
        }
        return PRT_OK;
    }
    case NK_INSTANCE:
        if ((st = need(in, 1, "scale", C, err)) != PRT_OK || (st = need(in, 2, "B", C, err)) != PRT_OK) return st;
        j.len = sp;
        j.groups = C;
        break;
    case NK_GROUP: {
        int64_t want = r->per_channel_affine ? C : s->groups;
        if (C % s->groups) {
            prt_msg_set(err, "C = %lld is not a multiple of num_groups = %lld", (long long)C, (long long)s->groups);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if ((st = need(in, 1, "scale", want, err)) != PRT_OK || (st = need(in, 2, "bias", want, err)) != PRT_OK)
            return st;
        j.len = C / s->groups * sp;
        j.inner = sp;
        j.groups = s->groups;
        break;
    }
    case NK_LAYER: case NK_RMS: {
        if ((st = prt__onnx_axis(n, "axis", s->axis, d->nb, 0, &a, err)) != PRT_OK) return st;
        for (i = a; i < d->nb; i++) j.len *= d->d[i];
        j.nscale = prt_dims_volume(&in[1].dims);
        j.nbias = nb_in > 2 ? prt_dims_volume(&in[2].dims) : 0;
        if ((j.nscale != j.len && j.nscale != 1) || (j.nbias > 1 && j.nbias != j.len)) {
            prt_msg_set(err, "Scale and B hold %lld and %lld values for rows of %lld (1 or the row length expected)",
                        (long long)j.nscale, (long long)j.nbias, (long long)j.len);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        break;
    }
    case NK_LP: {
        int64_t inner = 1, len, outer = 1, o;
        if ((st = prt__onnx_axis(n, "axis", s->axis, d->nb, 0, &a, err)) != PRT_OK) return st;
        len = d->d[a];
        for (i = 0; i < a; i++) outer *= d->d[i];
        for (i = a + 1; i < d->nb; i++) inner *= d->d[i];
        for (o = 0; o < outer * inner; o++) {
            int64_t base = (o / inner) * len * inner + o % inner;
            double nrm = 0;
            for (k = 0; k < len; k++) {
                double v = gv(x[0], t, base + k * inner);
                nrm += s->p == 1 ? fabs(v) : v * v;
            }
            if (s->p == 2) nrm = sqrt(nrm);
            for (k = 0; k < len; k++) sv(y[0], t, base + k * inner, nrm > 0 ? gv(x[0], t, base + k * inner) / nrm : 0);
        }
        return PRT_OK;
    }
    case NK_LRN: {
        int64_t lo = (s->size - 1) / 2, hi = s->size - 1 - lo, cc;
        for (i = 0; i < N; i++)
            for (c = 0; c < C; c++)
                for (k = 0; k < sp; k++) {
                    double sum = 0, v;
                    for (cc = c - lo; cc <= c + hi; cc++)
                        if (cc >= 0 && cc < C) {
                            double u = gv(x[0], t, (i * C + cc) * sp + k);
                            sum += u * u;
                        }
                    v = gv(x[0], t, (i * C + c) * sp + k) / pow(s->bias + s->alpha / (double)s->size * sum, s->beta);
                    sv(y[0], t, (i * C + c) * sp + k, v);
                }
        return PRT_OK;
    }
    }
    {
        int64_t rows = vol / (j.len ? j.len : 1);
        const void *xs[3] = {x[0], x[1], nb_in > 2 ? x[2] : NULL};
        j.x = xs;
        if (rows * j.len <= 16384) norm_rows(&j, 0, rows);
        else ex->parallel_for(ex, rows, 1 + 16384 / (j.len + 1), norm_rows, &j);
    }
    return PRT_OK;
}

static const nrow r_batch = {NK_BATCH, 0}, r_instance = {NK_INSTANCE, 0}, r_layer = {NK_LAYER, 0};
static const nrow r_rms = {NK_RMS, 0};
static const nrow r_group18 = {NK_GROUP, 0}, r_group21 = {NK_GROUP, 1}, r_lp = {NK_LP, 0}, r_lrn = {NK_LRN, 0};

static const prt_field_schema s_bn[] = {
    PRT__ONNX_F32("epsilon", 1e-5f, "added to the variance"),
    PRT__ONNX_F32("momentum", 0.9f, "training only; ignored"),
    PRT__ONNX_I64("training_mode", 0, "must be 0 (version 14)"),
};
static const prt_field_schema s_bn7[] = {
    PRT__ONNX_F32("epsilon", 1e-5f, "added to the variance"),
    PRT__ONNX_F32("momentum", 0.9f, "training only; ignored"),
    PRT__ONNX_I64("spatial", 1, "must be 1"),
};
static const prt_field_schema s_eps[] = {PRT__ONNX_F32("epsilon", 1e-5f, "added to the variance")};
static const prt_field_schema s_ln[] = {
    PRT__ONNX_I64("axis", -1, "the first normalized axis"),
    PRT__ONNX_F32("epsilon", 1e-5f, "added to the variance"),
    PRT__ONNX_I64("stash_type", 1, "statistics precision; plugrt uses double"),
};
static const prt_field_schema s_gn[] = {
    PRT__ONNX_F32("epsilon", 1e-5f, "added to the variance"),
    PRT__ONNX_REQ_I64("num_groups", "channel groups"),
    PRT__ONNX_I64("stash_type", 1, "statistics precision; plugrt uses double (version 21)"),
};
static const prt_field_schema s_lp[] = {
    PRT__ONNX_I64("axis", -1, "the axis"),
    PRT__ONNX_I64("p", 2, "1 or 2"),
};
static const prt_field_schema s_lrn[] = {
    PRT__ONNX_F32("alpha", 1e-4f, "scale"),
    PRT__ONNX_F32("beta", 0.75f, "exponent"),
    PRT__ONNX_F32("bias", 1.0f, "offset"),
    PRT__ONNX_REQ_I64("size", "channels in the window"),
};

#define NM(op, ver, rw, sch, nf, minin, maxin, nout)                                                     \
    {.name = op, .version = ver, .min_in = minin, .max_in = maxin, .nb_out = nout, .in_mask = PRT__ONNX_FLOATS, \
     .schema = sch, .nb_fields = nf, .state_size = sizeof(nstate), .row = &(rw), .init = nm_init,            \
     .types = nm_types, .shapes = nm_shapes, .run = nm_run, .workspace = nm_workspace, .doc = "ONNX " op}

static const prt__onnx_def norm_defs[] = {
    NM("BatchNormalization", "7", r_batch, s_bn7, 3, 5, 5, 1),
    NM("BatchNormalization", "9", r_batch, s_bn, 2, 5, 5, 1),
    NM("BatchNormalization", "14", r_batch, s_bn, 3, 5, 5, 1),
    NM("InstanceNormalization", "6", r_instance, s_eps, 1, 3, 3, 1),
    NM("LayerNormalization", "17", r_layer, s_ln, 3, 2, 3, 3),
    NM("RMSNormalization", "23", r_rms, s_ln, 3, 2, 2, 1),
    NM("GroupNormalization", "18", r_group18, s_gn, 2, 3, 3, 1),
    NM("GroupNormalization", "21", r_group21, s_gn, 3, 3, 3, 1),
    NM("LpNormalization", "1", r_lp, s_lp, 2, 1, 1, 1),
    NM("LRN", "1", r_lrn, s_lrn, 4, 1, 1, 1),
};
PRT__ONNX_REGISTER_TABLE(norm_defs)
