/*
 * onnx/compute/conv_dw.c - direct convolution, fp32: depthwise, and
 * convolutions with few output channels per group (conv.h says which), an
 * output row being the sum over the group's input channels of one input
 * channel's 2-D correlation (the first channel starts from the bias, the
 * others add to the row, which stays in L1: items are split into row ranges
 * of at most 4096 outputs).
 *
 * Per output row: the kernel rows whose input rows lie inside the input
 * (the others are skipped, so on maps a few rows tall most of the work is
 * not spent on zeros), then the row in three parts: the left and right
 * borders, where some taps fall outside the input, bounds-checked per tap;
 * the interior, where every tap is inside, with no checks. Where the borders
 * would cost more than a copy (narrow rows), the item's input rows are first
 * copied into a stack buffer with zero columns on both sides, and the
 * whole row is interior. The interior kernel runs over output x with
 * AVX-512 (16 outputs a step, masked at the end; stride 2 picks the even
 * lanes of two loads) for any kernel size, unrolled for 3x3 and 5x5 and
 * each count of their rows; strides above 2 and CPUs without AVX-512 take a
 * plain loop. The bias starts every accumulator. Work items are (image,
 * channel) planes, split into row ranges when there are fewer planes than
 * four per thread; the epilogue runs on a few thousand outputs at a time,
 * across rows and planes of one range.
 */
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "conv.h"

/* Output columns [lo, hi) of one row from nr kernel rows (rows[i], weights
 * wk[i * kw ..]), each sum started from the bias, or from y when accum (the
 * second and later input channels of a group); the unrolled kernels have nr
 * built in. */
typedef void (*dw_row_fn)(float *y, const float *const *rows, const float *wk, float bias, int64_t lo, int64_t hi,
                          int64_t nr, int accum, const prt__conv_geo *g);

#define DW_PAD_MAX 6144 /* floats of the padded copy of an item's input rows, on the stack */

/* Output columns [from, to) of one row, each over the taps that fall inside the input row. */
static void dw_border(float *y, const float *const *rows, const float *wk, float bias, int64_t from, int64_t to,
                      int64_t nr, int accum, const prt__conv_geo *g)
{
    int64_t ox, i, jj;
    for (ox = from; ox < to; ox++) {
        const int64_t base = ox * g->sw - g->pw; /* ix of tap jj: base + jj * dw */
        const int64_t j0 = base >= 0 ? 0 : (-base + g->dw - 1) / g->dw;
        int64_t j1 = g->w - 1 - base < 0 ? 0 : (g->w - 1 - base) / g->dw + 1;
        float acc = accum ? y[ox] : bias;
        if (j1 > g->kw) j1 = g->kw;
        for (i = 0; i < nr; i++)
            for (jj = j0; jj < j1; jj++) acc += rows[i][base + jj * g->dw] * wk[i * g->kw + jj];
        y[ox] = acc;
    }
}

