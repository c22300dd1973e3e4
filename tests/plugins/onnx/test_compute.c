/* ONNX compute ops (plugins/onnx/compute): MatMul with batch broadcasting
 * and 1-D operands, Gemm with transposes, alpha, beta and broadcast C, Conv
 * (im2col, 1x1, depthwise, groups, dilations, pads, auto_pad, 1-D) against
 * float64 references computed here. */
#include "onnx_test_util.h"
#include "prt_test.h"

#define FI(nm, ...) ot_i64(nm, (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void expect_dims(const ot_tensor *y, prt_dims d)
{
    char a[128], b[128];
    CHECK_MSG(prt_dims_equal(&y->d, &d), "dims %s, expected %s", prt_dims_str(&y->d, a, sizeof a),
              prt_dims_str(&d, b, sizeof b));
}

/* |y - ref| <= 1e-5 * sum|terms| per element (the float64 reference's magnitude). */
static int64_t compare_mag(const ot_tensor *y, const double *ref, const double *mag, int64_t n, const char *what)
{
    int64_t i, bad = 0;
    for (i = 0; i < n; i++) {
        double v = ot_get(y, i);
        if (!(fabs(v - ref[i]) <= 1e-5 * mag[i] + 1e-30) && bad++ < 4)
            prt_test_fail(__FILE__, __LINE__, "%s: element %lld is %.9g, expected %.17g", what, (long long)i, v,
                          ref[i]);
    }
    return bad;
}

TEST(matmul_broadcasts_batches_and_promotes_vectors)
{
    static const int64_t shapes[][2][4] = {
        {{2, 3, 4, 0}, {2, 4, 5, 0}},   /* [2,3,4] x [2,4,5] */
        {{1, 3, 4, 0}, {2, 4, 70, 0}},  /* batch broadcast */
        {{40, 300, 0, 0}, {300, 33, 0, 0}},
        {{4, 0, 0, 0}, {4, 6, 0, 0}},   /* 1-D A */
        {{2, 5, 4, 0}, {4, 0, 0, 0}},   /* 1-D B */
        {{3, 0, 0, 0}, {3, 0, 0, 0}},   /* dot: 0-d out */
    };
    static const int ranks[][2] = {{3, 3}, {3, 3}, {2, 2}, {1, 2}, {3, 1}, {1, 1}};
    size_t c;
    char msg[512];
    for (c = 0; c < sizeof ranks / sizeof ranks[0]; c++) {
        ot_tensor in[2], y;
        prt_dims da, db;
        int64_t M, K, N, B, bi, i, j, k, nout;
        double *ref, *mag;
        memset(&da, 0, sizeof da);
        memset(&db, 0, sizeof db);
        da.nb = ranks[c][0];
        db.nb = ranks[c][1];
        for (i = 0; i < da.nb; i++) da.d[i] = shapes[c][0][i];
        for (i = 0; i < db.nb; i++) db.d[i] = shapes[c][1][i];
        in[0] = ot_rand(PRT_DTYPE_F32, da, -1, 1, (uint32_t)c);
        in[1] = ot_rand(PRT_DTYPE_F32, db, -1, 1, (uint32_t)c + 50);
        CHECK_OK(ot_run("MatMul", "1", NULL, 0, in, 2, &y, 1, 2, msg, sizeof msg));
        M = da.nb >= 2 ? da.d[da.nb - 2] : 1;
        K = da.d[da.nb - 1];
        N = db.nb >= 2 ? db.d[db.nb - 1] : 1;
        B = ot_vol(&y) / (M * N);
        nout = ot_vol(&y);
        ref = calloc((size_t)nout, sizeof *ref);
        mag = calloc((size_t)nout, sizeof *mag);
        for (bi = 0; bi < B; bi++) {
            int64_t oa = da.nb == 3 && da.d[0] > 1 ? bi * M * K : 0, ob = db.nb == 3 && db.d[0] > 1 ? bi * K * N : 0;
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++)
                    for (k = 0; k < K; k++) {
                        double p = ot_get(&in[0], oa + i * K + k) * ot_get(&in[1], ob + k * N + j);
                        ref[(bi * M + i) * N + j] += p;
                        mag[(bi * M + i) * N + j] += fabs(p);
                    }
        }
        CHECK_EQ_INT(compare_mag(&y, ref, mag, nout, "MatMul"), 0);
        if (c == 3) expect_dims(&y, ot_dims(1, (int64_t)6));
        if (c == 4) expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)5));
        if (c == 5) CHECK_EQ_INT(y.d.nb, 0);
        free(ref);
        free(mag);
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
    }
}

TEST(gemm_transposes_alpha_beta_and_c_broadcast)
{
    ot_tensor in[3], y;
    char msg[512];
    int t;
    for (t = 0; t < 4; t++) {
        int ta = t & 1, tb = t >> 1;
        const int64_t M = 7, K = 300, N = 19;
        double ref[7 * 19], mag[7 * 19];
        float alpha = 0.5f, beta = t == 3 ? 0.0f : 2.0f;
        prt_field f[4] = {ot_f32("alpha", &alpha, 1), ot_f32("beta", &beta, 1), FI("transA", ta), FI("transB", tb)};
        int64_t i, j, k;
        in[0] = ot_rand(PRT_DTYPE_F32, ta ? ot_dims(2, K, M) : ot_dims(2, M, K), -1, 1, 1);
        in[1] = ot_rand(PRT_DTYPE_F32, tb ? ot_dims(2, N, K) : ot_dims(2, K, N), -1, 1, 2);
        in[2] = ot_rand(PRT_DTYPE_F32, t == 1 ? ot_dims(2, M, (int64_t)1) : ot_dims(1, N), -1, 1, 3);
        CHECK_OK(ot_run("Gemm", "7", f, 4, in, 3, &y, 1, 2, msg, sizeof msg));
        expect_dims(&y, ot_dims(2, M, N));
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                double acc = 0, mg = 0, cv = ot_get(&in[2], t == 1 ? i : j);
                for (k = 0; k < K; k++) {
                    double p = ot_get(&in[0], ta ? k * M + i : i * K + k) * ot_get(&in[1], tb ? j * K + k : k * N + j);
                    acc += p;
                    mg += fabs(p);
                }
                ref[i * N + j] = 0.5 * acc + beta * cv;
                mag[i * N + j] = 0.5 * mg + fabs(beta * cv);
            }
        CHECK_EQ_INT(compare_mag(&y, ref, mag, M * N, "Gemm"), 0);
        ot_free(&y);
        /* without C */
        CHECK_OK(ot_run("Gemm", "7", f, 4, in, 2, &y, 1, 1, msg, sizeof msg));
        ot_free(&y);
        ot_free(&in[0]);
        ot_free(&in[1]);
        ot_free(&in[2]);
    }
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4), -1, 1, 1);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(2, (int64_t)5, (int64_t)6), -1, 1, 1);
    CHECK(ot_run("Gemm", "7", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "K = 4");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

typedef struct conv_case {
    int64_t n, cin, h, w, cout, kh, kw, group;
    int64_t stride[2], dil[2], pads[4];
    const char *auto_pad;
    int one_d, bias;
} conv_case;

static void conv_ref(const conv_case *c, const ot_tensor *x, const ot_tensor *wt, const ot_tensor *b, int64_t oh,
                     int64_t ow, int64_t ph, int64_t pw, double *ref, double *mag)
{
    int64_t n, o, oy, ox, ci, i, j, cg = c->cin / c->group, coutg = c->cout / c->group;
    for (n = 0; n < c->n; n++)
        for (o = 0; o < c->cout; o++)
            for (oy = 0; oy < oh; oy++)
                for (ox = 0; ox < ow; ox++) {
                    double acc = b ? ot_get(b, o) : 0, mg = fabs(acc);
                    int64_t g = o / coutg;
                    for (ci = 0; ci < cg; ci++)
                        for (i = 0; i < c->kh; i++)
                            for (j = 0; j < c->kw; j++) {
                                int64_t iy = oy * c->stride[0] - ph + i * c->dil[0];
                                int64_t ix = ox * c->stride[1] - pw + j * c->dil[1];
                                double p;
                                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
                                p = ot_get(x, ((n * c->cin + g * cg + ci) * c->h + iy) * c->w + ix) *
                                    ot_get(wt, ((o * cg + ci) * c->kh + i) * c->kw + j);
                                acc += p;
                                mg += fabs(p);
                            }
                    ref[((n * c->cout + o) * oh + oy) * ow + ox] = acc;
                    mag[((n * c->cout + o) * oh + oy) * ow + ox] = mg;
                }
}

/* Output extents and begin pads of a case (as ONNX defines them). */
static void conv_case_geo(const conv_case *c, int64_t *oh, int64_t *ow, int64_t *ph, int64_t *pw)
{
    int64_t tot;
    *ph = c->pads[0];
    *pw = c->pads[1];
    if (c->auto_pad && c->auto_pad[0] == 'S') {
        *oh = (c->h + c->stride[0] - 1) / c->stride[0];
        *ow = (c->w + c->stride[1] - 1) / c->stride[1];
        tot = (*oh - 1) * c->stride[0] + (c->kh - 1) * c->dil[0] + 1 - c->h;
        *ph = c->auto_pad[5] == 'U' ? tot / 2 : tot - tot / 2;
        tot = (*ow - 1) * c->stride[1] + (c->kw - 1) * c->dil[1] + 1 - c->w;
        *pw = c->auto_pad[5] == 'U' ? tot / 2 : tot - tot / 2;
    } else {
        int64_t pe_h = c->pads[2], pe_w = c->pads[3];
        if (c->auto_pad) *ph = *pw = pe_h = pe_w = 0;
        *oh = (c->h + *ph + pe_h - (c->kh - 1) * c->dil[0] - 1) / c->stride[0] + 1;
        *ow = (c->w + *pw + pe_w - (c->kw - 1) * c->dil[1] - 1) / c->stride[1] + 1;
    }
    if (c->one_d) *oh = 1;
}

/* op v1 with fields f on inputs in, on 1 and on 2 threads: output dims d,
 * within 1e-5 of the float64 reference's magnitude, the same bits. */
static void run_on_1_and_2_threads(const char *op, const prt_field *f, int nf, const ot_tensor *in, int nin, prt_dims d,
                                   const double *ref, const double *mag, const char *what)
{
    ot_tensor y[2];
    const int64_t n = prt_dims_volume(&d);
    char msg[512];
    int t;
    for (t = 0; t < 2; t++) {
        prt_status st = ot_run(op, "1", f, nf, in, nin, &y[t], 1, t + 1, msg, sizeof msg);
        CHECK_MSG(st == PRT_OK, "%s, %d thread(s): %s", what, t + 1, msg);
        if (st != PRT_OK) {
            y[t].data = NULL;
            continue;
        }
        expect_dims(&y[t], d);
        CHECK_MSG(compare_mag(&y[t], ref, mag, n, op) == 0, "%s, %d thread(s)", what, t + 1);
    }
    if (y[0].data && y[1].data)
        CHECK_MSG(!memcmp(y[0].data, y[1].data, (size_t)n * sizeof(float)), "%s: 1 and 2 threads differ", what);
    for (t = 0; t < 2; t++) ot_free(&y[t]);
}

/* Run case c (seeded by `seed`) on 1 and on 2 threads: both within 1e-5 of
 * the float64 reference's magnitude and bit for bit the same. */
static void check_conv_case(const conv_case *c, uint32_t seed, const char *what)
{
    ot_tensor in[3];
    prt_field f[5];
    int nf = 0, t;
    int64_t oh, ow, ph, pw, n;
    const int64_t pads1[2] = {c->pads[1], c->pads[3]}, group = c->group;
    double *ref, *mag;
    in[0] = ot_rand(PRT_DTYPE_F32, c->one_d ? ot_dims(3, c->n, c->cin, c->w) : ot_dims(4, c->n, c->cin, c->h, c->w),
                    -1, 1, seed);
    in[1] = ot_rand(PRT_DTYPE_F32, c->one_d ? ot_dims(3, c->cout, c->cin / c->group, c->kw)
                                            : ot_dims(4, c->cout, c->cin / c->group, c->kh, c->kw),
                    -1, 1, seed + 9);
    in[2] = ot_rand(PRT_DTYPE_F32, ot_dims(1, c->cout), -1, 1, seed + 19);
    if (c->one_d) {
        f[nf++] = ot_i64("strides", &c->stride[1], 1);
        f[nf++] = ot_i64("dilations", &c->dil[1], 1);
        f[nf++] = ot_i64("pads", pads1, 2);
    } else {
        f[nf++] = ot_i64("strides", c->stride, 2);
        f[nf++] = ot_i64("dilations", c->dil, 2);
        if (c->auto_pad) f[nf++] = ot_str("auto_pad", c->auto_pad);
        else f[nf++] = ot_i64("pads", c->pads, 4);
    }
    f[nf++] = ot_i64("group", &group, 1);
    conv_case_geo(c, &oh, &ow, &ph, &pw);
    n = c->n * c->cout * oh * ow;
    ref = malloc((size_t)n * sizeof *ref);
    mag = malloc((size_t)n * sizeof *mag);
    conv_ref(c, &in[0], &in[1], c->bias ? &in[2] : NULL, oh, ow, ph, pw, ref, mag);
    run_on_1_and_2_threads("Conv", f, nf, in, c->bias ? 3 : 2,
                           c->one_d ? ot_dims(3, c->n, c->cout, ow) : ot_dims(4, c->n, c->cout, oh, ow), ref, mag, what);
    free(ref);
    free(mag);
    for (t = 0; t < 3; t++) ot_free(&in[t]);
}

/* Every case with the best kernels this CPU has, then with the portable ones. */
static void check_conv_cases(const conv_case *cases, size_t n, uint32_t seed, const char *label)
{
    size_t ci;
    int isa;
    char what[64];
    for (isa = 0; isa < 2; isa++) {
        if (isa) setenv("PRT_DCN_CPU_ISA", "c", 1);
        for (ci = 0; ci < n; ci++) {
            snprintf(what, sizeof what, "%s case %d%s", label, (int)ci, isa ? " (portable)" : "");
            check_conv_case(&cases[ci], seed + (uint32_t)ci, what);
        }
    }
    unsetenv("PRT_DCN_CPU_ISA");
}

TEST(conv_im2col_1x1_depthwise_groups_pads_auto_pad_and_1d)
{
    static const conv_case cases[] = {
        {2, 3, 9, 11, 4, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},
        {1, 32, 12, 10, 20, 3, 3, 1, {2, 1}, {1, 2}, {0, 2, 1, 0}, NULL, 0, 1}, /* K = 288: two chunks */
        {1, 8, 7, 7, 16, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},    /* 1x1 direct */
        {2, 6, 8, 8, 6, 3, 3, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},     /* depthwise */
        {1, 4, 6, 6, 6, 3, 2, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 0},     /* groups */
        {1, 2, 7, 5, 3, 3, 3, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, "SAME_UPPER", 0, 0},
        {1, 2, 7, 5, 3, 2, 2, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, "SAME_LOWER", 0, 0},
        {1, 2, 7, 5, 3, 3, 3, 1, {2, 1}, {1, 1}, {0, 0, 0, 0}, "VALID", 0, 0},
        {2, 3, 1, 17, 5, 1, 4, 1, {1, 3}, {1, 2}, {0, 2, 0, 1}, NULL, 1, 1},    /* 1-D */
    };
    size_t ci;
    char what[32];
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        snprintf(what, sizeof what, "case %d", (int)ci);
        check_conv_case(&cases[ci], (uint32_t)ci, what);
    }
}

