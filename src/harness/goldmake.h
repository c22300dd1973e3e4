/*
 * harness/goldmake.h - `plugrt golden make`: write a golden-IO JSON for the
 * configs of a PluginConfig YAML (docs/conformance.md, "Making golden
 * data").
 *
 * For every selected version and config (a config name is made once, by the
 * first version that declares it), `cases` cases are written. Inputs: a
 * .npy file when given, else the values given, else seeded uniform values
 * in [lo, hi) of the given shape, rounded to the config's input type; an
 * input with none of these, or one that the config's input_types (when it
 * has any) does not list, is left out (optional). Attributes: the config's values, written as arrays of
 * the YAML's attribute type. Outputs: the plugin's float64 reference when
 * its creator registers one (refs.c), computed from the rounded inputs and rounded
 * once to the config's output type; otherwise, or with use_plugin, the
 * plugin's own CPU result.
 */
#ifndef PLUGRT_HARNESS_GOLDMAKE_H
#define PLUGRT_HARNESS_GOLDMAKE_H

#include <stdio.h>

#include "plugrt/registry.h"

/* One --shape, --value or --input option: exactly one of has_dims,
 * nb_values > 0 and npy is set. */
typedef struct prt_goldmake_input {
    const char *config;   /* NULL: every config */
    const char *input;
    int has_dims;
    prt_dims dims;        /* the input's shape (seeded values unless values are given) */
    int nb_values;
    const double *values; /* these values (shape from a --shape, else 1-D) */
    const char *npy;      /* this .npy file */
} prt_goldmake_input;

typedef struct prt_goldmake_opts {
    const char *yaml_path;
    const char *out_path;
    const char *version;   /* NULL: every version */
    int nb_configs;        /* 0: every config */
    const char *const *configs;
    int nb_inputs;
    const prt_goldmake_input *inputs;
    uint64_t seed;
    double lo, hi;         /* value range of seeded inputs */
    int cases;             /* per config, >= 1 */
    int use_plugin;        /* outputs from the plugin's CPU path even when a reference exists */
    const char *merge_path;/* start from this golden file; its configs are kept */
    prt_registry *registry;/* NULL: global */
    FILE *log;             /* what was made from what; NULL: quiet */
} prt_goldmake_opts;

prt_status prt__goldmake(const prt_goldmake_opts *o, char *err, size_t cap);

#endif
