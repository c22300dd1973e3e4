/*
 * test_deform_conv.c - ModulatedDeformConv2d, versions 1 and 2, driven
 * directly through their creators and ops (no registry, no engine).
 *
 * References: a float64 plain-loop reference (prt__deform_conv_cpu_ref_f64),
 * an independent direct convolution written here (zero offsets, unit mask),
 * and the ONNX backend node tests converted by gen_onnx_data.py.
 * Every output buffer is poisoned with NaN before a run and every element
 * is compared.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/engine.h"
#include "plugrt/trace.h"
#include "plugrt/plugin.h"
#include "deform_conv.h"
#include "prt_test.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ------------------------------------------------------------------------ */
/* A constant-only expression builder                                       */
/* ------------------------------------------------------------------------ */

struct prt_expr {
    int64_t v;
    int ok;
};

typedef struct test_eb {
    prt_expr_builder eb;
    struct prt_expr nodes[512];
    int nb;
} test_eb;

static const prt_expr *teb_new(test_eb *t, int64_t v, int ok)
{
    if (t->nb >= 512) return NULL;
    t->nodes[t->nb].v = v;
    t->nodes[t->nb].ok = ok;
    return &t->nodes[t->nb++];
}

static const prt_expr *teb_constant(prt_expr_builder *eb, int64_t v) { return teb_new((test_eb *)eb, v, 1); }

static const prt_expr *teb_op(prt_expr_builder *eb, prt_expr_op op, const prt_expr *a, const prt_expr *b)
{
    int64_t r = 0;
    int ok;
    if (!a || !b) return NULL;
    ok = a->ok && b->ok;
    switch (op) {
    case PRT_EXPR_SUM: r = a->v + b->v; break;
    case PRT_EXPR_PROD: r = a->v * b->v; break;
    case PRT_EXPR_MAX: r = a->v > b->v ? a->v : b->v; break;
    case PRT_EXPR_MIN: r = a->v < b->v ? a->v : b->v; break;
    case PRT_EXPR_SUB: r = a->v - b->v; break;
    case PRT_EXPR_EQUAL: r = a->v == b->v; break;
    case PRT_EXPR_LESS: r = a->v < b->v; break;
    case PRT_EXPR_FLOOR_DIV:
        if (b->v == 0) { ok = 0; break; }
        r = a->v / b->v;
        if ((a->v % b->v != 0) && ((a->v < 0) != (b->v < 0))) r--;
        break;
    case PRT_EXPR_CEIL_DIV:
        if (b->v == 0) { ok = 0; break; }
        r = -((-a->v) / b->v);
        break;
    default: ok = 0;
    }
    return teb_new((test_eb *)eb, r, ok);
}

static int teb_get_constant(prt_expr_builder *eb, const prt_expr *e, int64_t *v)
{
    (void)eb;
    if (!e || !e->ok) return 0;
    *v = e->v;
    return 1;
}

static void teb_init(test_eb *t)
{
    memset(t, 0, sizeof(*t));
    t->eb.struct_size = sizeof(prt_expr_builder);
    t->eb.abi_version = PRT_ABI_VERSION;
    t->eb.constant = teb_constant;
    t->eb.operation = teb_op;
    t->eb.get_constant = teb_get_constant;
}

/* ------------------------------------------------------------------------ */
/* Execution: serial, or split into single-item chunks run back to front     */
/* ------------------------------------------------------------------------ */

static void pf_serial(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    (void)ex;
    (void)grain;
    if (n > 0) fn(arg, 0, n);
}

static void pf_chunked(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    int64_t b;
    (void)ex;
    if (grain < 1) grain = 1;
    /* uneven chunks, in reverse order: a different split than the serial one */
    for (b = n; b > 0;) {
        int64_t len = (b % 3 == 0 ? 2 : 1) * grain, s = b - len < 0 ? 0 : b - len;
        fn(arg, s, b);
        b = s;
    }
}

static char g_exec_err[512];
static void ex_set_error(prt_exec *ex, const char *msg)
{
    (void)ex;
    snprintf(g_exec_err, sizeof(g_exec_err), "%s", msg);
}

static void exec_init(prt_exec *ex, prt_device dev, int chunked)
{
    memset(ex, 0, sizeof(*ex));
    ex->struct_size = sizeof(*ex);
    ex->abi_version = PRT_ABI_VERSION;
    ex->device = dev;
    ex->nb_threads = chunked ? 3 : 1;
    ex->parallel_for = chunked ? pf_chunked : pf_serial;
    ex->set_error = ex_set_error;
}

/* A plugin context whose resources are kept with a reference count. */
typedef struct test_ctx {
    prt_plugin_context ctx;
    void *res;
    int refs, creates;
    prt_resource_destroy_fn destroy;
    void *user;
} test_ctx;

static prt_status tctx_acquire(prt_plugin_context *c, const char *key, prt_resource_create_fn create,
                               prt_resource_destroy_fn destroy, void *user, void **out, prt_msg *err)
{
    test_ctx *t = (test_ctx *)c;
    if (strcmp(key, "cublas") != 0) return PRT_STATUS_NOT_FOUND;
    if (t->refs == 0) {
        prt_status st = create(user, c->device, &t->res, err);
        if (st != PRT_OK) return st;
        t->destroy = destroy;
        t->user = user;
        t->creates++;
    }
    t->refs++;
    *out = t->res;
    return PRT_OK;
}

static void tctx_release(prt_plugin_context *c, const char *key)
{
    test_ctx *t = (test_ctx *)c;
    (void)key;
    if (t->refs > 0 && --t->refs == 0) {
        t->destroy(t->user, t->res);
        t->res = NULL;
    }
}

static void tctx_init(test_ctx *t, prt_device dev)
{
    memset(t, 0, sizeof(*t));
    t->ctx.struct_size = sizeof(prt_plugin_context);
    t->ctx.abi_version = PRT_ABI_VERSION;
    t->ctx.device = dev;
    t->ctx.acquire = tctx_acquire;
    t->ctx.release = tctx_release;
}

/* ------------------------------------------------------------------------ */
/* Cases and data                                                           */
/* ------------------------------------------------------------------------ */

typedef struct dcase {
    const char *name;
    int64_t n, cin, h, w, cout, kh, kw;
    int64_t stride[2], pad[2], dil[2], group, dg;
    int bias;
    double off_range;
} dcase;

static const dcase cases[] = {
    {"basic3x3_bias", 1, 4, 7, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    {"s22_p01_d12_nobias_b4", 4, 4, 9, 8, 4, 3, 3, {2, 2}, {0, 1}, {1, 2}, 1, 1, 0, 2.0},
    {"s21_p22_d22_k3x5", 1, 3, 10, 11, 5, 3, 5, {2, 1}, {2, 2}, {2, 2}, 1, 1, 1, 1.5},
    {"k1x1_group2", 2, 4, 6, 5, 6, 1, 1, {1, 1}, {0, 0}, {1, 1}, 2, 1, 1, 2.0},
    {"depthwise_dg2", 1, 6, 8, 7, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 6, 2, 0, 2.0},
    {"group2_dg4", 2, 8, 7, 7, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 4, 1, 2.0},
    {"far_offsets", 1, 3, 6, 6, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 7.0},
    {"batch4_dg2_s21", 4, 4, 9, 10, 8, 3, 3, {2, 1}, {1, 0}, {1, 1}, 1, 2, 1, 3.0},
    {"wide_channels", 1, 40, 9, 9, 24, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 2, 1, 2.0},
    /* sizes that reach the CPU path's blocking: several K chunks (Cg*K > 256) with a chunk edge inside
     * a tap, deformable-group edges inside chunks, row blocks of 32 + 16 and padded rows, many column
     * tiles with a partial last strip */
    {"chunks_tiles_m48_dg2", 1, 48, 40, 52, 48, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 2, 1, 2.0},
    {"chunks_group2_cg40_dg4", 2, 80, 13, 17, 36, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 4, 1, 2.5},
    /* more output channels than one 128-row panel, the last panel a single 16-row block */
    {"panels_m144", 1, 32, 6, 7, 144, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    /* groups of 16 and 32 channels (whole 16-channel blocks per group in the group-major x of the CPU
     * path), deformable groups spanning two groups and splitting one */
    {"group4_cg16_dg2", 1, 64, 9, 11, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4, 2, 1, 2.0},
    {"group2_cg32_dg4_b2", 2, 64, 8, 9, 40, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 4, 0, 2.5},
};
#define NB_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

typedef struct dset {
    dcase c;
    int64_t hout, wout;
    size_t nel[5], nout;
    double *in[5]; /* x, offset, mask, weight, bias (NULL without bias) */
} dset;

static uint64_t rng_state;
static double urand(double lo, double hi)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);
}

static double rnd_f16(double v) { return prt_f16_to_f32(prt_f32_to_f16((float)v)); }
static double rnd_bf16(double v) { return prt_bf16_to_f32(prt_f32_to_bf16((float)v)); }
static double rnd_f32(double v) { return (double)(float)v; }

/* Random inputs, rounded to fp16 when f16 is 1, to bfloat16 when it is 2,
 * else to fp32. */
static void dset_make(dset *d, const dcase *c, uint64_t seed, int f16, double wscale)
{
    int i;
    size_t k;
    double (*rnd)(double) = f16 == 2 ? rnd_bf16 : f16 ? rnd_f16 : rnd_f32;
    const int64_t K = c->kh * c->kw;
    memset(d, 0, sizeof(*d));
    d->c = *c;
    d->hout = prt__dcn_out_extent(c->h, c->pad[0], c->dil[0], c->kh, c->stride[0]);
    d->wout = prt__dcn_out_extent(c->w, c->pad[1], c->dil[1], c->kw, c->stride[1]);
    d->nel[0] = (size_t)(c->n * c->cin * c->h * c->w);
    d->nel[1] = (size_t)(c->n * 2 * c->dg * K * d->hout * d->wout);
    d->nel[2] = (size_t)(c->n * c->dg * K * d->hout * d->wout);
    d->nel[3] = (size_t)(c->cout * (c->cin / c->group) * K);
    d->nel[4] = c->bias ? (size_t)c->cout : 0;
    d->nout = (size_t)(c->n * c->cout * d->hout * d->wout);
    rng_state = seed;
    for (i = 0; i < 5; i++) {
        if (!d->nel[i]) continue;
        d->in[i] = (double *)malloc(d->nel[i] * sizeof(double));
        for (k = 0; k < d->nel[i]; k++) {
            double v;
            switch (i) {
            case 0: v = urand(-2, 2); break;
            case 1: v = urand(-c->off_range, c->off_range); break;
            case 2: v = urand(0, 1); break;
            case 3: v = urand(-1, 1) * wscale / sqrt((double)(c->cin / c->group * K)); break;
            default: v = urand(-1, 1); break;
            }
            d->in[i][k] = rnd(v);
        }
    }
}

static void dset_free(dset *d)
{
    int i;
    for (i = 0; i < 5; i++) free(d->in[i]);
}

static void dset_shape(const dset *d, prt__dcn_params *p, prt__dcn_shape *s)
{
    const dcase *c = &d->c;
    memcpy(p->stride, c->stride, sizeof(p->stride));
    memcpy(p->padding, c->pad, sizeof(p->padding));
    memcpy(p->dilation, c->dil, sizeof(p->dilation));
    p->group = c->group;
    p->deformable_group = c->dg;
    s->n = c->n; s->cin = c->cin; s->h = c->h; s->w = c->w; s->cout = c->cout;
    s->kh = c->kh; s->kw = c->kw; s->hout = d->hout; s->wout = d->wout; s->has_bias = c->bias;
}

static double *reference(const dset *d)
{
    prt__dcn_params p;
    prt__dcn_shape s;
    double *y = (double *)malloc(d->nout * sizeof(double));
    dset_shape(d, &p, &s);
    prt__deform_conv_cpu_ref_f64(&p, &s, d->in[0], d->in[1], d->in[2], d->in[3], d->in[4], y);
    return y;
}

/* Typed host copies of the inputs. */
static void *to_typed(const double *v, size_t n, prt_dtype t)
{
    size_t i;
    void *out = malloc(n ? n * prt_dtype_size(t) : 1);
    for (i = 0; i < n; i++) {
        if (t == PRT_DTYPE_F32) ((float *)out)[i] = (float)v[i];
        else if (t == PRT_DTYPE_BF16) ((uint16_t *)out)[i] = prt_f32_to_bf16((float)v[i]);
        else ((uint16_t *)out)[i] = prt_f32_to_f16((float)v[i]);
    }
    return out;
}

static double typed_get(const void *buf, size_t i, prt_dtype t)
{
    if (t == PRT_DTYPE_BF16) return (double)prt_bf16_to_f32(((const uint16_t *)buf)[i]);
    return t == PRT_DTYPE_F32 ? (double)((const float *)buf)[i] : (double)prt_f16_to_f32(((const uint16_t *)buf)[i]);
}

/* ------------------------------------------------------------------------ */
/* Driving a plugin                                                          */
/* ------------------------------------------------------------------------ */

typedef struct fields5 {
    prt_field f[5];
    int64_t stride[2], pad[2], dil[2], group, dg;
    prt_fields fc;
} fields5;

static void fields_make(fields5 *f, const dcase *c)
{
    memcpy(f->stride, c->stride, sizeof(f->stride));
    memcpy(f->pad, c->pad, sizeof(f->pad));
    memcpy(f->dil, c->dil, sizeof(f->dil));
    f->group = c->group;
    f->dg = c->dg;
    memset(f->f, 0, sizeof(f->f));
    f->f[0].name = "stride"; f->f[0].data = f->stride; f->f[0].count = 2;
    f->f[1].name = "padding"; f->f[1].data = f->pad; f->f[1].count = 2;
    f->f[2].name = "dilation"; f->f[2].data = f->dil; f->f[2].count = 2;
    f->f[3].name = "group"; f->f[3].data = &f->group; f->f[3].count = 1;
    f->f[4].name = "deformable_group"; f->f[4].data = &f->dg; f->f[4].count = 1;
    for (int i = 0; i < 5; i++) f->f[i].type = PRT_FIELD_INT64;
    f->fc.fields = f->f;
    f->fc.nb = 5;
    f->fc.reserved_ = 0;
}

/* Either style behind one small interface. */
typedef struct plug {
    prt_blob_plugin *b;
    prt_field_plugin *f;
} plug;

static char g_msg[1024];
static int32_t g_tactic; /* plug_run: the tactic the enqueuing object is told (0: none) */
/* plug_run, CUDA: the output starts this many bytes into its allocation, which has OUT_GUARD poisoned
 * bytes to spare after it; the bytes around the output must stay untouched. */
static size_t g_out_off;
#define OUT_GUARD 64

static prt_status plug_create(plug *pl, int version, const prt_fields *fc)
{
    prt_msg m = {g_msg, sizeof(g_msg)};
    g_msg[0] = 0;
    memset(pl, 0, sizeof(*pl));
    if (version == 1) return prt__deform_conv_creator_v1.create_blob(&prt__deform_conv_creator_v1, fc, &pl->b, &m);
    return prt__deform_conv_creator_v2.create_field(&prt__deform_conv_creator_v2, fc, PRT_PHASE_BUILD, &pl->f, &m);
}

static void plug_destroy(plug *pl)
{
    if (pl->b) pl->b->ops->destroy(pl->b);
    if (pl->f) pl->f->ops->destroy(pl->f);
    memset(pl, 0, sizeof(*pl));
}

static void dims4(prt_dims *d, int64_t a, int64_t b, int64_t c, int64_t e)
{
    memset(d, 0, sizeof(*d));
    d->nb = 4; d->d[0] = a; d->d[1] = b; d->d[2] = c; d->d[3] = e;
}

/* Input descriptors of a data set. */
static int32_t dset_descs(const dset *d, prt_dtype t, prt_tensor_desc *in)
{
    const dcase *c = &d->c;
    const int64_t K = c->kh * c->kw;
    int32_t i, nb = c->bias ? 5 : 4;
    memset(in, 0, 5 * sizeof(*in));
    dims4(&in[0].dims, c->n, c->cin, c->h, c->w);
    dims4(&in[1].dims, c->n, 2 * c->dg * K, d->hout, d->wout);
    dims4(&in[2].dims, c->n, c->dg * K, d->hout, d->wout);
    dims4(&in[3].dims, c->cout, c->cin / c->group, c->kh, c->kw);
    in[4].dims.nb = 1;
    in[4].dims.d[0] = c->cout;
    for (i = 0; i < 5; i++) {
        in[i].dtype = t;
        in[i].format = PRT_FORMAT_LINEAR;
    }
    return nb;
}

/* Output shape through the expression builder + configure. Returns the
 * status of the first failing call; g_msg holds its message. */