/* The direct kernel. Depthwise shapes of the OCR models (3x3 and 5x5 at strides 1, 2, (2, 1),
 * (1, 2)) and around them: dilations, asymmetric pads, odd extents, images
 * smaller than the kernel, a channel multiplier, other kernel sizes and
 * strides, few planes (rows split over threads); then convolutions with at
 * most 8 output channels per group, which it also runs; with the AVX-512
 * interior where the CPU has it and with the portable one. */
TEST(conv_depthwise_kernels_match_float64)
{
    static const conv_case cases[] = {
        {1, 1, 1, 1, 1, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},       /* 1x1 image */
        {2, 3, 7, 37, 3, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},      /* 3x3 s1 */
        {1, 4, 9, 35, 4, 3, 3, 4, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},      /* 3x3 s2 */
        {1, 2, 6, 21, 2, 5, 5, 2, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 0},      /* 5x5 s1, no bias */
        {2, 3, 11, 40, 3, 5, 5, 3, {2, 2}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},     /* 5x5 s2 */
        {1, 2, 8, 19, 2, 3, 3, 2, {1, 1}, {2, 2}, {2, 2, 2, 2}, NULL, 0, 1},      /* dilation 2 */
        {1, 3, 13, 33, 3, 5, 5, 3, {2, 2}, {2, 2}, {1, 3, 2, 0}, NULL, 0, 1},     /* 5x5 s2 d2, asymmetric pads */
        {1, 2, 9, 50, 2, 3, 3, 2, {2, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},      /* strides (2, 1) */
        {1, 2, 9, 51, 2, 5, 5, 2, {1, 2}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},      /* strides (1, 2) */
        {1, 2, 2, 2, 2, 5, 5, 2, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},       /* output inside the borders */
        {1, 2, 3, 4, 2, 5, 5, 2, {2, 2}, {1, 1}, {0, 0, 2, 1}, NULL, 0, 1},       /* no interior, stride 2 */
        {1, 3, 8, 20, 6, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},      /* channel multiplier 2 */
        {1, 2, 7, 29, 2, 3, 5, 2, {1, 1}, {1, 1}, {1, 2, 1, 2}, NULL, 0, 1},      /* 3x5 */
        {1, 2, 7, 29, 2, 7, 7, 2, {2, 2}, {1, 1}, {3, 3, 3, 3}, NULL, 0, 1},      /* 7x7 s2 */
        {1, 2, 10, 31, 2, 3, 3, 2, {3, 3}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},     /* stride 3 */
        {1, 2, 64, 70, 2, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},     /* 2 planes, rows split */
        {1, 2, 6, 22, 2, 3, 3, 2, {1, 1}, {1, 1}, {0, 0, 0, 0}, "SAME_UPPER", 0, 1},
        {2, 3, 1, 45, 3, 1, 5, 3, {1, 2}, {1, 1}, {0, 2, 0, 2}, NULL, 1, 1},      /* 1-D, stride 2 */
        /* maps a few rows tall (the classifier's late layers): kernel rows partly outside, padded copies */
        {2, 4, 2, 96, 4, 5, 5, 4, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},      /* 2 rows, 5x5 */
        {1, 3, 3, 97, 3, 5, 5, 3, {2, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},      /* 3 rows, strides (2, 1) */
        {1, 3, 4, 33, 3, 3, 3, 3, {1, 2}, {2, 1}, {2, 1, 0, 2}, NULL, 0, 1},      /* dilated rows, stride 2 */
        {1, 2, 5, 700, 2, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},     /* wide: borders checked, no copy */
        {1, 2, 40, 200, 2, 5, 5, 2, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},    /* too many rows to copy */
        /* few output channels per group: the same kernel summing the group's input channels */
        {5, 3, 48, 192, 8, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},    /* the classifier's first layer */
        {1, 8, 9, 31, 8, 3, 3, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 0},      /* 4 groups of 2 in, 2 out */
        {1, 4, 80, 100, 3, 3, 3, 1, {1, 1}, {2, 2}, {2, 2, 2, 2}, NULL, 0, 1},    /* rows split to stay in L1 */
        {2, 5, 3, 40, 6, 5, 5, 1, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},      /* 3 rows, 5x5 */
    };
    check_conv_cases(cases, sizeof cases / sizeof cases[0], 100, "depthwise");
}

/* The blocked im2col + GEMM at sizes around its block (256 columns), panel
 * (32 columns) and K-chunk (256) edges, row counts around the micro-tile's,
 * groups, 1x1 direct and not, with and without bias, one and many images. */
TEST(conv_blocked_gemm_edges_groups_and_thread_counts)
{
    static const conv_case cases[] = {
        {1, 5, 17, 19, 7, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},     /* hw 323 */
        {1, 20, 16, 16, 30, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 0},   /* 1x1 direct, hw 256 */
        {2, 20, 15, 18, 29, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},   /* 1x1 direct, hw 270 */
        {1, 8, 9, 9, 9, 1, 1, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},       /* 1x1 stride 2 */
        {1, 8, 9, 9, 9, 1, 1, 1, {1, 1}, {1, 1}, {1, 0, 0, 1}, NULL, 0, 0},       /* 1x1 padded */
        {1, 6, 13, 11, 10, 3, 3, 2, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},    /* 2 groups */
        {1, 12, 9, 14, 12, 3, 3, 3, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 0},    /* 3 groups */
        {1, 40, 10, 10, 20, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},   /* K 360: two chunks */
        {1, 60, 1, 33, 15, 1, 3, 1, {1, 1}, {1, 1}, {0, 1, 0, 1}, NULL, 0, 1},    /* K 180, 1 x 3 */
        {3, 16, 1, 1, 20, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},     /* hw 1 */
        {1, 3, 3, 3, 4, 3, 3, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},       /* one output pixel */
        {1, 3, 37, 70, 16, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},    /* first layer of the OCR models */
        {1, 16, 40, 50, 33, 3, 3, 1, {1, 1}, {2, 1}, {2, 1, 2, 1}, NULL, 0, 1},   /* threaded, dilation */
        {2, 4, 1, 300, 3, 1, 3, 1, {1, 2}, {1, 1}, {0, 1, 0, 1}, NULL, 1, 0},     /* 1-D */
        /* wide rows: panels inside a row with every tap inside read the input in place */
        {1, 12, 7, 100, 24, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},   /* the OCR heads' 3x3, M 24 */
        {1, 10, 9, 90, 17, 3, 3, 1, {2, 1}, {2, 2}, {2, 2, 2, 2}, NULL, 0, 1},    /* strides (2, 1), dilation 2 */
        {2, 8, 5, 70, 12, 3, 3, 2, {1, 1}, {1, 1}, {0, 1, 0, 1}, NULL, 0, 0},     /* groups, pads on W only */
        {1, 18, 9, 14, 24, 3, 3, 2, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},    /* 2 groups of 12 outputs */
        /* 1x1 stride 1 (AVX-512: tiles of 12 and 4 output channels by 32 pixels) */
        {2, 32, 7, 13, 200, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},   /* 16 x 12 + 2 x 4 rows, hw 91 */
        {5, 200, 2, 96, 32, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},   /* K 200 */
        {1, 24, 5, 9, 30, 1, 1, 3, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 0},     /* 3 groups of 10 outputs */
        {1, 7, 3, 11, 7, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},      /* 4 + 4 rows, 3 padded */
    };
    check_conv_cases(cases, sizeof cases / sizeof cases[0], 200, "blocked");
}

TEST(conv_refuses_bad_shapes_and_fields)
{
    ot_tensor in[2], y;
    char msg[512];
    prt_field f = ot_str("auto_pad", "SAME");
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)3, (int64_t)5, (int64_t)5), -1, 1, 1);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)4, (int64_t)2, (int64_t)3, (int64_t)3), -1, 1, 1);
    CHECK(ot_run("Conv", "1", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "X has 3 channels but W expects 2 x group 1");
    CHECK(ot_run("Conv", "1", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "auto_pad");
    ot_free(&in[1]);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)4, (int64_t)3, (int64_t)7, (int64_t)7), -1, 1, 1);
    CHECK(ot_run("Conv", "1", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "too small");
    f = FI("strides", 1);
    CHECK(ot_run("Conv", "1", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "2-D convolution");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

#define D(...) ((const double[]){__VA_ARGS__})

TEST(normalizations_match_float64)
{
    const int64_t N = 2, C = 4, H = 3, W = 5, sp = H * W;
    ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(4, N, C, H, W), -2, 3, 7), in[5], y[3];
    ot_tensor sc = ot_rand(PRT_DTYPE_F32, ot_dims(1, C), 0.5, 2, 8), b = ot_rand(PRT_DTYPE_F32, ot_dims(1, C), -1, 1, 9);
    ot_tensor mean = ot_rand(PRT_DTYPE_F32, ot_dims(1, C), -1, 1, 10), var = ot_rand(PRT_DTYPE_F32, ot_dims(1, C), 0.1, 2, 11);
    double *ref = malloc((size_t)(N * C * sp) * sizeof *ref);
    char msg[512];
    int64_t n, c, k, g;
    float eps = 1e-3f;
    prt_field f[2] = {ot_f32("epsilon", &eps, 1), FI("num_groups", 2)};
    /* BatchNormalization */
    in[0] = x, in[1] = sc, in[2] = b, in[3] = mean, in[4] = var;
    CHECK_OK(ot_run("BatchNormalization", "14", f, 1, in, 5, y, 1, 2, msg, sizeof msg));
    for (n = 0; n < N; n++)
        for (c = 0; c < C; c++)
            for (k = 0; k < sp; k++) {
                int64_t o = (n * C + c) * sp + k;
                ref[o] = (ot_get(&x, o) - ot_get(&mean, c)) / sqrt(ot_get(&var, c) + (double)eps) * ot_get(&sc, c) +
                         ot_get(&b, c);
            }
    CHECK_EQ_INT(ot_compare(&y[0], ref, N * C * sp, 1e-5, 1e-6, "BatchNormalization"), 0);
    ot_free(&y[0]);
    /* InstanceNormalization and GroupNormalization 21 (per-channel affine; 2 groups of 2 channels) */
    for (g = 0; g < 2; g++) {
        int64_t G = g ? 2 : C, per = C / G;
        CHECK_OK(ot_run(g ? "GroupNormalization" : "InstanceNormalization", g ? "21" : "6", f, g ? 2 : 1, in, 3, y, 1,
                        2, msg, sizeof msg));
        for (n = 0; n < N; n++)
            for (c = 0; c < G; c++) {
                double m = 0, v = 0;
                int64_t base = (n * C + c * per) * sp, len = per * sp;
                for (k = 0; k < len; k++) m += ot_get(&x, base + k);
                m /= (double)len;
                for (k = 0; k < len; k++) v += (ot_get(&x, base + k) - m) * (ot_get(&x, base + k) - m);
                v /= (double)len;
                for (k = 0; k < len; k++) {
                    int64_t ch = c * per + k / sp;
                    ref[base + k] = (ot_get(&x, base + k) - m) / sqrt(v + (double)eps) * ot_get(&sc, ch) + ot_get(&b, ch);
                }
            }
        CHECK_EQ_INT(ot_compare(&y[0], ref, N * C * sp, 1e-5, 1e-6, g ? "GroupNormalization" : "InstanceNormalization"), 0);
        ot_free(&y[0]);
    }
    /* LayerNormalization over the last two axes, with Mean and InvStdDev */
    {
        ot_tensor lsc = ot_rand(PRT_DTYPE_F32, ot_dims(2, H, W), 0.5, 2, 12), lb = ot_rand(PRT_DTYPE_F32, ot_dims(2, H, W), -1, 1, 13);
        prt_field lf[2] = {FI("axis", -2), ot_f32("epsilon", &eps, 1)};
        double rm[8], ri[8];
        in[1] = lsc;
        in[2] = lb;
        CHECK_OK(ot_run("LayerNormalization", "17", lf, 2, in, 3, y, 3, 2, msg, sizeof msg));
        expect_dims(&y[1], ot_dims(4, N, C, (int64_t)1, (int64_t)1));
        for (n = 0; n < N * C; n++) {
            double m = 0, v = 0;
            for (k = 0; k < sp; k++) m += ot_get(&x, n * sp + k);
            m /= (double)sp;
            for (k = 0; k < sp; k++) v += (ot_get(&x, n * sp + k) - m) * (ot_get(&x, n * sp + k) - m);
            v /= (double)sp;
            rm[n] = m;
            ri[n] = 1 / sqrt(v + (double)eps);
            for (k = 0; k < sp; k++) ref[n * sp + k] = (ot_get(&x, n * sp + k) - m) * ri[n] * ot_get(&lsc, k) + ot_get(&lb, k);
        }
        CHECK_EQ_INT(ot_compare(&y[0], ref, N * C * sp, 1e-5, 1e-6, "LayerNormalization"), 0);
        CHECK_EQ_INT(ot_compare(&y[1], rm, N * C, 1e-5, 1e-6, "LayerNormalization mean"), 0);
        CHECK_EQ_INT(ot_compare(&y[2], ri, N * C, 1e-5, 1e-6, "LayerNormalization inv std"), 0);
        ot_free(&y[0]);
        ot_free(&y[1]);
        ot_free(&y[2]);
        ot_free(&lsc);
        ot_free(&lb);
    }
    /* LpNormalization p = 1 on axis 1; LRN size 3 */
    {
        prt_field pf[2] = {FI("axis", 1), FI("p", 1)};
        prt_field rf[2] = {FI("size", 3), ot_f32("alpha", &eps, 1)};
        CHECK_OK(ot_run("LpNormalization", "1", pf, 2, &x, 1, y, 1, 1, msg, sizeof msg));
        for (n = 0; n < N; n++)
            for (k = 0; k < sp; k++) {
                double s = 0;
                for (c = 0; c < C; c++) s += fabs(ot_get(&x, (n * C + c) * sp + k));
                for (c = 0; c < C; c++) ref[(n * C + c) * sp + k] = ot_get(&x, (n * C + c) * sp + k) / s;
            }
        CHECK_EQ_INT(ot_compare(&y[0], ref, N * C * sp, 1e-5, 1e-6, "LpNormalization"), 0);
        ot_free(&y[0]);
        CHECK_OK(ot_run("LRN", "1", rf, 2, &x, 1, y, 1, 1, msg, sizeof msg));
        for (n = 0; n < N; n++)
            for (c = 0; c < C; c++)
                for (k = 0; k < sp; k++) {
                    double s = 0;
                    int64_t cc;
                    for (cc = c - 1; cc <= c + 1; cc++)
                        if (cc >= 0 && cc < C) s += pow(ot_get(&x, (n * C + cc) * sp + k), 2);
                    ref[(n * C + c) * sp + k] = ot_get(&x, (n * C + c) * sp + k) / pow(1.0 + (double)eps / 3 * s, 0.75);
                }
        CHECK_EQ_INT(ot_compare(&y[0], ref, N * C * sp, 1e-5, 1e-6, "LRN"), 0);
        ot_free(&y[0]);
    }
    /* bad: GroupNormalization groups that do not divide C; training mode */
    f[1] = FI("num_groups", 3);
    in[1] = sc;
    in[2] = b;
    CHECK(ot_run("GroupNormalization", "18", f, 2, in, 3, y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "not a multiple of num_groups");
    f[1] = FI("training_mode", 1);
    CHECK(ot_run("BatchNormalization", "14", f, 2, in, 5, y, 1, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "training_mode");
    free(ref);
    ot_free(&x);
    ot_free(&sc);
    ot_free(&b);
    ot_free(&mean);
    ot_free(&var);
}

static ot_tensor iota_from(int64_t start, prt_dims d)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, d, NULL);
    int64_t i;
    for (i = 0; i < ot_vol(&x); i++) ((float *)x.data)[i] = (float)(start + i);
    return x;
}

TEST(pools_match_the_operator_examples)
{
    ot_tensor x = iota_from(0, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)4, (int64_t)4)), y[2];
    char msg[512];
    prt_field f[4];
    f[0] = FI("kernel_shape", 2, 2);
    f[1] = FI("strides", 2, 2);
    f[2] = FI("storage_order", 1);
    CHECK_OK(ot_run("MaxPool", "8", f, 2, &x, 1, y, 2, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(5, 7, 13, 15), 4, 0, 0, "MaxPool"), 0);
    CHECK_EQ_INT(ot_compare(&y[1], D(5, 7, 13, 15), 4, 0, 0, "MaxPool indices"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    CHECK_OK(ot_run("MaxPool", "8", f, 3, &x, 1, y, 2, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[1], D(5, 13, 7, 15), 4, 0, 0, "MaxPool column-major indices"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    ot_free(&x);
    /* ceil_mode and dilations on 1..16 */
    x = iota_from(1, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)4, (int64_t)4));
    f[0] = FI("kernel_shape", 3, 3);
    f[1] = FI("strides", 2, 2);
    f[2] = FI("ceil_mode", 1);
    CHECK_OK(ot_run("MaxPool", "10", f, 3, &x, 1, y, 2, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y[0], D(11, 12, 15, 16), 4, 0, 0, "MaxPool ceil_mode"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    f[0] = FI("kernel_shape", 2, 2);
    f[1] = FI("dilations", 2, 2);
    CHECK_OK(ot_run("MaxPool", "10", f, 2, &x, 1, y, 2, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(11, 12, 15, 16), 4, 0, 0, "MaxPool dilations"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    /* num_outputs 1 (a node without Indices): one output, the same Y; anything but 1 or 2 is refused */
    f[2] = FI("num_outputs", 1);
    CHECK_OK(ot_run("MaxPool", "10", f, 3, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(11, 12, 15, 16), 4, 0, 0, "MaxPool without Indices"), 0);
    ot_free(&y[0]);
    CHECK(ot_run("MaxPool", "10", f, 3, &x, 1, y, 2, 1, msg, sizeof msg) != PRT_OK);
    f[2] = FI("num_outputs", 3);
    CHECK(ot_run("MaxPool", "10", f, 3, &x, 1, y, 2, 1, msg, sizeof msg) != PRT_OK);
    CHECK_MSG(strstr(msg, "num_outputs must be 1 (Y) or 2 (Y, Indices), got 3") != NULL, "%s", msg);
    CHECK_OK(ot_run("GlobalAveragePool", "1", NULL, 0, &x, 1, y, 1, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)1, (int64_t)1));
    CHECK_EQ_INT(ot_compare(&y[0], D(8.5), 1, 0, 0, "GlobalAveragePool"), 0);
    ot_free(&y[0]);
    CHECK_OK(ot_run("GlobalMaxPool", "1", NULL, 0, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(16), 1, 0, 0, "GlobalMaxPool"), 0);
    ot_free(&y[0]);
    ot_free(&x);
    /* SAME_UPPER on 1..25 */
    x = iota_from(1, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)5, (int64_t)5));
    f[0] = FI("kernel_shape", 3, 3);
    f[1] = FI("strides", 2, 2);
    f[2] = ot_str("auto_pad", "SAME_UPPER");
    CHECK_OK(ot_run("MaxPool", "1", f, 3, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(7, 9, 10, 17, 19, 20, 22, 24, 25), 9, 0, 0, "MaxPool SAME_UPPER"), 0);
    ot_free(&y[0]);
    ot_free(&x);
    /* AveragePool 3x3 pad 1 on 0..8, with and without the padding in the count */
    x = iota_from(0, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)3, (int64_t)3));
    f[0] = FI("kernel_shape", 3, 3);
    f[1] = FI("pads", 1, 1, 1, 1);
    f[2] = FI("count_include_pad", 1);
    CHECK_OK(ot_run("AveragePool", "7", f, 2, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6), 9, 1e-6, 0, "AveragePool"), 0);
    ot_free(&y[0]);
    CHECK_OK(ot_run("AveragePool", "7", f, 3, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(8 / 9.0, 15 / 9.0, 12 / 9.0, 21 / 9.0, 4, 27 / 9.0, 20 / 9.0, 33 / 9.0, 24 / 9.0),
                            9, 1e-6, 0, "AveragePool count_include_pad"), 0);
    ot_free(&y[0]);
    ot_free(&x);
    /* 1-D */
    x = iota_from(1, ot_dims(3, (int64_t)1, (int64_t)1, (int64_t)5));
    f[0] = FI("kernel_shape", 2);
    CHECK_OK(ot_run("AveragePool", "1", f, 1, &x, 1, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(1.5, 2.5, 3.5, 4.5), 4, 0, 0, "AveragePool 1-D"), 0);
    ot_free(&y[0]);
    CHECK(ot_run("AveragePool", "1", NULL, 0, &x, 1, y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "kernel_shape is required");
    f[0] = FI("kernel_shape", 9);
    CHECK(ot_run("AveragePool", "1", f, 1, &x, 1, y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "too small");
    ot_free(&x);
}

/* GlobalAveragePool and GlobalMaxPool on f32 (one pass per plane, split
 * over threads for large inputs) against float64; a NaN after the first
 * element of a plane is passed over by the max, as in the general path. */
TEST(global_pools_f32_match_float64)
{
    static const int64_t shapes[][4] = {{2, 3, 37, 41}, {1, 64, 46, 92}, {3, 5, 1, 7}};
    size_t c;
    int g;
    char msg[256];
    for (c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (g = 0; g < 2; g++) {
            const int64_t planes = shapes[c][0] * shapes[c][1], len = shapes[c][2] * shapes[c][3];
            ot_tensor x = ot_rand(PRT_DTYPE_F32, ot_dims(4, shapes[c][0], shapes[c][1], shapes[c][2], shapes[c][3]),
                                  -3, 5, (uint32_t)(600 + c)), y;
            double *ref = malloc((size_t)planes * sizeof *ref);
            int64_t p, i;
            if (len > 2) ((float *)x.data)[len + 1] = NAN; /* plane 1, element 1 */
            for (p = 0; p < planes; p++) {
                double acc = g ? ot_get(&x, p * len) : 0;
                for (i = 0; i < len; i++) {
                    double v = ot_get(&x, p * len + i);
                    if (g) acc = v > acc ? v : acc;
                    else acc += v;
                }
                ref[p] = g ? acc : acc / (double)len;
            }
            CHECK_OK(ot_run(g ? "GlobalMaxPool" : "GlobalAveragePool", "1", NULL, 0, &x, 1, &y, 1, 2, msg, sizeof msg));
            expect_dims(&y, ot_dims(4, shapes[c][0], shapes[c][1], (int64_t)1, (int64_t)1));
            CHECK_MSG(ot_compare(&y, ref, planes, 1e-6, 1e-7, "global pool") == 0, "shape %d, %s", (int)c,
                      g ? "max" : "average");
            free(ref);
            ot_free(&y);
            ot_free(&x);
        }
}

#include "reference_cases.h"

#define F32S(nm, ...) {nm, (const float[]){__VA_ARGS__}, PRT_FIELD_FLOAT32, 0, \
                       sizeof((const float[]){__VA_ARGS__}) / sizeof(float)}

TEST(resize_matches_the_onnx_reference_evaluator)
{
    const prt_field f_lin[] = {{"mode", "linear", PRT_FIELD_CHAR, 0, 6}, F32S("input:2", 1, 1, 1.5f, 0.8f)};
    const prt_field f_ac[] = {{"mode", "linear", PRT_FIELD_CHAR, 0, 6},
                                     {"coordinate_transformation_mode", "align_corners", PRT_FIELD_CHAR, 0, 13},
                                     {"input:3", (const int64_t[]){1, 1, 3, 7}, PRT_FIELD_INT64, 0, 4}};
    const prt_field f_cub[] = {{"mode", "cubic", PRT_FIELD_CHAR, 0, 5}, F32S("input:2", 1, 1, 2, 1.4f)};
    const prt_field f_cubx[] = {{"mode", "cubic", PRT_FIELD_CHAR, 0, 5}, F32S("cubic_coeff_a", -0.5f),
                                       {"exclude_outside", (const int64_t[]){1}, PRT_FIELD_INT64, 0, 1},
                                       F32S("input:2", 1, 1, 0.5f, 2)};
    const prt_field f_near[] = {{"nearest_mode", "round_prefer_ceil", PRT_FIELD_CHAR, 0, 17},
                                       {"coordinate_transformation_mode", "pytorch_half_pixel", PRT_FIELD_CHAR, 0, 18},
                                       {"input:3", (const int64_t[]){1, 1, 7, 3}, PRT_FIELD_INT64, 0, 4}};
    const prt_field f_floor[] = {{"nearest_mode", "floor", PRT_FIELD_CHAR, 0, 5},
                                        {"coordinate_transformation_mode", "asymmetric", PRT_FIELD_CHAR, 0, 10},
                                        F32S("input:2", 1, 1, 2, 2)};
    const prt_field f_crop[] = {{"mode", "linear", PRT_FIELD_CHAR, 0, 6},
                                       {"coordinate_transformation_mode", "tf_crop_and_resize", PRT_FIELD_CHAR, 0, 18},
                                       F32S("extrapolation_value", 10), F32S("input:1", 0, 0, 0.4f, 0.6f, 1, 1, 1.2f, 1.7f),
                                       {"input:3", (const int64_t[]){1, 1, 3, 3}, PRT_FIELD_INT64, 0, 4}};
    const struct {
        const char *name;
        const prt_field *f;
        int nf;
        const int64_t *dims;
        const double *ref;
    } cases[] = {
        {"linear half_pixel", f_lin, 2, rz_linear_half_pixel_dims, rz_linear_half_pixel},
        {"linear align_corners", f_ac, 3, rz_linear_align_corners_dims, rz_linear_align_corners},
        {"cubic half_pixel", f_cub, 2, rz_cubic_half_pixel_dims, rz_cubic_half_pixel},
        {"cubic exclude_outside", f_cubx, 4, rz_cubic_exclude_outside_dims, rz_cubic_exclude_outside},
        {"nearest round_prefer_ceil", f_near, 3, rz_nearest_prefer_ceil_pytorch_dims, rz_nearest_prefer_ceil_pytorch},
        {"nearest floor", f_floor, 3, rz_nearest_floor_asymmetric_dims, rz_nearest_floor_asymmetric},
        {"tf_crop_and_resize", f_crop, 5, rz_tf_crop_dims, rz_tf_crop},
    };
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)4, (int64_t)5), rz_x), y;
    char msg[512];
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        prt_status st = ot_run("Resize", "18", cases[c].f, cases[c].nf, &x, 1, &y, 1, 2, msg, sizeof msg);
        CHECK_MSG(st == PRT_OK, "%s: %s", cases[c].name, msg);
        if (st != PRT_OK) continue;
        expect_dims(&y, ot_dims(4, cases[c].dims[0], cases[c].dims[1], cases[c].dims[2], cases[c].dims[3]));
        CHECK_EQ_INT(ot_compare(&y, cases[c].ref, ot_vol(&y), 1e-5, 1e-5, cases[c].name), 0);
        ot_free(&y);
    }
    /* Upsample 9 nearest (floor, asymmetric) */
    {
        prt_field f = F32S("input:1", 1, 1, 2, 2);
        CHECK_OK(ot_run("Upsample", "9", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
        CHECK_EQ_INT(ot_compare(&y, rz_nearest_floor_asymmetric, ot_vol(&y), 1e-6, 0, "Upsample"), 0);
        ot_free(&y);
    }
    CHECK(ot_run("Resize", "18", f_lin, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "scales or sizes");
    ot_free(&x);
}

/* Source coordinate of output o on an axis (in, scale; out extent `out`). */
static double rz_coord(const char *mode, int64_t o, int64_t in, int64_t out, double scale)
{
    double len = (double)in * scale;
    (void)out;
    if (!strcmp(mode, "half_pixel")) return (o + 0.5) / scale - 0.5;
    if (!strcmp(mode, "pytorch_half_pixel")) return len > 1 ? (o + 0.5) / scale - 0.5 : 0;
    if (!strcmp(mode, "align_corners")) return len > 1 ? (double)o * (double)(in - 1) / (len - 1) : 0;
    return o / scale; /* asymmetric */
}

/* Taps of output o: nearest (one) or linear (two, clamped), as the ONNX operator defines them. */
static int rz_ref_taps(int linear, const char *coord, const char *near, int64_t o, int64_t in, int64_t out,
                       double scale, int64_t *idx, double *w)
{
    double x = rz_coord(coord, o, in, out, scale), f;
    int64_t i;
    if (!linear) {
        f = floor(x);
        if (!strcmp(near, "floor")) i = (int64_t)f;
        else if (!strcmp(near, "ceil")) i = (int64_t)ceil(x);
        else if (!strcmp(near, "round_prefer_ceil")) i = (int64_t)(x - f >= 0.5 ? f + 1 : f);
        else i = (int64_t)(x - f > 0.5 ? f + 1 : f);
        idx[0] = i < 0 ? 0 : i >= in ? in - 1 : i;
        w[0] = 1;
        return 1;
    }
    if (x < 0) x = 0;
    if (x > in - 1) x = (double)(in - 1);
    i = (int64_t)floor(x);
    idx[0] = i;
    idx[1] = i + 1 < in ? i + 1 : in - 1;
    w[1] = x - (double)i;
    w[0] = 1 - w[1];
    return 2;
}

/* The f32 fast path of Resize (nearest and linear over the last two axes,
 * the coordinate modes of the OCR and detection models) against a float64
 * evaluation of the operator's definition. */
TEST(resize_fast_paths_match_float64)
{
    static const struct {
        int linear;
        const char *coord, *near;
        int rank;
        int64_t in[4];
        double sc[2];   /* scales of the last two axes, or 0 */
        int64_t sz[2];  /* else sizes */
    } cases[] = {
        {0, "asymmetric", "floor", 4, {2, 3, 7, 9}, {2, 2}, {0, 0}},         /* the detection model */
        {0, "asymmetric", "floor", 4, {1, 2, 3, 4}, {8, 8}, {0, 0}},
        {0, "half_pixel", "round_prefer_floor", 4, {2, 3, 7, 9}, {0, 0}, {5, 13}},
        {0, "align_corners", "round_prefer_ceil", 4, {1, 2, 7, 9}, {0, 0}, {11, 4}},
        {0, "pytorch_half_pixel", "ceil", 4, {1, 2, 7, 9}, {0.5, 3}, {0, 0}},
        {1, "half_pixel", "", 4, {2, 3, 7, 9}, {2, 2}, {0, 0}},
        {1, "align_corners", "", 4, {1, 2, 7, 9}, {0, 0}, {13, 5}},
        {1, "asymmetric", "", 4, {1, 2, 7, 9}, {1.5, 0.5}, {0, 0}},
        {1, "pytorch_half_pixel", "", 4, {1, 2, 7, 9}, {0, 0}, {1, 17}},
        {1, "half_pixel", "", 4, {1, 3, 6, 9}, {1, 2.5}, {0, 0}},             /* H kept */
        {1, "half_pixel", "", 3, {2, 5, 9, 0}, {1, 2}, {0, 0}},               /* rank 3 */
        {0, "asymmetric", "floor", 4, {1, 8, 92, 184}, {2, 2}, {0, 0}},       /* threaded */
        {1, "half_pixel", "", 4, {1, 8, 46, 92}, {2, 2}, {0, 0}},             /* threaded */
    };
    size_t c;
    char msg[512];
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int r = cases[c].rank;
        float scales[4] = {1, 1, 1, 1};
        int64_t sizes[4], od[4], k, a, n, i, oy, ox, ty, tx;
        prt_dims d;
        prt_field f[4];
        int nf = 0;
        ot_tensor x, y;
        double *ref, scale[2];
        memset(&d, 0, sizeof d);
        d.nb = r;
        for (k = 0; k < r; k++) d.d[k] = sizes[k] = od[k] = cases[c].in[k];
        for (a = 0; a < 2; a++) {
            if (cases[c].sc[0] > 0) {
                scales[r - 2 + a] = (float)cases[c].sc[a];
                scale[a] = (double)scales[r - 2 + a];
                od[r - 2 + a] = (int64_t)floor((double)d.d[r - 2 + a] * scale[a] + 1e-9);
            } else {
                sizes[r - 2 + a] = od[r - 2 + a] = cases[c].sz[a];
                scale[a] = (double)cases[c].sz[a] / (double)d.d[r - 2 + a];
            }
        }
        f[nf++] = ot_str("mode", cases[c].linear ? "linear" : "nearest");
        f[nf++] = ot_str("coordinate_transformation_mode", cases[c].coord);
        if (!cases[c].linear) f[nf++] = ot_str("nearest_mode", cases[c].near);
        if (cases[c].sc[0] > 0) f[nf++] = ot_f32("input:2", scales, r);
        else f[nf++] = ot_i64("input:3", sizes, r);
        x = ot_rand(PRT_DTYPE_F32, d, -2, 2, (uint32_t)(300 + c));
        CHECK_MSG(ot_run("Resize", "18", f, nf, &x, 1, &y, 1, 2, msg, sizeof msg) == PRT_OK, "case %d: %s", (int)c,
                  msg);
        {
            const int64_t ih = d.d[r - 2], iw = d.d[r - 1], oh = od[r - 2], ow = od[r - 1];
            const int64_t planes = ot_vol(&x) / (ih * iw);
            prt_dims e = d;
            e.d[r - 2] = oh;
            e.d[r - 1] = ow;
            expect_dims(&y, e);
            n = planes * oh * ow;
            ref = calloc((size_t)n, sizeof *ref);
            for (i = 0; i < planes; i++)
                for (oy = 0; oy < oh; oy++)
                    for (ox = 0; ox < ow; ox++) {
                        int64_t iy[2], ix[2];
                        double wy[2], wx[2], acc = 0;
                        int cy = rz_ref_taps(cases[c].linear, cases[c].coord, cases[c].near, oy, ih, oh, scale[0], iy,
                                             wy);
                        int cx = rz_ref_taps(cases[c].linear, cases[c].coord, cases[c].near, ox, iw, ow, scale[1], ix,
                                             wx);
                        if (oh == ih && scale[0] == 1) cy = 1, iy[0] = oy, wy[0] = 1;
                        for (ty = 0; ty < cy; ty++)
                            for (tx = 0; tx < cx; tx++)
                                acc += wy[ty] * wx[tx] * ot_get(&x, (i * ih + iy[ty]) * iw + ix[tx]);
                        ref[(i * oh + oy) * ow + ox] = acc;
                    }
            CHECK_MSG(ot_compare(&y, ref, n, 1e-6, 1e-7, "Resize") == 0, "case %d (%s %s %s)", (int)c,
                      cases[c].linear ? "linear" : "nearest", cases[c].coord, cases[c].near);
            free(ref);
        }
        ot_free(&y);
        ot_free(&x);
    }
}

/* BatchNormalization in one pass over f32 planes (threaded past 64k values)
 * and through the generic path for f16, against float64. */
TEST(batch_normalization_fast_path_matches_float64)
{
    const int64_t N = 3, C = 5, H = 70, W = 90, sp = H * W;
    int pass;
    char msg[512];
    for (pass = 0; pass < 2; pass++) {
        const prt_dtype t = pass ? PRT_DTYPE_F16 : PRT_DTYPE_F32;
        ot_tensor in[5], y;
        double *ref = malloc((size_t)(N * C * sp) * sizeof *ref);
        float eps = 1e-2f;
        prt_field f = ot_f32("epsilon", &eps, 1);
        int64_t n, c, k;
        in[0] = ot_rand(t, ot_dims(4, N, C, H, W), -3, 3, 31);
        in[1] = ot_rand(t, ot_dims(1, C), 0.5, 2, 32);
        in[2] = ot_rand(t, ot_dims(1, C), -1, 1, 33);
        in[3] = ot_rand(t, ot_dims(1, C), -1, 1, 34);
        in[4] = ot_rand(t, ot_dims(1, C), 0.1, 2, 35);
        CHECK_OK(ot_run("BatchNormalization", pass ? "9" : "14", &f, 1, in, 5, &y, 1, 2, msg, sizeof msg));
        for (n = 0; n < N; n++)
            for (c = 0; c < C; c++)
                for (k = 0; k < sp; k++) {
                    int64_t o = (n * C + c) * sp + k;
                    ref[o] = (ot_get(&in[0], o) - ot_get(&in[3], c)) / sqrt(ot_get(&in[4], c) + (double)eps) *
                                 ot_get(&in[1], c) + ot_get(&in[2], c);
                }
        CHECK_EQ_INT(ot_compare(&y, ref, N * C * sp, pass ? 1e-3 : 1e-6, pass ? 1e-3 : 1e-6, "BatchNormalization"), 0);
        if (!pass) { /* f32: x * scale + shift in double, rounded once, whichever the vector width */
            int64_t bad = 0;
            for (n = 0; n < N; n++)
                for (c = 0; c < C; c++) {
                    const double sc = ot_get(&in[1], c) / sqrt(ot_get(&in[4], c) + (double)eps);
                    const double sh = ot_get(&in[2], c) - ot_get(&in[3], c) * sc;
                    for (k = 0; k < sp; k++) {
                        const int64_t o = (n * C + c) * sp + k;
                        bad += ((float *)y.data)[o] != (float)(ot_get(&in[0], o) * sc + sh);
                    }
                }
            CHECK_EQ_INT(bad, 0);
        }
        ot_free(&y);
        for (k = 0; k < 5; k++) ot_free(&in[k]);
        free(ref);
    }
}

TEST(qlinear_matmul_requantizes_with_ties_to_even)
{
    /* (a - 12) b as in MatMulInteger's case, times 0.5 * 1 / 2, plus 128: -9.5 -> -10, -24.5 -> -24, ... */
    ot_tensor in[8], y;
    char msg[512];
    int k;
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)4, (int64_t)3), D(11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(0), D(0.5));
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(12));
    in[3] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)3, (int64_t)2), D(1, 4, 2, 5, 3, 6));
    in[4] = ot_make(PRT_DTYPE_F32, ot_dims(0), D(1));
    in[5] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(0));
    in[6] = ot_make(PRT_DTYPE_F32, ot_dims(0), D(2));
    in[7] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(128));
    CHECK_OK(ot_run("QLinearMatMul", "21", NULL, 0, in, 8, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_U8);
    expect_dims(&y, ot_dims(2, (int64_t)4, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(118, 107, 117, 104, 116, 100, 114, 96), 8, 0, 0, "QLinearMatMul"), 0);
    ot_free(&y);
    /* a per-row scale is refused with a message */
    ot_free(&in[1]);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), D(1, 1, 1, 1));
    CHECK(ot_run("QLinearMatMul", "21", NULL, 0, in, 8, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "per-tensor");
    for (k = 0; k < 8; k++) ot_free(&in[k]);
}

