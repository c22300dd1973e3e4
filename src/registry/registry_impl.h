/*
 * registry/registry_impl.h - the registry object, shared by registry.c and
 * library.c.
 *
 * Locks: `lock` (a rwlock) guards entries and owners; `lib_lock` (a mutex)
 * serializes library loads and unloads of one registry and guards libs.
 * Order: lib_lock before lock; a child's lock before its parent's (readers
 * only: writers hold one registry's lock and nothing else).
 */
#ifndef PLUGRT_REGISTRY_IMPL_H
#define PLUGRT_REGISTRY_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "plugrt/registry.h"

typedef struct prt__reg_entry {
    const prt_plugin_creator *c;
    const char *ns;    /* c->plugin_namespace, or "" for NULL */
    const char *owner; /* interned: lives as long as the registry */
} prt__reg_entry;

typedef struct prt__reg_owner {
    struct prt__reg_owner *next;
    char name[];
} prt__reg_owner;

struct prt_registry {
    pthread_rwlock_t lock;
    pthread_mutex_t lib_lock;
    prt_registry *parent;
    prt__reg_entry *entries; /* sorted by (namespace, name, version) */
    int32_t nb, cap;
    prt__reg_owner *owners;
    prt_library **libs;
    int32_t nb_libs, cap_libs;
    int is_global;
    _Atomic int owner_policy; /* prt_owner_policy for plans read through this registry */
};

/* Check and register `n` creators owned by `owner`, all or nothing, in one
 * critical section (lookups see all of them or none). The message goes to
 * err, not to the registry. */
prt_status prt__registry_add_many(prt_registry *r, const prt_plugin_creator *const *cs, int32_t n,
                                  const char *owner, char *err, size_t cap);
/* Deregister the entries whose creator is one of cs[0..n-1]. */
void prt__registry_remove_creators(prt_registry *r, const prt_plugin_creator *const *cs, int32_t n);

/* library.c: close and free every library of r (registry destroy). */
void prt__library_release_all(prt_registry *r);

#endif
