/* onnx/tensor.c - ONNX element types and TensorProto payloads: typed data
 * fields, raw_data and external data files. */
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "onnx/onnx_impl.h"

static const struct {
    int32_t code;
    const char *name;
    size_t size;    /* packed element size; 0: plugrt cannot hold it */
    int has_dtype;
    prt_dtype dtype;
} types[] = {
    {PRT__ONNX_FLOAT, "float", 4, 1, PRT_DTYPE_F32},     {PRT__ONNX_UINT8, "uint8", 1, 1, PRT_DTYPE_U8},
    {PRT__ONNX_INT8, "int8", 1, 1, PRT_DTYPE_I8},        {PRT__ONNX_UINT16, "uint16", 2, 0, PRT_DTYPE_F32},
    {PRT__ONNX_INT16, "int16", 2, 0, PRT_DTYPE_F32},     {PRT__ONNX_INT32, "int32", 4, 1, PRT_DTYPE_I32},
    {PRT__ONNX_INT64, "int64", 8, 1, PRT_DTYPE_I64},     {PRT__ONNX_STRING, "string", 0, 0, PRT_DTYPE_F32},
    {PRT__ONNX_BOOL, "bool", 1, 1, PRT_DTYPE_BOOL},      {PRT__ONNX_FLOAT16, "float16", 2, 1, PRT_DTYPE_F16},
    {PRT__ONNX_DOUBLE, "double", 8, 0, PRT_DTYPE_F32},   {PRT__ONNX_UINT32, "uint32", 4, 0, PRT_DTYPE_F32},
    {PRT__ONNX_UINT64, "uint64", 8, 0, PRT_DTYPE_F32},   {PRT__ONNX_COMPLEX64, "complex64", 0, 0, PRT_DTYPE_F32},
    {PRT__ONNX_COMPLEX128, "complex128", 0, 0, PRT_DTYPE_F32},
    {PRT__ONNX_BFLOAT16, "bfloat16", 2, 1, PRT_DTYPE_BF16},
    {17, "float8e4m3fn", 0, 0, PRT_DTYPE_F32},           {18, "float8e4m3fnuz", 0, 0, PRT_DTYPE_F32},
    {19, "float8e5m2", 0, 0, PRT_DTYPE_F32},             {20, "float8e5m2fnuz", 0, 0, PRT_DTYPE_F32},
    {21, "uint4", 0, 0, PRT_DTYPE_F32},                  {22, "int4", 0, 0, PRT_DTYPE_F32},
    {23, "float4e2m1", 0, 0, PRT_DTYPE_F32},             {24, "float8e8m0", 0, 0, PRT_DTYPE_F32},
    {25, "uint2", 0, 0, PRT_DTYPE_F32},                  {26, "int2", 0, 0, PRT_DTYPE_F32},
};
#define NB_TYPES ((int)(sizeof types / sizeof types[0]))

static int type_index(int32_t code)
{
    int i;
    for (i = 0; i < NB_TYPES; i++)
        if (types[i].code == code) return i;
    return -1;
}

size_t prt__onnx_type_size(int32_t code)
{
    int i = type_index(code);
    return i < 0 ? 0 : types[i].size;
}

const char *prt__onnx_type_name(int32_t code)
{
    int i = type_index(code);
    return i < 0 ? (code == 0 ? "undefined" : "unknown") : types[i].name;
}

int prt__onnx_type_to_dtype(int32_t code, prt_dtype *out)
{
    int i = type_index(code);
    if (i < 0 || !types[i].has_dtype) return 0;
    *out = types[i].dtype;
    return 1;
}

int32_t prt__onnx_type_from_dtype(prt_dtype t)
{
    int i;
    for (i = 0; i < NB_TYPES; i++)
        if (types[i].has_dtype && types[i].dtype == t) return types[i].code;
    return 0;
}

const char *prt__onnx_attr_type_name(int32_t type)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "INT", "STRING", "TENSOR", "GRAPH", "FLOATS",
                                        "INTS", "STRINGS", "TENSORS", "GRAPHS", "SPARSE_TENSOR",
                                        "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return type >= 0 && type < (int32_t)(sizeof names / sizeof names[0]) ? names[type] : "unknown";
}

void prt__onnx_value_free(prt__onnx_value *v)
{
    if (!v) return;
    prt__free(v->data);
    v->data = NULL;
    v->nbytes = 0;
}

prt_status prt__onnx_fail(char *err, size_t cap, prt_status s, const char *fmt, ...)
{
    va_list ap;
    if (err && cap) {
        va_start(ap, fmt);
        vsnprintf(err, cap, fmt, ap);
        va_end(ap);
    }
    return s;
}
#define fail prt__onnx_fail

