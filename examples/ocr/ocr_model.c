/* See ocr_model.h. */
#include "ocr_model.h"

#include <plugrt/engine.h>
#include <plugrt/network.h>
#include <plugrt/onnx.h>
#include <plugrt/registry.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ocr_model_run(const char *path, const float *x, const int64_t x_dims[4], float **y, int64_t y_dims[8],
                  int *y_nb, char *err, size_t cap)
{
    int ret = -1;
    prt_registry *reg = NULL;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    float *out = NULL;
    prt_io_desc in_d, out_d;
    prt_dims d = {.nb = 4};
    for (int i = 0; i < 4; i++)
        d.d[i] = x_dims[i];
    if (prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
        snprintf(err, cap, "cannot create a registry");
        goto done;
    }
    prt_onnx_model *m = NULL;
    if (prt_onnx_model_load(path, &m, err, cap) != PRT_OK)
        goto done;
    prt_onnx_io io;
    int ok = prt_onnx_model_nb_inputs(m) == 1 && prt_onnx_model_input(m, 0, &io) == PRT_OK;
    prt_profile_range range = {.input = ok ? io.name : "", .min = d, .opt = d, .max = d};
    prt_onnx_import_config ic;
    prt_onnx_import_config_init(&ic);
    ic.nb_ranges = 1;
    ic.ranges = &range;
    if (!ok) {
        snprintf(err, cap, "%s: expected a model with one input, found %d", path, prt_onnx_model_nb_inputs(m));
        prt_onnx_model_destroy(m);
        goto done;
    }
    prt_status st = prt_onnx_import(m, reg, &ic, &net, err, cap);
    if (st != PRT_OK) {
        prt_onnx_model_destroy(m);
        goto done;
    }
    prt_builder_config bc;
    prt_builder_config_init(&bc);
    bc.nb_ranges = 1;
    bc.ranges = &range;
    st = prt_engine_build(net, &bc, reg, &e, err, cap);
    prt_onnx_model_destroy(m);
    if (st != PRT_OK)
        goto done;
    if (prt_engine_nb_io(e) != 2 || prt_engine_io(e, 0, &in_d) != PRT_OK || prt_engine_io(e, 1, &out_d) != PRT_OK ||
        in_d.mode != PRT_IO_INPUT) {
        snprintf(err, cap, "%s: expected one input and one output", path);
        goto done;
    }
    size_t bytes = 0;
    if (prt_context_create(e, NULL, &ctx) != PRT_OK ||
        prt_context_set_input_shape(ctx, in_d.name, &d) != PRT_OK ||
        prt_context_buffer_size(ctx, out_d.name, &bytes) != PRT_OK || !(out = malloc(bytes ? bytes : 1)) ||
        prt_context_set_tensor(ctx, in_d.name, (void *)x) != PRT_OK ||
        prt_context_set_tensor(ctx, out_d.name, out) != PRT_OK || prt_context_execute(ctx) != PRT_OK) {
        snprintf(err, cap, "%s: %s", path, ctx ? prt_context_last_error(ctx) : prt_engine_last_error(e));
        goto done;
    }
    prt_dims od;
    if (prt_context_get_shape(ctx, out_d.name, &od) != PRT_OK || od.nb > 8) {
        snprintf(err, cap, "%s: no output shape", path);
        goto done;
    }
    for (int i = 0; i < od.nb; i++)
        y_dims[i] = od.d[i];
    *y_nb = od.nb;
    *y = out;
    out = NULL;
    ret = 0;
done:
    free(out);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(reg);
    return ret;
}
