/* Swish v1 (blob) and v2 (field): values against a float64 reference, f16,
 * CUDA against the CPU, serialization (including the committed golden v1
 * blob), corrupt records, bad fields. */
#include <math.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

static prt_tensor_desc desc4(prt_dtype t, int64_t a, int64_t b, int64_t c, int64_t d)
{
    prt_tensor_desc x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    x.format = PRT_FORMAT_LINEAR;
    x.dims.nb = 4;
    x.dims.d[0] = a;
    x.dims.d[1] = b;
    x.dims.d[2] = c;
    x.dims.d[3] = d;
    return x;
}

static prt_op_config cfg_for(prt_device dev, int32_t threads)
{
    prt_op_config c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.abi_version = PRT_ABI_VERSION;
    c.device = dev;
    c.nb_threads = threads;
    return c;
}

/* Deterministic inputs in [-12, 12], with exact zeros and some large values. */
static void make_input(float *x, int64_t n)
{
    uint32_t s = 12345u;
    int64_t i;
    for (i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = ((float)(s >> 8) / 16777216.0f) * 24.0f - 12.0f;
    }
    if (n > 3) {
        x[0] = 0.0f;
        x[1] = -0.0f;
        x[2] = 30.0f;
        x[3] = -30.0f;
    }
}

static double ref1(double x, double beta, double w)
{
    return w * x / (1.0 + exp(-beta * x));
}

static prt_op *make_op(const char *version, float beta, const float *w, int64_t nw)
{
    prt_op *op = NULL;
    prt_field f[2] = {{"beta", &beta, PRT_FIELD_FLOAT32, 0, 1}, {"weights", w, PRT_FIELD_FLOAT32, 0, nw}};
    prt_fields fc = {f, w ? 2 : 1, 0};
    prt_status s = prt_op_create(prt_registry_global(), "Swish", version, "", &fc, &op);
    CHECK_MSG(s == PRT_OK, "create Swish v%s: %s", version, prt_op_last_error(NULL));
    return op;
}

/* Run on the CPU; y gets the result. */
static void run_cpu(prt_op *op, prt_tensor_desc in, const void *x, void *y, int32_t threads)
{
    prt_op_config cfg = cfg_for(PRT_DEVICE_CPU, threads);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    prt_tensor_desc out;
    prt_status s = prt_op_configure(op, &in, 1, &cfg);
    CHECK_MSG(s == PRT_OK, "configure: %s", prt_op_last_error(op));
    CHECK_OK(prt_op_output_desc(op, 0, &out));
    CHECK(prt_dims_equal(&out.dims, &in.dims));
    CHECK_EQ_INT(out.dtype, in.dtype);
    s = prt_op_run(op, ins, outs);
    CHECK_MSG(s == PRT_OK, "run: %s", prt_op_last_error(op));
}

