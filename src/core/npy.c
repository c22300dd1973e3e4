/* core/npy.c - NumPy .npy reader and writer (format: plugrt/npy.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "plugrt/npy.h"

static const char NPY_MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct {
    const char *descr;
    size_t size;
} npy_types[PRT_NPY_COUNT_] = {
    [PRT_NPY_F2] = {"<f2", 2}, [PRT_NPY_F4] = {"<f4", 4}, [PRT_NPY_F8] = {"<f8", 8},
    [PRT_NPY_I1] = {"|i1", 1}, [PRT_NPY_U1] = {"|u1", 1}, [PRT_NPY_I4] = {"<i4", 4},
    [PRT_NPY_I8] = {"<i8", 8}, [PRT_NPY_B1] = {"|b1", 1},
};

#define NPY_EXPECTED_TYPES "<f2 <f4 <f8 |i1 |u1 <i4 <i8 |b1"

const char *prt_npy_type_descr(prt_npy_type t)
{
    return (unsigned)t < PRT_NPY_COUNT_ ? npy_types[t].descr : "?";
}

size_t prt_npy_type_size(prt_npy_type t)
{
    return (unsigned)t < PRT_NPY_COUNT_ ? npy_types[t].size : 0;
}

prt_status prt_npy_type_to_dtype(prt_npy_type t, prt_dtype *out)
{
    static const int map[PRT_NPY_COUNT_] = {
        [PRT_NPY_F2] = PRT_DTYPE_F16, [PRT_NPY_F4] = PRT_DTYPE_F32, [PRT_NPY_F8] = -1,
        [PRT_NPY_I1] = PRT_DTYPE_I8,  [PRT_NPY_U1] = PRT_DTYPE_U8,  [PRT_NPY_I4] = PRT_DTYPE_I32,
        [PRT_NPY_I8] = PRT_DTYPE_I64, [PRT_NPY_B1] = PRT_DTYPE_BOOL,
    };
    if ((unsigned)t >= PRT_NPY_COUNT_ || map[t] < 0) return PRT_STATUS_UNSUPPORTED;
    *out = (prt_dtype)map[t];
    return PRT_OK;
}

prt_status prt_npy_type_from_dtype(prt_dtype t, prt_npy_type *out)
{
    prt_npy_type r;
    switch (t) {
    case PRT_DTYPE_F32: r = PRT_NPY_F4; break;
    case PRT_DTYPE_F16: r = PRT_NPY_F2; break;
    case PRT_DTYPE_I8: r = PRT_NPY_I1; break;
    case PRT_DTYPE_U8: r = PRT_NPY_U1; break;
    case PRT_DTYPE_I32: r = PRT_NPY_I4; break;
    case PRT_DTYPE_I64: r = PRT_NPY_I8; break;
    case PRT_DTYPE_BOOL: r = PRT_NPY_B1; break;
    default: return PRT_STATUS_UNSUPPORTED;
    }
    *out = r;
    return PRT_OK;
}

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 0;
}

static void swap_bytes(void *data, int64_t count, size_t size)
{
    uint8_t *p = data;
    int64_t i;
    size_t k;
    if (size < 2 || !host_is_big_endian()) return;
    for (i = 0; i < count; i++, p += size)
        for (k = 0; k < size / 2; k++) {
            uint8_t t = p[k];
            p[k] = p[size - 1 - k];
            p[size - 1 - k] = t;
        }
}

/* ---- header dict parser ---------------------------------------------------- */

typedef struct hdr_parser {
    const char *p, *end;
    const void *err_obj;
} hdr_parser;

static void skip_ws(hdr_parser *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

/* A printable excerpt of what is at the cursor, for error messages. */
static const char *found_here(const hdr_parser *h, char *buf, size_t cap)
{
    size_t n = 0;
    const char *q = h->p;
    if (q >= h->end) return "the end of the header";
    buf[n++] = '"';
    while (q < h->end && n + 5 < cap && n < 17) {
        unsigned char c = (unsigned char)*q++;
        buf[n++] = (c >= 32 && c < 127) ? (char)c : '?';
    }
    if (q < h->end && n + 4 < cap) { buf[n++] = '.'; buf[n++] = '.'; buf[n++] = '.'; }
    buf[n++] = '"';
    buf[n] = 0;
    return buf;
}

static prt_status hdr_expect(hdr_parser *h, char c, const char *what)
{
    char ex[32];
    skip_ws(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return PRT_OK;
    }
    return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT, "npy: header: expected %s, found %s", what,
                    found_here(h, ex, sizeof ex));
}

