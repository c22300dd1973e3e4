/*
 * harness/runner.c - the conformance runner (prt_harness_test_plugin in
 * plugrt/harness.h): for every selected
 * version of the plugin a PluginConfig YAML declares,
 *
 *   plugin      a creator with the YAML's name and version is registered
 *   schema      the creator's field schema agrees with the YAML's attributes
 *               (names, types with widening, lengths, required)
 *   per config and device, per golden case:
 *     create    the plugin is created from the case's attributes (else the
 *               config's values), mapped onto the schema
 *     shape     each output's shape equals output_dims
 *     golden    each compared output is within atol + rtol * |expected|
 *     serialize serialize -> deserialize gives bitwise identical outputs
 *     clone     a clone gives bitwise identical outputs
 *   range       every attribute value just outside its YAML range is
 *               refused at create
 *   constraint  input dims breaking each input_dim_constraint are refused
 *               at configure
 *   dim-range   input extents just outside a finite input_dim_range bound
 *               are refused at configure
 *   types       every supported_input_types combination that no config
 *               covers runs on inputs of the golden shapes, and agrees with
 *               the base config's types on the same values
 *
 * A failed check names the output and element (or attribute, constraint)
 * and what was expected; when one config fails and another passes with
 * attributes that differ in one name only, a note names that attribute.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "harness/plugrun.h"
#include "plugrt/harness.h"

#define MSG_CAP 1536

enum { ST_PASS = 0, ST_FAIL = 1, ST_SKIP = 2 };
static const char *const st_name[] = {"PASS", "FAIL", "SKIP"};

typedef struct row {
    const char *check;
    const char *config;
    const char *types;
    const char *device;
    int case_i;        /* -1: not per case */
    const char *what;  /* output, attribute or constraint */
    int status;
    int has_err, has_tol;
    double max_abs, max_rel, atol, rtol;
    char msg[MSG_CAP];
} row;

typedef struct runner {
    const prt_harness_test_opts *o;
    prt_harness_summary *sum;
    FILE *out;
    prt_registry *reg;
    const prt_pcfg *cfg;
    const prt_pcfg_version *v;
    const prt_plugin_creator *creator;
    const prt_golden *golden;
    const char *golden_file;
    cJSON *jchecks, *jnotes;
    int json_failed; /* out of memory building the JSON */
    uint64_t seed;
    int cuda_warned;
} runner;

/* ---- reporting ---------------------------------------------------------------- */

static void row_init(row *r, const char *check, const char *config, const char *types, const char *device)
{
    memset(r, 0, sizeof *r);
    r->check = check;
    r->config = config ? config : "-";
    r->types = types ? types : "-";
    r->device = device ? device : "-";
    r->case_i = -1;
    r->what = "-";
}

static void row_msg(row *r, const char *fmt, ...) PRT_PRINTF(2, 3);
static void row_msg(row *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
}

