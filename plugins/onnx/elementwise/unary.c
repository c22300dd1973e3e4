/*
 * onnx/elementwise/unary.c - every one-input elementwise ONNX op as a row of
 * one table over one kernel: math functions, activations with attributes,
 * IsNaN / IsInf, Not, Clip. See README.md in this folder.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../common/ew_prog.h"
#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct uattr {
    double alpha, beta, gamma, lambd, bias;
    double lo, hi;       /* Clip */
    int32_t gelu_tanh;   /* Gelu approximate="tanh" */
    int32_t det_neg, det_pos;
    int32_t lo_field, hi_field; /* Clip v11: bound given as a field */
} uattr;

typedef void (*ufn_d)(double *y, const double *x, int64_t n, const uattr *a);
typedef void (*ufn_i)(int64_t *y, const int64_t *x, int64_t n, const uattr *a);

typedef struct urow {
    ufn_d fd;     /* float dtypes (and integers when fi is NULL) */
    ufn_i fi;     /* integer and bool dtypes; NULL: through fd */
    int out_bool; /* output is bool */
    int clip_inputs; /* Clip v11+: min / max may come as inputs 1 and 2 */
    int ew;       /* 1 + the prt__ew_op that runs it in f32; 0: none */
    int copy;     /* Identity: the bytes as they are */
} urow;

#define UD(fname, expr)                                                                            \
    static void fname(double *y, const double *x, int64_t n, const uattr *a)                       \
    {                                                                                              \
        int64_t k;                                                                                 \
        (void)a;                                                                                   \
        for (k = 0; k < n; k++) {                                                                  \
            const double v = x[k];                                                                 \
            y[k] = (expr);                                                                         \
        }                                                                                          \
    }
#define UI(fname, expr)                                                                            \
    static void fname(int64_t *y, const int64_t *x, int64_t n, const uattr *a)                     \
    {                                                                                              \
        int64_t k;                                                                                 \
        (void)a;                                                                                   \
        for (k = 0; k < n; k++) {                                                                  \
            const int64_t v = x[k];                                                                \
            y[k] = (expr);                                                                         \
        }                                                                                          \
    }