/* A quoted string; *s / *n point into the header. */
static prt_status hdr_string(hdr_parser *h, const char **s, size_t *n, const char *what)
{
    char ex[32], q;
    const char *start;
    skip_ws(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
        return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT, "npy: header: expected %s, found %s",
                        what, found_here(h, ex, sizeof ex));
    q = *h->p++;
    start = h->p;
    while (h->p < h->end && *h->p != q && *h->p != '\n') h->p++;
    if (h->p >= h->end || *h->p != q) {
        ptrdiff_t avail = h->end - (start - 1);
        return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: header: string starting at \"%.*s\" is not closed",
                        (int)(avail < 10 ? avail : 10), start - 1);
    }
    *s = start;
    *n = (size_t)(h->p - start);
    h->p++;
    return PRT_OK;
}

static int hdr_word(hdr_parser *h, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
        h->p += n;
        return 1;
    }
    return 0;
}

static prt_status hdr_shape(hdr_parser *h, prt_dims *shape)
{
    char ex[32], close;
    int32_t nb = 0;
    skip_ws(h);
    if (h->p < h->end && *h->p == '(') close = ')';
    else if (h->p < h->end && *h->p == '[') close = ']';
    else
        return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: header: 'shape' must be a tuple of ints, found %s",
                        found_here(h, ex, sizeof ex));
    h->p++;
    for (;;) {
        int64_t v = 0;
        int digits = 0;
        skip_ws(h);
        if (h->p < h->end && *h->p == close) { h->p++; break; }
        if (h->p < h->end && *h->p == '-')
            return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                            "npy: header: shape dimension %d is negative (%s); dimensions must be >= 0",
                            (int)nb, found_here(h, ex, sizeof ex));
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            int d = *h->p - '0';
            if (v > (INT64_MAX - d) / 10)
                return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                                "npy: header: shape dimension %d does not fit in 64 bits", (int)nb);
            v = v * 10 + d;
            digits++;
            h->p++;
        }
        if (!digits)
            return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                            "npy: header: expected a dimension (non-negative int) in 'shape', found %s",
                            found_here(h, ex, sizeof ex));
        if (h->p < h->end && (*h->p == 'L' || *h->p == 'l')) h->p++; /* Python 2 long */
        if (nb >= PRT_MAX_DIMS)
            return prt__err(h->err_obj, PRT_STATUS_UNSUPPORTED,
                            "npy: shape has more than %d dimensions", PRT_MAX_DIMS);
        shape->d[nb++] = v;
        skip_ws(h);
        if (h->p < h->end && *h->p == ',') { h->p++; continue; }
        if (h->p < h->end && *h->p == close) { h->p++; break; }
        return prt__err(h->err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: header: expected ',' or '%c' in 'shape', found %s", close,
                        found_here(h, ex, sizeof ex));
    }
    shape->nb = nb;
    return PRT_OK;
}

static prt_status parse_descr(const void *err_obj, const char *s, size_t n, prt_npy_type *out)
{
    int i;
    for (i = 0; i < PRT_NPY_COUNT_; i++) {
        const char *d = npy_types[i].descr;
        if (n == 3 && (s[0] == '<' || s[0] == '|') && s[1] == d[1] && s[2] == d[2]) {
            *out = (prt_npy_type)i;
            return PRT_OK;
        }
    }
    return prt__err(err_obj, PRT_STATUS_UNSUPPORTED,
                    "npy: unsupported dtype: expected one of " NPY_EXPECTED_TYPES ", found '%.*s'",
                    (int)(n > 40 ? 40 : n), s);
}

typedef struct npy_header {
    prt_npy_type type;
    int fortran;
    prt_dims shape;
} npy_header;

