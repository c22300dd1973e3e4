/*
 * plugrt/plugin.h - the plugin ABI. The only header a plugin needs.
 *
 * Contract
 *   Versioning (docs/plugin-abi.md): every ops struct and every host table
 *   opens with `uint32_t struct_size; uint32_t abi_version;`. Members are only
 *   ever appended. A reader uses a member only when `struct_size` covers it,
 *   and a NULL function member means "optional: use the default". A changed
 *   signature becomes a new `_v2` member; the old one stays. The layouts of
 *   abi_version 1 are frozen by the _Static_asserts at the end of this file.
 *
 *   Ownership: whoever creates an object destroys it. A plugin object is
 *   created by its creator (create / deserialize) or by clone / attach, and is
 *   freed only by its own `destroy`. Pointers a host passes into a plugin call
 *   are borrowed for the duration of that call unless stated otherwise.
 *   Pointers a plugin returns (names, field lists) stay valid until the next
 *   call on the same object or its destroy.
 *
 *   Errors: fallible calls return prt_status and may write a message into the
 *   prt_msg they are given ("what was expected, what was found"). enqueue
 *   reports through prt_exec.set_error. No plugin call may exit or abort.
 *
 *   Threads: the host never calls into one plugin object from two threads at
 *   once. Different objects (clones) may run concurrently. Creators must be
 *   stateless: create calls may run concurrently on one creator.
 *
 *   Two styles, both first-class:
 *     blob style  (prt_blob_plugin)  - serialize/deserialize an opaque blob,
 *                                      initialize/terminate, clone.
 *     field style (prt_field_plugin) - core/build/runtime capabilities; the
 *                                      plugin is saved as its fields and
 *                                      re-created from them.
 */
#ifndef PLUGRT_PLUGIN_H
#define PLUGRT_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "blob.h"
#include "field.h"
#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version of this header. A plugin library built against a header whose
 * PRT_ABI_VERSION is greater than the host's is refused. */
#define PRT_ABI_VERSION 3u

typedef enum prt_plugin_style {
    PRT_STYLE_BLOB = 1,  /* TensorRT IPluginV2DynamicExt-like */
    PRT_STYLE_FIELD = 2  /* TensorRT IPluginV3-like */
} prt_plugin_style;

typedef enum prt_device {
    PRT_DEVICE_CPU = 0,
    PRT_DEVICE_CUDA = 1
} prt_device;

typedef enum prt_phase {
    PRT_PHASE_BUILD = 0,  /* created from user fields to build an engine */
    PRT_PHASE_RUNTIME = 1 /* re-created from a plan's fields to run it */
} prt_phase;

/* ------------------------------------------------------------------------ */
/* Symbolic shapes                                                          */
/* ------------------------------------------------------------------------ */

/* An expression over input extents, owned by the builder that made it and
 * valid until the shape call that received the builder returns. */
typedef struct prt_expr prt_expr;

typedef enum prt_expr_op {
    PRT_EXPR_SUM = 0,
    PRT_EXPR_PROD = 1,
    PRT_EXPR_MAX = 2,
    PRT_EXPR_MIN = 3,
    PRT_EXPR_SUB = 4,
    PRT_EXPR_EQUAL = 5,     /* 1 if equal, else 0 */
    PRT_EXPR_LESS = 6,      /* 1 if a < b, else 0 */
    PRT_EXPR_FLOOR_DIV = 7, /* floor(a / b); b == 0 makes the shape invalid */
    PRT_EXPR_CEIL_DIV = 8
} prt_expr_op;

typedef struct prt_expr_builder prt_expr_builder;
struct prt_expr_builder {
    uint32_t struct_size;
    uint32_t abi_version;
    const prt_expr *(*constant)(prt_expr_builder *eb, int64_t value);
    const prt_expr *(*operation)(prt_expr_builder *eb, prt_expr_op op, const prt_expr *a,
                                 const prt_expr *b);
    /* 1 and *value set if `e` is known without concrete input shapes. */
    int (*get_constant)(prt_expr_builder *eb, const prt_expr *e, int64_t *value);
    /* An extent known only after execution (data-dependent output such as the
     * number of NMS selections). `upper` bounds it and sizes the buffer; the
     * plugin reports the actual value from enqueue with
     * prt_exec.set_output_dims. */
    const prt_expr *(*data_dependent)(prt_expr_builder *eb, const prt_expr *upper);
    void *host_;
};

typedef struct prt_dims_expr {
    int32_t nb;
    int32_t reserved_;
    const prt_expr *d[PRT_MAX_DIMS];
} prt_dims_expr;

/* Shape values: the elements of a small int32/int64 tensor (0-D or 1-D, at
 * most PRT_MAX_DIMS elements) as expressions, held in a prt_dims_expr whose
 * nb is the number of elements (1 for a 0-D tensor) and d[k] element k.
 * nb == PRT_NB_VALUES_UNKNOWN: the values are not known before the run (the
 * tensor is computed on the device, or is not small). */
#define PRT_NB_VALUES_UNKNOWN (-1)

/* ------------------------------------------------------------------------ */
/* Execution and per-context resources (provided by the host)               */
/* ------------------------------------------------------------------------ */

typedef struct prt_exec prt_exec;
typedef void (*prt_range_fn)(void *arg, int64_t begin, int64_t end);

