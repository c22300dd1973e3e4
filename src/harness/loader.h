/*
 * harness/loader.h - what the PluginConfig reader (pcfg.c) and the golden-IO
 * reader (golden.c) share: the first error and its message, warnings kept in
 * the loaded object's arena, arena allocation that reports running out of
 * memory, path labels, and loading a whole file.
 *
 * Every message opens with the file name: "name: " for a loader that has no
 * positions (line < 0), else "name:line:col: ". After the first error the
 * loader keeps that one and ignores later errors and warnings.
 */
#ifndef PLUGRT_HARNESS_LOADER_H
#define PLUGRT_HARNESS_LOADER_H

#include <stdarg.h>

#include "core/core.h"
#include "harness/harness.h"

typedef struct prt__loader_note prt__loader_note;

typedef struct prt__loader {
    prt__arena *arena;      /* the loaded object's: warnings and allocations live there */
    const char *name;       /* opens every message */
    prt_status status;      /* the first error; PRT_OK while there is none */
    char msg[PRT_ERR_CAP];  /* its message */
    prt__loader_note *head, **tail;
    int nb_warn;
} prt__loader;

void prt__loader_init(prt__loader *ld, prt__arena *arena, const char *name);
/* Record error `s` unless one is recorded already; returns -1. */
int prt__loader_vfail(prt__loader *ld, int line, int col, prt_status s, const char *fmt, va_list ap)
    PRT_PRINTF(5, 0);
/* Add a warning (an out-of-memory error when it cannot be kept). */
void prt__loader_vwarn(prt__loader *ld, int line, int col, const char *fmt, va_list ap) PRT_PRINTF(4, 0);
/* Zeroed room for `count` items of `size` bytes in the arena; NULL and an
 * out-of-memory error when the size overflows or the arena is out of memory. */
void *prt__loader_alloc(prt__loader *ld, int line, int col, size_t count, size_t size);
/* The warnings in order, as an array of nb_warn strings in the arena (NULL
 * and an out-of-memory error when it cannot be made). */
const char **prt__loader_warnings(prt__loader *ld, int line, int col);
/* "a.b" into dst, cut at cap (paths only label messages). */
void prt__loader_join(char *dst, size_t cap, const char *a, const char *b);
/* Read the file at `path` and hand its bytes to load(text, len, path, out);
 * a file that cannot be read sets the message of `out` (prt_last_error). */
prt_status prt__loader_load_file(const char *path, void *out,
                                 prt_status (*load)(const char *text, size_t len, const char *name,
                                                    void *out));

#endif
