/*
 * harness/plugrun.c - attribute values and their mapping onto a field
 * schema, element access, and running one prt_op on the CPU or CUDA with
 * host buffers (see plugrun.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "harness/plugrun.h"

/* ---- attribute values ------------------------------------------------------- */

prt_status prt__attrset_from_case(const prt_golden_case *k, prt__arena *ar, prt__attrset *out, char *err,
                                  size_t cap)
{
    int i;
    int64_t j;
    out->nb = 0;
    out->a = NULL;
    if (!k || k->nb_attrs == 0) return PRT_OK;
    out->a = prt__arena_alloc(ar, sizeof(prt__attrval) * (size_t)k->nb_attrs);
    if (!out->a) goto oom;
    for (i = 0; i < k->nb_attrs; i++) {
        const prt_golden_attr *g = &k->attrs[i];
        prt__attrval *a = &out->a[i];
        a->name = g->name;
        if (g->kind == PRT_GOLDEN_ATTR_STRING) {
            a->is_text = 1;
            a->text = g->text ? g->text : "";
            a->count = (int64_t)strlen(a->text);
            continue;
        }
        a->count = g->array.count;
        a->v = prt__arena_alloc(ar, sizeof(double) * (size_t)(a->count ? a->count : 1));
        if (!a->v) goto oom;
        for (j = 0; j < a->count; j++) a->v[j] = prt_npy_get_f64(&g->array, j);
    }
    out->nb = k->nb_attrs;
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory reading attributes");
    return PRT_STATUS_OUT_OF_MEMORY;
}

double prt__plugrun_uniform(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) / 9007199254740992.0;
}

double prt__plugrun_seeded(uint64_t *s)
{
    return prt__plugrun_uniform(s) * 2.0 - 1.0;
}

prt_status prt__attrset_from_config(const prt_pcfg_config *c, uint64_t seed, prt__arena *ar, prt__attrset *out,
                                    char *err, size_t cap)
{
    int i, n = 0;
    int64_t j;
    out->nb = 0;
    out->a = NULL;
    if (!c || c->nb_attrs == 0) return PRT_OK;
    out->a = prt__arena_alloc(ar, sizeof(prt__attrval) * (size_t)c->nb_attrs);
    if (!out->a) goto oom;
    for (i = 0; i < c->nb_attrs; i++) {
        const prt_pcfg_config_attr *ca = &c->attrs[i];
        prt__attrval *a = &out->a[n];
        const prt_pcfg_scalar *vals = NULL;
        int nbv = 0;
        a->name = ca->name;
        if (ca->has_value) {
            vals = ca->values;
            nbv = ca->nb_values;
        } else if (ca->nb_choices > 0) {
            vals = ca->choices;
            nbv = 1;
        }
        if (vals) {
            if (nbv == 1 && !vals[0].is_number) {
                a->is_text = 1;
                a->text = vals[0].text ? vals[0].text : "";
                a->count = (int64_t)strlen(a->text);
                n++;
                continue;
            }
            a->count = nbv;
            a->v = prt__arena_alloc(ar, sizeof(double) * (size_t)(nbv ? nbv : 1));
            if (!a->v) goto oom;
            for (j = 0; j < nbv; j++) {
                if (!vals[j].is_number) {
                    snprintf(err, cap, "config \"%s\": attribute \"%s\" value %lld is \"%s\"; expected a number",
                             c->name, ca->name, (long long)j, vals[j].text ? vals[j].text : "");
                    return PRT_STATUS_BAD_FORMAT;
                }
                a->v[j] = vals[j].is_int ? (double)vals[j].i : vals[j].num;
            }
            n++;
        } else if (ca->shape) {
            prt_dims d;
            int64_t vol;
            uint64_t s = seed ^ (uint64_t)(i + 1) * 0x2545f4914f6cdd1dull;
            char e[200];
            if (prt__dimexpr_eval_list(ca->shape, NULL, 0, &d, e, sizeof e) != PRT_OK ||
                (vol = prt_dims_volume(&d)) < 0 || vol > (1 << 24)) {
                snprintf(err, cap, "config \"%s\": attribute \"%s\" shape \"%s\" is not a list of extents", c->name,
                         ca->name, ca->shape);
                return PRT_STATUS_BAD_FORMAT;
            }
            a->count = vol;
            a->v = prt__arena_alloc(ar, sizeof(double) * (size_t)(vol ? vol : 1));
            if (!a->v) goto oom;
            for (j = 0; j < vol; j++) a->v[j] = prt__plugrun_seeded(&s);
            n++;
        }
    }
    out->nb = n;
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory reading attributes");
    return PRT_STATUS_OUT_OF_MEMORY;
}

