/*
 * onnx/elementwise/cast.c - Cast, CastLike, BitCast and Dropout (inference: a copy
 * and an all-true mask). See README.md in this folder.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct cattr {
    prt_dtype to; /* Cast */
} cattr;

static prt_status c_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    cattr *a = PRT__ONNX_STATE(n, cattr);
    int64_t to;
    int t;
    if (strcmp(n->def->name, "Cast") != 0 && strcmp(n->def->name, "BitCast") != 0) return PRT_OK;
    to = prt_fields_i64(fc, "to", 0, 0);
    t = prt__onnx_dtype_from_onnx(to);
    if (t < 0) {
        prt_msg_set(err, "%s v%s: field \"to\" = %lld (%s) is not a type plugrt has; expected one of "
                    PRT__ONNX_DTYPES_TEXT, n->def->name, n->def->version, (long long)to,
                    prt__onnx_dtype_onnx_name(to));
        return PRT_STATUS_INVALID_FIELD;
    }
    a->to = (prt_dtype)t;
    return PRT_OK;
}

static prt_status c_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    /* CastLike 15 has no state */
    prt_dtype to = n->def->state_size ? PRT__ONNX_STATE(n, cattr)->to : PRT_DTYPE_F32;
    if (strcmp(n->def->name, "BitCast") == 0) { /* the same bits: equal widths; bool only from bool */
        if (prt_dtype_size(in[0]) != prt_dtype_size(to) || ((to == PRT_DTYPE_BOOL) != (in[0] == PRT_DTYPE_BOOL) &&
                                                             to == PRT_DTYPE_BOOL)) {
            prt_msg_set(err, "cannot reinterpret %s (%zu bytes) as %s (%zu bytes)%s", prt_dtype_name(in[0]),
                        prt_dtype_size(in[0]), prt_dtype_name(to), prt_dtype_size(to),
                        to == PRT_DTYPE_BOOL ? "; bool comes only from bool" : "");
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = to;
    } else if (strcmp(n->def->name, "Cast") == 0)
        out[0] = to;
    else if (strcmp(n->def->name, "CastLike") == 0)
        out[0] = in[1];
    else { /* Dropout: output, mask */
        out[0] = in[0];
        out[1] = PRT_DTYPE_BOOL;
    }
    (void)nb_in;
    return PRT_OK;
}

typedef struct cjob {
    const void *x;
    void *y;
    prt_dtype tx, ty;
} cjob;

static void c_range(void *arg, int64_t begin, int64_t end)
{
    const cjob *j = arg;
    int64_t b, n;
    int ints = !prt__onnx_is_float(j->tx) && !prt__onnx_is_float(j->ty);
    for (b = begin; b < end; b += n) {
        n = end - b < PRT__ONNX_RUN ? end - b : PRT__ONNX_RUN;
        if (ints) {
            int64_t v[PRT__ONNX_RUN];
            prt__onnx_gather_i64(v, j->x, j->tx, b, 1, n);
            prt__onnx_scatter_i64(j->y, j->ty, b, v, n);
        } else {
            double v[PRT__ONNX_RUN];
            prt__onnx_gather_f64(v, j->x, j->tx, b, 1, n);
            prt__onnx_scatter_f64(j->y, j->ty, b, v, n);
        }
    }
}

static prt_status c_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    int64_t vol = prt_dims_volume(&in[0].dims);
    cjob j = {x[0], y[0], in[0].dtype, out[0].dtype};
    (void)nb_in; (void)ws; (void)err;
    if (vol <= 0) return PRT_OK;
    if (j.tx == j.ty || strcmp(n->def->name, "BitCast") == 0) /* BitCast: the bytes as they are */
        memcpy(y[0], x[0], (size_t)vol * prt_dtype_size(j.tx));
    else if (vol <= 16384)
        c_range(&j, 0, vol);
    else
        ex->parallel_for(ex, vol, 16384, c_range, &j);
    if (n->def->nb_out == 2 && y[1]) memset(y[1], 1, (size_t)vol); /* Dropout's mask: all kept */
    return PRT_OK;
}