static prt_status plug_build(plug *pl, const prt_tensor_desc *in, int32_t nb_in, prt_tensor_desc *out,
                             size_t *ws)
{
    test_eb eb;
    prt_dims_expr ein[5], eout;
    prt_dyn_tensor_desc din[5], dout;
    prt_dtype tin[5], tout;
    prt_msg m = {g_msg, sizeof(g_msg)};
    prt_status st;
    int32_t i, j;
    g_msg[0] = 0;
    teb_init(&eb);
    for (i = 0; i < nb_in; i++) {
        tin[i] = in[i].dtype;
        memset(&ein[i], 0, sizeof(ein[i]));
        ein[i].nb = in[i].dims.nb;
        for (j = 0; j < in[i].dims.nb; j++)
            ein[i].d[j] = in[i].dims.d[j] >= 0 ? teb_constant(&eb.eb, in[i].dims.d[j]) : teb_new(&eb, 0, 0);
    }
    st = pl->b ? pl->b->ops->get_output_data_types(pl->b, tin, nb_in, &tout, 1, &m)
               : pl->f->ops->build->get_output_data_types(pl->f, tin, nb_in, &tout, 1, &m);
    if (st != PRT_OK) return st;
    st = pl->b ? pl->b->ops->get_output_dims(pl->b, 0, ein, nb_in, &eb.eb, &eout, &m)
               : pl->f->ops->build->get_output_shapes(pl->f, ein, nb_in, &eout, 1, &eb.eb, &m);
    if (st != PRT_OK) return st;
    memset(out, 0, sizeof(*out));
    out->dtype = tout;
    out->format = PRT_FORMAT_LINEAR;
    out->dims.nb = eout.nb;
    for (j = 0; j < eout.nb; j++)
        if (!teb_get_constant(&eb.eb, eout.d[j], &out->dims.d[j])) out->dims.d[j] = -1;
    for (i = 0; i < nb_in; i++) {
        din[i].desc = in[i];
        din[i].min = din[i].opt = din[i].max = in[i].dims;
    }
    dout.desc = *out;
    dout.min = dout.opt = dout.max = out->dims;
    /* format combination: every position must be accepted */
    for (i = 0; i <= nb_in; i++) {
        prt_tensor_desc io[6];
        prt_dyn_tensor_desc dio[6];
        int ok;
        for (j = 0; j < nb_in; j++) { io[j] = in[j]; dio[j] = din[j]; }
        io[nb_in] = *out;
        dio[nb_in] = dout;
        ok = pl->b ? pl->b->ops->supports_format_combination(pl->b, i, io, nb_in, 1)
                   : pl->f->ops->build->supports_format_combination(pl->f, i, dio, nb_in, 1);
        if (!ok) {
            snprintf(g_msg, sizeof(g_msg), "format combination refused at %d", (int)i);
            return PRT_STATUS_UNSUPPORTED;
        }
    }
    st = pl->b ? pl->b->ops->configure_plugin(pl->b, din, nb_in, &dout, 1, &m)
               : pl->f->ops->build->configure(pl->f, din, nb_in, &dout, 1, &m);
    if (st != PRT_OK) return st;
    *ws = pl->b ? pl->b->ops->get_workspace_size(pl->b, in, nb_in, out, 1)
                : pl->f->ops->build->get_workspace_size(pl->f, din, nb_in, &dout, 1);
    return PRT_OK;
}

enum { RUN_CPU_SERIAL = 0, RUN_CPU_CHUNKED = 1, RUN_CUDA = 2 };

/* Run a built plugin on host data: CPU directly, CUDA through device
 * copies. The output buffer is poisoned first. */
static prt_status plug_run(plug *pl, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                           size_t ws, void *const *host_in, void *host_out, int mode)
{
    prt_exec ex;
    test_ctx tc;
    prt_msg m = {g_msg, sizeof(g_msg)};
    prt_status st;
    prt_field_plugin *attached = NULL;
    const size_t out_bytes = (size_t)prt_dims_volume(&out->dims) * prt_dtype_size(out->dtype);
    void *wsp = NULL, *dout = NULL, *din[5] = {0};
    const void *inp[5];
    void *outp[1];
    int32_t i;
    memset(host_out, 0xff, out_bytes); /* NaN in f32 and f16 */
    exec_init(&ex, mode == RUN_CUDA ? PRT_DEVICE_CUDA : PRT_DEVICE_CPU, mode == RUN_CPU_CHUNKED);
    tctx_init(&tc, ex.device);
    g_exec_err[0] = 0;
    if (mode != RUN_CUDA) {
        wsp = malloc(ws ? ws : 1);
        for (i = 0; i < nb_in; i++) inp[i] = host_in[i];
        outp[0] = host_out;
    }
#ifdef PLUGRT_HAVE_CUDA
    else {
        if (cudaMalloc(&wsp, ws ? ws : 1) != cudaSuccess ||
            cudaMalloc(&dout, g_out_off + out_bytes + OUT_GUARD) != cudaSuccess)
            return PRT_STATUS_CUDA_ERROR;
        cudaMemset(dout, 0xff, g_out_off + out_bytes + OUT_GUARD);
        cudaDeviceSynchronize(); /* poisoned before the plugin's stream runs */
        for (i = 0; i < nb_in; i++) {
            size_t b = (size_t)prt_dims_volume(&in[i].dims) * prt_dtype_size(in[i].dtype);
            if (cudaMalloc(&din[i], b) != cudaSuccess) return PRT_STATUS_CUDA_ERROR;
            cudaMemcpy(din[i], host_in[i], b, cudaMemcpyHostToDevice);
            inp[i] = din[i];
        }
        outp[0] = (char *)dout + g_out_off;
    }
#else
    else return PRT_STATUS_NO_DEVICE;
#endif
    if (pl->b) {
        st = g_tactic ? pl->b->ops->set_tactic(pl->b, g_tactic, &m) : PRT_OK;
        if (st == PRT_OK) st = pl->b->ops->attach_to_context(pl->b, &tc.ctx, &m);
        if (st == PRT_OK) st = pl->b->ops->enqueue(pl->b, in, out, inp, outp, wsp, &ex);
        pl->b->ops->detach_from_context(pl->b);
    } else {
        st = pl->f->ops->runtime->attach_to_context(pl->f, &tc.ctx, &attached, &m);
        if (st == PRT_OK && g_tactic) st = attached->ops->runtime->set_tactic(attached, g_tactic, &m);
        if (st == PRT_OK) st = attached->ops->runtime->on_shape_change(attached, in, nb_in, out, 1, &m);
        if (st == PRT_OK) st = attached->ops->runtime->enqueue(attached, in, out, inp, outp, wsp, &ex);
        if (attached) attached->ops->destroy(attached);
    }
    if (st != PRT_OK && g_exec_err[0]) snprintf(g_msg, sizeof(g_msg), "%s", g_exec_err);
    if (mode != RUN_CUDA) {
        free(wsp);
    }
#ifdef PLUGRT_HAVE_CUDA
    else {
        unsigned char guard[OUT_GUARD];
        size_t k;
        int intact = 1;
        if (cudaDeviceSynchronize() != cudaSuccess && st == PRT_OK) st = PRT_STATUS_CUDA_ERROR;
        cudaMemcpy(host_out, (char *)dout + g_out_off, out_bytes, cudaMemcpyDeviceToHost);
        cudaMemcpy(guard, (char *)dout + g_out_off + out_bytes, OUT_GUARD, cudaMemcpyDeviceToHost);
        for (k = 0; k < OUT_GUARD; k++) intact &= guard[k] == 0xff;
        for (k = 0; k < g_out_off; k++) {
            unsigned char b = 0;
            cudaMemcpy(&b, (char *)dout + k, 1, cudaMemcpyDeviceToHost);
            intact &= b == 0xff;
        }
        CHECK_MSG(intact, "CUDA run wrote outside its output (%zu bytes at offset %zu)", out_bytes, g_out_off);
        cudaFree(wsp);
        cudaFree(dout);
        for (i = 0; i < nb_in; i++) cudaFree(din[i]);
    }
#endif
    CHECK_EQ_INT(tc.refs, 0); /* every acquire was released */
    return st;
}

/* K split in three (PRT_DCN_CUDA_SPLIT=3) where on, else as the tile chooses. */
static void split_k3(int on)
{
    if (on) CHECK(setenv("PRT_DCN_CUDA_SPLIT", "3", 1) == 0);
    else CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
}

/* Build and run one data set; returns a malloc'ed typed output. */
static void *run_dset(const dset *d, int version, prt_dtype t, int mode)
{
    fields5 f;
    plug pl;
    prt_tensor_desc in[5], out;
    size_t ws = 0;
    int32_t nb_in, i;
    void *hin[5];
    void *hout;
    fields_make(&f, &d->c);
    nb_in = dset_descs(d, t, in);
    CHECK_OK(plug_create(&pl, version, &f.fc));
    CHECK_MSG(plug_build(&pl, in, nb_in, &out, &ws) == PRT_OK, "%s: build: %s", d->c.name, g_msg);
    CHECK_EQ_INT(out.dims.nb, 4);
    CHECK_EQ_INT(out.dims.d[0], d->c.n);
    CHECK_EQ_INT(out.dims.d[1], d->c.cout);
    CHECK_EQ_INT(out.dims.d[2], d->hout);
    CHECK_EQ_INT(out.dims.d[3], d->wout);
    CHECK_EQ_INT(out.dtype, t);
    for (i = 0; i < nb_in; i++) hin[i] = to_typed(d->in[i], d->nel[i], t);
    hout = malloc(d->nout * prt_dtype_size(t));
    CHECK_MSG(plug_run(&pl, in, nb_in, &out, ws, hin, hout, mode) == PRT_OK, "%s: run: %s", d->c.name, g_msg);
    for (i = 0; i < nb_in; i++) free(hin[i]);
    plug_destroy(&pl);
    return hout;
}

/* Normwise relative error max|y - r| / max|r| (every element must be finite). */
static double rel_err(const void *y, prt_dtype t, const double *r, size_t n, double *max_abs_err, double *max_ref)
{
    double e = 0, m = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double v = typed_get(y, i, t);
        if (!isfinite(v)) return INFINITY;
        if (fabs(v - r[i]) > e) e = fabs(v - r[i]);
        if (fabs(r[i]) > m) m = fabs(r[i]);
    }
    if (max_abs_err) *max_abs_err = e;
    if (max_ref) *max_ref = m;
    return m > 0 ? e / m : e;
}

/* ------------------------------------------------------------------------ */
/* CPU numerics                                                              */
/* ------------------------------------------------------------------------ */

/* Both versions of every case against the f64 reference (printed once per
 * device: CPU serial, CUDA). */
static void check_f32_cases(int mode)
{
    const char *dev = mode == RUN_CUDA ? "CUDA " : "";
    int ci, version;
    for (ci = 0; ci < NB_CASES; ci++) {
        dset d;
        double *ref, err;
        dset_make(&d, &cases[ci], 1000 + (uint64_t)ci, 0, 1.0);
        ref = reference(&d);
        for (version = 1; version <= 2; version++) {
            void *y = run_dset(&d, version, PRT_DTYPE_F32, mode);
            err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
            CHECK_MSG(err <= (mode == RUN_CUDA ? PRT_DCN_CUDA_F32_TOL : 1e-5), "%s v%d: %sf32 relative error %.3g",
                      cases[ci].name, version, dev, err);
            if (version == 2 && mode != RUN_CPU_CHUNKED)
                printf("  %-22s %s f32: relative error %.2e vs f64\n", cases[ci].name,
                       mode == RUN_CUDA ? "CUDA" : "CPU", err);
            free(y);
        }
        free(ref);
        dset_free(&d);
    }
}

/* Every case run as (version va, mode ma) and as (vb, mb) gives the same
 * bytes; a difference is reported as "<case><tag>: <what>". */
static void check_same_runs(uint64_t seed, int va, int ma, int vb, int mb, const char *tag, const char *what)
{
    int ci;
    for (ci = 0; ci < NB_CASES; ci++) {
        dset d;
        void *a, *b;
        dset_make(&d, &cases[ci], seed + (uint64_t)ci, 0, 1.0);
        a = run_dset(&d, va, PRT_DTYPE_F32, ma);
        b = run_dset(&d, vb, PRT_DTYPE_F32, mb);
        CHECK_MSG(memcmp(a, b, d.nout * 4) == 0, "%s%s: %s", cases[ci].name, tag, what);
        free(a);
        free(b);
        dset_free(&d);
    }
}

TEST(dcn_cpu_f32_vs_f64_reference) { check_f32_cases(RUN_CPU_SERIAL); }
TEST(dcn_cpu_f32_vs_f64_reference_chunked) { check_f32_cases(RUN_CPU_CHUNKED); }

TEST(dcn_cpu_thread_split_independent)
{
    check_same_runs(77, 2, RUN_CPU_SERIAL, 2, RUN_CPU_CHUNKED, "", "serial and chunked runs differ");
}

/* The CPU path picks its micro-kernels from the CPU; PRT_DCN_CPU_ISA caps
 * the choice, so that the AVX2 and portable kernels are checked on any x86
 * machine too (each case runs in its own process). */
static void check_isa(const char *isa)
{
    char tag[64];
    CHECK(setenv("PRT_DCN_CPU_ISA", isa, 1) == 0);
    check_f32_cases(RUN_CPU_CHUNKED);
    snprintf(tag, sizeof tag, " (%s kernels)", isa);
    check_same_runs(4100, 2, RUN_CPU_SERIAL, 2, RUN_CPU_CHUNKED, tag, "serial and chunked runs differ");
}

/* Weights above the CPU path's streaming-store threshold (4 MiB packed), 18 K chunks, two row
 * panels: against the f64 reference, and serial == chunked bitwise. */
TEST(dcn_cpu_large_weights)
{
    static const dcase big = {"large_weights", 1, 512, 4, 5, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0};
    dset d;
    double *ref, err;
    void *a, *b;
    dset_make(&d, &big, 4242, 0, 1.0);
    ref = reference(&d);
    a = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CPU_SERIAL);
    b = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CPU_CHUNKED);
    err = rel_err(a, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
    CHECK_MSG(err <= 1e-5, "large_weights: f32 relative error %.3g > 1e-5", err);
    CHECK_MSG(memcmp(a, b, d.nout * 4) == 0, "large_weights: serial and chunked runs differ");
    printf("  large_weights          CPU f32: relative error %.2e vs f64\n", err);
    free(a);
    free(b);
    free(ref);
    dset_free(&d);
}

/* A wide image (sampling positions up to ~600, 300 000): the bilinear fractions must come from the
 * offsets, not from an fp32 position (whose ulp there is 3e-5 and 0.03); every kernel set. */
/* The wide-image cases through version 2 on `mode` against the f64
 * reference; `tag` follows the case name in a failure ("CUDA", "avx2
 * kernels"); the errors are printed when `print` is set. */
