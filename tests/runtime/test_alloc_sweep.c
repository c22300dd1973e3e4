/*
 * tests/runtime/test_alloc_sweep.c - every allocation site failed once.
 *
 * For each bundled example network and each bundled plugin (in a small
 * network of its own), the whole path - parse the JSON, build, write and
 * load the plan, create a context, run - is repeated with the Nth
 * allocation failing, for N = 0, 1, 2, ... until a pass needs no more. Each
 * failure must come back as an error with a message, leave the caller's
 * out-parameter untouched and leak nothing (LeakSanitizer in the sanitizer
 * build); the last pass must run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "engine/netdef.h"
#include "fakeplugins.h"
#include "plugrt/engine.h"
#include "plugrt/network.h"
#include "prt_test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() CHECK_MSG(__lsan_do_recoverable_leak_check() == 0, "memory leaked (report above)")
#else
#define NO_LEAKS() ((void)0)
#endif

#define SWEEP_MAX 200000

#define BAD ((void *)0x1)

/* One pass; PRT_OK when everything ran. `stage` names the failing step. */
static prt_status pass(prt_registry *r, const char *json, const char *base, const char **stage)
{
    prt_network *net = BAD;
    prt_engine *e = BAD, *e2 = BAD;
    prt_context *ctx = BAD;
    prt_context_config cc;
    prt_builder_config bc;
    prt_profile_range rg[16];
    int32_t nr;
    void *bufs[16] = {0};
    uint8_t *plan = NULL;
    size_t len = 0;
    char err[1024] = "";
    prt_status s;
    int32_t i, n;

    *stage = "parse";
    s = prt_network_from_json(r, json, strlen(json), base, &net, err, sizeof err);
    if (s != PRT_OK) {
        CHECK(net == BAD);
        net = NULL;
        goto out;
    }
    *stage = "build";
    /* Dynamic extents: a profile of 2 / 2 / 2. */
    prt_builder_config_init(&bc);
    for (i = 0, nr = 0; i < net->nb_tensors && nr < 16; i++) {
        const prt__net_tensor *t = &net->tensors[i];
        int32_t j, dyn = 0;
        if (t->kind != PRT__TENSOR_INPUT) continue;
        rg[nr].input = t->name;
        rg[nr].min = t->dims;
        for (j = 0; j < t->dims.nb; j++)
            if (t->dims.d[j] < 0) rg[nr].min.d[j] = 2, dyn = 1;
        rg[nr].opt = rg[nr].max = rg[nr].min;
        if (dyn) nr++;
    }
    bc.ranges = rg;
    bc.nb_ranges = nr;
    s = prt_engine_build(net, &bc, r, &e, err, sizeof err);
    if (s != PRT_OK) {
        CHECK(e == BAD);
        e = NULL;
        goto out;
    }
    *stage = "serialize";
    if ((s = prt_engine_serialize(e, NULL, 0, &len)) != PRT_OK) goto out;
    plan = malloc(len);
    if (!plan || (s = prt_engine_serialize(e, plan, len, &len)) != PRT_OK) goto out;
    *stage = "load";
    s = prt_engine_deserialize(r, plan, len, &e2, err, sizeof err);
    if (s != PRT_OK) {
        CHECK(e2 == BAD);
        e2 = NULL;
        goto out;
    }
    *stage = "context";
    prt_context_config_init(&cc);
    cc.nb_threads = 1; /* allocations on this thread only: the hook counts per thread */
    s = prt_context_create(e2, &cc, &ctx);
    if (s != PRT_OK) {
        CHECK(ctx == BAD);
        ctx = NULL;
        snprintf(err, sizeof err, "%s", prt_engine_last_error(e2));
        goto out;
    }
    *stage = "run";
    n = prt_engine_nb_io(e2);
    CHECK(n <= 16);
    for (i = 0; i < n && i < 16; i++) {
        prt_io_desc d;
        size_t bytes = 0;
        if ((s = prt_engine_io(e2, i, &d)) != PRT_OK) goto out;
        if ((s = prt_context_buffer_size(ctx, d.name, &bytes)) != PRT_OK) {
            snprintf(err, sizeof err, "%s", prt_context_last_error(ctx));
            goto out;
        }
        bufs[i] = calloc(1, bytes ? bytes : 1); /* the test's own memory, outside the hook */
        if ((s = prt_context_set_tensor(ctx, d.name, bufs[i])) != PRT_OK) goto out;
    }
    s = prt_context_execute(ctx);
    if (s != PRT_OK) snprintf(err, sizeof err, "%s", prt_context_last_error(ctx));
out:
    if (s != PRT_OK) CHECK_MSG(err[0] != 0, "%s failed with status %d and no message", *stage, (int)s);
    if (ctx != BAD) prt_context_destroy(ctx);
    if (e2 != BAD) prt_engine_destroy(e2);
    if (e != BAD) prt_engine_destroy(e);
    if (net != BAD) prt_network_destroy(net);
    for (i = 0; i < 16; i++) free(bufs[i]);
    free(plan);
    return s;
}

