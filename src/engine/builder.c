/*
 * engine/builder.c - a network into a plan: shape inference, type
 * negotiation with cast insertion, workspaces, the activation memory plan.
 *
 * Plugin calls, per layer in network order (docs/lifecycle.md):
 *   create (build phase), get_nb_outputs, output shapes, output data types
 *   for the declared input types, then for each candidate type assignment
 *   (output data types, supports_format_combination per position) until one
 *   is accepted, configure, get_workspace_size; for a layer that stays after
 *   folding, get_valid_tactics and, with several tactics, each timed on an
 *   instance of its own (engine/tactic.h) unless the timing cache
 *   (engine/tcache.h) or an identical layer of this build has the times; the
 *   fastest is recorded (TACT), and the cache gains this build's entries only
 *   when the build succeeds.
 * Then, for every layer in order, the plugin record is written (fields or
 * blob), and finally every build plugin is destroyed in order. The plan is
 * loaded back (prt_engine_deserialize) to make the engine.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/core.h"
#include "core/hmap.h"
#include "engine/devq.h"
#include "engine/expr.h"
#include "engine/fold.h"
#include "engine/netdef.h"
#include "engine/optio.h"
#include "engine/shapeval.h"
#include "engine/subnet.h"
#include "engine/runtime.h"
#include "engine/tactic.h"
#include "engine/tcache.h"

#define ARENA_ALIGN 256u

/* ---- recording expression builder ------------------------------------------ */

/* Wraps the arena's builder and numbers every node it hands out, so the plan
 * can store the expressions and the runtime evaluate them. */
typedef struct rec {
    prt_expr_builder pub;
    prt_expr_builder *under;
    prt__exprs *x;
    prt__pnode *nodes;
    const prt_expr **ptrs;
    prt__hmap index; /* node pointer -> its number */
    int32_t nb, cap;
    int failed;
} rec;

static int32_t rec_find(const rec *r, const prt_expr *e)
{
    if (!e) return -1;
    return prt__hmap_get(&r->index, e);
}

static int32_t rec_add(rec *r, const prt_expr *e, uint8_t kind, uint8_t op, int32_t a, int32_t b, int64_t v)
{
    int32_t i;
    if (!e) {
        r->failed = 1;
        return -1;
    }
    if ((i = rec_find(r, e)) >= 0) return i;
    if (prt__hmap_put(&r->index, e, r->nb) != 0) {
        r->failed = 1;
        return -1;
    }
    if (r->nb == r->cap) {
        int32_t ncap = r->cap ? r->cap * 2 : 64;
        prt__pnode *n = prt__realloc(r->nodes, (size_t)ncap * sizeof *n);
        const prt_expr **p;
        if (!n) {
            r->failed = 1;
            return -1;
        }
        r->nodes = n;
        p = prt__realloc((void *)r->ptrs, (size_t)ncap * sizeof *p);
        if (!p) {
            r->failed = 1;
            return -1;
        }
        r->ptrs = p;
        r->cap = ncap;
    }
    r->nodes[r->nb].kind = kind;
    r->nodes[r->nb].op = op;
    r->nodes[r->nb].a = a;
    r->nodes[r->nb].b = b;
    r->nodes[r->nb].v = v;
    r->ptrs[r->nb] = e;
    return r->nb++;
}

static rec *rec_of(prt_expr_builder *eb) { return (rec *)eb->host_; }

static const prt_expr *rec_constant(prt_expr_builder *eb, int64_t value)
{
    rec *r = rec_of(eb);
    const prt_expr *e = r->under->constant(r->under, value);
    return rec_add(r, e, PRT__NODE_CONST, 0, 0, 0, value) >= 0 ? e : NULL;
}

static const prt_expr *rec_operation(prt_expr_builder *eb, prt_expr_op op, const prt_expr *a, const prt_expr *b)
{
    rec *r = rec_of(eb);
    int32_t ia = rec_find(r, a), ib = rec_find(r, b);
    const prt_expr *e;
    if (ia < 0 || ib < 0 || (unsigned)op > (unsigned)PRT_EXPR_CEIL_DIV) return NULL;
    e = r->under->operation(r->under, op, a, b);
    return rec_add(r, e, PRT__NODE_OP, (uint8_t)op, ia, ib, 0) >= 0 ? e : NULL;
}

static int rec_get_constant(prt_expr_builder *eb, const prt_expr *e, int64_t *value)
{
    rec *r = rec_of(eb);
    if (rec_find(r, e) < 0) return 0;
    return r->under->get_constant(r->under, e, value);
}

static const prt_expr *rec_data_dependent(prt_expr_builder *eb, const prt_expr *upper)
{
    rec *r = rec_of(eb);
    int32_t iu = rec_find(r, upper);
    const prt_expr *e;
    if (iu < 0) return NULL;
    e = r->under->data_dependent(r->under, upper);
    return rec_add(r, e, PRT__NODE_DDEP, 0, iu, 0, 0) >= 0 ? e : NULL;
}

/* ---- build state ---------------------------------------------------------------- */

typedef struct bstate {
    const prt_network *net;
    const prt_builder_config *cfg;
    prt_registry *reg;
    char *err;
    size_t cap;
    rec rc;
    prt__plan *p; /* being filled */
    int32_t cap_tensors, cap_layers, cap_records, cap_folds;
    int32_t *net2plan;   /* net tensor -> plan tensor (the version it was produced as) */
    prt_dtype *declared; /* net tensor -> dtype under the declared (fp32) types */
    int32_t *plan2net;   /* plan tensor -> net tensor */
    prt__plugin **plugins; /* per plan layer, NULL for casts */
    prt_dims *in_min, *in_opt, *in_max; /* per graph input */
    prt__hmap names;     /* plan tensor name -> index */
    int32_t (*versions)[4]; /* net tensor -> its plan tensors in creation order (the first 4) */
    uint8_t *nb_versions;   /* net tensor -> how many; 5 = more than fit */
    int strict_types; /* prt_op: the inputs' own types only, no casts */
    uint8_t *wbuf;
    size_t wlen, wcap;
    struct folded { /* outputs of folded layers: constants with data made here */
        int32_t tensor;
        void *data;
        size_t bytes;
    } *folded;
    int32_t nb_folded, cap_folded;
    /* Tactic timing: the bench (made at the first layer to time; NULL with
     * no_device set when the target device is not there), and the timing
     * cache entries this build measured, added to the cache if it succeeds. */
    prt__tactic_bench *bench;
    int no_device;
    prt__tentry **pending;
    int32_t nb_pending, cap_pending;
} bstate;

static prt_status bfail(bstate *b, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static prt_status bfail(bstate *b, prt_status s, const char *fmt, ...)
{
    va_list ap;
    if (b->err && b->cap) {
        va_start(ap, fmt);
        vsnprintf(b->err, b->cap, fmt, ap);
        va_end(ap);
    }
    return s;
}

static int grow(void **arr, int32_t *cap, int32_t nb, size_t elem)
{
    void *p;
    int32_t ncap;
    if (nb < *cap) return 1;
    ncap = *cap ? *cap * 2 : 16;
    p = prt__realloc(*arr, (size_t)ncap * elem);
    if (!p) return 0;
    memset((char *)p + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
    *arr = p;
    *cap = ncap;
    return 1;
}

static int name_taken(const bstate *b, const char *name)
{
    return prt__hmap_get(&b->names, name) >= 0;
}

/* A new plan tensor; name made unique with "#n" when needed. Returns the
 * index or -1 (out of memory). */
static int32_t new_tensor(bstate *b, const char *name, uint32_t role, prt_dtype dtype, int32_t net_index)
{
    prt__plan *p = b->p;
    prt__ptensor *t;
    char buf[4200];
    int n = 1;
    int32_t old_cap = b->cap_tensors;
    if (!grow((void **)&p->tensors, &b->cap_tensors, p->nb_tensors, sizeof *p->tensors)) return -1;
    if (old_cap != b->cap_tensors) {
        int32_t *q = prt__realloc(b->plan2net, (size_t)b->cap_tensors * sizeof *q);
        if (!q) return -1;
        b->plan2net = q;
    }
    snprintf(buf, sizeof buf, "%s", name);
    while (name_taken(b, buf)) snprintf(buf, sizeof buf, "%s#%d", name, n++);
    t = &p->tensors[p->nb_tensors];
    memset(t, 0, sizeof *t);
    t->name = prt__strdup(buf);
    if (!t->name) return -1;
    if (prt__hmap_put(&b->names, t->name, p->nb_tensors) != 0) {
        prt__free(t->name);
        t->name = NULL;
        return -1;
    }
    t->role = role;
    t->dtype = dtype;
    t->format = PRT_FORMAT_LINEAR;
    t->nb_vals = -1;
    b->plan2net[p->nb_tensors] = net_index;
    if (net_index >= 0 && b->nb_versions[net_index] < 4)
        b->versions[net_index][b->nb_versions[net_index]++] = p->nb_tensors;
    else if (net_index >= 0)
        b->nb_versions[net_index] = 5;
    return p->nb_tensors++;
}

static int32_t new_layer(bstate *b, const char *name, uint32_t kind)
{
    prt__plan *p = b->p;
    prt__player *l;
    int32_t old_cap = b->cap_layers;
    if (!grow((void **)&p->layers, &b->cap_layers, p->nb_layers, sizeof *p->layers)) return -1;
    if (old_cap != b->cap_layers) {
        prt__plugin **q = prt__realloc(b->plugins, (size_t)b->cap_layers * sizeof *q);
        if (!q) return -1;
        memset(q + old_cap, 0, (size_t)(b->cap_layers - old_cap) * sizeof *q);
        b->plugins = q;
    }
    l = &p->layers[p->nb_layers];
    memset(l, 0, sizeof *l);
    l->name = prt__strdup(name);
    if (!l->name) return -1;
    l->kind = kind;
    l->plugin = -1;
    b->plugins[p->nb_layers] = NULL;
    return p->nb_layers++;
}

static const char *graph_inputs_str(bstate *b, const prt_dims *dims, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t i, k = 0;
    char d[160];
    buf[0] = 0;
    for (i = 0; i < b->p->nb_tensors && n < cap; i++) {
        if (b->p->tensors[i].role != PRT__ROLE_INPUT) continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s %s", k ? ", " : "", b->p->tensors[i].name,
                              prt_dims_str(&dims[k], d, sizeof d));
        k++;
    }
    return buf;
}

/* Dims of plan tensor t at the three profile points; every extent must be
 * computable and >= 0. `who` names the layer for messages. */
static prt_status eval_ranges(bstate *b, int32_t ti, const char *who)
{
    prt__plan *p = b->p;
    prt__ptensor *t = &p->tensors[ti];
    int64_t *vals;
    int k;
    int32_t j;
    prt_status s = PRT_OK;
    const prt_dims *ins[3] = {b->in_min, b->in_opt, b->in_max};
    static const char *const at[3] = {"min", "opt", "max"};
    prt_dims *outs[3] = {&t->min, &t->opt, &t->max};

    p->nodes = b->rc.nodes;
    p->nb_nodes = b->rc.nb;
    vals = prt__malloc((size_t)(p->nb_nodes ? p->nb_nodes : 1) * sizeof *vals);
    if (!vals) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (k = 0; k < 3; k++) {
        outs[k]->nb = t->nb_dims;
        prt__plan_eval(p, ins[k], vals, NULL);
        for (j = 0; j < t->nb_dims; j++) {
            int64_t v = vals[t->expr[j]];
            if (v == PRT__EVAL_BAD) {
                char e[256], in[512];
                s = bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                          "%s: output \"%s\" dim %d = %s cannot be computed at the profile's %s shapes (%s): "
                          "division by zero or overflow",
                          who, t->name, j, prt__expr_str(b->rc.x, b->rc.ptrs[t->expr[j]], e, sizeof e), at[k],
                          graph_inputs_str(b, ins[k], in, sizeof in));
                goto done;
            }
            if (v < 0) {
                char e[256], in[512];
                s = bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                          "%s: output \"%s\" dim %d = %s is %" PRId64 " at the profile's %s shapes (%s); extents must "
                          "be >= 0",
                          who, t->name, j, prt__expr_str(b->rc.x, b->rc.ptrs[t->expr[j]], e, sizeof e), v, at[k],
                          graph_inputs_str(b, ins[k], in, sizeof in));
                goto done;
            }
            outs[k]->d[j] = v;
        }
    }
    /* max holds the largest extent seen, so that its volume bounds memory. */
    for (j = 0; j < t->nb_dims; j++) {
        if (t->min.d[j] > t->max.d[j]) t->max.d[j] = t->min.d[j];
        if (t->opt.d[j] > t->max.d[j]) t->max.d[j] = t->opt.d[j];
        if (t->min.d[j] > t->opt.d[j]) t->min.d[j] = t->opt.d[j];
        if (t->opt.d[j] > t->max.d[j]) t->opt.d[j] = t->max.d[j];
    }
