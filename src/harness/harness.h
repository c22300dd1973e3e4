/*
 * harness/harness.h - readers for the conformance harness: PluginConfig YAML
 * (pcfg.c), Polygraphy golden-IO JSON (golden.c), strict base64 (base64.c),
 * and the evaluator for dimension expressions and constraints (dimexpr.c).
 * The formats accepted are described in docs/conformance.md.
 *
 * Contract
 *   A loaded config or golden file is one object that owns all of its
 *   memory (strings, arrays, decoded tensors); every pointer inside it stays
 *   valid until its destroy function, which accepts NULL. Loaders are
 *   atomic: on failure *out is untouched, nothing leaks, and the message is
 *   read with prt_last_error(out) (the address of the caller's pointer).
 *   Messages name the file, the line and column (YAML) or the JSON path,
 *   what was expected and what was found. Lenient on purpose: unknown keys
 *   and irregular but understandable layouts become warnings in
 *   `warnings`, not errors. Nothing here keeps global state.
 *
 * A runner iterates:
 *   for v in cfg->versions[0..nb_versions)            (prt_pcfg_version)
 *     golden = golden_io_path resolved with prt__pcfg_resolve_path
 *     for c in v->configs[0..nb_configs)             (prt_pcfg_config)
 *       gc = prt__golden_find_config(golden, c->name)  (may be NULL)
 *       for k in gc->cases[0..nb_cases)              (prt_golden_case)
 *         inputs: for each name in v->inputs, prt__golden_case_input(k, name)
 *         (NULL: optional input left out); attributes from k->attrs, or,
 *         when it has none, from c->attrs; compare k->outputs named in
 *         c->output_types (all when it has none) with v's tolerances.
 */
#ifndef PLUGRT_HARNESS_HARNESS_H
#define PLUGRT_HARNESS_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/npy.h"
#include "plugrt/status.h"
#include "plugrt/tensor.h"

/* ---- arena: many small allocations freed at once (arena.c) ------------------ */

typedef struct prt__arena_block prt__arena_block;
typedef struct prt__arena {
    prt__arena_block *head;
} prt__arena;

/* Zeroed, 16-byte aligned; NULL when out of memory. */
void *prt__arena_alloc(prt__arena *a, size_t n);
/* A NUL-terminated copy of s[0..n). */
char *prt__arena_strndup(prt__arena *a, const char *s, size_t n);
void prt__arena_free(prt__arena *a);

/* ---- base64 (base64.c) --------------------------------------------------------- */

/* Strict RFC 4648 base64 (standard alphabet, '=' padding to a multiple of 4
 * characters, no whitespace, unused bits zero). On success *out is
 * allocated with prt__malloc (at least one byte) and *out_len is set. On
 * failure `err` receives a message naming the offset and the character. */
prt_status prt__base64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len,
                              char *err, size_t err_cap);

/* ---- PluginConfig YAML (pcfg.c) ------------------------------------------------ */

/* One bound of a range string such as "=1, =pinf": value (+-INFINITY for
 * pinf / ninf) and whether the bound itself is allowed ("=" prefix). */
typedef struct prt_pcfg_bound {
    double value;
    int inclusive;
} prt_pcfg_bound;

/* min / max strings of input_dim_range, attribute_dim_range or a range in
 * attribute_options, as written and parsed. A string that does not parse
 * leaves nb_* at 0 and adds a warning. */
typedef struct prt_pcfg_range {
    const char *name; /* input or attribute the range belongs to */
    const char *min_text, *max_text; /* NULL when absent */
    int nb_min, nb_max;
    prt_pcfg_bound *min, *max;
} prt_pcfg_range;

/* A YAML scalar: its text, and its value when it reads as a number
 * (is_number) or, more narrowly, as a 64-bit integer (is_int). */
typedef struct prt_pcfg_scalar {
    const char *text;
    int is_number, is_int;
    double num;
    int64_t i;
} prt_pcfg_scalar;

