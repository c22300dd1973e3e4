/*
 * onnx/elementwise/binary.c - elementwise ops over broadcast inputs as rows
 * of one table: arithmetic, Pow, Mod, comparisons, logical ops, BitShift,
 * the variadic Sum / Mean / Max / Min, PRelu; and Where (three inputs) on the
 * same broadcasting kernel. See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/ew_prog.h"
#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct battr {
    int32_t fmod;       /* Mod */
    int32_t shift_left; /* BitShift */
} battr;

typedef void (*bfn_d)(double *y, const double *a, const double *b, int64_t n, const battr *t);
typedef void (*bfn_i)(int64_t *y, const int64_t *a, const int64_t *b, int64_t n, const battr *t);

typedef enum bout { BOUT_SAME = 0, BOUT_BOOL = 1 } bout;
typedef enum btypes {
    BT_SAME = 0,  /* every input has one dtype */
    BT_POW = 1,   /* exponent may differ from the base */
    BT_PRELU = 2, /* slope broadcasts to X (unidirectional) */
} btypes;

typedef struct brow {
    bfn_d fd;       /* float dtypes (integers too when fi is NULL) */
    bfn_i fi;       /* integer and bool dtypes */
    bout out;
    btypes types;
    int variadic;   /* Sum Mean Max Min: fold inputs left to right */
    int mean;       /* Mean: divide by the input count at the end */
    int ew;         /* 1 + the prt__ew_op that runs it in f32; 0: none */
} brow;

#define BD(fname, expr)                                                                            \
    static void fname(double *y, const double *a, const double *b, int64_t n, const battr *t)      \
    {                                                                                              \
        int64_t k;                                                                                 \
        (void)t;                                                                                   \
        for (k = 0; k < n; k++) {                                                                  \
            const double u = a[k], v = b[k];                                                       \
            y[k] = (expr);                                                                         \
        }                                                                                          \
    }
#define BI(fname, expr)                                                                            \
    static void fname(int64_t *y, const int64_t *a, const int64_t *b, int64_t n, const battr *t)   \
    {                                                                                              \
        int64_t k;                                                                                 \
        (void)t;                                                                                   \
        for (k = 0; k < n; k++) {                                                                  \
            const int64_t u = a[k], v = b[k];                                                      \
            y[k] = (expr);                                                                         \
        }                                                                                          \
    }

/* Integer arithmetic wraps (through uint64); division by zero gives 0. */
static int64_t idiv(int64_t u, int64_t v)
{
    if (v == 0) return 0;
    if (v == -1) return (int64_t)(0 - (uint64_t)u);
    return u / v;
}

static int64_t imod(int64_t u, int64_t v, int fmod_sign)
{
    int64_t r;
    if (v == 0 || v == -1) return 0;
    r = u % v;
    if (!fmod_sign && r != 0 && ((r < 0) != (v < 0))) r += v; /* sign of the divisor */
    return r;
}

static double dmod(double u, double v, int fmod_sign)
{
    double r = fmod(u, v);
    if (!fmod_sign && r != 0 && ((r < 0) != (v < 0))) r += v;
    return r;
}

static int64_t ishift(int64_t u, int64_t v, int left)
{
    uint64_t x = (uint64_t)u;
    if (v < 0 || v >= 64) return 0;
    return (int64_t)(left ? x << v : x >> v);
}

static double dmax(double u, double v) { return u != u || u > v ? u : v; }
static double dmin(double u, double v) { return u != u || u < v ? u : v; }

BD(d_add, u + v)
BD(d_sub, u - v)
BD(d_mul, u * v)
BD(d_div, u / v)
BD(d_pow, pow(u, v))
BD(d_mod, dmod(u, v, t->fmod))
BD(d_max, dmax(u, v))
BD(d_min, dmin(u, v))
BD(d_eq, u == v)
BD(d_gt, u > v)
BD(d_lt, u < v)
BD(d_ge, u >= v)
BD(d_le, u <= v)
BD(d_prelu, u < 0 ? u * v : u)

