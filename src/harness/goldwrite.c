/*
 * harness/goldwrite.c - the pieces of a golden-IO JSON a writer needs:
 * base64 (RFC 4648, standard alphabet, '=' padding) and a .npy image as
 * base64 (see plugrun.h).
 */
#include "harness/plugrun.h"

char *prt__base64_encode(const void *data, size_t len, prt__arena *ar)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const uint8_t *p = data;
    size_t out_len = (len + 2) / 3 * 4, i, k = 0;
    char *o = prt__arena_alloc(ar, out_len + 1);
    if (!o) return NULL;
    for (i = 0; i + 2 < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        o[k++] = tab[v >> 18];
        o[k++] = tab[(v >> 12) & 63];
        o[k++] = tab[(v >> 6) & 63];
        o[k++] = tab[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)p[i] << 16;
        o[k++] = tab[v >> 18];
        o[k++] = tab[(v >> 12) & 63];
        o[k++] = '=';
        o[k++] = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
        o[k++] = tab[v >> 18];
        o[k++] = tab[(v >> 12) & 63];
        o[k++] = tab[(v >> 6) & 63];
        o[k++] = '=';
    }
    o[k] = 0;
    return o;
}

char *prt__npy_base64(const prt_npy_array *a, prt__arena *ar)
{
    void *buf = NULL;
    size_t len = 0;
    char *s;
    if (prt_npy_write_mem(a, &buf, &len) != PRT_OK) return NULL;
    s = prt__base64_encode(buf, len, ar);
    prt_npy_free(buf);
    return s;
}
