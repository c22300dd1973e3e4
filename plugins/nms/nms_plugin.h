/*
 * nms/nms_plugin.h - helpers the three NMS plugin files share: reading and
 * checking fields, shape checks on expressions, dispatch to CPU or CUDA.
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

/* Run on the exec's device. `ws_size` is what the host allocated (SIZE_MAX:
 * trust that it is at least get_workspace_size for these shapes). Sets the
 * exec error on failure. */
prt_status prt__nms_dispatch(const char *plugin, const prt__nms_params *p, prt__nms_io *io,
                             void *ws, size_t ws_size, prt_exec *ex);

/* Workspace for both devices (the larger of the two). */
size_t prt__nms_workspace(const prt__nms_params *p);

#endif