static void check_wide_images(int mode, const char *tag, int print)
{
    static const dcase wide[] = {
        {"wide_image_w600", 1, 4, 3, 600, 4, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
        {"wide_image_w300000", 1, 2, 1, 300000, 2, 1, 3, {1, 1}, {0, 1}, {1, 1}, 1, 1, 1, 2.0},
    };
    int ci;
    for (ci = 0; ci < 2; ci++) {
        dset d;
        double *ref, err, tol;
        void *y;
        dset_make(&d, &wide[ci], 6100 + (uint64_t)ci, 0, 1.0);
        ref = reference(&d);
        y = run_dset(&d, 2, PRT_DTYPE_F32, mode);
        err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
        /* a TF32 build's GEMM error (PRT_DCN_CUDA_F32_TOL) hides the fractions' on CUDA; the CPU runs still
         * check them */
        tol = mode == RUN_CUDA && PRT_DCN_CUDA_F32_TOL > 1e-5 ? PRT_DCN_CUDA_F32_TOL : 2e-6;
        CHECK_MSG(err <= tol, "%s (%s): f32 relative error %.3g > %.0e", wide[ci].name, tag, err, tol);
        if (print)
            printf("  %-22s %s f32: relative error %.2e vs f64\n", wide[ci].name, mode == RUN_CUDA ? "CUDA" : "CPU",
                   err);
        free(y);
        free(ref);
        dset_free(&d);
    }
}

TEST(dcn_cpu_wide_image_fractions)
{
    static const char *isas[] = {"avx512", "avx2", "c"};
    int ii;
    for (ii = 0; ii < 3; ii++) {
        char tag[64];
        CHECK(setenv("PRT_DCN_CPU_ISA", isas[ii], 1) == 0);
        snprintf(tag, sizeof tag, "%s kernels", isas[ii]);
        check_wide_images(RUN_CPU_CHUNKED, tag, ii == 0);
    }
}

TEST(dcn_cpu_avx2_kernels) { check_isa("avx2"); }
TEST(dcn_cpu_portable_kernels) { check_isa("c"); }

/* The bfloat16 bound: its 8-bit significand makes the final rounding alone
 * up to 2^-9 of the output (2^-8 of its binade's base), and the CUDA paths
 * also round every sample to bfloat16 before the GEMM (as fp16 does with
 * 11 bits); 2% of the largest output covers both on these cases, which
 * reach magnitude 4-9. fp16's bound is 1e-2 absolute on outputs of ~4. */
#define BF16_TOL 2e-2

/* 16-bit type t (f16 or bf16) through `mode` against float64 on the same
 * 16-bit inputs and against the fp32 path (compare_f32_mode) on them; the
 * weights are scaled so that outputs reach magnitude ~4. `what` names the
 * path in messages; inputs are seeded from seed0. */
static void check_16bit_cases(const dcase *cs, int nb, prt_dtype t, int mode, int compare_f32_mode, const char *what,
                              uint64_t seed0)
{
    const char *tn = t == PRT_DTYPE_BF16 ? "bf16" : "f16";
    int ci;
    for (ci = 0; ci < nb; ci++) {
        dset d;
        double *ref, abs_err, max_ref, abs32 = 0, bound;
        void *y, *y32;
        size_t i;
        dset_make(&d, &cs[ci], seed0 + (uint64_t)ci, t == PRT_DTYPE_BF16 ? 2 : 1, 6.0);
        ref = reference(&d);
        y = run_dset(&d, 2, t, mode);
        rel_err(y, t, ref, d.nout, &abs_err, &max_ref);
        bound = t == PRT_DTYPE_BF16 ? BF16_TOL * max_ref : 1e-2;
        CHECK_MSG(abs_err <= bound, "%s (%s): %s max abs error %.3g > %.3g (max |y| %.3g)", cs[ci].name, what, tn,
                  abs_err, bound, max_ref);
        CHECK_MSG(max_ref >= 2.0, "%s: %s case outputs too small to be meaningful (%.3g)", cs[ci].name, tn, max_ref);
        y32 = run_dset(&d, 2, PRT_DTYPE_F32, compare_f32_mode);
        for (i = 0; i < d.nout; i++) {
            double e = fabs(typed_get(y, i, t) - ((float *)y32)[i]);
            if (!(e <= abs32)) abs32 = isfinite(e) ? e : INFINITY;
        }
        CHECK_MSG(abs32 <= bound, "%s (%s): %s vs f32 max abs difference %.3g > %.3g", cs[ci].name, what, tn, abs32,
                  bound);
        printf("  %-22s %s %s: max |y| %5.2f, max abs err %.2e vs f64, %.2e vs f32\n", cs[ci].name, what, tn, max_ref,
               abs_err, abs32);
        free(y);
        free(y32);
        free(ref);
        dset_free(&d);
    }
}

static void check_f16_cases(int mode, int compare_f32_mode)
{
    check_16bit_cases(cases, NB_CASES, PRT_DTYPE_F16, mode, compare_f32_mode, mode == RUN_CUDA ? "CUDA" : "CPU", 5000);
}

/* bfloat16 on the case list cs (seeds of their own). */
static void check_bf16_cases(const dcase *cs, int nb, int mode, int compare_f32_mode, const char *what)
{
    check_16bit_cases(cs, nb, PRT_DTYPE_BF16, mode, compare_f32_mode, what, 8000);
}

TEST(dcn_cpu_f16_vs_f32) { check_f16_cases(RUN_CPU_CHUNKED, RUN_CPU_SERIAL); }

TEST(dcn_cpu_bf16_vs_f32) { check_bf16_cases(cases, NB_CASES, RUN_CPU_CHUNKED, RUN_CPU_SERIAL, "CPU"); }

/* Independent direct convolution for zero offsets and unit mask. */
TEST(dcn_cpu_zero_offsets_is_plain_conv)
{
    int ci, version;
    for (ci = 0; ci < NB_CASES; ci++) {
        const dcase *c = &cases[ci];
        dset d;
        double *conv;
        size_t k;
        int64_t n, oc, oy, ox, ic, i, j;
        const int64_t cg = c->cin / c->group, coutg = c->cout / c->group;
        dset_make(&d, c, 300 + (uint64_t)ci, 0, 1.0);
        for (k = 0; k < d.nel[1]; k++) d.in[1][k] = 0.0;
        for (k = 0; k < d.nel[2]; k++) d.in[2][k] = 1.0;
        conv = (double *)calloc(d.nout, sizeof(double));
        for (n = 0; n < c->n; n++)
            for (oc = 0; oc < c->cout; oc++)
                for (oy = 0; oy < d.hout; oy++)
                    for (ox = 0; ox < d.wout; ox++) {
                        double acc = c->bias ? d.in[4][oc] : 0.0;
                        for (ic = 0; ic < cg; ic++)
                            for (i = 0; i < c->kh; i++)
                                for (j = 0; j < c->kw; j++) {
                                    int64_t iy = oy * c->stride[0] - c->pad[0] + i * c->dil[0];
                                    int64_t ix = ox * c->stride[1] - c->pad[1] + j * c->dil[1];
                                    if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
                                    acc += d.in[3][((oc * cg + ic) * c->kh + i) * c->kw + j] *
                                           d.in[0][((n * c->cin + (oc / coutg) * cg + ic) * c->h + iy) * c->w + ix];
                                }
                        conv[((n * c->cout + oc) * d.hout + oy) * d.wout + ox] = acc;
                    }
        for (version = 1; version <= 2; version++) {
            void *y = run_dset(&d, version, PRT_DTYPE_F32, RUN_CPU_CHUNKED);
            double err = rel_err(y, PRT_DTYPE_F32, conv, d.nout, NULL, NULL);
            CHECK_MSG(err <= 1e-5, "%s v%d: differs from a plain convolution by %.3g", c->name, version, err);
            free(y);
        }
        {
            double *ref = reference(&d);
            double err = 0;
            for (k = 0; k < d.nout; k++) err = fmax(err, fabs(ref[k] - conv[k]));
            CHECK_MSG(err <= 1e-12, "%s: f64 reference differs from a plain convolution by %.3g", c->name, err);
            free(ref);
        }
        free(conv);
        dset_free(&d);
    }
}

TEST(dcn_v1_v2_identical)
{
    check_same_runs(900, 1, RUN_CPU_CHUNKED, 2, RUN_CPU_CHUNKED, "", "v1 and v2 outputs differ");
}

/* Non-finite offsets sample 0 (no out-of-range index, no crash); the output
 * stays finite and matches the reference. */
static void check_nonfinite_offsets(int mode)
{
    dset d;
    double *ref, err;
    size_t k;
    void *y;
    dset_make(&d, &cases[0], 4242, 0, 1.0);
    for (k = 0; k < d.nel[1]; k += 7) d.in[1][k] = (k / 7) % 3 == 0 ? NAN : (k / 7) % 3 == 1 ? INFINITY : -INFINITY;
    ref = reference(&d);
    y = run_dset(&d, 2, PRT_DTYPE_F32, mode);
    err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
    CHECK_MSG(err <= (mode == RUN_CUDA ? PRT_DCN_CUDA_F32_TOL : 1e-5),
              "non-finite offsets: relative error %.3g (inf: a non-finite output)", err);
    free(y);
    free(ref);
    dset_free(&d);
}

TEST(dcn_cpu_nonfinite_offsets) { check_nonfinite_offsets(RUN_CPU_CHUNKED); }

TEST(dcn_cuda_nonfinite_offsets)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_nonfinite_offsets(RUN_CUDA);
}

/* ------------------------------------------------------------------------ */
/* Serialization                                                            */
/* ------------------------------------------------------------------------ */

static const dcase *ser_case(void) { return &cases[2]; } /* asymmetric everything */

TEST(dcn_v1_blob_round_trip)
{
    dset d;
    fields5 f;
    plug pl, p2;
    prt_tensor_desc in[5], out;
    size_t ws = 0, len, i;
    int32_t nb;
    uint8_t *blob;
    void *hin[5], *y1, *y2;
    prt_msg m = {g_msg, sizeof(g_msg)};
    dset_make(&d, ser_case(), 42, 0, 1.0);
    fields_make(&f, &d.c);
    nb = dset_descs(&d, PRT_DTYPE_F32, in);
    for (i = 0; i < (size_t)nb; i++) hin[i] = to_typed(d.in[i], d.nel[i], PRT_DTYPE_F32);
    y1 = malloc(d.nout * 4);
    y2 = malloc(d.nout * 4);
    CHECK_OK(plug_create(&pl, 1, &f.fc));
    CHECK_OK(plug_build(&pl, in, nb, &out, &ws));
    CHECK_OK(plug_run(&pl, in, nb, &out, ws, hin, y1, RUN_CPU_SERIAL));
    len = pl.b->ops->get_serialization_size(pl.b);
    CHECK_EQ_INT(len, 80);
    blob = (uint8_t *)malloc(len);
    CHECK_OK(pl.b->ops->serialize(pl.b, blob, len));
    CHECK(pl.b->ops->serialize(pl.b, blob, len - 1) != PRT_OK);
    memset(&p2, 0, sizeof(p2));
    CHECK_OK(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, blob, len, &p2.b, &m));
    CHECK_OK(plug_build(&p2, in, nb, &out, &ws));
    CHECK_OK(plug_run(&p2, in, nb, &out, ws, hin, y2, RUN_CPU_CHUNKED));
    CHECK(memcmp(y1, y2, d.nout * 4) == 0);
    /* a clone serializes to the same bytes */
    {
        prt_blob_plugin *cl = NULL;
        uint8_t b2[80];
        CHECK_OK(p2.b->ops->clone(p2.b, &cl, &m));
        CHECK_OK(cl->ops->serialize(cl, b2, sizeof(b2)));
        CHECK(memcmp(blob, b2, 80) == 0);
        cl->ops->destroy(cl);
    }
    plug_destroy(&p2);
    /* every truncation fails cleanly and leaves *out alone */
    for (i = 0; i < len; i++) {
        prt_blob_plugin *o = (prt_blob_plugin *)(uintptr_t)0x1;
        g_msg[0] = 0;
        CHECK(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, blob, i, &o, &m) != PRT_OK);
        CHECK(o == (prt_blob_plugin *)(uintptr_t)0x1);
        CHECK(g_msg[0] != 0);
    }
    /* trailing garbage */
    {
        uint8_t big[81];
        prt_blob_plugin *o = NULL;
        memcpy(big, blob, 80);
        big[80] = 0;
        CHECK(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, big, 81, &o, &m) != PRT_OK);
        CHECK(o == NULL);
    }
    /* every single-byte flip, plus random multi-byte corruption */
    for (i = 0; i < len * 8; i++) {
        prt_blob_plugin *o = NULL;
        uint8_t cp[80];
        memcpy(cp, blob, 80);
        cp[i / 8] ^= (uint8_t)(1u << (i % 8));
        CHECK_MSG(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, cp, 80, &o, &m) != PRT_OK,
                  "bit %zu flipped was accepted", i);
        CHECK(o == NULL);
    }
    rng_state = 7;
    for (i = 0; i < 2000; i++) {
        prt_blob_plugin *o = NULL;
        uint8_t cp[80];
        int j, nflip = 1 + (int)urand(0, 4);
        memcpy(cp, blob, 80);
        for (j = 0; j < nflip; j++) cp[(int)urand(0, 80)] ^= (uint8_t)(1 + (int)urand(0, 255));
        if (memcmp(cp, blob, 80) == 0) continue;
        CHECK(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, cp, 80, &o, &m) != PRT_OK);
        if (o) o->ops->destroy(o);
    }
    CHECK(prt__deform_conv_creator_v1.deserialize_blob(&prt__deform_conv_creator_v1, NULL, 80, &p2.b, &m) != PRT_OK);
    plug_destroy(&pl);
    free(blob);
    free(y1);
    free(y2);
    for (i = 0; i < (size_t)nb; i++) free(hin[i]);
    dset_free(&d);
}

TEST(dcn_v2_fields_round_trip)
{
    dset d;
    fields5 f;
    plug pl, p2;
    prt_tensor_desc in[5], out;
    prt_fields sf;
    size_t ws = 0;
    int32_t nb, i;
    void *hin[5], *y1, *y2;
    prt_msg m = {g_msg, sizeof(g_msg)};
    dset_make(&d, ser_case(), 43, 0, 1.0);
    fields_make(&f, &d.c);
    nb = dset_descs(&d, PRT_DTYPE_F32, in);
    for (i = 0; i < nb; i++) hin[i] = to_typed(d.in[i], d.nel[i], PRT_DTYPE_F32);
    y1 = malloc(d.nout * 4);
    y2 = malloc(d.nout * 4);
    CHECK_OK(plug_create(&pl, 2, &f.fc));
    CHECK(strcmp(pl.f->ops->core->get_name(pl.f), "ModulatedDeformConv2d") == 0);
    CHECK(strcmp(pl.f->ops->core->get_version(pl.f), "2") == 0);
    CHECK(strcmp(pl.f->ops->core->get_namespace(pl.f), "") == 0);
    CHECK_OK(plug_build(&pl, in, nb, &out, &ws));
    CHECK_OK(plug_run(&pl, in, nb, &out, ws, hin, y1, RUN_CPU_SERIAL));
    CHECK_OK(pl.f->ops->runtime->get_fields_to_serialize(pl.f, &sf, &m));
    CHECK_EQ_INT(sf.nb, 5);
    for (i = 0; i < 5; i++) {
        CHECK(strcmp(sf.fields[i].name, f.f[i].name) == 0);
        CHECK_EQ_INT(sf.fields[i].type, PRT_FIELD_INT64);
        CHECK_EQ_INT(sf.fields[i].count, f.f[i].count);
        CHECK(memcmp(sf.fields[i].data, f.f[i].data, (size_t)f.f[i].count * 8) == 0);
    }
    memset(&p2, 0, sizeof(p2));
    CHECK_OK(prt__deform_conv_creator_v2.create_field(&prt__deform_conv_creator_v2, &sf, PRT_PHASE_RUNTIME, &p2.f, &m));
    CHECK_OK(plug_build(&p2, in, nb, &out, &ws));
    CHECK_OK(plug_run(&p2, in, nb, &out, ws, hin, y2, RUN_CPU_CHUNKED));
    CHECK(memcmp(y1, y2, d.nout * 4) == 0);
    plug_destroy(&p2);
    plug_destroy(&pl);
    free(y1);
    free(y2);
    for (i = 0; i < nb; i++) free(hin[i]);
    dset_free(&d);
}

/* ------------------------------------------------------------------------ */
/* Validation messages                                                      */
/* ------------------------------------------------------------------------ */

static void expect_field_error(int version, const fields5 *f, const char *needle)
{
    plug pl;
    prt_status st = plug_create(&pl, version, &f->fc);
    CHECK_MSG(st != PRT_OK, "v%d: expected a field error containing \"%s\"", version, needle);
    CHECK(pl.b == NULL && pl.f == NULL);
    CHECK_STR_CONTAINS(g_msg, needle);
    plug_destroy(&pl);
}

TEST(dcn_field_errors)
{
    int version;
    for (version = 1; version <= 2; version++) {
        fields5 f;
        int32_t i32[2] = {2, 1};
        prt_field saved;
        fields_make(&f, &cases[0]);
        f.stride[1] = 0;
        expect_field_error(version, &f, "field \"stride\" needs 2 values in [1, 65535], got [1, 0]");
        fields_make(&f, &cases[0]);
        f.pad[0] = -1;
        expect_field_error(version, &f, "field \"padding\" needs 2 values in [0, 65535], got [-1, 1]");
        fields_make(&f, &cases[0]);
        f.dil[0] = 0;
        expect_field_error(version, &f, "field \"dilation\"");
        fields_make(&f, &cases[0]);
        f.group = 0;
        expect_field_error(version, &f, "field \"group\" needs a value in [1, 1048576], got 0");
        fields_make(&f, &cases[0]);
        f.dg = -3;
        expect_field_error(version, &f, "field \"deformable_group\" needs a value in [1, 1048576], got -3");
        fields_make(&f, &cases[0]);
        f.f[0].count = 1;
        expect_field_error(version, &f, "field \"stride\" needs 2 values, got 1");
        fields_make(&f, &cases[0]);
        saved = f.f[4];
        f.fc.nb = 4;
        expect_field_error(version, &f, "required field \"deformable_group\" is missing");
        (void)saved;
        fields_make(&f, &cases[0]);
        f.f[0].type = PRT_FIELD_FLOAT32;
        expect_field_error(version, &f, "field \"stride\" needs integers, got type float32");
        /* int32 (not yet widened) is read correctly too */
        fields_make(&f, &cases[0]);
        f.f[0].type = PRT_FIELD_INT32;
        f.f[0].data = i32;
        {
            plug pl;
            CHECK_OK(plug_create(&pl, version, &f.fc));
            plug_destroy(&pl);
        }
    }
}

