/*
 * nms/onnx_nms.c - ONNX NonMaxSuppression (opsets 10 and 11) as the field
 * style plugin "NonMaxSuppression" v1.
 * Inputs: boxes [B, N, 4] f32, scores [B, C, N] f32, then optional
 * max_output_boxes_per_class (i64 scalar or [1]), iou_threshold and
 * score_threshold (f32 scalar or [1]); an input with no elements counts as
 * absent. Output: selected_indices [num_selected, 3] i64, whose extent is
 * data dependent (upper bound B*C*N) and reported from enqueue: on CUDA as a
 * device-side int64 (prt_exec.set_output_extent_device, no synchronisation)
 * when the host offers it, else through set_output_dims.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "nms_plugin.h"

#define ONMS_NAME "NonMaxSuppression"

typedef struct onms {
    prt_field_plugin base;
    int64_t center_point_box;
    int32_t nb_in;
    prt_field field; /* what get_fields_to_serialize hands out */
} onms;

static const prt_field_plugin_ops onms_ops;

static const char *onms_name(const prt_field_plugin *p) { (void)p; return ONMS_NAME; }
static const char *onms_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *onms_namespace(const prt_field_plugin *p) { (void)p; return ""; }
static int32_t onms_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static const prt_dtype onms_in_types[5] = {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_I64, PRT_DTYPE_F32,
                                           PRT_DTYPE_F32};
static const char *const onms_in_names[5] = {"boxes", "scores", "max_output_boxes_per_class",
                                             "iou_threshold", "score_threshold"};

