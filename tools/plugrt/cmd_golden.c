/*
 * tools/plugrt/cmd_golden.c - `plugrt golden make`: write a golden-IO JSON
 * for the configs of a PluginConfig YAML (prt_harness_golden_make, plugrt/harness.h;
 * docs/conformance.md, "Making golden data").
 *
 *   plugrt golden make CONFIG.yaml -o OUT.json [--version V] [--config NAME ...]
 *       [--shape [CONFIG:]INPUT=D0xD1x...] [--input [CONFIG:]INPUT=FILE.npy]
 *       [--value [CONFIG:]INPUT=V0,V1,...] [--merge FILE.json] [--seed N] [--range LO,HI] [--cases N] [--from-plugin] [--load LIB.so ...]
 *
 * Exit status: 0 written, 1 failed, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "plugrt/harness.h"
#include "plugrt/plugrt.h"

#define GM_MAX 128
#define GM_MAX_VALUES 64

static void gm_usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt golden make CONFIG.yaml -o OUT.json [--version V] [--config NAME ...]\n"
            "                          [--shape [CONFIG:]INPUT=D0xD1x...] [--input [CONFIG:]INPUT=FILE.npy]\n"
            "                          [--value [CONFIG:]INPUT=V0,V1,...] [--merge FILE.json]\n"
            "                          [--seed N] [--range LO,HI] [--cases N] [--from-plugin] [--load LIB.so ...]\n"
            "  writes a golden-IO JSON (Polygraphy layout) for the configs of the YAML: inputs are seeded uniform\n"
            "  values in [LO, HI) (default -1,1) of the --shape given, rounded to the config's input type, or the\n"
            "  .npy of --input, or the numbers of --value (shape from --shape, else 1-D); an input with none of these\n"
            "  is left out. Attributes are the config's values. --merge keeps the configs of an existing file. Outputs come\n"
            "  from the plugin's float64 reference when plugrt has one (Swish, ModulatedDeformConv2d), else (or with\n"
            "  --from-plugin) from the plugin's CPU path. A CONFIG: prefix limits --shape/--input to one config.\n");
}

static int parse_dims(const char *s, prt_dims *d)
{
    char *end;
    memset(d, 0, sizeof *d);
    if (!*s) return 0; /* a scalar */
    for (;;) {
        long long v = strtoll(s, &end, 10);
        if (end == s || v < 0 || d->nb == PRT_MAX_DIMS) return -1;
        d->d[d->nb++] = v;
        if (*end == 0) return 0;
        if (*end != 'x' && *end != ',') return -1;
        s = end + 1;
    }
}

/* [CONFIG:]INPUT=VALUE into its parts (in place). */
static int split_spec(char *spec, const char **config, const char **input, const char **value)
{
    char *eq = strchr(spec, '='), *colon;
    if (!eq) return -1;
    *eq = 0;
    *value = eq + 1;
    colon = strchr(spec, ':');
    if (colon) {
        *colon = 0;
        *config = spec;
        *input = colon + 1;
    } else {
        *config = NULL;
        *input = spec;
    }
    return **input ? 0 : -1;
}

