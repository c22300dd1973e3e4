/* The shared ONNX op core (plugins/onnx/common): the broadcasting plan,
 * registration per since-version, serialization through plugin records, and
 * one case for every registered ONNX creator, enumerated from the tables
 * themselves so that a new op cannot go untested. */
#include "common/onnx_op.h"
#include "core/core.h"
#include "common/onnx_tensor.h"
#include "onnx_test_util.h"
#include "prt_test.h"

TEST(bcast_plan_merges_dims_and_zeroes_broadcast_strides)
{
    prt_dims out = ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4);
    prt_dims a = ot_dims(3, (int64_t)2, (int64_t)3, (int64_t)4), b = ot_dims(2, (int64_t)3, (int64_t)1);
    prt_dims c = ot_dims(0), bad = ot_dims(1, (int64_t)5);
    const prt_dims *in[3] = {&a, &b, &c};
    prt__bcast p;
    char buf[256];
    prt_msg m = {buf, sizeof buf};
    CHECK_OK(prt__bcast_plan(&p, &out, in, 3, &m));
    CHECK_EQ_INT(p.volume, 24);
    /* [2,3,4]: a walks all of it; b is [3,1] -> strides 0,1,0; c is 0-d */
    CHECK_EQ_INT(p.rank, 3);
    CHECK_EQ_INT(p.strides[0][2], 1);
    CHECK_EQ_INT(p.strides[1][0], 0);
    CHECK_EQ_INT(p.strides[1][1], 1);
    CHECK_EQ_INT(p.strides[1][2], 0);
    CHECK_EQ_INT(p.strides[2][1], 0);
    /* Same shapes merge into one dim */
    in[1] = &a;
    CHECK_OK(prt__bcast_plan(&p, &out, in, 2, &m));
    CHECK_EQ_INT(p.rank, 1);
    CHECK_EQ_INT(p.dims[0], 24);
    in[1] = &bad;
    CHECK(prt__bcast_plan(&p, &out, in, 2, &m) == PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(buf, "[5]");
    CHECK_STR_CONTAINS(buf, "[2, 3, 4]");
}

TEST(versions_register_side_by_side_in_the_default_namespace)
{
    const prt_plugin_creator *c = NULL;
    prt_registry *g = prt_registry_global();
    const char *const keys[][2] = {{"Relu", "6"}, {"Relu", "1"}, {"Clip", "6"}, {"Clip", "11"}, {"Cast", "19"},
                                   {"Dropout", "12"}, {"Add", "7"}, {"Where", "9"}};
    size_t i;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        CHECK_MSG(prt_registry_find(g, keys[i][0], keys[i][1], "", &c, NULL) == PRT_OK, "%s v%s", keys[i][0],
                  keys[i][1]);
        CHECK(c && c->style == PRT_STYLE_FIELD);
    }
    CHECK(prt_registry_find(g, "Relu", "5", "", &c, NULL) == PRT_STATUS_NOT_FOUND);
}

TEST(fields_survive_a_plugin_record_round_trip)
{
    const float alpha = 0.125f;
    prt_field f = {"alpha", &alpha, PRT_FIELD_FLOAT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    prt_op *op = NULL, *back = NULL;
    size_t len = 0;
    void *buf;
    prt_tensor_desc td;
    prt_op_config cfg;
    float x[4] = {-8, -1, 0, 2}, y[4];
    const void *xs[1] = {x};
    void *ys[1] = {y};
    CHECK_OK(prt_op_create(prt_registry_global(), "LeakyRelu", "6", "", &fc, &op));
    CHECK_OK(prt_op_serialize(op, NULL, 0, &len));
    buf = malloc(len);
    CHECK_OK(prt_op_serialize(op, buf, len, &len));
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, len, &back));
    memset(&td, 0, sizeof td);
    td.dtype = PRT_DTYPE_F32;
    td.dims = ot_dims(1, (int64_t)4);
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.nb_threads = 1;
    CHECK_OK(prt_op_configure(back, &td, 1, &cfg));
    CHECK_OK(prt_op_run(back, xs, ys));
    CHECK(y[0] == -1.0f && y[1] == -0.125f && y[2] == 0 && y[3] == 2);
    prt_op_destroy(op);
    prt_op_destroy(back);
    free(buf);
}

