/*
 * engine/devq.h - build-time questions asked per target device
 * (get_workspace_size_v2 / supports_format_combination_v2 in plugin.h),
 * falling back to the device-blind members for plugins without them.
 */
#ifndef PLUGRT_ENGINE_DEVQ_H
#define PLUGRT_ENGINE_DEVQ_H

#include "engine/plan.h"
#include "registry/adapter.h"

/* Workspace bytes on `device` (blob style: the max shapes). SIZE_MAX when
 * out of memory. */
size_t prt__devq_workspace(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device);
/* Is io[pos] accepted on `device`? */
int prt__devq_supports(prt__plugin *pl, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out,
                       prt_device device);
/* The workspace a context on `device` needs for plan p (its plugins in
 * protos, per layer), rounded like the builder's: the largest layer's. */
uint64_t prt__devq_plan_workspace(const prt__plan *p, prt__plugin *const *protos, prt_device device);

#endif
