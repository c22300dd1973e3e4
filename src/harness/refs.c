/*
 * harness/refs.c - float64 references for `plugrt golden make` (see
 * plugrun.h). A plugin registers its reference with its creator
 * (prt_plugin_creator.reference, plugin ABI 2); the harness only converts
 * the case's inputs and attributes and calls it, so it includes no plugin's
 * header and serves plugin libraries the same way as bundled plugins.
 */
#include <stdio.h>
#include <string.h>

#include "harness/plugrun.h"

static void *ref_alloc(prt_reference_io *io, size_t bytes)
{
    return prt__arena_alloc((prt__arena *)io->host_, bytes ? bytes : 1);
}

const char *prt__ref_doc(const prt_plugin_creator *c)
{
    if (!c || c->struct_size < offsetof(prt_plugin_creator, reference_doc) + sizeof(c->reference_doc) ||
        !c->reference)
        return NULL;
    return c->reference_doc ? c->reference_doc : "the plugin's float64 reference";
}

prt_status prt__ref_run(const prt_plugin_creator *c, const prt__inputs *in, double *const *in_f64,
                        const prt__attrset *attrs, prt__arena *ar, int nb_out, double **out, prt_dims *out_dims,
                        char *err, size_t cap)
{
    prt_fields fc;
    prt_owned_fields *norm = NULL;
    prt_reference_io io;
    prt_dims *in_dims;
    char msg[1024];
    prt_msg m = {msg, sizeof msg};
    prt_status s;
    int i;
    if (!prt__ref_doc(c)) {
        snprintf(err, cap, "%s v%s has no float64 reference", c ? c->name : "?", c ? c->version : "?");
        return PRT_STATUS_UNSUPPORTED;
    }
    if ((s = prt__attrset_to_fields(c, attrs, ar, &fc, NULL, 0, err, cap)) != PRT_OK) return s;
    if ((s = prt_fields_validate(c, &fc, &norm, err, cap)) != PRT_OK) return s;
    in_dims = prt__arena_alloc(ar, sizeof(prt_dims) * (size_t)(in->nb + 1));
    if (!in_dims) {
        prt_owned_fields_free(norm);
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < in->nb; i++) in_dims[i] = in->desc[i].dims;
    for (i = 0; i < nb_out; i++) out[i] = NULL;
    memset(&io, 0, sizeof io);
    io.struct_size = (uint32_t)sizeof io;
    io.abi_version = PRT_ABI_VERSION;
    io.nb_inputs = in->nb;
    io.nb_outputs = nb_out;
    io.input_dims = in_dims;
    io.inputs = (const double *const *)in_f64;
    io.output_dims = out_dims;
    io.outputs = out;
    io.alloc = ref_alloc;
    io.host_ = ar;
    msg[0] = 0;
    s = c->reference(c, prt_owned_fields_get(norm), &io, &m);
    prt_owned_fields_free(norm);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s v%s reference: %s", c->name, c->version, msg[0] ? msg : prt_status_str(s));
        return s;
    }
    for (i = 0; i < nb_out; i++) {
        if (!out[i]) {
            snprintf(err, cap, "%s v%s reference set no data for output %d", c->name, c->version, i);
            return PRT_STATUS_PLUGIN_ERROR;
        }
    }
    return PRT_OK;
}
