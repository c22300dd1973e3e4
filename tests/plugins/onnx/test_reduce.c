/* ONNX reductions, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax and CumSum
 * (plugins/onnx/reduce) against brute-force float64 references: every axes
 * set of a 3-D input with keepdims 0 and 1, negative axes, the axes-input
 * form, empty and 0-d tensors, integer types, bad axes. */
#include <math.h>

#include "onnx_test_util.h"
#include "prt_test.h"

static const char *const kinds[] = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                                    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                                    "ReduceSumSquare"};

static double fold(int kind, const double *v, int64_t n)
{
    double acc = kind == 4 ? 1 : kind == 2 ? -INFINITY : kind == 3 ? INFINITY : 0, m = -INFINITY;
    int64_t i;
    for (i = 0; i < n; i++) {
        switch (kind) {
        case 0: case 1: case 7: acc += v[i]; break;
        case 2: acc = fmax(acc, v[i]); break;
        case 3: acc = fmin(acc, v[i]); break;
        case 4: acc *= v[i]; break;
        case 5: acc += fabs(v[i]); break;
        case 6: case 9: acc += v[i] * v[i]; break;
        case 8: m = fmax(m, v[i]); break;
        }
    }
    if (kind == 8) {
        for (i = 0; i < n; i++) acc += exp(v[i] - m);
        return n ? m + log(acc) : -INFINITY;
    }
    return kind == 1 ? acc / n : kind == 6 ? sqrt(acc) : kind == 7 ? log(acc) : acc;
}

/* Reference reduction of x (shape d) over mask, output in row-major order of kept dims. */
static void reduce_ref(int kind, const ot_tensor *x, const int *mask, double *out, int64_t *nout)
{
    const prt_dims *d = &x->d;
    int64_t vol = ot_vol(x), o, i, cnt = 0, no = 1, vals_n;
    double *vals = malloc((size_t)(vol + 1) * sizeof *vals);
    int32_t a;
    for (a = 0; a < d->nb; a++)
        if (!mask[a]) no *= d->d[a];
    for (o = 0; o < no; o++) {
        vals_n = 0;
        for (i = 0; i < vol; i++) {
            /* does element i map to output o? */
            int64_t rem = i, oo = 0, mul = 1;
            for (a = d->nb - 1; a >= 0; a--) {
                int64_t c = rem % d->d[a];
                rem /= d->d[a];
                if (!mask[a]) {
                    oo += c * mul;
                    mul *= d->d[a];
                }
            }
            if (oo == o) vals[vals_n++] = ot_get(x, i);
        }
        out[cnt++] = fold(kind, vals, vals_n);
    }
    *nout = cnt;
    free(vals);
}

TEST(reductions_over_every_axes_set_match_float64)
{
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(3, (int64_t)3, (int64_t)4, (int64_t)5), 0.2, 1.5, 3), y;
    static const int64_t axes_sets[][3] = {{0}, {1}, {2}, {-1}, {0, 2}, {-3, -2}, {0, 1, 2}};
    static const int nb_axes[] = {1, 1, 1, 1, 2, 2, 3};
    double ref[64];
    char msg[512];
    size_t k, s;
    int keep, mask[3];
    for (k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (s = 0; s <= sizeof nb_axes / sizeof nb_axes[0]; s++)
            for (keep = 0; keep < 2; keep++) {
                int64_t kd = keep, nref, a;
                prt_field f[2];
                int nf = 0, form;
                for (a = 0; a < 3; a++) mask[a] = s == sizeof nb_axes / sizeof nb_axes[0]; /* last: no axes = all */
                for (a = 0; s < sizeof nb_axes / sizeof nb_axes[0] && a < nb_axes[s]; a++)
                    mask[(axes_sets[s][a] + 3) % 3] = 1;
                reduce_ref((int)k, &x, mask, ref, &nref);
                for (form = 0; form < 2; form++) { /* attribute axes (v1), then axes input (v13/18) */
                    const char *ver = form == 0 ? "1" : k == 0 ? "13" : "18";
                    prt_status st;
                    nf = 0;
                    f[nf++] = ot_i64("keepdims", &kd, 1);
                    if (s < sizeof nb_axes / sizeof nb_axes[0])
                        f[nf++] = ot_i64(form == 0 ? "axes" : "input:1", axes_sets[s], nb_axes[s]);
                    st = ot_run(kinds[k], ver, f, nf, &x, 1, &y, 1, 2, msg, sizeof msg);
                    CHECK_MSG(st == PRT_OK, "%s v%s: %s", kinds[k], ver, msg);
                    if (st != PRT_OK) continue;
                    CHECK_EQ_INT(y.d.nb, keep ? 3 : 3 - (mask[0] + mask[1] + mask[2]));
                    CHECK_EQ_INT(ot_vol(&y), nref);
                    CHECK_EQ_INT(ot_compare(&y, ref, nref, 1e-5, 1e-30, kinds[k]), 0);
                    ot_free(&y);
                }
            }
    ot_free(&x);
}