done:
    prt__free(vals);
    return s;
}

/* The recorded node of each expression of d (a plugin's output dims or
 * values), into idx. */
static prt_status node_indices(bstate *b, const prt_dims_expr *d, int32_t *idx, const char *who, int32_t out_index,
                               const char *what)
{
    int32_t j;
    for (j = 0; j < d->nb; j++) {
        idx[j] = rec_find(&b->rc, d->d[j]);
        if (idx[j] < 0)
            return bfail(b, PRT_STATUS_PLUGIN_ERROR,
                         "%s: output %d %s %d is an expression that was not made by this build's expression builder",
                         who, out_index, what, j);
    }
    return PRT_OK;
}

/* Set a tensor's shape from expressions; dims hold what folds to a constant. */
static prt_status set_shape(bstate *b, int32_t ti, const prt_dims_expr *d, const char *who, int32_t out_index)
{
    prt__ptensor *t = &b->p->tensors[ti];
    int32_t j;
    prt_status s;
    if ((s = node_indices(b, d, t->expr, who, out_index, "dim")) != PRT_OK) return s;
    t->nb_dims = d->nb;
    t->dims.nb = d->nb;
    for (j = 0; j < d->nb; j++) {
        int64_t v;
        int32_t n = t->expr[j];
        t->dims.d[j] = (b->rc.nodes[n].kind != PRT__NODE_DDEP && b->rc.under->get_constant(b->rc.under, d->d[j], &v) &&
                        v >= 0)
                           ? v
                           : -1;
    }
    return PRT_OK;
}

/* Record a tensor's shape values (a plugin's out_values): every expression
 * made by this build, and as many as its fixed dims hold. */
static prt_status set_values(bstate *b, int32_t ti, const prt_dims_expr *v, const char *who, int32_t out_index)
{
    prt__ptensor *t = &b->p->tensors[ti];
    int64_t vol;
    prt_status s;
    char d[160];
    if (v->nb == PRT_NB_VALUES_UNKNOWN) return PRT_OK;
    vol = prt_dims_volume(&t->dims);
    if (t->nb_dims > 1 || vol != v->nb)
        return bfail(b, PRT_STATUS_PLUGIN_ERROR,
                     "%s: output %d gives %d shape values, but its dims %s %s; values need fixed 0-D or 1-D dims "
                     "holding that many elements",
                     who, out_index, (int)v->nb, prt_dims_str(&t->dims, d, sizeof d),
                     vol < 0 ? "are not fixed" : "hold another number");
    if ((s = node_indices(b, v, t->val, who, out_index, "value")) != PRT_OK) return s;
    t->nb_vals = v->nb;
    b->p->read_version = 2;
    return PRT_OK;
}

/* A version of plan tensor `src` in dtype `to`, made by a cast layer placed
 * now; reuses an existing one. */
static prt_status cast_version(bstate *b, int32_t src, prt_dtype to, uint32_t role, const char *name, int32_t *out)
{
    prt__plan *p = b->p;
    int32_t i, t, l;
    char nm[4200];
    prt_dtype from = p->tensors[src].dtype;
    int32_t net = b->plan2net[src];
    if (!name) {
        /* The first version of the net tensor in that dtype: from its short
         * list of versions when it has one (no scan of every tensor). */
        if (b->nb_versions[net] <= 4) {
            for (i = 0; i < b->nb_versions[net]; i++)
                if (p->tensors[b->versions[net][i]].dtype == to) {
                    *out = b->versions[net][i];
                    return PRT_OK;
                }
        } else {
            for (i = 0; i < p->nb_tensors; i++)
                if (b->plan2net[i] == net && p->tensors[i].dtype == to) {
                    *out = i;
                    return PRT_OK;
                }
        }
    }
    if (!((from == PRT_DTYPE_F32 && to == PRT_DTYPE_F16) || (from == PRT_DTYPE_F16 && to == PRT_DTYPE_F32)))
        return bfail(b, PRT_STATUS_TYPE_MISMATCH, "tensor \"%s\" is %s but %s is needed; only f32 <-> f16 casts exist",
                     p->tensors[src].name, prt_dtype_name(from), prt_dtype_name(to));
    snprintf(nm, sizeof nm, "%s:%s", b->net->tensors[net].name, prt_dtype_name(to));
    t = new_tensor(b, name ? name : nm, role, to, net);
    if (t < 0) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    {
        prt__ptensor *d = &p->tensors[t], *s = &p->tensors[src];
        d->nb_dims = s->nb_dims;
        memcpy(d->expr, s->expr, sizeof d->expr);
        d->dims = s->dims;
        d->min = s->min;
        d->opt = s->opt;
        d->max = s->max;
    }
    snprintf(nm, sizeof nm, "%s:to_%s", b->net->tensors[net].name, prt_dtype_name(to));
    l = new_layer(b, nm, PRT__LAYER_CAST);
    if (l < 0) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    p->layers[l].cast_from = from;
    p->layers[l].cast_to = to;
    p->layers[l].in = prt__malloc(sizeof(int32_t));
    p->layers[l].out = prt__malloc(sizeof(int32_t));
    if (!p->layers[l].in || !p->layers[l].out) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    p->layers[l].nb_in = p->layers[l].nb_out = 1;
    p->layers[l].in[0] = src;
    p->layers[l].out[0] = t;
    *out = t;
    return PRT_OK;
}

static const char *device_name(prt_device d) { return d == PRT_DEVICE_CUDA ? "cuda device" : "cpu"; }

static int is_float(prt_dtype t) { return t == PRT_DTYPE_F32 || t == PRT_DTYPE_F16; }

static void dyn_desc(const prt__ptensor *t, prt_dtype dtype, prt_dyn_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    d->desc.dtype = dtype;
    d->desc.format = PRT_FORMAT_LINEAR;
    d->desc.dims = t->dims;
    d->min = t->min;
    d->opt = t->opt;
    d->max = t->max;
}

/* The build-time descriptors of a layer's inputs (pin[i] < 0: absent) and
 * outputs under the candidate types. */
static void io_descs(bstate *b, const int32_t *pin, const prt_dtype *cand, int32_t nin, const prt__net_layer *nl,
                     const prt_dtype *cand_out, int32_t nout, prt_dyn_tensor_desc *io)
{
    int32_t i;
    for (i = 0; i < nin; i++) {
        if (pin[i] < 0) prt__optio_absent_dyn(&io[i]);
        else dyn_desc(&b->p->tensors[pin[i]], cand[i], &io[i]);
    }
    for (i = 0; i < nout; i++) dyn_desc(&b->p->tensors[b->net2plan[nl->out[i]]], cand_out[i], &io[nin + i]);
}

