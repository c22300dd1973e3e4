/*
 * registry/library.c - plugin libraries loaded at run time.
 *
 * A library is dlopen'ed (RTLD_NOW | RTLD_LOCAL), its PRT_LIBRARY_ENTRY_NAME
 * entry point receives the host API table and describes its creators, and
 * those are registered in one batch owned by the library's name. A registry
 * keeps one handle per file (compared by real path) with a load count.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "registry/registry_impl.h"

/* sizeof(prt_library_desc) at abi_version 1, and with `registered` (2). */
#define DESC_V1_SIZE (offsetof(prt_library_desc, creators) + sizeof(void *))
#define DESC_V2_SIZE (offsetof(prt_library_desc, registered) + sizeof(void *))
/* More creators than this in one library is taken as a corrupt descriptor. */
#define MAX_LIB_CREATORS (1 << 20)

struct prt_library {
    prt_registry *reg;
    char *name; /* the name the library gave (owner of its creators) */
    char *path; /* real path of the file */
    void *handle;
    int32_t loads;
    int32_t nb_creators;
    const prt_plugin_creator **creators; /* our copy of the library's array */
};

static void library_free(prt_library *lib)
{
    if (!lib) return;
    if (lib->handle) dlclose(lib->handle);
    prt__free(lib);
}

void prt__library_release_all(prt_registry *r)
{
    int32_t i;
    pthread_mutex_lock(&r->lib_lock);
    for (i = 0; i < r->nb_libs; i++) library_free(r->libs[i]);
    prt__free(r->libs);
    r->libs = NULL;
    r->nb_libs = r->cap_libs = 0;
    pthread_mutex_unlock(&r->lib_lock);
}

/* One allocation: the struct, the creator pointers, the path, the name. */
static prt_library *library_alloc(const char *path, const char *name, int32_t n)
{
    size_t head = (sizeof(prt_library) + 7) & ~(size_t)7;
    size_t arr = (size_t)n * sizeof(const prt_plugin_creator *);
    size_t lp = strlen(path) + 1, ln = strlen(name) + 1;
    prt_library *lib = prt__malloc(head + arr + lp + ln);
    if (!lib) return NULL;
    memset(lib, 0, sizeof *lib);
    lib->creators = (const prt_plugin_creator **)(void *)((char *)lib + head);
    lib->path = (char *)lib + head + arr;
    lib->name = lib->path + lp;
    memcpy(lib->path, path, lp);
    memcpy(lib->name, name, ln);
    lib->nb_creators = n;
    return lib;
}

