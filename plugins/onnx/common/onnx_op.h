/*
 * onnx/common/onnx_op.h - one field-style plugin implementation behind every
 * ONNX op creator, parameterized by a table row (prt__onnx_def).
 *
 * A family file (elementwise/unary.c, reduce/reduce.c, ...) describes each op
 * version as a row: name, since-version, schema, input/output counts, the
 * size of its parsed-attribute state and four callbacks (init, types, shapes,
 * run). PRT__ONNX_REGISTER_TABLE(defs) turns the rows into creators (name =
 * op type, namespace "", version = since-version) registered statically. The
 * plugin object keeps an owned copy of its normalized fields, which are what
 * it serializes and what clone re-creates it from.
 *
 * Every ONNX op runs on the CPU only for now; enqueue on another device fails
 * with a message naming the op.
 */
#ifndef PLUGRT_ONNX_OP_H
#define PLUGRT_ONNX_OP_H

#include "plugrt/plugin.h"

typedef struct prt__onnx_node prt__onnx_node;
typedef struct prt__onnx_def prt__onnx_def;

/* Bit of a dtype in an input mask. */
#define PRT__ONNX_T(t) (1u << (t))
#define PRT__ONNX_FLOATS (PRT__ONNX_T(PRT_DTYPE_F32) | PRT__ONNX_T(PRT_DTYPE_F16) | PRT__ONNX_T(PRT_DTYPE_BF16))
#define PRT__ONNX_INTS                                                                             \
    (PRT__ONNX_T(PRT_DTYPE_I8) | PRT__ONNX_T(PRT_DTYPE_U8) | PRT__ONNX_T(PRT_DTYPE_I32) |          \
     PRT__ONNX_T(PRT_DTYPE_I64))
#define PRT__ONNX_SIGNED                                                                           \
    (PRT__ONNX_FLOATS | PRT__ONNX_T(PRT_DTYPE_I8) | PRT__ONNX_T(PRT_DTYPE_I32) | PRT__ONNX_T(PRT_DTYPE_I64))
#define PRT__ONNX_NUMERIC (PRT__ONNX_FLOATS | PRT__ONNX_INTS)
#define PRT__ONNX_ALL (PRT__ONNX_NUMERIC | PRT__ONNX_T(PRT_DTYPE_BOOL))
#define PRT__ONNX_BOOL PRT__ONNX_T(PRT_DTYPE_BOOL)

struct prt__onnx_def {
    const char *name;    /* ONNX op type */
    const char *version; /* since-version, decimal */
    const prt_field_schema *schema;
    int32_t nb_fields;
    int32_t min_in, max_in; /* layer inputs; max_in -1: unbounded */
    int32_t nb_out;      /* outputs; init may change node->nb_out */
    uint32_t in_mask;    /* dtypes any data input may have (PRT__ONNX_T bits) */
    size_t state_size;   /* bytes of parsed attributes (node->state), zeroed */
    const void *row;     /* the family's table row */
    /* Parse the normalized fields into node->state; NULL: nothing to parse. */
    prt_status (*init)(prt__onnx_node *n, const prt_fields *fc, prt_msg *err);
    /* Output dtypes; also checks input dtypes against each other. */
    prt_status (*types)(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                        prt_msg *err);
    prt_status (*shapes)(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                         prt_expr_builder *eb, prt_msg *err);
    prt_status (*run)(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                      const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws,
                      prt_exec *ex, prt_msg *err);
    /* Workspace bytes for the max shapes; NULL: none. */
    size_t (*workspace)(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out);
    const char *doc;
    /* Namespace of the creator; NULL: "" (ONNX's default domain). plugrt's
     * own fused ops use "plugrt". */
    const char *ns;
};

struct prt__onnx_node {
    prt_field_plugin base;
    const prt__onnx_def *def;
    prt_fields fc;  /* owned normalized copy; what the plugin serializes */
    void *fc_mem;   /* one allocation behind fc */
    void *state;    /* def->state_size bytes */
    int32_t nb_in;  /* layer inputs, from configure / on_shape_change */
    int32_t nb_out; /* def->nb_out unless init sets another (Split) */
};

/* The parsed state as the family's type. */
#define PRT__ONNX_STATE(n, type) ((type *)(n)->state)

/* Register a table of defs at load time as creators with namespace "". */
void prt__onnx_register(const prt__onnx_def *defs, int32_t nb, prt_plugin_creator *creators,
                        prt_static_creator *nodes);
