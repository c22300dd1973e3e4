/*
 * deform_conv/deform_conv_cpu.c - CPU implementations of ModulatedDeformConv2d:
 * the float64 plain-loop reference and the fast path, a GEMM of its own fused
 * with the bilinear gather (no BLAS).
 *
 * Fast path, per call: the weights are packed once into row blocks of 32 (or
 * 16) output channels, [k][32] with k = tap*Cg + c'. Per image n:
 *   xt = x[n] transposed to channels-last, group-major: [group][H*W + 1][Cg]
 *        in fp32, each group's last row zero (where corners outside the image
 *        point); a group's channels of one pixel are contiguous and the
 *        group's whole image is one block, so the gather of a group reads
 *        neighbouring lines (one group is the plain [H*W + 1][Cin] layout);
 *   per column tile (a work item, whole strips of nr columns):
 *     corner tables (four xt rows and four mask-scaled weights per column)
 *     for every (deformable group, tap);
 *     per group g and K chunk of DCN_KC: the gather writes the chunk straight
 *     into the layout the micro-kernels read (row q of the chunk = column q,
 *     DCN_KC floats apart, k contiguous), then the mr x nr micro-kernels
 *     (AVX-512 32x14 / 16x14, AVX2 16x6 or portable 16x4) accumulate
 *     C[q][oc] over the chunk; after the last chunk C is transposed into y
 *     with the bias (and rounded to fp16 for fp16 outputs).
 * parallel_for runs PRT_DCN_SLOTS lanes; lane l owns workspace slot l and
 * runs items l, l + SLOTS, ... in order. Every output element is accumulated
 * in the same fixed k order whichever thread runs it, so the result does not
 * depend on the thread count or split (it does depend on the kernel set:
 * PRT_DCN_CPU_ISA caps it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cpu_gemm.h"
#include "deform_conv.h"
#include "plugrt/tensor.h"

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

#define PRT_DCN_SLOTS 8
#define PRT_DCN_ALIGN 64
#define DCN_KC PRT_GEMM_KC /* K chunk; also the row stride (floats) of the packed column chunk */
#ifndef DCN_MC
#define DCN_MC 128 /* rows per A panel kept in L2 (a multiple of 32) */
#endif
#define DCN_TILE_COLS 256 /* widest column tile */
#define DCN_MAX_EXTENT ((int64_t)1 << 22) /* largest H or W of the CPU path */
#define DCN_STREAM_BYTES ((size_t)4 << 20) /* packed weights above this are written non-temporally */
#define DCN_C_BYTES ((size_t)512 << 10) /* accumulator tile budget per slot */

static size_t align_up(size_t v) { return (v + PRT_DCN_ALIGN - 1) & ~(size_t)(PRT_DCN_ALIGN - 1); }

/* Corner tables of a tile: for (deformable group d, tap k) = table
 * t = d*K + k and corner c, ix[(t*4 + c)*tmax + q] is the offset of the
 * corner's row inside a group's block of xt (pixel*Cg; the zero row hwin*Cg
 * for a corner outside the image) and w[...] its mask-scaled bilinear
 * weight, for tile column q. The tables serve every group. */
typedef struct dcn_tabs {
    const int32_t *ix;
    const float *w;
    int64_t tmax;
} dcn_tabs;

/* A run of k indices of a chunk that shares one corner table and reads
 * consecutive channels: dst[boff + i] <- xt[coff + row + i], i < len, where
 * row is the table's corner offset (coff: the group's block + channel). */
typedef struct dcn_seg {
    int64_t boff, coff, len, tab;
} dcn_seg;

/* C[j][0..mr) (+)= sum_k a[k][0..mr) * b[j][k], j < nr; rows of b are
 * DCN_KC floats apart, rows of c ldc floats apart; first: start from 0. */
typedef prt__gemm_kern_fn dcn_kern_fn;
/* Packed chunk rows q < tc (and zero rows tc .. tpad) from the corner tables. */
typedef void (*dcn_gather_fn)(float *buf, const float *xt, const dcn_tabs *tb, const dcn_seg *seg, int64_t nseg,
                              int64_t tc, int64_t tpad, int64_t kc);

typedef struct dcn_isa {
    const char *name;
    int64_t nr, mr_big;       /* columns per micro-tile; rows of the wide micro-kernel (32 or 16) */
    dcn_kern_fn k_big, k16; /* mr_big x nr and 16 x nr micro-kernels */
    dcn_gather_fn gather;
} dcn_isa;

typedef struct dcn_plan {
    int64_t K, cg, coutg, cd, hw, hwin, kd, mpad; /* kd = Cg*K, mpad = Coutg rounded up to 16 */
    int64_t xg;                                  /* floats per group block of xt: (hwin + 1)*Cg */
    int64_t nr, strips, ntiles, tmax;            /* tmax: widest tile, a multiple of nr */
    size_t xt_bytes, a_bytes, tab_bytes, buf_bytes, c_bytes, slot_bytes;
} dcn_plan;

