/*
 * test_nms.c - BatchedNMS(Dynamic)_TRT, EfficientNMS_TRT and ONNX
 * NonMaxSuppression: ONNX backend node tests, TensorRT's EfficientNMS golden
 * IO, hand-checked edge cases, fast path vs reference, CUDA vs CPU, blob
 * corruption, validation messages.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nms_harness.h"
#include "prt_test.h"

/* ---- field helpers ---- */

typedef struct fl {
    prt_field f[16];
    int32_t i[16];
    float x[16];
    int64_t l[16];
    int n;
} fl;

static void fl_i(fl *s, const char *name, int32_t v)
{
    s->i[s->n] = v;
    s->f[s->n] = (prt_field){name, &s->i[s->n], PRT_FIELD_INT32, 0, 1};
    s->n++;
}
static void fl_f(fl *s, const char *name, float v)
{
    s->x[s->n] = v;
    s->f[s->n] = (prt_field){name, &s->x[s->n], PRT_FIELD_FLOAT32, 0, 1};
    s->n++;
}
static void fl_l(fl *s, const char *name, int64_t v)
{
    s->l[s->n] = v;
    s->f[s->n] = (prt_field){name, &s->l[s->n], PRT_FIELD_INT64, 0, 1};
    s->n++;
}
static prt_fields fl_get(fl *s) { return (prt_fields){s->f, s->n, 0}; }

typedef struct bcfg {
    int share, bg, ncls, topk, keep, norm, clip, caffe;
    float sthr, ithr;
} bcfg;

static prt_fields bnms_fields(fl *s, const bcfg *c)
{
    memset(s, 0, sizeof *s);
    fl_i(s, "shareLocation", c->share);
    fl_i(s, "backgroundLabelId", c->bg);
    fl_i(s, "numClasses", c->ncls);
    fl_i(s, "topK", c->topk);
    fl_i(s, "keepTopK", c->keep);
    fl_f(s, "scoreThreshold", c->sthr);
    fl_f(s, "iouThreshold", c->ithr);
    fl_i(s, "isNormalized", c->norm);
    fl_i(s, "clipBoxes", c->clip);
    fl_i(s, "caffeSemantics", c->caffe);
    return fl_get(s);
}

typedef struct ecfg {
    float sthr, ithr;
    int maxo, bg, act, agn, coding;
} ecfg;

static prt_fields enms_fields(fl *s, const ecfg *c)
{
    memset(s, 0, sizeof *s);
    fl_f(s, "score_threshold", c->sthr);
    fl_f(s, "iou_threshold", c->ithr);
    fl_i(s, "max_output_boxes", c->maxo);
    fl_i(s, "background_class", c->bg);
    fl_i(s, "score_activation", c->act);
    fl_i(s, "class_agnostic", c->agn);
    fl_i(s, "box_coding", c->coding);
    return fl_get(s);
}

static float f32(const th_tensor *t, int64_t i)
{
    return t->dtype == PRT_DTYPE_F16 ? prt_f16_to_f32(((const uint16_t *)t->data)[i]) : ((const float *)t->data)[i];
}
static int32_t i32(const th_tensor *t, int64_t i) { return ((const int32_t *)t->data)[i]; }
static int64_t i64(const th_tensor *t, int64_t i) { return ((const int64_t *)t->data)[i]; }

static void set_f(th_tensor *t, int64_t i, float v)
{
    if (t->dtype == PRT_DTYPE_F16)
        ((uint16_t *)t->data)[i] = prt_f32_to_f16(v);
    else
        ((float *)t->data)[i] = v;
}

static uint64_t rng_state = 88172645463325252ull;
static void rng_seed(uint64_t s) { rng_state = s * 2654435761ull + 1; }
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* ---- ONNX backend node tests ---- */

static const char *const onnx_tests[] = {
    "center_point_box_format", "flipped_coordinates", "identical_boxes", "iou_threshold_boundary",
    "limit_output_size", "single_box", "suppress_by_IOU", "suppress_by_IOU_and_scores", "two_batches",
    "two_classes"};

/* expect_path: how the row count must come back (th_run.extent_path). */
static void run_onnx_node_tests(prt_device dev, int expect_path)
{
    size_t k;
    for (k = 0; k < sizeof onnx_tests / sizeof onnx_tests[0]; k++) {
        char path[1024];
        th_file f;
        th_run r;
        fl s;
        prt_fields fc;
        int64_t i, nexp;
        const th_tensor *exp;
        snprintf(path, sizeof path, "%s/onnx_nms/test_nonmaxsuppression_%s.txt", th_data_dir(), onnx_tests[k]);
        CHECK_MSG(th_file_read(&f, path) == 0, "cannot read %s", path);
        memset(&s, 0, sizeof s);
        fl_l(&s, "center_point_box", (int64_t)f.attr_val[0]);
        fc = fl_get(&s);
        exp = &f.tensor[f.nb_tensor - 1];
        CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, f.tensor, f.nb_tensor - 1, dev, 2, &r));
        CHECK_MSG(r.extent_path == expect_path, "%s: extent reported through path %d, expected %d (%s)",
                  onnx_tests[k], r.extent_path, expect_path, r.error);
        nexp = exp->dims.d[0];
        CHECK_MSG(r.out[0].dims.d[0] == nexp && r.out[0].dims.nb == 2 && r.out[0].dims.d[1] == 3,
                  "%s: %lld rows, expected %lld", onnx_tests[k], (long long)r.out[0].dims.d[0], (long long)nexp);
        for (i = 0; i < nexp * 3; i++)
            CHECK_MSG(i64(&r.out[0], i) == i64(exp, i), "%s: element %lld is %lld, expected %lld", onnx_tests[k],
                      (long long)i, (long long)i64(&r.out[0], i), (long long)i64(exp, i));
        th_run_free(&r);
        th_file_free(&f);
    }
}

TEST(onnx_node_tests_cpu) { run_onnx_node_tests(PRT_DEVICE_CPU, 1); }

/* The host offers set_output_extent_device: the count stays on the device
 * (in the workspace) and the harness reads it after its own stream sync. */
TEST(onnx_node_tests_cuda)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    th_set_extent_mode(TH_EXTENT_DEVICE);
    run_onnx_node_tests(PRT_DEVICE_CUDA, 2);
}

/* A host without the member (NULL, or struct_size ending before it): the
 * plugin falls back to copying the count back and set_output_dims. */
TEST(onnx_node_tests_cuda_sync_fallback)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    th_set_extent_mode(TH_EXTENT_NULL);
    run_onnx_node_tests(PRT_DEVICE_CUDA, 1);
    th_set_extent_mode(TH_EXTENT_OLD_HOST);
    run_onnx_node_tests(PRT_DEVICE_CUDA, 1);
    th_set_extent_mode(TH_EXTENT_DEVICE);
}

TEST(onnx_output_upper_bound_is_data_dependent)
{
    th_builder *b = th_builder_new();
    prt_expr_builder *eb = th_builder_eb(b);
    prt_field_plugin *p = NULL;
    prt_dims_expr in[2], out[1];
    char e[256];
    prt_msg err = {e, sizeof e};
    int dd = 0;
    fl s;
    prt_fields fc;
    memset(&s, 0, sizeof s);
    fc = fl_get(&s);
    CHECK_OK(prt__nms_onnx_creator.create_field(&prt__nms_onnx_creator, &fc, PRT_PHASE_BUILD, &p, &err));
    in[0].nb = 3; in[0].d[0] = eb->constant(eb, 2); in[0].d[1] = eb->constant(eb, 7); in[0].d[2] = eb->constant(eb, 4);
    in[1].nb = 3; in[1].d[0] = eb->constant(eb, 2); in[1].d[1] = eb->constant(eb, 5); in[1].d[2] = eb->constant(eb, 7);
    CHECK_OK(p->ops->build->get_output_shapes(p, in, 2, out, 1, eb, &err));
    CHECK_EQ_INT(out[0].nb, 2);
    CHECK_EQ_INT(th_expr_value(out[0].d[0], &dd), 2 * 5 * 7);
    CHECK(dd == 1);
    CHECK_EQ_INT(th_expr_value(out[0].d[1], &dd), 3);
    CHECK(dd == 0);
    p->ops->destroy(p);
    th_builder_free(b);
}

/* ---- TensorRT EfficientNMS golden IO ---- */

static void run_golden(prt_device dev)
{
    char path[1024];
    th_file f;
    int cs;
    snprintf(path, sizeof path, "%s/tensorrt/efficientnms_golden.txt", th_data_dir());
    CHECK_MSG(th_file_read(&f, path) == 0, "cannot read %s", path);
    CHECK_EQ_INT(f.nb_case, 2);
    for (cs = 0; cs < f.nb_case; cs++) {
        fl s;
        prt_fields fc;
        th_run r;
        int a0 = f.case_start[cs], t0 = f.case_tensor_start[cs], i, k;
        const th_tensor *num = &f.tensor[t0 + 2], *boxes = &f.tensor[t0 + 3];
        memset(&s, 0, sizeof s);
        for (i = a0; i < a0 + 7; i++) {
            if (strstr(f.attr_name[i], "threshold"))
                fl_f(&s, f.attr_name[i], (float)f.attr_val[i]);
            else
                fl_i(&s, f.attr_name[i], (int32_t)f.attr_val[i]);
        }
        fc = fl_get(&s);
        CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, &f.tensor[t0], 2, dev, 1, &r));
        CHECK_MSG(i32(&r.out[0], 0) == i64(num, 0), "%s: num_detections %d, expected %lld", f.case_name[cs],
                  i32(&r.out[0], 0), (long long)i64(num, 0));
        for (k = 0; k < 24; k++)
            CHECK_MSG(f32(&r.out[1], k) == f32(boxes, k), "%s: box value %d is %g, expected %g", f.case_name[cs], k,
                      f32(&r.out[1], k), f32(boxes, k));
        if (cs == 0) {
            /* (class, score) from the published table */
            static const int cls[6] = {1, 0, 0, 1, 0, 1};
            static const float sc[6] = {0.93f, 0.77f, 0.74f, 0.64f, 0.32f, 0.22f};
            for (k = 0; k < 6; k++) {
                CHECK_EQ_INT(i32(&r.out[3], k), cls[k]);
                CHECK(f32(&r.out[2], k) == sc[k]);
            }
        } else {
            for (k = 3; k < 6; k++) {
                CHECK_EQ_INT(i32(&r.out[3], k), 0); /* EfficientNMS pads classes with 0 */
                CHECK(f32(&r.out[2], k) == 0.0f);
            }
        }
        th_run_free(&r);
    }
    th_file_free(&f);
}

