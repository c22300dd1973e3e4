/* The fp32 elementwise engine (plugins/onnx/common/ew_prog.c) and what runs
 * on it: every opcode against float64 references and on special values,
 * broadcasting, in-place evaluation, independence from the split and the
 * thread count, program checking and decoding errors, plugrt::Elementwise
 * through the op runner (with a serialize -> create round trip), and the f32
 * paths of the single ONNX ops against the generic path that computes in
 * double. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "common/ew_math.h"
#include "common/ew_prog.h"
#include "onnx_test_util.h"
#include "prt_test.h"

/* ---- helpers ------------------------------------------------------------------- */

static uint32_t rng_state = 12345u;

static float frand(double lo, double hi)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(lo + (hi - lo) * ((double)(rng_state >> 8) / 16777216.0));
}

static float *fill(int64_t n, double lo, double hi)
{
    float *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    int64_t i;
    for (i = 0; i < n; i++) v[i] = frand(lo, hi);
    return v;
}

/* Plan and evaluate [0, volume) in one range call. */
static prt_status eval(const prt__ew_prog *p, const prt_dims *in, const prt_dims *out, const float *const *x,
                       float *y, char *msg, size_t cap)
{
    prt_msg m = {msg, cap};
    prt__ew_bcast bc;
    prt_status st;
    msg[0] = 0;
    if ((st = prt__ew_plan(&bc, p->nb_in, in, out, &m)) != PRT_OK) return st;
    prt__ew_range(p, &bc, x, y, 0, bc.volume);
    return PRT_OK;
}

static int same_float(float a, float b)
{
    if (a != a || b != b) return a != a && b != b;
    if (a == 0 && b == 0) return signbit(a) == signbit(b);
    return a == b;
}

/* Distance in units in the last place (both finite, same sign). */
static double ulps(float a, float b)
{
    int32_t ia, ib;
    if (same_float(a, b)) return 0;
    if (a != a || b != b || isinf(a) || isinf(b)) return INFINITY;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if ((ia < 0) != (ib < 0)) return fabs((double)a - (double)b) < 2 * FLT_TRUE_MIN ? 1 : INFINITY;
    return fabs((double)ia - (double)ib);
}

/* ---- float64 references of every opcode ------------------------------------------- */

static double ref_op(int32_t op, double a, double b, const float *c)
{
    switch (op) {
    case PRT__EW_ADD: return a + b;
    case PRT__EW_SUB: return a - b;
    case PRT__EW_MUL: return a * b;
    case PRT__EW_DIV: return a / b;
    case PRT__EW_MAX: return a != a || b != b ? NAN : a > b ? a : b;
    case PRT__EW_MIN: return a != a || b != b ? NAN : a < b ? a : b;
    case PRT__EW_POW: return pow(a, b);
    case PRT__EW_NEG: return -a;
    case PRT__EW_ABS: return fabs(a);
    case PRT__EW_RELU: return a != a ? a : a > 0 ? a : 0.0;
    case PRT__EW_SIGMOID: return 1.0 / (1.0 + exp(-a));
    case PRT__EW_TANH: return tanh(a);
    case PRT__EW_EXP: return exp(a);
    case PRT__EW_LOG: return log(a);
    case PRT__EW_SQRT: return sqrt(a);
    case PRT__EW_RECIPROCAL: return 1.0 / a;
    case PRT__EW_ERF: return erf(a);
    case PRT__EW_FLOOR: return floor(a);
    case PRT__EW_CEIL: return ceil(a);
    case PRT__EW_CLIP: return a != a ? a : a < c[0] ? (c[0] > c[1] ? c[1] : c[0]) : a > c[1] ? c[1] : a;
    case PRT__EW_HARDSIGMOID: {
        double t = (double)c[0] * a + (double)c[1];
        return t != t ? t : t < 0 ? 0.0 : t > 1 ? 1.0 : t;
    }
    case PRT__EW_LEAKYRELU: return a < 0 ? (double)c[0] * a : a;
    case PRT__EW_HARDSWISH: {
        double t = a / 6.0 + 0.5;
        return a * (t != t ? t : t < 0 ? 0.0 : t > 1 ? 1.0 : t);
    }
    case PRT__EW_ELU: return a < 0 ? (double)c[0] * expm1(a) : a;
    case PRT__EW_SOFTPLUS: return a > 0 ? a + log1p(exp(-a)) : log1p(exp(a));
    case PRT__EW_GELU: return 0.5 * a * erfc(-a / sqrt(2.0)); /* = 0.5 a (1 + erf(a / sqrt 2)), no cancellation */
    case PRT__EW_SQUARE: return a * a;
    case PRT__EW_PRELU: return a < 0 ? a * b : a;
    default: return NAN;
    }
}

/* Random operand ranges per opcode. */
static void op_range(int32_t op, double *lo, double *hi, double *blo, double *bhi)
{
    *lo = -6;
    *hi = 6;
    *blo = -6;
    *bhi = 6;
    switch (op) {
    case PRT__EW_DIV: *blo = 0.25; *bhi = 8; break;
    case PRT__EW_POW: *lo = 0.05; *hi = 4; *blo = -3; *bhi = 3; break;
    case PRT__EW_LOG: case PRT__EW_SQRT: *lo = 1e-3; *hi = 100; break;
    case PRT__EW_EXP: *lo = -20; *hi = 20; break;
    case PRT__EW_SIGMOID: case PRT__EW_SOFTPLUS: case PRT__EW_GELU: *lo = -12; *hi = 12; break;
    case PRT__EW_RECIPROCAL: *lo = 0.1; *hi = 10; break;
    default: break;
    }
}

static const float op_consts[4] = {-1.5f, 2.5f, 0.75f, 0.0f}; /* params; consts[2]: the scalar operand */

/* One opcode over n values in the three operand forms (vector-vector,
 * vector-constant, constant-vector; unary: one form) against float64:
 * |y - ref| <= 1e-5 |ref|, subnormal results within 1e-44. Returns the
 * mismatches. */
static int64_t check_op(int32_t op, const float *a, const float *b, int64_t n)
{
    const int binary = prt__ew_op_arity(op) == 2;
    const prt_dims d = ot_dims(1, n);
    prt_dims dd[2] = {d, d};
    float *y = malloc((size_t)n * sizeof *y);
    float consts[4];
    int64_t bad = 0, i;
    int form;
    char msg[256];
    memcpy(consts, op_consts, sizeof consts);
    if (op == PRT__EW_HARDSIGMOID) {
        consts[0] = 0.2f;
        consts[1] = 0.5f;
    } else if (op == PRT__EW_LEAKYRELU || op == PRT__EW_ELU) {
        consts[0] = 0.3f;
    }
    for (form = 0; form < (binary ? 3 : 1); form++) {
        /* form 0: x0 op x1; 1: x0 op consts[2]; 2: consts[2] op x0 */
        prt__ew_instr ins = {op, form == 2 ? -3 : 0, form == 0 ? 1 : form == 1 ? -3 : 0, 0};
        prt__ew_prog p = {&ins, 1, consts, 4, form == 0 ? 2 : 1};
        const float *xs[2] = {form == 2 ? b : a, b};
        CHECK_OK(prt__ew_check(&p, &(prt_msg){msg, sizeof msg}));
        CHECK_OK(eval(&p, dd, &d, xs, y, msg, sizeof msg));
        for (i = 0; i < n; i++) {
            double va = form == 2 ? consts[2] : a[i], vb = form == 1 ? consts[2] : b[i];
            double r = ref_op(op, va, vb, consts);
            float rf = (float)r;
            int ok = same_float(y[i], rf) || (isfinite(r) && fabs((double)y[i] - r) <= 1e-5 * fabs(r)) ||
                     (fabs(r) < FLT_MIN && fabs((double)y[i] - r) <= 1e-44); /* subnormal results */
            if (!ok && bad++ < 4)
                prt_test_fail(__FILE__, __LINE__, "%s form %d: op(%.9g, %.9g) = %.9g, float64 gives %.17g",
                              prt__ew_op_name(op), form, va, vb, (double)y[i], r);
        }
    }
    free(y);
    return bad;
}