/* name: value string (attribute_types, output_dims, input_types ...). */
typedef struct prt_pcfg_pair {
    const char *key;
    const char *value;
} prt_pcfg_pair;

/* name: integer (input_dims, attribute_length, attribute_dims). */
typedef struct prt_pcfg_count {
    const char *key;
    int64_t value;
} prt_pcfg_count;

/* One entry of supported_input_types: a named map input -> type. */
typedef struct prt_pcfg_combo {
    const char *name;
    int nb_types;
    prt_pcfg_pair *types;
} prt_pcfg_combo;

typedef enum prt_pcfg_option_kind {
    PRT_PCFG_OPTION_RANGE = 0,      /* min / max strings */
    PRT_PCFG_OPTION_ENUM = 1,       /* a list of allowed values */
    PRT_PCFG_OPTION_FROM_SHAPE = 2, /* value taken from a shape: from_shape: "W_1" */
    PRT_PCFG_OPTION_OTHER = 3       /* not understood (a warning says why) */
} prt_pcfg_option_kind;

/* attribute_options entry of a version. */
typedef struct prt_pcfg_option {
    const char *name;
    prt_pcfg_option_kind kind;
    prt_pcfg_range range;     /* RANGE */
    int nb_values;            /* ENUM */
    prt_pcfg_scalar *values;
    const char *from_shape;   /* FROM_SHAPE */
} prt_pcfg_option;

/* attribute_options entry of a config: a fixed value (scalar or list), a
 * shape string, and/or a list of values to try (choices). */
typedef struct prt_pcfg_config_attr {
    const char *name;
    int has_value;
    int value_is_list;        /* value: [0.1, 0.2] */
    int nb_values;            /* 1 for a scalar value */
    prt_pcfg_scalar *values;
    const char *shape;        /* "1", "100, 128"; NULL when absent */
    int nb_choices;           /* axis: [-1, 0, 1] */
    prt_pcfg_scalar *choices;
} prt_pcfg_config_attr;

typedef struct prt_pcfg_config {
    const char *name;
    int nb_input_types;
    prt_pcfg_pair *input_types;
    int nb_attrs;
    prt_pcfg_config_attr *attrs;
    int nb_output_types; /* 0: compare every output */
    prt_pcfg_pair *output_types;
    /* Constraints that hold for this config's cases on top of the version's
     * (e.g. a channel count that must divide by this config's group). */
    int nb_input_dim_constraints;
    const char **input_dim_constraints;
} prt_pcfg_config;

/* Tolerances that a file leaves out are NAN. */
typedef struct prt_pcfg_version {
    const char *version;   /* the key under versions: "1" */
    const char *interface; /* the version's own, else the file's; may be NULL */
    int line;              /* where the version starts in the file */
    int nb_inputs;
    const char **inputs;
    int nb_outputs;
    const char **outputs;
    int nb_input_dims;
    prt_pcfg_count *input_dims;
    int nb_input_dim_constraints;
    const char **input_dim_constraints;
    int nb_input_dim_ranges;
    prt_pcfg_range *input_dim_ranges;
    int nb_combos;
    prt_pcfg_combo *combos; /* supported_input_types */
    int nb_output_dims;
    prt_pcfg_pair *output_dims;
    int nb_attributes;
    const char **attributes;
    int nb_attribute_types;
    prt_pcfg_pair *attribute_types;
    int nb_attribute_lengths;
    prt_pcfg_count *attribute_lengths; /* -1: any length */
    int nb_attribute_dims;
    prt_pcfg_count *attribute_dims;    /* rank of an array attribute */
    int nb_options;
    prt_pcfg_option *options;          /* attribute_options */
    int nb_attribute_dim_ranges;
    prt_pcfg_range *attribute_dim_ranges;
    int nb_attribute_constraints;
    const char **attribute_constraints;
    int nb_attributes_required;
    const char **attributes_required;
    const char *golden_io_path;
    const char *golden_reference_script;
    double abs_tol, rel_tol, fp16_atol, fp16_rtol, bf16_atol, bf16_rtol;
    int nb_configs;
    prt_pcfg_config *configs;
} prt_pcfg_version;

