/* engine/netjson.c - a network from its JSON description (docs/network-json.md). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "core/core.h"
#include "engine/jsonfield.h"
#include "engine/netdef.h"
#include "plugrt/npy.h"
#include "registry/schema.h"

typedef struct jctx {
    char *err;
    size_t cap;
    const char *base_dir;
    uint32_t flags; /* PRT_NETWORK_JSON_* */
} jctx;

static prt_status jfail(jctx *j, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static prt_status jfail(jctx *j, prt_status s, const char *fmt, ...)
{
    va_list ap;
    if (j->err && j->cap) {
        va_start(ap, fmt);
        vsnprintf(j->err, j->cap, fmt, ap);
        va_end(ap);
    }
    return s;
}

/* Every key of `obj` must be one of `known` (a NULL-terminated list): an
 * unknown key is an error, or a logged warning and ignored with
 * PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN (as the PluginConfig YAML reader does). */
static prt_status check_keys(jctx *j, const cJSON *obj, const char *what, const char *const *known)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, obj) {
        char list[256];
        size_t k, n = 0;
        int ok = 0;
        for (k = 0; known[k]; k++)
            if (e->string && strcmp(e->string, known[k]) == 0) ok = 1;
        if (ok) continue;
        list[0] = 0;
        for (k = 0; known[k] && n < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "", known[k]);
        if (j->flags & PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN) {
            prt_log(PRT_SEVERITY_WARNING, "%s: unknown key \"%.200s\" ignored (expected %s)", what,
                    e->string ? e->string : "", list);
            continue;
        }
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: unknown key \"%.200s\" (expected %s)", what,
                     e->string ? e->string : "", list);
    }
    return PRT_OK;
}

/* ---- dtypes ---------------------------------------------------------------- */

static int parse_dtype(const char *s, prt_dtype *out)
{
    static const struct {
        const char *name;
        prt_dtype t;
    } names[] = {{"f32", PRT_DTYPE_F32},   {"float32", PRT_DTYPE_F32}, {"f16", PRT_DTYPE_F16},
                 {"float16", PRT_DTYPE_F16}, {"bf16", PRT_DTYPE_BF16}, {"bfloat16", PRT_DTYPE_BF16},
                 {"i8", PRT_DTYPE_I8},     {"int8", PRT_DTYPE_I8},     {"u8", PRT_DTYPE_U8},
                 {"uint8", PRT_DTYPE_U8},  {"i32", PRT_DTYPE_I32},    {"int32", PRT_DTYPE_I32},
                 {"i64", PRT_DTYPE_I64},   {"int64", PRT_DTYPE_I64},  {"bool", PRT_DTYPE_BOOL}};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].t;
            return 1;
        }
    return 0;
}

static int parse_field_type(const char *s, prt_field_type *out)
{
    int t;
    for (t = 0; t < PRT_FIELD_TYPE_COUNT_; t++)
        if (strcmp(s, prt_field_type_name((prt_field_type)t)) == 0) {
            *out = (prt_field_type)t;
            return 1;
        }
    return 0;
}

static const char *jtype(const cJSON *v)
{
    return prt__jsonfield_jtype(v);
}

/* A JSON number that is an exact integer in int64 range. */
static int num_to_i64(const cJSON *v, int64_t *out)
{
    double d;
    if (!cJSON_IsNumber(v)) return 0;
    d = v->valuedouble;
    if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0) || floor(d) != d) return 0;
    *out = (int64_t)d;
    return 1;
}

static prt_status parse_dims(jctx *j, const cJSON *arr, const char *what, int allow_dynamic, prt_dims *out)
{
    const cJSON *e;
    int n = 0;
    prt_dims d;
    memset(&d, 0, sizeof d);
    if (!cJSON_IsArray(arr))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"dims\" must be an array of integers, got %s", what, jtype(arr));
    cJSON_ArrayForEach(e, arr) {
        int64_t v;
        if (n >= PRT_MAX_DIMS)
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: more than %d dims", what, PRT_MAX_DIMS);
        if (!num_to_i64(e, &v) || v < (allow_dynamic ? -1 : 0))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: dim %d must be an integer >= %d, got %s", what, n,
                         allow_dynamic ? -1 : 0, cJSON_IsNumber(e) ? "a non-integer or out-of-range number" : jtype(e));
        d.d[n++] = v;
    }
    d.nb = n;
    *out = d;
    return PRT_OK;
}