static void jnum(cJSON *o, const char *k, double v)
{
    if (isfinite(v)) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddStringToObject(o, k, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
}

static void emit(runner *R, const row *r)
{
    if (r->status == ST_PASS) R->sum->passed++;
    else if (r->status == ST_FAIL) R->sum->failed++;
    else R->sum->skipped++;
    if (R->o->json) {
        cJSON *j = cJSON_CreateObject();
        if (!j) {
            R->json_failed = 1;
            return;
        }
        cJSON_AddStringToObject(j, "version", R->v ? R->v->version : "-");
        cJSON_AddStringToObject(j, "check", r->check);
        cJSON_AddStringToObject(j, "config", r->config);
        cJSON_AddStringToObject(j, "types", r->types);
        cJSON_AddStringToObject(j, "device", r->device);
        if (r->case_i >= 0) cJSON_AddNumberToObject(j, "case", r->case_i);
        cJSON_AddStringToObject(j, "what", r->what);
        cJSON_AddStringToObject(j, "result", st_name[r->status]);
        if (r->has_err) {
            jnum(j, "max_abs", r->max_abs);
            jnum(j, "max_rel", r->max_rel);
        }
        if (r->has_tol) {
            jnum(j, "atol", r->atol);
            jnum(j, "rtol", r->rtol);
        }
        if (r->msg[0]) cJSON_AddStringToObject(j, "message", r->msg);
        cJSON_AddItemToArray(R->jchecks, j);
        return;
    }
    {
        char ci[16], ea[24], er[24], ta[24], tr[24];
        snprintf(ci, sizeof ci, "%d", r->case_i);
        snprintf(ea, sizeof ea, "%.3g", r->max_abs);
        snprintf(er, sizeof er, "%.3g", r->max_rel);
        snprintf(ta, sizeof ta, "%.3g", r->atol);
        snprintf(tr, sizeof tr, "%.3g", r->rtol);
        fprintf(R->out, "  %-10s %-18s %-9s %-5s %-4s %-18s %-10s %-10s %-9s %-9s %s\n", r->check, r->config,
                r->types, r->device, r->case_i >= 0 ? ci : "-", r->what, r->has_err ? ea : "-",
                r->has_err ? er : "-", r->has_tol ? ta : "-", r->has_tol ? tr : "-", st_name[r->status]);
        if (r->msg[0] && (r->status != ST_PASS || R->o->verbose))
            fprintf(R->out, "      %s: %s\n", r->status == ST_FAIL ? "error" : "note", r->msg);
    }
}

static void note(runner *R, const char *fmt, ...) PRT_PRINTF(2, 3);
static void note(runner *R, const char *fmt, ...)
{
    char buf[MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (R->o->json) {
        cJSON *s = cJSON_CreateString(buf);
        if (s) cJSON_AddItemToArray(R->jnotes, s);
        else R->json_failed = 1;
    } else {
        fprintf(R->out, "  note: %s\n", buf);
    }
}

/* ---- small helpers ------------------------------------------------------------ */

static void dims_index(const prt_dims *d, int64_t flat, char *buf, size_t cap)
{
    int64_t idx[PRT_MAX_DIMS];
    int k;
    size_t n = 0;
    for (k = d->nb - 1; k >= 0; k--) {
        int64_t e = d->d[k] > 0 ? d->d[k] : 1;
        idx[k] = flat % e;
        flat /= e;
    }
    n += (size_t)snprintf(buf, cap, "[");
    for (k = 0; k < d->nb && n < cap; k++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? ", " : "", (long long)idx[k]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

static int yaml_field_type(const char *s, prt_field_type *t)
{
    static const struct { const char *n; prt_field_type t; } map[] = {
        {"int8", PRT_FIELD_INT8}, {"int16", PRT_FIELD_INT16}, {"int32", PRT_FIELD_INT32},
        {"int64", PRT_FIELD_INT64}, {"float16", PRT_FIELD_FLOAT16}, {"half", PRT_FIELD_FLOAT16},
        {"float32", PRT_FIELD_FLOAT32}, {"float", PRT_FIELD_FLOAT32}, {"float64", PRT_FIELD_FLOAT64},
        {"double", PRT_FIELD_FLOAT64}, {"char", PRT_FIELD_CHAR}, {"string", PRT_FIELD_CHAR},
        {"str", PRT_FIELD_CHAR}, {"bool", PRT_FIELD_BOOL}, {"dims", PRT_FIELD_DIMS}, {"bytes", PRT_FIELD_BYTES}};
    size_t i;
    for (i = 0; s && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(s, map[i].n) == 0) {
            *t = map[i].t;
            return 1;
        }
    return 0;
}

/* Does a value of YAML type `y` reach schema type `s` unchanged or by
 * lossless widening? */
static int widens(prt_field_type y, prt_field_type s)
{
    if (y == s) return 1;
    if (y <= PRT_FIELD_INT64 && s <= PRT_FIELD_INT64) return y < s;
    if (y >= PRT_FIELD_FLOAT16 && y <= PRT_FIELD_FLOAT64 && s >= PRT_FIELD_FLOAT16 && s <= PRT_FIELD_FLOAT64)
        return y < s;
    return 0;
}

static int is_int_field(prt_field_type t)
{
    return t <= PRT_FIELD_INT64 || t == PRT_FIELD_BOOL;
}

/* The field type an attribute's values take: the YAML's type, else the schema's. */
static prt_field_type attr_type(runner *R, const char *name)
{
    prt_field_type t = PRT_FIELD_FLOAT64;
    const prt_field_schema *fs = prt__schema_find(R->creator, name);
    if (yaml_field_type(prt__pcfg_pair_get(R->v->attribute_types, R->v->nb_attribute_types, name), &t)) return t;
    return fs ? fs->type : PRT_FIELD_FLOAT64;
}

static void tolerance(const prt_pcfg_version *v, prt_dtype t, double *atol, double *rtol)
{
    if (t == PRT_DTYPE_F16) {
        *atol = isnan(v->fp16_atol) ? 1e-2 : v->fp16_atol;
        *rtol = isnan(v->fp16_rtol) ? 1e-2 : v->fp16_rtol;
    } else if (t == PRT_DTYPE_BF16) {
        *atol = isnan(v->bf16_atol) ? 5e-2 : v->bf16_atol;
        *rtol = isnan(v->bf16_rtol) ? 5e-2 : v->bf16_rtol;
    } else {
        *atol = isnan(v->abs_tol) ? 1e-5 : v->abs_tol;
        *rtol = isnan(v->rel_tol) ? 1e-5 : v->rel_tol;
    }
}

/* "float32" when every input has that type, else "float32/float16/..". */
static const char *types_label(const prt__inputs *in, prt__arena *ar)
{
    char buf[256];
    size_t n = 0;
    int i, same = 1;
    for (i = 1; i < in->nb; i++)
        if (in->desc[i].dtype != in->desc[0].dtype) same = 0;
    if (in->nb == 0) return "-";
    if (same) return prt__dtype_yaml_name(in->desc[0].dtype);
    buf[0] = 0;
    for (i = 0; i < in->nb && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "/" : "", prt_dtype_name(in->desc[i].dtype));
    return prt__arena_strndup(ar, buf, strlen(buf));
}

static int find_output(const prt_pcfg_version *v, const char *name)
{
    int i;
    for (i = 0; i < v->nb_outputs; i++)
        if (strcmp(v->outputs[i], name) == 0) return i;
    return -1;
}

/* ---- inputs ------------------------------------------------------------------- */

static prt_status dtype_for(const prt_pcfg_pair *types, int nb, const char *name, prt_dtype fallback,
                            prt_dtype *out, char *err, size_t cap)
{
    const char *t = prt__pcfg_pair_get(types, nb, name);
    if (!t) {
        *out = fallback;
        return PRT_OK;
    }
    if (prt__pcfg_dtype(t, out) != PRT_OK) {
        snprintf(err, cap, "input \"%s\": type \"%s\" has no tensor type (expected float32, float16, bfloat16, "
                           "int8, uint8, int32, int64 or bool)", name, t);
        return PRT_STATUS_UNSUPPORTED;
    }
    return PRT_OK;
}

static prt_status inputs_alloc(const prt_pcfg_version *v, prt__arena *ar, prt__inputs *in)
{
    int n = v->nb_inputs + 1;
    in->nb = 0;
    in->names = prt__arena_alloc(ar, sizeof(char *) * (size_t)n);
    in->desc = prt__arena_alloc(ar, sizeof(prt_tensor_desc) * (size_t)n);
    in->data = prt__arena_alloc(ar, sizeof(void *) * (size_t)n);
    return in->names && in->desc && in->data ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}

/* The inputs of golden case k, converted to the types the map gives. */
static prt_status case_inputs(const prt_pcfg_version *v, const prt_golden_case *k, const prt_pcfg_pair *types,
                              int nb_types, prt__arena *ar, prt__inputs *in, char *err, size_t cap)
{
    int i;
    prt_status s = inputs_alloc(v, ar, in);
    if (s != PRT_OK) {
        snprintf(err, cap, "out of memory");
        return s;
    }
    for (i = 0; i < v->nb_inputs; i++) {
        const prt_golden_tensor *t = prt__golden_case_input(k, v->inputs[i]);
        prt_dtype own = PRT_DTYPE_F32, dt;
        size_t bytes;
        void *buf;
        if (!t) continue; /* an optional input left out */
        if (t->array.type != PRT_NPY_F8 && prt_npy_type_to_dtype(t->array.type, &own) != PRT_OK) own = PRT_DTYPE_F32;
        s = dtype_for(types, nb_types, v->inputs[i], own, &dt, err, cap);
        if (s != PRT_OK) return s;
        bytes = (size_t)t->array.count * prt_dtype_size(dt);
        buf = prt__arena_alloc(ar, bytes ? bytes : 1);
        if (!buf) {
            snprintf(err, cap, "out of memory");
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        s = prt_npy_convert(&t->array, dt, buf, bytes);
        if (s != PRT_OK) {
            snprintf(err, cap, "input \"%s\": %s", v->inputs[i], prt_last_error(&t->array));
            return s;
        }
        in->names[in->nb] = v->inputs[i];
        memset(&in->desc[in->nb], 0, sizeof(prt_tensor_desc));
        in->desc[in->nb].dtype = dt;
        in->desc[in->nb].format = PRT_FORMAT_LINEAR;
        in->desc[in->nb].dims = t->array.shape;
        in->desc[in->nb].dims.reserved_ = 0;
        in->data[in->nb] = buf;
        in->nb++;
    }
    return PRT_OK;
}

/* `in` gets the count and names of `src` and room for as many descriptors
 * and data pointers; 0 when out of memory. */
static int inputs_like(const prt__inputs *src, prt__arena *ar, prt__inputs *in)
{
    in->nb = src->nb;
    in->names = src->names;
    in->desc = prt__arena_alloc(ar, sizeof(prt_tensor_desc) * (size_t)(in->nb + 1));
    in->data = prt__arena_alloc(ar, sizeof(void *) * (size_t)(in->nb + 1));
    return in->desc && in->data;
}

/* Room for n elements of type t (one when n is 0); NULL when out of memory. */
static void *input_data(prt__arena *ar, int64_t n, prt_dtype t)
{
    return prt__arena_alloc(ar, (size_t)(n ? n : 1) * prt_dtype_size(t));
}

/* Inputs of the shapes of `shape_of` with seeded values, in the types of
 * `types` (others keep the shape_of type). */
static prt_status synth_inputs(const prt__inputs *shape_of, const prt_pcfg_pair *types, int nb_types,
                               uint64_t seed, prt__arena *ar, prt__inputs *in, char *err, size_t cap)
{
    int i;
    if (!inputs_like(shape_of, ar, in)) goto oom;
    for (i = 0; i < in->nb; i++) {
        int64_t n = prt_dims_volume(&shape_of->desc[i].dims), j;
        uint64_t s = seed + (uint64_t)(i + 1) * 0x632be59bd9b4e019ull;
        prt_status st;
        in->desc[i] = shape_of->desc[i];
        st = dtype_for(types, nb_types, in->names[i], shape_of->desc[i].dtype, &in->desc[i].dtype, err, cap);
        if (st != PRT_OK) return st;
        in->data[i] = input_data(ar, n, in->desc[i].dtype);
        if (!in->data[i]) goto oom;
        for (j = 0; j < n; j++) {
            double r = prt__plugrun_seeded(&s);
            prt_dtype t = in->desc[i].dtype;
            if (t == PRT_DTYPE_BOOL) r = r > 0;
            else if (t != PRT_DTYPE_F32 && t != PRT_DTYPE_F16 && t != PRT_DTYPE_BF16) r = floor((r + 1) * 4);
            prt__elem_set(in->data[i], t, j, r);
        }
    }
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory");
    return PRT_STATUS_OUT_OF_MEMORY;
}

/* The same values in other types (element by element through double). */
static prt_status retype_inputs(const prt__inputs *src, const prt__inputs *types_of, prt__arena *ar,
                                prt__inputs *in)
{
    int i;
    if (!inputs_like(src, ar, in)) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < in->nb; i++) {
        int64_t n = prt_dims_volume(&src->desc[i].dims), j;
        in->desc[i] = src->desc[i];
        if (i < types_of->nb) in->desc[i].dtype = types_of->desc[i].dtype;
        in->data[i] = input_data(ar, n, in->desc[i].dtype);
        if (!in->data[i]) return PRT_STATUS_OUT_OF_MEMORY;
        for (j = 0; j < n; j++)
            prt__elem_set(in->data[i], in->desc[i].dtype, j, prt__elem_get(src->data[i], src->desc[i].dtype, j));
    }
    return PRT_OK;
}

/* ---- symbols for output_dims and constraints ------------------------------------ */

typedef struct symtab {
    int nb;
    prt_dimexpr_sym s[64];
    int64_t vals[64][PRT_MAX_DIMS];
} symtab;

static void syms_build(symtab *t, const prt__inputs *in, const prt__attrset *attrs)
{
    int i, k;
    t->nb = 0;
    for (i = 0; i < in->nb && t->nb < 64; i++) {
        for (k = 0; k < in->desc[i].dims.nb; k++) t->vals[t->nb][k] = in->desc[i].dims.d[k];
        t->s[t->nb].name = in->names[i];
        t->s[t->nb].nb = in->desc[i].dims.nb;
        t->s[t->nb].values = t->vals[t->nb];
        t->nb++;
    }
    for (i = 0; attrs && i < attrs->nb && t->nb < 64; i++) {
        const prt__attrval *a = &attrs->a[i];
        int ok = !a->is_text && a->count >= 1 && a->count <= PRT_MAX_DIMS;
        for (k = 0; ok && k < a->count; k++)
            if (a->v[k] != floor(a->v[k]) || fabs(a->v[k]) > 1e15) ok = 0;
        if (!ok) continue;
        for (k = 0; k < a->count; k++) t->vals[t->nb][k] = (int64_t)a->v[k];
        t->s[t->nb].name = a->name;
        t->s[t->nb].nb = (int)a->count;
        t->s[t->nb].values = t->vals[t->nb];
        t->nb++;
    }
}

/* ---- creating ops ---------------------------------------------------------------- */

static prt_status make_op(runner *R, const prt__attrset *attrs, prt__arena *ar, prt_op **op, char *err, size_t cap)
{
    prt_fields fc;
    char skipped[256];
    prt_status s = prt__attrset_to_fields(R->creator, attrs, ar, &fc, skipped, sizeof skipped, err, cap);
    if (s != PRT_OK) return s;
    s = prt_op_create(R->reg, R->creator->name, R->creator->version, R->creator->plugin_namespace, &fc, op);
    if (s != PRT_OK) snprintf(err, cap, "%s", prt_registry_last_error(R->reg));
    return s;
}

/* ---- comparisons ----------------------------------------------------------------- */

/* Golden output vs plugin output. */
static void compare_golden(row *r, const char *name, const prt_tensor_desc *d, const void *data,
                           const prt_npy_array *g, double atol, double rtol, const prt__attrset *attrs)
{
    int64_t n = prt_dims_volume(&d->dims), i, bad = 0, first = -1;
    double fa = 0, fe = 0, worst_abs = 0, worst_rel = 0;
    char a[128], b[128], idx[128], at[512];
    r->has_tol = 1;
    r->atol = atol;
    r->rtol = rtol;
    if (g->count != n || (g->shape.nb == d->dims.nb && !prt_dims_equal(&g->shape, &d->dims))) {
        r->status = ST_FAIL;
        row_msg(r, "output \"%s\" has shape %s, the golden output %s", name, prt_dims_str(&d->dims, a, sizeof a),
                prt_dims_str(&g->shape, b, sizeof b));
        return;
    }
    for (i = 0; i < n; i++) {
        double got = prt__elem_get(data, d->dtype, i), exp_ = prt_npy_get_f64(g, i);
        double diff = fabs(got - exp_), rel;
        int ok;
        if (isnan(got) || isnan(exp_)) {
            ok = isnan(got) && isnan(exp_);
            diff = ok ? 0 : INFINITY;
        } else if (isinf(got) || isinf(exp_)) {
            ok = got == exp_;
            diff = ok ? 0 : INFINITY;
        } else {
            ok = diff <= atol + rtol * fabs(exp_);
        }
        rel = exp_ != 0 && !isinf(exp_) ? diff / fabs(exp_) : (diff > 0 ? INFINITY : 0);
        if (diff > worst_abs) worst_abs = diff;
        if (rel > worst_rel && exp_ != 0) worst_rel = rel;
        if (!ok) {
            if (bad++ == 0) {
                first = i;
                fa = got;
                fe = exp_;
            }
        }
    }
    r->has_err = 1;
    r->max_abs = worst_abs;
    r->max_rel = worst_rel;
    if (!bad) {
        r->status = ST_PASS;
        return;
    }
    r->status = ST_FAIL;
    dims_index(&d->dims, first, idx, sizeof idx);
    prt__attrset_str(attrs, at, sizeof at);
    row_msg(r, "output \"%s\" element %lld %s: got %.9g, expected %.9g; |diff| %.3g > atol + rtol * |expected| = "
               "%.3g (%lld of %lld elements outside the tolerance); attributes: %s",
            name, (long long)first, idx, fa, fe, fabs(fa - fe), atol + rtol * fabs(fe), (long long)bad,
            (long long)n, at);
}

/* Bitwise comparison of two runs' outputs; 0 when identical. */
static int compare_bitwise(const prt__run_out *a, const prt__run_out *b, char *msg, size_t cap)
{
    int i;
    for (i = 0; i < a->nb && i < b->nb; i++) {
        int64_t n = prt_dims_volume(&a->desc[i].dims), j;
        size_t es = prt_dtype_size(a->desc[i].dtype);
        char d1[128], d2[128];
        if (a->desc[i].dtype != b->desc[i].dtype || !prt_dims_equal(&a->desc[i].dims, &b->desc[i].dims)) {
            snprintf(msg, cap, "output %d is %s %s, the original's %s %s", i, prt_dtype_name(b->desc[i].dtype),
                     prt_dims_str(&b->desc[i].dims, d1, sizeof d1), prt_dtype_name(a->desc[i].dtype),
                     prt_dims_str(&a->desc[i].dims, d2, sizeof d2));
            return 1;
        }
        for (j = 0; j < n; j++)
            if (memcmp((const char *)a->data[i] + (size_t)j * es, (const char *)b->data[i] + (size_t)j * es, es)) {
                dims_index(&a->desc[i].dims, j, d1, sizeof d1);
                snprintf(msg, cap, "output %d element %lld %s: %.9g, the original gave %.9g", i, (long long)j, d1,
                         prt__elem_get(b->data[i], b->desc[i].dtype, j), prt__elem_get(a->data[i], a->desc[i].dtype, j));
                return 1;
            }
    }
    if (a->nb != b->nb) {
        snprintf(msg, cap, "%d outputs, the original had %d", b->nb, a->nb);
        return 1;
    }
    return 0;
}

/* ---- one config ------------------------------------------------------------------- */

typedef struct cfg_result {
    const char *name;
    prt__attrset attrs; /* of case 0 (filled after the runs) */
    int have_attrs;
    int golden_ran, golden_failed;
} cfg_result;

static const char *dev_name(prt_device d)
{
    return d == PRT_DEVICE_CUDA ? "cuda" : "cpu";
}

static int device_usable(runner *R, prt_device dev, const char *config, const char *types, int *warned)
{
    row r;
    (void)warned;
    if (dev == PRT_DEVICE_CPU || prt__cuda_device_count() > 0) return 1;
    if (!R->cuda_warned || R->o->cuda_required) {
        row_init(&r, "device", config, types, "cuda");
        r.status = R->o->cuda_required ? ST_FAIL : ST_SKIP;
        row_msg(&r, "no CUDA device is available");
        emit(R, &r);
        R->cuda_warned = 1;
    }
    return 0;
}

/* Shape check of every output against output_dims. */
static void check_shapes(runner *R, const char *config, const char *types, const char *dev, int case_i,
                         const prt__inputs *in, const prt__attrset *attrs, const prt__run_out *out)
{
    symtab t;
    int i;
    syms_build(&t, in, attrs);
    for (i = 0; i < R->v->nb_output_dims; i++) {
        const prt_pcfg_pair *p = &R->v->output_dims[i];
        int oi = find_output(R->v, p->key);
        prt_dims want;
        char e[256], a[128], b[128];
        prt_status s;
        row r;
        row_init(&r, "shape", config, types, dev);
        r.case_i = case_i;
        r.what = p->key;
        if (oi < 0 || oi >= out->nb) {
            r.status = ST_FAIL;
            row_msg(&r, "output_dims names \"%s\", which is not output 0..%d of the plugin", p->key, out->nb - 1);
            emit(R, &r);
            continue;
        }
        s = prt__dimexpr_eval_list(p->value, t.s, t.nb, &want, e, sizeof e);
        if (s == PRT_STATUS_NOT_FOUND) {
            r.status = ST_SKIP;
            row_msg(&r, "output_dims \"%s\" cannot be evaluated: %s", p->value, e);
        } else if (s != PRT_OK) {
            r.status = ST_FAIL;
            row_msg(&r, "output_dims \"%s\": %s", p->value, e);
        } else if (!prt_dims_equal(&want, &out->alloc_dims[oi])) {
            r.status = ST_FAIL;
            row_msg(&r, "output \"%s\" has shape %s; output_dims \"%s\" gives %s", p->key,
                    prt_dims_str(&out->alloc_dims[oi], a, sizeof a), p->value, prt_dims_str(&want, b, sizeof b));
        } else {
            r.status = ST_PASS;
            row_msg(&r, "%s = %s", p->value, prt_dims_str(&want, b, sizeof b));
        }
        emit(R, &r);
    }
}

/* Serialize -> deserialize and clone, run again, compare bitwise. */
static void check_copies(runner *R, prt_op *op, const char *config, const char *types, prt_device dev,
                         const prt__inputs *in, const prt__run_out *ref, prt__arena *ar)
{
    int k;
    for (k = 0; k < 2; k++) {
        prt_op *cp = NULL;
        prt__run_out o2;
        char e[MSG_CAP], m[MSG_CAP];
        prt_status s;
        row r;
        row_init(&r, k == 0 ? "serialize" : "clone", config, types, dev_name(dev));
        r.case_i = 0;
        if (k == 0) {
            size_t len = 0;
            void *buf;
            s = prt_op_serialize(op, NULL, 0, &len);
            if (s != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "serialize (size): %s", prt_op_last_error(op));
                emit(R, &r);
                continue;
            }
            buf = prt__arena_alloc(ar, len ? len : 1);
            if (!buf || (s = prt_op_serialize(op, buf, len, &len)) != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "serialize: %s", buf ? prt_op_last_error(op) : "out of memory");
                emit(R, &r);
                continue;
            }
            s = prt_op_deserialize(R->reg, buf, len, &cp);
            if (s != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "deserialize of the %zu-byte record: %s", len, prt_registry_last_error(R->reg));
                emit(R, &r);
                continue;
            }
        } else {
            s = prt_op_clone(op, &cp);
            if (s != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "clone: %s", prt_op_last_error(op));
                emit(R, &r);
                continue;
            }
        }
        s = prt__plugrun_run(cp, dev, R->o->nb_threads, in, ar, &o2, NULL, e, sizeof e);
        if (s != PRT_OK) {
            r.status = ST_FAIL;
            row_msg(&r, "the %s: %s", k == 0 ? "deserialized plugin" : "clone", e);
        } else if (compare_bitwise(ref, &o2, m, sizeof m)) {
            r.status = ST_FAIL;
            row_msg(&r, "the %s differs: %s", k == 0 ? "deserialized plugin" : "clone", m);
        } else {
            r.status = ST_PASS;
        }
        emit(R, &r);
        prt_op_destroy(cp);
    }
}