/* Interior columns [lo, hi), portable. */
static void dw_row_c(float *y, const float *const *rows, const float *wk, float bias, int64_t lo, int64_t hi,
                     int64_t nr, int accum, const prt__conv_geo *g)
{
    int64_t ox, i, jj;
    for (ox = lo; ox < hi; ox++) {
        const int64_t base = ox * g->sw - g->pw;
        float acc = accum ? y[ox] : bias;
        for (i = 0; i < nr; i++) {
            const float *r = rows[i] + base;
            for (jj = 0; jj < g->kw; jj++) acc += r[jj * g->dw] * wk[i * g->kw + jj];
        }
        y[ox] = acc;
    }
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
#include <immintrin.h>
#define DW_HAVE_X86 1
#define DW_AVX512 __attribute__((target("avx512f")))
#define DW_MAXK 49 /* taps held as broadcast vectors; larger kernels broadcast per step */

/* Interior columns [lo, hi) for kernel kh x kw and horizontal stride s
 * (1 or 2); constants when inlined into the wrappers below. */
static inline __attribute__((always_inline)) DW_AVX512 void
dw_row_512(float *y, const float *const *rows, const float *wk, float bias, int64_t lo, int64_t hi, int64_t kh,
           int64_t kw, int64_t s, int64_t dil, int64_t pw, int accum)
{
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    __m512 wv[DW_MAXK];
    const int held = kh * kw <= DW_MAXK;
    int64_t ox, i, jj;
    if (held) {
#pragma GCC unroll 25
        for (i = 0; i < kh * kw; i++) wv[i] = _mm512_set1_ps(wk[i]);
    }
    for (ox = lo; ox < hi; ox += 16) {
        const int64_t n = hi - ox < 16 ? hi - ox : 16, need = 2 * n - 1;
        const __mmask16 m = (__mmask16)((1u << n) - 1);
        const __mmask16 m0 = (__mmask16)(need >= 16 ? 0xFFFFu : (1u << need) - 1);
        const __mmask16 m1 = (__mmask16)(need > 16 ? (1u << (need - 16)) - 1 : 0u);
        __m512 acc = accum ? _mm512_maskz_loadu_ps(m, y + ox) : _mm512_set1_ps(bias);
#pragma GCC unroll 5
        for (i = 0; i < kh; i++) {
            const float *r = rows[i] + ox * s - pw;
#pragma GCC unroll 5
            for (jj = 0; jj < kw; jj++) {
                const float *p = r + jj * dil;
                const __m512 w = held ? wv[i * kw + jj] : _mm512_set1_ps(wk[i * kw + jj]);
                __m512 v;
                if (s == 1)
                    v = _mm512_maskz_loadu_ps(m, p);
                else
                    v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m0, p), even, _mm512_maskz_loadu_ps(m1, p + 16));
                acc = _mm512_fmadd_ps(v, w, acc);
            }
        }
        _mm512_mask_storeu_ps(y + ox, m, acc);
    }
}

#define DW_ROW_512(name, KH, KW, S)                                                                              \
    static DW_AVX512 void name(float *y, const float *const *rows, const float *wk, float bias, int64_t lo,      \
                               int64_t hi, int64_t nr, int accum, const prt__conv_geo *g)                        \
    {                                                                                                            \
        (void)nr;                                                                                                \
        dw_row_512(y, rows, wk, bias, lo, hi, KH, KW, S, g->dw, g->pw, accum);                                   \
    }
/* kw 3 and 5 with each count of kernel rows (nr = kh for rows inside the input) */
#define DW_ROWS_512(KW, NR) DW_ROW_512(dw_row_512_##KW##x##NR##s1, NR, KW, 1) DW_ROW_512(dw_row_512_##KW##x##NR##s2, NR, KW, 2)
DW_ROWS_512(3, 1) DW_ROWS_512(3, 2) DW_ROWS_512(3, 3)
DW_ROWS_512(5, 1) DW_ROWS_512(5, 2) DW_ROWS_512(5, 3) DW_ROWS_512(5, 4) DW_ROWS_512(5, 5)
static const dw_row_fn dw_512_k3[2][4] = {{NULL, dw_row_512_3x1s1, dw_row_512_3x2s1, dw_row_512_3x3s1},
                                          {NULL, dw_row_512_3x1s2, dw_row_512_3x2s2, dw_row_512_3x3s2}};
static const dw_row_fn dw_512_k5[2][6] = {
    {NULL, dw_row_512_5x1s1, dw_row_512_5x2s1, dw_row_512_5x3s1, dw_row_512_5x4s1, dw_row_512_5x5s1},
    {NULL, dw_row_512_5x1s2, dw_row_512_5x2s2, dw_row_512_5x3s2, dw_row_512_5x4s2, dw_row_512_5x5s2}};

static DW_AVX512 void dw_row_512_s1(float *y, const float *const *rows, const float *wk, float bias, int64_t lo,
                                    int64_t hi, int64_t nr, int accum, const prt__conv_geo *g)
{
    dw_row_512(y, rows, wk, bias, lo, hi, nr, g->kw, 1, g->dw, g->pw, accum);
}
static DW_AVX512 void dw_row_512_s2(float *y, const float *const *rows, const float *wk, float bias, int64_t lo,
                                    int64_t hi, int64_t nr, int accum, const prt__conv_geo *g)
{
    dw_row_512(y, rows, wk, bias, lo, hi, nr, g->kw, 2, g->dw, g->pw, accum);
}
#endif

