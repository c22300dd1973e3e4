/* The adapter: both plugin styles behind one interface, plugin records,
 * defaults for NULL ops, struct_size coverage, messages, lifecycle trace,
 * per-context resources. */
#include <fcntl.h>
#include <unistd.h>

#include "core/core.h"
#include "engine/expr.h"
#include "fakes.h"
#include "plugrt/registry.h"
#include "plugrt/trace.h"
#include "prt_test.h"
#include "registry/adapter.h"
#include "registry/fieldser.h"

/* engine/op.c: the per-context resources. */
#include "engine/plugctx.h"

static char trace_buf[8192];
static void on_trace(void *user, const char *line)
{
    (void)user;
    if (strlen(trace_buf) + strlen(line) + 2 < sizeof trace_buf) {
        strcat(trace_buf, line);
        strcat(trace_buf, "\n");
    }
}

static prt_registry *fake_registry(void)
{
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_add(r, &fake_blob_creator, "fakes"));
    CHECK_OK(prt_registry_add(r, &fake_field_creator, "fakes"));
    CHECK_OK(prt_registry_add(r, &fake_short_ops_creator, "fakes"));
    return r;
}

static prt_tensor_desc desc_f32(int64_t a, int64_t b)
{
    prt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.format = PRT_FORMAT_LINEAR;
    d.dims.nb = 2;
    d.dims.d[0] = a;
    d.dims.d[1] = b;
    return d;
}

static prt_dyn_tensor_desc dyn(prt_tensor_desc d)
{
    prt_dyn_tensor_desc x;
    x.desc = d;
    x.min = x.opt = x.max = d.dims;
    return x;
}

/* Drive one plugin through the whole lifecycle with the adapter alone. */
static void drive(prt__plugin *pl, prt_plugin_context *ctx, float expect_scale)
{
    char err[512];
    prt_dtype in_t = PRT_DTYPE_F32, out_t = PRT_DTYPE_COUNT_;
    prt__exprs *x = NULL;
    prt_dims_expr in_e, out_e;
    prt_tensor_desc in = desc_f32(2, 3), out;
    prt_dyn_tensor_desc io[2];
    prt__plugin *inst = NULL;
    float xs[6] = {1, -2, 3, -4, 5, 6}, ys[6], ws[6];
    const void *ins[1] = {xs};
    void *outs[1] = {ys};
    prt_exec ex;
    int64_t v;
    int i;

    CHECK_EQ_INT(prt__plugin_nb_outputs(pl), 1);
    CHECK_OK(prt__plugin_output_types(pl, &in_t, 1, &out_t, 1, err, sizeof err));
    CHECK_EQ_INT(out_t, PRT_DTYPE_F32);
    CHECK_OK(prt__exprs_create(&x));
    in_e.nb = 2;
    in_e.d[0] = prt__exprs_leaf(x, 0, 0, 2);
    in_e.d[1] = prt__exprs_leaf(x, 0, 1, -1);
    CHECK_OK(prt__plugin_output_shapes(pl, &in_e, 1, &out_e, 1, prt__exprs_builder(x), err, sizeof err));
    CHECK_EQ_INT(out_e.nb, 2);
    CHECK_OK(prt__expr_eval(x, out_e.d[1], &in.dims, 1, &v, NULL));
    CHECK_EQ_INT(v, 3);
    out = in;
    io[0] = dyn(in);
    io[1] = dyn(out);
    CHECK(prt__plugin_supports(pl, 0, io, 1, 1));
    CHECK(prt__plugin_supports(pl, 1, io, 1, 1));
    CHECK_OK(prt__plugin_configure(pl, io, 1, io + 1, 1, err, sizeof err));
    CHECK_EQ_INT(prt__plugin_workspace(pl, io, 1, io + 1, 1), 6 * sizeof(float));
    CHECK_OK(prt__plugin_attach(pl, ctx, &inst, err, sizeof err));
    CHECK(inst != NULL && inst != pl);
    CHECK_OK(prt__plugin_shapes(inst, &in, 1, &out, 1, err, sizeof err));
    memset(&ex, 0, sizeof ex);
    ex.struct_size = sizeof ex;
    ex.abi_version = PRT_ABI_VERSION;
    ex.nb_threads = 1;
    for (i = 0; i < 6; i++) ys[i] = -999.0f;
    /* a direct parallel_for: run inline */
    ex.parallel_for = NULL;
    if (pl->style == PRT_STYLE_BLOB) {
        CHECK_OK(prt__plugin_enqueue(inst, &in, &out, ins, outs, ws, &ex));
        for (i = 0; i < 6; i++) CHECK_NEAR(ys[i], expect_scale * xs[i], 0);
    }
    prt__plugin_destroy(inst);
    prt__exprs_destroy(x);
}