static prt_status d_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    double ratio = prt_fields_f64(fc, "input:1", 0, prt_fields_f64(fc, "ratio", 0, 0.5));
    int64_t training = prt_fields_i64(fc, "input:2", 0, 0);
    if (training && ratio != 0) {
        prt_msg_set(err, "%s v%s: training_mode=true with ratio %g is not supported (inference only)",
                    n->def->name, n->def->version, ratio);
        return PRT_STATUS_UNSUPPORTED;
    }
    return PRT_OK;
}

static const prt_field_schema s_cast19[] = {
    PRT__ONNX_REQ_I64("to", "ONNX TensorProto.DataType of the output"),
    PRT__ONNX_I64("saturate", 1, "float8 targets only; no effect on plugrt's types"),
};
static const prt_field_schema s_bitcast[] = {
    PRT__ONNX_REQ_I64("to", "ONNX TensorProto.DataType of the output, of the input's width"),
};
static const prt_field_schema s_castlike19[] = {
    PRT__ONNX_I64("saturate", 1, "float8 targets only; no effect on plugrt's types"),
};
/* Dropout 7 and 6 are 1 without its last one or two fields. */
static const prt_field_schema s_drop1[] = {
    PRT__ONNX_F32("ratio", 0.5f, "drop ratio (unused in inference)"),
    PRT__ONNX_I64("is_test", 0, "ignored: plugrt only infers"),
    PRT__ONNX_OPT("consumed_inputs", PRT_FIELD_INT64, "legacy, ignored"),
};
static const prt_field_schema s_drop12[] = {
    PRT__ONNX_OPT("seed", PRT_FIELD_INT64, "random seed (unused in inference)"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_FLOAT32, "ratio as a constant (interim shape-value form)"),
    PRT__ONNX_OPT("input:2", PRT_FIELD_INT64, "training_mode as a constant; must be 0 unless ratio is 0"),
};

#define AL PRT__ONNX_ALL
#define C_COMMON(nm, ver, sch, drop)                                                               \
    .name = nm, .version = ver, .schema = sch, .nb_fields = PRT__ONNX_NFIELDS(sch) - (drop), .in_mask = AL, \
    .state_size = sizeof(cattr), .types = c_types, .shapes = prt__onnx_shapes_same, .run = c_run
#define DROP(ver, sch, drop, maxin)                                                                \
    {C_COMMON("Dropout", ver, sch, drop), .min_in = 1, .max_in = maxin, .nb_out = 2, .init = d_init,       \
     .doc = "ONNX Dropout, inference: output = input, mask all true"}

static const prt__onnx_def cast_defs[] = {
    {C_COMMON("Cast", "6", s_cast19, 1), .min_in = 1, .max_in = 1, .nb_out = 1, .init = c_init,
     .doc = "ONNX Cast"},
    {C_COMMON("Cast", "19", s_cast19, 0), .min_in = 1, .max_in = 1, .nb_out = 1, .init = c_init,
     .doc = "ONNX Cast"},
    {.name = "CastLike", .version = "15", .min_in = 2, .max_in = 2, .nb_out = 1, .in_mask = AL,
     .types = c_types, .shapes = prt__onnx_shapes_same, .run = c_run, .doc = "ONNX CastLike"},
    {C_COMMON("CastLike", "19", s_castlike19, 0), .min_in = 2, .max_in = 2, .nb_out = 1,
     .doc = "ONNX CastLike"},
    {C_COMMON("BitCast", "26", s_bitcast, 0), .min_in = 1, .max_in = 1, .nb_out = 1, .init = c_init,
     .doc = "ONNX BitCast: the input's bytes read as another type of the same width"},
    DROP("1", s_drop1, 0, 1), DROP("6", s_drop1, 1, 1), DROP("7", s_drop1, 2, 1), DROP("12", s_drop12, 0, 3),
};
PRT__ONNX_REGISTER_TABLE(cast_defs)