TEST(reduce_noop_empty_sets_integers_and_bad_axes)
{
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), -1, 1, 5), y, e, xi;
    char msg[512];
    int64_t one = 1, ax = 1, bad = 2;
    prt_field f[2];
    int64_t i;
    /* noop_with_empty_axes=1 without axes: the input */
    f[0] = ot_i64("noop_with_empty_axes", &one, 1);
    CHECK_OK(ot_run("ReduceSum", "13", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK(prt_dims_equal(&y.d, &x.d));
    for (i = 0; i < 6; i++) CHECK(ot_get(&y, i) == ot_get(&x, i));
    ot_free(&y);
    /* Empty reduced axis: Sum 0, Prod 1, Max -inf, Mean NaN */
    e = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)0), NULL);
    f[0] = ot_i64("axes", &ax, 1);
    CHECK_OK(ot_run("ReduceSum", "1", f, 1, &e, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 0}, 2, 0, 0, "sum of nothing"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ReduceProd", "1", f, 1, &e, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 1}, 2, 0, 0, "product of nothing"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ReduceMax", "1", f, 1, &e, 1, &y, 1, 1, msg, sizeof msg));
    CHECK(isinf(ot_get(&y, 0)) && ot_get(&y, 0) < 0);
    ot_free(&y);
    /* Empty kept axis: empty output */
    f[0] = ot_i64("axes", &(int64_t){0}, 1);
    CHECK_OK(ot_run("ReduceMean", "1", f, 1, &e, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_vol(&y), 0);
    ot_free(&y);
    ot_free(&e);
    /* int64 sums stay exact */
    xi = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), NULL);
    ((int64_t *)xi.data)[0] = (int64_t)1 << 60;
    ((int64_t *)xi.data)[1] = 1;
    ((int64_t *)xi.data)[2] = 2;
    CHECK_OK(ot_run("ReduceSum", "1", NULL, 0, &xi, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.d.nb, 1);
    CHECK_EQ_INT(((int64_t *)y.data)[0], ((int64_t)1 << 60) + 3);
    ot_free(&y);
    CHECK_OK(ot_run("ReduceMin", "18", NULL, 0, &xi, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(((int64_t *)y.data)[0], 1);
    ot_free(&y);
    ot_free(&xi);
    /* 0-d input: reducing all axes of nothing is the value */
    e = ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){4});
    CHECK_OK(ot_run("ReduceL2", "1", NULL, 0, &e, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.d.nb, 0);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){4}, 1, 0, 0, "0-d"), 0);
    ot_free(&y);
    ot_free(&e);
    /* Axis out of range and a repeated axis */
    f[0] = ot_i64("axes", &bad, 1);
    CHECK(ot_run("ReduceSum", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "ReduceSum v1");
    CHECK_STR_CONTAINS(msg, "outside [-2, 1]");
    f[0] = ot_i64("input:1", (const int64_t[]){1, -1}, 2);
    CHECK(ot_run("ReduceMax", "18", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "twice");
    ot_free(&x);
}

TEST(argmax_argmin_ties_and_select_last_index)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)4), (const double[]){1, 5, 5, 0, -1, -3, 2, -3}), y;
    char msg[256];
    int64_t ax = -1, keep0 = 0, last = 1;
    prt_field f[3] = {ot_i64("axis", &ax, 1), ot_i64("keepdims", &keep0, 1), ot_i64("select_last_index", &last, 1)};
    CHECK_OK(ot_run("ArgMax", "1", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    CHECK_EQ_INT(y.d.nb, 1);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 2}, 2, 0, 0, "ArgMax first"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ArgMax", "12", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){2, 2}, 2, 0, 0, "ArgMax last"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ArgMin", "12", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){3, 3}, 2, 0, 0, "ArgMin last"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ArgMin", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.d.nb, 2);
    CHECK_EQ_INT(y.d.d[1], 1);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){3, 1}, 2, 0, 0, "ArgMin keepdims"), 0);
    ot_free(&y);
    ot_free(&x);
}

