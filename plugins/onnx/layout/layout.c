/*
 * onnx/layout/layout.c - ops that move elements: Transpose, Slice,
 * DepthToSpace, SpaceToDepth (strided copies), Tile, Concat, Split.
 * See README.md in this folder.
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

typedef enum mkind { MK_TRANSPOSE, MK_SLICE, MK_D2S, MK_S2D, MK_TILE, MK_CONCAT, MK_SPLIT } mkind;

typedef struct mrow {
    mkind kind;
    int inputs_form; /* Slice 10 / Split 13 / Tile: values from "input:k" fields */
} mrow;

#define MAXV 64 /* Split outputs */

typedef struct mstate {
    int64_t perm[PRT_MAX_DIMS];
    int64_t nperm;
    int64_t starts[PRT_MAX_DIMS], ends[PRT_MAX_DIMS], axes[PRT_MAX_DIMS], steps[PRT_MAX_DIMS];
    int64_t nstarts, nends, naxes, nsteps;
    int64_t split[MAXV];
    int64_t nsplit;
    int64_t axis, block, num_outputs;
    int32_t crd;
} mstate;

static prt_status m_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    const mrow *r = n->def->row;
    mstate *s = PRT__ONNX_STATE(n, mstate);
    prt_status st = PRT_OK;
    int f = r->inputs_form;
    int64_t i;
    s->axis = prt_fields_i64(fc, "axis", 0, 0);
    s->block = prt_fields_i64(fc, "blocksize", 0, 1);
    s->num_outputs = prt_fields_i64(fc, "num_outputs", 0, 0);
    s->crd = prt__onnx_str_is(fc, "mode", "CRD", 0);
    if (prt_fields_find(fc, "mode") && !s->crd && !prt__onnx_str_is(fc, "mode", "DCR", 0)) {
        prt_msg_set(err, "%s v%s: field \"mode\" must be \"DCR\" or \"CRD\"", n->def->name, n->def->version);
        return PRT_STATUS_INVALID_FIELD;
    }
    switch (r->kind) {
    case MK_TRANSPOSE: st = prt__onnx_field_ints(n, fc, "perm", s->perm, PRT_MAX_DIMS, &s->nperm, err); break;
    case MK_SLICE:
        if ((st = prt__onnx_field_ints(n, fc, f ? "input:1" : "starts", s->starts, PRT_MAX_DIMS, &s->nstarts, err)) ||
            (st = prt__onnx_field_ints(n, fc, f ? "input:2" : "ends", s->ends, PRT_MAX_DIMS, &s->nends, err)) ||
            (st = prt__onnx_field_ints(n, fc, f ? "input:3" : "axes", s->axes, PRT_MAX_DIMS, &s->naxes, err)) ||
            (st = prt__onnx_field_ints(n, fc, "input:4", s->steps, PRT_MAX_DIMS, &s->nsteps, err)))
            return st;
        if (s->nstarts < 0 || s->nends < 0 || s->nstarts != s->nends ||
            (s->naxes >= 0 && s->naxes != s->nstarts) || (s->nsteps >= 0 && s->nsteps != s->nstarts)) {
            prt_msg_set(err, "%s v%s: starts and ends must be constants of one length, with axes and steps of "
                        "that length when given; got %lld, %lld, %lld, %lld values", n->def->name, n->def->version,
                        (long long)s->nstarts, (long long)s->nends, (long long)s->naxes, (long long)s->nsteps);
            return s->nstarts < 0 || s->nends < 0 ? PRT_STATUS_UNSUPPORTED : PRT_STATUS_INVALID_FIELD;
        }
        for (i = 0; i < s->nstarts; i++) {
            if (s->naxes < 0) s->axes[i] = i;
            if (s->nsteps < 0) s->steps[i] = 1;
            if (s->steps[i] == 0) {
                prt_msg_set(err, "%s v%s: steps[%lld] is 0", n->def->name, n->def->version, (long long)i);
                return PRT_STATUS_INVALID_FIELD;
            }
        }
        break;
    case MK_TILE:
        if ((st = prt__onnx_field_ints(n, fc, "input:1", s->perm, PRT_MAX_DIMS, &s->nperm, err)) != PRT_OK) return st;
        if (s->nperm < 0) {
            prt_msg_set(err, "%s v%s: repeats must be a constant (field \"input:1\")", n->def->name, n->def->version);
            return PRT_STATUS_UNSUPPORTED;
        }
        break;
    case MK_D2S: case MK_S2D:
        if (s->block < 1) {
            prt_msg_set(err, "%s v%s: blocksize must be >= 1, got %lld", n->def->name, n->def->version,
                        (long long)s->block);
            return PRT_STATUS_INVALID_FIELD;
        }
        break;
    case MK_SPLIT:
        if ((st = prt__onnx_field_ints(n, fc, f ? "input:1" : "split", s->split, MAXV, &s->nsplit, err)) != PRT_OK)
            return st;
        if (s->nsplit > 0) {
            n->nb_out = (int32_t)s->nsplit;
            for (i = 0; i < s->nsplit; i++)
                if (s->split[i] < 0) {
                    prt_msg_set(err, "%s v%s: split[%lld] is %lld; sizes are >= 0", n->def->name, n->def->version,
                                (long long)i, (long long)s->split[i]);
                    return PRT_STATUS_INVALID_FIELD;
                }
        } else if (s->num_outputs >= 1 && s->num_outputs <= MAXV) {
            n->nb_out = (int32_t)s->num_outputs;
        } else {
            prt_msg_set(err, "%s v%s: give the sizes (\"%s\") or \"num_outputs\" (1 to %d), got %lld outputs",
                        n->def->name, n->def->version, f ? "input:1" : "split", MAXV, (long long)s->num_outputs);
            return PRT_STATUS_INVALID_FIELD;
        }
        break;
    default: break;
    }
    return st;
}