/* Store typed-field element v (already in the right integer class) at i. */
static void put_int(void *dst, int32_t code, size_t i, int64_t v)
{
    switch (code) {
    case PRT__ONNX_UINT8: case PRT__ONNX_INT8: ((uint8_t *)dst)[i] = (uint8_t)v; break;
    case PRT__ONNX_BOOL: ((uint8_t *)dst)[i] = v != 0; break;
    case PRT__ONNX_UINT16: case PRT__ONNX_INT16: case PRT__ONNX_FLOAT16: case PRT__ONNX_BFLOAT16:
        ((uint16_t *)dst)[i] = (uint16_t)v; break;
    case PRT__ONNX_INT32: case PRT__ONNX_UINT32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
    default: ((uint64_t *)dst)[i] = (uint64_t)v; break;
    }
}

/* Resolve an external data location under base_dir; refuse paths that
 * leave it. *out is prt__malloc'ed. */
static prt_status external_path(const char *base_dir, const char *loc, const char *what, char **out, char *err,
                                size_t cap)
{
    char *joined, *real_base = NULL, *real = NULL;
    size_t nb, nl;
    prt_status s = PRT_OK;
    if (!base_dir)
        return fail(err, cap, PRT_STATUS_UNSUPPORTED,
                    "%s: external data \"%s\" needs the model's folder, and this model was given from memory "
                    "without one",
                    what, loc);
    if (!loc[0] || loc[0] == '/' || strstr(loc, ".."))
        return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT,
                    "%s: external data location \"%s\" must be a relative path inside the model's folder "
                    "(no leading '/', no \"..\")",
                    what, loc);
    nb = strlen(base_dir);
    nl = strlen(loc);
    joined = prt__malloc(nb + nl + 2);
    if (!joined) return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
    memcpy(joined, base_dir, nb);
    joined[nb] = '/';
    memcpy(joined + nb + 1, loc, nl + 1);
    real_base = realpath(base_dir, NULL);
    real = realpath(joined, NULL);
    if (!real_base || !real) {
        s = fail(err, cap, PRT_STATUS_IO_ERROR, "%s: external data file \"%s\" (in \"%s\"): %s", what, loc, base_dir,
                 strerror(errno));
    } else {
        size_t rb = strlen(real_base);
        /* symbolic links may still point outside: compare resolved paths */
        if (strncmp(real, real_base, rb) != 0 || (real[rb] != '/' && !(rb == 1 && real_base[0] == '/')))
            s = fail(err, cap, PRT_STATUS_INVALID_ARGUMENT,
                     "%s: external data file \"%s\" resolves to \"%s\", outside the model's folder \"%s\"", what,
                     loc, real, real_base);
    }
    free(real_base);
    free(real);
    if (s != PRT_OK) {
        prt__free(joined);
        return s;
    }
    *out = joined;
    return PRT_OK;
}

static prt_status parse_u64(const char *v, const char *key, const char *what, uint64_t *out, char *err, size_t cap)
{
    char *end;
    unsigned long long x;
    if (!v || !v[0] || v[0] == '-' || v[0] == '+') goto bad;
    errno = 0;
    x = strtoull(v, &end, 10);
    if (errno || *end) goto bad;
    *out = x;
    return PRT_OK;
bad:
    return fail(err, cap, PRT_STATUS_BAD_FORMAT, "%s: external data \"%s\" must be a decimal byte count, got \"%s\"",
                what, key, prt__onnx_s(v));
}

/* Read `need` bytes of external data into a new buffer *dst (NULL when
 * need is 0), allocated only once the file is known to hold them. */
