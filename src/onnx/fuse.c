/* onnx/fuse.c - layer fusion of an imported network (docs/onnx.md, "Fusion").
 *
 * Three rewrites, each exact up to fp32 rounding:
 *  - a BatchNormalization (inference) whose input is read only from a Conv
 *    with constant weights is folded into that Conv's weights and bias;
 *  - a connected set of fp32 elementwise layers whose inner results nobody
 *    else reads becomes one plugrt::Elementwise layer (a program of
 *    instructions over the set's inputs and scalar constants);
 *  - when such a set reads the output of a Conv that nobody else reads, and
 *    its other inputs cannot widen the Conv's output, both become one
 *    plugrt::FusedConv layer that applies the program while the output is
 *    still in cache.
 * The pass reads the imported network and writes a new one; layers it does
 * not touch are copied as they are. Opcode numbers are those of the
 * plugrt::Elementwise plan format (plugins/onnx/elementwise/README.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "engine/netdef.h"
#include "onnx/onnx_impl.h"

/* plugrt::Elementwise opcodes (a format: numbers never change). */
enum {
    OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_DIV = 3, OP_MAX = 4, OP_MIN = 5, OP_POW = 6, OP_NEG = 7,
    OP_ABS = 8, OP_RELU = 9, OP_SIGMOID = 10, OP_TANH = 11, OP_EXP = 12, OP_LOG = 13, OP_SQRT = 14,
    OP_RECIPROCAL = 15, OP_ERF = 16, OP_FLOOR = 17, OP_CEIL = 18, OP_CLIP = 19, OP_HARDSIGMOID = 20,
    OP_LEAKYRELU = 21, OP_HARDSWISH = 22, OP_ELU = 23, OP_SOFTPLUS = 24, OP_GELU = 25
};

#define MAX_INS 32   /* instructions of one program */
#define MAX_VALS 8   /* inputs of one program */
#define MAX_CONSTS 64

enum { K_OTHER, K_EW, K_CONV, K_BN };

typedef struct ftensor {
    int has_dtype;
    prt_dtype dtype;
    int32_t rank;           /* -1: unknown */
    int64_t d[PRT_MAX_DIMS]; /* -1: unknown */
    int32_t cons;           /* layer inputs reading it */
    int is_out;
    int32_t prod;           /* producing layer (after BN folding), -1: none */
} ftensor;

typedef struct flayer {
    int kind;
    int32_t op;              /* K_EW: opcode */
    int32_t nb_par;
    float par[2];
    int32_t nb_opnd;         /* K_EW: operand tensors (1 or 2) */
    int32_t opnd[2];
    int32_t grp;             /* group, -1: none */
    int32_t bn;              /* K_CONV: the BatchNormalization folded in, -1: none */
    int32_t out;             /* the tensor it produces in the new network */
    int dropped;             /* folded into another layer */
    float *w, *b;            /* K_CONV with a folded BN: new weights and bias (owned) */
} flayer;

typedef struct fgroup {
    int32_t root, conv;      /* conv: fused as value 0, -1: none */
    int32_t nb;
    int32_t mem[MAX_INS];    /* layer indices, ascending */
} fgroup;

typedef struct fuser {
    const prt_network *net;
    ftensor *t;
    flayer *l;
    fgroup *g;
    int32_t nb_g;
    int have_ew, have_fconv;
    const char *owner; /* owner of the fused ops' creators: only layers of the same owner fuse */
    char *err;
    size_t cap;
} fuser;

/* ---- facts about tensors and layers -------------------------------------------------- */

static const prt_field *field_of(const prt__net_layer *l, const char *name)
{
    const prt_fields *fc = l->fields ? prt_owned_fields_get(l->fields) : NULL;
    int32_t i;
    for (i = 0; fc && i < fc->nb; i++)
        if (strcmp(fc->fields[i].name, name) == 0) return &fc->fields[i];
    return NULL;
}

/* A float32 field of one value into *v; 0 when absent or of another kind. */
static int field_f32(const prt__net_layer *l, const char *name, float *v)
{
    const prt_field *f = field_of(l, name);
    if (!f || f->type != PRT_FIELD_FLOAT32 || f->count != 1) return 0;
    *v = ((const float *)f->data)[0];
    return 1;
}

/* An int64 field of one value equal to want, or absent (dflt_ok). */
static int field_i64_is(const prt__net_layer *l, const char *name, int64_t want, int absent_ok)
{
    const prt_field *f = field_of(l, name);
    if (!f) return absent_ok;
    return f->type == PRT_FIELD_INT64 && f->count == 1 && ((const int64_t *)f->data)[0] == want;
}

static int is_f32(const fuser *fz, int32_t ti)
{
    return ti >= 0 && fz->t[ti].has_dtype && fz->t[ti].dtype == PRT_DTYPE_F32;
}

static const prt__net_tensor *nt(const fuser *fz, int32_t ti) { return &fz->net->tensors[ti]; }

static int64_t volume_of(const prt__net_tensor *t)
{
    int64_t v = 1;
    int32_t i;
    for (i = 0; i < t->dims.nb; i++) v *= t->dims.d[i];
    return v;
}