/* Build with `mutate` applied to the descriptors and expect `needle`. */
static void expect_build_error(int version, const dcase *c, void (*mutate)(prt_tensor_desc *in, int32_t *nb),
                               const char *needle)
{
    dset d;
    fields5 f;
    plug pl;
    prt_tensor_desc in[5], out;
    size_t ws = 0;
    int32_t nb;
    prt_status st;
    memset(&d, 0, sizeof(d));
    d.c = *c;
    d.hout = prt__dcn_out_extent(c->h, c->pad[0], c->dil[0], c->kh, c->stride[0]);
    d.wout = prt__dcn_out_extent(c->w, c->pad[1], c->dil[1], c->kw, c->stride[1]);
    fields_make(&f, c);
    nb = dset_descs(&d, PRT_DTYPE_F32, in);
    if (mutate) mutate(in, &nb);
    CHECK_OK(plug_create(&pl, version, &f.fc));
    st = plug_build(&pl, in, nb, &out, &ws);
    CHECK_MSG(st != PRT_OK, "v%d: build accepted, expected \"%s\"", version, needle);
    CHECK_STR_CONTAINS(g_msg, needle);
    CHECK_STR_CONTAINS(g_msg, version == 1 ? "ModulatedDeformConv2d v1" : "ModulatedDeformConv2d v2");
    plug_destroy(&pl);
}

static void m_offset_channels(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[1].dims.d[1] = 17; }
static void m_mask_channels(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[2].dims.d[1] = 8; }
static void m_offset_spatial(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[1].dims.d[2] += 1; }
static void m_mask_spatial(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[2].dims.d[3] -= 1; }
static void m_weight_cin(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[3].dims.d[1] = 3; }
static void m_batch(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[1].dims.d[0] = 2; }
static void m_mask_batch(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[2].dims.d[0] = 3; }
static void m_bias_len(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[4].dims.d[0] = 5; }
static void m_three_inputs(prt_tensor_desc *in, int32_t *nb) { (void)in; *nb = 3; }
static void m_x_3d(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[0].dims.nb = 3; }
static void m_bias_2d(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[4].dims.nb = 2; in[4].dims.d[1] = 1; }
static void m_f16_mask(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[2].dtype = PRT_DTYPE_F16; }
static void m_i32_x(prt_tensor_desc *in, int32_t *nb)
{
    int32_t i;
    for (i = 0; i < *nb; i++) in[i].dtype = PRT_DTYPE_I32;
}
static void m_tiny_x(prt_tensor_desc *in, int32_t *nb) { (void)nb; in[0].dims.d[2] = 0; }

TEST(dcn_build_errors)
{
    int v;
    /* cases[0]: n1 cin4 7x9 cout6 3x3 pad1, bias; cases[5]: cin8 cout4 g2 dg4 */
    static const dcase g3 = {"g3", 1, 4, 7, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 3, 1, 1, 2.0};
    static const dcase dg3 = {"dg3", 1, 4, 7, 9, 6, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 3, 1, 2.0};
    static const dcase cout_g = {"coutg", 1, 4, 7, 9, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 1, 0, 2.0};
    for (v = 1; v <= 2; v++) {
        expect_build_error(v, &g3, NULL, "x channels (4) must be divisible by group (3)");
        expect_build_error(v, &dg3, NULL, "x channels (4) must be divisible by deformable_group (3)");
        expect_build_error(v, &cout_g, NULL, "weight output channels (5) must be divisible by group (2)");
        expect_build_error(v, &cases[0], m_weight_cin, "weight dim 1 must be x channels / group = 4 / 1 = 4, got 3");
        expect_build_error(v, &cases[0], m_offset_channels,
                           "offset must have 2*deformable_group*kh*kw = 2*1*3*3 = 18 channels, got 17");
        expect_build_error(v, &cases[0], m_mask_channels,
                           "mask must have deformable_group*kh*kw = 1*3*3 = 9 channels, got 8");
        expect_build_error(v, &cases[0], m_offset_spatial,
                           "offset spatial size must equal the output size 7x9 computed from x and the fields, got 8x9");
        expect_build_error(v, &cases[0], m_mask_spatial,
                           "mask spatial size must equal the output size 7x9 computed from x and the fields, got 7x8");
        expect_build_error(v, &cases[0], m_batch, "offset batch (2) must equal x batch (1)");
        expect_build_error(v, &cases[0], m_mask_batch, "mask batch (3) must equal x batch (1)");
        expect_build_error(v, &cases[0], m_bias_len, "bias length must equal weight output channels (6), got 5");
        expect_build_error(v, &cases[0], m_three_inputs, "needs 4 inputs (x, offset, mask, weight) or 5 (with bias), got 3");
        expect_build_error(v, &cases[0], m_x_3d, "input 0 (x) must be 4-D, got 3-D");
        expect_build_error(v, &cases[0], m_bias_2d, "input 4 (bias) must be 1-D, got 2-D");
        expect_build_error(v, &cases[0], m_f16_mask, "all inputs must share x's type f32, but mask is f16");
        expect_build_error(v, &cases[0], m_i32_x, "x must be f32, f16 or bf16, got i32");
        expect_build_error(v, &cases[0], m_tiny_x, "x height 0 with padding 1 is smaller than the dilated kernel height 3");
    }
}

/* Dynamic extents: shapes check only what is known; configure checks min/max. */
TEST(dcn_dynamic_dims_checked_in_configure)
{
    int v;
    for (v = 1; v <= 2; v++) {
        fields5 f;
        plug pl;
        test_eb eb;
        prt_dims_expr ein[5], eout;
        prt_dyn_tensor_desc din[5], dout;
        prt_msg m = {g_msg, sizeof(g_msg)};
        dset d;
        prt_tensor_desc in[5];
        int32_t i, j, nb;
        int64_t val;
        const dcase *c = &cases[0];
        memset(&d, 0, sizeof(d));
        d.c = *c;
        d.hout = 7;
        d.wout = 9;
        fields_make(&f, c);
        nb = dset_descs(&d, PRT_DTYPE_F32, in);
        teb_init(&eb);
        for (i = 0; i < nb; i++) {
            memset(&ein[i], 0, sizeof(ein[i]));
            ein[i].nb = in[i].dims.nb;
            for (j = 0; j < in[i].dims.nb; j++)
                ein[i].d[j] = (j == 0 && i < 3) || (i == 1 && j >= 2) ? teb_new(&eb, 0, 0)
                                                                      : teb_constant(&eb.eb, in[i].dims.d[j]);
        }
        CHECK_OK(plug_create(&pl, v, &f.fc));
        CHECK_OK(v == 1 ? pl.b->ops->get_output_dims(pl.b, 0, ein, nb, &eb.eb, &eout, &m)
                        : pl.f->ops->build->get_output_shapes(pl.f, ein, nb, &eout, 1, &eb.eb, &m));
        CHECK(!teb_get_constant(&eb.eb, eout.d[0], &val));
        CHECK(teb_get_constant(&eb.eb, eout.d[2], &val) && val == 7);
        /* offset max H inconsistent with x */
        for (i = 0; i < nb; i++) {
            din[i].desc = in[i];
            din[i].min = din[i].opt = din[i].max = in[i].dims;
        }
        din[0].desc.dims.d[0] = din[1].desc.dims.d[0] = din[2].desc.dims.d[0] = -1;
        din[0].min.d[0] = din[1].min.d[0] = din[2].min.d[0] = 1;
        din[0].max.d[0] = din[1].max.d[0] = din[2].max.d[0] = 8;
        din[1].desc.dims.d[2] = -1;
        din[1].max.d[2] = 9;
        memset(&dout, 0, sizeof(dout));
        dout.desc.dtype = PRT_DTYPE_F32;
        dout.desc.format = PRT_FORMAT_LINEAR;
        dims4(&dout.desc.dims, -1, 6, 7, 9);
        CHECK(PRT_OK != (v == 1 ? pl.b->ops->configure_plugin(pl.b, din, nb, &dout, 1, &m)
                                : pl.f->ops->build->configure(pl.f, din, nb, &dout, 1, &m)));
        CHECK_STR_CONTAINS(g_msg, "offset spatial size must equal the output size 7x9 computed from x and the fields, got 9x9 (max dims)");
        din[1].max.d[2] = 7;
        din[0].max.d[0] = 4;
        CHECK(PRT_OK != (v == 1 ? pl.b->ops->configure_plugin(pl.b, din, nb, &dout, 1, &m)
                                : pl.f->ops->build->configure(pl.f, din, nb, &dout, 1, &m)));
        CHECK_STR_CONTAINS(g_msg, "offset batch (8) must equal x batch (4) (max dims)");
        din[0].max.d[0] = 8;
        CHECK_OK(v == 1 ? pl.b->ops->configure_plugin(pl.b, din, nb, &dout, 1, &m)
                        : pl.f->ops->build->configure(pl.f, din, nb, &dout, 1, &m));
        plug_destroy(&pl);
    }
}

TEST(dcn_enqueue_errors)
{
    dset d;
    fields5 f;
    plug pl;
    prt_tensor_desc in[5], out;
    size_t ws = 0;
    int32_t nb, i;
    void *hin[5], *y;
    prt_exec ex;
    const void *inp[5];
    void *outp[1];
    dset_make(&d, &cases[0], 11, 0, 1.0);
    fields_make(&f, &d.c);
    nb = dset_descs(&d, PRT_DTYPE_F32, in);
    for (i = 0; i < nb; i++) {
        hin[i] = to_typed(d.in[i], d.nel[i], PRT_DTYPE_F32);
        inp[i] = hin[i];
    }
    y = malloc(d.nout * 4);
    outp[0] = y;
    CHECK_OK(plug_create(&pl, 2, &f.fc));
    exec_init(&ex, PRT_DEVICE_CPU, 0);
    g_exec_err[0] = 0;
    CHECK(pl.f->ops->runtime->enqueue(pl.f, in, &out, inp, outp, NULL, &ex) != PRT_OK);
    CHECK_STR_CONTAINS(g_exec_err, "enqueue before configure");
    CHECK_OK(plug_build(&pl, in, nb, &out, &ws));
    g_exec_err[0] = 0;
    out.dims.d[2] = 6;
    CHECK(pl.f->ops->runtime->enqueue(pl.f, in, &out, inp, outp, NULL, &ex) != PRT_OK);
    CHECK_STR_CONTAINS(g_exec_err, "output must be f32 [1, 6, 7, 9]");
    out.dims.d[2] = 7;
    g_exec_err[0] = 0;
    CHECK(pl.f->ops->runtime->enqueue(pl.f, in, &out, inp, outp, NULL, &ex) != PRT_OK);
    CHECK_STR_CONTAINS(g_exec_err, "needs a workspace");
#ifndef PLUGRT_HAVE_CUDA
    exec_init(&ex, PRT_DEVICE_CUDA, 0);
    CHECK(pl.f->ops->runtime->enqueue(pl.f, in, &out, inp, outp, NULL, &ex) != PRT_OK);
#else
    exec_init(&ex, PRT_DEVICE_CUDA, 0);
    g_exec_err[0] = 0;
    CHECK(pl.f->ops->runtime->enqueue(pl.f, in, &out, inp, outp, NULL, &ex) != PRT_OK);
    CHECK_STR_CONTAINS(g_exec_err, "not attached to a CUDA context");
#endif
    plug_destroy(&pl);
    free(y);
    for (i = 0; i < nb; i++) free(hin[i]);
    dset_free(&d);
}

/* ------------------------------------------------------------------------ */
/* ONNX backend node tests                                                   */
/* ------------------------------------------------------------------------ */

static const char *onnx_dir(void)
{
    const char *e = getenv("PRT_DCN_DATA");
    static char buf[1024];
    if (e) return e;
    snprintf(buf, sizeof(buf), "%s/onnx_deform_conv", prt_test_data_dir());
    return buf;
}

/* Reads one converted case: see gen_onnx_data.py for the format. */
static int onnx_case(const char *name)
{
    char path[1200], tag[64];
    FILE *fp;
    dset d;
    double *expect = NULL;
    int64_t fl[8];
    int i, nt, ok = 0;
    snprintf(path, sizeof(path), "%s/%s.txt", onnx_dir(), name);
    fp = fopen(path, "r");
    CHECK_MSG(fp != NULL, "cannot open %s", path);
    if (!fp) return 0;
    memset(&d, 0, sizeof(d));
    CHECK(fscanf(fp, " %63s", tag) == 1 && strcmp(tag, "dcn-case") == 0);
    for (i = 0; i < 8; i++) CHECK(fscanf(fp, " %lld", (long long *)&fl[i]) == 1);
    d.c.name = name;
    d.c.stride[0] = fl[0]; d.c.stride[1] = fl[1];
    d.c.pad[0] = fl[2]; d.c.pad[1] = fl[3];
    d.c.dil[0] = fl[4]; d.c.dil[1] = fl[5];
    d.c.group = fl[6]; d.c.dg = fl[7];
    CHECK(fscanf(fp, " %d", &nt) == 1 && nt >= 5 && nt <= 6);
    for (i = 0; i < nt; i++) {
        int nd, j, slot;
        int64_t dims[4] = {0, 0, 0, 0}, vol = 1, k;
        double *buf;
        CHECK(fscanf(fp, " %63s %d", tag, &nd) == 2 && nd >= 1 && nd <= 4);
        for (j = 0; j < nd; j++) {
            CHECK(fscanf(fp, " %lld", (long long *)&dims[j]) == 1);
            vol *= dims[j];
        }
        buf = (double *)malloc((size_t)vol * sizeof(double));
        for (k = 0; k < vol; k++) {
            float v;
            CHECK(fscanf(fp, " %f", &v) == 1);
            buf[k] = v;
        }
        slot = strcmp(tag, "x") == 0 ? 0 : strcmp(tag, "offset") == 0 ? 1 : strcmp(tag, "mask") == 0 ? 2
             : strcmp(tag, "weight") == 0 ? 3 : strcmp(tag, "bias") == 0 ? 4 : strcmp(tag, "y") == 0 ? 5 : -1;
        CHECK(slot >= 0);
        if (slot == 5) { expect = buf; d.nout = (size_t)vol; d.hout = dims[2]; d.wout = dims[3]; }
        else if (slot >= 0) { d.in[slot] = buf; d.nel[slot] = (size_t)vol; }
        else free(buf);
        if (slot == 0) { d.c.n = dims[0]; d.c.cin = dims[1]; d.c.h = dims[2]; d.c.w = dims[3]; }
        if (slot == 3) { d.c.cout = dims[0]; d.c.kh = dims[2]; d.c.kw = dims[3]; }
    }
    fclose(fp);
    d.c.bias = d.in[4] != NULL;
    if (expect && d.in[0] && d.in[1] && d.in[2] && d.in[3]) {
        int v;
        double *ref = reference(&d);
        double e = rel_err(NULL, PRT_DTYPE_F32, ref, 0, NULL, NULL);
        size_t k;
        (void)e;
        for (k = 0; k < d.nout; k++)
            CHECK_MSG(fabs(ref[k] - expect[k]) <= 1e-5 * (1 + fabs(expect[k])), "%s: f64 reference [%zu] %.9g vs %.9g",
                      name, k, ref[k], expect[k]);
        for (v = 1; v <= 2; v++) {
            void *y = run_dset(&d, v, PRT_DTYPE_F32, RUN_CPU_CHUNKED);
            for (k = 0; k < d.nout; k++)
                CHECK_MSG(fabs(((float *)y)[k] - expect[k]) <= 1e-5 * (1 + fabs(expect[k])),
                          "%s v%d: [%zu] %.9g vs expected %.9g", name, v, k, ((float *)y)[k], expect[k]);
            free(y);
        }
        free(ref);
        ok = 1;
    }
    free(expect);
    dset_free(&d);
    return ok;
}

TEST(dcn_onnx_basic_with_padding) { CHECK(onnx_case("test_basic_deform_conv_with_padding")); }
TEST(dcn_onnx_basic_without_padding) { CHECK(onnx_case("test_basic_deform_conv_without_padding")); }
TEST(dcn_onnx_with_mask_bias) { CHECK(onnx_case("test_deform_conv_with_mask_bias")); }
TEST(dcn_onnx_multiple_offset_groups) { CHECK(onnx_case("test_deform_conv_with_multiple_offset_groups")); }

/* ------------------------------------------------------------------------ */
/* CUDA                                                                      */
/* ------------------------------------------------------------------------ */

TEST(dcn_cuda_f32_vs_f64_reference)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_f32_cases(RUN_CUDA);
}

/* The wide-image fraction check of the CPU path, on CUDA. */
TEST(dcn_cuda_wide_image_fractions)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_wide_images(RUN_CUDA, "CUDA", 1);
}

TEST(dcn_cuda_f16_vs_f32)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_f16_cases(RUN_CUDA, RUN_CUDA);
}

TEST(dcn_cuda_zero_offsets_v1_v2_identical)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_same_runs(900, 1, RUN_CUDA, 2, RUN_CUDA, "", "CUDA v1 and v2 outputs differ");
}