const prt__attrval *prt__attrset_get(const prt__attrset *s, const char *name)
{
    int i;
    if (!s || !name) return NULL;
    for (i = 0; i < s->nb; i++)
        if (strcmp(s->a[i].name, name) == 0) return &s->a[i];
    return NULL;
}

prt_status prt__attrset_copy(const prt__attrset *s, prt__arena *ar, prt__attrset *out)
{
    int i;
    out->nb = 0;
    out->a = prt__arena_alloc(ar, sizeof(prt__attrval) * (size_t)(s->nb + 1));
    if (!out->a) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < s->nb; i++) {
        out->a[i] = s->a[i];
        if (!s->a[i].is_text) {
            out->a[i].v = prt__arena_alloc(ar, sizeof(double) * (size_t)(s->a[i].count + 1));
            if (!out->a[i].v) return PRT_STATUS_OUT_OF_MEMORY;
            if (s->a[i].count) memcpy(out->a[i].v, s->a[i].v, sizeof(double) * (size_t)s->a[i].count);
        }
    }
    out->nb = s->nb;
    return PRT_OK;
}

static size_t cat(char *buf, size_t cap, size_t n, const char *fmt, ...) PRT_PRINTF(4, 5);
static size_t cat(char *buf, size_t cap, size_t n, const char *fmt, ...)
{
    va_list ap;
    int k;
    if (n >= cap) return n;
    va_start(ap, fmt);
    k = vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
    return k < 0 ? n : n + (size_t)k;
}

void prt__attrset_str(const prt__attrset *s, char *buf, size_t cap)
{
    size_t n = 0;
    int i;
    int64_t j;
    if (!cap) return;
    buf[0] = 0;
    if (!s || s->nb == 0) {
        snprintf(buf, cap, "(none)");
        return;
    }
    for (i = 0; i < s->nb; i++) {
        const prt__attrval *a = &s->a[i];
        n = cat(buf, cap, n, "%s%s=", i ? " " : "", a->name);
        if (a->is_text) {
            n = cat(buf, cap, n, "\"%s\"", a->text);
            continue;
        }
        if (a->count != 1) n = cat(buf, cap, n, "[");
        for (j = 0; j < a->count && j < 8; j++) n = cat(buf, cap, n, "%s%.9g", j ? ", " : "", a->v[j]);
        if (a->count > 8) n = cat(buf, cap, n, ", ... (%lld values)", (long long)a->count);
        if (a->count != 1) n = cat(buf, cap, n, "]");
    }
}

/* ---- schema ---------------------------------------------------------------- */

const prt_field_schema *prt__schema_at(const prt_plugin_creator *c, int32_t i)
{
    size_t stride = c->field_schema_size ? c->field_schema_size : sizeof(prt_field_schema);
    return (const prt_field_schema *)(const void *)((const char *)c->fields + stride * (size_t)i);
}

const prt_field_schema *prt__schema_find(const prt_plugin_creator *c, const char *name)
{
    int32_t i;
    for (i = 0; c && i < c->nb_fields; i++) {
        const prt_field_schema *f = prt__schema_at(c, i);
        if (f->name && strcmp(f->name, name) == 0) return f;
    }
    return NULL;
}

static int int_range(prt_field_type t, double *lo, double *hi)
{
    switch (t) {
    case PRT_FIELD_INT8: *lo = -128; *hi = 127; return 1;
    case PRT_FIELD_INT16: *lo = -32768; *hi = 32767; return 1;
    case PRT_FIELD_INT32: *lo = -2147483648.0; *hi = 2147483647.0; return 1;
    case PRT_FIELD_INT64: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0; return 1;
    default: return 0;
    }
}