/* A constant f32 scalar (one element): its value. */
static int const_scalar(const fuser *fz, int32_t ti, float *v)
{
    const prt__net_tensor *t;
    if (ti < 0) return 0;
    t = nt(fz, ti);
    if (t->kind != PRT__TENSOR_CONSTANT || t->dtype != PRT_DTYPE_F32 || volume_of(t) != 1 || !t->data) return 0;
    *v = ((const float *)t->data)[0];
    return 1;
}

static int is_const_f32(const fuser *fz, int32_t ti, int64_t volume)
{
    const prt__net_tensor *t;
    if (ti < 0) return 0;
    t = nt(fz, ti);
    return t->kind == PRT__TENSOR_CONSTANT && t->dtype == PRT_DTYPE_F32 && (volume < 0 || volume_of(t) == volume);
}

typedef struct ewrow {
    const char *name;
    int32_t op, arity; /* arity 1 or 2 */
} ewrow;

static const ewrow ew_rows[] = {
    {"Add", OP_ADD, 2}, {"Sub", OP_SUB, 2}, {"Mul", OP_MUL, 2}, {"Div", OP_DIV, 2}, {"Pow", OP_POW, 2},
    {"Max", OP_MAX, 2}, {"Min", OP_MIN, 2}, {"Sum", OP_ADD, 2}, {"Neg", OP_NEG, 1}, {"Abs", OP_ABS, 1},
    {"Relu", OP_RELU, 1}, {"Sigmoid", OP_SIGMOID, 1}, {"Tanh", OP_TANH, 1}, {"Exp", OP_EXP, 1},
    {"Log", OP_LOG, 1}, {"Sqrt", OP_SQRT, 1}, {"Reciprocal", OP_RECIPROCAL, 1}, {"Erf", OP_ERF, 1},
    {"Floor", OP_FLOOR, 1}, {"Ceil", OP_CEIL, 1}, {"Softplus", OP_SOFTPLUS, 1}, {"HardSwish", OP_HARDSWISH, 1},
    {"Clip", OP_CLIP, 1}, {"HardSigmoid", OP_HARDSIGMOID, 1}, {"LeakyRelu", OP_LEAKYRELU, 1},
    {"Elu", OP_ELU, 1}, {"Gelu", OP_GELU, 1},
};

/* Clip's bounds as ONNX gives them: attributes before 11, then fields
 * "input:1" / "input:2" (constants) or inputs 1 and 2 (constant scalars
 * only here). An absent bound is infinite. */
static int clip_bounds(const fuser *fz, const prt__net_layer *nl, float *lo, float *hi)
{
    int32_t next = 1, which;
    *lo = -INFINITY;
    *hi = INFINITY;
    if (atoi(nl->version) < 11) {
        if (nl->nb_in != 1) return 0;
        field_f32(nl, "min", lo);
        field_f32(nl, "max", hi);
        return 1;
    }
    for (which = 0; which < 2; which++) {
        float *dst = which ? hi : lo;
        const prt_field *f = field_of(nl, which ? "input:2" : "input:1");
        if (f) {
            if (f->type != PRT_FIELD_FLOAT32 || f->count > 1) return 0;
            if (f->count == 1) *dst = ((const float *)f->data)[0];
            continue;
        }
        if (next >= nl->nb_in) continue;
        if (nl->in[next] >= 0 && volume_of(nt(fz, nl->in[next])) != 0 && !const_scalar(fz, nl->in[next], dst))
            return 0;
        next++;
    }
    return next == nl->nb_in;
}

/* Is the layer's creator one of the bundled ONNX ops (the owner of the
 * fused ops)? A user's own "Add" in the default domain is never replaced. */
static int bundled(const fuser *fz, const prt__net_layer *nl)
{
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    return fz->owner && prt_registry_find(fz->net->registry, nl->plugin, nl->version, nl->plugin_namespace, &c,
                                          &owner) == PRT_OK && owner && strcmp(owner, fz->owner) == 0;
}

