/* prt_op: one plugin of either style driven through its whole lifecycle. */
#include "core/core.h"
#include "fakes.h"
#include "plugrt/engine.h"
#include "plugrt/op.h"
#include "prt_test.h"

static prt_registry *fake_registry(void)
{
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_add(r, &fake_blob_creator, "fakes"));
    CHECK_OK(prt_registry_add(r, &fake_field_creator, "fakes"));
    return r;
}

static prt_tensor_desc desc(prt_dtype t, int nb, int64_t a, int64_t b, int64_t c)
{
    prt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.format = PRT_FORMAT_LINEAR;
    d.dims.nb = nb;
    d.dims.d[0] = a;
    d.dims.d[1] = b;
    d.dims.d[2] = c;
    return d;
}

static prt_op_config cpu_cfg(int32_t threads)
{
    prt_op_config c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.abi_version = PRT_ABI_VERSION;
    c.device = PRT_DEVICE_CPU;
    c.nb_threads = threads;
    return c;
}

static void fill(float *x, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) x[i] = (float)((i * 37) % 23) - 11.0f + 0.25f;
}

/* Configure on the CPU, run, check y = scale * x element by element. */
static void run_scale(prt_op *op, int64_t a, int64_t b, int64_t c, int32_t threads, float scale)
{
    prt_tensor_desc in = desc(PRT_DTYPE_F32, 3, a, b, c), out;
    prt_op_config cfg = cpu_cfg(threads);
    int64_t n = a * b * c, i;
    float *x = malloc((size_t)n * 4 + 4), *y = malloc((size_t)n * 4 + 4);
    const void *ins[1] = {x};
    void *outs[1] = {y};
    fill(x, n);
    for (i = 0; i < n; i++) y[i] = -12345.0f;
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_output_desc(op, 0, &out));
    CHECK(prt_dims_equal(&out.dims, &in.dims));
    CHECK_EQ_INT(out.dtype, PRT_DTYPE_F32);
    CHECK_OK(prt_op_run(op, ins, outs));
    for (i = 0; i < n; i++)
        CHECK_MSG(y[i] == scale * x[i], "element %lld: %g != %g", (long long)i, y[i], scale * x[i]);
    free(x);
    free(y);
}