TEST(efficient_golden_cpu) { run_golden(PRT_DEVICE_CPU); }

TEST(efficient_golden_cuda)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    run_golden(PRT_DEVICE_CUDA);
}

/* ---- BatchedNMS edge cases ---- */

/* inputs: boxes [1, N, L, 4], scores [1, N, C] */
static void mk_batched_in(th_tensor *in, int64_t N, int64_t L, int64_t C, prt_dtype dt)
{
    int64_t db[4] = {1, N, L, 4}, ds[3] = {1, N, C};
    th_tensor_alloc(&in[0], "boxes", dt, 4, db);
    th_tensor_alloc(&in[1], "scores", dt, 3, ds);
}

static void set_box(th_tensor *t, int64_t i, float a, float b, float c, float d)
{
    set_f(t, i * 4 + 0, a);
    set_f(t, i * 4 + 1, b);
    set_f(t, i * 4 + 2, c);
    set_f(t, i * 4 + 3, d);
}

static const bcfg bdef = {1, -1, 1, 10, 5, 1, 1, 1, 0.1f, 0.5f};

static void run_b(const bcfg *c, th_tensor *in, th_run *r)
{
    fl s;
    prt_fields fc = bnms_fields(&s, c);
    CHECK_OK(th_run_blob(&prt__nms_batched_dynamic_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, r));
}

static void check_padding(const th_run *r, int64_t from, int64_t keep)
{
    int64_t k;
    for (k = from; k < keep; k++) {
        CHECK(f32(&r->out[2], k) == 0.0f);
        CHECK(f32(&r->out[3], k) == -1.0f);
        CHECK(f32(&r->out[1], 4 * k) == 0.0f && f32(&r->out[1], 4 * k + 3) == 0.0f);
    }
}

TEST(batched_no_box_above_threshold)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    int i;
    mk_batched_in(in, 4, 1, 1, PRT_DTYPE_F32);
    for (i = 0; i < 4; i++) {
        set_box(&in[0], i, 0, 0, 1, 1);
        set_f(&in[1], i, 0.1f); /* == threshold: strict filter drops it */
    }
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 0);
    check_padding(&r, 0, 5);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_identical_boxes_keep_lowest_index)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    int i;
    mk_batched_in(in, 6, 1, 1, PRT_DTYPE_F32);
    for (i = 0; i < 6; i++) {
        set_box(&in[0], i, 0.1f, 0.1f, 0.5f, 0.5f);
        set_f(&in[1], i, 0.9f);
    }
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 1);
    th_run_free(&r);
    set_box(&in[0], 0, 0.1f, 0.1f, 0.5f, 0.51f); /* marks index 0 (still IoU > 0.9) */
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 1);
    CHECK(f32(&r.out[1], 3) == 0.51f); /* the lowest index wins the tie */
    check_padding(&r, 1, 5);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_flipped_corners)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    mk_batched_in(in, 3, 1, 1, PRT_DTYPE_F32);
    set_box(&in[0], 0, 0.5f, 0.5f, 0.1f, 0.1f);  /* flipped */
    set_box(&in[0], 1, 0.1f, 0.12f, 0.5f, 0.5f); /* overlaps 0 heavily */
    set_box(&in[0], 2, 0.9f, 0.9f, 0.6f, 0.6f);  /* flipped, apart */
    set_f(&in[1], 0, 0.9f);
    set_f(&in[1], 1, 0.8f);
    set_f(&in[1], 2, 0.7f);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    /* emitted as given, not reordered */
    CHECK(f32(&r.out[1], 0) == 0.5f && f32(&r.out[1], 2) == 0.1f);
    CHECK(f32(&r.out[1], 4) == 0.9f && f32(&r.out[1], 6) == 0.6f);
    CHECK(f32(&r.out[2], 1) == 0.7f);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_one_box_and_keeptopk_exact)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    int i;
    mk_batched_in(in, 1, 1, 1, PRT_DTYPE_F32);
    set_box(&in[0], 0, 0.1f, 0.2f, 0.3f, 0.4f);
    set_f(&in[1], 0, 0.5f);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 1);
    CHECK(f32(&r.out[1], 1) == 0.2f && f32(&r.out[2], 0) == 0.5f && f32(&r.out[3], 0) == 0.0f);
    check_padding(&r, 1, 5);
    th_run_free(&r);
    th_tensor_free(&in[0]);
    th_tensor_free(&in[1]);

    /* 5 disjoint boxes, keepTopK 5: exactly full, no padding row */
    mk_batched_in(in, 7, 1, 1, PRT_DTYPE_F32);
    for (i = 0; i < 7; i++) {
        set_box(&in[0], i, 0.1f * i, 0, 0.1f * i + 0.05f, 0.05f);
        set_f(&in[1], i, i < 5 ? 0.9f - 0.1f * i : 0.05f);
    }
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 5);
    for (i = 0; i < 5; i++) CHECK(f32(&r.out[2], i) == (float)(0.9f - 0.1f * i));
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_background_and_merge_order)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    c.ncls = 3;
    c.bg = 0;
    mk_batched_in(in, 2, 1, 3, PRT_DTYPE_F32);
    set_box(&in[0], 0, 0, 0, 0.2f, 0.2f);
    set_box(&in[0], 1, 0.5f, 0.5f, 0.7f, 0.7f);
    /* scores [n][c]; class 0 is background (highest scores, ignored) */
    set_f(&in[1], 0, 0.99f); set_f(&in[1], 1, 0.6f); set_f(&in[1], 2, 0.6f);
    set_f(&in[1], 3, 0.98f); set_f(&in[1], 4, 0.7f); set_f(&in[1], 5, 0.2f);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 4);
    /* 0.7 (n1, c1), then the tie 0.6: class 1 before class 2, then 0.2 */
    CHECK(f32(&r.out[2], 0) == 0.7f && f32(&r.out[3], 0) == 1.0f);
    CHECK(f32(&r.out[2], 1) == 0.6f && f32(&r.out[3], 1) == 1.0f);
    CHECK(f32(&r.out[2], 2) == 0.6f && f32(&r.out[3], 2) == 2.0f);
    CHECK(f32(&r.out[2], 3) == 0.2f && f32(&r.out[3], 3) == 2.0f);
    check_padding(&r, 4, 5);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_share_location_false)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    c.ncls = 2;
    c.share = 0;
    mk_batched_in(in, 2, 2, 2, PRT_DTYPE_F32);
    /* boxes [n][c][4]: class 0 boxes overlap, class 1 boxes apart */
    set_box(&in[0], 0, 0, 0, 0.5f, 0.5f);       /* n0 c0 */
    set_box(&in[0], 1, 0, 0, 0.1f, 0.1f);       /* n0 c1 */
    set_box(&in[0], 2, 0, 0, 0.5f, 0.52f);      /* n1 c0 */
    set_box(&in[0], 3, 0.8f, 0.8f, 0.9f, 0.9f); /* n1 c1 */
    set_f(&in[1], 0, 0.9f); set_f(&in[1], 1, 0.8f);
    set_f(&in[1], 2, 0.7f); set_f(&in[1], 3, 0.6f);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 3);
    CHECK(f32(&r.out[2], 0) == 0.9f && f32(&r.out[3], 0) == 0.0f);
    CHECK(f32(&r.out[2], 1) == 0.8f && f32(&r.out[1], 6) == 0.1f); /* class 1 box of n0 */
    CHECK(f32(&r.out[2], 2) == 0.6f && f32(&r.out[1], 8) == 0.8f);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

/* Two pixel boxes [0,0,10,10] and [5,0,15,10]: IoU 1/3 without +1, 0.375
 * with Caffe's +1. Threshold 0.35 separates the two rules. */
static int64_t pixel_case(int norm, int caffe, int clip, float *first_x2)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    int64_t n;
    c.norm = norm;
    c.caffe = caffe;
    c.clip = clip;
    c.ithr = 0.35f;
    mk_batched_in(in, 2, 1, 1, PRT_DTYPE_F32);
    set_box(&in[0], 0, 0, 0, 10, 10);
    set_box(&in[0], 1, 5, 0, 15, 10);
    set_f(&in[1], 0, 0.9f);
    set_f(&in[1], 1, 0.8f);
    run_b(&c, in, &r);
    n = i32(&r.out[0], 0);
    *first_x2 = f32(&r.out[1], 2);
    th_run_free(&r);
    th_tensors_free(in, 2);
    return n;
}

TEST(batched_pixel_and_normalized_rules)
{
    float x2;
    CHECK_EQ_INT(pixel_case(0, 1, 1, &x2), 1); /* Caffe +1: 0.375 > 0.35 */
    CHECK(x2 == 10.0f);                        /* pixel boxes are not clipped */
    CHECK_EQ_INT(pixel_case(0, 0, 1, &x2), 2); /* no +1 anywhere: 1/3 */
    CHECK(x2 == 10.0f);
    CHECK_EQ_INT(pixel_case(1, 1, 0, &x2), 2); /* normalized: no +1 */
    CHECK(x2 == 10.0f);
    CHECK_EQ_INT(pixel_case(1, 1, 1, &x2), 2); /* normalized + clip: saturated */
    CHECK(x2 == 1.0f);
}

TEST(batched_negative_scores_before_padding)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    c.sthr = -1.0f;
    mk_batched_in(in, 2, 1, 1, PRT_DTYPE_F32);
    set_box(&in[0], 0, 0, 0, 0.1f, 0.1f);
    set_box(&in[0], 1, 0.5f, 0.5f, 0.6f, 0.6f);
    set_f(&in[1], 0, -0.5f);
    set_f(&in[1], 1, -0.25f);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    CHECK(f32(&r.out[2], 0) == -0.25f && f32(&r.out[2], 1) == -0.5f);
    check_padding(&r, 2, 5);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(batched_fp16_matches_fp32)
{
    th_tensor a[2], h[2];
    th_run ra, rh;
    bcfg c = bdef;
    int64_t i, N = 300;
    c.ncls = 3;
    c.keep = 40;
    c.topk = 100;
    rng_seed(7);
    mk_batched_in(a, N, 1, 3, PRT_DTYPE_F32);
    mk_batched_in(h, N, 1, 3, PRT_DTYPE_F16);
    for (i = 0; i < N * 4; i++) {
        float v = prt_f16_to_f32(prt_f32_to_f16((float)urand()));
        set_f(&a[0], i, v);
        set_f(&h[0], i, v);
    }
    for (i = 0; i < N * 3; i++) {
        float v = prt_f16_to_f32(prt_f32_to_f16((float)urand()));
        set_f(&a[1], i, v);
        set_f(&h[1], i, v);
    }
    run_b(&c, a, &ra);
    run_b(&c, h, &rh);
    CHECK(rh.out[1].dtype == PRT_DTYPE_F16);
    CHECK_EQ_INT(i32(&ra.out[0], 0), i32(&rh.out[0], 0));
    for (i = 0; i < 40; i++) {
        CHECK(f32(&ra.out[2], i) == f32(&rh.out[2], i));
        CHECK(f32(&ra.out[3], i) == f32(&rh.out[3], i));
        CHECK(f32(&ra.out[1], 4 * i + 1) == f32(&rh.out[1], 4 * i + 1));
    }
    /* scores near 1 stay exact in fp16 (no score-bits capping) */
    th_run_free(&ra);
    th_run_free(&rh);
    th_tensors_free(a, 2);
    th_tensors_free(h, 2);
}