static const char *types_str(const prt_dtype *t, int32_t n, char *buf, size_t cap)
{
    size_t k = 0;
    int32_t i;
    buf[0] = 0;
    k += (size_t)snprintf(buf, cap, "(");
    for (i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%s", i ? ", " : "", prt_dtype_name(t[i]));
    if (k < cap) snprintf(buf + k, cap - k, ")");
    return buf;
}

/* ---- constant folding ---------------------------------------------------------- */

/* The data of a constant plan tensor: the network's, or a folded layer's. */
static const void *const_data(const bstate *b, int32_t ti)
{
    int32_t k;
    for (k = 0; k < b->nb_folded; k++)
        if (b->folded[k].tensor == ti) return b->folded[k].data;
    return b->net->tensors[b->plan2net[ti]].data;
}

/* A copy of s (NULL when out of memory); "" for NULL. */
static char *dup_or_empty(const char *s) { return prt__strdup(s ? s : ""); }

/* Layer `li` (the last one, just configured) reads only constants, and its
 * outputs are fixed-size activations no caller binds: run it once on the
 * CPU and make its outputs constants; the layer leaves the plan. Not
 * foldable, or a CPU run that fails (a CUDA-only plugin): the layer stays,
 * and that is not an error. */
static prt_status fold_layer(bstate *b, int32_t li, const prt__net_layer *nl, size_t ws)
{
    prt__plan *p = b->p;
    prt__player *l = &p->layers[li];
    prt__plugin *pl = b->plugins[li];
    prt_tensor_desc *din = NULL, *dout = NULL;
    const void **ins = NULL;
    void **outs = NULL;
    prt__pfold *f = NULL;
    char msg[PRT_ERR_CAP];
    int32_t i, j, all_values = 1;
    prt_status s = PRT_OK;

    for (i = 0; i < l->nb_in; i++)
        if (l->in[i] >= 0 && p->tensors[l->in[i]].role != PRT__ROLE_CONSTANT) return PRT_OK;
    for (i = 0; i < l->nb_out; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        if (b->net->tensors[nl->out[i]].is_output) return PRT_OK;
        if (t->nb_vals < 0) all_values = 0;
        for (j = 0; j < t->nb_dims; j++)
            if (t->dims.d[j] < 0 || p->nodes[t->expr[j]].kind == PRT__NODE_DDEP) return PRT_OK;
    }
    if (all_values) return PRT_OK; /* computed on the host already, never enqueued */
    din = prt__calloc((size_t)l->nb_in + 1, sizeof *din);
    dout = prt__calloc((size_t)l->nb_out, sizeof *dout);
    ins = prt__calloc((size_t)l->nb_in + 1, sizeof *ins);
    outs = prt__calloc((size_t)l->nb_out, sizeof *outs);
    if (!din || !dout || !ins || !outs ||
        !grow((void **)&b->folded, &b->cap_folded, b->nb_folded + l->nb_out, sizeof *b->folded)) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    while (b->nb_folded + l->nb_out > b->cap_folded)
        if (!grow((void **)&b->folded, &b->cap_folded, b->cap_folded, sizeof *b->folded)) {
            s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
    for (i = 0; i < l->nb_in; i++) {
        const prt__ptensor *t;
        if (l->in[i] < 0) {
            prt__optio_absent(&din[i]);
            continue;
        }
        t = &p->tensors[l->in[i]];
        din[i].dtype = t->dtype;
        din[i].format = t->format;
        din[i].dims = t->dims;
        ins[i] = const_data(b, l->in[i]);
    }
    for (i = 0; i < l->nb_out; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        dout[i].dtype = t->dtype;
        dout[i].format = t->format;
        dout[i].dims = t->dims;
    }
    msg[0] = 0;
    if (prt__fold_run(pl, din, ins, l->nb_in, dout, outs, l->nb_out, ws, msg, sizeof msg) != PRT_OK) {
        prt_log(PRT_SEVERITY_INFO, "layer \"%s\" reads only constants but stays in the plan: %s", l->name, msg);
        goto done;
    }
    /* The record of what was folded, for inspect. */
    if (!grow((void **)&p->folds, &b->cap_folds, p->nb_folds, sizeof *p->folds)) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    f = &p->folds[p->nb_folds];
    memset(f, 0, sizeof *f);
    f->layer = dup_or_empty(l->name);
    f->plugin = dup_or_empty(pl->creator->name);
    f->version = dup_or_empty(pl->creator->version);
    f->outputs = prt__calloc((size_t)l->nb_out, sizeof *f->outputs);
    p->nb_folds++; /* owns what is set from here */
    if (!f->layer || !f->plugin || !f->version || !f->outputs) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (i = 0; i < l->nb_out; i++) {
        prt__ptensor *t = &p->tensors[l->out[i]];
        if (!(f->outputs[i] = dup_or_empty(t->name))) {
            s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        f->nb_out = i + 1;
        t->role = PRT__ROLE_CONSTANT;
        for (j = 0; j < t->nb_dims; j++)
            t->expr[j] = rec_add(&b->rc, prt__exprs_const(b->rc.x, t->dims.d[j]), PRT__NODE_CONST, 0, 0, 0,
                                 t->dims.d[j]);
        t->min = t->opt = t->max = t->dims;
        b->folded[b->nb_folded].tensor = l->out[i];
        b->folded[b->nb_folded].data = outs[i];
        b->folded[b->nb_folded].bytes = (size_t)prt_dims_volume(&t->dims) * prt_dtype_size(t->dtype);
        b->nb_folded++;
        outs[i] = NULL;
        if (t->nb_vals < 0 && prt__shapeval_fits(t->dtype, &t->dims)) { /* a small integer result: values */
            int32_t n = (int32_t)prt_dims_volume(&t->dims);
            for (j = 0; j < n; j++) {
                int64_t v = prt__shapeval_element(t->dtype, b->folded[b->nb_folded - 1].data, j);
                t->val[j] = rec_add(&b->rc, prt__exprs_const(b->rc.x, v), PRT__NODE_CONST, 0, 0, 0, v);
            }
            t->nb_vals = n;
        }
    }
    if (b->rc.failed) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    /* The layer leaves the plan. */
    prt__plugin_destroy(pl);
    b->plugins[li] = NULL;
    prt__free(l->name);
    prt__free(l->in);
    prt__free(l->out);
    p->nb_layers--;
done:
    if (outs)
        for (i = 0; i < l->nb_out; i++) prt__free(outs[i]);
    prt__free(din);
    prt__free(dout);
    prt__free(ins);
    prt__free(outs);
    return s;
}

/* ---- tactics ------------------------------------------------------------------ */

static const char *const tactic_source_text[PRT__TACTIC_SOURCE_COUNT_] = {
    "timed", "from the timing cache", "the only one", "timing is off", "no device to time on",
    "every tactic failed when timed"};

/* FNV-1a 64 of the plugin record's body (its fields or blob). */
static prt_status body_hash(bstate *b, prt__plugin *pl, uint64_t *out)
{
    prt_writer w = prt_writer_init(NULL, 0);
    char msg[PRT_ERR_CAP];
    uint8_t *buf;
    prt_status s;
    msg[0] = 0;
    if ((s = prt__plugin_write_body(pl, &w, msg, sizeof msg)) != PRT_OK) return bfail(b, s, "%s", msg);
    buf = prt__malloc(w.len ? w.len : 1);
    if (!buf) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    {
        size_t n = w.len;
        w = prt_writer_init(buf, n);
        s = prt__plugin_write_body(pl, &w, msg, sizeof msg);
        if (s == PRT_OK && w.len != n) {
            snprintf(msg, sizeof msg, "%s: the plugin record changed size between two writes", pl->layer);
            s = PRT_STATUS_PLUGIN_ERROR;
        }
    }
    if (s == PRT_OK) *out = prt__plan_checksum(buf, w.len);
    prt__free(buf);
    return s == PRT_OK ? s : bfail(b, s, "%s", msg);
}

/* The times of `key` measured earlier in this build: 1 and ns set, or 0. */
static int pending_lookup(const bstate *b, const uint8_t *key, size_t len, const int32_t *ids, int32_t nb,
                          uint64_t *ns)
{
    int32_t k, i, j;
    for (k = 0; k < b->nb_pending; k++) {
        const prt__tentry *e = b->pending[k];
        if (e->len != len || memcmp(e->key, key, len) != 0 || e->nb != nb) continue;
        for (i = 0; i < nb; i++) {
            for (j = 0; j < e->nb && e->ids[j] != ids[i]; j++) {}
            if (j == e->nb) return 0;
            ns[i] = e->ns[j];
        }
        return 1;
    }
    return 0;
}

/* Time the candidates of layer li (or take them from this build's or the
 * timing cache's entries): source TIMED, CACHE or FAILED. */
static prt_status time_tactics(bstate *b, int32_t li, const int32_t *ids, int32_t nb, size_t ws, uint64_t *ns,
                               uint32_t *source, const char *who)
{
    prt__plan *p = b->p;
    const prt__player *l = &p->layers[li];
    prt__plugin *pl = b->plugins[li];
    prt_tensor_desc *in = NULL, *out = NULL;
    const void **data = NULL;
    void **owned = NULL;
    int64_t *vals = NULL;
    uint8_t *key = NULL;
    size_t klen = 0;
    uint64_t h = 0;
    int32_t i, j;
    char why[PRT_ERR_CAP];
    prt_status s = PRT_OK;
    prt__tactic_layer tl;

    in = prt__calloc((size_t)l->nb_in + 1, sizeof *in);
    out = prt__calloc((size_t)l->nb_out + 1, sizeof *out);
    data = prt__calloc((size_t)l->nb_in + 1, sizeof *data);
    owned = prt__calloc((size_t)l->nb_in + 1, sizeof *owned);
    vals = prt__calloc((size_t)p->nb_nodes + 1, sizeof *vals);
    if (!in || !out || !data || !owned || !vals) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    /* The opt shapes, and the inputs' data where it is known: constants,
     * and the values of shape-value tensors there. */
    p->nodes = b->rc.nodes;
    p->nb_nodes = b->rc.nb;
    prt__plan_eval(p, b->in_opt, vals, NULL);
    for (i = 0; i < l->nb_in; i++) {
        const prt__ptensor *t;
        if (l->in[i] < 0) {
            prt__optio_absent(&in[i]);
            continue;
        }
        t = &p->tensors[l->in[i]];
        in[i].dtype = t->dtype;
        in[i].format = t->format;
        in[i].dims = t->opt;
        if (t->role == PRT__ROLE_CONSTANT) {
            data[i] = const_data(b, l->in[i]);
        } else if (t->nb_vals >= 0 && (t->dtype == PRT_DTYPE_I32 || t->dtype == PRT_DTYPE_I64)) {
            owned[i] = prt__calloc((size_t)t->nb_vals + 1, 8);
            if (!owned[i]) {
                s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
                goto done;
            }
            for (j = 0; j < t->nb_vals; j++) {
                int64_t v = vals[t->val[j]];
                if (t->dtype == PRT_DTYPE_I32) ((int32_t *)owned[i])[j] = (int32_t)v;
                else ((int64_t *)owned[i])[j] = v;
            }
            data[i] = owned[i];
        }
    }
    for (i = 0; i < l->nb_out; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        out[i].dtype = t->dtype;
        out[i].format = t->format;
        out[i].dims = t->opt;
    }
    /* This build or the cache may have timed the same layer already. */
    if ((s = body_hash(b, pl, &h)) != PRT_OK) goto done;
    s = prt__tcache_key(pl->creator->name, pl->creator->version, pl->creator->plugin_namespace, h,
                        prt__tactic_bench_device(b->bench), in, l->nb_in, &key, &klen);
    if (s != PRT_OK) {
        s = bfail(b, s, "%s: out of memory making its timing cache key", who);
        goto done;
    }
    if (pending_lookup(b, key, klen, ids, nb, ns) ||
        (b->cfg->timing_cache && prt__tcache_lookup(b->cfg->timing_cache, key, klen, ids, nb, ns))) {
        *source = PRT__TACTIC_CACHE;
        goto done;
    }
    tl.pl = pl;
    tl.in = in;
    tl.in_data = data;
    tl.nb_in = l->nb_in;
    tl.out = out;
    tl.nb_out = l->nb_out;
    tl.workspace = ws;
    why[0] = 0;
    prt_log(PRT_SEVERITY_INFO, "%s: timing %d tactics on the %s", who, (int)nb, prt__tactic_bench_device(b->bench));
    s = prt__tactic_time(b->bench, &tl, ids, nb, b->cfg->timing_warmup, b->cfg->timing_runs, ns, why, sizeof why);
    if (s != PRT_OK) {
        s = bfail(b, s, "%s: %s timing its tactics on the %s: %s", who,
                  s == PRT_STATUS_OUT_OF_MEMORY ? "out of memory" : "failed", prt__tactic_bench_device(b->bench), why);
        goto done;
    }
    *source = PRT__TACTIC_FAILED;
    for (i = 0; i < nb; i++)
        if (ns[i] != PRT__TACTIC_NS_FAILED) *source = PRT__TACTIC_TIMED;
    if (why[0])
        prt_log(PRT_SEVERITY_WARNING, "%s: %s%s", who, why,
                *source == PRT__TACTIC_FAILED ? "; every tactic failed: the first is kept" : "; it is not chosen");
    if (*source == PRT__TACTIC_TIMED) {
        prt__tentry *e;
        if (!grow((void **)&b->pending, &b->cap_pending, b->nb_pending, sizeof *b->pending) ||
            !(e = prt__tentry_new(key, klen, ids, ns, nb))) {
            s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        b->pending[b->nb_pending++] = e;
    }
done:
    if (owned)
        for (i = 0; i < l->nb_in; i++) prt__free(owned[i]);
    prt__free(owned);
    prt__free(key);
    prt__free(vals);
    prt__free(data);
    prt__free(in);
    prt__free(out);
    return s;
}

/* Layer li (configured, not folded): when its plugin lists tactics, choose
 * one and record it (TACT). io holds the layer's build descriptors. */
static prt_status choose_tactic(bstate *b, int32_t li, const prt_dyn_tensor_desc *io, int32_t nin, int32_t nout,
                                size_t ws, const char *who)
{
    prt__plan *p = b->p;
    prt__player *l = &p->layers[li];
    prt__plugin *pl = b->plugins[li];
    int32_t ids[PRT__MAX_TACTICS], nb = 0, i, best = 0;
    uint64_t ns[PRT__MAX_TACTICS];
    uint32_t source = PRT__TACTIC_ONLY;
    const char *name;
    prt__ptactic *t;
    char msg[PRT_ERR_CAP];
    prt_status s;

    for (i = 0; i < l->nb_out && p->tensors[l->out[i]].nb_vals >= 0; i++) {}
    if (i == l->nb_out && l->nb_out > 0) return PRT_OK; /* never enqueued */
    msg[0] = 0;
    if ((s = prt__plugin_tactics(pl, io, nin, io + nin, nout, b->cfg->device, ids, &nb, msg, sizeof msg)) != PRT_OK)
        return bfail(b, s, "%s", msg);
    if (nb == 0) return PRT_OK;
    memset(ns, 0, sizeof ns);
    if (nb == 1) {
        source = PRT__TACTIC_ONLY;
    } else if (b->cfg->tactic_timing == PRT_TACTIC_TIMING_OFF) {
        source = PRT__TACTIC_UNTIMED;
    } else {
        if (!b->bench && !b->no_device) {
            msg[0] = 0;
            s = prt__tactic_bench_create(b->cfg->device, b->cfg->timing_threads, &b->bench, msg, sizeof msg);
            if (s == PRT_STATUS_OUT_OF_MEMORY) return bfail(b, s, "out of memory");
            if (s != PRT_OK) {
                b->no_device = 1;
                prt_log(PRT_SEVERITY_WARNING,
                        "tactics are not timed in this build (%s); each layer keeps its first tactic", msg);
            }
        }
        if (!b->bench) source = PRT__TACTIC_NO_DEVICE;
        else if ((s = time_tactics(b, li, ids, nb, ws, ns, &source, who)) != PRT_OK) return s;
    }
    if (source == PRT__TACTIC_TIMED || source == PRT__TACTIC_CACHE) {
        for (i = 1; i < nb; i++)
            if (ns[i] < ns[best]) best = i; /* ties: the earlier, as the plugin prefers */
        if (ns[best] == PRT__TACTIC_NS_FAILED) source = PRT__TACTIC_FAILED; /* a cache entry of failures */
    }
    t = prt__calloc(1, sizeof *t);
    if (!t) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    name = prt__plugin_tactic_name(pl, ids[best]);
    t->tactic = ids[best];
    t->source = source;
    t->nb = nb;
    t->name = prt__strdup(name ? name : "");
    t->ids = prt__malloc((size_t)nb * sizeof *t->ids);
    t->ns = prt__malloc((size_t)nb * sizeof *t->ns);
    if (!t->name || !t->ids || !t->ns) {
        prt__ptactic_free(t);
        return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    memcpy(t->ids, ids, (size_t)nb * sizeof *ids);
    memcpy(t->ns, ns, (size_t)nb * sizeof *ns);
    l->tactic = t;
    pl->tactic = t->tactic;
    if (source != PRT__TACTIC_ONLY)
        prt_log(PRT_SEVERITY_INFO, "%s: tactic %d%s%s%s of %d (%s)", who, (int)t->tactic, t->name[0] ? " (" : "",
                t->name, t->name[0] ? ")" : "", (int)nb, tactic_source_text[source]);
    return PRT_OK;
}

/* Constants no layer reads (the inputs of folded layers, say) leave the
 * plan; tensor indices are renumbered. */
static prt_status drop_unread_constants(bstate *b)
{
    prt__plan *p = b->p;
    int32_t *map, i, j, n = 0;
    map = prt__calloc((size_t)p->nb_tensors + 1, sizeof *map);
    if (!map) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < p->nb_layers; i++)
        for (j = 0; j < p->layers[i].nb_in; j++)
            if (p->layers[i].in[j] >= 0) map[p->layers[i].in[j]] = 1;
    for (i = 0; i < p->nb_tensors; i++) {
        if (p->tensors[i].role == PRT__ROLE_CONSTANT && !map[i]) {
            prt__free(p->tensors[i].name);
            map[i] = -1;
            continue;
        }
        map[i] = n;
        p->tensors[n] = p->tensors[i];
        b->plan2net[n] = b->plan2net[i];
        n++;
    }
    for (i = 0; i < p->nb_layers; i++) {
        for (j = 0; j < p->layers[i].nb_in; j++)
            if (p->layers[i].in[j] >= 0) p->layers[i].in[j] = map[p->layers[i].in[j]];
        for (j = 0; j < p->layers[i].nb_out; j++) p->layers[i].out[j] = map[p->layers[i].out[j]];
    }
    for (i = 0, j = 0; i < b->nb_folded; i++) {
        if (map[b->folded[i].tensor] < 0) {
            prt__free(b->folded[i].data);
            continue;
        }
        b->folded[j] = b->folded[i];
        b->folded[j++].tensor = map[b->folded[i].tensor];
    }
    b->nb_folded = j;
    p->nb_tensors = n;
    prt__free(map);
    return PRT_OK;
}

/* One network layer. */
static prt_status build_layer(bstate *b, int32_t li)
{
    const prt__net_layer *nl = &b->net->layers[li];
    prt__plan *p = b->p;
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    prt__plugin *pl = NULL;
    char who[600], msg[PRT_ERR_CAP], why[PRT_ERR_CAP] = "";
    prt_status why_s = PRT_STATUS_TYPE_MISMATCH;
    prt_status s;
    int32_t nin = nl->nb_in, nout = nl->nb_out, i, j, k, pli;
    int32_t *pin = NULL; /* plan tensor per input, per candidate */
    prt_dims_expr *ein = NULL, *eout = NULL;
    prt_dtype *decl_in = NULL, *decl_out = NULL, *cand = NULL, *cand_out = NULL;
    prt_dyn_tensor_desc *io = NULL;
    int found = 0, decl_ok, optio = 0;
    int32_t refused = -1;
    prt_io_info info;
    prt_dims_expr *vin = NULL, *vout = NULL;
    size_t ws;

    snprintf(who, sizeof who, "layer \"%.200s\" (%s%s%.100s v%.40s)", nl->name, nl->plugin_namespace,
             nl->plugin_namespace[0] ? "::" : "", nl->plugin, nl->version);
    msg[0] = 0;
    if (nl->proto) { /* prt_op: the op's own plugin, as it is */
        s = prt__plugin_clone(nl->proto, &pl, msg, sizeof msg);
    } else {
        s = prt_registry_find(b->reg, nl->plugin, nl->version, nl->plugin_namespace, &c, &owner);
        if (s != PRT_OK) return bfail(b, s, "layer \"%s\": %s", nl->name, prt_registry_last_error(b->reg));
        s = prt__plugin_create(c, owner, nl->name, prt_owned_fields_get(nl->fields), PRT_PHASE_BUILD, &pl, msg,
                               sizeof msg);
    }
    if (s != PRT_OK) return bfail(b, s, "%s", msg);
    pli = new_layer(b, nl->name, PRT__LAYER_PLUGIN);
    if (pli < 0) {
        prt__plugin_destroy(pl);
        return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    b->plugins[pli] = pl; /* destroyed with the build state from here on */

    msg[0] = 0;
    if ((s = prt__optio_check(pl, who, nl->in, nin, nout, &info, &optio, msg, sizeof msg)) != PRT_OK)
        return bfail(b, s, "%s", msg);
    if (optio) p->read_version = 2;

    pin = prt__calloc((size_t)nin + 1, sizeof *pin);
    ein = prt__calloc((size_t)nin + 1, sizeof *ein);
    eout = prt__calloc((size_t)nout, sizeof *eout);
    decl_in = prt__calloc((size_t)nin + 1, sizeof *decl_in);
    decl_out = prt__calloc((size_t)nout, sizeof *decl_out);
    cand = prt__calloc((size_t)nin + 1, sizeof *cand);
    cand_out = prt__calloc((size_t)nout, sizeof *cand_out);
    io = prt__calloc((size_t)(nin + nout), sizeof *io);
    vin = prt__calloc((size_t)nin + 1, sizeof *vin);
    vout = prt__calloc((size_t)nout, sizeof *vout);
    if (!pin || !ein || !eout || !decl_in || !decl_out || !cand || !cand_out || !io || !vin || !vout) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }

    /* Shapes. */
    for (i = 0; i < nin; i++) {
        const prt__ptensor *t;
        vin[i].nb = PRT_NB_VALUES_UNKNOWN;
        if (nl->in[i] < 0) { /* absent */
            pin[i] = -1;
            prt__optio_absent_expr(&ein[i]);
            decl_in[i] = PRT_DTYPE_ABSENT;
            continue;
        }
        pin[i] = b->net2plan[nl->in[i]];
        t = &p->tensors[pin[i]];
        ein[i].nb = t->nb_dims;
        for (j = 0; j < t->nb_dims; j++) ein[i].d[j] = b->rc.ptrs[t->expr[j]];
        vin[i].nb = t->nb_vals;
        for (j = 0; j < t->nb_vals; j++) vin[i].d[j] = b->rc.ptrs[t->val[j]];
        decl_in[i] = b->declared[nl->in[i]];
        if (i < 32 && (info.value_inputs >> i & 1u) && t->nb_vals < 0) {
            char d[160];
            s = bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                      "%s: input %d (\"%s\", %s %s) is a shape-value input, but its values are not known before the "
                      "run; expected a 0-D or 1-D int32/int64 tensor of at most %d elements from a constant, a "
                      "shape-value input or a layer that computes it on the host",
                      who, (int)i, t->name, prt_dtype_name(t->dtype), prt_dims_str(&t->dims, d, sizeof d),
                      PRT_MAX_DIMS);
            goto done;
        }
    }
    msg[0] = 0;
    s = prt__shapeval_outputs(pl, ein, vin, nin, eout, vout, nout, &b->rc.pub, msg, sizeof msg);
    if (s != PRT_OK) {
        char shapes[1024];
        size_t n = 0;
        shapes[0] = 0;
        for (i = 0; i < nin && n < sizeof shapes; i++) {
            char d[160];
            n += (size_t)snprintf(shapes + n, sizeof shapes - n, "%s%s %s", i ? ", " : "",
                                  pin[i] < 0 ? "(absent)" : p->tensors[pin[i]].name,
                                  pin[i] < 0 ? "-" : prt_dims_str(&p->tensors[pin[i]].dims, d, sizeof d));
        }
        s = bfail(b, s, "%s (inputs %s)", msg, shapes);
        goto done;
    }
    if (b->rc.failed) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory recording shape expressions", who);
        goto done;
    }

    /* Declared output types (what the outputs are with the declared input types). */
    msg[0] = 0;
    decl_ok = prt__plugin_output_types(pl, decl_in, nin, decl_out, nout, msg, sizeof msg) == PRT_OK;
    if (!decl_ok)
        for (i = 0; i < nout; i++) decl_out[i] = PRT_DTYPE_F32; /* settled by the accepted types below */

    /* Output tensors (dtype decided below). */
    for (i = 0; i < nout; i++) {
        int32_t ni = nl->out[i];
        int32_t t = new_tensor(b, b->net->tensors[ni].name, PRT__ROLE_ACTIVATION, decl_out[i], ni);
        if (t < 0) {
            s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        b->declared[ni] = decl_out[i];
        b->net2plan[ni] = t;
        if ((s = set_shape(b, t, &eout[i], who, i)) != PRT_OK) goto done;
        if ((s = eval_ranges(b, t, who)) != PRT_OK) goto done;
        if ((s = set_values(b, t, &vout[i], who, i)) != PRT_OK) goto done;
    }

    /* Type negotiation: candidates in order of preference. */
    for (k = 0; k < 4 && !found; k++) {
        int same_as_earlier = 0;
        if (b->strict_types && k != 1) continue;
        for (i = 0; i < nin; i++) {
            prt_dtype cur = pin[i] < 0 ? PRT_DTYPE_ABSENT : p->tensors[pin[i]].dtype;
            switch (k) {
            case 0: cand[i] = (b->cfg->precision == PRT_PRECISION_FP16 && is_float(cur)) ? PRT_DTYPE_F16 : cur; break;
            case 1: cand[i] = cur; break;
            case 2: cand[i] = is_float(cur) ? PRT_DTYPE_F32 : cur; break;
            default: cand[i] = is_float(cur) ? PRT_DTYPE_F16 : cur; break;
            }
        }
        if (k > 0 && !b->strict_types) {
            /* Skip a candidate equal to an earlier one (recompute them). */
            int32_t kk;
            for (kk = 0; kk < k && !same_as_earlier; kk++) {
                int eq = 1;
                for (i = 0; i < nin; i++) {
                    prt_dtype cur = pin[i] < 0 ? PRT_DTYPE_ABSENT : p->tensors[pin[i]].dtype, e;
                    switch (kk) {
                    case 0: e = (b->cfg->precision == PRT_PRECISION_FP16 && is_float(cur)) ? PRT_DTYPE_F16 : cur; break;
                    case 1: e = cur; break;
                    case 2: e = is_float(cur) ? PRT_DTYPE_F32 : cur; break;
                    default: e = is_float(cur) ? PRT_DTYPE_F16 : cur; break;
                    }
                    if (e != cand[i]) eq = 0;
                }
                if (eq) same_as_earlier = 1;
            }
        }
        if (same_as_earlier) continue;
        msg[0] = 0;
        s = prt__plugin_output_types(pl, cand, nin, cand_out, nout, msg, sizeof msg);
        if (s != PRT_OK) { /* this assignment is not one the plugin takes; keep its reason */
            why_s = s;
            snprintf(why, sizeof why, "%s", msg);
            continue;
        }
        io_descs(b, pin, cand, nin, nl, cand_out, nout, io);
        found = 1;
        for (i = 0; i < nin + nout && found; i++)
            if ((i >= nin || pin[i] >= 0) && !prt__devq_supports(pl, i, io, nin, nout, b->cfg->device)) {
                found = 0;
                refused = i;
            }
    }
    if (!found && b->strict_types && refused < 0) { /* the plugin refused the types themselves: its reason */
        s = bfail(b, why_s == PRT_STATUS_INVALID_ARGUMENT || why_s == PRT_STATUS_UNSUPPORTED ? why_s
                                                                                              : PRT_STATUS_TYPE_MISMATCH,
                  "%s: %s", who, why[0] ? why : "the plugin refuses its input types");
        goto done;
    }
    if (!found && b->strict_types) {
        s = bfail(b, PRT_STATUS_UNSUPPORTED, "%s: the plugin does not support %s %d as %s/%s on the %s", who,
                  refused < 0 ? "its input types" : refused < nin ? "input" : "output",
                  refused < 0 ? 0 : (int)(refused < nin ? refused : refused - nin),
                  refused < 0 ? "?" : prt_dtype_name(io[refused].desc.dtype),
                  refused < 0 ? "?" : prt_format_name(io[refused].desc.format), device_name(b->cfg->device));
        goto done;
    }
    if (!found) {
        char t1[256];
        for (i = 0; i < nin; i++) cand[i] = pin[i] < 0 ? PRT_DTYPE_ABSENT : p->tensors[pin[i]].dtype;
        s = bfail(b, PRT_STATUS_TYPE_MISMATCH,
                  "%s: the plugin accepts no type combination tried for its inputs %s (f32 and f16 variants of float "
                  "inputs, linear format) on the %s%s%s",
                  who, types_str(cand, nin, t1, sizeof t1), device_name(b->cfg->device), why[0] ? "; it said: " : "",
                  why);
        goto done;
    }
    /* Casts for inputs in another type; they run before this layer, so the
     * layer moves after them. */
    for (i = 0; i < nin; i++) {
        if (pin[i] >= 0 && p->tensors[pin[i]].dtype != cand[i]) {
            int32_t t;
            if ((s = cast_version(b, pin[i], cand[i], PRT__ROLE_ACTIVATION, NULL, &t)) != PRT_OK) goto done;
            pin[i] = t;
        }
    }
    if (p->layers[pli].kind == PRT__LAYER_PLUGIN && pli != p->nb_layers - 1) {
        /* Move the plugin layer to the end (after the casts just added). */
        prt__player l = p->layers[pli];
        prt__plugin *pp = b->plugins[pli];
        memmove(&p->layers[pli], &p->layers[pli + 1], (size_t)(p->nb_layers - pli - 1) * sizeof *p->layers);
        memmove(&b->plugins[pli], &b->plugins[pli + 1], (size_t)(p->nb_layers - pli - 1) * sizeof *b->plugins);
        pli = p->nb_layers - 1;
        p->layers[pli] = l;
        b->plugins[pli] = pp;
    }
    if (!decl_ok) {
        /* The plugin refuses the declared input types outright: its outputs
         * are declared as what it gives for the accepted ones. */
        for (i = 0; i < nout; i++) {
            decl_out[i] = cand_out[i];
            b->declared[nl->out[i]] = cand_out[i];
        }
    }
    for (i = 0; i < nout; i++) {
        int32_t t = b->net2plan[nl->out[i]];
        if (p->tensors[t].nb_vals >= 0 && cand_out[i] != PRT_DTYPE_I32 && cand_out[i] != PRT_DTYPE_I64) {
            s = bfail(b, PRT_STATUS_TYPE_MISMATCH, "%s: output %d (\"%s\") has shape values but type %s; expected "
                      "int32 or int64", who, (int)i, p->tensors[t].name, prt_dtype_name(cand_out[i]));
            goto done;
        }
        p->tensors[t].dtype = cand_out[i];
        if (cand_out[i] != decl_out[i]) {
            /* The produced version carries the dtype in its name. */
            char nm[4200];
            char *old = p->tensors[t].name, *nn;
            p->tensors[t].name = (char *)"";
            snprintf(nm, sizeof nm, "%s:%s", old, prt_dtype_name(cand_out[i]));
            {
                int n = 1;
                char buf[4300];
                snprintf(buf, sizeof buf, "%s", nm);
                while (name_taken(b, buf)) snprintf(buf, sizeof buf, "%s#%d", nm, n++);
                nn = prt__strdup(buf);
            }
            if (!nn) {
                p->tensors[t].name = old;
                s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
                goto done;
            }
            prt__hmap_remove(&b->names, old);
            (void)prt__hmap_put(&b->names, nn, t); /* cannot grow after the remove */
            prt__free(old);
            p->tensors[t].name = nn;
        }
    }
    io_descs(b, pin, cand, nin, nl, cand_out, nout, io);

    p->layers[pli].in = prt__malloc(((size_t)nin + 1) * sizeof(int32_t));
    p->layers[pli].out = prt__malloc((size_t)nout * sizeof(int32_t));
    if (!p->layers[pli].in || !p->layers[pli].out) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    p->layers[pli].nb_in = nin;
    p->layers[pli].nb_out = nout;
    for (i = 0; i < nin; i++) p->layers[pli].in[i] = pin[i];
    for (i = 0; i < nout; i++) p->layers[pli].out[i] = b->net2plan[nl->out[i]];

    msg[0] = 0;
    s = prt__plugin_configure(pl, io, nin, io + nin, nout, msg, sizeof msg);
    if (s != PRT_OK) {
        s = bfail(b, s, "%s", msg);
        goto done;
    }
    ws = prt__devq_workspace(pl, io, nin, io + nin, nout, b->cfg->device);
    if (ws == SIZE_MAX || (uint64_t)ws > (uint64_t)INT64_MAX) {
        s = bfail(b, PRT_STATUS_PLUGIN_ERROR, "%s: asks for %zu workspace bytes", who, ws);
        goto done;
    }
    if (b->cfg->workspace_limit && (uint64_t)ws > b->cfg->workspace_limit) {
        s = bfail(b, PRT_STATUS_OUT_OF_MEMORY, "%s: needs %zu workspace bytes at the profile's max shapes; the limit is %" PRIu64,
                  who, ws, b->cfg->workspace_limit);
        goto done;
    }
    p->layers[pli].workspace = (uint64_t)ws;

    /* Folding runs on the CPU: its workspace is the CPU's. */
    if ((s = fold_layer(b, pli, nl,
                        b->cfg->device == PRT_DEVICE_CPU ? ws
                                                         : prt__devq_workspace(pl, io, nin, io + nin, nout,
                                                                               PRT_DEVICE_CPU))) != PRT_OK)
        goto done;
    /* A layer that stays: its tactic. */
    if (pli < p->nb_layers && b->plugins[pli] == pl && (s = choose_tactic(b, pli, io, nin, nout, ws, who)) != PRT_OK)
        goto done;

    /* Network outputs are delivered in their declared type. */
    for (i = 0; i < nout; i++) {
        int32_t ni = nl->out[i], t = b->net2plan[ni];
        if (!b->net->tensors[ni].is_output) continue;
        if (p->tensors[t].dtype == b->declared[ni]) {
            p->tensors[t].role = PRT__ROLE_OUTPUT;
        } else {
            int32_t o;
            if ((s = cast_version(b, t, b->declared[ni], PRT__ROLE_OUTPUT, b->net->tensors[ni].name, &o)) != PRT_OK)
                goto done;
        }
    }
    s = PRT_OK;
done:
    prt__free(vin);
    prt__free(vout);
    prt__free(pin);
    prt__free(ein);
    prt__free(eout);
    prt__free(decl_in);
    prt__free(decl_out);
    prt__free(cand);
    prt__free(cand_out);
    prt__free(io);
    return s;
}

/* ---- memory plan -------------------------------------------------------------- */

typedef struct live {
    int32_t t, first, last;
    uint64_t off, bytes;
} live;

/* Production order: by first layer, then by tensor number. */
static int live_by_first(const void *a, const void *b)
{
    const live *x = a, *y = b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static prt_status plan_memory(bstate *b)
{
    prt__plan *p = b->p;
    live *lv;
    int32_t i, j, n = 0, nact = 0;
    int32_t *of, *act; /* tensor -> its live entry; entries alive now, by offset */
    uint64_t arena = 0, ws = 0;
    lv = prt__calloc((size_t)(p->nb_tensors ? p->nb_tensors : 1), sizeof *lv);
    of = prt__calloc((size_t)(p->nb_tensors ? p->nb_tensors : 1), sizeof *of);
    act = prt__calloc((size_t)(p->nb_tensors ? p->nb_tensors : 1), sizeof *act);
    if (!lv || !of || !act) {
        prt__free(lv);
        prt__free(of);
        prt__free(act);
        return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (i = 0; i < p->nb_tensors; i++) {
        prt__ptensor *t = &p->tensors[i];
        uint64_t nb;
        t->offset = t->bytes = 0;
        /* Every tensor, inputs and outputs included: the caller sizes its
         * buffers from these shapes. */
        if (prt__tensor_bytes(&t->max, prt_dtype_size(t->dtype), &nb) != 0) {
            char d[160];
            prt__free(lv);
            prt__free(of);
            prt__free(act);
            return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                         "tensor \"%s\" (%s %s at the profile's max shapes) is larger than the limit of %s per "
                         "tensor",
                         t->name, prt_dtype_name(t->dtype), prt_dims_str(&t->max, d, sizeof d), PRT_MAX_TENSOR_BYTES_STR);
        }
        if (t->role != PRT__ROLE_ACTIVATION) continue;
        t->bytes = nb;
        lv[n].t = i;
        lv[n].first = -1;
        lv[n].last = -1;
        (void)prt__align_u64(nb, ARENA_ALIGN, &lv[n].bytes); /* nb <= 2^48: cannot wrap */
        n++;
    }
    /* Lifetimes in one pass over the layers. */
    for (i = 0; i < p->nb_tensors; i++) of[i] = -1;
    for (i = 0; i < n; i++) of[lv[i].t] = i;
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *ly = &p->layers[i];
        for (j = 0; j < ly->nb_out; j++)
            if (of[ly->out[j]] >= 0 && lv[of[ly->out[j]]].first < 0) lv[of[ly->out[j]]].first = i;
        for (j = 0; j < ly->nb_in; j++)
            if (ly->in[j] >= 0 && of[ly->in[j]] >= 0) lv[of[ly->in[j]]].last = i; /* -1: absent input */
    }
    for (i = 0; i < n; i++)
        if (lv[i].last < lv[i].first) lv[i].last = lv[i].first;
    /* First fit in order of production: the lowest offset that overlaps no
     * tensor alive at the same time. Only the tensors still alive when one
     * is produced are looked at (kept sorted by offset), so the plan takes
     * time in proportion to tensors x the most alive at once. */
    qsort(lv, (size_t)n, sizeof *lv, live_by_first);
    for (i = 0; i < n; i++) {
        uint64_t off = 0;
        int32_t k, w;
        for (k = 0, w = 0; k < nact; k++) /* drop the dead */
            if (lv[act[k]].last >= lv[i].first) act[w++] = act[k];
        nact = w;
        for (k = 0; k < nact; k++) {
            const live *o = &lv[act[k]];
            if (o->off >= off + lv[i].bytes) break;
            if (o->off + o->bytes > off) off = o->off + o->bytes;
        }
        lv[i].off = off;
        p->tensors[lv[i].t].offset = off;
        if (off + lv[i].bytes > arena) arena = off + lv[i].bytes;
        if (arena > PRT_MAX_TENSOR_BYTES) {
            prt__free(lv);
            prt__free(of);
            prt__free(act);
            return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                         "the activations need an arena larger than the limit of %s (at tensor \"%s\")",
                         PRT_MAX_TENSOR_BYTES_STR, p->tensors[lv[i].t].name);
        }
        for (k = nact; k > 0 && lv[act[k - 1]].off > off; k--) act[k] = act[k - 1]; /* insert by offset */
        act[k] = i;
        nact++;
    }
    for (i = 0; i < p->nb_layers; i++)
        if (p->layers[i].workspace > ws) ws = p->layers[i].workspace;
    p->arena_size = arena;
    p->workspace_size = (ws + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    prt__free(lv);
    prt__free(of);
    prt__free(act);
    return PRT_OK;
}

/* ---- the build -------------------------------------------------------------------- */

void prt_builder_config_init(prt_builder_config *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = (uint32_t)sizeof *cfg;
    cfg->abi_version = PRT_ABI_VERSION;
    cfg->precision = PRT_PRECISION_FP32;
    cfg->device = PRT_DEVICE_CPU;
    cfg->tactic_timing = PRT_TACTIC_TIMING_ON;
    cfg->timing_warmup = 2;
    cfg->timing_runs = 5;
    cfg->timing_threads = 0;
    cfg->timing_cache = NULL;
}

static prt_status check_config(bstate *b)
{
    const prt_builder_config *cfg = b->cfg;
    int32_t i, j;
    if (cfg->struct_size < sizeof *cfg)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "builder config struct_size is %u; expected %zu (use prt_builder_config_init)",
                     cfg->struct_size, sizeof *cfg);
    if ((unsigned)cfg->precision > PRT_PRECISION_FP16)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "precision %d is neither fp32 (0) nor fp16 (1)", (int)cfg->precision);
    if ((unsigned)cfg->device > PRT_DEVICE_CUDA)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "device %d is neither cpu (0) nor cuda (1)", (int)cfg->device);
    if ((unsigned)cfg->tactic_timing > PRT_TACTIC_TIMING_OFF)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "tactic_timing %d is neither on (0) nor off (1)",
                     (int)cfg->tactic_timing);
    if (cfg->timing_warmup < 0 || cfg->timing_runs < 1 || cfg->timing_threads < 0)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT,
                     "timing: %d warm-up runs, %d timed runs, %d threads; expected >= 0, >= 1 and >= 0",
                     (int)cfg->timing_warmup, (int)cfg->timing_runs, (int)cfg->timing_threads);
    if (cfg->nb_ranges < 0 || (cfg->nb_ranges > 0 && !cfg->ranges))
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "profile: %d ranges but no array", (int)cfg->nb_ranges);
    for (i = 0; i < cfg->nb_ranges; i++) {
        int32_t t = prt__network_find(b->net, cfg->ranges[i].input);
        if (t < 0 || b->net->tensors[t].kind != PRT__TENSOR_INPUT)
            return bfail(b, PRT_STATUS_NOT_FOUND, "profile names \"%s\", which is not a network input",
                         cfg->ranges[i].input ? cfg->ranges[i].input : "(null)");
        for (j = 0; j < i; j++)
            if (strcmp(cfg->ranges[j].input, cfg->ranges[i].input) == 0)
                return bfail(b, PRT_STATUS_INVALID_ARGUMENT, "profile names input \"%s\" twice", cfg->ranges[i].input);
    }
    return PRT_OK;
}