TEST(affine_grid_2d_and_3d)
{
    /* identity theta over a 2 x 2 image: centers at -0.5 and 0.5 (align_corners 0), corners at -1 and 1 (1) */
    ot_tensor t2 = ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)1, (int64_t)2, (int64_t)3), D(1, 0, 0, 0, 1, 0)), y;
    ot_tensor t3 = ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)1, (int64_t)3, (int64_t)4),
                           D(2, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 0));
    prt_field f[2] = {FI("input:1", 1, 1, 2, 2), FI("align_corners", 1)};
    char msg[512];
    CHECK_OK(ot_run("AffineGrid", "20", f, 1, &t2, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(-0.5, -0.5, 0.5, -0.5, -0.5, 0.5, 0.5, 0.5), 8, 1e-7, 0, "AffineGrid 2-D"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("AffineGrid", "20", f, 2, &t2, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(-1, -1, 1, -1, -1, 1, 1, 1), 8, 1e-7, 0, "AffineGrid 2-D align_corners"), 0);
    ot_free(&y);
    /* 3-D, size [1, 1, 1, 1, 2]: x scaled by 2 and shifted by 1; one depth and height at 0 */
    f[0] = FI("input:1", 1, 1, 1, 1, 2);
    CHECK_OK(ot_run("AffineGrid", "20", f, 1, &t3, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(5, (int64_t)1, (int64_t)1, (int64_t)1, (int64_t)2, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, D(0, 0, 0, 2, 0, 0), 6, 1e-7, 0, "AffineGrid 3-D"), 0);
    ot_free(&y);
    /* theta of the other rank */
    CHECK(ot_run("AffineGrid", "20", f, 1, &t2, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "theta must be [N, 3, 4]");
    ot_free(&t2);
    ot_free(&t3);
}

TEST(resize_keep_aspect_ratio_policy)
{
    /* [1, 1, 2, 2] to sizes 7 x 8: not_larger scales both axes by 3.5 (7 x 7), not_smaller by 4 (8 x 8) */
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)2, (int64_t)2), D(1, 2, 3, 4)), y;
    prt_field f[3] = {FI("input:3", 7, 8), FI("axes", 2, 3), ot_str("keep_aspect_ratio_policy", "not_larger")};
    char msg[512];
    CHECK_OK(ot_run("Resize", "18", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)7, (int64_t)7));
    CHECK(ot_get(&y, 0) == 1 && ot_get(&y, 48) == 4); /* nearest: corners keep their values */
    ot_free(&y);
    f[2] = ot_str("keep_aspect_ratio_policy", "not_smaller");
    CHECK_OK(ot_run("Resize", "18", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)8, (int64_t)8));
    ot_free(&y);
    f[2] = ot_str("keep_aspect_ratio_policy", "fit");
    CHECK(ot_run("Resize", "18", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "not_larger");
    ot_free(&x);
}

