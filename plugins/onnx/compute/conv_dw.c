/*
 * onnx/compute/conv_dw.c - direct depthwise convolution, fp32.
 *
 * Per output row: the kh input rows it reads (a row of zeros in the
 * workspace stands for rows outside the input, so no kernel row is
 * skipped), then the row in three parts: the left and right borders, where
 * some taps fall outside the input, bounds-checked per tap; the interior,
 * where every tap is inside, with no checks. The interior kernel runs over
 * output x with AVX-512 (16 outputs a step, masked at the end; stride 2
 * picks the even lanes of two loads) for any kernel size, unrolled for
 * 3x3 and 5x5; strides above 2 and CPUs without AVX-512 take a plain loop.
 * The bias starts every accumulator. Work items are (image, channel) planes,
 * split into row ranges when there are fewer planes than four per thread.
 */
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "conv.h"

typedef void (*dw_row_fn)(float *y, const float *const *rows, const float *wk, float bias, int64_t lo, int64_t hi,
                          const prt__conv_geo *g);

/* Output columns [from, to) of one row, each over the taps that fall inside the input row. */
static void dw_border(float *y, const float *const *rows, const float *wk, float bias, int64_t from, int64_t to,
                      const prt__conv_geo *g)
{
    int64_t ox, i, jj;
    for (ox = from; ox < to; ox++) {
        const int64_t base = ox * g->sw - g->pw; /* ix of tap jj: base + jj * dw */
        const int64_t j0 = base >= 0 ? 0 : (-base + g->dw - 1) / g->dw;
        int64_t j1 = g->w - 1 - base < 0 ? 0 : (g->w - 1 - base) / g->dw + 1;
        float acc = bias;
        if (j1 > g->kw) j1 = g->kw;
        for (i = 0; i < g->kh; i++)
            for (jj = j0; jj < j1; jj++) acc += rows[i][base + jj * g->dw] * wk[i * g->kw + jj];
        y[ox] = acc;
    }
}

