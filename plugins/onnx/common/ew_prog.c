/*
 * onnx/common/ew_prog.c - fp32 elementwise programs (see ew_prog.h):
 * checking and decoding, the broadcast plan, and chunked evaluation.
 *
 * Evaluation. prt__ew_exec walks [begin, end) a chunk of EW_CHUNK output
 * elements at a time. prt__ew_bind has classified every value once:
 *   scalar  an input broadcast along every dim, a constant, or the result of
 *           an instruction whose operands are all scalars (computed here,
 *           once, by the same kernels as the vectors);
 *   direct  an input whose flat index is the output's (read in place, also
 *           when it is the output itself);
 *   buffer  any other input (copied, splat or gathered into a stack buffer
 *           per chunk) and every other instruction result.
 * Each instruction is then one loop over the chunk (vector op vector,
 * vector op scalar, scalar op vector), the last one writing straight into y.
 * Buffers are reused once a value is dead, so a program needs as many as it
 * has values live at once. Every element goes through the same operations
 * whatever the chunking, so a result never depends on how [begin, end) was
 * split, on the thread count or on the instruction set used.
 *
 * Row mode (want_rows) walks a row of the innermost dim at a time where an
 * input is constant along rows, so that input and what is computed from it
 * alone are scalars of the row.
 *
 * The loops are compiled three times on x86-64: for the baseline, AVX2 and
 * AVX-512, chosen per call; the file is compiled without contraction of
 * multiply-adds (CMakeLists.txt), so each operation rounds once on every
 * instruction set.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ew_math.h"
#include "ew_prog.h"

#define EW_CHUNK 256
#define EW_VALUES (PRT__EW_MAX_IN + PRT__EW_MAX_INS)
/* Volume from which prt__ew_run splits over threads, and the smallest block
 * (in chunks) a thread gets. */
#define EW_PARALLEL_MIN 32768
#define EW_GRAIN_CHUNKS 32

#if defined(__GNUC__)
#define EW_INLINE __attribute__((always_inline)) inline
#else
#define EW_INLINE inline
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define EW_IVDEP _Pragma("GCC ivdep")
#elif defined(__clang__)
#define EW_IVDEP _Pragma("clang loop vectorize(assume_safety)")
#else
#define EW_IVDEP
#endif

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define EW_HAVE_AVX2 1
#endif
/* Rows of at least this many elements are walked one by one when an input
 * is constant along them (row mode, below). */
#define EW_ROW_MIN 32

/* ---- the opcode table ------------------------------------------------------------ */

typedef struct ew_opinfo {
    const char *name;
    int8_t arity, nb_params;
} ew_opinfo;

static const ew_opinfo op_info[PRT__EW_NB_OPS] = {
    [PRT__EW_ADD] = {"Add", 2, 0},
    [PRT__EW_SUB] = {"Sub", 2, 0},
    [PRT__EW_MUL] = {"Mul", 2, 0},
    [PRT__EW_DIV] = {"Div", 2, 0},
    [PRT__EW_MAX] = {"Max", 2, 0},
    [PRT__EW_MIN] = {"Min", 2, 0},
    [PRT__EW_POW] = {"Pow", 2, 0},
    [PRT__EW_NEG] = {"Neg", 1, 0},
    [PRT__EW_ABS] = {"Abs", 1, 0},
    [PRT__EW_RELU] = {"Relu", 1, 0},
    [PRT__EW_SIGMOID] = {"Sigmoid", 1, 0},
    [PRT__EW_TANH] = {"Tanh", 1, 0},
    [PRT__EW_EXP] = {"Exp", 1, 0},
    [PRT__EW_LOG] = {"Log", 1, 0},
    [PRT__EW_SQRT] = {"Sqrt", 1, 0},
    [PRT__EW_RECIPROCAL] = {"Reciprocal", 1, 0},
    [PRT__EW_ERF] = {"Erf", 1, 0},
    [PRT__EW_FLOOR] = {"Floor", 1, 0},
    [PRT__EW_CEIL] = {"Ceil", 1, 0},
    [PRT__EW_CLIP] = {"Clip", 1, 2},
    [PRT__EW_HARDSIGMOID] = {"HardSigmoid", 1, 2},
    [PRT__EW_LEAKYRELU] = {"LeakyRelu", 1, 1},
    [PRT__EW_HARDSWISH] = {"HardSwish", 1, 0},
    [PRT__EW_ELU] = {"Elu", 1, 1},
    [PRT__EW_SOFTPLUS] = {"Softplus", 1, 0},
    [PRT__EW_GELU] = {"Gelu", 1, 0},
    [PRT__EW_SQUARE] = {"Square", 1, 0},
    [PRT__EW_PRELU] = {"PRelu", 2, 0},
};

const char *prt__ew_op_name(int32_t op)
{
    return op >= 0 && op < PRT__EW_NB_OPS ? op_info[op].name : NULL;
}

int32_t prt__ew_op_arity(int32_t op)
{
    return op >= 0 && op < PRT__EW_NB_OPS ? op_info[op].arity : 0;
}

