/* tests/runtime/test_engine.c - network -> build -> plan -> load -> run. */
#include <pthread.h>

#include "core/checked.h"
#include "core/core.h"
#include "engine/plan.h"
#include "fakeplugins.h"
#include "plugrt/engine.h"
#include "plugrt/op.h"
#include "plugrt/trace.h"
#include "prt_test.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
/* The runner ends each case with _exit, which skips LeakSanitizer's own
 * check: ask for it explicitly where a case has released everything. */
#define NO_LEAKS() CHECK_MSG(__lsan_do_recoverable_leak_check() == 0, "memory leaked (report above)")
#else
#define NO_LEAKS() ((void)0)
#endif

/* Destroy what a case made (any may be NULL), then check nothing leaked. */
static void release_all(prt_context *ctx, prt_engine *e, prt_network *net, prt_registry *r)
{
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    NO_LEAKS();
}

static prt_dims dims_of(int nb, const int64_t *d)
{
    prt_dims r;
    int i;
    memset(&r, 0, sizeof r);
    r.nb = nb;
    for (i = 0; i < nb; i++) r.d[i] = d[i];
    return r;
}
#define DIMS(...) dims_of((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

static prt_field f32_field(const char *name, const float *v)
{
    prt_field f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.data = v;
    f.type = PRT_FIELD_FLOAT32;
    f.count = 1;
    return f;
}

static prt_field i32_field(const char *name, const int32_t *v)
{
    prt_field f;
    memset(&f, 0, sizeof f);
    f.name = name;
    f.data = v;
    f.type = PRT_FIELD_INT32;
    f.count = 1;
    return f;
}

static const float k_scale = 1.5f, k_bias = 0.25f;

/* x [2, 3, 4] -> TestScale(1.5, 0.25) -> y */
static prt_network *scale_net(prt_registry *r, const char *version)
{
    prt_network *net = NULL;
    prt_field f[2];
    prt_fields fc;
    const char *in[] = {"x"}, *out[] = {"y"};
    prt_dims d = DIMS(2, 3, 4);
    f[0] = f32_field("scale", &k_scale);
    f[1] = f32_field("bias", &k_bias);
    fc.fields = f;
    fc.nb = 2;
    fc.reserved_ = 0;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "scale1", "TestScale", version, "", &fc, in, 1, out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

static void fill(float *x, int64_t n, unsigned seed)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((int)(seed >> 16) % 2001 - 1000) / 256.0f;
    }
}

static prt_engine *build(prt_network *net, const prt_builder_config *cfg, prt_registry *r)
{
    prt_engine *e = NULL;
    char err[1024] = "";
    prt_status s = prt_engine_build(net, cfg, r, &e, err, sizeof err);
    CHECK_MSG(s == PRT_OK, "build failed: %s", err);
    return e;
}

static prt_engine *reload(prt_engine *e, prt_registry *r)
{
    size_t len = 0;
    void *buf;
    prt_engine *e2 = NULL;
    char err[1024] = "";
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    buf = malloc(len);
    CHECK_OK(prt_engine_serialize(e, buf, len, &len));
    CHECK_MSG(prt_engine_deserialize(r, buf, len, &e2, err, sizeof err) == PRT_OK, "load failed: %s", err);
    free(buf);
    return e2;
}

TEST(roundtrip_blob_style_matches_direct_run)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = scale_net(r, "1");
    prt_engine *e = build(net, NULL, r), *e2;
    prt_context *ctx = NULL;
    float x[24], y[24], yop[24];
    int i;
    prt_op *op = NULL;
    prt_field f[2];
    prt_fields fc = {f, 2, 0};
    prt_tensor_desc d;
    const void *ins[1];
    void *outs[1];

    fill(x, 24, 7);
    e2 = reload(e, r);
    prt_engine_destroy(e); /* the reloaded engine stands alone */
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 24; i++) CHECK_NEAR(y[i], (double)x[i] * 1.5 + 0.25, 1e-5 * (fabs((double)x[i] * 1.5) + 1));

    /* The same plugin run directly gives the same bits. */
    f[0] = f32_field("scale", &k_scale);
    f[1] = f32_field("bias", &k_bias);
    CHECK_OK(prt_op_create(r, "TestScale", "1", "", &fc, &op));
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.dims = DIMS(2, 3, 4);
    CHECK_OK(prt_op_configure(op, &d, 1, NULL));
    ins[0] = x;
    outs[0] = yop;
    memset(yop, 0xff, sizeof yop);
    CHECK_OK(prt_op_run(op, ins, outs));
    CHECK(memcmp(y, yop, sizeof y) == 0);
    prt_op_destroy(op);
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_network_destroy(net);
    CHECK_EQ_INT(fake_live_attachments(), 0);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* x [N, 8] + b[8] -> TestAddBias -> TestScale -> out, N dynamic 1..8. */
static prt_network *bias_net(prt_registry *r, float *bvals)
{
    prt_network *net = NULL;
    prt_dims d = DIMS(-1, 8), bd = DIMS(8);
    prt_field f[1];
    prt_fields fc = {f, 1, 0};
    const char *in1[] = {"x", "b"}, *out1[] = {"h"}, *in2[] = {"h"}, *out2[] = {"out"};
    int i;
    for (i = 0; i < 8; i++) bvals[i] = (float)i - 3.5f;
    f[0] = f32_field("scale", &k_scale);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_constant(net, "b", PRT_DTYPE_F32, &bd, bvals, 8 * sizeof(float)));
    CHECK_OK(prt_network_add_layer(net, "bias", "TestAddBias", "1", "", NULL, in1, 2, out1, 1));
    CHECK_OK(prt_network_add_layer(net, "scale", "TestScale", "1", "", &fc, in2, 1, out2, 1));
    CHECK_OK(prt_network_mark_output(net, "out"));
    return net;
}

static void profile_cfg(prt_builder_config *cfg, prt_profile_range *rg, int64_t mn, int64_t op, int64_t mx)
{
    prt_builder_config_init(cfg);
    rg->input = "x";
    rg->min = DIMS(mn, 8);
    rg->opt = DIMS(op, 8);
    rg->max = DIMS(mx, 8);
    cfg->nb_ranges = 1;
    cfg->ranges = rg;
}

TEST(roundtrip_field_style_dynamic_shapes_across_profile)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8], x[64], y[64];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e, *e2;
    prt_context *ctx = NULL;
    prt_dims d;
    int64_t n;
    int i;

    profile_cfg(&cfg, &rg, 1, 4, 8);
    e = build(net, &cfg, r);
    e2 = reload(e, r);
    prt_engine_destroy(e);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    fill(x, 64, 3);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "out", y));
    for (n = 1; n <= 8; n += 3) {
        d = DIMS(n, 8);
        CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
        memset(y, 0xff, sizeof y);
        CHECK_OK(prt_context_execute(ctx));
        CHECK_OK(prt_context_get_shape(ctx, "out", &d));
        CHECK_EQ_INT(d.nb, 2);
        CHECK_EQ_INT(d.d[0], n);
        CHECK_EQ_INT(d.d[1], 8);
        for (i = 0; i < n * 8; i++) {
            double want = ((double)x[i] + (double)b[i % 8]) * 1.5;
            CHECK_NEAR(y[i], want, 1e-5 * (fabs(want) + 1));
        }
        /* Nothing past the output was written. */
        CHECK(isnan(y[n * 8]) || n == 8);
    }
    /* Outside the profile: refused, naming the input, the dim and the range. */
    d = DIMS(9, 8);
    CHECK(prt_context_set_input_shape(ctx, "x", &d) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "\"x\" dim 0 is 9");
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "1..8");
    d = DIMS(0, 8);
    CHECK(prt_context_set_input_shape(ctx, "x", &d) == PRT_STATUS_SHAPE_MISMATCH);
    d = DIMS(2, 7);
    CHECK(prt_context_set_input_shape(ctx, "x", &d) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK(prt_context_set_input_shape(ctx, "nope", &d) == PRT_STATUS_NOT_FOUND);
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(version1_engine_loads_after_version2_is_registered)
{
    prt_registry *r1 = fake_registry(1, 0, 10), *r12 = fake_registry(1, 1, 10);
    prt_network *net = scale_net(r1, "1");
    prt_engine *e = build(net, NULL, r1), *e2;
    prt_context *ctx = NULL;
    float x[24], y[24];
    int i;
    e2 = reload(e, r12);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    fill(x, 24, 11);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 24; i++) CHECK_NEAR(y[i], (double)x[i] * 1.5 + 0.25, 1e-4); /* v1, not v1 + 100 */
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r1);
    prt_registry_destroy(r12);
    NO_LEAKS();
}

TEST(missing_plugin_error_lists_near_misses)
{
    prt_registry *r1 = fake_registry(1, 0, 10), *r2 = fake_registry(0, 1, 10);
    prt_network *net = scale_net(r1, "1");
    prt_engine *e = build(net, NULL, r1), *e2 = (prt_engine *)0x1;
    size_t len = 0;
    void *buf;
    char err[1024] = "";
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    buf = malloc(len);
    CHECK_OK(prt_engine_serialize(e, buf, len, &len));
    CHECK(prt_engine_deserialize(r2, buf, len, &e2, err, sizeof err) == PRT_STATUS_NOT_FOUND);
    CHECK(e2 == (prt_engine *)0x1);
    CHECK_STR_CONTAINS(err, "scale1");
    CHECK_STR_CONTAINS(err, "TestScale");
    CHECK_STR_CONTAINS(err, "near misses");
    CHECK_STR_CONTAINS(err, "v2");
    free(buf);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r1);
    prt_registry_destroy(r2);
    NO_LEAKS();
}

