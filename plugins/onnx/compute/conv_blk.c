/*
 * onnx/compute/conv_blk.c - blocked im2col + GEMM convolution, fp32.
 *
 * Per run: each group's weights [coutg][kd] are packed once for the GEMM
 * micro-kernels, and a table gives, for every row k = (c, i, j) of the
 * im2col matrix, where its taps read the input. Work items are blocks of
 * output columns (pixels) of one (image, group), for all its output
 * channels. The GEMM (prt__gemm_packed) asks for the im2col matrix one panel
 * of a few columns and one K chunk at a time and gets it written straight
 * into its packed buffer (L1-sized; no im2col matrix exists in memory); a 1x1
 * stride-1 unpadded kernel copies the input rows instead. After the GEMM the
 * block gets its bias and the epilogue, one output channel's segment at a
 * time, while it is still in cache (the GEMM starts each sum from the bias).
 */
#include <stdint.h>
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "conv.h"

#define BLK_W 256 /* output columns per block, at most */

typedef struct blk_tap {    /* row k = (c * kh + i) * kw + j of a group's im2col matrix */
    int64_t xoff;           /* c * h * w */
    int64_t dy, dx;         /* iy = oy * sh + dy, ix = ox * sw + dx */
    int64_t oxlo, oxhi;     /* the output columns whose ix lies in [0, w) */
    int64_t at;             /* xoff + dy * w + dx: element (oy, ox) at at + oy * sh * w + ox * sw */
} blk_tap;

typedef struct blk_job {
    const prt__conv_geo *g;
    const float *x, *b;
    float *y;
    const prt__gemm_pa *pa; /* one per group */
    const blk_tap *taps;
    const prt__conv_epi *epi;
    int64_t bw, nblk;       /* block width; blocks per (image, group) */
} blk_job;

typedef struct blk_item {
    const blk_job *j;
    const float *xg; /* the image and group's first input channel */
    int64_t c0;      /* the block's first output column */
} blk_item;

static int64_t blk_align(int64_t bytes) { return (bytes + 63) / 64 * 64; }

static const float blk_zeros[32]; /* an im2col row of a kernel row outside the input, read in place */

/* Fetch the line `ahead` floats past p into L2 (the address may lie past the
 * buffer: a prefetch never faults, and no pointer is formed to it). */
static void blk_prefetch(const float *p, int64_t ahead)
{
    __builtin_prefetch((const void *)((uintptr_t)p + (uintptr_t)ahead * sizeof(float)), 0, 2);
}

/* d[0, run) = im2col row t for output columns [ox, ox + run) of output row oy. */
static void blk_fill(const prt__conv_geo *g, const blk_tap *t, const float *xg, int64_t oy, int64_t ox, int64_t run,
                     int64_t mr, float *d)
{
    const int64_t iy = oy * g->sh + t->dy;
    const float *row;
    int64_t a, b, o;
    if (iy < 0 || iy >= g->h) {
        memset(d, 0, (size_t)run * sizeof(float));
        return;
    }
    row = xg + t->xoff + iy * g->w;
    a = ox > t->oxlo ? ox : t->oxlo;
    b = ox + run < t->oxhi ? ox + run : t->oxhi;
    if (a > ox + run) a = ox + run;
    if (b < a) b = a;
    for (o = ox; o < a; o++) d[o - ox] = 0;
    /* the next panel of this row reads on from here: fetch it while this one computes */
    blk_prefetch(row, (ox + run + mr) * g->sw + t->dx);
    if (g->sw == 1 && b > a) {
        if (b - a == 32) memcpy(d + (a - ox), row + a + t->dx, 32 * sizeof(float));
        else memcpy(d + (a - ox), row + a + t->dx, (size_t)(b - a) * sizeof(float));
    } else {
        for (o = a; o < b; o++) d[o - ox] = row[o * g->sw + t->dx];
    }
    for (o = b; o < ox + run; o++) d[o - ox] = 0;
}

/* dst[kk * mr + q] = col[k0 + kk][c0 + n0 + q], zero past nw (0 returned).
 * Or, where ptrs is given, for a full panel of a 1x1 direct convolution or
 * a stride-1 panel inside one output row: ptrs[kk] = where row kk of the
 * panel lies, in the input itself when every tap of that row reads inside
 * it, zeros for a kernel row outside the input, else the row filled in dst
 * (1 returned). */
