/*
 * onnx/reduce/softmax.c - Softmax, LogSoftmax, Hardmax (versions 1 and 13:
 * 2-D coercion vs one axis) and CumSum, on vectors along one axis.
 */
#include <math.h>
#include <string.h>

#include "../common/ew_math.h"
#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum skind { SK_SOFTMAX, SK_LOGSOFTMAX, SK_HARDMAX, SK_CUMSUM, SK_CUMPROD } skind;

typedef struct srow {
    skind kind;
    int coerce_2d; /* versions 1 and 11: [prod(dims < axis), prod(dims >= axis)] */
} srow;

typedef struct sstate {
    int64_t axis;
    int32_t axis_field; /* CumSum: axis given as field "input:1" */
    int32_t exclusive, reverse;
} sstate;

static prt_status s_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    sstate *s = PRT__ONNX_STATE(n, sstate);
    const prt_field *f = prt_fields_find(fc, "input:1");
    (void)err;
    s->axis = prt_fields_i64(fc, "axis", 0, 0);
    s->exclusive = prt_fields_i64(fc, "exclusive", 0, 0) != 0;
    s->reverse = prt_fields_i64(fc, "reverse", 0, 0) != 0;
    if (f && f->count > 0) {
        if (f->count != 1) {
            prt_msg_set(err, "%s v%s: axis (input 1) must be one value, got %lld", n->def->name, n->def->version,
                        (long long)f->count);
            return PRT_STATUS_INVALID_FIELD;
        }
        prt_field_get_i64(f, 0, &s->axis);
        s->axis_field = 1;
    }
    return PRT_OK;
}

static prt_status s_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    if (nb_in > 1 && in[1] != PRT_DTYPE_I32 && in[1] != PRT_DTYPE_I64) {
        prt_msg_set(err, "axis (input 1) must be i32 or i64, got %s", prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    (void)n;
    out[0] = in[0];
    return PRT_OK;
}

static prt_status s_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    const srow *r = n->def->row;
    int32_t a;
    prt_status st;
    (void)eb;
    if ((r->kind == SK_CUMSUM || r->kind == SK_CUMPROD) && in[0].nb == 0) {
        prt_msg_set(err, "input must have rank >= 1, got a 0-d tensor");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((r->kind == SK_CUMSUM || r->kind == SK_CUMPROD) && nb_in > 1) {
        if (in[1].nb > 1) {
            prt_msg_set(err, "axis (input 1) must be a scalar, got rank %d", (int)in[1].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    } else if (in[0].nb > 0 || r->coerce_2d) {
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, r->coerce_2d, &a, err)) != PRT_OK) return st;
    }
    out[0] = in[0];
    return PRT_OK;
}

typedef struct sjob {
    skind kind;
    int exclusive, reverse;
    const void *x;
    void *y;
    prt_dtype t;
    int64_t len, inner; /* vectors of `len` elements, `inner` apart */
} sjob;

/* Softmax / LogSoftmax of one contiguous f32 vector: the max and the values
 * read as they are, exp in fp32 once per element (kept in y), the sum and
 * the final scale in double. Compiled for the baseline and for AVX-512 (this
 * file contracts no multiply-add, so both give the same bits). */
static inline __attribute__((always_inline)) void s_softmax_body(const sjob *j, int64_t base)
{
    const float *x = (const float *)j->x + base;
    float *y = (float *)j->y + base;
    float m = x[0];
    double sum = 0, inv, lse;
    int64_t k;
    for (k = 1; k < j->len; k++)
        if (x[k] > m) m = x[k]; /* a NaN first stays the max: every output NaN, as the double path */
    if (j->kind == SK_SOFTMAX) {
        double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        int64_t i;
        for (k = 0; k < j->len; k++) y[k] = prt__ew_expf(x[k] - m); /* vectorized */
        for (k = 0; k + 8 <= j->len; k += 8)
            for (i = 0; i < 8; i++) a[i] += y[k + i];
        for (; k < j->len; k++) a[0] += y[k];
        sum = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
        inv = 1.0 / sum;
        for (k = 0; k < j->len; k++) y[k] = (float)((double)y[k] * inv);
        return;
    }
    for (k = 0; k < j->len; k++) sum += prt__ew_expf(x[k] - m);
    lse = log(sum);
    for (k = 0; k < j->len; k++) y[k] = (float)((double)x[k] - (double)m - lse);
}