/* ---- EfficientNMS edge cases ---- */

TEST(efficient_center_size_and_threshold_ge)
{
    th_tensor in[2];
    th_run r;
    fl s;
    prt_fields fc;
    ecfg c = {0.5f, 0.5f, 4, -1, 0, 0, 1};
    int64_t db[3] = {1, 3, 4}, ds[3] = {1, 3, 1};
    th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 3, db);
    th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F32, 3, ds);
    set_box(&in[0], 0, 5, 5, 4, 4);  /* corners 3..7 */
    set_box(&in[0], 1, 5, 5, 4, 2);  /* 3..7 x 4..6: IoU 0.5 with box 0 -> suppressed (>=) */
    set_box(&in[0], 2, 20, 20, 2, 2);
    set_f(&in[1], 0, 0.9f);
    set_f(&in[1], 1, 0.8f);
    set_f(&in[1], 2, 0.5f); /* == threshold: kept (>=) */
    fc = enms_fields(&s, &c);
    CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r));
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    CHECK(f32(&r.out[1], 0) == 3 && f32(&r.out[1], 1) == 3 && f32(&r.out[1], 2) == 7 && f32(&r.out[1], 3) == 7);
    CHECK(f32(&r.out[1], 4) == 19 && f32(&r.out[1], 7) == 21);
    CHECK(f32(&r.out[2], 1) == 0.5f);
    CHECK(i32(&r.out[3], 2) == 0 && f32(&r.out[2], 2) == 0.0f);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

TEST(efficient_fresh_defaults_per_create)
{
    fl s;
    prt_fields fc;
    prt_blob_plugin *a = NULL, *b = NULL;
    char e[256];
    prt_msg err = {e, sizeof e};
    uint8_t ba[64], bb[64];
    memset(&s, 0, sizeof s);
    fl_f(&s, "score_threshold", 0.1f);
    fl_f(&s, "iou_threshold", 0.5f);
    fl_i(&s, "max_output_boxes", 10);
    fl_i(&s, "class_agnostic", 1);
    fc = fl_get(&s);
    CHECK_OK(prt__nms_efficient_creator.create_blob(&prt__nms_efficient_creator, &fc, &a, &err));
    fc.nb = 3; /* class_agnostic absent now */
    CHECK_OK(prt__nms_efficient_creator.create_blob(&prt__nms_efficient_creator, &fc, &b, &err));
    CHECK_EQ_INT(a->ops->get_serialization_size(a), 44);
    CHECK_OK(a->ops->serialize(a, ba, 44));
    CHECK_OK(b->ops->serialize(b, bb, 44));
    CHECK_EQ_INT(ba[28], 1); /* class_agnostic of the first */
    CHECK_EQ_INT(bb[28], 0); /* the default, not inherited */
    a->ops->destroy(a);
    b->ops->destroy(b);
}

/* ---- randomized: fast path vs reference, CUDA vs CPU ---- */

/* Clustered boxes like a detector's output. */
static void random_boxes(float *b, int64_t n, int64_t stride, double scale)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        double cx = (urand() * 0.8 + 0.1) * scale, cy = (urand() * 0.8 + 0.1) * scale;
        double w = (0.02 + urand() * 0.2) * scale, h = (0.02 + urand() * 0.2) * scale;
        if (i % 3) { /* jitter a recent box */
            int64_t j = i - 1 - (int64_t)(urand() * (i % 7));
            if (j < 0) j = 0;
            cx = (b[j * stride] + b[j * stride + 2]) * 0.5 + (urand() - 0.5) * 0.02 * scale;
            cy = (b[j * stride + 1] + b[j * stride + 3]) * 0.5 + (urand() - 0.5) * 0.02 * scale;
        }
        b[i * stride + 0] = (float)(cx - w / 2);
        b[i * stride + 1] = (float)(cy - h / 2);
        b[i * stride + 2] = (float)(cx + w / 2);
        b[i * stride + 3] = (float)(cy + h / 2);
    }
}

typedef struct rcase {
    int kind;
    int64_t B, N, C, L;
    int topk, keep, bg, norm, caffe, agn, coding, act;
    float sthr, ithr;
    int64_t maxpc;
    int center;
} rcase;

/* ONNX NonMaxSuppression's five inputs: boxes [B, N, 4], scores [B, C, N]
 * (values left to the caller), max_output_boxes_per_class, IoU and score
 * thresholds. */
static void onnx_inputs(th_tensor *in, int64_t B, int64_t C, int64_t N, int64_t maxpc, float ithr, float sthr)
{
    int64_t db[3] = {B, N, 4}, ds[3] = {B, C, N}, one[1] = {1};
    th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 3, db);
    th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F32, 3, ds);
    th_tensor_alloc(&in[2], "max", PRT_DTYPE_I64, 1, one);
    th_tensor_alloc(&in[3], "iou", PRT_DTYPE_F32, 1, one);
    th_tensor_alloc(&in[4], "score", PRT_DTYPE_F32, 1, one);
    ((int64_t *)in[2].data)[0] = maxpc;
    ((float *)in[3].data)[0] = ithr;
    ((float *)in[4].data)[0] = sthr;
}

static void make_inputs(const rcase *rc, th_tensor *in, int *nb_in)
{
    int64_t i;
    if (rc->kind == PRT_NMS_ONNX) {
        onnx_inputs(in, rc->B, rc->C, rc->N, rc->maxpc, rc->ithr, rc->sthr);
        *nb_in = 5;
    } else {
        int64_t db[4] = {rc->B, rc->N, rc->L, 4}, ds[3] = {rc->B, rc->N, rc->C};
        th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 4, db);
        th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F32, 3, ds);
        *nb_in = 2;
    }
    random_boxes((float *)in[0].data, rc->B * rc->N * (rc->kind == PRT_NMS_ONNX ? 1 : rc->L), 4,
                 rc->norm ? 1.0 : 600.0);
    if (rc->center) /* reinterpret as centre-size */
        for (i = 0; i < rc->B * rc->N * (rc->kind == PRT_NMS_ONNX ? 1 : rc->L); i++) {
            float *b = (float *)in[0].data + 4 * i;
            float w = b[2] - b[0], h = b[3] - b[1];
            b[0] += w / 2; b[1] += h / 2; b[2] = w; b[3] = h;
        }
    for (i = 0; i < th_numel(&in[1]); i++) {
        double u = urand();
        /* quantized scores: many exact ties */
        ((float *)in[1].data)[i] = (float)(u < 0.7 ? u * 0.1 : (double)(int)(u * 64) / 64.0);
    }
}

static void make_params(const rcase *rc, prt__nms_params *q)
{
    memset(q, 0, sizeof *q);
    q->kind = rc->kind;
    q->B = rc->B; q->N = rc->N; q->C = rc->C;
    q->box_classes = rc->kind == PRT_NMS_ONNX ? 1 : (int32_t)rc->L;
    q->background = rc->kind == PRT_NMS_ONNX ? -1 : rc->bg;
    q->has_score_thr = 1;
    q->score_thr = rc->sthr;
    q->iou_thr = rc->ithr;
    if (rc->kind == PRT_NMS_BATCHED) {
        q->box_mode = PRT_NMS_BOX_CORNERS;
        q->size_off = (!rc->norm && rc->caffe) ? 1.0f : 0.0f;
        q->clip = rc->norm;
        q->pre_cap = rc->topk; q->keep_cap = rc->keep; q->out_cap = rc->keep;
    } else if (rc->kind == PRT_NMS_EFFICIENT) {
        q->box_mode = rc->coding ? PRT_NMS_BOX_CENTER : PRT_NMS_BOX_CORNERS;
        q->score_ge = q->iou_ge = 1;
        q->agnostic = rc->agn;
        q->pre_cap = PRT_NMS_EFFICIENT_MAX_CANDIDATES; q->keep_cap = rc->keep; q->out_cap = rc->keep;
    } else {
        q->box_mode = rc->center ? PRT_NMS_BOX_CENTER : PRT_NMS_BOX_CORNERS;
        q->pre_cap = rc->N; q->keep_cap = rc->N;
    }
}

static void alloc_outputs(const rcase *rc, th_tensor *o)
{
    int64_t d1[1] = {rc->B}, d3[3] = {rc->B, rc->keep, 4}, d2[2] = {rc->B, rc->keep}, ds[2] = {rc->B * rc->C * rc->N, 3};
    if (rc->kind == PRT_NMS_ONNX) {
        th_tensor_alloc(&o[0], "sel", PRT_DTYPE_I64, 2, ds);
        return;
    }
    th_tensor_alloc(&o[0], "num", PRT_DTYPE_I32, 1, d1);
    th_tensor_alloc(&o[1], "boxes", PRT_DTYPE_F32, 3, d3);
    th_tensor_alloc(&o[2], "scores", PRT_DTYPE_F32, 2, d2);
    th_tensor_alloc(&o[3], "classes", rc->kind == PRT_NMS_BATCHED ? PRT_DTYPE_F32 : PRT_DTYPE_I32, 2, d2);
}

static void bind(const rcase *rc, th_tensor *in, th_tensor *o, prt__nms_io *io)
{
    memset(io, 0, sizeof *io);
    io->boxes = in[0].data;
    io->scores = in[1].data;
    if (rc->kind == PRT_NMS_ONNX) {
        io->max_per_class = (const int64_t *)in[2].data;
        io->iou_thr = (const float *)in[3].data;
        io->score_thr = (const float *)in[4].data;
        io->selected = (int64_t *)o[0].data;
    } else {
        io->num_det = (int32_t *)o[0].data;
        io->out_boxes = o[1].data;
        io->out_scores = o[2].data;
        io->out_classes = o[3].data;
    }
}

static int nb_outputs(const rcase *rc) { return rc->kind == PRT_NMS_ONNX ? 1 : 4; }

