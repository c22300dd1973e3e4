/*
 * common/cpu_gemm.h - register-blocked fp32 GEMM for the CPU plugins.
 *
 * Micro-kernel contract: C[j][0..mr) (+)= sum_k a[k][0..mr) * b[j][k] for
 * j < nr, k < kc <= PRT_GEMM_KC; a is a packed panel (mr floats per k), the
 * rows of b are PRT_GEMM_KC floats apart, the rows of c ldc floats apart;
 * first != 0 starts from 0 instead of c. The x86 kernels exist only where
 * prt__gemm_have_x86() says so and run only where prt__gemm_level() allows.
 */
#ifndef PLUGRT_COMMON_CPU_GEMM_H
#define PLUGRT_COMMON_CPU_GEMM_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugin.h"

#define PRT_GEMM_KC 256  /* K chunk; the row stride (floats) of packed b rows */
#define PRT_GEMM_C_NR 4  /* nr of the portable kernel (AVX2: 6, AVX-512: 14) */

typedef void (*prt__gemm_kern_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, int first);
/* The same with row k of the a panel at ind[k] (mr floats) instead of a + mr k. */
typedef void (*prt__gemm_kern_ind_fn)(int64_t kc, const float *const *ind, const float *b, float *c, int64_t ldc,
                                      int first);

void prt__gemm_c_16x4(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                      int64_t ldc, int first);
void prt__gemm_avx2_16x6(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                         int64_t ldc, int first);
void prt__gemm_avx512_32x14(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                            int64_t ldc, int first); /* (cpu_gemm.c also has 32 x 1..13 for partial row blocks) */
void prt__gemm_avx512_16x14(int64_t kc, const float *restrict a, const float *restrict b, float *restrict c,
                            int64_t ldc, int first);

/* The best kernel level this CPU runs: 0 portable, 1 AVX2 + FMA, 2 AVX-512.
 * The environment variable PRT_DCN_CPU_ISA=c|avx2 caps it (for testing the
 * other kernels on one machine). */
int prt__gemm_level(void);
int prt__gemm_have_x86(void);

/* C = alpha * A B + beta * C for row-major-or-strided operands:
 * A element (m, k) at a[m * a_m + k * a_k], B element (k, n) at
 * b[k * b_k + n * b_n], C element (m, n) at c[m * ldc + n]; beta 0 never
 * reads C. Work is split over the exec's threads (ex may be NULL: serial);
 * the result does not depend on the split. Needs no workspace. */
void prt__sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *a, int64_t a_m, int64_t a_k,
                const float *b, int64_t b_k, int64_t b_n, float beta, float *c, int64_t ldc, prt_exec *ex);

/* ---- packed A and B panels made on demand (the blocked convolution) ------------ *
 *
 * prt__gemm_pack_a lays A [M][K] (element (m, k) at a[m * a_m + k * a_k]) out
 * for the micro-kernels of the current level: blocks of rb <= nr rows per K
 * chunk in slots of nr rows PRT_GEMM_KC floats apart, missing rows zero. dst holds
 * prt__gemm_pack_a_floats(M, K) floats (a bound over every kernel level).
 * prt__gemm_packed then computes C[M][N] = A B (rows of C ldc floats apart;
 * bias not NULL: C[m][n] = bias[m] + A B, the sum started from the bias)
 * one panel of mr columns at a time; for each panel and K
 * chunk it asks pack() for that chunk of B: dst[kk * mr + q] = B[k0 + kk][n0
 * + q] for kk < kc, q < nw, and 0 for nw <= q < mr, and returns 0. Where
 * ptrs is not NULL (a full panel, and kernels that read B in place) it may
 * instead set ptrs[kk] to mr floats holding those values (the input itself,
 * or zeros) and return 1. Serial; every element of
 * C is summed in the same order as prt__sgemm sums it (without a bias),
 * whatever N and the column offset, so splitting the columns over calls
 * changes no bit. */
typedef struct prt__gemm_pa {
    prt__gemm_kern_fn kern;
    const prt__gemm_kern_fn *rows; /* kernels for fewer rows, by count; NULL: none */
    const prt__gemm_kern_ind_fn *ind; /* indirect kernels by row count 1..nr; NULL: none */
    int64_t mr, nr;    /* the kernel's panel width (columns of C) and rows of C */
    int64_t rb;        /* rows of C per block (<= nr; M is shared evenly where `rows` exists) */
    int64_t M, K, nkc; /* nkc: K chunks */
    const float *p;
} prt__gemm_pa;

typedef int (*prt__gemm_bpack_fn)(void *arg, int64_t k0, int64_t kc, int64_t n0, int64_t nw, int64_t mr,
                                  float *dst, const float **ptrs);

size_t prt__gemm_pack_a_floats(int64_t M, int64_t K);
void prt__gemm_pack_a(int64_t M, int64_t K, const float *a, int64_t a_m, int64_t a_k, float *dst, prt__gemm_pa *out);
void prt__gemm_packed(const prt__gemm_pa *pa, int64_t N, prt__gemm_bpack_fn pack, void *arg, const float *bias,
                      float *c, int64_t ldc);

#endif
