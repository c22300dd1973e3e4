/* ONNX layout and shape ops (plugins/onnx/layout): Reshape, Flatten,
 * Squeeze, Unsqueeze, Shape, Size, Expand, Transpose, Slice, DepthToSpace,
 * SpaceToDepth, Tile, Concat, Split against brute-force or literal
 * references, with negative axes, empty and 0-d tensors and bad fields. */
#include "onnx_test_util.h"
#include "prt_test.h"

static ot_tensor iota(prt_dtype t, prt_dims d)
{
    ot_tensor x = ot_make(t, d, NULL);
    int64_t i, n = ot_vol(&x);
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    for (i = 0; i < n; i++) v[i] = (double)(i % 100);
    ot_free(&x);
    x = ot_make(t, d, v);
    free(v);
    return x;
}

#define FI(nm, ...) ot_i64(nm, (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static void expect_dims(const ot_tensor *y, prt_dims d)
{
    char a[128], b[128];
    CHECK_MSG(prt_dims_equal(&y->d, &d), "dims %s, expected %s", prt_dims_str(&y->d, a, sizeof a),
              prt_dims_str(&d, b, sizeof b));
}

TEST(reshape_flatten_squeeze_unsqueeze_keep_the_data)
{
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4)), y;
    char msg[512];
    prt_field f[2];
    int64_t i;
    f[0] = FI("input:1", 0, -1, 2);
    CHECK_OK(ot_run("Reshape", "5", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(3, (int64_t)2, (int64_t)6, (int64_t)2));
    for (i = 0; i < 24; i++) CHECK(ot_get(&y, i) == ot_get(&x, i));
    ot_free(&y);
    f[0] = FI("input:1", 5, -1);
    CHECK(ot_run("Reshape", "5", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "24 elements");
    f[0] = FI("input:1", -1, -1);
    CHECK(ot_run("Reshape", "5", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "at most one");
    /* allowzero: a 0 is an extent of 0 */
    {
        ot_tensor e = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)0, (int64_t)3), NULL);
        f[0] = FI("input:1", 3, 0);
        f[1] = FI("allowzero", 1);
        CHECK_OK(ot_run("Reshape", "14", f, 2, &e, 1, &y, 1, 1, msg, sizeof msg));
        expect_dims(&y, ot_dims(2, (int64_t)3, (int64_t)0));
        ot_free(&y);
        ot_free(&e);
    }
    f[0] = FI("axis", -1);
    CHECK_OK(ot_run("Flatten", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)6, (int64_t)4));
    ot_free(&y);
    f[0] = FI("axis", 0);
    CHECK_OK(ot_run("Flatten", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)1, (int64_t)24));
    ot_free(&y);
    f[0] = FI("input:1", -1, 0);
    CHECK_OK(ot_run("Unsqueeze", "13", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(5, (int64_t)1, (int64_t)2, (int64_t)3, (int64_t)4, (int64_t)1));
    ot_free(&y);
    ot_free(&x);
    x = iota(PRT_DTYPE_I64, ot_dims(4, (int64_t)1, (int64_t)3, (int64_t)1, (int64_t)2));
    CHECK_OK(ot_run("Squeeze", "1", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)3, (int64_t)2));
    ot_free(&y);
    f[0] = FI("input:1", -2);
    CHECK_OK(ot_run("Squeeze", "13", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(3, (int64_t)1, (int64_t)3, (int64_t)2));
    for (i = 0; i < 6; i++) CHECK(ot_get(&y, i) == ot_get(&x, i));
    ot_free(&y);
    f[0] = FI("axes", 1);
    CHECK(ot_run("Squeeze", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "only extents of 1");
    ot_free(&x);
    /* 0-d to [1] and back */
    x = ot_make(PRT_DTYPE_F32, ot_dims(0), (const double[]){3});
    f[0] = FI("axes", 0);
    CHECK_OK(ot_run("Unsqueeze", "1", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(1, (int64_t)1));
    CHECK(ot_get(&y, 0) == 3);
    ot_free(&y);
    ot_free(&x);
}

TEST(shape_size_expand)
{
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(3, (int64_t)2, (int64_t)1, (int64_t)3)), y;
    char msg[512];
    prt_field f[2];
    int64_t i, j, k;
    CHECK_OK(ot_run("Shape", "1", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){2, 1, 3}, 3, 0, 0, "Shape"), 0);
    ot_free(&y);
    f[0] = FI("start", -2);
    f[1] = FI("end", 100);
    CHECK_OK(ot_run("Shape", "15", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(1, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){1, 3}, 2, 0, 0, "Shape start -2"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("Size", "1", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.d.nb, 0);
    CHECK_EQ_INT(ot_compare(&y, (const double[]){6}, 1, 0, 0, "Size"), 0);
    ot_free(&y);
    /* Expand [2,1,3] by [4,1] -> [2,4,3]; a 1 in the shape keeps the input's extent */
    f[0] = FI("input:1", 4, 1);
    CHECK_OK(ot_run("Expand", "8", f, 1, &x, 1, &y, 1, 2, msg, sizeof msg));
    expect_dims(&y, ot_dims(3, (int64_t)2, (int64_t)4, (int64_t)3));
    for (i = 0; i < 2; i++)
        for (j = 0; j < 4; j++)
            for (k = 0; k < 3; k++) CHECK(ot_get(&y, (i * 4 + j) * 3 + k) == ot_get(&x, i * 3 + k));
    ot_free(&y);
    f[0] = FI("input:1", 5, 4);
    CHECK(ot_run("Expand", "8", f, 1, &x, 1, &y, 1, 2, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "broadcast");
    ot_free(&x);
}

TEST(transpose_any_permutation_matches_index_math)
{
    ot_tensor x = iota(PRT_DTYPE_I32, ot_dims(4, (int64_t)2, (int64_t)3, (int64_t)4, (int64_t)5)), y;
    static const int64_t perms[][4] = {{0, 2, 1, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}};
    char msg[512];
    int p;
    for (p = 0; p < 4; p++) {
        prt_field f = ot_i64("perm", perms[p < 3 ? p : 1], 4);
        const int64_t *pm = perms[p < 3 ? p : 1];
        int64_t o, id[4] = {2, 3, 4, 5}, is[4] = {60, 20, 5, 1};
        CHECK_OK(ot_run("Transpose", "1", &f, p < 3 ? 1 : 0, &x, 1, &y, 1, 2, msg, sizeof msg));
        for (o = 0; o < 120; o++) {
            int64_t rem = o, off = 0;
            int a;
            for (a = 3; a >= 0; a--) {
                off += (rem % id[pm[a]]) * is[pm[a]];
                rem /= id[pm[a]];
            }
            CHECK(ot_get(&y, o) == ot_get(&x, off));
        }
        ot_free(&y);
    }
    {
        prt_field f = FI("perm", 0, 0, 1, 2);
        CHECK(ot_run("Transpose", "1", &f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(msg, "permutation");
    }
    ot_free(&x);
}

TEST(slice_with_negative_indices_steps_and_clamping)
{
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(2, (int64_t)4, (int64_t)10)), y;
    char msg[512];
    prt_field f[4];
    f[0] = FI("input:1", 1, -1);
    f[1] = FI("input:2", 1000, -8);
    f[2] = FI("input:3", 0, -1);
    f[3] = FI("input:4", 2, -3);
    /* rows 1, 3; columns 9, 6, 3 */
    CHECK_OK(ot_run("Slice", "10", f, 4, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, (const double[]){19, 16, 13, 39, 36, 33}, 6, 0, 0, "Slice"), 0);
    ot_free(&y);
    /* v1 attributes, start past the end: empty */
    f[0] = FI("starts", 20);
    f[1] = FI("ends", 30);
    f[2] = FI("axes", 1);
    CHECK_OK(ot_run("Slice", "1", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)4, (int64_t)0));
    ot_free(&y);
    f[0] = FI("input:1", 0);
    f[1] = FI("input:2", 1);
    f[2] = FI("input:4", 0);
    CHECK(ot_run("Slice", "10", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "steps[0] is 0");
    f[2] = FI("input:3", 2);
    CHECK(ot_run("Slice", "10", f, 3, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "outside [-2, 1]");
    ot_free(&x);
}

TEST(depth_to_space_and_back)
{
    /* numpy: x = arange(16).reshape(1, 4, 2, 2); DCR blocksize 2 */
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)4, (int64_t)2, (int64_t)2)), y, z;
    char msg[512];
    prt_field f[2] = {FI("blocksize", 2), ot_str("mode", "CRD")};
    static const double dcr[16] = {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15};
    static const double crd[16] = {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15};
    CHECK_OK(ot_run("DepthToSpace", "11", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(4, (int64_t)1, (int64_t)1, (int64_t)4, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y, dcr, 16, 0, 0, "DepthToSpace DCR"), 0);
    /* SpaceToDepth undoes DCR */
    CHECK_OK(ot_run("SpaceToDepth", "1", f, 1, &y, 1, &z, 1, 1, msg, sizeof msg));
    expect_dims(&z, x.d);
    CHECK_EQ_INT(ot_compare(&z, (const double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 16, 0, 0,
                            "SpaceToDepth"), 0);
    ot_free(&y);
    ot_free(&z);
    /* CRD with C' = 1 equals DCR; with 8 channels they differ */
    CHECK_OK(ot_run("DepthToSpace", "11", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, crd, 16, 0, 0, "DepthToSpace CRD"), 0);
    ot_free(&y);
    ot_free(&x);
    x = iota(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)8, (int64_t)1, (int64_t)1));
    CHECK_OK(ot_run("DepthToSpace", "11", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    /* CRD: out[c, i, j] = x[c*4 + i*2 + j] */
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 1, 2, 3, 4, 5, 6, 7}, 8, 0, 0, "CRD 8ch"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("DepthToSpace", "11", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    /* DCR: out[c, i, j] = x[(i*2 + j)*2 + c] */
    CHECK_EQ_INT(ot_compare(&y, (const double[]){0, 2, 4, 6, 1, 3, 5, 7}, 8, 0, 0, "DCR 8ch"), 0);
    ot_free(&y);
    ot_free(&x);
    x = iota(PRT_DTYPE_F32, ot_dims(4, (int64_t)1, (int64_t)3, (int64_t)1, (int64_t)1));
    CHECK(ot_run("DepthToSpace", "11", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "multiple of blocksize^2");
    ot_free(&x);
}

TEST(tile_concat_split)
{
    ot_tensor x = iota(PRT_DTYPE_U8, ot_dims(2, (int64_t)2, (int64_t)2)), y[3], in[3];
    char msg[512];
    prt_field f[2];
    f[0] = FI("input:1", 2, 3);
    CHECK_OK(ot_run("Tile", "6", f, 1, &x, 1, y, 1, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(2, (int64_t)4, (int64_t)6));
    CHECK_EQ_INT(ot_compare(&y[0], (const double[]){0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 0, 1, 0, 1, 0, 1,
                                                    2, 3, 2, 3, 2, 3}, 24, 0, 0, "Tile"), 0);
    ot_free(&y[0]);
    /* Concat on axis -1 of [2,2], [2,0], [2,1] */
    in[0] = x;
    in[1] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)2, (int64_t)0), NULL);
    in[2] = ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)2, (int64_t)1), (const double[]){7, 9});
    f[0] = FI("axis", -1);
    CHECK_OK(ot_run("Concat", "4", f, 1, in, 3, y, 1, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(2, (int64_t)2, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y[0], (const double[]){0, 1, 7, 2, 3, 9}, 6, 0, 0, "Concat"), 0);
    /* Split it back: sizes [2, 0, 1] on axis 1 */
    f[0] = FI("axis", 1);
    f[1] = FI("split", 2, 0, 1);
    {
        ot_tensor whole = y[0];
        CHECK_OK(ot_run("Split", "2", f, 2, &whole, 1, y, 3, 1, msg, sizeof msg));
        expect_dims(&y[0], ot_dims(2, (int64_t)2, (int64_t)2));
        expect_dims(&y[1], ot_dims(2, (int64_t)2, (int64_t)0));
        CHECK_EQ_INT(ot_compare(&y[0], (const double[]){0, 1, 2, 3}, 4, 0, 0, "Split 0"), 0);
        CHECK_EQ_INT(ot_compare(&y[2], (const double[]){7, 9}, 2, 0, 0, "Split 2"), 0);
        ot_free(&y[0]);
        ot_free(&y[1]);
        ot_free(&y[2]);
        /* num_outputs 2 on an extent of 3: 2 and 1 */
        f[1] = FI("num_outputs", 2);
        CHECK_OK(ot_run("Split", "13", f, 2, &whole, 1, y, 2, 1, msg, sizeof msg));
        expect_dims(&y[0], ot_dims(2, (int64_t)2, (int64_t)2));
        expect_dims(&y[1], ot_dims(2, (int64_t)2, (int64_t)1));
        CHECK_EQ_INT(ot_compare(&y[1], (const double[]){7, 9}, 2, 0, 0, "Split uneven"), 0);
        ot_free(&y[0]);
        ot_free(&y[1]);
        f[1] = FI("split", 2, 2);
        CHECK(ot_run("Split", "2", f, 2, &whole, 1, y, 2, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
        CHECK_STR_CONTAINS(msg, "add up to 4");
        CHECK(ot_run("Split", "2", f, 0, &whole, 1, y, 2, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(msg, "num_outputs");
        ot_free(&whole);
    }
    /* Concat with mismatched extents */
    in[2] = (ot_free(&in[2]), ot_make(PRT_DTYPE_U8, ot_dims(2, (int64_t)3, (int64_t)1), NULL));
    f[0] = FI("axis", 1);
    CHECK(ot_run("Concat", "4", f, 1, in, 3, y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "input 2 has extent 3 on axis 0");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}

#define D(...) ((const double[]){__VA_ARGS__})

TEST(pad_modes_negative_pads_axes_and_constant_input)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)2), D(1, 1.2, 2.3, 3.4, 4.5, 5.7)), y, in[2];
    char msg[512];
    prt_field f[3];
    f[0] = FI("pads", 0, 2, 0, 0);
    CHECK_OK(ot_run("Pad", "2", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)3, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y, D(0, 0, 1, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7), 12, 1e-7, 0, "constant"), 0);
    ot_free(&y);
    f[0] = FI("input:1", 0, 2, 0, 0);
    f[1] = ot_str("mode", "reflect");
    CHECK_OK(ot_run("Pad", "11", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1.2, 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7), 12, 1e-7, 0, "reflect"), 0);
    ot_free(&y);
    f[1] = ot_str("mode", "edge");
    CHECK_OK(ot_run("Pad", "11", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1, 1, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7), 12, 1e-7, 0, "edge"), 0);
    ot_free(&y);
    f[0] = FI("input:1", 2, 1, 1, 1);
    f[1] = ot_str("mode", "wrap");
    CHECK_OK(ot_run("Pad", "18", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)6, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y, D(3.4, 2.3, 3.4, 2.3, 5.7, 4.5, 5.7, 4.5, 1.2, 1, 1.2, 1, 3.4, 2.3, 3.4, 2.3,
                                  5.7, 4.5, 5.7, 4.5, 1.2, 1, 1.2, 1), 24, 1e-7, 0, "wrap"), 0);
    ot_free(&y);
    f[1] = ot_str("mode", "mirror");
    CHECK(ot_run("Pad", "18", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "mode");
    ot_free(&x);
    /* negative pads crop; axes with a constant_value input */
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(2, (int64_t)2, (int64_t)3), D(1, 2, 3, 4, 5, 6));
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(0), D(9));
    f[0] = FI("input:1", 0, -1, 0, 0);
    CHECK_OK(ot_run("Pad", "11", f, 1, in, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(2, 3, 5, 6), 4, 0, 0, "crop"), 0);
    ot_free(&y);
    f[0] = FI("input:1", 1, 1);
    f[1] = FI("input:3", -1);
    CHECK_OK(ot_run("Pad", "18", f, 2, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)5));
    CHECK_EQ_INT(ot_compare(&y, D(9, 1, 2, 3, 9, 9, 4, 5, 6, 9), 10, 0, 0, "axes + constant_value"), 0);
    ot_free(&y);
    /* constant_value as the field "input:2" (a constant, with input 2 absent from the layer) */
    f[2] = (prt_field){.name = "input:2", .data = (const double[]){7}, .type = PRT_FIELD_FLOAT64, .count = 1};
    CHECK_OK(ot_run("Pad", "18", f, 3, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(7, 1, 2, 3, 7, 7, 4, 5, 6, 7), 10, 0, 0, "axes + constant_value field"), 0);
    ot_free(&y);
    f[0] = FI("input:1", 0, -4, 0, 0);
    CHECK(ot_run("Pad", "11", f, 1, in, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "negative extent");
    f[0] = FI("input:1", 1, 1, 1);
    CHECK(ot_run("Pad", "11", f, 1, in, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "2 per axis");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(constant_of_shape_eyelike_trilu)
{
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)3)), y, in[2];
    char msg[512];
    prt_field f[2];
    f[0] = FI("input:0", 2, 0);
    CHECK_OK(ot_run("ConstantOfShape", "9", f, 1, NULL, 0, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)0));
    CHECK_EQ_INT(y.t, PRT_DTYPE_F32);
    ot_free(&y);
    f[0] = FI("input:0", 3);
    CHECK_OK(ot_run("ConstantOfShape", "9", f, 1, NULL, 0, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(0, 0, 0), 3, 0, 0, "ConstantOfShape"), 0);
    ot_free(&y);
    { /* the TENSOR field "value" gives the fill and the dtype */
        static const int32_t seven = 7;
        static const float two[2] = {1, 2};
        prt_field_tensor vt;
        memset(&vt, 0, sizeof vt);
        vt.dtype = PRT_DTYPE_I32;
        vt.dims = ot_dims(1, (int64_t)1);
        vt.data = &seven;
        f[1] = f[0];
        f[1].name = "value";
        f[1].data = &vt;
        f[1].type = PRT_FIELD_TENSOR;
        f[1].count = 1;
        CHECK_OK(ot_run("ConstantOfShape", "9", f, 2, NULL, 0, &y, 1, 1, msg, sizeof msg));
        CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
        CHECK_EQ_INT(ot_compare(&y, D(7, 7, 7), 3, 0, 0, "ConstantOfShape value"), 0);
        ot_free(&y);
        vt.dtype = PRT_DTYPE_F32;
        vt.dims = ot_dims(1, (int64_t)2);
        vt.data = two;
        CHECK(ot_run("ConstantOfShape", "9", f, 2, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(msg, "needs one tensor of one element");
    }
    f[0] = FI("k", 1);
    f[1] = FI("dtype", 7);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4), NULL);
    CHECK_OK(ot_run("EyeLike", "9", f, 2, in, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    CHECK_EQ_INT(ot_compare(&y, D(0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1), 12, 0, 0, "EyeLike"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    CHECK_OK(ot_run("Trilu", "14", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(0, 1, 2, 0, 4, 5, 0, 0, 8), 9, 0, 0, "Trilu upper"), 0);
    ot_free(&y);
    in[0] = x;
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(0), D(-1));
    f[0] = FI("upper", 0);
    CHECK_OK(ot_run("Trilu", "14", f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(0, 0, 0, 3, 0, 0, 6, 7, 0), 9, 0, 0, "Trilu lower k=-1"), 0);
    ot_free(&y);
    ot_free(&in[1]);
    ot_free(&x);
}

TEST(constant_from_scalar_and_list_attributes)
{
    ot_tensor y;
    char msg[512];
    prt_field f[2];
    f[0] = ot_f32("value_float", &(float){2.5f}, 1);
    CHECK_OK(ot_run("Constant", "12", f, 1, NULL, 0, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_F32);
    CHECK_EQ_INT(y.d.nb, 0);
    CHECK_EQ_INT(ot_compare(&y, D(2.5), 1, 0, 0, "Constant value_float"), 0);
    ot_free(&y);
    f[0] = FI("value_ints", 3, -4, 5);
    CHECK_OK(ot_run("Constant", "12", f, 1, NULL, 0, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I64);
    expect_dims(&y, ot_dims(1, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, D(3, -4, 5), 3, 0, 0, "Constant value_ints"), 0);
    ot_free(&y);
    f[1] = FI("value_int", 1);
    CHECK(ot_run("Constant", "12", f, 2, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "exactly one");
    CHECK(ot_run("Constant", "12", NULL, 0, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "\"value\" is not supported yet");
}

TEST(center_crop_pad_crops_and_pads_around_the_center)
{
    ot_tensor x = iota(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4)), y;
    char msg[512];
    prt_field f[2];
    f[0] = FI("input:1", 2, 6);
    CHECK_OK(ot_run("CenterCropPad", "18", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)6));
    CHECK_EQ_INT(ot_compare(&y, D(0, 0, 1, 2, 3, 0, 0, 4, 5, 6, 7, 0), 12, 0, 0, "CenterCropPad"), 0);
    ot_free(&y);
    f[0] = FI("input:1", 2);
    f[1] = FI("axes", -1);
    CHECK_OK(ot_run("CenterCropPad", "18", f, 2, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)3, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(1, 2, 5, 6, 9, 10), 6, 0, 0, "CenterCropPad axes"), 0);
    ot_free(&y);
    CHECK(ot_run("CenterCropPad", "18", f, 1, &x, 1, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "shape has 1 values for 2 axes");
    ot_free(&x);
}

TEST(hann_hamming_blackman_windows)
{
    static const char *const ops[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
    ot_tensor y;
    char msg[512];
    int o, per;
    for (o = 0; o < 3; o++)
        for (per = 0; per < 2; per++) {
            int64_t size = 5, p = per, i;
            prt_field f[2] = {ot_i64("input:0", &size, 1), ot_i64("periodic", &p, 1)};
            double ref[5], N = per ? 5.0 : 4.0;
            CHECK_OK(ot_run(ops[o], "17", f, 2, NULL, 0, &y, 1, 1, msg, sizeof msg));
            expect_dims(&y, ot_dims(1, (int64_t)5));
            for (i = 0; i < 5; i++) {
                double a = 2 * M_PI * (double)i / N;
                ref[i] = o == 0 ? 0.5 - 0.5 * cos(a) : o == 1 ? 25.0 / 46 - 21.0 / 46 * cos(a)
                                                               : 0.42 - 0.5 * cos(a) + 0.08 * cos(2 * a);
            }
            CHECK_EQ_INT(ot_compare(&y, ref, 5, 1e-6, 1e-7, ops[o]), 0);
            ot_free(&y);
        }
    CHECK(ot_run("HannWindow", "17", NULL, 0, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "input:0");
}

/* Range's start, limit and delta as TENSOR fields "input:0..2" of one dtype. */
static prt_field range_field(const char *name, prt_field_tensor *t, prt_dtype dt, const void *v)
{
    *t = (prt_field_tensor){.dtype = dt, .data = v}; /* a scalar: rank 0 */
    return (prt_field){.name = name, .data = t, .type = PRT_FIELD_TENSOR, .count = 1};
}

TEST(range_from_tensor_fields)
{
    static const int32_t is[3] = {10, 4, -3};
    static const float fs[3] = {1.0f, 2.5f, 0.5f}, fz[3] = {1, 2, 0};
    static const int64_t ls[3] = {0, 5, 1};
    prt_field_tensor t[3];
    prt_field f[3];
    ot_tensor y;
    char msg[512];
    int k;
    /* int32, negative delta: 10, 7 (ceil((4 - 10) / -3) = 2) */
    for (k = 0; k < 3; k++) f[k] = range_field(k == 0 ? "input:0" : k == 1 ? "input:1" : "input:2", &t[k],
                                               PRT_DTYPE_I32, &is[k]);
    CHECK_OK(ot_run("Range", "11", f, 3, NULL, 0, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_I32);
    expect_dims(&y, ot_dims(1, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(10, 7), 2, 0, 0, "Range i32"), 0);
    ot_free(&y);
    /* float32: 1, 1.5, 2 (limit exclusive) */
    for (k = 0; k < 3; k++) t[k].dtype = PRT_DTYPE_F32, t[k].data = &fs[k];
    CHECK_OK(ot_run("Range", "11", f, 3, NULL, 0, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(y.t, PRT_DTYPE_F32);
    CHECK_EQ_INT(ot_compare(&y, D(1, 1.5, 2), 3, 0, 0, "Range f32"), 0);
    ot_free(&y);
    /* an empty range: start past limit with a positive delta */
    for (k = 0; k < 3; k++) t[k].dtype = PRT_DTYPE_I64, t[k].data = &ls[k];
    t[0].data = &ls[1];
    t[1].data = &ls[0];
    CHECK_OK(ot_run("Range", "11", f, 3, NULL, 0, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(1, (int64_t)0));
    ot_free(&y);
    /* errors: delta 0, mixed dtypes, a missing field */
    for (k = 0; k < 3; k++) t[k].dtype = PRT_DTYPE_F32, t[k].data = &fz[k];
    CHECK(ot_run("Range", "11", f, 3, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "delta 0");
    t[2].data = &fs[2];
    t[1].dtype = PRT_DTYPE_I32;
    t[1].data = &is[1];
    CHECK(ot_run("Range", "11", f, 3, NULL, 0, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "limit must be a numeric scalar of start's dtype f32, got i32");
    CHECK(ot_run("Range", "11", f, 2, NULL, 0, &y, 1, 1, msg, sizeof msg) != PRT_OK);
}