static void classify(fuser *fz, int32_t li)
{
    const prt__net_layer *nl = &fz->net->layers[li];
    flayer *l = &fz->l[li];
    size_t r;
    int32_t i;
    l->kind = K_OTHER;
    if (nl->proto || strcmp(nl->plugin_namespace, "") != 0 || nl->nb_out != 1 || nl->out[0] < 0 || nl->nb_in < 1 ||
        !bundled(fz, nl))
        return;
    if (strcmp(nl->plugin, "Conv") == 0) {
        const prt__net_tensor *w;
        if (nl->nb_in < 2 || nl->nb_in > 3 || !is_f32(fz, nl->in[0]) || !is_f32(fz, nl->out[0])) return;
        if (!is_const_f32(fz, nl->in[1], -1) || !nt(fz, nl->in[1])->data) return;
        w = nt(fz, nl->in[1]);
        if (w->dims.nb != 4 || w->dims.d[0] <= 0) return;
        if (nl->nb_in == 3 && (!is_const_f32(fz, nl->in[2], w->dims.d[0]) || !nt(fz, nl->in[2])->data)) return;
        l->kind = K_CONV;
        return;
    }
    if (strcmp(nl->plugin, "BatchNormalization") == 0) {
        if (nl->nb_in != 5 || !is_f32(fz, nl->in[0]) || !is_f32(fz, nl->out[0])) return;
        if (!field_i64_is(nl, "training_mode", 0, 1) || !field_i64_is(nl, "spatial", 1, 1) ||
            !field_i64_is(nl, "is_test", 1, 1))
            return;
        for (i = 1; i < 5; i++)
            if (!is_const_f32(fz, nl->in[i], -1) || !nt(fz, nl->in[i])->data) return;
        l->kind = K_BN;
        return;
    }
    for (r = 0; r < sizeof ew_rows / sizeof ew_rows[0]; r++)
        if (strcmp(nl->plugin, ew_rows[r].name) == 0) break;
    if (r == sizeof ew_rows / sizeof ew_rows[0] || !is_f32(fz, nl->out[0])) return;
    l->op = ew_rows[r].op;
    l->nb_opnd = ew_rows[r].arity;
    if (l->op == OP_CLIP) {
        if (!clip_bounds(fz, nl, &l->par[0], &l->par[1])) return;
        l->nb_par = 2;
    } else if (nl->nb_in != l->nb_opnd) {
        return;
    }
    for (i = 0; i < l->nb_opnd; i++) {
        if (!is_f32(fz, nl->in[i])) return;
        l->opnd[i] = nl->in[i];
    }
    if (l->op == OP_HARDSIGMOID) {
        l->nb_par = 2;
        l->par[0] = 0.2f;
        l->par[1] = 0.5f;
        field_f32(nl, "alpha", &l->par[0]);
        field_f32(nl, "beta", &l->par[1]);
    } else if (l->op == OP_LEAKYRELU || l->op == OP_ELU) {
        l->nb_par = 1;
        l->par[0] = l->op == OP_LEAKYRELU ? 0.01f : 1.0f;
        field_f32(nl, "alpha", &l->par[0]);
    } else if (l->op == OP_GELU) {
        const prt_field *f = field_of(nl, "approximate");
        if (f && !(f->type == PRT_FIELD_CHAR && f->count == 4 && memcmp(f->data, "none", 4) == 0)) return;
    }
    l->kind = K_EW;
}

/* ---- BatchNormalization into Conv ----------------------------------------------------------- */

static prt_status fold_bn(fuser *fz, int32_t bi)
{
    const prt__net_layer *bn = &fz->net->layers[bi];
    int32_t x = bn->in[0], ci = fz->t[x].prod, o, k;
    const prt__net_layer *cv;
    const prt__net_tensor *w, *sc, *bb, *mean, *var;
    flayer *c;
    int64_t cout, per;
    float eps = 1e-5f;
    if (ci < 0 || fz->l[ci].kind != K_CONV || fz->l[ci].bn >= 0 || fz->t[x].cons != 1 || fz->t[x].is_out)
        return PRT_OK;
    cv = &fz->net->layers[ci];
    c = &fz->l[ci];
    w = nt(fz, cv->in[1]);
    cout = w->dims.d[0];
    per = volume_of(w) / cout;
    sc = nt(fz, bn->in[1]);
    bb = nt(fz, bn->in[2]);
    mean = nt(fz, bn->in[3]);
    var = nt(fz, bn->in[4]);
    if (volume_of(sc) != cout || volume_of(bb) != cout || volume_of(mean) != cout || volume_of(var) != cout)
        return PRT_OK;
    field_f32(bn, "epsilon", &eps);
    c->w = prt__malloc((size_t)(cout * per) * sizeof(float));
    c->b = prt__malloc((size_t)cout * sizeof(float));
    if (!c->w || !c->b) {
        prt__free(c->w);
        prt__free(c->b);
        c->w = c->b = NULL;
        return prt__onnx_fail(fz->err, fz->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory folding %s into %s",
                              bn->name, cv->name);
    }
    for (o = 0; o < cout; o++) {
        const double s = (double)((const float *)sc->data)[o] / sqrt((double)((const float *)var->data)[o] + eps);
        const double b0 = cv->nb_in == 3 ? ((const float *)nt(fz, cv->in[2])->data)[o] : 0.0;
        for (k = 0; k < per; k++) c->w[o * per + k] = (float)(((const float *)w->data)[o * per + k] * s);
        c->b[o] = (float)((b0 - ((const float *)mean->data)[o]) * s + ((const float *)bb->data)[o]);
    }
    c->bn = bi;
    c->out = bn->out[0];
    fz->l[bi].dropped = 1;
    fz->t[bn->out[0]].prod = ci;
    return PRT_OK;
}

/* ---- groups ------------------------------------------------------------------------------- */

static int in_group(const fgroup *g, int32_t li)
{
    int32_t i;
    for (i = 0; i < g->nb; i++)
        if (g->mem[i] == li) return 1;
    return 0;
}

/* Inputs of the group's layers reading tensor ti. */
static int32_t refs(const fuser *fz, const fgroup *g, int32_t ti)
{
    int32_t i, k, n = 0;
    for (i = 0; i < g->nb; i++) {
        const prt__net_layer *nl = &fz->net->layers[g->mem[i]];
        for (k = 0; k < nl->nb_in; k++) n += nl->in[k] == ti;
    }
    return n;
}

/* Rank of a tensor, -1 when unknown. */
static int32_t rank_of(const fuser *fz, int32_t ti) { return fz->t[ti].rank; }

/* Operand k of layer li may be an inline scalar: a constant of one element
 * whose rank cannot widen the result (0, or at most the other operand's). */
