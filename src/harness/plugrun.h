/*
 * harness/plugrun.h - what the conformance runner (runner.c) and the golden
 * maker (goldmake.c) share: attribute values of one case and their mapping
 * onto a creator's field schema, input tensors of one case, running a prt_op
 * once on the CPU or on CUDA with host buffers in and out, element access
 * in any dtype, calling a creator's float64 reference (refs.c), and
 * writing a golden-IO JSON (goldwrite.c).
 *
 * Contract
 *   Everything a function allocates comes from the arena it is given and is
 *   freed with that arena; nothing here keeps global state. Errors go to the
 *   caller's `err` buffer and say what was expected and what was found.
 */
#ifndef PLUGRT_HARNESS_PLUGRUN_H
#define PLUGRT_HARNESS_PLUGRUN_H

#include <stdio.h>

#include "harness/harness.h"
#include "plugrt/op.h"

/* ---- attribute values ------------------------------------------------------ */

/* One attribute as written in a golden case or a YAML config: numbers (as
 * double) or a string. */
typedef struct prt__attrval {
    const char *name;
    int is_text;
    const char *text; /* is_text */
    int64_t count;
    double *v;        /* count values */
} prt__attrval;

typedef struct prt__attrset {
    int nb;
    prt__attrval *a;
} prt__attrset;

/* Attributes of a golden case (all of them), or NULL when it has none. */
prt_status prt__attrset_from_case(const prt_golden_case *k, prt__arena *ar, prt__attrset *out, char *err,
                                  size_t cap);
/* Attributes of a YAML config: values as given; an entry with only a
 * `shape` is filled with `seed`-determined values in [-1, 1); an entry with
 * only choices takes the first choice. */
prt_status prt__attrset_from_config(const prt_pcfg_config *c, uint64_t seed, prt__arena *ar, prt__attrset *out,
                                    char *err, size_t cap);
const prt__attrval *prt__attrset_get(const prt__attrset *s, const char *name);
/* A copy whose entries can be changed (values copied too). */
prt_status prt__attrset_copy(const prt__attrset *s, prt__arena *ar, prt__attrset *out);
/* "stride=[2, 1] padding=[0, 1]" */
void prt__attrset_str(const prt__attrset *s, char *buf, size_t cap);

/* Schema entry i of a creator (strided by field_schema_size). */
const prt_field_schema *prt__schema_at(const prt_plugin_creator *c, int32_t i);
const prt_field_schema *prt__schema_find(const prt_plugin_creator *c, const char *name);

/* Map attribute values onto the creator's schema: each becomes a prt_field
 * of its schema type (integers must be integral and in range; bool 0/1;
 * char from text). Attributes the schema does not know are left out and
 * named in `skipped` (may be NULL; "" when none). */
prt_status prt__attrset_to_fields(const prt_plugin_creator *c, const prt__attrset *s, prt__arena *ar,
                                  prt_fields *out, char *skipped, size_t skipped_cap, char *err, size_t cap);

/* ---- tensors --------------------------------------------------------------- */

/* The PluginConfig type name of a dtype ("float32"). */
const char *prt__dtype_yaml_name(prt_dtype t);
/* Element i of a buffer of dtype t as double. */
double prt__elem_get(const void *data, prt_dtype t, int64_t i);
/* Store v (rounded to nearest, saturating integers) as element i. */
void prt__elem_set(void *data, prt_dtype t, int64_t i, double v);

/* splitmix64 on the state *s (advanced): deterministic values in [0, 1)
 * (uniform) and in [-1, 1) (seeded: 2 * uniform - 1, the values of inputs
 * and attributes given only as a shape). */
double prt__plugrun_uniform(uint64_t *s);
double prt__plugrun_seeded(uint64_t *s);

/* Inputs of one run, in the YAML's input order, absent ones left out. */
typedef struct prt__inputs {
    int nb;
    const char **names;
    prt_tensor_desc *desc;
    void **data; /* host */
} prt__inputs;

/* ---- running --------------------------------------------------------------- */

typedef struct prt__run_out {
    int nb;
    prt_tensor_desc *desc; /* actual descriptors after the run */
    prt_dims *alloc_dims;  /* descriptors after configure (allocation) */
    void **data;           /* host copies */
} prt__run_out;

/* Configure `op` for `in` on `device` (CPU: nb_threads, 0 = all cores;
 * CUDA: device 0, default stream), run it once with outputs poisoned
 * (bytes 0xFF) beforehand, and copy the outputs to host memory. Which step
 * failed is in `err` ("configure: ...", "run: ..."). *configure_failed is
 * set when configure refused (may be NULL). */
prt_status prt__plugrun_run(prt_op *op, prt_device device, int nb_threads, const prt__inputs *in,
                            prt__arena *ar, prt__run_out *out, int *configure_failed, char *err, size_t cap);

/* ---- float64 references (refs.c) ------------------------------------------- */

/* What the creator's float64 reference computes (its reference_doc), or NULL
 * when the creator registers none (prt_plugin_creator.reference). */
const char *prt__ref_doc(const prt_plugin_creator *c);
/* Run it on a case: inputs as double in the plugin's order (in_f64), the
 * case's attributes validated against the creator's schema; outputs and
 * their dims from the arena. */
prt_status prt__ref_run(const prt_plugin_creator *c, const prt__inputs *in, double *const *in_f64,
                        const prt__attrset *attrs, prt__arena *ar, int nb_out, double **out, prt_dims *out_dims,
                        char *err, size_t cap);

/* ---- writing golden-IO JSON (goldwrite.c) ----------------------------------- */

/* Standard base64 with padding, NUL-terminated, from the arena. */
char *prt__base64_encode(const void *data, size_t len, prt__arena *ar);
/* `a` as base64 of its .npy image, from the arena; NULL when out of memory. */
char *prt__npy_base64(const prt_npy_array *a, prt__arena *ar);

#endif
