/*
 * plugrt/onnx.h - ONNX models: reading a ModelProto and importing it as a
 * network (network.h) whose layers are plugins (docs/onnx.md).
 *
 * Contract
 *   Reading: prt_onnx_model_parse decodes and checks a whole model (IR
 *   versions 3 to 11): framing, IR version, opset imports, node order
 *   (a topological order is computed; cycles are refused), every input
 *   defined, every initializer decodable (typed fields, raw_data, external
 *   data files relative to `base_dir` that stay inside it), extents in range.
 *   Every byte is checked; bad input is an error naming the node or tensor.
 *
 *   Importing: every node becomes a plugin layer whose creator is found by
 *   (op type, domain, opset) in the registry: the largest decimal version <=
 *   the model's opset for that domain ("" and "ai.onnx" are one domain).
 *   Nodes with no such creator fall back to custom plugins (op type, with the
 *   node's plugin_version / plugin_namespace attributes, else its domain,
 *   else ""; one alias table maps exporters' names). Nodes whose inputs are
 *   all constants are evaluated at import by their own plugin on the CPU.
 *
 *   Ownership: a model is freed with prt_onnx_model_destroy (NULL accepted);
 *   the network made by an import belongs to the caller. The registry must
 *   outlive the network (network.h). Strings returned by the accessors stay
 *   valid as long as the model.
 *
 *   Threads: a model may be read from any number of threads; imports do not
 *   change it.
 *
 *   Errors: functions with `err`/`cap` write the reason there (NULL allowed)
 *   and leave their out-parameters untouched on failure.
 */
#ifndef PLUGRT_ONNX_H
#define PLUGRT_ONNX_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_onnx_model prt_onnx_model;

/* 1 if `data` starts like an ONNX ModelProto (its first field is one of
 * ModelProto's with the right wire type: ir_version 1..64, model_version, or
 * a producer / domain / doc / graph / opset / metadata field whose length
 * fits), 0 otherwise (JSON, plans, text).
 * Cheap: for telling file kinds apart, not a validation. */
PRT_API int prt_onnx_sniff(const void *data, size_t len);

/* Decode and check a model held in memory (copied as needed). `base_dir` is
 * the folder external data files resolve against; NULL refuses external
 * data. */
PRT_API PRT_NODISCARD prt_status prt_onnx_model_parse(const void *data, size_t len, const char *base_dir,
                                                     prt_onnx_model **out, char *err, size_t cap);
/* The same for a file; external data resolves against its folder. */
PRT_API PRT_NODISCARD prt_status prt_onnx_model_load(const char *path, prt_onnx_model **out, char *err,
                                                    size_t cap);
PRT_API void prt_onnx_model_destroy(prt_onnx_model *m);

/* ---- reading a model back ------------------------------------------------ */

PRT_API int64_t prt_onnx_model_ir_version(const prt_onnx_model *m);
PRT_API const char *prt_onnx_model_producer(const prt_onnx_model *m);
PRT_API int32_t prt_onnx_model_nb_opsets(const prt_onnx_model *m);
/* Domain ("" for the default one) and version of opset import i. */
PRT_API PRT_NODISCARD prt_status prt_onnx_model_opset(const prt_onnx_model *m, int32_t i, const char **domain,
                                                     int64_t *version);

/* Graph inputs that are not initializers, then graph outputs. */
typedef struct prt_onnx_io {
    const char *name;
    const char *elem_type; /* ONNX name: "float", "int64", ... */
    int32_t rank;          /* -1: unknown rank */
    int64_t dims[PRT_MAX_DIMS]; /* -1 for a dynamic extent */
    const char *dim_params[PRT_MAX_DIMS]; /* symbolic name of a dynamic extent, or NULL */
} prt_onnx_io;
PRT_API int32_t prt_onnx_model_nb_inputs(const prt_onnx_model *m);
PRT_API int32_t prt_onnx_model_nb_outputs(const prt_onnx_model *m);
PRT_API PRT_NODISCARD prt_status prt_onnx_model_input(const prt_onnx_model *m, int32_t i, prt_onnx_io *out);
PRT_API PRT_NODISCARD prt_status prt_onnx_model_output(const prt_onnx_model *m, int32_t i, prt_onnx_io *out);

