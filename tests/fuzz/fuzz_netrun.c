/* Fuzz target that builds networks and runs them: the input is a network
 * JSON description; its dynamic input extents get a profile drawn from a
 * hash of the input (min 1..3, max min..min+4), it is built (fp16 when the
 * hash says so), and the engine runs on the CPU at the profile's max and at
 * three shapes inside it, with exactly sized buffers (fuzz_shapes.h).
 * Seeds: corpus/netjson/ (.npy constants resolve as in fuzz_netjson). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/netdef.h"
#include "fuzz/fuzz_shapes.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

#ifdef PRT_FUZZ_DIR
#define FUZZ_NETRUN_BASE PRT_FUZZ_DIR "/corpus/netjson-files"
#else
#define FUZZ_NETRUN_BASE "."
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_builder_config cfg;
    prt_profile_range rg[16];
    uint64_t seed = fuzz_shapes_hash(data, size) | 1;
    char err[512];
    int32_t i, j, nr = 0;
    err[0] = 0;
    if (prt_network_from_json(fuzz_shapes_registry(), (const char *)data, size, FUZZ_NETRUN_BASE, &net, err,
                              sizeof err) != PRT_OK) {
        if (net || !err[0]) abort();
        return 0;
    }
    prt_builder_config_init(&cfg);
    if (fuzz_shapes_next(&seed) % 4 == 0) cfg.precision = PRT_PRECISION_FP16;
    for (i = 0; i < net->nb_tensors && nr < 16; i++) {
        const prt__net_tensor *t = &net->tensors[i];
        int dyn = 0;
        if (t->kind != PRT__TENSOR_INPUT) continue;
        rg[nr].input = t->name;
        rg[nr].min = rg[nr].opt = rg[nr].max = t->dims;
        for (j = 0; j < t->dims.nb; j++) {
            if (t->dims.d[j] >= 0) continue;
            dyn = 1;
            rg[nr].min.d[j] = 1 + (int64_t)(fuzz_shapes_next(&seed) % 3);
            rg[nr].max.d[j] = rg[nr].min.d[j] + (int64_t)(fuzz_shapes_next(&seed) % 5);
            rg[nr].opt.d[j] = rg[nr].min.d[j];
        }
        if (dyn) nr++;
    }
    cfg.ranges = rg;
    cfg.nb_ranges = nr;
    err[0] = 0;
    if (prt_engine_build(net, &cfg, fuzz_shapes_registry(), &e, err, sizeof err) == PRT_OK) {
        fuzz_shapes_run(e, seed);
        prt_engine_destroy(e);
    } else if (e || !err[0]) {
        abort();
    }
    prt_network_destroy(net);
    return 0;
}