/* ---- typed values ------------------------------------------------------------ */

/* Store JSON number `v` as element i of an array of `type`. */
static prt_status put_number(jctx *j, const char *what, prt_field_type type, const cJSON *v, void *data, int64_t i)
{
    int64_t iv = 0;
    double dv;
    if (cJSON_IsBool(v) && type != PRT_FIELD_FLOAT16 && type != PRT_FIELD_FLOAT32 && type != PRT_FIELD_FLOAT64) {
        /* true/false for bool fields and for integer 0/1 flags alike */
        memset((char *)data + (size_t)i * prt_field_type_size(type), 0, prt_field_type_size(type));
        *((uint8_t *)data + (size_t)i * prt_field_type_size(type)) = cJSON_IsTrue(v) ? 1 : 0;
        return PRT_OK;
    }
    if (!cJSON_IsNumber(v))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: element %" PRId64 " must be a number for type %s, got %s", what, i,
                     prt_field_type_name(type), jtype(v));
    dv = v->valuedouble;
    switch (type) {
    case PRT_FIELD_FLOAT16: ((uint16_t *)data)[i] = prt_f32_to_f16((float)dv); return PRT_OK;
    case PRT_FIELD_FLOAT32: ((float *)data)[i] = (float)dv; return PRT_OK;
    case PRT_FIELD_FLOAT64: ((double *)data)[i] = dv; return PRT_OK;
    default: break;
    }
    if (!num_to_i64(v, &iv))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: element %" PRId64 " must be an integer for type %s, got %.17g", what,
                     i, prt_field_type_name(type), dv);
    switch (type) {
    case PRT_FIELD_INT8:
        if (iv < INT8_MIN || iv > INT8_MAX) goto range;
        ((int8_t *)data)[i] = (int8_t)iv;
        return PRT_OK;
    case PRT_FIELD_INT16:
        if (iv < INT16_MIN || iv > INT16_MAX) goto range;
        ((int16_t *)data)[i] = (int16_t)iv;
        return PRT_OK;
    case PRT_FIELD_INT32:
        if (iv < INT32_MIN || iv > INT32_MAX) goto range;
        ((int32_t *)data)[i] = (int32_t)iv;
        return PRT_OK;
    case PRT_FIELD_INT64: ((int64_t *)data)[i] = iv; return PRT_OK;
    case PRT_FIELD_BOOL:
        if (iv != 0 && iv != 1) goto range;
        ((uint8_t *)data)[i] = (uint8_t)iv;
        return PRT_OK;
    case PRT_FIELD_BYTES:
        if (iv < 0 || iv > 255) goto range;
        ((uint8_t *)data)[i] = (uint8_t)iv;
        return PRT_OK;
    default: return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: type %s does not take numbers", what, prt_field_type_name(type));
    }
range:
    return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: element %" PRId64 " is %" PRId64 ", outside the range of %s", what, i,
                 iv, prt_field_type_name(type));
}

/* Fill one field of `type` from a JSON value (scalar or array). *data is a
 * new buffer the caller frees. */
static prt_status typed_value(jctx *j, const char *what, prt_field_type type, const cJSON *v, void **data,
                              int64_t *count)
{
    int64_t n, i;
    void *buf;
    prt_status s;
    const cJSON *e;

    if (prt__jsonfield_handles(type, v)) return prt__jsonfield_value(what, type, v, j->base_dir, data, count, j->err, j->cap);
    if (type == PRT_FIELD_CHAR || (type == PRT_FIELD_BYTES && cJSON_IsString(v))) {
        size_t len;
        if (!cJSON_IsString(v))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: type %s needs a string, got %s", what, prt_field_type_name(type),
                         jtype(v));
        len = strlen(v->valuestring);
        buf = prt__malloc(len ? len : 1);
        if (!buf) return jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
        memcpy(buf, v->valuestring, len);
        *data = buf;
        *count = (int64_t)len;
        return PRT_OK;
    }
    if (type == PRT_FIELD_DIMS) {
        /* [2, 3] is one dims value; [[2, 3], [4]] is two. */
        int multi = cJSON_IsArray(v) && cJSON_GetArraySize(v) > 0 && cJSON_IsArray(cJSON_GetArrayItem(v, 0));
        n = multi ? cJSON_GetArraySize(v) : 1;
        buf = prt__calloc((size_t)n, sizeof(prt_dims));
        if (!buf) return jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
        if (multi) {
            i = 0;
            cJSON_ArrayForEach(e, v) {
                if ((s = parse_dims(j, e, what, 1, &((prt_dims *)buf)[i++])) != PRT_OK) {
                    prt__free(buf);
                    return s;
                }
            }
        } else if ((s = parse_dims(j, v, what, 1, (prt_dims *)buf)) != PRT_OK) {
            prt__free(buf);
            return s;
        }
        *data = buf;
        *count = n;
        return PRT_OK;
    }
    n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;
    buf = prt__calloc((size_t)(n ? n : 1), prt_field_type_size(type));
    if (!buf) return jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
    if (cJSON_IsArray(v)) {
        i = 0;
        cJSON_ArrayForEach(e, v) {
            if ((s = put_number(j, what, type, e, buf, i++)) != PRT_OK) {
                prt__free(buf);
                return s;
            }
        }
    } else if ((s = put_number(j, what, type, v, buf, 0)) != PRT_OK) {
        prt__free(buf);
        return s;
    }
    *data = buf;
    *count = n;
    return PRT_OK;
}

