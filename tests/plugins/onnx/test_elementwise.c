/* ONNX elementwise ops (plugins/onnx/elementwise): unary math and activations
 * against float64 references, attributes, integer and bool types, fp16,
 * broadcasting (0-d, empty, multi-input), comparisons, logical ops, Cast,
 * Dropout, Where, and bad fields / shapes / types with clear errors. */
#include <float.h>
#include <math.h>

#include "onnx_test_util.h"
#include "prt_test.h"

#define RTOL 1e-5

typedef double (*ref1)(double);

static double r_relu(double v) { return v > 0 ? v : 0; }
static double r_sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }
static double r_softplus(double v) { return log(1.0 + exp(v)); }
static double r_softsign(double v) { return v / (1.0 + fabs(v)); }
static double r_mish(double v) { return v * tanh(log(1.0 + exp(v))); }
static double r_hardswish(double v) { return v * fmax(0, fmin(1, v / 6 + 0.5)); }
static double r_recip(double v) { return 1.0 / v; }
static double r_neg(double v) { return -v; }
static double r_sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
static double r_round(double v)
{
    double f = floor(v), d = v - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return fmod(f, 2.0) == 0 ? f : f + 1;
}

static const struct {
    const char *name, *ver;
    ref1 f;
    double lo, hi;
} unary_cases[] = {
    {"Abs", "6", fabs, -5, 5},        {"Neg", "6", r_neg, -5, 5},         {"Ceil", "6", ceil, -5, 5},
    {"Floor", "6", floor, -5, 5},     {"Round", "11", r_round, -5, 5},    {"Sqrt", "6", sqrt, 0.01, 9},
    {"Exp", "6", exp, -5, 5},         {"Log", "6", log, 0.01, 9},         {"Reciprocal", "6", r_recip, 0.5, 9},
    {"Sin", "7", sin, -5, 5},         {"Cos", "7", cos, -5, 5},           {"Tan", "7", tan, -1.2, 1.2},
    {"Asin", "7", asin, -0.99, 0.99}, {"Acos", "7", acos, -0.99, 0.99},   {"Atan", "7", atan, -5, 5},
    {"Sinh", "9", sinh, -5, 5},       {"Cosh", "9", cosh, -5, 5},         {"Asinh", "9", asinh, -5, 5},
    {"Acosh", "9", acosh, 1.01, 9},   {"Atanh", "9", atanh, -0.99, 0.99}, {"Sign", "9", r_sign, -5, 5},
    {"Erf", "9", erf, -3, 3},         {"Sigmoid", "6", r_sigmoid, -9, 9}, {"Tanh", "6", tanh, -5, 5},
    {"Relu", "6", r_relu, -5, 5},     {"Softplus", "1", r_softplus, -9, 9},
    {"Softsign", "1", r_softsign, -9, 9}, {"Mish", "18", r_mish, -9, 9},
    {"HardSwish", "14", r_hardswish, -5, 5}, {"Identity", "1", NULL, -5, 5},
    {"Sigmoid", "1", r_sigmoid, -9, 9}, {"Abs", "1", fabs, -5, 5},
};

/* Every unary math op in f32 (3 threads, a tensor large enough to split) and
 * f16 against float64. */
TEST(unary_math_f32_and_f16_match_float64)
{
    size_t c;
    char msg[512];
    for (c = 0; c < sizeof unary_cases / sizeof unary_cases[0]; c++) {
        int pass;
        for (pass = 0; pass < 2; pass++) {
            prt_dtype t = pass ? PRT_DTYPE_F16 : PRT_DTYPE_F32;
            prt_dims d = pass ? ot_dims(2, (int64_t)3, (int64_t)7) : ot_dims(3, (int64_t)5, (int64_t)70, (int64_t)97);
            ot_tensor x = ot_rand(t, d, unary_cases[c].lo, unary_cases[c].hi, (uint32_t)c), y;
            int64_t i, n = ot_vol(&x);
            double *ref = malloc((size_t)n * sizeof *ref);
            prt_status s = ot_run(unary_cases[c].name, unary_cases[c].ver, NULL, 0, &x, 1, &y, 1, 3, msg, sizeof msg);
            CHECK_MSG(s == PRT_OK, "%s: %s", unary_cases[c].name, msg);
            if (s == PRT_OK) {
                CHECK_EQ_INT(y.t, t);
                CHECK(prt_dims_equal(&y.d, &d));
                for (i = 0; i < n; i++) {
                    double v = ot_get(&x, i);
                    ref[i] = unary_cases[c].f ? unary_cases[c].f(v) : v;
                    if (pass) ref[i] = prt_f16_to_f32(prt_f32_to_f16((float)ref[i]));
                }
                CHECK_EQ_INT(ot_compare(&y, ref, n, pass ? 1e-3 : RTOL, 1e-30, unary_cases[c].name), 0);
            }
            ot_free(&x);
            ot_free(&y);
            free(ref);
        }
    }
}