static void plan_make(const prt__dcn_params *p, const prt__dcn_shape *s, int64_t nr, dcn_plan *pl)
{
    int64_t tcols, ts, nt;
    pl->K = s->kh * s->kw;
    pl->cg = s->cin / p->group;
    pl->coutg = s->cout / p->group;
    pl->cd = s->cin / p->deformable_group;
    pl->hw = s->hout * s->wout;
    pl->hwin = s->h * s->w;
    pl->xg = (pl->hwin + 1) * pl->cg;
    pl->kd = pl->cg * pl->K;
    pl->mpad = (pl->coutg + 15) / 16 * 16;
    pl->nr = nr;
    pl->strips = (pl->hw + nr - 1) / nr;
    /* Tile: whole strips of nr columns, at most DCN_TILE_COLS columns and an
     * accumulator tile of at most DCN_C_BYTES; the tile count is rounded up
     * to a multiple of the lanes and tile t takes strips
     * [strips*t/nt, strips*(t+1)/nt), so lanes differ by at most one strip. */
    tcols = (int64_t)(DCN_C_BYTES / ((size_t)pl->mpad * sizeof(float)));
    if (tcols > DCN_TILE_COLS) tcols = DCN_TILE_COLS;
    ts = tcols / nr;
    if (ts < 1) ts = 1;
    nt = (pl->strips + ts - 1) / ts;
    nt = (nt + PRT_DCN_SLOTS - 1) / PRT_DCN_SLOTS * PRT_DCN_SLOTS;
    if (nt > pl->strips) nt = pl->strips;
    if (nt < 1) nt = 1;
    pl->ntiles = nt;
    pl->tmax = (pl->strips + nt - 1) / nt * nr;
    pl->xt_bytes = align_up((size_t)(pl->hwin + 1) * (size_t)s->cin * sizeof(float));
    pl->a_bytes = align_up((size_t)p->group * (size_t)pl->mpad * (size_t)pl->kd * sizeof(float));
    /* int32 rows + fp32 weights, 4 corners each, and the tile's base coordinates */
    pl->tab_bytes = align_up((size_t)p->deformable_group * (size_t)pl->K * 8 * (size_t)pl->tmax * 4) +
                    align_up(2 * (size_t)pl->tmax * sizeof(int32_t));
    pl->buf_bytes = align_up((size_t)pl->tmax * DCN_KC * sizeof(float));
    pl->c_bytes = align_up((size_t)pl->tmax * (size_t)pl->mpad * sizeof(float));
    pl->slot_bytes = pl->tab_bytes + pl->buf_bytes + pl->c_bytes;
}

static size_t plan_total(const dcn_plan *pl)
{
    return pl->xt_bytes + pl->a_bytes + PRT_DCN_SLOTS * pl->slot_bytes + PRT_DCN_ALIGN;
}

/* ---- gathers: portable C (the micro-kernels are in common/cpu_gemm.c) ---- */

#define DCN_C_NR PRT_GEMM_C_NR

/* dst[c] = w[0]*a[0][c] + w[1]*a[1][c] + w[2]*a[2][c] + w[3]*a[3][c], c < len:
 * one run of channels of a segment (four corner runs of xt, their weights). */
typedef void (*dcn_blend_fn)(float *dst, const float *const a[4], const float w[4], int64_t len);

/* The gather's walk over columns and segments, shared by every kernel set;
 * always inlined into each set's gather, so that its blend (a constant
 * there) is called directly and inlined for that set's target. */
static inline __attribute__((always_inline)) void gather_walk(float *buf, const float *xt, const dcn_tabs *tb,
                                                              const dcn_seg *seg, int64_t nseg, int64_t tc,
                                                              int64_t tpad, int64_t kc, dcn_blend_fn blend)
{
    const int64_t tmax = tb->tmax;
    int64_t q, sI;
    for (q = 0; q < tc; q++) {
        float *row = buf + q * DCN_KC;
        for (sI = 0; sI < nseg; sI++) {
            const int32_t *ix = tb->ix + seg[sI].tab * 4 * tmax + q;
            const float *tw = tb->w + seg[sI].tab * 4 * tmax + q;
            const float *const a[4] = {xt + ix[0] + seg[sI].coff, xt + ix[tmax] + seg[sI].coff,
                                       xt + ix[2 * tmax] + seg[sI].coff, xt + ix[3 * tmax] + seg[sI].coff};
            const float w[4] = {tw[0], tw[tmax], tw[2 * tmax], tw[3 * tmax]};
            blend(row + seg[sI].boff, a, w, seg[sI].len);
        }
    }
    for (; q < tpad; q++) memset(buf + q * DCN_KC, 0, (size_t)kc * sizeof(float));
}

static inline void blend_c(float *dst, const float *const a[4], const float w[4], int64_t len)
{
    int64_t c;
    for (c = 0; c < len; c++) dst[c] = w[0] * a[0][c] + w[1] * a[1][c] + w[2] * a[2][c] + w[3] * a[3][c];
}

static void gather_c(float *buf, const float *xt, const dcn_tabs *tb, const dcn_seg *seg, int64_t nseg, int64_t tc,
                     int64_t tpad, int64_t kc)
{
    gather_walk(buf, xt, tb, seg, nseg, tc, tpad, kc, blend_c);
}

static const dcn_isa isa_c = {"c", DCN_C_NR, 16, prt__gemm_c_16x4, prt__gemm_c_16x4, gather_c};

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
#include <immintrin.h>
#define DCN_HAVE_X86 1

/* ---- AVX2 + FMA gather (its 16 x 6 kernel is in common/cpu_gemm.c) ------- */

/* Written out: left to the compiler, blend_c's channel loop stayed scalar
 * here (about 15 instructions a channel on case E's runs of 16). */