static prt_status load_locked(prt_registry *r, const char *path, const char *real, prt_library **out)
{
    char msg[PRT_ERR_CAP], emsg[PRT_ERR_CAP];
    prt_msg m;
    prt_library_desc desc;
    prt_library_entry_fn entry;
    prt_library *lib;
    prt_status st;
    void *handle, *sym;
    const char *dle;
    int32_t i, nb_reg;

    for (i = 0; i < r->nb_libs; i++) {
        if (strcmp(r->libs[i]->path, real) == 0) {
            if (r->libs[i]->loads == INT32_MAX)
                return prt__err(r, PRT_STATUS_LIBRARY_ERROR, "plugin library \"%s\" is loaded too many times",
                                real);
            r->libs[i]->loads++;
            *out = r->libs[i];
            return PRT_OK;
        }
    }
    if (r->nb_libs == r->cap_libs) {
        int32_t ncap = r->cap_libs ? r->cap_libs * 2 : 4;
        prt_library **nl = prt__realloc(r->libs, (size_t)ncap * sizeof *nl);
        if (!nl) return prt__err(r, PRT_STATUS_OUT_OF_MEMORY, "out of memory loading plugin library \"%s\"", path);
        r->libs = nl;
        r->cap_libs = ncap;
    }

    (void)dlerror();
    handle = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        dle = dlerror();
        return prt__err(r, PRT_STATUS_LIBRARY_ERROR, "cannot load plugin library \"%s\": %s", path,
                        dle ? dle : "dlopen failed");
    }
    (void)dlerror();
    sym = dlsym(handle, PRT_LIBRARY_ENTRY_NAME);
    if (!sym) {
        st = prt__err(r, PRT_STATUS_LIBRARY_ERROR,
                        "plugin library \"%s\" has no entry point \"%s\" (define it with "
                        "PRT_PLUGIN_LIBRARY and export it)", real, PRT_LIBRARY_ENTRY_NAME);
        dlclose(handle);
        return st;
    }
    memcpy(&entry, &sym, sizeof entry);

    memset(&desc, 0, sizeof desc);
    emsg[0] = 0;
    m.buf = emsg;
    m.cap = sizeof emsg;
    st = entry(prt_host_api_get(), &desc, &m);
    emsg[sizeof emsg - 1] = 0;
    if (st != PRT_OK) {
        st = prt__err(r, PRT_STATUS_LIBRARY_ERROR, "plugin library \"%s\": %s failed with %s: %s", real,
                        PRT_LIBRARY_ENTRY_NAME, prt_status_name(st), emsg[0] ? emsg : "(no message)");
        dlclose(handle);
        return st;
    }
    if (desc.abi_version > PRT_ABI_VERSION) {
        st = prt__err(r, PRT_STATUS_VERSION_MISMATCH,
                        "plugin library \"%s\" is built for plugin ABI %u, this host supports up to %u", real,
                        (unsigned)desc.abi_version, (unsigned)PRT_ABI_VERSION);
        dlclose(handle);
        return st;
    }
    if (desc.abi_version == 0 || desc.struct_size < DESC_V1_SIZE || !desc.name || !desc.name[0] ||
        desc.nb_creators < 0 || desc.nb_creators > MAX_LIB_CREATORS ||
        (desc.nb_creators > 0 && !desc.creators)) {
        st = prt__err(r, PRT_STATUS_LIBRARY_ERROR,
                        "plugin library \"%s\" handed back a malformed description (abi_version %u, "
                        "struct_size %u (expected %zu or more), name %s, %d creators, creator array %s)",
                        real, (unsigned)desc.abi_version, (unsigned)desc.struct_size, DESC_V1_SIZE,
                        desc.name ? (desc.name[0] ? desc.name : "empty") : "NULL", (int)desc.nb_creators,
                        desc.creators ? "set" : "NULL");
        dlclose(handle);
        return st;
    }
    for (i = 0; i < desc.nb_creators; i++) {
        if (!desc.creators[i]) {
            st = prt__err(r, PRT_STATUS_LIBRARY_ERROR, "plugin library \"%s\" (%s): creator %d of %d is NULL",
                            desc.name, real, (int)i, (int)desc.nb_creators);
            dlclose(handle);
            return st;
        }
    }
    /* Creators from PRT_REGISTER_CREATOR inside the library (ABI 2). */
    nb_reg = 0;
    if (desc.struct_size >= DESC_V2_SIZE) {
        const prt_static_creator *node;
        for (node = desc.registered; node && nb_reg <= MAX_LIB_CREATORS; node = node->next) nb_reg++;
    }
    if (nb_reg > MAX_LIB_CREATORS - desc.nb_creators) {
        st = prt__err(r, PRT_STATUS_LIBRARY_ERROR, "plugin library \"%s\" (%s) registers more than %d creators",
                      desc.name, real, MAX_LIB_CREATORS);
        dlclose(handle);
        return st;
    }
    lib = library_alloc(real, desc.name, desc.nb_creators + nb_reg);
    if (!lib) {
        st = prt__err(r, PRT_STATUS_OUT_OF_MEMORY, "out of memory loading plugin library \"%s\"", real);
        dlclose(handle);
        return st;
    }
    for (i = 0; i < desc.nb_creators; i++) lib->creators[i] = desc.creators[i];
    if (nb_reg > 0) {
        const prt_static_creator *node = desc.registered;
        for (; i < lib->nb_creators; i++, node = node->next) {
            lib->creators[i] = node->creator;
            if (!node->creator) {
                st = prt__err(r, PRT_STATUS_LIBRARY_ERROR, "plugin library \"%s\" (%s): a registered creator is NULL",
                              desc.name, real);
                dlclose(handle);
                prt__free(lib);
                return st;
            }
        }
    }
    st = prt__registry_add_many(r, lib->creators, lib->nb_creators, lib->name, msg, sizeof msg);
    if (st != PRT_OK) {
        st = prt__err(r, st, "plugin library \"%s\" (%s): %s; nothing from it was registered", lib->name,
                      real, msg);
        dlclose(handle);
        prt__free(lib);
        return st;
    }
    lib->reg = r;
    lib->handle = handle;
    lib->loads = 1;
    r->libs[r->nb_libs++] = lib;
    *out = lib;
    return PRT_OK;
}

prt_status prt_registry_load_library(prt_registry *r, const char *path, prt_library **out)
{
    char real[PATH_MAX];
    prt_status st;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!path || !path[0] || !out)
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_load_library: %s",
                        !out ? "out is NULL" : "no library path given");
    if (!realpath(path, real))
        return prt__err(r, PRT_STATUS_LIBRARY_ERROR, "cannot load plugin library \"%s\": %s", path,
                        strerror(errno));
    pthread_mutex_lock(&r->lib_lock);
    st = load_locked(r, path, real, out);
    pthread_mutex_unlock(&r->lib_lock);
    return st;
}

prt_status prt_registry_unload_library(prt_registry *r, prt_library *lib)
{
    int32_t i;
    if (!r) return PRT_STATUS_INVALID_ARGUMENT;
    if (!lib) return prt__err(r, PRT_STATUS_INVALID_ARGUMENT, "prt_registry_unload_library: library is NULL");
    pthread_mutex_lock(&r->lib_lock);
    for (i = 0; i < r->nb_libs && r->libs[i] != lib; i++) {
    }
    if (i == r->nb_libs) {
        pthread_mutex_unlock(&r->lib_lock);
        return prt__err(r, PRT_STATUS_INVALID_ARGUMENT,
                        "prt_registry_unload_library: that library is not loaded in this registry");
    }
    if (--lib->loads > 0) {
        pthread_mutex_unlock(&r->lib_lock);
        return PRT_OK;
    }
    prt__registry_remove_creators(r, lib->creators, lib->nb_creators);
    memmove(&r->libs[i], &r->libs[i + 1], (size_t)(r->nb_libs - i - 1) * sizeof *r->libs);
    r->nb_libs--;
    pthread_mutex_unlock(&r->lib_lock);
    library_free(lib);
    return PRT_OK;
}

const char *prt_library_name(const prt_library *lib)
{
    return lib ? lib->name : NULL;
}

const char *prt_library_path(const prt_library *lib)
{
    return lib ? lib->path : NULL;
}
