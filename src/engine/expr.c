/*
 * engine/expr.c - the arena of symbolic shape expressions behind
 * prt_expr_builder.
 *
 * Nodes live in blocks that never move, so a node pointer stays valid as long
 * as the arena. Blocks grow geometrically; a node's operands always precede
 * it. A node whose value is known without concrete input shapes (a constant,
 * a leaf with a known extent, or an operation on such nodes that can be
 * computed without overflow or division by zero) carries that value, which
 * is what get_constant reports.
 *
 * Evaluation walks the operands recursively, memoizing each node's value for
 * the current call with a stamp, so a shared sub-expression is computed once
 * per call. Depth is capped so that a pathological chain fails cleanly
 * instead of exhausting the stack.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/expr.h"

enum { NODE_CONST = 0, NODE_LEAF = 1, NODE_OP = 2, NODE_DDEP = 3 };

#define EXPR_MAX_DEPTH 10000
#define EXPR_STR_MAX_DEPTH 64

struct prt_expr {
    uint8_t kind;
    uint8_t op;        /* prt_expr_op for NODE_OP */
    uint8_t has_const; /* cval is valid */
    uint8_t reserved_;
    int32_t input;     /* NODE_LEAF */
    int32_t dim;
    int64_t cval;
    const prt_expr *a; /* operands; NODE_DDEP: a = upper bound */
    const prt_expr *b;
    /* per-evaluation memo */
    uint64_t ev_stamp;
    int64_t ev_val;
    int8_t ev_ok;
    int8_t ev_dd;
};

typedef struct expr_block {
    struct expr_block *next;
    size_t cap;
    size_t n;
    prt_expr nodes[];
} expr_block;

struct prt__exprs {
    prt_expr_builder eb;
    expr_block *first;
    expr_block *last;
    size_t nb_nodes;
    uint64_t stamp;
    int failed;
};

static prt_expr *node_new(prt__exprs *x, uint8_t kind)
{
    prt_expr *e;
    if (!x->last || x->last->n == x->last->cap) {
        size_t cap = x->last ? x->last->cap * 2 : 32;
        expr_block *b;
        if (cap > 65536) cap = 65536;
        b = prt__malloc(sizeof(*b) + cap * sizeof(prt_expr));
        if (!b) {
            x->failed = 1;
            return NULL;
        }
        b->next = NULL;
        b->cap = cap;
        b->n = 0;
        if (x->last) x->last->next = b;
        else x->first = b;
        x->last = b;
    }
    e = &x->last->nodes[x->last->n++];
    memset(e, 0, sizeof(*e));
    e->kind = kind;
    x->nb_nodes++;
    return e;
}

int prt__exprs_owns(const prt__exprs *x, const prt_expr *e)
{
    const expr_block *b;
    uintptr_t p = (uintptr_t)e;
    if (!x || !e) return 0;
    for (b = x->first; b; b = b->next) {
        uintptr_t lo = (uintptr_t)&b->nodes[0], hi = (uintptr_t)&b->nodes[b->n];
        if (p >= lo && p < hi) return (p - lo) % sizeof(prt_expr) == 0;
    }
    return 0;
}

int prt__expr_apply(int op, int64_t a, int64_t b, int64_t *out)
{
    int64_t q;
    switch (op) {
    case PRT_EXPR_SUM: return __builtin_add_overflow(a, b, out) ? -1 : 0;
    case PRT_EXPR_SUB: return __builtin_sub_overflow(a, b, out) ? -1 : 0;
    case PRT_EXPR_PROD: return __builtin_mul_overflow(a, b, out) ? -1 : 0;
    case PRT_EXPR_MAX: *out = a > b ? a : b; return 0;
    case PRT_EXPR_MIN: *out = a < b ? a : b; return 0;
    case PRT_EXPR_EQUAL: *out = a == b; return 0;
    case PRT_EXPR_LESS: *out = a < b; return 0;
    case PRT_EXPR_FLOOR_DIV:
    case PRT_EXPR_CEIL_DIV:
        if (b == 0 || (a == INT64_MIN && b == -1)) return -1;
        q = a / b;
        if (a % b != 0) {
            int neg = (a < 0) != (b < 0);
            if (op == PRT_EXPR_FLOOR_DIV && neg) q--;
            if (op == PRT_EXPR_CEIL_DIV && !neg) q++;
        }
        *out = q;
        return 0;
    default: return -1;
    }
}

/* ---- the builder ------------------------------------------------------- */

static prt__exprs *arena_of(prt_expr_builder *eb)
{
    return eb ? (prt__exprs *)eb->host_ : NULL;
}

