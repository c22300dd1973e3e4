/*
 * tests/engine/test_shapeval.c - shape values (engine/shapeval.c): plugins
 * that read their inputs' values as expressions and compute outputs on the
 * host, so that a dynamic dim stays symbolic through a shape sub-graph.
 *
 * Test plugins (field style, get_output_shapes_v2 only):
 *   TestShape   x -> int64 [rank]: the dims of x (values: x's extents).
 *   TestGather  (data, indices) -> data[indices] (values; both inputs are
 *               shape-value inputs; negative indices count from the end).
 *   TestConcat  (a, b, ...) -> the values one after the other.
 *   TestMul     (a, b) -> a * b element by element (values).
 *   TestReshape (x, shape) -> x with dims = shape's values (-1: the rest);
 *               shape is a shape-value input. Copies x at enqueue.
 * Only TestReshape is ever enqueued: the others' outputs are all values,
 * which the engine writes itself (enqueues are counted).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "plugrt/engine.h"
#include "plugrt/plugin.h"
#include "prt_test.h"
#include "toyfield.h"

enum { K_SHAPE, K_GATHER, K_CONCAT, K_MUL, K_RESHAPE };

static atomic_int enqueues[K_RESHAPE + 1];

static int kind_of(const prt_field_plugin *p) { return toy_kind_of(p); }
static int32_t sv_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status sv_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)nb_in; (void)nb_out; (void)err;
    out[0] = kind_of(p) == K_RESHAPE ? in[0] : PRT_DTYPE_I64;
    return PRT_OK;
}

static prt_status sv_info(const prt_field_plugin *p, prt_io_info *info, prt_msg *err)
{
    (void)err;
    switch (kind_of(p)) {
    case K_GATHER: case K_MUL: info->value_inputs = 3u; break;
    case K_CONCAT: info->value_inputs = 0xffffffffu; break;
    case K_RESHAPE: info->value_inputs = 2u; break;
    default: break;
    }
    return PRT_OK;
}

static prt_status need_values(const prt_dims_expr *v, int32_t i, prt_msg *err)
{
    if (v[i].nb == PRT_NB_VALUES_UNKNOWN) {
        prt_msg_set(err, "input %d has no shape values", (int)i);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status sv_shapes(prt_field_plugin *p, const prt_dims_expr *in, const prt_dims_expr *iv, int32_t nb_in,
                            prt_dims_expr *out, prt_dims_expr *ov, int32_t nb_out, prt_expr_builder *eb,
                            prt_msg *err)
{
    int32_t i, k, n = 0;
    (void)nb_out;
    switch (kind_of(p)) {
    case K_SHAPE:
        out[0].nb = 1;
        out[0].d[0] = eb->constant(eb, in[0].nb);
        ov[0] = in[0];
        return PRT_OK;
    case K_GATHER:
        if (need_values(iv, 0, err) || need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        out[0] = in[1];
        ov[0].nb = iv[1].nb;
        for (k = 0; k < iv[1].nb; k++) {
            int64_t idx;
            if (!eb->get_constant(eb, iv[1].d[k], &idx) || idx < -iv[0].nb || idx >= iv[0].nb) {
                prt_msg_set(err, "TestGather: index %d is not a constant in -%d..%d", (int)k, (int)iv[0].nb,
                            (int)iv[0].nb - 1);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            ov[0].d[k] = iv[0].d[idx < 0 ? idx + iv[0].nb : idx];
        }
        return PRT_OK;
    case K_CONCAT:
        for (i = 0; i < nb_in; i++) {
            if (need_values(iv, i, err)) return PRT_STATUS_SHAPE_MISMATCH;
            if (n + iv[i].nb > PRT_MAX_DIMS) {
                prt_msg_set(err, "TestConcat: more than %d values", PRT_MAX_DIMS);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            for (k = 0; k < iv[i].nb; k++) ov[0].d[n++] = iv[i].d[k];
        }
        ov[0].nb = n;
        out[0].nb = 1;
        out[0].d[0] = eb->constant(eb, n);
        return PRT_OK;
    case K_MUL:
        if (need_values(iv, 0, err) || need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        if (iv[0].nb != iv[1].nb) {
            prt_msg_set(err, "TestMul: %d and %d values", (int)iv[0].nb, (int)iv[1].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        ov[0].nb = iv[0].nb;
        for (k = 0; k < iv[0].nb; k++) ov[0].d[k] = eb->operation(eb, PRT_EXPR_PROD, iv[0].d[k], iv[1].d[k]);
        return PRT_OK;
    default: { /* K_RESHAPE */
        const prt_expr *vol = eb->constant(eb, 1), *known = eb->constant(eb, 1);
        int32_t rest = -1;
        if (need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        for (k = 0; k < in[0].nb; k++) vol = eb->operation(eb, PRT_EXPR_PROD, vol, in[0].d[k]);
        out[0].nb = iv[1].nb;
        for (k = 0; k < iv[1].nb; k++) {
            int64_t c;
            if (eb->get_constant(eb, iv[1].d[k], &c) && c == -1) {
                rest = k;
                continue;
            }
            out[0].d[k] = iv[1].d[k];
            known = eb->operation(eb, PRT_EXPR_PROD, known, iv[1].d[k]);
        }
        if (rest >= 0) out[0].d[rest] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, vol, known);
        return PRT_OK;
    }
    }
}