/* The interior kernel for nr of the kernel's rows. */
static dw_row_fn dw_pick(const prt__conv_geo *g, int64_t nr)
{
#ifdef DW_HAVE_X86
    if (prt__gemm_level() >= 2 && (g->sw == 1 || g->sw == 2)) {
        const int s2 = g->sw == 2;
        if (g->kh == 3 && g->kw == 3) return dw_512_k3[s2][nr];
        if (g->kh == 5 && g->kw == 5) return dw_512_k5[s2][nr];
        return s2 ? dw_row_512_s2 : dw_row_512_s1;
    }
#endif
    (void)g;
    (void)nr;
    return dw_row_c;
}

typedef struct dw_job {
    const prt__conv_geo *g;
    const float *x, *w, *b;
    float *y;
    const prt__conv_epi *epi;
    dw_row_fn row[PRT__CONV_DW_MAXKH + 1]; /* by the count of kernel rows inside the input */
    int64_t split;  /* row ranges per plane */
    int64_t lo, hi; /* interior output columns */
    int64_t pitch;  /* > 0: rows are copied into a padded buffer of this many floats a row */
} dw_job;

/* Kernel rows [i0, i1) of output row oy whose input rows lie inside the input. */
static void dw_rows_inside(const prt__conv_geo *g, int64_t oy, int64_t *i0, int64_t *i1)
{
    const int64_t base = oy * g->sh - g->ph; /* iy of kernel row i: base + i * dh */
    int64_t a = base >= 0 ? 0 : (-base + g->dh - 1) / g->dh;
    int64_t b = g->h - 1 - base < 0 ? 0 : (g->h - 1 - base) / g->dh + 1;
    if (b > g->kh) b = g->kh;
    if (a > b) a = b;
    *i0 = a;
    *i1 = b;
}

static void dw_range(void *arg, int64_t begin, int64_t end)
{
    const dw_job *j = arg;
    const prt__conv_geo *g = j->g;
    const float *rows[PRT__CONV_DW_MAXKH];
    float pad[DW_PAD_MAX];
    int64_t t, oy, i, ox, ci, epi_from = -1, epi_to = -1;
    for (t = begin; t < end; t++) {
        const int64_t plane = t / j->split, part = t % j->split; /* plane = n * cout + c */
        const int64_t c = plane % g->cout, img = plane / g->cout;
        const int64_t oy0 = g->oh * part / j->split, oy1 = g->oh * (part + 1) / j->split;
        float *yc = j->y + plane * g->oh * g->ow;
        const float bias = j->b ? j->b[c] : 0.0f;
        if (oy1 <= oy0) continue;
        if (epi_from < 0) epi_from = (yc + oy0 * g->ow) - j->y; /* outputs not yet through the epilogue */
        for (ci = 0; ci < g->cg; ci++) { /* the group's input channels, summed into the rows in turn */
            const float *xc = j->x + (img * g->cin + (c / g->coutg) * g->cg + ci) * g->h * g->w;
            const float *wc = j->w + (c * g->cg + ci) * g->kh * g->kw;
            const float *src = xc; /* input row iy is src + (iy - iy_at) * pitch */
            int64_t pitch = g->w, iy_at = 0, lo = j->lo, hi = j->hi;
            if (j->pitch > 0) {
                /* the input rows this item reads, with zero columns around them: every column is interior */
                int64_t iy0 = oy0 * g->sh - g->ph, iy1 = (oy1 - 1) * g->sh - g->ph + (g->kh - 1) * g->dh + 1, iy;
                if (iy0 < 0) iy0 = 0;
                if (iy1 > g->h) iy1 = g->h;
                for (iy = iy0; iy < iy1; iy++) {
                    float *d = pad + (iy - iy0) * j->pitch;
                    memset(d, 0, (size_t)g->pw * sizeof *d);
                    memcpy(d + g->pw, xc + iy * g->w, (size_t)g->w * sizeof *d);
                    memset(d + g->pw + g->w, 0, (size_t)(j->pitch - g->pw - g->w) * sizeof *d);
                }
                src = pad + g->pw;
                pitch = j->pitch;
                iy_at = iy0;
                lo = 0;
                hi = g->ow;
            }
            for (oy = oy0; oy < oy1; oy++) {
                float *yr = yc + oy * g->ow;
                int64_t i0, i1, nr;
                dw_rows_inside(g, oy, &i0, &i1);
                nr = i1 - i0;
                if (nr == 0) { /* every tap outside the input */
                    if (ci == 0)
                        for (ox = 0; ox < g->ow; ox++) yr[ox] = bias;
                    continue;
                }
                for (i = 0; i < nr; i++) rows[i] = src + (oy * g->sh - g->ph + (i0 + i) * g->dh - iy_at) * pitch;
                if (lo > 0) dw_border(yr, rows, wc + i0 * g->kw, bias, 0, lo, nr, ci > 0, g);
                if (hi > lo) j->row[nr](yr, rows, wc + i0 * g->kw, bias, lo, hi, nr, ci > 0, g);
                if (hi < g->ow) dw_border(yr, rows, wc + i0 * g->kw, bias, hi, g->ow, nr, ci > 0, g);
            }
        }
        /* the epilogue over a few thousand outputs at a time: still in cache, few calls for small items (the
         * items of one range are consecutive pieces of y) */
        epi_to = yc + oy1 * g->ow - j->y;
        if (j->epi && j->epi->fn && epi_to - epi_from >= 4096) {
            j->epi->fn(j->epi->arg, j->y, epi_from, epi_to);
            epi_from = epi_to;
        }
    }
    if (j->epi && j->epi->fn && epi_from >= 0 && epi_to > epi_from) j->epi->fn(j->epi->arg, j->y, epi_from, epi_to);
}