static int blk_pack(void *arg, int64_t k0, int64_t kc, int64_t n0, int64_t nw, int64_t mr, float *dst,
                    const float **ptrs)
{
    const blk_item *it = arg;
    const prt__conv_geo *g = it->j->g;
    const int64_t p0 = it->c0 + n0, hw = g->oh * g->ow;
    const int64_t oy0 = p0 / g->ow, ox0 = p0 % g->ow;
    int64_t kk, q;
    /* read in place, the panel after next fetched into L2 as the copies do */
    if (ptrs && mr <= 32 && g->direct_1x1) {
        for (kk = 0; kk < kc; kk++) {
            ptrs[kk] = it->xg + (k0 + kk) * hw + p0;
            blk_prefetch(ptrs[kk], 2 * mr);
            blk_prefetch(ptrs[kk], 2 * mr + 16);
        }
        return 1;
    }
    if (ptrs && mr <= 32 && g->sw == 1 && ox0 + mr <= g->ow) {
        const int64_t ysh = oy0 * g->sh, here = ysh * g->w + ox0;
        for (kk = 0; kk < kc; kk++) {
            const blk_tap *t = &it->j->taps[k0 + kk];
            if (ysh + t->dy < 0 || ysh + t->dy >= g->h) {
                ptrs[kk] = blk_zeros;
            } else if (ox0 >= t->oxlo && ox0 + mr <= t->oxhi) {
                ptrs[kk] = it->xg + t->at + here;
                blk_prefetch(ptrs[kk], 2 * mr); /* the panel after next of this input row, as the copies fetch it */
            } else {
                blk_fill(g, t, it->xg, oy0, ox0, mr, mr, dst + kk * mr);
                ptrs[kk] = dst + kk * mr;
            }
        }
        return 1;
    }
    for (kk = 0; kk < kc; kk++) {
        float *d = dst + kk * mr;
        if (g->direct_1x1) {
            const float *src = it->xg + (k0 + kk) * hw + p0;
            if (nw == 32) memcpy(d, src, 32 * sizeof(float));
            else memcpy(d, src, (size_t)nw * sizeof(float));
            blk_prefetch(src, 2 * mr);
            blk_prefetch(src, 2 * mr + 16);
        } else {
            int64_t oy = oy0, ox = ox0, run;
            for (q = 0; q < nw; oy++, ox = 0, q += run) { /* one output row's run of the panel at a time */
                run = nw - q < g->ow - ox ? nw - q : g->ow - ox;
                blk_fill(g, &it->j->taps[k0 + kk], it->xg, oy, ox, run, mr, d + q);
            }
        }
        for (q = nw; q < mr; q++) d[q] = 0;
    }
    return 0;
}

/* Work items: blocks of up to BLK_W output columns of one (image, group);
 * narrower blocks while there are too few for the threads (the split
 * changes no result, see conv.h). Returns the item count. */
static int64_t blk_split(const prt__conv_geo *g, int64_t threads, int64_t *bw, int64_t *nblk)
{
    const int64_t hw = g->oh * g->ow;
    int64_t items;
    *bw = BLK_W;
    for (;;) {
        *nblk = (hw + *bw - 1) / *bw;
        items = g->n * g->g * *nblk;
        if (items >= 4 * threads || *bw <= 32) return items;
        *bw /= 2;
    }
}

/* The epilogue on a finished block: nb columns from yb, output channels [r0, r1) of the group. */
static void blk_epilogue(const prt__conv_epi *epi, const prt__conv_geo *g, float *y, const float *yb, int64_t nb,
                         int64_t r0, int64_t r1)
{
    const int64_t hw = g->oh * g->ow;
    int64_t m;
    if (!epi || !epi->fn) return;
    if (nb == hw) { /* the block is whole planes: one contiguous range */
        epi->fn(epi->arg, y, yb + r0 * hw - y, yb + r1 * hw - y);
        return;
    }
    for (m = r0; m < r1; m++) {
        const int64_t row = yb + m * hw - y;
        epi->fn(epi->arg, y, row, row + nb);
    }
}

static void blk_range(void *arg, int64_t begin, int64_t end)
{
    const blk_job *j = arg;
    const prt__conv_geo *g = j->g;
    const int64_t hw = g->oh * g->ow;
    int64_t t;
    for (t = begin; t < end; t++) {
        const int64_t img = t / (g->g * j->nblk), grp = t / j->nblk % g->g, c0 = t % j->nblk * j->bw;
        const int64_t nb = hw - c0 < j->bw ? hw - c0 : j->bw;
        const blk_item it = {j, j->x + (img * g->cin + grp * g->cg) * g->h * g->w, c0};
        float *yb = j->y + (img * g->cout + grp * g->coutg) * hw + c0;
        prt__gemm_packed(&j->pa[grp], nb, blk_pack, (void *)&it, j->b ? j->b + grp * g->coutg : NULL, yb, hw);
        blk_epilogue(j->epi, g, j->y, yb, nb, 0, g->coutg);
    }
}

