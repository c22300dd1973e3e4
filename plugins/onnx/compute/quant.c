/*
 * onnx/compute/quant.c - linear quantization: QuantizeLinear,
 * DequantizeLinear (per tensor or per axis), DynamicQuantizeLinear, and
 * MatMulInteger (exact int32 accumulation with zero points) and QLinearMatMul
 * (the same accumulation, requantized with per-tensor scales). i8 and u8.
 * See README.md in this folder.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum qkind { QK_QUANT, QK_DEQUANT, QK_DYNAMIC, QK_MATMUL_INT, QK_QLINEAR_MM } qkind;

typedef struct qrow {
    qkind kind;
} qrow;

typedef struct qstate {
    int64_t axis;
    int32_t out_dtype; /* QuantizeLinear 21 output_dtype; -1: from the zero point (u8 without one) */
} qstate;

static prt_status q_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    qstate *s = PRT__ONNX_STATE(n, qstate);
    int64_t t = prt_fields_i64(fc, "output_dtype", 0, 0);
    s->axis = prt_fields_i64(fc, "axis", 0, 1);
    s->out_dtype = -1;
    if (prt_fields_i64(fc, "block_size", 0, 0) != 0) {
        prt_msg_set(err, "%s v%s: blocked quantization (block_size != 0) is not supported", n->def->name,
                    n->def->version);
        return PRT_STATUS_UNSUPPORTED;
    }
    if (t != 0) {
        int d = prt__onnx_dtype_from_onnx(t);
        if (d != PRT_DTYPE_I8 && d != PRT_DTYPE_U8) {
            prt_msg_set(err, "%s v%s: output_dtype %lld (%s) is not supported; expected 2 UINT8 or 3 INT8", n->def->name,
                        n->def->version, (long long)t, prt__onnx_dtype_onnx_name(t));
            return PRT_STATUS_UNSUPPORTED;
        }
        s->out_dtype = d;
    }
    return PRT_OK;
}

static int q_int8(prt_dtype t)
{
    return t == PRT_DTYPE_I8 || t == PRT_DTYPE_U8;
}