static void check_f32_against_reference(const float *x, const float *y, int64_t n, double beta, const float *w,
                                        int64_t channels, int64_t inner)
{
    int64_t i, bad = 0;
    double worst = 0;
    for (i = 0; i < n; i++) {
        double wc = w ? (double)w[(i / inner) % channels] : 1.0;
        double r = ref1((double)x[i], beta, wc);
        double err = fabs((double)y[i] - r);
        double rel = err / (fabs(r) > 1e-30 ? fabs(r) : 1e-30);
        if (err > 1e-37 && rel > worst) worst = rel;
        if (err > 1e-37 && rel > 1e-5) {
            if (bad++ < 5)
                prt_test_fail(__FILE__, __LINE__, "element %lld: x %.9g y %.9g reference %.17g (rel %.3g)",
                              (long long)i, x[i], y[i], r, rel);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(worst < 1e-5);
}

TEST(both_versions_are_registered_side_by_side)
{
    const prt_plugin_creator *c1 = NULL, *c2 = NULL, *c3 = NULL;
    prt_registry *g = prt_registry_global();
    CHECK_OK(prt_registry_find(g, "Swish", "1", "", &c1, NULL));
    CHECK_OK(prt_registry_find(g, "Swish", "2", NULL, &c2, NULL));
    CHECK_EQ_INT(c1->style, PRT_STYLE_BLOB);
    CHECK_EQ_INT(c2->style, PRT_STYLE_FIELD);
    CHECK(prt_registry_find(g, "Swish", "3", "", &c3, NULL) == PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_registry_last_error(g), "Swish");
}

TEST(cpu_f32_matches_float64_reference)
{
    const int64_t n = 2 * 3 * 7 * 11;
    float *x = malloc(n * 4), *y = malloc(n * 4);
    const float w[3] = {0.5f, -1.25f, 2.0f};
    prt_op *op;
    int64_t i;
    int k;
    make_input(x, n);
    for (k = 0; k < 3; k++) {
        for (i = 0; i < n; i++) y[i] = NAN;
        if (k == 0) op = make_op("1", 1.5f, NULL, 0);
        else if (k == 1) op = make_op("2", 0.75f, NULL, 0);
        else op = make_op("2", -0.5f, w, 3);
        run_cpu(op, desc4(PRT_DTYPE_F32, 2, 3, 7, 11), x, y, k + 1);
        check_f32_against_reference(x, y, n, k == 0 ? 1.5 : k == 1 ? 0.75 : -0.5, k == 2 ? w : NULL, 3, 77);
        prt_op_destroy(op);
    }
    /* default beta is 1 */
    op = NULL;
    CHECK_OK(prt_op_create(prt_registry_global(), "Swish", "1", "", NULL, &op));
    for (i = 0; i < n; i++) y[i] = NAN;
    run_cpu(op, desc4(PRT_DTYPE_F32, 2, 3, 7, 11), x, y, 2);
    check_f32_against_reference(x, y, n, 1.0, NULL, 1, 1);
    prt_op_destroy(op);
    free(x);
    free(y);
}

TEST(large_tensor_uses_the_thread_pool)
{
    const int64_t n = 4 * 16 * 32 * 32; /* 65536: several chunks */
    float *x = malloc(n * 4), *y = malloc(n * 4);
    float w[16];
    prt_op *op;
    int64_t i;
    for (i = 0; i < 16; i++) w[i] = 0.1f * (float)(i + 1);
    make_input(x, n);
    for (i = 0; i < n; i++) y[i] = NAN;
    op = make_op("2", 1.25f, w, 16);
    run_cpu(op, desc4(PRT_DTYPE_F32, 4, 16, 32, 32), x, y, 4);
    check_f32_against_reference(x, y, n, 1.25, w, 16, 1024);
    prt_op_destroy(op);
    free(x);
    free(y);
}

/* |a - b| within one half-precision step of b. */
static int f16_close(float a, double b)
{
    double m = fabs(b), ulp;
    if (m < 6.103515625e-05) ulp = 5.960464477539063e-08; /* subnormal step */
    else ulp = ldexp(1.0, (int)floor(log2(m)) - 10);
    return fabs((double)a - b) <= ulp;
}

TEST(cpu_f16_is_computed_in_f32)
{
    const int64_t n = 2 * 4 * 5 * 6;
    float *xf = malloc(n * 4);
    uint16_t *x = malloc(n * 2), *y = malloc(n * 2);
    const float w[4] = {1.0f, 0.5f, -2.0f, 3.0f};
    int64_t i;
    int k;
    make_input(xf, n);
    for (i = 0; i < n; i++) x[i] = prt_f32_to_f16(xf[i]);
    for (k = 0; k < 2; k++) {
        prt_op *op = k ? make_op("2", 1.5f, w, 4) : make_op("1", 1.5f, NULL, 0);
        for (i = 0; i < n; i++) y[i] = 0x7e00; /* NaN */
        run_cpu(op, desc4(PRT_DTYPE_F16, 2, 4, 5, 6), x, y, 2);
        for (i = 0; i < n; i++) {
            double xv = prt_f16_to_f32(x[i]);
            double r = ref1(xv, 1.5, k ? (double)w[(i / 30) % 4] : 1.0);
            float yv = prt_f16_to_f32(y[i]);
            CHECK_MSG(f16_close(yv, r), "v%d element %lld: x %g y %g reference %.9g", k + 1, (long long)i, xv, yv, r);
        }
        prt_op_destroy(op);
    }
    free(xf);
    free(x);
    free(y);
}

/* Run on CUDA: copy in, run, synchronize, copy out. */
static void run_cuda(prt_op *op, prt_tensor_desc in, const void *x, void *y)
{
    char err[512];
    size_t bytes = (size_t)prt_dims_volume(&in.dims) * prt_dtype_size(in.dtype);
    prt_op_config cfg = cfg_for(PRT_DEVICE_CUDA, 1);
    void *dx = NULL, *dy = NULL;
    const void *ins[1];
    void *outs[1];
    prt_status s;
    CHECK_OK(prt__cuda_malloc(bytes, &dx, err, sizeof err));
    CHECK_OK(prt__cuda_malloc(bytes, &dy, err, sizeof err));
    CHECK_OK(prt__cuda_copy(dx, x, bytes, PRT__H2D, err, sizeof err));
    CHECK_OK(prt__cuda_memset(dy, 0xff, bytes, err, sizeof err)); /* NaN poison */
    s = prt_op_configure(op, &in, 1, &cfg);
    CHECK_MSG(s == PRT_OK, "configure on CUDA: %s", prt_op_last_error(op));
    ins[0] = dx;
    outs[0] = dy;
    s = prt_op_run(op, ins, outs);
    CHECK_MSG(s == PRT_OK, "run on CUDA: %s", prt_op_last_error(op));
    CHECK_OK(prt__cuda_stream_sync(NULL, err, sizeof err));
    CHECK_OK(prt__cuda_copy(y, dy, bytes, PRT__D2H, err, sizeof err));
    prt__cuda_free(dx);
    prt__cuda_free(dy);
}

TEST(cuda_matches_cpu)
{
    const int64_t n = 3 * 5 * 17 * 19;
    float *x = malloc(n * 4), *yc = malloc(n * 4), *yg = malloc(n * 4);
    uint16_t *h = malloc(n * 2), *hc = malloc(n * 2), *hg = malloc(n * 2);
    const float w[5] = {1.5f, -0.25f, 0.0f, 2.0f, 0.75f};
    int64_t i;
    int k;
    if (!prt_test_have_cuda()) {
        SKIP("no CUDA device");
        return;
    }
    make_input(x, n);
    for (i = 0; i < n; i++) h[i] = prt_f32_to_f16(x[i]);
    for (k = 0; k < 3; k++) {
        prt_op *op = k == 0 ? make_op("1", 1.5f, NULL, 0) : k == 1 ? make_op("2", 0.5f, NULL, 0)
                                                                     : make_op("2", 1.0f, w, 5);
        prt_tensor_desc d32 = desc4(PRT_DTYPE_F32, 3, 5, 17, 19), d16 = desc4(PRT_DTYPE_F16, 3, 5, 17, 19);
        run_cpu(op, d32, x, yc, 2);
        run_cuda(op, d32, x, yg);
        for (i = 0; i < n; i++) {
            double tol = 2e-6 * fabs((double)yc[i]) + 1e-30;
            CHECK_MSG(fabs((double)yg[i] - yc[i]) <= tol, "v%d f32 element %lld: cuda %.9g cpu %.9g", k, (long long)i,
                      yg[i], yc[i]);
        }
        check_f32_against_reference(x, yg, n, k == 0 ? 1.5 : k == 1 ? 0.5 : 1.0, k == 2 ? w : NULL, 5, 17 * 19);
        run_cpu(op, d16, h, hc, 2);
        run_cuda(op, d16, h, hg);
        for (i = 0; i < n; i++)
            CHECK_MSG(f16_close(prt_f16_to_f32(hg[i]), prt_f16_to_f32(hc[i])),
                      "v%d f16 element %lld: cuda %g cpu %g", k, (long long)i, prt_f16_to_f32(hg[i]),
                      prt_f16_to_f32(hc[i]));
        prt_op_destroy(op);
    }
    free(x);
    free(yc);
    free(yg);
    free(h);
    free(hc);
    free(hg);
}

/* Serialize, deserialize, and check the copy computes the same. */
static prt_op *round_trip(prt_op *op, uint8_t *buf, size_t cap, size_t *len)
{
    prt_op *back = NULL;
    size_t n = 0;
    CHECK_OK(prt_op_serialize(op, NULL, 0, &n));
    CHECK(n <= cap);
    CHECK_OK(prt_op_serialize(op, buf, cap, len));
    CHECK_EQ_INT(*len, n);
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, n, &back));
    CHECK(back != NULL);
    return back;
}