static int64_t run1(const char *name, const char *ver, const prt_field *f, int nf, ot_tensor *x, const double *ref)
{
    ot_tensor y;
    char msg[512];
    int64_t bad;
    prt_status s = ot_run(name, ver, f, nf, x, 1, &y, 1, 1, msg, sizeof msg);
    CHECK_MSG(s == PRT_OK, "%s: %s", name, msg);
    if (s != PRT_OK) return 1;
    bad = ot_compare(&y, ref, ot_vol(x), RTOL, 1e-30, name);
    ot_free(&y);
    return bad;
}

TEST(activations_with_attributes_match_float64)
{
    const double xs[] = {-4, -1.5, -0.25, -0.0, 0.0, 0.3, 0.5, 1.0, 2.5, 7.0};
    const int n = 10;
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)n), xs);
    double ref[10];
    const float a02 = 0.2f, a15 = 1.5f, b07 = 0.7f, g3 = 3.0f, l1 = 1.0f, bias = 0.25f;
    int i;
    prt_field f[2];
    /* LeakyRelu, default alpha 0.01, then alpha 0.2 */
    for (i = 0; i < n; i++) ref[i] = xs[i] >= 0 ? xs[i] : 0.01f * xs[i];
    CHECK_EQ_INT(run1("LeakyRelu", "6", NULL, 0, &x, ref), 0);
    f[0] = ot_f32("alpha", &a02, 1);
    for (i = 0; i < n; i++) ref[i] = xs[i] >= 0 ? xs[i] : 0.2f * xs[i];
    CHECK_EQ_INT(run1("LeakyRelu", "6", f, 1, &x, ref), 0);
    /* Elu alpha 1.5 */
    f[0] = ot_f32("alpha", &a15, 1);
    for (i = 0; i < n; i++) ref[i] = xs[i] >= 0 ? xs[i] : 1.5 * (exp(xs[i]) - 1);
    CHECK_EQ_INT(run1("Elu", "6", f, 1, &x, ref), 0);
    /* Celu alpha 1.5 */
    for (i = 0; i < n; i++) ref[i] = fmax(0, xs[i]) + fmin(0, 1.5 * (exp(xs[i] / 1.5) - 1));
    CHECK_EQ_INT(run1("Celu", "12", f, 1, &x, ref), 0);
    /* ThresholdedRelu alpha 1.5 */
    for (i = 0; i < n; i++) ref[i] = xs[i] > 1.5 ? xs[i] : 0;
    CHECK_EQ_INT(run1("ThresholdedRelu", "10", f, 1, &x, ref), 0);
    /* Selu defaults and custom */
    for (i = 0; i < n; i++)
        ref[i] = 1.05070102214813232421875 * (xs[i] > 0 ? xs[i] : 1.67326319217681884765625 * (exp(xs[i]) - 1));
    CHECK_EQ_INT(run1("Selu", "6", NULL, 0, &x, ref), 0);
    f[0] = ot_f32("alpha", &a15, 1);
    f[1] = ot_f32("gamma", &g3, 1);
    for (i = 0; i < n; i++) ref[i] = 3.0 * (xs[i] > 0 ? xs[i] : 1.5 * (exp(xs[i]) - 1));
    CHECK_EQ_INT(run1("Selu", "6", f, 2, &x, ref), 0);
    /* HardSigmoid defaults, then alpha 0.2 beta 0.7 */
    for (i = 0; i < n; i++) ref[i] = fmax(0, fmin(1, 0.2f * xs[i] + 0.5));
    CHECK_EQ_INT(run1("HardSigmoid", "6", NULL, 0, &x, ref), 0);
    f[0] = ot_f32("alpha", &a02, 1);
    f[1] = ot_f32("beta", &b07, 1);
    for (i = 0; i < n; i++) ref[i] = fmax(0, fmin(1, (double)a02 * xs[i] + (double)b07));
    CHECK_EQ_INT(run1("HardSigmoid", "6", f, 2, &x, ref), 0);
    /* Shrink lambd 1 bias 0.25 */
    f[0] = ot_f32("lambd", &l1, 1);
    f[1] = ot_f32("bias", &bias, 1);
    for (i = 0; i < n; i++) ref[i] = xs[i] < -1 ? xs[i] + 0.25 : xs[i] > 1 ? xs[i] - 0.25 : 0;
    CHECK_EQ_INT(run1("Shrink", "9", f, 2, &x, ref), 0);
    /* Gelu exact and tanh */
    for (i = 0; i < n; i++) ref[i] = 0.5 * xs[i] * (1 + erf(xs[i] / sqrt(2.0)));
    CHECK_EQ_INT(run1("Gelu", "20", NULL, 0, &x, ref), 0);
    f[0] = ot_str("approximate", "tanh");
    for (i = 0; i < n; i++)
        ref[i] = 0.5 * xs[i] * (1 + tanh(sqrt(2.0 / M_PI) * (xs[i] + 0.044715 * pow(xs[i], 3))));
    CHECK_EQ_INT(run1("Gelu", "20", f, 1, &x, ref), 0);
    /* Clip v6 attributes */
    f[0] = ot_f32("min", &(float){-1.0f}, 1);
    f[1] = ot_f32("max", &(float){2.0f}, 1);
    for (i = 0; i < n; i++) ref[i] = fmin(2, fmax(-1, xs[i]));
    CHECK_EQ_INT(run1("Clip", "6", f, 2, &x, ref), 0);
    /* Clip with min > max gives max everywhere, as numpy */
    f[0] = ot_f32("min", &(float){2.0f}, 1);
    f[1] = ot_f32("max", &(float){1.0f}, 1);
    for (i = 0; i < n; i++) ref[i] = 1.0;
    CHECK_EQ_INT(run1("Clip", "6", f, 2, &x, ref), 0);
    /* Clip v11: max as a field only (min absent) */
    f[0] = ot_f32("input:2", &(float){0.4f}, 1);
    for (i = 0; i < n; i++) ref[i] = fmin(0.4f, xs[i]);
    CHECK_EQ_INT(run1("Clip", "11", f, 1, &x, ref), 0);
    ot_free(&x);
}