/* The profile of graph input `ti` (net tensor). */
static prt_status input_range(bstate *b, int32_t ti, prt_dims *mn, prt_dims *op, prt_dims *mx)
{
    const prt__net_tensor *t = &b->net->tensors[ti];
    const prt_profile_range *r = NULL;
    int32_t i, j;
    int dynamic = 0;
    char d1[160], d2[160], d3[160], d4[160];
    for (i = 0; i < b->cfg->nb_ranges; i++)
        if (strcmp(b->cfg->ranges[i].input, t->name) == 0) r = &b->cfg->ranges[i];
    for (j = 0; j < t->dims.nb; j++)
        if (t->dims.d[j] < 0) dynamic = 1;
    if (!r) {
        if (dynamic)
            return bfail(b, PRT_STATUS_INVALID_ARGUMENT,
                         "input \"%s\" has dynamic dims %s; the profile needs a min/opt/max range for it", t->name,
                         prt_dims_str(&t->dims, d1, sizeof d1));
        *mn = *op = *mx = t->dims;
        return PRT_OK;
    }
    if (r->min.nb != t->dims.nb || r->opt.nb != t->dims.nb || r->max.nb != t->dims.nb)
        return bfail(b, PRT_STATUS_SHAPE_MISMATCH, "profile for input \"%s\" %s: min %s, opt %s, max %s must each have %d dims",
                     t->name, prt_dims_str(&t->dims, d4, sizeof d4), prt_dims_str(&r->min, d1, sizeof d1),
                     prt_dims_str(&r->opt, d2, sizeof d2), prt_dims_str(&r->max, d3, sizeof d3), t->dims.nb);
    for (j = 0; j < t->dims.nb; j++) {
        int64_t a = r->min.d[j], o = r->opt.d[j], z = r->max.d[j];
        if (a < 0 || a > o || o > z)
            return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                         "profile for input \"%s\" dim %d: min %" PRId64 ", opt %" PRId64 ", max %" PRId64
                         " must satisfy 0 <= min <= opt <= max",
                         t->name, j, a, o, z);
        if (t->dims.d[j] >= 0 && (a != t->dims.d[j] || z != t->dims.d[j]))
            return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                         "profile for input \"%s\" dim %d: the dim is fixed at %" PRId64 " but the range is %" PRId64
                         "..%" PRId64,
                         t->name, j, t->dims.d[j], a, z);
    }
    *mn = r->min;
    *op = r->opt;
    *mx = r->max;
    mn->reserved_ = op->reserved_ = mx->reserved_ = 0;
    return PRT_OK;
}

