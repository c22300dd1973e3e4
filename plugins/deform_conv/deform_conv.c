/*
 * deform_conv/deform_conv.c - ModulatedDeformConv2d creators and plugin
 * objects: one core (fields, shape checks, output shapes, workspace,
 * dispatch to the CPU or CUDA implementation) behind two thin wrappers,
 * version "1" (blob style) and version "2" (field style).
 *
 * Blob of version 1 (little-endian, 80 bytes):
 *   u32 magic "DCN1" (0x314e4344), u32 blob version (1),
 *   i64 stride[2], i64 padding[2], i64 dilation[2], i64 group,
 *   i64 deformable_group, u32 reserved (0), u32 CRC-32 of every byte before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/plugin.h"
#include "deform_conv.h"
#include "../plugin_alloc.h"
#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define DCN_NAME "ModulatedDeformConv2d"
#define DCN_BLOB_MAGIC 0x314e4344u
#define DCN_BLOB_VERSION 1u
#define DCN_BLOB_SIZE 80u
#define DCN_MAX_SPATIAL 65535
#define DCN_MAX_GROUP (1 << 20)

/* ------------------------------------------------------------------------ */
/* Schema and field parsing                                                 */
/* ------------------------------------------------------------------------ */

#define DCN_SCHEMA_ENTRY(nm, cnt, lo, hi, text)                                                       \
    {.name = nm, .type = PRT_FIELD_INT64, .required = 1, .min_count = cnt, .max_count = cnt,           \
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = lo, .max = hi, .doc = text}

static const prt_field_schema dcn_schema[5] = {
    DCN_SCHEMA_ENTRY("stride", 2, 1, DCN_MAX_SPATIAL, "[H, W] stride of the convolution, >= 1"),
    DCN_SCHEMA_ENTRY("padding", 2, 0, DCN_MAX_SPATIAL, "[H, W] zero padding on both sides, >= 0"),
    DCN_SCHEMA_ENTRY("dilation", 2, 1, DCN_MAX_SPATIAL, "[H, W] spacing of kernel taps, >= 1"),
    DCN_SCHEMA_ENTRY("group", 1, 1, DCN_MAX_GROUP, "convolution groups; Cin and Cout divisible by it"),
    DCN_SCHEMA_ENTRY("deformable_group", 1, 1, DCN_MAX_GROUP,
                     "groups of input channels sharing one offset/mask set"),
};