typedef struct prt_pcfg {
    const char *path; /* as given to the loader; "<memory>" for text */
    const char *dir;  /* folder of path ("." when it has none) */
    const char *name;
    const char *interface; /* top-level interface, may be NULL */
    const char *plugin_namespace; /* top-level "namespace", NULL when absent */
    int nb_versions;
    prt_pcfg_version *versions;
    int nb_warnings;
    const char **warnings; /* "file:line:col: message" */
    prt__arena arena;
} prt_pcfg;

prt_status prt__pcfg_load_file(const char *path, prt_pcfg **out);
/* `name` labels messages (a file name or "<memory>"). */
prt_status prt__pcfg_load_mem(const char *text, size_t len, const char *name, prt_pcfg **out);
void prt__pcfg_destroy(prt_pcfg *cfg);

const prt_pcfg_version *prt__pcfg_find_version(const prt_pcfg *cfg, const char *version);
/* The entry named `key` in a pair / count / range array or the options, or NULL. */
const char *prt__pcfg_pair_get(const prt_pcfg_pair *p, int nb, const char *key);
const prt_pcfg_count *prt__pcfg_count_get(const prt_pcfg_count *p, int nb, const char *key);
const prt_pcfg_range *prt__pcfg_range_get(const prt_pcfg_range *p, int nb, const char *name);
const prt_pcfg_option *prt__pcfg_option_get(const prt_pcfg_version *v, const char *name);
/* Parse "=1, 0.5, =pinf" into bounds; returns the count, or -1 when the
 * text is not a list of bounds or holds more than `cap`. */
int prt__pcfg_parse_bounds(const char *text, prt_pcfg_bound *out, int cap);
/* 1 when value lies inside [min, max] of bound i (honouring inclusive). */
int prt__pcfg_bounds_allow(const prt_pcfg_bound *min, const prt_pcfg_bound *max, double value);
/* "float32" -> PRT_DTYPE_F32 ("float16", "bfloat16", "int8", "uint8",
 * "int32", "int64", "bool"); PRT_STATUS_NOT_FOUND for others ("char"). */
prt_status prt__pcfg_dtype(const char *name, prt_dtype *out);
/* A golden_io_path relative to the YAML: tries <dir>/<path>, then
 * <dir>/<basename>, then <path> as given; writes the first that exists to
 * buf (NUL-terminated) and returns 1, or 0 when none exists. */
int prt__pcfg_resolve_path(const prt_pcfg *cfg, const char *path, char *buf, size_t cap);

/* ---- dimension expressions (dimexpr.c) ---------------------------------------- */

/* Symbols an expression may name: `name` with values[0..nb). An
 * identifier "name_K" (K decimal) means values[K] of `name`; a bare
 * identifier means values[0] of an entry with exactly that name. Input
 * dims go in as (input name, its extents); scalar attributes as (name, its
 * values); array attributes as (name, their shape) - the caller decides. */
typedef struct prt_dimexpr_sym {
    const char *name;
    int nb;
    const int64_t *values;
} prt_dimexpr_sym;

/* Grammar (integers throughout, overflow is an error):
 *   constraint := expr ( "==" | "!=" | "<=" | ">=" | "<" | ">" | "MULTIPLE_OF" ) expr
 *   list       := expr ( "," expr )*
 *   expr       := term ( ("+" | "-") term )*
 *   term       := unary ( ("*" | "/" | "%") unary )*     ("/" floors, by zero: error)
 *   unary      := "-" unary | primary
 *   primary    := integer | identifier | "(" expr ")"
 * A symbol that is not in the table fails with PRT_STATUS_NOT_FOUND and
 * names it, so a caller can tell "cannot check" from "false". `err` may be
 * NULL. */
