/* ONNX index ops (plugins/onnx/index): Gather, GatherElements, GatherND,
 * ScatterElements, ScatterND, OneHot on the examples of the ONNX operator
 * documentation, plus negative and out-of-range indices and bad shapes. */
#include "onnx_test_util.h"
#include "prt_test.h"

#define FI(nm, ...) ot_i64(nm, (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))
#define D(...) ((const double[]){__VA_ARGS__})

static void expect_dims(const ot_tensor *y, prt_dims d)
{
    char a[128], b[128];
    CHECK_MSG(prt_dims_equal(&y->d, &d), "dims %s, expected %s", prt_dims_str(&y->d, a, sizeof a),
              prt_dims_str(&d, b, sizeof b));
}

TEST(gather_on_axis_0_and_1_with_negative_indices)
{
    ot_tensor in[2], y;
    char msg[512];
    prt_field f = FI("axis", 1);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)2), D(1, 1.2, 2.3, 3.4, 4.5, 5.7));
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)2, (int64_t)2), D(0, 1, 1, -1));
    CHECK_OK(ot_run("Gather", "1", NULL, 0, in, 2, &y, 1, 2, msg, sizeof msg));
    expect_dims(&y, ot_dims(3, (int64_t)2, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7), 8, 1e-7, 0, "Gather axis 0"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)3), D(1, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9));
    in[1] = ot_make(PRT_DTYPE_I32, ot_dims(2, (int64_t)1, (int64_t)2), D(0, 2));
    CHECK_OK(ot_run("Gather", "1", &f, 1, in, 2, &y, 1, 2, msg, sizeof msg));
    expect_dims(&y, ot_dims(3, (int64_t)3, (int64_t)1, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1.9, 2.3, 3.9, 4.5, 5.9), 6, 1e-7, 0, "Gather axis 1"), 0);
    ot_free(&y);
    /* 0-d index removes the axis */
    ot_free(&in[1]);
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(0), D(-2));
    CHECK_OK(ot_run("Gather", "1", &f, 1, in, 2, &y, 1, 2, msg, sizeof msg));
    expect_dims(&y, ot_dims(1, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, D(1.2, 3.4, 5.7), 3, 1e-7, 0, "Gather 0-d index"), 0);
    ot_free(&y);
    ot_free(&in[1]);
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)1), D(3));
    CHECK(ot_run("Gather", "1", &f, 1, in, 2, &y, 1, 2, msg, sizeof msg) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "index 3 at position 0 is outside [-3, 3)");
    ot_free(&in[1]);
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)1), D(0));
    CHECK(ot_run("Gather", "1", &f, 1, in, 2, &y, 1, 2, msg, sizeof msg) == PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "i32 or i64");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(gather_elements_and_gather_nd)
{
    ot_tensor in[2], y;
    char msg[512];
    prt_field f = FI("axis", 1);
    in[0] = ot_make(PRT_DTYPE_I32, ot_dims(2, (int64_t)2, (int64_t)2), D(1, 2, 3, 4));
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)2, (int64_t)2), D(0, 0, 1, 0));
    CHECK_OK(ot_run("GatherElements", "11", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1, 4, 3), 4, 0, 0, "GatherElements"), 0);
    ot_free(&y);
    /* GatherND, batch_dims 0: full indices then slices */
    in[0] = (ot_free(&in[0]), ot_make(PRT_DTYPE_I32, ot_dims(2, (int64_t)2, (int64_t)2), D(0, 1, 2, 3)));
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)2, (int64_t)2), D(0, 0, 1, 1)));
    CHECK_OK(ot_run("GatherND", "11", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(1, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(0, 3), 2, 0, 0, "GatherND elements"), 0);
    ot_free(&y);
    in[1] = (ot_free(&in[1]), ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)2, (int64_t)1), D(1, 0)));
    CHECK_OK(ot_run("GatherND", "11", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(2, 3, 0, 1), 4, 0, 0, "GatherND slices"), 0);
    ot_free(&y);
    /* batch_dims 1 */
    in[0] = (ot_free(&in[0]), ot_make(PRT_DTYPE_I32, ot_dims(3, (int64_t)2, (int64_t)2, (int64_t)2),
                                      D(0, 1, 2, 3, 4, 5, 6, 7)));
    f = FI("batch_dims", 1);
    CHECK_OK(ot_run("GatherND", "12", &f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)2));
    CHECK_EQ_INT(ot_compare(&y, D(2, 3, 4, 5), 4, 0, 0, "GatherND batch_dims 1"), 0);
    ot_free(&y);
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(scatter_elements_and_scatter_nd_with_reductions)
{
    ot_tensor in[3], y;
    char msg[512];
    prt_field f[2] = {FI("axis", 1), ot_str("reduction", "add")};
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)1, (int64_t)5), D(1, 2, 3, 4, 5));
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)1, (int64_t)2), D(1, 3));
    in[2] = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)1, (int64_t)2), D(1.5, 2.5));
    CHECK_OK(ot_run("ScatterElements", "11", f, 1, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 1.5, 3, 2.5, 5), 5, 0, 0, "ScatterElements"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("ScatterElements", "16", f, 2, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 3.5, 3, 6.5, 5), 5, 0, 0, "ScatterElements add"), 0);
    ot_free(&y);
    f[1] = ot_str("reduction", "mean");
    CHECK(ot_run("ScatterElements", "16", f, 2, in, 3, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "reduction");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
    in[0] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)8), D(1, 2, 3, 4, 5, 6, 7, 8));
    in[1] = ot_make(PRT_DTYPE_I64, ot_dims(2, (int64_t)4, (int64_t)1), D(4, 3, 1, 7));
    in[2] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)4), D(9, 10, 11, 12));
    CHECK_OK(ot_run("ScatterND", "11", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 11, 3, 10, 9, 6, 7, 12), 8, 0, 0, "ScatterND"), 0);
    ot_free(&y);
    f[0] = ot_str("reduction", "mul");
    CHECK_OK(ot_run("ScatterND", "16", f, 1, in, 3, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(1, 22, 3, 40, 45, 6, 7, 96), 8, 0, 0, "ScatterND mul"), 0);
    ot_free(&y);
    in[2] = (ot_free(&in[2]), ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)3), D(9, 10, 11)));
    CHECK(ot_run("ScatterND", "11", NULL, 0, in, 3, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "updates hold 3 elements");
    ot_free(&in[0]);
    ot_free(&in[1]);
    ot_free(&in[2]);
}

