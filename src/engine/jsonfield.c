/*
 * engine/jsonfield.c - field values in network JSON beyond numbers (see
 * jsonfield.h).
 *
 * Every value is first parsed into elements that borrow from the JSON tree
 * or from temporary buffers, checked with the registry's element rules, then
 * deep-copied into one allocation with prt__fieldval_copy, so the caller
 * frees one pointer whatever the type.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/jsonfield.h"
#include "plugrt/npy.h"
#include "registry/fieldval.h"
#include "registry/schema.h"

typedef struct jf {
    const char *what;
    const char *base_dir;
    char *err;
    size_t cap;
    void **temps; /* buffers to free when done */
    int32_t nb_temps, cap_temps;
} jf;

static prt_status fail(jf *j, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static prt_status fail(jf *j, prt_status s, const char *fmt, ...)
{
    prt__text t = prt__text_init(j->err, j->cap);
    va_list ap;
    char msg[PRT_ERR_CAP];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    prt__text_add(&t, "%s: %s", j->what, msg);
    return s;
}

/* Keep `p` until the parse ends; NULL if out of memory (p is freed). */
static void *keep(jf *j, void *p)
{
    if (!p) return NULL;
    if (j->nb_temps == j->cap_temps) {
        int32_t n = j->cap_temps ? 2 * j->cap_temps : 8;
        void **t = prt__realloc(j->temps, (size_t)n * sizeof *t);
        if (!t) {
            prt__free(p);
            return NULL;
        }
        j->temps = t;
        j->cap_temps = n;
    }
    j->temps[j->nb_temps++] = p;
    return p;
}

const char *prt__jsonfield_jtype(const cJSON *v)
{
    if (!v) return "nothing";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    return "null";
}

static int dtype_from(const char *s, prt_dtype *out)
{
    int t;
    for (t = 0; t < PRT_DTYPE_COUNT_; t++)
        if (strcmp(s, prt_dtype_name((prt_dtype)t)) == 0) {
            *out = (prt_dtype)t;
            return 1;
        }
    return 0;
}

/* base_dir/name (or name when absolute); NULL when too long. */
static const char *path_of(jf *j, const char *name, char *buf, size_t cap)
{
    int n = name[0] == '/' || !j->base_dir ? snprintf(buf, cap, "%s", name)
                                           : snprintf(buf, cap, "%s/%s", j->base_dir, name);
    return n < 0 || (size_t)n >= cap ? NULL : buf;
}

static prt_status read_npy(jf *j, const cJSON *file, prt_npy_array *a)
{
    char path[4096];
    if (!cJSON_IsString(file) || !file->valuestring[0])
        return fail(j, PRT_STATUS_BAD_FORMAT, "\"file\" must be a non-empty .npy file name, got %s", prt__jsonfield_jtype(file));
    if (!path_of(j, file->valuestring, path, sizeof path))
        return fail(j, PRT_STATUS_INVALID_ARGUMENT, "the path of \"file\" is longer than %zu bytes", sizeof path - 1);
    memset(a, 0, sizeof *a);
    if (prt_npy_read_file(path, a) != PRT_OK)
        return fail(j, PRT_STATUS_IO_ERROR, "%s", prt_last_error(a));
    return PRT_OK;
}

/* ---- strings ------------------------------------------------------------------ */

static prt_status parse_strings(jf *j, const cJSON *v, const void **elems, int64_t *count)
{
    const cJSON *e;
    int64_t n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1, i = 0;
    const char **s = keep(j, prt__calloc((size_t)(n ? n : 1), sizeof *s));
    if (!s) return fail(j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    if (cJSON_IsString(v)) {
        s[0] = v->valuestring;
    } else if (!cJSON_IsArray(v)) {
        return fail(j, PRT_STATUS_BAD_FORMAT, "type strings needs a string or an array of strings, got %s", prt__jsonfield_jtype(v));
    } else {
        cJSON_ArrayForEach(e, v) {
            if (!cJSON_IsString(e))
                return fail(j, PRT_STATUS_BAD_FORMAT, "element %" PRId64 " must be a string, got %s", i, prt__jsonfield_jtype(e));
            s[i++] = e->valuestring;
        }
    }
    *elems = s;
    *count = n;
    return PRT_OK;
}

/* ---- tensors --------------------------------------------------------------------- */

/* JSON number e as element i of a dtype array. */
static prt_status put_elem(jf *j, int64_t k, prt_dtype dt, const cJSON *e, void *data, int64_t i)
{
    double dv;
    int64_t iv;
    if (!cJSON_IsNumber(e) && !cJSON_IsBool(e))
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": value %" PRId64 " must be a number, got %s", k, i,
                    prt__jsonfield_jtype(e));
    dv = cJSON_IsBool(e) ? (cJSON_IsTrue(e) ? 1.0 : 0.0) : e->valuedouble;
    switch (dt) {
    case PRT_DTYPE_F32: ((float *)data)[i] = (float)dv; return PRT_OK;
    case PRT_DTYPE_F16: ((uint16_t *)data)[i] = prt_f32_to_f16((float)dv); return PRT_OK;
    case PRT_DTYPE_BF16: ((uint16_t *)data)[i] = prt_f32_to_bf16((float)dv); return PRT_OK;
    default: break;
    }
    if (!(dv >= -9223372036854775808.0 && dv < 9223372036854775808.0) || floor(dv) != dv)
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": value %" PRId64 " must be an integer for %s, got %.17g",
                    k, i, prt_dtype_name(dt), dv);
    iv = (int64_t)dv;
    if ((dt == PRT_DTYPE_I8 && (iv < INT8_MIN || iv > INT8_MAX)) || (dt == PRT_DTYPE_U8 && (iv < 0 || iv > 255)) ||
        (dt == PRT_DTYPE_BOOL && (iv < 0 || iv > 1)) || (dt == PRT_DTYPE_I32 && (iv < INT32_MIN || iv > INT32_MAX)))
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": value %" PRId64 " is %" PRId64 ", outside the range of %s",
                    k, i, iv, prt_dtype_name(dt));
    if (dt == PRT_DTYPE_I8) ((int8_t *)data)[i] = (int8_t)iv;
    else if (dt == PRT_DTYPE_U8 || dt == PRT_DTYPE_BOOL) ((uint8_t *)data)[i] = (uint8_t)iv;
    else if (dt == PRT_DTYPE_I32) ((int32_t *)data)[i] = (int32_t)iv;
    else ((int64_t *)data)[i] = iv;
    return PRT_OK;
}

