/* engine/shapeval.c - shape values (see shapeval.h). */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/shapeval.h"

#define SV_HAS(ops, T, m) ((ops) && (ops)->struct_size >= offsetof(T, m) + sizeof((ops)->m) && (ops)->m)

static const prt_plugin_build_ops *build_ops(const prt__plugin *pl)
{
    const prt_field_plugin_ops *fo = pl->field ? pl->field->ops : NULL;
    return SV_HAS(fo, prt_field_plugin_ops, build) ? fo->build : NULL;
}

static prt_status check_list(const prt__plugin *pl, const char *what, const prt_dims_expr *d, int32_t n,
                             int allow_unknown, char *err, size_t cap)
{
    int32_t i, j;
    for (i = 0; i < n; i++) {
        if ((d[i].nb == PRT_NB_VALUES_UNKNOWN && allow_unknown) ) continue;
        if (d[i].nb < 0 || d[i].nb > PRT_MAX_DIMS) {
            snprintf(err, cap, "layer \"%s\" (%s v%s): output %d has %d %s; expected 0..%d%s", pl->layer,
                     pl->creator->name, pl->creator->version, (int)i, (int)d[i].nb, what, PRT_MAX_DIMS,
                     allow_unknown ? " or -1 (not known)" : "");
            return PRT_STATUS_PLUGIN_ERROR;
        }
        for (j = 0; j < d[i].nb; j++)
            if (!d[i].d[j]) {
                snprintf(err, cap, "layer \"%s\" (%s v%s): output %d %s %d is not set (NULL expression)", pl->layer,
                         pl->creator->name, pl->creator->version, (int)i, what, (int)j);
                return PRT_STATUS_PLUGIN_ERROR;
            }
    }
    return PRT_OK;
}

prt_status prt__shapeval_outputs(prt__plugin *pl, const prt_dims_expr *in, const prt_dims_expr *in_values,
                                 int32_t nb_in, prt_dims_expr *out, prt_dims_expr *out_values, int32_t nb_out,
                                 prt_expr_builder *eb, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_dims_expr *unknown = NULL;
    prt_status s = PRT_OK;
    int32_t i;
    const prt_blob_plugin_ops *bo = pl->style == PRT_STYLE_BLOB && pl->blob ? pl->blob->ops : NULL;
    const prt_plugin_build_ops *fo = pl->style == PRT_STYLE_FIELD ? build_ops(pl) : NULL;
    int v2 = SV_HAS(bo, prt_blob_plugin_ops, get_output_shapes_v2) ||
             SV_HAS(fo, prt_plugin_build_ops, get_output_shapes_v2);

    for (i = 0; i < nb_out; i++) {
        memset(&out_values[i], 0, sizeof out_values[i]);
        out_values[i].nb = PRT_NB_VALUES_UNKNOWN;
    }
    if (!v2) return prt__plugin_output_shapes(pl, in, nb_in, out, nb_out, eb, err, cap);
    if (!in_values) {
        unknown = prt__calloc((size_t)nb_in + 1, sizeof *unknown);
        if (!unknown) {
            snprintf(err, cap, "out of memory");
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < nb_in; i++) unknown[i].nb = PRT_NB_VALUES_UNKNOWN;
        in_values = unknown;
    }
    for (i = 0; i < nb_out; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].nb = -1; /* "not set" */
    }
    pmsg[0] = 0;
    prt__trace(pl, "get_output_shapes_v2");
    if (bo) s = bo->get_output_shapes_v2(pl->blob, in, in_values, nb_in, out, out_values, nb_out, eb, &m);
    else s = fo->get_output_shapes_v2(pl->field, in, in_values, nb_in, out, out_values, nb_out, eb, &m);
    prt__free(unknown);
    if (s != PRT_OK) {
        snprintf(err, cap, "layer \"%s\" (%s v%s): get_output_shapes_v2 failed: %s", pl->layer, pl->creator->name,
                 pl->creator->version, pmsg[0] ? pmsg : prt_status_str(s));
        return s > 0 && s < PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR;
    }
    if ((s = check_list(pl, "dims", out, nb_out, 0, err, cap)) != PRT_OK) return s;
    return check_list(pl, "values", out_values, nb_out, 1, err, cap);
}

int prt__shapeval_fits(prt_dtype dtype, const prt_dims *dims)
{
    int64_t n = prt_dims_volume(dims);
    return (dtype == PRT_DTYPE_I32 || dtype == PRT_DTYPE_I64) && dims->nb <= 1 && n >= 0 && n <= PRT_MAX_DIMS;
}

int64_t prt__shapeval_element(prt_dtype dtype, const void *data, int32_t k)
{
    if (dtype == PRT_DTYPE_I32) {
        int32_t v;
        memcpy(&v, (const int32_t *)data + k, sizeof v);
        return v;
    } else {
        int64_t v;
        memcpy(&v, (const int64_t *)data + k, sizeof v);
        return v;
    }
}

void prt__shapeval_store(prt_dtype dtype, void *data, const int64_t *v, int32_t n)
{
    int32_t k;
    for (k = 0; k < n; k++) {
        if (dtype == PRT_DTYPE_I32) {
            int32_t x = (int32_t)v[k];
            memcpy((int32_t *)data + k, &x, sizeof x);
        } else {
            memcpy((int64_t *)data + k, &v[k], sizeof v[k]);
        }
    }
}
