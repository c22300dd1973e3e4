/* engine/plan.c - plan file writer and reader (format: engine/plan.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/checked.h"
#include "core/core.h"
#include "core/hmap.h"
#include "engine/expr.h"
#include "engine/plan.h"

#define TAG(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define TAG_META TAG('M', 'E', 'T', 'A')
#define TAG_EXPR TAG('E', 'X', 'P', 'R')
#define TAG_TENS TAG('T', 'E', 'N', 'S')
#define TAG_LAYR TAG('L', 'A', 'Y', 'R')
#define TAG_VALU TAG('V', 'A', 'L', 'U')
#define TAG_FOLD TAG('F', 'O', 'L', 'D')
#define TAG_TACT TAG('T', 'A', 'C', 'T')
#define TAG_PLUG TAG('P', 'L', 'U', 'G')
#define TAG_MEMP TAG('M', 'E', 'M', 'P')
#define TAG_WGHT TAG('W', 'G', 'H', 'T')
#define SECTION_OPTIONAL 1u

/* Limits that keep a corrupt count from asking for absurd memory before the
 * reader notices the data is not there. */
#define MAX_ITEMS 1000000

uint64_t prt__plan_checksum(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void *prt__plan_aligned_alloc(size_t n, void **block)
{
    uint8_t *b;
    uintptr_t a;
    if (n > SIZE_MAX - 64) return NULL;
    b = prt__malloc(n + 64);
    if (!b) return NULL;
    a = ((uintptr_t)b + 63) & ~(uintptr_t)63;
    *block = b;
    return (void *)a;
}

void prt__ptactic_free(prt__ptactic *t)
{
    if (!t) return;
    prt__free(t->name);
    prt__free(t->ids);
    prt__free(t->ns);
    prt__free(t);
}

void prt__plan_free(prt__plan *p)
{
    int32_t i;
    if (!p) return;
    prt__free(p->lib_version);
    prt__free(p->nodes);
    if (p->tensors)
        for (i = 0; i < p->nb_tensors; i++) prt__free(p->tensors[i].name);
    prt__free(p->tensors);
    if (p->layers)
        for (i = 0; i < p->nb_layers; i++) {
            prt__free(p->layers[i].name);
            prt__free(p->layers[i].in);
            prt__free(p->layers[i].out);
            prt__ptactic_free(p->layers[i].tactic);
        }
    prt__free(p->layers);
    if (p->records)
        for (i = 0; i < p->nb_records; i++) prt__free(p->records[i].data);
    prt__free(p->records);
    if (p->folds)
        for (i = 0; i < p->nb_folds; i++) {
            int32_t j;
            prt__free(p->folds[i].layer);
            prt__free(p->folds[i].plugin);
            prt__free(p->folds[i].version);
            if (p->folds[i].outputs)
                for (j = 0; j < p->folds[i].nb_out; j++) prt__free(p->folds[i].outputs[j]);
            prt__free(p->folds[i].outputs);
        }
    prt__free(p->folds);
    prt__free(p->weights_block);
    prt__free(p);
}

/* ---- evaluation ----------------------------------------------------------- */

int32_t prt__plan_eval(const prt__plan *p, const prt_dims *in, int64_t *vals, const uint8_t *ddep_known)
{
    int32_t i, nbad = 0;
    for (i = 0; i < p->nb_nodes; i++) {
        const prt__pnode *n = &p->nodes[i];
        int64_t v = PRT__EVAL_BAD;
        switch (n->kind) {
        case PRT__NODE_CONST: v = n->v; break;
        case PRT__NODE_LEAF:
            if (n->a >= 0 && n->a < 2 * p->nb_inputs && n->b >= 0 && n->b < in[n->a].nb) v = in[n->a].d[n->b];
            break;
        case PRT__NODE_OP:
            if (vals[n->a] == PRT__EVAL_BAD || vals[n->b] == PRT__EVAL_BAD ||
                prt__expr_apply(n->op, vals[n->a], vals[n->b], &v) != 0)
                v = PRT__EVAL_BAD;
            break;
        case PRT__NODE_DDEP: v = (ddep_known && ddep_known[i]) ? vals[i] : vals[n->a]; break;
        default: break;
        }
        vals[i] = v;
        if (v == PRT__EVAL_BAD) nbad++;
    }
    return nbad;
}

void prt__plan_inputs_at(const prt__plan *p, int point, prt_dims *in)
{
    int32_t i, k = 0;
    for (i = 0; i < p->nb_tensors && k < p->nb_inputs; i++) {
        const prt__ptensor *t = &p->tensors[i];
        prt_dims *v = &in[p->nb_inputs + k];
        if (t->role != PRT__ROLE_INPUT) continue;
        in[k] = point == 0 ? t->min : point == 1 ? t->opt : t->max;
        memset(v, 0, sizeof *v);
        if (t->nb_vals >= 0) *v = point == 0 ? t->vmin : point == 1 ? t->vopt : t->vmax;
        k++;
    }
}

void prt__plan_dyn_desc(const prt__ptensor *t, prt_dyn_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    d->desc.dtype = t->dtype;
    d->desc.format = t->format;
    d->desc.dims = t->dims;
    d->min = t->min;
    d->opt = t->opt;
    d->max = t->max;
}

/* ---- writer ------------------------------------------------------------------ */

static size_t section_begin(prt_writer *w, uint32_t tag)
{
    size_t at;
    prt_write_u32(w, tag);
    prt_write_u32(w, 0);
    at = w->len;
    prt_write_u64(w, 0);
    return at;
}

static void section_end(prt_writer *w, size_t at)
{
    uint64_t n = (uint64_t)(w->len - at - 8);
    int i;
    if (w->failed || !w->buf) return;
    for (i = 0; i < 8; i++) w->buf[at + (size_t)i] = (uint8_t)(n >> (8 * i));
}

static void write_dims(prt_writer *w, const prt_dims *d, int32_t nb)
{
    int32_t j;
    for (j = 0; j < nb; j++) prt_write_i64(w, d->d[j]);
}

/* Tensors with shape values (the entries of VALU). */
static int32_t nb_valued(const prt__plan *p)
{
    int32_t i, n = 0;
    for (i = 0; i < p->nb_tensors; i++)
        if (p->tensors[i].nb_vals >= 0) n++;
    return n;
}

/* Layers with a tactic (the entries of TACT). */
static int32_t nb_tactics(const prt__plan *p)
{
    int32_t i, n = 0;
    for (i = 0; i < p->nb_layers; i++)
        if (p->layers[i].tactic) n++;
    return n;
}

static void write_all(const prt__plan *p, prt_writer *w)
{
    static const uint8_t zeros[24] = {0};
    size_t at;
    int32_t i, j;

    prt_write_bytes(w, PRT__PLAN_MAGIC, 8);
    /* A VALU section (even one holding only small integer constants) needs
     * a reader of version 2. */
    prt_write_u32(w, p->read_version > PRT__PLAN_READ_VERSION   ? p->read_version
                     : nb_valued(p) && PRT__PLAN_READ_VERSION < 2 ? 2
                                                                  : PRT__PLAN_READ_VERSION);
    prt_write_u32(w, PRT__PLAN_WRITE_VERSION);
    prt_write_u64(w, 0); /* total length: patched */
    prt_write_u64(w, 0); /* checksum: patched */
    prt_write_u32(w, PRT__PLAN_HEADER_SIZE);
    prt_write_u32(w, 7 + (nb_valued(p) ? 1 : 0) + (p->nb_folds ? 1 : 0) + (nb_tactics(p) ? 1 : 0));
    prt_write_bytes(w, zeros, sizeof zeros);

    at = section_begin(w, TAG_META);
    prt_write_str(w, p->lib_version);
    prt_write_u32(w, p->precision);
    prt_write_u32(w, p->device);
    prt_write_u64(w, p->workspace_limit);
    prt_write_u32(w, 1);
    section_end(w, at);

    at = section_begin(w, TAG_EXPR);
    prt_write_u32(w, (uint32_t)p->nb_nodes);
    for (i = 0; i < p->nb_nodes; i++) {
        prt_write_u8(w, p->nodes[i].kind);
        prt_write_u8(w, p->nodes[i].op);
        prt_write_u16(w, 0);
        prt_write_i32(w, p->nodes[i].a);
        prt_write_i32(w, p->nodes[i].b);
        prt_write_i64(w, p->nodes[i].v);
    }
    section_end(w, at);

    at = section_begin(w, TAG_TENS);
    prt_write_u32(w, (uint32_t)p->nb_tensors);
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        prt_write_str(w, t->name);
        prt_write_u32(w, t->role);
        prt_write_u32(w, (uint32_t)t->dtype);
        prt_write_u32(w, (uint32_t)t->format);
        prt_write_i32(w, t->nb_dims);
        for (j = 0; j < t->nb_dims; j++) {
            prt_write_i32(w, t->expr[j]);
            prt_write_i64(w, t->dims.d[j]);
        }
        write_dims(w, &t->min, t->nb_dims);
        write_dims(w, &t->opt, t->nb_dims);
        write_dims(w, &t->max, t->nb_dims);
    }
    section_end(w, at);

    at = section_begin(w, TAG_LAYR);
    prt_write_u32(w, (uint32_t)p->nb_layers);
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *l = &p->layers[i];
        prt_write_str(w, l->name);
        prt_write_u32(w, l->kind);
        prt_write_i32(w, l->plugin);
        prt_write_u32(w, (uint32_t)l->cast_from);
        prt_write_u32(w, (uint32_t)l->cast_to);
        prt_write_u32(w, (uint32_t)l->nb_in);
        for (j = 0; j < l->nb_in; j++) prt_write_i32(w, l->in[j]);
        prt_write_u32(w, (uint32_t)l->nb_out);
        for (j = 0; j < l->nb_out; j++) prt_write_i32(w, l->out[j]);
        prt_write_u64(w, l->workspace);
    }
    section_end(w, at);

    if (nb_valued(p)) {
        at = section_begin(w, TAG_VALU);
        prt_write_u32(w, (uint32_t)nb_valued(p));
        for (i = 0; i < p->nb_tensors; i++) {
            const prt__ptensor *t = &p->tensors[i];
            if (t->nb_vals < 0) continue;
            prt_write_u32(w, (uint32_t)i);
            prt_write_u32(w, (uint32_t)t->nb_vals);
            for (j = 0; j < t->nb_vals; j++) prt_write_i32(w, t->val[j]);
            if (t->role == PRT__ROLE_INPUT) {
                write_dims(w, &t->vmin, t->nb_vals);
                write_dims(w, &t->vopt, t->nb_vals);
                write_dims(w, &t->vmax, t->nb_vals);
            }
        }
        section_end(w, at);
    }

    if (p->nb_folds) {
        prt_write_u32(w, TAG_FOLD);
        prt_write_u32(w, SECTION_OPTIONAL);
        at = w->len;
        prt_write_u64(w, 0);
        prt_write_u32(w, (uint32_t)p->nb_folds);
        for (i = 0; i < p->nb_folds; i++) {
            const prt__pfold *f = &p->folds[i];
            prt_write_str(w, f->layer);
            prt_write_str(w, f->plugin);
            prt_write_str(w, f->version);
            prt_write_u32(w, (uint32_t)f->nb_out);
            for (j = 0; j < f->nb_out; j++) prt_write_str(w, f->outputs[j]);
        }
        section_end(w, at);
    }

    if (nb_tactics(p)) {
        prt_write_u32(w, TAG_TACT);
        prt_write_u32(w, SECTION_OPTIONAL);
        at = w->len;
        prt_write_u64(w, 0);
        prt_write_u32(w, (uint32_t)nb_tactics(p));
        for (i = 0; i < p->nb_layers; i++) {
            const prt__ptactic *t = p->layers[i].tactic;
            if (!t) continue;
            prt_write_u32(w, (uint32_t)i);
            prt_write_i32(w, t->tactic);
            prt_write_u32(w, t->source);
            prt_write_str(w, t->name ? t->name : "");
            prt_write_u32(w, (uint32_t)t->nb);
            for (j = 0; j < t->nb; j++) {
                prt_write_i32(w, t->ids[j]);
                prt_write_u64(w, t->ns[j]);
            }
        }
        section_end(w, at);
    }

    at = section_begin(w, TAG_PLUG);
    prt_write_u32(w, (uint32_t)p->nb_records);
    for (i = 0; i < p->nb_records; i++) {
        prt_write_u64(w, (uint64_t)p->records[i].len);
        prt_write_bytes(w, p->records[i].data, p->records[i].len);
    }
    section_end(w, at);

    at = section_begin(w, TAG_MEMP);
    prt_write_u64(w, p->arena_size);
    prt_write_u64(w, p->workspace_size);
    prt_write_u32(w, (uint32_t)p->nb_tensors);
    for (i = 0; i < p->nb_tensors; i++) {
        prt_write_u64(w, p->tensors[i].offset);
        prt_write_u64(w, p->tensors[i].bytes);
    }
    section_end(w, at);

    at = section_begin(w, TAG_WGHT);
    prt_write_pad(w, PRT__PLAN_WEIGHT_ALIGN);
    prt_write_bytes(w, p->weights, (size_t)p->weights_len);
    section_end(w, at);
}

