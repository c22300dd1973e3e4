/*
 * nms/batched_nms.c - "BatchedNMS_TRT" and "BatchedNMSDynamic_TRT" v1 (blob
 * style). Both take explicit-batch shapes: boxes [B, N, L, 4] with L = 1
 * (shareLocation) or numClasses, scores [B, N, C] or [B, N, C, 1].
 *
 * Blob (little-endian): u32 magic "BNMS", u32 version 1, i32 shareLocation,
 * backgroundLabelId, numClasses, topK, keepTopK, isNormalized, clipBoxes,
 * scoreBits, caffeSemantics, f32 scoreThreshold, iouThreshold, u32 dtype
 * (0 f32, 1 f16). Nothing else; every byte is checked on load.
 */
#include <math.h>
#include <stdio.h>

#include "nms_plugin.h"

#define BNMS_MAGIC 0x534d4e42u /* "BNMS" */
#define BNMS_BLOB_VERSION 1u
#define BNMS_BLOB_SIZE 56u

typedef struct bnms {
    prt_blob_plugin base;
    const char *name;
    int32_t share_location, background, num_classes, top_k, keep_top_k;
    int32_t is_normalized, clip_boxes, score_bits, caffe;
    float score_thr, iou_thr;
    prt_dtype dtype;
} bnms;

static const prt_blob_plugin_ops bnms_ops;

