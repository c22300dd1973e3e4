/*
 * tests/engine/test_optio.c - optional inputs and outputs (engine/optio.c):
 * absent inputs and omitted trailing outputs through network, JSON, build,
 * plan and run, with plugins of both styles.
 *
 *   TestOpt v1 (field): y = x + a + 10 b, z = 2 y; a and b optional
 *                      (absent: 0), z may be left out. f32, same shapes.
 *                      get_io_info: min_inputs 1, max_inputs 3,
 *                      min_outputs 1. At enqueue it checks that an absent
 *                      input comes as a NULL pointer and an absent
 *                      descriptor, and fails otherwise.
 *   TestOpt v2 (field): the same plugin, its build ops ending before
 *                      get_io_info (struct_size): every input required,
 *                      every output named.
 *   TestOptBlob v1 (blob): y = x * (w present ? w[0] : 2); w optional.
 */
#include <stdlib.h>

#include "core/core.h"
#include "engine/plan.h"
#include "plugrt/engine.h"
#include "plugrt/plugin.h"
#include "prt_test.h"
#include "toyfield.h"

/* ---- TestOpt (field style) --------------------------------------------------- */

static int32_t op_nb_outputs(const prt_field_plugin *p) { (void)p; return 2; }

static prt_status op_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    int32_t i;
    (void)p;
    for (i = 1; i < nb_in; i++)
        if (in[i] != PRT_DTYPE_ABSENT && in[i] != in[0]) {
            prt_msg_set(err, "TestOpt: input %d is %s, input 0 %s", (int)i, prt_dtype_name(in[i]),
                        prt_dtype_name(in[0]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    for (i = 0; i < nb_out; i++) out[i] = in[0];
    return PRT_OK;
}

static prt_status op_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    int32_t i;
    (void)p; (void)eb;
    if (in[0].nb == PRT_NB_DIMS_ABSENT) {
        prt_msg_set(err, "TestOpt: x is absent");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 1; i < nb_in; i++)
        if (in[i].nb != PRT_NB_DIMS_ABSENT && in[i].nb != in[0].nb) {
            prt_msg_set(err, "TestOpt: input %d has rank %d, x %d", (int)i, (int)in[i].nb, (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    for (i = 0; i < nb_out; i++) out[i] = in[0];
    return PRT_OK;
}

static int op_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p; (void)nb_out;
    /* Never asked about an absent position. */
    if (pos < nb_in && prt_tensor_absent(&io[pos].desc)) abort();
    return io[pos].desc.dtype == PRT_DTYPE_F32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status op_io_info(const prt_field_plugin *p, prt_io_info *c, prt_msg *err)
{
    (void)p; (void)err;
    c->min_inputs = 1;
    c->max_inputs = 3;
    c->min_outputs = 1;
    return PRT_OK;
}

static prt_status op_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)in; (void)out; (void)err;
    ((toy_pl *)p)->nb_in = nb_in;
    ((toy_pl *)p)->nb_out = nb_out;
    return PRT_OK;
}

static prt_status op_enqueue(prt_field_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                              const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    /* enqueue is given no counts: the layer's come from on_shape_change. */
    const toy_pl *o = (const toy_pl *)p;
    int64_t n = prt_dims_volume(&od[0].dims), i;
    const float *x = in[0], *a = NULL, *b = NULL;
    int32_t k;
    (void)ws;
    if (o->nb_in < 1 || o->nb_in > 3 || o->nb_out < 1 || o->nb_out > 2) {
        ex->set_error(ex, "TestOpt: on_shape_change was not called before enqueue");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    for (k = 1; k < o->nb_in; k++) {
        const prt_tensor_desc *d = &id[k];
        int absent = prt_tensor_absent(d);
        if (absent != (in[k] == NULL) || (absent && d->dtype != PRT_DTYPE_ABSENT)) {
            ex->set_error(ex, "TestOpt: an absent input must come as NULL with an absent descriptor");
            return PRT_STATUS_PLUGIN_ERROR;
        }
        if (!absent) *(k == 1 ? &a : &b) = in[k];
    }
    for (i = 0; i < n; i++) {
        float y = x[i] + (a ? a[i] : 0.0f) + 10.0f * (b ? b[i] : 0.0f);
        ((float *)out[0])[i] = y;
        if (o->nb_out > 1) ((float *)out[1])[i] = 2.0f * y;
    }
    return PRT_OK;
}

static const prt_plugin_build_ops op_build = {
    .struct_size = sizeof op_build, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = op_nb_outputs, .get_output_data_types = op_types, .get_output_shapes = op_shapes,
    .supports_format_combination = op_supports, .get_io_info = op_io_info,
};
/* As built against a header without get_io_info. */
static const prt_plugin_build_ops op_build_old = {
    .struct_size = offsetof(prt_plugin_build_ops, get_io_info), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = op_nb_outputs, .get_output_data_types = op_types, .get_output_shapes = op_shapes,
    .supports_format_combination = op_supports, .get_io_info = op_io_info, /* beyond struct_size: unread */
};
static const prt_plugin_runtime_ops op_runtime = {
    .struct_size = sizeof op_runtime, .abi_version = PRT_ABI_VERSION,
    .on_shape_change = op_shape_change, .enqueue = op_enqueue, .attach_to_context = toy_attach,
    .get_fields_to_serialize = toy_fields,
};
static const prt_field_plugin_ops op_ops = {
    .struct_size = sizeof op_ops, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &op_build, .runtime = &op_runtime, .clone = toy_clone, .destroy = toy_destroy,
};
static const prt_field_plugin_ops op_ops_old = {
    .struct_size = sizeof op_ops_old, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &op_build_old, .runtime = &op_runtime, .clone = toy_clone, .destroy = toy_destroy,
};
static const toy_kind opt_kind = {&op_ops, 1}, opt_kind_old = {&op_ops_old, 2};

static const prt_plugin_creator opt_creator = {
    .struct_size = sizeof opt_creator, .abi_version = PRT_ABI_VERSION, .name = "TestOpt", .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),
    .create_field = toy_create, .doc = "y = x + a + 10 b, z = 2 y", .user = (void *)&opt_kind,
};
static const prt_plugin_creator opt_creator_old = {
    .struct_size = sizeof opt_creator_old, .abi_version = PRT_ABI_VERSION, .name = "TestOpt", .version = "2",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),
    .create_field = toy_create, .doc = "TestOpt without get_io_info", .user = (void *)&opt_kind_old,
};

/* ---- TestOptBlob (blob style) ---------------------------------------------------- */

static int32_t ob_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }
static prt_status ob_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)err;
    out[0] = in[0];
    return PRT_OK;
}
static prt_status ob_dims(prt_blob_plugin *p, int32_t oi, const prt_dims_expr *in, int32_t nb_in,
                          prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    (void)p; (void)oi; (void)eb;
    if (nb_in > 1 && in[1].nb != PRT_NB_DIMS_ABSENT && in[1].nb != 1) {
        prt_msg_set(err, "TestOptBlob: w must be 1-D");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    *out = in[0];
    return PRT_OK;
}
static int ob_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    (void)p; (void)nb_out;
    if (pos < nb_in && prt_tensor_absent(&io[pos])) abort();
    return io[pos].dtype == PRT_DTYPE_F32 && io[pos].format == PRT_FORMAT_LINEAR;
}
static prt_status ob_enqueue(prt_blob_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                             const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    int64_t n = prt_dims_volume(&od[0].dims), i;
    float w = 2.0f;
    (void)p; (void)ws; (void)ex;
    if (in[1]) w = ((const float *)in[1])[0];
    else if (!prt_tensor_absent(&id[1])) return PRT_STATUS_PLUGIN_ERROR;
    for (i = 0; i < n; i++) ((float *)out[0])[i] = ((const float *)in[0])[i] * w;
    return PRT_OK;
}
static size_t ob_size(const prt_blob_plugin *p) { (void)p; return 0; }
static prt_status ob_ser(const prt_blob_plugin *p, void *b, size_t c) { (void)p; (void)b; (void)c; return PRT_OK; }
static void ob_destroy(prt_blob_plugin *p) { free(p); }
static prt_status ob_io_info(const prt_blob_plugin *p, prt_io_info *c, prt_msg *err)
{
    (void)p; (void)err;
    c->min_inputs = 1;
    c->max_inputs = 2;
    return PRT_OK;
}
static prt_status ob_clone(const prt_blob_plugin *p, prt_blob_plugin **o, prt_msg *e);
static const prt_blob_plugin_ops ob_ops = {
    .struct_size = sizeof ob_ops, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = ob_nb_outputs, .get_output_data_types = ob_types, .get_output_dims = ob_dims,
    .supports_format_combination = ob_supports, .enqueue = ob_enqueue, .get_serialization_size = ob_size,
    .serialize = ob_ser, .clone = ob_clone, .destroy = ob_destroy, .get_io_info = ob_io_info,
};
static prt_status ob_clone(const prt_blob_plugin *p, prt_blob_plugin **o, prt_msg *e)
{
    prt_blob_plugin *b = calloc(1, sizeof *b);
    (void)p; (void)e;
    if (!b) return PRT_STATUS_OUT_OF_MEMORY;
    b->ops = &ob_ops;
    *o = b;
    return PRT_OK;
}
static prt_status ob_create(const prt_plugin_creator *c, const prt_fields *f, prt_blob_plugin **o, prt_msg *e)
{
    (void)c; (void)f;
    return ob_clone(NULL, o, e);
}
static prt_status ob_load(const prt_plugin_creator *c, const void *b, size_t n, prt_blob_plugin **o, prt_msg *e)
{
    (void)c; (void)b; (void)n;
    return ob_clone(NULL, o, e);
}
static const prt_plugin_creator optblob_creator = {
    .struct_size = sizeof optblob_creator, .abi_version = PRT_ABI_VERSION, .name = "TestOptBlob", .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_BLOB, .field_schema_size = sizeof(prt_field_schema),
    .create_blob = ob_create, .deserialize_blob = ob_load, .doc = "y = x * (w ? w[0] : 2)",
};

