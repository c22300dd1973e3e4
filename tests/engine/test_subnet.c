/* Sub-networks (docs/plugin-abi.md, "Sub-networks"): the host table's
 * subnet_* service, called directly and through TestIf (subnet_if_lib.c), a
 * plugin library that runs one of two GRAPH fields by a condition, through
 * network -> build -> plan -> load -> run. */
#include <math.h>

#include "core/core.h"
#include "plugrt/engine.h"
#include "plugrt/inspect.h"
#include "plugrt/op.h"
#include "prt_test.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif

static int contains(const void *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle), i;
    for (i = 0; i + k <= n; i++)
        if (memcmp((const char *)hay + i, needle, k) == 0) return 1;
    return 0;
}

/* then: y = 2 x (template::Scale); else: y = x * sigmoid(x) (Swish v1). */
static const char then_json[] =
    "{\"inputs\": [{\"name\": \"a\", \"dtype\": \"f32\", \"dims\": [-1, 4]}],"
    " \"layers\": [{\"plugin\": \"Scale\", \"namespace\": \"template\", \"version\": \"1\","
    " \"fields\": {\"alpha\": 2.0}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]}],"
    " \"outputs\": [\"b\"]}";
static const char else_json[] =
    "{\"inputs\": [{\"name\": \"a\", \"dtype\": \"f32\", \"dims\": [-1, 4]}],"
    " \"layers\": [{\"plugin\": \"Swish\", \"version\": \"1\", \"fields\": {\"beta\": 1.0},"
    " \"inputs\": [\"a\"], \"outputs\": [\"b\"]}],"
    " \"outputs\": [\"b\"]}";

static prt_field_graph graph_of(const char *name, const char *json)
{
    prt_field_graph g;
    memset(&g, 0, sizeof g);
    g.name = name;
    g.format = PRT_GRAPH_NETWORK_JSON;
    g.data = json;
    g.size = (int64_t)strlen(json);
    return g;
}

static prt_dims d2(int64_t a, int64_t b)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = 2;
    d.d[0] = a;
    d.d[1] = b;
    return d;
}

static prt_registry *if_registry(void)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    if (prt_registry_load_library(r, PRT_SUBNET_IF_LIB_PATH, &lib) != PRT_OK)
        CHECK_MSG(0, "load: %s", prt_registry_last_error(r));
    return r;
}

/* x (f32 [-1, 4]) and cond (int32 [1]) -> TestIf -> y. */
static prt_network *if_network(prt_registry *r, const char *then_body, const char *else_body, prt_dtype cond_type)
{
    prt_network *net = NULL;
    prt_field_graph g[2] = {graph_of("then", then_body), graph_of("else", else_body)};
    prt_field f[2] = {{.name = "then_branch", .data = &g[0], .type = PRT_FIELD_GRAPH, .count = 1},
                      {.name = "else_branch", .data = &g[1], .type = PRT_FIELD_GRAPH, .count = 1}};
    prt_fields fc = {.fields = f, .nb = 2};
    prt_dims dx = d2(-1, 4), dc = {1, 0, {1}};
    const char *in[2] = {"cond", "x"}, *out[1] = {"y"};
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "cond", cond_type, &dc));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &dx));
    if (prt_network_add_layer(net, "if", "TestIf", "1", "test", &fc, in, 2, out, 1) != PRT_OK)
        CHECK_MSG(0, "add_layer: %s", prt_network_last_error(net));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

static prt_status build_if(prt_registry *r, const char *then_body, const char *else_body, prt_device device,
                           prt_engine **e, char *err, size_t cap)
{
    prt_network *net = if_network(r, then_body, else_body, PRT_DTYPE_I32);
    prt_builder_config bc;
    prt_profile_range pr = {"x", d2(1, 4), d2(2, 4), d2(8, 4)};
    prt_status s;
    prt_builder_config_init(&bc);
    bc.device = device;
    bc.nb_ranges = 1;
    bc.ranges = &pr;
    s = prt_engine_build(net, &bc, r, e, err, cap);
    prt_network_destroy(net);
    return s;
}

/* The engine's plan (malloc'ed), NULL when it cannot be serialized. */
static void *plan_of(const prt_engine *e, size_t *len)
{
    void *plan;
    *len = 0;
    if (prt_engine_serialize(e, NULL, 0, len) != PRT_OK || !(plan = malloc(*len))) return NULL;
    if (prt_engine_serialize(e, plan, *len, len) != PRT_OK) {
        free(plan);
        return NULL;
    }
    return plan;
}