static void put_u64(uint8_t *b, uint64_t v)
{
    int i;
    for (i = 0; i < 8; i++) b[i] = (uint8_t)(v >> (8 * i));
}

prt_status prt__plan_write(const prt__plan *p, uint8_t **out, size_t *len, char *err, size_t cap)
{
    prt_writer w = prt_writer_init(NULL, 0);
    uint8_t *buf;
    write_all(p, &w);
    if (w.failed) {
        snprintf(err, cap, "the plan is too large to write");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    buf = prt__malloc(w.len);
    if (!buf) {
        snprintf(err, cap, "out of memory writing a plan of %zu bytes", w.len);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    memset(buf, 0, w.len);
    {
        size_t n = w.len;
        w = prt_writer_init(buf, n);
        write_all(p, &w);
        if (w.failed || w.len != n) {
            prt__free(buf);
            snprintf(err, cap, "internal error: the plan changed size while being written");
            return PRT_STATUS_INTERNAL;
        }
    }
    put_u64(buf + 16, (uint64_t)w.len);
    put_u64(buf + 24, prt__plan_checksum(buf + PRT__PLAN_HEADER_SIZE, w.len - PRT__PLAN_HEADER_SIZE));
    *out = buf;
    *len = w.len;
    return PRT_OK;
}

/* ---- reader ------------------------------------------------------------------ */

typedef struct rctx {
    char *err;
    size_t cap;
    prt_reader r; /* over the whole plan; len limited to the current section */
    const char *section;
} rctx;

static prt_status rfail(rctx *c, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static prt_status rfail(rctx *c, prt_status s, const char *fmt, ...)
{
    va_list ap;
    char msg[512];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->section)
        snprintf(c->err, c->cap, "corrupt plan: section %s: %s", c->section, msg);
    else
        snprintf(c->err, c->cap, "corrupt plan: %s", msg);
    return s;
}

static prt_status ended(rctx *c, const char *what)
{
    return rfail(c, PRT_STATUS_BAD_FORMAT, "ends early while reading %s (byte %zu)", what, c->r.pos);
}

/* A count, checked against a cap and against what is left (each item takes
 * at least `min_bytes`). */
static prt_status read_count(rctx *c, const char *what, size_t min_bytes, int32_t *out)
{
    uint32_t n = prt_read_u32(&c->r);
    if (c->r.failed) return ended(c, what);
    if (n > MAX_ITEMS || (min_bytes && (uint64_t)n * min_bytes > prt_reader_left(&c->r)))
        return rfail(c, PRT_STATUS_BAD_FORMAT, "%u %s do not fit in the %zu bytes left", n, what,
                     prt_reader_left(&c->r));
    *out = (int32_t)n;
    return PRT_OK;
}

static prt_status read_name(rctx *c, const char *what, char **out)
{
    uint32_t n;
    const char *s = prt_read_str(&c->r, &n);
    if (c->r.failed) return ended(c, what);
    if (n && memchr(s, 0, n)) return rfail(c, PRT_STATUS_BAD_FORMAT, "%s holds a NUL byte", what);
    *out = prt__strndup(s, n);
    if (!*out) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return PRT_OK;
}

static prt_status read_meta(rctx *c, prt__plan *p)
{
    prt_status s;
    uint32_t nprof;
    if ((s = read_name(c, "the library version", &p->lib_version)) != PRT_OK) return s;
    p->precision = prt_read_u32(&c->r);
    p->device = prt_read_u32(&c->r);
    p->workspace_limit = prt_read_u64(&c->r);
    nprof = prt_read_u32(&c->r);
    if (c->r.failed) return ended(c, "the builder config");
    if (p->precision > PRT_PRECISION_FP16)
        return rfail(c, PRT_STATUS_BAD_FORMAT, "precision is %u; expected 0 (fp32) or 1 (fp16)", p->precision);
    if (p->device > PRT_DEVICE_CUDA)
        return rfail(c, PRT_STATUS_BAD_FORMAT, "device is %u; expected 0 (cpu) or 1 (cuda)", p->device);
    if (nprof != 1)
        return rfail(c, PRT_STATUS_UNSUPPORTED, "%u optimization profiles; this reader supports exactly 1", nprof);
    return PRT_OK;
}

static prt_status read_expr(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, n;
    if ((s = read_count(c, "expression nodes", 20, &n)) != PRT_OK) return s;
    p->nodes = prt__calloc((size_t)(n ? n : 1), sizeof *p->nodes);
    if (!p->nodes) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) {
        prt__pnode *e = &p->nodes[i];
        uint16_t z;
        e->kind = prt_read_u8(&c->r);
        e->op = prt_read_u8(&c->r);
        z = prt_read_u16(&c->r);
        e->a = prt_read_i32(&c->r);
        e->b = prt_read_i32(&c->r);
        e->v = prt_read_i64(&c->r);
        if (c->r.failed) return ended(c, "an expression node");
        if (z != 0) return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d: reserved bytes are not zero", i);
        switch (e->kind) {
        case PRT__NODE_CONST: break;
        case PRT__NODE_LEAF:
            if (e->a < 0 || e->b < 0 || e->b >= PRT_MAX_DIMS)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d: input extent (%d, %d) is out of range", i, e->a, e->b);
            break;
        case PRT__NODE_OP:
            if (e->op > PRT_EXPR_CEIL_DIV || e->a < 0 || e->a >= i || e->b < 0 || e->b >= i)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d: operation %u on nodes %d and %d is invalid", i, e->op,
                             e->a, e->b);
            break;
        case PRT__NODE_DDEP:
            if (e->a < 0 || e->a >= i)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d: upper bound node %d does not precede it", i, e->a);
            break;
        default: return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d has kind %u; expected 0..3", i, e->kind);
        }
    }
    p->nb_nodes = n;
    return PRT_OK;
}