/* ---- helpers ------------------------------------------------------------------- */

static prt_registry *opt_registry(void)
{
    prt_registry *r = NULL;
    if (prt_registry_create(prt_registry_global(), &r) != PRT_OK) return NULL;
    if (prt_registry_add(r, &opt_creator, "optio-tests") != PRT_OK ||
        prt_registry_add(r, &opt_creator_old, "optio-tests") != PRT_OK ||
        prt_registry_add(r, &optblob_creator, "optio-tests") != PRT_OK) {
        prt_registry_destroy(r);
        return NULL;
    }
    return r;
}

static const prt_dims k_dims = {1, 0, {6}};
static const float k_x[6] = {1, 2, 3, 4, 5, 6};
static const float k_a[6] = {0.5f, 0.25f, -1, 2, 0, 3};
static const float k_b[6] = {1, -1, 2, -2, 3, -3};

/* Inputs x, a, b (f32 [6]); one layer of `plugin` v`version` reading `ins`
 * and naming `outs`; `outs[0]` marked as output (and "z" when named). */
static prt_network *one_layer(prt_registry *r, const char *plugin, const char *version, const char *const *ins,
                              int32_t nin, const char *const *outs, int32_t nout, prt_status *add_status)
{
    prt_network *net = NULL;
    int32_t i;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &k_dims));
    CHECK_OK(prt_network_add_input(net, "a", PRT_DTYPE_F32, &k_dims));
    CHECK_OK(prt_network_add_input(net, "b", PRT_DTYPE_F32, &k_dims));
    *add_status = prt_network_add_layer(net, "L", plugin, version, "", NULL, ins, nin, outs, nout);
    if (*add_status != PRT_OK) return net;
    for (i = 0; i < nout; i++)
        if (outs[i][0]) CHECK_OK(prt_network_mark_output(net, outs[i]));
    return net;
}