static const rcase rcases[] = {
    /* kind, B, N, C, L, topk, keep, bg, norm, caffe, agn, coding, act, sthr, ithr, maxpc, center */
    {PRT_NMS_BATCHED, 2, 3000, 3, 1, 400, 400, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 0, 0},
    {PRT_NMS_BATCHED, 1, 2500, 4, 4, 4096, 300, 1, 0, 1, 0, 0, 0, 0.3f, 0.45f, 0, 0},
    {PRT_NMS_BATCHED, 3, 1200, 2, 1, 50, 50, 0, 0, 0, 0, 0, 0, 0.0f, 0.3f, 0, 0},
    {PRT_NMS_EFFICIENT, 2, 2000, 3, 1, 0, 2000, -1, 1, 0, 0, 0, 0, 0.02f, 0.5f, 0, 0},
    {PRT_NMS_EFFICIENT, 1, 3000, 2, 1, 0, 500, 1, 1, 0, 1, 0, 0, 0.0f, 0.6f, 0, 0},
    {PRT_NMS_EFFICIENT, 2, 1500, 2, 1, 0, 80, -1, 1, 0, 0, 1, 0, 0.1f, 0.4f, 0, 1},
    {PRT_NMS_ONNX, 2, 2000, 3, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 1000000, 0},
    {PRT_NMS_ONNX, 1, 3000, 2, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.5f, 0.3f, 37, 1},
    /* 65 segments of 1100 boxes: CUDA's segment path, blocks reading their own scores */
    {PRT_NMS_ONNX, 1, 1100, 65, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.5f, 0.5f, 1000000, 0},
    /* 360 segments: CUDA's segment path after the filter pass over all scores */
    {PRT_NMS_BATCHED, 4, 600, 90, 1, 100, 100, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 0, 0},
    /* N > 4096: CUDA's long path, 6 segments in the same rounds; then with a cap and centre boxes */
    {PRT_NMS_ONNX, 2, 5000, 3, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 1000000, 0},
    {PRT_NMS_ONNX, 1, 4500, 2, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.5f, 0.3f, 37, 1},
};

static void compare_outputs(const rcase *rc, const th_tensor *a, const th_tensor *b, int64_t na, int64_t nb,
                            double tol, const char *what)
{
    int64_t i;
    if (rc->kind == PRT_NMS_ONNX) {
        CHECK_MSG(na == nb, "%s: %lld vs %lld selected", what, (long long)na, (long long)nb);
        for (i = 0; i < na * 3 && na == nb; i++)
            CHECK_MSG(i64(&a[0], i) == i64(&b[0], i), "%s: index element %lld differs", what, (long long)i);
        return;
    }
    for (i = 0; i < rc->B; i++) CHECK_MSG(i32(&a[0], i) == i32(&b[0], i), "%s: num_detections[%lld]", what, (long long)i);
    for (i = 0; i < rc->B * rc->keep; i++) {
        int k;
        if (rc->kind == PRT_NMS_BATCHED)
            CHECK_MSG(f32(&a[3], i) == f32(&b[3], i), "%s: class row %lld", what, (long long)i);
        else
            CHECK_MSG(i32(&a[3], i) == i32(&b[3], i), "%s: class row %lld", what, (long long)i);
        CHECK_MSG(fabs(f32(&a[2], i) - f32(&b[2], i)) <= tol * (1 + fabs(f32(&a[2], i))), "%s: score row %lld", what,
                  (long long)i);
        for (k = 0; k < 4; k++)
            CHECK_MSG(fabs(f32(&a[1], 4 * i + k) - f32(&b[1], 4 * i + k)) <= tol * (1 + fabs(f32(&a[1], 4 * i + k))),
                      "%s: box row %lld", what, (long long)i);
    }
}

TEST(cpu_fast_equals_reference_randomized)
{
    size_t k;
    for (k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
        const rcase *rc = &rcases[k];
        th_tensor in[5], ref[4], fast[4], fast4[4];
        prt__nms_params q;
        prt__nms_io io;
        int nb_in, i;
        int64_t nref, nfast, nfast4;
        void *ws;
        th_exec t1, t4;
        char what[64];
        rng_seed(100 + k);
        make_inputs(rc, in, &nb_in);
        make_params(rc, &q);
        alloc_outputs(rc, ref);
        alloc_outputs(rc, fast);
        alloc_outputs(rc, fast4);
        for (i = 0; i < nb_outputs(rc); i++) {
            memset(fast[i].data, 0xA5, th_bytes(&fast[i]));
            memset(fast4[i].data, 0x5A, th_bytes(&fast4[i]));
            memset(ref[i].data, 0x33, th_bytes(&ref[i]));
        }
        bind(rc, in, ref, &io);
        CHECK_OK(prt__nms_reference(&q, &io));
        nref = io.nb_selected;
        ws = malloc(prt__nms_cpu_workspace(&q));
        th_exec_init(&t1, PRT_DEVICE_CPU, 1, NULL);
        bind(rc, in, fast, &io);
        CHECK_OK(prt__nms_cpu_run(&q, &io, ws, &t1.ex));
        nfast = io.nb_selected;
        th_exec_init(&t4, PRT_DEVICE_CPU, 4, NULL);
        bind(rc, in, fast4, &io);
        CHECK_OK(prt__nms_cpu_run(&q, &io, ws, &t4.ex));
        nfast4 = io.nb_selected;
        snprintf(what, sizeof what, "case %zu fast", k);
        compare_outputs(rc, ref, fast, nref, nfast, 0.0, what);
        snprintf(what, sizeof what, "case %zu 4 threads", k);
        compare_outputs(rc, ref, fast4, nref, nfast4, 0.0, what);
        /* something was selected and something suppressed */
        if (getenv("NMS_TEST_VERBOSE")) printf("case %zu: nsel %lld num_det0 %d\n", k, (long long)nref, rc->kind == PRT_NMS_ONNX ? -1 : i32(&ref[0], 0));
        if (rc->kind == PRT_NMS_ONNX) CHECK(nref > 0);
        else CHECK(i32(&ref[0], 0) > 0);
        free(ws);
        for (i = 0; i < nb_in; i++) th_tensor_free(&in[i]);
        for (i = 0; i < nb_outputs(rc); i++) {
            th_tensor_free(&ref[i]);
            th_tensor_free(&fast[i]);
            th_tensor_free(&fast4[i]);
        }
    }
}

/* One randomized case through its plugin's creator and ops on `dev` (the CPU with 2 threads). */
static prt_status run_rcase(const rcase *rc, const th_tensor *in, int nb_in, prt_device dev, th_run *r)
{
    const int threads = dev == PRT_DEVICE_CPU ? 2 : 1;
    fl s;
    prt_fields fc;
    if (rc->kind == PRT_NMS_BATCHED) {
        bcfg c = {rc->L == 1, rc->bg, (int)rc->C, rc->topk, rc->keep, rc->norm, 1, rc->caffe, rc->sthr, rc->ithr};
        fc = bnms_fields(&s, &c);
        return th_run_blob(&prt__nms_batched_creator, &fc, in, nb_in, dev, threads, r);
    }
    if (rc->kind == PRT_NMS_EFFICIENT) {
        ecfg c = {rc->sthr, rc->ithr, rc->keep, rc->bg, rc->act, rc->agn, rc->coding};
        fc = enms_fields(&s, &c);
        return th_run_blob(&prt__nms_efficient_creator, &fc, in, nb_in, dev, threads, r);
    }
    memset(&s, 0, sizeof s);
    fl_l(&s, "center_point_box", rc->center);
    fc = fl_get(&s);
    return th_run_field(&prt__nms_onnx_creator, &fc, in, nb_in, dev, threads, r);
}

TEST(cuda_equals_cpu_randomized)
{
    size_t k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (k = 0; k < sizeof rcases / sizeof rcases[0]; k++) {
        const rcase *rc = &rcases[k];
        th_tensor in[5];
        th_run rcpu, rgpu;
        int nb_in, i;
        char what[64];
        rng_seed(200 + k);
        make_inputs(rc, in, &nb_in);
        CHECK_OK(run_rcase(rc, in, nb_in, PRT_DEVICE_CPU, &rcpu));
        if (rc->kind == PRT_NMS_ONNX) {
            /* the synchronising fallback first, then the device extent */
            th_set_extent_mode(TH_EXTENT_NULL);
            CHECK_OK(run_rcase(rc, in, nb_in, PRT_DEVICE_CUDA, &rgpu));
            th_set_extent_mode(TH_EXTENT_DEVICE);
            CHECK_EQ_INT(rgpu.extent_path, 1);
            snprintf(what, sizeof what, "case %zu cuda (synchronised count)", k);
            compare_outputs(rc, rcpu.out, rgpu.out, rcpu.out[0].dims.d[0], rgpu.out[0].dims.d[0], 1e-6, what);
            th_run_free(&rgpu);
        }
        CHECK_OK(run_rcase(rc, in, nb_in, PRT_DEVICE_CUDA, &rgpu));
        if (rc->kind == PRT_NMS_ONNX) CHECK_EQ_INT(rgpu.extent_path, 2);
        snprintf(what, sizeof what, "case %zu cuda", k);
        compare_outputs(rc, rcpu.out, rgpu.out, rcpu.out[0].dims.d[0], rgpu.out[0].dims.d[0], 1e-6, what);
        th_run_free(&rcpu);
        th_run_free(&rgpu);
        for (i = 0; i < nb_in; i++) th_tensor_free(&in[i]);
    }
}

/* Each kind's CUDA enqueue captured into a CUDA graph: no host synchronisation inside, and the graph's
 * results equal the CPU's. 2 x 200 segments (NMS-T has 2560; more than 500 once made CUB's segmented sort
 * wait for the host) take the filter pass; the last case takes the long path (a cooperative kernel). */
TEST(cuda_enqueue_captures_into_graph)
{
    static const rcase gc[] = {
        {PRT_NMS_BATCHED, 2, 500, 200, 1, 100, 100, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 0, 0},
        {PRT_NMS_EFFICIENT, 2, 500, 200, 1, 0, 100, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 0, 0},
        {PRT_NMS_ONNX, 2, 500, 200, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 50, 0},
        {PRT_NMS_ONNX, 1, 5000, 2, 1, 0, 0, -1, 1, 0, 0, 0, 0, 0.05f, 0.5f, 1000000, 0},
    };
    size_t k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (k = 0; k < sizeof gc / sizeof gc[0]; k++) {
        const rcase *rc = &gc[k];
        th_tensor in[5];
        th_run rcpu, rgpu;
        prt_status st;
        int nb_in, i;
        char what[64];
        rng_seed(300 + k);
        make_inputs(rc, in, &nb_in);
        CHECK_OK(run_rcase(rc, in, nb_in, PRT_DEVICE_CPU, &rcpu));
        th_set_graph_capture(1);
        st = run_rcase(rc, in, nb_in, PRT_DEVICE_CUDA, &rgpu);
        th_set_graph_capture(0);
        CHECK_MSG(st == PRT_OK, "case %zu: %s", k, rgpu.error);
        snprintf(what, sizeof what, "graph case %zu", k);
        compare_outputs(rc, rcpu.out, rgpu.out, rcpu.out[0].dims.d[0], rgpu.out[0].dims.d[0], 1e-6, what);
        th_run_free(&rcpu);
        th_run_free(&rgpu);
        for (i = 0; i < nb_in; i++) th_tensor_free(&in[i]);
    }
}