static double sigmoid(double v) { return v >= 0 ? 1.0 / (1.0 + exp(-v)) : exp(v) / (1.0 + exp(v)); }
static double softplus(double v) { return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v)); }
static double clamp01(double v) { return v < 0 ? 0.0 : v > 1 ? 1.0 : v; } /* NaN stays NaN */
static double round_even(double v) { return nearbyint(v); } /* default rounding mode: half to even */
static double gelu(double v, int tanh_form)
{
    if (tanh_form) return 0.5 * v * (1.0 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    return 0.5 * v * (1.0 + erf(v * 0.7071067811865476));
}

UD(d_abs, fabs(v))
UD(d_neg, -v)
UD(d_ceil, ceil(v))
UD(d_floor, floor(v))
UD(d_round, round_even(v))
UD(d_sqrt, sqrt(v))
UD(d_exp, exp(v))
UD(d_log, log(v))
UD(d_recip, 1.0 / v)
UD(d_sin, sin(v))
UD(d_cos, cos(v))
UD(d_tan, tan(v))
UD(d_asin, asin(v))
UD(d_acos, acos(v))
UD(d_atan, atan(v))
UD(d_sinh, sinh(v))
UD(d_cosh, cosh(v))
UD(d_asinh, asinh(v))
UD(d_acosh, acosh(v))
UD(d_atanh, atanh(v))
UD(d_sign, v > 0 ? 1.0 : v < 0 ? -1.0 : v) /* NaN and +-0 stay */
UD(d_erf, erf(v))
UD(d_sigmoid, sigmoid(v))
UD(d_tanh, tanh(v))
UD(d_relu, v > 0 ? v : (v != v ? v : 0.0))
UD(d_softplus, softplus(v))
UD(d_softsign, v / (1.0 + fabs(v)))
UD(d_mish, v * tanh(softplus(v)))
UD(d_hardswish, v * clamp01(v / 6.0 + 0.5))
UD(d_hardsigmoid, clamp01(a->alpha * v + a->beta))
UD(d_leakyrelu, v >= 0 ? v : a->alpha * v)
UD(d_elu, v >= 0 ? v : a->alpha * (exp(v) - 1.0))
UD(d_celu, fmax(0.0, v) + fmin(0.0, a->alpha * (exp(v / a->alpha) - 1.0)))
UD(d_selu, a->gamma * (v > 0 ? v : a->alpha * (exp(v) - 1.0)))
UD(d_thresholdedrelu, v > a->alpha ? v : 0.0)
UD(d_shrink, v < -a->lambd ? v + a->bias : v > a->lambd ? v - a->bias : 0.0)
UD(d_gelu, gelu(v, a->gelu_tanh))
UD(d_isnan, v != v ? 1.0 : 0.0)
UD(d_isinf, isinf(v) && ((v > 0 && a->det_pos) || (v < 0 && a->det_neg)) ? 1.0 : 0.0)
UD(d_clip, v != v ? v : fmin(fmax(v, a->lo), a->hi)) /* min > max gives max, as numpy */
UD(d_copy, v)

/* Integer forms; negation and abs wrap like the C types' unsigned arithmetic. */
UI(i_abs, v < 0 ? (int64_t)(0 - (uint64_t)v) : v)
UI(i_neg, (int64_t)(0 - (uint64_t)v))
UI(i_sign, v > 0 ? 1 : v < 0 ? -1 : 0)
UI(i_relu, v > 0 ? v : 0)
UI(i_not, !v)
UI(i_bnot, ~v)
UI(i_copy, v)
UI(i_clip, (double)v > a->hi ? (int64_t)a->hi : (double)v < a->lo ? (int64_t)a->lo : v)
UI(i_shrink, (double)v < -a->lambd ? (int64_t)((double)v + a->bias)
             : (double)v > a->lambd ? (int64_t)((double)v - a->bias) : 0)

#define R(nm, d, i) static const urow nm = {.fd = d, .fi = i}
#define RE(nm, d, i, op) static const urow nm = {.fd = d, .fi = i, .ew = 1 + (op)}
RE(r_abs, d_abs, i_abs, PRT__EW_ABS);
RE(r_neg, d_neg, i_neg, PRT__EW_NEG);
RE(r_ceil, d_ceil, NULL, PRT__EW_CEIL);
RE(r_floor, d_floor, NULL, PRT__EW_FLOOR);
R(r_round, d_round, NULL);
RE(r_sqrt, d_sqrt, NULL, PRT__EW_SQRT);
RE(r_exp, d_exp, NULL, PRT__EW_EXP);
RE(r_log, d_log, NULL, PRT__EW_LOG);
RE(r_recip, d_recip, NULL, PRT__EW_RECIPROCAL);
R(r_sin, d_sin, NULL);
R(r_cos, d_cos, NULL);
R(r_tan, d_tan, NULL);
R(r_asin, d_asin, NULL);
R(r_acos, d_acos, NULL);
R(r_atan, d_atan, NULL);
R(r_sinh, d_sinh, NULL);
R(r_cosh, d_cosh, NULL);
R(r_asinh, d_asinh, NULL);
R(r_acosh, d_acosh, NULL);
R(r_atanh, d_atanh, NULL);
R(r_sign, d_sign, i_sign);
RE(r_erf, d_erf, NULL, PRT__EW_ERF);
RE(r_sigmoid, d_sigmoid, NULL, PRT__EW_SIGMOID);
RE(r_tanh, d_tanh, NULL, PRT__EW_TANH);
RE(r_relu, d_relu, i_relu, PRT__EW_RELU);
RE(r_softplus, d_softplus, NULL, PRT__EW_SOFTPLUS);
R(r_softsign, d_softsign, NULL);
R(r_mish, d_mish, NULL);
RE(r_hardswish, d_hardswish, NULL, PRT__EW_HARDSWISH);
RE(r_hardsigmoid, d_hardsigmoid, NULL, PRT__EW_HARDSIGMOID);
RE(r_leakyrelu, d_leakyrelu, NULL, PRT__EW_LEAKYRELU);
RE(r_elu, d_elu, NULL, PRT__EW_ELU);
R(r_celu, d_celu, NULL);
R(r_selu, d_selu, NULL);
R(r_thresholdedrelu, d_thresholdedrelu, NULL);
R(r_shrink, d_shrink, i_shrink);
RE(r_gelu, d_gelu, NULL, PRT__EW_GELU); /* approximate="none" only */
R(r_not, NULL, i_not);
R(r_bnot, NULL, i_bnot);
static const urow r_identity = {.fd = d_copy, .fi = i_copy, .copy = 1};
RE(r_clip6, d_clip, i_clip, PRT__EW_CLIP);
static const urow r_clip11 = {.fd = d_clip, .fi = i_clip, .clip_inputs = 1, .ew = 1 + PRT__EW_CLIP};
static const urow r_isnan = {.fd = d_isnan, .out_bool = 1};
static const urow r_isinf = {.fd = d_isinf, .out_bool = 1};

/* ---- attributes ------------------------------------------------------------- */

static prt_status u_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    uattr *a = PRT__ONNX_STATE(n, uattr);
    const prt_field *f;
    a->alpha = prt_fields_f64(fc, "alpha", 0, 0.0);
    a->beta = prt_fields_f64(fc, "beta", 0, 0.0);
    a->gamma = prt_fields_f64(fc, "gamma", 0, 0.0);
    a->lambd = prt_fields_f64(fc, "lambd", 0, 0.0);
    a->bias = prt_fields_f64(fc, "bias", 0, 0.0);
    a->det_neg = prt_fields_i64(fc, "detect_negative", 0, 1) != 0;
    a->det_pos = prt_fields_i64(fc, "detect_positive", 0, 1) != 0;
    a->lo = prt_fields_f64(fc, "min", 0, -INFINITY);
    a->hi = prt_fields_f64(fc, "max", 0, INFINITY);
    if (strcmp(n->def->name, "Celu") == 0 && a->alpha == 0) {
        prt_msg_set(err, "%s v%s: field \"alpha\" must not be 0", n->def->name, n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (prt_fields_find(fc, "approximate")) {
        a->gelu_tanh = prt__onnx_str_is(fc, "approximate", "tanh", 0);
        if (!a->gelu_tanh && !prt__onnx_str_is(fc, "approximate", "none", 1)) {
            f = prt_fields_find(fc, "approximate");
            prt_msg_set(err, "%s v%s: field \"approximate\" must be \"none\" or \"tanh\", got \"%.*s\"",
                        n->def->name, n->def->version, (int)(f->count > 32 ? 32 : f->count),
                        (const char *)f->data);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    if ((f = prt_fields_find(fc, "input:1")) && f->count > 0) {
        prt_field_get_f64(f, 0, &a->lo);
        a->lo_field = 1;
    }
    if ((f = prt_fields_find(fc, "input:2")) && f->count > 0) {
        prt_field_get_f64(f, 0, &a->hi);
        a->hi_field = 1;
    }
    return PRT_OK;
}

static prt_status u_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const urow *r = n->def->row;
    prt_status st = prt__onnx_types_same(n, in, nb_in, out, err);
    if (st == PRT_OK && r->out_bool) out[0] = PRT_DTYPE_BOOL;
    return st;
}

/* Clip v11+: min and max, from fields or inputs 1 and 2 (an empty one is absent). */
static prt_status u_clip_bounds(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                                const void *const *x, uattr *a, prt_msg *err)
{
    int32_t next = 1, which;
    for (which = 0; which < 2; which++) {
        double *dst = which ? &a->hi : &a->lo;
        int from_field = which ? a->hi_field : a->lo_field;
        int64_t vol;
        if (from_field || next >= nb_in) continue;
        vol = prt_dims_volume(&in[next].dims);
        if (vol > 1) {
            prt_msg_set(err, "input %d (%s) must be a scalar, got %lld elements", (int)next,
                        which ? "max" : "min", (long long)vol);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (vol == 1) *dst = prt__onnx_get_f64(x[next], in[next].dtype, 0);
        next++;
    }
    (void)n;
    return PRT_OK;
}

typedef struct ujob {
    const urow *r;
    const uattr *a;
    const void *x;
    void *y;
    prt_dtype tx, ty;
    int use_int;
} ujob;

static void u_range(void *arg, int64_t begin, int64_t end)
{
    const ujob *j = arg;
    double xd[PRT__ONNX_RUN], yd[PRT__ONNX_RUN];
    int64_t xi[PRT__ONNX_RUN], yi[PRT__ONNX_RUN];
    int64_t b, n;
    for (b = begin; b < end; b += n) {
        n = end - b < PRT__ONNX_RUN ? end - b : PRT__ONNX_RUN;
        if (j->use_int) {
            prt__onnx_gather_i64(xi, j->x, j->tx, b, 1, n);
            j->r->fi(yi, xi, n, j->a);
            prt__onnx_scatter_i64(j->y, j->ty, b, yi, n);
        } else {
            prt__onnx_gather_f64(xd, j->x, j->tx, b, 1, n);
            j->r->fd(yd, xd, n, j->a);
            prt__onnx_scatter_f64(j->y, j->ty, b, yd, n);
        }
    }
}

/* f32 in and out: the op as a program of one instruction; its parameters,
 * if any, are consts[0] and consts[1]. */
static prt_status u_run_f32(const urow *r, const uattr *a, const prt_tensor_desc *in, const prt_tensor_desc *out,
                            const void *const *x, void *const *y, prt_exec *ex, prt_msg *err)
{
    const prt__ew_instr ins = {r->ew - 1, 0, 0, 0};
    const float consts[2] = {
        (float)(r->ew - 1 == PRT__EW_CLIP ? a->lo : a->alpha),
        (float)(r->ew - 1 == PRT__EW_CLIP ? a->hi : a->beta),
    };
    const prt__ew_prog prog = {&ins, 1, consts, 2, 1};
    const float *xs[1] = {x[0]};
    prt__ew_bcast bc;
    prt_status st = prt__ew_plan(&bc, 1, &in[0].dims, &out[0].dims, err);
    if (st == PRT_OK) prt__ew_run(&prog, &bc, xs, y[0], ex);
    return st;
}

static prt_status u_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const urow *r = n->def->row;
    uattr a = *PRT__ONNX_STATE(n, uattr);
    ujob j = {r, &a, x[0], y[0], in[0].dtype, out[0].dtype, 0};
    int64_t vol = prt_dims_volume(&in[0].dims);
    prt_status st;
    (void)ws;
    if (r->clip_inputs && (st = u_clip_bounds(n, in, nb_in, x, &a, err)) != PRT_OK) return st;
    if (r->copy) {
        if (vol > 0 && x[0] != y[0]) memcpy(y[0], x[0], (size_t)vol * prt_dtype_size(in[0].dtype));
        return PRT_OK;
    }
    if (r->ew && in[0].dtype == PRT_DTYPE_F32 && out[0].dtype == PRT_DTYPE_F32 && !a.gelu_tanh &&
        prt__ew_fast_paths())
        return u_run_f32(r, &a, in, out, x, y, ex, err);
    j.use_int = r->fi && (!prt__onnx_is_float(in[0].dtype) || !r->fd);
    if (vol <= 0) return PRT_OK;
    if (vol <= 16384)
        u_range(&j, 0, vol);
    else
        ex->parallel_for(ex, vol, 16384, u_range, &j);
    return PRT_OK;
}

/* ---- the table ---------------------------------------------------------------- */

static const prt_field_schema s_legacy[] = {
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy (opset < 6), ignored"),
};
static const prt_field_schema s_leaky1[] = {
    PRT__ONNX_F32("alpha", 0.01f, "slope for x < 0"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_elu1[] = {
    PRT__ONNX_F32("alpha", 1.0f, "alpha * (exp(x) - 1) for x < 0"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_celu[] = {PRT__ONNX_F32("alpha", 1.0f, "alpha, not 0")};
static const prt_field_schema s_thr[] = {PRT__ONNX_F32("alpha", 1.0f, "threshold")};
static const prt_field_schema s_selu1[] = {
    PRT__ONNX_F32("alpha", 1.67326319217681884765625f, "alpha"),
    PRT__ONNX_F32("gamma", 1.05070102214813232421875f, "gamma"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_hsig1[] = {
    PRT__ONNX_F32("alpha", 0.2f, "slope"),
    PRT__ONNX_F32("beta", 0.5f, "offset"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_shrink[] = {
    PRT__ONNX_F32("bias", 0.0f, "subtracted from |x| beyond lambd"),
    PRT__ONNX_F32("lambd", 0.5f, "threshold"),
};
static const prt_field_schema s_gelu[] = {PRT__ONNX_STR("approximate", "none", "\"none\" (erf) or \"tanh\"")};
static const prt_field_schema s_isinf[] = {
    PRT__ONNX_I64("detect_negative", 1, "map -inf to true"),
    PRT__ONNX_I64("detect_positive", 1, "map +inf to true"),
};
/* Versions before 6 add "consumed_inputs", listed last: version 6 uses the
 * same array without it (PRT__ONNX_NFIELDS(s) - 1). */
static const prt_field_schema s_clip1[] = {
    PRT__ONNX_F32("min", -FLT_MAX, "lower bound"),
    PRT__ONNX_F32("max", FLT_MAX, "upper bound"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_clip11[] = {
    PRT__ONNX_OPT("input:1", PRT_FIELD_FLOAT32, "min as a constant (interim shape-value form)"),
    PRT__ONNX_OPT("input:2", PRT_FIELD_FLOAT32, "max as a constant (interim shape-value form)"),
};

#define U_COMMON(nm, ver, rw, mask)                                                                \
    .name = nm, .version = ver, .min_in = 1, .nb_out = 1, .in_mask = (mask),                       \
    .state_size = sizeof(uattr), .row = &(rw), .init = u_init, .types = u_types,                   \
    .shapes = prt__onnx_shapes_same, .run = u_run
#define UA6(nm, ver, rw, mask, sch)                                                                \
    {U_COMMON(nm, ver, rw, mask), .max_in = 1, .schema = sch, .nb_fields = PRT__ONNX_NFIELDS(sch) - 1, \
     .doc = "ONNX " nm " (elementwise)"}
#define U(nm, ver, rw, mask) {U_COMMON(nm, ver, rw, mask), .max_in = 1, .doc = "ONNX " nm " (elementwise)"}
#define UA(nm, ver, rw, mask, sch)                                                                 \
    {U_COMMON(nm, ver, rw, mask), .max_in = 1, .schema = sch, .nb_fields = PRT__ONNX_NFIELDS(sch),             \
     .doc = "ONNX " nm " (elementwise)"}

#define FL PRT__ONNX_FLOATS
#define SG PRT__ONNX_SIGNED
#define NU PRT__ONNX_NUMERIC

static const prt__onnx_def unary_defs[] = {
    UA("Abs", "1", r_abs, NU, s_legacy), U("Abs", "6", r_abs, NU),
    UA("Neg", "1", r_neg, SG, s_legacy), U("Neg", "6", r_neg, SG),
    UA("Ceil", "1", r_ceil, FL, s_legacy), U("Ceil", "6", r_ceil, FL),
    UA("Floor", "1", r_floor, FL, s_legacy), U("Floor", "6", r_floor, FL),
    U("Round", "11", r_round, FL),
    UA("Sqrt", "1", r_sqrt, FL, s_legacy), U("Sqrt", "6", r_sqrt, FL),
    UA("Exp", "1", r_exp, FL, s_legacy), U("Exp", "6", r_exp, FL),
    UA("Log", "1", r_log, FL, s_legacy), U("Log", "6", r_log, FL),
    UA("Reciprocal", "1", r_recip, FL, s_legacy), U("Reciprocal", "6", r_recip, FL),
    U("Sin", "7", r_sin, FL), U("Cos", "7", r_cos, FL), U("Tan", "7", r_tan, FL),
    U("Asin", "7", r_asin, FL), U("Acos", "7", r_acos, FL), U("Atan", "7", r_atan, FL),
    U("Sinh", "9", r_sinh, FL), U("Cosh", "9", r_cosh, FL), U("Asinh", "9", r_asinh, FL),
    U("Acosh", "9", r_acosh, FL), U("Atanh", "9", r_atanh, FL),
    U("Sign", "9", r_sign, NU),
    U("Erf", "9", r_erf, NU),
    UA("Sigmoid", "1", r_sigmoid, FL, s_legacy), U("Sigmoid", "6", r_sigmoid, FL),
    UA("Tanh", "1", r_tanh, FL, s_legacy), U("Tanh", "6", r_tanh, FL),
    UA("Relu", "1", r_relu, SG, s_legacy), U("Relu", "6", r_relu, SG),
    U("Softplus", "1", r_softplus, FL),
    U("Softsign", "1", r_softsign, FL),
    U("Mish", "18", r_mish, FL),
    U("HardSwish", "14", r_hardswish, FL),
    UA("HardSigmoid", "1", r_hardsigmoid, FL, s_hsig1), UA6("HardSigmoid", "6", r_hardsigmoid, FL, s_hsig1),
    UA("LeakyRelu", "1", r_leakyrelu, FL, s_leaky1), UA6("LeakyRelu", "6", r_leakyrelu, FL, s_leaky1),
    UA("Elu", "1", r_elu, FL, s_elu1), UA6("Elu", "6", r_elu, FL, s_elu1),
    UA("Celu", "12", r_celu, FL, s_celu),
    UA("Selu", "1", r_selu, FL, s_selu1), UA6("Selu", "6", r_selu, FL, s_selu1),
    UA("ThresholdedRelu", "10", r_thresholdedrelu, FL, s_thr),
    UA("Shrink", "9", r_shrink, NU, s_shrink),
    UA("Gelu", "20", r_gelu, FL, s_gelu),
    U("IsNaN", "9", r_isnan, FL),
    UA("IsInf", "10", r_isinf, FL, s_isinf),
    U("Not", "1", r_not, PRT__ONNX_BOOL),
    U("BitwiseNot", "18", r_bnot, PRT__ONNX_INTS),
    U("Identity", "1", r_identity, PRT__ONNX_ALL),
    UA("Clip", "1", r_clip6, FL, s_clip1), UA6("Clip", "6", r_clip6, FL, s_clip1),
    {U_COMMON("Clip", "11", r_clip11, NU), .max_in = 3, .schema = s_clip11,
     .nb_fields = PRT__ONNX_NFIELDS(s_clip11), .doc = "ONNX Clip (min / max as inputs)"},
};
PRT__ONNX_REGISTER_TABLE(unary_defs)
