/* core/alloc.c - the allocation hook and per-object error messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static _Thread_local long fail_after = -1;
static _Thread_local long nb_allocs;

long prt__alloc_fail_after(long n)
{
    long made = nb_allocs;
    fail_after = n;
    nb_allocs = 0;
    return made;
}

static int alloc_allowed(void)
{
    nb_allocs++;
    if (fail_after < 0) return 1;
    if (fail_after == 0) return 0;
    fail_after--;
    return 1;
}

void *prt__malloc(size_t n)
{
    if (!alloc_allowed()) return NULL;
    return malloc(n ? n : 1);
}

void *prt__calloc(size_t nmemb, size_t size)
{
    if (!alloc_allowed()) return NULL;
    if (nmemb == 0 || size == 0) return calloc(1, 1);
    return calloc(nmemb, size);
}

void *prt__realloc(void *p, size_t n)
{
    if (!alloc_allowed()) return NULL;
    return realloc(p, n ? n : 1);
}

void prt__free(void *p)
{
    free(p);
}

char *prt__strndup(const char *s, size_t n)
{
    char *d;
    if (!s) s = "";
    d = prt__malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *prt__strdup(const char *s)
{
    return prt__strndup(s, s ? strlen(s) : 0);
}

/* Per-thread error slots, keyed by object address; NULL is the key of calls
 * that had no object to hold the message (docs/plugin-abi.md, "Errors"). A
 * thread talks to few objects at a time. A new key takes a free slot (never
 * used, or cleared: destroy functions clear theirs), else the one set least
 * recently. This is the library's one store of messages. */
#define ERR_SLOTS 16
static _Thread_local struct {
    const void *obj;
    int used;
    unsigned long stamp; /* when the message was set */
    char msg[PRT_ERR_CAP];
} err_slots[ERR_SLOTS];
static _Thread_local unsigned long err_clock;

static int find_slot(const void *obj)
{
    int i;
    for (i = 0; i < ERR_SLOTS; i++)
        if (err_slots[i].used && err_slots[i].obj == obj) return i;
    return -1;
}

static int new_slot(void)
{
    int i, oldest = 0;
    for (i = 0; i < ERR_SLOTS; i++) {
        if (!err_slots[i].used || !err_slots[i].msg[0]) return i;
        if (err_slots[i].stamp < err_slots[oldest].stamp) oldest = i;
    }
    return oldest;
}

void prt__err_vset(const void *obj, const char *fmt, va_list ap)
{
    /* Formatted first: an argument may be a message of this store, even the
     * one of the slot about to be written (`"%s", prt_last_error(inner)`). */
    char msg[PRT_ERR_CAP];
    int i;
    vsnprintf(msg, sizeof msg, fmt, ap);
    i = find_slot(obj);
    if (i < 0) {
        i = new_slot();
        err_slots[i].obj = obj;
        err_slots[i].used = 1;
    }
    memcpy(err_slots[i].msg, msg, sizeof msg);
    err_slots[i].stamp = ++err_clock;
}

prt_status prt__err(const void *obj, prt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__err_vset(obj, fmt, ap);
    va_end(ap);
    return s;
}

void prt__err_clear(const void *obj)
{
    int i = find_slot(obj);
    if (i >= 0) err_slots[i].msg[0] = 0;
}

const char *prt__err_get(const void *obj)
{
    int i = find_slot(obj);
    return i >= 0 ? err_slots[i].msg : "";
}

PRT_API const char *prt_last_error(const void *obj)
{
    return prt__err_get(obj);
}

int prt__config_read(void *dst, size_t dst_size, const void *src, size_t min_size)
{
    uint32_t size;
    memcpy(&size, src, sizeof size);
    if (size < min_size || size < sizeof size) return -1;
    memcpy(dst, src, size < dst_size ? size : dst_size);
    return 0;
}