/* ---- one big dense segment (CUDA: the long path for ONNX, the segment path with its radix select for
 * EfficientNMS and BatchedNMS) ---- */

/* [1, N, 4] boxes jittered around 40 objects of a 640x640 image (most
 * boxes overlap an earlier one by IoU > 0.5), scores on a grid of 1/4096
 * (many exact ties); every 97th box is a small one far from all others
 * (never suppressed). */
static void dense_inputs(float *boxes, float *scores, int64_t N)
{
    float ob[40][4];
    int64_t n, k;
    for (k = 0; k < 40; k++) {
        double w = 20 + urand() * 180, h = 20 + urand() * 180, cx = 50 + urand() * 540, cy = 50 + urand() * 540;
        ob[k][0] = (float)(cx - w / 2); ob[k][1] = (float)(cy - h / 2);
        ob[k][2] = (float)(cx + w / 2); ob[k][3] = (float)(cy + h / 2);
    }
    for (n = 0; n < N; n++) {
        int o = (int)(urand() * 40);
        double w = ob[o][2] - ob[o][0], h = ob[o][3] - ob[o][1];
        for (k = 0; k < 4; k++) {
            double size = (k & 1) ? h : w;
            boxes[n * 4 + k] = (float)(ob[o][k] + (urand() - 0.5) * 0.5 * size);
        }
        if (n % 97 == 0) { /* a small isolated box: always kept */
            boxes[n * 4 + 0] = 1000.0f + (float)n; boxes[n * 4 + 1] = 0.0f;
            boxes[n * 4 + 2] = 1000.5f + (float)n; boxes[n * 4 + 3] = 0.5f;
        }
        scores[n] = (float)((int)(urand() * 4096) + 1) / 4096.0f;
    }
}

/* The plain reference of ONNX NMS over in[0..4] (boxes [1, N, 4], scores [1, 1, N], the three scalars)
 * into ref ([N, 3], poisoned first); returns the number of rows. */
static int64_t onnx_one_class_reference(const th_tensor *in, int64_t N, th_tensor *ref)
{
    prt__nms_params q;
    prt__nms_io io;
    memset(&q, 0, sizeof q);
    q.kind = PRT_NMS_ONNX;
    q.B = 1; q.N = N; q.C = 1;
    q.box_classes = 1;
    q.box_mode = PRT_NMS_BOX_CORNERS;
    q.background = -1;
    q.pre_cap = N; q.keep_cap = N;
    memset(ref->data, 0x33, th_bytes(ref));
    memset(&io, 0, sizeof io);
    io.boxes = in[0].data; io.scores = in[1].data;
    io.max_per_class = (const int64_t *)in[2].data;
    io.iou_thr = (const float *)in[3].data;
    io.score_thr = (const float *)in[4].data;
    io.selected = (int64_t *)ref->data;
    CHECK_OK(prt__nms_reference(&q, &io));
    return io.nb_selected;
}

/* N = 20000, C = 1, score threshold 0, IoU 0.5: ONNX with no cap,
 * EfficientNMS class-agnostic and BatchedNMS topK 4096; CUDA equals the CPU
 * (and the ONNX rows equal the plain reference) element for element. */
TEST(cuda_dense_single_class_matches_cpu)
{
    const int64_t N = 20000;
    th_tensor in[5];
    th_run rc, rg;
    fl s;
    prt_fields fc;
    int64_t i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    rng_seed(4242);
    onnx_inputs(in, 1, 1, N, N, 0.5f, 0.0f);
    dense_inputs((float *)in[0].data, (float *)in[1].data, N);
    {
        /* ONNX, no cap: against the plain reference and the CPU plugin */
        th_tensor ref;
        int64_t dr[2] = {N, 3}, nref;
        th_tensor_alloc(&ref, "ref", PRT_DTYPE_I64, 2, dr);
        nref = onnx_one_class_reference(in, N, &ref);
        CHECK(nref > N / 97 && nref < N / 4); /* most boxes suppressed, the isolated ones kept */
        memset(&s, 0, sizeof s);
        fc = fl_get(&s);
        CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 5, PRT_DEVICE_CPU, 2, &rc));
        CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 5, PRT_DEVICE_CUDA, 1, &rg));
        CHECK_EQ_INT(rg.extent_path, 2);
        CHECK_EQ_INT(rc.out[0].dims.d[0], nref);
        CHECK_EQ_INT(rg.out[0].dims.d[0], nref);
        for (i = 0; i < nref * 3; i++) {
            CHECK_MSG(i64(&rc.out[0], i) == i64(&ref, i), "ONNX CPU element %lld", (long long)i);
            CHECK_MSG(i64(&rg.out[0], i) == i64(&ref, i), "ONNX CUDA element %lld: %lld, expected %lld",
                      (long long)i, (long long)i64(&rg.out[0], i), (long long)i64(&ref, i));
        }
        th_run_free(&rc);
        th_run_free(&rg);
        /* a cap that the greedy pass reaches part-way */
        ((int64_t *)in[2].data)[0] = nref / 2;
        CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 5, PRT_DEVICE_CUDA, 1, &rg));
        CHECK_EQ_INT(rg.out[0].dims.d[0], nref / 2);
        for (i = 0; i < (nref / 2) * 3; i++)
            CHECK_MSG(i64(&rg.out[0], i) == i64(&ref, i), "ONNX CUDA capped element %lld", (long long)i);
        th_run_free(&rg);
        th_tensor_free(&ref);
    }
    {
        /* EfficientNMS class-agnostic ([1, N, 4] boxes, [1, N, 1] scores) and
         * BatchedNMS, one class, topK 4096 */
        th_tensor bin[2];
        int64_t eb[3] = {1, N, 4}, es[3] = {1, N, 1}, bb[4] = {1, N, 1, 4};
        rcase e = {PRT_NMS_EFFICIENT, 1, N, 1, 1, 0, 1000, -1, 0, 0, 1, 0, 0, 0.0f, 0.5f, 0, 0};
        rcase b = {PRT_NMS_BATCHED, 1, N, 1, 1, 4096, 3000, -1, 0, 0, 0, 0, 0, 0.0f, 0.5f, 0, 0};
        ecfg ec = {0.0f, 0.5f, 1000, -1, 0, 1, 0};
        bcfg bc = {1, -1, 1, 4096, 3000, 0, 0, 0, 0.0f, 0.5f};
        th_tensor_alloc(&bin[0], "boxes", PRT_DTYPE_F32, 3, eb);
        th_tensor_alloc(&bin[1], "scores", PRT_DTYPE_F32, 3, es);
        memcpy(bin[0].data, in[0].data, th_bytes(&in[0]));
        memcpy(bin[1].data, in[1].data, th_bytes(&in[1]));
        fc = enms_fields(&s, &ec);
        CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, bin, 2, PRT_DEVICE_CPU, 2, &rc));
        CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, bin, 2, PRT_DEVICE_CUDA, 1, &rg));
        CHECK(i32(&rc.out[0], 0) > 100);
        compare_outputs(&e, rc.out, rg.out, 0, 0, 0.0, "dense efficient");
        th_run_free(&rc);
        th_run_free(&rg);
        bin[0].dims.nb = 4;
        memcpy(bin[0].dims.d, bb, sizeof bb);
        fc = bnms_fields(&s, &bc);
        CHECK_OK(th_run_blob(&prt__nms_batched_creator, &fc, bin, 2, PRT_DEVICE_CPU, 2, &rc));
        CHECK_OK(th_run_blob(&prt__nms_batched_creator, &fc, bin, 2, PRT_DEVICE_CUDA, 1, &rg));
        CHECK(i32(&rc.out[0], 0) > 100);
        compare_outputs(&b, rc.out, rg.out, 0, 0, 0.0, "dense batched");
        th_run_free(&rc);
        th_run_free(&rg);
        th_tensors_free(bin, 2);
    }
    th_tensors_free(in, 5);
}

/* The long path's windows: 3000 boxes of one object with the highest scores (all but the first
 * suppressed), then 5000 isolated small boxes (all kept). The windows grow over the cluster, so the one
 * that reaches the isolated boxes holds more than the 1024 standing candidates a round resolves and is
 * cut, round after round. ONNX, one class, with no cap and with a cap reached inside a cut window; CUDA
 * equals the plain reference element for element. */
TEST(cuda_long_path_window_cut_matches_reference)
{
    const int64_t N = 8000, caps[2] = {N, 3000};
    th_tensor in[5], ref;
    th_run rg;
    prt_fields fc;
    fl s;
    int64_t dr[2] = {N, 3}, n, i;
    int k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    rng_seed(777);
    onnx_inputs(in, 1, 1, N, 0, 0.5f, 0.1f);
    for (n = 0; n < N; n++) {
        float *b = (float *)in[0].data + 4 * n;
        if (n < 3000) {
            b[0] = (float)(100 + urand() * 4); b[1] = (float)(100 + urand() * 4);
            b[2] = (float)(200 + urand() * 4); b[3] = (float)(200 + urand() * 4);
            ((float *)in[1].data)[n] = 0.9f - (float)n * 1e-5f;
        } else {
            b[0] = 1000.0f + 2.0f * (float)n; b[1] = 0.0f;
            b[2] = 1000.5f + 2.0f * (float)n; b[3] = 0.5f;
            ((float *)in[1].data)[n] = 0.5f - (float)(n - 3000) * 1e-5f;
        }
    }
    th_tensor_alloc(&ref, "ref", PRT_DTYPE_I64, 2, dr);
    memset(&s, 0, sizeof s);
    fc = fl_get(&s);
    for (k = 0; k < 2; k++) {
        int64_t nref;
        ((int64_t *)in[2].data)[0] = caps[k];
        nref = onnx_one_class_reference(in, N, &ref);
        CHECK_EQ_INT(nref, k == 0 ? 5001 : 3000);
        CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 5, PRT_DEVICE_CUDA, 1, &rg));
        CHECK_EQ_INT(rg.out[0].dims.d[0], nref);
        for (i = 0; i < nref * 3 && rg.out[0].dims.d[0] == nref; i++)
            CHECK_MSG(i64(&rg.out[0], i) == i64(&ref, i), "cap %lld: element %lld: %lld, expected %lld",
                      (long long)caps[k], (long long)i, (long long)i64(&rg.out[0], i), (long long)i64(&ref, i));
        th_run_free(&rg);
    }
    th_tensor_free(&ref);
    th_tensors_free(in, 5);
}