/* What a plugin gets at enqueue besides its tensors. */
struct prt_exec {
    uint32_t struct_size;
    uint32_t abi_version;
    prt_device device;
    int32_t cuda_device;  /* device ordinal when device == CUDA */
    void *cuda_stream;    /* cudaStream_t when device == CUDA, else NULL */
    int32_t nb_threads;   /* CPU: threads parallel_for may use (>= 1) */
    int32_t reserved_;
    /* CPU: run fn over [0, n) split into chunks of at least `grain` items on
     * the context's thread pool; returns when all chunks are done. */
    void (*parallel_for)(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg);
    /* Say why enqueue is about to return an error. Copied; may be called once. */
    void (*set_error)(prt_exec *ex, const char *msg);
    /* For outputs declared with data_dependent extents: the actual dims. */
    prt_status (*set_output_dims)(prt_exec *ex, int32_t output_index, const prt_dims *dims);
    void *host_;
    /* Appended in abi_version 1 (read only when struct_size covers it).
     * CUDA, without a host sync in the plugin: extent `dim` of data-dependent
     * output `output_index` is the int64_t that this enqueue's kernels write at
     * `device_extent` (device memory that stays untouched until the host's
     * copy, queued on the stream right after enqueue returns, has run: the
     * workspace qualifies). The other dims are those of the upper bound. The
     * host reads the value when it next needs the shape. NULL: not offered;
     * use set_output_dims. */
    prt_status (*set_output_extent_device)(prt_exec *ex, int32_t output_index, int32_t dim,
                                           const int64_t *device_extent);
};

/* A per-execution-context object shared by all plugins of that context under
 * a key (one cuBLAS handle per context, say). The first acquire of a key
 * calls `create`; each acquire takes a reference; the last release calls
 * `destroy`. */
typedef prt_status (*prt_resource_create_fn)(void *user, prt_device device, void **out,
                                             prt_msg *err);
typedef void (*prt_resource_destroy_fn)(void *user, void *resource);

typedef struct prt_plugin_context prt_plugin_context;
struct prt_plugin_context {
    uint32_t struct_size;
    uint32_t abi_version;
    prt_device device;
    int32_t cuda_device;
    prt_status (*acquire)(prt_plugin_context *ctx, const char *key, prt_resource_create_fn create,
                          prt_resource_destroy_fn destroy, void *user, void **out, prt_msg *err);
    void (*release)(prt_plugin_context *ctx, const char *key);
    void (*log)(prt_plugin_context *ctx, prt_severity sev, const char *msg);
    void *host_;
};

/* ------------------------------------------------------------------------ */
/* Optional inputs and outputs                                              */
/* ------------------------------------------------------------------------ */

/* An absent optional input (an empty name in the network): its pointer at
 * enqueue is NULL and its descriptors say absent - dtype PRT_DTYPE_ABSENT
 * (tensor.h) and dims.nb == PRT_NB_DIMS_ABSENT (min/opt/max too; a prt_dims_expr has
 * nb == PRT_NB_DIMS_ABSENT and no expressions). The host never asks
 * supports_format_combination about an absent position. */
#define PRT_NB_DIMS_ABSENT (-1)

static inline int prt_tensor_absent(const prt_tensor_desc *d) { return d->dims.nb == PRT_NB_DIMS_ABSENT; }

/* What a plugin says about its inputs and outputs, asked at build time and
 * again at load (get_io_info, appended to both styles). Today: how many
 * inputs and outputs a layer of this plugin may have.
 * The host fills the counts with -1 ("default") and sets struct_size
 * before the call; the plugin overwrites the members it declares, and only
 * those that struct_size covers.
 *   min_inputs   inputs 0 .. min_inputs-1 must be present; inputs from
 *                min_inputs on may be absent (empty name) or left out at
 *                the end. -1: every input the layer gives is required.
 *   max_inputs   most inputs a layer may give (absent ones count). -1: no
 *                limit.
 *   min_outputs  fewest outputs a layer may name (1 .. get_nb_outputs());
 *                outputs from min_outputs on may be left out at the end
 *                (never in the middle). The plugin then sees nb_out = the
 *                number named in every call. -1: all get_nb_outputs().
 *   value_inputs bit i: input i is a shape-value input (a 0-D or 1-D int32
 *                or int64 tensor of at most PRT_MAX_DIMS elements whose
 *                values get_output_shapes_v2 reads as expressions). The
 *                build fails when its values are not known before the run.
 *                The host sets it to 0 (none) before the call. */
typedef struct prt_io_info {
    uint32_t struct_size;
    int32_t min_inputs;
    int32_t max_inputs;
    int32_t min_outputs;
    uint32_t value_inputs;
} prt_io_info;

/* ------------------------------------------------------------------------ */
/* Blob-style plugins                                                       */
/* ------------------------------------------------------------------------ */

typedef struct prt_blob_plugin prt_blob_plugin;
typedef struct prt_blob_plugin_ops prt_blob_plugin_ops;

/* A plugin object embeds this as its first member. */
struct prt_blob_plugin {
    const prt_blob_plugin_ops *ops;
};