TEST(conv_transpose_matches_onnxruntime)
{
    const int64_t s23[2] = {2, 3}, p1001[4] = {1, 0, 0, 1}, op12[2] = {1, 2}, g2[1] = {2}, d21[2] = {2, 1};
    const int64_t s12[2] = {1, 2}, s22[2] = {2, 2}, os79[2] = {7, 9};
    const prt_field f_sp[] = {{"strides", s23, PRT_FIELD_INT64, 0, 2}, {"pads", p1001, PRT_FIELD_INT64, 0, 4},
                              {"output_padding", op12, PRT_FIELD_INT64, 0, 2}};
    const prt_field f_gd[] = {{"group", g2, PRT_FIELD_INT64, 0, 1}, {"dilations", d21, PRT_FIELD_INT64, 0, 2},
                              {"strides", s12, PRT_FIELD_INT64, 0, 2}};
    const prt_field f_su[] = {{"auto_pad", "SAME_UPPER", PRT_FIELD_CHAR, 0, 10}, {"strides", s22, PRT_FIELD_INT64, 0, 2}};
    const prt_field f_os[] = {{"strides", s22, PRT_FIELD_INT64, 0, 2}, {"output_shape", os79, PRT_FIELD_INT64, 0, 2}};
    const struct {
        const char *name;
        const prt_field *f;
        int nf, bias;
        const int64_t *dims;
        const double *ref;
    } cases[] = {
        {"plain", NULL, 0, 0, ct_plain_dims, ct_plain},
        {"strides, pads, output_padding", f_sp, 3, 1, ct_strides_pads_outpad_dims, ct_strides_pads_outpad},
        {"group, dilations", f_gd, 3, 1, ct_group_dilations_dims, ct_group_dilations},
        {"SAME_UPPER", f_su, 2, 0, ct_same_upper_dims, ct_same_upper},
        {"output_shape", f_os, 2, 0, ct_output_shape_dims, ct_output_shape},
    };
    ot_tensor in[3], y;
    char msg[512];
    size_t c;
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)4, (int64_t)3, (int64_t)4), ct_x);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)4, (int64_t)3, (int64_t)3, (int64_t)2), ct_w);
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        prt_status st;
        in[2] = ot_make(PRT_DTYPE_F32, ot_dims(1, cases[c].dims[1]), ct_b);
        st = ot_run("ConvTranspose", "1", cases[c].f, cases[c].nf, in, cases[c].bias ? 3 : 2, &y, 1, 2, msg, sizeof msg);
        CHECK_MSG(st == PRT_OK, "%s: %s", cases[c].name, msg);
        if (st == PRT_OK) {
            expect_dims(&y, ot_dims(4, cases[c].dims[0], cases[c].dims[1], cases[c].dims[2], cases[c].dims[3]));
            CHECK_EQ_INT(ot_compare(&y, cases[c].ref, ot_vol(&y), 1e-5, 1e-5, cases[c].name), 0);
            ot_free(&y);
        }
        ot_free(&in[2]);
    }
    ot_free(&in[0]);
    ot_free(&in[1]);
}