TEST(every_opcode_matches_float64_on_random_values)
{
    int32_t op;
    const int64_t n = 1000; /* several chunks and a tail */
    for (op = 0; op < PRT__EW_NB_OPS; op++) {
        double lo, hi, blo, bhi;
        float *a, *b;
        int64_t i;
        op_range(op, &lo, &hi, &blo, &bhi);
        a = fill(n, lo, hi);
        b = fill(n, blo, bhi);
        if (op == PRT__EW_DIV || op == PRT__EW_RECIPROCAL)
            for (i = 0; i < n; i += 2) (op == PRT__EW_DIV ? b : a)[i] *= -1; /* both signs */
        CHECK_MSG(check_op(op, a, b, n) == 0, "%s", prt__ew_op_name(op));
        free(a);
        free(b);
    }
    CHECK(prt__ew_op_name(PRT__EW_NB_OPS) == NULL);
    CHECK(!strcmp(prt__ew_op_name(PRT__EW_HARDSWISH), "HardSwish"));
}

TEST(every_opcode_on_special_values)
{
    static const float sv[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -2.0f,
                               3.0f, -3.0f, 6.0f, -6.0f, 1e-30f, -1e-30f, 1e-7f, -1e-7f, 20.0f, -20.0f, 88.0f,
                               89.0f, -88.0f, -104.0f, 100.0f, -100.0f, 1e30f, -1e30f, FLT_MAX, -FLT_MAX,
                               FLT_TRUE_MIN, 4097.0f, -8.0f, 1.0f / 3.0f};
    const int64_t ns = (int64_t)(sizeof sv / sizeof sv[0]);
    const int64_t n = ns * ns; /* every pair, in chunks and a tail */
    float *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
    int64_t i;
    int32_t op;
    for (i = 0; i < n; i++) {
        a[i] = sv[i % ns];
        b[i] = sv[i / ns];
    }
    for (op = 0; op < PRT__EW_NB_OPS; op++)
        CHECK_MSG(check_op(op, a, b, n) == 0, "%s", prt__ew_op_name(op));
    free(a);
    free(b);
}

/* What ONNX says about a few values, spelled out. */
TEST(nan_inf_and_domain_edges_follow_onnx)
{
    static const struct {
        int32_t op;
        float a, b, want;
    } cases[] = {
        {PRT__EW_MAX, NAN, 1, NAN},          {PRT__EW_MAX, 1, NAN, NAN},
        {PRT__EW_MIN, NAN, 1, NAN},          {PRT__EW_MIN, 1, NAN, NAN},
        {PRT__EW_RELU, NAN, 0, NAN},         {PRT__EW_RELU, -0.0f, 0, 0.0f},
        {PRT__EW_RELU, -INFINITY, 0, 0.0f},  {PRT__EW_CLIP, NAN, 0, NAN},
        {PRT__EW_CLIP, INFINITY, 0, 2.5f},   {PRT__EW_CLIP, -INFINITY, 0, -1.5f},
        {PRT__EW_LOG, -1, 0, NAN},           {PRT__EW_LOG, 0, 0, -INFINITY},
        {PRT__EW_SQRT, -1, 0, NAN},          {PRT__EW_SQRT, -0.0f, 0, -0.0f},
        {PRT__EW_SIGMOID, 100, 0, 1},        {PRT__EW_SIGMOID, -INFINITY, 0, 0},
        {PRT__EW_SIGMOID, NAN, 0, NAN},      {PRT__EW_SOFTPLUS, 100, 0, 100},
        {PRT__EW_SOFTPLUS, 1e30f, 0, 1e30f}, {PRT__EW_SOFTPLUS, -INFINITY, 0, 0},
        {PRT__EW_SOFTPLUS, INFINITY, 0, INFINITY}, {PRT__EW_EXP, 100, 0, INFINITY},
        {PRT__EW_EXP, -INFINITY, 0, 0},      {PRT__EW_RECIPROCAL, -0.0f, 0, -INFINITY},
        {PRT__EW_HARDSIGMOID, NAN, 0, NAN},  {PRT__EW_HARDSWISH, NAN, 0, NAN},
        {PRT__EW_HARDSWISH, -3, 0, -0.0f},   {PRT__EW_HARDSWISH, 3, 0, 3},
        {PRT__EW_ELU, -INFINITY, 0, -0.3f},  {PRT__EW_LEAKYRELU, -2, 0, -0.6f},
        {PRT__EW_POW, 0, -1, INFINITY},      {PRT__EW_POW, -8, 1.0f / 3.0f, NAN},
        {PRT__EW_POW, -2, 3, -8},            {PRT__EW_POW, NAN, 0, 1},
        {PRT__EW_PRELU, -2, 0.25f, -0.5f},   {PRT__EW_PRELU, NAN, 2, NAN},
        {PRT__EW_TANH, -INFINITY, 0, -1},    {PRT__EW_ERF, INFINITY, 0, 1},
        {PRT__EW_GELU, INFINITY, 0, INFINITY}, {PRT__EW_FLOOR, -0.5f, 0, -1},
        {PRT__EW_CEIL, -0.5f, 0, -0.0f},
    };
    size_t c;
    char msg[256];
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        /* Clip [-1.5, 2.5]; HardSigmoid 0.2 x + 0.5; LeakyRelu and Elu 0.3 */
        const int32_t op = cases[c].op;
        const float consts[2] = {op == PRT__EW_CLIP ? -1.5f : op == PRT__EW_HARDSIGMOID ? 0.2f : 0.3f,
                                 op == PRT__EW_CLIP ? 2.5f : 0.5f};
        prt__ew_instr ins = {op, 0, 1, 0};
        prt__ew_prog p = {&ins, 1, consts, 2, 2};
        prt_dims d[2] = {ot_dims(0), ot_dims(0)};
        const float *xs[2] = {&cases[c].a, &cases[c].b};
        float y = 12345;
        CHECK_OK(eval(&p, d, &d[0], xs, &y, msg, sizeof msg));
        CHECK_MSG(same_float(y, cases[c].want) || fabsf(y - cases[c].want) <= 1e-7f * fabsf(cases[c].want),
                  "%s(%g, %g) = %.9g, expected %.9g", prt__ew_op_name(cases[c].op), (double)cases[c].a,
                  (double)cases[c].b, (double)y, (double)cases[c].want);
    }
}

