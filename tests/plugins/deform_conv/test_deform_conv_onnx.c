/*
 * test_deform_conv_onnx.c - ONNX's DeformConv (creator "DeformConv" v19,
 * deform_conv_onnx.c) through the registry and prt_op: every form of its
 * inputs (B and mask absent or given, B as field "input:3") against the
 * float64 reference with strides, dilations, asymmetric pads, groups and
 * offset groups; fp16; the saved fields; CUDA against the CPU; errors.
 * The ONNX reference implementation checks the same plugin through
 * `plugrt onnx-test` (tests/onnx/test_cli.c).
 */
#include <math.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "deform_conv.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

/* N=2, C=4, 7x9, oC=6, 3x3, strides (2, 1), dilations (1, 2), pads
 * [top 1, left 0, bottom 2, right 1], group 2, offset_group 2: oH 4, oW 6. */
enum { N = 2, C = 4, H = 7, W = 9, OC = 6, KH = 3, KW = 3, G = 2, OG = 2, OH = 4, OW = 6 };
#define NX (N * C * H * W)
#define NW (OC * C / G * KH * KW)
#define NOFF (N * 2 * OG * KH * KW * OH * OW)
#define NM (N * OG * KH * KW * OH * OW)
#define NY (N * OC * OH * OW)

static const int64_t strides[2] = {2, 1}, dilations[2] = {1, 2}, pads[4] = {1, 0, 2, 1}, group = G, og = OG;

typedef struct data {
    float x[NX], w[NW], off[NOFF], b[OC], m[NM];
} data;

static float urand(uint32_t *s, float lo, float hi)
{
    *s = *s * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(*s >> 8) / 16777216.0f;
}

static void make_data(data *d)
{
    uint32_t s = 2024u;
    int i;
    for (i = 0; i < NX; i++) d->x[i] = urand(&s, -2, 2);
    for (i = 0; i < NW; i++) d->w[i] = urand(&s, -1, 1);
    for (i = 0; i < NOFF; i++) d->off[i] = urand(&s, -2.5f, 2.5f); /* reaches outside the image */
    for (i = 0; i < OC; i++) d->b[i] = urand(&s, -1, 1);
    for (i = 0; i < NM; i++) d->m[i] = urand(&s, 0, 1);
}

static prt_tensor_desc desc(prt_dtype t, int nb, int64_t a, int64_t b, int64_t c, int64_t e)
{
    prt_tensor_desc x;
    memset(&x, 0, sizeof x);
    x.dtype = t;
    x.format = PRT_FORMAT_LINEAR;
    x.dims.nb = nb;
    x.dims.d[0] = a;
    x.dims.d[1] = b;
    x.dims.d[2] = c;
    x.dims.d[3] = e;
    return x;
}

/* The forms: which of B and mask are given, and whether B is the field. */
typedef struct form {
    const char *name;
    int bias, mask, bias_field;
} form;

static const form forms[] = {
    {"X W offset", 0, 0, 0},          {"X W offset B", 1, 0, 0},
    {"X W offset mask", 0, 1, 0},     {"X W offset B mask", 1, 1, 0},
    {"X W offset, B field", 1, 0, 1}, {"X W offset mask, B field", 1, 1, 1},
};

static prt_op *make_op(const float *bias_field, int64_t nb_bias, const int64_t *kernel_shape)
{
    prt_field f[7] = {
        {"strides", strides, PRT_FIELD_INT64, 0, 2}, {"dilations", dilations, PRT_FIELD_INT64, 0, 2},
        {"pads", pads, PRT_FIELD_INT64, 0, 4},       {"group", &group, PRT_FIELD_INT64, 0, 1},
        {"offset_group", &og, PRT_FIELD_INT64, 0, 1},
    };
    prt_fields fc = {f, 5, 0};
    prt_op *op = NULL;
    prt_status s;
    if (bias_field) f[fc.nb++] = (prt_field){"input:3", bias_field, PRT_FIELD_FLOAT32, 0, nb_bias};
    if (kernel_shape) f[fc.nb++] = (prt_field){"kernel_shape", kernel_shape, PRT_FIELD_INT64, 0, 2};
    s = prt_op_create(prt_registry_global(), "DeformConv", "19", "", &fc, &op);
    CHECK_MSG(s == PRT_OK, "create DeformConv v19: %s", prt_op_last_error(NULL));
    return op;
}