/* Interior columns [lo, hi), portable. */
static void dw_row_c(float *y, const float *const *rows, const float *wk, float bias, int64_t lo, int64_t hi,
                     const prt__conv_geo *g)
{
    int64_t ox, i, jj;
    for (ox = lo; ox < hi; ox++) {
        const int64_t base = ox * g->sw - g->pw;
        float acc = bias;
        for (i = 0; i < g->kh; i++) {
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
           int64_t kw, int64_t s, int64_t dil, int64_t pw)
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
        __m512 acc = _mm512_set1_ps(bias);
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
                               int64_t hi, const prt__conv_geo *g)                                               \
    {                                                                                                            \
        dw_row_512(y, rows, wk, bias, lo, hi, KH, KW, S, g->dw, g->pw);                                          \
    }
DW_ROW_512(dw_row_512_3s1, 3, 3, 1)
DW_ROW_512(dw_row_512_3s2, 3, 3, 2)
DW_ROW_512(dw_row_512_5s1, 5, 5, 1)
DW_ROW_512(dw_row_512_5s2, 5, 5, 2)
DW_ROW_512(dw_row_512_s1, g->kh, g->kw, 1)
DW_ROW_512(dw_row_512_s2, g->kh, g->kw, 2)
#endif

static dw_row_fn dw_pick(const prt__conv_geo *g)
{
#ifdef DW_HAVE_X86
    if (prt__gemm_level() >= 2 && (g->sw == 1 || g->sw == 2)) {
        const int s2 = g->sw == 2;
        if (g->kh == 3 && g->kw == 3) return s2 ? dw_row_512_3s2 : dw_row_512_3s1;
        if (g->kh == 5 && g->kw == 5) return s2 ? dw_row_512_5s2 : dw_row_512_5s1;
        return s2 ? dw_row_512_s2 : dw_row_512_s1;
    }
#endif
    (void)g;
    return dw_row_c;
}

typedef struct dw_job {
    const prt__conv_geo *g;
    const float *x, *w, *b, *zero;
    float *y;
    const prt__conv_epi *epi;
    dw_row_fn row;
    int64_t split;  /* row ranges per plane */
    int64_t lo, hi; /* interior output columns */
} dw_job;

static void dw_range(void *arg, int64_t begin, int64_t end)
{
    const dw_job *j = arg;
    const prt__conv_geo *g = j->g;
    const float *rows[PRT__CONV_DW_MAXKH];
    int64_t t, oy, i;
    for (t = begin; t < end; t++) {
        const int64_t plane = t / j->split, part = t % j->split; /* plane = n * cout + c */
        const int64_t c = plane % g->cout, img = plane / g->cout;
        const int64_t oy0 = g->oh * part / j->split, oy1 = g->oh * (part + 1) / j->split;
        const float *xc = j->x + (img * g->cin + c / g->coutg) * g->h * g->w, *wc = j->w + c * g->kh * g->kw;
        float *yc = j->y + plane * g->oh * g->ow;
        const float bias = j->b ? j->b[c] : 0.0f;
        int64_t epi_from = (yc + oy0 * g->ow) - j->y; /* rows not yet through the epilogue start here */
        for (oy = oy0; oy < oy1; oy++) {
            float *yr = yc + oy * g->ow;
            for (i = 0; i < g->kh; i++) {
                const int64_t iy = oy * g->sh - g->ph + i * g->dh;
                rows[i] = iy >= 0 && iy < g->h ? xc + iy * g->w : j->zero;
            }
            dw_border(yr, rows, wc, bias, 0, j->lo, g);
            if (j->hi > j->lo) j->row(yr, rows, wc, bias, j->lo, j->hi, g);
            dw_border(yr, rows, wc, bias, j->hi, g->ow, g);
            /* the epilogue over a few rows at a time: still in cache, fewer calls for narrow rows */
            if (j->epi && j->epi->fn && (yr + g->ow - j->y - epi_from >= 2048 || oy + 1 == oy1)) {
                j->epi->fn(j->epi->arg, j->y, epi_from, yr + g->ow - j->y);
                epi_from = yr + g->ow - j->y;
            }
        }
    }
}

size_t prt__conv_dw_workspace(const prt__conv_geo *g)
{
    return (size_t)(g->w > 0 ? g->w : 1) * sizeof(float);
}

void prt__conv_dw_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                      const prt__conv_epi *epi, prt_exec *ex)
{
    dw_job j;
    const int64_t planes = g->n * g->cout, threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1;
    const int64_t span = (g->kw - 1) * g->dw; /* input columns one output reads, less one */
    int64_t items;
    memset(&j, 0, sizeof j);
    j.g = g;
    j.x = x;
    j.w = w;
    j.b = b;
    j.y = y;
    j.zero = ws;
    j.epi = epi;
    j.row = dw_pick(g);
    /* interior: ox * sw - pw >= 0 and ox * sw - pw + span <= w - 1 */
    j.lo = (g->pw + g->sw - 1) / g->sw;
    j.hi = g->w - 1 - span + g->pw >= 0 ? (g->w - 1 - span + g->pw) / g->sw + 1 : 0;
    if (j.lo > g->ow) j.lo = g->ow;
    if (j.hi > g->ow) j.hi = g->ow;
    if (j.hi < j.lo) j.hi = j.lo;
    j.split = planes >= 4 * threads ? 1 : (4 * threads + planes - 1) / planes;
    if (j.split > g->oh) j.split = g->oh > 0 ? g->oh : 1;
    memset(ws, 0, prt__conv_dw_workspace(g));
    items = planes * j.split;
    if (items <= 0) return;
    if (threads == 1 || planes * g->oh * g->ow * g->kh * g->kw < 65536) dw_range(&j, 0, items);
    else ex->parallel_for(ex, items, 1, dw_range, &j);
}
