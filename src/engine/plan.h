/*
 * engine/plan.h - the plan file: a serialized engine.
 *
 * Format (docs/engine-format.md says the same at more length)
 *
 *   Every integer is fixed-width little-endian; strings are a u32 byte count
 *   and the bytes (no NUL, and no NUL inside); nothing is a copied C struct.
 *
 *   Header, 64 bytes:
 *     0  u8[8]  magic "PLUGRTPL"
 *     8  u32    read version: the oldest reader that can load this plan:
 *               1, or 2 when a layer has an absent optional input or leaves
 *               outputs out (older readers refuse it with a clear message)
 *     12 u32    write version: the format the writer produced (3);
 *               informational - any value >= the read version loads
 *     16 u64    total length of the plan in bytes, header included
 *     24 u64    checksum: FNV-1a 64 over bytes [64, total length)
 *     32 u32    header size (64)
 *     36 u32    number of sections
 *     40 u8[24] reserved, must be zero
 *
 *   Then the sections, back to back, each:
 *     u32 tag (four ASCII bytes), u32 flags (bit 0: optional - a reader that
 *     does not know the tag skips it; other bits must be zero), u64 payload
 *     length, payload.
 *   A reader refuses an unknown tag without the optional bit. Version 1
 *   sections, each exactly once and in this order:
 *
 *   "META" str library version, u32 precision (0 fp32, 1 fp16), u32 device
 *          (0 cpu, 1 cuda), u64 workspace limit, u32 number of optimization
 *          profiles (1)
 *   "EXPR" u32 n, then n shape expression nodes of 20 bytes: u8 kind
 *          (0 constant, 1 input extent, 2 operation, 3 data-dependent), u8 op
 *          (prt_expr_op), u16 0, i32 a, i32 b, i64 value.
 *            constant: value. input extent: a = input number, b = dim.
 *            operation: op(node a, node b). data-dependent: a = the node of
 *            its upper bound. Operands always precede the node.
 *   "TENS" u32 n, then per tensor: str name, u32 role (0 input, 1 output,
 *          2 activation, 3 constant), u32 dtype, u32 format, i32 nb dims,
 *          per dim {i32 expression node, i64 extent or -1}, then the min,
 *          opt and max extents (nb dims i64 each, three times). Inputs are
 *          numbered in the order they appear here.
 *   "LAYR" u32 n, then per layer in execution order: str name, u32 kind
 *          (0 plugin, 1 cast), i32 plugin record index (-1 for a cast),
 *          u32 cast from dtype, u32 cast to dtype, u32 nb inputs, i32 tensor
 *          indices, u32 nb outputs, i32 tensor indices, u64 workspace bytes.
 *          Read version 2: a plugin layer's input index may be -1, an absent
 *          optional input, and its outputs may be fewer than the plugin's
 *          (outputs left out at the end); both are checked against the
 *          plugin's get_io_info at load.
 *   "VALU" (read version 2; only when some tensor has shape values) u32 n,
 *          then per tensor with values: u32 tensor index, u32 nb values
 *          (0..8), nb i32 expression nodes; for an input (a shape-value
 *          input) then the profile's min, opt and max values (nb i64 each,
 *          three times). The tensor is int32 or int64 with fixed dims
 *          holding nb elements. Value j of input k is expression leaf
 *          (nb inputs + k, j). A plugin layer whose outputs all have values
 *          is not enqueued: contexts write the values.
 *   "FOLD" (optional flag set: older readers skip it; only when layers were
 *          folded) u32 n, then per layer folded into weights at build time:
 *          str layer name, str plugin, str version, u32 nb outputs, per
 *          output str the name of the constant it became. For `inspect`.
 *   "TACT" (write version 3; optional flag set: older readers skip it and
 *          run every layer's default kernel; only when a layer has a
 *          tactic) u32 n, then per layer with a tactic, in layer order:
 *          u32 layer index (a plugin layer), i32 tactic (> 0), u32 source
 *          (0 timed, 1 timing cache, 2 the only candidate, 3 timing off,
 *          4 no device to time on, 5 every candidate failed; 3-5 take the
 *          first), str the plugin's name for it ("" when none), u32 nb
 *          candidates (1..64), per candidate i32 id (> 0, distinct) and
 *          u64 median time in ns (0: not timed, 2^64-1: failed). The
 *          tactic is one of the candidates. Loading requires the plugin to
 *          list it again and hands it to the plugin (set_tactic).
 *   "PLUG" u32 n, then per record: u64 length, the plugin record
 *          (src/registry/adapter.h: u8 style, str name, str version, str
 *          namespace, str owner - the library that provided the creator -
 *          then the fields or the blob).
 *   "MEMP" u64 arena bytes, u64 workspace bytes, u32 n (= tensors), per
 *          tensor u64 offset, u64 bytes: activations are placed in the arena,
 *          constants in the weights; inputs and outputs are 0, 0.
 *   "WGHT" zero padding up to the next file offset that is a multiple of 64,
 *          then the weights; each constant starts at a multiple of 64
 *          from the weights' start.
 *
 *   Loading checks the header, the checksum and every count, index, enum and
 *   offset before anything is used; plugins are re-created from their records
 *   last, and each is asked again for its output types, output shapes and
 *   workspace, which must agree with the plan (runtime.c).
 */
