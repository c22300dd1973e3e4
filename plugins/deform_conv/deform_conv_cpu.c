/*
 * deform_conv/deform_conv_cpu.c - CPU implementations of ModulatedDeformConv2d:
 * the float64 plain-loop reference and the fast path (bilinear im2col of a
 * column slice into the workspace, then one OpenBLAS sgemm per group).
 *
 * Fast path, per work item (image n, group g, column tile t):
 *   for each deformable group d that meets group g's channels and each tap k:
 *     a table of four corner indices and four mask-scaled bilinear weights
 *     for the tile's columns (computed once, reused by every channel of d);
 *   col[c' * K + k][p] = sum of the four weighted corners of channel c';
 *   y[n, g*Coutg .. , tile] = W_g [Coutg x Cg*K] * col [Cg*K x tile].
 * parallel_for runs PRT_DCN_SLOTS lanes; lane l owns workspace slot l and
 * runs items l, l + SLOTS, ... in order, so the result of an item never
 * depends on which thread ran it or how the lanes were split.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "plugrt/tensor.h"
#include "deform_conv.h"

/* OpenBLAS's own thread control (not part of the standard cblas.h). */
void openblas_set_num_threads(int num_threads);

#define PRT_DCN_SLOTS 8
#define PRT_DCN_CPU_COL_BYTES ((size_t)1 << 22) /* column buffer per slot */
#define PRT_DCN_ALIGN 64

/* ------------------------------------------------------------------------ */
/* float64 reference                                                        */
/* ------------------------------------------------------------------------ */

static double ref_sample(const double *xc, int64_t h, int64_t w, double py, double px)
{
    double hl, wl, lh, lw, v = 0.0;
    int64_t h0, w0;
    if (py <= -1.0 || py >= (double)h || px <= -1.0 || px >= (double)w) return 0.0;
    hl = floor(py);
    wl = floor(px);
    h0 = (int64_t)hl;
    w0 = (int64_t)wl;
    lh = py - hl;
    lw = px - wl;
    if (h0 >= 0 && w0 >= 0) v += (1 - lh) * (1 - lw) * xc[h0 * w + w0];
    if (h0 >= 0 && w0 + 1 < w) v += (1 - lh) * lw * xc[h0 * w + w0 + 1];
    if (h0 + 1 < h && w0 >= 0) v += lh * (1 - lw) * xc[(h0 + 1) * w + w0];
    if (h0 + 1 < h && w0 + 1 < w) v += lh * lw * xc[(h0 + 1) * w + w0 + 1];
    return v;
}

void prt__deform_conv_ref_f64(const prt__dcn_params *p, const prt__dcn_shape *s, const double *x,
                              const double *offset, const double *mask, const double *weight,
                              const double *bias, double *y)
{
    const int64_t K = s->kh * s->kw, cg = s->cin / p->group, coutg = s->cout / p->group;
    const int64_t cd = s->cin / p->deformable_group, hw = s->hout * s->wout;
    int64_t n, oc, oy, ox, c, i, j;
    for (n = 0; n < s->n; n++)
        for (oc = 0; oc < s->cout; oc++) {
            const int64_t g = oc / coutg;
            for (oy = 0; oy < s->hout; oy++)
                for (ox = 0; ox < s->wout; ox++) {
                    double acc = 0.0;
                    for (c = 0; c < cg; c++) {
                        const int64_t ch = g * cg + c, d = ch / cd;
                        const double *xc = x + (n * s->cin + ch) * s->h * s->w;
                        for (i = 0; i < s->kh; i++)
                            for (j = 0; j < s->kw; j++) {
                                const int64_t k = i * s->kw + j, pos = oy * s->wout + ox;
                                const double dy = offset[(n * 2 * p->deformable_group * K + d * 2 * K + 2 * k) * hw + pos];
                                const double dx = offset[(n * 2 * p->deformable_group * K + d * 2 * K + 2 * k + 1) * hw + pos];
                                const double m = mask[(n * p->deformable_group * K + d * K + k) * hw + pos];
                                const double py = (double)(oy * p->stride[0] - p->padding[0] + i * p->dilation[0]) + dy;
                                const double px = (double)(ox * p->stride[1] - p->padding[1] + j * p->dilation[1]) + dx;
                                acc += weight[((oc * cg + c) * s->kh + i) * s->kw + j] * m *
                                       ref_sample(xc, s->h, s->w, py, px);
                            }
                    }
                    if (bias) acc += bias[oc];
                    y[((n * s->cout + oc) * s->hout + oy) * s->wout + ox] = acc;
                }
        }
}

