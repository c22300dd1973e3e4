/* tests/compat/test_v3.c - ScaleClip (trt_v3/), an IPluginV3 with core,
 * build and runtime capabilities compiled unchanged against
 * include/plugrt/compat: saved through getFieldsToSerialize, re-created at
 * kRUNTIME from the plan, attached per context, told its shapes by
 * onShapeChange, in the order docs/lifecycle.md gives for field-style plugins. */
#include "compat_util.h"
#include "prt_test.h"

static const char *k_net =
    "{\"name\": \"trt_v3\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 6]}],"
    " \"layers\": [{\"name\": \"clip\", \"plugin\": \"ScaleClip\", \"version\": \"1\","
    "              \"fields\": {\"scale\": 2.5, \"bounds\": [-1.0, 3.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
    " \"outputs\": [\"y\"]}";

static void run_clip(prt_device device)
{
    float x[4 * 6], y[4 * 6];
    char err[1024] = "";
    compat_io in = {"x", CDIMS(4, 6), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    int i;
    compat_fill(x, 24, 3, -2.0f, 2.0f);
    CHECK_MSG(compat_run(NULL, k_net, device, &in, 1, &out, 1, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 24; i++) {
        float r = 2.5f * x[i];
        r = r < -1.0f ? -1.0f : r > 3.0f ? 3.0f : r;
        CHECK_MSG(y[i] == r, "y[%d] = %g, expected %g", i, y[i], r);
    }
}

TEST(trt_v3_scale_clip_cpu_plan_round_trip)
{
    run_clip(PRT_DEVICE_CPU);
}

TEST(trt_v3_scale_clip_cuda_plan_round_trip)
{
    if (!prt_test_have_cuda()) SKIP("no GPU found");
    run_clip(PRT_DEVICE_CUDA);
}

/* ---- the order of calls -------------------------------------------------- */

TEST(trt_v3_calls_follow_the_field_style_lifecycle)
{
    /* Build (create, shapes, types, formats, configure, workspace, save),
     * load from the plan (create at kRUNTIME), then one context and run. */
    static const char *const order[] = {
        "clip: create_field(build)",  "clip: get_nb_outputs",         "clip: get_output_shapes",
        "clip: supports_format_combination", "clip: configure",       "clip: get_workspace_size",
        "clip: get_fields_to_serialize", "clip: destroy",             "clip: create_field(runtime)",
        "clip: attach_to_context",    "clip: on_shape_change",        "clip: enqueue",
        "clip: destroy",
    };
    const char *text, *missing;
    compat_trace_start();
    run_clip(PRT_DEVICE_CPU);
    text = compat_trace_stop();
    missing = compat_trace_missing(text, order, (int)(sizeof order / sizeof order[0]));
    CHECK_MSG(missing == NULL, "\"%s\" missing (or out of order) in the trace:\n%s", missing, text);
}

/* A V3 plugin that refuses its fields fails the build with a message that
 * says which call refused, not with a crash. */
TEST(trt_v3_refused_fields_fail_the_build_clearly)
{
    const char *bad =
        "{\"name\": \"bad\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 6]}],"
        " \"layers\": [{\"name\": \"clip\", \"plugin\": \"ScaleClip\", \"version\": \"1\","
        "              \"fields\": {\"bounds\": [3.0, -1.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    float x[6] = {0}, y[6];
    char err[1024] = "";
    compat_io in = {"x", CDIMS(1, 6), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    CHECK(compat_run(NULL, bad, PRT_DEVICE_CPU, &in, 1, &out, 1, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "createPlugin(kBUILD) returned nullptr");
}

/* A declared field count is enforced: "bounds" takes at most 2 values. */
TEST(trt_v3_field_count_from_getFieldNames_is_enforced)
{
    const char *bad =
        "{\"name\": \"bad\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [2, 6]}],"
        " \"layers\": [{\"name\": \"clip\", \"plugin\": \"ScaleClip\", \"version\": \"1\","
        "              \"fields\": {\"bounds\": [-1.0, 0.0, 3.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    prt_network *net = NULL;
    char err[1024] = "";
    CHECK(prt_network_from_json(prt_registry_global(), bad, strlen(bad), NULL, &net, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "bounds");
}
