/* The shared CPU sgemm (plugins/common/cpu_gemm.c) against a float64
 * reference: odd sizes around the micro-tile edges, K across several chunks,
 * strided (transposed) operands, alpha and beta, every kernel level this CPU
 * runs, serial and on a thread pool. */
#include <stdlib.h>

#include "../../../plugins/common/cpu_gemm.h"
#include "core/threadpool.h"
#include "prt_test.h"

static float rnd(uint32_t *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 16777216.0f * 2.0f - 1.0f;
}

typedef struct pool_exec {
    prt_exec ex;
    prt__threadpool *tp;
} pool_exec;

static void pool_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    prt__threadpool_parallel_for(((pool_exec *)ex)->tp, n, grain, fn, arg);
}

static void check_case(int64_t M, int64_t N, int64_t K, int ta, int tb, float alpha, float beta, prt_exec *ex)
{
    float *a = malloc((size_t)(M * K + 1) * 4), *b = malloc((size_t)(K * N + 1) * 4);
    float *c = malloc((size_t)(M * N + 1) * 4), *c0 = malloc((size_t)(M * N + 1) * 4);
    uint32_t s = (uint32_t)(M * 131 + N * 7 + K);
    int64_t i, j, k, bad = 0;
    for (i = 0; i < M * K; i++) a[i] = rnd(&s);
    for (i = 0; i < K * N; i++) b[i] = rnd(&s);
    for (i = 0; i < M * N; i++) c0[i] = c[i] = rnd(&s);
    /* ta: a holds A^T [K][M]; tb: b holds B^T [N][K] */
    prt__sgemm(M, N, K, alpha, a, ta ? 1 : K, ta ? M : 1, b, tb ? 1 : N, tb ? K : 1, beta, c, N, ex);
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) {
            double acc = 0, r, err, mag = 0;
            for (k = 0; k < K; k++) {
                double x = a[ta ? k * M + i : i * K + k], y = b[tb ? j * K + k : k * N + j];
                acc += x * y;
                mag += fabs(x * y);
            }
            r = alpha * acc + (beta != 0 ? beta * (double)c0[i * N + j] : 0);
            err = fabs(c[i * N + j] - r);
            if (err > 1e-5 * (fabs(alpha) * mag + fabs(beta * c0[i * N + j])) + 1e-30 && bad++ < 3)
                prt_test_fail(__FILE__, __LINE__, "M %lld N %lld K %lld ta %d tb %d: C[%lld][%lld] %.9g vs %.9g",
                              (long long)M, (long long)N, (long long)K, ta, tb, (long long)i, (long long)j,
                              c[i * N + j], r);
        }
    CHECK_EQ_INT(bad, 0);
    free(a);
    free(b);
    free(c);
    free(c0);
}

static void run_all(prt_exec *ex)
{
    static const int64_t sizes[][3] = {{1, 1, 1}, {5, 17, 3}, {14, 32, 256}, {15, 33, 257}, {29, 70, 600},
                                       {3, 100, 0}, {64, 5, 40}};
    size_t i;
    int t;
    for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (t = 0; t < 4; t++)
            check_case(sizes[i][0], sizes[i][1], sizes[i][2], t & 1, t >> 1, t == 3 ? 0.5f : 1.0f,
                       t == 2 ? 0.75f : 0.0f, ex);
}

TEST(sgemm_matches_float64_at_every_kernel_level)
{
    static const char *const caps[] = {"c", "avx2", NULL};
    pool_exec pe;
    char err[128];
    int i;
    memset(&pe, 0, sizeof pe);
    pe.ex.struct_size = sizeof pe.ex;
    pe.ex.parallel_for = pool_for;
    CHECK_OK(prt__threadpool_create(3, &pe.tp, err, sizeof err));
    for (i = 0; i < 3; i++) {
        if (caps[i]) setenv("PRT_DCN_CPU_ISA", caps[i], 1);
        else unsetenv("PRT_DCN_CPU_ISA");
        run_all(NULL);
        run_all(&pe.ex);
    }
    prt__threadpool_destroy(pe.tp);
}

/* B [K][N] row-major, handed out panel by panel (columns from `col0`),
 * packed or, where the driver allows and `in_place` is set, pointed at. */
typedef struct bsrc {
    const float *b;
    int64_t N, col0;
    int in_place;
} bsrc;