static void softmax_ref(const ot_tensor *x, int64_t outer, int64_t len, int64_t inner, int kind, double *ref)
{
    int64_t o, i, k;
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            double m = -INFINITY, s = 0;
            int64_t best = 0;
            for (k = 0; k < len; k++) {
                double v = ot_get(x, (o * len + k) * inner + i);
                if (v > m) { m = v; best = k; }
            }
            for (k = 0; k < len; k++) s += exp(ot_get(x, (o * len + k) * inner + i) - m);
            for (k = 0; k < len; k++) {
                double v = ot_get(x, (o * len + k) * inner + i);
                ref[(o * len + k) * inner + i] = kind == 0 ? exp(v - m) / s : kind == 1 ? v - m - log(s) : k == best;
            }
        }
}

TEST(softmax_family_versions_1_and_13)
{
    static const char *const ops[] = {"Softmax", "LogSoftmax", "Hardmax"};
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(3, (int64_t)3, (int64_t)4, (int64_t)70), -8, 8, 11), y;
    double *ref = malloc(3 * 4 * 70 * sizeof *ref);
    char msg[256];
    int k;
    int64_t ax1 = 1, axm2 = -2;
    prt_field f;
    for (k = 0; k < 3; k++) {
        /* v13 default axis -1 */
        CHECK_OK(ot_run(ops[k], "13", NULL, 0, &x, 1, &y, 1, 2, msg, sizeof msg));
        softmax_ref(&x, 12, 70, 1, k, ref);
        CHECK_EQ_INT(ot_compare(&y, ref, 840, 1e-5, 1e-30, ops[k]), 0);
        ot_free(&y);
        /* v13 axis -2: one axis with inner extent 70 */
        f = ot_i64("axis", &axm2, 1);
        CHECK_OK(ot_run(ops[k], "13", &f, 1, &x, 1, &y, 1, 2, msg, sizeof msg));
        softmax_ref(&x, 3, 4, 70, k, ref);
        CHECK_EQ_INT(ot_compare(&y, ref, 840, 1e-5, 1e-30, ops[k]), 0);
        ot_free(&y);
        /* v1 default axis 1: coerced to [3, 280] */
        f = ot_i64("axis", &ax1, 1);
        CHECK_OK(ot_run(ops[k], "1", &f, 1, &x, 1, &y, 1, 2, msg, sizeof msg));
        softmax_ref(&x, 3, 280, 1, k, ref);
        CHECK_EQ_INT(ot_compare(&y, ref, 840, 1e-5, 1e-30, ops[k]), 0);
        ot_free(&y);
    }
    f = ot_i64("axis", &(int64_t){3}, 1);
    CHECK(ot_run("Softmax", "13", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "axis 3 is outside [-3, 2]");
    free(ref);
    ot_free(&x);
}

/* f32 along the last axis (its own path): long rows of wide logits, -inf
 * entries, a NaN, in place. */
TEST(softmax_f32_last_axis_wide_logits_nan_and_inf)
{
    static const char *const ops[] = {"Softmax", "LogSoftmax"};
    const int64_t len = 6625, rows = 4, n = rows * len;
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(2, rows, len), -40, 40, 5), y;
    double *ref = malloc((size_t)n * sizeof *ref);
    char msg[256];
    int k;
    ((float *)x.data)[3] = -INFINITY;
    ((float *)x.data)[len + 7] = INFINITY; /* a row with +inf: inf - inf */
    ((float *)x.data)[2 * len + 100] = NAN;
    for (k = 0; k < 2; k++) {
        CHECK_OK(ot_run(ops[k], "13", NULL, 0, &x, 1, &y, 1, 2, msg, sizeof msg));
        softmax_ref(&x, rows, len, 1, k, ref);
        CHECK(isnan(ot_get(&y, 2 * len)) && isnan(ot_get(&y, 3 * len - 1))); /* the NaN row */
        CHECK_EQ_INT(ot_compare(&y, ref, n, 1e-5, 1e-30, ops[k]), 0);
        ot_free(&y);
    }
    free(ref);
    ot_free(&x);
}