TEST(blob_op_lifecycle_and_values)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    fake_reset();
    CHECK_OK(prt_op_create(r, "FakeBlob", "1", "test", NULL, &op));
    CHECK_EQ_INT(prt_op_style(op), PRT_STYLE_BLOB);
    CHECK(prt_op_creator(op) == &fake_blob_creator);
    CHECK_EQ_INT(prt_op_nb_outputs(op), 1);
    run_scale(op, 2, 3, 5, 1, 2.0f);
    CHECK_EQ_INT(prt_op_workspace_size(op), 30 * sizeof(float));
    prt_op_destroy(op);
    prt_registry_destroy(r);
    CHECK_MSG(strcmp(fake_log,
                     "B:create_blob B:get_nb_outputs B:clone B:get_nb_outputs B:get_output_dims "
                     "B:get_output_data_types B:get_output_data_types B:supports_format_combination "
                     "B:supports_format_combination B:configure_plugin B:get_workspace_size "
                     "B:get_serialization_size B:get_serialization_size B:serialize B:destroy B:deserialize_blob "
                     "B:get_serialization_size B:get_nb_outputs B:get_output_data_types B:get_output_dims "
                     "B:supports_format_combination B:supports_format_combination "
                     "B:configure_plugin B:get_workspace_size B:clone B:attach_to_context B:initialize "
                     "B:get_output_dims B:configure_plugin B:enqueue B:terminate B:detach_from_context B:destroy "
                     "B:destroy "
                     "B:destroy ") == 0,
              "order: %s", fake_log);
    CHECK_EQ_INT(fake_res_created, 1);
    CHECK_EQ_INT(fake_res_destroyed, 1);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(field_op_lifecycle_values_and_threads)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    float s = 0.5f;
    prt_field f = {"scale", &s, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    fake_reset();
    CHECK_OK(prt_op_create(r, "FakeField", "1", "test", &fc, &op));
    CHECK_EQ_INT(prt_op_style(op), PRT_STYLE_FIELD);
    run_scale(op, 3, 7, 50, 4, 0.5f); /* 1050 elements over 4 threads */
    run_scale(op, 1, 1, 1, 1, 0.5f);  /* reconfigured: new shapes, inline */
    run_scale(op, 2, 2, 2, 0, 0.5f);  /* all cores */
    prt_op_destroy(op);
    prt_registry_destroy(r);
    /* The lifecycle of a one-layer engine (docs/lifecycle.md): build (a clone
     * of the op's plugin), plan record, load (re-created from its fields),
     * context (attach), run. */
    {
        static const char engine_order[] =
            "F:create_field(build) F:get_nb_outputs F:clone F:get_nb_outputs F:get_output_shapes "
            "F:get_output_data_types F:get_output_data_types F:supports_format_combination "
            "F:supports_format_combination F:configure F:get_workspace_size F:get_fields_to_serialize "
            "F:get_fields_to_serialize F:destroy F:create_field(runtime) F:get_nb_outputs F:get_output_data_types "
            "F:get_output_shapes F:supports_format_combination F:supports_format_combination F:get_workspace_size "
            "F:attach_to_context F:get_output_shapes F:on_shape_change F:enqueue ";
        CHECK_MSG(strncmp(fake_log, engine_order, strlen(engine_order)) == 0, "order: %s", fake_log);
    }
    CHECK_EQ_INT(fake_res_created, 3);   /* one context per configure */
    CHECK_EQ_INT(fake_res_destroyed, 3);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(data_dependent_output_is_sized_by_its_bound_and_narrowed_by_the_plugin)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    int32_t dd = 1;
    prt_field f = {"ddep", &dd, PRT_FIELD_INT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    prt_tensor_desc in = desc(PRT_DTYPE_F32, 2, 4, 5, 0), out;
    prt_op_config cfg = cpu_cfg(2);
    float x[20], y[20];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    int i, k = 0;
    fake_reset();
    fill(x, 20);
    for (i = 0; i < 20; i++) y[i] = -1.0f;
    CHECK_OK(prt_op_create(r, "FakeField", "1", "test", &fc, &op));
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_output_desc(op, 0, &out));
    CHECK_EQ_INT(out.dims.nb, 1);
    CHECK_EQ_INT(out.dims.d[0], 20); /* the upper bound */
    CHECK_OK(prt_op_run(op, ins, outs));
    CHECK_OK(prt_op_output_desc(op, 0, &out));
    for (i = 0; i < 20; i++)
        if (x[i] > 0) {
            CHECK(y[k] == 3.0f * x[i]);
            k++;
        }
    CHECK(k > 0 && k < 20);
    CHECK_EQ_INT(out.dims.d[0], k);
    for (i = k; i < 20; i++) CHECK(y[i] == -1.0f);
    prt_op_destroy(op);
    prt_registry_destroy(r);
}

TEST(serialize_deserialize_clone)
{
    prt_registry *r = fake_registry();
    static const char *names[2] = {"FakeBlob", "FakeField"};
    float s = 1.75f;
    prt_field f = {"scale", &s, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    int k;
    fake_reset();
    for (k = 0; k < 2; k++) {
        prt_op *op = NULL, *back = NULL, *cl = NULL;
        uint8_t buf[512];
        size_t len = 0, len2 = 0;
        CHECK_OK(prt_op_create(r, names[k], "1", "test", &fc, &op));
        CHECK_OK(prt_op_serialize(op, NULL, 0, &len));
        CHECK(len > 0 && len < sizeof buf);
        CHECK(prt_op_serialize(op, buf, len - 1, &len2) == PRT_STATUS_INVALID_ARGUMENT);
        CHECK_STR_CONTAINS(prt_op_last_error(op), "needs");
        CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len2));
        CHECK_EQ_INT(len2, len);
        CHECK_OK(prt_op_deserialize(r, buf, len, &back));
        run_scale(back, 2, 2, 3, 1, 1.75f);
        CHECK_OK(prt_op_clone(back, &cl));
        run_scale(cl, 1, 4, 4, 2, 1.75f);
        run_scale(back, 1, 4, 4, 1, 1.75f); /* independent */
        /* trailing bytes are refused */
        buf[len] = 0;
        prt_op_destroy(op);
        op = NULL;
        CHECK(prt_op_deserialize(r, buf, len + 1, &op) == PRT_STATUS_BAD_FORMAT);
        CHECK(op == NULL);
        CHECK_STR_CONTAINS(prt_registry_last_error(r), "stray byte");
        CHECK_STR_CONTAINS(prt_op_last_error(NULL), "stray byte");
        prt_op_destroy(back);
        prt_op_destroy(cl);
    }
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(truncated_and_bit_flipped_records_give_errors)
{
    prt_registry *r = fake_registry();
    static const char *names[2] = {"FakeBlob", "FakeField"};
    int k;
    for (k = 0; k < 2; k++) {
        prt_op *op = NULL, *back;
        uint8_t buf[512], copy[512];
        size_t len = 0, cut, bit;
        CHECK_OK(prt_op_create(r, names[k], "1", "test", NULL, &op));
        CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len));
        for (cut = 0; cut < len; cut++) {
            back = NULL;
            CHECK(prt_op_deserialize(r, buf, cut, &back) != PRT_OK);
            CHECK(back == NULL);
            CHECK(prt_op_last_error(NULL)[0] != 0);
        }
        for (bit = 0; bit < len * 8; bit++) {
            memcpy(copy, buf, len);
            copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            back = NULL;
            if (prt_op_deserialize(r, copy, len, &back) == PRT_OK) prt_op_destroy(back);
            else CHECK(back == NULL);
        }
        prt_op_destroy(op);
    }
    prt_registry_destroy(r);
}