/* ---- convolutions on AVX-512 with vectors along the pixels -------------------------------
 *
 * 1x1 stride 1 unpadded: Y_g = W_g X_g with X_g the group's input channels
 * as rows (NCHW: each row contiguous) and Y_g its output channels as rows:
 * a tile of K1_MR output channels by 32 pixels is 2 * K1_MR accumulators,
 * started from the bias; per input channel k it loads 32 pixels of row k in
 * place and broadcasts the tile's weights of column k ([k][K1_MR], packed
 * once per run, rows past coutg zero), so no packing of X and no transpose
 * of Y. Tiles of 4 rows take the last output channels. Each sum is the bias
 * then one FMA per k in ascending k, as in prt__gemm_packed, so the result
 * is the same bits. Other kernels at horizontal stride 1 or 2 with fewer
 * than 32 output channels per group (kk_shape) take the same tiles inside
 * one output row, k = (c, i, j) reading input row oy * sh - ph + i * dh at
 * columns shifted by j * dw - pw in place (stride 2: twice the floats, the
 * even lanes kept), the columns outside the input masked off and rows
 * outside it skipped. The first row tile prefetches each
 * input row two tiles ahead: the rows are as many streams. */
#define K1_MR 12

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
#include <immintrin.h>
#define K1_HAVE 1
#define K1_AVX512 __attribute__((target("avx512f")))

/* The accumulators of an MR-row tile: started from the bias, one FMA per row
 * for a k (the tile's weights ak[0 .. MR) against the pixels b0, b1), and
 * stored for the rows < rows under the pixel masks. Inlined with MR a
 * constant and every index a constant, so the accumulators stay in
 * registers. */
static inline __attribute__((always_inline)) K1_AVX512 void k1_acc_init(const int MR, __m512 *c0, __m512 *c1,
                                                                       const float *bias)
{
    int r;
#pragma GCC unroll 12
    for (r = 0; r < MR; r++) c0[r] = c1[r] = _mm512_set1_ps(bias[r]);
}

static inline __attribute__((always_inline)) K1_AVX512 void k1_acc_fma(const int MR, __m512 *c0, __m512 *c1,
                                                                      const float *ak, __m512 b0, __m512 b1)
{
    int r;
#pragma GCC unroll 12
    for (r = 0; r < MR; r++) {
        const __m512 w = _mm512_set1_ps(ak[r]);
        c0[r] = _mm512_fmadd_ps(w, b0, c0[r]);
        c1[r] = _mm512_fmadd_ps(w, b1, c1[r]);
    }
}

static inline __attribute__((always_inline)) K1_AVX512 void k1_acc_store(const int MR, const __m512 *c0,
                                                                        const __m512 *c1, float *y, int64_t ldy,
                                                                        int64_t rows, __mmask16 m0, __mmask16 m1)
{
    int r;
#pragma GCC unroll 12
    for (r = 0; r < MR; r++)
        if (r < rows) {
            _mm512_mask_storeu_ps(y + r * ldy, m0, c0[r]);
            _mm512_mask_storeu_ps(y + r * ldy + 16, m1, c1[r]);
        }
}

/* Rows [0, rows) of an MR-row tile: y[r * ldy + q] for pixels q of the masks m0 (0..15), m1 (16..31). */
static inline __attribute__((always_inline)) K1_AVX512 void
k1_tile(const int MR, const float *a, const float *bias, const float *x, int64_t ldx, int64_t kn, float *y,
        int64_t ldy, int64_t rows, __mmask16 m0, __mmask16 m1, int pf)
{
    __m512 c0[K1_MR], c1[K1_MR];
    int64_t k;
    k1_acc_init(MR, c0, c1, bias);
    for (k = 0; k < kn; k++) {
        const __m512 b0 = _mm512_maskz_loadu_ps(m0, x + k * ldx), b1 = _mm512_maskz_loadu_ps(m1, x + k * ldx + 16);
        if (pf) /* the first row tile fetches this row's pixels two tiles on (each row is a stream of its own) */
            blk_prefetch(x + k * ldx, 64), blk_prefetch(x + k * ldx, 80);
        k1_acc_fma(MR, c0, c1, a + k * MR, b0, b1);
    }
    k1_acc_store(MR, c0, c1, y, ldy, rows, m0, m1);
}

static K1_AVX512 void k1_tile12(const float *a, const float *bias, const float *x, int64_t ldx, int64_t kn, float *y,
                                int64_t ldy, int64_t rows, __mmask16 m0, __mmask16 m1, int pf)
{
    k1_tile(K1_MR, a, bias, x, ldx, kn, y, ldy, rows, m0, m1, pf);
}

static K1_AVX512 void k1_tile4(const float *a, const float *bias, const float *x, int64_t ldx, int64_t kn, float *y,
                               int64_t ldy, int64_t rows, __mmask16 m0, __mmask16 m1, int pf)
{
    k1_tile(4, a, bias, x, ldx, kn, y, ldy, rows, m0, m1, pf);
}
/* A kh x kw kernel at horizontal stride SX (1 or 2): a tile of MR output
 * channels by n <= 32 pixels of output row oy from column ox0. Tap (c, i, j)
 * reads input row oy * sh - ph + i * dh of channel c (skipped when outside
 * the input) at columns ox0 * SX - pw + j * dw + SX * l for pixel l, in
 * place: 32 * SX consecutive floats loaded under masks lm[2 * SX * j ..]
 * that leave out the columns outside the input (and, at stride 2, the odd
 * ones), then at stride 2 the even lanes taken. s0, s1: the tile's pixels.
 * Weights [k][MR] with k = (c * kh + i) * kw + j, W's own order. */