__attribute__((target("avx2,fma"))) static inline void blend_avx2(float *dst, const float *const a[4],
                                                                 const float w[4], int64_t len)
{
    static const int32_t lanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    const __m256 v0 = _mm256_set1_ps(w[0]), v1 = _mm256_set1_ps(w[1]);
    const __m256 v2 = _mm256_set1_ps(w[2]), v3 = _mm256_set1_ps(w[3]);
    int64_t c;
    for (c = 0; c + 8 <= len; c += 8) {
        __m256 r = _mm256_mul_ps(v0, _mm256_loadu_ps(a[0] + c));
        r = _mm256_fmadd_ps(v1, _mm256_loadu_ps(a[1] + c), r);
        r = _mm256_fmadd_ps(v2, _mm256_loadu_ps(a[2] + c), r);
        r = _mm256_fmadd_ps(v3, _mm256_loadu_ps(a[3] + c), r);
        _mm256_storeu_ps(dst + c, r);
    }
    if (c < len) { /* lanes < len - c: the masked loads read nothing past the run */
        const __m256i m = _mm256_loadu_si256((const __m256i *)(lanes + 8 - (len - c)));
        __m256 r = _mm256_mul_ps(v0, _mm256_maskload_ps(a[0] + c, m));
        r = _mm256_fmadd_ps(v1, _mm256_maskload_ps(a[1] + c, m), r);
        r = _mm256_fmadd_ps(v2, _mm256_maskload_ps(a[2] + c, m), r);
        r = _mm256_fmadd_ps(v3, _mm256_maskload_ps(a[3] + c, m), r);
        _mm256_maskstore_ps(dst + c, m, r);
    }
}

__attribute__((target("avx2,fma"))) static void gather_avx2(float *buf, const float *xt, const dcn_tabs *tb,
                                                           const dcn_seg *seg, int64_t nseg, int64_t tc,
                                                           int64_t tpad, int64_t kc)
{
    gather_walk(buf, xt, tb, seg, nseg, tc, tpad, kc, blend_avx2);
}

static const dcn_isa isa_avx2 = {"avx2", 6, 16, prt__gemm_avx2_16x6, prt__gemm_avx2_16x6, gather_avx2};

/* ---- AVX-512 gather and helpers (kernels in common/cpu_gemm.c) ------------- */

#define DCN_AVX512 __attribute__((target("avx512f,fma")))

DCN_AVX512 static inline void blend_avx512(float *dst, const float *const a[4], const float w[4], int64_t len)
{
    const __m512 v0 = _mm512_set1_ps(w[0]), v1 = _mm512_set1_ps(w[1]);
    const __m512 v2 = _mm512_set1_ps(w[2]), v3 = _mm512_set1_ps(w[3]);
    int64_t c;
    for (c = 0; c + 16 <= len; c += 16) {
        __m512 r = _mm512_mul_ps(v0, _mm512_loadu_ps(a[0] + c));
        r = _mm512_fmadd_ps(v1, _mm512_loadu_ps(a[1] + c), r);
        r = _mm512_fmadd_ps(v2, _mm512_loadu_ps(a[2] + c), r);
        r = _mm512_fmadd_ps(v3, _mm512_loadu_ps(a[3] + c), r);
        _mm512_storeu_ps(dst + c, r);
    }
    if (c < len) {
        const __mmask16 m = (__mmask16)((1u << (unsigned)(len - c)) - 1u);
        __m512 r = _mm512_mul_ps(v0, _mm512_maskz_loadu_ps(m, a[0] + c));
        r = _mm512_fmadd_ps(v1, _mm512_maskz_loadu_ps(m, a[1] + c), r);
        r = _mm512_fmadd_ps(v2, _mm512_maskz_loadu_ps(m, a[2] + c), r);
        r = _mm512_fmadd_ps(v3, _mm512_maskz_loadu_ps(m, a[3] + c), r);
        _mm512_mask_storeu_ps(dst + c, m, r);
    }
}

DCN_AVX512 static void gather_avx512(float *buf, const float *xt, const dcn_tabs *tb, const dcn_seg *seg,
                                     int64_t nseg, int64_t tc, int64_t tpad, int64_t kc)
{
    gather_walk(buf, xt, tb, seg, nseg, tc, tpad, kc, blend_avx512);
}

static const dcn_isa isa_avx512 = {"avx512", 14, 32, prt__gemm_avx512_32x14, prt__gemm_avx512_16x14,
                                   gather_avx512};

/* In-register 16 x 16 transpose: r[i][j] -> r[j][i]. */
DCN_AVX512 static inline void tr16_avx512(__m512 r[16])
{
    __m512 t[16], u[4];
    int i, j;
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (i = 0; i < 4; i++) {
        r[4 * i + 0] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0x44);
        r[4 * i + 1] = _mm512_shuffle_ps(t[4 * i + 0], t[4 * i + 2], 0xEE);
        r[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        r[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    /* r[4i + j] now holds, in 128-bit lane L, element 4L + j of rows 4i .. 4i+3 */
    for (j = 0; j < 4; j++) {
        u[0] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
        u[1] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
        u[2] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        u[3] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
        t[j] = _mm512_shuffle_f32x4(u[0], u[2], 0x88);      /* element j */
        t[4 + j] = _mm512_shuffle_f32x4(u[1], u[3], 0x88);  /* element 4 + j */
        t[8 + j] = _mm512_shuffle_f32x4(u[0], u[2], 0xDD);  /* element 8 + j */
        t[12 + j] = _mm512_shuffle_f32x4(u[1], u[3], 0xDD); /* element 12 + j */
    }
    for (i = 0; i < 16; i++) r[i] = t[i];
}

/* Lanes 0 .. n-1 (all 16 when n >= 16). */
static inline __mmask16 dcn_mask16(int64_t n)
{
    return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (unsigned)n) - 1u);
}

/* build_table for 16 columns at a time (fp32 offsets and mask); pstride:
 * floats per pixel of a group block of xt. */
