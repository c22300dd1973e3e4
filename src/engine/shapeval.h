/*
 * engine/shapeval.h - shape values: output shapes and values through
 * get_output_shapes_v2 (plugin.h), the check of shape-value inputs, and the
 * values of small integer constants.
 */
#ifndef PLUGRT_ENGINE_SHAPEVAL_H
#define PLUGRT_ENGINE_SHAPEVAL_H

#include "registry/adapter.h"

/* Output dims (and values) of a plugin: get_output_shapes_v2 when the plugin
 * has it, else its get_output_dims / get_output_shapes with every output
 * value unknown. in_values may be NULL (all unknown); out_values receives
 * nb_out entries (nb == PRT_NB_VALUES_UNKNOWN where none). Checked: ranks,
 * value counts (0..PRT_MAX_DIMS), no NULL expression. */
prt_status prt__shapeval_outputs(prt__plugin *pl, const prt_dims_expr *in, const prt_dims_expr *in_values,
                                 int32_t nb_in, prt_dims_expr *out, prt_dims_expr *out_values, int32_t nb_out,
                                 prt_expr_builder *eb, char *err, size_t cap);

/* Can a tensor of this type and these dims carry shape values? (int32 or
 * int64, 0-D or 1-D, at most PRT_MAX_DIMS elements; dims known.) */
int prt__shapeval_fits(prt_dtype dtype, const prt_dims *dims);

/* Element k of a small integer tensor's data as int64. */
int64_t prt__shapeval_element(prt_dtype dtype, const void *data, int32_t k);

/* Write n values into an int32 or int64 tensor in host memory. */
void prt__shapeval_store(prt_dtype dtype, void *data, const int64_t *v, int32_t n);

#endif
