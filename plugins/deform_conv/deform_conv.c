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
/* The core shared by both versions                                         */
/* ------------------------------------------------------------------------ */

typedef struct dcn_core {
    prt__dcn_params p;
    const char *tag;            /* "v1" or "v2", for messages */
    int32_t nb_in;              /* 4 or 5 once configured; 0 before */
    prt_plugin_context *ctx;    /* attached context, or NULL */
    void *blas;                 /* cuBLAS handle acquired from ctx */
} dcn_core;

static const char *const dcn_input_names[5] = {"x", "offset", "mask", "weight", "bias"};

static prt_status check_nb(const dcn_core *c, int32_t nb_in, int32_t nb_out, prt_msg *err)
{
    if (nb_in != 4 && nb_in != 5) {
        prt_msg_set(err, DCN_NAME " %s: needs 4 inputs (x, offset, mask, weight) or 5 (with bias), got %d",
                    c->tag, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (nb_out != 1) {
        prt_msg_set(err, DCN_NAME " %s: has 1 output, got %d", c->tag, (int)nb_out);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return PRT_OK;
}

#define KNOWN(v) ((v) >= 0)

/* Checks every relation between input extents that are known (>= 0);
 * `what` says which dims these are ("", "min ", "max "). */
static prt_status check_dims(const dcn_core *c, const prt_dims *const *d, int32_t nb_in, const char *what,
                             prt_msg *err)
{
    const prt__dcn_params *p = &c->p;
    const char *tag = c->tag;
    int32_t i;
    int64_t cin, cout, kh, kw, hout = -1, wout = -1, K = -1;
    for (i = 0; i < nb_in; i++) {
        const int32_t want = i == 4 ? 1 : 4;
        if (d[i]->nb != want) {
            prt_msg_set(err, DCN_NAME " %s: input %d (%s) must be %d-D, got %d-D", tag, (int)i,
                        dcn_input_names[i], (int)want, (int)d[i]->nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    cin = d[0]->d[1];
    cout = d[3]->d[0];
    kh = d[3]->d[2];
    kw = d[3]->d[3];
    if ((KNOWN(kh) && kh < 1) || (KNOWN(kw) && kw < 1)) {
        prt_msg_set(err, DCN_NAME " %s: weight kernel must be at least 1x1, got %lldx%lld (%sdims)", tag,
                    (long long)kh, (long long)kw, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && cin % p->group != 0) {
        prt_msg_set(err, DCN_NAME " %s: x channels (%lld) must be divisible by group (%lld) (%sdims)", tag,
                    (long long)cin, (long long)p->group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && cin % p->deformable_group != 0) {
        prt_msg_set(err,
                    DCN_NAME " %s: x channels (%lld) must be divisible by deformable_group (%lld) (%sdims)",
                    tag, (long long)cin, (long long)p->deformable_group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cout) && cout % p->group != 0) {
        prt_msg_set(err, DCN_NAME " %s: weight output channels (%lld) must be divisible by group (%lld) (%sdims)",
                    tag, (long long)cout, (long long)p->group, what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(cin) && KNOWN(d[3]->d[1]) && d[3]->d[1] != cin / p->group) {
        prt_msg_set(err,
                    DCN_NAME " %s: weight dim 1 must be x channels / group = %lld / %lld = %lld, got %lld (%sdims)",
                    tag, (long long)cin, (long long)p->group, (long long)(cin / p->group),
                    (long long)d[3]->d[1], what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (KNOWN(kh) && KNOWN(kw)) {
        K = kh * kw;
        if (KNOWN(d[1]->d[1]) && d[1]->d[1] != 2 * p->deformable_group * K) {
            prt_msg_set(err,
                        DCN_NAME " %s: offset must have 2*deformable_group*kh*kw = 2*%lld*%lld*%lld = %lld channels, got %lld (%sdims)",
                        tag, (long long)p->deformable_group, (long long)kh, (long long)kw,
                        (long long)(2 * p->deformable_group * K), (long long)d[1]->d[1], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (KNOWN(d[2]->d[1]) && d[2]->d[1] != p->deformable_group * K) {
            prt_msg_set(err,
                        DCN_NAME " %s: mask must have deformable_group*kh*kw = %lld*%lld*%lld = %lld channels, got %lld (%sdims)",
                        tag, (long long)p->deformable_group, (long long)kh, (long long)kw,
                        (long long)(p->deformable_group * K), (long long)d[2]->d[1], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    for (i = 1; i <= 2; i++)
        if (KNOWN(d[0]->d[0]) && KNOWN(d[i]->d[0]) && d[i]->d[0] != d[0]->d[0]) {
            prt_msg_set(err, DCN_NAME " %s: %s batch (%lld) must equal x batch (%lld) (%sdims)", tag,
                        dcn_input_names[i], (long long)d[i]->d[0], (long long)d[0]->d[0], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    if (KNOWN(d[0]->d[2]) && KNOWN(kh)) {
        hout = prt__dcn_out_extent(d[0]->d[2], p->padding[0], p->dilation[0], kh, p->stride[0]);
        if (hout < 1) {
            prt_msg_set(err,
                        DCN_NAME " %s: x height %lld with padding %lld is smaller than the dilated kernel height %lld (%sdims)",
                        tag, (long long)d[0]->d[2], (long long)p->padding[0],
                        (long long)(p->dilation[0] * (kh - 1) + 1), what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    if (KNOWN(d[0]->d[3]) && KNOWN(kw)) {
        wout = prt__dcn_out_extent(d[0]->d[3], p->padding[1], p->dilation[1], kw, p->stride[1]);
        if (wout < 1) {
            prt_msg_set(err,
                        DCN_NAME " %s: x width %lld with padding %lld is smaller than the dilated kernel width %lld (%sdims)",
                        tag, (long long)d[0]->d[3], (long long)p->padding[1],
                        (long long)(p->dilation[1] * (kw - 1) + 1), what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    for (i = 1; i <= 2; i++) {
        if ((KNOWN(hout) && KNOWN(d[i]->d[2]) && d[i]->d[2] != hout) ||
            (KNOWN(wout) && KNOWN(d[i]->d[3]) && d[i]->d[3] != wout)) {
            prt_msg_set(err,
                        DCN_NAME " %s: %s spatial size must equal the output size %lldx%lld computed from x and the fields, got %lldx%lld (%sdims)",
                        tag, dcn_input_names[i], (long long)hout, (long long)wout, (long long)d[i]->d[2],
                        (long long)d[i]->d[3], what);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    if (nb_in == 5 && KNOWN(cout) && KNOWN(d[4]->d[0]) && d[4]->d[0] != cout) {
        prt_msg_set(err, DCN_NAME " %s: bias length must equal weight output channels (%lld), got %lld (%sdims)",
                    tag, (long long)cout, (long long)d[4]->d[0], what);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status core_output_types(const dcn_core *c, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                    int32_t nb_out, prt_msg *err)
{
    int32_t i;
    prt_status st = check_nb(c, nb_in, nb_out, err);
    if (st != PRT_OK) return st;
    if (in[0] != PRT_DTYPE_F32 && in[0] != PRT_DTYPE_F16) {
        prt_msg_set(err, DCN_NAME " %s: x must be f32 or f16, got %s", c->tag, prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    for (i = 1; i < nb_in; i++)
        if (in[i] != in[0]) {
            prt_msg_set(err, DCN_NAME " %s: all inputs must share x's type %s, but %s is %s", c->tag,
                        prt_dtype_name(in[0]), dcn_input_names[i], prt_dtype_name(in[i]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
    out[0] = in[0];
    return PRT_OK;
}

static const prt_expr *out_extent_expr(prt_expr_builder *eb, const prt_expr *in, const prt_expr *k,
                                       int64_t pad, int64_t dil, int64_t stride)
{
    /* floor((in + 2*pad - (dil*(k-1)+1)) / stride) + 1 */
    const prt_expr *one = eb->constant(eb, 1);
    const prt_expr *km1 = eb->operation(eb, PRT_EXPR_SUB, k, one);
    const prt_expr *ext = eb->operation(eb, PRT_EXPR_SUM, eb->operation(eb, PRT_EXPR_PROD, eb->constant(eb, dil), km1), one);
    const prt_expr *num = eb->operation(eb, PRT_EXPR_SUB, eb->operation(eb, PRT_EXPR_SUM, in, eb->constant(eb, 2 * pad)), ext);
    const prt_expr *q = eb->operation(eb, PRT_EXPR_FLOOR_DIV, num, eb->constant(eb, stride));
    return eb->operation(eb, PRT_EXPR_SUM, q, one);
}

static prt_status core_output_shapes(const dcn_core *c, const prt_dims_expr *in, int32_t nb_in,
                                     prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    prt_dims known[5];
    const prt_dims *kp[5];
    int32_t i, j;
    prt_dims_expr o;
    prt_status st = check_nb(c, nb_in, nb_out, err);
    if (st != PRT_OK) return st;
    for (i = 0; i < nb_in; i++) {
        memset(&known[i], 0, sizeof(known[i]));
        if (in[i].nb < 0 || in[i].nb > PRT_MAX_DIMS) {
            prt_msg_set(err, DCN_NAME " %s: input %d (%s) has an invalid rank %d", c->tag, (int)i,
                        dcn_input_names[i], (int)in[i].nb);
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
    memset(&o, 0, sizeof(o));
    o.nb = 4;
    o.d[0] = in[0].d[0];
    o.d[1] = in[3].d[0];
    o.d[2] = out_extent_expr(eb, in[0].d[2], in[3].d[2], c->p.padding[0], c->p.dilation[0], c->p.stride[0]);
    o.d[3] = out_extent_expr(eb, in[0].d[3], in[3].d[3], c->p.padding[1], c->p.dilation[1], c->p.stride[1]);
    if (!o.d[0] || !o.d[1] || !o.d[2] || !o.d[3]) {
        prt_msg_set(err, DCN_NAME " %s: the shape expression builder failed (out of memory?)", c->tag);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    out[0] = o;
    return PRT_OK;
}

static int core_supports(int32_t pos, const prt_tensor_desc *d0, const prt_tensor_desc *dp, int32_t nb_in,
                         int32_t nb_out)
{
    if ((nb_in != 4 && nb_in != 5) || nb_out != 1 || pos < 0 || pos >= nb_in + nb_out) return 0;
    if (dp->format != PRT_FORMAT_LINEAR) return 0;
    if (dp->dtype != PRT_DTYPE_F32 && dp->dtype != PRT_DTYPE_F16) return 0;
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
            prt_msg_set(err, DCN_NAME " %s: %s must be linear (NCHW), got %s", c->tag, dcn_input_names[i],
                        prt_format_name(in[i].desc.format));
            return PRT_STATUS_UNSUPPORTED;
        }
    }
    if ((st = core_output_types(c, types, nb_in, &ot, 1, err)) != PRT_OK) return st;
    if (out[0].desc.dtype != ot || out[0].desc.format != PRT_FORMAT_LINEAR) {
        prt_msg_set(err, DCN_NAME " %s: output must be linear %s, got %s %s", c->tag, prt_dtype_name(ot),
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
    s->hout = prt__dcn_out_extent(s->h, c->p.padding[0], c->p.dilation[0], s->kh, c->p.stride[0]);
    s->wout = prt__dcn_out_extent(s->w, c->p.padding[1], c->p.dilation[1], s->kw, c->p.stride[1]);
    s->has_bias = has_bias;
    return 0;
}

static size_t core_workspace_one(const dcn_core *c, const prt_dims *x, const prt_dims *w, prt_dtype t)
{
    prt__dcn_shape s;
    size_t a, b = 0;
    if (shape_from_dims(c, x, w, 0, &s) != 0) return 0;
    a = prt__deform_conv_cpu_workspace(&c->p, &s, t == PRT_DTYPE_F16);
#ifdef PLUGRT_HAVE_CUDA
    b = prt__deform_conv_cuda_workspace(&c->p, &s, t == PRT_DTYPE_F16);
#endif
    return a > b ? a : b;
}

/* The workspace of one device's path only: a CPU engine reserves no CUDA
 * column buffer. */
static size_t core_workspace_dev(const dcn_core *c, const prt_dims *x, const prt_dims *w, prt_dtype t,
                                 prt_device device)
{
    prt__dcn_shape s;
    if (shape_from_dims(c, x, w, 0, &s) != 0) return 0;
    if (device == PRT_DEVICE_CPU) return prt__deform_conv_cpu_workspace(&c->p, &s, t == PRT_DTYPE_F16);
#ifdef PLUGRT_HAVE_CUDA
    return prt__deform_conv_cuda_workspace(&c->p, &s, t == PRT_DTYPE_F16);
#else
    return 0;
#endif
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

static prt_status core_enqueue(const dcn_core *c, const prt_tensor_desc *in, const prt_tensor_desc *out,
                               const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    char msg[512];
    prt_msg m;
    prt__dcn_shape s;
    const prt_dims *kp[5];
    int32_t i;
    int is_f16;
    m.buf = msg;
    m.cap = sizeof(msg);
    msg[0] = 0;
    if (c->nb_in != 4 && c->nb_in != 5)
        return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT, DCN_NAME ": enqueue before configure");
    for (i = 0; i < c->nb_in; i++) {
        kp[i] = &in[i].dims;
        if (in[i].dtype != in[0].dtype || !inputs[i]) {
            snprintf(msg, sizeof(msg), DCN_NAME " %s: input %s is missing or has type %s, expected %s", c->tag,
                     dcn_input_names[i], prt_dtype_name(in[i].dtype), prt_dtype_name(in[0].dtype));
            return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT, msg);
        }
    }
    if (check_dims(c, kp, c->nb_in, "", &m) != PRT_OK) return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    for (i = 0; i < c->nb_in; i++)
        if (prt_dims_volume(kp[i]) < 0)
            return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, DCN_NAME ": enqueue with unknown extents");
    if (shape_from_dims(c, &in[0].dims, &in[3].dims, c->nb_in == 5, &s) != 0)
        return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, DCN_NAME ": enqueue with invalid x or weight dims");
    if (out[0].dims.nb != 4 || out[0].dims.d[0] != s.n || out[0].dims.d[1] != s.cout ||
        out[0].dims.d[2] != s.hout || out[0].dims.d[3] != s.wout || out[0].dtype != in[0].dtype ||
        !outputs[0]) {
        snprintf(msg, sizeof(msg), DCN_NAME " %s: output must be %s [%lld, %lld, %lld, %lld]", c->tag,
                 prt_dtype_name(in[0].dtype), (long long)s.n, (long long)s.cout, (long long)s.hout,
                 (long long)s.wout);
        return exec_fail(ex, PRT_STATUS_SHAPE_MISMATCH, msg);
    }
    is_f16 = in[0].dtype == PRT_DTYPE_F16;
    if (ex->device == PRT_DEVICE_CPU) {
        int use_par = ex->struct_size >= offsetof(prt_exec, parallel_for) + sizeof(ex->parallel_for) &&
                      ex->parallel_for != NULL;
        if (prt__deform_conv_cpu(&c->p, &s, is_f16, inputs[0], inputs[1], inputs[2], inputs[3],
                                 c->nb_in == 5 ? inputs[4] : NULL, outputs[0], ws,
                                 use_par ? par_adapter : NULL, ex, msg, sizeof(msg)) != 0)
            return exec_fail(ex, PRT_STATUS_PLUGIN_ERROR, msg);
        return PRT_OK;
    }
    if (ex->device == PRT_DEVICE_CUDA) {
#ifdef PLUGRT_HAVE_CUDA
        if (!c->blas)
            return exec_fail(ex, PRT_STATUS_INVALID_ARGUMENT,
                             DCN_NAME ": CUDA enqueue on a plugin not attached to a CUDA context (no cuBLAS handle)");
        if (prt__deform_conv_cuda(&c->p, &s, is_f16, inputs[0], inputs[1], inputs[2], inputs[3],
                                  c->nb_in == 5 ? inputs[4] : NULL, outputs[0], ws, ex->cuda_stream, c->blas,
                                  msg, sizeof(msg)) != 0)
            return exec_fail(ex, PRT_STATUS_CUDA_ERROR, msg);
        return PRT_OK;
#else
        return exec_fail(ex, PRT_STATUS_NO_DEVICE, DCN_NAME ": this build has no CUDA support");
#endif
    }
    return exec_fail(ex, PRT_STATUS_UNSUPPORTED, DCN_NAME ": unknown device");
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

static prt_status v1_new(const prt__dcn_params *p, prt_blob_plugin **out, prt_msg *err)
{
    dcn_v1 *o = (dcn_v1 *)prt_plugin_calloc(1, sizeof(*o));
    if (!o) {
        prt_msg_set(err, DCN_NAME " v1: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &dcn_v1_ops;
    o->core.p = *p;
    o->core.tag = "v1";
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
    (void)p;
    if (pos < 0 || pos >= nb_in + nb_out) return 0;
    return core_supports(pos, &io[0], &io[pos], nb_in, nb_out);
}

static prt_status v1_configure(prt_blob_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    return core_configure(&V1(p)->core, in, nb_in, out, nb_out, err);
}

static size_t v1_workspace(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                           const prt_tensor_desc *out, int32_t nb_out)
{
    (void)out;
    (void)nb_out;
    if (nb_in < 4) return 0;
    return core_workspace_one(&V1C(p)->core, &in[0].dims, &in[3].dims, in[0].dtype);
}

static size_t v1_workspace_dev(const prt_blob_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                               const prt_tensor_desc *out, int32_t nb_out, prt_device device)
{
    (void)out;
    (void)nb_out;
    if (nb_in < 4) return 0;
    return core_workspace_dev(&V1C(p)->core, &in[0].dims, &in[3].dims, in[0].dtype, device);
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

static const prt_blob_plugin_ops dcn_v1_ops = {
    .struct_size = sizeof(prt_blob_plugin_ops), .abi_version = PRT_ABI_VERSION, .get_nb_outputs = v1_nb_outputs,
    .get_output_data_types = v1_output_types, .get_output_dims = v1_output_dims,
    .supports_format_combination = v1_supports, .configure_plugin = v1_configure,
    .get_workspace_size = v1_workspace, .enqueue = v1_enqueue, .get_serialization_size = v1_ser_size,
    .serialize = v1_serialize, .clone = v1_clone, .destroy = v1_destroy, .attach_to_context = v1_attach,
    .detach_from_context = v1_detach,
    .get_workspace_size_v2 = v1_workspace_dev,
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
            prt_msg_set(err, DCN_NAME " reference: input %s must be present and 4-D", dcn_input_names[i]);
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

typedef struct dcn_v2 {
    prt_field_plugin base;
    dcn_core core;
    prt_field ser[5];
} dcn_v2;

#define V2(pl) ((dcn_v2 *)(pl))
#define V2C(pl) ((const dcn_v2 *)(pl))

static const prt_field_plugin_ops dcn_v2_ops;

static prt_status v2_new(const prt__dcn_params *p, prt_field_plugin **out, prt_msg *err)
{
    dcn_v2 *o = (dcn_v2 *)prt_plugin_calloc(1, sizeof(*o));
    if (!o) {
        prt_msg_set(err, DCN_NAME " v2: out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &dcn_v2_ops;
    o->core.p = *p;
    o->core.tag = "v2";
    *out = &o->base;
    return PRT_OK;
}

static const char *v2_name(const prt_field_plugin *p) { (void)p; return DCN_NAME; }
static const char *v2_version(const prt_field_plugin *p) { (void)p; return "2"; }
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
    (void)p;
    if (pos < 0 || pos >= nb_in + nb_out) return 0;
    return core_supports(pos, &io[0].desc, &io[pos].desc, nb_in, nb_out);
}

static prt_status v2_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    return core_configure(&V2(p)->core, in, nb_in, out, nb_out, err);
}

static size_t v2_workspace(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                           const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    size_t a, b;
    (void)out;
    (void)nb_out;
    if (nb_in < 4) return 0;
    a = core_workspace_one(&V2C(p)->core, &in[0].max, &in[3].max, in[0].desc.dtype);
    b = core_workspace_one(&V2C(p)->core, &in[0].min, &in[3].min, in[0].desc.dtype);
    return a > b ? a : b;
}

static size_t v2_workspace_dev(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device)
{
    size_t a, b;
    (void)out;
    (void)nb_out;
    if (nb_in < 4) return 0;
    a = core_workspace_dev(&V2C(p)->core, &in[0].max, &in[3].max, in[0].desc.dtype, device);
    b = core_workspace_dev(&V2C(p)->core, &in[0].min, &in[3].min, in[0].desc.dtype, device);
    return a > b ? a : b;
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
    prt_status st = v2_new(&V2C(p)->core.p, &o, err);
    if (st != PRT_OK) return st;
    V2(o)->core.nb_in = V2C(p)->core.nb_in;
    *out = o;
    return PRT_OK;
}

static prt_status v2_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    prt_field_plugin *o = NULL;
    prt_status st = v2_clone(p, &o, err);
    if (st != PRT_OK) return st;
    if ((st = core_attach(&V2(o)->core, ctx, err)) != PRT_OK) {
        prt_plugin_free(o);
        return st;
    }
    *out = o;
    return PRT_OK;
}

static prt_status v2_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    dcn_v2 *o = V2(p);
    static const char *const names[5] = {"stride", "padding", "dilation", "group", "deformable_group"};
    const int64_t *data[5];
    static const int64_t counts[5] = {2, 2, 2, 1, 1};
    int i;
    (void)err;
    data[0] = o->core.p.stride;
    data[1] = o->core.p.padding;
    data[2] = o->core.p.dilation;
    data[3] = &o->core.p.group;
    data[4] = &o->core.p.deformable_group;
    for (i = 0; i < 5; i++) {
        o->ser[i].name = names[i];
        o->ser[i].data = data[i];
        o->ser[i].type = PRT_FIELD_INT64;
        o->ser[i].reserved_ = 0;
        o->ser[i].count = counts[i];
    }
    out->fields = o->ser;
    out->nb = 5;
    out->reserved_ = 0;
    return PRT_OK;
}

static void v2_destroy(prt_field_plugin *p)
{
    if (!p) return;
    core_detach(&V2(p)->core);
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
};
static const prt_plugin_runtime_ops dcn_v2_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
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
    return v2_new(&p, out, err);
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
