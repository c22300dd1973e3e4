/* Fuzz target for the network JSON reader: prt_network_from_json against a
 * registry holding the bundled plugins and the test fakes; a description
 * that reads is also built into an engine (shape inference and type
 * negotiation through the plugins), which may fail, but cleanly. .npy
 * constants resolve against tests/fuzz/corpus/netjson-files when the
 * replay program defines PRT_FUZZ_DIR, else the current folder. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/engine.h"
#include "runtime/fakeplugins.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

#ifdef PRT_FUZZ_DIR
#define FUZZ_NETJSON_BASE PRT_FUZZ_DIR "/corpus/netjson-files"
#else
#define FUZZ_NETJSON_BASE "."
#endif

static prt_registry *fuzz_netjson_registry(void)
{
    static prt_registry *r;
    if (!r) r = fake_registry(1, 1, 10);
    if (!r) abort();
    return r;
}

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_builder_config cfg;
    char err[512];
    int32_t i;
    err[0] = 0;
    if (prt_network_from_json(fuzz_netjson_registry(), (const char *)data, size, FUZZ_NETJSON_BASE, &net, err,
                              sizeof err) != PRT_OK) {
        if (net || !err[0]) abort(); /* a failure creates nothing and always says why */
        return 0;
    }
    for (i = 0; i < prt_network_nb_inputs(net); i++)
        if (!prt_network_input_name(net, i)) abort();
    for (i = 0; i < prt_network_nb_layers(net); i++)
        if (!prt_network_layer_name(net, i)) abort();
    for (i = 0; i < prt_network_nb_outputs(net); i++)
        if (!prt_network_output_name(net, i)) abort();
    prt_builder_config_init(&cfg);
    err[0] = 0;
    if (prt_engine_build(net, &cfg, fuzz_netjson_registry(), &e, err, sizeof err) == PRT_OK) {
        prt_engine_destroy(e);
    } else if (e || !err[0]) {
        abort();
    }
    prt_network_destroy(net);
    return 0;
}