static prt_status parse_tensor(jf *j, int64_t k, const cJSON *o, prt_field_tensor *t)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(o, "dims");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(o, "values");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(o, "file");
    const cJSON *e;
    prt_status s;
    int64_t i = 0, n;
    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(o))
        return fail(j, PRT_STATUS_BAD_FORMAT,
                    "tensor %" PRId64 " must be an object {\"dtype\", \"dims\", \"values\"} or {\"file\"}, got %s", k,
                    prt__jsonfield_jtype(o));
    if (dt && (!cJSON_IsString(dt) || !dtype_from(dt->valuestring, &t->dtype)))
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": unknown \"dtype\" %s (expected f32, f16, bf16, i8, "
                    "u8, i32, i64 or bool)", k, cJSON_IsString(dt) ? dt->valuestring : prt__jsonfield_jtype(dt));
    if (!file == !values)
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": give either \"values\" (with \"dtype\" and "
                    "\"dims\") or \"file\" (a .npy file)", k);
    if (file) {
        prt_npy_array a;
        prt_dtype want = t->dtype;
        void *buf;
        if ((s = read_npy(j, file, &a)) != PRT_OK) return s;
        if (prt_npy_type_to_dtype(a.type, &t->dtype) != PRT_OK) t->dtype = PRT_DTYPE_F32;
        if (dt) t->dtype = want;
        buf = keep(j, prt__calloc((size_t)(a.count ? a.count : 1), prt_dtype_size(t->dtype)));
        s = buf ? prt_npy_convert(&a, t->dtype, buf, (size_t)a.count * prt_dtype_size(t->dtype))
                : PRT_STATUS_OUT_OF_MEMORY;
        if (s != PRT_OK) {
            fail(j, s, "tensor %" PRId64 ": \"%s\": %s", k, file->valuestring,
                 buf ? prt_last_error(&a) : "out of memory");
            prt_npy_array_clear(&a);
            return s;
        }
        t->dims = a.shape;
        t->dims.reserved_ = 0;
        t->data = buf;
        prt_npy_array_clear(&a);
        return PRT_OK;
    }
    if (!dt) return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 " needs a \"dtype\"", k);
    if (!cJSON_IsArray(dims))
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": \"dims\" must be an array of integers >= 0, got %s",
                    k, prt__jsonfield_jtype(dims));
    cJSON_ArrayForEach(e, dims) {
        if (t->dims.nb >= PRT_MAX_DIMS || !cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e15 ||
            floor(e->valuedouble) != e->valuedouble)
            return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": \"dims\" needs at most %d integers >= 0", k,
                        PRT_MAX_DIMS);
        t->dims.d[t->dims.nb++] = (int64_t)e->valuedouble;
    }
    n = prt__fieldval_tensor_bytes(t);
    if (!cJSON_IsArray(values) || n < 0 || cJSON_GetArraySize(values) != n / (int64_t)prt_dtype_size(t->dtype))
        return fail(j, PRT_STATUS_BAD_FORMAT, "tensor %" PRId64 ": \"values\" must be a flat array of the %" PRId64
                    " elements the dims hold, got %s of %d", k, n < 0 ? -1 : n / (int64_t)prt_dtype_size(t->dtype),
                    prt__jsonfield_jtype(values), cJSON_IsArray(values) ? cJSON_GetArraySize(values) : 0);
    t->data = keep(j, prt__malloc(n ? (size_t)n : 1));
    if (!t->data) return fail(j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    cJSON_ArrayForEach(e, values) {
        if ((s = put_elem(j, k, t->dtype, e, (void *)t->data, i++)) != PRT_OK) return s;
    }
    return PRT_OK;
}