/* x -> TestScale -> TestHalfNeg (f16 only) -> TestScale -> y */
static prt_network *half_net(prt_registry *r, int32_t k)
{
    prt_network *net = NULL;
    prt_dims d = DIMS(4, 5);
    prt_field fs[1], fk[1];
    prt_fields fcs = {fs, 1, 0}, fck = {fk, 1, 0};
    const char *a[] = {"x"}, *b[] = {"h1"}, *c[] = {"h2"}, *o[] = {"y"};
    fs[0] = f32_field("scale", &k_scale);
    fk[0] = i32_field("k", &k);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "s1", "TestScale", "1", "", &fcs, a, 1, b, 1));
    CHECK_OK(prt_network_add_layer(net, "neg", "TestHalfNeg", "1", "", &fck, b, 1, c, 1));
    CHECK_OK(prt_network_add_layer(net, "s2", "TestScale", "1", "", &fcs, c, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

TEST(casts_inserted_around_fp16_only_layer)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = half_net(r, 3);
    prt_engine *e = build(net, NULL, r);
    prt_context *ctx = NULL;
    float x[20], y[20];
    int i, nb_cast = 0;
    for (i = 0; i < prt_engine_nb_layers(e); i++)
        if (strstr(prt_engine_layer_name(e, i), ":to_")) nb_cast++;
    CHECK_EQ_INT(prt_engine_nb_layers(e), 5);
    CHECK_EQ_INT(nb_cast, 2);
    CHECK(strcmp(prt_engine_layer_name(e, 1), "h1:to_f16") == 0);
    CHECK(strcmp(prt_engine_layer_name(e, 2), "neg") == 0);
    CHECK(strcmp(prt_engine_layer_name(e, 3), "h2:to_f32") == 0);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    fill(x, 20, 5);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 20; i++) {
        /* Exactly what the f16 hop does: round to half, negate times 3 in
         * float, round to half, back to float, scale. */
        float h1 = x[i] * 1.5f + 0.0f;
        float h = prt_f16_to_f32(prt_f32_to_f16(h1));
        float n = prt_f16_to_f32(prt_f32_to_f16(-3.0f * h));
        float want = n * 1.5f + 0.0f;
        CHECK_MSG(y[i] == want, "y[%d] = %.9g, want %.9g", i, y[i], want);
    }
    release_all(ctx, e, net, r);
}

TEST(fp16_precision_runs_flexible_layers_in_half_and_returns_f32)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8], x[16], y[16];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    prt_context *ctx = NULL;
    prt_io_desc io;
    prt_dims d = DIMS(2, 8);
    int i;
    profile_cfg(&cfg, &rg, 1, 2, 4);
    cfg.precision = PRT_PRECISION_FP16;
    e = build(net, &cfg, r);
    CHECK_EQ_INT(prt_engine_precision(e), PRT_PRECISION_FP16);
    CHECK_OK(prt_engine_io(e, prt_engine_find_io(e, "out"), &io));
    CHECK_EQ_INT(io.dtype, PRT_DTYPE_F32);
    CHECK_EQ_INT(io.mode, PRT_IO_OUTPUT);
    /* Casts for x and b into f16, then f16 back to f32 for TestScale. */
    CHECK(strcmp(prt_engine_layer_name(e, 0), "x:to_f16") == 0);
    CHECK(strcmp(prt_engine_layer_name(e, 1), "b:to_f16") == 0);
    CHECK(strcmp(prt_engine_layer_name(e, 2), "bias") == 0);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    fill(x, 16, 9);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "out", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 16; i++) {
        float hx = prt_f16_to_f32(prt_f32_to_f16(x[i]));
        float hb = prt_f16_to_f32(prt_f32_to_f16(b[i % 8]));
        float want = prt_f16_to_f32(prt_f32_to_f16(hx + hb)) * 1.5f;
        CHECK_MSG(y[i] == want, "y[%d] = %.9g, want %.9g", i, y[i], want);
    }
    release_all(ctx, e, net, r);
}

TEST(data_dependent_output_extent_reaches_caller_and_next_layer)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(10);
    prt_field fs[1];
    prt_fields fcs = {fs, 1, 0};
    const char *a[] = {"x"}, *b[] = {"pos"}, *o[] = {"y"};
    prt_engine *e;
    prt_context *ctx = NULL;
    float x[10] = {1, -2, 3, -4, 5, 0, 7, -8, 9, -10}, y[10];
    size_t bytes = 0;
    int i;
    fs[0] = f32_field("scale", &k_scale);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "compact", "TestCompact", "1", "", NULL, a, 1, b, 1));
    CHECK_OK(prt_network_add_layer(net, "s", "TestScale", "1", "", &fcs, b, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    e = build(net, NULL, r);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_buffer_size(ctx, "y", &bytes));
    CHECK_EQ_INT(bytes, 40); /* the upper bound */
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_context_execute(ctx));
    CHECK_OK(prt_context_get_shape(ctx, "y", &d));
    CHECK_EQ_INT(d.nb, 1);
    CHECK_EQ_INT(d.d[0], 5);
    CHECK(y[0] == 1.5f && y[1] == 4.5f && y[2] == 7.5f && y[3] == 10.5f && y[4] == 13.5f);
    for (i = 5; i < 10; i++) CHECK(isnan(y[i]));
    release_all(ctx, e, net, r);
}

/* ---- concurrency ------------------------------------------------------------ */

typedef struct worker {
    prt_context *ctx[2];
    float x[64 * 8];
    float y[2][64 * 8];
    int ok;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    int it, k;
    w->ok = 1;
    for (it = 0; it < 100 && w->ok; it++)
        for (k = 0; k < 2; k++)
            if (prt_context_execute(w->ctx[k]) != PRT_OK) w->ok = 0;
    return NULL;
}

TEST(eight_contexts_on_four_threads_identical_outputs)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8], ref[64 * 8];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    prt_context_config cc;
    worker w[4];
    pthread_t th[4];
    prt_dims d = DIMS(64, 8);
    int t, k, i;
    profile_cfg(&cfg, &rg, 1, 64, 64);
    e = build(net, &cfg, r);
    prt_context_config_init(&cc);
    cc.nb_threads = 2;
    memset(w, 0, sizeof w);
    fill(ref, 64 * 8, 1);
    for (t = 0; t < 4; t++) {
        memcpy(w[t].x, ref, sizeof ref);
        for (k = 0; k < 2; k++) {
            CHECK_OK(prt_context_create(e, &cc, &w[t].ctx[k]));
            CHECK_OK(prt_context_set_input_shape(w[t].ctx[k], "x", &d));
            CHECK_OK(prt_context_set_tensor(w[t].ctx[k], "x", w[t].x));
            CHECK_OK(prt_context_set_tensor(w[t].ctx[k], "out", w[t].y[k]));
        }
    }
    for (t = 0; t < 4; t++) pthread_create(&th[t], NULL, worker_main, &w[t]);
    for (t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (i = 0; i < 64 * 8; i++) ref[i] = (ref[i] + b[i % 8]) * 1.5f;
    for (t = 0; t < 4; t++) {
        CHECK(w[t].ok);
        for (k = 0; k < 2; k++) {
            CHECK(memcmp(w[t].y[k], w[0].y[0], sizeof w[t].y[k]) == 0);
            prt_context_destroy(w[t].ctx[k]);
        }
    }
    for (i = 0; i < 64 * 8; i++) CHECK_NEAR(w[0].y[0][i], ref[i], 1e-5 * (fabs(ref[i]) + 1));
    CHECK_EQ_INT(fake_live_attachments(), 0);
    release_all(NULL, e, net, r);
}

/* ---- plans ---------------------------------------------------------------------- */

static void *plan_bytes(prt_engine *e, size_t *len)
{
    void *buf;
    CHECK_OK(prt_engine_serialize(e, NULL, 0, len));
    buf = malloc(*len);
    CHECK_OK(prt_engine_serialize(e, buf, *len, len));
    return buf;
}

TEST(identical_builds_give_byte_identical_plans)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8];
    prt_network *n1 = bias_net(r, b), *n2 = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e1, *e2;
    size_t l1, l2;
    void *p1, *p2;
    profile_cfg(&cfg, &rg, 1, 4, 8);
    e1 = build(n1, &cfg, r);
    e2 = build(n2, &cfg, r);
    p1 = plan_bytes(e1, &l1);
    p2 = plan_bytes(e2, &l2);
    CHECK_EQ_INT(l1, l2);
    CHECK(memcmp(p1, p2, l1) == 0);
    CHECK(memcmp(p1, "PLUGRTPL", 8) == 0);
    free(p1);
    free(p2);
    prt_engine_destroy(e1);
    prt_engine_destroy(e2);
    prt_network_destroy(n1);
    prt_network_destroy(n2);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* Rewrite a plan through its parsed form: `edit` changes the description,
 * the writer recomputes the checksum, and loading must refuse it. */