TEST(clip_takes_min_and_max_as_inputs_and_checks_them)
{
    const double xs[] = {-3, -1, 0, 1, 3, 5};
    ot_tensor in[3], y;
    double ref[6];
    char msg[512];
    int i;
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(2, (int64_t)2, (int64_t)3), xs);
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(0), (const double[]){-2});
    in[2] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)1), (const double[]){2});
    CHECK_OK(ot_run("Clip", "11", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg));
    for (i = 0; i < 6; i++) ref[i] = fmin(2, fmax(-2, xs[i]));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
    CHECK_EQ_INT(ot_compare(&y, ref, 6, 0, 0, "Clip i32"), 0);
    ot_free(&y);
    /* Only min */
    CHECK_OK(ot_run("Clip", "11", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    for (i = 0; i < 6; i++) ref[i] = fmax(-2, xs[i]);
    CHECK_EQ_INT(ot_compare(&y, ref, 6, 0, 0, "Clip min only"), 0);
    ot_free(&y);
    /* A non-scalar bound is refused at run time with its name */
    ot_free(&in[2]);
    in[2] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)2), (const double[]){2, 3});
    CHECK(ot_run("Clip", "11", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "max");
    CHECK_STR_CONTAINS(msg, "scalar");
    for (i = 0; i < 3; i++) ot_free(&in[i]);
}

TEST(isnan_isinf_not_give_bool)
{
    const double xs[] = {1, NAN, INFINITY, -INFINITY, 0, -2};
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)6), xs), y;
    char msg[256];
    int64_t neg0 = 0;
    prt_field f = ot_i64("detect_negative", &neg0, 1);
    CHECK_OK(ot_run("IsNaN", "9", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_BOOL);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 1, 0, 0, 0, 0}, 6, 0, 0, "IsNaN"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("IsInf", "10", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 0, 1, 1, 0, 0}, 6, 0, 0, "IsInf"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("IsInf", "10", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 0, 1, 0, 0, 0}, 6, 0, 0, "IsInf positive only"), 0);
    ot_free(&y);
    ot_free(&x);
    x = ot_make(PRT_DTYPE_BOOL, ot_dims(1, (int64_t)3), (const double[]){1, 0, 1});
    CHECK_OK(ot_run("Not", "1", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_BOOL);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 1, 0}, 3, 0, 0, "Not"), 0);
    ot_free(&y);
    /* Not refuses a float input, naming the dtype */
    ot_free(&x);
    x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), NULL);
    CHECK(ot_run("Not", "1", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "f32");
    ot_free(&x);
}