/* ---- sub-graphs ------------------------------------------------------------------- */

static prt_status parse_graph(jf *j, int64_t k, const cJSON *o, prt_field_graph *g)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    const cJSON *net = cJSON_GetObjectItemCaseSensitive(o, "network");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(o, "file");
    memset(g, 0, sizeof *g);
    if (!cJSON_IsObject(o) || !cJSON_IsString(name) || !name->valuestring[0] || !net == !file)
        return fail(j, PRT_STATUS_BAD_FORMAT, "graph %" PRId64 " must be an object with a non-empty \"name\" and "
                    "either \"network\" (a network object) or \"file\" (a .json network or an .onnx graph), got %s", k,
                    prt__jsonfield_jtype(o));
    g->name = name->valuestring;
    if (net) {
        char *text, *printed;
        if (!cJSON_IsObject(net))
            return fail(j, PRT_STATUS_BAD_FORMAT, "graph %" PRId64 " (\"%s\"): \"network\" must be an object, got %s", k,
                        g->name, prt__jsonfield_jtype(net));
        printed = cJSON_PrintUnformatted(net);
        text = printed ? keep(j, prt__strndup(printed, strlen(printed))) : NULL;
        cJSON_free(printed);
        if (!text) return fail(j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        g->format = PRT_GRAPH_NETWORK_JSON;
        g->data = text;
        g->size = (int64_t)strlen(text);
    } else {
        char path[4096], msg[PRT_ERR_CAP];
        void *buf = NULL;
        size_t len = 0, nl;
        prt_status s;
        if (!cJSON_IsString(file) || !path_of(j, file->valuestring, path, sizeof path))
            return fail(j, PRT_STATUS_BAD_FORMAT, "graph %" PRId64 " (\"%s\"): \"file\" must be a file name", k, g->name);
        if ((s = prt__read_file(path, &buf, &len, msg, sizeof msg)) != PRT_OK)
            return fail(j, s, "graph %" PRId64 " (\"%s\"): %s", k, g->name, msg);
        if (!keep(j, buf)) return fail(j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        nl = strlen(path);
        g->format = nl > 5 && strcmp(path + nl - 5, ".onnx") == 0 ? PRT_GRAPH_ONNX : PRT_GRAPH_NETWORK_JSON;
        g->data = buf;
        g->size = (int64_t)len;
    }
    return PRT_OK;
}

/* ---- numeric fields from .npy ---------------------------------------------------- */

static int field_is_int(prt_field_type t)
{
    return t == PRT_FIELD_INT8 || t == PRT_FIELD_INT16 || t == PRT_FIELD_INT32 || t == PRT_FIELD_INT64 ||
           t == PRT_FIELD_BOOL || t == PRT_FIELD_BYTES;
}

static prt_status parse_npy_field(jf *j, prt_field_type type, const cJSON *o, const void **elems, int64_t *count)
{
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(o, "file");
    prt_npy_array a;
    prt_npy_type nt;
    size_t es = prt_field_type_size(type);
    void *buf;
    int64_t i;
    prt_status s;
    if (!field_is_int(type) && type != PRT_FIELD_FLOAT16 && type != PRT_FIELD_FLOAT32 && type != PRT_FIELD_FLOAT64)
        return fail(j, PRT_STATUS_BAD_FORMAT, "a %s field cannot come from a .npy file", prt_field_type_name(type));
    if (cJSON_GetArraySize(o) != 1)
        return fail(j, PRT_STATUS_BAD_FORMAT, "a field read from a .npy file is written {\"file\": \"name.npy\"}");
    if ((s = read_npy(j, file, &a)) != PRT_OK) return s;
    nt = a.type;
    if (field_is_int(type) && (nt == PRT_NPY_F2 || nt == PRT_NPY_F4 || nt == PRT_NPY_F8)) {
        s = fail(j, PRT_STATUS_TYPE_MISMATCH, "\"%s\" holds %s values; a %s field needs integers",
                 file->valuestring, prt_npy_type_descr(nt), prt_field_type_name(type));
        goto done;
    }
    buf = keep(j, prt__calloc((size_t)(a.count ? a.count : 1), es));
    if (!buf) {
        s = fail(j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (i = 0; i < a.count; i++) {
        const char *p = (const char *)a.data + (size_t)i * prt_npy_type_size(nt);
        double dv = 0;
        int64_t iv = 0;
        switch (nt) {
        case PRT_NPY_F2: { uint16_t h; memcpy(&h, p, 2); dv = prt_f16_to_f32(h); break; }
        case PRT_NPY_F4: { float f; memcpy(&f, p, 4); dv = f; break; }
        case PRT_NPY_F8: memcpy(&dv, p, 8); break;
        case PRT_NPY_I1: iv = (int8_t)p[0]; break;
        case PRT_NPY_U1: case PRT_NPY_B1: iv = (uint8_t)p[0]; break;
        case PRT_NPY_I4: { int32_t x; memcpy(&x, p, 4); iv = x; break; }
        default: memcpy(&iv, p, 8); break;
        }
        if (nt != PRT_NPY_F2 && nt != PRT_NPY_F4 && nt != PRT_NPY_F8) dv = (double)iv;
        switch (type) {
        case PRT_FIELD_FLOAT16: ((uint16_t *)buf)[i] = prt_f32_to_f16((float)dv); break;
        case PRT_FIELD_FLOAT32: ((float *)buf)[i] = (float)dv; break;
        case PRT_FIELD_FLOAT64: ((double *)buf)[i] = dv; break;
        default: {
            int64_t lo = type == PRT_FIELD_INT8 ? INT8_MIN : type == PRT_FIELD_INT16 ? INT16_MIN
                       : type == PRT_FIELD_INT32 ? INT32_MIN : type == PRT_FIELD_INT64 ? INT64_MIN : 0;
            int64_t hi = type == PRT_FIELD_INT8 ? INT8_MAX : type == PRT_FIELD_INT16 ? INT16_MAX
                       : type == PRT_FIELD_INT32 ? INT32_MAX : type == PRT_FIELD_INT64 ? INT64_MAX
                       : type == PRT_FIELD_BOOL ? 1 : 255;
            if (iv < lo || iv > hi) {
                s = fail(j, PRT_STATUS_BAD_FORMAT, "\"%s\": element %" PRId64 " is %" PRId64 ", outside the range of %s",
                         file->valuestring, i, iv, prt_field_type_name(type));
                goto done;
            }
            if (es == 1) ((int8_t *)buf)[i] = (int8_t)iv;
            else if (es == 2) ((int16_t *)buf)[i] = (int16_t)iv;
            else if (es == 4) ((int32_t *)buf)[i] = (int32_t)iv;
            else ((int64_t *)buf)[i] = iv;
        }
        }
    }
    *elems = buf;
    *count = a.count;
    s = PRT_OK;
done:
    prt_npy_array_clear(&a);
    return s;
}

/* ---- entry points ------------------------------------------------------------------- */

int prt__jsonfield_handles(prt_field_type type, const cJSON *v)
{
    return prt__fieldval_is_compound(type) ||
           (cJSON_IsObject(v) && cJSON_GetObjectItemCaseSensitive(v, "file") != NULL);
}

prt_status prt__jsonfield_value(const char *what, prt_field_type type, const cJSON *v, const char *base_dir,
                                void **data, int64_t *count, char *err, size_t cap)
{
    jf j = {.what = what, .base_dir = base_dir, .err = err, .cap = cap};
    const void *elems = NULL;
    int64_t n = 0, k = 0;
    prt_status s;
    size_t es = prt_field_type_size(type), bytes;
    if (type == PRT_FIELD_STRINGS) {
        s = parse_strings(&j, v, &elems, &n);
    } else if (type == PRT_FIELD_TENSOR || type == PRT_FIELD_GRAPH) {
        const cJSON *e;
        uint8_t *arr;
        n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;
        arr = keep(&j, prt__calloc((size_t)(n ? n : 1), es));
        s = arr ? PRT_OK : fail(&j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        if (s == PRT_OK && !cJSON_IsArray(v)) {
            s = type == PRT_FIELD_TENSOR ? parse_tensor(&j, 0, v, (prt_field_tensor *)(void *)arr)
                                         : parse_graph(&j, 0, v, (prt_field_graph *)(void *)arr);
        } else if (s == PRT_OK) {
            cJSON_ArrayForEach(e, v) {
                s = type == PRT_FIELD_TENSOR ? parse_tensor(&j, k, e, (prt_field_tensor *)(void *)arr + k)
                                             : parse_graph(&j, k, e, (prt_field_graph *)(void *)arr + k);
                if (s != PRT_OK) break;
                k++;
            }
        }
        elems = arr;
    } else {
        s = parse_npy_field(&j, type, v, &elems, &n);
    }
    if (s == PRT_OK) {
        char msg[PRT_ERR_CAP];
        prt__text t = prt__text_init(msg, sizeof msg);
        if (prt__fieldval_check(&t, "value", "field", "", type, elems, n))
            s = fail(&j, PRT_STATUS_BAD_FORMAT, "%s", msg);
    }
    if (s == PRT_OK) {
        void *out;
        bytes = prt__fieldval_copy_size(type, elems, n);
        out = bytes == SIZE_MAX ? NULL : prt__malloc(bytes ? bytes : 1);
        if (!out) {
            s = fail(&j, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        } else {
            prt__fieldval_copy(type, elems, n, out);
            *data = out;
            *count = n;
        }
    }
    while (j.nb_temps > 0) prt__free(j.temps[--j.nb_temps]);
    prt__free(j.temps);
    return s;
}
