/* tests/compat/test_swish.c - the SwishPlugin of the TensorRT documents
 * (trt_swish/, TensorRT C++ compiled unchanged against include/plugrt/compat)
 * through JSON networks and plans, against a float64 reference. */
#include <math.h>

#include "compat_util.h"
#include "prt_test.h"

static const char *k_v1 =
    "{\"name\": \"trt_swish_v1\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 3, 4, 5]}],"
    " \"layers\": [{\"name\": \"act\", \"plugin\": \"SwishPlugin\", \"version\": \"1\","
    "              \"fields\": {\"beta\": 1.5}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
    " \"outputs\": [\"y\"]}";

static const char *k_v2 =
    "{\"name\": \"trt_swish_v2\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 3, 4, 5]}],"
    " \"layers\": [{\"name\": \"act\", \"plugin\": \"SwishPlugin\", \"version\": \"2\","
    "              \"fields\": {\"beta\": 0.5, \"weights\": [1.0, -0.5, 2.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
    " \"outputs\": [\"y\"]}";

/* float64 reference: y = w[c] * x / (1 + exp(-beta * x)). */
static void check_swish(const float *x, const float *y, int n, double beta, const double *w, int channels, int inner)
{
    int i;
    for (i = 0; i < n; i++) {
        double r = (double)x[i] / (1.0 + exp(-beta * (double)x[i]));
        if (w) r *= w[(i / inner) % channels];
        CHECK_MSG(fabs(y[i] - r) <= 1e-5 * fabs(r) + 1e-7, "y[%d] = %.9g, float64 reference %.9g", i, y[i], r);
    }
}

static void run_swish(const char *json, prt_device device, const double *w)
{
    float x[2 * 3 * 4 * 5], y[2 * 3 * 4 * 5];
    char err[1024] = "";
    compat_io in = {"x", CDIMS(2, 3, 4, 5), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    compat_fill(x, 120, 7, -6.0f, 6.0f);
    memset(y, 0, sizeof y);
    CHECK_MSG(compat_run(NULL, json, device, &in, 1, &out, 1, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(out.dims.nb, 4);
    CHECK_EQ_INT(out.dims.d[3], 5);
    check_swish(x, y, 120, w ? 0.5 : 1.5, w, 3, 20);
}

static const double k_w[3] = {1.0, -0.5, 2.0};

TEST(trt_swish_v1_cpu_plan_matches_float64)
{
    run_swish(k_v1, PRT_DEVICE_CPU, NULL);
}

TEST(trt_swish_v2_weights_cpu_plan_matches_float64)
{
    run_swish(k_v2, PRT_DEVICE_CPU, k_w);
}

TEST(trt_swish_cuda_plans_match_float64)
{
    if (!prt_test_have_cuda()) SKIP("no GPU found");
    run_swish(k_v1, PRT_DEVICE_CUDA, NULL);
    run_swish(k_v2, PRT_DEVICE_CUDA, k_w);
}

/* The blob-style order of docs/lifecycle.md reaches the TensorRT methods:
 * createPlugin, getNbOutputs, getOutputDimensions, ..., serialize, destroy;
 * deserializePlugin at load; clone, attachToContext, initialize, then
 * configurePlugin and enqueue per run; terminate, detachFromContext, destroy. */
TEST(trt_swish_calls_follow_the_blob_style_lifecycle)
{
    static const char *const order[] = {
        "act: create_blob",           "act: get_nb_outputs",       "act: get_output_dims",
        "act: get_output_data_types", "act: supports_format_combination", "act: configure_plugin",
        "act: get_workspace_size",    "act: get_serialization_size", "act: serialize",
        "act: destroy",               "act: deserialize_blob",     "act: clone",
        "act: attach_to_context",     "act: initialize",           "act: configure_plugin",
        "act: enqueue",               "act: terminate",            "act: detach_from_context",
        "act: destroy",
    };
    const char *text, *missing;
    compat_trace_start();
    run_swish(k_v1, PRT_DEVICE_CPU, NULL);
    text = compat_trace_stop();
    missing = compat_trace_missing(text, order, (int)(sizeof order / sizeof order[0]));
    CHECK_MSG(missing == NULL, "\"%s\" missing (or out of order) in the trace:\n%s", missing, text);
}

/* The document's scenario: version 2 (with weights) is registered beside
 * version 1, and an engine built with version 1 still loads and runs; with
 * version 1 gone, loading says which versions exist. */
TEST(trt_swish_v1_plan_loads_beside_v2_and_fails_clearly_without_v1)
{
    prt_registry *r = prt_registry_global();
    const prt_plugin_creator *c1 = NULL, *c2 = NULL;
    prt_network *net = NULL;
    prt_engine *e = NULL, *loaded = NULL;
    prt_builder_config cfg;
    prt_profile_range rg = {"x", CDIMS(1, 3, 4, 5), CDIMS(1, 3, 4, 5), CDIMS(1, 3, 4, 5)};
    char err[1024] = "";
    void *plan;
    size_t len = 0;
    CHECK_OK(prt_registry_find(r, "SwishPlugin", "1", "", &c1, NULL));
    CHECK_OK(prt_registry_find(r, "SwishPlugin", "2", "", &c2, NULL));
    CHECK_EQ_INT(c1->style, PRT_STYLE_BLOB);
    CHECK_EQ_INT(c2->nb_fields, 2);
    CHECK_MSG(prt_network_from_json(r, k_v1, strlen(k_v1), NULL, &net, err, sizeof err) == PRT_OK, "%s", err);
    prt_builder_config_init(&cfg);
    cfg.ranges = &rg;
    cfg.nb_ranges = 1;
    CHECK_MSG(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    plan = malloc(len);
    CHECK_OK(prt_engine_serialize(e, plan, len, &len));
    CHECK_MSG(prt_engine_deserialize(r, plan, len, &loaded, err, sizeof err) == PRT_OK, "%s", err);
    prt_engine_destroy(loaded);
    loaded = NULL;
    CHECK_OK(prt_registry_remove(r, "SwishPlugin", "1", ""));
    CHECK(prt_engine_deserialize(r, plan, len, &loaded, err, sizeof err) != PRT_OK);
    CHECK(loaded == NULL);
    CHECK_STR_CONTAINS(err, "SwishPlugin");
    CHECK_STR_CONTAINS(err, "near misses: SwishPlugin v2");
    free(plan);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

/* getFieldNames() is the schema: a field the creator does not declare is
 * refused before createPlugin runs, instead of being silently ignored. */
TEST(trt_swish_undeclared_field_is_refused_by_name)
{
    const char *json =
        "{\"name\": \"bad\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [2, 3]}],"
        " \"layers\": [{\"name\": \"act\", \"plugin\": \"SwishPlugin\", \"version\": \"1\","
        "              \"fields\": {\"alpha\": 1.5}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    prt_network *net = NULL;
    char err[1024] = "";
    CHECK(prt_network_from_json(prt_registry_global(), json, strlen(json), NULL, &net, err, sizeof err) != PRT_OK);
    CHECK(net == NULL);
    CHECK_STR_CONTAINS(err, "alpha");
}