/* ---- broadcasting ------------------------------------------------------------------ */

/* y = (x0 + x1) * x2 (or x0 + x1 with two inputs) on the given shapes against
 * numpy's rule written out; the output's shape is given. */
static int64_t check_bcast(int nb_in, const prt_dims *in, const prt_dims *out)
{
    const prt__ew_instr ins[2] = {{PRT__EW_ADD, 0, 1, 0}, {PRT__EW_MUL, 3, 2, 0}};
    prt__ew_prog p = {ins, nb_in == 3 ? 2 : 1, NULL, 0, nb_in};
    int64_t vol = prt_dims_volume(out), i, bad = 0;
    float *x[3], *y = malloc((size_t)(vol > 0 ? vol : 1) * sizeof *y + sizeof(float));
    char msg[256];
    int k;
    for (k = 0; k < nb_in; k++) x[k] = fill(prt_dims_volume(&in[k]), -4, 4);
    y[vol > 0 ? vol : 0] = 777.0f; /* a guard past the end */
    CHECK_OK(eval(&p, in, out, (const float *const *)x, y, msg, sizeof msg));
    for (i = 0; i < vol; i++) {
        float r = x[0][ot_bcast_index(&in[0], out, i)] + x[1][ot_bcast_index(&in[1], out, i)];
        if (nb_in == 3) r = r * x[2][ot_bcast_index(&in[2], out, i)];
        if (!same_float(y[i], r) && bad++ < 4)
            prt_test_fail(__FILE__, __LINE__, "element %lld: %.9g, expected %.9g", (long long)i, (double)y[i],
                          (double)r);
    }
    CHECK(y[vol > 0 ? vol : 0] == 777.0f);
    for (k = 0; k < nb_in; k++) free(x[k]);
    free(y);
    return bad;
}

TEST(broadcasting_patterns_match_numpy)
{
    static const struct {
        int nb_in;
        int rank[4];
        int64_t d[4][5]; /* inputs, then the output */
    } pats[] = {
        {2, {4, 4, 4}, {{2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 4, 5}}},     /* same shape */
        {2, {4, 1, 4}, {{2, 3, 4, 5}, {1}, {2, 3, 4, 5}}},              /* [1] */
        {2, {0, 4, 4}, {{0}, {2, 3, 4, 5}, {2, 3, 4, 5}}},              /* 0-d */
        {2, {4, 3, 4}, {{2, 3, 7, 9}, {3, 1, 1}, {2, 3, 7, 9}}},        /* [C,1,1] */
        {2, {3, 3, 3}, {{4, 5, 6}, {4, 1, 6}, {4, 5, 6}}},              /* a broadcast middle dim */
        {2, {4, 2, 4}, {{2, 3, 4, 5}, {4, 5}, {2, 3, 4, 5}}},           /* leading dims */
        {2, {2, 2, 2}, {{6, 1}, {1, 7}, {6, 7}}},                       /* outer product */
        {2, {2, 2, 2}, {{3, 1000}, {3, 1}, {3, 1000}}},                 /* rows longer than a chunk */
        {2, {2, 1, 2}, {{300, 3}, {3}, {300, 3}}},                      /* rows shorter than a chunk */
        {2, {2, 2, 2}, {{0, 3}, {1, 3}, {0, 3}}},                       /* empty */
        {2, {3, 1, 3}, {{2, 0, 4}, {4}, {2, 0, 4}}},                    /* empty */
        {2, {0, 0, 0}, {{0}, {0}, {0}}},                                /* 0-d only */
        {3, {4, 3, 1, 4}, {{2, 3, 4, 5}, {3, 1, 1}, {5}, {2, 3, 4, 5}}}, /* three inputs */
        {3, {4, 4, 2, 4}, {{1, 3, 1, 5}, {2, 1, 4, 1}, {4, 5}, {2, 3, 4, 5}}},
    };
    size_t c;
    for (c = 0; c < sizeof pats / sizeof pats[0]; c++) {
        prt_dims in[3], out;
        int k;
        for (k = 0; k < pats[c].nb_in; k++) in[k] = ot_dims_of(pats[c].rank[k], pats[c].d[k]);
        out = ot_dims_of(pats[c].rank[pats[c].nb_in], pats[c].d[pats[c].nb_in]);
        CHECK_MSG(check_bcast(pats[c].nb_in, in, &out) == 0, "pattern %d", (int)c);
    }
}

TEST(plan_collapses_dims_where_every_input_agrees)
{
    prt_dims in[2] = {ot_dims(4, (int64_t)2, (int64_t)3, (int64_t)7, (int64_t)9), ot_dims(3, (int64_t)3,
                                                                                         (int64_t)1, (int64_t)1)};
    prt__ew_bcast bc;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    /* [N,C,H,W] + [C,1,1]: N, C, then rows of H*W with a per-row constant */
    CHECK_OK(prt__ew_plan(&bc, 2, in, &in[0], &m));
    CHECK_EQ_INT(bc.rank, 3);
    CHECK_EQ_INT(bc.ext[0], 2);
    CHECK_EQ_INT(bc.ext[1], 3);
    CHECK_EQ_INT(bc.ext[2], 63);
    CHECK_EQ_INT(bc.stride[0][2], 1);
    CHECK_EQ_INT(bc.stride[1][0], 0);
    CHECK_EQ_INT(bc.stride[1][1], 1);
    CHECK_EQ_INT(bc.stride[1][2], 0);
    CHECK_EQ_INT(bc.volume, 378);
    /* the same shape twice: one row */
    in[1] = in[0];
    CHECK_OK(prt__ew_plan(&bc, 2, in, &in[0], &m));
    CHECK_EQ_INT(bc.rank, 1);
    CHECK_EQ_INT(bc.ext[0], 378);
    /* a scalar against [2,1,5]: the extent of 1 goes */
    in[0] = ot_dims(3, (int64_t)2, (int64_t)1, (int64_t)5);
    in[1] = ot_dims(0);
    CHECK_OK(prt__ew_plan(&bc, 2, in, &in[0], &m));
    CHECK_EQ_INT(bc.rank, 1);
    CHECK_EQ_INT(bc.ext[0], 10);
    CHECK_EQ_INT(bc.stride[1][0], 0);
    /* not broadcastable: names the input and both shapes */
    in[1] = ot_dims(1, (int64_t)3);
    CHECK(prt__ew_plan(&bc, 2, in, &in[0], &m) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "input 1 with shape [3] does not broadcast to the output shape [2, 1, 5]");
    in[1] = ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)1, (int64_t)5);
    CHECK(prt__ew_plan(&bc, 2, in, &in[0], &m) == PRT_STATUS_SHAPE_MISMATCH);
}