struct prt_blob_plugin_ops {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t (*get_nb_outputs)(const prt_blob_plugin *p);
    prt_status (*get_output_data_types)(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in,
                                        prt_dtype *out, int32_t nb_out, prt_msg *err);
    prt_status (*get_output_dims)(prt_blob_plugin *p, int32_t output_index, const prt_dims_expr *in,
                                  int32_t nb_in, prt_expr_builder *eb, prt_dims_expr *out,
                                  prt_msg *err);
    /* Does the plugin accept io[pos] with the types/formats of io[0..pos-1]?
     * io holds nb_in inputs then nb_out outputs. Non-zero for yes. */
    int (*supports_format_combination)(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io,
                                       int32_t nb_in, int32_t nb_out);
    prt_status (*configure_plugin)(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                   const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err);
    /* Workspace bytes for the given shapes (the host passes the max shapes). NULL: 0. */
    size_t (*get_workspace_size)(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                 const prt_tensor_desc *out, int32_t nb_out);
    prt_status (*initialize)(prt_blob_plugin *p, prt_msg *err); /* NULL: nothing to do */
    void (*terminate)(prt_blob_plugin *p);                       /* NULL: nothing to do */
    prt_status (*enqueue)(prt_blob_plugin *p, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *workspace, prt_exec *ex);
    size_t (*get_serialization_size)(const prt_blob_plugin *p);
    /* Write exactly get_serialization_size() bytes into buf (cap bytes). */
    prt_status (*serialize)(const prt_blob_plugin *p, void *buf, size_t cap);
    prt_status (*clone)(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err);
    void (*destroy)(prt_blob_plugin *p);
    /* Optional: bind to / unbind from an execution context's resources. */
    prt_status (*attach_to_context)(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err);
    void (*detach_from_context)(prt_blob_plugin *p);
    /* Appended in abi_version 1 (read only when struct_size covers it).
     * Optional I/O (prt_io_info above). NULL: every input required, every
     * output named. */
    prt_status (*get_io_info)(const prt_blob_plugin *p, prt_io_info *info, prt_msg *err);
    /* Appended in abi_version 1. Every output's dims at once, with the
     * inputs' shape values (in_values[i].nb == PRT_NB_VALUES_UNKNOWN where
     * they are not known), and optionally output values: the host sets every
     * out_values[j].nb to PRT_NB_VALUES_UNKNOWN; a plugin that computes
     * output j on the host (an int32/int64 output of at most PRT_MAX_DIMS
     * elements, as many as its dims hold) sets its values there. A layer
     * whose outputs all have values is never enqueued: the engine writes the
     * values into the output tensors itself. Used instead of get_output_dims
     * when set. */
    prt_status (*get_output_shapes_v2)(prt_blob_plugin *p, const prt_dims_expr *in,
                                       const prt_dims_expr *in_values, int32_t nb_in,
                                       prt_dims_expr *out, prt_dims_expr *out_values, int32_t nb_out,
                                       prt_expr_builder *eb, prt_msg *err);
    /* Appended in abi_version 1. Per target device (the engine's device at
     * build and load; a context's device when it differs): the workspace
     * bytes for the given shapes (the max shapes), and whether io[pos] is
     * accepted on that device - a plugin refuses a device at build time by
     * accepting no combination there. Used instead of get_workspace_size /
     * supports_format_combination when set. */
    size_t (*get_workspace_size_v2)(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                    const prt_tensor_desc *out, int32_t nb_out, prt_device device);
    int (*supports_format_combination_v2)(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io,
                                          int32_t nb_in, int32_t nb_out, prt_device device);
    /* Appended in abi_version 3 (read only when struct_size covers them).
     * Tactics (docs/plugin-abi.md, "Tactics"): several kernels for the same
     * layer, each named by an id > 0 of the plugin's choosing (0 is the
     * plugin's own default, as before tactics). The builder times the
     * candidates on the target device, the plan records the fastest, and
     * the host hands it to every object that enqueues (set_tactic). Every
     * tactic computes the same function within the workspace declared for
     * the layer. This member: the tactics for layers of these descriptors
     * (the profile's ranges, as configure_plugin had them) on `device`,
     * distinct ids > 0 in order of preference (the first is taken when the
     * builder does not time); writes at most `cap` of them and returns how
     * many there are (at most 64). 0, or NULL: nothing to choose. */
    int32_t (*get_valid_tactics)(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device,
                                 int32_t *tactics, int32_t cap);
    /* A tactic's name for `plugrt inspect` ("im2col"); NULL: none. Valid
     * until the next call on p. NULL member: no names. */
    const char *(*get_tactic_name)(const prt_blob_plugin *p, int32_t tactic);
    /* The tactic this object's next enqueue calls use: called on each
     * instance the builder times (before attach_to_context), on the engine's
     * plugin after a plan is loaded and on each per-context clone (before
     * attach_to_context and initialize), with a tactic the plugin listed;
     * never with 0, which means "your own default". NULL: ignored. */
    prt_status (*set_tactic)(prt_blob_plugin *p, int32_t tactic, prt_msg *err);
};

/* ------------------------------------------------------------------------ */
/* Field-style plugins                                                      */
/* ------------------------------------------------------------------------ */

typedef struct prt_field_plugin prt_field_plugin;
typedef struct prt_field_plugin_ops prt_field_plugin_ops;

struct prt_field_plugin {
    const prt_field_plugin_ops *ops;
};

typedef struct prt_plugin_core_ops {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *(*get_name)(const prt_field_plugin *p);
    const char *(*get_version)(const prt_field_plugin *p);
    const char *(*get_namespace)(const prt_field_plugin *p);
} prt_plugin_core_ops;