TEST(failed_configure_leaves_the_op_as_it_was)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    prt_tensor_desc in = desc(PRT_DTYPE_F32, 3, 2, 2, 2), out;
    prt_op_config cfg = cpu_cfg(1);
    fake_reset();
    CHECK_OK(prt_op_create(r, "FakeBlob", "1", "test", NULL, &op));
    run_scale(op, 2, 2, 2, 1, 2.0f);
    fake_fail_call = "initialize";
    in.dims.d[0] = 9;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "FakeBlob (test::FakeBlob v1): initialize failed: fake failure");
    fake_fail_call = NULL;
    CHECK_OK(prt_op_output_desc(op, 0, &out));
    CHECK_EQ_INT(out.dims.d[0], 2); /* the old configuration */
    {
        float x[8], y[8];
        const void *ins[1] = {x};
        void *outs[1] = {y};
        int i;
        fill(x, 8);
        CHECK_OK(prt_op_run(op, ins, outs));
        for (i = 0; i < 8; i++) CHECK(y[i] == 2.0f * x[i]);
    }
    prt_op_destroy(op);
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
    CHECK_EQ_INT(fake_res_created, fake_res_destroyed);
}

TEST(configure_survives_every_allocation_failure)
{
    prt_registry *r = fake_registry();
    prt_tensor_desc in = desc(PRT_DTYPE_F32, 3, 2, 2, 2);
    prt_op_config cfg = cpu_cfg(2);
    long n;
    int k;
    for (k = 0; k < 2; k++) {
        prt_op *op = NULL;
        CHECK_OK(prt_op_create(r, k ? "FakeField" : "FakeBlob", "1", "test", NULL, &op));
        for (n = 0; n < 200; n++) {
            prt_status s;
            prt__alloc_fail_after(n);
            s = prt_op_configure(op, &in, 1, &cfg);
            prt__alloc_fail_after(-1);
            if (s == PRT_OK) break;
            CHECK(prt_op_last_error(op)[0] != 0);
        }
        CHECK(n > 0 && n < 200);
        run_scale(op, 2, 2, 2, 2, k ? 3.0f : 2.0f);
        prt_op_destroy(op);
    }
    prt_registry_destroy(r);
}

TEST(run_errors_with_and_without_messages)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    prt_tensor_desc in = desc(PRT_DTYPE_F32, 1, 4, 0, 0);
    prt_op_config cfg = cpu_cfg(1);
    float x[4] = {1, 2, 3, 4}, y[4];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    fake_reset();
    CHECK_OK(prt_op_create(r, "FakeField", "1", "test", NULL, &op));
    CHECK(prt_op_run(op, ins, outs) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "before a successful configure");
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    fake_fail_call = "enqueue";
    CHECK(prt_op_run(op, ins, outs) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "layer \"FakeField\" (test::FakeField v1): enqueue failed: fake failure in enqueue");
    fake_fail_silent = 1;
    CHECK(prt_op_run(op, ins, outs) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_STR_CONTAINS(prt_op_last_error(op),
                       "layer \"FakeField\" (test::FakeField v1): enqueue failed with PRT_STATUS_PLUGIN_ERROR");
    fake_fail_call = NULL;
    CHECK_OK(prt_op_run(op, ins, outs));
    CHECK(prt_op_run(op, NULL, outs) == PRT_STATUS_INVALID_ARGUMENT);
    prt_op_destroy(op);
    prt_registry_destroy(r);
}

