/* harness/base64.c - strict RFC 4648 base64 decoding. */
#include <stdio.h>

#include "core/core.h"
#include "harness/harness.h"

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static const char *show_char(unsigned char c, char *buf, size_t cap)
{
    if (c >= 33 && c < 127) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

prt_status prt__base64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len,
                              char *err, size_t err_cap)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t i, pad = 0, n, o = 0;
    uint8_t *buf;
    char cb[16];
    if (len % 4 != 0) {
        snprintf(err, err_cap,
                 "base64: expected a length that is a multiple of 4, found %zu characters", len);
        return PRT_STATUS_BAD_FORMAT;
    }
    if (len >= 1 && t[len - 1] == '=') pad++;
    if (len >= 2 && t[len - 2] == '=') pad++;
    for (i = 0; i < len - pad; i++) {
        if (b64_value(t[i]) < 0) {
            if (t[i] == '=')
                snprintf(err, err_cap,
                         "base64: padding '=' at offset %zu; it may appear only in the last two places", i);
            else
                snprintf(err, err_cap,
                         "base64: expected A-Z a-z 0-9 + / or final '=' padding, found %s at offset %zu",
                         show_char(t[i], cb, sizeof cb), i);
            return PRT_STATUS_BAD_FORMAT;
        }
    }
    n = len / 4 * 3 - pad;
    if (pad) { /* the bits below the last full byte must be zero */
        int last = b64_value(t[len - pad - 1]);
        int mask = pad == 1 ? 0x3 : 0xf;
        if (last & mask) {
            snprintf(err, err_cap, "base64: non-zero unused bits in %s at offset %zu before the padding",
                     show_char(t[len - pad - 1], cb, sizeof cb), len - pad - 1);
            return PRT_STATUS_BAD_FORMAT;
        }
    }
    buf = prt__malloc(n ? n : 1);
    if (!buf) {
        snprintf(err, err_cap, "base64: out of memory (%zu bytes)", n);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < len; i += 4) {
        uint32_t v = 0;
        int k, chars = 4;
        for (k = 0; k < 4; k++) {
            int c = t[i + k] == '=' ? 0 : b64_value(t[i + k]);
            if (t[i + k] == '=' && chars == 4) chars = k;
            v = v << 6 | (uint32_t)c;
        }
        buf[o++] = (uint8_t)(v >> 16);
        if (chars > 2) buf[o++] = (uint8_t)(v >> 8);
        if (chars > 3) buf[o++] = (uint8_t)v;
    }
    *out = buf;
    *out_len = n;
    (void)o;
    return PRT_OK;
}