static prt_status sv_shapes_v1(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                               int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)eb;
    prt_msg_set(err, "this plugin needs a host with get_output_shapes_v2");
    return PRT_STATUS_UNSUPPORTED;
}

static prt_status sv_enqueue(prt_field_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                             const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    (void)ws;
    atomic_fetch_add(&enqueues[kind_of(p)], 1);
    if (kind_of(p) != K_RESHAPE) {
        ex->set_error(ex, "a layer whose outputs are all shape values must not be enqueued");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    memcpy(out[0], in[0], (size_t)prt_dims_volume(&od[0].dims) * prt_dtype_size(id[0].dtype));
    return PRT_OK;
}

static const prt_plugin_build_ops sv_build = {
    .struct_size = sizeof sv_build, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = sv_nb_outputs, .get_output_data_types = sv_types, .get_output_shapes = sv_shapes_v1,
    .get_io_info = sv_info, .get_output_shapes_v2 = sv_shapes,
};
static const prt_plugin_runtime_ops sv_runtime = {
    .struct_size = sizeof sv_runtime, .abi_version = PRT_ABI_VERSION,
    .enqueue = sv_enqueue, .attach_to_context = toy_attach, .get_fields_to_serialize = toy_fields,
};
static const prt_field_plugin_ops sv_ops = {
    .struct_size = sizeof sv_ops, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &sv_build, .runtime = &sv_runtime, .clone = toy_clone, .destroy = toy_destroy,
};

#define SV_CREATOR(var, nm, k)                                                                                    \
    static const toy_kind var##_kind = {&sv_ops, k};                                                              \
    static const prt_plugin_creator var = {                                                                       \
        .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = nm, .version = "1",    \
        .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),         \
        .create_field = toy_create, .doc = "shape-value test plugin", .user = (void *)&var##_kind};
SV_CREATOR(shape_creator, "TestShape", K_SHAPE)
SV_CREATOR(gather_creator, "TestGather", K_GATHER)
SV_CREATOR(concat_creator, "TestConcat", K_CONCAT)
SV_CREATOR(mul_creator, "TestMul", K_MUL)
SV_CREATOR(reshape_creator, "TestReshape", K_RESHAPE)

static prt_registry *sv_registry(void)
{
    static const prt_plugin_creator *const all[] = {&shape_creator, &gather_creator, &concat_creator, &mul_creator,
                                                    &reshape_creator};
    prt_registry *r = NULL;
    size_t i;
    if (prt_registry_create(prt_registry_global(), &r) != PRT_OK) return NULL;
    for (i = 0; i < sizeof all / sizeof all[0]; i++)
        if (prt_registry_add(r, all[i], "shapeval-tests") != PRT_OK) {
            prt_registry_destroy(r);
            return NULL;
        }
    return r;
}

/* ---- the network ------------------------------------------------------------ */

static prt_dims dims1(int nb, int64_t a, int64_t b, int64_t c)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = nb;
    d.d[0] = a;
    d.d[1] = b;
    d.d[2] = c;
    return d;
}