TEST(blob_style_lifecycle_order)
{
    char err[512];
    prt__plugin *pl = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    trace_buf[0] = 0;
    prt_set_trace_callback(on_trace, NULL);
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "conv1", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    drive(pl, prt__plugctx_get(ctx), 2.0f);
    prt__plugin_destroy(pl);
    prt__plugctx_destroy(ctx);
    CHECK_MSG(strcmp(fake_log,
                     "B:create_blob B:get_nb_outputs B:get_output_data_types B:get_output_dims "
                     "B:supports_format_combination B:supports_format_combination B:configure_plugin "
                     "B:get_workspace_size B:clone B:attach_to_context B:initialize B:configure_plugin "
                     "B:enqueue B:terminate B:detach_from_context B:destroy B:destroy ") == 0,
              "order: %s", fake_log);
    CHECK_STR_CONTAINS(trace_buf, "conv1: create_blob\nconv1: get_nb_outputs\n");
    CHECK_STR_CONTAINS(trace_buf, "conv1: initialize\nconv1: configure_plugin\nconv1: enqueue\n"
                                  "conv1: terminate\nconv1: detach_from_context\nconv1: destroy\n");
    CHECK_EQ_INT(fake_res_created, 1);
    CHECK_EQ_INT(fake_res_destroyed, 1);
    CHECK_EQ_INT(fake_live_objects, 0);
    prt_set_trace_callback(NULL, NULL);
}

