/*
 * onnx/layout/constant.c - Constant (12) from its value_float, value_floats,
 * value_int or value_ints attribute: no inputs, one output. The TENSOR-typed
 * `value` (and sparse_value, the string forms) need field types the core
 * does not have yet; a Constant that uses them is refused by the schema.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct kstate {
    const prt_field *f; /* the one value field, inside the node's own field copy */
    prt_dtype t;
    int32_t scalar;
} kstate;

static prt_status k_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const names[] = {"value_float", "value_floats", "value_int", "value_ints"};
    kstate *s = PRT__ONNX_STATE(n, kstate);
    int i, found = 0;
    for (i = 0; i < 4; i++) {
        const prt_field *f = prt_fields_find(fc, names[i]);
        if (!f) continue;
        found++;
        s->f = f;
        s->t = i < 2 ? PRT_DTYPE_F32 : PRT_DTYPE_I64;
        s->scalar = i % 2 == 0;
    }
    if (found != 1) {
        prt_msg_set(err, "%s v%s: give exactly one of value_float, value_floats, value_int, value_ints (got %d); the "
                    "TENSOR attribute \"value\" is not supported yet", n->def->name, n->def->version, found);
        return PRT_STATUS_INVALID_FIELD;
    }
    return PRT_OK;
}

static prt_status k_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    (void)in; (void)nb_in; (void)err;
    out[0] = PRT__ONNX_STATE(n, kstate)->t;
    return PRT_OK;
}

static prt_status k_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const kstate *s = PRT__ONNX_STATE(n, kstate);
    (void)in; (void)nb_in; (void)err;
    out->nb = s->scalar ? 0 : 1;
    if (!s->scalar) out->d[0] = eb->constant(eb, s->f->count);
    return PRT_OK;
}

static prt_status k_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const kstate *s = PRT__ONNX_STATE(n, kstate);
    (void)in; (void)nb_in; (void)out; (void)x; (void)ws; (void)ex; (void)err;
    if (s->f->count > 0) memcpy(y[0], s->f->data, (size_t)s->f->count * prt_dtype_size(s->t));
    return PRT_OK;
}

static const prt_field_schema s_constant[] = {
    {.name = "value_float", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1, .doc = "a float32 scalar"},
    PRT__ONNX_OPT("value_floats", PRT_FIELD_FLOAT32, "a 1-D float32 tensor"),
    {.name = "value_int", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .doc = "an int64 scalar"},
    PRT__ONNX_OPT("value_ints", PRT_FIELD_INT64, "a 1-D int64 tensor"),
};
static const int constant_row_ = 0;

static const prt__onnx_def constant_defs[] = {
    PRT__ONNX_DEF("Constant", "12", constant_row_, s_constant, 4, 0, 0, 1, PRT__ONNX_ALL, kstate, k),
};
PRT__ONNX_REGISTER_TABLE(constant_defs)
