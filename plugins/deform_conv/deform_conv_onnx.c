/*
 * deform_conv/deform_conv_onnx.c - ONNX's DeformConv (default domain, since
 * opset 19) as creator "DeformConv" version "19": ONNX's inputs and
 * attributes mapped onto the ModulatedDeformConv2d plugin object and kernels
 * (deform_conv.c), nothing computed here.
 *
 *   inputs   X [N, C, H, W], W [oC, C/group, kH, kW], offset [N, 2*offset_group*kH*kW, oH, oW],
 *            B [oC] (optional), mask [N, offset_group*kH*kW, oH, oW] (optional, ones when absent)
 *   fields   dilations [2], group, kernel_shape [2] (optional), offset_group, pads [4] as
 *            [top, left, bottom, right], strides [2], and "input:3": B given as a field
 *
 * A layer gets X, W, offset, then what is given of B and mask in that order;
 * when B is the field "input:3" (the ONNX importer passes a constant B so),
 * a 4th input is the mask. Without that field a 4th input is B when it is
 * 1-D and the mask otherwise (an absent B before a given mask).
 */
#include <math.h>
#include <string.h>

#include "plugrt/plugin.h"
#include "deform_conv.h"

#define ONNX_MAX_SPATIAL 65535
#define ONNX_MAX_GROUP (1 << 20)

static const int64_t ones2[2] = {1, 1};
static const int64_t zeros4[4] = {0, 0, 0, 0};
static const int64_t one1 = 1;

static const prt_field_schema onnx_schema[] = {
    {.name = "dilations", .type = PRT_FIELD_INT64, .min_count = 2, .max_count = 2, .default_data = ones2,
     .default_count = 2, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = ONNX_MAX_SPATIAL,
     .doc = "[H, W] spacing of kernel taps, >= 1"},
    {.name = "group", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .default_data = &one1,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = ONNX_MAX_GROUP,
     .doc = "convolution groups; C and oC divisible by it"},
    {.name = "kernel_shape", .type = PRT_FIELD_INT64, .min_count = 2, .max_count = 2,
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = ONNX_MAX_SPATIAL,
     .doc = "[kH, kW]; when given, W's kernel must be this"},
    {.name = "offset_group", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .default_data = &one1,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = ONNX_MAX_GROUP,
     .doc = "groups of input channels sharing one offset/mask set"},
    {.name = "pads", .type = PRT_FIELD_INT64, .min_count = 4, .max_count = 4, .default_data = zeros4,
     .default_count = 4, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 0, .max = ONNX_MAX_SPATIAL,
     .doc = "[top, left, bottom, right] zero padding, >= 0"},
    {.name = "strides", .type = PRT_FIELD_INT64, .min_count = 2, .max_count = 2, .default_data = ones2,
     .default_count = 2, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = ONNX_MAX_SPATIAL,
     .doc = "[H, W] stride, >= 1"},
    {.name = "input:3", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = PRT_COUNT_UNBOUNDED,
     .doc = "B (one value per output channel) when it is a constant rather than an input"},
};

/* Integer fields after the host's schema check (counts and bounds hold);
 * a field absent despite its default takes the default here too. */
static void ints(const prt_fields *fc, const char *name, int64_t *dst, int64_t n, const int64_t *dflt)
{
    int64_t i;
    for (i = 0; i < n; i++) dst[i] = prt_fields_i64(fc, name, i, dflt[i]);
}

static prt_status onnx_create(const prt_plugin_creator *cr, const prt_fields *fc, prt_phase phase,
                              prt_field_plugin **out, prt_msg *err)
{
    prt__dcn_params p;
    prt__dcn_onnx o;
    int64_t pads[4], i;
    const prt_field *b = prt_fields_find(fc, "input:3"), *ks = prt_fields_find(fc, "kernel_shape");
    (void)cr;
    (void)phase;
    memset(&p, 0, sizeof p);
    memset(&o, 0, sizeof o);
    ints(fc, "strides", p.stride, 2, ones2);
    ints(fc, "dilations", p.dilation, 2, ones2);
    ints(fc, "pads", pads, 4, zeros4);
    ints(fc, "group", &p.group, 1, &one1);
    ints(fc, "offset_group", &p.deformable_group, 1, &one1);
    p.padding[0] = pads[0], p.padding[1] = pads[1];
    o.pad_end[0] = pads[2], o.pad_end[1] = pads[3];
    if (ks) ints(fc, "kernel_shape", o.kernel_shape, 2, zeros4);
    if (b) {
        if (b->type != PRT_FIELD_FLOAT32 || b->count < 1 || !b->data) {
            prt_msg_set(err, "DeformConv v19: field \"input:3\" (B) must be 1 or more float32 values, got %lld %s",
                        (long long)b->count, prt_field_type_name(b->type));
            return PRT_STATUS_INVALID_FIELD;
        }
        for (i = 0; i < b->count; i++)
            if (!isfinite(((const float *)b->data)[i])) {
                prt_msg_set(err, "DeformConv v19: field \"input:3\" (B) must be finite; value %lld is %g",
                            (long long)i, (double)((const float *)b->data)[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
        o.bias = (const float *)b->data;
        o.nb_bias = b->count;
    }
    return prt__deform_conv_onnx_new(&p, &o, out, err);
}

const prt_plugin_creator prt__deform_conv_creator_onnx = {
    .struct_size = sizeof(prt_plugin_creator),
    .abi_version = PRT_ABI_VERSION,
    .name = "DeformConv",
    .version = "19",
    .plugin_namespace = "",
    .style = PRT_STYLE_FIELD,
    .nb_fields = (int32_t)(sizeof onnx_schema / sizeof onnx_schema[0]),
    .fields = onnx_schema,
    .field_schema_size = sizeof(prt_field_schema),
    .create_field = onnx_create,
    .doc = "ONNX DeformConv (opset 19): inputs X, W, offset[, B][, mask]; 2-D, f32/f16, CPU and CUDA",
};

PRT_REGISTER_CREATOR(prt__deform_conv_creator_onnx)