static int pack_b(void *arg, int64_t k0, int64_t kc, int64_t n0, int64_t nw, int64_t mr, float *dst,
                  const float **ptrs)
{
    const bsrc *s = arg;
    int64_t k, q;
    if (ptrs && s->in_place) {
        for (k = 0; k < kc; k++) ptrs[k] = s->b + (k0 + k) * s->N + s->col0 + n0;
        return 1;
    }
    for (k = 0; k < kc; k++)
        for (q = 0; q < mr; q++) dst[k * mr + q] = q < nw ? s->b[(k0 + k) * s->N + s->col0 + n0 + q] : 0.0f;
    return 0;
}

/* Packed A and B panels from a callback (packed or read in place): the same
 * bits as prt__sgemm (alpha 1, beta 0), whichever way the columns are split
 * over calls; with a bias, float64's result within 1e-5 and the same bits
 * over splits. */
TEST(packed_gemm_matches_sgemm_bit_for_bit_over_any_column_split)
{
    static const int64_t sizes[][3] = {{1, 1, 1}, {5, 17, 3}, {14, 32, 256}, {15, 33, 257}, {29, 70, 600},
                                       {3, 100, 0}, {64, 5, 40}, {24, 300, 27}};
    static const char *const caps[] = {"c", "avx2", NULL};
    size_t i;
    int c;
    for (c = 0; c < 3; c++) {
        if (caps[c]) setenv("PRT_DCN_CPU_ISA", caps[c], 1);
        else unsetenv("PRT_DCN_CPU_ISA");
        for (i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            const int64_t M = sizes[i][0], N = sizes[i][1], K = sizes[i][2];
            float *a = malloc((size_t)(M * K + 1) * 4), *b = malloc((size_t)(K * N + 1) * 4);
            float *c0 = malloc((size_t)(M * N) * 4), *c1 = malloc((size_t)(M * N) * 4);
            float *ap = malloc(prt__gemm_pack_a_floats(M, K) * 4 + 4);
            uint32_t s = (uint32_t)(M * 31 + N * 5 + K);
            prt__gemm_pa pa;
            int64_t j, n0, step;
            for (j = 0; j < M * K; j++) a[j] = rnd(&s);
            for (j = 0; j < K * N; j++) b[j] = rnd(&s);
            prt__sgemm(M, N, K, 1.0f, a, K, 1, b, N, 1, 0.0f, c0, N, NULL);
            prt__gemm_pack_a(M, K, a, K, 1, ap, &pa);
            for (step = 1; step <= 2 * N; step = step * 3 + 4) { /* steps past N: B read in place */
                memset(c1, 0xA5, (size_t)(M * N) * 4);
                for (n0 = 0; n0 < N; n0 += step) {
                    bsrc src = {b, N, n0, step > N};
                    prt__gemm_packed(&pa, N - n0 < step ? N - n0 : step, pack_b, &src, NULL, c1 + n0, N);
                }
                CHECK_MSG(!memcmp(c0, c1, (size_t)(M * N) * 4), "M %lld N %lld K %lld, columns %lld at a time (%s)",
                          (long long)M, (long long)N, (long long)K, (long long)step, caps[c] ? caps[c] : "best");
            }
            /* with a bias: within 1e-5 of float64, and the same bits over any split */
            {
                float *bias = malloc((size_t)M * 4), *c2 = malloc((size_t)(M * N) * 4);
                bsrc all = {b, N, 0, 1};
                int64_t m, q, k, bad = 0;
                for (m = 0; m < M; m++) bias[m] = rnd(&s);
                prt__gemm_packed(&pa, N, pack_b, &all, bias, c2, N);
                for (m = 0; m < M; m++)
                    for (q = 0; q < N; q++) {
                        double acc = bias[m], mag = fabs(bias[m]);
                        for (k = 0; k < K; k++) {
                            acc += (double)a[m * K + k] * b[k * N + q];
                            mag += fabs((double)a[m * K + k] * b[k * N + q]);
                        }
                        if (fabs(c2[m * N + q] - acc) > 1e-5 * mag + 1e-30) bad++;
                    }
                CHECK_MSG(bad == 0, "bias: M %lld N %lld K %lld: %lld off", (long long)M, (long long)N, (long long)K,
                          (long long)bad);
                for (n0 = 0; n0 < N; n0 += 7) {
                    bsrc src = {b, N, n0, 0};
                    prt__gemm_packed(&pa, N - n0 < 7 ? N - n0 : 7, pack_b, &src, bias, c1 + n0, N);
                }
                CHECK_MSG(!memcmp(c1, c2, (size_t)(M * N) * 4), "bias: M %lld N %lld K %lld split by 7",
                          (long long)M, (long long)N, (long long)K);
                free(bias);
                free(c2);
            }
            free(a);
            free(b);
            free(c0);
            free(c1);
            free(ap);
        }
    }
    unsetenv("PRT_DCN_CPU_ISA");
}
