/*
 * nms/efficient_nms.c - "EfficientNMS_TRT" v1 (blob style).
 * Inputs: boxes [B, N, 4] or [B, N, 1|C, 4], scores [B, N, C] or
 * [B, N, C, 1], optional anchors [1|B, N, 4]. Outputs: num_detections
 * [B, 1] i32, detection_boxes [B, M, 4], detection_scores [B, M],
 * detection_classes [B, M] i32.
 *
 * Blob (little-endian): u32 magic "ENMS", u32 version 1, f32
 * score_threshold, iou_threshold, i32 max_output_boxes, background_class,
 * score_activation, class_agnostic, box_coding, u32 dtype (0 f32, 1 f16),
 * u32 number of inputs (2, or 3 with anchors).
 */
#include <math.h>
#include <stdio.h>

#include "nms_plugin.h"

#define ENMS_MAGIC 0x534d4e45u /* "ENMS" */
#define ENMS_BLOB_VERSION 1u
#define ENMS_BLOB_SIZE 44u
#define ENMS_NAME "EfficientNMS_TRT"

typedef struct enms {
    prt_blob_plugin base;
    float score_thr, iou_thr;
    int32_t max_out, background, activation, agnostic, coding;
    int32_t nb_in; /* 2, or 3 with anchors (recorded by configure) */
    prt_dtype dtype;
} enms;

