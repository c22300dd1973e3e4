/*
 * engine/subnet.h - the host's sub-network service (prt_host_api.subnet_*,
 * docs/plugin-abi.md, "Sub-networks"): a plugin's GRAPH field built into a
 * sub-engine with an execution context, and run on the plugin's buffers.
 *
 * Contract
 *   The functions are the members of the host table (registry/host.c) with
 *   the same signatures. A sub-network's plugins are found in the registry
 *   of the innermost engine build, plan load, context creation or run on the
 *   calling thread (prt__subnet_scope_enter), else the global registry.
 */
#ifndef PLUGRT_ENGINE_SUBNET_H
#define PLUGRT_ENGINE_SUBNET_H

#include "plugrt/registry.h"

prt_status prt__subnet_build(const prt_field_graph *graph, const prt_subnet_config *cfg, prt_subnet **out,
                             prt_msg *err);
prt_status prt__subnet_describe(const prt_subnet *s, int32_t *nb_inputs, int32_t *nb_outputs,
                                prt_dyn_tensor_desc *io, int32_t cap);
prt_status prt__subnet_run(prt_subnet *s, const prt_tensor_desc *in, const void *const *inputs, int32_t nb_in,
                           prt_tensor_desc *out, void *const *outputs, int32_t nb_out, void *cuda_stream,
                           prt_msg *err);
void prt__subnet_destroy(prt_subnet *s);

/* The registry sub-networks built on this thread resolve their plugins in,
 * until the matching leave (calls nest). Returns the previous one. */
prt_registry *prt__subnet_scope_enter(prt_registry *r);
void prt__subnet_scope_leave(prt_registry *previous);

#endif
