/*
 * onnx/compute/einsum.c - Einsum (12): any equation with explicit or implicit
 * output, repeated letters (diagonals) and an ellipsis (broadcast), as one
 * loop over every label's index: the output labels outside, the summed ones
 * inside. Numeric dtypes, accumulated in double (int64 for integers).
 */
#include <string.h>

#include "../common/onnx_op.h"
#include "../common/onnx_tensor.h"

#define EMAX_IN 8
#define ELABELS 64 /* a-z, A-Z and up to 12 ellipsis labels */

/* The equation with every term as label ids (ellipsis expanded per input at run time). */
typedef struct estate {
    int32_t nin;
    int8_t term[EMAX_IN][PRT_MAX_DIMS + 1]; /* label ids, -1 marks the ellipsis */
    int32_t tlen[EMAX_IN];
    int8_t out[PRT_MAX_DIMS + 1];
    int32_t olen;
    int32_t explicit_out, out_has_ellipsis;
} estate;

static int label_id(char c)
{
    if (c >= 'a' && c <= 'z') return c - 'a';
    if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
    return -1;
}

/* Parse one term (letters, at most one "...") into ids; returns its length or -1. */
static int parse_term(const char *s, size_t n, int8_t *ids, int *has_ell)
{
    size_t i = 0;
    int len = 0;
    *has_ell = 0;
    while (i < n) {
        if (s[i] == ' ') {
            i++;
            continue;
        }
        if (s[i] == '.') {
            if (i + 2 >= n || s[i + 1] != '.' || s[i + 2] != '.' || *has_ell) return -1;
            *has_ell = 1;
            if (len > PRT_MAX_DIMS) return -1;
            ids[len++] = -1;
            i += 3;
            continue;
        }
        if (label_id(s[i]) < 0 || len > PRT_MAX_DIMS) return -1;
        ids[len++] = (int8_t)label_id(s[i]);
        i++;
    }
    return len;
}

static prt_status es_init(prt__onnx_node *n, const prt_fields *fc, prt_msg *err)
{
    estate *s = PRT__ONNX_STATE(n, estate);
    const prt_field *f = prt_fields_find(fc, "equation");
    const char *eq = f ? f->data : "";
    size_t len = f ? (size_t)f->count : 0, i, start = 0, arrow = len;
    int ell, counts[ELABELS] = {0}, k;
    for (i = 0; i + 1 < len; i++)
        if (eq[i] == '-' && eq[i + 1] == '>') arrow = i;
    for (i = 0; i <= arrow; i++) {
        if (i < arrow && eq[i] != ',') continue;
        if (s->nin >= EMAX_IN) goto bad;
        if ((s->tlen[s->nin] = parse_term(eq + start, i - start, s->term[s->nin], &ell)) < 0) goto bad;
        for (k = 0; k < s->tlen[s->nin]; k++)
            if (s->term[s->nin][k] >= 0) counts[s->term[s->nin][k]]++;
        s->nin++;
        start = i + 1;
    }
    if (arrow < len) {
        s->explicit_out = 1;
        if ((s->olen = parse_term(eq + arrow + 2, len - arrow - 2, s->out, &s->out_has_ellipsis)) < 0) goto bad;
        for (k = 0; k < s->olen; k++)
            if (s->out[k] >= 0 && !counts[s->out[k]]) goto bad;
    } else { /* implicit: the ellipsis, then labels seen once, in alphabetical order */
        int any_ell = 0, t;
        for (t = 0; t < s->nin; t++)
            for (k = 0; k < s->tlen[t]; k++) any_ell |= s->term[t][k] < 0;
        if (any_ell) s->out[s->olen++] = -1;
        s->out_has_ellipsis = any_ell;
        for (k = 0; k < 52; k++)
            if (counts[k] == 1) {
                if (s->olen > PRT_MAX_DIMS) goto bad;
                s->out[s->olen++] = (int8_t)k;
            }
    }
    return PRT_OK;
bad:
    prt_msg_set(err, "%s v%s: equation \"%.*s\" is not a valid einsum equation (letters, commas, one \"...\" per term, "
                "\"->\", at most %d operands)", n->def->name, n->def->version, (int)(len > 80 ? 80 : len), eq, EMAX_IN);
    return PRT_STATUS_INVALID_FIELD;
}