TEST(onehot_negative_and_out_of_range_indices)
{
    ot_tensor in[2], y;
    char msg[512];
    prt_field f[2] = {FI("input:1", 3), FI("axis", 0)};
    in[0] = ot_make(PRT_DTYPE_I64, ot_dims(1, (int64_t)4), D(0, 2, -1, 5));
    in[1] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)2), D(-1, 7));
    CHECK_OK(ot_run("OneHot", "9", f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)4, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, D(7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1), 12, 0, 0, "OneHot"), 0);
    ot_free(&y);
    CHECK_OK(ot_run("OneHot", "9", f, 2, in, 2, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)3, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y, D(7, -1, -1, -1, -1, -1, -1, -1, -1, 7, 7, -1), 12, 0, 0, "OneHot axis 0"), 0);
    ot_free(&y);
    /* float indices are truncated */
    ot_free(&in[0]);
    in[0] = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)4), D(0.7, 2, -1, 5));
    CHECK_OK(ot_run("OneHot", "9", f, 1, in, 2, &y, 1, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y, D(7, -1, -1, -1, -1, 7, -1, -1, 7, -1, -1, -1), 12, 0, 0, "OneHot f32 indices"), 0);
    ot_free(&y);
    CHECK(ot_run("OneHot", "9", NULL, 0, in, 2, &y, 1, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "depth");
    ot_free(&in[0]);
    ot_free(&in[1]);
}

TEST(topk_largest_smallest_ties_and_k_checks)
{
    ot_tensor x = ot_make(PRT_DTYPE_F32, ot_dims(2, (int64_t)3, (int64_t)4), D(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)), y[2];
    char msg[512];
    prt_field f[3] = {FI("input:1", 3), FI("largest", 0), FI("axis", 0)};
    CHECK_OK(ot_run("TopK", "10", f, 1, &x, 1, y, 2, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(2, (int64_t)3, (int64_t)3));
    CHECK_EQ_INT(y[1].t, PRT_DTYPE_I64);
    CHECK_EQ_INT(ot_compare(&y[0], D(3, 2, 1, 7, 6, 5, 11, 10, 9), 9, 0, 0, "TopK values"), 0);
    CHECK_EQ_INT(ot_compare(&y[1], D(3, 2, 1, 3, 2, 1, 3, 2, 1), 9, 0, 0, "TopK indices"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    f[0] = FI("input:1", 2);
    CHECK_OK(ot_run("TopK", "11", f, 3, &x, 1, y, 2, 1, msg, sizeof msg));
    expect_dims(&y[0], ot_dims(2, (int64_t)2, (int64_t)4));
    CHECK_EQ_INT(ot_compare(&y[0], D(0, 1, 2, 3, 4, 5, 6, 7), 8, 0, 0, "TopK smallest axis 0"), 0);
    CHECK_EQ_INT(ot_compare(&y[1], D(0, 0, 0, 0, 1, 1, 1, 1), 8, 0, 0, "TopK smallest indices"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    ot_free(&x);
    /* ties keep the lower index first; NaN counts as the largest */
    x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)5), D(1, 3, NAN, 3, 2));
    f[0] = FI("k", 3);
    CHECK_OK(ot_run("TopK", "1", f, 1, &x, 1, y, 2, 1, msg, sizeof msg));
    CHECK_EQ_INT(ot_compare(&y[1], D(2, 1, 3), 3, 0, 0, "TopK ties"), 0);
    ot_free(&y[0]);
    ot_free(&y[1]);
    f[0] = FI("k", 6);
    CHECK(ot_run("TopK", "1", f, 1, &x, 1, y, 2, 1, msg, sizeof msg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "k = 6 exceeds");
    CHECK(ot_run("TopK", "10", NULL, 0, &x, 1, y, 2, 1, msg, sizeof msg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "input:1");
    ot_free(&x);
}

TEST(nonzero_reports_its_data_dependent_extent)
{
    ot_tensor x = ot_make(PRT_DTYPE_BOOL, ot_dims(2, (int64_t)2, (int64_t)2), D(1, 0, 1, 1)), y;
    char msg[512];
    CHECK_OK(ot_run("NonZero", "9", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)2, (int64_t)3));
    CHECK_EQ_INT(ot_compare(&y, D(0, 1, 1, 0, 0, 1), 6, 0, 0, "NonZero"), 0);
    ot_free(&y);
    ot_free(&x);
    x = ot_make(PRT_DTYPE_F32, ot_dims(1, (int64_t)3), D(0, 0, 0));
    CHECK_OK(ot_run("NonZero", "9", NULL, 0, &x, 1, &y, 1, 1, msg, sizeof msg));
    expect_dims(&y, ot_dims(2, (int64_t)1, (int64_t)0));
    ot_free(&y);
    ot_free(&x);
}