TEST(constant_instructions_fold_and_a_program_without_instructions_copies)
{
    /* y = x0 * (2 + 3) - x1: the constant instruction comes first */
    const prt__ew_instr ins[3] = {{PRT__EW_ADD, -1, -2, 0}, {PRT__EW_MUL, 0, 2, 0}, {PRT__EW_SUB, 3, 1, 0}};
    const float consts[2] = {2, 3};
    prt__ew_prog p = {ins, 3, consts, 2, 2};
    prt_dims d[2] = {ot_dims(2, (int64_t)3, (int64_t)300), ot_dims(1, (int64_t)300)};
    float *x0 = fill(900, -3, 3), *x1 = fill(300, -3, 3), y[900];
    const float *xs[2] = {x0, x1};
    char msg[256];
    int64_t i, bad = 0;
    CHECK_OK(eval(&p, d, &d[0], xs, y, msg, sizeof msg));
    for (i = 0; i < 900; i++) bad += !same_float(y[i], x0[i] * 5.0f - x1[i % 300]);
    CHECK_EQ_INT(bad, 0);
    /* no instructions: y is input 0, broadcast to the output */
    p.nb_ins = 0;
    p.nb_in = 1;
    d[1] = ot_dims(2, (int64_t)3, (int64_t)1);
    CHECK_OK(eval(&p, &d[1], &d[0], xs, y, msg, sizeof msg));
    for (i = 0, bad = 0; i < 900; i++) bad += y[i] != x0[i / 300];
    CHECK_EQ_INT(bad, 0);
    /* only constants and a scalar input: the result is splat over the output */
    {
        const prt__ew_instr i2[2] = {{PRT__EW_ADD, 0, -1, 0}, {PRT__EW_SQRT, 1, 0, 0}};
        prt__ew_prog q = {i2, 2, consts, 2, 1};
        prt_dims s = ot_dims(0);
        const float seven = 7, *xq[1] = {&seven};
        CHECK_OK(eval(&q, &s, &d[0], xq, y, msg, sizeof msg));
        for (i = 0, bad = 0; i < 900; i++) bad += y[i] != 3.0f;
        CHECK_EQ_INT(bad, 0);
    }
    free(x0);
    free(x1);
}

/* A unary op's b and an op's p without parameters are ignored when checked
 * and when run (no constants at all: consts may be NULL). */
TEST(ignored_operands_are_never_read)
{
    const prt__ew_instr ins[2] = {{PRT__EW_SIGMOID, 0, 77, 5}, {PRT__EW_ADD, 1, 0, 1000}};
    prt__ew_prog p = {ins, 2, NULL, 0, 1};
    prt_dims d = ot_dims(1, (int64_t)300), s = ot_dims(0);
    float *x = fill(300, -4, 4), y[300], one = 0.5f;
    const float *xs[1] = {x};
    char msg[256];
    int64_t i, bad = 0;
    CHECK_OK(prt__ew_check(&p, &(prt_msg){msg, sizeof msg}));
    CHECK_OK(eval(&p, &d, &d, xs, y, msg, sizeof msg));
    for (i = 0; i < 300; i++) bad += fabsf(y[i] - (float)(1 / (1 + exp(-(double)x[i])) + x[i])) > 1e-6f;
    CHECK_EQ_INT(bad, 0);
    xs[0] = &one; /* the same folded to a scalar */
    CHECK_OK(eval(&p, &s, &d, xs, y, msg, sizeof msg));
    CHECK(fabsf(y[299] - (float)(1 / (1 + exp(-0.5)) + 0.5)) <= 1e-6f);
    free(x);
}

/* ---- in place, splits, threads ---------------------------------------------------- */

static const prt__ew_instr chain_ins[6] = {
    {PRT__EW_MUL, 0, 1, 0},  /* 3 = x0 * x1 */
    {PRT__EW_ADD, 3, 2, 0},  /* 4 = 3 + x2 */
    {PRT__EW_SIGMOID, 4, 0, 0},
    {PRT__EW_CLIP, 0, 0, 0}, /* 6 = clip(x0, consts[0], consts[1]) */
    {PRT__EW_MUL, 5, 6, 0},
    {PRT__EW_SUB, 7, -3, 0}, /* - consts[2] */
};
static const float chain_consts[3] = {-0.5f, 0.75f, 0.125f};

TEST(in_place_equals_out_of_place)
{
    prt_dims d[3] = {ot_dims(4, (int64_t)2, (int64_t)3, (int64_t)40, (int64_t)50),
                     ot_dims(3, (int64_t)3, (int64_t)1, (int64_t)1), ot_dims(1, (int64_t)50)};
    prt__ew_prog p = {chain_ins, 6, chain_consts, 3, 3};
    const int64_t vol = 12000;
    float *x0 = fill(vol, -2, 2), *x1 = fill(3, -2, 2), *x2 = fill(50, -2, 2);
    float *y = malloc(vol * sizeof *y), *inplace = malloc(vol * sizeof *y);
    const float *xs[3] = {x0, x1, x2};
    prt__ew_bcast bc;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    CHECK_OK(eval(&p, d, &d[0], xs, y, msg, sizeof msg));
    memcpy(inplace, x0, vol * sizeof *y);
    xs[0] = inplace;
    CHECK_OK(eval(&p, d, &d[0], xs, inplace, msg, sizeof msg));
    CHECK(memcmp(y, inplace, vol * sizeof *y) == 0);
    /* in place in pieces */
    memcpy(inplace, x0, vol * sizeof *y);
    CHECK_OK(prt__ew_plan(&bc, 3, d, &d[0], &m));
    prt__ew_range(&p, &bc, xs, inplace, 5000, vol);
    prt__ew_range(&p, &bc, xs, inplace, 0, 77);
    prt__ew_range(&p, &bc, xs, inplace, 77, 5000);
    CHECK(memcmp(y, inplace, vol * sizeof *y) == 0);
    /* a program without instructions in place is a no-op */
    p.nb_ins = 0;
    CHECK_OK(eval(&p, d, &d[0], xs, inplace, msg, sizeof msg));
    CHECK(memcmp(y, inplace, vol * sizeof *y) == 0);
    free(x0);
    free(x1);
    free(x2);
    free(y);
    free(inplace);
}

/* A parallel_for that cuts [0, n) into pieces of random sizes and runs them
 * last first, as threads finishing in any order would. */
static void odd_parallel_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    int64_t cuts[64], nb = 0, k;
    (void)ex;
    (void)grain;
    cuts[nb++] = 0;
    while (nb < 63 && cuts[nb - 1] < n) {
        int64_t step = 1 + (int64_t)frand(0, (double)(n / 8 + 1));
        cuts[nb] = cuts[nb - 1] + step < n ? cuts[nb - 1] + step : n;
        nb++;
    }
    cuts[nb - 1] = n;
    for (k = nb - 1; k > 0; k--) fn(arg, cuts[k - 1], cuts[k]);
}