static int inline_const(const fuser *fz, int32_t li, int32_t k, float *v)
{
    const flayer *l = &fz->l[li];
    int32_t ti = l->opnd[k], r = nt(fz, ti)->dims.nb;
    if (!const_scalar(fz, ti, v)) return 0;
    if (r == 0) return 1;
    return l->nb_opnd == 2 && rank_of(fz, l->opnd[1 - k]) >= r;
}

/* Group inputs: operand tensors not produced inside and not inlined,
 * value 0 first when `first` >= 0. Returns their count (may exceed MAX_VALS). */
static int32_t leaves(const fuser *fz, const fgroup *g, int32_t first, int32_t *out)
{
    int32_t i, k, j, n = 0;
    if (first >= 0) out[n++] = first;
    for (i = 0; i < g->nb; i++) {
        const flayer *l = &fz->l[g->mem[i]];
        for (k = 0; k < l->nb_opnd; k++) {
            int32_t ti = l->opnd[k], p = fz->t[ti].prod;
            float v;
            if (p >= 0 && in_group(g, p)) continue;
            if (inline_const(fz, g->mem[i], k, &v)) continue;
            for (j = 0; j < n && out[j] != ti; j++) {}
            if (j == n) {
                if (n < MAX_INS * 2) out[n] = ti;
                n++;
            }
        }
    }
    return n;
}

static void sort_members(fgroup *g)
{
    int32_t i, j;
    for (i = 1; i < g->nb; i++)
        for (j = i; j > 0 && g->mem[j - 1] > g->mem[j]; j--) {
            int32_t t = g->mem[j];
            g->mem[j] = g->mem[j - 1];
            g->mem[j - 1] = t;
        }
}

/* Grow a group from its root backwards: a producer joins when it is an
 * elementwise layer whose output only the group reads. */
static void grow_group(fuser *fz, fgroup *g)
{
    int changed = 1;
    int32_t lv[MAX_INS * 2];
    while (changed) {
        int32_t i, k;
        changed = 0;
        for (i = 0; i < g->nb && g->nb < MAX_INS; i++) {
            const flayer *l = &fz->l[g->mem[i]];
            for (k = 0; k < l->nb_opnd && g->nb < MAX_INS; k++) {
                int32_t ti = l->opnd[k], p = fz->t[ti].prod;
                if (p < 0 || fz->l[p].kind != K_EW || fz->l[p].grp >= 0 || fz->l[p].dropped || in_group(g, p))
                    continue;
                if (fz->t[ti].is_out || refs(fz, g, ti) != fz->t[ti].cons) continue;
                g->mem[g->nb++] = p;
                if (leaves(fz, g, -1, lv) > MAX_VALS) {
                    g->nb--;
                    continue;
                }
                fz->l[p].grp = (int32_t)(g - fz->g);
                changed = 1;
            }
        }
    }
    sort_members(g);
}

/* Extents of the conv's output where known: [N, Cout, H, W]. */
static void conv_out_dims(const fuser *fz, int32_t ci, int64_t *d)
{
    const prt__net_layer *cv = &fz->net->layers[ci];
    const ftensor *o = &fz->t[cv->out[0]];
    int32_t k;
    for (k = 0; k < 4; k++) d[k] = o->rank == 4 ? o->d[k] : -1;
    d[1] = nt(fz, cv->in[1])->dims.d[0];
}

/* Can tensor ti broadcast into the conv's output without widening it? */
static int fits_conv(const fuser *fz, int32_t ti, const int64_t *od)
{
    const ftensor *t = &fz->t[ti];
    int32_t k, r = t->rank;
    if (r < 0 || r > 4) return 0;
    for (k = 0; k < r; k++) {
        int64_t e = t->d[k], o = od[4 - r + k];
        if (e == 1) continue;
        if (e < 0 || o < 0 || e != o) return 0;
    }
    return 1;
}

/* The conv whose output the group may take as value 0, or -1. */
static int32_t pick_conv(const fuser *fz, const fgroup *g)
{
    int32_t lv[MAX_INS * 2], n = leaves(fz, g, -1, lv), i, j, best = -1;
    if (!fz->have_fconv || n > MAX_VALS) return -1;
    for (i = 0; i < n; i++) {
        int32_t ti = lv[i], ci = fz->t[ti].prod;
        int64_t od[4];
        int ok = 1;
        if (ci < 0 || fz->l[ci].kind != K_CONV || fz->l[ci].grp >= 0 || fz->t[ti].is_out ||
            refs(fz, g, ti) != fz->t[ti].cons)
            continue;
        conv_out_dims(fz, ci, od);
        for (j = 0; j < n && ok; j++)
            if (lv[j] != ti) ok = fits_conv(fz, lv[j], od);
        if (ok && (best < 0 || ci > best)) best = ci;
    }
    return best;
}

/* ---- programs ----------------------------------------------------------------------------- */

typedef struct prog {
    int64_t code[4 * MAX_INS];
    float consts[MAX_CONSTS];
    int32_t nb_ins, nb_consts, nb_vals;
    int32_t vals[MAX_VALS]; /* tensor of each input value */
} prog;