int32_t prt__ew_op_nb_params(int32_t op)
{
    return op >= 0 && op < PRT__EW_NB_OPS ? op_info[op].nb_params : 0;
}

/* ---- checking and decoding ------------------------------------------------------- */

/* Operand `which` ("a" or "b") = v of instruction i: an input, an earlier
 * result, or a constant. */
static prt_status check_operand(const prt__ew_prog *p, int32_t i, const char *which, int32_t v, prt_msg *err)
{
    const char *name = op_info[p->ins[i].op].name;
    if (v >= p->nb_in + i) {
        prt_msg_set(err,
                    "instruction %d (%s): operand %s = %d names a value not computed yet; expected an input "
                    "(0..%d), an earlier result (%d..%d) or a constant (< 0)",
                    (int)i, name, which, (int)v, (int)p->nb_in - 1, (int)p->nb_in, (int)(p->nb_in + i - 1));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (v < 0 && -(int64_t)v > p->nb_consts) {
        prt_msg_set(err, "instruction %d (%s): operand %s = %d names constant %lld, but there are %d constants",
                    (int)i, name, which, (int)v, (long long)(-1 - (int64_t)v), (int)p->nb_consts);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

prt_status prt__ew_check(const prt__ew_prog *p, prt_msg *err)
{
    int32_t i;
    if (p->nb_in < 1 || p->nb_in > PRT__EW_MAX_IN) {
        prt_msg_set(err, "program has %d inputs; expected 1..%d", (int)p->nb_in, PRT__EW_MAX_IN);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (p->nb_ins < 0 || p->nb_ins > PRT__EW_MAX_INS) {
        prt_msg_set(err, "program has %d instructions; at most %d", (int)p->nb_ins, PRT__EW_MAX_INS);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (p->nb_consts < 0 || p->nb_consts > PRT__EW_MAX_CONSTS) {
        prt_msg_set(err, "program has %d constants; at most %d", (int)p->nb_consts, PRT__EW_MAX_CONSTS);
        return PRT_STATUS_INVALID_FIELD;
    }
    if ((p->nb_ins > 0 && !p->ins) || (p->nb_consts > 0 && !p->consts)) {
        prt_msg_set(err, "program has %d instructions and %d constants but no %s array", (int)p->nb_ins,
                    (int)p->nb_consts, p->nb_ins > 0 && !p->ins ? "instruction" : "constant");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < p->nb_ins; i++) {
        const prt__ew_instr *in = &p->ins[i];
        prt_status st;
        int32_t np;
        if (in->op < 0 || in->op >= PRT__EW_NB_OPS) {
            prt_msg_set(err, "instruction %d: opcode %d is unknown; expected 0..%d", (int)i, (int)in->op,
                        PRT__EW_NB_OPS - 1);
            return PRT_STATUS_INVALID_FIELD;
        }
        if ((st = check_operand(p, i, "a", in->a, err)) != PRT_OK) return st;
        if (op_info[in->op].arity == 2 && (st = check_operand(p, i, "b", in->b, err)) != PRT_OK) return st;
        np = op_info[in->op].nb_params;
        if (np > 0 && (in->p < 0 || (int64_t)in->p + np > p->nb_consts)) {
            prt_msg_set(err,
                        "instruction %d (%s): parameter%s consts[%d%s] outside the %d constants; expected p in "
                        "0..%d",
                        (int)i, op_info[in->op].name, np > 1 ? "s" : "", (int)in->p, np > 1 ? ", +1" : "",
                        (int)p->nb_consts, (int)(p->nb_consts - np));
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    return PRT_OK;
}

prt_status prt__ew_decode(const prt_fields *fc, int32_t nb_in, prt__ew_instr *ins, float *consts,
                          prt__ew_prog *out, prt_msg *err)
{
    const prt_field *fp = prt_fields_find(fc, "program"), *fk = prt_fields_find(fc, "consts");
    prt__ew_prog p;
    int64_t i, n;
    prt_status st;
    if (!fp) {
        prt_msg_set(err, "field \"program\" (int64, 4 per instruction) is missing");
        return PRT_STATUS_INVALID_FIELD;
    }
    if (fp->type != PRT_FIELD_INT64 && fp->type != PRT_FIELD_INT32) {
        prt_msg_set(err, "field \"program\" must be int64, got %s", prt_field_type_name(fp->type));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (fp->count % 4 != 0) {
        prt_msg_set(err, "field \"program\" has %lld values; expected a multiple of 4 (op, a, b, p per instruction)",
                    (long long)fp->count);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (fp->count / 4 > PRT__EW_MAX_INS) {
        prt_msg_set(err, "field \"program\" has %lld instructions; at most %d", (long long)(fp->count / 4),
                    PRT__EW_MAX_INS);
        return PRT_STATUS_INVALID_FIELD;
    }
    n = fk ? fk->count : 0;
    if (fk && fk->type != PRT_FIELD_FLOAT32) {
        prt_msg_set(err, "field \"consts\" must be float32, got %s", prt_field_type_name(fk->type));
        return PRT_STATUS_INVALID_FIELD;
    }
    if (n > PRT__EW_MAX_CONSTS) {
        prt_msg_set(err, "field \"consts\" has %lld values; at most %d", (long long)n, PRT__EW_MAX_CONSTS);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < fp->count; i++) {
        int64_t v = 0;
        if (prt_field_get_i64(fp, i, &v) != 0 || v < INT32_MIN || v > INT32_MAX) {
            prt_msg_set(err, "instruction %lld: %s = %lld is outside the int32 range", (long long)(i / 4),
                        (const char *const[]){"op", "a", "b", "p"}[i % 4], (long long)v);
            return PRT_STATUS_INVALID_FIELD;
        }
        ((int32_t *)&ins[i / 4])[i % 4] = (int32_t)v;
    }
    for (i = 0; i < n; i++) consts[i] = ((const float *)fk->data)[i];
    p.ins = ins;
    p.nb_ins = (int32_t)(fp->count / 4);
    p.consts = consts;
    p.nb_consts = (int32_t)n;
    p.nb_in = nb_in;
    if ((st = prt__ew_check(&p, err)) != PRT_OK) return st;
    *out = p;
    return PRT_OK;
}

/* ---- the broadcast plan ---------------------------------------------------------- */

prt_status prt__ew_plan(prt__ew_bcast *bc, int32_t nb_in, const prt_dims *in, const prt_dims *out, prt_msg *err)
{
    int64_t stride[PRT__EW_MAX_IN][PRT_MAX_DIMS];
    int32_t i, k, r = out->nb, w = 0;
    char sa[160], sb[160];
    if (nb_in < 1 || nb_in > PRT__EW_MAX_IN || r < 0 || r > PRT_MAX_DIMS) {
        prt_msg_set(err, "elementwise plan: %d inputs (expected 1..%d) to an output of rank %d", (int)nb_in,
                    PRT__EW_MAX_IN, (int)r);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (k = 0; k < nb_in; k++) {
        int64_t s = 1;
        if (in[k].nb < 0 || in[k].nb > r) goto incompatible;
        for (i = r - 1; i >= 0; i--) {
            int32_t j = i - (r - in[k].nb);
            int64_t e = j >= 0 ? in[k].d[j] : 1;
            if (e != out->d[i] && e != 1) goto incompatible;
            stride[k][i] = e == 1 ? 0 : s;
            s *= e;
        }
        continue;
    incompatible:
        prt_msg_set(err, "input %d with shape %s does not broadcast to the output shape %s", (int)k,
                    prt_dims_str(&in[k], sa, sizeof sa), prt_dims_str(out, sb, sizeof sb));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    memset(bc, 0, sizeof *bc);
    bc->nb_in = nb_in;
    bc->volume = 1;
    for (i = 0; i < r; i++) bc->volume *= out->d[i];
    /* Drop extents of 1; merge a dim into the one before when every input
     * walks the pair as one (contiguous, or broadcast along both). */
    for (i = 0; i < r; i++) {
        int merge = w > 0;
        if (out->d[i] == 1) continue;
        for (k = 0; merge && k < nb_in; k++)
            if (bc->stride[k][w - 1] != stride[k][i] * out->d[i]) merge = 0;
        if (merge) {
            bc->ext[w - 1] *= out->d[i];
            for (k = 0; k < nb_in; k++) bc->stride[k][w - 1] = stride[k][i];
            continue;
        }
        bc->ext[w] = out->d[i];
        for (k = 0; k < nb_in; k++) bc->stride[k][w] = stride[k][i];
        w++;
    }
    if (bc->volume == 0) { /* nothing to walk */
        w = 1;
        bc->ext[0] = 0;
    } else if (w == 0) { /* one element */
        w = 1;
        bc->ext[0] = 1;
        for (k = 0; k < nb_in; k++) bc->stride[k][0] = 0;
    }
    bc->rank = w;
    return PRT_OK;
}

/* ---- kernels ---------------------------------------------------------------------- */

/* Binary ops in three forms: vector-vector, vector-scalar, scalar-vector.
 * y may be one of the operands (the same elements, never shifted): each
 * element is read before it is written, so the loops carry no dependence
 * (EW_IVDEP tells the compiler so instead of a restrict that would not hold). */
#define EW_BIN(nm, expr)                                                                          \
    static EW_INLINE void nm##_vv(float *y, const float *pa, const float *pb, int64_t n)           \
    {                                                                                             \
        int64_t k;                                                                                \
        EW_IVDEP                                                                                  \
        for (k = 0; k < n; k++) {                                                                 \
            const float a = pa[k], b = pb[k];                                                     \
            y[k] = (expr);                                                                        \
        }                                                                                         \
    }                                                                                             \
    static EW_INLINE void nm##_vs(float *y, const float *pa, const float b, int64_t n)             \
    {                                                                                             \
        int64_t k;                                                                                \
        EW_IVDEP                                                                                  \
        for (k = 0; k < n; k++) {                                                                 \
            const float a = pa[k];                                                                \
            y[k] = (expr);                                                                        \
        }                                                                                         \
    }                                                                                             \
    static EW_INLINE void nm##_sv(float *y, const float a, const float *pb, int64_t n)             \
    {                                                                                             \
        int64_t k;                                                                                \
        EW_IVDEP                                                                                  \
        for (k = 0; k < n; k++) {                                                                 \
            const float b = pb[k];                                                                \
            y[k] = (expr);                                                                        \
        }                                                                                         \
    }

/* Unary ops; c: the instruction's parameters (consts + p), read before the
 * loop as p0 (and p1) by the ops that have them. */
#define EW_UN_P(nm, read_params, expr)                                                            \
    static EW_INLINE void nm(float *y, const float *pa, const float *c, int64_t n)                 \
    {                                                                                             \
        int64_t k;                                                                                \
        read_params;                                                                              \
        EW_IVDEP                                                                                  \
        for (k = 0; k < n; k++) {                                                                 \
            const float a = pa[k];                                                                \
            y[k] = (expr);                                                                        \
        }                                                                                         \
    }
#define EW_UN(nm, expr) EW_UN_P(nm, (void)c, expr)
#define EW_UN1(nm, expr) EW_UN_P(nm, const float p0 = c[0], expr)
#define EW_UN2(nm, expr) EW_UN_P(nm, const float p0 = c[0]; const float p1 = c[1], expr)

/* max / min as ONNX: NaN when either is NaN. */
#define EW_MAXF(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define EW_MINF(a, b) ((a) != (a) || (a) < (b) ? (a) : (b))

/* min(max(v, lo), hi) with NaN kept (v < lo and v > hi are false for NaN). */
static EW_INLINE float ew_clamp(float v, float lo, float hi)
{
    const float t = v < lo ? lo : v;
    return t > hi ? hi : t;
}

static EW_INLINE float ew_sigmoid(float a)
{
    const float e = prt__ew_expf(-fabsf(a)); /* never overflows */
    return a >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

static EW_INLINE float ew_softplus(float a)
{
    return a > 0 ? a + log1pf(expf(-a)) : log1pf(expf(a));
}

/* a / 6 + 0.5 computed as (a + 3) times the float nearest 1/6: no
 * cancellation near a = -3 (a + 3 is exact there) and no division (a
 * vector division is several times a multiply's cost); within an ulp of
 * (a + 3) / 6, and h = 1 exactly at a = 3. */
static EW_INLINE float ew_hardswish(float a)
{
    const float h = (a + 3.0f) * (1.0f / 6.0f);
    return a * ew_clamp(h, 0.0f, 1.0f);
}

EW_BIN(k_add, a + b)
EW_BIN(k_sub, a - b)
EW_BIN(k_mul, a * b)
EW_BIN(k_div, a / b)
EW_BIN(k_max, EW_MAXF(a, b))
EW_BIN(k_min, EW_MINF(a, b))
EW_BIN(k_pow, powf(a, b))
EW_BIN(k_prelu, a < 0 ? a * b : a)

EW_UN(k_neg, -a)
EW_UN(k_abs, fabsf(a))
EW_UN(k_relu, a <= 0 ? 0.0f : a) /* NaN stays NaN */
EW_UN(k_sigmoid, ew_sigmoid(a))
EW_UN(k_tanh, tanhf(a))
EW_UN(k_exp, prt__ew_expf(a))
EW_UN(k_log, logf(a))
EW_UN(k_sqrt, sqrtf(a))
EW_UN(k_recip, 1.0f / a)
EW_UN(k_erf, erff(a))
EW_UN(k_floor, floorf(a))
EW_UN(k_ceil, ceilf(a))
EW_UN2(k_clip, ew_clamp(a, p0, p1)) /* min > max gives max, as numpy */
/* alpha a + beta in double (the product is exact there): one rounding, also
 * where the sum cancels near 0. */
EW_UN2(k_hardsigmoid, ew_clamp((float)((double)p0 * a + (double)p1), 0.0f, 1.0f))
EW_UN1(k_leakyrelu, a < 0 ? p0 * a : a)
EW_UN(k_hardswish, ew_hardswish(a))
EW_UN1(k_elu, a < 0 ? p0 * expm1f(a) : a)
EW_UN(k_softplus, ew_softplus(a))
/* 0.5 a (1 + erf(a / sqrt 2)) as 0.5 a erfc(-a / sqrt 2), without the
 * cancellation for a << 0; erfc in double: its relative condition is 2 z^2,
 * so an fp32 z = a / sqrt 2 alone would cost up to 2 z^2 ulp in the tail. */
EW_UN(k_gelu, (float)(0.5 * (double)a * erfc((double)a * -0.70710678118654752)))
EW_UN(k_square, a * a)

/* An operand in one chunk: n floats at p, or the scalar s when p is NULL. */
typedef struct ew_src {
    const float *p;
    float s;
} ew_src;

/* y[0..n) = op(a, b). At most one of a, b is a scalar. */
static EW_INLINE void ew_exec(int32_t op, float *y, ew_src a, ew_src b, const float *c, int64_t n)
{
#define EW_B(nm)                                                                                  \
    do {                                                                                          \
        if (!a.p)                                                                                 \
            nm##_sv(y, a.s, b.p, n);                                                              \
        else if (!b.p)                                                                            \
            nm##_vs(y, a.p, b.s, n);                                                              \
        else                                                                                      \
            nm##_vv(y, a.p, b.p, n);                                                              \
    } while (0)
    switch ((prt__ew_op)op) {
    case PRT__EW_ADD: EW_B(k_add); break;
    case PRT__EW_SUB: EW_B(k_sub); break;
    case PRT__EW_MUL: EW_B(k_mul); break;
    case PRT__EW_DIV: EW_B(k_div); break;
    case PRT__EW_MAX: EW_B(k_max); break;
    case PRT__EW_MIN: EW_B(k_min); break;
    case PRT__EW_POW:
        /* x^2 by one (correctly rounded) multiply: the usual case, and exact. */
        if (a.p && !b.p && b.s == 2.0f)
            k_square(y, a.p, c, n);
        else
            EW_B(k_pow);
        break;
    case PRT__EW_PRELU: EW_B(k_prelu); break;
    case PRT__EW_NEG: k_neg(y, a.p, c, n); break;
    case PRT__EW_ABS: k_abs(y, a.p, c, n); break;
    case PRT__EW_RELU: k_relu(y, a.p, c, n); break;
    case PRT__EW_SIGMOID: k_sigmoid(y, a.p, c, n); break;
    case PRT__EW_TANH: k_tanh(y, a.p, c, n); break;
    case PRT__EW_EXP: k_exp(y, a.p, c, n); break;
    case PRT__EW_LOG: k_log(y, a.p, c, n); break;
    case PRT__EW_SQRT: k_sqrt(y, a.p, c, n); break;
    case PRT__EW_RECIPROCAL: k_recip(y, a.p, c, n); break;
    case PRT__EW_ERF: k_erf(y, a.p, c, n); break;
    case PRT__EW_FLOOR: k_floor(y, a.p, c, n); break;
    case PRT__EW_CEIL: k_ceil(y, a.p, c, n); break;
    case PRT__EW_CLIP: k_clip(y, a.p, c, n); break;
    case PRT__EW_HARDSIGMOID: k_hardsigmoid(y, a.p, c, n); break;
    case PRT__EW_LEAKYRELU: k_leakyrelu(y, a.p, c, n); break;
    case PRT__EW_HARDSWISH: k_hardswish(y, a.p, c, n); break;
    case PRT__EW_ELU: k_elu(y, a.p, c, n); break;
    case PRT__EW_SOFTPLUS: k_softplus(y, a.p, c, n); break;
    case PRT__EW_GELU: k_gelu(y, a.p, c, n); break;
    case PRT__EW_SQUARE: k_square(y, a.p, c, n); break;
    case PRT__EW_NB_OPS: break;
    }
#undef EW_B
}

/* ---- evaluation ------------------------------------------------------------------- */

enum { V_SCALAR = 0, V_DIRECT = 1, V_BUFFER = 2 };

/* The walk of the gathered inputs over the collapsed output dims. */
typedef struct ew_walk {
    int64_t idx[PRT_MAX_DIMS];
    int64_t off[PRT__EW_MAX_IN];
} ew_walk;

/* The values of one stretch of output elements: the direct and copied
 * inputs at its first element, the scalars (the bound ones, or in row mode
 * a copy refolded per row). */
typedef struct ew_seg {
    const float *p[PRT__EW_MAX_IN];
    const float *s;
} ew_seg;

static int input_is_scalar(const prt__ew_bcast *bc, int32_t k)
{
    int32_t d;
    for (d = 0; d < bc->rank; d++)
        if (bc->stride[k][d] != 0 && bc->ext[d] != 1) return 0;
    return 1;
}

static int input_is_flat(const prt__ew_bcast *bc, int32_t k)
{
    int64_t s = 1;
    int32_t d;
    for (d = bc->rank - 1; d >= 0; d--) {
        if (bc->ext[d] != 1 && bc->stride[k][d] != s) return 0;
        s *= bc->ext[d];
    }
    return 1;
}

/* [a, a + n) and [b, b + n) floats overlap? */
static int overlaps(const float *a, const float *b, int64_t n)
{
    uintptr_t ua = (uintptr_t)a, ub = (uintptr_t)b, len = (uintptr_t)n * sizeof(float);
    return ua < ub + len && ub < ua + len;
}

static ew_src src_of(const prt__ew_bound *b, const ew_seg *sg, float (*buf)[EW_CHUNK], int32_t v, int64_t o)
{
    ew_src r = {NULL, 0.0f};
    if (v < 0) {
        r.s = b->p->consts[-1 - v];
    } else if (b->kind[v] == V_SCALAR) {
        r.s = sg->s[v];
    } else if (b->kind[v] == V_DIRECT) {
        r.p = sg->p[v] + o;
    } else {
        r.p = buf[b->slot[v]];
    }
    return r;
}

/* consts + p for the ops that have parameters (p is unchecked for the others). */
static const float *params_of(const prt__ew_prog *p, const prt__ew_instr *in)
{
    return op_info[in->op].nb_params > 0 ? p->consts + in->p : NULL;
}

static int operand_is_scalar(const prt__ew_bound *b, int32_t v)
{
    return v < 0 || b->kind[v] == V_SCALAR;
}

/* The scalar instructions, computed from the scalar inputs in s. */
static void fold_scalars(const prt__ew_bound *b, float *s)
{
    const prt__ew_prog *p = b->p;
    int32_t i;
    for (i = 0; i < p->nb_ins; i++) {
        const prt__ew_instr *in = &p->ins[i];
        const int32_t v = p->nb_in + i, binary = op_info[in->op].arity == 2;
        float x, y = 0.0f;
        ew_src sa = {&x, 0.0f}, sb = {&y, 0.0f};
        if (b->kind[v] != V_SCALAR) continue;
        x = in->a < 0 ? p->consts[-1 - in->a] : s[in->a];
        if (binary) y = in->b < 0 ? p->consts[-1 - in->b] : s[in->b];
        ew_exec(in->op, &s[v], sa, sb, params_of(p, in), 1);
    }
}

/* Row mode: the innermost collapsed dim is long (EW_ROW_MIN), no input
 * needs a copy, every input is scalar, contiguous along the rows or
 * constant along them, and one is constant along them (a per-channel scale
 * or bias over NCHW). Each row is then a stretch of its own in which the
 * inputs constant along it are scalars: instructions on them are computed
 * once per row instead of per element, and nothing is gathered. */
static int want_rows(const prt__ew_bound *b)
{
    const prt__ew_bcast *bc = b->bc;
    const int32_t last = bc->rank - 1;
    int32_t k, rowc = 0;
    if (bc->rank < 2 || bc->ext[last] < EW_ROW_MIN || b->nb_copy > 0) return 0;
    for (k = 0; k < b->p->nb_in; k++) {
        if (b->kind[k] == V_SCALAR) continue;
        if (bc->stride[k][last] == 0) rowc = 1;
        else if (bc->stride[k][last] != 1) return 0;
    }
    return rowc;
}

void prt__ew_bind(prt__ew_bound *b, const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x,
                  float *y)
{
    int16_t last_use[EW_VALUES];
    int8_t free_slots[EW_VALUES];
    int32_t k, i, nv = p->nb_in + p->nb_ins, nb_free = 0;
    memset(b, 0, sizeof *b);
    b->p = p;
    b->bc = bc;
    b->y = y;
    for (k = 0; k < p->nb_in; k++) b->x[k] = x[k];
    for (k = 0; k < nv; k++) last_use[k] = -1;
    for (i = 0; i < p->nb_ins; i++) {
        const prt__ew_instr *in = &p->ins[i];
        if (in->a >= 0) last_use[in->a] = (int16_t)i;
        if (op_info[in->op].arity == 2 && in->b >= 0) last_use[in->b] = (int16_t)i;
    }
    b->result = p->nb_ins > 0 ? nv - 1 : 0;
    for (k = 0; k < p->nb_in; k++) {
        if (input_is_scalar(bc, k)) {
            b->kind[k] = V_SCALAR;
            b->s[k] = x[k][0];
        } else if (!input_is_flat(bc, k)) {
            b->kind[k] = V_BUFFER;
            b->gather[b->nb_gather++] = k;
        } else if (x[k] != y && overlaps(x[k], y, bc->volume)) {
            b->kind[k] = V_BUFFER;
            b->copy[b->nb_copy++] = k;
        } else {
            b->kind[k] = V_DIRECT; /* also y itself: read element by element before it is written */
        }
    }
    if (want_rows(b)) {
        const int32_t last = bc->rank - 1;
        b->rows = 1;
        b->nb_gather = 0;
        for (k = 0; k < p->nb_in; k++) {
            if (b->kind[k] == V_SCALAR) continue;
            if (bc->stride[k][last] == 0) {
                b->kind[k] = V_SCALAR;
                b->rowc[b->nb_rowc++] = k;
            } else {
                b->kind[k] = V_DIRECT;
                b->rowv[b->nb_rowv++] = k;
            }
        }
    }
    /* Buffers: the loaded inputs, then the results, each freed after its last use. */
    for (k = EW_VALUES - 1; k >= 0; k--) free_slots[nb_free++] = (int8_t)k;
    for (k = 0; k < p->nb_in; k++)
        if (b->kind[k] == V_BUFFER) {
            b->slot[k] = free_slots[--nb_free];
            if (last_use[k] < 0 && k != b->result) free_slots[nb_free++] = b->slot[k];
        }
    for (i = 0; i < p->nb_ins; i++) {
        const prt__ew_instr *in = &p->ins[i];
        int32_t v = p->nb_in + i, binary = op_info[in->op].arity == 2;
        if (operand_is_scalar(b, in->a) && (!binary || operand_is_scalar(b, in->b))) {
            b->kind[v] = V_SCALAR;
            continue;
        }
        b->kind[v] = V_BUFFER;
        if (v == b->result) {
            b->result_in_y = 1;
        } else {
            b->slot[v] = free_slots[--nb_free];
            if (last_use[v] < 0) free_slots[nb_free++] = b->slot[v];
        }
        /* Operands dying here free their buffers (after the result took one: no aliasing). */
        if (in->a >= 0 && last_use[in->a] == i && b->kind[in->a] == V_BUFFER && in->a != b->result)
            free_slots[nb_free++] = b->slot[in->a];
        if (binary && in->b >= 0 && in->b != in->a && last_use[in->b] == i && b->kind[in->b] == V_BUFFER &&
            in->b != b->result)
            free_slots[nb_free++] = b->slot[in->b];
    }
    if (!b->rows) fold_scalars(b, b->s); /* row mode folds per row */
}

static void walk_init(const prt__ew_bound *b, ew_walk *w, int64_t begin)
{
    const prt__ew_bcast *bc = b->bc;
    int64_t rem = begin;
    int32_t d, g;
    for (g = 0; g < b->nb_gather; g++) w->off[g] = 0;
    for (d = bc->rank - 1; d >= 0; d--) {
        w->idx[d] = rem % bc->ext[d];
        rem /= bc->ext[d];
        for (g = 0; g < b->nb_gather; g++) w->off[g] += w->idx[d] * bc->stride[b->gather[g]][d];
    }
}

/* Load the next n elements of every gathered input into its buffer. */
static EW_INLINE void walk_fill(const prt__ew_bound *b, ew_walk *w, float (*buf)[EW_CHUNK], int64_t n)
{
    const prt__ew_bcast *bc = b->bc;
    int32_t last = bc->rank - 1, g, d;
    int64_t pos = 0;
    while (pos < n) {
        int64_t seg = bc->ext[last] - w->idx[last], t;
        if (seg > n - pos) seg = n - pos;
        for (g = 0; g < b->nb_gather; g++) {
            const int32_t k = b->gather[g];
            const int64_t st = bc->stride[k][last];
            const float *s = b->x[k] + w->off[g];
            float *restrict dst = buf[b->slot[k]] + pos;
            if (st == 1) {
                memcpy(dst, s, (size_t)seg * sizeof(float));
            } else if (st == 0) {
                const float v = s[0];
                for (t = 0; t < seg; t++) dst[t] = v;
            } else {
                for (t = 0; t < seg; t++) dst[t] = s[t * st];
            }
            w->off[g] += seg * st;
        }
        pos += seg;
        w->idx[last] += seg;
        for (d = last; d > 0 && w->idx[d] == bc->ext[d]; d--) {
            w->idx[d] = 0;
            w->idx[d - 1]++;
            for (g = 0; g < b->nb_gather; g++) {
                const int32_t k = b->gather[g];
                w->off[g] += bc->stride[k][d - 1] - bc->ext[d] * bc->stride[k][d];
            }
        }
    }
}

/* n output elements from y on: the stretch sg (w: the gather walk at its
 * first element, when there are gathered inputs). */
static EW_INLINE void chunks_body(const prt__ew_bound *b, const ew_seg *sg, ew_walk *w, float *y, int64_t n)
{
    float buf[EW_VALUES][EW_CHUNK];
    const prt__ew_prog *p = b->p;
    int64_t o, c;
    int32_t i, g;
    for (o = 0; o < n; o += c) {
        c = n - o < EW_CHUNK ? n - o : EW_CHUNK;
        if (b->nb_gather) walk_fill(b, w, buf, c);
        for (g = 0; g < b->nb_copy; g++)
            memcpy(buf[b->slot[b->copy[g]]], sg->p[b->copy[g]] + o, (size_t)c * sizeof(float));
        for (i = 0; i < p->nb_ins; i++) {
            const prt__ew_instr *in = &p->ins[i];
            const int32_t v = p->nb_in + i;
            ew_src sa, sb = {NULL, 0.0f};
            if (b->kind[v] == V_SCALAR) continue;
            sa = src_of(b, sg, buf, in->a, o);
            if (op_info[in->op].arity == 2) sb = src_of(b, sg, buf, in->b, o);
            ew_exec(in->op, v == b->result ? y + o : buf[b->slot[v]], sa, sb, params_of(p, in), c);
        }
        if (!b->result_in_y) {
            ew_src r = src_of(b, sg, buf, b->result, o);
            if (!r.p) {
                int64_t t;
                for (t = 0; t < c; t++) y[o + t] = r.s;
            } else if (r.p != y + o) {
                memmove(y + o, r.p, (size_t)c * sizeof(float));
            }
        }
    }
}

typedef void (*ew_chunks_fn)(const prt__ew_bound *b, const ew_seg *sg, ew_walk *w, float *y, int64_t n);

static void chunks_base(const prt__ew_bound *b, const ew_seg *sg, ew_walk *w, float *y, int64_t n)
{
    chunks_body(b, sg, w, y, n);
}

#ifdef EW_HAVE_AVX2
__attribute__((target("avx2"))) static void chunks_avx2(const prt__ew_bound *b, const ew_seg *sg, ew_walk *w,
                                                         float *y, int64_t n)
{
    chunks_body(b, sg, w, y, n);
}

__attribute__((target("avx512f,avx512dq,prefer-vector-width=512"))) static void
chunks_avx512(const prt__ew_bound *b, const ew_seg *sg, ew_walk *w, float *y, int64_t n)
{
    chunks_body(b, sg, w, y, n);
}
#endif

static ew_chunks_fn chunks_pick(void)
{
#ifdef EW_HAVE_AVX2
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return chunks_avx512;
    if (__builtin_cpu_supports("avx2")) return chunks_avx2;
#endif
    return chunks_base;
}

/* Row mode: each row of the innermost dim in [begin, end) as a stretch. */
static void exec_rows(const prt__ew_bound *b, ew_chunks_fn chunks, int64_t begin, int64_t end)
{
    const prt__ew_bcast *bc = b->bc;
    const int32_t last = bc->rank - 1;
    const int64_t len = bc->ext[last];
    int64_t idx[PRT_MAX_DIMS], off[PRT__EW_MAX_IN], row = begin / len, rem = row, at = begin;
    float s[EW_VALUES];
    ew_seg sg;
    int32_t d, k;
    memcpy(s, b->s, sizeof s);
    sg.s = s;
    for (k = 0; k < b->p->nb_in; k++) off[k] = 0;
    for (d = last - 1; d >= 0; d--) {
        idx[d] = rem % bc->ext[d];
        rem /= bc->ext[d];
        for (k = 0; k < b->p->nb_in; k++) off[k] += idx[d] * bc->stride[k][d];
    }
    while (at < end) {
        const int64_t row_end = (row + 1) * len < end ? (row + 1) * len : end, inner = at - row * len;
        for (k = 0; k < b->nb_rowc; k++) s[b->rowc[k]] = b->x[b->rowc[k]][off[b->rowc[k]]];
        for (k = 0; k < b->nb_rowv; k++) sg.p[b->rowv[k]] = b->x[b->rowv[k]] + off[b->rowv[k]] + inner;
        fold_scalars(b, s);
        chunks(b, &sg, NULL, b->y + at, row_end - at);
        at = row_end;
        row++;
        for (d = last - 1; d >= 0; d--) { /* the next row: carry through the outer dims */
            for (k = 0; k < b->p->nb_in; k++) off[k] += bc->stride[k][d];
            if (++idx[d] < bc->ext[d] || d == 0) break;
            for (k = 0; k < b->p->nb_in; k++) off[k] -= bc->ext[d] * bc->stride[k][d];
            idx[d] = 0;
        }
    }
}

void prt__ew_exec(const prt__ew_bound *b, int64_t begin, int64_t end)
{
    const ew_chunks_fn chunks = chunks_pick();
    ew_seg sg;
    ew_walk w;
    int32_t k;
    if (begin >= end) return;
    if (b->rows) {
        exec_rows(b, chunks, begin, end);
        return;
    }
    sg.s = b->s;
    for (k = 0; k < b->p->nb_in; k++) sg.p[k] = b->kind[k] == V_DIRECT ? b->x[k] + begin : NULL;
    for (k = 0; k < b->nb_copy; k++) sg.p[b->copy[k]] = b->x[b->copy[k]] + begin;
    if (b->nb_gather) walk_init(b, &w, begin);
    chunks(b, &sg, b->nb_gather ? &w : NULL, b->y + begin, end - begin);
}

void prt__ew_range(const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x, float *y, int64_t begin,
                   int64_t end)
{
    prt__ew_bound b;
    if (begin >= end) return;
    prt__ew_bind(&b, p, bc, x, y);
    prt__ew_exec(&b, begin, end);
}

typedef struct ew_job {
    prt__ew_bound b;
    int64_t volume;
} ew_job;

/* Blocks [cb, ce) of chunks. */
static void run_block(void *arg, int64_t cb, int64_t ce)
{
    const ew_job *j = arg;
    int64_t e = ce * EW_CHUNK;
    prt__ew_exec(&j->b, cb * EW_CHUNK, e < j->volume ? e : j->volume);
}

void prt__ew_run(const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x, float *y, prt_exec *ex)
{
    ew_job j;
    if (bc->volume <= 0) return;
    prt__ew_bind(&j.b, p, bc, x, y);
    j.volume = bc->volume;
    if (bc->volume < EW_PARALLEL_MIN || !ex || !ex->parallel_for || ex->nb_threads <= 1) {
        prt__ew_exec(&j.b, 0, bc->volume);
        return;
    }
    ex->parallel_for(ex, (bc->volume + EW_CHUNK - 1) / EW_CHUNK, EW_GRAIN_CHUNKS, run_block, &j);
}

static atomic_int fast_paths = 1;

void prt__ew_set_fast_paths(int on)
{
    atomic_store_explicit(&fast_paths, on != 0, memory_order_relaxed);
}

int prt__ew_fast_paths(void)
{
    return atomic_load_explicit(&fast_paths, memory_order_relaxed);
}
