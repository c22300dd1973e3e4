/*
 * core/core.h - internal helpers shared by every module: allocation through
 * one hook, per-object error messages, logging, text buffers.
 */
#ifndef PLUGRT_CORE_CORE_H
#define PLUGRT_CORE_CORE_H

#include <stdarg.h>
#include <stddef.h>

#include "plugrt/plugin.h"

/* Allocation. Everything in the library allocates through these, so that a
 * test can make the Nth allocation fail (prt__alloc_fail_after). */
void *prt__malloc(size_t n);
void *prt__calloc(size_t nmemb, size_t size);
void *prt__realloc(void *p, size_t n);
void prt__free(void *p);
char *prt__strdup(const char *s);
char *prt__strndup(const char *s, size_t n);
/* Test hook: the next `n` allocations succeed, the ones after fail; -1 turns
 * failure injection off. Returns how many allocations were made since the
 * last call. Per thread. */
long prt__alloc_fail_after(long n);

/* Error messages live on the object the call was made on, per calling
 * thread; NULL is the key of a call that had no object (docs/plugin-abi.md,
 * "Errors: one idiom"). Set with `return prt__err(obj, status, ...)`. */
#define PRT_ERR_CAP 1024
void prt__err_vset(const void *obj, const char *fmt, va_list ap);
const char *prt__err_get(const void *obj);
void prt__err_clear(const void *obj);
/* A caller's config struct (opening with uint32_t struct_size) read member by
 * member: `dst` holds the defaults (dst_size bytes) and takes the first
 * min(struct_size, dst_size) bytes of `src`, so a caller built against an
 * older, shorter struct keeps working and the members it lacks keep their
 * defaults. Returns 0, or -1 when struct_size is below `min_size` (the
 * members every version has). */
int prt__config_read(void *dst, size_t dst_size, const void *src, size_t min_size);

/* Set the message and return `s`, for `return prt__err(obj, s, ...)`. */
prt_status prt__err(const void *obj, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);

/* Logging through the process logger (status.h). */
void prt__vlog(prt_severity sev, const char *fmt, va_list ap);

/* Files (file.c). Whole file into memory (caller frees with prt__free):
 * only a regular file is read, and the check comes before anything can block
 * (a FIFO or device is refused at once). */
prt_status prt__read_file(const char *path, void **data, size_t *len, char *err, size_t cap);
/* Replace `path` with `len` bytes atomically: written to a new, uniquely
 * named file in the same folder (created exclusively, so no link is
 * followed), then renamed over `path` (a link at `path` is replaced, not its
 * target). On failure `path` is unchanged and the temporary file is gone. */
prt_status prt__write_file_atomic(const char *path, const void *data, size_t len, char *err, size_t cap);

/* An appending, truncating text buffer over caller memory (text.c): text
 * that does not fit is cut off and the buffer stays NUL-terminated. */
typedef struct prt__text {
    char *buf;
    size_t cap, len;
} prt__text;
/* buf may be NULL (then nothing is written). */
prt__text prt__text_init(char *buf, size_t cap);
void prt__text_add(prt__text *t, const char *fmt, ...) PRT_PRINTF(2, 3);

#endif
