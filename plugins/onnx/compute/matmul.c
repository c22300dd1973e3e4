/*
 * onnx/compute/matmul.c - MatMul (numpy semantics, batch broadcasting) and
 * Gemm (alpha, beta, transA, transB, C broadcast to [M, N]) on the shared
 * register-blocked sgemm (plugins/common/cpu_gemm.c). fp32.
 */
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef struct mstate {
    double alpha, beta;
    int32_t ta, tb;
} mstate;

typedef struct mrow {
    int gemm;
} mrow;

static prt_status mm_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    mstate *s = PRT__ONNX_STATE(n, mstate);
    (void)err;
    s->alpha = prt_fields_f64(fc, "alpha", 0, 1.0);
    s->beta = prt_fields_f64(fc, "beta", 0, 1.0);
    s->ta = prt_fields_i64(fc, "transA", 0, 0) != 0;
    s->tb = prt_fields_i64(fc, "transB", 0, 0) != 0;
    return PRT_OK;
}

static prt_status mm_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    return prt__onnx_types_same(n, in, nb_in, out, err);
}

/* Extents of A and B as matrices: a batch prefix and (M, K), (K, N). */
static prt_status mm_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const mrow *r = n->def->row;
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    const prt_dims_expr *a = &in[0], *b = &in[1];
    int64_t ka, kb;
    if (r->gemm) {
        if (a->nb != 2 || b->nb != 2) {
            prt_msg_set(err, "A and B must be 2-D, got ranks %d and %d", (int)a->nb, (int)b->nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        ka = prt__onnx_known(eb, a->d[s->ta ? 0 : 1]);
        kb = prt__onnx_known(eb, b->d[s->tb ? 1 : 0]);
        if (ka >= 0 && kb >= 0 && ka != kb) {
            prt_msg_set(err, "A gives K = %lld but B gives K = %lld", (long long)ka, (long long)kb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out->nb = 2;
        out->d[0] = a->d[s->ta ? 1 : 0];
        out->d[1] = b->d[s->tb ? 0 : 1];
        (void)nb_in;
        return PRT_OK;
    }
    if (a->nb == 0 || b->nb == 0) {
        prt_msg_set(err, "inputs must have rank >= 1, got %d and %d", (int)a->nb, (int)b->nb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    ka = prt__onnx_known(eb, a->d[a->nb - 1]);
    kb = prt__onnx_known(eb, b->d[b->nb >= 2 ? b->nb - 2 : 0]);
    if (ka >= 0 && kb >= 0 && ka != kb) {
        prt_msg_set(err, "A's last extent %lld differs from B's K extent %lld", (long long)ka, (long long)kb);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    {
        /* batch dims broadcast, then M (if A is not 1-D) and N (if B is not 1-D) */
        prt_dims_expr ba, bb;
        prt_status st;
        memset(&ba, 0, sizeof ba);
        memset(&bb, 0, sizeof bb);
        ba.nb = a->nb > 2 ? a->nb - 2 : 0;
        bb.nb = b->nb > 2 ? b->nb - 2 : 0;
        memcpy(ba.d, a->d, sizeof(ba.d[0]) * (size_t)ba.nb);
        memcpy(bb.d, b->d, sizeof(bb.d[0]) * (size_t)bb.nb);
        {
            prt_dims_expr pair[2];
            pair[0] = ba;
            pair[1] = bb;
            if ((st = prt__onnx_shapes_bcast(n, pair, 2, out, eb, err)) != PRT_OK) return st;
        }
        if (a->nb >= 2) out->d[out->nb++] = a->d[a->nb - 2];
        if (b->nb >= 2) out->d[out->nb++] = b->d[b->nb - 1];
    }
    return PRT_OK;
}

static prt_status mm_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const mrow *r = n->def->row;
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    const prt_dims *da = &in[0].dims, *db = &in[1].dims, *dy = &out[0].dims;
    float *yy = y[0];
    (void)ws;
    if (in[0].dtype != PRT_DTYPE_F32) {
        prt_msg_set(err, "only f32 is implemented, got %s", prt_dtype_name(in[0].dtype));
        return PRT_STATUS_UNSUPPORTED;
    }
    if (r->gemm) {
        int64_t M = dy->d[0], N = dy->d[1], K = s->ta ? da->d[0] : da->d[1], i, j;
        float beta = 0;
        if ((s->ta ? da->d[0] : da->d[1]) != (s->tb ? db->d[1] : db->d[0])) {
            prt_msg_set(err, "A and B disagree on K");
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (nb_in > 2 && prt_dims_volume(&in[2].dims) > 0 && s->beta != 0) {
            prt__bcast plan;
            const prt_dims *dc = &in[2].dims;
            prt_status st = prt__bcast_plan(&plan, dy, &dc, 1, err);
            if (st != PRT_OK) return st;
            for (i = 0; i < M; i++)
                for (j = 0; j < N; j++) {
                    int64_t ci = (dc->nb == 2 ? (dc->d[0] == 1 ? 0 : i) * dc->d[1] : 0) +
                                 (dc->nb >= 1 && dc->d[dc->nb - 1] != 1 ? j : 0);
                    yy[i * N + j] = ((const float *)x[2])[ci];
                }
            beta = (float)s->beta;
        }
        prt__sgemm(M, N, K, (float)s->alpha, x[0], s->ta ? 1 : K, s->ta ? M : 1, x[1], s->tb ? 1 : N, s->tb ? K : 1,
                   beta, yy, N, ex);
        return PRT_OK;
    }
    {
        int32_t ra = da->nb, rb = db->nb, i;
        int64_t M = ra >= 2 ? da->d[ra - 2] : 1, K = da->d[ra - 1], N = rb >= 2 ? db->d[rb - 1] : 1;
        int64_t kb = rb >= 2 ? db->d[rb - 2] : db->d[0], batches, bidx;
        prt_dims bo, ba, bb;
        int64_t sa[PRT_MAX_DIMS], sb[PRT_MAX_DIMS];
        if (K != kb) {
            prt_msg_set(err, "A's K = %lld differs from B's %lld", (long long)K, (long long)kb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        memset(&bo, 0, sizeof bo);
        memset(&ba, 0, sizeof ba);
        memset(&bb, 0, sizeof bb);
        ba.nb = ra > 2 ? ra - 2 : 0;
        bb.nb = rb > 2 ? rb - 2 : 0;
        for (i = 0; i < ba.nb; i++) ba.d[i] = da->d[i];
        for (i = 0; i < bb.nb; i++) bb.d[i] = db->d[i];
        bo.nb = ba.nb > bb.nb ? ba.nb : bb.nb;
        for (i = 0; i < bo.nb; i++) bo.d[i] = dy->d[i];
        batches = prt_dims_volume(&bo);
        prt__onnx_strides(&ba, sa);
        prt__onnx_strides(&bb, sb);
        for (bidx = 0; bidx < batches; bidx++) {
            int64_t rem = bidx, oa = 0, ob = 0;
            for (i = bo.nb - 1; i >= 0; i--) {
                int64_t c = rem % bo.d[i];
                int32_t ja = i - (bo.nb - ba.nb), jb = i - (bo.nb - bb.nb);
                rem /= bo.d[i];
                if (ja >= 0 && ba.d[ja] != 1) oa += c * sa[ja];
                if (jb >= 0 && bb.d[jb] != 1) ob += c * sb[jb];
                if ((ja >= 0 && ba.d[ja] != 1 && ba.d[ja] != bo.d[i]) || (jb >= 0 && bb.d[jb] != 1 && bb.d[jb] != bo.d[i])) {
                    prt_msg_set(err, "batch dims of A and B do not broadcast");
                    return PRT_STATUS_SHAPE_MISMATCH;
                }
            }
            prt__sgemm(M, N, K, 1.0f, (const float *)x[0] + oa * M * K, K, 1, (const float *)x[1] + ob * K * N, N, 1,
                       0.0f, yy + bidx * M * N, N, ex);
        }
        return PRT_OK;
    }
}

static const mrow r_matmul = {0}, r_gemm = {1};
static const prt_field_schema s_gemm[] = {
    PRT__ONNX_F32("alpha", 1.0f, "scales A B"),
    PRT__ONNX_F32("beta", 1.0f, "scales C"),
    PRT__ONNX_I64("transA", 0, "1: A is given transposed"),
    PRT__ONNX_I64("transB", 0, "1: B is given transposed"),
};

#define F32 PRT__ONNX_T(PRT_DTYPE_F32)
static const prt__onnx_def matmul_defs[] = {
    {.name = "MatMul", .version = "1", .min_in = 2, .max_in = 2, .nb_out = 1, .in_mask = F32,
     .state_size = sizeof(mstate), .row = &r_matmul, .init = mm_init, .types = mm_types, .shapes = mm_shapes,
     .run = mm_run, .doc = "ONNX MatMul (numpy matmul), fp32"},
    {.name = "Gemm", .version = "7", .min_in = 2, .max_in = 3, .nb_out = 1, .in_mask = F32, .schema = s_gemm,
     .nb_fields = PRT__ONNX_NFIELDS(s_gemm), .state_size = sizeof(mstate), .row = &r_gemm, .init = mm_init,
     .types = mm_types, .shapes = mm_shapes, .run = mm_run, .doc = "ONNX Gemm, fp32"},
};
PRT__ONNX_REGISTER_TABLE(matmul_defs)