/* ---- every registered ONNX creator on a small case ------------------------------ */

typedef struct smoke {
    const char *name;
    const char *version;   /* NULL: every version */
    int32_t nb_in;         /* 0: the def's min_in */
    prt_dtype in[8];       /* used when set_types */
    int set_types;
    prt_dims shape;        /* nb 0: [2, 3] */
    prt_dims shape1;       /* inputs after the first, when set_shape1 */
    int set_shape1;
    prt_dims shape2;       /* inputs after the second, when set_shape2 */
    int set_shape2;
    int32_t nb_out;        /* 0: the def's */
    prt_field fields[4];
    int32_t nb_fields;
} smoke;

#define F64(nm, ...) {nm, (const int64_t[]){__VA_ARGS__}, PRT_FIELD_INT64, 0, \
                      sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)}
/* Range's scalars 0, 5, 2 as i64 TENSOR fields */
static const int64_t range_vals[3] = {0, 5, 2};
static const prt_field_tensor range_ts[3] = {
    {.dtype = PRT_DTYPE_I64, .data = &range_vals[0]},
    {.dtype = PRT_DTYPE_I64, .data = &range_vals[1]},
    {.dtype = PRT_DTYPE_I64, .data = &range_vals[2]},
};
#define RANGE_T(nm, k) {nm, &range_ts[k], PRT_FIELD_TENSOR, 0, 1}
static const smoke smokes[] = {
    {.name = "Cast", .fields = {F64("to", 1)}, .nb_fields = 1},
    {.name = "BitCast", .fields = {F64("to", 6)}, .nb_fields = 1},
    {.name = "AffineGrid", .shape = {3, 0, {1, 2, 3}}, .fields = {F64("input:1", 1, 1, 2, 2)}, .nb_fields = 1},
    {.name = "Mod", .fields = {F64("fmod", 1)}, .nb_fields = 1},
    {.name = "BitShift", .in = {PRT_DTYPE_U8, PRT_DTYPE_U8}, .set_types = 1,
     .fields = {{"direction", "LEFT", PRT_FIELD_CHAR, 0, 4}}, .nb_fields = 1},
    {.name = "CumSum", .fields = {F64("input:1", 0)}, .nb_fields = 1},
    {.name = "Where", .in = {PRT_DTYPE_BOOL, PRT_DTYPE_F32, PRT_DTYPE_F32}, .set_types = 1},
    {.name = "Slice", .version = "1", .fields = {F64("starts", 0), F64("ends", 1)}, .nb_fields = 2},
    {.name = "Slice", .version = "10", .fields = {F64("input:1", 0), F64("input:2", 1)}, .nb_fields = 2},
    {.name = "DepthToSpace", .shape = {4, 0, {1, 4, 2, 2}}, .fields = {F64("blocksize", 2)}, .nb_fields = 1},
    {.name = "SpaceToDepth", .shape = {4, 0, {1, 1, 2, 2}}, .fields = {F64("blocksize", 2)}, .nb_fields = 1},
    {.name = "Tile", .fields = {F64("input:1", 2, 1)}, .nb_fields = 1},
    {.name = "Concat", .fields = {F64("axis", 0)}, .nb_fields = 1},
    {.name = "Split", .version = "2", .nb_out = 2, .fields = {F64("split", 1, 1)}, .nb_fields = 1},
    {.name = "Split", .version = "13", .nb_out = 2, .fields = {F64("num_outputs", 2)}, .nb_fields = 1},
    {.name = "Reshape", .fields = {F64("input:1", 3, 2)}, .nb_fields = 1},
    {.name = "Unsqueeze", .version = "1", .fields = {F64("axes", 0)}, .nb_fields = 1},
    {.name = "Unsqueeze", .version = "13", .fields = {F64("input:1", 0)}, .nb_fields = 1},
    {.name = "Gather", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1},
    {.name = "GatherElements", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1},
    {.name = "GatherND", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1, .shape = {2, 0, {2, 2}}},
    {.name = "ScatterElements", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64, PRT_DTYPE_F32}, .set_types = 1},
    {.name = "ScatterND", .in = {PRT_DTYPE_F32, PRT_DTYPE_I32, PRT_DTYPE_F32}, .set_types = 1,
     .shape = {1, 0, {1}}},
    {.name = "OneHot", .in = {PRT_DTYPE_I64, PRT_DTYPE_F32}, .set_types = 1, .shape = {1, 0, {2}},
     .fields = {F64("input:1", 3)}, .nb_fields = 1},
    {.name = "Pad", .version = "2", .fields = {F64("pads", 1, 0, 0, 1)}, .nb_fields = 1},
    {.name = "Pad", .version = "11", .fields = {F64("input:1", 1, 0, 0, 1)}, .nb_fields = 1},
    {.name = "Pad", .version = "18", .fields = {F64("input:1", 1, 0, 0, 1)}, .nb_fields = 1},
    {.name = "Constant", .fields = {F64("value_ints", 1, 2)}, .nb_fields = 1},
    {.name = "NegativeLogLikelihoodLoss", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1,
     .shape1 = {1, 0, {2}}, .set_shape1 = 1},
    {.name = "SoftmaxCrossEntropyLoss", .in = {PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1,
     .shape1 = {1, 0, {2}}, .set_shape1 = 1},
    {.name = "CenterCropPad", .fields = {F64("input:1", 3, 2)}, .nb_fields = 1},
    {.name = "HannWindow", .fields = {F64("input:0", 4)}, .nb_fields = 1},
    {.name = "HammingWindow", .fields = {F64("input:0", 4)}, .nb_fields = 1},
    {.name = "BlackmanWindow", .fields = {F64("input:0", 4)}, .nb_fields = 1},
    {.name = "ConstantOfShape", .fields = {F64("input:0", 2, 3)}, .nb_fields = 1},
    {.name = "Range", .fields = {RANGE_T("input:0", 0), RANGE_T("input:1", 1), RANGE_T("input:2", 2)},
     .nb_fields = 3},
    {.name = "TopK", .version = "1", .fields = {F64("k", 1)}, .nb_fields = 1},
    {.name = "TopK", .fields = {F64("input:1", 1)}, .nb_fields = 1},
    {.name = "MatMul", .shape = {2, 0, {3, 3}}},
    {.name = "Gemm", .shape = {2, 0, {3, 3}}},
    {.name = "Conv", .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "ConvTranspose", .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "ConvInteger", .in = {PRT_DTYPE_U8, PRT_DTYPE_U8}, .set_types = 1, .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "BatchNormalization", .shape = {2, 0, {1, 1}}},
    {.name = "LayerNormalization", .shape = {2, 0, {1, 1}}},
    {.name = "InstanceNormalization", .shape = {2, 0, {1, 1}}},
    {.name = "GroupNormalization", .shape = {2, 0, {1, 1}}, .fields = {F64("num_groups", 1)}, .nb_fields = 1},
    {.name = "LRN", .fields = {F64("size", 3)}, .nb_fields = 1},
    {.name = "MaxPool", .shape = {4, 0, {1, 1, 3, 3}}, .fields = {F64("kernel_shape", 2, 2)}, .nb_fields = 1},
    {.name = "AveragePool", .shape = {4, 0, {1, 1, 3, 3}}, .fields = {F64("kernel_shape", 2, 2)}, .nb_fields = 1},
    {.name = "LpPool", .shape = {4, 0, {1, 1, 3, 3}}, .fields = {F64("kernel_shape", 2, 2)}, .nb_fields = 1},
    {.name = "GlobalLpPool", .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "RMSNormalization", .shape = {2, 0, {1, 1}}},
    {.name = "BitwiseAnd", .in = {PRT_DTYPE_I32, PRT_DTYPE_I32}, .set_types = 1},
    {.name = "BitwiseOr", .in = {PRT_DTYPE_I32, PRT_DTYPE_I32}, .set_types = 1},
    {.name = "BitwiseXor", .in = {PRT_DTYPE_I32, PRT_DTYPE_I32}, .set_types = 1},
    {.name = "BitwiseNot", .in = {PRT_DTYPE_I32}, .set_types = 1},
    {.name = "CumProd", .fields = {F64("input:1", 0)}, .nb_fields = 1},
    {.name = "QuantizeLinear", .set_shape1 = 1},
    {.name = "DequantizeLinear", .in = {PRT_DTYPE_U8, PRT_DTYPE_F32}, .set_types = 1, .set_shape1 = 1},
    {.name = "DynamicQuantizeLinear"},
    {.name = "MatMulInteger", .in = {PRT_DTYPE_U8, PRT_DTYPE_U8}, .set_types = 1, .shape = {2, 0, {3, 3}}},
    {.name = "QLinearMatMul", .set_types = 1, .shape = {2, 0, {1, 1}},
     .in = {PRT_DTYPE_U8, PRT_DTYPE_F32, PRT_DTYPE_U8, PRT_DTYPE_U8, PRT_DTYPE_F32, PRT_DTYPE_U8, PRT_DTYPE_F32,
            PRT_DTYPE_U8}},
    {.name = "GridSample", .shape = {4, 0, {1, 1, 2, 2}}},
    {.name = "RoiAlign", .in = {PRT_DTYPE_F32, PRT_DTYPE_F32, PRT_DTYPE_I64}, .set_types = 1,
     .shape = {4, 0, {1, 1, 4, 4}}, .shape1 = {2, 0, {1, 4}}, .set_shape1 = 1, .shape2 = {1, 0, {1}},
     .set_shape2 = 1},
    {.name = "Einsum", .fields = {{"equation", "ij->ji", PRT_FIELD_CHAR, 0, 6}}, .nb_fields = 1},
    {.name = "GlobalMaxPool", .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "GlobalAveragePool", .shape = {4, 0, {1, 1, 3, 3}}},
    {.name = "Resize", .version = "10", .fields = {{"input:1", (const float[]){1, 2}, PRT_FIELD_FLOAT32, 0, 2}},
     .nb_fields = 1},
    {.name = "Resize", .fields = {{"input:2", (const float[]){1, 2}, PRT_FIELD_FLOAT32, 0, 2}}, .nb_fields = 1},
    {.name = "Upsample", .version = "7", .fields = {{"scales", (const float[]){1, 2}, PRT_FIELD_FLOAT32, 0, 2}},
     .nb_fields = 1},
    {.name = "Upsample", .version = "9", .fields = {{"input:1", (const float[]){1, 2}, PRT_FIELD_FLOAT32, 0, 2}},
     .nb_fields = 1},
    {.name = "Expand", .fields = {F64("input:1", 2, 1, 3)}, .nb_fields = 1},
    /* plugrt::FusedConv: relu(conv(x, w) + b) on [1, 1, 3, 3] by a 3x3 kernel */
    {.name = "FusedConv", .nb_in = 3, .shape = {4, 0, {1, 1, 3, 3}}, .shape2 = {1, 0, {1}}, .set_shape2 = 1,
     .fields = {F64("program", 9, 0, 0, 0)}, .nb_fields = 1},
    /* plugrt::Elementwise: tanh(x0 + x1) * 0.5 */
    {.name = "Elementwise", .nb_in = 2, .fields = {F64("program", 0, 0, 1, 0, 11, 2, 0, 0, 2, 3, -1, 0),
     {"consts", (const float[]){0.5f}, PRT_FIELD_FLOAT32, 0, 1}}, .nb_fields = 2},
};