/* ---- blob corruption ---- */

static void blob_abuse(const prt_plugin_creator *c, const prt_fields *fc)
{
    prt_blob_plugin *p = NULL, *q = NULL;
    char e[256];
    prt_msg err = {e, sizeof e};
    uint8_t blob[128], bad[129];
    size_t n, i;
    int bit;
    CHECK_OK(c->create_blob(c, fc, &p, &err));
    n = p->ops->get_serialization_size(p);
    CHECK(n < sizeof blob);
    CHECK_OK(p->ops->serialize(p, blob, n));
    CHECK(p->ops->serialize(p, blob, n - 1) != PRT_OK); /* too small a buffer */
    CHECK_OK(p->ops->serialize(p, blob, n));
    for (i = 0; i < n; i++) {
        q = (prt_blob_plugin *)0x1;
        CHECK_EQ_INT(c->deserialize_blob(c, blob, i, &q, &err), PRT_STATUS_TRUNCATED);
        CHECK(q == (prt_blob_plugin *)0x1); /* untouched on failure */
    }
    CHECK_EQ_INT(c->deserialize_blob(c, NULL, 0, &q, &err), PRT_STATUS_TRUNCATED);
    memcpy(bad, blob, n);
    bad[n] = 0;
    CHECK_EQ_INT(c->deserialize_blob(c, bad, n + 1, &q, &err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(e, "trailing");
    /* Every single-bit flip either fails cleanly or yields a plugin that
     * serializes back to exactly the flipped bytes (a valid blob). */
    for (i = 0; i < n; i++)
        for (bit = 0; bit < 8; bit++) {
            uint8_t back[128];
            prt_status st;
            memcpy(bad, blob, n);
            bad[i] ^= (uint8_t)(1u << bit);
            q = NULL;
            st = c->deserialize_blob(c, bad, n, &q, &err);
            if (st == PRT_OK) {
                CHECK(q != NULL);
                CHECK_EQ_INT(q->ops->get_serialization_size(q), n);
                CHECK_OK(q->ops->serialize(q, back, n));
                CHECK(memcmp(back, bad, n) == 0);
                q->ops->destroy(q);
            } else {
                CHECK(st == PRT_STATUS_BAD_FORMAT);
            }
        }
    /* magic */
    memcpy(bad, blob, n);
    bad[0] ^= 0xff;
    CHECK_EQ_INT(c->deserialize_blob(c, bad, n, &q, &err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(e, "header");
    p->ops->destroy(p);
}

TEST(blob_truncation_and_corruption)
{
    fl s;
    prt_fields fc;
    bcfg b = bdef;
    ecfg e = {0.1f, 0.5f, 10, -1, 0, 0, 0};
    fc = bnms_fields(&s, &b);
    blob_abuse(&prt__nms_batched_creator, &fc);
    fc = enms_fields(&s, &e);
    blob_abuse(&prt__nms_efficient_creator, &fc);
}

/* ---- validation messages ---- */

static void expect_bnms_error(const bcfg *c, int drop, const char *needle)
{
    fl s;
    prt_fields fc = bnms_fields(&s, c);
    prt_blob_plugin *p = (prt_blob_plugin *)0x1;
    char e[256] = "";
    prt_msg err = {e, sizeof e};
    if (drop >= 0) { /* remove field `drop` */
        memmove(&s.f[drop], &s.f[drop + 1], sizeof(prt_field) * (size_t)(s.n - drop - 1));
        fc.nb--;
    }
    CHECK_EQ_INT(prt__nms_batched_creator.create_blob(&prt__nms_batched_creator, &fc, &p, &err),
                 PRT_STATUS_INVALID_FIELD);
    CHECK(p == (prt_blob_plugin *)0x1);
    CHECK_STR_CONTAINS(e, needle);
}

TEST(batched_validation_messages)
{
    bcfg c = bdef;
    expect_bnms_error(&c, 3, "required field \"topK\" is missing");
    c = bdef; c.keep = 20;
    expect_bnms_error(&c, -1, "keepTopK (20) must be <= topK (10)");
    c = bdef; c.topk = 5000; c.keep = 5;
    expect_bnms_error(&c, -1, "\"topK\" must be in [1, 4096], got 5000");
    c = bdef; c.share = 2;
    expect_bnms_error(&c, -1, "\"shareLocation\" must be in [0, 1], got 2");
    c = bdef; c.bg = 3; c.ncls = 2;
    expect_bnms_error(&c, -1, "backgroundLabelId (3) must be -1 or a class below numClasses (2)");
    c = bdef; c.ithr = -0.5f;
    expect_bnms_error(&c, -1, "\"iouThreshold\" must be >= 0, got -0.5");
    c = bdef; c.ncls = 0;
    expect_bnms_error(&c, -1, "\"numClasses\" must be in [1,");
}

TEST(batched_num_classes_checked_at_build)
{
    fl s;
    bcfg c = bdef;
    prt_fields fc;
    th_tensor in[2];
    th_run r;
    c.ncls = 3;
    fc = bnms_fields(&s, &c);
    mk_batched_in(in, 4, 1, 2, PRT_DTYPE_F32); /* scores have 2 classes */
    CHECK_EQ_INT(th_run_blob(&prt__nms_batched_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(r.error, "numClasses is 3 but scores have 2 classes");
    th_tensor_free(&in[0]);
    th_tensor_free(&in[1]);
    c.ncls = 2;
    c.share = 0;
    fc = bnms_fields(&s, &c);
    mk_batched_in(in, 4, 1, 2, PRT_DTYPE_F32); /* boxes L = 1 but shareLocation false */
    CHECK_EQ_INT(th_run_blob(&prt__nms_batched_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(r.error, "boxes must be [B, N, 2, 4]");
    th_tensor_free(&in[0]);
    th_tensor_free(&in[1]);
    /* mixed types */
    c.share = 1;
    fc = bnms_fields(&s, &c);
    {
        int64_t db[4] = {1, 4, 1, 4}, ds[3] = {1, 4, 2};
        th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 4, db);
        th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F16, 3, ds);
    }
    CHECK_EQ_INT(th_run_blob(&prt__nms_batched_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r), PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(r.error, "must both be f32 or both f16, got f32 and f16");
    th_tensor_free(&in[0]);
    th_tensor_free(&in[1]);
}

TEST(efficient_validation_messages)
{
    struct { ecfg c; const char *needle; } cases[] = {
        {{-0.1f, 0.5f, 10, -1, 0, 0, 0}, "\"score_threshold\" must be >= 0, got -0.1"},
        {{0.1f, 0.0f, 10, -1, 0, 0, 0}, "\"iou_threshold\" must be > 0, got 0"},
        {{0.1f, 0.5f, 0, -1, 0, 0, 0}, "\"max_output_boxes\" must be in [1, 2147483647], got 0"},
        {{0.1f, 0.5f, 10, -1, 2, 0, 0}, "\"score_activation\" must be in [0, 1], got 2"},
        {{0.1f, 0.5f, 10, -1, 0, 3, 0}, "\"class_agnostic\" must be in [0, 1], got 3"},
        {{0.1f, 0.5f, 10, -1, 0, 0, 2}, "\"box_coding\" must be in [0, 1], got 2"},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fl s;
        prt_fields fc = enms_fields(&s, &cases[k].c);
        prt_blob_plugin *p = NULL;
        char e[256] = "";
        prt_msg err = {e, sizeof e};
        CHECK_EQ_INT(prt__nms_efficient_creator.create_blob(&prt__nms_efficient_creator, &fc, &p, &err),
                     PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(e, cases[k].needle);
    }
    {
        fl s;
        prt_fields fc;
        prt_blob_plugin *p = NULL;
        char e[256] = "";
        prt_msg err = {e, sizeof e};
        memset(&s, 0, sizeof s);
        fl_f(&s, "score_threshold", 0.1f);
        fc = fl_get(&s);
        CHECK_EQ_INT(prt__nms_efficient_creator.create_blob(&prt__nms_efficient_creator, &fc, &p, &err),
                     PRT_STATUS_INVALID_FIELD);
        CHECK_STR_CONTAINS(e, "required field \"iou_threshold\" is missing");
    }
}

TEST(onnx_validation_messages)
{
    fl s;
    prt_fields fc;
    prt_field_plugin *p = NULL;
    char e[256] = "";
    prt_msg err = {e, sizeof e};
    th_tensor in[2];
    th_run r;
    int64_t db[3] = {1, 4, 4}, ds[3] = {1, 1, 5};
    memset(&s, 0, sizeof s);
    fl_l(&s, "center_point_box", 2);
    fc = fl_get(&s);
    CHECK_EQ_INT(prt__nms_onnx_creator.create_field(&prt__nms_onnx_creator, &fc, PRT_PHASE_BUILD, &p, &err),
                 PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(e, "\"center_point_box\" must be 0 or 1, got 2");
    memset(&s, 0, sizeof s);
    fc = fl_get(&s);
    th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 3, db);
    th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F32, 3, ds);
    CHECK_EQ_INT(th_run_field(&prt__nms_onnx_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(r.error, "disagree on num_batches or spatial_dimension");
    th_tensor_free(&in[1]);
    ds[2] = 4;
    th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F16, 3, ds);
    CHECK_EQ_INT(th_run_field(&prt__nms_onnx_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r), PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(r.error, "input 1 (scores) must be f32, got f16");
    th_tensor_free(&in[0]);
    th_tensor_free(&in[1]);
}

TEST(onnx_absent_inputs_and_zero_cap)
{
    /* Without max_output_boxes_per_class nothing is selected (default 0). */
    th_tensor in[3];
    th_run r;
    fl s;
    prt_fields fc;
    int64_t db[3] = {1, 2, 4}, ds[3] = {1, 1, 2}, one[1] = {1};
    memset(&s, 0, sizeof s);
    fc = fl_get(&s);
    th_tensor_alloc(&in[0], "boxes", PRT_DTYPE_F32, 3, db);
    th_tensor_alloc(&in[1], "scores", PRT_DTYPE_F32, 3, ds);
    set_box(&in[0], 0, 0, 0, 1, 1);
    set_box(&in[0], 1, 0, 0, 1, 1);
    set_f(&in[1], 0, 0.5f);
    set_f(&in[1], 1, 0.6f);
    CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &r));
    CHECK_EQ_INT(r.out[0].dims.d[0], 0);
    th_run_free(&r);
    /* cap 5, no thresholds: identical boxes, IoU 1 > 0 suppresses; box 1 wins */
    th_tensor_alloc(&in[2], "max", PRT_DTYPE_I64, 1, one);
    ((int64_t *)in[2].data)[0] = 5;
    CHECK_OK(th_run_field(&prt__nms_onnx_creator, &fc, in, 3, PRT_DEVICE_CPU, 1, &r));
    CHECK_EQ_INT(r.out[0].dims.d[0], 1);
    CHECK_EQ_INT(i64(&r.out[0], 2), 1);
    th_run_free(&r);
    th_tensors_free(in, 3);
}

/* ---- more EfficientNMS and BatchedNMS rules ---- */

/* boxes [1, 2, 4], scores [1, 2, 1], anchors [1, 2, 4] */
static void efficient_anchor_inputs(th_tensor *in, prt_dtype dt)
{
    int64_t db[3] = {1, 2, 4}, ds[3] = {1, 2, 1};
    th_tensor_alloc(&in[0], "boxes", dt, 3, db);
    th_tensor_alloc(&in[1], "scores", dt, 3, ds);
    th_tensor_alloc(&in[2], "anchors", dt, 3, db);
    set_f(&in[1], 0, 0.5f);
    set_f(&in[1], 1, -2.0f);
}

TEST(efficient_anchor_decoding)
{
    th_tensor in[3];
    th_run r;
    fl s;
    prt_fields fc;
    ecfg c = {0.0f, 0.5f, 3, -1, 1, 0, 0}; /* activation on, threshold 0: every logit passes */
    efficient_anchor_inputs(in, PRT_DTYPE_F32);
    /* coding 0: sorted box + sorted anchor, element-wise */
    set_box(&in[0], 0, 2, 2, 1, 1);      /* sorts to 1 1 2 2 */
    set_box(&in[2], 0, 10, 20, 30, 40);
    set_box(&in[0], 1, 0, 0, 1, 1);
    set_box(&in[2], 1, 100, 100, 110, 110);
    fc = enms_fields(&s, &c);
    CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 3, PRT_DEVICE_CPU, 1, &r));
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    CHECK(f32(&r.out[1], 0) == 11 && f32(&r.out[1], 1) == 21 && f32(&r.out[1], 2) == 32 && f32(&r.out[1], 3) == 42);
    CHECK(f32(&r.out[1], 4) == 100 && f32(&r.out[1], 7) == 111);
    CHECK_NEAR(f32(&r.out[2], 0), 1.0 / (1.0 + exp(-0.5)), 1e-6); /* sigmoid of the logit */
    CHECK_NEAR(f32(&r.out[2], 1), 1.0 / (1.0 + exp(2.0)), 1e-6);
    CHECK(f32(&r.out[2], 2) == 0.0f && i32(&r.out[3], 2) == 0);
    th_run_free(&r);
    /* coding 1: centre = d * anchor size + anchor centre, size = anchor size * exp(d) */
    c.coding = 1;
    set_box(&in[0], 0, 0.5f, -1.0f, 0.0f, 0.0f);
    set_box(&in[2], 0, 100, 200, 10, 20);
    fc = enms_fields(&s, &c);
    CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 3, PRT_DEVICE_CPU, 1, &r));
    CHECK(f32(&r.out[1], 0) == 100.0f && f32(&r.out[1], 1) == 170.0f);
    CHECK(f32(&r.out[1], 2) == 110.0f && f32(&r.out[1], 3) == 190.0f);
    th_run_free(&r);
    /* score_threshold 0.5 with activation: logit 0 is the boundary (>=) */
    c.sthr = 0.5f;
    c.coding = 0;
    set_f(&in[1], 0, 0.0f);
    fc = enms_fields(&s, &c);
    CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 3, PRT_DEVICE_CPU, 1, &r));
    CHECK_EQ_INT(i32(&r.out[0], 0), 1);
    CHECK(f32(&r.out[2], 0) == 0.5f);
    th_run_free(&r);
    th_tensors_free(in, 3);
}

TEST(batched_topk_cut_and_iou_boundary)
{
    th_tensor in[2];
    th_run r;
    bcfg c = bdef;
    int i;
    c.topk = 2;
    c.keep = 2;
    mk_batched_in(in, 3, 1, 1, PRT_DTYPE_F32);
    for (i = 0; i < 3; i++) {
        set_box(&in[0], i, 0.3f * i, 0, 0.3f * i + 0.1f, 0.1f);
        set_f(&in[1], i, 0.5f + 0.1f * i);
    }
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    CHECK(f32(&r.out[2], 0) == 0.7f && f32(&r.out[2], 1) == 0.6f);
    th_run_free(&r);
    /* IoU exactly 0.5 is kept (suppression needs IoU > threshold):
     * [0,0,2,1] and [0,0,1,1]: inter 1, union 2 */
    c = bdef;
    set_box(&in[0], 0, 0, 0, 2, 1);
    set_box(&in[0], 1, 0, 0, 1, 1);
    set_box(&in[0], 2, 5, 5, 6, 6);
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 3);
    th_run_free(&r);
    c.ithr = 0.49f;
    run_b(&c, in, &r);
    CHECK_EQ_INT(i32(&r.out[0], 0), 2);
    th_run_free(&r);
    th_tensors_free(in, 2);
}