static prt_status read_tens_all(rctx *c, prt__plan *p, prt__hmap *names);
static prt_status read_tens(rctx *c, prt__plan *p)
{
    prt__hmap names; /* duplicate names found in constant time */
    prt_status s;
    prt__hmap_init(&names, PRT__HMAP_STRING);
    s = read_tens_all(c, p, &names);
    prt__hmap_free(&names);
    return s;
}

static prt_status read_tens_all(rctx *c, prt__plan *p, prt__hmap *names)
{
    prt_status s;
    int32_t i, j, n;
    if ((s = read_count(c, "tensors", 20, &n)) != PRT_OK) return s;
    p->tensors = prt__calloc((size_t)(n ? n : 1), sizeof *p->tensors);
    if (!p->tensors || prt__hmap_reserve(names, (size_t)n) != 0)
        return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    p->nb_tensors = 0;
    for (i = 0; i < n; i++) {
        prt__ptensor *t = &p->tensors[i];
        t->nb_vals = -1;
        if ((s = read_name(c, "a tensor name", &t->name)) != PRT_OK) return s;
        p->nb_tensors = i + 1;
        if (!t->name[0]) return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor %d has an empty name", i);
        if (prt__hmap_put(names, t->name, i) != 0)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor name \"%s\" appears twice", t->name);
        t->role = prt_read_u32(&c->r);
        t->dtype = (prt_dtype)prt_read_u32(&c->r);
        t->format = (prt_format)prt_read_u32(&c->r);
        t->nb_dims = prt_read_i32(&c->r);
        if (c->r.failed) return ended(c, "a tensor");
        if (t->role > PRT__ROLE_CONSTANT)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" has role %u; expected 0..3", t->name, t->role);
        if ((unsigned)t->dtype >= PRT_DTYPE_COUNT_)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" has dtype %u", t->name, (unsigned)t->dtype);
        if ((unsigned)t->format >= PRT_FORMAT_COUNT_)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" has format %u", t->name, (unsigned)t->format);
        if (t->nb_dims < 0 || t->nb_dims > PRT_MAX_DIMS)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" has %d dims", t->name, t->nb_dims);
        t->dims.nb = t->min.nb = t->opt.nb = t->max.nb = t->nb_dims;
        for (j = 0; j < t->nb_dims; j++) {
            t->expr[j] = prt_read_i32(&c->r);
            t->dims.d[j] = prt_read_i64(&c->r);
            if (c->r.failed) return ended(c, "tensor dims");
            if (t->expr[j] < 0 || t->expr[j] >= p->nb_nodes)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" dim %d names expression node %d of %d", t->name,
                             j, t->expr[j], p->nb_nodes);
            if (t->dims.d[j] < -1)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" dim %d is %" PRId64, t->name, j, t->dims.d[j]);
        }
        for (j = 0; j < t->nb_dims; j++) t->min.d[j] = prt_read_i64(&c->r);
        for (j = 0; j < t->nb_dims; j++) t->opt.d[j] = prt_read_i64(&c->r);
        for (j = 0; j < t->nb_dims; j++) t->max.d[j] = prt_read_i64(&c->r);
        if (c->r.failed) return ended(c, "tensor ranges");
        for (j = 0; j < t->nb_dims; j++) {
            if (t->min.d[j] < 0 || t->min.d[j] > t->opt.d[j] || t->opt.d[j] > t->max.d[j])
                return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" dim %d: range %" PRId64 "/%" PRId64 "/%" PRId64
                             " is not min <= opt <= max", t->name, j, t->min.d[j], t->opt.d[j], t->max.d[j]);
        }
        if (t->role == PRT__ROLE_INPUT) {
            /* An input's dims are its own extents. */
            for (j = 0; j < t->nb_dims; j++) {
                const prt__pnode *e = &p->nodes[t->expr[j]];
                if (e->kind != PRT__NODE_LEAF || e->a != p->nb_inputs || e->b != j)
                    return rfail(c, PRT_STATUS_BAD_FORMAT, "input \"%s\" dim %d is not its own extent", t->name, j);
                if (t->dims.d[j] >= 0 && (t->min.d[j] != t->dims.d[j] || t->max.d[j] != t->dims.d[j]))
                    return rfail(c, PRT_STATUS_BAD_FORMAT, "input \"%s\" dim %d is fixed but has a range", t->name, j);
            }
            p->nb_inputs++;
        }
    }
    for (i = 0; i < p->nb_nodes; i++) /* values of inputs (a >= nb_inputs): checked with VALU */
        if (p->nodes[i].kind == PRT__NODE_LEAF &&
            (p->nodes[i].a >= 2 * p->nb_inputs || (p->nodes[i].a >= p->nb_inputs && p->read_version < 2)))
            return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d names input %d; the plan has %d", i, p->nodes[i].a,
                         p->nb_inputs);
    return PRT_OK;
}