/* The type a plain JSON value gets: the schema's when the creator names the
 * field, else int64 for integers, float64 for other numbers, bool, char. */
static prt_status infer_type(jctx *j, const char *what, const prt_plugin_creator *c, const char *name,
                             const cJSON *v, prt_field_type *out)
{
    int32_t i;
    const cJSON *first = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, 0) : v;
    for (i = 0; c && i < c->nb_fields; i++) {
        const prt_field_schema *fs = prt__schema_entry(c, i);
        if (fs->name && strcmp(fs->name, name) == 0) {
            *out = fs->type;
            return PRT_OK;
        }
    }
    if (cJSON_IsString(v)) {
        *out = PRT_FIELD_CHAR;
    } else if (cJSON_IsString(first)) {
        *out = PRT_FIELD_STRINGS;
    } else if (cJSON_IsArray(v) && !first) {
        *out = PRT_FIELD_INT64;
    } else if (cJSON_IsBool(first)) {
        *out = PRT_FIELD_BOOL;
    } else if (cJSON_IsNumber(first)) {
        const cJSON *e;
        int all_int = 1;
        int64_t tmp;
        if (cJSON_IsArray(v)) {
            cJSON_ArrayForEach(e, v) if (!num_to_i64(e, &tmp)) all_int = 0;
        } else {
            all_int = num_to_i64(v, &tmp);
        }
        *out = all_int ? PRT_FIELD_INT64 : PRT_FIELD_FLOAT64;
    } else {
        return jfail(j, PRT_STATUS_BAD_FORMAT,
                     "%s: cannot tell the type of %s; write {\"type\": \"int32\", \"value\": ...}", what, jtype(v));
    }
    return PRT_OK;
}

/* ---- constants ----------------------------------------------------------------- */

/* Float element types, of .npy files and of tensors. */
static int npy_is_float(prt_npy_type t) { return t == PRT_NPY_F2 || t == PRT_NPY_F4 || t == PRT_NPY_F8; }
static int dtype_is_float(prt_dtype t) { return t == PRT_DTYPE_F32 || t == PRT_DTYPE_F16 || t == PRT_DTYPE_BF16; }

/*
 * A constant from the .npy file at `path`. Without a "dtype" in the
 * description the constant takes the file's element type (float64, which
 * no tensor type holds, needs a "dtype"); with one, the
 * file must hold that type, or any float type when a float dtype is named
 * (the values are then rounded to it). `want_dims` (NULL: none given) must
 * equal the file's shape. On success *data is a new buffer of *nbytes.
 */
