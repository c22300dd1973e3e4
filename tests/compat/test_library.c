/* tests/compat/test_library.c - TensorRT-style plugin sources built as plugrt
 * plugin libraries with plugrt_add_trt_plugin(): loaded at run time into a
 * registry, used from a JSON network and a plan, exporting nothing but the
 * entry point. This program links no TensorRT-style code itself. */
#include <dlfcn.h>

#include "compat_util.h"
#include "prt_test.h"

static prt_registry *load(const char *path)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_MSG(prt_registry_load_library(r, path, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    return r;
}

static void swish_v2_from_library(const char *path)
{
    const char *json =
        "{\"name\": \"lib_swish\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 3, 2]}],"
        " \"layers\": [{\"name\": \"act\", \"plugin\": \"SwishPlugin\", \"version\": \"2\","
        "              \"fields\": {\"beta\": 2.0, \"weights\": [1.0, 0.5, -1.0]}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    prt_registry *r = load(path);
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    float x[12], y[12];
    char err[1024] = "";
    compat_io in = {"x", CDIMS(2, 3, 2), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    static const double w[3] = {1.0, 0.5, -1.0};
    int i;
    CHECK_OK(prt_registry_find(r, "SwishPlugin", "1", "", &c, &owner));
    CHECK_OK(prt_registry_find(r, "SwishPlugin", "2", "", &c, &owner));
    CHECK_STR_CONTAINS(owner, "trt_swish");
    compat_fill(x, 12, 5, -4.0f, 4.0f);
    CHECK_MSG(compat_run(r, json, PRT_DEVICE_CPU, &in, 1, &out, 1, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 12; i++) {
        double ref = w[(i / 2) % 3] * (double)x[i] / (1.0 + exp(-2.0 * (double)x[i]));
        CHECK_NEAR(y[i], ref, 1e-5 * fabs(ref) + 1e-7);
    }
    prt_registry_destroy(r);
}

TEST(trt_library_swish_loads_and_runs_from_a_plan)
{
    swish_v2_from_library(TRT_SWISH_LIB);
}

/* Sources built as TensorRT 11.x use the same adapter (compiled as 10.x):
 * the interfaces keep one vtable layout at both API levels. */
TEST(trt_library_swish_built_as_11_runs_with_the_same_adapter)
{
    swish_v2_from_library(TRT_SWISH11_LIB);
}

TEST(trt_library_v3_round_trips_a_plan)
{
    const char *json =
        "{\"name\": \"lib_v3\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 4]}],"
        " \"layers\": [{\"name\": \"clip\", \"plugin\": \"ScaleClip\", \"version\": \"1\","
        "              \"fields\": {\"scale\": -1.0}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],"
        " \"outputs\": [\"y\"]}";
    prt_registry *r = load(TRT_SCALE_CLIP_LIB);
    float x[8] = {-3, -1, -0.5f, 0, 0.25f, 1, 2, 7}, y[8];
    char err[1024] = "";
    compat_io in = {"x", CDIMS(2, 4), x, sizeof x};
    compat_io out = {"y", {0}, y, sizeof y};
    int i;
    CHECK_MSG(compat_run(r, json, PRT_DEVICE_CPU, &in, 1, &out, 1, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < 8; i++) {
        float ref = -x[i] < -1.0f ? -1.0f : -x[i] > 1.0f ? 1.0f : -x[i]; /* default bounds [-1, 1] */
        CHECK_MSG(y[i] == ref, "y[%d] = %g, expected %g", i, y[i], ref);
    }
    prt_registry_destroy(r);
}

/* The library exports only prt_plugin_library_init: neither the adapter nor
 * the TensorRT entry points leak into the process's symbol space. */
TEST(trt_library_exports_only_the_entry_point)
{
    void *h = dlopen(TRT_SWISH_LIB, RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(h != NULL, "%s", dlerror());
    if (!h) return;
    CHECK(dlsym(h, "prt_plugin_library_init") != NULL);
    CHECK(dlsym(h, "getPluginRegistry") == NULL);
    CHECK(dlsym(h, "prt_compat_on_host") == NULL);
    CHECK(dlsym(h, "initLibNvInferPlugins") == NULL);
    dlclose(h);
}
