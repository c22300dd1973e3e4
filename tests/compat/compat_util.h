/* tests/compat/compat_util.h - build a JSON network with TensorRT-style
 * plugins, write its plan, load the plan with the global registry, run it. */
#ifndef PRT_TESTS_COMPAT_UTIL_H
#define PRT_TESTS_COMPAT_UTIL_H

#include "plugrt/engine.h"
#include "plugrt/network.h"
#include "plugrt/registry.h"

typedef struct compat_io {
    const char *name;
    prt_dims dims;     /* inputs: the shape; outputs: set by compat_run */
    void *data;        /* inputs: host data; outputs: host buffer of `bytes` */
    size_t bytes;
} compat_io;

prt_dims compat_dims(int nb, const int64_t *d);
#define CDIMS(...) compat_dims((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})

/* Build `json` with the creators of `reg` (NULL: the global registry) for `device` (inputs with -1 extents get min = opt = max = the
 * shape of `in`), serialize the plan, load it into a fresh engine, run it once
 * and copy the outputs back. PRT_OK, or a status with `err` set. */
prt_status compat_run(prt_registry *reg, const char *json, prt_device device, compat_io *in, int nb_in, compat_io *out, int nb_out,
                      char *err, size_t cap);

/* Record plugrt's lifecycle trace ("<layer>: <call>" lines) until
 * compat_trace_stop(), which returns the text (static storage). */
void compat_trace_start(void);
const char *compat_trace_stop(void);
/* NULL if `calls` appear in `text` in this order, else the first one missing. */
const char *compat_trace_missing(const char *text, const char *const *calls, int nb);

/* Uniform pseudo-random floats in [lo, hi). */
void compat_fill(float *x, size_t n, unsigned seed, float lo, float hi);

#endif