/* Cases the fused fp16 kernel takes (Cin/group and Cin/deformable_group multiples of 8): partial
 * K chunks, taps and deformable groups changing inside chunks, groups, strides, dilation, padding,
 * batches whose columns share a tile, more than one row tile, partial column tiles, far offsets. */
static const dcase fused_cases[] = {
    {"fused_c16_basic", 1, 16, 9, 11, 24, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    {"fused_b3_s21_d12_dg2", 3, 32, 13, 10, 40, 3, 3, {2, 1}, {0, 1}, {1, 2}, 1, 2, 0, 3.0},
    {"fused_group4_cg8", 2, 32, 7, 9, 20, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4, 1, 1, 2.0},
    {"fused_k1x5_dg4_m130", 1, 64, 12, 17, 130, 1, 5, {1, 1}, {0, 2}, {1, 1}, 1, 4, 1, 2.0},
    {"fused_far_offsets", 1, 8, 6, 7, 8, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 7.0},
    {"fused_b2_dg3_cols", 2, 24, 40, 37, 70, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 3, 1, 2.0},
    {"fused_group2_cg64_m16", 1, 128, 11, 13, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 2, 1, 2.0},
    {"fused_b2_m300_cg64", 2, 64, 9, 15, 300, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    /* two and four 64-channel blocks (the 64-k wgmma tile's k order), the second with two
     * deformable groups: a new segment's corner table inside the K loop */
    {"fused_c128_cb2", 1, 128, 14, 17, 40, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    {"fused_c256_dg2_b2", 2, 256, 9, 10, 48, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 2, 0, 2.5},
    /* 128 columns per image: the tiles' output written in whole 16-byte runs (emit_staged), 72
     * output channels: a partial row tile */
    {"fused_c128_hw128_b3", 3, 128, 8, 16, 72, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    /* the same with two deformable groups of 64 channels and 5 images: the persistent form's
     * copies of the next tile's offsets take its first segment's group */
    {"fused_c128_hw128_dg2_b5", 5, 128, 8, 16, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 2, 1, 2.0},
    /* four deformable groups of 32 channels and stride 2 (case D's form): 192 columns an image,
     * so that tiles of 128 columns cross images, a last tile of 64 live columns, and a corner
     * table rebuilt inside the K loop for each deformable group */
    {"fused_b3_s2_dg4_c128", 3, 128, 24, 32, 64, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1, 4, 1, 2.0},
};
#define NB_FUSED ((int)(sizeof(fused_cases) / sizeof(fused_cases[0])))

/* Shapes of the grouped kernel (grouped128: at most 32 output channels per group, each group
 * within one deformable group): 4 to 32 output channels per group (one, two and four MMA blocks
 * of 8, 24 padded to 32), 8 to 32 input channels per group, K padded to whole chunks (1x1 and
 * 1x5 kernels), several deformable groups (the corner table rebuilt inside a block), strides,
 * dilation, batches, partial column tiles. */
static const dcase grouped_cases[] = {
    {"grouped_g4_c16_m16", 1, 64, 11, 13, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 4, 1, 1, 2.0},
    {"grouped_g8_c8_m4_s2", 2, 64, 13, 12, 32, 3, 3, {2, 1}, {0, 1}, {1, 2}, 8, 1, 0, 3.0},
    {"grouped_g2_c24_m24_dg2", 1, 48, 10, 9, 48, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 2, 1, 2.0},
    {"grouped_g2_c32_m32_k1x5", 1, 64, 12, 17, 64, 1, 5, {1, 1}, {0, 2}, {1, 1}, 2, 1, 1, 2.0},
    {"grouped_g32_c8_m8_dg4_b2", 2, 256, 9, 10, 256, 3, 3, {1, 1}, {1, 1}, {1, 1}, 32, 4, 1, 2.0},
    {"grouped_g2_c16_m12_k1", 1, 32, 15, 14, 24, 1, 1, {1, 1}, {0, 0}, {1, 1}, 2, 1, 1, 1.5},
    /* 49 taps: a corner table of 196 KB (more than compute capability 8.x gives a block) */
    {"grouped_g4_c8_m8_k7x7", 1, 32, 12, 11, 32, 7, 7, {1, 1}, {3, 3}, {1, 1}, 4, 1, 1, 2.0},
    /* K = 1152: fp32 adds its tensor-core sums into its own accumulators every 576 k */
    {"grouped_g2_c128_m16", 1, 256, 9, 10, 32, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, 1, 1, 2.0},
};
#define NB_GROUPED ((int)(sizeof(grouped_cases) / sizeof(grouped_cases[0])))

/* Non-finite x: pixel 0 of every channel holds NaN or Inf. The outputs that sample it inside the
 * image are NaN or infinite in the float64 reference; the others (among them those whose corners
 * fall outside the image next to it, which read nothing) are finite. Mode `mode` must agree on
 * which outputs are finite and be within the fp16 bound on those. */
static void check_nonfinite_x(const dcase *c, int mode, const char *what)
{
    dset d;
    double *ref;
    size_t i, agree = 0, finite = 0, maxi = 0;
    double err = 0.0;
    int64_t ch;
    void *y;
    dset_make(&d, c, 4400, 1, 6.0);
    for (ch = 0; ch < c->n * c->cin; ch++) d.in[0][ch * c->h * c->w] = ch % 2 ? NAN : INFINITY;
    ref = reference(&d);
    y = run_dset(&d, 2, PRT_DTYPE_F16, mode);
    for (i = 0; i < d.nout; i++) {
        const double v = typed_get(y, i, PRT_DTYPE_F16);
        if (isfinite(ref[i]) != isfinite(v)) continue;
        agree++;
        if (!isfinite(ref[i])) continue;
        finite++;
        if (fabs(v - ref[i]) > err) {
            err = fabs(v - ref[i]);
            maxi = i;
        }
    }
    CHECK_MSG(agree == d.nout, "%s on %s, non-finite x: %zu of %zu outputs finite where the reference is not, or "
              "the other way", what, c->name, d.nout - agree, d.nout);
    CHECK_MSG(err <= 1e-2, "%s on %s, non-finite x: max abs error %.3g at %zu", what, c->name, err, maxi);
    CHECK_MSG(finite > d.nout / 2 && finite < d.nout, "%s on %s: %zu of %zu outputs finite: not a meaningful case",
              what, c->name, finite, d.nout);
    free(y);
    free(ref);
    dset_free(&d);
}

TEST(dcn_cpu_nonfinite_x)
{
    check_nonfinite_x(&fused_cases[0], RUN_CPU_CHUNKED, "CPU");
    check_nonfinite_x(&grouped_cases[0], RUN_CPU_CHUNKED, "CPU");
}

/* The grouped kernel's shapes through the CPU path in bfloat16 (and the check that their outputs
 * reach the magnitude the CUDA test needs). */
TEST(dcn_cpu_bf16_grouped_cases) { check_bf16_cases(grouped_cases, NB_GROUPED, RUN_CPU_CHUNKED, RUN_CPU_SERIAL, "CPU"); }

/* The same shapes through the CPU path in fp16 (and the check that their outputs reach ~4). */
TEST(dcn_cpu_f16_fused_cases)
{
    int ci;
    for (ci = 0; ci < NB_FUSED; ci++) {
        dset d;
        double *ref, abs_err, max_ref;
        void *y;
        dset_make(&d, &fused_cases[ci], 7000 + (uint64_t)ci, 1, 6.0);
        ref = reference(&d);
        y = run_dset(&d, 2, PRT_DTYPE_F16, RUN_CPU_CHUNKED);
        rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, &max_ref);
        CHECK_MSG(abs_err <= 1e-2, "%s: CPU f16 max abs error %.3g > 1e-2", fused_cases[ci].name, abs_err);
        CHECK_MSG(max_ref >= 2.0, "%s: outputs too small to be meaningful (%.3g)", fused_cases[ci].name, max_ref);
        printf("  %-22s CPU f16: max |y| %5.2f, max abs err %.2e vs f64\n", fused_cases[ci].name, max_ref, abs_err);
        free(y);
        free(ref);
        dset_free(&d);
    }
}

#ifdef PLUGRT_HAVE_CUDA
/* The wgmma kernel's tiles [t0, t1) that run on this device and shape, as a
 * mask of their tactic ids (the wgmma tiles need a device of compute
 * capability 9.0, the grouped kernel 8.0). */
static int32_t wgmma_tile_mask(const prt__dcn_params *p, const prt__dcn_shape *s, int t0, int t1)
{
    int t;
    int32_t m = 0;
    for (t = t0; t < t1; t++)
        if (prt__deform_conv_wgmma_runs(p, s, t))
            m |= 1 << (PRT_DCN_TACTIC_WGMMA + t);
    return m;
}

/* The 16-bit tiles 0..3 and 7 (the grouped kernel), and the fp32 (3xTF32) tiles 4..6 and 8. */
static int32_t wgmma_tactics(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    return wgmma_tile_mask(p, s, 0, 4) | wgmma_tile_mask(p, s, 7, 8);
}
static int32_t wgmma_f32_tactics(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    return wgmma_tile_mask(p, s, 4, 7) | wgmma_tile_mask(p, s, 8, 9);
}

static int popcount32(int32_t m)
{
    int n = 0;
    for (; m; m &= m - 1) n++;
    return n;
}

static int nb_wgmma_tiles(const prt__dcn_params *p, const prt__dcn_shape *s) { return popcount32(wgmma_tactics(p, s)); }

/* fp16 through the fused kernel, forced by PRT_DCN_CUDA_KERNEL ("fused": the tile chosen from
 * the shape; or a tile name), against the float64 reference on the same fp16 inputs. */
static void check_fused(const char *kernel)
{
    int ci, ran = 0;
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", kernel, 1) == 0);
    for (ci = 0; ci < NB_FUSED; ci++) {
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        double *ref, abs_err, max_ref;
        void *y;
        dset_make(&d, &fused_cases[ci], 7000 + (uint64_t)ci, 1, 6.0);
        dset_shape(&d, &p, &s);
        /* wgmma256x128k64 needs segments of whole 64-channel blocks */
        if (!strcmp(kernel, "wgmma256x128k64") && !prt__deform_conv_wgmma_fits(&p, &s, 3)) {
            dset_free(&d);
            continue;
        }
        ran++;
        CHECK_MSG(prt__deform_conv_cuda_fused_applies(&p, &s, 1), "%s: the fused kernel does not apply",
                  fused_cases[ci].name);
        ref = reference(&d);
        y = run_dset(&d, 2, PRT_DTYPE_F16, RUN_CUDA);
        rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, &max_ref);
        CHECK_MSG(abs_err <= 1e-2, "%s (%s): f16 max abs error %.3g > 1e-2 (max |y| %.3g)", fused_cases[ci].name,
                  prt__deform_conv_cuda_fused_tile(&p, &s), abs_err, max_ref);
        CHECK_MSG(max_ref >= 2.0, "%s: outputs too small to be meaningful (%.3g)", fused_cases[ci].name, max_ref);
        if (!strcmp(kernel, "fused"))
            printf("  %-22s CUDA fused f16 (%s): max |y| %5.2f, max abs err %.2e vs f64\n", fused_cases[ci].name,
                   prt__deform_conv_cuda_fused_tile(&p, &s), max_ref, abs_err);
        free(y);
        free(ref);
        dset_free(&d);
    }
    CHECK_MSG(ran >= 2, "%s: only %d cases", kernel, ran);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
}

TEST(dcn_cuda_fused_f16_vs_f64)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    check_fused("fused");
}

TEST(dcn_cuda_fused_f16_every_tile)
{
    static const char *tiles[] = {"fused128x128", "fused64x128", "fused64x64", "fused16x128",
                                  "wgmma256x128", "wgmma128x128", "wgmma64x128", "wgmma256x128k64"};
    int t;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (t = 0; t < (prt__deform_conv_wgmma_available() ? 8 : 4); t++) check_fused(tiles[t]);
}

/* bfloat16 through every CUDA kernel (a tile that does not fit a case runs
 * im2col), against float64 and the CPU's fp32 path on the same inputs. */
TEST(dcn_cuda_bf16_every_kernel)
{
    static const char *kernels[] = {"im2col",       "fused128x128", "fused64x128", "fused64x64",
                                    "fused16x128",  "wgmma256x128", "wgmma128x128", "wgmma64x128",
                                    "wgmma256x128k64", "grouped128"};
    int k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (k = 0; k < 10; k++) {
        if (k >= 5 && !prt__deform_conv_wgmma_tile_available(k == 9 ? 7 : 0)) continue;
        CHECK(setenv("PRT_DCN_CUDA_KERNEL", kernels[k], 1) == 0);
        check_bf16_cases(fused_cases, NB_FUSED, RUN_CUDA, RUN_CPU_SERIAL, kernels[k]);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    check_bf16_cases(cases, NB_CASES, RUN_CUDA, RUN_CPU_SERIAL, "CUDA default");
}

/* The wgmma tiles with K split in three (fp32 partial sums added by a last
 * kernel), where the chunks allow it: splits that start inside a segment
 * and inside a channel block. */
TEST(dcn_cuda_wgmma_split_k)
{
    static const char *tiles[] = {"wgmma256x128", "wgmma128x128", "wgmma64x128", "wgmma256x128k64"};
    int t;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    CHECK(setenv("PRT_DCN_CUDA_SPLIT", "3", 1) == 0);
    for (t = 0; t < 4; t++) check_fused(tiles[t]);
    CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
}

/* The persistent form of the 16-bit wgmma tiles of 256 rows: with the grid capped at 1, 2 and 5
 * blocks (PRT_DCN_CUDA_WGGRID) every block takes several tiles (also with K split in three) and,
 * where a tile's columns lie in one image (the hw128 cases), copies the next tile's offsets and
 * mask into shared memory. The outputs equal, bit for bit, those of one tile a block
 * (PRT_DCN_CUDA_WGFLAGS=4), which the tests above hold against float64; so do those of the
 * persistent form without the copies (flag 8). */
TEST(dcn_cuda_wgmma_persistent)
{
    static const char *tiles[] = {"wgmma256x128", "wgmma256x128k64"};
    static const int tile_ids[] = {0, 3};
    static const char *caps[] = {"1", "2", "5"};
    static const prt_dtype types[] = {PRT_DTYPE_F16, PRT_DTYPE_BF16};
    int t, ci, sp, ti, k, compared = 0;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    for (t = 0; t < 2; t++) {
        CHECK(setenv("PRT_DCN_CUDA_KERNEL", tiles[t], 1) == 0);
        for (ci = 0; ci < NB_FUSED; ci++) {
            dset d;
            prt__dcn_params p;
            prt__dcn_shape s;
            dset_make(&d, &fused_cases[ci], 7700 + (uint64_t)ci, 1, 6.0);
            dset_shape(&d, &p, &s);
            if (!prt__deform_conv_wgmma_fits(&p, &s, tile_ids[t])) {
                dset_free(&d);
                continue;
            }
            for (sp = 0; sp < 2; sp++) {
                split_k3(sp);
                for (ti = 0; ti < 2; ti++) {
                    const size_t bytes = d.nout * prt_dtype_size(types[ti]);
                    void *y0, *y;
                    CHECK(unsetenv("PRT_DCN_CUDA_WGGRID") == 0);
                    CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", "4", 1) == 0);
                    y0 = run_dset(&d, 2, types[ti], RUN_CUDA);
                    for (k = 0; k < 4; k++) {
                        CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", k == 3 ? "8" : "0", 1) == 0);
                        CHECK(setenv("PRT_DCN_CUDA_WGGRID", caps[k == 3 ? 1 : k], 1) == 0);
                        y = run_dset(&d, 2, types[ti], RUN_CUDA);
                        CHECK_MSG(!memcmp(y, y0, bytes), "%s %s%s, grid %s%s: not the output of one tile a block",
                                  fused_cases[ci].name, tiles[t], sp ? " split 3" : "", caps[k == 3 ? 1 : k],
                                  k == 3 ? " without staging" : "");
                        free(y);
                        compared++;
                    }
                    free(y0);
                }
            }
            dset_free(&d);
        }
    }
    CHECK(unsetenv("PRT_DCN_CUDA_WGGRID") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_WGFLAGS") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK_MSG(compared >= 150, "only %d comparisons", compared);
    printf("  persistent wgmma tiles: %d outputs equal to one tile a block\n", compared);
}

/* Shapes whose images the column strips (col_place) cut into whole tiles of 128 columns: strips
 * of 8, 4 and 2 rows with an image's last strip shorter (4 rows, 1 row) or whole, two deformable
 * groups (a corner table rebuilt inside the K loop), stride 2, several images. */
static const dcase strip_cases[] = {
    {"strip_c64_h12_w64_b2", 2, 64, 12, 64, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
    {"strip_c128_h20_w32_dg2_b3", 3, 128, 20, 32, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 2, 1, 2.0},
    {"strip_s2_c64_h32_w128_m128", 1, 64, 32, 128, 128, 3, 3, {2, 2}, {1, 1}, {1, 1}, 1, 1, 0, 2.0},
    {"strip_c64_h9_w128", 1, 64, 9, 128, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0},
};
#define NB_STRIP ((int)(sizeof(strip_cases) / sizeof(strip_cases[0])))

/* The strips' rows the host picks (no device needed): the 64-k tile (3) takes 8, 4 or 2 rows
 * where every strip of an image, its last too, is whole tiles of 128 columns, or the rows
 * PRT_DCN_CUDA_TH asks where the shape allows them; the other tiles are always row-major. */
TEST(dcn_wgmma_strip_rows)
{
    static const struct {
        int64_t hout, wout;
        int tile;
        const char *env;
        int want;
    } rules[] = {
        {92, 160, 3, NULL, 8},  /* case A: 11 strips of 8 rows, the last of 4 */
        {128, 128, 3, NULL, 8}, /* case C */
        {64, 64, 3, NULL, 8},   /* case F */
        {100, 168, 3, NULL, 1}, /* case D's columns: 8 x 168 is not whole tiles of 128 */
        {92, 160, 1, NULL, 1},  /* only the 64-k tile has strips */
        {92, 160, 1, "8", 1},
        {92, 160, 4, "8", 1},
        {92, 160, 3, "4", 4},
        {92, 160, 3, "2", 1},   /* 2 x 160 is not whole tiles */
        {92, 160, 3, "1", 1},
        {12, 64, 3, NULL, 8},   /* last strip 4 rows */
        {9, 128, 3, NULL, 8},   /* last strip 1 row */
        {10, 64, 3, NULL, 8},   /* last strip 2 rows: one tile */
        {3, 128, 3, NULL, 2},   /* 3 % 8 and 3 % 4 rows are no power of two: strips of 2, the last of 1 */
        {6, 96, 3, NULL, 1},    /* a last strip of 6 rows, or of 2 x 96 columns (not whole tiles) */
    };
    int i;
    for (i = 0; i < (int)(sizeof rules / sizeof rules[0]); i++) {
        prt__dcn_shape s;
        memset(&s, 0, sizeof s);
        s.n = 1;
        s.cin = s.cout = 64;
        s.h = s.hout = rules[i].hout;
        s.w = s.wout = rules[i].wout;
        s.kh = s.kw = 3;
        if (rules[i].env) CHECK(setenv("PRT_DCN_CUDA_TH", rules[i].env, 1) == 0);
        else CHECK(unsetenv("PRT_DCN_CUDA_TH") == 0);
        CHECK_MSG(prt__deform_conv_wgmma_strips(&s, rules[i].tile) == rules[i].want,
                  "%lldx%lld tile %d TH=%s: strips of %d rows, expected %d", (long long)rules[i].hout,
                  (long long)rules[i].wout, rules[i].tile, rules[i].env ? rules[i].env : "(unset)",
                  prt__deform_conv_wgmma_strips(&s, rules[i].tile), rules[i].want);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_TH") == 0);
}

/* The 64-k wgmma tile with its columns in strips of 2, 4 and 8 output rows (PRT_DCN_CUDA_TH),
 * one tile a block and persistent (grid of 2, with and without the next tile's offsets copied
 * ahead), against the row-major order (PRT_DCN_CUDA_TH=1): the same sums in the same order, so
 * the outputs are equal bit for bit; and with its default strips against float64. Without
 * split-K (the strips need the staged output). */
TEST(dcn_cuda_wgmma_strips)
{
    static const char *ths[] = {"2", "4", "8"};
    static const char *forms[][2] = {{"4", ""}, {"0", "2"}, {"8", "2"}}; /* WGFLAGS, WGGRID */
    static const prt_dtype types[] = {PRT_DTYPE_F16, PRT_DTYPE_BF16};
    int ci, h, f, ti, applied = 0, compared = 0, vs_f64 = 0;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    CHECK(setenv("PRT_DCN_CUDA_SPLIT", "1", 1) == 0);
    for (ci = 0; ci < NB_FUSED + NB_STRIP; ci++) {
        const dcase *c = ci < NB_FUSED ? &fused_cases[ci] : &strip_cases[ci - NB_FUSED];
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        dset_make(&d, c, 8100 + (uint64_t)ci, 1, 6.0);
        dset_shape(&d, &p, &s);
        if (prt__deform_conv_wgmma_fits(&p, &s, 3)) {
            CHECK(setenv("PRT_DCN_CUDA_KERNEL", "wgmma256x128k64", 1) == 0);
            for (h = 0; h < 3; h++) {
                CHECK(setenv("PRT_DCN_CUDA_TH", ths[h], 1) == 0);
                if (prt__deform_conv_wgmma_strips(&s, 3) != atoi(ths[h])) continue;
                applied++;
                for (ti = 0; ti < 2; ti++) {
                    const size_t bytes = d.nout * prt_dtype_size(types[ti]);
                    void *y0, *y;
                    CHECK(setenv("PRT_DCN_CUDA_TH", "1", 1) == 0);
                    CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", "4", 1) == 0);
                    CHECK(unsetenv("PRT_DCN_CUDA_WGGRID") == 0);
                    y0 = run_dset(&d, 2, types[ti], RUN_CUDA);
                    CHECK(setenv("PRT_DCN_CUDA_TH", ths[h], 1) == 0);
                    for (f = 0; f < 3; f++) {
                        CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", forms[f][0], 1) == 0);
                        if (forms[f][1][0]) CHECK(setenv("PRT_DCN_CUDA_WGGRID", forms[f][1], 1) == 0);
                        else CHECK(unsetenv("PRT_DCN_CUDA_WGGRID") == 0);
                        y = run_dset(&d, 2, types[ti], RUN_CUDA);
                        CHECK_MSG(!memcmp(y, y0, bytes), "%s, strips of %s rows, %s %s: not the row-major output",
                                  c->name, ths[h], ti ? "bf16" : "f16",
                                  f == 0 ? "one tile a block" : f == 1 ? "grid 2" : "grid 2 without copies");
                        free(y);
                        compared++;
                    }
                    free(y0);
                }
            }
        }
        CHECK(unsetenv("PRT_DCN_CUDA_WGFLAGS") == 0);
        CHECK(unsetenv("PRT_DCN_CUDA_WGGRID") == 0);
        CHECK(unsetenv("PRT_DCN_CUDA_TH") == 0);
        if (ci >= NB_FUSED && prt__deform_conv_wgmma_fits(&p, &s, 3)) { /* the default strips, against float64 */
            double *ref = reference(&d), abs_err, max_ref;
            void *y;
            CHECK(setenv("PRT_DCN_CUDA_KERNEL", "wgmma256x128k64", 1) == 0);
            CHECK_MSG(prt__deform_conv_wgmma_strips(&s, 3) > 1, "%s: the 64-k tile takes no strips by default",
                      c->name);
            y = run_dset(&d, 2, PRT_DTYPE_F16, RUN_CUDA);
            rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, &max_ref);
            CHECK_MSG(abs_err <= 1e-2, "%s (strips of %d rows): f16 max abs error %.3g > 1e-2 (max |y| %.3g)", c->name,
                      prt__deform_conv_wgmma_strips(&s, 3), abs_err, max_ref);
            CHECK_MSG(max_ref >= 2.0, "%s: outputs too small to be meaningful (%.3g)", c->name, max_ref);
            vs_f64++;
            free(y);
            free(ref);
        }
        dset_free(&d);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK_MSG(applied >= 12 && vs_f64 == NB_STRIP, "only %d (case, rows) with strips, %d against float64", applied,
              vs_f64);
    printf("  64-k wgmma tile in column strips: %d outputs on %d (case, rows) equal to row-major; %d cases "
           "against float64\n", compared, applied, vs_f64);
}

/* The 16-bit wgmma tiles of one chunk a step and 128 rows or fewer (of
 * those, the 64-row tile has no room for the copies), one tile a block, where K
 * holds several segments (deformable groups) of at least three steps: each
 * segment's first step copies the next segment's offsets and mask into
 * shared memory (in place of a fourth A stage) and its corner table is
 * built from there. The outputs equal, bit for bit, those of the tables
 * built from global memory (PRT_DCN_CUDA_WGFLAGS bit 4), which the tests
 * above hold against float64 (the default takes the copies), also with K
 * split in three (splits that start inside a segment). */
TEST(dcn_cuda_wgmma_segment_staging)
{
    static const char *tiles[] = {"wgmma256x128", "wgmma128x128", "wgmma64x128"};
    static const prt_dtype types[] = {PRT_DTYPE_F16, PRT_DTYPE_BF16};
    int t, ci, sp, ti, staged = 0, compared = 0;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    for (ci = 0; ci < NB_FUSED; ci++) {
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        dset_make(&d, &fused_cases[ci], 7900 + (uint64_t)ci, 1, 6.0);
        dset_shape(&d, &p, &s);
        for (t = 0; t < 3; t++) {
            if (!prt__deform_conv_wgmma_fits(&p, &s, t) || !prt__deform_conv_wgmma_seg_staged(&p, &s, t)) continue;
            CHECK(setenv("PRT_DCN_CUDA_KERNEL", tiles[t], 1) == 0);
            staged++;
            for (sp = 0; sp < 2; sp++) {
                split_k3(sp);
                for (ti = 0; ti < 2; ti++) {
                    const size_t bytes = d.nout * prt_dtype_size(types[ti]);
                    void *y0, *y;
                    /* bit 2: one tile a block also where the 256-row tile would take waves */
                    CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", "20", 1) == 0);
                    y0 = run_dset(&d, 2, types[ti], RUN_CUDA);
                    CHECK(setenv("PRT_DCN_CUDA_WGFLAGS", "4", 1) == 0);
                    y = run_dset(&d, 2, types[ti], RUN_CUDA);
                    CHECK_MSG(!memcmp(y, y0, bytes), "%s %s%s %s: the staged segments' output differs",
                              fused_cases[ci].name, tiles[t], sp ? " split 3" : "", ti ? "bf16" : "f16");
                    free(y);
                    free(y0);
                    compared++;
                }
            }
        }
        dset_free(&d);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_WGFLAGS") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK_MSG(staged >= 4, "only %d (tile, case) pairs copy their segments ahead", staged);
    printf("  wgmma tiles with segments copied ahead: %d outputs on %d (tile, case) pairs equal to the "
           "unstaged ones\n", compared, staged);
}

/* The grouped kernel on its shapes, fp16 against float64, with the default
 * groups per block and with 1 and 3 (PRT_DCN_CUDA_GPB: a last block with
 * fewer groups), then bfloat16 against float64 and the CPU's fp32 path. */
TEST(dcn_cuda_grouped_kernel)
{
    static const char *gpb[] = {NULL, "1", "3"};
    int ci, k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_grouped_available()) SKIP("no device of compute capability 8.0 (or no image for it)");
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "grouped128", 1) == 0);
    for (k = 0; k < 3; k++) {
        if (gpb[k]) CHECK(setenv("PRT_DCN_CUDA_GPB", gpb[k], 1) == 0);
        else CHECK(unsetenv("PRT_DCN_CUDA_GPB") == 0);
        for (ci = 0; ci < NB_GROUPED; ci++) {
            dset d;
            prt__dcn_params p;
            prt__dcn_shape s;
            double *ref, abs_err, max_ref;
            void *y;
            dset_make(&d, &grouped_cases[ci], 7500 + (uint64_t)ci, 1, 6.0);
            dset_shape(&d, &p, &s);
            CHECK_MSG(prt__deform_conv_wgmma_fits(&p, &s, 7), "%s: the grouped kernel does not fit",
                      grouped_cases[ci].name);
            CHECK_STR_CONTAINS(prt__deform_conv_cuda_fused_tile(&p, &s), "grouped128");
            ref = reference(&d);
            y = run_dset(&d, 2, PRT_DTYPE_F16, RUN_CUDA);
            rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, &max_ref);
            CHECK_MSG(abs_err <= 1e-2, "%s (groups per block %s): f16 max abs error %.3g > 1e-2 (max |y| %.3g)",
                      grouped_cases[ci].name, gpb[k] ? gpb[k] : "default", abs_err, max_ref);
            CHECK_MSG(max_ref >= 1.5, "%s: outputs too small to be meaningful (%.3g)", grouped_cases[ci].name,
                      max_ref);
            if (!gpb[k])
                printf("  %-26s CUDA grouped128 f16: max |y| %5.2f, max abs err %.2e vs f64\n",
                       grouped_cases[ci].name, max_ref, abs_err);
            free(y);
            free(ref);
            dset_free(&d);
        }
    }
    CHECK(unsetenv("PRT_DCN_CUDA_GPB") == 0);
    check_bf16_cases(grouped_cases, NB_GROUPED, RUN_CUDA, RUN_CPU_SERIAL, "grouped128");
    /* fp32 (3xTF32) against float64, default groups per block and 3 */
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "grouped128_3xtf32", 1) == 0);
    for (k = 0; k < 2; k++) {
        if (k) CHECK(setenv("PRT_DCN_CUDA_GPB", "3", 1) == 0);
        for (ci = 0; ci < NB_GROUPED; ci++) {
            dset d;
            prt__dcn_params p;
            prt__dcn_shape s;
            double *ref, err;
            void *y;
            dset_make(&d, &grouped_cases[ci], 7600 + (uint64_t)ci, 0, 6.0);
            dset_shape(&d, &p, &s);
            CHECK_MSG(prt__deform_conv_wgmma_fits(&p, &s, 8), "%s: the fp32 grouped kernel does not fit",
                      grouped_cases[ci].name);
            CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), 8);
            ref = reference(&d);
            y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
            err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
            CHECK_MSG(err <= PRT_DCN_CUDA_F32_TOL, "%s (grouped128_3xtf32): f32 relative error %.3g",
                      grouped_cases[ci].name, err);
            if (!k) printf("  %-26s CUDA grouped128_3xtf32: relative error %.2e vs f64\n", grouped_cases[ci].name, err);
            free(y);
            free(ref);
            dset_free(&d);
        }
    }
    CHECK(unsetenv("PRT_DCN_CUDA_GPB") == 0);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
}

