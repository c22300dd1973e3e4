/*
 * onnx/onnx_impl.h - the inside of the ONNX reader and importer, shared by
 * model.c (protobuf decoding and checks), tensor.c (tensor payloads),
 * lookup.c (creator lookup) and import.c (network building).
 */
#ifndef PLUGRT_ONNX_IMPL_H
#define PLUGRT_ONNX_IMPL_H

#include "onnx_subset.pb-c.h"
#include "plugrt/onnx.h"

/* ONNX TensorProto.DataType codes. */
enum {
    PRT__ONNX_UNDEFINED = 0, PRT__ONNX_FLOAT = 1, PRT__ONNX_UINT8 = 2, PRT__ONNX_INT8 = 3,
    PRT__ONNX_UINT16 = 4, PRT__ONNX_INT16 = 5, PRT__ONNX_INT32 = 6, PRT__ONNX_INT64 = 7,
    PRT__ONNX_STRING = 8, PRT__ONNX_BOOL = 9, PRT__ONNX_FLOAT16 = 10, PRT__ONNX_DOUBLE = 11,
    PRT__ONNX_UINT32 = 12, PRT__ONNX_UINT64 = 13, PRT__ONNX_COMPLEX64 = 14, PRT__ONNX_COMPLEX128 = 15,
    PRT__ONNX_BFLOAT16 = 16
};

/* ONNX AttributeProto.AttributeType codes. */
enum {
    PRT__ONNX_ATTR_UNDEFINED = 0, PRT__ONNX_ATTR_FLOAT = 1, PRT__ONNX_ATTR_INT = 2, PRT__ONNX_ATTR_STRING = 3,
    PRT__ONNX_ATTR_TENSOR = 4, PRT__ONNX_ATTR_GRAPH = 5, PRT__ONNX_ATTR_FLOATS = 6, PRT__ONNX_ATTR_INTS = 7,
    PRT__ONNX_ATTR_STRINGS = 8, PRT__ONNX_ATTR_TENSORS = 9, PRT__ONNX_ATTR_GRAPHS = 10,
    PRT__ONNX_ATTR_SPARSE_TENSOR = 11, PRT__ONNX_ATTR_SPARSE_TENSORS = 12, PRT__ONNX_ATTR_TYPE_PROTO = 13,
    PRT__ONNX_ATTR_TYPE_PROTOS = 14
};

/* Largest extent accepted in a model (2^40): anything larger is a corrupt
 * or hostile file, not a tensor that fits in memory. */
#define PRT__ONNX_MAX_EXTENT ((int64_t)1 << 40)

/* A tensor value decoded from a TensorProto: ONNX element type, extents and
 * `nbytes` of little-endian packed elements (bool as one byte each). */
typedef struct prt__onnx_value {
    int32_t onnx_type;
    prt_dims dims;
    void *data; /* prt__malloc'ed; NULL when nbytes == 0 */
    size_t nbytes;
} prt__onnx_value;

struct prt_onnx_model {
    PrtOnnx__Model *pb;
    char *base_dir;        /* external data resolves here; NULL: no external data allowed */
    int32_t *order;        /* node indices in a topological order */
    int64_t default_opset; /* version of the "" / "ai.onnx" domain; 0 if not imported */
};

/* Write the message into err (cap bytes, NULL allowed) and return s. */
prt_status prt__onnx_fail(char *err, size_t cap, prt_status s, const char *fmt, ...) PRT_PRINTF(4, 5);

/* "" for NULL; protobuf-c leaves absent strings NULL. */
static inline const char *prt__onnx_s(const char *s) { return s ? s : ""; }

/* A printable name for node `i`: its name, else "#i (op_type)". */
const char *prt__onnx_node_label(const PrtOnnx__Node *n, int32_t i, char *buf, size_t cap);

/* Element size of an ONNX type in the packed form, 0 if plugrt cannot hold
 * it (strings, complex, float8, 4-bit). */
size_t prt__onnx_type_size(int32_t onnx_type);
const char *prt__onnx_type_name(int32_t onnx_type);
/* The plugrt dtype for an ONNX type; 0 if there is none. */
int prt__onnx_type_to_dtype(int32_t onnx_type, prt_dtype *out);
int32_t prt__onnx_type_from_dtype(prt_dtype t);
const char *prt__onnx_attr_type_name(int32_t type);

/* Decode a TensorProto (typed fields, raw_data or external data under
 * `base_dir`). `what` names the tensor in messages. */
prt_status prt__onnx_value_decode(const PrtOnnx__Tensor *t, const char *base_dir, const char *what,
                                  prt__onnx_value *out, char *err, size_t cap);
void prt__onnx_value_free(prt__onnx_value *v);

/* Version of `domain` ("" and "ai.onnx" are one) the model imports; 0 if none. */
int64_t prt__onnx_model_opset(const prt_onnx_model *m, const char *domain);

/* Creator lookup (lookup.c). */
typedef struct prt__onnx_alias {
    const char *domain, *op_type;         /* what exporters write */
    const char *plugin, *plugin_namespace; /* what is registered here */
    const char *const *renames;           /* attribute pairs {from, to, ..., NULL} */
} prt__onnx_alias;

typedef struct prt__onnx_found {
    const prt_plugin_creator *creator;
    int custom;                  /* 1: custom-op fallback, fields typed by the schema */
    const prt__onnx_alias *alias; /* the alias entry used, or NULL */
} prt__onnx_found;

prt_status prt__onnx_lookup(prt_registry *r, const PrtOnnx__Node *node, const char *label, int64_t opset,
                            prt__onnx_found *out, char *err, size_t cap);
/* The largest decimal version <= max_version of (name, namespace); NULL if
 * none. */
const prt_plugin_creator *prt__onnx_find_versioned(prt_registry *r, const char *name, const char *ns,
                                                   int64_t max_version);

/* What the importer knows of a layer output (fuse.c): element type, and
 * extents when the rank is known (-1 for an extent not known at import). */
typedef struct prt__onnx_tinfo {
    int has_dtype;
    prt_dtype dtype;
    int rank_known;
    prt_dims dims;
} prt__onnx_tinfo;
/* 1 and *out filled when the tensor called `name` is known. */
typedef int (*prt__onnx_tinfo_fn)(void *user, const char *name, prt__onnx_tinfo *out);

/* Layer fusion of an imported network (fuse.c, docs/onnx.md): BatchNormalization
 * folded into the Conv before it, fp32 elementwise chains into one
 * plugrt::Elementwise layer, a chain after a Conv into plugrt::FusedConv.
 * *out: a new network (net is not changed), or NULL when nothing was fused;
 * *nb_fused (may be NULL): how many layers went into fused ones. */
prt_status prt__onnx_fuse(const prt_network *net, prt__onnx_tinfo_fn info, void *user, prt_network **out,
                          int32_t *nb_fused, char *err, size_t cap);

#endif
