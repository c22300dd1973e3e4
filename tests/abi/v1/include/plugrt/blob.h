/*
 * plugrt/blob.h - bounded little-endian writer and reader.
 *
 * Contract
 *   Header-only, so that plugins (which never link libplugrt) and the library
 *   share one encoding. Integers are fixed-width little-endian, floats are
 *   their IEEE bits as little-endian integers, strings are a u32 byte length
 *   followed by the bytes (no NUL). Nothing is ever copied as a struct.
 *
 *   A writer with buf == NULL only counts bytes (use it for get_*_size).
 *   Writing past `cap` sets `failed` and stops writing; reading past the end,
 *   or a length that does not fit in what is left, sets `failed` and yields
 *   zeros. Check `failed` (and prt_reader_left() == 0) once at the end.
 */
#ifndef PLUGRT_BLOB_H
#define PLUGRT_BLOB_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_writer {
    uint8_t *buf;  /* NULL: count only */
    size_t cap;
    size_t len;    /* bytes written (or counted) so far */
    int failed;
} prt_writer;

typedef struct prt_reader {
    const uint8_t *buf;
    size_t len;
    size_t pos;
    int failed;
} prt_reader;

static inline prt_writer prt_writer_init(void *buf, size_t cap)
{
    prt_writer w;
    w.buf = (uint8_t *)buf; w.cap = cap; w.len = 0; w.failed = 0;
    return w;
}

static inline prt_reader prt_reader_init(const void *buf, size_t len)
{
    prt_reader r;
    r.buf = (const uint8_t *)buf; r.len = buf ? len : 0; r.pos = 0; r.failed = 0;
    return r;
}

static inline void prt_write_bytes(prt_writer *w, const void *p, size_t n)
{
    if (w->failed) return;
    if (w->buf) {
        if (n > w->cap - w->len || w->len > w->cap) { w->failed = 1; return; }
        if (n) memcpy(w->buf + w->len, p, n);
    } else if (n > SIZE_MAX - w->len) {
        w->failed = 1; return;
    }
    w->len += n;
}

static inline void prt_write_uint_(prt_writer *w, uint64_t v, int nbytes)
{
    uint8_t b[8];
    int i;
    for (i = 0; i < nbytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    prt_write_bytes(w, b, (size_t)nbytes);
}

static inline void prt_write_u8(prt_writer *w, uint8_t v) { prt_write_uint_(w, v, 1); }
static inline void prt_write_u16(prt_writer *w, uint16_t v) { prt_write_uint_(w, v, 2); }
static inline void prt_write_u32(prt_writer *w, uint32_t v) { prt_write_uint_(w, v, 4); }
static inline void prt_write_u64(prt_writer *w, uint64_t v) { prt_write_uint_(w, v, 8); }
static inline void prt_write_i32(prt_writer *w, int32_t v) { prt_write_uint_(w, (uint32_t)v, 4); }
static inline void prt_write_i64(prt_writer *w, int64_t v) { prt_write_uint_(w, (uint64_t)v, 8); }
static inline void prt_write_f32(prt_writer *w, float v)
{
    uint32_t u; memcpy(&u, &v, 4); prt_write_u32(w, u);
}
static inline void prt_write_f64(prt_writer *w, double v)
{
    uint64_t u; memcpy(&u, &v, 8); prt_write_u64(w, u);
}
/* u32 length + bytes; NULL writes an empty string. */
static inline void prt_write_str(prt_writer *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) { w->failed = 1; return; }
    prt_write_u32(w, (uint32_t)n);
    prt_write_bytes(w, s, n);
}
/* Zero bytes until len is a multiple of `align` (a power of two). */
static inline void prt_write_pad(prt_writer *w, size_t align)
{
    static const uint8_t z[64] = {0};
    while (!w->failed && (w->len & (align - 1))) {
        size_t n = align - (w->len & (align - 1));
        prt_write_bytes(w, z, n > 64 ? 64 : n);
    }
}

static inline size_t prt_reader_left(const prt_reader *r) { return r->failed ? 0 : r->len - r->pos; }

/* Pointer to the next n bytes (borrowed from the reader's buffer), or NULL
 * and `failed` set if fewer are left. */
static inline const uint8_t *prt_read_bytes(prt_reader *r, size_t n)
{
    const uint8_t *p;
    if (r->failed || n > r->len - r->pos) { r->failed = 1; return NULL; }
    p = r->buf + r->pos;
    r->pos += n;
    return p;
}

static inline uint64_t prt_read_uint_(prt_reader *r, int nbytes)
{
    const uint8_t *p = prt_read_bytes(r, (size_t)nbytes);
    uint64_t v = 0;
    int i;
    if (!p) return 0;
    for (i = 0; i < nbytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline uint8_t prt_read_u8(prt_reader *r) { return (uint8_t)prt_read_uint_(r, 1); }
static inline uint16_t prt_read_u16(prt_reader *r) { return (uint16_t)prt_read_uint_(r, 2); }
static inline uint32_t prt_read_u32(prt_reader *r) { return (uint32_t)prt_read_uint_(r, 4); }
static inline uint64_t prt_read_u64(prt_reader *r) { return prt_read_uint_(r, 8); }
static inline int32_t prt_read_i32(prt_reader *r) { return (int32_t)prt_read_u32(r); }
static inline int64_t prt_read_i64(prt_reader *r) { return (int64_t)prt_read_u64(r); }
static inline float prt_read_f32(prt_reader *r)
{
    uint32_t u = prt_read_u32(r); float f; memcpy(&f, &u, 4); return f;
}
static inline double prt_read_f64(prt_reader *r)
{
    uint64_t u = prt_read_u64(r); double f; memcpy(&f, &u, 8); return f;
}
/* A length-prefixed string: pointer into the buffer (not NUL-terminated) and
 * its length. A length that does not fit what is left fails the reader. */
static inline const char *prt_read_str(prt_reader *r, uint32_t *len)
{
    uint32_t n = prt_read_u32(r);
    const uint8_t *p = prt_read_bytes(r, n);
    *len = p ? n : 0;
    return (const char *)p;
}
/* Skip zero padding to `align`; non-zero padding bytes fail the reader. */
static inline void prt_read_pad(prt_reader *r, size_t align)
{
    while (!r->failed && (r->pos & (align - 1))) {
        if (prt_read_u8(r) != 0) r->failed = 1;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_BLOB_H */