/* Which shapes take the fused kernel: by default one group of at most 64 output channels; the
 * environment forces it on or off, and the workspace covers it whatever the variable said when
 * it was asked for. */
TEST(dcn_cuda_fused_applies)
{
    dset d;
    prt__dcn_params p;
    prt__dcn_shape s;
    dset_make(&d, &fused_cases[1], 1, 1, 1.0);
    dset_shape(&d, &p, &s);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK(prt__deform_conv_cuda_fused_fits(&p, &s));
    CHECK(prt__deform_conv_cuda_fused_applies(&p, &s, 1)); /* Cout 40, one group */
    CHECK(!prt__deform_conv_cuda_fused_applies(&p, &s, 0)); /* fp32 */
    s.cout = 128;
    CHECK(!prt__deform_conv_cuda_fused_applies(&p, &s, 1)); /* im2col + cuBLAS by default */
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "fused", 1) == 0);
    CHECK(prt__deform_conv_cuda_fused_applies(&p, &s, 1));
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "fused64x64", 1) == 0);
    CHECK(prt__deform_conv_cuda_fused_applies(&p, &s, 1));
    CHECK_STR_CONTAINS(prt__deform_conv_cuda_fused_tile(&p, &s), "fused64x64");
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    s.cout = 40;
    CHECK(prt__deform_conv_cuda_fused_workspace(&p, &s) > 0);
    CHECK(prt__deform_conv_cuda_workspace(&p, &s, 1) >= prt__deform_conv_cuda_fused_workspace(&p, &s));
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "im2col", 1) == 0);
    CHECK(!prt__deform_conv_cuda_fused_applies(&p, &s, 1));
    CHECK(prt__deform_conv_cuda_workspace(&p, &s, 1) >= prt__deform_conv_cuda_fused_workspace(&p, &s));
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    s.cin = 12; /* 12 / group 1 is no multiple of 8 */
    CHECK(!prt__deform_conv_cuda_fused_fits(&p, &s));
    CHECK(!prt__deform_conv_cuda_fused_applies(&p, &s, 1));
    CHECK(prt__deform_conv_cuda_fused_workspace(&p, &s) == 0);
    s.cin = 32;
    p.deformable_group = 8; /* 4 channels per deformable group */
    CHECK(!prt__deform_conv_cuda_fused_fits(&p, &s));
    dset_free(&d);
}

/* fp32 through the wgmma kernel's 3xTF32 tiles (forced by PRT_DCN_CUDA_KERNEL: "fused", the tile
 * chosen from the shape, or a tile name) against float64, within fp32's bound (PRT_DCN_CUDA_F32_TOL);
 * the im2col + cuBLAS SGEMM path's error on the same inputs is printed beside it. plug_run fills
 * the device output with NaN before each run, so an element left unwritten fails rel_err. */