static void add(prt_network *net, const char *name, const char *plugin, const char *in0, const char *in1)
{
    const char *ins[2] = {in0, in1};
    const char *outs[1] = {name};
    prt_status s = prt_network_add_layer(net, name, plugin, "1", "", NULL, ins, in1 ? 2 : 1, outs, 1);
    CHECK_MSG(s == PRT_OK, "%s", prt_network_last_error(net));
}

/* x f32 [N, 3, 4] (N dynamic) ->
 *   s = Shape(x); g0 = Gather(s, [0]); g1 = Gather(s, [-2]); g2 = Gather(s, [2]);
 *   shp = Concat(g0, Mul(g1, g2))  (values: N, 12)
 *   y = Reshape(x, shp)            (dims [N, 12]); outputs y and shp. */
static prt_network *reshape_net(prt_registry *r)
{
    static const int64_t i0[1] = {0}, i1[1] = {-2}, i2[1] = {2};
    prt_network *net = NULL;
    prt_dims d = dims1(3, -1, 3, 4), one = dims1(1, 1, 0, 0);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_constant(net, "i0", PRT_DTYPE_I64, &one, i0, sizeof i0));
    CHECK_OK(prt_network_add_constant(net, "i1", PRT_DTYPE_I64, &one, i1, sizeof i1));
    CHECK_OK(prt_network_add_constant(net, "i2", PRT_DTYPE_I64, &one, i2, sizeof i2));
    add(net, "s", "TestShape", "x", NULL);
    add(net, "g0", "TestGather", "s", "i0");
    add(net, "g1", "TestGather", "s", "i1");
    add(net, "g2", "TestGather", "s", "i2");
    add(net, "m", "TestMul", "g1", "g2");
    add(net, "shp", "TestConcat", "g0", "m");
    add(net, "y", "TestReshape", "x", "shp");
    CHECK_OK(prt_network_mark_output(net, "y"));
    CHECK_OK(prt_network_mark_output(net, "shp"));
    return net;
}

static prt_engine *build_profile(prt_network *net, prt_registry *r, char *err, size_t cap, prt_status *st)
{
    prt_builder_config cfg;
    prt_profile_range rg;
    prt_engine *e = NULL;
    prt_builder_config_init(&cfg);
    rg.input = "x";
    rg.min = dims1(3, 1, 3, 4);
    rg.opt = dims1(3, 4, 3, 4);
    rg.max = dims1(3, 8, 3, 4);
    cfg.nb_ranges = 1;
    cfg.ranges = &rg;
    err[0] = 0;
    *st = prt_engine_build(net, &cfg, r, &e, err, cap);
    return e;
}

/* Run; y must come out with dims [d0, d1]. */
static void execute_expecting_y(prt_context *ctx, int64_t d0, int64_t d1)
{
    prt_dims got;
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    CHECK_OK(prt_context_get_shape(ctx, "y", &got));
    CHECK_EQ_INT(got.nb, 2);
    CHECK_EQ_INT(got.d[0], d0);
    CHECK_EQ_INT(got.d[1], d1);
}

/* Run at batch n; y must be x with dims [n, 12], shp the values {n, 12}. */
static void run_at(prt_engine *e, int64_t n)
{
    prt_context *ctx = NULL;
    float x[8 * 12], y[8 * 12];
    int64_t shp[2] = {-7, -7};
    prt_dims d = dims1(3, n, 3, 4);
    int64_t i;
    for (i = 0; i < n * 12; i++) x[i] = (float)i * 0.5f - 3.0f;
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_set_tensor(ctx, "shp", shp));
    execute_expecting_y(ctx, n, 12);
    CHECK_EQ_INT(shp[0], n);
    CHECK_EQ_INT(shp[1], 12);
    CHECK(memcmp(x, y, (size_t)(n * 12) * sizeof(float)) == 0);
    prt_context_destroy(ctx);
}

/* ---- cases -------------------------------------------------------------------- */

