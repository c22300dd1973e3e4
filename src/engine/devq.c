/* engine/devq.c - per-device build-time questions (see devq.h). */
#include <string.h>

#include "core/core.h"
#include "engine/devq.h"
#include "engine/optio.h"

#define DQ_HAS(ops, T, m) ((ops) && (ops)->struct_size >= offsetof(T, m) + sizeof((ops)->m) && (ops)->m)

static const prt_blob_plugin_ops *blob_ops(const prt__plugin *pl)
{
    return pl->style == PRT_STYLE_BLOB && pl->blob ? pl->blob->ops : NULL;
}

static const prt_plugin_build_ops *field_ops(const prt__plugin *pl)
{
    const prt_field_plugin_ops *fo = pl->style == PRT_STYLE_FIELD && pl->field ? pl->field->ops : NULL;
    return DQ_HAS(fo, prt_field_plugin_ops, build) ? fo->build : NULL;
}

size_t prt__devq_workspace(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device)
{
    const prt_blob_plugin_ops *bo = blob_ops(pl);
    const prt_plugin_build_ops *fo = field_ops(pl);
    if (DQ_HAS(fo, prt_plugin_build_ops, get_workspace_size_v2)) {
        prt__trace(pl, "get_workspace_size_v2");
        return fo->get_workspace_size_v2(pl->field, in, nb_in, out, nb_out, device);
    }
    if (DQ_HAS(bo, prt_blob_plugin_ops, get_workspace_size_v2)) {
        prt_tensor_desc *t = prt__calloc((size_t)(nb_in + nb_out) + 1, sizeof *t);
        size_t r;
        int32_t i;
        if (!t) return SIZE_MAX;
        for (i = 0; i < nb_in + nb_out; i++) { /* the blob form takes the max shapes */
            const prt_dyn_tensor_desc *d = i < nb_in ? &in[i] : &out[i - nb_in];
            t[i] = d->desc;
            t[i].dims = d->max;
        }
        prt__trace(pl, "get_workspace_size_v2");
        r = bo->get_workspace_size_v2(pl->blob, t, nb_in, t + nb_in, nb_out, device);
        prt__free(t);
        return r;
    }
    return prt__plugin_workspace(pl, in, nb_in, out, nb_out);
}

int prt__devq_supports(prt__plugin *pl, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out,
                       prt_device device)
{
    const prt_blob_plugin_ops *bo = blob_ops(pl);
    const prt_plugin_build_ops *fo = field_ops(pl);
    if (pos < 0 || pos >= nb_in + nb_out) return 0;
    if (DQ_HAS(fo, prt_plugin_build_ops, supports_format_combination_v2)) {
        prt__trace(pl, "supports_format_combination_v2");
        return fo->supports_format_combination_v2(pl->field, pos, io, nb_in, nb_out, device) != 0;
    }
    if (DQ_HAS(bo, prt_blob_plugin_ops, supports_format_combination_v2)) {
        prt_tensor_desc *t = prt__calloc((size_t)(nb_in + nb_out) + 1, sizeof *t);
        int32_t i;
        int r;
        if (!t) return 0;
        for (i = 0; i < nb_in + nb_out; i++) t[i] = io[i].desc;
        prt__trace(pl, "supports_format_combination_v2");
        r = bo->supports_format_combination_v2(pl->blob, pos, t, nb_in, nb_out, device) != 0;
        prt__free(t);
        return r;
    }
    return prt__plugin_supports(pl, pos, io, nb_in, nb_out);
}

uint64_t prt__devq_plan_workspace(const prt__plan *p, prt__plugin *const *protos, prt_device device)
{
    uint64_t most = 0;
    int32_t li, i;
    for (li = 0; li < p->nb_layers; li++) {
        const prt__player *l = &p->layers[li];
        prt_dyn_tensor_desc *io;
        size_t ws;
        if (!protos[li]) continue;
        io = prt__calloc((size_t)(l->nb_in + l->nb_out) + 1, sizeof *io);
        if (!io) return UINT64_MAX;
        for (i = 0; i < l->nb_in; i++) {
            if (l->in[i] < 0) prt__optio_absent_dyn(&io[i]);
            else prt__plan_dyn_desc(&p->tensors[l->in[i]], &io[i]);
        }
        for (i = 0; i < l->nb_out; i++) prt__plan_dyn_desc(&p->tensors[l->out[i]], &io[l->nb_in + i]);
        ws = prt__devq_workspace(protos[li], io, l->nb_in, io + l->nb_in, l->nb_out, device);
        prt__free(io);
        if (ws == SIZE_MAX) return UINT64_MAX;
        if ((uint64_t)ws > most) most = (uint64_t)ws;
    }
    return (most + 255u) / 256u * 256u;
}