DCN_AVX512 static void table_avx512(const int32_t *by, const int32_t *bx, const float *dyp, const float *dxp,
                                    const float *mp, int64_t tc, int32_t di, int32_t dj, int32_t H, int32_t W,
                                    int32_t pstride, int32_t *ix, float *tw, int64_t tmax)
{
    const __m512i vc = _mm512_set1_epi32(pstride);
    const __m512 one = _mm512_set1_ps(1.0f), m2 = _mm512_set1_ps(-2.0f), fzero = _mm512_setzero_ps();
    const __m512 hlim = _mm512_set1_ps((float)H + 1.0f), wlim = _mm512_set1_ps((float)W + 1.0f);
    const __m512i vm1 = _mm512_set1_epi32(-1), vHm1 = _mm512_set1_epi32(H - 1), vWm1 = _mm512_set1_epi32(W - 1);
    const __m512i vH = _mm512_set1_epi32(H), vW = _mm512_set1_epi32(W), zr = _mm512_set1_epi32(H * W * pstride);
    const __m512i vone = _mm512_set1_epi32(1), vzero = _mm512_setzero_si512();
    int64_t q0;
    for (q0 = 0; q0 < tc; q0 += 16) {
        const __mmask16 mq = dcn_mask16(tc - q0);
        const __m512 dy = _mm512_maskz_loadu_ps(mq, dyp + q0), dx = _mm512_maskz_loadu_ps(mq, dxp + q0);
        const __m512 m = _mm512_maskz_loadu_ps(mq, mp + q0);
        const __m512i iy = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mq, by + q0), _mm512_set1_epi32(di));
        const __m512i ixx = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mq, bx + q0), _mm512_set1_epi32(dj));
        /* coarse test on the fp32 position (false for NaN), then integer part + fraction
         * taken from the offset itself, as in build_table */
        const __m512 pyc = _mm512_add_ps(_mm512_cvtepi32_ps(iy), dy), pxc = _mm512_add_ps(_mm512_cvtepi32_ps(ixx), dx);
        const __mmask16 pre = _mm512_cmp_ps_mask(pyc, m2, _CMP_GT_OQ) & _mm512_cmp_ps_mask(pyc, hlim, _CMP_LT_OQ) &
                              _mm512_cmp_ps_mask(pxc, m2, _CMP_GT_OQ) & _mm512_cmp_ps_mask(pxc, wlim, _CMP_LT_OQ);
        const __m512 dyz = _mm512_maskz_mov_ps(pre, dy), dxz = _mm512_maskz_mov_ps(pre, dx);
        const __m512 fy = _mm512_roundscale_ps(dyz, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m512 fx = _mm512_roundscale_ps(dxz, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        const __m512 lh = _mm512_sub_ps(dyz, fy), lw = _mm512_sub_ps(dxz, fx);
        const __m512 ah = _mm512_sub_ps(one, lh), aw = _mm512_sub_ps(one, lw);
        const __m512i h0 = _mm512_add_epi32(iy, _mm512_cvttps_epi32(fy));
        const __m512i w0 = _mm512_add_epi32(ixx, _mm512_cvttps_epi32(fx));
        const __m512i pix = _mm512_add_epi32(_mm512_mullo_epi32(h0, vW), w0);
        const __mmask16 okh = (_mm512_cmp_epi32_mask(h0, vzero, _MM_CMPINT_NLT) |
                               (_mm512_cmp_epi32_mask(h0, vm1, _MM_CMPINT_EQ) & _mm512_cmp_ps_mask(lh, fzero, _CMP_GT_OQ))) &
                              _mm512_cmp_epi32_mask(h0, vHm1, _MM_CMPINT_LE);
        const __mmask16 okw = (_mm512_cmp_epi32_mask(w0, vzero, _MM_CMPINT_NLT) |
                               (_mm512_cmp_epi32_mask(w0, vm1, _MM_CMPINT_EQ) & _mm512_cmp_ps_mask(lw, fzero, _CMP_GT_OQ))) &
                              _mm512_cmp_epi32_mask(w0, vWm1, _MM_CMPINT_LE);
        const __mmask16 ok = pre & okh & okw;
        __mmask16 ch0, ch1, cw0, cw1;
        ch0 = ok & _mm512_cmp_epi32_mask(h0, vzero, _MM_CMPINT_NLT);
        ch1 = ok & _mm512_cmp_epi32_mask(_mm512_add_epi32(h0, vone), vH, _MM_CMPINT_LT);
        cw0 = _mm512_cmp_epi32_mask(w0, vzero, _MM_CMPINT_NLT);
        cw1 = _mm512_cmp_epi32_mask(_mm512_add_epi32(w0, vone), vW, _MM_CMPINT_LT);
        {
            const __m512i e00 = _mm512_mullo_epi32(pix, vc), e01 = _mm512_add_epi32(e00, vc);
            const __m512i e10 = _mm512_mullo_epi32(_mm512_add_epi32(pix, vW), vc), e11 = _mm512_add_epi32(e10, vc);
            _mm512_mask_storeu_epi32(ix + q0, mq, _mm512_mask_blend_epi32(ch0 & cw0, zr, e00));
            _mm512_mask_storeu_epi32(ix + tmax + q0, mq, _mm512_mask_blend_epi32(ch0 & cw1, zr, e01));
            _mm512_mask_storeu_epi32(ix + 2 * tmax + q0, mq, _mm512_mask_blend_epi32(ch1 & cw0, zr, e10));
            _mm512_mask_storeu_epi32(ix + 3 * tmax + q0, mq, _mm512_mask_blend_epi32(ch1 & cw1, zr, e11));
        }
        _mm512_mask_storeu_ps(tw + q0, mq, _mm512_maskz_mul_ps(ch0 & cw0, _mm512_mul_ps(m, ah), aw));
        _mm512_mask_storeu_ps(tw + tmax + q0, mq, _mm512_maskz_mul_ps(ch0 & cw1, _mm512_mul_ps(m, ah), lw));
        _mm512_mask_storeu_ps(tw + 2 * tmax + q0, mq, _mm512_maskz_mul_ps(ch1 & cw0, _mm512_mul_ps(m, lh), aw));
        _mm512_mask_storeu_ps(tw + 3 * tmax + q0, mq, _mm512_maskz_mul_ps(ch1 & cw1, _mm512_mul_ps(m, lh), lw));
    }
}