static prt_status onms_output_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in,
                                    prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    int32_t i;
    (void)p;
    if (nb_in < 2 || nb_in > 5 || nb_out != 1) {
        prt_msg_set(err, ONMS_NAME ": expected 2 to 5 inputs and 1 output, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < nb_in; i++)
        if (in[i] != onms_in_types[i]) {
            prt_msg_set(err, ONMS_NAME ": input %d (%s) must be %s, got %s", i, onms_in_names[i],
                        prt_dtype_name(onms_in_types[i]), prt_dtype_name(in[i]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    out[0] = PRT_DTYPE_I64;
    return PRT_OK;
}

static prt_status onms_check_dims(const prt_dims *bx, const prt_dims *sc, const prt_dims *opt,
                                  int32_t nb_in, prt_msg *err)
{
    int32_t i;
    if (bx->nb != 3) {
        prt_msg_set(err, ONMS_NAME ": boxes must be [num_batches, spatial_dimension, 4], got rank %d", bx->nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (bx->d[2] >= 0 && bx->d[2] != 4) {
        prt_msg_set(err, ONMS_NAME ": boxes must be [num_batches, spatial_dimension, 4], got last extent %lld",
                    (long long)bx->d[2]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (sc->nb != 3) {
        prt_msg_set(err, ONMS_NAME ": scores must be [num_batches, num_classes, spatial_dimension], got rank %d",
                    sc->nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((bx->d[0] >= 0 && sc->d[0] >= 0 && bx->d[0] != sc->d[0]) ||
        (bx->d[1] >= 0 && sc->d[2] >= 0 && bx->d[1] != sc->d[2])) {
        prt_msg_set(err, ONMS_NAME ": boxes [%lld, %lld, 4] and scores [%lld, %lld, %lld] disagree on "
                    "num_batches or spatial_dimension", (long long)bx->d[0], (long long)bx->d[1],
                    (long long)sc->d[0], (long long)sc->d[1], (long long)sc->d[2]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 2; opt && i < nb_in; i++) {
        const prt_dims *d = &opt[i - 2];
        if (d->nb > 1 || (d->nb == 1 && d->d[0] > 1)) {
            prt_msg_set(err, ONMS_NAME ": input %d (%s) must be a scalar or [1], got rank %d", i,
                        onms_in_names[i], d->nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    return PRT_OK;
}

static prt_status onms_output_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in,
                                     prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb,
                                     prt_msg *err)
{
    prt_dims d[5];
    int32_t i;
    prt_status st;
    const prt_expr *upper;
    (void)p;
    if (nb_in < 2 || nb_in > 5 || nb_out != 1) {
        prt_msg_set(err, ONMS_NAME ": expected 2 to 5 inputs and 1 output, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < nb_in; i++) prt__nms_dims_of(&in[i], eb, &d[i]);
    if ((st = onms_check_dims(&d[0], &d[1], &d[2], nb_in, err)) != PRT_OK) return st;
    if (!eb->data_dependent) {
        prt_msg_set(err, ONMS_NAME ": the host offers no data-dependent extents");
        return PRT_STATUS_UNSUPPORTED;
    }
    /* At most every box of every (batch, class): B * C * N rows. */
    upper = eb->operation(eb, PRT_EXPR_PROD, in[0].d[0], in[1].d[1]);
    upper = eb->operation(eb, PRT_EXPR_PROD, upper, in[0].d[1]);
    out[0].nb = 2;
    out[0].reserved_ = 0;
    out[0].d[0] = eb->data_dependent(eb, upper);
    out[0].d[1] = eb->constant(eb, 3);
    if (!out[0].d[0] || !out[0].d[1]) {
        prt_msg_set(err, ONMS_NAME ": could not build the output shape expression");
        return PRT_STATUS_INTERNAL;
    }
    return PRT_OK;
}

static int onms_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out)
{
    (void)p;
    if (nb_in < 2 || nb_in > 5 || nb_out != 1 || pos < 0 || pos > nb_in) return 0;
    if (io[pos].desc.format != PRT_FORMAT_LINEAR) return 0;
    if (pos == nb_in) return io[pos].desc.dtype == PRT_DTYPE_I64;
    return io[pos].desc.dtype == onms_in_types[pos];
}

static prt_status onms_configure(prt_field_plugin *pp, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    onms *p = (onms *)pp;
    prt_dims opt[3];
    int32_t i;
    prt_status st;
    (void)out;
    if (nb_in < 2 || nb_in > 5 || nb_out != 1) {
        prt_msg_set(err, ONMS_NAME ": expected 2 to 5 inputs and 1 output, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 2; i < nb_in; i++) opt[i - 2] = in[i].max;
    if ((st = onms_check_dims(&in[0].max, &in[1].max, opt, nb_in, err)) != PRT_OK) return st;
    for (i = 0; i < nb_in; i++)
        if (in[i].desc.dtype != onms_in_types[i]) {
            prt_msg_set(err, ONMS_NAME ": input %d (%s) must be %s, got %s", i, onms_in_names[i],
                        prt_dtype_name(onms_in_types[i]), prt_dtype_name(in[i].desc.dtype));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    p->nb_in = nb_in;
    return PRT_OK;
}

static void onms_params(const onms *p, const prt_dims *bx, const prt_dims *sc, prt__nms_params *q)
{
    memset(q, 0, sizeof *q);
    q->kind = PRT_NMS_ONNX;
    q->B = bx->d[0];
    q->N = bx->d[1];
    q->C = sc->d[1];
    q->box_classes = 1;
    q->box_mode = p->center_point_box ? PRT_NMS_BOX_CENTER : PRT_NMS_BOX_CORNERS;
    q->background = -1;
    q->pre_cap = q->N;
    q->keep_cap = q->N;
}

static size_t onms_workspace(const prt_field_plugin *pp, const prt_dyn_tensor_desc *in, int32_t nb_in,
                             const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    prt__nms_params q;
    (void)out;
    (void)nb_out;
    if (nb_in < 2 || in[0].max.nb != 3 || in[1].max.nb != 3) return 0;
    onms_params((const onms *)pp, &in[0].max, &in[1].max, &q);
    return prt__nms_workspace(&q);
}

/* Does the host offer set_output_extent_device (member covered and set)? */
static int onms_has_extent_device(const prt_exec *ex)
{
    return ex->struct_size >= offsetof(prt_exec, set_output_extent_device) + sizeof ex->set_output_extent_device &&
           ex->set_output_extent_device != NULL;
}

static int onms_present(const prt_tensor_desc *d, const void *const *inputs, int32_t i, int32_t nb_in)
{
    return i < nb_in && inputs[i] != NULL && prt_dims_volume(&d[i].dims) > 0;
}

static prt_status onms_enqueue(prt_field_plugin *pp, const prt_tensor_desc *in_desc,
                               const prt_tensor_desc *out_desc, const void *const *inputs,
                               void *const *outputs, void *ws, prt_exec *ex)
{
    onms *p = (onms *)pp;
    prt__nms_params q;
    prt__nms_io io;
    prt_dims od;
    prt_dims opt[3];
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    int32_t i;
    prt_status st;
    (void)out_desc;
    for (i = 2; i < p->nb_in; i++) opt[i - 2] = in_desc[i].dims;
    if (onms_check_dims(&in_desc[0].dims, &in_desc[1].dims, opt, p->nb_in, &m) != PRT_OK)
        return prt__nms_exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    onms_params(p, &in_desc[0].dims, &in_desc[1].dims, &q);
    memset(&io, 0, sizeof io);
    io.boxes = inputs[0];
    io.scores = inputs[1];
    io.max_per_class = onms_present(in_desc, inputs, 2, p->nb_in) ? (const int64_t *)inputs[2] : NULL;
    io.iou_thr = onms_present(in_desc, inputs, 3, p->nb_in) ? (const float *)inputs[3] : NULL;
    io.score_thr = onms_present(in_desc, inputs, 4, p->nb_in) ? (const float *)inputs[4] : NULL;
    io.selected = (int64_t *)outputs[0];
    /* On CUDA the count stays on the device when the host can read it from
     * there; only an older host makes the run wait for it. */
    io.count_on_device = ex->device == PRT_DEVICE_CUDA && onms_has_extent_device(ex);
    if (!io.count_on_device && !ex->set_output_dims)
        return prt__nms_exec_fail(ex, PRT_STATUS_UNSUPPORTED,
                                  ONMS_NAME ": the host cannot take data-dependent output dims");
    st = prt__nms_dispatch(ONMS_NAME, &q, &io, ws, SIZE_MAX, ex);
    if (st != PRT_OK) return st;
    if (io.count_on_device) {
        if (!io.dev_count)
            return prt__nms_exec_fail(ex, PRT_STATUS_INTERNAL,
                                      ONMS_NAME ": internal error: the run left no device count");
        return ex->set_output_extent_device(ex, 0, 0, io.dev_count);
    }
    memset(&od, 0, sizeof od);
    od.nb = 2;
    od.d[0] = io.nb_selected;
    od.d[1] = 3;
    return ex->set_output_dims(ex, 0, &od);
}

static prt_status onms_make(int64_t cpb, int32_t nb_in, prt_field_plugin **out, prt_msg *err)
{
    onms *p = (onms *)calloc(1, sizeof *p);
    if (!p) {
        prt_msg_set(err, ONMS_NAME " v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    p->base.ops = &onms_ops;
    p->center_point_box = cpb;
    p->nb_in = nb_in;
    *out = &p->base;
    return PRT_OK;
}

static prt_status onms_attach(prt_field_plugin *pp, prt_plugin_context *ctx, prt_field_plugin **out,
                              prt_msg *err)
{
    const onms *p = (const onms *)pp;
    (void)ctx;
    return onms_make(p->center_point_box, p->nb_in, out, err);
}

/* A plugin re-created from a plan is not configured: the input count of
 * the coming runs arrives here. */
static prt_status onms_shape_change(prt_field_plugin *pp, const prt_tensor_desc *in, int32_t nb_in,
                                    const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)in; (void)out;
    if (nb_in < 2 || nb_in > 5 || nb_out != 1) {
        prt_msg_set(err, ONMS_NAME ": expected 2 to 5 inputs and 1 output, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    ((onms *)pp)->nb_in = nb_in;
    return PRT_OK;
}

static prt_status onms_fields(prt_field_plugin *pp, prt_fields *out, prt_msg *err)
{
    onms *p = (onms *)pp;
    (void)err;
    p->field.name = "center_point_box";
    p->field.data = &p->center_point_box;
    p->field.type = PRT_FIELD_INT64;
    p->field.reserved_ = 0;
    p->field.count = 1;
    out->fields = &p->field;
    out->nb = 1;
    out->reserved_ = 0;
    return PRT_OK;
}

static prt_status onms_clone(const prt_field_plugin *pp, prt_field_plugin **out, prt_msg *err)
{
    const onms *p = (const onms *)pp;
    return onms_make(p->center_point_box, p->nb_in, out, err);
}

static void onms_destroy(prt_field_plugin *p) { free(p); }

static const prt_plugin_core_ops onms_core = {sizeof(prt_plugin_core_ops), PRT_ABI_VERSION, onms_name,
                                              onms_version, onms_namespace};
static const prt_plugin_build_ops onms_build = {
    sizeof(prt_plugin_build_ops), PRT_ABI_VERSION, onms_nb_outputs, onms_output_types,
    onms_output_shapes, onms_supports, onms_configure, onms_workspace, NULL};
static const prt_plugin_runtime_ops onms_runtime = {sizeof(prt_plugin_runtime_ops), PRT_ABI_VERSION,
                                                    NULL, onms_shape_change, onms_enqueue, onms_attach,
                                                    onms_fields};
static const prt_field_plugin_ops onms_ops = {sizeof(prt_field_plugin_ops), PRT_ABI_VERSION, &onms_core,
                                              &onms_build, &onms_runtime, onms_clone, onms_destroy};

static prt_status onms_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                              prt_field_plugin **out, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, "center_point_box");
    int64_t v = 0;
    (void)c;
    (void)phase;
    if (f && (f->count != 1 || prt_field_get_i64(f, 0, &v) != 0)) {
        prt_msg_set(err, ONMS_NAME " v1: field \"center_point_box\" needs one integer, got %lld "
                    "element(s) of type %s", (long long)f->count, prt_field_type_name(f->type));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (v != 0 && v != 1) {
        prt_msg_set(err, ONMS_NAME " v1: field \"center_point_box\" must be 0 or 1, got %lld", (long long)v);
        return PRT_STATUS_INVALID_FIELD;
    }
    return onms_make(v, 5, out, err);
}

static const int64_t onms_zero = 0;
static const prt_field_schema onms_schema[] = {
    {"center_point_box", PRT_FIELD_INT64, 0, 1, 1, &onms_zero, 1, PRT_BOUND_MIN | PRT_BOUND_MAX, 0, 0, 1,
     "0: [y1, x1, y2, x2] corners; 1: [x_center, y_center, width, height]"},
};

const prt_plugin_creator prt__nms_onnx_creator = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, ONMS_NAME, "1", "", PRT_STYLE_FIELD, 1, onms_schema,
    sizeof(prt_field_schema), 0, NULL, NULL, onms_create,
    "ONNX NonMaxSuppression (opsets 10 and 11): selected (batch, class, box) rows", NULL};

PRT_REGISTER_CREATOR(prt__nms_onnx_creator)