/* ------------------------------------------------------------------------ */
/* Fast path                                                                */
/* ------------------------------------------------------------------------ */

static size_t align_up(size_t v) { return (v + PRT_DCN_ALIGN - 1) & ~(size_t)(PRT_DCN_ALIGN - 1); }

typedef struct dcn_plan {
    int64_t K, cg, coutg, cd, hw, ckk; /* ckk = cg * K */
    int64_t tile, ntiles, items;
    size_t w_bytes, col_bytes, tab_bytes, out_bytes, slot_bytes;
} dcn_plan;

static void plan_make(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16, dcn_plan *pl)
{
    int64_t t;
    pl->K = s->kh * s->kw;
    pl->cg = s->cin / p->group;
    pl->coutg = s->cout / p->group;
    pl->cd = s->cin / p->deformable_group;
    pl->hw = s->hout * s->wout;
    pl->ckk = pl->cg * pl->K;
    t = (int64_t)(PRT_DCN_CPU_COL_BYTES / ((size_t)pl->ckk * sizeof(float)));
    t = t / 16 * 16;
    if (t < 16) t = 16;
    if (t > pl->hw) t = pl->hw;
    if (t < 1) t = 1;
    pl->tile = t;
    pl->ntiles = (pl->hw + t - 1) / t;
    pl->items = s->n * p->group * pl->ntiles;
    pl->w_bytes = is_f16 ? align_up((size_t)s->cout * (size_t)pl->ckk * sizeof(float)) : 0;
    pl->col_bytes = align_up((size_t)pl->ckk * (size_t)t * sizeof(float));
    pl->tab_bytes = align_up((size_t)t * (4 * sizeof(int64_t) + 4 * sizeof(float)));
    pl->out_bytes = is_f16 ? align_up((size_t)pl->coutg * (size_t)t * sizeof(float)) : 0;
    pl->slot_bytes = pl->col_bytes + pl->tab_bytes + pl->out_bytes;
}

size_t prt__deform_conv_cpu_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    dcn_plan pl;
    if (s->n <= 0 || s->hout <= 0 || s->wout <= 0) return 0;
    plan_make(p, s, is_f16, &pl);
    return pl.w_bytes + PRT_DCN_SLOTS * pl.slot_bytes + PRT_DCN_ALIGN;
}

typedef struct dcn_job {
    const prt__dcn_params *p;
    const prt__dcn_shape *s;
    dcn_plan pl;
    int is_f16;
    const void *x, *offset, *mask, *bias;
    const float *w32;
    void *y;
    uint8_t *slots;
} dcn_job;

static inline float ld(const void *base, int64_t i, int is_f16)
{
    return is_f16 ? prt_f16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}