typedef struct prt_plugin_build_ops {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t (*get_nb_outputs)(const prt_field_plugin *p);
    prt_status (*get_output_data_types)(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in,
                                        prt_dtype *out, int32_t nb_out, prt_msg *err);
    /* All outputs at once: out[0..nb_out-1]. */
    prt_status (*get_output_shapes)(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in,
                                    prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb,
                                    prt_msg *err);
    int (*supports_format_combination)(prt_field_plugin *p, int32_t pos,
                                       const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out);
    prt_status (*configure)(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                            const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err);
    /* Workspace bytes for any shapes within the ranges given. NULL: 0. */
    size_t (*get_workspace_size)(const prt_field_plugin *p, const prt_dyn_tensor_desc *in,
                                 int32_t nb_in, const prt_dyn_tensor_desc *out, int32_t nb_out);
    /* Optional tactics: fill up to `cap` ids (> 0), return how many exist.
     * NULL: none. Asked for any device, after configure at build (at load
     * the plugin is not configured); get_valid_tactics_v2 is used instead
     * when set. */
    int32_t (*get_valid_tactics)(prt_field_plugin *p, int32_t *tactics, int32_t cap);
    /* Appended in abi_version 1 (read only when struct_size covers it).
     * Optional I/O (prt_io_info above). NULL: every input required, every
     * output named. */
    prt_status (*get_io_info)(const prt_field_plugin *p, prt_io_info *info, prt_msg *err);
    /* Appended in abi_version 1. get_output_shapes with shape values: see
     * prt_blob_plugin_ops.get_output_shapes_v2. Used instead of
     * get_output_shapes when set. */
    prt_status (*get_output_shapes_v2)(prt_field_plugin *p, const prt_dims_expr *in,
                                       const prt_dims_expr *in_values, int32_t nb_in,
                                       prt_dims_expr *out, prt_dims_expr *out_values, int32_t nb_out,
                                       prt_expr_builder *eb, prt_msg *err);
    /* Appended in abi_version 1. Per target device: see
     * prt_blob_plugin_ops.get_workspace_size_v2. Used instead of
     * get_workspace_size / supports_format_combination when set. */
    size_t (*get_workspace_size_v2)(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                    const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device);
    int (*supports_format_combination_v2)(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io,
                                          int32_t nb_in, int32_t nb_out, prt_device device);
    /* Appended in abi_version 3. Tactics for these descriptors (the
     * profile's ranges) on `device`: see prt_blob_plugin_ops.get_valid_tactics.
     * Used instead of get_valid_tactics when set; the chosen tactic reaches
     * the plugin through prt_plugin_runtime_ops.set_tactic. */
    int32_t (*get_valid_tactics_v2)(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                    const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device,
                                    int32_t *tactics, int32_t cap);
    /* A tactic's name for display; NULL: none (see the blob member). */
    const char *(*get_tactic_name)(const prt_field_plugin *p, int32_t tactic);
} prt_plugin_build_ops;

typedef struct prt_plugin_runtime_ops {
    uint32_t struct_size;
    uint32_t abi_version;
    /* The tactic the object's next enqueue calls use (one it listed, never
     * 0): on each instance the builder times, on the engine's plugin after a
     * plan is loaded and on each per-context instance after
     * attach_to_context. NULL: ignored. */
    prt_status (*set_tactic)(prt_field_plugin *p, int32_t tactic, prt_msg *err);
    /* Concrete shapes of the next enqueue calls. NULL: nothing to do. */
    prt_status (*on_shape_change)(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out, prt_msg *err);
    prt_status (*enqueue)(prt_field_plugin *p, const prt_tensor_desc *in_desc,
                          const prt_tensor_desc *out_desc, const void *const *inputs,
                          void *const *outputs, void *workspace, prt_exec *ex);
    /* A per-context clone bound to ctx; the host destroys it. */
    prt_status (*attach_to_context)(prt_field_plugin *p, prt_plugin_context *ctx,
                                    prt_field_plugin **out, prt_msg *err);
    /* The fields that re-create this plugin (through create_plugin with
     * PRT_PHASE_RUNTIME). Valid until the next call on p or its destroy. */
    prt_status (*get_fields_to_serialize)(prt_field_plugin *p, prt_fields *out, prt_msg *err);
} prt_plugin_runtime_ops;

struct prt_field_plugin_ops {
    uint32_t struct_size;
    uint32_t abi_version;
    const prt_plugin_core_ops *core;
    const prt_plugin_build_ops *build;
    const prt_plugin_runtime_ops *runtime;
    prt_status (*clone)(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err);
    void (*destroy)(prt_field_plugin *p);
};

/* ------------------------------------------------------------------------ */
/* Creators                                                                 */
/* ------------------------------------------------------------------------ */

typedef struct prt_plugin_creator prt_plugin_creator;

/* A float64 reference of a plugin (abi_version 2), which golden data and the
 * conformance harness compare the plugin against. The host converts the
 * inputs to double, in the plugin's input order (an absent optional input:
 * NULL data); the reference sets every output's dims and data, the data in
 * memory from io->alloc (freed by the host after the call's results are
 * used). Fields are the normalized collection, as create receives it. */
typedef struct prt_reference_io prt_reference_io;
struct prt_reference_io {
    uint32_t struct_size;
    uint32_t abi_version;
    int32_t nb_inputs;
    int32_t nb_outputs;
    const prt_dims *input_dims;   /* nb_inputs */
    const double *const *inputs;  /* nb_inputs, row-major; NULL: absent */
    prt_dims *output_dims;        /* nb_outputs, set by the reference */
    double **outputs;             /* nb_outputs, set by the reference */
    void *(*alloc)(prt_reference_io *io, size_t bytes); /* NULL when out of memory */
    void *host_;
};
typedef prt_status (*prt_reference_fn)(const prt_plugin_creator *c, const prt_fields *fields, prt_reference_io *io,
                                       prt_msg *err);