/* One run of one case on one device with every check that goes with it.
 * Returns 1 when any golden comparison failed, 0 otherwise, -1 when the
 * plugin could not be created or run. */
static int run_case(runner *R, const prt_pcfg_config *c, const prt_golden_case *k, int case_i,
                    const prt__inputs *in, const prt__attrset *attrs, prt_device dev, const char *types,
                    prt__arena *ar)
{
    prt_op *op = NULL;
    prt__run_out out;
    char e[MSG_CAP];
    prt_status s;
    int i, failed = 0;
    row r;

    row_init(&r, "run", c->name, types, dev_name(dev));
    r.case_i = case_i;
    s = make_op(R, attrs, ar, &op, e, sizeof e);
    if (s != PRT_OK) {
        r.check = "create";
        r.status = ST_FAIL;
        row_msg(&r, "%s", e);
        emit(R, &r);
        return -1;
    }
    s = prt__plugrun_run(op, dev, R->o->nb_threads, in, ar, &out, NULL, e, sizeof e);
    if (s != PRT_OK) {
        r.status = ST_FAIL;
        row_msg(&r, "%s", e);
        emit(R, &r);
        prt_op_destroy(op);
        return -1;
    }
    check_shapes(R, c->name, types, dev_name(dev), case_i, in, attrs, &out);
    if (k) {
        int nb_cmp = c->nb_output_types ? c->nb_output_types : R->v->nb_outputs;
        for (i = 0; i < nb_cmp; i++) {
            const char *name = c->nb_output_types ? c->output_types[i].key : R->v->outputs[i];
            int oi = find_output(R->v, name);
            const prt_golden_tensor *g = prt__golden_case_output(k, name);
            double atol, rtol;
            row_init(&r, "golden", c->name, types, dev_name(dev));
            r.case_i = case_i;
            r.what = name;
            if (oi < 0 || oi >= out.nb) {
                r.status = ST_FAIL;
                row_msg(&r, "output \"%s\" of output_types is not an output of the YAML or the plugin", name);
            } else if (!g) {
                r.status = ST_SKIP;
                row_msg(&r, "the golden case has no output \"%s\"", name);
            } else {
                tolerance(R->v, out.desc[oi].dtype, &atol, &rtol);
                compare_golden(&r, name, &out.desc[oi], out.data[oi], &g->array, atol, rtol, attrs);
            }
            if (r.status == ST_FAIL) failed = 1;
            emit(R, &r);
        }
    }
    if (case_i == 0) check_copies(R, op, c->name, types, dev, in, &out, ar);
    prt_op_destroy(op);
    return failed;
}