static void refuse_edited(prt_registry *r, const void *plan, size_t len, void (*edit)(prt__plan *), const char *want)
{
    prt__plan *p = NULL;
    uint8_t *bytes = NULL;
    size_t blen = 0;
    char err[1024] = "";
    prt_engine *e = (prt_engine *)0x1;
    CHECK_OK(prt__plan_read(plan, len, &p, err, sizeof err));
    if (!p) return;
    edit(p);
    CHECK_OK(prt__plan_write(p, &bytes, &blen, err, sizeof err));
    prt__plan_free(p);
    err[0] = 0;
    CHECK(prt_engine_deserialize(r, bytes, blen, &e, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
    CHECK(e == (prt_engine *)0x1);
    CHECK_STR_CONTAINS(err, want);
    prt__free(bytes);
}

static int32_t tensor_named(const prt__plan *p, const char *name)
{
    int32_t i;
    for (i = 0; i < p->nb_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0) return i;
    return 0;
}

/* "out" is [N, 8]: record 9 columns as its known extent. */
static void edit_extent(prt__plan *p) { p->tensors[tensor_named(p, "out")].dims.d[1] = 9; }
/* ... or make its second extent the batch expression. */
static void edit_expr(prt__plan *p)
{
    prt__ptensor *t = &p->tensors[tensor_named(p, "out")];
    t->expr[1] = t->expr[0];
}
/* ... or record a max shape its expressions do not give. */
static void edit_range(prt__plan *p) { p->tensors[tensor_named(p, "out")].max.d[0] = 7; }
/* The activation "h" moved off its alignment. */
static void edit_offset(prt__plan *p)
{
    p->tensors[tensor_named(p, "h")].offset += 4;
    p->arena_size += 64;
}

TEST(plans_whose_shapes_disagree_with_their_expressions_are_refused)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e, *e2 = NULL;
    size_t len;
    void *plan;
    char err[1024] = "";
    profile_cfg(&cfg, &rg, 1, 4, 8);
    e = build(net, &cfg, r);
    plan = plan_bytes(e, &len);
    /* Unedited, through the same read/write path: loads. */
    {
        prt__plan *p = NULL;
        uint8_t *bytes = NULL;
        size_t blen = 0;
        CHECK_OK(prt__plan_read(plan, len, &p, err, sizeof err));
        CHECK_OK(prt__plan_write(p, &bytes, &blen, err, sizeof err));
        CHECK_MSG(prt_engine_deserialize(r, bytes, blen, &e2, err, sizeof err) == PRT_OK, "%s", err);
        prt_engine_destroy(e2);
        prt__plan_free(p);
        prt__free(bytes);
    }
    refuse_edited(r, plan, len, edit_extent, "tensor \"out\" dim 1: its expression gives 8 at the profile's min");
    refuse_edited(r, plan, len, edit_expr, "tensor \"out\" dim 1: its expression gives 1 at the profile's min");
    refuse_edited(r, plan, len, edit_range, "tensor \"out\" dim 0: its expression gives 8 at the profile's max");
    refuse_edited(r, plan, len, edit_offset, "activation \"h\" is at arena offset");
    free(plan);
    release_all(NULL, e, net, r);
}

/* TestScale's record ends with its 12-byte blob (scale, bias, crop): make
 * the plugin crop one row, which the plan's shapes do not say. */
static void edit_scale_crop(prt__plan *p)
{
    prt__precord *rc = &p->records[p->layers[0].plugin];
    uint8_t *q = rc->data + rc->len - 4;
    q[0] = 1;
    q[1] = q[2] = q[3] = 0;
}
/* ... or make its output f16 in the plan (the plugin gives f32 for f32). */
static void edit_out_dtype(prt__plan *p) { p->tensors[tensor_named(p, "y")].dtype = PRT_DTYPE_F16; }

/* A plugin record that deserializes but disagrees with the plan's tensors
 * is refused at load, naming the layer and both shapes. */
TEST(plugin_that_disagrees_with_the_plan_is_refused_at_load)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = scale_net(r, "1");
    prt_engine *e = build(net, NULL, r);
    size_t len;
    void *plan = plan_bytes(e, &len);
    refuse_edited(r, plan, len, edit_scale_crop,
                  "layer \"scale1\" (TestScale v1): the plugin gives output 0 \"y\" the shape [1, 3, 4] at the "
                  "profile's min input shapes, the plan records [2, 3, 4]");
    refuse_edited(r, plan, len, edit_out_dtype,
                  "layer \"scale1\" (TestScale v1): the plugin makes output 0 \"y\" f32, the plan records f16");
    free(plan);
    release_all(NULL, e, net, r);
}

/* A plan whose memory plan asks for more than the size limit is refused
 * at load, naming the limit. */
TEST(arena_larger_than_the_size_limit_is_refused_at_load)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = scale_net(r, "1");
    prt_engine *e = build(net, NULL, r), *e2 = NULL;
    prt_context *ctx = (prt_context *)0x1;
    prt__plan *p = NULL;
    uint8_t *bytes = NULL;
    size_t len, blen = 0;
    void *plan = plan_bytes(e, &len);
    char err[1024] = "";
    CHECK_OK(prt__plan_read(plan, len, &p, err, sizeof err));
    p->arena_size = UINT64_MAX - 4095;
    CHECK_OK(prt__plan_write(p, &bytes, &blen, err, sizeof err));
    CHECK_EQ_INT(prt_engine_deserialize(r, bytes, blen, &e2, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK(e2 == NULL);
    CHECK(ctx == (prt_context *)0x1);
    CHECK_STR_CONTAINS(err, "arena of 18446744073709547520 bytes");
    CHECK_STR_CONTAINS(err, "larger than the limit of 2^48 bytes (256 TiB)");
    prt__plan_free(p);
    prt__free(bytes);
    free(plan);
    release_all(NULL, e, net, r);
}

/* A plan built while a plugin needed 64 workspace bytes, loaded after it
 * needs 40000: the context allocates what the plugin asks for now (the
 * plugin writes all of it; ASan sees any overflow). */
TEST(workspace_that_grew_since_the_build_is_allocated_at_load)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(16);
    const char *a[] = {"x"}, *o[] = {"y"};
    prt_engine *e, *e2;
    prt_context *ctx = NULL;
    float x[16], y[16];
    int i;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "grow", "TestWsGrow", "1", "", NULL, a, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    fake_set_workspace_need(64);
    e = build(net, NULL, r);
    CHECK(prt_engine_workspace_size(e) >= 64 && prt_engine_workspace_size(e) < 40000);
    fake_set_workspace_need(40000);
    e2 = reload(e, r);
    CHECK(prt_engine_workspace_size(e2) >= 40000);
    /* The plan's bytes are unchanged: it still records the old size. */
    {
        size_t l1 = 0, l2 = 0;
        void *p1 = plan_bytes(e, &l1), *p2 = plan_bytes(e2, &l2);
        CHECK(l1 == l2 && memcmp(p1, p2, l1) == 0);
        free(p1);
        free(p2);
    }
    fill(x, 16, 7);
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 16; i++) CHECK(y[i] == x[i]);
    prt_context_destroy(ctx);
    /* Beyond the plan's workspace limit it must be built again. */
    prt_engine_destroy(e2);
    {
        prt_builder_config cfg;
        prt_engine *e3, *e4 = (prt_engine *)0x1;
        char err[1024] = "";
        size_t len;
        void *plan;
        prt_builder_config_init(&cfg);
        cfg.workspace_limit = 1024;
        fake_set_workspace_need(64);
        e3 = build(net, &cfg, r);
        plan = plan_bytes(e3, &len);
        fake_set_workspace_need(40000);
        CHECK(prt_engine_deserialize(r, plan, len, &e4, err, sizeof err) == PRT_STATUS_OUT_OF_MEMORY);
        CHECK(e4 == (prt_engine *)0x1);
        CHECK_STR_CONTAINS(err, "layer \"grow\" (TestWsGrow v1): the plugin now needs 40000 workspace bytes");
        CHECK_STR_CONTAINS(err, "workspace limit is 1024; build the plan again");
        free(plan);
        prt_engine_destroy(e3);
    }
    fake_set_workspace_need(64);
    release_all(NULL, e, net, r);
}

/* x [10] -> TestDevCount(k=4) -> c -> TestCopyF32 -> y, or, with
 * `last`, x -> TestDevCount -> y. */
static prt_engine *devcount_engine(prt_registry *r, prt_device dev, int last)
{
    prt_network *net = NULL;
    prt_dims d = DIMS(10);
    const int32_t k = 4;
    prt_field f[1];
    prt_fields fc = {f, 1, 0};
    const char *a[] = {"x"}, *c[] = {"c"}, *o[] = {"y"};
    prt_builder_config cfg;
    prt_engine *e;
    f[0] = i32_field("k", &k);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "count", "TestDevCount", "1", "", &fc, a, 1, last ? o : c, 1));
    if (!last) CHECK_OK(prt_network_add_layer(net, "copy", "TestCopyF32", "1", "", NULL, c, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    cfg.device = dev;
    e = build(net, &cfg, r);
    prt_network_destroy(net);
    return e;
}

TEST(data_dependent_extent_by_set_output_dims_on_cpu)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_engine *e = devcount_engine(r, PRT_DEVICE_CPU, 0);
    prt_context *ctx = NULL;
    float x[10], y[10];
    prt_dims d;
    int i;
    fill(x, 10, 3);
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    CHECK_OK(prt_context_get_shape(ctx, "y", &d));
    CHECK_EQ_INT(d.nb, 1);
    CHECK_EQ_INT(d.d[0], 4);
    for (i = 0; i < 4; i++) CHECK(y[i] == x[i]);
    for (i = 4; i < 10; i++) CHECK(isnan(y[i])); /* the copy layer saw 4 elements */
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* CUDA: the extent is written to device memory and reported with
 * set_output_extent_device; the next layer (a copy of exactly its input's
 * volume) and the caller see it. With the counting layer last, an async
 * enqueue is followed directly by get_shape, which must wait for it. */
TEST(data_dependent_extent_from_device_memory_on_cuda)
{
#ifndef PLUGRT_HAVE_CUDA
    SKIP("built without CUDA");
#else
    prt_registry *r;
    int last;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    r = fake_registry(1, 0, 10);
    for (last = 0; last < 2; last++) {
        prt_engine *e = devcount_engine(r, PRT_DEVICE_CUDA, last);
        prt_context *ctx = NULL;
        prt_context_config cc;
        float x[10], y[10];
        void *dx = NULL, *dy = NULL;
        prt_dims d;
        int i, it;
        fill(x, 10, 5);
        prt_context_config_init(&cc);
        cc.device = PRT_DEVICE_CUDA;
        CHECK_OK(prt_context_create(e, &cc, &ctx));
        CHECK(cudaMalloc(&dx, sizeof x) == cudaSuccess);
        CHECK(cudaMalloc(&dy, sizeof y) == cudaSuccess);
        CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK_OK(prt_context_set_tensor(ctx, "x", dx));
        CHECK_OK(prt_context_set_tensor(ctx, "y", dy));
        for (it = 0; it < 2; it++) {
            CHECK(cudaMemset(dy, 0xff, sizeof y) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess); /* poisoned before other streams run */
            if (last)
                CHECK_OK(prt_context_enqueue(ctx, NULL));
            else
                CHECK_OK(prt_context_execute(ctx));
            CHECK_OK(prt_context_get_shape(ctx, "y", &d));
            CHECK_EQ_INT(d.nb, 1);
            CHECK_EQ_INT(d.d[0], 4);
            CHECK(cudaStreamSynchronize((cudaStream_t)prt_context_stream(ctx)) == cudaSuccess);
            CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost) == cudaSuccess);
            for (i = 0; i < 4; i++) CHECK(y[i] == x[i]);
            for (i = 4; i < 10; i++) CHECK(isnan(y[i]));
        }
        prt_context_destroy(ctx);
        cudaFree(dx);
        cudaFree(dy);
        prt_engine_destroy(e);
    }
    prt_registry_destroy(r);