prt_status prt__attrset_to_fields(const prt_plugin_creator *c, const prt__attrset *s, prt__arena *ar,
                                  prt_fields *out, char *skipped, size_t skipped_cap, char *err, size_t cap)
{
    prt_field *f;
    int i, n = 0;
    size_t sk = 0;
    if (skipped && skipped_cap) skipped[0] = 0;
    f = prt__arena_alloc(ar, sizeof(prt_field) * (size_t)(s->nb + 1));
    if (!f) {
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < s->nb; i++) {
        const prt__attrval *a = &s->a[i];
        const prt_field_schema *fs = prt__schema_find(c, a->name);
        size_t es;
        void *d;
        int64_t j;
        double lo, hi;
        if (!fs) {
            if (skipped) sk = cat(skipped, skipped_cap, sk, "%s\"%s\"", sk ? ", " : "", a->name);
            continue;
        }
        es = prt_field_type_size(fs->type);
        if (fs->type == PRT_FIELD_DIMS || fs->type == PRT_FIELD_BYTES || es == 0) {
            snprintf(err, cap, "attribute \"%s\": the schema type %s cannot be given from a PluginConfig value",
                     a->name, prt_field_type_name(fs->type));
            return PRT_STATUS_UNSUPPORTED;
        }
        if (fs->type == PRT_FIELD_CHAR) {
            if (!a->is_text) {
                snprintf(err, cap, "attribute \"%s\": the schema wants a string (char), the value is numeric",
                         a->name);
                return PRT_STATUS_TYPE_MISMATCH;
            }
            f[n].name = a->name;
            f[n].data = a->text;
            f[n].type = PRT_FIELD_CHAR;
            f[n].count = (int64_t)strlen(a->text);
            n++;
            continue;
        }
        if (a->is_text) {
            snprintf(err, cap, "attribute \"%s\": the schema wants %s, the value is the string \"%s\"", a->name,
                     prt_field_type_name(fs->type), a->text);
            return PRT_STATUS_TYPE_MISMATCH;
        }
        d = prt__arena_alloc(ar, es * (size_t)(a->count ? a->count : 1));
        if (!d) {
            snprintf(err, cap, "out of memory");
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        for (j = 0; j < a->count; j++) {
            double v = a->v[j];
            if (int_range(fs->type, &lo, &hi) || fs->type == PRT_FIELD_BOOL) {
                if (fs->type == PRT_FIELD_BOOL) { lo = 0; hi = 1; }
                if (!(v == floor(v)) || v < lo || v > hi) {
                    snprintf(err, cap, "attribute \"%s\" value %lld is %.17g; the schema type %s needs an integer in "
                             "[%.0f, %.0f]", a->name, (long long)j, v, prt_field_type_name(fs->type), lo, hi);
                    return PRT_STATUS_TYPE_MISMATCH;
                }
            }
            switch (fs->type) {
            case PRT_FIELD_INT8: ((int8_t *)d)[j] = (int8_t)v; break;
            case PRT_FIELD_INT16: ((int16_t *)d)[j] = (int16_t)v; break;
            case PRT_FIELD_INT32: ((int32_t *)d)[j] = (int32_t)v; break;
            case PRT_FIELD_INT64:
                ((int64_t *)d)[j] = v >= 9223372036854775807.0 ? INT64_MAX : (int64_t)v;
                break;
            case PRT_FIELD_BOOL: ((uint8_t *)d)[j] = (uint8_t)(v != 0); break;
            case PRT_FIELD_FLOAT16: ((uint16_t *)d)[j] = prt_f32_to_f16((float)v); break;
            case PRT_FIELD_FLOAT32: ((float *)d)[j] = (float)v; break;
            case PRT_FIELD_FLOAT64: ((double *)d)[j] = v; break;
            default: break;
            }
        }
        f[n].name = a->name;
        f[n].data = d;
        f[n].type = fs->type;
        f[n].count = a->count;
        n++;
    }
    out->fields = f;
    out->nb = n;
    out->reserved_ = 0;
    return PRT_OK;
}

/* ---- elements -------------------------------------------------------------- */

const char *prt__dtype_yaml_name(prt_dtype t)
{
    switch (t) {
    case PRT_DTYPE_F32: return "float32";
    case PRT_DTYPE_F16: return "float16";
    case PRT_DTYPE_BF16: return "bfloat16";
    case PRT_DTYPE_I8: return "int8";
    case PRT_DTYPE_U8: return "uint8";
    case PRT_DTYPE_I32: return "int32";
    case PRT_DTYPE_I64: return "int64";
    case PRT_DTYPE_BOOL: return "bool";
    default: return "?";
    }
}

double prt__elem_get(const void *data, prt_dtype t, int64_t i)
{
    switch (t) {
    case PRT_DTYPE_F32: return ((const float *)data)[i];
    case PRT_DTYPE_F16: return prt_f16_to_f32(((const uint16_t *)data)[i]);
    case PRT_DTYPE_BF16: return prt_bf16_to_f32(((const uint16_t *)data)[i]);
    case PRT_DTYPE_I8: return ((const int8_t *)data)[i];
    case PRT_DTYPE_U8: return ((const uint8_t *)data)[i];
    case PRT_DTYPE_I32: return ((const int32_t *)data)[i];
    case PRT_DTYPE_I64: return (double)((const int64_t *)data)[i];
    case PRT_DTYPE_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return NAN;
    }
}

static double clampd(double v, double lo, double hi)
{
    if (v != v) return 0;
    return v < lo ? lo : v > hi ? hi : v;
}

void prt__elem_set(void *data, prt_dtype t, int64_t i, double v)
{
    switch (t) {
    case PRT_DTYPE_F32: ((float *)data)[i] = (float)v; break;
    case PRT_DTYPE_F16: ((uint16_t *)data)[i] = prt_f32_to_f16((float)v); break;
    case PRT_DTYPE_BF16: ((uint16_t *)data)[i] = prt_f32_to_bf16((float)v); break;
    case PRT_DTYPE_I8: ((int8_t *)data)[i] = (int8_t)clampd(nearbyint(v), -128, 127); break;
    case PRT_DTYPE_U8: ((uint8_t *)data)[i] = (uint8_t)clampd(nearbyint(v), 0, 255); break;
    case PRT_DTYPE_I32: ((int32_t *)data)[i] = (int32_t)clampd(nearbyint(v), -2147483648.0, 2147483647.0); break;
    case PRT_DTYPE_I64:
        ((int64_t *)data)[i] = (int64_t)clampd(nearbyint(v), -9223372036854775808.0, 9223372036854774784.0);
        break;
    case PRT_DTYPE_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: break;
    }
}

/* ---- running --------------------------------------------------------------- */

#define GUARD_BYTES 64
#define GUARD_FILL 0xa5

static size_t desc_bytes(const prt_tensor_desc *d)
{
    int64_t v = prt_dims_volume(&d->dims);
    return v < 0 ? 0 : (size_t)v * prt_dtype_size(d->dtype);
}

prt_status prt__plugrun_run(prt_op *op, prt_device device, int nb_threads, const prt__inputs *in,
                            prt__arena *ar, prt__run_out *out, int *configure_failed, char *err, size_t cap)
{
    prt_op_config cfg;
    prt_status s;
    int32_t nb_out = prt_op_nb_outputs(op), i;
    const void **ins = NULL;
    void **outs = NULL, **dev_in = NULL, **dev_out = NULL;
    char e[512];
    int cuda = device == PRT_DEVICE_CUDA;

    if (configure_failed) *configure_failed = 0;
    memset(out, 0, sizeof *out);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = device;
    cfg.nb_threads = nb_threads;
    if (cuda && prt__cuda_device_count() <= 0) {
        snprintf(err, cap, "no CUDA device is available");
        return PRT_STATUS_NO_DEVICE;
    }
    s = prt_op_configure(op, in->desc, in->nb, &cfg);
    if (s != PRT_OK) {
        if (configure_failed) *configure_failed = 1;
        snprintf(err, cap, "configure: %s", prt_op_last_error(op));
        return s;
    }
    out->nb = nb_out;
    out->desc = prt__arena_alloc(ar, sizeof(prt_tensor_desc) * (size_t)(nb_out + 1));
    out->alloc_dims = prt__arena_alloc(ar, sizeof(prt_dims) * (size_t)(nb_out + 1));
    out->data = prt__arena_alloc(ar, sizeof(void *) * (size_t)(nb_out + 1));
    ins = prt__arena_alloc(ar, sizeof(void *) * (size_t)(in->nb + 1));
    outs = prt__arena_alloc(ar, sizeof(void *) * (size_t)(nb_out + 1));
    dev_in = prt__arena_alloc(ar, sizeof(void *) * (size_t)(in->nb + 1));
    dev_out = prt__arena_alloc(ar, sizeof(void *) * (size_t)(nb_out + 1));
    if (!out->desc || !out->alloc_dims || !out->data || !ins || !outs || !dev_in || !dev_out) {
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < nb_out; i++) {
        size_t nbytes;
        s = prt_op_output_desc(op, i, &out->desc[i]);
        if (s != PRT_OK) {
            snprintf(err, cap, "output %d: %s", (int)i, prt_op_last_error(op));
            return s;
        }
        out->alloc_dims[i] = out->desc[i].dims;
        nbytes = desc_bytes(&out->desc[i]);
        /* Guard bytes after each output catch a plugin that writes past it. */
        out->data[i] = nbytes <= SIZE_MAX - GUARD_BYTES ? prt__arena_alloc(ar, nbytes + GUARD_BYTES) : NULL;
        if (!out->data[i]) {
            snprintf(err, cap, "out of memory for output %d (%zu bytes)", (int)i, nbytes);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        memset(out->data[i], 0xff, nbytes);
        memset((unsigned char *)out->data[i] + nbytes, GUARD_FILL, GUARD_BYTES);
        outs[i] = out->data[i];
    }
    for (i = 0; i < in->nb; i++) ins[i] = in->data[i];

    if (!cuda) {
        s = prt_op_run(op, ins, outs);
        if (s != PRT_OK) {
            snprintf(err, cap, "run: %s", prt_op_last_error(op));
            return s;
        }
        for (i = 0; i < nb_out; i++) {
            size_t nbytes = desc_bytes(&out->desc[i]), k;
            const unsigned char *g = (const unsigned char *)out->data[i] + nbytes;
            for (k = 0; k < GUARD_BYTES && g[k] == GUARD_FILL; k++) {
            }
            if (k < GUARD_BYTES) {
                snprintf(err, cap, "output %d (%zu bytes): the plugin wrote past the end of its buffer (byte %zu after "
                         "the end changed)", (int)i, nbytes, k);
                return PRT_STATUS_PLUGIN_ERROR;
            }
        }
    } else {
        s = PRT_OK;
        for (i = 0; i < in->nb && s == PRT_OK; i++) {
            size_t n = desc_bytes(&in->desc[i]);
            s = prt__cuda_malloc(n ? n : 1, &dev_in[i], e, sizeof e);
            if (s == PRT_OK && n) s = prt__cuda_copy(dev_in[i], in->data[i], n, PRT__H2D, e, sizeof e);
            ins[i] = dev_in[i];
        }
        for (i = 0; i < nb_out && s == PRT_OK; i++) {
            size_t n = desc_bytes(&out->desc[i]);
            s = prt__cuda_malloc(n ? n : 1, &dev_out[i], e, sizeof e);
            if (s == PRT_OK && n) s = prt__cuda_memset(dev_out[i], 0xff, n, e, sizeof e);
            outs[i] = dev_out[i];
        }
        if (s != PRT_OK) {
            snprintf(err, cap, "CUDA memory: %s", e);
            goto cuda_done;
        }
        s = prt_op_run(op, ins, outs);
        if (s != PRT_OK) {
            snprintf(err, cap, "run: %s", prt_op_last_error(op));
            goto cuda_done;
        }
        s = prt__cuda_stream_sync(NULL, e, sizeof e);
        if (s != PRT_OK) {
            snprintf(err, cap, "run (stream synchronize): %s", e);
            goto cuda_done;
        }
        for (i = 0; i < nb_out && s == PRT_OK; i++) {
            prt_tensor_desc d;
            size_t n;
            s = prt_op_output_desc(op, i, &d);
            if (s != PRT_OK) {
                snprintf(err, cap, "output %d: %s", (int)i, prt_op_last_error(op));
                goto cuda_done;
            }
            n = desc_bytes(&d) < desc_bytes(&out->desc[i]) ? desc_bytes(&d) : desc_bytes(&out->desc[i]);
            if (n) s = prt__cuda_copy(out->data[i], dev_out[i], n, PRT__D2H, e, sizeof e);
            if (s != PRT_OK) snprintf(err, cap, "copying output %d back: %s", (int)i, e);
        }
    cuda_done:
        for (i = 0; i < in->nb; i++) prt__cuda_free(dev_in[i]);
        for (i = 0; i < nb_out; i++) prt__cuda_free(dev_out[i]);
        if (s != PRT_OK) return s;
    }
    /* Data-dependent extents are known now. */
    for (i = 0; i < nb_out; i++) {
        prt_tensor_desc d;
        if (prt_op_output_desc(op, i, &d) == PRT_OK && prt_dims_volume(&d.dims) >= 0 &&
            prt_dims_volume(&d.dims) <= prt_dims_volume(&out->alloc_dims[i]))
            out->desc[i] = d;
    }
    return PRT_OK;
}
