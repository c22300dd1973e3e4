/*
 * plugrt/inspect.h - describing a plan without running it: the header, every
 * tensor (role, type, shapes, place in memory), every layer (plugin key,
 * owner, style, record size, inputs, outputs, workspace, tactic) and the
 * memory plan.
 *
 * Contract
 *   A plan description reads the plan's bytes and checks them as the runtime
 *   does, but re-creates no plugin, so a plan can be described on a machine
 *   that lacks its plugins. prt_plan_info_read/load make an object the caller
 *   frees with prt_plan_info_destroy (NULL accepted); every string and array
 *   it hands out stays valid until then. The *_get functions fill a
 *   caller-side struct member by member up to its struct_size (set it to
 *   sizeof the struct; older, shorter structs keep working).
 *
 *   Errors: read/load write the reason into err (cap bytes); the getters
 *   return PRT_STATUS_INVALID_ARGUMENT for an index out of range or a
 *   struct_size below the header. Threads: a description is read-only; any
 *   number of threads may query it.
 */
#ifndef PLUGRT_INSPECT_H
#define PLUGRT_INSPECT_H

#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_plan_info prt_plan_info;

PRT_API PRT_NODISCARD prt_status prt_plan_info_read(const void *data, size_t len, prt_plan_info **out, char *err,
                                                   size_t cap);
PRT_API PRT_NODISCARD prt_status prt_plan_info_load(const char *path, prt_plan_info **out, char *err, size_t cap);
PRT_API void prt_plan_info_destroy(prt_plan_info *pi);

typedef struct prt_plan_summary {
    uint32_t struct_size;
    uint32_t abi_version;
    uint32_t read_version;       /* the oldest reader that can load the plan */
    uint32_t write_version;      /* the format the writer produced */
    const char *library_version; /* plugrt that built it */
    prt_precision precision;
    prt_device device;
    uint64_t workspace_limit;    /* 0: none */
    uint64_t arena_bytes;        /* memory plan: activations per context */
    uint64_t workspace_bytes;    /* memory plan: the largest layer workspace */
    uint64_t weight_bytes;       /* constants */
    uint64_t plan_bytes;
    int32_t nb_tensors;
    int32_t nb_layers;
    /* Appended (read only when struct_size covers them). */
    int32_t nb_folded;           /* layers folded into weights at build time (prt_plan_info_folded) */
    int32_t reserved_;
} prt_plan_summary;

PRT_API PRT_NODISCARD prt_status prt_plan_info_summary(const prt_plan_info *pi, prt_plan_summary *out);

typedef enum prt_tensor_role {
    PRT_TENSOR_INPUT = 0,
    PRT_TENSOR_OUTPUT = 1,
    PRT_TENSOR_ACTIVATION = 2,
    PRT_TENSOR_CONSTANT = 3
} prt_tensor_role;

typedef struct prt_plan_tensor {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *name;
    prt_tensor_role role;
    prt_dtype dtype;
    prt_format format;
    int32_t reserved_;
    prt_dims dims;           /* extents known at build time, -1 elsewhere */
    prt_dims min, opt, max;  /* over the profile */
    uint64_t offset, bytes;  /* activations: in the arena; constants: in the weights; inputs/outputs: 0, 0 */
    /* Appended (read only when struct_size covers them). */
    int32_t nb_values;       /* shape values the tensor carries before the run, or -1 (none) */
    int32_t reserved2_;
    prt_dims values_min, values_opt, values_max; /* shape-value inputs: the profile's bounds of the values */
} prt_plan_tensor;

PRT_API PRT_NODISCARD prt_status prt_plan_info_tensor(const prt_plan_info *pi, int32_t index, prt_plan_tensor *out);

typedef enum prt_layer_kind {
    PRT_LAYER_PLUGIN = 0,
    PRT_LAYER_CAST = 1 /* a type conversion the builder inserted */
} prt_layer_kind;

/* How a layer's tactic was chosen. */
typedef enum prt_tactic_source {
    PRT_TACTIC_TIMED = 0,      /* timed on the target device: the fastest */
    PRT_TACTIC_FROM_CACHE = 1, /* the fastest by the times in the timing cache */
    PRT_TACTIC_ONLY = 2,       /* the plugin listed one */
    PRT_TACTIC_UNTIMED = 3,    /* timing was off: the first listed */
    PRT_TACTIC_NO_DEVICE = 4,  /* no target device to time on: the first listed */
    PRT_TACTIC_FAILED = 5      /* every candidate failed when timed: the first listed */
} prt_tactic_source;

typedef struct prt_plan_layer {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *name;
    prt_layer_kind kind;
    prt_plugin_style style;      /* plugin layers */
    const char *plugin;          /* plugin layers: creator name, version, namespace, owner; else "" */
    const char *version;
    const char *plugin_namespace;
    const char *owner;           /* the library (or "static") that provided the creator at build time */
    uint64_t record_bytes;       /* size of its plugin record in the plan */
    prt_dtype cast_from, cast_to;/* cast layers */
    int32_t nb_inputs, nb_outputs;
    const int32_t *inputs;       /* tensor indices; -1 for an absent optional input */
    const int32_t *outputs;
    uint64_t workspace;          /* bytes it asked for at build time */
    /* Appended (read only when struct_size covers them): the tactic the
     * builder chose (docs/plugin-abi.md, "Tactics"). */
    int32_t tactic;              /* 0: none recorded, the plugin's default */
    prt_tactic_source tactic_source;
    const char *tactic_name;     /* the plugin's name for it; "" when none */
    int32_t nb_tactics;          /* the candidates the plugin listed, with their times */
    int32_t reserved2_;
    const int32_t *tactic_ids;
    const uint64_t *tactic_ns;   /* median ns; 0: not timed; UINT64_MAX: failed when timed */
} prt_plan_layer;

PRT_API PRT_NODISCARD prt_status prt_plan_info_layer(const prt_plan_info *pi, int32_t index, prt_plan_layer *out);

/* A layer that read only constants, ran once at build time and became weights. */
typedef struct prt_plan_folded {
    uint32_t struct_size;
    uint32_t abi_version;
    const char *layer;
    const char *plugin;
    const char *version;
    int32_t nb_outputs;
    int32_t reserved_;
    const char *const *outputs;  /* names of the constants it became */
} prt_plan_folded;

PRT_API PRT_NODISCARD prt_status prt_plan_info_folded(const prt_plan_info *pi, int32_t index, prt_plan_folded *out);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_INSPECT_H */