#define PRT__ONNX_REGISTER_TABLE(defs)                                                            \
    static prt_plugin_creator defs##_creators_[sizeof(defs) / sizeof(defs[0])];                   \
    static prt_static_creator defs##_nodes_[sizeof(defs) / sizeof(defs[0])];                      \
    __attribute__((constructor)) static void defs##_register_(void)                               \
    {                                                                                             \
        prt__onnx_register(defs, (int32_t)(sizeof(defs) / sizeof(defs[0])), defs##_creators_,    \
                           defs##_nodes_);                                                        \
    }

/* Every registered def, in registration order (tests enumerate them). */
int32_t prt__onnx_def_count(void);
const prt__onnx_def *prt__onnx_def_at(int32_t i);

/* ---- schema rows (defaults are file-scope compound literals: static) ------- */
#define PRT__ONNX_F32(nm, dflt, text)                                                             \
    {.name = (nm), .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1,                     \
     .default_data = (const float[]){dflt}, .default_count = 1, .doc = (text)}
#define PRT__ONNX_I64(nm, dflt, text)                                                             \
    {.name = (nm), .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1,                       \
     .default_data = (const int64_t[]){dflt}, .default_count = 1, .doc = (text)}
/* An attribute without a default (absent stays absent). */
#define PRT__ONNX_OPT(nm, ftype, text)                                                            \
    {.name = (nm), .type = (ftype), .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED, .doc = (text)}
/* A required list: an "input:<k>" field the op cannot run without (the
 * importer then names the node's input when it is not known at import). */
#define PRT__ONNX_REQ_LIST(nm, ftype, text)                                                       \
    {.name = (nm), .type = (ftype), .required = 1, .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED, .doc = (text)}
#define PRT__ONNX_REQ_I64(nm, text)                                                               \
    {.name = (nm), .type = PRT_FIELD_INT64, .required = 1, .min_count = 1, .max_count = 1, .doc = (text)}
#define PRT__ONNX_STR(nm, dflt, text)                                                             \
    {.name = (nm), .type = PRT_FIELD_CHAR, .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED,      \
     .default_data = (dflt), .default_count = sizeof(dflt) - 1, .doc = (text)}
/* A row of a family whose callbacks are pre_init, pre_types, pre_shapes,
 * pre_run (and pre_workspace where the family declares one, see
 * PRT__ONNX_DEF_WS). PRT__ONNX_ROW: one output, any dtype. */
#define PRT__ONNX_DEF(nm, ver, rw, sch, nf, minin, maxin, nout, mask, state_type, pre)             \
    {.name = nm, .version = ver, .min_in = minin, .max_in = maxin, .nb_out = nout, .in_mask = (mask), \
     .schema = sch, .nb_fields = nf, .state_size = sizeof(state_type), .row = &(rw),               \
     .init = pre##_init, .types = pre##_types, .shapes = pre##_shapes, .run = pre##_run,           \
     .doc = "ONNX " nm}
#define PRT__ONNX_ROW(nm, ver, rw, sch, nf, minin, maxin, state_type, pre)                          \
    PRT__ONNX_DEF(nm, ver, rw, sch, nf, minin, maxin, 1, PRT__ONNX_ALL, state_type, pre)
#define PRT__ONNX_NFIELDS(s) ((int32_t)(sizeof(s) / sizeof((s)[0])))

/* A CHAR field equal to `s` (exact bytes)? Absent: `dflt`. */
int prt__onnx_str_is(const prt_fields *fc, const char *name, const char *s, int dflt);

/* Index of the CHAR field `name` among names[0..n); absent: dflt; another
 * string: -1 (and err says which strings are allowed, prefixed by the op). */
int prt__onnx_str_enum(const prt__onnx_node *n, const prt_fields *fc, const char *name,
                       const char *const *names, int count, int dflt, prt_msg *err);

/* ---- shared helpers for callbacks ---------------------------------------- */

/* Every input must have input 0's dtype; out[0..nb_out) = that dtype. */
prt_status prt__onnx_types_same(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                prt_msg *err);
/* Output 0 has input 0's shape (and every other output too). */
prt_status prt__onnx_shapes_same(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in,
                                 prt_dims_expr *out, prt_expr_builder *eb, prt_msg *err);
/* Multidirectional (numpy) broadcast of inputs [0, nb) into out. Extents
 * known at build time are checked now, the others at run time. */
prt_status prt__onnx_shapes_bcast(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in,
                                  prt_dims_expr *out, prt_expr_builder *eb, prt_msg *err);
/* Normalize an axis in [-rank, rank) (or [-rank, rank] when `extra`). */
prt_status prt__onnx_axis(const prt__onnx_node *n, const char *what, int64_t axis, int32_t rank, int extra,
                          int32_t *out, prt_msg *err);
/* Up to `cap` values of an integer field (an "input:<k>" shape value or an
 * INTS attribute): their count, or -1 when the field is absent. A field
 * longer than cap fails with a message. */
prt_status prt__onnx_field_ints(const prt__onnx_node *n, const prt_fields *fc, const char *name, int64_t *out,
                                int64_t cap, int64_t *count, prt_msg *err);
/* A known extent, or -1. */
int64_t prt__onnx_known(prt_expr_builder *eb, const prt_expr *e);

#endif /* PLUGRT_ONNX_OP_H */