TEST(reshape_from_a_shape_subgraph_keeps_a_symbolic_dim)
{
    prt_registry *r = sv_registry(), *r2 = sv_registry();
    prt_network *net = reshape_net(r);
    prt_engine *e, *e2 = NULL;
    prt_io_desc io;
    prt_status st;
    char err[1024];
    int32_t k;
    size_t len = 0;
    uint8_t *bytes;
    static const int64_t batches[] = {1, 3, 8, 4};

    e = build_profile(net, r, err, sizeof err, &st);
    CHECK_MSG(st == PRT_OK, "%s", err);
    /* y's first dim is the input's dynamic batch, not a number. */
    k = prt_engine_find_io(e, "y");
    CHECK_OK(prt_engine_io(e, k, &io));
    CHECK_EQ_INT(io.dims.nb, 2);
    CHECK_EQ_INT(io.dims.d[0], -1);
    CHECK_EQ_INT(io.dims.d[1], 12);
    CHECK_EQ_INT(io.min.d[0], 1);
    CHECK_EQ_INT(io.max.d[0], 8);
    for (k = 0; k < 4; k++) run_at(e, batches[k]);
    /* Only the reshape ran as a kernel: one per run. */
    CHECK_EQ_INT(atomic_load(&enqueues[K_RESHAPE]), 4);
    for (k = 0; k < K_RESHAPE; k++) CHECK_EQ_INT(atomic_load(&enqueues[k]), 0);

    /* The plan keeps the values: reload with a fresh registry and run again. */
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    bytes = malloc(len);
    CHECK_OK(prt_engine_serialize(e, bytes, len, &len));
    CHECK_EQ_INT(bytes[8], 2); /* read version 2: shape values */
    CHECK_MSG(prt_engine_deserialize(r2, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    run_at(e2, 5);
    run_at(e2, 2);
    free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r2);
    prt_registry_destroy(r);
}

TEST(a_shape_value_input_needs_values_known_before_the_run)
{
    prt_registry *r = sv_registry();
    prt_network *net = NULL;
    prt_engine *e;
    prt_status st;
    char err[1024];
    prt_dims d = dims1(3, -1, 3, 4), two = dims1(1, 2, 0, 0);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_input(net, "shape", PRT_DTYPE_I64, &two));
    add(net, "y", "TestReshape", "x", "shape");
    CHECK_OK(prt_network_mark_output(net, "y"));
    e = build_profile(net, r, err, sizeof err, &st);
    CHECK(st == PRT_STATUS_SHAPE_MISMATCH);
    CHECK(e == NULL);
    CHECK_STR_CONTAINS(err, "layer \"y\" (TestReshape v1): input 1 (\"shape\", i64 [2]) is a shape-value input, but "
                            "its values are not known before the run");
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

TEST(a_float_constant_has_no_shape_values)
{
    /* Only small int32/int64 tensors carry values. */
    static const float f[2] = {1, 2};
    static const int64_t i0[1] = {0};
    prt_registry *r = sv_registry();
    prt_network *net = NULL;
    prt_engine *e;
    prt_status st;
    char err[1024];
    prt_dims d = dims1(3, -1, 3, 4), two = dims1(1, 2, 0, 0), one = dims1(1, 1, 0, 0);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_constant(net, "f", PRT_DTYPE_F32, &two, f, sizeof f));
    CHECK_OK(prt_network_add_constant(net, "i0", PRT_DTYPE_I64, &one, i0, sizeof i0));
    add(net, "g", "TestGather", "f", "i0");
    CHECK_OK(prt_network_mark_output(net, "g"));
    e = build_profile(net, r, err, sizeof err, &st);
    CHECK(st != PRT_OK);
    CHECK(e == NULL);
    /* A float constant has no values, so the gather's own check refuses it. */
    CHECK_STR_CONTAINS(err, "input 0 (\"f\", f32 [2]) is a shape-value input, but its values are not known");
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

static const char *k_value_net =
    "{\"inputs\": [{\"name\": \"x\", \"dims\": [-1, 12]},"
    "              {\"name\": \"s\", \"dtype\": \"i64\", \"dims\": [2], \"shape_values\": true}],"
    " \"layers\": [{\"plugin\": \"TestReshape\", \"name\": \"y\", \"inputs\": [\"x\", \"s\"], \"outputs\": [\"y\"]}],"
    " \"outputs\": [\"y\"]}";

/* x [b, 12] reshaped to the values of s; y must be x's data with dims s. */
static void run_values(prt_context *ctx, int64_t b, int64_t s0, int64_t s1)
{
    float x[8 * 12], y[8 * 12];
    int64_t s[2] = {s0, s1};
    prt_dims d = dims1(2, b, 12, 0);
    int64_t i;
    for (i = 0; i < b * 12; i++) x[i] = (float)i - 5.0f;
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &d));
    CHECK_OK(prt_context_set_input_values(ctx, "s", s, 2));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "s", s));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    execute_expecting_y(ctx, s0, s1);
    CHECK(memcmp(x, y, (size_t)(b * 12) * sizeof(float)) == 0);
}