struct prt_plugin_creator {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *name;
    const char *version;
    const char *plugin_namespace; /* "" is the default namespace */
    prt_plugin_style style;
    int32_t nb_fields;
    const prt_field_schema *fields; /* nb_fields entries, field_schema_size bytes apart */
    uint32_t field_schema_size;     /* sizeof(prt_field_schema) the creator was built with */
    uint32_t reserved_;
    /* Blob style. `fc` is validated and normalized by the host. */
    prt_status (*create_blob)(const prt_plugin_creator *c, const prt_fields *fc,
                              prt_blob_plugin **out, prt_msg *err);
    prt_status (*deserialize_blob)(const prt_plugin_creator *c, const void *blob, size_t len,
                                   prt_blob_plugin **out, prt_msg *err);
    /* Field style; also how a field-style plugin is deserialized (RUNTIME). */
    prt_status (*create_field)(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                               prt_field_plugin **out, prt_msg *err);
    const char *doc; /* one line; may be NULL */
    void *user;      /* constant data of the creator's own; never per-plugin state */
    /* Appended in abi_version 2 (read only when struct_size covers them).
     * The plugin's float64 reference (NULL: none), registered with the
     * creator so that plugin libraries hand theirs over the same way, and one
     * line saying what it computes. */
    prt_reference_fn reference;
    const char *reference_doc;
};

/* Schema entry i of a creator (entries are field_schema_size bytes apart, so
 * a creator built with an older, shorter prt_field_schema reads correctly). */
static inline const prt_field_schema *prt_creator_schema_entry(const prt_plugin_creator *c, int32_t i)
{
    return (const prt_field_schema *)(const void *)((const char *)c->fields + (size_t)i * c->field_schema_size);
}

/* ------------------------------------------------------------------------ */
/* Plugin libraries                                                         */
/* ------------------------------------------------------------------------ */

/* Host services, one table for every plugin (SQLite's sqlite3_api_routines
 * is the model). A plugin reaches it with prt_host() and calls the prt_host_*
 * helpers below, which check struct_size and fall back when an older host
 * lacks a member; a plugin library never links libplugrt. */
/* ---- sub-networks (abi_version 3) -------------------------------------------
 *
 * A plugin that holds sub-networks in PRT_FIELD_GRAPH fields (the bodies of
 * If, Loop, Scan) has the host build each into a sub-engine and run it
 * (docs/plugin-abi.md, "Sub-networks"). The sub-network's plugins are found
 * in the registry of the engine being built, loaded or run that made the
 * plugin call (the global registry outside one); it sees only the inputs the
 * plugin gives it, bound by position to its network inputs. */
typedef struct prt_subnet prt_subnet; /* host-owned; freed with subnet_destroy */

typedef struct prt_subnet_config {
    uint32_t struct_size; /* sizeof(prt_subnet_config) as the plugin was compiled */
    uint32_t abi_version;
    prt_device device;    /* where it runs: the parent's (prt_plugin_context.device) */
    int32_t cuda_device;  /* CUDA ordinal (prt_plugin_context.cuda_device) */
    int32_t nb_threads;   /* CPU threads of the sub-context; 0 or 1: the calling thread only */
    int32_t nb_inputs;    /* must equal the sub-network's number of inputs */
    /* Per sub-network input: its type (must equal the input's declared one)
     * and the range its extents take: the profile of the sub-engine (min /
     * opt / max of the -1 extents; fixed extents must agree). */
    const prt_dyn_tensor_desc *inputs;
} prt_subnet_config;

typedef struct prt_host_api {
    uint32_t struct_size;
    uint32_t abi_version; /* the host's PRT_ABI_VERSION */
    void (*log)(prt_severity sev, const char *msg);
    /* Appended in abi_version 2 (read only when struct_size covers them). */
    const char *(*dims_str)(const prt_dims *d, char *buf, size_t cap); /* "[2, 3, -1]" */
    const char *(*status_name)(prt_status s);                          /* "PRT_STATUS_NOT_FOUND" */
    const char *(*status_str)(prt_status s);                           /* "not found" */
    /* Host memory through the host's allocation hook (failure injection and
     * accounting reach the plugin); NULL when out of memory. free(NULL) is a
     * no-op. Memory from alloc goes back through free, never libc free(). */
    void *(*alloc)(size_t bytes);
    void (*free)(void *p);
    /* Memory for state that lives on a device (weights uploaded once, in
     * attach_to_context or initialize): `bytes` on `device` (CPU: host memory
     * aligned to 64 bytes; CUDA: device memory of ordinal `device_index`,
     * which the plugin fills with its own cudaMemcpy). Released with
     * device_free on the same device, before the plugin object is destroyed. */
    prt_status (*device_alloc)(prt_device device, int32_t device_index, size_t bytes, void **out,
                               prt_msg *err);
    void (*device_free)(prt_device device, int32_t device_index, void *p);
    /* Devices of a kind this host can use (CPU: 1; CUDA: 0 without a GPU or
     * with PLUGRT_NO_GPU set). */
    int32_t (*device_count)(prt_device device);
    /* Appended in abi_version 3: sub-networks. Build: `graph` is an element of
     * one of the plugin's GRAPH fields (copied; the plugin may free its fields
     * afterwards); the sub-engine is built for cfg->device with the profile
     * cfg->inputs gives, and an execution context is created for it. */
    prt_status (*subnet_build)(const prt_field_graph *graph, const prt_subnet_config *cfg, prt_subnet **out,
                               prt_msg *err);
    /* Numbers of inputs and outputs, and (io != NULL) the first `cap` of the
     * inputs then the outputs: dtype, linear format, dims (-1 where the
     * extent varies in the profile or depends on the data) and the extents at
     * the profile's min / opt / max. */
    prt_status (*subnet_describe)(const prt_subnet *s, int32_t *nb_inputs, int32_t *nb_outputs,
                                  prt_dyn_tensor_desc *io, int32_t cap);
    /* Run on concrete inputs (shapes within the profile): host memory on the
     * CPU, device memory of the sub-network's device on CUDA (enqueued on
     * `cuda_stream`, NULL: the sub-context's own; it returns without waiting
     * unless the sub-network has data-dependent outputs). out[i] describes
     * the buffer outputs[i] offers (dtype and dims, so its capacity); on
     * success its dims become the extents the run produced. No allocation
     * when the shapes are those of the previous run. One thread at a time. */
    prt_status (*subnet_run)(prt_subnet *s, const prt_tensor_desc *in, const void *const *inputs, int32_t nb_in,
                             prt_tensor_desc *out, void *const *outputs, int32_t nb_out, void *cuda_stream,
                             prt_msg *err);
    void (*subnet_destroy)(prt_subnet *s); /* NULL accepted */
} prt_host_api;

