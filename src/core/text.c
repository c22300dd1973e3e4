/* core/text.c - an appending, truncating text buffer (core.h). */
#include <stdarg.h>
#include <stdio.h>

#include "core/core.h"

prt__text prt__text_init(char *buf, size_t cap)
{
    prt__text t;
    t.buf = buf;
    t.cap = buf ? cap : 0;
    t.len = 0;
    if (t.cap) buf[0] = 0;
    return t;
}

void prt__text_add(prt__text *t, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!t->cap || t->len + 1 >= t->cap) return;
    va_start(ap, fmt);
    n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    t->len = (size_t)n >= t->cap - t->len ? t->cap - 1 : t->len + (size_t)n;
}