TEST(shape_value_input_bounded_by_the_profile)
{
    prt_registry *r = sv_registry();
    prt_network *net = NULL;
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    prt_builder_config cfg;
    prt_profile_range rg[2];
    prt_io_desc io;
    prt_dims mn, op, mx;
    char err[1024] = "";
    size_t len = 0;
    uint8_t *bytes;
    int64_t bad[2] = {24, 1}, s[2] = {4, 6};
    float x[24], y[24];

    CHECK_MSG(prt_network_from_json(r, k_value_net, strlen(k_value_net), NULL, &net, err, sizeof err) == PRT_OK, "%s",
              err);
    prt_builder_config_init(&cfg);
    rg[0].input = "x";
    rg[0].min = dims1(2, 1, 12, 0);
    rg[0].opt = dims1(2, 2, 12, 0);
    rg[0].max = dims1(2, 8, 12, 0);
    rg[1].input = "s"; /* the values of s, not its dims */
    rg[1].min = dims1(2, 1, 1, 0);
    rg[1].opt = dims1(2, 2, 12, 0);
    rg[1].max = dims1(2, 8, 96, 0);
    cfg.nb_ranges = 1;
    cfg.ranges = rg;
    CHECK(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "shape-value input \"s\" needs a profile range of its 2 values (min, opt, max)");
    cfg.nb_ranges = 2;
    CHECK_MSG(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK, "%s", err);

    /* Both of y's dims come from s: symbolic, bounded by its values. */
    CHECK_OK(prt_engine_io(e, prt_engine_find_io(e, "y"), &io));
    CHECK_EQ_INT(io.dims.d[0], -1);
    CHECK_EQ_INT(io.dims.d[1], -1);
    CHECK_EQ_INT(io.max.d[0], 8);
    CHECK_EQ_INT(io.max.d[1], 96);
    CHECK_OK(prt_engine_io_values(e, prt_engine_find_io(e, "s"), &mn, &op, &mx));
    CHECK_EQ_INT(mx.nb, 2);
    CHECK_EQ_INT(mx.d[1], 96);
    CHECK(prt_engine_io_values(e, prt_engine_find_io(e, "x"), &mn, &op, &mx) == PRT_STATUS_NOT_FOUND);

    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    bytes = malloc(len);
    CHECK_OK(prt_engine_serialize(e, bytes, len, &len));
    CHECK_MSG(prt_engine_deserialize(r, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    run_values(ctx, 2, 4, 6);
    run_values(ctx, 2, 3, 8);
    run_values(ctx, 8, 1, 96);
    CHECK(prt_context_set_input_values(ctx, "s", bad, 2) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx),
                       "shape-value input \"s\" value 0 is 24, outside the profile's range 1..8");
    CHECK(prt_context_set_input_values(ctx, "x", bad, 2) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx), "\"x\" is not a shape-value input");
    /* The buffer must hold the values the shapes were computed from. */
    CHECK_OK(prt_context_set_input_values(ctx, "s", s, 2));
    s[1] = 7;
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "s", s));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK(prt_context_execute(ctx) == PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_context_last_error(ctx),
                       "shape-value input \"s\": its buffer holds 7 at element 1, but the shapes were computed for 6");
    prt_context_destroy(ctx);
    free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}
