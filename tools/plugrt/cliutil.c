/* tools/plugrt/cliutil.c - small helpers shared by the `plugrt` sub-commands. */
#include "cliutil.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

const char *prt__cliutil_esc(const char *s)
{
    static char ring[8][1024];
    static unsigned next;
    char *b = ring[next++ % 8];
    size_t n = 0, cap = sizeof ring[0];
    if (!s) s = "";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[8];
        size_t k;
        if (c == '\\') snprintf(e, sizeof e, "\\\\");
        else if (c == '\n') snprintf(e, sizeof e, "\\n");
        else if (c == '\t') snprintf(e, sizeof e, "\\t");
        else if (c == 0x1b) snprintf(e, sizeof e, "\\e");
        else if (c < 0x20 || c >= 0x7f) snprintf(e, sizeof e, "\\x%02x", c);
        else e[0] = (char)c, e[1] = 0;
        k = strlen(e);
        if (n + k + 4 > cap) {
            memcpy(b + n, "...", 4);
            return b;
        }
        memcpy(b + n, e, k);
        n += k;
    }
    b[n] = 0;
    return b;
}

double prt__cliutil_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int prt__cliutil_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double prt__cliutil_elem(const void *buf, prt_dtype t, int64_t i)
{
    switch (t) {
    case PRT_DTYPE_F32: return ((const float *)buf)[i];
    case PRT_DTYPE_F16: return prt_f16_to_f32(((const uint16_t *)buf)[i]);
    case PRT_DTYPE_BF16: return prt_bf16_to_f32(((const uint16_t *)buf)[i]);
    case PRT_DTYPE_I8: return ((const int8_t *)buf)[i];
    case PRT_DTYPE_U8: case PRT_DTYPE_BOOL: return ((const uint8_t *)buf)[i];
    case PRT_DTYPE_I32: return ((const int32_t *)buf)[i];
    case PRT_DTYPE_I64: return (double)((const int64_t *)buf)[i];
    default: return 0;
    }
}