/* xt[g][pp][c'] = x[g*cg + c'][pp] (fp32 x), pixels [begin, end); a block of
 * 16 channels never crosses a group (cg == cin or cg % 16 == 0). */
DCN_AVX512 static void transpose_x_avx512(const float *xs, float *xt, int64_t cin, int64_t cg, int64_t xg,
                                          int64_t hwin, int64_t begin, int64_t end)
{
    int64_t p0, c0, i;
    __m512 r[16];
    for (p0 = begin; p0 < end; p0 += 16) {
        const int64_t np = end - p0 < 16 ? end - p0 : 16;
        const __mmask16 mp = dcn_mask16(np);
        for (c0 = 0; c0 < cin; c0 += 16) {
            const int64_t nc = cin - c0 < 16 ? cin - c0 : 16;
            const __mmask16 mc = dcn_mask16(nc);
            for (i = 0; i < 16; i++)
                r[i] = i < nc ? _mm512_maskz_loadu_ps(mp, xs + (c0 + i) * hwin + p0) : _mm512_setzero_ps();
            tr16_avx512(r);
            {
                float *dst = xt + c0 / cg * xg + c0 % cg;
                for (i = 0; i < np; i++) _mm512_mask_storeu_ps(dst + (p0 + i) * cg, mc, r[i]);
            }
        }
    }
}

/* y rows oc < coutg (ld hw) [q] = cb[q][oc] + bias[oc], q < tc; fp32 y. */
DCN_AVX512 static void store_out_avx512(const float *cb, int64_t mpad, int64_t coutg, int64_t tc, const float *bias,
                                        float *y, int64_t hw)
{
    int64_t o0, q0, i;
    __m512 r[16];
    for (o0 = 0; o0 < coutg; o0 += 16) {
        const int64_t no = coutg - o0 < 16 ? coutg - o0 : 16;
        for (q0 = 0; q0 < tc; q0 += 16) {
            const int64_t nq = tc - q0 < 16 ? tc - q0 : 16;
            const __mmask16 mq = dcn_mask16(nq);
            for (i = 0; i < 16; i++) r[i] = i < nq ? _mm512_loadu_ps(cb + (q0 + i) * mpad + o0) : _mm512_setzero_ps();
            tr16_avx512(r);
            for (i = 0; i < no; i++)
                _mm512_mask_storeu_ps(y + (o0 + i) * hw + q0, mq,
                                      _mm512_add_ps(r[i], _mm512_set1_ps(bias ? bias[o0 + i] : 0.0f)));
        }
    }
}

/* 16 weight rows (nrow valid, ld cg*K, fp32) to [k][mr] with k = tap*cg + c
 * (blk 64-byte aligned). stream: non-temporal stores, for packed weights far
 * larger than L2 (they are read back from L3 or memory anyway, and the stores
 * then skip the read for ownership). */
DCN_AVX512 static void pack_rows_avx512(const float *w, int64_t nrow, int64_t cg, int64_t K, float *blk, int64_t mr,
                                        int stream)
{
    const int64_t kd = cg * K;
    int64_t e0, i;
    __m512 r[16];
    for (e0 = 0; e0 < kd; e0 += 16) {
        const int64_t ne = kd - e0 < 16 ? kd - e0 : 16;
        const __mmask16 me = dcn_mask16(ne);
        for (i = 0; i < 16; i++) r[i] = i < nrow ? _mm512_maskz_loadu_ps(me, w + i * kd + e0) : _mm512_setzero_ps();
        tr16_avx512(r);
        {
            int64_t c = e0 / K, tap = e0 % K; /* e = c*K + tap, stepped without dividing */
            for (i = 0; i < ne; i++) {
                if (stream) _mm512_stream_ps(blk + (tap * cg + c) * mr, r[i]);
                else _mm512_store_ps(blk + (tap * cg + c) * mr, r[i]);
                if (++tap == K) {
                    tap = 0;
                    c++;
                }
            }
        }
    }
    _mm_sfence();
}
#endif

/* The best kernel set this CPU runs (prt__gemm_level; PRT_DCN_CPU_ISA=c|avx2
 * caps it, for testing the other kernels on one machine). */
static const dcn_isa *isa_pick(void)
{
    switch (prt__gemm_level()) {
#ifdef DCN_HAVE_X86
    case 2: return &isa_avx512;
    case 1: return &isa_avx2;
#endif
    default: return &isa_c;
    }
}

size_t prt__deform_conv_cpu_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    /* the largest over the kernel sets, so that the size does not depend on the CPU */
    static const int64_t nrs[3] = {DCN_C_NR, 6, 14};
    size_t best = 0;
    int i;
    (void)is_f16;
    if (s->n <= 0 || s->hout <= 0 || s->wout <= 0 || s->cout <= 0) return 0;
    for (i = 0; i < 3; i++) {
        dcn_plan pl;
        plan_make(p, s, nrs[i], &pl);
        if (plan_total(&pl) > best) best = plan_total(&pl);
    }
    return best;
}

typedef struct dcn_job {
    const prt__dcn_params *p;
    const prt__dcn_shape *s;
    dcn_plan pl;
    const dcn_isa *isa;
    int elt; /* PRT_DCN_F32, PRT_DCN_F16 or PRT_DCN_BF16 */
    const void *x, *offset, *mask, *weight, *bias;
    float *xt, *apack;
    void *y;
    uint8_t *slots;
    int64_t n; /* image being processed */
} dcn_job;

/* Element i of a tensor of elt's type, as fp32. */
static inline float ld(const void *base, int64_t i, int elt)
{
    if (elt == PRT_DCN_F16) return prt_f16_to_f32(((const uint16_t *)base)[i]);
    if (elt == PRT_DCN_BF16) return prt_bf16_to_f32(((const uint16_t *)base)[i]);
    return ((const float *)base)[i];
}