static prt_status parse_header_dict(const void *err_obj, const char *text, size_t len, npy_header *hd)
{
    hdr_parser h = {text, text + len, err_obj};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    char ex[32];
    prt_status s;
    memset(hd, 0, sizeof *hd);
    if ((s = hdr_expect(&h, '{', "'{' opening the header dict")) != PRT_OK) return s;
    for (;;) {
        const char *key;
        size_t kn;
        skip_ws(&h);
        if (h.p < h.end && *h.p == '}') { h.p++; break; }
        if ((s = hdr_string(&h, &key, &kn, "a quoted key or '}'")) != PRT_OK) return s;
        if ((s = hdr_expect(&h, ':', "':' after a key")) != PRT_OK) return s;
        skip_ws(&h);
        if (kn == 5 && memcmp(key, "descr", 5) == 0) {
            const char *v;
            size_t vn;
            if (have_descr++) goto duplicate;
            if (h.p < h.end && *h.p == '[')
                return prt__err(err_obj, PRT_STATUS_UNSUPPORTED,
                                "npy: structured dtypes are not supported: expected one of "
                                NPY_EXPECTED_TYPES ", found a field list");
            if ((s = hdr_string(&h, &v, &vn, "a quoted dtype for 'descr'")) != PRT_OK) return s;
            if ((s = parse_descr(err_obj, v, vn, &hd->type)) != PRT_OK) return s;
        } else if (kn == 13 && memcmp(key, "fortran_order", 13) == 0) {
            if (have_fortran++) goto duplicate;
            if (hdr_word(&h, "True")) hd->fortran = 1;
            else if (hdr_word(&h, "False")) hd->fortran = 0;
            else
                return prt__err(err_obj, PRT_STATUS_BAD_FORMAT,
                                "npy: header: 'fortran_order' must be True or False, found %s",
                                found_here(&h, ex, sizeof ex));
        } else if (kn == 5 && memcmp(key, "shape", 5) == 0) {
            if (have_shape++) goto duplicate;
            if ((s = hdr_shape(&h, &hd->shape)) != PRT_OK) return s;
        } else {
            return prt__err(err_obj, PRT_STATUS_BAD_FORMAT,
                            "npy: header: unexpected key '%.*s' (expected 'descr', 'fortran_order', 'shape')",
                            (int)(kn > 40 ? 40 : kn), key);
        }
        skip_ws(&h);
        if (h.p < h.end && *h.p == ',') { h.p++; continue; }
        if (h.p < h.end && *h.p == '}') { h.p++; break; }
        return prt__err(err_obj, PRT_STATUS_BAD_FORMAT, "npy: header: expected ',' or '}', found %s",
                        found_here(&h, ex, sizeof ex));
    duplicate:
        return prt__err(err_obj, PRT_STATUS_BAD_FORMAT, "npy: header: key '%.*s' appears twice",
                        (int)kn, key);
    }
    skip_ws(&h);
    if (h.p != h.end)
        return prt__err(err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: header: expected only spaces and a newline after the dict, found %s",
                        found_here(&h, ex, sizeof ex));
    if (!have_descr || !have_fortran || !have_shape)
        return prt__err(err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: header dict is missing %s%s%s(it needs 'descr', 'fortran_order' and 'shape')",
                        have_descr ? "" : "'descr' ", have_fortran ? "" : "'fortran_order' ",
                        have_shape ? "" : "'shape' ");
    return PRT_OK;
}

/* count and byte size of a shape, or an error naming the shape. */
static prt_status shape_size(const void *err_obj, const prt_dims *shape, size_t elem,
                             int64_t *count, size_t *nbytes)
{
    int64_t c = prt_dims_volume(shape);
    char buf[160];
    int32_t k;
    for (k = 0; k < shape->nb; k++)
        if (shape->d[k] < 0)
            return prt__err(err_obj, PRT_STATUS_INVALID_ARGUMENT,
                            "npy: shape %s: dimensions must be >= 0, found %" PRId64 " at %d",
                            prt_dims_str(shape, buf, sizeof buf), shape->d[k], (int)k);
    if (c < 0 || (uint64_t)c > SIZE_MAX / elem || (uint64_t)c > (uint64_t)INT64_MAX / elem)
        return prt__err(err_obj, PRT_STATUS_BAD_FORMAT,
                        "npy: shape %s is too large: its size overflows 64 bits",
                        prt_dims_str(shape, buf, sizeof buf));
    *count = c;
    *nbytes = (size_t)c * elem;
    return PRT_OK;
}