static prt_status read_external(const PrtOnnx__Tensor *t, const char *base_dir, const char *what, void **dst,
                                size_t need, char *err, size_t cap)
{
    const char *loc = NULL;
    uint64_t offset = 0, length = need;
    int has_length = 0;
    char *path = NULL;
    FILE *f = NULL;
    int fd;
    struct stat st;
    prt_status s;
    size_t i;
    for (i = 0; i < t->n_external_data; i++) {
        const char *k = prt__onnx_s(t->external_data[i]->key), *v = t->external_data[i]->value;
        if (strcmp(k, "location") == 0) loc = prt__onnx_s(v);
        else if (strcmp(k, "offset") == 0) {
            if ((s = parse_u64(v, k, what, &offset, err, cap)) != PRT_OK) return s;
        } else if (strcmp(k, "length") == 0) {
            if ((s = parse_u64(v, k, what, &length, err, cap)) != PRT_OK) return s;
            has_length = 1;
        }
    }
    if (!loc) return fail(err, cap, PRT_STATUS_BAD_FORMAT, "%s: external data without a \"location\"", what);
    if (has_length && length != need)
        return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                    "%s: external data length %" PRIu64 " does not match its dims and type (%zu bytes)", what, length,
                    need);
    if ((s = external_path(base_dir, loc, what, &path, err, cap)) != PRT_OK) return s;
    /* Non-blocking open, then the regular-file check: a FIFO placed where
     * the data should be must not make the reader wait for a writer. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        f = fdopen(fd, "rb");
        if (f) fd = -1;
    }
    if (fd >= 0) close(fd);
    if (!f) {
        s = fail(err, cap, PRT_STATUS_IO_ERROR, "%s: external data file \"%s\" cannot be read as a regular file",
                 what, loc);
        goto done;
    }
    if ((uint64_t)st.st_size < offset || (uint64_t)st.st_size - offset < need) {
        s = fail(err, cap, PRT_STATUS_TRUNCATED,
                 "%s: external data file \"%s\" has %lld bytes; needs %zu bytes at offset %" PRIu64, what, loc,
                 (long long)st.st_size, need, offset);
        goto done;
    }
    if (need && !(*dst = prt__malloc(need))) {
        s = fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, need);
        goto done;
    }
    if (offset > (uint64_t)LONG_MAX || fseek(f, (long)offset, SEEK_SET) != 0 ||
        (need && fread(*dst, 1, need, f) != need)) {
        prt__free(*dst);
        *dst = NULL;
        s = fail(err, cap, PRT_STATUS_IO_ERROR, "%s: reading %zu bytes at offset %" PRIu64 " of \"%s\" failed", what,
                 need, offset, loc);
        goto done;
    }
    s = PRT_OK;
done:
    if (f) fclose(f);
    prt__free(path);
    return s;
}

prt_status prt__onnx_value_decode(const PrtOnnx__Tensor *t, const char *base_dir, const char *what,
                                  prt__onnx_value *out, char *err, size_t cap)
{
    prt__onnx_value v;
    int64_t vol = 1;
    size_t esz, need, i, have;
    int32_t code = t->has_data_type ? t->data_type : 0;
    int external = t->has_data_location && t->data_location == 1;

    memset(&v, 0, sizeof v);
    v.onnx_type = code;
    if (t->has_data_location && t->data_location != 0 && t->data_location != 1)
        return fail(err, cap, PRT_STATUS_BAD_FORMAT, "%s: data_location %d is neither DEFAULT (0) nor EXTERNAL (1)",
                    what, (int)t->data_location);
    esz = prt__onnx_type_size(code);
    if (!esz)
        return fail(err, cap, PRT_STATUS_UNSUPPORTED, "%s: element type %s (%d) is not supported", what,
                    prt__onnx_type_name(code), (int)code);
    if (t->n_dims > PRT_MAX_DIMS)
        return fail(err, cap, PRT_STATUS_UNSUPPORTED, "%s: rank %zu is above the %d dims plugrt tensors have", what,
                    t->n_dims, PRT_MAX_DIMS);
    v.dims.nb = (int32_t)t->n_dims;
    for (i = 0; i < t->n_dims; i++) {
        int64_t d = t->dims[i];
        if (d < 0 || d > PRT__ONNX_MAX_EXTENT)
            return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH, "%s: dim %zu is %" PRId64 "; expected 0 to 2^40", what,
                        i, d);
        v.dims.d[i] = d;
        if (d && vol > INT64_MAX / d)
            return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH, "%s: the element count overflows", what);
        vol *= d;
    }
    if ((uint64_t)vol > (uint64_t)SIZE_MAX / esz || (uint64_t)vol * esz > ((uint64_t)1 << 40))
        return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH, "%s: %" PRId64 " elements of %s are too large", what, vol,
                    prt__onnx_type_name(code));
    need = (size_t)vol * esz;
    if (!external && t->has_raw_data) {
        if (t->raw_data.len != need)
            return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                        "%s: raw_data has %zu bytes; dims %s of %s need %zu", what, t->raw_data.len,
                        prt_dims_str(&v.dims, (char[96]){0}, 96), prt__onnx_type_name(code), need);
    } else if (!external) {
        switch (code) {
        case PRT__ONNX_FLOAT: have = t->n_float_data; break;
        case PRT__ONNX_INT64: have = t->n_int64_data; break;
        case PRT__ONNX_DOUBLE: have = t->n_double_data; break;
        case PRT__ONNX_UINT32: case PRT__ONNX_UINT64: have = t->n_uint64_data; break;
        default: have = t->n_int32_data; break;
        }
        if (have != (size_t)vol)
            return fail(err, cap, PRT_STATUS_SHAPE_MISMATCH,
                        "%s: dims %s hold %" PRId64 " elements but the tensor has %zu values of %s", what,
                        prt_dims_str(&v.dims, (char[96]){0}, 96), vol, have, prt__onnx_type_name(code));
    }
    v.nbytes = need;
    if (external) {
        prt_status s = read_external(t, base_dir, what, &v.data, need, err, cap);
        if (s != PRT_OK) return s;
        *out = v;
        return PRT_OK;
    }
    /* the typed or raw values counted above are in memory: need is bounded by the input */
    if (need && !(v.data = prt__malloc(need)))
        return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", what, need);
    if (t->has_raw_data) {
        if (need) memcpy(v.data, t->raw_data.data, need);
    } else {
        for (i = 0; i < (size_t)vol; i++) {
            switch (code) {
            case PRT__ONNX_FLOAT: ((float *)v.data)[i] = t->float_data[i]; break;
            case PRT__ONNX_DOUBLE: ((double *)v.data)[i] = t->double_data[i]; break;
            case PRT__ONNX_INT64: ((int64_t *)v.data)[i] = t->int64_data[i]; break;
            case PRT__ONNX_UINT32: case PRT__ONNX_UINT64: put_int(v.data, code, i, (int64_t)t->uint64_data[i]); break;
            default: put_int(v.data, code, i, t->int32_data[i]); break;
            }
        }
    }
    *out = v;
    return PRT_OK;
}