/* Layer inputs of a form, in ONNX order; returns their number. */
static int32_t form_inputs(const form *fm, prt_dtype t, const data *d, const void *const *ptrs16,
                           prt_tensor_desc *in, const void **ptr)
{
    int32_t n = 0;
    in[n] = desc(t, 4, N, C, H, W), ptr[n++] = ptrs16 ? ptrs16[0] : d->x;
    in[n] = desc(t, 4, OC, C / G, KH, KW), ptr[n++] = ptrs16 ? ptrs16[1] : d->w;
    in[n] = desc(t, 4, N, 2 * OG * KH * KW, OH, OW), ptr[n++] = ptrs16 ? ptrs16[2] : d->off;
    if (fm->bias && !fm->bias_field) in[n] = desc(t, 1, OC, 0, 0, 0), ptr[n++] = ptrs16 ? ptrs16[3] : d->b;
    if (fm->mask) in[n] = desc(t, 4, N, OG * KH * KW, OH, OW), ptr[n++] = ptrs16 ? ptrs16[4] : d->m;
    return n;
}

static prt_op_config config(prt_device dev)
{
    prt_op_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = dev;
    cfg.nb_threads = 2;
    return cfg;
}

static void run_on(prt_op *op, prt_device dev, const prt_tensor_desc *in, int32_t nb, const void **ptr, void *y)
{
    prt_op_config cfg = config(dev);
    prt_tensor_desc od;
    void *outs[1] = {y};
    prt_status s;
    s = prt_op_configure(op, in, nb, &cfg);
    CHECK_MSG(s == PRT_OK, "configure: %s", prt_op_last_error(op));
    CHECK_OK(prt_op_output_desc(op, 0, &od));
    CHECK_EQ_INT(od.dims.nb, 4);
    CHECK(od.dims.d[0] == N && od.dims.d[1] == OC && od.dims.d[2] == OH && od.dims.d[3] == OW);
    s = prt_op_run(op, (const void *const *)ptr, outs);
    CHECK_MSG(s == PRT_OK, "run: %s", prt_op_last_error(op));
}

/* float64 reference of a form on the values in d (mask of ones when absent). */
static void reference(const form *fm, const data *d, double *y)
{
    prt__dcn_params p;
    prt__dcn_shape s;
    double *x = malloc(NX * 8), *w = malloc(NW * 8), *off = malloc(NOFF * 8), *b = malloc(OC * 8),
           *m = malloc(NM * 8);
    int i;
    for (i = 0; i < NX; i++) x[i] = d->x[i];
    for (i = 0; i < NW; i++) w[i] = d->w[i];
    for (i = 0; i < NOFF; i++) off[i] = d->off[i];
    for (i = 0; i < OC; i++) b[i] = d->b[i];
    for (i = 0; i < NM; i++) m[i] = fm->mask ? d->m[i] : 1.0;
    memset(&p, 0, sizeof p);
    memset(&s, 0, sizeof s);
    p.stride[0] = strides[0], p.stride[1] = strides[1];
    p.dilation[0] = dilations[0], p.dilation[1] = dilations[1];
    p.padding[0] = pads[0], p.padding[1] = pads[1]; /* the grid starts at the top/left pads */
    p.group = G, p.deformable_group = OG;
    s.n = N, s.cin = C, s.h = H, s.w = W, s.cout = OC, s.kh = KH, s.kw = KW, s.hout = OH, s.wout = OW;
    s.has_bias = fm->bias;
    prt__deform_conv_cpu_ref_f64(&p, &s, x, off, m, w, fm->bias ? b : NULL, y);
    free(x), free(w), free(off), free(b), free(m);
}

static double rel_error(const float *y, const double *ref, int n)
{
    double worst = 0, scale = 0;
    int i;
    for (i = 0; i < n; i++) scale = fabs(ref[i]) > scale ? fabs(ref[i]) : scale;
    for (i = 0; i < n; i++) {
        double e = fabs((double)y[i] - ref[i]) / scale;
        if (!(e <= worst)) worst = e; /* NaN wins */
    }
    return worst;
}

TEST(every_input_form_matches_the_f64_reference)
{
    data *d = malloc(sizeof *d);
    double ref[NY];
    float y[NY];
    size_t k;
    int i;
    make_data(d);
    for (k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        const form *fm = &forms[k];
        prt_tensor_desc in[5];
        const void *ptr[5];
        int32_t nb = form_inputs(fm, PRT_DTYPE_F32, d, NULL, in, ptr);
        prt_op *op = make_op(fm->bias_field ? d->b : NULL, OC, NULL);
        double err;
        for (i = 0; i < NY; i++) y[i] = NAN;
        run_on(op, PRT_DEVICE_CPU, in, nb, ptr, y);
        reference(fm, d, ref);
        err = rel_error(y, ref, NY);
        CHECK_MSG(err <= 1e-5, "%s: relative error %.3g > 1e-5", fm->name, err);
        prt_op_destroy(op);
    }
    free(d);
}