/* Build, run on the CPU, and compare y (and z when named) with TestOpt's rule. */
static void run_and_check(prt_engine *e, int use_a, int use_b, int with_z)
{
    prt_context *ctx = NULL;
    float y[6], z[6];
    int i;
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)k_x));
    CHECK_OK(prt_context_set_tensor(ctx, "a", (void *)k_a));
    CHECK_OK(prt_context_set_tensor(ctx, "b", (void *)k_b));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    if (with_z) CHECK_OK(prt_context_set_tensor(ctx, "z", z));
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    for (i = 0; i < 6; i++) {
        float want = k_x[i] + (use_a ? k_a[i] : 0.0f) + 10.0f * (use_b ? k_b[i] : 0.0f);
        CHECK_NEAR(y[i], want, 1e-6);
        if (with_z) CHECK_NEAR(z[i], 2.0f * want, 1e-6);
    }
    prt_context_destroy(ctx);
}

static prt_engine *build_ok(prt_network *net, prt_registry *r)
{
    prt_engine *e = NULL;
    char err[1024] = "";
    CHECK_MSG(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    return e;
}

static void build_fails(prt_network *net, prt_registry *r, const char *want)
{
    prt_engine *e = NULL;
    char err[1024] = "";
    CHECK(prt_engine_build(net, NULL, r, &e, err, sizeof err) != PRT_OK);
    CHECK(e == NULL);
    CHECK_STR_CONTAINS(err, want);
}

static uint32_t read_version_of(prt_engine *e)
{
    size_t len = 0;
    uint8_t *b;
    uint32_t v;
    b = toy_plan_bytes(e, &len);
    CHECK(b != NULL);
    v = (uint32_t)b[8] | (uint32_t)b[9] << 8;
    free(b);
    return v;
}

/* ---- cases ------------------------------------------------------------------------ */

TEST(absent_and_present_optional_inputs)
{
    static const char *const y_only[] = {"y"};
    static const struct {
        const char *ins[3];
        int32_t nin;
        int use_a, use_b;
    } cases[] = {
        {{"x", "", ""}, 3, 0, 0}, {{"x", "", "b"}, 3, 0, 1}, {{"x", "a", ""}, 3, 1, 0},
        {{"x", "a", "b"}, 3, 1, 1}, {{"x", "a"}, 2, 1, 0},   {{"x"}, 1, 0, 0},
    };
    prt_registry *r = opt_registry();
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        prt_status st;
        prt_network *net = one_layer(r, "TestOpt", "1", cases[k].ins, cases[k].nin, y_only, 1, &st);
        prt_engine *e;
        CHECK_OK(st);
        e = build_ok(net, r);
        run_and_check(e, cases[k].use_a, cases[k].use_b, 0);
        prt_engine_destroy(e);
        prt_network_destroy(net);
    }
    prt_registry_destroy(r);
}

