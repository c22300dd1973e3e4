/*
 * engine/optio.h - optional inputs and outputs (prt_io_info in plugin.h):
 * what a plugin declares, the check of a layer against it (builder and plan
 * loading use the same one), and the descriptors of an absent input.
 */
#ifndef PLUGRT_ENGINE_OPTIO_H
#define PLUGRT_ENGINE_OPTIO_H

#include "registry/adapter.h"

/* The plugin's get_io_info (NULL member: every input required, every
 * output named). Members the plugin leaves at -1 keep their default; values
 * out of range fail naming the plugin. */
prt_status prt__optio_info(prt__plugin *pl, int32_t nb_outputs, prt_io_info *out, char *err, size_t cap);

/* A layer of plugin `pl` giving `nb_in` inputs (in[i] < 0: absent) and naming
 * `nb_out` outputs: within the counts? Messages start with `who`. On
 * success *info (may be NULL) receives what the plugin declares and *used says whether the layer uses optional I/O (an absent input,
 * or fewer outputs than the plugin has): such a plan needs reader version 2. */
prt_status prt__optio_check(prt__plugin *pl, const char *who, const int32_t *in, int32_t nb_in, int32_t nb_out,
                            prt_io_info *info, int *used, char *err, size_t cap);

/* The descriptors of an absent input. */
void prt__optio_absent(prt_tensor_desc *d);
void prt__optio_absent_dyn(prt_dyn_tensor_desc *d);
void prt__optio_absent_expr(prt_dims_expr *d);

#endif