TEST(v1_serialize_deserialize_round_trip)
{
    uint8_t buf[256], buf2[256];
    size_t len = 0, len2 = 0;
    float x[60], y1[60], y2[60];
    prt_op *op = make_op("1", -2.5f, NULL, 0), *back;
    make_input(x, 60);
    back = round_trip(op, buf, sizeof buf, &len);
    CHECK_EQ_INT(prt_op_style(back), PRT_STYLE_BLOB);
    CHECK(strcmp(prt_op_creator(back)->version, "1") == 0);
    /* the blob at the end: layout byte 1, then beta */
    CHECK_EQ_INT(buf[len - 5], 1);
    {
        float beta;
        memcpy(&beta, buf + len - 4, 4);
        CHECK(beta == -2.5f);
    }
    CHECK_OK(prt_op_serialize(back, buf2, sizeof buf2, &len2));
    CHECK_EQ_INT(len2, len);
    CHECK(memcmp(buf, buf2, len) == 0);
    run_cpu(op, desc4(PRT_DTYPE_F32, 1, 3, 4, 5), x, y1, 1);
    run_cpu(back, desc4(PRT_DTYPE_F32, 1, 3, 4, 5), x, y2, 2);
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    check_f32_against_reference(x, y2, 60, -2.5, NULL, 1, 1);
    prt_op_destroy(op);
    prt_op_destroy(back);
}