/* The profile of shape-value input `ti` (net tensor): bounds of its values,
 * one per element. */
static prt_status value_range(bstate *b, int32_t ti, prt_dims *mn, prt_dims *op, prt_dims *mx)
{
    const prt__net_tensor *t = &b->net->tensors[ti];
    const prt_profile_range *r = NULL;
    int32_t i, n = (int32_t)prt_dims_volume(&t->dims);
    char d1[160], d2[160], d3[160];
    for (i = 0; i < b->cfg->nb_ranges; i++)
        if (strcmp(b->cfg->ranges[i].input, t->name) == 0) r = &b->cfg->ranges[i];
    if (!r)
        return bfail(b, PRT_STATUS_INVALID_ARGUMENT,
                     "shape-value input \"%s\" needs a profile range of its %d values (min, opt, max)", t->name, (int)n);
    if (r->min.nb != n || r->opt.nb != n || r->max.nb != n)
        return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                     "profile for shape-value input \"%s\": min %s, opt %s, max %s must each hold its %d values",
                     t->name, prt_dims_str(&r->min, d1, sizeof d1), prt_dims_str(&r->opt, d2, sizeof d2),
                     prt_dims_str(&r->max, d3, sizeof d3), (int)n);
    for (i = 0; i < n; i++)
        if (r->min.d[i] > r->opt.d[i] || r->opt.d[i] > r->max.d[i])
            return bfail(b, PRT_STATUS_SHAPE_MISMATCH,
                         "profile for shape-value input \"%s\" value %d: min %" PRId64 ", opt %" PRId64 ", max %" PRId64
                         " must satisfy min <= opt <= max",
                         t->name, (int)i, r->min.d[i], r->opt.d[i], r->max.d[i]);
    *mn = r->min;
    *op = r->opt;
    *mx = r->max;
    mn->reserved_ = op->reserved_ = mx->reserved_ = 0;
    return PRT_OK;
}