static prt_dtype first_type(uint32_t mask)
{
    if (mask & PRT__ONNX_T(PRT_DTYPE_F32)) return PRT_DTYPE_F32;
    if (mask & PRT__ONNX_T(PRT_DTYPE_BOOL)) return PRT_DTYPE_BOOL;
    if (mask & PRT__ONNX_T(PRT_DTYPE_U8)) return PRT_DTYPE_U8;
    return PRT_DTYPE_I64;
}

/* Creator i of the tables on its small case; `fail_after` >= 0 makes that
 * allocation of the library fail (prt__alloc_fail_after). */
static prt_status smoke_run(int32_t i, long fail_after, char *msg, size_t cap)
{
    const prt__onnx_def *d = prt__onnx_def_at(i);
    const smoke *s = NULL;
    ot_tensor in[8], out[8];
    int32_t k, nin, nout;
    size_t j;
    prt_status st;
    for (j = 0; j < sizeof smokes / sizeof smokes[0]; j++)
        if (!strcmp(smokes[j].name, d->name) && (!smokes[j].version || !strcmp(smokes[j].version, d->version)))
            if (!s || smokes[j].version) s = &smokes[j]; /* a versioned row wins */
    nin = s && s->nb_in ? s->nb_in : d->min_in;
    nout = s && s->nb_out ? s->nb_out : d->nb_out;
    for (k = 0; k < nin; k++)
        in[k] = ot_rand(s && s->set_types ? s->in[k] : first_type(d->in_mask),
                        s && k > 1 && s->set_shape2 ? s->shape2
                        : s && k > 0 && s->set_shape1 ? s->shape1
                        : s && s->shape.nb          ? s->shape
                                                    : ot_dims(2, (int64_t)2, (int64_t)3),
                        0.1, 0.9, (uint32_t)k);
    msg[0] = 0;
    if (fail_after >= 0) prt__alloc_fail_after(fail_after);
    st = ot_run_ns(d->ns ? d->ns : "", d->name, d->version, s ? s->fields : NULL, s ? s->nb_fields : 0, in, nin,
                   out, nout, 2, msg, cap);
    prt__alloc_fail_after(-1);
    for (k = 0; st == PRT_OK && k < nout; k++) ot_free(&out[k]);
    for (k = 0; k < nin; k++) ot_free(&in[k]);
    return st;
}

