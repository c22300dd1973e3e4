/* onnx/import.c - an ONNX model as a prt network: graph inputs, constants
 * (initializers, Constant nodes, nodes folded at import), plugin layers and
 * outputs (docs/onnx.md). */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "onnx/onnx_impl.h"
#include "plugrt/op.h"

/* engine/op.c */
int prt__op_output_data_dependent(const prt_op *op, int32_t index);
prt_status prt__op_output_types(prt_op *op, const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out);

enum { T_INPUT, T_CONST, T_LAYER, T_MISSING };

typedef struct itensor {
    char *name;
    int kind;
    int has_dtype;
    prt_dtype dtype;
    prt_dims dims;        /* -1 where unknown at import */
    int dims_known;       /* rank known */
    prt__onnx_value val;  /* T_CONST */
    int bound;            /* a graph input made a constant by a value of the config */
    int in_net;           /* added to the network (inputs, layer outputs, used constants) */
} itensor;

typedef struct importer {
    const prt_onnx_model *m;
    prt_registry *r;
    prt_onnx_import_config cfg;
    prt_network *net;
    itensor *t;
    int32_t nb_t, cap_t;
    const char **keys; /* hash of tensor names -> index */
    int32_t *vals;
    size_t hcap;
    int need_shapes;   /* the model has Shape nodes: track static extents */
    int nb_failed;
    char *err;
    size_t cap;
    /* per-node scratch */
    void **scratch;
    int32_t nb_scratch, cap_scratch;
} importer;

#define fail prt__onnx_fail

void prt_onnx_import_config_init(prt_onnx_import_config *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = sizeof *cfg;
    cfg->abi_version = PRT_ABI_VERSION;
}

/* ---- tensor table --------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

static int32_t find(const importer *im, const char *name)
{
    size_t i;
    if (!im->hcap) return -1;
    i = (size_t)hash_str(name) & (im->hcap - 1);
    while (im->keys[i]) {
        if (strcmp(im->keys[i], name) == 0) return im->vals[i];
        i = (i + 1) & (im->hcap - 1);
    }
    return -1;
}

static int rehash(importer *im, size_t ncap)
{
    const char **k = prt__calloc(ncap, sizeof *k);
    int32_t *v = prt__calloc(ncap, sizeof *v), j;
    if (!k || !v) {
        prt__free(k);
        prt__free(v);
        return 0;
    }
    prt__free(im->keys);
    prt__free(im->vals);
    im->keys = k;
    im->vals = v;
    im->hcap = ncap;
    for (j = 0; j < im->nb_t; j++) {
        size_t i = (size_t)hash_str(im->t[j].name) & (ncap - 1);
        while (k[i]) i = (i + 1) & (ncap - 1);
        k[i] = im->t[j].name;
        v[i] = j;
    }
    return 1;
}

/* A new tensor entry (name copied); NULL when out of memory. The entry is
 * zeroed except for the name. A name already present is replaced in the
 * hash (callers check for duplicates first). */
static itensor *add_tensor(importer *im, const char *name, int kind)
{
    itensor *t;
    size_t i;
    if (im->nb_t == im->cap_t) {
        int32_t nc = im->cap_t ? im->cap_t * 2 : 64;
        itensor *nt = prt__realloc(im->t, (size_t)nc * sizeof *nt);
        if (!nt) return NULL;
        im->t = nt;
        im->cap_t = nc;
    }
    if ((size_t)(im->nb_t + 1) * 2 > im->hcap && !rehash(im, im->hcap ? im->hcap * 2 : 128)) return NULL;
    t = &im->t[im->nb_t];
    memset(t, 0, sizeof *t);
    t->name = prt__strdup(name);
    if (!t->name) return NULL;
    t->kind = kind;
    i = (size_t)hash_str(name) & (im->hcap - 1);
    while (im->keys[i] && strcmp(im->keys[i], name) != 0) i = (i + 1) & (im->hcap - 1);
    im->keys[i] = t->name;
    im->vals[i] = im->nb_t++;
    return t;
}

static void *scratch(importer *im, size_t n)
{
    void *p;
    if (im->nb_scratch == im->cap_scratch) {
        int32_t nc = im->cap_scratch ? im->cap_scratch * 2 : 32;
        void **ns = prt__realloc(im->scratch, (size_t)nc * sizeof *ns);
        if (!ns) return NULL;
        im->scratch = ns;
        im->cap_scratch = nc;
    }
    p = prt__calloc(1, n ? n : 1);
    if (p) im->scratch[im->nb_scratch++] = p;
    return p;
}

/* Keep `p` (from prt__malloc) until the node is done; frees it when the
 * list cannot grow. */
static int scratch_adopt(importer *im, void *p)
{
    if (im->nb_scratch == im->cap_scratch) {
        int32_t nc = im->cap_scratch ? im->cap_scratch * 2 : 32;
        void **ns = prt__realloc(im->scratch, (size_t)nc * sizeof *ns);
        if (!ns) {
            prt__free(p);
            return 0;
        }
        im->scratch = ns;
        im->cap_scratch = nc;
    }
    im->scratch[im->nb_scratch++] = p;
    return 1;
}

static void scratch_free(importer *im)
{
    int32_t i;
    for (i = 0; i < im->nb_scratch; i++) prt__free(im->scratch[i]);
    im->nb_scratch = 0;
}

/* A constant from a decoded value (taken over). */
static prt_status set_const(importer *im, const char *name, prt__onnx_value *v)
{
    itensor *t = add_tensor(im, name, T_CONST);
    if (!t) {
        prt__onnx_value_free(v);
        return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory for constant \"%s\"", name);
    }
    t->val = *v;
    memset(v, 0, sizeof *v);
    t->has_dtype = prt__onnx_type_to_dtype(t->val.onnx_type, &t->dtype);
    t->dims = t->val.dims;
    t->dims_known = 1;
    return PRT_OK;
}

/* Put constant `t` into the network (once). */
static prt_status const_to_net(importer *im, itensor *t, const char *label)
{
    prt_status s;
    if (t->in_net) return PRT_OK;
    if (!t->has_dtype)
        return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                    "node %s: constant \"%s\" has element type %s, which plugrt tensors cannot hold", label, t->name,
                    prt__onnx_type_name(t->val.onnx_type));
    s = prt_network_add_constant(im->net, t->name, t->dtype, &t->dims, t->val.data, t->val.nbytes);
    if (s != PRT_OK)
        return fail(im->err, im->cap, s, "node %s: %s", label, prt_network_last_error(im->net));
    t->in_net = 1;
    return PRT_OK;
}

/* ---- graph inputs and initializers --------------------------------------- */

static const prt_profile_range *range_of(const importer *im, const char *name)
{
    int32_t i;
    for (i = 0; i < im->cfg.nb_ranges && im->cfg.ranges; i++)
        if (im->cfg.ranges[i].input && strcmp(im->cfg.ranges[i].input, name) == 0) return &im->cfg.ranges[i];
    return NULL;
}

static const prt_field_schema *schema_entry(const prt_plugin_creator *c, const char *name);

