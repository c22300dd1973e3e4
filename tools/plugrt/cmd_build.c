/* tools/plugrt/cmd_build.c - `plugrt build NET.json|model.onnx -o model.plan ...` */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "clionnx.h"
#include "plugrt/engine.h"

static void build_usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt build NET.json|model.onnx -o model.plan [--fp16] [--device cpu|cuda]\n"
            "                    [--profile name:MIN,OPT,MAX ...] [--workspace BYTES] [--load LIB ...]\n"
            "                    [--warn-unknown-keys] [--no-fuse] [--timing-cache FILE] [--no-timing]\n"
            "  NET.json           network description (docs/network-json.md)\n"
            "  model.onnx         or an ONNX model, told apart by content (docs/onnx.md)\n"
            "  -o, --output FILE  where to write the plan\n"
            "  --fp16             let float layers run in f16 where their plugin accepts it\n"
            "  --no-fuse          ONNX: keep every node a layer of its own (no layer fusion)\n"
            "  --device D         target device recorded in the plan (default cpu)\n"
            "  --profile P        range of a dynamic input, dims joined by 'x':\n"
            "                     --profile x:1x3x8x8,4x3x8x8,8x3x8x8; for a shape-value input\n"
            "                     the values' bounds: --profile target:1x12,4x12,8x48\n"
            "  --workspace BYTES  largest workspace any one layer may use (default: no limit)\n"
            "  --load LIB         load a plugin library first (repeatable)\n"
            "  --warn-unknown-keys  a key the JSON format does not define is a warning, not an error\n"
            "  --timing-cache FILE  tactic times: read from FILE when it exists, written back after the build\n"
            "                     (a FILE that is not a timing cache is an error and is left as it is)\n"
            "  --no-timing        each layer with several tactics takes its first: nothing is timed\n");
}