static inline __attribute__((always_inline)) K1_AVX512 void
kk_tile(const int MR, const int SX, const float *a, const float *bias, const float *xg, const prt__conv_geo *g,
        int64_t oy, int64_t ox0, float *y, int64_t ldy, int64_t rows, const __mmask16 *lm, __mmask16 s0,
        __mmask16 s1, int pf)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const int64_t plane = g->h * g->w;
    __m512 c0[K1_MR], c1[K1_MR];
    int64_t c, i, jj;
    k1_acc_init(MR, c0, c1, bias);
    for (c = 0; c < g->cg; c++)
        for (i = 0; i < g->kh; i++) {
            const int64_t iy = oy * g->sh - g->ph + i * g->dh;
            /* the row's address from its column 0, through an integer: the tap's first column may be left of
             * the input (masked off), and no pointer is formed outside it */
            const uintptr_t row = (uintptr_t)(xg + c * plane + (iy >= 0 && iy < g->h ? iy * g->w : 0));
            if (iy < 0 || iy >= g->h) continue;
            if (pf) /* as k1_tile: this input row's columns two tiles on */
                __builtin_prefetch((const void *)(row + (uintptr_t)(ox0 * SX - g->pw + 64 * SX) * sizeof(float)), 0,
                                   2),
                    __builtin_prefetch(
                        (const void *)(row + (uintptr_t)(ox0 * SX - g->pw + 64 * SX + 16) * sizeof(float)), 0, 2);
            for (jj = 0; jj < g->kw; jj++) {
                const uintptr_t at = row + (uintptr_t)(ox0 * SX - g->pw + jj * g->dw) * sizeof(float);
                const __mmask16 *m = lm + 2 * SX * jj;
                const float *ak = a + ((c * g->kh + i) * g->kw + jj) * MR;
                __m512 b0, b1;
                if (SX == 1) {
                    b0 = _mm512_maskz_loadu_ps(m[0], (const void *)at);
                    b1 = _mm512_maskz_loadu_ps(m[1], (const void *)(at + 16 * sizeof(float)));
                } else {
                    b0 = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m[0], (const void *)at), even,
                                                _mm512_maskz_loadu_ps(m[1], (const void *)(at + 16 * sizeof(float))));
                    b1 = _mm512_permutex2var_ps(
                        _mm512_maskz_loadu_ps(m[2], (const void *)(at + 32 * sizeof(float))), even,
                        _mm512_maskz_loadu_ps(m[3], (const void *)(at + 48 * sizeof(float))));
                }
                k1_acc_fma(MR, c0, c1, ak, b0, b1);
            }
        }
    k1_acc_store(MR, c0, c1, y, ldy, rows, s0, s1);
}

#define KK_TILE(name, MR, SX)                                                                                      \
    static K1_AVX512 void name(const float *a, const float *bias, const float *xg, const prt__conv_geo *g,         \
                               int64_t oy, int64_t ox0, float *y, int64_t ldy, int64_t rows, const __mmask16 *lm,  \
                               __mmask16 s0, __mmask16 s1, int pf)                                                 \
    {                                                                                                              \
        kk_tile(MR, SX, a, bias, xg, g, oy, ox0, y, ldy, rows, lm, s0, s1, pf);                                    \
    }
KK_TILE(kk_tile12s1, K1_MR, 1)
KK_TILE(kk_tile4s1, 4, 1)
KK_TILE(kk_tile12s2, K1_MR, 2)
KK_TILE(kk_tile4s2, 4, 2)
#endif

/* The row tiles of coutg output channels: 12 rows while more than 8 remain, then 4 (the last padded). */
static int64_t k1_tiles(int64_t coutg, int64_t *starts, int64_t *heights)
{
    int64_t m = 0, nt = 0;
    while (m < coutg) {
        const int64_t h = coutg - m > 8 ? K1_MR : 4;
        if (starts) {
            starts[nt] = m;
            heights[nt] = h;
        }
        nt++;
        m += h;
    }
    return nt;
}

/* Floats of one group's packed weights and padded biases. */
static int64_t k1_group_floats(const prt__conv_geo *g)
{
    int64_t nt = k1_tiles(g->coutg, NULL, NULL);
    return (nt * K1_MR) * (g->kd + 1);
}

#define KK_MAXKW 15 /* widest kernel of the general tiles (a mask per column of the kernel) */

/* Other kernels take the tiles at horizontal stride 1 or 2 where the GEMM's 32-row tiles would be partly
 * padding (fewer than 32 output channels per group: a detection head's 3x3 96 -> 24, the models' first
 * layers 3 -> 8 or 16 at stride 2); with more, the GEMM measured as fast or faster. */