static const prt_onnx_input_value *value_of(const importer *im, const char *name)
{
    int32_t i;
    for (i = 0; i < im->cfg.nb_values && im->cfg.values; i++)
        if (im->cfg.values[i].name && strcmp(im->cfg.values[i].name, name) == 0) return &im->cfg.values[i];
    return NULL;
}

/* 1 if graph input `name` reaches a field "input:<k>" of the creator that
 * serves some node: directly, or through the outputs of nodes that read it
 * (not through Shape and Size, whose outputs depend on extents only). */
static int feeds_field(importer *im, const char *name)
{
    const PrtOnnx__Graph *g = im->m->pb->graph;
    const char **reach;
    size_t nreach = 1, cap = 1, i, k, j;
    int hit = 0;
    for (i = 0; i < g->n_node; i++) cap += g->node[i]->n_output;
    if (!(reach = prt__calloc(cap, sizeof *reach))) return 0;
    reach[0] = name;
    for (i = 0; i < g->n_node && !hit; i++) {
        const PrtOnnx__Node *n = g->node[im->m->order[i]];
        const char *op = prt__onnx_s(n->op_type);
        int reads = 0;
        for (k = 0; k < n->n_input && !hit; k++) {
            prt__onnx_found found;
            char fname[32], label[320], e[512];
            for (j = 0; j < nreach && strcmp(n->input[k], reach[j]) != 0; j++) {
            }
            if (j == nreach || !n->input[k][0]) continue;
            reads = 1;
            prt__onnx_node_label(n, im->m->order[i], label, sizeof label);
            if (prt__onnx_lookup(im->r, n, label, prt__onnx_model_opset(im->m, prt__onnx_s(n->domain)), &found, e,
                                 sizeof e) != PRT_OK)
                continue;
            snprintf(fname, sizeof fname, "input:%d", (int)k);
            hit = schema_entry(found.creator, fname) != NULL;
        }
        if (!reads || strcmp(op, "Shape") == 0 || strcmp(op, "Size") == 0) continue;
        for (k = 0; k < n->n_output && nreach < cap; k++) reach[nreach++] = n->output[k];
    }
    prt__free(reach);
    return hit;
}

/* Graph input `name` (type dt, declared extents d) as a constant holding
 * the config's value `v`. */
static prt_status bind_input(importer *im, const char *name, prt_dtype dt, const prt_dims *d,
                             const prt_onnx_input_value *v)
{
    prt__onnx_value c;
    prt_status s;
    int64_t vol = prt_dims_volume(&v->dims);
    int32_t k;
    char a[96], b[96];
    if (v->dtype != dt)
        return fail(im->err, im->cap, PRT_STATUS_TYPE_MISMATCH, "value for graph input \"%s\": type %s, expected %s",
                    name, prt_dtype_name(v->dtype), prt_dtype_name(dt));
    if (v->dims.nb != d->nb || vol < 0)
        goto extents;
    for (k = 0; k < d->nb; k++)
        if (v->dims.d[k] < 0 || (d->d[k] >= 0 && v->dims.d[k] != d->d[k])) goto extents;
    if (v->nbytes != (size_t)vol * prt_dtype_size(dt) || (v->nbytes && !v->data))
        return fail(im->err, im->cap, PRT_STATUS_INVALID_ARGUMENT,
                    "value for graph input \"%s\": %zu bytes, expected %lld for extents %s", name, v->nbytes,
                    (long long)vol * (long long)prt_dtype_size(dt), prt_dims_str(&v->dims, a, sizeof a));
    memset(&c, 0, sizeof c);
    c.onnx_type = prt__onnx_type_from_dtype(dt);
    c.dims = v->dims;
    c.nbytes = v->nbytes;
    if (c.nbytes && !(c.data = prt__malloc(c.nbytes)))
        return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory for the value of \"%s\"", name);
    if (c.nbytes) memcpy(c.data, v->data, c.nbytes);
    if ((s = set_const(im, name, &c)) != PRT_OK) return s;
    im->t[im->nb_t - 1].bound = 1;
    return PRT_OK;
extents:
    return fail(im->err, im->cap, PRT_STATUS_SHAPE_MISMATCH, "value for graph input \"%s\": extents %s, expected %s",
                name, prt_dims_str(&v->dims, a, sizeof a), prt_dims_str(d, b, sizeof b));
}

static prt_status add_inputs(importer *im)
{
    const PrtOnnx__Graph *g = im->m->pb->graph;
    size_t i, k;
    prt_status s;
    for (i = 0; i < g->n_initializer; i++) {
        const PrtOnnx__Tensor *init = g->initializer[i];
        prt__onnx_value v;
        char what[320];
        if (find(im, init->name) >= 0)
            return fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT, "initializer \"%s\" is given twice", init->name);
        snprintf(what, sizeof what, "initializer \"%s\"", init->name);
        if ((s = prt__onnx_value_decode(init, im->m->base_dir, what, &v, im->err, im->cap)) != PRT_OK) return s;
        if ((s = set_const(im, init->name, &v)) != PRT_OK) return s;
    }
    for (i = 0; i < g->n_input; i++) {
        const PrtOnnx__ValueInfo *vi = g->input[i];
        const PrtOnnx__TensorType *tt = vi->type->tensor_type;
        const prt_profile_range *rg = range_of(im, vi->name);
        const prt_onnx_input_value *iv;
        itensor *t;
        prt_dims d;
        prt_dtype dt;
        int32_t code = tt->has_elem_type ? tt->elem_type : 0;
        if (find(im, vi->name) >= 0) {
            if (im->t[find(im, vi->name)].kind == T_CONST) continue; /* an initializer with a default */
            return fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT, "graph input \"%s\" is listed twice", vi->name);
        }
        if (!prt__onnx_type_to_dtype(code, &dt))
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "graph input \"%s\" has element type %s, which plugrt tensors cannot hold", vi->name,
                        prt__onnx_type_name(code));
        if (!tt->shape)
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "graph input \"%s\" has no shape; its rank must be known", vi->name);
        memset(&d, 0, sizeof d);
        d.nb = (int32_t)tt->shape->n_dim;
        for (k = 0; k < tt->shape->n_dim; k++)
            d.d[k] = tt->shape->dim[k]->has_dim_value && tt->shape->dim[k]->dim_value >= 0
                         ? tt->shape->dim[k]->dim_value
                         : PRT_DIM_DYNAMIC;
        if ((iv = value_of(im, vi->name)) && (im->cfg.bind == PRT_ONNX_BIND_ALL || feeds_field(im, vi->name))) {
            if ((s = bind_input(im, vi->name, dt, &d, iv)) != PRT_OK) return s;
            continue;
        }
        s = prt_network_add_input(im->net, vi->name, dt, &d);
        if (s != PRT_OK) return fail(im->err, im->cap, s, "%s", prt_network_last_error(im->net));
        if (!(t = add_tensor(im, vi->name, T_INPUT)))
            return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        t->has_dtype = 1;
        t->dtype = dt;
        t->dims_known = 1;
        t->in_net = 1;
        t->dims = d;
        /* an extent the profile pins (min == max) is known at import */
        for (k = 0; rg && k < (size_t)d.nb; k++)
            if (d.d[k] < 0 && rg->min.nb == d.nb && rg->max.nb == d.nb && rg->min.d[k] == rg->max.d[k])
                t->dims.d[k] = rg->min.d[k];
    }
    for (k = 0; k < (size_t)im->cfg.nb_values && im->cfg.values; k++) {
        const char *nm = im->cfg.values[k].name ? im->cfg.values[k].name : "(null)";
        int32_t ti = im->cfg.values[k].name ? find(im, nm) : -1;
        if (ti < 0 || (im->t[ti].kind != T_INPUT && !im->t[ti].bound))
            return fail(im->err, im->cap, PRT_STATUS_NOT_FOUND,
                        "import config: value %zu names \"%s\", which is no graph input of the model", k, nm);
    }
    return PRT_OK;
}

