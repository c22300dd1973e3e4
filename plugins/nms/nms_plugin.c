/*
 * nms/nms_plugin.c - field reading, dispatch and workspace helpers shared by
 * the NMS plugins.
 */
#include <math.h>
#include <stdio.h>

#include "nms_plugin.h"

prt_status prt__nms_field_int(const char *plugin, const prt_fields *fc, const char *name, int required,
                              int64_t dflt, int64_t lo, int64_t hi, int32_t *out, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, name);
    int64_t v;
    if (!f) {
        if (required) {
            prt_msg_set(err, "%s v1: required field \"%s\" is missing", plugin, name);
            return PRT_STATUS_INVALID_FIELD;
        }
        v = dflt;
    } else {
        if (f->count != 1 || prt_field_get_i64(f, 0, &v) != 0) {
            prt_msg_set(err, "%s v1: field \"%s\" needs one integer, got %lld element(s) of type %s",
                        plugin, name, (long long)f->count, prt_field_type_name(f->type));
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    if (v < lo || v > hi) {
        prt_msg_set(err, "%s v1: field \"%s\" must be in [%lld, %lld], got %lld", plugin, name,
                    (long long)lo, (long long)hi, (long long)v);
        return PRT_STATUS_INVALID_FIELD;
    }
    *out = (int32_t)v;
    return PRT_OK;
}

prt_status prt__nms_field_float(const char *plugin, const prt_fields *fc, const char *name,
                                int required, double dflt, double lo, int lo_excl, double hi,
                                float *out, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, name);
    double v;
    if (!f) {
        if (required) {
            prt_msg_set(err, "%s v1: required field \"%s\" is missing", plugin, name);
            return PRT_STATUS_INVALID_FIELD;
        }
        v = dflt;
    } else if (f->count != 1 || prt_field_get_f64(f, 0, &v) != 0) {
        prt_msg_set(err, "%s v1: field \"%s\" needs one number, got %lld element(s) of type %s",
                    plugin, name, (long long)f->count, prt_field_type_name(f->type));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (isnan(v) || (lo_excl ? !(v > lo) : !(v >= lo)) || !(v <= hi)) {
        if (isinf(hi))
            prt_msg_set(err, "%s v1: field \"%s\" must be %s %g, got %g", plugin, name,
                        lo_excl ? ">" : ">=", lo, v);
        else
            prt_msg_set(err, "%s v1: field \"%s\" must be %s %g and <= %g, got %g", plugin, name,
                        lo_excl ? ">" : ">=", lo, hi, v);
        return PRT_STATUS_INVALID_FIELD;
    }
    *out = (float)v;
    return PRT_OK;
}

int prt__nms_const(prt_expr_builder *eb, const prt_expr *e, int64_t *v)
{
    return eb && e && eb->get_constant && eb->get_constant(eb, e, v);
}

size_t prt__nms_workspace(const prt__nms_params *p)
{
    size_t w = prt__nms_cpu_workspace(p);
#ifdef PLUGRT_HAVE_CUDA
    size_t g = prt__nms_cuda_workspace(p);
    if (g > w) w = g;
#endif
    return w;
}

prt_status prt__nms_dispatch(const char *plugin, const prt__nms_params *p, prt__nms_io *io,
                             void *ws, size_t ws_size, prt_exec *ex)
{
    char msg[256];
    if (ex->device == PRT_DEVICE_CPU) return prt__nms_cpu_run(p, io, ws, ex);
#ifdef PLUGRT_HAVE_CUDA
    if (ex->device == PRT_DEVICE_CUDA) {
        int e = prt__nms_cuda_run(p, io, ws, ws_size, ex->cuda_stream);
        if (e == 0) return PRT_OK;
        snprintf(msg, sizeof msg, "%s: CUDA launch failed: %s", plugin, prt__nms_cuda_error_string(e));
        if (ex->set_error) ex->set_error(ex, msg);
        return PRT_STATUS_CUDA_ERROR;
    }
#endif
    snprintf(msg, sizeof msg, "%s: device %d is not supported by this build", plugin, (int)ex->device);
    if (ex->set_error) ex->set_error(ex, msg);
    return PRT_STATUS_UNSUPPORTED;
}