TEST(blob_style_optional_input)
{
    static const char *const with_w[] = {"x", "a"}, *const without[] = {"x", ""}, *const y_only[] = {"y"};
    prt_registry *r = opt_registry();
    int k;
    for (k = 0; k < 2; k++) {
        prt_status st;
        prt_network *net = one_layer(r, "TestOptBlob", "1", k ? with_w : without, 2, y_only, 1, &st);
        prt_engine *e;
        prt_context *ctx = NULL;
        float y[6];
        int i;
        CHECK_OK(st);
        e = build_ok(net, r);
        CHECK_OK(prt_context_create(e, NULL, &ctx));
        CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)k_x));
        CHECK_OK(prt_context_set_tensor(ctx, "a", (void *)k_a));
        CHECK_OK(prt_context_set_tensor(ctx, "b", (void *)k_b));
        CHECK_OK(prt_context_set_tensor(ctx, "y", y));
        CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
        for (i = 0; i < 6; i++) CHECK_NEAR(y[i], k_x[i] * (k ? k_a[0] : 2.0f), 1e-6);
        prt_context_destroy(ctx);
        prt_engine_destroy(e);
        prt_network_destroy(net);
    }
    prt_registry_destroy(r);
}

TEST(too_few_and_too_many_inputs_and_outputs)
{
    static const char *const gap[] = {"", "z"}, *const blob3[] = {"x", "a", "b"};
    static const struct {
        const char *plugin, *version;
        const char *ins[4];
        int32_t nin;
        const char *outs[3];
        int32_t nout;
        const char *want;
    } cases[] = {
        {"TestOpt", "1", {NULL}, 0, {"y"}, 1, "layer \"L\" (TestOpt v1): 0 inputs given; the plugin needs at least 1"},
        {"TestOpt", "1", {"x", "a", "b", "x"}, 4, {"y"}, 1, "4 inputs given; the plugin takes at most 3"},
        {"TestOptBlob", "1", {"x", "a", "b"}, 3, {"y"}, 1, "3 inputs given; the plugin takes at most 2"},
        {"TestOpt", "1", {"", "a"}, 2, {"y"}, 1, "input 0 is absent (empty name), but the plugin requires inputs 0..0"},
        /* Without get_io_info (struct_size ends before it) nothing is optional. */
        {"TestOpt", "2", {"x", ""}, 2, {"y", "z"}, 2,
         "input 1 is absent (empty name), but the plugin declares no optional inputs"},
        {"TestOpt", "2", {"x", "a", "b"}, 3, {"y"}, 1, "the plugin has 2 outputs, the network names 1"},
        {"TestOpt", "1", {"x", "a", "b"}, 3, {"y", "z", "w"}, 3,
         "the network names 3 outputs; the plugin has 2 and needs at least the first 1 named"},
    };
    prt_registry *r = opt_registry();
    prt_network *net;
    prt_status st;
    size_t k;

    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        net = one_layer(r, cases[k].plugin, cases[k].version, cases[k].ins, cases[k].nin, cases[k].outs, cases[k].nout,
                        &st);
        CHECK_OK(st);
        build_fails(net, r, cases[k].want);
        prt_network_destroy(net);
    }

    /* Only outputs at the end may be left out. */
    net = one_layer(r, "TestOpt", "1", blob3, 3, gap, 2, &st);
    CHECK_EQ_INT(st, PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_network_last_error(net), "output 0 has an empty name; only outputs at the end may be left out");
    CHECK_EQ_INT(prt_network_nb_layers(net), 0);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