static prt_status load_npy_constant(jctx *j, const char *what, const char *path, int have_dtype, prt_dtype *dtype,
                                    const prt_dims *want_dims, prt_dims *dims, void **data, size_t *nbytes)
{
    prt_npy_array a;
    struct stat st;
    prt_dtype file_dt = PRT_DTYPE_F32, dt;
    int has_dt;
    size_t n;
    void *buf;
    prt_status s;
    char sa[160], sb[160];

    memset(&a, 0, sizeof a);
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return jfail(j, PRT_STATUS_IO_ERROR, "%s: \"%s\" is not a regular file (expected a .npy file)", what, path);
    if ((s = prt_npy_read_file(path, &a)) != PRT_OK)
        return jfail(j, s, "%s: %s", what, prt_last_error(&a));
    has_dt = prt_npy_type_to_dtype(a.type, &file_dt) == PRT_OK;
    if (have_dtype) {
        dt = *dtype;
        if (!(has_dt && file_dt == dt) && !(npy_is_float(a.type) && dtype_is_float(dt))) {
            s = jfail(j, PRT_STATUS_TYPE_MISMATCH,
                      "%s: \"dtype\" is %s but \"%s\" holds %s elements (floats convert to a float dtype only; "
                      "other types must match exactly)",
                      what, prt_dtype_name(dt), path, prt_npy_type_descr(a.type));
            goto done;
        }
    } else if (has_dt) {
        dt = file_dt;
    } else {
        s = jfail(j, PRT_STATUS_TYPE_MISMATCH,
                  "%s: \"%s\" holds %s elements, which no tensor type holds; add \"dtype\": \"f32\" (or \"f16\") to "
                  "convert them",
                  what, path, prt_npy_type_descr(a.type));
        goto done;
    }
    if (want_dims && !prt_dims_equal(want_dims, &a.shape)) {
        s = jfail(j, PRT_STATUS_SHAPE_MISMATCH, "%s: \"dims\" is %s but \"%s\" holds an array of shape %s", what,
                  prt_dims_str(want_dims, sa, sizeof sa), path, prt_dims_str(&a.shape, sb, sizeof sb));
        goto done;
    }
    n = (size_t)a.count * prt_dtype_size(dt);
    buf = prt__malloc(n ? n : 1);
    if (!buf) {
        s = jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory (%zu bytes from \"%s\")", what, n, path);
        goto done;
    }
    if ((s = prt_npy_convert(&a, dt, buf, n)) != PRT_OK) {
        jfail(j, s, "%s: \"%s\": %s", what, path, prt_last_error(&a));
        prt__free(buf);
        goto done;
    }
    *dtype = dt;
    *dims = a.shape;
    dims->reserved_ = 0;
    *data = buf;
    *nbytes = n;
    s = PRT_OK;
done:
    prt_npy_array_clear(&a);
    return s;
}

