/*
 * onnx/elementwise/fused.c - plugrt::Elementwise v1: a chain of fp32
 * elementwise ops as one program (../common/ew_prog.h) evaluated in one pass
 * over the broadcast output. The ONNX importer emits it for chains of
 * elementwise nodes. See README.md in this folder for the fields and the
 * opcode table.
 */
#include <string.h>

#include "../common/ew_prog.h"
#include "../common/onnx_op.h"

typedef struct fattr {
    prt__ew_instr ins[PRT__EW_MAX_INS];
    float consts[PRT__EW_MAX_CONSTS];
    prt__ew_prog prog; /* nb_in as decoded: PRT__EW_MAX_IN; the layer's count is checked in f_types */
} fattr;

/* The program for a layer of nb_in inputs, checked. */
static prt_status f_prog(const prt__onnx_node *n, int32_t nb_in, prt__ew_prog *out, prt_msg *err)
{
    *out = PRT__ONNX_STATE(n, fattr)->prog;
    out->nb_in = nb_in;
    return prt__ew_check(out, err);
}

/* Value numbers depend on the input count, which a layer fixes only at build
 * time: here every instruction is checked as if there were PRT__EW_MAX_IN
 * inputs (opcodes, constants and parameters exactly; operands up to that
 * bound), and again for the layer's count in f_types. */
static prt_status f_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    fattr *a = PRT__ONNX_STATE(n, fattr);
    char buf[400];
    prt_msg m = {buf, sizeof buf};
    prt_status st;
    buf[0] = 0;
    st = prt__ew_decode(fc, PRT__EW_MAX_IN, a->ins, a->consts, &a->prog, &m);
    if (st != PRT_OK) prt_msg_set(err, "%s v%s: %s", n->def->name, n->def->version, buf);
    return st;
}

static prt_status f_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out, prt_msg *err)
{
    prt__ew_prog p;
    prt_status st = prt__onnx_types_same(n, in, nb_in, out, err);
    if (st != PRT_OK) return st;
    return f_prog(n, nb_in, &p, err);
}

static prt_status f_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                        const void *const *x, void *const *y, void *ws, prt_exec *ex, prt_msg *err)
{
    prt_dims dims[PRT__EW_MAX_IN];
    const float *xs[PRT__EW_MAX_IN];
    prt__ew_bcast bc;
    prt__ew_prog p;
    prt_status st;
    int32_t k;
    (void)ws;
    if ((st = f_prog(n, nb_in, &p, err)) != PRT_OK) return st;
    for (k = 0; k < nb_in; k++) {
        dims[k] = in[k].dims;
        xs[k] = x[k];
    }
    if ((st = prt__ew_plan(&bc, nb_in, dims, &out[0].dims, err)) != PRT_OK) return st;
    prt__ew_run(&p, &bc, xs, y[0], ex);
    return PRT_OK;
}

static const prt_field_schema s_elementwise[] = {
    PRT__ONNX_REQ_LIST("program", PRT_FIELD_INT64,
                       "4 entries per instruction: opcode, operand a, operand b, parameter index p"),
    PRT__ONNX_OPT("consts", PRT_FIELD_FLOAT32, "scalar constants: operand -1 - k is consts[k]"),
};

static const prt__onnx_def fused_defs[] = {
    {.name = "Elementwise", .version = "1", .ns = "plugrt", .schema = s_elementwise,
     .nb_fields = PRT__ONNX_NFIELDS(s_elementwise), .min_in = 1, .max_in = PRT__EW_MAX_IN, .nb_out = 1,
     .in_mask = PRT__ONNX_T(PRT_DTYPE_F32), .state_size = sizeof(fattr), .init = f_init, .types = f_types,
     .shapes = prt__onnx_shapes_bcast, .run = f_run,
     .doc = "plugrt Elementwise: a chain of fp32 elementwise ops (field \"program\", 4 int64 per instruction; "
            "\"consts\") over 1..8 broadcast inputs, in one pass"},
};
PRT__ONNX_REGISTER_TABLE(fused_defs)