/* ---- attributes as fields --------------------------------------------------- */

static const prt_field_schema *schema_entry(const prt_plugin_creator *c, const char *name)
{
    int32_t i;
    for (i = 0; i < c->nb_fields; i++) {
        const prt_field_schema *e =
            (const prt_field_schema *)((const char *)c->fields + (size_t)i * c->field_schema_size);
        if (e->name && strcmp(e->name, name) == 0) return e;
    }
    return NULL;
}

/* The attribute's type, inferred from the value fields when `type` is unset. */
static int32_t attr_type(const PrtOnnx__Attribute *a)
{
    if (a->has_type && a->type) return a->type;
    if (a->has_f) return PRT__ONNX_ATTR_FLOAT;
    if (a->has_i) return PRT__ONNX_ATTR_INT;
    if (a->has_s) return PRT__ONNX_ATTR_STRING;
    if (a->t) return PRT__ONNX_ATTR_TENSOR;
    if (a->n_floats) return PRT__ONNX_ATTR_FLOATS;
    if (a->n_ints) return PRT__ONNX_ATTR_INTS;
    if (a->n_strings) return PRT__ONNX_ATTR_STRINGS;
    if (a->n_tensors) return PRT__ONNX_ATTR_TENSORS;
    return PRT__ONNX_ATTR_UNDEFINED;
}

static int is_int_field(prt_field_type t)
{
    return t == PRT_FIELD_INT8 || t == PRT_FIELD_INT16 || t == PRT_FIELD_INT32 || t == PRT_FIELD_INT64 ||
           t == PRT_FIELD_BOOL;
}

static int is_float_field(prt_field_type t)
{
    return t == PRT_FIELD_FLOAT16 || t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT64;
}

/* Integers into a field of type `ft` (an integer or float type); range
 * checked. */
static prt_status ints_to_field(importer *im, const char *label, const char *aname, const int64_t *v, size_t n,
                                prt_field_type ft, prt_field *f)
{
    static const int64_t lo[] = {INT8_MIN, INT16_MIN, INT32_MIN, INT64_MIN}, hi[] = {INT8_MAX, INT16_MAX, INT32_MAX,
                                                                                    INT64_MAX};
    size_t i, esz = prt_field_type_size(ft);
    void *d = scratch(im, n * esz);
    if (!d) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) {
        int64_t x = v[i];
        if (ft <= PRT_FIELD_INT64 && (x < lo[ft] || x > hi[ft]))
            return fail(im->err, im->cap, PRT_STATUS_INVALID_FIELD,
                        "node %s: attribute \"%s\" value %" PRId64 " does not fit the plugin's %s field", label, aname,
                        x, prt_field_type_name(ft));
        if (ft == PRT_FIELD_BOOL && x != 0 && x != 1)
            return fail(im->err, im->cap, PRT_STATUS_INVALID_FIELD,
                        "node %s: attribute \"%s\" value %" PRId64 " is not 0 or 1 for the plugin's bool field",
                        label, aname, x);
        switch (ft) {
        case PRT_FIELD_INT8: case PRT_FIELD_BOOL: ((int8_t *)d)[i] = (int8_t)x; break;
        case PRT_FIELD_INT16: ((int16_t *)d)[i] = (int16_t)x; break;
        case PRT_FIELD_INT32: ((int32_t *)d)[i] = (int32_t)x; break;
        case PRT_FIELD_INT64: ((int64_t *)d)[i] = x; break;
        case PRT_FIELD_FLOAT16: ((uint16_t *)d)[i] = prt_f32_to_f16((float)x); break;
        case PRT_FIELD_FLOAT32: ((float *)d)[i] = (float)x; break;
        default: ((double *)d)[i] = (double)x; break;
        }
    }
    f->data = d;
    f->type = ft;
    f->count = (int64_t)n;
    return PRT_OK;
}

static prt_status floats_to_field(importer *im, const float *v, size_t n, prt_field_type ft, prt_field *f)
{
    size_t i, esz = prt_field_type_size(ft);
    void *d = scratch(im, n * esz);
    if (!d) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) {
        if (ft == PRT_FIELD_FLOAT16) ((uint16_t *)d)[i] = prt_f32_to_f16(v[i]);
        else if (ft == PRT_FIELD_FLOAT64) ((double *)d)[i] = v[i];
        else ((float *)d)[i] = v[i];
    }
    f->data = d;
    f->type = ft;
    f->count = (int64_t)n;
    return PRT_OK;
}

/* One attribute as a field named `fname`: ONNX types map to INT64 / FLOAT32
 * / CHAR, or to the schema's type where the creator declares the field. */
