/*
 * onnx/reduce/loss.c - NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
 * (12, 13): per-element losses over the class axis 1, optional class
 * weights, ignore_index, reduction none / sum / mean (mean divides by the
 * weights of the elements not ignored). Float inputs, integer targets.
 */
#include <math.h>
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum lred { LR_NONE, LR_SUM, LR_MEAN } lred;

typedef struct lrow {
    int softmax; /* SoftmaxCrossEntropyLoss: log_softmax first, second output log_prob */
} lrow;

typedef struct lstate {
    lred red;
    int64_t ignore;
    int32_t has_ignore;
} lstate;

static prt_status ls_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    static const char *const reds[] = {"none", "sum", "mean"};
    lstate *s = PRT__ONNX_STATE(n, lstate);
    int r = prt__onnx_str_enum(n, fc, "reduction", reds, 3, LR_MEAN, err);
    if (r < 0) return PRT_STATUS_INVALID_FIELD;
    s->red = (lred)r;
    s->has_ignore = prt_fields_find(fc, "ignore_index") != NULL;
    s->ignore = prt_fields_i64(fc, "ignore_index", 0, 0);
    return PRT_OK;
}

static prt_status ls_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    if (!prt__onnx_is_float(in[0]) || (in[1] != PRT_DTYPE_I32 && in[1] != PRT_DTYPE_I64) ||
        (nb_in > 2 && in[2] != in[0])) {
        prt_msg_set(err, "takes float scores, i32 or i64 targets and weights of the scores' type; got %s, %s",
                    prt_dtype_name(in[0]), prt_dtype_name(in[1]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    out[0] = in[0];
    if (n->nb_out > 1) out[1] = in[0];
    return PRT_OK;
}

static prt_status ls_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const lstate *s = PRT__ONNX_STATE(n, lstate);
    (void)nb_in; (void)eb;
    if (in[0].nb < 2 || in[1].nb != in[0].nb - 1) {
        prt_msg_set(err, "scores must be [N, C, d..] and targets [N, d..]; got ranks %d and %d", (int)in[0].nb,
                    (int)in[1].nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (s->red == LR_NONE) out[0] = in[1];
    else out[0].nb = 0;
    if (n->nb_out > 1) out[1] = in[0];
    return PRT_OK;
}

static prt_status ls_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const lrow *r = n->def->row;
    const lstate *s = PRT__ONNX_STATE(n, lstate);
    const prt_dims *d = &in[0].dims;
    const prt_dtype t = in[0].dtype;
    int64_t N = d->d[0], C = d->d[1], inner = 1, i, k, c;
    double total = 0, wsum = 0;
    (void)ws; (void)ex;
    for (i = 2; i < d->nb; i++) inner *= d->d[i];
    if (prt_dims_volume(&in[1].dims) != N * inner || (nb_in > 2 && prt_dims_volume(&in[2].dims) != C)) {
        prt_msg_set(err, "targets must hold N x d.. = %lld values and weights C = %lld", (long long)(N * inner),
                    (long long)C);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    if (r->softmax) /* log_prob = log_softmax over axis 1, into output 1 (or computed on the fly) */
        for (i = 0; i < N; i++)
            for (k = 0; k < inner; k++) {
                double m = -INFINITY, sum = 0;
                for (c = 0; c < C; c++) m = fmax(m, prt__onnx_get_f64(x[0], t, (i * C + c) * inner + k));
                for (c = 0; c < C; c++) sum += exp(prt__onnx_get_f64(x[0], t, (i * C + c) * inner + k) - m);
                for (c = 0; c < C && n->nb_out > 1 && y[1]; c++) {
                    double v = prt__onnx_get_f64(x[0], t, (i * C + c) * inner + k) - m - log(sum);
                    prt__onnx_scatter_f64(y[1], out[1].dtype, (i * C + c) * inner + k, &v, 1);
                }
            }
    for (i = 0; i < N; i++)
        for (k = 0; k < inner; k++) {
            int64_t tg = prt__onnx_get_i64(x[1], in[1].dtype, i * inner + k);
            double w, v, lp;
            if (s->has_ignore && tg == s->ignore) {
                v = 0;
                if (s->red == LR_NONE) prt__onnx_scatter_f64(y[0], out[0].dtype, i * inner + k, &v, 1);
                continue;
            }
            if (tg < 0 || tg >= C) {
                prt_msg_set(err, "target %lld at position %lld is outside [0, %lld)", (long long)tg,
                            (long long)(i * inner + k), (long long)C);
                return PRT_STATUS_INVALID_ARGUMENT;
            }
            w = nb_in > 2 ? prt__onnx_get_f64(x[2], in[2].dtype, tg) : 1.0;
            if (r->softmax) {
                double m = -INFINITY, sum = 0;
                for (c = 0; c < C; c++) m = fmax(m, prt__onnx_get_f64(x[0], t, (i * C + c) * inner + k));
                for (c = 0; c < C; c++) sum += exp(prt__onnx_get_f64(x[0], t, (i * C + c) * inner + k) - m);
                lp = prt__onnx_get_f64(x[0], t, (i * C + tg) * inner + k) - m - log(sum);
            } else {
                lp = prt__onnx_get_f64(x[0], t, (i * C + tg) * inner + k);
            }
            v = -lp * w;
            total += v;
            wsum += w;
            if (s->red == LR_NONE) prt__onnx_scatter_f64(y[0], out[0].dtype, i * inner + k, &v, 1);
        }
    if (s->red != LR_NONE) {
        double v = s->red == LR_SUM ? total : total / wsum; /* every element ignored: 0 / 0 */
        prt__onnx_scatter_f64(y[0], out[0].dtype, 0, &v, 1);
    }
    return PRT_OK;
}

static const lrow r_nll = {0}, r_sce = {1};
static const prt_field_schema s_loss[] = {
    PRT__ONNX_STR("reduction", "mean", "none, sum or mean"),
    PRT__ONNX_OPT("ignore_index", PRT_FIELD_INT64, "targets equal to it add nothing"),
};

static const prt__onnx_def loss_defs[] = {
    PRT__ONNX_DEF("NegativeLogLikelihoodLoss", "12", r_nll, s_loss, 2, 2, 3, 1, PRT__ONNX_ALL, lstate, ls),
    PRT__ONNX_DEF("SoftmaxCrossEntropyLoss", "12", r_sce, s_loss, 2, 2, 3, 2, PRT__ONNX_ALL, lstate, ls),
};
PRT__ONNX_REGISTER_TABLE(loss_defs)
