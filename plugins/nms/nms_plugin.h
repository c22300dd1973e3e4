/*
 * nms/nms_plugin.h - helpers the three NMS plugin files share: reading and
 * checking fields, shape checks on expressions, the four detection outputs
 * of the blob-style plugins, blob headers and copies, dispatch to CPU or
 * CUDA.
 */
#ifndef PLUGRT_NMS_PLUGIN_H
#define PLUGRT_NMS_PLUGIN_H

#include "nms.h"

/* Integer field `name`: absent -> `dflt` unless `required`; must lie in
 * [lo, hi]. Returns PRT_OK or INVALID_FIELD with a message naming the plugin. */
prt_status prt__nms_field_int(const char *plugin, const prt_fields *fc, const char *name, int required,
                              int64_t dflt, int64_t lo, int64_t hi, int32_t *out, prt_msg *err);
/* Float field; `lo_excl` makes the lower bound exclusive. NaN is refused. */
prt_status prt__nms_field_float(const char *plugin, const prt_fields *fc, const char *name,
                                int required, double dflt, double lo, int lo_excl, double hi,
                                float *out, prt_msg *err);

/* 1 and *v set when e is a known constant. */
int prt__nms_const(prt_expr_builder *eb, const prt_expr *e, int64_t *v);
/* The extents of `e` that are known constants; -1 for the others (and for
 * every slot past e->nb). */
void prt__nms_dims_of(const prt_dims_expr *e, prt_expr_builder *eb, prt_dims *d);

/* Scores must be [B, N, C] or [B, N, C, 1] (-1 extents pass). */
prt_status prt__nms_check_scores_rank(const char *plugin, const prt_dims *sc, prt_msg *err);
/* Boxes and scores agree on B (dim 0) and N (dim 1) where both are known. */
prt_status prt__nms_check_same_bn(const char *plugin, const prt_dims *bx, const prt_dims *sc,
                                  prt_msg *err);

/* ---- the blob-style detection plugins (BatchedNMS, EfficientNMS) ----------- */

/* Outputs num_detections [B, 1] i32, detection_boxes [B, M, 4],
 * detection_scores [B, M], detection_classes [B, M]. */
int32_t prt__nms_det_nb_outputs(const prt_blob_plugin *p);
/* Expression of output `idx` (0..3): B is dim 0 of `boxes`, M is `max_det`. */
void prt__nms_det_output_dims(int32_t idx, const prt_dims_expr *boxes, prt_expr_builder *eb,
                              int32_t max_det, prt_dims_expr *out);
/* At enqueue: the four output descriptors must be exactly what the plugin
 * writes - num_detections [B, 1] i32, detection_boxes [B, M, 4] and
 * detection_scores [B, M] in `float_t`, detection_classes [B, M] in
 * `class_t`, with M = `max_det` (named `max_name` in the message). Otherwise
 * reports through ex->set_error and returns SHAPE_MISMATCH (or
 * TYPE_MISMATCH); nothing is written. */
prt_status prt__nms_det_check_outputs(const char *plugin, const prt_tensor_desc *out, int64_t B,
                                      int32_t max_det, const char *max_name, prt_dtype float_t,
                                      prt_dtype class_t, prt_exec *ex);
/* io for those outputs from the enqueue arrays; `anchors` may be NULL. */
void prt__nms_det_io(prt__nms_io *io, const void *const *inputs, const void *anchors,
                     void *const *outputs);

/* A plugin's blob writer; called once to count (w->buf NULL), once to write. */
typedef void (*prt__nms_write_fn)(const void *p, prt_writer *w);
size_t prt__nms_blob_size(prt__nms_write_fn write, const void *p);
/* INVALID_ARGUMENT when `cap` is too small. */
prt_status prt__nms_blob_serialize(prt__nms_write_fn write, const void *p, void *buf, size_t cap);
/* After reading a fixed-size blob of `size` bytes from `r` (given `len`
 * bytes): TRUNCATED when it ran out, BAD_FORMAT for trailing bytes or a
 * header other than want_magic / want_version. */
prt_status prt__nms_blob_check(const char *plugin, const prt_reader *r, size_t len, size_t size,
                               uint32_t magic, uint32_t version, uint32_t want_magic,
                               uint32_t want_version, prt_msg *err);
/* A heap copy of the `size`-byte plugin object `src`, whose first member is
 * its prt_blob_plugin: _new for create / deserialize, _clone for clone (they
 * differ in the out-of-memory message). Freed by prt__nms_blob_destroy. */
prt_status prt__nms_blob_new(const char *plugin, const void *src, size_t size, prt_blob_plugin **out,
                             prt_msg *err);
prt_status prt__nms_blob_clone(const char *plugin, const void *src, size_t size,
                               prt_blob_plugin **out, prt_msg *err);
void prt__nms_blob_destroy(prt_blob_plugin *p);

/* Report `msg` through the exec (when it takes errors) and return `s`. */
prt_status prt__nms_exec_fail(prt_exec *ex, prt_status s, const char *msg);

/* Run on the exec's device. `ws_size` is what the host allocated (SIZE_MAX:
 * trust that it is at least get_workspace_size for these shapes). Sets the
 * exec error on failure. */
prt_status prt__nms_dispatch(const char *plugin, const prt__nms_params *p, prt__nms_io *io,
                             void *ws, size_t ws_size, prt_exec *ex);

/* Workspace for both devices (the larger of the two). */
size_t prt__nms_workspace(const prt__nms_params *p);

#endif