TEST(every_registered_onnx_creator_runs_a_small_case)
{
    int32_t i, n = prt__onnx_def_count();
    char msg[512];
    CHECK(n > 80);
    for (i = 0; i < n; i++) {
        prt_status st = smoke_run(i, -1, msg, sizeof msg);
        CHECK_MSG(st == PRT_OK, "%s v%s: %s", prt__onnx_def_at(i)->name, prt__onnx_def_at(i)->version, msg);
    }
}

/* Every allocation of every registered creator's small case (create, build,
 * load, context, run) failed in turn: each failure is an error with a
 * message, never a crash, and leaks nothing (the ASan build checks). */
TEST(every_registered_onnx_creator_survives_each_failed_allocation)
{
    int32_t i, n = prt__onnx_def_count();
    long total = 0;
    char msg[512];
    for (i = 0; i < n; i++) {
        const prt__onnx_def *d = prt__onnx_def_at(i);
        long k;
        prt_status st = PRT_STATUS_OUT_OF_MEMORY;
        for (k = 0; k < 100000 && st != PRT_OK; k++) {
            st = smoke_run(i, k, msg, sizeof msg);
            CHECK_MSG(st == PRT_OK || msg[0], "%s v%s: allocation %ld failed without a message", d->name, d->version,
                      k);
        }
        CHECK_MSG(st == PRT_OK, "%s v%s never ran: %s", d->name, d->version, msg);
        total += k;
    }
    printf("  %d creators, %ld runs with one failed allocation each\n", (int)n, total);
}