static void s_softmax_base(const sjob *j, int64_t base)
{
    s_softmax_body(j, base);
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static void s_softmax_512(const sjob *j,
                                                                                              int64_t base)
{
    s_softmax_body(j, base);
}
#endif

static void s_softmax_f32(const sjob *j, int64_t base)
{
#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) {
        s_softmax_512(j, base);
        return;
    }
#endif
    s_softmax_base(j, base);
}

static void s_range(void *arg, int64_t begin, int64_t end)
{
    const sjob *j = arg;
    int64_t v, k;
    for (v = begin; v < end; v++) {
        int64_t base = (v / j->inner) * j->len * j->inner + v % j->inner;
        double m = -INFINITY, sum = 0, run = 0;
        int64_t best = 0;
        if (j->kind == SK_CUMSUM || j->kind == SK_CUMPROD) {
            const int prod = j->kind == SK_CUMPROD;
            if (!prt__onnx_is_float(j->t)) {
                int64_t acc = prod;
                for (k = 0; k < j->len; k++) {
                    int64_t kk = j->reverse ? j->len - 1 - k : k, o = base + kk * j->inner;
                    uint64_t x = (uint64_t)prt__onnx_get_i64(j->x, j->t, o);
                    int64_t next = (int64_t)(prod ? (uint64_t)acc * x : (uint64_t)acc + x);
                    int64_t w = j->exclusive ? acc : next;
                    acc = next;
                    prt__onnx_scatter_i64(j->y, j->t, o, &w, 1);
                }
                continue;
            }
            run = prod;
            for (k = 0; k < j->len; k++) {
                int64_t kk = j->reverse ? j->len - 1 - k : k, o = base + kk * j->inner;
                double x = prt__onnx_get_f64(j->x, j->t, o), next = prod ? run * x : run + x;
                double w = j->exclusive ? run : next;
                run = next;
                prt__onnx_scatter_f64(j->y, j->t, o, &w, 1);
            }
            continue;
        }
        if (j->t == PRT_DTYPE_F32 && j->inner == 1 && (j->kind == SK_SOFTMAX || j->kind == SK_LOGSOFTMAX)) {
            s_softmax_f32(j, base);
            continue;
        }
        for (k = 0; k < j->len; k++) {
            double x = prt__onnx_get_f64(j->x, j->t, base + k * j->inner);
            if (k == 0 || x > m) {
                m = x;
                best = k;
            }
        }
        if (j->kind == SK_HARDMAX) {
            for (k = 0; k < j->len; k++) {
                double w = k == best;
                prt__onnx_scatter_f64(j->y, j->t, base + k * j->inner, &w, 1);
            }
            continue;
        }
        for (k = 0; k < j->len; k++) sum += exp(prt__onnx_get_f64(j->x, j->t, base + k * j->inner) - m);
        for (k = 0; k < j->len; k++) {
            double d = prt__onnx_get_f64(j->x, j->t, base + k * j->inner) - m;
            double w = j->kind == SK_LOGSOFTMAX ? d - log(sum) : exp(d) / sum;
            prt__onnx_scatter_f64(j->y, j->t, base + k * j->inner, &w, 1);
        }
    }
}