static void sweep(const char *what, const char *json, const char *base)
{
    prt_registry *r = fake_registry(1, 1, 10);
    long nth;
    int done = 0;
    int stages[6] = {0};
    static const char *const names[6] = {"parse", "build", "serialize", "load", "context", "run"};
    for (nth = 0; nth < SWEEP_MAX && !done; nth++) {
        const char *stage = "";
        prt_status s;
        int k;
        prt__alloc_fail_after(nth);
        s = pass(r, json, base, &stage);
        prt__alloc_fail_after(-1);
        done = s == PRT_OK;
        for (k = 0; k < 6; k++)
            if (!done && strcmp(stage, names[k]) == 0) stages[k]++;
    }
    CHECK_MSG(done, "%s: never ran with %d allocations", what, SWEEP_MAX);
    printf("  %s: %ld allocations failed in turn (parse %d, build %d, load %d, context %d, run %d)\n", what, nth - 1,
           stages[0], stages[1], stages[3], stages[4], stages[5]);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* The file's text, with the first `from` replaced by `to` when given. */
static void sweep_file_edited(const char *what, const char *path, const char *base, const char *from, const char *to)
{
    void *data = NULL;
    size_t len = 0;
    char err[512], *json, *at;
    CHECK_MSG(prt__read_file(path, &data, &len, err, sizeof err) == PRT_OK, "%s", err);
    if (!data) return;
    json = malloc(len + 1);
    memcpy(json, data, len);
    json[len] = 0;
    prt__free(data);
    if (from && (at = strstr(json, from)) != NULL && strlen(to) == strlen(from)) memcpy(at, to, strlen(to));
    else CHECK(!from);
    sweep(what, json, base);
    free(json);
}

static void sweep_file(const char *what, const char *path, const char *base)
{
    sweep_file_edited(what, path, base, NULL, NULL);
}

static void example(const char *name)
{
    char path[1024], base[1024];
    snprintf(base, sizeof base, "%s/../../examples", prt_test_data_dir());
    snprintf(path, sizeof path, "%s/%s", base, name);
    sweep_file(name, path, base);
}

static void corpus(const char *name)
{
    char path[1024], base[1024];
    snprintf(base, sizeof base, "%s/../fuzz/corpus/netjson-files", prt_test_data_dir());
    snprintf(path, sizeof path, "%s/../fuzz/corpus/netjson/%s", prt_test_data_dir(), name);
    sweep_file(name, path, base);
}

TEST(example_detector_tail_swish_dcn_efficient_nms)
{
    example("detector_tail.json");
}

TEST(example_swish_net)
{
    example("swish_net.json");
}

TEST(swish_small_network)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/networks/swish_small.json", prt_test_data_dir());
    sweep_file("swish_small.json", path, NULL);
}

TEST(plugin_batched_nms_dynamic)
{
    corpus("batched_nms.json");
}

TEST(plugin_batched_nms)
{
    sweep("BatchedNMS_TRT",
          "{\"inputs\": [{\"name\": \"boxes\", \"dims\": [2, 10, 1, 4]}, {\"name\": \"scores\", \"dims\": [2, 10, 3]}],"
          " \"layers\": [{\"name\": \"nms\", \"plugin\": \"BatchedNMS_TRT\", \"fields\": {\"shareLocation\": "
          "{\"type\": \"int32\", \"value\": 1}, \"backgroundLabelId\": -1, \"numClasses\": 3, \"topK\": 10, "
          "\"keepTopK\": 5, \"scoreThreshold\": 0.1, \"iouThreshold\": 0.5, \"isNormalized\": 1}, \"inputs\": "
          "[\"boxes\", \"scores\"], \"outputs\": [\"num\", \"nboxes\", \"nscores\", \"nclasses\"]}], \"outputs\": "
          "[\"num\", \"nboxes\", \"nscores\", \"nclasses\"]}",
          NULL);
}