TEST(integer_unary_ops_are_exact_and_wrap)
{
    const double v8[] = {-128, -5, 0, 7, 127};
    ot_tensor x = ot_make(PRT_DTYPE_I8, ot_dims(1, (int64_t)5), v8), y;
    ot_tensor x64;
    char msg[256];
    CHECK_OK(ot_run("Abs", "6", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I8);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-128, 5, 0, 7, 127}, 5, 0, 0, "Abs i8 (wraps at -128)"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Neg", "6", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-128, 5, 0, -7, -127}, 5, 0, 0, "Neg i8"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Relu", "6", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 0, 0, 7, 127}, 5, 0, 0, "Relu i8"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Sign", "9", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-1, -1, 0, 1, 1}, 5, 0, 0, "Sign i8"), 0);
    ot_free(&y);
    ot_free(&x);
    /* int64 beyond 2^53 stays exact */
    x64 = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)2), NULL);
    ((int64_t *)x64.data)[0] = -(((int64_t)1 << 60) + 1);
    ((int64_t *)x64.data)[1] = ((int64_t)1 << 60) + 3;
    CHECK_OK(ot_run("Abs", "6", NULL, 0, &x64, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(((int64_t *)y.data)[0], ((int64_t)1 << 60) + 1);
    CHECK_EQ_INT(((int64_t *)y.data)[1], ((int64_t)1 << 60) + 3);
    ot_free(&y);
    ot_free(&x64);
}

TEST(empty_and_scalar_tensors)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)2, (int64_t)0, (int64_t)3), NULL), y;
    ot_tensor s = ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){-2.5});
    char msg[256];
    CHECK_OK(ot_run("Exp", "6", NULL, 0, &x, 1, &y, 1, 2, msg, sizeof msg));
    CHECK(prt_dims_equal(&y.d, &x.d));
    ot_free(&y);
    CHECK_OK(ot_run("Abs", "6", NULL, 0, &s, 1, &y, 1, 2, msg, sizeof msg));
    CHECK_EQ_INT(y.d.nb, 0);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){2.5}, 1, 0, 0, "Abs 0-d"), 0);
    ot_free(&y);
    ot_free(&x);
    ot_free(&s);
}

/* ---- binary ---------------------------------------------------------------- */

static double bref(const char *op, double a, double b)
{
    if (!strcmp(op, "Add")) return a + b;
    if (!strcmp(op, "Sub")) return a - b;
    if (!strcmp(op, "Mul")) return a * b;
    if (!strcmp(op, "Div")) return a / b;
    if (!strcmp(op, "Pow")) return pow(a, b);
    if (!strcmp(op, "Equal")) return a == b;
    if (!strcmp(op, "Greater")) return a > b;
    if (!strcmp(op, "Less")) return a < b;
    if (!strcmp(op, "GreaterOrEqual")) return a >= b;
    if (!strcmp(op, "LessOrEqual")) return a <= b;
    if (!strcmp(op, "Max")) return fmax(a, b);
    if (!strcmp(op, "Min")) return fmin(a, b);
    if (!strcmp(op, "Sum")) return a + b;
    return NAN;
}

