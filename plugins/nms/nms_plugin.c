/*
 * nms/nms_plugin.c - field reading, shape, blob, dispatch and workspace
 * helpers shared by the NMS plugins.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nms_plugin.h"
#include "../plugin_alloc.h"

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

void prt__nms_dims_of(const prt_dims_expr *e, prt_expr_builder *eb, prt_dims *d)
{
    int32_t i;
    d->nb = e->nb;
    d->reserved_ = 0;
    for (i = 0; i < PRT_MAX_DIMS; i++) {
        int64_t v;
        d->d[i] = (i < e->nb && prt__nms_const(eb, e->d[i], &v)) ? v : -1;
    }
}

prt_status prt__nms_check_scores_rank(const char *plugin, const prt_dims *sc, prt_msg *err)
{
    if ((sc->nb != 3 && sc->nb != 4) || (sc->nb == 4 && sc->d[3] >= 0 && sc->d[3] != 1)) {
        prt_msg_set(err, "%s: scores must be [B, N, C] or [B, N, C, 1], got rank %d", plugin, sc->nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

prt_status prt__nms_check_same_bn(const char *plugin, const prt_dims *bx, const prt_dims *sc,
                                  prt_msg *err)
{
    if ((sc->d[0] >= 0 && bx->d[0] >= 0 && sc->d[0] != bx->d[0]) ||
        (sc->d[1] >= 0 && bx->d[1] >= 0 && sc->d[1] != bx->d[1])) {
        prt_msg_set(err, "%s: boxes [%lld, %lld, ...] and scores [%lld, %lld, ...] disagree on B or N",
                    plugin, (long long)bx->d[0], (long long)bx->d[1], (long long)sc->d[0],
                    (long long)sc->d[1]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

/* ---- the blob-style detection plugins ---------------------------------------- */

int32_t prt__nms_det_nb_outputs(const prt_blob_plugin *p)
{
    (void)p;
    return 4;
}

void prt__nms_det_output_dims(int32_t idx, const prt_dims_expr *boxes, prt_expr_builder *eb,
                              int32_t max_det, prt_dims_expr *out)
{
    out->reserved_ = 0;
    out->d[0] = boxes->d[0];
    if (idx == 0) {
        out->nb = 2;
        out->d[1] = eb->constant(eb, 1);
    } else {
        out->nb = idx == 1 ? 3 : 2;
        out->d[1] = eb->constant(eb, max_det);
        if (idx == 1) out->d[2] = eb->constant(eb, 4);
    }
}

prt_status prt__nms_det_check_outputs(const char *plugin, const prt_tensor_desc *out, int64_t B,
                                      int32_t max_det, const char *max_name, prt_dtype float_t,
                                      prt_dtype class_t, prt_exec *ex)
{
    static const char *const names[4] = {"num_detections", "detection_boxes", "detection_scores",
                                         "detection_classes"};
    char msg[512], a[128], b[128];
    int32_t i, j;
    for (i = 0; i < 4; i++) {
        prt_tensor_desc want;
        memset(&want, 0, sizeof want);
        want.dtype = i == 0 ? PRT_DTYPE_I32 : i == 3 ? class_t : float_t;
        want.dims.nb = i == 1 ? 3 : 2;
        want.dims.d[0] = B;
        want.dims.d[1] = i == 0 ? 1 : max_det;
        if (i == 1) want.dims.d[2] = 4;
        if (out[i].dims.nb == want.dims.nb && out[i].dtype == want.dtype) {
            for (j = 0; j < want.dims.nb; j++)
                if (out[i].dims.d[j] != want.dims.d[j]) break;
            if (j == want.dims.nb) continue;
        }
        snprintf(msg, sizeof msg,
                 "%s: output %d (%s) is %s %s, but the plugin writes %s %s (%s = %d rows per image); "
                 "nothing was written",
                 plugin, (int)i, names[i], prt_dtype_name(out[i].dtype),
                 prt_dims_str(&out[i].dims, a, sizeof a), prt_dtype_name(want.dtype),
                 prt_dims_str(&want.dims, b, sizeof b), max_name, (int)max_det);
        return prt__nms_exec_fail(ex, out[i].dtype != want.dtype ? PRT_STATUS_TYPE_MISMATCH
                                                                 : PRT_STATUS_SHAPE_MISMATCH, msg);
    }
    return PRT_OK;
}

void prt__nms_det_io(prt__nms_io *io, const void *const *inputs, const void *anchors,
                     void *const *outputs)
{
    memset(io, 0, sizeof *io);
    io->boxes = inputs[0];
    io->scores = inputs[1];
    io->anchors = anchors;
    io->num_det = (int32_t *)outputs[0];
    io->out_boxes = outputs[1];
    io->out_scores = outputs[2];
    io->out_classes = outputs[3];
}

size_t prt__nms_blob_size(prt__nms_write_fn write, const void *p)
{
    prt_writer w = prt_writer_init(NULL, 0);
    write(p, &w);
    return w.len;
}

prt_status prt__nms_blob_serialize(prt__nms_write_fn write, const void *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    write(p, &w);
    return w.failed ? PRT_STATUS_INVALID_ARGUMENT : PRT_OK;
}

prt_status prt__nms_blob_check(const char *plugin, const prt_reader *r, size_t len, size_t size,
                               uint32_t magic, uint32_t version, uint32_t want_magic,
                               uint32_t want_version, prt_msg *err)
{
    if (r->failed) {
        prt_msg_set(err, "%s v1: blob of %zu bytes is truncated (expected %zu)", plugin, len, size);
        return PRT_STATUS_TRUNCATED;
    }
    if (prt_reader_left(r) != 0) {
        prt_msg_set(err, "%s v1: blob has %zu trailing bytes (expected %zu bytes in all)", plugin,
                    prt_reader_left(r), size);
        return PRT_STATUS_BAD_FORMAT;
    }
    if (magic != want_magic || version != want_version) {
        prt_msg_set(err, "%s v1: blob header is 0x%08x v%u, expected 0x%08x v%u", plugin, magic, version,
                    want_magic, want_version);
        return PRT_STATUS_BAD_FORMAT;
    }
    return PRT_OK;
}

static prt_blob_plugin *blob_dup(const void *src, size_t size)
{
    void *p = prt_plugin_malloc(size);
    if (p) memcpy(p, src, size);
    return (prt_blob_plugin *)p;
}

prt_status prt__nms_blob_new(const char *plugin, const void *src, size_t size, prt_blob_plugin **out,
                             prt_msg *err)
{
    prt_blob_plugin *p = blob_dup(src, size);
    if (!p) {
        prt_msg_set(err, "%s v1: out of memory", plugin);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

prt_status prt__nms_blob_clone(const char *plugin, const void *src, size_t size,
                               prt_blob_plugin **out, prt_msg *err)
{
    prt_blob_plugin *p = blob_dup(src, size);
    if (!p) {
        prt_msg_set(err, "%s: out of memory cloning", plugin);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = p;
    return PRT_OK;
}

void prt__nms_blob_destroy(prt_blob_plugin *p) { prt_plugin_free(p); }

prt_status prt__nms_exec_fail(prt_exec *ex, prt_status s, const char *msg)
{
    if (ex->set_error) ex->set_error(ex, msg);
    return s;
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
        return prt__nms_exec_fail(ex, PRT_STATUS_CUDA_ERROR, msg);
    }
#endif
    snprintf(msg, sizeof msg, "%s: device %d is not supported by this build", plugin, (int)ex->device);
    return prt__nms_exec_fail(ex, PRT_STATUS_UNSUPPORTED, msg);
}