TEST(results_do_not_depend_on_the_split_or_the_thread_count)
{
    prt_dims d[3] = {ot_dims(3, (int64_t)15, (int64_t)97, (int64_t)71), ot_dims(3, (int64_t)15, (int64_t)1,
                                                                                (int64_t)1),
                     ot_dims(2, (int64_t)97, (int64_t)1)};
    prt__ew_prog p = {chain_ins, 6, chain_consts, 3, 3};
    const int64_t vol = 15 * 97 * 71;
    float *x0 = fill(vol, -3, 3), *x1 = fill(15, -3, 3), *x2 = fill(97, -3, 3);
    float *whole = malloc(vol * sizeof *whole), *part = malloc(vol * sizeof *part);
    const float *xs[3] = {x0, x1, x2};
    prt__ew_bcast bc;
    prt_exec ex;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    int trial, threads;
    CHECK_OK(prt__ew_plan(&bc, 3, d, &d[0], &m));
    prt__ew_range(&p, &bc, xs, whole, 0, vol);
    /* any cut points, chunk-aligned or not */
    for (trial = 0; trial < 20; trial++) {
        int64_t at = 0;
        memset(part, 0, vol * sizeof *part);
        while (at < vol) {
            int64_t e = at + 1 + (int64_t)frand(0, trial < 10 ? 700 : 40000);
            if (e > vol) e = vol;
            prt__ew_range(&p, &bc, xs, part, at, e);
            at = e;
        }
        CHECK_MSG(memcmp(whole, part, vol * sizeof *part) == 0, "trial %d", trial);
    }
    /* prt__ew_run over a pool that splits in its own way */
    memset(&ex, 0, sizeof ex);
    ex.struct_size = sizeof ex;
    ex.parallel_for = odd_parallel_for;
    for (threads = 1; threads <= 8; threads++) {
        ex.nb_threads = threads;
        memset(part, 0, vol * sizeof *part);
        prt__ew_run(&p, &bc, xs, part, &ex);
        CHECK_MSG(memcmp(whole, part, vol * sizeof *part) == 0, "%d threads", threads);
    }
    prt__ew_run(&p, &bc, xs, part, NULL);
    CHECK(memcmp(whole, part, vol * sizeof *part) == 0);
    free(x0);
    free(x1);
    free(x2);
    free(whole);
    free(part);
}

/* ---- checking and decoding --------------------------------------------------------- */

static prt_status check_msg(const prt__ew_instr *ins, int32_t nb_ins, int32_t nb_consts, int32_t nb_in, char *msg,
                            size_t cap)
{
    static const float consts[PRT__EW_MAX_CONSTS + 1];
    prt__ew_prog p = {ins, nb_ins, consts, nb_consts, nb_in};
    msg[0] = 0;
    return prt__ew_check(&p, &(prt_msg){msg, cap});
}