TEST(omitted_trailing_outputs)
{
    static const char *const ins[] = {"x", "a", "b"}, *const y_only[] = {"y"}, *const y_empty[] = {"y", ""},
                             *const yz[] = {"y", "z"};
    prt_registry *r = opt_registry();
    int k;
    for (k = 0; k < 3; k++) {
        prt_status st;
        prt_network *net = one_layer(r, "TestOpt", "1", ins, 3, k == 0 ? y_only : k == 1 ? y_empty : yz,
                                     k == 0 ? 1 : 2, &st);
        prt_engine *e;
        CHECK_OK(st);
        CHECK_EQ_INT(prt_network_nb_outputs(net), k == 2 ? 2 : 1);
        e = build_ok(net, r);
        CHECK_EQ_INT(prt_engine_nb_io(e), k == 2 ? 5 : 4);
        /* Plans that leave an output out need a reader of version 2. */
        CHECK_EQ_INT(read_version_of(e), k == 2 ? 1 : 2);
        run_and_check(e, 1, 1, k == 2);
        prt_engine_destroy(e);
        prt_network_destroy(net);
    }
    prt_registry_destroy(r);
}

static const char *k_json =
    "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [6]},"
    "              {\"name\": \"a\", \"dtype\": \"f32\", \"dims\": [6]},"
    "              {\"name\": \"b\", \"dtype\": \"f32\", \"dims\": [6]}],"
    " \"layers\": [{\"plugin\": \"TestOpt\", \"name\": \"L\", \"inputs\": [\"x\", \"\", \"b\"],"
    "              \"outputs\": [\"y\", \"\"]}],"
    " \"outputs\": [\"y\"]}";