/* The hand-made cases above, on CUDA, equal to CPU. */
TEST(cuda_edge_cases_match_cpu)
{
    th_tensor in[3];
    th_run a, g;
    fl s;
    prt_fields fc;
    int i, k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    {
        ecfg c = {0.0f, 0.5f, 3, -1, 1, 0, 1};
        efficient_anchor_inputs(in, PRT_DTYPE_F16);
        set_box(&in[0], 0, 0.5f, -1.0f, 0.25f, 0.0f);
        set_box(&in[2], 0, 100, 200, 10, 20);
        set_box(&in[0], 1, 0.0f, 0.0f, 0.0f, 0.0f);
        set_box(&in[2], 1, 101, 201, 10, 20);
        fc = enms_fields(&s, &c);
        CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 3, PRT_DEVICE_CPU, 1, &a));
        CHECK_OK(th_run_blob(&prt__nms_efficient_creator, &fc, in, 3, PRT_DEVICE_CUDA, 1, &g));
        CHECK_EQ_INT(i32(&a.out[0], 0), i32(&g.out[0], 0));
        for (k = 0; k < 12; k++) CHECK_NEAR(f32(&a.out[1], k), f32(&g.out[1], k), 0.1);
        for (k = 0; k < 3; k++) {
            CHECK_NEAR(f32(&a.out[2], k), f32(&g.out[2], k), 1e-3);
            CHECK_EQ_INT(i32(&a.out[3], k), i32(&g.out[3], k));
        }
        th_run_free(&a);
        th_run_free(&g);
        for (i = 0; i < 3; i++) th_tensor_free(&in[i]);
    }
    {
        bcfg c = bdef;
        c.ncls = 3;
        c.keep = 40;
        c.topk = 100;
        c.bg = 1;
        rng_seed(11);
        mk_batched_in(in, 500, 1, 3, PRT_DTYPE_F16);
        for (i = 0; i < 500 * 4; i++) set_f(&in[0], i, (float)urand());
        for (i = 0; i < 500 * 3; i++) set_f(&in[1], i, (float)urand());
        fc = bnms_fields(&s, &c);
        CHECK_OK(th_run_blob(&prt__nms_batched_creator, &fc, in, 2, PRT_DEVICE_CPU, 1, &a));
        CHECK_OK(th_run_blob(&prt__nms_batched_creator, &fc, in, 2, PRT_DEVICE_CUDA, 1, &g));
        CHECK_EQ_INT(i32(&a.out[0], 0), i32(&g.out[0], 0));
        for (k = 0; k < 40; k++) {
            CHECK(f32(&a.out[2], k) == f32(&g.out[2], k));
            CHECK(f32(&a.out[3], k) == f32(&g.out[3], k));
            CHECK(f32(&a.out[1], 4 * k) == f32(&g.out[1], 4 * k));
        }
        th_run_free(&a);
        th_run_free(&g);
        th_tensor_free(&in[0]);
        th_tensor_free(&in[1]);
    }
}

/* ---- every shape and type message ---- */

typedef struct shape_case {
    int plugin; /* 0 batched, 1 efficient, 2 onnx */
    int nb_in;
    int nb[5];
    int64_t d[5][4];
    prt_dtype dt[5];
    prt_status want;
    const char *needle;
} shape_case;