TEST(f16_inputs_with_a_mask_of_ones_and_b_as_field)
{
    data *d = malloc(sizeof *d);
    static uint16_t hx[NX], hw[NW], hoff[NOFF], hb[OC], hm[NM], hy[NY];
    const void *ptrs16[5] = {hx, hw, hoff, hb, hm};
    double ref[NY];
    int i, k;
    make_data(d);
    /* the reference sees the same fp16-rounded values */
    for (i = 0; i < NX; i++) hx[i] = prt_f32_to_f16(d->x[i]), d->x[i] = prt_f16_to_f32(hx[i]);
    for (i = 0; i < NW; i++) hw[i] = prt_f32_to_f16(d->w[i]), d->w[i] = prt_f16_to_f32(hw[i]);
    for (i = 0; i < NOFF; i++) hoff[i] = prt_f32_to_f16(d->off[i]), d->off[i] = prt_f16_to_f32(hoff[i]);
    for (i = 0; i < OC; i++) hb[i] = prt_f32_to_f16(d->b[i]), d->b[i] = prt_f16_to_f32(hb[i]);
    for (i = 0; i < NM; i++) hm[i] = prt_f32_to_f16(d->m[i]), d->m[i] = prt_f16_to_f32(hm[i]);
    for (k = 0; k < 6; k++) {
        const form *fm = &forms[k];
        prt_tensor_desc in[5];
        const void *ptr[5];
        int32_t nb = form_inputs(fm, PRT_DTYPE_F16, d, ptrs16, in, ptr);
        prt_op *op = make_op(fm->bias_field ? d->b : NULL, OC, NULL);
        double worst = 0;
        for (i = 0; i < NY; i++) hy[i] = 0x7e00u;
        run_on(op, PRT_DEVICE_CPU, in, nb, ptr, hy);
        reference(fm, d, ref);
        for (i = 0; i < NY; i++) {
            double e = fabs((double)prt_f16_to_f32(hy[i]) - ref[i]);
            if (!(e <= worst)) worst = e;
        }
        CHECK_MSG(worst <= 1e-2, "%s: f16 max abs error %.3g > 1e-2", fm->name, worst);
        prt_op_destroy(op);
    }
    free(d);
}

/* Saved as ONNX's fields (B as "input:3"), loaded as version 19 again. */
TEST(saved_fields_load_as_version_19)
{
    data *d = malloc(sizeof *d);
    const int64_t ks[2] = {KH, KW};
    uint8_t buf[4096];
    size_t len = 0;
    float y1[NY], y2[NY];
    prt_tensor_desc in[5];
    const void *ptr[5];
    prt_op *op, *back = NULL;
    int32_t nb;
    make_data(d);
    nb = form_inputs(&forms[5], PRT_DTYPE_F32, d, NULL, in, ptr);
    op = make_op(d->b, OC, ks);
    run_on(op, PRT_DEVICE_CPU, in, nb, ptr, y1);
    CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &len));
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, len, &back));
    CHECK(strcmp(prt_op_creator(back)->name, "DeformConv") == 0);
    CHECK(strcmp(prt_op_creator(back)->version, "19") == 0);
    run_on(back, PRT_DEVICE_CPU, in, nb, ptr, y2);
    CHECK(memcmp(y1, y2, sizeof y1) == 0);
    prt_op_destroy(back);
    prt_op_destroy(op);
    free(d);
}

static void expect_configure_error(prt_op *op, const prt_tensor_desc *in, int32_t nb, const char *needle)
{
    prt_op_config cfg = config(PRT_DEVICE_CPU);
    CHECK(prt_op_configure(op, in, nb, &cfg) != PRT_OK);
    CHECK_STR_CONTAINS(prt_op_last_error(op), needle);
}