static const prt_expr *eb_constant(prt_expr_builder *eb, int64_t value)
{
    prt__exprs *x = arena_of(eb);
    return x ? prt__exprs_const(x, value) : NULL;
}

static const prt_expr *eb_operation(prt_expr_builder *eb, prt_expr_op op, const prt_expr *a,
                                    const prt_expr *b)
{
    prt__exprs *x = arena_of(eb);
    prt_expr *e;
    if (!x || (unsigned)op > (unsigned)PRT_EXPR_CEIL_DIV) return NULL;
    if (!prt__exprs_owns(x, a) || !prt__exprs_owns(x, b)) return NULL;
    e = node_new(x, NODE_OP);
    if (!e) return NULL;
    e->op = (uint8_t)op;
    e->a = a;
    e->b = b;
    if (a->has_const && b->has_const && prt__expr_apply(op, a->cval, b->cval, &e->cval) == 0)
        e->has_const = 1;
    return e;
}

static int eb_get_constant(prt_expr_builder *eb, const prt_expr *e, int64_t *value)
{
    prt__exprs *x = arena_of(eb);
    if (!x || !value || !prt__exprs_owns(x, e) || !e->has_const) return 0;
    *value = e->cval;
    return 1;
}

static const prt_expr *eb_data_dependent(prt_expr_builder *eb, const prt_expr *upper)
{
    prt__exprs *x = arena_of(eb);
    prt_expr *e;
    if (!x || !prt__exprs_owns(x, upper)) return NULL;
    e = node_new(x, NODE_DDEP);
    if (!e) return NULL;
    e->a = upper;
    return e;
}

prt_status prt__exprs_create(prt__exprs **out)
{
    prt__exprs *x = prt__calloc(1, sizeof(*x));
    if (!x) return PRT_STATUS_OUT_OF_MEMORY;
    x->eb.struct_size = (uint32_t)sizeof(prt_expr_builder);
    x->eb.abi_version = PRT_ABI_VERSION;
    x->eb.constant = eb_constant;
    x->eb.operation = eb_operation;
    x->eb.get_constant = eb_get_constant;
    x->eb.data_dependent = eb_data_dependent;
    x->eb.host_ = x;
    *out = x;
    return PRT_OK;
}

void prt__exprs_destroy(prt__exprs *x)
{
    expr_block *b, *n;
    if (!x) return;
    for (b = x->first; b; b = n) {
        n = b->next;
        prt__free(b);
    }
    prt__free(x);
}

prt_expr_builder *prt__exprs_builder(prt__exprs *x)
{
    return x ? &x->eb : NULL;
}

const prt_expr *prt__exprs_leaf(prt__exprs *x, int32_t input, int32_t dim, int64_t known)
{
    prt_expr *e;
    if (!x || input < 0 || dim < 0 || dim >= PRT_MAX_DIMS) return NULL;
    e = node_new(x, NODE_LEAF);
    if (!e) return NULL;
    e->input = input;
    e->dim = dim;
    if (known >= 0) {
        e->has_const = 1;
        e->cval = known;
    }
    return e;
}

const prt_expr *prt__exprs_const(prt__exprs *x, int64_t v)
{
    prt_expr *e;
    if (!x) return NULL;
    e = node_new(x, NODE_CONST);
    if (!e) return NULL;
    e->has_const = 1;
    e->cval = v;
    return e;
}

int prt__exprs_failed(const prt__exprs *x)
{
    return x ? x->failed : 1;
}

/* ---- evaluation -------------------------------------------------------- */

typedef struct eval_ctx {
    uint64_t stamp;
    const prt_dims *in;
    int32_t nb_in;
} eval_ctx;

static int eval_node(const eval_ctx *c, prt_expr *e, int depth, int64_t *out, int *dd)
{
    int64_t va = 0, vb = 0;
    int da = 0, db = 0, ok = 0;
    if (e->ev_stamp == c->stamp) {
        *out = e->ev_val;
        *dd = e->ev_dd;
        return e->ev_ok ? 0 : -1;
    }
    if (depth > EXPR_MAX_DEPTH) return -1;
    *dd = 0;
    switch (e->kind) {
    case NODE_CONST:
        *out = e->cval;
        ok = 1;
        break;
    case NODE_LEAF:
        if (e->input < c->nb_in && c->in && e->dim < c->in[e->input].nb &&
            c->in[e->input].nb <= PRT_MAX_DIMS) {
            *out = c->in[e->input].d[e->dim];
            ok = *out >= 0;
        } else if (e->has_const) {
            *out = e->cval;
            ok = 1;
        }
        break;
    case NODE_OP:
        if (e->has_const) {
            *out = e->cval;
            ok = 1;
            break;
        }
        if (eval_node(c, (prt_expr *)e->a, depth + 1, &va, &da) != 0) break;
        if (eval_node(c, (prt_expr *)e->b, depth + 1, &vb, &db) != 0) break;
        ok = prt__expr_apply(e->op, va, vb, out) == 0;
        *dd = da || db;
        break;
    case NODE_DDEP:
        ok = eval_node(c, (prt_expr *)e->a, depth + 1, out, &da) == 0;
        *dd = 1;
        break;
    default: break;
    }
    e->ev_stamp = c->stamp;
    e->ev_ok = (int8_t)ok;
    e->ev_val = ok ? *out : 0;
    e->ev_dd = (int8_t)*dd;
    return ok ? 0 : -1;
}