/* Corner table of tap k of deformable group d for columns [p0, p0+tc):
 * ix/w point at the table's corner 0 (corner c at + c*tmax); by/bx are the
 * columns' oy*strideH - padH and ox*strideW - padW. */
static void build_table(const dcn_job *jb, int64_t d, int64_t k, int64_t p0, int64_t tc, const int32_t *by,
                        const int32_t *bx, int32_t *ix, float *tw)
{
    const prt__dcn_params *p = jb->p;
    const prt__dcn_shape *s = jb->s;
    const int64_t K = jb->pl.K, hw = jb->pl.hw, tmax = jb->pl.tmax, n = jb->n;
    /* cin: the pixel stride of a group block of xt */
    const int32_t W = (int32_t)s->w, H = (int32_t)s->h, cin = (int32_t)jb->pl.cg, zr = (int32_t)jb->pl.hwin * cin;
    const int32_t di = (int32_t)((k / s->kw) * p->dilation[0]), dj = (int32_t)((k % s->kw) * p->dilation[1]);
    const int64_t och = (n * 2 * p->deformable_group * K + d * 2 * K + 2 * k) * hw + p0;
    const int64_t mch = (n * p->deformable_group * K + d * K + k) * hw + p0;
    const float hlim = (float)(s->h + 1), wlim = (float)(s->w + 1);
    int64_t q;
#ifdef DCN_HAVE_X86
    if (jb->isa == &isa_avx512 && jb->elt == PRT_DCN_F32) {
        table_avx512(by, bx, (const float *)jb->offset + och, (const float *)jb->offset + och + hw,
                     (const float *)jb->mask + mch, tc, di, dj, H, W, cin, ix, tw, tmax);
        return;
    }
#endif
    for (q = 0; q < tc; q++) {
        const float dy = ld(jb->offset, och + q, jb->elt);
        const float dx = ld(jb->offset, och + hw + q, jb->elt);
        const float m = ld(jb->mask, mch + q, jb->elt);
        /* coarse test on the fp32 position (false for NaN, keeps the integer math in range) */
        const float pyc = (float)(by[q] + di) + dy, pxc = (float)(bx[q] + dj) + dx;
        int32_t i0 = zr, i1 = zr, i2 = zr, i3 = zr;
        float w0 = 0.0f, w1 = 0.0f, w2 = 0.0f, w3 = 0.0f;
        if (pyc > -2.0f && pyc < hlim && pxc > -2.0f && pxc < wlim) {
            /* position = integer part + fraction, both taken from the offset itself: the
             * fraction keeps fp32 precision however far from the origin the sample is */
            const float fy = floorf(dy), fx = floorf(dx);
            const int32_t h0 = by[q] + di + (int32_t)fy, w0i = bx[q] + dj + (int32_t)fx, pix = h0 * W + w0i;
            const float lh = dy - fy, lw = dx - fx;
            /* inside when -1 < position < extent, as in the reference */
            const int okh = (h0 >= 0 || (h0 == -1 && lh > 0.0f)) && h0 <= H - 1;
            const int okw = (w0i >= 0 || (w0i == -1 && lw > 0.0f)) && w0i <= W - 1;
            if (!(okh && okw)) goto store;
            if (h0 >= 0 && w0i >= 0) { i0 = pix * cin; w0 = m * (1 - lh) * (1 - lw); }
            if (h0 >= 0 && w0i + 1 < W) { i1 = (pix + 1) * cin; w1 = m * (1 - lh) * lw; }
            if (h0 + 1 < H && w0i >= 0) { i2 = (pix + W) * cin; w2 = m * lh * (1 - lw); }
            if (h0 + 1 < H && w0i + 1 < W) { i3 = (pix + W + 1) * cin; w3 = m * lh * lw; }
        }
    store:
        ix[q] = i0; ix[tmax + q] = i1; ix[2 * tmax + q] = i2; ix[3 * tmax + q] = i3;
        tw[q] = w0; tw[tmax + q] = w1; tw[2 * tmax + q] = w2; tw[3 * tmax + q] = w3;
    }
}

/* Segments of chunk [k0, k0 + kc) of group g: k = tap*Cg + c'. */
static int64_t make_segments(const dcn_plan *pl, int64_t g, int64_t k0, int64_t kc, dcn_seg *seg)
{
    int64_t kk = k0, ns = 0;
    while (kk < k0 + kc) {
        const int64_t tap = kk / pl->cg, c = g * pl->cg + kk % pl->cg, d = c / pl->cd;
        int64_t end = k0 + kc;
        if ((tap + 1) * pl->cg < end) end = (tap + 1) * pl->cg;
        if (kk + (d + 1) * pl->cd - c < end) end = kk + (d + 1) * pl->cd - c;
        seg[ns].boff = kk - k0;
        seg[ns].coff = g * pl->xg + (c - g * pl->cg);
        seg[ns].len = end - kk;
        seg[ns].tab = d * pl->K + tap;
        ns++;
        kk = end;
    }
    return ns;
}

