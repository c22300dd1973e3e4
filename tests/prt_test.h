/*
 * prt_test.h - the test runner every test program uses.
 *
 *   TEST(name) { ... CHECK(cond); CHECK_EQ_INT(a, b); CHECK_OK(status); ... }
 *
 * Each test case runs in its own forked child process with a time limit, so
 * a crash or hang fails only that case. `prog` runs all cases, `prog NAME`
 * one. The program prints one line per case and ends with
 * "N passed, N failed, N skipped"; it exits non-zero if any failed.
 * SKIP("why") ends a case as skipped (a GPU test on a machine without one).
 */
#ifndef PRT_TEST_H
#define PRT_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*prt_test_fn)(void);
void prt_test_register(const char *name, prt_test_fn fn, const char *file);
void prt_test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void prt_test_skip(const char *why);
/* Directory of tests/data in the source tree (from the build). */
const char *prt_test_data_dir(void);
/* Directory of built test artifacts (plugin libraries built by the suite). */
const char *prt_test_bin_dir(void);
/* Non-zero if a CUDA device is usable in this process. */
int prt_test_have_cuda(void);

#define TEST(name)                                                                   \
    static void prt_test_##name(void);                                               \
    __attribute__((constructor)) static void prt_test_reg_##name(void)               \
    {                                                                                \
        prt_test_register(#name, prt_test_##name, __FILE__);                         \
    }                                                                                \
    static void prt_test_##name(void)

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) prt_test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);          \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond)) prt_test_fail(__FILE__, __LINE__, __VA_ARGS__);                 \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                           \
    do {                                                                             \
        long long a_ = (long long)(a), b_ = (long long)(b);                          \
        if (a_ != b_)                                                                \
            prt_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_); \
    } while (0)

#define CHECK_STR_CONTAINS(hay, needle)                                              \
    do {                                                                             \
        const char *h_ = (hay), *n_ = (needle);                                      \
        if (!h_ || !strstr(h_, n_))                                                  \
            prt_test_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"",      \
                          h_ ? h_ : "(null)", n_);                                   \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                        \
    do {                                                                             \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);               \
        if (!(fabs(a_ - b_) <= t_))                                                  \
            prt_test_fail(__FILE__, __LINE__, "%s ~ %s: %.9g vs %.9g (tol %.3g)",    \
                          #a, #b, a_, b_, t_);                                       \
    } while (0)

/* CHECK_OK(status_expr): the expression must return 0 (PRT_OK). */
#define CHECK_OK(expr)                                                               \
    do {                                                                             \
        int s_ = (int)(expr);                                                        \
        if (s_ != 0) prt_test_fail(__FILE__, __LINE__, "%s returned %d", #expr, s_); \
    } while (0)

#define SKIP(why) prt_test_skip(why)

#endif