static prt_status params_check(const prt__dcn_params *p, const char *tag, prt_msg *err)
{
    int i;
    for (i = 0; i < 2; i++) {
        if (p->stride[i] < 1 || p->stride[i] > DCN_MAX_SPATIAL) {
            prt_msg_set(err, DCN_NAME " %s: field \"stride\" needs 2 values in [1, %d], got [%lld, %lld]",
                        tag, DCN_MAX_SPATIAL, (long long)p->stride[0], (long long)p->stride[1]);
            return PRT_STATUS_INVALID_FIELD;
        }
        if (p->padding[i] < 0 || p->padding[i] > DCN_MAX_SPATIAL) {
            prt_msg_set(err, DCN_NAME " %s: field \"padding\" needs 2 values in [0, %d], got [%lld, %lld]",
                        tag, DCN_MAX_SPATIAL, (long long)p->padding[0], (long long)p->padding[1]);
            return PRT_STATUS_INVALID_FIELD;
        }
        if (p->dilation[i] < 1 || p->dilation[i] > DCN_MAX_SPATIAL) {
            prt_msg_set(err, DCN_NAME " %s: field \"dilation\" needs 2 values in [1, %d], got [%lld, %lld]",
                        tag, DCN_MAX_SPATIAL, (long long)p->dilation[0], (long long)p->dilation[1]);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    if (p->group < 1 || p->group > DCN_MAX_GROUP) {
        prt_msg_set(err, DCN_NAME " %s: field \"group\" needs a value in [1, %d], got %lld", tag,
                    DCN_MAX_GROUP, (long long)p->group);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (p->deformable_group < 1 || p->deformable_group > DCN_MAX_GROUP) {
        prt_msg_set(err, DCN_NAME " %s: field \"deformable_group\" needs a value in [1, %d], got %lld",
                    tag, DCN_MAX_GROUP, (long long)p->deformable_group);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status field_read(const prt_fields *fc, const char *name, int64_t count, int64_t *dst,
                             const char *tag, prt_msg *err)
{
    const prt_field *f = prt_fields_find(fc, name);
    int64_t i;
    if (!f) {
        prt_msg_set(err, DCN_NAME " %s: required field \"%s\" is missing", tag, name);
        return PRT_STATUS_INVALID_FIELD;
    }
    if (f->count != count) {
        prt_msg_set(err, DCN_NAME " %s: field \"%s\" needs %lld value%s, got %lld", tag, name,
                    (long long)count, count == 1 ? "" : "s", (long long)f->count);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (i = 0; i < count; i++)
        if (prt_field_get_i64(f, i, &dst[i]) != 0) {
            prt_msg_set(err, DCN_NAME " %s: field \"%s\" needs integers, got type %s", tag, name,
                        prt_field_type_name(f->type));
            return PRT_STATUS_INVALID_FIELD;
        }
    return PRT_OK;
}

static prt_status params_from_fields(const prt_fields *fc, const char *tag, prt__dcn_params *out,
                                     prt_msg *err)
{
    prt__dcn_params p;
    prt_status st;
    memset(&p, 0, sizeof(p));
    if ((st = field_read(fc, "stride", 2, p.stride, tag, err)) != PRT_OK) return st;
    if ((st = field_read(fc, "padding", 2, p.padding, tag, err)) != PRT_OK) return st;
    if ((st = field_read(fc, "dilation", 2, p.dilation, tag, err)) != PRT_OK) return st;
    if ((st = field_read(fc, "group", 1, &p.group, tag, err)) != PRT_OK) return st;
    if ((st = field_read(fc, "deformable_group", 1, &p.deformable_group, tag, err)) != PRT_OK) return st;
    if ((st = params_check(&p, tag, err)) != PRT_OK) return st;
    *out = p;
    return PRT_OK;
}

/* ------------------------------------------------------------------------ */
/* The core shared by all versions                                          */
/* ------------------------------------------------------------------------ */

/* What an input is, whatever its position in the layer. */
enum { R_X, R_OFFSET, R_MASK, R_WEIGHT, R_BIAS, R_COUNT };

typedef struct dcn_core {
    prt__dcn_params p;
    prt__dcn_onnx o;            /* ONNX DeformConv: end pads, kernel_shape, B as a field (owned) */
    int onnx;                   /* inputs in ONNX order X, W, offset[, B][, mask] */
    const char *name;           /* DCN_NAME or "DeformConv", for messages */
    const char *tag;            /* "v1", "v2" or "v19", for messages */
    uint16_t *bias_h;           /* o.bias as f16, when o.bias is set */
    uint16_t *bias_b;           /* o.bias as bf16, when o.bias is set */
    int32_t nb_in;              /* inputs once configured; 0 before */
    prt_plugin_context *ctx;    /* attached context, or NULL */
    void *blas;                 /* cuBLAS handle acquired from ctx */
    int32_t tactic;             /* CUDA kernel (PRT_DCN_TACTIC_*), 0: the default policy */
} dcn_core;

static const char *const dcn_role_names[2][R_COUNT] = {
    {"x", "offset", "mask", "weight", "bias"},
    {"X", "offset", "mask", "W", "B"},
};
#define RNAME(c, r) dcn_role_names[(c)->onnx][r]

static prt_status check_nb(const dcn_core *c, int32_t nb_in, int32_t nb_out, prt_msg *err)
{
    if (c->onnx && c->o.bias && (nb_in < 3 || nb_in > 4)) {
        prt_msg_set(err, "%s %s: B is given as field \"input:3\", so it needs 3 inputs (X, W, offset) or 4 (with "
                    "mask), got %d", c->name, c->tag, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->onnx && (nb_in < 3 || nb_in > 5)) {
        prt_msg_set(err, "%s %s: needs 3 inputs (X, W, offset), 4 (with B or mask) or 5 (with B and mask), got %d",
                    c->name, c->tag, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (!c->onnx && nb_in != 4 && nb_in != 5) {
        prt_msg_set(err, "%s %s: needs 4 inputs (x, offset, mask, weight) or 5 (with bias), got %d", c->name,
                    c->tag, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb_out != 1) {
        prt_msg_set(err, "%s %s: has 1 output, got %d", c->name, c->tag, (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

/* The layer input of each role, -1 when absent. ONNX: a 4th input is mask
 * when B is a field or when the input has more than one dim (rank3, -1 when
 * not known yet), else B. */
static void core_roles(const dcn_core *c, int32_t nb_in, int32_t rank3, int32_t r[R_COUNT])
{
    if (!c->onnx) {
        r[R_X] = 0, r[R_OFFSET] = 1, r[R_MASK] = 2, r[R_WEIGHT] = 3, r[R_BIAS] = nb_in == 5 ? 4 : -1;
        return;
    }
    r[R_X] = 0, r[R_WEIGHT] = 1, r[R_OFFSET] = 2, r[R_BIAS] = -1, r[R_MASK] = -1;
    if (nb_in == 5) r[R_BIAS] = 3, r[R_MASK] = 4;
    else if (nb_in == 4 && (c->o.bias || rank3 > 1)) r[R_MASK] = 3;
    else if (nb_in == 4) r[R_BIAS] = 3;
}

#define KNOWN(v) ((v) >= 0)

/* Output extent from the begin and end padding; <= 0 when x is too small. */
static int64_t out_extent(int64_t in, int64_t pb, int64_t pe, int64_t dil, int64_t k, int64_t stride)
{
    int64_t num = in + pb + pe - (dil * (k - 1) + 1);
    return num < 0 ? 0 : num / stride + 1;
}

static prt_status check_too_small(const dcn_core *c, const char *axis, int64_t in, int ax, int64_t k,
                                  const char *what, prt_msg *err)
{
    const prt__dcn_params *p = &c->p;
    char pad[64];
    if (p->padding[ax] == c->o.pad_end[ax]) snprintf(pad, sizeof pad, "%lld", (long long)p->padding[ax]);
    else snprintf(pad, sizeof pad, "%lld + %lld", (long long)p->padding[ax], (long long)c->o.pad_end[ax]);
    prt_msg_set(err, "%s %s: %s %s %lld with padding %s is smaller than the dilated kernel %s %lld (%sdims)", c->name,
                c->tag, RNAME(c, R_X), axis, (long long)in, pad, axis, (long long)(p->dilation[ax] * (k - 1) + 1),
                what);
    return PRT_STATUS_SHAPE_MISMATCH;
}

/* Checks every relation between input extents that are known (>= 0);
 * `what` says which dims these are ("", "min ", "max "). d: the layer's
 * inputs in its own order. */
static prt_status check_dims(const dcn_core *c, const prt_dims *const *d, int32_t nb_in, const char *what,
                             prt_msg *err)
{
    const prt__dcn_params *p = &c->p;
    const char *nm = c->name, *tag = c->tag;
    const prt_dims *x, *off, *mask, *wt, *b;
    int32_t i, r[R_COUNT];
    int64_t cin, cout, kh, kw, hout = -1, wout = -1, K = -1;
    core_roles(c, nb_in, nb_in > 3 ? d[3]->nb : -1, r);
    for (i = 0; i < R_COUNT; i++) {
        const int32_t want = i == R_BIAS ? 1 : 4;
        if (r[i] >= 0 && d[r[i]]->nb != want) {
            prt_msg_set(err, "%s %s: input %d (%s) must be %d-D, got %d-D%s", nm, tag, (int)r[i], RNAME(c, i),
                        (int)want, (int)d[r[i]]->nb,
                        c->onnx && i == R_X ? " (only 2-D deformable convolution is offered)" : "");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    x = d[r[R_X]], off = d[r[R_OFFSET]], wt = d[r[R_WEIGHT]];
    mask = r[R_MASK] >= 0 ? d[r[R_MASK]] : NULL;
    b = r[R_BIAS] >= 0 ? d[r[R_BIAS]] : NULL;
    cin = x->d[1];
    cout = wt->d[0];
    kh = wt->d[2];
    kw = wt->d[3];
    if ((KNOWN(kh) && kh < 1) || (KNOWN(kw) && kw < 1)) {
        prt_msg_set(err, "%s %s: %s kernel must be at least 1x1, got %lldx%lld (%sdims)", nm, tag,
                    RNAME(c, R_WEIGHT), (long long)kh, (long long)kw, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (c->o.kernel_shape[0] > 0 && KNOWN(kh) && KNOWN(kw) &&
        (kh != c->o.kernel_shape[0] || kw != c->o.kernel_shape[1])) {
        prt_msg_set(err, "%s %s: field \"kernel_shape\" says %lldx%lld but W's kernel is %lldx%lld (%sdims)", nm,
                    tag, (long long)c->o.kernel_shape[0], (long long)c->o.kernel_shape[1], (long long)kh,
                    (long long)kw, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && cin % p->group != 0) {
        prt_msg_set(err, "%s %s: %s channels (%lld) must be divisible by group (%lld) (%sdims)", nm, tag,
                    RNAME(c, R_X), (long long)cin, (long long)p->group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && cin % p->deformable_group != 0) {
        prt_msg_set(err, "%s %s: %s channels (%lld) must be divisible by %s (%lld) (%sdims)", nm, tag,
                    RNAME(c, R_X), (long long)cin, c->onnx ? "offset_group" : "deformable_group",
                    (long long)p->deformable_group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cout) && cout % p->group != 0) {
        prt_msg_set(err, "%s %s: %s output channels (%lld) must be divisible by group (%lld) (%sdims)", nm, tag,
                    RNAME(c, R_WEIGHT), (long long)cout, (long long)p->group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && KNOWN(wt->d[1]) && wt->d[1] != cin / p->group) {
        prt_msg_set(err, "%s %s: %s dim 1 must be %s channels / group = %lld / %lld = %lld, got %lld (%sdims)", nm,
                    tag, RNAME(c, R_WEIGHT), RNAME(c, R_X), (long long)cin, (long long)p->group,
                    (long long)(cin / p->group), (long long)wt->d[1], what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(kh) && KNOWN(kw)) {
        const char *dg = c->onnx ? "offset_group" : "deformable_group";
        K = kh * kw;
        if (KNOWN(off->d[1]) && off->d[1] != 2 * p->deformable_group * K) {
            prt_msg_set(err, "%s %s: offset must have 2*%s*kh*kw = 2*%lld*%lld*%lld = %lld channels, got %lld (%sdims)",
                        nm, tag, dg, (long long)p->deformable_group, (long long)kh, (long long)kw,
                        (long long)(2 * p->deformable_group * K), (long long)off->d[1], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (mask && KNOWN(mask->d[1]) && mask->d[1] != p->deformable_group * K) {
            prt_msg_set(err, "%s %s: mask must have %s*kh*kw = %lld*%lld*%lld = %lld channels, got %lld (%sdims)", nm,
                        tag, dg, (long long)p->deformable_group, (long long)kh, (long long)kw,
                        (long long)(p->deformable_group * K), (long long)mask->d[1], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    for (i = R_OFFSET; i <= R_MASK; i++) {
        const prt_dims *q = i == R_OFFSET ? off : mask;
        if (q && KNOWN(x->d[0]) && KNOWN(q->d[0]) && q->d[0] != x->d[0]) {
            prt_msg_set(err, "%s %s: %s batch (%lld) must equal %s batch (%lld) (%sdims)", nm, tag, RNAME(c, i),
                        (long long)q->d[0], RNAME(c, R_X), (long long)x->d[0], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    if (KNOWN(x->d[2]) && KNOWN(kh)) {
        hout = out_extent(x->d[2], p->padding[0], c->o.pad_end[0], p->dilation[0], kh, p->stride[0]);
        if (hout < 1) return check_too_small(c, "height", x->d[2], 0, kh, what, err);
    }
    if (KNOWN(x->d[3]) && KNOWN(kw)) {
        wout = out_extent(x->d[3], p->padding[1], c->o.pad_end[1], p->dilation[1], kw, p->stride[1]);
        if (wout < 1) return check_too_small(c, "width", x->d[3], 1, kw, what, err);
    }
    for (i = R_OFFSET; i <= R_MASK; i++) {
        const prt_dims *q = i == R_OFFSET ? off : mask;
        if (q && ((KNOWN(hout) && KNOWN(q->d[2]) && q->d[2] != hout) ||
                  (KNOWN(wout) && KNOWN(q->d[3]) && q->d[3] != wout))) {
            prt_msg_set(err,
                        "%s %s: %s spatial size must equal the output size %lldx%lld computed from %s and the fields, got %lldx%lld (%sdims)",
                        nm, tag, RNAME(c, i), (long long)hout, (long long)wout, RNAME(c, R_X), (long long)q->d[2],
                        (long long)q->d[3], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    if (b && KNOWN(cout) && KNOWN(b->d[0]) && b->d[0] != cout) {
        prt_msg_set(err, "%s %s: %s length must equal %s output channels (%lld), got %lld (%sdims)", nm, tag,
                    RNAME(c, R_BIAS), RNAME(c, R_WEIGHT), (long long)cout, (long long)b->d[0], what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (c->o.bias && KNOWN(cout) && c->o.nb_bias != cout) {
        prt_msg_set(err, "%s %s: B (field \"input:3\") has %lld values, but W has %lld output channels (%sdims)", nm,
                    tag, (long long)c->o.nb_bias, (long long)cout, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status core_output_types(const dcn_core *c, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                    int32_t nb_out, prt_msg *err)
{
    int32_t i, r[R_COUNT];
    prt_status st = check_nb(c, nb_in, nb_out, err);
    if (st != PRT_OK) return st;
    if (in[0] != PRT_DTYPE_F32 && in[0] != PRT_DTYPE_F16 && in[0] != PRT_DTYPE_BF16) {
        prt_msg_set(err, "%s %s: %s must be f32, f16 or bf16, got %s", c->name, c->tag, RNAME(c, R_X),
                    prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    core_roles(c, nb_in, -1, r);
    for (i = 1; i < R_COUNT; i++)
        if (r[i] >= 0 && in[r[i]] != in[0]) {
            prt_msg_set(err, "%s %s: all inputs must share %s's type %s, but %s is %s", c->name, c->tag,
                        RNAME(c, R_X), prt_dtype_name(in[0]), RNAME(c, i), prt_dtype_name(in[r[i]]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    out[0] = in[0];
    return PRT_OK;
}

static const prt_expr *out_extent_expr(prt_expr_builder *eb, const prt_expr *in, const prt_expr *k,
                                       int64_t pads, int64_t dil, int64_t stride)
{
    /* floor((in + pads - (dil*(k-1)+1)) / stride) + 1, pads = begin + end */
    const prt_expr *one = eb->constant(eb, 1);
    const prt_expr *km1 = eb->operation(eb, PRT_EXPR_SUB, k, one);
    const prt_expr *ext = eb->operation(eb, PRT_EXPR_SUM, eb->operation(eb, PRT_EXPR_PROD, eb->constant(eb, dil), km1), one);
    const prt_expr *num = eb->operation(eb, PRT_EXPR_SUB, eb->operation(eb, PRT_EXPR_SUM, in, eb->constant(eb, pads)), ext);
    const prt_expr *q = eb->operation(eb, PRT_EXPR_FLOOR_DIV, num, eb->constant(eb, stride));
    return eb->operation(eb, PRT_EXPR_SUM, q, one);
}

static prt_status core_output_shapes(const dcn_core *c, const prt_dims_expr *in, int32_t nb_in,
                                     prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    prt_dims known[5];
    const prt_dims *kp[5];
    int32_t i, j, r[R_COUNT];
    const prt__dcn_params *p = &c->p;
    prt_dims_expr o;
    prt_status st = check_nb(c, nb_in, nb_out, err);
    if (st != PRT_OK) return st;
    for (i = 0; i < nb_in; i++) {
        memset(&known[i], 0, sizeof(known[i]));
        if (in[i].nb < 0 || in[i].nb > PRT_MAX_DIMS) {
            prt_msg_set(err, "%s %s: input %d has an invalid rank %d", c->name, c->tag, (int)i, (int)in[i].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        known[i].nb = in[i].nb;
        for (j = 0; j < in[i].nb; j++) {
            int64_t v;
            known[i].d[j] = (in[i].d[j] && eb->get_constant(eb, in[i].d[j], &v)) ? v : PRT_DIM_DYNAMIC;
        }
        kp[i] = &known[i];
    }
    if ((st = check_dims(c, kp, nb_in, "", err)) != PRT_OK) return st;
    core_roles(c, nb_in, nb_in > 3 ? in[3].nb : -1, r);
    memset(&o, 0, sizeof(o));
    o.nb = 4;
    o.d[0] = in[r[R_X]].d[0];
    o.d[1] = in[r[R_WEIGHT]].d[0];
    o.d[2] = out_extent_expr(eb, in[r[R_X]].d[2], in[r[R_WEIGHT]].d[2], p->padding[0] + c->o.pad_end[0],
                             p->dilation[0], p->stride[0]);
    o.d[3] = out_extent_expr(eb, in[r[R_X]].d[3], in[r[R_WEIGHT]].d[3], p->padding[1] + c->o.pad_end[1],
                             p->dilation[1], p->stride[1]);
    if (!o.d[0] || !o.d[1] || !o.d[2] || !o.d[3]) {
        prt_msg_set(err, "%s %s: the shape expression builder failed (out of memory?)", c->name, c->tag);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    out[0] = o;
    return PRT_OK;
}

static int core_supports(const dcn_core *c, int32_t pos, const prt_tensor_desc *d0, const prt_tensor_desc *dp,
                         int32_t nb_in, int32_t nb_out)
{
    if (nb_out != 1 || pos < 0 || pos >= nb_in + nb_out) return 0;
    if (c->onnx ? (nb_in < 3 || nb_in > (c->o.bias ? 4 : 5)) : (nb_in != 4 && nb_in != 5)) return 0;
    if (dp->format != PRT_FORMAT_LINEAR) return 0;
    if (dp->dtype != PRT_DTYPE_F32 && dp->dtype != PRT_DTYPE_F16 && dp->dtype != PRT_DTYPE_BF16) return 0;
    return pos == 0 || dp->dtype == d0->dtype;
}

/* Full check of descriptors: types, formats, and the desc/min/max dims. */
static prt_status core_configure(dcn_core *c, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    const prt_dims *kp[5];
    prt_dtype types[5], ot;
    int32_t i, pass;
    static const char *const what[3] = {"", "min ", "max "};
    prt_status st = check_nb(c, nb_in, nb_out, err);
    if (st != PRT_OK) return st;
    for (i = 0; i < nb_in; i++) {
        types[i] = in[i].desc.dtype;
        if (in[i].desc.format != PRT_FORMAT_LINEAR) {
            prt_msg_set(err, "%s %s: input %d must be linear (NCHW), got %s", c->name, c->tag, (int)i,
                        prt_format_name(in[i].desc.format));
            return PRT_STATUS_UNSUPPORTED;
        }
    }
    if ((st = core_output_types(c, types, nb_in, &ot, 1, err)) != PRT_OK) return st;
    if (out[0].desc.dtype != ot || out[0].desc.format != PRT_FORMAT_LINEAR) {
        prt_msg_set(err, "%s %s: output must be linear %s, got %s %s", c->name, c->tag, prt_dtype_name(ot),
                    prt_format_name(out[0].desc.format), prt_dtype_name(out[0].desc.dtype));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    for (pass = 0; pass < 3; pass++) {
        for (i = 0; i < nb_in; i++)
            kp[i] = pass == 0 ? &in[i].desc.dims : pass == 1 ? &in[i].min : &in[i].max;
        if ((st = check_dims(c, kp, nb_in, what[pass], err)) != PRT_OK) return st;
    }
    c->nb_in = nb_in;
    return PRT_OK;
}

/* Shape of one call from concrete dims (already checked). */
static int shape_from_dims(const dcn_core *c, const prt_dims *x, const prt_dims *w, int has_bias,
                           prt__dcn_shape *s)
{
    if (x->nb != 4 || w->nb != 4) return -1;
    s->n = x->d[0];
    s->cin = x->d[1];
    s->h = x->d[2];
    s->w = x->d[3];
    s->cout = w->d[0];
    s->kh = w->d[2];
    s->kw = w->d[3];
    if (s->n < 0 || s->cin < 1 || s->h < 1 || s->w < 1 || s->cout < 0 || s->kh < 1 || s->kw < 1) return -1;
    s->hout = out_extent(s->h, c->p.padding[0], c->o.pad_end[0], c->p.dilation[0], s->kh, c->p.stride[0]);
    s->wout = out_extent(s->w, c->p.padding[1], c->o.pad_end[1], c->p.dilation[1], s->kw, c->p.stride[1]);
    s->has_bias = has_bias;
    return 0;
}

#define DCN_WS_ALIGN ((size_t)256)

static size_t ws_round(size_t n) { return (n + DCN_WS_ALIGN - 1) / DCN_WS_ALIGN * DCN_WS_ALIGN; }

/* Workspace: the kernels' own, then (ONNX without a mask input) a mask of
 * ones, then (B as a field) B for the device. Offsets in bytes. */
typedef struct dcn_ws {
    size_t kernel, ones, bias, total;
} dcn_ws;

/* The workspace layout for `device`'s path (dev < 0: the larger of the CPU
 * and CUDA paths, for callers that do not say the device): a CPU engine
 * reserves no CUDA column buffer. */
static int core_workspace_layout(const dcn_core *c, const prt_dims *const *d, int32_t nb_in, prt_dtype t, int dev,
                                 dcn_ws *out)
{
    prt__dcn_shape s;
    size_t a, b = 0, es = t == PRT_DTYPE_F32 ? 4 : 2;
    int32_t r[R_COUNT];
    memset(out, 0, sizeof(*out));
    if (check_nb(c, nb_in, 1, NULL) != PRT_OK) return -1;
    core_roles(c, nb_in, nb_in > 3 ? d[3]->nb : -1, r);
    if (shape_from_dims(c, d[r[R_X]], d[r[R_WEIGHT]], 0, &s) != 0) return -1;
    a = dev == PRT_DEVICE_CUDA ? 0 : prt__deform_conv_cpu_workspace(&c->p, &s, t != PRT_DTYPE_F32);
#ifdef PLUGRT_HAVE_CUDA
    if (dev != PRT_DEVICE_CPU) b = prt__deform_conv_cuda_workspace(&c->p, &s, t != PRT_DTYPE_F32);
#endif
    out->kernel = a > b ? a : b;
    out->total = ws_round(out->kernel);
    if (r[R_MASK] < 0) {
        /* refuse (no workspace: enqueue then fails with a message) rather than wrap around */
        if ((double)s.n * (double)c->p.deformable_group * (double)(s.kh * s.kw) * (double)s.hout * (double)s.wout >
            (double)((int64_t)1 << 40))
            return -1;
        out->ones = out->total;
        out->total += ws_round((size_t)(s.n * c->p.deformable_group * s.kh * s.kw * s.hout * s.wout) * es);
    }
    if (c->o.bias) {
        out->bias = out->total;
        out->total += ws_round((size_t)c->o.nb_bias * es);
    }
    return 0;
}

static size_t core_workspace(const dcn_core *c, const prt_dims *const *d, int32_t nb_in, prt_dtype t, int dev)
{
    dcn_ws w;
    return core_workspace_layout(c, d, nb_in, t, dev, &w) == 0 ? w.total : 0;
}

static void par_adapter(void *ctx, int64_t n, int64_t grain, prt__dcn_range_fn fn, void *arg)
{
    prt_exec *ex = (prt_exec *)ctx;
    ex->parallel_for(ex, n, grain, fn, arg);
}

static prt_status exec_fail(prt_exec *ex, prt_status st, const char *msg)
{
    if (ex && ex->set_error) ex->set_error(ex, msg);
    return st;
}

#ifdef PLUGRT_HAVE_CUDA
/* 4 KiB of ones in each type, the source of the device-side mask of ones. */
#define DCN_X8(v) v, v, v, v, v, v, v, v
#define DCN_X64(v) DCN_X8(v), DCN_X8(v), DCN_X8(v), DCN_X8(v), DCN_X8(v), DCN_X8(v), DCN_X8(v), DCN_X8(v)
#define DCN_X1024(v) DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), \
    DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v), DCN_X64(v)
static const float dcn_ones_f32[1024] = {DCN_X1024(1.0f)};
static const uint16_t dcn_ones_f16[2048] = {DCN_X1024(0x3c00u), DCN_X1024(0x3c00u)};
static const uint16_t dcn_ones_bf16[2048] = {DCN_X1024(0x3f80u), DCN_X1024(0x3f80u)};
#undef DCN_X1024
#undef DCN_X64
#undef DCN_X8
#endif

/* A mask of ones (n elements of elt's type) at dst: on the CPU written
 * here, on CUDA copied from the tables above and then doubled device-side,
 * all queued on the stream (no kernel of its own). */
static int fill_ones(prt_exec *ex, void *dst, int64_t n, int elt)
{
    int64_t i;
    const int is_f16 = elt != PRT_DCN_F32;
    const uint16_t one16 = elt == PRT_DCN_BF16 ? 0x3f80u : 0x3c00u;
    if (ex->device == PRT_DEVICE_CPU) {
        if (is_f16)
            for (i = 0; i < n; i++) ((uint16_t *)dst)[i] = one16;
        else
            for (i = 0; i < n; i++) ((float *)dst)[i] = 1.0f;
        return 0;
    }
#ifdef PLUGRT_HAVE_CUDA
    {
        const size_t es = is_f16 ? 2 : 4, bytes = (size_t)n * es;
        size_t done = bytes < sizeof(dcn_ones_f32) ? bytes : sizeof(dcn_ones_f32);
        cudaStream_t st = (cudaStream_t)ex->cuda_stream;
        if (n <= 0) return 0;
        const void *ones = elt == PRT_DCN_BF16 ? (const void *)dcn_ones_bf16
                           : is_f16          ? (const void *)dcn_ones_f16
                                             : (const void *)dcn_ones_f32;
        if (cudaMemcpyAsync(dst, ones, done,
                            cudaMemcpyHostToDevice, st) != cudaSuccess)
            return -1;
        while (done < bytes) {
            size_t step = done < bytes - done ? done : bytes - done;
            if (cudaMemcpyAsync((char *)dst + done, dst, step, cudaMemcpyDeviceToDevice, st) != cudaSuccess)
                return -1;
            done += step;
        }
        return 0;
    }
#else
    return -1;
#endif
}

static prt_status core_enqueue(const dcn_core *c, const prt_tensor_desc *in, const prt_tensor_desc *out,
                               const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    char msg[512];
    prt_msg m;
    prt__dcn_shape s;
    const prt_dims *kp[5];
    const void *mask, *bias;
    int32_t i, r[R_COUNT];
    int elt, is_f16;
    dcn_ws lay;
    m.buf = msg;
    m.cap = sizeof(msg);
    msg[0] = 0;
    if (c->nb_in < 3)
        return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT, DCN_NAME ": enqueue before configure");
    for (i = 0; i < c->nb_in; i++) {
        kp[i] = &in[i].dims;
        if (in[i].dtype != in[0].dtype || !inputs[i]) {
            snprintf(msg, sizeof(msg), "%s %s: input %d is missing or has type %s, expected %s", c->name, c->tag,
                     (int)i, prt_dtype_name(in[i].dtype), prt_dtype_name(in[0].dtype));
            return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT, msg);
        }
    }
    if (check_dims(c, kp, c->nb_in, "", &m) != PRT_OK) return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    for (i = 0; i < c->nb_in; i++)
        if (prt_dims_volume(kp[i]) < 0)
            return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, DCN_NAME ": enqueue with unknown extents");
    core_roles(c, c->nb_in, c->nb_in > 3 ? in[3].dims.nb : -1, r);
    if (shape_from_dims(c, &in[r[R_X]].dims, &in[r[R_WEIGHT]].dims, r[R_BIAS] >= 0 || c->o.bias, &s) != 0)
        return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, DCN_NAME ": enqueue with invalid x or weight dims");
    if (out[0].dims.nb != 4 || out[0].dims.d[0] != s.n || out[0].dims.d[1] != s.cout ||
        out[0].dims.d[2] != s.hout || out[0].dims.d[3] != s.wout || out[0].dtype != in[0].dtype ||
        !outputs[0]) {
        snprintf(msg, sizeof(msg), "%s %s: output must be %s [%lld, %lld, %lld, %lld]", c->name, c->tag,
                 prt_dtype_name(in[0].dtype), (long long)s.n, (long long)s.cout, (long long)s.hout,
                 (long long)s.wout);
        return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    }
    elt = in[0].dtype == PRT_DTYPE_F16 ? PRT_DCN_F16 : in[0].dtype == PRT_DTYPE_BF16 ? PRT_DCN_BF16 : PRT_DCN_F32;
    is_f16 = elt != PRT_DCN_F32;
    core_workspace_layout(c, kp, c->nb_in, in[0].dtype, (int)ex->device, &lay);
    mask = r[R_MASK] >= 0 ? inputs[r[R_MASK]] : NULL;
    bias = r[R_BIAS] >= 0 ? inputs[r[R_BIAS]] : NULL;
    if ((!mask || c->o.bias) && !ws && s.n * s.cout * s.hout * s.wout > 0)
        return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT, DCN_NAME ": enqueue needs a workspace, got NULL");
    if (!mask && s.n * s.cout * s.hout * s.wout > 0) {
        mask = (char *)ws + lay.ones;
        if (fill_ones(ex, (char *)ws + lay.ones, s.n * c->p.deformable_group * s.kh * s.kw * s.hout * s.wout,
                      elt) != 0)
            return exec_fail(ex, PRT_STATUS_CUDA_ERROR, DCN_NAME ": could not queue the mask of ones");
    }
    if (c->o.bias)
        bias = elt == PRT_DCN_BF16 ? (const void *)c->bias_b
               : is_f16            ? (const void *)c->bias_h
                                   : (const void *)c->o.bias;
    if (ex->device == PRT_DEVICE_CPU) {
        int use_par = ex->struct_size >= offsetof(prt_exec, parallel_for) + sizeof(ex->parallel_for) &&
                      ex->parallel_for != NULL;
        if (prt__deform_conv_cpu(&c->p, &s, elt, inputs[r[R_X]], inputs[r[R_OFFSET]], mask,
                                 inputs[r[R_WEIGHT]], bias, outputs[0], ws, use_par ? par_adapter : NULL, ex, msg,
                                 sizeof(msg)) != 0)
            return exec_fail(ex, PRT_STATUS_PLUGIN_ERROR, msg);
        return PRT_OK;
    }
    if (ex->device == PRT_DEVICE_CUDA) {
#ifdef PLUGRT_HAVE_CUDA
        if (!c->blas)
            return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT,
                             DCN_NAME ": CUDA enqueue on a plugin not attached to a CUDA context (no cuBLAS handle)");
        if (c->o.bias) { /* B of the field to the device, on the stream */
            if (cudaMemcpyAsync((char *)ws + lay.bias, bias, (size_t)c->o.nb_bias * (is_f16 ? 2 : 4),
                                cudaMemcpyHostToDevice, (cudaStream_t)ex->cuda_stream) != cudaSuccess)
                return exec_fail(ex, PRT_STATUS_CUDA_ERROR, DCN_NAME ": could not queue the copy of B to the GPU");
            bias = (char *)ws + lay.bias;
        }
        if (prt__deform_conv_cuda_tactic(&c->p, &s, elt, c->tactic, inputs[r[R_X]], inputs[r[R_OFFSET]], mask,
                                         inputs[r[R_WEIGHT]], bias, outputs[0], ws, ex->cuda_stream, c->blas, msg,
                                         sizeof(msg)) != 0)
            return exec_fail(ex, PRT_STATUS_CUDA_ERROR, msg);
        return PRT_OK;
#else
        return exec_fail(ex, PRT_STATUS_NO_DEVICE, DCN_NAME ": this build has no CUDA support");
#endif
    }
    return exec_fail(ex, PRT_STATUS_UNSUPPORTED, DCN_NAME ": unknown device");
}

/* Tactics: the CUDA kernels for the profile's shapes (none on the CPU,
 * whose kernel set is the CPU's own capability, not a choice to time). */
static int32_t core_tactics(const dcn_core *c, const prt_dyn_tensor_desc *in, int32_t nb_in, prt_device device,
                            int32_t *tactics, int32_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    prt__dcn_shape s[3];
    int32_t r[R_COUNT], k;
    if (device != PRT_DEVICE_CUDA || check_nb(c, nb_in, 1, NULL) != PRT_OK) return 0;
    core_roles(c, nb_in, nb_in > 3 ? in[3].desc.dims.nb : -1, r);
    for (k = 0; k < 3; k++) {
        const prt_dims *x = k == 0 ? &in[r[R_X]].min : k == 1 ? &in[r[R_X]].opt : &in[r[R_X]].max;
        const prt_dims *w = k == 0 ? &in[r[R_WEIGHT]].min : k == 1 ? &in[r[R_WEIGHT]].opt : &in[r[R_WEIGHT]].max;
        if (shape_from_dims(c, x, w, 0, &s[k]) != 0) return 0;
    }
    return prt__deform_conv_cuda_tactics(&c->p, &s[0], &s[1], &s[2], in[0].desc.dtype != PRT_DTYPE_F32, tactics, cap);
#else
    (void)c; (void)in; (void)nb_in; (void)device; (void)tactics; (void)cap;
    return 0;
#endif
}

static const char *core_tactic_name(int32_t tactic)
{
#ifdef PLUGRT_HAVE_CUDA
    return prt__deform_conv_cuda_tactic_name(tactic);
#else
    (void)tactic;
    return NULL;
#endif
}

static prt_status core_set_tactic(dcn_core *c, int32_t tactic, prt_msg *err)
{
    if (tactic < 0 || tactic >= PRT_DCN_TACTIC_COUNT) {
        prt_msg_set(err, "%s %s: tactic %d is not one of its kernels (1 im2col, 2..14 fused tiles)", c->name, c->tag,
                    (int)tactic);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    c->tactic = tactic;
    return PRT_OK;
}

#ifdef PLUGRT_HAVE_CUDA
static prt_status blas_create(void *user, prt_device device, void **out, prt_msg *err)
{
    char msg[256];
    (void)user;
    (void)device;
    if (prt__deform_conv_cuda_blas_create(out, msg, sizeof(msg)) != 0) {
        prt_msg_set(err, "%s", msg);
        return PRT_STATUS_CUDA_ERROR;
    }
    return PRT_OK;
}

static void blas_destroy(void *user, void *res)
{
    (void)user;
    prt__deform_conv_cuda_blas_destroy(res);
}
#endif

static prt_status core_attach(dcn_core *c, prt_plugin_context *ctx, prt_msg *err)
{
    if (!ctx) {
        prt_msg_set(err, DCN_NAME " %s: attach_to_context needs a context, got NULL", c->tag);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->ctx) {
        prt_msg_set(err, DCN_NAME " %s: already attached to a context", c->tag);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (ctx->device == PRT_DEVICE_CUDA) {
#ifdef PLUGRT_HAVE_CUDA
        void *h = NULL;
        prt_status st = ctx->acquire(ctx, "cublas", blas_create, blas_destroy, NULL, &h, err);
        if (st != PRT_OK) return st;
        c->blas = h;
#else
        prt_msg_set(err, DCN_NAME " %s: this build has no CUDA support", c->tag);
        return PRT_STATUS_NO_DEVICE;
#endif
    }
    c->ctx = ctx;
    return PRT_OK;
}

static void core_detach(dcn_core *c)
{
    if (c->ctx && c->blas) c->ctx->release(c->ctx, "cublas");
    c->ctx = NULL;
    c->blas = NULL;
}

/* ------------------------------------------------------------------------ */
/* Version 1: blob style                                                    */
/* ------------------------------------------------------------------------ */

typedef struct dcn_v1 {
    prt_blob_plugin base;
    dcn_core core;
} dcn_v1;

static uint32_t crc32_le(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    size_t i;
    int b;
    for (i = 0; i < n; i++) {
        crc ^= p[i];
        for (b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static const prt_blob_plugin_ops dcn_v1_ops;

/* Fills a zeroed core; o: ONNX DeformConv's extras, or NULL (end pads equal
 * the begin pads). Copies B of the field, also as f16 and bf16. */
static prt_status core_init(dcn_core *c, const prt__dcn_params *p, const prt__dcn_onnx *o, const char *tag,
                            prt_msg *err)
{
    int64_t i;
    c->p = *p;
    c->name = o ? "DeformConv" : DCN_NAME;
    c->tag = tag;
    c->onnx = o != NULL;
    if (o) c->o = *o;
    else c->o.pad_end[0] = p->padding[0], c->o.pad_end[1] = p->padding[1];
    c->o.bias = NULL;
    if (o && o->bias && o->nb_bias > 0) {
        float *b = (float *)prt_plugin_malloc((size_t)o->nb_bias * sizeof(float));
        c->bias_h = (uint16_t *)prt_plugin_malloc((size_t)o->nb_bias * sizeof(uint16_t));
        c->bias_b = (uint16_t *)prt_plugin_malloc((size_t)o->nb_bias * sizeof(uint16_t));
        if (!b || !c->bias_h || !c->bias_b) {
            prt_plugin_free(b);
            prt_plugin_free(c->bias_h);
            prt_plugin_free(c->bias_b);
            c->bias_h = NULL;
            c->bias_b = NULL;
            prt_msg_set(err, "%s %s: out of memory", c->name, tag);
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < o->nb_bias; i++) {
            b[i] = o->bias[i];
            c->bias_h[i] = prt_f32_to_f16(b[i]);
            c->bias_b[i] = prt_f32_to_bf16(b[i]);
        }
        c->o.bias = b;
    }
    return PRT_OK;
}

static void core_free(dcn_core *c)
{
    prt_plugin_free((void *)c->o.bias);
    prt_plugin_free(c->bias_h);
    prt_plugin_free(c->bias_b);
}

static prt_status v1_new(const prt__dcn_params *p, prt_blob_plugin **out, prt_msg *err)
{
    dcn_v1 *o = (dcn_v1 *)prt_plugin_calloc(1, sizeof(*o));
    if (!o) {
        prt_msg_set(err, DCN_NAME " v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &dcn_v1_ops;
    core_init(&o->core, p, NULL, "v1", err); /* no B field: cannot fail */
    *out = &o->base;
    return PRT_OK;
}

#define V1(pl) ((dcn_v1 *)(pl))
#define V1C(pl) ((const dcn_v1 *)(pl))

static int32_t v1_nb_outputs(const prt_blob_plugin *p) { (void)p; return 1; }

static prt_status v1_output_types(const prt_blob_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                  int32_t nb_out, prt_msg *err)
{
    return core_output_types(&V1C(p)->core, in, nb_in, out, nb_out, err);
}

static prt_status v1_output_dims(prt_blob_plugin *p, int32_t index, const prt_dims_expr *in, int32_t nb_in,
                                 prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    if (index != 0) {
        prt_msg_set(err, DCN_NAME " v1: has one output, asked for output %d", (int)index);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return core_output_shapes(&V1(p)->core, in, nb_in, out, 1, eb, err);
}

static int v1_supports(prt_blob_plugin *p, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    if (pos < 0 || pos >= nb_in + nb_out) return 0;
    return core_supports(&V1(p)->core, pos, &io[0], &io[pos], nb_in, nb_out);
}

static prt_status v1_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    return core_configure(&V1(p)->core, in, nb_in, out, nb_out, err);
}

static size_t v1_workspace(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out, int32_t nb_out)
{
    const prt_dims *d[5];
    int32_t i;
    (void)out;
    (void)nb_out;
    if (nb_in < 4 || nb_in > 5) return 0;
    for (i = 0; i < nb_in; i++) d[i] = &in[i].dims;
    return core_workspace(&V1C(p)->core, d, nb_in, in[0].dtype, -1);
}

static size_t v1_workspace_dev(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                               const prt_tensor_desc *out, int32_t nb_out, prt_device device)
{
    const prt_dims *d[5];
    int32_t i;
    (void)out;
    (void)nb_out;
    if (nb_in < 4 || nb_in > 5) return 0;
    for (i = 0; i < nb_in; i++) d[i] = &in[i].dims;
    return core_workspace(&V1C(p)->core, d, nb_in, in[0].dtype, (int)device);
}

static prt_status v1_enqueue(prt_blob_plugin *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    return core_enqueue(&V1(p)->core, in, out, inputs, outputs, ws, ex);
}

static size_t v1_ser_size(const prt_blob_plugin *p) { (void)p; return DCN_BLOB_SIZE; }

static void v1_write(const prt__dcn_params *q, prt_writer *w)
{
    int i;
    prt_write_u32(w, DCN_BLOB_MAGIC);
    prt_write_u32(w, DCN_BLOB_VERSION);
    for (i = 0; i < 2; i++) prt_write_i64(w, q->stride[i]);
    for (i = 0; i < 2; i++) prt_write_i64(w, q->padding[i]);
    for (i = 0; i < 2; i++) prt_write_i64(w, q->dilation[i]);
    prt_write_i64(w, q->group);
    prt_write_i64(w, q->deformable_group);
    prt_write_u32(w, 0);
}

static prt_status v1_serialize(const prt_blob_plugin *p, void *buf, size_t cap)
{
    prt_writer w = prt_writer_init(buf, cap);
    if (!buf || cap < DCN_BLOB_SIZE) return PRT_STATUS_INVALID_ARGUMENT;
    v1_write(&V1C(p)->core.p, &w);
    prt_write_u32(&w, crc32_le((const uint8_t *)buf, w.len));
    return (w.failed || w.len != DCN_BLOB_SIZE) ? PRT_STATUS_INTERNAL : PRT_OK;
}

static prt_status v1_clone(const prt_blob_plugin *p, prt_blob_plugin **out, prt_msg *err)
{
    prt_blob_plugin *o = NULL;
    prt_status st = v1_new(&V1C(p)->core.p, &o, err);
    if (st != PRT_OK) return st;
    V1(o)->core.nb_in = V1C(p)->core.nb_in;
    V1(o)->core.tactic = V1C(p)->core.tactic;
    *out = o;
    return PRT_OK;
}

static void v1_destroy(prt_blob_plugin *p)
{
    if (!p) return;
    core_detach(&V1(p)->core);
    prt_plugin_free(p);
}

static prt_status v1_attach(prt_blob_plugin *p, prt_plugin_context *ctx, prt_msg *err)
{
    return core_attach(&V1(p)->core, ctx, err);
}

static void v1_detach(prt_blob_plugin *p) { core_detach(&V1(p)->core); }

static int32_t v1_tactics(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                          const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *tactics,
                          int32_t cap)
{
    (void)out;
    (void)nb_out;
    return core_tactics(&V1(p)->core, in, nb_in, device, tactics, cap);
}

static const char *v1_tactic_name(const prt_blob_plugin *p, int32_t tactic)
{
    (void)p;
    return core_tactic_name(tactic);
}

static prt_status v1_set_tactic(prt_blob_plugin *p, int32_t tactic, prt_msg *err)
{
    return core_set_tactic(&V1(p)->core, tactic, err);
}

static const prt_blob_plugin_ops dcn_v1_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION, .get_nb_outputs = v1_nb_outputs,
    .get_output_data_types = v1_output_types, .get_output_dims = v1_output_dims,
    .supports_format_combination = v1_supports, .configure_plugin = v1_configure,
    .get_workspace_size = v1_workspace, .enqueue = v1_enqueue, .get_serialization_size = v1_ser_size,
    .serialize = v1_serialize, .clone = v1_clone, .destroy = v1_destroy, .attach_to_context = v1_attach,
    .detach_from_context = v1_detach,
    .get_workspace_size_v2 = v1_workspace_dev,
    .get_valid_tactics = v1_tactics, .get_tactic_name = v1_tactic_name, .set_tactic = v1_set_tactic,
};

static prt_status v1_create(const prt_plugin_creator *cr, const prt_fields *fc, prt_blob_plugin **out,
                            prt_msg *err)
{
    prt__dcn_params p;
    prt_status st;
    (void)cr;
    if ((st = params_from_fields(fc, "v1", &p, err)) != PRT_OK) return st;
    return v1_new(&p, out, err);
}

static prt_status v1_deserialize(const prt_plugin_creator *cr, const void *blob, size_t len,
                                 prt_blob_plugin **out, prt_msg *err)
{
    prt_reader r = prt_reader_init(blob, len);
    prt__dcn_params p;
    uint32_t magic, ver, reserved, crc, want;
    prt_status st;
    int i;
    (void)cr;
    if (!blob || len != DCN_BLOB_SIZE) {
        prt_msg_set(err, DCN_NAME " v1: blob must be %u bytes, got %zu", DCN_BLOB_SIZE, blob ? len : (size_t)0);
        return len < DCN_BLOB_SIZE ? PRT_STATUS_TRUNCATED : PRT_STATUS_BAD_FORMAT;
    }
    magic = prt_read_u32(&r);
    ver = prt_read_u32(&r);
    for (i = 0; i < 2; i++) p.stride[i] = prt_read_i64(&r);
    for (i = 0; i < 2; i++) p.padding[i] = prt_read_i64(&r);
    for (i = 0; i < 2; i++) p.dilation[i] = prt_read_i64(&r);
    p.group = prt_read_i64(&r);
    p.deformable_group = prt_read_i64(&r);
    reserved = prt_read_u32(&r);
    want = crc32_le((const uint8_t *)blob, r.pos);
    crc = prt_read_u32(&r);
    if (r.failed || prt_reader_left(&r) != 0) {
        prt_msg_set(err, DCN_NAME " v1: blob could not be read");
        return PRT_STATUS_BAD_FORMAT;
    }
    if (magic != DCN_BLOB_MAGIC) {
        prt_msg_set(err, DCN_NAME " v1: blob magic must be 0x%08x (\"DCN1\"), got 0x%08x", DCN_BLOB_MAGIC, magic);
        return PRT_STATUS_BAD_FORMAT;
    }
    if (ver != DCN_BLOB_VERSION) {
        prt_msg_set(err, DCN_NAME " v1: blob version must be %u, got %u", DCN_BLOB_VERSION, ver);
        return PRT_STATUS_VERSION_MISMATCH;
    }
    if (reserved != 0) {
        prt_msg_set(err, DCN_NAME " v1: blob reserved word must be 0, got 0x%08x", reserved);
        return PRT_STATUS_BAD_FORMAT;
    }
    if (crc != want) {
        prt_msg_set(err, DCN_NAME " v1: blob checksum mismatch (stored 0x%08x, computed 0x%08x)", crc, want);
        return PRT_STATUS_BAD_FORMAT;
    }
    if ((st = params_check(&p, "v1", err)) != PRT_OK) return PRT_STATUS_BAD_FORMAT;
    return v1_new(&p, out, err);
}

/* ------------------------------------------------------------------------ */
/* float64 reference (both versions)                                        */
/* ------------------------------------------------------------------------ */

/* prt__deform_conv_cpu_ref_f64 over inputs x, offset, mask, weight and the
 * optional bias, with the shapes checked as configure checks them. */
static prt_status dcn_reference(const prt_plugin_creator *cr, const prt_fields *fc, prt_reference_io *io,
                                prt_msg *err)
{
    prt__dcn_params p;
    prt__dcn_shape s;
    const prt_dims *x, *o, *w;
    prt_status st;
    int64_t vol;
    int32_t i;
    (void)cr;
    if ((st = params_from_fields(fc, "reference", &p, err)) != PRT_OK) return st;
    if (io->nb_inputs < 4 || io->nb_inputs > 5 || io->nb_outputs != 1) {
        prt_msg_set(err, DCN_NAME " reference: needs x, offset, mask, weight (bias optional) and one output, got "
                    "%d inputs and %d outputs", (int)io->nb_inputs, (int)io->nb_outputs);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (i = 0; i < 4; i++) {
        if (!io->inputs[i] || io->input_dims[i].nb != 4) {
            prt_msg_set(err, DCN_NAME " reference: input %s must be present and 4-D", dcn_role_names[0][i]);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    x = &io->input_dims[0];
    o = &io->input_dims[1];
    w = &io->input_dims[3];
    memset(&s, 0, sizeof s);
    s.n = x->d[0];
    s.cin = x->d[1];
    s.h = x->d[2];
    s.w = x->d[3];
    s.cout = w->d[0];
    s.kh = w->d[2];
    s.kw = w->d[3];
    s.hout = prt__dcn_out_extent(s.h, p.padding[0], p.dilation[0], s.kh, p.stride[0]);
    s.wout = prt__dcn_out_extent(s.w, p.padding[1], p.dilation[1], s.kw, p.stride[1]);
    s.has_bias = io->nb_inputs == 5 && io->inputs[4];
    if (s.hout < 1 || s.wout < 1 || o->d[2] != s.hout || o->d[3] != s.wout ||
        o->d[1] != 2 * p.deformable_group * s.kh * s.kw || s.cin % p.group || s.cin % p.deformable_group ||
        w->d[1] * p.group != s.cin || s.cout % p.group) {
        prt_msg_set(err, DCN_NAME " reference: the shapes do not fit the fields");
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    io->output_dims[0].nb = 4;
    io->output_dims[0].reserved_ = 0;
    io->output_dims[0].d[0] = s.n;
    io->output_dims[0].d[1] = s.cout;
    io->output_dims[0].d[2] = s.hout;
    io->output_dims[0].d[3] = s.wout;
    vol = prt_dims_volume(&io->output_dims[0]);
    io->outputs[0] = io->alloc(io, sizeof(double) * (size_t)(vol ? vol : 1));
    if (!io->outputs[0]) return PRT_STATUS_OUT_OF_MEMORY;
    prt__deform_conv_cpu_ref_f64(&p, &s, io->inputs[0], io->inputs[1], io->inputs[2], io->inputs[3],
                                 s.has_bias ? io->inputs[4] : NULL, io->outputs[0]);
    return PRT_OK;
}

#define DCN_REFERENCE_DOC "float64: prt__deform_conv_cpu_ref_f64 (plugins/deform_conv/deform_conv_cpu.c)"

const prt_plugin_creator prt__deform_conv_creator_v1 = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = DCN_NAME, .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_BLOB, .nb_fields = 5, .fields = dcn_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_blob = v1_create, .deserialize_blob = v1_deserialize,
    .doc = "deformable convolution v2 (modulated), blob style",
    .reference = dcn_reference, .reference_doc = DCN_REFERENCE_DOC,
};

/* ------------------------------------------------------------------------ */
/* Version 2: field style                                                   */
/* ------------------------------------------------------------------------ */

/* Also the plugin object of ONNX's DeformConv (version "19", core.onnx set;
 * its creator is in deform_conv_onnx.c). */
typedef struct dcn_v2 {
    prt_field_plugin base;
    dcn_core core;
    prt_field ser[7];
    int64_t pads[4]; /* ONNX: [top, left, bottom, right] for the saved fields */
} dcn_v2;

#define V2(pl) ((dcn_v2 *)(pl))
#define V2C(pl) ((const dcn_v2 *)(pl))

static const prt_field_plugin_ops dcn_v2_ops;

static prt_status v2_new(const prt__dcn_params *p, const prt__dcn_onnx *on, prt_field_plugin **out,
                         prt_msg *err)
{
    dcn_v2 *o = (dcn_v2 *)prt_plugin_calloc(1, sizeof(*o));
    prt_status st;
    if (!o) {
        prt_msg_set(err, "%s: out of memory", on ? "DeformConv v19" : DCN_NAME " v2");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &dcn_v2_ops;
    if ((st = core_init(&o->core, p, on, on ? "v19" : "v2", err)) != PRT_OK) {
        prt_plugin_free(o);
        return st;
    }
    *out = &o->base;
    return PRT_OK;
}

prt_status prt__deform_conv_onnx_new(const prt__dcn_params *p, const prt__dcn_onnx *o, prt_field_plugin **out,
                                     prt_msg *err)
{
    return v2_new(p, o, out, err);
}

static const char *v2_name(const prt_field_plugin *p) { return V2C(p)->core.name; }
static const char *v2_version(const prt_field_plugin *p) { return V2C(p)->core.onnx ? "19" : "2"; }
static const char *v2_namespace(const prt_field_plugin *p) { (void)p; return ""; }

static int32_t v2_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status v2_output_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                  int32_t nb_out, prt_msg *err)
{
    return core_output_types(&V2C(p)->core, in, nb_in, out, nb_out, err);
}

static prt_status v2_output_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in,
                                   prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    return core_output_shapes(&V2(p)->core, in, nb_in, out, nb_out, eb, err);
}

static int v2_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    if (pos < 0 || pos >= nb_in + nb_out) return 0;
    return core_supports(&V2(p)->core, pos, &io[0].desc, &io[pos].desc, nb_in, nb_out);
}

static prt_status v2_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    return core_configure(&V2(p)->core, in, nb_in, out, nb_out, err);
}

/* The larger of the workspaces at the profile's min and max shapes, for
 * `dev`'s path (dev < 0: either path). */
static size_t v2_workspace_at(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in, int dev)
{
    const prt_dims *dmax[5], *dmin[5];
    size_t a, b;
    int32_t i;
    if (nb_in < 3 || nb_in > 5) return 0;
    for (i = 0; i < nb_in; i++) dmax[i] = &in[i].max, dmin[i] = &in[i].min;
    a = core_workspace(&V2C(p)->core, dmax, nb_in, in[0].desc.dtype, dev);
    b = core_workspace(&V2C(p)->core, dmin, nb_in, in[0].desc.dtype, dev);
    return a > b ? a : b;
}

static size_t v2_workspace(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    (void)out;
    (void)nb_out;
    return v2_workspace_at(p, in, nb_in, -1);
}

static size_t v2_workspace_dev(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device)
{
    (void)out;
    (void)nb_out;
    return v2_workspace_at(p, in, nb_in, (int)device);
}

static prt_status v2_on_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                     const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    dcn_core *c = &V2(p)->core;
    const prt_dims *kp[5];
    int32_t i;
    prt_status st = check_nb(c, nb_in, nb_out, err);
    (void)out;
    if (st != PRT_OK) return st;
    for (i = 0; i < nb_in; i++) kp[i] = &in[i].dims;
    if ((st = check_dims(c, kp, nb_in, "", err)) != PRT_OK) return st;
    c->nb_in = nb_in;
    return PRT_OK;
}

static prt_status v2_enqueue(prt_field_plugin *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    return core_enqueue(&V2(p)->core, in, out, inputs, outputs, ws, ex);
}

static prt_status v2_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    prt_field_plugin *o = NULL;
    const dcn_core *c = &V2C(p)->core;
    prt_status st = v2_new(&c->p, c->onnx ? &c->o : NULL, &o, err);
    if (st != PRT_OK) return st;
    V2(o)->core.nb_in = c->nb_in;
    V2(o)->core.tactic = c->tactic;
    *out = o;
    return PRT_OK;
}

static int32_t v2_tactics(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                          const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *tactics,
                          int32_t cap)
{
    (void)out;
    (void)nb_out;
    return core_tactics(&V2(p)->core, in, nb_in, device, tactics, cap);
}

static const char *v2_tactic_name(const prt_field_plugin *p, int32_t tactic)
{
    (void)p;
    return core_tactic_name(tactic);
}

static prt_status v2_set_tactic(prt_field_plugin *p, int32_t tactic, prt_msg *err)
{
    return core_set_tactic(&V2(p)->core, tactic, err);
}

static prt_status v2_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    prt_field_plugin *o = NULL;
    prt_status st = v2_clone(p, &o, err);
    if (st != PRT_OK) return st;
    if ((st = core_attach(&V2(o)->core, ctx, err)) != PRT_OK) {
        o->ops->destroy(o);
        return st;
    }
    *out = o;
    return PRT_OK;
}

static void ser_set(prt_field *f, const char *name, const void *data, prt_field_type type, int64_t count)
{
    f->name = name;
    f->data = data;
    f->type = type;
    f->reserved_ = 0;
    f->count = count;
}

/* ONNX DeformConv: saved under its attribute names, B as "input:3". */
static void v19_fields(dcn_v2 *o, prt_fields *out)
{
    const dcn_core *c = &o->core;
    int32_t n = 0;
    o->pads[0] = c->p.padding[0], o->pads[1] = c->p.padding[1];
    o->pads[2] = c->o.pad_end[0], o->pads[3] = c->o.pad_end[1];
    ser_set(&o->ser[n++], "dilations", c->p.dilation, PRT_FIELD_INT64, 2);
    ser_set(&o->ser[n++], "group", &c->p.group, PRT_FIELD_INT64, 1);
    ser_set(&o->ser[n++], "offset_group", &c->p.deformable_group, PRT_FIELD_INT64, 1);
    ser_set(&o->ser[n++], "pads", o->pads, PRT_FIELD_INT64, 4);
    ser_set(&o->ser[n++], "strides", c->p.stride, PRT_FIELD_INT64, 2);
    if (c->o.kernel_shape[0] > 0) ser_set(&o->ser[n++], "kernel_shape", c->o.kernel_shape, PRT_FIELD_INT64, 2);
    if (c->o.bias) ser_set(&o->ser[n++], "input:3", c->o.bias, PRT_FIELD_FLOAT32, c->o.nb_bias);
    out->fields = o->ser;
    out->nb = n;
    out->reserved_ = 0;
}

static prt_status v2_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    dcn_v2 *o = V2(p);
    static const char *const names[5] = {"stride", "padding", "dilation", "group", "deformable_group"};
    const int64_t *data[5];
    static const int64_t counts[5] = {2, 2, 2, 1, 1};
    int i;
    (void)err;
    if (o->core.onnx) {
        v19_fields(o, out);
        return PRT_OK;
    }
    data[0] = o->core.p.stride;
    data[1] = o->core.p.padding;
    data[2] = o->core.p.dilation;
    data[3] = &o->core.p.group;
    data[4] = &o->core.p.deformable_group;
    for (i = 0; i < 5; i++) ser_set(&o->ser[i], names[i], data[i], PRT_FIELD_INT64, counts[i]);
    out->fields = o->ser;
    out->nb = 5;
    out->reserved_ = 0;
    return PRT_OK;
}

static void v2_destroy(prt_field_plugin *p)
{
    if (!p) return;
    core_detach(&V2(p)->core);
    core_free(&V2(p)->core);
    prt_plugin_free(p);
}

static const prt_plugin_core_ops dcn_v2_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION, .get_name = v2_name,
    .get_version = v2_version, .get_namespace = v2_namespace,
};
static const prt_plugin_build_ops dcn_v2_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION, .get_nb_outputs = v2_nb_outputs,
    .get_output_data_types = v2_output_types, .get_output_shapes = v2_output_shapes,
    .supports_format_combination = v2_supports, .configure = v2_configure, .get_workspace_size = v2_workspace,
    .get_workspace_size_v2 = v2_workspace_dev,
    .get_valid_tactics_v2 = v2_tactics, .get_tactic_name = v2_tactic_name,
};
static const prt_plugin_runtime_ops dcn_v2_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION, .set_tactic = v2_set_tactic,
    .on_shape_change = v2_on_shape_change, .enqueue = v2_enqueue, .attach_to_context = v2_attach,
    .get_fields_to_serialize = v2_fields,
};
static const prt_field_plugin_ops dcn_v2_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION, .core = &dcn_v2_core,
    .build = &dcn_v2_build, .runtime = &dcn_v2_runtime, .clone = v2_clone, .destroy = v2_destroy,
};

static prt_status v2_create(const prt_plugin_creator *cr, const prt_fields *fc, prt_phase phase,
                            prt_field_plugin **out, prt_msg *err)
{
    prt__dcn_params p;
    prt_status st;
    (void)cr;
    (void)phase;
    if ((st = params_from_fields(fc, "v2", &p, err)) != PRT_OK) return st;
    return v2_new(&p, NULL, out, err);
}

const prt_plugin_creator prt__deform_conv_creator_v2 = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = DCN_NAME, .version = "2",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .nb_fields = 5, .fields = dcn_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = v2_create,
    .doc = "deformable convolution v2 (modulated), field style",
    .reference = dcn_reference, .reference_doc = DCN_REFERENCE_DOC,
};

PRT_REGISTER_CREATOR(prt__deform_conv_creator_v1)
PRT_REGISTER_CREATOR(prt__deform_conv_creator_v2)