TEST(bad_inputs_and_configs_are_refused_clearly)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    prt_tensor_desc in = desc(PRT_DTYPE_F16, 1, 4, 0, 0), out;
    prt_op_config cfg = cpu_cfg(1);
    fake_reset();
    CHECK_OK(prt_op_create(r, "FakeBlob", "1", "test", NULL, &op));
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "does not support input 0 as f16/linear");
    CHECK(prt_op_output_desc(op, 0, &out) == PRT_STATUS_INVALID_ARGUMENT);
    in.dtype = PRT_DTYPE_F32;
    in.dims.d[0] = -1;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "concrete extents");
    in.dims.d[0] = 4;
    in.dtype = (prt_dtype)77;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "dtype 77");
    in.dtype = PRT_DTYPE_F32;
    cfg.nb_threads = -3;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_INVALID_ARGUMENT);
    cfg = cpu_cfg(1);
    cfg.device = PRT_DEVICE_CUDA;
    cfg.cuda_device = 99;
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_NO_DEVICE);
    CHECK(prt_op_last_error(op)[0] != 0);
    /* nothing configured by any of that */
    CHECK(prt_op_output_desc(op, 0, &out) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_OK(prt_op_configure(op, &in, 1, NULL)); /* NULL config: CPU, all cores */
    CHECK(prt_op_output_desc(op, 1, &out) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_op_last_error(op), "has 1 output");
    prt_op_destroy(op);
    prt_registry_destroy(r);
}

TEST(create_errors)
{
    prt_registry *r = fake_registry();
    prt_op *op = NULL;
    const char *bad = "q";
    prt_field f = {"scale", bad, PRT_FIELD_CHAR, 0, 1};
    prt_fields fc = {&f, 1, 0};
    CHECK(prt_op_create(r, "FakeBlob", "2", "test", NULL, &op) == PRT_STATUS_NOT_FOUND);
    CHECK(op == NULL);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "FakeBlob");
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "FakeBlob"); /* the older form reads the same message */
    CHECK(prt_op_create(r, "FakeBlob", "1", "test", &fc, &op) == PRT_STATUS_INVALID_FIELD);
    CHECK(op == NULL);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "scale");
    CHECK(strcmp(prt_registry_last_error(r), prt_op_last_error(NULL)) == 0);
    CHECK(prt_op_create(NULL, "FakeBlob", "1", "test", NULL, &op) == PRT_STATUS_INVALID_ARGUMENT);
    prt_op_destroy(NULL);
    prt_registry_destroy(r);
}

TEST(template_plugin_runs_and_round_trips)
{
    prt_op *op = NULL, *back = NULL;
    float a = -0.5f;
    prt_field f = {"alpha", &a, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    uint8_t buf[256];
    size_t len = 0;
    const prt_plugin_creator *c = NULL;
    /* registered in its own namespace, not the default one */
    CHECK(prt_registry_find(prt_registry_global(), "Scale", "1", "", &c, NULL) == PRT_STATUS_NOT_FOUND);
    CHECK_OK(prt_op_create(prt_registry_global(), "Scale", "1", "template", &fc, &op));
    run_scale(op, 2, 3, 4, 2, -0.5f);
    CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len));
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, len, &back));
    run_scale(back, 1, 5, 5, 1, -0.5f);
    prt_op_destroy(op);
    prt_op_destroy(back);
}

/* ---- one host: prt_op is a one-layer engine ---------------------------------- */

/* NonMaxSuppression (bundled) with boxes [1, 6, 4], scores [1, 2, n],
 * max 3 per class, iou 0.5, score 0.1 (4 inputs: score threshold left out
 * when four_inputs). */
static const float k_boxes[24] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f,
                                  0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101};
static const float k_scores[12] = {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f, 0.2f, 0.8f, 0.05f, 0.4f, 0.7f, 0.65f};
static const int64_t k_max = 3;
static const float k_iou = 0.5f, k_thr = 0.1f;