static prt_status es_types(const prt__onnx_node *n, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           prt_msg *err)
{
    const estate *s = PRT__ONNX_STATE(n, estate);
    if (nb_in != s->nin) {
        prt_msg_set(err, "the equation has %d operands but %d inputs were given", (int)s->nin, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return prt__onnx_types_same(n, in, nb_in, out, err);
}

/* Each input's labels with the ellipsis expanded into ids 52.. aligned from the
 * right; ne = the widest ellipsis. Fails on a rank that does not fit. */
static prt_status es_expand(const estate *s, const int32_t *ranks, int8_t (*lab)[PRT_MAX_DIMS], int32_t *ne,
                            prt_msg *err)
{
    int32_t t, k, w;
    *ne = 0;
    for (t = 0; t < s->nin; t++) {
        int has = 0, e;
        for (k = 0; k < s->tlen[t]; k++) has |= s->term[t][k] < 0;
        e = ranks[t] - (s->tlen[t] - has);
        if ((!has && e != 0) || e < 0) {
            prt_msg_set(err, "operand %d has rank %d but its term names %d axes", (int)t, (int)ranks[t],
                        (int)(s->tlen[t] - has));
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        if (e > *ne) *ne = e;
        for (k = 0, w = 0; k < s->tlen[t]; k++) {
            if (s->term[t][k] >= 0) {
                lab[t][w++] = s->term[t][k];
                continue;
            }
            for (int32_t q = 0; q < e; q++) lab[t][w++] = (int8_t)(52 + (e - 1 - q)); /* 52 = last ellipsis dim */
        }
    }
    return PRT_OK;
}

/* Output labels with the ellipsis expanded. */
static int32_t es_out(const estate *s, int32_t ne, int8_t *ol)
{
    int32_t k, w = 0, q;
    for (k = 0; k < s->olen; k++) {
        if (s->out[k] >= 0) {
            ol[w++] = s->out[k];
            continue;
        }
        for (q = 0; q < ne; q++) ol[w++] = (int8_t)(52 + (ne - 1 - q));
    }
    return w; /* ellipsis dims left out of an explicit output are summed */
}

static prt_status es_shapes(const prt__onnx_node *n, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            prt_expr_builder *eb, prt_msg *err)
{
    const estate *s = PRT__ONNX_STATE(n, estate);
    int8_t lab[EMAX_IN][PRT_MAX_DIMS], ol[2 * PRT_MAX_DIMS];
    int32_t ranks[EMAX_IN] = {0}, ne, t, k, no;
    const prt_expr *size[ELABELS] = {0};
    prt_status st;
    if (nb_in != s->nin) {
        prt_msg_set(err, "the equation has %d operands but %d inputs were given", (int)s->nin, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (t = 0; t < nb_in; t++) ranks[t] = in[t].nb;
    if ((st = es_expand(s, ranks, lab, &ne, err)) != PRT_OK) return st;
    for (t = 0; t < nb_in; t++)
        for (k = 0; k < in[t].nb; k++) {
            const prt_expr *e = in[t].d[k];
            int64_t v = prt__onnx_known(eb, e), have = size[lab[t][k]] ? prt__onnx_known(eb, size[lab[t][k]]) : -1;
            if (!size[lab[t][k]] || have == 1) size[lab[t][k]] = e;
            else if (v >= 0 && have >= 0 && v != have && v != 1) {
                prt_msg_set(err, "label extent mismatch: %lld vs %lld (operand %d axis %d)", (long long)v, (long long)have,
                            (int)t, (int)k);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        }
    no = es_out(s, ne, ol);
    if (no > PRT_MAX_DIMS) {
        prt_msg_set(err, "the output would have rank %d (at most %d)", (int)no, PRT_MAX_DIMS);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    out->nb = no;
    for (k = 0; k < no; k++) out->d[k] = size[ol[k]] ? size[ol[k]] : eb->constant(eb, 1);
    return PRT_OK;
}

static prt_status es_run(const prt__onnx_node *n, const prt_tensor_desc *in, int32_t nb_in,
                         const prt_tensor_desc *out, const void *const *x, void *const *y, void *ws, prt_exec *ex,
                         prt_msg *err)
{
    const estate *s = PRT__ONNX_STATE(n, estate);
    int8_t lab[EMAX_IN][PRT_MAX_DIMS], ol[2 * PRT_MAX_DIMS], sl[ELABELS];
    int32_t ranks[EMAX_IN] = {0}, ne, t, k, no, ns = 0;
    int64_t size[ELABELS], idx[ELABELS] = {0}, str[EMAX_IN][PRT_MAX_DIMS], o, vout, sum_vol = 1;
    int is_out[ELABELS] = {0}, seen[ELABELS] = {0};
    int ints = !prt__onnx_is_float(out[0].dtype);
    prt_status st;
    (void)ws; (void)ex;
    for (t = 0; t < nb_in; t++) ranks[t] = in[t].dims.nb;
    if ((st = es_expand(s, ranks, lab, &ne, err)) != PRT_OK) return st;
    for (k = 0; k < ELABELS; k++) size[k] = 1;
    for (t = 0; t < nb_in; t++) {
        prt__onnx_strides(&in[t].dims, str[t]);
        for (k = 0; k < in[t].dims.nb; k++) {
            int64_t d = in[t].dims.d[k];
            if (seen[lab[t][k]] && size[lab[t][k]] != d && d != 1 && size[lab[t][k]] != 1) {
                prt_msg_set(err, "label extent mismatch: %lld vs %lld (operand %d axis %d)", (long long)d,
                            (long long)size[lab[t][k]], (int)t, (int)k);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (!seen[lab[t][k]] || size[lab[t][k]] == 1) size[lab[t][k]] = d;
            seen[lab[t][k]] = 1;
        }
    }
    no = es_out(s, ne, ol);
    for (k = 0; k < no; k++) is_out[ol[k]] = 1;
    for (k = 0; k < ELABELS; k++)
        if (seen[k] && !is_out[k]) {
            sl[ns++] = (int8_t)k;
            sum_vol *= size[k];
        }
    vout = prt_dims_volume(&out[0].dims);
    for (o = 0; o < vout; o++) {
        int64_t rem = o, j;
        double acc = 0;
        int64_t iacc = 0;
        for (k = no - 1; k >= 0; k--) {
            idx[ol[k]] = rem % size[ol[k]];
            rem /= size[ol[k]];
        }
        for (j = 0; j < sum_vol; j++) {
            double prod = 1;
            int64_t iprod = 1;
            rem = j;
            for (k = ns - 1; k >= 0; k--) {
                idx[sl[k]] = rem % size[sl[k]];
                rem /= size[sl[k]];
            }
            for (t = 0; t < nb_in; t++) {
                int64_t off = 0;
                for (k = 0; k < in[t].dims.nb; k++)
                    off += (in[t].dims.d[k] == 1 ? 0 : idx[lab[t][k]]) * str[t][k];
                if (ints) iprod = (int64_t)((uint64_t)iprod * (uint64_t)prt__onnx_get_i64(x[t], in[t].dtype, off));
                else prod *= prt__onnx_get_f64(x[t], in[t].dtype, off);
            }
            if (ints) iacc = (int64_t)((uint64_t)iacc + (uint64_t)iprod);
            else acc += prod;
        }
        if (ints) prt__onnx_scatter_i64(y[0], out[0].dtype, o, &iacc, 1);
        else prt__onnx_scatter_f64(y[0], out[0].dtype, o, &acc, 1);
    }
    return PRT_OK;
}

static const prt_field_schema s_einsum[] = {
    {.name = "equation", .type = PRT_FIELD_CHAR, .required = 1, .min_count = 1, .max_count = 4096,
     .doc = "e.g. \"bij,bjk->bik\"; implicit output when there is no \"->\""},
};
static const int einsum_row_ = 0;

static const prt__onnx_def einsum_defs[] = {
    PRT__ONNX_DEF("Einsum", "12", einsum_row_, s_einsum, 1, 1, EMAX_IN, 1, PRT__ONNX_NUMERIC, estate, es),
};
PRT__ONNX_REGISTER_TABLE(einsum_defs)
