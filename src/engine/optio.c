/* engine/optio.c - optional inputs and outputs (see optio.h). */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/optio.h"

/* Does the ops struct (of type T) cover member m, and is it set? */
#define OPTIO_HAS(ops, T, m) ((ops) && (ops)->struct_size >= offsetof(T, m) + sizeof((ops)->m) && (ops)->m)

static const char *pname(const prt__plugin *pl) { return pl->creator && pl->creator->name ? pl->creator->name : "?"; }
static const char *pversion(const prt__plugin *pl)
{
    return pl->creator && pl->creator->version ? pl->creator->version : "?";
}

prt_status prt__optio_info(prt__plugin *pl, int32_t nb_out, prt_io_info *out, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_io_info c;
    prt_status s = PRT_OK;
    memset(&c, 0, sizeof c);
    c.struct_size = (uint32_t)sizeof c;
    c.min_inputs = c.max_inputs = c.min_outputs = -1;
    c.value_inputs = 0;
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_BLOB) {
        const prt_blob_plugin_ops *o = pl->blob ? pl->blob->ops : NULL;
        if (OPTIO_HAS(o, prt_blob_plugin_ops, get_io_info)) {
            prt__trace(pl, "get_io_info");
            s = o->get_io_info(pl->blob, &c, &m);
        }
    } else {
        const prt_field_plugin_ops *fo = pl->field ? pl->field->ops : NULL;
        const prt_plugin_build_ops *o = OPTIO_HAS(fo, prt_field_plugin_ops, build) ? fo->build : NULL;
        if (OPTIO_HAS(o, prt_plugin_build_ops, get_io_info)) {
            prt__trace(pl, "get_io_info");
            s = o->get_io_info(pl->field, &c, &m);
        }
    }
    if (s != PRT_OK) {
        snprintf(err, cap, "layer \"%s\" (%s v%s): get_io_info failed: %s", pl->layer ? pl->layer : "?", pname(pl),
                 pversion(pl), pmsg[0] ? pmsg : prt_status_str(s));
        return s > 0 && s < PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR;
    }
    if (c.min_inputs < -1 || c.max_inputs < -1 || (c.max_inputs >= 0 && c.min_inputs > c.max_inputs) ||
        c.min_outputs < -1 || c.min_outputs == 0 || (nb_out >= 0 && c.min_outputs > nb_out)) {
        snprintf(err, cap,
                 "layer \"%s\" (%s v%s): get_io_info gave min_inputs %d, max_inputs %d, min_outputs %d; expected "
                 "-1 or 0 <= min_inputs <= max_inputs, and min_outputs -1 or 1..%d (its outputs)",
                 pl->layer ? pl->layer : "?", pname(pl), pversion(pl), (int)c.min_inputs, (int)c.max_inputs,
                 (int)c.min_outputs, (int)nb_out);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    if (c.min_outputs < 0) c.min_outputs = nb_out;
    *out = c;
    return PRT_OK;
}

prt_status prt__optio_check(prt__plugin *pl, const char *who, const int32_t *in, int32_t nb_in, int32_t nb_out,
                            prt_io_info *info, int *used, char *err, size_t cap)
{
    prt_io_info c;
    prt_status s;
    int32_t i, nb = prt__plugin_nb_outputs(pl);
    if ((s = prt__optio_info(pl, nb, &c, err, cap)) != PRT_OK) return s;
    if (nb_out > nb || nb_out < c.min_outputs) {
        if (c.min_outputs == nb)
            snprintf(err, cap, "%s: the plugin has %d outputs, the network names %d", who, (int)nb, (int)nb_out);
        else
            snprintf(err, cap,
                     "%s: the network names %d outputs; the plugin has %d and needs at least the first %d named "
                     "(only outputs at the end may be left out)",
                     who, (int)nb_out, (int)nb, (int)c.min_outputs);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c.max_inputs >= 0 && nb_in > c.max_inputs) {
        snprintf(err, cap, "%s: %d inputs given; the plugin takes at most %d", who, (int)nb_in, (int)c.max_inputs);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb_in < c.min_inputs) {
        snprintf(err, cap, "%s: %d inputs given; the plugin needs at least %d (inputs %d..%d are optional)", who,
                 (int)nb_in, (int)c.min_inputs, (int)c.min_inputs,
                 (int)(c.max_inputs >= 0 ? c.max_inputs - 1 : c.min_inputs));
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < nb_in; i++) {
        if (in[i] >= 0 || (c.min_inputs >= 0 && i >= c.min_inputs)) continue;
        if (c.min_inputs < 0)
            snprintf(err, cap, "%s: input %d is absent (empty name), but the plugin declares no optional inputs", who,
                     (int)i);
        else
            snprintf(err, cap, "%s: input %d is absent (empty name), but the plugin requires inputs 0..%d", who,
                     (int)i, (int)c.min_inputs - 1);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (info) *info = c;
    *used = nb_out != nb;
    for (i = 0; i < nb_in; i++)
        if (in[i] < 0) *used = 1;
    return PRT_OK;
}

void prt__optio_absent(prt_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    d->dtype = PRT_DTYPE_ABSENT;
    d->format = PRT_FORMAT_LINEAR;
    d->dims.nb = PRT_NB_DIMS_ABSENT;
}

void prt__optio_absent_dyn(prt_dyn_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    prt__optio_absent(&d->desc);
    d->min.nb = d->opt.nb = d->max.nb = PRT_NB_DIMS_ABSENT;
}

void prt__optio_absent_expr(prt_dims_expr *d)
{
    memset(d, 0, sizeof *d);
    d->nb = PRT_NB_DIMS_ABSENT;
}