static prt_status add_constant(jctx *j, prt_network *net, const cJSON *c, int idx)
{
    char what[320];
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(c, "dtype");
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(c, "dims");
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(c, "values");
    const cJSON *file = cJSON_GetObjectItemCaseSensitive(c, "file");
    prt_dtype dtype = PRT_DTYPE_F32;
    prt_dims d, want;
    void *data = NULL;
    size_t nbytes = 0;
    prt_status s;

    if (!cJSON_IsObject(c)) return jfail(j, PRT_STATUS_BAD_FORMAT, "constants[%d] must be an object, got %s", idx, jtype(c));
    if (!cJSON_IsString(name))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "constants[%d] needs a \"name\" string, got %s", idx, jtype(name));
    snprintf(what, sizeof what, "constant \"%.256s\"", name->valuestring);
    {
        static const char *const known[] = {"name", "dtype", "dims", "values", "file", "doc", NULL};
        if ((s = check_keys(j, c, what, known)) != PRT_OK) return s;
    }
    if (dt && (!cJSON_IsString(dt) || !parse_dtype(dt->valuestring, &dtype)))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: unknown \"dtype\" %s%s%s (expected f32, f16, bf16, i8, u8, i32, i64 or bool)",
                     what, cJSON_IsString(dt) ? "\"" : "", cJSON_IsString(dt) ? dt->valuestring : jtype(dt),
                     cJSON_IsString(dt) ? "\"" : "");
    if (file && values) return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: give either \"values\" or \"file\", not both", what);
    if (file) {
        char path[4096];
        int pl;
        if (!cJSON_IsString(file) || !file->valuestring[0])
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"file\" must be a non-empty string (a .npy file name), got %s",
                         what, cJSON_IsString(file) ? "an empty string" : jtype(file));
        if (file->valuestring[0] == '/' || !j->base_dir)
            pl = snprintf(path, sizeof path, "%s", file->valuestring);
        else
            pl = snprintf(path, sizeof path, "%s/%s", j->base_dir, file->valuestring);
        if (pl < 0 || (size_t)pl >= sizeof path)
            return jfail(j, PRT_STATUS_INVALID_ARGUMENT, "%s: the path of \"file\" is longer than %zu bytes", what,
                         sizeof path - 1);
        if (dims && (s = parse_dims(j, dims, what, 0, &want)) != PRT_OK) return s;
        if ((s = load_npy_constant(j, what, path, dt != NULL, &dtype, dims ? &want : NULL, &d, &data, &nbytes)) !=
            PRT_OK)
            return s;
    } else {
        int64_t vol, n, i;
        size_t es = prt_dtype_size(dtype);
        const cJSON *e;
        if ((s = parse_dims(j, dims, what, 0, &d)) != PRT_OK) return s;
        vol = prt_dims_volume(&d);
        if (!cJSON_IsArray(values))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"values\" must be a flat array of numbers, got %s", what,
                         jtype(values));
        n = cJSON_GetArraySize(values);
        if (vol < 0 || n != vol)
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: dims hold %" PRId64 " elements but \"values\" has %" PRId64, what,
                         vol, n);
        nbytes = (size_t)n * es;
        data = prt__malloc(nbytes ? nbytes : 1);
        if (!data) return jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
        i = 0;
        cJSON_ArrayForEach(e, values) {
            int64_t iv;
            double dv;
            if (!cJSON_IsNumber(e) && !cJSON_IsBool(e)) {
                prt__free(data);
                return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: value %" PRId64 " must be a number, got %s", what, i, jtype(e));
            }
            dv = cJSON_IsBool(e) ? (cJSON_IsTrue(e) ? 1.0 : 0.0) : e->valuedouble;
            switch (dtype) {
            case PRT_DTYPE_F32: ((float *)data)[i] = (float)dv; break;
            case PRT_DTYPE_F16: ((uint16_t *)data)[i] = prt_f32_to_f16((float)dv); break;
            case PRT_DTYPE_BF16: ((uint16_t *)data)[i] = prt_f32_to_bf16((float)dv); break;
            default: {
                int64_t lo = 0, hi = 0;
                cJSON tmp = *e;
                tmp.valuedouble = dv;
                tmp.type = cJSON_Number;
                if (!num_to_i64(&tmp, &iv)) {
                    prt__free(data);
                    return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: value %" PRId64 " must be an integer for %s, got %.17g",
                                 what, i, prt_dtype_name(dtype), dv);
                }
                switch (dtype) {
                case PRT_DTYPE_I8: lo = INT8_MIN; hi = INT8_MAX; break;
                case PRT_DTYPE_U8: lo = 0; hi = UINT8_MAX; break;
                case PRT_DTYPE_BOOL: lo = 0; hi = 1; break;
                case PRT_DTYPE_I32: lo = INT32_MIN; hi = INT32_MAX; break;
                default: lo = INT64_MIN; hi = INT64_MAX; break;
                }
                if (iv < lo || iv > hi) {
                    prt__free(data);
                    return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: value %" PRId64 " is %" PRId64 ", outside the range of %s",
                                 what, i, iv, prt_dtype_name(dtype));
                }
                if (dtype == PRT_DTYPE_I8) ((int8_t *)data)[i] = (int8_t)iv;
                else if (dtype == PRT_DTYPE_U8 || dtype == PRT_DTYPE_BOOL) ((uint8_t *)data)[i] = (uint8_t)iv;
                else if (dtype == PRT_DTYPE_I32) ((int32_t *)data)[i] = (int32_t)iv;
                else ((int64_t *)data)[i] = iv;
            }
            }
            i++;
        }
    }
    s = prt_network_add_constant(net, name->valuestring, dtype, &d, data, nbytes);
    prt__free(data);
    if (s != PRT_OK) return jfail(j, s, "%s", prt_network_last_error(net));
    return PRT_OK;
}

/* ---- layers ------------------------------------------------------------------ */

static prt_status name_list(jctx *j, const char *what, const char *key, const cJSON *arr, const char ***out,
                            int32_t *nb)
{
    const cJSON *e;
    int32_t n = 0, i = 0;
    const char **names;
    if (!arr) {
        *out = NULL;
        *nb = 0;
        return PRT_OK;
    }
    if (!cJSON_IsArray(arr))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"%s\" must be an array of tensor names, got %s", what, key,
                     jtype(arr));
    n = cJSON_GetArraySize(arr);
    names = prt__calloc((size_t)(n ? n : 1), sizeof *names);
    if (!names) return jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
    cJSON_ArrayForEach(e, arr) {
        if (!cJSON_IsString(e)) {
            prt__free(names);
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"%s\"[%d] must be a string, got %s", what, key, i, jtype(e));
        }
        names[i++] = e->valuestring;
    }
    *out = names;
    *nb = n;
    return PRT_OK;
}