/* y[n, g*Coutg + oc, p0 + q] = cb[q][oc] + bias, q < tc, in blocks of 16 x 16. */
static void store_out(const dcn_job *jb, int64_t g, const float *cb, int64_t p0, int64_t tc)
{
    const dcn_plan *pl = &jb->pl;
    const int64_t ocb = g * pl->coutg, ybase = (jb->n * jb->s->cout + ocb) * pl->hw + p0;
    int64_t o0, q0, oc, q;
#ifdef DCN_HAVE_X86
    if (jb->isa == &isa_avx512 && jb->elt == PRT_DCN_F32) {
        store_out_avx512(cb, pl->mpad, pl->coutg, tc, jb->bias ? (const float *)jb->bias + ocb : NULL,
                         (float *)jb->y + ybase, pl->hw);
        return;
    }
#endif
    for (o0 = 0; o0 < pl->coutg; o0 += 16) {
        const int64_t o1 = o0 + 16 < pl->coutg ? o0 + 16 : pl->coutg;
        for (q0 = 0; q0 < tc; q0 += 16) {
            const int64_t q1 = q0 + 16 < tc ? q0 + 16 : tc;
            for (oc = o0; oc < o1; oc++) {
                const float b = jb->bias ? ld(jb->bias, ocb + oc, jb->elt) : 0.0f;
                if (jb->elt == PRT_DCN_F32) {
                    float *yr = (float *)jb->y + ybase + oc * pl->hw;
                    for (q = q0; q < q1; q++) yr[q] = cb[q * pl->mpad + oc] + b;
                } else {
                    uint16_t *yr = (uint16_t *)jb->y + ybase + oc * pl->hw;
                    if (jb->elt == PRT_DCN_BF16)
                        for (q = q0; q < q1; q++) yr[q] = prt_f32_to_bf16(cb[q * pl->mpad + oc] + b);
                    else
                        for (q = q0; q < q1; q++) yr[q] = prt_f32_to_f16(cb[q * pl->mpad + oc] + b);
                }
            }
        }
    }
}

/* Item (image jb->n, tile t): corner tables for all (deformable group, tap),
 * then per group and K chunk: gather the packed chunk, run the micro-kernels
 * over it (row panels of DCN_MC, strips, row blocks), and after the group's
 * last chunk write the group out. */