static prt_status m_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          prt_msg *err)
{
    const mrow *r = n->def->row;
    int32_t i;
    if (r->kind == MK_CONCAT) return prt__onnx_types_same(n, in, nb_in, out, err);
    if (nb_in > 1) {
        prt_msg_set(err, "inputs after the first must be constants (fields \"input:k\"); run-time values are not "
                    "supported");
        return PRT_STATUS_UNSUPPORTED;
    }
    for (i = 0; i < n->nb_out; i++) out[i] = in[0];
    return PRT_OK;
}

/* Slice of one axis of extent d: first index and count. */
static void slice_axis(int64_t d, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count)
{
    int64_t lim = (int64_t)1 << 62;
    start = start < -lim ? -lim : start > lim ? lim : start;
    end = end < -lim ? -lim : end > lim ? lim : end;
    if (start < 0) start += d;
    if (end < 0) end += d;
    if (step > 0) {
        start = start < 0 ? 0 : start > d ? d : start;
        end = end < 0 ? 0 : end > d ? d : end;
        *count = end > start ? (end - start + step - 1) / step : 0;
    } else {
        start = start < 0 ? -1 : start > d - 1 ? d - 1 : start;
        end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
        *count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    *first = start;
}

/* The slice extent as an expression of d (step > 0 or < 0). */
static const prt_expr *slice_expr(prt_expr_builder *eb, const prt_expr *d, int64_t start, int64_t end, int64_t step)
{
#define K(v) eb->constant(eb, v)
#define OP(o, a, b) eb->operation(eb, PRT_EXPR_##o, a, b)
    int64_t lim = (int64_t)1 << 62, dk = prt__onnx_known(eb, d);
    const prt_expr *s, *e, *lo = K(step > 0 ? 0 : -1), *hi = step > 0 ? d : OP(SUB, d, K(1));
    if (dk >= 0) {
        int64_t f, c;
        slice_axis(dk, start, end, step, &f, &c);
        return K(c);
    }
    start = start < -lim ? -lim : start > lim ? lim : start;
    end = end < -lim ? -lim : end > lim ? lim : end;
    s = start < 0 ? OP(MAX, lo, OP(SUM, d, K(start))) : OP(MIN, K(start), hi);
    e = end < 0 ? OP(MAX, lo, OP(SUM, d, K(end))) : OP(MIN, K(end), hi);
    if (step > 0) return OP(CEIL_DIV, OP(MAX, K(0), OP(SUB, e, s)), K(step));
    return OP(CEIL_DIV, OP(MAX, K(0), OP(SUB, s, e)), K(-step));
#undef K
#undef OP
}

static prt_status m_axes_check(const prt__onnx_node *n, int32_t rank, int32_t *ax, prt_msg *err)
{
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    int32_t i, seen[PRT_MAX_DIMS] = {0};
    prt_status st;
    for (i = 0; i < s->nstarts; i++) {
        if ((st = prt__onnx_axis(n, "axis", s->axes[i], rank, 0, &ax[i], err)) != PRT_OK) return st;
        if (seen[ax[i]]++) {
            prt_msg_set(err, "axes name axis %d twice", (int)ax[i]);
            return PRT_STATUS_INVALID_FIELD;
        }
    }
    return PRT_OK;
}

static prt_status m_perm(const prt__onnx_node *n, int32_t rank, int32_t *perm, prt_msg *err)
{
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    int32_t i, seen[PRT_MAX_DIMS] = {0};
    if (s->nperm < 0) {
        for (i = 0; i < rank; i++) perm[i] = rank - 1 - i;
        return PRT_OK;
    }
    if (s->nperm != rank) {
        prt_msg_set(err, "perm has %lld values for an input of rank %d", (long long)s->nperm, (int)rank);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    for (i = 0; i < rank; i++) {
        if (s->perm[i] < 0 || s->perm[i] >= rank || seen[s->perm[i]]++) {
            prt_msg_set(err, "perm is not a permutation of 0..%d (value %lld at %d)", (int)rank - 1,
                        (long long)s->perm[i], (int)i);
            return PRT_STATUS_INVALID_FIELD;
        }
        perm[i] = (int32_t)s->perm[i];
    }
    return PRT_OK;
}

static prt_status m_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           prt_expr_builder *eb, prt_msg *err)
{
    const mrow *r = n->def->row;
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    int32_t i, k, a, perm[PRT_MAX_DIMS];
    const prt_expr *b = eb->constant(eb, s->block), *bb = eb->constant(eb, s->block * s->block);
    prt_status st;
    switch (r->kind) {
    case MK_TRANSPOSE:
        if ((st = m_perm(n, in[0].nb, perm, err)) != PRT_OK) return st;
        out->nb = in[0].nb;
        for (i = 0; i < in[0].nb; i++) out->d[i] = in[0].d[perm[i]];
        return PRT_OK;
    case MK_SLICE:
        if ((st = m_axes_check(n, in[0].nb, perm, err)) != PRT_OK) return st;
        out[0] = in[0];
        for (i = 0; i < s->nstarts; i++)
            out->d[perm[i]] = slice_expr(eb, in[0].d[perm[i]], s->starts[i], s->ends[i], s->steps[i]);
        return PRT_OK;
    case MK_TILE:
        if (s->nperm != in[0].nb) {
            prt_msg_set(err, "repeats has %lld values for an input of rank %d", (long long)s->nperm, (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        for (i = 0; i < in[0].nb; i++) {
            if (s->perm[i] < 0) {
                prt_msg_set(err, "repeats[%d] is %lld; repeats are >= 0", (int)i, (long long)s->perm[i]);
                return PRT_STATUS_INVALID_FIELD;
            }
            out->d[i] = eb->operation(eb, PRT_EXPR_PROD, in[0].d[i], eb->constant(eb, s->perm[i]));
        }
        return PRT_OK;
    case MK_D2S: case MK_S2D: {
        int64_t c = prt__onnx_known(eb, in[0].d[1]);
        if (in[0].nb != 4) {
            prt_msg_set(err, "input must be 4-D [N, C, H, W], got rank %d", (int)in[0].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        if (r->kind == MK_D2S) {
            if (c >= 0 && c % (s->block * s->block) != 0) {
                prt_msg_set(err, "C = %lld is not a multiple of blocksize^2 = %lld", (long long)c,
                            (long long)(s->block * s->block));
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            out->d[1] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, in[0].d[1], bb);
            out->d[2] = eb->operation(eb, PRT_EXPR_PROD, in[0].d[2], b);
            out->d[3] = eb->operation(eb, PRT_EXPR_PROD, in[0].d[3], b);
        } else {
            for (i = 2; i < 4; i++) {
                int64_t e = prt__onnx_known(eb, in[0].d[i]);
                if (e >= 0 && e % s->block != 0) {
                    prt_msg_set(err, "extent %d (%lld) is not a multiple of blocksize %lld", (int)i, (long long)e,
                                (long long)s->block);
                    return PRT_STATUS_SHAPE_MISMATCH;
                }
                out->d[i] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, in[0].d[i], b);
            }
            out->d[1] = eb->operation(eb, PRT_EXPR_PROD, in[0].d[1], bb);
        }
        return PRT_OK;
    }
    case MK_CONCAT:
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
        out[0] = in[0];
        for (k = 1; k < nb_in; k++) {
            if (in[k].nb != in[0].nb) {
                prt_msg_set(err, "input %d has rank %d, input 0 has %d", (int)k, (int)in[k].nb, (int)in[0].nb);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            for (i = 0; i < in[0].nb; i++) {
                int64_t u = prt__onnx_known(eb, in[k].d[i]), v = prt__onnx_known(eb, in[0].d[i]);
                if (i != a && u >= 0 && v >= 0 && u != v) {
                    prt_msg_set(err, "input %d has extent %lld on axis %d, input 0 has %lld", (int)k, (long long)u,
                                (int)i, (long long)v);
                    return PRT_STATUS_SHAPE_MISMATCH;
                }
            }
            out->d[a] = eb->operation(eb, PRT_EXPR_SUM, out->d[a], in[k].d[a]);
        }
        return PRT_OK;
    case MK_SPLIT: {
        int64_t d, tot = 0;
        if ((st = prt__onnx_axis(n, "axis", s->axis, in[0].nb, 0, &a, err)) != PRT_OK) return st;
        d = prt__onnx_known(eb, in[0].d[a]);
        for (k = 0; k < n->nb_out; k++) {
            out[k] = in[0];
            if (s->nsplit > 0) {
                out[k].d[a] = eb->constant(eb, s->split[k]);
                tot += s->split[k];
            } else { /* ceil(d / n) each, the last takes the rest */
                const prt_expr *c = eb->operation(eb, PRT_EXPR_CEIL_DIV, in[0].d[a], eb->constant(eb, n->nb_out));
                out[k].d[a] = k + 1 < n->nb_out ? c
                                                : eb->operation(eb, PRT_EXPR_SUB, in[0].d[a],
                                                                eb->operation(eb, PRT_EXPR_PROD, c,
                                                                              eb->constant(eb, n->nb_out - 1)));
            }
        }
        if (s->nsplit > 0 && d >= 0 && tot != d) {
            prt_msg_set(err, "split sizes add up to %lld but axis %d has extent %lld", (long long)tot, (int)a,
                        (long long)d);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (s->nsplit <= 0 && d >= 0 && (d + n->nb_out - 1) / n->nb_out * (n->nb_out - 1) > d) {
            prt_msg_set(err, "extent %lld of axis %d cannot be split into %d parts", (long long)d, (int)a,
                        (int)n->nb_out);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        return PRT_OK;
    }
    }
    return PRT_STATUS_INTERNAL;
}

typedef struct tile_job {
    const char *x;
    char *y;
    size_t es;
    int32_t rank;
    const int64_t *od, *id, *is;
} tile_job;

static void tile_range(void *arg, int64_t begin, int64_t end)
{
    const tile_job *j = arg;
    int64_t o;
    for (o = begin; o < end; o++) {
        int64_t rem = o, off = 0;
        int32_t i;
        for (i = j->rank - 1; i >= 0; i--) {
            off += (rem % j->od[i]) % j->id[i] * j->is[i];
            rem /= j->od[i];
        }
        memcpy(j->y + (size_t)o * j->es, j->x + (size_t)off * j->es, j->es);
    }
}

/* Concat / Split: copy blocks of `len` elements along the outer index. */
static void block_copy(char *dst, int64_t dst_stride, const char *src, int64_t src_stride, int64_t outer, int64_t len,
                       size_t es)
{
    int64_t o;
    for (o = 0; o < outer; o++)
        memcpy(dst + (size_t)(o * dst_stride) * es, src + (size_t)(o * src_stride) * es, (size_t)len * es);
}

static prt_status m_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                        const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                        prt_msg *err)
{
    const mrow *r = n->def->row;
    const mstate *s = PRT__ONNX_STATE(n, mstate);
    const prt_dims *d = &in[0].dims;
    size_t es = prt_dtype_size(in[0].dtype);
    int64_t st[PRT_MAX_DIMS], dims[PRT_MAX_DIMS], ss[PRT_MAX_DIMS], base = 0, outer = 1, inner = 1, pos = 0;
    int32_t i, k, a, ax[PRT_MAX_DIMS];
    prt_status stt;
    (void)ws;
    prt__onnx_strides(d, st);
    switch (r->kind) {
    case MK_TRANSPOSE:
        if ((stt = m_perm(n, d->nb, ax, err)) != PRT_OK) return stt;
        for (i = 0; i < d->nb; i++) {
            dims[i] = d->d[ax[i]];
            ss[i] = st[ax[i]];
        }
        prt__onnx_strided_copy(ex, y[0], x[0], es, d->nb, dims, ss, 0);
        return PRT_OK;
    case MK_SLICE:
        if ((stt = m_axes_check(n, d->nb, ax, err)) != PRT_OK) return stt;
        for (i = 0; i < d->nb; i++) {
            dims[i] = d->d[i];
            ss[i] = st[i];
        }
        for (i = 0; i < s->nstarts; i++) {
            int64_t f, c;
            slice_axis(d->d[ax[i]], s->starts[i], s->ends[i], s->steps[i], &f, &c);
            dims[ax[i]] = c;
            ss[ax[i]] = st[ax[i]] * s->steps[i];
            if (c > 0) base += f * st[ax[i]];
        }
        prt__onnx_strided_copy(ex, y[0], x[0], es, d->nb, dims, ss, base);
        return PRT_OK;
    case MK_D2S: case MK_S2D: {
        int64_t N = d->d[0], C = d->d[1], H = d->d[2], W = d->d[3], b = s->block;
        if (r->kind == MK_D2S) {
            int64_t c2 = C / (b * b);
            int64_t dd[6] = {N, c2, H, b, W, b};
            int64_t s6[6] = {C * H * W, s->crd ? b * b * H * W : H * W, W, s->crd ? b * H * W : b * c2 * H * W, 1,
                             s->crd ? H * W : c2 * H * W};
            prt__onnx_strided_copy(ex, y[0], x[0], es, 6, dd, s6, 0);
        } else {
            int64_t dd[6] = {N, b, b, C, H / b, W / b};
            int64_t s6[6] = {C * H * W, W, 1, H * W, b * W, b};
            prt__onnx_strided_copy(ex, y[0], x[0], es, 6, dd, s6, 0);
        }
        return PRT_OK;
    }
    case MK_TILE: {
        tile_job j = {x[0], y[0], es, d->nb, out[0].dims.d, d->d, st};
        int64_t v = prt_dims_volume(&out[0].dims);
        if (v <= 0) return PRT_OK;
        if (v <= 16384) tile_range(&j, 0, v);
        else ex->parallel_for(ex, v, 16384, tile_range, &j);
        return PRT_OK;
    }
    case MK_CONCAT: {
        int64_t olen;
        if ((stt = prt__onnx_axis(n, "axis", s->axis, d->nb, 0, &a, err)) != PRT_OK) return stt;
        for (i = 0; i < a; i++) outer *= d->d[i];
        for (i = a + 1; i < d->nb; i++) inner *= d->d[i];
        olen = out[0].dims.d[a] * inner;
        for (k = 0; k < nb_in; k++) {
            int64_t len = in[k].dims.d[a] * inner;
            if (prt_dims_volume(&in[k].dims) != outer * len) {
                prt_msg_set(err, "input %d does not match input 0 outside axis %d", (int)k, (int)a);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (len > 0) block_copy((char *)y[0] + (size_t)pos * es, olen, x[k], len, outer, len, es);
            pos += len;
        }
        return PRT_OK;
    }
    case MK_SPLIT: {
        int64_t ilen;
        if ((stt = prt__onnx_axis(n, "axis", s->axis, d->nb, 0, &a, err)) != PRT_OK) return stt;
        for (i = 0; i < a; i++) outer *= d->d[i];
        for (i = a + 1; i < d->nb; i++) inner *= d->d[i];
        ilen = d->d[a] * inner;
        for (k = 0; k < n->nb_out; k++) {
            int64_t len = out[k].dims.d[a] * inner;
            if (pos + len > ilen) {
                prt_msg_set(err, "the parts need %lld elements of axis %d, the input has %lld",
                            (long long)((pos + len) / (inner ? inner : 1)), (int)a, (long long)d->d[a]);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (len > 0 && y[k]) block_copy(y[k], len, (const char *)x[0] + (size_t)pos * es, ilen, outer, len, es);
            pos += len;
        }
        return PRT_OK;
    }
    }
    return PRT_STATUS_INTERNAL;
}

static const mrow r_transpose = {MK_TRANSPOSE, 0};
static const mrow r_slice1 = {MK_SLICE, 0}, r_slice10 = {MK_SLICE, 1};
static const mrow r_d2s = {MK_D2S, 0}, r_s2d = {MK_S2D, 0};
static const mrow r_tile = {MK_TILE, 1};
static const mrow r_concat = {MK_CONCAT, 0};
static const mrow r_split2 = {MK_SPLIT, 0}, r_split13 = {MK_SPLIT, 1};

static const prt_field_schema s_transpose[] = {PRT__ONNX_OPT("perm", PRT_FIELD_INT64, "output axis i is input axis perm[i]; absent: reversed")};
static const prt_field_schema s_slice1[] = {
    PRT__ONNX_OPT("starts", PRT_FIELD_INT64, "first index per axis (negative from the end, clamped)"),
    PRT__ONNX_OPT("ends", PRT_FIELD_INT64, "one past the last index per axis"),
    PRT__ONNX_OPT("axes", PRT_FIELD_INT64, "the axes; absent: 0, 1, ..."),
};
static const prt_field_schema s_slice10[] = {
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "starts (interim shape-value form)"),
    PRT__ONNX_OPT("input:2", PRT_FIELD_INT64, "ends"),
    PRT__ONNX_OPT("input:3", PRT_FIELD_INT64, "axes; absent: 0, 1, ..."),
    PRT__ONNX_OPT("input:4", PRT_FIELD_INT64, "steps; absent: 1"),
};
static const prt_field_schema s_d2s[] = {
    {.name = "blocksize", .type = PRT_FIELD_INT64, .required = 1, .min_count = 1, .max_count = 1,
     .doc = "the block edge"},
    PRT__ONNX_STR("mode", "DCR", "\"DCR\" (depth, column, row) or \"CRD\" (version 11)"),
};
static const prt_field_schema s_tile[] = {PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "repeats (interim shape-value form)")};
static const prt_field_schema s_concat[] = {PRT__ONNX_REQ_I64("axis", "the axis (negative from the end)")};
static const prt_field_schema s_split2[] = {
    PRT__ONNX_I64("axis", 0, "the axis (negative from the end)"),
    PRT__ONNX_OPT("split", PRT_FIELD_INT64, "sizes of the parts"),
    PRT__ONNX_I64("num_outputs", 0, "parts when no sizes are given (version 18; the importer passes the node's "
                  "output count for earlier versions)"),
};
static const prt_field_schema s_split13[] = {
    PRT__ONNX_I64("axis", 0, "the axis (negative from the end)"),
    PRT__ONNX_OPT("input:1", PRT_FIELD_INT64, "sizes of the parts (interim shape-value form)"),
    PRT__ONNX_I64("num_outputs", 0, "parts when no sizes are given"),
};

#define M(nm, ver, rw, sch, nf, minin, maxin) PRT__ONNX_ROW(nm, ver, rw, sch, nf, minin, maxin, mstate, m)

static const prt__onnx_def layout_defs[] = {
    M("Transpose", "1", r_transpose, s_transpose, 1, 1, 1),
    M("Slice", "1", r_slice1, s_slice1, 3, 1, 1),
    M("Slice", "10", r_slice10, s_slice10, 4, 1, 5),
    M("DepthToSpace", "1", r_d2s, s_d2s, 1, 1, 1),
    M("DepthToSpace", "11", r_d2s, s_d2s, 2, 1, 1),
    M("SpaceToDepth", "1", r_s2d, s_d2s, 1, 1, 1),
    M("Tile", "6", r_tile, s_tile, 1, 1, 2),
    M("Concat", "4", r_concat, s_concat, 1, 1, -1),
    M("Split", "2", r_split2, s_split2, 3, 1, 1),
    M("Split", "13", r_split13, s_split13, 3, 1, 2),
};
PRT__ONNX_REGISTER_TABLE(layout_defs)