/* Non-zero when host table h has member m (struct_size covers it, not NULL). */
#define PRT_HOST_HAS(h, m) \
    ((h) && (h)->struct_size >= offsetof(prt_host_api, m) + sizeof((h)->m) && (h)->m)

/* One node per creator registered with PRT_REGISTER_CREATOR. */
typedef struct prt_static_creator {
    const prt_plugin_creator *creator;
    struct prt_static_creator *next;
} prt_static_creator;

/* What the library hands back. The creators must stay valid until the library
 * is unloaded (static storage is the norm). */
typedef struct prt_library_desc {
    uint32_t struct_size;
    uint32_t abi_version; /* PRT_ABI_VERSION the library was built against */
    const char *name;     /* library name for messages and plan records */
    int32_t nb_creators;
    int32_t reserved_;
    const prt_plugin_creator *const *creators;
    /* Appended in abi_version 2: creators the library registered with
     * PRT_REGISTER_CREATOR (a list, newest first; NULL: none). The host
     * registers these and `creators` together, all or nothing. */
    const prt_static_creator *registered;
} prt_library_desc;

#define PRT_LIBRARY_ENTRY_NAME "prt_plugin_library_init"
typedef prt_status (*prt_library_entry_fn)(const prt_host_api *host, prt_library_desc *out,
                                           prt_msg *err);

/*
 * Building plugin code: statically or as a library, from the same source.
 *
 *   Statically (compiled into an application or libplugrt, linked with
 *   libplugrt): PRT_REGISTER_CREATOR adds the creator to the global registry
 *   when the program starts, and prt_host() is libplugrt's own table.
 *
 *   As a library (compiled with PRT_PLUGIN_AS_LIBRARY defined, which the CMake
 *   helper plugrt_add_plugin(name LIBRARY ...) does): PRT_REGISTER_CREATOR
 *   keeps the creator in a list private to the library, and the library's
 *   entry point (PRT_PLUGIN_LIBRARY) hands that list to the host together
 *   with its creator array and keeps the host table prt_host() returns. The
 *   library links nothing of plugrt; the functions only libplugrt defines
 *   (prt_log, prt_dims_str, prt_status_str, ...) are not declared, so using
 *   one is a compile error instead of a load failure.
 */
#if defined(__GNUC__)
#define PRT_LIBRARY_EXPORT __attribute__((visibility("default")))
#define PRT__MODULE_VAR __attribute__((weak, visibility("hidden")))
#else
#define PRT_LIBRARY_EXPORT
#define PRT__MODULE_VAR
#endif

#ifdef PRT_PLUGIN_AS_LIBRARY
/* One of each per library (weak definitions merge across its files). */
PRT__MODULE_VAR const prt_host_api *prt__library_host = NULL;
PRT__MODULE_VAR prt_static_creator *prt__library_creators = NULL;
static inline const prt_host_api *prt_host(void) { return prt__library_host; }
static inline void prt__creator_push(prt_static_creator *node)
{
    node->next = prt__library_creators; /* constructors run one at a time */
    prt__library_creators = node;
}
#define PRT__LIBRARY_KEEP(host, out) (prt__library_host = (host), (out)->registered = prt__library_creators)
#else
/* libplugrt's host table; never NULL. */
PRT_API const prt_host_api *prt_host_api_get(void);
PRT_API void prt_static_creator_push(prt_static_creator *node);
static inline const prt_host_api *prt_host(void) { return prt_host_api_get(); }
static inline void prt__creator_push(prt_static_creator *node) { prt_static_creator_push(node); }
#define PRT__LIBRARY_KEEP(host, out) ((void)(host), (out)->registered = NULL)
#endif

/* PRT_REGISTER_CREATOR(my_creator) at file scope registers `my_creator` (a
 * prt_plugin_creator object): with the global registry at load time
 * (static builds) or through the library's entry point (library builds). */