static int kk_shape(const prt__conv_geo *g)
{
    return !g->direct_1x1 && (g->sw == 1 || g->sw == 2) && g->kw <= KK_MAXKW && g->coutg < 32;
}

int prt__conv_k1_applies(const prt__conv_geo *g)
{
#ifdef K1_HAVE
    return prt__gemm_level() >= 2 && (g->direct_1x1 || kk_shape(g));
#else
    (void)g;
    return 0;
#endif
}

typedef struct k1_job {
    const prt__conv_geo *g;
    const float *x, *wp; /* wp: per group, the tiles' [k][h] weights, then their h biases */
    float *y;
    const prt__conv_epi *epi;
    int64_t bw, nblk, ntiles, per_group;
    int64_t osplit; /* ranges of row tiles per block (whole planes only) */
    const int64_t *starts, *heights;
} k1_job;

#ifdef K1_HAVE
static K1_AVX512 void k1_range(void *arg, int64_t begin, int64_t end)
{
    const k1_job *j = arg;
    const prt__conv_geo *g = j->g;
    const int64_t hw = g->oh * g->ow, kn = g->kd;
    int64_t t, q, ti, n;
    for (t = begin; t < end; t++) {
        /* t = ((img * groups + grp) * nblk + block) * osplit + part */
        const int64_t part = t % j->osplit, blk = t / j->osplit;
        const int64_t img = blk / (g->g * j->nblk), grp = blk / j->nblk % g->g, c0 = blk % j->nblk * j->bw;
        const int64_t nb = hw - c0 < j->bw ? hw - c0 : j->bw;
        const int64_t t0 = j->ntiles * part / j->osplit, t1 = j->ntiles * (part + 1) / j->osplit;
        const float *xin = j->x + (img * g->cin + grp * g->cg) * g->h * g->w; /* the group's first channel */
        float *yb = j->y + (img * g->cout + grp * g->coutg) * hw + c0;
        const float *wg = j->wp + grp * j->per_group;
        for (ti = 0; ti < t0; ti++) wg += j->heights[ti] * (kn + 1); /* tile t0's weights */
        for (q = 0; q < nb; q += n) {
            const float *a = wg;
            int64_t oy = 0, ox0 = 0;
            __mmask16 m0, m1;
            n = nb - q < 32 ? nb - q : 32;
            if (!g->direct_1x1) { /* general kernels: tiles inside one output row, masks per kernel column */
                __mmask16 lm[4 * KK_MAXKW];
                const int64_t sx = g->sw;
                int64_t jj, e;
                oy = (c0 + q) / g->ow;
                ox0 = (c0 + q) % g->ow;
                if (n > g->ow - ox0) n = g->ow - ox0;
                for (jj = 0; jj < g->kw; jj++) {
                    /* pixel l reads column first + sx * l: inside [0, w) for l in [lo, hi), also l < n; at
                     * stride 2 its float is raw element 2 l (the pixel bits spread to the even positions) */
                    const int64_t first = ox0 * sx - g->pw + jj * g->dw;
                    int64_t lo = first >= 0 ? 0 : (-first + sx - 1) / sx;
                    int64_t hi = g->w - 1 - first < 0 ? 0 : (g->w - 1 - first) / sx + 1;
                    uint64_t bits;
                    if (hi > n) hi = n;
                    if (lo > hi) lo = hi;
                    bits = (hi >= 32 ? 0xFFFFFFFFu : ((uint64_t)1 << hi) - 1) & ~(((uint64_t)1 << lo) - 1);
                    if (sx == 2) {
                        bits = (bits | bits << 16) & 0x0000FFFF0000FFFFull;
                        bits = (bits | bits << 8) & 0x00FF00FF00FF00FFull;
                        bits = (bits | bits << 4) & 0x0F0F0F0F0F0F0F0Full;
                        bits = (bits | bits << 2) & 0x3333333333333333ull;
                        bits = (bits | bits << 1) & 0x5555555555555555ull;
                    }
                    for (e = 0; e < 2 * sx; e++) lm[2 * sx * jj + e] = (__mmask16)(bits >> (16 * e) & 0xFFFFu);
                }
                m0 = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1);
                m1 = (__mmask16)(n >= 32 ? 0xFFFFu : n > 16 ? (1u << (n - 16)) - 1 : 0u);
                for (ti = t0; ti < t1; ti++) {
                    const int64_t h = j->heights[ti], rows = g->coutg - j->starts[ti];
                    float *yt = yb + j->starts[ti] * hw + q;
                    const int pf = ti == t0;
                    if (sx == 1 && h == K1_MR) kk_tile12s1(a, a + h * kn, xin, g, oy, ox0, yt, hw, rows, lm, m0, m1, pf);
                    else if (sx == 1) kk_tile4s1(a, a + h * kn, xin, g, oy, ox0, yt, hw, rows, lm, m0, m1, pf);
                    else if (h == K1_MR) kk_tile12s2(a, a + h * kn, xin, g, oy, ox0, yt, hw, rows, lm, m0, m1, pf);
                    else kk_tile4s2(a, a + h * kn, xin, g, oy, ox0, yt, hw, rows, lm, m0, m1, pf);
                    a += h * (kn + 1);
                }
                continue;
            }
            m0 = (__mmask16)(n >= 16 ? 0xFFFFu : (1u << n) - 1);
            m1 = (__mmask16)(n >= 32 ? 0xFFFFu : n > 16 ? (1u << (n - 16)) - 1 : 0u);
            for (ti = t0; ti < t1; ti++) {
                const int64_t h = j->heights[ti], rows = g->coutg - j->starts[ti];
                float *yt = yb + j->starts[ti] * hw + q;
                if (h == K1_MR) k1_tile12(a, a + h * kn, xin + c0 + q, hw, kn, yt, hw, rows, m0, m1, ti == t0);
                else k1_tile4(a, a + h * kn, xin + c0 + q, hw, kn, yt, hw, rows, m0, m1, ti == t0);
                a += h * (kn + 1);
            }
        }
        blk_epilogue(j->epi, g, j->y, yb, nb, j->starts[t0], t1 < j->ntiles ? j->starts[t1] : g->coutg);
    }
}
#endif