int prt_cli_golden(int argc, char **argv)
{
    prt_harness_golden_opts o;
    prt_harness_golden_input inputs[GM_MAX];
    static double values[GM_MAX][GM_MAX_VALUES];
    const char *configs[GM_MAX], *libs[GM_MAX];
    int nb_libs = 0, i;
    prt_registry *reg = NULL;
    char err[2048];
    prt_status s;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        gm_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "make") != 0) {
        fprintf(stderr, "plugrt golden: unknown action \"%s\" (expected make)\n", argv[1]);
        return 2;
    }
    prt_harness_golden_opts_init(&o);
    o.configs = configs;
    o.inputs = inputs;
    o.log = stdout;
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            gm_usage(stdout);
            return 0;
        } else if (strcmp(a, "--from-plugin") == 0) {
            o.use_plugin = 1;
        } else if (a[0] == '-' && a[1]) {
            char *val, *end = NULL;
            if (i + 1 >= argc) {
                fprintf(stderr, "plugrt golden make: %s needs a value\n", a);
                return 2;
            }
            val = argv[++i];
            if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
                o.out_path = val;
            } else if (strcmp(a, "--version") == 0) {
                o.version = val;
            } else if (strcmp(a, "--config") == 0 && o.nb_configs < GM_MAX) {
                configs[o.nb_configs++] = val;
            } else if (strcmp(a, "--load") == 0 && nb_libs < GM_MAX) {
                libs[nb_libs++] = val;
            } else if (strcmp(a, "--merge") == 0) {
                o.merge_path = val;
            } else if ((strcmp(a, "--shape") == 0 || strcmp(a, "--input") == 0 || strcmp(a, "--value") == 0) &&
                       o.nb_inputs < GM_MAX) {
                prt_harness_golden_input *gi = &inputs[o.nb_inputs];
                const char *value;
                memset(gi, 0, sizeof *gi);
                if (split_spec(val, &gi->config, &gi->input, &value) != 0) {
                    fprintf(stderr, "plugrt golden make: %s wants [CONFIG:]INPUT=%s\n", a,
                            a[2] == 's' ? "D0xD1x..." : a[2] == 'v' ? "V0,V1,..." : "FILE.npy");
                    return 2;
                }
                if (a[2] == 'v') {
                    double *vals = values[o.nb_inputs];
                    int nv = 0;
                    const char *p = value;
                    while (*p && nv < GM_MAX_VALUES) {
                        char *e2 = NULL;
                        vals[nv] = strtod(p, &e2);
                        if (e2 == p || (*e2 && *e2 != ',')) break;
                        nv++;
                        p = *e2 ? e2 + 1 : e2;
                    }
                    if (nv == 0 || *p) {
                        fprintf(stderr, "plugrt golden make: --value %s: \"%s\" is not a list of at most %d numbers\n",
                                gi->input, value, GM_MAX_VALUES);
                        return 2;
                    }
                    gi->values = vals;
                    gi->nb_values = nv;
                } else if (a[2] == 's') {
                    gi->has_dims = 1;
                    if (parse_dims(value, &gi->dims) != 0) {
                        fprintf(stderr, "plugrt golden make: --shape %s: \"%s\" is not D0xD1x... (at most %d extents "
                                        ">= 0)\n", gi->input, value, PRT_MAX_DIMS);
                        return 2;
                    }
                } else {
                    gi->npy = value;
                }
                o.nb_inputs++;
            } else if (strcmp(a, "--seed") == 0) {
                o.seed = strtoull(val, &end, 10);
                if (!end || *end) {
                    fprintf(stderr, "plugrt golden make: --seed needs a number, got \"%s\"\n", val);
                    return 2;
                }
            } else if (strcmp(a, "--range") == 0) {
                if (sscanf(val, "%lf,%lf", &o.lo, &o.hi) != 2 || !(o.lo < o.hi)) {
                    fprintf(stderr, "plugrt golden make: --range needs LO,HI with LO < HI, got \"%s\"\n", val);
                    return 2;
                }
            } else if (strcmp(a, "--cases") == 0) {
                long n = strtol(val, &end, 10);
                if (!end || *end || n < 1 || n > 1000) {
                    fprintf(stderr, "plugrt golden make: --cases needs 1..1000, got \"%s\"\n", val);
                    return 2;
                }
                o.cases = (int32_t)n;
            } else {
                fprintf(stderr, "plugrt golden make: unknown option \"%s\" (or given too often)\n", a);
                return 2;
            }
        } else if (!o.yaml_path) {
            o.yaml_path = a;
        } else {
            fprintf(stderr, "plugrt golden make: unexpected argument \"%s\"\n", a);
            return 2;
        }
    }
    if (!o.yaml_path || !o.out_path) {
        fprintf(stderr, "plugrt golden make: needs CONFIG.yaml and -o OUT.json\n");
        gm_usage(stderr);
        return 2;
    }
    if (nb_libs) {
        if (prt_registry_create(prt_registry_global(), &reg) != PRT_OK) return 1;
        for (i = 0; i < nb_libs; i++) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, libs[i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt golden make: %s\n", prt_registry_last_error(reg));
                prt_registry_destroy(reg);
                return 1;
            }
        }
        o.registry = reg;
    }
    s = prt_harness_golden_make(&o, err, sizeof err);
    prt_registry_destroy(reg);
    if (s != PRT_OK) {
        fprintf(stderr, "plugrt golden make: %s\n", err);
        return 1;
    }
    return 0;
}
