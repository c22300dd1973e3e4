/* Fuzz target for the golden-IO JSON reader: load and touch every array. */
#include <stdint.h>

#include "harness/harness.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_golden *g;
    volatile double sum = 0;
    int c, k, i;
    if (prt__golden_load_mem((const char *)data, size, "fuzz.json", &g) != PRT_OK) return 0;
    for (c = 0; c < g->nb_configs; c++)
        for (k = 0; k < g->configs[c].nb_cases; k++) {
            const prt_golden_case *gc = &g->configs[c].cases[k];
            for (i = 0; i < gc->nb_inputs; i++)
                sum += prt_npy_get_f64(&gc->inputs[i].array, gc->inputs[i].array.count - 1);
            for (i = 0; i < gc->nb_outputs; i++)
                sum += prt_npy_get_f64(&gc->outputs[i].array, 0);
            for (i = 0; i < gc->nb_attrs; i++)
                if (gc->attrs[i].kind != PRT_GOLDEN_ATTR_STRING)
                    sum += prt_npy_get_f64(&gc->attrs[i].array, 0);
            (void)prt__golden_case_input(gc, "x");
        }
    (void)sum;
    prt__golden_destroy(g);
    return 0;
}