TEST(shape_and_type_messages)
{
    static const shape_case cases[] = {
        {0, 2, {3, 3}, {{1, 4, 1}, {1, 4, 1}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "boxes must be [B, N, 1, 4] (shareLocation=1), got rank 3"},
        {0, 2, {4, 2}, {{1, 4, 1, 4}, {1, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "scores must be [B, N, C] or [B, N, C, 1], got rank 2"},
        {0, 2, {4, 3}, {{1, 4, 1, 4}, {1, 5, 1}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "disagree on B or N"},
        {0, 2, {4, 3}, {{1, 4, 1, 4}, {1, 4, 1}}, {PRT_DTYPE_I32, PRT_DTYPE_I32}, PRT_STATUS_TYPE_MISMATCH,
         "must both be f32 or both f16, got i32 and i32"},
        {1, 2, {3, 3}, {{1, 4, 5}, {1, 4, 1}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "boxes must be [B, N, 4], [B, N, 1, 4] or [B, N, C=1, 4]"},
        {1, 2, {4, 3}, {{1, 4, 3, 4}, {1, 4, 2}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "boxes must be [B, N, 4], [B, N, 1, 4] or [B, N, C=2, 4]"},
        {1, 2, {3, 2}, {{1, 4, 4}, {1, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "scores must be [B, N, C] or [B, N, C, 1], got rank 2"},
        {1, 2, {3, 3}, {{1, 4, 4}, {2, 4, 1}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "disagree on B or N"},
        {1, 3, {3, 3, 3}, {{1, 4, 4}, {1, 4, 1}, {1, 5, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_F32},
         PRT_STATUS_SHAPE_MISMATCH, "anchors must be [1, N, 4] or [B, N, 4] with N = 4"},
        {1, 3, {3, 3, 3}, {{1, 4, 4}, {1, 4, 1}, {1, 4, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_F16},
         PRT_STATUS_TYPE_MISMATCH, "input 2 is f16 (input 0 is f32)"},
        {2, 2, {2, 3}, {{1, 4}, {1, 1, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "boxes must be [num_batches, spatial_dimension, 4], got rank 2"},
        {2, 2, {3, 3}, {{1, 4, 5}, {1, 1, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "boxes must be [num_batches, spatial_dimension, 4], got last extent 5"},
        {2, 2, {3, 2}, {{1, 4, 4}, {1, 4}}, {PRT_DTYPE_F32, PRT_DTYPE_F32}, PRT_STATUS_SHAPE_MISMATCH,
         "scores must be [num_batches, num_classes, spatial_dimension], got rank 2"},
        {2, 3, {3, 3, 1}, {{1, 4, 4}, {1, 1, 4}, {2}}, {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_I64},
         PRT_STATUS_SHAPE_MISMATCH, "input 2 (max_output_boxes_per_class) must be a scalar or [1], got rank 1"},
        {2, 3, {3, 3, 0}, {{1, 4, 4}, {1, 1, 4}, {0}}, {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_I32},
         PRT_STATUS_TYPE_MISMATCH, "input 2 (max_output_boxes_per_class) must be i64, got i32"},
    };
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const shape_case *sc = &cases[k];
        th_tensor in[5];
        th_run r;
        fl s;
        prt_fields fc;
        bcfg bc = bdef;
        ecfg ec = {0.1f, 0.5f, 10, -1, 0, 0, 0};
        int i;
        prt_status st;
        for (i = 0; i < sc->nb_in; i++) th_tensor_alloc(&in[i], "in", sc->dt[i], sc->nb[i], sc->d[i]);
        if (sc->plugin == 0) {
            fc = bnms_fields(&s, &bc);
            st = th_run_blob(&prt__nms_batched_creator, &fc, in, sc->nb_in, PRT_DEVICE_CPU, 1, &r);
        } else if (sc->plugin == 1) {
            fc = enms_fields(&s, &ec);
            st = th_run_blob(&prt__nms_efficient_creator, &fc, in, sc->nb_in, PRT_DEVICE_CPU, 1, &r);
        } else {
            memset(&s, 0, sizeof s);
            fc = fl_get(&s);
            st = th_run_field(&prt__nms_onnx_creator, &fc, in, sc->nb_in, PRT_DEVICE_CPU, 1, &r);
        }
        CHECK_MSG(st == sc->want, "case %zu: status %d, expected %d (%s)", k, (int)st, (int)sc->want, r.error);
        CHECK_STR_CONTAINS(r.error, sc->needle);
        th_run_free(&r);
        for (i = 0; i < sc->nb_in; i++) th_tensor_free(&in[i]);
    }
}

TEST(blob_deserialize_out_of_range_messages)
{
    prt_blob_plugin *p = NULL, *q = NULL;
    fl s;
    bcfg c = bdef;
    prt_fields fc = bnms_fields(&s, &c);
    char e[256];
    prt_msg err = {e, sizeof e};
    uint8_t blob[64];
    size_t n;
    CHECK_OK(prt__nms_batched_creator.create_blob(&prt__nms_batched_creator, &fc, &p, &err));
    n = p->ops->get_serialization_size(p);
    CHECK_EQ_INT(n, 56);
    CHECK_OK(p->ops->serialize(p, blob, n));
    blob[8] = 2; /* shareLocation */
    CHECK_EQ_INT(prt__nms_batched_creator.deserialize_blob(&prt__nms_batched_creator, blob, n, &q, &err),
                 PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(e, "out-of-range value");
    blob[8] = 1;
    blob[24] = 20; /* keepTopK 20 > topK 10 */
    CHECK_EQ_INT(prt__nms_batched_creator.deserialize_blob(&prt__nms_batched_creator, blob, n, &q, &err),
                 PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(e, "keepTopK (20) must be <= topK (10)");
    blob[24] = 5;
    blob[52] = 7; /* dtype */
    CHECK_EQ_INT(prt__nms_batched_creator.deserialize_blob(&prt__nms_batched_creator, blob, n, &q, &err),
                 PRT_STATUS_BAD_FORMAT);
    CHECK(q == NULL);
    p->ops->destroy(p);
}

/* ---- output descriptors that do not hold what the plugin writes ---- */

/* Create with `fc`, configure for boxes / scores of `bx` / `sc`, then
 * enqueue directly (CPU) with detection_boxes, detection_scores and
 * detection_classes described with `rows` rows (the plugin writes `want`),
 * or with `wrong_type` set, right rows but detection_boxes in f16: the
 * enqueue must refuse with `needle` and leave every output byte as it was. */
static void refuse_small_outputs(const prt_plugin_creator *c, const prt_fields *fc, const prt_dims *bx,
                                 const prt_dims *sc, int64_t rows, int64_t want, int wrong_type, prt_dtype cls_t,
                                 const char *needle)
{
    prt_blob_plugin *p = NULL;
    char e[256] = "";
    prt_msg err = {e, sizeof e};
    prt_dyn_tensor_desc din[2], dout[4];
    prt_tensor_desc ind[2], outd[4];
    th_exec t;
    float *boxes, *scores;
    uint8_t *out[4];
    size_t obytes = 4096, ws_size;
    void *ws, *outs[4];
    const void *ins[2];
    int i, k;
    prt_status st;
    CHECK_OK(c->create_blob(c, fc, &p, &err));
    if (!p) return;
    memset(din, 0, sizeof din);
    memset(dout, 0, sizeof dout);
    for (i = 0; i < 2; i++) {
        din[i].desc.dtype = PRT_DTYPE_F32;
        din[i].desc.dims = i == 0 ? *bx : *sc;
        din[i].min = din[i].opt = din[i].max = din[i].desc.dims;
        ind[i] = din[i].desc;
    }
    for (i = 0; i < 4; i++) {
        memset(&outd[i], 0, sizeof outd[i]);
        outd[i].dtype = i == 0 ? PRT_DTYPE_I32 : i == 3 ? cls_t : PRT_DTYPE_F32;
        outd[i].dims.nb = i == 1 ? 3 : 2;
        outd[i].dims.d[0] = bx->d[0];
        outd[i].dims.d[1] = i == 0 ? 1 : want;
        if (i == 1) outd[i].dims.d[2] = 4;
        dout[i].desc = outd[i];
        dout[i].min = dout[i].opt = dout[i].max = outd[i].dims;
    }
    CHECK_OK(p->ops->configure_plugin(p, din, 2, dout, 4, &err));
    ws_size = p->ops->get_workspace_size(p, ind, 2, outd, 4);
    ws = malloc(ws_size + 1);
    boxes = calloc((size_t)(bx->d[0] * bx->d[1] * bx->d[2] * (bx->nb == 4 ? bx->d[3] : 1)), sizeof(float));
    scores = calloc((size_t)(sc->d[0] * sc->d[1] * sc->d[2]), sizeof(float));
    for (k = 0; k < sc->d[0] * sc->d[1] * sc->d[2]; k++) scores[k] = 0.9f; /* all pass the threshold */
    for (k = 0; k < bx->d[0] * bx->d[1]; k++) {   /* disjoint unit boxes */
        float *b = boxes + (size_t)k * (size_t)(bx->nb == 4 ? bx->d[2] * 4 : 4);
        b[0] = (float)(2 * k);
        b[1] = 0.0f;
        b[2] = (float)(2 * k) + 1.0f;
        b[3] = 1.0f;
    }
    ins[0] = boxes;
    ins[1] = scores;
    for (i = 0; i < 4; i++) {
        out[i] = malloc(obytes);
        memset(out[i], 0xa5, obytes);
        outs[i] = out[i];
    }
    /* the descriptors the host would pass for a plan with `rows` rows */
    for (i = 1; i < 4; i++) outd[i].dims.d[1] = rows;
    if (wrong_type) outd[1].dtype = PRT_DTYPE_F16;
    th_exec_init(&t, PRT_DEVICE_CPU, 1, NULL);
    st = p->ops->enqueue(p, ind, outd, ins, outs, ws, &t.ex);
    CHECK_EQ_INT(st, wrong_type ? PRT_STATUS_TYPE_MISMATCH : PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(t.error, needle);
    CHECK_STR_CONTAINS(t.error, "nothing was written");
    for (i = 0; i < 4; i++)
        for (k = 0; k < (int)obytes; k++)
            if (out[i][k] != 0xa5) {
                CHECK_MSG(0, "output %d byte %d was written", i, k);
                break;
            }
    /* The same buffers with the right descriptors: it runs and writes. */
    for (i = 1; i < 4; i++) outd[i].dims.d[1] = want;
    outd[1].dtype = PRT_DTYPE_F32;
    th_exec_init(&t, PRT_DEVICE_CPU, 1, NULL);
    CHECK_OK(p->ops->enqueue(p, ind, outd, ins, outs, ws, &t.ex));
    CHECK_EQ_INT(((int32_t *)out[0])[0], (int)want);
    for (i = 0; i < 4; i++) free(out[i]);
    free(boxes);
    free(scores);
    free(ws);
    p->ops->destroy(p);
}

TEST(enqueue_refuses_outputs_smaller_than_the_rows_written)
{
    fl s;
    prt_fields fc;
    bcfg b = bdef; /* keepTopK 5, topK 10, one class, shared boxes */
    ecfg e = {0.1f, 0.5f, 10, -1, 0, 0, 0};
    prt_dims bbx = {4, 0, {1, 12, 1, 4}}, bsc = {3, 0, {1, 12, 1}};
    prt_dims ebx = {3, 0, {1, 16, 4}}, esc = {3, 0, {1, 16, 2}};
    fc = bnms_fields(&s, &b);
    refuse_small_outputs(&prt__nms_batched_creator, &fc, &bbx, &bsc, 4, 5, 0, PRT_DTYPE_F32,
                         "output 1 (detection_boxes) is f32 [1, 4, 4], but the plugin writes f32 [1, 5, 4] "
                         "(keepTopK = 5 rows per image)");
    refuse_small_outputs(&prt__nms_batched_creator, &fc, &bbx, &bsc, 5, 5, 1, PRT_DTYPE_F32,
                         "output 1 (detection_boxes) is f16 [1, 5, 4], but the plugin writes f32 [1, 5, 4]");
    fc = enms_fields(&s, &e);
    refuse_small_outputs(&prt__nms_efficient_creator, &fc, &ebx, &esc, 9, 10, 0, PRT_DTYPE_I32,
                         "EfficientNMS_TRT: output 1 (detection_boxes) is f32 [1, 9, 4], but the plugin writes f32 "
                         "[1, 10, 4] (max_output_boxes = 10 rows per image)");
    /* more rows than written is refused as well (exactly what it writes) */
    refuse_small_outputs(&prt__nms_efficient_creator, &fc, &ebx, &esc, 11, 10, 0, PRT_DTYPE_I32,
                         "is f32 [1, 11, 4], but the plugin writes f32 [1, 10, 4]");
}