/* Fortran order -> C order. */
static void fortran_to_c(const uint8_t *src, uint8_t *dst, const prt_dims *shape, size_t elem,
                         int64_t count)
{
    int64_t idx[PRT_MAX_DIMS] = {0}, fstride[PRT_MAX_DIMS];
    int32_t nb = shape->nb, k;
    int64_t i, off = 0, st = 1;
    for (k = 0; k < nb; k++) {
        fstride[k] = st;
        st *= shape->d[k];
    }
    for (i = 0; i < count; i++) {
        memcpy(dst + (size_t)i * elem, src + (size_t)off * elem, elem);
        /* advance the C-order multi-index: last dimension fastest */
        for (k = nb - 1; k >= 0; k--) {
            idx[k]++;
            off += fstride[k];
            if (idx[k] < shape->d[k]) break;
            off -= idx[k] * fstride[k];
            idx[k] = 0;
        }
    }
}

prt_status prt_npy_read_mem(const void *buf, size_t len, prt_npy_array *out)
{
    const uint8_t *b = buf;
    size_t hstart, hlen, need;
    npy_header hd;
    int64_t count;
    size_t nbytes, elem;
    void *data;
    prt_status s;

    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    if (!buf && len) return prt__err(out, PRT_STATUS_INVALID_ARGUMENT, "npy: no buffer given");
    {
        size_t m = len < 6 ? len : 6;
        if (m && memcmp(b, NPY_MAGIC, m) != 0) {
            char got[40] = "";
            size_t i, n = 0;
            for (i = 0; i < m; i++) n += (size_t)snprintf(got + n, sizeof got - n, " %02x", b[i]);
            return prt__err(out, PRT_STATUS_BAD_FORMAT,
                            "npy: bad magic: expected 93 4e 55 4d 50 59 (\\x93NUMPY), found%s", got);
        }
        if (len < 8)
            return prt__err(out, PRT_STATUS_TRUNCATED,
                            "npy: data ends early: expected at least 10 bytes of preamble, found %zu",
                            len);
    }
    if (b[6] == 1 && b[7] == 0) {
        hstart = 10;
    } else if ((b[6] == 2 || b[6] == 3) && b[7] == 0) {
        hstart = 12;
    } else {
        return prt__err(out, PRT_STATUS_VERSION_MISMATCH,
                        "npy: expected format version 1.0, 2.0 or 3.0, found %u.%u", b[6], b[7]);
    }
    if (len < hstart)
        return prt__err(out, PRT_STATUS_TRUNCATED,
                        "npy: data ends early: expected %zu bytes of preamble, found %zu", hstart, len);
    if (hstart == 10)
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
    else
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    if (hlen > len - hstart)
        return prt__err(out, PRT_STATUS_TRUNCATED,
                        "npy: header ends early: expected %zu header bytes, found %zu", hlen,
                        len - hstart);
    if ((s = parse_header_dict(out, (const char *)b + hstart, hlen, &hd)) != PRT_OK) return s;
    elem = npy_types[hd.type].size;
    if ((s = shape_size(out, &hd.shape, elem, &count, &nbytes)) != PRT_OK) return s;
    need = hstart + hlen;
    if (len - need < nbytes) {
        char sb[160];
        return prt__err(out, PRT_STATUS_TRUNCATED,
                        "npy: data ends early: shape %s of %s needs %zu bytes, found %zu",
                        prt_dims_str(&hd.shape, sb, sizeof sb), npy_types[hd.type].descr, nbytes,
                        len - need);
    }
    if (len - need > nbytes) {
        char sb[160];
        return prt__err(out, PRT_STATUS_BAD_FORMAT,
                        "npy: %zu trailing bytes: shape %s of %s needs %zu bytes, found %zu",
                        len - need - nbytes, prt_dims_str(&hd.shape, sb, sizeof sb),
                        npy_types[hd.type].descr, nbytes, len - need);
    }
    data = prt__malloc(nbytes);
    if (!data)
        return prt__err(out, PRT_STATUS_OUT_OF_MEMORY, "npy: out of memory (%zu bytes of data)",
                        nbytes);
    if (hd.fortran && hd.shape.nb > 1)
        fortran_to_c(b + need, data, &hd.shape, elem, count);
    else if (nbytes)
        memcpy(data, b + need, nbytes);
    swap_bytes(data, count, elem);
    if (hd.type == PRT_NPY_B1) {
        uint8_t *p = data;
        int64_t i;
        for (i = 0; i < count; i++) p[i] = p[i] != 0;
    }
    memset(out, 0, sizeof *out);
    out->type = hd.type;
    out->shape = hd.shape;
    out->count = count;
    out->nbytes = nbytes;
    out->data = data;
    return PRT_OK;
}