static prt_status read_indices(rctx *c, prt__plan *p, const char *lname, const char *what, int absent_ok, int32_t *nb,
                               int32_t **out)
{
    prt_status s;
    int32_t j, n;
    if ((s = read_count(c, what, 4, &n)) != PRT_OK) return s;
    *out = prt__calloc((size_t)(n ? n : 1), sizeof(int32_t));
    if (!*out) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    *nb = n;
    for (j = 0; j < n; j++) {
        (*out)[j] = prt_read_i32(&c->r);
        if (c->r.failed) return ended(c, what);
        if ((*out)[j] == -1 && absent_ok) continue; /* an absent optional input */
        if ((*out)[j] < 0 || (*out)[j] >= p->nb_tensors)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\": %s %d is tensor %d of %d", lname, what, j, (*out)[j],
                         p->nb_tensors);
    }
    return PRT_OK;
}

/* A cast converts every element of its input into its output: both must
 * have the same extents, as the same expressions (so they agree at every
 * shape, not only at the profile's points), the same known extents and
 * ranges, and the same format. */
static prt_status check_cast_extents(rctx *c, const prt__plan *p, const prt__player *l)
{
    const prt__ptensor *a = &p->tensors[l->in[0]], *b = &p->tensors[l->out[0]];
    int32_t j;
    if (a->format != b->format)
        return rfail(c, PRT_STATUS_BAD_FORMAT, "cast layer \"%s\" reads format %s and writes %s", l->name,
                     prt_format_name(a->format), prt_format_name(b->format));
    for (j = 0; j < a->nb_dims; j++)
        if (a->expr[j] != b->expr[j] || a->dims.d[j] != b->dims.d[j] || a->min.d[j] != b->min.d[j] ||
            a->opt.d[j] != b->opt.d[j] || a->max.d[j] != b->max.d[j])
            return rfail(c, PRT_STATUS_BAD_FORMAT,
                         "cast layer \"%s\": input \"%s\" and output \"%s\" must have the same extents, but dim %d "
                         "differs (expression node %d and %d, max %" PRId64 " and %" PRId64 ")",
                         l->name, a->name, b->name, j, a->expr[j], b->expr[j], a->max.d[j], b->max.d[j]);
    return PRT_OK;
}