static prt_status attr_to_field(importer *im, const char *label, const PrtOnnx__Attribute *a, const char *fname,
                                const prt_plugin_creator *c, prt_field *f)
{
    const prt_field_schema *se = schema_entry(c, fname);
    int32_t ty = attr_type(a);
    prt_field_type want;
    memset(f, 0, sizeof *f);
    f->name = fname;
    switch (ty) {
    case PRT__ONNX_ATTR_INT:
    case PRT__ONNX_ATTR_INTS: {
        const int64_t *v = ty == PRT__ONNX_ATTR_INT ? &a->i : a->ints;
        size_t n = ty == PRT__ONNX_ATTR_INT ? 1 : a->n_ints;
        if (ty == PRT__ONNX_ATTR_INT && !a->has_i && (a->has_f || a->has_s || a->t || a->n_ints || a->n_floats))
            goto wrong;
        want = se && (is_int_field(se->type) || is_float_field(se->type)) ? se->type : PRT_FIELD_INT64;
        return ints_to_field(im, label, a->name, v, n, want, f);
    }
    case PRT__ONNX_ATTR_FLOAT:
    case PRT__ONNX_ATTR_FLOATS: {
        const float *v = ty == PRT__ONNX_ATTR_FLOAT ? &a->f : a->floats;
        size_t n = ty == PRT__ONNX_ATTR_FLOAT ? 1 : a->n_floats;
        if (ty == PRT__ONNX_ATTR_FLOAT && !a->has_f && (a->has_i || a->has_s || a->t || a->n_ints || a->n_floats))
            goto wrong;
        want = se && is_float_field(se->type) ? se->type : PRT_FIELD_FLOAT32;
        return floats_to_field(im, v, n, want, f);
    }
    case PRT__ONNX_ATTR_STRING:
        if (!a->has_s && (a->has_i || a->has_f || a->t || a->n_ints || a->n_floats)) goto wrong;
        f->type = se && se->type == PRT_FIELD_BYTES ? PRT_FIELD_BYTES : PRT_FIELD_CHAR;
        f->data = a->s.data;
        f->count = (int64_t)a->s.len;
        return PRT_OK;
    case PRT__ONNX_ATTR_TENSOR: {
        prt__onnx_value v;
        prt_field_tensor *ft;
        char what[400];
        prt_status s;
        if (!a->t) goto wrong;
        snprintf(what, sizeof what, "node %s, attribute \"%s\"", label, a->name);
        if ((s = prt__onnx_value_decode(a->t, im->m->base_dir, what, &v, im->err, im->cap)) != PRT_OK) return s;
        if (v.data && !scratch_adopt(im, v.data))
            return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        if (!(ft = scratch(im, sizeof *ft))) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        if (!prt__onnx_type_to_dtype(v.onnx_type, &ft->dtype))
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "node %s: attribute \"%s\" is a tensor of element type %s, which plugrt tensors cannot hold",
                        label, a->name, prt__onnx_type_name(v.onnx_type));
        ft->dims = v.dims;
        ft->data = v.data;
        f->type = PRT_FIELD_TENSOR;
        f->data = ft;
        f->count = 1;
        return PRT_OK;
    }
    case PRT__ONNX_ATTR_UNDEFINED:
        return fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT, "node %s: attribute \"%s\" has no type and no value",
                    label, a->name);
    default:
        return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                    "node %s: attribute \"%s\" has type %s: unsupported attribute type (plugin fields cannot hold it "
                    "yet)",
                    label, a->name, prt__onnx_attr_type_name(ty));
    }
wrong:
    return fail(im->err, im->cap, PRT_STATUS_TYPE_MISMATCH,
                "node %s: attribute \"%s\" is declared %s but holds a value of another type", label, a->name,
                prt__onnx_attr_type_name(ty));
}

/* A constant input passed as field "input:<k>": floats as FLOAT32/FLOAT64,
 * integers and bools as INT64. */
static prt_status const_to_field_natural(importer *im, const itensor *t, const char *fname, prt_field *f)
{
    const prt__onnx_value *v = &t->val;
    size_t n = v->nbytes / (prt__onnx_type_size(v->onnx_type) ? prt__onnx_type_size(v->onnx_type) : 1), i;
    memset(f, 0, sizeof *f);
    f->name = fname;
    f->count = (int64_t)n;
    switch (v->onnx_type) {
    case PRT__ONNX_FLOAT:
        f->type = PRT_FIELD_FLOAT32;
        f->data = v->data;
        return PRT_OK;
    case PRT__ONNX_DOUBLE:
        f->type = PRT_FIELD_FLOAT64;
        f->data = v->data;
        return PRT_OK;
    case PRT__ONNX_FLOAT16:
    case PRT__ONNX_BFLOAT16: {
        float *d = scratch(im, n * sizeof *d);
        if (!d) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        for (i = 0; i < n; i++) {
            uint16_t h = ((const uint16_t *)v->data)[i];
            d[i] = v->onnx_type == PRT__ONNX_FLOAT16 ? prt_f16_to_f32(h) : prt_bf16_to_f32(h);
        }
        f->type = PRT_FIELD_FLOAT32;
        f->data = d;
        return PRT_OK;
    }
    default: {
        int64_t *d = scratch(im, n * sizeof *d);
        if (!d) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        for (i = 0; i < n; i++) {
            const uint8_t *p = v->data;
            switch (v->onnx_type) {
            case PRT__ONNX_INT8: d[i] = ((const int8_t *)p)[i]; break;
            case PRT__ONNX_UINT8: case PRT__ONNX_BOOL: d[i] = p[i]; break;
            case PRT__ONNX_INT16: d[i] = ((const int16_t *)p)[i]; break;
            case PRT__ONNX_UINT16: d[i] = ((const uint16_t *)p)[i]; break;
            case PRT__ONNX_INT32: d[i] = ((const int32_t *)p)[i]; break;
            case PRT__ONNX_UINT32: d[i] = ((const uint32_t *)p)[i]; break;
            default: d[i] = ((const int64_t *)p)[i]; break;
            }
        }
        f->type = PRT_FIELD_INT64;
        f->data = d;
        return PRT_OK;
    }
    }
}

/* The same, converted to the schema's class where it declares the other
 * one: integers into a float field (Clip's bounds of an integer Clip),
 * integral floats into an integer field (OneHot's depth); a TENSOR field
 * gets the value itself (one prt_field_tensor keeping the dtype: Range). */
static prt_status const_to_field(importer *im, const char *label, const itensor *t, const char *fname,
                                 const prt_field_schema *se, prt_field *f)
{
    prt_status s;
    int64_t i, n;
    if (se && se->type == PRT_FIELD_TENSOR) { /* the value as it is, dtype kept */
        prt_field_tensor *ft = scratch(im, sizeof *ft);
        if (!ft) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        if (!t->has_dtype)
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "node %s: constant input \"%s\" has element type %s, which plugrt tensors cannot hold", label,
                        t->name, prt__onnx_type_name(t->val.onnx_type));
        memset(f, 0, sizeof *f);
        ft->dtype = t->dtype;
        ft->dims = t->dims;
        ft->data = t->val.data;
        f->name = fname;
        f->type = PRT_FIELD_TENSOR;
        f->data = ft;
        f->count = 1;
        return PRT_OK;
    }
    s = const_to_field_natural(im, t, fname, f);
    n = f->count;
    if (s != PRT_OK || !se) return s;
    if (f->type == PRT_FIELD_INT64 && is_float_field(se->type))
        return ints_to_field(im, label, fname, f->data, (size_t)n, se->type, f);
    if (is_float_field(f->type) && is_int_field(se->type)) {
        int64_t *d = scratch(im, (size_t)n * sizeof *d);
        if (!d) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        for (i = 0; i < n; i++) {
            double x = f->type == PRT_FIELD_FLOAT64 ? ((const double *)f->data)[i] : ((const float *)f->data)[i];
            if (!(x >= -9.2e18 && x <= 9.2e18) || x != (double)(int64_t)x)
                return fail(im->err, im->cap, PRT_STATUS_INVALID_FIELD,
                            "node %s: input \"%s\" element %lld is %g; plugin field \"%s\" takes whole numbers",
                            label, t->name, (long long)i, x, fname);
            d[i] = (int64_t)x;
        }
        f->data = d;
        f->type = PRT_FIELD_INT64;
    }
    return PRT_OK;
}

/* ---- Constant nodes ------------------------------------------------------- */

