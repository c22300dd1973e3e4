/*
 * plugrt/registry.h - plugin creators keyed by (name, version, namespace),
 * plugin libraries loaded at run time.
 *
 * Contract
 *   Ownership: a registry stores borrowed creator pointers; each creator must
 *   outlive its registration (static storage, or the library that brought it,
 *   which stays loaded until unloaded here or the registry is destroyed).
 *   prt_registry_global() is owned by the library and never destroyed.
 *   A child registry looks up its own creators first, then its parent's; the
 *   parent must outlive the child.
 *
 *   Threads: every function may be called concurrently on one registry;
 *   lookups see a registration either completely or not at all. A creator
 *   pointer returned by a lookup stays valid until that creator is removed.
 *
 *   Errors: a failed call leaves the registry unchanged and sets the message
 *   read by prt_registry_last_error() on the calling thread.
 */
#ifndef PLUGRT_REGISTRY_H
#define PLUGRT_REGISTRY_H

#include "plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_registry prt_registry;
typedef struct prt_library prt_library;

/* The process-wide registry, holding every statically registered creator
 * (PRT_REGISTER_CREATOR, which includes the bundled plugins). Never NULL. */
PRT_API prt_registry *prt_registry_global(void);

/* A new empty registry whose lookups fall back to `parent` (may be NULL).
 * Errors: on the parent (prt_registry_last_error(parent)); with no parent,
 * prt_last_error(NULL). */
PRT_API PRT_NODISCARD prt_status prt_registry_create(prt_registry *parent, prt_registry **out);
/* Unloads the libraries it loaded. NULL is accepted. Not for the global one. */
PRT_API void prt_registry_destroy(prt_registry *r);

/* Register a creator. `owner` names who brought it ("static", a library name,
 * the application); it is copied. A creator with the same (name, version,
 * namespace) in this registry fails with PRT_STATUS_ALREADY_EXISTS naming both
 * owners. The creator's struct_size, abi_version and schema are checked. */
PRT_API PRT_NODISCARD prt_status prt_registry_add(prt_registry *r, const prt_plugin_creator *c,
                                                 const char *owner);
/* Register n creators owned by `owner`, all or nothing: each is checked as
 * prt_registry_add checks it, a key that appears twice in the batch or is
 * already registered here fails the whole call, and lookups on other threads
 * see all of them or none. Time n log n for the batch plus one merge, so an
 * application (or a loader) registering many creators need not add them one
 * by one. n == 0 succeeds and registers nothing. */
PRT_API PRT_NODISCARD prt_status prt_registry_add_many(prt_registry *r, const prt_plugin_creator *const *creators,
                                                      int32_t n, const char *owner);
/* Remove one creator (this registry only). */
PRT_API PRT_NODISCARD prt_status prt_registry_remove(prt_registry *r, const char *name,
                                                    const char *version, const char *plugin_namespace);
/* Remove every creator `owner` registered here; *nb_removed (may be NULL). */
PRT_API PRT_NODISCARD prt_status prt_registry_remove_owner(prt_registry *r, const char *owner,
                                                          int32_t *nb_removed);

/* Look up a creator here, then in the parents. NULL namespace means "".
 * PRT_STATUS_NOT_FOUND's message lists the near misses: the same name with
 * other versions or namespaces. `owner_out` (may be NULL) receives the owner
 * string, valid as long as the creator. */
PRT_API PRT_NODISCARD prt_status prt_registry_find(prt_registry *r, const char *name,
                                                  const char *version, const char *plugin_namespace,
                                                  const prt_plugin_creator **out,
                                                  const char **owner_out);

/* Versioned lookup, for importers that know an operator set version: the
 * creator (name, namespace) whose version is a decimal integer ("0", or digits
 * without a leading zero, at most 18) with the largest value <= max_version,
 * searched here and in the parents (a nearer registry wins a tie). Versions
 * that are not decimal ("2.1", "v3") are never chosen here; prt_registry_find
 * still reaches them. PRT_STATUS_NOT_FOUND's message lists the versions that
 * exist for (name, namespace), or the near misses when there are none.
 * PRT_STATUS_INVALID_ARGUMENT for max_version < 0.
 *
 * Namespaces, here and in every call of this header: NULL, "" and "ai.onnx"
 * are one namespace (the default one), as ONNX treats its domain. */
PRT_API PRT_NODISCARD prt_status prt_registry_find_latest(prt_registry *r, const char *name,
                                                         const char *plugin_namespace,
                                                         int64_t max_version,
                                                         const prt_plugin_creator **out,
                                                         const char **owner_out);

typedef struct prt_creator_info {
    const prt_plugin_creator *creator;
    const char *owner;  /* valid as long as the creator */
    int32_t depth;      /* 0 = this registry, 1 = its parent, ... */
    int32_t shadowed;   /* non-zero if a nearer registry has the same key */
} prt_creator_info;

/* Snapshot of the creators, nearest registry first, each registry sorted by
 * (namespace, name, version). Writes up to `cap` entries and sets *nb to the
 * total (call with cap 0 to size the array). */
PRT_API PRT_NODISCARD prt_status prt_registry_list(prt_registry *r, prt_creator_info *out,
                                                  int32_t cap, int32_t *nb);

/* Load a plugin library: dlopen it, call its PRT_LIBRARY_ENTRY_NAME entry
 * point with the host API, and register every creator it hands back, owned by
 * the library's name. All or nothing: if one creator fails to register,
 * none stays. Loading the same file again into the same registry returns the
 * same handle and registers nothing. A library built for a newer ABI, one
 * without the entry point, or one that fails to open is refused. */
PRT_API PRT_NODISCARD prt_status prt_registry_load_library(prt_registry *r, const char *path,
                                                          prt_library **out);
/* Deregister everything the library brought and dlclose it (when its last
 * load is undone). */
PRT_API PRT_NODISCARD prt_status prt_registry_unload_library(prt_registry *r, prt_library *lib);
PRT_API const char *prt_library_name(const prt_library *lib);
PRT_API const char *prt_library_path(const prt_library *lib);

/* A plan records which owner (library name, "static", the application)
 * provided each plugin's creator. When a plan is read through this registry
 * and the creator found has another owner: */
typedef enum prt_owner_policy {
    PRT_OWNER_WARN = 0,   /* default: log a warning naming both owners, then load */
    PRT_OWNER_REFUSE = 1, /* fail the load (PRT_STATUS_VERSION_MISMATCH) naming both owners */
    PRT_OWNER_ANY = 2     /* load silently */
} prt_owner_policy;

/* Set the policy of this registry (not of its parents). */
PRT_API PRT_NODISCARD prt_status prt_registry_set_owner_policy(prt_registry *r, prt_owner_policy policy);
PRT_API prt_owner_policy prt_registry_owner_policy(const prt_registry *r);

/* Message of the last failed call on `r` from this thread ("" if none). */
PRT_API const char *prt_registry_last_error(const prt_registry *r);

/* Validate `in` against the creator's schema and build the normalized
 * collection its create function receives (see field.h). On success *out is
 * a new collection, freed with prt_owned_fields_free. On failure *out is untouched
 * and `err` says which plugin, version and field, what was expected and what
 * was found. */
typedef struct prt_owned_fields prt_owned_fields;
PRT_API PRT_NODISCARD prt_status prt_fields_validate(const prt_plugin_creator *c, const prt_fields *in,
                                                    prt_owned_fields **out, char *err, size_t cap);
PRT_API const prt_fields *prt_owned_fields_get(const prt_owned_fields *f);
PRT_API void prt_owned_fields_free(prt_owned_fields *f);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_REGISTRY_H */