TEST(check_refuses_bad_programs_naming_the_instruction)
{
    prt__ew_instr ins[PRT__EW_MAX_INS + 1];
    char msg[400];
    int32_t i;
    for (i = 0; i <= PRT__EW_MAX_INS; i++) ins[i] = (prt__ew_instr){PRT__EW_NEG, i == 0 ? 0 : 1 + i, 0, 0};
    CHECK_OK(check_msg(ins, PRT__EW_MAX_INS, 0, 2, msg, sizeof msg));
    /* too many instructions */
    CHECK(check_msg(ins, PRT__EW_MAX_INS + 1, 0, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "program has 33 instructions; at most 32");
    /* bad opcode */
    ins[2] = (prt__ew_instr){99, 0, 0, 0};
    CHECK(check_msg(ins, 3, 0, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 2: opcode 99 is unknown; expected 0..27");
    ins[2] = (prt__ew_instr){-1, 0, 0, 0};
    CHECK(check_msg(ins, 3, 0, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "opcode -1 is unknown");
    /* forward reference: with 2 inputs, instruction 1 may read values 0..2 */
    ins[1] = (prt__ew_instr){PRT__EW_MUL, 0, 3, 0};
    CHECK(check_msg(ins, 2, 0, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Mul): operand b = 3 names a value not computed yet; expected an input "
                            "(0..1), an earlier result (2..2) or a constant (< 0)");
    ins[1] = (prt__ew_instr){PRT__EW_SIGMOID, 3, 0, 0};
    CHECK(check_msg(ins, 2, 0, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Sigmoid): operand a = 3");
    /* a unary op ignores b */
    ins[1] = (prt__ew_instr){PRT__EW_SIGMOID, 2, 77, 5};
    CHECK_OK(check_msg(ins, 2, 0, 2, msg, sizeof msg));
    /* constant out of range */
    ins[1] = (prt__ew_instr){PRT__EW_ADD, 2, -3, 0};
    CHECK(check_msg(ins, 2, 2, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Add): operand b = -3 names constant 2, but there are 2 constants");
    CHECK_OK(check_msg(ins, 2, 3, 2, msg, sizeof msg));
    /* parameters out of range */
    ins[1] = (prt__ew_instr){PRT__EW_CLIP, 2, 0, 1};
    CHECK(check_msg(ins, 2, 2, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Clip): parameters consts[1, +1] outside the 2 constants; expected p in "
                            "0..0");
    ins[1] = (prt__ew_instr){PRT__EW_ELU, 2, 0, -1};
    CHECK(check_msg(ins, 2, 2, 2, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Elu): parameter consts[-1] outside the 2 constants");
    ins[1] = (prt__ew_instr){PRT__EW_LEAKYRELU, 2, 0, 1};
    CHECK_OK(check_msg(ins, 2, 2, 2, msg, sizeof msg));
    /* inputs and constants */
    CHECK(check_msg(ins, 1, 0, 0, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "program has 0 inputs; expected 1..8");
    CHECK(check_msg(ins, 1, 0, 9, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "program has 9 inputs; expected 1..8");
    CHECK(check_msg(ins, 1, PRT__EW_MAX_CONSTS + 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "program has 65 constants; at most 64");
}

TEST(decode_reads_the_fields_and_refuses_bad_ones)
{
    prt__ew_instr ins[PRT__EW_MAX_INS];
    float consts[PRT__EW_MAX_CONSTS];
    prt__ew_prog p;
    int64_t prog[4 * (PRT__EW_MAX_INS + 1)];
    float kv[PRT__EW_MAX_CONSTS + 1] = {0.25f, 4.0f};
    prt_field f[2];
    prt_fields fc = {f, 2, 0};
    char msg[400];
    prt_msg m = {msg, sizeof msg};
    int i;
    for (i = 0; i < 4 * (PRT__EW_MAX_INS + 1); i++) prog[i] = 0;
    prog[0] = PRT__EW_HARDSIGMOID; prog[1] = 0; prog[2] = 0; prog[3] = 0;
    prog[4] = PRT__EW_MUL; prog[5] = 1; prog[6] = -2; prog[7] = 0;
    f[0] = ot_i64("program", prog, 8);
    f[1] = ot_f32("consts", kv, 2);
    CHECK_OK(prt__ew_decode(&fc, 1, ins, consts, &p, &m));
    CHECK_EQ_INT(p.nb_ins, 2);
    CHECK_EQ_INT(p.nb_consts, 2);
    CHECK_EQ_INT(p.nb_in, 1);
    CHECK(p.ins == ins && p.consts == consts);
    CHECK(ins[1].op == PRT__EW_MUL && ins[1].a == 1 && ins[1].b == -2 && consts[1] == 4.0f);
    /* absent consts: none (then -2 is out of range) */
    fc.nb = 1;
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 0 (HardSigmoid): parameters consts[0, +1] outside the 0 constants");
    fc.nb = 2;
    /* not 4 per instruction */
    f[0] = ot_i64("program", prog, 6);
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "field \"program\" has 6 values; expected a multiple of 4 (op, a, b, p per instruction)");
    /* too many instructions */
    f[0] = ot_i64("program", prog, 4 * (PRT__EW_MAX_INS + 1));
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "field \"program\" has 33 instructions; at most 32");
    /* too many constants */
    f[0] = ot_i64("program", prog, 8);
    f[1] = ot_f32("consts", kv, PRT__EW_MAX_CONSTS + 1);
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "field \"consts\" has 65 values; at most 64");
    f[1] = ot_f32("consts", kv, 2);
    /* beyond int32 */
    prog[6] = -5000000000LL;
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1: b = -5000000000 is outside the int32 range");
    prog[6] = -2;
    /* forward reference for this input count */
    prog[5] = 2;
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "instruction 1 (Mul): operand a = 2 names a value not computed yet");
    CHECK_OK(prt__ew_decode(&fc, 2, ins, consts, &p, &m));
    /* missing and mistyped fields */
    f[0].name = "programme";
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "field \"program\" (int64, 4 per instruction) is missing");
    f[0] = ot_f32("program", kv, 4);
    CHECK(prt__ew_decode(&fc, 1, ins, consts, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "field \"program\" must be int64");
}

/* ---- plugrt::Elementwise ------------------------------------------------------------ */

/* HardSwish as a chain, then a per-channel bias: x * clip(x + 3, 0, 6) / 6 + b */
static const int64_t hswish_prog[] = {
    PRT__EW_ADD, 0, -1, 0, /* 2 = x + 3 */
    PRT__EW_CLIP, 2, 0, 1, /* 3 = clip(2, consts[1], consts[2]) */
    PRT__EW_MUL, 0, 3, 0,  /* 4 = x * 3 */
    PRT__EW_DIV, 4, -4, 0, /* 5 = 4 / 6 */
    PRT__EW_ADD, 5, 1, 0,  /* 6 = 5 + b */
};
static const float hswish_consts[] = {3, 0, 6, 6};

static double hswish_ref(double x, double b)
{
    double t = x + 3;
    return x * (t < 0 ? 0 : t > 6 ? 6 : t) / 6 + b;
}

TEST(elementwise_plugin_runs_a_chain_with_broadcasting)
{
    prt_field f[2] = {ot_i64("program", hswish_prog, 20), ot_f32("consts", hswish_consts, 4)};
    ot_tensor in[2], y;
    double *ref;
    char msg[512];
    int64_t i, vol;
    int threads;
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)2, (int64_t)3, (int64_t)50, (int64_t)70), -8, 8, 1);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(3, (int64_t)3, (int64_t)1, (int64_t)1), -1, 1, 2);
    vol = ot_vol(&in[0]);
    ref = malloc((size_t)vol * sizeof *ref);
    for (i = 0; i < vol; i++) ref[i] = hswish_ref(ot_get(&in[0], i), ot_get(&in[1], (i / 3500) % 3));
    for (threads = 1; threads <= 3; threads++) {
        CHECK_OK(ot_run_ns("plugrt", "Elementwise", "1", f, 2, in, 2, &y, 1, threads, msg, sizeof msg));
        CHECK_EQ_INT(y.t, PRT_DTYPE_F32);
        CHECK(prt_dims_equal(&y.d, &in[0].d));
        CHECK_EQ_INT(ot_compare(&y, ref, vol, 1e-6, 1e-6, "Elementwise"), 0);
        ot_free(&y);
    }
    /* the output has the broadcast shape of the inputs: [3,1,1] and [50,70] give [3,50,70] */
    in[0].d = ot_dims(2, (int64_t)50, (int64_t)70);
    {
        ot_tensor sw[2] = {in[1], in[0]};
        const int64_t p2[] = {PRT__EW_MUL, 0, 1, 0};
        prt_field g = ot_i64("program", p2, 4);
        CHECK_OK(ot_run_ns("plugrt", "Elementwise", "1", &g, 1, sw, 2, &y, 1, 2, msg, sizeof msg));
        CHECK(y.d.nb == 3 && y.d.d[0] == 3 && y.d.d[1] == 50 && y.d.d[2] == 70);
        for (i = 0; i < 3 * 3500; i += 101)
            CHECK(same_float(((float *)y.data)[i], (float)ot_get(&in[1], i / 3500) * (float)ot_get(&in[0], i % 3500)));
        ot_free(&y);
    }
    free(ref);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(elementwise_plugin_survives_serialize_and_create)
{
    prt_field f[2] = {ot_i64("program", hswish_prog, 20), ot_f32("consts", hswish_consts, 4)};
    prt_fields fc = {f, 2, 0};
    prt_op *op = NULL, *back = NULL;
    prt_tensor_desc td[2];
    prt_op_config cfg;
    size_t len = 0;
    void *buf;
    float *x = fill(6000, -8, 8), b[3] = {0.5f, -1, 2}, *y1 = malloc(6000 * 4), *y2 = malloc(6000 * 4);
    const void *xs[2] = {x, b};
    void *ys1[1] = {y1}, *ys2[1] = {y2};
    int k;
    CHECK_OK(prt_op_create(prt_registry_global(), "Elementwise", "1", "plugrt", &fc, &op));
    CHECK_OK(prt_op_serialize(op, NULL, 0, &len));
    buf = malloc(len);
    CHECK_OK(prt_op_serialize(op, buf, len, &len));
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, len, &back));
    CHECK(!strcmp(prt_op_creator(back)->plugin_namespace, "plugrt"));
    CHECK(!strcmp(prt_op_creator(back)->name, "Elementwise"));
    memset(td, 0, sizeof td);
    td[0].dtype = td[1].dtype = PRT_DTYPE_F32;
    td[0].dims = ot_dims(3, (int64_t)3, (int64_t)40, (int64_t)50);
    td[1].dims = ot_dims(3, (int64_t)3, (int64_t)1, (int64_t)1);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.nb_threads = 2;
    CHECK_OK(prt_op_configure(op, td, 2, &cfg));
    CHECK_OK(prt_op_configure(back, td, 2, &cfg));
    CHECK_OK(prt_op_run(op, xs, ys1));
    CHECK_OK(prt_op_run(back, xs, ys2));
    CHECK(memcmp(y1, y2, 6000 * 4) == 0);
    for (k = 0; k < 6000; k += 37) CHECK_NEAR(y1[k], hswish_ref(x[k], b[k / 2000]), 1e-5);
    prt_op_destroy(op);
    prt_op_destroy(back);
    free(buf);
    free(x);
    free(y1);
    free(y2);
}

TEST(elementwise_plugin_refuses_bad_programs_clearly)
{
    int64_t bad[8] = {PRT__EW_ADD, 0, -1, 0, PRT__EW_CLIP, 1, 0, 3};
    const float k2[2] = {1, 2};
    prt_field f[2] = {ot_i64("program", bad, 8), ot_f32("consts", k2, 2)};
    prt_fields fc = {f, 2, 0};
    prt_op *op = NULL;
    ot_tensor in[2], y;
    char msg[512];
    /* at create: Clip's parameters outside the constants */
    CHECK(prt_op_create(prt_registry_global(), "Elementwise", "1", "plugrt", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL),
                       "Elementwise v1: instruction 1 (Clip): parameters consts[3, +1] outside the 2 constants");
    bad[7] = 0;
    bad[0] = 40;
    CHECK(prt_op_create(prt_registry_global(), "Elementwise", "1", "plugrt", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "Elementwise v1: instruction 0: opcode 40 is unknown");
    bad[0] = PRT__EW_ADD;
    f[0] = ot_i64("program", bad, 7);
    CHECK(prt_op_create(prt_registry_global(), "Elementwise", "1", "plugrt", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "has 7 values; expected a multiple of 4");
    /* the program field is required */
    fc.fields = &f[1];
    fc.nb = 1;
    CHECK(prt_op_create(prt_registry_global(), "Elementwise", "1", "plugrt", &fc, &op) != PRT_OK);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "program");
    /* at build: value 2 is an input only when there are 3 inputs */
    bad[1] = 2;
    f[0] = ot_i64("program", bad, 4);
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), -1, 1, 1);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), -1, 1, 2);
    CHECK(ot_run_ns("plugrt", "Elementwise", "1", f, 2, in, 2, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "Elementwise v1: instruction 0 (Add): operand a = 2 names a value not computed yet");
    /* shapes that do not broadcast, and a type it does not take */
    bad[1] = 0;
    bad[2] = 1;
    ot_free(&in[1]);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), -1, 1, 2);
    CHECK(ot_run_ns("plugrt", "Elementwise", "1", f, 2, in, 2, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "does not broadcast");
    ot_free(&in[1]);
    in[1] = ot_rand(PRT_DTYPE_F16, ot_dims(1, (int64_t)4), -1, 1, 2);
    CHECK(ot_run_ns("plugrt", "Elementwise", "1", f, 2, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "f16");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

/* ---- the f32 paths of the single ops against the generic path --------------------------- */

/* y_fast and y_generic agree: bit for bit where the op is one correctly
 * rounded operation (max_ulps 0), else within max_ulps, or atol (an fp32
 * formula that cancels), or rtol (an fp32 argument to an ill-conditioned
 * function). */
static int64_t compare_paths(const ot_tensor *a, const ot_tensor *b, double max_ulps, double atol, double rtol,
                             const char *what)
{
    int64_t i, n = ot_vol(a), bad = 0;
    for (i = 0; i < n; i++) {
        float u = ((const float *)a->data)[i], v = ((const float *)b->data)[i];
        double d = fabs((double)u - (double)v);
        if (ulps(u, v) <= max_ulps || d <= atol || d <= rtol * fabs((double)v)) continue;
        if (bad++ < 4)
            prt_test_fail(__FILE__, __LINE__, "%s: element %lld: fast %.9g, generic %.9g (%g ulp)", what,
                          (long long)i, (double)u, (double)v, ulps(u, v));
    }
    return bad;
}

/* Run name/ver on in[] with both paths, compare. */
static int64_t both_paths_r(const char *name, const char *ver, const prt_field *f, int nf, const ot_tensor *in,
                            int nin, double max_ulps, double atol, double rtol)
{
    ot_tensor fast, gen;
    char msg[512], what[128];
    int64_t bad;
    prt_status s;
    prt__ew_set_fast_paths(1);
    s = ot_run(name, ver, f, nf, in, nin, &fast, 1, 2, msg, sizeof msg);
    CHECK_MSG(s == PRT_OK, "%s: %s", name, msg);
    if (s != PRT_OK) return 1;
    prt__ew_set_fast_paths(0);
    s = ot_run(name, ver, f, nf, in, nin, &gen, 1, 2, msg, sizeof msg);
    prt__ew_set_fast_paths(1);
    CHECK_MSG(s == PRT_OK, "%s (generic): %s", name, msg);
    if (s != PRT_OK) {
        ot_free(&fast);
        return 1;
    }
    CHECK(prt_dims_equal(&fast.d, &gen.d) && fast.t == PRT_DTYPE_F32);
    snprintf(what, sizeof what, "%s v%s", name, ver);
    bad = compare_paths(&fast, &gen, max_ulps, atol, rtol, what);
    ot_free(&fast);
    ot_free(&gen);
    return bad;
}

static int64_t both_paths(const char *name, const char *ver, const prt_field *f, int nf, const ot_tensor *in, int nin,
                          double max_ulps, double atol)
{
    return both_paths_r(name, ver, f, nf, in, nin, max_ulps, atol, 0);
}

TEST(f32_unary_paths_equal_the_generic_path)
{
    static const struct {
        const char *name, *ver;
        double lo, hi, ulps, atol, rtol;
    } cs[] = {
        /* Gelu: erfc(z) has relative condition 2 z^2 for large z, so rounding a / sqrt 2 to fp32 costs up to
         * 2 z^2 2^-24 (2e-6 at z = 4) */
        {"Gelu", "20", -6, 6, 4, 0, 2.5e-6},
        {"Abs", "6", -5, 5, 0, 0},          {"Neg", "6", -5, 5, 0, 0},        {"Ceil", "6", -5, 5, 0, 0},
        {"Floor", "6", -5, 5, 0, 0},        {"Sqrt", "6", 0, 50, 0, 0},       {"Reciprocal", "6", 0.1, 9, 0, 0},
        {"Relu", "6", -5, 5, 0, 0},         {"Relu", "1", -5, 5, 0, 0},       {"Exp", "6", -20, 20, 1, 0},
        {"Log", "6", 1e-4, 50, 1, 0},       {"Erf", "9", -4, 4, 2, 0},        {"Sigmoid", "6", -15, 15, 2, 0},
        {"Tanh", "6", -6, 6, 2, 0},         {"Softplus", "1", -15, 15, 3, 0}, {"HardSwish", "14", -5, 5, 2, 0},
        {"Elu", "6", -5, 5, 2, 0},        {"LeakyRelu", "6", -5, 5, 1, 0},
        {"HardSigmoid", "6", -5, 5, 1, 0}, {"Clip", "6", -5, 5, 0, 0},     {"Identity", "1", -5, 5, 0, 0},
    };
    const float alpha = 0.7f, lo = -0.5f, hi = 0.75f;
    size_t c;
    for (c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(3, (int64_t)7, (int64_t)61, (int64_t)83), cs[c].lo, cs[c].hi,
                              (uint32_t)c + 1);
        prt_field f[2];
        int nf = 0;
        if (!strcmp(cs[c].name, "Elu") || !strcmp(cs[c].name, "LeakyRelu")) f[nf++] = ot_f32("alpha", &alpha, 1);
        if (!strcmp(cs[c].name, "Clip")) {
            f[nf++] = ot_f32("min", &lo, 1);
            f[nf++] = ot_f32("max", &hi, 1);
        }
        CHECK_MSG(both_paths_r(cs[c].name, cs[c].ver, f, nf, &x, 1, cs[c].ulps, cs[c].atol, cs[c].rtol) == 0, "%s",
                  cs[c].name);
        ot_free(&x);
    }
}

TEST(f32_clip_11_and_hardsigmoid_attributes_equal_the_generic_path)
{
    ot_tensor in[3];
    const float a = 1.0f / 6.0f, b = 0.5f, mx = 6.0f;
    prt_field f[2] = {ot_f32("alpha", &a, 1), ot_f32("beta", &b, 1)};
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)300, (int64_t)70), -9, 9, 7);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){-1.25});
    in[2] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)1), (const double[]){2.5});
    CHECK_EQ_INT(both_paths("HardSigmoid", "6", f, 2, in, 1, 1, 0), 0);
    CHECK_EQ_INT(both_paths("Clip", "11", NULL, 0, in, 3, 0, 0), 0);
    CHECK_EQ_INT(both_paths("Clip", "11", NULL, 0, in, 2, 0, 0), 0);
    CHECK_EQ_INT(both_paths("Clip", "11", NULL, 0, in, 1, 0, 0), 0);
    f[0] = ot_f32("input:2", &mx, 1);
    CHECK_EQ_INT(both_paths("Clip", "11", f, 1, in, 2, 0, 0), 0);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}