BI(i_add, (int64_t)((uint64_t)u + (uint64_t)v))
BI(i_sub, (int64_t)((uint64_t)u - (uint64_t)v))
BI(i_mul, (int64_t)((uint64_t)u * (uint64_t)v))
BI(i_div, idiv(u, v))
BI(i_mod, imod(u, v, t->fmod))
BI(i_max, u > v ? u : v)
BI(i_min, u < v ? u : v)
BI(i_eq, u == v)
BI(i_gt, u > v)
BI(i_lt, u < v)
BI(i_ge, u >= v)
BI(i_le, u <= v)
BI(i_and, u && v)
BI(i_or, u || v)
BI(i_xor, (!u) != (!v))
BI(i_shift, ishift(u, v, t->shift_left))
BI(i_band, u & v)
BI(i_bor, u | v)
BI(i_bxor, u ^ v)
BI(i_prelu, u < 0 ? (int64_t)((uint64_t)u * (uint64_t)v) : u)

#define EWOP(op) .ew = 1 + (op)
static const brow r_add = {.fd = d_add, .fi = i_add, EWOP(PRT__EW_ADD)};
static const brow r_sub = {.fd = d_sub, .fi = i_sub, EWOP(PRT__EW_SUB)};
static const brow r_mul = {.fd = d_mul, .fi = i_mul, EWOP(PRT__EW_MUL)};
static const brow r_div = {.fd = d_div, .fi = i_div, EWOP(PRT__EW_DIV)};
static const brow r_pow = {.fd = d_pow, .types = BT_POW, EWOP(PRT__EW_POW)};
static const brow r_mod = {.fd = d_mod, .fi = i_mod};
static const brow r_eq = {.fd = d_eq, .fi = i_eq, .out = BOUT_BOOL};
static const brow r_gt = {.fd = d_gt, .fi = i_gt, .out = BOUT_BOOL};
static const brow r_lt = {.fd = d_lt, .fi = i_lt, .out = BOUT_BOOL};
static const brow r_ge = {.fd = d_ge, .fi = i_ge, .out = BOUT_BOOL};
static const brow r_le = {.fd = d_le, .fi = i_le, .out = BOUT_BOOL};
static const brow r_and = {.fi = i_and, .out = BOUT_BOOL};
static const brow r_or = {.fi = i_or, .out = BOUT_BOOL};
static const brow r_xor = {.fi = i_xor, .out = BOUT_BOOL};
static const brow r_shift = {.fi = i_shift};
static const brow r_band = {.fi = i_band}, r_bor = {.fi = i_bor}, r_bxor = {.fi = i_bxor};
static const brow r_prelu = {.fd = d_prelu, .fi = i_prelu, .types = BT_PRELU, EWOP(PRT__EW_PRELU)};
static const brow r_sum = {.fd = d_add, .fi = i_add, .variadic = 1, EWOP(PRT__EW_ADD)};
static const brow r_mean = {.fd = d_add, .variadic = 1, .mean = 1, EWOP(PRT__EW_ADD)};
static const brow r_max = {.fd = d_max, .fi = i_max, .variadic = 1, EWOP(PRT__EW_MAX)};
static const brow r_min = {.fd = d_min, .fi = i_min, .variadic = 1, EWOP(PRT__EW_MIN)};

/* ---- callbacks -------------------------------------------------------------------- */