static prt_status s_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const sstate *s = PRT__ONNX_STATE(n, sstate);
    const srow *r = n->def->row;
    const prt_dims *d = &in[0].dims;
    int64_t axis = s->axis, outer = 1, nvec, i;
    int32_t a = 0;
    sjob j;
    prt_status st;
    (void)ws; (void)out;
    memset(&j, 0, sizeof j);
    if ((r->kind == SK_CUMSUM || r->kind == SK_CUMPROD) && !s->axis_field) {
        if (nb_in < 2) {
            prt_msg_set(err, "axis is missing: give input 1 or the field \"input:1\"");
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        if (prt_dims_volume(&in[1].dims) != 1) {
            prt_msg_set(err, "axis (input 1) must hold one value, got %lld", (long long)prt_dims_volume(&in[1].dims));
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        axis = prt__onnx_get_i64(x[1], in[1].dtype, 0);
    }
    if (d->nb > 0 || r->coerce_2d)
        if ((st = prt__onnx_axis(n, "axis", axis, d->nb, r->coerce_2d, &a, err)) != PRT_OK) return st;
    j.kind = r->kind;
    j.exclusive = s->exclusive;
    j.reverse = s->reverse;
    j.x = x[0];
    j.y = y[0];
    j.t = in[0].dtype;
    j.len = 1;
    j.inner = 1;
    for (i = 0; i < d->nb; i++) {
        if (i < a) outer *= d->d[i];
        else if (i == a || r->coerce_2d) j.len *= d->d[i];
        else j.inner *= d->d[i];
    }
    nvec = outer * j.inner;
    if (nvec <= 0 || j.len <= 0) return PRT_OK;
    if (nvec * j.len <= 16384)
        s_range(&j, 0, nvec);
    else
        ex->parallel_for(ex, nvec, 1 + 16384 / j.len, s_range, &j);
    return PRT_OK;
}

static const prt_field_schema s_axis1[] = {PRT__ONNX_I64("axis", 1, "first axis of the coerced 2-D matrix")};
static const prt_field_schema s_axis13[] = {PRT__ONNX_I64("axis", -1, "the axis (negative from the end)")};
static const prt_field_schema s_cumsum[] = {
    PRT__ONNX_I64("exclusive", 0, "1: exclude the element itself"),
    PRT__ONNX_I64("reverse", 0, "1: sum from the end"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "axis as a constant (interim form)"),
};

static const srow r_softmax1 = {SK_SOFTMAX, 1}, r_softmax13 = {SK_SOFTMAX, 0};
static const srow r_logsoftmax1 = {SK_LOGSOFTMAX, 1}, r_logsoftmax13 = {SK_LOGSOFTMAX, 0};
static const srow r_hardmax1 = {SK_HARDMAX, 1}, r_hardmax13 = {SK_HARDMAX, 0};
static const srow r_cumsum = {SK_CUMSUM, 0}, r_cumprod = {SK_CUMPROD, 0};

#define S_COMMON(nm, ver, rw, sch, mask)                                                           \
    .name = nm, .version = ver, .min_in = 1, .nb_out = 1, .in_mask = (mask),                       \
    .schema = sch, .nb_fields = PRT__ONNX_NFIELDS(sch), .state_size = sizeof(sstate), .row = &(rw), \
    .init = s_init, .types = s_types, .shapes = s_shapes, .run = s_run, .doc = "ONNX " nm
#define S2(nm, id)                                                                                 \
    {S_COMMON(nm, "1", id##1, s_axis1, PRT__ONNX_FLOATS), .max_in = 1},                           \
    {S_COMMON(nm, "13", id##13, s_axis13, PRT__ONNX_FLOATS), .max_in = 1}

static const prt__onnx_def softmax_defs[] = {
    S2("Softmax", r_softmax),
    S2("LogSoftmax", r_logsoftmax),
    S2("Hardmax", r_hardmax),
    {S_COMMON("CumSum", "11", r_cumsum, s_cumsum, PRT__ONNX_NUMERIC), .max_in = 2},
    {S_COMMON("CumProd", "26", r_cumprod, s_cumsum, PRT__ONNX_NUMERIC), .max_in = 2},
};
PRT__ONNX_REGISTER_TABLE(softmax_defs)