static prt_status add_weights(bstate *b, const void *data, size_t n, uint64_t *off)
{
    uint64_t at64, end;
    size_t at;
    if (prt__align_u64(b->wlen, PRT__PLAN_WEIGHT_ALIGN, &at64) != 0 || prt__add_u64(at64, n, &end) != 0 ||
        end > PRT_MAX_TENSOR_BYTES)
        return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "the weights are larger than the limit of %s",
                     PRT_MAX_TENSOR_BYTES_STR);
    at = (size_t)at64;
    if (at + n > b->wcap) {
        size_t ncap = b->wcap ? b->wcap : 4096;
        uint8_t *q;
        while (ncap < at + n) ncap *= 2;
        q = prt__realloc(b->wbuf, ncap);
        if (!q) return bfail(b, PRT_STATUS_OUT_OF_MEMORY, "out of memory for %zu bytes of weights", ncap);
        b->wbuf = q;
        b->wcap = ncap;
    }
    /* A zero-element first constant leaves wbuf NULL: nothing to touch. */
    if (at > b->wlen) memset(b->wbuf + b->wlen, 0, at - b->wlen);
    if (n) memcpy(b->wbuf + at, data, n);
    b->wlen = at + n;
    *off = at;
    return PRT_OK;
}

prt_status prt_engine_build(const prt_network *net, const prt_builder_config *cfg, prt_registry *r, prt_engine **out,
                            char *err, size_t cap)
{
    return prt__engine_build(net, cfg, r, 0, out, err, cap);
}