static int32_t add_const(prog *p, float v)
{
    int32_t i;
    for (i = 0; i < p->nb_consts; i++)
        if (memcmp(&p->consts[i], &v, sizeof v) == 0) return i;
    if (p->nb_consts == MAX_CONSTS) return -1;
    p->consts[p->nb_consts] = v;
    return p->nb_consts++;
}

/* Value v (an instruction's) read by instruction `by` only? */
static int used_once_by(const prog *p, int64_t v, int32_t by)
{
    int32_t i, k, n = 0;
    for (i = 0; i < p->nb_ins; i++)
        for (k = 1; k <= 2; k++)
            if (p->code[4 * i + k] == v && (k == 1 || p->code[4 * i] <= OP_POW)) { /* the binary ops here */
                if (i != by) return 0;
                n++;
            }
    return n == 1;
}

static int opnd_is_const(const prog *p, int64_t o, float v)
{
    return o < 0 && -1 - o < p->nb_consts && p->consts[-1 - o] == v;
}

/* x * clip(x + 3, 0, 6) / 6 (either order of the multiply and the divide),
 * the hard swish as exporters write it out, is one HardSwish instruction (x * clamp((x + 3) / 6, 0, 1): the same to an
 * ulp or two, and one pass over the data instead of four). The removed
 * instructions' values are renumbered. */
static void peephole(prog *p)
{
    int32_t i;
    for (i = 0; i + 3 < p->nb_ins; i++) {
        int64_t *c = &p->code[4 * i], x, v0 = p->nb_vals + i, j;
        int32_t k;
        if (c[0] != OP_ADD) continue;
        if (opnd_is_const(p, c[2], 3.0f)) x = c[1];
        else if (opnd_is_const(p, c[1], 3.0f)) x = c[2];
        else continue;
        if (x < 0) continue;
        if (c[4] != OP_CLIP || c[5] != v0 || p->consts[c[7]] != 0.0f || p->consts[c[7] + 1] != 6.0f) continue;
        if (c[8] == OP_MUL) { /* (x * clip) / 6 */
            if (!((c[9] == x && c[10] == v0 + 1) || (c[10] == x && c[9] == v0 + 1))) continue;
            if (c[12] != OP_DIV || c[13] != v0 + 2 || !opnd_is_const(p, c[14], 6.0f)) continue;
        } else { /* x * (clip / 6) */
            if (c[8] != OP_DIV || c[9] != v0 + 1 || !opnd_is_const(p, c[10], 6.0f)) continue;
            if (c[12] != OP_MUL || !((c[13] == x && c[14] == v0 + 2) || (c[14] == x && c[13] == v0 + 2))) continue;
        }
        if (!used_once_by(p, v0, i + 1) || !used_once_by(p, v0 + 1, i + 2) || !used_once_by(p, v0 + 2, i + 3)) continue;
        /* instruction i becomes HardSwish(x); i + 1 .. i + 3 go; later values move down by 3 */
        c[0] = OP_HARDSWISH;
        c[1] = x;
        c[2] = 0;
        c[3] = 0;
        for (j = i + 4; j < p->nb_ins; j++) memcpy(&p->code[4 * (j - 3)], &p->code[4 * j], 4 * sizeof(int64_t));
        p->nb_ins -= 3;
        for (j = i + 1; j < p->nb_ins; j++)
            for (k = 1; k <= 2; k++) {
                int64_t *o = &p->code[4 * j + k];
                if (*o == v0 + 3) *o = v0; /* the old Div's value is the HardSwish's */
                else if (*o > v0 + 3) *o -= 3;
            }
    }
}

static int make_prog(const fuser *fz, const fgroup *g, int32_t conv_out, prog *p)
{
    int32_t lv[MAX_INS * 2], i, k, j;
    memset(p, 0, sizeof *p);
    p->nb_vals = leaves(fz, g, conv_out, lv);
    if (p->nb_vals > MAX_VALS) return 0;
    memcpy(p->vals, lv, (size_t)p->nb_vals * sizeof *lv);
    for (i = 0; i < g->nb; i++) {
        const flayer *l = &fz->l[g->mem[i]];
        int64_t *c = &p->code[4 * i];
        c[0] = l->op;
        for (k = 0; k < l->nb_opnd; k++) {
            int32_t ti = l->opnd[k], pr = fz->t[ti].prod;
            float v;
            int64_t opnd = -1;
            if (pr >= 0 && in_group(g, pr)) {
                for (j = 0; j < i && g->mem[j] != pr; j++) {}
                opnd = p->nb_vals + j;
            } else if (inline_const(fz, g->mem[i], k, &v)) {
                int32_t ci = add_const(p, v);
                if (ci < 0) return 0;
                opnd = -1 - (int64_t)ci;
            } else {
                for (j = 0; j < p->nb_vals && p->vals[j] != ti; j++) {}
                opnd = j;
            }
            c[1 + k] = opnd;
        }
        if (l->nb_par) { /* parameters sit side by side from consts[p]: never shared */
            if (p->nb_consts + l->nb_par > MAX_CONSTS) return 0;
            c[3] = p->nb_consts;
            for (j = 0; j < l->nb_par; j++) p->consts[p->nb_consts++] = l->par[j];
        }
    }
    p->nb_ins = g->nb;
    peephole(p);
    return 1;
}

/* ---- the new network ------------------------------------------------------------------------ */

typedef struct emitter {
    fuser *fz;
    prt_network *out;
    uint8_t *added; /* constants already in `out` */
} emitter;