prt_status prt_npy_read_file(const char *path, prt_npy_array *out)
{
    void *buf;
    size_t len;
    char err[PRT_ERR_CAP];
    prt_status s;
    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    s = prt__read_file(path, &buf, &len, err, sizeof err);
    if (s != PRT_OK) return prt__err(out, s, "npy: %s", err);
    s = prt_npy_read_mem(buf, len, out);
    prt__free(buf);
    if (s != PRT_OK) {
        char msg[PRT_ERR_CAP];
        snprintf(msg, sizeof msg, "%s", prt__err_get(out));
        return prt__err(out, s, "%s: %s", path, msg);
    }
    return s;
}

/* ---- writing ---------------------------------------------------------------- */

static prt_status check_array(const prt_npy_array *a)
{
    int64_t count;
    size_t nbytes;
    prt_status s;
    if ((unsigned)a->type >= PRT_NPY_COUNT_)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: unknown element type %d", (int)a->type);
    if (a->shape.nb < 0 || a->shape.nb > PRT_MAX_DIMS)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: shape needs 0..%d dimensions, found %d",
                        PRT_MAX_DIMS, (int)a->shape.nb);
    if ((s = shape_size(a, &a->shape, npy_types[a->type].size, &count, &nbytes)) != PRT_OK) return s;
    if (count != a->count || nbytes != a->nbytes)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT,
                        "npy: count %" PRId64 " and nbytes %zu do not match the shape (%" PRId64
                        " elements, %zu bytes)", a->count, a->nbytes, count, nbytes);
    if (!a->data && nbytes)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: array has no data");
    return PRT_OK;
}

prt_status prt_npy_write_mem(const prt_npy_array *a, void **buf, size_t *len)
{
    char dict[64 + PRT_MAX_DIMS * 24];
    size_t n, pre, total_hdr, pad, i;
    uint8_t *out;
    int32_t k;
    prt_status s;
    if (!a || !buf || !len) return PRT_STATUS_INVALID_ARGUMENT;
    if ((s = check_array(a)) != PRT_OK) return s;
    n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (",
                         npy_types[a->type].descr);
    for (k = 0; k < a->shape.nb; k++)
        n += (size_t)snprintf(dict + n, sizeof dict - n, "%s%" PRId64, k ? ", " : "", a->shape.d[k]);
    n += (size_t)snprintf(dict + n, sizeof dict - n, "%s), }", a->shape.nb == 1 ? "," : "");
    pre = 10; /* version 1.0; the dict above always fits in 65535 bytes */
    total_hdr = pre + n + 1;
    pad = (64 - total_hdr % 64) % 64;
    total_hdr += pad;
    out = prt__malloc(total_hdr + a->nbytes);
    if (!out) return prt__err(a, PRT_STATUS_OUT_OF_MEMORY, "npy: out of memory writing %zu bytes",
                              total_hdr + a->nbytes);
    memcpy(out, NPY_MAGIC, 6);
    out[6] = 1;
    out[7] = 0;
    out[8] = (uint8_t)((total_hdr - pre) & 0xff);
    out[9] = (uint8_t)((total_hdr - pre) >> 8);
    memcpy(out + pre, dict, n);
    for (i = 0; i < pad; i++) out[pre + n + i] = ' ';
    out[total_hdr - 1] = '\n';
    if (a->nbytes) memcpy(out + total_hdr, a->data, a->nbytes);
    swap_bytes(out + total_hdr, a->count, npy_types[a->type].size);
    *buf = out;
    *len = total_hdr + a->nbytes;
    return PRT_OK;
}