TEST(plugin_onnx_nms)
{
    corpus("onnx_nms.json");
}

TEST(plugin_deform_conv)
{
    corpus("dcn_dynamic.json");
}

TEST(plugin_deform_conv_v1)
{
    char path[1024], base[1024];
    snprintf(base, sizeof base, "%s/../fuzz/corpus/netjson-files", prt_test_data_dir());
    snprintf(path, sizeof path, "%s/../fuzz/corpus/netjson/dcn_dynamic.json", prt_test_data_dir());
    sweep_file_edited("dcn_dynamic.json as v1 (blob style)", path, base, "\"version\": \"2\"", "\"version\": \"1\"");
}

TEST(plugin_template_scale)
{
    sweep("template::Scale",
          "{\"inputs\": [{\"name\": \"x\", \"dims\": [4, 3]}], \"layers\": [{\"plugin\": \"Scale\", \"namespace\": "
          "\"template\", \"fields\": {\"alpha\": 2.0}, \"inputs\": [\"x\"], \"outputs\": [\"y\"]}], \"outputs\": "
          "[\"y\"]}",
          NULL);
}

TEST(fake_plugins_casts_and_data_dependent_outputs)
{
    corpus("fakes_half_compact.json");
}

/* TestTactic in both styles: tactics listed, timed (the real clock), recorded, set at load and in the context. */
TEST(plugin_tactics)
{
    corpus("tactic.json");
}

/* A build with a timing cache, and the cache's reader, with every allocation
 * failed in turn: a failed build leaves the cache as it was; the one that
 * succeeds adds its two entries; a failed read leaves nothing behind. */
TEST(timing_cache_build_and_read)
{
    prt_registry *r = fake_registry(1, 1, 10);
    prt_network *net = NULL;
    prt_timing_cache *c = NULL;
    prt_builder_config bc;
    void *data = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0, blen = 0;
    char path[1024], err[1024];
    long nth;
    int done = 0;
    snprintf(path, sizeof path, "%s/../fuzz/corpus/netjson/tactic.json", prt_test_data_dir());
    CHECK_MSG(prt__read_file(path, &data, &len, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_MSG(prt_network_from_json(r, data, len, NULL, &net, err, sizeof err) == PRT_OK, "%s", err);
    prt__free(data);
    CHECK_OK(prt_timing_cache_create(&c));
    prt_builder_config_init(&bc);
    bc.timing_cache = c;
    bc.timing_threads = 1;
    bc.timing_warmup = 0;
    bc.timing_runs = 1;
    for (nth = 0; nth < SWEEP_MAX && !done; nth++) {
        prt_engine *e = BAD;
        prt_status s;
        err[0] = 0;
        prt__alloc_fail_after(nth);
        s = prt_engine_build(net, &bc, r, &e, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            done = 1;
            prt_engine_destroy(e);
            CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 2);
        } else {
            CHECK_MSG(err[0] != 0, "build failed with status %d and no message", (int)s);
            CHECK(e == BAD);
            CHECK_EQ_INT(prt_timing_cache_nb_entries(c), 0);
        }
    }
    CHECK(done);
    CHECK_OK(prt_timing_cache_serialize(c, NULL, 0, &blen));
    bytes = malloc(blen);
    CHECK_OK(prt_timing_cache_serialize(c, bytes, blen, &blen));
    for (nth = 0, done = 0; nth < SWEEP_MAX && !done; nth++) {
        prt_timing_cache *t = BAD;
        prt_status s;
        err[0] = 0;
        prt__alloc_fail_after(nth);
        s = prt_timing_cache_deserialize(bytes, blen, &t, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            done = 1;
            CHECK_EQ_INT(prt_timing_cache_nb_entries(t), 2);
            prt_timing_cache_destroy(t);
        } else {
            CHECK_MSG(err[0] != 0, "read failed with status %d and no message", (int)s);
            CHECK(t == BAD);
        }
    }
    CHECK(done);
    free(bytes);
    prt_timing_cache_destroy(c);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    NO_LEAKS();
}