static prt_status efail(emitter *e, prt_status s, const char *what)
{
    return prt__onnx_fail(e->fz->err, e->fz->cap, s, "fusing layers: %s: %s", what, prt_network_last_error(e->out));
}

static prt_status use_tensor(emitter *e, int32_t ti)
{
    const prt__net_tensor *t = nt(e->fz, ti);
    prt_status s;
    if (t->kind != PRT__TENSOR_CONSTANT || e->added[ti]) return PRT_OK;
    s = prt_network_add_constant(e->out, t->name, t->dtype, &t->dims, t->data, t->nbytes);
    if (s != PRT_OK) return efail(e, s, t->name);
    e->added[ti] = 1;
    return PRT_OK;
}

/* A constant named after `base` plus `suffix`, unique in both networks. */
static prt_status new_const(emitter *e, const char *base, const char *suffix, const prt_dims *d, const float *v,
                            char *name, size_t cap)
{
    int j = 0;
    prt_status s;
    do snprintf(name, cap, j ? "%.200s%s_%d" : "%.200s%s", base, suffix, j);
    while ((prt__network_find(e->fz->net, name) >= 0 || prt__network_find(e->out, name) >= 0) && ++j < 1000);
    s = prt_network_add_constant(e->out, name, PRT_DTYPE_F32, d, v, (size_t)prt_dims_volume(d) * sizeof(float));
    return s == PRT_OK ? PRT_OK : efail(e, s, name);
}

/* Conv's X, W, B as names in the new network (folded weights added, a zero
 * bias made when `need_b` and the conv has none). */