/* Corner table of tap k of deformable group d for columns [p0, p0+tc). */
static void build_table(const dcn_job *jb, int64_t n, int64_t d, int64_t k, int64_t p0, int64_t tc,
                        int64_t *idx, float *wt)
{
    const prt__dcn_params *p = jb->p;
    const prt__dcn_shape *s = jb->s;
    const int64_t K = jb->pl.K, hw = jb->pl.hw, i = k / s->kw, j = k % s->kw;
    const int64_t och = (n * 2 * p->deformable_group * K + d * 2 * K + 2 * k) * hw;
    const int64_t mch = (n * p->deformable_group * K + d * K + k) * hw;
    int64_t q;
    for (q = 0; q < tc; q++) {
        const int64_t pos = p0 + q, oy = pos / s->wout, ox = pos % s->wout;
        const float dy = ld(jb->offset, och + pos, jb->is_f16);
        const float dx = ld(jb->offset, och + hw + pos, jb->is_f16);
        const float m = ld(jb->mask, mch + pos, jb->is_f16);
        const float py = (float)(oy * p->stride[0] - p->padding[0] + i * p->dilation[0]) + dy;
        const float px = (float)(ox * p->stride[1] - p->padding[1] + j * p->dilation[1]) + dx;
        int64_t *ix = idx + 4 * q;
        float *w = wt + 4 * q;
        ix[0] = ix[1] = ix[2] = ix[3] = 0;
        w[0] = w[1] = w[2] = w[3] = 0.0f;
        if (!(py <= -1.0f || py >= (float)s->h || px <= -1.0f || px >= (float)s->w)) {
            const float hf = floorf(py), wf = floorf(px);
            const int64_t h0 = (int64_t)hf, w0 = (int64_t)wf;
            const float lh = py - hf, lw = px - wf;
            if (h0 >= 0 && w0 >= 0) { ix[0] = h0 * s->w + w0; w[0] = m * (1 - lh) * (1 - lw); }
            if (h0 >= 0 && w0 + 1 < s->w) { ix[1] = h0 * s->w + w0 + 1; w[1] = m * (1 - lh) * lw; }
            if (h0 + 1 < s->h && w0 >= 0) { ix[2] = (h0 + 1) * s->w + w0; w[2] = m * lh * (1 - lw); }
            if (h0 + 1 < s->h && w0 + 1 < s->w) { ix[3] = (h0 + 1) * s->w + w0 + 1; w[3] = m * lh * lw; }
        }
    }
}

static void run_item(const dcn_job *jb, int64_t item, uint8_t *slot)
{
    const prt__dcn_params *p = jb->p;
    const prt__dcn_shape *s = jb->s;
    const dcn_plan *pl = &jb->pl;
    const int64_t t = item % pl->ntiles, ng = item / pl->ntiles;
    const int64_t g = ng % p->group, n = ng / p->group;
    const int64_t p0 = t * pl->tile;
    const int64_t tc = (p0 + pl->tile <= pl->hw) ? pl->tile : pl->hw - p0;
    const int64_t hwin = s->h * s->w;
    float *col = (float *)slot;
    int64_t *idx = (int64_t *)(slot + pl->col_bytes);
    float *wt = (float *)(idx + 4 * pl->tile);
    float *outb = (float *)(slot + pl->col_bytes + pl->tab_bytes);
    int64_t c0 = g * pl->cg, c1 = c0 + pl->cg, c, k, q, oc;

    /* Gather: one table per (deformable group, tap), reused across channels. */
    while (c0 < c1) {
        const int64_t d = c0 / pl->cd;
        const int64_t cend = (d + 1) * pl->cd < c1 ? (d + 1) * pl->cd : c1;
        for (k = 0; k < pl->K; k++) {
            build_table(jb, n, d, k, p0, tc, idx, wt);
            for (c = c0; c < cend; c++) {
                float *row = col + ((c - g * pl->cg) * pl->K + k) * tc;
                const int64_t xo = (n * s->cin + c) * hwin;
                if (!jb->is_f16) {
                    const float *xc = (const float *)jb->x + xo;
                    for (q = 0; q < tc; q++) {
                        const int64_t *ix = idx + 4 * q;
                        const float *w = wt + 4 * q;
                        row[q] = w[0] * xc[ix[0]] + w[1] * xc[ix[1]] + w[2] * xc[ix[2]] + w[3] * xc[ix[3]];
                    }
                } else {
                    const uint16_t *xc = (const uint16_t *)jb->x + xo;
                    for (q = 0; q < tc; q++) {
                        const int64_t *ix = idx + 4 * q;
                        const float *w = wt + 4 * q;
                        row[q] = w[0] * prt_f16_to_f32(xc[ix[0]]) + w[1] * prt_f16_to_f32(xc[ix[1]]) +
                                 w[2] * prt_f16_to_f32(xc[ix[2]]) + w[3] * prt_f16_to_f32(xc[ix[3]]);
                    }
                }
            }
        }
        c0 = cend;
    }

    /* GEMM: [Coutg x Cg*K] * [Cg*K x tc]. */
    {
        const float *wg = jb->w32 + g * pl->coutg * pl->ckk;
        const int64_t ybase = (n * s->cout + g * pl->coutg) * pl->hw + p0;
        if (!jb->is_f16) {
            float *yb = (float *)jb->y + ybase;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)pl->coutg, (int)tc, (int)pl->ckk,
                        1.0f, wg, (int)pl->ckk, col, (int)tc, 0.0f, yb, (int)pl->hw);
            if (s->has_bias)
                for (oc = 0; oc < pl->coutg; oc++) {
                    const float b = ((const float *)jb->bias)[g * pl->coutg + oc];
                    float *r = yb + oc * pl->hw;
                    for (q = 0; q < tc; q++) r[q] += b;
                }
        } else {
            uint16_t *yb = (uint16_t *)jb->y + ybase;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)pl->coutg, (int)tc, (int)pl->ckk,
                        1.0f, wg, (int)pl->ckk, col, (int)tc, 0.0f, outb, (int)tc);
            for (oc = 0; oc < pl->coutg; oc++) {
                const float b = s->has_bias
                                    ? prt_f16_to_f32(((const uint16_t *)jb->bias)[g * pl->coutg + oc])
                                    : 0.0f;
                for (q = 0; q < tc; q++) yb[oc * pl->hw + q] = prt_f32_to_f16(outb[oc * tc + q] + b);
            }
        }
    }
}