/* A scalar (one) or 1-D value of 4- or 8-byte elements copied from src. */
static prt_status list_value(prt__onnx_value *v, int32_t code, int one, size_t cnt, const void *src)
{
    v->onnx_type = code;
    v->dims.nb = one ? 0 : 1;
    v->dims.d[0] = (int64_t)cnt;
    v->nbytes = cnt * prt__onnx_type_size(code);
    if (cnt && !(v->data = prt__malloc(v->nbytes))) return PRT_STATUS_OUT_OF_MEMORY;
    if (cnt) memcpy(v->data, src, v->nbytes);
    return PRT_OK;
}

static prt_status constant_node(importer *im, const PrtOnnx__Node *n, const char *label)
{
    const PrtOnnx__Attribute *a;
    prt__onnx_value v;
    char what[400];
    prt_status s;
    memset(&v, 0, sizeof v);
    if (n->n_attribute != 1 || n->n_output != 1 || !n->output[0][0])
        return fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT,
                    "node %s: a Constant needs exactly one attribute and one output, got %zu and %zu", label,
                    n->n_attribute, n->n_output);
    a = n->attribute[0];
    snprintf(what, sizeof what, "node %s, attribute \"%s\"", label, a->name);
    if (strcmp(a->name, "value") == 0 && a->t) {
        if ((s = prt__onnx_value_decode(a->t, im->m->base_dir, what, &v, im->err, im->cap)) != PRT_OK) return s;
    } else if (strcmp(a->name, "value_float") == 0 || strcmp(a->name, "value_floats") == 0) {
        int one = a->name[11] == 0;
        if ((s = list_value(&v, PRT__ONNX_FLOAT, one, one ? 1 : a->n_floats, one ? (const void *)&a->f : a->floats)))
            return fail(im->err, im->cap, s, "node %s: out of memory", label);
    } else if (strcmp(a->name, "value_int") == 0 || strcmp(a->name, "value_ints") == 0) {
        int one = a->name[9] == 0;
        if ((s = list_value(&v, PRT__ONNX_INT64, one, one ? 1 : a->n_ints, one ? (const void *)&a->i : a->ints)))
            return fail(im->err, im->cap, s, "node %s: out of memory", label);
    } else {
        return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                    "node %s: Constant attribute \"%s\" (%s) is not supported (value, value_float(s) and "
                    "value_int(s) are)",
                    label, a->name, prt__onnx_attr_type_name(attr_type(a)));
    }
    if (find(im, n->output[0]) >= 0) {
        prt__onnx_value_free(&v);
        return fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT, "node %s: output \"%s\" exists already", label,
                    n->output[0]);
    }
    return set_const(im, n->output[0], &v);
}

/* ---- Shape on extents known at import -------------------------------------- */

static int dims_static(const itensor *t)
{
    int32_t i;
    if (!t->dims_known) return 0;
    for (i = 0; i < t->dims.nb; i++)
        if (t->dims.d[i] < 0) return 0;
    return 1;
}

static int64_t attr_int(const PrtOnnx__Node *n, const char *name, int64_t dflt, int *present)
{
    size_t i;
    for (i = 0; i < n->n_attribute; i++)
        if (strcmp(n->attribute[i]->name, name) == 0) {
            if (present) *present = 1;
            return n->attribute[i]->i;
        }
    return dflt;
}

static prt_status shape_node(importer *im, const PrtOnnx__Node *n, const itensor *in, const char *label)
{
    prt__onnx_value v;
    int64_t r = in->dims.nb, start = attr_int(n, "start", 0, NULL), end = attr_int(n, "end", r, NULL), i;
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < 0 ? 0 : end > r ? r : end;
    if (end < start) end = start;
    memset(&v, 0, sizeof v);
    v.onnx_type = PRT__ONNX_INT64;
    v.dims.nb = 1;
    v.dims.d[0] = end - start;
    v.nbytes = (size_t)(end - start) * 8;
    if (v.nbytes && !(v.data = prt__malloc(v.nbytes)))
        return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "node %s: out of memory", label);
    for (i = start; i < end; i++) ((int64_t *)v.data)[i - start] = in->dims.d[i];
    return set_const(im, n->output[0], &v);
}

/* ---- one node --------------------------------------------------------------- */

/* Run a configured op once on constant inputs and keep its outputs as
 * constants named after the node's outputs. */
static prt_status fold(importer *im, prt_op *op, const PrtOnnx__Node *n, const char *label,
                       const itensor *const *ins, int32_t nb_in, int32_t nb_out)
{
    prt_tensor_desc *d = scratch(im, (size_t)(nb_in + 1) * sizeof *d);
    const void **in_ptr = scratch(im, (size_t)(nb_in + 1) * sizeof *in_ptr);
    void **out_ptr = scratch(im, (size_t)(nb_out + 1) * sizeof *out_ptr);
    prt_op_config oc;
    prt_status s;
    int32_t i;
    if (!d || !in_ptr || !out_ptr) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < nb_in; i++) {
        if (!ins[i]->has_dtype)
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "node %s: constant input \"%s\" has element type %s, which plugrt tensors cannot hold", label,
                        ins[i]->name, prt__onnx_type_name(ins[i]->val.onnx_type));
        d[i].dtype = ins[i]->dtype;
        d[i].format = PRT_FORMAT_LINEAR;
        d[i].dims = ins[i]->dims;
        in_ptr[i] = ins[i]->val.data ? ins[i]->val.data : (const void *)d; /* any non-NULL pointer for empty */
    }
    memset(&oc, 0, sizeof oc);
    oc.struct_size = sizeof oc;
    oc.abi_version = PRT_ABI_VERSION;
    oc.device = PRT_DEVICE_CPU;
    oc.nb_threads = 1;
    if ((s = prt_op_configure(op, d, nb_in, &oc)) != PRT_OK)
        return fail(im->err, im->cap, s, "node %s: folding its constant inputs: %s", label, prt_op_last_error(op));
    for (i = 0; i < nb_out; i++) {
        prt_tensor_desc od;
        int64_t vol;
        if (prt_op_output_desc(op, i, &od) != PRT_OK || (vol = prt_dims_volume(&od.dims)) < 0)
            return fail(im->err, im->cap, PRT_STATUS_INTERNAL, "node %s: output %d has no extents", label, (int)i);
        out_ptr[i] = scratch(im, (size_t)vol * prt_dtype_size(od.dtype) + 8);
        if (!out_ptr[i]) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory folding node %s", label);
    }
    if ((s = prt_op_run(op, in_ptr, out_ptr)) != PRT_OK)
        return fail(im->err, im->cap, s, "node %s: folding its constant inputs: %s", label, prt_op_last_error(op));
    for (i = 0; i < nb_out; i++) {
        prt_tensor_desc od;
        prt__onnx_value v;
        int64_t vol;
        if (i >= (int32_t)n->n_output || !n->output[i][0]) continue;
        if (prt_op_output_desc(op, i, &od) != PRT_OK || (vol = prt_dims_volume(&od.dims)) < 0)
            return fail(im->err, im->cap, PRT_STATUS_INTERNAL, "node %s: output %d has no extents", label, (int)i);
        memset(&v, 0, sizeof v);
        v.onnx_type = prt__onnx_type_from_dtype(od.dtype);
        v.dims = od.dims;
        v.nbytes = (size_t)vol * prt_dtype_size(od.dtype);
        if (v.nbytes && !(v.data = prt__malloc(v.nbytes)))
            return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory folding node %s", label);
        if (v.nbytes) memcpy(v.data, out_ptr[i], v.nbytes);
        if ((s = set_const(im, n->output[i], &v)) != PRT_OK) return s;
    }
    return PRT_OK;
}

