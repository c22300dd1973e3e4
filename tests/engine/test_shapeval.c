/*
 * tests/engine/test_shapeval.c - shape values (engine/shapeval.c): plugins
 * that read their inputs' values as expressions and compute outputs on the
 * host, so that a dynamic dim stays symbolic through a shape sub-graph; and
 * shape-value network inputs bounded by the profile (C API, JSON, CLI). The
 * plugins are in svplugins.c.
 */
#include <stdlib.h>
#include <sys/wait.h>

#include "plugrt/engine.h"
#include "plugrt/npy.h"
#include "prt_test.h"
#include "svplugins.h"
#include "toyfield.h"

static prt_registry *sv_registry(void)
{
    prt_registry *r = NULL;
    size_t i;
    if (prt_registry_create(prt_registry_global(), &r) != PRT_OK) return NULL;
    for (i = 0; i < SV_NB_CREATORS; i++)
        if (prt_registry_add(r, sv_creators[i], "shapeval-tests") != PRT_OK) {
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
    CHECK_EQ_INT(sv_enqueues(K_RESHAPE), 4);
    for (k = 0; k < K_RESHAPE; k++) CHECK_EQ_INT(sv_enqueues(k), 0);

    /* The plan keeps the values: reload with a fresh registry and run again. */
    bytes = toy_plan_bytes(e, &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(bytes[8], 2); /* read version 2: shape values */
    CHECK_MSG(prt_engine_deserialize(r2, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    /* Damaged value plans load or fail with a message, never crash. */
    CHECK(toy_flip_and_load(r2, bytes, len, 400) >= 0);
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

    bytes = toy_plan_bytes(e, &len);
    CHECK(bytes != NULL);
    CHECK_MSG(prt_engine_deserialize(r, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    CHECK(toy_flip_and_load(r, bytes, len, 400) >= 0);
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

static int sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static void write_npy(const char *path, prt_npy_type t, prt_dims shape, const void *data)
{
    prt_npy_array a;
    memset(&a, 0, sizeof a);
    CHECK_OK(prt_npy_array_alloc(&a, t, &shape));
    memcpy(a.data, data, a.nbytes);
    CHECK_OK(prt_npy_write_file(&a, path));
    prt_npy_array_clear(&a);
}

TEST(cli_profile_and_input_take_shape_values)
{
    char dir[64] = "/tmp/prt_sv_XXXXXX", cmd[8192], p[1024];
    const char *cli_fmt = "%s/../tools/plugrt/plugrt %s --load " SV_LIBRARY_PATH " %s";
    float x[24];
    int64_t s[2] = {4, 6}, far[2] = {24, 1};
    prt_npy_array y;
    FILE *f;
    int i;
    for (i = 0; i < 24; i++) x[i] = (float)i / 4.0f;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(p, sizeof p, "%s/net.json", dir);
    f = fopen(p, "w");
    CHECK(f != NULL);
    fputs(k_value_net, f);
    fclose(f);
    snprintf(p, sizeof p, "%s/x.npy", dir);
    write_npy(p, PRT_NPY_F4, dims1(2, 2, 12, 0), x);
    snprintf(p, sizeof p, "%s/s.npy", dir);
    write_npy(p, PRT_NPY_I8, dims1(1, 2, 0, 0), s);
    snprintf(p, sizeof p, "%s/far.npy", dir);
    write_npy(p, PRT_NPY_I8, dims1(1, 2, 0, 0), far);

    snprintf(p, sizeof p, "build %s/net.json -o %s/m.plan --profile x:1x12,2x12,8x12 --profile s:1x1,2x12,8x96", dir,
             dir);
    snprintf(cmd, sizeof cmd, cli_fmt, prt_test_bin_dir(), p, ">/dev/null");
    CHECK_EQ_INT(sh(cmd), 0);
    snprintf(p, sizeof p, "run %s/m.plan --input x=%s/x.npy --input s=%s/s.npy --output y=%s/y.npy --iterations 1",
             dir, dir, dir, dir);
    snprintf(cmd, sizeof cmd, cli_fmt, prt_test_bin_dir(), p, ">/dev/null");
    CHECK_EQ_INT(sh(cmd), 0);
    memset(&y, 0, sizeof y);
    snprintf(p, sizeof p, "%s/y.npy", dir);
    CHECK_OK(prt_npy_read_file(p, &y));
    CHECK_EQ_INT(y.shape.nb, 2);
    CHECK_EQ_INT(y.shape.d[0], 4);
    CHECK_EQ_INT(y.shape.d[1], 6);
    CHECK(y.nbytes == sizeof x && memcmp(y.data, x, sizeof x) == 0);
    prt_npy_array_clear(&y);
    /* Without --input for s: the profile's opt values, [2, 12]. */
    snprintf(p, sizeof p, "run %s/m.plan --input x=%s/x.npy --output y=%s/y.npy --iterations 1", dir, dir, dir);
    snprintf(cmd, sizeof cmd, cli_fmt, prt_test_bin_dir(), p, ">/dev/null");
    CHECK_EQ_INT(sh(cmd), 0);
    memset(&y, 0, sizeof y);
    snprintf(p, sizeof p, "%s/y.npy", dir);
    CHECK_OK(prt_npy_read_file(p, &y));
    CHECK_EQ_INT(y.shape.d[0], 2);
    CHECK_EQ_INT(y.shape.d[1], 12);
    prt_npy_array_clear(&y);
    /* inspect shows the values' bounds. */
    snprintf(cmd, sizeof cmd,
             "%s/../tools/plugrt/plugrt inspect %s/m.plan | grep -q 'shape values \\[1, 1\\] / \\[2, 12\\] / "
             "\\[8, 96\\]'",
             prt_test_bin_dir(), dir);
    CHECK_EQ_INT(sh(cmd), 0);
    /* Values outside the profile: exit 1 with the reason. */
    snprintf(p, sizeof p, "run %s/m.plan --input x=%s/x.npy --input s=%s/far.npy --iterations 1", dir, dir, dir);
    snprintf(cmd, sizeof cmd, cli_fmt, prt_test_bin_dir(), p, "2>/dev/null >/dev/null");
    CHECK_EQ_INT(sh(cmd), 1);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(sh(cmd), 0);
}