static prt_status b_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    battr *t = PRT__ONNX_STATE(n, battr);
    t->fmod = prt_fields_i64(fc, "fmod", 0, 0) != 0;
    if (prt_fields_find(fc, "direction")) {
        t->shift_left = prt__onnx_str_is(fc, "direction", "LEFT", 0);
        if (!t->shift_left && !prt__onnx_str_is(fc, "direction", "RIGHT", 0)) {
            prt_msg_set(err, "%s v%s: field \"direction\" must be \"LEFT\" or \"RIGHT\"", n->def->name,
                        n->def->version);
            return PRT_STATUS_INVALID_FIELD;
        }
    } else if (strcmp(n->def->name, "BitShift") == 0) {
        prt_msg_set(err, "%s v%s: field \"direction\" (\"LEFT\" or \"RIGHT\") is required", n->def->name,
                    n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status b_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const brow *r = n->def->row;
    prt_status st;
    if (r->types == BT_POW) {
        out[0] = in[0];
        return PRT_OK;
    }
    if ((st = prt__onnx_types_same(n, in, nb_in, out, err)) != PRT_OK) return st;
    if (r->out == BOUT_BOOL) out[0] = PRT_DTYPE_BOOL;
    if (r->fd == d_mod && prt__onnx_is_float(in[0]) && PRT__ONNX_STATE(n, battr)->fmod == 0) {
        prt_msg_set(err, "float inputs (%s) need fmod=1", prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status b_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const brow *r = n->def->row;
    prt_status st = prt__onnx_shapes_bcast(n, in, nb_in, out, eb, err);
    if (st == PRT_OK && r->types == BT_PRELU) {
        /* The slope broadcasts to X, never the other way round. */
        int32_t i;
        if (in[1].nb > in[0].nb) {
            prt_msg_set(err, "slope has rank %d, more than X's %d", (int)in[1].nb, (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < in[0].nb; i++) {
            int64_t x = prt__onnx_known(eb, in[0].d[i]), o = prt__onnx_known(eb, out->d[i]);
            if (x >= 0 && o >= 0 && x != o) {
                prt_msg_set(err, "slope does not broadcast to X (axis %d: %lld vs %lld)", (int)i, (long long)x,
                            (long long)o);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        }
        out[0] = in[0];
    }
    return st;
}

typedef struct bjob {
    const brow *r;
    const battr *t;
    const void *a, *b;
    prt_dtype ta, tb;
    void *y;
    prt_dtype ty;
    int use_int;
} bjob;

static void b_kernel(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const bjob *j = ctx;
    if (j->use_int) {
        int64_t a[PRT__ONNX_RUN], b[PRT__ONNX_RUN], y[PRT__ONNX_RUN];
        prt__onnx_gather_i64(a, j->a, j->ta, off[0], st[0], n);
        prt__onnx_gather_i64(b, j->b, j->tb, off[1], st[1], n);
        j->r->fi(y, a, b, n, j->t);
        prt__onnx_scatter_i64(j->y, j->ty, o, y, n);
    } else {
        double a[PRT__ONNX_RUN], b[PRT__ONNX_RUN], y[PRT__ONNX_RUN];
        prt__onnx_gather_f64(a, j->a, j->ta, off[0], st[0], n);
        prt__onnx_gather_f64(b, j->b, j->tb, off[1], st[1], n);
        j->r->fd(y, a, b, n, j->t);
        prt__onnx_scatter_f64(j->y, j->ty, o, y, n);
    }
}

typedef struct scale_job {
    void *y;
    prt_dtype t;
    double s;
} scale_job;

static void b_scale(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const scale_job *j = ctx;
    double v[PRT__ONNX_RUN];
    int64_t k;
    (void)off; (void)st;
    prt__onnx_gather_f64(v, j->y, j->t, o, 1, n);
    for (k = 0; k < n; k++) v[k] *= j->s;
    prt__onnx_scatter_f64(j->y, j->t, o, v, n);
}

/* Every input and the output f32, at most PRT__EW_MAX_IN inputs? */
static int b_all_f32(const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out)
{
    int32_t k;
    if (nb_in > PRT__EW_MAX_IN || out[0].dtype != PRT_DTYPE_F32) return 0;
    for (k = 0; k < nb_in; k++)
        if (in[k].dtype != PRT_DTYPE_F32) return 0;
    return 1;
}

/* f32: one program over every input, folded left to right (one input: a
 * copy, the program without instructions); Mean divides by the count last. */
static prt_status b_run_f32(const brow *r, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                            const void *const *x, void *const *y, prt_exec *ex, prt_msg *err)
{
    prt__ew_instr ins[PRT__EW_MAX_IN];
    const float count = (float)nb_in;
    prt__ew_prog prog = {ins, 0, &count, 1, nb_in};
    prt_dims dims[PRT__EW_MAX_IN];
    const float *xs[PRT__EW_MAX_IN];
    prt__ew_bcast bc;
    prt_status st;
    int32_t k;
    for (k = 0; k < nb_in; k++) {
        dims[k] = in[k].dims;
        xs[k] = x[k];
    }
    for (k = 1; k < nb_in; k++) {
        prt__ew_instr t = {r->ew - 1, k == 1 ? 0 : nb_in + k - 2, k, 0};
        ins[prog.nb_ins++] = t;
    }
    if (r->mean && nb_in > 1) {
        prt__ew_instr t = {PRT__EW_DIV, nb_in + prog.nb_ins - 1, -1, 0};
        ins[prog.nb_ins++] = t;
    }
    if ((st = prt__ew_plan(&bc, nb_in, dims, &out[0].dims, err)) != PRT_OK) return st;
    prt__ew_run(&prog, &bc, xs, y[0], ex);
    return PRT_OK;
}

static prt_status b_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const brow *r = n->def->row;
    prt__bcast plan;
    const prt_dims *d[2];
    bjob j;
    prt_status st;
    int32_t k;
    (void)ws;
    if (r->ew && b_all_f32(in, nb_in, out) && prt__ew_fast_paths())
        return b_run_f32(r, in, nb_in, out, x, y, ex, err);
    memset(&j, 0, sizeof j);
    j.r = r;
    j.t = PRT__ONNX_STATE(n, battr);
    j.y = y[0];
    j.ty = out[0].dtype;
    j.use_int = r->fi && (!prt__onnx_is_float(in[0].dtype) || !r->fd);
    if (r->variadic && nb_in == 1) { /* a copy (broadcast to itself) */
        d[0] = &in[0].dims;
        d[1] = &in[0].dims;
        j.a = j.b = x[0];
        j.ta = j.tb = in[0].dtype;
        j.r = &r_min; /* min(x, x) == x, NaN kept */
        if ((st = prt__bcast_plan(&plan, &out[0].dims, d, 2, err)) != PRT_OK) return st;
        j.use_int = !prt__onnx_is_float(in[0].dtype);
        prt__bcast_exec(&plan, ex, b_kernel, &j);
        return PRT_OK;
    }
    for (k = 1; k < nb_in; k++) {
        /* First step: in0 op in1; then out op in_k (the output has the full shape). */
        j.a = k == 1 ? x[0] : y[0];
        j.ta = k == 1 ? in[0].dtype : out[0].dtype;
        j.b = x[k];
        j.tb = in[k].dtype;
        d[0] = k == 1 ? &in[0].dims : &out[0].dims;
        d[1] = &in[k].dims;
        if ((st = prt__bcast_plan(&plan, &out[0].dims, d, 2, err)) != PRT_OK) return st;
        prt__bcast_exec(&plan, ex, b_kernel, &j);
    }
    if (r->mean && nb_in > 1) {
        scale_job sj = {y[0], out[0].dtype, 1.0 / nb_in};
        if ((st = prt__bcast_plan(&plan, &out[0].dims, NULL, 0, err)) != PRT_OK) return st;
        prt__bcast_exec(&plan, ex, b_scale, &sj);
    }
    return PRT_OK;
}

/* ---- Where ---------------------------------------------------------------------- */

static prt_status w_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    (void)n; (void)nb_in;
    if (in[0] != PRT_DTYPE_BOOL) {
        prt_msg_set(err, "condition (input 0) must be bool, got %s", prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    if (in[1] != in[2]) {
        prt_msg_set(err, "X and Y must have one dtype, got %s and %s", prt_dtype_name(in[1]),
                    prt_dtype_name(in[2]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = in[1];
    return PRT_OK;
}

typedef struct wjob {
    const uint8_t *c;
    const void *a, *b;
    void *y;
    prt_dtype t;
} wjob;

static void w_kernel(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const wjob *j = ctx;
    int64_t k;
    if (prt__onnx_is_float(j->t)) {
        double a[PRT__ONNX_RUN], b[PRT__ONNX_RUN];
        prt__onnx_gather_f64(a, j->a, j->t, off[1], st[1], n);
        prt__onnx_gather_f64(b, j->b, j->t, off[2], st[2], n);
        for (k = 0; k < n; k++)
            if (!j->c[off[0] + k * st[0]]) a[k] = b[k];
        prt__onnx_scatter_f64(j->y, j->t, o, a, n);
    } else {
        int64_t a[PRT__ONNX_RUN], b[PRT__ONNX_RUN];
        prt__onnx_gather_i64(a, j->a, j->t, off[1], st[1], n);
        prt__onnx_gather_i64(b, j->b, j->t, off[2], st[2], n);
        for (k = 0; k < n; k++)
            if (!j->c[off[0] + k * st[0]]) a[k] = b[k];
        prt__onnx_scatter_i64(j->y, j->t, o, a, n);
    }
}

static prt_status w_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const prt_dims *d[3] = {&in[0].dims, &in[1].dims, &in[2].dims};
    prt__bcast plan;
    wjob j = {x[0], x[1], x[2], y[0], out[0].dtype};
    prt_status st;
    (void)n; (void)nb_in; (void)ws;
    if ((st = prt__bcast_plan(&plan, &out[0].dims, d, 3, err)) != PRT_OK) return st;
    prt__bcast_exec(&plan, ex, w_kernel, &j);
    return PRT_OK;
}

/* ---- the table ------------------------------------------------------------------ */

static const prt_field_schema s_mod[] = {PRT__ONNX_I64("fmod", 0, "1: C fmod (sign of the dividend)")};
static const prt_field_schema s_shift[] = {
    {.name = "direction", .type = PRT_FIELD_CHAR, .required = 1, .min_count = 4, .max_count = 5,
     .doc = "\"LEFT\" or \"RIGHT\""},
};

#define B_COMMON(nm, ver, rw, mask)                                                                \
    .name = nm, .version = ver, .nb_out = 1, .in_mask = (mask), .state_size = sizeof(battr),        \
    .row = &(rw), .init = b_init, .types = b_types, .shapes = b_shapes, .run = b_run
#define B(nm, ver, rw, mask) {B_COMMON(nm, ver, rw, mask), .min_in = 2, .max_in = 2, .doc = "ONNX " nm}
#define BS(nm, ver, rw, mask, sch)                                                                 \
    {B_COMMON(nm, ver, rw, mask), .min_in = 2, .max_in = 2, .schema = sch,                         \
     .nb_fields = PRT__ONNX_NFIELDS(sch), .doc = "ONNX " nm}
#define BV(nm, ver, rw, mask) {B_COMMON(nm, ver, rw, mask), .min_in = 1, .max_in = -1, .doc = "ONNX " nm}

#define FL PRT__ONNX_FLOATS
#define NU PRT__ONNX_NUMERIC
#define AL PRT__ONNX_ALL

static const prt__onnx_def binary_defs[] = {
    B("Add", "7", r_add, NU), B("Sub", "7", r_sub, NU), B("Mul", "7", r_mul, NU), B("Div", "7", r_div, NU),
    B("Pow", "7", r_pow, NU),
    BS("Mod", "10", r_mod, NU, s_mod),
    B("Equal", "7", r_eq, AL), B("Greater", "7", r_gt, NU), B("Less", "7", r_lt, NU),
    B("GreaterOrEqual", "12", r_ge, NU), B("LessOrEqual", "12", r_le, NU),
    B("And", "7", r_and, PRT__ONNX_BOOL), B("Or", "7", r_or, PRT__ONNX_BOOL),
    B("Xor", "7", r_xor, PRT__ONNX_BOOL),
    BS("BitShift", "11", r_shift, PRT__ONNX_T(PRT_DTYPE_U8), s_shift),
    B("PRelu", "7", r_prelu, PRT__ONNX_SIGNED),
    B("BitwiseAnd", "18", r_band, PRT__ONNX_INTS), B("BitwiseOr", "18", r_bor, PRT__ONNX_INTS),
    B("BitwiseXor", "18", r_bxor, PRT__ONNX_INTS),
    BV("Sum", "6", r_sum, NU), BV("Mean", "6", r_mean, FL), BV("Max", "6", r_max, NU),
    BV("Min", "6", r_min, NU),
    {.name = "Where", .version = "9", .min_in = 3, .max_in = 3, .nb_out = 1, .in_mask = AL,
     .types = w_types, .shapes = prt__onnx_shapes_bcast, .run = w_run, .doc = "ONNX Where"},
};
PRT__ONNX_REGISTER_TABLE(binary_defs)
