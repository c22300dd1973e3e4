/*
 * engine/netdef.h - the inside of a prt_network, shared by the network API
 * (network.c), the JSON reader (netjson.c) and the builder (builder.c).
 */
#ifndef PLUGRT_ENGINE_NETDEF_H
#define PLUGRT_ENGINE_NETDEF_H

#include "core/hmap.h"
#include "plugrt/network.h"
#include "registry/adapter.h"

typedef enum prt__tensor_kind {
    PRT__TENSOR_INPUT = 0,    /* a graph input bound by the caller */
    PRT__TENSOR_CONSTANT = 1, /* weights stored in the plan */
    PRT__TENSOR_LAYER = 2     /* produced by a layer */
} prt__tensor_kind;

typedef struct prt__net_tensor {
    char *name;
    prt__tensor_kind kind;
    prt_dtype dtype;     /* inputs and constants; layer outputs: set by the builder */
    prt_dims dims;       /* inputs and constants */
    void *data;          /* constants: owned copy */
    size_t nbytes;
    int32_t producer;    /* layer index for LAYER tensors, else -1 */
    int32_t producer_out;
    int is_output;
    int shape_values;    /* an input whose values the profile bounds (prt_network_add_shape_input) */
} prt__net_tensor;

typedef struct prt__net_layer {
    char *name;
    char *plugin, *version, *plugin_namespace;
    prt_owned_fields *fields; /* validated, normalized copy */
    int32_t nb_in, nb_out;
    int32_t *in, *out;        /* tensor indices; -1: an absent optional input */
    const prt__plugin *proto; /* borrowed; set: the builder clones it instead of creating from fields */
} prt__net_layer;

struct prt_network {
    prt_registry *registry;
    prt__net_tensor *tensors;
    int32_t nb_tensors, cap_tensors;
    prt__net_layer *layers;
    int32_t nb_layers, cap_layers;
    int32_t *outputs; /* tensor indices in marking order */
    int32_t nb_outputs, cap_outputs;
    int32_t nb_inputs;
    prt__hmap names;       /* tensor name -> index (names owned by the tensors) */
    prt__hmap layer_names; /* layer name -> index (names owned by the layers) */
};

/* A layer whose plugin is a clone of `proto` as it is (its fields or blob),
 * for prt_op's one-layer engines. `proto` is borrowed: it must outlive the
 * network. */
prt_status prt__network_add_proto_layer(prt_network *net, const char *layer_name, const prt__plugin *proto,
                                        const char *const *inputs, int32_t nb_inputs, const char *const *outputs,
                                        int32_t nb_outputs);

/* Index of the tensor called `name`, or -1. */
int32_t prt__network_find(const prt_network *net, const char *name);

#endif