size_t prt__conv_dw_workspace(const prt__conv_geo *g)
{
    (void)g;
    return 0;
}

void prt__conv_dw_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                      const prt__conv_epi *epi, prt_exec *ex)
{
    dw_job j;
    const int64_t planes = g->n * g->cout, threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1;
    const int64_t span = (g->kw - 1) * g->dw; /* input columns one output reads, less one */
    int64_t items, nr, border;
    (void)ws;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.x = x;
    j.w = w;
    j.b = b;
    j.y = y;
    j.epi = epi;
    for (nr = 1; nr <= g->kh; nr++) j.row[nr] = dw_pick(g, nr);
    /* interior: ox * sw - pw >= 0 and ox * sw - pw + span <= w - 1 */
    j.lo = (g->pw + g->sw - 1) / g->sw;
    j.hi = g->w - 1 - span + g->pw >= 0 ? (g->w - 1 - span + g->pw) / g->sw + 1 : 0;
    if (j.lo > g->ow) j.lo = g->ow;
    if (j.hi > g->ow) j.hi = g->ow;
    if (j.hi < j.lo) j.hi = j.lo;
    j.split = planes >= 4 * threads ? 1 : (4 * threads + planes - 1) / planes;
    /* several input channels are summed into an item's rows: keep them in L1 */
    if (g->cg > 1 && (g->oh * g->ow + 4095) / 4096 > j.split) j.split = (g->oh * g->ow + 4095) / 4096;
    if (j.split > g->oh) j.split = g->oh > 0 ? g->oh : 1;
    /* Padded copies where the borders' checked taps would cost more than copying the rows (16 floats a
     * step) and the rows of one item fit the stack buffer. */
    border = (g->ow - (j.hi - j.lo)) * g->kh * g->kw;
    if (border > 0 && border * 16 >= g->w) {
        int64_t pitch = (g->ow - 1) * g->sw + span + 1, need;
        const int64_t rows_out = (g->oh + j.split - 1) / j.split;
        if (pitch < g->pw + g->w) pitch = g->pw + g->w;
        need = (rows_out - 1) * g->sh + (g->kh - 1) * g->dh + 1;
        if (need > g->h) need = g->h;
        if (need * pitch <= DW_PAD_MAX) j.pitch = pitch;
    }
    items = planes * j.split;
    if (items <= 0) return;
    if (threads == 1 || planes * g->oh * g->ow * g->cg * g->kh * g->kw < 65536) dw_range(&j, 0, items);
    else ex->parallel_for(ex, items, 1, dw_range, &j);
}