static prt_status add_layer(jctx *j, prt_network *net, const cJSON *l, int idx)
{
    char what[320];
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(l, "name");
    const cJSON *plugin = cJSON_GetObjectItemCaseSensitive(l, "plugin");
    const cJSON *version = cJSON_GetObjectItemCaseSensitive(l, "version");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(l, "namespace");
    const cJSON *fields = cJSON_GetObjectItemCaseSensitive(l, "fields");
    const char **ins = NULL, **outs = NULL;
    int32_t nb_in = 0, nb_out = 0, nb_f = 0, i;
    prt_field *fl = NULL;
    void **bufs = NULL;
    const prt_plugin_creator *creator = NULL;
    prt_fields fc;
    prt_status s;
    const cJSON *f;
    char verbuf[32];
    const char *ver = "1";

    if (!cJSON_IsObject(l)) return jfail(j, PRT_STATUS_BAD_FORMAT, "layers[%d] must be an object, got %s", idx, jtype(l));
    if (!cJSON_IsString(plugin))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "layers[%d] needs a \"plugin\" name string, got %s", idx, jtype(plugin));
    if (name && !cJSON_IsString(name))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "layers[%d]: \"name\" must be a string, got %s", idx, jtype(name));
    snprintf(what, sizeof what, "layer \"%.256s\"", name ? name->valuestring : plugin->valuestring);
    {
        static const char *const known[] = {"name",   "plugin", "version", "namespace", "fields",
                                            "inputs", "outputs", "doc",    NULL};
        if ((s = check_keys(j, l, what, known)) != PRT_OK) return s;
    }
    if (version) {
        int64_t v;
        if (cJSON_IsString(version)) {
            ver = version->valuestring;
        } else if (num_to_i64(version, &v)) {
            snprintf(verbuf, sizeof verbuf, "%" PRId64, v);
            ver = verbuf;
        } else {
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"version\" must be a string such as \"1\", got %s", what,
                         jtype(version));
        }
    }
    if (ns && !cJSON_IsString(ns))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"namespace\" must be a string, got %s", what, jtype(ns));
    if (fields && !cJSON_IsObject(fields))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"fields\" must be an object, got %s", what, jtype(fields));
    /* The creator's schema types plain JSON values; a missing creator is
     * reported by prt_network_add_layer with its near misses. */
    if (prt_registry_find(net->registry, plugin->valuestring, ver, ns ? ns->valuestring : "", &creator, NULL) != PRT_OK)
        creator = NULL;
    if ((s = name_list(j, what, "inputs", cJSON_GetObjectItemCaseSensitive(l, "inputs"), &ins, &nb_in)) != PRT_OK)
        return s;
    if ((s = name_list(j, what, "outputs", cJSON_GetObjectItemCaseSensitive(l, "outputs"), &outs, &nb_out)) != PRT_OK)
        goto done;
    nb_f = fields ? cJSON_GetArraySize(fields) : 0;
    fl = prt__calloc((size_t)(nb_f ? nb_f : 1), sizeof *fl);
    bufs = prt__calloc((size_t)(nb_f ? nb_f : 1), sizeof *bufs);
    if (!fl || !bufs) {
        s = jfail(j, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", what);
        goto done;
    }
    i = 0;
    if (fields) cJSON_ArrayForEach(f, fields) {
        char fwhat[640];
        prt_field_type type = PRT_FIELD_INT64;
        const cJSON *val = f;
        int64_t count = 0;
        snprintf(fwhat, sizeof fwhat, "%s: field \"%.256s\"", what, f->string);
        if (cJSON_IsObject(f) && cJSON_GetObjectItemCaseSensitive(f, "type")) {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(f, "type");
            static const char *const known[] = {"type", "value", NULL};
            val = cJSON_GetObjectItemCaseSensitive(f, "value");
            if ((s = check_keys(j, f, fwhat, known)) != PRT_OK) goto done;
            if (!cJSON_IsString(t) || !parse_field_type(t->valuestring, &type)) {
                s = jfail(j, PRT_STATUS_BAD_FORMAT,
                          "%s: \"type\" must be one of int8, int16, int32, int64, float16, float32, float64, char, "
                          "dims, bool, bytes, strings, tensor, graph; got %s%s%s",
                          fwhat, cJSON_IsString(t) ? "\"" : "", cJSON_IsString(t) ? t->valuestring : jtype(t),
                          cJSON_IsString(t) ? "\"" : "");
                goto done;
            }
            if (!val) {
                s = jfail(j, PRT_STATUS_BAD_FORMAT, "%s: typed field needs a \"value\"", fwhat);
                goto done;
            }
        } else if ((s = infer_type(j, fwhat, creator, f->string, f, &type)) != PRT_OK) {
            goto done;
        }
        if ((s = typed_value(j, fwhat, type, val, &bufs[i], &count)) != PRT_OK) goto done;
        fl[i].name = f->string;
        fl[i].data = bufs[i];
        fl[i].type = type;
        fl[i].reserved_ = 0;
        fl[i].count = count;
        i++;
    }
    fc.fields = fl;
    fc.nb = nb_f;
    fc.reserved_ = 0;
    s = prt_network_add_layer(net, name ? name->valuestring : NULL, plugin->valuestring, ver,
                              ns ? ns->valuestring : "", &fc, ins, nb_in, outs, nb_out);
    if (s != PRT_OK) jfail(j, s, "%s", prt_network_last_error(net));
done:
    if (bufs)
        for (i = 0; i < nb_f; i++) prt__free(bufs[i]);
    prt__free(bufs);
    prt__free(fl);
    prt__free((void *)ins);
    prt__free((void *)outs);
    return s;
}

