/*
 * plugins/plugin_alloc.h - allocation for the bundled plugins.
 *
 * The bundled plugins are compiled into the library, so their objects come
 * from the library's allocation hook (src/core/alloc.c): a test that makes
 * the Nth allocation fail (prt__alloc_fail_after) reaches their failure
 * paths as well. Built on its own (a copy of plugins/template/ in another
 * project), the same names fall back to the C library.
 */
#ifndef PLUGRT_PLUGINS_PLUGIN_ALLOC_H
#define PLUGRT_PLUGINS_PLUGIN_ALLOC_H

#include <stddef.h>

#ifdef PLUGRT_BUILDING
#include "core/core.h"
static inline void *prt_plugin_malloc(size_t n) { return prt__malloc(n); }
static inline void *prt_plugin_calloc(size_t nmemb, size_t size) { return prt__calloc(nmemb, size); }
static inline void prt_plugin_free(void *p) { prt__free(p); }
#else
#include <stdlib.h>
static inline void *prt_plugin_malloc(size_t n) { return malloc(n); }
static inline void *prt_plugin_calloc(size_t nmemb, size_t size) { return calloc(nmemb, size); }
static inline void prt_plugin_free(void *p) { free(p); }
#endif

#endif
