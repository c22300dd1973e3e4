/* engine/layercheck.c - plugin layers checked against their plugin (layercheck.h). */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/expr.h"
#include "engine/devq.h"
#include "engine/layercheck.h"
#include "engine/shapeval.h"

prt_status prt__layercheck_formats(prt__plugin *pl, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out,
                                   prt_device device, const char *who, char *err, size_t cap)
{
    int32_t i;
    for (i = 0; i < nb_in + nb_out; i++) {
        if (i < nb_in && io[i].desc.dims.nb == PRT_NB_DIMS_ABSENT) continue;
        if (prt__devq_supports(pl, i, io, nb_in, nb_out, device)) continue;
        snprintf(err, cap,
                 "plan does not match its plugin: %s does not support %s %d as %s in format %s (the plan's types "
                 "and formats)",
                 who, i < nb_in ? "input" : "output", (int)(i < nb_in ? i : i - nb_in),
                 prt_dtype_name(io[i].desc.dtype), prt_format_name(io[i].desc.format));
        return PRT_STATUS_BAD_FORMAT;
    }
    return PRT_OK;
}

prt_status prt__layercheck_outputs(prt__plugin *pl, const prt_tensor_desc *in, const prt_dims *in_values,
                                   int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out, const char *who,
                                   char *err, size_t cap)
{
    prt__exprs *x = NULL;
    prt_dims_expr *ein = NULL, *eout = NULL, *vin = NULL, *vout = NULL;
    prt_status s;
    int32_t i, j;
    char msg[PRT_ERR_CAP];

    ein = prt__calloc((size_t)nb_in + 1, sizeof *ein);
    eout = prt__calloc((size_t)nb_out + 1, sizeof *eout);
    vin = prt__calloc((size_t)nb_in + 1, sizeof *vin);
    vout = prt__calloc((size_t)nb_out + 1, sizeof *vout);
    if (!ein || !eout || !vin || !vout || prt__exprs_create(&x) != PRT_OK) {
        snprintf(err, cap, "out of memory checking the output shapes of %s", who);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < nb_in; i++) {
        ein[i].nb = in[i].dims.nb;
        for (j = 0; j < in[i].dims.nb && j < PRT_MAX_DIMS; j++) ein[i].d[j] = prt__exprs_const(x, in[i].dims.d[j]);
        vin[i].nb = in_values ? in_values[i].nb : PRT_NB_VALUES_UNKNOWN;
        for (j = 0; j < vin[i].nb && j < PRT_MAX_DIMS; j++) vin[i].d[j] = prt__exprs_const(x, in_values[i].d[j]);
    }
    if (prt__exprs_failed(x)) {
        snprintf(err, cap, "out of memory checking the output shapes of %s", who);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    msg[0] = 0;
    s = prt__shapeval_outputs(pl, ein, vin, nb_in, eout, vout, nb_out, prt__exprs_builder(x), msg, sizeof msg);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s refuses its current input shapes: %s", who, msg);
        s = PRT_STATUS_SHAPE_MISMATCH;
        goto done;
    }
    if (prt__exprs_failed(x)) {
        snprintf(err, cap, "out of memory checking the output shapes of %s", who);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < nb_out; i++) {
        prt_dims got;
        int bad = eout[i].nb != out[i].dims.nb;
        memset(&got, 0, sizeof got);
        got.nb = eout[i].nb >= 0 && eout[i].nb <= PRT_MAX_DIMS ? eout[i].nb : 0;
        for (j = 0; j < got.nb; j++) {
            int64_t v = -1;
            if (!prt__exprs_owns(x, eout[i].d[j]) || prt__expr_eval(x, eout[i].d[j], NULL, 0, &v, NULL) != 0) v = -1;
            got.d[j] = v;
            if (v < 0 || (j < out[i].dims.nb && v != out[i].dims.d[j])) bad = 1;
        }
        if (bad) {
            char a[160], b[160];
            snprintf(err, cap,
                     "%s: for its current input shapes the plugin gives output %d the shape %s, but the plan gives "
                     "it %s (the plan's shapes disagree with the plugin away from the profile's min, opt and max)",
                     who, (int)i, prt_dims_str(&got, a, sizeof a), prt_dims_str(&out[i].dims, b, sizeof b));
            s = PRT_STATUS_SHAPE_MISMATCH;
            goto done;
        }
    }
    s = PRT_OK;
done:
    prt__exprs_destroy(x);
    prt__free(ein);
    prt__free(eout);
    prt__free(vin);
    prt__free(vout);
    return s;
}
