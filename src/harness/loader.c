/* harness/loader.c - messages, warnings and allocation shared by the
 * PluginConfig and golden-IO readers (harness/loader.h). */
#include <stdio.h>
#include <string.h>

#include "harness/loader.h"

struct prt__loader_note {
    prt__loader_note *next;
    const char *text;
};

void prt__loader_init(prt__loader *ld, prt__arena *arena, const char *name)
{
    memset(ld, 0, sizeof *ld);
    ld->arena = arena;
    ld->name = name;
    ld->tail = &ld->head;
}

/* The position prefix, then the message; a prefix that does not fit is
 * dropped so that the message itself shows. */
static void vformat(const prt__loader *ld, char *buf, size_t cap, int line, int col, const char *fmt,
                    va_list ap) PRT_PRINTF(6, 0);
static void vformat(const prt__loader *ld, char *buf, size_t cap, int line, int col, const char *fmt,
                    va_list ap)
{
    int k = line < 0 ? snprintf(buf, cap, "%s: ", ld->name)
                     : snprintf(buf, cap, "%s:%d:%d: ", ld->name, line, col);
    if (k < 0 || (size_t)k >= cap) k = 0;
    vsnprintf(buf + k, cap - (size_t)k, fmt, ap);
}

int prt__loader_vfail(prt__loader *ld, int line, int col, prt_status s, const char *fmt, va_list ap)
{
    if (ld->status != PRT_OK) return -1;
    ld->status = s;
    vformat(ld, ld->msg, sizeof ld->msg, line, col, fmt, ap);
    return -1;
}

static int fail(prt__loader *ld, int line, int col, prt_status s, const char *fmt, ...) PRT_PRINTF(5, 6);
static int fail(prt__loader *ld, int line, int col, prt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__loader_vfail(ld, line, col, s, fmt, ap);
    va_end(ap);
    return -1;
}

void prt__loader_vwarn(prt__loader *ld, int line, int col, const char *fmt, va_list ap)
{
    char buf[512];
    prt__loader_note *w;
    if (ld->status != PRT_OK) return;
    vformat(ld, buf, sizeof buf, line, col, fmt, ap);
    w = prt__arena_alloc(ld->arena, sizeof *w);
    if (w) w->text = prt__arena_strndup(ld->arena, buf, strlen(buf));
    if (!w || !w->text) {
        fail(ld, line, col, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        return;
    }
    *ld->tail = w;
    ld->tail = &w->next;
    ld->nb_warn++;
}

void *prt__loader_alloc(prt__loader *ld, int line, int col, size_t count, size_t size)
{
    void *p;
    if (count && size > SIZE_MAX / count) p = NULL;
    else p = prt__arena_alloc(ld->arena, count * size);
    if (!p) fail(ld, line, col, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return p;
}

const char **prt__loader_warnings(prt__loader *ld, int line, int col)
{
    const char **out = prt__loader_alloc(ld, line, col, (size_t)ld->nb_warn, sizeof *out);
    const prt__loader_note *w;
    int i = 0;
    if (!out) return NULL;
    for (w = ld->head; w; w = w->next) out[i++] = w->text;
    return out;
}

void prt__loader_join(char *dst, size_t cap, const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > cap - 1) n = cap - 1;
    memcpy(dst, a, n);
    if (n + 1 < cap) dst[n++] = '.';
    if (m > cap - 1 - n) m = cap - 1 - n;
    memcpy(dst + n, b, m);
    dst[n + m] = 0;
}

prt_status prt__loader_load_file(const char *path, void *out,
                                 prt_status (*load)(const char *text, size_t len, const char *name,
                                                    void *out))
{
    void *buf;
    size_t len;
    char err[PRT_ERR_CAP];
    prt_status s;
    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    s = prt__read_file(path, &buf, &len, err, sizeof err);
    if (s != PRT_OK) return prt__err(out, s, "%s", err);
    s = load(buf, len, path, out);
    prt__free(buf);
    return s;
}