/* Extents of the new layer's outputs when every input's are static (for
 * Shape nodes further on). Failures only leave them unknown. */
static void propagate_shapes(importer *im, prt_op *op, const itensor *const *ins, int32_t nb_in,
                             const int32_t *outs, int32_t nb_out)
{
    prt_tensor_desc *d = scratch(im, (size_t)(nb_in + 1) * sizeof *d);
    prt_op_config oc;
    int32_t i;
    if (!d) return;
    for (i = 0; i < nb_in; i++) {
        int64_t vol = prt_dims_volume(&ins[i]->dims);
        /* configuring allocates workspace: not for absurd extents */
        if (!ins[i]->has_dtype || !dims_static(ins[i]) || vol < 0 || vol > ((int64_t)1 << 30)) return;
        d[i].dtype = ins[i]->dtype;
        d[i].format = PRT_FORMAT_LINEAR;
        d[i].dims = ins[i]->dims;
    }
    memset(&oc, 0, sizeof oc);
    oc.struct_size = sizeof oc;
    oc.abi_version = PRT_ABI_VERSION;
    oc.device = PRT_DEVICE_CPU;
    oc.nb_threads = 1;
    if (prt_op_configure(op, d, nb_in, &oc) != PRT_OK) return;
    for (i = 0; i < nb_out; i++) {
        prt_tensor_desc od;
        itensor *t;
        if (outs[i] < 0 || prt_op_output_desc(op, i, &od) != PRT_OK) continue;
        t = &im->t[outs[i]];
        t->has_dtype = 1;
        t->dtype = od.dtype;
        t->dims_known = !prt__op_output_data_dependent(op, i);
        t->dims = od.dims;
    }
}

/* Element types of the new layer's outputs when every input's is known
 * (the plugin's own type rule), for the fusion pass. */
static void track_types(importer *im, prt_op *op, const itensor *const *ins, int32_t nb_in, const int32_t *outs,
                        int32_t nb_out)
{
    prt_dtype *in = scratch(im, (size_t)(nb_in + 1) * sizeof *in), *out = scratch(im, (size_t)(nb_out + 1) * sizeof *out);
    int32_t i;
    if (!in || !out) return;
    for (i = 0; i < nb_in; i++) {
        if (!ins[i]->has_dtype) return;
        in[i] = ins[i]->dtype;
    }
    if (prt__op_output_types(op, in, nb_in, out, nb_out) != PRT_OK) return;
    for (i = 0; i < nb_out; i++)
        if (outs[i] >= 0) {
            im->t[outs[i]].has_dtype = 1;
            im->t[outs[i]].dtype = out[i];
        }
}

