/*
 * harness/runner.h - the conformance runner behind `plugrt test-plugin`:
 * checks one plugin (every version a PluginConfig YAML declares) against the
 * YAML and its golden-IO JSON. docs/conformance.md describes each check.
 *
 * Contract
 *   prt__runner_run prints a table (or, with `json`, one JSON object) to
 *   `out` and fills the summary. It returns PRT_OK when it could run the
 *   checks at all (whatever their results) and an error, with a message in
 *   `err`, when it could not (YAML or golden file unreadable, a version or
 *   config asked for that the YAML lacks). A check fails, never the
 *   process: plugin errors become failed checks.
 */
#ifndef PLUGRT_HARNESS_RUNNER_H
#define PLUGRT_HARNESS_RUNNER_H

#include <stdio.h>

#include "plugrt/registry.h"

typedef struct prt_runner_opts {
    const char *yaml_path;
    const char *golden_path;        /* NULL: each version's golden_io_path */
    const char *version;            /* NULL: every version */
    const char *plugin_namespace;   /* NULL: the YAML's "namespace", else the default one, else the
                                     * only namespace that has the plugin */
    int nb_configs;                 /* 0: every config */
    const char *const *configs;
    int cpu, cuda;                  /* devices to run on */
    int cuda_required;              /* no GPU: a failure rather than a skip */
    prt_registry *registry;         /* NULL: the global registry */
    int nb_threads;                 /* CPU threads; 0 = all cores */
    int json;                       /* JSON instead of the table */
    int verbose;                    /* also print what passing checks saw */
    FILE *out;
} prt_runner_opts;

typedef struct prt_runner_summary {
    int passed, failed, skipped;
} prt_runner_summary;

prt_status prt__runner_run(const prt_runner_opts *o, prt_runner_summary *sum, char *err, size_t cap);

#endif