/* ConvTranspose by its definition in float64: every input pixel adds its
 * kernel, scaled, at oy = iy * s - pad + i * d. */
typedef struct ct_case {
    int64_t n, cin, h, w, cout, kh, kw, group;
    int64_t stride[2], dil[2], pads[4], outpad[2];
    int one_d, bias;
} ct_case;

static void check_ct_case(const ct_case *c, uint32_t seed, const char *what)
{
    const int64_t cg = c->cin / c->group, coutg = c->cout / c->group;
    const int64_t oh = c->one_d ? 1 : (c->h - 1) * c->stride[0] + c->outpad[0] + (c->kh - 1) * c->dil[0] + 1 - c->pads[0] - c->pads[2];
    const int64_t ow = (c->w - 1) * c->stride[1] + c->outpad[1] + (c->kw - 1) * c->dil[1] + 1 - c->pads[1] - c->pads[3];
    const int64_t pads1[2] = {c->pads[1], c->pads[3]}, group = c->group, n = c->n * c->cout * oh * ow;
    ot_tensor in[3];
    prt_field f[5];
    int nf = 0, t;
    int64_t img, ci, iy, ix, i, j, o;
    double *ref = calloc((size_t)n, sizeof *ref), *mag = calloc((size_t)n, sizeof *mag);
    in[0] = ot_rand(PRT_DTYPE_F32, c->one_d ? ot_dims(3, c->n, c->cin, c->w) : ot_dims(4, c->n, c->cin, c->h, c->w), -1,
                    1, seed);
    in[1] = ot_rand(PRT_DTYPE_F32, c->one_d ? ot_dims(3, c->cin, coutg, c->kw) : ot_dims(4, c->cin, coutg, c->kh, c->kw),
                    -1, 1, seed + 1);
    in[2] = ot_rand(PRT_DTYPE_F32, ot_dims(1, c->cout), -1, 1, seed + 2);
    if (c->one_d) {
        f[nf++] = ot_i64("strides", &c->stride[1], 1);
        f[nf++] = ot_i64("dilations", &c->dil[1], 1);
        f[nf++] = ot_i64("pads", pads1, 2);
        f[nf++] = ot_i64("output_padding", &c->outpad[1], 1);
    } else {
        f[nf++] = ot_i64("strides", c->stride, 2);
        f[nf++] = ot_i64("dilations", c->dil, 2);
        f[nf++] = ot_i64("pads", c->pads, 4);
        f[nf++] = ot_i64("output_padding", c->outpad, 2);
    }
    f[nf++] = ot_i64("group", &group, 1);
    for (img = 0; img < c->n; img++)
        for (o = 0; o < c->cout; o++)
            for (i = 0; i < oh * ow; i++) ref[(img * c->cout + o) * oh * ow + i] = c->bias ? ot_get(&in[2], o) : 0;
    for (i = 0; i < n; i++) mag[i] = fabs(ref[i]);
    for (img = 0; img < c->n; img++)
        for (ci = 0; ci < c->cin; ci++)
            for (iy = 0; iy < (c->one_d ? 1 : c->h); iy++)
                for (ix = 0; ix < c->w; ix++)
                    for (o = 0; o < coutg; o++)
                        for (i = 0; i < (c->one_d ? 1 : c->kh); i++)
                            for (j = 0; j < c->kw; j++) {
                                const int64_t oy = c->one_d ? 0 : iy * c->stride[0] - c->pads[0] + i * c->dil[0];
                                const int64_t ox = ix * c->stride[1] - c->pads[1] + j * c->dil[1];
                                const int64_t co = ci / cg * coutg + o;
                                double p;
                                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                                p = ot_get(&in[0], ((img * c->cin + ci) * (c->one_d ? 1 : c->h) + iy) * c->w + ix) *
                                    ot_get(&in[1], ((ci * coutg + o) * (c->one_d ? 1 : c->kh) + i) * c->kw + j);
                                ref[((img * c->cout + co) * oh + oy) * ow + ox] += p;
                                mag[((img * c->cout + co) * oh + oy) * ow + ox] += fabs(p);
                            }
    run_on_1_and_2_threads("ConvTranspose", f, nf, in, c->bias ? 3 : 2,
                           c->one_d ? ot_dims(3, c->n, c->cout, ow) : ot_dims(4, c->n, c->cout, oh, ow), ref, mag, what);
    free(ref);
    free(mag);
    for (t = 0; t < 3; t++) ot_free(&in[t]);
}

