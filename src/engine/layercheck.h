/*
 * engine/layercheck.h - a plugin layer's tensors against its plugin, at load
 * and before each run whose shapes changed (layercheck.c).
 *
 * A plan is untrusted input: its recorded shapes and formats may have been
 * edited so that they agree with the plugin at the profile's min, opt and max
 * shapes but not elsewhere. These checks ask the plugin itself and refuse
 * the plan (at load) or the run (before enqueue) when the buffers the engine
 * would hand it do not match what it will write.
 */
#ifndef PLUGRT_ENGINE_LAYERCHECK_H
#define PLUGRT_ENGINE_LAYERCHECK_H

#include "registry/adapter.h"

/* Load: supports_format_combination (asked for `device`) at every position
 * for the plan's types and formats; absent optional inputs are skipped.
 * `who` names the layer. PRT_STATUS_BAD_FORMAT when refused. */
prt_status prt__layercheck_formats(prt__plugin *pl, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out,
                                   prt_device device, const char *who, char *err, size_t cap);

/* Run: the plugin's output shapes for these concrete input shapes (asked
 * again, with constant expressions) must equal the output shapes the engine
 * allocated (data-dependent extents at their upper bounds). in_values holds
 * per input its current shape values (nb PRT_NB_VALUES_UNKNOWN where none;
 * NULL: none at all); absent inputs have dims.nb == PRT_NB_DIMS_ABSENT.
 * PRT_STATUS_SHAPE_MISMATCH names the output and both shapes. */
prt_status prt__layercheck_outputs(prt__plugin *pl, const prt_tensor_desc *in, const prt_dims *in_values,
                                   int32_t nb_in, const prt_tensor_desc *out, int32_t nb_out, const char *who,
                                   char *err, size_t cap);

#endif