static prt_status conv_inputs(emitter *e, int32_t ci, int need_b, const char **names, int32_t *nb, char *wbuf,
                              char *bbuf, size_t cap)
{
    fuser *fz = e->fz;
    const prt__net_layer *cv = &fz->net->layers[ci];
    const flayer *c = &fz->l[ci];
    const prt__net_tensor *w = nt(fz, cv->in[1]);
    prt_status s;
    int32_t k;
    names[0] = nt(fz, cv->in[0])->name;
    *nb = cv->nb_in;
    if (!c->w) {
        for (k = 1; k < cv->nb_in; k++) {
            if ((s = use_tensor(e, cv->in[k])) != PRT_OK) return s;
            names[k] = nt(fz, cv->in[k])->name;
        }
    } else {
        prt_dims bd = {.nb = 1, .d = {w->dims.d[0]}};
        if ((s = new_const(e, w->name, "_bn", &w->dims, c->w, wbuf, cap)) != PRT_OK) return s;
        if ((s = new_const(e, w->name, "_bn_bias", &bd, c->b, bbuf, cap)) != PRT_OK) return s;
        names[1] = wbuf;
        names[2] = bbuf;
        *nb = 3;
    }
    if (need_b && *nb == 2) {
        prt_dims bd = {.nb = 1, .d = {w->dims.d[0]}};
        float *z = prt__calloc((size_t)w->dims.d[0], sizeof(float));
        if (!z) return prt__onnx_fail(fz->err, fz->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory fusing %s", cv->name);
        s = new_const(e, w->name, "_zero_bias", &bd, z, bbuf, cap);
        prt__free(z);
        if (s != PRT_OK) return s;
        names[2] = bbuf;
        *nb = 3;
    }
    return PRT_OK;
}

static prt_status emit_group(emitter *e, const fgroup *g)
{
    fuser *fz = e->fz;
    const prt__net_layer *root = &fz->net->layers[g->root];
    const char *ins[3 + MAX_VALS], *outs[1];
    char wbuf[320], bbuf[320];
    prt_field f[64];
    prt_fields fc;
    prog p;
    int32_t nb_in = 0, nb_f = 0, k, first;
    prt_status s;
    first = g->conv >= 0 ? fz->net->layers[g->conv].out[0] : -1;
    if (g->conv >= 0 && fz->l[g->conv].bn >= 0) first = fz->l[g->conv].out;
    if (!make_prog(fz, g, first, &p))
        return prt__onnx_fail(fz->err, fz->cap, PRT_STATUS_INTERNAL, "fusing %s: program limits", root->name);
    if (g->conv >= 0) {
        const prt_fields *cf = prt_owned_fields_get(fz->net->layers[g->conv].fields);
        if ((s = conv_inputs(e, g->conv, 1, ins, &nb_in, wbuf, bbuf, sizeof wbuf)) != PRT_OK) return s;
        for (k = 0; cf && k < cf->nb && nb_f < 60; k++) f[nb_f++] = cf->fields[k];
    }
    for (k = g->conv >= 0 ? 1 : 0; k < p.nb_vals; k++) {
        if ((s = use_tensor(e, p.vals[k])) != PRT_OK) return s;
        ins[nb_in++] = nt(fz, p.vals[k])->name;
    }
    f[nb_f++] = (prt_field){.name = "program", .type = PRT_FIELD_INT64, .count = 4 * p.nb_ins, .data = p.code};
    if (p.nb_consts)
        f[nb_f++] = (prt_field){.name = "consts", .type = PRT_FIELD_FLOAT32, .count = p.nb_consts, .data = p.consts};
    fc.fields = f;
    fc.nb = nb_f;
    fc.reserved_ = 0;
    outs[0] = nt(fz, root->out[0])->name;
    s = prt_network_add_layer(e->out, g->conv >= 0 ? fz->net->layers[g->conv].name : root->name,
                              g->conv >= 0 ? "FusedConv" : "Elementwise", "1", "plugrt", &fc, ins, nb_in, outs, 1);
    return s == PRT_OK ? PRT_OK : efail(e, s, root->name);
}

static prt_status emit_layer(emitter *e, int32_t li)
{
    fuser *fz = e->fz;
    const prt__net_layer *nl = &fz->net->layers[li];
    const char *small_in[8], *small_out[8], **ins = small_in, **outs = small_out;
    char wbuf[320], bbuf[320];
    int32_t k, nb_in = nl->nb_in;
    prt_status s = PRT_OK;
    if (nl->nb_in > 8 || nl->nb_out > 8) {
        ins = prt__calloc((size_t)nl->nb_in + 1, sizeof *ins);
        outs = prt__calloc((size_t)nl->nb_out + 1, sizeof *outs);
        if (!ins || !outs) {
            s = prt__onnx_fail(fz->err, fz->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory copying %s", nl->name);
            goto done;
        }
    }
    if (fz->l[li].kind == K_CONV && fz->l[li].w) {
        if ((s = conv_inputs(e, li, 0, ins, &nb_in, wbuf, bbuf, sizeof wbuf)) != PRT_OK) goto done;
    } else {
        for (k = 0; k < nl->nb_in; k++) {
            if (nl->in[k] < 0) {
                ins[k] = "";
                continue;
            }
            if ((s = use_tensor(e, nl->in[k])) != PRT_OK) goto done;
            ins[k] = nt(fz, nl->in[k])->name;
        }
    }
    for (k = 0; k < nl->nb_out; k++) outs[k] = nt(fz, nl->out[k])->name;
    if (fz->l[li].kind == K_CONV) outs[0] = nt(fz, fz->l[li].out)->name;
    s = prt_network_add_layer(e->out, nl->name, nl->plugin, nl->version, nl->plugin_namespace,
                              nl->fields ? prt_owned_fields_get(nl->fields) : NULL, ins, nb_in, outs, nl->nb_out);
    if (s != PRT_OK) s = efail(e, s, nl->name);
done:
    if (ins != small_in) prt__free((void *)ins);
    if (outs != small_out) prt__free((void *)outs);
    return s;
}

static prt_status emit(fuser *fz, prt_network **out)
{
    const prt_network *net = fz->net;
    emitter e = {fz, NULL, NULL};
    prt_status s;
    int32_t i;
    e.added = prt__calloc((size_t)net->nb_tensors + 1, 1);
    if (!e.added) return prt__onnx_fail(fz->err, fz->cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory fusing layers");
    if ((s = prt_network_create(net->registry, &e.out)) != PRT_OK) {
        prt__free(e.added);
        return prt__onnx_fail(fz->err, fz->cap, s, "fusing layers: cannot create a network");
    }
    for (i = 0; i < net->nb_tensors && s == PRT_OK; i++) {
        const prt__net_tensor *t = &net->tensors[i];
        if (t->kind != PRT__TENSOR_INPUT) continue;
        s = t->shape_values ? prt_network_add_shape_input(e.out, t->name, t->dtype, &t->dims)
                            : prt_network_add_input(e.out, t->name, t->dtype, &t->dims);
        if (s != PRT_OK) s = efail(&e, s, t->name);
    }
    for (i = 0; i < net->nb_layers && s == PRT_OK; i++) {
        const flayer *l = &fz->l[i];
        if (l->dropped) continue;
        if (l->grp >= 0) {
            if (fz->g[l->grp].root == i) s = emit_group(&e, &fz->g[l->grp]);
            continue;
        }
        s = emit_layer(&e, i);
    }
    for (i = 0; i < net->nb_outputs && s == PRT_OK; i++)
        if ((s = prt_network_mark_output(e.out, net->tensors[net->outputs[i]].name)) != PRT_OK)
            s = efail(&e, s, net->tensors[net->outputs[i]].name);
    prt__free(e.added);
    if (s != PRT_OK) {
        prt_network_destroy(e.out);
        return s;
    }
    *out = e.out;
    return PRT_OK;
}

/* ---- the pass --------------------------------------------------------------------------------- */

static int registered(prt_registry *r, const char *name, const char **owner)
{
    const prt_plugin_creator *c = NULL;
    const char *o = NULL;
    if (prt_registry_find(r, name, "1", "plugrt", &c, &o) != PRT_OK || !c) return 0;
    if (!*owner) *owner = o;
    return o && strcmp(o, *owner) == 0;
}

prt_status prt__onnx_fuse(const prt_network *net, prt__onnx_tinfo_fn info, void *user, prt_network **out,
                          int32_t *nb_fused, char *err, size_t cap)
{
    fuser fz;
    prt_status s = PRT_OK;
    int32_t i, k, fused = 0;
    *out = NULL;
    if (nb_fused) *nb_fused = 0;
    memset(&fz, 0, sizeof fz);
    fz.net = net;
    fz.err = err;
    fz.cap = cap;
    fz.have_ew = registered(net->registry, "Elementwise", &fz.owner);
    fz.have_fconv = registered(net->registry, "FusedConv", &fz.owner);
    if (!fz.owner) return PRT_OK; /* no fused ops registered */
    for (i = 0; i < net->nb_layers; i++)
        if (net->layers[i].proto) return PRT_OK; /* not an imported network */
    fz.t = prt__calloc((size_t)net->nb_tensors + 1, sizeof *fz.t);
    fz.l = prt__calloc((size_t)net->nb_layers + 1, sizeof *fz.l);
    fz.g = prt__calloc((size_t)net->nb_layers + 1, sizeof *fz.g);
    if (!fz.t || !fz.l || !fz.g) {
        s = prt__onnx_fail(err, cap, PRT_STATUS_OUT_OF_MEMORY, "out of memory fusing layers");
        goto done;
    }
    for (i = 0; i < net->nb_tensors; i++) {
        const prt__net_tensor *t = &net->tensors[i];
        ftensor *f = &fz.t[i];
        f->prod = t->kind == PRT__TENSOR_LAYER ? t->producer : -1;
        f->rank = -1;
        if (t->kind != PRT__TENSOR_LAYER) {
            f->has_dtype = 1;
            f->dtype = t->dtype;
            f->rank = t->dims.nb;
            for (k = 0; k < t->dims.nb; k++) f->d[k] = t->dims.d[k];
        } else if (info) {
            prt__onnx_tinfo ti;
            memset(&ti, 0, sizeof ti);
            if (info(user, t->name, &ti)) {
                f->has_dtype = ti.has_dtype;
                f->dtype = ti.dtype;
                if (ti.rank_known) {
                    f->rank = ti.dims.nb;
                    for (k = 0; k < ti.dims.nb; k++) f->d[k] = ti.dims.d[k];
                }
            }
        }
    }
    for (i = 0; i < net->nb_outputs; i++) fz.t[net->outputs[i]].is_out = 1;
    for (i = 0; i < net->nb_layers; i++) {
        const prt__net_layer *nl = &net->layers[i];
        for (k = 0; k < nl->nb_in; k++)
            if (nl->in[k] >= 0) fz.t[nl->in[k]].cons++;
        fz.l[i].grp = -1;
        fz.l[i].bn = -1;
        fz.l[i].out = nl->nb_out > 0 ? nl->out[0] : -1;
    }
    for (i = 0; i < net->nb_layers; i++) {
        classify(&fz, i);
        /* rank of an elementwise result: the larger of its operands' */
        if (fz.l[i].kind == K_EW && fz.t[net->layers[i].out[0]].rank < 0) {
            int32_t r = 0;
            for (k = 0; k < fz.l[i].nb_opnd && r >= 0; k++) {
                int32_t rk = fz.t[fz.l[i].opnd[k]].rank;
                r = rk < 0 ? -1 : rk > r ? rk : r;
            }
            fz.t[net->layers[i].out[0]].rank = r;
            for (k = 0; k < PRT_MAX_DIMS; k++) fz.t[net->layers[i].out[0]].d[k] = -1;
        }
        if (fz.l[i].kind == K_CONV && fz.t[net->layers[i].out[0]].rank < 0) {
            fz.t[net->layers[i].out[0]].rank = 4;
            for (k = 0; k < PRT_MAX_DIMS; k++) fz.t[net->layers[i].out[0]].d[k] = -1;
        }
        if (fz.l[i].kind == K_BN) {
            if ((s = fold_bn(&fz, i)) != PRT_OK) goto done;
            if (fz.l[i].dropped) {
                const prt__net_layer *bn = &net->layers[i];
                fz.t[bn->out[0]].rank = fz.t[bn->in[0]].rank;
                memcpy(fz.t[bn->out[0]].d, fz.t[bn->in[0]].d, sizeof fz.t[0].d);
                fused++;
            }
        }
    }
    if (fz.have_ew || fz.have_fconv)
        for (i = net->nb_layers - 1; i >= 0; i--) {
            fgroup *g;
            if (fz.l[i].kind != K_EW || fz.l[i].grp >= 0 || fz.l[i].dropped) continue;
            g = &fz.g[fz.nb_g];
            memset(g, 0, sizeof *g);
            g->root = i;
            g->conv = -1;
            g->mem[g->nb++] = i;
            fz.l[i].grp = fz.nb_g;
            grow_group(&fz, g);
            g->conv = pick_conv(&fz, g);
            if (g->conv < 0 && (g->nb < 2 || !fz.have_ew)) {
                /* not worth a layer of its own: the members stay as they are (later roots
                 * come earlier in the walk and never absorb a layer after them) */
                for (k = 0; k < g->nb; k++) fz.l[g->mem[k]].grp = -1;
                continue;
            }
            if (g->conv >= 0) fz.l[g->conv].grp = fz.nb_g;
            fused += g->nb;
            fz.nb_g++;
        }
    if (fused == 0) goto done;
    if ((s = emit(&fz, out)) != PRT_OK) goto done;
    if (nb_fused) *nb_fused = fused;
done:
    for (i = 0; fz.l && i < net->nb_layers; i++) {
        prt__free(fz.l[i].w);
        prt__free(fz.l[i].b);
    }
    prt__free(fz.t);
    prt__free(fz.l);
    prt__free(fz.g);
    return s;
}