static prt_status import_node(importer *im, int32_t idx, int *dep_missing)
{
    const PrtOnnx__Node *n = im->m->pb->graph->node[idx];
    const char *domain = prt__onnx_s(n->domain), *op_type = prt__onnx_s(n->op_type);
    int default_domain = !domain[0] || strcmp(domain, "ai.onnx") == 0;
    char label[320];
    prt__onnx_found found;
    prt_field *fields;
    const itensor **ins;
    const char **in_names, **out_names;
    int32_t *out_idx, *in_idx;
    int32_t nb_fields = 0, nb_in = 0, nb_listed, nb_out, k, all_const = 1, missing = 0;
    prt_fields fc;
    const prt_field_schema *se_out;
    prt_op *op = NULL;
    prt_status s;
    size_t a;

    *dep_missing = 0;
    prt__onnx_node_label(n, idx, label, sizeof label);
    if (default_domain && strcmp(op_type, "Constant") == 0) return constant_node(im, n, label);

    /* inputs: trailing absent ones dropped; absent ones in the middle only
     * where the creator takes that input as an optional field (below) */
    nb_listed = (int32_t)n->n_input;
    while (nb_listed > 0 && !n->input[nb_listed - 1][0]) nb_listed--;
    for (k = 0; k < nb_listed; k++) {
        int32_t ti;
        if (!n->input[k][0]) continue;
        ti = find(im, n->input[k]);
        if (ti < 0 || im->t[ti].kind == T_MISSING) missing = 1;
        else if (im->t[ti].kind != T_CONST) all_const = 0;
    }
    /* Shape of a tensor whose extents are known folds without a plugin */
    if (default_domain && strcmp(op_type, "Shape") == 0 && nb_listed == 1 && !missing && n->n_output >= 1 &&
        n->output[0][0]) {
        const itensor *in = &im->t[find(im, n->input[0])];
        if (dims_static(in)) return shape_node(im, n, in, label);
    }

    s = prt__onnx_lookup(im->r, n, label, prt__onnx_model_opset(im->m, domain), &found, im->err, im->cap);
    if (s != PRT_OK) return s;
    for (k = 0; k < nb_listed; k++) {
        const prt_field_schema *se;
        char fname[32];
        if (n->input[k][0]) continue;
        snprintf(fname, sizeof fname, "input:%d", (int)k);
        se = schema_entry(found.creator, fname);
        if (!se || se->required)
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "node %s: input %d is absent (empty name) but a later one is given; absent optional inputs "
                        "in the middle are not supported yet (plugin %s v%s has no optional field \"%s\" for it)",
                        label, (int)k, found.creator->name, found.creator->version, fname);
    }

    fields = scratch(im, (n->n_attribute + (size_t)nb_listed + 2) * sizeof *fields);
    ins = scratch(im, ((size_t)nb_listed + 1) * sizeof *ins);
    in_idx = scratch(im, ((size_t)nb_listed + 1) * sizeof *in_idx);
    in_names = scratch(im, ((size_t)nb_listed + 1) * sizeof *in_names);
    if (!fields || !ins || !in_idx || !in_names)
        return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (a = 0; a < n->n_attribute; a++) {
        const PrtOnnx__Attribute *at = n->attribute[a];
        const char *fname = at->name;
        if (found.alias && found.alias->renames) {
            const char *const *rn;
            for (rn = found.alias->renames; rn[0]; rn += 2)
                if (strcmp(rn[0], fname) == 0) fname = rn[1];
        }
        /* the lookup's own attributes are not fields unless declared */
        if (found.custom && (strcmp(fname, "plugin_version") == 0 || strcmp(fname, "plugin_namespace") == 0) &&
            !schema_entry(found.creator, fname))
            continue;
        if ((s = attr_to_field(im, label, at, fname, found.creator, &fields[nb_fields])) != PRT_OK) return s;
        nb_fields++;
    }
    /* a creator declaring "num_outputs" that the node does not give gets the
     * node's output count (Split before version 18 splits into that many;
     * MaxPool leaves out Indices when the node does not list it) */
    if ((se_out = schema_entry(found.creator, "num_outputs")) && is_int_field(se_out->type)) {
        int given = 0;
        for (k = 0; k < nb_fields; k++) given |= strcmp(fields[k].name, "num_outputs") == 0;
        if (!given) {
            int64_t cnt = (int64_t)n->n_output;
            if ((s = ints_to_field(im, label, "num_outputs", &cnt, 1, se_out->type, &fields[nb_fields])) != PRT_OK)
                return s;
            fields[nb_fields++].name = "num_outputs";
        }
    }
    if (missing) {
        *dep_missing = 1;
        goto outputs_missing;
    }
    /* constant inputs the creator takes as "input:<k>" fields */
    for (k = 0; k < nb_listed; k++) {
        itensor *t;
        const prt_field_schema *se;
        char fname[32];
        if (!n->input[k][0]) continue; /* absent: its optional field stays unset */
        t = &im->t[find(im, n->input[k])];
        snprintf(fname, sizeof fname, "input:%d", (int)k);
        se = schema_entry(found.creator, fname);
        if (se && se->required && t->kind != T_CONST)
            return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                        "node %s: input %d \"%s\" must be known at import (plugin %s v%s takes it as field \"%s\") "
                        "but depends on data or on dynamic extents; a profile with min == max for those extents "
                        "makes it known",
                        label, (int)k, t->name, found.creator->name, found.creator->version, fname);
        if (t->kind == T_CONST && se) {
            char *nm = scratch(im, strlen(fname) + 1);
            if (!nm) return fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            memcpy(nm, fname, strlen(fname) + 1);
            if ((s = const_to_field(im, label, t, nm, se, &fields[nb_fields])) != PRT_OK) return s;
            nb_fields++;
            continue;
        }
        ins[nb_in] = t;
        in_idx[nb_in] = find(im, n->input[k]);
        in_names[nb_in++] = t->name;
    }
    fc.fields = fields;
    fc.nb = nb_fields;
    fc.reserved_ = 0;
    if ((s = prt_op_create(im->r, found.creator->name, found.creator->version, found.creator->plugin_namespace, &fc,
                           &op)) != PRT_OK)
        return fail(im->err, im->cap, s, "node %s: %s", label, prt_op_last_error(NULL));
    nb_out = prt_op_nb_outputs(op);
    if ((int32_t)n->n_output > nb_out) {
        s = fail(im->err, im->cap, PRT_STATUS_SHAPE_MISMATCH,
                 "node %s: lists %zu outputs; plugin %s v%s (namespace \"%s\") makes %d", label, n->n_output,
                 found.creator->name, found.creator->version, found.creator->plugin_namespace, (int)nb_out);
        goto done;
    }
    if (all_const) {
        /* a plugin that cannot run on the CPU stays a layer on its constant inputs */
        s = fold(im, op, n, label, ins, nb_in, nb_out);
        if (s != PRT_STATUS_UNSUPPORTED && s != PRT_STATUS_NO_DEVICE) goto done;
        prt_log(PRT_SEVERITY_VERBOSE, "ONNX import: %s; kept as a layer", im->err ? im->err : "not folded");
    }
    out_names = scratch(im, ((size_t)nb_out + 1) * sizeof *out_names);
    out_idx = scratch(im, ((size_t)nb_out + 1) * sizeof *out_idx);
    if (!out_names || !out_idx) {
        s = fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (k = 0; k < nb_out; k++) {
        if (k < (int32_t)n->n_output && n->output[k][0]) {
            if (find(im, n->output[k]) >= 0) {
                s = fail(im->err, im->cap, PRT_STATUS_BAD_FORMAT, "node %s: output \"%s\" exists already", label,
                         n->output[k]);
                goto done;
            }
            out_names[k] = n->output[k];
        } else { /* omitted: a name of our own nobody reads */
            char *nm = scratch(im, 64);
            int j = 0;
            if (!nm) {
                s = fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
                goto done;
            }
            do snprintf(nm, 64, "onnx_node%d_unused_output%d%s", (int)idx, (int)k, j ? "_" : "");
            while (find(im, nm) >= 0 && ++j < 8);
            out_names[k] = nm;
        }
    }
    for (k = 0; k < nb_in; k++)
        if (ins[k]->kind == T_CONST && (s = const_to_net(im, (itensor *)ins[k], label)) != PRT_OK) goto done;
    s = prt_network_add_layer(im->net, n->name && n->name[0] ? n->name : NULL, found.creator->name,
                              found.creator->version, found.creator->plugin_namespace, &fc, in_names, nb_in,
                              out_names, nb_out);
    if (s == PRT_STATUS_ALREADY_EXISTS && n->name && n->name[0]) /* node names need not be unique in ONNX */
        s = prt_network_add_layer(im->net, NULL, found.creator->name, found.creator->version,
                                  found.creator->plugin_namespace, &fc, in_names, nb_in, out_names, nb_out);
    if (s != PRT_OK) {
        s = fail(im->err, im->cap, s, "node %s: %s", label, prt_network_last_error(im->net));
        goto done;
    }
    for (k = 0; k < nb_out; k++) {
        itensor *t = add_tensor(im, out_names[k], T_LAYER);
        if (!t) {
            s = fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        t->in_net = 1;
        out_idx[k] = im->nb_t - 1;
    }
    /* adding the outputs may have moved the table: the inputs again by index */
    for (k = 0; k < nb_in; k++) ins[k] = &im->t[in_idx[k]];
    track_types(im, op, ins, nb_in, out_idx, nb_out);
    if (im->need_shapes) propagate_shapes(im, op, ins, nb_in, out_idx, nb_out);
    s = PRT_OK;
    goto done;
outputs_missing:
    s = PRT_OK;
    for (a = 0; a < n->n_output; a++)
        if (n->output[a][0] && find(im, n->output[a]) < 0 && !add_tensor(im, n->output[a], T_MISSING))
            s = fail(im->err, im->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
done:
    prt_op_destroy(op);
    return s;
}

/* Graph outputs: layer outputs are marked; constants and graph inputs go
 * through an Identity layer (the network marks layer outputs only). */
static prt_status mark_outputs(importer *im)
{
    const PrtOnnx__Graph *g = im->m->pb->graph;
    size_t i;
    prt_status s;
    for (i = 0; i < g->n_output; i++) {
        const char *name = g->output[i]->name;
        int32_t ti = find(im, name);
        itensor *t;
        if (ti < 0)
            return fail(im->err, im->cap, PRT_STATUS_NOT_FOUND, "graph output \"%s\" is produced by no node", name);
        t = &im->t[ti];
        if (t->kind == T_MISSING) continue;
        if (t->kind != T_LAYER) {
            const prt_plugin_creator *c = prt__onnx_find_versioned(im->r, "Identity", "", im->m->default_opset);
            char inner[512];
            const char *in1[1], *out1[1];
            if (t->kind == T_INPUT || t->in_net)
                return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                            "graph output \"%s\" is also a %s; plugrt networks mark layer outputs only", name,
                            t->kind == T_INPUT ? "graph input" : "layer input");
            if (!c)
                return fail(im->err, im->cap, PRT_STATUS_NOT_FOUND,
                            "graph output \"%s\" is a constant computed at import; passing it out needs an Identity "
                            "plugin (op Identity, domain \"\") and none is registered",
                            name);
            /* the value goes in under an inner name, Identity gives it the output's */
            {
                int j = 0;
                do snprintf(inner, sizeof inner, j ? "%.400s_value_%d" : "%.400s_value", name, j);
                while (find(im, inner) >= 0 && ++j < 1000);
            }
            if (!t->has_dtype)
                return fail(im->err, im->cap, PRT_STATUS_UNSUPPORTED,
                            "graph output \"%s\" has element type %s, which plugrt tensors cannot hold", name,
                            prt__onnx_type_name(t->val.onnx_type));
            s = prt_network_add_constant(im->net, inner, t->dtype, &t->dims, t->val.data, t->val.nbytes);
            in1[0] = inner;
            out1[0] = name;
            if (s == PRT_OK)
                s = prt_network_add_layer(im->net, NULL, c->name, c->version, c->plugin_namespace, NULL, in1, 1,
                                          out1, 1);
            if (s != PRT_OK)
                return fail(im->err, im->cap, s, "graph output \"%s\": %s", name, prt_network_last_error(im->net));
        }
        s = prt_network_mark_output(im->net, name);
        if (s != PRT_OK) return fail(im->err, im->cap, s, "%s", prt_network_last_error(im->net));
    }
    return PRT_OK;
}

static int tinfo(void *user, const char *name, prt__onnx_tinfo *out)
{
    const importer *im = user;
    int32_t ti = find(im, name);
    if (ti < 0) return 0;
    out->has_dtype = im->t[ti].has_dtype;
    out->dtype = im->t[ti].dtype;
    out->rank_known = im->t[ti].dims_known;
    out->dims = im->t[ti].dims;
    return 1;
}

prt_status prt_onnx_import(const prt_onnx_model *m, prt_registry *r, const prt_onnx_import_config *cfg,
                           prt_network **out, char *err, size_t cap)
{
    importer im;
    prt_status s, first = PRT_OK;
    char first_err[PRT_ERR_CAP];
    size_t i;
    int32_t k;
    if (!m || !out) return fail(err, cap, PRT_STATUS_INVALID_ARGUMENT, "no model or no out-parameter given");
    memset(&im, 0, sizeof im);
    prt_onnx_import_config_init(&im.cfg);
    if (cfg) {
        if (cfg->struct_size < offsetof(prt_onnx_import_config, issue))
            return fail(err, cap, PRT_STATUS_VERSION_MISMATCH, "import config struct_size %u is too small",
                        cfg->struct_size);
        memcpy(&im.cfg, cfg, cfg->struct_size < sizeof im.cfg ? cfg->struct_size : sizeof im.cfg);
    }
    im.m = m;
    im.r = r ? r : prt_registry_global();
    im.err = err;
    im.cap = cap;
    first_err[0] = 0;
    for (i = 0; i < m->pb->graph->n_node; i++)
        if (strcmp(prt__onnx_s(m->pb->graph->node[i]->op_type), "Shape") == 0) im.need_shapes = 1;
    /* extents also let the fusion pass take residual and scale inputs into a convolution */
    if (!im.cfg.no_fuse) im.need_shapes = 1;
    if ((s = prt_network_create(im.r, &im.net)) != PRT_OK) {
        fail(err, cap, s, "cannot create a network");
        return s;
    }
    if ((s = add_inputs(&im)) != PRT_OK) goto done;
    for (i = 0; i < m->pb->graph->n_node; i++) {
        int32_t idx = m->order[i];
        const PrtOnnx__Node *n = m->pb->graph->node[idx];
        int dep_missing = 0;
        s = import_node(&im, idx, &dep_missing);
        scratch_free(&im);
        if (s == PRT_OK) continue;
        if (!im.cfg.keep_going) goto done;
        im.nb_failed++;
        if (first == PRT_OK) {
            first = s;
            snprintf(first_err, sizeof first_err, "%s", err ? err : "");
        }
        if (im.cfg.issue) {
            char label[320];
            im.cfg.issue(im.cfg.issue_user, prt__onnx_node_label(n, idx, label, sizeof label),
                         prt__onnx_s(n->op_type), prt__onnx_s(n->domain), err && cap ? err : "");
        }
        for (k = 0; k < (int32_t)n->n_output; k++)
            if (n->output[k][0] && find(&im, n->output[k]) < 0 && !add_tensor(&im, n->output[k], T_MISSING)) {
                s = fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
                goto done;
            }
    }
    if (first != PRT_OK) {
        s = first;
        fail(err, cap, s, "%d node(s) cannot be imported; the first: %s", im.nb_failed, first_err);
        goto done;
    }
    if ((s = mark_outputs(&im)) != PRT_OK) goto done;
    if (!im.cfg.no_fuse) {
        prt_network *fused = NULL;
        int32_t nb_fused = 0;
        if ((s = prt__onnx_fuse(im.net, tinfo, &im, &fused, &nb_fused, err, cap)) != PRT_OK) goto done;
        if (fused) {
            prt_log(PRT_SEVERITY_VERBOSE, "ONNX import: %d layers fused", (int)nb_fused);
            prt_network_destroy(im.net);
            im.net = fused;
        }
    }
    *out = im.net;
    im.net = NULL;
done:
    scratch_free(&im);
    prt__free(im.scratch);
    for (k = 0; k < im.nb_t; k++) {
        prt__free(im.t[k].name);
        prt__onnx_value_free(&im.t[k].val);
    }
    prt__free(im.t);
    prt__free(im.keys);
    prt__free(im.vals);
    prt_network_destroy(im.net);
    return s;
}

prt_status prt_network_from_onnx(prt_registry *r, const void *data, size_t len, const char *base_dir,
                                 const prt_onnx_import_config *cfg, prt_network **out, char *err, size_t cap)
{
    prt_onnx_model *m = NULL;
    prt_status s = prt_onnx_model_parse(data, len, base_dir, &m, err, cap);
    if (s != PRT_OK) return s;
    s = prt_onnx_import(m, r, cfg, out, err, cap);
    prt_onnx_model_destroy(m);
    return s;
}

prt_status prt_network_from_onnx_file(prt_registry *r, const char *path, const prt_onnx_import_config *cfg,
                                      prt_network **out, char *err, size_t cap)
{
    prt_onnx_model *m = NULL;
    prt_status s = prt_onnx_model_load(path, &m, err, cap);
    if (s != PRT_OK) return s;
    s = prt_onnx_import(m, r, cfg, out, err, cap);
    prt_onnx_model_destroy(m);
    return s;
}