prt_status prt_npy_write_file(const prt_npy_array *a, const char *path)
{
    void *buf;
    size_t len;
    FILE *f;
    prt_status s;
    if (!a) return PRT_STATUS_INVALID_ARGUMENT;
    if (!path) return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: no file name given");
    if ((s = prt_npy_write_mem(a, &buf, &len)) != PRT_OK) return s;
    f = fopen(path, "wb");
    if (!f) {
        s = prt__err(a, PRT_STATUS_IO_ERROR, "npy: cannot create \"%s\": %s", path, strerror(errno));
        goto free_buf;
    }
    if (fwrite(buf, 1, len, f) != len) {
        s = prt__err(a, PRT_STATUS_IO_ERROR, "npy: cannot write \"%s\": %s", path, strerror(errno));
        fclose(f);
        goto free_buf;
    }
    if (fclose(f) != 0)
        s = prt__err(a, PRT_STATUS_IO_ERROR, "npy: cannot write \"%s\": %s", path, strerror(errno));
free_buf:
    prt__free(buf);
    return s;
}

void prt_npy_free(void *buf)
{
    prt__free(buf);
}

prt_status prt_npy_array_alloc(prt_npy_array *out, prt_npy_type t, const prt_dims *shape)
{
    int64_t count;
    size_t nbytes;
    void *data;
    prt_status s;
    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    if ((unsigned)t >= PRT_NPY_COUNT_)
        return prt__err(out, PRT_STATUS_INVALID_ARGUMENT, "npy: unknown element type %d", (int)t);
    if (!shape || shape->nb < 0 || shape->nb > PRT_MAX_DIMS)
        return prt__err(out, PRT_STATUS_INVALID_ARGUMENT, "npy: shape needs 0..%d dimensions",
                        PRT_MAX_DIMS);
    if ((s = shape_size(out, shape, npy_types[t].size, &count, &nbytes)) != PRT_OK) return s;
    data = prt__calloc(1, nbytes);
    if (!data) return prt__err(out, PRT_STATUS_OUT_OF_MEMORY, "npy: out of memory (%zu bytes)", nbytes);
    memset(out, 0, sizeof *out);
    out->type = t;
    out->shape = *shape;
    out->shape.reserved_ = 0;
    out->count = count;
    out->nbytes = nbytes;
    out->data = data;
    return PRT_OK;
}

void prt_npy_array_clear(prt_npy_array *a)
{
    if (!a) return;
    prt__free(a->data);
    memset(a, 0, sizeof *a);
}

/* ---- element access and conversion ---------------------------------------------- */

static double get_f64(const void *data, prt_npy_type t, int64_t i)
{
    const uint8_t *p = (const uint8_t *)data + (size_t)i * npy_types[t].size;
    switch (t) {
    case PRT_NPY_F2: { uint16_t v; memcpy(&v, p, 2); return prt_f16_to_f32(v); }
    case PRT_NPY_F4: { float v; memcpy(&v, p, 4); return v; }
    case PRT_NPY_F8: { double v; memcpy(&v, p, 8); return v; }
    case PRT_NPY_I1: return (int8_t)p[0];
    case PRT_NPY_U1: return p[0];
    case PRT_NPY_I4: { int32_t v; memcpy(&v, p, 4); return v; }
    case PRT_NPY_I8: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case PRT_NPY_B1: return p[0] != 0;
    default: return NAN;
    }
}

static int is_int_type(prt_npy_type t)
{
    return t == PRT_NPY_I1 || t == PRT_NPY_U1 || t == PRT_NPY_I4 || t == PRT_NPY_I8 || t == PRT_NPY_B1;
}

static int64_t get_i64(const void *data, prt_npy_type t, int64_t i)
{
    if (t == PRT_NPY_I8) {
        int64_t v;
        memcpy(&v, (const uint8_t *)data + (size_t)i * 8, 8);
        return v;
    }
    return (int64_t)get_f64(data, t, i);
}

double prt_npy_get_f64(const prt_npy_array *a, int64_t i)
{
    if (!a || !a->data || i < 0 || i >= a->count || (unsigned)a->type >= PRT_NPY_COUNT_) return NAN;
    return get_f64(a->data, a->type, i);
}