static const prt_golden_case *first_case(runner *R, const prt_pcfg_config **which)
{
    int i;
    for (i = 0; R->golden && i < R->v->nb_configs; i++) {
        const prt_golden_config *gc = prt__golden_find_config(R->golden, R->v->configs[i].name);
        if (gc && gc->nb_cases > 0) {
            *which = &R->v->configs[i];
            return &gc->cases[0];
        }
    }
    for (i = 0; R->golden && i < R->golden->nb_configs; i++) {
        if (R->golden->configs[i].nb_cases > 0) {
            *which = NULL;
            return &R->golden->configs[i].cases[0];
        }
    }
    return NULL;
}

/* Attributes a case runs with: its own, else the config's. */
static prt_status case_attrs(runner *R, const prt_pcfg_config *c, const prt_golden_case *k, prt__arena *ar,
                             prt__attrset *out, char *err, size_t cap)
{
    if (k && k->nb_attrs > 0) return prt__attrset_from_case(k, ar, out, err, cap);
    return prt__attrset_from_config(c, R->seed, ar, out, err, cap);
}

/* Non-zero (message in err) when the inputs break one of the config's own
 * input_dim_constraints; constraints naming an input the case leaves out
 * are skipped, as at version level. */
static int config_constraints_broken(runner *R, const prt_pcfg_config *c, const prt__inputs *in,
                                     const prt__attrset *at, char *err, size_t cap)
{
    prt_pcfg_version only;
    symtab t;
    if (c->nb_input_dim_constraints == 0) return 0;
    memset(&only, 0, sizeof only);
    only.version = R->v->version;
    only.nb_input_dim_constraints = c->nb_input_dim_constraints;
    only.input_dim_constraints = c->input_dim_constraints;
    syms_build(&t, in, at);
    return prt__pcfg_check_inputs(&only, t.s, t.nb, NULL, err, cap) != PRT_OK;
}

static void run_config(runner *R, const prt_pcfg_config *c, cfg_result *res_cpu, cfg_result *res_cuda)
{
    const prt_golden_config *gc = R->golden ? prt__golden_find_config(R->golden, c->name) : NULL;
    int nb_cases = gc ? gc->nb_cases : 0, j, d, warned = 0;
    prt__arena ar = {0};
    char e[MSG_CAP];
    row r;

    for (d = 0; d < 2; d++) {
        prt_device dev = d ? PRT_DEVICE_CUDA : PRT_DEVICE_CPU;
        cfg_result *res = d ? res_cuda : res_cpu;
        if ((d == 0 && !R->o->cpu) || (d == 1 && !R->o->cuda)) continue;
        res->name = c->name;
        if (!device_usable(R, dev, c->name, "-", &warned)) continue;
        if (nb_cases == 0) {
            /* No golden data: run on synthesized inputs of the base shapes. */
            const prt_pcfg_config *bc = NULL;
            const prt_golden_case *base = first_case(R, &bc);
            prt__inputs bin, in;
            prt__attrset at;
            row_init(&r, "golden", c->name, "-", dev_name(dev));
            r.status = ST_SKIP;
            row_msg(&r, "no golden case for config \"%s\"%s", c->name, R->golden ? "" : " (no golden file)");
            emit(R, &r);
            if (!base) continue;
            if (case_inputs(R->v, base, bc ? bc->input_types : NULL, bc ? bc->nb_input_types : 0, &ar, &bin, e,
                            sizeof e) != PRT_OK ||
                synth_inputs(&bin, c->input_types, c->nb_input_types, R->seed, &ar, &in, e, sizeof e) != PRT_OK ||
                case_attrs(R, c, NULL, &ar, &at, e, sizeof e) != PRT_OK) {
                row_init(&r, "run", c->name, "-", dev_name(dev));
                r.status = ST_FAIL;
                row_msg(&r, "%s", e);
                emit(R, &r);
                continue;
            }
            run_case(R, c, NULL, 0, &in, &at, dev, types_label(&in, &ar), &ar);
            continue;
        }
        for (j = 0; j < nb_cases; j++) {
            const prt_golden_case *k = &gc->cases[j];
            prt__inputs in;
            prt__attrset at;
            int rc;
            const char *check = "run", *why = "";
            if (case_inputs(R->v, k, c->input_types, c->nb_input_types, &ar, &in, e, sizeof e) != PRT_OK ||
                case_attrs(R, c, k, &ar, &at, e, sizeof e) != PRT_OK ||
                (config_constraints_broken(R, c, &in, &at, e, sizeof e) &&
                 (check = "constraint", why = " breaks the config's input_dim_constraints"))) {
                row_init(&r, check, c->name, "-", dev_name(dev));
                r.case_i = j;
                r.status = ST_FAIL;
                row_msg(&r, "golden case %d%s: %s", j, why, e);
                emit(R, &r);
                res->golden_ran = 1;
                res->golden_failed = 1;
                continue;
            }
            rc = run_case(R, c, k, j, &in, &at, dev, types_label(&in, &ar), &ar);
            res->golden_ran = 1;
            if (rc != 0) res->golden_failed = 1;
        }
    }
    prt__arena_free(&ar);
}

/* ---- version-level checks ----------------------------------------------------------- */

static void check_schema(runner *R)
{
    const prt_pcfg_version *v = R->v;
    const prt_plugin_creator *c = R->creator;
    char msg[MSG_CAP], notes[MSG_CAP];
    size_t n = 0, nn = 0;
    int i, bad = 0;
    row r;
    msg[0] = notes[0] = 0;
#define ADD(...) do { bad = 1; if (n < sizeof msg) n += (size_t)snprintf(msg + n, sizeof msg - n, __VA_ARGS__); } while (0)
#define NOTE(...) do { if (nn < sizeof notes) nn += (size_t)snprintf(notes + nn, sizeof notes - nn, __VA_ARGS__); } while (0)
    for (i = 0; i < v->nb_attributes; i++) {
        const char *name = v->attributes[i];
        const prt_field_schema *fs = prt__schema_find(c, name);
        const char *yt = prt__pcfg_pair_get(v->attribute_types, v->nb_attribute_types, name);
        const prt_pcfg_count *len = prt__pcfg_count_get(v->attribute_lengths, v->nb_attribute_lengths, name);
        prt_field_type t;
        int j, yreq = 0;
        for (j = 0; j < v->nb_attributes_required; j++)
            if (strcmp(v->attributes_required[j], name) == 0) yreq = 1;
        if (!fs) {
            ADD("%sattribute \"%s\" is not in the plugin's schema", bad ? "; " : "", name);
            continue;
        }
        if (yt) {
            if (!yaml_field_type(yt, &t))
                ADD("%sattribute \"%s\": YAML type \"%s\" is not a field type", bad ? "; " : "", name, yt);
            else if (!widens(t, fs->type))
                ADD("%sattribute \"%s\": YAML type %s does not reach the schema type %s (only widening is accepted)",
                    bad ? "; " : "", name, yt, prt_field_type_name(fs->type));
            else if (t != fs->type)
                NOTE("%s\"%s\" %s widens to %s", nn ? ", " : "", name, yt, prt_field_type_name(fs->type));
        }
        if (len) {
            if (len->value >= 0 && (len->value < fs->min_count ||
                                    (fs->max_count != PRT_COUNT_UNBOUNDED && len->value > fs->max_count)))
                ADD("%sattribute \"%s\": YAML length %lld, the schema allows %lld..%s", bad ? "; " : "", name,
                    (long long)len->value, (long long)fs->min_count,
                    fs->max_count == PRT_COUNT_UNBOUNDED ? "any" : "");
            if (len->value >= 0 && fs->max_count != PRT_COUNT_UNBOUNDED && len->value > fs->max_count && n < sizeof msg)
                n += (size_t)snprintf(msg + n, sizeof msg - n, "%lld", (long long)fs->max_count);
            if (len->value < 0 && fs->max_count != PRT_COUNT_UNBOUNDED)
                ADD("%sattribute \"%s\": YAML length is any (-1), the schema allows at most %lld", bad ? "; " : "",
                    name, (long long)fs->max_count);
        }
        if (fs->required && !yreq)
            ADD("%sattribute \"%s\" is required by the schema but not in attributes_required", bad ? "; " : "", name);
        if (!fs->required && yreq)
            NOTE("%s\"%s\" is required by the YAML, optional in the schema", nn ? ", " : "", name);
    }
    for (i = 0; i < c->nb_fields; i++) {
        const prt_field_schema *fs = prt__schema_at(c, i);
        int j, found = 0;
        for (j = 0; j < v->nb_attributes; j++)
            if (strcmp(v->attributes[j], fs->name) == 0) found = 1;
        if (found) continue;
        if (fs->required) ADD("%sthe schema's required field \"%s\" is not a YAML attribute", bad ? "; " : "", fs->name);
        else NOTE("%sthe schema's optional field \"%s\" is not a YAML attribute", nn ? ", " : "", fs->name);
    }
#undef ADD
#undef NOTE
    row_init(&r, "schema", NULL, NULL, NULL);
    r.status = bad ? ST_FAIL : ST_PASS;
    if (bad) row_msg(&r, "%s", msg);
    else if (notes[0]) row_msg(&r, "%s", notes);
    emit(R, &r);
}