/* Taps that never overlap (stride >= the dilated kernel: the blocked path,
 * full coverage or with gaps, pads, output_padding, groups) and that do
 * (col2im), against float64, on 1 and 2 threads with the same bits. */
TEST(conv_transpose_blocked_and_overlapping_match_float64)
{
    static const ct_case cases[] = {
        {1, 24, 9, 17, 24, 2, 2, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 0, 1},   /* the detection head */
        {1, 24, 23, 37, 1, 2, 2, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 0, 1},   /* one output channel */
        {2, 6, 5, 7, 4, 2, 3, 2, {3, 3}, {1, 1}, {1, 0, 0, 2}, {1, 0}, 0, 1},      /* gaps, pads, groups */
        {1, 4, 6, 5, 3, 2, 2, 1, {3, 3}, {2, 1}, {0, 0, 0, 0}, {0, 2}, 0, 0},      /* dilation, no bias */
        {1, 20, 40, 45, 16, 2, 2, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 0, 1},  /* threaded */
        {2, 3, 1, 300, 5, 1, 4, 1, {1, 4}, {1, 1}, {0, 1, 0, 1}, {0, 0}, 1, 1},    /* 1-D */
        {1, 4, 6, 5, 3, 3, 3, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, 1},      /* overlapping */
    };
    size_t ci;
    char what[64];
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        snprintf(what, sizeof what, "ConvTranspose case %d", (int)ci);
        check_ct_case(&cases[ci], (uint32_t)(400 + ci), what);
    }
}