#endif
}

TEST(truncated_and_bit_flipped_plans_fail_cleanly)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e, *e2;
    size_t len, n, i;
    uint8_t *p, *q;
    char err[1024];
    unsigned seed = 12345;
    int ok_loads = 0;
    profile_cfg(&cfg, &rg, 1, 4, 8);
    e = build(net, &cfg, r);
    p = plan_bytes(e, &len);
    q = malloc(len);
    for (n = 0; n < len; n++) {
        e2 = (prt_engine *)0x1;
        err[0] = 0;
        CHECK(prt_engine_deserialize(r, p, n, &e2, err, sizeof err) != PRT_OK);
        CHECK(e2 == (prt_engine *)0x1);
        CHECK(err[0] != 0);
    }
    for (i = 0; i < 300; i++) {
        size_t at;
        seed = seed * 1103515245u + 12345u;
        at = (seed >> 8) % len;
        memcpy(q, p, len);
        q[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
        e2 = (prt_engine *)0x1;
        err[0] = 0;
        if (at >= 12 && at < 16) {
            /* The write version is informational: any value >= the read
             * version loads. */
            if (prt_engine_deserialize(r, q, len, &e2, err, sizeof err) == PRT_OK) prt_engine_destroy(e2);
            continue;
        }
        CHECK(prt_engine_deserialize(r, q, len, &e2, err, sizeof err) != PRT_OK);
        CHECK(e2 == (prt_engine *)0x1);
        CHECK(err[0] != 0);
        /* The same flip with a fixed-up checksum reaches the section
         * parsers: they may accept (a weight byte) or refuse, never crash. */
        if (at >= 64) {
            uint64_t sum = prt__plan_checksum(q + 64, len - 64);
            int k;
            for (k = 0; k < 8; k++) q[24 + k] = (uint8_t)(sum >> (8 * k));
            e2 = NULL;
            if (prt_engine_deserialize(r, q, len, &e2, err, sizeof err) == PRT_OK) {
                ok_loads++;
                prt_engine_destroy(e2);
            }
        }
    }
    CHECK(ok_loads < 300);
    /* A newer format is refused by version. */
    memcpy(q, p, len);
    q[8] = PRT__PLAN_WRITE_VERSION + 1;
    CHECK(prt_engine_deserialize(r, q, len, &e2, err, sizeof err) == PRT_STATUS_VERSION_MISMATCH);
    {
        char want[64];
        snprintf(want, sizeof want, "plan needs reader version %u, this is %u", PRT__PLAN_WRITE_VERSION + 1u,
                 PRT__PLAN_WRITE_VERSION);
        CHECK_STR_CONTAINS(err, want);
    }
    /* Reserved header bytes must be zero (checked after the checksum). */
    memcpy(q, p, len);
    q[50] = 1;
    CHECK(prt_engine_deserialize(r, q, len, &e2, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
    free(p);
    free(q);
    release_all(NULL, e, net, r);
}

static void put_u32(uint8_t *b, uint32_t v)
{
    int i;
    for (i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *b, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

/* Append a section with `flags` and fix the header up. */
static uint8_t *with_extra_section(const uint8_t *p, size_t len, uint32_t flags, size_t *out_len)
{
    uint8_t *q = malloc(len + 20);
    memcpy(q, p, len);
    memcpy(q + len, "XTRA", 4);
    put_u32(q + len + 4, flags);
    put_u64(q + len + 8, 4);
    memcpy(q + len + 16, "abcd", 4);
    put_u32(q + 36, (uint32_t)(q[36] | q[37] << 8) + 1);
    put_u64(q + 16, len + 20);
    put_u64(q + 24, prt__plan_checksum(q + 64, len + 20 - 64));
    *out_len = len + 20;
    return q;
}

TEST(unknown_sections_skipped_only_when_optional)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = scale_net(r, "1");
    prt_engine *e = build(net, NULL, r), *e2 = NULL;
    size_t len, l2;
    uint8_t *p = plan_bytes(e, &len), *q;
    char err[1024];
    q = with_extra_section(p, len, 1, &l2);
    CHECK_OK(prt_engine_deserialize(r, q, l2, &e2, err, sizeof err));
    prt_engine_destroy(e2);
    free(q);
    q = with_extra_section(p, len, 0, &l2);
    e2 = NULL;
    CHECK(prt_engine_deserialize(r, q, l2, &e2, err, sizeof err) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "not optional");
    CHECK(e2 == NULL);
    free(q);
    free(p);
    release_all(NULL, e, net, r);
}

TEST(field_that_no_longer_validates_is_refused_at_load)
{
    prt_registry *r10 = fake_registry(1, 0, 10), *r5 = fake_registry(1, 0, 5);
    prt_network *net = half_net(r10, 7);
    prt_engine *e = build(net, NULL, r10), *e2 = NULL;
    size_t len;
    void *p = plan_bytes(e, &len);
    char err[1024] = "";
    CHECK(prt_engine_deserialize(r5, p, len, &e2, err, sizeof err) == PRT_STATUS_INVALID_FIELD);
    CHECK(e2 == NULL);
    CHECK_STR_CONTAINS(err, "neg");
    CHECK_STR_CONTAINS(err, "\"k\"");
    free(p);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r10);
    prt_registry_destroy(r5);
    NO_LEAKS();
}

TEST(activation_memory_is_shared_between_disjoint_lifetimes)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(1000);
    prt_field fs[1];
    prt_fields fcs = {fs, 1, 0};
    const char *names[] = {"x", "a", "b", "c", "d", "y"};
    prt_engine *e;
    prt_context *ctx = NULL;
    float x[1000], y[1000];
    int i;
    fs[0] = f32_field("scale", &k_scale);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    for (i = 0; i < 5; i++) CHECK_OK(prt_network_add_layer(net, NULL, "TestScale", "1", "", &fcs, &names[i], 1, &names[i + 1], 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    e = build(net, NULL, r);
    /* Four activations of 4000 bytes, at most two alive at once. */
    CHECK(prt_engine_arena_size(e) >= 8000);
    CHECK(prt_engine_arena_size(e) < 12000);
    CHECK(prt_engine_workspace_size(e) >= 4000);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    fill(x, 1000, 4);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 1000; i++) {
        float v = x[i];
        int k;
        for (k = 0; k < 5; k++) v = v * 1.5f + 0.0f;
        CHECK(y[i] == v);
    }
    release_all(ctx, e, net, r);
}

TEST(shape_errors_name_the_layer_and_shapes)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(-1, 4);
    int32_t crop = 3;
    prt_field fs[2];
    prt_fields fcs = {fs, 2, 0};
    const char *a[] = {"x"}, *o[] = {"y"};
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e = (prt_engine *)0x1;
    char err[1024] = "";
    fs[0] = f32_field("scale", &k_scale);
    fs[1] = i32_field("crop", &crop);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "cropper", "TestScale", "1", "", &fcs, a, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    rg.input = "x";
    rg.min = DIMS(2, 4);
    rg.opt = DIMS(4, 4);
    rg.max = DIMS(8, 4);
    cfg.nb_ranges = 1;
    cfg.ranges = &rg;
    CHECK(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK(e == (prt_engine *)0x1);
    CHECK_STR_CONTAINS(err, "cropper");
    CHECK_STR_CONTAINS(err, "is -1 at the profile's min shapes (x [2, 4])");
    /* No profile for a dynamic input. */
    CHECK(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "input \"x\" has dynamic dims");
    prt_network_destroy(net);
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(network_errors_name_layer_and_tensor)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(4);
    const char *a[] = {"x"}, *bad[] = {"nothere"}, *o[] = {"y"}, *o2[] = {"x"};
    prt_field fs[1];
    prt_fields fcs = {fs, 1, 0};
    int32_t wrong = 1;
    fs[0] = f32_field("scale", &k_scale);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d) == PRT_STATUS_ALREADY_EXISTS);
    CHECK(prt_network_add_layer(net, "l1", "TestScale", "1", "", &fcs, bad, 1, o, 1) == PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_network_last_error(net), "layer \"l1\": input 0 names tensor \"nothere\"");
    CHECK(prt_network_add_layer(net, "l1", "TestScale", "1", "", &fcs, a, 1, o2, 1) == PRT_STATUS_ALREADY_EXISTS);
    CHECK(prt_network_add_layer(net, "l1", "NoSuchPlugin", "1", "", &fcs, a, 1, o, 1) == PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(prt_network_last_error(net), "l1");
    fs[0].data = &wrong;
    fs[0].type = PRT_FIELD_INT32;
    CHECK(prt_network_add_layer(net, "l1", "TestScale", "1", "", &fcs, a, 1, o, 1) != PRT_OK);
    CHECK_STR_CONTAINS(prt_network_last_error(net), "scale");
    CHECK_EQ_INT(prt_network_nb_layers(net), 0);
    CHECK(prt_network_mark_output(net, "x") == PRT_STATUS_INVALID_ARGUMENT);
    CHECK(prt_network_mark_output(net, "y") == PRT_STATUS_NOT_FOUND);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* ---- lifecycle ------------------------------------------------------------------ */

typedef struct trace_buf {
    char lines[256][96];
    int n;
} trace_buf;

static void on_trace(void *user, const char *line)
{
    trace_buf *t = user;
    if (t->n < 256) snprintf(t->lines[t->n++], sizeof t->lines[0], "%s", line);
}

static void check_trace(const trace_buf *t, const char *const *want, int nw)
{
    int i;
    for (i = 0; i < nw && i < t->n; i++)
        CHECK_MSG(strcmp(t->lines[i], want[i]) == 0, "trace line %d: got \"%s\", want \"%s\"", i, t->lines[i], want[i]);
    CHECK_EQ_INT(t->n, nw);
    if (t->n != nw)
        for (i = 0; i < t->n; i++) fprintf(stderr, "    got: %s\n", t->lines[i]);
}

/* The documented order (docs/lifecycle.md) for a one-layer engine that is
 * built, serialized, loaded, run twice with one shape, and torn down. */
static void lifecycle_run(prt_registry *r, prt_network *net, trace_buf *t)
{
    prt_engine *e, *e2;
    prt_context *ctx = NULL;
    float x[64], y[64];
    int32_t nio = 0;
    memset(x, 0, sizeof x);
    prt_set_trace_callback(on_trace, t);
    e = build(net, NULL, r);
    e2 = reload(e, r);
    prt_engine_destroy(e);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    nio = prt_engine_nb_io(e2);
    CHECK_EQ_INT(nio, 2);
    CHECK_OK(prt_context_set_tensor(ctx, prt_engine_find_io(e2, "x") == 0 ? "x" : "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    CHECK_OK(prt_context_execute(ctx));
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_set_trace_callback(NULL, NULL);
}

TEST(lifecycle_order_blob_style)
{
    static const char *const want[] = {
        /* build */
        "scale1: create_blob", "scale1: get_nb_outputs", "scale1: get_output_dims", "scale1: get_output_data_types",
        "scale1: get_output_data_types", "scale1: supports_format_combination", "scale1: supports_format_combination",
        "scale1: configure_plugin", "scale1: get_workspace_size",
        /* serialize (counted, then written) */
        "scale1: get_serialization_size", "scale1: get_serialization_size", "scale1: serialize",
        /* build plugin destroyed, plan loaded for the built engine (re-created,
         * then asked again for its outputs and workspace) */
        "scale1: destroy", "scale1: deserialize_blob", "scale1: get_serialization_size",
        "scale1: get_nb_outputs", "scale1: get_output_data_types", "scale1: get_output_dims",
        "scale1: supports_format_combination", "scale1: supports_format_combination",
        "scale1: configure_plugin", "scale1: get_workspace_size",
        /* the reload, then the built engine destroyed */
        "scale1: deserialize_blob", "scale1: get_serialization_size",
        "scale1: get_nb_outputs", "scale1: get_output_data_types", "scale1: get_output_dims",
        "scale1: supports_format_combination", "scale1: supports_format_combination",
        "scale1: configure_plugin", "scale1: get_workspace_size", "scale1: destroy",
        /* context */
        "scale1: clone", "scale1: attach_to_context", "scale1: initialize",
        /* two runs with one shape (the output shapes asked again first) */
        "scale1: get_output_dims", "scale1: configure_plugin", "scale1: enqueue", "scale1: enqueue",
        /* context destroy, engine destroy */
        "scale1: terminate", "scale1: detach_from_context", "scale1: destroy", "scale1: destroy"};
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = scale_net(r, "1");
    trace_buf *t = calloc(1, sizeof *t);
    lifecycle_run(r, net, t);
    check_trace(t, want, (int)(sizeof want / sizeof want[0]));
    free(t);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

TEST(lifecycle_order_field_style)
{
    static const char *const want[] = {
        "neg: create_field(build)", "neg: get_nb_outputs", "neg: get_output_shapes", "neg: get_output_data_types",
        "neg: get_output_data_types", "neg: supports_format_combination", "neg: supports_format_combination",
        "neg: configure", "neg: get_workspace_size",
        "neg: get_fields_to_serialize", "neg: get_fields_to_serialize",
        "neg: destroy", "neg: create_field(runtime)",
        "neg: get_nb_outputs", "neg: get_output_data_types", "neg: get_output_shapes",
        "neg: supports_format_combination", "neg: supports_format_combination", "neg: get_workspace_size",
        "neg: create_field(runtime)",
        "neg: get_nb_outputs", "neg: get_output_data_types", "neg: get_output_shapes",
        "neg: supports_format_combination", "neg: supports_format_combination", "neg: get_workspace_size",
        "neg: destroy",
        "neg: attach_to_context",
        "neg: get_output_shapes", "neg: on_shape_change", "neg: enqueue", "neg: enqueue",
        "neg: destroy", "neg: destroy"};
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_dims d = DIMS(4);
    const char *a[] = {"x"}, *o[] = {"y"};
    trace_buf *t = calloc(1, sizeof *t);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F16, &d));
    CHECK_OK(prt_network_add_layer(net, "neg", "TestHalfNeg", "1", "", NULL, a, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    lifecycle_run(r, net, t);
    check_trace(t, want, (int)(sizeof want / sizeof want[0]));
    free(t);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

/* ---- JSON ---------------------------------------------------------------------- */

static const char *k_json =
    "{\n"
    "  \"name\": \"test\",\n"
    "  \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 8]}],\n"
    "  \"constants\": [{\"name\": \"b\", \"dtype\": \"f32\", \"dims\": [8],\n"
    "                  \"values\": [0, 1, 2, 3, 4, 5, 6, 7]}],\n"
    "  \"layers\": [\n"
    "    {\"name\": \"bias\", \"plugin\": \"TestAddBias\", \"inputs\": [\"x\", \"b\"], \"outputs\": [\"h\"]},\n"
    "    {\"name\": \"scale\", \"plugin\": \"TestScale\", \"version\": \"1\",\n"
    "     \"fields\": {\"scale\": 2, \"bias\": {\"type\": \"float32\", \"value\": 0.5}},\n"
    "     \"inputs\": [\"h\"], \"outputs\": [\"y\"]}\n"
    "  ],\n"
    "  \"outputs\": [\"y\"]\n"
    "}\n";

TEST(json_network_builds_and_runs)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    char err[1024] = "";
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    prt_context *ctx = NULL;
    float x[16], y[16];
    prt_dims d = DIMS(2, 8);
    int i;
    CHECK_MSG(prt_network_from_json(r, k_json, strlen(k_json), NULL, &net, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_network_nb_layers(net), 2);
    profile_cfg(&cfg, &rg, 1, 2, 4);
    e = build(net, &cfg, r);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    fill(x, 16, 2);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    for (i = 0; i < 16; i++) CHECK(y[i] == (x[i] + (float)(i % 8)) * 2.0f + 0.5f);
    release_all(ctx, e, net, r);
}

TEST(json_errors_say_where)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = (prt_network *)0x1;
    char err[1024];
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{", "not valid JSON"},
        {"[]", "JSON object"},
        {"{\"inputs\": [], \"layers\": [], \"outputs\": []}", "\"inputs\" must be a non-empty array"},
        {"{\"inputs\": [{\"name\": \"x\", \"dims\": [2]}], \"layers\": [{\"plugin\": \"Nope\", \"inputs\": [\"x\"], "
         "\"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
         "Nope"},
        {"{\"inputs\": [{\"name\": \"x\", \"dims\": [2]}], \"layers\": [{\"plugin\": \"TestScale\", \"fields\": "
         "{\"scale\": {\"type\": \"int99\", \"value\": 1}}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}], \"outputs\": "
         "[\"y\"]}",
         "field \"scale\": \"type\" must be one of"},
        {"{\"inputs\": [{\"name\": \"x\", \"dims\": [2.5]}], \"layers\": [], \"outputs\": []}", "dim 0 must be an integer"},
        {"{\"inputs\": [{\"name\": \"x\", \"dims\": [2]}], \"constants\": [{\"name\": \"w\", \"file\": \"w.npy\"}], "
         "\"layers\": [], \"outputs\": []}",
         "constant \"w\": npy: cannot open \"w.npy\""},
        {"{\"inputs\": [{\"name\": \"x\", \"dims\": [2]}], \"constants\": [{\"name\": \"w\", \"dims\": [3], "
         "\"values\": [1, 2]}], \"layers\": [], \"outputs\": []}",
         "dims hold 3 elements but \"values\" has 2"},
        {"{\"inputz\": 1}", "unknown key \"inputz\""},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        err[0] = 0;
        CHECK(prt_network_from_json(r, cases[i].json, strlen(cases[i].json), NULL, &net, err, sizeof err) != PRT_OK);
        CHECK(net == (prt_network *)0x1);
        CHECK_STR_CONTAINS(err, cases[i].want);
    }
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* ---- Swish (the bundled plugin, both styles) ------------------------------------ */

static prt_network *swish_net(prt_registry *r)
{
    prt_network *net = NULL;
    char path[1024], err[1024] = "";
    snprintf(path, sizeof path, "%s/networks/swish_small.json", prt_test_data_dir());
    CHECK_MSG(prt_network_load_json(r, path, &net, err, sizeof err) == PRT_OK, "%s", err);
    return net;
}

static void swish_cfg(prt_builder_config *cfg, prt_profile_range *rg, prt_device dev)
{
    prt_builder_config_init(cfg);
    cfg->device = dev;
    rg->input = "x";
    rg->min = DIMS(1, 3, 4, 5);
    rg->opt = DIMS(2, 3, 4, 5);
    rg->max = DIMS(4, 3, 4, 5);
    cfg->nb_ranges = 1;
    cfg->ranges = rg;
}

/* The two Swish layers run directly through prt_op. */
static void swish_direct(prt_registry *r, const float *x, float *y, int64_t n0)
{
    static const float beta1 = 1.0f, beta2 = 1.702f, w[3] = {0.5f, 1.0f, 2.0f};
    prt_field f1[1], f2[2];
    prt_fields c1 = {f1, 1, 0}, c2 = {f2, 2, 0};
    prt_op *o1 = NULL, *o2 = NULL;
    prt_tensor_desc d;
    float *h = malloc((size_t)n0 * 60 * sizeof(float));
    const void *in[1];
    void *out[1];
    f1[0] = f32_field("beta", &beta1);
    f2[0] = f32_field("beta", &beta2);
    f2[1] = f32_field("weights", w);
    f2[1].count = 3;
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.dims = DIMS(n0, 3, 4, 5);
    CHECK_OK(prt_op_create(r, "Swish", "1", "", &c1, &o1));
    CHECK_OK(prt_op_create(r, "Swish", "2", "", &c2, &o2));
    CHECK_OK(prt_op_configure(o1, &d, 1, NULL));
    CHECK_OK(prt_op_configure(o2, &d, 1, NULL));
    in[0] = x;
    out[0] = h;
    CHECK_OK(prt_op_run(o1, in, out));
    in[0] = h;
    out[0] = y;
    CHECK_OK(prt_op_run(o2, in, out));
    prt_op_destroy(o1);
    prt_op_destroy(o2);
    free(h);
}

TEST(swish_json_network_matches_direct_runs)
{
    prt_registry *r = prt_registry_global();
    prt_network *net = swish_net(r);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e, *e2;
    prt_context *ctx = NULL;
    float x[240], y[240], ref[240];
    prt_dims d = DIMS(3, 3, 4, 5);
    int i;
    swish_cfg(&cfg, &rg, PRT_DEVICE_CPU);
    e = build(net, &cfg, r);
    e2 = reload(e, r);
    prt_engine_destroy(e);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    fill(x, 240, 21);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_context_execute(ctx));
    swish_direct(r, x, ref, 3);
    CHECK(memcmp(y, ref, 180 * sizeof(float)) == 0);
    /* And against float64 arithmetic. */
    for (i = 0; i < 180; i++) {
        static const double w[3] = {0.5, 1.0, 2.0};
        double h = x[i] / (1.0 + exp(-(double)x[i]));
        double want = w[(i / 20) % 3] * h / (1.0 + exp(-1.702 * h));
        CHECK_NEAR(y[i], want, 1e-5 * (fabs(want) + 1e-3));
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_network_destroy(net);
    NO_LEAKS();
}

TEST(swish_cuda_eight_contexts_on_four_threads)
{
#ifndef PLUGRT_HAVE_CUDA
    SKIP("built without CUDA");
#else
    prt_registry *r = prt_registry_global();
    prt_network *net;
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    worker w[4];
    pthread_t th[4];
    float x[240], ref[240], got[240], first[240];
    void *dx[4][2], *dy[4][2];
    prt_dims d = DIMS(4, 3, 4, 5);
    int t, k, i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    net = swish_net(r);
    swish_cfg(&cfg, &rg, PRT_DEVICE_CUDA);
    e = build(net, &cfg, r);
    CHECK_EQ_INT(prt_engine_device(e), PRT_DEVICE_CUDA);
    fill(x, 240, 33);
    swish_direct(r, x, ref, 4);
    for (t = 0; t < 4; t++)
        for (k = 0; k < 2; k++) {
            CHECK_OK(prt_context_create(e, NULL, &w[t].ctx[k]));
            CHECK(cudaMalloc(&dx[t][k], sizeof x) == cudaSuccess);
            CHECK(cudaMalloc(&dy[t][k], sizeof x) == cudaSuccess);
            CHECK(cudaMemcpy(dx[t][k], x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess);
            CHECK(cudaMemset(dy[t][k], 0xff, sizeof x) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess); /* poisoned before other streams run */
            CHECK_OK(prt_context_set_input_shape(w[t].ctx[k], "x", &d));
            CHECK_OK(prt_context_set_tensor(w[t].ctx[k], "x", dx[t][k]));
            CHECK_OK(prt_context_set_tensor(w[t].ctx[k], "y", dy[t][k]));
        }
    for (t = 0; t < 4; t++) pthread_create(&th[t], NULL, worker_main, &w[t]);
    for (t = 0; t < 4; t++) pthread_join(th[t], NULL);
    for (t = 0; t < 4; t++) {
        CHECK(w[t].ok);
        for (k = 0; k < 2; k++) {
            CHECK(cudaMemcpy(got, dy[t][k], sizeof got, cudaMemcpyDeviceToHost) == cudaSuccess);
            if (t == 0 && k == 0) {
                memcpy(first, got, sizeof got);
                for (i = 0; i < 240; i++) CHECK_NEAR(got[i], ref[i], 2e-6 * fabs(ref[i]) + 1e-7);
            }
            CHECK(memcmp(got, first, sizeof got) == 0);
            prt_context_destroy(w[t].ctx[k]);
            cudaFree(dx[t][k]);
            cudaFree(dy[t][k]);
        }
    }
    prt_engine_destroy(e);
    prt_network_destroy(net);
#endif
}

/* ---- allocator, enqueue, errors at run time -------------------------------------- */

typedef struct count_alloc {
    int allocs, frees;
    size_t bytes;
} count_alloc;

static void *ca_alloc(void *user, prt_device d, size_t n)
{
    count_alloc *c = user;
    CHECK(d == PRT_DEVICE_CPU);
    c->allocs++;
    c->bytes += n;
    return malloc(n);
}

static void ca_free(void *user, prt_device d, void *p)
{
    count_alloc *c = user;
    (void)d;
    c->frees++;
    free(p);
}

TEST(context_memory_comes_from_the_callers_allocator)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8], x[32], y[32];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    prt_context *ctx = NULL;
    prt_context_config cc;
    prt_allocator al;
    count_alloc ca = {0, 0, 0};
    prt_dims d = DIMS(4, 8);
    int i;
    profile_cfg(&cfg, &rg, 1, 2, 4);
    e = build(net, &cfg, r);
    memset(&al, 0, sizeof al);
    al.struct_size = sizeof al;
    al.abi_version = PRT_ABI_VERSION;
    al.alloc = ca_alloc;
    al.free = ca_free;
    al.user = &ca;
    prt_context_config_init(&cc);
    cc.allocator = &al;
    cc.nb_threads = 1;
    CHECK_OK(prt_context_create(e, &cc, &ctx));
    CHECK_EQ_INT(ca.allocs, 2); /* arena and workspace */
    CHECK(ca.bytes >= prt_engine_arena_size(e) + prt_engine_workspace_size(e));
    fill(x, 32, 8);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    /* An unbound output is refused by name. */
    CHECK(prt_context_execute(ctx) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "output \"out\" has no buffer");
    CHECK_OK(prt_context_set_tensor(ctx, "out", y));
    CHECK_OK(prt_context_enqueue(ctx, NULL)); /* CPU: runs at once */
    for (i = 0; i < 32; i++) CHECK_NEAR(y[i], ((double)x[i] + b[i % 8]) * 1.5, 1e-5 * (fabs(y[i]) + 1));
    prt_context_destroy(ctx);
    CHECK_EQ_INT(ca.frees, 2);
    /* A context on a device that is not there fails cleanly. */
    if (!prt_test_have_cuda()) {
        ctx = (prt_context *)0x1;
        cc.device = PRT_DEVICE_CUDA;
        cc.allocator = NULL;
        CHECK(prt_context_create(e, &cc, &ctx) == PRT_STATUS_NO_DEVICE);
        CHECK(ctx == (prt_context *)0x1);
        CHECK_STR_CONTAINS(prt_engine_last_error(e), "CUDA");
    }
    release_all(NULL, e, net, r);
}

TEST(engine_describes_its_inputs_and_outputs)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e;
    prt_io_desc io;
    profile_cfg(&cfg, &rg, 1, 3, 6);
    e = build(net, &cfg, r);
    CHECK_EQ_INT(prt_engine_nb_io(e), 2);
    CHECK_OK(prt_engine_io(e, 0, &io));
    CHECK(strcmp(io.name, "x") == 0 && io.mode == PRT_IO_INPUT && io.dtype == PRT_DTYPE_F32);
    CHECK_EQ_INT(io.dims.d[0], -1);
    CHECK_EQ_INT(io.min.d[0], 1);
    CHECK_EQ_INT(io.opt.d[0], 3);
    CHECK_EQ_INT(io.max.d[0], 6);
    CHECK_OK(prt_engine_io(e, 1, &io));
    CHECK(strcmp(io.name, "out") == 0 && io.mode == PRT_IO_OUTPUT);
    CHECK_EQ_INT(io.dims.d[0], -1);
    CHECK_EQ_INT(io.dims.d[1], 8);
    CHECK_EQ_INT(io.max.d[0], 6);
    CHECK(prt_engine_io(e, 2, &io) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_engine_find_io(e, "h"), -1);
    release_all(NULL, e, net, r);
}

/* ---- failure injection and mutated inputs ---------------------------------------- */

/* Every allocation the library makes, failed in turn: each call fails
 * cleanly (out-parameter untouched) until enough succeed. */
TEST(allocation_failures_fail_cleanly)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL, *jn;
    prt_engine *e = NULL, *e2;
    prt_context *ctx;
    size_t len;
    void *p;
    char err[1024];
    long n;
    int done;
    float b[8], x[16], y[16];
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_dims d = DIMS(2, 8);

    for (n = 0, done = 0; n < 5000 && !done; n++) {
        jn = (prt_network *)0x1;
        prt__alloc_fail_after(n);
        done = prt_network_from_json(r, k_json, strlen(k_json), NULL, &jn, err, sizeof err) == PRT_OK;
        prt__alloc_fail_after(-1);
        if (done) prt_network_destroy(jn);
        else CHECK(jn == (prt_network *)0x1);
    }
    CHECK(done);
    net = bias_net(r, b);
    profile_cfg(&cfg, &rg, 1, 2, 4);
    for (n = 0, done = 0; n < 5000 && !done; n++) {
        e = (prt_engine *)0x1;
        prt__alloc_fail_after(n);
        done = prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK;
        prt__alloc_fail_after(-1);
        if (!done) CHECK(e == (prt_engine *)0x1);
    }
    CHECK(done);
    p = plan_bytes(e, &len);
    for (n = 0, done = 0; n < 5000 && !done; n++) {
        e2 = (prt_engine *)0x1;
        prt__alloc_fail_after(n);
        done = prt_engine_deserialize(r, p, len, &e2, err, sizeof err) == PRT_OK;
        prt__alloc_fail_after(-1);
        if (done) prt_engine_destroy(e2);
        else CHECK(e2 == (prt_engine *)0x1);
    }
    CHECK(done);
    fill(x, 16, 6);
    for (n = 0, done = 0; n < 5000 && !done; n++) {
        ctx = (prt_context *)0x1;
        prt__alloc_fail_after(n);
        if (prt_context_create(e, NULL, &ctx) == PRT_OK) {
            done = prt_context_set_input_shape(ctx, "x", &d) == PRT_OK && prt_context_set_tensor(ctx, "x", x) == PRT_OK &&
                   prt_context_set_tensor(ctx, "out", y) == PRT_OK && prt_context_execute(ctx) == PRT_OK;
            prt__alloc_fail_after(-1);
            prt_context_destroy(ctx);
        } else {
            prt__alloc_fail_after(-1);
            CHECK(ctx == (prt_context *)0x1);
        }
    }
    CHECK(done);
    CHECK(y[3] == (x[3] + b[3]) * 1.5f);
    free(p);
    release_all(NULL, e, net, r);
}

TEST(mutated_json_never_crashes)
{
    prt_registry *r = fake_registry(1, 0, 10);
    size_t len = strlen(k_json), i;
    char *q = malloc(len + 1), err[1024];
    unsigned seed = 99;
    int ok = 0, k;
    static const char alphabet[] = "{}[]\":,-0123456789.eE \nabcxyz\\";
    for (i = 0; i < 600; i++) {
        prt_network *net = NULL;
        memcpy(q, k_json, len + 1);
        for (k = 0; k < 1 + (int)(i % 4); k++) {
            seed = seed * 1103515245u + 12345u;
            q[(seed >> 8) % len] = alphabet[(seed >> 20) % (sizeof alphabet - 1)];
        }
        if (prt_network_from_json(r, q, len, NULL, &net, err, sizeof err) == PRT_OK) {
            ok++;
            prt_network_destroy(net);
        } else {
            CHECK(err[0] != 0);
        }
    }
    CHECK(ok < 600);
    free(q);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* ---- untrusted plans and networks ------------------------------------------------ */
/* Crafted and extreme plans and networks: every size product checked, every
 * layer checked at load, every plugin's output shapes checked again at run
 * time, zero-element tensors. */

/* Append an expression node; returns its index. */
static int32_t add_node(prt__plan *p, uint8_t kind, uint8_t op, int32_t a, int32_t b, int64_t v)
{
    prt__pnode *n = prt__realloc(p->nodes, (size_t)(p->nb_nodes + 1) * sizeof *n);
    CHECK(n != NULL);
    p->nodes = n;
    n[p->nb_nodes].kind = kind;
    n[p->nb_nodes].op = op;
    n[p->nb_nodes].a = a;
    n[p->nb_nodes].b = b;
    n[p->nb_nodes].v = v;
    return p->nb_nodes++;
}

/* Rewrite a plan through its parsed form (the writer recomputes the
 * checksum); returns the new bytes (prt__free). */
static uint8_t *edited(const void *plan, size_t len, void (*edit)(prt__plan *), size_t *out_len)
{
    prt__plan *p = NULL;
    uint8_t *bytes = NULL;
    char err[1024] = "";
    CHECK_MSG(prt__plan_read(plan, len, &p, err, sizeof err) == PRT_OK, "%s", err);
    if (!p) return NULL;
    edit(p);
    CHECK_MSG(prt__plan_write(p, &bytes, out_len, err, sizeof err) == PRT_OK, "%s", err);
    prt__plan_free(p);
    return bytes;
}

/* ---- cast layers ------------------------------------------------------------------- */

/* The cast back to f32 writes [1, 5] (and so does the layer after it, which
 * keeps the plugins content) while it reads [4, 5]. */
static void shrink_cast_output(prt__plan *p)
{
    int32_t one = add_node(p, PRT__NODE_CONST, 0, 0, 0, 1), li, k;
    const char *names[2];
    for (li = 0; li < p->nb_layers; li++)
        if (p->layers[li].kind == PRT__LAYER_CAST && p->layers[li].cast_to == PRT_DTYPE_F32) break;
    CHECK(li < p->nb_layers);
    names[0] = p->tensors[p->layers[li].out[0]].name;
    names[1] = "y";
    for (k = 0; k < 2; k++) {
        prt__ptensor *t = &p->tensors[tensor_named(p, names[k])];
        t->expr[0] = one;
        t->dims.d[0] = t->min.d[0] = t->opt.d[0] = t->max.d[0] = 1;
        if (t->role == PRT__ROLE_ACTIVATION) t->bytes = 5 * sizeof(float);
    }
}

TEST(cast_layer_whose_extents_disagree_is_refused_at_load)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = half_net(r, 3);
    prt_engine *e = build(net, NULL, r), *e2 = (prt_engine *)0x1;
    size_t len, blen = 0;
    void *plan = plan_bytes(e, &len);
    uint8_t *bad = edited(plan, len, shrink_cast_output, &blen);
    char err[1024] = "";
    CHECK(prt_engine_deserialize(r, bad, blen, &e2, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
    CHECK(e2 == (prt_engine *)0x1);
    CHECK_STR_CONTAINS(err, "cast layer \"h2:to_f32\"");
    CHECK_STR_CONTAINS(err, "extents");
    prt__free(bad);
    free(plan);
    release_all(NULL, e, net, r);
}

/* ---- size products ------------------------------------------------------------------ */

static prt_status build_copy(prt_registry *r, const prt_dims *d, char *err, size_t cap)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    const char *a[] = {"x"}, *o[] = {"y"};
    prt_status s;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, d));
    CHECK_OK(prt_network_add_layer(net, "copy", "TestCopyF32", "1", "", NULL, a, 1, o, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    s = prt_engine_build(net, NULL, r, &e, err, cap);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return s;
}

TEST(network_inputs_and_outputs_past_the_size_limit_are_refused)
{
    prt_registry *r = fake_registry(1, 0, 10);
    char err[1024] = "";
    prt_dims wraps = DIMS(1, (int64_t)1 << 31, (int64_t)1 << 31); /* 2^62 elements: 2^64 bytes wrap to 0 */
    prt_dims huge = DIMS((int64_t)1 << 20, (int64_t)1 << 27);     /* 2^47 elements: 2^49 bytes */
    prt_dims fine = DIMS(3, 7);
    CHECK(build_copy(r, &wraps, err, sizeof err) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "\"x\"");
    CHECK_STR_CONTAINS(err, PRT_MAX_TENSOR_BYTES_STR);
    CHECK(build_copy(r, &huge, err, sizeof err) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "\"x\"");
    CHECK_OK(build_copy(r, &fine, err, sizeof err));
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(checked_helpers_refuse_what_would_wrap)
{
    uint64_t v = 7;
    size_t z = 7;
    prt_dims d = DIMS(1, (int64_t)1 << 31, (int64_t)1 << 31), e = DIMS(3, 0, INT64_MAX);
    CHECK(prt__mul_u64(UINT64_MAX / 2 + 1, 2, &v) == -1 && v == 7);
    CHECK(prt__add_u64(UINT64_MAX, 1, &v) == -1 && v == 7);
    CHECK(prt__mul_size(SIZE_MAX, 2, &z) == -1 && z == 7);
    CHECK(prt__add_size(SIZE_MAX, 1, &z) == -1 && z == 7);
    CHECK(prt__align_u64(UINT64_MAX - 3, 64, &v) == -1 && v == 7);
    CHECK(prt__align_u64(65, 64, &v) == 0 && v == 128);
    CHECK(prt__volume(&d, &v) == 0 && v == (uint64_t)1 << 62);
    CHECK(prt__tensor_bytes(&d, 4, &v) == -1);
    CHECK(prt__tensor_bytes(&e, 4, &v) == 0 && v == 0);
    CHECK(prt__range_fits(8, 8, 16) && !prt__range_fits(9, 8, 16) && !prt__range_fits(UINT64_MAX, 2, 16));
}

/* ---- zero-element tensors ------------------------------------------------------------- */

/* x [N, 0] + b [0] -> TestAddBias -> out: a zero-element constant is the
 * first (and only) weight; inputs, activations and outputs have no elements. */
TEST(zero_element_constants_inputs_and_outputs_build_and_run)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = NULL;
    prt_engine *e, *e2;
    prt_context *ctx = NULL;
    prt_dims d = DIMS(2, 0), bd = DIMS(0);
    const char *in1[] = {"x", "b"}, *out1[] = {"out"};
    float x[1], y[1];
    size_t bytes = 7;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_constant(net, "b", PRT_DTYPE_F32, &bd, NULL, 0));
    CHECK_OK(prt_network_add_layer(net, "bias", "TestAddBias", "1", "", NULL, in1, 2, out1, 1));
    CHECK_OK(prt_network_mark_output(net, "out"));
    e = build(net, NULL, r);
    if (!e) goto out;
    {
        size_t len;
        void *plan = plan_bytes(e, &len);
        char err[1024] = "";
        e2 = NULL;
        CHECK_MSG(prt_engine_deserialize(r, plan, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
        prt_engine_destroy(e2);
        free(plan);
    }
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_buffer_size(ctx, "out", &bytes));
    CHECK_EQ_INT(bytes, 0);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "out", y));
    CHECK_OK(prt_context_execute(ctx));
out:
    prt_context_destroy(ctx);
    release_all(NULL, e, net, r);
}

/* ---- plugin output shapes at every run ------------------------------------------------- */

/* "out" dim 0 becomes N * (1 - (N == 3)): N at the profile's 1, 4 and 8, but
 * 0 at N = 3, where the plugin still writes 3 rows. */
static void zero_at_three(prt__plan *p)
{
    prt__ptensor *t = &p->tensors[tensor_named(p, "out")];
    int32_t n = t->expr[0];
    int32_t three = add_node(p, PRT__NODE_CONST, 0, 0, 0, 3);
    int32_t one = add_node(p, PRT__NODE_CONST, 0, 0, 0, 1);
    int32_t eq = add_node(p, PRT__NODE_OP, PRT_EXPR_EQUAL, n, three, 0);
    int32_t keep = add_node(p, PRT__NODE_OP, PRT_EXPR_SUB, one, eq, 0);
    t->expr[0] = add_node(p, PRT__NODE_OP, PRT_EXPR_PROD, n, keep, 0);
}

TEST(plan_output_bound_that_only_agrees_at_min_opt_max_is_caught_at_run)
{
    prt_registry *r = fake_registry(1, 0, 10);
    float b[8], x[64], y[64];
    prt_network *net = bias_net(r, b);
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e, *e2 = NULL;
    prt_context *ctx = NULL;
    size_t len, blen = 0, bytes = 7;
    void *plan;
    uint8_t *bad;
    char err[1024] = "";
    prt_dims d3 = DIMS(3, 8), d4 = DIMS(4, 8);
    int i;
    profile_cfg(&cfg, &rg, 1, 4, 8);
    e = build(net, &cfg, r);
    plan = plan_bytes(e, &len);
    bad = edited(plan, len, zero_at_three, &blen);
    CHECK_MSG(prt_engine_deserialize(r, bad, blen, &e2, err, sizeof err) == PRT_OK, "%s", err);
    if (!e2) goto out;
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    for (i = 0; i < 64; i++) x[i] = (float)i;
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "out", y));
    /* At the profile's opt it runs. */
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d4));
    CHECK_OK(prt_context_execute(ctx));
    /* At N = 3 the plan says out is [0, 8]; the plugin says [3, 8]. */
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d3));
    CHECK_OK(prt_context_buffer_size(ctx, "out", &bytes));
    CHECK_EQ_INT(bytes, 0);
    CHECK(prt_context_execute(ctx) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "layer \"scale\"");
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "[3, 8]");
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "[0, 8]");
    /* Back inside what agrees: runs again. */
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d4));
    CHECK_OK(prt_context_execute(ctx));