#ifndef PLUGRT_ENGINE_PLAN_H
#define PLUGRT_ENGINE_PLAN_H

#include "plugrt/engine.h"

#define PRT__PLAN_MAGIC "PLUGRTPL"
#define PRT__PLAN_READ_VERSION 1u  /* what this writer needs from a reader, at least */
#define PRT__PLAN_WRITE_VERSION 3u /* the newest format this code reads and writes */
#define PRT__PLAN_HEADER_SIZE 64u
#define PRT__PLAN_WEIGHT_ALIGN 64u

enum { PRT__NODE_CONST = 0, PRT__NODE_LEAF = 1, PRT__NODE_OP = 2, PRT__NODE_DDEP = 3 };
enum { PRT__ROLE_INPUT = 0, PRT__ROLE_OUTPUT = 1, PRT__ROLE_ACTIVATION = 2, PRT__ROLE_CONSTANT = 3 };
enum { PRT__LAYER_PLUGIN = 0, PRT__LAYER_CAST = 1 };

typedef struct prt__pnode {
    uint8_t kind;
    uint8_t op;
    int32_t a, b;
    int64_t v;
} prt__pnode;

typedef struct prt__ptensor {
    char *name;
    uint32_t role;
    prt_dtype dtype;
    prt_format format;
    int32_t nb_dims;
    int32_t expr[PRT_MAX_DIMS];
    prt_dims dims; /* extents known at build time, -1 elsewhere */
    prt_dims min, opt, max;
    uint64_t offset, bytes; /* MEMP */
    int32_t nb_vals;               /* VALU: shape values known before the run, or -1 */
    int32_t val[PRT_MAX_DIMS];     /* expression node of each value */
    prt_dims vmin, vopt, vmax;     /* shape-value inputs: the profile's bounds of the values */
} prt__ptensor;

/* How a layer's tactic was chosen (TACT; prt_tactic_source in engine.h). */
enum {
    PRT__TACTIC_TIMED = 0,     /* measured on the target device; the fastest */
    PRT__TACTIC_CACHE = 1,     /* the times came from the timing cache */
    PRT__TACTIC_ONLY = 2,      /* the plugin listed one: nothing to time */
    PRT__TACTIC_UNTIMED = 3,   /* timing was off: the first listed */
    PRT__TACTIC_NO_DEVICE = 4, /* no target device to time on: the first listed */
    PRT__TACTIC_FAILED = 5,    /* every candidate failed when timed: the first listed */
    PRT__TACTIC_SOURCE_COUNT_
};
#define PRT__TACTIC_NS_FAILED UINT64_MAX /* a candidate that failed when timed */