static prt_status read_layr(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, j, n;
    int32_t *producer;
    if ((s = read_count(c, "layers", 30, &n)) != PRT_OK) return s;
    p->layers = prt__calloc((size_t)(n ? n : 1), sizeof *p->layers);
    producer = prt__malloc((size_t)(p->nb_tensors ? p->nb_tensors : 1) * sizeof(int32_t));
    if (!p->layers || !producer) {
        prt__free(producer);
        return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    for (i = 0; i < p->nb_tensors; i++) producer[i] = -1;
    p->nb_layers = 0;
    for (i = 0; i < n; i++) {
        prt__player *l = &p->layers[i];
        if ((s = read_name(c, "a layer name", &l->name)) != PRT_OK) goto done;
        p->nb_layers = i + 1;
        l->kind = prt_read_u32(&c->r);
        l->plugin = prt_read_i32(&c->r);
        l->cast_from = (prt_dtype)prt_read_u32(&c->r);
        l->cast_to = (prt_dtype)prt_read_u32(&c->r);
        if (c->r.failed) {
            s = ended(c, "a layer");
            goto done;
        }
        if ((s = read_indices(c, p, l->name, "input", l->kind == PRT__LAYER_PLUGIN && p->read_version >= 2,
                              &l->nb_in, &l->in)) != PRT_OK)
            goto done;
        if ((s = read_indices(c, p, l->name, "output", 0, &l->nb_out, &l->out)) != PRT_OK) goto done;
        l->workspace = prt_read_u64(&c->r);
        if (c->r.failed) {
            s = ended(c, "a layer's workspace");
            goto done;
        }
        if (l->kind == PRT__LAYER_PLUGIN) {
            if (l->plugin < 0) {
                s = rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" names plugin record %d", l->name, l->plugin);
                goto done;
            }
        } else if (l->kind == PRT__LAYER_CAST) {
            int ok = (l->cast_from == PRT_DTYPE_F32 && l->cast_to == PRT_DTYPE_F16) ||
                     (l->cast_from == PRT_DTYPE_F16 && l->cast_to == PRT_DTYPE_F32);
            if (l->plugin != -1 || !ok || l->nb_in != 1 || l->nb_out != 1 ||
                p->tensors[l->in[0]].dtype != l->cast_from || p->tensors[l->out[0]].dtype != l->cast_to ||
                p->tensors[l->in[0]].nb_dims != p->tensors[l->out[0]].nb_dims) {
                s = rfail(c, PRT_STATUS_BAD_FORMAT, "cast layer \"%s\" is inconsistent", l->name);
                goto done;
            }
            if ((s = check_cast_extents(c, p, l)) != PRT_OK) goto done;
        } else {
            s = rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" has kind %u; expected 0 or 1", l->name, l->kind);
            goto done;
        }
        for (j = 0; j < l->nb_in; j++) {
            const prt__ptensor *t;
            if (l->in[j] < 0) continue;
            t = &p->tensors[l->in[j]];
            if ((t->role == PRT__ROLE_ACTIVATION || t->role == PRT__ROLE_OUTPUT) && producer[l->in[j]] < 0) {
                s = rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" reads \"%s\" before any layer writes it", l->name,
                          t->name);
                goto done;
            }
        }
        for (j = 0; j < l->nb_out; j++) {
            const prt__ptensor *t = &p->tensors[l->out[j]];
            if ((t->role != PRT__ROLE_ACTIVATION && t->role != PRT__ROLE_OUTPUT) || producer[l->out[j]] >= 0) {
                s = rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" writes \"%s\", which is %s", l->name, t->name,
                          producer[l->out[j]] >= 0 ? "written twice" : "not an activation or output");
                goto done;
            }
            producer[l->out[j]] = i;
        }
    }
    for (i = 0; i < p->nb_tensors; i++) {
        uint32_t role = p->tensors[i].role;
        if ((role == PRT__ROLE_ACTIVATION || role == PRT__ROLE_OUTPUT) && producer[i] < 0) {
            s = rfail(c, PRT_STATUS_BAD_FORMAT, "no layer writes \"%s\"", p->tensors[i].name);
            goto done;
        }
    }
    s = PRT_OK;
done:
    prt__free(producer);
    return s;
}

static prt_status read_valu(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, j, n;
    if (p->read_version < 2) return rfail(c, PRT_STATUS_BAD_FORMAT, "shape values need read version 2, the plan says %u",
                                          p->read_version);
    if ((s = read_count(c, "tensors with values", 8, &n)) != PRT_OK) return s;
    for (i = 0; i < n; i++) {
        uint32_t ti = prt_read_u32(&c->r), nb = prt_read_u32(&c->r);
        prt__ptensor *t;
        int64_t vol;
        if (c->r.failed) return ended(c, "a tensor's values");
        if (ti >= (uint32_t)p->nb_tensors || nb > PRT_MAX_DIMS || p->tensors[ti].nb_vals >= 0)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "entry %d: tensor %u with %u values is out of range or repeated", i,
                         ti, nb);
        t = &p->tensors[ti];
        vol = prt_dims_volume(&t->dims);
        if ((t->dtype != PRT_DTYPE_I32 && t->dtype != PRT_DTYPE_I64) || t->nb_dims > 1 || vol != (int64_t)nb)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" has %u values but is %s with %d dims (%lld elements)",
                         t->name, nb, prt_dtype_name(t->dtype), t->nb_dims, (long long)vol);
        for (j = 0; j < (int32_t)nb; j++) {
            t->val[j] = prt_read_i32(&c->r);
            if (c->r.failed) return ended(c, "a tensor's values");
            if (t->val[j] < 0 || t->val[j] >= p->nb_nodes)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" value %d names expression node %d of %d", t->name,
                             j, t->val[j], p->nb_nodes);
        }
        t->nb_vals = (int32_t)nb;
        if (t->role == PRT__ROLE_INPUT) {
            prt_dims *r[3] = {&t->vmin, &t->vopt, &t->vmax};
            int k;
            for (k = 0; k < 3; k++) {
                r[k]->nb = (int32_t)nb;
                for (j = 0; j < (int32_t)nb; j++) r[k]->d[j] = prt_read_i64(&c->r);
            }
            if (c->r.failed) return ended(c, "an input's value range");
            for (j = 0; j < (int32_t)nb; j++)
                if (t->vmin.d[j] > t->vopt.d[j] || t->vopt.d[j] > t->vmax.d[j])
                    return rfail(c, PRT_STATUS_BAD_FORMAT, "input \"%s\" value %d: range %" PRId64 "/%" PRId64 "/%" PRId64
                                 " is not min <= opt <= max", t->name, j, t->vmin.d[j], t->vopt.d[j], t->vmax.d[j]);
        }
    }
    /* A leaf past the inputs' extents is a value of a shape-value input,
     * and names one it has. */
    for (i = 0; i < p->nb_nodes; i++) {
        const prt__pnode *e = &p->nodes[i];
        int32_t k = 0, ti;
        if (e->kind != PRT__NODE_LEAF || e->a < p->nb_inputs) continue;
        for (ti = 0; ti < p->nb_tensors; ti++)
            if (p->tensors[ti].role == PRT__ROLE_INPUT && k++ == e->a - p->nb_inputs) break;
        if (ti == p->nb_tensors || p->tensors[ti].nb_vals <= e->b)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "node %d names value %d of input %d, which has no such value", i,
                         e->b, e->a - p->nb_inputs);
    }
    return PRT_OK;
}