out:
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt__free(bad);
    free(plan);
    release_all(NULL, e, net, r);
}

/* ---- JSON keys ----------------------------------------------------------------- */

/* A key the format does not define inside an input, constant, layer or
 * typed field is an error naming it; with the flag, a warning. */
TEST(json_unknown_keys_inside_objects_are_errors_or_warnings)
{
    static const char *const bad[] = {
        "{\"inputs\": [{\"name\": \"x\", \"dims\": [2, 8], \"dim\": [3]}], \"constants\": [{\"name\": \"b\", "
        "\"dims\": [8], \"values\": [0,0,0,0,0,0,0,0]}], \"layers\": [{\"plugin\": \"TestAddBias\", \"inputs\": "
        "[\"x\", \"b\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
        "{\"inputs\": [{\"name\": \"x\", \"dims\": [2, 8]}], \"constants\": [{\"name\": \"b\", \"dims\": [8], "
        "\"valeus\": 1, \"values\": [0,0,0,0,0,0,0,0]}], \"layers\": [{\"plugin\": \"TestAddBias\", \"inputs\": "
        "[\"x\", \"b\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
        "{\"inputs\": [{\"name\": \"x\", \"dims\": [2, 8]}], \"constants\": [{\"name\": \"b\", \"dims\": [8], "
        "\"values\": [0,0,0,0,0,0,0,0]}], \"layers\": [{\"plugin\": \"TestAddBias\", \"feilds\": {}, \"inputs\": "
        "[\"x\", \"b\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
        "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f16\", \"dims\": [4]}], \"layers\": [{\"name\": \"neg\", "
        "\"plugin\": \"TestHalfNeg\", \"fields\": {\"k\": {\"type\": \"int32\", \"value\": 2, \"unit\": \"m\"}}, "
        "\"inputs\": [\"x\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}"};
    static const char *const want[] = {"input \"x\": unknown key \"dim\" (expected name, dtype, dims, doc, shape_values)",
                                       "constant \"b\": unknown key \"valeus\"",
                                       "layer \"TestAddBias\": unknown key \"feilds\"",
                                       "field \"k\": unknown key \"unit\" (expected type, value)"};
    prt_registry *r = fake_registry(1, 0, 10);
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        prt_network *net = (prt_network *)0x1;
        char err[1024] = "";
        CHECK_EQ_INT(prt_network_from_json(r, bad[i], strlen(bad[i]), NULL, &net, err, sizeof err),
                     PRT_STATUS_BAD_FORMAT);
        CHECK(net == (prt_network *)0x1);
        CHECK_STR_CONTAINS(err, want[i]);
        net = NULL;
        CHECK_MSG(prt_network_from_json_flags(r, bad[i], strlen(bad[i]), NULL, PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN,
                                              &net, err, sizeof err) == PRT_OK,
                  "%s", err);
        prt_network_destroy(net);
    }
    release_all(NULL, NULL, NULL, r);
}