static prt_status enms_output_types(const prt_blob_plugin *pp, const prt_dtype *in, int32_t nb_in,
                                    prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    int32_t i;
    (void)pp;
    if ((nb_in != 2 && nb_in != 3) || nb_out != 4) {
        prt_msg_set(err, ENMS_NAME ": expected 2 or 3 inputs and 4 outputs, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < nb_in; i++)
        if ((in[i] != PRT_DTYPE_F32 && in[i] != PRT_DTYPE_F16) || in[i] != in[0]) {
            prt_msg_set(err, ENMS_NAME ": boxes, scores and anchors must all be f32 or all f16, "
                        "input %d is %s (input 0 is %s)", i, prt_dtype_name(in[i]), prt_dtype_name(in[0]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    out[0] = PRT_DTYPE_I32;
    out[1] = out[2] = in[0];
    out[3] = PRT_DTYPE_I32;
    return PRT_OK;
}

static prt_status enms_check_dims(const prt_dims *bx, const prt_dims *sc, const prt_dims *an,
                                  prt_msg *err)
{
    int64_t C = sc->nb >= 3 ? sc->d[2] : -1;
    prt_status st;
    if ((st = prt__nms_check_scores_rank(ENMS_NAME, sc, err)) != PRT_OK) return st;
    if ((bx->nb != 3 && bx->nb != 4) || (bx->d[bx->nb - 1] >= 0 && bx->d[bx->nb - 1] != 4) ||
        (bx->nb == 4 && bx->d[2] >= 0 && C >= 0 && bx->d[2] != 1 && bx->d[2] != C)) {
        prt_msg_set(err, ENMS_NAME ": boxes must be [B, N, 4], [B, N, 1, 4] or [B, N, C=%lld, 4], "
                    "got rank %d with last extents %lld, %lld", (long long)C, bx->nb,
                    (long long)(bx->nb >= 2 ? bx->d[bx->nb - 2] : 0),
                    (long long)(bx->nb >= 1 ? bx->d[bx->nb - 1] : 0));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((st = prt__nms_check_same_bn(ENMS_NAME, bx, sc, err)) != PRT_OK) return st;
    if (an && (an->nb != 3 || (an->d[2] >= 0 && an->d[2] != 4) ||
               (an->d[1] >= 0 && bx->d[1] >= 0 && an->d[1] != bx->d[1]) ||
               (an->d[0] >= 0 && bx->d[0] >= 0 && an->d[0] != 1 && an->d[0] != bx->d[0]))) {
        prt_msg_set(err, ENMS_NAME ": anchors must be [1, N, 4] or [B, N, 4] with N = %lld, got rank %d "
                    "[%lld, %lld, %lld]", (long long)bx->d[1], an->nb, (long long)an->d[0],
                    (long long)(an->nb > 1 ? an->d[1] : 0), (long long)(an->nb > 2 ? an->d[2] : 0));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (bx->d[1] >= 0 && C >= 0 && bx->d[1] * C >= (int64_t)UINT32_MAX) {
        prt_msg_set(err, ENMS_NAME ": N x C = %lld is too large (at most 2^32 - 2)",
                    (long long)(bx->d[1] * C));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status enms_output_dims(prt_blob_plugin *pp, int32_t idx, const prt_dims_expr *in,
                                   int32_t nb_in, prt_expr_builder *eb, prt_dims_expr *out,
                                   prt_msg *err)
{
    enms *p = (enms *)pp;
    prt_dims bx, sc, an;
    prt_status st;
    if ((nb_in != 2 && nb_in != 3) || idx < 0 || idx > 3) {
        prt_msg_set(err, ENMS_NAME ": expected 2 or 3 inputs and output 0..3, got %d inputs, output %d",
                    nb_in, idx);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt__nms_dims_of(&in[0], eb, &bx);
    prt__nms_dims_of(&in[1], eb, &sc);
    if (nb_in == 3) prt__nms_dims_of(&in[2], eb, &an);
    if ((st = enms_check_dims(&bx, &sc, nb_in == 3 ? &an : NULL, err)) != PRT_OK) return st;
    prt__nms_det_output_dims(idx, &in[0], eb, p->max_out, out);
    return PRT_OK;
}

static int enms_supports(prt_blob_plugin *pp, int32_t pos, const prt_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out)
{
    (void)pp;
    if ((nb_in != 2 && nb_in != 3) || nb_out != 4 || pos < 0 || pos >= nb_in + nb_out) return 0;
    if (io[pos].format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].dtype == PRT_DTYPE_F32 || io[0].dtype == PRT_DTYPE_F16;
    if (pos == nb_in || pos == nb_in + 3) return io[pos].dtype == PRT_DTYPE_I32;
    return io[pos].dtype == io[0].dtype;
}

static void enms_params(const enms *p, const prt_dims *bx, const prt_dims *sc, const prt_dims *an,
                        prt__nms_params *q)
{
    memset(q, 0, sizeof *q);
    q->kind = PRT_NMS_EFFICIENT;
    q->fp16 = p->dtype == PRT_DTYPE_F16;
    q->B = bx->d[0];
    q->N = bx->d[1];
    q->C = sc->d[2];
    q->box_classes = bx->nb == 4 ? (int32_t)bx->d[2] : 1;
    if (an) {
        q->box_mode = p->coding ? PRT_NMS_BOX_ANCHOR_CENTER : PRT_NMS_BOX_ANCHOR_CORNERS;
        q->anchors_batched = an->d[0] != 1;
    } else {
        q->box_mode = p->coding ? PRT_NMS_BOX_CENTER : PRT_NMS_BOX_CORNERS;
    }
    q->background = p->background;
    q->score_ge = 1;
    q->iou_ge = 1;
    q->has_score_thr = 1;
    if (p->activation) {
        /* Compare logits with the logit of the threshold. */
        double t = p->score_thr;
        q->score_thr = t <= 0.0 ? -INFINITY : (t >= 1.0 ? INFINITY : (float)log(t / (1.0 - t)));
    } else {
        q->score_thr = p->score_thr;
    }
    q->iou_thr = p->iou_thr;
    q->agnostic = p->agnostic;
    q->activation = p->activation;
    q->pre_cap = PRT_NMS_EFFICIENT_MAX_CANDIDATES;
    q->keep_cap = p->max_out;
    q->out_cap = p->max_out;
}

static prt_status enms_configure(prt_blob_plugin *pp, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    enms *p = (enms *)pp;
    prt_status st;
    int32_t i;
    (void)out;
    if ((nb_in != 2 && nb_in != 3) || nb_out != 4) {
        prt_msg_set(err, ENMS_NAME ": expected 2 or 3 inputs and 4 outputs, got %d and %d", nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((st = enms_check_dims(&in[0].desc.dims, &in[1].desc.dims, nb_in == 3 ? &in[2].desc.dims : NULL,
                              err)) != PRT_OK)
        return st;
    if ((st = enms_check_dims(&in[0].max, &in[1].max, nb_in == 3 ? &in[2].max : NULL, err)) != PRT_OK)
        return st;
    for (i = 0; i < nb_in; i++)
        if ((in[i].desc.dtype != PRT_DTYPE_F32 && in[i].desc.dtype != PRT_DTYPE_F16) ||
            in[i].desc.dtype != in[0].desc.dtype) {
            prt_msg_set(err, ENMS_NAME ": inputs must all be f32 or all f16, input %d is %s", i,
                        prt_dtype_name(in[i].desc.dtype));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    p->dtype = in[0].desc.dtype;
    p->nb_in = nb_in;
    return PRT_OK;
}

static size_t enms_workspace(const prt_blob_plugin *pp, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, int32_t nb_out)
{
    prt__nms_params q;
    (void)out;
    (void)nb_out;
    if (nb_in < 2 || in[1].dims.nb < 3) return 0;
    enms_params((const enms *)pp, &in[0].dims, &in[1].dims, nb_in == 3 ? &in[2].dims : NULL, &q);
    return prt__nms_workspace(&q);
}

static prt_status enms_enqueue(prt_blob_plugin *pp, const prt_tensor_desc *in_desc,
                               const prt_tensor_desc *out_desc, const void *const *inputs,
                               void *const *outputs, void *ws, prt_exec *ex)
{
    enms *p = (enms *)pp;
    prt__nms_params q;
    prt__nms_io io;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    const prt_dims *an = p->nb_in == 3 ? &in_desc[2].dims : NULL;
    prt_status st;
    /* enqueue does not pass the number of inputs: configure recorded it. */
    if (enms_check_dims(&in_desc[0].dims, &in_desc[1].dims, an, &m) != PRT_OK)
        return prt__nms_exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    if (in_desc[0].dtype != p->dtype || in_desc[1].dtype != p->dtype || (an && in_desc[2].dtype != p->dtype)) {
        snprintf(msg, sizeof msg, ENMS_NAME ": configured for %s inputs, enqueued with %s boxes and %s scores",
                 prt_dtype_name(p->dtype), prt_dtype_name(in_desc[0].dtype), prt_dtype_name(in_desc[1].dtype));
        return prt__nms_exec_fail(ex, PRT_STATUS_TYPE_MISMATCH, msg);
    }
    /* The outputs must hold exactly the rows max_output_boxes makes. */
    if ((st = prt__nms_det_check_outputs(ENMS_NAME, out_desc, in_desc[0].dims.d[0], p->max_out,
                                         "max_output_boxes", p->dtype, PRT_DTYPE_I32, ex)) != PRT_OK)
        return st;
    enms_params(p, &in_desc[0].dims, &in_desc[1].dims, an, &q);
    prt__nms_det_io(&io, inputs, an ? inputs[2] : NULL, outputs);
    return prt__nms_dispatch(ENMS_NAME, &q, &io, ws, SIZE_MAX, ex);
}

static void enms_write(const void *pp, prt_writer *w)
{
    const enms *p = (const enms *)pp;
    prt_write_u32(w, ENMS_MAGIC);
    prt_write_u32(w, ENMS_BLOB_VERSION);
    prt_write_f32(w, p->score_thr);
    prt_write_f32(w, p->iou_thr);
    prt_write_i32(w, p->max_out);
    prt_write_i32(w, p->background);
    prt_write_i32(w, p->activation);
    prt_write_i32(w, p->agnostic);
    prt_write_i32(w, p->coding);
    prt_write_u32(w, (uint32_t)p->dtype);
    prt_write_u32(w, (uint32_t)p->nb_in);
}

static size_t enms_ser_size(const prt_blob_plugin *pp) { return prt__nms_blob_size(enms_write, pp); }

static prt_status enms_serialize(const prt_blob_plugin *pp, void *buf, size_t cap)
{
    return prt__nms_blob_serialize(enms_write, pp, buf, cap);
}

static prt_status enms_clone(const prt_blob_plugin *pp, prt_blob_plugin **out, prt_msg *err)
{
    return prt__nms_blob_clone(ENMS_NAME, pp, sizeof(enms), out, err);
}

static const prt_blob_plugin_ops enms_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = prt__nms_det_nb_outputs, .get_output_data_types = enms_output_types,
    .get_output_dims = enms_output_dims, .supports_format_combination = enms_supports,
    .configure_plugin = enms_configure, .get_workspace_size = enms_workspace, .enqueue = enms_enqueue,
    .get_serialization_size = enms_ser_size, .serialize = enms_serialize, .clone = enms_clone,
    .destroy = prt__nms_blob_destroy,
};

static prt_status enms_finish(const enms *t, prt_blob_plugin **out, prt_msg *err)
{
    return prt__nms_blob_new(ENMS_NAME, t, sizeof *t, out, err);
}

static prt_status enms_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                              prt_msg *err)
{
    enms t; /* fresh defaults on every call; nothing is shared between plugins */
    prt_status st;
    (void)c;
    memset(&t, 0, sizeof t);
    t.base.ops = &enms_ops;
    t.dtype = PRT_DTYPE_F32;
    t.nb_in = 2;
    if ((st = prt__nms_field_float(ENMS_NAME, fc, "score_threshold", 1, 0.5, 0.0, 0, INFINITY, &t.score_thr, err)) ||
        (st = prt__nms_field_float(ENMS_NAME, fc, "iou_threshold", 1, 0.5, 0.0, 1, INFINITY, &t.iou_thr, err)) ||
        (st = prt__nms_field_int(ENMS_NAME, fc, "max_output_boxes", 1, 100, 1, INT32_MAX, &t.max_out, err)) ||
        (st = prt__nms_field_int(ENMS_NAME, fc, "background_class", 0, -1, INT32_MIN, INT32_MAX, &t.background, err)) ||
        (st = prt__nms_field_int(ENMS_NAME, fc, "score_activation", 0, 0, 0, 1, &t.activation, err)) ||
        (st = prt__nms_field_int(ENMS_NAME, fc, "class_agnostic", 0, 0, 0, 1, &t.agnostic, err)) ||
        (st = prt__nms_field_int(ENMS_NAME, fc, "box_coding", 0, 0, 0, 1, &t.coding, err)))
        return st;
    return enms_finish(&t, out, err);
}

static prt_status enms_deserialize(const prt_plugin_creator *c, const void *blob, size_t len,
                                   prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    enms t;
    uint32_t magic, ver, dt;
    prt_status st;
    (void)c;
    memset(&t, 0, sizeof t);
    t.base.ops = &enms_ops;
    magic = prt_read_u32(&r);
    ver = prt_read_u32(&r);
    t.score_thr = prt_read_f32(&r);
    t.iou_thr = prt_read_f32(&r);
    t.max_out = prt_read_i32(&r);
    t.background = prt_read_i32(&r);
    t.activation = prt_read_i32(&r);
    t.agnostic = prt_read_i32(&r);
    t.coding = prt_read_i32(&r);
    dt = prt_read_u32(&r);
    t.nb_in = (int32_t)prt_read_u32(&r);
    st = prt__nms_blob_check(ENMS_NAME, &r, len, ENMS_BLOB_SIZE, magic, ver, ENMS_MAGIC, ENMS_BLOB_VERSION,
                             err);
    if (st != PRT_OK) return st;
    if (!(t.score_thr >= 0.0f) || !(t.iou_thr > 0.0f) || t.max_out < 1 ||
        (t.activation | t.agnostic | t.coding) & ~1 || (dt != PRT_DTYPE_F32 && dt != PRT_DTYPE_F16) || (t.nb_in != 2 && t.nb_in != 3)) {
        prt_msg_set(err, ENMS_NAME " v1: blob holds an out-of-range value (score_threshold >= 0, "
                    "iou_threshold > 0, max_output_boxes >= 1, flags 0/1, dtype f32/f16, 2 or 3 inputs)");
        return PRT_STATUS_BAD_FORMAT;
    }
    t.dtype = (prt_dtype)dt;
    return enms_finish(&t, out, err);
}

static const int32_t enms_zero = 0, enms_minus_one = -1;

static const prt_field_schema enms_schema[] = {
    {.name = "score_threshold", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN, .doc = "candidate iff score >= threshold"},
    {.name = "iou_threshold", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN_EXCL, .doc = "suppress iff IoU >= threshold"},
    {.name = "max_output_boxes", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN_EXCL, .doc = "detections per image"},
    {.name = "background_class", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1,
     .default_data = &enms_minus_one, .default_count = 1, .doc = "class ignored entirely; -1: none"},
    {.name = "score_activation", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1,
     .default_data = &enms_zero, .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1,
     .doc = "1: scores are logits; outputs are sigmoid(score)"},
    {.name = "class_agnostic", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &enms_zero,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1, .doc = "1: suppress across classes"},
    {.name = "box_coding", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &enms_zero,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1,
     .doc = "0: corners [x1, y1, x2, y2]; 1: centre-size [xc, yc, w, h]"},
};

const prt_plugin_creator prt__nms_efficient_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = ENMS_NAME, .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_BLOB,
    .nb_fields = (int32_t)(sizeof enms_schema / sizeof enms_schema[0]), .fields = enms_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = enms_create,
    .deserialize_blob = enms_deserialize,
    .doc = "Class-aware or class-agnostic NMS over the top candidates of each image",
};

PRT_REGISTER_CREATOR(prt__nms_efficient_creator)