/* ---- the document ---------------------------------------------------------------- */

static prt_status build(jctx *j, prt_network *net, const cJSON *doc)
{
    const cJSON *sec, *e;
    prt_status s;
    int i;
    static const char *const known[] = {"name", "doc", "inputs", "constants", "layers", "outputs", NULL};
    static const char *const known_input[] = {"name", "dtype", "dims", "doc", "shape_values", NULL};

    if (!cJSON_IsObject(doc))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "a network description is a JSON object, got %s", jtype(doc));
    if ((s = check_keys(j, doc, "the top level", known)) != PRT_OK) return s;
    sec = cJSON_GetObjectItemCaseSensitive(doc, "inputs");
    if (!cJSON_IsArray(sec) || cJSON_GetArraySize(sec) == 0)
        return jfail(j, PRT_STATUS_BAD_FORMAT, "\"inputs\" must be a non-empty array, got %s", jtype(sec));
    i = 0;
    cJSON_ArrayForEach(e, sec) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype"), *sv;
        char what[320];
        prt_dtype dtype = PRT_DTYPE_F32;
        prt_dims d;
        if (!cJSON_IsObject(e) || !cJSON_IsString(name))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "inputs[%d] must be an object with a \"name\" string", i);
        snprintf(what, sizeof what, "input \"%.256s\"", name->valuestring);
        if ((s = check_keys(j, e, what, known_input)) != PRT_OK) return s;
        if (dt && (!cJSON_IsString(dt) || !parse_dtype(dt->valuestring, &dtype)))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: unknown \"dtype\" (expected f32, f16, bf16, i8, u8, i32, i64 or bool)",
                         what);
        if ((s = parse_dims(j, cJSON_GetObjectItemCaseSensitive(e, "dims"), what, 1, &d)) != PRT_OK) return s;
        sv = cJSON_GetObjectItemCaseSensitive(e, "shape_values");
        if (sv && !cJSON_IsBool(sv))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "%s: \"shape_values\" must be true or false, got %s", what, jtype(sv));
        s = cJSON_IsTrue(sv) ? prt_network_add_shape_input(net, name->valuestring, dtype, &d)
                             : prt_network_add_input(net, name->valuestring, dtype, &d);
        if (s != PRT_OK) return jfail(j, s, "%s", prt_network_last_error(net));
        i++;
    }
    sec = cJSON_GetObjectItemCaseSensitive(doc, "constants");
    if (sec && !cJSON_IsArray(sec))
        return jfail(j, PRT_STATUS_BAD_FORMAT, "\"constants\" must be an array, got %s", jtype(sec));
    i = 0;
    if (sec) cJSON_ArrayForEach(e, sec) {
        if ((s = add_constant(j, net, e, i++)) != PRT_OK) return s;
    }
    sec = cJSON_GetObjectItemCaseSensitive(doc, "layers");
    if (!cJSON_IsArray(sec) || cJSON_GetArraySize(sec) == 0)
        return jfail(j, PRT_STATUS_BAD_FORMAT, "\"layers\" must be a non-empty array, got %s", jtype(sec));
    i = 0;
    cJSON_ArrayForEach(e, sec) {
        if ((s = add_layer(j, net, e, i++)) != PRT_OK) return s;
    }
    sec = cJSON_GetObjectItemCaseSensitive(doc, "outputs");
    if (!cJSON_IsArray(sec) || cJSON_GetArraySize(sec) == 0)
        return jfail(j, PRT_STATUS_BAD_FORMAT, "\"outputs\" must be a non-empty array of tensor names, got %s", jtype(sec));
    cJSON_ArrayForEach(e, sec) {
        if (!cJSON_IsString(e))
            return jfail(j, PRT_STATUS_BAD_FORMAT, "\"outputs\" entries must be strings, got %s", jtype(e));
        if ((s = prt_network_mark_output(net, e->valuestring)) != PRT_OK)
            return jfail(j, s, "%s", prt_network_last_error(net));
    }
    return PRT_OK;
}