/* A value just outside one bound of a YAML range, in the attribute's type;
 * 0 when there is none (an inclusive infinite bound, an integer that does
 * not fit). */
static int outside_value(prt_field_type t, const prt_pcfg_bound *b, int below, double *out)
{
    double v;
    int i;
    prt_pcfg_bound lo, hi;
    if (isnan(b->value)) return 0;
    if (isinf(b->value)) {
        if (b->inclusive || is_int_field(t)) return 0;
        *out = b->value;
        return 1;
    }
    if (is_int_field(t)) {
        if (below) v = b->inclusive ? ceil(b->value) - 1 : floor(b->value);
        else v = b->inclusive ? floor(b->value) + 1 : ceil(b->value);
        if ((t == PRT_FIELD_INT32 && (v < -2147483648.0 || v > 2147483647.0)) ||
            (t == PRT_FIELD_INT8 && (v < -128 || v > 127)) || (t == PRT_FIELD_INT16 && (v < -32768 || v > 32767)) ||
            (t == PRT_FIELD_BOOL && (v < 0 || v > 1)) || fabs(v) > 9e18)
            return 0;
        *out = v;
        return 1;
    }
    /* floats: the bound (exclusive) or the next value past it, in the type */
    if (t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT16) v = (double)(float)b->value;
    else v = b->value;
    lo = *b;
    hi = *b;
    for (i = 0; i < 4; i++) {
        int allowed = below ? prt__pcfg_bounds_allow(&lo, NULL, v) : prt__pcfg_bounds_allow(NULL, &hi, v);
        if (!allowed) {
            *out = v;
            return 1;
        }
        if (t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT16)
            v = nextafterf((float)v, below ? -INFINITY : INFINITY);
        else
            v = nextafter(v, below ? -INFINITY : INFINITY);
    }
    return 0;
}

static int try_refused(runner *R, const prt__attrset *base, const char *name, int64_t elem, double val,
                       char *plugin_msg, size_t cap)
{
    prt__arena ar = {0};
    prt__attrset m;
    prt_op *op = NULL;
    int refused = 1;
    int64_t j;
    char e[MSG_CAP];
    if (prt__attrset_copy(base, &ar, &m) == PRT_OK) {
        int i;
        for (i = 0; i < m.nb; i++) {
            if (strcmp(m.a[i].name, name) != 0 || m.a[i].is_text) continue;
            for (j = 0; j < m.a[i].count; j++)
                if (elem < 0 || j == elem) m.a[i].v[j] = val;
        }
        if (make_op(R, &m, &ar, &op, e, sizeof e) == PRT_OK) {
            refused = 0;
            prt_op_destroy(op);
        } else {
            snprintf(plugin_msg, cap, "%s", e);
        }
    }
    prt__arena_free(&ar);
    return refused;
}

static void check_ranges(runner *R, const prt__attrset *base)
{
    int i;
    for (i = 0; i < R->v->nb_options; i++) {
        const prt_pcfg_option *o = &R->v->options[i];
        const prt__attrval *a = prt__attrset_get(base, o->name);
        prt_field_type t = attr_type(R, o->name);
        char acc[MSG_CAP], pm[MSG_CAP], last[MSG_CAP];
        size_t n = 0;
        int probes = 0, accepted = 0;
        int64_t e;
        row r;
        row_init(&r, "range", NULL, NULL, "cpu");
        r.what = o->name;
        acc[0] = last[0] = 0;
        if (o->kind != PRT_PCFG_OPTION_RANGE && o->kind != PRT_PCFG_OPTION_ENUM) continue;
        if (!a || a->is_text || a->count < 1) {
            r.status = ST_SKIP;
            row_msg(&r, "no value of \"%s\" in the golden data or the configs to start from", o->name);
            emit(R, &r);
            continue;
        }
        if (!prt__schema_find(R->creator, o->name)) {
            r.status = ST_SKIP;
            row_msg(&r, "\"%s\" is not in the plugin's schema", o->name);
            emit(R, &r);
            continue;
        }
        if (o->kind == PRT_PCFG_OPTION_RANGE) {
            for (e = 0; e < a->count; e++) {
                int side;
                for (side = 0; side < 2; side++) {
                    int nb = side ? o->range.nb_max : o->range.nb_min;
                    const prt_pcfg_bound *bs = side ? o->range.max : o->range.min;
                    const prt_pcfg_bound *b;
                    double val;
                    if (nb == 0) continue;
                    b = nb == a->count ? &bs[e] : nb == 1 ? &bs[0] : NULL;
                    if (!b || !outside_value(t, b, !side, &val)) continue;
                    probes++;
                    if (try_refused(R, base, o->name, e, val, pm, sizeof pm)) {
                        snprintf(last, sizeof last, "%s[%lld] = %.9g: %.1200s", o->name, (long long)e, val, pm);
                    } else {
                        accepted++;
                        if (n < sizeof acc)
                            n += (size_t)snprintf(acc + n, sizeof acc - n, "%s%s[%lld] = %.9g (%s \"%s\")",
                                                  accepted > 1 ? ", " : "", o->name, (long long)e, val,
                                                  side ? "above max" : "below min",
                                                  side ? o->range.max_text : o->range.min_text);
                    }
                }
            }
        } else {
            double lo = INFINITY, hi = -INFINITY;
            int k, numeric = 1;
            for (k = 0; k < o->nb_values; k++) {
                if (!o->values[k].is_number) numeric = 0;
                else {
                    if (o->values[k].num < lo) lo = o->values[k].num;
                    if (o->values[k].num > hi) hi = o->values[k].num;
                }
            }
            if (numeric && o->nb_values > 0) {
                double cand[2];
                int side;
                cand[0] = is_int_field(t) ? lo - 1 : nextafter(lo, -INFINITY);
                cand[1] = is_int_field(t) ? hi + 1 : nextafter(hi, INFINITY);
                for (side = 0; side < 2; side++) {
                    if (t == PRT_FIELD_BOOL && (cand[side] < 0 || cand[side] > 1)) continue;
                    probes++;
                    if (try_refused(R, base, o->name, -1, cand[side], pm, sizeof pm)) {
                        snprintf(last, sizeof last, "%s = %.9g: %.1200s", o->name, cand[side], pm);
                    } else {
                        accepted++;
                        if (n < sizeof acc)
                            n += (size_t)snprintf(acc + n, sizeof acc - n, "%s%s = %.9g (not one of the allowed values)",
                                                  accepted > 1 ? ", " : "", o->name, cand[side]);
                    }
                }
            }
        }
        if (probes == 0) continue; /* every bound is open (=pinf / =ninf): nothing lies outside */
        r.status = accepted ? ST_FAIL : ST_PASS;
        if (accepted)
            row_msg(&r, "create accepted %d of %d values just outside the YAML range: %s", accepted, probes, acc);
        else
            row_msg(&r, "%d value%s just outside refused; e.g. %s", probes, probes == 1 ? "" : "s", last);
        emit(R, &r);
    }
}

static int nb_broken(const prt_pcfg_version *v, const symtab *t, int *which_broken, int only)
{
    int i, n = 0;
    for (i = 0; i < v->nb_input_dim_constraints; i++) {
        int holds = 1;
        if (prt__dimexpr_check(v->input_dim_constraints[i], t->s, t->nb, &holds, NULL, 0) != PRT_OK) continue;
        if (!holds) {
            n++;
            if (i == only && which_broken) *which_broken = 1;
        }
    }
    return n;
}

/* A CPU configuration with one thread (the refusal checks). */
static prt_op_config cpu_config(void)
{
    prt_op_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = PRT_DEVICE_CPU;
    cfg.nb_threads = 1;
    return cfg;
}

/* Configure with `d` (CPU); 1 when refused, with the message in msg. */
static int configure_refused(runner *R, const prt__attrset *attrs, const prt_tensor_desc *d, int nb,
                             char *msg, size_t cap)
{
    prt__arena ar = {0};
    prt_op *op = NULL;
    prt_op_config cfg = cpu_config();
    int refused = -1;
    char e[MSG_CAP];
    if (make_op(R, attrs, &ar, &op, e, sizeof e) != PRT_OK) {
        snprintf(msg, cap, "create with the golden attributes failed: %.1000s", e);
    } else if (prt_op_configure(op, d, nb, &cfg) == PRT_OK) {
        refused = 0;
    } else {
        refused = 1;
        snprintf(msg, cap, "%s", prt_op_last_error(op));
    }
    prt_op_destroy(op);
    prt__arena_free(&ar);
    return refused;
}

/* Input extents just outside a finite input_dim_range bound (and >= 1)
 * must be refused at configure. */