static void *load(const char *name, size_t *len)
{
    char path[1024], err[512];
    void *data = NULL;
    snprintf(path, sizeof path, "%s/swish/%s", prt_test_data_dir(), name);
    CHECK_MSG(prt__read_file(path, &data, len, err, sizeof err) == PRT_OK, "%s", err);
    return data;
}

TEST(golden_v1_blob_loads_forever)
{
    size_t blen = 0, rlen = 0, len2 = 0;
    uint8_t *blob = load("swish_v1_beta_1p5.bin", &blen);
    uint8_t *rec = load("swish_v1_beta_1p5.record", &rlen);
    const prt_plugin_creator *c = NULL;
    prt_blob_plugin *p = NULL;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    uint8_t again[16], buf[256];
    prt_op *op = NULL;
    float x[24], y[24];
    CHECK_EQ_INT(blen, 5);
    /* the creator reads the committed bytes ... */
    CHECK_OK(prt_registry_find(prt_registry_global(), "Swish", "1", "", &c, NULL));
    CHECK_OK(c->deserialize_blob(c, blob, blen, &p, &m));
    CHECK_EQ_INT(p->ops->get_serialization_size(p), 5);
    CHECK_OK(p->ops->serialize(p, again, sizeof again));
    CHECK(memcmp(again, blob, 5) == 0); /* ... and writes them back unchanged */
    p->ops->destroy(p);
    /* the whole plugin record: beta 1.5 in the outputs */
    CHECK_OK(prt_op_deserialize(prt_registry_global(), rec, rlen, &op));
    make_input(x, 24);
    run_cpu(op, desc4(PRT_DTYPE_F32, 1, 2, 3, 4), x, y, 1);
    check_f32_against_reference(x, y, 24, 1.5, NULL, 1, 1);
    CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len2));
    CHECK_EQ_INT(len2, rlen);
    CHECK(memcmp(buf, rec, rlen) == 0);
    prt_op_destroy(op);
    prt__free(blob);
    prt__free(rec);
}