/* Range of the integer target types. */
static void int_range(prt_dtype dt, int64_t *lo, int64_t *hi)
{
    switch (dt) {
    case PRT_DTYPE_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case PRT_DTYPE_U8: *lo = 0; *hi = UINT8_MAX; break;
    case PRT_DTYPE_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case PRT_DTYPE_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break;
    }
}

prt_status prt_npy_convert(const prt_npy_array *a, prt_dtype dt, void *dst, size_t dst_bytes)
{
    size_t esz = prt_dtype_size(dt);
    int64_t i;
    int to_int;
    if (!a) return PRT_STATUS_INVALID_ARGUMENT;
    if ((unsigned)a->type >= PRT_NPY_COUNT_)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: unknown element type %d", (int)a->type);
    if (esz == 0)
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: unknown target dtype %d", (int)dt);
    if (a->count < 0 || (uint64_t)a->count > SIZE_MAX / esz || (size_t)a->count * esz != dst_bytes)
        return prt__err(a, PRT_STATUS_SHAPE_MISMATCH,
                        "npy: converting %" PRId64 " elements to %s needs %zu bytes, found a %zu-byte buffer",
                        a->count, prt_dtype_name(dt), (size_t)a->count * esz, dst_bytes);
    if (a->count && (!a->data || !dst))
        return prt__err(a, PRT_STATUS_INVALID_ARGUMENT, "npy: no data to convert");
    to_int = dt == PRT_DTYPE_I8 || dt == PRT_DTYPE_U8 || dt == PRT_DTYPE_I32 || dt == PRT_DTYPE_I64 ||
             dt == PRT_DTYPE_BOOL;
    if (to_int) { /* check every value first, so that a failure writes nothing */
        int64_t lo, hi;
        int_range(dt, &lo, &hi);
        for (i = 0; i < a->count; i++) {
            if (is_int_type(a->type)) {
                int64_t v = get_i64(a->data, a->type, i);
                if (v < lo || v > hi)
                    return prt__err(a, PRT_STATUS_TYPE_MISMATCH,
                                    "npy: element %" PRId64 " = %" PRId64 " does not fit in %s",
                                    i, v, prt_dtype_name(dt));
            } else {
                double v = get_f64(a->data, a->type, i);
                if (!(v == floor(v)) || v < (double)lo || v >= -(double)INT64_MIN ||
                    (hi < INT64_MAX && v > (double)hi))
                    return prt__err(a, PRT_STATUS_TYPE_MISMATCH,
                                    "npy: element %" PRId64 " = %.17g of %s is not a %s value",
                                    i, v, npy_types[a->type].descr, prt_dtype_name(dt));
            }
        }
    }
    for (i = 0; i < a->count; i++) {
        uint8_t *o = (uint8_t *)dst + (size_t)i * esz;
        switch (dt) {
        case PRT_DTYPE_F32: {
            float v = (float)get_f64(a->data, a->type, i);
            memcpy(o, &v, 4);
            break;
        }
        case PRT_DTYPE_F16: {
            uint16_t v;
            if (a->type == PRT_NPY_F2) memcpy(&v, (const uint8_t *)a->data + (size_t)i * 2, 2);
            else v = prt_f32_to_f16((float)get_f64(a->data, a->type, i));
            memcpy(o, &v, 2);
            break;
        }
        case PRT_DTYPE_BF16: {
            uint16_t v = prt_f32_to_bf16((float)get_f64(a->data, a->type, i));
            memcpy(o, &v, 2);
            break;
        }
        case PRT_DTYPE_I8: case PRT_DTYPE_U8: case PRT_DTYPE_BOOL:
            o[0] = (uint8_t)get_i64(a->data, a->type, i);
            break;
        case PRT_DTYPE_I32: {
            int32_t v = (int32_t)get_i64(a->data, a->type, i);
            memcpy(o, &v, 4);
            break;
        }
        case PRT_DTYPE_I64: {
            int64_t v = get_i64(a->data, a->type, i);
            memcpy(o, &v, 8);
            break;
        }
        default: break;
        }
    }
    return PRT_OK;
}
