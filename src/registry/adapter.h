/*
 * registry/adapter.h - one interface over both plugin styles.
 *
 * prt_op (src/engine/op.c) and the engine (builder, runtime) drive plugins
 * only through these calls, so the lifecycle (docs/lifecycle.md) is written
 * once. Each call that reaches into the plugin is logged to the lifecycle
 * trace (prt__trace) with the layer name.
 *
 * Errors: functions returning prt_status write a message into err (cap
 * bytes) naming the layer and plugin; the adapter is unchanged on failure.
 */
#ifndef PLUGRT_REGISTRY_ADAPTER_H
#define PLUGRT_REGISTRY_ADAPTER_H

#include "plugrt/registry.h"

typedef struct prt__plugin {
    prt_plugin_style style;
    const prt_plugin_creator *creator;
    char *owner;      /* owned copy: who registered the creator */
    char *layer;      /* owned copy: layer name for messages and traces */
    prt_blob_plugin *blob;   /* style BLOB */
    prt_field_plugin *field; /* style FIELD */
    int initialized;  /* blob: initialize() succeeded */
    int attached;     /* attached to a context */
    int32_t tactic;   /* the tactic it runs (0: the plugin's default) */
} prt__plugin;

/* Validate `fields` against the creator's schema and create the plugin
 * (blob: create_blob; field: create_field with `phase`). */
prt_status prt__plugin_create(const prt_plugin_creator *c, const char *owner, const char *layer,
                              const prt_fields *fields, prt_phase phase, prt__plugin **out,
                              char *err, size_t cap);
/* Plugin record: u8 style, str name, str version, str namespace, str owner,
 * then for FIELD: u32 nb, per field {str name, u32 type, u64 count, payload
 * little-endian}; for BLOB: u64 len, bytes. The blob's length must equal what
 * the plugin reports. */
prt_status prt__plugin_write_record(prt__plugin *pl, prt_writer *w, char *err, size_t cap);
/* Reads one record, finds the creator in r (near misses in the message),
 * re-validates fields, re-creates the plugin (RUNTIME phase / deserialize). */
prt_status prt__plugin_read_record(prt_registry *r, prt_reader *rd, const char *layer,
                                   prt__plugin **out, char *err, size_t cap);

/* The record's body alone: the fields (field style) or the blob length and
 * bytes (blob style), as prt__plugin_write_record writes them after the
 * keys. */
prt_status prt__plugin_write_body(prt__plugin *pl, prt_writer *w, char *err, size_t cap);

int32_t prt__plugin_nb_outputs(const prt__plugin *pl);
prt_status prt__plugin_output_types(prt__plugin *pl, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                    int32_t nb_out, char *err, size_t cap);
prt_status prt__plugin_output_shapes(prt__plugin *pl, const prt_dims_expr *in, int32_t nb_in,
                                     prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb,
                                     char *err, size_t cap);
int prt__plugin_supports(prt__plugin *pl, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out);
prt_status prt__plugin_configure(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, char *err, size_t cap);
size_t prt__plugin_workspace(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                             const prt_dyn_tensor_desc *out, int32_t nb_out);
/* An unconfigured, unattached copy. */
prt_status prt__plugin_clone(const prt__plugin *pl, prt__plugin **out, char *err, size_t cap);
/* The per-context instance: blob style clones, then attach_to_context and
 * initialize; field style calls attach_to_context (which clones). */
prt_status prt__plugin_attach(prt__plugin *pl, prt_plugin_context *ctx, prt__plugin **out, char *err,
                              size_t cap);
/* Concrete shapes before enqueue (field: on_shape_change; blob: configure
 * with min = opt = max = the shapes). */
prt_status prt__plugin_shapes(prt__plugin *pl, const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out, char *err, size_t cap);
prt_status prt__plugin_enqueue(prt__plugin *pl, const prt_tensor_desc *in, const prt_tensor_desc *out,
                               const void *const *inputs, void *const *outputs, void *workspace,
                               prt_exec *ex);
/* ---- tactics (plugin.h: get_valid_tactics, get_tactic_name, set_tactic) ---- */

#define PRT__MAX_TACTICS 64
/* The tactics the plugin lists for these descriptors (the profile's
 * ranges) on `device`: field style get_valid_tactics_v2, else its
 * get_valid_tactics; blob style get_valid_tactics. ids has room for
 * PRT__MAX_TACTICS; *nb gets how many (0: none, or no member). Ids that are
 * not > 0, repeat, or are too many fail the call naming the layer. */
prt_status prt__plugin_tactics(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *ids,
                               int32_t *nb, char *err, size_t cap);
/* The plugin's name for a tactic, or NULL (no member, no name). Valid
 * until the next call on pl. */
const char *prt__plugin_tactic_name(prt__plugin *pl, int32_t tactic);
/* Record `tactic` on pl and, when it is not 0, call the plugin's
 * set_tactic (when it has one). Unchanged on failure. */
prt_status prt__plugin_set_tactic(prt__plugin *pl, int32_t tactic, char *err, size_t cap);
/* prt__plugin_attach, but the instance runs `tactic` (0: the plugin's
 * default) instead of pl's: blob style clone, set_tactic, attach_to_context,
 * initialize; field style attach_to_context, set_tactic. */
prt_status prt__plugin_attach_tactic(prt__plugin *pl, prt_plugin_context *ctx, int32_t tactic, prt__plugin **out,
                                     char *err, size_t cap);

/* terminate / detach as applicable, then the plugin's destroy. NULL ok. */
void prt__plugin_destroy(prt__plugin *pl);

/* Lifecycle trace: "layer: call" lines, on when PLUGRT_TRACE contains
 * "lifecycle" or after prt_set_trace(1). A callback (for tests) sees every
 * line. */
void prt__trace(const prt__plugin *pl, const char *call);

#endif