prt_status prt__dimexpr_eval(const char *text, const prt_dimexpr_sym *syms, int nb_syms,
                             int64_t *out, char *err, size_t err_cap);
prt_status prt__dimexpr_eval_list(const char *text, const prt_dimexpr_sym *syms, int nb_syms,
                                  prt_dims *out, char *err, size_t err_cap);
/* *holds = 1 when the constraint is true, 0 when false. */
prt_status prt__dimexpr_check(const char *text, const prt_dimexpr_sym *syms, int nb_syms,
                              int *holds, char *err, size_t err_cap);

/* Check input dims against a version: for every symbol that names an
 * input, its rank (input_dims) and each extent against input_dim_range;
 * then every input_dim_constraint. Constraints that name a symbol missing
 * from `syms` are skipped and counted in *nb_skipped (may be NULL).
 * PRT_STATUS_SHAPE_MISMATCH names the first rule broken, e.g.
 * "input \"offset\" dim 1 = 1 breaks min \"=1, =2, =1, =1\"" or
 * "constraint \"mask_0 == x_0\" is false"; BAD_FORMAT for a
 * constraint that does not parse. */
prt_status prt__pcfg_check_inputs(const prt_pcfg_version *v, const prt_dimexpr_sym *syms, int nb_syms,
                                  int *nb_skipped, char *err, size_t err_cap);

/* ---- Polygraphy golden-IO JSON (golden.c) --------------------------------------- */

typedef struct prt_golden_tensor {
    const char *name;
    prt_npy_array array; /* owned by the golden object */
} prt_golden_tensor;

typedef enum prt_golden_attr_kind {
    PRT_GOLDEN_ATTR_ARRAY = 0,  /* a base64 .npy */
    PRT_GOLDEN_ATTR_INT = 1,    /* JSON integer: array is <i8, shape () */
    PRT_GOLDEN_ATTR_FLOAT = 2,  /* JSON number with a fraction: <f8, shape () */
    PRT_GOLDEN_ATTR_BOOL = 3,   /* JSON true/false: |b1, shape () */
    PRT_GOLDEN_ATTR_LIST = 4,   /* JSON list of numbers/bools: 1-D <i8, <f8 or |b1 */
    PRT_GOLDEN_ATTR_STRING = 5  /* JSON string: `text`, array empty */
} prt_golden_attr_kind;

typedef struct prt_golden_attr {
    const char *name;
    prt_golden_attr_kind kind;
    prt_npy_array array;
    const char *text;
} prt_golden_attr;

typedef struct prt_golden_case {
    int nb_inputs;
    prt_golden_tensor *inputs;
    int nb_attrs;
    prt_golden_attr *attrs;
    int nb_outputs;
    prt_golden_tensor *outputs;
} prt_golden_case;

typedef struct prt_golden_config {
    const char *name;
    int nb_cases;
    prt_golden_case *cases;
} prt_golden_config;

typedef struct prt_golden {
    const char *path;
    int nb_configs;
    prt_golden_config *configs;
    int nb_warnings;
    const char **warnings;
    prt__arena arena;
} prt_golden;

prt_status prt__golden_load_file(const char *path, prt_golden **out);
prt_status prt__golden_load_mem(const char *text, size_t len, const char *name, prt_golden **out);
void prt__golden_destroy(prt_golden *g);
const prt_golden_config *prt__golden_find_config(const prt_golden *g, const char *name);
const prt_golden_tensor *prt__golden_case_input(const prt_golden_case *c, const char *name);
const prt_golden_tensor *prt__golden_case_output(const prt_golden_case *c, const char *name);
const prt_golden_attr *prt__golden_case_attr(const prt_golden_case *c, const char *name);

#endif
