/* Helpers for the ONNX op tests: tensors built from doubles, one call that
 * creates, configures and runs an op through prt_op, comparisons. */
#ifndef ONNX_TEST_UTIL_H
#define ONNX_TEST_UTIL_H

#include "plugrt/plugrt.h"

typedef struct ot_tensor {
    prt_dtype t;
    prt_dims d;
    void *data; /* malloc'd; ot_free */
} ot_tensor;

prt_dims ot_dims(int nb, ...); /* nb int64 extents */
prt_dims ot_dims_of(int nb, const int64_t *d); /* the same from an array */
/* The element of an input of shape `in` that output element `o` (flat, of
 * shape `out`) reads under numpy's broadcasting, by the definition. */
int64_t ot_bcast_index(const prt_dims *in, const prt_dims *out, int64_t o);
/* A tensor of dtype t and shape d from vol(d) doubles (converted here). */
ot_tensor ot_make(prt_dtype t, prt_dims d, const double *v);
/* Deterministic values in [lo, hi]. */
ot_tensor ot_rand(prt_dtype t, prt_dims d, double lo, double hi, uint32_t seed);
void ot_free(ot_tensor *x);
double ot_get(const ot_tensor *x, int64_t i);
int64_t ot_vol(const ot_tensor *x);

/* Create name/version ("" namespace) with fields, configure on the CPU with
 * `threads`, run; outputs are allocated into out[]. Returns the first failing
 * status; msg gets prt_op_last_error (or the create error). */
prt_status ot_run(const char *name, const char *ver, const prt_field *f, int32_t nf, const ot_tensor *in,
                  int32_t nin, ot_tensor *out, int32_t nout, int32_t threads, char *msg, size_t cap);
/* The same for a creator of namespace ns ("plugrt" for plugrt's own ops). */
prt_status ot_run_ns(const char *ns, const char *name, const char *ver, const prt_field *f, int32_t nf,
                     const ot_tensor *in, int32_t nin, ot_tensor *out, int32_t nout, int32_t threads, char *msg,
                     size_t cap);

/* Fields. */
prt_field ot_i64(const char *name, const int64_t *v, int64_t n);
prt_field ot_f32(const char *name, const float *v, int64_t n);
prt_field ot_str(const char *name, const char *s);

/* Element-by-element: |y - ref| <= rtol * |ref| + atol (NaN matches NaN).
 * Returns the number of mismatches (the first few are reported). */
int64_t ot_compare(const ot_tensor *y, const double *ref, int64_t n, double rtol, double atol, const char *what);

#endif