/* ---- TensorProto files ------------------------------------------------- */

static void *pb_alloc(void *u, size_t n) { (void)u; return prt__malloc(n ? n : 1); }
static void pb_free(void *u, void *p) { (void)u; prt__free(p); }
ProtobufCAllocator prt__onnx_pb_allocator = {pb_alloc, pb_free, NULL};

prt_status prt_onnx_tensor_parse(const void *data, size_t len, prt_onnx_tensor **out, char *err, size_t cap)
{
    PrtOnnx__Tensor *pb;
    prt__onnx_value v;
    prt_onnx_tensor *t;
    prt_dtype dt;
    prt_status s;
    if (!out || (!data && len)) return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT, "no tensor data given");
    pb = prt_onnx__tensor__unpack(&prt__onnx_pb_allocator, len, data);
    if (!pb) return fail(err, cap, PRT_STATUS_BAD_FORMAT, "not a TensorProto: the protobuf is corrupt or truncated");
    if (!pb->has_data_type || !prt__onnx_type_to_dtype(pb->data_type, &dt)) {
        s = fail(err, cap, PRT_STATUS_UNSUPPORTED, "tensor \"%s\": element type %s is not supported",
                 prt__onnx_s(pb->name), prt__onnx_type_name(pb->has_data_type ? pb->data_type : 0));
        prt_onnx__tensor__free_unpacked(pb, &prt__onnx_pb_allocator);
        return s;
    }
    s = prt__onnx_value_decode(pb, NULL, "tensor", &v, err, cap);
    if (s != PRT_OK) {
        prt_onnx__tensor__free_unpacked(pb, &prt__onnx_pb_allocator);
        return s;
    }
    t = prt__calloc(1, sizeof *t);
    if (t) t->name = prt__strdup(prt__onnx_s(pb->name));
    prt_onnx__tensor__free_unpacked(pb, &prt__onnx_pb_allocator);
    if (!t || !t->name) {
        prt__free(t);
        prt__onnx_value_free(&v);
        return fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory reading a tensor");
    }
    t->dtype = dt;
    t->dims = v.dims;
    t->data = v.data;
    t->nbytes = v.nbytes;
    *out = t;
    return PRT_OK;
}

prt_status prt_onnx_tensor_load(const char *path, prt_onnx_tensor **out, char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    prt_status s;
    char e2[PRT_ERR_CAP];
    if (!path || !out) return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT, "no tensor file given");
    if ((s = prt__read_file(path, &data, &len, err, cap)) != PRT_OK) return s;
    s = prt_onnx_tensor_parse(data, len, out, e2, sizeof e2);
    if (s != PRT_OK) fail(err, cap, s, "%s: %s", path, e2);
    prt__free(data);
    return s;
}

void prt_onnx_tensor_destroy(prt_onnx_tensor *t)
{
    if (!t) return;
    prt__free(t->name);
    prt__free(t->data);
    prt__free(t);
}
