/*
 * deform_conv/deform_conv_cpu.c - CPU implementations of ModulatedDeformConv2d:
 * the float64 plain-loop reference and the fast path (bilinear im2col of a
 * column slice into the workspace, then one OpenBLAS sgemm per group).
 *
 * Fast path, per image n:
 *   xt = x[n] transposed to channels-last, [H*W + 1][Cin] in fp32, the last
 *        row zero (where corners outside the image point);
 *   wt = weight reordered to [Cout][K][Cin/group] in fp32 (once per call);
 *   per column tile t (a work item):
 *     for each deformable group d and each tap k, a table of four corner
 *     rows and four mask-scaled bilinear weights for the tile's columns;
 *     colt[p][g][k][c'] = sum of the four weighted corner rows, a contiguous
 *     run of channels at a time (vectorized);
 *     for each group g: y[n, g*Coutg .., tile] = wt_g [Coutg x K*Cg] * colt_g^T.
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
    /* written so that a NaN coordinate also samples 0 */
    if (!(py > -1.0 && py < (double)h && px > -1.0 && px < (double)w)) return 0.0;
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

void prt__deform_conv_cpu_ref_f64(const prt__dcn_params *p, const prt__dcn_shape *s, const double *x,
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
    int64_t K, cg, coutg, cd, hw, hwin, ckk, cink; /* ckk = Cg*K, cink = Cin*K */
    int64_t tile, ntiles;
    size_t xt_bytes, w_bytes, col_bytes, tab_bytes, out_bytes, slot_bytes;
} dcn_plan;

static void plan_make(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16, dcn_plan *pl)
{
    int64_t t, nt;
    pl->K = s->kh * s->kw;
    pl->cg = s->cin / p->group;
    pl->coutg = s->cout / p->group;
    pl->cd = s->cin / p->deformable_group;
    pl->hw = s->hout * s->wout;
    pl->hwin = s->h * s->w;
    pl->ckk = pl->cg * pl->K;
    pl->cink = s->cin * pl->K;
    /* Widest tile whose column buffer fits the slot budget, then the tile
     * count rounded up to a multiple of the lanes so that they get equal work. */
    t = (int64_t)(PRT_DCN_CPU_COL_BYTES / ((size_t)pl->cink * sizeof(float)));
    t = t / 16 * 16;
    if (t < 16) t = 16;
    if (t > pl->hw) t = pl->hw;
    if (t < 1) t = 1;
    nt = (pl->hw + t - 1) / t;
    nt = (nt + PRT_DCN_SLOTS - 1) / PRT_DCN_SLOTS * PRT_DCN_SLOTS;
    if (nt > pl->hw) nt = pl->hw;
    t = (pl->hw + nt - 1) / nt;
    if (t < pl->hw) t = (t + 15) / 16 * 16;
    if (t > pl->hw) t = pl->hw;
    pl->tile = t;
    pl->ntiles = (pl->hw + t - 1) / t;
    pl->xt_bytes = align_up((size_t)(pl->hwin + 1) * (size_t)s->cin * sizeof(float));
    pl->w_bytes = align_up((size_t)s->cout * (size_t)pl->ckk * sizeof(float));
    pl->col_bytes = align_up((size_t)pl->cink * (size_t)t * sizeof(float));
    pl->tab_bytes = align_up((size_t)t * (4 * sizeof(int64_t) + 4 * sizeof(float)));
    pl->out_bytes = is_f16 ? align_up((size_t)pl->coutg * (size_t)t * sizeof(float)) : 0;
    pl->slot_bytes = pl->col_bytes + pl->tab_bytes + pl->out_bytes;
    (void)is_f16;
}

size_t prt__deform_conv_cpu_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    dcn_plan pl;
    if (s->n <= 0 || s->hout <= 0 || s->wout <= 0) return 0;
    plan_make(p, s, is_f16, &pl);
    return pl.xt_bytes + pl.w_bytes + PRT_DCN_SLOTS * pl.slot_bytes + PRT_DCN_ALIGN;
}

typedef void (*blend4_fn)(float *restrict, const float *restrict, const float *restrict, const float *restrict,
                          const float *restrict, float, float, float, float, int64_t);

typedef struct dcn_job {
    const prt__dcn_params *p;
    const prt__dcn_shape *s;
    dcn_plan pl;
    int is_f16;
    const void *x, *offset, *mask, *weight, *bias;
    float *xt, *w32;
    void *y;
    uint8_t *slots;
    int64_t n; /* image being processed */
    blend4_fn blend;
} dcn_job;

static inline float ld(const void *base, int64_t i, int is_f16)
{
    return is_f16 ? prt_f16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}

/* Corner table of tap k of deformable group d for columns [p0, p0+tc):
 * rows of xt (the zero row hwin for corners outside the image) and weights. */
