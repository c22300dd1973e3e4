/*
 * engine/fold.h - constant folding: a layer whose inputs are all constants
 * runs once at build time through its CPU path, and its outputs become
 * weights of the plan (the builder decides which layers qualify).
 */
#ifndef PLUGRT_ENGINE_FOLD_H
#define PLUGRT_ENGINE_FOLD_H

#include "registry/adapter.h"

/* Run the configured build plugin `pl` once on the CPU: a per-run instance
 * (attach, shape notification, enqueue, destroy), serial parallel_for, a
 * workspace of `workspace` bytes. out_data[i] receives a new buffer
 * (prt__free) holding output i (volume(out[i].dims) elements); on failure
 * none is left allocated and err says why. */
prt_status prt__fold_run(prt__plugin *pl, const prt_tensor_desc *in, const void *const *in_data, int32_t nb_in,
                         const prt_tensor_desc *out, void **out_data, int32_t nb_out, size_t workspace, char *err,
                         size_t cap);

#endif