int prt__expr_eval(const prt__exprs *x, const prt_expr *e, const prt_dims *in_dims, int32_t nb_in,
                   int64_t *out, int *data_dep)
{
    prt__exprs *mx = (prt__exprs *)x; /* the memo stamps are scratch state */
    eval_ctx c;
    int64_t v = 0;
    int dd = 0;
    if (!x || !out || !prt__exprs_owns(x, e)) return -1;
    c.stamp = ++mx->stamp;
    c.in = in_dims;
    c.nb_in = in_dims ? nb_in : 0;
    if (eval_node(&c, (prt_expr *)e, 0, &v, &dd) != 0) return -1;
    *out = v;
    if (data_dep) *data_dep = dd;
    return 0;
}

/* ---- to string --------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t cap;
    size_t n;
} sbuf;

static void sb_put(sbuf *s, const char *fmt, ...) PRT_PRINTF(2, 3);
static void sb_put(sbuf *s, const char *fmt, ...)
{
    va_list ap;
    int k;
    if (s->n + 1 >= s->cap) return;
    va_start(ap, fmt);
    k = vsnprintf(s->p + s->n, s->cap - s->n, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    s->n += (size_t)k;
    if (s->n >= s->cap) s->n = s->cap - 1;
}

static int is_additive(const prt_expr *e)
{
    return e->kind == NODE_OP && (e->op == PRT_EXPR_SUM || e->op == PRT_EXPR_SUB);
}

static void str_node(sbuf *s, const prt_expr *e, int depth)
{
    static const char *fn_names[] = {"sum", "prod", "max", "min", "sub", "equal", "less",
                                     "floor_div", "ceil_div"};
    if (s->n + 1 >= s->cap) return;
    if (depth > EXPR_STR_MAX_DEPTH) {
        sb_put(s, "...");
        return;
    }
    switch (e->kind) {
    case NODE_CONST: sb_put(s, "%" PRId64, e->cval); break;
    case NODE_LEAF: sb_put(s, "in%d.d%d", (int)e->input, (int)e->dim); break;
    case NODE_DDEP:
        sb_put(s, "data_dependent(");
        str_node(s, e->a, depth + 1);
        sb_put(s, ")");
        break;
    case NODE_OP:
        if (e->op == PRT_EXPR_SUM || e->op == PRT_EXPR_SUB || e->op == PRT_EXPR_PROD) {
            int prod = e->op == PRT_EXPR_PROD;
            int pa = prod && is_additive(e->a);
            int pb = (prod || e->op == PRT_EXPR_SUB) && is_additive(e->b);
            if (pa) sb_put(s, "(");
            str_node(s, e->a, depth + 1);
            sb_put(s, "%s", pa ? ")" : "");
            sb_put(s, " %s ", e->op == PRT_EXPR_SUM ? "+" : e->op == PRT_EXPR_SUB ? "-" : "*");
            if (pb) sb_put(s, "(");
            str_node(s, e->b, depth + 1);
            if (pb) sb_put(s, ")");
        } else {
            sb_put(s, "%s(", e->op < sizeof fn_names / sizeof fn_names[0] ? fn_names[e->op] : "?");
            str_node(s, e->a, depth + 1);
            sb_put(s, ", ");
            str_node(s, e->b, depth + 1);
            sb_put(s, ")");
        }
        break;
    default: sb_put(s, "?"); break;
    }
}

const char *prt__expr_str(const prt__exprs *x, const prt_expr *e, char *buf, size_t cap)
{
    sbuf s;
    if (!buf || cap == 0) return "";
    buf[0] = 0;
    if (!prt__exprs_owns(x, e)) {
        snprintf(buf, cap, "%s", e ? "(foreign expression)" : "(null)");
        return buf;
    }
    s.p = buf;
    s.cap = cap;
    s.n = 0;
    str_node(&s, e, 0);
    return buf;
}
