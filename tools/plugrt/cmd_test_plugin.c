/*
 * tools/plugrt/cmd_test_plugin.c - `plugrt test-plugin`: check a plugin
 * against its PluginConfig YAML and golden-IO JSON (prt_harness_test_plugin, plugrt/harness.h;
 * docs/conformance.md).
 *
 *   plugrt test-plugin CONFIG.yaml [--golden FILE.json] [--version V]
 *       [--config NAME ...] [--device cpu|cuda|all] [--load LIB.so ...]
 *       [--threads N] [--json] [--verbose]
 *
 * Exit status: 0 when every selected check passed, 1 when one failed or the
 * files could not be read, 2 for a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plugrt/harness.h"
#include "plugrt/plugrt.h"

#define TP_MAX_LIST 64

static void tp_usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt test-plugin CONFIG.yaml [--golden FILE.json] [--version V] [--namespace NS] [--config NAME ...]\n"
            "                          [--device cpu|cuda|all] [--load LIB.so ...] [--threads N] [--json] [--verbose]\n"
            "  checks the plugin the PluginConfig YAML names (every version, or --version) against the YAML and\n"
            "  its golden-IO JSON: schema, golden outputs, output shapes, serialize/clone, attribute ranges,\n"
            "  input constraints and type combinations (docs/conformance.md)\n"
            "  --golden FILE   use this golden-IO JSON instead of the YAML's golden_io_path\n"
            "  --namespace NS  the plugin's namespace (default: the YAML's \"namespace\", else \"\", else the only\n"
            "                  namespace that has the plugin)\n"
            "  --config NAME   only this config (repeatable)\n"
            "  --device D      cpu, cuda or all (default all: CUDA too when a GPU is found; cuda: a GPU is required)\n"
            "  --load LIB.so   load a plugin library first (repeatable)\n"
            "  --threads N     CPU threads (default: all cores)\n"
            "  --json          one JSON object instead of the table\n"
            "  --verbose       also show what passing checks saw\n"
            "exit status: 0 every check passed, 1 a check failed or a file could not be read, 2 usage error\n");
}

int prt_cli_test_plugin(int argc, char **argv)
{
    prt_harness_test_opts o;
    prt_harness_summary sum;
    const char *configs[TP_MAX_LIST];
    const char *libs[TP_MAX_LIST];
    int nb_libs = 0, i, rc;
    prt_registry *reg = NULL;
    char err[2048];

    prt_harness_test_opts_init(&o);
    o.configs = configs;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            tp_usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0) {
            o.verbose = 1;
        } else if (strcmp(a, "--golden") == 0 || strcmp(a, "--version") == 0 || strcmp(a, "--config") == 0 ||
                   strcmp(a, "--namespace") == 0 ||
                   strcmp(a, "--device") == 0 || strcmp(a, "--load") == 0 || strcmp(a, "--threads") == 0) {
            const char *val;
            if (!has_val) {
                fprintf(stderr, "plugrt test-plugin: %s needs a value\n", a);
                return 2;
            }
            val = argv[++i];
            if (strcmp(a, "--golden") == 0) {
                o.golden_path = val;
            } else if (strcmp(a, "--version") == 0) {
                o.version = val;
            } else if (strcmp(a, "--namespace") == 0) {
                o.plugin_namespace = val;
            } else if (strcmp(a, "--config") == 0) {
                if (o.nb_configs == TP_MAX_LIST) {
                    fprintf(stderr, "plugrt test-plugin: at most %d --config options\n", TP_MAX_LIST);
                    return 2;
                }
                configs[o.nb_configs++] = val;
            } else if (strcmp(a, "--load") == 0) {
                if (nb_libs == TP_MAX_LIST) {
                    fprintf(stderr, "plugrt test-plugin: at most %d --load options\n", TP_MAX_LIST);
                    return 2;
                }
                libs[nb_libs++] = val;
            } else if (strcmp(a, "--threads") == 0) {
                char *end = NULL;
                long n = strtol(val, &end, 10);
                if (!end || *end || n < 0 || n > 4096) {
                    fprintf(stderr, "plugrt test-plugin: --threads needs a number 0..4096, got \"%s\"\n", val);
                    return 2;
                }
                o.nb_threads = (int32_t)n;
            } else {
                if (strcmp(val, "cpu") == 0) {
                    o.cpu = 1;
                    o.cuda = 0;
                } else if (strcmp(val, "cuda") == 0) {
                    o.cpu = 0;
                    o.cuda = 1;
                    o.cuda_required = 1;
                } else if (strcmp(val, "all") == 0) {
                    o.cpu = 1;
                    o.cuda = 1;
                } else {
                    fprintf(stderr, "plugrt test-plugin: --device must be cpu, cuda or all, got \"%s\"\n", val);
                    return 2;
                }
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "plugrt test-plugin: unknown option \"%s\"\n", a);
            tp_usage(stderr);
            return 2;
        } else if (!o.yaml_path) {
            o.yaml_path = a;
        } else {
            fprintf(stderr, "plugrt test-plugin: unexpected argument \"%s\" (one CONFIG.yaml only)\n", a);
            return 2;
        }
    }
    if (!o.yaml_path) {
        fprintf(stderr, "plugrt test-plugin: no PluginConfig YAML given\n");
        tp_usage(stderr);
        return 2;
    }
    if (nb_libs) {
        if (prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
            fprintf(stderr, "plugrt test-plugin: out of memory\n");
            return 1;
        }
        for (i = 0; i < nb_libs; i++) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, libs[i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt test-plugin: %s\n", prt_registry_last_error(reg));
                prt_registry_destroy(reg);
                return 1;
            }
        }
        o.registry = reg;
    }
    o.out = stdout;
    if (prt_harness_test_plugin(&o, &sum, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt test-plugin: %s\n", err);
        prt_registry_destroy(reg);
        return 1;
    }
    fflush(stdout);
    rc = sum.failed ? 1 : 0;
    prt_registry_destroy(reg);
    return rc;
}
