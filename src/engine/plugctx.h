/*
 * engine/plugctx.h - the per-execution-context resource table behind
 * prt_plugin_context (plugin.h): resources shared by every plugin of one
 * context under a key, created at the first acquire and destroyed at the
 * last release. Used by the engine's execution contexts (and so by prt_op)
 * and by constant folding.
 */
#ifndef PLUGRT_ENGINE_PLUGCTX_H
#define PLUGRT_ENGINE_PLUGCTX_H

#include "plugrt/plugin.h"

typedef struct prt__plugctx prt__plugctx;

prt_status prt__plugctx_create(prt_device device, int32_t cuda_device, prt__plugctx **out);
/* The table handed to plugins; valid as long as c. */
prt_plugin_context *prt__plugctx_get(prt__plugctx *c);
int32_t prt__plugctx_nb_resources(prt__plugctx *c);
/* Destroys what is still held, with a warning naming each. NULL ok. */
void prt__plugctx_destroy(prt__plugctx *c);

#endif