TEST(f32_binary_and_variadic_paths_equal_the_generic_path)
{
    static const struct {
        const char *name, *ver;
        double ulps;
    } ops[] = {{"Add", "7", 0}, {"Sub", "7", 0}, {"Mul", "7", 0}, {"Div", "7", 0},
               {"Max", "6", 0}, {"Min", "6", 0}, {"Pow", "7", 1}, {"PRelu", "7", 0}};
    static const struct {
        int rank[2];
        int64_t d[2][4];
    } shapes[] = {
        {{4, 4}, {{2, 3, 17, 19}, {2, 3, 17, 19}}}, {{4, 3}, {{2, 3, 17, 19}, {3, 1, 1}}},
        {{4, 1}, {{2, 3, 17, 19}, {19}}},           {{4, 0}, {{2, 3, 17, 19}, {0}}},
        {{3, 3}, {{40, 1, 30}, {1, 50, 1}}},        {{2, 2}, {{300, 400}, {300, 400}}},
    };
    size_t o, s;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            int pow_op = !strcmp(ops[o].name, "Pow"), prelu = !strcmp(ops[o].name, "PRelu");
            ot_tensor in[2];
            if (prelu && s == 4) continue; /* the slope must broadcast to X */
            in[0] = ot_rand(PRT_DTYPE_F32, ot_dims_of(shapes[s].rank[0], shapes[s].d[0]), pow_op ? 0.1 : -4, 4,
                            (uint32_t)(o * 10 + s));
            in[1] = ot_rand(PRT_DTYPE_F32, ot_dims_of(shapes[s].rank[1], shapes[s].d[1]), pow_op ? -2.5 : -4, 4,
                            (uint32_t)(o * 10 + s + 5));
            CHECK_MSG(both_paths(ops[o].name, ops[o].ver, NULL, 0, in, 2, ops[o].ulps, 0) == 0, "%s shape %d",
                      ops[o].name, (int)s);
            ot_free(&in[0]);
            ot_free(&in[1]);
        }
    /* Pow by a scalar 2: a square, exact */
    {
        ot_tensor in[2] = {ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)100, (int64_t)100), -30, 30, 3),
                           ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){2})};
        CHECK_EQ_INT(both_paths("Pow", "7", NULL, 0, in, 2, 0, 0), 0);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
    /* Sum, Mean, Max, Min over 1, 3 and 8 inputs of different shapes */
    {
        static const char *const vs[] = {"Sum", "Mean", "Max", "Min"};
        ot_tensor in[8];
        int k, v, nin;
        for (k = 0; k < 8; k++)
            in[k] = ot_rand(PRT_DTYPE_F32,
                            k % 3 == 0   ? ot_dims(3, (int64_t)5, (int64_t)40, (int64_t)33)
                            : k % 3 == 1 ? ot_dims(3, (int64_t)5, (int64_t)1, (int64_t)33)
                                         : ot_dims(1, (int64_t)33),
                            0.5, 4, (uint32_t)(100 + k));
        for (v = 0; v < 4; v++)
            for (nin = 1; nin <= 8; nin += nin == 1 ? 2 : 5) {
                /* fp32 partial sums round where double's do not: a few ulp for positive terms */
                CHECK_MSG(both_paths(vs[v], "6", NULL, 0, in, nin, v < 2 ? 4 : 0, 0) == 0, "%s of %d", vs[v], nin);
            }
        for (k = 0; k < 8; k++) ot_free(&in[k]);
    }
}