TEST(errors_name_the_onnx_inputs_and_fields)
{
    data *d = malloc(sizeof *d);
    const int64_t ks[2] = {3, 2};
    float nan = NAN;
    prt_tensor_desc in[5];
    const void *ptr[5];
    prt_op *op, *none = NULL;
    int32_t nb;
    prt_field f = {"input:3", &nan, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    make_data(d);
    op = make_op(NULL, 0, ks);
    nb = form_inputs(&forms[0], PRT_DTYPE_F32, d, NULL, in, ptr);
    expect_configure_error(op, in, nb, "DeformConv v19: field \"kernel_shape\" says 3x2 but W's kernel is 3x3");
    prt_op_destroy(op);
    op = make_op(d->b, OC - 1, NULL);
    expect_configure_error(op, in, nb, "DeformConv v19: B (field \"input:3\") has 5 values, but W has 6 output channels");
    prt_op_destroy(op);
    /* B as field and as an input */
    op = make_op(d->b, OC, NULL);
    nb = form_inputs(&forms[3], PRT_DTYPE_F32, d, NULL, in, ptr);
    expect_configure_error(op, in, nb, "B is given as field \"input:3\", so it needs 3 inputs (X, W, offset) or 4");
    prt_op_destroy(op);
    op = make_op(NULL, 0, NULL);
    in[3].dims.d[0] = OC - 1;
    expect_configure_error(op, in, nb, "DeformConv v19: B length must equal W output channels (6), got 5");
    in[3].dims.d[0] = OC;
    in[2].dims.d[1] = 2 * KH * KW;
    expect_configure_error(op, in, nb, "offset must have 2*offset_group*kh*kw = 2*2*3*3 = 36 channels, got 18");
    in[2].dims.d[1] = 2 * OG * KH * KW;
    in[4].dims.d[2] = OH + 1;
    expect_configure_error(op, in, nb, "mask spatial size must equal the output size 4x6 computed from X and the fields, got 5x6");
    in[4].dims.d[2] = OH;
    in[0].dims.nb = 5;
    in[0].dims.d[4] = 2;
    expect_configure_error(op, in, nb, "input 0 (X) must be 4-D, got 5-D (only 2-D deformable convolution is offered)");
    in[0].dims.nb = 4;
    in[0].dims.d[3] = 1;
    expect_configure_error(op, in, nb, "X width 1 with padding 0 + 1 is smaller than the dilated kernel width 5");
    prt_op_destroy(op);
    /* fields: a non-finite B, a count the schema refuses */
    CHECK(prt_op_create(prt_registry_global(), "DeformConv", "19", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "DeformConv v19: field \"input:3\" (B) must be finite");
    f = (prt_field){"pads", pads, PRT_FIELD_INT64, 0, 2};
    CHECK(prt_op_create(prt_registry_global(), "DeformConv", "19", "", &fc, &none) == PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(prt_op_last_error(NULL), "pads");
    CHECK(none == NULL);
    free(d);
}

/* CUDA: the mask of ones and B of the field are queued into the workspace. */
TEST(cuda_matches_cpu_in_every_input_form)
{
    data *d;
    size_t k;
    if (!prt_test_have_cuda()) {
        SKIP("no CUDA device");
        return;
    }
    d = malloc(sizeof *d);
    make_data(d);
    for (k = 0; k < sizeof forms / sizeof forms[0]; k++) {
        const form *fm = &forms[k];
        prt_tensor_desc in[5];
        const void *ptr[5], *dptr[5];
        void *dy = NULL;
        char err[512];
        float yc[NY], yg[NY];
        int32_t nb = form_inputs(fm, PRT_DTYPE_F32, d, NULL, in, ptr), i;
        prt_op *op = make_op(fm->bias_field ? d->b : NULL, OC, NULL);
        run_on(op, PRT_DEVICE_CPU, in, nb, ptr, yc);
        for (i = 0; i < nb; i++) {
            size_t bytes = (size_t)prt_dims_volume(&in[i].dims) * 4;
            void *p = NULL;
            CHECK_OK(prt__cuda_malloc(bytes, &p, err, sizeof err));
            CHECK_OK(prt__cuda_copy(p, ptr[i], bytes, PRT__H2D, err, sizeof err));
            dptr[i] = p;
        }
        CHECK_OK(prt__cuda_malloc(sizeof yg, &dy, err, sizeof err));
        CHECK_OK(prt__cuda_memset(dy, 0xff, sizeof yg, err, sizeof err));
        run_on(op, PRT_DEVICE_CUDA, in, nb, dptr, dy);
        CHECK_OK(prt__cuda_stream_sync(NULL, err, sizeof err));
        CHECK_OK(prt__cuda_copy(yg, dy, sizeof yg, PRT__D2H, err, sizeof err));
        for (i = 0; i < NY; i++)
            CHECK_MSG(fabs((double)yg[i] - yc[i]) <= PRT_DCN_CUDA_F32_TOL * (1 + fabs((double)yc[i])),
                      "%s element %d: cuda %.9g cpu %.9g", fm->name, (int)i, yg[i], yc[i]);
        for (i = 0; i < nb; i++) prt__cuda_free((void *)dptr[i]);
        prt__cuda_free(dy);
        prt_op_destroy(op);
    }
    free(d);
}
