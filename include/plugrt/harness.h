/*
 * plugrt/harness.h - the conformance harness: check a plugin against a
 * TensorRT-style PluginConfig YAML and Polygraphy golden IO (`plugrt
 * test-plugin`), and write golden IO from a plugin's float64 reference or its
 * CPU path (`plugrt golden make`). docs/conformance.md describes every check
 * and both file formats.
 *
 * Contract
 *   Library: these functions live in the harness library (CMake target
 *   plugrt_harness, which links libyaml), not in libplugrt; an application
 *   that calls them links that library as well. The harness reaches plugins
 *   only through the registry and the single-op runner (plugrt/op.h), so it
 *   runs them through the same host as engines.
 *
 *   Options: the *_opts structs open with struct_size and abi_version and are
 *   read member by member up to the caller's struct_size (a caller built
 *   against an older, shorter struct keeps working; the members it lacks take
 *   the defaults of the *_init function). Fill them with the *_init function,
 *   then set members by name. Everything the options point to is borrowed for
 *   the duration of the call.
 *
 *   Errors: each function returns PRT_OK when it could do its work at all and
 *   an error, with the reason in `err` (cap bytes; NULL allowed), when it
 *   could not (a file unreadable, a version or config asked for that the
 *   YAML lacks, a struct_size below the header). In prt_harness_test_plugin a
 *   plugin's own failures are failed checks, counted in the summary, never an
 *   error of the call. Nothing here exits or aborts.
 *
 *   Threads: calls are independent; each uses only what its options name (the
 *   registry may be shared, see registry.h).
 */
#ifndef PLUGRT_HARNESS_H
#define PLUGRT_HARNESS_H

#include <stdio.h>

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- test-plugin ---------------------------------------------------------- */

typedef struct prt_harness_test_opts {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *yaml_path;          /* required */
    const char *golden_path;        /* NULL: each version's golden_io_path */
    const char *version;            /* NULL: every version */
    const char *plugin_namespace;   /* NULL: the YAML's "namespace", else the default one, else the
                                     * only namespace that has the plugin */
    int32_t nb_configs;             /* 0: every config */
    int32_t reserved_;
    const char *const *configs;
    int32_t cpu, cuda;              /* devices to run on (init: both; CUDA only where a GPU is found) */
    int32_t cuda_required;          /* no GPU: a failed check rather than a skip */
    int32_t nb_threads;             /* CPU threads; 0 = all cores */
    prt_registry *registry;         /* NULL: the global registry */
    int32_t json;                   /* one JSON object instead of the table */
    int32_t verbose;                /* also print what passing checks saw */
    FILE *out;                      /* where the table or JSON goes; init: stdout */
} prt_harness_test_opts;

typedef struct prt_harness_summary {
    int32_t passed, failed, skipped;
} prt_harness_summary;

PRT_API void prt_harness_test_opts_init(prt_harness_test_opts *o);

/* Check the plugin the YAML names, every version it declares (or
 * o->version), against the YAML and its golden IO: schema, golden outputs,
 * output shapes, serialize/clone, attribute ranges, input constraints and
 * type combinations. Prints a table (or JSON) to o->out and fills *sum. */
PRT_API PRT_NODISCARD prt_status prt_harness_test_plugin(const prt_harness_test_opts *o, prt_harness_summary *sum,
                                                        char *err, size_t cap);

/* ---- golden make ---------------------------------------------------------- */

/* One input given for golden make: exactly one of has_dims, nb_values > 0
 * and npy is set. */
typedef struct prt_harness_golden_input {
    const char *config;   /* NULL: every config */
    const char *input;
    int32_t has_dims;
    int32_t nb_values;
    prt_dims dims;        /* the input's shape (seeded values unless values are given) */
    const double *values; /* these values (shape from dims when has_dims, else 1-D) */
    const char *npy;      /* this .npy file */
} prt_harness_golden_input;

typedef struct prt_harness_golden_opts {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *yaml_path;  /* required */
    const char *out_path;   /* required: the golden-IO JSON written (atomically replaced) */
    const char *version;    /* NULL: every version */
    int32_t nb_configs;     /* 0: every config */
    int32_t nb_inputs;
    const char *const *configs;
    const prt_harness_golden_input *inputs;
    uint64_t seed;          /* init: 1 */
    double lo, hi;          /* value range of seeded inputs; init: [-1, 1) */
    int32_t cases;          /* per config, >= 1; init: 1 */
    int32_t use_plugin;     /* outputs from the plugin's CPU path even when a reference exists */
    const char *merge_path; /* start from this golden file; its configs are kept */
    prt_registry *registry; /* NULL: the global registry */
    FILE *log;              /* what was made from what; NULL: quiet */
} prt_harness_golden_opts;

PRT_API void prt_harness_golden_opts_init(prt_harness_golden_opts *o);

/* Write a golden-IO JSON for the configs of a PluginConfig YAML. For every
 * selected version and config (a config name is made once, by the first
 * version that declares it) `cases` cases are written. Inputs: a .npy file
 * when given, else the values given, else seeded uniform values in [lo, hi)
 * of the given shape, rounded to the config's input type; an input with none
 * of these, or one that the config's input_types (when it has any) does not
 * list, is left out (optional). Attributes: the config's values. Outputs: the
 * plugin's float64 reference when its creator registers one
 * (prt_plugin_creator.reference), computed from the rounded inputs and
 * rounded once to the config's output type; otherwise, or with use_plugin,
 * the plugin's own CPU result. */
PRT_API PRT_NODISCARD prt_status prt_harness_golden_make(const prt_harness_golden_opts *o, char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_HARNESS_H */