/* The engine takes only f32; other dtypes keep the generic path. */
TEST(other_dtypes_keep_the_generic_path)
{
    ot_tensor in[2], y;
    char msg[256];
    double ref[6];
    int i;
    in[0] = ot_make(PRT_DTYPE_F16, ot_dims(2, (int64_t)2, (int64_t)3), (const double[]){-1, 0.5, 2, -3, 4, 0});
    in[1] = ot_make(PRT_DTYPE_F16, ot_dims(1, (int64_t)3), (const double[]){0.25, -2, 1});
    CHECK_OK(ot_run("Mul", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    for (i = 0; i < 6; i++) ref[i] = ot_get(&in[0], i) * ot_get(&in[1], i % 3);
    CHECK_EQ_INT(y.t, PRT_DTYPE_F16);
    CHECK_EQ_INT(ot_compare(&y, ref, 6, 0, 0, "Mul f16"), 0);
    ot_free(&y);
    /* a float exponent on an int base: generic */
    ot_free(&in[0]);
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(1, (int64_t)3), (const double[]){2, 3, 4});
    CHECK_OK(ot_run("Pow", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
    CHECK(((int32_t *)y.data)[0] == 1 && ((int32_t *)y.data)[2] == 4);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

/* The vectorizable exp behind Exp, Sigmoid and Softmax: within 2 ulp of
 * exp() in double over every 251st float of its range, and its edges. */
TEST(vector_exp_within_two_ulp_everywhere)
{
    uint32_t b;
    double worst = 0;
    for (b = 0; b < 0xFF800000u; b += 251) {
        float x, got, rf;
        double ref, ulp;
        memcpy(&x, &b, sizeof x);
        if (x != x || x < -103.0f || x > 88.72f) continue;
        for (int sgn = 0; sgn < 2; sgn++) {
            float xs = sgn ? -x : x;
            if (xs < -103.0f || xs > 88.72f) continue;
            ref = exp((double)xs);
            got = prt__ew_expf(xs);
            rf = (float)ref;
            ulp = rf == 0.0f ? 1.4e-45 : (double)nextafterf(rf, INFINITY) - (double)rf;
            if (ulp < 1.4e-45) ulp = 1.4e-45;
            if (fabs((double)got - ref) / ulp > worst) worst = fabs((double)got - ref) / ulp;
        }
    }
    CHECK_MSG(worst <= 2.0, "worst error %.3f ulp", worst);
    CHECK(isinf(prt__ew_expf(89.0f)) && prt__ew_expf(89.0f) > 0);
    CHECK(isinf(prt__ew_expf(INFINITY)));
    CHECK(prt__ew_expf(-INFINITY) == 0.0f);
    CHECK(prt__ew_expf(-200.0f) == 0.0f);
    CHECK(isnan(prt__ew_expf(NAN)));
    CHECK(prt__ew_expf(0.0f) == 1.0f);
    CHECK(prt__ew_expf(-100.0f) > 0.0f); /* subnormal, not flushed */
}