static size_t k1_workspace(const prt__conv_geo *g)
{
    const int64_t nt = k1_tiles(g->coutg, NULL, NULL);
    return (size_t)(2 * nt) * sizeof(int64_t) + (size_t)(g->g * k1_group_floats(g)) * sizeof(float) + 64;
}

static void k1_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                   const prt__conv_epi *epi, prt_exec *ex)
{
#ifdef K1_HAVE
    const int64_t hw = g->oh * g->ow, threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1, kn = g->kd;
    int64_t *starts = ws, *heights, grp, ti, k, r, items;
    float *wp;
    k1_job j;
    memset(&j, 0, sizeof j);
    j.ntiles = k1_tiles(g->coutg, NULL, NULL);
    heights = starts + j.ntiles;
    wp = (float *)(void *)((char *)ws + (((size_t)(2 * j.ntiles) * sizeof(int64_t) + 63) / 64 * 64));
    k1_tiles(g->coutg, starts, heights);
    j.per_group = k1_group_floats(g);
    for (grp = 0; grp < g->g; grp++) {
        float *a = wp + grp * j.per_group;
        for (ti = 0; ti < j.ntiles; ti++) {
            const int64_t h = heights[ti];
            for (r = 0; r < h; r++) { /* W's rows read in order */
                const int64_t oc = starts[ti] + r;
                const float *wr = w + (grp * g->coutg + oc) * kn;
                for (k = 0; k < kn; k++) a[k * h + r] = oc < g->coutg ? wr[k] : 0.0f;
            }
            for (r = 0; r < h; r++) {
                const int64_t oc = starts[ti] + r;
                a[kn * h + r] = oc < g->coutg && b ? b[grp * g->coutg + oc] : 0.0f;
            }
            a += h * (kn + 1);
        }
    }
    j.g = g;
    j.x = x;
    j.wp = wp;
    j.y = y;
    j.epi = epi;
    j.starts = starts;
    j.heights = heights;
    /* Whole planes per block where they fit one, split into ranges of row tiles while there are too few
     * items for the threads (the epilogue then still gets whole planes); else column blocks. */
    j.osplit = 1;
    if (hw <= BLK_W && g->n * g->g < 4 * threads) {
        j.bw = hw > 0 ? hw : 1;
        j.nblk = 1;
        j.osplit = (4 * threads + g->n * g->g - 1) / (g->n * g->g);
        if (j.osplit > j.ntiles) j.osplit = j.ntiles;
        items = g->n * g->g * j.osplit;
    } else {
        items = blk_split(g, threads, &j.bw, &j.nblk);
    }
    if (items <= 0) return;
    if (threads == 1 || items == 1 || g->n * g->cout * hw * (g->kd + 1) < 131072) k1_range(&j, 0, items);
    else ex->parallel_for(ex, items, 1, k1_range, &j);
#else
    (void)g; (void)x; (void)w; (void)b; (void)y; (void)ws; (void)epi; (void)ex;
#endif
}

/* Workspace: the tap table, the groups' packing records, the packed weights. */
static void blk_layout(const prt__conv_geo *g, int64_t *taps_b, int64_t *pa_b, int64_t *per_group)
{
    *taps_b = blk_align((int64_t)sizeof(blk_tap) * (g->kd > 0 ? g->kd : 1));
    *pa_b = blk_align((int64_t)sizeof(prt__gemm_pa) * g->g);
    *per_group = (int64_t)prt__gemm_pack_a_floats(g->coutg, g->kd);
}