TEST(binary_ops_broadcast_like_numpy)
{
    static const char *const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Greater", "Less",
                                      "GreaterOrEqual", "LessOrEqual", "Max", "Min", "Sum"};
    static const char *const vers[] = {"7", "7", "7", "7", "7", "7", "7", "7", "12", "12", "6", "6", "6"};
    prt_dims shapes[][3] = {
        {ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4), ot_dims(2, (int64_t)3, (int64_t)1),
         ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4)},
        {ot_dims(2, (int64_t)1, (int64_t)5), ot_dims(2, (int64_t)4, (int64_t)1), ot_dims(2, (int64_t)4, (int64_t)5)},
        {ot_dims(0), ot_dims(2, (int64_t)2, (int64_t)3), ot_dims(2, (int64_t)2, (int64_t)3)},
        {ot_dims(2, (int64_t)0, (int64_t)3), ot_dims(2, (int64_t)1, (int64_t)3), ot_dims(2, (int64_t)0, (int64_t)3)},
        {ot_dims(0), ot_dims(0), ot_dims(0)},
        {ot_dims(2, (int64_t)300, (int64_t)129), ot_dims(1, (int64_t)129), ot_dims(2, (int64_t)300, (int64_t)129)},
    };
    size_t o, s;
    char msg[512];
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            ot_tensor in[2], y;
            int64_t i, n = prt_dims_volume(&shapes[s][2]);
            double *ref = malloc((size_t)(n + 1) * sizeof *ref);
            prt_status st;
            in[0] = ot_rand(PRT_DTYPE_F32, shapes[s][0], 0.5, 3, (uint32_t)(o * 7 + s));
            in[1] = ot_rand(PRT_DTYPE_F32, shapes[s][1], 0.5, 3, (uint32_t)(o * 7 + s + 100));
            if (ot_vol(&in[0]) > 2) ((float *)in[0].data)[1] = ((float *)in[1].data)[ot_bcast_index(&shapes[s][1], &shapes[s][2], 1)];
            st = ot_run(ops[o], vers[o], NULL, 0, in, 2, &y, 1, 2, msg, sizeof msg);
            CHECK_MSG(st == PRT_OK, "%s: %s", ops[o], msg);
            if (st == PRT_OK) {
                CHECK_MSG(prt_dims_equal(&y.d, &shapes[s][2]), "%s shape case %d", ops[o], (int)s);
                for (i = 0; i < n; i++)
                    ref[i] = bref(ops[o], ot_get(&in[0], ot_bcast_index(&shapes[s][0], &shapes[s][2], i)),
                                  ot_get(&in[1], ot_bcast_index(&shapes[s][1], &shapes[s][2], i)));
                CHECK_EQ_INT(ot_compare(&y, ref, n, RTOL, 1e-30, ops[o]), 0);
                ot_free(&y);
            }
            ot_free(&in[0]);
            ot_free(&in[1]);
            free(ref);
        }
}