static void check_f32_fused(const char *kernel, int print)
{
    int ci, ran = 0;
    for (ci = 0; ci < NB_FUSED; ci++) {
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        double *ref, err, err_im2col;
        void *y;
        dset_make(&d, &fused_cases[ci], 7300 + (uint64_t)ci, 0, 6.0);
        dset_shape(&d, &p, &s);
        if (!strcmp(kernel, "fused") ? prt__deform_conv_wgmma_tile(&p, &s, PRT_DCN_F32) < 0
                                     : !prt__deform_conv_wgmma_fits(&p, &s, strstr(kernel, "256x128")   ? 4
                                                                            : strstr(kernel, "128x128") ? 5
                                                                                                        : 6)) {
            dset_free(&d);
            continue;
        }
        ran++;
        ref = reference(&d);
        CHECK(setenv("PRT_DCN_CUDA_KERNEL", kernel, 1) == 0);
        CHECK_MSG(prt__deform_conv_cuda_f32_tile(&p, &s, 0) >= 4, "%s: %s does not run the 3xTF32 kernel",
                  fused_cases[ci].name, kernel);
        y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
        err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
        free(y);
        CHECK(setenv("PRT_DCN_CUDA_KERNEL", "im2col", 1) == 0);
        CHECK(prt__deform_conv_cuda_f32_tile(&p, &s, 0) < 0);
        y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
        err_im2col = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
        free(y);
        CHECK_MSG(err <= PRT_DCN_CUDA_F32_TOL, "%s (%s): f32 relative error %.3g > %.0e", fused_cases[ci].name,
                  kernel, err, PRT_DCN_CUDA_F32_TOL);
        if (print)
            printf("  %-22s CUDA f32 %s: relative error %.2e vs f64 (im2col + SGEMM %.2e)\n", fused_cases[ci].name,
                   kernel, err, err_im2col);
        free(ref);
        dset_free(&d);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK_MSG(ran >= 2, "%s: only %d cases", kernel, ran);
}

TEST(dcn_cuda_f32_3xtf32_every_tile)
{
    static const char *tiles[] = {"fused", "wgmma3xtf32_256x128", "wgmma3xtf32_128x128", "wgmma3xtf32_64x128"};
    int t;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    for (t = 0; t < 4; t++) check_f32_fused(tiles[t], 1);
    CHECK(setenv("PRT_DCN_CUDA_SPLIT", "3", 1) == 0); /* K split in three: partial sums added by a last kernel */
    for (t = 1; t < 4; t++) check_f32_fused(tiles[t], 0);
    CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
}

/* The wgmma tiles writing to an output that is not 16-byte aligned (2 bytes into its allocation
 * for 16-bit types, 4 for fp32): whole runs of a row cannot be stored as 16-byte units there, so
 * every element is written alone; the results must be the same, and nothing around the output
 * written (plug_run checks the bytes before and after it). */
TEST(dcn_cuda_wgmma_unaligned_output)
{
    static const char *tiles[] = {"wgmma256x128", "wgmma128x128", "wgmma64x128", "wgmma256x128k64"};
    static const char *f32_tiles[] = {"wgmma3xtf32_256x128", "wgmma3xtf32_128x128", "wgmma3xtf32_64x128"};
    int t;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    g_out_off = 2;
    for (t = 0; t < 4; t++) check_fused(tiles[t]);
    g_out_off = 4;
    for (t = 0; t < 3; t++) check_f32_fused(f32_tiles[t], 0);
    g_out_off = 0;
}

/* A long K (2304: 256 channels x 9 taps) through every 3xTF32 tile against float64: the tensor
 * cores' accumulation truncates, and the kernel flushes it into an fp32 sum every 576 k (4 segments
 * here); with split-K in three (48 steps a split, still flushed) too. The error without flushes
 * (PRT_DCN_CUDA_F32_FLUSH=0) is printed beside it. */
TEST(dcn_cuda_f32_3xtf32_long_k)
{
    static const dcase lk = {"long_k_2304", 2, 256, 9, 11, 96, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, 1, 1, 2.0};
    static const char *tiles[] = {"wgmma3xtf32_256x128", "wgmma3xtf32_128x128", "wgmma3xtf32_64x128"};
    dset d;
    double *ref;
    int t, sp;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    dset_make(&d, &lk, 7777, 0, 1.0);
    ref = reference(&d);
    for (sp = 0; sp < 2; sp++)
        for (t = 0; t < 3; t++) {
            double err, err_nf;
            void *y;
            CHECK(setenv("PRT_DCN_CUDA_KERNEL", tiles[t], 1) == 0);
            if (sp) CHECK(setenv("PRT_DCN_CUDA_SPLIT", "3", 1) == 0);
            y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
            err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
            free(y);
            CHECK(setenv("PRT_DCN_CUDA_F32_FLUSH", "0", 1) == 0);
            y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
            err_nf = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
            free(y);
            CHECK(unsetenv("PRT_DCN_CUDA_F32_FLUSH") == 0);
            CHECK(unsetenv("PRT_DCN_CUDA_SPLIT") == 0);
            CHECK_MSG(err <= PRT_DCN_CUDA_F32_TOL, "%s%s: f32 relative error %.3g > %.0e", tiles[t],
                      sp ? " split 3" : "", err, PRT_DCN_CUDA_F32_TOL);
            printf("  %-22s CUDA f32 %s%s: relative error %.2e vs f64 (no flushes: %.2e)\n", lk.name, tiles[t],
                   sp ? " split 3" : "", err, err_nf);
        }
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "im2col", 1) == 0);
    {
        void *y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
        printf("  %-22s CUDA f32 im2col + SGEMM: relative error %.2e vs f64\n", lk.name,
               rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL));
        free(y);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    free(ref);
    dset_free(&d);
}

/* The wgmma entry point refuses a tile of the other element type, or one out of range, with a
 * message and before it touches the device or the output (no GPU needed). */
TEST(dcn_cuda_wgmma_refuses_mismatched_tiles)
{
    dset d;
    prt__dcn_params p;
    prt__dcn_shape s;
    char err[256];
    float y = 1.5f;
    static const struct {
        int elt, tile;
    } bad[] = {{PRT_DCN_F32, 0}, {PRT_DCN_F32, 3}, {PRT_DCN_F16, 4}, {PRT_DCN_BF16, 6}, {PRT_DCN_F32, 7},
               {PRT_DCN_F16, -1}};
    size_t i;
    dset_make(&d, &fused_cases[7], 1, 0, 1.0); /* every tile fits this shape */
    dset_shape(&d, &p, &s);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK_EQ_INT(prt__deform_conv_wgmma(&p, &s, bad[i].elt, bad[i].tile, NULL, NULL, NULL, NULL, NULL, &y, NULL,
                                            NULL, err, sizeof err),
                     -1);
        CHECK_STR_CONTAINS(err, "does not take this shape and type");
        CHECK(y == 1.5f);
    }
    CHECK(prt__deform_conv_wgmma_tile_f32(4) && prt__deform_conv_wgmma_tile_f32(6));
    CHECK(!prt__deform_conv_wgmma_tile_f32(3) && !prt__deform_conv_wgmma_tile_f32(7) && !prt__deform_conv_wgmma_tile_f32(-1));
    dset_free(&d);
}

/* Which kernels of deform_conv_wgmma.cu run here, decided from the image the driver loaded: the
 * grouped kernel on every device of compute capability 8.0 or more (the file carries compute_80
 * PTX), the wgmma tiles on 9.0 from the sm_90a image alone (PLUGRT_DCN_SM90A; not under
 * CUDA_FORCE_PTX_JIT, where the driver compiles the compute_80 PTX, whose wgmma bodies are empty).
 * Without the wgmma tiles, a wgmma tile is refused with an error that says what it needs and the
 * output untouched, no tactic list holds one, and the default policy keeps the grouped kernel for
 * case E's shape and another kernel for case A's. */
TEST(dcn_cuda_kernel_images)
{
    int dev = 0, major = 0, minor = 0, forced, want_wg = 0;
    const char *fj = getenv("CUDA_FORCE_PTX_JIT");
    prt__dcn_params pa = {{1, 1}, {1, 1}, {1, 1}, 1, 1}, pe = {{1, 1}, {1, 1}, {1, 1}, 32, 1};
    prt__dcn_shape sa = {1, 128, 92, 160, 128, 3, 3, 92, 160, 1}, se = {1, 512, 50, 84, 512, 3, 3, 50, 84, 1};
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    forced = fj && *fj && strcmp(fj, "0") != 0;
    CHECK(cudaGetDevice(&dev) == cudaSuccess);
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess);
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess);
#ifdef PLUGRT_DCN_SM90A
    want_wg = major == 9 && minor == 0 && !forced;
#endif
    printf("  compute capability %d.%d%s: wgmma tiles %s, grouped kernel %s\n", major, minor,
           forced ? " (CUDA_FORCE_PTX_JIT)" : "", prt__deform_conv_wgmma_available() ? "run" : "do not run",
           prt__deform_conv_grouped_available() ? "runs" : "does not run");
    CHECK_EQ_INT(prt__deform_conv_wgmma_available(), want_wg);
    CHECK_EQ_INT(prt__deform_conv_grouped_available(), major >= 8);
    CHECK_EQ_INT(prt__deform_conv_wgmma_tile_available(3), want_wg);
    CHECK_EQ_INT(prt__deform_conv_wgmma_tile_available(8), major >= 8);
    CHECK(!prt__deform_conv_wgmma_tile_available(-1) && !prt__deform_conv_wgmma_tile_available(9));
    CHECK_EQ_INT(prt__deform_conv_wgmma_default_tile(&pe, &se, PRT_DCN_F16), major >= 8 ? 7 : -1);
    CHECK_EQ_INT(prt__deform_conv_wgmma_default_tile(&pe, &se, PRT_DCN_F32), major >= 8 ? 8 : -1);
    CHECK_EQ_INT(prt__deform_conv_wgmma_default_tile(&pa, &sa, PRT_DCN_F16), want_wg ? 3 : -1);
    {
        /* The grouped kernel's corner table takes 4 KB a tap: a 7x7 kernel's 196 KB runs only where the device
         * gives a block that much (compute capability 9.0: 227 KB; not 8.0: 163 KB), 9x9 fits nowhere. */
        int optin = 0;
        prt__dcn_shape s7 = se;
        s7.kh = s7.kw = 7;
        CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess);
        CHECK(prt__deform_conv_wgmma_fits(&pe, &s7, 7));
        CHECK_EQ_INT(prt__deform_conv_wgmma_runs(&pe, &s7, 7), major >= 8 && optin >= 49 * 128 * 32);
        CHECK_EQ_INT(prt__deform_conv_wgmma_default_tile(&pe, &s7, PRT_DCN_F16),
                     major >= 8 && optin >= 49 * 128 * 32 ? 7 : -1);
        s7.kh = s7.kw = 9;
        CHECK(!prt__deform_conv_wgmma_fits(&pe, &s7, 7) && !prt__deform_conv_wgmma_runs(&pe, &s7, 7));
    }
    if (!want_wg) {
        char err[256];
        float y = 1.5f;
        int32_t ids[16], n, i;
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        dset_make(&d, &fused_cases[7], 1, 0, 1.0); /* every wgmma tile fits this shape */
        dset_shape(&d, &p, &s);
        err[0] = 0;
        CHECK_EQ_INT(prt__deform_conv_wgmma(&p, &s, PRT_DCN_F16, 1, NULL, NULL, NULL, NULL, NULL, &y, NULL, NULL, err,
                                            sizeof err),
                     -1);
        CHECK_STR_CONTAINS(err, "needs compute capability 9.0 and the sm_90a image");
        CHECK(y == 1.5f);
        CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), -1);
        CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_F32), -1);
        for (i = 0; i < 2; i++) {
            n = prt__deform_conv_cuda_tactics(&p, &s, &s, &s, i, ids, 16);
            CHECK(n >= 1 && n <= 16);
            while (n-- > 0)
                CHECK_MSG(ids[n] < PRT_DCN_TACTIC_WGMMA || ids[n] >= PRT_DCN_TACTIC_GROUPED,
                          "tactic %d listed without the wgmma tiles", (int)ids[n]);
        }
        dset_free(&d);
    }
}

/* Which fp32 kernel runs: by default (a device of compute capability 9.0) the 3xTF32 tile of the
 * shape, by output channels per group; a tactic picks a tile or im2col; PRT_DCN_CUDA_KERNEL wins over
 * both; a 16-bit tile never runs for fp32; shapes the fused kernel does not take keep im2col. */
TEST(dcn_cuda_f32_kernel_choice)
{
    dset d;
    prt__dcn_params p;
    prt__dcn_shape s;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    dset_make(&d, &fused_cases[7], 1, 0, 1.0); /* Cout 300, one group */
    dset_shape(&d, &p, &s);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), 4);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_F32 + 1), 5);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_IM2COL), -1);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_WGMMA), -1); /* a 16-bit tile */
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "im2col", 1) == 0);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_F32), -1);
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "wgmma3xtf32_64x128", 1) == 0);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_F32), 6);
    CHECK(!prt__deform_conv_cuda_fused_applies(&p, &s, 1)); /* an fp32 tile name for fp16 data */
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "wgmma256x128", 1) == 0);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), -1);
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    CHECK(prt__deform_conv_cuda_workspace(&p, &s, 0) >= prt__deform_conv_wgmma_workspace(&p, &s, PRT_DCN_F32));
    dset_free(&d);
    dset_make(&d, &fused_cases[2], 1, 0, 1.0); /* 4 groups of 5 output channels: the grouped kernel */
    dset_shape(&d, &p, &s);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), 8);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_F32 + 2), 6);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_GROUPED_F32), 8);
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, PRT_DCN_TACTIC_GROUPED), -1); /* a 16-bit tile */
    s.cout = 4 * 100; /* 100 per group */
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), 5);
    s.cin = 4 * 12; /* 12 channels per group: no multiple of 8 */
    CHECK_EQ_INT(prt__deform_conv_cuda_f32_tile(&p, &s, 0), -1);
    dset_free(&d);
}

/* The 16-bit default policy on the benchmark shapes (bench/NOTES-gpu.md,
 * v17): the 64-k wgmma tile for one group of at least 64 output channels
 * where it fits with a block for at least every other multiprocessor (A,
 * C, F); 128x128 where the channels of a deformable group leave it out (D);
 * im2col + cuBLAS for few columns (B), for fewer than 64 output channels
 * the mma.sync kernel (no wgmma tile); the grouped kernel for groups (E). */
TEST(dcn_cuda_f16_default_policy)
{
    static const struct {
        int64_t n, cin, cout, h, w, stride, group, dg;
        int tile; /* prt__deform_conv_wgmma_default_tile; -1: another kernel */
        int32_t first; /* the first tactic listed */
    } k[] = {
        {1, 128, 128, 92, 160, 1, 1, 1, 3, PRT_DCN_TACTIC_WGMMA + 3},  /* A */
        {1, 512, 512, 23, 40, 1, 1, 1, -1, PRT_DCN_TACTIC_IM2COL},     /* B */
        {1, 64, 64, 128, 128, 1, 1, 1, 3, PRT_DCN_TACTIC_WGMMA + 3},   /* C */
        {2, 128, 128, 200, 336, 2, 1, 4, 1, PRT_DCN_TACTIC_WGMMA + 1}, /* D */
        {1, 512, 512, 50, 84, 1, 32, 1, 7, PRT_DCN_TACTIC_GROUPED},    /* E */
        {32, 256, 256, 64, 64, 1, 1, 1, 3, PRT_DCN_TACTIC_WGMMA + 3},  /* F */
        {1, 64, 40, 128, 128, 1, 1, 1, -1, PRT_DCN_TACTIC_FUSED + 2},  /* 40 outputs: mma.sync 64x64 */
    };
    size_t i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    if (!prt__deform_conv_wgmma_available()) SKIP("no device of compute capability 9.0");
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    for (i = 0; i < sizeof k / sizeof k[0]; i++) {
        prt__dcn_params p = {{k[i].stride, k[i].stride}, {1, 1}, {1, 1}, k[i].group, k[i].dg};
        prt__dcn_shape s = {k[i].n, k[i].cin, k[i].h, k[i].w, k[i].cout, 3, 3, 0, 0, 1};
        int32_t ids[16];
        s.hout = (k[i].h + 2 - 3) / k[i].stride + 1;
        s.wout = (k[i].w + 2 - 3) / k[i].stride + 1;
        CHECK_EQ_INT(prt__deform_conv_wgmma_default_tile(&p, &s, PRT_DCN_F16), k[i].tile);
        CHECK(prt__deform_conv_cuda_tactics(&p, &s, &s, &s, 1, ids, 16) >= 1);
        CHECK_EQ_INT(ids[0], k[i].first);
        CHECK_EQ_INT(prt__deform_conv_cuda_fused_applies(&p, &s, 1), k[i].first != PRT_DCN_TACTIC_IM2COL);
    }
}