TEST(cumsum_exclusive_reverse_axis_as_input_or_field)
{
    ot_tensor in[2], y;
    char msg[256];
    int64_t one = 1;
    prt_field f[3] = {ot_i64("exclusive", &one, 1), ot_i64("reverse", &one, 1), ot_i64("input:1", &one, 1)};
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), (const double[]){1, 2, 3, 4, 5, 6});
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(0), (const double[]){0});
    CHECK_OK(ot_run("CumSum", "11", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 2, 3, 5, 7, 9}, 6, 0, 0, "CumSum axis 0"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("CumSum", "11", f, 3, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){5, 3, 0, 11, 6, 0}, 6, 0, 0, "CumSum exclusive reverse"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("CumSum", "11", &f[2], 1, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 3, 6, 4, 9, 15}, 6, 0, 0, "CumSum axis field"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    in[0] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), (const double[]){1, -2, 3});
    CHECK_OK(ot_run("CumSum", "11", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, -1, 2}, 3, 0, 0, "CumSum i64"), 0);
    ot_free(&y);
    CHECK(ot_run("CumSum", "11", NULL, 0, in, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "axis is missing");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(cumprod_inclusive_exclusive_reverse)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), (const double[]){1, 2, 3, 4}), y;
    char msg[256];
    int64_t zero = 0, one = 1;
    prt_field f[3] = {ot_i64("input:1", &zero, 1), ot_i64("exclusive", &one, 1), ot_i64("reverse", &one, 1)};
    CHECK_OK(ot_run("CumProd", "26", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 2, 6, 24}, 4, 0, 0, "CumProd"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("CumProd", "26", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 1, 2, 6}, 4, 0, 0, "CumProd exclusive"), 0);
    ot_free(&y);
    f[1] = f[2];
    CHECK_OK(ot_run("CumProd", "26", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){24, 24, 12, 4}, 4, 0, 0, "CumProd reverse"), 0);
    ot_free(&y);
    ot_free(&x);
}

TEST(nll_and_softmax_cross_entropy_losses)
{
    /* scores [2, 3, 2], targets [2, 2], weights [3]; target -1 is ignored */
    const double sc[12] = {0.1, -0.4, 1.2, 0.3, -0.7, 2.0, 0.5, 0.9, -1.1, 0.0, 0.4, -0.2};
    const double tg[4] = {2, -1, 0, 1}, wt[3] = {0.5, 2.0, 1.5};
    ot_tensor in[3], y[2];
    char msg[256];
    int64_t ign = -1, i, k, c;
    double none[4], sum = 0, wsum = 0, lp[12];
    prt_field f[2] = {ot_str("reduction", "none"), ot_i64("ignore_index", &ign, 1)};
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)2), sc);
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)2, (int64_t)2), tg);
    in[2] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), wt);
    for (i = 0; i < 2; i++)
        for (k = 0; k < 2; k++) {
            double m = -1e300, s = 0;
            for (c = 0; c < 3; c++) m = fmax(m, (double)(float)sc[(i * 3 + c) * 2 + k]);
            for (c = 0; c < 3; c++) s += exp((double)(float)sc[(i * 3 + c) * 2 + k] - m);
            for (c = 0; c < 3; c++) lp[(i * 3 + c) * 2 + k] = (double)(float)sc[(i * 3 + c) * 2 + k] - m - log(s);
        }
    /* NLL on the raw scores, reduction none, then sum and mean */
    for (i = 0; i < 4; i++) {
        int64_t n = i / 2, d = i % 2, t = (int64_t)tg[i];
        none[i] = t < 0 ? 0 : -(double)(float)sc[(n * 3 + t) * 2 + d] * wt[t];
        if (t >= 0) {
            sum += none[i];
            wsum += wt[t];
        }
    }
    CHECK_OK(ot_run("NegativeLogLikelihoodLoss", "12", f, 2, in, 3, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], none, 4, 1e-6, 1e-7, "NLL none"), 0);
    ot_free(&y[0]);
    f[0] = ot_str("reduction", "mean");
    CHECK_OK(ot_run("NegativeLogLikelihoodLoss", "12", f, 2, in, 3, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y[0].d.nb, 0);
    CHECK_EQ_INT(ot_compare(&y[0], (const double[]){sum / wsum}, 1, 1e-6, 1e-7, "NLL mean"), 0);
    ot_free(&y[0]);
    /* SoftmaxCrossEntropyLoss sum with log_prob */
    f[0] = ot_str("reduction", "sum");
    sum = 0;
    for (i = 0; i < 4; i++) {
        int64_t n = i / 2, d = i % 2, t = (int64_t)tg[i];
        if (t >= 0) sum += -lp[(n * 3 + t) * 2 + d] * wt[t];
    }
    CHECK_OK(ot_run("SoftmaxCrossEntropyLoss", "12", f, 2, in, 3, y, 2, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], (const double[]){sum}, 1, 1e-6, 1e-7, "SCE sum"), 0);
    CHECK_EQ_INT(ot_compare(&y[1], lp, 12, 1e-6, 1e-7, "SCE log_prob"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    /* a target outside the classes */
    ((int64_t *)in[1].data)[1] = 3;
    CHECK(ot_run("NegativeLogLikelihoodLoss", "12", NULL, 0, in, 2, y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "target 3 at position 1");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}
