/*
 * plugrt/op.h - one plugin instance, run directly (without an engine).
 *
 * Contract
 *   A prt_op wraps a plugin of either style behind one interface. Each
 *   configure builds a one-layer engine around a copy of the plugin and
 *   creates an execution context for it, so an op applies exactly the shape,
 *   type and extent rules of engines, with the same messages
 *   (docs/lifecycle.md, "prt_op: a one-layer engine"). Tests, the demo and
 *   the conformance harness use it.
 *
 *   Ownership: prt_op_create/deserialize/clone make an op that the caller
 *   frees with prt_op_destroy (NULL accepted). The op owns its plugin object,
 *   its workspace and (on the CPU) its thread pool. The registry must outlive
 *   the op.
 *
 *   Threads: one op is used by one thread at a time; clones are independent.
 *
 *   Errors: a failed call leaves the op as it was and sets the message read
 *   by prt_op_last_error(op). When no op exists yet - prt_op_create and
 *   prt_op_deserialize failed - the message is on the registry the call was
 *   made on, read with prt_registry_last_error(r) on the same thread (the
 *   older form prt_op_last_error(NULL) reads the same message until the next
 *   create or deserialize there). A failed deserialize says which part of the record
 *   was wrong: "plugin record ends early: ..." (PRT_STATUS_TRUNCATED), a bad
 *   style byte or name (PRT_STATUS_BAD_FORMAT), "no plugin creator ..." with
 *   the near misses and the owner the record names (PRT_STATUS_NOT_FOUND),
 *   a style or owner the registry does not match (PRT_STATUS_VERSION_MISMATCH),
 *   fields that no longer pass the schema (PRT_STATUS_INVALID_FIELD), the
 *   plugin's own message when its deserialize_blob / create_field fails, or
 *   "... is followed by N stray bytes" (PRT_STATUS_BAD_FORMAT).
 */
#ifndef PLUGRT_OP_H
#define PLUGRT_OP_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_op prt_op;

/* Create a plugin from user fields (validated against the creator's schema)
 * in the build phase. */
PRT_API PRT_NODISCARD prt_status prt_op_create(prt_registry *r, const char *name, const char *version,
                                              const char *plugin_namespace, const prt_fields *fields,
                                              prt_op **out);
/* Serialize as a plugin record (docs/engine-format.md, "plugin record"):
 * style, name, version, namespace, owner, then the fields (field style) or
 * the blob (blob style). buf == NULL: *len gets the size needed. */
PRT_API PRT_NODISCARD prt_status prt_op_serialize(prt_op *op, void *buf, size_t cap, size_t *len);
/* Re-create from a plugin record, finding the creator in `r`. Every byte is
 * checked: truncated, corrupt or trailing data is an error. */
PRT_API PRT_NODISCARD prt_status prt_op_deserialize(prt_registry *r, const void *data, size_t len,
                                                   prt_op **out);
/* An unconfigured copy (plugin clone). */
PRT_API PRT_NODISCARD prt_status prt_op_clone(const prt_op *op, prt_op **out);
PRT_API void prt_op_destroy(prt_op *op);

PRT_API prt_plugin_style prt_op_style(const prt_op *op);
PRT_API const prt_plugin_creator *prt_op_creator(const prt_op *op);
PRT_API int32_t prt_op_nb_outputs(const prt_op *op);

typedef struct prt_op_config {
    uint32_t struct_size;
    uint32_t abi_version;
    prt_device device;
    int32_t cuda_device;
    int32_t nb_threads; /* CPU; 0 = number of cores */
    int32_t reserved_;
    void *cuda_stream;  /* NULL = the default stream */
} prt_op_config;

/* Fix the inputs (concrete shapes, dtypes, linear format) and the device:
 * builds the one-layer engine (output types and shapes, format check,
 * configure, workspace, plan, load) and its context (attach, initialize). The
 * plugin must take the inputs in their own types. May be called again with
 * other shapes. */
PRT_API PRT_NODISCARD prt_status prt_op_configure(prt_op *op, const prt_tensor_desc *inputs,
                                                 int32_t nb_inputs, const prt_op_config *cfg);
PRT_API PRT_NODISCARD prt_status prt_op_output_desc(const prt_op *op, int32_t index,
                                                   prt_tensor_desc *out);
PRT_API size_t prt_op_workspace_size(const prt_op *op);

/* Run once. Pointers are host memory on the CPU and device memory on CUDA;
 * on CUDA the call enqueues on the configured stream and returns without
 * waiting. Outputs with data-dependent extents: read prt_op_output_desc
 * afterwards (on CUDA after synchronizing the stream). */
PRT_API PRT_NODISCARD prt_status prt_op_run(prt_op *op, const void *const *inputs,
                                           void *const *outputs);

/* Message of the last failed call on `op`; with NULL, of the last failed
 * prt_op_create / prt_op_deserialize on this thread (the same text as
 * prt_registry_last_error of its registry). */
PRT_API const char *prt_op_last_error(const prt_op *op);

/* Generic form: the message of the last failed call on any plugrt object
 * from this thread ("" if none); NULL: of the last call made on no object
 * (a NULL handle). docs/plugin-abi.md, "Errors: one idiom". */
PRT_API const char *prt_last_error(const void *obj);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_OP_H */