static void build_table(const dcn_job *jb, int64_t n, int64_t d, int64_t k, int64_t p0, int64_t tc,
                        int64_t *idx, float *wt)
{
    const prt__dcn_params *p = jb->p;
    const prt__dcn_shape *s = jb->s;
    const int64_t K = jb->pl.K, hw = jb->pl.hw, i = k / s->kw, j = k % s->kw, zr = jb->pl.hwin;
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
        ix[0] = ix[1] = ix[2] = ix[3] = zr;
        w[0] = w[1] = w[2] = w[3] = 0.0f;
        if (py > -1.0f && py < (float)s->h && px > -1.0f && px < (float)s->w) { /* false for NaN */
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

/* dst[c] = w0*a0[c] + w1*a1[c] + w2*a2[c] + w3*a3[c], c < len. The AVX-512
 * version (chosen once per process when the CPU has it) fuses the
 * multiply-adds; the portable one rounds each product. */
static void blend4_scalar(float *restrict dst, const float *restrict a0, const float *restrict a1,
                          const float *restrict a2, const float *restrict a3, float w0, float w1, float w2,
                          float w3, int64_t len)
{
    int64_t c;
    for (c = 0; c < len; c++) dst[c] = w0 * a0[c] + w1 * a1[c] + w2 * a2[c] + w3 * a3[c];
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_AVX512)
#include <immintrin.h>
__attribute__((target("avx512f"))) static void blend4_avx512(float *restrict dst, const float *restrict a0,
                                                             const float *restrict a1, const float *restrict a2,
                                                             const float *restrict a3, float w0, float w1,
                                                             float w2, float w3, int64_t len)
{
    const __m512 v0 = _mm512_set1_ps(w0), v1 = _mm512_set1_ps(w1);
    const __m512 v2 = _mm512_set1_ps(w2), v3 = _mm512_set1_ps(w3);
    int64_t c = 0;
    for (; c + 16 <= len; c += 16) {
        __m512 r = _mm512_mul_ps(v0, _mm512_loadu_ps(a0 + c));
        r = _mm512_fmadd_ps(v1, _mm512_loadu_ps(a1 + c), r);
        r = _mm512_fmadd_ps(v2, _mm512_loadu_ps(a2 + c), r);
        r = _mm512_fmadd_ps(v3, _mm512_loadu_ps(a3 + c), r);
        _mm512_storeu_ps(dst + c, r);
    }
    if (c < len) {
        const __mmask16 m = (__mmask16)((1u << (unsigned)(len - c)) - 1u);
        __m512 r = _mm512_mul_ps(v0, _mm512_maskz_loadu_ps(m, a0 + c));
        r = _mm512_fmadd_ps(v1, _mm512_maskz_loadu_ps(m, a1 + c), r);
        r = _mm512_fmadd_ps(v2, _mm512_maskz_loadu_ps(m, a2 + c), r);
        r = _mm512_fmadd_ps(v3, _mm512_maskz_loadu_ps(m, a3 + c), r);
        _mm512_mask_storeu_ps(dst + c, m, r);
    }
}

static blend4_fn blend4_pick(void)
{
    return __builtin_cpu_supports("avx512f") ? blend4_avx512 : blend4_scalar;
}
#else
static blend4_fn blend4_pick(void) { return blend4_scalar; }
#endif

/* Item (image jb->n, column tile t): gather all Cin*K columns, then one GEMM per group. */
static void run_item(const dcn_job *jb, int64_t t, uint8_t *slot)
{
    const prt__dcn_params *p = jb->p;
    const prt__dcn_shape *s = jb->s;
    const dcn_plan *pl = &jb->pl;
    const int64_t n = jb->n, p0 = t * pl->tile;
    const int64_t tc = (p0 + pl->tile <= pl->hw) ? pl->tile : pl->hw - p0;
    const int64_t cin = s->cin;
    float *colt = (float *)slot;
    int64_t *idx = (int64_t *)(slot + pl->col_bytes);
    float *wt = (float *)(idx + 4 * pl->tile);
    float *outb = (float *)(slot + pl->col_bytes + pl->tab_bytes);
    int64_t d, k, q, oc, g;

    for (d = 0; d < p->deformable_group; d++)
        for (k = 0; k < pl->K; k++) {
            int64_t ca = d * pl->cd;
            const int64_t cend = ca + pl->cd;
            build_table(jb, n, d, k, p0, tc, idx, wt);
            while (ca < cend) { /* runs of channels inside one group */
                const int64_t gg = ca / pl->cg;
                const int64_t cb = (gg + 1) * pl->cg < cend ? (gg + 1) * pl->cg : cend;
                const int64_t off = (gg * pl->K + k) * pl->cg + (ca - gg * pl->cg);
                for (q = 0; q < tc; q++) {
                    const int64_t *ix = idx + 4 * q;
                    const float *w = wt + 4 * q;
                    jb->blend(colt + q * pl->cink + off, jb->xt + ix[0] * cin + ca, jb->xt + ix[1] * cin + ca,
                           jb->xt + ix[2] * cin + ca, jb->xt + ix[3] * cin + ca, w[0], w[1], w[2], w[3], cb - ca);
                }
                ca = cb;
            }
        }

    for (g = 0; g < p->group; g++) {
        const float *wg = jb->w32 + g * pl->coutg * pl->ckk;
        const float *colg = colt + g * pl->ckk;
        const int64_t ybase = (n * s->cout + g * pl->coutg) * pl->hw + p0;
        if (!jb->is_f16) {
            float *yb = (float *)jb->y + ybase;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)pl->coutg, (int)tc, (int)pl->ckk, 1.0f, wg,
                        (int)pl->ckk, colg, (int)pl->cink, 0.0f, yb, (int)pl->hw);
            if (s->has_bias)
                for (oc = 0; oc < pl->coutg; oc++) {
                    const float b = ((const float *)jb->bias)[g * pl->coutg + oc];
                    float *r = yb + oc * pl->hw;
                    for (q = 0; q < tc; q++) r[q] += b;
                }
        } else {
            uint16_t *yb = (uint16_t *)jb->y + ybase;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)pl->coutg, (int)tc, (int)pl->ckk, 1.0f, wg,
                        (int)pl->ckk, colg, (int)pl->cink, 0.0f, outb, (int)tc);
            for (oc = 0; oc < pl->coutg; oc++) {
                const float b = s->has_bias
                                    ? prt_f16_to_f32(((const uint16_t *)jb->bias)[g * pl->coutg + oc])
                                    : 0.0f;
                for (q = 0; q < tc; q++) yb[oc * pl->hw + q] = prt_f32_to_f16(outb[oc * tc + q] + b);
            }
        }
    }
}