typedef struct prof_rec {
    int n;
    char names[16][64], plugins[16][64];
    double ms[16];
} prof_rec;

static void prof_cb(void *user, const char *layer, const char *plugin, double ms)
{
    prof_rec *p = user;
    if (p->n < 16) {
        snprintf(p->names[p->n], sizeof p->names[0], "%s", layer);
        snprintf(p->plugins[p->n], sizeof p->plugins[0], "%s", plugin);
        p->ms[p->n] = ms;
    }
    p->n++;
}

TEST(layer_profiler_reports_every_layer_in_order_and_can_be_removed)
{
    prt_registry *r = fake_registry(1, 0, 10);
    prt_network *net = half_net(r, 3);
    prt_engine *e = build(net, NULL, r);
    prt_context *ctx = NULL;
    prof_rec pr;
    float x[20], y[20], y2[20];
    int i;
    memset(&pr, 0, sizeof pr);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK(prt_context_set_profiler(NULL, prof_cb, &pr) == PRT_STATUS_INVALID_ARGUMENT);
    fill(x, 20, 5);
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    memcpy(y2, y, sizeof y);
    CHECK_OK(prt_context_set_profiler(ctx, prof_cb, &pr));
    CHECK_OK(prt_context_execute(ctx));
    CHECK_EQ_INT(pr.n, prt_engine_nb_layers(e));
    for (i = 0; i < pr.n; i++) {
        CHECK_MSG(strcmp(pr.names[i], prt_engine_layer_name(e, i)) == 0, "layer %d: %s vs %s", i, pr.names[i],
                  prt_engine_layer_name(e, i));
        CHECK(pr.ms[i] >= 0.0);
    }
    CHECK(strcmp(pr.plugins[1], "cast") == 0 && strcmp(pr.plugins[3], "cast") == 0);
    CHECK(strcmp(pr.plugins[2], "cast") != 0 && pr.plugins[2][0]);
    /* profiling changes nothing in the outputs */
    CHECK(memcmp(y, y2, sizeof y) == 0);
    CHECK_OK(prt_context_set_profiler(ctx, NULL, NULL));
    CHECK_OK(prt_context_execute(ctx));
    CHECK_EQ_INT(pr.n, prt_engine_nb_layers(e));
    release_all(ctx, e, net, r);
}