static prt_status read_fold(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, j, n;
    if ((s = read_count(c, "folded layers", 16, &n)) != PRT_OK) return s;
    p->folds = prt__calloc((size_t)(n ? n : 1), sizeof *p->folds);
    if (!p->folds) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) {
        prt__pfold *f = &p->folds[i];
        p->nb_folds = i + 1;
        if ((s = read_name(c, "a folded layer's name", &f->layer)) != PRT_OK ||
            (s = read_name(c, "a folded layer's plugin", &f->plugin)) != PRT_OK ||
            (s = read_name(c, "a folded layer's version", &f->version)) != PRT_OK ||
            (s = read_count(c, "folded outputs", 4, &f->nb_out)) != PRT_OK)
            return s;
        f->outputs = prt__calloc((size_t)(f->nb_out ? f->nb_out : 1), sizeof *f->outputs);
        if (!f->outputs) {
            f->nb_out = 0;
            return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        }
        for (j = 0; j < f->nb_out; j++)
            if ((s = read_name(c, "a folded output's name", &f->outputs[j])) != PRT_OK) return s;
    }
    return PRT_OK;
}

static prt_status read_tact(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, j, k, n, last = -1;
    /* index, tactic, source, name length, count: 20 bytes at least */
    if ((s = read_count(c, "layer tactics", 20, &n)) != PRT_OK) return s;
    for (i = 0; i < n; i++) {
        uint32_t li = prt_read_u32(&c->r);
        prt__ptactic *t;
        int found = 0;
        if (c->r.failed) return ended(c, "a layer index");
        if (li >= (uint32_t)p->nb_layers || (int32_t)li <= last)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "entry %d names layer %u; expected a layer after %d and before %d",
                         i, li, last, p->nb_layers);
        if (p->layers[li].kind != PRT__LAYER_PLUGIN)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "entry %d names layer %u (\"%s\"), which is not a plugin layer", i, li,
                         p->layers[li].name);
        last = (int32_t)li;
        t = prt__calloc(1, sizeof *t);
        if (!t) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        p->layers[li].tactic = t; /* freed with the plan from here */
        t->tactic = prt_read_i32(&c->r);
        t->source = prt_read_u32(&c->r);
        if (c->r.failed) return ended(c, "a layer's tactic");
        if ((s = read_name(c, "a tactic's name", &t->name)) != PRT_OK) return s;
        if ((s = read_count(c, "tactic candidates", 12, &t->nb)) != PRT_OK) return s;
        if (t->tactic <= 0 || t->source >= PRT__TACTIC_SOURCE_COUNT_ || t->nb < 1 || t->nb > PRT__PLAN_MAX_TACTICS)
            return rfail(c, PRT_STATUS_BAD_FORMAT,
                         "layer \"%s\": tactic %d, source %u, %d candidates; expected a tactic > 0, a source 0..%d "
                         "and 1..%d candidates",
                         p->layers[li].name, (int)t->tactic, t->source, (int)t->nb, PRT__TACTIC_SOURCE_COUNT_ - 1,
                         PRT__PLAN_MAX_TACTICS);
        t->ids = prt__calloc((size_t)t->nb, sizeof *t->ids);
        t->ns = prt__calloc((size_t)t->nb, sizeof *t->ns);
        if (!t->ids || !t->ns) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        for (j = 0; j < t->nb; j++) {
            t->ids[j] = prt_read_i32(&c->r);
            t->ns[j] = prt_read_u64(&c->r);
            if (c->r.failed) return ended(c, "a tactic candidate");
            if (t->ids[j] <= 0)
                return rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\": candidate %d is tactic %d; expected an id > 0",
                             p->layers[li].name, j, (int)t->ids[j]);
            for (k = 0; k < j; k++)
                if (t->ids[k] == t->ids[j])
                    return rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\": tactic %d is listed twice",
                                 p->layers[li].name, (int)t->ids[j]);
            if (t->ids[j] == t->tactic) found = 1;
        }
        if (!found)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\": tactic %d is not one of its %d candidates",
                         p->layers[li].name, (int)t->tactic, (int)t->nb);
    }
    return PRT_OK;
}