size_t prt__conv_blk_workspace(const prt__conv_geo *g)
{
    int64_t tb, pb, per;
    /* either path may run where the plan is loaded (the CPU decides): room for both */
    size_t blk, k1 = g->direct_1x1 || kk_shape(g) ? k1_workspace(g) : 0;
    blk_layout(g, &tb, &pb, &per);
    blk = (size_t)(tb + pb) + (size_t)(g->g * per) * sizeof(float);
    return blk > k1 ? blk : k1;
}

void prt__conv_blk_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                       const prt__conv_epi *epi, prt_exec *ex)
{
    const int64_t hw = g->oh * g->ow, threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1;
    int64_t tb, pb, per, k, grp, items;
    blk_tap *taps = ws;
    prt__gemm_pa *pa;
    float *ap;
    blk_job j;
    if (prt__conv_k1_applies(g)) {
        k1_run(g, x, w, b, y, ws, epi, ex);
        return;
    }
    blk_layout(g, &tb, &pb, &per);
    pa = (prt__gemm_pa *)((char *)ws + tb);
    ap = (float *)((char *)ws + tb + pb);
    memset(&j, 0, sizeof j);
    for (k = 0; k < g->kd; k++) {
        const int64_t c = k / (g->kh * g->kw), i = k / g->kw % g->kh, jj = k % g->kw;
        blk_tap *t = &taps[k];
        t->xoff = c * g->h * g->w;
        t->dy = i * g->dh - g->ph;
        t->dx = jj * g->dw - g->pw;
        t->at = t->xoff + t->dy * g->w + t->dx;
        t->oxlo = t->dx >= 0 ? 0 : (-t->dx + g->sw - 1) / g->sw;
        t->oxhi = g->w - 1 - t->dx >= 0 ? (g->w - 1 - t->dx) / g->sw + 1 : 0;
        if (t->oxlo > g->ow) t->oxlo = g->ow;
        if (t->oxhi > g->ow) t->oxhi = g->ow;
    }
    for (grp = 0; grp < g->g; grp++)
        prt__gemm_pack_a(g->coutg, g->kd, w + grp * g->coutg * g->kd, g->kd, 1, ap + grp * per, &pa[grp]);
    j.g = g;
    j.x = x;
    j.b = b;
    j.y = y;
    j.pa = pa;
    j.taps = taps;
    j.epi = epi;
    items = blk_split(g, threads, &j.bw, &j.nblk);
    if (items <= 0) return;
    if (threads == 1 || items == 1 || g->n * g->cout * hw * (g->kd + 1) < 131072) blk_range(&j, 0, items);
    else ex->parallel_for(ex, items, 1, blk_range, &j);
}

/* ---- ConvTranspose without overlapping taps ------------------------------------------ */

#define TR_SLOTS 8 /* lanes, each with its own column buffer */

typedef struct tr_job {
    const prt__conv_geo *g;
    const float *x, *b;
    float *y, *slots;       /* TR_SLOTS buffers of kd * BLK_W floats */
    const prt__gemm_pa *pa; /* W_g^T per group */
    int64_t nblk, lanes, items;
} tr_job;

typedef struct tr_item {
    const float *xg;
    int64_t hw, c0;
} tr_item;

/* dst[kk * mr + q] = X_g[k0 + kk][c0 + n0 + q], or ptrs[kk] = that row of X_g (1 returned). */
static int tr_pack(void *arg, int64_t k0, int64_t kc, int64_t n0, int64_t nw, int64_t mr, float *dst,
                   const float **ptrs)
{
    const tr_item *it = arg;
    int64_t kk, q;
    if (ptrs) {
        for (kk = 0; kk < kc; kk++) {
            ptrs[kk] = it->xg + (k0 + kk) * it->hw + it->c0 + n0;
            blk_prefetch(ptrs[kk], 2 * mr);
        }
        return 1;
    }
    for (kk = 0; kk < kc; kk++) {
        const float *src = it->xg + (k0 + kk) * it->hw + it->c0 + n0;
        if (nw == 32) memcpy(dst + kk * mr, src, 32 * sizeof(float));
        else memcpy(dst + kk * mr, src, (size_t)nw * sizeof(float));
        blk_prefetch(src, 2 * mr);
        for (q = nw; q < mr; q++) dst[kk * mr + q] = 0;
    }
    return 0;
}