int prt_cli_build(int argc, char **argv)
{
    const char *net_path = NULL, *out_path = NULL, *cache_path = NULL;
    prt_timing_cache *cache = NULL;
    int32_t cache_before = 0;
    prt_builder_config cfg;
    prt_profile_range *ranges = NULL;
    char **copies = NULL;
    int nb_ranges = 0, i, rc = 1;
    prt_registry *reg = NULL;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    char err[2048];
    size_t len = 0;
    uint32_t json_flags = 0;

    prt_builder_config_init(&cfg);
    ranges = calloc((size_t)argc + 1, sizeof *ranges);
    copies = calloc((size_t)argc + 1, sizeof *copies);
    if (!ranges || !copies || prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
        fprintf(stderr, "plugrt build: out of memory\n");
        free(ranges);
        free(copies);
        return 1;
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            build_usage(stdout);
            rc = 0;
            goto done;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_next) {
            out_path = argv[++i];
        } else if (strcmp(a, "--fp16") == 0) {
            cfg.precision = PRT_PRECISION_FP16;
        } else if (strcmp(a, "--timing-cache") == 0 && has_next) {
            cache_path = argv[++i];
        } else if (strcmp(a, "--no-timing") == 0) {
            cfg.tactic_timing = PRT_TACTIC_TIMING_OFF;
        } else if (strcmp(a, "--warn-unknown-keys") == 0) {
            json_flags |= PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN;
        } else if (strcmp(a, "--device") == 0 && has_next) {
            const char *d = argv[++i];
            if (strcmp(d, "cpu") == 0) cfg.device = PRT_DEVICE_CPU;
            else if (strcmp(d, "cuda") == 0) cfg.device = PRT_DEVICE_CUDA;
            else {
                fprintf(stderr, "plugrt build: --device takes cpu or cuda, got \"%s\"\n", d);
                rc = 2;
                goto done;
            }
        } else if (strcmp(a, "--profile") == 0 && has_next) {
            char *copy = strdup(argv[++i]); /* parse_profile cuts it up; kept until the end */
            if (!copy) {
                fprintf(stderr, "plugrt build: out of memory\n");
                goto done;
            }
            copies[nb_ranges] = copy;
            if (!prt__clionnx_parse_profile(copy, &ranges[nb_ranges])) {
                fprintf(stderr,
                        "plugrt build: --profile takes name:MIN,OPT,MAX with dims joined by 'x' "
                        "(x:1x3x8x8,4x3x8x8,8x3x8x8), got \"%s\"\n",
                        argv[i]);
                rc = 2;
                goto done;
            }
            nb_ranges++;
        } else if (strcmp(a, "--workspace") == 0 && has_next) {
            char *end;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (*end || end == argv[i]) {
                fprintf(stderr, "plugrt build: --workspace takes a byte count, got \"%s\"\n", argv[i]);
                rc = 2;
                goto done;
            }
            cfg.workspace_limit = v;
        } else if (strcmp(a, "--no-fuse") == 0) {
            prt__clionnx_no_fuse = 1;
        } else if (strcmp(a, "--load") == 0 && has_next) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, argv[++i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt build: %s\n", prt_registry_last_error(reg));
                goto done;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "plugrt build: unknown or incomplete option \"%s\"\n", a);
            build_usage(stderr);
            rc = 2;
            goto done;
        } else if (!net_path) {
            net_path = a;
        } else {
            fprintf(stderr, "plugrt build: more than one network given (\"%s\", \"%s\")\n", net_path, a);
            rc = 2;
            goto done;
        }
    }
    if (!net_path || !out_path) {
        fprintf(stderr, "plugrt build: %s\n", !net_path ? "no network description given" : "no -o FILE given");
        build_usage(stderr);
        rc = 2;
        goto done;
    }
    cfg.nb_ranges = nb_ranges;
    cfg.ranges = ranges;
    err[0] = 0;
    if (cache_path) {
        /* A file that is there must be a timing cache: it is never overwritten otherwise. */
        FILE *f = fopen(cache_path, "rb");
        prt_status cs;
        if (f) {
            fclose(f);
            cs = prt_timing_cache_load(cache_path, &cache, err, sizeof err);
        } else {
            cs = prt_timing_cache_create(&cache);
            if (cs != PRT_OK) snprintf(err, sizeof err, "out of memory");
        }
        if (cs != PRT_OK) {
            fprintf(stderr, "plugrt build: --timing-cache: %s (remove the file or give another path)\n", err);
            goto done;
        }
        cache_before = prt_timing_cache_nb_entries(cache);
        cfg.timing_cache = cache;
    }
    if (prt__clionnx_is_onnx(net_path)) {
        if (!prt__clionnx_import(reg, net_path, &cfg, &net, err, sizeof err)) {
            fprintf(stderr, "plugrt build: %s\n", err);
            goto done;
        }
    } else if (prt_network_load_json_flags(reg, net_path, json_flags, &net, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt build: %s\n", err);
        goto done;
    }
    if (prt_engine_build(net, &cfg, reg, &e, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt build: %s: %s\n", net_path, err);
        goto done;
    }
    if (prt_engine_save(e, out_path, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt build: %s\n", err);
        goto done;
    }
    if (cache && prt_timing_cache_save(cache, cache_path, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt build: --timing-cache: %s\n", err);
        goto done;
    }
    if (cache)
        printf("timing cache %s: %d entries (%d new)\n", cache_path, (int)prt_timing_cache_nb_entries(cache),
               (int)(prt_timing_cache_nb_entries(cache) - cache_before));
    if (prt_engine_serialize(e, NULL, 0, &len) != PRT_OK) len = 0;
    printf("built %s: %d layers, %d inputs/outputs, arena %" PRIu64 " bytes, workspace %" PRIu64
           " bytes, plan %zu bytes (%s, %s)\n",
           out_path, (int)prt_engine_nb_layers(e), (int)prt_engine_nb_io(e), prt_engine_arena_size(e),
           prt_engine_workspace_size(e), len, cfg.precision == PRT_PRECISION_FP16 ? "fp16" : "fp32",
           cfg.device == PRT_DEVICE_CUDA ? "cuda" : "cpu");
    rc = 0;
done:
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    prt_timing_cache_destroy(cache);
    for (i = 0; copies && i < argc; i++) free(copies[i]);
    free(copies);
    free(ranges);
    return rc;
}
