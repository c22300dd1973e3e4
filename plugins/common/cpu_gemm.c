/*
 * common/cpu_gemm.c - the register-blocked fp32 GEMM micro-kernels of the
 * CPU plugins (portable C, AVX2 + FMA, AVX-512; picked at run time) and a
 * general strided sgemm built on them. ModulatedDeformConv2d feeds the
 * kernels from its fused bilinear gather; the ONNX MatMul, Gemm and
 * ConvTranspose plugins go through prt__sgemm, Conv through the packed-A
 * driver (prt__gemm_packed), whose B panels come from a callback.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_gemm.h"

/* ---- portable C: 16 x 4 ------------------------------------------------------ */

void prt__gemm_c_16x4(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                        int64_t ldc, int first)
{
    float acc[PRT_GEMM_C_NR][16];
    int64_t k, j, i;
    for (j = 0; j < PRT_GEMM_C_NR; j++)
        for (i = 0; i < 16; i++) acc[j][i] = first ? 0.0f : c[j * ldc + i];
    for (k = 0; k < kc; k++)
        for (j = 0; j < PRT_GEMM_C_NR; j++) {
            const float bv = b[j * PRT_GEMM_KC + k];
            for (i = 0; i < 16; i++) acc[j][i] += a[k * 16 + i] * bv;
        }
    for (j = 0; j < PRT_GEMM_C_NR; j++)
        for (i = 0; i < 16; i++) c[j * ldc + i] = acc[j][i];
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(PLUGRT_NO_SIMD)
#include <immintrin.h>
#define GEMM_HAVE_X86 1

/* ---- AVX2 + FMA: 16 x 6 (12 ymm accumulators) --------------------------- */

/* The A panel streams from L2: the x86 kernels prefetch it GEMM_PF_K steps of k
 * ahead. Past the panel's end that address is still inside the workspace (the
 * packed weights are followed by the slots, each far larger than 48 * 32 floats); elsewhere a
 * prefetch past the end of a buffer is harmless. */
#ifndef GEMM_PF_K
#define GEMM_PF_K 48
#endif
#define GEMM_R6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define GEMM_R14(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)

__attribute__((target("avx2,fma"))) void prt__gemm_avx2_16x6(int64_t kc, const float *restrict a,
                                                              const float *restrict b, float *restrict c,
                                                              int64_t ldc, int first)
{
#define D2(j) __m256 c##j##a, c##j##b;
#define I2(j)                                                                                                    \
    if (first) c##j##a = c##j##b = _mm256_setzero_ps();                                                          \
    else {                                                                                                       \
        c##j##a = _mm256_loadu_ps(c + (j) * ldc);                                                                \
        c##j##b = _mm256_loadu_ps(c + (j) * ldc + 8);                                                            \
    }
#define F2(j)                                                                                                    \
    {                                                                                                            \
        const __m256 vb = _mm256_broadcast_ss(b + (j) * PRT_GEMM_KC + k);                                             \
        c##j##a = _mm256_fmadd_ps(va, vb, c##j##a);                                                              \
        c##j##b = _mm256_fmadd_ps(vc, vb, c##j##b);                                                              \
    }
#define S2(j)                                                                                                    \
    _mm256_storeu_ps(c + (j) * ldc, c##j##a);                                                                    \
    _mm256_storeu_ps(c + (j) * ldc + 8, c##j##b);
    int64_t k;
    GEMM_R6(D2)
    GEMM_R6(I2)
    for (k = 0; k < kc; k++) {
        const __m256 va = _mm256_loadu_ps(a + 16 * k), vc = _mm256_loadu_ps(a + 16 * k + 8);
        _mm_prefetch((const char *)(a + 16 * (k + GEMM_PF_K)), _MM_HINT_T0);
        GEMM_R6(F2)
    }
    GEMM_R6(S2)
#undef D2
#undef I2
#undef F2
#undef S2
}

/* ---- AVX-512: 32 x 14 (28 zmm accumulators) and 16 x 14 ------------------ */

#define GEMM_AVX512 __attribute__((target("avx512f,fma")))

/* 32 x r for r <= 14 rows of C: r = 14 is the full kernel; fewer rows (the
 * blocks M does not fill) keep fewer accumulators, one function per r.
 * With ind (the indirect kernels), row k of the B panel is the 32 floats at
 * ind[k] instead of a + 32 k: B read where it lies, without packing. */
static inline __attribute__((always_inline)) GEMM_AVX512 void
gemm_avx512_32xr(int r, int64_t kc, const float *restrict a, const float *const *ind, const float *restrict b,
                 float *restrict c, int64_t ldc, int first)
{
#define D5(j) __m512 c##j##a = _mm512_setzero_ps(), c##j##b = _mm512_setzero_ps();
#define I5(j)                                                                                                    \
    if ((j) < r && !first) {                                                                                     \
        c##j##a = _mm512_loadu_ps(c + (j) * ldc);                                                                \
        c##j##b = _mm512_loadu_ps(c + (j) * ldc + 16);                                                           \
    }
#define F5(j)                                                                                                    \
    if ((j) < r) {                                                                                               \
        const __m512 vb = _mm512_set1_ps(b[(j) * PRT_GEMM_KC + k]);                                              \
        c##j##a = _mm512_fmadd_ps(va, vb, c##j##a);                                                              \
        c##j##b = _mm512_fmadd_ps(vc, vb, c##j##b);                                                              \
    }
#define S5(j)                                                                                                    \
    if ((j) < r) {                                                                                               \
        _mm512_storeu_ps(c + (j) * ldc, c##j##a);                                                                \
        _mm512_storeu_ps(c + (j) * ldc + 16, c##j##b);                                                           \
    }
    int64_t k;
    GEMM_R14(D5)
    GEMM_R14(I5)
    for (k = 0; k < kc; k++) {
        const float *ak = ind ? ind[k] : a + 32 * k;
        const float *pf = ind ? ind[k + GEMM_PF_K < kc ? k + GEMM_PF_K : kc - 1] : a + 32 * (k + GEMM_PF_K);
        const __m512 va = _mm512_loadu_ps(ak), vc = _mm512_loadu_ps(ak + 16);
        _mm_prefetch((const char *)pf, _MM_HINT_T0);
        _mm_prefetch((const char *)(pf + 16), _MM_HINT_T0);
        GEMM_R14(F5)
    }
    GEMM_R14(S5)
#undef D5
#undef I5
#undef F5
#undef S5
}

GEMM_AVX512 void prt__gemm_avx512_32x14(int64_t kc, const float *restrict a, const float *restrict b,
                                         float *restrict c, int64_t ldc, int first)
{
    gemm_avx512_32xr(14, kc, a, NULL, b, c, ldc, first);
}

GEMM_AVX512 void prt__gemm_avx512_16x14(int64_t kc, const float *restrict a, const float *restrict b,
                                         float *restrict c, int64_t ldc, int first)
{
#define D5(j) __m512 c##j##a;
#define I5(j) c##j##a = first ? _mm512_setzero_ps() : _mm512_loadu_ps(c + (j) * ldc);
#define F5(j) c##j##a = _mm512_fmadd_ps(va, _mm512_set1_ps(b[(j) * PRT_GEMM_KC + k]), c##j##a);
#define S5(j) _mm512_storeu_ps(c + (j) * ldc, c##j##a);
    int64_t k;
    GEMM_R14(D5)
    GEMM_R14(I5)
    for (k = 0; k < kc; k++) {
        const __m512 va = _mm512_loadu_ps(a + 16 * k);
        _mm_prefetch((const char *)(a + 16 * (k + GEMM_PF_K)), _MM_HINT_T0);
        GEMM_R14(F5)
    }
    GEMM_R14(S5)
#undef D5
#undef I5
#undef F5
#undef S5
}

#define GEMM_ROWS(r)                                                                                             \
    static GEMM_AVX512 void gemm_avx512_32x##r(int64_t kc, const float *restrict a, const float *restrict b,      \
                                               float *restrict c, int64_t ldc, int first)                        \
    {                                                                                                            \
        gemm_avx512_32xr(r, kc, a, NULL, b, c, ldc, first);                                                      \
    }
#define GEMM_IND(r)                                                                                              \
    static GEMM_AVX512 void gemm_avx512_ind_32x##r(int64_t kc, const float *const *ind, const float *restrict b,  \
                                                   float *restrict c, int64_t ldc, int first)                    \
    {                                                                                                            \
        gemm_avx512_32xr(r, kc, NULL, ind, b, c, ldc, first);                                                    \
    }
#define GEMM_R13(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)
GEMM_R13(GEMM_ROWS)
GEMM_R13(GEMM_IND)
GEMM_IND(14)
#undef GEMM_ROWS
#undef GEMM_IND

static const prt__gemm_kern_ind_fn gemm_avx512_ind_rows[15] = {
    NULL, gemm_avx512_ind_32x1, gemm_avx512_ind_32x2, gemm_avx512_ind_32x3, gemm_avx512_ind_32x4,
    gemm_avx512_ind_32x5, gemm_avx512_ind_32x6, gemm_avx512_ind_32x7, gemm_avx512_ind_32x8, gemm_avx512_ind_32x9,
    gemm_avx512_ind_32x10, gemm_avx512_ind_32x11, gemm_avx512_ind_32x12, gemm_avx512_ind_32x13,
    gemm_avx512_ind_32x14,
};

/* By row count: [r] computes r rows (index 0 unused; 14 is the full kernel). */
static const prt__gemm_kern_fn gemm_avx512_rows[15] = {
    NULL, gemm_avx512_32x1, gemm_avx512_32x2, gemm_avx512_32x3, gemm_avx512_32x4, gemm_avx512_32x5,
    gemm_avx512_32x6, gemm_avx512_32x7, gemm_avx512_32x8, gemm_avx512_32x9, gemm_avx512_32x10,
    gemm_avx512_32x11, gemm_avx512_32x12, gemm_avx512_32x13, prt__gemm_avx512_32x14,
};
#endif

int prt__gemm_level(void)
{
    const char *cap = getenv("PRT_DCN_CPU_ISA");
    int lim = 2;
    if (cap && !strcmp(cap, "c")) lim = 0;
    else if (cap && !strcmp(cap, "avx2")) lim = 1;
#ifdef GEMM_HAVE_X86
    if (lim >= 2 && __builtin_cpu_supports("avx512f")) return 2;
    if (lim >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    (void)lim;
    return 0;
}

int prt__gemm_have_x86(void)
{
#ifdef GEMM_HAVE_X86
    return 1;
#else
    return 0;
#endif
}

/* ---- a general sgemm over the micro-kernels --------------------------------------- */

typedef struct gemm_kset {
    int64_t nr, mr; /* rows of C per micro-tile (the kernel's nr); columns (the kernel's mr) */
    prt__gemm_kern_fn kern;
    const prt__gemm_kern_fn *rows; /* kernels for fewer rows, by count (NULL: none) */
    const prt__gemm_kern_ind_fn *ind; /* indirect kernels by row count 1..nr (NULL: none) */
} gemm_kset;

static gemm_kset gemm_pick(void)
{
    gemm_kset k = {PRT_GEMM_C_NR, 16, prt__gemm_c_16x4, NULL, NULL};
#ifdef GEMM_HAVE_X86
    switch (prt__gemm_level()) {
    case 2:
        k.nr = 14;
        k.mr = 32;
        k.kern = prt__gemm_avx512_32x14;
        k.rows = gemm_avx512_rows;
        k.ind = gemm_avx512_ind_rows;
        break;
    case 1: k.nr = 6; k.mr = 16; k.kern = prt__gemm_avx2_16x6; break;
    default: break;
    }
#endif
    return k;
}

typedef struct gemm_job {
    gemm_kset ks;
    int64_t M, N, K;
    float alpha, beta;
    const float *a, *b;
    int64_t a_m, a_k, b_k, b_n, ldc;
    float *c;
} gemm_job;

#define GEMM_MAX_MR 32
#define GEMM_MAX_NR 14

/* C rows [0, rows) of a 32-column panel = bias[row], before the first chunk. */
#ifdef GEMM_HAVE_X86
static GEMM_AVX512 void gemm_fill_512(float *c, int64_t ldc, int64_t rows, const float *bias)
{
    int64_t r;
    for (r = 0; r < rows; r++) {
        const __m512 v = _mm512_set1_ps(bias[r]);
        _mm512_storeu_ps(c + r * ldc, v);
        _mm512_storeu_ps(c + r * ldc + 16, v);
    }
}
#endif

/* C rows [0, rows) of a full panel = bias[row]; returns 0 (the kernel's first flag). */
static int gemm_fill(const gemm_kset *ks, float *c, int64_t ldc, int64_t rows, const float *bias)
{
    int64_t r, i;
#ifdef GEMM_HAVE_X86
    if (ks->mr == 32) {
        gemm_fill_512(c, ldc, rows, bias);
        return 0;
    }
#endif
    for (r = 0; r < rows; r++)
        for (i = 0; i < ks->mr; i++) c[r * ldc + i] = bias[r];
    return 0;
}

/* One nr x mr tile of C at c (mh rows and nw columns of it real) gets the
 * product of a packed B chunk bp [kc][mr] and nr packed A rows ap (rows
 * PRT_GEMM_KC apart). The first chunk replaces C (beta 0), scales it by
 * beta, or (bias not NULL, beta 0) starts row r from bias[r]; later chunks
 * add. */
static void gemm_tile(const gemm_kset *ks, int64_t kc, const float *bp, const float *ap, float *c, int64_t ldc,
                      int64_t mh, int64_t nw, int first, float beta, const float *bias)
{
    float tile[GEMM_MAX_NR * GEMM_MAX_MR];
    const int64_t mr = ks->mr, nr = ks->nr;
    int64_t r, i;
    if (nw == mr && (!first || beta == 0) && (mh == nr || ks->rows)) {
        if (first && bias) first = gemm_fill(ks, c, ldc, mh, bias);
        (mh == nr ? ks->kern : ks->rows[mh])(kc, bp, ap, c, ldc, first);
        return;
    }
    for (r = 0; r < nr; r++)
        for (i = 0; i < mr; i++)
            tile[r * mr + i] = r >= mh || i >= nw ? 0.0f
                               : !first          ? c[r * ldc + i]
                               : bias            ? bias[r]
                               : beta != 0       ? beta * c[r * ldc + i]
                                                 : 0.0f;
    ks->kern(kc, bp, ap, tile, mr, 0);
    for (r = 0; r < mh; r++) memcpy(c + r * ldc, tile + r * mr, (size_t)nw * sizeof(float));
}

/* One panel of mr columns of C, every row, every K chunk. */
static void gemm_panel(const gemm_job *j, int64_t n0)
{
    float bp[PRT_GEMM_KC * GEMM_MAX_MR];          /* B panel [k][mr] */
    float ap[GEMM_MAX_NR * PRT_GEMM_KC];          /* A rows [nr][KC] */
    const int64_t mr = j->ks.mr, nr = j->ks.nr, nw = j->N - n0 < mr ? j->N - n0 : mr;
    int64_t k0, m0, k, i, r;
    for (k0 = 0; k0 < j->K || (k0 == 0 && j->K == 0); k0 += PRT_GEMM_KC) {
        const int64_t kc = j->K - k0 < PRT_GEMM_KC ? j->K - k0 : PRT_GEMM_KC;
        const int first = k0 == 0;
        for (k = 0; k < kc; k++) {
            const float *brow = j->b + (k0 + k) * j->b_k + n0 * j->b_n;
            float *dst = bp + k * mr;
            if (j->b_n == 1) memcpy(dst, brow, (size_t)nw * sizeof(float));
            else
                for (i = 0; i < nw; i++) dst[i] = brow[i * j->b_n];
            for (i = nw; i < mr; i++) dst[i] = 0;
        }
        for (m0 = 0; m0 < j->M; m0 += nr) {
            const int64_t mh = j->M - m0 < nr ? j->M - m0 : nr;
            float *cdst = j->c + m0 * j->ldc + n0;
            for (r = 0; r < nr; r++) {
                float *dst = ap + r * PRT_GEMM_KC;
                if (r >= mh) {
                    memset(dst, 0, (size_t)kc * sizeof(float));
                    continue;
                }
                if (j->a_k == 1) {
                    const float *src = j->a + (m0 + r) * j->a_m + k0;
                    if (j->alpha == 1.0f) memcpy(dst, src, (size_t)kc * sizeof(float));
                    else for (k = 0; k < kc; k++) dst[k] = j->alpha * src[k];
                } else {
                    for (k = 0; k < kc; k++) dst[k] = j->alpha * j->a[(m0 + r) * j->a_m + (k0 + k) * j->a_k];
                }
            }
            if (kc == 0) { /* K == 0: C = beta C */
                for (r = 0; r < mh; r++)
                    for (i = 0; i < nw; i++) cdst[r * j->ldc + i] = j->beta == 0 ? 0 : j->beta * cdst[r * j->ldc + i];
                continue;
            }
            gemm_tile(&j->ks, kc, bp, ap, cdst, j->ldc, mh, nw, first, j->beta, NULL);
        }
        if (j->K == 0) break;
    }
}

static void gemm_range(void *arg, int64_t begin, int64_t end)
{
    const gemm_job *j = arg;
    int64_t p;
    for (p = begin; p < end; p++) gemm_panel(j, p * j->ks.mr);
}

void prt__sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t a_m, int64_t a_k,
                const float *b, int64_t b_k, int64_t b_n, float beta, float *c, int64_t ldc, prt_exec *ex)
{
    gemm_job j;
    int64_t panels;
    if (M <= 0 || N <= 0) return;
    j.ks = gemm_pick();
    j.M = M;
    j.N = N;
    j.K = K;
    j.alpha = alpha;
    j.beta = beta;
    j.a = a;
    j.b = b;
    j.a_m = a_m;
    j.a_k = a_k;
    j.b_k = b_k;
    j.b_n = b_n;
    j.c = c;
    j.ldc = ldc;
    panels = (N + j.ks.mr - 1) / j.ks.mr;
    if (!ex || !ex->parallel_for || panels == 1 || M * N * (K + 1) < 65536)
        gemm_range(&j, 0, panels);
    else
        ex->parallel_for(ex, panels, 1, gemm_range, &j);
}

/* ---- packed A, B panels from a callback ------------------------------------------- */

static int64_t gemm_round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

static int64_t gemm_chunks(int64_t K) { return K > 0 ? (K + PRT_GEMM_KC - 1) / PRT_GEMM_KC : 1; }

size_t prt__gemm_pack_a_floats(int64_t M, int64_t K)
{
    int64_t rows = gemm_round_up(M, PRT_GEMM_C_NR), r6 = gemm_round_up(M, 6), r14 = gemm_round_up(M, 14);
    if (M <= 0) return 0;
    if (r6 > rows) rows = r6;
    if (r14 > rows) rows = r14;
    return (size_t)rows * (size_t)gemm_chunks(K) * PRT_GEMM_KC;
}

void prt__gemm_pack_a(int64_t M, int64_t K, const float *a, int64_t a_m, int64_t a_k, float *dst, prt__gemm_pa *out)
{
    const gemm_kset ks = gemm_pick();
    const int64_t nkc = gemm_chunks(K);
    int64_t m0, kb, r, k;
    /* with kernels for fewer rows, the blocks share M evenly (24 rows: 12 + 12, not 14 + 10) */
    const int64_t nblk = M > 0 ? (M + ks.nr - 1) / ks.nr : 1, rb = ks.rows ? (M + nblk - 1) / nblk : ks.nr;
    out->kern = ks.kern;
    out->rows = ks.rows;
    out->ind = ks.ind;
    out->mr = ks.mr;
    out->nr = ks.nr;
    out->rb = rb > 0 ? rb : 1;
    out->M = M;
    out->K = K;
    out->nkc = nkc;
    out->p = dst;
    for (m0 = 0; m0 < M; m0 += rb)
        for (kb = 0; kb < nkc; kb++) {
            const int64_t k0 = kb * PRT_GEMM_KC, kc = K - k0 < PRT_GEMM_KC ? K - k0 : PRT_GEMM_KC;
            float *blk = dst + ((m0 / rb) * nkc + kb) * ks.nr * PRT_GEMM_KC;
            for (r = 0; r < ks.nr; r++) {
                float *row = blk + r * PRT_GEMM_KC;
                if (r >= rb || m0 + r >= M) {
                    memset(row, 0, (size_t)(kc > 0 ? kc : 0) * sizeof(float));
                    continue;
                }
                if (a_k == 1) memcpy(row, a + (m0 + r) * a_m + k0, (size_t)(kc > 0 ? kc : 0) * sizeof(float));
                else
                    for (k = 0; k < kc; k++) row[k] = a[(m0 + r) * a_m + (k0 + k) * a_k];
            }
        }
}

void prt__gemm_packed(const prt__gemm_pa *pa, int64_t N, prt__gemm_bpack_fn pack, void *arg, const float *bias,
                      float *c, int64_t ldc)
{
    float bp[PRT_GEMM_KC * GEMM_MAX_MR];
    const float *ptrs[PRT_GEMM_KC];
    const gemm_kset ks = {pa->nr, pa->mr, pa->kern, pa->rows, pa->ind};
    int64_t n0, kb, m0, r;
    if (pa->M <= 0 || N <= 0) return;
    if (pa->K <= 0) {
        for (r = 0; r < pa->M; r++)
            for (n0 = 0; n0 < N; n0++) c[r * ldc + n0] = bias ? bias[r] : 0.0f;
        return;
    }
    for (n0 = 0; n0 < N; n0 += ks.mr) {
        const int64_t nw = N - n0 < ks.mr ? N - n0 : ks.mr;
        for (kb = 0; kb < pa->nkc; kb++) {
            const int64_t k0 = kb * PRT_GEMM_KC, kc = pa->K - k0 < PRT_GEMM_KC ? pa->K - k0 : PRT_GEMM_KC;
            const int ind = pack(arg, k0, kc, n0, nw, ks.mr, bp, ks.ind && nw == ks.mr ? ptrs : NULL);
            for (m0 = 0; m0 < pa->M; m0 += pa->rb) {
                const int64_t mh = pa->M - m0 < pa->rb ? pa->M - m0 : pa->rb;
                const float *ablk = pa->p + ((m0 / pa->rb) * pa->nkc + kb) * ks.nr * PRT_GEMM_KC;
                float *ct = c + m0 * ldc + n0;
                if (ind) {
                    const int first = kb == 0 && bias ? gemm_fill(&ks, ct, ldc, mh, bias + m0) : kb == 0;
                    ks.ind[mh](kc, ptrs, ablk, ct, ldc, first);
                } else {
                    gemm_tile(&ks, kc, bp, ablk, ct, ldc, mh, nw, kb == 0, 0.0f, bias ? bias + m0 : NULL);
                }
            }
        }
    }
}