static prt_status read_plug(rctx *c, prt__plan *p)
{
    prt_status s;
    int32_t i, j, n, *user;
    if ((s = read_count(c, "plugin records", 8, &n)) != PRT_OK) return s;
    p->records = prt__calloc((size_t)(n ? n : 1), sizeof *p->records);
    if (!p->records) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) {
        uint64_t len = prt_read_u64(&c->r);
        const uint8_t *b;
        if (c->r.failed) return ended(c, "a plugin record length");
        if (len > prt_reader_left(&c->r))
            return rfail(c, PRT_STATUS_BAD_FORMAT, "plugin record %d claims %" PRIu64 " bytes, %zu left", i, len,
                         prt_reader_left(&c->r));
        b = prt_read_bytes(&c->r, (size_t)len);
        p->records[i].data = prt__malloc((size_t)(len ? len : 1));
        if (!p->records[i].data) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        memcpy(p->records[i].data, b, (size_t)len);
        p->records[i].len = (size_t)len;
        p->nb_records = i + 1;
    }
    /* Every plugin layer names a record, and no record serves two layers. */
    user = prt__malloc((size_t)(n ? n : 1) * sizeof *user);
    if (!user) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n; i++) user[i] = -1;
    for (i = 0; i < p->nb_layers; i++) {
        if (p->layers[i].kind != PRT__LAYER_PLUGIN) continue;
        if (p->layers[i].plugin >= n) {
            s = rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" names plugin record %d of %d", p->layers[i].name,
                      p->layers[i].plugin, n);
            break;
        }
        j = user[p->layers[i].plugin];
        if (j >= 0) {
            s = rfail(c, PRT_STATUS_BAD_FORMAT, "layers \"%s\" and \"%s\" share plugin record %d",
                      p->layers[j].name, p->layers[i].name, p->layers[i].plugin);
            break;
        }
        user[p->layers[i].plugin] = i;
    }
    prt__free(user);
    return s;
}

static uint64_t tensor_max_bytes(const prt__ptensor *t)
{
    uint64_t b;
    if (prt__tensor_bytes(&t->max, prt_dtype_size(t->dtype), &b) != 0) return UINT64_MAX;
    return b;
}

static prt_status read_memp(rctx *c, prt__plan *p)
{
    int32_t i, n;
    p->arena_size = prt_read_u64(&c->r);
    p->workspace_size = prt_read_u64(&c->r);
    n = (int32_t)prt_read_u32(&c->r);
    if (c->r.failed) return ended(c, "the memory plan");
    if (n != p->nb_tensors)
        return rfail(c, PRT_STATUS_BAD_FORMAT, "memory plan covers %d tensors; the plan has %d", n, p->nb_tensors);
    for (i = 0; i < n; i++) {
        p->tensors[i].offset = prt_read_u64(&c->r);
        p->tensors[i].bytes = prt_read_u64(&c->r);
    }
    if (c->r.failed) return ended(c, "the memory plan");
    if (p->arena_size > PRT_MAX_TENSOR_BYTES || p->workspace_size > PRT_MAX_TENSOR_BYTES)
        return rfail(c, PRT_STATUS_BAD_FORMAT,
                     "arena of %" PRIu64 " bytes or workspace of %" PRIu64 " bytes is larger than the limit of %s",
                     p->arena_size, p->workspace_size, PRT_MAX_TENSOR_BYTES_STR);
    for (i = 0; i < n; i++)
        if (tensor_max_bytes(&p->tensors[i]) == UINT64_MAX)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" at its max shape is larger than the limit of %s",
                         p->tensors[i].name, PRT_MAX_TENSOR_BYTES_STR);
    for (i = 0; i < p->nb_layers; i++)
        if (p->layers[i].workspace > p->workspace_size)
            return rfail(c, PRT_STATUS_BAD_FORMAT, "layer \"%s\" needs %" PRIu64 " workspace bytes, plan has %" PRIu64,
                         p->layers[i].name, p->layers[i].workspace, p->workspace_size);
    for (i = 0; i < n; i++) {
        const prt__ptensor *t = &p->tensors[i];
        if (t->role == PRT__ROLE_ACTIVATION) {
            if (!prt__range_fits(t->offset, t->bytes, p->arena_size) || t->bytes < tensor_max_bytes(t))
                return rfail(c, PRT_STATUS_BAD_FORMAT,
                             "activation \"%s\" at %" PRIu64 " (%" PRIu64 " bytes) does not fit the %" PRIu64
                             "-byte arena or its largest shape",
                             t->name, t->offset, t->bytes, p->arena_size);
        } else if (t->role != PRT__ROLE_CONSTANT && (t->offset || t->bytes)) {
            return rfail(c, PRT_STATUS_BAD_FORMAT, "tensor \"%s\" is bound by the caller but has memory", t->name);
        }
    }
    return PRT_OK;
}

static prt_status read_wght(rctx *c, prt__plan *p)
{
    size_t left;
    int32_t i;
    prt_read_pad(&c->r, PRT__PLAN_WEIGHT_ALIGN);
    if (c->r.failed) return rfail(c, PRT_STATUS_BAD_FORMAT, "padding before the weights is missing or not zero");
    left = prt_reader_left(&c->r);
    p->weights = prt__plan_aligned_alloc(left, &p->weights_block);
    if (!p->weights) return rfail(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory for %zu bytes of weights", left);
    memcpy(p->weights, prt_read_bytes(&c->r, left), left);
    p->weights_len = left;
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        int64_t vol;
        int32_t j;
        if (t->role != PRT__ROLE_CONSTANT) continue;
        vol = prt_dims_volume(&t->dims);
        for (j = 0; j < t->nb_dims; j++)
            if (t->dims.d[j] != t->min.d[j] || t->dims.d[j] != t->max.d[j] ||
                p->nodes[t->expr[j]].kind != PRT__NODE_CONST || p->nodes[t->expr[j]].v != t->dims.d[j])
                return rfail(c, PRT_STATUS_BAD_FORMAT, "constant \"%s\" dim %d is not fixed", t->name, j);
        if (vol < 0 || t->offset % PRT__PLAN_WEIGHT_ALIGN || !prt__range_fits(t->offset, t->bytes, left) ||
            t->bytes != tensor_max_bytes(t))
            return rfail(c, PRT_STATUS_BAD_FORMAT, "constant \"%s\" at %" PRIu64 " (%" PRIu64
                         " bytes) does not fit its dims or the %zu bytes of weights",
                         t->name, t->offset, t->bytes, left);
    }
    return PRT_OK;
}

static uint64_t get_u64(const uint8_t *b)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < 8; i++) v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static uint32_t get_u32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