#define PRT_REGISTER_CREATOR(creator_obj)                                                \
    static prt_static_creator prt__static_node_##creator_obj = {&(creator_obj), NULL};   \
    __attribute__((constructor)) static void prt__static_ctor_##creator_obj(void)        \
    {                                                                                    \
        prt__creator_push(&prt__static_node_##creator_obj);                              \
    }

/* Define the entry point of a plugin library. The array may be NULL with
 * count 0 when every creator comes from PRT_REGISTER_CREATOR:
 *   static const prt_plugin_creator *const my_creators[] = {&a, &b};
 *   PRT_PLUGIN_LIBRARY("mylib", my_creators, 2)                              */
#define PRT_PLUGIN_LIBRARY(lib_name, creator_array, count)                               \
    PRT_LIBRARY_EXPORT prt_status prt_plugin_library_init(const prt_host_api *host,      \
                                                          prt_library_desc *out,         \
                                                          prt_msg *err)                  \
    {                                                                                    \
        (void)err;                                                                       \
        out->struct_size = (uint32_t)sizeof(*out);                                       \
        out->abi_version = PRT_ABI_VERSION;                                              \
        out->name = (lib_name);                                                          \
        out->nb_creators = (count);                                                      \
        out->reserved_ = 0;                                                              \
        out->creators = (creator_array);                                                 \
        PRT__LIBRARY_KEEP(host, out);                                                    \
        return PRT_OK;                                                                   \
    }

/* ------------------------------------------------------------------------ */
/* Host services for plugin code (statically built or in a library)         */
/* ------------------------------------------------------------------------ */

/* Log through the host's logger (printf-style; truncated at 1023 bytes).
 * Creators and plugins may call it from any thread. */
static inline void prt_host_log(prt_severity sev, const char *fmt, ...) PRT_PRINTF(2, 3);
static inline void prt_host_log(prt_severity sev, const char *fmt, ...)
{
    const prt_host_api *h = prt_host();
    char buf[1024];
    va_list ap;
    if (!PRT_HOST_HAS(h, log)) return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    h->log(sev, buf);
}

/* "[2, 3, -1]" into buf. */
static inline const char *prt_host_dims_str(const prt_dims *d, char *buf, size_t cap)
{
    const prt_host_api *h = prt_host();
    size_t n = 0;
    int32_t i;
    if (PRT_HOST_HAS(h, dims_str)) return h->dims_str(d, buf, cap);
    if (!buf || !cap) return buf;
    buf[0] = 0;
    for (i = 0; d && i < d->nb && i < PRT_MAX_DIMS && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "[", (long long)d->d[i]);
    if (n < cap) snprintf(buf + n, cap - n, "%s", d && d->nb > 0 ? "]" : "[]");
    return buf;
}

static inline const char *prt_host_status_name(prt_status s)
{
    const prt_host_api *h = prt_host();
    return PRT_HOST_HAS(h, status_name) ? h->status_name(s) : "PRT_STATUS_?";
}

static inline const char *prt_host_status_str(prt_status s)
{
    const prt_host_api *h = prt_host();
    return PRT_HOST_HAS(h, status_str) ? h->status_str(s) : (s == PRT_OK ? "success" : "error");
}

/* Host memory (the host's allocation hook; libc on a host without one). */
static inline void *prt_host_alloc(size_t bytes)
{
    const prt_host_api *h = prt_host();
    return PRT_HOST_HAS(h, alloc) ? h->alloc(bytes) : malloc(bytes ? bytes : 1);
}

static inline void prt_host_free(void *p)
{
    const prt_host_api *h = prt_host();
    if (PRT_HOST_HAS(h, free))
        h->free(p);
    else
        free(p);
}

/* Device memory for plugin state; PRT_STATUS_UNSUPPORTED on a host without it. */
static inline prt_status prt_host_device_alloc(prt_device device, int32_t device_index, size_t bytes,
                                               void **out, prt_msg *err)
{
    const prt_host_api *h = prt_host();
    if (PRT_HOST_HAS(h, device_alloc)) return h->device_alloc(device, device_index, bytes, out, err);
    prt_msg_set(err, "this host offers no device allocator (plugin ABI %u)", h ? (unsigned)h->abi_version : 0u);
    return PRT_STATUS_UNSUPPORTED;
}

static inline void prt_host_device_free(prt_device device, int32_t device_index, void *p)
{
    const prt_host_api *h = prt_host();
    if (p && PRT_HOST_HAS(h, device_free)) h->device_free(device, device_index, p);
}

/* Sub-networks (abi_version 3); PRT_STATUS_UNSUPPORTED on an older host. */
static inline prt_status prt_host_subnet_build(const prt_field_graph *graph, const prt_subnet_config *cfg,
                                               prt_subnet **out, prt_msg *err)
{
    const prt_host_api *h = prt_host();
    if (PRT_HOST_HAS(h, subnet_build)) return h->subnet_build(graph, cfg, out, err);
    prt_msg_set(err, "this host cannot build sub-networks (plugin ABI %u; 3 is needed)",
                h ? (unsigned)h->abi_version : 0u);
    return PRT_STATUS_UNSUPPORTED;
}

static inline prt_status prt_host_subnet_describe(const prt_subnet *s, int32_t *nb_inputs, int32_t *nb_outputs,
                                                  prt_dyn_tensor_desc *io, int32_t cap)
{
    const prt_host_api *h = prt_host();
    return PRT_HOST_HAS(h, subnet_describe) ? h->subnet_describe(s, nb_inputs, nb_outputs, io, cap)
                                            : PRT_STATUS_UNSUPPORTED;
}

static inline prt_status prt_host_subnet_run(prt_subnet *s, const prt_tensor_desc *in, const void *const *inputs,
                                             int32_t nb_in, prt_tensor_desc *out, void *const *outputs,
                                             int32_t nb_out, void *cuda_stream, prt_msg *err)
{
    const prt_host_api *h = prt_host();
    if (PRT_HOST_HAS(h, subnet_run)) return h->subnet_run(s, in, inputs, nb_in, out, outputs, nb_out, cuda_stream, err);
    prt_msg_set(err, "this host cannot run sub-networks (plugin ABI %u; 3 is needed)", h ? (unsigned)h->abi_version : 0u);
    return PRT_STATUS_UNSUPPORTED;
}

static inline void prt_host_subnet_destroy(prt_subnet *s)
{
    const prt_host_api *h = prt_host();
    if (s && PRT_HOST_HAS(h, subnet_destroy)) h->subnet_destroy(s);
}

/* Usable devices of a kind; an older host: 1 CPU, 0 CUDA devices. */
static inline int32_t prt_host_device_count(prt_device device)
{
    const prt_host_api *h = prt_host();
    if (PRT_HOST_HAS(h, device_count)) return h->device_count(device);
    return device == PRT_DEVICE_CPU ? 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Frozen layouts of abi_version 1 (LP64)                                    */
/* ------------------------------------------------------------------------ */
#if !defined(__cplusplus) && UINTPTR_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(prt_dims) == 72, "prt_dims layout is frozen");
_Static_assert(offsetof(prt_field, count) == 24, "prt_field layout is frozen");
_Static_assert(offsetof(prt_field_schema, doc) == 72, "prt_field_schema layout is frozen");
_Static_assert(offsetof(prt_blob_plugin_ops, detach_from_context) == 120,
               "prt_blob_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_field_plugin_ops, destroy) == 40, "prt_field_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_creator, user) == 88, "prt_plugin_creator layout is frozen");
_Static_assert(offsetof(prt_exec, host_) == 56, "prt_exec layout is frozen");
_Static_assert(offsetof(prt_exec, set_output_extent_device) == 64, "prt_exec layout is frozen");
_Static_assert(offsetof(prt_plugin_context, host_) == 40, "prt_plugin_context layout is frozen");
/* abi_version 2 */
_Static_assert(offsetof(prt_field_tensor, data) == 80 && sizeof(prt_field_tensor) == 88,
               "prt_field_tensor layout is frozen");
_Static_assert(offsetof(prt_field_graph, size) == 24 && sizeof(prt_field_graph) == 32,
               "prt_field_graph layout is frozen");
_Static_assert(offsetof(prt_plugin_creator, reference) == 96 && offsetof(prt_plugin_creator, reference_doc) == 104,
               "prt_plugin_creator layout is frozen");
_Static_assert(offsetof(prt_reference_io, host_) == 56, "prt_reference_io layout is frozen");
_Static_assert(offsetof(prt_host_api, log) == 8 && offsetof(prt_host_api, device_count) == 72,
               "prt_host_api layout is frozen");
_Static_assert(offsetof(prt_library_desc, creators) == 24 && offsetof(prt_library_desc, registered) == 32,
               "prt_library_desc layout is frozen");
_Static_assert(offsetof(prt_blob_plugin_ops, get_io_info) == 128, "prt_blob_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, get_valid_tactics) == 56, "prt_plugin_build_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, get_io_info) == 64, "prt_plugin_build_ops layout is frozen");
_Static_assert(offsetof(prt_blob_plugin_ops, get_output_shapes_v2) == 136, "prt_blob_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, get_output_shapes_v2) == 72, "prt_plugin_build_ops layout is frozen");
_Static_assert(offsetof(prt_io_info, value_inputs) == 16, "prt_io_info layout is frozen");
_Static_assert(offsetof(prt_blob_plugin_ops, get_workspace_size_v2) == 144, "prt_blob_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_blob_plugin_ops, supports_format_combination_v2) == 152,
               "prt_blob_plugin_ops layout is frozen");
/* abi_version 3: tactics */
_Static_assert(offsetof(prt_blob_plugin_ops, get_valid_tactics) == 160 &&
                   offsetof(prt_blob_plugin_ops, get_tactic_name) == 168 &&
                   offsetof(prt_blob_plugin_ops, set_tactic) == 176,
               "prt_blob_plugin_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, get_valid_tactics_v2) == 96 &&
                   offsetof(prt_plugin_build_ops, get_tactic_name) == 104,
               "prt_plugin_build_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, get_workspace_size_v2) == 80, "prt_plugin_build_ops layout is frozen");
_Static_assert(offsetof(prt_plugin_build_ops, supports_format_combination_v2) == 88,
               "prt_plugin_build_ops layout is frozen");
/* abi_version 3 */
_Static_assert(offsetof(prt_host_api, subnet_build) == 80 && offsetof(prt_host_api, subnet_destroy) == 104,
               "prt_host_api layout is frozen");
_Static_assert(offsetof(prt_subnet_config, inputs) == 24 && sizeof(prt_subnet_config) == 32,
               "prt_subnet_config layout is frozen");
#endif

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_PLUGIN_H */