static void check_dim_ranges(runner *R, const prt__inputs *base, const prt__attrset *attrs)
{
    int i, k, side;
    for (i = 0; i < base->nb; i++) {
        const prt_pcfg_range *rg = prt__pcfg_range_get(R->v->input_dim_ranges, R->v->nb_input_dim_ranges,
                                                       base->names[i]);
        char acc[MSG_CAP], last[MSG_CAP];
        size_t n = 0;
        int probes = 0, accepted = 0;
        row r;
        if (!rg) continue;
        acc[0] = last[0] = 0;
        for (k = 0; k < base->desc[i].dims.nb; k++) {
            for (side = 0; side < 2; side++) {
                const prt_pcfg_bound *b = side ? (k < rg->nb_max ? &rg->max[k] : NULL) : (k < rg->nb_min ? &rg->min[k] : NULL);
                double v;
                prt_tensor_desc d[64];
                char msg[MSG_CAP], ds[128];
                int rc;
                if (!b || !outside_value(PRT_FIELD_INT64, b, !side, &v) || v < 1 || base->nb > 64) continue;
                memcpy(d, base->desc, sizeof(prt_tensor_desc) * (size_t)base->nb);
                d[i].dims.d[k] = (int64_t)v;
                rc = configure_refused(R, attrs, d, base->nb, msg, sizeof msg);
                if (rc < 0) continue;
                probes++;
                prt_dims_str(&d[i].dims, ds, sizeof ds);
                if (rc) {
                    snprintf(last, sizeof last, "%s %s: %.1200s", base->names[i], ds, msg);
                } else {
                    accepted++;
                    if (n < sizeof acc)
                        n += (size_t)snprintf(acc + n, sizeof acc - n, "%s%s %s (dim %d %s \"%s\")", accepted > 1 ? ", " : "",
                                              base->names[i], ds, k, side ? "above max" : "below min",
                                              side ? rg->max_text : rg->min_text);
                }
            }
        }
        if (!probes) continue;
        row_init(&r, "dim-range", NULL, NULL, "cpu");
        r.what = base->names[i];
        r.status = accepted ? ST_FAIL : ST_PASS;
        if (accepted) row_msg(&r, "configure accepted %d of %d shapes just outside input_dim_range: %s", accepted, probes, acc);
        else row_msg(&r, "%d shape%s just outside refused; e.g. %s", probes, probes == 1 ? "" : "s", last);
        emit(R, &r);
    }
}

static void check_constraints(runner *R, const prt__inputs *base, const prt__attrset *attrs)
{
    int ci;
    prt_pcfg_version ranges_only = *R->v;
    ranges_only.nb_input_dim_constraints = 0;
    for (ci = 0; ci < R->v->nb_input_dim_constraints; ci++) {
        const char *c = R->v->input_dim_constraints[ci];
        symtab t;
        int holds = 0, i, k, dd, best_i = -1, best_k = -1, best_delta = 0, best_n = 1 << 30;
        char e[MSG_CAP];
        prt_status s;
        row r;
        row_init(&r, "constraint", NULL, NULL, "cpu");
        r.what = c;
        syms_build(&t, base, attrs);
        s = prt__dimexpr_check(c, t.s, t.nb, &holds, e, sizeof e);
        if (s == PRT_STATUS_NOT_FOUND) {
            r.status = ST_SKIP;
            row_msg(&r, "not checked: %s (an optional input left out?)", e);
            emit(R, &r);
            continue;
        }
        if (s != PRT_OK || !holds) {
            r.status = ST_FAIL;
            row_msg(&r, s != PRT_OK ? "%s" : "the golden inputs themselves break it%s", s != PRT_OK ? e : "");
            emit(R, &r);
            continue;
        }
        for (i = 0; i < base->nb; i++) {
            for (k = 0; k < base->desc[i].dims.nb; k++) {
                for (dd = 0; dd < 2; dd++) {
                    int delta = dd ? -1 : 1, broken = 0, n;
                    int64_t old = t.vals[i][k];
                    if (old + delta < 1) continue;
                    t.vals[i][k] = old + delta;
                    n = nb_broken(R->v, &t, &broken, ci);
                    if (broken && prt__pcfg_check_inputs(&ranges_only, t.s, t.nb, NULL, NULL, 0) == PRT_OK &&
                        n < best_n) {
                        best_n = n;
                        best_i = i;
                        best_k = k;
                        best_delta = delta;
                    }
                    t.vals[i][k] = old;
                }
            }
        }
        if (best_i < 0) {
            r.status = ST_SKIP;
            row_msg(&r, "no change of one input extent by 1 breaks it within the input_dim_range");
            emit(R, &r);
            continue;
        }
        {
            prt__arena ar = {0};
            prt_tensor_desc *d = prt__arena_alloc(&ar, sizeof(prt_tensor_desc) * (size_t)(base->nb + 1));
            prt_op *op = NULL;
            prt_op_config cfg = cpu_config();
            char ds[128];
            if (!d) {
                prt__arena_free(&ar);
                continue;
            }
            memcpy(d, base->desc, sizeof(prt_tensor_desc) * (size_t)base->nb);
            d[best_i].dims.d[best_k] += best_delta;
            if (make_op(R, attrs, &ar, &op, e, sizeof e) != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "create with the golden attributes failed: %s", e);
            } else if (prt_op_configure(op, d, base->nb, &cfg) == PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "input \"%s\" dims %s break \"%s\", but configure accepted them", base->names[best_i],
                        prt_dims_str(&d[best_i].dims, ds, sizeof ds), c);
            } else {
                r.status = ST_PASS;
                row_msg(&r, "input \"%s\" dims %s refused: %s", base->names[best_i],
                        prt_dims_str(&d[best_i].dims, ds, sizeof ds), prt_op_last_error(op));
            }
            prt_op_destroy(op);
            prt__arena_free(&ar);
        }
        emit(R, &r);
    }
}

/* Combinations of supported_input_types that no selected config covers. */
static int combo_covered(const prt_pcfg_version *v, const prt_pcfg_combo *cb)
{
    int i, j;
    for (i = 0; i < v->nb_configs; i++) {
        const prt_pcfg_config *c = &v->configs[i];
        int same = c->nb_input_types > 0;
        for (j = 0; j < cb->nb_types && same; j++) {
            const char *t = prt__pcfg_pair_get(c->input_types, c->nb_input_types, cb->types[j].key);
            prt_dtype a, b;
            if (!t || prt__pcfg_dtype(t, &a) != PRT_OK || prt__pcfg_dtype(cb->types[j].value, &b) != PRT_OK || a != b)
                same = 0;
        }
        if (same) return 1;
    }
    return 0;
}

static void check_combos(runner *R, const prt_pcfg_config *bc, const prt_golden_case *base, const prt__attrset *attrs)
{
    int ci, d, warned = 0;
    for (ci = 0; ci < R->v->nb_combos; ci++) {
        const prt_pcfg_combo *cb = &R->v->combos[ci];
        prt__arena ar = {0};
        prt__inputs bin, in, refin;
        char e[MSG_CAP];
        row r;
        if (combo_covered(R->v, cb)) continue;
        if (case_inputs(R->v, base, bc ? bc->input_types : NULL, bc ? bc->nb_input_types : 0, &ar, &bin, e,
                        sizeof e) != PRT_OK ||
            synth_inputs(&bin, cb->types, cb->nb_types, R->seed + (uint64_t)ci, &ar, &in, e, sizeof e) != PRT_OK ||
            retype_inputs(&in, &bin, &ar, &refin) != PRT_OK) {
            row_init(&r, "types", cb->name, "-", "-");
            r.status = ST_FAIL;
            row_msg(&r, "%s", e);
            emit(R, &r);
            prt__arena_free(&ar);
            continue;
        }
        for (d = 0; d < 2; d++) {
            prt_device dev = d ? PRT_DEVICE_CUDA : PRT_DEVICE_CPU;
            const char *types = types_label(&in, &ar);
            prt_op *op = NULL, *rop = NULL;
            prt__run_out o1, o2;
            int i;
            if ((d == 0 && !R->o->cpu) || (d == 1 && !R->o->cuda)) continue;
            if (!device_usable(R, dev, cb->name, types, &warned)) continue;
            row_init(&r, "types", cb->name, types, dev_name(dev));
            if (make_op(R, attrs, &ar, &op, e, sizeof e) != PRT_OK ||
                prt__plugrun_run(op, dev, R->o->nb_threads, &in, &ar, &o1, NULL, e, sizeof e) != PRT_OK) {
                r.status = ST_FAIL;
                row_msg(&r, "combination \"%s\" (synthesized inputs of the golden shapes): %s", cb->name, e);
                emit(R, &r);
                prt_op_destroy(op);
                continue;
            }
            if (make_op(R, attrs, &ar, &rop, e, sizeof e) != PRT_OK ||
                prt__plugrun_run(rop, dev, R->o->nb_threads, &refin, &ar, &o2, NULL, e, sizeof e) != PRT_OK) {
                r.status = ST_PASS;
                row_msg(&r, "ran; the same values in the types of %s could not be run to compare: %s",
                        bc ? bc->name : "the golden case", e);
                emit(R, &r);
                prt_op_destroy(op);
                prt_op_destroy(rop);
                continue;
            }
            for (i = 0; i < o1.nb && i < o2.nb; i++) {
                prt_npy_array g;
                prt_npy_type nt;
                double atol, rtol;
                row_init(&r, "types", cb->name, types, dev_name(dev));
                r.what = i < R->v->nb_outputs ? R->v->outputs[i] : "?";
                memset(&g, 0, sizeof g);
                if (prt_npy_type_from_dtype(o2.desc[i].dtype, &nt) != PRT_OK) nt = PRT_NPY_F4;
                g.type = nt;
                g.shape = o2.desc[i].dims;
                g.count = prt_dims_volume(&o2.desc[i].dims);
                g.nbytes = (size_t)g.count * prt_npy_type_size(nt);
                g.data = o2.data[i];
                tolerance(R->v, o1.desc[i].dtype, &atol, &rtol);
                compare_golden(&r, r.what, &o1.desc[i], o1.data[i], &g, atol, rtol, attrs);
                if (r.status == ST_FAIL) {
                    char m[MSG_CAP];
                    snprintf(m, sizeof m, "against the run in the types of %s on the same values: %.1400s",
                             bc ? bc->name : "the golden case", r.msg);
                    snprintf(r.msg, sizeof r.msg, "%s", m);
                }
                emit(R, &r);
            }
            prt_op_destroy(op);
            prt_op_destroy(rop);
        }
        prt__arena_free(&ar);
    }
}

/* ---- diagnosis across configs --------------------------------------------------------- */

