/* Fuzz target for the PluginConfig YAML reader: load, then evaluate every
 * constraint and output_dims expression the file holds, with every input
 * and attribute bound to small dims. */
#include <stdint.h>
#include <string.h>

#include "harness/harness.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    static const int64_t dims[PRT_MAX_DIMS] = {1, 2, 3, 4, 5, 6, 7, 8};
    prt_pcfg *cfg;
    int vi, i;
    if (prt__pcfg_load_mem((const char *)data, size, "fuzz.yaml", &cfg) != PRT_OK) return 0;
    for (vi = 0; vi < cfg->nb_versions; vi++) {
        const prt_pcfg_version *v = &cfg->versions[vi];
        prt_dimexpr_sym syms[32];
        int n = 0, h;
        prt_dims d;
        int64_t x;
        char err[128];
        for (i = 0; i < v->nb_inputs && n < 32; i++) syms[n++] = (prt_dimexpr_sym){v->inputs[i], 8, dims};
        for (i = 0; i < v->nb_attributes && n < 32; i++) syms[n++] = (prt_dimexpr_sym){v->attributes[i], 3, dims};
        for (i = 0; i < v->nb_input_dim_constraints; i++)
            (void)prt__dimexpr_check(v->input_dim_constraints[i], syms, n, &h, err, sizeof err);
        for (i = 0; i < v->nb_attribute_constraints; i++)
            (void)prt__dimexpr_check(v->attribute_constraints[i], syms, n, &h, err, sizeof err);
        for (i = 0; i < v->nb_output_dims; i++) {
            (void)prt__dimexpr_eval_list(v->output_dims[i].value, syms, n, &d, err, sizeof err);
            (void)prt__dimexpr_eval(v->output_dims[i].value, syms, n, &x, NULL, 0);
        }
        (void)prt__pcfg_check_inputs(v, syms, n, &h, err, sizeof err);
        for (i = 0; i < v->nb_options; i++)
            if (v->options[i].kind == PRT_PCFG_OPTION_RANGE && v->options[i].range.nb_min &&
                v->options[i].range.nb_max)
                (void)prt__pcfg_bounds_allow(v->options[i].range.min, v->options[i].range.max, 1.0);
        (void)prt__pcfg_find_version(cfg, v->version);
    }
    prt__pcfg_destroy(cfg);
    return 0;
}