static prt_status engine_build(const prt_network *net, const prt_builder_config *cfg, prt_registry *r,
                               int strict_types, prt_engine **out, char *err, size_t cap);

/* Sub-networks that plugins build during this build resolve their plugins in
 * the registry the build uses (engine/subnet.h). */
prt_status prt__engine_build(const prt_network *net, const prt_builder_config *cfg, prt_registry *r, int strict_types,
                             prt_engine **out, char *err, size_t cap)
{
    prt_registry *prev = prt__subnet_scope_enter(r ? r : net ? net->registry : NULL);
    prt_status s = engine_build(net, cfg, r, strict_types, out, err, cap);
    prt__subnet_scope_leave(prev);
    return s;
}

static prt_status engine_build(const prt_network *net, const prt_builder_config *cfg, prt_registry *r,
                               int strict_types, prt_engine **out, char *err, size_t cap)
{
    bstate b;
    prt_builder_config defcfg;
    prt_engine *eng = NULL;
    prt__plan *p;
    prt_status s = PRT_OK;
    int32_t i, j, nin = 0;
    uint8_t *bytes = NULL;
    size_t len = 0;
    char msg[PRT_ERR_CAP];

    if (err && cap) err[0] = 0;
    memset(&b, 0, sizeof b);
    b.err = err;
    b.cap = cap;
    if (!net || !out) return bfail(&b, PRT_STATUS_INVALID_ARGUMENT, "no network or no output pointer given");
    /* Read member by member up to the caller's struct_size (older callers keep working). */
    prt_builder_config_init(&defcfg);
    if (cfg && prt__config_read(&defcfg, sizeof defcfg, cfg, offsetof(prt_builder_config, precision)) != 0)
        return bfail(&b, PRT_STATUS_INVALID_ARGUMENT, "builder config struct_size is %u; expected at least %zu "
                     "(use prt_builder_config_init)", cfg->struct_size, offsetof(prt_builder_config, precision));
    defcfg.struct_size = (uint32_t)sizeof defcfg;
    cfg = &defcfg;
    b.net = net;
    b.cfg = cfg;
    b.strict_types = strict_types;
    b.reg = r ? r : net->registry;
    if ((s = check_config(&b)) != PRT_OK) return s;
    if (net->nb_outputs == 0) return bfail(&b, PRT_STATUS_INVALID_ARGUMENT, "the network marks no outputs");
    if (net->nb_layers == 0) return bfail(&b, PRT_STATUS_INVALID_ARGUMENT, "the network has no layers");

    b.p = p = prt__calloc(1, sizeof *p);
    b.net2plan = prt__calloc((size_t)net->nb_tensors, sizeof *b.net2plan);
    b.declared = prt__calloc((size_t)net->nb_tensors, sizeof *b.declared);
    b.versions = prt__calloc((size_t)net->nb_tensors + 1, sizeof *b.versions);
    b.nb_versions = prt__calloc((size_t)net->nb_tensors + 1, 1);
    /* Per input its dims, then per input its shape values (nb 0: none). */
    b.in_min = prt__calloc(2 * (size_t)net->nb_inputs + 1, sizeof(prt_dims));
    b.in_opt = prt__calloc(2 * (size_t)net->nb_inputs + 1, sizeof(prt_dims));
    b.in_max = prt__calloc(2 * (size_t)net->nb_inputs + 1, sizeof(prt_dims));
    if (!p || !b.net2plan || !b.declared || !b.versions || !b.nb_versions || !b.in_min || !b.in_opt || !b.in_max ||
        prt__exprs_create(&b.rc.x) != PRT_OK) {
        s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    prt__hmap_init(&b.rc.index, PRT__HMAP_POINTER);
    prt__hmap_init(&b.names, PRT__HMAP_STRING);
    b.rc.under = prt__exprs_builder(b.rc.x);
    b.rc.pub = *b.rc.under;
    b.rc.pub.constant = rec_constant;
    b.rc.pub.operation = rec_operation;
    b.rc.pub.get_constant = rec_get_constant;
    b.rc.pub.data_dependent = rec_data_dependent;
    b.rc.pub.host_ = &b.rc;
    p->lib_version = prt__strdup(prt_version_string());
    if (!p->lib_version) {
        s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    p->precision = (uint32_t)cfg->precision;
    p->device = (uint32_t)cfg->device;
    p->workspace_limit = cfg->workspace_limit;

    /* Inputs, then constants. */
    for (i = 0; i < net->nb_tensors; i++) {
        const prt__net_tensor *nt = &net->tensors[i];
        int32_t t;
        if (nt->kind != PRT__TENSOR_INPUT) continue;
        if (nt->shape_values) b.in_min[nin] = b.in_opt[nin] = b.in_max[nin] = nt->dims;
        else if ((s = input_range(&b, i, &b.in_min[nin], &b.in_opt[nin], &b.in_max[nin])) != PRT_OK) goto done;
        t = new_tensor(&b, nt->name, PRT__ROLE_INPUT, nt->dtype, i);
        if (t < 0) {
            s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        p->tensors[t].nb_dims = nt->dims.nb;
        p->tensors[t].dims = nt->dims;
        p->tensors[t].min = b.in_min[nin];
        p->tensors[t].opt = b.in_opt[nin];
        p->tensors[t].max = b.in_max[nin];
        for (j = 0; j < nt->dims.nb; j++) {
            const prt_expr *e = prt__exprs_leaf(b.rc.x, nin, j, nt->dims.d[j]);
            p->tensors[t].expr[j] = rec_add(&b.rc, e, PRT__NODE_LEAF, 0, nin, j, 0);
        }
        if (nt->shape_values) {
            /* Its values are leaves too: value j of input k is leaf
             * (nb_inputs + k, j), bounded by the profile. */
            int32_t vi = net->nb_inputs + nin;
            prt__ptensor *pt = &p->tensors[t];
            if ((s = value_range(&b, i, &pt->vmin, &pt->vopt, &pt->vmax)) != PRT_OK) goto done;
            b.in_min[vi] = pt->vmin;
            b.in_opt[vi] = pt->vopt;
            b.in_max[vi] = pt->vmax;
            pt->nb_vals = pt->vmin.nb;
            for (j = 0; j < pt->nb_vals; j++) {
                int64_t v = pt->vmin.d[j];
                pt->val[j] = v == pt->vmax.d[j] /* a fixed value is a constant */
                                 ? rec_add(&b.rc, prt__exprs_const(b.rc.x, v), PRT__NODE_CONST, 0, 0, 0, v)
                                 : rec_add(&b.rc, prt__exprs_leaf(b.rc.x, vi, j, -1), PRT__NODE_LEAF, 0, vi, j, 0);
            }
            p->read_version = 2;
        }
        b.net2plan[i] = t;
        b.declared[i] = nt->dtype;
        nin++;
    }
    p->nb_inputs = nin;
    for (i = 0; i < net->nb_tensors; i++) {
        const prt__net_tensor *nt = &net->tensors[i];
        int32_t t;
        if (nt->kind != PRT__TENSOR_CONSTANT) continue;
        t = new_tensor(&b, nt->name, PRT__ROLE_CONSTANT, nt->dtype, i);
        if (t < 0) {
            s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        p->tensors[t].nb_dims = nt->dims.nb;
        p->tensors[t].dims = nt->dims;
        p->tensors[t].min = p->tensors[t].opt = p->tensors[t].max = nt->dims;
        for (j = 0; j < nt->dims.nb; j++) {
            const prt_expr *e = prt__exprs_const(b.rc.x, nt->dims.d[j]);
            p->tensors[t].expr[j] = rec_add(&b.rc, e, PRT__NODE_CONST, 0, 0, 0, nt->dims.d[j]);
        }
        if (prt__shapeval_fits(nt->dtype, &nt->dims)) { /* a small integer constant: its values are known */
            int32_t n = (int32_t)prt_dims_volume(&nt->dims);
            for (j = 0; j < n; j++) {
                int64_t v = prt__shapeval_element(nt->dtype, nt->data, j);
                p->tensors[t].val[j] = rec_add(&b.rc, prt__exprs_const(b.rc.x, v), PRT__NODE_CONST, 0, 0, 0, v);
            }
            p->tensors[t].nb_vals = n;
        }
        b.net2plan[i] = t;
        b.declared[i] = nt->dtype;
    }
    if (b.rc.failed) {
        s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto done;
    }

    for (i = 0; i < net->nb_layers; i++)
        if ((s = build_layer(&b, i)) != PRT_OK) goto done;

    p->nodes = b.rc.nodes;
    p->nb_nodes = b.rc.nb;
    if ((s = drop_unread_constants(&b)) != PRT_OK) goto done;
    if ((s = plan_memory(&b)) != PRT_OK) goto done;
    /* Weights, each at a multiple of 64 bytes. */
    for (i = 0; i < p->nb_tensors; i++) {
        prt__ptensor *t = &p->tensors[i];
        size_t n;
        if (t->role != PRT__ROLE_CONSTANT) continue;
        n = (size_t)prt_dims_volume(&t->dims) * prt_dtype_size(t->dtype);
        if ((s = add_weights(&b, const_data(&b, i), n, &t->offset)) != PRT_OK) goto done;
        t->bytes = n;
    }
    p->weights = b.wbuf;
    p->weights_len = b.wlen;

    /* Plugin records, in layer order. */
    for (i = 0; i < p->nb_layers; i++) {
        prt_writer w;
        prt__precord *rc;
        if (p->layers[i].kind != PRT__LAYER_PLUGIN) continue;
        if (!grow((void **)&p->records, &b.cap_records, p->nb_records, sizeof *p->records)) {
            s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        rc = &p->records[p->nb_records];
        w = prt_writer_init(NULL, 0);
        msg[0] = 0;
        s = prt__plugin_write_record(b.plugins[i], &w, msg, sizeof msg);
        if (s == PRT_OK) {
            size_t n = w.len;
            rc->data = prt__malloc(n ? n : 1);
            if (!rc->data) {
                s = bfail(&b, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
                goto done;
            }
            w = prt_writer_init(rc->data, n);
            s = prt__plugin_write_record(b.plugins[i], &w, msg, sizeof msg);
            if (s == PRT_OK && w.len != n) {
                snprintf(msg, sizeof msg, "layer \"%s\": the plugin record changed size between two writes (%zu, then %zu bytes)",
                         p->layers[i].name, n, w.len);
                s = PRT_STATUS_PLUGIN_ERROR;
            }
            rc->len = n;
            p->nb_records++; /* owns rc->data now */
        }
        if (s != PRT_OK) {
            s = bfail(&b, s, "%s", msg);
            goto done;
        }
        p->layers[i].plugin = p->nb_records - 1;
    }

    msg[0] = 0;
    s = prt__plan_write(p, &bytes, &len, msg, sizeof msg);
    if (s != PRT_OK) {
        s = bfail(&b, s, "%s", msg);
        goto done;
    }
    /* Build plugins go before the engine's own are made. */
    for (i = 0; i < p->nb_layers; i++) {
        prt__plugin_destroy(b.plugins[i]);
        b.plugins[i] = NULL;
    }
    s = prt_engine_deserialize(b.reg, bytes, len, &eng, msg, sizeof msg);
    if (s != PRT_OK) {
        s = bfail(&b, s, "loading the plan just built: %s", msg);
        goto done;
    }
    /* What this build timed joins the cache only now that it succeeded. */
    if (cfg->timing_cache && b.nb_pending) {
        int32_t added = 0;
        if ((s = prt__tcache_commit(cfg->timing_cache, b.pending, b.nb_pending, &added)) != PRT_OK) {
            prt_engine_destroy(eng);
            s = bfail(&b, s, "out of memory adding %d entries to the timing cache", (int)b.nb_pending);
            goto done;
        }
        b.nb_pending = 0; /* the cache owns them */
    }
    *out = eng;

done:
    if (b.plugins)
        for (i = 0; i < p->nb_layers; i++) prt__plugin_destroy(b.plugins[i]);
    prt__free(b.plugins);
    prt__free(bytes);
    if (p) {
        p->weights = NULL;
        p->weights_block = b.wbuf; /* freed with the plan */
        p->nodes = b.rc.nodes;     /* the current block: freed with the plan */
        prt__plan_free(p);
    } else {
        prt__free(b.wbuf);
        prt__free(b.rc.nodes);
    }
    for (i = 0; i < b.nb_folded; i++) prt__free(b.folded[i].data);
    prt__free(b.folded);
    for (i = 0; i < b.nb_pending; i++) prt__tentry_free(b.pending[i]);
    prt__free(b.pending);
    prt__tactic_bench_destroy(b.bench);
    prt__free((void *)b.rc.ptrs);
    prt__hmap_free(&b.rc.index);
    prt__hmap_free(&b.names);
    prt__exprs_destroy(b.rc.x);
    prt__free(b.net2plan);
    prt__free(b.declared);
    prt__free(b.plan2net);
    prt__free(b.versions);
    prt__free(b.nb_versions);
    prt__free(b.in_min);
    prt__free(b.in_opt);
    prt__free(b.in_max);
    return s;
}