prt_status prt__plan_read(const void *data, size_t len, prt__plan **out, char *err, size_t cap)
{
    static const struct {
        uint32_t tag;
        const char *name;
        prt_status (*fn)(rctx *, prt__plan *);
        int may_miss; /* a section only some plans have */
    } known[] = {{TAG_META, "META", read_meta, 0}, {TAG_EXPR, "EXPR", read_expr, 0}, {TAG_TENS, "TENS", read_tens, 0},
                 {TAG_LAYR, "LAYR", read_layr, 0}, {TAG_VALU, "VALU", read_valu, 1}, {TAG_FOLD, "FOLD", read_fold, 1},
                 {TAG_TACT, "TACT", read_tact, 1}, {TAG_PLUG, "PLUG", read_plug, 0},
                 {TAG_MEMP, "MEMP", read_memp, 0}, {TAG_WGHT, "WGHT", read_wght, 0}};
    const uint8_t *b = data;
    rctx c;
    prt__plan *p;
    prt_status s = PRT_OK;
    uint32_t rv, wv, hs, nsec, k;
    uint64_t total, sum;
    size_t next = 0, i;

    c.err = err;
    c.cap = cap;
    c.section = NULL;
    if (!data || len < PRT__PLAN_HEADER_SIZE) {
        if (data && len >= 8 && memcmp(b, PRT__PLAN_MAGIC, 8) != 0)
            return rfail(&c, PRT_STATUS_BAD_FORMAT, "not a plugrt plan (no \"PLUGRTPL\" magic)");
        snprintf(err, cap, "plan truncated: %zu bytes, shorter than the %u-byte header", data ? len : 0,
                 PRT__PLAN_HEADER_SIZE);
        return PRT_STATUS_TRUNCATED;
    }
    if (memcmp(b, PRT__PLAN_MAGIC, 8) != 0)
        return rfail(&c, PRT_STATUS_BAD_FORMAT, "not a plugrt plan (no \"PLUGRTPL\" magic)");
    rv = get_u32(b + 8);
    wv = get_u32(b + 12);
    total = get_u64(b + 16);
    sum = get_u64(b + 24);
    hs = get_u32(b + 32);
    nsec = get_u32(b + 36);
    if (rv > PRT__PLAN_WRITE_VERSION) {
        snprintf(err, cap, "plan needs reader version %u, this is %u (written by format version %u; rebuild the plan "
                 "or use a newer plugrt)", rv, PRT__PLAN_WRITE_VERSION, wv);
        return PRT_STATUS_VERSION_MISMATCH;
    }
    if (rv == 0 || wv < rv)
        return rfail(&c, PRT_STATUS_BAD_FORMAT, "read version %u / write version %u are inconsistent", rv, wv);
    if (total != len) {
        if (total > len) {
            snprintf(err, cap, "plan truncated: the header says %" PRIu64 " bytes, got %zu", total, len);
            return PRT_STATUS_TRUNCATED;
        }
        return rfail(&c, PRT_STATUS_BAD_FORMAT, "the header says %" PRIu64 " bytes, got %zu (trailing data)", total,
                     len);
    }
    if (prt__plan_checksum(b + PRT__PLAN_HEADER_SIZE, len - PRT__PLAN_HEADER_SIZE) != sum)
        return rfail(&c, PRT_STATUS_BAD_FORMAT, "checksum mismatch (the file is damaged)");
    if (hs != PRT__PLAN_HEADER_SIZE)
        return rfail(&c, PRT_STATUS_BAD_FORMAT, "header size is %u; expected %u", hs, PRT__PLAN_HEADER_SIZE);
    for (i = 40; i < PRT__PLAN_HEADER_SIZE; i++)
        if (b[i] != 0) return rfail(&c, PRT_STATUS_BAD_FORMAT, "reserved header byte %zu is not zero", i);

    p = prt__calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, cap, "out of memory reading a plan");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    p->read_version = rv;
    c.r = prt_reader_init(data, len);
    c.r.pos = PRT__PLAN_HEADER_SIZE;
    for (k = 0; k < nsec; k++) {
        uint32_t tag, flags;
        uint64_t plen;
        size_t start, end;
        prt_reader whole;
        c.section = NULL;
        c.r.len = len;
        tag = prt_read_u32(&c.r);
        flags = prt_read_u32(&c.r);
        plen = prt_read_u64(&c.r);
        if (c.r.failed) {
            s = rfail(&c, PRT_STATUS_BAD_FORMAT, "section %u header ends early", k);
            goto fail;
        }
        start = c.r.pos;
        if (plen > len - start) {
            s = rfail(&c, PRT_STATUS_BAD_FORMAT, "section %u claims %" PRIu64 " bytes, %zu left", k, plen, len - start);
            goto fail;
        }
        end = start + (size_t)plen;
        if (flags & ~SECTION_OPTIONAL) {
            s = rfail(&c, PRT_STATUS_BAD_FORMAT, "section %u has unknown flags 0x%x", k, flags);
            goto fail;
        }
        for (i = 0; i < sizeof known / sizeof known[0]; i++)
            if (known[i].tag == tag) break;
        if (i == sizeof known / sizeof known[0]) {
            if (flags & SECTION_OPTIONAL) {
                c.r.pos = end;
                continue;
            }
            s = rfail(&c, PRT_STATUS_UNSUPPORTED, "section %u has unknown tag 0x%08x and is not optional (a newer writer?)",
                      k, tag);
            goto fail;
        }
        while (next < i && known[next].may_miss) next++;
        if (i != next) {
            s = rfail(&c, PRT_STATUS_BAD_FORMAT, "section %s is out of order or repeated (expected %s)", known[i].name,
                      next < sizeof known / sizeof known[0] ? known[next].name : "no more");
            goto fail;
        }
        c.section = known[i].name;
        whole = c.r;
        c.r.len = end;
        s = known[i].fn(&c, p);
        if (s != PRT_OK) goto fail;
        if (c.r.failed) {
            s = ended(&c, "the section");
            goto fail;
        }
        if (c.r.pos != end) {
            s = rfail(&c, PRT_STATUS_BAD_FORMAT, "%zu unread bytes at the end of the section", end - c.r.pos);
            goto fail;
        }
        c.r = whole;
        c.r.pos = end;
        next++;
    }
    c.section = NULL;
    c.r.len = len;
    while (next < sizeof known / sizeof known[0] && known[next].may_miss) next++;
    if (next != sizeof known / sizeof known[0]) {
        s = rfail(&c, PRT_STATUS_BAD_FORMAT, "section %s is missing", known[next].name);
        goto fail;
    }
    if (c.r.pos != len) {
        s = rfail(&c, PRT_STATUS_BAD_FORMAT, "%zu bytes after the last section", len - c.r.pos);
        goto fail;
    }
    *out = p;
    return PRT_OK;
fail:
    prt__plan_free(p);
    return s;
}