static int attr_equal(const prt__attrval *a, const prt__attrval *b)
{
    int64_t j;
    if (!a || !b) return a == b;
    if (a->is_text != b->is_text || a->count != b->count) return 0;
    if (a->is_text) return strcmp(a->text, b->text) == 0;
    for (j = 0; j < a->count; j++)
        if (a->v[j] != b->v[j]) return 0;
    return 1;
}

static void diagnose(runner *R, cfg_result *res, int nb, const char *dev)
{
    int i, j, k;
    for (i = 0; i < nb; i++) {
        if (!res[i].golden_ran || !res[i].golden_failed || !res[i].have_attrs) continue;
        for (j = 0; j < nb; j++) {
            const char *diff = NULL;
            int ndiff = 0;
            if (!res[j].golden_ran || res[j].golden_failed || !res[j].have_attrs) continue;
            for (k = 0; k < res[i].attrs.nb; k++)
                if (!attr_equal(&res[i].attrs.a[k], prt__attrset_get(&res[j].attrs, res[i].attrs.a[k].name))) {
                    ndiff++;
                    diff = res[i].attrs.a[k].name;
                }
            for (k = 0; k < res[j].attrs.nb; k++)
                if (!prt__attrset_get(&res[i].attrs, res[j].attrs.a[k].name)) {
                    ndiff++;
                    diff = res[j].attrs.a[k].name;
                }
            if (ndiff == 1) {
                char a[256], b[256];
                prt__attrset s1 = {1, NULL}, s2 = {1, NULL};
                s1.a = (prt__attrval *)prt__attrset_get(&res[i].attrs, diff);
                s2.a = (prt__attrval *)prt__attrset_get(&res[j].attrs, diff);
                if (s1.a) prt__attrset_str(&s1, a, sizeof a);
                else snprintf(a, sizeof a, "absent");
                if (s2.a) prt__attrset_str(&s2, b, sizeof b);
                else snprintf(b, sizeof b, "absent");
                note(R, "%s: config \"%s\" fails and config \"%s\" passes, and their attributes differ only in "
                        "\"%s\" (%s vs %s): the plugin may ignore or mishandle attribute \"%s\"",
                     dev, res[i].name, res[j].name, diff, a, b, diff);
                break;
            }
        }
    }
}

/* ---- a version --------------------------------------------------------------------------- */

static int config_selected(const prt_harness_test_opts *o, const char *name)
{
    int i;
    if (o->nb_configs == 0) return 1;
    for (i = 0; i < o->nb_configs; i++)
        if (strcmp(o->configs[i], name) == 0) return 1;
    return 0;
}

/* `base` plus, for every attribute it lacks, the first value another
 * config (its golden case 0, else its YAML values) gives, else the
 * schema's default: where the range probes start from. */
static prt_status union_attrs(runner *R, const prt__attrset *base, prt__arena *ar, prt__attrset *out, char *err,
                              size_t cap)
{
    int i, j, cap_n = base->nb;
    prt__attrset *all = prt__arena_alloc(ar, sizeof(prt__attrset) * (size_t)(R->v->nb_configs + 1));
    if (!all) return PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < R->v->nb_configs; i++) {
        const prt_pcfg_config *c = &R->v->configs[i];
        const prt_golden_config *gc = R->golden ? prt__golden_find_config(R->golden, c->name) : NULL;
        prt_status s = case_attrs(R, c, gc && gc->nb_cases ? &gc->cases[0] : NULL, ar, &all[i], err, cap);
        if (s != PRT_OK) return s;
        cap_n += all[i].nb;
    }
    cap_n += R->creator->nb_fields;
    out->nb = 0;
    out->a = prt__arena_alloc(ar, sizeof(prt__attrval) * (size_t)(cap_n + 1));
    if (!out->a) return PRT_STATUS_OUT_OF_MEMORY;
    for (j = 0; j < base->nb; j++) out->a[out->nb++] = base->a[j];
    for (i = 0; i < R->v->nb_configs; i++)
        for (j = 0; j < all[i].nb; j++)
            if (!prt__attrset_get(out, all[i].a[j].name)) out->a[out->nb++] = all[i].a[j];
    /* then the schema's defaults of numeric fields */
    for (i = 0; i < R->creator->nb_fields; i++) {
        const prt_field_schema *fs = prt__schema_at(R->creator, i);
        prt_field f;
        prt__attrval *a;
        int64_t k;
        if (!fs->default_data || fs->default_count < 1 || prt__attrset_get(out, fs->name) ||
            fs->type == PRT_FIELD_CHAR || fs->type == PRT_FIELD_DIMS || fs->type == PRT_FIELD_BYTES)
            continue;
        memset(&f, 0, sizeof f);
        f.name = fs->name;
        f.data = fs->default_data;
        f.type = fs->type;
        f.count = fs->default_count;
        a = &out->a[out->nb];
        memset(a, 0, sizeof *a);
        a->name = fs->name;
        a->count = f.count;
        a->v = prt__arena_alloc(ar, sizeof(double) * (size_t)f.count);
        if (!a->v) return PRT_STATUS_OUT_OF_MEMORY;
        for (k = 0; k < f.count; k++)
            if (prt_field_get_f64(&f, k, &a->v[k]) != 0) a->v[k] = 0;
        out->nb++;
    }
    return PRT_OK;
}

/* The creator a version tests: in the namespace --namespace or the YAML's
 * "namespace" names; without either, in the default namespace, else in the
 * one namespace that has (name, version). Several: an error listing them. */
static prt_status find_creator(runner *R, const prt_pcfg_version *v, const prt_plugin_creator **out, char *err,
                               size_t cap)
{
    const char *ns = R->o->plugin_namespace ? R->o->plugin_namespace : R->cfg->plugin_namespace;
    prt_creator_info *all = NULL;
    int32_t nb = 0, i, hits = 0;
    size_t n = 0;
    if (ns || prt_registry_find(R->reg, R->cfg->name, v->version, "", out, NULL) == PRT_OK) {
        if (!ns) return PRT_OK;
        if (prt_registry_find(R->reg, R->cfg->name, v->version, ns, out, NULL) == PRT_OK) return PRT_OK;
        snprintf(err, cap, "%s", prt_registry_last_error(R->reg));
        return PRT_STATUS_NOT_FOUND;
    }
    snprintf(err, cap, "%s", prt_registry_last_error(R->reg));
    if (prt_registry_list(R->reg, NULL, 0, &nb) != PRT_OK || nb == 0 ||
        !(all = calloc((size_t)nb, sizeof *all)) || prt_registry_list(R->reg, all, nb, &nb) != PRT_OK) {
        free(all);
        return PRT_STATUS_NOT_FOUND;
    }
    for (i = 0; i < nb; i++) {
        const prt_plugin_creator *c = all[i].creator;
        if (all[i].shadowed || strcmp(c->name, R->cfg->name) != 0 || strcmp(c->version, v->version) != 0) continue;
        if (hits++ == 0) *out = c;
    }
    if (hits > 1) {
        n = (size_t)snprintf(err, cap, "%s v%s is registered in %d namespaces (", R->cfg->name, v->version, (int)hits);
        for (i = 0; i < nb && n < cap; i++) {
            const prt_plugin_creator *c = all[i].creator;
            if (all[i].shadowed || strcmp(c->name, R->cfg->name) != 0 || strcmp(c->version, v->version) != 0) continue;
            n += (size_t)snprintf(err + n, cap - n, "\"%s\" ", c->plugin_namespace ? c->plugin_namespace : "");
        }
        if (n < cap) snprintf(err + n, cap - n, "); say which with --namespace or a top-level \"namespace\" key");
    }
    free(all);
    return hits == 1 ? PRT_OK : PRT_STATUS_NOT_FOUND;
}