/* Lane l runs items l, l + SLOTS, l + 2*SLOTS, ... in its own slot. */
static void run_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    int64_t l, it;
    for (l = begin; l < end; l++)
        for (it = l; it < jb->pl.items; it += PRT_DCN_SLOTS)
            run_item(jb, it, jb->slots + (size_t)l * jb->pl.slot_bytes);
}

typedef struct conv_job {
    const uint16_t *src;
    float *dst;
} conv_job;

static void conv_range(void *arg, int64_t begin, int64_t end)
{
    const conv_job *cj = (const conv_job *)arg;
    int64_t i;
    for (i = begin; i < end; i++) cj->dst[i] = prt_f16_to_f32(cj->src[i]);
}

int prt__deform_conv_cpu(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16,
                         const void *x, const void *offset, const void *mask, const void *weight,
                         const void *bias, void *y, void *workspace, prt__dcn_parallel_fn par,
                         void *par_ctx, char *err, size_t cap)
{
    dcn_job jb;
    uint8_t *ws;
    int64_t lanes;
    if (s->n == 0 || s->cout == 0 || s->hout * s->wout == 0) return 0;
    if (!workspace) {
        if (err && cap) snprintf(err, cap, "ModulatedDeformConv2d: CPU path needs a workspace, got NULL");
        return -1;
    }
    memset(&jb, 0, sizeof(jb));
    plan_make(p, s, is_f16, &jb.pl);
    jb.p = p;
    jb.s = s;
    jb.is_f16 = is_f16;
    jb.x = x;
    jb.offset = offset;
    jb.mask = mask;
    jb.bias = s->has_bias ? bias : NULL;
    jb.y = y;
    ws = (uint8_t *)(((uintptr_t)workspace + PRT_DCN_ALIGN - 1) & ~(uintptr_t)(PRT_DCN_ALIGN - 1));
    /* Each sgemm runs on the calling worker alone: threads come from the host. */
    openblas_set_num_threads(1);
    if (is_f16) {
        conv_job cj;
        cj.src = (const uint16_t *)weight;
        cj.dst = (float *)ws;
        if (par) par(par_ctx, s->cout * jb.pl.ckk, 4096, conv_range, &cj);
        else conv_range(&cj, 0, s->cout * jb.pl.ckk);
        jb.w32 = (const float *)ws;
    } else {
        jb.w32 = (const float *)weight;
    }
    jb.slots = ws + jb.pl.w_bytes;
    lanes = jb.pl.items < PRT_DCN_SLOTS ? jb.pl.items : PRT_DCN_SLOTS;
    if (par) par(par_ctx, lanes, 1, run_range, &jb);
    else run_range(&jb, 0, lanes);
    return 0;
}
