/*
 * make_plan_seeds - writes the seed plans of corpus/plan/ by building the
 * network descriptions of corpus/netjson/ with the bundled plugins and the
 * engine tests' fakes:
 *
 *     build/tests/fuzz/make_plan_seeds tests/fuzz
 *
 * A plan records each layer's workspace size as its plugin computed it at
 * build time, so seeds with a plugin whose workspace formula changed must be
 * made again (a run would otherwise hand it too little workspace).
 *
 * Every seed is built with one timing cache, which is written to
 * corpus/tcache/seeds.tcache: the seed of the timing-cache reader (the times
 * in it, and in tactic.plan's TACT section, are this run's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/engine.h"
#include "runtime/fakeplugins.h"

/* An input whose dim 0 is dynamic: its other extents; the range given to
 * the builder is 1 / 2 / 3 for dim 0. */
typedef struct dyn_input {
    const char *name;
    int64_t d1, d2, d3;
} dyn_input;

typedef struct seed {
    const char *json, *plan;
    int fp16;
    dyn_input dyn[3];
} seed;

static const seed seeds[] = {
    {"swish_small.json", "swish_small.plan", 0, {{"x", 3, 4, 5}}},
    {"swish_small.json", "swish_small_fp16.plan", 1, {{"x", 3, 4, 5}}},
    {"fakes_npy.json", "fakes_npy.plan", 0, {{NULL, 0, 0, 0}}},
    {"fakes_half_compact.json", "fakes_half_compact.plan", 0, {{NULL, 0, 0, 0}}},
    {"onnx_nms.json", "onnx_nms.plan", 0, {{NULL, 0, 0, 0}}},
    {"batched_nms.json", "batched_nms.plan", 0, {{NULL, 0, 0, 0}}},
    {"dcn_dynamic.json", "dcn_dynamic.plan", 0, {{"x", 4, 5, 5}, {"off", 18, 5, 5}, {"mask", 9, 5, 5}}},
    {"detector_tail.json", "detector_tail.plan", 0, {{NULL, 0, 0, 0}}},
    {"tactic.json", "tactic.plan", 0, {{NULL, 0, 0, 0}}},
};

static prt_timing_cache *g_cache;

static int make(prt_registry *r, const char *dir, const seed *sd)
{
    char path[4096], base[4096], err[2048] = "";
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_builder_config cfg;
    prt_profile_range rg[3];
    int32_t i, nr = 0;
    snprintf(path, sizeof path, "%s/corpus/netjson/%s", dir, sd->json);
    snprintf(base, sizeof base, "%s/corpus/netjson-files", dir);
    {
        FILE *f = fopen(path, "rb");
        char *buf;
        long n;
        if (!f) {
            fprintf(stderr, "cannot open %s\n", path);
            return 1;
        }
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        buf = malloc((size_t)n + 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
            fclose(f);
            free(buf);
            return 1;
        }
        fclose(f);
        if (prt_network_from_json(r, buf, (size_t)n, base, &net, err, sizeof err) != PRT_OK) {
            fprintf(stderr, "%s: %s\n", path, err);
            free(buf);
            return 1;
        }
        free(buf);
    }
    prt_builder_config_init(&cfg);
    cfg.precision = sd->fp16 ? PRT_PRECISION_FP16 : PRT_PRECISION_FP32;
    for (i = 0; i < 3 && sd->dyn[i].name; i++) {
        prt_profile_range *g = &rg[nr++];
        memset(g, 0, sizeof *g);
        g->input = sd->dyn[i].name;
        g->min.nb = g->opt.nb = g->max.nb = 4;
        g->min.d[0] = 1;
        g->opt.d[0] = 2;
        g->max.d[0] = 3;
        g->min.d[1] = g->opt.d[1] = g->max.d[1] = sd->dyn[i].d1;
        g->min.d[2] = g->opt.d[2] = g->max.d[2] = sd->dyn[i].d2;
        g->min.d[3] = g->opt.d[3] = g->max.d[3] = sd->dyn[i].d3;
    }
    cfg.nb_ranges = nr;
    cfg.ranges = rg;
    cfg.timing_cache = g_cache;
    cfg.timing_threads = 1;
    snprintf(path, sizeof path, "%s/corpus/plan/%s", dir, sd->plan);
    if (prt_engine_build(net, &cfg, r, &e, err, sizeof err) != PRT_OK ||
        prt_engine_save(e, path, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "%s: %s\n", sd->json, err);
        prt_engine_destroy(e);
        prt_network_destroy(net);
        return 1;
    }
    printf("%s\n", path);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return 0;
}

int main(int argc, char **argv)
{
    prt_registry *r;
    size_t i;
    int bad = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: make_plan_seeds TESTS_FUZZ_DIR\n");
        return 2;
    }
    r = fake_registry(1, 1, 10);
    if (!r || prt_timing_cache_create(&g_cache) != PRT_OK) return 1;
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) bad |= make(r, argv[1], &seeds[i]);
    {
        char path[4096], err[1024] = "";
        snprintf(path, sizeof path, "%s/corpus/tcache/seeds.tcache", argv[1]);
        if (prt_timing_cache_save(g_cache, path, err, sizeof err) != PRT_OK) {
            fprintf(stderr, "%s\n", err);
            bad = 1;
        } else {
            printf("%s\n", path);
        }
    }
    prt_timing_cache_destroy(g_cache);
    prt_registry_destroy(r);
    return bad;
}