TEST(v1_blob_errors)
{
    const prt_plugin_creator *c = NULL;
    prt_blob_plugin *p = NULL;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    uint8_t b[6] = {1, 0, 0, 0xc0, 0x3f, 0};
    CHECK_OK(prt_registry_find(prt_registry_global(), "Swish", "1", "", &c, NULL));
    CHECK(c->deserialize_blob(c, b, 4, &p, &m) == PRT_STATUS_TRUNCATED);
    CHECK_STR_CONTAINS(msg, "must be 5 bytes");
    CHECK(c->deserialize_blob(c, b, 6, &p, &m) == PRT_STATUS_BAD_FORMAT);
    b[0] = 2;
    CHECK(c->deserialize_blob(c, b, 5, &p, &m) == PRT_STATUS_VERSION_MISMATCH);
    CHECK_STR_CONTAINS(msg, "layout 2");
    b[0] = 1;
    b[3] = 0x80;
    b[4] = 0x7f; /* +inf */
    b[1] = b[2] = 0;
    CHECK(c->deserialize_blob(c, b, 5, &p, &m) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(msg, "finite");
    CHECK(p == NULL);
}

TEST(v2_fields_round_trip)
{
    const float w[3] = {0.25f, -1.0f, 4.0f};
    uint8_t buf[512], buf2[512];
    size_t len = 0, len2 = 0;
    float x[3 * 8], y1[3 * 8], y2[3 * 8];
    prt_op *op = make_op("2", 0.625f, w, 3), *back;
    make_input(x, 24);
    back = round_trip(op, buf, sizeof buf, &len);
    CHECK_EQ_INT(prt_op_style(back), PRT_STYLE_FIELD);
    CHECK(strcmp(prt_op_creator(back)->version, "2") == 0);
    CHECK_OK(prt_op_serialize(back, buf2, sizeof buf2, &len2));
    CHECK_EQ_INT(len2, len);
    CHECK(memcmp(buf, buf2, len) == 0);
    run_cpu(op, desc4(PRT_DTYPE_F32, 1, 3, 2, 4), x, y1, 1);
    run_cpu(back, desc4(PRT_DTYPE_F32, 1, 3, 2, 4), x, y2, 1);
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    check_f32_against_reference(x, y2, 24, 0.625, w, 3, 8);
    prt_op_destroy(op);
    prt_op_destroy(back);
    /* without weights */
    op = make_op("2", 2.0f, NULL, 0);
    back = round_trip(op, buf, sizeof buf, &len);
    run_cpu(back, desc4(PRT_DTYPE_F32, 1, 3, 2, 4), x, y2, 1);
    check_f32_against_reference(x, y2, 24, 2.0, NULL, 1, 1);
    prt_op_destroy(op);
    prt_op_destroy(back);
}

TEST(truncated_and_bit_flipped_records_give_errors)
{
    const float w[2] = {1.0f, 2.0f};
    int k;
    for (k = 0; k < 2; k++) {
        prt_op *op = k ? make_op("2", 1.5f, w, 2) : make_op("1", 1.5f, NULL, 0), *back;
        uint8_t buf[512], copy[512];
        size_t len = 0, cut, bit;
        int ok = 0;
        CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len));
        for (cut = 0; cut < len; cut++) {
            back = NULL;
            CHECK_MSG(prt_op_deserialize(prt_registry_global(), buf, cut, &back) != PRT_OK,
                      "v%d: %zu of %zu bytes accepted", k + 1, cut, len);
            CHECK(back == NULL);
            CHECK(prt_op_last_error(NULL)[0] != 0);
        }
        for (bit = 0; bit < len * 8; bit++) {
            memcpy(copy, buf, len);
            copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            back = NULL;
            if (prt_op_deserialize(prt_registry_global(), copy, len, &back) == PRT_OK) {
                ok++; /* a flipped bit inside a float is still a valid plugin */
                prt_op_destroy(back);
            } else {
                CHECK(back == NULL);
                CHECK(prt_op_last_error(NULL)[0] != 0);
            }
        }
        CHECK(ok < (int)(len * 8) / 2);
        prt_op_destroy(op);
    }
}

TEST(bad_fields_have_clear_messages)
{
    const float w[5] = {1, 2, 3, 4, 5};
    prt_op *op = make_op("2", 1.0f, w, 5), *none = NULL;
    prt_op_config cfg = cfg_for(PRT_DEVICE_CPU, 1);
    prt_tensor_desc in = desc4(PRT_DTYPE_F32, 2, 3, 4, 4);
    const char *text = "fast";
    float nan = NAN, beta = 1.0f;
    int32_t ibeta = 2;
    prt_field f;
    prt_fields fc = {&f, 1, 0};
    /* weights length against the channel count, at build time */
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "Swish v2: field \"weights\" has 5 values, but the input has 3 "
                                              "channels (dim 1)");
    in.dims.nb = 1;
    in.dims.d[0] = 5;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "needs an input with a channel dim");
    in = desc4(PRT_DTYPE_F32, 2, 5, 4, 4);
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    in.dtype = PRT_DTYPE_I32;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "input 0 as i32/linear");
    prt_op_destroy(op);

    /* schema errors name the plugin and the field */
    f = (prt_field){"beta", text, PRT_FIELD_CHAR, 0, 4};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "2", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "beta");
    f = (prt_field){"alpha", &beta, PRT_FIELD_FLOAT32, 0, 1};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "1", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "alpha");
    f = (prt_field){"weights", w, PRT_FIELD_FLOAT32, 0, 0};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "2", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "weights");
    f = (prt_field){"beta", &nan, PRT_FIELD_FLOAT32, 0, 1};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "1", "", &fc, &none) != PRT_OK);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "beta");
    CHECK(none == NULL);
    /* an int32 beta is not a float: refused with both types named */
    f = (prt_field){"beta", &ibeta, PRT_FIELD_INT32, 0, 1};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "2", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "beta");
}