/* A layer's tactic (TACT). */
typedef struct prt__ptactic {
    int32_t tactic;  /* the chosen id, > 0 and one of ids */
    uint32_t source; /* PRT__TACTIC_* */
    char *name;      /* the plugin's name for it; "" when none */
    int32_t nb;      /* candidates, 1..PRT__PLAN_MAX_TACTICS */
    int32_t *ids;    /* as the plugin listed them */
    uint64_t *ns;    /* per candidate: median time in ns; 0 not timed; PRT__TACTIC_NS_FAILED */
} prt__ptactic;
#define PRT__PLAN_MAX_TACTICS 64

typedef struct prt__player {
    char *name;
    uint32_t kind;
    int32_t plugin;
    prt_dtype cast_from, cast_to;
    int32_t nb_in, nb_out;
    int32_t *in, *out;
    uint64_t workspace;
    prt__ptactic *tactic; /* TACT: NULL for the plugin's default (tactic 0) */
} prt__player;

void prt__ptactic_free(prt__ptactic *t); /* NULL ok */

/* A layer folded into weights at build time (FOLD). */
typedef struct prt__pfold {
    char *layer, *plugin, *version;
    int32_t nb_out;
    char **outputs; /* names of the constants it became */
} prt__pfold;

typedef struct prt__precord {
    uint8_t *data;
    size_t len;
} prt__precord;

/* The engine description a plan holds. */
typedef struct prt__plan {
    uint32_t read_version; /* header: 1, or 2 when a layer uses optional I/O */
    char *lib_version;
    uint32_t precision, device;
    uint64_t workspace_limit;
    int32_t nb_nodes, nb_tensors, nb_layers, nb_records, nb_inputs;
    prt__pnode *nodes;
    prt__ptensor *tensors;
    prt__player *layers;
    prt__precord *records;
    uint64_t arena_size, workspace_size;
    int32_t nb_folds;
    prt__pfold *folds;
    uint8_t *weights; /* 64-byte aligned; prt__plan_free frees it */
    void *weights_block;
    uint64_t weights_len;
} prt__plan;

void prt__plan_free(prt__plan *p);

/* The plan's bytes: a new buffer (prt__free) of *len bytes. */
prt_status prt__plan_write(const prt__plan *p, uint8_t **out, size_t *len, char *err, size_t cap);

/* Parse and check every byte; on success *out is a new plan. Plugins are not
 * re-created here (prt_engine_deserialize does that from the records). */
prt_status prt__plan_read(const void *data, size_t len, prt__plan **out, char *err, size_t cap);

/* FNV-1a 64. */
uint64_t prt__plan_checksum(const uint8_t *p, size_t n);

/* Per graph input its dims, then per graph input its shape values (nb 0
 * for inputs without values), at the profile's min (point 0), opt (1) or max
 * (2): the `in` array of prt__plan_eval, 2 * nb_inputs entries. */
void prt__plan_inputs_at(const prt__plan *p, int point, prt_dims *in);

/* Evaluate every node given the input extents (in[i] for input i, and
 * in[nb_inputs + i] for its shape values) and the
 * values of data-dependent nodes already known (ddep_known[k] non-zero:
 * vals[k] holds it). vals receives one value per node; a node that cannot
 * be computed (division by zero, overflow, an extent outside in[], or an
 * operand that cannot) gets PRT__EVAL_BAD. Returns the number of such nodes. */
#define PRT__EVAL_BAD INT64_MIN
int32_t prt__plan_eval(const prt__plan *p, const prt_dims *in, int64_t *vals, const uint8_t *ddep_known);

/* A plan tensor as plugins see it at build time (dims and profile ranges). */
void prt__plan_dyn_desc(const prt__ptensor *t, prt_dyn_tensor_desc *d);

/* Allocation aligned to 64 bytes; *block receives what to free. */
void *prt__plan_aligned_alloc(size_t n, void **block);

#endif