static void run_item(const dcn_job *jb, int64_t t, uint8_t *slot)
{
    const dcn_plan *pl = &jb->pl;
    const dcn_isa *isa = jb->isa;
    const int64_t nr = pl->nr, s0 = pl->strips * t / pl->ntiles, s1 = pl->strips * (t + 1) / pl->ntiles;
    const int64_t p0 = s0 * nr, tc = (s1 * nr < pl->hw ? s1 * nr : pl->hw) - p0, tpad = (s1 - s0) * nr;
    const size_t tsz = (size_t)jb->p->deformable_group * (size_t)pl->K * 4 * (size_t)pl->tmax;
    int32_t *tix = (int32_t *)slot;
    float *tw = (float *)(tix + tsz);
    int32_t *by = tix + 2 * tsz, *bx = by + pl->tmax;
    float *buf = (float *)(slot + pl->tab_bytes);
    dcn_tabs tb;
    float *cb = (float *)(slot + pl->tab_bytes + pl->buf_bytes);
    dcn_seg seg[DCN_KC];
    int64_t d, k, g, k0, jr, m0, mc;

    {
        int64_t q, oy = p0 / jb->s->wout, ox = p0 % jb->s->wout;
        for (q = 0; q < tc; q++) {
            by[q] = (int32_t)(oy * jb->p->stride[0] - jb->p->padding[0]);
            bx[q] = (int32_t)(ox * jb->p->stride[1] - jb->p->padding[1]);
            if (++ox == jb->s->wout) {
                ox = 0;
                oy++;
            }
        }
    }
    for (d = 0; d < jb->p->deformable_group; d++)
        for (k = 0; k < pl->K; k++) {
            const size_t t4 = (size_t)(d * pl->K + k) * 4 * (size_t)pl->tmax;
            build_table(jb, d, k, p0, tc, by, bx, tix + t4, tw + t4);
        }
    tb.ix = tix;
    tb.w = tw;
    tb.tmax = pl->tmax;
    for (g = 0; g < jb->p->group; g++) {
        const float *ag = jb->apack + g * pl->mpad * pl->kd;
        for (k0 = 0; k0 < pl->kd; k0 += DCN_KC) {
            const int64_t kc = pl->kd - k0 < DCN_KC ? pl->kd - k0 : DCN_KC;
            const int64_t nseg = make_segments(pl, g, k0, kc, seg);
            isa->gather(buf, jb->xt, &tb, seg, nseg, tc, tpad, kc);
            /* row panels of DCN_MC rows (their A chunk stays in L2), strips, row blocks */
            for (mc = 0; mc < pl->mpad; mc += DCN_MC) {
                const int64_t mce = mc + DCN_MC < pl->mpad ? mc + DCN_MC : pl->mpad;
                for (jr = 0; jr < tpad; jr += nr) {
                    const float *bj = buf + jr * DCN_KC;
                    float *cj = cb + jr * pl->mpad;
                    for (m0 = mc; m0 < mce;) {
                        const int64_t mr = (isa->mr_big == 32 && pl->mpad - m0 >= 32) ? 32 : 16;
                        (mr == 32 ? isa->k_big : isa->k16)(kc, ag + m0 * pl->kd + k0 * mr, bj, cj + m0, pl->mpad,
                                                           k0 == 0);
                        m0 += mr;
                    }
                }
            }
        }
        store_out(jb, g, cb, p0, tc);
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

/* xt[g][pix][c'] = x[n][g*Cg + c'][pix] for pixel rows [begin, end), in
 * blocks (the AVX-512 form takes 16 channels at a time, so it runs when no
 * block of 16 crosses a group). */
static void transpose_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    const int64_t cin = jb->s->cin, hwin = jb->pl.hwin, cg = jb->pl.cg, xg = jb->pl.xg;
    const int64_t xo = jb->n * cin * hwin;
    int64_t p0, c0, pp, c;
#ifdef DCN_HAVE_X86
    if (jb->isa == &isa_avx512 && jb->elt == PRT_DCN_F32 && (cg == cin || cg % 16 == 0)) {
        transpose_x_avx512((const float *)jb->x + xo, jb->xt, cin, cg, xg, hwin, begin, end);
        return;
    }
#endif
    for (p0 = begin; p0 < end; p0 += 32)
        for (c0 = 0; c0 < cin; c0 += 32) {
            const int64_t p1 = p0 + 32 < end ? p0 + 32 : end, c1 = c0 + 32 < cin ? c0 + 32 : cin;
            for (c = c0; c < c1; c++) {
                float *dst = jb->xt + c / cg * xg + c % cg;
                if (jb->elt == PRT_DCN_F32) {
                    const float *xs = (const float *)jb->x + xo + c * hwin;
                    for (pp = p0; pp < p1; pp++) dst[pp * cg] = xs[pp];
                } else {
                    for (pp = p0; pp < p1; pp++) dst[pp * cg] = ld(jb->x, xo + c * hwin + pp, jb->elt);
                }
            }
        }
}

/* Packed weights: group g, row block [m0, m0 + mr) is stored at
 * apack + (g*mpad + m0)*kd as [kd][mr], k = tap*Cg + c'; rows >= Coutg are 0.
 * Work item: one block of 16 rows (a 32-row block is two items). */
static void pack_range(void *arg, int64_t begin, int64_t end)
{
    const dcn_job *jb = (const dcn_job *)arg;
    const dcn_plan *pl = &jb->pl;
    const int64_t nb16 = pl->mpad / 16, K = pl->K, cg = pl->cg, kd = pl->kd;
    int64_t it, i;
    for (it = begin; it < end; it++) {
        const int64_t g = it / nb16, r0 = it % nb16 * 16; /* first row of this item */
        int64_t m0 = 0, mr = 16;
        float *blk;
        /* the block holding r0 (blocks of mr_big while they fit, then 16) */
        for (;;) {
            mr = (jb->isa->mr_big == 32 && pl->mpad - m0 >= 32) ? 32 : 16;
            if (r0 < m0 + mr) break;
            m0 += mr;
        }
        blk = jb->apack + (g * pl->mpad + m0) * kd + (r0 - m0);
        /* rows read in order (16 streams), each k's 16 values written together */
        {
            const int64_t nrow = pl->coutg - r0 < 16 ? (pl->coutg - r0 > 0 ? pl->coutg - r0 : 0) : 16;
            const int64_t wrow = nrow > 0 ? (g * pl->coutg + r0) * cg * K : 0;
            int64_t c, tap;
#ifdef DCN_HAVE_X86
            if (jb->isa == &isa_avx512 && jb->elt == PRT_DCN_F32) {
                pack_rows_avx512((const float *)jb->weight + wrow, nrow, cg, K, blk, mr,
                                 pl->a_bytes > DCN_STREAM_BYTES);
                continue;
            }
#endif
            for (c = 0; c < cg; c++)
                for (tap = 0; tap < K; tap++) {
                    float *dst = blk + (tap * cg + c) * mr;
                    if (jb->elt == PRT_DCN_F32) {
                        const float *w = (const float *)jb->weight + wrow + c * K + tap;
                        for (i = 0; i < nrow; i++) dst[i] = w[i * cg * K];
                    } else {
                        for (i = 0; i < nrow; i++) dst[i] = ld(jb->weight, wrow + i * cg * K + c * K + tap, jb->elt);
                    }
                    for (; i < 16; i++) dst[i] = 0.0f;
                }
        }
    }
}

int prt__deform_conv_cpu(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                         const void *x, const void *offset, const void *mask, const void *weight,
                         const void *bias, void *y, void *workspace, prt__dcn_parallel_fn par,
                         void *par_ctx, char *err, size_t cap)
{
    dcn_job jb;
    uint8_t *ws;
    int64_t lanes, n, npack;
    if (s->n == 0 || s->cout == 0 || s->hout * s->wout == 0) return 0;
    if (!workspace) {
        if (err && cap) snprintf(err, cap, "ModulatedDeformConv2d: CPU path needs a workspace, got NULL");
        return -1;
    }
    /* The corner tables hold 32-bit offsets into the transposed image, and the
     * coarse in-image test runs on fp32 positions (exact enough below 2^22). */
    if ((s->h * s->w + 1) * s->cin > INT32_MAX || s->h > DCN_MAX_EXTENT || s->w > DCN_MAX_EXTENT) {
        if (err && cap)
            snprintf(err, cap,
                     "ModulatedDeformConv2d: CPU path supports H, W <= %lld and (H*W + 1)*Cin <= 2^31 - 1 elements "
                     "per image, got H %lld, W %lld, Cin %lld",
                     (long long)DCN_MAX_EXTENT, (long long)s->h, (long long)s->w, (long long)s->cin);
        return -1;
    }
    memset(&jb, 0, sizeof(jb));
    jb.isa = isa_pick();
    plan_make(p, s, jb.isa->nr, &jb.pl);
    jb.p = p;
    jb.s = s;
    jb.elt = elt;
    jb.x = x;
    jb.offset = offset;
    jb.mask = mask;
    jb.weight = weight;
    jb.bias = s->has_bias ? bias : NULL;
    jb.y = y;
    ws = (uint8_t *)(((uintptr_t)workspace + PRT_DCN_ALIGN - 1) & ~(uintptr_t)(PRT_DCN_ALIGN - 1));
    jb.xt = (float *)ws;
    jb.apack = (float *)(ws + jb.pl.xt_bytes);
    jb.slots = ws + jb.pl.xt_bytes + jb.pl.a_bytes;
    for (n = 0; n < p->group; n++) /* each group block's zero row */
        memset(jb.xt + n * jb.pl.xg + jb.pl.hwin * jb.pl.cg, 0, (size_t)jb.pl.cg * sizeof(float));
    npack = p->group * (jb.pl.mpad / 16);
    if (par) par(par_ctx, npack, 1, pack_range, &jb);
    else pack_range(&jb, 0, npack);
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