prt_status prt_network_from_json(prt_registry *r, const char *json, size_t len, const char *base_dir,
                                 prt_network **out, char *err, size_t cap)
{
    return prt_network_from_json_flags(r, json, len, base_dir, 0, out, err, cap);
}

prt_status prt_network_from_json_flags(prt_registry *r, const char *json, size_t len, const char *base_dir,
                                       uint32_t flags, prt_network **out, char *err, size_t cap)
{
    jctx j;
    cJSON *doc;
    prt_network *net = NULL;
    prt_status s;
    if (err && cap) err[0] = 0;
    j.err = err;
    j.cap = cap;
    j.base_dir = base_dir;
    j.flags = flags;
    if (flags & ~(uint32_t)PRT_NETWORK_JSON_UNKNOWN_KEYS_WARN)
        return jfail(&j, PRT_STATUS_INVALID_ARGUMENT, "unknown JSON reader flags 0x%x", (unsigned)flags);
    if (!json || !out) return jfail(&j, PRT_STATUS_INVALID_ARGUMENT, "no JSON text or no output pointer given");
    doc = cJSON_ParseWithLength(json, len);
    if (!doc) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = (at && at >= json && at <= json + len) ? (size_t)(at - json) : len;
        size_t line = 1, k;
        for (k = 0; k < off; k++)
            if (json[k] == '\n') line++;
        return jfail(&j, PRT_STATUS_BAD_FORMAT, "not valid JSON: syntax error near line %zu (byte %zu)", line, off);
    }
    s = prt_network_create(r, &net);
    if (s != PRT_OK) {
        cJSON_Delete(doc);
        return jfail(&j, s, "out of memory");
    }
    s = build(&j, net, doc);
    cJSON_Delete(doc);
    if (s != PRT_OK) {
        prt_network_destroy(net);
        return s;
    }
    *out = net;
    return PRT_OK;
}

prt_status prt_network_load_json(prt_registry *r, const char *path, prt_network **out, char *err, size_t cap)
{
    return prt_network_load_json_flags(r, path, 0, out, err, cap);
}

prt_status prt_network_load_json_flags(prt_registry *r, const char *path, uint32_t flags, prt_network **out,
                                       char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    char dir[4096];
    const char *slash;
    prt_status s;
    char sub[PRT_ERR_CAP];
    sub[0] = 0;
    s = prt__read_file(path, &data, &len, sub, sizeof sub);
    if (s != PRT_OK) {
        if (err && cap) snprintf(err, cap, "%s", sub);
        return s;
    }
    slash = strrchr(path, '/');
    if (slash && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
        if (!dir[0]) strcpy(dir, "/");
    } else {
        strcpy(dir, ".");
    }
    s = prt_network_from_json_flags(r, (const char *)data, len, dir, flags, out, sub, sizeof sub);
    prt__free(data);
    if (s != PRT_OK && err && cap) snprintf(err, cap, "%s: %s", path, sub);
    return s;
}