/* Nodes in topological order. */
PRT_API int32_t prt_onnx_model_nb_nodes(const prt_onnx_model *m);
PRT_API PRT_NODISCARD prt_status prt_onnx_model_node(const prt_onnx_model *m, int32_t i, const char **name,
                                                    const char **op_type, const char **domain);

/* ---- importing ----------------------------------------------------------- */

/* Called once per node that cannot be imported (node label, op type,
 * domain, the reason). `msg` is valid during the call only. */
typedef void (*prt_onnx_issue_fn)(void *user, const char *node, const char *op_type, const char *domain,
                                  const char *reason);

/* A value for a graph input (prt_onnx_import_config.values): like a
 * profile whose min = opt = max for a shape tensor, the input is then known
 * at import and becomes a constant of the network. `data` holds
 * volume(dims) elements of `dtype` (host order) and is read during the
 * import call only. */
typedef struct prt_onnx_input_value {
    const char *name; /* a graph input of the model */
    prt_dtype dtype;  /* must be the input's element type */
    prt_dims dims;    /* must fit the input's declared extents */
    const void *data;
    size_t nbytes;    /* volume(dims) * prt_dtype_size(dtype) */
} prt_onnx_input_value;

/* Which graph inputs given a value become constants (config.bind). */
enum {
    PRT_ONNX_BIND_FIELDS = 0, /* only those some node takes as a field "input:<k>" (shape-like inputs) */
    PRT_ONNX_BIND_ALL = 1     /* every one given a value */
};

typedef struct prt_onnx_import_config {
    uint32_t struct_size;
    uint32_t abi_version;
    /* Ranges of the dynamic inputs (the builder's profile). An extent whose
     * min equals its max counts as known at import, so Shape on it folds. */
    int32_t nb_ranges;
    int32_t keep_going; /* non-zero: report every bad node through `issue` and go on */
    const prt_profile_range *ranges;
    prt_onnx_issue_fn issue;
    void *issue_user;
    /* Appended: values for graph inputs (NULL / 0: none). A value naming no
     * graph input, or whose type or extents do not fit it, fails the import. */
    const prt_onnx_input_value *values;
    int32_t nb_values;
    int32_t bind; /* PRT_ONNX_BIND_FIELDS (default) or PRT_ONNX_BIND_ALL */
    /* Appended: non-zero keeps every node a layer of its own (no layer
     * fusion; docs/onnx.md, "Fusion"). */
    int32_t no_fuse;
} prt_onnx_import_config;

PRT_API void prt_onnx_import_config_init(prt_onnx_import_config *cfg);

/* Import a model into a new network over `r`. cfg NULL: defaults. With
 * keep_going, the import still fails when any node failed, after reporting
 * every one. */
PRT_API PRT_NODISCARD prt_status prt_onnx_import(const prt_onnx_model *m, prt_registry *r,
                                                const prt_onnx_import_config *cfg, prt_network **out,
                                                char *err, size_t cap);
/* Parse and import in one call: a file, or a buffer (external data under
 * `base_dir`, NULL: refused). */
PRT_API PRT_NODISCARD prt_status prt_network_from_onnx_file(prt_registry *r, const char *path,
                                                           const prt_onnx_import_config *cfg,
                                                           prt_network **out, char *err, size_t cap);
PRT_API PRT_NODISCARD prt_status prt_network_from_onnx(prt_registry *r, const void *data, size_t len,
                                                      const char *base_dir, const prt_onnx_import_config *cfg,
                                                      prt_network **out, char *err, size_t cap);

/* ---- tensors (TensorProto files of the ONNX backend tests) ---------------- */

/* A decoded tensor: dtype, dims and the elements (host order). */
typedef struct prt_onnx_tensor {
    char *name;   /* "" if the file gives none */
    prt_dtype dtype;
    prt_dims dims;
    void *data;
    size_t nbytes;
} prt_onnx_tensor;

/* Decode one serialized TensorProto (no external data). */
PRT_API PRT_NODISCARD prt_status prt_onnx_tensor_parse(const void *data, size_t len, prt_onnx_tensor **out,
                                                      char *err, size_t cap);
PRT_API PRT_NODISCARD prt_status prt_onnx_tensor_load(const char *path, prt_onnx_tensor **out, char *err,
                                                     size_t cap);
PRT_API void prt_onnx_tensor_destroy(prt_onnx_tensor *t);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_ONNX_H */