TEST(integer_arithmetic_mod_and_division)
{
    const double a[] = {7, -7, 7, -7, 5, 0};
    const double b[] = {3, 3, -3, -3, 0, 2};
    ot_tensor in[2], y;
    char msg[256];
    int64_t one = 1;
    prt_field ff = ot_i64("fmod", &one, 1);
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)6), a);
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)6), b);
    CHECK_OK(ot_run("Div", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){2, -2, -2, 2, 0, 0}, 6, 0, 0, "Div i32 (truncates; /0 gives 0)"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Mod", "10", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 2, -2, -1, 0, 0}, 6, 0, 0, "Mod i32 (sign of divisor)"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Mod", "10", &ff, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, -1, 1, -1, 0, 0}, 6, 0, 0, "Mod fmod=1"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    /* uint8 wraps */
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)2), (const double[]){250, 3});
    in[1] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)2), (const double[]){10, 5});
    CHECK_OK(ot_run("Add", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){4, 8}, 2, 0, 0, "Add u8 wraps"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Sub", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){240, 254}, 2, 0, 0, "Sub u8 wraps"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    /* float Mod needs fmod=1 */
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)2), (const double[]){5.5, -5.5});
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)2), (const double[]){2, 2});
    CHECK(ot_run("Mod", "10", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "fmod=1");
    CHECK_OK(ot_run("Mod", "10", &ff, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1.5, -1.5}, 2, 0, 0, "Mod f32 fmod"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    /* int64 exact beyond 2^53 */
    in[0] = ot_make(PRT_DTYPE_I64, ot_dims(0), NULL);
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(0), NULL);
    *(int64_t *)in[0].data = ((int64_t)1 << 60) + 1;
    *(int64_t *)in[1].data = 2;
    CHECK_OK(ot_run("Add", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(*(int64_t *)y.data, ((int64_t)1 << 60) + 3);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(pow_takes_a_different_exponent_type)
{
    ot_tensor in[2], y;
    char msg[256];
    in[0] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), (const double[]){2, 3, 4});
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){2});
    CHECK_OK(ot_run("Pow", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){4, 9, 16}, 3, 0, 0, "Pow i64^f32"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(logical_bitshift_where)
{
    ot_tensor in[3], y;
    char msg[256];
    prt_field f;
    in[0] = ot_make(PRT_DTYPE_BOOL, ot_dims(2, (int64_t)2, (int64_t)2), (const double[]){0, 0, 1, 1});
    in[1] = ot_make(PRT_DTYPE_BOOL, ot_dims(1, (int64_t)2), (const double[]){0, 1});
    CHECK_OK(ot_run("And", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 0, 0, 1}, 4, 0, 0, "And"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Or", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 1, 1, 1}, 4, 0, 0, "Or"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Xor", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 1, 1, 0}, 4, 0, 0, "Xor"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Equal", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 0, 0, 1}, 4, 0, 0, "Equal bool"), 0);
    ot_free(&y);
    /* Where: cond [2,2], X scalar, Y [2] */
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_I64, ot_dims(0), (const double[]){7}));
    in[2] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)2), (const double[]){-1, -2});
    CHECK_OK(ot_run("Where", "9", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-1, -2, 7, 7}, 4, 0, 0, "Where"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    /* BitShift on uint8 */
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)3), (const double[]){16, 4, 1});
    in[1] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)3), (const double[]){1, 2, 3});
    f = ot_str("direction", "RIGHT");
    CHECK_OK(ot_run("BitShift", "11", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){8, 1, 0}, 3, 0, 0, "BitShift right"), 0);
    ot_free(&y);
    f = ot_str("direction", "LEFT");
    CHECK_OK(ot_run("BitShift", "11", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){32, 16, 8}, 3, 0, 0, "BitShift left"), 0);
    ot_free(&y);
    f = ot_str("direction", "UP");
    CHECK(ot_run("BitShift", "11", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "direction");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(variadic_sum_mean_max_min_and_prelu)
{
    ot_tensor in[3], y;
    char msg[256];
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), (const double[]){1, 2, 3, 4, 5, 6});
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), (const double[]){10, -20, 30});
    in[2] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)1), (const double[]){100, -100});
    CHECK_OK(ot_run("Sum", "6", NULL, 0, in, 3, &y, 1, 2, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){111, 82, 133, -86, -115, -64}, 6, 0, 0, "Sum"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Mean", "6", NULL, 0, in, 3, &y, 1, 2, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){37, 82 / 3.0, 133 / 3.0, -86 / 3.0, -115 / 3.0, -64 / 3.0}, 6,
                            RTOL, 0, "Mean"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Max", "6", NULL, 0, in, 3, &y, 1, 2, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){100, 100, 100, 10, 5, 30}, 6, 0, 0, "Max"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Min", "6", NULL, 0, in, 1, &y, 1, 2, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 2, 3, 4, 5, 6}, 6, 0, 0, "Min of one input"), 0);
    ot_free(&y);
    /* PRelu: slope [3] broadcast to X [2,3] */
    in[0] = (ot_free(&in[0]), ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3),
                                      (const double[]){-1, 2, -3, 4, -5, 6}));
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), (const double[]){0.5, 0.25, 2}));
    CHECK_OK(ot_run("PRelu", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-0.5, 2, -6, 4, -1.25, 6}, 6, 0, 0, "PRelu"), 0);
    ot_free(&y);
    /* PRelu refuses a slope larger than X */
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)4, (int64_t)2, (int64_t)3), NULL));
    CHECK(ot_run("PRelu", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "slope");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}