/* NaN and infinite offsets sample 0 in the fused kernel too. */
TEST(dcn_cuda_fused_nonfinite_offsets)
{
    dset d;
    double *ref, abs_err;
    size_t k;
    void *y;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    CHECK(setenv("PRT_DCN_CUDA_KERNEL", "fused", 1) == 0);
    dset_make(&d, &fused_cases[5], 4343, 1, 6.0);
    for (k = 0; k < d.nel[1]; k += 7) d.in[1][k] = (k / 7) % 3 == 0 ? NAN : (k / 7) % 3 == 1 ? INFINITY : -INFINITY;
    ref = reference(&d);
    y = run_dset(&d, 2, PRT_DTYPE_F16, RUN_CUDA);
    rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, NULL);
    CHECK_MSG(abs_err <= 1e-2, "fused, non-finite offsets: max abs error %.3g (inf: a non-finite output)", abs_err);
    free(y);
    free(ref);
    dset_free(&d);
    if (prt__deform_conv_wgmma_available()) { /* fp32 through the 3xTF32 kernel */
        double err;
        dset_make(&d, &fused_cases[5], 4344, 0, 6.0);
        for (k = 0; k < d.nel[1]; k += 7) d.in[1][k] = (k / 7) % 3 == 0 ? NAN : (k / 7) % 3 == 1 ? INFINITY : -INFINITY;
        ref = reference(&d);
        y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
        err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
        CHECK_MSG(err <= PRT_DCN_CUDA_F32_TOL, "3xTF32, non-finite offsets: relative error %.3g", err);
        free(y);
        free(ref);
        dset_free(&d);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
}

/* Non-finite x through every CUDA kernel that takes the shapes (check_nonfinite_x): the corners
 * outside the image read the kernels' zero row (or nothing), never pixel 0. */
TEST(dcn_cuda_nonfinite_x)
{
    static const char *kernels[] = {"im2col", "fused64x64", "wgmma128x128", "wgmma64x128", "grouped128"};
    int k;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (k = 0; k < 5; k++) {
        if (k >= 2 && !prt__deform_conv_wgmma_tile_available(k == 4 ? 7 : 0)) continue;
        CHECK(setenv("PRT_DCN_CUDA_KERNEL", kernels[k], 1) == 0);
        check_nonfinite_x(&fused_cases[0], RUN_CUDA, kernels[k]);
        check_nonfinite_x(&grouped_cases[0], RUN_CUDA, kernels[k]);
    }
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
}

/* The CUDA kernels are the plugin's tactics on the CUDA device (none on the
 * CPU): im2col always, the four fused tiles in fp16 where the kernel fits,
 * the default policy's choice first; both styles list the same. */
TEST(dcn_tactics_listed_per_device)
{
    int version;
    for (version = 1; version <= 2; version++) {
        dset d;
        fields5 f;
        plug pl;
        prt_tensor_desc in[5], out;
        prt_dyn_tensor_desc din[5], dout;
        prt_msg m = {g_msg, sizeof(g_msg)};
        int32_t ids[16], n, i, nb_in, seen = 0;
        size_t ws = 0;
        prt_dtype t;
        for (t = PRT_DTYPE_F32; t <= PRT_DTYPE_BF16; t++) {
            dset_make(&d, &fused_cases[1], 1, 1, 1.0); /* Cout 40, one group: fused by default in fp16 */
            fields_make(&f, &d.c);
            nb_in = dset_descs(&d, t, in);
            CHECK_OK(plug_create(&pl, version, &f.fc));
            CHECK_MSG(plug_build(&pl, in, nb_in, &out, &ws) == PRT_OK, "%s", g_msg);
            for (i = 0; i < nb_in; i++) {
                din[i].desc = in[i];
                din[i].min = din[i].opt = din[i].max = in[i].dims;
            }
            dout.desc = out;
            dout.min = dout.opt = dout.max = out.dims;
            n = pl.b ? pl.b->ops->get_valid_tactics(pl.b, din, nb_in, &dout, 1, PRT_DEVICE_CPU, ids, 16)
                     : pl.f->ops->build->get_valid_tactics_v2(pl.f, din, nb_in, &dout, 1, PRT_DEVICE_CPU, ids, 16);
            CHECK_EQ_INT(n, 0);
            n = pl.b ? pl.b->ops->get_valid_tactics(pl.b, din, nb_in, &dout, 1, PRT_DEVICE_CUDA, ids, 16)
                     : pl.f->ops->build->get_valid_tactics_v2(pl.f, din, nb_in, &dout, 1, PRT_DEVICE_CUDA, ids, 16);
            if (t == PRT_DTYPE_F32) {
                /* im2col, and on a device of compute capability 9.0 the 3xTF32 tiles that fit, the default
                 * policy's (64x128 for 40 output channels) first */
                prt__dcn_params p;
                prt__dcn_shape s;
                int32_t m;
                dset_shape(&d, &p, &s);
                m = wgmma_f32_tactics(&p, &s);
                CHECK_EQ_INT(n, 1 + popcount32(m));
                CHECK_EQ_INT(ids[0], m ? PRT_DCN_TACTIC_F32 + 2 : PRT_DCN_TACTIC_IM2COL);
                for (i = 0; i < n; i++) seen |= 1 << ids[i];
                CHECK_EQ_INT(seen, (1 << PRT_DCN_TACTIC_IM2COL) | m);
                seen = 0;
            } else {
                prt__dcn_params p;
                prt__dcn_shape s;
                int nw;
                dset_shape(&d, &p, &s);
                nw = nb_wgmma_tiles(&p, &s);
                CHECK_EQ_INT(n, 5 + nw);
                CHECK(ids[0] >= PRT_DCN_TACTIC_FUSED); /* the default policy's tile */
                for (i = 0; i < n; i++) seen |= 1 << ids[i];
                CHECK_EQ_INT(seen, 0x3e | wgmma_tactics(&p, &s)); /* 1..5 and the wgmma tiles that fit, each once */
                CHECK_STR_CONTAINS(pl.b ? pl.b->ops->get_tactic_name(pl.b, 1) : pl.f->ops->build->get_tactic_name(pl.f, 1),
                                   "im2col");
                CHECK_STR_CONTAINS(pl.b ? pl.b->ops->get_tactic_name(pl.b, 4) : pl.f->ops->build->get_tactic_name(pl.f, 4),
                                   "fused64x64");
            }
            CHECK(!(pl.b ? pl.b->ops->set_tactic(pl.b, 15, &m) : pl.f->ops->runtime->set_tactic(pl.f, 15, &m)) ==
                  PRT_OK);
            CHECK_STR_CONTAINS(g_msg, "tactic 15 is not one of its kernels");
            plug_destroy(&pl);
            dset_free(&d);
        }
    }
    {
        /* Shapes: 128 output channels take im2col first; Cin 12 leaves the fused kernel out. */
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        int32_t ids[16];
        dset_make(&d, &fused_cases[1], 1, 1, 1.0);
        dset_shape(&d, &p, &s);
        s.cout = 128;
        CHECK_EQ_INT(prt__deform_conv_cuda_tactics(&p, &s, &s, &s, 1, ids, 16), 5 + nb_wgmma_tiles(&p, &s));
        CHECK_EQ_INT(ids[0], PRT_DCN_TACTIC_IM2COL);
        CHECK_STR_CONTAINS(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_WGMMA), "wgmma256x128");
        CHECK_STR_CONTAINS(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_F32), "wgmma3xtf32_256x128");
        CHECK_STR_CONTAINS(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_GROUPED - 1), "wgmma3xtf32_64x128");
        CHECK_STR_CONTAINS(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_GROUPED), "grouped128");
        CHECK_STR_CONTAINS(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_GROUPED_F32), "grouped128_3xtf32");
        s.cin = 12;
        CHECK_EQ_INT(prt__deform_conv_cuda_tactics(&p, &s, &s, &s, 1, ids, 16), 1);
        CHECK(prt__deform_conv_cuda_tactic_name(PRT_DCN_TACTIC_COUNT) == NULL);
        dset_free(&d);
    }
}

/* Every tactic the plugin lists, run: within the fp16 tolerance of the
 * float64 reference (f32: im2col within 1e-5), both styles. */
TEST(dcn_cuda_every_tactic_vs_f64)
{
    int ci, version;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    CHECK(unsetenv("PRT_DCN_CUDA_KERNEL") == 0);
    for (ci = 0; ci < NB_FUSED; ci++) {
        dset d;
        prt__dcn_params p;
        prt__dcn_shape s;
        int32_t ids[16], n, k;
        double *ref, abs_err, max_ref;
        dset_make(&d, &fused_cases[ci], 9100 + (uint64_t)ci, 1, 6.0);
        dset_shape(&d, &p, &s);
        n = prt__deform_conv_cuda_tactics(&p, &s, &s, &s, 1, ids, 16);
        CHECK_EQ_INT(n, 5 + nb_wgmma_tiles(&p, &s));
        ref = reference(&d);
        for (version = 1; version <= 2; version++)
            for (k = 0; k < n; k++) {
                void *y;
                g_tactic = ids[k];
                y = run_dset(&d, version, PRT_DTYPE_F16, RUN_CUDA);
                rel_err(y, PRT_DTYPE_F16, ref, d.nout, &abs_err, &max_ref);
                CHECK_MSG(abs_err <= 1e-2, "%s v%d tactic %d (%s): f16 max abs error %.3g > 1e-2", fused_cases[ci].name,
                          version, (int)ids[k], prt__deform_conv_cuda_tactic_name(ids[k]), abs_err);
                free(y);
            }
        /* fp32: every tactic listed for it (im2col and the 3xTF32 tiles) within fp32's bound */
        n = prt__deform_conv_cuda_tactics(&p, &s, &s, &s, 0, ids, 16);
        CHECK_EQ_INT(n, 1 + popcount32(wgmma_f32_tactics(&p, &s)));
        for (k = 0; k < n; k++) {
            double err;
            void *y;
            g_tactic = ids[k];
            y = run_dset(&d, 2, PRT_DTYPE_F32, RUN_CUDA);
            err = rel_err(y, PRT_DTYPE_F32, ref, d.nout, NULL, NULL);
            CHECK_MSG(err <= PRT_DCN_CUDA_F32_TOL, "%s tactic %d (%s): f32 relative error %.3g", fused_cases[ci].name,
                      (int)ids[k], prt__deform_conv_cuda_tactic_name(ids[k]), err);
            free(y);
        }
        g_tactic = 0;
        free(ref);
        dset_free(&d);
    }
}

#else
/* A build without CUDA has no fused kernel: the same tests, skipped. */
TEST(dcn_tactics_listed_per_device) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_every_tactic_vs_f64) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_fused_f16_vs_f64) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_fused_f16_every_tile) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_split_k) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_persistent) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_segment_staging) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_strips) { SKIP("no CUDA support in this build"); }
TEST(dcn_wgmma_strip_rows) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_bf16_every_kernel) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_fused_applies) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_fused_nonfinite_offsets) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_nonfinite_x) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_grouped_kernel) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_f32_3xtf32_every_tile) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_f32_kernel_choice) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_f16_default_policy) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_f32_3xtf32_long_k) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_refuses_mismatched_tiles) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_kernel_images) { SKIP("no CUDA support in this build"); }
TEST(dcn_cuda_wgmma_unaligned_output) { SKIP("no CUDA support in this build"); }
#endif

/* Two layers attached to one context share one cuBLAS handle. */
TEST(dcn_cuda_shared_blas_handle)
{
    test_ctx tc;
    fields5 f;
    plug a, b;
    prt_field_plugin *aa = NULL;
    prt_msg m = {g_msg, sizeof(g_msg)};
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    tctx_init(&tc, PRT_DEVICE_CUDA);
    fields_make(&f, &cases[0]);
    CHECK_OK(plug_create(&a, 2, &f.fc));
    CHECK_OK(plug_create(&b, 1, &f.fc));
    CHECK_OK(a.f->ops->runtime->attach_to_context(a.f, &tc.ctx, &aa, &m));
    CHECK_OK(b.b->ops->attach_to_context(b.b, &tc.ctx, &m));
    CHECK_EQ_INT(tc.creates, 1);
    CHECK_EQ_INT(tc.refs, 2);
    aa->ops->destroy(aa);
    CHECK_EQ_INT(tc.refs, 1);
    b.b->ops->detach_from_context(b.b);
    CHECK_EQ_INT(tc.refs, 0);
    plug_destroy(&a);
    plug_destroy(&b);
}

static int ws_v2_calls, ws_v1_calls;
static void count_ws_calls(void *user, const char *line)
{
    (void)user;
    if (strcmp(line, "dcn: get_workspace_size_v2") == 0) ws_v2_calls++;
    if (strcmp(line, "dcn: get_workspace_size") == 0) ws_v1_calls++;
}

/* A CPU engine reserves only the CPU path's workspace: no CUDA column buffer
 * (get_workspace_size_v2 is asked for the engine's device). Batch 32, 64
 * channels in and out, 56x56, 3x3: the CUDA path's column buffer would be
 * 64*9*4 bytes per output pixel for 32*56*56 pixels, about 416 MiB (its
 * 512 MiB slice cap does not bite), in a library built with CUDA. */
TEST(dcn_cpu_engine_reserves_no_cuda_column_buffer)
{
    static const int64_t stride[2] = {1, 1}, pad[2] = {1, 1}, dil[2] = {1, 1}, one = 1;
    const int64_t N = 32, C = 64, H = 56, K = 3;
    prt_field f[5] = {{"stride", stride, PRT_FIELD_INT64, 0, 2}, {"padding", pad, PRT_FIELD_INT64, 0, 2},
                      {"dilation", dil, PRT_FIELD_INT64, 0, 2}, {"group", &one, PRT_FIELD_INT64, 0, 1},
                      {"deformable_group", &one, PRT_FIELD_INT64, 0, 1}};
    prt_fields fc = {f, 5, 0};
    const char *ins[4] = {"x", "offset", "mask", "weight"}, *outs[1] = {"y"};
    prt_dims dx = {4, 0, {N, C, H, H}}, doff = {4, 0, {N, 2 * K * K, H, H}}, dmask = {4, 0, {N, K * K, H, H}},
             dw = {4, 0, {C, C, K, K}};
    prt__dcn_params p;
    prt__dcn_shape s;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_builder_config cfg;
    float *w = calloc((size_t)(C * C * K * K), sizeof(float));
    char err[1024] = "";
    uint64_t cpu_ws, column = (uint64_t)(C * K * K) * 4u * (uint64_t)(N * H * H);

    memset(&p, 0, sizeof p);
    memcpy(p.stride, stride, sizeof stride);
    memcpy(p.padding, pad, sizeof pad);
    memcpy(p.dilation, dil, sizeof dil);
    p.group = p.deformable_group = 1;
    memset(&s, 0, sizeof s);
    s.n = N, s.cin = C, s.h = s.w = H, s.cout = C, s.kh = s.kw = K, s.hout = s.wout = H;
    cpu_ws = prt__deform_conv_cpu_workspace(&p, &s, 0);

    CHECK_OK(prt_network_create(NULL, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &dx));
    CHECK_OK(prt_network_add_input(net, "offset", PRT_DTYPE_F32, &doff));
    CHECK_OK(prt_network_add_input(net, "mask", PRT_DTYPE_F32, &dmask));
    CHECK_OK(prt_network_add_constant(net, "weight", PRT_DTYPE_F32, &dw, w, (size_t)(C * C * K * K) * sizeof(float)));
    CHECK_OK(prt_network_add_layer(net, "dcn", "ModulatedDeformConv2d", "2", "", &fc, ins, 4, outs, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    cfg.device = PRT_DEVICE_CPU;
    prt_set_trace_callback(count_ws_calls, NULL);
    CHECK_MSG(prt_engine_build(net, &cfg, NULL, &e, err, sizeof err) == PRT_OK, "%s", err);
    prt_set_trace_callback(NULL, NULL);
    /* Asked per device (build, then load), never device-blind. */
    CHECK_EQ_INT(ws_v2_calls, 2);
    CHECK_EQ_INT(ws_v1_calls, 0);
    /* The memory plan: exactly the CPU path's workspace, a small fraction of
     * the column buffer. */
    CHECK(cpu_ws > 0);
    CHECK_EQ_INT(prt_engine_workspace_size(e), (cpu_ws + 255) / 256 * 256);
    CHECK(prt_engine_workspace_size(e) * 16 < column);
    CHECK_EQ_INT(prt_engine_arena_size(e), 0); /* y is an output: no activations */
#ifdef PLUGRT_HAVE_CUDA
    {
        /* The same plan on a CUDA context gets the CUDA path's workspace. */
        int n = 0;
        if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
            prt_context_config cc;
            prt_context_config_init(&cc);
            cc.device = PRT_DEVICE_CUDA;
            CHECK_OK(prt_context_create(e, &cc, &ctx));
            prt_context_destroy(ctx);
            ctx = NULL;
        }
    }
#endif
    prt_engine_destroy(e);
    prt_network_destroy(net);
    free(w);
}