static void nms_descs(prt_tensor_desc *d, int64_t n)
{
    d[0] = desc(PRT_DTYPE_F32, 3, 1, 6, 4);
    d[1] = desc(PRT_DTYPE_F32, 3, 1, 2, n);
    d[2] = desc(PRT_DTYPE_I64, 1, 1, 0, 0);
    d[3] = desc(PRT_DTYPE_F32, 1, 1, 0, 0);
    d[4] = desc(PRT_DTYPE_F32, 1, 1, 0, 0);
}

/* The same layer in a network: inputs input0.., output output0. */
static prt_status nms_engine(int32_t nin, int64_t n, prt_engine **e, char *err, size_t cap)
{
    static const char *const names[] = {"input0", "input1", "input2", "input3", "input4"};
    static const char *const outs[] = {"output0"};
    prt_network *net = NULL;
    prt_tensor_desc d[5];
    prt_status s;
    int32_t i;
    nms_descs(d, n);
    CHECK_OK(prt_network_create(NULL, &net));
    for (i = 0; i < nin; i++) CHECK_OK(prt_network_add_input(net, names[i], d[i].dtype, &d[i].dims));
    CHECK_OK(prt_network_add_layer(net, "NonMaxSuppression", "NonMaxSuppression", "1", "", NULL, names, nin, outs, 1));
    CHECK_OK(prt_network_mark_output(net, "output0"));
    s = prt_engine_build(net, NULL, NULL, e, err, cap);
    prt_network_destroy(net);
    return s;
}

TEST(op_and_engine_give_identical_outputs_and_shape_errors)
{
    const void *ins[5] = {k_boxes, k_scores, &k_max, &k_iou, &k_thr};
    prt_tensor_desc d[5], od;
    prt_op_config cfg = cpu_cfg(1);
    int32_t nin;
    for (nin = 4; nin <= 5; nin++) {
        prt_op *op = NULL;
        prt_engine *e = NULL;
        prt_context *ctx = NULL;
        int64_t y_op[3 * 36], y_e[3 * 36];
        void *outs[1] = {y_op};
        prt_dims got;
        char err[1024] = "";
        int32_t i;

        memset(y_op, 0x5a, sizeof y_op);
        memset(y_e, 0x5a, sizeof y_e);
        nms_descs(d, 6);
        CHECK_OK(prt_op_create(prt_registry_global(), "NonMaxSuppression", "1", "", NULL, &op));
        CHECK_MSG(prt_op_configure(op, d, nin, &cfg) == PRT_OK, "%s", prt_op_last_error(op));
        CHECK_MSG(prt_op_run(op, ins, outs) == PRT_OK, "%s", prt_op_last_error(op));
        CHECK_OK(prt_op_output_desc(op, 0, &od));

        CHECK_MSG(nms_engine(nin, 6, &e, err, sizeof err) == PRT_OK, "%s", err);
        CHECK_OK(prt_context_create(e, NULL, &ctx));
        for (i = 0; i < nin; i++) {
            char name[16];
            snprintf(name, sizeof name, "input%d", (int)i);
            CHECK_OK(prt_context_set_tensor(ctx, name, (void *)ins[i]));
        }
        CHECK_OK(prt_context_set_tensor(ctx, "output0", y_e));
        CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
        CHECK_OK(prt_context_get_shape(ctx, "output0", &got));
        /* The same selections, bit for bit, with the same data-dependent extent. */
        CHECK(prt_dims_equal(&got, &od.dims));
        CHECK(got.d[0] > 0 && got.d[0] < 12);
        CHECK(memcmp(y_op, y_e, (size_t)prt_dims_volume(&got) * sizeof(int64_t)) == 0);
        prt_context_destroy(ctx);
        prt_engine_destroy(e);

        /* Scores that disagree with the boxes: the same message from both. */
        nms_descs(d, 5);
        CHECK(prt_op_configure(op, d, nin, &cfg) != PRT_OK);
        e = NULL;
        CHECK(nms_engine(nin, 5, &e, err, sizeof err) != PRT_OK);
        CHECK(e == NULL);
        CHECK_STR_CONTAINS(err, "disagree");
        CHECK_MSG(strcmp(prt_op_last_error(op), err) == 0, "op: %s\nengine: %s", prt_op_last_error(op), err);
        prt_op_destroy(op);
    }
}