TEST(bad_shapes_types_and_fields_fail_clearly)
{
    ot_tensor in[2], y;
    char msg[512];
    int64_t to = 11;
    prt_field f = ot_i64("to", &to, 1);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), NULL);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), NULL);
    CHECK(ot_run("Add", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "Add v7");
    CHECK_STR_CONTAINS(msg, "broadcast");
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)3), NULL));
    CHECK(ot_run("Mul", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "i32");
    CHECK(ot_run("Mul", "7", NULL, 0, in, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "expected 2 inputs, got 1");
    CHECK(ot_run("Cast", "6", &f, 1, in, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "DOUBLE");
    CHECK(ot_run("Cast", "6", NULL, 0, in, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "to");
    f = ot_str("approximate", "fast");
    CHECK(ot_run("Gelu", "20", &f, 1, in, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "\"fast\"");
    f = ot_f32("alpha", &(float){0.0f}, 1);
    CHECK(ot_run("Celu", "12", &f, 1, in, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "alpha");
    f = ot_f32("nonsense", &(float){0.0f}, 1);
    CHECK(ot_run("Relu", "6", &f, 1, in, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "nonsense");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(cast_and_castlike_convert_every_type)
{
    const double xs[] = {-300.7, -1.5, -0.0, 0.49, 1.5, 255.9, 1e10, NAN};
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)8), xs), y, in[2];
    char msg[256];
    int64_t to;
    prt_field f = ot_i64("to", &to, 1);
    to = 3; /* INT8: truncate, saturate, NaN -> 0 */
    CHECK_OK(ot_run("Cast", "6", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I8);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-128, -1, 0, 0, 1, 127, 127, 0}, 8, 0, 0, "f32->i8"), 0);
    ot_free(&y);
    to = 9; /* BOOL */
    CHECK_OK(ot_run("Cast", "19", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 1, 0, 1, 1, 1, 1, 1}, 8, 0, 0, "f32->bool"), 0);
    ot_free(&y);
    to = 10; /* FLOAT16 */
    CHECK_OK(ot_run("Cast", "6", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_F16);
    CHECK_NEAR(ot_get(&y, 0), -300.75, 0);
    CHECK(isinf(ot_get(&y, 6)));
    ot_free(&y);
    ot_free(&x);
    /* i64 -> i32 wraps, bool -> f32 */
    x = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)2), NULL);
    ((int64_t *)x.data)[0] = ((int64_t)1 << 32) + 5;
    ((int64_t *)x.data)[1] = -7;
    to = 6;
    CHECK_OK(ot_run("Cast", "6", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){5, -7}, 2, 0, 0, "i64->i32"), 0);
    ot_free(&y);
    in[0] = x;
    in[1] = ot_make(PRT_DTYPE_BF16, ot_dims(0), NULL);
    CHECK_OK(ot_run("CastLike", "15", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_BF16);
    CHECK(prt_dims_equal(&y.d, &x.d));
    CHECK_NEAR(ot_get(&y, 1), -7, 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(dropout_is_identity_with_all_true_mask)
{
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4), -1, 1, 9), y[2];
    char msg[256];
    int64_t i;
    float r = 0.3f;
    int64_t train = 1;
    prt_field f[2] = {ot_f32("input:1", &r, 1), ot_i64("input:2", &train, 1)};
    const char *vers[] = {"1", "6", "7", "12"};
    int v;
    for (v = 0; v < 4; v++) {
        CHECK_OK(ot_run("Dropout", vers[v], NULL, 0, &x, 1, y, 2, 1, msg, sizeof msg));
        CHECK_EQ_INT(y[1].t, PRT_DTYPE_BOOL);
        for (i = 0; i < 12; i++) {
            CHECK(ot_get(&y[0], i) == ot_get(&x, i));
            CHECK(ot_get(&y[1], i) == 1);
        }
        ot_free(&y[0]);
        ot_free(&y[1]);
    }
    CHECK(ot_run("Dropout", "12", f, 2, &x, 1, y, 2, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "training_mode");
    ot_free(&x);
}

TEST(bitwise_ops_on_integers)
{
    ot_tensor in[2], y;
    char msg[256];
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)2), (const double[]){5, -3});
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)2), (const double[]){3, 6});
    CHECK_OK(ot_run("BitwiseAnd", "18", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 4}, 2, 0, 0, "BitwiseAnd"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("BitwiseOr", "18", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){7, -1}, 2, 0, 0, "BitwiseOr"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("BitwiseXor", "18", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){6, -5}, 2, 0, 0, "BitwiseXor"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("BitwiseNot", "18", NULL, 0, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){-6, 2}, 2, 0, 0, "BitwiseNot"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)1), (const double[]){5});
    CHECK_OK(ot_run("BitwiseNot", "18", NULL, 0, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){250}, 1, 0, 0, "BitwiseNot u8"), 0);
    ot_free(&y);
    ot_free(&in[0]);
}

TEST(bitcast_keeps_the_bits)
{
    /* 1.0f is 0x3f800000, -2.0f is 0xc0000000 */
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)2), (const double[]){1.0, -2.0}), y;
    char msg[256];
    int64_t to = 6; /* INT32 */
    prt_field f = ot_i64("to", &to, 1);
    CHECK_OK(ot_run("BitCast", "26", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1065353216.0, -1073741824.0}, 2, 0, 0, "f32 bits as i32"), 0);
    ot_free(&y);
    to = 7; /* INT64: another width */
    CHECK(ot_run("BitCast", "26", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "cannot reinterpret f32 (4 bytes) as i64 (8 bytes)");
    ot_free(&x);
}
