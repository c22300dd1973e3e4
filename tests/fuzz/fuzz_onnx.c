/* Fuzz target for the ONNX reader: decode and check a model, read it back
 * through every accessor, import it (bundled plugins, every bad node
 * reported) and decode the same bytes as a TensorProto. */
#include <stdint.h>
#include <stdlib.h>

#include "plugrt/onnx.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

static void ignore_issue(void *u, const char *node, const char *op, const char *dom, const char *why)
{
    (void)u; (void)node; (void)op; (void)dom; (void)why;
}

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_onnx_model *m = NULL;
    prt_onnx_tensor *t = NULL;
    prt_network *net = NULL;
    prt_onnx_import_config ic;
    char err[512];
    int32_t i;
    if (prt_onnx_tensor_parse(data, size, &t, err, sizeof err) == PRT_OK) prt_onnx_tensor_destroy(t);
    if (prt_onnx_model_parse(data, size, NULL, &m, err, sizeof err) != PRT_OK) return 0;
    for (i = 0; i < prt_onnx_model_nb_inputs(m); i++) {
        prt_onnx_io io;
        if (prt_onnx_model_input(m, i, &io) != PRT_OK) abort();
    }
    for (i = 0; i < prt_onnx_model_nb_outputs(m); i++) {
        prt_onnx_io io;
        if (prt_onnx_model_output(m, i, &io) != PRT_OK) abort();
    }
    for (i = 0; i < prt_onnx_model_nb_nodes(m); i++)
        if (prt_onnx_model_node(m, i, NULL, NULL, NULL) != PRT_OK) abort();
    prt_onnx_import_config_init(&ic);
    ic.keep_going = 1;
    ic.issue = ignore_issue;
    if (prt_onnx_import(m, NULL, &ic, &net, err, sizeof err) == PRT_OK) prt_network_destroy(net);
    prt_onnx_model_destroy(m);
    return 0;
}
