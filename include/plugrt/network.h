/*
 * plugrt/network.h - a network definition: named inputs, constant tensors,
 * plugin layers and marked outputs, ready for the builder (engine.h).
 *
 * Contract
 *   Ownership: prt_network_create makes a network the caller frees with
 *   prt_network_destroy (NULL accepted). Everything handed to the add
 *   functions (names, dims, fields, constant data) is copied; the caller may
 *   free it as soon as the call returns. The registry given at creation is
 *   borrowed and must outlive the network; layers find their creator in it
 *   when they are added, so a missing plugin is reported at once.
 *
 *   Order: a layer may only read tensors that already exist (inputs,
 *   constants, outputs of earlier layers), so the order of addition is an
 *   execution order. Tensor names are unique across the network.
 *
 *   Threads: one network is used by one thread at a time.
 *
 *   Errors: a failed call leaves the network exactly as it was and sets the
 *   message read by prt_network_last_error(), which names the layer and the
 *   tensor involved. prt_network_create's message is on the registry it was
 *   given (prt_last_error(NULL) when that is NULL).
 */
#ifndef PLUGRT_NETWORK_H
#define PLUGRT_NETWORK_H

#include "registry.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_network prt_network;

PRT_API PRT_NODISCARD prt_status prt_network_create(prt_registry *r, prt_network **out);
PRT_API void prt_network_destroy(prt_network *net);

/* A graph input. `dims` may hold PRT_DIM_DYNAMIC (-1) for extents that the
 * builder's optimization profile fixes a range for. */
PRT_API PRT_NODISCARD prt_status prt_network_add_input(prt_network *net, const char *name, prt_dtype dtype,
                                                      const prt_dims *dims);

/* A shape-value input, like a TensorRT shape tensor: a 0-D or 1-D int32 or
 * int64 tensor of fixed dims and at most PRT_MAX_DIMS elements whose values
 * plugins read as shape expressions (docs/plugin-abi.md, "Shape values").
 * The builder's profile bounds its values: the range's min / opt / max give
 * the smallest, typical and largest value of each element (nb = the number
 * of elements). Contexts take the values with prt_context_set_input_values
 * (engine.h); its buffer holds the same values as data. */
PRT_API PRT_NODISCARD prt_status prt_network_add_shape_input(prt_network *net, const char *name, prt_dtype dtype,
                                                            const prt_dims *dims);

/* A constant tensor (weights). `data` holds volume(dims) elements of dtype
 * in host byte order; it is copied. Every extent must be known. */
PRT_API PRT_NODISCARD prt_status prt_network_add_constant(prt_network *net, const char *name,
                                                         prt_dtype dtype, const prt_dims *dims,
                                                         const void *data, size_t nbytes);

/* A plugin layer. The creator is found by (plugin, version, namespace) in
 * the network's registry (NULL namespace means ""); `fields` are validated
 * against its schema and copied. `inputs` name existing tensors; an empty
 * name "" is an absent optional input. `outputs` name the new tensors, one
 * per plugin output; outputs at the end may be left out (fewer names, or
 * empty names at the end) where the plugin allows it (prt_io_info in
 * plugin.h; checked by the builder). A NULL `layer_name` gets
 * "<plugin>_<n>". */
PRT_API PRT_NODISCARD prt_status prt_network_add_layer(prt_network *net, const char *layer_name,
                                                      const char *plugin, const char *version,
                                                      const char *plugin_namespace,
                                                      const prt_fields *fields,
                                                      const char *const *inputs, int32_t nb_inputs,
                                                      const char *const *outputs, int32_t nb_outputs);

/* Make an existing tensor (a layer output) an output of the network. */
PRT_API PRT_NODISCARD prt_status prt_network_mark_output(prt_network *net, const char *name);

/* Read back. Names stay valid until the network is changed or destroyed. */
PRT_API int32_t prt_network_nb_inputs(const prt_network *net);
PRT_API int32_t prt_network_nb_outputs(const prt_network *net);
PRT_API int32_t prt_network_nb_layers(const prt_network *net);
PRT_API const char *prt_network_input_name(const prt_network *net, int32_t i);
PRT_API const char *prt_network_output_name(const prt_network *net, int32_t i);
PRT_API const char *prt_network_layer_name(const prt_network *net, int32_t i);
PRT_API prt_registry *prt_network_registry(const prt_network *net);

PRT_API const char *prt_network_last_error(const prt_network *net);

/* Build a network from a JSON description (docs/network-json.md). `base_dir`
 * resolves relative file names of constants (NULL: the current directory).
 * On failure *out is untouched and `err` (cap bytes) says where the
 * description is wrong. */
PRT_API PRT_NODISCARD prt_status prt_network_from_json(prt_registry *r, const char *json, size_t len,
                                                      const char *base_dir, prt_network **out,
                                                      char *err, size_t cap);
/* The same, reading the file at `path` (relative names resolve against its
 * folder). */
PRT_API PRT_NODISCARD prt_status prt_network_load_json(prt_registry *r, const char *path,
                                                      prt_network **out, char *err, size_t cap);

/* Flags of the _flags variants. By default a key the format does not define
 * (at the top level, in an input, constant, layer or typed field) is an
 * error; with PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN it is logged as a warning
 * and ignored. */
enum { PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN = 1u };
PRT_API PRT_NODISCARD prt_status prt_network_from_json_flags(prt_registry *r, const char *json, size_t len,
                                                            const char *base_dir, uint32_t flags,
                                                            prt_network **out, char *err, size_t cap);
PRT_API PRT_NODISCARD prt_status prt_network_load_json_flags(prt_registry *r, const char *path, uint32_t flags,
                                                            prt_network **out, char *err, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_NETWORK_H */