/* y = op(a, b) (b NULL: unary), freeing nothing; CHECKs the run. */
static ot_tensor run_op(const char *op, const char *ver, const ot_tensor *a, const ot_tensor *b, const ot_tensor *c)
{
    ot_tensor in[3], y;
    char msg[512];
    int n = 1;
    in[0] = *a;
    if (b) in[n++] = *b;
    if (c) in[n++] = *c;
    CHECK_MSG(ot_run(op, ver, NULL, 0, in, n, &y, 1, 2, msg, sizeof msg) == PRT_OK, "%s: %s", op, msg);
    return y;
}

/* plugrt::FusedConv against Conv and then the ONNX ops one by one: a Relu,
 * the HardSwish chain of the OCR models (Add 3, Clip 0 6, Div 6, Mul by the
 * convolution), a residual input and an SE scale, on the blocked and the
 * depthwise engines; 1 and 2 threads give the same bits. */
TEST(fused_conv_epilogues_match_conv_then_the_ops)
{
    static const conv_case convs[] = {
        {2, 8, 17, 19, 12, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},   /* blocked 3x3 */
        {2, 16, 15, 18, 20, 1, 1, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, NULL, 0, 1},  /* 1x1 direct */
        {2, 6, 13, 21, 6, 3, 3, 6, {2, 2}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},    /* depthwise 3x3 s2 */
        {1, 4, 9, 40, 4, 5, 5, 4, {1, 1}, {1, 1}, {2, 2, 2, 2}, NULL, 0, 1},     /* depthwise 5x5 */
        {1, 24, 40, 50, 24, 3, 3, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}, NULL, 0, 1},  /* threaded */
    };
    static const int64_t p_relu[] = {9, 0, 0, 0};
    static const int64_t p_hswish[] = {0, 0, -1, 0, 19, 1, 0, 1, 3, 2, -4, 0, 2, 3, 0, 0};
    static const int64_t p_resid[] = {0, 0, 1, 0, 9, 2, 0, 0};
    static const int64_t p_se[] = {2, 0, 1, 0};
    static const float k_hswish[] = {3, 0, 6, 6};
    ot_tensor three = ot_make(PRT_DTYPE_F32, ot_dims(0), D(3)), zero = ot_make(PRT_DTYPE_F32, ot_dims(0), D(0));
    ot_tensor six = ot_make(PRT_DTYPE_F32, ot_dims(0), D(6));
    size_t ci;
    int e, t;
    char msg[512];
    for (ci = 0; ci < sizeof convs / sizeof convs[0]; ci++) {
        const conv_case *c = &convs[ci];
        const int64_t group = c->group;
        int64_t oh, ow, ph, pw;
        ot_tensor in[4], yc, ex = {0};
        prt_field f[7];
        int nf = 0;
        conv_case_geo(c, &oh, &ow, &ph, &pw);
        in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(4, c->n, c->cin, c->h, c->w), -1, 1, (uint32_t)(500 + ci));
        in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(4, c->cout, c->cin / c->group, c->kh, c->kw), -1, 1, (uint32_t)(510 + ci));
        in[2] = ot_rand(PRT_DTYPE_F32, ot_dims(1, c->cout), -1, 1, (uint32_t)(520 + ci));
        f[nf++] = ot_i64("strides", c->stride, 2);
        f[nf++] = ot_i64("dilations", c->dil, 2);
        f[nf++] = ot_i64("pads", c->pads, 4);
        f[nf++] = ot_i64("group", &group, 1);
        CHECK_OK(ot_run("Conv", "1", f, nf, in, 3, &yc, 1, 1, msg, sizeof msg));
        for (e = 0; e < 4; e++) {
            ot_tensor ref, y[2], t1, t2, t3;
            int nin = 3;
            if (e == 2) ex = ot_rand(PRT_DTYPE_F32, ot_dims(4, c->n, c->cout, oh, ow), -1, 1, (uint32_t)(530 + ci));
            if (e == 3) ex = ot_rand(PRT_DTYPE_F32, ot_dims(4, c->n, c->cout, (int64_t)1, (int64_t)1), 0, 1,
                                     (uint32_t)(540 + ci));
            if (e >= 2) in[nin++] = ex;
            switch (e) {
            case 0:
                f[nf] = ot_i64("program", p_relu, 4);
                ref = run_op("Relu", "6", &yc, NULL, NULL);
                break;
            case 1:
                f[nf] = ot_i64("program", p_hswish, 16);
                t1 = run_op("Add", "7", &yc, &three, NULL);
                t2 = run_op("Clip", "11", &t1, &zero, &six);
                t3 = run_op("Div", "7", &t2, &six, NULL);
                ref = run_op("Mul", "7", &t3, &yc, NULL);
                ot_free(&t1);
                ot_free(&t2);
                ot_free(&t3);
                break;
            case 2:
                f[nf] = ot_i64("program", p_resid, 8);
                t1 = run_op("Add", "7", &yc, &ex, NULL);
                ref = run_op("Relu", "6", &t1, NULL, NULL);
                ot_free(&t1);
                break;
            default:
                f[nf] = ot_i64("program", p_se, 4);
                ref = run_op("Mul", "7", &yc, &ex, NULL);
                break;
            }
            f[nf + 1] = ot_f32("consts", k_hswish, 4);
            for (t = 0; t < 2; t++) {
                prt_status st = ot_run_ns("plugrt", "FusedConv", "1", f, nf + (e == 1 ? 2 : 1), in, nin, &y[t], 1,
                                          t + 1, msg, sizeof msg);
                CHECK_MSG(st == PRT_OK, "conv %d epilogue %d: %s", (int)ci, e, msg);
                if (st != PRT_OK) {
                    y[t].data = NULL;
                    continue;
                }
                expect_dims(&y[t], yc.d);
                {
                    double *r = malloc((size_t)ot_vol(&ref) * sizeof *r);
                    int64_t i;
                    for (i = 0; i < ot_vol(&ref); i++) r[i] = ot_get(&ref, i);
                    CHECK_MSG(ot_compare(&y[t], r, ot_vol(&ref), 1e-6, 1e-7, "FusedConv") == 0,
                              "conv %d epilogue %d, %d thread(s)", (int)ci, e, t + 1);
                    free(r);
                }
            }
            if (y[0].data && y[1].data)
                CHECK_MSG(!memcmp(y[0].data, y[1].data, (size_t)ot_vol(&ref) * sizeof(float)),
                          "conv %d epilogue %d: 1 and 2 threads differ", (int)ci, e);
            ot_free(&y[0]);
            ot_free(&y[1]);
            ot_free(&ref);
            if (e >= 2) ot_free(&ex);
        }
        ot_free(&yc);
        for (e = 0; e < 3; e++) ot_free(&in[e]);
    }
    ot_free(&three);
    ot_free(&zero);
    ot_free(&six);
}