TEST(field_style_lifecycle_order)
{
    char err[512];
    prt__plugin *pl = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_create(&fake_field_creator, "fakes", "act", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    drive(pl, prt__plugctx_get(ctx), 3.0f);
    prt__plugin_destroy(pl);
    CHECK_EQ_INT(fake_res_created, 1);
    CHECK_EQ_INT(fake_res_destroyed, 1); /* released by the instance's destroy */
    CHECK_EQ_INT(prt__plugctx_nb_resources(ctx), 0);
    prt__plugctx_destroy(ctx);
    CHECK_MSG(strcmp(fake_log,
                     "F:create_field(build) F:get_nb_outputs F:get_output_data_types F:get_output_shapes "
                     "F:supports_format_combination F:supports_format_combination F:configure "
                     "F:get_workspace_size F:attach_to_context F:on_shape_change F:destroy F:destroy ") == 0,
              "order: %s", fake_log);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(resources_shared_by_two_plugins_are_created_and_destroyed_once)
{
    char err[512];
    prt__plugin *a = NULL, *b = NULL, *ia = NULL, *ib = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "a", NULL, PRT_PHASE_BUILD, &a, err, sizeof err));
    CHECK_OK(prt__plugin_create(&fake_field_creator, "fakes", "b", NULL, PRT_PHASE_BUILD, &b, err, sizeof err));
    CHECK_OK(prt__plugin_attach(a, prt__plugctx_get(ctx), &ia, err, sizeof err));
    CHECK_OK(prt__plugin_attach(b, prt__plugctx_get(ctx), &ib, err, sizeof err));
    CHECK_EQ_INT(fake_res_created, 1);
    CHECK_EQ_INT(prt__plugctx_nb_resources(ctx), 1);
    prt__plugin_destroy(ia);
    CHECK_EQ_INT(fake_res_destroyed, 0); /* b still holds it */
    prt__plugin_destroy(ib);
    CHECK_EQ_INT(fake_res_destroyed, 1);
    CHECK_EQ_INT(prt__plugctx_nb_resources(ctx), 0);
    /* acquired again after the last release: created anew */
    CHECK_OK(prt__plugin_attach(b, prt__plugctx_get(ctx), &ib, err, sizeof err));
    CHECK_EQ_INT(fake_res_created, 2);
    prt__plugin_destroy(ib);
    CHECK_EQ_INT(fake_res_destroyed, 2);
    prt__plugin_destroy(a);
    prt__plugin_destroy(b);
    prt__plugctx_destroy(ctx);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(resource_create_failure_is_reported)
{
    char err[512];
    prt__plugin *a = NULL, *ia = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_create(&fake_field_creator, "fakes", "b", NULL, PRT_PHASE_BUILD, &a, err, sizeof err));
    fake_fail_call = "res_create";
    CHECK(prt__plugin_attach(a, prt__plugctx_get(ctx), &ia, err, sizeof err) == PRT_STATUS_OUT_OF_MEMORY);
    CHECK(ia == NULL);
    CHECK_STR_CONTAINS(err, "b (test::FakeField v1): attach_to_context failed: creating resource \"fake.counter\" "
                            "failed: resource refused");
    CHECK_EQ_INT(prt__plugctx_nb_resources(ctx), 0);
    prt__plugin_destroy(a);
    prt__plugctx_destroy(ctx);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(plugin_errors_name_layer_plugin_and_call)
{
    char err[512];
    prt__plugin *pl = NULL;
    prt_tensor_desc in = desc_f32(2, 3);
    prt_dyn_tensor_desc io[2];
    prt_dtype t = PRT_DTYPE_F32, o;
    fake_reset();
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "conv1", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    io[0] = dyn(in);
    io[1] = dyn(in);
    fake_fail_call = "configure_plugin";
    CHECK(prt__plugin_configure(pl, io, 1, io + 1, 1, err, sizeof err) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_STR_CONTAINS(err, "conv1 (test::FakeBlob v1): configure_plugin failed: fake failure in configure_plugin");
    fake_fail_silent = 1;
    CHECK(prt__plugin_configure(pl, io, 1, io + 1, 1, err, sizeof err) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_STR_CONTAINS(err, "conv1 (test::FakeBlob v1): configure_plugin failed with PRT_STATUS_PLUGIN_ERROR");
    CHECK_STR_CONTAINS(err, "gave no message");
    fake_fail_call = "get_output_data_types";
    o = PRT_DTYPE_I8;
    CHECK(prt__plugin_output_types(pl, &t, 1, &o, 1, err, sizeof err) == PRT_STATUS_PLUGIN_ERROR);
    CHECK_EQ_INT(o, PRT_DTYPE_I8); /* untouched on failure */
    CHECK_STR_CONTAINS(err, "get_output_data_types");
    prt__plugin_destroy(pl);
    /* creation failures */
    fake_fail_call = "create_blob";
    fake_fail_silent = 0;
    pl = (prt__plugin *)&t;
    CHECK(prt__plugin_create(&fake_blob_creator, "fakes", "conv2", NULL, PRT_PHASE_BUILD, &pl, err,
                             sizeof err) == PRT_STATUS_PLUGIN_ERROR);
    CHECK(pl == (prt__plugin *)&t);
    CHECK_STR_CONTAINS(err, "conv2 (test::FakeBlob v1): create_blob failed: fake failure in create_blob");
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(fields_are_validated_before_create)
{
    char err[512];
    prt__plugin *pl = NULL;
    const char *bad = "xyz";
    prt_field f = {"scale", bad, PRT_FIELD_CHAR, 0, 3};
    prt_fields fc = {&f, 1, 0};
    fake_reset();
    CHECK(prt__plugin_create(&fake_blob_creator, "fakes", "l", &fc, PRT_PHASE_BUILD, &pl, err, sizeof err) ==
          PRT_STATUS_INVALID_FIELD);
    CHECK(pl == NULL);
    CHECK_STR_CONTAINS(err, "scale");
    CHECK(strcmp(fake_log, "") == 0); /* the creator never saw it */
}

/* ---- a plugin with nothing but clone and destroy ----------------------- */

typedef struct bare {
    prt_field_plugin base;
} bare;
static int bare_destroyed;
static void bare_destroy(prt_field_plugin *p)
{
    (void)p;
    bare_destroyed++;
}
static const prt_field_plugin_ops bare_ops = {sizeof(prt_field_plugin_ops), PRT_ABI_VERSION, NULL, NULL, NULL,
                                              NULL, bare_destroy};

TEST(null_ops_use_defaults_or_are_refused)
{
    bare b = {{&bare_ops}};
    prt__plugin pl;
    char err[512], layer[] = "L7";
    prt_dtype t = PRT_DTYPE_F32, o = PRT_DTYPE_I8;
    prt_tensor_desc in = desc_f32(1, 1);
    prt_dyn_tensor_desc io[2];
    prt__plugin *cp = NULL;
    prt__exprs *x = NULL;
    prt_dims_expr e[1];
    prt_fields fc;
    prt_writer w = prt_writer_init(NULL, 0);
    memset(&pl, 0, sizeof pl);
    pl.style = PRT_STYLE_FIELD;
    pl.creator = &fake_field_creator;
    pl.layer = layer;
    pl.field = &b.base;
    io[0] = dyn(in);
    io[1] = dyn(in);
    (void)fc;
    CHECK_EQ_INT(prt__plugin_nb_outputs(&pl), -1);
    CHECK(prt__plugin_output_types(&pl, &t, 1, &o, 1, err, sizeof err) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "L7 (test::FakeField v1): the plugin does not implement get_output_data_types");
    CHECK_OK(prt__exprs_create(&x));
    CHECK(prt__plugin_output_shapes(&pl, e, 0, e, 1, prt__exprs_builder(x), err, sizeof err) ==
          PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "get_output_shapes");
    prt__exprs_destroy(x);
    /* defaults */
    CHECK(prt__plugin_supports(&pl, 0, io, 1, 1)); /* linear accepted */
    io[0].desc.format = PRT_FORMAT_NHWC;
    CHECK(!prt__plugin_supports(&pl, 0, io, 1, 1)); /* others not */
    CHECK_OK(prt__plugin_configure(&pl, io, 1, io + 1, 1, err, sizeof err));
    CHECK_EQ_INT(prt__plugin_workspace(&pl, io, 1, io + 1, 1), 0);
    CHECK_OK(prt__plugin_shapes(&pl, &in, 1, &in, 1, err, sizeof err));
    CHECK(prt__plugin_clone(&pl, &cp, err, sizeof err) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "clone");
    CHECK(prt__plugin_write_record(&pl, &w, err, sizeof err) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "get_fields_to_serialize");
    CHECK(prt__plugin_enqueue(&pl, &in, &in, NULL, NULL, NULL, NULL) == PRT_STATUS_UNSUPPORTED);
}

TEST(members_beyond_struct_size_are_never_read)
{
    char err[512];
    prt__plugin *pl = NULL, *inst = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_create(&fake_short_ops_creator, "fakes", "s", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    /* the clone gets the full ops from fb_clone; make the short one the
     * instance by attaching the build plugin's short ops directly */
    CHECK_OK(prt__plugin_attach(pl, prt__plugctx_get(ctx), &inst, err, sizeof err));
    prt__plugin_destroy(inst);
    prt__plugin_destroy(pl);
    prt__plugctx_destroy(ctx);
    CHECK(strstr(fake_log, "attach_to_context") != NULL); /* the full-ops clone attached */
    CHECK_EQ_INT(fake_live_objects, 0);
}

static prt_status short_only_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err);
static prt_blob_plugin_ops short_clone_ops;
static prt_status short_only_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    prt_status s = fake_blob_creator.deserialize_blob(&fake_blob_creator, "FKB1\0\0\0@", 8, out, err);
    (void)p;
    if (s == PRT_OK) (*out)->ops = &short_clone_ops;
    return s;
}

TEST(short_ops_attach_skips_uncovered_members)
{
    char err[512];
    prt__plugin *pl = NULL, *inst = NULL;
    prt__plugctx *ctx = NULL;
    fake_reset();
    CHECK_OK(prt__plugin_create(&fake_short_ops_creator, "fakes", "s", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    /* ops whose clone keeps the short struct_size: attach_to_context and
     * detach_from_context lie beyond it (and trap if called) */
    short_clone_ops = *pl->blob->ops;
    short_clone_ops.clone = short_only_clone;
    pl->blob->ops = &short_clone_ops;
    CHECK_OK(prt__plugctx_create(PRT_DEVICE_CPU, 0, &ctx));
    CHECK_OK(prt__plugin_attach(pl, prt__plugctx_get(ctx), &inst, err, sizeof err));
    CHECK(!inst->attached);
    CHECK(inst->initialized);
    prt__plugin_destroy(inst);
    prt__plugin_destroy(pl);
    prt__plugctx_destroy(ctx);
    CHECK(strstr(fake_log, "attach_to_context") == NULL);
    CHECK(strstr(fake_log, "detach_from_context") == NULL);
    CHECK_EQ_INT(fake_res_created, 0);
    CHECK_EQ_INT(fake_live_objects, 0);
}

/* ---- records ------------------------------------------------------------ */

static size_t write_record(prt__plugin *pl, uint8_t *buf, size_t cap)
{
    char err[512];
    prt_writer w = prt_writer_init(NULL, 0);
    size_t n;
    CHECK_OK(prt__plugin_write_record(pl, &w, err, sizeof err));
    n = w.len;
    CHECK(n <= cap);
    w = prt_writer_init(buf, cap);
    CHECK_OK(prt__plugin_write_record(pl, &w, err, sizeof err));
    CHECK_EQ_INT(w.len, n);
    return n;
}

TEST(blob_record_round_trip)
{
    char err[512];
    prt_registry *r = fake_registry();
    prt__plugin *pl = NULL, *back = NULL;
    float s = 0.25f;
    prt_field f = {"scale", &s, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    uint8_t buf[256];
    size_t n;
    prt_reader rd;
    fake_reset();
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "l", &fc, PRT_PHASE_BUILD, &pl, err, sizeof err));
    n = write_record(pl, buf, sizeof buf);
    /* u8 style, 4 strings, u64 length, 8 blob bytes */
    CHECK_EQ_INT(n, 1 + (4 + 8) + (4 + 1) + (4 + 4) + (4 + 5) + 8 + 8);
    CHECK_EQ_INT(buf[0], PRT_STYLE_BLOB);
    rd = prt_reader_init(buf, n);
    CHECK_OK(prt__plugin_read_record(r, &rd, "again", &back, err, sizeof err));
    CHECK_EQ_INT(prt_reader_left(&rd), 0);
    CHECK(back->creator == &fake_blob_creator);
    CHECK(strcmp(back->layer, "again") == 0);
    CHECK(strcmp(back->owner, "fakes") == 0);
    CHECK(strstr(fake_log, "B:deserialize_blob") != NULL);
    {
        uint8_t buf2[256];
        size_t n2 = write_record(back, buf2, sizeof buf2);
        CHECK_EQ_INT(n2, n);
        CHECK(memcmp(buf, buf2, n) == 0);
    }
    prt__plugin_destroy(back);
    prt__plugin_destroy(pl);
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(blob_length_must_match_the_plugin)
{
    char err[512];
    prt_registry *r = fake_registry();
    prt__plugin *pl = NULL, *back = NULL;
    uint8_t buf[256];
    size_t n;
    prt_reader rd;
    fake_reset();
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "l", NULL, PRT_PHASE_BUILD, &pl, err, sizeof err));
    n = write_record(pl, buf, sizeof buf);
    /* one more blob byte: the plugin accepts it, the adapter does not */
    buf[n - 16] = 9;
    buf[n] = 0;
    rd = prt_reader_init(buf, n + 1);
    CHECK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "blob is 9 bytes but the plugin reports 8");
    CHECK_EQ_INT(rd.pos, 0); /* the reader is left as it was */
    CHECK(back == NULL);
    /* a writer that is too small */
    {
        prt_writer w = prt_writer_init(buf, n - 1);
        CHECK(prt__plugin_write_record(pl, &w, err, sizeof err) != PRT_OK);
        CHECK_STR_CONTAINS(err, "does not fit");
    }
    prt__plugin_destroy(pl);
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(field_record_round_trip_and_revalidation)
{
    char err[512];
    prt_registry *r = fake_registry();
    prt__plugin *pl = NULL, *back = NULL;
    float s = 1.5f;
    int32_t dd = 1;
    prt_field f[2] = {{"scale", &s, PRT_FIELD_FLOAT32, 0, 1}, {"ddep", &dd, PRT_FIELD_INT32, 0, 1}};
    prt_fields fc = {f, 2, 0};
    uint8_t buf[512];
    size_t n;
    prt_reader rd;
    prt_writer w;
    fake_reset();
    CHECK_OK(prt__plugin_create(&fake_field_creator, "fakes", "l", &fc, PRT_PHASE_BUILD, &pl, err, sizeof err));
    n = write_record(pl, buf, sizeof buf);
    rd = prt_reader_init(buf, n);
    CHECK_OK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err));
    CHECK(strstr(fake_log, "F:create_field(runtime)") != NULL);
    {
        uint8_t buf2[512];
        CHECK_EQ_INT(write_record(back, buf2, sizeof buf2), n);
        CHECK(memcmp(buf, buf2, n) == 0);
    }
    prt__plugin_destroy(back);
    back = NULL;

    /* a record whose fields break the schema (ddep = 5 > 1) */
    dd = 5;
    w = prt_writer_init(buf, sizeof buf);
    prt_write_u8(&w, PRT_STYLE_FIELD);
    prt_write_str(&w, "FakeField");
    prt_write_str(&w, "1");
    prt_write_str(&w, "test");
    prt_write_str(&w, "fakes");
    CHECK_OK(prt__fields_write(&w, &fc, err, sizeof err));
    rd = prt_reader_init(buf, w.len);
    CHECK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "ddep");
    CHECK(back == NULL);

    /* the style byte says blob, the creator is field style */
    buf[0] = PRT_STYLE_BLOB;
    rd = prt_reader_init(buf, w.len);
    CHECK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_STATUS_VERSION_MISMATCH);
    CHECK_STR_CONTAINS(err, "blob-style");
    buf[0] = 9;
    rd = prt_reader_init(buf, w.len);
    CHECK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "style byte");
    prt__plugin_destroy(pl);
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(unknown_creator_lists_near_misses)
{
    char err[1024];
    prt_registry *r = fake_registry();
    prt__plugin *back = NULL;
    uint8_t buf[256];
    prt_writer w = prt_writer_init(buf, sizeof buf);
    prt_reader rd;
    prt_write_u8(&w, PRT_STYLE_BLOB);
    prt_write_str(&w, "FakeBlob");
    prt_write_str(&w, "7");
    prt_write_str(&w, "test");
    prt_write_str(&w, "somelib");
    prt_write_u64(&w, 0);
    rd = prt_reader_init(buf, w.len);
    CHECK(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(err, "FakeBlob");
    CHECK_STR_CONTAINS(err, "somelib");
    CHECK_STR_CONTAINS(err, prt_registry_last_error(r));
    prt_registry_destroy(r);
}

TEST(truncated_and_corrupt_records_fail_cleanly)
{
    char err[512];
    prt_registry *r = fake_registry();
    const prt_plugin_creator *cs[2] = {&fake_blob_creator, &fake_field_creator};
    int k;
    fake_reset();
    for (k = 0; k < 2; k++) {
        prt__plugin *pl = NULL, *back = NULL;
        uint8_t buf[512], copy[512];
        size_t n, cut, bit;
        prt_reader rd;
        CHECK_OK(prt__plugin_create(cs[k], "fakes", "l", NULL, PRT_PHASE_BUILD, &pl, err, sizeof err));
        n = write_record(pl, buf, sizeof buf);
        for (cut = 0; cut < n; cut++) {
            rd = prt_reader_init(buf, cut);
            back = NULL;
            CHECK_MSG(prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) != PRT_OK,
                      "style %d: %zu of %zu bytes accepted", k, cut, n);
            CHECK(back == NULL);
            CHECK(err[0] != 0);
        }
        for (bit = 0; bit < n * 8; bit++) {
            memcpy(copy, buf, n);
            copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            rd = prt_reader_init(copy, n);
            back = NULL;
            if (prt__plugin_read_record(r, &rd, "l", &back, err, sizeof err) == PRT_OK) {
                prt__plugin_destroy(back); /* a flipped float bit is still a valid plugin */
            } else {
                CHECK(back == NULL);
                CHECK(err[0] != 0);
            }
        }
        prt__plugin_destroy(pl);
    }
    prt_registry_destroy(r);
    CHECK_EQ_INT(fake_live_objects, 0);
}

TEST(trace_from_environment_goes_to_stderr)
{
    char err[512], path[] = "/tmp/prt_trace_XXXXXX", text[4096];
    prt__plugin *pl = NULL;
    int fd = mkstemp(path), saved;
    ssize_t got;
    CHECK(fd >= 0);
    setenv("PLUGRT_TRACE", "alloc,lifecycle", 1);
    fflush(stderr);
    saved = dup(2);
    dup2(fd, 2);
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "conv9", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    prt__plugin_destroy(pl);
    prt_set_trace(0);
    CHECK_OK(prt__plugin_create(&fake_blob_creator, "fakes", "quiet", NULL, PRT_PHASE_BUILD, &pl, err,
                                sizeof err));
    prt__plugin_destroy(pl);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    got = read(fd, text, sizeof text - 1);
    close(fd);
    unlink(path);
    CHECK(got > 0);
    text[got > 0 ? got : 0] = 0;
    CHECK_STR_CONTAINS(text, "plugrt trace: conv9: create_blob\n");
    CHECK_STR_CONTAINS(text, "plugrt trace: conv9: destroy\n");
    CHECK(strstr(text, "quiet") == NULL);
}
