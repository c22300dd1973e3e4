/*
 * engine/runtime.h - the inside of an engine (runtime.c) and what the
 * builder (builder.c) and contexts (context.c) share.
 */
#ifndef PLUGRT_ENGINE_RUNTIME_H
#define PLUGRT_ENGINE_RUNTIME_H

#include <pthread.h>

#include "engine/plan.h"
#include "registry/adapter.h"

struct prt_engine {
    prt__plan *plan;
    uint8_t *bytes; /* the plan file this engine was loaded from */
    size_t len;
    prt_registry *registry;
    prt__plugin **protos; /* per layer: the plugin re-created from its record (NULL for casts) */
    int32_t *io;          /* tensor index of each input, then each output */
    int32_t nb_io;
    /* Serializes calls into the template plugins (contexts created from
     * several threads at once clone the same objects). */
    pthread_mutex_t lock;
};

/* prt_engine_build; with strict_types (prt_op) a plugin gets its inputs in
 * their own types or the build fails naming the refused position: no cast
 * layers. */
prt_status prt__engine_build(const prt_network *net, const prt_builder_config *cfg, prt_registry *r, int strict_types,
                             prt_engine **out, char *err, size_t cap);

/* Tensor index of the input or output called name, or -1. */
int32_t prt__runtime_find(const prt_engine *e, const char *name);


#endif