TEST(fused_conv_refuses_bad_programs_and_inputs)
{
    static const int64_t p_two[] = {0, 0, 1, 0}; /* value 1: an input after B */
    ot_tensor in[4], y;
    char msg[512];
    prt_field f = ot_i64("program", p_two, 4);
    in[0] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)5, (int64_t)5), -1, 1, 1);
    in[1] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)3, (int64_t)2, (int64_t)3, (int64_t)3), -1, 1, 2);
    in[2] = ot_rand(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), -1, 1, 3);
    in[3] = ot_rand(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)4, (int64_t)1, (int64_t)1), -1, 1, 4);
    CHECK(ot_run_ns("plugrt", "FusedConv", "1", &f, 1, in, 3, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "instruction 0");
    CHECK(ot_run_ns("plugrt", "FusedConv", "1", &f, 1, in, 4, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "does not broadcast");
    CHECK(ot_run_ns("plugrt", "FusedConv", "1", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "program");
    for (f.count = 0; f.count < 4; f.count++) ot_free(&in[f.count]);
}

TEST(rms_normalization_and_lp_pools)
{
    ot_tensor in[2], y;
    char msg[256];
    double ref[6];
    int64_t r, k;
    prt_field f[2];
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), D(1, -2, 3, 0.5, 0.25, -4));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), D(1, 2, -1));
    CHECK_OK(ot_run("RMSNormalization", "23", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    for (r = 0; r < 2; r++) {
        double ms = 0;
        for (k = 0; k < 3; k++) ms += ot_get(&in[0], r * 3 + k) * ot_get(&in[0], r * 3 + k);
        for (k = 0; k < 3; k++) ref[r * 3 + k] = ot_get(&in[0], r * 3 + k) / sqrt(ms / 3 + 1e-5) * ot_get(&in[1], k);
    }
    CHECK_EQ_INT(ot_compare(&y, ref, 6, 1e-5, 1e-6, "RMSNormalization"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(3, (int64_t)1, (int64_t)1, (int64_t)4), D(3, 4, 0, -1));
    f[0] = FI("kernel_shape", 2);
    CHECK_OK(ot_run("LpPool", "18", f, 1, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(5, 4, 1), 3, 1e-6, 0, "LpPool p=2"), 0);
    ot_free(&y);
    f[0] = FI("p", 1);
    CHECK_OK(ot_run("GlobalLpPool", "2", f, 1, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(8), 1, 1e-6, 0, "GlobalLpPool p=1"), 0);
    ot_free(&y);
    ot_free(&in[0]);
}

TEST(quantize_dequantize_dynamic_and_matmul_integer)
{
    ot_tensor in[4], y[3];
    char msg[256];
    prt_field f = FI("axis", 1);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)6), D(0, 2, 3, 1000, -254, -1000));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(0), D(2));
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(128));
    CHECK_OK(ot_run("QuantizeLinear", "10", NULL, 0, in, 3, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y[0].t, PRT_DTYPE_U8);
    CHECK_EQ_INT(ot_compare(&y[0], D(128, 129, 130, 255, 1, 0), 6, 0, 0, "QuantizeLinear"), 0);
    ot_free(&y[0]);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    /* per axis, int8 */
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)2), D(1, 2, 3, 4));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)2), D(2, 4));
    in[2] = ot_make(PRT_DTYPE_I8, ot_dims(1, (int64_t)2), D(0, 1));
    CHECK_OK(ot_run("QuantizeLinear", "13", &f, 1, in, 3, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(0, 1, 2, 2), 4, 0, 0, "QuantizeLinear per axis"), 0);
    ot_free(&y[0]);
    ot_free(&in[1]);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), D(2, 4, 8));
    CHECK(ot_run("QuantizeLinear", "13", &f, 1, in, 3, y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "scale");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(1, (int64_t)4), D(0, 3, 128, 255));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(0), D(2));
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(128));
    CHECK_OK(ot_run("DequantizeLinear", "10", NULL, 0, in, 3, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y[0].t, PRT_DTYPE_F32);
    CHECK_EQ_INT(ot_compare(&y[0], D(-256, -250, 0, 254), 4, 0, 0, "DequantizeLinear"), 0);
    ot_free(&y[0]);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)6), D(0, 2, -3, -2.5, 1.34, 0.5));
    CHECK_OK(ot_run("DynamicQuantizeLinear", "11", NULL, 0, in, 1, y, 3, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[0], D(153, 255, 0, 26, 221, 179), 6, 0, 0, "DynamicQuantizeLinear"), 0);
    CHECK_EQ_INT(ot_compare(&y[1], D(0.0196078438), 1, 1e-7, 0, "DynamicQuantizeLinear scale"), 0);
    CHECK_EQ_INT(ot_compare(&y[2], D(153), 1, 0, 0, "DynamicQuantizeLinear zero point"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    ot_free(&y[2]);
    ot_free(&in[0]);
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)4, (int64_t)3), D(11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0));
    in[1] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)3, (int64_t)2), D(1, 4, 2, 5, 3, 6));
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(12));
    in[3] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(0));
    CHECK_OK(ot_run("MatMulInteger", "10", NULL, 0, in, 4, y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y[0].t, PRT_DTYPE_I32);
    CHECK_EQ_INT(ot_compare(&y[0], D(-38, -83, -44, -98, -50, -113, -56, -128), 8, 0, 0, "MatMulInteger"), 0);
    ot_free(&y[0]);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    ot_free(&in[3]);
}

TEST(grid_sample_every_mode_padding_and_alignment)
{
    static const char *const modes[] = {"linear", "nearest", "cubic"}, *const pads[] = {"zeros", "border", "reflection"};
    const double *const refs[3][3][2] = {
        {{gs_linear_zeros_0, gs_linear_zeros_1}, {gs_linear_border_0, gs_linear_border_1},
         {gs_linear_reflection_0, gs_linear_reflection_1}},
        {{gs_nearest_zeros_0, gs_nearest_zeros_1}, {gs_nearest_border_0, gs_nearest_border_1},
         {gs_nearest_reflection_0, gs_nearest_reflection_1}},
        {{gs_cubic_zeros_0, gs_cubic_zeros_1}, {gs_cubic_border_0, gs_cubic_border_1},
         {gs_cubic_reflection_0, gs_cubic_reflection_1}},
    };
    ot_tensor in[2], y;
    char msg[256], what[64];
    int m, p, a;
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)3, (int64_t)4), gs_x);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)3, (int64_t)2), gs_grid);
    for (m = 0; m < 3; m++)
        for (p = 0; p < 3; p++)
            for (a = 0; a < 2; a++) {
                int64_t align = a;
                prt_field f[3] = {ot_str("mode", modes[m]), ot_str("padding_mode", pads[p]),
                                  ot_i64("align_corners", &align, 1)};
                snprintf(what, sizeof what, "GridSample %s %s %d", modes[m], pads[p], a);
                CHECK_MSG(ot_run("GridSample", "20", f, 3, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_OK, "%s: %s", what,
                          msg);
                expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)2, (int64_t)2, (int64_t)3));
                CHECK_EQ_INT(ot_compare(&y, refs[m][p][a], 12, 1e-5, 1e-6, what), 0);
                ot_free(&y);
            }
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(roi_align_avg_in_both_coordinate_modes)
{
    ot_tensor in[3], y;
    char msg[256];
    const int64_t oh = 2, ow = 3, sr = 2;
    float scale = 0.9f;
    int c;
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(4, (int64_t)2, (int64_t)2, (int64_t)5, (int64_t)6), ra_x);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4), ra_rois);
    in[2] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), D(0, 1, 1));
    for (c = 0; c < 2; c++) {
        prt_field f[5] = {ot_i64("output_height", &oh, 1), ot_i64("output_width", &ow, 1),
                          ot_i64("sampling_ratio", &sr, 1), ot_f32("spatial_scale", &scale, 1),
                          ot_str("coordinate_transformation_mode", c ? "output_half_pixel" : "half_pixel")};
        CHECK_OK(ot_run("RoiAlign", "16", f, 5, in, 3, &y, 1, 1, msg, sizeof msg));
        expect_dims(&y, ot_dims(4, (int64_t)3, (int64_t)2, (int64_t)2, (int64_t)3));
        CHECK_EQ_INT(ot_compare(&y, c ? ra_output_half_pixel : ra_half_pixel, 36, 1e-5, 1e-6, "RoiAlign"), 0);
        ot_free(&y);
    }
    {
        prt_field f[5] = {ot_i64("output_height", &oh, 1), ot_i64("output_width", &ow, 1),
                          ot_i64("sampling_ratio", &sr, 1), ot_f32("spatial_scale", &scale, 1), ot_str("mode", "max")};
        CHECK_OK(ot_run("RoiAlign", "16", f, 5, in, 3, &y, 1, 1, msg, sizeof msg));
        CHECK_EQ_INT(ot_compare(&y, ra_max, 36, 1e-5, 1e-6, "RoiAlign max"), 0);
        ot_free(&y);
    }
    ot_free(&in[2]);
    in[2] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), D(0, 2, 1));
    CHECK(ot_run("RoiAlign", "16", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "batch_indices[1] = 2");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}

TEST(einsum_matches_numpy_through_the_reference_evaluator)
{
    const struct {
        const char *eq;
        int nin;
        prt_dims d[2];
        const double *in[2];
        const int64_t *odims;
        int orank;
        const double *ref;
    } cases[] = {
        {"bij,bjk->bik", 2, {ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4), ot_dims(3, (int64_t)2, (int64_t)4, (int64_t)5)},
         {es_batch_matmul_in0, es_batch_matmul_in1}, es_batch_matmul_dims, es_batch_matmul_rank, es_batch_matmul},
        {"ii->i", 1, {ot_dims(2, (int64_t)3, (int64_t)3)}, {es_diagonal_in0}, es_diagonal_dims, es_diagonal_rank,
         es_diagonal},
        {"ij->ji", 1, {ot_dims(2, (int64_t)2, (int64_t)3)}, {es_transpose_in0}, es_transpose_dims, es_transpose_rank,
         es_transpose},
        {"i,i", 2, {ot_dims(1, (int64_t)5), ot_dims(1, (int64_t)5)}, {es_inner_in0, es_inner_in1}, es_inner_dims,
         es_inner_rank, es_inner},
        {"...ii->...i", 1, {ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)3)}, {es_batch_diagonal_in0},
         es_batch_diagonal_dims, es_batch_diagonal_rank, es_batch_diagonal},
        {"ij,jk", 2, {ot_dims(2, (int64_t)2, (int64_t)3), ot_dims(2, (int64_t)3, (int64_t)4)},
         {es_implicit_in0, es_implicit_in1}, es_implicit_dims, es_implicit_rank, es_implicit},
        {"ab->", 1, {ot_dims(2, (int64_t)3, (int64_t)4)}, {es_sum_all_in0}, es_sum_all_dims, es_sum_all_rank,
         es_sum_all},
        {"...j,j->...", 2, {ot_dims(3, (int64_t)2, (int64_t)1, (int64_t)3), ot_dims(1, (int64_t)3)},
         {es_broadcast_in0, es_broadcast_in1}, es_broadcast_dims, es_broadcast_rank, es_broadcast},
    };
    char msg[256];
    size_t c;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ot_tensor in[2], y;
        prt_field f = ot_str("equation", cases[c].eq);
        prt_dims od;
        int i;
        for (i = 0; i < cases[c].nin; i++) in[i] = ot_make(PRT_DTYPE_F32, cases[c].d[i], cases[c].in[i]);
        CHECK_MSG(ot_run("Einsum", "12", &f, 1, in, cases[c].nin, &y, 1, 1, msg, sizeof msg) == PRT_OK, "%s: %s",
                  cases[c].eq, msg);
        memset(&od, 0, sizeof od);
        od.nb = cases[c].orank;
        for (i = 0; i < od.nb; i++) od.d[i] = cases[c].odims[i];
        expect_dims(&y, od);
        CHECK_EQ_INT(ot_compare(&y, cases[c].ref, ot_vol(&y), 1e-5, 1e-6, cases[c].eq), 0);
        ot_free(&y);
        for (i = 0; i < cases[c].nin; i++) ot_free(&in[i]);
    }
    {
        ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)2, (int64_t)3), NULL), y;
        prt_field f = ot_str("equation", "ij->k");
        CHECK(ot_run("Einsum", "12", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(msg, "not a valid einsum equation");
        f = ot_str("equation", "ijk->i");
        CHECK(ot_run("Einsum", "12", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
        CHECK_STR_CONTAINS(msg, "operand 0 has rank 2 but its term names 3 axes");
        ot_free(&x);
    }
}

TEST(conv_integer_matches_the_operator_example)
{
    /* ONNX ConvInteger example with padding 1: x 1..9 (3x3) u8, x_zero_point 1, w 2x2 of ones */
    ot_tensor in[3], y;
    char msg[256];
    prt_field f = FI("pads", 1, 1, 1, 1);
    in[0] = ot_make(PRT_DTYPE_U8, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)3, (int64_t)3), D(2, 3, 4, 5, 6, 7, 8, 9, 10));
    in[1] = ot_make(PRT_DTYPE_U8, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)2, (int64_t)2), D(1, 1, 1, 1));
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(0), D(1));
    CHECK_OK(ot_run("ConvInteger", "10", &f, 1, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
    expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)4, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y, D(1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9), 16, 0, 0, "ConvInteger"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}