/* Lane l runs tiles l, l + SLOTS, l + 2*SLOTS, ... in its own slot. */
static void run_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    int64_t l, it;
    for (l = begin; l < end; l++)
        for (it = l; it < jb->pl.ntiles; it += PRT_DCN_SLOTS)
            run_item(jb, it, jb->slots + (size_t)l * jb->pl.slot_bytes);
}

/* xt[pix][c] = x[n][c][pix] for pixel rows [begin, end), in blocks. */
static void transpose_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    const int64_t cin = jb->s->cin, hwin = jb->pl.hwin;
    const int64_t xo = jb->n * cin * hwin;
    int64_t p0, c0, pp, c;
    for (p0 = begin; p0 < end; p0 += 32)
        for (c0 = 0; c0 < cin; c0 += 32) {
            const int64_t p1 = p0 + 32 < end ? p0 + 32 : end, c1 = c0 + 32 < cin ? c0 + 32 : cin;
            for (pp = p0; pp < p1; pp++)
                for (c = c0; c < c1; c++)
                    jb->xt[pp * cin + c] = ld(jb->x, xo + c * hwin + pp, jb->is_f16);
        }
}

/* wt[oc][k][c'] = weight[oc][c'][k] in fp32, for output channels [begin, end). */
static void weight_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    const int64_t K = jb->pl.K, cg = jb->pl.cg;
    int64_t oc, k, c;
    for (oc = begin; oc < end; oc++)
        for (k = 0; k < K; k++)
            for (c = 0; c < cg; c++)
                jb->w32[(oc * K + k) * cg + c] = ld(jb->weight, (oc * cg + c) * K + k, jb->is_f16);
}

int prt__deform_conv_cpu(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16,
                         const void *x, const void *offset, const void *mask, const void *weight,
                         const void *bias, void *y, void *workspace, prt__dcn_parallel_fn par,
                         void *par_ctx, char *err, size_t cap)
{
    dcn_job jb;
    uint8_t *ws;
    int64_t lanes, n;
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
    jb.weight = weight;
    jb.bias = s->has_bias ? bias : NULL;
    jb.y = y;
    jb.blend = blend4_pick();
    ws = (uint8_t *)(((uintptr_t)workspace + PRT_DCN_ALIGN - 1) & ~(uintptr_t)(PRT_DCN_ALIGN - 1));
    jb.xt = (float *)ws;
    jb.w32 = (float *)(ws + jb.pl.xt_bytes);
    jb.slots = ws + jb.pl.xt_bytes + jb.pl.w_bytes;
    memset(jb.xt + jb.pl.hwin * s->cin, 0, (size_t)s->cin * sizeof(float)); /* the zero row */
    /* Each sgemm runs on the calling worker alone: threads come from the host. */
    openblas_set_num_threads(1);
    if (par) par(par_ctx, s->cout, 1, weight_range, &jb);
    else weight_range(&jb, 0, s->cout);
    lanes = jb.pl.ntiles < PRT_DCN_SLOTS ? jb.pl.ntiles : PRT_DCN_SLOTS;
    for (n = 0; n < s->n; n++) {
        jb.n = n;
        if (par) par(par_ctx, jb.pl.hwin, 64, transpose_range, &jb);
        else transpose_range(&jb, 0, jb.pl.hwin);
        if (par) par(par_ctx, lanes, 1, run_range, &jb);
        else run_range(&jb, 0, lanes);
    }
    return 0;
}