static void run_if(prt_context *ctx, int32_t cond, int64_t batch)
{
    float x[32], y[32];
    prt_dims dx = d2(batch, 4), got;
    int64_t i;
    for (i = 0; i < batch * 4; i++) x[i] = (float)(i - 7) * 0.375f;
    memset(y, 0, sizeof y);
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &dx));
    CHECK_OK(prt_context_set_tensor(ctx, "cond", &cond));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    if (prt_context_execute(ctx) != PRT_OK) {
        CHECK_MSG(0, "execute: %s", prt_context_last_error(ctx));
        return;
    }
    CHECK_OK(prt_context_get_shape(ctx, "y", &got));
    CHECK(got.nb == 2 && got.d[0] == batch && got.d[1] == 4);
    for (i = 0; i < batch * 4; i++) {
        const double want = cond ? 2.0 * x[i] : x[i] / (1.0 + exp(-(double)x[i]));
        CHECK_NEAR(y[i], want, 1e-5 * (1.0 + fabs(want)));
    }
}

TEST(if_runs_the_branch_its_condition_picks_through_build_plan_load_run)
{
    prt_registry *r = if_registry(), *r2;
    prt_engine *e = NULL, *loaded = NULL;
    prt_context *ctx = NULL;
    char err[2048];
    void *plan;
    size_t len = 0;
    if (build_if(r, then_json, else_json, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK) {
        CHECK_MSG(0, "build: %s", err);
        prt_registry_destroy(r);
        return;
    }
    plan = plan_of(e, &len);
    CHECK(plan != NULL);
    prt_engine_destroy(e);
    /* Loaded through a fresh registry that has the library: the branches'
     * plugins (bundled ones here) resolve through it and its parent. */
    r2 = if_registry();
    if (prt_engine_deserialize(r2, plan, len, &loaded, err, sizeof err) != PRT_OK) {
        CHECK_MSG(0, "load: %s", err);
    } else {
        CHECK_OK(prt_context_create(loaded, NULL, &ctx));
        if (ctx) {
            run_if(ctx, 1, 3);
            run_if(ctx, 0, 3);
            run_if(ctx, 0, 8); /* the profile's max */
            run_if(ctx, 1, 1); /* its min */
            run_if(ctx, 7, 5);
        }
        prt_context_destroy(ctx);
    }
    prt_engine_destroy(loaded);
    free(plan);
    prt_registry_destroy(r2);
    prt_registry_destroy(r);
}

TEST(if_plan_carries_both_bodies_and_the_profile)
{
    prt_registry *r = if_registry();
    prt_engine *e = NULL;
    prt_plan_info *pi = NULL;
    char err[2048];
    void *plan;
    size_t len = 0;
    CHECK_OK(build_if(r, then_json, else_json, PRT_DEVICE_CPU, &e, err, sizeof err));
    plan = plan_of(e, &len);
    CHECK(plan != NULL);
    if (!plan) return;
    /* the bodies and the recorded profile travel inside the plan's record */
    CHECK(contains(plan, len, "\"Scale\""));
    CHECK(contains(plan, len, "\"Swish\""));
    CHECK(contains(plan, len, "then_branch") && contains(plan, len, "else_branch"));
    CHECK(contains(plan, len, "types") && contains(plan, len, "opt"));
    CHECK_OK(prt_plan_info_read(plan, len, &pi, err, sizeof err));
    prt_plan_info_destroy(pi);
    free(plan);
    prt_engine_destroy(e);
    prt_registry_destroy(r);
}

TEST(if_build_errors_name_the_branch_and_what_differs)
{
    prt_registry *r = if_registry();
    prt_engine *e = NULL;
    char err[2048];
    /* a branch with a fixed batch: its input cannot take the profile */
    static const char fixed[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [2, 4]}], \"layers\": [{\"plugin\": \"Swish\", \"version\": \"1\","
        " \"fields\": {\"beta\": 1.0}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]}], \"outputs\": [\"b\"]}";
    /* a branch with two inputs */
    static const char two[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [-1, 4]}, {\"name\": \"c\", \"dims\": [-1, 4]}],"
        " \"layers\": [{\"plugin\": \"Swish\", \"version\": \"1\", \"fields\": {\"beta\": 1.0},"
        " \"inputs\": [\"a\"], \"outputs\": [\"b\"]}], \"outputs\": [\"b\"]}";
    /* a branch whose plugin does not exist */
    static const char missing[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [-1, 4]}], \"layers\": [{\"plugin\": \"NoSuchPlugin\","
        " \"version\": \"1\", \"inputs\": [\"a\"], \"outputs\": [\"b\"]}], \"outputs\": [\"b\"]}";
    /* a branch whose output has another shape: [-1, 4] -> [-1, 2] is not the layer's [-1, 4] */
    static const char narrower[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [-1, 2]}], \"layers\": [{\"plugin\": \"Swish\", \"version\": \"1\","
        " \"fields\": {\"beta\": 1.0}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]}], \"outputs\": [\"b\"]}";
    /* the right inputs, but outputs of another shape or type */
    static const char transposed[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [-1, 4]}], \"layers\": [{\"plugin\": \"Transpose\","
        " \"version\": \"1\", \"fields\": {\"perm\": [1, 0]}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]}],"
        " \"outputs\": [\"b\"]}";
    static const char cast[] =
        "{\"inputs\": [{\"name\": \"a\", \"dims\": [-1, 4]}], \"layers\": [{\"plugin\": \"Cast\","
        " \"version\": \"6\", \"fields\": {\"to\": 6}, \"inputs\": [\"a\"], \"outputs\": [\"b\"]}],"
        " \"outputs\": [\"b\"]}";
    CHECK(build_if(r, then_json, transposed, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "else_branch \"else\" output 0 is [4, 1] at the profile's min inputs; the layer's "
                            "output 0 is [1, 4]");
    CHECK(build_if(r, cast, else_json, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "then_branch \"then\" output 0 is i32; the layer's output 0 is f32");
    CHECK(build_if(r, then_json, fixed, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "sub-network \"else\": input 0 \"a\" is declared [2, 4]; dim 0 of the plugin's range "
                            "goes 1..8");
    CHECK_STR_CONTAINS(err, "TestIf");
    CHECK(build_if(r, two, else_json, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "sub-network \"then\": it has 2 inputs and 1 output; the plugin describes 1 input");
    CHECK(build_if(r, then_json, missing, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "sub-network \"else\"");
    CHECK_STR_CONTAINS(err, "NoSuchPlugin");
    CHECK(build_if(r, narrower, else_json, PRT_DEVICE_CPU, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "sub-network \"then\": input 0 \"a\" is declared [-1, 2]; dim 1 of the plugin's range "
                            "goes 4..4");
    CHECK(e == NULL);
    prt_registry_destroy(r);
}

TEST(if_refuses_cuda_at_build_time)
{
    prt_registry *r = if_registry();
    prt_engine *e = NULL;
    char err[2048];
    CHECK(build_if(r, then_json, else_json, PRT_DEVICE_CUDA, &e, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "cuda");
    CHECK(e == NULL);
    prt_registry_destroy(r);
}

/* Both inputs constant: the layer is folded at build time (its CPU run builds
 * and runs the branch inside the builder), and the plan holds only Swish. */
TEST(if_on_constants_is_folded)
{
    prt_registry *r = if_registry();
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_field_graph g[2] = {graph_of("then", then_json), graph_of("else", else_json)};
    prt_field f[2] = {{.name = "then_branch", .data = &g[0], .type = PRT_FIELD_GRAPH, .count = 1},
                      {.name = "else_branch", .data = &g[1], .type = PRT_FIELD_GRAPH, .count = 1}};
    prt_fields fc = {.fields = f, .nb = 2};
    const float beta = 0.0f;
    prt_field fb = {.name = "beta", .data = &beta, .type = PRT_FIELD_FLOAT32, .count = 1};
    prt_fields fbc = {.fields = &fb, .nb = 1};
    const int32_t cond = 1;
    const float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float y[8];
    prt_dims dx = d2(2, 4), dc = {1, 0, {1}};
    const char *in[2] = {"cond", "x"}, *mid[1] = {"t"}, *out[1] = {"y"};
    char err[2048];
    int i;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_constant(net, "cond", PRT_DTYPE_I32, &dc, &cond, sizeof cond));
    CHECK_OK(prt_network_add_constant(net, "x", PRT_DTYPE_F32, &dx, x, sizeof x));
    CHECK_OK(prt_network_add_layer(net, "if", "TestIf", "1", "test", &fc, in, 2, mid, 1));
    /* Swish with beta 0: y = t / 2 */
    CHECK_OK(prt_network_add_layer(net, "half", "Swish", "1", "", &fbc, mid, 1, out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    {
        /* the folded layer needs an input to run the remaining one on: none here, so y is fixed */
        prt_status s = prt_engine_build(net, NULL, r, &e, err, sizeof err);
        CHECK_MSG(s == PRT_OK, "build: %s", err);
    }
    if (e) {
        CHECK_EQ_INT(prt_engine_nb_layers(e), 1);
        CHECK(strcmp(prt_engine_layer_name(e, 0), "half") == 0);
        CHECK_OK(prt_context_create(e, NULL, &ctx));
        CHECK_OK(prt_context_set_tensor(ctx, "y", y));
        CHECK_OK(prt_context_execute(ctx));
        for (i = 0; i < 8; i++) CHECK_NEAR(y[i], x[i], 1e-6); /* 2x / 2 */
        prt_context_destroy(ctx);
    }
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

/* ---- the service, called as a plugin calls it ---------------------------------- */

static prt_subnet_config cpu_config(prt_dyn_tensor_desc *in, prt_device device)
{
    prt_subnet_config c;
    memset(in, 0, sizeof *in);
    in->desc.dtype = PRT_DTYPE_F32;
    in->desc.dims = d2(-1, 4);
    in->min = d2(1, 4);
    in->opt = d2(2, 4);
    in->max = d2(4, 4);
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.abi_version = PRT_ABI_VERSION;
    c.device = device;
    c.nb_inputs = 1;
    c.inputs = in;
    return c;
}

TEST(subnet_service_builds_describes_and_runs)
{
    const prt_host_api *h = prt_host();
    prt_field_graph g = graph_of("then", then_json);
    prt_dyn_tensor_desc in, io[2];
    prt_subnet_config cfg = cpu_config(&in, PRT_DEVICE_CPU);
    prt_subnet *s = NULL;
    char msg[1024];
    prt_msg m = {msg, sizeof msg};
    int32_t nin = -1, nout = -1, i;
    float x[16], y[16];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    prt_tensor_desc tin = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, d2(3, 4)}, tout = tin;
    CHECK(h->abi_version == PRT_ABI_VERSION && PRT_HOST_HAS(h, subnet_build) && PRT_HOST_HAS(h, subnet_destroy));
    if (prt_host_subnet_build(&g, &cfg, &s, &m) != PRT_OK) {
        CHECK_MSG(0, "build: %s", msg);
        return;
    }
    CHECK_OK(prt_host_subnet_describe(s, &nin, &nout, io, 2));
    CHECK(nin == 1 && nout == 1);
    CHECK(io[0].desc.dtype == PRT_DTYPE_F32 && io[0].min.d[0] == 1 && io[0].max.d[0] == 4);
    CHECK(io[1].desc.dims.d[0] == -1 && io[1].max.d[0] == 4 && io[1].max.d[1] == 4);
    for (i = 0; i < 12; i++) x[i] = (float)i;
    CHECK_OK(prt_host_subnet_run(s, &tin, ins, 1, &tout, outs, 1, NULL, &m));
    CHECK(tout.dims.nb == 2 && tout.dims.d[0] == 3);
    for (i = 0; i < 12; i++) CHECK(y[i] == 2.0f * x[i]);
    /* outside the profile */
    tin.dims = d2(5, 4);
    tout.dims = d2(5, 4);
    CHECK_EQ_INT(prt_host_subnet_run(s, &tin, ins, 1, &tout, outs, 1, NULL, &m), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "sub-network \"then\": input \"a\" dim 0 is 5, outside the profile's range 1..4");
    /* a buffer too small for the output */
    tin.dims = d2(4, 4);
    tout.dims = d2(2, 4);
    CHECK_EQ_INT(prt_host_subnet_run(s, &tin, ins, 1, &tout, outs, 1, NULL, &m), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "output 0 \"b\" is [4, 4] for these inputs (64 bytes); the buffer given holds [2, 4]");
    /* a wrong type, wrong counts */
    tout.dims = d2(4, 4);
    tout.dtype = PRT_DTYPE_F16;
    CHECK_EQ_INT(prt_host_subnet_run(s, &tin, ins, 1, &tout, outs, 1, NULL, &m), PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "output 0 \"b\" is f32; the buffer given is f16");
    CHECK_EQ_INT(prt_host_subnet_run(s, &tin, ins, 2, &tout, outs, 1, NULL, &m), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "run with 2 inputs and 1 output; it has 1 and 1");
    prt_host_subnet_destroy(s);
    prt_host_subnet_destroy(NULL);
}

TEST(subnet_service_refuses_what_it_cannot_build)
{
    prt_field_graph g = graph_of("body", then_json);
    prt_dyn_tensor_desc in;
    prt_subnet_config cfg = cpu_config(&in, PRT_DEVICE_CPU);
    prt_subnet *s = NULL;
    char msg[1024];
    prt_msg m = {msg, sizeof msg};
    g.format = PRT_GRAPH_ONNX;
    CHECK_EQ_INT(prt_host_subnet_build(&g, &cfg, &s, &m), PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(msg, "sub-network \"body\": body format 2: the host builds network JSON bodies");
    CHECK_STR_CONTAINS(msg, "ONNX GraphProto bodies are not imported yet");
    g.format = PRT_GRAPH_NETWORK_JSON;
    cfg.struct_size = 8;
    CHECK_EQ_INT(prt_host_subnet_build(&g, &cfg, &s, &m), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "prt_subnet_config.struct_size is 8");
    cfg.struct_size = sizeof cfg;
    in.desc.dtype = PRT_DTYPE_F16;
    CHECK_EQ_INT(prt_host_subnet_build(&g, &cfg, &s, &m), PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "input 0 \"a\" is f32; the plugin gives f16");
    in.desc.dtype = PRT_DTYPE_F32;
    cfg.nb_inputs = 0;
    CHECK_EQ_INT(prt_host_subnet_build(&g, &cfg, &s, &m), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(msg, "it has 1 input and 1 output; the plugin describes 0 inputs");
    g.data = "{not json";
    g.size = 9;
    cfg.nb_inputs = 1;
    CHECK(prt_host_subnet_build(&g, &cfg, &s, &m) != PRT_OK);
    CHECK_STR_CONTAINS(msg, "sub-network \"body\": ");
    CHECK(s == NULL);
}

/* Every allocation of a build failing in turn: an error with a message, no
 * leak, nothing handed out. */
TEST(subnet_service_build_survives_failed_allocations)
{
    prt_field_graph g = graph_of("then", then_json);
    prt_dyn_tensor_desc in;
    prt_subnet_config cfg = cpu_config(&in, PRT_DEVICE_CPU);
    long n;
    int ok = 0;
    for (n = 0; n < 100000 && !ok; n++) {
        prt_subnet *s = NULL;
        char msg[1024] = "";
        prt_msg m = {msg, sizeof msg};
        prt_status st;
        prt__alloc_fail_after(n);
        st = prt_host_subnet_build(&g, &cfg, &s, &m);
        prt__alloc_fail_after(-1);
        if (st == PRT_OK) {
            ok = 1;
        } else {
            CHECK(s == NULL);
            CHECK_MSG(msg[0] != 0, "allocation %ld: status %d without a message", n, (int)st);
        }
        prt_host_subnet_destroy(s);
    }
    CHECK(ok);
    CHECK_NO_LEAKS();
}

TEST(subnet_service_runs_on_cuda)
{
#ifdef PLUGRT_HAVE_CUDA
    prt_field_graph g = graph_of("else", else_json);
    prt_dyn_tensor_desc in;
    prt_subnet_config cfg = cpu_config(&in, PRT_DEVICE_CUDA);
    prt_subnet *s = NULL;
    char msg[1024];
    prt_msg m = {msg, sizeof msg};
    float x[16], y[16];
    void *dx = NULL, *dy = NULL;
    cudaStream_t st = NULL;
    prt_tensor_desc tin = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, d2(4, 4)}, tout = tin;
    int i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (i = 0; i < 16; i++) x[i] = (float)(i - 8) * 0.5f;
    if (prt_host_subnet_build(&g, &cfg, &s, &m) != PRT_OK) {
        CHECK_MSG(0, "build: %s", msg);
        return;
    }
    CHECK(cudaStreamCreate(&st) == cudaSuccess);
    CHECK(cudaMalloc(&dx, sizeof x) == cudaSuccess && cudaMalloc(&dy, sizeof y) == cudaSuccess);
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess);
    {
        const void *ins[1] = {dx};
        void *outs[1] = {dy};
        prt_status r = prt_host_subnet_run(s, &tin, ins, 1, &tout, outs, 1, st, &m);
        CHECK_MSG(r == PRT_OK, "run: %s", msg);
    }
    CHECK(cudaStreamSynchronize(st) == cudaSuccess);
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (i = 0; i < 16; i++) CHECK_NEAR(y[i], x[i] / (1.0 + exp(-(double)x[i])), 1e-5);
    cudaFree(dx);
    cudaFree(dy);
    cudaStreamDestroy(st);
    prt_host_subnet_destroy(s);
#else
    SKIP("built without CUDA");
#endif
}