static void run_version(runner *R, const prt_pcfg_version *v)
{
    const prt_plugin_creator *c = NULL;
    prt_golden *g = NULL;
    char path[4096], e[MSG_CAP];
    const char *gp = R->o->golden_path ? R->o->golden_path : v->golden_io_path;
    cfg_result *res = NULL;
    prt__arena ar = {0};
    int i, nb_sel = 0;
    row r;

    R->v = v;
    R->creator = NULL;
    R->golden = NULL;
    if (!R->o->json)
        fprintf(R->out, "\n%s version %s%s%s\n", R->cfg->name, v->version, v->interface ? " - " : "",
                v->interface ? v->interface : "");
    row_init(&r, "plugin", NULL, NULL, NULL);
    if (find_creator(R, v, &c, e, sizeof e) != PRT_OK) {
        r.status = ST_FAIL;
        row_msg(&r, "%s", e);
        emit(R, &r);
        return;
    }
    R->creator = c;
    r.status = ST_PASS;
    row_msg(&r, "%s%s%s v%s, %s style", c->plugin_namespace ? c->plugin_namespace : "",
            c->plugin_namespace && c->plugin_namespace[0] ? "::" : "", c->name, c->version,
            c->style == PRT_STYLE_BLOB ? "blob" : "field");
    emit(R, &r);

    /* golden file */
    row_init(&r, "golden-io", NULL, NULL, NULL);
    if (!gp) {
        r.status = ST_SKIP;
        row_msg(&r, "the YAML names no golden_io_path and none was given");
        emit(R, &r);
    } else {
        int found = R->o->golden_path ? 1 : prt__pcfg_resolve_path(R->cfg, gp, path, sizeof path);
        if (R->o->golden_path) snprintf(path, sizeof path, "%s", gp);
        if (!found) {
            r.status = ST_FAIL;
            row_msg(&r, "golden file \"%s\" not found (tried next to %s and as given)", gp, R->cfg->path);
            emit(R, &r);
        } else if (prt__golden_load_file(path, &g) != PRT_OK) {
            r.status = ST_FAIL;
            row_msg(&r, "%s", prt_last_error(&g));
            emit(R, &r);
        } else {
            r.status = ST_PASS;
            r.what = "file";
            row_msg(&r, "%s: %d config%s", path, g->nb_configs, g->nb_configs == 1 ? "" : "s");
            emit(R, &r);
            for (i = 0; i < g->nb_warnings; i++) note(R, "golden file: %s", g->warnings[i]);
        }
    }
    R->golden = g;
    /* Golden configs that no version of the YAML declares (one golden file
     * may serve several versions) are reported, not skipped. */
    for (i = 0; g && i < g->nb_configs; i++) {
        int k, m, known = 0;
        for (m = 0; m < R->cfg->nb_versions && !known; m++)
            for (k = 0; k < R->cfg->versions[m].nb_configs && !known; k++)
                known = strcmp(R->cfg->versions[m].configs[k].name, g->configs[i].name) == 0;
        if (known || !config_selected(R->o, g->configs[i].name)) continue;
        row_init(&r, "golden-io", g->configs[i].name, NULL, NULL);
        r.status = ST_FAIL;
        row_msg(&r, "the golden file has config \"%s\" (%d case%s), which no version of the YAML declares under "
                "configs: its cases were not run", g->configs[i].name, g->configs[i].nb_cases,
                g->configs[i].nb_cases == 1 ? "" : "s");
        emit(R, &r);
    }

    check_schema(R);

    res = prt__arena_alloc(&ar, sizeof(cfg_result) * 2 * (size_t)(v->nb_configs + 1));
    if (!res) goto done;
    for (i = 0; i < v->nb_configs; i++) {
        if (!config_selected(R->o, v->configs[i].name)) continue;
        run_config(R, &v->configs[i], &res[2 * nb_sel], &res[2 * nb_sel + 1]);
        nb_sel++;
    }
    /* The attributes each config ran with (case 0), for the diagnosis. */
    {
        int k = 0;
        for (i = 0; i < v->nb_configs; i++) {
            const prt_pcfg_config *c2 = &v->configs[i];
            const prt_golden_config *gc;
            prt__attrset at;
            if (!config_selected(R->o, c2->name)) continue;
            gc = g ? prt__golden_find_config(g, c2->name) : NULL;
            if (case_attrs(R, c2, gc && gc->nb_cases ? &gc->cases[0] : NULL, &ar, &at, e, sizeof e) == PRT_OK) {
                res[2 * k].attrs = res[2 * k + 1].attrs = at;
                res[2 * k].have_attrs = res[2 * k + 1].have_attrs = 1;
            }
            k++;
        }
    }
    for (i = 0; i < 2; i++) {
        cfg_result *one = prt__arena_alloc(&ar, sizeof(cfg_result) * (size_t)(nb_sel + 1));
        int k;
        if (!one) break;
        for (k = 0; k < nb_sel; k++) one[k] = res[2 * k + i];
        diagnose(R, one, nb_sel, i ? "cuda" : "cpu");
    }

    /* version-level checks from the first golden case (or the first config) */
    {
        const prt_pcfg_config *bc = NULL;
        const prt_golden_case *base = first_case(R, &bc);
        prt__attrset at, at_all;
        prt__inputs bin;
        const prt_pcfg_config *ac = bc ? bc : (v->nb_configs ? &v->configs[0] : NULL);
        if (case_attrs(R, ac, base, &ar, &at, e, sizeof e) != PRT_OK ||
            union_attrs(R, &at, &ar, &at_all, e, sizeof e) != PRT_OK) {
            row_init(&r, "range", NULL, NULL, NULL);
            r.status = ST_FAIL;
            row_msg(&r, "%s", e);
            emit(R, &r);
        } else {
            check_ranges(R, &at_all);
            if (!base) {
                if (v->nb_input_dim_constraints || v->nb_combos) {
                    row_init(&r, "constraint", NULL, NULL, NULL);
                    r.status = ST_SKIP;
                    row_msg(&r, "no golden case to take input shapes from (constraints and type combinations not run)");
                    emit(R, &r);
                }
            } else if (case_inputs(v, base, bc ? bc->input_types : NULL, bc ? bc->nb_input_types : 0, &ar, &bin, e,
                                   sizeof e) == PRT_OK) {
                check_constraints(R, &bin, &at);
                check_dim_ranges(R, &bin, &at);
                if (R->o->nb_configs == 0) check_combos(R, bc, base, &at);
            }
        }
    }
done:
    prt__arena_free(&ar);
    prt__golden_destroy(g);
    R->golden = NULL;
}

static prt_status runner_run(const prt_harness_test_opts *o, prt_harness_summary *sum, char *err, size_t cap)
{
    runner R;
    prt_pcfg *cfg = NULL;
    cJSON *root = NULL;
    prt_status s;
    int i, any = 0;

    memset(sum, 0, sizeof *sum);
    memset(&R, 0, sizeof R);
    if (!o || !o->yaml_path) {
        snprintf(err, cap, "no PluginConfig YAML given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    s = prt__pcfg_load_file(o->yaml_path, &cfg);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s", prt_last_error(&cfg));
        return s;
    }
    if (o->version && !prt__pcfg_find_version(cfg, o->version)) {
        snprintf(err, cap, "%s declares no version \"%s\" of %s", o->yaml_path, o->version, cfg->name);
        prt__pcfg_destroy(cfg);
        return PRT_STATUS_NOT_FOUND;
    }
    for (i = 0; i < o->nb_configs; i++) {
        int v, k, found = 0;
        for (v = 0; v < cfg->nb_versions; v++) {
            if (o->version && strcmp(cfg->versions[v].version, o->version) != 0) continue;
            for (k = 0; k < cfg->versions[v].nb_configs; k++)
                if (strcmp(cfg->versions[v].configs[k].name, o->configs[i]) == 0) found = 1;
        }
        if (!found) {
            snprintf(err, cap, "%s has no config \"%s\"%s%s", o->yaml_path, o->configs[i],
                     o->version ? " in version " : "", o->version ? o->version : "");
            prt__pcfg_destroy(cfg);
            return PRT_STATUS_NOT_FOUND;
        }
    }
    R.o = o;
    R.sum = sum;
    R.out = o->out ? o->out : stdout;
    R.reg = o->registry ? o->registry : prt_registry_global();
    R.cfg = cfg;
    R.seed = 0x5eed0c0full;
    if (o->json) {
        root = cJSON_CreateObject();
        R.jchecks = cJSON_CreateArray();
        R.jnotes = cJSON_CreateArray();
        if (!root || !R.jchecks || !R.jnotes) {
            cJSON_Delete(root);
            cJSON_Delete(R.jchecks);
            cJSON_Delete(R.jnotes);
            prt__pcfg_destroy(cfg);
            snprintf(err, cap, "out of memory");
            return PRT_STATUS_OUT_OF_MEMORY;
        }
    } else {
        fprintf(R.out, "plugin %s (%s)\n", cfg->name, o->yaml_path);
        fprintf(R.out, "  %-10s %-18s %-9s %-5s %-4s %-18s %-10s %-10s %-9s %-9s %s\n", "check", "config", "types",
                "device", "case", "output/what", "max_abs", "max_rel", "atol", "rtol", "result");
    }
    for (i = 0; i < cfg->nb_warnings; i++) note(&R, "YAML: %s", cfg->warnings[i]);
    for (i = 0; i < cfg->nb_versions; i++) {
        if (o->version && strcmp(cfg->versions[i].version, o->version) != 0) continue;
        run_version(&R, &cfg->versions[i]);
        any = 1;
    }
    if (!any) note(&R, "the YAML declares no version");
    if (o->json) {
        char *text;
        cJSON_AddStringToObject(root, "plugin", cfg->name);
        cJSON_AddStringToObject(root, "yaml", o->yaml_path);
        cJSON_AddItemToObject(root, "checks", R.jchecks);
        cJSON_AddItemToObject(root, "notes", R.jnotes);
        cJSON_AddNumberToObject(root, "passed", sum->passed);
        cJSON_AddNumberToObject(root, "failed", sum->failed);
        cJSON_AddNumberToObject(root, "skipped", sum->skipped);
        cJSON_AddBoolToObject(root, "ok", sum->failed == 0 && !R.json_failed);
        text = cJSON_Print(root);
        if (text) {
            fprintf(R.out, "%s\n", text);
            cJSON_free(text);
        } else {
            R.json_failed = 1;
        }
        cJSON_Delete(root);
        if (R.json_failed) {
            sum->failed++;
            snprintf(err, cap, "out of memory writing the JSON report");
        }
    } else {
        fprintf(R.out, "\n%s: %d passed, %d failed, %d skipped\n", cfg->name, sum->passed, sum->failed, sum->skipped);
    }
    prt__pcfg_destroy(cfg);
    return PRT_OK;
}

void prt_harness_test_opts_init(prt_harness_test_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->abi_version = PRT_ABI_VERSION;
    o->cpu = 1;
    o->cuda = 1;
    o->out = stdout;
}

prt_status prt_harness_test_plugin(const prt_harness_test_opts *o, prt_harness_summary *sum, char *err, size_t cap)
{
    prt_harness_test_opts r;
    char none[1];
    if (!err) {
        err = none;
        cap = sizeof none;
    }
    if (!o || !sum) {
        snprintf(err, cap, "prt_harness_test_plugin needs options and a summary");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt_harness_test_opts_init(&r);
    if (prt__config_read(&r, sizeof r, o, offsetof(prt_harness_test_opts, yaml_path) + sizeof r.yaml_path) != 0) {
        snprintf(err, cap, "prt_harness_test_opts.struct_size is %u; at least %zu expected (fill it with "
                 "prt_harness_test_opts_init)", (unsigned)o->struct_size,
                 offsetof(prt_harness_test_opts, yaml_path) + sizeof r.yaml_path);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return runner_run(&r, sum, err, cap);
}