static prt_status bnms_output_types(const prt_blob_plugin *pp, const prt_dtype *in, int32_t nb_in,
                                    prt_dtype *out, int32_t nb_out, prt_msg *err)
{
    const bnms *p = (const bnms *)pp;
    if (nb_in != 2 || nb_out != 4) {
        prt_msg_set(err, "%s: expected 2 inputs and 4 outputs, got %d and %d", p->name, nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((in[0] != PRT_DTYPE_F32 && in[0] != PRT_DTYPE_F16) || in[1] != in[0]) {
        prt_msg_set(err, "%s: boxes and scores must both be f32 or both f16, got %s and %s", p->name,
                    prt_dtype_name(in[0]), prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = PRT_DTYPE_I32;
    out[1] = out[2] = out[3] = in[0];
    return PRT_OK;
}

/* Shape rules on concrete dims (-1 for unknown). */
static prt_status bnms_check_dims(const bnms *p, const prt_dims *bx, const prt_dims *sc, prt_msg *err)
{
    int64_t L = p->share_location ? 1 : p->num_classes;
    prt_status st;
    if (bx->nb != 4 || (bx->d[3] >= 0 && bx->d[3] != 4) || (bx->d[2] >= 0 && bx->d[2] != L)) {
        prt_msg_set(err, "%s: boxes must be [B, N, %lld, 4] (shareLocation=%d), got rank %d [%lld, %lld, %lld, %lld]",
                    p->name, (long long)L, p->share_location, bx->nb, (long long)bx->d[0],
                    (long long)bx->d[1], (long long)(bx->nb > 2 ? bx->d[2] : 0),
                    (long long)(bx->nb > 3 ? bx->d[3] : 0));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if ((st = prt__nms_check_scores_rank(p->name, sc, err)) != PRT_OK) return st;
    if (sc->d[2] >= 0 && sc->d[2] != p->num_classes) {
        prt_msg_set(err, "%s: numClasses is %d but scores have %lld classes (dim 2)", p->name,
                    p->num_classes, (long long)sc->d[2]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return prt__nms_check_same_bn(p->name, bx, sc, err);
}

static prt_status bnms_output_dims(prt_blob_plugin *pp, int32_t idx, const prt_dims_expr *in,
                                   int32_t nb_in, prt_expr_builder *eb, prt_dims_expr *out,
                                   prt_msg *err)
{
    bnms *p = (bnms *)pp;
    prt_dims bx, sc;
    prt_status st;
    if (nb_in != 2 || idx < 0 || idx > 3) {
        prt_msg_set(err, "%s: expected 2 inputs and output 0..3, got %d inputs, output %d", p->name,
                    nb_in, idx);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt__nms_dims_of(&in[0], eb, &bx);
    prt__nms_dims_of(&in[1], eb, &sc);
    if ((st = bnms_check_dims(p, &bx, &sc, err)) != PRT_OK) return st;
    prt__nms_det_output_dims(idx, &in[0], eb, p->keep_top_k, out);
    return PRT_OK;
}

static int bnms_supports(prt_blob_plugin *pp, int32_t pos, const prt_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out)
{
    (void)pp;
    if (nb_in != 2 || nb_out != 4 || pos < 0 || pos > 5) return 0;
    if (io[pos].format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].dtype == PRT_DTYPE_F32 || io[0].dtype == PRT_DTYPE_F16;
    if (pos == 2) return io[2].dtype == PRT_DTYPE_I32;
    return io[pos].dtype == io[0].dtype;
}

static void bnms_params(const bnms *p, const prt_dims *bx, prt__nms_params *q)
{
    memset(q, 0, sizeof *q);
    q->kind = PRT_NMS_BATCHED;
    q->fp16 = p->dtype == PRT_DTYPE_F16;
    q->B = bx->d[0];
    q->N = bx->d[1];
    q->C = p->num_classes;
    q->box_classes = p->share_location ? 1 : p->num_classes;
    q->box_mode = PRT_NMS_BOX_CORNERS;
    q->background = p->background;
    q->has_score_thr = 1;
    q->score_thr = p->score_thr;
    q->iou_thr = p->iou_thr;
    q->size_off = (!p->is_normalized && p->caffe) ? 1.0f : 0.0f;
    q->clip = p->clip_boxes && p->is_normalized;
    q->pre_cap = p->top_k;
    q->keep_cap = p->keep_top_k;
    q->out_cap = p->keep_top_k;
}

static prt_status bnms_configure(prt_blob_plugin *pp, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    bnms *p = (bnms *)pp;
    prt_status st;
    (void)out;
    if (nb_in != 2 || nb_out != 4) {
        prt_msg_set(err, "%s: expected 2 inputs and 4 outputs, got %d and %d", p->name, nb_in, nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((st = bnms_check_dims(p, &in[0].desc.dims, &in[1].desc.dims, err)) != PRT_OK) return st;
    if ((st = bnms_check_dims(p, &in[0].max, &in[1].max, err)) != PRT_OK) return st;
    if (in[0].desc.dtype != PRT_DTYPE_F32 && in[0].desc.dtype != PRT_DTYPE_F16) {
        prt_msg_set(err, "%s: boxes must be f32 or f16, got %s", p->name, prt_dtype_name(in[0].desc.dtype));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    p->dtype = in[0].desc.dtype;
    return PRT_OK;
}

static size_t bnms_workspace(const prt_blob_plugin *pp, const prt_tensor_desc *in, int32_t nb_in,
                             const prt_tensor_desc *out, int32_t nb_out)
{
    const bnms *p = (const bnms *)pp;
    prt__nms_params q;
    (void)out;
    (void)nb_out;
    if (nb_in != 2 || in[0].dims.nb != 4) return 0;
    bnms_params(p, &in[0].dims, &q);
    return prt__nms_workspace(&q);
}

static prt_status bnms_enqueue(prt_blob_plugin *pp, const prt_tensor_desc *in_desc,
                               const prt_tensor_desc *out_desc, const void *const *inputs,
                               void *const *outputs, void *ws, prt_exec *ex)
{
    bnms *p = (bnms *)pp;
    prt__nms_params q;
    prt__nms_io io;
    char msg[256];
    prt_msg m = {msg, sizeof msg};
    prt_status st;
    if (bnms_check_dims(p, &in_desc[0].dims, &in_desc[1].dims, &m) != PRT_OK ||
        in_desc[0].dtype != p->dtype || in_desc[1].dtype != p->dtype) {
        if (in_desc[0].dtype != p->dtype || in_desc[1].dtype != p->dtype)
            snprintf(msg, sizeof msg, "%s: configured for %s, enqueued with %s/%s", p->name,
                     prt_dtype_name(p->dtype), prt_dtype_name(in_desc[0].dtype),
                     prt_dtype_name(in_desc[1].dtype));
        return prt__nms_exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    }
    /* The outputs must hold exactly the rows keepTopK makes. */
    if ((st = prt__nms_det_check_outputs(p->name, out_desc, in_desc[0].dims.d[0], p->keep_top_k, "keepTopK",
                                         p->dtype, p->dtype, ex)) != PRT_OK)
        return st;
    bnms_params(p, &in_desc[0].dims, &q);
    prt__nms_det_io(&io, inputs, NULL, outputs);
    return prt__nms_dispatch(p->name, &q, &io, ws, SIZE_MAX, ex);
}

static void bnms_write(const void *pp, prt_writer *w)
{
    const bnms *p = (const bnms *)pp;
    prt_write_u32(w, BNMS_MAGIC);
    prt_write_u32(w, BNMS_BLOB_VERSION);
    prt_write_i32(w, p->share_location);
    prt_write_i32(w, p->background);
    prt_write_i32(w, p->num_classes);
    prt_write_i32(w, p->top_k);
    prt_write_i32(w, p->keep_top_k);
    prt_write_i32(w, p->is_normalized);
    prt_write_i32(w, p->clip_boxes);
    prt_write_i32(w, p->score_bits);
    prt_write_i32(w, p->caffe);
    prt_write_f32(w, p->score_thr);
    prt_write_f32(w, p->iou_thr);
    prt_write_u32(w, (uint32_t)p->dtype);
}

static size_t bnms_ser_size(const prt_blob_plugin *pp) { return prt__nms_blob_size(bnms_write, pp); }

static prt_status bnms_serialize(const prt_blob_plugin *pp, void *buf, size_t cap)
{
    return prt__nms_blob_serialize(bnms_write, pp, buf, cap);
}

static prt_status bnms_clone(const prt_blob_plugin *pp, prt_blob_plugin **out, prt_msg *err)
{
    return prt__nms_blob_clone(((const bnms *)pp)->name, pp, sizeof(bnms), out, err);
}

static const prt_blob_plugin_ops bnms_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = prt__nms_det_nb_outputs, .get_output_data_types = bnms_output_types,
    .get_output_dims = bnms_output_dims, .supports_format_combination = bnms_supports,
    .configure_plugin = bnms_configure, .get_workspace_size = bnms_workspace, .enqueue = bnms_enqueue,
    .get_serialization_size = bnms_ser_size, .serialize = bnms_serialize, .clone = bnms_clone,
    .destroy = prt__nms_blob_destroy,
};

/* Cross-field checks shared by create and deserialize. */
static prt_status bnms_validate(const bnms *p, prt_msg *err)
{
    if (p->keep_top_k > p->top_k) {
        prt_msg_set(err, "%s v1: keepTopK (%d) must be <= topK (%d)", p->name, p->keep_top_k, p->top_k);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (p->background >= p->num_classes) {
        prt_msg_set(err, "%s v1: backgroundLabelId (%d) must be -1 or a class below numClasses (%d)",
                    p->name, p->background, p->num_classes);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status bnms_finish(bnms *tmp, prt_blob_plugin **out, prt_msg *err)
{
    prt_status st = bnms_validate(tmp, err);
    if (st != PRT_OK) return st;
    return prt__nms_blob_new(tmp->name, tmp, sizeof *tmp, out, err);
}

static prt_status bnms_create(const prt_plugin_creator *c, const prt_fields *fc, prt_blob_plugin **out,
                              prt_msg *err)
{
    bnms t;
    const char *nm = c->name;
    prt_status st;
    memset(&t, 0, sizeof t);
    t.base.ops = &bnms_ops;
    t.name = nm;
    t.dtype = PRT_DTYPE_F32;
    if ((st = prt__nms_field_int(nm, fc, "shareLocation", 1, 0, 0, 1, &t.share_location, err)) ||
        (st = prt__nms_field_int(nm, fc, "backgroundLabelId", 1, 0, -1, INT32_MAX, &t.background, err)) ||
        (st = prt__nms_field_int(nm, fc, "numClasses", 1, 0, 1, INT32_MAX, &t.num_classes, err)) ||
        (st = prt__nms_field_int(nm, fc, "topK", 1, 0, 1, PRT_NMS_BATCHED_MAX_TOPK, &t.top_k, err)) ||
        (st = prt__nms_field_int(nm, fc, "keepTopK", 1, 0, 1, PRT_NMS_BATCHED_MAX_TOPK, &t.keep_top_k, err)) ||
        (st = prt__nms_field_float(nm, fc, "scoreThreshold", 1, 0, -INFINITY, 0, INFINITY, &t.score_thr, err)) ||
        (st = prt__nms_field_float(nm, fc, "iouThreshold", 1, 0, 0.0, 0, INFINITY, &t.iou_thr, err)) ||
        (st = prt__nms_field_int(nm, fc, "isNormalized", 0, 1, 0, 1, &t.is_normalized, err)) ||
        (st = prt__nms_field_int(nm, fc, "clipBoxes", 0, 1, 0, 1, &t.clip_boxes, err)) ||
        (st = prt__nms_field_int(nm, fc, "scoreBits", 0, 16, 1, 32, &t.score_bits, err)) ||
        (st = prt__nms_field_int(nm, fc, "caffeSemantics", 0, 1, 0, 1, &t.caffe, err)))
        return st;
    return bnms_finish(&t, out, err);
}

static prt_status bnms_deserialize(const prt_plugin_creator *c, const void *blob, size_t len,
                                   prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    bnms t;
    uint32_t magic, ver, dt;
    prt_status st;
    memset(&t, 0, sizeof t);
    t.base.ops = &bnms_ops;
    t.name = c->name;
    magic = prt_read_u32(&r);
    ver = prt_read_u32(&r);
    t.share_location = prt_read_i32(&r);
    t.background = prt_read_i32(&r);
    t.num_classes = prt_read_i32(&r);
    t.top_k = prt_read_i32(&r);
    t.keep_top_k = prt_read_i32(&r);
    t.is_normalized = prt_read_i32(&r);
    t.clip_boxes = prt_read_i32(&r);
    t.score_bits = prt_read_i32(&r);
    t.caffe = prt_read_i32(&r);
    t.score_thr = prt_read_f32(&r);
    t.iou_thr = prt_read_f32(&r);
    dt = prt_read_u32(&r);
    st = prt__nms_blob_check(c->name, &r, len, BNMS_BLOB_SIZE, magic, ver, BNMS_MAGIC, BNMS_BLOB_VERSION,
                             err);
    if (st != PRT_OK) return st;
    if ((t.share_location | t.is_normalized | t.clip_boxes | t.caffe) & ~1 || t.background < -1 ||
        t.num_classes < 1 || t.top_k < 1 || t.top_k > PRT_NMS_BATCHED_MAX_TOPK || t.keep_top_k < 1 ||
        t.score_bits < 1 || t.score_bits > 32 || isnan(t.score_thr) || !(t.iou_thr >= 0.0f) ||
        (dt != PRT_DTYPE_F32 && dt != PRT_DTYPE_F16)) {
        prt_msg_set(err, "%s v1: blob holds an out-of-range value (flags 0/1, topK 1..%d, "
                    "scoreBits 1..32, iouThreshold >= 0, dtype f32/f16)", c->name,
                    PRT_NMS_BATCHED_MAX_TOPK);
        return PRT_STATUS_BAD_FORMAT;
    }
    t.dtype = (prt_dtype)dt;
    st = bnms_finish(&t, out, err);
    return st == PRT_STATUS_INVALID_FIELD ? PRT_STATUS_BAD_FORMAT : st;
}

static const int32_t bnms_one = 1, bnms_sixteen = 16;

static const prt_field_schema bnms_schema[] = {
    {.name = "shareLocation", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1,
     .doc = "1: one box per anchor for all classes; 0: boxes per class"},
    {.name = "backgroundLabelId", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN, .min = -1, .doc = "class that never produces detections; -1: none"},
    {.name = "numClasses", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN, .min = 1, .doc = "number of classes C"},
    {.name = "topK", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = PRT_NMS_BATCHED_MAX_TOPK,
     .doc = "best candidates per class that enter NMS"},
    {.name = "keepTopK", .type = PRT_FIELD_INT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = PRT_NMS_BATCHED_MAX_TOPK,
     .doc = "detections per image after NMS (<= topK)"},
    {.name = "scoreThreshold", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = 1,
     .doc = "candidate iff score > threshold"},
    {.name = "iouThreshold", .type = PRT_FIELD_FLOAT32, .required = 1, .min_count = 1, .max_count = 1,
     .bounds = PRT_BOUND_MIN, .doc = "suppress iff IoU > threshold"},
    {.name = "isNormalized", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &bnms_one,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1, .doc = "1: coordinates in [0, 1]"},
    {.name = "clipBoxes", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &bnms_one,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1,
     .doc = "saturate output boxes to [0, 1] (only with isNormalized)"},
    {.name = "scoreBits", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &bnms_sixteen,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = 32,
     .doc = "accepted for compatibility; has no effect"},
    {.name = "caffeSemantics", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &bnms_one,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .max = 1,
     .doc = "pixel boxes: +1 on widths and heights"},
};

const prt_plugin_creator prt__nms_batched_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "BatchedNMS_TRT",
    .version = "1", .plugin_namespace = "", .style = PRT_STYLE_BLOB,
    .nb_fields = (int32_t)(sizeof bnms_schema / sizeof bnms_schema[0]), .fields = bnms_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = bnms_create,
    .deserialize_blob = bnms_deserialize,
    .doc = "Batched per-class NMS with topK/keepTopK (explicit batch shapes)",
};

const prt_plugin_creator prt__nms_batched_dynamic_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "BatchedNMSDynamic_TRT",
    .version = "1", .plugin_namespace = "", .style = PRT_STYLE_BLOB,
    .nb_fields = (int32_t)(sizeof bnms_schema / sizeof bnms_schema[0]), .fields = bnms_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = bnms_create,
    .deserialize_blob = bnms_deserialize, .doc = "Batched per-class NMS with topK/keepTopK",
};

PRT_REGISTER_CREATOR(prt__nms_batched_creator)
PRT_REGISTER_CREATOR(prt__nms_batched_dynamic_creator)