TEST(no_gpu_is_a_clear_error)
{
    prt_op *op = make_op("1", 1.0f, NULL, 0);
    prt_op_config cfg = cfg_for(PRT_DEVICE_CUDA, 1);
    prt_tensor_desc in = desc4(PRT_DTYPE_F32, 1, 1, 1, 1);
    if (prt_test_have_cuda()) {
        cfg.cuda_device = 1000;
    }
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_NO_DEVICE);
    CHECK(prt_op_last_error(op)[0] != 0);
    prt_op_destroy(op);
}

/* ONNX's Swish (version "24", field "alpha"): registered beside 1 and 2, which
 * keep their fields; ONNX semantics y = x * sigmoid(alpha * x). */
TEST(v24_is_onnx_swish_with_alpha)
{
    const prt_plugin_creator *c = NULL;
    float alpha = -0.75f, beta = 2.0f, x[2 * 3 * 4], y[2 * 3 * 4];
    prt_field f = {"alpha", &alpha, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    prt_op *op = NULL, *back;
    uint8_t buf[512];
    size_t len = 0;
    int i;
    CHECK_OK(prt_registry_find(prt_registry_global(), "Swish", "24", "", &c, NULL));
    CHECK_EQ_INT(c->style, PRT_STYLE_FIELD);
    make_input(x, 24);
    CHECK_OK(prt_op_create(prt_registry_global(), "Swish", "24", "", &fc, &op));
    run_cpu(op, desc4(PRT_DTYPE_F32, 2, 3, 2, 2), x, y, 2);
    check_f32_against_reference(x, y, 24, -0.75, NULL, 1, 1);
    /* saved as its field "alpha" and loaded as version 24 again */
    back = round_trip(op, buf, sizeof buf, &len);
    CHECK(strcmp(prt_op_creator(back)->version, "24") == 0);
    for (i = 0; i < 24; i++) y[i] = NAN;
    run_cpu(back, desc4(PRT_DTYPE_F32, 2, 3, 2, 2), x, y, 1);
    check_f32_against_reference(x, y, 24, -0.75, NULL, 1, 1);
    prt_op_destroy(back);
    prt_op_destroy(op);
    /* default alpha is 1 */
    op = NULL;
    CHECK_OK(prt_op_create(prt_registry_global(), "Swish", "24", "", NULL, &op));
    run_cpu(op, desc4(PRT_DTYPE_F32, 2, 3, 2, 2), x, y, 1);
    check_f32_against_reference(x, y, 24, 1.0, NULL, 1, 1);
    prt_op_destroy(op);
    /* version 24 takes no "beta" or "weights"; version 2 still takes "beta" */
    op = NULL;
    f = (prt_field){"beta", &beta, PRT_FIELD_FLOAT32, 0, 1};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "24", "", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "beta");
    CHECK(op == NULL);
    CHECK_OK(prt_op_create(prt_registry_global(), "Swish", "2", "", &fc, &op));
    run_cpu(op, desc4(PRT_DTYPE_F32, 2, 3, 2, 2), x, y, 1);
    check_f32_against_reference(x, y, 24, 2.0, NULL, 1, 1);
    prt_op_destroy(op);
    op = NULL;
    alpha = INFINITY;
    f = (prt_field){"alpha", &alpha, PRT_FIELD_FLOAT32, 0, 1};
    CHECK(prt_op_create(prt_registry_global(), "Swish", "24", "", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "Swish v24: field \"alpha\" must be finite");
    CHECK(op == NULL);
}