static prt_status q_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const qrow *r = n->def->row;
    const qstate *s = PRT__ONNX_STATE(n, qstate);
    switch (r->kind) {
    case QK_QUANT:
        if (!prt__onnx_is_float(in[0]) || !prt__onnx_is_float(in[1]) || (nb_in > 2 && !q_int8(in[2]))) {
            prt_msg_set(err, "takes a float x and scale and an i8 or u8 zero point; got %s, %s%s%s", prt_dtype_name(in[0]),
                        prt_dtype_name(in[1]), nb_in > 2 ? ", " : "", nb_in > 2 ? prt_dtype_name(in[2]) : "");
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = nb_in > 2 ? in[2] : s->out_dtype >= 0 ? (prt_dtype)s->out_dtype : PRT_DTYPE_U8;
        return PRT_OK;
    case QK_DEQUANT:
        if (!(q_int8(in[0]) || in[0] == PRT_DTYPE_I32) || !prt__onnx_is_float(in[1]) || (nb_in > 2 && in[2] != in[0])) {
            prt_msg_set(err, "takes an i8, u8 or i32 x, a float scale and a zero point of x's type; got %s, %s",
                        prt_dtype_name(in[0]), prt_dtype_name(in[1]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = in[1];
        return PRT_OK;
    case QK_DYNAMIC:
        if (in[0] != PRT_DTYPE_F32) {
            prt_msg_set(err, "x must be f32, got %s", prt_dtype_name(in[0]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = PRT_DTYPE_U8;
        out[1] = PRT_DTYPE_F32;
        out[2] = PRT_DTYPE_U8;
        return PRT_OK;
    case QK_MATMUL_INT:
        if (!q_int8(in[0]) || !q_int8(in[1]) || (nb_in > 2 && in[2] != in[0]) || (nb_in > 3 && in[3] != in[1])) {
            prt_msg_set(err, "A and B must be i8 or u8 with zero points of their types");
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = PRT_DTYPE_I32;
        return PRT_OK;
    case QK_QLINEAR_MM:
        if (!q_int8(in[0]) || !q_int8(in[3]) || !q_int8(in[7]) || in[2] != in[0] || in[5] != in[3] ||
            !prt__onnx_is_float(in[1]) || !prt__onnx_is_float(in[4]) || !prt__onnx_is_float(in[6])) {
            prt_msg_set(err, "a, b and y_zero_point must be i8 or u8, each zero point of its tensor's type and the "
                        "scales float; got a %s, b %s, y_zero_point %s", prt_dtype_name(in[0]), prt_dtype_name(in[3]),
                        prt_dtype_name(in[7]));
            return PRT_STATUS_TYPE_MISMATCH;
        }
        out[0] = in[7];
        return PRT_OK;
    }
    return PRT_STATUS_INTERNAL;
}

static double q_sat(double v, prt_dtype t);

/* QLinearMatMul's [batch,] M, N of a [ba,] M, K and b [bb,] K, N (ranks 2
 * or 3; a batch of 1 broadcasts). */
static prt_status qmm_shapes(const prt_dims_expr *in, prt_dims_expr *out, prt_expr_builder *eb, prt_msg *err)
{
    const prt_dims_expr *a = &in[0], *b = &in[3];
    int64_t ka, kb, ba, bb;
    if (a->nb < 2 || a->nb > 3 || b->nb < 2 || b->nb > 3) {
        prt_msg_set(err, "a and b must be 2-D or 3-D, got ranks %d and %d", (int)a->nb, (int)b->nb);
        return PRT_STATUS_UNSUPPORTED;
    }
    ka = prt__onnx_known(eb, a->d[a->nb - 1]);
    kb = prt__onnx_known(eb, b->d[b->nb - 2]);
    ba = a->nb == 3 ? prt__onnx_known(eb, a->d[0]) : 1;
    bb = b->nb == 3 ? prt__onnx_known(eb, b->d[0]) : 1;
    if ((ka >= 0 && kb >= 0 && ka != kb) || ba < 0 || bb < 0 || (ba != bb && ba != 1 && bb != 1)) {
        prt_msg_set(err, "a [%lld, ., %lld] and b [%lld, %lld, .] do not multiply (known batches that match or are 1)",
                    (long long)ba, (long long)ka, (long long)bb, (long long)kb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = a->nb > b->nb ? a->nb : b->nb;
    if (out->nb == 3) out->d[0] = ba >= bb ? (a->nb == 3 ? a->d[0] : b->d[0]) : b->d[0];
    out->d[out->nb - 2] = a->d[a->nb - 2];
    out->d[out->nb - 1] = b->d[b->nb - 1];
    return PRT_OK;
}

/* QLinearMatMul: y = saturate(round((a - za)(b - zb) * sa * sb / sy) + zy), ties to even. */
static prt_status qmm_run(const prt_tensor_desc *in, const prt_tensor_desc *out, const void *const *x, void *y,
                          prt_msg *err)
{
    int32_t ra = in[0].dims.nb, rb = in[3].dims.nb, k;
    int64_t M = in[0].dims.d[ra - 2], K = in[0].dims.d[ra - 1], N = in[3].dims.d[rb - 1];
    int64_t nb = out->dims.nb == 3 ? out->dims.d[0] : 1, ba = ra == 3 ? in[0].dims.d[0] : 1, bt, i, j, kk;
    double mult, zy;
    int64_t za, zb;
    for (k = 1; k < 8; k++)
        if (k != 3 && prt_dims_volume(&in[k].dims) != 1) {
            prt_msg_set(err, "input %d holds %lld values; only per-tensor scales and zero points are supported",
                        (int)k, (long long)prt_dims_volume(&in[k].dims));
            return PRT_STATUS_UNSUPPORTED;
        }
    if (K != in[3].dims.d[rb - 2]) {
        prt_msg_set(err, "a's K = %lld differs from b's %lld", (long long)K, (long long)in[3].dims.d[rb - 2]);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    mult = prt__onnx_get_f64(x[1], in[1].dtype, 0) * prt__onnx_get_f64(x[4], in[4].dtype, 0) /
           prt__onnx_get_f64(x[6], in[6].dtype, 0);
    za = prt__onnx_get_i64(x[2], in[2].dtype, 0);
    zb = prt__onnx_get_i64(x[5], in[5].dtype, 0);
    zy = prt__onnx_get_f64(x[7], in[7].dtype, 0);
    for (bt = 0; bt < nb; bt++) {
        int64_t oa = (ba == 1 ? 0 : bt) * M * K, ob = (rb == 3 && in[3].dims.d[0] != 1 ? bt : 0) * K * N;
        for (i = 0; i < M; i++)
            for (j = 0; j < N; j++) {
                int64_t acc = 0;
                double v;
                for (kk = 0; kk < K; kk++)
                    acc += (prt__onnx_get_i64(x[0], in[0].dtype, oa + i * K + kk) - za) *
                           (prt__onnx_get_i64(x[3], in[3].dtype, ob + kk * N + j) - zb);
                v = q_sat(nearbyint((double)acc * mult) + zy, out->dtype);
                prt__onnx_scatter_f64(y, out->dtype, (bt * M + i) * N + j, &v, 1);
            }
    }
    return PRT_OK;
}

static prt_status q_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const qrow *r = n->def->row;
    int64_t ka, kb;
    (void)nb_in;
    if (r->kind == QK_DYNAMIC) {
        out[0] = in[0];
        out[1].nb = out[2].nb = 0;
        return PRT_OK;
    }
    if (r->kind == QK_QLINEAR_MM) return qmm_shapes(in, out, eb, err);
    if (r->kind != QK_MATMUL_INT) {
        out[0] = in[0];
        return PRT_OK;
    }
    if (in[0].nb != 2 || in[1].nb != 2) {
        prt_msg_set(err, "A and B must be 2-D, got ranks %d and %d", (int)in[0].nb, (int)in[1].nb);
        return PRT_STATUS_UNSUPPORTED;
    }
    ka = prt__onnx_known(eb, in[0].d[1]);
    kb = prt__onnx_known(eb, in[1].d[0]);
    if (ka >= 0 && kb >= 0 && ka != kb) {
        prt_msg_set(err, "A's K = %lld differs from B's %lld", (long long)ka, (long long)kb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = 2;
    out->d[0] = in[0].d[0];
    out->d[1] = in[1].d[1];
    return PRT_OK;
}

/* Per-tensor (scale holds 1 value) or per-axis parameter index of element i. */
static prt_status q_param(const prt__onnx_node *n, const prt_tensor_desc *in, int64_t *inner, int64_t *len,
                          prt_msg *err)
{
    const qstate *s = PRT__ONNX_STATE(n, qstate);
    int64_t ns = prt_dims_volume(&in[1].dims), i;
    int32_t a;
    prt_status st;
    *inner = 1;
    *len = 1;
    if (ns == 1 && in[1].dims.nb <= 1) return PRT_OK;
    if (in[1].dims.nb != 1 || (st = prt__onnx_axis(n, "axis", s->axis, in[0].dims.nb, 0, &a, err)) != PRT_OK ||
        in[0].dims.d[a] != ns) {
        prt_msg_set(err, "the scale must hold 1 value or one per element of the axis (1-D); got %lld values", (long long)ns);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = a + 1; i < in[0].dims.nb; i++) *inner *= in[0].dims.d[i];
    *len = ns;
    return PRT_OK;
}

static double q_sat(double v, prt_dtype t)
{
    double lo = t == PRT_DTYPE_I8 ? -128 : 0, hi = t == PRT_DTYPE_I8 ? 127 : 255;
    return v < lo ? lo : v > hi ? hi : v;
}

static prt_status q_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const qrow *r = n->def->row;
    int64_t vol = prt_dims_volume(&in[0].dims), inner, len, i;
    prt_status st;
    (void)ws; (void)ex;
    switch (r->kind) {
    case QK_QUANT: case QK_DEQUANT:
        if ((st = q_param(n, in, &inner, &len, err)) != PRT_OK) return st;
        if (nb_in > 2 && prt_dims_volume(&in[2].dims) != prt_dims_volume(&in[1].dims)) {
            prt_msg_set(err, "the zero point holds %lld values, the scale %lld", (long long)prt_dims_volume(&in[2].dims),
                        (long long)prt_dims_volume(&in[1].dims));
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < vol; i++) {
            int64_t p = (i / inner) % len;
            double sc = prt__onnx_get_f64(x[1], in[1].dtype, p), zp = nb_in > 2 ? prt__onnx_get_f64(x[2], in[2].dtype, p) : 0;
            double v = prt__onnx_get_f64(x[0], in[0].dtype, i);
            v = r->kind == QK_QUANT ? q_sat(nearbyint(v / sc) + zp, out[0].dtype) : (v - zp) * sc;
            prt__onnx_scatter_f64(y[0], out[0].dtype, i, &v, 1);
        }
        return PRT_OK;
    case QK_DYNAMIC: {
        double lo = 0, hi = 0, sc, zp;
        float scf;
        for (i = 0; i < vol; i++) {
            double v = ((const float *)x[0])[i];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        sc = (hi - lo) / 255.0;
        scf = (float)sc;
        zp = scf != 0 ? q_sat(nearbyint(-lo / scf), PRT_DTYPE_U8) : 0;
        *(float *)y[1] = scf;
        *(uint8_t *)y[2] = (uint8_t)zp;
        for (i = 0; i < vol; i++) {
            double v = scf != 0 ? q_sat(nearbyint(((const float *)x[0])[i] / scf) + zp, PRT_DTYPE_U8) : zp;
            ((uint8_t *)y[0])[i] = (uint8_t)v;
        }
        return PRT_OK;
    }
    case QK_QLINEAR_MM:
        return qmm_run(in, &out[0], x, y[0], err);
    case QK_MATMUL_INT: {
        int64_t M = in[0].dims.d[0], K = in[0].dims.d[1], N = in[1].dims.d[1], j, k;
        int64_t nza = nb_in > 2 ? prt_dims_volume(&in[2].dims) : 0, nzb = nb_in > 3 ? prt_dims_volume(&in[3].dims) : 0;
        if (K != in[1].dims.d[0]) {
            prt_msg_set(err, "A's K = %lld differs from B's %lld", (long long)K, (long long)in[1].dims.d[0]);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if ((nza != 0 && nza != 1 && nza != M) || (nzb != 0 && nzb != 1 && nzb != N)) {
            prt_msg_set(err, "zero points must hold 1 value or one per row of A / column of B; got %lld and %lld",
                        (long long)nza, (long long)nzb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        for (i = 0; i < M; i++) {
            int64_t za = nza ? prt__onnx_get_i64(x[2], in[2].dtype, nza == 1 ? 0 : i) : 0;
            for (j = 0; j < N; j++) {
                int64_t zb = nzb ? prt__onnx_get_i64(x[3], in[3].dtype, nzb == 1 ? 0 : j) : 0, acc = 0;
                for (k = 0; k < K; k++)
                    acc += (prt__onnx_get_i64(x[0], in[0].dtype, i * K + k) - za) *
                           (prt__onnx_get_i64(x[1], in[1].dtype, k * N + j) - zb);
                ((int32_t *)y[0])[i * N + j] = (int32_t)(uint32_t)(uint64_t)acc;
            }
        }
        return PRT_OK;
    }
    }
    return PRT_STATUS_INTERNAL;
}

static const qrow r_quant = {QK_QUANT}, r_dequant = {QK_DEQUANT}, r_dynamic = {QK_DYNAMIC}, r_mmi = {QK_MATMUL_INT};
static const qrow r_qmm = {QK_QLINEAR_MM};

/* Each version takes a prefix. */
static const prt_field_schema s_q[] = {
    PRT__ONNX_I64("axis", 1, "the axis of per-axis scales (13)"),
    PRT__ONNX_I64("saturate", 1, "float8 targets only (19)"),
    PRT__ONNX_I64("block_size", 0, "must be 0 (21)"),
    PRT__ONNX_I64("output_dtype", 0, "QuantizeLinear: TensorProto type of y when there is no zero point (21)"),
};

#define AL PRT__ONNX_ALL
#define Q(nm, ver, rw, nf, minin, maxin, nout) \
    PRT__ONNX_DEF(nm, ver, rw, s_q, nf, minin, maxin, nout, AL, qstate, q)

static const prt__onnx_def quant_defs[] = {
    Q("QuantizeLinear", "10", r_quant, 0, 2, 3, 1),
    Q("QuantizeLinear", "13", r_quant, 1, 2, 3, 1),
    Q("QuantizeLinear", "19", r_quant, 2, 2, 3, 1),
    Q("QuantizeLinear", "21", r_quant, 4, 2, 3, 1),
    Q("DequantizeLinear", "10", r_dequant, 0, 2, 3, 1),
    Q("DequantizeLinear", "13", r_dequant, 1, 2, 3, 1),
    Q("DequantizeLinear", "19", r_dequant, 1, 2, 3, 1),
    Q("DequantizeLinear", "21", r_dequant, 3, 2, 3, 1),
    Q("DynamicQuantizeLinear", "11", r_dynamic, 0, 1, 1, 3),
    Q("MatMulInteger", "10", r_mmi, 0, 2, 4, 1),
    Q("QLinearMatMul", "10", r_qmm, 0, 8, 8, 1),
    Q("QLinearMatMul", "21", r_qmm, 0, 8, 8, 1),
};
PRT__ONNX_REGISTER_TABLE(quant_defs)