TEST(plan_round_trip_keeps_absent_inputs_and_omitted_outputs)
{
    prt_registry *r = opt_registry(), *r2 = opt_registry();
    prt_network *net = NULL;
    prt_engine *e, *e2 = NULL;
    char err[1024] = "";
    size_t len = 0;
    uint8_t *bytes;
    prt__plan *p = NULL;
    int32_t li;

    CHECK_MSG(prt_network_from_json(r, k_json, strlen(k_json), NULL, &net, err, sizeof err) == PRT_OK, "%s", err);
    e = build_ok(net, r);
    bytes = toy_plan_bytes(e, &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(bytes[8], 2);  /* read version */
    CHECK_EQ_INT(bytes[12], PRT__PLAN_WRITE_VERSION); /* write version */
    CHECK_MSG(prt_engine_deserialize(r2, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    run_and_check(e2, 0, 1, 0);
    /* Damaged plans with absent inputs load or fail with a message. */
    CHECK(toy_flip_and_load(r2, bytes, len, 400) >= 0);

    /* The layer keeps its three inputs, the second absent, and one output. */
    CHECK_OK(prt__plan_read(bytes, len, &p, err, sizeof err));
    for (li = 0; li < p->nb_layers && strcmp(p->layers[li].name, "L") != 0; li++) {}
    CHECK(li < p->nb_layers);
    CHECK_EQ_INT(p->layers[li].nb_in, 3);
    CHECK_EQ_INT(p->layers[li].in[1], -1);
    CHECK(p->layers[li].in[2] >= 0);
    CHECK_EQ_INT(p->layers[li].nb_out, 1);

    /* The same plan claiming read version 1 is refused: version 1 has no
     * absent inputs. */
    {
        uint8_t *b1 = NULL;
        size_t n1 = 0;
        prt_engine *e3 = NULL;
        p->read_version = 1;
        CHECK_OK(prt__plan_write(p, &b1, &n1, err, sizeof err));
        CHECK_EQ_INT(b1[8], 1);
        CHECK(prt_engine_deserialize(r2, b1, n1, &e3, err, sizeof err) == PRT_STATUS_BAD_FORMAT);
        CHECK(e3 == NULL);
        CHECK_STR_CONTAINS(err, "layer \"L\": input 1 is tensor -1 of");
        prt__free(b1);
    }
    prt__plan_free(p);
    free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r2);
    prt_registry_destroy(r);
}

TEST(plans_without_optional_io_stay_version_1)
{
    static const char *const ins[] = {"x", "a", "b"}, *const yz[] = {"y", "z"};
    prt_registry *r = opt_registry();
    prt_status st;
    prt_network *net = one_layer(r, "TestOpt", "1", ins, 3, yz, 2, &st);
    prt_engine *e, *e2 = NULL;
    size_t len = 0;
    uint8_t *b;
    char err[1024] = "";
    CHECK_OK(st);
    e = build_ok(net, r);
    b = toy_plan_bytes(e, &len);
    CHECK(b != NULL);
    CHECK_EQ_INT(b[8], 1);
    /* As the version-1 writer wrote it (write version 1, outside the
     * checksum): still loads. */
    b[12] = 1;
    CHECK_MSG(prt_engine_deserialize(r, b, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    run_and_check(e2, 1, 1, 1);
    free(b);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}