/* Each input pixel's kh x kw taps land on distinct output pixels no other input pixel reaches: write them. */
static void tr_scatter(const tr_job *j, const float *col, int64_t img, int64_t grp, int64_t c0, int64_t nb)
{
    const prt__conv_geo *g = j->g;
    int64_t r, q, ix;
    for (r = 0; r < g->kd; r++) { /* r = (co * kh + i) * kw + jj */
        const int64_t co = grp * g->coutg + r / (g->kh * g->kw), i = r / g->kw % g->kh, jj = r % g->kw;
        const int64_t dy = i * g->dh - g->ph, dx = jj * g->dw - g->pw;
        /* the input columns whose ox = ix * sw + dx lies in [0, ow) */
        const int64_t ixlo = dx >= 0 ? 0 : (-dx + g->sw - 1) / g->sw;
        const int64_t ixhi = g->ow - 1 - dx >= 0 ? (g->ow - 1 - dx) / g->sw + 1 : 0;
        const float *src = col + r * nb;
        float *yc = j->y + (img * g->cout + co) * g->oh * g->ow;
        const float bias = j->b ? j->b[co] : 0.0f;
        int64_t iy = c0 / g->w, ix0 = c0 % g->w;
        for (q = 0; q < nb; iy++, ix0 = 0) { /* one input row's run at a time */
            const int64_t run = nb - q < g->w - ix0 ? nb - q : g->w - ix0, oy = iy * g->sh + dy;
            const int64_t a = ix0 > ixlo ? ix0 : ixlo, e = ix0 + run < ixhi ? ix0 + run : ixhi;
            if (oy >= 0 && oy < g->oh) {
                float *yr = yc + oy * g->ow;
                const float *sr = src + q;
                for (ix = a; ix < e; ix++) yr[ix * g->sw + dx] = sr[ix - ix0] + bias;
            }
            q += run;
        }
    }
}

/* Lane l runs items l, l + lanes, ... in its own buffer. */
static void tr_lanes(void *arg, int64_t begin, int64_t end)
{
    const tr_job *j = arg;
    const prt__conv_geo *g = j->g;
    const int64_t hw = g->h * g->w;
    int64_t l, t;
    for (l = begin; l < end; l++) {
        float *col = j->slots + l * g->kd * BLK_W;
        for (t = l; t < j->items; t += j->lanes) {
            const int64_t img = t / (g->g * j->nblk), grp = t / j->nblk % g->g, c0 = t % j->nblk * BLK_W;
            const int64_t nb = hw - c0 < BLK_W ? hw - c0 : BLK_W;
            const tr_item it = {j->x + (img * g->cin + grp * g->cg) * hw, hw, c0};
            prt__gemm_packed(&j->pa[grp], nb, tr_pack, (void *)&it, NULL, col, nb);
            tr_scatter(j, col, img, grp, c0, nb);
        }
    }
}

int prt__conv_tr_applies(const prt__conv_geo *g)
{
    return g->sh >= (g->kh - 1) * g->dh + 1 && g->sw >= (g->kw - 1) * g->dw + 1;
}

static void tr_layout(const prt__conv_geo *g, int64_t *pa_b, int64_t *per_group)
{
    *pa_b = blk_align((int64_t)sizeof(prt__gemm_pa) * g->g);
    *per_group = (int64_t)prt__gemm_pack_a_floats(g->kd, g->cg);
}

size_t prt__conv_tr_workspace(const prt__conv_geo *g)
{
    int64_t pb, per;
    tr_layout(g, &pb, &per);
    return (size_t)pb + (size_t)(g->g * per + TR_SLOTS * g->kd * BLK_W) * sizeof(float);
}

void prt__conv_tr_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                      prt_exec *ex)
{
    const int64_t threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1, ohw = g->oh * g->ow;
    /* every output pixel is reached exactly once: no fill first */
    const int full = g->sh == g->kh && (g->kh == 1 || g->dh == 1) && g->sw == g->kw && (g->kw == 1 || g->dw == 1) &&
                     g->ph == 0 && g->pw == 0 && g->oh == g->h * g->sh && g->ow == g->w * g->sw;
    int64_t pb, per, grp, i, c;
    float *ap;
    tr_job j;
    tr_layout(g, &pb, &per);
    memset(&j, 0, sizeof j);
    j.g = g;
    j.x = x;
    j.b = b;
    j.y = y;
    j.pa = (prt__gemm_pa *)ws;
    ap = (float *)((char *)ws + pb);
    j.slots = ap + g->g * per;
    for (grp = 0; grp < g->g; grp++) /* A = W_g^T: element (r, c) at w[(grp * cg + c) * kd + r] */
        prt__gemm_pack_a(g->kd, g->cg, w + grp * g->cg * g->kd, 1, g->kd, ap + grp * per, (prt__gemm_pa *)&j.pa[grp]);
    if (!full)
        for (i = 0; i < g->n * g->cout; i++) {
            const float bias = b ? b[i % g->cout] : 0.0f;
            for (c = 0; c < ohw; c++) y[i * ohw + c] = bias;
        }
    j.nblk = (g->h * g->w + BLK_W - 1) / BLK_W;
    j.items = g->n * g->g * j.nblk;
    j.lanes = threads < TR_SLOTS ? threads : TR_SLOTS;
    if (j.lanes > j.items) j.lanes = j.items;
    if (j.lanes <= 1) tr_lanes(&j, 0, 1);
    else ex->parallel_for(ex, j.lanes, 1, tr_lanes, &j);
}
